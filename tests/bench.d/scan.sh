# tests/bench.d/scan.sh: kt's scanner alone (sourced by tests/bench.sh;
# see there for $gen, row and target), on the generated trace and the
# largest real one: scan-kt.c (the reader over the file in memory, every
# event scanned) with the scanner's best path (and, where kt has several
# scanner paths, KT_SCAN, with each forced), beside simdjson's on-demand parser walking the same events
# (scan-simdjson.cpp, built only where libsimdjson-dev's header is: a
# reference line, never a part of kt).  Figures are GB/s of the
# program's own CPU time (best of KT_BENCH_SCAN_PASSES passes in one
# process, default 5, with the commands interleaved KT_BENCH_RUNS times),
# so that a busy machine's wall time does not count.  The target of
# issue 14: kt's scanner at least half of simdjson's speed.
_sb=$KT_BUILD/bench
mkdir -p "$_sb" || die "cannot create $_sb"
_libs="$(pkg-config --libs jansson libarchive zlib 2>/dev/null || echo -ljansson -larchive -lz) -pthread"
pkg-config --exists libisal 2>/dev/null && _libs="$_libs $(pkg-config --libs libisal)"
# shellcheck disable=SC2086 # the libraries are several words
${CC:-cc} -O2 -I"$here/../lib" -o "$_sb/scan-kt" "$here/bench.d/scan-kt.c" \
    "$KT_BUILD/libkt.a" $_libs || die "cannot build scan-kt"
_simd=
if [ -f /usr/include/simdjson.h ] && command -v "${CXX:-c++}" >/dev/null 2>&1; then
	if "${CXX:-c++}" -O3 -std=c++17 -o "$_sb/scan-simdjson" \
	    "$here/bench.d/scan-simdjson.cpp" -lsimdjson 2>"$_sb/simdjson.err"; then
		_simd=$_sb/scan-simdjson
	else
		_simd_why="scan-simdjson did not build: $(head -n 1 "$_sb/simdjson.err")"
	fi
else
	_simd_why="no simdjson.h (apt-get install libsimdjson-dev)"
fi
# The paths this machine runs: a filter refuses KT_SCAN naming another.
# A kt without KT_SCAN (one scanner path) accepts any value: no rows.
_paths=
if ! KT_SCAN=none "$normalize" --version >/dev/null 2>&1; then
	for _p in portable sse2 avx2; do
		KT_SCAN=$_p "$normalize" --version >/dev/null 2>&1 &&
		    _paths="$_paths $_p"
	done
fi
_passes=${KT_BENCH_SCAN_PASSES:-5}

# scan_one KEY CMD...: run CMD (prints BYTES EVENTS SECONDS) and keep
# the best seconds in sec_KEY, events in ev_KEY.
scan_one() {
	_k=$1
	shift
	_out=$("$@" 2>"$err") || { eval "sec_$_k=failed"; return; }
	# shellcheck disable=SC2086
	set -- $_out
	eval "_old=\${sec_$_k:-}"
	if [ "$_old" != failed ]; then
		eval "ev_$_k=$2 sec_$_k=$(awk -v a="$_old" -v b="$3" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')"
	fi
}

# scan_row KEY LABEL: its row: GB/s of CPU, events, CPU seconds.
scan_row() {
	eval "_s=\${sec_$1:-} _e=\${ev_$1:-}"
	if [ "$_s" = failed ] || [ -z "$_s" ]; then
		printf '  %-28s failed\n' "$2"
		sed -n '1,3s/^/      /p' "$err"
		status=2
		return
	fi
	printf '  %-28s %9s %12s %10s\n' "$2" \
	    "$(awk -v b="$bytes" -v s="$_s" 'BEGIN { if (s < 1e-4) s = 1e-4; printf "%.2f", b / 1e9 / s }')" \
	    "$_e" "$_s"
}

scan_bench() {
	bytes=$(filesize "$2")
	warm "$2"
	echo
	echo "== kt's scanner on $1: $2 ($(mb "$bytes") MB)"
	printf '  %-28s %9s %12s %10s\n' command "GB/s CPU" events "CPU s"
	sec_best= sec_simd= ev_best= ev_simd=
	for _p in $_paths; do eval "sec_$_p= ev_$_p="; done
	_i=0
	while [ "$_i" -lt "$runs" ]; do
		_i=$((_i + 1))
		scan_one best "$_sb/scan-kt" "$2" "$_passes"
		for _p in $_paths; do
			scan_one "$_p" env KT_SCAN="$_p" "$_sb/scan-kt" "$2" "$_passes"
		done
		[ -n "$_simd" ] && scan_one simd "$_simd" "$2" "$_passes"
	done
	scan_row best "kt scanner (best path)"
	for _p in $_paths; do
		scan_row "$_p" "  KT_SCAN=$_p"
	done
	if [ -n "$_simd" ]; then
		scan_row simd "simdjson on-demand walk"
	else
		printf '  %-28s skipped (%s)\n' "simdjson on-demand walk" "$_simd_why"
	fi
	echo "  targets:"
	_x=
	case $sec_best$sec_simd in
	*failed*) ;;
	*) [ -n "$sec_simd" ] && [ -n "$sec_best" ] &&
		_x=$(awk -v a="$sec_simd" -v b="$sec_best" 'BEGIN { if (b > 0) printf "%.2f", a / b }') ;;
	esac
	target "kt scanner >= 0.5x simdjson on-demand" "$_x" 'v >= 0.5' '%sx simdjson'
	case " $_paths " in
	*" portable "*)
		for _p in $_paths; do
			[ "$_p" = portable ] && continue
			eval "_s=\${sec_$_p:-}"
			echo "    $_p vs portable: $(awk -v a="$sec_portable" -v b="$_s" 'BEGIN { if (b > 0) printf "%.2fx", a / b }')"
		done
		;;
	esac
}

scan_bench "the generated trace" "$gen"
[ -n "${rl:-}" ] || real
if [ -n "${rl:-}" ]; then
	scan_bench "the largest real trace" "$rl"
fi
