#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install what potop needs (not what its tests add:
# scripts/test.sh does that), build the potop binary alone, train a small character-level GPT on
# the default corpus for a few minutes, and generate text. Each stage says how long it took.
#   bash scripts/demo.sh            # STEPS=2000 by default
# scripts/demo-bare.sh times it on a bare Debian 12 (README gives the figure).
set -euo pipefail
cd "$(dirname "$0")/.."
stage() { echo "demo: $1 in $((SECONDS - started)) s"; started=$SECONDS; }
started=$SECONDS
bash scripts/setup.sh
stage "packages ready"
cmake --preset release >/dev/null
cmake --build --preset release --target potop
stage "potop built"
corpus=$(bash scripts/default-corpus.sh)
potop=build/release/src/potop
# nanoGPT's small character-level recipe (4 layers, 4 heads, 128 wide, block 64, batch 12).
# --force: a demo run replaces the previous demo's model.
$potop train --data "$corpus" --out runs/demo --steps "${STEPS:-2000}" --force \
  --n-layer 4 --n-head 4 --n-embd 128 --block-size 64 --batch-size 12 --lr 1e-3 --dropout 0
stage "trained"
echo
echo "=== potop sample --model runs/demo --prompt 'Pan ' --tokens 600 ==="
$potop sample --model runs/demo --prompt "Pan " --tokens 600 --temperature 0.8 --seed 1
echo "demo: done in $SECONDS s"
