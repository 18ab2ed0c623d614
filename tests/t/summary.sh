# tests/t/summary.sh: kt-summary, the inventory of a trace.  Judged by
# what kt's code does not compute:
# - the generator's parameters and truth (ktgen --steps, --rank/--world,
#   --graph --streams, --no-python, --no-memory; the truth file's step
#   rows): step count, numbers and durations, the rank and world, the
#   streams, the capabilities and the views they allow;
# - a Python oracle (the json module, below, from kt-summary(1)'s
#   definitions) counting events per kind and phase, the time span,
#   steps, streams and capabilities, on generated traces and on real
#   traces of ../shared (with memory, python_function, NCCL kernels, a
#   gzip file, the array form);
# - merged ranks (kt rank-tag of two generated ranks): a row per rank;
# - the damaged traces: exit 2, or exit 0 with the repair reported;
# - stdin, -o, --json lines (jq), usage errors, and memory that does not
#   grow with the events.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

# val FILE SECTION ITEM: the value cell of that row of a summary TSV.
val() {
	awk -F '\t' -v s="$2" -v i="$3" '$1 == s && $2 == i { print $3; exit }' "$1"
}
# note FILE SECTION ITEM: the note cell.
note() {
	awk -F '\t' -v s="$2" -v i="$3" '$1 == s && $2 == i { print $4; exit }' "$1"
}

# The oracle: the rows of kt-summary(1) it can recompute, as
# "section<TAB>item<TAB>value" lines (stream items without the rank),
# from the JSON alone.
{
	py_trace_head
	cat <<'EOF'
evs = d if isinstance(d, list) else d.get('traceEvents', [])
cats = {'kernel': 'kernel', 'cpu_op': 'cpu_op', 'cuda_runtime': 'cuda_runtime',
    'python_function': 'python_function', 'user_annotation': 'user_annotation',
    'gpu_user_annotation': 'gpu_user_annotation', 'cuda_driver': 'cuda_driver',
    'gpu_memcpy': 'gpu_memcpy', 'gpu_memset': 'gpu_memset', 'Kernel': 'kernel',
    'Operator': 'cpu_op', 'Runtime': 'cuda_runtime', 'Memcpy': 'gpu_memcpy',
    'Memset': 'gpu_memset'}
kinds = ['other', 'cpu_op', 'user_annotation', 'step', 'gpu_user_annotation',
    'cuda_runtime', 'cuda_driver', 'kernel', 'gpu_memcpy', 'gpu_memset',
    'python_function', 'memory', 'flow', 'metadata', 'counter', 'instant']
def num(x):
    return (isinstance(x, int) and not isinstance(x, bool)) or isinstance(x, Decimal)
def intval(x):
    if isinstance(x, bool): return None
    if isinstance(x, int): return x
    if isinstance(x, str):
        try: return int(x)
        except ValueError: return None
    return None
def kind(e):
    ph = e.get('ph')
    if ph == 'M': return 'metadata'
    if ph == 'C': return 'counter'
    if ph in ('s', 't', 'f'): return 'flow'
    if ph in ('i', 'I'):
        return 'memory' if e.get('name') == '[memory]' else 'instant'
    c = e.get('cat')
    k = cats.get(c, 'other') if isinstance(c, str) else 'other'
    n = e.get('name')
    if (k in ('user_annotation', 'cpu_op') or (k == 'other' and 'cat' not in e)) \
            and isinstance(n, str) and n.startswith('ProfilerStep#'):
        return 'step'
    return k
count = dict((k, 0) for k in kinds)
comp = dict((k, 0) for k in kinds)
dsum = dict((k, 0) for k in kinds)
phs = {}
first = last = None
steps = []
streams = {}
has = dict((k, 0) for k in ('memory', 'python_stack', 'call_stack', 'flows',
    'ac2g', 'input_shapes', 'cuda_graphs'))
for e in evs:
    k = kind(e)
    count[k] += 1
    ph = e.get('ph')
    p = ph[0] if isinstance(ph, str) and ph else '-'
    phs[p] = phs.get(p, 0) + 1
    x = ph == 'X'
    ts, dur = e.get('ts'), e.get('dur')
    args = e.get('args') if isinstance(e.get('args'), dict) else {}
    if x and num(dur):
        comp[k] += 1
        if ns(dur) > 0: dsum[k] += ns(dur)
    if num(ts) and ph != 'M':
        end = ns(ts) + (ns(dur) if x and num(dur) and ns(dur) > 0 else 0)
        first = ns(ts) if first is None else min(first, ns(ts))
        last = end if last is None else max(last, end)
    if k in ('kernel', 'gpu_memcpy', 'gpu_memset') and x and num(ts):
        dev = intval(args['device']) if 'device' in args else None
        if dev is None: dev = intval(e.get('pid'))
        st = intval(args['stream']) if 'stream' in args else None
        if st is None: st = intval(e.get('tid'))
        key = '%s:%s' % (-1 if dev is None else dev, -1 if st is None else st)
        streams[key] = streams.get(key, 0) + 1
        if k == 'kernel' and 'graph id' in args: has['cuda_graphs'] += 1
    if k in ('cuda_runtime', 'cuda_driver') and x and num(ts) and \
            e.get('name') in ('cudaGraphLaunch', 'hipGraphLaunch'):
        has['cuda_graphs'] += 1
    if k == 'step' and x and num(ts) and num(dur):
        n = e['name'][13:]
        steps.append((int(n) if n.isdigit() else None, ns(dur)))
    if k == 'cpu_op' and x and num(ts):
        has['call_stack'] += 'Call stack' in args
        has['input_shapes'] += 'Input Dims' in args
    if k == 'flow' and e.get('cat') == 'ac2g': has['ac2g'] += 1
has['memory'] = count['memory']
has['python_stack'] = count['python_function']
has['flows'] = count['flow']
out = [('trace', 'events', len(evs))]
out.append(('trace', 'first_ts_ns', '-' if first is None else first))
out.append(('trace', 'last_end_ns', '-' if last is None else last))
out.append(('trace', 'span_ns', '-' if first is None else last - first))
out.append(('trace', 'streams', len(streams)))
for k in kinds:
    out.append(('kind', k, count[k]))
    out.append(('kindnote', k, 'complete=%d dur_ns=%d' % (comp[k], dsum[k]) if comp[k] else ''))
for p in sorted(phs): out.append(('ph', p, phs[p]))
for s in sorted(streams): out.append(('stream', s, streams[s]))
nums = [n for n, _ in steps if n is not None]
durs = sorted(t for _, t in steps)
out.append(('step', 'count', len(steps)))
out.append(('step', 'first', min(nums) if nums else '-'))
out.append(('step', 'last', max(nums) if nums else '-'))
out.append(('step', 'dur_min_ns', durs[0] if durs else '-'))
out.append(('step', 'dur_median_ns', durs[(len(durs) - 1) // 2] if durs else '-'))
out.append(('step', 'dur_max_ns', durs[-1] if durs else '-'))
out.append(('has', 'steps', len(steps)))
for h in sorted(has): out.append(('has', h, has[h]))
for r in sorted(out, key=lambda r: (r[0], r[1])):
    print('%s\t%s\t%s' % r)
EOF
} >oracle.py

# mine FILE: the same rows of kt's summary TSV.
mine() {
	awk -F '\t' 'BEGIN { OFS = "\t" } NR == 1 { next }
	$1 == "trace" && $2 ~ /^(events|first_ts_ns|last_end_ns|span_ns|streams)$/ { print $1, $2, $3 }
	$1 == "kind" { print $1, $2, $3; print "kindnote", $2, $4 }
	$1 == "ph" || $1 == "step" { print $1, $2, $3 }
	$1 == "stream" { sub(/^[^:]*:/, "", $2); print $1, $2, $3 }
	$1 == "has" && ($2 ~ /^(steps|memory|python_stack|call_stack|flows|ac2g|input_shapes|cuda_graphs)$/) { print $1, $2, $3 }' "$1" |
	    sort -t "$(printf '\t')" -k1,1 -k2,2
}

# judge NAME TRACE: kt-summary against the oracle, every row.
judge() {
	if ! run kt-summary "$2" >"$1.tsv" 2>"$1.err"; then
		bad "oracle $1: kt-summary failed: $(head -1 "$1.err")"
		return
	fi
	if ! python3 oracle.py "$2" | sort -t "$(printf '\t')" -k1,1 -k2,2 \
	    >"$1.want"; then
		bad "oracle $1: the oracle failed"
		return
	fi
	mine "$1.tsv" >"$1.got"
	if cmp -s "$1.want" "$1.got"; then
		ok "oracle $1: $(wc -l <"$1.want") rows equal ($(val "$1.tsv" trace events) events)"
	else
		bad "oracle $1: $(diff "$1.want" "$1.got" | grep '^[<>]' | head -4 | tr '\n\t' '| ')"
	fi
}

if ! command -v python3 >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
	skip "summary: python3 or jq not installed"
	exit 0
fi

# 1. The generator's parameters.
"$gen" --steps 3 --layers 2 --rank 1 --world 4 -t eager.truth -o eager.json
"$gen" --graph --streams 8 --steps 2 --layers 2 -o graph.json
"$gen" --no-python --no-memory --steps 2 --layers 2 -o bare.json
run kt-summary eager.json >eager.tsv 2>eager.err
rc=$?
steps=$(awk -F '\t' '$1 == "step"' eager.truth | wc -l | tr -d ' ')
first=$(awk -F '\t' '$1 == "step" { sub(/.*#/, "", $16); print $16; exit }' eager.truth)
last=$(awk -F '\t' '$1 == "step" { sub(/.*#/, "", $16); n = $16 } END { print n }' eager.truth)
durs=$(awk -F '\t' '$1 == "step" { print $9 - $8 }' eager.truth | sort -n | tr '\n' ' ')
got="$(val eager.tsv step count) $(val eager.tsv step first) $(val eager.tsv step last)"
if [ $rc -eq 0 ] && [ "$got" = "3 $first $last" ] && [ "$steps" = 3 ]; then
	ok "ktgen --steps 3: 3 steps, numbers $first to $last as the truth's"
else
	bad "ktgen steps: rc $rc, got '$got', truth $steps steps $first-$last"
fi
set -- $durs
got="$(val eager.tsv step dur_min_ns) $(val eager.tsv step dur_median_ns) $(val eager.tsv step dur_max_ns)"
if [ "$got" = "$1 $2 $3" ]; then
	ok "ktgen steps: min, median, max duration as the truth's ProfilerStep spans"
else
	bad "ktgen step durations: got '$got', truth '$1 $2 $3'"
fi
got="$(val eager.tsv trace rank) $(val eager.tsv trace world) $(val eager.tsv trace ranks)"
if [ "$got" = "1 4 1" ] && [ "$(val eager.tsv rank 1)" = "$(val eager.tsv trace events)" ]; then
	ok "ktgen --rank 1 --world 4: rank 1 of 4, every event on it"
else
	bad "ktgen rank: got '$got'"
fi
# Eager streams: 7 compute, 20 NCCL, 13 copies (tests/ktgen.md).
got=$(awk -F '\t' '$1 == "stream" { print $2 }' eager.tsv | sort | tr '\n' ' ')
if [ "$got" = "1:0:13 1:0:20 1:0:7 " ]; then
	ok "ktgen eager: streams 7, 13, 20 of GPU 0"
else
	bad "ktgen eager streams: $got"
fi
run kt-summary graph.json >graph.tsv 2>/dev/null
# Graph streams 7+4k, k < 8.
got=$(awk -F '\t' '$1 == "stream" { sub(/.*:/, "", $2); print $2 }' graph.tsv | sort -n | tr '\n' ' ')
if [ "$got" = "7 11 15 19 23 27 31 35 " ] && [ "$(val graph.tsv trace streams)" = 8 ]; then
	ok "ktgen --graph --streams 8: the 8 streams 7+4k"
else
	bad "ktgen graph streams: $got"
fi
launches=$(jq '[.traceEvents[] | select(.name == "cudaGraphLaunch")] | length' graph.json)
gk=$(jq '[.traceEvents[] | select(.cat == "kernel" and .args["graph id"] != null)] | length' graph.json)
if [ "$(val graph.tsv has cuda_graphs)" = $((launches + gk)) ] && [ "$launches" = 2 ] &&
    [ "$(val eager.tsv has cuda_graphs)" = 0 ]; then
	ok "ktgen --graph: CUDA graphs found ($launches launches, $gk graph kernels), none in eager"
else
	bad "ktgen graph: has cuda_graphs $(val graph.tsv has cuda_graphs), jq $launches + $gk"
fi
run kt-summary bare.json >bare.tsv 2>/dev/null
got="$(val bare.tsv has python_stack) $(val bare.tsv has memory) $(val bare.tsv view correlate) $(val bare.tsv view memory) $(val bare.tsv view views)"
if [ "$got" = "0 0 partial no partial" ] &&
    note bare.tsv view correlate | grep -q 'no file:line' &&
    [ "$(val eager.tsv view correlate)" = yes ] && [ "$(val eager.tsv view memory)" = yes ]; then
	ok "ktgen --no-python --no-memory: no stacks, no memory; correlate partial, memory no"
else
	bad "ktgen bare: got '$got', eager correlate $(val eager.tsv view correlate)"
fi
allyes=1
for v in bucket gaps decompose overlap memory views correlate layer-track compact-lanes ops; do
	if [ "$(val eager.tsv view $v)" != yes ]; then
		allyes=0
		bad "ktgen eager: view $v $(val eager.tsv view $v): $(note eager.tsv view $v)"
	fi
done
[ $allyes -eq 1 ] && ok "ktgen eager: every view yes (steps, memory, stacks, NCCL with Seq)"
for n in eager graph bare; do
	judge "ktgen-$n" "$n.json"
done

# 2. Merged ranks: a row per rank, a device per rank.
"$gen" --steps 2 --layers 2 --rank 0 --world 2 -o m0.json
"$gen" --steps 2 --layers 2 --rank 1 --world 2 -o m1.json
if run kt-rank-tag m0.json m1.json -o merged.json 2>/dev/null &&
    run kt-summary merged.json >merged.tsv 2>/dev/null; then
	n0=$(jq '.traceEvents | length' m0.json)
	n1=$(jq '.traceEvents | length' m1.json)
	# An event's rank: args.rank, else its pid's (flows carry no args).
	pr="$JQ_PIDRANK"' | [.traceEvents[] | select((.args.rank // $pr[.pid | tostring])'
	r0=$(jq "$pr == 0)] | length" merged.json)
	r1=$(jq "$pr == 1)] | length" merged.json)
	got="$(val merged.tsv trace ranks) $(val merged.tsv trace devices) $(val merged.tsv step count)"
	if [ "$got" = "2 2 4" ] && [ "$(val merged.tsv rank 0)" = "$r0" ] &&
	    [ "$(val merged.tsv rank 1)" = "$r1" ] && [ "$r0" -gt 0 ] &&
	    awk -F '\t' '$1 == "device" { print $2 }' merged.tsv | tr '\n' ' ' |
	    grep -qx '0:0 1:0 '; then
		ok "merged ranks: ranks 0 and 1 ($r0, $r1 events of $n0, $n1), a device each, 4 steps"
	else
		bad "merged ranks: got '$got', rank rows $(val merged.tsv rank 0)/$r0 $(val merged.tsv rank 1)/$r1"
	fi
else
	bad "merged ranks: kt-rank-tag or kt-summary failed"
fi

# 3. Input and output manners.
gzip -c eager.json >eager.json.gz
run kt-summary <eager.json >stdin.tsv 2>/dev/null
run kt-summary eager.json.gz >gz.tsv 2>/dev/null
if [ "$(val stdin.tsv trace name)" = "<stdin>" ] &&
    diff stdin.tsv eager.tsv | grep '^[<>]' | grep -vq '	name	' ; then
	bad "stdin: differs from the file: $(diff stdin.tsv eager.tsv | head -3 | tr '\n' '|')"
elif [ "$(val stdin.tsv trace name)" = "<stdin>" ] && [ "$(wc -l <stdin.tsv)" -gt 50 ]; then
	ok "stdin: the same rows as the file, named <stdin>"
else
	bad "stdin: name '$(val stdin.tsv trace name)'"
fi
if [ "$(grep -v '	name	' gz.tsv | cksum)" = "$(grep -v '	name	' eager.tsv | cksum)" ]; then
	ok "gzip input: the same rows"
else
	bad "gzip input differs"
fi
if run kt-normalize --tsv eager.json >events.tsv 2>/dev/null &&
    run kt-summary events.tsv >fromtsv.tsv 2>/dev/null &&
    [ "$(val fromtsv.tsv trace form)" = tsv ] &&
    [ "$(grep -Ev '	(name|form)	' fromtsv.tsv | cksum)" = \
    "$(grep -Ev '	(name|form)	' eager.tsv | cksum)" ]; then
	ok "the TSV event form: the same rows as its JSON"
else
	bad "the TSV event form: $(diff eager.tsv fromtsv.tsv | head -4 | tr '\n' '|')"
fi
if run kt-summary -o out.tsv eager.json 2>/dev/null && cmp -s out.tsv eager.tsv; then
	ok "-o: the same table, written to the file"
else
	bad "-o: differs"
fi
cp graph.json g2.json
tar cf two.tar eager.json g2.json
run kt-summary two.tar >tar.out 2>tar.err
rc=$?
run kt-summary -m 'g2*' two.tar >tar.tsv 2>/dev/null
if [ $rc -eq 2 ] && [ ! -s tar.out ] && grep -q 'member' tar.err &&
    [ "$(val tar.tsv trace events)" = "$(jq '.traceEvents | length' graph.json)" ]; then
	ok "archive: two traces exit 2; -m takes one"
else
	bad "archive: rc $rc, -m events $(val tar.tsv trace events)"
fi
run kt-summary -j eager.json >json.txt 2>/dev/null
if jq -e -c 'select(.section and .item and has("value") and has("note"))' json.txt >json.ok 2>/dev/null &&
    [ "$(wc -l <json.ok)" -eq $(($(wc -l <eager.tsv) - 1)) ] &&
    [ "$(jq -r 'select(.section == "step" and .item == "count") | .value' json.txt)" = 3 ]; then
	ok "--json: $(wc -l <json.ok) lines, each an object with the four columns"
else
	bad "--json: $(head -c 200 json.txt)"
fi
run kt-summary -T eager.json >text.txt 2>/dev/null
if head -1 text.txt | grep -q '^section  *item  *value  *note'; then
	ok "-T: an aligned text table"
else
	bad "-T: $(head -1 text.txt)"
fi
run kt-summary --bogus eager.json >bad.out 2>bad.err
rc=$?
if [ $rc -eq 2 ] && [ ! -s bad.out ] && grep -q '^usage: kt-summary' bad.err; then
	ok "usage: a bad option exits 2 with the usage on stderr"
else
	bad "usage: bad option rc $rc"
fi
run kt-summary eager.json graph.json >two.out 2>two.err
rc=$?
if [ $rc -eq 2 ] && [ ! -s two.out ] && [ "$(wc -l <two.err)" -eq 1 ]; then
	ok "usage: two inputs exit 2 with one line"
else
	bad "usage: two inputs rc $rc"
fi
run kt-summary missing.json >miss.out 2>miss.err
rc=$?
if [ $rc -eq 2 ] && [ ! -s miss.out ] && [ "$(wc -l <miss.err)" -eq 1 ]; then
	ok "a missing input exits 2 with one line"
else
	bad "missing input: rc $rc"
fi
printf '[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2},' >cut.json
run kt-summary cut.json >cut.tsv 2>cut.err
rc=$?
if [ $rc -eq 0 ] && [ "$(val cut.tsv trace repairs)" -ge 1 ] && grep -q . cut.err &&
    [ "$(val cut.tsv kind kernel)" = 1 ] && [ "$(val cut.tsv view decompose)" = partial ]; then
	ok "a cut trace: repaired, reported on stderr and in the repairs row"
else
	bad "cut trace: rc $rc $(cat cut.err)"
fi
run kt-summary -S cut.json >cut.out 2>/dev/null
rc=$?
if [ $rc -eq 2 ] && [ ! -s cut.out ]; then
	ok "--strict: a damaged trace exits 2"
else
	bad "--strict: rc $rc"
fi
# Memory bounded by the distinct things, not the events.
if [ -x /usr/bin/time ]; then
	"$gen" --size 4M -o small.json
	"$gen" --size 64M -o big.json
	/usr/bin/time -f %M -o small.rss kt-summary small.json >/dev/null 2>&1
	/usr/bin/time -f %M -o big.rss kt-summary big.json >/dev/null 2>&1
	s=$(tail -1 small.rss)
	b=$(tail -1 big.rss)
	# (a sanitizer build keeps some freed memory: room for it)
	if [ "$b" -lt $((s + s / 2 + 4096)) ]; then
		ok "memory: $s KB for 4 MB, $b KB for 64 MB of trace"
	else
		bad "memory grows with the events: $s KB for 4 MB, $b KB for 64 MB"
	fi
	rm -f big.json small.json
else
	skip "memory: no /usr/bin/time"
fi

# 4. Real traces.
need_shared summary
for f in dtu_mlops/trace.json \
    nano-vllm/profile_results/decode_gpu_0.json \
    hta/nccl_parser_config/nccl_data.json.gz \
    catapult/simple_trace_gz.gz \
    catapult/x_event_trace.json \
    param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json \
    tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz \
    hta/trace_compare/base/base.json.gz \
    kineto/gpu_metrics_input.json; do
	if [ -f "$S/$f" ]; then
		judge "$(echo "$f" | tr / _)" "$S/$f"
	else
		skip "oracle $f: not in $S"
	fi
done
# What INDEX.tsv says of them: memory, python_function, NCCL kernels.
t=dtu_mlops_trace.json.tsv
[ -f "$t" ] && if [ "$(val $t view memory)" = partial ] &&
    [ "$(val $t has memory)" -gt 0 ] && [ "$(val $t view bucket)" = no ]; then
	ok "real memory trace (no GPU, no deviceProperties): memory partial, bucket no"
else
	bad "dtu_mlops: memory $(val $t view memory), bucket $(val $t view bucket)"
fi
t=nano-vllm_profile_results_decode_gpu_0.json.tsv
[ -f "$t" ] && if [ "$(val $t has python_stack)" -gt 0 ] &&
    [ "$(val $t view correlate)" != no ] &&
    ! note $t view correlate | grep -q 'no file:line'; then
	ok "real python trace: stacks, correlate has file:line"
else
	bad "nano-vllm: correlate $(val $t view correlate): $(note $t view correlate)"
fi
t=hta_nccl_parser_config_nccl_data.json.gz.tsv
f=$S/hta/nccl_parser_config/nccl_data.json.gz
if [ -f "$t" ]; then
	jq='[.traceEvents[] | select(.ph == "X" and .cat == "kernel" and (.name | test("nccl"; "i")))]'
	nc=$(gzip -dc "$f" | jq "$jq | length")
	nseq=$(gzip -dc "$f" | jq "$jq | map(select(.args.Seq != null or .args[\"Comms Id\"] != null)) | length")
	nsz=$(gzip -dc "$f" | jq "$jq | map(select(.args[\"In msg nelems\"] != null)) | length")
	got="$(val $t has collectives) $(val $t has collective_seq) $(val $t has collective_sizes) $(val $t view overlap) $(val $t trace world)"
	if [ "$got" = "$nc $nseq $nsz yes 2" ] && [ "$nc" -gt 0 ]; then
		ok "real NCCL trace: $nc collectives, $nseq with Seq, $nsz with sizes (jq), overlap yes, world 2"
	else
		bad "nccl_data: got '$got', jq $nc $nseq $nsz"
	fi
fi
t=param_dlrm_kineto_worker0_step_12.1694128201545.pt.trace.json.tsv
[ -f "$t" ] && if [ "$(val $t view overlap)" = partial ] && [ "$(val $t view memory)" = no ]; then
	ok "real dlrm trace: NCCL without sizes, overlap partial; memory no"
else
	bad "dlrm: overlap $(val $t view overlap) memory $(val $t view memory)"
fi
# Damaged files: exit 2, or 0 with the repair reported.
n=0
for f in "$S"/damaged/*.json "$S"/damaged/*.gz; do
	[ -f "$f" ] || continue
	b=$(basename "$f")
	run kt-summary "$f" >"dmg.$b.tsv" 2>"dmg.$b.err"
	rc=$?
	n=$((n + 1))
	if [ $rc -eq 2 ] && [ ! -s "dmg.$b.tsv" ] && [ "$(wc -l <"dmg.$b.err")" -eq 1 ]; then
		ok "damaged $b: exit 2, one line"
	elif [ $rc -eq 0 ] && { [ "$(val "dmg.$b.tsv" trace repairs)" -eq 0 ] ||
	    [ -s "dmg.$b.err" ]; }; then
		ok "damaged $b: read, $(val "dmg.$b.tsv" trace repairs) repairs reported"
	else
		bad "damaged $b: rc $rc: $(head -1 "dmg.$b.err")"
	fi
done
b=trailing-comma.json
if [ -f "dmg.$b.tsv" ] && [ "$(val "dmg.$b.tsv" trace repairs)" -ge 1 ] && grep -q 'trailing comma' "dmg.$b.err"; then
	ok "damaged $b: the repair in the row and on stderr"
else
	bad "damaged $b: repairs '$(val "dmg.$b.tsv" trace repairs 2>/dev/null)' $(cat "dmg.$b.err" 2>/dev/null)"
fi
exit 0
