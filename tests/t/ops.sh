# tests/t/ops.sh: kt-ops, the key_averages() table.  Judged three ways:
# - a hand-made trace whose table was worked out by hand (below, with
#   the arithmetic): nesting through a python_function, a call outside
#   every op, a memcpy launched under the step only, an op inside an op
#   of its own name, an activity without a launch; --by frame;
# - an independent Python oracle (tests/oracles/ops.py, the json module,
#   not kt's code) on generated traces (eager with backward, CUDA graph,
#   merged ranks) and on real traces of both category spellings, with
#   and without --by shape: every row and every figure equal;
# - invariants checked with awk on the output: the self CPU shares add up
#   to 100, the self GPU times plus the activities in no row add up to
#   every activity's duration (summed with jq).
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen
oracle=$(dirname "$0")/../oracles/ops.py
case $oracle in /*) ;; *) oracle=$PWD/$oracle ;; esac
[ -f "$oracle" ] || oracle=$KT_BIN/../tests/oracles/ops.py

# 1. By hand.  Thread 1 (times in us; row ids are the event's index):
#   2 ProfilerStep#7 [0,100)            children 3, 10, 11: self 100-70 = 30
#   3   aten::linear [10,60)            children 4, 8:      self 50-36 = 14
#   4     aten::addmm [15,45)           children 5, 6:      self 30-9 = 21
#   5       cudaLaunchKernel [20,25) corr 1 -> gemm1 40 us
#   6       cudaLaunchKernel [30,34) corr 2 -> gemm2 10 us
#   7     python model.py(12) [50,58)   (not in the op tree)
#   8       aten::add [51,57)           child 9: self 4
#   9         cudaLaunchKernel [52,54) corr 3 -> add 5 us
#  10   cudaMemcpyAsync [70,80) corr 4 -> memcpy 3 us (owner: the step)
#  11   aten::add [85,95)               child 12: self 6
#  12     aten::add [86,90)             self 4
#  13 cudaLaunchKernel [200,205) corr 5 -> k5 7 us (no op: owner itself)
#  19 kernel corr 99: no launch, 2 us, in no row
# Self CPU sum 30+14+21+5+4+4+2+10+6+4+5 = 105 us; GPU sum 67 us.
# GPU self: addmm 40+10, add 5, step 3, cudaLaunchKernel 7; totals up the
# tree: linear 55, step 3+55 = 58.  aten::add: 3 calls, total 6+10+4 =
# 20, self 14, avg 6667 ns, longest row 11.
cat >hand.json <<'EOF'
{"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"python"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":10,"dur":50},
{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":15,"dur":30},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":30,"dur":4,"args":{"correlation":2}},
{"ph":"X","cat":"python_function","name":"model.py(12): forward","pid":1,"tid":1,"ts":50,"dur":8},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":51,"dur":6},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":52,"dur":2,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":70,"dur":10,"args":{"correlation":4}},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":85,"dur":10},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":86,"dur":4},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":200,"dur":5,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"gemm1","pid":0,"tid":7,"ts":30,"dur":40,"args":{"device":0,"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"gemm2","pid":0,"tid":7,"ts":75,"dur":10,"args":{"device":0,"stream":7,"correlation":2}},
{"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":90,"dur":5,"args":{"device":0,"stream":7,"correlation":3}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":95,"dur":3,"args":{"device":0,"stream":7,"correlation":4}},
{"ph":"X","cat":"kernel","name":"k5","pid":0,"tid":7,"ts":210,"dur":7,"args":{"device":0,"stream":7,"correlation":5}},
{"ph":"X","cat":"kernel","name":"lost","pid":0,"tid":7,"ts":300,"dur":2,"args":{"device":0,"stream":7,"correlation":99}}
]}
EOF
tab='	'
cat >hand.want <<EOF
kind${tab}name${tab}calls${tab}cpu_total_ns${tab}cpu_self_ns${tab}cpu_avg_ns${tab}cpu_self_pct${tab}cpu_total_pct${tab}gpu_self_ns${tab}gpu_total_ns${tab}gpu_avg_ns${tab}gpu_self_pct${tab}gpu_total_pct${tab}launches${tab}longest_ns${tab}longest_row
step${tab}ProfilerStep#*${tab}1${tab}100000${tab}30000${tab}100000${tab}28.6${tab}95.2${tab}3000${tab}58000${tab}58000${tab}4.5${tab}86.6${tab}1${tab}100000${tab}step:2
cpu_op${tab}aten::linear${tab}1${tab}50000${tab}14000${tab}50000${tab}13.3${tab}47.6${tab}0${tab}55000${tab}55000${tab}0.0${tab}82.1${tab}0${tab}50000${tab}cpu_op:3
cpu_op${tab}aten::addmm${tab}1${tab}30000${tab}21000${tab}30000${tab}20.0${tab}28.6${tab}50000${tab}50000${tab}50000${tab}74.6${tab}74.6${tab}2${tab}30000${tab}cpu_op:4
cuda_runtime${tab}cudaLaunchKernel${tab}4${tab}16000${tab}16000${tab}4000${tab}15.2${tab}15.2${tab}7000${tab}7000${tab}1750${tab}10.4${tab}10.4${tab}1${tab}5000${tab}cuda_runtime:5
cpu_op${tab}aten::add${tab}3${tab}20000${tab}14000${tab}6667${tab}13.3${tab}19.0${tab}5000${tab}5000${tab}1667${tab}7.5${tab}7.5${tab}1${tab}10000${tab}cpu_op:11
cuda_runtime${tab}cudaMemcpyAsync${tab}1${tab}10000${tab}10000${tab}10000${tab}9.5${tab}9.5${tab}0${tab}0${tab}0${tab}0.0${tab}0.0${tab}0${tab}10000${tab}cuda_runtime:10
EOF
if run kt-ops hand.json >hand.out 2>hand.err && cmp -s hand.want hand.out; then
	ok "hand: every figure as worked out by hand"
else
	bad "hand: $(diff hand.want hand.out | head -5)"
fi
if grep -q '^kt-ops: 1 GPU activities (2000 ns) without a launching call are in no row$' hand.err; then
	ok "hand: the activity without a launch counted on stderr"
else
	bad "hand: stderr: $(cat hand.err)"
fi
# --by frame: the aten::add under model.py(12) (and its launch) is a row
# of its own; the other two calls and launches have no frame.
run kt-ops --by frame hand.json 2>/dev/null |
    awk -F '\t' 'NR > 1 { print $1, $2, $3, $4 }' | sort >frame.got
cat >frame.want <<'EOF'
cpu_op aten::add - 2
cpu_op aten::add model.py(12): forward 1
cpu_op aten::addmm - 1
cpu_op aten::linear - 1
cuda_runtime cudaLaunchKernel - 3
cuda_runtime cudaLaunchKernel model.py(12): forward 1
cuda_runtime cudaMemcpyAsync - 1
step ProfilerStep#* - 1
EOF
if cmp -s frame.want frame.got; then
	ok "hand --by frame: calls split by the user frame"
else
	bad "hand --by frame: $(diff frame.want frame.got | head -5)"
fi
# --kind, --sort, --limit, --json, stdin.
if [ "$(run kt-ops -k cpu_op -s calls -n 1 hand.json 2>/dev/null | cut -f2 | tail -1)" = aten::add ] &&
    [ "$(run kt-ops -k cpu_op hand.json 2>/dev/null | wc -l)" -eq 4 ] &&
    [ "$(run kt-ops -s name hand.json 2>/dev/null | sed -n 2p | cut -f2)" = ProfilerStep#* ] &&
    [ "$(run kt-ops -s cpu_self_ns hand.json 2>/dev/null | sed -n 2p | cut -f2)" = ProfilerStep#* ]; then
	ok "--kind, --sort, --limit"
else
	bad "--kind, --sort, --limit: $(run kt-ops -k cpu_op -s calls -n 1 hand.json 2>&1)"
fi
if run kt-ops --json hand.json 2>/dev/null |
    jq -e -s 'length == 6 and (.[0].gpu_total_ns == 58000) and
        (.[0].name == "ProfilerStep#*") and (map(.cpu_self_pct) | add) > 99.5' >/dev/null &&
    run kt-ops <hand.json 2>/dev/null | cmp -s - hand.want; then
	ok "--json lines with numbers; stdin equals the file"
else
	bad "--json or stdin"
fi
# Exit statuses: 1 for a trace without calls, 2 for bad options.
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}]}' >gpuonly.json
run kt-ops gpuonly.json >gpuonly.out 2>gpuonly.err
st=$?
if [ $st -eq 1 ] && [ "$(wc -l <gpuonly.out)" -eq 1 ] &&
    grep -q 'no CPU op' gpuonly.err; then
	ok "a trace without calls: exit 1, an empty table"
else
	bad "a trace without calls: status $st, $(cat gpuonly.err)"
fi
bads=0
for a in "--by module" "--kind kernel" "--sort nope" "--sort shapes" \
    "--limit -1" "--by frame --frame-skip (" "hand.json hand.json"; do
	# shellcheck disable=SC2086
	run kt-ops $a hand.json >bad.out 2>bad.err
	st=$?
	if [ $st -ne 2 ] || [ -s bad.out ] || [ "$(wc -l <bad.err)" -ne 1 ]; then
		bad "usage: kt-ops $a: status $st, $(cat bad.err)"
		bads=$((bads + 1))
	fi
done
[ $bads -eq 0 ] && ok "usage errors: exit 2, one line, no output"

# 2. The oracle.  kt's columns as the oracle's: kind name [shapes] calls
# cpu_total cpu_self gpu_self gpu_total launches longest longest_row.
kt_cols() {
	awk -F '\t' -v s="$2" 'BEGIN { OFS = "\t" } NR > 1 {
		if (s) print $1, $2, $3, $4, $5, $6, $10, $11, $15, $16, $17
		else print $1, $2, $3, $4, $5, $9, $10, $14, $15, $16
	}' "$1" | sort
}
# against NAME TRACE [shape]
against() {
	_n=$1 _t=$2 _s=${3:-}
	if ! run kt-ops ${_s:+--by shape} "$_t" >"$_n.tsv" 2>"$_n.err"; then
		bad "oracle $_n: kt-ops failed: $(cat "$_n.err")"
		return
	fi
	python3 "$oracle" "$_t" $_s | sort >"$_n.want"
	kt_cols "$_n.tsv" "$_s" >"$_n.got"
	_r=$(wc -l <"$_n.want")
	if [ "$_r" -gt 2 ] && cmp -s "$_n.want" "$_n.got"; then
		ok "oracle $_n: $_r rows, every figure"
	else
		bad "oracle $_n: $(diff "$_n.want" "$_n.got" | grep -c '^<') of $_r rows differ"
	fi
}
"$gen" --steps 3 --layers 2 -o eager.json
"$gen" --graph --streams 8 --steps 3 --layers 2 -o graph.json
"$gen" --steps 2 --layers 2 --rank 0 --world 2 -o r0.json
"$gen" --steps 2 --layers 2 --rank 1 --world 2 -o r1.json
run kt-rank-tag r0.json r1.json -o merged.json 2>/dev/null
against eager eager.json
against graph graph.json
against merged merged.json
against hand hand.json
# The invariants on the eager trace: shares and the GPU sum (jq).
gsum=$(jq '[.traceEvents[] | select(.ph == "X" and (.cat == "kernel" or
    .cat == "gpu_memcpy" or .cat == "gpu_memset")) | .dur * 1000 | round] |
    add' eager.json)
if awk -F '\t' -v g="$gsum" 'NR > 1 { p += $7; s += $9 }
    END { exit !(p > 99.5 && p < 100.5 && s == g) }' eager.tsv; then
	ok "invariants: self CPU shares add up to 100, self GPU to every activity"
else
	bad "invariants: gpu sum $gsum"
fi
if have_shared; then
	S=$KT_SHARED
	for t in kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz \
	    kineto/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz \
	    kineto/after_fix_trace.json \
	    param/resnet_kineto.json.gz \
	    tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz \
	    tracelens/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz \
	    tracelens/inference/vllm_decode_full/graph_execution.json.gz \
	    nano-vllm/profile_results/decode_gpu_0.json \
	    hta/nccl_parser_config/nccl_data.json.gz \
	    zoology/trace.json; do
		[ -f "$S/$t" ] || { skip "oracle $t: not in $S"; continue; }
		against "$(echo "$t" | tr / _)" "$S/$t"
	done
	t=tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz
	[ -f "$S/$t" ] && against bert-shape "$S/$t" shape
	t=kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
	[ -f "$S/$t" ] && against resnet-shape "$S/$t" shape
else
	skip "oracle on real traces: no $KT_SHARED"
fi
