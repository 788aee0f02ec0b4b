#!/usr/bin/env bash
# potop export --format gguf: bad inputs (one line, exit 1, nothing written), then three tiny
# models trained here on generated Polish text — a char GPT, a SentencePiece BPE GPT (llama.cpp's
# gpt2) and a char Llama with grouped-query attention (llama.cpp's llama) — exported at f32, f16,
# q8_0 and q4_0 and run by the real llama.cpp through node-llama-cpp (tests/gguf, pinned): the same
# ids, log-probabilities and greedy continuation as potop (tests/gguf/export.test.mjs); for the
# Llama also the q8_0 file's greedy continuation against potop's own q8_0 model (potop quantize).
# Without node or tests/gguf/node_modules the llama.cpp part exits 77 (CTest's skip), or fails
# with POTOP_STRICT_SKIPS=1.
#
#   bash tests/cli/gguf_export.sh <path to potop>
POTOP=${1:-}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
GGUF_TESTS="$HERE/../gguf"

# Polish sentences with diacritics and 3-byte characters („ ” — …), deterministic.
/usr/bin/python3 - corpus.txt <<'PY'
import random, sys
rng = random.Random(26)
words = ("kmicic ruszył z kopyta a pan zagłoba zawołał żywo mości panowie litwo ojczyzno moja ty jesteś jak "
         "zdrowie ile cię trzeba cenić ten tylko się dowie kto cię stracił źrebię łąka gęś żółć "
         "Żmudź Świętosław").split()
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for _ in range(600):
        s = " ".join(rng.choice(words) for _ in range(rng.randint(4, 10)))
        r = rng.random()
        s = f"„{s.capitalize()}” — rzekł" if r < 0.15 else s.capitalize() + ("…" if r < 0.25 else ".")
        f.write(s + "\n")
PY
head -n 40 corpus.txt | tail -n 20 >lines.txt
PROMPT="Pan zagłoba zawołał — "
RUN=(--block-size 256 --batch-size 4 --eval-iters 2 --eval-interval 100 --log-interval 50 --threads 1 --dropout 0)
MODEL=(--n-layer 2 --n-head 2 --n-embd 32 "${RUN[@]}")
# 4 query heads of 16 sharing 2 K/V heads; 64 wide and a SwiGLU of 192 (8/3 · 64 rounded up to 32),
# so that every matrix is whole q8_0/q4_0 blocks.
LLAMA=(--arch llama --n-layer 2 --n-head 4 --n-kv-head 2 --n-embd 64 "${RUN[@]}")
MODELS=(char bpe llama)

"$POTOP" train --data corpus.txt --out char --steps 100 "${MODEL[@]}" 2>char.log ||
  { cat char.log >&2; fail "train (char) exited non-zero"; finish; }
"$POTOP" tokenizer train --kind bpe --vocab-size 400 --data corpus.txt --out tok 2>tok.log ||
  { cat tok.log >&2; fail "tokenizer train (bpe) exited non-zero"; finish; }
"$POTOP" train --data corpus.txt --tokenizer tok --out bpe --steps 100 "${MODEL[@]}" 2>bpe.log ||
  { cat bpe.log >&2; fail "train (bpe) exited non-zero"; finish; }
"$POTOP" train --data corpus.txt --out llama --steps 100 "${LLAMA[@]}" 2>llama.log ||
  { cat llama.log >&2; fail "train (llama) exited non-zero"; finish; }
"$POTOP" quantize -m llama --type q8_0 >/dev/null 2>llama-quantize.log ||
  { cat llama-quantize.log >&2; fail "quantize (llama) exited non-zero"; finish; }

for m in "${MODELS[@]}"; do
  mkdir -p "gguf-$m"
  for type in f32 f16 q8_0 q4_0; do
    if "$POTOP" export -m "$m" --format gguf --type "$type" --out "gguf-$m/$type.gguf" 2>"export-$m-$type.log" &&
        [ "$(head -c 4 "gguf-$m/$type.gguf")" = GGUF ]; then
      ok "export $m --type $type: $(tail -n 1 "export-$m-$type.log")"
    else
      fail "export $m --type $type: $(cat "export-$m-$type.log")"
    fi
  done
done

# Bad inputs: one line, exit 1, nothing written.
no_file() {  # no_file <name> <path>: nothing (not even a temporary file) was left
  if compgen -G "$2*" >/dev/null; then fail "$1: left $(ls -d "$2"*)"; fi
}
expect_error "export --type q3_k" 1 strict "--type" "q3_k" -- export -m char --format gguf --type q3_k --out x.gguf
no_file "export --type q3_k" x.gguf
expect_error "export --out in a missing directory" 1 strict "missing/dir" -- export -m char --format gguf --out missing/dir/x.gguf
make_pairs pairs.tsv 60
if "$POTOP" translate train --data pairs.tsv --out tr --steps 2 "${TINY_TRANSLATE[@]}" >tr.log 2>&1; then
  expect_error "export an encoder-decoder model" 1 log "exporting a kind the format cannot hold" -- \
    export -m tr --format gguf --out x.gguf
  no_file "export an encoder-decoder model" x.gguf
else
  fail "translate train exited non-zero: $(tail -n 1 tr.log)"
fi
# An existing --out is not export's to replace: refused without --force; a model's own file (here
# its best.safetensors) is refused even with it.
printf 'my notes\n' >notes.txt
cp char/best.safetensors char-best.before
expect_error "export --out an existing file" 1 strict "--out notes.txt: exists" "--force" -- \
  export -m char --format gguf --out notes.txt
[ "$(cat notes.txt)" = "my notes" ] && ok "export: notes.txt untouched" || fail "export replaced notes.txt"
expect_error "export --out a model's file, --force" 1 strict "--out char/best.safetensors" "a model's directory" -- \
  export -m char --format gguf --out char/best.safetensors --force
cmp -s char/best.safetensors char-best.before && "$POTOP" sample -m char -n 5 >/dev/null 2>&1 &&
  ok "export: the model's best.safetensors untouched, the model loads" || fail "export replaced char/best.safetensors"
"$POTOP" export -m char --format gguf --out notes.txt --force 2>/dev/null && [ "$(head -c 4 notes.txt)" = GGUF ] &&
  ok "export --force replaces a file outside a model directory" || fail "export --force over notes.txt"
expect_error "export --format hf --force" 1 strict "--force: --format hf" -- export -m char --format hf --out hf-force --force
no_file "export --format hf --force" hf-force
expect_error "export without -m" 2 strict "--model" -- export --format gguf --out x.gguf
expect_error "export --format hf --type q8_0" 1 strict "--type q8_0" "float32 weights only" -- \
  export -m char --format hf --type q8_0 --out hf-q8
no_file "export --format hf --type q8_0" hf-q8
if "$POTOP" export -m char --format hf --out hf-char >/dev/null 2>&1 && [ -f hf-char/config.json ] &&
  [ -f hf-char/model.safetensors ]; then ok "export --format hf writes a GPT-2 directory"
else fail "export --format hf"; fi
# potop imports its own export of a character model back: the same tokens, the same text.
if "$POTOP" import hf-char --out char-back >import-char.log 2>&1 &&
    [ "$("$POTOP" sample -m char-back -p "pan " -n 40 --temperature 0 2>/dev/null)" = \
      "$("$POTOP" sample -m char -p "pan " -n 40 --temperature 0 2>/dev/null)" ] &&
    [ -f char-back/vocab.json ]; then
  ok "import of potop's own HF export of a char model: the same greedy text"
else fail "import of the char model's HF export: $(tail -n 2 import-char.log)"; fi
if "$POTOP" export -m llama --format hf --out hf-llama >/dev/null 2>&1 &&
  grep -q '"model_type": "llama"' hf-llama/config.json && [ -f hf-llama/model.safetensors ]; then
  ok "export --format hf writes a Llama directory"
else fail "export --format hf (llama)"; fi
head -c 100 gguf-char/f32.gguf >truncated.gguf
expect_error "sample -m truncated.gguf" 1 log "truncated.gguf: a GGUF file" -- sample -m truncated.gguf -n 5
printf 'not a model at all' >garbage.gguf
expect_error "sample -m garbage.gguf" 1 log "garbage.gguf: a GGUF file" -- sample -m garbage.gguf -n 5
expect_error "sample -m an exported .gguf" 1 log "f32.gguf: a GGUF file" -- sample -m gguf-char/f32.gguf -n 5

# potop import reads every file back (checkpoint/gguf_import.h): the imported model exported again
# is the same file byte for byte (q8_0 and q4_0 matrices kept as they were), its tokenizer gives
# the model's ids, and it continues a prompt as the model does. general.name is the directory's
# name, so the imported model's directory is named as the model's.
for m in "${MODELS[@]}"; do
  for type in f32 f16 q8_0 q4_0; do
    mkdir -p "back-$type"
    if "$POTOP" import "gguf-$m/$type.gguf" --out "back-$type/$m" >"import-$m-$type.log" 2>&1 &&
        "$POTOP" export -m "back-$type/$m" --format gguf --type "$type" --out "again-$m-$type.gguf" 2>/dev/null &&
        cmp -s "gguf-$m/$type.gguf" "again-$m-$type.gguf"; then
      ok "import $m $type, export again: the same file ($(wc -c <"again-$m-$type.gguf") bytes)"
    else
      fail "import $m $type and export again: not the same file ($(tail -n 1 "import-$m-$type.log"))"
    fi
  done
  "$POTOP" tokenizer encode -t "$m" --whole <corpus.txt >"ids-$m.txt" 2>&1
  "$POTOP" tokenizer encode -t "back-f32/$m" --whole <corpus.txt >"ids-back-$m.txt" 2>&1
  cmp -s "ids-$m.txt" "ids-back-$m.txt" && [ -s "ids-$m.txt" ] &&
    ok "import $m: the file's tokenizer ($(sed -n 's/.*tokenizer \([a-z_]*\),.*/\1/p' "import-$m-f32.log")) gives the model's ids" ||
    fail "import $m: the tokenizer's ids differ from the model's"
  a=$("$POTOP" sample -m "$m" -p "$PROMPT" -n 40 --temperature 0 --threads 1 2>/dev/null)
  b=$("$POTOP" sample -m "back-f32/$m" -p "$PROMPT" -n 40 --temperature 0 --threads 1 2>/dev/null)
  [ -n "$a" ] && [ "$a" = "$b" ] && ok "import $m: the same greedy continuation" ||
    fail "import $m: greedy continuations differ: '$a' / '$b'"
done
expect_error "import a truncated GGUF" 1 strict "truncated.gguf" "cut short" -- import truncated.gguf --out back-truncated
no_file "import a truncated GGUF" back-truncated
expect_error "import over an existing directory" 1 strict "--out char" "exists" -- import gguf-char/f32.gguf --out char

if [ "$FAILURES" -gt 0 ]; then finish; fi
if [ ! -d "$GGUF_TESTS/node_modules" ] || ! command -v node >/dev/null; then
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "node or $GGUF_TESTS/node_modules missing: run scripts/setup.sh --all"; finish; fi
  echo "skip llama.cpp checks (node or tests/gguf/node_modules missing: run scripts/setup.sh --all)"
  exit 77
fi

for m in "${MODELS[@]}"; do
  start_serve "serve-$m.log" --model "$m" --threads 1
  extra=(--loads f16,q8_0,q4_0)
  if [ "$m" = llama ]; then extra+=(--greedy q8_0=llama-q8_0); fi
  if node --test-reporter=tap "$GGUF_TESTS/export.test.mjs" "$POTOP" "$m" "gguf-$m" "http://127.0.0.1:$PORT" \
      "$PROMPT" lines.txt "${extra[@]}" >"node-$m.log" 2>&1; then
    ok "llama.cpp runs the $m model as potop does: $(grep '^# compared' "node-$m.log" | head -n 1)"
  else
    cat "node-$m.log" >&2
    fail "llama.cpp on the $m model (node-$m.log above)"
  fi
  grep '^# ' "node-$m.log" | grep -v '^# \(tests\|suites\|pass\|fail\|cancelled\|skipped\|todo\|duration_ms\)' || true
  kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
done
finish
