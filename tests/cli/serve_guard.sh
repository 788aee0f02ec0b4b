#!/usr/bin/env bash
# potop serve safe to expose (tests/cli/serve_guard.py): the API key, the Host check, origins and
# CORS, JSON-only POSTs, chunked bodies; the header and body deadlines (408) and the per-client
# connection cap; a second server on a port in use refused; then a bounded attack from several
# addresses (trickling and idle connections, requests smuggled in refused requests' bodies,
# endless headers, chunked floods, huge numbers and lengths) during which every probe is answered
# with p99 under 100 ms, RSS stays under 200 MB and no smuggled request reaches a handler, and
# after which SIGTERM exits within 1 s; and the flags' errors. Three groups, a CTest entry each:
# guard (the guard, a port in use, the flags), deadlines, and attack, which CTest runs alone.
#   serve_guard.sh <potop> [guard|deadlines|attack]   (no group: all three)
POTOP=$1 GROUP=${2:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$(dirname "$0")/lib.sh"
case $GROUP in "" | guard | deadlines | attack) ;; *) fail "unknown group '$GROUP'"; finish ;; esac
want() { [ -z "$GROUP" ] || [ "$GROUP" = "$1" ]; }

serve_model

printf 'sekret-123\n' >key.txt
if want guard; then
start_serve guard.log --model model --threads 1 --api-key-file key.txt --cors-origin https://app.example
if /usr/bin/python3 "$HERE/serve_guard.py" guard "http://127.0.0.1:$PORT" sekret-123; then ok "the guard"; else fail "the guard"; fi

# A second server on the port in use is refused, naming the port (not handed half the traffic).
expect_error "serve on a port in use" 1 log "port $PORT is in use" -- serve --model model --port "$PORT"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true

expect_error "serve --api-key and --api-key-file" 1 log "give one" -- serve --model model --api-key a --api-key-file key.txt
: >empty.txt
expect_error "serve --api-key-file of an empty file" 1 log "empty.txt" -- serve --model model --api-key-file empty.txt
expect_error "serve --cors-origin without a scheme" 1 log "--cors-origin app.example" -- serve --model model --cors-origin app.example
expect_error "serve --max-connections 0" 1 log "--max-connections" -- serve --model model --max-connections 0
expect_error "serve --max-client-connections -1" 1 log "--max-client-connections" -- serve --model model --max-client-connections -1
expect_error "serve --header-timeout 0" 1 log "--header-timeout" -- serve --model model --header-timeout 0
expect_error "serve --body-timeout 1e9" 1 log "--body-timeout" -- serve --model model --body-timeout 1e9
fi

if want deadlines; then
start_serve deadlines.log --model model --threads 1 --header-timeout 2 --body-timeout 2 --max-client-connections 4
if /usr/bin/python3 "$HERE/serve_guard.py" deadlines "http://127.0.0.1:$PORT"; then ok "the deadlines and the per-client cap"
else fail "the deadlines and the per-client cap"; fi
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || true
fi

if ! want attack; then finish; exit 0; fi
# RSS stays under 200 MB; a sanitized build's shadow memory and quarantine take more (the bound
# there is 1 GiB: the check is the release build's).
libraries=$(ldd "$POTOP" 2>/dev/null || true)
# Likewise the probes' p99 (100 ms) and the exit on SIGTERM (1 s): a sanitized build is several
# times slower.
# And the memory handed back after the attack (within 16 MB of where it began): a sanitizer's
# allocator keeps what it quarantines, so there it is not checked (0).
rss_mb=200 p99_ms=100 stop_s=1 back_mb=16
grep -qE 'lib(asan|tsan|msan|hwasan)' <<<"$libraries" && rss_mb=1024 p99_ms=1000 stop_s=3 back_mb=0
# A chat template as hostile as a model file may carry, for the chats whose message is "boom": a list
# of texts of 8 MiB (serve_guard.py's hostile_chats); other chats render plainly.
cat >hostile.jinja <<'JINJA'
{% if messages[0].content == "boom" %}{% set ns = namespace(s="x", l=[]) %}{% for i in range(23) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{% for i in range(40) %}{% set ns.l = ns.l + [ns.s] %}{% endfor %}{% endif %}{% for m in messages %}{{ m.content }}
{% endfor %}
JINJA
start_serve attack.log --model model --threads 1 --chat-template hostile.jinja
coproc ATTACK { /usr/bin/python3 "$HERE/serve_guard.py" attack "http://127.0.0.1:$PORT" "$SERVER_PID" "$rss_mb" "$p99_ms" "$back_mb"; }
while IFS= read -r line <&"${ATTACK[0]}"; do
  echo "$line"
  [ "$line" = READY ] && break
done
start=$(date +%s.%N)
kill -TERM "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
if [ "$rc" = 0 ] && [ "$(echo "$took < $stop_s" | bc)" = 1 ]; then ok "SIGTERM with trickling clients open: exit 0 in ${took} s"
else fail "SIGTERM with trickling clients open: exit $rc after ${took} s; log: $(tail -n 3 attack.log)"; fi
echo >&"${ATTACK[1]}"
wait "$ATTACK_PID" || fail "the attack's checks"
grep -q "stopped by signal 15" attack.log || fail "no stop line: $(tail -n 3 attack.log)"
finish
