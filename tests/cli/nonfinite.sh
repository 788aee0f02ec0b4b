#!/usr/bin/env bash
# Numerical guards: a step whose loss or gradient norm is not finite stops the run with the
# step number and the last good checkpoint, or is skipped and counted with --skip-nonfinite.
# An absurd learning rate (1e30, no clipping) blows the weights up after one update.
#   nonfinite.sh <potop>
POTOP=$1
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 2000
ARGS=(train --data text.txt "${TINY[@]}" --steps 20 --eval-interval 10 --lr 1e30 --min-lr 0 --warmup 0 --grad-clip 0)
expect_error "non-finite loss" 1 log "step 2:" "not finite" "training stopped" "run/resume.safetensors (step 0)" \
  "--skip-nonfinite" -- "${ARGS[@]}" --out run
"$POTOP" train --resume run --steps 20 --lr 1e-3 --min-lr 1e-4 2>resume.log &&
  ok "the named checkpoint resumes with a lower --lr" || fail "resume with a lower --lr failed: $(tail -n 2 resume.log)"
grep -q 'note: --lr 0.001' resume.log && ok "the changed --lr is noted" || fail "no note about the changed --lr"

rc=0
"$POTOP" "${ARGS[@]}" --out skipping --skip-nonfinite 2>skip.log || rc=$?
line=$(grep -o 'skipped [0-9]* steps with a non-finite loss or gradient norm' skip.log || true)
[ "$rc" = 0 ] && [ -n "$line" ] && ok "--skip-nonfinite: exit 0, $line" || fail "--skip-nonfinite: exit $rc, $(tail -n 2 skip.log)"
grep -q '"kind":"skipped"' skipping/metrics.jsonl && ok "skipped steps are in metrics.jsonl" ||
  fail "no skipped records in metrics.jsonl"

# Weights that are NaN or infinite are refused at import, naming the tensor, and nothing is written:
# a tiny Llama exported for Hugging Face, with one float of its largest tensor made NaN or +inf
# (and potop's checksum left out, as in a file another tool wrote).
"$POTOP" tokenizer train --kind bpe --vocab-size 400 --data text.txt --out tok >/dev/null 2>tok.log ||
  fail "tokenizer train: $(cat tok.log)"
"$POTOP" train --data text.txt --tokenizer tok --arch llama --out llama --steps 2 "${TINY[@]}" >/dev/null 2>llama.log ||
  fail "train --arch llama: $(tail -n 2 llama.log)"
"$POTOP" export -m llama --format hf -o hf >/dev/null 2>export.log || fail "export --format hf: $(cat export.log)"
"$POTOP" import hf --out imported >/dev/null 2>import.log && ok "the exported model imports" ||
  fail "the exported model does not import: $(cat import.log)"
for bits in 7fc00000:NaN 7f800000:"an infinite value"; do
  cp -r hf "bad-${bits%%:*}"
  tensor=$(/usr/bin/python3 - "bad-${bits%%:*}/model.safetensors" "${bits%%:*}" <<'PY'
import json, struct, sys
path, bits = sys.argv[1], int(sys.argv[2], 16)
with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = bytearray(f.read())
name, t = max(((k, v) for k, v in header.items() if k != "__metadata__" and v["dtype"] == "F32"),
              key=lambda kv: kv[1]["data_offsets"][1] - kv[1]["data_offsets"][0])
data[t["data_offsets"][0] + 12:t["data_offsets"][0] + 16] = struct.pack("<I", bits)
header["__metadata__"] = {"format": "pt"}
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
print(name)
PY
  )
  expect_error "import of weights holding ${bits#*:} ($tensor)" 1 strict "holds ${bits#*:}" "potop imports only finite weights" \
    -- import "bad-${bits%%:*}" --out "imported-${bits%%:*}"
  [ ! -e "imported-${bits%%:*}" ] && ok "nothing written for ${bits#*:}" || fail "import of ${bits#*:} wrote imported-${bits%%:*}"
done
finish
