# tests/t/views.sh: kt views.  It writes the six numbered views with
# their .tsv twins and memory.svg; each twin is what the single filter
# prints (kt-decompose, kt-gaps, kt-bucket, kt-overlap, kt-memory, kt-ops, with
# the defaults kt-views(1) names), so the views are the filters'
# figures, which their own tests judge.  It passes --capacity-gb on,
# reads a file once (strace counts the opens and reads), reads standard
# input, takes several traces, works as "kt views", and refuses bad use.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen

"$gen" --steps 4 --layers 2 -w 2 -o g.json
run kt-views -o v g.json 2>err
files="1_runtime_decomposition 2_lost_time 3_kernel_table 4_overlap_exposure 5_memory 6_op_table"
miss=
for f in $files; do
	[ -s "v/$f.txt" ] && [ -s "v/$f.tsv" ] || miss="$miss $f"
done
[ -s v/memory.svg ] || miss="$miss memory.svg"
if [ -z "$miss" ] && [ ! -s err ]; then ok views-files; else bad "views-files:$miss $(cat err)"; fi

# The twins are the filters' own output.
run kt-decompose --tsv g.json >d.tsv
run kt-overlap --tsv g.json >o.tsv
run kt-memory --tsv g.json >m.tsv
run kt-ops --tsv --by rank g.json >op.tsv 2>/dev/null
if cmp -s d.tsv v/1_runtime_decomposition.tsv && cmp -s o.tsv v/4_overlap_exposure.tsv &&
    cmp -s m.tsv v/5_memory.tsv && cmp -s op.tsv v/6_op_table.tsv &&
    [ "$(wc -l <op.tsv)" -gt 10 ]; then
	ok views-same-as-filters
else
	bad views-same-as-filters
fi
if command -v kt-bucket >/dev/null 2>&1 && command -v kt-gaps >/dev/null 2>&1; then
	run kt-bucket --tsv --by bucket g.json >b.tsv 2>/dev/null
	run kt-gaps --tsv --summary --top 50 g.json >gp.tsv 2>/dev/null
	if cmp -s b.tsv v/3_kernel_table.tsv && cmp -s gp.tsv v/2_lost_time.tsv; then
		ok views-same-as-bucket-gaps
	else
		bad views-same-as-bucket-gaps
	fi
else
	skip "views-same-as-bucket-gaps: no kt-bucket or kt-gaps"
fi
# The text views hold the same numbers, aligned.
busy=$(awk -F '\t' '$3 == "steady" { print $6 }' d.tsv)
if grep -q "^Runtime decomposition" v/1_runtime_decomposition.txt &&
    grep -q " $busy " v/1_runtime_decomposition.txt && grep -q "^per step:" v/1_runtime_decomposition.txt &&
    grep -q "not a finding\|a finding" v/4_overlap_exposure.txt; then
	ok views-text
else
	bad views-text
fi

# --capacity-gb reaches the memory view; the SVG is valid XML.
run kt-views --capacity-gb 80 -o c g.json
if [ "$(awk -F '\t' 'NR == 2 { print $12 "/" $13 }' c/5_memory.tsv)" = "80000000000/--capacity-gb" ] &&
    python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' c/memory.svg 2>/dev/null &&
    grep -q 'capacity 74.51 GiB' c/memory.svg; then
	ok views-capacity
else
	bad "views-capacity: $(sed -n 2p c/5_memory.tsv)"
fi

# The input is opened once, and the bytes read from it, from its open to
# its close, are its size: one read serves the six views (the memory
# view included).  On one thread (KT_THREADS=1): with the reading
# thread, strace -f splits a read into "unfinished" and "resumed" lines.
if command -v strace >/dev/null 2>&1; then
	KT_THREADS=1 strace -f -e trace=open,openat,read,pread64,close -o st.log "$KT_BIN/kt-views" -o s g.json >/dev/null 2>&1
	n=$(grep -c '"g.json"' st.log)
	got=$(awk '/"g.json"/ { fd = $NF; on = 1; next }
	    on && $0 ~ "(read|pread64)\\(" fd "," { s += $NF }
	    on && $0 ~ "close\\(" fd "\\)" { on = 0 }
	    END { print s + 0 }' st.log)
	size=$(wc -c <g.json | tr -d ' ')
	if [ "$n" -eq 1 ] && [ "$got" -eq "$size" ] && cmp -s s/5_memory.tsv m.tsv; then
		ok "views-reads-once"
	else
		bad "views-reads-once: opened $n times, read $got of $size bytes"
	fi
else
	skip "views-reads-once: no strace"
fi

# Standard input (spooled once), and "kt views" through the front command.
run kt-views -o i <g.json
run kt views -o k g.json 2>/dev/null
same=1
for f in $files; do
	cmp -s "v/$f.tsv" "i/$f.tsv" || same=0
	cmp -s "v/$f.tsv" "k/$f.tsv" || same=0
done
if [ $same = 1 ]; then ok views-stdin-front; else bad views-stdin-front; fi

# Several traces: the rows of each, one header.
"$gen" --steps 3 --layers 1 -r 1 -w 2 -o g1.json
run kt-views -o two g.json g1.json
run kt-memory g1.json >m1.tsv
if [ "$(wc -l <two/5_memory.tsv)" -eq $(($(wc -l <m.tsv) + $(wc -l <m1.tsv) - 1)) ] &&
    [ -s two/memory-1.svg ] && [ -s two/memory-2.svg ] && grep -q "g1.json: per phase" two/1_runtime_decomposition.txt; then
	ok views-several
else
	bad views-several
fi

# Small files (under 512 kB each) are read at once, one per CPU: the
# same tables, messages in the same order and the same exit status as
# one by one on one thread (KT_THREADS=1).  The inputs: two traces,
# one without device activity (a warning, exit 1), one cut short (a
# repair's note), and then the same with a missing file among them (the
# messages of the traces before it, then its error, exit 2).  strace
# shows the files opened by two threads.
"$gen" --steps 2 --layers 1 -r 0 -w 2 -o g2.json
head -c 60000 g1.json >cut.json
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}\n' >cpu.json
for set in "g1.json cpu.json cut.json g2.json" "cut.json cpu.json nosuch.json g1.json"; do
	rm -rf at1 atn
	# shellcheck disable=SC2086 # the file list, split on purpose
	KT_THREADS=1 run kt-views -o at1 $set >/dev/null 2>at1.err
	rc1=$?
	# shellcheck disable=SC2086
	run kt-views -o atn $set >/dev/null 2>atn.err
	rcn=$?
	if [ $rc1 = $rcn ] && [ $rc1 != 0 ] && diff -r at1 atn >/dev/null && cmp -s at1.err atn.err &&
	    [ "$(wc -l <at1.err)" -ge 2 ]; then
		ok "views-small-at-once: $set"
	else
		bad "views-small-at-once: $set: exit $rc1, $rcn: $(cat at1.err atn.err)"
	fi
done
if command -v strace >/dev/null 2>&1 && [ "$(cat g1.json g2.json | wc -c)" -lt 1048576 ]; then
	strace -f -e trace=openat -o at.log "$KT_BIN/kt-views" -o ats g1.json g2.json >/dev/null 2>&1
	t=$(awk '/"g[12]\.json"/ { print $1 }' at.log | sort -u | wc -l)
	KT_THREADS=1 run kt-views -o ats1 g1.json g2.json >/dev/null 2>&1
	if [ "$t" -eq 2 ] && [ -s ats/6_op_table.tsv ] && diff -r ats ats1 >/dev/null; then
		ok views-small-threads
	else
		bad "views-small-threads: opened by $t threads"
	fi
else
	skip "views-small-threads: no strace, or the traces not small"
fi

# Errors: no -o, -o naming a file, a missing input.
e=0
run kt-views g.json >/dev/null 2>e1 && e=1
: >afile
run kt-views -o afile g.json >/dev/null 2>e2 && e=1
run kt-views -o z nosuch.json >/dev/null 2>e3 && e=1
grep -q '^kt-views: ' e1 && grep -q '^kt-views: afile: not a folder' e2 && grep -q '^kt-views: ' e3 || e=1
if [ $e = 0 ]; then ok views-errors; else bad "views-errors: $(cat e1 e2 e3)"; fi

# -o makes the missing folders above it (mkdir -p), as a map step
# "kt views T -o views/NAME" needs; not through a file.
run kt-views -o p1/p2/p3 g.json >/dev/null 2>p.err
rc=$?
run kt-views -o afile/sub g.json >/dev/null 2>p2.err
rc2=$?
same=1
for f in $files; do cmp -s "v/$f.tsv" "p1/p2/p3/$f.tsv" || same=0; done
if [ $rc = 0 ] && [ $same = 1 ] && [ $rc2 = 2 ] && [ "$(wc -l <p2.err)" -eq 1 ] &&
    grep -q '^kt-views: afile/sub: ' p2.err; then
	ok views-output-parents
else
	bad "views-output-parents: exit $rc, $rc2: $(cat p.err p2.err)"
fi

# examples/Makefile: its per-rank twins are those of kt views.
if command -v make >/dev/null 2>&1 && [ -f "$top/examples/Makefile" ]; then
	mk=$top/examples/Makefile
	if make -s -f "$mk" -j2 KT="$KT_BIN/kt" TRACES=g.json OUT=mk >mk.log 2>&1; then
		same=1
		for f in $files; do cmp -s "v/$f.tsv" "mk/g/$f.tsv" || same=0; done
		cmp -s v/5_memory.tsv mk/merged/views/5_memory.tsv || same=0
		if [ $same = 1 ]; then ok views-makefile; else bad views-makefile; fi
	else
		bad "views-makefile: $(tail -3 mk.log)"
	fi
fi

# A failure to write the memory view: one message, exit 2, no temporary
# file left, and the views written before it in place.
mkdir -p cf/5_memory.txt
before=$(ls "${TMPDIR:-/tmp}" | grep -c '^kt-views\.')
run kt-views -o cf g.json >/dev/null 2>cf.err
rc=$?
after=$(ls "${TMPDIR:-/tmp}" | grep -c '^kt-views\.')
if [ $rc = 2 ] && [ "$(wc -l <cf.err)" -eq 1 ] && grep -q '^kt-views: .*5_memory.txt' cf.err &&
    [ "$after" = "$before" ] && [ -s cf/4_overlap_exposure.tsv ]; then
	ok views-write-error
else
	bad "views-write-error: exit $rc: $(cat cf.err)"
fi
