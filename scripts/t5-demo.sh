#!/usr/bin/env bash
# T5 pre-training, measured: pre-train an encoder-decoder on English and Polish text by span
# corruption (potop translate pretrain), fine-tune it on the Tatoeba pairs (translate train
# --init-from), and train the same model from scratch on the same pairs for the same number of
# steps; print both models' BLEU and chrF on the held-out test pairs. docs/translation.md's
# "T5 pre-training" table comes from this script:
#
#   bash scripts/t5-demo.sh [RUNS_DIR]          (default runs/t5-demo)
#
# About 18 minutes of CPU at the defaults (pre-training 5,000 steps: 9; each fine-tuning 2,000
# steps: 5), one thread per run; PRETRAIN_STEPS, FINETUNE_STEPS, THREADS, ENGLISH_EXTRA, PAIRS,
# POLISH and POTOP change them.
#
# The text: English — the English side of the training pairs, plus runs/corpus/english.txt when
# scripts/pretrain-corpus.sh has written it (or $ENGLISH_EXTRA); Polish — the Polish side of the
# training pairs and ../shared/data/potop.txt. The dev and test pairs are held out of everything:
# a 1-step translate train writes the split first (the split depends on the file alone), and only
# its train.tsv feeds the tokenizer and the pre-training. Both fine-tunings use that one tokenizer
# (a BPE of 4,000 tokens learned from the training pairs and Potop) so that they differ only in
# their starting weights. The scratch run trains beside the pre-training (one thread each).
set -euo pipefail
cd "$(dirname "$0")/.."
potop=${POTOP:-build/release/src/potop}
runs=${1:-runs/t5-demo}
pairs=${PAIRS:-../shared/data/tatoeba-eng-pol.tsv}
novel=${POLISH:-../shared/data/potop.txt}
english_extra=${ENGLISH_EXTRA:-runs/corpus/english.txt}
pretrain_steps=${PRETRAIN_STEPS:-5000}
finetune_steps=${FINETUNE_STEPS:-2000}
threads=${THREADS:-1}
for f in "$pairs" "$novel"; do [ -f "$f" ] || { echo "t5-demo: needs $f" >&2; exit 1; }; done
[ -x "$potop" ] || { echo "t5-demo: build potop first (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
mkdir -p "$runs"
now() { date +%s; }
minutes() { awk -v s="$1" 'BEGIN { printf "%.1f", s / 60 }'; }

# docs/translation.md's recipe: 3 + 3 layers of 128, 4 heads, block 48.
MODEL=(--n-layer 3 --n-head 4 --n-embd 128 --block-size 48)
# The fine-tuning recipe (the measured en -> pl run's), dropout and label smoothing named so that
# the fine-tuned model does not keep the pre-training's 0.
TUNE=(--data "$pairs" --source en --target pl --batch-tokens 2048 --steps "$finetune_steps" --lr-schedule cosine
      --lr 1e-3 --min-lr 1e-5 --warmup 200 --eval-interval 500 --eval-sentences 200 --dropout 0.1
      --label-smoothing 0.1 --threads "$threads" --force)

# 1. The split, and the text of the training pairs.
"$potop" translate train --data "$pairs" --source en --target pl --out "$runs/split" --steps 1 --vocab-size 1000 \
  --n-layer 1 --n-head 2 --n-embd 16 --block-size 48 --eval-sentences 0 --threads "$threads" --force 2>"$runs/split.log"
cut -f1 "$runs/split/train.tsv" >"$runs/english.txt"
cut -f2 "$runs/split/train.tsv" >"$runs/polish.txt"
cat "$novel" >>"$runs/polish.txt"
cat "$runs/english.txt" "$runs/polish.txt" >"$runs/tokenizer-text.txt"
english=("$runs/english.txt")
if [ -f "$english_extra" ]; then english+=("$english_extra"); fi
echo "t5-demo: English: ${english[*]}; Polish: $runs/polish.txt (the training pairs' Polish and $novel)" >&2

# 2. One tokenizer for every model.
"$potop" tokenizer train --kind bpe --data "$runs/tokenizer-text.txt" --vocab-size 4000 --out "$runs/tokenizer" --force >&2

# 3. Pre-training (T5: no dropout, no label smoothing) and, beside it, the scratch run.
start=$(now)
data=()
for f in "${english[@]}" "$runs/polish.txt"; do data+=(--data "$f"); done
(
  t=$(now)
  "$potop" translate train "${TUNE[@]}" "${MODEL[@]}" --tokenizer "$runs/tokenizer" --out "$runs/scratch" \
    2>"$runs/scratch.log"
  echo $(($(now) - t)) >"$runs/scratch.seconds"
) &
scratch_pid=$!
"$potop" translate pretrain "${data[@]}" --tokenizer "$runs/tokenizer" --out "$runs/pretrained" "${MODEL[@]}" \
  --batch-size 64 --steps "$pretrain_steps" --lr 1e-3 --min-lr 1e-5 --warmup 200 --eval-interval 1000 \
  --dropout 0 --label-smoothing 0 --threads "$threads" --force 2>"$runs/pretrain.log"
pretrain_s=$(($(now) - start))
wait "$scratch_pid"
scratch_s=$(cat "$runs/scratch.seconds")

# 4. Fine-tuning the pre-trained model for as many steps.
start=$(now)
"$potop" translate train "${TUNE[@]}" --init-from "$runs/pretrained" --out "$runs/t5" 2>"$runs/t5.log"
t5_s=$(($(now) - start))

# 5. Scores on the held-out test pairs (1,000), greedy and beam 4.
score() {  # score <model> <beam>: "BLEU chrF"
  "$potop" translate eval --model "$1" --data "$1/test.tsv" --beam "$2" --threads "$threads" 2>/dev/null \
    | awk '/^BLEU/ { b = $2 } /^chrF/ { c = $2 } END { print b, c }'
}
dev_loss() {  # the validation loss of the last evaluation
  /usr/bin/python3 -c 'import json, sys
evals = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "eval"]
print("%.4f" % evals[-1]["val_loss"])' "$1/metrics.jsonl"
}
echo
echo "pre-training: $pretrain_steps steps, $(minutes "$pretrain_s") min, final held-out loss $(dev_loss "$runs/pretrained")"
echo "| model | fine-tuning steps | minutes | dev loss | test BLEU / chrF, greedy | test, beam 4 |"
echo "|---|---:|---:|---:|---:|---:|"
for m in scratch t5; do
  read -r gb gc <<<"$(score "$runs/$m" 1)"
  read -r bb bc <<<"$(score "$runs/$m" 4)"
  s=$t5_s
  [ "$m" = scratch ] && s=$scratch_s
  name="from scratch"
  [ "$m" = t5 ] && name="T5 pre-trained"
  echo "| $name | $finetune_steps | $(minutes "$s") | $(dev_loss "$runs/$m") | $gb / $gc | $bb / $bc |"
done
