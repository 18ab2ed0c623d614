# tests/t/layertrack.sh: kt-layer-track.  The generator's truth file
# (its `layer` rows: each anchor kernel's step, pass, layer and start),
# awk over the raw number text and jq, never kt, judge the guides:
#  - eager and CUDA-graph traces: every guide's label and its exact ns
#    start and end (the next anchor, an end anchor's completion, or, for
#    the last layer of a pass, its own anchor's completion: never a
#    zero-length slice, which chrome://tracing would nest in the guide
#    before it), --first-layer, --anchor-offset/--passes;
#  - the input's events come out as they went in, byte for byte, and the
#    output passes kt normalize --check with nothing new;
#  - running it on its own output adds nothing (idempotence);
#  - the report: pid, regex, counts, the input's SHA-256 (sha256sum),
#    each guide's ns and relative times;
#  - the refusals (exit 2): a cut-short selection, a count that is not
#    whole passes, mixed passes, several GPUs, an end anchor that is
#    not once per layer, a different guide already there;
#  - real traces of ../shared/traces/tracelens: Qwen 0.5B (24 layers,
#    eager, h100 and mi300) where each guide's anchor is launched from
#    inside the CPU module Qwen2DecoderLayer_N of the same N, and the
#    vLLM CUDA-graph decode (24 layers) where every guide holds exactly
#    one of each of the other once-per-layer kernels.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1

FWD='vectorized_layer_norm_kernel'
BWD='layer_norm_grad_input_kernel'
# A GEMM that runs once per forward layer, last but one kernel of it.
ENDK='tn_n_tilesize256x128x64'

# guides FILE: "pass label start_ns end_ns" per guide, from the raw text
# (kt writes one guide per line; times have three decimals).
guides() {
	grep '"cat": "layer_guide"' "$1" |
		sed 's/.*"name": "\(L[0-9]*\)".*"ts": \([0-9]*\)\.\([0-9]*\), "dur": \([0-9]*\)\.\([0-9]*\),.*"pass": \([0-9]*\).*/\6 \1 \2\3 \4\5/' |
		awk '{ printf "%s %s %s %.0f\n", $1, $2, $3, $3 + $4 }'
}

# want TRUTH PASS N FIRST: the guides the truth file implies, the last
# layer of each pass ending when its anchor kernel does (not after the
# next anchor's start).
want() {
	awk -F '\t' -v p="$2" -v n="$3" -v f="$4" '
		$1 == "layer" && $3 == p { s[k + 0] = $6; t[k++] = $7 }
		END {
			for (i = 0; i < k; i++) {
				e = (i % n != n - 1) ? s[i + 1] : \
				    (i + 1 < k && s[i + 1] < t[i]) ? s[i + 1] : t[i]
				printf "%d L%d %s %s\n", int(i / n), f + i % n, s[i], e
			}
		}' "$1"
}

ktgen=$KT_BUILD/ktgen
"$ktgen" --steps 3 --layers 4 --truth e.tsv -o e.json || exit 1
"$ktgen" --graph --steps 2 --layers 6 --streams 64 --truth g.tsv -o g.json || exit 1

# Eager, forward anchors: exact labels and boundaries.
run kt-layer-track -a "$FWD" -n 4 e.json >e.out 2>e.err
rc=$?
guides e.out >e.got
want e.tsv fwd 4 0 >e.want
if [ $rc -eq 0 ] && [ -s e.got ] && [ "$(wc -l <e.got)" -eq 12 ] && cmp -s e.got e.want; then
	ok "layertrack eager labels and ns boundaries"
else
	bad "layertrack eager labels and ns boundaries: rc $rc; $(diff e.want e.got | head -n 3)"
fi

# The same through standard input, and with -o (one pass): same bytes.
run kt-layer-track -a "$FWD" -n 4 <e.json >e.stdin 2>/dev/null
run kt-layer-track -a "$FWD" -n 4 -o e.o.json e.json 2>/dev/null
if cmp -s e.out e.stdin && cmp -s e.out e.o.json; then
	ok "layertrack stdin, -o and stdout agree"
else
	bad "layertrack stdin, -o and stdout agree"
fi

# CUDA graph: anchors on many streams, same rules.
run kt-layer-track -a "$FWD" -n 6 g.json >g.out 2>g.err
rc=$?
guides g.out >g.got
want g.tsv fwd 6 0 >g.want
if [ $rc -eq 0 ] && [ "$(wc -l <g.got)" -eq 12 ] && cmp -s g.got g.want; then
	ok "layertrack graph labels and ns boundaries"
else
	bad "layertrack graph labels and ns boundaries: rc $rc; $(diff g.want g.got | head -n 3)"
fi

# --first-layer numbers from F; the backward pass in execution order:
# its L0 is the model's last layer (truth layer 3).
run kt-layer-track -a "$BWD" -n 4 -f 10 -p backward e.json >b.out 2>/dev/null
guides b.out >b.got
want e.tsv bwd 4 10 >b.want
if cmp -s b.got b.want && [ "$(awk -F '\t' '$1 == "layer" && $3 == "bwd" { print $4; exit }' e.tsv)" = 3 ] &&
	grep -q '"name": "Layer guide (backward) \\u2014 anchor intervals"\|"name": "Layer guide (backward) — anchor intervals"' b.out; then
	ok "layertrack --first-layer, backward, --phase track name"
else
	bad "layertrack --first-layer, backward, --phase track name: $(diff b.want b.got | head -n 3)"
fi

# --anchor-offset and --passes: the second and third steps only.
run kt-layer-track -a "$FWD" -n 4 -k 4 -P 2 e.json >k.out 2>/dev/null
guides k.out >k.got
want e.tsv fwd 4 0 | awk '$1 > 0 { $1 = $1 - 1; print }' >k.want
if cmp -s k.got k.want; then
	ok "layertrack --anchor-offset --passes"
else
	bad "layertrack --anchor-offset --passes: $(diff k.want k.got | head -n 3)"
fi

# --end-anchor-regex: the last guide of each pass ends when that pass's
# last end-anchor kernel completes (found by jq's own reading of the
# kernel events: the first one after the last anchor).
run kt-layer-track -a "$FWD" -e "$ENDK" -n 4 e.json >x.out 2>/dev/null
rc=$?
guides x.out >x.got
jq -r --arg e "$ENDK" --arg a "$FWD" '.traceEvents[] | select(.cat == "kernel" and
	((.name | test($e)) or (.name | test($a)))) | [.ts, .dur, (.name | test($a))] | @tsv' e.json |
	sort -n >x.kern
# Raw text of ts and dur of every end-anchor kernel, in ns.
grep -A1 "$ENDK" e.json | grep -o '"ts": [0-9.]*, "dur": [0-9.]*' |
	sed 's/"ts": \([0-9]*\)\.\([0-9]*\), "dur": \([0-9]*\)\.\([0-9]*\)/\1\2 \3\4/' |
	awk '{ printf "%s %.0f\n", $1, $1 + $2 }' | sort -n >x.ends
awk 'NR == FNR { s[NR] = $1; e[NR] = $2; n = NR; next }
	$2 == "L3" { for (i = 1; i <= n; i++) if (s[i] >= $3) { $4 = e[i]; break } }
	{ print }' x.ends e.want >x.want
if [ $rc -eq 0 ] && [ -s x.ends ] && cmp -s x.got x.want; then
	ok "layertrack --end-anchor-regex ends at the completion"
else
	bad "layertrack --end-anchor-regex ends at the completion: rc $rc; $(diff x.want x.got | head -n 3)"
fi

# Lossless: a plain file comes out as its own bytes with the guides put
# in after its last event (the comma that joins them undone here); a
# compressed one goes through the writer, as kt-normalize --keep-order
# writes it.  Only guide events and their row's metadata are added.
# unadd FILE: FILE without the lines kt-layer-track added.
unadd() {
	awk '/"tid": 2000000000,/ { if (!cut) { sub(/,$/, "", prev) } cut = 1; next }
		NR > 1 { print prev } { prev = $0 }
		END { print prev }' "$1"
}
gzip -c e.json >e.json.gz
run kt-layer-track -a "$FWD" -n 4 e.json.gz >z.out 2>/dev/null
kt-normalize --keep-order e.json.gz >z.norm
unadd e.out >e.kept
unadd z.out >z.kept
added=$(grep -c '"tid": 2000000000,' e.out)
if cmp -s e.json e.kept && cmp -s z.norm z.kept && [ "$added" -eq 14 ] &&
	[ "$(jq '.traceEvents | length' e.out)" -eq $(($(jq '.traceEvents | length' e.json) + 14)) ] &&
	[ "$(jq -c '[.traceEvents[] | select(.tid == 2000000000) | .ph] | unique' e.out)" = '["M","X"]' ] &&
	[ "$(guides z.out)" = "$(cat e.got)" ] &&
	[ "$(toplevel e.json)" = "$(toplevel e.out)" ] && [ "$(toplevel e.json)" = "$(toplevel z.out)" ]; then
	ok "layertrack keeps every input event byte for byte"
else
	bad "layertrack keeps every input event byte for byte (added $added)"
fi

# The guide row: under the GPU's pid, one thread name, a sort index
# just above the first stream, no overlap between guides.
if [ "$(jq -r '[.traceEvents[] | select(.tid == 2000000000) | .pid] | unique | @csv' e.out)" = 0 ] &&
	[ "$(jq '[.traceEvents[] | select(.name == "thread_sort_index" and .tid == 2000000000) | .args.sort_index][0]' e.out)" = 6 ] &&
	sort -k3,3n e.got | awk 'p != "" && $3 < p { exit 1 } { p = $4 }'; then
	ok "layertrack guide row and no overlap"
else
	bad "layertrack guide row and no overlap"
fi

# kt normalize --check: nothing more than in the input.
kt-normalize --check e.json >c.in 2>&1
rc1=$?
kt-normalize --check e.out >c.out 2>&1
rc2=$?
kt-normalize --check g.out >c.g 2>&1
rc3=$?
if [ $rc1 -eq $rc2 ] && [ $rc3 -eq 0 ] && cmp -s c.in c.out; then
	ok "layertrack output passes kt normalize --check"
else
	bad "layertrack output passes kt normalize --check: $rc1 $rc2 $rc3"
fi

# Idempotence: on its own output, nothing is added.
run kt-layer-track -a "$FWD" -n 4 e.out >e.again 2>e.again.err
rc=$?
run kt-layer-track -a "$FWD" -n 4 -o e.again2.json e.out 2>/dev/null
if [ $rc -eq 0 ] && cmp -s e.out e.again && cmp -s e.out e.again2.json &&
	grep -q 'nothing added' e.again.err; then
	ok "layertrack idempotent"
else
	bad "layertrack idempotent: rc $rc"
fi
# Another phase is another row; a different guide for the same phase is
# refused.
run kt-layer-track -a "$FWD" -n 4 -p second e.out >e.two 2>/dev/null
run kt-layer-track -a "$FWD" -n 4 -k 4 -P 1 e.out >/dev/null 2>e.diff
rc=$?
if [ "$(jq '[.traceEvents[] | select(.cat == "layer_guide") | .tid] | unique | length' e.two)" = 2 ] &&
	[ $rc -eq 2 ] && grep -q 'different layer guide' e.diff; then
	ok "layertrack second phase row, different guide refused"
else
	bad "layertrack second phase row, different guide refused: rc $rc"
fi

# The report.
run kt-layer-track -a "$FWD" -n 4 -p prefill -E 'first kernel of each layer' -o r.json e.json 2>/dev/null
sum=$(sha256sum e.json | cut -c 1-64)
start=$(timetexts e.json | awk '$1 ~ /ts$/ { sub(/\./, "", $2); if (m == "" || $2 + 0 < m + 0) m = $2 } END { print m }')
if [ -f r.json.layers.json ] &&
	[ "$(jq -r '.inputSha256' r.json.layers.json)" = "$sum" ] &&
	[ "$(jq -c '[.pid, .device, .anchorRegex, .anchorOffset, .passes, .numLayers, .phase, .evidence, .anchorsMatched]' r.json.layers.json)" = \
	  "[0,0,\"$FWD\",0,3,4,\"prefill\",\"first kernel of each layer\",12]" ] &&
	[ "$(jq -r '.traceStartNs' r.json.layers.json)" = "$start" ] &&
	[ "$(jq -r '.guides[] | "\(.pass) \(.name) \(.startNs) \(.endNs)"' r.json.layers.json)" = "$(cat e.want)" ] &&
	jq -e --argjson s "$start" 'all(.guides[]; .relStartNs == .startNs - $s and .relEndNs == .endNs - $s)' r.json.layers.json >/dev/null; then
	ok "layertrack report"
else
	bad "layertrack report"
fi

# Refusals, exit 2, with the reason; no output file is left.
refused() {
	_n=$1 _why=$2
	shift 2
	rm -f ref.json ref.json.layers.json
	run kt-layer-track "$@" -o ref.json >/dev/null 2>ref.err
	_rc=$?
	if [ $_rc -eq 2 ] && grep -q "refused: .*$_why" ref.err && [ ! -e ref.json ] &&
		[ ! -e ref.json.layers.json ]; then
		ok "layertrack refuses $_n"
	else
		bad "layertrack refuses $_n: rc $_rc: $(cat ref.err)"
	fi
}
refused "a selection cut short" "cut a pass short" -a "$FWD" -n 4 -P 4 e.json
refused "a partial pass" "not a whole number of passes" -a "$FWD" -n 5 e.json
refused "an offset leaving a partial pass" "not a whole number" -a "$FWD" -n 4 -k 1 e.json
refused "mixed passes (forward and backward)" "mix passes" -a "$FWD|$BWD" -n 4 e.json
refused "an end anchor twice per layer" "must occur exactly once" -a "$FWD" -e 'CUDAFunctor_add' -n 4 e.json
refused "no anchor" "no kernel matches" -a 'no_such_kernel' -n 4 e.json
# Several GPUs: two ranks merged (pids 1000 and 2000).
"$ktgen" --steps 2 --layers 4 --rank 1 --world 2 -o e1.json || exit 1
kt-rank-tag e.json e1.json >m.json 2>/dev/null
refused "several GPUs" "several GPUs" -a "$FWD" -n 4 m.json
run kt-layer-track -a "$FWD" -n 4 --pid 2000 m.json >m.out 2>/dev/null
rc=$?
if [ $rc -eq 0 ] && [ "$(jq '[.traceEvents[] | select(.cat == "layer_guide" and .pid == 2000)] | length' m.out)" = 8 ] &&
	[ "$(jq '[.traceEvents[] | select(.cat == "layer_guide")] | length' m.out)" = 8 ]; then
	ok "layertrack --pid chooses the GPU"
else
	bad "layertrack --pid chooses the GPU: rc $rc"
fi

# --suggest on the generator: the forward anchor is a candidate with
# its count per pass, on stream 7, launched by aten::native_layer_norm.
run kt-layer-track --suggest -n 4 e.json >s.tsv 2>/dev/null
# Three passes of 4 layers: 3 intervals and 2 pairs of consecutive ones
# a pass, each interval one forward layer's kernels, the same in every
# layer: the 6 pairs share all their kernels, k/m with k = m, a multiple
# of 6 (period 1).
if awk -F '\t' -v a="$FWD" 'index($14, a) && $1 == 12 && $2 == 4 && $3 == 3 &&
	$4 == 0 && $6 == 7 && $9 == "no" && $10 == 1 && split($11, sh, "/") == 2 &&
	sh[1] == sh[2] && sh[1] > 0 && sh[1] % 6 == 0 && $12 == 12 &&
	$13 == "aten::native_layer_norm" { f = 1 }
	END { exit !f }' s.tsv; then
	ok "layertrack --suggest"
else
	bad "layertrack --suggest: $(grep "$FWD" s.tsv | cut -c 1-120)"
fi

# Anchors that run several times per layer, --suggest's ranking, and
# CUDA graphs whose replays put a layer on other streams.  A small
# Python oracle reads the trace (each ts from its text, in ns) and the
# generator's truth, never kt: for every kernel name, how many times it
# runs in each step (the truth's step rows), in each forward layer (from
# one truth forward anchor's start to the next one's, in a step) and in
# each backward one (likewise).
# oracle TRACE TRUTH: "per-step<TAB>per-fwd-layer<TAB>per-bwd-layer<TAB>name"
# counts (each list the distinct counts, sorted).
cat >oracle.py <<'PY'
import json, sys
def ns(t):
    a, _, b = t.partition('.')
    return int(a) * 1000 + int((b + '000')[:3])
ev = json.load(open(sys.argv[1]), parse_float=str, parse_int=str)['traceEvents']
k = sorted((ns(e['ts']), e['name']) for e in ev
           if e.get('ph') == 'X' and e.get('cat') == 'kernel')
steps, anc = [], {'fwd': {}, 'bwd': {}}
for line in open(sys.argv[2]):
    f = line.rstrip('\n').split('\t')
    if f[0] == 'step':
        steps.append((int(f[5]), int(f[6])))
    elif f[0] == 'layer':
        anc[f[2]].setdefault(f[1], []).append(int(f[5]))
def layers(p):
    return [(a[i], a[i + 1]) for a in anc[p].values() for i in range(len(a) - 1)]
def counts(t, w, end):
    return ','.join(map(str, sorted(set(
        sum(1 for x in t if s <= x and (x <= e if end else x < e)) for s, e in w))))
for name in sorted(set(n for _, n in k)):
    t = [x for x, n in k if n == name]
    print('%s\t%s\t%s\t%s' % (counts(t, steps, 1), counts(t, layers('fwd'), 0),
        counts(t, layers('bwd'), 0), name))
PY
# ere TEXT: TEXT as an extended regular expression matching itself.
ere() {
	printf '%s\n' "$1" | sed 's/[][\.*^$(){}+?|]/\\&/g'
}
if ! command -v python3 >/dev/null 2>&1; then
	skip "layertrack several times per layer, suggest ranking: no python3"
else
	"$ktgen" --steps 3 --layers 8 --truth e8.tsv -o e8.json || exit 1
	python3 oracle.py e8.json e8.tsv >e8.counts || exit 1
	# The twice-per-layer kernels: twice in every forward layer, 16 a
	# step (the residual adds after attention and after the MLP).
	awk -F '\t' '$1 == 16 && $2 == 2 && $3 == 0 { print $4 }' e8.counts >e8.twice
	ADD=$(grep CUDAFunctor_add e8.twice)

	# (1) Refused, exit 1, one line naming the period; no output.  48
	# adds make 6 whole passes of 8, each 4 layers: the kernels between
	# adds alternate, attention then MLP (5 kernels each, one shared).
	rm -f p.json p.json.layers.json
	run kt-layer-track -a "$(ere "$ADD")" -n 8 -o p.json e8.json >p.out 2>p.err
	rc=$?
	if [ -n "$ADD" ] && [ $rc -eq 1 ] && [ "$(wc -l <p.err)" -eq 1 ] &&
		grep -q '^kt-layer-track: refused: the anchor repeats with a period of 2 within a pass, so it runs 2 times per layer, or a pass has 2 layers, not 8' p.err &&
		[ ! -e p.json ] && [ ! -e p.json.layers.json ] && [ ! -s p.out ]; then
		ok "layertrack refuses a twice-per-layer anchor (exit 1, period 2)"
	else
		bad "layertrack refuses a twice-per-layer anchor: '$ADD' rc $rc: $(cat p.err)"
	fi

	# (2) --suggest -n 8 (the truth's layers per step): the first row
	# runs 8 times a step, once in each forward layer and never in the
	# backward ones, or the other way round (once per layer), and using
	# it as the anchor labels 3 passes of 8; each twice-per-layer kernel
	# is marked period 2 and ranked below every once-per-layer one.
	nl=$(awk -F '\t' '$1 == "layer" && $2 == 5 && $3 == "fwd"' e8.tsv | wc -l)
	run kt-layer-track --suggest -n "$nl" e8.json >s8.tsv 2>/dev/null
	first=$(awk -F '\t' 'NR == 2 { print $14 }' s8.tsv)
	fc=$(awk -F '\t' -v n="$first" '$4 == n { print $1 "/" $2 "/" $3 }' e8.counts)
	run kt-layer-track -a "^$(ere "$first")\$" -n "$nl" e8.json >s8.json 2>/dev/null
	ng=$(grep -c '"cat": "layer_guide"' s8.json)
	# the last row of a once-per-layer kernel and the first of a
	# twice-per-layer one
	res=$(awk -F '\t' 'NR == FNR { c[$4] = $1 "/" $2 "/" $3; next }
		FNR == 1 { next }
		c[$14] == "8/1/0" || c[$14] == "8/0/1" { last = FNR }
		c[$14] == "16/2/0" { if (!tw) tw = FNR; if ($10 != 2) unmarked++ }
		END { print (tw > last), unmarked + 0 }' e8.counts s8.tsv)
	if [ "$nl" -eq 8 ] && { [ "$fc" = "8/1/0" ] || [ "$fc" = "8/0/1" ]; } && [ "$ng" -eq 24 ] &&
		[ "$(wc -l <e8.twice)" -ge 1 ] && [ "$res" = "1 0" ]; then
		ok "layertrack --suggest ranks a once-per-layer anchor first, twice-per-layer below (eager)"
	else
		bad "layertrack --suggest eager: n $nl, first '$first' ($fc, $ng guides), $res"
	fi

	# The same on a CUDA-graph trace of 300 streams whose replays move
	# the layers to other streams (--stream-shift): the twice-per-layer
	# kernels (by name, from the eager oracle; 12 a step here) rank
	# below every once-per-layer kernel.
	"$ktgen" --graph --steps 3 --layers 6 --streams 300 --stream-shift 7 \
		--truth gs.tsv -o gs.json || exit 1
	python3 oracle.py gs.json gs.tsv >gs.counts || exit 1
	nl=$(awk -F '\t' '$1 == "layer" && $2 == 5 && $3 == "fwd"' gs.tsv | wc -l)
	run kt-layer-track --suggest -n "$nl" gs.json >sg.tsv 2>/dev/null
	first=$(awk -F '\t' 'NR == 2 { print $14 }' sg.tsv)
	fc=$(awk -F '\t' -v n="$first" '$4 == n { print $1 }' gs.counts)
	run kt-layer-track -a "^$(ere "$first")\$" -n "$nl" gs.json >sg.json 2>/dev/null
	ng=$(grep -c '"cat": "layer_guide"' sg.json)
	res=$(awk -F '\t' 'FILENAME == ARGV[1] { tw[$0] = 1; next }
		FILENAME == ARGV[2] { c[$4] = $1; next }
		FNR == 1 { next }
		c[$14] == 6 { last = FNR }
		($14 in tw) { n++; if (c[$14] != 12) bad++; if (!f) f = FNR }
		END { print (f > last), n + 0, bad + 0 }' e8.twice gs.counts sg.tsv)
	if [ "$nl" -eq 6 ] && [ "$fc" = 6 ] && [ "$ng" -eq 18 ] &&
		[ "$res" = "1 $(wc -l <e8.twice) 0" ]; then
		ok "layertrack --suggest ranks a once-per-layer anchor first, twice-per-layer below (graph)"
	else
		bad "layertrack --suggest graph: n $nl, first '$first' ($fc, $ng guides), $res"
	fi
fi

# The period of the interval lengths, by hand: 16 anchors "A" in two
# passes of 8, 1000 us apart, the intervals within a pass alternating
# 11 and 269 us (7 a pass: 11, 269, 11, 269, 11, 269, 11); after each
# anchor one other kernel, of a name of its own, so that no two
# intervals hold the same kernels ({A, kI}: one of two shared).  Those
# after anchors 0, 2, 4, 6 are at most 11 us and those after 1, 3, 5 at
# least 269, more than 3 times: period 2.  With the same kernel "mlp"
# after every anchor, the intervals are alike (layers of two kinds that
# alternate) and the 16 guides are made.
altern() {
	awk -v same="$1" 'BEGIN {
		printf "{\"traceEvents\": [\n"
		t = 1000; sep = ""
		for (i = 0; i < 16; i++) {
			nm = same ? "mlp" : "k" i
			printf "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"A\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 2}", sep, t
			printf ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 1}", nm, t + 3
			sep = ",\n"
			t += (i % 8 == 7) ? 1000 : (i % 2 == 0) ? 11 : 269
		}
		printf "\n]}\n"
	}'
}
altern 0 >alt.json
altern 1 >alike.json
run kt-layer-track -a '^A$' -n 8 alt.json >alt.out 2>alt.err
rc1=$?
run kt-layer-track -a '^A$' -n 8 alike.json >alike.out 2>alike.err
rc2=$?
if [ $rc1 -eq 1 ] && [ ! -s alt.out ] && [ "$(wc -l <alt.err)" -eq 1 ] &&
	grep -q 'period of 2 within a pass.*with j mod 2 = 0 they are at most 11 us, with j mod 2 = 1 at least 269 us' alt.err &&
	[ $rc2 -eq 0 ] && [ "$(grep -c '"cat": "layer_guide"' alike.out)" -eq 16 ]; then
	ok "layertrack refuses intervals alternating 11 and 269 us, keeps alike layers"
else
	bad "layertrack intervals alternating: rc $rc1 $rc2: $(cat alt.err alike.err)"
fi

# An anchor once per two layers, by hand: 8 anchors "A", two passes of
# 4, 100 us apart (2000 between passes); after each, two identical layers
# "x", "y", "x", "y" (x twice and y twice: two copies of one layer).
# Refused with exit 1, "once per 2 layers".  With "x", "y", "x" (x twice,
# y once: no whole copies) the 8 guides are made.
copies() {
	awk -v k="$1" 'BEGIN {
		printf "{\"traceEvents\": [\n"
		t = 1000; sep = ""
		for (i = 0; i < 8; i++) {
			printf "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"A\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 2}", sep, t
			n = split(k, nm, ",")
			for (j = 1; j <= n; j++)
				printf ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 1}", nm[j], t + 10 * j
			sep = ",\n"
			t += (i % 4 == 3) ? 2000 : 100
		}
		printf "\n]}\n"
	}'
}
copies x,y,x,y >two.json
copies x,y,x >one.json
run kt-layer-track -a '^A$' -n 4 two.json >two.out 2>two.err
rc1=$?
run kt-layer-track -a '^A$' -n 4 one.json >one.out 2>/dev/null
rc2=$?
if [ $rc1 -eq 1 ] && [ ! -s two.out ] && [ "$(wc -l <two.err)" -eq 1 ] &&
	grep -q 'refused: the anchor runs once per 2 layers, not once per layer' two.err &&
	[ $rc2 -eq 0 ] && [ "$(grep -c '"cat": "layer_guide"' one.out)" -eq 8 ]; then
	ok "layertrack refuses an anchor once per two layers (two copies in each interval)"
else
	bad "layertrack once per two layers: rc $rc1 $rc2: $(cat two.err)"
fi

# (3) CUDA graph, 300 streams, each replay 7 streams further: the truth
# puts layer 0's forward anchor on another stream in each of the 3 steps,
# and the trace has hundreds of stream rows (a step has 29 * 6 + 11 + 1
# = 186 graph kernels on stream indexes 7i .. 7i + 185 in step i: 200 in
# all); every pass is found, forward and backward, with the truth's
# labels and ns, and nothing is refused as "mixed".
"$ktgen" --graph --steps 3 --layers 6 --streams 300 --stream-shift 7 \
	--truth gs.tsv -o gs.json || exit 1
nst=$(jq '[.traceEvents[] | select(.cat == "kernel") | .tid] | unique | length' gs.json)
moves=$(awk -F '\t' '$1 == "layer" && $3 == "fwd" && $4 == 0 { print $5 }' gs.tsv | sort -u | wc -l)
run kt-layer-track -a "$FWD" -n 6 gs.json >gs.f 2>gs.ferr
rc1=$?
run kt-layer-track -a "$BWD" -n 6 -p backward gs.json >gs.b 2>gs.berr
rc2=$?
guides gs.f >gs.fgot
guides gs.b >gs.bgot
want gs.tsv fwd 6 0 >gs.fwant
want gs.tsv bwd 6 0 >gs.bwant
if [ "$nst" -eq 200 ] && [ "$moves" -eq 3 ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] &&
	[ "$(wc -l <gs.fgot)" -eq "$(awk -F '\t' '$1 == "layer" && $3 == "fwd"' gs.tsv | wc -l)" ] &&
	[ "$(wc -l <gs.fgot)" -eq 18 ] && cmp -s gs.fgot gs.fwant && cmp -s gs.bgot gs.bwant &&
	! grep -q mixed gs.ferr gs.berr; then
	ok "layertrack graph: anchors move between $nst streams, every pass found"
else
	bad "layertrack graph streams: $nst streams, $moves, rc $rc1 $rc2: $(cat gs.ferr gs.berr | head -2)"
fi

# --device: the only GPU of e.json is device 0, so -d 0 changes nothing;
# -d 5 has no anchor and is refused.
run kt-layer-track -a "$FWD" -n 4 -d 0 e.json >d0.out 2>/dev/null
rc0=$?
run kt-layer-track -a "$FWD" -n 4 -d 5 e.json >d5.out 2>d5.err
rc5=$?
if [ "$rc0" -eq 0 ] && cmp -s d0.out e.out && [ "$rc5" -eq 2 ] && [ ! -s d5.out ] &&
    grep -q 'no anchor on the chosen GPU' d5.err; then
	ok "layertrack --device"
else
	bad "layertrack --device: rc $rc0/$rc5, $(head -1 d5.err)"
fi

# Real traces.
tl=$KT_SHARED/tracelens
if ! have_shared || [ ! -d "$tl" ]; then
	skip "layertrack real traces: no $tl"
	exit 0
fi

# Qwen 0.5B: the trace starts inside an earlier forward (11 silu
# kernels whose launch was not recorded), then one whole forward of 24
# layers.  --suggest shows it: 35 = 24 + 11 left over, 24 linked.
for gpu in h100 mi300; do
	f=$tl/$gpu/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
	[ -f "$f" ] || { skip "layertrack qwen $gpu: no $f"; continue; }
	run kt-layer-track --suggest -n 24 "$f" >q.tsv 2>/dev/null
	sug=$(awk -F '\t' '$13 == "aten::silu" { print $1, $4, $12 }' q.tsv)
	run kt-layer-track -a 'silu_kernel' -n 24 "$f" >/dev/null 2>q.err
	rc1=$?
	run kt-layer-track -a 'silu_kernel' -n 24 -k 11 -p decode \
		-E 'silu: once per MLP; the first 11 are launched before the CPU window' "$f" >q.json 2>/dev/null
	rc2=$?
	# For each guide: its anchor kernel, the launch with the same
	# correlation, and the Qwen2DecoderLayer_N whose CPU span holds it.
	res=$(jq -r '
		[.traceEvents[]] as $e
		| ($e | map(select(.cat == "python_function" and (.name | test("Qwen2DecoderLayer_"))))) as $mods
		| ($e | map(select(.cat == "kernel" and (.name | test("silu_kernel"))))) as $k
		| ($e | map(select(.cat == "cuda_runtime" and .args.correlation != null))
		   | map({key: (.args.correlation | tostring), value: .}) | from_entries) as $rt
		| $e[] | select(.cat == "layer_guide")
		| . as $g
		| ($k[] | select(.ts == $g.ts)) as $a
		| $rt[$a.args.correlation | tostring] as $l
		| [$mods[] | select(.ts <= $l.ts and $l.ts <= .ts + .dur) | .name | sub(".*_"; "")] as $in
		| "\($g.name) \($in | join(","))"' q.json | awk '{ sub(/^L/, "", $1); if ($1 != $2) bad++; n++ }
		END { print n + 0, bad + 0 }')
	if [ "$sug" = "35 11 24" ] && [ $rc1 -eq 2 ] && [ $rc2 -eq 0 ] && [ "$res" = "24 0" ]; then
		ok "layertrack qwen $gpu: guides match Qwen2DecoderLayer_N"
	else
		bad "layertrack qwen $gpu: suggest '$sug', rc $rc1 $rc2, guides/mismatches '$res'"
	fi
done

# vLLM CUDA-graph decode: 24 layers, many kernels 24 times (--suggest
# lists them, whole passes, none mixed); with the rotary embedding as
# the anchor, every guide but the last (the anchor kernel alone) holds exactly one of each
# other once-per-layer MoE kernel.
f=$tl/inference/vllm_decode_full/graph_execution.json.gz
if [ -f "$f" ]; then
	run kt-layer-track --suggest -n 24 "$f" >v.tsv 2>/dev/null
	nsug=$(awk -F '\t' '$1 == 24 && $4 == 0 && $9 == "no"' v.tsv | wc -l)
	run kt-layer-track -a 'rotary_embedding_kernel' -n 24 -E 'rotary embedding: once per attention layer' "$f" >v.json 2>/dev/null
	rc=$?
	res=$(jq -r '
		[.traceEvents[]] as $e
		| [$e[] | select(.cat == "layer_guide" and .args.end == "next anchor")] as $g
		| ["_topk_forward", "_finalize_matmul_scatter_bf16", "reshape_and_cache_flash_kernel"] as $names
		| [$g[] | . as $x | $names[] | . as $n
		   | [$e[] | select(.cat == "kernel" and (.name | contains($n)) and .ts >= $x.ts and .ts < $x.ts + $x.dur)] | length]
		| "\($g | length) \(unique | @csv)"' v.json)
	if [ $rc -eq 0 ] && [ "$nsug" -ge 12 ] && [ "$res" = "23 1" ]; then
		ok "layertrack vllm graph decode: one of each per-layer kernel per guide"
	else
		bad "layertrack vllm graph decode: rc $rc, $nsug candidates, '$res'"
	fi
else
	skip "layertrack vllm: no $f"
fi

# TimeSformer-base: 12 blocks, each a time attention (softmax_warp_forward)
# then a space attention (cunn_SoftMaxForward) and the MLP; jq sees the
# attention's scaling multiply (AUnaryFunctor) before each softmax, in
# the order (multiply, time softmax, multiply, space softmax) x 12.  The
# multiply, twice per block, is refused with exit 1 and period 2; the
# space softmax labels the 12 blocks, each guide but the last holding one
# time softmax.
f=$tl/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz
if [ -f "$f" ]; then
	seq=$(gzip -dc "$f" | jq -r '[.traceEvents[] | select(.cat == "kernel" and
		(.name | test("AUnaryFunctor|softmax_warp_forward|cunn_SoftMaxForward")))]
		| sort_by(.ts) | map(if (.name | test("AUnary")) then "m"
		elif (.name | test("softmax_warp")) then "w" else "c" end) | join("")')
	run kt-layer-track -a AUnaryFunctor -n 12 "$f" >ts.m 2>ts.merr
	rc1=$?
	run kt-layer-track -a cunn_SoftMaxForward -n 12 "$f" >ts.c 2>/dev/null
	rc2=$?
	res=$(jq -r '[.traceEvents[]] as $e
		| [$e[] | select(.cat == "layer_guide" and .args.end == "next anchor")] as $g
		| [$g[] | . as $x | [$e[] | select(.cat == "kernel" and (.name | test("softmax_warp_forward"))
		   and .ts >= $x.ts and .ts < $x.ts + $x.dur)] | length]
		| "\($g | length) \(unique | @csv)"' ts.c)
	if [ "$seq" = "$(printf 'mwmc%.0s' 1 2 3 4 5 6 7 8 9 10 11 12)" ] && [ $rc1 -eq 1 ] &&
		[ ! -s ts.m ] && grep -q 'refused: the anchor repeats with a period of 2 within a pass, so it runs 2 times per layer, or a pass has 2 layers, not 12' ts.merr &&
		[ $rc2 -eq 0 ] && [ "$res" = "11 1" ]; then
		ok "layertrack timesformer: twice-per-block multiply refused, space softmax labels 12 blocks"
	else
		bad "layertrack timesformer: rc $rc1 $rc2, '$res', $(cut -c 1-100 ts.merr)"
	fi
else
	skip "layertrack timesformer: no $f"
fi

