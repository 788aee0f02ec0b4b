#!/usr/bin/env bash
# Numerical guards: a step whose loss or gradient norm is not finite stops the run with the
# step number and the last good checkpoint, or is skipped and counted with --skip-nonfinite.
# An absurd learning rate (1e30, no clipping) blows the weights up after one update.
#   nonfinite.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 2000
ARGS=(train --data text.txt "${TINY[@]}" --steps 20 --eval-interval 10 --lr 1e30 --min-lr 0 --warmup 0 --grad-clip 0)
expect_error "non-finite loss" 1 log "step 2:" "not finite" "training stopped" "run/resume.safetensors (step 0)" \
  "--skip-nonfinite" -- "${ARGS[@]}" --out run
"$POTOP" train --resume run --steps 20 --lr 1e-3 --min-lr 1e-4 2>resume.log &&
  ok "the named checkpoint resumes with a lower --lr" || fail "resume with a lower --lr failed: $(tail -n 2 resume.log)"
grep -q 'note: --lr 0.001' resume.log && ok "the changed --lr is noted" || fail "no note about the changed --lr"

rc=0
"$POTOP" "${ARGS[@]}" --out skipping --skip-nonfinite 2>skip.log || rc=$?
line=$(grep -o 'skipped [0-9]* steps with a non-finite loss or gradient norm' skip.log || true)
[ "$rc" = 0 ] && [ -n "$line" ] && ok "--skip-nonfinite: exit 0, $line" || fail "--skip-nonfinite: exit $rc, $(tail -n 2 skip.log)"
grep -q '"kind":"skipped"' skipping/metrics.jsonl && ok "skipped steps are in metrics.jsonl" ||
  fail "no skipped records in metrics.jsonl"
finish
