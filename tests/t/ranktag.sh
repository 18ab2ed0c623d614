# tests/t/ranktag.sh: kt-rank-tag.  jq, never kt, judges each merge:
#  - no pid is shared by two ranks, and no flow (cat, name, id) either;
#  - every input event is there exactly once, in its input's order: the
#    output's events of one rank, with pids, ids and process names put
#    back by jq, are the input's events, after the synthesized
#    process_name and process_sort_index events of the pids that had none;
#  - the pid map, the sort indexes and the names follow the rules of
#    kt-rank-tag(1), and ktRanks keeps each input's top-level keys;
#  - kt normalize --check finds nothing new.
# On the eight DLRM ranks of ../shared/traces (as files, a tar and a zip
# archive, and --member), on ranks from the generator (sorted: merged by
# time; unsorted: rank after rank), and on small hand-written traces:
# ranks from file names, clock offsets and alignment, the TSV rank
# column, standard input, and the errors.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1

# The events of slot $s (rank $r) of a merged trace, with what
# kt-rank-tag changed undone, except the sort indexes (set to "-").
cat >undo.jq <<'EOF'
(1000000000000 * ($s + 1)) as $b
| def un: if type == "number" and . >= $b and . < $b + 1000000000000
    then . - $b
    elif type == "string" and startswith("r\($s):")
    then .[("r\($s):" | length):]
    else . end;
.traceEvents[]
| select(.args.rank == $r and (.pid / 1000 | floor) == $s + 1)
| if .args.kt_pid == null then del(.pid) else .pid = .args.kt_pid end
| del(.args.rank, .args.kt_pid)
| if .args == {} then del(.args) else . end
| if has("id") then .id |= un else . end
| if (.args | type) == "object" then
    (if .args | has("correlation") then .args.correlation |= un
    else . end)
    | (if .args | has("External id") then .args["External id"] |= un
    else . end)
  else . end
| if .ph == "M" and .name == "process_name" and
    (.args.name | type) == "string"
  then .args.name |= ltrimstr("rank \($r): ") else . end
| if .ph == "M" and .name == "process_sort_index"
  then .args.sort_index = "-" else . end
EOF
# The events of an input, as undo.jq leaves them.
cat >norm.jq <<'EOF'
(if type == "array" then .[] else .traceEvents[] end)
| if .args == {} then del(.args) else . end
| if .ph == "M" and .name == "process_sort_index"
  then .args.sort_index = "-" else . end
EOF
# How many process_name and process_sort_index events an input lacks
# (one of each per pid).
cat >lacks.jq <<'EOF'
[if type == "array" then .[] else .traceEvents[] end] as $e
| ([$e[].pid] | unique) as $p
| def has_m($n): [$e[] | select(.ph == "M" and .name == $n) | .pid]
    | unique | length;
2 * ($p | length) - has_m("process_name") - has_m("process_sort_index")
EOF
# Is this (undone) event a synthesized one?
cat >synth.jq <<'EOF'
.ph == "M" and ((.name == "process_name" and
    .args == {name: "pid \(.pid // "null")"}) or
    (.name == "process_sort_index" and .args == {sort_index: "-"}))
EOF
# Flow events carry no args (chrome://tracing merges the args of a flow's
# two ends and warns of each key on both): their rank and kt_pid are
# those of their pid, which fill.jq writes back from the pid's other
# events so that the checks below read every event alike.
cat >fill.jq <<'EOF'
def flow: .ph == "s" or .ph == "t" or .ph == "f";
(reduce (.traceEvents[] | select((flow | not) and .args.rank != null))
    as $e ({}; ($e.pid | tostring) as $k
    | if has($k) then . else .[$k] = ({rank: $e.args.rank,
    kt_pid: $e.args.kt_pid} | with_entries(select(.value != null))) end))
    as $pr
| .traceEvents |= map(if flow then .args = ($pr[.pid | tostring] // {})
    + (.args // {}) else . end)
EOF
noflowargs='[.traceEvents[] | select(.ph == "s" or .ph == "t" or .ph == "f")
    | select(.args.rank != null or .args.kt_pid != null)] | length == 0'
# Problems with slot $s of the merged trace $o[0] against its input
# $i[0]: the pid map, the sort indexes, the process names.
cat >rules.jq <<'EOF'
($i[0] | if type == "array" then . else .traceEvents end) as $ie
| $o[0].ktRanks[$s] as $k
| [$o[0].traceEvents[]
   | select(.args.rank == $k.rank and (.pid / 1000 | floor) == $s + 1)]
  as $oe
| ([$ie[].pid] | unique) as $p
| ([range(0; $p | length)
    | {key: ($p[.] | tostring), value: (1000 * ($s + 1) + .)}]
   | from_entries) as $map
| ([$ie[] | select(.ph == "M" and .name == "process_sort_index" and
     (.args.sort_index | type) == "number")
    | {key: (.pid | tostring), value: .args.sort_index}]
   | from_entries) as $si
| ($p | map({new: $map[tostring], si: $si[tostring]})
   | sort_by([(if .si == null then 1 else 0 end), (.si // 0), .new]))
  as $ord
| ([range(0; $ord | length)
    | {key: ($ord[.].new | tostring), value: (1000 * ($s + 1) + .)}]
   | from_entries) as $sort
| [$oe[] | select(.ph == "M" and .name == "process_sort_index")] as $os
| [$oe[] | select(.ph == "M" and .name == "process_name")] as $on
| (if $k.pids != $map
   then "ktRanks[\($s)].pids \($k.pids | tojson), want \($map | tojson)"
   else empty end),
  ($oe[] | select(.pid != $map[.args.kt_pid | tostring])
   | "pid \(.pid) for kt_pid \(.args.kt_pid)"),
  (if ($os | length) != ($p | length) or
     ($os | map({key: (.pid | tostring), value: .args.sort_index})
     | from_entries) != $sort
   then "sort indexes \($os | map([.pid, .args.sort_index]) | tojson), want \($sort | tojson)"
   else empty end),
  (if ($on | map(.pid) | unique | length) != ($p | length)
   then "not every pid has a process_name" else empty end),
  ($on[] | select((.args.name | type) == "string" and
     (.args.name | startswith("rank \($k.rank): ") | not))
   | "process_name \(.args.name)")
EOF
flows='[.[] | select(.ph == "s" or .ph == "t" or .ph == "f")
    | [.cat, .name, .id]] | unique | length'

# merged NAME OUT IN...: the checks of a merge, the inputs IN (plain
# JSON) given in rank order, so that the first is slot 0.
merged() {
	_n=$1
	_o=$2
	_raw=$2
	shift 2
	if jq -e "$noflowargs" "$_o" >/dev/null; then
		ok "$_n: no flow event gets args"
	else
		bad "$_n: flow events with args.rank or args.kt_pid"
	fi
	jq -f fill.jq "$_o" >"$_o.filled"
	_o=$_o.filled
	if jq -e '[.traceEvents[] | [.pid, .args.rank]] | group_by(.[0])
	    | all(map(.[1]) | unique | length == 1)' "$_o" >/dev/null; then
		ok "$_n: no pid in two ranks"
	else
		bad "$_n: a pid has events of two ranks"
	fi
	_want=0
	for _f; do
		_want=$((_want + $(jq "[if type == \"array\" then .[] else
		    .traceEvents[] end] | $flows" "$_f")))
	done
	_got=$(jq ".traceEvents | $flows" "$_o")
	if jq -e '[.traceEvents[] | select(.ph == "s" or .ph == "t" or
	    .ph == "f") | [[.cat, .name, .id], .args.rank]] | group_by(.[0])
	    | all(map(.[1]) | unique | length == 1)' "$_o" >/dev/null &&
	    [ "$_got" -eq "$_want" ]; then
		ok "$_n: $_got flows, none across ranks"
	else
		bad "$_n: flows: $_got (cat, name, id), want $_want, or across ranks"
	fi
	_s=0
	_why=
	_why2=
	_why3=
	_extra=0
	_total=0
	for _f; do
		_r=$(jq ".ktRanks[$_s].rank" "$_o")
		jq -c --argjson s "$_s" --argjson r "$_r" -f undo.jq "$_o" \
		    >got.ev
		jq -c -f norm.jq "$_f" >want.ev
		_ng=$(wc -l <got.ev)
		_nw=$(wc -l <want.ev)
		_nx=$((_ng - _nw))
		_total=$((_total + _nw))
		if [ "$_nx" -ne "$(jq -f lacks.jq "$_f")" ]; then
			_why="$_why slot $_s: $_ng events for $_nw"
		elif [ "$_nx" -gt 0 ] && head -n "$_nx" got.ev |
		    jq -e -f synth.jq | grep -q false; then
			_why="$_why slot $_s: a first event is not synthesized"
		elif ! tail -n "+$((_nx + 1))" got.ev | cmp -s - want.ev; then
			_why="$_why slot $_s: events differ from $_f"
		fi
		_extra=$((_extra + _nx))
		jq -rn --slurpfile o "$_o" --slurpfile i "$_f" \
		    --argjson s "$_s" -f rules.jq >rules.out
		[ -s rules.out ] && _why2="$_why2 slot $_s: $(head -1 rules.out)"
		jq -S "if type == \"array\" then {} else
		    del(.traceEvents, .ktSourceIndex) end" "$_f" >want.meta
		jq -S ".ktRanks[$_s].meta" "$_o" >got.meta
		cmp -s want.meta got.meta ||
		    _why3="$_why3 slot $_s: meta differs"
		[ "$(jq ".ktRanks[$_s].events" "$_o")" -eq "$_nw" ] ||
		    _why3="$_why3 slot $_s: events $(jq ".ktRanks[$_s].events" "$_o")"
		_s=$((_s + 1))
	done
	_all=$(jq '.traceEvents | length' "$_o")
	[ "$_all" -eq $((_total + _extra)) ] ||
	    _why="$_why $_all events, want $_total + $_extra synthesized"
	if [ -z "$_why" ]; then
		ok "$_n: all $_total events once, in input order, and $_extra synthesized"
	else
		bad "$_n:$_why"
	fi
	if [ -z "$_why2" ]; then
		ok "$_n: pids, sort indexes and process names as documented"
	else
		bad "$_n:$_why2"
	fi
	if [ "$(jq '.ktRanks | length' "$_o")" -eq $# ] && [ -z "$_why3" ]
	then
		ok "$_n: ktRanks has $# entries with each input's keys and count"
	else
		bad "$_n: ktRanks:$_why3"
	fi
	# Nothing but the zero-length slices the inputs have (real traces
	# do: kt-normalize(1), zero-nested), as many as theirs.
	run kt-normalize --check "$_raw" >check.tsv 2>check.err
	_z=0
	for _i in "$@"; do
		_z=$((_z + $(kt-normalize --check "$_i" 2>/dev/null | grep -c '^zero-nested	')))
	done
	if [ "$(grep -vc '^zero-nested	' check.tsv)" -eq 1 ] &&
	    [ "$(grep -c '^zero-nested	' check.tsv)" -eq "$_z" ]; then
		ok "$_n: kt normalize --check finds nothing new ($_z zero-nested, as the inputs)"
	else
		bad "$_n: --check: $(grep -v '^zero-nested	' check.tsv | sed -n 2p) $(head -1 check.err) (zero-nested: inputs $_z)"
	fi
}

# Past the synthesized events, the ranks follow one another.
after_synth='def flow: .ph == "s" or .ph == "t" or .ph == "f";
    ((.traceEvents | length) - ([.ktRanks[].events] | add)) as $x
    | [.traceEvents[$x:][] | select(flow | not) | .args.rank] | . == sort'

# ranks OUT: the ranks of ktRanks, one line.
ranks() {
	jq -c '[.ktRanks[].rank]' "$1"
}

# ---------------------------------------------------------------------
# The eight DLRM ranks: files, a tar, a zip, and --member.
dlrm=$KT_SHARED/param/dlrm_kineto
if [ -d "$dlrm" ]; then
	set -- "$dlrm"/worker*.json
	run kt-rank-tag -v "$@" >dlrm.json 2>dlrm.err
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(grep -c 'from distributedInfo.rank' \
	    dlrm.err)" -eq 8 ] && [ "$(ranks dlrm.json)" = \
	    '[0,1,2,3,4,5,6,7]' ] && [ "$(jq -c '[.ktRanks[].rankFrom] |
	    unique' dlrm.json)" = '["distributedInfo.rank"]' ]; then
		ok "dlrm: eight ranks from distributedInfo.rank"
	else
		bad "dlrm: status $rc, ranks $(ranks dlrm.json): $(head -1 dlrm.err)"
	fi
	merged "dlrm" dlrm.json "$@"
	# Not sorted: rank after rank.
	if grep -q 'merging rank after rank' dlrm.err &&
	    jq -e "$after_synth" dlrm.json >/dev/null; then
		ok "dlrm: unsorted inputs merged rank after rank"
	else
		bad "dlrm: not rank after rank"
	fi
	# Keys: the same in every input and kept; the others only in ktRanks.
	if [ "$(jq -c 'keys_unsorted' dlrm.json)" = \
	    '["schemaVersion","deviceProperties","record_shapes","ktRanks","traceEvents","ktSourceIndex"]' ]
	then
		ok "dlrm: common top-level keys kept, distributedInfo and traceName not, row ids in ktSourceIndex"
	else
		bad "dlrm: top-level keys $(jq -c 'keys_unsorted' dlrm.json)"
	fi

	tar -C "$dlrm/.." -cf dlrm.tar dlrm_kineto
	run kt-rank-tag dlrm.tar >tar.json 2>err
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(jq -c '[.ktRanks[].source]' tar.json)" = \
	    "$(cd "$dlrm" && ls worker*.json | sed 's|^|dlrm.tar:dlrm_kineto/|' |
	    jq -Rcs 'split("\n")[:-1]')" ] &&
	    [ "$(jq -c 'del(.ktRanks[].source)' tar.json)" = \
	    "$(jq -c 'del(.ktRanks[].source)' dlrm.json)" ]; then
		ok "dlrm: a tar of the eight merges as the files do"
	else
		bad "dlrm: tar: status $rc: $(head -1 err)"
	fi
	merged "dlrm tar" tar.json "$@"
	if command -v zip >/dev/null 2>&1; then
		(cd "$dlrm/.." && zip -q -r "$TMP/dlrm.zip" dlrm_kineto)
		run kt-rank-tag dlrm.zip >zip.json 2>err
		if [ $? -eq 0 ] && [ "$(jq -c 'del(.ktRanks[].source)' \
		    zip.json)" = "$(jq -c 'del(.ktRanks[].source)' dlrm.json)" ]
		then
			ok "dlrm: a zip of the eight merges as the files do"
		else
			bad "dlrm: zip: $(head -1 err)"
		fi
	else
		skip "dlrm: zip not installed"
	fi
	run kt-rank-tag --member 'dlrm_kineto/worker[0-3]*' dlrm.tar \
	    >four.json 2>err
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(ranks four.json)" = '[0,1,2,3]' ]; then
		ok "dlrm: --member takes four ranks"
	else
		bad "dlrm: --member: status $rc: $(head -1 err)"
	fi
	merged "dlrm --member" four.json "$dlrm"/worker[0-3]*.json

	# One input: only args.rank is added, and ktRanks.
	f=$(ls "$dlrm"/worker5*.json)
	run kt-rank-tag "$f" >one.json 2>err
	rc=$?
	jq -c '.traceEvents[] | del(.args.rank)
	    | if .args == {} then del(.args) else . end' one.json >a
	jq -c '.traceEvents[] | if .args == {} then del(.args) else . end' \
	    "$f" >b
	if [ "$rc" -eq 0 ] && [ ! -s err ] && cmp -s a b &&
	    jq -e '[.traceEvents[] | select(.ph != "s" and .ph != "t" and
	    .ph != "f") | .args.rank] | unique == [5]' one.json >/dev/null &&
	    jq -e "$noflowargs" one.json >/dev/null && [ "$(jq -c '.ktRanks | map(keys)' one.json)" = \
	    '[["events","meta","offsetNs","rank","rankFrom","source"]]' ] &&
	    [ "$(jq -cS 'del(.ktRanks, .traceEvents)' one.json)" = \
	    "$(jq -cS 'del(.traceEvents)' "$f")" ]; then
		ok "dlrm: one input gets args.rank 5 (flows none) and nothing else changes"
	else
		bad "dlrm: one input: status $rc: $(head -1 err)"
	fi
	run kt-rank-tag --rank 5 "$f" 2>/dev/null | jq -c '.traceEvents' >a
	jq -c '.traceEvents' one.json >b
	check "dlrm: --rank 5 tags as distributedInfo.rank 5 does" cmp a b
else
	skip "dlrm: $KT_SHARED is absent"
fi

# ---------------------------------------------------------------------
# Generated ranks, with names that hold no rank: distributedInfo says.
# g_a is rank 2, g_b rank 0, g_c rank 3, g_d rank 1.
gen=$KT_BUILD/ktgen
for x in a:2 b:0 c:3 d:1; do
	"$gen" --rank "${x#*:}" --world 4 --steps 2 --layers 2 \
	    -o "g_${x%:*}.json" || bad "gen: ktgen"
	run kt-normalize "g_${x%:*}.json" >"n_${x%:*}.json" 2>/dev/null ||
	    bad "gen: kt-normalize"
done
run kt-rank-tag -v n_a.json n_b.json n_c.json n_d.json >gs.json 2>err
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -c ', sorted$' err)" -eq 4 ] &&
    ! grep -q 'rank after rank' err && [ "$(ranks gs.json)" = '[0,1,2,3]' ]
then
	ok "gen sorted: four sorted ranks from distributedInfo"
else
	bad "gen sorted: status $rc: $(head -1 err)"
fi
if jq -e '[.traceEvents[].ph == "M"] | . == (sort | reverse)' gs.json \
    >/dev/null && jq -e '[.traceEvents[] | select(.ph != "M") | .ts] |
    . == sort' gs.json >/dev/null && jq -e '[.traceEvents[] |
    select(.ph != "M" and .ph != "s" and .ph != "f") | .args.rank] | unique | length == 4' gs.json \
    >/dev/null; then
	ok "gen sorted: merged by time: metadata first, then by ts"
else
	bad "gen sorted: output not sorted by ts"
fi
merged "gen sorted" gs.json n_b.json n_d.json n_a.json n_c.json
run kt-rank-tag -v g_a.json g_b.json g_c.json g_d.json >gu.json 2>err
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -c ', not sorted$' err)" -eq 4 ] &&
    grep -q 'merging rank after rank' err &&
    jq -e "$after_synth" gu.json >/dev/null; then
	ok "gen unsorted: merged rank after rank"
else
	bad "gen unsorted: status $rc: $(head -1 err)"
fi
merged "gen unsorted" gu.json g_b.json g_d.json g_a.json g_c.json
# The same events either way, and one sorted input makes no k-way merge.
jq -c '.traceEvents[]' gs.json | sort >a
jq -c '.traceEvents[]' gu.json | sort >b
check "gen: sorted and unsorted merges hold the same events" cmp a b
run kt-rank-tag -v n_a.json g_b.json >/dev/null 2>err
check "gen: one unsorted input: rank after rank" \
    grep -q 'merging rank after rank' err

# ---------------------------------------------------------------------
# Ranks from file names.
cat >s.json <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"External id": 3}},
{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 3, "pid": 1, "tid": 1, "ts": 11},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 2, "args": {"correlation": 3}},
{"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": 3, "pid": 0, "tid": 7, "ts": 20}
]}
EOF
for x in 'rank3.json:3:rank<N>' 'rank-4.json:4:rank-N' \
    'x_rank_5.json:5:rank_N' 'worker6.json:6:worker<N>' 't-7.json:7:-N.' \
    'rank2-5.json:2:rank<N>' 'worker3_rank_4.json:4:rank_N' \
    'step-1.worker8.json:8:worker<N>'; do
	f=${x%%:*}
	r=${x#*:}
	how=${r#*:}
	r=${r%%:*}
	cp s.json "$f"
	run kt-rank-tag -v "$f" >out.json 2>err
	if [ $? -eq 0 ] && [ "$(cat err)" = "kt-rank-tag: $f: rank $r (from file name: $how), clock offset +0 ns, 4 events" ] &&
	    jq -e "[.traceEvents[].args.rank] == [$r, null, $r, null] and
	    .ktRanks[0].rankFrom == \"file name: $how\"" out.json \
	    >/dev/null; then
		ok "names: $f is rank $r by $how"
	else
		bad "names: $f: $(cat err)"
	fi
done
# Five ranks 3..7 are slots 0..4: pids 1000.. to 5000..
run kt-rank-tag rank3.json rank-4.json x_rank_5.json worker6.json t-7.json \
    >five.json 2>err
if [ $? -eq 0 ] && [ "$(ranks five.json)" = '[3,4,5,6,7]' ] &&
    [ "$(jq -c '[.ktRanks[].pids]' five.json)" = \
    '[{"1":1001,"0":1000},{"1":2001,"0":2000},{"1":3001,"0":3000},{"1":4001,"0":4000},{"1":5001,"0":5000}]' ]
then
	ok "names: ranks 3 to 7 take slots 0 to 4"
else
	bad "names: five: $(head -1 err)"
fi
merged "names" five.json s.json s.json s.json s.json s.json
# Archive members: the last component of the member's path.
mkdir -p m/r0 m/r1
cp s.json m/r1/worker0.json
cp s.json m/r0/worker1.json
tar -C m -cf m.tar r1 r0
run kt-rank-tag -v m.tar >out.json 2>err
if [ $? -eq 0 ] && [ "$(ranks out.json)" = '[0,1]' ] &&
    grep -q '^kt-rank-tag: m.tar:r1/worker0.json: rank 0 (from file name: worker<N>)' err
then
	ok "names: archive members by their names"
else
	bad "names: archive members: $(head -1 err)"
fi
mkdir -p rank9
cp s.json rank9/trace.json
run kt-rank-tag rank9/trace.json >out.json 2>err
if [ $? -eq 2 ] && [ ! -s out.json ] && grep -q 'no rank' err; then
	ok "names: a folder's name gives no rank"
else
	bad "names: rank9/trace.json: $(cat err)"
fi
run kt-rank-tag -v --rank 9 rank3.json >out.json 2>err
if [ $? -eq 0 ] && grep -q 'rank 9 (from --rank)' err &&
    jq -e '[.traceEvents[].args.rank] == [9, null, 9, null]' out.json >/dev/null
then
	ok "names: --rank 9 wins over the name"
else
	bad "names: --rank 9: $(cat err)"
fi
# Two inputs of one rank.
cp s.json y-3.json
run kt-rank-tag rank3.json y-3.json >out.json 2>err
if [ $? -eq 2 ] && [ ! -s out.json ] && [ "$(wc -l <err)" -eq 1 ] &&
    grep 'rank3.json' err | grep 'y-3.json' | grep -q 'rank 3' &&
    grep -q -- '--allow-duplicate-ranks' err; then
	ok "dup: two inputs of rank 3 refused, both named"
else
	bad "dup: $(cat err)"
fi
run kt-rank-tag --allow-duplicate-ranks rank3.json y-3.json >out.json 2>err
if [ $? -eq 0 ] && [ ! -s err ] && [ "$(ranks out.json)" = '[3,3]' ] &&
    [ "$(jq -c '[.traceEvents[].pid] | unique' out.json)" = \
    '[1000,1001,2000,2001]' ] && [ "$(jq -c '[.traceEvents[] |
    select(.ph == "s" or .ph == "f") | .id] | unique' out.json)" = \
    '[1000000000003,2000000000003]' ]; then
	ok "dup: --allow-duplicate-ranks: two slots, distinct pids and ids"
else
	bad "dup: --allow-duplicate-ranks: $(cat err)"
fi
merged "dup" out.json s.json s.json

# ---------------------------------------------------------------------
# Clocks.  c0 (rank 0) has a base 2.5 ms after c1's (rank 1).
cat >c0.json <<'EOF'
{"distributedInfo": {"rank": 0}, "baseTimeNanoseconds": 1700000000002500000, "traceEvents": [
{"name": "process_name", "ph": "M", "ts": 5, "pid": 1, "tid": 0, "args": {"name": "python3"}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 10, "dur": 80},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 100, "dur": 80},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 101.500, "dur": 2.5}
]}
EOF
cat >c1.json <<'EOF'
{"distributedInfo": {"rank": 1}, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 170, "dur": 80},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 250, "dur": 80},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 251.5, "dur": 2.5},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#33", "pid": 1, "tid": 1, "ts": 400, "dur": 80}
]}
EOF
# tsof OUT RANK: the ts texts of a rank's events, in order.
tsof() {
	grep "\"rank\": $2[,}]" "$1" | grep -o '"ts": [0-9.-]*' |
	    sed 's/"ts": //' | tr '\n' ' '
}
run kt-rank-tag -v c0.json c1.json >out.json 2>err
if [ $? -eq 0 ] && [ "$(tsof out.json 0)" = '2505 2510 2600 2601.500 ' ] &&
    [ "$(tsof out.json 1)" = '170 250 251.5 400 ' ] &&
    [ "$(jq -c '[.ktRanks[].offsetNs]' out.json)" = '[2500000,0]' ] &&
    grep -q '"baseTimeNanoseconds": 1700000000000000000,' out.json &&
    grep -q 'c0.json: rank 0 (from distributedInfo.rank), clock offset +2500000 ns' err &&
    grep -q 'c1.json: rank 1 (from distributedInfo.rank), clock offset +0 ns' err
then
	ok "clocks: the later base's events move 2.5 ms later, exactly"
else
	bad "clocks: base: $(tsof out.json 0)/ $(tsof out.json 1)"
fi
run kt-rank-tag -v --align step:3 c0.json c1.json >out.json 2>err
if [ $? -eq 0 ] && [ "$(tsof out.json 0)" = '2505 2510 2600 2601.500 ' ] &&
    [ "$(tsof out.json 1)" = '2520 2600 2601.5 2750 ' ] &&
    [ "$(jq -c '[.ktRanks[].offsetNs]' out.json)" = '[2500000,2350000]' ] &&
    grep -q 'c1.json: .* clock offset +2350000 ns' err; then
	ok "clocks: --align step:3 puts both ProfilerStep#3 at 2600"
else
	bad "clocks: step:3: $(tsof out.json 0)/ $(tsof out.json 1)"
fi
run kt-rank-tag --align first c0.json c1.json >out.json 2>err
if [ $? -eq 0 ] && [ "$(tsof out.json 0)" = '2505 2510 2600 2601.500 ' ] &&
    [ "$(tsof out.json 1)" = '2510 2590 2591.5 2740 ' ] &&
    [ "$(jq -c '[.ktRanks[].offsetNs]' out.json)" = '[2500000,2340000]' ]
then
	ok "clocks: --align first puts both first events at 2510"
else
	bad "clocks: first: $(tsof out.json 0)/ $(tsof out.json 1)"
fi
run kt-rank-tag --align step:9 c0.json c1.json >out.json 2>err
if [ $? -eq 2 ] && [ ! -s out.json ] && grep -q 'ProfilerStep#9' err; then
	ok "clocks: --align step:9 with no step 9 is an error"
else
	bad "clocks: step:9: $(cat err)"
fi
sed 's/"baseTimeNanoseconds": [0-9]*, //' c1.json >c1nobase.json
run kt-rank-tag c0.json c1nobase.json >out.json 2>err
if [ $? -eq 0 ] && grep -q 'c1nobase.json: no baseTimeNanoseconds' err &&
    [ "$(tsof out.json 1)" = '170 250 251.5 400 ' ] &&
    [ "$(tsof out.json 0)" = '5 10 100 101.500 ' ]; then
	ok "clocks: an input without a base is taken as it is, with a warning"
else
	bad "clocks: no base: $(cat err)"
fi

# ---------------------------------------------------------------------
# TSV: the rank column, read back by kt-normalize, and edited with awk.
# Rows: the synthesized metadata (3 of rank 0, 4 of rank 1), c0's
# process_name, then by time (both are sorted): c1's four events, all
# before c0's, which are 2.5 ms later.
run kt-rank-tag c0.json c1.json >cj.json 2>/dev/null
run kt-rank-tag --tsv c0.json c1.json >c.tsv 2>err
if [ $? -eq 0 ] && [ "$(head -1 c.tsv)" = "$(printf \
    'id\tkind\tph\trel_ns\tdur_ns\tpid\ttid\tcat\tname\trank\tjson')" ] &&
    [ "$(awk -F'\t' 'NR > 2 && $2 != "end" { print $10 }' c.tsv | tr '\n' ' ')" = \
    '0 0 0 1 1 1 1 0 1 1 1 1 0 0 0 ' ]; then
	ok "tsv: a rank column before json"
else
	bad "tsv: $(head -1 c.tsv)"
fi
run kt-normalize --keep-order c.tsv >back.json 2>err
if [ $? -eq 0 ] && [ "$(jq -cS '.traceEvents' back.json)" = \
    "$(jq -cS '.traceEvents' cj.json)" ] &&
    [ "$(jq -cS 'del(.traceEvents)' back.json)" = \
    "$(jq -cS 'del(.traceEvents)' cj.json)" ]; then
	ok "tsv: kt-normalize reads it back to the JSON merge"
else
	bad "tsv: read back: $(head -1 err)"
fi
awk -F'\t' -v OFS='\t' 'NR > 2 && $10 == 1 { $10 = 42 } 1' c.tsv |
    run kt-normalize --keep-order >back.json 2>err
if [ $? -eq 0 ] && [ "$(jq -c '[.traceEvents[].args.rank]' back.json)" = \
    '[0,0,0,42,42,42,42,0,42,42,42,42,0,0,0]' ]; then
	ok "tsv: the rank column wins over args.rank"
else
	bad "tsv: edited rank: $(jq -c '[.traceEvents[].args.rank]' back.json)"
fi
run kt-rank-tag --tsv --rank 3 s.json >s.tsv 2>/dev/null
if [ "$(awk -F'\t' 'NR > 2 && $2 != "end" { print $10 }' s.tsv | tr '\n' ' ')" = \
    '3  3  ' ]; then
	ok "tsv: one input"
else
	bad "tsv: one input"
fi

# ---------------------------------------------------------------------
# Standard input, -o.
mkdir -p spool
TMPDIR=$TMP/spool run kt-rank-tag -v <c0.json >out.json 2>err
if [ $? -eq 0 ] && grep -q '^kt-rank-tag: <stdin>: rank 0 (from distributedInfo.rank)' err &&
    [ "$(jq -r '.ktRanks[0].source' out.json)" = '<stdin>' ] &&
    [ -z "$(ls spool)" ]; then
	ok "stdin: read twice through a copy, which is removed"
else
	bad "stdin: $(cat err) $(ls spool)"
fi
tar -cf c.tar c0.json c1.json
TMPDIR=$TMP/spool run kt-rank-tag - <c.tar >out.json 2>err
if [ $? -eq 0 ] && [ "$(jq -c '[.ktRanks[].source]' out.json)" = \
    '["<stdin>:c0.json","<stdin>:c1.json"]' ] &&
    [ "$(jq -c '.traceEvents' out.json)" = "$(jq -c '.traceEvents' cj.json)" ] &&
    [ -z "$(ls spool)" ]; then
	ok "stdin: an archive on standard input merges"
else
	bad "stdin: archive: $(cat err)"
fi
TMPDIR=$TMP/spool run kt-rank-tag <s.json >out.json 2>err
if [ $? -eq 2 ] && grep -q -- '<stdin>: no rank' err && [ -z "$(ls spool)" ]
then
	ok "stdin: no rank: an error, and the copy is removed"
else
	bad "stdin: no rank: $(cat err) $(ls spool)"
fi
run kt-rank-tag - - <c0.json >out.json 2>err
check "stdin: - twice is refused" [ $? -eq 2 ]
run kt-rank-tag -o merged.json.gz c0.json c1.json 2>err
if [ $? -eq 0 ] && gzip -dc merged.json.gz | cmp -s - cj.json; then
	ok "output: -o FILE.gz"
else
	bad "output: -o: $(cat err)"
fi
cp c0.json same.json
run kt-rank-tag -o same.json same.json c1.json 2>err
if [ $? -eq 2 ] && cmp -s same.json c0.json; then
	ok "output: refuses to overwrite an input"
else
	bad "output: overwrote an input"
fi

# ---------------------------------------------------------------------
# Errors: exit 2, one line, nothing on standard output.
# err_case NAME PATTERN ARGS...
err_case() {
	_n=$1
	_p=$2
	shift 2
	run kt-rank-tag "$@" >out.json 2>err </dev/null
	_rc=$?
	if [ "$_rc" -eq 2 ] && [ ! -s out.json ] && [ "$(wc -l <err)" -eq 1 ] &&
	    grep -q -- "$_p" err; then
		ok "errors: $_n"
	else
		bad "errors: $_n: status $_rc: $(cat err)"
	fi
}
cp s.json plain.json
err_case "no rank suggests --rank" 'plain.json: no rank.*give --rank' plain.json
err_case "--rank with two inputs" '--rank names the rank of one input; 2 were given' \
    --rank 1 c0.json c1.json
err_case "--rank with an archive of two" '--rank.*2 were given' --rank 1 c.tar
err_case "bad --align" "--align: 'sideways'" --align sideways c0.json
err_case "bad --align step:K" 'step:K' --align step:x c0.json
err_case "bad --rank" '--rank' --rank -1 c0.json
err_case "missing file" 'nosuch.json: No such file' c0.json nosuch.json
err_case "--member matching nothing" 'no archive member matches' -m 'zz*' c.tar

# ---------------------------------------------------------------------
# --ranks: the merge of the ranks listed equals the merge of just their
# files (kt-rank-tag given only those, another path through the code),
# and jq's checks of a merge hold; the others are read only as far as
# their rank.  Generated ranks 0 1 2 7 63 64 65 of a world of 66, in
# files whose names hold no rank (distributedInfo says).
for r in 0 1 2 7 63 64 65; do
	"$gen" --rank "$r" --world 66 --steps 2 --layers 2 -o "w_$r.tmp" ||
	    bad "ranks: ktgen"
done
mv w_0.tmp wa.json; mv w_1.tmp wb.json; mv w_2.tmp wc.json
mv w_7.tmp wd.json; mv w_63.tmp we.json; mv w_64.tmp wf.json
mv w_65.tmp wg.json
run kt-rank-tag --ranks 0,7,63-64 wg.json wf.json we.json wd.json wc.json \
    wb.json wa.json >sel.json 2>err
rc=$?
run kt-rank-tag wf.json we.json wd.json wa.json >ref.json 2>/dev/null
if [ "$rc" -eq 0 ] && [ ! -s err ] && cmp -s sel.json ref.json &&
    [ "$(ranks sel.json)" = '[0,7,63,64]' ]; then
	ok "ranks: --ranks 0,7,63-64 is the merge of just those four files"
else
	bad "ranks: 0,7,63-64: status $rc: $(head -1 err)"
fi
merged "ranks" sel.json wa.json wd.json we.json wf.json
# Rank 1's events are damaged past its first: a merge that read it would
# fail; one that stops at its rank does not.
awk 'NR == 400 { print "@@@ no JSON here @@@," } 1' wb.json >bad.json
mv bad.json wb.json
run kt-rank-tag wa.json wb.json >/dev/null 2>err
rc1=$?
run kt-rank-tag -v --ranks 0,7,63-64 wg.json wf.json we.json wd.json \
    wc.json wb.json wa.json >sel.json 2>err
rc=$?
if [ "$rc1" -eq 2 ] && [ "$rc" -eq 0 ] && cmp -s sel.json ref.json &&
    grep -qx 'kt-rank-tag: wb.json: rank 1 (from distributedInfo.rank), not in --ranks: read only its top-level keys' err &&
    [ "$(grep -c 'not in --ranks: read only its top-level keys$' err)" -eq 3 ]
then
	ok "ranks: a rank not listed is read only as far as its top-level keys (its damage unseen)"
else
	bad "ranks: damaged rank 1: status $rc1/$rc: $(head -1 err)"
fi
# Ranks of the list that no input has: said on one line, status 1, and
# the merge of the others is written.
run kt-rank-tag --ranks 9,0,5-6,64-70 wa.json wc.json wf.json wg.json \
    >sel.json 2>err
rc=$?
run kt-rank-tag wa.json wf.json wg.json >ref.json 2>/dev/null
if [ "$rc" -eq 1 ] && [ "$(cat err)" = \
    'kt-rank-tag: --ranks: no input has rank 5-6, 9, 66-70' ] &&
    cmp -s sel.json ref.json; then
	ok "ranks: missing ranks 5-6, 9, 66-70 said on one line, status 1, the rest merged"
else
	bad "ranks: missing: status $rc: $(cat err)"
fi
run kt-rank-tag --ranks 3 wa.json wc.json -o none.json 2>err
rc=$?
if [ "$rc" -eq 1 ] && [ "$(cat err)" = 'kt-rank-tag: --ranks: no input has rank 3' ] &&
    [ "$(jq -c '[.ktRanks, .traceEvents]' none.json)" = '[[],[]]' ]; then
	ok "ranks: no input of the list: status 1, an empty trace"
else
	bad "ranks: none: status $rc: $(cat err)"
fi
# One rank listed: only tagging, as kt-rank-tag of that one file.
run kt-rank-tag --ranks 2 wa.json wc.json >sel.json 2>/dev/null
run kt-rank-tag wc.json >ref.json 2>/dev/null
check "ranks: one rank listed tags as its file alone does" cmp sel.json ref.json
# Ranks from file names (s.json has no distributedInfo): the keys after
# the events of a plain file are read from its end, so a trailing
# distributedInfo still wins over the name, as without --ranks.  A
# compressed one without distributedInfo first is read through.
sed 's/^]}$/], "distributedInfo": {"rank": 1}}/' s.json >worker9.json
gzip -c s.json >t-8.json.gz
run kt-rank-tag -v --ranks 4,6 rank3.json rank-4.json worker6.json t-7.json \
    t-8.json.gz worker9.json >sel.json 2>err
rc=$?
run kt-rank-tag rank-4.json worker6.json >ref.json 2>/dev/null
if [ "$rc" -eq 0 ] && cmp -s sel.json ref.json &&
    grep -qx 'kt-rank-tag: worker9.json: rank 1 (from distributedInfo.rank), not in --ranks: read only its top-level keys' err &&
    grep -qx 'kt-rank-tag: t-7.json: rank 7 (from file name: -N.), not in --ranks: read only its top-level keys' err &&
    grep -qx 'kt-rank-tag: t-8.json.gz: rank 8 (from file name: -N.), not in --ranks: read through, as its first bytes do not settle its rank' err
then
	ok "ranks: names and a trailing distributedInfo decide as without --ranks"
else
	bad "ranks: names: status $rc: $(cat err)"
fi
run kt-rank-tag --ranks 1 worker9.json rank3.json >sel.json 2>/dev/null
run kt-rank-tag worker9.json >ref.json 2>/dev/null
check "ranks: worker9.json with distributedInfo.rank 1 after its events is rank 1" \
    cmp sel.json ref.json
# Archive members: rank 1 is r0/worker1.json.
run kt-rank-tag --ranks 1 m.tar >sel.json 2>err
rc=$?
run kt-rank-tag -m 'r0/*' m.tar >ref.json 2>/dev/null
if [ "$rc" -eq 0 ] && cmp -s sel.json ref.json &&
    [ "$(jq -r '.ktRanks[0].source' sel.json)" = 'm.tar:r0/worker1.json' ]; then
	ok "ranks: an archive's members are selected by rank"
else
	bad "ranks: archive: status $rc: $(cat err)"
fi
err_case "--ranks: an input with no rank is still an error" \
    'plain.json: no rank' --ranks 3 rank3.json plain.json
err_case "--ranks: empty" "--ranks: '' is not a list of N or A-B" --ranks '' c0.json
err_case "--ranks: an empty item" "--ranks: '0,,7' is not a list" --ranks 0,,7 c0.json
err_case "--ranks: a trailing comma" "--ranks: '0,' is not a list" --ranks 0, c0.json
err_case "--ranks: a range backwards" "--ranks: '7-3' ends before it starts" --ranks 7-3 c0.json
err_case "--ranks: not a number" "--ranks: 'x' is not a number" --ranks x c0.json
err_case "--ranks: past INT32_MAX" "--ranks: '2147483648' is not a number from 0 to 2147483647" \
    --ranks 0,2147483648 c0.json
err_case "--ranks: negative" "--ranks: '-1' is not a list" --ranks -1 c0.json
err_case "--ranks with --rank" '--rank names the rank of one input; --ranks' \
    --rank 1 --ranks 1 c0.json
