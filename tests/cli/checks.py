"""What the Python checks of the CLI tests share: a line per check ("ok   name" on stdout, or
"FAIL: name detail" on stderr) and, at the end, the exit status (1 if any failed)."""
import sys

failures = 0


def check(name, condition, detail=""):
    global failures
    if condition:
        print(f"ok   {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL: {name} {detail}", file=sys.stderr, flush=True)
    return bool(condition)


def finish():
    sys.exit(1 if failures else 0)
