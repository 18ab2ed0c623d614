# tests/t/compactlanes.sh: kt-compact-lanes.  jq, awk and the
# generator's ground truth judge each compact view:
#  - the lanes of a device are as many as its peak concurrency, which awk
#    computes from the source (ends before starts at equal times), and
#    on a generated CUDA-graph trace equal the truth file's peak;
#  - no two events on one lane overlap (exact integer ns from
#    kt normalize --tsv; touching is fine), and kt normalize --check
#    finds no overlap or unbound flow;
#  - every moved event is its source event (jq: after args._compact_gpu_
#    track is taken out and pid and tid put back), so names, ts, dur and
#    args.stream are unchanged; every moved flow end sits on its
#    kernel's pid, tid and ts;
#  - --restore writes the source back byte for byte (the whole file,
#    against kt normalize --keep-order of the source, which writes the
#    same events as their bytes);
#  - compacting a compact view changes nothing;
#  - the refusal above --max-gpu-lanes, --group, gpu_user_annotation
#    scopes, layer guides, standard input, and the errors.
# The eight DLRM ranks of ../shared/traces, merged by kt-rank-tag (32
# GPU rows, more than ten, but at most four per device), and other real
# traces are used when that folder is there.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
ktgen=$KT_BUILD/ktgen

# Per GPU pid of a source trace (TSV from kt normalize --tsv on stdin):
# "pid peak", the most GPU activities (kernel, gpu_memcpy, gpu_memset)
# running at once; an end before a start at equal times.
cat >peak.awk <<'EOF'
BEGIN { FS = "\t" }
$2 == "kernel" || $2 == "gpu_memcpy" || $2 == "gpu_memset" {
	if ($3 != "X") next
	n++
	pid[n] = $6; s = $4 + 0; e = $4 + $5
	print $6 "\t" s "\t1"
	print $6 "\t" e "\t0"
}
EOF
# sort -k1,1 -k2,2n -k3,3n: per pid, by time, ends (0) first.
cat >sweep.awk <<'EOF'
BEGIN { FS = "\t" }
{ if ($3 == 1) { c[$1]++; if (c[$1] > m[$1]) m[$1] = c[$1] } else c[$1]-- }
END { for (p in m) print p, m[p] }
EOF
peaks() {
	run kt-normalize --tsv "$1" 2>/dev/null | awk -f peak.awk | sort -t '	' -k1,1 -k2,2n -k3,3n |
	    awk -f sweep.awk | sort
}

# Lanes per pid of a compact view: "pid lanes" from its thread_name events.
lanes() {
	jq -r '.traceEvents[] | select(.ph == "M" and .name == "thread_name"
	    and (.args.name | type) == "string"
	    and (.args.name | startswith("GPU lane "))) | .pid' "$1" |
	    sort | uniq -c | awk '{ print $2, $1 }' | sort
}

# Overlaps on lanes and scope rows: "pid tid ts" of every X event that
# starts before the previous one of its row ends (exact ns, TSV).
overlaps() {
	run kt-normalize --tsv "$1" 2>/dev/null | awk -F'\t' '$3 == "X" &&
	    (($7 + 0 > 1000000000 && $7 + 0 < 1100000000) ||
	    $6 + 0 >= 1000000000) { print $6 "\t" $7 "\t" $4 "\t" $5 }' |
	    sort -t '	' -k1,1 -k2,2n -k3,3n -k4,4nr | awk -F'\t' '
	    $1 "/" $2 != row { row = $1 "/" $2; end = 0; stack = 0 }
	    {
		# Scope rows nest: pop what ended, then an event must end
		# within the one it starts in.
		while (stack > 0 && se[stack] <= $3) stack--
		if (stack > 0 && $3 + $4 > se[stack]) print $1, $2, $3
		else if (stack > 0 && $2 + 0 > 1000000000) print $1, $2, $3
		se[++stack] = $3 + $4
	    }'
}

# The moved events put back by jq, as sorted one-line JSON with their
# row id first: [rank, row number], the rank null unless merged (row
# ids repeat across the ranks of a merged trace); the same rows of the
# source, numbered by its ktSourceIndex when it has one.
# An event's rank: args.rank, else its pid's ($pr, tests/lib.sh).
pidrank=$JQ_PIDRANK
moved_back() {
	jq -c "$pidrank"' | .traceEvents[] | select((.args | type) == "object" and
	    (.args | has("_compact_gpu_track")))
	    | .args._compact_gpu_track as $t
	    | .pid = $t.pid | .tid = $t.tid | del(.args._compact_gpu_track)
	    | if $t.args == "absent" then del(.args)
	      elif $t.args == "null" then .args = null else . end
	    | [[(if (.args | type) == "object" then .args.rank else null end) //
	        $pr[.pid | tostring], $t.index], .]' "$1" | sort
}
source_rows() {
	plain "$1" | jq -c --slurpfile rows "$2" "$pidrank"' | ($rows[0] | map({(tostring): true}) | add // {})
	    as $set | (.ktSourceIndex // null) as $si | .traceEvents | to_entries[]
	    | [[(if (.value.args | type) == "object" then .value.args.rank else null end) //
	        $pr[.value.pid | tostring],
	        (if $si then $si[.key] else .key end)], .value]
	    | select($set[.[0] | tostring])' | sort
}

# check_view NAME SOURCE VIEW: the checks every compact view passes.
check_view() {
	_n=$1 _s=$2 _v=$3
	if [ -n "$(overlaps "$_v")" ]; then
		bad "$_n: overlap on a lane or scope row: $(overlaps "$_v" | head -3)"
	else
		ok "$_n: no overlap on lanes or scope rows"
	fi
	if run kt-normalize --check "$_v" >check.tsv 2>/dev/null ||
	    ! grep -q '^\(overlap\|unbound-flow\)	' check.tsv; then
		ok "$_n: kt normalize --check: no overlap, no unbound flow"
	else
		# The source's own problems may stay, never new ones.
		run kt-normalize --check "$_s" >check0.tsv 2>/dev/null
		a=$(grep -c '^\(overlap\|unbound-flow\)	' check0.tsv)
		b=$(grep -c '^\(overlap\|unbound-flow\)	' check.tsv)
		if [ "$b" -le "$a" ]; then
			ok "$_n: kt normalize --check: nothing new ($b, source $a)"
		else
			bad "$_n: kt normalize --check: $b overlaps/unbound flows, source $a"
		fi
	fi
	moved_back "$_v" >back.jsonl
	jq -s '[.[][0]]' back.jsonl >rows.json
	source_rows "$_s" rows.json >src.jsonl
	if [ -s back.jsonl ] && cmp -s back.jsonl src.jsonl; then
		ok "$_n: $(wc -l <back.jsonl) moved events are their source events"
	elif [ ! -s back.jsonl ]; then
		ok "$_n: nothing moved"
	else
		bad "$_n: moved events differ from the source: $(diff back.jsonl src.jsonl | head -2)"
	fi
	# Flow ends on the pid, tid and ts of a moved X event.
	jq -r '.traceEvents[] | select((.args | type) == "object" and
	    (.args | has("_compact_gpu_track")))
	    | "\(.ph)\t\(.pid)\t\(.tid)\t\(.ts)"' "$_v" |
	    awk -F'\t' '$1 == "X" { x[$2 "/" $3 "/" $4] = 1; next }
		{ f[++n] = $2 "/" $3 "/" $4 }
		END { for (i = 1; i <= n; i++) if (!(f[i] in x)) u++
		      print n + 0, u + 0 }' >flows.txt
	read -r nf nu <flows.txt
	if [ "$nu" -eq 0 ]; then
		ok "$_n: $nf moved flow ends on their kernels"
	else
		bad "$_n: $nu of $nf moved flow ends on no moved X event"
	fi
}

# check_restore NAME SOURCE VIEW [REPORT]: --restore gives the source back.
check_restore() {
	_n=$1 _s=$2 _v=$3
	rm -f restored.json
	if [ $# -ge 4 ]; then
		run kt-compact-lanes --restore --report "$4" "$_v" -o restored.json 2>rerr
	else
		run kt-compact-lanes --restore "$_v" -o restored.json 2>rerr
	fi
	_rc=$?
	_r=${4:-$_v.compact.json}
	# With a report whose restore.exact is true, the restore is the
	# source's file itself: sha256sum of it equals that of the source
	# (decompressed by gzip, not kt) and the report's traceSha256.
	if [ -f "$_r" ] && [ "$(jq -r .restore.exact "$_r")" = true ]; then
		_want=$(plain "$_s" | sha256sum | cut -d' ' -f1)
		_got=$(sha256sum <restored.json | cut -d' ' -f1)
		if [ "$_rc" -eq 0 ] && [ ! -s rerr ] && [ "$_got" = "$_want" ] &&
		    [ "$(jq -r .restore.traceSha256 "$_r")" = "$_want" ]; then
			ok "$_n: restore is the source's file (SHA-256 $(echo "$_want" | cut -c1-12)..., $(wc -c <restored.json) bytes)"
		else
			bad "$_n: restore (exit $_rc, $(head -c 200 rerr)): SHA-256 $_got, the source's $_want"
		fi
		return
	fi
	# Else the restore says why not (the report's restore.why), and the
	# events come back: a source kt wrote comes back itself, its
	# ktSourceIndex where it was; another as kt normalize writes it.
	if [ -f "$_r" ] && ! grep -qF "not its file's bytes: $(jq -r '.restore.why // "the report has no restore.frame"' "$_r")" rerr; then
		bad "$_n: restore: no reason why the bytes are not the file's: $(head -c 200 rerr)"
		return
	fi
	run kt-normalize --keep-order "$_s" -o kept.json 2>kept.err
	if [ "$_rc" -eq 0 ] && { cmp -s restored.json kept.json ||
	    cmp -s restored.json "$_s"; }; then
		ok "$_n: restore is byte-exact ($(wc -c <restored.json) bytes)"
	elif [ "$_rc" -eq 0 ] && grep -q numeric-string kept.err &&
	    run kt-normalize --keep-order restored.json 2>/dev/null | cmp -s - kept.json &&
	    plain "$_s" >src.json && events src.json >ev.src && events restored.json >ev.rest &&
	    cmp -s ev.src ev.rest; then
		# kt normalize writes numeric-string ids as numbers; the
		# restore keeps them as the source spells them (jq).
		ok "$_n: restore is byte-exact but for the layout, string ids kept ($(wc -c <restored.json) bytes)"
	else
		bad "$_n: restore (exit $_rc, $(head -c 200 rerr)) differs: $(cmp restored.json kept.json 2>&1 | head -1)"
	fi
}

# --- A generated CUDA-graph trace: 300 streams, known peak. ---
"$ktgen" --graph --streams 300 --steps 3 --truth g.tsv -o g.json
tpeak=$(awk -F'\t' '$1 == "peak" { print $15 }' g.tsv)
tpeakns=$(awk -F'\t' '$1 == "peak" { print $6 }' g.tsv)
steppeak=$(awk -F'\t' '$1 == "step" && $15 > m { m = $15 } END { print m }' g.tsv)
nstreams=$(jq '[.traceEvents[] | select(.cat == "kernel") | .tid] | unique | length' g.json)
if run kt-compact-lanes --max-gpu-lanes 64 g.json -o gc.json 2>gerr; then
	ok "graph: compacts ($nstreams kernel streams, truth peak $tpeak)"
else
	bad "graph: exit $?: $(cat gerr)"
fi
l=$(lanes gc.json)
if [ "$l" = "0 $tpeak" ] && [ "$tpeak" = "$steppeak" ] && [ "$nstreams" -ge 200 ]; then
	ok "graph: $tpeak lanes = the truth's peak concurrency"
else
	bad "graph: lanes '$l', truth peak $tpeak (steps $steppeak), $nstreams streams"
fi
if [ "$(peaks g.json)" = "0 $tpeak" ]; then
	ok "graph: awk's sweep agrees ($tpeak)"
else
	bad "graph: awk's sweep says $(peaks g.json), truth $tpeak"
fi
r=$(jq -c '.devices[0] | [.streams, .peak, .lanes, .peakTsNs]' gc.json.compact.json)
want=$(jq -nc --argjson s "$nstreams" --argjson p "$tpeak" \
    --argjson t "$tpeakns" '[$s, $p, $p, $t]')
if [ "$r" = "$want" ]; then
	ok "graph: report: streams, peak, lanes, peak time as the truth"
else
	bad "graph: report $r, want $want"
fi
# The digests, against sha256sum: inputSha256 (report and view) is the
# file's as given (the .gz, the copy of standard input), traceSha256 the
# trace's bytes (decompressed by gzip, not kt).
gzip -c g.json >gz.json.gz
run kt-compact-lanes -n 64 gz.json.gz -o gzc.json 2>/dev/null
run kt-compact-lanes -n 64 --report gsr.json -o gs2.json <g.json 2>/dev/null
sp=$(sha256sum <g.json | cut -d' ' -f1)
sz=$(sha256sum <gz.json.gz | cut -d' ' -f1)
got=$(jq -r '[.inputSha256, .restore.traceSha256] | join(" ")' gc.json.compact.json)
got="$got $(jq -r .ktCompactLanes.inputSha256 gc.json)"
got="$got $(jq -r '[.inputSha256, .restore.traceSha256] | join(" ")' gzc.json.compact.json)"
got="$got $(jq -r .ktCompactLanes.inputSha256 gzc.json)"
got="$got $(jq -r '[.inputSha256, .restore.traceSha256] | join(" ")' gsr.json)"
if [ "$got" = "$sp $sp $sp $sz $sp $sz $sp $sp" ] && [ "$sp" != "$sz" ]; then
	ok "graph: SHA-256s as sha256sum's: plain file, .gz and standard input"
else
	bad "graph: SHA-256s '$got', sha256sum: plain $sp, .gz $sz"
fi
# The report's peak time is ns since the trace's zero: ts * 1000.
check_view graph g.json gc.json
# Lane names, sort metadata in lane order, no stream row left named.
jq -r '.traceEvents[] | select(.ph == "M" and .pid == 0 and
    (.tid | type) == "number" and .tid > 1000000000)
    | "\(.name)\t\(.tid)\t\(.args.name // .args.sort_index)"' gc.json |
    sort -t '	' -k2,2n -k1,1 >meta.txt
if awk -F'\t' -v n="$tpeak" '
    $1 == "thread_name" { k++; if ($3 != "GPU lane " ($2 - 1000000000) " (synthetic)") bad = 1 }
    $1 == "thread_sort_index" { s++; if ($3 != $2 - 1000000000) bad = 1 }
    END { exit !(k == n && s == n && !bad) }' meta.txt; then
	ok "graph: lanes named 'GPU lane K (synthetic)', sort index K"
else
	bad "graph: lane metadata: $(head -4 meta.txt)"
fi
left=$(jq '[.traceEvents[] | select(.ph == "M" and .pid == 0 and .name == "thread_name" and (.args.name | startswith("stream")))] | length' gc.json)
retired=$(jq '.retired | length' gc.json.compact.json)
if [ "$left" -eq 0 ] && [ "$retired" -eq $((2 * nstreams)) ]; then
	ok "graph: $nstreams stream rows' thread_name and sort index retired into the report"
else
	bad "graph: $left stream names left, $retired retired"
fi
check_restore graph g.json gc.json
# Scopes: the ProfilerStep gpu_user_annotations in the GPU scopes process.
s=$(jq -c '[.traceEvents[] | select(.cat == "gpu_user_annotation") | .pid] | unique' gc.json)
n=$(jq -c '[.traceEvents[] | select(.ph == "M" and .name == "process_name" and .args.name == "GPU scopes") | .pid]' gc.json)
if [ "$s" = "[1000000000]" ] && [ "$n" = "[1000000000]" ]; then
	ok "graph: scopes in the process 'GPU scopes'"
else
	bad "graph: scopes on pids $s, GPU scopes process $n"
fi

# Idempotence: a compact view compacted again is the same file.
if run kt-compact-lanes -n 64 gc.json -o gcc.json 2>/dev/null && cmp -s gc.json gcc.json; then
	ok "idempotent: compacting a compact view changes nothing"
else
	bad "idempotent: the second compaction differs"
fi
check_restore idempotent-restore gc.json gcc.json gcc.json.compact.json

# The refusal: one lane fewer than the peak.
rm -f gr.json
run kt-compact-lanes -n $((tpeak - 1)) g.json -o gr.json 2>rerr
rc=$?
tsus=$(awk -v n="$tpeakns" 'BEGIN { printf "%d.%03d", n / 1000, n % 1000 }')
tsus=$(echo "$tsus" | sed 's/\.\{0,1\}0*$//')
if [ "$rc" -eq 2 ] && [ ! -e gr.json ] && [ ! -e gr.json.compact.json ] &&
    grep -q "pid 0 needs $tpeak GPU lanes, more than --max-gpu-lanes $((tpeak - 1)): $tpeak activities run at once at ts $tsus, on streams " rerr; then
	ok "refuse: exit 2 above --max-gpu-lanes, says how many, when and where"
else
	bad "refuse: exit $rc, $(cat rerr), want ts $tsus"
fi
# The default is 10.
run kt-compact-lanes g.json >/dev/null 2>rerr
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'more than --max-gpu-lanes 10' rerr; then
	ok "refuse: the default is 10 lanes"
else
	bad "refuse: default: exit $rc, $(cat rerr)"
fi

# Standard input, no -o: no report (a note says so); the same events.
run kt-compact-lanes -n 64 <g.json >gs.json 2>serr
if [ "$(jq -c '.traceEvents' gs.json)" = "$(jq -c '.traceEvents' gc.json)" ] &&
    grep -q 'no report' serr; then
	ok "stdin: the same events; a note that there is no report"
else
	bad "stdin: $(head -2 serr)"
fi

# --- --group on an eager trace: compute, NCCL and copies apart. ---
"$ktgen" --steps 3 --layers 4 -o e.json
run kt-compact-lanes --group e.json -o eg.json 2>/dev/null
jq -r '(.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .pid == 0) | "N\t\(.tid)\t\(.args.name)"),
    (.traceEvents[] | select(.ph == "X" and .pid == 0 and (.tid | type) == "number" and .tid > 1000000000)
    | "E\t\(.tid)\t\(.cat)\t\(.name)")' eg.json >eg.txt
if awk -F'\t' '
    $1 == "N" { g = $3; sub(/.*; /, "", g); sub(/\)$/, "", g); grp[$2] = g; next }
    { c = $3 == "gpu_memcpy" || $3 == "gpu_memset" ? "copies" :
          tolower($4) ~ /nccl/ ? "communication" : "compute"
      if (grp[$2] != c) { print "lane", $2, grp[$2], "holds", c, $4; bad = 1 }
      seen[c] = 1 }
    END { exit !(!bad && seen["copies"] && seen["communication"] && seen["compute"]) }' eg.txt; then
	ok "group: communication, copies and compute on lanes of their own"
else
	bad "group: $(awk -F'\t' '$1 == "N"' eg.txt | head -5)"
fi
check_view group e.json eg.json
check_restore group e.json eg.json
# The groups' lanes together still respect N.
run kt-compact-lanes --group -n 2 e.json >/dev/null 2>rerr
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'needs 3 GPU lanes (compute 1, communication 1, copies 1)' rerr; then
	ok "group: the groups' lanes count together against --max-gpu-lanes"
else
	bad "group: -n 2: exit $rc, $(cat rerr)"
fi

# The groups come from the library's buckets (kt-bucket's default rules):
# MoE dispatch and combine kernels and an escaped name are communication,
# a gemm is compute, Collective name args make a collective.
cat >gr.json <<'EOF'
{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7, "ts": 0, "dur": 10},
{"ph": "X", "cat": "kernel", "name": "void dispatch<float>(float*)", "pid": 0, "tid": 8, "ts": 0, "dur": 10},
{"ph": "X", "cat": "kernel", "name": "combine_kernel", "pid": 0, "tid": 9, "ts": 0, "dur": 10},
{"ph": "X", "cat": "kernel", "name": "my\u005fall\u005freduce", "pid": 0, "tid": 10, "ts": 0, "dur": 10},
{"ph": "X", "cat": "kernel", "name": "custom", "pid": 0, "tid": 11, "ts": 0, "dur": 10, "args": {"Collective name": "all_gather"}},
{"ph": "X", "cat": "kernel", "name": "dispatcher_loop", "pid": 0, "tid": 12, "ts": 0, "dur": 10},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 13, "ts": 0, "dur": 10}
]}
EOF
r=$(run kt-compact-lanes --group gr.json -o grc.json 2>/dev/null &&
    jq -c '.devices[0].laneGroups' grc.json.compact.json)
if [ "$r" = '{"compute":2,"communication":4,"copies":1}' ]; then
	ok "group: kt-bucket's communication bucket and Collective name args"
else
	bad "group: lane groups $r"
fi
check_restore group-buckets gr.json grc.json

# --- Layer guides (kt-layer-track) stay as they are, never twice. ---
if command -v kt-layer-track >/dev/null 2>&1 &&
    run kt-layer-track -a vectorized_layer_norm_kernel -n 12 g.json -o lg.json 2>/dev/null; then
	run kt-compact-lanes -n 64 lg.json -o lgc.json 2>/dev/null
	a=$(jq -c '[.traceEvents[] | select(.cat == "layer_guide" or (.ph == "M" and ((.args.name // "") | tostring | startswith("Layer guide"))))]' lg.json)
	b=$(jq -c '[.traceEvents[] | select(.cat == "layer_guide" or (.ph == "M" and ((.args.name // "") | tostring | startswith("Layer guide"))))]' lgc.json)
	if [ "$a" = "$b" ] && [ "$a" != "[]" ]; then
		ok "guides: layer guide rows untouched and not duplicated"
	else
		bad "guides: the layer guide rows changed"
	fi
	check_restore guides lg.json lgc.json
	# The guide rows are drawn above the lanes: on every pid, each lane's
	# thread_sort_index is larger than every guide row's (both viewers
	# order a process's rows by it).
	order=$(jq -r '[.traceEvents[] | select(.ph == "M")] as $m |
	    [$m[] | select(.name == "thread_name") | {k: "\(.pid) \(.tid)", n: (.args.name | tostring)}] as $names |
	    [$m[] | select(.name == "thread_sort_index") | {k: "\(.pid) \(.tid)", p: .pid, s: .args.sort_index}] as $sorts |
	    [$sorts[] | . as $x | ($names[] | select(.k == $x.k) | .n) as $n |
	        {p: $x.p, s: $x.s, g: ($n | startswith("Layer guide")), l: ($n | startswith("GPU lane "))}] |
	    group_by(.p) | map(select(any(.g) and any(.l))) |
	    if length == 0 then "none" else
	    map(([.[] | select(.g) | .s] | max) < ([.[] | select(.l) | .s] | min)) | all | tostring end' lgc.json)
	if [ "$order" = true ]; then
		ok "guides: guide rows sort above the lanes"
	else
		bad "guides: guide rows do not sort above the lanes ($order)"
	fi
	# The guided compact view compacts to itself.
	if run kt-compact-lanes -n 64 lgc.json -o lgcc.json 2>/dev/null &&
	    cmp -s lgc.json lgcc.json; then
		ok "guides: a guided compact view compacts to itself"
	else
		bad "guides: compacting a guided compact view changed it"
	fi
else
	skip "guides: no kt-layer-track, or it failed on g.json"
fi

# --- A hand-written trace: args absent, null and empty; flow kinds. ---
cat >h.json <<'EOF'
{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 100, "tid": 100, "ts": 1.5, "dur": 50},
{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 10, "dur": 10},
{"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 10, "cat": "ac2g", "name": "ac2g", "bp": "e"},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 8, "ts": 12, "dur": 10, "args": null},
{"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 9, "ts": 20, "dur": 5, "args": {}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 9, "ts": 30.25, "dur": 1.5, "args": { "stream": 9 }},
{"ph": "X", "cat": "gpu_user_annotation", "name": "a", "pid": 0, "tid": 7, "ts": 9.999, "dur": 12.002},
{"ph": "X", "cat": "gpu_user_annotation", "name": "b", "pid": 0, "tid": 8, "ts": 11.999, "dur": 12},
{"ph": "X", "cat": "gpu_user_annotation", "name": "b.1", "pid": 0, "tid": 8, "ts": 12, "dur": 3},
{"ph": "f", "id": 2, "pid": 0, "tid": 9, "ts": 30.25, "cat": "async", "name": "async", "bp": "e"},
{"ph": "s", "id": 3, "pid": 0, "tid": 99, "ts": 50, "cat": "fwdbwd", "name": "fwdbwd"},
{"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
{"name": "thread_name", "ph": "M", "pid": 0, "tid": 8, "args": {"name": "stream 8"}},
{"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": 8, "args": {"sort_index": 8}},
{"name": "thread_name", "ph": "M", "pid": 0, "tid": 9, "args": {"name": "stream 9"}}
], "after": [1, 2]}
EOF
if run kt-compact-lanes h.json -o hc.json 2>herr; then
	ok "hand: compacts"
else
	bad "hand: exit $?: $(cat herr)"
fi
check_view hand h.json hc.json
check_restore hand h.json hc.json
# a and b overlap partially (two rows); b.1 nests in b (the same row).
r=$(jq -c '[.traceEvents[] | select(.cat == "gpu_user_annotation") | [.name, .tid]]' hc.json)
if [ "$r" = '[["a",1],["b",2],["b.1",2]]' ]; then
	ok "hand: scopes: partial overlaps on two rows, nesting kept"
else
	bad "hand: scope rows $r"
fi
r=$(jq -c '[.traceEvents[] | select(.pid == 0 and .ph != "M") | [.name, .tid - 1000000000]]' hc.json)
if [ "$r" = '[["k1",1],["ac2g",1],["k2",2],["k3",1],["Memcpy HtoD",1],["async",1],["fwdbwd",-999999901]]' ]; then
	ok "hand: lowest free lane first, flows with their kernels, a flow of a row without activity stays"
else
	bad "hand: lanes $r"
fi
# A flow end that binds to nothing: refuse.
sed 's/"id": 2, "pid": 0, "tid": 9, "ts": 30.25/"id": 2, "pid": 0, "tid": 9, "ts": 40/' h.json >hf.json
rm -f hfc.json
run kt-compact-lanes hf.json -o hfc.json 2>rerr
rc=$?
if [ "$rc" -eq 2 ] && [ ! -e hfc.json ] && grep -q 'flow:9 .*belongs to no GPU activity' rerr; then
	ok "hand: refuses a flow end it cannot match"
else
	bad "hand: unmatched flow: exit $rc, $(cat rerr)"
fi
# Restore needs the report when metadata was retired; refuses another's.
mv hc.json.compact.json hc.report
run kt-compact-lanes --restore hc.json >/dev/null 2>rerr
rc=$?
run kt-compact-lanes --restore --report gc.json.compact.json hc.json >/dev/null 2>rerr2
rc2=$?
if [ "$rc" -eq 2 ] && grep -q 'give it with --report' rerr &&
    [ "$rc2" -eq 2 ] && grep -q 'another compact view' rerr2; then
	ok "restore: refuses without its report, and with another's"
else
	bad "restore: exit $rc ($(cat rerr)), $rc2 ($(cat rerr2))"
fi
check_restore hand-report h.json hc.json hc.report
run kt-compact-lanes --restore h.json >/dev/null 2>rerr
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'not a compact view' rerr; then
	ok "restore: refuses a trace that is not a compact view"
else
	bad "restore: not compact: exit $rc, $(cat rerr)"
fi
for a in "-n 0" "--max-gpu-lanes x" "--bogus" "--restore --group h.json"; do
	# shellcheck disable=SC2086
	run kt-compact-lanes $a h.json >/dev/null 2>rerr
	rc=$?
	if [ "$rc" -eq 2 ] && [ -s rerr ]; then
		ok "usage: '$a' is exit 2"
	else
		bad "usage: '$a': exit $rc"
	fi
done
run kt-compact-lanes h.json -o h.json >/dev/null 2>rerr
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'refusing to overwrite an input' rerr; then
	ok "usage: never overwrites its input"
else
	bad "usage: -o input: exit $rc"
fi

# --- String pids ("rank0"): they stay strings, through compact and restore. ---
cat >sp.json <<'EOF'
{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "op", "pid": "rank0", "tid": "main", "ts": 1, "dur": 50},
{"ph": "X", "cat": "kernel", "name": "k1", "pid": "rank0 gpu", "tid": 7, "ts": 10, "dur": 10, "args": {"stream": 7}},
{"ph": "f", "id": 1, "pid": "rank0 gpu", "tid": 7, "ts": 10, "cat": "ac2g", "name": "ac2g", "bp": "e"},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": "rank0 gpu", "tid": "s8", "ts": 12, "dur": 10},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": "rank0 gpu", "tid": "s8", "ts": 30, "dur": 2, "args": null},
{"ph": "X", "cat": "gpu_user_annotation", "name": "a", "pid": "rank0 gpu", "tid": 7, "ts": 9, "dur": 14},
{"ph": "X", "cat": "kernel", "name": "k3", "pid": 1, "tid": 7, "ts": 11, "dur": 10},
{"name": "thread_name", "ph": "M", "pid": "rank0 gpu", "tid": 7, "args": {"name": "stream 7"}},
{"name": "thread_name", "ph": "M", "pid": "rank0 gpu", "tid": "s8", "args": {"name": "stream 8"}}
]}
EOF
if run kt-compact-lanes sp.json -o spc.json 2>sperr; then
	ok "string pids: compacts"
else
	bad "string pids: exit $?: $(cat sperr)"
fi
check_view string-pids sp.json spc.json
check_restore string-pids sp.json spc.json
# Every moved event's track keeps its pid as it was: a string stays one.
r=$(jq -c '[.traceEvents[] | select((.args | type) == "object" and
    (.args | has("_compact_gpu_track"))) | .args._compact_gpu_track.pid
    | type] | unique' spc.json)
run kt-compact-lanes --restore spc.json -o spr.json 2>/dev/null
a=$(jq -c '[.traceEvents[] | [.pid, (.pid | type)]]' sp.json)
b=$(jq -c '[.traceEvents[] | [.pid, (.pid | type)]]' spr.json 2>/dev/null)
if [ "$r" = '["number","string"]' ] && [ -n "$a" ] && [ "$a" = "$b" ]; then
	ok "string pids: every event's pid survives compact and restore, strings as strings"
else
	bad "string pids: track pid types $r; pids before $a, after $b"
fi
r=$(jq -c '[.traceEvents[] | select(.cat == "gpu_user_annotation") | .pid]' spc.json)
if [ "$r" = '["rank0 gpu scopes"]' ]; then
	ok "string pids: the scopes of a string pid get a string pid"
else
	bad "string pids: scopes pid $r"
fi

# --- No GPU activity: nothing moves, nothing leaks (check-asan). ---
cat >cpu.json <<'EOF'
{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 100, "tid": 100, "ts": 1.5, "dur": 50},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": 3, "dur": 5},
{"name": "thread_name", "ph": "M", "pid": 100, "tid": 100, "args": {"name": "main"}}
]}
EOF
rm -f cpuc.json cpuc.json.compact.json
run kt-compact-lanes cpu.json -o cpuc.json 2>cerr
rc=$?
if [ "$rc" -eq 0 ] && [ "$(events cpu.json)" = "$(events cpuc.json)" ] &&
    [ "$(jq -c '.devices' cpuc.json.compact.json)" = "[]" ]; then
	ok "cpu only: exit 0, the same events, no device"
else
	bad "cpu only: exit $rc, $(cat cerr)"
fi
check_restore cpu-only cpu.json cpuc.json

# --- The input shrinks while it is read: exit 2 and one line, no SIGBUS. ---
"$ktgen" -s 64M -o big.json
truncated=
for delay in 0.3 0.1 0.02; do
	cp big.json bt.json
	rm -f btc.json btc.json.compact.json
	run kt-compact-lanes -n 1000 bt.json -o btc.json 2>terr &
	pid=$!
	sleep "$delay"
	truncate -s 1000 bt.json
	wait "$pid"
	rc=$?
	if [ "$rc" -gt 128 ]; then
		bad "truncated input: killed by signal $((rc - 128)) (after ${delay}s)"
		truncated=signal
		break
	elif [ "$rc" -eq 0 ]; then
		continue	# done before the truncation: try sooner
	fi
	if [ "$rc" -eq 2 ] && [ "$(wc -l <terr)" -eq 1 ] &&
	    grep -q 'bt.json: the file changed while it was read' terr &&
	    [ ! -e btc.json ] && [ ! -e btc.json.compact.json ]; then
		ok "truncated input: exit 2, one line: $(cat terr)"
	else
		bad "truncated input: exit $rc, $(head -3 terr)"
	fi
	truncated=yes
	break
done
[ -n "$truncated" ] || skip "truncated input: every run finished before the truncation"
rm -f big.json bt.json btc.json btc.json.compact.json

# --- Real traces. ---
if ! have_shared; then
	skip "real: no $KT_SHARED"
	exit 0
fi
set -- "$KT_SHARED"/param/dlrm_kineto/worker*.json
if [ "$#" -eq 8 ] && run kt-rank-tag "$@" -o dlrm.json 2>/dev/null; then
	rows=$(jq '[.traceEvents[] | select(.cat == "kernel" or .cat == "gpu_memcpy" or .cat == "gpu_memset") | "\(.pid)/\(.tid)"] | unique | length' dlrm.json)
	if run kt-compact-lanes dlrm.json -o dlrmc.json 2>derr; then
		ok "dlrm: 8 ranks merged, $rows GPU rows, compacted with the default 10 lanes"
	else
		bad "dlrm: exit $?: $(head -3 derr)"
	fi
	want=$(peaks dlrm.json)
	got=$(lanes dlrmc.json)
	mx=$(echo "$got" | awk '$2 > m { m = $2 } END { print m + 0 }')
	if [ "$rows" -gt 10 ] && [ "$(echo "$got" | wc -l)" -eq 8 ] &&
	    [ "$got" = "$want" ] && [ "$mx" -le 10 ]; then
		ok "dlrm: per device lanes = peak (awk), at most $mx, over $rows rows in all"
	else
		bad "dlrm: $rows rows, lanes '$got', peaks '$want'"
	fi
	r=$(jq -c '[.devices[] | .rank] ' dlrmc.json.compact.json)
	if [ "$r" = "[0,1,2,3,4,5,6,7]" ]; then
		ok "dlrm: the report names each device's rank"
	else
		bad "dlrm: report ranks $r"
	fi
	check_view dlrm dlrm.json dlrmc.json
	check_restore dlrm dlrm.json dlrmc.json
	if run kt-compact-lanes dlrmc.json -o dlrmcc.json 2>/dev/null && cmp -s dlrmc.json dlrmcc.json; then
		ok "dlrm: idempotent"
	else
		bad "dlrm: the second compaction differs"
	fi
else
	skip "dlrm: the eight DLRM ranks are not there"
fi
for t in hta/trace_diff/test/test.json.gz hta/negative_queue_length_values_check/rank0.json.gz \
    kineto/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz \
    tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz \
    tracelens/torch_compile_triton/trace.json.gz; do
	f=$KT_SHARED/$t
	n=real:$(basename "$(dirname "$t")")/$(basename "$t")
	if [ ! -f "$f" ]; then
		skip "$n: not there"
		continue
	fi
	if ! run kt-compact-lanes -n 64 "$f" -o r.json 2>rerr; then
		bad "$n: exit $?: $(head -2 rerr)"
		continue
	fi
	if [ "$(lanes r.json)" = "$(peaks "$f")" ]; then
		ok "$n: lanes = peak per device ($(peaks "$f" | tr '\n' ' '))"
	else
		bad "$n: lanes '$(lanes r.json)', peaks '$(peaks "$f")'"
	fi
	check_view "$n" "$f" r.json
	check_restore "$n" "$f" r.json
done
# --- Every real trace compact-lanes accepts: the restore is the file. ---
# sha256sum of the restored file equals that of the source, decompressed
# by gzip (not kt); where the report says it cannot be (restore.exact
# false: a repair on reading changed an event's bytes), it says why, and
# so does the restore, on one line.
if [ -f "$KT_SHARED/INDEX.tsv" ]; then
	nx=0 nw=0
	for t in $(awk -F'\t' 'NR > 1 { print $1 }' "$KT_SHARED/INDEX.tsv"); do
		f=$KT_SHARED/$t
		[ -f "$f" ] || continue
		rm -f av.json av.json.compact.json ar.json
		run kt-compact-lanes -n 100000 "$f" -o av.json 2>/dev/null || continue
		run kt-compact-lanes --restore av.json -o ar.json 2>arerr
		rc=$?
		want=$(plain "$f" | sha256sum | cut -d' ' -f1)
		got=$(sha256sum <ar.json | cut -d' ' -f1)
		ex=$(jq -r .restore.exact av.json.compact.json)
		why=$(jq -r '.restore.why // empty' av.json.compact.json)
		if [ "$ex" = true ] && [ $rc -eq 0 ] && [ ! -s arerr ] &&
		    [ "$got" = "$want" ] &&
		    [ "$(jq -r .restore.traceSha256 av.json.compact.json)" = "$want" ]; then
			nx=$((nx + 1))
		elif [ "$ex" = false ] && [ -n "$why" ] && [ $rc -eq 0 ] &&
		    [ "$(wc -l <arerr)" -eq 1 ] &&
		    grep -qF "not its file's bytes: $why" arerr; then
			nw=$((nw + 1))
		else
			bad "real $t: restore (exit $rc, exact $ex, $(head -c 200 arerr)): SHA-256 $got, the source's $want"
		fi
	done
	if [ $nx -gt 50 ]; then
		ok "real traces: $nx restored byte for byte (sha256sum), $nw with the reason why not"
	else
		bad "real traces: only $nx restored byte for byte"
	fi
	# Standard input: the copy kt hashes is what is framed.
	f=$KT_SHARED/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz
	if [ -f "$f" ] && run kt-compact-lanes -o sv.json <"$f" 2>/dev/null &&
	    run kt-compact-lanes --restore sv.json 2>/dev/null | sha256sum | cut -d' ' -f1 >sv.got &&
	    [ "$(cat sv.got)" = "$(gzip -dc "$f" | sha256sum | cut -d' ' -f1)" ]; then
		ok "real: a gzip trace on standard input is restored byte for byte"
	else
		bad "real: standard input: the restore is not the source's bytes"
	fi
else
	skip "real traces: no $KT_SHARED/INDEX.tsv"
fi
