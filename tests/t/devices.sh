# tests/t/devices.sh: device activities of accelerators other than CUDA,
# and the views' exit status without any.  MTIA writes its device
# activities as mtia_ccp_events (dma_request a copy; event_record and
# event_wait synchronisation, not work): a small hand-written trace gives
# their kinds and busy time by hand, and on HTA's two MTIA traces a
# Python oracle (the union of the intervals of those events per pid,
# exact from the decimal text) gives kt bucket's busy row.  A trace with
# no device activity makes every view (gaps, bucket, overlap, decompose,
# views) say so in one line and exit 1, --fail-above included.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1

# Device pid 9: an op of 100 us, a copy of 50 us overlapping it by 20,
# an event_wait of 1000 us (not work), an op of 10 us at 2000 us.  By
# hand: busy = [0, 130) + [2000, 2010) = 140 us, 3 activities (one
# copy, two kernels); the gap between them is [130, 2000): 1870 us of
# the 2010 us span.
cat >mtia.json <<'EOF'
{"traceEvents": [
{"name": "process_name", "ph": "M", "pid": 9, "tid": 0, "args": {"name": "MTIA 9"}},
{"ph": "X", "cat": "mtia_ccp_events", "name": "add-dtype_Float", "pid": 9, "tid": 4, "ts": 0, "dur": 100},
{"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 9, "tid": 801, "ts": 80, "dur": 50, "args": {"direction": "DEVICE_TO_HOST", "size": 16}},
{"ph": "X", "cat": "mtia_ccp_events", "name": "event_wait", "pid": 9, "tid": 5, "ts": 130, "dur": 1000},
{"ph": "X", "cat": "mtia_ccp_events", "name": "fc-dtype_Float", "pid": 9, "tid": 4, "ts": 2000, "dur": 10}
]}
EOF
run kt-bucket mtia.json >b.tsv 2>b.err
rc=$?
got=$(awk -F '\t' '$1 == "busy" { print $5, $7 }' b.tsv)
kinds=$(run kt-select -k gpu_memcpy --count mtia.json 2>/dev/null)/$(run kt-select -k kernel --count mtia.json 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "$got" = "3 140000" ] && [ "$kinds" = "1/2" ] && [ ! -s b.err ]; then
	ok "devices-mtia-small"
else
	bad "devices-mtia-small: rc $rc, busy $got, kinds $kinds, $(cat b.err)"
fi
run kt-gaps mtia.json >g.tsv 2>g.err
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q "no device" g.err &&
    grep -q 'total: wall 2010000 ns = busy 140000 + idle 1870000 ' g.err &&
    [ "$(awk -F '\t' '$4 == "gap" { print $5, $7 }' g.tsv)" = "130000 1870000" ]; then
	ok "devices-mtia-gaps"
else
	bad "devices-mtia-gaps: rc $rc $(cat g.err) $(cat g.tsv)"
fi

# No device activity: one line, exit 1, in every view.
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}\n' >cpu.json
for v in "gaps" "gaps --fail-above 50" "bucket" "overlap" "overlap --summary" "decompose" "views -o vdir"; do
	rm -rf vdir
	# shellcheck disable=SC2086
	run kt-$v cpu.json >v.out 2>v.err
	rc=$?
	name=$(echo "$v" | cut -d ' ' -f 1-2 | tr ' ' '_')
	if [ "$rc" -eq 1 ] && [ "$(wc -l <v.err)" -eq 1 ] &&
	    grep -q "^kt-${v%% *}: cpu.json: no device activity (kernel, gpu_memcpy, gpu_memset, mtia_ccp_events) in the trace$" v.err; then
		ok "devices-none-$name"
	else
		bad "devices-none-$name: rc $rc, $(head -3 v.err)"
	fi
done

need_shared devices-real
for f in hta/mtia_trace_single_rank/mtia_rank_0.json.gz hta/mtia_inference_trace/mtia_inference_rank_0.json.gz; do
	[ -f "$S/$f" ] || { skip "devices-real $f: absent"; continue; }
	{ py_trace_head; cat <<'EOF'
iv = {}
for e in d['traceEvents']:
    if (e.get('cat') == 'mtia_ccp_events' and e.get('ph') == 'X' and 'dur' in e
            and e['name'] not in ('event_record', 'event_wait')):
        iv.setdefault(e['pid'], []).append((ns(e['ts']), ns(e['ts']) + ns(e['dur'])))
for p, v in sorted(iv.items()):
    v.sort()
    tot = 0
    cs, ce = v[0]
    for s, t in v[1:]:
        if s > ce:
            tot += ce - cs
            cs, ce = s, t
        else:
            ce = max(ce, t)
    tot += ce - cs
    print(p, len(v), tot)
EOF
	} >union.py
	python3 union.py "$S/$f" >want
	run kt-bucket "$S/$f" 2>/dev/null | awk -F '\t' '$1 == "busy" { print $3, $5, $7 }' >have
	if [ -s want ] && cmp -s want have && [ "$(cut -d ' ' -f 3 have)" -gt 0 ]; then
		ok "devices-real-mtia $(basename "$f"): busy $(cut -d ' ' -f 3 have) ns"
	else
		bad "devices-real-mtia $f: $(cat want) != $(cat have)"
	fi
done
# The AIU (Spyre) traces of aiu-trace-analyzer mark no device activity
# (events without a category, B/E pairs): said, exit 1.
f=$S/aiu-trace-analyzer/sample_flex_3062_job_4.json
if [ -f "$f" ]; then
	run kt-gaps "$f" >/dev/null 2>a.err
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q 'no device activity' a.err; then
		ok "devices-real-aiu-unmarked"
	else
		bad "devices-real-aiu-unmarked: rc $rc $(cat a.err)"
	fi
fi
