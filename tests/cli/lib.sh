# Shared helpers for the CLI tests. Source it after setting POTOP to the binary under test.
# Every test runs in its own temporary directory, removed on exit, and fails with a message
# that says what was expected and what happened.
set -euo pipefail

[ -x "${POTOP:-}" ] || { echo "usage: $0 <path to the potop binary> [args]" >&2; exit 2; }
POTOP=$(cd "$(dirname "$POTOP")" && pwd)/$(basename "$POTOP")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/potop-cli.XXXXXX")
chmod 755 "$WORK"  # readable by the unprivileged user of as_unprivileged
cleanup() {
  local pids
  pids=$(jobs -p) && [ -n "$pids" ] && kill -9 $pids 2>/dev/null
  chmod -R u+w "$WORK" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# sanitized: true in the sanitizer pass (scripts/test-sanitize.sh sets POTOP_SANITIZED=1), where a
# test may leave out a repetition of what it checks once already; docs/testing.md lists each.
sanitized() { [ "${POTOP_SANITIZED:-}" = 1 ]; }

FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }
ok() { echo "ok   $*"; }
finish() {
  # A check that could not run prints "skip <what>" (scripts/check-skips.py lists those lines).
  # CI sets POTOP_STRICT_SKIPS=1: it runs as root with setpriv, so there every check must run.
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ] && [ "$CANNOT_DROP" -gt 0 ]; then
    fail "$CANNOT_DROP check(s) skipped: root privileges could not be dropped (no setpriv on PATH), and POTOP_STRICT_SKIPS=1 allows no skip"
  fi
  if [ "$FAILURES" -gt 0 ]; then echo "$FAILURES check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}

# serve_model: the tiny GPT the serve tests serve, trained a few steps on a small corpus into
# ./model (fails and finishes when training fails).
serve_model() {
  make_corpus corpus.txt 1500
  "$POTOP" train --data corpus.txt --out model --steps 30 --eval-interval 30 "${TINY[@]}" 2>train.log ||
    { cat train.log >&2; fail "train exited non-zero"; finish; }
}

# make_labelled <file> <lines> <seed>: label<TAB>text lines of a small synthetic task: "good"
# texts hold the word dobry, "bad" ones zły, among filler words.
make_labelled() {
  /usr/bin/python3 - "$@" <<'PY'
import random, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
filler = "kmicic ruszył z kopyta a pan zagłoba zawołał żywo mości panowie litwo".split()
with open(path, "w") as f:
    for _ in range(n):
        label = rng.choice(["good", "bad"])
        words = [rng.choice(filler) for _ in range(rng.randint(2, 6))]
        words.insert(rng.randint(0, len(words)), "dobry" if label == "good" else "zły")
        f.write(f"{label}\t{' '.join(words)}\n")
PY
}

# start_serve <log> <potop serve flags>...: starts potop serve on a free port in the background;
# sets PORT and SERVER_PID, or fails and finishes when it does not start.
start_serve() {
  local log=$1
  shift
  : >"$log"
  "$POTOP" serve --port 0 "$@" 2>"$log" &
  SERVER_PID=$!
  PORT=
  for _ in $(seq 1 600); do
    PORT=$(sed -n 's|^serve: listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
    [ -n "$PORT" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  fail "potop serve did not start"
  finish
}

# node_test <name> <package dir> <script> <args>...: runs a Node test of tests/clients or
# tests/browser (their packages installed by scripts/setup.sh --all); a missing node, chromium (for the
# browser) or node_modules is a skip, or a failure with POTOP_STRICT_SKIPS=1.
node_test() {
  local name=$1 dir=$2
  shift 2
  if [ ! -d "$dir/node_modules" ] || ! command -v node >/dev/null ||
      { [ "$(basename "$dir")" = browser ] && [ ! -x /usr/bin/chromium ]; }; then
    if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "$name: node, chromium or $dir/node_modules missing: run scripts/setup.sh --all"
    else echo "skip $name (run scripts/setup.sh --all)"; fi
    return 0
  fi
  if node "$dir/$@"; then ok "$name"; else fail "$name"; fi
}

# A text of about n bytes from a fixed vocabulary (Polish letters included), deterministic.
make_corpus() {  # make_corpus <file> <words>
  local words=(kmicic ruszył z kopyta a pan zagłoba zawołał żywo mości panowie litwo ojczyzno moja ty jesteś
               jak zdrowie ile cię trzeba cenić ten tylko się dowie kto cię stracił)
  local n=$2 i out="" seed=7
  for ((i = 0; i < n; i++)); do
    seed=$(((seed * 1103515245 + 12345) % 2147483648))
    out+="${words[$((seed % ${#words[@]}))]}"
    if ((i % 13 == 12)); then out+=$'.\n'; else out+=" "; fi
  done
  printf '%s' "$out" >"$1"
}

# n sentence pairs "w1 w2 w3<TAB>w1 w2 w3" of 3 to 5 words from 8 (a copy task a small
# encoder-decoder learns), deterministic.
make_pairs() {  # make_pairs <file> <pairs>
  local words=(kot pies dom las rzeka góra morze niebo)
  local i k n seed=11 fwd
  : >"$1"
  for ((i = 0; i < $2; i++)); do
    seed=$(((seed * 1103515245 + 12345) % 2147483648))
    n=$((3 + (seed >> 8) % 3))
    fwd=()
    for ((k = 0; k < n; k++)); do
      seed=$(((seed * 1103515245 + 12345) % 2147483648))
      fwd+=("${words[$(((seed >> 8) % 8))]}")
    done
    printf '%s\t%s\n' "${fwd[*]}" "${fwd[*]}" >>"$1"
  done
}

# Options of a small, fast model; single-threaded so runs are bit-identical and CPU-cheap.
TINY=(--n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --eval-iters 2 --log-interval 1
      --threads 1 --dropout 0.1)

# A small, fast bag-of-words LM and encoder-decoder, single-threaded like TINY. (The BPE of 300
# makes each of make_pairs' words a token, so every pair fits the encoder-decoder's block of 12.)
TINY_BOW=(--dim 16 --block-size 12 --batch-size 8 --eval-iters 2 --log-interval 1 --threads 1 --min-count 2
          --attention dot)
TINY_TRANSLATE=(--columns a,b --source a --target b --vocab-size 300 --n-layer 1 --n-head 2 --n-embd 16
                --block-size 12 --batch-tokens 96 --eval-sentences 4 --dev-size 10 --test-size 10
                --log-interval 1 --threads 1)
TINY_PRETRAIN=(--tokenizer pretrain-tokenizer --n-layer 1 --n-head 2 --n-embd 16 --block-size 12 --batch-size 8
               --eval-iters 2 --dev-size 10 --log-interval 1 --threads 1)

# A BPE tokenizer learned once from text.txt, in pretrain-tokenizer: the pre-training trainers
# need one with special tokens (T5's sentinels follow them; BERT's [CLS], [SEP], [PAD] are them).
text_bpe() {
  [ -d pretrain-tokenizer ] || "$POTOP" tokenizer train --kind bpe --data text.txt --out pretrain-tokenizer \
    --vocab-size 320 >/dev/null 2>&1 || { echo "tiny_run: tokenizer train failed" >&2; exit 2; }
}

# The labelled examples of the classifier's tiny run, made once: train.tsv and dev.tsv (make_labelled).
labelled_data() {
  [ -f train.tsv ] || make_labelled train.tsv 240 1
  [ -f dev.tsv ] || make_labelled dev.tsv 40 2
}

# The command line of a trainer's tiny run, so that one check covers every trainer: TRAIN (its
# subcommand, data and model options; the data is text.txt from make_corpus, pairs.tsv from
# make_pairs, or for the classifier train.tsv and dev.tsv, made here) and SUBCOMMAND (the
# subcommand alone, for --resume).
tiny_run() {  # tiny_run <gpt|llama|bow|translate|pretrain|bert|classify>
  case $1 in
    gpt) SUBCOMMAND=(train); TRAIN=(train --data text.txt "${TINY[@]}") ;;
    llama) SUBCOMMAND=(train); TRAIN=(train --arch llama --data text.txt "${TINY[@]}" --n-kv-head 1) ;;
    bow) SUBCOMMAND=(bow train); TRAIN=(bow train --data text.txt "${TINY_BOW[@]}") ;;
    translate) SUBCOMMAND=(translate train); TRAIN=(translate train --data pairs.tsv "${TINY_TRANSLATE[@]}") ;;
    pretrain)  # T5 span corruption on text.txt
      text_bpe
      SUBCOMMAND=(translate pretrain); TRAIN=(translate pretrain --data text.txt "${TINY_PRETRAIN[@]}") ;;
    bert)  # BERT's masked LM on text.txt
      text_bpe
      SUBCOMMAND=(bert pretrain); TRAIN=(bert pretrain --data text.txt --tokenizer pretrain-tokenizer "${TINY[@]}") ;;
    classify)  # a text classifier from scratch (its word tokenizer), no early stopping
      labelled_data
      SUBCOMMAND=(classify train)
      TRAIN=(classify train --data train.tsv --dev dev.tsv --min-count 1 --patience 0 "${TINY[@]}") ;;
    *) echo "tiny_run: unknown trainer $1" >&2; exit 2 ;;
  esac
}

# The metrics records without their timings, one per line, for comparing runs.
losses() {  # losses <model dir>
  sed -e 's/,"elapsed_s":[^,}]*//' -e 's/"elapsed_s":[^,}]*,//' -e 's/,"tokens_per_s":[^,}]*//' \
      -e 's/"tokens_per_s":[^,}]*,//' "$1/metrics.jsonl"
}

# How many training steps a run has logged so far (0 before its metrics exist).
count_records() {  # count_records <model dir>
  local n
  n=$(grep -c '"kind":"train"' "$1/metrics.jsonl" 2>/dev/null) || true
  echo "${n:-0}"
}

# Runs a command as an unprivileged user when we are root (permissions do not bind root), so
# read-only and unreadable files behave as they would for a user. Returns 77 when impossible,
# counted in CANNOT_DROP for finish (so call it in this shell, not in a subshell or a pipeline).
CANNOT_DROP=0
as_unprivileged() {
  if [ "$(id -u)" -ne 0 ]; then "$@"; return; fi
  command -v setpriv >/dev/null || { CANNOT_DROP=$((CANNOT_DROP + 1)); return 77; }
  setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# expect_error <name> <exit code> <strict|log> <needle>... -- <potop args>...
# Runs potop and checks: the exit code (1 for bad input, 2 for a bad command line), never a
# signal or a sanitizer report; exactly one "potop: error:" line, as the last line of stderr,
# containing every needle; with "strict", nothing else on stderr.
MESSAGES=${MESSAGES:-}
expect_error() {
  local name=$1 want=$2 mode=$3 needles=()
  shift 3
  while [ "$1" != "--" ]; do needles+=("$1"); shift; done
  shift
  local rc=0
  ${RUNNER:-} "$POTOP" "$@" >"$WORK/stdout" 2>"$WORK/stderr" </dev/null || rc=$?
  if [ "$rc" = 77 ] && [ -n "${RUNNER:-}" ] && [ ! -s "$WORK/stderr" ]; then echo "skip $name (cannot drop privileges)"; return; fi
  local err errors last
  err=$(cat "$WORK/stderr")
  errors=$(grep -c '^potop: error: ' "$WORK/stderr" || true)
  last=$(tail -n 1 "$WORK/stderr")
  if [ "$rc" != "$want" ]; then fail "$name: exit code $rc, expected $want; stderr: $err"; return; fi
  if grep -qE 'internal error|Aborted|core dumped|Sanitizer|runtime error:|terminate called' "$WORK/stderr"; then
    fail "$name: crashed or a sanitizer reported: $err"; return
  fi
  if [ "$errors" != 1 ] || [[ "$last" != "potop: error: "* ]]; then
    fail "$name: expected one 'potop: error:' line at the end of stderr, got: $err"; return
  fi
  if [ "$mode" = strict ] && [ "$(wc -l <"$WORK/stderr")" != 1 ]; then
    fail "$name: expected stderr to be the error line only, got: $err"; return
  fi
  local n
  for n in "${needles[@]}"; do
    if [[ "$last" != *"$n"* ]]; then fail "$name: message does not name '$n': $last"; return; fi
  done
  ok "$name: $last"
  if [ -n "$MESSAGES" ]; then printf '%s\t%s\n' "$name" "${last#potop: error: }" >>"$MESSAGES"; fi
}
