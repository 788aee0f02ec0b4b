#!/usr/bin/env bash
# potop serve of every kind but the GPT (tests/cli/serve.sh): a tiny BERT pre-trained, a
# classifier fine-tuned from it and a translation model trained in the test, each served on a free
# port; tests/cli/serve_kinds_api.py checks every endpoint against the command line, then the
# clients (tests/clients) and the studio in chromium (tests/browser) use them; SIGTERM stops all
# cleanly.
POTOP=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
"$POTOP" tokenizer train --kind bpe --vocab-size 300 --data text.txt --out tok >/dev/null 2>tok.log ||
  { fail "tokenizer train: $(cat tok.log)"; finish; }
SHAPE=(--n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --threads 1)
"$POTOP" bert pretrain --data text.txt --tokenizer tok "${SHAPE[@]}" --out bert --steps 20 --eval-interval 20 \
  --eval-iters 2 >/dev/null 2>bert.log || { fail "bert pretrain: $(cat bert.log)"; finish; }
make_labelled train.tsv 200 1
make_labelled dev.tsv 40 2
"$POTOP" classify train --data train.tsv --dev dev.tsv --init-from bert --out classifier --epochs 2 --batch-size 8 \
  --threads 1 >/dev/null 2>classify.log || { fail "classify train: $(cat classify.log)"; finish; }
# Sentence pairs: four words of the corpus and the same four reversed.
tr -s ' \n.' '\n' <text.txt | awk 'NF' | awk 'NR <= 1600' | paste -d ' ' - - - - |
  awk '{ print $0 "\t" $4 " " $3 " " $2 " " $1 }' >pairs.tsv
"$POTOP" translate train --data pairs.tsv --out mt --columns fwd,rev --source fwd --target rev --vocab-size 300 \
  --n-layer 1 --n-head 2 --n-embd 32 --block-size 32 --batch-tokens 256 --eval-sentences 5 --dev-size 20 --test-size 20 --steps 150 \
  --eval-interval 60 --lr-schedule noam --lr 1 --warmup 10 --threads 1 >/dev/null 2>mt.log || { fail "translate train: $(cat mt.log)"; finish; }

start_serve bert.serve.log --model bert --threads 1
BERT_PORT=$PORT BERT_PID=$SERVER_PID
start_serve classifier.serve.log --model classifier --threads 1
CLS_PORT=$PORT CLS_PID=$SERVER_PID
start_serve mt.serve.log --model mt --threads 1
MT_URL=http://127.0.0.1:$PORT MT_PID=$SERVER_PID
grep -q "(a BERT: one request at a time, 1 threads)" bert.serve.log || fail "bert's listening line: $(cat bert.serve.log)"
BERT_URL=http://127.0.0.1:$BERT_PORT CLS_URL=http://127.0.0.1:$CLS_PORT

if /usr/bin/python3 "$HERE/serve_kinds_api.py" "$POTOP" "$BERT_URL" bert "$CLS_URL" classifier "$MT_URL" mt; then
  ok "API checks (a BERT, a classifier, a translation model)"
else
  fail "API checks (a BERT, a classifier, a translation model)"
fi

# The clients (tests/clients) and the studio in chromium (tests/browser), installed by scripts/setup.sh --all.
node_test "the clients: embeddings, translations" "$ROOT/tests/clients" kinds.test.mjs "$BERT_URL" "$CLS_URL" "$MT_URL"
shots=${POTOP_SCREENSHOTS:-$WORK/shots}
mkdir -p "$shots"
node_test studio "$ROOT/tests/browser" kinds.test.mjs "$BERT_URL" "$CLS_URL" "$MT_URL" "$shots"

for pid in "$BERT_PID" "$CLS_PID" "$MT_PID"; do
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 0 ] || fail "SIGTERM: server $pid exited $rc"
done
# A BERT's requests wait in the same bounded queue as a GPT's: with --queue 0, requests sent while
# one runs get 503 server_busy, as a GPT's do when its slots and queue are full.
start_serve queue.serve.log --model bert --threads 1 --queue 0
if /usr/bin/python3 - "http://127.0.0.1:$PORT" <<'PY'
import json, sys, threading, urllib.error, urllib.request
url, statuses = sys.argv[1], []
def embed():
    body = json.dumps({"input": ["dobry wieczór panie kmicic"] * 512}).encode()
    request = urllib.request.Request(url + "/v1/embeddings", body, {"Content-Type": "application/json"})
    try:
        statuses.append(urllib.request.urlopen(request, timeout=60).status)
    except urllib.error.HTTPError as e:
        statuses.append((e.code, json.loads(e.read())["error"]["type"], e.headers.get("Retry-After")))
threads = [threading.Thread(target=embed) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
busy = [s for s in statuses if s != 200]
ok = 200 in statuses and busy and all(s == (503, "server_busy", "1") for s in busy)
print(statuses, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
then ok "a BERT's full queue: 503 server_busy"; else fail "a BERT's full queue: 503 server_busy"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || fail "SIGTERM: the --queue 0 server"

if grep -qE 'Sanitizer|runtime error:|terminate called' bert.serve.log classifier.serve.log mt.serve.log queue.serve.log; then
  fail "server logs: $(cat bert.serve.log classifier.serve.log mt.serve.log)"
fi
finish
