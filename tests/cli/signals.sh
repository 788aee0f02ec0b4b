#!/usr/bin/env bash
# SIGINT, SIGTERM and SIGHUP: the trainer finishes its step, writes a checkpoint, exits 0 and says
# how to resume; resuming then reproduces the uninterrupted run exactly. A second SIGINT ends the
# process at once and still leaves a resumable checkpoint. Under nohup (SIGHUP ignored at the
# start) a hangup changes nothing.
#   signals.sh <potop> [seed]
POTOP=$1
source "$(dirname "$0")/lib.sh"
SEED=${2:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "signal points seeded with $SEED"

STEPS=300
make_corpus text.txt 3000
ARGS=(--data text.txt "${TINY[@]}" --steps $STEPS --eval-interval 50)
"$POTOP" train "${ARGS[@]}" --out reference 2>reference.log

# signal_at <dir> <step> <signal>...: starts a run, sends the signals once `step` steps are logged.
signal_at() {
  local dir=$1 at=$2
  shift 2
  "$POTOP" train "${ARGS[@]}" --out "$dir" 2>"$dir.log" &
  local pid=$! sig
  while kill -0 "$pid" 2>/dev/null && [ "$(count_records "$dir")" -lt "$at" ]; do sleep 0.005; done
  for sig in "$@"; do
    kill -s "$sig" "$pid" 2>/dev/null || true
    # Before a second signal, wait until the first one's handler has spoken (signals coalesce).
    for _ in $(seq 200); do grep -q 'potop: stopping' "$dir.log" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.005; done
  done
  RC=0
  wait "$pid" || RC=$?
}

for sig in INT TERM HUP; do
  dir=run-$sig
  at=$((20 + RANDOM % 200))
  signal_at "$dir" "$at" "$sig"
  if [ "$RC" != 0 ]; then fail "SIG$sig: exit code $RC, expected 0: $(tail -n 3 "$dir.log")"; continue; fi
  line=$(grep -o "interrupted at step [0-9]* of $STEPS" "$dir.log" || true)
  [ -n "$line" ] && ok "SIG$sig at step ~$at: $line" || { fail "SIG$sig: no 'interrupted at step' message"; continue; }
  grep -q "resume with: potop train --resume $dir" "$dir.log" && ok "SIG$sig: says how to resume" ||
    fail "SIG$sig: the message does not say how to resume: $(tail -n 2 "$dir.log")"
  step=${line#interrupted at step }
  step=${step%% *}
  "$POTOP" train --resume "$dir" 2>"$dir.resume.log" || { fail "SIG$sig: resume failed: $(tail -n 2 "$dir.resume.log")"; continue; }
  grep -q "resuming $dir at step $step of $STEPS" "$dir.resume.log" && ok "SIG$sig: resumed at step $step" ||
    fail "SIG$sig: did not resume at step $step: $(grep resuming "$dir.resume.log")"
  diff <(losses reference) <(losses "$dir") >/dev/null && ok "SIG$sig: losses identical to the uninterrupted run" ||
    fail "SIG$sig: losses differ from the uninterrupted run"
done

# nohup's promise: started with SIGHUP ignored, a hangup is ignored and the run goes to its end.
(trap '' HUP; exec "$POTOP" train "${ARGS[@]}" --out run-nohup 2>run-nohup.log) &
pid=$!
at=$((20 + RANDOM % 200))
while kill -0 "$pid" 2>/dev/null && [ "$(count_records run-nohup)" -lt "$at" ]; do sleep 0.005; done
kill -s HUP "$pid" 2>/dev/null || true
RC=0
wait "$pid" || RC=$?
if [ "$RC" = 0 ] && ! grep -q "interrupted" run-nohup.log && diff <(losses reference) <(losses run-nohup) >/dev/null; then
  ok "SIGHUP under nohup at step ~$at: ignored, the run went to its end"
else
  fail "SIGHUP under nohup: exit $RC: $(tail -n 2 run-nohup.log)"
fi

# Two SIGINTs: the second one ends the process at once (or the first already finished cleanly).
signal_at run-twice $((20 + RANDOM % 200)) INT INT
case $RC in
  0 | 130) ok "double SIGINT: exit code $RC" ;;
  *) fail "double SIGINT: exit code $RC, expected 0 or 130" ;;
esac
"$POTOP" train --resume run-twice 2>run-twice.resume.log || fail "double SIGINT: resume failed: $(tail -n 2 run-twice.resume.log)"
diff <(losses reference) <(losses run-twice) >/dev/null && ok "double SIGINT: losses identical after resume" ||
  fail "double SIGINT: losses differ after resume"
finish
