#!/usr/bin/env bash
# Pre-train on Potop, fine-tune on another Polish text (the fortunes-pl corpus of
# scripts/default-corpus.sh), and compare with a model trained on that text alone for the same
# number of steps: `bash scripts/finetune-demo.sh [RUNS_DIR]` (default runs/finetune-demo).
# README's fine-tuning table comes from this script; about 7 minutes on 2 cores.
#
# The three models are scored by `potop eval` on the same text, so their bits/char compare: the
# last 5% of the fortunes corpus without the characters Potop's vocabulary lacks (the
# pre-trained model cannot represent them, and the fine-tuned one keeps its vocabulary), cut out
# with Debian's /usr/bin/python3 (scripts/setup.sh --all installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
potop=${POTOP:-build/release/src/potop}
runs=${1:-runs/finetune-demo}
novel=../shared/data/potop.txt
[ -f "$novel" ] || { echo "finetune-demo: needs $novel (the pre-training text)" >&2; exit 1; }
[ -x "$potop" ] || { echo "finetune-demo: build potop first (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
mkdir -p "$runs"
fortunes=$(POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR="$runs" bash scripts/default-corpus.sh)
common=(--threads 2 --force)

"$potop" train --data "$novel" --out "$runs/base" --steps 2000 "${common[@]}"
# A fresh AdamW and schedule at a tenth of the pre-training rate; characters outside Potop's
# vocabulary (mostly e-mail quoting: '>', '<', '@', '_') are left out of the new text.
"$potop" train --init-from "$runs/base" --data "$fortunes" --out "$runs/tuned" --steps 1000 \
  --lr 3e-4 --min-lr 3e-5 --warmup 50 --unknown skip "${common[@]}"
"$potop" train --data "$fortunes" --out "$runs/scratch" --steps 1000 "${common[@]}"

# The held-out text: the last 5% of the corpus (inside every model's validation split), only
# the characters of the pre-trained vocabulary.
held_out=$runs/held-out.txt
/usr/bin/python3 - "$runs/base/vocab.json" "$fortunes" "$held_out" <<'EOF'
import json, sys
vocab, corpus, out = sys.argv[1:]
known = set(json.load(open(vocab, encoding="utf-8")))
text = open(corpus, encoding="utf-8").read()
tail = text[int(len(text) * 0.95):]
open(out, "w", encoding="utf-8").write("".join(c for c in tail if c in known))
EOF

printf '\n%-9s %s\n' model "bits/char on $held_out"
for m in base tuned scratch; do
  printf '%-9s ' "$m"
  "$potop" eval -m "$runs/$m" --data "$held_out" --threads 2 2>&1 | grep -o 'bits/char [0-9.]*'
done
