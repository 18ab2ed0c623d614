# tests/bench.d/compact-lanes.sh: kt-compact-lanes on a large generated
# CUDA-graph trace (sourced by tests/bench.sh; see there for measure and
# target): ktgen --graph --streams 300 --size $gensize, written into $dir
# once and reused, beside kt-normalize --keep-order measured here on the
# same file in the same run.  The targets of issue 5: at least 60% of
# its MB/s, and a peak RSS of at most 1.5 times the input.
# The view goes to standard output (/dev/null), first without a report,
# then with one (--report /dev/null), which adds the input's SHA-256.
# The peak concurrency of this trace is above the default 10 lanes, so
# --max-gpu-lanes 64.
_cg=$dir/ktgen-graph300-$gensize.json
_want=$("$KT_BUILD/ktgen" --graph --streams 300 --size "$gensize" | wc -c | tr -d ' ')
if [ "$(filesize "$_cg")" != "$_want" ]; then
	need_space "$dir" "$_want"
	echo "generating $_cg ($(mb "$_want") MB) ..."
	"$KT_BUILD/ktgen" --graph --streams 300 --size "$gensize" >"$_cg.tmp" &&
		mv "$_cg.tmp" "$_cg" || die "ktgen --graph --streams 300 failed"
else
	echo "reusing $_cg"
fi
bytes=$(filesize "$_cg")
warm "$_cg"
echo
echo "== kt-compact-lanes on a CUDA-graph trace, 300 streams: $_cg ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$_cg"
measure compact "kt-compact-lanes -n 64" kt /dev/null "$KT_BIN/kt-compact-lanes" \
	-n 64 "$_cg"
measure compactr "  ... --report (SHA-256)" kt /dev/null "$KT_BIN/kt-compact-lanes" \
	-n 64 --report /dev/null "$_cg"
echo "  (the events' records are held, their bytes read again from the file as"
echo "  they are written; with a report, its SHA-256 (and a plain file's"
echo "  frame, read once with it) is computed in a second thread while the view"
echo "  is written)"
echo "  targets:"
target "kt-compact-lanes >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_compact" -v b="${pair_compact:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "the same with a report (SHA-256) >= 60%" \
	"$(awk -v a="$mbs_compactr" -v b="${pair_compactr:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "kt-compact-lanes peak RSS <= 1.5x input" "$ratio_compactr" 'v <= 1.5' '%sx input'
