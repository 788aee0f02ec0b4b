#!/usr/bin/env bash
# `potop_bench peak` measures with the widest FMA this CPU has (the ISA /proc/cpuinfo lists),
# reports a positive peak and clock, and refuses an unknown --isa; the GEMM ceiling and the read
# bandwidth come out positive. Not a timing test: no figure is compared with a threshold, since
# the machine may be busy.
#   bash bench/check_fma_peak.sh build/release/bench/potop_bench
set -euo pipefail
bench=$1
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
if has avx512f; then want=avx512 lanes=16
elif has avx2 && has fma; then want=avx2 lanes=8
else want=sse lanes=4; fi

out=$("$bench" peak --threads 1 --seconds 0.2)
echo "$out"
/usr/bin/python3 - "$out" "$want" "$lanes" <<'EOF'
import json, sys
r, want, lanes = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
problems = []
if r["isa"] != want: problems.append(f"measured with {r['isa']}, but this CPU's widest is {want}")
if r["lanes"] != lanes: problems.append(f"{r['lanes']} lanes, expected {lanes}")
for key in ("gflops", "ghz", "flops_per_cycle"):
    if not r[key] > 0: problems.append(f"{key} is {r[key]}")
if problems: sys.exit("fma peak: " + "; ".join(problems))
EOF

if "$bench" peak --threads 1 --seconds 0.1 --isa no-such-isa 2>/dev/null; then
  echo "fma peak: an unknown --isa was accepted" >&2; exit 1
fi
echo "fma peak: $want, as /proc/cpuinfo says"

# The GEMM ceiling splits the batch's rows as BatchParallel does: 12 rows of 64 over 2 threads.
out=$("$bench" gemm --threads 2 --batch 12 --block 64 --n-layer 1 --n-embd 64 --n-head 2 --seconds 0.1)
echo "$out"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.argv[1])
rows, gflops = r["rows"], r["gflops"]
if rows != 6 * 64 or not gflops > 0: sys.exit(f"gemm ceiling: rows {rows}, gflops {gflops}")
' "$out"

# The read bandwidth behind generation's "% bw": a positive figure (not a timing test).
out=$("$bench" bandwidth --threads 1 --seconds 0.1)
echo "$out"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.argv[1])
if not r["gbs"] > 0: sys.exit(f"read bandwidth: {r}")
' "$out"
