#!/usr/bin/env bash
# The demo's fallback corpus (scripts/default-corpus.sh built from Debian's fortunes-pl), built
# even when ../shared/data/potop.txt is present, into a temporary directory: valid UTF-8, no
# control character but newline and tab, every character outside ASCII on the allow-list below,
# at least 1 MB, the same bytes when built again, and accepted by `potop train`. Then the cleaning
# rules on a few small fortune files of our own, in UTF-8, ISO-8859-2 and Windows-1250.
# Nothing may be written into the source tree.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SCRIPT=$SRC/scripts/default-corpus.sh
POTOP=${1:-}
source "$SRC/tests/cli/lib.sh"

# Characters outside ASCII the corpus may hold: the 18 Polish letters; á é è ü of the Spanish,
# French, Italian and German words the fortunes quote ("opción inválida", "a écrit",
# "è un codice?", "Müller"); the degree sign ("+30°C"); × and » of IRC nick decorations
# ("|:×:|", "»»"). Typographic quotes and dashes would be welcome too, but these files have none.
ALLOWED='ąćęłńóśźżĄĆĘŁŃÓŚŹŻáéèü°×»'

# runs/ of the checkout, by name, size and time, to show that the script left it alone.
snapshot_runs() { if [ -d "$SRC/runs" ]; then (cd "$SRC/runs" && find . -printf '%p %s %T@\n' | LC_ALL=C sort); fi; }
runs_before=$(snapshot_runs)

# check_text <name> <file>: UTF-8, controls and the allow-list; sets VOCAB, the number of distinct
# characters, and fails when a check does.
check_text() {
  local name=$1 file=$2 report before=$FAILURES
  VOCAB=
  if ! iconv -f UTF-8 -t UTF-8 "$file" >/dev/null 2>&1; then fail "$name: not valid UTF-8"; return 1; fi
  report=$(/usr/bin/python3 - "$file" "$ALLOWED" <<'PY'
import collections, sys, unicodedata
text = open(sys.argv[1], encoding="utf-8").read()
allowed = set(sys.argv[2])
counts = collections.Counter(text)
def show(c):
    return f"U+{ord(c):04X} {unicodedata.name(c, 'control')} x{counts[c]}"
controls = [c for c in counts if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
foreign = [c for c in counts if ord(c) >= 0xA0 and c not in allowed]
if controls:
    print("controls: " + "; ".join(show(c) for c in sorted(controls)))
if foreign:
    print("outside the allow-list: " + "; ".join(show(c) for c in sorted(foreign)[:40]))
print(f"vocabulary {len(counts)}")
PY
  )
  if grep -q '^controls: ' <<<"$report"; then
    fail "$name: control characters other than newline and tab: $(sed -n 's/^controls: //p' <<<"$report")"
  fi
  if grep -q '^outside the allow-list: ' <<<"$report"; then
    fail "$name: characters outside the allow-list: $(sed -n 's/^outside the allow-list: //p' <<<"$report")"
  fi
  VOCAB=$(sed -n 's/^vocabulary //p' <<<"$report")
  [ "$FAILURES" = "$before" ]
}

# --- The real corpus, from /usr/share/games/fortunes/pl (scripts/setup.sh installs it).
if [ ! -d /usr/share/games/fortunes/pl ]; then
  fail "no /usr/share/games/fortunes/pl: install Debian's fortunes-pl (scripts/setup.sh does)"
  finish
fi
rc=0
corpus=$(POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR=runs bash "$SCRIPT" 2>"$WORK/build.log") || rc=$?
if [ "$rc" != 0 ]; then fail "default-corpus.sh exited $rc: $(cat "$WORK/build.log")"; fi
if [ ! -f "$corpus" ]; then
  fail "default-corpus.sh printed '$corpus', not a file"
  finish
fi
case $corpus in
  "$WORK"/runs/*) ok "built into POTOP_RUNS_DIR: ${corpus#"$WORK"/}" ;;
  *) fail "with POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR=runs (relative to the caller), expected a file under $WORK/runs, got $corpus" ;;
esac
sed 's/^/     /' "$WORK/build.log"

if check_text corpus "$corpus"; then
  ok "UTF-8, no control characters but newline and tab, non-ASCII all on the allow-list; $VOCAB distinct characters"
fi
bytes=$(stat -c %s "$corpus")
if [ "$bytes" -ge 1000000 ]; then ok "$bytes bytes"; else fail "the corpus has $bytes bytes, expected at least 1000000"; fi
if grep -q '^%[[:blank:]]*$' "$corpus"; then fail "'%' separator lines remain: $(grep -c '^%[[:blank:]]*$' "$corpus")"; fi

# Built again elsewhere: the same bytes. Asked again: the same file, not rebuilt.
again=$(POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR="$WORK/again" bash "$SCRIPT" 2>/dev/null) || true
if [ -f "$again" ] && cmp -s "$corpus" "$again"; then ok "deterministic: a second build has the same bytes"
else fail "a second build into $WORK/again gave '$again', which differs from $corpus"; fi
mtime=$(stat -c %y "$corpus")
reused=$(POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR=runs bash "$SCRIPT" 2>/dev/null) || true
if [ "$reused" = "$corpus" ] && [ "$(stat -c %y "$corpus")" = "$mtime" ]; then
  ok "a built corpus is reused"
else
  fail "asked again, the script printed '$reused' or rebuilt $corpus"
fi

# potop accepts it, and its vocabulary is the one counted above.
if "$POTOP" train --data "$corpus" --steps 3 --n-layer 1 --n-head 1 --n-embd 16 --block-size 16 --batch-size 2 \
     --eval-iters 1 --threads 1 --out "$WORK/model" >"$WORK/train.out" 2>&1; then
  if grep -q "vocabulary $VOCAB," "$WORK/train.out"; then ok "potop train accepts it: $(grep -o 'vocabulary [0-9]*' "$WORK/train.out")"
  else fail "potop train does not report vocabulary $VOCAB: $(grep '^data:' "$WORK/train.out")"; fi
else
  fail "potop train rejected the corpus: $(tail -n 3 "$WORK/train.out")"
fi

# Without POTOP_DEFAULT_CORPUS, ../shared/data/potop.txt wins when it is there; an unknown
# value is refused.
default=$(POTOP_RUNS_DIR="$WORK/default" bash "$SCRIPT" 2>/dev/null) || true
if [ -f "$SRC/../shared/data/potop.txt" ]; then
  want=$(realpath "$SRC/../shared/data/potop.txt")
  if [ "$default" = "$want" ] && [ ! -e "$WORK/default" ]; then ok "by default ../shared/data/potop.txt, nothing built"
  else fail "by default expected $want and nothing under $WORK/default, got '$default'"; fi
else
  if cmp -s "$default" "$corpus"; then ok "by default (no ../shared/data/potop.txt) the same fortunes corpus"
  else fail "by default (no ../shared/data/potop.txt) expected the fortunes corpus, got '$default'"; fi
fi
rc=0
POTOP_DEFAULT_CORPUS=potop.txt bash "$SCRIPT" >/dev/null 2>"$WORK/err.log" || rc=$?
if [ "$rc" = 2 ] && grep -q POTOP_DEFAULT_CORPUS "$WORK/err.log"; then ok "POTOP_DEFAULT_CORPUS=potop.txt refused: $(cat "$WORK/err.log")"
else fail "POTOP_DEFAULT_CORPUS=potop.txt: exit $rc, expected 2 and a message naming the variable: $(cat "$WORK/err.log")"; fi

# --- The cleaning rules, on fortune files of our own.
mkdir "$WORK/fortunes"
# UTF-8 with IRC codes, mojibake, an action marker and a separator with blanks; its .dat is skipped.
printf '%s\n' $'<a> b\x02:\x02 zi\xc4\x82\xc5\x82 \x034,1kolor\x0f\x07' $'\xc4\x91 nick/#kanal wychodzi' '%	' \
  'Zażółć gęślą jaźń' '%' >"$WORK/fortunes/irc"
printf 'binary index\0\1\2' >"$WORK/fortunes/irc.dat"
# ISO-8859-2 (ą=0xB1, ś=0xB6, ż=0xBF, Ł=0xA3) and Windows-1250 (ą=0xB9, ś=0x9C, ż=0xBF, Ł=0xA3).
printf 'Ma\xb3y \xbf\xf3\xb3w \xb6pi\xb1.\n%%\n\xa3\xf3d\xbc\n%%\n' >"$WORK/fortunes/latin2"
printf 'Ma\xb3y \xbf\xf3\xb3w \x9cpi\xb9.\n%%\n' >"$WORK/fortunes/win1250"
# A flood of bytes no rule repairs: dropped whole. A last fortune without its final newline.
printf '<x> cat /dev/urandom\n<x> \xc3\xbe\xc3\x90\xc2\xa4\n%%\nkoniec' >"$WORK/fortunes/urandom"
: >"$WORK/fortunes/urandom.u8"
small=$(POTOP_DEFAULT_CORPUS=fortunes POTOP_RUNS_DIR="$WORK/small" POTOP_FORTUNES_DIR="$WORK/fortunes" \
  bash "$SCRIPT" 2>"$WORK/small.log") || true
expected=$'<a> b: zió kolor\n* nick/#kanal wychodzi\nZażółć gęślą jaźń\nMały żółw śpią.\nŁódź\nkoniec\nMały żółw śpią.\n'
if [ -f "$small" ] && [ "$(cat "$small"; echo .)" = "$expected." ]; then
  ok "cleaning rules: UTF-8, ISO-8859-2 and Windows-1250 files, IRC codes, mojibake, a dropped flood"
else
  fail "cleaning rules: expected $(printf '%q' "$expected"), got $(printf '%q' "$(head -c 300 "$small" 2>/dev/null)") ($(head -c 300 "$WORK/small.log"))"
fi

# Nothing written into the source tree.
if [ "$(snapshot_runs)" = "$runs_before" ]; then ok "the checkout's runs/ is untouched"
else fail "the checkout's runs/ changed: $(diff <(echo "$runs_before") <(snapshot_runs) | head -n 5)"; fi
finish
