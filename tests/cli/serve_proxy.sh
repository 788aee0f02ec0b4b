#!/usr/bin/env bash
# potop serve behind nginx with TLS (scripts/nginx-potop.conf, docs/serve.md "Exposing the
# server"): a self-signed certificate, nginx on a free port proxying to potop on 127.0.0.1 with an
# API key; a completion, a stream that arrives in several pieces, and a refusal all pass through.
POTOP=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$(dirname "$0")/lib.sh"

if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ] || ! command -v openssl >/dev/null; then
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "nginx or openssl missing: run scripts/setup.sh --all"; finish; fi
  echo "skip serve behind nginx (run scripts/setup.sh --all: nginx-light, openssl)"
  finish
  exit 0
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

serve_model
start_serve serve.log --model model --threads 1 --api-key sekret --max-client-connections 0
UPSTREAM=$PORT

openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 -keyout tls.key -out tls.crt 2>openssl.log ||
  { fail "openssl: $(cat openssl.log)"; finish; }
PUBLIC=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p nginx
sed -e "s|@PREFIX@|$WORK/nginx|g" -e "s|@PORT@|127.0.0.1:$PUBLIC|" -e "s|@NAME@|localhost|" -e "s|@CERT@|$WORK/tls.crt|" \
  -e "s|@KEY@|$WORK/tls.key|" -e "s|@UPSTREAM@|$UPSTREAM|g" "$ROOT/scripts/nginx-potop.conf" >nginx/nginx.conf
# As root, nginx's workers would run as nobody: keep them as this user (they read the files here).
[ "$(id -u)" = 0 ] && sed -i '1i user root;' nginx/nginx.conf
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' 2>nginx/stderr.log &
NGINX_PID=$!
for _ in $(seq 1 100); do
  curl -sk "https://localhost:$PUBLIC/health" >/dev/null 2>&1 && break
  sleep 0.1
done

URL=https://localhost:$PUBLIC
out=$(curl -sk "$URL/v1/completions" -H 'Authorization: Bearer sekret' -H 'Content-Type: application/json' \
  -d '{"prompt": "pan ", "max_tokens": 8, "seed": 1}')
if echo "$out" | grep -q '"object":"text_completion"'; then ok "a completion through nginx (TLS)"; else
  fail "a completion through nginx: $out $(cat nginx/error.log 2>/dev/null)"; fi
code=$(curl -sk -o /dev/null -w '%{http_code}' "$URL/v1/models")
[ "$code" = 401 ] && ok "no API key through nginx: 401" || fail "no API key through nginx: $code"
# A stream: the events come as they are made (proxy_buffering off), not all at the end.
/usr/bin/python3 - "$PUBLIC" <<'PY' && ok "a stream through nginx arrives in pieces" || fail "a stream through nginx"
import http.client, json, ssl, sys, time
conn = http.client.HTTPSConnection("localhost", int(sys.argv[1]), context=ssl._create_unverified_context(), timeout=30)
conn.request("POST", "/v1/completions", json.dumps({"prompt": "pan ", "max_tokens": 400, "stream": True}),
             {"Authorization": "Bearer sekret", "Content-Type": "application/json"})
r = conn.getresponse()
assert r.status == 200, r.status
reads, data = 0, b""
while True:
    chunk = r.read1(65536)
    if not chunk:
        break
    reads += 1
    data += chunk
assert data.rstrip().endswith(b"data: [DONE]"), data[-80:]
assert data.count(b"data: ") == 402, data.count(b"data: ")
assert reads > 3, reads
PY
kill -TERM "$NGINX_PID" "$SERVER_PID"; wait "$NGINX_PID" "$SERVER_PID" || true
finish
