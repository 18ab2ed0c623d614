# tests/t/gaps.sh: kt-gaps.  The judges are independent of the filter:
#  - the generator's ground truth: --inject-gap and --inject-tiny put a
#    GPU gap and a run of tiny kernels of known size into every step,
#    and the truth file says where (exact ns), in which step, and which
#    CPU record and python frame were open at its middle; its step rows
#    give each step's union, from which the step windows of kt-gaps(1)
#    follow (a step runs from the end of the previous one's GPU work);
#  - awk over the TSV event form: no reported gap touches any GPU
#    activity of any stream, each gap starts where an activity ends and
#    ends where one starts, and the idle time of a window is its length
#    minus the union;
#  - real traces: the ResNet-50 pair with 0 and 4 data-loader workers.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
gen=$KT_BUILD/ktgen
cd "$TMP" || exit 1

# acts FILE: "start_ns<TAB>end_ns" of every GPU activity, absolute ns
# (the TSV form counts from ktOriginNs, in its trace row).
acts() {
	kt-normalize --tsv "$1" | awk -F'\t' -v OFS='\t' '
	$2 == "trace" { match($10, /"ktOriginNs":[0-9]+/); o = substr($10, RSTART + 13, RLENGTH - 13) + 0 }
	$2 == "kernel" || $2 == "gpu_memcpy" || $2 == "gpu_memset" { print o + $4, o + $4 + $5 }'
}

# ------------------------------------------------------------------
# Injected gaps and tiny runs, found to the ns.
"$gen" --steps 5 --layers 4 --inject-gap 300000 --inject-tiny 12 \
    --truth g.truth -C g.chain -o g.json
if run kt-gaps --summary g.json >g.tsv 2>g.err && [ ! -s g.err ]; then
	# Window starts: a step's from the previous step's GPU end; and
	# the step's CPU start (ProfilerStep#N), the origin of offsets.
	awk -F'\t' -v OFS='\t' '$1 == "step" { print $2, (n++ ? prev : $6), $8; prev = $7 }' \
	    g.truth >win.tsv
	# Every injected gap: start, duration, step, offset, the CPU
	# record and python frame at its middle, the longest CPU span.
	if awk -F'\t' 'FILENAME == "win.tsv" { w[$1] = $2; c[$1] = $3; next }
	    FILENAME == "g.truth" { if ($1 == "gap") { n++; k = $2 SUBSEP $6; want[k] = ($7 - $6) "|" ($6 - c[$2]) "|" $16 }
		if ($1 == "gap-python") py[$2 SUBSEP $6] = $16; next }
	    $4 == "gap" { k = $3 SUBSEP $5; if (k in want) { got = $7 "|" $6 "|" $14
		if (got != want[k] || $16 != py[k] || $15 != "ktgen: injected stall" || $9 != $7 || $8 != 0) { print "got", got, $15, $16, "want", want[k], py[k]; exit 1 }
		found++ } }
	    END { if (found != n || n != 5) { print "found", found, "of", n; exit 1 } }' \
	    win.tsv g.truth g.tsv >why 2>&1; then
		ok "gaps-injected"
	else
		bad "gaps-injected: $(tr "\n" " " <why)"
	fi
	# The user frame at an injected gap's middle is the truth's python
	# frame there (model.py, the user's); the op after it is the one
	# the generator's --truth-chain gives the kernel that ends the gap.
	# The data-loader stalls' innermost frame is torch's dataloader.py:
	# the user's is train.py(88), which calls next() (ktgen.c).
	jq -r '.traceEvents | to_entries[] | select(.value.ph == "X") |
	    "\(.key)\t\(.value.ts * 1000 | round)\t\(.value.name)"' g.json >g.rows
	if awk -F'\t' '
	    FILENAME == "g.rows" { start[$1] = $2; name[$1] = $3; next }
	    FILENAME == "g.chain" { if (FNR > 1) op[start[$1]] = $3 == "-" ? "-" : name[$3]; next }
	    FILENAME == "g.truth" { if ($1 == "gap-python") { py[$2 SUBSEP $6] = $16; end[$2 SUBSEP $6] = $7; n++ } next }
	    $4 == "gap" { k = $3 SUBSEP $5
		if (k in py) { if ($17 != py[k] || $18 != op[end[k]] || $18 == "") { print "got", $17, $18, "want", py[k], op[end[k]]; exit 1 }; found++ }
		else if ($16 ~ /dataloader\.py/) { if ($17 != "train.py(88): train_step") { print "loader", $17; exit 1 }; loader++ } }
	    END { if (found != n || n != 5 || loader < 1) { print "found", found, "of", n, "loader", loader; exit 1 } }' \
	    g.rows g.chain g.truth g.tsv >why 2>&1; then
		ok "gaps-frame: the user frame and the op after the gap, as the generator made them"
	else
		bad "gaps-frame: $(tr "\n" " " <why)"
	fi
	# Every tiny run: start, span, busy (the union), cost, kernels, the
	# CPU record at its middle.
	if awk -F'\t' 'FILENAME == "win.tsv" { w[$1] = $2; c[$1] = $3; next }
	    FILENAME == "g.truth" { if ($1 == "tiny") { n++; k = $2 SUBSEP $6
		want[k] = ($7 - $6) "|" $14 "|" ($7 - $6 - $14) "|" $10 "|" ($6 - c[$2]) "|" $16 } next }
	    $4 == "tiny-run" { k = $3 SUBSEP $5; if (k in want) {
		got = $7 "|" $8 "|" $9 "|" $11 "|" $6 "|" $14
		if (got != want[k]) { print "got", got, "want", want[k]; exit 1 }
		found++ } }
	    END { if (found != n || n != 5) { print "found", found, "of", n; exit 1 } }' \
	    win.tsv g.truth g.tsv >why 2>&1; then
		ok "gaps-tiny-runs"
	else
		bad "gaps-tiny-runs: $(tr "\n" " " <why)"
	fi
	# Step rows: busy is the truth's union, wall runs from the window
	# start to the step's GPU end; the total row adds them up.
	if awk -F'\t' 'FILENAME == "win.tsv" { w[$1] = $2; c[$1] = $3; next }
	    FILENAME == "g.truth" { if ($1 == "step") { u[$2] = $14; e[$2] = $7; n++ } next }
	    $4 == "step" { if ($8 != u[$3] || $7 != e[$3] - w[$3] || $5 != w[$3] || $9 != $7 - $8) exit 1; m++; tw += $7; tb += $8 }
	    $4 == "total" { t = ($7 == tw && $8 == tb) }
	    END { exit !(m == n && t) }' win.tsv g.truth g.tsv; then
		ok "gaps-step-rows"
	else
		bad "gaps-step-rows: $(grep -P '\tstep\t' g.tsv | head -2)"
	fi
else
	bad "gaps-injected: $(head -2 g.err)"
	bad "gaps-tiny-runs: no table"
	bad "gaps-step-rows: no table"
fi

# The TSV event form gives the same table as the JSON.
if kt-normalize --tsv g.json | run kt-gaps --summary >g2.tsv 2>/dev/null &&
    cmp -s g.tsv g2.tsv; then
	ok "gaps-tsv-input"
else
	bad "gaps-tsv-input: the tables differ"
fi

# No false gaps, every idle ns counted: with --min-gap 0 each gap lies
# between activities (touching no activity of any stream, starting at an
# activity's end, ending at one's start), and per window the gaps add up
# to its idle time.  In eager mode the NCCL stream overlaps compute; in
# graph mode 50 streams overlap.
"$gen" --graph --streams 50 --steps 2 --layers 2 -o gr.json
for t in g gr; do
	acts $t.json | sort -n >acts.$t
	if run kt-gaps --min-gap 0 --summary $t.json >z.$t 2>/dev/null &&
	    awk -F'\t' 'FILENAME ~ /^acts/ { s[++n] = $1; e[n] = $2; st[$1] = 1; en[$2] = 1; next }
		$4 == "gap" { a = $5; b = $5 + $7; g++
		    if (!(a in en) || !(b in st)) { print "gap", a, b, "not between activities"; exit 1 }
		    for (i = 1; i <= n && s[i] < b; i++) if (e[i] > a) { print "gap", a, b, "touches", s[i], e[i]; exit 1 }
		    idle[$3] += $7 }
		$4 == "step" { if (idle[$3] != $9) { print "step", $3, "idle", $9, "gaps", idle[$3]; exit 1 } m++ }
		END { exit !(g > 0 && m > 0) }' acts.$t z.$t >why 2>&1; then
		ok "gaps-no-false-gaps-$t"
	else
		bad "gaps-no-false-gaps-$t: $(tr "\n" " " <why)"
	fi
done

# --top K keeps the K costliest rows of the full ranking.
if run kt-gaps --top 4 g.json >top.tsv 2>/dev/null &&
    run kt-gaps g.json 2>/dev/null | head -5 | cmp -s - top.tsv &&
    [ "$(wc -l <top.tsv)" -eq 5 ] &&
    awk -F'\t' 'NR > 2 && $9 > prev { exit 1 } { prev = $9 }' top.tsv; then
	ok "gaps-top"
else
	bad "gaps-top: $(cut -f9 top.tsv | tr '\n' ' ')"
fi

# --fail-above: idle share over the whole trace, against the total row.
run kt-gaps --min-gap 0 --summary g.json >all.tsv 2>/dev/null
pct=$(awk -F'\t' '$4 == "total" { printf "%d", $9 * 100 / $7 }' all.tsv)
run kt-gaps --fail-above $((pct + 1)) g.json >/dev/null 2>&1
a=$?
run kt-gaps --fail-above "$pct" g.json >/dev/null 2>fail.err
b=$?
if [ "$a" -eq 0 ] && [ "$b" -eq 1 ] && grep -q "idle is" fail.err; then
	ok "gaps-fail-above"
else
	bad "gaps-fail-above: $a $b at $pct%"
fi

# JSON lines mirror the TSV rows.
if run kt-gaps --json --summary g.json >g.jsonl 2>/dev/null &&
    [ "$(jq -s 'length' g.jsonl)" -eq "$(($(wc -l <g.tsv) - 1))" ] &&
    jq -e -s 'all(.[]; (.cost_ns | type) == "number") and
	(map(select(.kind == "gap")) | length > 0 and all(.[]; .busy_ns == 0))' \
	g.jsonl >/dev/null; then
	ok "gaps-json"
else
	bad "gaps-json"
fi

# Two ranks merged by kt rank-tag: the same idle per rank as each alone.
"$gen" --steps 2 --layers 2 --rank 0 --world 2 --inject-gap 100000 -o r0.json
"$gen" --steps 2 --layers 2 --rank 1 --world 2 -o r1.json
if kt-rank-tag r0.json r1.json -o both.json 2>/dev/null &&
    run kt-gaps --min-gap 0 --summary both.json >both.tsv 2>/dev/null &&
    run kt-gaps --min-gap 0 --summary r0.json >r0.tsv 2>/dev/null &&
    run kt-gaps --min-gap 0 --summary r1.json >r1.tsv 2>/dev/null &&
    [ "$(awk -F'\t' '$4 == "total" { print $1, $7, $8, $9 }' both.tsv)" = \
      "$(awk -F'\t' '$4 == "total" { print $1, $7, $8, $9 }' r0.tsv r1.tsv)" ]; then
	ok "gaps-ranks"
else
	bad "gaps-ranks: $(grep -P '\ttotal\t' both.tsv r0.tsv r1.tsv)"
fi

# ------------------------------------------------------------------
# Real traces: ResNet-50 with 0 data-loader workers stalls the GPU for
# tens of ms at the start of every step, in the DataLoader; with 4
# workers the stall is gone.
if have_shared; then
	w0=$(ls "$KT_SHARED"/kineto/resnet50_num_workers_0/*.json.gz 2>/dev/null | head -1)
	w4=$(ls "$KT_SHARED"/kineto/resnet50_num_workers_4/*.json.gz 2>/dev/null | head -1)
	if [ -n "$w0" ] && [ -n "$w4" ]; then
		run kt-gaps --summary "$w0" >w0.tsv 2>/dev/null
		run kt-gaps --summary "$w4" >w4.tsv 2>/dev/null
		n0=$(awk -F'\t' '$4 == "gap" && $7 >= 20000000 && $15 ~ /DataLoader/' w0.tsv | wc -l)
		n4=$(awk -F'\t' '$4 == "gap" && $7 >= 20000000' w4.tsv | wc -l)
		s0=$(awk -F'\t' '$4 == "total" { print int($10) }' w0.tsv)
		s4=$(awk -F'\t' '$4 == "total" { print int($10) }' w4.tsv)
		steps=$(awk -F'\t' '$4 == "step"' w0.tsv | wc -l)
		if [ "$n0" -ge $((steps - 2)) ] && [ "$n0" -ge 3 ] && [ "$n4" -eq 0 ] &&
		    [ "$s0" -gt "$s4" ]; then
			ok "gaps-resnet-dataloader"
		else
			bad "gaps-resnet-dataloader: $n0 stalls of $steps steps ($s0% idle), $n4 with workers ($s4%)"
		fi
	else
		skip "gaps-resnet-dataloader: no ResNet-50 pair"
	fi
	# Every real trace with GPU work: total idle per rank and device
	# from --min-gap 0 --summary equals the sum of the gaps; well
	# under a second each.
	n=0
	badf=
	# Under $VALGRIND the sixty real traces take too long.
	[ -n "$VALGRIND" ] && n=-1
	[ "$n" -eq 0 ] && for f in $(awk -F'\t' 'NR > 1 && $9 > 0 && $1 !~ /^damaged/ { print $1 }' "$KT_SHARED/INDEX.tsv"); do
		[ -f "$KT_SHARED/$f" ] || continue
		n=$((n + 1))
		if ! run kt-gaps --min-gap 0 --summary "$KT_SHARED/$f" >real.tsv 2>/dev/null ||
		    ! awk -F'\t' '$4 == "gap" { g[$1 " " $2] += $9 } $4 == "total" { t[$1 " " $2] = $9; w[$1 " " $2] = $7 - $8 }
			END { for (k in t) if (t[k] != g[k] + 0 || t[k] != w[k]) exit 1; exit !length(t) }' real.tsv; then
			badf="$badf $f"
		fi
	done
	if [ "$n" -eq -1 ]; then
		skip "gaps-real-traces: under valgrind"
	elif [ -z "$badf" ] && [ "$n" -gt 10 ]; then
		ok "gaps-real-traces ($n)"
	else
		bad "gaps-real-traces:$badf"
	fi
else
	skip "gaps-resnet-dataloader: no shared traces"
	skip "gaps-real-traces: no shared traces"
fi

# --tiny: g.json has an injected run of tiny kernels in each of its 5
# steps; with --tiny 1ns no kernel is short enough, so no run is left.
n5=$(run kt-gaps --tsv g.json 2>/dev/null | awk -F'\t' '$4 == "tiny-run"' | wc -l)
n1=$(run kt-gaps --tiny 1ns --tsv g.json 2>/dev/null | awk -F'\t' '$4 == "tiny-run"' | wc -l)
if [ "$n5" -ge 5 ] && [ "$n1" -eq 0 ]; then
	ok "gaps --tiny"
else
	bad "gaps --tiny: $n5 runs by default, $n1 with --tiny 1ns"
fi

# --by cause: the plain rows (every one, before --top) folded with awk by
# rank, device, cpu and frame (columns 1, 2, 14, 17): counts of gap and
# run rows, dur and cost sums, the costliest row's cost and start.
fold_rows() {
	awk -F'\t' 'NR > 1 && ($4 == "gap" || $4 == "tiny-run") {
		k = $1 "\t" $2 "\t" $14 "\t" $17
		if ($4 == "gap") g[k]++; else r[k]++
		d[k] += $7; c[k] += $9
		if (!(k in mc) || $9 > mc[k]) { mc[k] = $9; ms[k] = $5 }
	} END { for (k in c) print k "\t" g[k] + 0 "\t" r[k] + 0 "\t" d[k] "\t" c[k] "\t" mc[k] "\t" ms[k] }' "$1" | sort
}
for tr in g.json ${KT_SHARED:+$KT_SHARED/kineto/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz}; do
	[ -f "$tr" ] || continue
	run kt-gaps --tsv "$tr" >cause.rows 2>/dev/null
	run kt-gaps --tsv --by cause "$tr" >cause.tsv 2>/dev/null
	fold_rows cause.rows >cause.want
	awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 "\t" $8 "\t" $10 "\t" $11 }' cause.tsv | sort >cause.got
	nr=$(wc -l <cause.rows)
	nc=$(wc -l <cause.got)
	if cmp -s cause.want cause.got && [ "$nc" -gt 1 ] && [ "$nc" -lt "$nr" ] &&
	    [ "$(run kt-gaps --tsv --by cause -k 2 "$tr" 2>/dev/null | wc -l)" -eq 3 ]; then
		ok "gaps --by cause: $((nr - 1)) rows folded into $nc causes ($(basename "$tr"))"
	else
		bad "gaps --by cause ($(basename "$tr")): $(diff cause.want cause.got | head -3 | tr '\n' ' ')"
	fi
done
if awk -F'\t' 'NR > 1 { s += $9 } END { exit !(s > 99.5 && s < 100.5) }' cause.tsv &&
    { run kt-gaps --by nope g.json >/dev/null 2>&1; [ $? -eq 2 ]; }; then
	ok "gaps --by cause: lost_pct adds up to 100; a bad --by is a usage error"
else
	bad "gaps --by cause: lost_pct or --by nope"
fi
