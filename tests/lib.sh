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

# The top-level keys other than traceEvents and kt's own, as sorted JSON.
toplevel() {
	jq -S 'if type == "array" then {} else del(.traceEvents, .ktSourceIndex, .ktRebaseNs) end' "$1"
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
