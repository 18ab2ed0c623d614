# tests/t/aflreplay.sh: the inputs AFL++ kept for each filter
# (tests/fuzz/corpus/afl-NAME/, grown by `make fuzz-afl`) run again on
# the suite's own binaries, through the launcher in its exec form
# ($KT_BUILD/afl-launch, tests/fuzz/afl/launch.c: each input is a
# command line and a trace).  Every run must end by itself with status
# 0, 1 or 2 (no signal, no sanitizer report under check-asan, within
# 20 s), and a run that ends with status 2 (usage, I/O or bad input)
# writes nothing on standard output, as kt(7) promises.
. "$(dirname "$0")/../lib.sh"

fz=$(cd "$(dirname "$0")/../fuzz/corpus" && pwd)
launch=$KT_BUILD/afl-launch
if [ ! -x "$launch" ]; then
	bad "afl replay: no $launch"
	exit 0
fi
n=0
for d in "$fz"/afl-*/; do
	[ -d "$d" ] || continue
	d=${d%/}
	f=${d##*/afl-}
	n=$((n + 1))
	bin=$KT_BIN/kt-$f
	if [ ! -x "$bin" ]; then
		bad "afl replay: $f: no $bin"
		continue
	fi
	mkdir -p "$TMP/afl-$f"
	runs=0 fails=
	for x in "$d"/*; do
		[ -f "$x" ] || continue
		runs=$((runs + 1))
		timeout 20 "$launch" "$TMP/afl-$f" "$x" "$bin" \
		    >"$TMP/afl.out" 2>"$TMP/afl.err" </dev/null
		rc=$?
		case $rc in
		0 | 1) ;;
		2)
			if [ -s "$TMP/afl.out" ]; then
				fails="$fails $(basename "$x") (status 2 with output)"
			fi
			;;
		*)
			fails="$fails $(basename "$x") (status $rc: $(grep -m1 -E 'ERROR|runtime error|Sanitizer' "$TMP/afl.err" | cut -c1-160))"
			;;
		esac
	done
	if [ -n "$fails" ]; then
		bad "afl replay: $f: $runs inputs:$fails"
	else
		ok "afl replay: $f: $runs inputs"
	fi
done
[ "$n" -gt 0 ] || skip "afl replay: no corpus kept yet"
exit 0
