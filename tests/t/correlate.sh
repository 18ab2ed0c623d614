# tests/t/correlate.sh: kt-correlate, the launch chain of every GPU
# activity.  Judged three ways:
# - the generator's own chain (ktgen --truth-chain, built as it writes
#   the events) on eager, CUDA-graph, training (the backward thread),
#   --no-python, injected-stall and merged multi-rank traces: every
#   link of every activity equal;
# - an independent Python oracle (tests/oracles/correlate.py, the json
#   module and sys.stdlib_module_names, not kt's code) on the generated
#   traces and on the real traces with stacks (python_function, or the
#   older args."Call stack"): every activity equal;
# - a hand-made trace whose table was worked out by hand (below): the
#   launch delay and the queue time, a Call stack frame inside a python
#   frame, a call on a thread of its own, an activity whose call is not
#   in the trace, --id by activity, op and step, and the exit statuses.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen
oracle=$(dirname "$0")/../oracles/correlate.py
case $oracle in /*) ;; *) oracle=$PWD/$oracle ;; esac
[ -f "$oracle" ] || oracle=$KT_BIN/../tests/oracles/correlate.py

# chain FILE: kt's table as the truth's columns (ids without the kind):
# row launch cpu_op annotation step frame_row frame fwd_op, sorted.
chain() {
	awk -F '\t' 'BEGIN { OFS = "\t" } NR == 1 { next } {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[a-z_]+:[0-9]+$/)
				sub(/^[a-z_]+:/, "", $i)
		print $1, $8, $10, $12, $15, $17, $16, $20
	}' "$1" | sort
}

# 1. The generator's truth.
for mode in "eager:--steps 3 --layers 2" \
    "graph:--graph --streams 8 --steps 3 --layers 2" \
    "nopython:--no-python --steps 2 --layers 2" \
    "inject:--inject-gap 500000 --inject-tiny 5 --steps 2 --layers 3" \
    "rank:--rank 1 --world 4 --steps 2 --seed 3"; do
	name=${mode%%:*}
	# shellcheck disable=SC2086
	"$gen" ${mode#*:} -C "$name.truth" -o "$name.json"
	if ! run kt-correlate "$name.json" >"$name.tsv" 2>"$name.err"; then
		bad "truth $name: kt-correlate failed: $(cat "$name.err")"
		continue
	fi
	tail -n +2 "$name.truth" | sort >"$name.want"
	chain "$name.tsv" >"$name.got"
	n=$(wc -l <"$name.want")
	if [ "$n" -gt 100 ] && cmp -s "$name.want" "$name.got"; then
		ok "truth $name: $n activities, every link"
	else
		bad "truth $name: $(diff "$name.want" "$name.got" | grep -c '^<') of $n differ"
	fi
done
# The backward thread has no Python stack; the graph has no cpu_op
# around cudaGraphLaunch: the truth says so, and kt counts them.
if awk -F '\t' 'NR > 1 && $10 == "-" && $9 == "cudaGraphLaunch"' graph.tsv |
    grep -q . && grep -q 'without a user frame' eager.err; then
	ok "missing links counted on stderr"
else
	bad "missing links: $(cat eager.err)"
fi

# 1b. The second routes.  Without args.correlation (on the activities
# and on the calls) an activity reaches its call through the ac2g flow;
# without args."Sequence number" a backward op reaches its forward op
# through the fwdbwd flow.  The same traces with those args removed
# (by Python's json module; the events keep their places) must give
# the same truth, every link.
strip() {	# strip IN OUT: drop correlation, cid and Sequence number
	python3 - "$1" "$2" <<'PY'
import gzip, json, sys
op = gzip.open if sys.argv[1].endswith('.gz') else open
d = json.load(op(sys.argv[1], 'rt'))
for e in d['traceEvents']:
    a = e.get('args') if isinstance(e, dict) else None
    if isinstance(a, dict):
        for k in ('correlation', 'cid', 'Sequence number'):
            a.pop(k, None)
json.dump(d, open(sys.argv[2], 'w'))
PY
}
if ! command -v python3 >/dev/null 2>&1; then
	skip "flow routes: no python3"
else
	for name in eager graph rank; do
		strip "$name.json" "$name.bare.json"
		# (graph mode has no backward pass, so no fwdbwd flow)
		if grep -q '"correlation"\|"Sequence number"' "$name.bare.json" ||
		    { [ $name != graph ] && ! grep -q '"fwdbwd"' "$name.bare.json"; }; then
			bad "flow routes $name: the stripped trace is not as meant"
			continue
		fi
		run kt-correlate "$name.bare.json" >"$name.bare.tsv" 2>/dev/null
		chain "$name.bare.tsv" >"$name.bare.got"
		n=$(wc -l <"$name.want")
		if [ "$n" -gt 100 ] && cmp -s "$name.want" "$name.bare.got"; then
			ok "flow routes $name: no correlation, no Sequence number: $n activities, every link"
		else
			bad "flow routes $name: $(diff "$name.want" "$name.bare.got" | grep -c '^<') of $n differ"
		fi
	done
fi

# 2. Merged ranks: each row is (rank, the row id in its rank's source).
# The ranks differ (2 and 3 layers, two seeds), so that a row number
# both ranks have names different events: the model's side arrays (Call
# stacks, autograd links, graph nodes) are looked up by (row, rank).
"$gen" --steps 2 --layers 2 --rank 0 --world 2 -C m0.truth -o m0.json
"$gen" --steps 2 --layers 3 --rank 1 --world 2 --seed 7 -C m1.truth -o m1.json
if run kt-rank-tag m0.json m1.json -o merged.json 2>/dev/null &&
    run kt-correlate merged.json >merged.tsv 2>/dev/null; then
	for r in 0 1; do
		tail -n +2 "m$r.truth" | sort >"m$r.want"
		awk -F '\t' -v r=$r 'NR == 1 || $2 == r' merged.tsv >"m$r.tsv"
		chain "m$r.tsv" >"m$r.got"
	done
	if cmp -s m0.want m0.got && cmp -s m1.want m1.got &&
	    [ "$(wc -l <m1.want)" -gt 100 ]; then
		ok "merged ranks: each rank's chain, by its own row ids"
	else
		bad "merged ranks: $(diff m0.want m0.got | grep -c '^<') + $(diff m1.want m1.got | grep -c '^<') differ"
	fi
	# kt rank-tag moved each rank's correlations apart (rank * 10^12):
	# too far apart for the model's table of them, joined by a sort and
	# a search.  Moved back, the two ranks share correlations, in a span
	# that the table takes, where only the rank tells launches apart.
	sed 's/"correlation": *[12]000000\([0-9][0-9]*\)/"correlation": \1/g' \
	    merged.json >dense.json
	if [ "$(grep -o '"correlation": 1000000' dense.json | wc -l)" -eq 0 ] &&
	    [ "$(grep -ow '"correlation": 100001' dense.json | wc -l)" -ge 4 ] &&
	    run kt-correlate dense.json >dense.tsv 2>/dev/null &&
	    cmp -s merged.tsv dense.tsv; then
		ok "merged ranks: shared correlations joined by rank, as far apart ones"
	else
		bad "merged ranks: shared correlations join otherwise"
	fi
else
	bad "merged ranks: rank-tag or correlate failed"
fi

# 3. The Python oracle: generated traces, then real ones.
# judge NAME TRACE: kt equals the oracle on every activity.
judge() {
	python3 "$oracle" "$2" 2>oracle.err | tail -n +2 |
	    awk -F '\t' 'BEGIN { OFS = "\t" } { print $1, $2, $3, $4, $5, $7, $6, $8 }' |
	    sort >"$1.owant"
	if [ ! -s "$1.owant" ] && [ -s oracle.err ]; then
		bad "oracle $1: $(tail -1 oracle.err)"
		return
	fi
	run kt-correlate "$2" >"$1.otsv" 2>/dev/null
	chain "$1.otsv" >"$1.ogot"
	n=$(wc -l <"$1.owant")
	d=$(diff "$1.owant" "$1.ogot" | grep -c '^<')
	if [ "$n" -gt 0 ] && [ "$d" -eq 0 ]; then
		ok "oracle $1: $n activities agree"
	else
		bad "oracle $1: $d of $n differ"
	fi
}
if ! command -v python3 >/dev/null 2>&1; then
	skip "oracle: no python3"
else
	judge gen-eager eager.json
	judge gen-graph graph.json
	judge gen-merged merged.json
	if have_shared; then
		S=$KT_SHARED
		for nt in resnet50:kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz \
		    param:param/resnet_kineto.json.gz \
		    bert:tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz \
		    qwen:tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz \
		    checkpoint:tracelens/mi300/resnet_act_checkpoint.json.gz \
		    vllm-graph:tracelens/inference/vllm_decode_full/graph_execution.json.gz \
		    nano-vllm:nano-vllm/profile_results/decode_gpu_0.json; do
			t=${nt#*:}
			if [ -f "$S/$t" ]; then
				judge "${nt%%:*}" "$S/$t"
			else
				skip "oracle $t: not in $S"
			fi
		done
		# The flow routes on real traces: the oracle follows the
		# ac2g and fwdbwd flows on its own.  On the ROCm ResNet-18
		# run, 10 memsets' flows have two "f" ends and no "s" (the
		# producer's): stripped, they have no launch, in both.
		r18=$S/tracelens/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz
		if [ -f "$r18" ]; then
			strip "$r18" r18.bare.json
			judge r18-bare r18.bare.json
			judge r18 "$r18"
			# PyTorch's fwdbwd flows and kt's Sequence number
			# rule (the latest forward op of the number) never
			# name two different forward ops.
			paste r18.otsv r18-bare.otsv | awk -F '\t' '
			    NR > 1 && $20 != "-" && $42 != "-" { n++; if ($20 != $42) d++ }
			    END { exit !(n > 1000 && d == 0) }' &&
			    ok "real: fwdbwd flows and Sequence numbers name the same forward op" ||
			    bad "real: the fwdbwd flows and the Sequence numbers disagree"
			n=$(awk -F '\t' 'NR > 1 && $8 == "-"' r18-bare.otsv | wc -l)
			[ "$n" -eq 10 ] && ok "real: stripped, only the 10 memsets of the broken flows lose their call" ||
			    bad "real: stripped, $n activities without a call (10 expected)"
		else
			skip "flow routes real: no $r18"
		fi
		# The frames are there: the Call stack of ResNet-50, the
		# HF modeling file of Qwen.
		if awk -F '\t' 'NR > 1 && $16 ~ /^resnet50_profiler_api\.py\([0-9]+\): / && $17 ~ /^cpu_op:/' \
		    resnet50.otsv 2>/dev/null | grep -q .; then
			ok "real: Call stack frames found"
		else
			bad "real: no frame from a Call stack"
		fi
		if awk -F '\t' 'NR > 1 && $16 ~ /modeling_qwen2\.py\([0-9]+\): /' \
		    qwen.otsv 2>/dev/null | grep -q .; then
			ok "real: Qwen kernels reach modeling_qwen2.py"
		else
			bad "real: no modeling_qwen2.py frame"
		fi
	else
		skip "oracle real traces: no $KT_SHARED"
	fi
fi

# 4. A hand-made trace.  Its table, worked out by hand:
#  gemm_a  launched at 1010 us, starts 1015: delay 5000 ns, nothing
#          before it on stream 7: queue 0.  Chain: aten::addmm (6 is
#          linear, 7 addmm: the innermost), "## forward ##", step 7,
#          frame model.py(20) (the torch frame between is skipped).
#  gemm_b  launched at 1020, starts 1040; stream 7 busy until 1035:
#          delay 20000, queue 15000.
#  memcpy  launched at 1100 on tid 2 (nothing around it): no op, no
#          annotation, no frame; step 7 (the rank's step holds 1100).
#  conv_k  launched at 1210 inside aten::conv2d, whose Call stack's
#          first user frame is resnet.py(54) (conv.py is torch's); the
#          op is inner to train.py(10): the frame is the stack's, its
#          row the cpu_op.  Delay 90000, queue 0 (stream 8).
#  orphan  correlation 99 has no call: every link "-", and 1600 is past
#          the step: step "-".
cat >hand.json <<'EOF'
{"traceEvents": [
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":1000.000,"dur":500.000},
{"ph":"X","cat":"python_function","name":"train.py(10): main","pid":1,"tid":1,"ts":1001.000,"dur":400.000},
{"ph":"X","cat":"python_function","name":"torch/nn/modules/module.py(1500): _call_impl","pid":1,"tid":1,"ts":1002.000,"dur":300.000},
{"ph":"X","cat":"python_function","name":"model.py(20): forward","pid":1,"tid":1,"ts":1003.000,"dur":120.000},
{"ph":"X","cat":"user_annotation","name":"## forward ##","pid":1,"tid":1,"ts":1004.000,"dur":110.000},
{"ph":"X","cat":"python_function","name":"<built-in function linear>","pid":1,"tid":1,"ts":1005.000,"dur":100.000},
{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":1006.000,"dur":90.000},
{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":1007.000,"dur":80.000},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1010.000,"dur":5.000,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1020.000,"dur":5.000,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"gemm_a","pid":0,"tid":7,"ts":1015.000,"dur":20.000,"args":{"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"gemm_b","pid":0,"tid":7,"ts":1040.000,"dur":10.000,"args":{"stream":7,"correlation":2}},
{"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":1200.000,"dur":50.000,"args":{"Call stack":"torch/nn/modules/conv.py(443): _conv_forward;resnet.py(54): forward;train.py(3): <module>"}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1210.000,"dur":4.000,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"conv_k","pid":0,"tid":8,"ts":1300.000,"dur":30.000,"args":{"stream":8,"correlation":3}},
{"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":7,"ts":1600.000,"dur":5.000,"args":{"stream":7,"correlation":99}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":2,"ts":1100.000,"dur":3.000,"args":{"correlation":4}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":9,"ts":1104.000,"dur":2.000,"args":{"stream":9,"correlation":4}}
]}
EOF
cat >hand.want <<'EOF'
kernel:10	gemm_a	cuda_runtime:8	cpu_op:7	aten::addmm	user_annotation:4	7	step:0	model.py(20): forward	python_function:3	5000	0
kernel:11	gemm_b	cuda_runtime:9	cpu_op:7	aten::addmm	user_annotation:4	7	step:0	model.py(20): forward	python_function:3	20000	15000
gpu_memcpy:17	Memcpy HtoD	cuda_runtime:16	-	-	-	7	step:0	-	-	4000	0
kernel:14	conv_k	cuda_runtime:13	cpu_op:12	aten::conv2d	-	7	step:0	resnet.py(54): forward	cpu_op:12	90000	0
kernel:15	orphan	-	-	-	-	-	-	-	-	-	-
EOF
run kt-correlate hand.json >hand.tsv 2>hand.err
awk -F '\t' 'BEGIN { OFS = "\t" } NR > 1 { print $1, $5, $8, $10, $11, $12, $14, $15, $16, $17, $18, $19 }' \
    hand.tsv | sort >hand.got
sort hand.want >hand.wants
if cmp -s hand.wants hand.got; then
	ok "hand: chains, delays and queue times as worked out"
else
	bad "hand: $(diff hand.wants hand.got | tr '\n' '|')"
fi
if grep -qx 'kt-correlate: 5 activities: 1 without a launching call, 1 more without a CPU op, 2 without a user frame' hand.err; then
	ok "hand: missing links counted"
else
	bad "hand: stderr: $(cat hand.err)"
fi
# --id: an activity, an outer op (linear is not the innermost), a step.
ids() {
	run kt-correlate --id "$1" hand.json 2>/dev/null | awk -F '\t' 'NR > 1 { print $1 }' | sort | tr '\n' ' '
}
[ "$(ids kernel:14)" = "kernel:14 " ] && ok "--id an activity" || bad "--id kernel:14: $(ids kernel:14)"
[ "$(ids cpu_op:6)" = "kernel:10 kernel:11 " ] && ok "--id an outer op: what it launched" ||
    bad "--id cpu_op:6: $(ids cpu_op:6)"
[ "$(ids 0,15)" = "gpu_memcpy:17 kernel:10 kernel:11 kernel:14 kernel:15 " ] &&
    ok "--id a step and a bare number" || bad "--id 0,15: $(ids 0,15)"
run kt-correlate --id 5 --id python_function:3 hand.json >/dev/null 2>idmiss.err
rc=$?
if [ $rc -eq 1 ] && grep -q 'row 5: no GPU activity' idmiss.err &&
    ! grep -q 'row 3:' idmiss.err; then
	ok "--id that matches nothing: reported, exit 1"
else
	bad "--id unmatched: rc $rc, $(cat idmiss.err)"
fi
# --frame-skip replaces the rule: skipping nothing but model.py, the
# innermost frame of gemm_a is torch's module.py.
run kt-correlate --frame-skip '^model\.py$' hand.json 2>/dev/null |
    awk -F '\t' '$1 == "kernel:10" { print $16 }' >fs.got
[ "$(cat fs.got)" = "torch/nn/modules/module.py(1500): _call_impl" ] &&
    ok "--frame-skip replaces the default" || bad "--frame-skip: $(cat fs.got)"
run kt-correlate --frame-skip '(' hand.json >/dev/null 2>fsbad.err
rc=$?
[ $rc -eq 2 ] && grep -q "^kt-correlate: frame skip regex '('" fsbad.err &&
    ok "bad --frame-skip: exit 2" || bad "bad --frame-skip: rc $rc $(cat fsbad.err)"
run kt-correlate --id kernel: hand.json >/dev/null 2>&1
[ $? -eq 2 ] && ok "bad --id: exit 2" || bad "bad --id: not a usage error"
# JSON lines: numbers are numbers, a missing link null... or "-".
if run kt-correlate --json hand.json 2>/dev/null |
    jq -e -s 'length == 5 and (.[] | select(.row == "kernel:11") | .queue_ns == 15000 and .delay_ns == 20000)' >/dev/null; then
	ok "--json: one object per activity, numbers"
else
	bad "--json"
fi
# No GPU activity: the table is empty, exit 1.
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}' >cpu.json
run kt-correlate cpu.json >cpu.tsv 2>cpu.err
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <cpu.tsv)" -eq 1 ] && grep -q 'no GPU activity' cpu.err &&
    ok "no GPU activity: exit 1" || bad "no GPU activity: rc $rc $(cat cpu.err)"
# The default skip regex of the man page is the code's.
man=$(dirname "$0")/../../man/kt-correlate.1
[ -f "$man" ] || man=$KT_BIN/../man/kt-correlate.1
hdr=$(dirname "$0")/../../lib/kt.h
[ -f "$hdr" ] || hdr=$KT_BIN/../lib/kt.h
m=$(sed -n '/^The default, exactly:/,/^\.Ed/p' "$man" | sed '1,2d;$d' | tr -d '\n' | sed 's/\\e/\\/g')
c=$(sed -n '/^#define KT_FRAME_SKIP/,/[^\\]$/p' "$hdr" | sed '1d' | sed 's/^[[:space:]]*"//; s/"[[:space:]]*\\*$//' | tr -d '\n' | sed 's/\\\\/\\/g')
[ -n "$m" ] && [ "$m" = "$c" ] && ok "man page: the default frame skip regex is the code's" ||
    bad "man page frame skip differs: man '$m' code '$c'"

# graph_node: a CUDA graph's kernel's args."graph node id", as jq reads
# it (row = the index in traceEvents), and "-" for every other activity.
"$gen" --graph --streams 8 --steps 2 --layers 2 -o gnode.json
run kt-correlate gnode.json 2>/dev/null | awk -F'\t' 'NR > 1 && $22 != "-" {
	sub(/^[a-z_]+:/, "", $1); print $1 "\t" $22 }' | sort >gnode.got
jq -r '.traceEvents | to_entries[] | select(.value.cat == "kernel" and
    .value.args["graph node id"] != null) |
    "\(.key)\t\(.value.args["graph node id"])"' gnode.json | sort >gnode.want
if [ "$(wc -l <gnode.want)" -gt 50 ] && cmp -s gnode.want gnode.got &&
    [ "$(run kt-correlate eager.json 2>/dev/null | awk -F'\t' 'NR > 1 && $22 != "-"' | wc -l)" -eq 0 ]; then
	ok "graph_node: every graph kernel's node id, as jq reads it"
else
	bad "graph_node: $(diff gnode.want gnode.got | head -3 | tr '\n' ' ')"
fi
