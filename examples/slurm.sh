#!/bin/sh
# examples/slurm.sh: the views of a whole job on Slurm, map then reduce:
#
#   map     a job array: task i runs kt views TRACE -o OUT/views/NAME
#           for its traces (one per task, or KT_CHUNK per task)
#   reduce  a job that starts once every task succeeded
#           (--dependency=afterok:ARRAYJOB):
#           kt views --merge OUT/views/* -o OUT/job
#
#   sh examples/slurm.sh OUT TRACE...       on the login node: submits both
#
# NAME is the trace's file name less .json, .json.gz (.zst, .xz, .bz2).
# OUT must be on a file system the nodes share, and kt on their PATH.
# The traces are written to OUT/traces.list, one a line; array task i
# takes lines i*CHUNK+1 to (i+1)*CHUNK.  The logs go to OUT/logs/.
# Environment, at submission:
#   KT_CHUNK      traces per array task (default 1: one task per rank)
#   KT_MAX_TASKS  at most that many tasks at once (--array=0-N%MAX)
#   KT_SBATCH     more sbatch options for both jobs, such as
#                 "-p short -t 00:30:00 -A myproject"
# The jobs run this script again as "slurm.sh map OUT CHUNK" and
# "slurm.sh reduce OUT".  The sbatch options below hold for both.
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
set -eu

# The folder name of trace $1.
name() {
	n=${1##*/}
	case $n in
	*.json.gz|*.json.zst|*.json.xz|*.json.bz2) n=${n%.*} ;;
	esac
	printf '%s\n' "${n%.json}"
}

case ${1:-} in
map)
	out=$2
	first=$((SLURM_ARRAY_TASK_ID * $3 + 1))
	sed -n "${first},$((first + $3 - 1))p" "$out/traces.list" |
	    while IFS= read -r t; do
		# Status 1: no device activity, the views written.
		kt views "$t" -o "$out/views/$(name "$t")" || [ $? -eq 1 ] ||
		    exit 1
	done
	;;
reduce)
	kt views --merge "$2"/views/* -o "$2/job"
	;;
''|-*)
	echo "usage: slurm.sh OUT TRACE..." >&2
	exit 2
	;;
*)
	out=$1
	shift
	[ $# -gt 0 ] || { echo "usage: slurm.sh OUT TRACE..." >&2; exit 2; }
	chunk=${KT_CHUNK:-1}
	mkdir -p "$out/views" "$out/logs"
	printf '%s\n' "$@" >"$out/traces.list"
	last=$((($# + chunk - 1) / chunk - 1))
	# KT_SBATCH is words.
	# shellcheck disable=SC2086
	map=$(sbatch --parsable ${KT_SBATCH:-} --job-name=kt-map \
	    --array="0-$last${KT_MAX_TASKS:+%$KT_MAX_TASKS}" \
	    --output="$out/logs/map-%A_%a.log" "$0" map "$out" "$chunk")
	map=${map%%;*}
	# shellcheck disable=SC2086
	reduce=$(sbatch --parsable ${KT_SBATCH:-} --job-name=kt-reduce \
	    --dependency="afterok:$map" --output="$out/logs/reduce-%j.log" \
	    "$0" reduce "$out")
	echo "map: job $map ($((last + 1)) tasks); reduce: job ${reduce%%;*}, into $out/job"
	;;
esac
