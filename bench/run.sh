#!/usr/bin/env bash
# One command for the potop vs PyTorch benchmark (docs/performance.md):
#   bash bench/run.sh [run.py flags, e.g. --quick or --rounds 5]
# and for the tokenizer benchmark, potop vs SentencePiece's tools (docs/tokenizers.md):
#   bash bench/run.sh tokenizers [tokenizers.py flags, e.g. --quick or --mb 5]
# and for word2vec, potop vs gensim and fastText (docs/word2vec.md):
#   bash bench/run.sh word2vec [word2vec.py flags, e.g. --quick or --speed-only]
# and for translation, potop translate vs the PyTorch reference trainer (docs/translation.md):
#   bash bench/run.sh translate [translate.py flags, e.g. --quick or --steps 40]
# Builds the release preset (tuned for this CPU) and runs bench/run.py with Debian's Python,
# which has PyTorch. Measure on an otherwise idle machine: the script prints the load average.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
if [ "${1:-}" = tokenizers ]; then
  shift
  cmake --build --preset release --target potop -- -j2
  exec /usr/bin/python3 bench/tokenizers.py --potop build/release/src/potop "$@"
fi
if [ "${1:-}" = word2vec ]; then
  shift
  cmake --build --preset release --target potop -- -j2
  exec /usr/bin/python3 bench/word2vec.py --potop build/release/src/potop "$@"
fi
if [ "${1:-}" = translate ]; then
  shift
  cmake --build --preset release --target potop -- -j2
  exec /usr/bin/python3 bench/translate.py --potop build/release/src/potop "$@"
fi
cmake --build --preset release --target potop_bench -- -j2
exec /usr/bin/python3 bench/run.py --bench build/release/bench/potop_bench "$@"
