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
  # the default corpus on machines without ../shared/data/potop.txt
  fortunes-pl
)

if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
