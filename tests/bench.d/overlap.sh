# tests/bench.d/overlap.sh: kt-overlap on the generated trace (sourced
# by tests/bench.sh; see there for $gen, measure and target): the per-
# collective table (one model load), beside kt-normalize --keep-order
# measured here in the same run. The target of issue 7 is 60% of its
# MB/s.
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-overlap on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure overlap "kt-overlap" kt /dev/null "$KT_BIN/kt-overlap" "$gen"
echo "  targets:"
target "kt-overlap >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_overlap" -v b="${pair_overlap:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
