#!/usr/bin/env bash
# Installs every Debian package potop needs to build, run, test and benchmark.
# Safe to run again: apt skips what is already installed.
set -euo pipefail

packages=(
  # build
  build-essential g++ cmake ninja-build pkg-config
  # libraries
  libopenblas-openmp-dev libdnnl-dev libcli11-dev nlohmann-json3-dev libomp-dev
  # tokenizers: SentencePiece (bpe, unigram) and ICU (word boundaries, case mapping)
  libsentencepiece-dev libicu-dev
  # multi-process training (mpirun -np P potop train: docs/distributed.md)
  openmpi-bin libopenmpi-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # SentencePiece's own spm_train and spm_encode: the agreement tests and the tokenizer benchmark
  sentencepiece
  # fuzzing (scripts/fuzz.sh): clang, and its libFuzzer and sanitizer runtimes
  clang libclang-rt-14-dev
  # the PyTorch reference oracle (Debian's /usr/bin/python3)
  python3 python3-torch python3-numpy
  # the BLEU reference of scripts/translation_metrics_expected.py (nltk's corpus_bleu)
  python3-nltk
  # the default corpus on machines without ../shared/data/potop.txt
  fortunes-pl
  # potop serve: HTTP (cpp-httplib); its browser test (chromium driven by playwright-core from
  # npm, tests/browser) and load benchmark (wrk)
  libcpp-httplib-dev chromium nodejs npm wrk
  # the reverse proxy docs/serve.md sets up in front of potop serve (tests/cli/serve_proxy.sh), with TLS
  nginx-light openssl
  # word2vec's anchors: gensim (tests read potop's vectors with it; bench/word2vec.py) and fastText
  python3-gensim fasttext
  # the English pre-training corpus (scripts/pretrain-corpus.sh, docs/transfer.md): WordNet's
  # glosses, the King James Bible (its text and the program that decompresses it), the fortunes
  wordnet-base bible-kjv bible-kjv-text fortunes-min fortunes
  # the PyTorch fine-tuning reference (scripts/torch_classify.py) reads potop's tokenizer.model
  python3-sentencepiece
)

if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
missing=()
for p in "${packages[@]}"; do
  # A Node.js from elsewhere (NodeSource's) bundles its own npm, which Debian's npm package
  # conflicts with: an npm on PATH is enough.
  if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# playwright-core for the studio's browser test: the version pinned in tests/browser/package-lock.json
# (it drives Debian's chromium; no browser is downloaded). OpenAI's Node SDK, the client the serve
# tests use: the version pinned in tests/clients/package-lock.json.
(cd "$(dirname "$0")/../tests/browser" && npm ci --no-audit --no-fund --silent)
(cd "$(dirname "$0")/../tests/clients" && npm ci --no-audit --no-fund --silent)
