#!/usr/bin/env bash
# potop train --arch llama and every command a Llama reaches through its tasks (issue 40): info
# (its KV cache per token, n_kv_head / n_head of a multi-head one), eval, sample (greedy with the
# KV cache = the same text batched), attention (which query heads share a K/V head), serve
# (completions, chat, responses, the studio's meta), quantize (f16, q8_0, q4_0), --init-from,
# resume without --arch; and the flags of one architecture refused for the other in one line.
#   llama.sh <potop> [models|errors]   (no group: both)
POTOP=$1
GROUP=${2:-all}
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 4000
SHAPE=(--n-layer 2 --n-head 4 --n-embd 32 --block-size 32 --batch-size 8 --eval-iters 2 --log-interval 10 --threads 1
       --lr 3e-3 --warmup 5)

json_field() { /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval("r" + sys.argv[2]))' "$@"; }

if [ "$GROUP" = all ] || [ "$GROUP" = models ]; then
  for kv in 4 1; do
    if "$POTOP" train --arch llama --data text.txt --out gqa$kv --n-kv-head $kv "${SHAPE[@]}" --steps 40 \
        --eval-interval 20 --json >run$kv.json 2>run$kv.log && grep -q '"kind": "llama"' gqa$kv/config.json &&
        grep -q "n_kv_head\": $kv" gqa$kv/config.json; then
      ok "train --arch llama --n-kv-head $kv: $(cat run$kv.json)"
    else
      fail "train --arch llama --n-kv-head $kv: $(tail -n 5 run$kv.log)"
    fi
  done
  # The loss falls from chance (ln V) on the way.
  /usr/bin/python3 - gqa1/metrics.jsonl <<'PY' && ok "the validation loss falls" || fail "the validation loss does not fall"
import json, sys
evals = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "eval"]
assert evals[-1]["val_loss"] < evals[0]["val_loss"] - 0.3, evals
PY
  # info: its tasks, and a KV cache 4× smaller with one K/V head of four.
  "$POTOP" info -m gqa4 --json >info4.json && "$POTOP" info -m gqa1 --json >info1.json && "$POTOP" info -m gqa1 >info1.txt
  if [ "$(json_field info4.json '["kv_cache_bytes_per_token"]')" = 512.0 ] &&
      [ "$(json_field info1.json '["kv_cache_bytes_per_token"]')" = 128.0 ] &&
      [ "$(json_field info1.json '["tasks"]')" = "['language-model', 'causal-lm', 'self-attention']" ] &&
      grep -q '^KV cache: 128 B per token of context (2 layers × K,V × 1 K/V heads × 8 floats, float32)' info1.txt &&
      grep -q '^model: gqa1: Llama, 2 layers, 4 heads sharing 1 K/V head, 32 wide, SwiGLU 96' info1.txt; then
    ok "info: $(grep '^KV cache' info1.txt)"
  else
    fail "info: $(cat info1.txt info1.json)"
  fi
  # eval scores it; sample generates; greedy sampling is the same with one stream or with the
  # server's batch (forward with a KV cache vs forward_rows).
  if "$POTOP" eval -m gqa1 --data text.txt --json >eval.json 2>eval.log &&
      /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["kind"] == "llama" and 1 < r["perplexity"] < 40, r' eval.json; then
    ok "eval: $(cat eval.json)"
  else
    fail "eval: $(cat eval.json eval.log)"
  fi
  "$POTOP" sample -m gqa1 --prompt "pan " --tokens 60 --temperature 0 --threads 1 >greedy.txt 2>sample.log ||
    fail "sample: $(cat sample.log)"
  [ "$(wc -c <greedy.txt)" -gt 60 ] && ok "sample: $(head -c 80 greedy.txt | tr '\n' ' ')" || fail "sample printed: $(cat greedy.txt)"
  # attention: the page names the K/V head each query head reads.
  if "$POTOP" attention -m gqa1 --prompt "pan zagłoba" --out att.html 2>att.log && grep -q 'head 3 (K/V head 0)' att.html &&
      grep -q 'Grouped-query attention: 4 query heads share 1 key/value head' att.html; then
    ok "attention: the page shows the shared K/V heads"
  else
    fail "attention: $(cat att.log)"
  fi
  # serve: completions, chat and responses, /v1/models' meta and /v1/attention's n_kv_head.
  start_serve serve.log -m gqa1 --threads 1
  base=http://127.0.0.1:$PORT
  H=(-s -H 'Content-Type: application/json')
  curl "${H[@]}" $base/v1/completions -d '{"prompt":"pan ","max_tokens":60,"temperature":0}' >completion.json
  curl "${H[@]}" $base/v1/chat/completions -d '{"messages":[{"role":"user","content":"pan"}],"max_tokens":5}' >chat.json
  curl "${H[@]}" $base/v1/responses -d '{"input":"pan","max_output_tokens":5}' >responses.json
  curl "${H[@]}" $base/v1/models >models.json
  curl "${H[@]}" $base/v1/attention -d '{"text":"pan zagłoba"}' >attention.json
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  if /usr/bin/python3 - greedy.txt <<'PY'; then
import json, sys
greedy = open(sys.argv[1], encoding="utf-8").read()
c = json.load(open("completion.json"))
assert greedy.startswith("pan " + c["choices"][0]["text"].rstrip("\n")[:40]), (greedy, c)
assert json.load(open("chat.json"))["choices"][0]["message"]["role"] == "assistant"
assert json.load(open("responses.json"))["object"] == "response"
meta = json.load(open("models.json"))["data"][0]["meta"]
assert meta["kind"] == "llama" and meta["n_head"] == 4 and meta["n_kv_head"] == 1, meta
a = json.load(open("attention.json"))
assert a["n_head"] == 4 and a["n_kv_head"] == 1 and len(a["attention"]) == 2, list(a)
PY
    ok "serve: completions (= potop sample's greedy text), chat, responses, meta n_kv_head 1"
  else
    fail "serve: $(cat completion.json chat.json responses.json models.json | head -c 1500)"
  fi
  # quantize: each type loads and generates.
  for type in f16 q8_0 q4_0; do
    if "$POTOP" quantize -m gqa1 --type $type --threads 1 >q.out 2>q.log &&
        "$POTOP" sample -m gqa1-$type --prompt "pan " --tokens 20 --temperature 0 --threads 1 >q.txt 2>>q.log &&
        [ "$(wc -c <q.txt)" -gt 20 ]; then
      ok "quantize --type $type: $(grep -m1 quantized q.log)"
    else
      fail "quantize --type $type: $(cat q.log)"
    fi
  done
  # resume without --arch: the run's own architecture.
  if "$POTOP" train --resume gqa1 --steps 50 2>resume.log && grep -q 'resuming gqa1 at step 40 of 50' resume.log; then
    ok "train --resume of a llama run, no --arch"
  else
    fail "train --resume of a llama run: $(tail -n 3 resume.log)"
  fi
  # --init-from: fine-tuning keeps the shape; a GPT's weights are refused.
  if "$POTOP" train --arch llama --init-from gqa1 --data text.txt --out tuned --steps 5 --eval-interval 5 --eval-iters 1 \
      --batch-size 4 --threads 1 2>tuned.log && grep -q 'fine-tuning from' tuned.log; then
    ok "train --arch llama --init-from: $(grep -m1 'fine-tuning from' tuned.log)"
  else
    fail "train --arch llama --init-from: $(tail -n 3 tuned.log)"
  fi
  # Without --arch, the model it starts from says which (as --resume's does).
  if "$POTOP" train --init-from gqa1 --data text.txt --out tuned2 --steps 5 --eval-interval 5 --eval-iters 1 \
      --batch-size 4 --threads 1 2>tuned2.log && grep -q '"kind": "llama"' tuned2/config.json; then
    ok "train --init-from a Llama, no --arch: $(grep -m1 'fine-tuning from' tuned2.log)"
  else
    fail "train --init-from a Llama without --arch: $(tail -n 3 tuned2.log)"
  fi
fi

if [ "$GROUP" = all ] || [ "$GROUP" = errors ]; then
  T=(train --data text.txt --out bad --steps 1)
  expect_error "a GPT flag with --arch llama" 1 strict "--norm is not an option of --arch llama" -- "${T[@]}" --arch llama --norm post
  expect_error "a Llama flag without --arch" 1 strict "--n-kv-head is not an option of --arch gpt2" -- "${T[@]}" --n-kv-head 2
  expect_error "n_head not a multiple of n_kv_head" 1 strict "--n-head (4) must be a multiple of --n-kv-head (3)" -- \
    "${T[@]}" --arch llama --n-head 4 --n-kv-head 3
  expect_error "an odd head size" 1 strict "--n-embd" "must be even" -- "${T[@]}" --arch llama --n-embd 36 --n-head 4
  expect_error "rope theta" 1 strict "--rope-theta must be greater than 1" -- "${T[@]}" --arch llama --rope-theta 0.5
  expect_error "an unknown arch" 2 log "--arch" -- "${T[@]}" --arch mamba
  [ -e bad ] && fail "a refused run left bad/ behind" || ok "refused runs wrote nothing"
fi
finish
