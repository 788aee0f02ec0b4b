#!/usr/bin/env bash
# potop translate train's held-out pairs and defaults (issue 28, items 6 and 10): dev and test are
# a fraction of the pairs with caps (1,510 pairs train on 1,358, not 10) and a small training set
# draws a warning; --dev-size N given alone still holds out N; --dev-size 0 trains without dev
# pairs and says so, never calling the training loss a dev loss; the default schedule and
# vocabulary are the measured recipe's; a run saved before the fractions resumes with its own
# split and schedule; a byte-order mark is not part of the first sentence (train, translate eval,
# eval); translate eval names its bad lines on stderr; translate attention takes --threads.
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_pairs pairs.tsv 1510
T=(--columns a,b --source a --target b --vocab-size 280 --n-layer 1 --n-head 2 --n-embd 16 --block-size 24
   --batch-tokens 96 --eval-sentences 4 --log-interval 1 --threads 1)
lines() { wc -l <"$1" | tr -d ' '; }

# The split: 5% each of 1,510 pairs, and a warning on stderr about the 1,358 left to train on.
if "$POTOP" translate train --data pairs.tsv "${T[@]}" --steps 2 --out small >small.out 2>small.log; then
  [ "$(lines small/train.tsv)/$(lines small/dev.tsv)/$(lines small/test.tsv)" = 1358/76/76 ] &&
    grep -q '; train 1358, dev 76, test 76' small.log && ok "1,510 pairs: train 1358, dev 76, test 76 (5% each)" ||
    fail "1,510 pairs split $(lines small/train.tsv)/$(lines small/dev.tsv)/$(lines small/test.tsv): $(grep '^data:' small.log)"
  grep -q '^warning: pairs.tsv: only 1358 training pairs (of 1510; 76 dev and 76 test held out)' small.log &&
    ! grep -q warning small.out && ok "a warning on stderr: $(grep '^warning:' small.log | cut -c1-90)..." ||
    fail "no warning about 1358 training pairs on stderr: $(head -3 small.log)"
  # The measured recipe (docs/translation.md): cosine 1e-3 -> 1e-5 after 200 warm-up steps, BPE 4000.
  if out=$(/usr/bin/python3 - small/config.json <<'PY' 2>&1
import json, sys
t = json.load(open(sys.argv[1]))["training"]
want = {"lr_schedule": "cosine", "lr": 1e-3, "min_lr": 1e-5, "warmup": 200}
bad = [f"{k} {t.get(k)!r} (want {v!r})" for k, v in want.items()
       if (t.get(k) != v if isinstance(v, str) else abs(t.get(k, -1) - v) > 1e-9)]
if bad: sys.exit("; ".join(bad))
PY
  ) && "$POTOP" translate train --help >help.txt && grep -qE -- '--vocab-size INT=4000 ' help.txt &&
      grep -qE -- '--steps INT=4000 ' help.txt; then
    ok "defaults: cosine, lr 1e-3 -> 1e-5, warm-up 200, 4000 steps, BPE 4000"
  else
    fail "defaults are not the measured recipe: $out $(grep -E -- '--(vocab-size|steps) ' help.txt)"
  fi
else
  fail "translate train on 1,510 pairs: $(tail -n 3 small.log)"
fi

# Caps: a large file holds out 500 and 1,000 pairs, as before, with no warning.
make_pairs big.tsv 24000
"$POTOP" translate train --data big.tsv "${T[@]}" --steps 1 --out big >/dev/null 2>big.log &&
  grep -q '; train 22500, dev 500, test 1000' big.log && ! grep -q '^warning' big.log &&
  ok "24,000 pairs: dev 500 and test 1000 (the caps), no warning" || fail "24,000 pairs: $(head -n 3 big.log)"

# --dev-size / --test-size given alone: exactly that many; a fraction given: that fraction.
"$POTOP" translate train --data pairs.tsv "${T[@]}" --steps 1 --dev-size 20 --test-size 30 --out sized >/dev/null \
  2>sized.log && grep -q '; train 1460, dev 20, test 30' sized.log &&
  ok "--dev-size 20 --test-size 30: exactly 20 and 30" || fail "--dev-size 20 --test-size 30: $(grep -m1 '^data:\|error' sized.log)"
"$POTOP" translate train --data pairs.tsv "${T[@]}" --steps 1 --dev-fraction 0.1 --out frac >/dev/null 2>frac.log &&
  grep -q '; train 1283, dev 151, test 76' frac.log && ok "--dev-fraction 0.1: 151 dev pairs" ||
  fail "--dev-fraction 0.1: $(grep -m1 '^data:\|error' frac.log)"

# No dev pairs (--dev-size 0 or --dev-fraction 0): the run says so and reports the training loss
# as what it is, never as a dev loss (it printed "val loss" equal to the training loss).
for flag in "--dev-size 0" "--dev-fraction 0"; do
  dir=nodev${flag#--dev-}; dir=${dir// /}
  if "$POTOP" translate train --data pairs.tsv "${T[@]}" --steps 2 --eval-interval 1 $flag --out "$dir" >/dev/null \
       2>"$dir.log"; then
    grep -q "^note: $flag: no dev pairs: the evaluations measure the training loss only" "$dir.log" &&
      grep -q '(no validation split: the best checkpoint is picked by train loss)' "$dir.log" &&
      ! grep -qE 'val loss|dev_bleu' "$dir.log" && [ ! -s "$dir/dev.tsv" ] &&
      [ "$(grep -c '"kind":"eval".*"val_loss":null' "$dir/metrics.jsonl")" = 3 ] &&
      ok "$flag: no dev pairs, said so; the evaluations report the training loss only" ||
      fail "$flag: $(grep -E '^(note|eval)' "$dir.log" | head -n 3)"
  else
    fail "$flag: $(tail -n 2 "$dir.log")"
  fi
done
expect_error "--dev-size -1" 1 strict "--dev-size -1" ">= 0" -- translate train --data pairs.tsv "${T[@]}" --dev-size -1 --out neg
expect_error "--test-fraction 2" 1 strict "--test-fraction 2" "between 0 and 1" -- \
  translate train --data pairs.tsv "${T[@]}" --test-fraction 2 --out neg
[ ! -e neg ] && ok "a refused run writes nothing" || fail "neg written: $(ls neg)"
head -n 2 pairs.tsv >two.tsv
expect_error "2 pairs, 1 dev and 1 test" 1 strict "two.tsv: 2 pairs are too few" "1 dev pair (--dev-size 1)" "leaves none to train on" -- \
  translate train --data two.tsv "${T[@]}" --steps 1 --warmup 0 --dev-size 1 --test-size 1 --out two

# A run saved before the fractions existed (its options have sizes only, and the old defaults:
# noam at factor 1, warm-up 800, 500 dev and 1,000 test pairs) resumes with its own split and
# schedule, not with today's defaults: its training records are those of a straight run.
OLD=(--data pairs.tsv "${T[@]}" --lr-schedule noam --lr 1 --warmup 800 --dev-size 500 --test-size 1000)
"$POTOP" translate train "${OLD[@]}" --steps 4 --out straight >/dev/null 2>straight.log || fail "straight: $(tail -n 3 straight.log)"
"$POTOP" translate train "${OLD[@]}" --steps 2 --out old >/dev/null 2>old.log || fail "old run: $(tail -n 3 old.log)"
/usr/bin/python3 - old/resume.safetensors old/config.json <<'PY' || fail "could not age the run's options"
import json, struct, sys
state, config = sys.argv[1], sys.argv[2]
b = open(state, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
header = json.loads(b[8:8 + n])
options = json.loads(header["__metadata__"]["potop.options"])
for k in ("dev_fraction", "test_fraction"): del options[k]
header["__metadata__"]["potop.options"] = json.dumps(options, separators=(",", ":"))
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-(8 + len(text)) % 8)
open(state, "wb").write(struct.pack("<Q", len(text)) + text + b[8 + n:])
c = json.load(open(config))
for k in ("dev_fraction", "test_fraction"): del c["training"][k]
json.dump(c, open(config, "w"), indent=2)
PY
if "$POTOP" translate train --resume old --steps 4 >/dev/null 2>resume.log; then
  grep -q '; train 10, dev 500, test 1000' resume.log &&
    diff <(losses straight | grep '"kind":"train"') <(losses old | grep '"kind":"train"') >/dev/null &&
    grep -q '"lr_schedule": "noam"' old/config.json &&
    ok "a run saved before the fractions resumes with its split (10/500/1000) and its noam schedule" ||
    fail "resumed old run: $(grep '^data:' resume.log); $(diff <(losses straight) <(losses old) | head -n 4)"
else
  fail "resume of a run saved before the fractions: $(tail -n 3 resume.log)"
fi

# A byte-order mark at the start of the pairs is not part of the first sentence.
bom=$'\xef\xbb\xbf'
{ printf '%s' "$bom"; cat pairs.tsv; } >bom.tsv
"$POTOP" translate train --data bom.tsv "${T[@]}" --steps 1 --dev-size 20 --test-size 20 --out bom >/dev/null 2>bom.log ||
  fail "train on bom.tsv: $(tail -n 3 bom.log)"
[ -s bom/train.tsv ] && ! grep -q "$bom" bom/*.tsv && grep -qxF "$(head -n 1 pairs.tsv)" bom/*.tsv &&
  ok "train: the first pair without its byte-order mark in the split files" || fail "train: a byte-order mark in $(grep -l "$bom" bom/*.tsv)"
# potop eval: the reference of the first pair (column a, the target with --columns b,a) has no extra token.
"$POTOP" eval -m small --data pairs.tsv --columns b,a --threads 1 >plain.txt 2>/dev/null || true
"$POTOP" eval -m small --data bom.tsv --columns b,a --threads 1 >withbom.txt 2>/dev/null || true
[ -s plain.txt ] && [ "$(head -n 1 plain.txt | sed 's/^[^:]*://')" = "$(head -n 1 withbom.txt | sed 's/^[^:]*://')" ] &&
  ok "eval: the same target tokens with a byte-order mark" || fail "eval with a byte-order mark: $(head -n 1 plain.txt) vs $(head -n 1 withbom.txt)"

# A model that says something (a few hundred milliseconds): its own translations as references.
Q=(--columns a,b --source a --target b --vocab-size 280 --n-layer 1 --n-head 2 --n-embd 32 --block-size 24
   --batch-tokens 192 --eval-sentences 4 --log-interval 50 --threads 1 --dropout 0 --label-smoothing 0)
"$POTOP" translate train --data pairs.tsv "${Q[@]}" --steps 150 --lr-schedule cosine --lr 5e-3 --min-lr 1e-5 --warmup 10 \
  --dev-size 20 --test-size 20 --out q >/dev/null 2>q.log || fail "train q: $(tail -n 3 q.log)"
head -n 5 pairs.tsv | cut -f1 >src.txt
"$POTOP" translate --model q --input src.txt --threads 1 >hyp.txt 2>/dev/null || true
paste hyp.txt src.txt >own.tsv
{ printf '%s' "$bom"; cat own.tsv; } >ownbom.tsv
"$POTOP" translate eval --model q --data own.tsv --columns b,a --threads 1 >own.txt 2>/dev/null || true
"$POTOP" translate eval --model q --data ownbom.tsv --columns b,a --threads 1 >ownbom.txt 2>/dev/null || true
grep -q '[a-z]' hyp.txt && grep -q '^BLEU 100.00 ' own.txt && grep -q '^BLEU 100.00 ' ownbom.txt &&
  ok "translate eval: BLEU 100 on its own translations, with a byte-order mark too" ||
  fail "translate eval with a byte-order mark: $(head -n 1 own.txt) / $(head -n 1 ownbom.txt)"

# translate eval: the bad lines on stderr, the first five by line number, then how many more.
{ head -n 3 pairs.tsv; for i in 1 2 3 4 5 6 7; do echo "no tab $i"; done; sed -n 4,6p pairs.tsv; } >evbad.tsv
if "$POTOP" translate eval --model q --data evbad.tsv --threads 1 >ev.out 2>ev.err; then
  want="note: evbad.tsv: 7 bad lines skipped: line 4: no tab, line 5: no tab, line 6: no tab, line 7: no tab, line 8: no tab, and 2 more"
  grep -qxF "$want" ev.err && ! grep -q 'bad line' ev.out && grep -q '^6 sentences' ev.out &&
    ok "translate eval: $want (stderr)" || fail "translate eval's bad lines: stdout $(cat ev.out); stderr $(cat ev.err)"
else
  fail "translate eval on evbad.tsv: $(cat ev.err)"
fi

# translate attention --threads, as every command that runs a model.
"$POTOP" translate attention --model q --text "kot pies dom" --threads 1 --out attn.html 2>attn.log && grep -q '<svg' attn.html &&
  ok "translate attention --threads 1" || fail "translate attention --threads 1: $(cat attn.log)"
expect_error "translate attention --threads -1" 1 strict "--threads" -- translate attention --model q --text "kot" --threads -1
finish
