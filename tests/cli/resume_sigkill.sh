#!/usr/bin/env bash
# Exact resume after SIGKILL: a run killed twice at random steps and resumed each time must
# log exactly the losses of an uninterrupted run with the same seed and thread count.
#   resume_sigkill.sh <potop> [seed]     (the seed picks the kill points; printed for reruns)
POTOP=$1
source "$(dirname "$0")/lib.sh"
SEED=${2:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "kill points seeded with $SEED (rerun: $0 <potop> $SEED)"

STEPS=400
make_corpus text.txt 3000
# Frequent checkpoints (every 25 steps, and a snapshot every 40) so kills also land mid-write.
ARGS=(--data text.txt "${TINY[@]}" --steps $STEPS --eval-interval 25 --keep 40)
"$POTOP" train "${ARGS[@]}" --out reference 2>reference.log

train_records() { count_records run; }

# Starts (or resumes) the run in the background and SIGKILLs it once it has logged `at` steps.
kill_at() {  # kill_at <step> <potop args...>
  local at=$1
  shift
  "$POTOP" "$@" 2>>run.log &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$(train_records)" -lt "$at" ]; do sleep 0.005; done
  sleep "0.00$((RANDOM % 10))"  # somewhere inside a step, an evaluation or a checkpoint write
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    echo "killed at step $(train_records) of $STEPS (target $at)"
  else
    wait "$pid" || { fail "the run exited with an error before the kill: $(tail -n 3 run.log)"; finish; }
    echo "the run finished before the kill at $at (still checked)"
  fi
}

first=$((30 + RANDOM % 150))
gap=$((40 + RANDOM % 150))
kill_at "$first" train "${ARGS[@]}" --out run
[ -f run/resume.safetensors ] || fail "no resume.safetensors after the first kill"
# Counted from where the first kill really landed: on a loaded machine the run can be far past
# its target before the kill, and a second target already reached would kill the resumed run
# before it says "resuming".
kill_at "$(($(train_records) + gap))" train --resume run
"$POTOP" train --resume run 2>>run.log || fail "the final resume failed: $(tail -n 3 run.log)"

grep -o 'resuming run at step [0-9]*' run.log | sed 's/^/  /'
if [ "$(grep -c 'resuming run at step' run.log)" != 2 ]; then fail "expected two resumes in run.log"; fi
if diff <(losses reference) <(losses run) >diff.txt; then
  ok "$(losses run | wc -l) metrics records identical to the uninterrupted run"
else
  fail "losses differ from the uninterrupted run:"; head -n 20 diff.txt >&2
fi
if cmp -s reference/latest.safetensors run/latest.safetensors; then ok "final weights identical"; else
  fail "final latest.safetensors differs from the uninterrupted run's"; fi
leftover=$(ls run | grep '\.tmp-' || true)
[ -z "$leftover" ] && ok "no temporary files left" || fail "temporary files left behind: $leftover"
finish
