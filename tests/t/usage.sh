# tests/t/usage.sh: what every filter says about itself, and how the
# error cases end.
#  - The synopsis of the usage text (kt-NAME --help: the "usage:" line
#    and the indented lines after it, up to the first option line)
#    names exactly the options of the man page's SYNOPSIS (the Fl
#    macros of man/kt-NAME.1).  Options are compared as a set; a long
#    name that the help's option lines pair with a letter ("-s,
#    --steps") counts as that letter, so either spelling may be used.
#  - Every golden case of an error (a status other than 0 and 1: kt(7)
#    keeps 1 for a data condition a filter exists to report, as
#    kt-normalize --check and kt-gaps --fail-above do, with their report
#    on standard output) expects nothing on standard output: its folder
#    has no "out", or an empty one, and running it (as tests/run.sh
#    does) writes nothing there.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cases=$(cd "$(dirname "$0")/../cases" && pwd)
man=$(cd "$(dirname "$0")/../../man" && pwd)
cd "$TMP" || exit 1

# pairs HELP: "long<TAB>letter" for every "-x, --long" of the help text.
pairs() {
	awk '{
		s = $0
		while (match(s, /-[A-Za-z0-9], --[A-Za-z0-9][A-Za-z0-9-]*/)) {
			t = substr(s, RSTART, RLENGTH)
			print substr(t, 7) "\t" substr(t, 2, 1)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$1"
}

# synopsis HELP: the options of the usage text's synopsis, one a line
# ("-x" or "--long").
synopsis() {
	awk '
	/^usage:/ { u = 1 }
	u && !/^usage:/ && (!/^[ \t]/ || /^[ \t]*-/) { u = 0 }
	!u { next }
	{
		# An option starts a word (after a space, "(", "[" or "|"
		# at a word start): "A[-B]" names none.
		s = " " $0
		while (match(s, /[ (|]\[?--?[A-Za-z0-9][A-Za-z0-9-]*/)) {
			t = substr(s, RSTART + 1, RLENGTH - 1)
			s = substr(s, RSTART + RLENGTH)
			sub(/^\[/, "", t)
			if (t ~ /^--/) {
				print t
				continue
			}
			for (i = 2; i <= length(t); i++)
				print "-" substr(t, i, 1)
		}
	}' "$1"
}

# mansynopsis PAGE: the options of the SYNOPSIS section's Fl macros.
mansynopsis() {
	awk '
	/^\.Sh / { s = ($2 == "SYNOPSIS"); next }
	!s { next }
	{
		for (i = 1; i <= NF; i++) {
			if ($i != "Fl" && $i != ".Fl")
				continue
			# The words after Fl, up to the next macro.
			for (j = i + 1; j <= NF && $j !~ /^[A-Z][a-z][a-z]?$/; j++) {
				w = $j
				if (w ~ /^-/) {
					print "-" w
					continue
				}
				for (k = 1; k <= length(w); k++)
					print "-" substr(w, k, 1)
			}
		}
	}' "$1"
}

# canon PAIRS: options on stdin, long names paired with a letter made
# that letter, sorted and unique, on one line.
canon() {
	awk -F'\t' 'FILENAME == ARGV[1] { p["--" $1] = "-" $2; next }
	{ print ($0 in p) ? p[$0] : $0 }' "$1" - | sort -u | tr '\n' ' ' |
	    sed 's/ $//'
}

for f in "$KT_BIN"/kt-*; do
	[ -x "$f" ] || continue
	name=${f##*/kt-}
	if [ ! -f "$man/kt-$name.1" ]; then
		bad "usage $name: no man/kt-$name.1"
		continue
	fi
	"$f" --help >help.txt 2>&1
	pairs help.txt >pairs.tsv
	u=$(synopsis help.txt | canon pairs.tsv)
	m=$(mansynopsis "$man/kt-$name.1" | canon pairs.tsv)
	if [ -z "$u" ]; then
		bad "usage $name: no synopsis in --help"
	elif [ "$u" = "$m" ]; then
		ok "usage $name"
	else
		only_u=$(echo "$u" | tr ' ' '\n' | sort >u.txt; echo "$m" |
		    tr ' ' '\n' | sort >m.txt; comm -23 u.txt m.txt | tr '\n' ' ')
		only_m=$(comm -13 u.txt m.txt | tr '\n' ' ')
		bad "usage $name: --help has [${only_u% }] that the man page" \
		    "SYNOPSIS has not, the man page [${only_m% }] that --help" \
		    "has not"
	fi
done

# Error cases: no expected output, and none written.
for d in "$cases"/*/; do
	name=$(basename "$d")
	[ -f "$d/status" ] || continue
	case $(cat "$d/status") in
	0 | 1) continue ;;
	esac
	if [ -s "$d/out" ]; then
		bad "error case $name: status $(cat "$d/status") with an expected stdout"
		continue
	fi
	# The filter: the longest prefix of the name that is a kt filter.
	fl=$name
	while [ ! -x "$KT_BIN/kt-$fl" ] && [ "$fl" != "${fl%-*}" ]; do
		fl=${fl%-*}
	done
	args=$(cat "$d/args" 2>/dev/null)
	input=$d/in
	[ -f "$input" ] || input=/dev/null
	(cd "$d" && eval "exec $VALGRIND kt-$fl $args") <"$input" \
	    >out.txt 2>/dev/null
	got=$?
	if [ -s out.txt ]; then
		bad "error case $name: status $got, wrote $(wc -c <out.txt) bytes to stdout"
	else
		ok "error case $name"
	fi
done
