#!/usr/bin/env bash
# Shows that a refactor of the trainers changed no arithmetic: trains the same fixed-seed tiny runs
# with two potop binaries and compares them bit for bit.
#   scripts/check-same-weights.sh OLD_POTOP NEW_POTOP
# Runs, for each trainer (potop train on characters, potop train --arch llama, potop bow train, potop translate train, potop
# translate pretrain, potop bert pretrain, potop classify train: lib.sh's tiny_run): 24 steps at
# --threads 1 and at --threads 2, and 12 steps resumed to 24 (--resume). For each run it
# compares every tensor of latest.safetensors and resume.safetensors (the tensors' dtype, shape and
# bytes; not the JSON header, whose metadata may gain fields) and the metrics.jsonl records
# without their timings. One ok/FAIL line per run; exit status 1 when anything differs.
# NEW_ARGS (environment): extra options for NEW_POTOP's fresh runs, to see that a difference is
# caught (e.g. NEW_ARGS="--seed 7"). Only options that both binaries accept are used.
set -euo pipefail
[ $# = 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 OLD_POTOP NEW_POTOP" >&2; exit 2; }
NEW=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
read -r -a NEW_ARGS <<<"${NEW_ARGS:-}"
POTOP=$1  # lib.sh: a temporary directory, make_corpus, make_pairs, tiny_run, ok / fail / finish
source "$(dirname "$0")/../tests/cli/lib.sh"
OLD=$POTOP

make_corpus text.txt 1500
make_pairs pairs.tsv 300

# TRAIN with its --threads value replaced (options given twice are refused).
threads() {  # threads <n>: sets RUN
  local a
  RUN=()
  for a in "${TRAIN[@]}"; do
    [ "${#RUN[@]}" -gt 0 ] && [ "${RUN[-1]}" = --threads ] && a=$1
    RUN+=("$a")
  done
}

# The same run with one binary into <dir>: fresh to <steps>, or fresh to <steps>/2 then resumed.
run() {  # run <binary> <dir> <threads> <steps> <fresh|resume> <extra options>...
  local bin=$1 dir=$2 n=$3 steps=$4 how=$5
  shift 5
  threads "$n"
  if [ "$how" = fresh ]; then
    "$bin" "${RUN[@]}" --out "$dir" --steps "$steps" --eval-interval 6 "$@" >/dev/null 2>"$dir.log"
  else
    "$bin" "${RUN[@]}" --out "$dir" --steps $((steps / 2)) --eval-interval 6 "$@" >/dev/null 2>"$dir.log" &&
      "$bin" "${SUBCOMMAND[@]}" --resume "$dir" --steps "$steps" >/dev/null 2>>"$dir.log"
  fi
}

# Compares two runs' checkpoints tensor by tensor and their metrics records; prints what differs.
same_bits() {  # same_bits <dir> <dir>
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, struct, sys
a, b = sys.argv[1], sys.argv[2]
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}
# Timings differ run to run; fields a new binary adds to the records are not compared.
KEYS = ("kind", "step", "loss", "train_loss", "val_loss", "grad_norm", "lr", "dev_bleu", "dev_chrf", "dev_accuracy")
def records(d):
    return [{k: r.get(k) for k in KEYS} for r in map(json.loads, open(f"{d}/metrics.jsonl"))]
diffs, count = [], 0
for f in ("latest.safetensors", "resume.safetensors"):
    ta, tb = tensors(f"{a}/{f}"), tensors(f"{b}/{f}")
    if ta.keys() != tb.keys():
        diffs.append(f"{f}: tensors only in one: {sorted(ta.keys() ^ tb.keys())[:5]}")
    for k in sorted(ta.keys() & tb.keys()):
        count += 1
        if ta[k] != tb[k]:
            diffs.append(f"{f}: {k} differs" + ("" if ta[k][:2] == tb[k][:2] else f" ({ta[k][:2]} vs {tb[k][:2]})"))
ra, rb = records(a), records(b)
if len(ra) != len(rb):
    diffs.append(f"metrics.jsonl: {len(ra)} vs {len(rb)} records")
diffs += [f"metrics.jsonl: {x} vs {y}" for x, y in zip(ra, rb) if x != y][:3]
if diffs:
    print(f"{len(diffs)} difference(s): " + "; ".join(diffs[:4]))
    sys.exit(1)
print(f"identical ({count} tensors, {len(ra)} metrics records)")
PY
}

for trainer in gpt llama bow translate pretrain bert classify; do
  tiny_run "$trainer"
  for what in "threads=1 1 fresh" "threads=2 2 fresh" "resume 1 resume"; do
    read -r name n how <<<"$what"
    dir=$trainer-$name
    if ! run "$OLD" "old-$dir" "$n" 24 "$how"; then fail "$trainer $name: the old binary failed: $(tail -n 2 "old-$dir.log")"; continue; fi
    if ! run "$NEW" "new-$dir" "$n" 24 "$how" "${NEW_ARGS[@]}"; then fail "$trainer $name: the new binary failed: $(tail -n 2 "new-$dir.log")"; continue; fi
    if out=$(same_bits "old-$dir" "new-$dir" 2>&1); then ok "$trainer $name: $out"; else fail "$trainer $name: $out"; fi
  done
done
finish
