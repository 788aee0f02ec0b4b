#!/usr/bin/env bash
# Prints the path of the default training corpus:
#   ../shared/data/potop.txt (Sienkiewicz's "Potop") when it is beside the checkout, else
#   runs/fortunes-pl.txt, built from Debian's fortunes-pl package (about 2 MB of Polish).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f ../shared/data/potop.txt ]; then
  realpath ../shared/data/potop.txt
  exit 0
fi
src=/usr/share/games/fortunes/pl
if [ ! -d "$src" ]; then
  echo "default-corpus: neither ../shared/data/potop.txt nor $src (package fortunes-pl) exists" >&2
  exit 1
fi
mkdir -p runs
out=runs/fortunes-pl.txt
if [ ! -s "$out" ]; then
  # The fortune files, without the '%' lines that separate fortunes and the .dat indexes.
  find "$src" -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' -print0 | sort -z |
    xargs -0 cat | grep -v '^%$' > "$out.tmp"
  mv "$out.tmp" "$out"
fi
realpath "$out"
