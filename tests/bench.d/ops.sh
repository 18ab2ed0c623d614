# tests/bench.d/ops.sh: kt-ops on the generated trace
# (sourced by tests/bench.sh; see there for $gen, measure and target):
# one model load, the op tree and one row per op name, beside
# kt-normalize --keep-order measured here in the same run.  The target
# of issue 12 is 60% of its MB/s, memory bounded by the model.
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-ops on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure ops "kt-ops" kt /dev/null "$KT_BIN/kt-ops" "$gen"
echo "  targets:"
target "kt-ops >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_ops" -v b="${pair_ops:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "kt-ops peak RSS <= 1.2x input (the model's)" \
	"$ratio_ops" \
	'v <= 1.2' '%sx input'
