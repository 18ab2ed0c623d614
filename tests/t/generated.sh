# tests/t/generated.sh: kt-normalize on traces from the project's own
# generator (tests/ktgen.c): eager and CUDA-graph, several ranks.  jq
# judges: the events are kept, normalize is idempotent, JSON to TSV to
# JSON is lossless, and --check finds nothing in a clean trace but finds
# an overlap and an unbound flow that awk injects through the TSV form.
. "$(dirname "$0")/../lib.sh"

gen=$KT_BUILD/ktgen
cd "$TMP" || exit 1
for spec in "eager:--steps 3" "graph:--graph --streams 300 --steps 2" \
    "rank5:--rank 5 --world 8 --steps 2 --layers 4" \
    "plain:--no-python --no-memory --steps 2"; do
	name=${spec%%:*}
	args=${spec#*:}
	# shellcheck disable=SC2086
	"$gen" $args -o "$name.json" || { bad "generated $name: ktgen"; continue; }
	run kt-normalize "$name.json" >n1.json 2>err
	if [ $? -ne 0 ] || [ -s err ]; then
		bad "generated $name: normalize: $(head -1 err)"
		continue
	fi
	events "$name.json" >a
	events n1.json >b
	check "generated $name: events kept" cmp a b
	toplevel "$name.json" >a
	toplevel n1.json >b
	check "generated $name: top-level keys kept" cmp a b
	# Sorted: every ts after the metadata is at or after the one before.
	if jq -e '[.traceEvents[] | select(.ph != "M") | .ts] |
	    . == sort' n1.json >/dev/null; then
		ok "generated $name: sorted by ts"
	else
		bad "generated $name: not sorted"
	fi
	run kt-normalize n1.json >n2.json 2>/dev/null
	check "generated $name: idempotent" cmp n1.json n2.json
	run kt-normalize --tsv "$name.json" >n.tsv 2>/dev/null
	run kt-normalize n.tsv >n3.json 2>/dev/null
	jq -cS . n1.json >a
	jq -cS . n3.json >b
	check "generated $name: JSON to TSV to JSON" cmp a b
	run kt-normalize --check "$name.json" >c.tsv 2>err
	if [ $? -eq 0 ] && [ "$(wc -l <c.tsv)" -eq 1 ]; then
		ok "generated $name: --check finds nothing"
	else
		bad "generated $name: --check: $(cat err)"
	fi
done

# Inject an overlap: make the first kernel on stream 7 end 1 ns after
# the next one there starts, through the TSV columns (ts_ns, dur_ns).
run kt-normalize --tsv eager.json >e.tsv 2>/dev/null
awk -F'\t' -v OFS='\t' '
	{ line[NR] = $0 }
	$2 == "kernel" && $7 == 7 && n < 2 { k[++n] = NR; ts[n] = $4 }
	END {
		for (i = 1; i <= NR; i++) {
			if (i == k[1]) {
				split(line[i], f, "\t")
				f[5] = ts[2] - ts[1] + 1
				line[i] = f[1]
				for (j = 2; j <= 10; j++)
					line[i] = line[i] "\t" f[j]
			}
			print line[i]
		}
	}' e.tsv | run kt-normalize --check >c.tsv 2>err
if [ $? -eq 1 ] && [ "$(grep -c '^overlap	kernel:' c.tsv)" -eq 1 ] &&
    [ "$(wc -l <c.tsv)" -eq 2 ]; then
	ok "generated: --check finds the one overlap made through TSV"
else
	bad "generated: injected overlap: $(cat err)"
fi
# Drop the first NCCL kernel's line: its f flow end is left unbound.
awk -F'\t' '$2 == "kernel" && $7 == 20 && !done { done = 1; next }
    { print }' e.tsv | run kt-normalize --check >c.tsv 2>err
if [ $? -eq 1 ] && grep -q '^unbound-flow	flow:' c.tsv &&
    [ "$(wc -l <c.tsv)" -eq 2 ]; then
	ok "generated: --check finds the flow left without its kernel"
else
	bad "generated: unbound flow: $(cat err)"
fi
# Moving kernels with awk really moves them (1 us later), and nothing
# else changes.
awk -F'\t' -v OFS='\t' '$2 == "kernel" { $4 += 1000 } { print }' e.tsv |
    run kt-normalize >moved.json 2>/dev/null
jq -c '[.traceEvents[] | select(.cat == "kernel") | .ts] | add' eager.json >a
jq -c '[.traceEvents[] | select(.cat == "kernel") | .ts] | add' moved.json >b
nk=$(jq '[.traceEvents[] | select(.cat == "kernel")] | length' eager.json)
if [ "$(jq -n "$(cat b) - $(cat a) | round")" = "$nk" ]; then
	ok "generated: awk moved each of $nk kernels by 1 us"
else
	bad "generated: awk move: $(cat a) -> $(cat b), $nk kernels"
fi
jq -c '.traceEvents[] | select(.cat != "kernel")' eager.json | sort >a
jq -c '.traceEvents[] | select(.cat != "kernel")' moved.json | sort >b
check "generated: awk move left the other events alone" cmp a b
