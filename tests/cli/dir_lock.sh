#!/usr/bin/env bash
# One writer per model directory: while a `potop train` runs into DIR, `train --force` and
# `train --resume` into DIR (and `bow train --force`) are refused in one line naming the process,
# and nothing of the running model changes; readers (`sample`, `info`) keep working; a run killed
# with SIGKILL leaves no lock behind; a run in its first evaluation, without a checkpoint yet, is
# in use too.
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus corpus.txt 3000
"$POTOP" train --data corpus.txt --out m --steps 100000000 --eval-interval 5 "${TINY[@]}" >run.log 2>&1 &
RUN=$!
for _ in $(seq 1 300); do
  [ -s m/resume.safetensors ] && [ -s m/.potop-lock ] && break
  sleep 0.1
done
[ -s m/resume.safetensors ] || { fail "the run made no checkpoint: $(cat run.log)"; finish; }
config=$(cat m/config.json)

in_use="m is in use by process $RUN (potop train, started "
expect_error "train --force into a directory in use" 1 strict "$in_use" -- train --data corpus.txt --out m --force --steps 3 "${TINY[@]}"
expect_error "train --resume of a run in progress" 1 strict "$in_use" -- train --resume m --steps 200000000
expect_error "bow train --force into it" 1 strict "$in_use" -- bow train --data corpus.txt --out m --force --steps 3 --threads 1
[ "$(cat m/config.json)" = "$config" ] && kill -0 "$RUN" && ok "the running model's files are untouched" ||
  fail "config.json changed, or the run stopped: $(tail -n 3 run.log)"
"$POTOP" sample -m m -n 20 --threads 1 >sample.txt 2>sample.log && [ -s sample.txt ] && ok "sample reads it meanwhile" ||
  fail "sample during the run: $(cat sample.log)"
"$POTOP" info -m m >info.txt 2>&1 && ok "info reads it meanwhile" || fail "info during the run: $(cat info.txt)"

kill -KILL "$RUN"
wait "$RUN" 2>/dev/null || true
"$POTOP" train --resume m --steps 100000000 >resume.log 2>&1 &
RESUMED=$!
for _ in $(seq 1 100); do
  grep -q "resuming m at step" resume.log && break
  kill -0 "$RESUMED" 2>/dev/null || break
  sleep 0.1
done
grep -q "resuming m at step" resume.log && ok "a run killed with SIGKILL leaves no lock: --resume goes on" ||
  fail "resume after SIGKILL: $(cat resume.log)"
kill -KILL "$RESUMED" 2>/dev/null; wait "$RESUMED" 2>/dev/null || true

# A run in its first evaluation (a long one: --eval-iters 100000) has no checkpoint yet, but it is
# running: --resume and a new run say that it is in use, not that it was stopped.
"$POTOP" train --data corpus.txt --out busy --steps 10 --n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 \
  --threads 1 --eval-iters 100000 >busy.log 2>&1 &
BUSY=$!
for _ in $(seq 1 300); do
  [ -s busy/.potop-lock ] && [ -f busy/config.json ] && break
  sleep 0.1
done
busy_use="busy is in use by process $BUSY (potop train, started "
if [ -e busy/resume.safetensors ] || ! kill -0 "$BUSY"; then
  fail "the run was not in its first evaluation: $(ls busy) $(cat busy.log)"
else
  expect_error "--resume of a run in its first evaluation" 1 strict "$busy_use" -- train --resume busy
  expect_error "a new run into a run in its first evaluation" 1 strict "$busy_use" -- \
    train --data corpus.txt --out busy --steps 2 "${TINY[@]}"
fi
kill -KILL "$BUSY" 2>/dev/null; wait "$BUSY" 2>/dev/null || true

# A run killed before its first checkpoint leaves config.json, the tokenizer and metrics.jsonl:
# both --resume and a new run say so, and --force starts it again.
"$POTOP" train --data corpus.txt --out early --steps 2 --eval-interval 2 "${TINY[@]}" 2>/dev/null || fail "train early"
rm -f early/*.safetensors
expect_error "--resume of a run stopped before its first checkpoint" 1 strict \
  "early: its run ended before its first checkpoint (it was stopped, or writing the checkpoint failed), so there is nothing to resume" \
  "potop train --out early --force" -- train --resume early
expect_error "a new run into it" 1 strict "--out early holds a run that ended before its first checkpoint" \
  "--force" -- train --data corpus.txt --out early --steps 2 "${TINY[@]}"
"$POTOP" train --data corpus.txt --out early --steps 2 --eval-interval 2 --force "${TINY[@]}" 2>/dev/null &&
  [ -s early/best.safetensors ] && ok "--force starts it again" || fail "--force after an early stop"
finish
