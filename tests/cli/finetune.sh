#!/usr/bin/env bash
# Fine-tuning (--init-from) and training with a given tokenizer (--tokenizer): the model starts
# from another's weights and tokenizer with a new optimizer and schedule; a tokenizer directory
# fixes the vocabulary of a new model.
#   finetune.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus base.txt 3000
make_corpus new.txt 1500
{ cat new.txt; printf 'Жили-были kmicic\n'; } >alien.txt
"$POTOP" train --data base.txt --out base "${TINY[@]}" --steps 200 --eval-interval 100 2>base.log ||
  { cat base.log; fail "could not train the base model"; finish; }
base_loss=$(sed -n 's/^eval step 200: train loss \([0-9.]*\).*/\1/p' base.log)

"$POTOP" train --init-from base --data new.txt --out ft "${TINY[@]}" --steps 20 --eval-interval 10 2>ft.log ||
  fail "fine-tuning: $(tail -n 2 ft.log)"
grep -q "^fine-tuning from base/" ft.log && ok "fine-tuning says which weights it starts from" || fail "$(cat ft.log)"
first=$(sed -n 's/^eval step 0: train loss \([0-9.]*\).*/\1/p' ft.log)
# The same kind of text: the fine-tuned run starts where the base model ended, far below an
# untrained model's ln(vocabulary) ≈ 3.3.
/usr/bin/python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) < 0.3 and a < 2.9 else 1)" \
  "$first" "$base_loss" && ok "it starts from the base model's loss ($first vs $base_loss)" ||
  fail "fine-tuning starts at $first, the base model ended at $base_loss"
cmp <(sed -n '/"model"/,/}/p' base/config.json) <(sed -n '/"model"/,/}/p' ft/config.json) &&
  cmp base/vocab.json ft/vocab.json && ok "same model shape and vocabulary" || fail "the fine-tuned model differs in shape or vocabulary"

expect_error "fine-tuning on text with new characters" 1 strict "alien.txt: 9 characters outside the vocabulary" \
  "'Ж' (U+0416)" "--unknown skip" -- train --init-from base --data alien.txt --out ft2 "${TINY[@]}" --steps 4
"$POTOP" train --init-from base --data alien.txt --out ft2 "${TINY[@]}" --steps 4 --unknown skip 2>ft2.log &&
  grep -q "9 characters outside the vocabulary .* left out" ft2.log && ok "--unknown skip fine-tunes on the rest" ||
  fail "--unknown skip: $(tail -n 2 ft2.log)"
expect_error "fine-tuning with another shape" 1 strict "--init-from base: cannot change --n-embd 64 (the model has 32)" -- \
  train --init-from base --data new.txt --out ft3 --n-embd 64
expect_error "--tokenizer with --init-from" 1 strict "--tokenizer" "--init-from" -- \
  train --init-from base --tokenizer base --data new.txt --out ft4
expect_error "--init-from on resume" 1 strict "--init-from starts a new run" -- train --resume ft --init-from base
# --out naming the model it starts from: even --force does not replace it (nor one of its files).
cp base/best.safetensors base-best.before
expect_error "--init-from X --out X --force" 1 strict "--init-from base: is in --out base" "choose another --out" -- \
  train --init-from base --data new.txt --out base --force "${TINY[@]}" --steps 4
expect_error "--init-from X/best.safetensors --out X --force" 1 strict "--init-from base/best.safetensors: is in --out base/" -- \
  train --init-from base/best.safetensors --data new.txt --out base/ --force "${TINY[@]}" --steps 4
cmp -s base/best.safetensors base-best.before && [ -f base/resume.safetensors ] && ok "the base model is untouched" ||
  fail "the base model changed: $(ls base)"
expect_error "--init-from a missing model" 1 strict "nowhere" "does not exist" -- train --init-from nowhere --data new.txt --out ft5

# --tokenizer: a new model with a given vocabulary (here a model directory's).
"$POTOP" train --tokenizer base --data new.txt --out tk "${TINY[@]}" --steps 4 2>tk.log && cmp base/vocab.json tk/vocab.json &&
  ok "--tokenizer DIR fixes the vocabulary" || fail "--tokenizer: $(tail -n 2 tk.log)"
mkdir -p empty
expect_error "--tokenizer that is no tokenizer" 1 strict "empty" "not a tokenizer directory" -- \
  train --tokenizer empty --data new.txt --out tk2
finish
