# tests/bench.d/views.sh: kt-views (six views) on the generated trace
# (sourced by tests/bench.sh; see there for $gen, measure and target):
# all six views from one read (one model), beside kt-normalize
# --keep-order and one view (kt-decompose --tsv) measured here in the
# same run, and that view on one thread (KT_THREADS=1). Targets: issue
# 7, 60% of the passthrough's MB/s; issue 14, at most 1.3x the time of
# one view, and one view at least 1.7x faster on two CPUs than on one
# (each time taken relative to its paired passthrough, so that drift
# between the runs cancels).
bytes=$(filesize "$gen")
warm "$gen"
echo
echo "== kt-views (6 views) on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure one "kt-decompose --tsv (one view)" kt /dev/null "$KT_BIN/kt-decompose" --tsv "$gen"
measure views "kt-views (6 views)" kt /dev/null "$KT_BIN/kt-views" -o "$dir/views-out" "$gen"
# The same view on one thread: a plain file is read in pieces on every
# CPU (kt(7) Threads); issue 14 asks 1.7x on two cores.
measure one1 "kt-decompose --tsv, one thread" kt /dev/null env KT_THREADS=1 "$KT_BIN/kt-decompose" --tsv "$gen"
echo "  targets:"
target "kt-views (6 views) >= 60% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_views" -v b="${pair_views:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.6' '%sx passthrough'
target "kt-views <= 1.3x the time of one view" \
	"$(awk -v o="$mbs_one" -v po="${pair_one:-$mbs_keep}" -v v="$mbs_views" -v pv="${pair_views:-$mbs_keep}" \
	    'BEGIN { if (o > 0 && v > 0 && po > 0 && pv > 0) printf "%.2f", (o / po) / (v / pv) }')" \
	'v <= 1.3' '%sx one view'
target "one view on every CPU ($(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?)) >= 1.7x one thread" \
	"$(awk -v o="$mbs_one" -v po="${pair_one:-$mbs_keep}" -v t="$mbs_one1" -v pt="${pair_one1:-$mbs_keep}" \
	    'BEGIN { if (o > 0 && t > 0 && po > 0 && pt > 0) printf "%.2f", (o / po) / (t / pt) }')" \
	'v >= 1.7' '%sx one thread'
rm -rf "$dir/views-out"
