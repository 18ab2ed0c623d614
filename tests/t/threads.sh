# tests/t/threads.sh: the filters that read on a second thread (kt(7)
# Threads: the analysis views, correlate, ops, select, summary,
# diff, views, compact-lanes) give the same output, messages and status
# as on one thread (KT_THREADS=1, whose output the other scripts judge
# against jq, Python and ktgen's truth): on a generated trace of many
# batches (the reading thread hands 1024 events at a time), on a real
# one, and on a trace cut short (repaired: the same note; with --strict
# the same error, its line and column, and no output).  Skipped on one CPU, where both are one thread.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
if [ "$(nproc 2>/dev/null || echo 1)" -lt 2 ]; then
	skip "threads: one CPU (kt_ahead_worth): nothing to compare"
	exit 0
fi

"$KT_BUILD/ktgen" --size 6M >g.json 2>/dev/null
"$KT_BUILD/ktgen" --size 6M --seed 2 >g2.json 2>/dev/null
head -c 3000000 g.json >cut.json
inputs="g.json cut.json"
real=${KT_SHARED:-}/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
[ -f "$real" ] && inputs="$inputs $real"
if [ "$(grep -c '"ts"' g.json)" -lt 20000 ]; then
	bad "threads: the generated trace is too small to span batches"
fi

# same_views NAME FILE: kt-views -o on one thread and on two, the same
# folders (or none), messages and status.
same_views() {
	rm -rf one.d two.d
	KT_THREADS=1 run "$KT_BIN/kt-views" -o one.d "$2" >one.out 2>one.err
	_r1=$?
	run "$KT_BIN/kt-views" -o two.d "$2" >two.out 2>two.err
	_r2=$?
	if [ "$_r1" -eq "$_r2" ] && cmp -s one.err two.err &&
	    { [ ! -d one.d ] && [ ! -d two.d ] || diff -r one.d two.d >/dev/null; }; then
		ok "threads $1: one thread and two agree (status $_r1)"
	else
		bad "threads $1: status $_r1/$_r2: $(diff -r one.d two.d 2>&1 | head -1)"
	fi
}

# same NAME FILTER ARGS...: the filter on one thread and on two.
same() {
	_sn=$1 _sf=$2
	shift 2
	KT_THREADS=1 run "$KT_BIN/$_sf" "$@" >one.out 2>one.err
	_r1=$?
	run "$KT_BIN/$_sf" "$@" >two.out 2>two.err
	_r2=$?
	if [ "$_r1" -eq "$_r2" ] && cmp -s one.out two.out &&
	    cmp -s one.err two.err; then
		ok "threads $_sn: one thread and two agree (status $_r1, $(wc -c <one.out) bytes)"
	else
		bad "threads $_sn: status $_r1/$_r2; $(cmp one.out two.out 2>&1 | head -1); $(head -1 two.err)"
	fi
}

for t in $inputs; do
	b=$(basename "$t")
	for f in kt-bucket kt-gaps kt-decompose kt-overlap kt-memory \
	    kt-correlate kt-ops kt-summary kt-compact-lanes; do
		same "$f $b" "$f" "$t"
	done
	same "kt-select --links $b" kt-select --links -k kernel "$t"
	same "kt-select $b" kt-select -k kernel,cpu_op -i 3,500,9000 "$t"
	KT_SPLIT=4096 same "kt-select $b, pieces of 4096" kt-select \
	    -k kernel -n 'gemm|nccl' "$t"
	same "kt-correlate --json $b" kt-correlate --json "$t"
	same "kt-inspect $b" kt-inspect 0 5 100 "$t"
	same "kt-diff $b" kt-diff g2.json "$t"
	same_views "kt-views $b" "$t"
done
# kt-correlate makes its rows in blocks of 2048 on several threads
# (kt_cli_table_rows) and writes them in order: on a trace of four
# blocks and more, the same rows as on one thread in TSV, JSON lines and
# -o; on a full disk, status 2 and one line on both.
"$KT_BUILD/ktgen" --size 20M >g20.json 2>/dev/null
rows=$(KT_THREADS=1 "$KT_BIN/kt-correlate" g20.json 2>/dev/null | wc -l)
if [ "$rows" -gt 8193 ]; then
	ok "threads kt-correlate: $((rows - 1)) rows, more than four blocks"
else
	bad "threads kt-correlate: $rows lines: too few to span blocks"
fi
same "kt-correlate g20.json" kt-correlate g20.json
same "kt-correlate --json g20.json" kt-correlate --json g20.json
# The model sorts and nests a trace's spans on a thread of their own
# from 16384 spans on (model.c SPANS_THREAD), while its own thread sorts
# the rest: on g20.json, with twice that, the views as on one thread.
spans=$(grep -cE '"cat": "(cpu_op|cuda_runtime|cuda_driver|python_function|user_annotation)"' g20.json)
if [ "$spans" -lt 32768 ]; then
	bad "threads: g20.json has $spans spans, too few for the spans' thread"
fi
for f in kt-decompose kt-gaps kt-ops kt-summary; do
	same "$f g20.json (spans' thread)" "$f" g20.json
done
same_views "kt-views g20.json (spans' thread)" g20.json
# kt-views makes each input's six views as tasks on every CPU: two
# inputs in one run, their tables in the inputs' order.
rm -rf one.d two.d
KT_THREADS=1 run "$KT_BIN/kt-views" -n 5 -o one.d g.json g2.json >/dev/null 2>one.err
r1=$?
run "$KT_BIN/kt-views" -n 5 -o two.d g.json g2.json >/dev/null 2>two.err
r2=$?
if [ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && cmp -s one.err two.err &&
    diff -r one.d two.d >/dev/null &&
    [ "$(grep -c 'g2.json' two.d/6_op_table.txt)" -ge 1 ]; then
	ok "threads kt-views g.json g2.json: one thread and two agree"
else
	bad "threads kt-views g.json g2.json: status $r1/$r2: $(diff -r one.d two.d 2>&1 | head -1)"
fi
KT_THREADS=1 run "$KT_BIN/kt-correlate" -o one.tsv g20.json 2>/dev/null
run "$KT_BIN/kt-correlate" -o two.tsv g20.json 2>/dev/null
if cmp -s one.tsv two.tsv && [ "$(wc -l <two.tsv)" -eq "$rows" ]; then
	ok "threads kt-correlate -o: one thread and two agree"
else
	bad "threads kt-correlate -o: $(cmp one.tsv two.tsv 2>&1 | head -1)"
fi
if [ -w /dev/full ]; then
	for th in 1 2; do
		KT_THREADS=$th run "$KT_BIN/kt-correlate" g20.json >/dev/full 2>full.err
		r=$?
		if [ "$r" -eq 2 ] && [ "$(wc -l <full.err)" -eq 1 ] &&
		    grep -q 'No space left' full.err; then
			ok "threads kt-correlate (KT_THREADS=$th) on a full disk: status 2, one line"
		else
			bad "threads kt-correlate (KT_THREADS=$th) on a full disk: status $r, $(head -2 full.err)"
		fi
	done
fi

# With --strict the cut trace is an error on both: one line with its
# place, nothing on stdout.
for f in kt-gaps kt-correlate kt-compact-lanes kt-summary; do
	KT_THREADS=1 run "$KT_BIN/$f" --strict cut.json >one.out 2>one.err
	r1=$?
	run "$KT_BIN/$f" --strict cut.json >two.out 2>two.err
	r2=$?
	if [ "$r1" -eq 2 ] && [ "$r2" -eq 2 ] && [ ! -s two.out ] &&
	    cmp -s one.err two.err && [ "$(wc -l <two.err)" -eq 1 ] &&
	    grep -q 'cut.json:[0-9]*:[0-9]*:' two.err; then
		ok "threads $f --strict: a cut trace is status 2 on both, the same line with its place, no output"
	else
		bad "threads $f --strict: a cut trace: status $r1/$r2, $(head -1 two.err)"
	fi
done

# Split mode (kt(7) Threads): a plain file is read in pieces on every
# CPU, each from the first '{' after "}," in it, checked against where
# the piece before stopped.  KT_SPLIT=N cuts pieces of N bytes from any
# file (by default 256 kB pieces of files of 8 MB or more), so that
# small traces cross thousands of pieces: the output, messages and
# status are those of one thread.  The inputs: the generated trace (and
# its bare-array form), the cut one (the last piece fails: the whole
# reader says where it ends), one whose names and args hold "}, {" and
# arrays of objects (pieces that start on a guess that is not an event:
# caught by the check, read again), one with ktSourceIndex before its
# events (row numbers through it), and every damaged trace of
# ../shared/traces (repairs counted across pieces).
python3 - <<'P' 2>/dev/null || bad "threads split: could not write the tricky traces"
import json
ev = json.load(open("g.json"))["traceEvents"]
# Names that hold what a piece looks for, and args with objects in arrays.
for i, e in enumerate(ev):
    if i % 7 == 3 and e.get("ph") == "X":
        e["name"] = e.get("name", "") + ' }, {"ph": "X"}, {'
    if i % 11 == 5:
        e.setdefault("args", {})["objs"] = [{"a": 1}, {"b": {"c": [2]}}, {}]
with open("tricky.json", "w") as f:
    f.write('{"traceEvents": [\n')
    f.write(",\n".join("  " + json.dumps(e) for e in ev))
    f.write('\n], "after": {"x": [1, {"y": 2}]}}\n')
with open("array.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(e) for e in ev[:20000]) + "\n]\n")
n = len(ev)
# Row numbers given first: the events in reverse, their rows saying so.
with open("srcidx.json", "w") as f:
    f.write('{"ktSourceIndex": [%s], "traceEvents": [\n' %
            ",".join(str(n - 1 - i) for i in range(n)))
    f.write(",\n".join(json.dumps(e) for e in reversed(ev)))
    f.write("\n]}\n")
P
splits="tricky.json array.json srcidx.json cut.json g.json"
dam=${KT_SHARED:-}/damaged
if [ -d "$dam" ]; then
	for d in "$dam"/*.json; do
		[ -s "$d" ] && splits="$splits $d"
	done
fi
# kt-slice-window streams a sorted file (kt normalize's, gs.json, and
# gs.json cut short) and holds an unsorted one, in pieces either way.
run "$KT_BIN/kt-normalize" g.json >gs.json 2>/dev/null
head -c 3000000 gs.json >gscut.json
for piece in 4096 777; do
	for t in $splits; do
		b=$(basename "$t")
		for f in kt-gaps kt-summary kt-compact-lanes; do
			KT_SPLIT=$piece same "$f $b, pieces of $piece" "$f" "$t"
		done
		KT_SPLIT=$piece same "kt-correlate $b, pieces of $piece" kt-correlate "$t"
	done
	for t in $splits gs.json gscut.json; do
		b=$(basename "$t")
		KT_SPLIT=$piece same "kt-slice-window $b, pieces of $piece" \
		    kt-slice-window --from 0s "$t"
	done
	KT_SPLIT=$piece same "kt-slice-window --steps 6-7 gs.json, pieces of $piece" \
	    kt-slice-window --steps 6-7 --clip gs.json
done
KT_SPLIT=4096 same "kt-memory g.json, pieces of 4096" kt-memory g.json
KT_SPLIT=4096 same "kt-ops g.json, pieces of 4096" kt-ops g.json
for f in kt-gaps kt-correlate kt-compact-lanes kt-summary; do
	KT_SPLIT=4096 same "$f --strict cut.json, pieces" "$f" --strict cut.json
	KT_SPLIT=4096 same "$f --strict tricky.json, pieces" "$f" --strict tricky.json
done
# The tricky trace's cases above prove something only if its strings do
# hold the separator the pieces look for.
if [ "$(grep -c '}, {\\"ph' tricky.json)" -gt 100 ]; then
	ok "threads split: the tricky trace holds separators inside strings"
else
	bad "threads split: the tricky trace has no separators in its names"
fi
# Split mode on gzip (kt(7) Threads): a gzip file of KT_SMALL_FILE
# (512 kB) or more is inflated on its decoder thread into a window of the
# stream that the pieces read by offset, and the lines and columns of an
# error are counted by inflating the file again; one thread reads the
# stream in order.  The inputs, each gzip -1 (large enough for the
# thread): the generated trace, the tricky one, the tricky one cut at 80%
# of its text (repaired; with --strict an error at its place), with a
# key's quote broken at 2/3 of its text (an error at its line and
# column), and with its stream cut 5000 bytes before its end (the gzip
# error, after every event before it).
gzip -1 -c g.json >g.gz
gzip -1 -c tricky.json >tricky.gz
python3 - <<'P' 2>/dev/null || bad "threads split: could not write the damaged gzip traces"
t = open("tricky.json", "rb").read()
open("tcut.json", "wb").write(t[:len(t) * 4 // 5])
i = t.index(b'"ts"', len(t) * 2 // 3)
open("broken.json", "wb").write(t[:i] + b"x" + t[i + 1:])
P
gzip -1 -c tcut.json >tcut.gz
gzip -1 -c broken.json >broken.gz
head -c $(($(wc -c <tricky.gz) - 5000)) tricky.gz >streamcut.gz
for t in g.gz tricky.gz tcut.gz broken.gz streamcut.gz; do
	if [ "$(wc -c <"$t")" -lt 524288 ]; then
		bad "threads split: $t is under 512 kB: no decoder thread"
	fi
done
for piece in 4096 777; do
	for t in g.gz tricky.gz tcut.gz broken.gz streamcut.gz; do
		for f in kt-gaps kt-summary kt-compact-lanes kt-correlate; do
			KT_SPLIT=$piece same "$f $t, pieces of $piece" "$f" "$t"
		done
	done
	KT_SPLIT=$piece same "kt-gaps --strict tcut.gz, pieces of $piece" \
	    kt-gaps --strict tcut.gz
done
KT_SPLIT=4096 same "kt-ops g.gz, pieces of 4096" kt-ops g.gz
# The broken one's error is told with its place, far into the stream.
KT_SPLIT=4096 run "$KT_BIN/kt-gaps" broken.gz >/dev/null 2>broken.err
want=$(gzip -dc broken.gz | head -c "$(python3 -c '
t = open("tricky.json", "rb").read()
print(t.index(b"\"ts\"", len(t) * 2 // 3))')" | wc -l)
if grep -q "^kt-gaps: broken.gz:$((want + 1)):[0-9]*: " broken.err; then
	ok "threads split: broken.gz's error at line $((want + 1)), counted by inflating it again"
else
	bad "threads split: broken.gz: want line $((want + 1)): $(head -1 broken.err)"
fi
KT_SPLIT=4096 run "$KT_BIN/kt-gaps" streamcut.gz >/dev/null 2>sc.err
if grep -q "^kt-gaps: streamcut.gz: truncated gzip input" sc.err; then
	ok "threads split: streamcut.gz: the gzip error after the events before it"
else
	bad "threads split: streamcut.gz: $(head -1 sc.err)"
fi
# The debug build (make scans) counts the pieces: on the generated trace
# they were read on more than one thread and none was read again; on the
# tricky one some guesses were read again and the split went on to the
# end; on the cut one the split ended early (its last piece fails).
SB=${KT_SCANS_BIN:-}
if [ -n "$SB" ] && [ -x "$SB/kt-compact-lanes" ]; then
	# pieces FILE [FILTER ARGS]: "PIECES WORKERS AGAIN ENDED SCANS" of
	# the filter (kt-compact-lanes), and the output in dbg.out.
	pieces() {
		_pf=$1
		shift
		[ $# -gt 0 ] || set -- kt-compact-lanes
		KT_DEBUG_SCANS=1 KT_SPLIT=4096 "$SB/$@" "$_pf" \
		    >dbg.out 2>dbg.err
		_s=$(sed -n 's/.*debug: \([0-9]*\) scans.*/\1/p' dbg.err)
		sed -n 's/.*debug: split: \([0-9]*\) pieces, \([0-9]*\) on workers, \([0-9]*\) read again, \([0-9]*\) ended early/\1 \2 \3 \4/p' \
		    dbg.err | awk -v s="$_s" '{ print $0, s }'
	}
	n=$(jq '.traceEvents | length' g.json 2>/dev/null)
	set -- $(pieces g.json)
	if [ $# -eq 5 ] && [ "$1" -gt 1000 ] && [ "$2" -gt 0 ] &&
	    [ "$3" -eq 0 ] && [ "$4" -eq 0 ] && [ "$5" = "$n" ]; then
		ok "threads split: g.json in $1 pieces, $2 on workers, each event scanned once"
	else
		bad "threads split: g.json: pieces workers again ended scans: $* (events $n)"
	fi
	set -- $(pieces tricky.json)
	if [ $# -eq 5 ] && [ "$1" -gt 1000 ] && [ "$3" -gt 0 ] && [ "$4" -eq 0 ]; then
		ok "threads split: tricky.json: $3 guesses read again, the split went on"
	else
		bad "threads split: tricky.json: pieces workers again ended scans: $*"
	fi
	# On gzip: the pieces read from the decoder's window, on workers too.
	n=$(jq '.traceEvents | length' g.json 2>/dev/null)
	set -- $(pieces g.gz)
	if [ $# -eq 5 ] && [ "$1" -gt 1000 ] && [ "$2" -gt 0 ] &&
	    [ "$3" -eq 0 ] && [ "$4" -eq 0 ] && [ "$5" = "$n" ]; then
		ok "threads split: g.gz in $1 pieces, $2 on workers, each event scanned once"
	else
		bad "threads split: g.gz: pieces workers again ended scans: $* (events $n)"
	fi
	set -- $(pieces tricky.gz)
	if [ $# -eq 5 ] && [ "$1" -gt 1000 ] && [ "$3" -gt 0 ] && [ "$4" -eq 0 ]; then
		ok "threads split: tricky.gz: $3 guesses read again, the split went on"
	else
		bad "threads split: tricky.gz: pieces workers again ended scans: $*"
	fi
	# kt-slice-window streams the sorted one in pieces, each event
	# scanned once (the copy of the output aside, which reads bytes).
	n=$(jq '.traceEvents | length' gs.json 2>/dev/null)
	set -- $(pieces gs.json kt-slice-window --from 0s)
	if [ $# -eq 5 ] && [ "$1" -gt 1000 ] && [ "$2" -gt 0 ] &&
	    [ "$3" -eq 0 ] && [ "$4" -eq 0 ] && [ "$5" = "$n" ]; then
		ok "threads split: kt-slice-window gs.json in $1 pieces, $2 on workers, each event scanned once"
	else
		bad "threads split: kt-slice-window gs.json: pieces workers again ended scans: $* (events $n)"
	fi
	set -- $(pieces cut.json)
	if [ $# -eq 5 ] && [ "$4" -eq 1 ]; then
		ok "threads split: cut.json: the split ended at the cut, the whole reader read on"
	else
		bad "threads split: cut.json: pieces workers again ended scans: $*"
	fi
else
	skip "threads split: no debug build (make scans) to count the pieces"
fi
