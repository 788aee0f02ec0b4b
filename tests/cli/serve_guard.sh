#!/usr/bin/env bash
# potop serve safe to expose (tests/cli/serve_guard.py): the API key, the Host check, origins and
# CORS, JSON-only POSTs, chunked bodies; the header and body deadlines (408) and the per-client
# connection cap (429); then a bounded attack (trickling headers, idle sockets,
# chunked floods, huge numbers, cross-origin no-cors POSTs) during which a normal request is
# answered within 1 s and RSS stays under 200 MB, and after which SIGTERM exits within 5 s; and
# the flags' errors.
POTOP=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$(dirname "$0")/lib.sh"

serve_model

printf 'sekret-123\n' >key.txt
start_serve guard.log --model model --threads 1 --api-key-file key.txt --cors-origin https://app.example
if /usr/bin/python3 "$HERE/serve_guard.py" guard "http://127.0.0.1:$PORT" sekret-123; then ok "the guard"; else fail "the guard"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

start_serve deadlines.log --model model --threads 1 --header-timeout 2 --body-timeout 2 --max-client-connections 4
if /usr/bin/python3 "$HERE/serve_guard.py" deadlines "http://127.0.0.1:$PORT"; then ok "the deadlines and the per-client cap"
else fail "the deadlines and the per-client cap"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

# RSS stays under 200 MB; a sanitized build's shadow memory and quarantine take more (the bound
# there is 1 GiB: the check is the release build's).
libraries=$(ldd "$POTOP" 2>/dev/null || true)
rss_mb=200
grep -qE 'lib(asan|tsan|msan|hwasan)' <<<"$libraries" && rss_mb=1024
start_serve attack.log --model model --threads 1
coproc ATTACK { /usr/bin/python3 "$HERE/serve_guard.py" attack "http://127.0.0.1:$PORT" "$SERVER_PID" "$rss_mb"; }
while IFS= read -r line <&"${ATTACK[0]}"; do
  echo "$line"
  [ "$line" = READY ] && break
done
start=$(date +%s.%N)
kill -TERM "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
if [ "$rc" = 0 ] && [ "$(echo "$took < 5" | bc)" = 1 ]; then ok "SIGTERM with trickling clients open: exit 0 in ${took} s"
else fail "SIGTERM with trickling clients open: exit $rc after ${took} s; log: $(tail -n 3 attack.log)"; fi
echo >&"${ATTACK[1]}"
wait "$ATTACK_PID" || fail "the attack's checks"
grep -q "stopped by signal 15" attack.log || fail "no stop line: $(tail -n 3 attack.log)"

expect_error "serve --api-key and --api-key-file" 1 log "give one" -- serve --model model --api-key a --api-key-file key.txt
: >empty.txt
expect_error "serve --api-key-file of an empty file" 1 log "empty.txt" -- serve --model model --api-key-file empty.txt
expect_error "serve --cors-origin without a scheme" 1 log "--cors-origin app.example" -- serve --model model --cors-origin app.example
expect_error "serve --max-connections 0" 1 log "--max-connections" -- serve --model model --max-connections 0
expect_error "serve --max-client-connections -1" 1 log "--max-client-connections" -- serve --model model --max-client-connections -1
expect_error "serve --header-timeout 0" 1 log "--header-timeout" -- serve --model model --header-timeout 0
expect_error "serve --body-timeout 1e9" 1 log "--body-timeout" -- serve --model model --body-timeout 1e9
finish
