#!/usr/bin/env bash
# Multi-process training on one machine (docs/distributed.md): the same global batch trained by
# one process with T threads (its batch split over T model replicas, train/batch_parallel.h) and
# by T MPI ranks of one thread each (gradients summed across ranks, dist/communicator.h),
# alternating, for bench/run.py's small and mid configurations.
#   bash bench/mpi.sh [potop binary] [rounds]
# Prints tokens/s of each (timed around the steps alone: potop train --json), the ratio, and the
# all-reduce's time per step (its exchange, without the wait for the slower rank: with overlap,
# what is left of it after the backward pass) and the gradient bytes (rank 0's --profile table);
# the ranks run with the exchange overlapped with the backward pass and without.
set -euo pipefail
cd "$(dirname "$0")/.."
POTOP=${1:-build/release/src/potop}
ROUNDS=${2:-2}
T=${THREADS:-2}
DATA=../shared/data/potop.txt
WORK=$(mktemp -d "${TMPDIR:-/tmp}/potop-mpi-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [ ! -f "$DATA" ]; then  # a stand-in text: the speed does not depend on it
  for i in $(seq 20000); do echo "Kmicic ruszył z kopyta, a pan Zagłoba zawołał: mości panowie, $i!"; done >"$WORK/text.txt"
  DATA=$WORK/text.txt
fi
MPI=(mpirun --oversubscribe --bind-to none --mca btl self,vader)
[ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)

# name n_layer n_head n_embd block batch steps (bench/run.py's configurations)
CONFIGS=("small 4 4 128 64 12 60" "mid 6 6 384 256 16 8")
printf '%-6s %-22s %12s %14s %12s\n' config run "tokens/s" "exchange ms" "grad MB"
for cfg in "${CONFIGS[@]}"; do
  read -r name L H C B G S <<<"$cfg"
  common=(--data "$DATA" --n-layer "$L" --n-head "$H" --n-embd "$C" --block-size "$B" --steps "$S"
          --eval-interval 100000 --eval-iters 1 --log-interval 100000 --profile --json)
  for round in $(seq "$ROUNDS"); do
    "$POTOP" train "${common[@]}" --batch-size "$G" --threads "$T" --out "$WORK/one" --force \
      >"$WORK/one.json" 2>"$WORK/one.log"
    # The ranks twice: the exchange overlapped with the backward pass (the default, buckets of
    # --mpi-bucket-mb 2) and after it (--mpi-bucket-mb 0).
    for overlap in 2 0; do
      "${MPI[@]}" -np "$T" "$POTOP" train "${common[@]}" --batch-size $((G / T)) --threads 1 --out "$WORK/ranks" \
        --mpi-bucket-mb "$overlap" --force >"$WORK/ranks$overlap.json" 2>"$WORK/ranks$overlap.log"
    done
    params=$(grep -o 'positions: [0-9]*' "$WORK/one.log" | grep -o '[0-9]*')
    one=$(grep -o '"tokens_per_s":[0-9.e+]*' "$WORK/one.json" | cut -d: -f2)
    printf '%-6s %-22s %12.0f %14s %12s\n' "$name" "1 process x $T threads" "$one" - -
    for overlap in 2 0; do
      ranks=$(grep -o '"tokens_per_s":[0-9.e+]*' "$WORK/ranks$overlap.json" | cut -d: -f2)
      allreduce=$(awk '$1 == "exchange" {print $3}' "$WORK/ranks$overlap.log")
      label="$T ranks x 1 thread"; [ "$overlap" = 0 ] && label="$label, no overlap" || label="$label, overlap"
      printf '%-6s %-30s %12.0f %14s %12.1f   ratio %.2f\n' "$name" "$label" "$ranks" "$allreduce" \
        "$(echo "$params * 4 / 1000000" | bc -l)" "$(echo "$ranks / $one" | bc -l)"
    done
  done
  for overlap in 2 0; do
    grep -A40 '^profile' "$WORK/ranks$overlap.log" | grep -E "^  (step|  backward|    start bucket|  allreduce|    wait for ranks|    exchange)" \
      | sed "s/^/  $name, --mpi-bucket-mb $overlap, rank 0: /" || true
  done
done
