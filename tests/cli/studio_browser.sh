#!/usr/bin/env bash
# The web studio in Debian's chromium, driven by playwright-core (tests/browser, installed by
# scripts/setup.sh --all with npm ci): trains a tiny model, serves it, runs tests/browser/studio.test.mjs.
# Screenshots go to $POTOP_SCREENSHOTS when set (docs/img for the README), else the temporary directory.
POTOP=$1
BROWSER=$(cd "$(dirname "${BASH_SOURCE[0]}")/../browser" && pwd)
source "$(dirname "$0")/lib.sh"

if [ ! -d "$BROWSER/node_modules/playwright-core" ] || ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ]; then
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "playwright-core, node or chromium missing: run scripts/setup.sh --all"; finish; fi
  echo "skip studio browser test (run scripts/setup.sh --all: playwright-core, node, chromium)"
  finish
  exit 0
fi

serve_model
start_serve serve.log --model model --threads 1
MAIN_PORT=$PORT MAIN_PID=$SERVER_PID
start_serve keyed.log --model model --threads 1 --api-key sekret
KEYED_PORT=$PORT KEYED_PID=$SERVER_PID

shots=${POTOP_SCREENSHOTS:-$WORK/shots}
mkdir -p "$shots"
if node "$BROWSER/studio.test.mjs" "http://127.0.0.1:$MAIN_PORT" "$shots" "http://127.0.0.1:$KEYED_PORT" sekret; then ok "studio in chromium"; else fail "studio in chromium"; fi
for f in studio-playground studio-attention studio-heatmap studio-surprisal; do
  [ -s "$shots/$f.png" ] || fail "no screenshot $shots/$f.png"
done
kill -TERM "$MAIN_PID" "$KEYED_PID"; wait "$MAIN_PID" "$KEYED_PID" || true
finish
