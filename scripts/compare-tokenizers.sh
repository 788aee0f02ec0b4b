#!/usr/bin/env bash
# Character vs BPE on Potop at about the same parameter count and the same wall-clock budget:
# `bash scripts/compare-tokenizers.sh [SECONDS] [RUNS_DIR]` (default 180 s per model,
# runs/compare-tokenizers). README's tokenizer table comes from this script.
#
# The novel's last 10% (by characters) is held out and never seen by the BPE trainer or either
# model; both are scored on it by `potop eval` in bits per character, the unit that compares
# across tokenizers. Python (Debian's /usr/bin/python3) only cuts text and reads JSON. Each model trains for as many steps as fit in the budget, measured by a
# short timing run of the same model first (the schedule needs the step count up front).
set -euo pipefail
cd "$(dirname "$0")/.."
potop=${POTOP:-build/release/src/potop}
budget=${1:-180}
runs=${2:-runs/compare-tokenizers}
novel=../shared/data/potop.txt
[ -f "$novel" ] || { echo "compare-tokenizers: needs $novel" >&2; exit 1; }
[ -x "$potop" ] || { echo "compare-tokenizers: build potop first" >&2; exit 1; }
mkdir -p "$runs"

# Split by characters (code points), not bytes.
/usr/bin/python3 - "$novel" "$runs/train.txt" "$runs/held-out.txt" <<'EOF'
import sys
novel, train, held = sys.argv[1:]
text = open(novel, encoding="utf-8").read()
cut = int(len(text) * 0.9)
open(train, "w", encoding="utf-8").write(text[:cut])
open(held, "w", encoding="utf-8").write(text[cut:])
EOF

"$potop" tokenizer train --kind char --data "$runs/train.txt" --out "$runs/tok-char" --force
"$potop" tokenizer train --kind bpe --vocab-size 2048 --data "$runs/train.txt" --out "$runs/tok-bpe" --force
# Both models score the same characters: the held-out text without the few the char vocabulary
# lacks (letters seen only in the last 10%; the bpe model would spell them out in bytes).
/usr/bin/python3 - "$runs/tok-char/vocab.json" "$runs/held-out.txt" <<'EOF'
import json, sys
vocab, held = sys.argv[1:]
known = set(json.load(open(vocab, encoding="utf-8")))
text = open(held, encoding="utf-8").read()
open(held, "w", encoding="utf-8").write("".join(c for c in text if c in known))
EOF

# Same width and batch; the BPE model gives one of the char model's four layers to its larger
# embedding table (2048 × 128), which keeps the parameter counts within a few percent.
declare -A shape=([char]="--n-layer 4" [bpe]="--n-layer 3")
common=(--n-head 4 --n-embd 128 --block-size 64 --batch-size 12 --threads 2 --force
        --eval-interval 1000000 --eval-iters 20)

steps_in_budget() { # kind -> steps that fit in $budget seconds, from the tokens/s of 50 steps
  local kind=$1
  "$potop" train --data "$runs/train.txt" --tokenizer "$runs/tok-$kind" ${shape[$kind]} \
    "${common[@]}" --steps 50 --out "$runs/timing-$kind" --json 2>/dev/null |
    /usr/bin/python3 -c "import json, sys; print(int($budget * json.load(sys.stdin)['tokens_per_s'] / (12 * 64)))"
}

printf '%-5s %8s %7s %10s %10s %10s\n' kind params steps tokens/s chars/s bits/char > "$runs/table.txt"
for kind in char bpe; do
  steps=$(steps_in_budget "$kind")
  "$potop" train --data "$runs/train.txt" --tokenizer "$runs/tok-$kind" ${shape[$kind]} \
    "${common[@]}" --steps "$steps" --out "$runs/$kind" --json > "$runs/$kind.json" 2> "$runs/$kind.log"
  "$potop" eval -m "$runs/$kind" --data "$runs/held-out.txt" --threads 2 --json > "$runs/$kind-eval.json"
  "$potop" info -m "$runs/$kind" --json > "$runs/$kind-info.json"
  /usr/bin/python3 - "$kind" "$steps" "$runs/$kind" >> "$runs/table.txt" <<'EOF'
import json, sys
kind, steps, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
run, ev, info = (json.load(open(f"{base}{suffix}.json")) for suffix in ("", "-eval", "-info"))
tokens_per_s = run["tokens_per_s"]
chars_per_token = ev["characters"] / ev["tokens"]
print(f"{kind:5} {info['parameters']:8d} {steps:7d} {tokens_per_s:10.0f} {tokens_per_s * chars_per_token:10.0f} {ev['bits_per_char']:10.4f}")
EOF
done
cat "$runs/table.txt"
