#!/bin/sh
# tests/fuzz/afl/seeds.sh OUT: the first inputs of AFL++ on each filter,
# generated from the golden cases (never kept): for each case of
# tests/cases/FILTER-*, an input in the launcher's form
# (tests/fuzz/afl/launch.c) in OUT/FILTER/: its command line, where
# every argument that names a file of the case becomes "in", and that
# file (or the case's standard input, its file "in") as the content;
# once with the content as a file for standard input, and once, where
# the case reads standard input, as a pipe.  A filter without golden
# cases (views) gets a few command lines (-o out, -n, -c, -S, -r) on the
# inputs of the table filters' cases.
set -eu
mkdir -p "$1"
out=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../../.." && pwd)
filters=$(cd "$top/filters" && ls *.c | sed 's/\.c$//')
for c in "$top"/tests/cases/*/; do
	c=${c%/}
	case=$(basename "$c")
	f=
	for g in $filters; do
		case $case in
		"$g"-*) [ ${#g} -gt ${#f} ] && f=$g ;;
		esac
	done
	[ -n "$f" ] || continue
	mkdir -p "$out/$f"
	(
		cd "$c"
		content=
		[ -f in ] && content=$c/in
		eval "set -- $(cat args 2>/dev/null)"
		n=$#
		i=0
		while [ "$i" -lt "$n" ]; do
			a=$1
			shift
			i=$((i + 1))
			if [ -f "$a" ]; then
				[ -n "$content" ] || content=$c/$a
				a=in
			fi
			case $a in
			*/*) a=x ;;
			esac
			set -- "$@" "$a"
		done
		for flags in 0 1; do
			[ "$flags" = 1 ] && [ ! -f in ] && continue
			{
				printf "\\$flags"
				[ $# -gt 0 ] && printf '%s\000' "$@"
				printf '\000'
				[ -n "$content" ] && cat "$content"
			} >"$out/$f/$case-$flags"
		done
	)
done
for f in $filters; do
	[ -d "$out/$f" ] && continue
	mkdir -p "$out/$f"
	for c in gaps-small memory-table overlap-collectives decompose-phases; do
		[ -f "$top/tests/cases/$c/in" ] || continue
		k=0
		for a in '-o\000out\000in' '-n\0002\000-o\000out\000-' \
		    '-c\00080\000-S\000-o\000out\000in' \
		    '-r\000in\000-o\000out\000in'; do
			k=$((k + 1))
			{
				printf "\\00$((k % 2))$a\\000\\000"
				cat "$top/tests/cases/$c/in"
			} >"$out/$f/$f-$c-$k"
		done
	done
done
