# tests/bench.d/hta.sh: kt views against HTA (HolisticTraceAnalysis,
# github.com/facebookresearch/HolisticTraceAnalysis) on HTA's own test
# traces (sourced by tests/bench.sh; see there for measure and target).
# Issue 14: "kt views at least 50x faster end to end and at least 10x
# less memory" than HTA.
#
# What is compared, per trace folder (a fresh process each, from the
# trace files to the tables on disk):
#   - HTA: tests/bench.d/hta_views.py, our driver, which imports HTA from
#     $KT_HTA, loads the folder with TraceAnalysis (HTA's parser, its
#     defaults) and computes the breakdowns that match kt's views:
#     temporal breakdown (1_runtime_decomposition), idle time breakdown
#     with its interval statistics (2_lost_time), GPU kernel breakdown
#     (3_kernel_table), comm/comp overlap (4_overlap_exposure), and the
#     CUDA kernel launch stats and queue length summary (the launch side
#     of 6_op_table), on every rank, plots off, each table written as CSV;
#   - kt: kt-views -o DIR on the same files (all six views).
# It is end to end: for HTA the python start and the imports of pandas
# and HTA are included, since that is what a user pays.  Both read the
# same .json.gz files (HTA reads gzip itself), so both pay for
# decompression.  MB/s and RSS/input are against the uncompressed bytes
# (gzip -l).  kt-views is measured first (as the section's "keep"), so
# HTA's run is paired with another kt-views run just before it (see
# measure in bench.sh) and the speed ratio is of those two.  Peak RSS is
# GNU time's, the largest single process: HTA parses several ranks
# in a pool of forked workers, whose memory is not summed, which
# understates HTA's.
#
# Environment: KT_HTA, a checkout of HTA (its hta/ package; nothing of
# HTA is in this repository); KT_HTA_PYTHON, the python to run it with
# (default: the first of python3 and /usr/bin/python3 that imports
# pandas).  HTA's imports (pandas, numpy, plotly, networkx, psutil,
# yaml) must be installed; Debian's python3-pandas, python3-plotly,
# python3-networkx and python3-psutil do.  When KT_HTA, a python with
# pandas, HTA's imports or the traces are missing, the section prints
# one skipped row and returns: it never fails the bench.

# shellcheck shell=sh disable=SC2154,SC2034 # sourced: bench.sh sets and reads these
echo
echo "== kt views against HTA (HolisticTraceAnalysis) on its own traces"
hta_py=
hta_why=
if [ -z "${KT_HTA:-}" ]; then
	hta_why="KT_HTA not set: no HolisticTraceAnalysis checkout"
elif [ ! -f "$KT_HTA/hta/trace_analysis.py" ]; then
	hta_why="no hta/trace_analysis.py in KT_HTA=$KT_HTA"
elif [ ! -d "$shared/hta" ]; then
	hta_why="no $shared/hta"
else
	for _p in ${KT_HTA_PYTHON:-python3 /usr/bin/python3}; do
		# The real interpreter, not a version manager's shim.
		_p=$("$_p" -c 'import pandas, sys; print(sys.executable)' 2>/dev/null) || continue
		hta_py=$_p
		break
	done
	if [ -z "$hta_py" ]; then
		hta_why="no python3 that imports pandas (apt-get install python3-pandas)"
	elif ! _e=$("$hta_py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import hta.trace_analysis' \
	    "$KT_HTA" 2>&1); then
		hta_why="HTA does not import: $(printf '%s\n' "$_e" | tail -n 1)"
	fi
fi
if [ -n "$hta_why" ]; then
	skipped hta "HTA views" "$hta_why"
else
	echo "  HTA:     $(sed -n 's/^__version_tuple__ = //p' "$KT_HTA/hta/version.py" 2>/dev/null) from $KT_HTA"
	echo "  python:  $("$hta_py" -c 'import sys, pandas, numpy
print("%s, pandas %s, numpy %s" % (sys.version.split()[0], pandas.__version__, numpy.__version__))') ($hta_py)"
	# NAME|FILES: the traces HTA loads itself (see INDEX.tsv): a
	# single rank with NCCL (df_index_resolver), a larger single rank on
	# five streams, and a folder of two ranks.
	for _t in \
	    "df_index_resolver|df_index_resolver/df_index_resolver.json.gz" \
	    "negative_queue_length rank0|negative_queue_length_values_check/rank0.json.gz" \
	    "trace_filter, 2 ranks|trace_filter/sampled_rank-0.json.gz trace_filter/sampled_rank-1.json.gz"; do
		_name=${_t%%|*} _files=${_t#*|}
		# HTA wants a folder of rank traces: links to the shared files.
		_d=$dir/hta-traces
		rm -rf "$_d" "$dir/hta-out" "$dir/hta-views"
		mkdir -p "$_d" || die "cannot create $_d"
		bytes=0 _ok=1 _list=
		for _f in $_files; do
			if [ ! -f "$shared/hta/$_f" ]; then
				_ok=0
				break
			fi
			ln -s "$shared/hta/$_f" "$_d/$(basename "$_f")"
			_list="$_list $_d/$(basename "$_f")"
			_n=$(gzip -l "$shared/hta/$_f" | awk 'NR == 2 { print $2 }')
			bytes=$((bytes + _n))
		done
		echo
		if [ "$_ok" -eq 0 ]; then
			echo "  $_name: no $shared/hta/$_f"
			skipped hta "HTA views" "trace missing"
			continue
		fi
		# shellcheck disable=SC2086 # the files, one word each
		warm $_list
		echo "  $_name: $_files ($(mb "$bytes") MB uncompressed)"
		base_cmd=''
		row command MB/s "peak RSS MB" RSS/input "wall s"
		# shellcheck disable=SC2086 # the file list, split on purpose
		measure keep "kt views (6 views)" kt /dev/null "$KT_BIN/kt-views" -o "$dir/hta-views" $_list
		measure hta "HTA views (python)" base /dev/null \
			"$hta_py" "$here/bench.d/hta_views.py" "$KT_HTA" "$_d" "$dir/hta-out"
		[ -n "$pair_hta" ] && echo "  (the paired row is kt views again, run just before HTA)"
		echo "  targets:"
		target "kt views >= 50x faster than HTA" \
			"$(awk -v a="${pair_hta:-$mbs_keep}" -v b="$mbs_hta" 'BEGIN { if (a > 0 && b > 0) printf "%.1f", a / b }')" \
			'v >= 50' '%sx'
		target "kt views >= 10x less memory than HTA" \
			"$(awk -v a="$rss_hta" -v b="$rss_keep" 'BEGIN { if (a > 0 && b > 0) printf "%.1f", a / b }')" \
			'v >= 10' '%sx'
	done
	rm -rf "$dir/hta-traces" "$dir/hta-out" "$dir/hta-views"
fi
