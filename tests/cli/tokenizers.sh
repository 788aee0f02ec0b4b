#!/usr/bin/env bash
# potop tokenizer train|encode|decode|import, a GPT trained with a bpe and a byte tokenizer
# directory and then sampled and evaluated, and the bad inputs of the tokenizer commands.
#   tokenizers.sh <potop> [train|models|errors]   (no group: all of them)
POTOP=$1
GROUP=${2:-all}
SCRIPTS=$(cd "$(dirname "$0")/../../scripts" && pwd)  # before lib.sh moves to a temporary directory
source "$(dirname "$0")/lib.sh"

python3 "$SCRIPTS/multilingual-text.py" 120000 3 >train.txt
python3 "$SCRIPTS/multilingual-text.py" 8000 4 >held.txt
# Text none of the tokenizers saw: other scripts, emoji sequences, odd spacing.
cat >unseen.txt <<'EOF'
Zażółć gęślą jaźń — Źdźbło!
Съешь же ещё этих мягких французских булок, да выпей чаю.
我能吞下玻璃而不伤身体。鬱龘齉
👩‍🚀🧑🏿‍🔬 🏳️‍🌈 é ǅ ﬁ ½
  two  spaces,	a tab  
Ελληνικά, עברית, العربية, हिन्दी, 日本語のテキスト, 한국어
EOF

round_trip() {  # round_trip <dir> <file>: decode(encode(file)) must give the file back
  "$POTOP" tokenizer encode --tokenizer "$1" <"$2" >ids.txt && "$POTOP" tokenizer decode --tokenizer "$1" <ids.txt >back.txt &&
    cmp -s "$2" back.txt
}

if [ "$GROUP" = all ] || [ "$GROUP" = train ]; then
  for kind in char byte word bpe unigram; do
    size=()
    case $kind in bpe | unigram) size=(--vocab-size 1000) ;; esac
    if "$POTOP" tokenizer train --kind $kind "${size[@]}" --data train.txt --out tok-$kind 2>train-$kind.log &&
      grep -q "wrote tok-$kind: a $kind tokenizer" train-$kind.log && [ -f tok-$kind/tokenizer.json ]; then
      ok "tokenizer train --kind $kind: $(tail -n 1 train-$kind.log)"
    else
      fail "tokenizer train --kind $kind: $(cat train-$kind.log)"
    fi
    round_trip tok-$kind train.txt && ok "$kind: decode(encode(text)) == text" || fail "$kind: the training text does not round-trip"
  done
  for kind in byte bpe unigram; do  # byte fallback: any text
    round_trip tok-$kind unseen.txt && ok "$kind: unseen scripts round-trip" || fail "$kind: unseen text does not round-trip: $(diff unseen.txt back.txt | head -n 4)"
  done
  [ -f tok-bpe/tokenizer.model ] && [ -f tok-word/words.json ] && [ -f tok-char/vocab.json ] &&
    ok "each kind writes its files" || fail "missing files: $(ls tok-*)"
  # Fixed special ids and byte ids.
  printf 'A\n' | "$POTOP" tokenizer encode --tokenizer tok-byte | grep -qx 69 && ok "byte: 'A' is id 4 + 65" || fail "byte ids"
  printf 'x 鬱\n' | "$POTOP" tokenizer encode --tokenizer tok-bpe --pieces >pieces.txt &&
    grep -q '<0xE9> <0xAC> <0xB1>' pieces.txt && ok "bpe --pieces shows byte fallback: $(cat pieces.txt)" || fail "--pieces: $(cat pieces.txt)"
  [ "$(printf '1 2 3 0\n' | "$POTOP" tokenizer decode --tokenizer tok-bpe)" = " ⁇ " ] &&
    ok "bpe: <pad> <bos> <eos> decode to nothing, <unk> to SentencePiece's ' ⁇ '" || fail "bpe: decoding the specials"
  # word: what it loses.
  printf 'ЖЖЖ xyz\n' | "$POTOP" tokenizer encode --tokenizer tok-word --unknown replace 2>word.err >/dev/null &&
    grep -q "words outside the vocabulary" word.err && ok "word: unknown words are counted: $(cat word.err)" || fail "word --unknown replace: $(cat word.err)"
  "$POTOP" tokenizer train --kind word --lowercase --min-count 2 --data train.txt --out tok-lower 2>/dev/null &&
    printf 'Prze\n' | "$POTOP" tokenizer encode --tokenizer tok-lower --unknown replace --pieces | grep -q '^prze$' &&
    ok "word --lowercase lowercases" || fail "word --lowercase"
  # import: a model spm_train made; potop's pieces equal spm_encode's.
  if command -v spm_train >/dev/null; then
    spm_train --input=train.txt --model_prefix=spm --model_type=bpe --vocab_size=1000 --pad_id=0 --bos_id=1 --eos_id=2 \
      --unk_id=3 --byte_fallback=true --normalization_rule_name=identity --add_dummy_prefix=false \
      --remove_extra_whitespaces=false --minloglevel=2 >/dev/null 2>&1 || fail "spm_train failed"
    "$POTOP" tokenizer import --model spm.model --out tok-imported 2>import.log && ok "import: $(cat import.log)" ||
      fail "import: $(cat import.log)"
    "$POTOP" tokenizer encode --tokenizer tok-imported --pieces <held.txt >potop.pieces &&
      spm_encode --model=spm.model --output_format=piece <held.txt >spm.pieces && cmp -s potop.pieces spm.pieces &&
      ok "imported model: pieces equal spm_encode's" || fail "imported pieces differ from spm_encode: $(diff potop.pieces spm.pieces | head -n 4)"
    "$POTOP" tokenizer encode --tokenizer tok-imported <held.txt >potop.ids &&
      spm_encode --model=spm.model --output_format=id <held.txt >spm.ids && cmp -s potop.ids spm.ids &&
      ok "imported model: ids equal spm_encode's" || fail "imported ids differ from spm_encode"
  else
    echo "skip import against spm_train (package sentencepiece is not installed)"
  fi
fi

if [ "$GROUP" = all ] || [ "$GROUP" = models ]; then
  # A tiny GPT on each of the subword and byte tokenizers; the model directory keeps the
  # tokenizer, so sample and eval need only the model.
  for kind in bpe byte; do
    size=()
    [ $kind = bpe ] && size=(--vocab-size 600)
    "$POTOP" tokenizer train --kind $kind "${size[@]}" --data train.txt --out tok-$kind 2>/dev/null || fail "tokenizer train $kind"
    if "$POTOP" train --data train.txt --tokenizer tok-$kind --out m-$kind "${TINY[@]}" --steps 6 --eval-interval 3 2>m-$kind.log; then
      grep -q "$kind tokenizer" m-$kind.log && ok "train --tokenizer $kind: $(grep '^data:' m-$kind.log)" || fail "$(cat m-$kind.log)"
    else
      fail "train --tokenizer tok-$kind: $(tail -n 3 m-$kind.log)"; continue
    fi
    [ "$(sed -n 's/.*"tokenizer": *"\([a-z]*\)".*/\1/p' m-$kind/config.json)" = $kind ] && ok "config.json names the $kind tokenizer" ||
      fail "config.json: $(cat m-$kind/config.json)"
    "$POTOP" sample -m m-$kind --prompt "Zażółć ёж 我" -n 30 --seed 1 >sample-$kind.txt 2>sample-$kind.err &&
      grep -q "^Zażółć ёж 我" sample-$kind.txt && ok "sample with $kind: $(head -c 80 sample-$kind.txt | tr '\n' ' ')" ||
      fail "sample with $kind: $(cat sample-$kind.err)"
    "$POTOP" sample -m m-$kind --prompt "ab" -n 40 --json >sample-$kind.json 2>/dev/null &&
      python3 -c 'import json,sys; json.load(open(sys.argv[1]))' sample-$kind.json && ok "sample --json with $kind is valid JSON" ||
      fail "sample --json with $kind"
    "$POTOP" eval -m m-$kind --data held.txt --json >eval-$kind.json 2>eval-$kind.err &&
      python3 - eval-$kind.json held.txt <<'EOF' && ok "eval with $kind: $(cat eval-$kind.json)" || fail "eval with $kind: $(cat eval-$kind.err eval-$kind.json)"
import json, math, sys
r = json.load(open(sys.argv[1]))
chars = len(open(sys.argv[2], encoding="utf-8").read())
# Every character but the first window's first is scored (eval scores each target once).
assert r["characters"] > 0.9 * chars and r["characters"] <= chars, (r["characters"], chars)
assert math.isfinite(r["bits_per_char"]) and r["bits_per_char"] > 0
EOF
  done
  "$POTOP" tokenizer encode --tokenizer m-bpe --pieces <<<"x" >/dev/null && ok "a model directory is a tokenizer directory" ||
    fail "tokenizer encode --tokenizer <model dir>"
  # Resuming reads the tokenizer back from the model directory and checks it against the state.
  "$POTOP" train --resume m-bpe --steps 8 2>resume.log && grep -q "resuming m-bpe at step 6" resume.log &&
    ok "resume a bpe model" || fail "resume a bpe model: $(tail -n 3 resume.log)"
  # A model on a word tokenizer: unknown words of held-out text are named, or replaced by <unk>.
  "$POTOP" tokenizer train --kind word --data train.txt --out tok-word 2>/dev/null || fail "tokenizer train word"
  "$POTOP" train --data train.txt --tokenizer tok-word --out m-word "${TINY[@]}" --steps 2 --eval-interval 2 2>m-word.log ||
    fail "train --tokenizer word: $(tail -n 3 m-word.log)"
  expect_error "eval with words the model lacks" 1 strict "unknown" -- eval -m m-word --data unseen.txt
  "$POTOP" eval -m m-word --data unseen.txt --unknown replace 2>eval-word.err >/dev/null &&
    grep -q "words outside the vocabulary" eval-word.err && ok "eval --unknown replace on a word model" ||
    fail "eval --unknown replace (word): $(cat eval-word.err)"
fi

if [ "$GROUP" = all ] || [ "$GROUP" = errors ]; then
  "$POTOP" tokenizer train --kind bpe --vocab-size 1000 --data train.txt --out keep 2>/dev/null || fail "could not train keep"
  cp keep/tokenizer.model keep.model
  : >empty.txt
  printf 'ok\n\xC5\x41\n' >bad-utf8.txt
  mkdir -p foreign && echo '{"kind": "morfessor"}' >foreign/tokenizer.json
  mkdir -p nokind && echo '{"name": "x"}' >nokind/tokenizer.json
  mkdir -p corrupt && echo '{"kind": "bpe"}' >corrupt/tokenizer.json && echo 'garbage' >corrupt/tokenizer.model
  mkdir -p emptydir
  echo 'not a model' >junk.model
  expect_error "missing tokenizer dir" 1 strict "nowhere" "does not exist" -- tokenizer encode --tokenizer nowhere
  expect_error "directory that is no tokenizer" 1 strict "emptydir" "not a tokenizer directory" -- tokenizer encode --tokenizer emptydir
  expect_error "unknown kind" 1 strict "foreign" "unknown tokenizer kind 'morfessor'" -- tokenizer encode --tokenizer foreign
  expect_error "tokenizer.json without a kind" 1 strict "nokind/tokenizer.json" "no \"kind\"" -- tokenizer decode --tokenizer nokind
  expect_error "corrupt .model" 1 strict "corrupt/tokenizer.model" "not a SentencePiece model (it does not parse as one)" -- \
    tokenizer encode --tokenizer corrupt
  grep -q '\.cc(' "$WORK/stderr" && fail "corrupt .model: the message shows SentencePiece's source: $(cat "$WORK/stderr")"
  expect_error "train --tokenizer corrupt" 1 strict "corrupt/tokenizer.model" -- train --data train.txt --tokenizer corrupt --out m-bad
  expect_error "import of a corrupt model" 1 strict "junk.model" "not a SentencePiece model" -- tokenizer import --model junk.model --out imp
  expect_error "import of a missing model" 1 strict "missing.model" "not found" -- tokenizer import --model missing.model --out imp
  [ ! -e imp ] && ok "a failed import writes nothing" || fail "imp exists after a failed import"
  expect_error "vocab size below the specials" 1 strict "--vocab-size 100" "at least 261" -- \
    tokenizer train --kind bpe --vocab-size 100 --data train.txt --out t1
  expect_error "vocab size above the id limit" 1 strict "--vocab-size 3000000000" -- \
    tokenizer train --kind unigram --vocab-size 3000000000 --data train.txt --out t2
  expect_error "word vocab size below the specials" 1 strict "--vocab-size 3" -- tokenizer train --kind word --vocab-size 3 --data train.txt --out t3
  expect_error "bpe without a vocab size" 1 strict "--vocab-size" -- tokenizer train --kind bpe --data train.txt --out t4
  expect_error "byte with a vocab size" 1 strict "--vocab-size 500" "260" -- tokenizer train --kind byte --vocab-size 500 --out t5
  expect_error "empty data file" 1 strict "empty.txt" "empty" -- tokenizer train --kind bpe --vocab-size 1000 --data empty.txt --out t6
  expect_error "missing data file" 1 strict "absent.txt" -- tokenizer train --kind word --data absent.txt --out t7
  expect_error "invalid UTF-8 in the data" 1 strict "bad-utf8.txt" -- tokenizer train --kind unigram --vocab-size 1000 --data bad-utf8.txt --out t8
  # expect_error gives potop an empty standard input; RUNNER puts a file there instead.
  feed() { local file=$1; shift; "$@" <"$file"; }
  printf '5 1000\n' >big-id.txt
  printf '5 x\n' >not-id.txt
  RUNNER="feed bad-utf8.txt" expect_error "invalid UTF-8 on standard input" 1 strict "standard input, line 2" -- \
    tokenizer encode --tokenizer keep
  RUNNER="feed big-id.txt" expect_error "a token id out of range" 1 strict "line 1" "'1000' is not a token id" -- \
    tokenizer decode --tokenizer keep
  RUNNER="feed not-id.txt" expect_error "not a number" 1 strict "'x'" -- tokenizer decode --tokenizer keep
  expect_error "unknown --kind" 1 strict "--kind" "wordpiece" -- tokenizer train --kind wordpiece --data train.txt --out t9
  expect_error "an existing --out" 1 strict "--out keep" "--force" -- tokenizer train --kind char --data train.txt --out keep
  cmp -s keep.model keep/tokenizer.model && [ ! -e keep/vocab.json ] && ok "an existing --out is left as it was" ||
    fail "keep was changed by a refused train"
  expect_error "failed training keeps --out" 1 strict "empty.txt" -- tokenizer train --kind char --data empty.txt --out keep --force
  cmp -s keep.model keep/tokenizer.model && ok "a failed --force run leaves --out as it was" || fail "keep was changed by a failed run"
  "$POTOP" tokenizer train --kind char --data train.txt --out keep --force 2>/dev/null && [ -f keep/vocab.json ] &&
    [ ! -e keep/tokenizer.model ] && grep -q '"char"' keep/tokenizer.json && ok "--force replaces --out as a whole" ||
    fail "--force: $(ls keep)"
  "$POTOP" tokenizer train --kind byte --out slash/ 2>/dev/null && "$POTOP" tokenizer train --kind byte --out slash/ --force 2>/dev/null &&
    [ -f slash/tokenizer.json ] && [ -z "$(ls -A slash | grep -v tokenizer.json)" ] && ok "--out with a trailing slash" ||
    fail "--out slash/: $(ls -A . slash)"
  # A model's directory holds its tokenizer's files, but --force does not replace the model.
  mkdir -p model && printf '{"kind": "gpt"}\n' >model/config.json
  expect_error "--force onto a model's directory" 1 strict "--out model: a model's directory" -- \
    tokenizer train --kind byte --out model --force
  [ "$(ls model)" = config.json ] && ok "the model's directory is left as it was" || fail "model/ changed: $(ls model)"
  [ -z "$(ls -A . | grep '\.tmp-\|\.old-')" ] && ok "no staging directories left behind" || fail "left behind: $(ls -A)"
fi
finish
