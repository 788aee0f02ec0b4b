#!/usr/bin/env bash
# What a new user hits, checked through the real binary (the pass of issue 11): no silent data
# loss, the right checkpoint, conventional flags.
#   user_pass.sh <potop> <group>    group: training | checkpoints | sampling | commands
POTOP=$1
GROUP=$2
source "$(dirname "$0")/lib.sh"

make_corpus text.txt 3000
train() { "$POTOP" train --data text.txt "${TINY[@]}" "$@"; }
# TINY without its --eval-iters, for the runs that set their own.
LONG_EVAL=(--data text.txt --n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --threads 1)
# The field of every train record of a run's metrics.jsonl, one per line.
field() { /usr/bin/python3 -c "
import json, sys
for line in open(sys.argv[1] + '/metrics.jsonl'):
    r = json.loads(line)
    if r['kind'] == 'train': print(r['step'], r[sys.argv[2]])
" "$1" "$2"; }
# Waits (up to 30 s) until the file holds the text.
wait_for() { for _ in $(seq 600); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

case $GROUP in
training)
  # --out into a directory that holds a model: refused, nothing touched; --force replaces it.
  train --out run --steps 6 --eval-interval 3 2>/dev/null
  before=$(wc -l <run/metrics.jsonl)
  expect_error "train into a model directory" 1 strict "run already holds a model" "--resume run" "--force" -- \
    train --data text.txt --out run "${TINY[@]}" --steps 4
  [ "$(wc -l <run/metrics.jsonl)" = "$before" ] && ok "its metrics.jsonl is untouched ($before records)" ||
    fail "metrics.jsonl went from $before to $(wc -l <run/metrics.jsonl) records"
  train --out run --steps 4 --eval-interval 2 --force 2>force.log && grep -q -- "--force: the model that was in run" force.log &&
    [ "$(grep -c '"kind":"train"' run/metrics.jsonl)" = 4 ] && ok "--force replaces the model" ||
    fail "--force did not start a new run: $(tail -n 2 force.log)"

  # Training longer keeps the schedule: after the original end the rate stays at --min-lr.
  train --out sched --steps 30 --eval-interval 10 --lr 1e-2 --min-lr 1e-3 --warmup 5 --keep 10 2>/dev/null
  cp -r sched shorter
  "$POTOP" train --resume sched --steps 40 2>resume.log
  grep -q "keeps the run.s schedule: it is at --min-lr 0.001 since step 30 and stays there to step 40" resume.log &&
    ok "resuming with more --steps says the schedule is kept" || fail "no note about the schedule: $(cat resume.log)"
  # The note tells a shorter run, and a run still warming up (the default --warmup 100), as they are.
  "$POTOP" train --resume shorter/step-000010.safetensors --steps 20 2>shorter.log
  grep -q "note: --steps 20 (the run had 30): .* decays to --min-lr 0.001 by step 30; this run stops before that, at learning rate 0.00[0-9]*" shorter.log &&
    ok "a shorter resumed run: $(grep -m1 'note: --steps' shorter.log)" || fail "shorter run's note: $(cat shorter.log)"
  train --out warm --steps 20 --eval-interval 10 2>/dev/null
  "$POTOP" train --resume warm --steps 40 2>warm.log
  grep -q "note: --steps 40 (the run had 20): .* it is still warming up (to --lr 0.001 at step 100), and this run ends first" warm.log &&
    ! grep -q "by step 20" warm.log && ok "a run still warming up: $(grep -m1 'note: --steps' warm.log)" ||
    fail "warming-up run's note: $(cat warm.log)"
  bad=$(field sched lr | awk '$1 > 30 && ($2 < 0.00099 || $2 > 0.00101)')
  [ -z "$bad" ] && ok "steps 31..40 run at --min-lr" || fail "the rate left --min-lr after step 30: $bad"
  "$POTOP" train --resume sched --steps 50 --lr-decay-steps 50 2>/dev/null
  above=$(field sched lr | awk '$1 > 40 && $2 > 0.00101' | wc -l)
  [ "$above" -gt 0 ] && ok "--lr-decay-steps stretches the decay" || fail "--lr-decay-steps changed nothing"

  # tokens/s in metrics.jsonl: measured for every logged interval, with stderr not a terminal.
  zero=$(field sched tokens_per_s | awk '$2 <= 0' | wc -l)
  distinct=$(field sched tokens_per_s | awk '{print $2}' | sort -u | wc -l)
  [ "$zero" = 0 ] && [ "$distinct" -gt 10 ] && ok "tokens_per_s is measured per record ($distinct distinct values)" ||
    fail "tokens_per_s: $zero records at 0, $distinct distinct values"

  # An evaluation of absurd length is refused; a stop request interrupts a long one.
  expect_error "absurd --eval-iters" 1 strict "--eval-iters is too large" -- \
    train "${LONG_EVAL[@]}" --out o --eval-iters 1000000000
  "$POTOP" train "${LONG_EVAL[@]}" --out long --steps 20 --eval-interval 10 --eval-iters 100000 2>long.log &
  pid=$!
  if wait_for long.log "memory:"; then sleep 0.5; kill -TERM $pid; fi
  for _ in $(seq 200); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
  if kill -0 $pid 2>/dev/null; then
    kill -9 $pid; fail "SIGTERM during the evaluation was not honoured within 10 s"
  else
    wait $pid && rc=0 || rc=$?
    [ "$rc" = 0 ] && grep -q "interrupted at step 0 of 20, before its evaluation" long.log &&
      ok "SIGTERM during the evaluation: exit 0, checkpoint saved" || fail "exit $rc: $(tail -n 3 long.log)"
  fi
  "$POTOP" train --resume long --eval-iters 2 2>long2.log &&
    grep -q "eval step 0:" long2.log && ok "the resumed run does the abandoned evaluation first" ||
    fail "resume after an abandoned evaluation: $(tail -n 3 long2.log)"

  # Anything but a regular file is refused at once, before reading.
  mkfifo fifo
  for f in /dev/zero /dev/urandom fifo; do
    timeout 10 "$POTOP" train --data "$f" --out o 2>err.log && rc=0 || rc=$?
    [ "$rc" = 1 ] && grep -q "not a regular file" err.log && ok "--data $f refused at once" ||
      fail "--data $f: exit $rc, $(cat err.log)"
  done

  # The memory plan is behind --verbose; a new user sees a few lines.
  train --out quiet --steps 2 2>quiet.log
  ! grep -q "memory plan" quiet.log && grep -q "memory: about" quiet.log && [ "$(wc -l <quiet.log)" -le 12 ] &&
    ok "start-up is short ($(wc -l <quiet.log) lines)" || fail "start-up: $(cat quiet.log)"
  train --out verbose --steps 2 --verbose 2>verbose.log
  grep -q "memory plan:" verbose.log && ok "--verbose prints the memory plan" || fail "--verbose: no memory plan"

  # config.json round-trips, with floats as they were given.
  grep -q '"beta1": 0.9,' run/config.json && grep -q '"dropout": 0.1,' run/config.json &&
    ok "config.json keeps 0.9 and 0.1 as written" || fail "config.json floats: $(grep -E 'beta1|dropout' run/config.json)"
  "$POTOP" train --config run/config.json --out again --steps 2 2>again.log &&
    cmp <(sed -n '/"model"/,/}/p' run/config.json) <(sed -n '/"model"/,/}/p' again/config.json) &&
    ok "train --config DIR/config.json trains the same model" || fail "config.json round trip: $(tail -n 2 again.log)"

  # --json: a summary of the run on stdout.
  train --out js --steps 3 --json 2>/dev/null >summary.json
  /usr/bin/python3 -c "import json, sys; r = json.load(open('summary.json')); assert r['steps_done'] == 3, r" &&
    ok "train --json prints a summary" || fail "train --json: $(cat summary.json)"
  ;;
checkpoints)
  # Interrupted early: best is the untrained step-0 evaluation; sample takes the newer weights
  # and says which, with its step.
  "$POTOP" train --data text.txt "${TINY[@]}" --out early --steps 1000000 --eval-interval 500000 2>early.log &
  pid=$!
  wait_for early.log "memory:" && sleep 1
  kill -INT $pid; wait $pid || true
  "$POTOP" sample -m early -p "pan " -n 5 2>sample.log >/dev/null
  grep -qE "^checkpoint: early/latest.safetensors: step [0-9]+, not evaluated \(the newest weights; best.safetensors is step 0" sample.log &&
    ok "sample after Ctrl-C: $(cat sample.log | head -n 1)" || fail "sample after Ctrl-C loaded: $(cat sample.log)"
  "$POTOP" eval -m early --data text.txt 2>eval.log >/dev/null && grep -q "^checkpoint: early/latest" eval.log &&
    ok "eval says which checkpoint" || fail "eval: $(cat eval.log)"
  # Short names.
  train --out kept --steps 20 --eval-interval 10 --keep 5 2>/dev/null
  for c in best latest resume step-5 step-000015; do
    "$POTOP" sample -m kept --checkpoint $c -n 3 -p "pan " 2>c.log >/dev/null && grep -q "^checkpoint: kept/" c.log &&
      ok "--checkpoint $c: $(head -n 1 c.log)" || fail "--checkpoint $c: $(cat c.log)"
  done
  expect_error "no such snapshot" 1 strict "kept/step-000007.safetensors" "not found" -- sample -m kept --checkpoint step-7
  # potop info: every checkpoint with its step and validation loss.
  "$POTOP" info -m kept >info.txt && grep -q "best.safetensors .*step 20, val loss" info.txt &&
    grep -q "step-000015.safetensors .*step 15" info.txt && grep -q "training state" info.txt &&
    ok "info lists the checkpoints" || fail "info: $(cat info.txt)"
  "$POTOP" info -m kept --json >info.json && /usr/bin/python3 -c "
import json; r = json.load(open('info.json'))
assert r['parameters'] > 0 and r['tokenizer']['kind'] == 'char' and len(r['checkpoints']) == 7, r" &&
    ok "info --json" || fail "info --json: $(cat info.json)"
  # attention writes beside the model unless --out is given.
  "$POTOP" attention -m kept -p "pan" >/dev/null 2>&1 && [ -s kept/attention.html ] && [ ! -e attention.html ] &&
    ok "attention writes kept/attention.html" || fail "attention did not write beside the model"
  ;;
sampling)
  train --out m --steps 400 --eval-interval 200 2>/dev/null
  # Text outside the vocabulary: counted, listed with lines; skipped or replaced on request.
  printf 'pan Жили\nкмицic ы\n' >ru.txt
  expect_error "eval: unknown characters listed" 1 strict "ru.txt: 9 characters outside the vocabulary (7 distinct)" \
    "'Ж' (U+0416) on line 1" "'к' (U+043A) on line 2" "--unknown skip" -- eval -m m --data ru.txt
  for u in skip replace; do
    "$POTOP" eval -m m --data ru.txt --unknown $u --json 2>u.log >u.json &&
      grep -q "9 characters outside the vocabulary" u.log && ok "eval --unknown $u" || fail "eval --unknown $u: $(cat u.log)"
  done
  { cat text.txt; printf 'zagłoba Жили\n'; } >more.txt
  "$POTOP" train --resume m --data more.txt --allow-data-change --unknown skip --steps 402 2>more.log &&
    grep -q "4 characters outside the vocabulary" more.log && ok "resume on new text with --unknown skip" ||
    fail "resume --unknown skip: $(tail -n 3 more.log)"
  # Conventions: short flags, the prompt from stdin or a file, several samples, stop strings.
  a=$("$POTOP" sample -m m -p "pan " -n 60 -s 1 -t 1 --temperature 0 2>s.log)
  grep -qE "^sample: 60 tokens in .* tokens/s" s.log && ok "sample reports tokens/s" || fail "no summary: $(cat s.log)"
  b=$(printf 'pan ' | "$POTOP" sample -m m -p - -n 60 --temperature 0 2>/dev/null)
  printf 'pan ' >prompt.txt
  c=$("$POTOP" sample -m m --prompt-file prompt.txt -n 60 --temperature 0 2>/dev/null)
  [ "$a" = "$b" ] && [ "$a" = "$c" ] && ok "-p, -p - and --prompt-file give the same text" || fail "'$a' / '$b' / '$c'"
  generated=${a#pan }  # stop strings apply to the generated text, not to the prompt
  stop=${generated:10:3}
  d=$("$POTOP" sample -m m -p "pan " -n 60 --temperature 0 --stop "$stop" 2>/dev/null)
  want="pan ${generated%%"$stop"*}"
  [ "$d" = "$want" ] && ok "--stop '$stop' ends the sample before it" || fail "--stop '$stop': '$d', expected '$want'"
  n=$("$POTOP" sample -m m -p "pan " -n 10 --num-samples 3 2>/dev/null | grep -c '^---$')
  [ "$n" = 2 ] && ok "--num-samples 3 prints three samples" || fail "--num-samples 3: $n separators"
  e=$("$POTOP" sample -m m -p "pan " -n 60 --temperature 0 --repeat-penalty 1.8 2>/dev/null)
  [ "$e" != "$a" ] && ok "--repeat-penalty changes greedy output" || fail "--repeat-penalty changed nothing"
  "$POTOP" sample -m m -p "pan " -n 20 --min-p 0.2 --presence-penalty 0.5 >/dev/null 2>&1 &&
    ok "--min-p and --presence-penalty" || fail "--min-p / --presence-penalty refused"
  expect_error "bad --min-p" 1 strict "--min-p" -- sample -m m --min-p 1.5
  expect_error "bad --repeat-penalty" 1 strict "--repeat-penalty" -- sample -m m --repeat-penalty 0
  "$POTOP" sample -m m -p "pan " -n 5 --num-samples 2 --json 2>/dev/null >s.json && /usr/bin/python3 -c "
import json; r = json.load(open('s.json')); assert len(r['samples']) == 2 and r['samples'][0]['text'].startswith('pan '), r" &&
    ok "sample --json" || fail "sample --json: $(cat s.json)"
  # A prompt longer than the context: said, not cut silently.
  printf 'pan %.0s' $(seq 20) >long.txt
  "$POTOP" sample -m m --prompt-file long.txt -n 3 2>long.log >/dev/null
  grep -q "note: the prompt is 80 tokens but the model's context is 32: it sees the last 32" long.log &&
    ok "a prompt longer than the context is announced" || fail "long prompt: $(cat long.log)"
  ;;
commands)
  expect_error "misspelled flag" 2 strict "--nlayer" "did you mean --n-layer?" -- train --data text.txt --nlayer 3
  expect_error "misspelled subcommand" 2 strict "did you mean train?" -- trian --data text.txt
  expect_error "misspelled sample flag" 2 strict "did you mean --temperature?" -- sample -m x --temprature 0
  "$POTOP" train --help >help.txt
  ! grep -q '{false}' help.txt && grep -q -- '--no-bias' help.txt && grep -q -- '--bias .*on by default' help.txt &&
    ok "train --help shows --bias / --no-bias plainly" || fail "help: $(grep -- '--bias' help.txt)"
  ;;
defaults)
  # Help that matches behaviour. --kind is required: no default shown; choices are named.
  "$POTOP" tokenizer train --help >help.txt
  grep -q -- '--kind char|byte|word|bpe|unigram REQUIRED' help.txt && ! grep -q -- '--kind.*=char' help.txt &&
    ok "tokenizer train --help: --kind lists its choices, required, no default" || fail "help: $(grep -- '--kind' help.txt)"
  "$POTOP" info --help >help.txt
  grep -q "potop bert pretrain" help.txt && grep -q "potop classify train" help.txt && grep -q "not word2vec" help.txt &&
    ok "info --help names the commands whose directories it reads" || fail "info --help: $(grep -- '--model' help.txt)"
  "$POTOP" bow train --help >help.txt
  grep -q -- "--tokenizer.*word tokenizer directory" help.txt && ok "bow train --help: --tokenizer is a word tokenizer" ||
    fail "bow train --help: $(grep -- '--tokenizer' help.txt)"
  expect_error "misspelled subcommand of a command" 2 strict "did you mean train?" -- word2vec trian --data text.txt

  # The start-up line: one thread splits nothing; a batch-parallel run says so.
  train --out t1 --steps 2 --eval-interval 2 2>t1.log
  grep -q "^threads: 1, GEMM: " t1.log && ok "threads: 1 says nothing about splitting" || fail "$(grep threads: t1.log)"
  # TINY without its --threads 1.
  MODEL=(--n-layer 2 --n-head 2 --n-embd 32 --block-size 32 --batch-size 8 --eval-iters 2)
  "$POTOP" train --data text.txt --out t2 "${MODEL[@]}" --steps 2 --eval-interval 2 --threads 2 2>t2.log
  grep -q "^threads: 2, 2 running the model side by side on 4 rows of the batch each (--parallel batch), GEMM" t2.log &&
    ok "threads: 2 with --parallel batch" || fail "$(grep threads: t2.log)"
  "$POTOP" train --data text.txt --out t3 "${MODEL[@]}" --steps 2 --eval-interval 2 --threads 2 --parallel kernel 2>t3.log
  grep -q "^threads: 2, each kernel split over them (--parallel kernel), GEMM" t3.log &&
    ok "threads: 2 with --parallel kernel" || fail "$(grep threads: t3.log)"

  # Threads sized to the CPUs this process may use: one CPU in its affinity mask, one thread.
  taskset -c 0 "$POTOP" train --data text.txt --out aff "${MODEL[@]}" --steps 2 --eval-interval 2 2>aff.log
  grep -q "^threads: 1," aff.log && ok "taskset -c 0: one thread" || fail "taskset -c 0: $(grep threads: aff.log)"
  # OpenMP's spinning is bounded (core/threads.h): potop runs with GOMP_SPINCOUNT set, unless
  # the user set it or OMP_WAIT_POLICY.
  spin_of() {  # spin_of <env...>: GOMP_SPINCOUNT in the environment of a running potop
    env "$@" "$POTOP" sample -m t1 -p "pan " -n 100000 --threads 1 >/dev/null 2>&1 &
    local pid=$! value=""
    for _ in $(seq 100); do
      value=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep '^GOMP_SPINCOUNT=' || true)
      [ -n "$value" ] && break
      sleep 0.05
    done
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    echo "${value:-none}"
  }
  [ "$(spin_of -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY)" = GOMP_SPINCOUNT=3000 ] &&
    ok "potop bounds OpenMP's spinning (GOMP_SPINCOUNT=3000)" || fail "spin: $(spin_of -u GOMP_SPINCOUNT)"
  [ "$(spin_of GOMP_SPINCOUNT=7)" = GOMP_SPINCOUNT=7 ] && ok "a user's GOMP_SPINCOUNT wins" || fail "user's spin count lost"
  [ "$(spin_of -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active)" = none ] && ok "a user's OMP_WAIT_POLICY wins" ||
    fail "OMP_WAIT_POLICY=active still got a spin count"

  # Sampling from a model this small runs on one thread unless --threads says otherwise: its
  # threads are the main one and the signal listener, and --threads 2 adds OpenMP's worker.
  threads_of() {  # threads_of <sample flags...>: the thread count of a running potop sample, once it generates
    "$POTOP" sample -m t1 -p "pan " -n 1000000 "$@" >threads.out 2>&1 &
    local pid=$! n=""
    for _ in $(seq 300); do [ "$(wc -c <threads.out)" -gt 200 ] && break; sleep 0.05; done  # generating
    n=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    echo "$n"
  }
  one=$(threads_of) two=$(threads_of --threads 2)
  [ "$one" = 2 ] && [ "$two" = 3 ] && ok "sample: one thread for a small model by default ($one tasks; --threads 2: $two)" ||
    fail "sample threads: default $one tasks, --threads 2: $two"

  # --val-fraction 0: no "nan" anywhere; the best checkpoint is picked by train loss, and said so.
  train --out nv --steps 4 --eval-interval 2 --val-fraction 0 2>nv.log
  ! grep -qi nan nv.log && grep -q "no validation split: the best checkpoint is picked by train loss" nv.log &&
    ok "--val-fraction 0 trains without NaN validation losses" || fail "--val-fraction 0: $(grep eval nv.log)"
  "$POTOP" info -m nv >nv-info.txt
  ! grep -qi nan nv-info.txt && grep -q "train loss .* (no validation split)" nv-info.txt &&
    ok "info: a checkpoint without validation shows its train loss" || fail "info: $(cat nv-info.txt)"
  # A warm-up as long as the run is said.
  train --out wu --steps 6 --eval-interval 6 --warmup 6 2>wu.log
  grep -q "note: --warmup 6 is as long as the run (6 steps)" wu.log && ok "a warm-up as long as the run is noted" ||
    fail "no warm-up note: $(head -n 5 wu.log)"

  # The bag-of-words LM is word level: another kind of tokenizer is refused, naming the flag.
  "$POTOP" tokenizer train --kind char --data text.txt --out char-tok >/dev/null 2>&1
  expect_error "bow train with a char tokenizer" 1 strict "--tokenizer char-tok" "a char tokenizer" "word" -- \
    bow train --data text.txt --tokenizer char-tok --out bow --steps 2 --threads 1
  [ ! -e bow ] && ok "... and leaves no --out directory" || fail "bow train left $(ls bow)"

  # A command refused for its input leaves no empty --out directory.
  : >empty.txt
  expect_error "word2vec train on an empty file" 1 strict "empty.txt" -- word2vec train --data empty.txt --out w2v
  [ ! -e w2v ] && ok "... and leaves no --out directory" || fail "word2vec train left an --out directory"

  # README's first command installs what building and running potop need, not the test set;
  # it builds the potop target alone (scripts/test.sh installs and builds everything).
  root=$(cd "$(dirname "$0")/../.." && pwd)
  base=$(bash "$root/scripts/setup.sh" --list) all=$(bash "$root/scripts/setup.sh" --all --list)
  heavy=$(printf '%s\n' $base | grep -xE 'python3-torch|chromium|clang|libopenmpi-dev|libgtest-dev|nodejs|nginx-light' || true)
  [ -z "$heavy" ] && [ "$(printf '%s\n' $all | grep -cxE 'python3-torch|chromium|libgtest-dev')" = 3 ] &&
    printf '%s\n' $base | grep -qx libsentencepiece-dev &&
    ok "setup.sh installs potop's needs; --all adds the tests' ($(echo $base | wc -w) vs $(echo $all | wc -w) packages)" ||
    fail "setup.sh sets: base has '$heavy'"
  grep -q '^bash scripts/setup.sh$' "$root/scripts/demo.sh" && grep -q -- '--target potop' "$root/scripts/demo.sh" &&
    ok "demo.sh installs the base set and builds potop alone" || fail "demo.sh: $(grep -E 'setup|build' "$root/scripts/demo.sh")"
  ;;
*) echo "unknown group '$GROUP' (training, checkpoints, sampling, commands, defaults)" >&2; exit 2 ;;
esac
finish
