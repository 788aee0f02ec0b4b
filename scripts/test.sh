#!/usr/bin/env bash
# Builds potop and runs the whole test suite: `bash scripts/test.sh`.
# Installs missing Debian packages first (needs root or sudo), so it works on a fresh machine.
# Then lists the tests that skipped (scripts/check-skips.py); with POTOP_STRICT_SKIPS=1, as in
# CI, a skip that tests/expected-skips.txt does not allow fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
bash scripts/setup.sh --all
phase setup
preset=${POTOP_PRESET:-release}
# POTOP_WERROR=1 (as CI sets it) makes a compiler warning fail the build.
cmake --preset "$preset" -DPOTOP_WERROR="${POTOP_WERROR:-0}" >/dev/null
cmake --build --preset "$preset"
phase build
# Every preset builds into build/<preset> (CMakePresets.json). The JUnit file keeps each test's
# output (passed ones too, whole) for the skip check.
# ctest -j2 runs two tests at once on CI's two cores, each with an OpenMP team of two: spinning
# threads then wait on each other's descheduled partners at every barrier (a tiny model's
# finite-difference test took 17 s instead of 0.1 s). Passive waiting sleeps instead.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
results=$PWD/build/$preset/test-results.xml
rm -f "$results"
status=0
# Extra arguments go to ctest: `bash scripts/test.sh -L quick` is the developer's loop. Without
# any, every test but those labelled "long" runs (`bash scripts/test.sh -L long` runs those).
if [ $# -eq 0 ]; then set -- -LE long; fi
ctest --preset "$preset" -j2 --no-tests=error --output-junit "$results" --test-output-size-passed 1048576 "$@" ||
  status=$?
phase tests
/usr/bin/python3 scripts/test-times.py "$results" 10 || true
# The skips are listed even when a test failed, so that one run shows both; a failure wins.
skips=0
/usr/bin/python3 scripts/check-skips.py "$results" || skips=$?
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$skips"
