#!/usr/bin/env bash
# Multi-process training under mpirun (docs/distributed.md), with the tiny model of lib.sh:
#   mpi.sh <potop> <mpirun> equal     2 ranks = 1 process with --grad-accum 2: losses, weights
#   mpi.sh <potop> <mpirun> resume    a 2-rank run resumed by 2 ranks (exact) and by 1 (works)
#   mpi.sh <potop> <mpirun> refuse    ranks with different flags / a data file missing on one
#   mpi.sh <potop> <mpirun> kill      a rank killed mid-run: the run ends, the checkpoint loads
#   mpi.sh <potop> <mpirun> hang      a rank stopped (SIGSTOP) mid-run: --mpi-timeout ends the run
#   mpi.sh <potop> <mpirun> overlap   gradients sent during backward, in one or many buckets, or after
#                                     it: bit-identical
#   mpi.sh <potop> <mpirun> llama_equal      equal for potop train --arch llama (and rank 0 alone writes)
#   mpi.sh <potop> <mpirun> bow_equal        equal for potop bow train (and rank 0 alone writes)
#   mpi.sh <potop> <mpirun> translate_equal  equal for potop translate train (and rank 0 alone writes)
#   mpi.sh <potop> <mpirun> bert_equal       equal for potop bert pretrain (and rank 0 alone writes)
#   mpi.sh <potop> <mpirun> classify_equal   equal for potop classify train (and rank 0 alone writes)
POTOP=$1
MPIRUN=$2
GROUP=$3
source "$(dirname "$0")/lib.sh"

# As root mpirun needs --allow-run-as-root; --oversubscribe lets 2 ranks share fewer cores;
# shared memory only (no network needed); no core binding, so ranks never queue on one core.
MPI=("$MPIRUN" --oversubscribe --bind-to none --mca btl self,vader)
[ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)
# Open MPI's own allocations are never freed before exit; LeakSanitizer would report them
# (scripts/test-sanitize.sh runs every test under ASan).
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"

make_corpus text.txt 1500
MODEL=("${TINY[@]}" --eval-interval 3)
ARGS=(--data text.txt "${MODEL[@]}")

# Checks that a potop command loads a run's model: sample for a GPT, eval for the others.
loads() {  # loads <dir> <what> [gpt|llama|bow|translate|bert|classify]
  local load
  case ${3:-gpt} in
    gpt | llama) load=(sample --model "$1" --tokens 5 --seed 1) ;;
    bow | bert) load=(eval --model "$1" --data text.txt) ;;
    translate) load=(translate eval --model "$1" --data "$1/test.tsv") ;;
    classify) load=(classify eval --model "$1" --data dev.tsv) ;;
  esac
  "$POTOP" "${load[@]}" >/dev/null 2>load.err \
    && ok "$2: $1 loads (potop ${load[0]})" || fail "$2: potop ${load[0]} cannot load $1: $(cat load.err)"
}

# 2 ranks against one process with --grad-accum 2: the same batches, dropout masks and weights of
# each micro-batch; the float rounding of the gradient sum differs (one process adds micro-batch 2
# into micro-batch 1's gradients kernel by kernel, the ranks add two finished sums), so: equal
# within 1e-6 relative (docs/distributed.md), or the tolerance given.
same_run() {  # same_run <dir> <dir> [tolerance]: metrics and final weights within 1e-6 relative
  /usr/bin/python3 - "$1" "$2" "${3:-1e-6}" <<'PY'
import json, struct, sys
import numpy as np
a_dir, b_dir, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
def records(d):
    return [json.loads(l) for l in open(f"{d}/metrics.jsonl")]
a, b = records(a_dir), records(b_dir)
assert len(a) == len(b), f"{len(a)} vs {len(b)} records"
worst = 0.0
for x, y in zip(a, b):
    assert x["kind"] == y["kind"] and x["step"] == y["step"], (x, y)
    for k in ("loss", "train_loss", "val_loss", "grad_norm"):
        if k in x and x[k] is not None:
            worst = max(worst, abs(x[k] - y[k]) / abs(x[k]))
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    return {k: np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]], dtype=np.float32)
            for k, v in header.items() if k != "__metadata__"}
ta, tb = tensors(f"{a_dir}/latest.safetensors"), tensors(f"{b_dir}/latest.safetensors")
assert ta.keys() == tb.keys()
# Over all weights at once: a tensor whose true gradient is zero (the key bias, which softmax
# ignores) gets rounding noise as its gradient, which AdamW scales up to full steps, so a
# per-tensor relative measure says nothing there.
wa = np.concatenate([ta[k] for k in sorted(ta)])
wb = np.concatenate([tb[k] for k in sorted(ta)])
worst_w = max(float(np.linalg.norm(wa - wb) / np.linalg.norm(wa)), float(np.abs(wa - wb).max() / np.abs(wa).max()))
print(f"{len(a)} records, largest relative difference {worst:.1e}; weights {worst_w:.1e} (relative, all weights)")
sys.exit(0 if worst <= tol and worst_w <= tol else 1)
PY
}

# The equal group's check for another trainer (tiny_run): 2 ranks = one process with
# --grad-accum 2, and rank 0 alone wrote the run: one record per step (same_run counts them), one
# set of printed evaluations, every file of a run, no temporary file, and the model loads.
ranks_equal_accum() {  # ranks_equal_accum <llama|bow|translate|bert|classify>
  local trainer=$1 f
  tiny_run "$trainer"
  "$POTOP" "${TRAIN[@]}" --steps 8 --eval-interval 4 --grad-accum 2 --out one 2>one.log \
    || fail "$trainer, one process with --grad-accum 2: $(tail -n 3 one.log)"
  timeout 120 "${MPI[@]}" -np 2 "$POTOP" "${TRAIN[@]}" --steps 8 --eval-interval 4 --out two 2>two.log >two.out \
    || fail "$trainer, 2 ranks: $(tail -n 5 two.log)"
  # The classifier's weights move furthest from the rounding (6e-7 relative in the release build,
  # 1.4e-6 under the sanitizers, on an AVX-512 machine; the others 1e-8): it gets 1e-5, still far
  # below what a lost micro-batch or a wrong scale gives (1e-2 and more).
  local tol=1e-6
  [ "$trainer" = classify ] && tol=1e-5
  if out=$(same_run one two "$tol" 2>&1); then ok "$trainer: 2 ranks = one process x --grad-accum 2: $out"
  else fail "$trainer: 2 ranks differ from one process with --grad-accum 2: $out"; fi
  [ "$(grep -c '^eval step' two.log)" = 3 ] && ok "$trainer: only rank 0 prints" \
    || fail "$trainer: expected 3 eval lines (steps 0, 4, 8): $(grep '^eval step' two.log)"
  for f in config.json metrics.jsonl latest.safetensors best.safetensors resume.safetensors; do
    [ -s "two/$f" ] || fail "$trainer: 2 ranks wrote no $f: $(ls two)"
  done
  [ -z "$(ls two | grep '\.tmp-' || true)" ] && ok "$trainer: no temporary files" || fail "$trainer: temporary files left: $(ls two)"
  loads two "$trainer, 2 ranks" "$trainer"
}

case "$GROUP" in
equal)
  # One process with --grad-accum 2 and two ranks with 1 each: the same global batch of 16 rows.
  "$POTOP" train "${ARGS[@]}" --steps 8 --grad-accum 2 --out one 2>one.log || fail "one process: $(tail -n 3 one.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 8 --out two 2>two.log >two.out \
    || fail "2 ranks: $(tail -n 5 two.log)"
  grep -q 'ranks: 2 (.*); global batch 16 rows (--batch-size 8 x --grad-accum 1 x 2 ranks)' two.log \
    && ok "the global batch is printed: $(grep '^ranks:' two.log)" || fail "no global batch line in: $(cat two.log)"
  [ "$(grep -c '^eval step' two.log)" = 4 ] && ok "only rank 0 prints" || fail "expected 4 eval lines: $(cat two.log)"
  if out=$(same_run one two 2>&1); then ok "2 ranks = one process x --grad-accum 2: $out"
  else fail "2 ranks differ from one process with --grad-accum 2: $out"; fi
  diff <(grep -o '"loss":[^,]*' one/metrics.jsonl) <(grep -o '"loss":[^,]*' two/metrics.jsonl) >/dev/null \
    && ok "training losses bit-identical" || echo "note: training losses equal only within the tolerance"
  # Run to run: the reduction order is fixed, so two 2-rank runs agree bit for bit.
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 8 --out again 2>again.log || fail "again: $(tail -n 5 again.log)"
  cmp -s two/latest.safetensors again/latest.safetensors && diff <(losses two) <(losses again) >/dev/null \
    && ok "a second 2-rank run is bit-identical" || fail "two 2-rank runs differ"
  # --grad-accum 2 on each rank (global 32 rows) = one process with --grad-accum 4.
  "$POTOP" train "${ARGS[@]}" --steps 4 --grad-accum 4 --out four 2>four.log || fail "four: $(tail -n 3 four.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 4 --grad-accum 2 --out twotwo 2>twotwo.log \
    || fail "2 ranks x 2: $(tail -n 5 twotwo.log)"
  if out=$(same_run four twotwo 2>&1); then ok "2 ranks x --grad-accum 2 = one process x --grad-accum 4: $out"
  else fail "2 ranks x --grad-accum 2 differ from one process x --grad-accum 4: $out"; fi
  [ -z "$(ls two | grep '\.tmp-' || true)" ] && ok "no temporary files" || fail "temporary files left: $(ls two)"
  ;;
overlap)
  # The exchange overlapped with the backward pass (the default, buckets of 2 MB: one bucket for
  # the tiny model, sent as its first block finishes), in many tiny buckets (each sub-layer its
  # own, plus the embeddings), or after the backward pass: the same sums, bit for bit.
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 6 --out default 2>default.log || fail "default: $(tail -n 5 default.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 6 --mpi-bucket-mb 0 --out after 2>after.log \
    || fail "--mpi-bucket-mb 0: $(tail -n 5 after.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 6 --mpi-bucket-mb 0.0001 --profile --out tiny 2>tiny.log \
    || fail "tiny buckets: $(tail -n 5 tiny.log)"
  for run in after tiny; do
    cmp -s default/latest.safetensors $run/latest.safetensors && diff <(losses default) <(losses $run) >/dev/null \
      && ok "$run: bit-identical to the default" || fail "$run differs from the default"
  done
  # 2 layers = 4 sub-layers, each its own bucket, and the embeddings: 5 buckets a step.
  # (the table lists the 4 started inside the backward pass apart from the one started after it)
  buckets=$(awk '$1 == "start" && $2 == "bucket" {n += $3} END {print n}' tiny.log)
  [ "$buckets" = 5 ] && ok "tiny buckets: $buckets buckets per step" \
    || fail "expected 5 buckets per step: '$buckets' in $(grep -A30 '^profile' tiny.log)"
  # With --grad-accum 2 on each rank only the last micro-batch's backward overlaps.
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 4 --grad-accum 2 --mpi-bucket-mb 0.0001 --out accum 2>accum.log \
    || fail "accum: $(tail -n 5 accum.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 4 --grad-accum 2 --mpi-bucket-mb 0 --out accum0 2>accum0.log \
    || fail "accum0: $(tail -n 5 accum0.log)"
  cmp -s accum/latest.safetensors accum0/latest.safetensors && ok "--grad-accum 2: bit-identical with and without overlap" \
    || fail "--grad-accum 2: overlap changes the weights"
  # 2 threads per rank: two replicas, whose gradients are final only after reduce_grads: the
  # exchange then waits for it (and still gives the same sums as 2 ranks of 1 thread, up to the
  # replicas' rounding: compared to itself without overlap).
  two_threads=()
  for a in "${ARGS[@]}"; do [ "${#two_threads[@]}" -gt 0 ] && [ "${two_threads[-1]}" = --threads ] && a=2; two_threads+=("$a"); done
  "${MPI[@]}" -np 2 "$POTOP" train "${two_threads[@]}" --steps 4 --out two_threads 2>tt.log || fail "2 threads: $(tail -n 5 tt.log)"
  grep -q '^threads: 2, 2 running the model side by side' tt.log && ok "2 replicas per rank" || fail "not 2 replicas: $(grep '^threads' tt.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${two_threads[@]}" --steps 4 --mpi-bucket-mb 0 --out two_threads0 2>tt0.log \
    || fail "2 threads, no overlap: $(tail -n 5 tt0.log)"
  cmp -s two_threads/latest.safetensors two_threads0/latest.safetensors && ok "2 threads per rank: bit-identical" \
    || fail "2 threads per rank: differs"
  rc=0
  "$POTOP" train "${ARGS[@]}" --steps 2 --mpi-timeout -1 --out bad 2>err.txt || rc=$?
  [ "$rc" = 1 ] && grep -q 'potop: error: --mpi-timeout must be' err.txt && ok "bad --mpi-timeout: $(cat err.txt)" \
    || fail "--mpi-timeout -1: exit $rc, $(cat err.txt)"
  ;;
hang)
  # Rank 1 is stopped (not killed) once rank 0 has written a checkpoint: rank 0 waits 3 s for it
  # at the next exchange, says so and aborts the run.
  "${MPI[@]}" -np 2 "$POTOP" train --data text.txt "${TINY[@]}" --steps 100000 --eval-interval 5 --mpi-timeout 3 \
    --out run 2>run.log &
  mpirun_pid=$!
  for _ in $(seq 600); do [ "$(count_records run)" -ge 12 ] && break; sleep 0.1; done
  [ -f run/resume.safetensors ] || fail "no checkpoint after 12 steps: $(tail -n 5 run.log)"
  rank1=""
  for pid in $(pgrep -P "$mpirun_pid"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && rank1=$pid
  done
  if [ -z "$rank1" ]; then fail "rank 1 not found among mpirun's children"; kill -9 "$mpirun_pid"; finish; fi
  kill -STOP "$rank1"
  started=$(date +%s)
  rc=0
  for _ in $(seq 300); do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$mpirun_pid" 2>/dev/null; then
    fail "the run still runs 30 s after rank 1 was stopped: $(tail -n 5 run.log)"
    kill -CONT "$rank1" 2>/dev/null; kill -9 "$rank1" "$mpirun_pid" 2>/dev/null; wait "$mpirun_pid" || true
  else
    wait "$mpirun_pid" || rc=$?
    took=$(( $(date +%s) - started ))
    [ "$rc" != 0 ] && [ "$took" -le 15 ] && ok "the run ended (exit $rc) $took s after rank 1 was stopped" \
      || fail "exit code $rc, $took s after rank 1 was stopped"
  fi
  # mpirun kills the stopped rank too (SIGKILL ends a stopped process); it may take a moment to go.
  for _ in $(seq 50); do [ -d "/proc/$rank1" ] && [ "$(awk '{print $3}' "/proc/$rank1/stat" 2>/dev/null)" != Z ] || break; sleep 0.1; done
  if [ -d "/proc/$rank1" ] && [ "$(awk '{print $3}' "/proc/$rank1/stat" 2>/dev/null)" != Z ]; then
    fail "rank 1 is still there, 5 s after the run ended (state $(awk '{print $3}' "/proc/$rank1/stat"))"
    kill -CONT "$rank1"; kill -9 "$rank1"
  else ok "rank 1 is gone"; fi
  # Rank 0 names rank 1 when rank 1 was stopped before reaching the exchange. Stopped inside it
  # (after announcing its arrival: likely on a busy machine, where a rank spends much of a step
  # waiting there for the other) rank 0 can only say that the exchange did not finish. Rank 1,
  # woken by mpirun's SIGCONT before its SIGTERM, may then add its own line.
  line=$(grep -o 'potop: error: .*noticed by rank 0 of 2.*' run.log || true)
  if [[ "$line" =~ (rank\ 1\ did\ not\ reach\ .*\ step\ [0-9]+|step\ [0-9]+\ did\ not\ finish)\ within\ 3\ s ]] &&
    [[ "$line" == *"(--mpi-timeout; noticed by rank 0 of 2); stopping every rank; the last checkpoint is in run"* ]]; then
    ok "says so: $line"
  else fail "no timeout message from rank 0: $(grep 'potop: error' run.log)"; fi
  loads run "after the timeout"
  at=$(grep -o '"step":[0-9]*' run/metrics.jsonl | tail -n 1)
  "$POTOP" train --resume run --steps $(( ${at#*:} + 5 )) 2>resume.log && ok "one process resumes the run (last record $at)" \
    || fail "resume after the timeout failed: $(tail -n 3 resume.log)"
  ;;
resume)
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 8 --out full 2>full.log || fail "full: $(tail -n 5 full.log)"
  "${MPI[@]}" -np 2 "$POTOP" train "${ARGS[@]}" --steps 5 --out part 2>part.log || fail "part: $(tail -n 5 part.log)"
  "${MPI[@]}" -np 2 "$POTOP" train --resume part --steps 8 2>>part.log || fail "resume: $(tail -n 5 part.log)"
  grep -q 'resuming part at step 5 of 8' part.log && ok "2 ranks resume" || fail "no resume line: $(cat part.log)"
  # The 5-step run ended with an evaluation at step 5, which the uninterrupted run did not do.
  diff <(losses full) <(losses part | grep -v '"kind":"eval","step":5,') >diff.txt && ok "resumed by 2 ranks: identical to the uninterrupted run" \
    || { fail "2-rank resume differs:"; head diff.txt >&2; }
  cmp -s full/latest.safetensors part/latest.safetensors && ok "final weights identical" || fail "final weights differ"
  # The same state resumed by one process (global batch 8 instead of 16) and by 3 ranks.
  cp -r part one && "$POTOP" train --resume one --steps 10 2>one.log || fail "1 process: $(tail -n 3 one.log)"
  grep -q 'the run used 2 ranks and now uses 1: the global batch is now 8 rows' one.log \
    && ok "one process resumes a 2-rank run, with a note" || fail "no note on the rank change: $(cat one.log)"
  [ "$(count_records one)" = 10 ] && ok "one process trained to step 10" || fail "expected 10 records in one"
  cp -r part three && "${MPI[@]}" -np 3 "$POTOP" train --resume three --steps 10 2>three.log \
    || fail "3 ranks: $(tail -n 5 three.log)"
  grep -q 'now uses 3: the global batch is now 24 rows' three.log && ok "3 ranks resume a 2-rank run" \
    || fail "no note: $(cat three.log)"
  loads three "3 ranks"
  ;;
refuse)
  # A flag that differs between ranks (an MPMD launch: rank 0's command, then rank 1's).
  rc=0
  "${MPI[@]}" -np 1 "$POTOP" train "${ARGS[@]}" --steps 4 --lr 1e-3 --out bad : \
    -np 1 "$POTOP" train "${ARGS[@]}" --steps 4 --lr 2e-3 --out bad >out.txt 2>err.txt || rc=$?
  check_refusal() {  # check_refusal <name> <needle>
    if [ "$rc" = 0 ]; then fail "$1: exit code 0"; fi
    # mpirun forwards rank 0's stderr beside its own notes, sometimes on the same line.
    [ "$(grep -o 'potop: error: ' err.txt | wc -l)" = 1 ] || { fail "$1: expected one 'potop: error:' line: $(cat err.txt)"; return; }
    local line
    line=$(grep -o 'potop: error: .*' err.txt)
    [[ "$line" == *"$2"* ]] && ok "$1: exit $rc, $line" || fail "$1: message does not name '$2': $line"
    ! grep -qE 'Sanitizer|runtime error:|terminate called' err.txt || fail "$1: crash: $(cat err.txt)"
    [ ! -e bad/config.json ] && [ ! -e bad/metrics.jsonl ] && ok "$1: nothing written" || fail "$1: files written: $(ls bad)"
  }
  check_refusal "different --lr" "rank 1 of 2 has options.lr = 0.002, rank 0 has 0.001"
  rc=0
  "${MPI[@]}" -np 1 "$POTOP" train "${ARGS[@]}" --steps 4 --out bad : \
    -np 1 "$POTOP" train --data missing.txt "${MODEL[@]}" --steps 4 --out bad >out.txt 2>err.txt || rc=$?
  check_refusal "data missing on rank 1" "rank 1 of 2: "
  grep -q 'missing.txt' err.txt && ok "names the missing file" || fail "missing.txt not named: $(cat err.txt)"
  rc=0  # the same bad flag on every rank: said once, as without mpirun
  "${MPI[@]}" -np 2 "$POTOP" train --data text.txt --n-layer 1 --n-head 2 --n-embd 33 --threads 1 --steps 4 --out bad >out.txt 2>err.txt || rc=$?
  check_refusal "a bad flag on every rank" "potop: error: --n-embd (33) must be divisible by --n-head (2)"
  ;;
kill)
  # Rank 1 is killed once rank 0 has written a checkpoint; the run must end (non-zero) well
  # before its 100000 steps, and the checkpoint must load and resume.
  "${MPI[@]}" -np 2 "$POTOP" train --data text.txt "${TINY[@]}" --steps 100000 --eval-interval 5 --out run 2>run.log &
  mpirun_pid=$!
  for _ in $(seq 600); do [ "$(count_records run)" -ge 12 ] && break; sleep 0.1; done
  [ -f run/resume.safetensors ] || fail "no checkpoint after 12 steps: $(tail -n 5 run.log)"
  rank1=""
  for pid in $(pgrep -P "$mpirun_pid"); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && rank1=$pid
  done
  if [ -z "$rank1" ]; then fail "rank 1 not found among mpirun's children"; finish; fi
  kill -9 "$rank1"
  started=$(date +%s)
  rc=0
  for _ in $(seq 300); do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$mpirun_pid" 2>/dev/null; then
    fail "the run still runs 30 s after rank 1 was killed"; kill -9 "$mpirun_pid"; wait "$mpirun_pid" || true
  else
    wait "$mpirun_pid" || rc=$?
    [ "$rc" != 0 ] && ok "the run ended (exit $rc) $(( $(date +%s) - started )) s after rank 1 was killed" \
      || fail "exit code 0 after a rank was killed"
  fi
  grep -q 'rank 1 .*exited on signal 9' run.log && ok "mpirun says so: $(grep -m1 'exited on signal 9' run.log | sed 's/^ *//')" \
    || fail "no message naming the killed rank: $(tail -n 8 run.log)"
  loads run "after the kill"
  # The checkpoint is at or before the last record's step, which depends on how fast the
  # machine ran until the kill: resume to a few steps past it.
  at=$(grep -o '"step":[0-9]*' run/metrics.jsonl | tail -n 1)
  "$POTOP" train --resume run --steps $(( ${at#*:} + 5 )) 2>resume.log && ok "one process resumes the run (last record $at)" \
    || fail "resume after the kill failed: $(tail -n 3 resume.log)"
  ;;
llama_equal) ranks_equal_accum llama ;;
bow_equal) ranks_equal_accum bow ;;
translate_equal) make_pairs pairs.tsv 300; ranks_equal_accum translate ;;
bert_equal) ranks_equal_accum bert ;;  # each micro-batch's masks seeded by its global index
classify_equal) ranks_equal_accum classify ;;  # each micro-batch's texts drawn by its global index
*) echo "unknown group $GROUP" >&2; exit 2 ;;
esac
finish
