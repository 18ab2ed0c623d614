# tests/bench.d/reduce.sh: the reduce of a many-rank job (sourced by
# tests/bench.sh; see there for measure and target).  The map runs once:
# 512 small ranks of one world (build/ktgen --rank R --world 512
# --steps 2 --layers 2, about 0.35 MB each), each through kt views, its
# trace removed after; the view folders stay in $dir/reduce-views for
# later runs by the same kt-views.  Then the reduce of the first 8, 64
# and 512 folders is timed, with its peak RSS.  Its input is the
# tables, so MB/s here is of the tables' bytes, and the time per rank is
# the wall time over the ranks.  Targets: linear growth (time per rank
# at 512 within 2x of that at 8, and of that at 64) and memory bounded
# by the tables (linear in their bytes, and below the traces' size).
#
# The reduce measured: kt views --merge of the folders (views), or kt
# bucket --merge of their kernel tables alone (bucket).
reduce_with=views
rd=$dir/reduce-views
rworld=512
echo
echo "== reduce: the tables of 8, 64 and $rworld ranks ($reduce_with --merge)"
# The map is reused when the same kt-views made it.
_sum=$(cksum <"$KT_BIN/kt-views")
if [ "$(cat "$rd/.complete" 2>/dev/null)" != "$_sum" ]; then
	echo "map: $rworld ranks through ktgen and kt views into $rd (once) ..."
	rm -rf "$rd"
	mkdir -p "$rd" || die "cannot create $rd"
	_r=0
	while [ "$_r" -lt "$rworld" ]; do
		echo "$_r"
		_r=$((_r + 1))
	done | xargs -P "$(nproc)" -I{} sh -c '
		t=$0/rank{}.json
		"$1/ktgen" --rank {} --world "$3" --steps 2 --layers 2 -o "$t" &&
		    wc -c <"$t" >"$0/rank{}.bytes" &&
		    "$2/kt-views" "$t" -o "$0/rank{}" 2>/dev/null
		rc=$?
		rm -f "$t"
		exit $rc' "$rd" "$KT_BUILD" "$KT_BIN" "$rworld" ||
	    die "the map of $rworld ranks failed"
	echo "$_sum" >"$rd/.complete"
else
	echo "reusing the map in $rd"
fi
row command "MB/s tables" "peak RSS MB" RSS/tables "wall s"
for _n in 8 64 "$rworld"; do
	# The inputs of the reduce of ranks 0 to _n-1, and their bytes.
	set --
	_r=0
	while [ "$_r" -lt "$_n" ]; do
		case $reduce_with in
		views) set -- "$@" "$rd/rank$_r" ;;
		bucket) set -- "$@" "$rd/rank$_r/3_kernel_table.tsv" ;;
		esac
		_r=$((_r + 1))
	done
	case $reduce_with in
	views)
		bytes=$(for _d; do cat "$_d"/*.tsv; done | wc -c | tr -d ' ')
		set -- "$KT_BIN/kt-views" --merge "$@" -o "$dir/reduce-out" ;;
	bucket)
		bytes=$(cat "$@" | wc -c | tr -d ' ')
		set -- "$KT_BIN/kt-bucket" --merge "$@" -o "$dir/reduce-out.tsv" ;;
	esac
	eval "tab_$_n=\$bytes"
	warm "$rd"/rank*/*.tsv
	measure "red$_n" "reduce, $_n ranks" kt /dev/null "$@"
done
rm -rf "$dir/reduce-out" "$dir/reduce-out.tsv"
_traces=$(cat "$rd"/rank*.bytes | awk '{ s += $1 } END { print s }')
# Wall time per rank, in ms (the wall time is in hundredths of a second:
# at 8 ranks it is mostly start-up, so 64 is shown against 512 too).
perrank() {
	awk -v w="$1" -v n="$2" 'BEGIN { if (w != "") printf "%.3f", w / n * 1000 }'
}
_p8=$(perrank "$wall_red8" 8)
_p64=$(perrank "$wall_red64" 64)
_pw=$(perrank "$(eval echo "\$wall_red$rworld")" "$rworld")
echo "  time per rank: 8: ${_p8:-?} ms, 64: ${_p64:-?} ms, $rworld: ${_pw:-?} ms"
echo "  tables of $rworld ranks: $(mb "$(eval echo "\$tab_$rworld")") MB; their traces: $(mb "$_traces") MB"
echo "  targets:"
target "time per rank at $rworld <= 2x that at 8" \
	"$(awk -v a="$_pw" -v b="$_p8" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b }')" \
	'v <= 2' '%sx'
target "time per rank at $rworld <= 2x that at 64" \
	"$(awk -v a="$_pw" -v b="$_p64" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b }')" \
	'v <= 2' '%sx'
# Memory: bounded by the tables, not the traces: linear in the tables
# (the RSS added per MB of tables from 64 to 512 ranks no more than 1.5x
# that from 8 to 64), and below the traces' bytes.
_slope() {
	awk -v a="$1" -v b="$2" -v t="$3" -v s="$4" 'BEGIN {
		if (a != "" && b != "" && t > s) printf "%.2f", (a - b) * 1e6 / (t - s) }'
}
_s1=$(_slope "$rss_red64" "$rss_red8" "$tab_64" "$tab_8")
_s2=$(_slope "$(eval echo "\$rss_red$rworld")" "$rss_red64" "$(eval echo "\$tab_$rworld")" "$tab_64")
echo "  RSS added per byte of tables: 8 to 64 ranks ${_s1:-?}, 64 to $rworld ${_s2:-?}"
target "RSS linear in the tables (per byte, 64-$rworld vs 8-64)" \
	"$(awk -v a="$_s2" -v b="$_s1" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b }')" \
	'v <= 1.5' '%sx'
target "peak RSS at $rworld ranks below their traces' bytes" \
	"$(awk -v a="$(eval echo "\$rss_red$rworld")" -v t="$_traces" 'BEGIN {
		if (a != "" && t > 0) printf "%.2f", a * 1e6 / t }')" \
	'v < 1' '%sx the traces'
