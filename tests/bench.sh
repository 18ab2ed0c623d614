#!/bin/sh
# tests/bench.sh: kt's benchmark (make bench).  It measures the speed
# (MB/s) and peak memory (RSS) of kt-normalize in its output modes (JSON
# streaming and sorted, TSV sorted and streaming),
# next to a Python json round trip and jq, on two inputs:
#   - a synthetic trace of about 512 MiB written by the project's
#     generator (build/ktgen --size 512M >FILE, deterministic), and
#   - the largest real trace under ../shared/traces (by uncompressed
#     size), when that folder exists.
# Every command reads a plain JSON file (a .gz is decompressed once,
# beforehand), so decompression is never measured.  The file is read
# in and kept in memory while its section runs (warm, below) so that
# every command finds it in the page cache (after a sync, so no
# write-back of a fresh input runs alongside).
# Per input it prints a table and a PASS/MISS line for each target of
# the issue, plus the machine, so the figures can be quoted.
# MB = 10^6 bytes; MB/s = input bytes / wall seconds.
#
# Environment: KT_BIN and KT_BUILD are set by make;
#   KT_BENCH_DIR    where generated and decompressed inputs are kept
#                   (default /tmp/kt-bench; reused when the size is right)
#   KT_BENCH_RUNS=N run each command N times, keep the best wall time
#                   (and the highest peak RSS); default 1
#   KT_BENCH_QUICK=1  skip the python and jq baselines (slow, and python
#                   needs several GB of memory on the 512 MiB input)
#   KT_BENCH_SIZE   the generated trace's --size (default 512M)
#   KT_BENCH_PAIR=0 measure each command on its own, not paired with the
#                   section's passthrough (see measure)
#   KT_SHARED       overrides ../shared/traces
#   KT_HTA          a HolisticTraceAnalysis checkout, for the hta section
#                   (tests/bench.d/hta.sh; skipped without it)
#   KT_BENCH_ONLY=NAME  run only the section tests/bench.d/NAME.sh (after
#                   generating and sorting the trace it reads; reduce
#                   makes its own ranks, hta reads shared traces)
# Exit status: 0 when everything ran, targets met or not (it is a
# report); 2 when kt-normalize itself failed on an input; 1 when the
# bench could not be set up (no disk space, generator failure, ...).
set -u
: "${KT_BIN:?run through make bench}" "${KT_BUILD:?run through make bench}"
LC_ALL=C
export LC_ALL
here=$(cd "$(dirname "$0")" && pwd)
dir=${KT_BENCH_DIR:-/tmp/kt-bench}
runs=${KT_BENCH_RUNS:-1}
quick=${KT_BENCH_QUICK:-0}
only=${KT_BENCH_ONLY:-}
shared=${KT_SHARED:-$here/../../shared/traces}
gensize=${KT_BENCH_SIZE:-512M}
normalize=$KT_BIN/kt-normalize
status=0
# Results of measure that the targets read (set per input).
mbs_keep='' rss_keep='' ratio_keep='' ratio_sort='' mbs_tsv='' mbs_ktsv=''
mbs_py=''

# die MESSAGE: report a setup failure and stop with status 1.
die() {
	echo "bench: $*" >&2
	exit 1
}

# mb BYTES: BYTES in MB (10^6), one decimal.
mb() {
	awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'
}

# filesize FILE: its size in bytes (0 when it does not exist).
filesize() {
	if [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo 0; fi
}

# need_space FOLDER BYTES: die unless FOLDER's file system has BYTES free,
# plus 64 MB of slack.
need_space() {
	avail=$(df -Pk "$1" | awk 'NR == 2 { print $4 }')
	awk -v a="$avail" -v n="$2" 'BEGIN { exit !(a * 1024 >= n + 64e6) }' ||
		die "not enough disk in $1: need $(mb "$2") MB, $(mb $((avail * 1024))) MB free"
}

# machine: print what the figures were measured on.
machine() {
	cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
	mem=$(awk '/^MemTotal:/ { printf "%.1f GB", $2 * 1024 / 1e9 }' /proc/meminfo 2>/dev/null)
	echo "kt bench"
	echo "  date:    $(date '+%Y-%m-%d %H:%M:%S %Z')"
	echo "  cpus:    $(nproc) x ${cpu:-unknown CPU}"
	echo "  memory:  ${mem:-unknown}"
	echo "  kt:      $("$normalize" --version 2>&1 | head -n 1)"
	if [ -n "$py" ]; then
		echo "  python:  $("$py" --version 2>&1) ($py)"
	else
		echo "  python:  absent"
	fi
	echo "  jq:      $(command -v jq >/dev/null 2>&1 && jq --version 2>&1 || echo absent)"
	echo "  timer:   $timer; runs per command: $runs (best wall time kept)"
}

# timed STDIN COMMAND...: run COMMAND with STDIN as its standard input,
# its output thrown away and its errors in $err; write "WALL_S RSS_KB"
# as the last line of $tf.  Returns the command's exit status (128+N
# when signal N killed it).  The peak RSS is GNU time's (%M: a process
# that execs keeps the high-water mark of what it was before, so the
# command is started by time, 1-2 MB, never by a fork of python); the
# wall time, where python3 is there, is its monotonic clock around
# time, to the millisecond (time's %e is in hundredths, and a small
# trace's kt views takes 20 ms).
if [ -x /usr/bin/time ] && [ -n "$(command -v python3 2>/dev/null)" ]; then
	timer="GNU time's peak RSS, python3's monotonic clock (ms)"
	timed() {
		_in=$1
		shift
		python3 -c '
import subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", sys.argv[1]] + sys.argv[2:])
wall = time.monotonic() - t
with open(sys.argv[1]) as f:
    rss = f.read().split()[-1]
with open(sys.argv[1], "a") as f:
    f.write("%.4f %s\n" % (wall, rss if rss.isdigit() else "0"))
sys.exit(rc if rc >= 0 else 128 - rc)
' "$tf" "$@" <"$_in" >/dev/null 2>"$err"
	}
elif [ -x /usr/bin/time ]; then
	timer="/usr/bin/time -f '%e %M'"
	timed() {
		_in=$1
		shift
		/usr/bin/time -f '%e %M' -o "$tf" "$@" <"$_in" >/dev/null 2>"$err"
	}
else
	timer="python3 getrusage wrapper"
	timed() {
		_in=$1
		shift
		python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
try:
    rc = subprocess.call(sys.argv[2:])
except OSError as e:
    sys.stderr.write("%s: %s\n" % (sys.argv[2], e))
    rc = 127
wall = time.monotonic() - t
with open(sys.argv[1], "w") as f:
    f.write("%.3f %d\n" % (wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc if rc >= 0 else 128 - rc)
' "$tf" "$@" <"$_in" >/dev/null 2>"$err"
	}
fi

# row COMMAND MB/S RSS_MB RATIO WALL: one aligned table line.
row() {
	printf '  %-28s %9s %12s %10s %8s\n' "$@"
}

# measure KEY LABEL KIND STDIN COMMAND...: run COMMAND $runs times on the
# current input ($bytes long), print its row, and keep its MB/s, peak
# RSS (MB), RSS/input ratio and best wall time (s) in mbs_KEY, rss_KEY,
# ratio_KEY and wall_KEY (empty when it failed).  KIND kt makes a
# failure set the exit status to 2; KIND base (a baseline) only prints
# "failed" in the row.
#
# Pairs: a machine whose speed drifts over tens of seconds (this
# project's VM: the passthrough's best of five ranged 240-518 MB/s
# between the sections of one run) makes a ratio of two commands
# measured one after the other meaningless.  So, unless KT_BENCH_PAIR=0,
# every command measured after "measure keep" in a section runs paired
# with that passthrough: before each of its runs the passthrough runs
# once more, and pair_KEY is the best of those interleaved runs (printed
# as a row of its own), which the section's ratio for KEY divides by, so
# that it compares two commands under the same drift.
measure() {
	_key=$1 _label=$2 _kind=$3 _in=$4
	shift 4
	eval "mbs_$_key= rss_$_key= ratio_$_key= pair_$_key= wall_$_key="
	_best='' _peak=0 _i=0 _rc=0 _bbest='' _pair=0
	# shellcheck disable=SC2034 # base_in is read in the eval below
	if [ "$_key" = keep ]; then
		base_in=$_in base_cmd=''
		for _a; do
			base_cmd="$base_cmd '$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")'"
		done
	elif [ "${KT_BENCH_PAIR:-1}" != 0 ] && [ -n "${base_cmd:-}" ]; then
		_pair=1
	fi
	while [ "$_i" -lt "$runs" ]; do
		_i=$((_i + 1))
		if [ "$_pair" -eq 1 ]; then
			rm -f "$tf"
			if eval "timed \"\$base_in\" $base_cmd"; then
				_line=$(tail -n 1 "$tf")
				_w=${_line% *}
				_bbest=$(awk -v a="$_bbest" -v b="$_w" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
			fi
		fi
		rm -f "$tf"
		timed "$_in" "$@"
		_rc=$?
		[ "$_rc" -eq 0 ] || break
		_line=$(tail -n 1 "$tf")
		_w=${_line% *} _k=${_line#* }
		_best=$(awk -v a="$_best" -v b="$_w" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
		[ "$_k" -gt "$_peak" ] && _peak=$_k
	done

	if [ "$_rc" -ne 0 ]; then
		if [ "$_rc" -gt 128 ]; then _why="signal $((_rc - 128))"; else _why="exit $_rc"; fi
		printf '  %-28s failed (%s)\n' "$_label" "$_why"
		sed -n '1,3s/^/      /p' "$err"
		[ "$_kind" = kt ] && status=2
		return 0
	fi
	# Wall times are in milliseconds (hundredths with GNU time): floor
	# at 1 ms.
	# shellcheck disable=SC2046 # four numbers, split on purpose
	set -- $(awk -v b="$bytes" -v w="$_best" -v k="$_peak" 'BEGIN {
		if (w < 0.001) w = 0.001
		printf "%.1f %.1f %.3f %.3f\n", b / 1e6 / w, k * 1024 / 1e6, k * 1024 / b, w }')
	eval "mbs_$_key=$1 rss_$_key=$2 ratio_$_key=$3 wall_$_key=$4"
	row "$_label" "$1" "$2" "$3" "$4"
	if [ "$_pair" -eq 1 ] && [ -n "$_bbest" ]; then
		_pm=$(awk -v b="$bytes" -v w="$_bbest" 'BEGIN {
			if (w < 0.001) w = 0.001
			printf "%.1f", b / 1e6 / w }')
		eval "pair_$_key=\$_pm"
		row "  passthrough, paired" "$_pm" - - \
		    "$(awk -v w="$_bbest" 'BEGIN { printf "%.3f", w }')"
	fi
}

# skipped KEY LABEL WHY: a row for a command that was not run.
skipped() {
	eval "mbs_$1= rss_$1= ratio_$1="
	printf '  %-28s skipped (%s)\n' "$2" "$3"
}

# target DESCRIPTION VALUE CONDITION SHOWN: print PASS or MISS for the
# awk CONDITION on v=VALUE, with VALUE shown as printf format SHOWN; n/a
# when VALUE is empty (the command failed or was skipped).
target() {
	if [ -z "$2" ]; then
		printf '    %-42s n/a\n' "$1"
		return
	fi
	awk -v v="$2" -v d="$1" -v f="$4" "BEGIN {
		printf \"    %-42s %s (\" f \")\\n\", d, ($3) ? \"PASS\" : \"MISS\", v }"
}

# bench NAME FILE: measure every command on FILE and print its table and
# the targets.
bench() {
	base_cmd=''
	bytes=$(filesize "$2")
	echo
	echo "== $1: $2 ($(mb "$bytes") MB)"
	# Flush what generating or decompressing left to write back, which
	# otherwise slows the first commands down, and read the input into
	# the page cache, so that no command pays for the disk.
	warm "$2"
	row command MB/s "peak RSS MB" RSS/input "wall s"
	measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$2"
	measure sort "kt-normalize" kt /dev/null "$normalize" "$2"
	measure tsv "kt-normalize --tsv" kt /dev/null "$normalize" --tsv "$2"
	measure ktsv "kt-normalize --keep-order --tsv" kt /dev/null "$normalize" --keep-order --tsv "$2"
	if [ "$quick" = 1 ]; then
		skipped py "python3 json load+dump" "KT_BENCH_QUICK=1"
	elif [ -z "$py" ]; then
		skipped py "python3 json load+dump" "no python3"
	else
		measure py "python3 json load+dump" base "$2" \
			"$py" -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout)'
	fi
	if [ "$quick" = 1 ]; then
		skipped jq "jq -c ." "KT_BENCH_QUICK=1"
	elif ! command -v jq >/dev/null 2>&1; then
		skipped jq "jq -c ." "no jq"
	else
		measure jq "jq -c ." base /dev/null jq -c . "$2"
	fi
	x=
	[ -n "$mbs_keep" ] && [ -n "$mbs_py" ] &&
		x=$(awk -v a="$mbs_keep" -v b="$mbs_py" 'BEGIN { printf "%.1f", a / b }')
	echo "  targets:"
	target "passthrough >= 400 MB/s" "$mbs_keep" 'v >= 400' '%s MB/s'
	target "passthrough >= 8x python" "$x" 'v >= 8' '%sx'
	target "sorting peak RSS <= 1.5x input" "$ratio_sort" 'v <= 1.5' '%sx input'
	# Issue 14: TSV output (streaming, as the passthrough does) at 0.6x
	# or more of the passthrough paired with it in this run; the sorted
	# --tsv's ratio is shown beside it (it sorts as well).
	target "TSV output >= 0.6x the passthrough" \
		"$(awk -v a="$mbs_ktsv" -v b="${pair_ktsv:-$mbs_keep}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b }')" \
		'v >= 0.6' '%sx passthrough'
	if [ -n "$mbs_tsv" ]; then
		awk -v a="$mbs_tsv" -v b="${pair_tsv:-$mbs_keep}" 'BEGIN { if (a > 0 && b > 0)
			printf "    (sorted kt-normalize --tsv: %.2fx its paired passthrough)\n", a / b }'
	fi
	# Streaming memory is a constant (the read and write buffers), so
	# "far below the input" is: at most a tenth of it, or 16 MB.
	target "passthrough RSS bounded (<= 0.1x input or 16 MB)" "$rss_keep" \
		"v <= 16 || v <= 0.1 * $(mb "$bytes")" \
		"%s MB, ${ratio_keep:-?}x input"
}

# generated: set gen to the path of the generator's trace, writing it
# unless a file of the right size is already there.
generated() {
	_f=$dir/ktgen-$gensize.json
	# The generator streams at over 1 GB/s: counting its output is cheap.
	# It is written the same way, to standard output: with -o FILE the
	# trace would carry FILE as its traceName, so its size would depend
	# on the path.  A temporary name and a rename keep an interrupted run
	# from leaving a partial file behind.
	_want=$("$KT_BUILD/ktgen" --size "$gensize" | wc -c | tr -d ' ')
	[ "$_want" -gt 0 ] || die "ktgen --size $gensize wrote nothing"
	if [ "$(filesize "$_f")" = "$_want" ]; then
		echo "reusing $_f ($(mb "$_want") MB, already the right size)"
	else
		need_space "$dir" "$((_want - $(filesize "$_f")))"
		echo "generating $_f ($(mb "$_want") MB) ..."
		partial=$_f.tmp
		if ! "$KT_BUILD/ktgen" --size "$gensize" >"$partial"; then
			die "ktgen --size $gensize >$partial failed"
		fi
		mv "$partial" "$_f" || die "cannot rename $partial"
		partial=
	fi
	gen=$_f
}

# largest: print "BYTES PATH" for the largest trace under $shared by
# uncompressed size (gzip -l for .gz, exact below 4 GiB), leaving out
# damaged/ (made-up faults, not real traces).
largest() {
	find "$shared" -path "$shared/damaged" -prune -o -type f \
		\( -name '*.json' -o -name '*.gz' \) -print |
		while IFS= read -r _p; do
			case $_p in
			*.gz) _n=$(gzip -l "$_p" 2>/dev/null | awk 'NR == 2 { print $2 }') ;;
			*) _n=$(filesize "$_p") ;;
			esac
			[ -n "$_n" ] && echo "$_n $_p"
		done | sort -n | tail -n 1
}

# real: set rl to the path of the largest real trace as plain JSON,
# decompressing it into $dir unless that was done before; leave rl
# empty when $shared is absent.
real() {
	rl=
	if [ ! -d "$shared" ]; then
		echo "no $shared: skipping the real trace"
		return
	fi
	shared=$(cd "$shared" && pwd)
	_l=$(largest)
	if [ -z "$_l" ]; then
		echo "no trace in $shared: skipping the real trace"
		return
	fi
	_n=${_l%% *} _p=${_l#* }
	echo "largest real trace: $_p ($(mb "$_n") MB uncompressed)"
	case $_p in
	*.gz) ;;
	*)
		rl=$_p
		return
		;;
	esac
	_f=$dir/real-$(basename "$_p" .gz)
	if [ "$(filesize "$_f")" = "$_n" ]; then
		echo "reusing $_f (already decompressed)"
	else
		need_space "$dir" "$_n"
		echo "decompressing it into $_f ..."
		partial=$_f.tmp
		gzip -dc "$_p" >"$partial" || die "cannot decompress $_p"
		mv "$partial" "$_f" || die "cannot rename $partial"
		partial=
	fi
	rl=$_f
}

case $runs in
'' | *[!0-9]* | 0) die "KT_BENCH_RUNS must be a positive number, not '$runs'" ;;
esac
[ -x "$normalize" ] || die "no $normalize: run through make bench"
# The real interpreter, not a version manager's shim, so its start-up
# is not counted.
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || py=
[ -x /usr/bin/time ] || [ -n "$py" ] || die "need /usr/bin/time (package time) or python3"
mkdir -p "$dir" || die "cannot create $dir"
tf=$dir/.time.$$
err=$dir/.stderr.$$
partial=
res_pid=
trap 'unwarm; rm -f "$tf" "$err" "$dir/.ready.$$" ${partial:+"$partial"}' EXIT
trap 'exit 130' INT TERM

# warm FILE...: flush what is left to write back (a fresh input's, which
# would otherwise run alongside the first commands), then keep FILE...
# in memory until the next warm or the end: tests/bench.d/resident.c
# reads each in and locks it.  A plain read (cat FILE >/dev/null) is not
# enough where the kernel reclaims page cache left untouched for seconds
# (this project's VM: DAMON's pageout), which dropped most of a 541 MB
# input between two runs, so that a command's wall time included reading
# the disk, by chance.  Without the helper (it did not build), the read.
res_bin=
if ${CC:-cc} -O2 -o "$dir/resident" "$here/bench.d/resident.c" 2>/dev/null; then
	res_bin=$dir/resident
fi
unwarm() {
	if [ -n "$res_pid" ]; then
		kill "$res_pid" 2>/dev/null
		wait "$res_pid" 2>/dev/null
		res_pid=
	fi
}
warm() {
	sync
	unwarm
	if [ -z "$res_bin" ]; then
		cat "$@" >/dev/null
		return
	fi
	rm -f "$dir/.ready.$$"
	"$res_bin" "$dir/.ready.$$" "$@" &
	res_pid=$!
	while [ ! -e "$dir/.ready.$$" ]; do
		if ! kill -0 "$res_pid" 2>/dev/null; then
			res_pid=
			cat "$@" >/dev/null
			return
		fi
		sleep 0.05
	done
}

# filters: kt-slice-window and kt-rank-tag beside kt-normalize.
#  - slice-window reads the generated trace sorted (kt-normalize's
#    output): a full pass (--from 0s) and a window at its start (the
#    first step), which should stop reading early;
#  - rank-tag merges eight ranks of gensize/8 each (ktgen --rank R
#    --world 8), unsorted (rank after rank) and sorted (by time).
# sorted_trace: set sorted to the generated trace sorted by kt-normalize,
# writing it unless it is there and newer than the generated one.
sorted_trace() {
	sorted=$dir/ktgen-$gensize.sorted.json
	if [ "$(filesize "$sorted")" -gt 0 ] && [ "$sorted" -nt "$gen" ]; then
		echo "reusing $sorted"
	else
		need_space "$dir" "$(filesize "$gen")"
		"$normalize" "$gen" >"$sorted.tmp" && mv "$sorted.tmp" "$sorted" ||
			die "cannot sort $gen"
	fi
}

filters() {
	bytes=$(filesize "$sorted")
	warm "$sorted"
	echo
	echo "== kt-slice-window on the sorted generated trace: $sorted ($(mb "$bytes") MB)"
	row command MB/s "peak RSS MB" RSS/input "wall s"
	measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$sorted"
	measure sfull "kt-slice-window --from 0s" kt /dev/null "$KT_BIN/kt-slice-window" --from 0s "$sorted"
	echo "  (kt-normalize --keep-order holds the input's ktSourceIndex here)"
	_step=$(grep -m 1 -o '"ProfilerStep#[0-9]*"' "$sorted" | tr -dc 0-9)
	measure sfirst "kt-slice-window --steps $_step" kt /dev/null "$KT_BIN/kt-slice-window" --steps "$_step" "$sorted"
	echo "  (MB/s of the first-step window is of the whole file: it stops early)"
	_x=$(awk -v a="$mbs_sfull" -v b="${pair_sfull:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
	echo "  targets:"
	target "full pass >= 80% of passthrough" "$_x" 'v >= 0.8' '%sx passthrough'
	target "first-step window >= 10x faster than full" \
		"$(awk -v a="$mbs_sfirst" -v b="$mbs_sfull" 'BEGIN { if (b > 0) printf "%.1f", a / b }')" \
		'v >= 10' '%sx'
	target "first-step window RSS far below input" "$ratio_sfirst" 'v <= 0.2' '%sx input'

	# Eight ranks, unsorted and sorted.
	_r=0 _big=0 _sum=0
	_per=$(awk -v s="$gensize" 'BEGIN { n = s + 0; u = substr(s, length(s));
		if (u == "G") n *= 1024; printf "%dM", n / 8 }')
	while [ "$_r" -lt 8 ]; do
		_f=$dir/rank$_r-$_per.json
		[ "$(filesize "$_f")" -gt 0 ] ||
			"$KT_BUILD/ktgen" --rank "$_r" --world 8 --size "$_per" >"$_f" ||
			die "ktgen rank $_r"
		[ "$(filesize "$_f.sorted")" -gt 0 ] ||
			"$normalize" "$_f" >"$_f.sorted" || die "sort rank $_r"
		_n=$(filesize "$_f")
		_sum=$((_sum + _n))
		[ "$_n" -gt "$_big" ] && _big=$_n
		_r=$((_r + 1))
	done
	warm "$dir"/rank*-"$_per".json*
	bytes=$_sum
	echo
	base_cmd=''	# compared with kt normalize sorting, not paired
	echo "== kt-rank-tag merging 8 ranks of $_per ($(mb "$bytes") MB in all, largest $(mb "$_big") MB)"
	row command MB/s "peak RSS MB" RSS/input "wall s"
	# normalize over the same eight files, one after the other.
	measure sort "kt-normalize (sorting, each rank)" kt /dev/null sh -c \
	    'for f; do "$0" "$f" >/dev/null || exit 1; done' "$normalize" \
	    $(ls "$dir"/rank*-"$_per".json)
	# shellcheck disable=SC2046
	measure merge "kt-rank-tag, 8 unsorted ranks" kt /dev/null "$KT_BIN/kt-rank-tag" $(ls "$dir"/rank*-"$_per".json)
	# shellcheck disable=SC2046
	measure kmerge "kt-rank-tag, 8 sorted ranks" kt /dev/null "$KT_BIN/kt-rank-tag" $(ls "$dir"/rank*-"$_per".json.sorted)
	echo "  (RSS/input is against all 8 inputs; the target is against the largest)"
	echo "  targets:"
	target "merge >= 80% of normalize's MB/s" \
		"$(awk -v a="$mbs_merge" -v b="$mbs_sort" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
		'v >= 0.8' '%sx normalize'
	target "merge peak RSS <= 2x largest input" \
		"$(awk -v k="$rss_kmerge" -v b="$_big" 'BEGIN { printf "%.3f", k * 1e6 / b }')" \
		'v <= 2' '%sx largest'
}

machine
echo
# The sections that make their own inputs (reduce) or read only shared
# traces (hta) need neither.
case $only in
reduce | hta) ;;
*)
	generated
	sorted_trace
	;;
esac
if [ -z "$only" ]; then
	real
	bench "generated (ktgen --size $gensize)" "$gen"
	if [ -n "$rl" ]; then
		bench "largest real trace" "$rl"
	fi
	filters
fi
# More filters: each tests/bench.d/NAME.sh is sourced here, in name order.
# It may use everything above: $gen (the generated trace), $sorted (the
# same, sorted by kt-normalize), $dir, $gensize, $normalize, $KT_BIN,
# $KT_BUILD, and the functions row, measure, skipped, target, mb,
# filesize and need_space.
for _b in "$here"/bench.d/*.sh; do
	[ -f "$_b" ] || continue
	case $only in
	'' | "$(basename "$_b" .sh)") ;;
	*) continue ;;
	esac
	base_cmd=''	# each section pairs with its own passthrough
	# shellcheck disable=SC1090
	. "$_b"
done
exit "$status"
