#!/usr/bin/env bash
# potop serve end to end: trains a tiny model, starts the server on a free port and runs
# tests/cli/serve_api.py against it (every endpoint, streaming, seeds, log-probs, errors, a full
# queue, clients that leave, the time limit); then checks that SIGTERM stops it cleanly.
POTOP=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$(dirname "$0")/lib.sh"

serve_model

# start_server <log> <flags>...: serves the model on 1 thread unless DEFAULT_THREADS=1 (lib.sh's
# start_serve: PORT and SERVER_PID).
start_server() {
  local log=$1 threads=(--threads 1)
  shift
  [ "${DEFAULT_THREADS:-}" = 1 ] && threads=()
  start_serve "$log" --model model "${threads[@]}" "$@"
}

# The main server: one slot and no queue, so that a second request while one runs is refused;
# a 4 KiB body limit; a time limit long enough for every normal request.
start_server serve.log --slots 1 --queue 0 --max-body-kib 4 --max-tokens 1000000 --timeout 60 --alias potop-demo
if /usr/bin/python3 "$HERE/serve_api.py" "http://127.0.0.1:$PORT" main; then ok "API checks (main server)"; else fail "API checks (main server)"; fi


# README's curl examples, as written but for the port.
ROOT=$(cd "$HERE/../.." && pwd)
examples=$(sed -n '/^### Serve it/,/^## /p' "$ROOT/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' |
  sed "s/127.0.0.1:8080/127.0.0.1:$PORT/g")
if [ -z "$examples" ]; then fail "README has no curl examples under '### Serve it'"
else
  # the stop strings and prompt need a model that knows "Pan Kmicic ": this one is lowercase only
  examples=${examples//Pan Kmicic /pan kmicic }
  bash -c "set -euo pipefail; $examples" >readme.out 2>readme.err || fail "README curl examples: $(cat readme.err)"
  if grep -q '"object":"text_completion"' readme.out && grep -q '^data: \[DONE\]' readme.out &&
      grep -q '"object":"chat.completion"' readme.out; then
    ok "README curl examples (plain, streaming, chat)"
  else
    fail "README curl examples gave: $(head -c 300 readme.out)"
  fi
fi

kill -TERM "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
if [ "$rc" = 0 ] && grep -q "stopped by signal 15" serve.log; then ok "SIGTERM stops the server (exit 0)"; else
  fail "SIGTERM: exit $rc; log: $(cat serve.log)"; fi
if grep -qE 'Sanitizer|runtime error:|terminate called' serve.log; then fail "server log: $(cat serve.log)"; fi

# A server with a one-second time limit: a long generation ends with what it has.
start_server timeout.log --timeout 1 --max-tokens 1000000
if /usr/bin/python3 "$HERE/serve_api.py" "http://127.0.0.1:$PORT" timeout; then ok "time limit"; else fail "time limit"; fi
# A hangup (the terminal closed, a service manager's stop) stops it as SIGTERM does.
kill -HUP "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
if [ "$rc" = 0 ] && grep -q "stopped by signal 1\b" timeout.log; then ok "SIGHUP stops the server cleanly (exit 0)"; else
  fail "SIGHUP: exit $rc; log: $(tail -n 3 timeout.log)"; fi

# Continuous batching: a seeded request gives the same text alone and alongside three others,
# here with f16 KV caches (the first server's are f32).
start_server batch.log --slots 4 --prefill-chunk 5 --max-tokens 1000 --kv-cache f16
if /usr/bin/python3 "$HERE/serve_api.py" "http://127.0.0.1:$PORT" batch; then ok "batching"; else fail "batching"; fi
if grep -q ", f16 KV caches" batch.log; then ok "--kv-cache f16 announced"; else fail "--kv-cache f16 not announced: $(cat batch.log)"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

# --threads left out: the batcher gets half the cores, at least 1 (the rest serve connections).
DEFAULT_THREADS=1 start_server default.log
cores=$(getconf _NPROCESSORS_ONLN)  # what std::thread::hardware_concurrency counts
want=$((cores / 2)); [ "$want" -ge 1 ] || want=1
if grep -q "batches of up to [0-9]*, $want threads, queue [0-9]*, f32 KV caches" default.log; then
  ok "default batcher threads: $want of $cores cores; f32 KV caches"
else fail "default batcher threads: want $want of $cores cores; log: $(cat default.log)"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

# The clients users run (tests/clients: OpenAI's SDK, the AI SDK, LangChain), pinned, on a
# server that replaces characters the model lacks (the AI SDK's completion provider writes
# "user:" before the prompt; the char model has no ':').
start_server clients.log --slots 2 --unknown replace --max-tokens 200000
node_test "the clients: chat and completions" "$HERE/../clients" gpt.test.mjs "http://127.0.0.1:$PORT" model "pan zagłoba "
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

# A model whose tokens split characters (a byte tokenizer: "ż" is two tokens, "😀" four): for 100
# seeds the streamed text equals the plain text, chat and completions, through OpenAI's SDK (a
# chunk that ended inside a character went out as U+FFFD).
"$POTOP" tokenizer train --kind byte --out bytes.tok >/dev/null 2>tok.log || fail "byte tokenizer: $(cat tok.log)"
for _ in $(seq 1 60); do printf 'pan zagłoba 😀 woła: żółw, gęś i łoś! 🎉 kmicic ruszył z kopyta ✓\n'; done >wide.txt
"$POTOP" train --data wide.txt --tokenizer bytes.tok --out bytes.model --steps 150 --eval-interval 150 --lr 3e-3 "${TINY[@]}" \
  2>bytes.train.log || fail "train on bytes: $(tail -n 3 bytes.train.log)"
start_serve bytes.log --model bytes.model --threads 1 --slots 2
node_test "streams split no character: 100 seeds, the byte model" "$HERE/../clients" utf8_stream.test.mjs \
  "http://127.0.0.1:$PORT" "zagłoba 😀 "
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

# --chat-template: the chat's prompt is the template's rendering, as /v1/completions continues it.
# (in the letters of the char model's corpus)
printf '{"user": "z {content}\\n", "generation": "a ", "stop": ["\\nz"], "name": "quote"}' >chat.json
start_server chat.log --chat-template chat.json
if /usr/bin/python3 - "http://127.0.0.1:$PORT" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def post(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=60))
meta = json.load(urllib.request.urlopen(base + "/v1/models"))["data"][0]["meta"]
chat = post("/v1/chat/completions", {"messages": [{"role": "user", "content": "pan"}], "max_tokens": 20, "seed": 4})
plain = post("/v1/completions", {"prompt": "z pan\na ", "max_tokens": 20, "seed": 4, "stop": ["\nz"]})
assert meta["chat_template"] == "quote", meta
assert chat["choices"][0]["message"]["content"] == plain["choices"][0]["text"], (chat, plain)
PY
then ok "--chat-template: the chat renders through it"; else fail "--chat-template: $(cat chat.log)"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

# Bad flags: one line naming the flag, exit 1.
expect_error "serve --port out of range" 1 log "--port" -- serve --model model --port 70000
expect_error "serve --slots 0" 1 log "--slots" -- serve --model model --slots 0
expect_error "serve --prefill-chunk 0" 1 log "--prefill-chunk" -- serve --model model --prefill-chunk 0
expect_error "serve --kv-cache q4_0" 1 log "--kv-cache must be f32 or f16" -- serve --model model --kv-cache q4_0
expect_error "serve on an address it cannot bind" 1 log "--port $PORT" -- serve --model model --port "$PORT" --host 256.1.1.1
expect_error "serve --unknown maybe" 1 log "--unknown" -- serve --model model --unknown maybe
expect_error "serve --chat-template missing" 1 log "missing.json" -- serve --model model --chat-template missing.json
printf '{"user": "no placeholder"}' >bad-chat.json
expect_error "serve --chat-template without {content}" 1 log "bad-chat.json" "must hold {content}" -- serve --model model --chat-template bad-chat.json
finish
