# tests/t/hostile.sh: output safety against careless paths (issue 17,
# data loss): -o through a link, a device or a FIFO never renames over
# it; every output path of every filter is checked against the inputs
# (--split-steps too); a report goes beside regular files only.
. "$(dirname "$0")/../lib.sh"

ex=$(cd "$(dirname "$0")/../../examples" && pwd)/trace.json.gz
cd "$TMP" || exit 1
gzip -dc "$ex" >t.json
run kt-normalize t.json -o s.json 2>/dev/null || bad "hostile: sort"

# Each trace or table writer, with the output it writes to a regular
# file as the judge of what -o /dev/stdout must write.
cat >cmds <<'EOF'
normalize --keep-order t.json
normalize t.json
slice-window --steps 5-6 s.json
rank-tag --rank 3 t.json
compact-lanes --report rep.json t.json
layer-track -a vectorized_layer_norm -n 2 --passes 1 --report lrep.json s.json
bucket t.json
gaps t.json
decompose t.json
overlap t.json
memory t.json
EOF
while read -r f args; do
	# shellcheck disable=SC2086
	run kt-$f $args -o want.out 2>/dev/null
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s want.out ]; then
		bad "hostile: $f $args: status $rc on a plain -o"
		continue
	fi
	# shellcheck disable=SC2086
	run kt-$f $args -o /dev/stdout >got.out 2>err
	rc=$?
	if [ "$rc" -eq 0 ] && cmp -s want.out got.out && [ -L /dev/stdout ] &&
	    ! ls /dev/.stdout.kt-* >/dev/null 2>&1; then
		ok "hostile: $f -o /dev/stdout into a file writes through"
	else
		bad "hostile: $f -o /dev/stdout: status $rc, $(wc -c <got.out) of $(wc -c <want.out) bytes"
	fi
	printf 'first\n' >app.out
	# shellcheck disable=SC2086
	run kt-$f $args -o /proc/self/fd/1 >>app.out 2>/dev/null
	{ printf 'first\n'; cat want.out; } >want.app
	if cmp -s want.app app.out; then
		ok "hostile: $f -o /proc/self/fd/1 appends under >>"
	else
		bad "hostile: $f -o /proc/self/fd/1 under >>"
	fi
	rm -f target.out
	ln -sf target.out link.out
	# shellcheck disable=SC2086
	run kt-$f $args -o link.out 2>/dev/null
	if [ -L link.out ] && cmp -s want.out target.out; then
		ok "hostile: $f -o LINK writes through the link"
	else
		bad "hostile: $f -o LINK: the link was replaced or the target is wrong"
	fi
	rm -f fifo && mkfifo fifo
	cat fifo >fifo.out &
	# shellcheck disable=SC2086
	run kt-$f $args -o fifo 2>/dev/null
	wait
	if [ -p fifo ] && cmp -s want.out fifo.out; then
		ok "hostile: $f -o FIFO writes into the FIFO"
	else
		bad "hostile: $f -o FIFO"
	fi
done <cmds

# A link to an input is still the input.
ln -sf t.json tlink.json
run kt-normalize --keep-order t.json -o tlink.json 2>err
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'refusing to overwrite an input' err &&
    cmp -s t.json "$(readlink tlink.json)"; then
	ok "hostile: -o a link to the input refused"
else
	bad "hostile: -o a link to the input: status $rc"
fi

# --split-steps: a window's file that is the input is refused, the input
# keeps its bytes, and no temporary file is left.
mkdir split && cp s.json split/p-steps-6-6.json && cp s.json split/orig.json
(cd split && run kt-slice-window --split-steps 1 -o p p-steps-6-6.json) \
    >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'p-steps-6-6.json: refusing to overwrite an input' err &&
    cmp -s split/orig.json split/p-steps-6-6.json &&
    [ "$(ls -a split | grep -c 'kt-')" -eq 0 ]; then
	ok "hostile: --split-steps never replaces its input"
else
	bad "hostile: --split-steps onto its input: status $rc, $(ls -a split | tr '\n' ' ')"
fi
# The same through a hard link (another name, the same file).
mkdir split2 && cp s.json split2/in.json && ln split2/in.json split2/p-steps-5-5.json
(cd split2 && run kt-slice-window --split-steps 1 -o p in.json) >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && cmp -s s.json split2/in.json &&
    [ "$(ls -a split2 | grep -c 'kt-')" -eq 0 ]; then
	ok "hostile: --split-steps onto a hard link of its input refused"
else
	bad "hostile: --split-steps onto a hard link: status $rc"
fi
# kt views: each view file is an output that is checked too.
mkdir vdir && ln t.json vdir/3_kernel_table.tsv 2>/dev/null
cp t.json orig.json
run kt-views -o vdir t.json >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'refusing to overwrite an input' err &&
    cmp -s t.json orig.json; then
	ok "hostile: kt views never writes a view over its input"
else
	bad "hostile: kt views over a hard link of its input: status $rc: $(head -c 200 err)"
fi

# Reports go beside regular files only.
for f in compact-lanes layer-track; do
	case $f in
	compact-lanes) args="t.json"; sfx=compact.json ;;
	layer-track) args="-a vectorized_layer_norm -n 2 --passes 1 s.json"; sfx=layers.json ;;
	esac
	had=0
	[ -e "/dev/null.$sfx" ] && had=1
	# shellcheck disable=SC2086
	run kt-$f $args -o /dev/null 2>err
	rc=$?
	if [ "$rc" -eq 0 ] && { [ "$had" -eq 1 ] || [ ! -e "/dev/null.$sfx" ]; }; then
		ok "hostile: $f -o /dev/null writes no /dev/null.$sfx"
	else
		bad "hostile: $f -o /dev/null: status $rc, report beside a device"
	fi
	rm -f fifo.$sfx && rm -f fifo && mkfifo fifo
	cat fifo >/dev/null &
	# shellcheck disable=SC2086
	run kt-$f $args -o fifo 2>/dev/null
	wait
	if [ ! -e "fifo.$sfx" ]; then
		ok "hostile: $f -o FIFO writes no report beside it"
	else
		bad "hostile: $f -o FIFO wrote fifo.$sfx"
	fi
	rm -f reg.json reg.json.$sfx
	# shellcheck disable=SC2086
	run kt-$f $args -o reg.json 2>/dev/null
	if [ -s "reg.json.$sfx" ]; then
		ok "hostile: $f -o FILE still writes FILE.$sfx"
	else
		bad "hostile: $f -o FILE: no FILE.$sfx"
	fi
done
if run kt-compact-lanes t.json -o /dev/null 2>err &&
    grep -q 'no report (--report FILE)' err; then
	ok "hostile: compact-lanes to a device says a report needs --report"
else
	bad "hostile: compact-lanes to a device: no word on the report"
fi
exit 0
