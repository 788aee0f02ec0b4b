#!/usr/bin/env bash
# One command for every benchmark (docs/performance.md). Each workload runs potop and its
# reference side by side in one run and prints the ratio:
#   bash bench/run.sh [run.py flags]      training and generation vs PyTorch (e.g. --quick, --rounds 5)
#   bash bench/run.sh tokenizers [flags]  BPE/unigram vs SentencePiece's tools (docs/tokenizers.md)
#   bash bench/run.sh word2vec [flags]    vs gensim and fastText (docs/word2vec.md)
#   bash bench/run.sh translate [flags]   encoder-decoder training and decoding vs PyTorch (docs/translation.md)
#   bash bench/run.sh classify [flags]    BERT pre-training and classifier inference vs PyTorch, fastText (docs/transfer.md)
#   bash bench/run.sh serve [flags]       potop serve under 1/4/16 clients vs one sample stream (docs/serve.md)
#   bash bench/run.sh mpi [rounds]        2 ranks x 1 thread vs 1 process x 2 threads (docs/distributed.md)
#   bash bench/run.sh busy [flags]        sample and train beside a process holding one core, libgomp's spin vs potop's
#   bash bench/run.sh quant [flags]       f16/q8_0/q4_0 vs f32: speed, quality, serving, memory, llama.cpp (bench/quant.py)
#   bash bench/run.sh llama [flags]       --arch llama: training vs PyTorch, vs the GPT at equal time, generation with GQA (bench/llama.py)
#   bash bench/run.sh gpt2 [flags]        GPT-2 124M: training vs PyTorch at T 1024 (MFU, peak RSS), context sweep 128-2048, generation vs llama.cpp (bench/gpt2.py)
#   bash bench/run.sh import [flags]      potop import of GPT-2 124M and SmolLM2-135M's shape vs PyTorch loading them (bench/import.py)
#   bash bench/run.sh all [--quick]       all of the above in turn, each section timed
# Builds the release preset (tuned for this CPU) and runs the Python drivers with Debian's
# Python, which has PyTorch. Measure on an otherwise idle machine: the drivers print the load.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
POTOP=build/release/src/potop
PY=/usr/bin/python3

build() { cmake --build --preset release --target "$@" -- -j2 >/dev/null; }

# A small character model for the serving benchmark: the default corpus when ../shared has it.
serve_model() {  # serve_model <dir> <steps>
  local data=../shared/data/potop.txt
  if [ ! -f "$data" ]; then
    data=$1.txt
    for i in $(seq 20000); do echo "Kmicic ruszył z kopyta, a pan Zagłoba zawołał: mości panowie, $i!"; done >"$data"
  fi
  "$POTOP" train --data "$data" --out "$1" --force --n-layer 4 --n-head 4 --n-embd 128 --block-size 64 \
    --batch-size 12 --steps "$2" --eval-interval 100000 --eval-iters 1 --log-interval 100000 >/dev/null 2>&1
}

workload() {  # workload <name> [flags]
  local name=$1
  shift
  case $name in
    tokenizers) build potop && $PY bench/tokenizers.py --potop "$POTOP" "$@" ;;
    word2vec) build potop && $PY bench/word2vec.py --potop "$POTOP" "$@" ;;
    translate) build potop && $PY bench/translate.py --potop "$POTOP" "$@" ;;
    classify) build potop potop_bench && $PY bench/classify.py --potop "$POTOP" --bench build/release/bench/potop_bench "$@" ;;
    serve)
      build potop serve_client
      local dir
      dir=$(mktemp -d "${TMPDIR:-/tmp}/potop-serve-bench.XXXXXX")
      serve_model "$dir/model" "${SERVE_MODEL_STEPS:-300}"
      $PY bench/serve_load.py --potop "$POTOP" --model "$dir/model" --name small "$@"
      rm -rf "$dir" ;;
    mpi)
      if ! command -v mpirun >/dev/null; then echo "mpi: no mpirun on PATH (scripts/setup.sh --all installs OpenMPI)"; return; fi
      build potop && bash bench/mpi.sh "$POTOP" "$@" ;;
    train) build potop_bench && $PY bench/run.py --bench build/release/bench/potop_bench "$@" ;;
    busy) build potop potop_bench && $PY bench/busy_core.py --potop "$POTOP" --bench build/release/bench/potop_bench "$@" ;;
    quant) build potop serve_client potop_bench && $PY bench/quant.py --potop "$POTOP" --bench build/release/bench/potop_bench "$@" ;;
    llama) build potop potop_bench && $PY bench/llama.py --potop "$POTOP" --bench build/release/bench/potop_bench "$@" ;;
    import) build potop potop_bench && $PY bench/import.py --potop "$POTOP" --bench build/release/bench/potop_bench "$@" ;;
    gpt2) build potop potop_bench && $PY bench/gpt2.py --bench build/release/bench/potop_bench --potop "$POTOP" "$@" ;;
  esac
}

if [ "${1:-}" = all ]; then
  shift
  quick=0
  [ "${1:-}" = --quick ] && quick=1
  started=$SECONDS
  section() {  # section <title> <workload> [flags]
    local title=$1 t=$SECONDS
    shift
    echo
    echo "=== $title ($(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)) ==="
    workload "$@" || echo "$title: FAILED (exit $?)"
    echo "=== $title: $((SECONDS - t)) s ==="
  }
  if [ $quick = 1 ]; then
    section "training and generation vs PyTorch" train --quick
    section "tokenizers vs SentencePiece" tokenizers --quick
    section "word2vec vs gensim and fastText" word2vec --quick --speed-only
    section "translation vs PyTorch" translate --quick
    section "BERT and classifiers vs PyTorch and fastText" classify --quick
    SERVE_MODEL_STEPS=50 section "potop serve" serve --clients 1,4,16 --seconds 3
    section "MPI ranks vs threads" mpi 1
    section "one core busy" busy --quick
    section "quantized models vs f32" quant --quick
    section "Llama: vs PyTorch, vs the GPT at equal time, generation" llama --quick
    section "GPT-2 124M: training vs PyTorch, context sweep, generation vs llama.cpp" gpt2 --quick
  else
    section "training and generation vs PyTorch" train
    section "tokenizers vs SentencePiece" tokenizers
    section "word2vec vs gensim and fastText" word2vec
    section "translation vs PyTorch" translate
    section "BERT and classifiers vs PyTorch and fastText" classify
    section "potop serve" serve --clients 1,4,16 --seconds 10
    section "MPI ranks vs threads" mpi 2
    section "one core busy" busy
    section "quantized models vs f32" quant
    section "Llama: vs PyTorch, vs the GPT at equal time, generation" llama
    section "GPT-2 124M: training vs PyTorch, context sweep, generation vs llama.cpp" gpt2
    section "potop import vs PyTorch loading the files" import
  fi
  echo
  echo "all benchmarks: $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
  exit 0
fi
case "${1:-}" in
  tokenizers | word2vec | translate | classify | serve | mpi | busy | quant | llama | gpt2 | import) workload "$@" ;;
  *) workload train "$@" ;;
esac
