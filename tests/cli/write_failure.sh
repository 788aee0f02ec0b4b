#!/usr/bin/env bash
# A checkpoint write that fails midway (a file-size limit, as a full disk would) or cannot
# start (a read-only directory) stops training with an error naming the file, and leaves the
# previous checkpoint intact and resumable: the run then finishes exactly like one whose writes
# never failed (a 60-step run resumed to 120 steps). A new run's first checkpoint that fails
# leaves none of its files, and what follows says to start again with --force.
#   write_failure.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
ARGS=(--data text.txt "${TINY[@]}" --eval-interval 20)
"$POTOP" train "${ARGS[@]}" --steps 60 --out reference 2>reference.log
"$POTOP" train --resume reference --steps 120 2>>reference.log
"$POTOP" train "${ARGS[@]}" --steps 60 --out run 2>run.log
cp run/resume.safetensors before.safetensors

# 1. A file-size limit below the training state's size but above the weights' (a third of it):
#    latest.safetensors is written, resume.safetensors fails at step 80 with EFBIG.
state_kib=$(( $(stat -c %s run/resume.safetensors) / 1024 ))
limit=$(( state_kib * 2 / 3 ))
rc=0
( ulimit -f "$limit"; exec "$POTOP" train --resume run --steps 120 ) 2>limited.log || rc=$?
err=$(tail -n 1 limited.log)
if [ "$rc" = 1 ]; then ok "file-size limit ${limit} KiB: exit code 1"; else fail "file-size limit: exit code $rc, expected 1: $err"; fi
[[ "$err" == "potop: error: run/resume.safetensors: write failed: File too large"* ]] && ok "names the file: $err" ||
  fail "the error does not name resume.safetensors and the reason: $err"
cmp -s before.safetensors run/resume.safetensors && ok "resume.safetensors unchanged" ||
  fail "resume.safetensors changed although its write failed"
leftover=$(ls run | grep '\.tmp-' || true)
[ -z "$leftover" ] && ok "no temporary file left" || fail "temporary files left behind: $leftover"
grep -q 'eval step 80' limited.log || fail "the limited run did not reach the checkpoint at step 80"

# 2. A read-only model directory (as an unprivileged user when we are root).
chmod 555 run
chmod 644 run/*
rc=0
as_unprivileged "$POTOP" train --resume "$WORK/run" --steps 120 2>readonly.log || rc=$?
chmod 755 run
if [ "$rc" = 77 ] && [ ! -s readonly.log ]; then
  echo "skip read-only directory (cannot drop root privileges here)"
else
  err=$(tail -n 1 readonly.log)
  [ "$rc" = 1 ] && [[ "$err" == *"run"*"not writable"* ]] && ok "read-only directory: $err" ||
    fail "read-only directory: exit code $rc, message: $err"
  cmp -s before.safetensors run/resume.safetensors && ok "resume.safetensors unchanged" || fail "resume.safetensors changed"
fi

# 3. The checkpoint left behind resumes, and the run ends as if nothing had happened.
"$POTOP" train --resume run --steps 120 2>resume.log || fail "resume after the failed writes failed: $(tail -n 2 resume.log)"
grep -q 'resuming run at step 60 of 120' resume.log && ok "resumed from step 60" || fail "did not resume from step 60"
diff <(losses reference) <(losses run) >/dev/null && ok "losses identical to a run without failed writes" ||
  fail "losses differ from a run without failed writes"
cmp -s reference/latest.safetensors run/latest.safetensors && ok "final weights identical" || fail "final weights differ"

# 4. The same limit at a new run's first checkpoint (step 0): its weights fit, its state does not.
#    None of the checkpoint's files appears, and the error, --resume and a new run all say that
#    there is nothing to resume and that --force starts again.
rc=0
( ulimit -f "$limit"; exec "$POTOP" train "${ARGS[@]}" --steps 60 --out first ) 2>first.log || rc=$?
err=$(tail -n 1 first.log)
[ "$rc" = 1 ] && [[ "$err" == *"first/resume.safetensors: write failed: File too large"*"nothing to resume"*"--out first --force" ]] &&
  ok "a failed first checkpoint: $err" || fail "a failed first checkpoint: exit code $rc: $err"
[ -z "$(ls first | grep -e '\.safetensors' -e '\.tmp-' || true)" ] && ok "none of its files appeared" ||
  fail "a failed first checkpoint left: $(ls first)"
expect_error "--resume after a failed first checkpoint" 1 strict "first: its run ended before its first checkpoint" \
  "writing the checkpoint failed" "potop train --out first --force" -- train --resume first
expect_error "a new run after a failed first checkpoint" 1 strict \
  "--out first holds a run that ended before its first checkpoint" "writing the checkpoint failed" "--force" -- \
  train "${ARGS[@]}" --steps 60 --out first
# What an older potop left at such a failure: latest.safetensors alone.
cp -r run older && rm older/best.safetensors older/resume.safetensors
expect_error "--resume of latest.safetensors alone" 1 strict "older: its first checkpoint was not completely written" \
  "full disk" "--out older --force" -- train --resume older
expect_error "a new run into latest.safetensors alone" 1 strict "--out older already holds a model that cannot be resumed" \
  "--force" -- train "${ARGS[@]}" --steps 60 --out older
finish
