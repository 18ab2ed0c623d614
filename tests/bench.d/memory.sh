# tests/bench.d/memory.sh: kt-memory on the generated trace (sourced by
# tests/bench.sh; see there for $gen, measure and target): the memory
# table (one streaming pass), beside kt-normalize --keep-order measured
# here in the same run. The target of issue 7 is 60% of its MB/s.
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-memory on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure memory "kt-memory" kt /dev/null "$KT_BIN/kt-memory" "$gen"
echo "  targets:"
target "kt-memory >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_memory" -v b="${pair_memory:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
