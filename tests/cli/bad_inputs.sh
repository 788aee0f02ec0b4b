#!/usr/bin/env bash
# Every bad input gets one clear line: a table of bad inputs, each run through the real binary,
# checking the exit code and that the message names the culprit (lib.sh: expect_error).
#   bad_inputs.sh <potop> <group>    group: data | flags | model | resume
# With MESSAGES=<file> the messages are collected there (for documentation).
POTOP=$1
GROUP=$2
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
make_corpus small.txt 12   # ~80 characters: fewer than a block of 128 needs

# A finished tiny run to break in various ways (model and resume groups).
make_run() {  # make_run <dir>
  "$POTOP" train --data text.txt --out "$1" "${TINY[@]}" --steps 6 --eval-interval 3 2>/dev/null ||
    { echo "could not train the run the tests start from" >&2; exit 1; }
}
copy_run() { rm -rf "$2"; cp -r "$1" "$2"; }
# Overwrites one byte of a file (in place, keeping its size).
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# A valid safetensors file with one F32 tensor 'foreign.weight' and nothing potop expects.
write_foreign() {
  local header='{"foreign.weight":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
  while (( ${#header} % 8 != 0 )); do header+=' '; done
  { printf "\\x$(printf %02x ${#header})\\x00\\x00\\x00\\x00\\x00\\x00\\x00"; printf '%s' "$header"; printf '\0\0\0\0\0\0\0\0'; } >"$1"
}

case $GROUP in
data)
  : >empty.txt
  mkdir -p folder.txt
  printf 'abc\0def' >binary.txt
  printf 'dobry\nwiecz\xc3\xb3r\nz\xff\n' >latin.txt
  printf '\xef\xbb\xbf' >bom.txt
  printf 'tajne' >secret.txt && chmod 000 secret.txt
  expect_error "missing data file" 1 strict "nope.txt" "not found" -- train --data nope.txt --out o
  expect_error "empty data file" 1 strict "empty.txt" "empty" -- train --data empty.txt --out o
  expect_error "data file is a directory" 1 strict "folder.txt" "directory" -- train --data folder.txt --out o
  expect_error "binary data file" 1 strict "binary.txt" "binary" "offset 3" -- train --data binary.txt --out o
  expect_error "invalid UTF-8" 1 strict "latin.txt" "invalid UTF-8" "offset 16" "line 3" -- train --data latin.txt --out o
  expect_error "only a byte-order mark" 1 strict "bom.txt" "byte-order mark" -- train --data bom.txt --out o
  RUNNER=as_unprivileged expect_error "unreadable data file" 1 strict "secret.txt" "Permission denied" -- \
    train --data "$WORK/secret.txt" --out "$WORK/o"
  expect_error "corpus shorter than block_size + 1" 1 strict "small.txt" "--block-size + 1 = 129" -- \
    train --data small.txt --out o --block-size 128
  expect_error "too short for a validation split" 1 strict "text.txt" "validation split" "--val-fraction" -- \
    train --data text.txt --out o --block-size 512 --val-fraction 0.01
  expect_error "no data file given" 1 strict "--data is required" -- train --out o
  ;;
flags)
  printf '{"n_layer": 2,' >broken.json
  printf '{"n_layers": 2}' >typo.json
  printf '{"n_layer": "two"}' >type.json
  printf '{"n_layer": 4294967298}' >range.json
  printf '[1, 2]' >array.json
  : >a-file
  mkdir -p readonly && chmod 555 readonly
  d=(train --data text.txt --out o)
  expect_error "n_embd not divisible by n_head" 1 strict "--n-embd (30) must be divisible by --n-head (4)" -- "${d[@]}" --n-embd 30 --n-head 4
  expect_error "zero layers" 1 strict "--n-layer must be positive (got 0)" -- "${d[@]}" --n-layer 0
  expect_error "negative batch size" 1 strict "--batch-size must be positive (got -3)" -- "${d[@]}" --batch-size -3
  expect_error "zero block size" 1 strict "--block-size must be positive" -- "${d[@]}" --block-size 0
  expect_error "zero steps" 1 strict "--steps must be positive" -- "${d[@]}" --steps 0
  expect_error "learning rate NaN" 1 strict "--lr" "finite" -- "${d[@]}" --lr nan
  expect_error "learning rate infinite" 1 strict "--lr" "finite" -- "${d[@]}" --lr inf
  expect_error "negative learning rate" 1 strict "--lr" "positive" -- "${d[@]}" --lr -0.001
  expect_error "min-lr above lr" 1 strict "--min-lr" -- "${d[@]}" --lr 0.001 --min-lr 0.01
  expect_error "dropout of 1" 1 strict "--dropout" "[0, 1)" -- "${d[@]}" --dropout 1
  expect_error "validation fraction of 1" 1 strict "--val-fraction" -- "${d[@]}" --val-fraction 1
  expect_error "too many threads" 1 strict "--threads must be between 0" -- "${d[@]}" --threads 100000
  expect_error "negative threads" 1 strict "--threads" -- "${d[@]}" --threads -1
  expect_error "unknown norm" 1 strict "--norm" "'middle'" -- "${d[@]}" --norm middle
  expect_error "negative keep" 1 strict "--keep" -- "${d[@]}" --keep -2
  expect_error "not a number" 2 strict "--n-layer" "abc" -- "${d[@]}" --n-layer abc
  expect_error "integer overflow" 2 strict "--n-layer" -- "${d[@]}" --n-layer 99999999999
  expect_error "unknown flag" 2 strict "--n-layers" -- "${d[@]}" --n-layers 4
  expect_error "activations too large" 1 strict "--batch-size" "--block-size" -- \
    train --data text.txt --out o --val-fraction 0 --block-size 4096 --batch-size 100000
  expect_error "model larger than memory" 1 strict "GiB" "--n-layer" -- \
    "${d[@]}" --n-layer 1000 --n-embd 16384 --n-head 16
  expect_error "config file not JSON" 1 strict "broken.json" -- "${d[@]}" --config broken.json
  expect_error "config file not an object" 1 strict "array.json" "JSON object" -- "${d[@]}" --config array.json
  expect_error "config file unknown key" 1 strict "typo.json" "unknown option 'n_layers'" -- "${d[@]}" --config typo.json
  expect_error "config file wrong type" 1 strict "type.json: n_layer" "wrong type" -- "${d[@]}" --config type.json
  expect_error "config file value out of range" 1 strict "range.json: n_layer" "out of range" -- "${d[@]}" --config range.json
  expect_error "config file missing" 2 strict "--config" "nope.json" -- "${d[@]}" --config nope.json
  expect_error "output is a file" 1 strict "a-file" "not a directory" -- train --data text.txt --out a-file
  expect_error "output under a file" 1 strict "a-file/run" "cannot create directory" -- train --data text.txt --out a-file/run
  RUNNER=as_unprivileged expect_error "output directory read-only" 1 strict "readonly" "not writable" -- \
    train --data "$WORK/text.txt" --out "$WORK/readonly"
  expect_error "allow-data-change without resume" 1 strict "--allow-data-change" -- "${d[@]}" --allow-data-change
  # --seed: -1 draws one (said, and kept in config.json below 2^53), another negative is refused.
  expect_error "negative seed" 1 strict "--seed -2" "-1 for a random one" -- "${d[@]}" --seed -2
  expect_error "seed not a number" 1 strict "--seed 12x" -- "${d[@]}" --seed 12x
  if "$POTOP" train --data text.txt --out seeded "${TINY[@]}" --steps 1 --seed -1 2>seed.log; then
    drawn=$(sed -n 's/^seed: \([0-9]*\) (--seed -1: a random one)$/\1/p' seed.log)
    kept=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["training"]["seed"])' seeded/config.json)
    [ -n "$drawn" ] && [ "$drawn" = "$kept" ] && [ "$kept" -lt 9007199254740992 ] && ok "--seed -1: seed $kept drawn and kept" ||
      fail "--seed -1: said '$drawn', config.json has $kept"
  else
    fail "train --seed -1: $(tail -n 2 seed.log)"
  fi
  ;;
model)
  make_run run
  mkdir -p empty-dir
  copy_run run no-config && rm no-config/config.json
  copy_run run no-vocab && rm no-vocab/vocab.json
  copy_run run no-weights && rm no-weights/latest.safetensors no-weights/best.safetensors
  copy_run run truncated && truncate -s 5000 truncated/best.safetensors
  copy_run run cut && truncate -s $(( $(stat -c %s run/best.safetensors) - 100 )) cut/best.safetensors
  copy_run run flipped && poke flipped/best.safetensors 20000 '\x55'
  copy_run run foreign && write_foreign foreign/best.safetensors
  copy_run run text && printf 'just some text, not a checkpoint' >text/best.safetensors
  copy_run run wider && sed -i 's/"n_embd": 32/"n_embd": 64/' wider/config.json
  copy_run run odd && sed -i 's/"n_head": 2/"n_head": 3/' odd/config.json
  copy_run run bad-json && printf '{"model": ' >bad-json/config.json
  copy_run run bad-vocab && printf '["a", "bc"]' >bad-vocab/vocab.json
  printf 'żywo\xffpanowie' >latin.txt
  printf 'Жили-были' >russian.txt
  expect_error "model directory does not exist" 1 strict "nowhere" "does not exist" -- sample --model nowhere
  expect_error "model path is a file" 1 strict "text.txt" "not a directory" -- sample --model text.txt
  expect_error "empty model directory" 1 strict "empty-dir/config.json" "missing" -- sample --model empty-dir
  expect_error "config.json missing" 1 strict "no-config/config.json" "missing" -- sample --model no-config
  expect_error "vocab.json missing" 1 strict "no-vocab/vocab.json" "not found" -- sample --model no-vocab
  expect_error "weights missing" 1 strict "no-weights/latest.safetensors" "not found" -- sample --model no-weights
  expect_error "truncated safetensors" 1 strict "truncated/best.safetensors" "truncated" -- sample --model truncated
  expect_error "corrupted safetensors" 1 strict "flipped/best.safetensors" "checksum mismatch" -- sample --model flipped
  expect_error "foreign safetensors" 1 strict "foreign/best.safetensors" "wte.weight" "missing" -- sample --model foreign
  expect_error "not a safetensors file" 1 strict "text/best.safetensors" "not a safetensors file" -- sample --model text
  expect_error "config does not match tensors" 1 strict "wider/best.safetensors" "shape" -- sample --model wider
  expect_error "config impossible" 1 strict "odd/config.json" "n_embd (32) must be divisible by n_head (3)" -- sample --model odd
  expect_error "config.json not JSON" 1 strict "bad-json/config.json" "not valid JSON" -- sample --model bad-json
  expect_error "vocab.json entry" 1 strict "bad-vocab/vocab.json" "entry 1" -- sample --model bad-vocab
  expect_error "checkpoint file missing" 1 strict "nope.safetensors" "not found" -- sample --model run --checkpoint nope.safetensors
  expect_error "prompt with unknown characters" 1 strict "--prompt contains 'Ж' (U+0416) at character 2" -- \
    sample --model run --prompt "ż Ж" --tokens 5
  expect_error "prompt with invalid UTF-8" 1 strict "--prompt" "invalid UTF-8" -- sample --model run --prompt $'a\xffb'
  expect_error "negative temperature" 1 strict "--temperature" -- sample --model run --temperature -1
  expect_error "top-p of zero" 1 strict "--top-p" -- sample --model run --top-p 0
  expect_error "negative token count" 1 strict "--tokens" -- sample --model run --tokens -5
  expect_error "eval text with unknown characters" 1 strict "russian.txt" "'Ж' (U+0416)" -- eval --model run --data russian.txt
  expect_error "eval text invalid UTF-8" 1 strict "latin.txt" "invalid UTF-8" -- eval --model run --data latin.txt
  expect_error "eval text missing" 1 strict "nope.txt" "not found" -- eval --model run --data nope.txt
  expect_error "eval stride too large" 1 strict "--stride" -- eval --model run --data text.txt --stride 1000
  # info of a checkpoint cut short (its header whole): listed with the error, and not said to load.
  "$POTOP" info -m cut >cut.info 2>&1
  grep -q "best.safetensors .*truncated: its tensors need" cut.info &&
    grep -q "^they load: nothing: cut/best.safetensors does not load" cut.info && ok "info of a truncated checkpoint" ||
    fail "info of a truncated checkpoint: $(cat cut.info)"
  # sample -s -1: a random seed each time; another negative is refused.
  "$POTOP" sample --model run -n 60 -s -1 --threads 1 >one.txt 2>/dev/null
  "$POTOP" sample --model run -n 60 -s -1 --threads 1 >two.txt 2>/dev/null
  [ -s one.txt ] && ! cmp -s one.txt two.txt && ok "sample -s -1 differs run to run" || fail "sample -s -1 twice gave the same text"
  expect_error "sample with a negative seed" 1 strict "--seed -3" -- sample --model run -s -3
  # An existing --out of plot and attention is not theirs to replace without --force; their own
  # default files (loss.svg, attention.html in the model directory) are.
  printf 'my notes\n' >notes.txt
  expect_error "plot --out an existing file" 1 strict "--out notes.txt: exists" "--force" -- plot -m run --out notes.txt
  expect_error "attention --out an existing file" 1 strict "--out notes.txt: exists" "--force" -- \
    attention -m run -p "pan" --out notes.txt
  [ "$(cat notes.txt)" = "my notes" ] && ok "notes.txt untouched" || fail "notes.txt was replaced"
  expect_error "plot --out a model's file, --force" 1 strict "--out run/vocab.json" "a model's directory" -- \
    plot -m run --out run/vocab.json --force
  "$POTOP" plot -m run >/dev/null && "$POTOP" plot -m run >/dev/null && "$POTOP" plot -m run --out notes.txt --force >/dev/null &&
    grep -q '<svg' notes.txt && ok "plot replaces its own loss.svg, and --out with --force" || fail "plot twice, or --force"
  ;;
resume)
  make_run run
  make_corpus other.txt 2500
  { cat text.txt; printf 'Жили-были'; } >russian.txt
  mkdir -p empty-dir
  copy_run run weights-only && rm weights-only/resume.safetensors
  copy_run run flipped && poke flipped/resume.safetensors 30000 '\x55'
  copy_run run truncated && truncate -s 20000 truncated/resume.safetensors
  copy_run run vocab && sed -i '0,/"a"/s//"ą"/' vocab/vocab.json
  copy_run run more && "$POTOP" train --resume more --steps 12 2>/dev/null
  expect_error "resume directory does not exist" 1 strict "nowhere" "does not exist" -- train --resume nowhere
  expect_error "resume a directory with no run" 1 strict "empty-dir" "not a model directory" -- train --resume empty-dir
  expect_error "resume weights only" 1 strict "weights-only/resume.safetensors" "missing" -- train --resume weights-only
  expect_error "resume corrupted state" 1 strict "flipped/resume.safetensors" "checksum mismatch" -- train --resume flipped
  expect_error "resume truncated state" 1 strict "truncated/resume.safetensors" "truncated" -- train --resume truncated
  expect_error "resume from a weights file" 1 strict "run/latest.safetensors" "not a training state" -- \
    train --resume run/latest.safetensors
  expect_error "resume with another model shape" 1 strict "cannot change --n-embd 64 (the run used 32)" -- \
    train --resume run --n-embd 64 --steps 12
  expect_error "resume with other data" 1 strict "--data other.txt" "differs" "--allow-data-change" -- \
    train --resume run --data other.txt --steps 12
  expect_error "resume with another split" 1 strict "--val-fraction 0.2" -- train --resume run --val-fraction 0.2 --steps 12
  expect_error "resume into another directory" 1 strict "--out elsewhere" -- train --resume run --out elsewhere --steps 12
  expect_error "resume with fewer steps" 1 strict "--steps 3" "below" -- train --resume more --steps 3
  expect_error "resume with a changed vocabulary" 1 strict "vocab/vocab.json" "does not match" -- train --resume vocab --steps 12
  expect_error "resume on text with new characters" 1 strict "russian.txt" "'Ж' (U+0416)" -- \
    train --resume run --data russian.txt --allow-data-change --steps 12
  ;;
*) echo "unknown group '$GROUP' (data, flags, model, resume)" >&2; exit 2 ;;
esac
finish
