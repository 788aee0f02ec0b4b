#!/usr/bin/env bash
# The trainers behave alike (issue 25: potop train, bow train and translate train had drifted
# apart; translate pretrain, bert pretrain and classify train have joined them). Each group runs
# the same check on the tiny run of every trainer (lib.sh's tiny_run):
#   drift.sh <potop> resume_below   --resume with --steps below the checkpoint's step is refused
#   drift.sh <potop> schedule       --resume with more --steps keeps the run's cosine decay
#   drift.sh <potop> force          --force removes the old run's step-N.safetensors snapshots
#   drift.sh <potop> resume_exact   a run stopped and resumed ends as the uninterrupted run, bit for bit
#   drift.sh <potop> kinds          info names each kind; eval scores each (a classifier: classify eval);
#                                   sample refuses a translator, a BERT and a classifier
POTOP=$1
GROUP=$2
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 1500
make_pairs pairs.tsv 300
TRAINERS=(gpt llama bow translate pretrain bert classify)

# A fresh tiny run of <trainer> in <dir> (the remaining options added); fails the check when it fails.
fresh() {  # fresh <trainer> <dir> <options>...
  local trainer=$1 dir=$2
  shift 2
  tiny_run "$trainer"
  "$POTOP" "${TRAIN[@]}" --out "$dir" "$@" >/dev/null 2>"$dir.log" || fail "$trainer: training $dir: $(tail -n 3 "$dir.log")"
}

case "$GROUP" in
resume_below)
  # A run at step 6 resumed with --steps 3: refused at once, nothing trained. (The translator
  # once trained on without end, past --steps: timeout turns that into a failed check.)
  for trainer in "${TRAINERS[@]}"; do
    fresh "$trainer" "$trainer" --steps 6 --eval-interval 3
    before=$(count_records "$trainer") rc=0
    timeout 10 "$POTOP" "${SUBCOMMAND[@]}" --resume "$trainer" --steps 3 >/dev/null 2>below.err || rc=$?
    line=$(grep -o 'potop: error: .*' below.err | tail -n 1 || true)
    if [ "$rc" = 124 ]; then fail "$trainer: --resume at step 6 with --steps 3 still ran after 10 s: $(tail -n 2 below.err)"
    elif [ "$rc" != 0 ] && [[ "$line" == *"--steps 3 is below"* ]]; then ok "$trainer: --resume at step 6 with --steps 3: exit $rc, $line"
    else fail "$trainer: --resume at step 6 with --steps 3: exit $rc, expected a refusal naming '--steps 3 is below': $(tail -n 3 below.err)"; fi
    after=$(count_records "$trainer")
    [ "$after" = "$before" ] && ok "$trainer: nothing trained ($after records)" \
      || fail "$trainer: the refused resume trained: $before records before, $after after"
  done
  ;;
schedule)
  # 10 steps of warm-up and cosine decay to --min-lr, then resumed to 20 without
  # --lr-decay-steps: the run's schedule holds, so steps 11-20 train at --min-lr (the README's
  # "on the same schedule"). Step 10's rate is the last point of the decay, not yet --min-lr.
  for trainer in "${TRAINERS[@]}"; do
    cosine=()
    case $trainer in translate | classify) cosine=(--lr-schedule cosine) ;; esac  # their defaults: noam, linear
    fresh "$trainer" "$trainer" --steps 10 --eval-interval 5 --lr 1e-2 --min-lr 1e-3 --warmup 3 "${cosine[@]}"
    "$POTOP" "${SUBCOMMAND[@]}" --resume "$trainer" --steps 20 >/dev/null 2>resume.log \
      || fail "$trainer: resume: $(tail -n 3 resume.log)"
    if out=$(/usr/bin/python3 - "$trainer/metrics.jsonl" 1e-3 10 20 <<'PY' 2>&1
import json, sys
path, min_lr, n, total = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
after = [r for r in map(json.loads, open(path)) if r["kind"] == "train" and r["step"] > n]
if [r["step"] for r in after] != list(range(n + 1, total + 1)):
    sys.exit(f"train records after step {n}: steps {[r['step'] for r in after]}")
off = [f"{r['step']}: {r['lr']:.4g}" for r in after if abs(r["lr"] - min_lr) > 1e-6 * min_lr]
if off:
    sys.exit(f"lr not at --min-lr {min_lr} at steps {', '.join(off)}")
print(f"steps {n + 1}-{total} at lr {after[0]['lr']:.6g}")
PY
    ); then ok "$trainer: resumed to 20, the decay kept: $out"
    else fail "$trainer: resumed to 20, the decay stretched: $out"; fi
  done
  ;;
force)
  # A run with --keep 2 leaves step-2 and step-4 snapshots; a new run with --force in the same
  # --out replaces the whole run, snapshots included (they would resume into the old run).
  for trainer in "${TRAINERS[@]}"; do
    fresh "$trainer" "$trainer" --steps 4 --eval-interval 2 --keep 2
    [ -f "$trainer/step-000002.safetensors" ] && [ -f "$trainer/step-000004.safetensors" ] \
      || fail "$trainer: --keep 2 wrote no snapshots: $(ls "$trainer")"
    fresh "$trainer" "$trainer" --steps 3 --eval-interval 3 --force
    stale=$(cd "$trainer" && ls step-*.safetensors 2>/dev/null || true)
    [ -z "$stale" ] && ok "$trainer: --force removed the old run's snapshots" \
      || fail "$trainer: --force left the old run's snapshots: ${stale//$'\n'/ }"
    [ "$(count_records "$trainer")" = 3 ] && ok "$trainer: --force started over (3 records)" \
      || fail "$trainer: --force kept the old records: $(count_records "$trainer") train records"
  done
  ;;
resume_exact)
  # 8 steps at once, or 5 and then --resume to 8: the same losses at every step and the same final
  # weights, bit for bit (one thread; the batches, masks and dropout of a step depend on the step,
  # not on the process). The 5-step run made one more evaluation, at its end.
  for trainer in "${TRAINERS[@]}"; do
    # The others warm up for longer than 8 steps; the classifier's rate decays from step 1 to
    # --steps (8 or 5) unless --lr-decay-steps fixes the end, as a resumed run keeps it.
    decay=()
    [ "$trainer" = classify ] && decay=(--lr-decay-steps 8)
    fresh "$trainer" "$trainer-full" --steps 8 --eval-interval 4 "${decay[@]}"
    fresh "$trainer" "$trainer-part" --steps 5 --eval-interval 4 "${decay[@]}"
    "$POTOP" "${SUBCOMMAND[@]}" --resume "$trainer-part" --steps 8 >/dev/null 2>resume.log \
      || fail "$trainer: resume: $(tail -n 3 resume.log)"
    if diff <(losses "$trainer-full") <(losses "$trainer-part" | grep -v '"kind":"eval",.*"step":5[,}]') >diff.txt; then
      ok "$trainer: resumed at step 5, the uninterrupted run's losses"
    else fail "$trainer: resumed at step 5, the losses differ: $(head -n 4 diff.txt)"; fi
    cmp -s "$trainer-full/latest.safetensors" "$trainer-part/latest.safetensors" \
      && ok "$trainer: resumed at step 5, the same final weights" || fail "$trainer: resumed at step 5, the final weights differ"
  done
  ;;
kinds)
  for trainer in "${TRAINERS[@]}"; do fresh "$trainer" "$trainer" --steps 3 --eval-interval 3; done
  # info reads every kind of model directory and names its kind.
  for pair in gpt:gpt llama:llama bow:bow translate:encoder-decoder pretrain:encoder-decoder bert:bert classify:classifier; do
    dir=${pair%%:*} want=${pair#*:} rc=0
    "$POTOP" info -m "$dir" --json >info.json 2>info.err || rc=$?
    got=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kind"])' info.json 2>/dev/null || true)
    [ "$rc" = 0 ] && [ "$got" = "$want" ] && ok "info --json of $dir: \"kind\": \"$got\"" \
      || fail "info --json of $dir: exit $rc, kind '$got', expected '$want': $(cat info.err)"
  done
  # eval scores every kind on its own kind of data: a text, or a TSV of pairs (by default the
  # run's test.tsv); a classifier, labelled texts with classify eval. The wording of the output
  # may change: a loss and a number are enough.
  evaluates() {  # evaluates <what> [classify] eval <options>...
    local what=$1 rc=0
    shift
    timeout 60 "$POTOP" "$@" >eval.out 2>eval.err || rc=$?
    if [ "$rc" = 0 ] && grep -qiE 'loss[^0-9]*[0-9]+\.[0-9]+' eval.out; then ok "eval $what: $(grep -im1 loss eval.out)"
    else fail "eval $what: exit $rc: $(cat eval.out eval.err)"; fi
  }
  evaluates "of a GPT on a text" eval -m gpt --data text.txt
  evaluates "of a Llama on a text" eval -m llama --data text.txt
  evaluates "of a BoW on a text" eval -m bow --data text.txt
  evaluates "of a translator on pairs" eval -m translate --data translate/test.tsv
  evaluates "of a translator, no --data (its test.tsv)" eval -m translate
  evaluates "of a BERT on a text (masked-LM)" eval -m bert --data text.txt
  evaluates "of a classifier on labelled texts (classify eval)" classify eval -m classify --data dev.tsv
  # sample has no source sentence to give a translator: it says which command to use (and so for
  # a BERT and a classifier).
  expect_error "sample of a translator" 1 log "encoder-decoder" "potop translate" -- sample -m translate -p x
  expect_error "sample of a BERT" 1 log "bert" "potop bert fill" -- sample -m bert -p x
  expect_error "sample of a classifier" 1 log "classifier" "potop classify" -- sample -m classify -p x
  ;;
*) echo "unknown group $GROUP" >&2; exit 2 ;;
esac
finish
