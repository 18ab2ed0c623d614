# tests/t/mergecross.sh: the cross-rank figures from per-rank tables
# alone (issue 15).  Each rank's trace is mapped to its kt-decompose
# (default, --series) and kt-overlap (default, --summary) tables; their
# --merge (given in reverse order) must equal, byte for byte, the table
# of the kt rank-tag merged trace, which kt computes the other way (one
# model of every rank, joins over its activities): decompose, --series,
# --ranks, overlap and overlap --summary, every column, and the views
# folders' 1_runtime_decomposition and 4_overlap_exposure tables (what
# kt views --merge reads).  No column
# differs by design on these traces: the one that could is a device
# without an index ("pid:P", which kt rank-tag renumbers); ktgen's GPUs
# have one.  The hand-made ranks below have no args.device: their
# device column is the pid, 0 in each rank's trace, 1000, 2000, 3000 in
# the merged one; every other column is compared there.  Judges independent of kt: the generator's truths give the
# whole --ranks table (walls from the step rows, lateness and waits from
# the comm rows' starts joined by Seq), so the straggler injected on rank
# 2 (--inject-gap) is found with its exact lateness; a Python oracle
# over the traces gives compute_before_ns and longest_compute_rank.
# Joins by Seq (ktgen), by call order (jq takes Seq and Comms Id off),
# ties at equal starts (hand-made ranks), graph mode; and the errors.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

# same NAME WANT HAVE: ok when WANT has rows and HAVE is the same (with
# nodev set, but for the device column, the second).
same() {
	# (The --ranks table has no device column.)
	if [ -n "$nodev" ] && [ "$2" != r.want ]; then
		cut -f 1,3- "$2" >"$2.cut"
		cut -f 1,3- "$3" >"$3.cut"
		set -- "$1" "$2.cut" "$3.cut"
	fi
	if [ "$(wc -l <"$2")" -gt 1 ] && cmp -s "$2" "$3"; then
		ok "$1"
	else
		bad "$1: $(diff "$2" "$3" | head -4)"
	fi
}

# equalities NAME TRACE...: every merge against the merged trace.
equalities() {
	_n=$1
	shift
	rm -f d.*.tsv s.*.tsv o.*.tsv v.*.tsv
	_i=0
	for _t in "$@"; do
		run kt-decompose "$_t" >d.$_i.tsv
		run kt-decompose --series "$_t" >s.$_i.tsv
		run kt-overlap "$_t" >o.$_i.tsv
		run kt-overlap --summary "$_t" >v.$_i.tsv
		_i=$((_i + 1))
	done
	run kt-rank-tag "$@" -o all.json 2>/dev/null
	run kt-decompose all.json >d.want
	run kt-decompose --series all.json >s.want
	run kt-decompose --ranks all.json >r.want
	run kt-overlap all.json >o.want
	run kt-overlap --summary all.json >v.want
	# shellcheck disable=SC2046
	{
		run kt-decompose --merge $(ls -r d.*.tsv) >d.have
		run kt-decompose --merge --series $(ls -r s.*.tsv) >s.have
		run kt-decompose --merge --ranks $(ls -r o.*.tsv s.*.tsv) >r.have
		run kt-overlap --merge $(ls -r o.*.tsv) >o.have
		run kt-overlap --merge --summary $(ls -r v.*.tsv) >v.have
	}
	same "mergecross-$_n-decompose" d.want d.have
	same "mergecross-$_n-series" s.want s.have
	same "mergecross-$_n-ranks" r.want r.have
	same "mergecross-$_n-overlap" o.want o.have
	same "mergecross-$_n-summary" v.want v.have
}

# Four ranks; rank 2 stalls 20 ms before the forward of layer 1 of
# every step, so it starts every all-reduce last.
for r in 0 1 2 3; do
	g=
	[ "$r" = 2 ] && g="--inject-gap 20000000"
	# shellcheck disable=SC2086
	"$gen" --steps 5 --layers 2 -r $r -w 4 $g -t t$r.tsv -x x$r.tsv -o r$r.json
done
equalities seq r0.json r1.json r2.json r3.json
# What kt views --merge reads: the views folders' tables of each rank
# merge into those of the merged trace's folder.
for r in 0 1 2 3; do run kt-views r$r.json -o v$r >/dev/null 2>&1; done
run kt-views all.json -o vall >/dev/null 2>&1
run kt-decompose --merge v3/1_runtime_decomposition.tsv v2/1_runtime_decomposition.tsv \
    v1/1_runtime_decomposition.tsv v0/1_runtime_decomposition.tsv >vd.have
run kt-overlap --merge v3/4_overlap_exposure.tsv v2/4_overlap_exposure.tsv \
    v1/4_overlap_exposure.tsv v0/4_overlap_exposure.tsv >vo.have
same mergecross-views-decompose vall/1_runtime_decomposition.tsv vd.have
same mergecross-views-overlap vall/4_overlap_exposure.tsv vo.have
# The joins are there (not every cross-rank cell "-").
if awk -F '\t' 'NR > 1 && $21 == "seq" && $18 == 4 { n++ } END { exit n == 0 }' o.have &&
    awk -F '\t' 'NR > 1 && $9 == "-" { bad = 1 } END { exit bad || NR < 2 }' r.have; then
	ok mergecross-seq-joined
else
	bad "mergecross-seq-joined: $(sed -n 2p r.have)"
fi

# The --ranks table from the truths: the walls (kt(7) Step windows: from
# the step before's GPU end, the first from its own start), and per Seq
# each rank's start minus the earliest (late) and the latest minus its
# own (wait), summed per step (the step of the earliest start).
awk -F '\t' '
	FNR == 1 { f++; r = int((f - 1) / 2); if (r + 1 > R) R = r + 1; next }
	f % 2 == 1 && $1 == "step" {
		n[r]++; i = n[r]; ge[r, i] = $7
		wall[r, $2] = ge[r, i] - (i > 1 ? ge[r, i - 1] : $6); st[$2] = 1
	}
	f % 2 == 0 && $1 == "comm" { cs[r, $3] = $4; cst[r, $3] = $2; q[$3] = 1 }
	END {
		for (k in q) {
			lo = hi = ""
			for (r = 0; r < R; r++) {
				if (lo == "" || cs[r, k] < lo) { lo = cs[r, k]; s = cst[r, k] }
				if (hi == "" || cs[r, k] > hi) hi = cs[r, k]
			}
			nc[s]++
			for (r = 0; r < R; r++) { late[s, r] += cs[r, k] - lo; wt[s, r] += hi - cs[r, k] }
		}
		for (s in st) {
			# Ranks by (wall, rank): the longest last, the lower middle.
			for (r = 0; r < R; r++) o[r] = r
			for (a = 1; a < R; a++)
				for (b = a; b > 0 && wall[o[b - 1], s] > wall[o[b], s]; b--) { t = o[b]; o[b] = o[b - 1]; o[b - 1] = t }
			md = wall[o[int((R - 1) / 2)], s]; hw = wall[o[R - 1], s]
			sl = 0; lw = 0
			for (r = 1; r < R; r++) {
				if (late[s, r] > late[s, sl]) sl = r
				if (wt[s, r] > wt[s, lw]) lw = r
			}
			nw = 0
			for (r = 0; r < R; r++) if (r != sl && wt[s, r] > 0) nw++
			printf "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", s, R, o[R - 1], hw, md, wall[o[0], s], hw - md, nc[s]
			if (nc[s] == 0 || late[s, sl] == 0) print "\t-\t-\t-\t-\t-"
			else printf "\t%d\t%d\t%d\t%d\t%d\n", sl, late[s, sl], nw, lw, wt[s, lw]
		}
	}' t0.tsv x0.tsv t1.tsv x1.tsv t2.tsv x2.tsv t3.tsv x3.tsv | sort -n >want
tail -n +2 r.have | cut -f 1-13 >have
same mergecross-ranks-truth want have
# The injected straggler: rank 2 in every step, late by the truth's sum.
if [ "$(awk -F '\t' 'NR > 1 && $9 != 2' r.have | wc -l)" -eq 0 ] &&
    [ "$(awk -F '\t' 'NR > 1 && $10 > 20000000' r.have | wc -l)" -eq 5 ]; then
	ok mergecross-straggler
else
	bad "mergecross-straggler: $(cut -f 1,9,10 r.have | tr '\n' ' ')"
fi

# compute_before_ns and longest_compute_rank from the traces: compute
# is every kernel but NCCL's (ktgen's only communication), the union
# between the latest end of the device's earlier NCCL kernels and the
# kernel's start; per Seq, the rank with the most (the lowest on a tie).
{ py_trace_head; cat <<'EOF'; } >before.py
rank = int(sys.argv[2])
ks = [e for e in d['traceEvents'] if e.get('ph') == 'X' and e.get('cat') == 'kernel']
comp = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in ks if 'nccl' not in e['name'].lower())
uni = []
for s, t in comp:
    if uni and s <= uni[-1][1]: uni[-1][1] = max(uni[-1][1], t)
    else: uni.append([s, t])
def clip(a, b): return sum(max(0, min(t, b) - max(s, a)) for s, t in uni)
prev = None
for e in sorted((e for e in ks if 'nccl' in e['name'].lower()), key=lambda e: ns(e['ts'])):
    s = ns(e['ts'])
    b = '-' if prev is None else 0 if s <= prev else clip(prev, s)
    prev = max(prev or s, s + ns(e['dur']))
    print(rank, s, e['args']['Seq'], b)
EOF
if command -v python3 >/dev/null 2>&1; then
	for r in 0 1 2 3; do python3 before.py r$r.json $r; done | sort >pwant
	awk -F '\t' 'NR > 1 { print $1, $4, $11, $27 }' o.have | sort >phave
	awk '{ q[$3] = 1 } $4 != "-" && (!($3 in m) || $4 > m[$3] || ($4 == m[$3] && $1 < w[$3])) { m[$3] = $4; w[$3] = $1 }
	    END { for (k in q) print k, (k in w) ? w[k] : "-" }' pwant | sort >lwant
	awk -F '\t' 'NR > 1 { print $11, $23 }' o.have | sort -u >lhave
	if [ -s pwant ] && cmp -s pwant phave && [ -s lwant ] && cmp -s lwant lhave; then
		ok mergecross-compute-before
	else
		bad "mergecross-compute-before: $(diff pwant phave | head -2) $(diff lwant lhave | head -2)"
	fi
	# Per step (the truth's step of each Seq): the rank whose summed
	# compute_before_ns is largest (the lowest on a tie), and the sum.
	awk 'FNR == 1 { f++ } f == 1 && $1 == "comm" { st[$3] = $2; next } f == 2 {
		if ($4 != "-") c[st[$3], $1] += $4; s[st[$3]] = 1; if ($1 + 1 > R) R = $1 + 1 }
	    END { for (k in s) { b = 0; for (r = 1; r < R; r++) if (c[k, r] > c[k, b]) b = r; print k, b, c[k, b] + 0 } }' \
	    FS='\t' x0.tsv FS=' ' pwant | sort -n >cwant
	awk -F '\t' 'NR > 1 { print $1, $14, $15 }' r.have >chave
	same mergecross-compute-step cwant chave
else
	skip "mergecross-compute-before: no python3"
fi

# Without Seq and Comms Id (jq takes them off): joined by call order,
# the same skews and last ranks as the Seq join gave.
for r in 0 1 2 3; do
	jq -c '.traceEvents |= map(if (.args | type) == "object"
	    then .args |= del(.Seq, ."Comms Id") else . end)' r$r.json >u$r.json
done
cut -f 1,4,18-20 o.have >seqjoin
equalities order u0.json u1.json u2.json u3.json
if awk -F '\t' 'NR > 1 && ($21 != "order" || $26 == "-") { bad = 1 } END { exit bad || NR < 2 }' o.have &&
    cut -f 1,4,18-20 o.have | cmp -s - seqjoin; then
	ok mergecross-order-joined
else
	bad mergecross-order-joined
fi

# Three hand-made ranks (tests/t/decompose.sh's straggler): call order,
# and the second all-reduce starts at 565 us on every rank (ties).  Their
# GPUs are numbered by pid, which kt rank-tag changes.
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
nodev=1
equalities hand rank-0.json rank-1.json rank-2.json
nodev=
# By hand (decompose.sh): straggler 2, late 305 us, 2 waiting, rank 0
# the longest, 305 us; the tie at 565 us: last rank 0, waits 0.
if [ "$(awk -F '\t' 'NR == 2 { print $8, $9, $10, $11, $12, $13 }' r.have)" = "2 2 305000 2 0 305000" ] &&
    [ "$(awk -F '\t' 'NR > 1 && $4 == 565000 { print $1, $19, $20, $22 }' o.have | sort | tr '\n' ' ')" = "0 0 0 0 1 0 0 0 2 0 0 0 " ]; then
	ok mergecross-hand
else
	bad "mergecross-hand: $(sed -n 2p r.have)"
fi

# Graph mode: three ranks, 8 streams.
for r in 0 1 2; do
	"$gen" --graph --streams 8 --steps 3 --layers 2 -r $r -w 3 -o g$r.json
done
equalities graph g0.json g1.json g2.json

# --top after the merge: the merged table's first rows.
run kt-overlap --merge --top 3 o.*.tsv >top
if [ "$(wc -l <top)" -eq 4 ] && head -n 4 o.have | cmp -s - top; then
	ok mergecross-top
else
	bad mergecross-top
fi

# Errors: one line, exit 2.  A table of another kind; a bad cell; a
# trace option with --merge.
run kt-overlap --merge d.0.tsv >out 2>err
rc1=$?
awk 'BEGIN { FS = OFS = "\t" } NR == 2 { $4 = "x" } { print }' o.0.tsv >bad.tsv
run kt-overlap --merge bad.tsv >out2 2>err2
rc2=$?
run kt-decompose --merge --rules /dev/null d.0.tsv >out3 2>err3
rc3=$?
if [ "$rc1" -eq 2 ] && [ ! -s out ] && [ "$(cat err)" = "kt-overlap: d.0.tsv:1:1: not a kt-overlap table (TSV with its header)" ] &&
    [ "$rc2" -eq 2 ] && [ "$(cat err2)" = "kt-overlap: bad.tsv:2:4: start_ns: not a whole number" ] &&
    [ "$rc3" -eq 2 ] && [ "$(wc -l <err3)" -eq 1 ]; then
	ok mergecross-errors
else
	bad "mergecross-errors: $rc1 $rc2 $rc3 $(cat err err2 err3)"
fi

need_shared mergecross-real
# Real ranks: the eight DLRM workers (NCCL, no Seq: call order) and
# HTA's two sampled ranks; every merge equals the merged trace's table.
d=$S/param/dlrm_kineto
if [ -d "$d" ]; then
	# shellcheck disable=SC2046
	equalities real-dlrm $(ls "$d"/worker*.json)
fi
d=$S/hta/trace_filter
if [ -f "$d/sampled_rank-1.json.gz" ]; then
	equalities real-hta "$d/sampled_rank-0.json.gz" "$d/sampled_rank-1.json.gz"
fi
