# tests/t/select.sh: kt-select.  Judged by an independent oracle,
# tests/oracles/select.py (the json module, from the definitions of
# kt-select(1), not kt's code), whose positions jq turns into the events
# kt-select must write, compared as sorted one-line JSON (events):
#  - generated traces (eager, CUDA graph, two ranks merged by kt
#    rank-tag) and real traces: each criterion alone, two ANDed,
#    --drop python_function, --id, --limit, --count;
#  - --links on a kernel against ktgen's truth chain (-C), and a
#    runtime call's kernels;
#  - every output: valid JSON, the input's top-level keys, all the
#    metadata, no flow left without an end that had both;
#  - a pipe equals a file, the TSV form, | kt bucket, | kt correlate
#    names the original rows, and the exit statuses 0, 1 and 2.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen
oracle=$(dirname "$0")/../oracles/select.py
case $oracle in /*) ;; *) oracle=$OLDPWD/$oracle ;; esac
[ -f "$oracle" ] || oracle=$KT_BIN/../tests/oracles/select.py

# want TRACE ARGS...: the events the oracle keeps, sorted (want.ev).
want() {
	_t=$1
	shift
	python3 "$oracle" "$_t" "$@" >want.pos || return 1
	plain "$_t" | jq -c --slurpfile p want.pos \
	    '(if type == "array" then . else .traceEvents end) as $e |
	    $p[] | $e[.]' | sort >want.ev
}

# Flow keys with no s or no f, sorted.
incomplete() {
	jq -r '[(if type == "array" then . else .traceEvents end)[] |
	    select(.ph == "s" or .ph == "f" or .ph == "t") |
	    {k: ([.cat, .name, .id] | map(tostring) | join(" ")), ph}] |
	    group_by(.k)[] |
	    select((any(.[]; .ph == "s") and
	    any(.[]; .ph == "f" or .ph == "t")) | not) | .[0].k' "$1" | sort
}

# same NAME TRACE ARGS...: kt-select ARGS TRACE keeps what the oracle
# keeps, as valid JSON with the input's top-level keys, its metadata and
# no new incomplete flow.
same() {
	_n=$1
	_t=$2
	shift 2
	run kt-select "$@" "$_t" -o got.json 2>got.err
	_rc=$?
	if [ $_rc -gt 1 ]; then
		bad "$_n: exit $_rc: $(cat got.err)"
		return
	fi
	if ! want "$_t" "$@"; then
		bad "$_n: the oracle failed"
		return
	fi
	events got.json >got.ev 2>/dev/null
	_k=$(wc -l <want.ev)
	if ! cmp -s want.ev got.ev; then
		bad "$_n: $(diff want.ev got.ev | grep -c '^<') missing, $(diff want.ev got.ev | grep -c '^>') extra of $_k"
		return
	fi
	plain "$_t" >in.json
	toplevel in.json >in.top
	toplevel got.json >got.top
	incomplete in.json >in.inc
	incomplete got.json >got.inc
	_m=$(jq '[(if type == "array" then . else .traceEvents end)[] |
	    select(.ph == "M")] | length' in.json)
	_gm=$(jq '[(if type == "array" then . else .traceEvents end)[] |
	    select(.ph == "M")] | length' got.json)
	_sel=$((_k - _m))
	if ! cmp -s in.top got.top; then
		bad "$_n: top-level keys differ"
	elif [ "$_m" != "$_gm" ]; then
		bad "$_n: $_gm of $_m metadata events"
	elif [ -n "$(comm -13 in.inc got.inc)" ]; then
		bad "$_n: a flow lost an end: $(comm -13 in.inc got.inc | head -1)"
	elif { [ $_sel -gt 0 ] && [ $_rc -ne 0 ]; } ||
	    { [ $_sel -eq 0 ] && [ $_rc -ne 1 ]; }; then
		bad "$_n: exit $_rc with $_sel events"
	else
		ok "$_n: $_sel events"
	fi
}

# The generated traces.
"$gen" --steps 3 --layers 2 -C eager.truth -o eager.json
"$gen" --graph --streams 8 --steps 2 --layers 2 -o graph.json
"$gen" --steps 2 --layers 2 --rank 0 --world 2 -o r0.json
"$gen" --steps 2 --layers 2 --rank 1 --world 2 -o r1.json
run kt-rank-tag r0.json r1.json -o merged.json 2>/dev/null ||
    bad "kt-rank-tag merged.json"

# A window in the middle third of a trace, in ns: "FROM TO".
window() {
	python3 - "$1" <<'EOF'
import sys, json, gzip
from decimal import Decimal
f = sys.argv[1]
with (gzip.open if f.endswith('.gz') else open)(f, 'rt') as fh:
    d = json.load(fh, parse_float=Decimal)
e = d if isinstance(d, list) else d['traceEvents']
t = [int(Decimal(x['ts']) * 1000) for x in e
     if x.get('ph') != 'M' and isinstance(x.get('ts'), (int, Decimal))]
a, b = min(t), max(t)
print(a + (b - a) // 3, a + 2 * (b - a) // 3)
EOF
}

# Each criterion alone, two together, --drop, on a trace.
criteria() {
	_n=$1
	_t=$2
	same "$_n kind kernel" "$_t" --kind kernel
	same "$_n kind list" "$_t" --kind cuda_runtime,gpu_memcpy
	same "$_n name" "$_t" --name 'aten::(mm|add)|gemm'
	same "$_n cat" "$_t" --cat cpu_op
	same "$_n min-dur" "$_t" --min-dur 20000
	set -- $(window "$_t")
	same "$_n window" "$_t" --from "$1" --to "$2"
	same "$_n kind and name" "$_t" --kind kernel --name nccl
	same "$_n kind and window" "$_t" --kind cpu_op --from "$1" --to "$2"
	same "$_n drop python_function" "$_t" --drop python_function
	same "$_n limit" "$_t" --kind kernel --limit 5
}
criteria eager eager.json
criteria graph graph.json
same "eager stream" eager.json --stream 20
same "eager device and stream" eager.json --device 0 --stream 7,13
same "graph streams" graph.json --stream 11,15
same "eager comm" eager.json --comm default_pg
same "eager comm and name" eager.json --comm allreduce --kind kernel
same "merged rank" merged.json --rank 1
same "merged rank and kind" merged.json --rank 0 --kind kernel
same "eager rank of the trace" eager.json --rank 0 --kind gpu_memset
same "eager ids" eager.json --id kernel:480,67,gpu_memcpy:99999
same "merged ids and rank" merged.json --id 480,481 --rank 1
same "eager nothing matches" eager.json --name 'no such event'
same "eager drop flow" eager.json --drop flow,python_function
same "eager anchored flows follow" eager.json --kind kernel,cuda_runtime

# --count is the number of events the oracle keeps.
for a in "--kind kernel" "--drop python_function" "--kind cuda_runtime --links"; do
	# shellcheck disable=SC2086
	n=$(run kt-select -N $a eager.json 2>/dev/null)
	# shellcheck disable=SC2086
	w=$(python3 "$oracle" eager.json $a --count)
	if [ -n "$n" ] && [ "$n" = "$w" ]; then
		ok "count $a: $n"
	else
		bad "count $a: $n, want $w"
	fi
done

# --limit says so on stderr.
run kt-select --kind kernel --limit 3 eager.json >/dev/null 2>lim.err
if grep -q 'limited to the first 3 of' lim.err; then
	ok "limit: said on stderr"
else
	bad "limit: $(cat lim.err)"
fi

# --links on kernels: exactly the truth chain (ktgen -C) and their flow;
# with --drop, the chain less the dropped kind.
links_case() {
	_row=$1
	_extra=$2
	shift 2
	run kt-select --links --id "$_row" "$@" eager.json -o links.json 2>/dev/null
	want eager.json --links --id "$_row" --extra "$_extra" "$@"
	events links.json >links.ev
	_n=$(($(wc -l <links.ev) - $(jq '[.traceEvents[] | select(.ph == "M")] |
	    length' eager.json)))
	if cmp -s want.ev links.ev && [ $_n -ge 4 ]; then
		ok "links kernel $_row $*: its truth chain and flow ($_n events)"
	else
		bad "links kernel $_row $*: $(diff want.ev links.ev | head -3)"
	fi
}
for k in 3 40 200; do
	row=$(awk -F '\t' -v k=$k 'NR == k + 1 { print $1 }' eager.truth)
	extra=$(awk -F '\t' -v k=$k 'NR == k + 1 {
		s = ""
		for (i = 2; i <= 8; i++)
			if (i != 7 && $i != "-") s = s (s == "" ? "" : ",") $i
		print s }' eager.truth)
	links_case "$row" "$extra"
	links_case "$row" "$extra" --drop python_function
done
# A runtime call brings its kernel; a graph launch all of its kernels.
same "links cuda_runtime" eager.json --links --kind cuda_runtime --name Memset
same "links graph launch" graph.json --links --name cudaGraphLaunch --limit 1

# kt-correlate on the output names the original rows.
run kt-select --links --kind kernel --limit 20 eager.json -o sub.json 2>/dev/null
run kt-correlate sub.json 2>/dev/null | cut -f1,8,10,15,17 | sort >sub.cor
run kt-correlate eager.json 2>/dev/null | cut -f1,8,10,15,17 | sort >all.cor
if [ "$(wc -l <sub.cor)" -eq 21 ] && [ -z "$(comm -23 sub.cor all.cor)" ]; then
	ok "select | correlate: the original rows and chains"
else
	bad "select | correlate: $(comm -23 sub.cor all.cor | head -2)"
fi

# A pipe is the same as the file; the TSV form holds the same events.
run kt-select --links --kind kernel --name nccl eager.json >file.json 2>/dev/null
cat eager.json | run kt-select --links --kind kernel --name nccl >pipe.json 2>/dev/null
gzip -c eager.json | run kt-select --links --kind kernel --name nccl - >gz.json 2>/dev/null
if [ -s file.json ] && cmp -s file.json pipe.json && cmp -s file.json gz.json; then
	ok "pipe and gzip input: the same output"
else
	bad "pipe input differs"
fi
run kt-select -t --kind kernel --name nccl eager.json >sel.tsv 2>/dev/null
n=$(run kt-select -N sel.tsv 2>/dev/null)
w=$(python3 "$oracle" eager.json --kind kernel --name nccl --count)
if [ "$(head -c 3 sel.tsv)" = "id	" ] && [ "$n" = "$w" ]; then
	ok "TSV: the same $n events, and read back"
else
	bad "TSV: $n, want $w"
fi
# Rows survive a second selection.
run kt-select --kind kernel eager.json 2>/dev/null |
    run kt-select --name nccl -o twice.json 2>/dev/null
jq -c '.ktSourceIndex' twice.json >twice.rows
want eager.json --kind kernel --name nccl
if events twice.json | cmp -s - want.ev &&
    [ "$(jq -c '[.ktSourceIndex[]]' twice.json)" = "$(jq -sc . want.pos)" ]; then
	ok "select | select: the original row numbers"
else
	bad "select | select: $(cat twice.rows)"
fi

# | kt bucket.
if run kt-select --kind kernel --name nccl eager.json 2>/dev/null |
    run kt-bucket 2>/dev/null | awk -F '\t' '$4 == "communication" && $5 == 6' |
    grep -q .; then
	ok "select | bucket: the 6 NCCL kernels"
else
	bad "select | bucket"
fi

# Exit statuses: 1 with an empty valid trace, 2 for usage and I/O.
run kt-select --name 'no such' eager.json >none.json 2>none.err
rc=$?
if [ $rc -eq 1 ] && grep -q 'no event matched' none.err &&
    [ "$(jq '[.traceEvents[] | select(.ph != "M")] | length' none.json)" = 0 ] &&
    [ "$(jq '.traceEvents | length' none.json)" -gt 0 ]; then
	ok "exit 1: nothing matched, metadata written"
else
	bad "exit 1: rc $rc $(cat none.err)"
fi
st() {
	_w=$1
	_n=$2
	shift 2
	run kt-select "$@" >st.out 2>st.err </dev/null
	_r=$?
	if [ $_r -eq "$_w" ] && { [ "$_w" -ne 2 ] || { [ ! -s st.out ] &&
	    [ "$(wc -l <st.err)" -ge 1 ] && grep -q '^kt-select: ' st.err; }; }; then
		ok "exit $_w: $_n"
	else
		bad "exit $_w: $_n: got $_r $(head -1 st.err)"
	fi
}
st 0 "a match" --kind kernel --limit 1 eager.json
st 2 "unknown kind" --kind kernels eager.json
st 2 "kind flow refused" --kind flow eager.json
st 2 "drop metadata refused" --drop metadata eager.json
st 2 "bad regex" --name 'a(' eager.json
st 2 "bad id" --id kernel:x eager.json
st 2 "bad time" --from 1parsec eager.json
st 2 "to before from" --from 10 --to 5 eager.json
st 2 "output is the input" --kind kernel -o eager.json eager.json
st 2 "no such file" --kind kernel nosuch.json
st 2 "two inputs" eager.json graph.json
st 0 "help" --help
printf 'hello\n' >oracle.txt
st 2 "not a trace" --kind kernel oracle.txt

# Real traces.
have_shared || { skip "real traces: no $KT_SHARED"; exit 0; }
S=$KT_SHARED
dlrm=$S/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json
bert=$S/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz
vllm=$S/nano-vllm/profile_results/decode_gpu_0.json
amd=$S/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz
flows=$S/catapult/flow_simple.json
triton=$S/tracelens/torch_compile_triton/trace.json.gz
for t in "$dlrm" "$bert" "$vllm" "$amd"; do
	[ -f "$t" ] || { skip "real: no $t"; continue; }
	criteria "$(basename "$t" | cut -c1-12)" "$t"
done
[ -f "$dlrm" ] && same "dlrm nccl kernels of a stream" "$dlrm" --kind kernel --name '^nccl' --stream 7,20,21
[ -f "$dlrm" ] && same "dlrm links" "$dlrm" --links --kind cuda_runtime --name Memcpy
[ -f "$amd" ] && same "amd fwdbwd flow peers" "$amd" --links --kind cpu_op --name 'aten::(mm|linear)'
[ -f "$vllm" ] && same "vllm links driver calls" "$vllm" --links --kind cuda_driver
[ -f "$bert" ] && same "bert ids" "$bert" --id 5,100,200,cpu_op:300,kernel:2000
[ -f "$flows" ] && same "catapult flows" "$flows" --name 'ipc|Mojo' && \
    same "catapult flows drop" "$flows" --drop flow
[ -f "$triton" ] && same "triton gpu_user_annotation" "$triton" --kind gpu_user_annotation,kernel
exit 0
