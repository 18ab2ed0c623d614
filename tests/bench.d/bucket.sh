# tests/bench.d/bucket.sh: kt-bucket on the generated trace (sourced by
# tests/bench.sh; see there for $gen, measure and target), beside
# kt-normalize --keep-order measured here in the same run.  The targets
# of issue 6: at least 60% of its MB/s, and a peak RSS of at most 1.2x
# the input (the analysis model keeps a few dozen bytes per event).
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-bucket on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure bucket "kt-bucket" kt /dev/null "$KT_BIN/kt-bucket" -o /dev/null "$gen"
echo "  targets:"
target "kt-bucket >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_bucket" -v b="${pair_bucket:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "kt-bucket peak RSS <= 1.2x input" "$ratio_bucket" 'v <= 1.2' '%sx input'
