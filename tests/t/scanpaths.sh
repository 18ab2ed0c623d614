# tests/t/scanpaths.sh: the scanner's paths (kt(7) Scanner: KT_SCAN
# portable, sse2, avx2, each where this machine runs it) read every input
# alike: kt-normalize --keep-order (the passthrough, repairs and all) and
# --strict, and kt-gaps, give the same bytes, messages and status with
# each path as with the portable byte loops, on the golden cases' JSON,
# a generated trace and the shared real traces (damaged ones included).
# The kept fuzz inputs (hostile bytes: cut strings, escapes, UTF-8,
# controls, non-finite numbers) are compared path by path, event by
# event, by the scanner's harness (tests/fuzz/scan.c, fuzzreplay.sh).  The portable path's
# own output is judged against jq and Python by the other scripts.  A
# KT_SCAN this machine does not run is refused (status 2, one line).
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$TMP" || exit 1

paths=
for p in sse2 avx2; do
	if KT_SCAN=$p "$KT_BIN/kt-normalize" --version >/dev/null 2>&1; then
		paths="$paths $p"
	else
		skip "scan paths: this machine does not run $p"
	fi
done

# A name no machine runs: refused before any input is read.
KT_SCAN=none run "$KT_BIN/kt-normalize" --version >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s out ] && [ "$(wc -l <err)" -eq 1 ] &&
    grep -q '^kt-normalize: KT_SCAN=none: not a path of the scanner here (this machine runs portable' err; then
	ok "scan paths: KT_SCAN=none refused (status 2, one line)"
else
	bad "scan paths: KT_SCAN=none: status $rc, $(head -1 err)"
fi
KT_SCAN=portable run "$KT_BIN/kt-normalize" --version >/dev/null 2>&1 &&
    ok "scan paths: KT_SCAN=portable runs everywhere" ||
    bad "scan paths: KT_SCAN=portable refused"

[ -n "$paths" ] || exit 0

"$KT_BUILD/ktgen" --size 2M >g.json 2>/dev/null

# The inputs: every case's JSON, a generated trace, the shared traces up
# to 30 MB uncompressed.
set -- g.json
for f in "$here"/cases/*/*.json; do
	[ -f "$f" ] && set -- "$@" "$f"
done
if [ -n "${KT_SHARED:-}" ] && [ -f "$KT_SHARED/INDEX.tsv" ]; then
	while IFS='	' read -r p _ _ _ _ size _; do
		case $size in '' | *[!0-9]*) continue ;; esac
		[ "$size" -le 30000000 ] && [ -f "$KT_SHARED/$p" ] &&
		    set -- "$@" "$KT_SHARED/$p"
	done <"$KT_SHARED/INDEX.tsv"
fi

# out PATH FILTER ARGS...: the filter's output, messages and status.
out() {
	_p=$1
	shift
	KT_SCAN=$_p run "$@" >"o.$_p" 2>"e.$_p"
	echo "status $?" >>"e.$_p"
	# The messages name the input: the same for every path.
}

n=0
nbad=0
ninputs=$#
for f in "$@"; do
	for mode in keep strict gaps; do
		case $mode in
		keep) set -- "$KT_BIN/kt-normalize" --keep-order "$f" ;;
		strict) set -- "$KT_BIN/kt-normalize" --keep-order --strict "$f" ;;
		gaps) set -- "$KT_BIN/kt-gaps" "$f" ;;
		esac
		out portable "$@"
		for p in $paths; do
			out "$p" "$@"
			n=$((n + 1))
			if ! cmp -s o.portable "o.$p" || ! cmp -s e.portable "e.$p"; then
				nbad=$((nbad + 1))
				[ "$nbad" -le 5 ] &&
				    bad "scan paths: KT_SCAN=$p $mode $(basename "$f"): $(cmp o.portable "o.$p" 2>&1 | head -1) $(diff e.portable "e.$p" | sed -n 2p)"
			fi
		done
	done
done
if [ "$nbad" -eq 0 ]; then
	ok "scan paths: $n reads of $ninputs inputs (normalize, --strict, gaps) alike with every path ($paths) and portable"
else
	bad "scan paths: $nbad of $n reads differ from portable's"
fi
exit 0
