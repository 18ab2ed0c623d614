# tests/t/recipes.sh: the map/reduce recipes of examples/ on the engines
# users have, run on 4 generated ranks (build/ktgen -r R -w 4):
#  - examples/parallel.sh with local jobs, and across a "machine" reached
#    by a fake ssh (a folder of this one, so that --transferfile,
#    --return and --cleanup really move the files); skipped without GNU
#    parallel (or rsync, for the transfer);
#  - examples/slurm.sh: sh -n and bash -n, then run through a fake
#    sbatch put first in PATH (it runs the array tasks here with
#    SLURM_ARRAY_TASK_ID set, then the job that depends on them, only if
#    they all succeeded);
#  - examples/Makefile's map and reduce with make -j2.
# The judge: each per-rank folder is what kt views writes for that rank
# alone, and each reduced table (kt views --merge) equals the
# table kt views writes for the kt rank-tag merge of all four traces (a
# different path: one model of the merged trace), but the columns the
# merge cannot give exactly (p50_ns, p90_ns: '-'; longest_row, which
# cites a row of the per-rank file).
# Also the three lines of the README's "Many ranks", run as written (the
# third with the ranks 0,3 of this job for its 0,37).
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
ex=$(cd "$(dirname "$0")/../../examples" && pwd)
cd "$TMP" || exit 1

names="trace-rank0 trace-rank1 trace-rank2 trace-rank3"
mkdir -p traces
for r in 0 1 2 3; do
	"$KT_BUILD/ktgen" --rank "$r" --world 4 --steps 2 --layers 2 \
	    -o "traces/trace-rank$r.json" || bad "setup: ktgen"
done
gzip -1 traces/trace-rank3.json	# a compressed one too
set -- traces/trace-rank0.json traces/trace-rank1.json \
    traces/trace-rank2.json traces/trace-rank3.json.gz
for n in $names; do
	f=$(ls traces/$n.json*)
	mkdir -p ref/views
	kt views "$f" -o "ref/views/$n" 2>/dev/null || bad "setup: kt views $f"
done
kt rank-tag "$@" -o all.json 2>/dev/null &&
    kt views all.json -o ref/job 2>/dev/null ||
    bad "setup: kt views of the merged trace"

# masked TSV: the table with the columns a merge cannot give exactly
# set to '*' (by the header's names).
masked() {
	awk -F'\t' -v OFS='\t' '
	NR == 1 { for (i = 1; i <= NF; i++)
		if ($i == "p50_ns" || $i == "p90_ns" || $i == "longest_row")
			m[i] = 1 }
	{ for (i in m) if (NR > 1) $i = "*"; print }' "$1"
}

# judge NAME OUT ERR RC: OUT/views/NAME is kt views of each rank, and
# OUT/job the reduce (see the top), against those in $ref; ERR and RC
# are the recipe's.
ref=ref
judge() {
	_n=$1
	_o=$2
	_why=
	for _r in $names; do
		diff -r "$ref/views/$_r" "$_o/views/$_r" >/dev/null 2>&1 ||
		    _why="$_why $_r differs from kt views of it;"
	done
	if [ -z "$_why" ]; then
		ok "$_n: each of the 4 per-rank folders is kt views of its rank"
	else
		bad "$_n:$_why $(head -1 "$3")"
	fi
	_why=
	_k=0
	for _t in "$_o"/job/*.tsv; do
		_b=$(basename "$_t")
		_k=$((_k + 1))
		if [ ! -f "$ref/job/$_b" ]; then
			_why="$_why $_b is not a view;"
		elif [ "$(masked "$_t")" != "$(masked "$ref/job/$_b")" ]; then
			_why="$_why $_b differs from that of the merged trace;"
		fi
	done
	if [ "$4" -eq 0 ] && [ "$_k" -ge 4 ] && [ -z "$_why" ]; then
		ok "$_n: the $_k reduced tables are those of kt views on the kt rank-tag merge"
	else
		bad "$_n: reduce: status $4, $_k tables:$_why $(head -1 "$3")"
	fi
}

# ---------------------------------------------------------------------
# The README's first example, as written, on a raw 24-layer trace
# gzipped (ktgen's steps are 5 to 12): the window's steps (as many as
# the trace's ProfilerSteps 3 to 5, counted by grep) each get the 24
# layer rows L0-L23, and compact-lanes keeps every kernel of the slice.
mkdir -p first
"$KT_BUILD/ktgen" --layers 24 --steps 8 | gzip -1 >first/big.json.gz
awk 'NR > 1 && /^    kt / { on = 1 } on { sub(/^    /, ""); print } on && !/\|$/ { exit }' \
    "$(cd "$ex/.." && pwd)/README.md" >first/first.sh
(cd first && sh ./first.sh) 2>first/err
rc=$?
_steps=$(gzip -dc first/big.json.gz | grep -o '"ProfilerStep#[3-5]"' | sort -u | wc -l)
_want=$(run kt-slice-window --steps 3-5 first/big.json.gz 2>/dev/null |
    jq '[.traceEvents[] | select(.cat == "kernel")] | length')
if [ "$rc" -eq 0 ] && grep -q 'slice-window --steps 3-5 big.json.gz' first/first.sh &&
    [ "$(jq '[.traceEvents[] | select(.name | test("^L[0-9]+$")) | .name] | unique | length' first/view.json)" = 24 ] &&
    [ "$(jq '[.traceEvents[] | select(.name | test("^L[0-9]+$"))] | length' first/view.json)" = "$((24 * _steps))" ] &&
    [ "$(jq '[.traceEvents[] | select(.cat == "kernel")] | length' first/view.json)" = "$_want" ] &&
    [ "$_steps" -ge 1 ]; then
	ok "README's first example: $_steps step(s), 24 layer rows each, the slice's $_want kernels"
else
	bad "README's first example: status $rc: $(head -1 first/err) ($(tr '\n' ' ' <first/first.sh))"
fi

# ---------------------------------------------------------------------
# The README's three lines, on the four traces gzipped.
readme=$(cd "$ex/.." && pwd)/README.md
awk '/^## Many ranks/ { on = 1; next } on && /^## / { exit }
    on && /^    [a-z]/ { sub(/^    /, ""); print }' "$readme" >three.sh
mkdir -p rd/traces
for n in $names; do
	f=$(ls traces/$n.json*)
	case $f in
	*.gz) cp "$f" rd/traces/ ;;
	*) gzip -1 -c "$f" >"rd/traces/$n.json.gz" ;;
	esac
done
if [ "$(wc -l <three.sh)" -ne 3 ]; then
	bad "README: not three lines under Many ranks: $(cat three.sh)"
elif ! command -v parallel >/dev/null 2>&1; then
	skip "README's three lines: no GNU parallel"
else
	(cd rd && sed 's/--ranks 0,37/--ranks 0,3/' ../three.sh | sh -e) >out 2>err
	rc=$?
	# The reference, from rd too (the views name their input's path).
	(cd rd && for n in $names; do
		kt views "traces/$n.json.gz" -o "../rdref/views/$n" || exit 1
	done && kt rank-tag traces/*.json.gz -o ../rdall.json &&
	    kt views ../rdall.json -o ../rdref/job &&
	    kt rank-tag traces/trace-rank0.json.gz traces/trace-rank3.json.gz \
	    -o ../look.json) 2>/dev/null || bad "setup: the README's reference"
	ref=rdref
	judge "README's three lines" rd err $rc
	ref=ref
	if [ $rc = 0 ] && cmp -s look.json rd/look.json; then
		ok "README's rank-tag --ranks 0,3 is rank-tag of those two traces"
	else
		bad "README's rank-tag --ranks: status $rc: $(head -1 err)"
	fi
fi

# A rank and a malformed trace (kt views: status 2).
mkdir -p broken
cp traces/trace-rank0.json broken/
printf '{"traceEvents": [{"ph": "X", "ts": 1]}\n' >broken/trace-rank1.json

# ---------------------------------------------------------------------
# GNU parallel.
if command -v parallel >/dev/null 2>&1; then
	PARALLEL=-j2 sh "$ex/parallel.sh" par "$@" >out 2>err
	judge "parallel -j2" par err $?
	# A map that fails (a malformed trace: status 2) stops the recipe
	# before the reduce.
	PARALLEL=-j2 sh "$ex/parallel.sh" pbad broken/trace-rank0.json \
	    broken/trace-rank1.json >out 2>err
	rc=$?
	if [ "$rc" -ne 0 ] && [ ! -d pbad/job ] &&
	    grep -q 'trace-rank1.json:1:37: expected' err &&
	    ! grep -q -- --merge err; then
		ok "parallel: a failed map (a malformed trace) stops it before the reduce, status $rc"
	else
		bad "parallel: failed map: status $rc: $(head -1 err)"
	fi
	# Across machines without a shared file system: "fakehost" is the
	# folder remote/, reached by a fake ssh (parallel runs rsync with it
	# too).  The traces and OUT are relative paths, as the recipe says.
	if command -v rsync >/dev/null 2>&1; then
		mkdir -p remote
		cat >fakessh <<'EOF'
#!/bin/sh
# A fake ssh: "HOST [--] COMMAND" runs COMMAND in $KT_FAKE_REMOTE.
echo "$*" >>"$KT_FAKE_REMOTE.log"
while [ $# -gt 0 ]; do
	case $1 in
	-[lopFiJ]) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
shift
[ "${1:-}" = -- ] && shift
# A login there sets HOME and SHELL (parallel's worker runs the job
# with $SHELL; CI has none set).
HOME=$KT_FAKE_REMOTE
SHELL=/bin/sh
export HOME SHELL
cd "$HOME" && exec sh -c "$*"
EOF
		chmod +x fakessh
		KT_FAKE_REMOTE=$TMP/remote KT_TRANSFER=1 \
		    PARALLEL="--ssh $TMP/fakessh -S 2/fakehost" \
		    sh "$ex/parallel.sh" ptr "$@" >out 2>err
		rc=$?
		judge "parallel --transferfile/--return over ssh" ptr err $rc
		if grep -q 'rsync --server' remote.log &&
		    [ -z "$(find remote -mindepth 1 | head -1)" ] &&
		    [ ! -e remote/traces ]; then
			ok "parallel over ssh: the traces went by rsync and nothing is left there"
		else
			bad "parallel over ssh: $(find remote -mindepth 1 | head -3)"
		fi
	else
		skip "parallel over ssh: no rsync"
	fi
else
	skip "parallel: GNU parallel is absent (make deps installs it)"
fi

# ---------------------------------------------------------------------
# Slurm: syntax, then a fake sbatch.
check "slurm: sh -n examples/slurm.sh" sh -n "$ex/slurm.sh"
if command -v bash >/dev/null 2>&1; then
	check "slurm: bash -n examples/slurm.sh" bash -n "$ex/slurm.sh"
fi
mkdir -p shim slurmstate
cat >shim/sbatch <<'EOF'
#!/bin/sh
# A fake sbatch: runs the job here at once.  --array=LO-HI[%MAX] runs the
# script once a task, SLURM_ARRAY_TASK_ID set; --dependency=afterok:J
# runs it only if every task of job J exited 0 (else, as Slurm, never).
# Prints the job id; logs each call in $FAKE_SLURM/calls.
st=$FAKE_SLURM
echo "$*" >>"$st/calls"
array= dep=
while [ $# -gt 0 ]; do
	case $1 in
	--array=*) array=${1#*=} ;;
	--dependency=*) dep=${1#*=} ;;
	-[opAJtNnc]) shift ;;
	-*) ;;
	*) break ;;
	esac
	shift
done
script=$1
shift
id=$(($(cat "$st/last" 2>/dev/null || echo 1000) + 1))
echo "$id" >"$st/last"
echo "$id"
case $dep in
'') ;;
afterok:*) [ -f "$st/${dep#afterok:}.ok" ] || exit 0 ;;
*) echo "sbatch: unknown dependency $dep" >&2; exit 1 ;;
esac
fail=
if [ -n "$array" ]; then
	lo=${array%%-*}
	hi=${array#*-}
	hi=${hi%%%*}
	i=$lo
	while [ "$i" -le "$hi" ]; do
		SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_JOB_ID=$id \
		    sh "$script" "$@" >"$st/$id-$i.log" 2>&1 || fail=1
		i=$((i + 1))
	done
else
	SLURM_JOB_ID=$id sh "$script" "$@" >"$st/$id.log" 2>&1 || fail=1
fi
[ -n "$fail" ] || touch "$st/$id.ok"
EOF
chmod +x shim/sbatch
# slurm CHUNK MAX OUT TRACES...: the recipe through the shim.
slurm() {
	_c=$1
	_m=$2
	shift 2
	PATH=$TMP/shim:$PATH FAKE_SLURM=$TMP/slurmstate KT_CHUNK=$_c \
	    KT_MAX_TASKS=$_m sh "$ex/slurm.sh" "$@" >out 2>err
}
slurm 3 2 slu "$@"
rc=$?
# The reduce's own errors are in its log (on Slurm: OUT/logs).
cat slurmstate/*.log >err.jobs 2>/dev/null
if [ "$rc" -eq 0 ] && grep -q -- '--array=0-1%2 .*slurm.sh map slu 3$' slurmstate/calls &&
    grep -q -- "--dependency=afterok:$(head -1 out | sed 's/^map: job \([0-9]*\).*/\1/') .*slurm.sh reduce slu$" slurmstate/calls &&
    [ "$(wc -l <slu/traces.list)" -eq 4 ]; then
	ok "slurm: 4 traces, KT_CHUNK=3: an array of 2 tasks (at most 2 at once), then the reduce after it"
else
	bad "slurm: submission: status $rc: $(cat err) $(cat slurmstate/calls)"
fi
[ -d slu/job ] && rc=0 || rc=1
judge "slurm, 3 traces a task" slu err.jobs "$rc"
rm -f slurmstate/*.log
slurm '' '' slu1 "$@"
cat slurmstate/*.log >err.jobs 2>/dev/null
if grep -q -- '--array=0-3 .*slurm.sh map slu1 1$' slurmstate/calls; then
	ok "slurm: by default one task a trace"
else
	bad "slurm: one task a trace: $(tail -2 slurmstate/calls)"
fi
[ -d slu1/job ] && rc=0 || rc=1
judge "slurm, one trace a task" slu1 err.jobs "$rc"
# A task that fails: the reduce never runs.
slurm 1 '' sbad broken/trace-rank0.json broken/trace-rank1.json
if [ -s sbad/views/trace-rank0/3_kernel_table.tsv ] && [ ! -d sbad/job ] &&
    [ ! -e sbad/views/trace-rank1/3_kernel_table.tsv ] &&
    [ ! -e "slurmstate/$(cat slurmstate/last).log" ]; then
	ok "slurm: a failed task (a malformed trace): no reduce"
else
	bad "slurm: failed task: $(ls sbad sbad/views)"
fi
for a in '' -x; do
	PATH=$TMP/shim:$PATH FAKE_SLURM=$TMP/slurmstate sh "$ex/slurm.sh" $a \
	    >out 2>err
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(cat err)" = 'usage: slurm.sh OUT TRACE...' ]; then
		ok "slurm: usage '$a': status 2, one line"
	else
		bad "slurm: usage '$a': status $rc: $(cat err)"
	fi
done

# ---------------------------------------------------------------------
# examples/Makefile: the map and the reduce, make -j2.
if make -s -f "$ex/Makefile" -j2 job KT=kt TRACES="$*" JOB=mk >out 2>err
then rc=0; else rc=$?; fi
judge "make -j2 job" mk err "$rc"
if [ "$rc" -eq 0 ] && make -q -f "$ex/Makefile" job KT=kt TRACES="$*" JOB=mk
then
	ok "make: a second run has nothing to do"
else
	bad "make: a second run would redo targets (or the first failed)"
fi
