# tests/t/decompose.sh: kt-decompose.  The generator's truth judges
# every step exactly to the ns: busy = the truth's union_ns, the window
# (kt(7) Step windows) from the end of the step before's (the first
# step: its first GPU start, start_ns) to its last GPU end (end_ns),
# idle = wall - busy, and the --truth-more rows give compute,
# communication, transfer, exposed and hidden communication.  awk
# recomputes the steady summary from the series; on two merged ranks
# the straggler table is recomputed from the per-rank truths.  Real
# traces: the DLRM ranks (NCCL, merged), the TraceLens MI300 trace
# (RCCL), and HTA's temporal breakdown recomputed by a Python oracle
# with HTA's own definitions over all phases of an HTA test trace.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

# expect TRUTH XTRUTH: the series rows kt should give, from the truths.
expect() {
	awk -F '\t' '
	FNR == 1 { f++; next }
	f == 1 && $1 == "step" { n++; st[n] = $2; gs[n] = $6; ge[n] = $7; un[n] = $14 }
	f == 2 && $1 == "step" { c[$2] = $6; m[$2] = $7; t[$2] = $8; e[$2] = $9; h[$2] = $10 }
	END {
		for (i = 1; i <= n; i++) {
			start = i > 1 ? ge[i - 1] : gs[i]
			w = ge[i] - start
			print st[i], start, ge[i], w, un[i], w - un[i], c[st[i]], m[st[i]], e[st[i]], h[st[i]], t[st[i]]
		}
	}' "$1" "$2"
}
# got SERIES: the same columns from kt-decompose --series.
got() {
	awk -F '\t' 'NR > 1 && $3 == "step" { print $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 }' "$1"
}

for mode in "eager:--steps 8 --layers 2" "graph:--graph --streams 12 --steps 4 --layers 2" \
    "rank:--steps 5 --layers 3 -r 3 -w 4 --seed 7"; do
	name=${mode%%:*}
	# shellcheck disable=SC2086
	"$gen" ${mode#*:} -t t.tsv -x x.tsv -o g.json
	run kt-decompose --series g.json >s.tsv 2>err
	expect t.tsv x.tsv >want
	got s.tsv >have
	if [ -s want ] && cmp -s want have && [ ! -s err ]; then
		ok "decompose-truth-$name"
	else
		bad "decompose-truth-$name: $(diff want have | head -4)"
	fi
	# Every window: wall = busy + idle, and the windows tile the time.
	if awk -F '\t' 'NR > 1 { if ($7 != $8 + $9 || $7 != $6 - $5) bad = 1;
	    if (NR > 2 && $5 != pe) bad = 1; pe = $6 } END { exit bad }' s.tsv; then
		ok "decompose-tiles-$name"
	else
		bad "decompose-tiles-$name"
	fi
	# The steady row is the sum of the step rows; the step statistics.
	run kt-decompose g.json >d.tsv
	a=$(awk -F '\t' 'NR > 1 && $3 == "step" { n++; w += $7; b += $8; i += $9; c += $10; m += $11; e += $12; h += $13; t += $14;
	    if (min == "" || $7 < min) min = $7; if ($7 > max) { max = $7; sl = $4 } }
	    END { printf "%d %d %d %d %d %d %d %d %d %d %d %s %d", n, w, b, i, c, m, e, h, t, min, max, sl, (w + n / 2) / n }' s.tsv)
	b=$(awk -F '\t' 'NR > 1 && $3 == "steady" { printf "%s %s %s %s %s %s %s %s %s %s %s %s %s", $4, $5, $6, $7, $8, $9, $10, $11, $12, $16, $17, $19, $15 }' d.tsv)
	if [ "$a" = "$b" ]; then ok "decompose-steady-$name"; else bad "decompose-steady-$name: $a != $b"; fi
done

# Two ranks merged: the straggler table from the two truths.
"$gen" --steps 4 --layers 2 -r 0 -w 2 -t t0.tsv -o r0.json
"$gen" --steps 4 --layers 2 -r 1 -w 2 -t t1.tsv -o r1.json
run kt-rank-tag r0.json r1.json -o m.json 2>/dev/null
run kt-decompose --ranks m.json >rk.tsv
awk -F '\t' '
	FNR == 1 { f++; next }
	$1 == "step" { n[f]++; st[f, n[f]] = $2; gs[f, n[f]] = $6; ge[f, n[f]] = $7 }
	END {
		for (i = 1; i <= n[1]; i++) {
			for (r = 1; r <= 2; r++)
				w[r] = ge[r, i] - (i > 1 ? ge[r, i - 1] : gs[r, i])
			slow = w[2] > w[1] ? 1 : 0
			lo = w[1] < w[2] ? w[1] : w[2]; hi = w[1] < w[2] ? w[2] : w[1]
			if (w[1] == w[2]) slow = 1
			print st[1, i], 2, slow, hi, lo, lo, hi - lo
		}
	}' t0.tsv t1.tsv >want
awk -F '\t' 'NR > 1 { print $1, $2, $3, $4, $5, $6, $7 }' rk.tsv >have
if cmp -s want have; then ok decompose-ranks; else bad "decompose-ranks: $(diff want have | head -4)"; fi

# The straggler: three ranks, one step, two all-reduces without Seq
# (joined by call order).  Rank 2's compute is delayed (400 us against
# 100), so it starts the first all-reduce last, at 415 us; rank 0 starts
# it at 110 us and rank 1 at 115 us, so they wait for rank 2 (305 and
# 300 us).  The second all-reduce starts at 565 us on every rank.  By
# hand: straggler 2, late 415 - 110 = 305 us; 2 ranks waiting, the
# longest rank 0 with 305 us.  (Rank 0's wait made it the "slowest
# rank" before: its all-reduce kernel runs longest.)
for r in 0 1 2; do
	c0=10 cd=100
	[ "$r" = 0 ] && c0=5
	[ "$r" = 2 ] && cd=400
	n1=$((c0 + cd + 5))
	printf '{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": %d, "dur": %d, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 20, "ts": %d, "dur": %d, "args": {"stream": 20}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 510, "dur": 50, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 20, "ts": 565, "dur": 20, "args": {"stream": 20}}
]}\n' "$c0" "$cd" "$n1" $((500 - n1)) >rank-$r.json
done
run kt-rank-tag rank-0.json rank-1.json rank-2.json -o st.json 2>/dev/null
run kt-decompose --ranks st.json >st.tsv
got=$(awk -F '\t' 'NR == 2 { print $1, $2, $8, $9, $10, $11, $12, $13 }' st.tsv)
if [ "$got" = "1 3 2 2 305000 2 0 305000" ] &&
    [ "$(head -n 1 st.tsv | cut -f 9-13)" = "$(printf 'straggler_rank\tstraggler_late_ns\twaiting_ranks\tlongest_wait_rank\tlongest_wait_ns')" ]; then
	ok decompose-straggler
else
	bad "decompose-straggler: $got"
fi

# The text and JSON forms carry the same numbers.
run kt-decompose --json g.json >d.jsonl
if [ "$(jq -r 'select(.phase == "steady") | .busy_ns' d.jsonl)" = "$(awk -F '\t' '$3 == "steady" { print $6 }' d.tsv)" ] &&
    run kt-decompose --text g.json | head -n 1 | grep -q '^rank  device  phase'; then
	ok decompose-forms
else
	bad decompose-forms
fi

# No device activity: one clear row, one line on stderr, exit 1 (a data
# condition).
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}\n' >cpu.json
run kt-decompose cpu.json >c.tsv 2>c.err
rc=$?
if [ "$rc" -eq 1 ] && [ "$(awk -F '\t' 'NR == 2 { print $2 }' c.tsv)" = "no device activity" ] &&
    [ "$(wc -l <c.err)" -eq 1 ] && grep -q '^kt-decompose: cpu.json: no device activity' c.err; then
	ok decompose-no-gpu
else
	bad decompose-no-gpu
fi

need_shared decompose-real
# The eight DLRM ranks merged: one row per rank, wall = busy + idle.
d=$S/param/dlrm_kineto
if [ -d "$d" ]; then
	run kt-rank-tag "$d"/worker*.json -o dlrm.json 2>/dev/null
	run kt-decompose dlrm.json >dl.tsv
	run kt-decompose --ranks dlrm.json >dlr.tsv
	if [ "$(awk -F '\t' '$3 == "steady"' dl.tsv | wc -l)" -eq 8 ] &&
	    awk -F '\t' 'NR > 1 && $5 != $6 + $7 { exit 1 }' dl.tsv &&
	    awk -F '\t' 'NR == 2 && $2 == 8 && $7 == $4 - $5 { f = 1 } END { exit !f }' dlr.tsv; then
		ok decompose-real-dlrm
	else
		bad "decompose-real-dlrm"
	fi
fi
# TraceLens MI300 (RCCL): communication is found and split.
f=$S/tracelens/mi300/resnet_act_checkpoint.json.gz
if [ -f "$f" ]; then
	run kt-decompose --series "$f" >mi.tsv
	if awk -F '\t' 'NR > 1 { w += $7; b += $8; m += $11; e += $12; h += $13; if ($7 != $8 + $9 || $11 != $12 + $13) bad = 1 }
	    END { exit bad || m == 0 || e == 0 }' mi.tsv; then
		ok decompose-real-mi300
	else
		bad decompose-real-mi300
	fi
fi
# HTA's temporal breakdown, by HTA's definitions (kernel span, union of
# all kernels, union of compute kernels: not nccl, not Memcpy/Memset),
# against kt-overlap --summary's span, busy and compute, which use the
# same intervals (HTA also drops the trace's last iteration; this does
# not, so both sides keep every event).
{ py_trace_head; cat <<'EOF'; } >hta.py
k = {}
for e in (d['traceEvents'] if isinstance(d, dict) else d):
    if e.get('ph') != 'X' or e.get('cat') not in ('kernel', 'gpu_memcpy', 'gpu_memset'):
        continue
    if 'stream' not in (e.get('args') or {}):
        continue
    s = ns(e['ts']); t = s + ns(e['dur']); n = e.get('name', '')
    c = 'comm' if 'nccl' in n.lower() else 'mem' if ('Memcpy' in n or 'Memset' in n) else 'comp'
    k.setdefault(str(e.get('pid')), []).append((s, t, c))
def union(iv):
    out = []
    for s, t in sorted(i for i in iv if i[1] > i[0]):
        if out and s <= out[-1][1]: out[-1][1] = max(out[-1][1], t)
        else: out.append([s, t])
    return out
def length(u): return sum(t - s for s, t in u)
def inter(a, b):
    i = j = tot = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0]); t = min(a[i][1], b[j][1])
        if t > s: tot += t - s
        if a[i][1] < b[j][1]: i += 1
        else: j += 1
    return tot
for pid in sorted(k):
    iv = k[pid]
    al = union([(s, t) for s, t, c in iv]); cp = union([(s, t) for s, t, c in iv if c == 'comp'])
    cm = union([(s, t) for s, t, c in iv if c == 'comm'])
    span = al[-1][1] - al[0][0]
    print(span, span - length(al), length(cp), length(al) - length(cp), length(cm), inter(cm, cp))
EOF
if ! command -v python3 >/dev/null 2>&1; then
	skip "hta oracle: no python3"
	exit 0
fi
n=0
for t in hta/trace_filter/sampled_rank-0.json.gz hta/nccl_parser_config/nccl_data.json.gz \
    hta/negative_queue_length_values_check/rank0.json.gz; do
	[ -f "$S/$t" ] || continue
	n=$((n + 1))
	python3 hta.py "$S/$t" >want 2>/dev/null
	run kt-overlap --summary "$S/$t" | awk -F '\t' 'NR > 1 { print $10, $10 - $9, $11, $9 - $11, $5, $7 }' >have
	# kt-decompose's windows tile the trace: their busy and compute add
	# up to the same unions.
	run kt-decompose --series "$S/$t" | awk -F '\t' 'NR > 1 { b += $8; c += $10 } END { print b, c }' >dsum
	if [ -s want ] && cmp -s want have &&
	    [ "$(cat dsum)" = "$(awk '{ print $1 - $2, $3 }' want)" ]; then
		ok "decompose-hta-temporal-$n"
	else
		bad "decompose-hta-temporal-$n: $t: $(cat want) != $(cat have)"
	fi
done
