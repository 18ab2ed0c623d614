# tests/t/rankpipe.sh: the rank of a trace survives a pipe.  A trace
# without distributedInfo is named rank-3.json, so its rank is 3 by its
# name only; every filter that writes a trace (normalize, select,
# slice-window, compact-lanes, layer-track, memory --counters) writes
# "ktRank": 3, says so in one note on stderr, and the next filter, which
# reads the pipe (no name), still finds rank 3.  The judge is the file
# name (3) and jq: the output without ktRank is what the same filter
# writes for the same bytes under a name that gives no rank (lossless:
# ktRank is the only change).  A trace with distributedInfo.rank gets
# no ktRank; kt compact-lanes --restore takes its ktRank off again; kt
# views gives rank 3 in every view of the file, memory included.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

"$gen" --steps 2 --layers 1 -r 3 -w 4 -o g.json
jq -c 'del(.distributedInfo)' g.json >rank-3.json
cp rank-3.json plain.json

# The rank column of kt bucket's busy row, from standard input.
busy_rank() {
	kt-bucket | awk -F '\t' '$1 == "busy" { print $2; exit }'
}

# The rank column is 3 for the file itself (its name), '-' for a pipe of
# its bytes: what the filters below must mend.
r1=$(busy_rank <rank-3.json)
r2=$(kt-bucket rank-3.json | awk -F '\t' '$1 == "busy" { print $2; exit }')
if [ "$r1" = "-" ] && [ "$r2" = 3 ]; then
	ok "rankpipe-premise"
else
	bad "rankpipe-premise: stdin $r1, file $r2"
fi

for f in "normalize" "normalize -t" "select -k kernel,cpu_op" \
    "slice-window --steps 5" "compact-lanes" \
    "layer-track -a vectorized_layer_norm_kernel -n 1" \
    "memory --counters"; do
	name=$(echo "$f" | tr ' ,' '__')
	# shellcheck disable=SC2086
	run kt-$f rank-3.json >o.out 2>o.err
	rc=$?
	# shellcheck disable=SC2086
	run kt-$f plain.json >p.out 2>p.err
	r=$(busy_rank <o.out)
	notes=$(grep -c 'note: rank 3 (file name: rank-N) written as ktRank$' o.err)
	case $f in
	"normalize -t")
		# TSV: the trace row holds the top-level keys.
		key=$(awk -F '\t' '$2 == "trace" { print $NF; exit }' o.out |
		    jq '.ktRank')
		same=1
		awk -F '\t' '$2 != "trace"' o.out >o.rows
		awk -F '\t' '$2 != "trace"' p.out >p.rows
		cmp -s o.rows p.rows || same=0
		;;
	*)
		key=$(jq '.ktRank' o.out)
		same=1
		# The counters kt-memory makes name the rank it knows now
		# ("memory cuda:0 rank 3 allocated"): the input's events
		# are compared.
		jq -S 'del(.ktRank) |
		    .traceEvents |= map(select(.cat != "kt_memory"))' o.out >o.j
		jq -S '.traceEvents |= map(select(.cat != "kt_memory"))' p.out >p.j
		cmp -s o.j p.j || same=0
		;;
	esac
	if [ "$rc" -eq 0 ] && [ "$r" = 3 ] && [ "$key" = 3 ] &&
	    [ "$notes" = 1 ] && [ "$same" = 1 ]; then
		ok "rankpipe-$name"
	else
		bad "rankpipe-$name: rc $rc, rank $r, ktRank $key, notes $notes, lossless $same"
	fi
done

# A second filter in the pipe keeps the ktRank it reads (no second one,
# no note: the rank came from ktRank).
kt-normalize rank-3.json 2>/dev/null | kt-select -k kernel >s.json 2>s.err
if [ "$(jq '.ktRank' s.json)" = 3 ] && [ ! -s s.err ] &&
    [ "$(grep -c '"ktRank"' s.json)" = 1 ] && [ "$(busy_rank <s.json)" = 3 ]; then
	ok "rankpipe-two-filters"
else
	bad "rankpipe-two-filters: $(jq -c '.ktRank' s.json) $(cat s.err)"
fi

# distributedInfo.rank is the rank: nothing added, even under a name
# that says another (rank-5.json: distributedInfo wins, kt_reader_rank).
cp g.json rank-5.json
kt-normalize rank-5.json >d.json 2>d.err
if [ "$(jq 'has("ktRank")' d.json)" = false ] && [ ! -s d.err ] &&
    [ "$(busy_rank <d.json)" = 3 ]; then
	ok "rankpipe-distributedinfo"
else
	bad "rankpipe-distributedinfo: $(cat d.err)"
fi

# --restore gives the source file back byte for byte (kt-compact-lanes(1):
# its SHA-256 is the report's restore.traceSha256), so without the ktRank
# that the compact view carried: the restored file is the source itself.
kt-compact-lanes -r c.rep -o c.json rank-3.json 2>/dev/null
kt-compact-lanes --restore -r c.rep c.json >back.json 2>/dev/null
if cmp -s back.json rank-3.json && [ "$(jq .ktRank c.json)" = 3 ] &&
    [ "$(jq -r .restore.traceSha256 c.rep)" = "$(sha256sum <rank-3.json | cut -d' ' -f1)" ]; then
	ok "rankpipe-compact-restore"
else
	bad "rankpipe-compact-restore: $(cmp back.json rank-3.json)"
fi

# kt views: every view's rank column is the name's 3 (memory included).
rm -rf v
kt-views -o v rank-3.json 2>/dev/null
got=$(for t in v/1_runtime_decomposition.tsv v/3_kernel_table.tsv \
    v/5_memory.tsv; do
	awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "rank") c = i }
	    NR > 1 && c && $c != "*" { print $c }' "$t"
done | sort -u | tr '\n' ' ')
if [ "$got" = "3 " ]; then
	ok "rankpipe-views"
else
	bad "rankpipe-views: ranks $got"
fi
