#!/usr/bin/env bash
# The commands that take any model kind dispatch on config.json's "kind" (models/kinds.h): a GPT,
# a bag-of-words LM and a translation model, each trained a few steps, are reported with their
# kind by potop info and scored by potop eval (a text, or the translation model's test.tsv);
# potop attention draws each kind's maps; sample given a translation model and serve given a
# bag-of-words LM refuse it in one line naming its kind and the command to use.
#   kinds_dispatch.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus train.txt 3000
make_corpus held.txt 400
# Sentence pairs: four words of the corpus and the same four words (a copy task). (awk, not
# head: head would stop reading early, and tr killed by SIGPIPE fails the script, pipefail.)
tr -s ' \n.' '\n' <train.txt | awk 'NR <= 1200' | paste -d ' ' - - - - | awk '{ print $0 "\t" $0 }' >pairs.tsv

"$POTOP" train --data train.txt --out gpt --n-layer 1 --n-head 2 --n-embd 16 --block-size 16 --batch-size 4 \
  --eval-iters 1 --eval-interval 3 --steps 3 --threads 1 2>gpt.log || fail "train a GPT: $(tail -n 3 gpt.log)"
"$POTOP" bow train --data train.txt --out bow --dim 8 --block-size 8 --batch-size 4 --eval-interval 3 --eval-iters 1 \
  --steps 3 --threads 1 --min-count 2 2>bow.log || fail "bow train: $(tail -n 3 bow.log)"
"$POTOP" translate train --data pairs.tsv --out mt --columns fwd,rev --source fwd --target rev --vocab-size 300 \
  --n-layer 1 --n-head 2 --n-embd 16 --block-size 32 --batch-tokens 128 --eval-interval 3 --eval-sentences 5 \
  --dev-size 20 --test-size 20 --steps 3 --threads 1 2>mt.log || fail "translate train: $(tail -n 3 mt.log)"

# potop info: the kind, its config and tokenizer, and a translation model's languages.
for pair in gpt:gpt bow:bow mt:encoder-decoder; do
  dir=${pair%%:*} kind=${pair#*:}
  if "$POTOP" info -m "$dir" --json >info-$dir.json 2>info-$dir.log &&
      python3 - "$kind" info-$dir.json <<'PY'; then
import json, sys
kind, r = sys.argv[1], json.load(open(sys.argv[2]))
assert r["kind"] == kind and r["parameters"] > 0 and r["config"]["vocab_size"] == r["tokenizer"]["size"], r
assert r["checkpoints"] and r["training"]["steps"] == 3, r
assert (r.get("source"), r.get("target")) == (("fwd", "rev") if kind == "encoder-decoder" else (None, None)), r
# What it can do (nn/tasks.h), as its row of the kinds table says.
tasks = {"gpt": ["language-model", "causal-lm", "self-attention"], "bow": ["language-model", "word-attention"],
         "encoder-decoder": ["seq2seq"]}[kind]
assert r["tasks"] == tasks, r["tasks"]
PY
    ok "info --json of $dir: kind $kind"
  else
    fail "info --json of $dir (kind $kind): $(cat info-$dir.json info-$dir.log)"
  fi
  "$POTOP" info -m "$dir" >info-$dir.txt 2>&1 && grep -q "^commands: potop info, potop eval" info-$dir.txt &&
    grep -q "^tasks: [a-z-]" info-$dir.txt &&
    ok "info of $dir: $(head -n 1 info-$dir.txt)" || fail "info of $dir: $(cat info-$dir.txt)"
done

# potop eval: a language model scores a text, a translation model the pairs of its test.tsv.
for dir in gpt bow; do
  if "$POTOP" eval -m $dir --data held.txt --threads 1 --json >eval-$dir.json 2>eval-$dir.log &&
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["kind"] == sys.argv[2] and 1 < r["perplexity"] < 100 and r["tokens"] > 100, r' \
        eval-$dir.json $dir; then
    ok "eval of $dir: $(cat eval-$dir.json)"
  else
    fail "eval of $dir: $(cat eval-$dir.json eval-$dir.log)"
  fi
done
if "$POTOP" eval -m mt --threads 1 --json >eval-mt.json 2>eval-mt.log &&
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["kind"] == "encoder-decoder" and r["pairs"] == 20 and r["tokens"] > 20 and r["perplexity"] > 1, r' eval-mt.json &&
    "$POTOP" eval -m mt --threads 1 --data pairs.tsv >eval-mt.txt 2>&1 && grep -q "^pairs.tsv (.*): 300 pairs" eval-mt.txt &&
    grep -q "^loss [0-9.]* per target token | perplexity" eval-mt.txt; then
  ok "eval of a translation model: $(cat eval-mt.json)"
else
  fail "eval of a translation model: $(cat eval-mt.json eval-mt.log eval-mt.txt)"
fi

# The commands a kind cannot take say so in one line, with the command to use.
expect_error "sample of a translation model" 1 strict "mt" "encoder-decoder" "not a GPT" "use potop translate" -- sample -m mt -n 5
expect_error "serve of a bag-of-words LM" 1 strict "bow" "kind 'bow'" "not a GPT, a Llama, a translation model, a BERT or a text classifier" -- serve -m bow --port 0
# A run resumed by another kind's trainer: which command resumes it.
expect_error "train --resume of a translation model's run" 1 strict "mt: the training run of a translation model (kind 'encoder-decoder'), not of a GPT" "resume it with potop translate train --resume mt" -- train --resume mt
expect_error "bow train --resume of a GPT's run" 1 strict "gpt: the training run of a GPT" "resume it with potop train --resume gpt" -- bow train --resume gpt
expect_error "translate of a GPT" 1 strict "gpt" "decoder-only" "potop sample" -- translate -m gpt
expect_error "eval of a GPT without --data" 1 strict "--data" -- eval -m gpt
expect_error "eval of a translation model with --stride" 1 strict "--stride" "not for a translation model" -- eval -m mt --stride 3
printf '{"kind": "lstm", "model": {}}\n' >config.json && mkdir -p lstm && mv config.json lstm/
expect_error "an unknown kind" 1 strict "lstm: unknown model kind 'lstm'" "gpt" "bow" "encoder-decoder" -- info -m lstm
# potop attention: a GPT's maps per layer and head, a bow model's weights on the earlier words
# (a table too), a translation model's cross-attention of the text and its greedy translation.
"$POTOP" attention -m gpt -p "pan zagłoba" >att-gpt.txt 2>&1 && grep -q '<svg' gpt/attention.html &&
  ok "attention of a GPT" || fail "attention of a GPT: $(cat att-gpt.txt)"
"$POTOP" attention -m bow -p "pan zagłoba zawołał" >att-bow.txt 2>&1 && grep -q '^after «zawołał»' att-bow.txt &&
  grep -q '<svg' bow/attention.html && ok "attention of a bow model" || fail "attention of a bow model: $(cat att-bow.txt)"
"$POTOP" attention -m mt -p "pan zagłoba" >att-mt.txt 2>&1 && grep -aq '<svg' mt/cross-attention.html &&
  grep -aq 'Decoder layer 0' mt/cross-attention.html && ok "attention of a translation model: cross-attention" ||
  fail "attention of a translation model: $(cat att-mt.txt)"
for dir in gpt bow mt; do
  "$POTOP" plot -m $dir >/dev/null 2>&1 && grep -q '<svg' $dir/loss.svg && ok "plot of $dir" || fail "plot of $dir"
done
finish
