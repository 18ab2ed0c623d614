# tests/t/fuzzreplay.sh: every libFuzzer harness replays its kept corpus
# (tests/fuzz/corpus/NAME/, grown by `make fuzz-long`) without libFuzzer,
# built with the suite's compiler and flags: under check-asan that is
# the sanitizers on every input a campaign kept, so a bug that the
# fuzzers once reached stays fixed.  A crash or sanitizer report fails.
. "$(dirname "$0")/../lib.sh"

fz=$(cd "$(dirname "$0")/../fuzz" && pwd)
n=0
for h in "$fz"/*.c; do
	name=$(basename "$h" .c)
	bin=$KT_BUILD/replay-$name
	n=$((n + 1))
	if [ ! -x "$bin" ]; then
		bad "fuzz replay: $name: no $bin"
		continue
	fi
	set --
	[ -d "$fz/corpus/$name" ] && set -- "$fz/corpus/$name"
	if [ $# -eq 0 ]; then
		skip "fuzz replay: $name: no corpus kept yet"
		continue
	fi
	if out=$(cd "$TMP" && "$bin" "$@" 2>&1); then
		ok "fuzz replay: $name: $(echo "$out" | sed -n 's/^replay: //p' | tail -1)"
	else
		bad "fuzz replay: $name: $(echo "$out" | tail -3 | tr '\n' ' ')"
	fi
done
[ "$n" -gt 0 ] || bad "fuzz replay: no harness in $fz"
exit 0
