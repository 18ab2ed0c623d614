# tests/bench.d/correlate.sh: kt-correlate on the generated trace
# (sourced by tests/bench.sh; see there for $gen, measure and target):
# one model load, the chains and one row per GPU activity, beside
# kt-normalize --keep-order measured here in the same run.  The target
# of issue 12 is 60% of its MB/s, memory bounded by the model.
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-correlate on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure correlate "kt-correlate" kt /dev/null "$KT_BIN/kt-correlate" "$gen"
echo "  targets:"
target "kt-correlate >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_correlate" -v b="${pair_correlate:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "kt-correlate peak RSS <= 1.2x input (the model's)" \
	"$ratio_correlate" \
	'v <= 1.2' '%sx input'
