#!/usr/bin/env bash
# Nothing lost through the newer doors (issue 57): `tokenizer train|import --force` replace the
# tokenizer's files in --out and keep every other file (a user's source, a README, a model one
# level down); no command writes over its own input, --force or not (export onto its -m, word2vec
# split onto its --data, tokenizer import onto the file it reads); `train --resume` of an imported
# model, and `train --out` onto one, say it was never trained by potop and point to --init-from
# instead of advising the --force that would delete it; an internal error names no build path.
#   nothing_lost.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus corpus.txt 400

# --force keeps what the command did not write.
for how in train import; do
  mkdir -p "keep-$how/src" "keep-$how/model"
  printf 'int main(void) { return 0; }\n' >"keep-$how/src/main.c"
  printf 'my notes\n' >"keep-$how/README"
  printf '{"kind": "gpt"}\n' >"keep-$how/model/config.json"
  printf 'old\n' >"keep-$how/vocab.json"  # the tokenizer's own file: replaced
done
"$POTOP" tokenizer train --kind char --data corpus.txt --out tok 2>/dev/null || fail "tokenizer train"
"$POTOP" tokenizer train --kind char --data corpus.txt --out keep-train --force 2>train-force.log &&
  [ -f keep-train/src/main.c ] && [ -f keep-train/README ] && [ -f keep-train/model/config.json ] &&
  cmp -s keep-train/vocab.json tok/vocab.json &&
  printf 'pan\n' | "$POTOP" tokenizer encode --tokenizer keep-train >/dev/null &&
  ok "tokenizer train --force: the tokenizer's files replaced, src/main.c, README and model/ kept" ||
  fail "tokenizer train --force lost files: $(cd keep-train && find . | sort | tr '\n' ' ') $(cat train-force.log)"
printf '{"version": "1.0", "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "pan": 5, "##a": 6}}, "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true}, "pre_tokenizer": {"type": "BertPreTokenizer"}, "added_tokens": []}\n' >hf.json
if "$POTOP" tokenizer import --hf-json hf.json --out keep-import --force 2>import-force.log; then
  [ -f keep-import/src/main.c ] && [ -f keep-import/README ] && [ -f keep-import/model/config.json ] &&
    [ ! -e keep-import/vocab.json ] &&
    ok "tokenizer import --force: the old tokenizer's vocab.json gone, src/main.c, README and model/ kept" ||
    fail "tokenizer import --force: $(cd keep-import && find . | sort | tr '\n' ' ')"
else
  fail "tokenizer import --force: $(cat import-force.log)"
fi
# Without --force, a directory with files is still refused, and says what --force would do.
expect_error "tokenizer train into a directory with files" 1 strict "keep-train" "other files stay" -- \
  tokenizer train --kind char --data corpus.txt --out keep-train

# No command writes over its own input.
mkdir -p hfdir && cp hf.json hfdir/tokenizer.json
expect_error "tokenizer import --force onto the tokenizer.json it reads" 1 strict "tokenizer.json" "--hf-json" -- \
  tokenizer import --hf-json hfdir/tokenizer.json --out hfdir --force
cmp -s hfdir/tokenizer.json hf.json && ok "the tokenizer.json read is as it was" || fail "tokenizer import wrote over its input"
"$POTOP" train --data corpus.txt --out model --steps 2 --eval-interval 2 "${TINY[@]}" 2>train.log ||
  fail "train: $(tail -n 2 train.log)"
cp model/latest.safetensors lone.safetensors
cp lone.safetensors lone-before.safetensors
expect_error "export --format gguf --force onto its -m" 1 strict "lone.safetensors" "-m" -- \
  export -m lone.safetensors --format gguf --out lone.safetensors --force
cmp -s lone.safetensors lone-before.safetensors && ok "export left its -m as it was" || fail "export wrote over its -m"
printf 'pan kmicic\n' >words.txt
cp words.txt words-before.txt
expect_error "word2vec split --force onto its --data" 1 strict "words.txt" "--data" -- \
  word2vec split --data words.txt --out words.txt --force
cmp -s words.txt words-before.txt && ok "word2vec split left its --data as it was" || fail "word2vec split wrote over its --data"

# A model potop import wrote has no run to resume: potop says so, and points to --init-from.
if "$POTOP" export -m model --format gguf --out model.gguf 2>/dev/null && "$POTOP" import model.gguf --out imported 2>/dev/null; then
  expect_error "train --resume of an imported model" 1 strict "imported" "potop import" "--init-from" -- train --resume imported
  if grep -q -- "--force" "$WORK/stderr"; then fail "resume of an imported model advises --force: $(cat "$WORK/stderr")"; fi
  expect_error "train --out an imported model" 1 strict "imported" "--init-from" -- \
    train --data corpus.txt --out imported --steps 2 "${TINY[@]}"
  [ -f imported/latest.safetensors ] && ok "the imported model is still there" || fail "the imported model was removed"
else
  fail "export and import of a GGUF"
fi
finish
