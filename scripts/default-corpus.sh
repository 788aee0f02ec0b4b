#!/usr/bin/env bash
# Prints the path of the default training corpus:
#   ../shared/data/potop.txt (Sienkiewicz's "Potop") when it is beside the checkout, else
#   runs/fortunes-pl.<key>.txt, a cleaned UTF-8 text built from Debian's fortunes-pl package
#   (about 2 MB of Polish; the key changes with this script and the package's files, so a corpus
#   built by an older script, e.g. an uncleaned runs/fortunes-pl.txt, is never reused).
#
# Environment:
#   POTOP_DEFAULT_CORPUS=fortunes  build and print the fortunes corpus even when potop.txt exists
#                                  (default "auto": potop.txt when present)
#   POTOP_RUNS_DIR=<dir>           where to write the fortunes corpus (default: runs/ of the checkout)
#   POTOP_FORTUNES_DIR=<dir>       the fortune files (default /usr/share/games/fortunes/pl; the
#                                  test tests/cli/default_corpus.sh points it at its own files)
#
# The cleaning, for a character-level model whose vocabulary is every character it sees:
#   - each file is read as UTF-8 (a non-empty .u8 variant preferred); a file that is not valid
#     UTF-8 is converted from Windows-1250 when it has bytes 0x80-0x9F, else from ISO-8859-2;
#   - '%' lines (the separators, also with trailing blanks) are removed, as are empty fortunes;
#   - repaired: UTF-8 read as Windows-1250 or ISO-8859-2 ("Ä…" for "ą", "Ăł" for "ó"), IRC
#     formatting codes (bold ^B, colour ^C with its digits, reset ^O, reverse ^V, italic ^],
#     underline ^_, bell ^G), IRC clients' status and action markers drawn in a DOS code page,
#     a few single-byte code-page slips ("klikajšc", "ko¤cu"), letters, quotes and dashes lost
#     to "?" ("oczywi?cie", "?klik?"), no-break spaces and soft hyphens;
#   - then any fortune still holding a character outside ASCII text (printable, newline, tab) and
#     the allow-list below is dropped whole (the /dev/urandom floods of the linuxpl file), so no
#     C0 control but newline and tab, no DEL and no C1 control remains.
# Only tools of a base Debian 12: bash, coreutils, findutils, grep, iconv (libc-bin), perl-base.
# The result is the same bytes on every run; counts of what was changed go to stderr.
set -euo pipefail
mode=${POTOP_DEFAULT_CORPUS:-auto}
case $mode in
  auto | fortunes) ;;
  *) echo "default-corpus: POTOP_DEFAULT_CORPUS must be 'auto' or 'fortunes', not '$mode'" >&2; exit 2 ;;
esac
self=$(realpath "${BASH_SOURCE[0]}")
src=$(realpath -m "${POTOP_FORTUNES_DIR:-/usr/share/games/fortunes/pl}")
runs=${POTOP_RUNS_DIR:+$(realpath -m "$POTOP_RUNS_DIR")}  # relative to the caller's directory
cd "$(dirname "$self")/.."
runs=${runs:-$PWD/runs}
if [ "$mode" = auto ] && [ -f ../shared/data/potop.txt ]; then
  realpath ../shared/data/potop.txt
  exit 0
fi
if [ ! -d "$src" ]; then
  echo "default-corpus: neither ../shared/data/potop.txt nor $src (package fortunes-pl) exists" >&2
  exit 1
fi

# The fortune files, in a fixed order: not the .dat indexes, and a .u8 variant instead of its
# file when it has content (in fortunes-pl 0.0.20130525 every .u8 is empty).
sources() {
  local name
  find "$src" -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' -printf '%f\n' | LC_ALL=C sort |
    while IFS= read -r name; do
      if [ -s "$src/$name.u8" ]; then echo "$src/$name.u8"; else echo "$src/$name"; fi
    done
}

# The key: this script and the names and sizes of the files it reads.
key=$({ cat "$self"; sources | while IFS= read -r f; do printf '%s %s\n' "${f##*/}" "$(stat -c %s "$f")"; done; } |
  sha256sum | cut -c1-12)
out=$runs/fortunes-pl.$key.txt
if [ -s "$out" ]; then
  echo "$out"
  exit 0
fi

# Each file as UTF-8, followed by a NUL (the cleaner's record separator).
as_utf8() {
  local f
  sources | while IFS= read -r f; do
    if iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1; then
      cat "$f"
    elif LC_ALL=C grep -q $'[\x80-\x9f]' "$f"; then
      iconv -c -f CP1250 -t UTF-8 "$f"
    else
      iconv -f ISO-8859-2 -t UTF-8 "$f"
    fi
    printf '\0'
  done
}

# Mojibake of each Polish letter, "<mojibake>\t<letter>" per line: the letter's UTF-8 bytes read
# as Windows-1250 and as ISO-8859-2, which is exactly what iconv computes from them.
mojibake() {
  local enc letter m
  for enc in CP1250 ISO-8859-2; do
    for letter in ą ć ę ł ń ó ś ź ż Ą Ć Ę Ł Ń Ó Ś Ź Ż; do
      if m=$(printf '%s' "$letter" | iconv -f "$enc" -t UTF-8 2>/dev/null); then
        printf '%s\t%s\n' "$m" "$letter"
      fi
    done
  done
}

# The cleaner. Non-ASCII characters that are not visible are written as \x{...}.
read -r -d '' clean <<'PERL' || true
use strict;
use warnings;
use utf8;

# Characters outside ASCII that the cleaned corpus may hold: the Polish letters; á, é, è and ü
# of Spanish, French, Italian and German words quoted in the fortunes ("opción inválida",
# "a écrit", "è un codice?", "Müller", "Natürlich"); the degree sign ("+30°C"), the
# multiplication sign and the guillemet that IRC nick decorations use ("|:×:|", "»»").
my $allowed = 'ąćęłńóśźżĄĆĘŁŃÓŚŹŻáéèü°×»';

my (%mojibake, %ambiguous);
for my $line (split /\n/, $ARGV[0]) {
  my ($bad, $good) = split /\t/, $line;
  $ambiguous{$bad} = 1 if exists $mojibake{$bad} && $mojibake{$bad} ne $good;
  $mojibake{$bad} = $good;
}
delete @mojibake{keys %ambiguous};  # "Ĺš" is Ś in one encoding, Ź in the other: left to the drop
my $mojibake_re = join('|', map { quotemeta } sort { length $b <=> length $a || $a cmp $b } keys %mojibake) || '(?!)';

my (%count, %pending, @order);  # repairs in the kept fortunes, and in the current one
sub fix {  # fix(\$text, name, regex, replacement code): counts the replacements under name
  my ($t, $name, $re, $with) = @_;
  push @order, $name unless grep { $_ eq $name } @order;
  $pending{$name} += ($$t =~ s/$re/$with->()/ge) || 0;
}

# Characters lost to "?" where a Windows-1250 text was converted as ISO-8859-2, whose C1 range
# holds no characters: "ś" (0x9C), the quotes „ ” and the dash – (the fortunes of "bok" about
# a helpdesk, a "PIT’y" and a "stałe"). The context makes each one unambiguous; quotes and dash
# come back in ASCII, as everywhere else in these files.
my @lost = (
  ['oczywi?cie', 'oczywiście'], ['ma jakie? znaczenie', 'ma jakieś znaczenie'], ['ta?mę', 'taśmę'],
  ['je?li nic', 'jeśli nic'], ['jeszcze co?... Czy', 'jeszcze coś... Czy'], ['sta?e nicki', 'stałe nicki'],
  ['klawisz ?N? nie działa i używam ?M?', 'klawisz "N" nie działa i używam "M"'],
  ['okazji ? jak pisać duże ?E?', 'okazji - jak pisać duże "E"'], ['nacisnąć ?e?', 'nacisnąć "e"'],
  ['napisać ?klik? to napisałem ?klik?', 'napisać "klik" to napisałem "klik"'],
  ['odpowiedź: ?Niemożliwe!', 'odpowiedź: "Niemożliwe!'], ["do\npudełka?.", "do\npudełka\"."],
  ['dziwne ? powinno', 'dziwne - powinno'], ['bzdur ? nie', 'bzdur - nie'], ['matołem ? JA', 'matołem - JA'],
  ['komputera ? tego', 'komputera - tego'], ['PIT?y', 'PIT-y'],
);

local $/ = "\0";
my ($files, $separators, $fortunes, $kept, $empty, $dropped, $dropped_chars, $bad_chars) = (0) x 8;
while (my $text = <STDIN>) {
  chomp $text;
  next if $text eq '';
  $files++;
  $text .= "\n" unless $text =~ /\n\z/;
  $separators += () = $text =~ /^%[ \t]*\n/mg;
  for my $f (split /^%[ \t]*\n/m, $text) {
    $fortunes++;
    %pending = ();
    # UTF-8 read as a legacy code page, before the C1 controls it can contain are judged.
    fix(\$f, 'mojibake of a Polish letter', qr/($mojibake_re)/, sub { $mojibake{$1} });
    # IRC formatting: colour (^C, optional foreground[,background]), bold, reset, reverse,
    # italic, underline; and the bell.
    fix(\$f, 'IRC colour code', qr/\x03(?:\d{1,2}(?:,\d{1,2})?)?/, sub { '' });
    fix(\$f, 'IRC formatting or bell byte', qr/[\x02\x0f\x16\x1d\x1f\x07]/, sub { '' });
    # Markers of IRC clients drawn in a DOS code page (or Windows-1250) and read as ISO-8859-2:
    # the status line marker (irssi's "-!-", as other logs here have it), the action marker
    # ("* nick ..."), a nick decoration ("»»"), and the left edge of BitchX's /whois box ("|",
    # as in its other lines).
    fix(\$f, 'IRC status marker', qr/ůíů|\.-Ä/, sub { '-!-' });
    fix(\$f, 'IRC action marker', qr/(?<!\S)đ(?= )/, sub { '*' });
    fix(\$f, 'IRC nick decoration', qr/ťť/, sub { '»»' });
    fix(\$f, 'IRC whois box edge', qr/(?<!\S)ł(?= +(?:ircname|server|channels|away|idle) )/, sub { '|' });
    # Single-byte slips: Windows-1250 "ą" read as ISO-8859-2 (Polish has no "š"); "ń" and "ż"
    # typed in a DOS code page ("ko¤cu", "mo¨e"); an Italian "è" from Windows-1252 read as
    # ISO-8859-2; two words whose "z" and "ż" became "×"; a nick whose "ł" became "ĹB".
    fix(\$f, 'code-page slip', qr/š/, sub { 'ą' });
    fix(\$f, 'code-page slip', qr/(?<=[a-z])¤/, sub { 'ń' });
    fix(\$f, 'code-page slip', qr/(?<=[a-z])¨(?=[a-z])/, sub { 'ż' });
    fix(\$f, 'code-page slip', qr/(?<![[:alpha:]])č(?![[:alpha:]])/, sub { 'è' });
    fix(\$f, 'code-page slip', qr/znale×iono/, sub { 'znaleziono' });
    fix(\$f, 'code-page slip', qr/wa×nych/, sub { 'ważnych' });
    fix(\$f, 'code-page slip', qr/KĹBoczko/, sub { 'Kłoczko' });
    for my $r (@lost) { fix(\$f, 'lost character', qr/\Q$r->[0]\E/, sub { $r->[1] }) }
    fix(\$f, 'no-break space', qr/\x{a0}/, sub { ' ' });
    fix(\$f, 'soft hyphen', qr/\x{ad}/, sub { '-' });
    if ($f =~ /\A\s*\z/) { $empty++; next; }
    my @bad = $f =~ /([^\t\n\x20-\x7e$allowed])/g;
    if (@bad) {
      $dropped++;
      $dropped_chars += length $f;
      $bad_chars += @bad;
      next;
    }
    $kept++;
    $count{$_} += $pending{$_} for keys %pending;
    print $f;
  }
}
printf STDERR "default-corpus: %d files, %d '%%' lines removed; %d fortunes: %d kept, %d empty, %d dropped (%d characters; %d characters outside the allow-list)\n",
  $files, $separators, $fortunes, $kept, $empty, $dropped, $dropped_chars, $bad_chars;
printf STDERR "default-corpus: repaired in the kept fortunes: %s\n", join '; ', map { "$_ $count{$_}" } grep { $count{$_} } @order;
PERL

mkdir -p "$runs"
tmp=$(mktemp "$runs/.fortunes-pl.XXXXXX")
trap 'rm -f "$tmp"' EXIT
as_utf8 | perl -CSA -e "$clean" "$(mojibake)" >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
echo "$out"
