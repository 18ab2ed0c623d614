# tests/bench.d/percore.sh: every filter's input bytes per second of CPU
# (sourced by tests/bench.sh; see there for $gen, $sorted, target).
# Issue 14: "every filter at least 1 GB/s per core of plain-JSON input,
# views included".  Per core is read as the filter's whole CPU time,
# user and system, of all its threads (a filter that runs on two CPUs
# pays for both): MB of input / CPU seconds, best of the section's runs,
# from the children's rusage (microseconds; GNU time's %U and %S are
# hundredths).  The input is the generated trace, plain JSON; each
# filter with the arguments a user gives it for a whole-trace answer,
# its output to /dev/null (TSV: not a terminal), views to a folder.
# slice-window's full pass reads the sorted copy ($sorted, where it can
# stream), its first-step window the raw file (found by an index).  The
# scanner's own rate (the "kt's scanner" section) bounds them all.
_pc_gen=$gen
bytes=$(filesize "$_pc_gen")
warm "$_pc_gen"
_pc_runs=$runs
[ "$_pc_runs" -gt 3 ] && _pc_runs=3
echo
echo "== every filter per CPU second: $_pc_gen ($(mb "$bytes") MB)"
printf '  %-36s %12s %10s %8s\n' command "MB/CPU-s" "CPU s" "wall s"
_pc_worst= _pc_wname= _pc_miss=0 _pc_n=0
# pc LABEL FILES COMMAND...: run COMMAND (FILES its inputs, one word
# each, for the bytes) and print its row; keeps the worst.
pc() {
	_l=$1 _f=$2
	shift 2
	_r=$(python3 -c '
import os, sys, time
best = None
for i in range(int(sys.argv[1])):
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open("/dev/null", os.O_RDWR)
        os.dup2(fd, 0); os.dup2(fd, 1); os.dup2(fd, 2)
        try:
            os.execv(sys.argv[2], sys.argv[2:])
        finally:
            os._exit(127)
    _, st, ru = os.wait4(pid, 0)
    w = time.monotonic() - t
    if not os.WIFEXITED(st) or os.WEXITSTATUS(st) > 1:
        print("failed"); sys.exit(0)
    c = ru.ru_utime + ru.ru_stime
    if best is None or c < best[0]:
        best = (c, w)
print("%.4f %.4f" % best)
' "$_pc_runs" "$@")
	if [ "$_r" = failed ] || [ -z "$_r" ]; then
		printf '  %-36s failed\n' "$_l"
		status=2
		return
	fi
	_b=0
	for _x in $_f; do
		_b=$((_b + $(filesize "$_x")))
	done
	# shellcheck disable=SC2086 # two numbers
	set -- $_r
	_m=$(awk -v b="$_b" -v c="$1" 'BEGIN { if (c < 0.0001) c = 0.0001; printf "%.0f", b / 1e6 / c }')
	printf '  %-36s %12s %10s %8s\n' "$_l" "$_m" "$1" "$2"
	_pc_n=$((_pc_n + 1))
	if [ "$_m" -lt 1000 ]; then
		_pc_miss=$((_pc_miss + 1))
	fi
	if [ -z "$_pc_worst" ] || [ "$_m" -lt "$_pc_worst" ]; then
		_pc_worst=$_m _pc_wname=$_l
	fi
}
_pc_out=$dir/percore-out
rm -rf "$_pc_out"
pc "kt-normalize --keep-order" "$_pc_gen" "$normalize" --keep-order "$_pc_gen"
pc "kt-normalize (sorting)" "$_pc_gen" "$normalize" "$_pc_gen"
pc "kt-normalize --tsv (sorting)" "$_pc_gen" "$normalize" --tsv "$_pc_gen"
pc "kt-rank-tag" "$_pc_gen" "$KT_BIN/kt-rank-tag" "$_pc_gen"
pc "kt-slice-window --from 0s (sorted)" "$sorted" "$KT_BIN/kt-slice-window" --from 0s "$sorted"
pc "kt-slice-window --steps 5 (raw)" "$_pc_gen" "$KT_BIN/kt-slice-window" --steps 5 "$_pc_gen"
pc "kt-layer-track -n 12" "$_pc_gen" "$KT_BIN/kt-layer-track" -a vectorized_layer_norm_kernel -n 12 "$_pc_gen"
pc "kt-compact-lanes -n 64" "$_pc_gen" "$KT_BIN/kt-compact-lanes" -n 64 "$_pc_gen"
pc "kt-bucket" "$_pc_gen" "$KT_BIN/kt-bucket" "$_pc_gen"
pc "kt-gaps" "$_pc_gen" "$KT_BIN/kt-gaps" "$_pc_gen"
pc "kt-decompose" "$_pc_gen" "$KT_BIN/kt-decompose" "$_pc_gen"
pc "kt-overlap" "$_pc_gen" "$KT_BIN/kt-overlap" "$_pc_gen"
pc "kt-memory" "$_pc_gen" "$KT_BIN/kt-memory" "$_pc_gen"
pc "kt-views -o DIR" "$_pc_gen" "$KT_BIN/kt-views" -o "$_pc_out" "$_pc_gen"
pc "kt-summary" "$_pc_gen" "$KT_BIN/kt-summary" "$_pc_gen"
pc "kt-select -k kernel" "$_pc_gen" "$KT_BIN/kt-select" -k kernel "$_pc_gen"
pc "kt-correlate" "$_pc_gen" "$KT_BIN/kt-correlate" "$_pc_gen"
pc "kt-ops" "$_pc_gen" "$KT_BIN/kt-ops" "$_pc_gen"
pc "kt-inspect 1000000" "$_pc_gen" "$KT_BIN/kt-inspect" 1000000 "$_pc_gen"
pc "kt-diff A A" "$_pc_gen $_pc_gen" "$KT_BIN/kt-diff" "$_pc_gen" "$_pc_gen"
rm -rf "$_pc_out"
echo "  (kt-diff's MB are of both inputs; it also hashes both, SHA-256)"
echo "  targets:"
target "every filter >= 1000 MB/CPU-s (worst)" "$_pc_worst" 'v >= 1000' \
	"%s MB/CPU-s, $_pc_wname"
echo "    filters under 1000 MB/CPU-s: $_pc_miss of $_pc_n"
