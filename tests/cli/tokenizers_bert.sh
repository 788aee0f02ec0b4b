#!/usr/bin/env bash
# BERT's tokenizer in potop (wordpiece): `potop tokenizer import` of bert-base-uncased's real
# vocab.txt and of its tokenizer.json (../shared/data/tokenizers), whose ids must equal Hugging
# Face's tokenizers in JavaScript (npm @huggingface/tokenizers, pinned in tests/tokenizers) on
# megabytes of text (a mix of scripts, emoji, code and whitespace from
# tests/tokenizers/varied_text.mjs; ../shared's Potop, the Tatoeba pairs and the SST-2 and TREC
# sentences), and whose decoding of those ids must be the reference's; special tokens written in a
# text; a GPT trained and sampled with it; broken files refused with one line.
# Two groups, a CTest entry each: main (everything but Potop) and long (Potop and the Tatoeba
# pairs, 5.4 MB: CTest label "long", which scripts/test.sh runs only when asked).
#   tokenizers_bert.sh <potop> [main|long]   (no group: both)
POTOP=$1 GROUP=${2:-}
REF=$(cd "$(dirname "$0")/../tokenizers" && pwd)
SHARED=$(cd "$(dirname "$0")/../../.." && pwd)/shared/data
BERT=$SHARED/tokenizers/bert-base-uncased
source "$(dirname "$0")/lib.sh"
case $GROUP in "" | main | long) ;; *) fail "unknown group '$GROUP'"; finish ;; esac
want() { [ -z "$GROUP" ] || [ "$GROUP" = "$1" ]; }

if [ ! -d "$REF/node_modules/@huggingface/tokenizers" ] || ! command -v node >/dev/null; then
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "node or tests/tokenizers/node_modules missing: run scripts/setup.sh --all"
  else echo "skip the comparison with @huggingface/tokenizers (run scripts/setup.sh --all)"; fi
  finish
  exit 0
fi
if [ ! -f "$BERT/vocab.txt" ]; then
  echo "skip: $BERT is not there (../shared)"
  finish
  exit 0
fi

"$POTOP" tokenizer import --vocab "$BERT/vocab.txt" --out bert 2>import.log &&
  grep -q "a wordpiece tokenizer of 30522 tokens" import.log && [ -f bert/vocab.txt ] && [ -f bert/wordpiece.json ] &&
  ok "tokenizer import --vocab vocab.txt: $(cat import.log)" || fail "import: $(cat import.log)"
"$POTOP" tokenizer import --hf-json "$BERT/tokenizer.json" --out bertjson 2>import2.log &&
  ok "tokenizer import --hf-json tokenizer.json: $(cat import2.log)" || fail "import --hf-json: $(cat import2.log)"
cmp -s bert/wordpiece.json bertjson/wordpiece.json && cmp -s bert/vocab.txt bertjson/vocab.txt &&
  ok "vocab.txt with tokenizer_config.json and tokenizer.json give the same tokenizer" ||
  fail "the two imports differ: $(diff bert/wordpiece.json bertjson/wordpiece.json | head -5)"
# What it writes imports again.
"$POTOP" tokenizer import --vocab bert/vocab.txt --out again 2>/dev/null &&
  printf 'Hello, World!\n' | "$POTOP" tokenizer encode --tokenizer again | grep -qx '7592 1010 2088 999' &&
  ok "its vocab.txt imports again" || fail "re-import of the written vocab.txt"

compare() {  # compare <name> <file>: whole-text ids equal the reference's; both decode them alike
  local name=$1 file=$2
  node "$REF/hf_tokenizer_reference.mjs" encode "$BERT" "$file" >ref.ids
  "$POTOP" tokenizer encode --whole --unknown replace --tokenizer bert <"$file" >potop.ids
  if cmp -s ref.ids potop.ids; then ok "$name: $(wc -c <"$file") bytes, $(wc -w <potop.ids) tokens, the ids @huggingface/tokenizers gives"
  else fail "$name: ids differ from @huggingface/tokenizers': $(cmp ref.ids potop.ids)"; return; fi
  node "$REF/hf_tokenizer_reference.mjs" decode "$BERT" potop.ids >ref-back.txt
  "$POTOP" tokenizer decode --tokenizer bert <potop.ids >back.txt
  { cat ref-back.txt; echo; } >ref-back-nl.txt
  cmp -s ref-back-nl.txt back.txt && ok "$name: decode gives the reference's text" ||
    fail "$name: decode differs from the reference's: $(cmp ref-back-nl.txt back.txt)"
}
if want long && [ -f "$SHARED/potop.txt" ]; then
  cat "$SHARED/potop.txt" "$SHARED/tatoeba-eng-pol.tsv" >potop.txt
  compare "Potop and the Tatoeba pairs" potop.txt
fi
if ! want main; then finish; exit 0; fi
node "$REF/varied_text.mjs" 1500000 >varied.txt
compare "scripts, emoji, code and whitespace" varied.txt
if [ -f "$SHARED/potop.txt" ]; then
  cat "$SHARED"/classify/sst2-*.tsv "$SHARED"/classify/trec-*.tsv >classify.txt
  compare "the SST-2 and TREC sentences" classify.txt
fi
printf 'ΣΑΣ ΟΔΟΣ İstanbul Ünïcödé\n' >cases.txt
compare "final sigma, dotted capital I, accents" cases.txt

# Special tokens written in a text are kept whole; [CLS] and [SEP] decode to nothing.
printf '[CLS] the [MASK] sat.[SEP]\n' | "$POTOP" tokenizer encode --tokenizer bert >special.ids &&
  [ "$(cat special.ids)" = "101 1996 103 2938 1012 102" ] && ok "[CLS] [MASK] [SEP] in a text are 101, 103, 102" ||
  fail "special tokens: $(cat special.ids)"
[ "$(printf '101 1996 103 2938 1012 102\n' | "$POTOP" tokenizer decode --tokenizer bert)" = "the [MASK] sat." ] &&
  ok "decode drops [CLS] and [SEP] and closes up the full stop" || fail "decode of specials"
printf 'playing unaffable\n' | "$POTOP" tokenizer encode --tokenizer bert --pieces | grep -qx 'playing una ##ffa ##ble' &&
  ok "--pieces spells ## pieces as vocab.txt does" || fail "--pieces"
rc=0; printf 'ok 🙂\n' | "$POTOP" tokenizer encode --tokenizer bert >/dev/null 2>unk.log || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <unk.log)" = 1 ] && grep -q 'the word "🙂" is outside the vocabulary' unk.log &&
  ok "a word the vocabulary cannot spell is refused by default: $(cat unk.log)" || fail "unknown word: rc $rc, $(cat unk.log)"
[ "$(printf 'ok 🙂\n' | "$POTOP" tokenizer encode --tokenizer bert --unknown replace)" = "7929 100" ] &&
  ok "--unknown replace makes it [UNK] (100)" || fail "--unknown replace"

# A GPT trained and sampled with it.
head -c 20000 "${SHARED}/potop.txt" >small.txt 2>/dev/null || head -c 20000 varied.txt >small.txt
if "$POTOP" train --data small.txt --tokenizer bert --out model --n-layer 1 --n-head 2 --n-embd 16 --block-size 32 \
    --batch-size 2 --steps 3 --eval-interval 3 --eval-iters 1 --threads 1 >train.log 2>&1; then
  ok "train --tokenizer (wordpiece, 30522 tokens)"
  "$POTOP" sample -m model -p "hello" -n 5 --seed 1 >sample.txt 2>sample.log && [[ "$(cat sample.txt)" == hello* ]] &&
    ok "sample: $(head -c 60 sample.txt | tr '\n' ' ')" || fail "sample: $(cat sample.log)"
else
  fail "train --tokenizer bert: $(tail -n 3 train.log)"
fi

# Broken files: one line naming the file and what is wrong.
grep -v '^\[UNK\]$' "$BERT/vocab.txt" >nounk.txt
{ cat "$BERT/vocab.txt"; echo "the"; } >dup.txt
node -e 'const t=require(process.argv[1]); t.model.type="Unigram"; require("fs").writeFileSync("unigram.json", JSON.stringify(t))' "$BERT/tokenizer.json"
expect_error "a vocabulary without [UNK]" 1 strict "nounk.txt" "[UNK]" -- tokenizer import --vocab nounk.txt --out x
expect_error "a token listed twice" 1 strict "dup.txt" "appears twice" -- tokenizer import --vocab dup.txt --out x
expect_error "a tokenizer.json of another model" 1 strict "unigram.json" "Unigram" -- tokenizer import --hf-json unigram.json --out x
expect_error "a missing vocab.txt" 1 strict "missing.txt" -- tokenizer import --vocab missing.txt --out x
expect_error "a Hugging Face directory given as --tokenizer" 1 strict "tokenizer.json" "potop tokenizer import --hf-json" -- tokenizer encode --tokenizer "$BERT"
[ ! -e x ] && ok "nothing written by the refused imports" || fail "a refused import wrote x"
finish
