# tests/t/steps.sh: the step windows every view shares (kt(7) Step
# windows).  The judges are independent of kt:
#  - tests/oracles/steps.py computes each step's window, busy and idle
#    from the trace alone (json, Decimal, integer ns); kt-decompose
#    --series, kt-gaps --summary (with the offset from the ProfilerStep
#    CPU start), kt-bucket --by step and the same three in kt views
#    must all give its figures for every step;
#  - a small hand-written trace whose GPU work runs behind the CPU, so
#    that a slice of steps 2-3 takes in the start of step 4: the
#    figures of the windows and which step is partial, by hand;
#  - a slice of steps 6-8 of a generated trace reports exactly steps
#    6, 7 and 8 (with and without --clip), at the oracle's figures for
#    the slice;
#  - the same trace with its ProfilerStep#N renamed iteration_N (python)
#    gives the same tables with --step-regex as the original without.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
gen=$KT_BUILD/ktgen
oracle=$(dirname "$0")/../oracles/steps.py
case $oracle in /*) ;; *) oracle=$OLDPWD/$oracle ;; esac
[ -f "$oracle" ] || oracle=$KT_BIN/../tests/oracles/steps.py
cd "$TMP" || exit 1

if ! command -v python3 >/dev/null 2>&1; then
	skip "steps: no python3"
	exit 0
fi

# The per-step lines "step start end wall busy idle cpu_start" of each
# view, from its tables (TSV, or the text files of kt views).
dec_tsv() {
	awk -F'\t' '$3 == "step" || $3 == "partial" { print $4, $5, $6, $7, $8, $9 }' "$1"
}
gaps_tsv() {
	awk -F'\t' '$4 == "step" || $4 == "partial" { print $3, $5, $5 + $7, $7, $8, $9, $5 - $6 }' "$1"
}
bucket_tsv() {
	awk -F'\t' '$1 == "busy" && $4 != "-" { print $4, $7 }' "$1"
}
dec_txt() {
	awk '/^per step:/ { s = 1; next } s && ($3 == "step" || $3 == "partial") { print $4, $5, $6, $7, $8, $9 }' "$1"
}
gaps_txt() {
	awk '$4 == "step" || $4 == "partial" { print $3, $5, $5 + $7, $7, $8, $9, $5 - $6 }' "$1"
}
bucket_txt() {
	awk '/^by step and bucket:/ { s = 1; next } /^$/ { s = 0 } s && $1 == "busy" && $4 != "-" { print $4, $8 }' "$1"
}

# same NAME WANT HAVE: ok when the two files are equal and not empty.
same() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		ok "$1"
	else
		bad "$1: $(diff "$2" "$3" | head -4 | tr '\n' ' ')"
	fi
}

# ------------------------------------------------------------------
# Every view, the oracle's figures.
for mode in "eager:--steps 8 --layers 2 --inject-gap 300000" \
    "graph:--graph --streams 12 --steps 4 --layers 2"; do
	name=${mode%%:*}
	# shellcheck disable=SC2086
	"$gen" ${mode#*:} -o g.json
	python3 "$oracle" g.json | cut -d' ' -f2- >want7
	cut -d' ' -f1-6 want7 >want6
	cut -d' ' -f1,5 want7 >want2
	run kt-decompose --series g.json >d.tsv
	run kt-gaps --summary g.json >g.tsv
	run kt-bucket --by step g.json >b.tsv
	dec_tsv d.tsv >have
	same "steps-$name: kt-decompose --series, the oracle's windows" want6 have
	gaps_tsv g.tsv >have
	same "steps-$name: kt-gaps --summary, windows and offsets from the step's CPU start" want7 have
	bucket_tsv b.tsv >have
	same "steps-$name: kt-bucket --by step, the busy of each window" want2 have
	rm -rf v
	if run kt-views -o v g.json 2>/dev/null; then
		dec_txt v/1_runtime_decomposition.txt >have
		same "steps-$name: kt views, runtime decomposition" want6 have
		gaps_txt v/2_lost_time.txt >have
		same "steps-$name: kt views, lost time" want7 have
		bucket_txt v/3_kernel_table.txt >have
		same "steps-$name: kt views, kernel table" want2 have
	else
		bad "steps-$name: kt views failed"
	fi
	# Total idle: the step rows of kt-gaps add up to kt-decompose's
	# steady and partial idle.
	a=$(awk -F'\t' '$3 == "step" || $3 == "partial" { s += $9 } END { print s + 0 }' d.tsv)
	b=$(awk -F'\t' '$4 == "total" { print $9 }' g.tsv)
	if [ "$a" = "$b" ]; then ok "steps-$name: total idle $a in both"; else bad "steps-$name: total idle $a != $b"; fi
done

# ------------------------------------------------------------------
# A slice cuts a step: by hand.  Steps k = 1..4 (us): ProfilerStep#k at
# 100k for 90, launches at 100k+10 and 100k+20; kernel A on stream 7 at
# 100k+15 for 55, kernel B on stream 8 at 100k+75 for 60, so the GPU
# runs behind the CPU.  The whole trace's windows (ns): step 1 [115,235),
# step 2 [235,335), step 3 [335,435), step 4 [435,535), each busy 95000
# (step 1: 115000) of 100000 (120000).  --steps 2-3 runs from 200 to the
# end of step 3's GPU work, 435, and takes in ProfilerStep#4 (400..490),
# its first launch and its kernel A (415..470), and step 1's kernel B
# (175..235) with its launch call and ProfilerStep#1, which kt
# slice-window keeps so that B stays step 1's.  So the slice's steps 2
# and 3 are the whole trace's, exactly: step 2 [235,335) busy
# [235,270) + [275,335) = 95000, step 3 [335,435) busy 95000; step 1 is
# partial (its span starts before the cut at 200): [175,235), busy
# 60000; step 4 is partial (its span ends at 490, past the cut at 435):
# from 435 to 470, busy 35000.  With --clip, B1 starts at the cut, 200
# (step 1 [200,235), busy 35000), and ProfilerStep#4 and A4 end at 435:
# step 4 is a partial window of length 0.  Before the fix step 4 was a
# third steady step.
python3 - <<'EOF' >lag.json
import json
ev = []
for k in range(1, 5):
    b = 100 * k
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k,
               "pid": 1, "tid": 1, "ts": b, "dur": 90})
    for j, (l, s, d, st) in enumerate(((10, 15, 55, 7), (20, 75, 60, 8))):
        c = 10 * k + j
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                   "pid": 1, "tid": 1, "ts": b + l, "dur": 3,
                   "args": {"correlation": c}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k%s%d" % ("AB"[j], k),
                   "pid": 0, "tid": st, "ts": b + s, "dur": d,
                   "args": {"correlation": c, "stream": st, "device": 0}})
print(json.dumps({"traceEvents": ev}))
EOF
cat >lag.want <<'EOF'
partial 1 175000 235000 60000 60000 0
step 2 235000 335000 100000 95000 5000
step 3 335000 435000 100000 95000 5000
partial 4 435000 470000 35000 35000 0
EOF
cat >lagc.want <<'EOF'
partial 1 200000 235000 35000 35000 0
step 2 235000 335000 100000 95000 5000
step 3 335000 435000 100000 95000 5000
partial 4 435000 435000 0 0 0
EOF
for c in "" --clip; do
	run kt-slice-window --steps 2-3 $c lag.json 2>/dev/null |
	    run kt-decompose --series >s.tsv 2>/dev/null
	awk -F'\t' '$3 == "step" || $3 == "partial" { print $3, $4, $5, $6, $7, $8, $9 }' s.tsv >have
	same "steps: slice 2-3 ${c:-whole}: steps 2 and 3 as in the whole trace, steps 1 and 4 partial" "lag${c:+c}.want" have
	run kt-slice-window --steps 2-3 $c lag.json 2>/dev/null | run kt-decompose >s.tsv 2>/dev/null
	if [ "$(awk -F'\t' '$3 == "steady" { print $4 }' s.tsv)" = 2 ]; then
		ok "steps: slice 2-3 ${c:-whole}: two steady steps"
	else
		bad "steps: slice 2-3 ${c:-whole}: $(awk -F'\t' '{ print $3, $4 }' s.tsv | tr '\n' ' ')"
	fi
	run kt-slice-window --steps 2-3 $c lag.json 2>/dev/null | run kt-gaps --summary >s.tsv 2>/dev/null
	if [ "$(awk -F'\t' '$4 == "partial" { print $3 }' s.tsv | tr '\n' ' ')" = "1 4 " ]; then
		ok "steps: slice 2-3 ${c:-whole}: kt-gaps marks steps 1 and 4 partial"
	else
		bad "steps: slice 2-3 ${c:-whole}: kt-gaps $(awk -F'\t' '{ print $3, $4 }' s.tsv | tr '\n' ' ')"
	fi
done

# A slice of steps 6-8 of a generated trace: exactly those steps, at the
# oracle's figures for the slice; --steps 6 --clip: one step.
"$gen" --steps 10 --layers 2 -o t.json
for c in "" --clip; do
	run kt-slice-window --steps 6-8 $c t.json -o s.json 2>/dev/null
	python3 "$oracle" s.json | cut -d' ' -f2-6 | sed 's/^/step /' >want
	run kt-decompose --series s.json | awk -F'\t' '$3 == "step" || $3 == "partial" { print $3, $4, $5, $6, $7, $8 }' >have
	if [ "$(cut -d' ' -f2 have | tr '\n' ' ')" = "6 7 8 " ]; then
		same "steps: slice 6-8 ${c:-whole}: steps 6, 7, 8 at the oracle's figures" want have
	else
		bad "steps: slice 6-8 ${c:-whole}: steps $(cut -d' ' -f1,2 have | tr '\n' ' ')"
	fi
done
run kt-slice-window --steps 6 --clip t.json 2>/dev/null | run kt-decompose >s.tsv
if [ "$(awk -F'\t' '$3 == "steady" { print $4 }' s.tsv)" = 1 ] &&
    ! grep -q partial s.tsv; then
	ok "steps: slice 6 --clip: one steady step"
else
	bad "steps: slice 6 --clip: $(awk -F'\t' '{ print $3, $4 }' s.tsv | tr '\n' ' ')"
fi

# ------------------------------------------------------------------
# --step-regex: iteration_N user annotations instead of ProfilerStep#N
# (the same tables, but for the names of the spans they show).
python3 - t.json i.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for e in d['traceEvents']:
    n = e.get('name', '')
    if n.startswith('ProfilerStep#'):
        e['name'] = 'iteration_' + n[len('ProfilerStep#'):]
json.dump(d, open(sys.argv[2], 'w'))
EOF
for f in "decompose --series" "gaps --summary" "bucket --by step"; do
	# shellcheck disable=SC2086
	run kt-$f t.json 2>/dev/null | sed 's/ProfilerStep#/iteration_/g' >want
	# shellcheck disable=SC2086
	run kt-$f --step-regex '^iteration_([0-9]+)$' i.json >have 2>/dev/null
	same "steps: --step-regex iteration_N: kt-${f%% *} as with ProfilerStep#N" want have
	# shellcheck disable=SC2086
	run kt-$f i.json >have 2>/dev/null
	if cmp -s want have; then bad "steps: without --step-regex kt-${f%% *} finds steps"; else ok "steps: without --step-regex no steps in kt-${f%% *}"; fi
done
# No group: the first digits of the name.
run kt-decompose --series --step-regex '^iteration_' i.json >have 2>/dev/null
run kt-decompose --series t.json >want
same "steps: --step-regex without a group: the name's first digits" want have
rm -rf v w
run kt-views -o v t.json 2>/dev/null
run kt-views --step-regex 'iteration_([0-9]+)' -o w i.json 2>/dev/null
dec_txt v/1_runtime_decomposition.txt >want
dec_txt w/1_runtime_decomposition.txt >have
same "steps: kt views --step-regex" want have
# A bad regex: a usage error, one line.
run kt-decompose --step-regex '(' i.json >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s out ] && [ "$(wc -l <err)" -eq 1 ] &&
    grep -q "^kt-decompose: --step-regex: '(': " err; then
	ok "steps: a bad --step-regex exits 2 with one line"
else
	bad "steps: bad --step-regex: status $rc, $(cat err)"
fi
