"""Prints the slowest tests of a CTest run, from its JUnit file, so that CI's log can be quoted.

    /usr/bin/python3 scripts/test-times.py RESULTS.xml [N]

RESULTS.xml is what scripts/test.sh and scripts/test-sanitize.sh write (ctest --output-junit).
The N (default 10) slowest tests are printed, each with its time. Exit 2: the file cannot be read.
"""
import sys
import xml.etree.ElementTree as ET


def main(argv):
    args = argv[1:]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, count = args[0], int(args[1]) if len(args) > 1 else 10
    try:
        cases = list(ET.parse(path).getroot().iter("testcase"))
    except (OSError, ET.ParseError) as e:
        print(f"test-times: {path}: {e}", file=sys.stderr)
        return 2
    times = sorted(((float(c.get("time") or 0), c.get("name")) for c in cases), reverse=True)
    total = sum(t for t, _ in times)
    print(f"test-times: {len(times)} tests, {total:.0f} s of test time; the {min(count, len(times))} slowest:")
    for t, name in times[:count]:
        print(f"  {t:7.1f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
