#!/usr/bin/env bash
# Builds potop and runs the whole test suite: `bash scripts/test.sh`.
# Installs missing Debian packages first (needs root or sudo), so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
preset=${POTOP_PRESET:-release}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -j2
