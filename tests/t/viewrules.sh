# tests/t/viewrules.sh: what real viewers make of kt's traces, kept in the
# suite without a viewer.  kt normalize --check knows the importer rules
# that chrome://tracing (catapult) and Perfetto taught (kt-normalize(1):
# mixed-id, row-order, counter-series, zero-nested, flow-args; its golden
# case normalize-check-viewer was checked by hand); here every filter that
# writes a trace adds no finding of them to its input, and the defects
# that once shipped stay away:
#  - kt memory --counters writes one series per counter;
#  - kt rank-tag writes no args on flows (catapult merged both ends');
#  - kt compact-lanes sorts the lanes below the layer guide row;
#  - kt layer-track ends no pass with a zero-length marker;
#  - kt normalize makes numeric-string ids numbers: jq finds none left.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
gen=$KT_BUILD/ktgen
cd "$TMP" || exit 1

RULES='mixed-id row-order counter-series zero-nested flow-args'

# rules FILE: "rule count" of every viewer rule (0 when none) for FILE.
rules() {
	run kt-normalize --check "$1" 2>/dev/null | awk -F'\t' -v r="$RULES" '
	NR > 1 { c[$1]++ }
	END { n = split(r, a, " "); for (i = 1; i <= n; i++) print a[i], c[a[i]] + 0 }'
}

# nothing_new NAME SOURCE OUTPUT: OUTPUT has no more of any rule's
# findings than SOURCE.
nothing_new() {
	rules "$2" >src.rules
	rules "$3" >out.rules
	_d=$(awk 'NR == FNR { s[$1] = $2; next } $2 > s[$1] { printf "%s %d (input %d) ", $1, $2, s[$1] }' \
	    src.rules out.rules)
	if [ -z "$_d" ] && [ -s out.rules ]; then
		ok "$1: no new viewer-rule findings"
	else
		bad "$1: ${_d:-no report}"
	fi
}

# count RULE FILE: the findings of RULE for FILE.
count() {
	run kt-normalize --check "$2" 2>/dev/null | awk -F'\t' -v r="$1" '$1 == r { n++ } END { print n + 0 }'
}

"$gen" --steps 3 --layers 4 -o e.json || exit 1
"$gen" --steps 2 --layers 4 --rank 1 --world 2 -o e1.json || exit 1
"$gen" --graph --steps 2 --layers 4 --streams 32 -o g.json || exit 1

# layer-track, then compact-lanes eager (with and without --group) and
# CUDA-graph over the guided trace.
if run kt-layer-track -a vectorized_layer_norm_kernel -e tn_n_tilesize256x128x64 \
    -n 4 -p forward e.json -o guided.json 2>lt.err; then
	nothing_new layer-track e.json guided.json
	n=$(count zero-nested guided.json)
	[ "$n" = "$(count zero-nested e.json)" ] && ok "layer-track: no zero-length marker nested ($n, as the input)" ||
	    bad "layer-track: $n zero-nested, input $(count zero-nested e.json)"
	for g in "" --group; do
		if run kt-compact-lanes $g guided.json -o view.json 2>cl.err; then
			nothing_new "compact-lanes $g" guided.json view.json
			n=$(count row-order view.json)
			[ "$n" = 0 ] && ok "compact-lanes $g: guide row sorts above the lanes" ||
			    bad "compact-lanes $g: $n row-order findings"
		else
			bad "compact-lanes $g: $(head -1 cl.err)"
		fi
	done
else
	bad "layer-track: $(head -1 lt.err)"
fi
if run kt-compact-lanes --max-gpu-lanes 64 g.json -o gview.json 2>cl.err; then
	nothing_new "compact-lanes graph" g.json gview.json
else
	bad "compact-lanes graph: $(head -1 cl.err)"
fi

# memory --counters: one counter per series.
if run kt-memory --counters e.json -o mem.json 2>m.err; then
	nothing_new "memory --counters" e.json mem.json
	n=$(count counter-series mem.json)
	[ "$n" = 0 ] && [ "$(jq '[.traceEvents[] | select(.ph == "C")] | length' mem.json)" -gt 0 ] &&
	    ok "memory --counters: counters written, each of one series" ||
	    bad "memory --counters: $n counters of several series"
else
	bad "memory --counters: $(head -1 m.err)"
fi

# rank-tag: both ranks merged, no args on flow ends.
if run kt-rank-tag e.json e1.json -o merged.json 2>rt.err; then
	nothing_new rank-tag e.json merged.json
	n=$(count flow-args merged.json)
	a=$(jq '[.traceEvents[] | select((.ph == "s" or .ph == "t" or .ph == "f") and has("args"))] | length' merged.json)
	[ "$n" = 0 ] && [ "$a" = 0 ] && ok "rank-tag: no args on flow events (jq: $a)" ||
	    bad "rank-tag: $n flow-args findings, $a flows with args"
	for w in "" --clip; do
		if run kt-slice-window $w --steps 6 merged.json -o sw.json 2>sw.err; then
			nothing_new "slice-window $w" merged.json sw.json
		else
			bad "slice-window $w: $(head -1 sw.err)"
		fi
	done
else
	bad "rank-tag: $(head -1 rt.err)"
fi

if run kt-select --drop python_function e.json -o sel.json 2>s.err; then
	nothing_new select e.json sel.json
else
	bad "select: $(head -1 s.err)"
fi
run kt-normalize e.json -o norm.json 2>/dev/null && nothing_new normalize e.json norm.json ||
    bad "normalize failed"

# Numeric-string ids, as 2021-era traces spell them: normalize repairs
# them; jq (not kt) finds none left, and the check none mixed.
have_shared || { skip "viewrules-real: no $KT_SHARED"; exit 0; }
S=$KT_SHARED
r50=$S/kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
[ -f "$r50" ] || { skip "viewrules-real: no resnet50 trace"; exit 0; }
numstr="$JQ_IDS"' [.traceEvents[] | select((.pid | numstr) or (.tid | numstr))] | length'
before=$(gzip -dc "$r50" | jq "$numstr")
if run kt-normalize "$r50" -o r50.json 2>r50.err; then
	after=$(jq "$numstr" r50.json)
	said=$(sed -n 's/.*repaired: \([0-9]*\) events.*numeric-string.*/\1/p' r50.err)
	[ "$before" -gt 0 ] && [ "$after" = 0 ] && [ "$said" = "$before" ] &&
	    ok "normalize resnet50: $before events' string ids made numbers, reported, none left (jq)" ||
	    bad "normalize resnet50: before $before, after $after, reported '$said'"
	m0=$(count mixed-id "$r50") m1=$(count mixed-id r50.json)
	[ "$m0" -gt 0 ] && [ "$m1" = 0 ] && ok "normalize resnet50: mixed-id $m0 -> 0" ||
	    bad "normalize resnet50: mixed-id $m0 -> $m1"
	# Same events but the id spelling (jq): nothing else changed.
	gzip -dc "$r50" >r50in.json
	events_byvalue r50in.json >a.jsonl
	events r50.json >b.jsonl
	cmp -s a.jsonl b.jsonl && ok "normalize resnet50: every other byte of meaning kept (jq)" ||
	    bad "normalize resnet50: events differ beyond the ids"
else
	bad "normalize resnet50: $(head -1 r50.err)"
fi
