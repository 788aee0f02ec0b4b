"""Runs the oracle scripts of tests/torch for one unit-test process, torch imported once.

Importing torch takes about 1.6 s on CI's machine and a script's own work a fraction of that, so
a test process that asks PyTorch many times (CTest runs the PyTorch tests of a group in one
process: tests/CMakeLists.txt) starts this server once (support/torch_oracle.h) and sends it one
request per script: a line of JSON, [script, arg, ...]. The script runs as `python3 script args`
would run it (as __main__, with its own directory first on sys.path, sys.argv set); the server
answers a line holding the script's exit status. The script's output goes where the test's goes.
    oracle_server.py <request fd> <reply fd>
"""

import json
import os
import runpy
import sys
import traceback

import numpy  # noqa: F401  (imported once here, so that no script pays for it)
import torch  # noqa: F401


def exit_status(code):
    """The status `python3 script` exits with when the script raises SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run(argv, base_path):
    sys.argv = list(argv)
    sys.path[:] = [os.path.dirname(os.path.abspath(argv[0]))] + base_path
    try:
        runpy.run_path(argv[0], run_name="__main__")
        return 0
    except SystemExit as e:
        return exit_status(e.code)
    except BaseException:  # a script's failure is its test's, never the server's
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def main():
    requests = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
    replies = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
    base_path = list(sys.path[1:])  # without this file's own directory
    default_dtype = torch.get_default_dtype()
    threads = torch.get_num_threads()
    for line in requests:
        status = run(json.loads(line), base_path)
        # What a script may set for itself is set back, so that each starts as a fresh process would.
        torch.set_default_dtype(default_dtype)
        torch.set_num_threads(threads)
        replies.write(f"{status}\n")
        replies.flush()


if __name__ == "__main__":
    main()
