#!/bin/sh
# examples/parallel.sh: the views of a whole job with GNU parallel
# (Debian package "parallel"), map then reduce:
#
#   map     kt views TRACE -o OUT/views/NAME      one job per trace
#   reduce  kt views --merge OUT/views/* -o OUT/job   here, after the map
#
#   sh examples/parallel.sh OUT TRACE...
#
# NAME is the trace's file name less .json, .json.gz (.zst, .xz, .bz2).
# Where the map runs is GNU parallel's business; it reads its options
# from $PARALLEL:
#
#   PARALLEL='-j8'                    this machine, 8 traces at a time
#                                     (default: one per CPU)
#   PARALLEL='--slf hosts -j4'        the machines of the file hosts (one
#                                     "[N/]host" a line, ":" is this one)
#                                     over ssh, with a shared file system:
#                                     the same paths there, kt on PATH
#   KT_TRANSFER=1 PARALLEL='--slf hosts'
#                                     the same without one: each trace is
#                                     sent (--transferfile), its folder
#                                     brought back (--return) and both
#                                     removed there (--cleanup), one at a
#                                     time per host; give OUT and the
#                                     traces as relative paths
#
# -S host1,host2 works as --slf does.  kt views exits 1 for a rank with
# no device activity, with its views written: the map takes that as
# done.  A map that fails otherwise stops the rest (--halt now,fail=1)
# and the reduce never runs.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: parallel.sh OUT TRACE..." >&2
	exit 2
fi
out=$1
shift
mkdir -p "$out/views"
# The traces go to parallel on its standard input, so "$@" is free for
# the transfer options.
for t; do printf '%s\0' "$t"; done >"$out/traces.list"
if [ -n "${KT_TRANSFER:-}" ]; then
	# One job at a time per host (-j1): parallel's --cleanup removes
	# the emptied ~/.parallel/tmp while another job on the same host
	# makes its --workdir there, and that job fails (GNU parallel
	# 20221122, seen with two jobs a host).
	set -- -j1 --workdir ... --transferfile {} --return "$out/views/{name}" \
	    --cleanup
else
	set --
fi
parallel -0 --halt now,fail=1 "$@" \
    --rpl '{name} s:.*/::; s:\.json(\.gz|\.zst|\.xz|\.bz2)?$::' \
    "mkdir -p '$out/views' && { kt views {} -o '$out/views/{name}' || test \$? = 1; }" \
    <"$out/traces.list"
kt views --merge "$out"/views/* -o "$out/job"
