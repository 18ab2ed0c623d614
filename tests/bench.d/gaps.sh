# tests/bench.d/gaps.sh: kt-gaps on the generated trace (sourced by
# tests/bench.sh; see there for $gen, measure and target), beside
# kt-normalize --keep-order measured here in the same run.  The targets
# of issue 6: at least 60% of its MB/s, and a peak RSS of at most 1.2x
# the input (the analysis model keeps a few dozen bytes per event).
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-gaps on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure gaps "kt-gaps" kt /dev/null "$KT_BIN/kt-gaps" -o /dev/null "$gen"
echo "  targets:"
target "kt-gaps >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_gaps" -v b="${pair_gaps:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "kt-gaps peak RSS <= 1.2x input" "$ratio_gaps" 'v <= 1.2' '%sx input'
