# tests/t/merge.sh: the reduce of per-rank tables (lib/model/merge.c):
# kt-bucket, kt-gaps, kt-memory, kt-ops --merge and kt-views --merge.
# The judge is another kt path computed differently: the table of the
# trace that kt rank-tag merges from the same ranks, read from events
# (the merge reads only the per-rank tables).  Every column is compared
# except those that differ by design:
#  - p50_ns, p90_ns (kt-bucket, 3_kernel_table): percentiles do not
#    merge; a merged row of several ranks has "-" (checked), a row of
#    one rank keeps its value (checked equal);
#  - longest_row (kt-ops, 6_op_table): a row id is per file, so the
#    merge cites the per-rank table's file (FILE:kind:index) where the
#    merged trace gives its own row; checked against the cited file by
#    awk (that file's row of the same key has that id and longest_ns).
# Sums are also checked by awk over the per-rank tables.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
gen=$KT_BUILD/ktgen
cd "$TMP" || exit 1

# Four ranks; rank 2 has an injected stall and rank 3 tiny kernels, so
# the ranks' tables differ in rows, not only in times.
for r in 0 1 2 3; do
	case $r in
	2) more="--inject-gap 400000" ;;
	3) more="--inject-tiny 10" ;;
	*) more= ;;
	esac
	# shellcheck disable=SC2086
	"$gen" --steps 3 --layers 2 --rank $r --world 4 $more -o r$r.json
done
if ! kt-rank-tag r0.json r1.json r2.json r3.json -o all.json 2>/dev/null; then
	bad "merge: kt rank-tag failed"
	exit 0
fi
R="r0 r1 r2 r3"

# each PREFIX CMD...: CMD on every rank into PREFIX-rN.tsv, and on the
# merged trace into PREFIX-all.tsv.  0, or 1 when one failed.
each() {
	_p=$1
	shift
	for _r in $R all; do
		"$@" "$_r.json" >"$_p-$_r.tsv" 2>/dev/null || return 1
	done
}

# tables PREFIX: the per-rank tables' names.
tables() {
	for _r in $R; do printf '%s ' "$1-$_r.tsv"; done
}

# same NAME A B: ok when the files are equal, else the first lines of
# their difference.
same() {
	if cmp -s "$2" "$3" && [ -s "$2" ]; then
		ok "$1"
	else
		bad "$1: $(diff "$2" "$3" | head -4)"
	fi
}

# cutcol FILE NAME...: FILE without the columns of those names.
cutcol() {
	_f=$1
	shift
	awk -F'\t' -v OFS='\t' -v drop="$*" '
	NR == 1 { n = split(drop, d, " "); for (i = 1; i <= NF; i++)
		for (j = 1; j <= n; j++) if ($i == d[j]) skip[i] = 1 }
	{ s = ""; k = 0
	  for (i = 1; i <= NF; i++) if (!skip[i]) s = s (k++ ? "\t" : "") $i
	  print s }' "$_f"
}

# ------------------------------------------------------------------
# kt-gaps: the rows pass through, ranked together; byte-identical.
for mode in plain summary cause top; do
	case $mode in
	plain) set -- ;;
	summary) set -- --summary ;;
	cause) set -- --by cause ;;
	top) set -- --summary --top 3 ;;
	esac
	if each "g$mode" run kt-gaps "$@" &&
	    # shellcheck disable=SC2046
	    run kt-gaps --merge $([ $mode = top ] && echo --top 3) \
	    $(tables "g$mode") >"g$mode.m" 2>"g$mode.err"; then
		same "merge-gaps-$mode" "g$mode.m" "g$mode-all.tsv"
	else
		bad "merge-gaps-$mode: $(cat "g$mode.err")"
	fi
done
# The merge ranks every rank's rows: the top 3 of the job is not rank
# 0's top 3 alone (rank 2's stall is the costliest).
if awk -F'\t' 'NR > 1 && $4 == "gap" { r[$1]++ } END { exit !(length(r) > 1 || !(0 in r)) }' \
    gtop.m && [ "$(awk -F'\t' 'NR == 2 { print $1 }' gtop.m)" = 2 ]; then
	ok "merge-gaps-top-across-ranks"
else
	bad "merge-gaps-top-across-ranks: $(head -3 gtop.m)"
fi

# ------------------------------------------------------------------
# kt-memory: one row per rank's device; byte-identical.
if each mem run kt-memory && run kt-memory --merge $(tables mem) >mem.m 2>mem.err; then
	same "merge-memory" mem.m mem-all.tsv
	[ "$(awk 'END { print NR }' mem.m)" = 5 ] && ok "merge-memory-rows" ||
	    bad "merge-memory-rows: $(cat mem.m)"
else
	bad "merge-memory: $(cat mem.err)"
fi

# ------------------------------------------------------------------
# kt-bucket: by rank and bucket (every row one rank's: p50/p90 kept) and
# by bucket (rows summed over ranks: p50/p90 "-").
if each bk run kt-bucket --by rank,bucket &&
    run kt-bucket --merge $(tables bk) >bk.m 2>bk.err; then
	same "merge-bucket-by-rank" bk.m bk-all.tsv
else
	bad "merge-bucket-by-rank: $(cat bk.err)"
fi
if each bs run kt-bucket && run kt-bucket --merge $(tables bs) >bs.m 2>bs.err; then
	cutcol bs.m p50_ns p90_ns >bs.mc
	cutcol bs-all.tsv p50_ns p90_ns >bs.ac
	same "merge-bucket-sum" bs.mc bs.ac
	if awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	    $1 == "group" { n++; if ($c["p50_ns"] != "-" || $c["p90_ns"] != "-") exit 1 }
	    END { exit !(n > 0) }' bs.m; then
		ok "merge-bucket-percentiles-dash"
	else
		bad "merge-bucket-percentiles-dash: $(head -3 bs.m)"
	fi
	# count and total_ns: the per-rank sums (awk).
	if awk -F'\t' 'FNR == 1 { next } FILENAME != "bs.m" { if ($1 == "group") { c[$4] += $5; t[$4] += $6 } next }
	    $1 == "group" { m++; if (c[$4] != $5 || t[$4] != $6) exit 1 }
	    END { exit !(m > 0) }' $(tables bs) bs.m; then
		ok "merge-bucket-sums"
	else
		bad "merge-bucket-sums"
	fi
else
	bad "merge-bucket-sum: $(cat bs.err)"
fi

# ------------------------------------------------------------------
# kt-ops: plain, --totals, --by rank: every column but longest_row.
for mode in plain totals rank; do
	case $mode in
	plain) set -- ;;
	totals) set -- --totals ;;
	rank) set -- --by rank ;;
	esac
	if each "o$mode" run kt-ops "$@" &&
	    run kt-ops --merge $(tables "o$mode") >"o$mode.m" 2>"o$mode.err"; then
		cutcol "o$mode.m" longest_row >"o$mode.mc"
		cutcol "o$mode-all.tsv" longest_row >"o$mode.ac"
		same "merge-ops-$mode" "o$mode.mc" "o$mode.ac"
	else
		bad "merge-ops-$mode: $(cat "o$mode.err")"
	fi
done
# longest_row: FILE:kind:index, where FILE's row of the same key has
# that id and the merged longest_ns; calls are the per-rank sums.
if awk -F'\t' '
    FNR == 1 { next }
    FILENAME != "oplain.m" { k = $1 "\t" $2; calls[k] += $3
	id[FILENAME "\t" k] = $16; len[FILENAME "\t" k] = $15; next }
    { k = $1 "\t" $2; n++
      if (calls[k] != $3) { print "calls " k; exit 1 }
      f = $16; sub(/:[^:]*:[^:]*$/, "", f); rid = substr($16, length(f) + 2)
      if (id[f "\t" k] != rid || len[f "\t" k] != $15) { print "row " $16; exit 1 } }
    END { exit !(n > 0) }' $(tables oplain) oplain.m; then
	ok "merge-ops-longest-row-cites-its-file"
else
	bad "merge-ops-longest-row-cites-its-file"
fi
# The total row's shares are of its own wholes: 100.0.
if awk -F'\t' '$1 == "total" { n++; if ($7 != "100.0" || $12 != "100.0") exit 1 } END { exit n != 1 }' \
    ototals.m; then
	ok "merge-ops-total-row"
else
	bad "merge-ops-total-row: $(tail -1 ototals.m)"
fi
# A merge of merges is the merge of all (the tree-shaped reduce).
if run kt-ops --merge ototals-r0.tsv ototals-r1.tsv >o01.m 2>/dev/null &&
    run kt-ops --merge ototals-r2.tsv ototals-r3.tsv >o23.m 2>/dev/null &&
    run kt-ops --merge o01.m o23.m >o0123.m 2>/dev/null &&
    run kt-bucket --merge bk-r0.tsv bk-r1.tsv >b01.m 2>/dev/null &&
    run kt-bucket --merge bk-r2.tsv bk-r3.tsv >b23.m 2>/dev/null &&
    run kt-bucket --merge b01.m b23.m >b0123.m 2>/dev/null &&
    cmp -s b0123.m bk.m; then
	same "merge-of-merges" o0123.m ototals.m
else
	bad "merge-of-merges: a step failed or kt-bucket differs"
fi

# ------------------------------------------------------------------
# kt views --merge: the six views, as kt views writes them for the
# merged trace; -n cuts the lost time of the union.
ok_views=1
for r in $R all; do
	run kt-views -n 4 -o "v-$r" "$r.json" 2>/dev/null || ok_views=0
done
if [ $ok_views = 1 ] &&
    run kt-views --merge -n 4 -o vm v-r0 v-r1 v-r2 v-r3 2>vm.err; then
	same "merge-views-2_lost_time" vm/2_lost_time.tsv v-all/2_lost_time.tsv
	same "merge-views-5_memory" vm/5_memory.tsv v-all/5_memory.tsv
	same "merge-views-1_runtime_decomposition" \
	    vm/1_runtime_decomposition.tsv v-all/1_runtime_decomposition.tsv
	same "merge-views-4_overlap_exposure" vm/4_overlap_exposure.tsv \
	    v-all/4_overlap_exposure.tsv
	cutcol vm/3_kernel_table.tsv p50_ns p90_ns >v3.m
	cutcol v-all/3_kernel_table.tsv p50_ns p90_ns >v3.a
	same "merge-views-3_kernel_table" v3.m v3.a
	cutcol vm/6_op_table.tsv longest_row >v6.m
	cutcol v-all/6_op_table.tsv longest_row >v6.a
	same "merge-views-6_op_table" v6.m v6.a
	if [ "$(ls vm | wc -l)" -eq 12 ] && [ -s vm/2_lost_time.txt ] &&
	    [ "$(awk -F'\t' '$4 == "gap" || $4 == "tiny-run"' vm/2_lost_time.tsv | wc -l)" -eq 4 ]; then
		ok "merge-views-files"
	else
		bad "merge-views-files: $(ls vm)"
	fi
else
	bad "merge-views: $(cat vm.err)"
fi

# ------------------------------------------------------------------
# Errors: exit 2, one line on stderr, nothing on stdout.
# fails NAME PATTERN CMD...
fails() {
	_n=$1
	_p=$2
	shift 2
	"$@" >f.out 2>f.err
	_rc=$?
	if [ $_rc = 2 ] && [ ! -s f.out ] && [ "$(wc -l <f.err)" = 1 ] &&
	    grep -q -- "$_p" f.err; then
		ok "$_n"
	else
		bad "$_n: status $_rc: $(head -2 f.err)"
	fi
}
fails merge-err-kinds "mem-r0.tsv:1:1: not a kt-gaps table" \
    kt-gaps --merge gplain-r0.tsv mem-r0.tsv
fails merge-err-headers "orank-r1.tsv:1:1: its columns differ from those of oplain-r0.tsv" \
    kt-ops --merge oplain-r0.tsv orank-r1.tsv
fails merge-err-bucket-gaps "gplain-r0.tsv:1:1: not a kt-bucket table" \
    kt-bucket --merge bs-r0.tsv gplain-r0.tsv
fails merge-err-same-rank "mem-r0.tsv:2:1: .*one table per rank" \
    kt-memory --merge mem-r0.tsv mem-r0.tsv
fails merge-err-gaps-same-rank "one table per rank" \
    kt-gaps --merge gsummary-r1.tsv gsummary-r1.tsv
sed '2s/\t[0-9][0-9]*\t/\tx1\t/' oplain-r0.tsv >bad.tsv
fails merge-err-not-integer "bad.tsv:2:3: calls: 'x1' is not an integer" \
    kt-ops --merge bad.tsv oplain-r1.tsv
fails merge-err-trace "r0.json:2:1: not a kt-ops table" kt-ops --merge r0.json
fails merge-err-options "--merge takes tables" kt-ops --merge --by rank oplain-r0.tsv
fails merge-err-views-missing "nowhere/1_runtime_decomposition.tsv: No such file" \
    kt-views --merge -o vm2 v-r0 nowhere
fails merge-err-views-into-input "the output folder is an input" \
    kt-views --merge -o v-r0 v-r0 v-r1
