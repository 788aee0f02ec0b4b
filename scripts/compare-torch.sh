#!/usr/bin/env bash
# Trains nanoGPT's small CPU recipe (4 layers, 4 heads, 128 wide, block 64, batch 12, lr 1e-3,
# 2000 steps, dropout 0) with potop and with the PyTorch reference (scripts/torch_train.py) on
# the same text and split, and prints both validation losses over the whole validation split.
#   bash scripts/compare-torch.sh [corpus]      # default: scripts/default-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-$(bash scripts/default-corpus.sh)}
steps=${STEPS:-2000}
threads=${THREADS:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
potop=build/release/src/potop
[ -x "$potop" ] || { cmake --preset release >/dev/null && cmake --build --preset release; }
recipe=(--n-layer 4 --n-head 4 --n-embd 128 --block-size 64 --batch-size 12 --lr 1e-3 --steps "$steps")
/usr/bin/python3 scripts/torch_train.py --data "$corpus" "${recipe[@]}" --threads "$threads" \
  --write-val "$out/val.txt" > "$out/torch.txt"
"$potop" train --data "$corpus" --out "$out/model" "${recipe[@]}" --dropout 0 --threads "$threads" 2> "$out/train.log"
"$potop" eval --model "$out/model" --data "$out/val.txt" --threads "$threads" --json > "$out/potop.json"
cat "$out/torch.txt"
/usr/bin/python3 -c "import json,sys; print('potop val loss (whole validation split, non-overlapping windows of 64): %.4f' % json.load(open(sys.argv[1]))['loss'])" "$out/potop.json"
