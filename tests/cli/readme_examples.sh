#!/usr/bin/env bash
# README's examples for the demo model run as written, whichever corpus the demo used: a model
# like the demo's (smaller, to be quick) is trained in runs/demo on the corpus a machine without
# ../shared gets (the cleaned Polish fortunes), and every command of the blocks between
# <!-- readme-examples --> and <!-- /readme-examples --> in README.md must exit 0, in order.
#   readme_examples.sh <potop>
POTOP=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/lib.sh"

export POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR=$WORK/runs
ln -s "$ROOT/scripts" scripts
corpus=$(bash scripts/default-corpus.sh 2>/dev/null)
# demo.sh's flags but for the size, so that "--steps 2500" after its 2000 steps stays quick.
"$POTOP" train --data "$corpus" --out runs/demo --steps 2000 --n-layer 1 --n-head 2 --n-embd 32 --block-size 32 \
  --batch-size 8 --eval-interval 500 --eval-iters 2 --threads 1 2>train.log || { cat train.log; fail "training the demo-like model"; finish; }

mkdir -p build/release/src && ln -s "$POTOP" build/release/src/potop
block=$(sed -n '/<!-- readme-examples -->/,/<!-- \/readme-examples -->/p' "$ROOT/README.md" | sed -n '/^```sh$/,/^```$/p' |
  grep -v '^```')
[ -n "$block" ] || { fail "README.md has no readme-examples block"; finish; }
while IFS= read -r line; do
  [ -z "$line" ] && continue
  case $line in P=*) eval "$line"; continue ;; esac
  if bash -c "set -euo pipefail; P=$P; $line" >out.txt 2>err.txt </dev/null; then ok "$line"
  else fail "$line: exit $?: $(tail -n 2 err.txt)"; fi
done <<<"$block"
[ -s runs/demo/attention.html ] && [ -s runs/demo/loss.svg ] && ok "the pictures are beside the model" ||
  fail "attention.html or loss.svg missing from runs/demo"
finish
