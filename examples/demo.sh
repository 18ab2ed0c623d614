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
echo "   open it in https://ui.perfetto.dev"
