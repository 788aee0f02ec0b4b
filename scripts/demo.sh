#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine: install what potop needs, build it, train a
# small character-level GPT on the default corpus for a few minutes, and generate text.
#   bash scripts/demo.sh            # STEPS=2000 by default
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release
corpus=$(bash scripts/default-corpus.sh)
potop=build/release/src/potop
# nanoGPT's small character-level recipe (4 layers, 4 heads, 128 wide, block 64, batch 12).
# --force: a demo run replaces the previous demo's model.
$potop train --data "$corpus" --out runs/demo --steps "${STEPS:-2000}" --force \
  --n-layer 4 --n-head 4 --n-embd 128 --block-size 64 --batch-size 12 --lr 1e-3 --dropout 0
echo
echo "=== potop sample --model runs/demo --prompt 'Pan ' --tokens 600 ==="
$potop sample --model runs/demo --prompt "Pan " --tokens 600 --temperature 0.8 --seed 1
