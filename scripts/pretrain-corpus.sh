#!/usr/bin/env bash
# Builds the pre-training text of docs/transfer.md ("Pre-training corpus"):
#   OUT_DIR/english.txt  at least 10 MB of English, one sentence or paragraph per line, UTF-8,
#                        deduplicated, then shuffled with a fixed seed so that any tail of it is
#                        a fair held-out part
#   OUT_DIR/polish.txt   a copy of ../shared/data/potop.txt, the Polish side for T5
#   OUT_DIR/SOURCES      each source: package and version, files, bytes read, lines made and kept
#   OUT_DIR/SHA256SUMS   of the three files above (check: cd OUT_DIR && sha256sum -c SHA256SUMS)
#
# usage: scripts/pretrain-corpus.sh [OUT_DIR]      (default: runs/corpus of the checkout)
#
# The sources, in this order (of a repeated line the first copy is kept):
#   1. WordNet 3.0 (wordnet-base): each synset's gloss as "lemma: definition", and each example
#      sentence of the gloss on a line of its own, without its "- Author" attribution; a gloss
#      alone ("not fictional") is a fragment, its lemma makes it a statement.
#   2. The King James Bible (bible-kjv-text, decompressed by bible-kjv's `bible`): one verse a
#      line, without its book/chapter/verse reference.
#   3. The English fortunes (the files of fortunes-min and fortunes, not ascii-art): each
#      paragraph of a fortune on one line. Backspace overstrikes ("____^H^H^H^HBODY") and bells
#      are removed; a paragraph is dropped when it still holds a character outside printable
#      ASCII and "éüß" (the few there are UTF-8 encoded twice) or when it has fewer than twice as
#      many letters as other non-space characters (ASCII art, tables, code).
#   4. The English side (first column) of ../shared/data/tatoeba-eng-pol.tsv.
# Every line is valid UTF-8 (an invalid one is dropped), has no control characters, and has its
# runs of white space collapsed to one space.
# Then every line that is a dev text of ../shared/data/classify/*-dev.tsv is removed, so that
# pre-training never sees what the fine-tuned classifiers are measured on. The comparison is
# lowercased and ignores white space and the treebank's bracket and quote tokens, because the
# dev texts are tokenized ("it 's", "wo n't", "-lrb-", "``").
# Without ../shared/data: sources 1-3 only (about 14 MB), no dev filter and no polish.txt.
#
# Only Debian packages (scripts/setup.sh --all installs them) and tools of a base Debian 12: bash,
# coreutils, dpkg, perl. The output is the same bytes on every run (perl's own drand48 since
# perl 5.20, seeded below); counts go to stderr and to SOURCES. About 5 s.
set -euo pipefail
seed=29  # the issue's number; any fixed value would do
if [ $# -gt 1 ]; then
  echo "pretrain-corpus: one argument at most, OUT_DIR (got $#)" >&2
  exit 2
fi
out=${1:+$(realpath -m "$1")}  # relative to the caller's directory
cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/.."
out=${out:-$PWD/runs/corpus}
shared=../shared/data

packages=(wordnet-base bible-kjv bible-kjv-text fortunes-min fortunes)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pretrain-corpus: Debian package(s) ${missing[*]} not installed: run scripts/setup.sh --all" >&2
  exit 1
fi
version() { dpkg-query -W -f='${Version}' "$1"; }
if [ -f "$shared/tatoeba-eng-pol.tsv" ] && [ -f "$shared/potop.txt" ]; then
  have_shared=1
else
  have_shared=0
  echo "pretrain-corpus: no $shared/tatoeba-eng-pol.tsv and potop.txt: Debian sources only, no polish.txt" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The per-line cleaning every source ends with: valid UTF-8, no control characters, single spaces.
read -r -d '' tidy <<'PERL' || true
sub tidy {  # tidy($bytes): the cleaned line, or undef when it is not valid UTF-8 or is empty
  my ($s) = @_;
  return undef unless utf8::decode($s);
  $s =~ s/[\x00-\x20\x7f-\x9f\x{a0}\x{2028}\x{2029}]+/ /g;  # controls and spaces alike
  $s =~ s/^ | $//g;
  return length $s ? $s : undef;
}
sub put { my $s = tidy($_[0]); print "$s\n" if defined $s; }
binmode STDOUT, ':encoding(UTF-8)';
PERL

# 1. WordNet: "offset lex_filenum ss_type w_cnt word lex_id ... | gloss" per synset.
wordnet_files=(/usr/share/wordnet/data.noun /usr/share/wordnet/data.verb /usr/share/wordnet/data.adj /usr/share/wordnet/data.adv)
perl -e "$tidy"'
  while (<>) {
    next if /^  /;  # the licence text at the top of each file
    chomp;
    my ($head, $gloss) = split / \| /, $_, 2;
    next unless defined $gloss;
    my $lemma = (split / /, $head)[4];
    $lemma =~ s/\((?:a|p|ip)\)$//;  # the syntactic marker of some adjectives
    $lemma =~ tr/_/ /;
    $gloss =~ tr/`/\x27/;  # WordNet quotes with a backquote and a quote: both become plain quotes
    while ($gloss =~ /\S/) {
      if ($gloss =~ s/^\s*"([^"]*)"(?:\s*-+\s*[^;"]*)?\s*(?:;|$)//) {
        put($1);  # an example, without its "- Author"
      } elsif ($gloss =~ s/^\s*"([^;]*);?//) {
        (my $e = $1) =~ tr/"//d;  # an example with an unbalanced or inner quote
        put($e);
      } else {
        $gloss =~ s/^\s*(.*?)\s*(?:;\s*(?=")|$)//;  # the definition: up to the first example
        put("$lemma: $1") if length $1;
      }
    }
  }' "${wordnet_files[@]}" >"$tmp/1"

# 2. The Bible, "Ge1:1 In the beginning..." per verse (-f: no pretty-printing, one verse a line).
COLUMNS= bible -f Gen1:1-Rev22:21 >"$tmp/bible.raw"
perl -e "$tidy"'while (<>) { chomp; s/^\S+?\d+:\d+ // or die "pretrain-corpus: bible printed a line without a reference: $_\n"; put($_); }' \
  "$tmp/bible.raw" >"$tmp/2"

# 3. The fortune files of the two packages, in a fixed order.
dpkg-query -L fortunes-min fortunes | grep '^/usr/share/games/fortunes/[^/.]*$' | grep -v '/ascii-art$' |
  LC_ALL=C sort >"$tmp/fortune-files"
mapfile -t fortune_files <"$tmp/fortune-files"
perl -e "$tidy"'
  my ($paragraphs, $mojibake, $art) = (0, 0, 0);
  local $/;
  for my $file (@ARGV) {
    open my $fh, "<", $file or die "pretrain-corpus: $file: $!\n";
    my $text = <$fh>;
    1 while $text =~ s/[^\x08\n]\x08//;  # overstrikes: "_\b" underlines, "X\bX" bold
    $text =~ s/[\x07\x08]//g;
    for my $p (split /\n(?:%[ \t]*\n|[ \t]*\n)+/, "\n$text\n") {
      my $s = tidy($p);
      next unless defined $s;
      $paragraphs++;
      if ($s =~ /[^\x20-\x7e\x{e9}\x{fc}\x{df}]/) { $mojibake++; next; }
      my $letters = () = $s =~ /[A-Za-z]/g;
      my $others = () = $s =~ /[^A-Za-z ]/g;
      if ($letters < 2 * $others) { $art++; next; }
      print "$s\n";
    }
  }
  printf STDERR "pretrain-corpus: fortunes: %d paragraphs, %d dropped for characters outside ASCII+éüß, %d as art or tables\n",
    $paragraphs, $mojibake, $art;' "${fortune_files[@]}" >"$tmp/3"

# 4. Tatoeba's English side.
if [ $have_shared = 1 ]; then
  perl -e "$tidy"'while (<>) { chomp; put((split /\t/)[0]); }' "$shared/tatoeba-eng-pol.tsv" >"$tmp/4"
  dev_files=("$shared"/classify/*-dev.tsv)
else
  : >"$tmp/4"
  dev_files=()
fi

# Deduplicate (first copy kept), drop the dev texts, shuffle (Fisher-Yates, fixed seed).
perl -e '
  my ($dir, $seed, $ndev) = splice @ARGV, 0, 3;
  my @dev = splice @ARGV, 0, $ndev;
  sub key { my $s = lc shift; $s =~ s/-lrb-/(/g; $s =~ s/-rrb-/)/g; $s =~ s/``|\x27\x27/"/g; $s =~ s/\s+//g; $s }
  my %dev;
  for my $f (@dev) {
    open my $fh, "<", $f or die "pretrain-corpus: $f: $!\n";
    while (<$fh>) { chomp; my ($label, $text) = split /\t/, $_, 2; $dev{key($text)} = 1 if defined $text; }
  }
  my (%seen, @lines, @stats);
  for my $f (@ARGV) {
    open my $fh, "<", $f or die "pretrain-corpus: $f: $!\n";
    my ($made, $repeated, $isdev, $kept, $bytes) = (0) x 5;
    while (my $line = <$fh>) {
      $made++;
      if ($seen{$line}++) { $repeated++; next; }
      chomp(my $text = $line);
      if ($dev{key($text)}) { $isdev++; next; }
      push @lines, $line;
      $kept++;
      $bytes += length $line;
    }
    push @stats, "$made $repeated $isdev $kept $bytes";
  }
  srand($seed);
  for (my $i = $#lines; $i > 0; $i--) { my $j = int rand($i + 1); @lines[$i, $j] = @lines[$j, $i]; }
  open my $out, ">", "$dir/english.txt" or die "pretrain-corpus: $dir/english.txt: $!\n";
  print $out @lines;
  close $out or die "pretrain-corpus: $dir/english.txt: $!\n";
  print "$_\n" for @stats;
' "$tmp" "$seed" "${#dev_files[@]}" "${dev_files[@]}" "$tmp"/{1,2,3,4} >"$tmp/stats"

# SOURCES: one block per source, then the totals; no dates, so that it is the same on every run.
bytes() { cat "$@" | wc -c; }
mapfile -t stats <"$tmp/stats"
{
  echo "# english.txt: its sources (scripts/pretrain-corpus.sh, docs/transfer.md)"
  echo "# lines: made from the source / repeats of an earlier line / dev texts / kept; bytes kept"
  describe() {  # describe N NAME PACKAGES FILES...
    local n=$1 name=$2 pkgs=$3 p made repeated dev kept kbytes
    shift 3
    read -r made repeated dev kept kbytes <<<"${stats[n - 1]}"
    echo
    echo "$n. $name"
    if [ "$pkgs" = - ]; then echo "   package: none, ../shared/data (its SOURCES.md tells the origin)"; fi
    for p in ${pkgs#-}; do echo "   package: $p $(version "$p")"; done
    echo "   files: $*"
    echo "   bytes read: $(bytes "$@")"
    echo "   lines: $made made, $repeated repeated, $dev dev texts, $kept kept ($kbytes bytes)"
  }
  describe 1 "WordNet 3.0 glosses and examples" wordnet-base "${wordnet_files[@]}"
  describe 2 "King James Bible, one verse a line" "bible-kjv-text bible-kjv" /usr/lib/bible.data
  describe 3 "English fortunes, one paragraph a line" "fortunes-min fortunes" "${fortune_files[@]}"
  if [ $have_shared = 1 ]; then
    describe 4 "Tatoeba English-Polish pairs, the English side" - "$shared/tatoeba-eng-pol.tsv"
    echo "   sha256: $(sha256sum <"$shared/tatoeba-eng-pol.tsv" | cut -d' ' -f1)"
    echo
    echo "dev texts removed from: ${dev_files[*]}"
    echo "polish.txt: a copy of $shared/potop.txt"
  else
    echo
    echo "no $shared: no Tatoeba source, no dev filter, no polish.txt"
  fi
  echo "english.txt: $(wc -l <"$tmp/english.txt") lines, $(bytes "$tmp/english.txt") bytes, shuffled with perl srand($seed)"
} >"$tmp/SOURCES"

size=$(bytes "$tmp/english.txt")
if [ "$size" -lt 10000000 ]; then
  echo "pretrain-corpus: english.txt has $size bytes, under the 10 MB the issue asks for" >&2
  exit 1
fi
files=(english.txt SOURCES)
if [ $have_shared = 1 ]; then
  cp "$shared/potop.txt" "$tmp/polish.txt"
  files+=(polish.txt)
fi
(cd "$tmp" && sha256sum "${files[@]}" >SHA256SUMS)
mkdir -p "$out"
rm -f "$out/polish.txt"  # a run without ../shared must not leave an older one behind
for f in "${files[@]}" SHA256SUMS; do
  chmod 644 "$tmp/$f"
  mv "$tmp/$f" "$out/$f"
done
echo "pretrain-corpus: $out/english.txt: $(wc -l <"$out/english.txt") lines, $size bytes" >&2
