#!/usr/bin/env bash
# potop classify train|eval|predict|attention on a small synthetic task (a text's class is which
# of two words it holds): from scratch and from a tiny GPT (--init-from), resume, --force,
# --freeze-encoder, and the bad inputs: one "potop: error:" line, exit 1, nothing written.
#   classify.sh <potop> [models|errors]   (no group: both)
#   classify.sh <potop> mpi <mpirun>       2 ranks = one process with --grad-accum 2
POTOP=$1
GROUP=${2:-all}
MPIRUN=${3:-}
source "$(dirname "$0")/lib.sh"

make_labelled train.tsv 240 1
make_labelled dev.tsv 40 2
SMALL=(--n-layer 1 --n-head 2 --n-embd 16 --block-size 24 --batch-size 8 --threads 1 --lr 3e-3 --min-count 1)

if [ "$GROUP" = all ] || [ "$GROUP" = models ]; then
  if "$POTOP" classify train --data train.tsv --dev dev.tsv --out m "${SMALL[@]}" --epochs 4 --eval-interval 10 \
      --json >train.json 2>train.log && [ -f m/best.safetensors ] && grep -q '"kind": "classifier"' m/config.json &&
      grep -q '"dev_accuracy"' m/metrics.jsonl && grep -q 'pooling cls' train.log; then
    ok "classify train from scratch: $(grep 'eval step' train.log | tail -1)"
  else
    fail "classify train from scratch: $(cat train.log)"
  fi
  # The task is trivially separable: the best dev accuracy must be high.
  python3 - m/metrics.jsonl <<'PY' && ok "classify train: dev accuracy rises" || fail "classify train: dev accuracy does not rise: $(cat m/metrics.jsonl)"
import json, sys
evals = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "eval"]
assert max(e["dev_accuracy"] for e in evals) >= 90, evals
PY
  if "$POTOP" classify eval -m m --data dev.tsv --json >eval.json 2>eval.log &&
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["examples"] == 40 and r["accuracy"] >= 0.9 and r["labels"] == ["bad", "good"] and sum(map(sum, r["confusion"])) == 40 and len(r["classes"]) == 2, r' eval.json &&
      grep -q '^checkpoint: m/latest.safetensors: .*(the newest weights; best.safetensors is' eval.log; then
    ok "classify eval --json: $(cut -c1-120 eval.json)"
  else
    fail "classify eval: $(cat eval.json eval.log)"
  fi
  if "$POTOP" classify eval -m m --data dev.tsv >eval.txt 2>/dev/null && grep -q '^accuracy ' eval.txt &&
      grep -q 'confusion matrix' eval.txt; then
    ok "classify eval: $(sed -n 2p eval.txt)"
  else
    fail "classify eval (text): $(cat eval.txt)"
  fi
  printf 'pan zagłoba dobry\r\nzły kmicic\n' >in.txt
  if "$POTOP" classify predict -m m <in.txt >pred.txt 2>/dev/null && [ "$(cut -f1 pred.txt | tr '\n' ' ')" = "good bad " ] &&
      "$POTOP" classify predict -m m --input in.txt --json >pred.json 2>/dev/null &&
      python3 -c 'import json,sys; rs=[json.loads(l) for l in open(sys.argv[1])]; assert len(rs) == 2 and abs(sum(rs[0]["probabilities"].values()) - 1) < 1e-4, rs' pred.json; then
    ok "classify predict: $(tr '\n' ' ' <pred.txt)"
  else
    fail "classify predict: $(cat pred.txt pred.json)"
  fi
  if "$POTOP" classify attention -m m "pan dobry" --html att.html >att.txt 2>/dev/null && grep -q '^layer 0 head 1:' att.txt &&
      grep -q '\[CLS\]' att.html; then
    ok "classify attention: $(sed -n 3p att.txt)"
  else
    fail "classify attention: $(cat att.txt)"
  fi
  if "$POTOP" attention -m m -p "pan dobry" --out att2.html >/dev/null 2>&1 && cmp -s att.html att2.html; then
    ok "potop attention of a classifier: the page of classify attention --html"
  else
    fail "potop attention of a classifier: $(diff att.html att2.html | head -3)"
  fi
  # Resume: continue a stopped run to more steps.
  if "$POTOP" classify train --resume m --steps 130 --patience 0 2>resume.log && grep -q 'resuming m at step' resume.log &&
      grep -q '"step":130' m/metrics.jsonl; then
    ok "classify train --resume: $(grep resuming resume.log)"
  else
    fail "classify train --resume: $(cat resume.log)"
  fi
  # A run stopped at step 10 and resumed to 20 logs exactly what an uninterrupted one does (one thread).
  R=(--data train.tsv --dev dev.tsv "${SMALL[@]}" --eval-interval 5 --patience 0 --lr-decay-steps 20 --log-interval 1)
  if "$POTOP" classify train "${R[@]}" --out whole --steps 20 2>/dev/null &&
      "$POTOP" classify train "${R[@]}" --out parts --steps 10 2>/dev/null &&
      "$POTOP" classify train --resume parts --steps 20 2>/dev/null && [ "$(losses whole)" = "$(losses parts)" ]; then
    ok "classify train --resume: the same losses as an uninterrupted run"
  else
    fail "classify train --resume: losses differ: $(diff <(losses whole) <(losses parts) | head -5)"
  fi
  # Early stopping: once dev accuracy stops improving for --patience evaluations the run stops,
  # best.safetensors keeping the best step; a resume of it stops again at once.
  if "$POTOP" classify train --data train.tsv --dev dev.tsv --out early "${SMALL[@]}" --epochs 30 --eval-interval 5 \
      --patience 2 2>early.log && grep -q '^early stop at step [0-9]* of 900: 2 evaluations without a better score' early.log &&
      "$POTOP" classify train --resume early 2>early2.log && grep -q '^early stop' early2.log &&
      python3 - early <<'PY'; then
import json, struct, sys
def step(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]
    return int(json.loads(b[8:8 + n])["__metadata__"]["step"])
evals = [r for r in map(json.loads, open(sys.argv[1] + "/metrics.jsonl")) if r["kind"] == "eval"]
best = max(evals, key=lambda r: (r["dev_accuracy"], -r["step"]))
assert step(sys.argv[1] + "/best.safetensors") == best["step"], (best, evals)
assert step(sys.argv[1] + "/latest.safetensors") == evals[-1]["step"] == best["step"] + 10, evals
PY
    ok "classify train --patience: $(grep '^early stop' early.log)"
  else
    fail "classify train --patience: $(cat early.log early2.log)"
  fi
  # --steps past the end of the linear decay (to 0) says that those steps train at rate 0.
  cp -r m more
  steps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["training"]["steps"])' m/config.json)
  if "$POTOP" classify train --resume more --steps $((steps + 4)) 2>more.log &&
      grep -q "note: --steps $((steps + 4)) (the run had $steps): .* train at learning rate 0 and change nothing" more.log; then
    ok "classify train --resume past the schedule: $(grep -m1 'note: --steps' more.log)"
  else
    fail "classify train --resume past the schedule says nothing of rate 0: $(cat more.log)"
  fi
  # --force replaces the run; without it the directory is refused.
  expect_error "classify train into a model directory without --force" 1 strict "--out" -- \
    classify train --data train.tsv --dev dev.tsv --out m "${SMALL[@]}" --steps 2
  if "$POTOP" classify train --data train.tsv --dev dev.tsv --out m "${SMALL[@]}" --steps 2 --force 2>force.log &&
      grep -q 'force' force.log; then
    ok "classify train --force: a new run"
  else
    fail "classify train --force: $(cat force.log)"
  fi
  # From a tiny GPT (char tokenizer): a causal body, the head on the last token; with the body frozen.
  cut -f2 train.tsv >text.txt
  "$POTOP" train --data text.txt --out gpt --n-layer 1 --n-head 2 --n-embd 16 --block-size 32 --steps 4 --batch-size 4 \
    --eval-iters 1 --threads 1 2>gpt.log || fail "tiny GPT: $(cat gpt.log)"
  if "$POTOP" classify train --data train.tsv --dev dev.tsv --out fg --init-from gpt --steps 6 --eval-interval 3 \
      --batch-size 8 --threads 1 2>fg.log && grep -q 'init: 1[0-9] body tensors from gpt' fg.log &&
      grep -q 'causal body of 1 layers, 2 heads, 16 wide, block 32, pooling last' fg.log &&
      "$POTOP" classify predict -m fg <in.txt >/dev/null 2>&1; then
    ok "classify train --init-from a GPT: $(grep '^init:' fg.log)"
  else
    fail "classify train --init-from a GPT: $(cat fg.log)"
  fi
  if "$POTOP" classify train --data train.tsv --dev dev.tsv --out fz --init-from gpt --freeze-encoder --steps 4 \
      --eval-interval 2 --batch-size 8 --threads 1 2>fz.log && grep -q 'body frozen' fz.log &&
      python3 - gpt/best.safetensors fz/latest.safetensors <<'PY'; then
import json, struct, sys
def tensors(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    return {k: b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in h.items() if k != "__metadata__"}
g, f = tensors(sys.argv[1]), tensors(sys.argv[2])
assert all(f[k] == g[k] for k in f if not k.startswith("classifier.")), "the body moved"
PY
    ok "classify train --freeze-encoder: the body's weights are the GPT's"
  else
    fail "classify train --freeze-encoder: $(cat fz.log)"
  fi
  # From a tiny BERT (a word tokenizer): a bidirectional body with [MASK] past the vocabulary, the head on [CLS].
  "$POTOP" tokenizer train --kind word --data text.txt --out tok >/dev/null 2>&1 || fail "word tokenizer for BERT"
  "$POTOP" bert pretrain --data text.txt --tokenizer tok --out bert --n-layer 1 --n-head 2 --n-embd 16 --block-size 24 \
    --steps 2 --batch-size 4 --eval-iters 1 --threads 1 2>bert.log || fail "tiny BERT: $(cat bert.log)"
  if "$POTOP" classify train --data train.tsv --dev dev.tsv --out fb --init-from bert --steps 4 --eval-interval 2 \
      --batch-size 8 --threads 1 2>fb.log && grep -q 'init: 1[0-9] body tensors from bert' fb.log &&
      grep -q 'bidirectional body of 1 layers, 2 heads, 16 wide, block 24, pooling cls' fb.log &&
      "$POTOP" classify eval -m fb --data dev.tsv >/dev/null 2>&1; then
    ok "classify train --init-from a BERT: $(grep '^init:' fb.log)"
  else
    fail "classify train --init-from a BERT: $(cat fb.log)"
  fi
  expect_error "potop sample of a classifier" 1 strict "text classifier" "classify" -- sample -m m --prompt x
  expect_error "potop translate of a classifier" 1 strict "text classifier" "classify" -- translate -m m
fi

if [ "$GROUP" = all ] || [ "$GROUP" = errors ]; then
  # Accepted: CRLF line ends and a byte-order mark.
  { printf '\xEF\xBB\xBF'; sed 's/$/\r/' train.tsv; } >crlf.tsv
  if "$POTOP" classify train --data crlf.tsv --dev dev.tsv --out crlf "${SMALL[@]}" --steps 2 2>crlf.log; then
    ok "classify train: CRLF and a BOM accepted"
  else
    fail "classify train with CRLF and a BOM: $(cat crlf.log)"
  fi
  bad() {  # bad <name> <needle> <train file> <dev file> [flags...]
    local name=$1 needle=$2 data=$3 dev=$4
    shift 4
    expect_error "classify train: $name" 1 strict "$needle" -- classify train --data "$data" --dev "$dev" --out bad "${SMALL[@]}" --steps 2 "$@"
    [ ! -e bad ] || fail "classify train: $name: wrote bad/"
  }
  { head -3 train.tsv; echo "no tab here"; } >notab.tsv
  bad "a line without a tab" "notab.tsv:4: no tab" notab.tsv dev.tsv
  { head -3 train.tsv; printf 'good\t\n'; } >empty.tsv
  bad "an empty text" "empty.tsv:4: empty text" empty.tsv dev.tsv
  { head -3 dev.tsv; printf 'neutral\tpan\n'; } >unseen.tsv
  bad "a dev label never seen in training" "unseen.tsv:4: label 'neutral' was never seen in training" train.tsv unseen.tsv
  grep '^good' train.tsv >oneclass.tsv
  bad "one class only" "needs at least two classes" oneclass.tsv dev.tsv
  # A header, a label with a space at its end and a third column would each be read as data.
  { printf 'label\ttext\n'; cat train.tsv; } >header.tsv
  bad "a header line" "header.tsv:1: a header line" header.tsv dev.tsv
  { head -3 train.tsv; printf 'good \tpan dobry\n'; } >space.tsv
  bad "a label ending in a space" "space.tsv:4: label 'good ' begins or ends with a space" space.tsv dev.tsv
  { head -3 train.tsv; printf 'good\t17\tpan dobry\n'; } >columns.tsv
  bad "a third column" "columns.tsv:4: more than one tab" columns.tsv dev.tsv
  printf 'good\tpan \xC3\x28\n' >utf8.tsv
  bad "invalid UTF-8" "utf8.tsv:1: invalid UTF-8" train.tsv utf8.tsv
  cut -f2 train.tsv >text2.txt
  "$POTOP" train --data text2.txt --out gpt2 --n-layer 1 --n-head 2 --n-embd 16 --block-size 32 --steps 1 \
    --batch-size 4 --eval-iters 1 --threads 1 2>/dev/null || fail "tiny GPT for the errors"
  "$POTOP" classify train --data train.tsv --dev dev.tsv --out words "${SMALL[@]}" --steps 1 2>/dev/null || fail "a word tokenizer"
  bad "a tokenizer that differs from --init-from's" "--tokenizer words: differs from the tokenizer of --init-from gpt2" \
    train.tsv dev.tsv --init-from gpt2 --tokenizer words
  expect_error "classify train: a shape flag with --init-from" 1 strict "--n-embd: the body's shape comes from --init-from" -- \
    classify train --data train.tsv --dev dev.tsv --out bad --init-from gpt2 --n-embd 32 --steps 1
  expect_error "classify train: --init-from a classifier" 1 strict "--init-from words" "a text classifier" -- \
    classify train --data train.tsv --dev dev.tsv --out bad --init-from words --steps 1
  [ ! -e bad ] || fail "classify train: a refused --init-from wrote bad/"
  cp gpt2/best.safetensors gpt2-best.before
  expect_error "classify train: --init-from X --out X --force" 1 strict "--init-from gpt2: is in --out gpt2" -- \
    classify train --data train.tsv --dev dev.tsv --out gpt2 --init-from gpt2 --steps 1 --force
  cmp -s gpt2/best.safetensors gpt2-best.before || fail "classify train --init-from gpt2 --out gpt2 --force changed gpt2"
  expect_error "classify eval: a label never seen in training" 1 strict "unseen.tsv:4: label 'neutral'" -- \
    classify eval -m words --data unseen.tsv
  printf 'pan\n\nzły\n' >gap.txt
  expect_error "classify predict: an empty line" 1 strict "gap.txt:2: empty text" -- classify predict -m words --input gap.txt
  expect_error "classify eval of a GPT" 1 strict "a decoder-only Transformer language model" -- classify eval -m gpt2 --data dev.tsv
  expect_error "potop eval of a classifier" 1 strict "text classifier" "potop classify" -- eval -m words --data dev.tsv
fi
if [ "$GROUP" = mpi ]; then
  MPI=("$MPIRUN" --oversubscribe --bind-to none --mca btl self,vader)
  [ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  A=(--data train.tsv --dev dev.tsv "${SMALL[@]}" --steps 8 --eval-interval 4)
  "$POTOP" classify train "${A[@]}" --grad-accum 2 --out one 2>one.log || fail "one process: $(tail -n 3 one.log)"
  timeout 120 "${MPI[@]}" -np 2 "$POTOP" classify train "${A[@]}" --out two 2>two.log >/dev/null ||
    fail "2 ranks: $(tail -n 5 two.log)"
  # Equal to float rounding: the ranks sum the gradients in another order.
  if python3 - one/metrics.jsonl two/metrics.jsonl <<'PY' && [ "$(grep -c '^eval step' two.log)" = 3 ]; then
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
assert len(a) == len(b), (a, b)
for x, y in zip(a, b):
    for k in ("loss", "val_loss", "train_loss", "dev_accuracy", "grad_norm"):
        if k in x: assert abs(x[k] - y[k]) <= 1e-4 * max(1.0, abs(x[k])), (k, x, y)
PY
    ok "classify train: 2 ranks = one process with --grad-accum 2 (losses, dev accuracy), rank 0 alone prints"
  else
    fail "classify train: 2 ranks differ from one process: $(diff <(losses one) <(losses two) | head -4)"
  fi
fi
finish
