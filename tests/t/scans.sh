# tests/t/scans.sh: each input event is scanned once.  The filters that
# hold or write events are built again with -DKT_DEBUG_SCANS (make scans,
# in $KT_SCANS_BIN), which counts the events scanned whole and skimmed
# and prints the counts at exit when KT_DEBUG_SCANS is set.  On the
# example trace (JSON, and its TSV form) each path of normalize,
# slice-window (streamed and held, JSON and TSV, --clip), compact-lanes
# (and --restore), layer-track and rank-tag (JSON and TSV, one input and
# a merge) scans every input event exactly once: a held event is written
# from its record (its bytes, or the fields kept for TSV), and a patched
# one with the fields the patch located, never scanned again.  What the
# design reads twice is asserted as such: rank-tag's survey skims every
# event first (and scans its metadata events whole), layer-track writes
# an input it cannot copy (compressed) by reading it a second time, and
# made-up events written as TSV are scanned once each, and select reads
# its input in two passes (decide, then write) where it writes TSV or
# reads a compressed file (a plain JSON file written as JSON: once, the
# kept events' bytes read again by their places), with --links one more
# (the model), and with --count only the first.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMP" || exit 1
SB=${KT_SCANS_BIN:-}
if [ -z "$SB" ] || [ ! -x "$SB/kt-normalize" ]; then
	skip "scans: no debug build (make scans)"
	exit 0
fi
if ! command -v jq >/dev/null 2>&1; then
	skip "scans: jq not installed"
	exit 0
fi

gzip -dc "$here/examples/trace.json.gz" >t.json
kt-normalize t.json >sorted.json 2>/dev/null
kt-normalize --keep-order --tsv t.json >t.tsv 2>/dev/null
N=$(jq '.traceEvents | length' t.json)
M=$(jq '[.traceEvents[] | select(.ph == "M")] | length' t.json)

# counts FILTER ARGS...: run the debug build; "SCANS SKIMS" on stdout,
# the filter's output in out, its status in st.
counts() {
	_f=$1
	shift
	KT_DEBUG_SCANS=1 "$SB/kt-$_f" "$@" >out 2>err
	echo $? >st
	sed -n 's/^kt-.*: debug: \([0-9]*\) scans, \([0-9]*\) skims$/\1 \2/p' err
}

# expect NAME SCANS SKIMS FILTER ARGS...: the filter succeeds with
# exactly these counts.
expect() {
	_n=$1
	_s=$2
	_k=$3
	shift 3
	_got=$(counts "$@")
	if [ "$(cat st)" -ne 0 ]; then
		bad "scans: $_n: exit $(cat st): $(head -1 err)"
	elif [ "$_got" = "$_s $_k" ]; then
		ok "scans: $_n: $_got"
	else
		bad "scans: $_n: $_got scans and skims, want $_s $_k"
	fi
}

# The TSV rows of out that are events (not the header, trace or end rows).
rows() {
	awk -F'\t' 'NR > 1 && $2 != "trace" && $2 != "end"' out | wc -l | tr -d ' '
}

for a in "--keep-order" "" "--rebase" "--check"; do
	expect "normalize $a" "$N" 0 normalize $a t.json
	[ "$a" = "--check" ] && continue
	expect "normalize $a --tsv" "$N" 0 normalize $a --tsv t.json
done
# The TSV form read back: its json column is the one scan.
expect "normalize of the TSV form" "$N" 0 normalize t.tsv
expect "normalize --tsv of the TSV form" "$N" 0 normalize --tsv t.tsv

# slice-window reads all of these (held: the input is not sorted).
for in in sorted.json t.json; do
	for a in "--from 0s" "--from 0s --tsv" "--from 9ms --to 30ms --clip" \
	    "--from 9ms --to 30ms --clip --tsv" "--annotation ProfilerStep"; do
		expect "slice-window $a $in" "$N" 0 slice-window $a $in
	done
	expect "slice-window --split-steps 1 --tsv $in" "$N" 0 \
	    slice-window --split-steps 1 --tsv -o split-$in $in
done
# Held beyond its first 4096 events (a raw trace, not sorted), an event
# is its place in the file, read and scanned again when it is fed: a
# window to the end scans the first 4096 once and the others twice.
if [ -x "${KT_BUILD:-}/ktgen" ]; then
	"$KT_BUILD/ktgen" --steps 4 -o raw.json
	R=$(jq '.traceEvents | length' raw.json)
	if [ "$R" -gt 4096 ]; then
		expect "slice-window --from 0s of a raw trace of $R events" \
		    "$((2 * R - 4096))" 0 slice-window --from 0s raw.json
		expect "slice-window --from 0s --tsv of a raw trace" \
		    "$((2 * R - 4096))" 0 slice-window --from 0s --tsv raw.json
	else
		bad "scans: ktgen --steps 4 wrote only $R events"
	fi
fi
# Streamed, a window that ends early stops reading: fewer, never more.
got=$(counts slice-window --steps 5 --tsv sorted.json)
if [ "$(cat st)" -eq 0 ] && [ "${got% *}" -le "$N" ] &&
    [ "${got#* }" -eq 0 ]; then
	ok "scans: slice-window --steps 5 --tsv stops early: $got"
else
	bad "scans: slice-window --steps 5 --tsv: $got (of $N events)"
fi

expect "compact-lanes" "$N" 0 compact-lanes -n 64 -o view.json t.json
V=$(jq '.traceEvents | length' view.json)
expect "compact-lanes --restore" "$V" 0 compact-lanes --restore view.json

# (the example trace has 4 layers a forward, 3 steps: -n 12 would be
# refused, its pass holding 3 forwards)
expect "layer-track (the input copied)" "$N" 0 \
    layer-track -a vectorized_layer_norm -n 4 t.json
gzip -c t.json >t.json.gz
expect "layer-track of gzip (read twice)" "$((2 * N))" 0 \
    layer-track -a vectorized_layer_norm -n 4 t.json.gz

# select: the first pass decides by position; a plain JSON file written
# as JSON is not scanned again (the kept events' bytes are read from
# their places), TSV output and a compressed input are read in a second
# pass; the model between them with --links; --count writes nothing.
expect "select --kind kernel (one pass, places)" "$N" 0 \
    select --kind kernel t.json
expect "select --kind kernel, gzip (two passes)" "$((2 * N))" 0 \
    select --kind kernel t.json.gz
expect "select --drop python_function --tsv (two passes)" "$((2 * N))" 0 \
    select --drop python_function --tsv t.json
expect "select --kind kernel --links (one pass and the model)" \
    "$((2 * N))" 0 select --kind kernel --links t.json
expect "select --count (one pass)" "$N" 0 select --kind kernel --count t.json

# inspect: a plain JSON file is read once (the model, the rows, flows
# and places together), and the events printed are scanned again from
# their places, a few each (printed, kt_store_event); a gzip file is read
# three times (rows and flows, the model, the printed events' bytes).
for _in in t.json t.json.gz; do
	_got=$(counts inspect 1,2,3 "$_in")
	set -- $_got
	if [ "$(cat st)" -ne 0 ]; then
		bad "scans: inspect $_in: exit $(cat st): $(head -1 err)"
	elif [ "$_in" = t.json ] && [ "$1" -ge "$N" ] && [ "$1" -lt "$((N + 200))" ]; then
		ok "scans: inspect $_in (one read and $(($1 - N)) again): $_got"
	elif [ "$_in" = t.json.gz ] && [ "$1" -ge "$((3 * N))" ] &&
	    [ "$1" -lt "$((3 * N + 200))" ]; then
		ok "scans: inspect $_in (three reads): $_got"
	else
		bad "scans: inspect $_in: $_got scans and skims"
	fi
done

# rank-tag: the survey skims every event (and scans the metadata whole),
# the write pass scans every event once.
expect "rank-tag" "$((N + M))" "$N" rank-tag t.json
expect "rank-tag --tsv" "$((N + M))" "$N" rank-tag --tsv t.json
cp t.json rank0.json
cp t.json rank1.json
expect "rank-tag merge" "$((2 * N + 2 * M))" "$((2 * N))" \
    rank-tag -D rank0.json rank1.json
got=$(counts rank-tag -D --tsv rank0.json rank1.json)
made=$(($(rows) - 2 * N))
if [ "$(cat st)" -eq 0 ] && [ "$made" -ge 0 ] &&
    [ "$got" = "$((2 * N + 2 * M + made)) $((2 * N))" ]; then
	ok "scans: rank-tag merge --tsv: $got ($made made up)"
else
	bad "scans: rank-tag merge --tsv: $got, want $((2 * N + 2 * M + made)) $((2 * N))"
fi
exit 0
