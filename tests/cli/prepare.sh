#!/usr/bin/env bash
# potop prepare and training from a prepared data directory (docs/data.md).
#   prepare.sh <potop> <group>
#   train:  prepare -> train gives bit-identical weights and losses to training on the text;
#           sample and eval from it; resume from prepared data equals an uninterrupted run;
#           --tokenizer, a directory of documents and its split
#   bad:    bad inputs, each one clear line naming the file or field, exit 1, nothing overwritten
#   memory: training from a shard set larger than the address space the process may use
POTOP=$1
GROUP=${2:-}
source "$(dirname "$0")/lib.sh"

# The same options for every run that is compared.
RUN=("${TINY[@]}" --eval-interval 10)

case "$GROUP" in
train)
  make_corpus text.txt 6000
  "$POTOP" prepare --data text.txt --out data 2>prep.log || fail "prepare: $(cat prep.log)"
  grep -q "^prepared data: 1 file" prep.log && ok "prepare reports what it wrote" || fail "prepare's summary: $(cat prep.log)"
  [ -s data/data.json ] && [ -s data/tokens-00000.bin ] && [ -s data/tokenizer/vocab.json ] &&
    ok "data.json, a shard and the tokenizer are written" || fail "missing files in data/: $(ls -R data)"

  # A prepare killed mid-way leaves OUT.partial-PID: the next run into OUT removes it and says so;
  # the partial of a prepare still running (here: this shell's pid) stays.
  sleep 0 & dead=$!
  wait "$dead"
  mkdir -p "stale.partial-$dead" "stale.partial-$$"
  head -c 100000 /dev/zero >"stale.partial-$dead/tokens-00000.bin"
  "$POTOP" prepare --data text.txt --out stale 2>stale.log || fail "prepare into stale: $(cat stale.log)"
  if [ ! -e "stale.partial-$dead" ] && [ -d "stale.partial-$$" ] &&
      grep -q "note: removed stale.partial-$dead (0.1 MB), left by a prepare that was killed" stale.log; then
    ok "a killed prepare's partial output is removed, and said; a live one's is left"
  else
    fail "stale partials: $(ls -d stale.partial-* 2>/dev/null) $(cat stale.log)"
  fi
  rm -rf "stale.partial-$$"

  # The ids are those of the text, as the docs' numpy snippet reads them.
  /usr/bin/python3 - data text.txt <<'EOF' && ok "numpy reads the shards as the text's ids" || fail "numpy read of the shards"
import json, sys, numpy as np
d, text = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
meta = json.load(open(f"{d}/data.json"))
vocab = json.load(open(f"{d}/tokenizer/vocab.json"))
dtype = {"u16": "<u2", "u32": "<u4"}[meta["ids"]]
ids = np.concatenate([np.fromfile(f"{d}/{s['file']}", dtype=dtype) for s in meta["shards"]])
assert "".join(vocab[i] for i in ids) == text
assert len(ids) == meta["counts"]["tokens"] == meta["train"]["tokens"] + meta["val"]["tokens"]
EOF

  # Bit-exact: the same weights and the same loss lines as training on the text.
  "$POTOP" train --data text.txt --out raw "${RUN[@]}" --steps 20 2>raw.log || fail "train on text: $(tail -n 2 raw.log)"
  "$POTOP" train --data data --out prep "${RUN[@]}" --steps 20 2>prep-train.log || fail "train on prepared: $(tail -n 2 prep-train.log)"
  grep -q "^data: data (prepared)" prep-train.log && ok "train says it reads prepared data" || fail "$(head -n 3 prep-train.log)"
  cmp raw/latest.safetensors prep/latest.safetensors && ok "prepared data trains bit-identical weights to the text" ||
    fail "weights differ between the text and its prepared data"
  cmp <(losses raw) <(losses prep) && ok "and the same loss lines" || fail "losses differ: $(diff <(losses raw) <(losses prep) | head -n 4)"
  cmp raw/vocab.json prep/vocab.json && ok "the model keeps the data's tokenizer" || fail "vocab.json differs"

  # A prepared set made in parallel with small chunks is byte-identical to a serial one.
  "$POTOP" prepare --data text.txt --out data-par --threads 2 --chunk-bytes 200 --shard-tokens 7000 2>/dev/null &&
    "$POTOP" prepare --data text.txt --out data-ser --threads 1 --shard-tokens 7000 2>/dev/null ||
    fail "prepare with --threads / --chunk-bytes / --shard-tokens"
  cmp <(cat data-par/tokens-*.bin) <(cat data-ser/tokens-*.bin) && cmp <(cat data-par/tokens-*.bin) <(cat data/tokens-*.bin) &&
    [ "$(ls data-par/tokens-*.bin | wc -l)" -gt 1 ] && ok "parallel small chunks == serial, over several shards" ||
    fail "parallel and serial shards differ"
  "$POTOP" train --data data-par --out prep-par "${RUN[@]}" --steps 20 2>/dev/null && cmp raw/latest.safetensors prep-par/latest.safetensors &&
    ok "and train the same weights across shard boundaries" || fail "several shards trained other weights"

  # Sample and eval from the model; eval of the prepared validation split equals eval of its text.
  out=$("$POTOP" sample --model prep --prompt "pan" --tokens 20 --temperature 0) && [[ "$out" == pan* ]] &&
    ok "sample from a model trained on prepared data" || fail "sample: $out"
  n=$(/usr/bin/python3 -c "import json; print(json.load(open('data/data.json'))['train']['tokens'])")
  /usr/bin/python3 -c "import sys; t = open('text.txt', encoding='utf-8').read(); open('val.txt', 'w', encoding='utf-8').write(t[$n:])"
  "$POTOP" eval --model prep --data data --json >eval-prep.json 2>/dev/null &&
    "$POTOP" eval --model prep --data val.txt --json >eval-text.json 2>/dev/null &&
    cmp <(sed 's/"checkpoint":[^,}]*//' eval-prep.json) <(sed 's/"checkpoint":[^,}]*//' eval-text.json) &&
    ok "eval of the prepared val split equals eval of its text" ||
    fail "eval differs: $(cat eval-prep.json eval-text.json)"
  "$POTOP" eval --model prep --data data --split train --json >eval-train.json 2>/dev/null &&
    ok "eval --split train" || fail "eval --split train"

  # Resume from prepared data: stopped at step 10 and resumed, the run ends where an
  # uninterrupted one does.
  "$POTOP" train --data data --out part "${RUN[@]}" --steps 10 --lr-decay-steps 20 2>/dev/null &&
    "$POTOP" train --resume part --steps 20 2>resume.log &&
    "$POTOP" train --data data --out whole "${RUN[@]}" --steps 20 --lr-decay-steps 20 2>/dev/null ||
    fail "resume from prepared data: $(tail -n 2 resume.log)"
  cmp part/latest.safetensors whole/latest.safetensors && ok "a resumed run on prepared data equals an uninterrupted one" ||
    fail "resumed weights differ from the uninterrupted run's"

  # --tokenizer: a model's; the data then trains with it.
  "$POTOP" prepare --data text.txt --tokenizer raw --out data-tok 2>/dev/null && cmp data-tok/tokens-00000.bin data/tokens-00000.bin &&
    ok "--tokenizer gives the same ids as the corpus's own char tokenizer" || fail "prepare --tokenizer"

  # A directory of documents, split by document.
  mkdir -p docs/b
  for i in 0 1 2 3 4 5 6 7 8 9; do make_corpus "docs/$((i / 5 == 0 ? 0 : 1))$i.txt" 400; done
  mv docs/1*.txt docs/b/
  "$POTOP" prepare --data docs --out data-docs --split documents --val-fraction 0.2 --json >docs.json 2>/dev/null &&
    /usr/bin/python3 -c "
import json; r = json.load(open('docs.json')); m = json.load(open('data-docs/data.json'))
assert r['files'] == 10 and r['val_documents'] == 2 and r['train_documents'] == 8, r
assert [f['split'] for f in m['files']].count('val') == 2
assert all(s['file'].startswith(('train-', 'val-')) for s in m['shards'])
" && ok "--split documents puts whole files in validation" || fail "documents split: $(cat docs.json)"
  "$POTOP" train --data data-docs --out docs-model "${TINY[@]}" --steps 4 2>/dev/null &&
    ok "train from a documents split" || fail "train from a documents split"
  ;;

bad)
  make_corpus text.txt 3000
  make_corpus other.txt 3000
  printf 'Жили-были\n' >>other.txt
  "$POTOP" prepare --data text.txt --out data 2>/dev/null || fail "prepare"
  "$POTOP" prepare --data other.txt --out other-data 2>/dev/null || fail "prepare other"
  "$POTOP" train --data data --out run "${TINY[@]}" --steps 4 2>/dev/null || fail "train"

  # Another tokenizer than the model's.
  expect_error "resume on data of another tokenizer" 1 strict "other-data: prepared with the char tokenizer of" \
    "but the tokenizer of the run in run is" -- train --resume run --data other-data --steps 8 --allow-data-change
  expect_error "fine-tune on data of another tokenizer" 1 strict "other-data: prepared with" "--init-from run" -- \
    train --init-from run --data other-data --out ft "${TINY[@]}" --steps 4
  expect_error "eval on data of another tokenizer" 1 strict "other-data: prepared with" "the model's tokenizer" -- \
    eval --model run --data other-data
  expect_error "--val-fraction against a prepared split" 1 strict "--val-fraction 0.2" "was split by potop prepare" -- \
    train --data data --out run2 --val-fraction 0.2 "${TINY[@]}" --steps 4

  # Broken data directories.
  cp -r data trunc && truncate -s -2 trunc/tokens-00000.bin
  expect_error "truncated shard" 1 strict "trunc/tokens-00000.bin: truncated" -- train --data trunc --out r1 "${TINY[@]}" --steps 4
  cp -r data corrupt && printf '\x07' | dd of=corrupt/tokens-00000.bin bs=1 seek=100 conv=notrunc 2>/dev/null
  expect_error "corrupt shard" 1 strict "corrupt/tokens-00000.bin: corrupted" "checksum" -- \
    train --data corrupt --out r2 "${TINY[@]}" --steps 4
  cp -r data badjson && printf '{"format": "potop.data",' >badjson/data.json
  expect_error "data.json not JSON" 1 strict "badjson/data.json: not valid JSON" -- train --data badjson --out r3 "${TINY[@]}"
  cp -r data noids && /usr/bin/python3 -c "
import json; m = json.load(open('noids/data.json')); del m['ids']; json.dump(m, open('noids/data.json', 'w'))"
  expect_error "data.json without a field" 1 strict "noids/data.json: \"ids\" is missing" -- train --data noids --out r4 "${TINY[@]}"
  cp -r data missing && rm missing/tokens-00000.bin
  expect_error "missing shard" 1 strict "missing/tokens-00000.bin: shard missing" -- eval --model run --data missing
  mkdir -p nodata && : >nodata/readme
  expect_error "a directory without data.json" 1 strict "nodata: not a prepared data directory (no data.json)" -- \
    eval --model run --data nodata
  expect_error "train on a directory without data.json" 1 strict "nodata: not a prepared data directory (no data.json)" -- \
    train --data nodata --out r5
  [ ! -e r1 ] && [ ! -e r2 ] && [ ! -e r3 ] && ok "no model directory is written for bad data" || fail "a model directory was written"

  # Bad corpora.
  mkdir -p empty-dir
  expect_error "empty corpus directory" 1 strict "empty-dir: no text files in this directory" -- prepare --data empty-dir --out d1
  : >empty.txt
  expect_error "empty file" 1 strict "empty.txt: file is empty" -- prepare --data empty.txt --out d2
  { cat text.txt; printf 'ok\n\xff\n'; } >latin.txt
  expect_error "invalid UTF-8" 1 strict "latin.txt: invalid UTF-8 at byte offset $(wc -c <text.txt | awk '{print $1 + 3}')" \
    "(line 232)" -- prepare --data latin.txt --out d3
  mkdir -p mixed && cp text.txt mixed/a.txt && cp latin.txt mixed/b.txt
  expect_error "invalid UTF-8 in a directory" 1 strict "mixed/b.txt: invalid UTF-8" -- prepare --data mixed --out d4
  expect_error "invalid UTF-8 with a tokenizer" 1 strict "latin.txt: invalid UTF-8" -- \
    prepare --data latin.txt --tokenizer data/tokenizer --out d5
  expect_error "text the tokenizer lacks" 1 strict "other.txt" "'Ж' (U+0416)" "--unknown skip" -- \
    prepare --data other.txt --tokenizer data/tokenizer --out d6
  [ ! -e d1 ] && [ ! -e d2 ] && [ ! -e d3 ] && [ ! -e d4 ] && [ ! -e d5 ] && [ ! -e d6 ] &&
    [ -z "$(ls -d ./*.partial-* 2>/dev/null)" ] && ok "nothing is left behind" || fail "a failed prepare left files: $(ls)"

  # An --out that exists.
  before=$(cat data/data.json)
  expect_error "--out exists" 1 strict "--out data: already exists" "--force" -- prepare --data other.txt --out data
  mkdir -p notdata && echo keep >notdata/file
  expect_error "--force on a directory that is no data" 1 strict "--out notdata" "not a prepared data directory" -- \
    prepare --data text.txt --out notdata --force
  [ "$(cat data/data.json)" = "$before" ] && [ "$(cat notdata/file)" = keep ] && ok "--out is left as it was" ||
    fail "--out was changed"
  "$POTOP" prepare --data other.txt --out data --force 2>/dev/null && [ "$(cat data/data.json)" != "$before" ] && ok "--force replaces a data directory" || fail "--force did not replace it"
  expect_error "--out inside --data" 1 strict "is inside --data" -- prepare --data mixed --out mixed/out
  ;;

memory)
  make_corpus small.txt 3000
  "$POTOP" prepare --data small.txt --out small 2>/dev/null || fail "prepare small"
  line=$(head -c 2000 small.txt | tr '\n' ' ')
  # ldd's whole output first: `ldd | grep -q` under pipefail fails whenever grep stops reading
  # before ldd has written its last line (SIGPIPE), and the MPI build's list is long.
  libraries=$(ldd "$POTOP" 2>/dev/null || true)
  if grep -qE 'lib(asan|tsan|msan|hwasan)' <<<"$libraries"; then
    # A sanitizer reserves terabytes of address space for its shadow memory, so no ulimit -v lets
    # the binary start. The bound is checked on peak resident memory instead: training from the
    # shards stays below their size; training on the text they came from does not.
    (yes "$line" || true) | head -c $((128 * 1024 * 1024)) >big.txt
    "$POTOP" prepare --data big.txt --out big 2>/dev/null || fail "prepare big"
    shards=$(cat big/tokens-*.bin | wc -c)
    peak_kib() {  # peak_kib <command>...: the peak RSS of a command that succeeds, else -1
      /usr/bin/python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)' "$@"
    }
    prepared=$(peak_kib "$POTOP" train --data big --out run "${TINY[@]}" --steps 3)
    text=$(peak_kib "$POTOP" train --data big.txt --out run-text "${TINY[@]}" --steps 3)
    [ "$prepared" -gt 0 ] && [ $((prepared * 1024)) -lt "$shards" ] &&
      ok "sanitized build: training from $shards bytes of shards peaks at $prepared KiB" ||
      fail "training from $shards bytes of shards peaked at $prepared KiB (-1: failed)"
    [ "$text" -gt 0 ] && [ $((text * 1024)) -gt "$shards" ] &&
      ok "and training on their text in memory peaks above it, at $text KiB" ||
      fail "training on the text peaked at $text KiB, not above the shards' $shards bytes (-1: failed)"
    finish
    exit
  fi
  # The address space potop needs to train a tiny model from a tiny prepared set (libraries,
  # thread stacks, OpenBLAS's buffers, the model), found by bisection so the limit follows the
  # build. Below what it needs OpenBLAS retries its allocation forever: a probe that does not
  # end in 5 s does not fit.
  fits() { (ulimit -v "$1" && timeout -s KILL 5 "$POTOP" train --data small --out "fit-$1" "${TINY[@]}" --steps 2 >/dev/null 2>&1); }
  lo=262144 hi=2097152  # KiB
  fits "$hi" || { fail "training a tiny model does not fit in 2 GiB of address space"; finish; }
  while [ $((hi - lo)) -gt 32768 ]; do
    mid=$(((lo + hi) / 2))
    if fits "$mid"; then hi=$mid; else lo=$mid; fi
  done
  rm -rf fit-*
  limit=$((hi + 65536))  # KiB: the baseline, and 64 MiB for the shard windows and data.json
  echo "baseline address space: $hi KiB; limit: $limit KiB"
  # A corpus whose shards alone are larger than the whole limit: mapping or reading them whole
  # is impossible within it. Lines are repeated text (cheap to generate), u16 ids: 2 bytes each.
  need=$((limit * 1024 + 32 * 1024 * 1024))  # shard bytes
  (yes "$line" || true) | head -c $((need * 6 / 10)) >big.txt  # yes ends by SIGPIPE; some letters take 2 bytes
  "$POTOP" prepare --data big.txt --out big 2>/dev/null || fail "prepare big"
  shards=$(cat big/tokens-*.bin | wc -c)
  [ "$shards" -gt $((limit * 1024)) ] && ok "shards: $shards bytes > the limit of $((limit * 1024)) bytes" ||
    fail "the shards ($shards bytes) are not larger than the limit ($((limit * 1024)) bytes)"
  (ulimit -v "$limit" && timeout -s KILL 120 "$POTOP" train --data big --out run "${TINY[@]}" --steps 3 2>train.log) &&
    ok "training from them under ulimit -v $limit" || fail "training under the limit: $(tail -n 3 train.log)"
  # The limit bites: holding the ids in memory fails under it, whether python reads the shards
  # or potop trains on the text they came from.
  if (ulimit -v "$limit" && /usr/bin/python3 -c "
import sys
data = b''.join(open(f, 'rb').read() for f in sys.argv[1:])
print(len(data))" big/tokens-*.bin >/dev/null 2>&1); then
    fail "python read all $shards bytes of shards under ulimit -v $limit: the limit does not bite"
  else
    ok "reading the shards whole fails under the same limit"
  fi
  printf 'ulimit -v %s && exec "$@"\n' "$limit" >limited.sh
  RUNNER="bash limited.sh" expect_error "the text path under the same limit" 1 log "out of memory" -- \
    train --data big.txt --out run-text "${TINY[@]}" --steps 3
  ;;

*) echo "unknown group '$GROUP' (train, bad, memory)" >&2; exit 2 ;;
esac
finish
