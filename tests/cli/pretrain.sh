#!/usr/bin/env bash
# potop translate pretrain (T5's span corruption) and translate train --init-from, end to end on
# toy data: the model directory (kind encoder-decoder, the sentinels in its vocabulary), the loss
# going down, a run stopped half way and resumed writing the same metrics as a straight one,
# --force, bad input (missing, empty or blank --data, no --tokenizer); then fine-tuning from the
# pre-trained model, and the refusals of --init-from: a GPT's directory, another tokenizer, a
# changed shape, --init-from on --resume.
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
make_pairs pairs.tsv 400
cut -f1 pairs.tsv >words.txt
cat text.txt words.txt >both.txt
"$POTOP" tokenizer train --kind bpe --data both.txt --out tok --vocab-size 320 >/dev/null 2>tok.err \
  || fail "tokenizer train: $(cat tok.err)"

PRE=(--data text.txt --data words.txt --tokenizer tok --n-layer 1 --n-head 2 --n-embd 32 --block-size 24
     --batch-size 8 --dev-size 16 --eval-iters 2 --log-interval 5 --threads 1 --lr 3e-3 --min-lr 3e-3 --warmup 5)

# A pre-training run: 60 steps, evaluated every 30.
if "$POTOP" translate pretrain "${PRE[@]}" --out pre --steps 60 --eval-interval 30 2>pre.log; then
  ok "translate pretrain: 60 steps"
else
  fail "translate pretrain failed: $(tail -5 pre.log)"
fi
if out=$(/usr/bin/python3 - pre tok <<'PY' 2>&1
import json, sys
d, tok = sys.argv[1], sys.argv[2]
c = json.load(open(f"{d}/config.json"))
m = c["model"]
size = sum(1 for _ in open(f"{tok}/tokenizer.vocab", encoding="utf-8"))
assert c["kind"] == "encoder-decoder", c["kind"]
# chunks of up to 23 tokens: round(23 * 0.15) = 3 noise tokens in 1 span
assert m["sentinels"] == 1, m
assert m["vocab_size"] == size + m["sentinels"], (m["vocab_size"], size)
evals = [r for r in map(json.loads, open(f"{d}/metrics.jsonl")) if r["kind"] == "eval"]
assert [r["step"] for r in evals] == [0, 30, 60], evals
assert evals[-1]["val_loss"] < evals[0]["val_loss"] - 0.5, evals
print(f"vocab {size} + {m['sentinels']} sentinel, val loss {evals[0]['val_loss']:.3f} -> {evals[-1]['val_loss']:.3f}")
PY
); then ok "pre-trained model directory: $out"; else fail "pre-trained model directory: $out"; fi
grep -q "span corruption: 0.15 of the tokens in spans of 3 on average; sentinels 320..320 (1)" pre.log \
  && ok "the log names the corruption and the sentinels" || fail "no corruption line: $(head -5 pre.log)"
"$POTOP" info -m pre >info.out 2>&1 && grep -q "encoder-decoder" info.out && ok "info reads it" \
  || fail "info -m pre: $(cat info.out)"

# Resume: 30 steps then resumed to 60 write what the straight 60 wrote (fresh corruption per
# micro-batch index, so the batches after the restart are the same).
"$POTOP" translate pretrain "${PRE[@]}" --out half --steps 30 --eval-interval 30 >/dev/null 2>half.log \
  || fail "pretrain 30 steps: $(tail -3 half.log)"
"$POTOP" translate pretrain --resume half --steps 60 >/dev/null 2>resume.log || fail "resume: $(tail -3 resume.log)"
if [ "$(losses pre)" = "$(losses half)" ]; then ok "stopped at 30 and resumed to 60: the same metrics as straight"
else fail "resumed run differs: $(diff <(losses pre) <(losses half) | head -4)"; fi

# --force: an --out holding a run is refused without it, replaced with it.
expect_error "pretrain into an existing run" 1 log "--force" -- translate pretrain "${PRE[@]}" --out pre --steps 2
"$POTOP" translate pretrain "${PRE[@]}" --out half --steps 4 --eval-interval 2 --force >/dev/null 2>force.log \
  && ! grep -q '"step":\(30\|60\)' half/metrics.jsonl && grep -q '"step":4,' half/metrics.jsonl \
  && ok "--force started over" || fail "--force: $(tail -3 force.log)"

# Bad input: one line, exit 1, nothing written.
: >empty.txt
printf '\n  \n\n' >blank.txt
expect_error "missing --data" 1 log "nope.txt" -- translate pretrain --data text.txt --data nope.txt --tokenizer tok --out bad1
expect_error "empty --data" 1 log "empty.txt" -- translate pretrain --data empty.txt --tokenizer tok --out bad2
expect_error "blank --data" 1 log "blank.txt" "no text" -- translate pretrain --data blank.txt --tokenizer tok --out bad3
expect_error "no --data" 1 strict "--data" -- translate pretrain --tokenizer tok --out bad4
expect_error "no --tokenizer" 1 strict "--tokenizer" -- translate pretrain --data text.txt --out bad5
expect_error "bad --noise-density" 1 strict "--noise-density" -- translate pretrain "${PRE[@]}" --noise-density 1.5 --out bad6
expect_error "--tokenizer on --resume" 1 log "--tokenizer" -- translate pretrain --resume pre --tokenizer tok --steps 80
for d in bad1 bad2 bad3 bad4 bad5 bad6; do [ -e "$d" ] && fail "refused run left $d behind"; done
ok "refused runs wrote nothing"

# Fine-tuning from the pre-trained model: its shape, tokenizer and sentinels.
FT=(--data pairs.tsv --columns a,b --source a --target b --dev-size 20 --test-size 20 --batch-tokens 240 --eval-sentences 8
    --log-interval 5 --threads 1 --lr-schedule cosine --lr 1e-3 --min-lr 1e-3 --warmup 5)
if "$POTOP" translate train "${FT[@]}" --init-from pre --out ft --steps 20 --eval-interval 10 2>ft.log \
   && grep -q "fine-tuning from pre" ft.log; then ok "translate train --init-from pre: $(grep -m1 fine-tuning ft.log)"
else fail "translate train --init-from: $(tail -5 ft.log)"; fi
if out=$(/usr/bin/python3 - <<'PY' 2>&1
import json
a, b = json.load(open("pre/config.json"))["model"], json.load(open("ft/config.json"))["model"]
assert a == b, (a, b)
print(f"n_embd {b['n_embd']}, vocab {b['vocab_size']}, sentinels {b['sentinels']}")
PY
); then ok "fine-tuned model keeps the shape and sentinels: $out"; else fail "fine-tuned config: $out"; fi
cmp -s pre/tokenizer.model ft/tokenizer.model && ok "fine-tuned model has the pre-trained tokenizer" || fail "tokenizer differs"
head -3 ft/test.tsv | cut -f1 >src.txt
"$POTOP" translate --model ft --input src.txt --threads 1 >out.txt 2>tr.err && [ "$(wc -l <out.txt)" = 3 ] \
  && ok "the fine-tuned model translates" || fail "translate --model ft: $(cat tr.err)"
"$POTOP" translate train "${FT[@]}" --init-from pre --tokenizer tok --out ft2 --steps 2 --eval-interval 2 >/dev/null 2>ft2.log \
  && ok "--init-from with its own tokenizer named again" || fail "--init-from --tokenizer (the same): $(tail -2 ft2.log)"
"$POTOP" translate train --resume ft --steps 30 >/dev/null 2>ftr.log && [ "$(count_records ft)" = 6 ] \
  && ok "the fine-tuning run resumes" || fail "resume ft: $(tail -3 ftr.log)"

# The refusals of --init-from.
"$POTOP" tokenizer train --kind bpe --data text.txt --out other --vocab-size 340 >/dev/null 2>&1
"$POTOP" train --data text.txt --out gpt --steps 2 "${TINY[@]}" >/dev/null 2>gpt.log || fail "gpt: $(tail -2 gpt.log)"
expect_error "--init-from a GPT" 1 log "gpt" "not a translation model" -- translate train "${FT[@]}" --init-from gpt --out bad7
expect_error "--init-from with another tokenizer" 1 log "--tokenizer other" "--init-from pre" -- \
  translate train "${FT[@]}" --init-from pre --tokenizer other --out bad8
expect_error "--init-from with another shape" 1 log "--n-embd 64" "the model has 32" -- \
  translate train "${FT[@]}" --init-from pre --n-embd 64 --out bad9
expect_error "--init-from on --resume" 1 log "--init-from" "new run" -- translate train --resume ft --init-from pre --steps 40
expect_error "--init-from a missing directory" 1 log "nowhere" -- translate train "${FT[@]}" --init-from nowhere --out bad10
# --out naming the model it starts from, even with --force; --vocab-size with a model's tokenizer.
cp pre/best.safetensors pre-best.before
expect_error "--init-from X --out X --force" 1 strict "--init-from pre: is in --out pre" "choose another --out" -- \
  translate train "${FT[@]}" --init-from pre --out pre --force --steps 2
cmp -s pre/best.safetensors pre-best.before && [ ! -e pre/train.tsv ] && ok "the pre-trained model is untouched" ||
  fail "translate train --init-from pre --out pre --force changed pre: $(ls pre)"
expect_error "--vocab-size with --init-from" 1 strict "--vocab-size" "--init-from pre" "drop the flag" -- \
  translate train "${FT[@]}" --init-from pre --vocab-size 500 --out bad11
# Resuming with the other encoder-decoder trainer names the one that trained it.
expect_error "translate pretrain --resume of a translation run" 1 strict \
  "ft: the training run of potop translate train, not of potop translate pretrain" "potop translate train --resume ft" -- \
  translate pretrain --resume ft --steps 40
expect_error "translate train --resume of a pre-training run" 1 strict \
  "pre: the training run of potop translate pretrain" "potop translate pretrain --resume pre" -- \
  translate train --resume pre --steps 80
# A state from before potop.trainer: an option this trainer lacks says another command trained it.
cp -r ft old-ft
/usr/bin/python3 - old-ft/resume.safetensors <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); del h["__metadata__"]["potop.trainer"]
t = json.dumps(h).encode(); t += b" " * (-len(t) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(t)) + t + b[8 + n:])
PY
expect_error "translate pretrain --resume of an older translation run" 1 strict \
  "old-ft: its training options hold '" "which potop translate pretrain does not take: another command trained" -- \
  translate pretrain --resume old-ft --steps 40
# A char or word tokenizer would turn what it has not seen into other tokens, silently.
"$POTOP" tokenizer train --kind char --data both.txt --out chars >/dev/null 2>&1 || fail "tokenizer train --kind char"
"$POTOP" tokenizer train --kind word --data both.txt --out words >/dev/null 2>&1 || fail "tokenizer train --kind word"
expect_error "pretrain with a char tokenizer" 1 strict "--tokenizer chars: a char tokenizer" "bpe or unigram" -- \
  translate pretrain --data text.txt --tokenizer chars --out bad12 --steps 2
expect_error "translate train with a word tokenizer" 1 strict "--tokenizer words: a word tokenizer" "bpe or unigram" -- \
  translate train "${FT[@]}" --tokenizer words --out bad13 --steps 2
# eval of a pre-trained model: no pairs to score, said in one line.
expect_error "eval of a T5 pre-trained model" 1 strict "-m pre: a T5 pre-trained model" "translate train --init-from pre" -- \
  eval -m pre
expect_error "translate eval of a T5 pre-trained model" 1 strict "-m pre: a T5 pre-trained model" \
  "translate train --init-from pre" -- translate eval -m pre --data pairs.tsv
for d in bad7 bad8 bad9 bad10 bad11 bad12 bad13; do [ -e "$d" ] && fail "refused fine-tuning left $d behind"; done
ok "refused fine-tuning runs wrote nothing"

finish
