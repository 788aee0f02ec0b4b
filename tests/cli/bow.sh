#!/usr/bin/env bash
# potop bow train, potop eval and potop (bow) attention of a bag-of-words LM on a small synthetic
# corpus (every attention kind, resume, the HTML picture), and the bad inputs of the commands on
# it: one "potop: error:" line, exit 1.
#   bow.sh <potop> [models|errors]   (no group: both)
POTOP=$1
GROUP=${2:-all}
source "$(dirname "$0")/lib.sh"

make_corpus train.txt 6000
make_corpus held.txt 800
SMALL=(--dim 16 --block-size 12 --batch-size 8 --eval-interval 15 --eval-iters 2 --log-interval 5 --threads 1
       --min-count 2 --attn-hidden 8 --lr 1e-2 --warmup 5)

if [ "$GROUP" = all ] || [ "$GROUP" = models ]; then
  for kind in none mean idf dot additive; do
    if "$POTOP" bow train --data train.txt --out m-$kind --attention $kind "${SMALL[@]}" --steps 30 --json >run-$kind.json \
        2>run-$kind.log && [ -f m-$kind/best.safetensors ] && [ -f m-$kind/resume.safetensors ] &&
        grep -q '"kind":"eval"' m-$kind/metrics.jsonl && grep -q '"kind": "bow"' m-$kind/config.json; then
      ok "bow train --attention $kind: $(cat run-$kind.json)"
    else
      fail "bow train --attention $kind: $(cat run-$kind.log)"
    fi
    if "$POTOP" eval --model m-$kind --data held.txt --json >eval-$kind.json 2>eval-$kind.log &&
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["kind"] == "bow" and 1 < r["perplexity"] < 60 and r["tokens"] > 500, r' eval-$kind.json; then
      ok "eval of a bow model, --attention $kind: $(cat eval-$kind.json)"
    else
      fail "eval of a bow model, --attention $kind: $(cat eval-$kind.json eval-$kind.log)"
    fi
  done
  # Training lowers the loss: the first evaluation is at chance (ln V), the last well below it.
  python3 - m-dot/metrics.jsonl <<'PY' && ok "bow train: the validation loss falls" || fail "bow train: the validation loss does not fall"
import json, sys
evals = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "eval"]
assert evals[-1]["val_loss"] < evals[0]["val_loss"] - 0.5, evals
PY
  # The attention table: one line per predicted word with weights on the earlier words, and the
  # picture; potop attention, which takes every kind, shows the same.
  if "$POTOP" bow attention --model m-additive --text "a pan zagłoba zawołał żywo" --html att.html >att.txt 2>att.log &&
      grep -q '^after «zawołał» → «.*» p=' att.txt && grep -q 'zagłoba(4)=' att.txt && grep -q '<svg' att.html &&
      grep -q 'attention: additive' att.html; then
    ok "bow attention: $(sed -n 3p att.txt)"
  else
    fail "bow attention: $(cat att.txt att.log)"
  fi
  if "$POTOP" attention --model m-additive --prompt "a pan zagłoba zawołał żywo" --out att2.html >att2.txt 2>att2.log &&
      cmp -s att.txt <(sed 's/att2.html/att.html/' att2.txt) && cmp -s att.html att2.html; then
    ok "potop attention of a bow model: the table and picture of bow attention"
  else
    fail "potop attention of a bow model: $(diff att.txt att2.txt) $(cat att2.log)"
  fi
  # Resume: a run stopped at step 30 continues to 40 from its state (step 30's records kept).
  if "$POTOP" bow train --resume m-mean --steps 40 2>resume.log && grep -q 'resuming m-mean at step 30 of 40' resume.log &&
      [ "$(grep -c '"kind":"train"' m-mean/metrics.jsonl)" = 8 ]; then
    ok "bow train --resume: continued to step 40"
  else
    fail "bow train --resume: $(cat resume.log)"
  fi
  # Ctrl-C: the run finishes its step, checkpoints, says how to resume, and the resumed run
  # reproduces the uninterrupted one's losses exactly (one thread: bit-identical).
  SIG=(--data train.txt --attention additive --dim 16 --block-size 12 --batch-size 8 --eval-iters 2 --threads 1
       --min-count 2 --attn-hidden 8 --lr 1e-2 --warmup 5 --steps 1500 --eval-interval 500 --log-interval 1)
  "$POTOP" bow train "${SIG[@]}" --out sig-ref 2>sig-ref.log || fail "bow train (signal reference): $(tail -n 2 sig-ref.log)"
  "$POTOP" bow train "${SIG[@]}" --out sig 2>sig.log &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$(count_records sig)" -lt 60 ]; do sleep 0.005; done
  kill -s INT "$pid" 2>/dev/null || true
  rc=0
  wait "$pid" || rc=$?
  if [ "$rc" = 0 ] && grep -q "interrupted at step [0-9]* of 1500" sig.log && grep -q "resume with: potop bow train --resume sig" sig.log &&
      "$POTOP" bow train --resume sig 2>sig-resume.log && diff <(losses sig-ref) <(losses sig) >/dev/null; then
    ok "bow train: SIGINT, then --resume gives the uninterrupted run's losses"
  else
    fail "bow train SIGINT/resume: exit $rc: $(tail -n 3 sig.log) $(tail -n 2 sig-resume.log 2>/dev/null)"
  fi
  # A GPT reads the same word tokenizer directory: the vocabularies are the same.
  "$POTOP" tokenizer train --kind word --min-count 2 --data train.txt --out tok >/dev/null 2>&1
  if "$POTOP" bow train --data train.txt --tokenizer tok --out m-tok --attention dot "${SMALL[@]}" --steps 2 2>tok.log &&
      cmp -s tok/words.json m-tok/words.json; then
    ok "bow train --tokenizer: the directory's vocabulary"
  else
    fail "bow train --tokenizer: $(cat tok.log)"
  fi
fi

if [ "$GROUP" = all ] || [ "$GROUP" = errors ]; then
  : >empty.txt
  printf 'kmicic ruszył z kopyta\n' >few.txt
  [ -d m-none ] || "$POTOP" bow train --data train.txt --out m-none --attention none "${SMALL[@]}" --steps 2 2>/dev/null
  "$POTOP" train --data train.txt --out gpt "${TINY[@]}" --steps 1 --eval-interval 1 >/dev/null 2>&1
  expect_error "empty corpus" 1 strict "empty.txt" -- bow train --data empty.txt --out e1
  expect_error "fewer words than the window" 1 strict "few.txt" -- bow train --data few.txt --out e2 --min-count 1
  expect_error "--dim 0" 1 strict "--dim" -- bow train --data train.txt --out e3 --dim 0
  expect_error "--block-size 0" 1 strict "--block-size" -- bow train --data train.txt --out e4 --block-size 0
  expect_error "--block-size huge" 1 strict "--block-size" -- bow train --data train.txt --out e5 --block-size 100000
  expect_error "--attention unknown" 1 strict "--attention" "additive" -- bow train --data train.txt --out e6 --attention lstm
  expect_error "--min-count leaves no word" 1 strict "--min-count" -- bow train --data train.txt --out e7 --min-count 100000000
  expect_error "--min-count 0" 1 strict "--min-count" -- bow train --data train.txt --out e8 --min-count 0
  expect_error "bow attention of a GPT" 1 strict "gpt" "not a bag-of-words LM" "potop sample" -- bow attention --model gpt --text "a pan"
  expect_error "bow attention of a GPT's weights" 1 strict "gpt" "not a bag-of-words LM" -- bow attention --model gpt/best.safetensors --text "a pan"
  expect_error "sample of a bow model" 1 strict "m-none" "bag-of-words" "not a GPT" "potop eval" -- sample --model m-none
  expect_error "eval of a missing dir" 1 strict "nowhere" -- eval --model nowhere --data held.txt
  expect_error "bow eval, moved" 1 strict "potop eval" -- bow eval --model m-none --data held.txt
  expect_error "eval of a bow model on an empty text" 1 log "empty.txt" -- eval --model m-none --data empty.txt
  expect_error "bow attention on a bigram" 1 log "none" -- bow attention --model m-none --text "a pan zagłoba"
  expect_error "bow attention on too long a text" 1 log "--text" -- bow attention --model m-none --text "$(head -c 2000 train.txt)"
  expect_error "bow train into a model" 1 strict "--out m-none" "--force" -- bow train --data train.txt --out m-none
fi
finish
