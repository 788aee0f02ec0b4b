#!/usr/bin/env bash
# Transfer learning as the lecture "Transformers. GPT. BERT. T5." teaches it, measured end to end:
# pre-train on unlabelled English, then fine-tune on labelled sentences (docs/transfer.md; the
# README's tables come from this script).
#
#   bash scripts/transfer-demo.sh            OUT=runs/transfer, PRETRAIN_MINUTES=35 (about 2 h)
#   PRETRAIN_MINUTES=10 SEEDS="1" bash scripts/transfer-demo.sh     a quick look
# Also: N_EMBD (the body's width, 128), TASKS, GPT=0, CURVE=0, TORCH=1, FINETUNE_LR, FINETUNE_EPOCHS,
# THREADS, CLASSIFY_DATA, POTOP.
#
#  1. the corpus (scripts/pretrain-corpus.sh: WordNet, the KJV, fortunes, Tatoeba's English; the
#     SST-2/TREC dev sentences are kept out) and a BPE tokenizer of it, shared by every model;
#  2. BERT pre-training (potop bert pretrain, masked LM) for PRETRAIN_MINUTES: the number of steps
#     comes from a short probe of this machine's speed; for the curve of fine-tuned accuracy
#     against pre-training tokens, two more BERTs pre-trained on 10 M and 30 M tokens, each with
#     the whole schedule (CURVE=0 skips them);
#  3. with GPT=1 (the default), a GPT of the same shape on the same corpus for the same time;
#  4. fine-tuning on SST-2 and TREC (potop classify train), each seed of SEEDS: from scratch, from
#     BERT ([CLS] head), from the GPT (last-token head), and from the curve's BERTs;
#     with TORCH=1, also from BERT in PyTorch (scripts/torch_classify.py, the same recipe);
#  5. $OUT/results.jsonl (one line per fine-tuned model: its dev accuracy) and $OUT/results.md (mean
#     ± sd over the seeds per row and task), printed at the end.
# Writes $OUT/bert, $OUT/gpt, $OUT/sst2 and $OUT/trec (the BERT-initialised classifiers of the
# first seed) and $OUT/runs/<task>-<row>-<seed>/ for every fine-tuned model.
set -euo pipefail
cd "$(dirname "$0")/.."
potop=${POTOP:-build/release/src/potop}
out=${OUT:-runs/transfer}
minutes=${PRETRAIN_MINUTES:-35}
seeds=${SEEDS:-1 2 3}
tasks=${TASKS:-sst2 trec}
gpt=${GPT:-1}
threads=${THREADS:-0}
classify_data=${CLASSIFY_DATA:-../shared/data/classify}
[ -x "$potop" ] || { echo "transfer-demo: build potop first (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
for t in $tasks; do
  for s in train dev; do
    [ -f "$classify_data/$t-$s.tsv" ] || { echo "transfer-demo: needs $classify_data/$t-$s.tsv" >&2; exit 1; }
  done
done
if [ "${TORCH:-0}" = 1 ] && ! /usr/bin/python3 -c "import torch, numpy, sentencepiece" 2>/dev/null; then
  echo "transfer-demo: TORCH=1 needs /usr/bin/python3 with torch, numpy and sentencepiece (python3-sentencepiece)" >&2
  exit 1
fi
mkdir -p "$out/runs"
log() { echo "transfer-demo: $*" >&2; }

# The pre-trained models' shape (BERT-mini's depth at half its width: on 2 cores 4 x 128 trains at
# about 48 k tokens/s against 16 k for 4 x 256, and at this budget seeing 3x the tokens matters
# more than width; docs/transfer.md) and batches; the fine-tuning recipe (Hugging Face's run_glue
# defaults scaled to these models: linear warm-up and decay, early stopping on dev accuracy).
BODY=(--n-layer 4 --n-head 4 --n-embd ${N_EMBD:-128} --block-size 128 --dropout 0.1)
PRETRAIN=(--batch-size 32 --lr 1e-3 --min-lr 1e-4 --warmup 500 --weight-decay 0.01 --eval-interval 500
          --eval-iters 10 --threads "$threads")
TUNE=(--epochs "${FINETUNE_EPOCHS:-6}" --batch-size 32 --lr "${FINETUNE_LR:-3e-4}" --warmup 100 --eval-interval 100 --patience 5
      --threads "$threads")
tokens_per_step=$((32 * 128))

# 1. Corpus and tokenizer.
bash scripts/pretrain-corpus.sh runs/corpus >&2
corpus=runs/corpus/english.txt
if [ ! -f "$out/tokenizer/tokenizer.model" ]; then
  "$potop" tokenizer train --kind bpe --vocab-size 8000 --data "$corpus" --out "$out/tokenizer" --force >&2
fi

# Steps that fill $minutes at the speed a 40-step probe of the command measures.
steps_for() {  # steps_for <probe dir> <command...>
  local dir=$1
  shift
  "$@" --out "$dir" --steps 40 --log-interval 10 --force >/dev/null 2>&1
  awk -v m="$minutes" -v t="$tokens_per_step" -F'"tokens_per_s":' \
    '/"kind":"train"/ { split($2, a, /[,}]/); r = a[1] } END { s = int(m * 60 * r * 0.95 / t); print (s < 50 ? 50 : s) }' \
    "$dir/metrics.jsonl"
}

# 2-3. Pre-training.
bert_cmd=("$potop" bert pretrain --data "$corpus" --tokenizer "$out/tokenizer" "${BODY[@]}" "${PRETRAIN[@]}")
gpt_cmd=("$potop" train --data "$corpus" --tokenizer "$out/tokenizer" "${BODY[@]}" "${PRETRAIN[@]}")
if [ ! -f "$out/bert/best.safetensors" ]; then
  steps=$(steps_for "$out/probe-bert" "${bert_cmd[@]}")
  log "BERT: $steps steps of $tokens_per_step tokens in about $minutes minutes"
  "${bert_cmd[@]}" --out "$out/bert" --steps "$steps" --force 2>"$out/bert.log"
fi
# The curve. A snapshot of the long run is a poor stand-in: taken at a high learning rate, the
# 10 M and 30 M snapshots fine-tuned worse than from scratch (docs/transfer.md), so each point is
# a run of its own, warmed up and decayed like the long one. Budgets the long run did not exceed
# are skipped.
curve=()
if [ "${CURVE:-1}" = 1 ]; then
  full=$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' "$out/bert/metrics.jsonl" | tail -n 1)
  for m in 10 30; do
    steps=$((m * 1000000 / tokens_per_step))
    [ "$steps" -lt "${full:-0}" ] || continue
    if [ ! -f "$out/bert-${m}M/best.safetensors" ]; then
      log "BERT for the curve: $steps steps ($m M tokens)"
      "${bert_cmd[@]}" --out "$out/bert-${m}M" --steps "$steps" --force 2>"$out/bert-${m}M.log"
    fi
    curve+=("$m")
  done
fi
if [ "$gpt" = 1 ] && [ ! -f "$out/gpt/best.safetensors" ]; then
  steps=$(steps_for "$out/probe-gpt" "${gpt_cmd[@]}")
  log "GPT: $steps steps of $tokens_per_step tokens in about $minutes minutes"
  "${gpt_cmd[@]}" --out "$out/gpt" --steps "$steps" --force 2>"$out/gpt.log"
fi
rm -rf "$out/probe-bert" "$out/probe-gpt"

# 4. Fine-tuning. A row: its name, then the flags that start the classifier.
rows=("scratch --tokenizer $out/tokenizer ${BODY[*]}" "bert --init-from $out/bert")
[ "$gpt" = 1 ] && rows+=("gpt --init-from $out/gpt")
for m in "${curve[@]}"; do rows+=("bert-${m}M --init-from $out/bert-${m}M"); done
: >"$out/results.jsonl"
for task in $tasks; do
  for row in "${rows[@]}"; do
    read -r -a flags <<<"$row"
    name=${flags[0]}
    for seed in $seeds; do
      dir=$out/runs/$task-$name-$seed
      start=$SECONDS
      "$potop" classify train --data "$classify_data/$task-train.tsv" --dev "$classify_data/$task-dev.tsv" \
        --out "$dir" "${flags[@]:1}" "${TUNE[@]}" --seed "$seed" --force 2>"$dir.log"
      acc=$("$potop" classify eval --model "$dir" --data "$classify_data/$task-dev.tsv" --json 2>/dev/null |
        sed -n 's/.*"accuracy":\([0-9.eE+-]*\).*/\1/p')
      echo "{\"task\":\"$task\",\"row\":\"$name\",\"seed\":$seed,\"dev_accuracy\":$acc,\"seconds\":$((SECONDS - start))}" |
        tee -a "$out/results.jsonl" >&2
    done
  done
  if [ "${TORCH:-0}" = 1 ]; then  # the reference: the same BERT fine-tuned in PyTorch with the same recipe
    for seed in $seeds; do
      dir=$out/runs/$task-torch-bert-$seed
      start=$SECONDS
      acc=$(/usr/bin/python3 scripts/torch_classify.py --init-from "$out/bert" --data "$classify_data/$task-train.tsv" \
        --dev "$classify_data/$task-dev.tsv" --out "$dir" "${TUNE[@]}" --seed "$seed" 2>"$dir.log" |
        sed -n 's/.*"dev_accuracy": *\([0-9.eE+-]*\).*/\1/p')
      echo "{\"task\":\"$task\",\"row\":\"torch-bert\",\"seed\":$seed,\"dev_accuracy\":$acc,\"seconds\":$((SECONDS - start))}" |
        tee -a "$out/results.jsonl" >&2
    done
  fi
  rm -rf "${out:?}/$task"
  cp -r "$out/runs/$task-bert-${seeds%% *}" "$out/$task"
done

# 5. The table: mean ± sd (sample) over the seeds.
awk -F'[:,}"]+' '
  { for (i = 1; i < NF; i++) v[$i] = $(i + 1); k = v["task"] SUBSEP v["row"]
    if (!(k in n)) order[++m] = k; n[k]++; s[k] += v["dev_accuracy"]; q[k] += v["dev_accuracy"] ^ 2 }
  END { print "| task | start | dev accuracy (mean ± sd) | seeds |"; print "|---|---|---:|---:|"
        for (j = 1; j <= m; j++) { k = order[j]; split(k, p, SUBSEP); mean = s[k] / n[k]
          sd = n[k] > 1 ? sqrt((q[k] - n[k] * mean ^ 2) / (n[k] - 1)) : 0
          printf "| %s | %s | %.1f%% ± %.1f | %d |\n", p[1], p[2], 100 * mean, 100 * sd, n[k] } }' \
  "$out/results.jsonl" | tee "$out/results.md"
