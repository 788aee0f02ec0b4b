#!/usr/bin/env bash
# potop quantize (issue 26): f16, q8_0 and q4_0 models load wherever a model loads (info, eval,
# sample, attention, serve, translate), score close to the float model, are smaller, and bad
# input is one line: a quantized model quantized again, an unknown type, an existing --out,
# training from a quantized model, a model without matrices, a damaged quantized file.
#   quantize.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
# 64 wide: every matrix's inputs (64, 256) fill whole blocks of 32.
"$POTOP" train --data text.txt --out model --steps 60 --eval-interval 60 --n-layer 2 --n-head 2 --n-embd 64 \
  --block-size 32 --batch-size 8 --eval-iters 2 --log-interval 60 --threads 1 2>train.log ||
  { cat train.log >&2; fail "train exited non-zero"; finish; }
"$POTOP" eval -m model --data text.txt --json --threads 1 >eval-f32.json 2>/dev/null || fail "eval of the float model"
"$POTOP" sample -m model --prompt "pan " --tokens 40 --temperature 0 --threads 1 >sample-f32.txt 2>/dev/null ||
  fail "sample of the float model"

loss_of() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["loss"])' "$1"; }
size_of() { stat -c %s "$1"; }
f32_loss=$(loss_of eval-f32.json)
previous=$(size_of model/best.safetensors)
# type, the largest loss difference allowed on this tiny model
for spec in f16:0.002 q8_0:0.01 q4_0:0.08; do
  type=${spec%%:*} tol=${spec#*:}
  if ! "$POTOP" quantize -m model --type "$type" --threads 1 >out.txt 2>err.txt; then
    fail "$type: quantize exited non-zero: $(cat err.txt)"; continue
  fi
  dir=model-$type
  [ "$(cat out.txt)" = "$dir" ] || fail "$type: printed '$(cat out.txt)', expected the output path $dir"
  grep -q "quantized 8 matrices to $type" err.txt || fail "$type: no summary line: $(cat err.txt)"
  for f in config.json vocab.json latest.safetensors metrics.jsonl; do [ -f "$dir/$f" ] || fail "$type: $dir/$f missing"; done
  [ ! -e "$dir/resume.safetensors" ] || fail "$type: the training state was copied"
  ls -a . | grep -q "^\.$dir\.tmp" && fail "$type: the staging directory was left behind"
  grep -q "\"quantized\": \"$type\"" "$dir/config.json" || fail "$type: config.json does not say quantized"
  size=$(size_of "$dir/latest.safetensors")
  if [ "$size" -lt "$previous" ]; then ok "$type: $size bytes, smaller than the format before ($previous)"
  else fail "$type: $size bytes, not smaller than $previous"; fi
  previous=$size
  "$POTOP" info -m "$dir" >info.txt && grep -q "latest.safetensors .*, $type " info.txt && grep -q "^quantized: $type (potop quantize" info.txt &&
    ok "$type: info names the type" ||
    fail "$type: info does not name the type"
  # It lists what works on it: quantizing again and fine-tuning from it are refused, so not those.
  commands=$(grep "^commands:" info.txt)
  if grep -q "potop sample" <<<"$commands" && ! grep -qE "potop quantize|--init-from" <<<"$commands"; then
    ok "$type: info's commands leave out quantize and train --init-from"
  else fail "$type: info lists $commands"; fi
  if "$POTOP" eval -m "$dir" --data text.txt --json --threads 1 >"eval-$type.json" 2>/dev/null; then
    loss=$(loss_of "eval-$type.json")
    if /usr/bin/python3 -c "import sys; sys.exit(abs($loss - $f32_loss) > $tol)"; then
      ok "$type: eval loss $loss vs float $f32_loss (within $tol)"
    else
      fail "$type: eval loss $loss vs float $f32_loss, more than $tol apart"
    fi
  else
    fail "$type: eval failed"
  fi
  if "$POTOP" sample -m "$dir" --prompt "pan " --tokens 40 --temperature 0 --threads 1 >"sample-$type.txt" 2>/dev/null; then
    ok "$type: sample: $(head -c 40 "sample-$type.txt" | tr '\n' ' ')"
  else
    fail "$type: sample failed"
  fi
  "$POTOP" attention -m "$dir" --prompt "pan zagłoba" --out "att-$type.html" --threads 1 >/dev/null 2>&1 &&
    [ -s "att-$type.html" ] && ok "$type: attention" || fail "$type: attention failed"
done
cmp -s sample-f32.txt sample-f16.txt && ok "f16: the same greedy text as float" ||
  fail "f16: greedy text differs from float's: $(head -c 60 sample-f16.txt) vs $(head -c 60 sample-f32.txt)"

# Two threads split the rows of each product: the same logits, so the same greedy text.
"$POTOP" sample -m model-q4_0 --prompt "pan " --tokens 40 --temperature 0 --threads 2 >sample-q4-2t.txt 2>/dev/null
cmp -s sample-q4_0.txt sample-q4-2t.txt && ok "q4_0: the same text on 1 and 2 threads" ||
  fail "q4_0: 1 and 2 threads differ"

# A lone weights file quantizes to a lone weights file that samples.
"$POTOP" quantize -m model/best.safetensors --type q8_0 --out lone-q8_0.safetensors >/dev/null 2>&1 &&
  "$POTOP" sample -m lone-q8_0.safetensors --prompt "pan " --tokens 10 --threads 1 >/dev/null 2>&1 &&
  ok "a lone weights file quantizes and samples" || fail "lone weights file"

# potop serve answers from a quantized model.
start_serve serve.log -m model-q8_0 --threads 1
if curl -sf "http://127.0.0.1:$PORT/v1/completions" -H 'Content-Type: application/json' \
  -d '{"prompt": "pan ", "max_tokens": 8, "temperature": 0}' >completion.json; then
  grep -q '"text"' completion.json && ok "serve: a completion from the q8_0 model" || fail "serve: $(cat completion.json)"
else
  fail "serve: the completion request failed: $(tail -n 3 serve.log)"
fi
kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true

# A translation model quantizes and translates like the float one.
make_pairs pairs.tsv 120
wide=()
for ((i = 0; i < ${#TINY_TRANSLATE[@]}; i++)); do  # TINY_TRANSLATE, 32 wide: whole blocks
  if [ "${TINY_TRANSLATE[$i]}" = --n-embd ]; then wide+=(--n-embd 32); i=$((i + 1)); else wide+=("${TINY_TRANSLATE[$i]}"); fi
done
if "$POTOP" translate train --data pairs.tsv --out tr --steps 300 "${wide[@]}" >/dev/null 2>&1; then
  "$POTOP" quantize -m tr --type q8_0 --threads 1 >/dev/null 2>err.txt || fail "translate: quantize: $(cat err.txt)"
  grep -q "kept float32" err.txt && fail "translate: a 32-wide model kept a matrix float32: $(cat err.txt)"
  printf 'kot pies dom\nlas rzeka góra morze\n' >src.txt
  "$POTOP" translate -m tr -i src.txt --threads 1 >tr-f32.txt 2>/dev/null
  if "$POTOP" translate -m tr-q8_0 -i src.txt --threads 1 >tr-q8.txt 2>/dev/null && [ "$(grep -c '[a-z]' tr-q8.txt)" = 2 ]; then
    ok "translate: q8_0 gives '$(tr '\n' '|' <tr-q8.txt)' (float: '$(tr '\n' '|' <tr-f32.txt)')"
  else
    fail "translate: the quantized model does not translate"
  fi
else
  fail "translate train failed"
fi

# Matrices whose inputs are not whole blocks stay float32, and the command says which.
"$POTOP" train --data text.txt --out narrow --steps 2 --n-layer 1 --n-head 2 --n-embd 48 --block-size 16 \
  --batch-size 4 --eval-iters 1 --threads 1 >/dev/null 2>&1 || fail "train narrow"
"$POTOP" quantize -m narrow --type q4_0 >/dev/null 2>err.txt || fail "narrow: quantize failed: $(cat err.txt)"
grep -q "kept float32: h.0.attn.c_attn.weight: 48 inputs, not whole blocks of 32" err.txt &&
  grep -q "quantized 1 matrices to q4_0" err.txt && ok "narrow: 48-input matrices kept float32, said so" ||
  fail "narrow: $(cat err.txt)"
"$POTOP" eval -m narrow-q4_0 --data text.txt >/dev/null 2>&1 && ok "narrow: the mixed model evaluates" ||
  fail "narrow: the mixed model does not load"

# --- bad input: one line, exit 1, nothing written ---------------------------------------------
expect_error "quantized twice" 1 log "is quantized already (q8_0)" -- quantize -m model-q8_0 --type q4_0
[ ! -e model-q8_0-q4_0 ] || fail "quantized twice: wrote model-q8_0-q4_0"
expect_error "unknown type" 1 strict "--type q3_k" "expected f16, q8_0 or q4_0" -- quantize -m model --type q3_k
expect_error "existing --out" 1 strict "--out model-q8_0: exists" -- quantize -m model --type q8_0
expect_error "resume a quantized model" 1 log "model-q8_0: is a quantized model" "resuming training" -- \
  train --resume model-q8_0 --steps 100
expect_error "fine-tune a quantized model" 1 log "--init-from model-q4_0: is a quantized model" "fine-tuning" -- \
  train --init-from model-q4_0 --data text.txt --out ft --steps 2
[ ! -e ft ] || fail "fine-tune a quantized model: created ft"
"$POTOP" bow train --data text.txt --out bow "${TINY_BOW[@]}" --steps 2 >/dev/null 2>&1 || fail "bow train"
expect_error "a bag-of-words LM" 1 log "a bag-of-words LM has no attention or feed-forward matrices" -- \
  quantize -m bow --type q8_0
[ ! -e bow-q8_0 ] || fail "a bag-of-words LM: wrote bow-q8_0"
cp -r model-q8_0 damaged
head -c 20000 model-q8_0/latest.safetensors >damaged/latest.safetensors
expect_error "a truncated quantized file" 1 log "damaged/latest.safetensors" -- sample -m damaged --prompt "pan "
# The metadata says a tensor is q4_0 while its bytes are q8_0's.
/usr/bin/python3 - model-q8_0/latest.safetensors damaged/latest.safetensors <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
meta = header["__metadata__"]
quantized = json.loads(meta["potop.quantized"])
quantized["h.0.mlp.c_fc.weight"] = "q4_0"
meta["potop.quantized"] = json.dumps(quantized)
meta.pop("potop.checksum", None)
text = json.dumps(header).encode()
text += b" " * (-(8 + len(text)) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
PY
expect_error "a tensor whose type the metadata misstates" 1 log "h.0.mlp.c_fc.weight" "for q4_0" -- \
  sample -m damaged --prompt "pan "

finish
