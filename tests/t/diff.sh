# tests/t/diff.sh: kt-diff, one run against another.  Judged by:
# - generated pairs with a known injected change (ktgen --inject-gap,
#   --inject-tiny against the same seed without it): the injection is the
#   top row, and its figures equal ktgen's truth (the injected idle
#   intervals; the tiny kernels' count and summed durations);
# - an independent Python join of the per-kernel tables of the two runs
#   (kt bucket --by name, read with the csv module): every row of the
#   kernel view, its sums, change, share and order equal;
# - the step series against Python's statistics module on the step walls
#   of kt decompose --series: means, the range, two standard errors, the
#   verdict; --fail-above both ways around the change that ktgen's truth
#   gives (ProfilerStep CPU spans);
# - a run against itself: every change 0 and "same";
# - kt views folders give the same rows as their traces;
# - the ResNet-50 pair of ../shared/traces/kineto (0 against 4 data-loader
#   workers): the data loader is the top row, its CPU time equal to the
#   durations summed with Python's Decimal;
# - usage errors: exit 2 with one line.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

"$gen" --steps 6 --layers 4 --truth a.tsv -o a.json
"$gen" --steps 6 --layers 4 --inject-gap 2000000 --truth g.tsv -o g.json
"$gen" --steps 6 --layers 4 --inject-tiny 400 --truth t.tsv -o t.json
"$gen" --steps 6 --layers 4 --seed 2 --truth s.tsv -o s.json

# The body of a kt-diff table: its two comment lines dropped.
body() { grep -v '^#' "$1"; }
# field ROW COL FILE: a cell of the body by header name (ROW 1: first row).
field() {
	body "$3" | awk -F '\t' -v r="$1" -v c="$2" '
	NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
	NR == r + 1 { print $k; exit }'
}

# 1. An injected stall: the top row is it, and its idle time is ktgen's.
run kt-diff a.json g.json >g.out 2>g.err
st=$?
want=$(awk -F '\t' '$1 == "gap" { s += $7 - $6 } END { print s }' g.tsv)
gapb=$(body g.out | awk -F '\t' '$1 == "gap" && $2 ~ /^gap \| ktgen::sleep \|/ { print $5 }')
k1=$(field 1 key g.out)
if [ $st -eq 0 ] && case $k1 in *"ktgen"*) true ;; *) false ;; esac &&
    [ "$(field 1 change g.out)" = new ] && [ -n "$want" ] &&
    [ "$gapb" = "$want" ]; then
	ok "diff-inject-gap: top row '$k1', the stall's idle $gapb ns = truth"
else
	bad "diff-inject-gap: status $st, top '$k1', gap $gapb, truth $want"
fi

# 2. Injected tiny kernels: the top row is their loop or annotation, and
# the kernel view's row of their kernel has truth's count and time.
run kt-diff a.json t.json >t.out 2>/dev/null
k1=$(field 1 key t.out)
tk=$(awk -F '\t' '$1 == "tiny" { n += $10; b += $12 } END { print n, b }' t.tsv)
got=$(body t.out | awk -F '\t' '$1 == "kernel" && $2 ~ /FillFunctor<float>/ && $10 == "new" { print $9, $5, $4, $10 }')
if case $k1 in *"ktgen: tiny"*|*"ktgen::tiny"*) true ;; *) false ;; esac &&
    [ "$got" = "$tk - new" ]; then
	ok "diff-inject-tiny: top row '$k1', the tiny kernels $tk as truth"
else
	bad "diff-inject-tiny: top '$k1', kernel row '$got', truth '$tk'"
fi

# 3. The kernel view against a Python join of kt bucket --by name tables.
run kt bucket --by name a.json >ka.tsv 2>/dev/null
run kt bucket --by name g.json >kg.tsv 2>/dev/null
run kt-diff --views kernel a.json g.json >kv.out 2>/dev/null
if python3 - ka.tsv kg.tsv kv.out <<'EOF'
import sys, csv
from decimal import Decimal, ROUND_HALF_UP
def load(p):
    rows = {}
    with open(p) as f:
        for r in csv.DictReader(f, delimiter='\t'):
            if r['row'] != 'group':
                continue
            v = rows.setdefault(r['name'], [0, 0])
            v[0] += int(r['total_ns']); v[1] += int(r['count'])
    return rows
a, b = load(sys.argv[1]), load(sys.argv[2])
want = []
for k in set(a) | set(b):
    va, vb = a.get(k), b.get(k)
    d = (vb[0] if vb else 0) - (va[0] if va else 0)
    pct = '-' if not va or va[0] == 0 else str((Decimal(100 * d) / va[0]).quantize(Decimal('0.1'), ROUND_HALF_UP))
    chg = 'new' if not va else 'gone' if not vb else 'more' if d > 0 else 'less' if d < 0 else 'same'
    want.append((-abs(d), k, [str(va[0]) if va else '-', str(vb[0]) if vb else '-', str(d), pct,
                 str(va[1]) if va else '-', str(vb[1]) if vb else '-', chg]))
want.sort(key=lambda w: (w[0], w[1]))
got = [l.rstrip('\n').split('\t') for l in open(sys.argv[3]) if not l.startswith('#')][1:]
assert len(got) == len(want), (len(got), len(want))
for g, w in zip(got, want):
    assert g[0] == 'kernel' and g[2] == 'total_ns', g
    assert g[1] == w[1] and g[3:] == w[2], (g, w)
EOF
then
	ok "diff-join: the kernel view equals a Python join of the two kt bucket tables"
else
	bad "diff-join: the kernel view differs from the Python join"
fi

# 4. Steps: the step walls of kt decompose --series (whose windows
# tests/t/decompose.sh judges), joined and judged by Python's statistics.
run kt-diff --steps a.json g.json >st.out 2>/dev/null
run kt decompose --series a.json >da.tsv 2>/dev/null
run kt decompose --series g.json >dg.tsv 2>/dev/null
if python3 - da.tsv dg.tsv st.out <<'EOF'
import sys, csv, statistics, math
def walls(p):
    return [int(r['wall_ns']) for r in csv.DictReader(open(p), delimiter='\t') if r['phase'] == 'step']
wa, wb = walls(sys.argv[1]), walls(sys.argv[2])
got = [l.rstrip('\n').split('\t') for l in open(sys.argv[3]) if not l.startswith('#')]
h = got[0]; rows = [dict(zip(h, r)) for r in got[1:]]
assert len(rows) == len(wa) + 1, len(rows)
rng = max(wa) - min(wa)
for r, x, y in zip(rows, wa, wb):
    assert int(r['wall_a_ns']) == x and int(r['wall_b_ns']) == y, (r, x, y)
    assert int(r['noise_ns']) == rng
    v = 'within noise' if abs(y - x) <= rng else 'slower' if y > x else 'faster'
    assert r['verdict'] == v, (r, v)
m = rows[-1]
assert m['step_a'] == 'mean'
assert int(m['wall_a_ns']) == sum(wa) // len(wa) and int(m['wall_b_ns']) == sum(wb) // len(wb)
se = 2 * statistics.stdev(wa) * math.sqrt(2 / len(wa))
assert abs(int(m['noise_ns']) - se) < 1.5, (m['noise_ns'], se)
assert m['verdict'] == ('within noise' if abs(int(m['wall_delta_ns'])) <= int(m['noise_ns']) else 'slower')
EOF
then
	ok "diff-steps: the step walls of kt decompose, means, range and two standard errors as Python computes them"
else
	bad "diff-steps: the step table differs from the Python statistics"
fi

# 5. --fail-above: the stall makes the mean step P % slower (truth's
# ProfilerStep spans; kt's step windows differ from them by a few us, so
# the thresholds are P - 3 and P + 3).
pct=$(awk -F '\t' 'FNR == 1 { f++ } $1 == "step" { w[f] += $9 - $8; n[f]++ }
    END { printf "%d", 100 * (w[2] / n[2] - w[1] / n[1]) / (w[1] / n[1]) }' a.tsv g.tsv)
run kt-diff --steps --fail-above $((pct - 3)) a.json g.json >/dev/null 2>f1.err
s1=$?
run kt-diff --steps --fail-above $((pct + 3)) a.json g.json >/dev/null 2>f2.err
s2=$?
run kt-diff --fail-above 0 a.json a.json >/dev/null 2>f3.err
s3=$?
# --fail-on idle: the stall more than doubles the mean idle (truth's idle
# intervals add 2 ms a step to steps of about 1 ms idle), busy it leaves.
run kt-diff --steps --fail-above 100 --fail-on idle a.json g.json >/dev/null 2>f4.err
s4=$?
run kt-diff --steps --fail-above 100 --fail-on busy a.json g.json >/dev/null 2>f5.err
s5=$?
if [ $s1 -eq 1 ] && [ "$(wc -l <f1.err)" -eq 1 ] && [ $s2 -eq 0 ] &&
    [ $s3 -eq 0 ] && [ "$pct" -gt 2 ] && [ $s4 -eq 1 ] &&
    grep -q "mean step idle time" f4.err && [ $s5 -eq 0 ]; then
	ok "diff-fail-above: exit 1 at $((pct - 3))% (truth ${pct}%), 0 at $((pct + 3))% and on the same run"
else
	bad "diff-fail-above: statuses $s1 $s2 $s3 $s4 $s5 (truth ${pct}%)"
fi

# 6. A run against itself: every change 0, "same"; the comment lines name
# the file and its sha256sum.
run kt-diff a.json a.json >same.out 2>/dev/null
sha=$(sha256sum a.json | cut -d' ' -f1)
if [ "$(body same.out | awk -F '\t' 'NR > 1 && ($6 != 0 || $10 != "same")' | wc -l)" -eq 0 ] &&
    [ "$(body same.out | wc -l)" -gt 20 ] &&
    grep -q "^# a: a.json  sha256 $sha  steps 6  date -$" same.out &&
    grep -q "^# b: a.json  sha256 $sha" same.out; then
	ok "diff-same: a run against itself has no change; the header names it by sha256sum"
else
	bad "diff-same: changes against itself, or a wrong header"
fi

# 7. kt views folders give the rows of their traces (the views both have).
run kt views -o va a.json >/dev/null 2>&1
run kt views -o vg g.json >/dev/null 2>&1
run kt-diff --views bucket,op,gap,collective a.json g.json >tr.out 2>/dev/null
run kt-diff va vg >fo.out 2>fo.err
if body tr.out >tr.body && body fo.out >fo.body && cmp -s tr.body fo.body &&
    [ "$(wc -l <tr.body)" -gt 10 ]; then
	ok "diff-folders: two kt views folders give the rows of their traces"
else
	bad "diff-folders: folder rows differ from trace rows"
fi

# 8. JSON lines: the runs first, then rows, all valid JSON.
run kt-diff --json -n 3 a.json g.json >j.out 2>/dev/null
if python3 -c '
import sys, json
l = [json.loads(x) for x in open(sys.argv[1])]
assert [x["run"] for x in l[:2]] == ["a", "b"] and l[0]["steps"] == 6
assert len(l) == 5 and all("delta" in x for x in l[2:])
assert isinstance(l[2]["delta"], int)
' j.out; then
	ok "diff-json: the two runs, then the rows, as JSON lines"
else
	bad "diff-json: not the JSON lines expected"
fi

# 9. Usage errors: exit 2, one line.
n=0
for args in "a.json" "a.json g.json t.json" "- -" "--views nope a.json g.json" \
    "--fail-above x a.json g.json" "--fail-on nope a.json g.json" \
    "a.json a.tsv" "a.json nonexistent.json"; do
	# shellcheck disable=SC2086
	run kt-diff $args >u.out 2>u.err </dev/null
	st=$?
	if [ $st -ne 2 ] || [ -s u.out ]; then
		bad "diff-usage: '$args' status $st"
		n=$((n + 1))
	fi
	case $args in
	"a.json"|"a.json g.json t.json") ;;
	*) [ "$(wc -l <u.err)" -eq 1 ] || { bad "diff-usage: '$args': $(wc -l <u.err) lines"; n=$((n + 1)); } ;;
	esac
done
[ $n -eq 0 ] && ok "diff-usage: bad arguments and inputs exit 2 with one line, no output"

# 10. The ResNet-50 pair: the data-loader stall is the top row.
need_shared diff-resnet
A=$S/kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
B=$S/kineto/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz
if [ ! -f "$A" ] || [ ! -f "$B" ]; then
	skip "diff-resnet: no ResNet-50 pair"
	exit 0
fi
run kt-diff "$A" "$B" >r.out 2>/dev/null
k1=$(field 1 key r.out)
a1=$(field 1 a r.out)
want=$({ py_trace_head; cat <<'EOF'
name = 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__'
print(sum(ns(e['dur']) for e in d['traceEvents'] if e.get('name') == name and e.get('ph') == 'X'))
EOF
} | python3 - "$A")
if [ "$k1" = "cpu_op | enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" ] &&
    [ "$a1" = "$want" ] && [ "$(field 1 change r.out)" = gone ] &&
    grep -q "^# a: .*sha256 $(sha256sum "$A" | cut -d' ' -f1)  steps 6  date 2021-06-08T" r.out; then
	ok "diff-resnet: the data loader is the top row ($a1 ns of CPU in A, as Python sums)"
else
	bad "diff-resnet: top row '$k1' $a1, want the data loader's $want"
fi
