# tests/t/conformance.sh: kt-normalize against every real trace under
# ../shared/traces (skipped when that folder is absent).  jq is the
# independent judge: it never shares code with kt.  For each trace:
#  - the multiset of events is kept, each equal to the original as a JSON
#    value (repairs excepted: then exactly the reported events differ);
#  - every top-level key is kept, and every ts/dur text exactly;
#  - normalize is idempotent (byte for byte);
#  - JSON to TSV to JSON is lossless (equal as JSON values);
#  - --keep-order keeps the input order.
# A file that is not a trace (no traceEvents) must be refused: exit 2 and
# one line on stderr.
. "$(dirname "$0")/../lib.sh"

if ! have_shared; then
	skip "conformance: $KT_SHARED is absent"
	exit 0
fi
find "$KT_SHARED" -type f ! -path '*/damaged/*' \
    \( -name '*.json' -o -name '*.gz' \) | sort >"$TMP/list"
while IFS= read -r f; do
	rel=${f#"$KT_SHARED"/}
	plain "$f" >"$TMP/in.json"
	if ! jq -e 'type == "array" or has("traceEvents")' "$TMP/in.json" \
	    >/dev/null 2>&1; then
		run kt-normalize "$f" >"$TMP/o" 2>"$TMP/e"
		rc=$?
		if [ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/e")" -eq 1 ]; then
			ok "refuses $rel"
		else
			bad "refuses $rel: status $rc"
		fi
		continue
	fi
	if ! run kt-normalize "$f" >"$TMP/n1.json" 2>"$TMP/e1"; then
		bad "normalize $rel: $(head -1 "$TMP/e1")"
		continue
	fi
	events "$TMP/in.json" >"$TMP/ev.in"
	events "$TMP/n1.json" >"$TMP/ev.out"
	# Numeric-string ids are written as numbers: compare by value, and
	# count them (jq) against the repair reported.
	sid=$(sed -n "s/.*repaired: \([0-9]*\) event.*numeric-string.*/\1/p" "$TMP/e1")
	if [ -n "$sid" ]; then
		nsid=$(jq "$JQ_IDS"' [.traceEvents[] | select((.pid | numstr) or (.tid | numstr))] | length' "$TMP/in.json")
		[ "$nsid" = "$sid" ] && ok "string ids made numbers, as reported ($sid): $rel" ||
		    bad "string ids $rel: jq finds $nsid, reported $sid"
		events_byvalue "$TMP/in.json" >"$TMP/ev.in"
		grep -v 'numeric-string' "$TMP/e1" >"$TMP/e1x"
		mv "$TMP/e1x" "$TMP/e1"
	fi
	if grep -q 'repaired:' "$TMP/e1"; then
		# Only B/E repairs can happen on these traces: synthesized
		# Es carry args.kt_repair; dropped events must be Es.
		grep -v '"kt_repair"' "$TMP/ev.out" >"$TMP/ev.kept"
		added=$(comm -13 "$TMP/ev.in" "$TMP/ev.kept" | wc -l)
		dropped=$(comm -23 "$TMP/ev.in" "$TMP/ev.kept" | wc -l)
		nonE=$(comm -23 "$TMP/ev.in" "$TMP/ev.kept" | grep -vc '"ph":"E"')
		said=$(sed -n 's/.*repaired: \([0-9]*\) E.*/\1/p' "$TMP/e1")
		synth=$(grep -c '"kt_repair"' "$TMP/ev.out")
		saidb=$(sed -n 's/.*repaired: \([0-9]*\) B.*/\1/p' "$TMP/e1")
		if [ "$added" -eq 0 ] && [ "$nonE" -eq 0 ] &&
		    [ "$dropped" -eq "${said:-0}" ] &&
		    [ "$synth" -eq "${saidb:-0}" ]; then
			ok "events kept, repairs as reported: $rel"
		else
			bad "events $rel: added $added dropped $dropped ($nonE not E), said ${said:-0}/${saidb:-0}"
		fi
	else
		if cmp -s "$TMP/ev.in" "$TMP/ev.out"; then
			ok "events kept: $rel"
		else
			bad "events $rel: multiset differs"
		fi
		timetexts "$TMP/in.json" >"$TMP/t.in"
		timetexts "$TMP/n1.json" >"$TMP/t.out"
		if cmp -s "$TMP/t.in" "$TMP/t.out"; then
			ok "time texts exact: $rel"
		else
			bad "time texts $rel differ"
		fi
		run kt-normalize --keep-order "$f" >"$TMP/k.json" 2>/dev/null
		jq -c "$JQ_IDS"' if type == "array" then .[] else .traceEvents[] end | byvalue' \
		    "$TMP/in.json" >"$TMP/o.in"
		jq -c '.traceEvents[]' "$TMP/k.json" >"$TMP/o.out"
		if cmp -s "$TMP/o.in" "$TMP/o.out"; then
			ok "keep-order keeps order: $rel"
		else
			bad "keep-order $rel: order differs"
		fi
	fi
	toplevel "$TMP/in.json" >"$TMP/m.in"
	toplevel "$TMP/n1.json" >"$TMP/m.out"
	if cmp -s "$TMP/m.in" "$TMP/m.out"; then
		ok "top-level keys kept: $rel"
	else
		bad "top-level keys $rel differ"
	fi
	run kt-normalize "$TMP/n1.json" >"$TMP/n2.json" 2>/dev/null
	if cmp -s "$TMP/n1.json" "$TMP/n2.json"; then
		ok "idempotent: $rel"
	else
		bad "idempotent $rel: second pass differs"
	fi
	run kt-normalize --tsv "$f" 2>/dev/null >"$TMP/n.tsv"
	run kt-normalize "$TMP/n.tsv" >"$TMP/n3.json" 2>/dev/null
	jq -cS . "$TMP/n1.json" >"$TMP/j1"
	jq -cS . "$TMP/n3.json" >"$TMP/j3"
	if cmp -s "$TMP/j1" "$TMP/j3"; then
		ok "JSON to TSV to JSON lossless: $rel"
	else
		bad "TSV round trip $rel differs"
	fi
done <"$TMP/list"
