# tests/bench.d/layer-track.sh: kt-layer-track on the generated trace
# (sourced by tests/bench.sh; see there for $gen, measure and target).
#  - to standard output (a first read finds the anchors, then the plain
#    input is copied with the guides put in), beside kt-normalize
#    --keep-order to standard output, measured here in the same run: the
#    target is 70% of its MB/s;
#  - with -o FILE, which also writes the report and so hashes the input
#    (SHA-256), beside kt-normalize --keep-order -o FILE;
#  - --suggest -n 12, which keeps every kernel, launch and cpu_op.
# The anchor is the generator's forward layer-norm kernel, once per layer
# of its 12 (tests/ktgen.md).
_lt_anchor=vectorized_layer_norm_kernel
bytes=$(filesize "$gen")
need_space "$dir" "$((2 * bytes))"
warm "$gen"
echo
echo "== kt-layer-track on the generated trace: $gen ($(mb "$bytes") MB)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure lt "kt-layer-track -n 12 (stdout)" kt /dev/null \
	"$KT_BIN/kt-layer-track" -a "$_lt_anchor" -n 12 "$gen"
measure normo "kt-normalize --keep-order -o" kt /dev/null "$normalize" --keep-order \
	-o "$dir/lt-normalize.json" "$gen"
measure lto "kt-layer-track -o (report)" kt /dev/null "$KT_BIN/kt-layer-track" \
	-a "$_lt_anchor" -n 12 -o "$dir/lt-out.json" "$gen"
measure ltsug "kt-layer-track --suggest -n 12" kt /dev/null "$KT_BIN/kt-layer-track" \
	--suggest -n 12 "$gen"
rm -f "$dir/lt-normalize.json" "$dir/lt-out.json" "$dir/lt-out.json.layers.json"
echo "  (-o writes a file and the report, which hashes the whole input)"
echo "  targets:"
target "stdout >= 70% of kt-normalize --keep-order" \
	"$(awk -v a="$mbs_lt" -v b="${pair_lt:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.7' '%sx passthrough'
target "-o with report >= 70% of normalize -o" \
	"$(awk -v a="$mbs_lto" -v b="$mbs_normo" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.7' '%sx normalize -o'
target "peak RSS bounded (<= 16 MB or 0.1x input)" "$rss_lt" \
	"v <= 16 || v <= 0.1 * $(mb "$bytes")" "%s MB"
