#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan + UBSan) and fuzzes each one for a
# bounded time, starting from the seed inputs in fuzz/corpus/<target>/:
#   bash scripts/fuzz.sh                 # 20 s per target
#   FUZZ_SECONDS=600 bash scripts/fuzz.sh checkpoint
# New interesting inputs go to <build>/corpus/<target>/ (the repository's seeds are only read).
# A crash, hang, leak or sanitizer report fails the script; the input that caused it is saved
# as <build>/artifacts/<target>/crash-* (reproduce: <build>/fuzz/fuzz_<target> <that file>).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
bash scripts/setup.sh --all
build=${POTOP_FUZZ_BUILD:-build/fuzz}
seconds=${FUZZ_SECONDS:-20}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(checkpoint config utf8_tokenizer chat_template gguf tokenizer_json http_frame)

cmake --preset fuzz -B "$build" >/dev/null
cmake --build "$build" -j "${POTOP_JOBS:-2}" --target "${targets[@]/#/fuzz_}"
phase "fuzz build"

# One fuzzer is one process on one core: POTOP_JOBS (default 2) of them run at once, each for its
# own FUZZ_SECONDS, so that CI's two cores fuzz two targets at a time.
fuzz_one() {  # fuzz_one <target>: exit status 0 when the target ran its time without a finding
  local t=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz: $t for ${seconds}s"
  # -rss_limit_mb and -timeout turn a memory blow-up or a hang into a reported failure.
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/fuzz_$t" "$corpus" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 >"$build/fuzz-$t.log" 2>&1; then
    echo "fuzz: $t FAILED; log: $build/fuzz-$t.log, input: $(ls "$artifacts" | head -n 1)" >&2
    tail -n 40 "$build/fuzz-$t.log" >&2
    return 1
  fi
  grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$build/fuzz-$t.log" | sed "s/^/fuzz: $t: /"
}
failed=$build/fuzz-failed.txt
rm -f "$failed"
for t in "${targets[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "${POTOP_JOBS:-2}" ]; do wait -n || true; done
  { fuzz_one "$t" || echo "$t" >>"$failed"; } &
done
wait
status=0
[ ! -s "$failed" ] || status=1
phase fuzz
exit $status
