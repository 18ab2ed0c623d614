#!/bin/sh
# examples/demo.sh: the main job on the example trace that ships here
# (examples/trace.json.gz, three steps of a small transformer on two ranks made by the
# project's generator, tests/ktgen.c).  Run by `make demo`; the results
# go to examples/out/ (or $KT_DEMO_OUT).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${KT_BIN:-$here/../bin}
out=${KT_DEMO_OUT:-$here/out}
PATH=$bin:$PATH
mkdir -p "$out"
in=$here/trace.json.gz

echo "== kt normalize: canonical, exact, sorted (gzip read by content)"
kt normalize "$in" -o "$out/normalized.json"
printf '   %s: %s bytes from %s compressed bytes\n' "$out/normalized.json" \
    "$(wc -c <"$out/normalized.json")" "$(wc -c <"$in")"

echo "== kt normalize --check: overlaps, unmatched B/E, bad times, unbound flows"
if kt normalize --check "$out/normalized.json" >"$out/check.tsv"; then
	echo "   clean: no problems found"
else
	echo "   problems found: see $out/check.tsv"
fi

echo "== kt normalize --rebase --tsv: the TSV view, times from 0"
kt normalize --rebase --tsv "$in" -o "$out/events.tsv"
head -4 "$out/events.tsv" | cut -c1-110
echo "   ..."

echo "== awk on the TSV view: events per kind"
awk -F'\t' 'NR > 1 && $2 != "trace" { n[$2]++ }
    END { for (k in n) printf "   %-20s %6d\n", k, n[k] }' \
    "$out/events.tsv" | sort -k2 -n -r

echo "== awk on the TSV view: the five longest kernels"
awk -F'\t' '$2 == "kernel" { printf "   %10.3f us  %s\n", $5 / 1000, substr($9, 1, 70) }' \
    "$out/events.tsv" | sort -n -r | head -5

echo "== and back: awk moves every kernel 1 us later, kt normalize writes JSON"
awk -F'\t' -v OFS='\t' '$2 == "kernel" { $4 += 1000 } { print }' \
    "$out/events.tsv" | kt normalize -o "$out/moved.json"
echo "   $out/moved.json"

echo "== kt rank-tag: both ranks in one trace (own pids, flows and clocks)"
kt rank-tag -v "$in" "$here/trace-rank1.json.gz" -o "$out/merged.json"
jq -r '.ktRanks[] | "   rank \(.rank) from \(.rankFrom): \(.events) events, offset \(.offsetNs) ns"' \
    "$out/merged.json" 2>/dev/null || true

echo "== kt slice-window: ProfilerStep#6 of both ranks, CPU start to GPU end"
kt normalize "$out/merged.json" | kt slice-window --steps 6 -o "$out/step6.json"
printf '   %s: %s events\n' "$out/step6.json" \
    "$(kt normalize --tsv "$out/step6.json" | awk 'END { print NR - 2 }')"

echo "== kt bucket: where the GPU time went (one row per bucket; busy = union)"
kt bucket --text "$in" | cut -c1-150 | sed 's/^/   /'
kt bucket --by step,bucket "$in" -o "$out/bucket-steps.tsv"

echo "== kt gaps: lost GPU time, ranked, with what the CPU was doing instead"
kt gaps --top 3 --tsv "$in" 2>"$out/gaps-summary.txt" |
    awk -F'\t' '{ printf "   %-4s %-4s %-9s %-9s %s\n", $3, $4, $9, $10, substr($14, 1, 80) }'
sed 's/^/   /' "$out/gaps-summary.txt"

echo "== kt correlate: the longest kernel with a frame, chased to its launch, CPU op and the user's file:line"
id=$(kt correlate "$in" 2>/dev/null | awk -F'\t' 'NR > 1 && $1 ~ /^kernel:/ && $16 != "-" && $20 == "-" && $7 > max { max = $7; id = $1 } END { print id }')
kt correlate --id "$id" "$in" 2>/dev/null |
    awk -F'\t' '{ printf "   %-13s %-22s %-17s %-10s %-5s %s\n", $1, substr($5, 1, 22), $9, $11, $14, $16 }'
echo "   GPU time by the user's line (backward kernels charged to their forward op's):"
kt correlate "$in" 2>/dev/null | awk -F'\t' 'NR > 1 { t[$16] += $7 }
    END { for (f in t) printf "   %12d ns  %s\n", t[f], f }' | sort -rn | head -4

echo "== kt ops: the key_averages() table, the five ops with the most GPU time"
kt ops -n 5 "$in" 2>/dev/null |
    awk -F'\t' '{ printf "   %-14s %-28s %6s %13s %12s %13s  %s\n", $1, substr($2, 1, 28), $3, $4, $5, $10, $16 }'

echo "== kt decompose, kt overlap, kt memory: the other three views"
kt decompose --text "$in" | cut -c1-150 | sed 's/^/   /'
kt overlap --summary --text "$in" | cut -c1-150 | sed 's/^/   /'
kt memory --text --svg "$out/memory.svg" "$in" | cut -c1-150 | sed 's/^/   /'
echo "   $out/memory.svg"

echo "== kt views: all five views of both ranks, into numbered files"
kt views "$in" "$here/trace-rank1.json.gz" -o "$out/views"
ls "$out/views" | sed 's/^/   /' | head -8

echo "== kt layer-track --suggest: kernels that run a multiple of 4 times (candidate anchors)"
kt layer-track --suggest -n 4 "$in" | head -4 |
    awk -F'\t' '{ printf "   %-6s %-9s %-11s %-6s %-24s %s\n", $1, $2, $8, $10, $13, substr($14, 1, 50) }'

echo "== kt layer-track: guides L0..L3 of every forward pass, beside each rank's GPU streams"
for pid in 1000 2000; do
	src=$out/merged.json
	[ "$pid" = 1000 ] || src=$out/guided-1000.json
	kt layer-track -a vectorized_layer_norm_kernel -e tn_n_tilesize256x128x64 \
	    -n 4 -p forward --pid "$pid" \
	    -E 'the first kernel of each forward layer (tests/ktgen.md)' \
	    "$src" -o "$out/guided-$pid.json"
done
jq -r '"   pid \(.pid): \(.passes) passes of \(.numLayers) layers, input sha256 \(.inputSha256[0:16])..."' \
    "$out"/guided-*.json.layers.json

echo "== kt compact-lanes: the GPU rows as a few lanes per device, reversibly"
kt compact-lanes --group "$out/guided-2000.json" -o "$out/view.json"
jq -r '.devices[] | "   pid \(.pid): \(.streams) streams -> \(.lanes) lanes (peak \(.peak))"' \
    "$out/view.json.compact.json" 2>/dev/null || true
kt compact-lanes --restore "$out/view.json" -o "$out/restored.json"
if cmp -s "$out/restored.json" "$out/guided-2000.json"; then
	echo "   --restore gives back the source byte for byte"
fi
echo "== the result: $out/view.json, layer-guided and compacted"
echo "   open it in https://ui.perfetto.dev"
