# tests/bench.d/slice-window.sh: kt-slice-window on a raw (unsorted)
# CUDA-graph trace (sourced by tests/bench.sh; see there for measure and
# target): ktgen --graph --streams 200 --size $gensize, written into $dir
# once and reused, and that trace sorted by kt-normalize, beside
# kt-normalize --keep-order on the raw one.  Issue 14: the window of
# three steps near the start, the middle and the end of the file, on
# the raw trace (held as an index, sorted, and read again) and on the
# sorted one (streamed: it stops once the window's end is certain); the
# target is a peak RSS under 300 MB for the raw trace (the README
# pipeline's first filter), and for the sorted trace's windows a bounded
# RSS (64 MB: what a window holds, not what the file has).
_sg=$dir/ktgen-graph200-$gensize.json
_want=$("$KT_BUILD/ktgen" --graph --streams 200 --size "$gensize" | wc -c | tr -d ' ')
if [ "$(filesize "$_sg")" != "$_want" ]; then
	need_space "$dir" "$((2 * _want))"
	echo "generating $_sg ($(mb "$_want") MB) ..."
	"$KT_BUILD/ktgen" --graph --streams 200 --size "$gensize" >"$_sg.tmp" &&
		mv "$_sg.tmp" "$_sg" || die "ktgen --graph --streams 200 failed"
fi
_ss=$dir/ktgen-graph200-$gensize.sorted.json
if [ ! -s "$_ss" ] || [ "$_sg" -nt "$_ss" ]; then
	"$normalize" "$_sg" >"$_ss.tmp" && mv "$_ss.tmp" "$_ss" ||
		die "cannot sort $_sg"
fi
bytes=$(filesize "$_sg")
# The steps: the first, the middle and the last three.
_sw_first=$(grep -o '"ProfilerStep#[0-9]*"' "$_sg" | tr -dc '0-9\n' | sort -n | sed -n 1p)
_sw_last=$(grep -o '"ProfilerStep#[0-9]*"' "$_sg" | tr -dc '0-9\n' | sort -n | tail -1)
_sw_mid=$(( (_sw_first + _sw_last) / 2 ))
warm "$_sg" "$_ss"
echo
echo "== kt-slice-window on a raw CUDA-graph trace, 200 streams: $_sg ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$_sg"
for _swk in first mid last; do
	eval "_swa=\$_sw_$_swk"
	_swb=$((_swa + 2))
	[ "$_swk" = last ] && _swa=$((_sw_last - 2)) _swb=$_sw_last
	measure "swraw$_swk" "--steps $_swa-$_swb (raw)" kt /dev/null \
		"$KT_BIN/kt-slice-window" --steps "$_swa-$_swb" "$_sg"
	measure "swsorted$_swk" "--steps $_swa-$_swb (sorted)" kt /dev/null \
		"$KT_BIN/kt-slice-window" --steps "$_swa-$_swb" "$_ss"
done
echo "  (MB/s is of the whole file; a sorted input's window stops early)"
echo "  targets:"
for _swk in first mid last; do
	eval "_swr=\${rss_swraw$_swk:-} _swq=\${rss_swsorted$_swk:-}"
	target "raw, window at the $_swk steps: RSS < 300 MB" "$_swr" \
		'v < 300' '%s MB'
	target "sorted, the same: RSS <= 64 MB" "$_swq" 'v <= 64' '%s MB'
done

# The README's first pipeline, written as a user should on a raw trace:
#   kt slice-window --steps A-B T | kt layer-track ... | kt compact-lanes -o v.json
# on the raw trace as a plain file and as gzip (gzip -1, made once and
# reused), and with kt normalize first (reading the raw trace, the sort
# through a pipe).  Peak RSS is the largest process's (GNU time of sh -c).
# Issue 14: under 5 s wall and 300 MB for a window near the start, the
# middle and the end; with kt normalize first, under 10 s.
_sgz=$_sg.gz
if [ ! -s "$_sgz" ] || [ "$_sg" -nt "$_sgz" ]; then
	need_space "$dir" "$((bytes / 8))"
	echo "compressing $_sg (gzip -1) ..."
	gzip -1 -c "$_sg" >"$_sgz.tmp" && mv "$_sgz.tmp" "$_sgz" ||
		die "cannot compress $_sg"
fi
_plout=$dir/pipeline-view.json
_pltail="| '$KT_BIN/kt-layer-track' -a vectorized_layer_norm_kernel -n 12 | '$KT_BIN/kt-compact-lanes' -n 64 -o '$_plout'"
warm "$_sg" "$_sgz"
echo
echo "== the README pipeline on the raw trace: slice-window | layer-track | compact-lanes"
echo "   ($_sg, $(mb "$bytes") MB; .gz $(mb "$(filesize "$_sgz")") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
for _swk in first mid last; do
	eval "_swa=\$_sw_$_swk"
	_swb=$((_swa + 2))
	[ "$_swk" = last ] && _swa=$((_sw_last - 2)) _swb=$_sw_last
	measure "pl$_swk" "pipeline $_swa-$_swb (raw)" kt /dev/null sh -c \
	    "'$KT_BIN/kt-slice-window' --steps $_swa-$_swb '$_sg' $_pltail"
	measure "plgz$_swk" "pipeline $_swa-$_swb (raw .gz)" kt /dev/null sh -c \
	    "'$KT_BIN/kt-slice-window' --steps $_swa-$_swb '$_sgz' $_pltail"
	measure "pln$_swk" "normalize | pipeline $_swa-$_swb" kt /dev/null sh -c \
	    "'$normalize' '$_sg' | '$KT_BIN/kt-slice-window' --steps $_swa-$_swb $_pltail"
done
rm -f "$_plout" "$_plout.compact.json"
echo "  (MB/s is of the whole raw file)"
echo "  targets (the issue's, for a 2 GB trace: KT_BENCH_SIZE=2G):"
for _swk in first mid last; do
	eval "_plw=\${wall_pl$_swk:-} _plr=\${rss_pl$_swk:-}"
	eval "_pgw=\${wall_plgz$_swk:-} _pgr=\${rss_plgz$_swk:-}"
	eval "_pnw=\${wall_pln$_swk:-}"
	target "pipeline, $_swk steps: wall < 5 s" "$_plw" 'v < 5' '%s s'
	target "pipeline, $_swk steps: RSS < 300 MB" "$_plr" 'v < 300' '%s MB'
	target "the same from .gz: wall < 5 s" "$_pgw" 'v < 5' '%s s'
	target "the same from .gz: RSS < 300 MB" "$_pgr" 'v < 300' '%s MB'
	target "kt normalize first: wall < 10 s" "$_pnw" 'v < 10' '%s s'
done
