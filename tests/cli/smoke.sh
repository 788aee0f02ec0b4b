#!/usr/bin/env bash
# Smoke test of the CLI: a few dozen training steps on multilingual text, greedy sampling
# twice (identical output), sample's timings, sampling from a lone weights file, evaluation, and
# a prompt the model cannot encode.
set -euo pipefail
potop=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for i in $(seq 1 150); do
  echo "Litwo! Ojczyzno moja! ty jesteś jak zdrowie. Мой дядя самых честных правил. 床前明月光 🙂 $i"
done > "$dir/text.txt"

"$potop" train --data "$dir/text.txt" --out "$dir/model" --steps 40 --eval-interval 20 --eval-iters 2 \
  --n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --threads 2 2> "$dir/train.log" ||
  { cat "$dir/train.log"; fail "train exited non-zero"; }
grep -q "parameters" "$dir/train.log" || fail "train did not print the parameter count"
grep -q "memory: about" "$dir/train.log" || fail "train did not print how much memory it plans to use"
for f in config.json vocab.json latest.safetensors best.safetensors metrics.jsonl; do
  [ -s "$dir/model/$f" ] || fail "model directory lacks $f"
done

a=$("$potop" sample --model "$dir/model" --prompt "Litwo" --tokens 60 --temperature 0 --seed 1)
b=$("$potop" sample --model "$dir/model" --prompt "Litwo" --tokens 60 --temperature 0 --seed 2)
[ "$a" = "$b" ] || fail "temperature 0 gave different text: '$a' vs '$b'"
[[ "$a" == Litwo* ]] || fail "sample output does not start with the prompt: '$a'"
[ "$(printf '%s' "$a" | wc -m)" -eq 65 ] || fail "expected 5 prompt + 60 generated characters, got '$a'"

# --json times the prompt's reading (up to the first new token) apart from the generation after
# it, per sample and over all; --profile adds the kernels' table.
"$potop" sample --model "$dir/model" --prompt "Litwo! Ojczyzno" --tokens 20 --num-samples 2 --json --profile \
  > "$dir/sample.json" 2> "$dir/sample.log" || fail "sample --json --profile exited non-zero"
/usr/bin/python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['prompt_tokens'] == 15 and r['prompt_seconds'] > 0, r
assert r['prompt_tokens_per_s'] > 0 and r['generation_tokens_per_s'] > 0, r
for s in r['samples']:
    assert s['tokens'] == 20 and s['prompt_seconds'] > 0 and s['generation_tokens_per_s'] > 0, s
" "$dir/sample.json" || fail "sample --json lacks the phases' times: $(cat "$dir/sample.json")"
grep -q "the prompt's 15 tokens" "$dir/sample.log" || fail "sample did not report the prompt's time: $(cat "$dir/sample.log")"
grep -q "lm head" "$dir/sample.log" || fail "sample --profile printed no kernel table: $(cat "$dir/sample.log")"

# --kv-cache f16 keeps keys and values as halves (llama.cpp's default): a sample of its own, and an
# unknown type is refused naming the flag.
h=$("$potop" sample --model "$dir/model" --prompt "Litwo" --tokens 60 --temperature 0 --kv-cache f16) \
  || fail "sample --kv-cache f16 exited non-zero"
[ "$(printf '%s' "$h" | wc -m)" -eq 65 ] || fail "sample --kv-cache f16 gave '$h'"
if "$potop" sample --model "$dir/model" --prompt "Litwo" --kv-cache f8 2> "$dir/err.log"; then
  fail "--kv-cache f8 was accepted"
fi
grep -q -- "--kv-cache must be f32 or f16" "$dir/err.log" || fail "--kv-cache f8 gave: $(cat "$dir/err.log")"

# A weights file carries its config and tokenizer: alone, away from its directory, it gives the
# same text as the directory does with it.
mkdir "$dir/alone" && cp "$dir/model/best.safetensors" "$dir/alone/"
c=$("$potop" sample --model "$dir/alone/best.safetensors" --prompt "Litwo" --tokens 60 --temperature 0)
[ "$c" = "$a" ] || fail "a lone weights file gave '$c', its model directory '$a'"

"$potop" eval --model "$dir/model" --data "$dir/text.txt" --json > "$dir/eval.json"
/usr/bin/python3 -c "
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r['tokens'] > 1000 and math.isfinite(r['loss']) and r['loss'] > 0, r
assert abs(r['perplexity'] - math.exp(r['loss'])) < 1e-6 * r['perplexity'], r
" "$dir/eval.json" || fail "eval output is wrong: $(cat "$dir/eval.json")"

if "$potop" sample --model "$dir/model" --prompt "Ω" --tokens 5 2> "$dir/err.log"; then
  fail "a prompt with an unknown character was accepted"
fi
grep -q -- "--prompt contains 'Ω' (U+03A9)" "$dir/err.log" || fail "unclear error: $(cat "$dir/err.log")"
echo "cli smoke: ok"
