# tests/bench.d/gz.sh: gzip input (sourced by tests/bench.sh; see there
# for $gen, measure and target).  The generated trace compressed once
# with igzip (gzip -1 without it) into $dir, then kt-normalize
# --keep-order on the plain file (the passthrough), fed the plain text
# by "igzip -dc FILE |" (the reference: decompression in a process of
# its own, on the other core), and on the .gz itself, where kt inflates
# with ISA-L on a decoder thread of the reader beside the scanner.  MB/s
# is of the uncompressed bytes.  Target of issue 14: the .gz at least
# 0.8x the igzip pipe and 0.8x the plain file.
if command -v igzip >/dev/null 2>&1; then
	_z="igzip -c" _dz="igzip -dc"
else
	_z="gzip -1 -c" _dz="gzip -dc"
fi
_gz=$dir/ktgen-$gensize.json.gz
if [ "$(filesize "$_gz")" -gt 0 ] && [ "$_gz" -nt "$gen" ]; then
	echo "reusing $_gz"
else
	need_space "$dir" "$(($(filesize "$gen") / 4))"
	$_z "$gen" >"$_gz.tmp" && mv "$_gz.tmp" "$_gz" || die "cannot compress $gen"
fi
bytes=$(filesize "$gen")
warm "$gen" "$_gz"
echo
echo "== gzip input: $_gz ($(mb "$(filesize "$_gz")") MB, $(mb "$bytes") MB of JSON)"
row command MB/s "peak RSS MB" RSS/input "wall s"
measure keep "kt-normalize --keep-order" kt /dev/null "$normalize" --keep-order "$gen"
measure gzpipe "${_dz%% *} -dc | kt-normalize -k" base /dev/null \
	sh -c "$_dz '$_gz' | '$normalize' --keep-order"
measure gzin "kt-normalize -k FILE.gz" kt /dev/null "$normalize" --keep-order "$_gz"
measure gzcat "${_dz%% *} -dc (reference)" base /dev/null $_dz "$_gz"
echo "  targets:"
# Each relative to its paired passthrough, so that drift cancels.
target "kt on .gz >= 0.8x ${_dz%% *} -dc | kt" \
	"$(awk -v a="$mbs_gzin" -v pa="${pair_gzin:-$mbs_keep}" -v b="$mbs_gzpipe" -v pb="${pair_gzpipe:-$mbs_keep}" \
	    'BEGIN { if (a > 0 && b > 0 && pa > 0 && pb > 0) printf "%.2f", (a / pa) / (b / pb) }')" \
	'v >= 0.8' '%sx the pipe'
target "kt on .gz >= 0.8x kt on the plain file" \
	"$(awk -v a="$mbs_gzin" -v b="${pair_gzin:-$mbs_keep}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')" \
	'v >= 0.8' '%sx plain'
