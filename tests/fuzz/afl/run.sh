#!/bin/sh
# tests/fuzz/afl/run.sh NAME...: AFL++ on each filter build-afl/afl-NAME
# (make afl-build) for $AFL_SECONDS (default 60), one after the other,
# seeded from build-afl/seeds/NAME (the golden cases) and the kept
# corpus tests/fuzz/corpus/afl-NAME/, which is then replaced by the
# minimised union of itself and what the run found (afl-cmin; inputs of
# at most 4 KiB, to keep it small).  Prints and appends to tests/fuzz/LOG one line per
# filter: executions, findings (crashes and hangs: a signal, a sanitizer
# report, a run past the time limit; never an exit status), the kept
# corpus.  Findings are copied to build-afl/found-NAME/; the status is
# 1 when there are any.
set -u
cd "$(dirname "$0")/../../.."
secs=${AFL_SECONDS:-60}
top=$(pwd)
b=$top/build-afl
# Sanitizers: abort (a signal AFL sees), no leak check (a filter that
# exits keeps what it holds), no symbolising (fast).
ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1:handle_abort=1
UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:symbolize=0
AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_QUIET=1
AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CRASHES=1
AFL_NO_WARN_INSTABILITY=1 AFL_FAST_CAL=1
export ASAN_OPTIONS UBSAN_OPTIONS AFL_NO_UI AFL_SKIP_CPUFREQ AFL_NO_AFFINITY \
    AFL_QUIET AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES AFL_SKIP_CRASHES \
    AFL_NO_WARN_INSTABILITY AFL_FAST_CAL
# The runs' scratch folders and AFL's current input in memory where
# /dev/shm is there: every run writes its input and outputs.
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm=$(mktemp -d /dev/shm/kt-afl.XXXXXX)
	AFL_TMPDIR=$shm
	export AFL_TMPDIR
	trap 'rm -rf "$shm"' EXIT
fi
bad=0
for f in "$@"; do
	bin=$b/afl-$f
	kept=$top/tests/fuzz/corpus/afl-$f
	out=$b/out-$f
	scratch=${shm:-$b}/scratch-$f
	[ -x "$bin" ] || { echo "fuzz-afl: no $bin (make afl-build)"; exit 2; }
	rm -rf "$out" "$b/in-$f" "$b/cmin-$f" "$b/found-$f"
	mkdir -p "$b/in-$f" "$scratch" "$b/found-$f"
	cp "$b/seeds/$f"/* "$b/in-$f"/ 2>/dev/null
	[ -d "$kept" ] && cp "$kept"/* "$b/in-$f"/ 2>/dev/null
	afl-fuzz -i "$b/in-$f" -o "$out" -x "$b/kt.dict" -t 2000 -m none \
	    -V "$secs" -- "$bin" "$scratch" @@ >"$b/afl-$f.log" 2>&1
	rc=$?
	st=$out/default/fuzzer_stats
	execs=$(sed -n 's/^execs_done *: *//p' "$st" 2>/dev/null)
	crashes=$(sed -n 's/^saved_crashes *: *//p' "$st" 2>/dev/null)
	hangs=$(sed -n 's/^saved_hangs *: *//p' "$st" 2>/dev/null)
	found=$((${crashes:-0} + ${hangs:-0}))
	for d in crashes hangs; do
		for x in "$out/default/$d"/id:*; do
			[ -f "$x" ] && cp "$x" "$b/found-$f/$d-$(basename "$x" |
			    cut -c1-9)"
		done
	done
	# The kept corpus: the minimised union of itself and the queue.
	mkdir -p "$b/cmin-$f/all"
	[ -d "$kept" ] && cp "$kept"/* "$b/cmin-$f/all"/ 2>/dev/null
	for x in "$out/default/queue"/id:*; do
		[ -f "$x" ] || continue
		[ "$(wc -c <"$x")" -le 4096 ] || continue
		cp "$x" "$b/cmin-$f/all/$(cksum <"$x" | cut -d' ' -f1)"
	done
	if AFL_QUIET=1 afl-cmin -i "$b/cmin-$f/all" -o "$b/cmin-$f/min" \
	    -t 2000 -m none -- "$bin" "$scratch" @@ >"$b/cmin-$f.log" 2>&1 &&
	    [ -n "$(ls "$b/cmin-$f/min" 2>/dev/null)" ]; then
		rm -rf "$kept"
		mkdir -p "$kept"
		for x in "$b/cmin-$f/min"/*; do
			cp "$x" "$kept/$(cksum <"$x" | cut -d' ' -f1)"
		done
	fi
	line="$(date -u +%Y-%m-%dT%H:%MZ) afl-$f seconds=$secs execs=${execs:-0} findings=$found corpus=$(ls "$kept" 2>/dev/null | wc -l)"
	echo "$line"
	echo "$line" >>tests/fuzz/LOG
	if [ "$rc" -ne 0 ] || [ -z "$execs" ]; then
		echo "fuzz-afl: afl-fuzz on $f failed: see $b/afl-$f.log"
		tail -5 "$b/afl-$f.log"
		bad=1
	fi
	if [ "$found" -gt 0 ]; then
		echo "fuzz-afl: $f: findings in $b/found-$f/"
		bad=1
	fi
done
exit $bad
