# tests/t/inspect.sh: kt-inspect.  Judged by an independent oracle,
# tests/oracles/inspect.py (the json module and Decimal, from the
# definitions of kt-inspect(1), not kt's code), on generated traces
# (eager with ktgen's truth chain -C, CUDA graph) and real traces: the
# embedded event equals the trace's, the typed fields and exact ns times,
# the parent and children counts by containment, a runtime call's
# activities by correlation, the flow ends by (cat, name, id), a kernel's
# chain against the truth.  Also: the text form's raw bytes (jq -S and
# verbatim in the file), stdin equals a file, several rows in one call,
# and the exit statuses 0, 1 and 2.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen
oracle=$(dirname "$0")/../oracles/inspect.py
case $oracle in /*) ;; *) oracle=$OLDPWD/$oracle ;; esac
[ -f "$oracle" ] || oracle=$KT_BIN/../tests/oracles/inspect.py

# judge NAME TRACE [TRUTH] -- ROWS...: kt-inspect --json -n 0 ROWS TRACE
# held to the oracle, every row.
judge() {
	_n=$1
	_t=$2
	shift 2
	_truth=
	if [ "$1" != -- ]; then
		_truth=$1
		shift
	fi
	shift
	run kt-inspect --json -n 0 "$@" "$_t" >got.out 2>got.err
	_rc=$?
	if [ $_rc -ne 0 ]; then
		bad "$_n: exit $_rc: $(head -1 got.err)"
		return
	fi
	# shellcheck disable=SC2086
	python3 "$oracle" judge "$_t" got.out $_truth >judge.out 2>&1
	_k=$(grep -c '^ok' judge.out)
	if grep -q -v '^ok' judge.out; then
		bad "$_n: $(grep -v '^ok' judge.out | head -2 | tr '\n' ' ')"
	elif [ "$_k" -ne "$(wc -l <got.out)" ] || [ "$_k" -eq 0 ]; then
		bad "$_n: $_k rows judged of $(wc -l <got.out)"
	else
		ok "$_n: $_k rows"
	fi
}

"$gen" --steps 2 --layers 2 -C eager.truth -o eager.json
"$gen" --graph --streams 8 --steps 2 --layers 2 -C graph.truth -o graph.json

# Rows: the oracle's picks, and kernels of the truth chain (a forward,
# a backward one with its fwd_op, the last).
picks() {
	python3 "$oracle" pick "$1"
}
truthrows() {
	awk -F'\t' 'NR > 1 { r[++n] = $1; if ($8 != "-" && !b) b = $1 }
	    END { print r[1], r[int(n / 2)], r[n], b }' "$1"
}
# shellcheck disable=SC2046
judge "eager" eager.json eager.truth -- $(picks eager.json) $(truthrows eager.truth)
glaunch=$(jq -r '.traceEvents | to_entries[] |
    select(.value.name == "cudaGraphLaunch") | .key' graph.json | head -1)
# shellcheck disable=SC2046
judge "graph" graph.json graph.truth -- "$glaunch" $(picks graph.json) $(truthrows graph.truth)
n=$(run kt-inspect -j -n 0 "$glaunch" graph.json | jq '.launched.count')
w=$(jq --argjson c "$(jq ".traceEvents[$glaunch].args.correlation" graph.json)" \
    '[.traceEvents[] | select(.ph == "X" and (.cat == "kernel" or
    .cat == "gpu_memcpy" or .cat == "gpu_memset") and
    .args.correlation == $c)] | length' graph.json)
if [ "$n" = "$w" ] && [ "$n" -gt 1 ]; then
	ok "graph launch: $n activities"
else
	bad "graph launch: $n activities, want $w"
fi
n=$(run kt-inspect -j "$glaunch" graph.json | jq '.launched.first | length')
[ "$n" = 5 ] && ok "graph launch: --first default 5" ||
    bad "graph launch: $n listed by default"

# The text form: its raw bytes are the event (jq -S) and the file's.
k=$(truthrows eager.truth | cut -d' ' -f1)
run kt-inspect "kernel:$k" eager.json >text.out 2>/dev/null
sed '1,/^  event:$/d' text.out >raw.json
jq -S . raw.json >raw.s 2>/dev/null
jq -S ".traceEvents[$k]" eager.json >want.s
if [ -s raw.s ] && cmp -s raw.s want.s && python3 -c '
import sys
raw = open(sys.argv[1], "rb").read()[:-1]
sys.exit(0 if raw in open(sys.argv[2], "rb").read() else 1)' raw.json eager.json
then
	ok "text: raw bytes of kernel:$k"
else
	bad "text: raw bytes of kernel:$k"
fi
ts=$(awk '$1 == "ts_ns" { print $2 }' text.out)
want=$(jq -r ".traceEvents[$k].ts" eager.json | python3 -c '
import sys
from decimal import Decimal
print(int(Decimal(sys.stdin.read().strip()) * 1000))')
[ "$ts" = "$want" ] && ok "text: ts_ns $ts" || bad "text: ts_ns $ts, want $want"

# stdin, -f and the last operand agree; several rows, one block each.
rows=$(picks eager.json | head -4 | tr '\n' ' ')
# shellcheck disable=SC2086
run kt-inspect $rows eager.json >a.out 2>/dev/null
# shellcheck disable=SC2086
run kt-inspect $rows <eager.json >b.out 2>/dev/null
# shellcheck disable=SC2086
run kt-inspect -f eager.json $rows >c.out 2>/dev/null
if [ -s a.out ] && cmp -s a.out b.out && cmp -s a.out c.out; then
	ok "stdin equals file"
else
	bad "stdin equals file"
fi
n=$(grep -c '^  position ' a.out)
[ "$n" = 4 ] && ok "text: 4 blocks" || bad "text: $n blocks of 4"
# shellcheck disable=SC2086
n=$(run kt-inspect -j $(echo $rows | tr ' ' ',') eager.json | jq -c . | wc -l)
[ "$n" = 4 ] && ok "json: 4 lines parse" || bad "json: $n lines of 4"
run kt-inspect -j 3 -o o.json eager.json 2>/dev/null
[ "$(jq .position o.json 2>/dev/null)" = 3 ] && ok "-o writes the file" ||
    bad "-o writes the file"

# Exit statuses.
run kt-inspect 3 99999999 eager.json >x.out 2>x.err
rc=$?
if [ $rc -eq 1 ] && grep -q 99999999 x.err && grep -q '^  position ' x.out; then
	ok "exit 1 for a missing row, the others printed"
else
	bad "exit $rc for a missing row"
fi
for a in "--bogus 3 eager.json" "eager.json" "notarow:x eager.json" \
    "-n -1 3 eager.json" "3 missing.json" "kernel:3,, eager.json"; do
	# shellcheck disable=SC2086
	run kt-inspect $a >x.out 2>x.err </dev/null
	rc=$?
	if [ $rc -eq 2 ] && [ ! -s x.out ] && [ "$(wc -l <x.err)" -ge 1 ] &&
	    grep -q '^kt-inspect: ' x.err; then
		ok "exit 2: $a"
	else
		bad "exit $rc: $a: $(head -1 x.err)"
	fi
done

# Real traces, when present.
have_shared || { skip "inspect real traces: no $KT_SHARED"; exit 0; }
for t in hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz \
    tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz \
    nano-vllm/prefill.json; do
	[ -f "$KT_SHARED/$t" ] || { skip "inspect $t: absent"; continue; }
	plain "$KT_SHARED/$t" >real.json
	# shellcheck disable=SC2046
	judge "real $(basename "$t")" real.json -- $(picks real.json)
done
