#!/usr/bin/env bash
# potop translate end to end on a toy task: a small encoder-decoder learns to copy short
# sequences of words and must get every held-out sentence exactly right (greedy and beam 4), the
# same decoded one sentence at a time or several together; eval prints BLEU 100 and the signature; the cross-attention page is written; a run stopped at half
# way and resumed writes the same metrics as one that ran straight through; bad pairs files are
# reported by line; decoder-only and encoder-decoder model directories are refused by the other's
# command.
POTOP=$1
source "$(dirname "$0")/lib.sh"

# 1200 pairs "w1 w2 w3" -> "w1 w2 w3" of 3 to 5 words from 8 (lib.sh). (Reversal is learned
# too, but needs about 3 times the steps: too slow for a test run under the sanitizers.)
make_pairs pairs.tsv 1200

TOY=(--columns fwd,rev --vocab-size 300 --n-layer 2 --n-head 2 --n-embd 64
     --block-size 16 --norm pre --dropout 0 --label-smoothing 0 --batch-tokens 320 --lr-schedule cosine
     --eval-interval 250 --eval-sentences 50 --log-interval 50 --threads 1)
# The copy run: cosine 1e-3 -> 1e-5 over its 1000 steps. (A constant 1e-3 left 2-3 of 100 wrong;
# decayed, every held-out sentence is exact at 1 and 2 threads and with other seeds.) The other
# runs keep a constant rate, so that a run stopped early and resumed follows the same schedule.
COPY_LR=(--lr 1e-3 --min-lr 1e-5 --warmup 20)
FLAT_LR=(--lr 1e-3 --min-lr 1e-3 --warmup 20)
DIR=(--source fwd --target rev)
SPLIT=(--dev-size 100 --test-size 100)

if "$POTOP" translate train --data pairs.tsv --out m "${TOY[@]}" "${COPY_LR[@]}" "${DIR[@]}" "${SPLIT[@]}" --steps 1000 2>train.log; then
  ok "translate train: 1000 steps"
else
  fail "translate train failed: $(tail -5 train.log)"
fi
[ -f m/test.tsv ] && [ -f m/dev.tsv ] && [ -f m/train.tsv ] && [ -f m/best.safetensors ] && grep -q dev_bleu m/metrics.jsonl \
  && ok "model directory: split, checkpoints, dev BLEU in metrics.jsonl" || fail "model directory incomplete: $(ls m)"
[ "$(wc -l <m/test.tsv)" = 100 ] && [ "$(wc -l <m/dev.tsv)" = 100 ] && [ "$(wc -l <m/train.tsv)" = 1000 ] \
  && ok "split 1000/100/100" || fail "split sizes: $(wc -l m/*.tsv)"

cut -f1 m/test.tsv >src.txt
cut -f2 m/test.tsv >want.txt
for beam in 1 4; do
  "$POTOP" translate --model m --threads 1 --beam "$beam" --input src.txt >got.txt 2>err.txt || fail "translate --beam $beam: $(cat err.txt)"
  right=$(paste got.txt want.txt | awk -F'\t' '$1 == $2' | wc -l)
  [ "$right" = 100 ] && ok "beam $beam: $right/100 held-out sentences exact" \
    || fail "beam $beam: $right/100 exact; first wrong: $(paste got.txt want.txt | awk -F'\t' '$1 != $2' | head -3)"
  # Sentences decoded together (the file default, 8, and 32 at a time with a blank line among them)
  # give one-sentence-at-a-time's lines, in order.
  sed '5s/.*//' src.txt >src_blank.txt
  "$POTOP" translate --model m --threads 1 --beam "$beam" --batch-sentences 1 --input src_blank.txt >one.txt 2>err.txt \
    || fail "translate --batch-sentences 1: $(cat err.txt)"
  "$POTOP" translate --model m --threads 1 --beam "$beam" --batch-sentences 32 --input src_blank.txt >many.txt 2>err.txt \
    || fail "translate --batch-sentences 32: $(cat err.txt)"
  [ "$(sed -n 5p one.txt)" = "" ] && cmp -s one.txt many.txt && cmp -s <(sed 5d one.txt) <(sed 5d got.txt) \
    && ok "beam $beam: batches of 32 and of 8 (the default) sentences give one-at-a-time's translations" \
    || fail "beam $beam: batched translations differ: $(diff one.txt many.txt | head -3)"
done
printf 'kot pies dom\n\nlas las rzeka\n' | "$POTOP" translate --model m --threads 1 >stdin.txt 2>err.txt
[ "$(sed -n 1p stdin.txt)" = "kot pies dom" ] && [ "$(sed -n 2p stdin.txt)" = "" ] && [ "$(sed -n 3p stdin.txt)" = "las las rzeka" ] \
  && ok "stdin: one line out per line in, empty stays empty" || fail "stdin: $(cat stdin.txt) $(cat err.txt)"
printf 'kot pies dom\n\nlas las rzeka\n' | "$POTOP" translate --model m --threads 1 --batch-sentences 2 >stdin2.txt 2>err.txt
cmp -s stdin.txt stdin2.txt && ok "stdin with --batch-sentences 2: the same lines" || fail "stdin batched: $(cat stdin2.txt) $(cat err.txt)"
printf 'kot pies dom\nlas \xff\n' >badline.txt
rc=0; "$POTOP" translate --model m --threads 1 --input badline.txt >partial.txt 2>err.txt || rc=$?
[ "$rc" = 1 ] && [ "$(cat partial.txt)" = "kot pies dom" ] && grep -q 'badline.txt:2: invalid UTF-8' err.txt \
  && ok "invalid UTF-8 in a batch: the lines before it translated, the line named" || fail "bad line in a batch: $(cat partial.txt) $(cat err.txt)"

"$POTOP" translate eval --model m --threads 1 --data m/test.tsv >eval.txt 2>err.txt || fail "eval: $(cat err.txt)"
grep -qE '^BLEU 100\.00 .*tok:13a\|smooth:exp' eval.txt && grep -qE '^chrF 100\.00 .*nc:6' eval.txt \
  && ok "eval: BLEU and chrF 100 with signatures" || fail "eval: $(cat eval.txt)"

"$POTOP" translate attention --model m --text "kot pies dom" --out attn.html 2>err.txt || fail "attention: $(cat err.txt)"
grep -q '<svg' attn.html && grep -q 'Decoder layer 1' attn.html && ok "cross-attention page" || fail "attention page"

# Resume: 100 steps, then on to 200, gives a straight 200-step run's training records (same thread
# count); the half run adds its own final evaluation at step 100.
"$POTOP" translate train --data pairs.tsv --out s "${TOY[@]}" "${FLAT_LR[@]}" "${DIR[@]}" "${SPLIT[@]}" --steps 200 2>/dev/null || fail "straight run"
"$POTOP" translate train --data pairs.tsv --out r "${TOY[@]}" "${FLAT_LR[@]}" "${DIR[@]}" "${SPLIT[@]}" --steps 100 2>/dev/null || fail "half run"
"$POTOP" translate train --resume r --steps 200 2>resume.log || fail "resume: $(tail -3 resume.log)"
if diff <(losses s | grep '"kind":"train"') <(losses r | grep '"kind":"train"') >/dev/null \
   && [ "$(losses r | grep -c '"kind":"train"')" = 4 ]; then
  ok "resume: training records identical to the uninterrupted run"
else
  fail "resume: metrics differ: $(diff <(losses s) <(losses r) | head -5)"
fi

# Bad input.
printf 'a b\tb a\nno tab here\n\tonly target\nc d\td c\n' >bad.tsv
"$POTOP" translate train --data bad.tsv --out b "${TOY[@]}" "${FLAT_LR[@]}" "${DIR[@]}" --dev-size 0 --test-size 0 --steps 1 2>bad.log || true
grep -q '2 bad lines skipped: line 2: no tab' bad.log && ok "bad lines skipped and reported" || fail "bad lines: $(head -3 bad.log)"
expect_error "bad line with --bad-lines error" 1 log "bad.tsv:2" "no tab" -- \
  translate train --data bad.tsv --out b2 "${TOY[@]}" "${FLAT_LR[@]}" "${DIR[@]}" "${SPLIT[@]}" --bad-lines error
printf 'a\tb\n\xff\xfe\tc\n' >utf8.tsv
expect_error "invalid UTF-8" 1 log "utf8.tsv:2" "invalid UTF-8" -- translate train --data utf8.tsv --out b3 "${TOY[@]}" "${FLAT_LR[@]}" "${DIR[@]}" "${SPLIT[@]}"
expect_error "source column not in --columns" 1 log "--source de" -- \
  translate train --data pairs.tsv --out b4 "${TOY[@]}" "${FLAT_LR[@]}" "${SPLIT[@]}" --source de --target rev
# A user's file where a run writes its own: train.tsv in a directory without a run is the user's,
# refused with or without --force; an existing --out of translate attention needs --force.
mkdir mine && printf 'my own\tpairs\n' >mine/train.tsv && cp mine/train.tsv mine.before
expect_error "train.tsv of the user in --out" 1 strict "--out mine holds train.tsv" "move it" -- \
  translate train --data pairs.tsv --out mine "${TOY[@]}" "${DIR[@]}" "${SPLIT[@]}" --steps 1
expect_error "train.tsv of the user in --out, --force" 1 strict "--out mine holds train.tsv" -- \
  translate train --data pairs.tsv --out mine "${TOY[@]}" "${DIR[@]}" "${SPLIT[@]}" --steps 1 --force
cmp -s mine/train.tsv mine.before && [ "$(ls mine)" = train.tsv ] && ok "the user's train.tsv is untouched" ||
  fail "mine/ changed: $(ls mine)"
expect_error "translate attention --out an existing file" 1 strict "--out mine/train.tsv: exists" "--force" -- \
  translate attention --model m --text "kot pies" --out mine/train.tsv
cmp -s mine/train.tsv mine.before || fail "translate attention replaced mine/train.tsv"
mkdir gpt && printf '{"kind": "gpt", "model": {}}\n' >gpt/config.json
expect_error "decoder-only model given to translate" 1 strict "decoder-only" "potop sample" -- translate --model gpt
expect_error "translation model given to sample" 1 log "translation model" "potop translate" -- sample --model m
finish
