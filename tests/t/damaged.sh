# tests/t/damaged.sh: every file of ../shared/traces/damaged gives its
# documented repair (stderr names it, the output is valid JSON that jq
# reads, the events are the original's) or one clear error line with
# exit status 2.  Never a crash, never a silent success.
. "$(dirname "$0")/../lib.sh"

d=$KT_SHARED/damaged
if [ ! -d "$d" ]; then
	skip "damaged: $d is absent"
	exit 0
fi
orig=$KT_SHARED/param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json
events "$orig" >"$TMP/orig.ev"

# repaired FILE PATTERN EVENTS: repaired, with PATTERN on stderr, and
# jq reads the output; EVENTS "same" means the original's multiset.
repaired() {
	run kt-normalize "$d/$1" >"$TMP/o.json" 2>"$TMP/e"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		bad "damaged $1: status $rc: $(head -1 "$TMP/e")"
		return
	fi
	if ! grep -q "$2" "$TMP/e" || [ "$(wc -l <"$TMP/e")" -ne 1 ]; then
		bad "damaged $1: stderr: $(cat "$TMP/e")"
		return
	fi
	if ! jq -e .traceEvents "$TMP/o.json" >/dev/null 2>&1; then
		bad "damaged $1: output is not valid JSON"
		return
	fi
	if [ "$3" = same ]; then
		events "$TMP/o.json" >"$TMP/o.ev"
		if ! cmp -s "$TMP/o.ev" "$TMP/orig.ev"; then
			bad "damaged $1: events differ from the original"
			return
		fi
	fi
	ok "damaged $1: $(cat "$TMP/e")"
}

# refused FILE PATTERN: exit 2, one stderr line with PATTERN, no stdout.
refused() {
	run kt-normalize "$d/$1" >"$TMP/o.json" 2>"$TMP/e"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/e")" -eq 1 ] &&
	    grep -q "$2" "$TMP/e" && [ ! -s "$TMP/o.json" ]; then
		ok "damaged $1: $(cat "$TMP/e")"
	else
		bad "damaged $1: status $rc: $(cat "$TMP/e")"
	fi
}

repaired trailing-comma.json 'trailing comma removed' same
repaired bom-crlf.json 'byte-order mark removed' same
repaired empty-event.json 'empty {} event dropped' same
repaired control-char.json 'raw control character escaped' -
repaired bad-escape.json 'invalid escapes kept as literal backslashes' -
repaired inf-nan.json 'bare inf/nan made null' -
repaired truncated.json 'input truncated: every complete event kept' -
refused interleaved.json 'interleaved.json:[0-9]*:[0-9]*: '
refused not-json.json 'not-json.json:1:1: not a JSON trace'
refused empty.json 'empty.json: empty input'
refused truncated-gzip.json.gz 'truncated-gzip.json.gz: .*gzip'

# The truncated file keeps exactly its complete events: a prefix.
run kt-normalize --keep-order "$d/truncated.json" 2>/dev/null |
    jq -c '.traceEvents[]' >"$TMP/t.ev"
n=$(wc -l <"$TMP/t.ev")
jq -c '.traceEvents[]' "$orig" | head -n "$n" >"$TMP/p.ev"
if [ "$n" -gt 1000 ] && cmp -s "$TMP/t.ev" "$TMP/p.ev"; then
	ok "damaged truncated.json: the $n complete events, in order"
else
	bad "damaged truncated.json: kept events are not the original prefix"
fi
# Strict mode refuses what the default repairs.
for f in trailing-comma.json control-char.json bad-escape.json \
    inf-nan.json truncated.json empty-event.json bom-crlf.json; do
	run kt-normalize --strict "$d/$f" >/dev/null 2>"$TMP/e"
	if [ $? -eq 2 ] && grep -q "$f:[0-9]*:[0-9]*: " "$TMP/e"; then
		ok "damaged --strict $f refused with a position"
	else
		bad "damaged --strict $f: $(cat "$TMP/e")"
	fi
done
# --check of the truncated file: a data condition, status 1, one line at
# the place --strict names, the bytes after the last complete event
# counted by Python's own JSON decoder (the events decoded one by one).
run kt-normalize --strict "$d/truncated.json" >/dev/null 2>"$TMP/e"
where=$(sed -n 's/.*truncated\.json:\([0-9]*:[0-9]*\): .*/\1/p' "$TMP/e")
drop=$(python3 -c '
import json, sys
t = open(sys.argv[1], encoding="utf-8").read()
d = json.JSONDecoder()
i = t.index("[", t.index("\"traceEvents\"")) + 1
while True:
    while t[i] in " \t\r\n,":
        i += 1
    try:
        _, i = d.raw_decode(t, i)
    except ValueError:
        break
print(len(t.encode("utf-8")) - len(t[:i].encode("utf-8")))' "$d/truncated.json")
run kt-normalize --check "$d/truncated.json" >"$TMP/o.tsv" 2>"$TMP/e"
rc=$?
if [ $rc -eq 1 ] && [ -n "$where" ] && [ "$(grep -c "check: truncated" "$TMP/e")" -eq 1 ] &&
    grep -q "truncated\.json:$where: check: truncated input: every complete event checked, $drop bytes dropped\$" "$TMP/e" &&
    ! grep -q repaired "$TMP/e" &&
    [ "$(grep -c '^truncated' "$TMP/o.tsv")" -eq 1 ]; then
	ok "damaged --check truncated.json: status 1, one line at $where, $drop bytes"
else
	bad "damaged --check truncated.json: status $rc (want 1 at $where, $drop bytes): $(grep truncated "$TMP/e")"
fi
# Deep nesting and a long string are kept verbatim (not via jq, which
# cannot read 100,000 levels): byte for byte with --keep-order.
for f in deep-nesting.json long-string.json; do
	run kt-normalize --keep-order "$d/$f" >"$TMP/o.json" 2>"$TMP/e"
	if [ $? -eq 0 ] && [ ! -s "$TMP/e" ] &&
	    [ "$(tr -d ' \n' <"$TMP/o.json" | wc -c)" -eq \
	    "$(tr -d ' \n' <"$d/$f" | wc -c)" ]; then
		ok "damaged $f kept verbatim"
	else
		bad "damaged $f"
	fi
done
