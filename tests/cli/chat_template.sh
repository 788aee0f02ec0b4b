#!/usr/bin/env bash
# potop chat-template against Hugging Face's Jinja in JavaScript (npm @huggingface/jinja, pinned in
# tests/chat): every context of every case of tests/chat/cases (real models' chat templates and
# feature micro-templates) rendered by tests/chat/render_reference.mjs, and by
# `potop chat-template CASE.jinja --messages CONTEXT.json`, must be the same bytes; where JavaScript
# throws (raise_exception, a syntax error, what it cannot do), potop must exit non-zero with one line
# on stderr; a case marked "potop_unsupported" must be refused with a message saying "not supported".
# The real models' first contexts go through a tokenizer_config.json too.
# The cases are dealt into SHARDS shares (by their order), one CTest entry each, so that they run side
# by side: a shard renders the cases whose number modulo SHARDS is SHARD.
# With RENDER (tests/chat/render_corpus.cpp: potop's own rendering, in one process) the contexts are
# rendered by it, and every 20th of them by `potop chat-template` too, which must print the same:
# a potop process per context spent most of this test starting processes.
#   chat_template.sh <potop> [SHARD SHARDS [RENDER]]   (default: 0 1, every case, potop for each)
POTOP=$1 SHARD=${2:-0} SHARDS=${3:-1} RENDER=${4:-}
REF=$(cd "$(dirname "$0")/../chat" && pwd)
source "$(dirname "$0")/lib.sh"

if [ ! -d "$REF/node_modules/@huggingface/jinja" ] || ! command -v node >/dev/null; then
  if [ "${POTOP_STRICT_SKIPS:-}" = 1 ]; then fail "node or tests/chat/node_modules missing: run scripts/setup.sh --all"
  else echo "skip the comparison with @huggingface/jinja (run scripts/setup.sh --all)"; fi
  finish
  exit 0
fi

if ! node "$REF/render_reference.mjs" ref >render.log 2>&1; then
  fail "render_reference.mjs: $(cat render.log)"
  finish
fi

# show_diff <expected> <got>: where two files first differ, with about 60 bytes of each around it
# (JSON-quoted, so that newlines, tabs and control characters show).
show_diff() {
  node -e '
    const fs = require("fs");
    const [a, b] = process.argv.slice(1).map((f) => fs.readFileSync(f));
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    const around = (buf) => JSON.stringify(buf.subarray(Math.max(0, i - 30), i + 30).toString("utf8"));
    console.log(`first difference at byte offset ${i} (expected ${a.length} bytes, got ${b.length}): expected ${around(a)}, potop ${around(b)}`);
  ' "$1" "$2"
}

# run_potop <source> <context>: potop chat-template, its stdout in the file $OUT, stderr in $ERR,
# exit code in rc.
run_potop() {
  rc=0 OUT=out ERR=err
  timeout 30 "$POTOP" chat-template "$1" --messages "$2" >out 2>err </dev/null || rc=$?
}

# rendered <source> <context> <number>: what potop makes of the context, as run_potop leaves it: from
# RENDER's results (rendered/<number>.out or .err) when it ran, checked against potop itself for
# every 20th context.
: >empty
rendered() {
  if [ -z "$RENDER" ]; then run_potop "$1" "$2"; return; fi
  if [ -f "rendered/$3.out" ]; then rc=0 OUT=rendered/$3.out ERR=empty
  elif [ -f "rendered/$3.err" ]; then rc=1 OUT=empty ERR=rendered/$3.err
  else rc=125 OUT=empty ERR=no-result; echo "render_corpus left no result" >no-result; fi
  if [ $(($3 % 20)) = 0 ]; then
    local want_rc=$rc want_out=$OUT want_err=$ERR
    run_potop "$1" "$2"
    if [ "$rc" != "$want_rc" ] || ! cmp -s out "$want_out" || ! cmp -s err "$want_err"; then
      fail "$2: potop chat-template (exit $rc: $(head -c 200 out)$(head -c 200 err)) differs from render_corpus (exit $want_rc: $(head -c 200 "$want_out")$(head -c 200 "$want_err"))"
    fi
  fi
}

# A refusal: a non-zero exit that is not a crash, a timeout or a signal, and one line on stderr.
refusal_problem() {
  if [ "$rc" = 0 ]; then echo "exit 0, stdout: $(head -c 200 "$OUT")"
  elif [ "$rc" = 124 ]; then echo "timed out"
  elif [ "$rc" -gt 128 ]; then echo "killed by signal $((rc - 128)): $(head -c 300 "$ERR")"
  elif grep -qE 'internal error|Aborted|core dumped|Sanitizer|runtime error:|terminate called' "$ERR"; then echo "crashed: $(head -c 300 "$ERR")"
  elif [ "$(wc -l <"$ERR")" != 1 ]; then echo "expected one line on stderr, got $(wc -l <"$ERR"): $(head -c 300 "$ERR")"
  fi
}

# mine <number>: whether the case of that number (from 0) is this shard's.
mine() { [ $(($1 % SHARDS)) = "$SHARD" ]; }

# Every context of this shard's cases, rendered in one RENDER process.
if [ -n "$RENDER" ]; then
  mkdir -p rendered
  n=0 number=-1
  for jinja in ref/*.jinja; do
    name=${jinja##*/} name=${name%.jinja}
    number=$((number + 1))
    mine "$number" || continue
    k=0
    while [ -f "ref/$name.$k.json" ]; do
      printf '%s\t%s\t%s\n' "$jinja" "ref/$name.$k.json" "rendered/$n"
      k=$((k + 1)) n=$((n + 1))
    done
  done >rendered/jobs.tsv
  if ! "$RENDER" <rendered/jobs.tsv 2>render_corpus.log; then
    fail "render_corpus: $(head -c 500 render_corpus.log)"
  fi
fi

cases=0 contexts=0 matched=0 refused=0 unsupported=0 mismatched=0 number=-1
for jinja in ref/*.jinja; do
  name=${jinja##*/} name=${name%.jinja}
  number=$((number + 1))
  mine "$number" || continue
  cases=$((cases + 1))
  k=0
  while [ -f "ref/$name.$k.json" ]; do
    base=ref/$name.$k ctx=ref/$name.$k.json what=$name.$k
    k=$((k + 1))
    rendered "$jinja" "$ctx" "$contexts"
    contexts=$((contexts + 1))
    if [ -f "ref/$name.unsupported" ]; then
      problem=$(refusal_problem)
      if [ -z "$problem" ] && grep -q "not supported" "$ERR"; then unsupported=$((unsupported + 1))
      else fail "$what is marked potop_unsupported ($(cat "ref/$name.unsupported")): expected a refusal saying \"not supported\", got ${problem:-$(cat "$ERR")}"; mismatched=$((mismatched + 1)); fi
    elif [ -f "$base.error" ]; then
      problem=$(refusal_problem)
      if [ -z "$problem" ]; then refused=$((refused + 1))
      else fail "$what: @huggingface/jinja throws ($(cat "$base.error")), potop must fail too: $problem"; mismatched=$((mismatched + 1)); fi
    elif [ "$rc" != 0 ]; then
      fail "$what: potop exited $rc ($(head -c 300 "$ERR")); @huggingface/jinja renders $(head -c 80 "$base.expected" | node -e 'process.stdout.write(JSON.stringify(require("fs").readFileSync(0, "utf8")))')"
      mismatched=$((mismatched + 1))
    elif cmp -s "$base.expected" "$OUT"; then
      matched=$((matched + 1))
    else
      fail "$what: $(show_diff "$base.expected" "$OUT")"
      mismatched=$((mismatched + 1))
    fi
  done
done
ok "$cases cases, $contexts contexts: $matched rendered as @huggingface/jinja does, $refused refused where it throws, $unsupported refused as not supported, $mismatched wrong"
[ "$contexts" -gt 0 ] || fail "no contexts rendered (tests/chat/cases empty?)"

# The real models' templates read from a tokenizer_config.json ({"chat_template": ...}) render the same.
configs=0 config_matched=0 number=-1
for jinja in ref/model-*.jinja; do
  name=${jinja##*/} name=${name%.jinja}
  number=$((number + 1))
  mine "$number" || continue
  if [ ! -f "ref/$name.0.expected" ] || [ -f "ref/$name.unsupported" ]; then continue; fi
  configs=$((configs + 1))
  run_potop "ref/$name.tokenizer_config.json" "ref/$name.0.json"
  if [ "$rc" = 0 ] && cmp -s "ref/$name.0.expected" "$OUT"; then config_matched=$((config_matched + 1))
  elif [ "$rc" != 0 ]; then fail "$name.0 from tokenizer_config.json: potop exited $rc ($(head -c 300 "$ERR"))"
  else fail "$name.0 from tokenizer_config.json: $(show_diff "ref/$name.0.expected" "$OUT")"; fi
done
if [ "$configs" = "$config_matched" ]; then
  ok "$config_matched real-model templates read from a tokenizer_config.json render the same"
fi
finish
