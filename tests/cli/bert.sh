#!/usr/bin/env bash
# potop bert pretrain / bert fill, and potop eval, attention and info of a BERT, on a small
# synthetic corpus with a small BPE tokenizer; then the bad inputs: one "potop: error:" line,
# exit 1, nothing written.
#   bert.sh <potop> [models|errors]   (no group: both)
POTOP=$1
GROUP=${2:-all}
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
make_corpus held.txt 600
"$POTOP" tokenizer train --kind bpe --vocab-size 300 --data text.txt --out tok >/dev/null 2>tok.log \
  || fail "tokenizer train --kind bpe: $(cat tok.log)"
MODEL=(--n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --eval-iters 2 --log-interval 1 --threads 1)
SMALL=(--tokenizer tok "${MODEL[@]}")
# No run of these needs its own data: the same text, the same tokenizer.
pretrain() {  # pretrain <out> <options>...: a tiny run on text.txt
  local out=$1
  shift
  "$POTOP" bert pretrain --data text.txt "${SMALL[@]}" --out "$out" "$@"
}
# Training records and evaluations without their timings (lib.sh's losses).
same_losses() { diff <(losses "$1") <(losses "$2" | grep -v "$3") >/dev/null; }

if [ "$GROUP" = all ] || [ "$GROUP" = models ]; then
  if pretrain m --steps 6 --eval-interval 3 --json >run.json 2>run.log && [ -f m/best.safetensors ] &&
      [ -f m/resume.safetensors ] && [ -f m/tokenizer.model ] && grep -q '"kind": "bert"' m/config.json &&
      /usr/bin/python3 - m <<'PY'
import json, sys
d = sys.argv[1]
config = json.load(open(f"{d}/config.json"))
# [MASK] is one id past the tokenizer's 300.
assert config["model"]["vocab_size"] == 301, config["model"]
evals = [r for r in map(json.loads, open(f"{d}/metrics.jsonl")) if r["kind"] == "eval"]
assert [e["step"] for e in evals] == [0, 3, 6], evals
assert all(0 <= e["mlm_accuracy"] <= 1 and 4 < e["val_loss"] < 7 for e in evals), evals
PY
  then
    ok "bert pretrain: $(cat run.json)"
  else
    fail "bert pretrain: $(cat run.log)"
  fi
  grep -q '^masked LM: 5 of the 30 tokens of each row' run.log && ok "says what it masks: $(grep '^masked LM' run.log)" \
    || fail "no masking line: $(cat run.log)"

  # Resume to more steps, then --force: a new run in the same directory.
  if "$POTOP" bert pretrain --resume m --steps 10 >/dev/null 2>resume.log && grep -q 'resuming m at step 6 of 10' resume.log &&
      [ "$(count_records m)" = 10 ]; then
    ok "bert pretrain --resume: continued to step 10"
  else
    fail "bert pretrain --resume: $(cat resume.log)"
  fi
  if pretrain m --steps 2 --eval-interval 2 --force >/dev/null 2>force.log && [ "$(count_records m)" = 2 ]; then
    ok "bert pretrain --force: a new run (2 records)"
  else
    fail "bert pretrain --force: $(count_records m) records: $(cat force.log)"
  fi
  pretrain m --steps 6 --eval-interval 3 --force >/dev/null 2>&1 || fail "bert pretrain (again)"

  # Exact resume: stopped at step 5 and resumed to 8, the run logs the uninterrupted run's losses
  # (its masks are seeded by the step, its windows come from the saved sampler) and ends with its
  # weights, bit for bit. The 5-step run ended with an evaluation the other did not make.
  pretrain full --steps 8 --eval-interval 4 --dropout 0.1 >/dev/null 2>full.log || fail "full: $(tail -n 3 full.log)"
  pretrain part --steps 5 --eval-interval 4 --dropout 0.1 >/dev/null 2>part.log || fail "part: $(tail -n 3 part.log)"
  "$POTOP" bert pretrain --resume part --steps 8 >/dev/null 2>>part.log || fail "resume part: $(tail -n 3 part.log)"
  same_losses full part '"kind":"eval",.*"step":5,' && ok "resumed at step 5: the uninterrupted run's losses" \
    || fail "resumed run's losses differ: $(diff <(losses full) <(losses part) | head -n 6)"
  cmp -s full/latest.safetensors part/latest.safetensors && ok "resumed at step 5: the same final weights" \
    || fail "the resumed run's final weights differ"

  # A prepared directory (potop prepare with the same tokenizer) is the same data: the same run.
  "$POTOP" prepare --data text.txt --tokenizer tok --out prep >/dev/null 2>prep.log || fail "prepare: $(cat prep.log)"
  if "$POTOP" bert pretrain --data prep "${MODEL[@]}" --out from-prep --steps 8 --eval-interval 4 --dropout 0.1 \
      >/dev/null 2>prep.log && grep -q '^data: prep (prepared)' prep.log && diff <(losses full) <(losses from-prep) >/dev/null; then
    ok "bert pretrain --data <prepared dir>: the run of the text"
  else
    fail "bert pretrain --data <prepared dir>: $(tail -n 3 prep.log) $(diff <(losses full) <(losses from-prep) | head -n 4)"
  fi

  # Training lowers the masked-LM loss: at chance (ln 301 = 5.7) first, well below it after 60 steps.
  pretrain learn --steps 60 --eval-interval 30 --lr 1e-2 --warmup 5 --dropout 0 >/dev/null 2>learn.log \
    || fail "learn: $(tail -n 3 learn.log)"
  /usr/bin/python3 - learn/metrics.jsonl <<'PY' && ok "bert pretrain: the validation loss falls" || fail "bert pretrain: the validation loss does not fall"
import json, sys
evals = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "eval"]
print(" ".join(f"{e['step']}: {e['val_loss']:.3f}" for e in evals))
assert evals[0]["val_loss"] > 5.4 and evals[-1]["val_loss"] < evals[0]["val_loss"] - 1.0, evals
PY

  # fill: the top k of each [MASK], as text (a header per mask when there are several) and JSON.
  if "$POTOP" bert fill -m learn "pan [MASK] zawołał" >fill.txt 2>fill.log && [ "$(grep -c '%' fill.txt)" = 5 ] &&
      "$POTOP" bert fill -m learn -k 3 "pan [MASK] zawołał [MASK]" >fill2.txt 2>>fill.log &&
      [ "$(grep -c '^\[MASK\] [12]:$' fill2.txt)" = 2 ] && [ "$(grep -c '%' fill2.txt)" = 6 ]; then
    ok "bert fill: $(head -n 1 fill.txt | tr -s ' ')"
  else
    fail "bert fill: $(cat fill.txt fill2.txt fill.log)"
  fi
  if "$POTOP" bert fill -m learn --json -k 4 "a [MASK] zagłoba [MASK]" >fill.json 2>fill.log &&
      /usr/bin/python3 - fill.json <<'PY'
import json, sys
masks = json.load(open(sys.argv[1]))
assert len(masks) == 2 and all(len(m) == 4 for m in masks), masks
for m in masks:
    scores = [c["score"] for c in m]
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1 + 1e-9, scores
    for c in m:
        assert set(c) == {"score", "token", "token_str", "sequence"}, c
        assert 4 <= c["token"] < 300, c  # an ordinary token: no special, no [MASK] (300)
        # the prompt with this fill in the mask's place (a piece without "▁" continues the word
        # before it) and the other mask kept
        assert c["sequence"].startswith("a") and "zagłoba" in c["sequence"], c
        assert c["sequence"].count("[MASK]") == 1, c
PY
  then
    ok "bert fill --json: $(head -c 120 fill.json)..."
  else
    fail "bert fill --json: $(cat fill.json fill.log)"
  fi
  # A byte piece alone is not UTF-8: JSON still (U+FFFD), as sample --json writes it.
  if "$POTOP" bert fill -m m --json -k 40 "pan [MASK]" >bytes.json 2>bytes.log && /usr/bin/python3 -c \
      'import json, sys; assert len(json.load(open(sys.argv[1]))[0]) == 40' bytes.json; then
    ok "bert fill --json of an untrained model (byte pieces among the fills)"
  else
    fail "bert fill --json, byte pieces: $(cat bytes.log)"
  fi

  # eval: the masked-LM loss and accuracy of fixed masks (the same numbers twice, and on two threads).
  if "$POTOP" eval -m learn --data held.txt >eval.txt 2>eval.log && grep -q 'masked-LM loss [0-9.]* per token' eval.txt &&
      "$POTOP" eval -m learn --data held.txt --json >eval.json 2>>eval.log &&
      "$POTOP" eval -m learn --data held.txt --json >eval2.json 2>>eval.log && cmp -s eval.json eval2.json &&
      "$POTOP" eval -m learn --data held.txt --json --threads 2 >eval3.json 2>>eval.log &&
      /usr/bin/python3 - eval.json learn/metrics.jsonl eval3.json <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
# Two replicas, each scoring its rows: the same masks, the same numbers (up to rounding).
r2 = json.load(open(sys.argv[3]))
assert (r2["masked"], r2["tokens"]) == (r["masked"], r["tokens"]) and abs(r2["loss"] - r["loss"]) < 1e-6 * r["loss"], (r, r2)
assert abs(r2["accuracy"] - r["accuracy"]) <= 1 / r["masked"], (r, r2)
assert r["kind"] == "bert" and r["tokens"] > 1000 and r["masked"] > 0.1 * r["tokens"], r
assert 0 <= r["accuracy"] <= 1 and abs(r["perplexity"] - math.exp(r["loss"])) < 1e-6 * r["perplexity"], r
val = [x for x in map(json.loads, open(sys.argv[2])) if x["kind"] == "eval"][-1]["val_loss"]
assert abs(r["loss"] - val) < 0.5, (r, val)  # held.txt is text of the same kind
PY
  then
    ok "eval of a BERT: $(grep 'loss' eval.txt)"
  else
    fail "eval of a BERT: $(cat eval.txt eval.json eval.log)"
  fi

  # attention: every layer and head, rows of softmax weights over the whole row (bidirectional).
  if "$POTOP" attention -m learn --prompt "pan [MASK] zawołał" --out att.html >att.out 2>att.log &&
      /usr/bin/python3 - att.html <<'PY'
import collections, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
assert html.count("<svg") == 4, html.count("<svg")  # 2 layers x 2 heads
assert "bidirectional" in html
assert "[CLS] (0)" in html and "[SEP] (" in html and "[MASK] (" in html, "the specials are not named"
cells = re.findall(r"<title>[^<]*\((\d+)\) → [^<]*\((\d+)\): ([0-9.]+)</title>", html)
T = max(int(i) for i, _, _ in cells) + 1  # [CLS] text [SEP]
assert T > 4 and len(cells) == 4 * T * T, (T, len(cells))
rows = collections.defaultdict(float)
right = 0.0
for n, (i, j, w) in enumerate(cells):
    rows[(n // (T * T), int(i))] += float(w)
    right += float(w) if int(j) > int(i) else 0.0
bad = {k: v for k, v in rows.items() if abs(v - 1) > 0.02}
assert not bad, bad
assert right > 1, "no weight right of the diagonal"
PY
  then
    ok "attention of a BERT: $(cat att.out)"
  else
    fail "attention of a BERT: $(cat att.out att.log)"
  fi

  # info names the kind and the commands that take it.
  if "$POTOP" info -m learn >info.txt 2>info.log && grep -q 'BERT (masked-LM encoder), 2 layers' info.txt &&
      grep -q 'potop bert fill' info.txt && "$POTOP" info -m learn --json >info.json 2>>info.log &&
      /usr/bin/python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["kind"] == "bert"' info.json; then
    ok "info of a BERT: $(head -n 1 info.txt)"
  else
    fail "info of a BERT: $(cat info.txt info.log)"
  fi
fi

if [ "$GROUP" = all ] || [ "$GROUP" = errors ]; then
  : >empty.txt
  printf 'kot\tcat\n' >pairs.tsv
  "$POTOP" tokenizer train --kind char --data text.txt --out chartok >/dev/null 2>&1 || fail "tokenizer train --kind char"
  [ -d m ] || pretrain m --steps 2 --eval-interval 2 >/dev/null 2>&1 || fail "bert pretrain m"
  "$POTOP" train --data text.txt --out gpt "${TINY[@]}" --steps 1 --eval-interval 1 >/dev/null 2>&1 || fail "train gpt"
  nothing_written() {  # nothing_written <name> <dir>
    [ ! -e "$2" ] || fail "$1: $2 was written: $(ls "$2")"
  }
  bad_run() {  # bad_run <name> <needle> <out> <bert pretrain args>...: exit 1, one line, no <out>
    local name=$1 needle=$2 out=$3
    shift 3
    expect_error "$name" 1 strict "$needle" -- bert pretrain "$@" --out "$out"
    nothing_written "$name" "$out"
  }
  S=(--n-layer 1 --n-head 2 --n-embd 16 --block-size 16 --steps 2 --threads 1)
  bad_run "char tokenizer (no --tokenizer)" "a char tokenizer" e1 --data text.txt "${S[@]}"
  bad_run "--tokenizer of kind char" "--tokenizer chartok: a char tokenizer" e2 --data text.txt --tokenizer chartok "${S[@]}"
  bad_run "no --data" "--data" e3 --tokenizer tok "${S[@]}"
  bad_run "missing --data" "missing.txt" e4 --data missing.txt --tokenizer tok "${S[@]}"
  bad_run "empty --data" "empty.txt" e5 --data empty.txt --tokenizer tok "${S[@]}"
  bad_run "--mask-fraction 0" "--mask-fraction" e6 --data text.txt --tokenizer tok --mask-fraction 0 "${S[@]}"
  bad_run "--mask-fraction 1.5" "--mask-fraction" e7 --data text.txt --tokenizer tok --mask-fraction 1.5 "${S[@]}"
  bad_run "--block-size 2" "--block-size" e8 --data text.txt --tokenizer tok --n-layer 1 --n-head 2 --n-embd 16 --block-size 2
  bad_run "missing --tokenizer" "nodir" e9 --data text.txt --tokenizer nodir "${S[@]}"
  bad_run "--mask-in-vocab (an imported BERT's)" "--mask-in-vocab" e11 --data text.txt --tokenizer tok --mask-in-vocab "${S[@]}"
  expect_error "train --mlm-transform (a BERT's head)" 1 strict "--mlm-transform" -- \
    train --data text.txt --out e12 "${S[@]}" --mlm-transform
  nothing_written "train --mlm-transform" e12
  "$POTOP" prepare --data text.txt --out prep-char >/dev/null 2>&1 || fail "prepare with a char tokenizer"
  bad_run "a prepared directory of a char tokenizer" "prep-char: a char tokenizer" e10 --data prep-char "${S[@]}"
  expect_error "bert pretrain into a model" 1 strict "--out m" "--force" -- bert pretrain --data text.txt --tokenizer tok --out m
  expect_error "a BERT given to sample" 1 strict "m" "kind 'bert'" "not a GPT" "bert fill" -- sample -m m -p "pan"
  expect_error "a BERT given to translate" 1 strict "m" "kind 'bert'" "not a translation model" -- translate -m m -i pairs.tsv
  expect_error "a BERT given to translate eval" 1 strict "m" "kind 'bert'" -- translate eval -m m --data pairs.tsv
  expect_error "a GPT given to bert fill" 1 strict "gpt" "not a BERT" "potop sample" -- bert fill -m gpt "a [MASK]"
  expect_error "bert fill without [MASK]" 1 strict "[MASK]" -- bert fill -m m "pan zawołał"
  expect_error "bert fill -k 0" 1 strict "--top-k" -- bert fill -m m -k 0 "pan [MASK]"
  expect_error "bert fill, too long a prompt" 1 strict "block of 32" -- bert fill -m m "$(head -c 400 text.txt) [MASK]"
  expect_error "eval of a BERT on an empty text" 1 log "empty.txt" -- eval -m m --data empty.txt
  expect_error "attention of a BERT, too long a prompt" 1 strict "block of 32" -- attention -m m --prompt "$(head -c 400 text.txt)" --out a.html
  nothing_written "attention, too long a prompt" a.html
fi
finish
