# tests/bench.d/before.sh: every filter beside the same filter of an
# earlier build (sourced by tests/bench.sh; see there for $gen, $sorted,
# row and target).  KT_BENCH_BASE is that build's bin folder (make in a
# checkout of the earlier commit, say the one before issue 11's middle
# layer: git worktree add /tmp/base 299b39c && make -C /tmp/base); without
# it the section prints one skipped row.  A filter the earlier build lacks
# is skipped.
#
# This VM's speed drifts by a factor of two over tens of seconds, so each
# command runs KT_BENCH_ROUNDS times (default 5), interleaved with the
# earlier build's on the same input (earlier, this, earlier, this, ...),
# and the two are compared by their median wall times; the best are
# printed too.  Both builds write to /dev/null.  The target of issue 11
# ("no filter slower than before") is a median ratio of at most 1.05,
# the noise left in a median of five here.
base=${KT_BENCH_BASE:-}
rounds=${KT_BENCH_ROUNDS:-5}
echo
echo "== each filter against an earlier build (KT_BENCH_BASE)"
if [ -z "$base" ] || [ ! -x "$base/kt-normalize" ]; then
	echo "  skipped: KT_BENCH_BASE is not an earlier build's bin folder"
else
	_cg=$dir/ktgen-graph300-$gensize.json
	if [ "$(filesize "$_cg")" -eq 0 ]; then
		need_space "$dir" "$(filesize "$gen")"
		"$KT_BUILD/ktgen" --graph --streams 300 --size "$gensize" >"$_cg.tmp" &&
			mv "$_cg.tmp" "$_cg" || die "ktgen --graph --streams 300 failed"
	fi
	warm "$gen" "$sorted" "$_cg"
	echo "  earlier: $base ($("$base/kt-normalize" --version 2>&1 | head -n 1))"
	echo "  rounds:  $rounds, interleaved; MB/s of the median wall time"
	printf '  %-34s %9s %9s %9s %9s %7s\n' command "MB/s now" before \
	    "best now" before "median"
	# median: the middle of the numbers on standard input.
	median() {
		sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
	}
	# versus LABEL INPUT FILTER ARGS...: FILTER of both builds on INPUT.
	versus() {
		_label=$1 _vin=$2 _f=$3
		shift 3
		if [ ! -x "$base/$_f" ]; then
			printf '  %-34s skipped: not in the earlier build\n' "$_label"
			return 0
		fi
		_vb=$(filesize "$_vin")
		: >"$tf.old"
		: >"$tf.new"
		_i=0
		while [ "$_i" -lt "$rounds" ]; do
			_i=$((_i + 1))
			for _which in old new; do
				if [ "$_which" = old ]; then _d=$base; else _d=$KT_BIN; fi
				if ! /usr/bin/time -f '%e' -o "$tf" "$_d/$_f" "$@" "$_vin" \
				    >/dev/null 2>"$err"; then
					printf '  %-34s failed (%s build)\n' "$_label" "$_which"
					sed -n '1,3s/^/      /p' "$err"
					[ "$_which" = new ] && status=2
					return 0
				fi
				tail -n 1 "$tf" >>"$tf.$_which"
			done
		done
		_mo=$(median <"$tf.old") _mn=$(median <"$tf.new")
		_bo=$(sort -n "$tf.old" | head -n 1) _bn=$(sort -n "$tf.new" | head -n 1)
		_r=$(awk -v n="$_mn" -v o="$_mo" 'BEGIN { if (o > 0) printf "%.2f", n / o }')
		awk -v b="$_vb" -v mn="$_mn" -v mo="$_mo" -v bn="$_bn" -v bo="$_bo" \
		    -v l="$_label" -v r="$_r" 'function s(t) { return t > 0 ? b / 1e6 / t : 0 }
		    BEGIN { printf "  %-34s %9.1f %9.1f %9.1f %9.1f %6sx\n", l,
			s(mn), s(mo), s(bn), s(bo), r }'
		eval "before_$(printf '%s' "$_label" | tr -c 'a-z0-9' _)=\$_r"
		_worst=$(awk -v a="${_worst:-0}" -v b="$_r" 'BEGIN { print (b > a) ? b : a }')
		rm -f "$tf.old" "$tf.new"
	}
	_worst=0
	versus "kt-normalize --keep-order" "$gen" kt-normalize --keep-order
	versus "kt-normalize (sorts)" "$gen" kt-normalize
	versus "kt-normalize --tsv" "$gen" kt-normalize --tsv
	versus "kt-slice-window --from 0s" "$sorted" kt-slice-window --from 0s
	versus "kt-layer-track -n 12" "$gen" kt-layer-track \
	    -a vectorized_layer_norm -n 12
	versus "kt-compact-lanes -n 64 (graph)" "$_cg" kt-compact-lanes -n 64
	versus "kt-bucket" "$gen" kt-bucket
	versus "kt-gaps" "$gen" kt-gaps
	versus "kt-decompose" "$gen" kt-decompose
	versus "kt-overlap" "$gen" kt-overlap
	versus "kt-memory" "$gen" kt-memory
	_vd=$(mktemp -d "${TMPDIR:-/tmp}/kt-bench-views.XXXXXX")
	versus "kt-views" "$gen" kt-views -o "$_vd"
	rm -rf "$_vd"
	echo "  (the ratio is this build's median wall time over the earlier one's)"
	echo "  targets:"
	target "no filter slower than before (worst median)" "$_worst" \
	    'v <= 1.05' '%sx the earlier build'
fi
