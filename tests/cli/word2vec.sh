#!/usr/bin/env bash
# potop word2vec train|split|similar|analogy|evaluate: trained on a synthetic corpus, read back
# by gensim (same cosines to 1e-5, same analogy counts), and the bad inputs.
#   word2vec.sh <potop> [train|errors|init]   (no group: all of them)
POTOP=$1
GROUP=${2:-all}
HELPER=$(cd "$(dirname "$0")" && pwd)/word2vec.py
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

$PY "$HELPER" corpus corpus.txt
TRAIN=(--dim 16 --window 3 --negative 5 --sample 0 --min-count 1 --threads 2 --split space)

if [ "$GROUP" = all ] || [ "$GROUP" = train ]; then
  $PY "$HELPER" analogies questions.txt
  for model in cbow skipgram; do
    if "$POTOP" word2vec train --data corpus.txt --out "$model" --model $model "${TRAIN[@]}" --epochs 3 2>train.log; then
      ok "$model: trained"
    else
      fail "$model: train failed: $(cat train.log)"; continue
    fi
    for f in vectors.txt vectors.bin vectors.safetensors vocab.json train.json metrics.jsonl; do
      [ -s "$model/$f" ] || fail "$model: no $f"
    done
    grep -q 'words/s' train.log || fail "$model: no progress line: $(cat train.log)"
    "$POTOP" word2vec similar --vectors "$model" --word a4 -k 5 >similar.txt || fail "$model: similar failed"
    [ "$(head -n 1 similar.txt | cut -f1)" = b4 ] && ok "$model: b4 is nearest a4" ||
      fail "$model: a4's nearest is not b4: $(cat similar.txt)"
    if $PY "$HELPER" check-similar "$model/vectors.txt" "$model/vectors.bin" similar.txt a4 >check.log 2>&1; then
      ok "$model: gensim reads vectors.txt and vectors.bin: $(cat check.log)"
    else
      fail "$model: gensim disagrees: $(cat check.log)"
    fi
    "$POTOP" word2vec analogy --vectors "$model/vectors.txt" a1 b1 a2 -k 3 >analogy.txt || fail "$model: analogy failed"
    [ "$(wc -l <analogy.txt)" = 3 ] || fail "$model: analogy printed $(wc -l <analogy.txt) lines, expected 3"
    "$POTOP" word2vec evaluate --vectors "$model" --analogies questions.txt --json >eval.json 2>eval.err ||
      fail "$model: evaluate failed: $(cat eval.err)"
    grep -q 'skipped 1 malformed line(s) (not 4 words): line 13' eval.err || fail "$model: malformed line not reported: $(cat eval.err)"
    ours=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps([[s["section"], s["correct"], s["incorrect"]] for s in r["sections"]] + [["Total accuracy", r["total"]["correct"], r["total"]["incorrect"]]]))' eval.json)
    theirs=$($PY "$HELPER" evaluate "$model/vectors.bin" questions.txt 2>/dev/null)
    [ "$ours" = "$theirs" ] && ok "$model: evaluate equals gensim's: $ours" || fail "$model: evaluate $ours, gensim $theirs"
  done
  printf 'Kmicic, pan Zagłoba!\n\nŻywo — 3.14\n' >text.txt
  "$POTOP" word2vec split --data text.txt --out split.txt --lowercase
  [ "$(cat split.txt)" = $'kmicic pan zagłoba\n\nżywo 3.14' ] && ok "split writes the words" || fail "split wrote: $(cat split.txt)"
  expect_error "split --out an existing file" 1 strict "--out split.txt: exists" "--force" -- \
    word2vec split --data text.txt --out split.txt
  expect_error "split --out its own --data" 1 strict "--out text.txt" "--data" -- \
    word2vec split --data text.txt --out text.txt
  "$POTOP" word2vec split --data text.txt --out split.txt --force && ok "split --force replaces its --out" || fail "split --force"
fi

if [ "$GROUP" = all ] || [ "$GROUP" = errors ]; then
  : >empty.txt
  printf 'jeden dwa trzy\n' >short.txt
  expect_error "empty corpus" 1 strict "empty.txt" -- word2vec train --data empty.txt --out o1
  expect_error "fewer words than the window" 1 strict "short.txt" "--window 5" -- word2vec train --data short.txt --out o2 --min-count 1
  expect_error "dim 0" 1 strict "--dim 0" -- word2vec train --data corpus.txt --out o3 --dim 0
  expect_error "negative below 0" 1 strict "--negative -1" -- word2vec train --data corpus.txt --out o4 --negative -1
  expect_error "min-count leaves nothing" 1 strict "--min-count 100000" -- word2vec train --data corpus.txt --out o5 --min-count 100000
  expect_error "unknown model" 1 strict "--model" -- word2vec train --data corpus.txt --out o6 --model glove
  for d in o1 o2 o3 o4 o5 o6; do [ ! -e $d/vectors.bin ] || fail "$d: vectors written after an error"; done
  "$POTOP" word2vec train --data corpus.txt --out good "${TRAIN[@]}" --epochs 1 2>/dev/null
  head -c 2000 good/vectors.bin >cut.bin
  expect_error "truncated binary" 1 strict "cut.bin" "truncated" -- word2vec similar --vectors cut.bin --word a1
  head -n 20 good/vectors.txt >cut.txt
  expect_error "truncated text" 1 strict "cut.txt" "truncated" -- word2vec similar --vectors cut.txt --word a1
  { echo "5 16"; tail -n +2 good/vectors.txt; } >more.txt
  expect_error "header says fewer words" 1 strict "more.txt" "more words than the 5" -- word2vec similar --vectors more.txt --word a1
  { echo "50 17"; tail -n +2 good/vectors.txt; } >dim.txt
  expect_error "header says another dim" 1 strict "dim.txt" "dim 17" -- word2vec evaluate --vectors dim.txt --analogies /dev/null
  expect_error "unknown word" 1 strict "'zzz'" -- word2vec similar --vectors good --word zzz
  printf 'a1 b1 a2 b2\n: s\n' >nosection.txt
  expect_error "question before a section" 1 strict "nosection.txt: line 1" -- word2vec evaluate --vectors good --analogies nosection.txt
  expect_error "missing analogy file" 1 strict "missing.txt" -- word2vec evaluate --vectors good --analogies missing.txt

  # --out: an earlier run's vectors are replaced only with --force; a directory of anything else
  # (a GPT's model, a tokenizer) is refused whatever the flags, and nothing in it changes.
  expect_error "train into an earlier run's --out" 1 strict "--out good already holds word vectors" "--force" -- \
    word2vec train --data corpus.txt --out good "${TRAIN[@]}" --epochs 1
  "$POTOP" word2vec train --data corpus.txt --out good "${TRAIN[@]}" --epochs 1 --force 2>force.log &&
    grep -q "note: --force: the word vectors that were in good are removed" force.log && [ -s good/vectors.bin ] &&
    ok "--force replaces an earlier run's vectors" || fail "word2vec --force: $(cat force.log)"
  "$POTOP" train --data corpus.txt --out a-gpt --steps 2 --eval-interval 2 "${TINY[@]}" 2>/dev/null || fail "train a GPT"
  before=$(cat a-gpt/vocab.json a-gpt/config.json | md5sum)
  for force in "" --force; do
    expect_error "word2vec train into a GPT's directory ${force:-without --force}" 1 strict \
      "--out a-gpt holds files potop word2vec did not write (" "config.json" -- \
      word2vec train --data corpus.txt --out a-gpt "${TRAIN[@]}" --epochs 1 $force
  done
  [ "$(cat a-gpt/vocab.json a-gpt/config.json | md5sum)" = "$before" ] && [ ! -e a-gpt/vectors.bin ] &&
    ok "the GPT's directory is untouched" || fail "word2vec changed the GPT's directory: $(ls a-gpt)"
fi
if [ "$GROUP" = all ] || [ "$GROUP" = init ]; then
  # A word-level GPT whose token table starts from word2vec vectors of the same words.
  make_corpus text.txt 3000
  "$POTOP" tokenizer train --kind word --data text.txt --out tok 2>/dev/null || fail "tokenizer train word"
  "$POTOP" word2vec train --data text.txt --out w2v --dim 32 --min-count 1 --epochs 1 --threads 1 2>/dev/null ||
    fail "word2vec train on text.txt"
  if "$POTOP" train --data text.txt --tokenizer tok --init-embeddings w2v --out gpt "${TINY[@]}" --steps 2 \
      --eval-interval 2 2>gpt.log; then
    grep -q 'init-embeddings: 2[0-9] of 3[0-9] token embeddings from w2v' gpt.log &&
      ok "init-embeddings: $(grep init-embeddings gpt.log)" || fail "no init-embeddings line: $(cat gpt.log)"
  else
    fail "train --init-embeddings failed: $(cat gpt.log)"
  fi
  "$POTOP" word2vec train --data text.txt --out w2v48 --dim 48 --min-count 1 --epochs 1 --threads 1 2>/dev/null ||
    fail "word2vec train --dim 48"
  expect_error "init-embeddings of another dimension" 1 log "--init-embeddings w2v48" "dimension 48" "n_embd is 32" -- \
    train --data text.txt --tokenizer tok --init-embeddings w2v48 --out gpt2 "${TINY[@]}" --steps 1
  expect_error "init-embeddings with a char tokenizer" 1 log "needs a word tokenizer" -- \
    train --data text.txt --init-embeddings w2v --out gpt3 "${TINY[@]}" --steps 1
fi
finish
