#!/usr/bin/env bash
# SentencePiece's failures said in potop's terms, and word2vec evaluate's empty analogy files
# (issue 28, items 8 and 9): one "potop: error:" line naming the flag or file, never
# SentencePiece's own source positions or flags (--character_coverage, --max_sentence_length);
# the sizes the messages propose are checked to work; docs/word2vec.md's example runs as written.
#   tokenizer_word2vec_errors.sh <potop>
POTOP=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=$ROOT/../shared/data
source "$(dirname "$0")/lib.sh"

# Nothing of SentencePiece's own on stderr: no "file.cc(123)", no flag potop does not have.
no_leak() {  # no_leak <name>
  if grep -qE '\.cc\([0-9]+\)|character_coverage|max_sentence_length|LOG\(|unrecoverable' "$WORK/stderr"; then
    fail "$1: SentencePiece's own text on stderr: $(cat "$WORK/stderr")"
  fi
}
# The size a message proposes: "use --vocab-size N or more|less".
proposed() { sed -n 's/.*use --vocab-size \([0-9]*\) or \(more\|less\).*/\1/p' "$WORK/stderr" | tail -n 1; }
# train_ok <name> <potop args>...: exits 0 and writes the tokenizer.
train_ok() {
  local name=$1
  shift
  if "$POTOP" "$@" >/dev/null 2>"$WORK/stderr"; then ok "$name"; else fail "$name: $(tail -n 1 "$WORK/stderr")"; fi
}

# --- SentencePiece: too small a vocabulary for the text's characters -------------------------
# Polish (make_corpus has ą, ę, ł, ó, ż, ś...); Potop itself when ../shared/data is there.
make_corpus pl.txt 4000
texts=(pl.txt)
if [ -f "$SHARED/potop.txt" ]; then head -c 300000 "$SHARED/potop.txt" >potop.txt; texts+=(potop.txt); fi
for text in "${texts[@]}"; do
  for kind in bpe unigram; do
    expect_error "$kind: 261 on $text" 1 log "--vocab-size 261 is too small for $text" "distinct characters" \
      "use --vocab-size" -- tokenizer train --kind $kind --vocab-size 261 --data $text --out tok
    no_leak "$kind: 261 on $text"
    m=$(proposed)
    if [ -z "$m" ]; then fail "$kind: 261 on $text: no size proposed"; continue; fi
    train_ok "$kind: the proposed --vocab-size $m works on $text" tokenizer train --kind $kind --vocab-size "$m" \
      --data $text --out "tok-$kind-$text"
    expect_error "$kind: one less, $((m - 1)), does not" 1 log "use --vocab-size $m or more" -- \
      tokenizer train --kind $kind --vocab-size $((m - 1)) --data $text --out tok
  done
done
[ -d tok ] && fail "a refused tokenizer train left --out tok behind"

# --- too large a vocabulary for the text ---------------------------------------------------------
printf 'ala ma kota\nkot ma ale\n' >tiny.txt
for kind in bpe unigram; do
  expect_error "$kind: 20000 on a tiny text" 1 log "--vocab-size 20000 is too large for tiny.txt" "or less" -- \
    tokenizer train --kind $kind --vocab-size 20000 --data tiny.txt --out tok
  no_leak "$kind: 20000 on a tiny text"
  m=$(proposed)
  if [ -n "$m" ]; then
    train_ok "$kind: the proposed --vocab-size $m works on tiny.txt" tokenizer train --kind $kind --vocab-size "$m" \
      --data tiny.txt --out "tiny-$kind"
  else
    fail "$kind: 20000 on a tiny text: no size proposed"
  fi
done

# --- texts SentencePiece cannot learn from: before, an internal check's text or a crash ----------
printf '\t\t\n<unk>\t<0x41>\n' >tabs.txt
/usr/bin/python3 -c 'print("a" * 70000)' >long.txt
printf '\n\n\n' >newlines.txt
printf '\xe2\x96\x85 x\n' >rare.txt
for kind in bpe unigram; do
  expect_error "$kind: only tabs and special tokens' text" 1 log "tabs.txt: no character to learn" -- \
    tokenizer train --kind $kind --vocab-size 300 --data tabs.txt --out tok
  no_leak "$kind: only tabs"
  expect_error "$kind: one line over 64 KiB" 1 log "long.txt: no line to learn" "longer than 65536 bytes" -- \
    tokenizer train --kind $kind --vocab-size 300 --data long.txt --out tok
  no_leak "$kind: one line over 64 KiB"
  expect_error "$kind: only empty lines" 1 log "newlines.txt: no line to learn" "3 empty" -- \
    tokenizer train --kind $kind --vocab-size 300 --data newlines.txt --out tok
  expect_error "$kind: only a line holding U+2585" 1 log "rare.txt: no line to learn" "U+2585" -- \
    tokenizer train --kind $kind --vocab-size 300 --data rare.txt --out tok
done
# A long line among others is left out with potop's note, not SentencePiece's warning.
{ cat long.txt; cat pl.txt; } >mixed.txt
if "$POTOP" tokenizer train --kind bpe --vocab-size 400 --data mixed.txt --out mixed-bpe >/dev/null 2>"$WORK/stderr" &&
    grep -q '^note: mixed.txt: .*1 line(s) longer than 65536 bytes (line 1 the first)' "$WORK/stderr"; then
  ok "a line over 64 KiB among others: potop's note"
else
  fail "a line over 64 KiB among others: $(cat "$WORK/stderr")"
fi
no_leak "a line over 64 KiB among others"

# translate train learns its BPE the same way: the same message, naming its --data.
make_pairs pairs.tsv 200
tr_flags=("${TINY_TRANSLATE[@]}")
for i in "${!tr_flags[@]}"; do [ "${tr_flags[$i]}" = --vocab-size ] && tr_flags[$((i + 1))]=262; done
expect_error "translate: too small a --vocab-size" 1 log "--vocab-size 262 is too small for pairs.tsv" \
  "use --vocab-size" -- translate train --data pairs.tsv --out tr "${tr_flags[@]}"
no_leak "translate: too small a --vocab-size"

# --- word2vec evaluate: an analogy file with no question is an error; a BOM is skipped -----------
make_corpus words.txt 3000
"$POTOP" word2vec train --data words.txt --out w2v --dim 8 --epochs 1 --min-count 1 --threads 1 2>train.log ||
  { cat train.log >&2; fail "word2vec train"; finish; }
: >empty.txt
printf ': capitals\nkmicic ruszył\nz kopyta a pan zagłoba\n\n' >malformed.txt
printf '\n: capitals\n' >sections.txt
expect_error "evaluate: an empty analogy file" 1 strict "empty.txt: holds no analogy question" -- \
  word2vec evaluate --vectors w2v --analogies empty.txt
expect_error "evaluate: no line of 4 words" 1 strict "malformed.txt: holds no analogy question" \
  "3 line(s)" "line 2 the first" -- word2vec evaluate --vectors w2v --analogies malformed.txt
expect_error "evaluate: sections, no question" 1 strict "sections.txt: holds no analogy question" -- \
  word2vec evaluate --vectors w2v --analogies sections.txt
printf ': polish\nkmicic ruszył zagłoba zawołał\npan mości panowie litwo\n' >plain.txt
{ printf '\xef\xbb\xbf'; cat plain.txt; } >bom.txt
if "$POTOP" word2vec evaluate --vectors w2v --analogies plain.txt --json >plain.json 2>/dev/null &&
    "$POTOP" word2vec evaluate --vectors w2v --analogies bom.txt --json >bom.json 2>"$WORK/stderr" &&
    cmp -s plain.json bom.json && [ ! -s "$WORK/stderr" ]; then
  ok "evaluate: a byte-order mark is skipped (the same report as without it)"
else
  fail "evaluate: a file starting with a byte-order mark: $(cat "$WORK/stderr")"
fi

# --- docs/word2vec.md's first commands, as written, on ../shared/data/potop.txt -----------------
if sanitized; then
  # 5 MB of training, 25 s under the sanitizers; cli.word2vec.train runs the trainer there.
  echo "docs/word2vec.md's example: run by the release pass, not under the sanitizers"
elif [ -f "$SHARED/potop.txt" ]; then
  mkdir -p doc/main doc/shared doc/bin && ln -s "$SHARED" doc/shared/data && ln -s "$POTOP" doc/bin/potop
  block=$(sed -n '/^```$/,/^```$/p' "$ROOT/docs/word2vec.md" | sed -n '1,/^```$/{/^```$/!p}' | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
  n=0
  while IFS= read -r line; do
    case $line in "potop word2vec train"*|"potop word2vec similar"*|"potop word2vec analogy"*) ;; *) continue ;; esac
    n=$((n + 1))
    if (cd doc/main && PATH=$WORK/doc/bin:$PATH bash -c "set -euo pipefail; $line" >"$WORK/out.txt" 2>"$WORK/stderr" </dev/null) &&
        { [[ $line == *train* ]] || [ -s "$WORK/out.txt" ]; }; then
      ok "docs/word2vec.md: ${line%% -k*}"
    else
      fail "docs/word2vec.md: $line: $(tail -n 1 "$WORK/stderr")"
    fi
  done <<<"$block"
  [ "$n" = 3 ] || fail "docs/word2vec.md: expected train, similar and analogy in its first block, found $n commands"
else
  echo "skip docs/word2vec.md's example (no ../shared/data/potop.txt)"
fi

finish
