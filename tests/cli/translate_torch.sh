#!/usr/bin/env bash
# The PyTorch reference trainer (scripts/torch_translate_train.py) against potop translate train
# on the same run: started from potop's train state at step 6 (weights, Adam's moments and step
# count), it must draw the same batches, follow the same schedule and clipping, and log the same
# training losses for steps 7..12 and the same train/dev losses at the final evaluation (dropout
# 0, label smoothing 0.1, the noam schedule). The weights it ends with, saved as a potop model
# directory (--save-dir), must translate the test sentences as potop's own step-12 model does. A
# fresh PyTorch run must then train and report dev BLEU and chrF.
POTOP=$1
PYTHON=$2
SCRIPTS=$3
source "$(dirname "$0")/lib.sh"

words=(kot pies dom las rzeka góra morze niebo)
seed=7
: >pairs.tsv
for ((i = 0; i < 300; i++)); do
  seed=$(((seed * 1103515245 + 12345) % 2147483648))
  n=$((2 + (seed >> 8) % 4))
  line=()
  for ((k = 0; k < n; k++)); do
    seed=$(((seed * 1103515245 + 12345) % 2147483648))
    line+=("${words[$(((seed >> 8) % 8))]}")
  done
  printf '%s\t%s\n' "${line[*]}" "${line[*]}" >>pairs.tsv
done

"$POTOP" translate train --data pairs.tsv --out m --columns fwd,rev --source fwd --target rev --vocab-size 300 \
  --n-layer 2 --n-head 2 --n-embd 32 --block-size 12 --norm pre --dropout 0 --label-smoothing 0.1 \
  --batch-tokens 120 --lr-schedule noam --lr 1 --warmup 10 --eval-interval 12 --eval-sentences 5 --log-interval 1 \
  --dev-size 30 --test-size 10 --steps 12 --keep 6 --threads 1 2>train.log || fail "potop translate train: $(tail -3 train.log)"

if "$PYTHON" "$SCRIPTS/torch_translate_train.py" --dir m --potop "$POTOP" --init m/step-000006.safetensors \
     --metrics torch.jsonl --save-dir torch-model >torch.log 2>&1; then
  ok "torch reference trainer resumed from potop's step 6"
else
  fail "torch reference trainer: $(tail -5 torch.log)"
fi
# Compare steps 7..12 and the step-12 evaluation, relative 1e-4 (float32 sums in another order).
if "$PYTHON" - m/metrics.jsonl torch.jsonl >compare.txt 2>&1 <<'PY'
import json, sys
def records(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r["kind"] == "train" and r["step"] > 6:
            out[("train", r["step"])] = r["loss"]
        elif r["kind"] == "eval" and r["step"] == 12:
            out[("eval", 12)] = (r["train_loss"], r["val_loss"])
    return out
potop, torch = records(sys.argv[1]), records(sys.argv[2])
assert len(potop) == 7 and set(potop) == set(torch), (sorted(potop), sorted(torch))
for key in sorted(potop):
    a, b = potop[key], torch[key]
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        assert abs(x - y) <= 1e-4 * abs(x), (key, x, y)
    print(key, a, b)
PY
then
  ok "same losses at steps 7..12 and the same train/dev loss at step 12"
else
  fail "losses differ: $(cat compare.txt)"
fi

# potop's search and metrics on the PyTorch weights: the same translations as potop's own weights.
"$POTOP" translate eval --model m --checkpoint latest --data m/test.tsv --threads 1 >eval-potop.txt 2>&1
"$POTOP" translate eval --model torch-model --data m/test.tsv --threads 1 >eval-torch.txt 2>&1
if [ -f torch-model/latest.safetensors ] && grep -q '^BLEU' eval-potop.txt \
   && [ "$(grep -E '^(BLEU|chrF)' eval-potop.txt)" = "$(grep -E '^(BLEU|chrF)' eval-torch.txt)" ]; then
  ok "--save-dir: potop translate eval scores the PyTorch weights as it scores its own"
else
  fail "--save-dir: potop $(cat eval-potop.txt) / torch $(cat eval-torch.txt)"
fi

if "$PYTHON" "$SCRIPTS/torch_translate_train.py" --dir m --potop "$POTOP" --steps 8 --eval-interval 8 >fresh.log 2>&1 \
   && grep -q '"kind": "eval", "step": 8, .*"dev_bleu": [0-9.]*, "dev_chrf": [0-9.]*' fresh.log \
   && grep -q '"kind": "done"' fresh.log; then
  ok "fresh torch run: 8 steps, dev loss, BLEU and chrF"
else
  fail "fresh torch run: $(tail -3 fresh.log)"
fi
finish
