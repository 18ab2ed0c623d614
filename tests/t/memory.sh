# tests/t/memory.sh: kt-memory.  The generator's --truth-more memory row
# (peaks and their times, exact to the byte and ns) and jq, never kt,
# judge the figures:
#  - the table: peaks, their time and step, final allocated, capacity
#    from deviceProperties or --capacity-gb, headroom;
#  - --series: at most --points rows per device, the peak kept;
#  - --counters: every input event kept byte for byte, one C event per
#    instant with the instant's values, --drop-instants and the row ids;
#  - --svg: valid XML that rsvg-convert turns into a PNG;
#  - real traces: the kineto ResNet50 memory trace (Bytes only: allocated
#    is their running sum), dtu_mlops (CPU), nano-vllm (CUDA with
#    reserved and capacity), and a DLRM rank (no memory events);
#  - the errors.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

# col FILE NAME: the column NAME of the first data row of a TSV table.
col() {
	awk -F '\t' -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
	    NR == 2 { print $k; exit }' "$1"
}
# truth NAME: the column NAME of the truth's memory row.
truth() {
	awk -F '\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
	    $1 == "memory" { print $k }' x.tsv
}

"$gen" --steps 4 --layers 2 -x x.tsv -o g.json
run kt-memory g.json >t.tsv 2>err
ok_all=1
for c in peak_allocated peak_allocated_ns peak_reserved peak_reserved_ns; do
	[ "$(col t.tsv $c)" = "$(truth $c)" ] || { ok_all=0; bad "memory-truth: $c $(col t.tsv $c) != $(truth $c)"; }
done
[ "$(col t.tsv events)" = "$(truth events)" ] || { ok_all=0; bad "memory-truth: events"; }
[ "$(col t.tsv peak_allocated_step)" = "$(truth step)" ] || { ok_all=0; bad "memory-truth: step"; }
[ $ok_all = 1 ] && ok memory-truth

# Independent of the generator: jq over the instants.
jpa=$(jq '[.traceEvents[] | select(.name == "[memory]") | .args["Total Allocated"]] | max' g.json)
jfin=$(jq '[.traceEvents[] | select(.name == "[memory]")] | sort_by(.ts) | last | .args["Total Allocated"]' g.json)
jcap=$(jq '.deviceProperties[0].totalGlobalMem' g.json)
if [ "$(col t.tsv peak_allocated)" = "$jpa" ] && [ "$(col t.tsv final_allocated)" = "$jfin" ] &&
    [ "$(col t.tsv capacity)" = "$jcap" ] && [ "$(col t.tsv capacity_from)" = deviceProperties ] &&
    [ "$(col t.tsv headroom)" = $((jcap - $(truth peak_reserved))) ] &&
    [ "$(col t.tsv device)" = cuda:0 ] && [ "$(col t.tsv rank)" = 0 ]; then
	ok memory-jq
else
	bad "memory-jq: $(sed -n 2p t.tsv)"
fi

# --capacity-gb overrides deviceProperties: 10^9 bytes per GB.
run kt-memory --capacity-gb 79.5 g.json >c.tsv
if [ "$(col c.tsv capacity)" = 79500000000 ] && [ "$(col c.tsv capacity_from)" = --capacity-gb ] &&
    [ "$(col c.tsv headroom)" = $((79500000000 - $(truth peak_reserved))) ]; then
	ok memory-capacity-gb
else
	bad "memory-capacity-gb: $(sed -n 2p c.tsv)"
fi

# The same figures in every table form.
run kt-memory --json g.json >t.jsonl
run kt-memory --text g.json >t.txt
if [ "$(jq -r '.peak_allocated' t.jsonl)" = "$jpa" ] && [ "$(jq -r '.capacity' t.jsonl)" = "$jcap" ] &&
    [ "$(wc -l <t.txt)" -eq 2 ] && grep -q "$jpa" t.txt && head -n 1 t.txt | grep -q '^rank  device'; then
	ok memory-forms
else
	bad "memory-forms"
fi

# A trace without [memory] instants: one clear row, exit 0.
"$gen" --steps 2 --layers 1 --no-memory -o nomem.json
if run kt-memory nomem.json >n.tsv 2>n.err && [ "$(wc -l <n.tsv)" -eq 2 ] &&
    [ "$(col n.tsv device)" = "no memory events" ] && [ "$(col n.tsv events)" = 0 ] && [ ! -s n.err ]; then
	ok memory-none
else
	bad "memory-none: $(cat n.tsv n.err)"
fi

# --series: every sample with --points 0; at most N rows with the peak kept.
run kt-memory --series --points 0 g.json >s0.tsv
run kt-memory --series --points 20 g.json >s20.tsv
n0=$(($(wc -l <s0.tsv) - 1))
n20=$(($(wc -l <s20.tsv) - 1))
smax=$(awk -F '\t' 'NR > 1 && $4 > m { m = $4 } END { print m }' s20.tsv)
rmax=$(awk -F '\t' 'NR > 1 && $5 > m { m = $5 } END { print m }' s20.tsv)
sorted=$(awk -F '\t' 'NR > 2 && $3 < p { print "no" } { p = $3 }' s20.tsv)
if [ "$n0" = "$(truth events)" ] && [ "$n20" -le 20 ] && [ "$n20" -ge 2 ] && [ "$smax" = "$jpa" ] &&
    [ "$rmax" = "$(truth peak_reserved)" ] && [ -z "$sorted" ]; then
	ok memory-series
else
	bad "memory-series: $n0 $n20 $smax $rmax"
fi

# --counters: the input's events byte for byte, plus per instant one C
# event for each series (allocated, reserved, headroom), each series its
# own counter (chrome://tracing stacks the series of one counter) with
# one arg, bytes.
run kt-memory --counters -o cnt.json g.json
jq -c '.traceEvents[] | select(.cat != "kt_memory")' cnt.json | sort >kept
events g.json >orig
jq -c '[.traceEvents[] | select(.cat == "kt_memory")] | map([.ts, .ph, .name, (.args | keys), .args.bytes])' cnt.json >c1
jq -c --argjson cap "$jcap" '[.traceEvents[] | select(.name == "[memory]")] | sort_by(.ts) |
    map(.ts as $t | [["allocated", .args["Total Allocated"]], ["reserved", .args["Total Reserved"]],
        ["headroom", ($cap - .args["Total Reserved"])]][] |
        [$t, "C", "memory cuda:0 rank 0 \(.[0])", ["bytes"], .[1]])' g.json >c2
jq -S 'del(.traceEvents)' g.json >top1
jq -S 'del(.traceEvents)' cnt.json >top2
if cmp -s kept orig && cmp -s c1 c2 && [ "$(jq 'has("ktSourceIndex")' cnt.json)" = false ] &&
    cmp -s top1 top2; then
	ok memory-counters
else
	bad "memory-counters"
fi
# The raw bytes too: the input's event text is in the output unchanged.
grep -v kt_memory cnt.json | sed -n '/"traceEvents"/,$p' | sed 's/,$//' | sort >raw1
sed -n '/"traceEvents"/,$p' g.json | sed 's/,$//' | sort >raw2
if [ "$(grep -c '"name": "\[memory\]"' cnt.json)" = "$(truth events)" ] && cmp -s raw1 raw2; then
	ok memory-counters-raw
else
	bad "memory-counters-raw"
fi

# --drop-instants: no [memory] left; ktSourceIndex maps each kept event
# to its input row.
run kt-memory --counters --drop-instants -o drop.json g.json
nin=$(jq '.traceEvents | length' g.json)
if [ "$(jq '[.traceEvents[] | select(.name == "[memory]")] | length' drop.json)" = 0 ] &&
    [ "$(jq '(.traceEvents | length) == (.ktSourceIndex | length)' drop.json)" = true ] &&
    [ "$(jq --slurpfile g g.json '[.traceEvents as $e | .ktSourceIndex | to_entries[] |
        select(.value < ($g[0].traceEvents | length)) | $e[.key] == $g[0].traceEvents[.value]] | all' drop.json)" = true ] &&
    [ "$(jq --argjson n "$nin" '[.ktSourceIndex[] | select(. >= $n)] | length' drop.json)" = "$(jq '[.traceEvents[] | select(.cat == "kt_memory")] | length' drop.json)" ] &&
    [ "$(jq '[.traceEvents[] | select(.cat == "kt_memory")] | length' drop.json)" = $((3 * $(truth events))) ]; then
	ok memory-drop-instants
else
	bad "memory-drop-instants"
fi

# --svg: valid XML, curves, peak and capacity, rendered to a PNG.
run kt-memory --svg m.svg -o /dev/null g.json
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout m.svg 2>/dev/null && xml=1 || xml=0
else
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' m.svg 2>/dev/null && xml=1 || xml=0
fi
if [ $xml = 1 ] && [ "$(grep -c '<polyline' m.svg)" = 2 ] && grep -q 'capacity 79.20 GiB' m.svg &&
    grep -q 'peak allocated' m.svg && ! grep -q 'http://[^w]' m.svg && ! grep -q '<image' m.svg; then
	ok memory-svg
else
	bad "memory-svg: xml=$xml"
fi
if command -v rsvg-convert >/dev/null 2>&1; then
	if rsvg-convert -o m.png m.svg 2>/dev/null && [ "$(od -An -c -N4 m.png | tr -d ' ')" = '211PNG' ]; then
		ok memory-svg-png
	else
		bad "memory-svg-png"
	fi
else
	skip "memory-svg-png: no rsvg-convert (apt-get install librsvg2-bin)"
fi
run kt-memory --svg none.svg -o /dev/null nomem.json
if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' none.svg 2>/dev/null &&
    grep -q 'no memory events' none.svg; then
	ok memory-svg-none
else
	bad "memory-svg-none"
fi

# Two ranks merged by kt rank-tag: one row per rank, each with its truth.
"$gen" --steps 2 --layers 1 -r 0 -w 2 -x x0.tsv -o r0.json
"$gen" --steps 2 --layers 1 -r 1 -w 2 -x x1.tsv -o r1.json
run kt-rank-tag r0.json r1.json -o m.json 2>/dev/null
run kt-memory m.json >mr.tsv
awk -F '\t' '$1 == "memory" { print FILENAME == "x0.tsv" ? 0 : 1, $11, $12, $2, $13, $14, $15 }' x0.tsv x1.tsv >want
awk -F '\t' 'NR > 1 { print $1, $5, $6, $7, $8, $9, $3 }' mr.tsv >have
if cmp -s want have && [ "$(awk -F '\t' 'NR > 1 { print $2 }' mr.tsv | sort -u)" = cuda:0 ]; then
	ok memory-ranks
else
	bad "memory-ranks: $(diff want have | head -4)"
fi

# Standard input, and a gzip input.
gzip -c g.json >g.json.gz
if run kt-memory <g.json | cmp -s - t.tsv && run kt-memory g.json.gz | cmp -s - t.tsv; then
	ok memory-stdin-gz
else
	bad "memory-stdin-gz"
fi

# Errors: exit 2 and one line.
e=0
for args in "--capacity-gb x g.json" "--capacity-gb 0 g.json" "--capacity-gb 1.  g.json" \
    "--drop-instants g.json" "--counters --series g.json" "nosuch.json" "g.json nomem.json" \
    "--points -1 g.json" "-o g.json g.json" "--bogus g.json"; do
	# shellcheck disable=SC2086
	run kt-memory $args >/dev/null 2>e.err
	rc=$?
	if [ $rc -ne 2 ] || [ "$(wc -l <e.err)" -lt 1 ] || ! grep -q '^kt-memory: \|^usage' e.err; then
		e=1
		bad "memory-errors: $args: exit $rc"
	fi
done
[ $e = 0 ] && ok memory-errors
if run kt-memory --counters -o /dev/full g.json 2>/dev/null; then bad "memory-dev-full"; else ok memory-dev-full; fi

need_shared memory-real
# Kineto ResNet50 (2021): Bytes only.  Allocated is the running sum of
# Bytes in input order per device; jq computes it the same way.
r50=$S/kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
if [ -f "$r50" ]; then
	run kt-memory "$r50" >r50.tsv
	gzip -dc "$r50" | jq -c '[.traceEvents[] | select(.name == "[memory]" and .args["Device Type"] == 1)] |
	    [length, (reduce .[].args.Bytes as $b ({s: 0, m: null}; .s += $b | .m = ([.m, .s] | max)) | .m)]' >r50.jq
	row=$(awk -F '\t' '$2 == "cuda:0" { printf "[%s,%s]", $3, $5 }' r50.tsv)
	cpu=$(awk -F '\t' '$2 == "cpu" { print $3 }' r50.tsv)
	if [ "$row" = "$(cat r50.jq)" ] && [ "$cpu" = 4618 ] &&
	    awk -F '\t' '$2 == "cuda:0" && $4 == "bytes-sum" && $8 == "unknown" && $12 == 34084028416 && $14 == "unknown" { f = 1 } END { exit !f }' r50.tsv; then
		ok memory-real-resnet50
	else
		bad "memory-real-resnet50: $row != $(cat r50.jq)"
	fi
else
	skip "memory-real-resnet50: not in $S"
fi
# dtu_mlops: CPU only, Total Allocated given; no capacity.
f=$S/dtu_mlops/trace.json
if [ -f "$f" ]; then
	run kt-memory "$f" >dtu.tsv
	m=$(jq '[.traceEvents[] | select(.name == "[memory]") | .args["Total Allocated"]] | max' "$f")
	if [ "$(col dtu.tsv device)" = cpu ] && [ "$(col dtu.tsv peak_allocated)" = "$m" ] &&
	    [ "$(col dtu.tsv headroom)" = unknown ] && [ "$(col dtu.tsv events)" = 496 ]; then
		ok memory-real-cpu
	else
		bad "memory-real-cpu"
	fi
fi
# nano-vllm: CUDA with Total Reserved and deviceProperties.
f=$S/nano-vllm/profile_results/decode_gpu_0.json
if [ -f "$f" ]; then
	run kt-memory "$f" >nv.tsv
	want=$(jq -r '([.traceEvents[] | select(.name == "[memory]" and .args["Device Type"] == 1) | .args["Total Reserved"]] | max) as $r
	    | (.deviceProperties[0].totalGlobalMem) as $c | "\($c)\t\($c - $r)"' "$f")
	got=$(awk -F '\t' '$2 == "cuda:0" { print $12 "\t" $14 }' nv.tsv)
	if [ "$got" = "$want" ]; then ok memory-real-headroom; else bad "memory-real-headroom: $got != $want"; fi
fi
# A DLRM rank: no memory events.
f=$S/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json
if [ -f "$f" ]; then
	if run kt-memory "$f" >dl.tsv && [ "$(col dl.tsv device)" = "no memory events" ]; then
		ok memory-real-none
	else
		bad "memory-real-none"
	fi
fi
