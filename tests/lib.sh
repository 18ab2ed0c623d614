# tests/t/lib.sh: helpers for the script tests (sourced, not run).
# Each test reports "ok NAME", "FAIL NAME: why" or "skip NAME: why".

ok() { echo "ok $*"; }
bad() { echo "FAIL $*"; }
skip() { echo "skip $*"; }

# check NAME COMMAND...: ok if the command succeeds.
check() {
	_n=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$_n"; else bad "$_n: $*"; fi
}

# run FILTER ARGS...: a filter under $VALGRIND.
run() {
	_f=$1
	shift
	$VALGRIND "$_f" "$@"
}

# The events of a trace as sorted one-line JSON values (jq, not kt).
events() {
	jq -c 'if type == "array" then .[] else .traceEvents[] end' "$1" | sort
}

# jq definitions: numstr, a pid or tid that is a string holding a decimal
# integer (kt(7): "25738" is the id 25738); byvalue, an event with such
# ids made numbers, as kt normalize writes them.
JQ_IDS='def numstr: type == "string" and test("^(0|-?[1-9][0-9]{0,17})$");
def byvalue: (if has("pid") and (.pid | numstr) then .pid |= tonumber else . end)
    | (if has("tid") and (.tid | numstr) then .tid |= tonumber else . end);'

# jq: $pr maps each pid (as a string: by value) to the first args.rank its
# events name.  An event's rank is args.rank, else its pid's: kt rank-tag
# writes no args on flows (kt(7)).
JQ_PIDRANK='(reduce (.traceEvents[] | select((.args | type) == "object" and
    .args.rank != null)) as $e ({}; ($e.pid | tostring) as $k |
    if has($k) then . else .[$k] = $e.args.rank end)) as $pr'

# The events of a trace as sorted one-line JSON values, numeric-string
# ids made numbers (jq, not kt).
events_byvalue() {
	jq -c "$JQ_IDS"' if type == "array" then .[] else .traceEvents[] end | byvalue' "$1" | sort
}

# The top-level keys other than traceEvents and kt's own, as sorted JSON.
toplevel() {
	jq -S 'if type == "array" then {} else del(.traceEvents, .ktSourceIndex, .ktRebaseNs, .ktWindowStartNs, .ktWindowEndNs, .ktRank) end' "$1"
}

# Every ts and dur number text, sorted (raw text: exact digits).
timetexts() {
	grep -o '"\(ts\|dur\)": *-\{0,1\}[0-9][0-9.eE+-]*' "$1" | sed 's/": */ /' | sort
}

# Decompress anything into plain text on stdout.
plain() {
	case $(od -An -tx1 -N2 "$1" | tr -d ' ') in
	1f8b) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac
}

have_shared() {
	[ -d "$KT_SHARED" ]
}

# need_shared NAME: skip the rest of the script (as NAME) when the shared
# traces are absent; else S names their folder.
need_shared() {
	if ! have_shared; then
		skip "$1: no $KT_SHARED"
		exit 0
	fi
	S=$KT_SHARED
}

# The head of a Python judge: the trace named by sys.argv[1] (plain or
# gzip) loaded as d with exact decimals, and ns(x) for a time in ns.
py_trace_head() {
	cat <<'EOF'
import sys, json, gzip
from decimal import Decimal
def ns(x): return int(Decimal(x) * 1000) if not isinstance(x, int) else x * 1000
f = sys.argv[1]
with (gzip.open if f.endswith('.gz') else open)(f, 'rt') as fh:
    d = json.load(fh, parse_float=Decimal)
EOF
}
