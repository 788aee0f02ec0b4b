"""Lists the tests a CTest run skipped and, in CI, fails on a skip nobody expected.

    /usr/bin/python3 scripts/check-skips.py RESULTS.xml [ALLOWED]

RESULTS.xml is CTest's JUnit file (ctest --output-junit, as scripts/test.sh and
scripts/test-sanitize.sh write it). A skip is a test CTest did not run or marked skipped (a
GoogleTest GTEST_SKIP), or a line "skip <what>" in the output of a test that ran (the CLI tests'
checks that cannot run here, tests/cli/lib.sh). ALLOWED (default tests/expected-skips.txt) lists
the skips that are expected, one test per line:

    <CTest test name> <when> <reason>

with <when> either `root` (expected only when the tests run as root, which ignores file
permissions) or `always`. With POTOP_STRICT_SKIPS=1 (set by .ci/run: CI has ../shared, torch and
root) any other skip makes this exit 1; otherwise it only prints the skips, so that a user without
../shared still gets a clean run. Exit 2: the results or the allow-list cannot be read.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

CONDITIONS = {
    "always": lambda: True,
    "root": lambda: os.geteuid() == 0,
}


def read_allowed(path):
    """{test name: (when, reason)} from the allow-list; a malformed line is an error."""
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(None, 2)
            if len(fields) < 3 or fields[1] not in CONDITIONS:
                raise ValueError(f"{path}:{number}: expected '<test> <{'|'.join(CONDITIONS)}> <reason>', got: {line}")
            allowed[fields[0]] = (fields[1], fields[2])
    return allowed


def gtest_skip_reason(output):
    """The message of a GTEST_SKIP: the lines between 'file:line: Skipped' and '[  SKIPPED ]'."""
    m = re.search(r": Skipped\n(.*?)\n?\[  SKIPPED \]", output, re.S)
    return " ".join(m.group(1).split()) if m else ""


def gtest_skips(output):
    """[(GoogleTest name, what was skipped)] for each test a GoogleTest process skipped: a CTest
    entry that runs many (the sanitize build's unit.shard.N, unit.torch.N) names them this way."""
    skips = []
    for m in re.finditer(r"^\[ RUN      \] (\S+)\n(.*?)^\[  SKIPPED \] \1 ", output, re.S | re.M):
        reason = gtest_skip_reason(m.group(2) + "[  SKIPPED ]")
        skips.append((m.group(1), "skipped: " + (reason or "no reason given")))
    return skips


def read_skips(path):
    """(number of tests, [(test, what was skipped)]) from CTest's JUnit file."""
    cases = ET.parse(path).getroot().iter("testcase")
    count, skips = 0, []
    for case in cases:
        count += 1
        name = case.get("name")
        output = case.findtext("system-out") or ""
        inner = gtest_skips(output)
        if inner:
            skips += inner
        elif case.get("status") == "notrun" or case.find("skipped") is not None:
            skipped = case.find("skipped")
            reason = gtest_skip_reason(output) or (skipped.get("message", "") if skipped is not None else "")
            skips.append((name, "skipped: " + (reason or "no reason given")))
        else:  # a test that ran can still have skipped some of its checks
            skips += [(name, line) for line in output.splitlines() if line.startswith("skip ")]
    return count, skips


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    allowed_path = argv[2] if len(argv) == 3 else os.path.join(root, "tests", "expected-skips.txt")
    strict = os.environ.get("POTOP_STRICT_SKIPS") == "1"
    try:
        allowed = read_allowed(allowed_path)
        count, skips = read_skips(argv[1])
    except (OSError, ET.ParseError, ValueError) as e:
        print(f"check-skips: {e}", file=sys.stderr)
        return 2
    if count == 0:
        print(f"check-skips: {argv[1]} holds no test", file=sys.stderr)
        return 2

    unexpected = []
    for name, what in skips:
        when = allowed.get(name, (None, ""))[0]
        if when is not None and CONDITIONS[when]():
            print(f"check-skips: {name}: {what} (expected: {when} in {os.path.relpath(allowed_path)})")
        else:
            unexpected.append((name, what))
    if not unexpected:
        print(f"check-skips: {count} tests, {len(skips)} skip(s), all expected")
        return 0
    for name, what in unexpected:
        print(f"check-skips: {name}: {what}{' (UNEXPECTED)' if strict else ''}")
    if strict:
        print(f"check-skips: {len(unexpected)} skip(s) that {os.path.relpath(allowed_path)} does not allow; "
              "CI (POTOP_STRICT_SKIPS=1) must run every test")
        return 1
    print(f"check-skips: {len(unexpected)} skip(s) not in {os.path.relpath(allowed_path)} "
          "(fine here; CI, with POTOP_STRICT_SKIPS=1, would fail)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
