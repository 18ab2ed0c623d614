#!/bin/sh
# tests/run.sh: kt's test runner.  It runs the unit tests, every golden
# case under tests/cases/ and every script under tests/t/, and ends with
# exactly "N passed, N failed" (", N skipped" when some were skipped).
#
# A golden case is a folder tests/cases/FILTER-WHAT/ (FILTER may hold
# dashes: rank-tag-merge runs kt-rank-tag) holding:
#   args    the arguments of kt-FILTER (one line, shell words)
#   in      its standard input (optional; else /dev/null)
#   out     the expected standard output (optional: not compared)
#   err     the expected standard error (optional: must be empty)
#   status  the expected exit status (optional: 0)
#   about   one line: what the case shows (for the reader)
# The command runs inside the case folder, so inputs may be named there.
#
# Environment: KT_BIN (the built filters) and KT_BUILD (unit tests,
# generator) are set by make; UPDATE=1 rewrites the expectations of the
# golden cases (review them with git diff); VALGRIND="valgrind -q
# --error-exitcode=99" wraps every filter run; KT_SHARED overrides
# ../shared/traces; KT_ONLY=GLOB runs only the golden cases and script
# tests whose name (case folder, or script without .sh) matches the shell
# GLOB, for example KT_ONLY='bucket*' (the unit tests always run).
set -u
: "${KT_BIN:?run through make check}" "${KT_BUILD:?run through make check}"
LC_ALL=C
export LC_ALL
here=$(cd "$(dirname "$0")" && pwd)
PATH=$KT_BIN:$PATH
export PATH KT_BIN KT_BUILD
: "${VALGRIND:=}"
export VALGRIND
: "${KT_SHARED:=$here/../../shared/traces}"
export KT_SHARED
: "${KT_ONLY:=*}"
# only NAME: whether NAME is selected by KT_ONLY.
only() {
	case $1 in
	$KT_ONLY) return 0 ;;
	esac
	return 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kt-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
skip=0

# Unit tests: the binary prints "unit: N passed, N failed".
if "$KT_BUILD/unit" >"$tmp/unit" 2>&1; then :; fi
sed -n '/^FAIL/p' "$tmp/unit"
set -- $(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$tmp/unit")
if [ $# -eq 2 ]; then
	pass=$((pass + $1))
	fail=$((fail + $2))
else
	echo "FAIL unit: no summary line"
	cat "$tmp/unit"
	fail=$((fail + 1))
fi

# Golden cases.
for d in "$here"/cases/*/; do
	[ -d "$d" ] || continue
	name=$(basename "$d")
	only "$name" || continue
	# The filter is the longest prefix of the name that is a kt filter.
	f=$name
	while [ ! -x "$KT_BIN/kt-$f" ] && [ "$f" != "${f%-*}" ]; do
		f=${f%-*}
	done
	filter=kt-$f
	args=$(cat "$d/args" 2>/dev/null)
	input=$d/in
	[ -f "$input" ] || input=/dev/null
	want=0
	[ -f "$d/status" ] && want=$(cat "$d/status")
	(cd "$d" && eval "exec $VALGRIND $filter $args") <"$input" \
	    >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ -n "${UPDATE:-}" ]; then
		cp "$tmp/out" "$d/out"
		if [ -s "$tmp/err" ]; then cp "$tmp/err" "$d/err"; else rm -f "$d/err"; fi
		if [ "$got" -ne 0 ]; then echo "$got" >"$d/status"; else rm -f "$d/status"; fi
		[ -s "$d/out" ] || rm -f "$d/out"
		pass=$((pass + 1))
		continue
	fi
	why=
	[ "$got" -eq "$want" ] || why="status $got, want $want"
	if [ -f "$d/out" ]; then
		cmp -s "$tmp/out" "$d/out" || why="$why stdout differs"
	fi
	if [ -f "$d/err" ]; then
		cmp -s "$tmp/err" "$d/err" || why="$why stderr differs"
	elif [ -s "$tmp/err" ]; then
		why="$why unexpected stderr"
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL case $name:$why"
		if [ -f "$d/out" ]; then diff "$d/out" "$tmp/out" | head -10; fi
		if [ -f "$d/err" ]; then diff "$d/err" "$tmp/err" | head -5; else head -5 "$tmp/err"; fi
	fi
done

# Script tests: each prints lines "ok NAME", "FAIL NAME: why" or
# "skip NAME: why".
for t in "$here"/t/*.sh; do
	[ -f "$t" ] || continue
	only "$(basename "$t" .sh)" || continue
	TMP=$tmp/$(basename "$t" .sh)
	mkdir -p "$TMP"
	TMP=$TMP sh "$t" >"$tmp/t.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) pass=$((pass + 1)) ;;
		"FAIL "*) fail=$((fail + 1)); echo "$line" ;;
		"skip "*) skip=$((skip + 1)); echo "$line" ;;
		*) echo "  $line" ;;
		esac
	done <"$tmp/t.out"
	if [ "$rc" -ne 0 ]; then
		fail=$((fail + 1))
		echo "FAIL $(basename "$t"): exited $rc"
	fi
done

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
