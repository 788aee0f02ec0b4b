#!/usr/bin/env bash
# Builds potop with AddressSanitizer + UndefinedBehaviorSanitizer (the `sanitize` preset) and runs
# the unit and CLI tests under it: `bash scripts/test-sanitize.sh`. Any sanitizer report fails
# the test that triggered it. Extra arguments go to ctest; without any, the tests labelled "long"
# or "retrain" are left out: docs/testing.md says which those are and which tests still run their
# code under the sanitizers.
# Skipped tests are listed and, with POTOP_STRICT_SKIPS=1 as in CI, fail the run unless
# tests/expected-skips.txt allows them (scripts/check-skips.py).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
bash scripts/setup.sh --all
build=${POTOP_SANITIZE_BUILD:-build/sanitize}
# -march=native like the release preset, so the sanitizers check the code paths CI and users run.
cmake --preset sanitize -B "$build" -DPOTOP_NATIVE="${POTOP_NATIVE:-ON}" >/dev/null
cmake --build "$build" -j "${POTOP_JOBS:-2}"
phase "sanitizer build"
# halt_on_error: the first report ends the process with a failure; the CLI tests also look for
# "Sanitizer" and "runtime error:" in stderr.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The CLI tests leave out the repetitions docs/testing.md lists (tests/cli/lib.sh: sanitized).
export POTOP_SANITIZED=1
# Two tests at once, each with OpenMP threads: waiting threads sleep rather than spin (scripts/test.sh).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
if [ $# -eq 0 ]; then set -- -LE 'long|retrain'; fi
results=$(cd "$build" && pwd)/test-results.xml
rm -f "$results"
status=0
ctest --test-dir "$build" -j "${POTOP_JOBS:-2}" --output-on-failure --no-tests=error --output-junit "$results" \
  --test-output-size-passed 1048576 "$@" || status=$?
phase "sanitizer tests"
/usr/bin/python3 scripts/test-times.py "$results" 10 || true
# The skips are listed even when a test failed, so that one run shows both; a failure wins.
skips=0
/usr/bin/python3 scripts/check-skips.py "$results" || skips=$?
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$skips"
