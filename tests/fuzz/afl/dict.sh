#!/bin/sh
# tests/fuzz/afl/dict.sh: write the AFL++ dictionary for the filters on
# stdout, generated from the tree (never kept): the option names of
# the golden cases' command lines (tests/cases/*/args) and of the man
# pages, each with the NUL that ends an argument in the launcher's input
# (tests/fuzz/afl/launch.c), and from the golden inputs (the JSON and
# TSV files of tests/cases): the JSON keys, the ph values, the
# categories, the most frequent fragments of event names, and the TSV
# header's words.
set -eu
cd "$(dirname "$0")/../../.."
LC_ALL=C
export LC_ALL

# An AFL++ dictionary line: name="text", with ", \ and bytes outside
# printable ASCII written as \xNN.
entry() {
	awk -v pre="$1" '
	BEGIN { for (i = 0; i < 256; i++) ord[sprintf("%c", i)] = i }
	length($0) > 0 && length($0) <= 100 {
		s = ""
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c == "\"" || c == "\\" || ord[c] < 32 || ord[c] > 126)
				s = s sprintf("\\x%02x", ord[c])
			else
				s = s c
		}
		printf "%s_%d=\"%s%s\"\n", pre, NR, s, suf
	}' suf="$2"
}

inputs=$(find tests/cases -type f \( -name in -o -name '*.json' -o \
    -name '*.tsv' \) | sort)

# Options: the words of the golden command lines that start with '-',
# and every Fl of the man pages (.It Fl -steps, .It Fl o).
{
	for a in tests/cases/*/args; do
		tr ' ' '\n' <"$a" | sed -n 's/^\(--*[A-Za-z][A-Za-z-]*\).*/\1/p'
	done
	sed -n 's/^\.It //p' man/*.1 | tr ',' '\n' |
	    sed -n 's/^ *Fl \(-\{0,1\}[A-Za-z][A-Za-z-]*\).*/-\1/p'
} | sort -u | entry opt '\\x00'

# The values the golden command lines give options (1.5ms, 3-5, step).
for a in tests/cases/*/args; do
	tr ' ' '\n' <"$a"
done | grep -av '^-' | grep -av / | grep -av "'" | grep -av '^$' |
    sort -u | head -80 | entry val '\\x00'

# JSON keys with their colon, and the ph values.
cat $inputs | grep -ao '"[A-Za-z_][A-Za-z0-9_ #.-]\{0,40\}" *:' |
    sed 's/ *:$/:/' | sort | uniq -c | sort -rn | head -120 |
    awk '{ $1 = ""; sub(/^ /, ""); print }' | entry key ''
cat $inputs | grep -ao '"ph": *"[A-Za-z]"' | sed 's/.*: *//' | sort -u |
    entry ph ''
cat $inputs | grep -ao '"cat": *"[^"]\{1,40\}"' | sed 's/.*: *//' |
    sort -u | entry cat ''

# Fragments of event names (ProfilerStep#, nccl, gemm, Memcpy ...).
cat $inputs | grep -ao '"name": *"[^"]\{1,200\}"' | sed 's/.*: *"//; s/"$//' |
    tr -c 'A-Za-z0-9_#:\n' '\n' | grep '^.\{4,40\}$' | sort | uniq -c |
    sort -rn | head -100 | awk '{ print $2 }' | entry name ''

# The TSV event form's header words and tab.
printf 'id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\tjson\n' |
    tr '\t' '\n' | sed 's/$/	/' | entry tsv ''
