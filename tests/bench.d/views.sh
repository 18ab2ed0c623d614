# tests/bench.d/views.sh: kt-views (5 views) on the generated trace
# (sourced by tests/bench.sh; see there for $gen, measure and target):
# all five views (the model, then a skimming memory pass), beside kt-
# normalize --keep-order measured here in the same run. The target of
# issue 7 is 60% of its MB/s.
bytes=$(filesize "$gen")
sync
cat "$gen" >/dev/null
echo
echo "== kt-views (5 views) on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure views "kt-views (5 views)" kt /dev/null "$KT_BIN/kt-views" -o "$dir/views-out" "$gen"
echo "  targets:"
target "kt-views (5 views) >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_views" -v b="${pair_views:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
rm -rf "$dir/views-out"
