# tests/t/io.sh: input and output: compressed and archived input found
# by content, --member, stdin, atomic -o, gzip output, refusing to
# overwrite an input, a full disk, and a corrupt gzip stream.
. "$(dirname "$0")/../lib.sh"

cd "$TMP" || exit 1
cat >t.json <<'J'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1712195495505582.988, "dur": 1.5},
{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495505580, "dur": 3}
], "traceName": "t"}
J
run kt-normalize t.json >want.json 2>err || bad "io: plain input"
[ -s err ] && bad "io: plain input wrote to stderr"

# The same trace through every compression, named so that the name
# cannot be what decides: content does.
gzip -c t.json >gz.data
xz -c t.json >xz.data
bzip2 -c t.json >bz2.data
if command -v zstd >/dev/null 2>&1; then
	zstd -q -c t.json >zst.data
fi
for f in gz.data xz.data bz2.data zst.data; do
	[ -f "$f" ] || { skip "io: $f: zstd not installed"; continue; }
	if run kt-normalize "$f" 2>/dev/null | cmp -s - want.json; then
		ok "io: reads $f by content"
	else
		bad "io: $f"
	fi
done
if run kt-normalize <gz.data 2>/dev/null | cmp -s - want.json; then
	ok "io: gzip on stdin"
else
	bad "io: gzip on stdin"
fi
if run kt-normalize - <t.json 2>/dev/null | cmp -s - want.json; then
	ok "io: - is stdin"
else
	bad "io: - is stdin"
fi

# Archives: every member that holds a trace is a separate input, so
# normalize (one trace at a time) wants --member.
mkdir -p a/x a/y
cp t.json a/x/rank0.json
sed 's/"k"/"k1"/' t.json >a/y/rank1.json
echo "not a trace" >a/readme.txt
tar -C a -cf two.tar x y readme.txt
tar -C a -czf two.tgz x y readme.txt
(cd a && zip -q -r ../two.zip x y readme.txt) 2>/dev/null
for f in two.tar two.tgz two.zip; do
	[ -f "$f" ] || { skip "io: $f: zip not installed"; continue; }
	run kt-normalize "$f" >out.json 2>err
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q 'several traces' err && [ ! -s out.json ]; then
		ok "io: $f with two traces refused before writing"
	else
		bad "io: $f two traces: status $rc"
	fi
	if run kt-normalize -m 'y/*' "$f" 2>/dev/null | grep -q '"k1"'; then
		ok "io: $f --member picks y/rank1.json"
	else
		bad "io: $f --member"
	fi
	# The member's name gives rank 0, which the output keeps as its one
	# added line, "ktRank": 0 (kt(7)); the rest is t.json's output.
	if run kt-normalize -m 'x/rank0.json' "$f" 2>/dev/null |
	    grep -v '^  "ktRank": 0,$' | cmp -s - want.json; then
		ok "io: $f member read exactly"
	else
		bad "io: $f member differs"
	fi
	run kt-normalize -m 'nothing*' "$f" >/dev/null 2>err
	if [ $? -eq 2 ] && grep -q 'no archive member matches' err; then
		ok "io: $f --member matching nothing"
	else
		bad "io: $f --member matching nothing"
	fi
done

# --member matching nothing on a plain file (and on a gzip file, and on
# standard input) is an error for every filter that reads a trace with
# -m: status 2, one line naming the input, nothing on standard output.
gzip -c t.json >t1.json.gz
for f in normalize compact-lanes gaps select rank-tag bucket decompose \
    overlap ops correlate memory summary; do
	for in in t.json t1.json.gz -; do
		if [ "$in" = - ]; then
			run kt-$f -m 'nothing*' <t.json >mout 2>merr
		else
			run kt-$f -m 'nothing*' "$in" >mout 2>merr
		fi
		rc=$?
		if [ $rc -eq 2 ] && [ "$(wc -l <merr)" -eq 1 ] && [ ! -s mout ] &&
		    grep -q "^kt-$f: .*no member matches --member\$" merr; then
			ok "io: kt-$f -m matching nothing in $in: status 2, one line"
		else
			bad "io: kt-$f -m matching nothing in $in: status $rc: $(head -2 merr)"
		fi
	done
done

# Atomic -o: the file appears whole, no temporary is left, and a failed
# run leaves an existing file as it was.
run kt-normalize -o out.json t.json 2>/dev/null
check "io: -o writes the trace" cmp out.json want.json
echo keep >kept.json
printf '{"traceEvents": [{"a": tru}]}' >bad.json
run kt-normalize -o kept.json bad.json 2>/dev/null
if [ "$(cat kept.json)" = keep ] && ! ls -a | grep -q '\.kt-'; then
	ok "io: a failed run leaves -o FILE alone and no temporary file"
else
	bad "io: failed run touched kept.json or left a temporary file"
fi
run kt-normalize -o out.json.gz t.json 2>/dev/null
if gzip -dc out.json.gz | cmp -s - want.json; then
	ok "io: .gz output is gzip"
else
	bad "io: .gz output"
fi
run kt-normalize -l 9 -o out9.json.gz t.json 2>/dev/null
check "io: --level 9" sh -c 'gzip -dc out9.json.gz | cmp -s - want.json'
cp t.json same.json
run kt-normalize -o same.json same.json 2>err
if [ $? -eq 2 ] && cmp -s same.json t.json && grep -q 'overwrite an input' err
then
	ok "io: refuses to overwrite its input"
else
	bad "io: overwrote its input"
fi
ln -f same.json link.json
run kt-normalize -o link.json same.json 2>/dev/null
if [ $? -eq 2 ] && cmp -s same.json t.json; then
	ok "io: refuses an output that is a link to the input"
else
	bad "io: wrote through a link to the input"
fi
if [ -w /dev/full ]; then
	run kt-normalize t.json >/dev/full 2>err
	if [ $? -eq 2 ] && grep -q 'No space left' err; then
		ok "io: a full disk is an error"
	else
		bad "io: /dev/full not reported"
	fi
	run kt-normalize -o /dev/full t.json 2>err
	if [ $? -eq 2 ] && grep -q 'No space left' err; then
		ok "io: -o /dev/full is an error"
	else
		bad "io: -o /dev/full not reported"
	fi
else
	skip "io: no /dev/full"
fi

# A gzip stream cut in half: a clear error, never a silent success.
head -c 60 gz.data >cut.gz
run kt-normalize cut.gz >out.json 2>err
if [ $? -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] && grep -qi 'truncated\|gzip' err
then
	ok "io: truncated gzip is an error: $(cat err)"
else
	bad "io: truncated gzip"
fi
# gzip read with ISA-L (where kt is built with it) and with libarchive
# give the same events as the plain text that gzip -dc gives: one member
# at levels 1 and 9, several members one after another, zero padding
# after the last; cut inside the deflate data, or garbage after it, is
# an error of one line and no output passed off as complete.
"$KT_BUILD/ktgen" --steps 3 --layers 2 -o gzsrc.json
run kt-normalize --keep-order gzsrc.json >gzwant.json 2>/dev/null
gzip -1 -c gzsrc.json >g1.gz
gzip -9 -c gzsrc.json >g9.gz
half=$(($(wc -c <gzsrc.json) / 2))
head -c "$half" gzsrc.json | gzip -c >gm.gz
tail -c +"$((half + 1))" gzsrc.json | gzip -c >>gm.gz
{ cat g1.gz; head -c 700 /dev/zero; } >gz0.gz
n=0
for f in g1.gz g9.gz gm.gz gz0.gz; do
	run kt-normalize --keep-order "$f" >gzgot.json 2>gzerr
	if [ $? -ne 0 ] || [ -s gzerr ] || ! cmp -s gzgot.json gzwant.json; then
		bad "io: gzip $f differs from its plain text"
		n=$((n + 1))
	fi
done
[ $n -eq 0 ] && ok "io: gzip at levels 1 and 9, in two members, zero-padded: the events of the plain text"
size=$(wc -c <g1.gz)
head -c $((size / 2)) g1.gz >gzcut.gz
{ cat g1.gz; echo garbage; } >gzjunk.gz
for f in gzcut.gz gzjunk.gz; do
	run kt-normalize "$f" >gzgot.json 2>gzerr
	st=$?
	if [ $st -eq 2 ] && [ ! -s gzgot.json ] && [ "$(wc -l <gzerr)" -eq 1 ] &&
	    grep -q "^kt-normalize: $f: .*\(truncated\|garbage\)" gzerr; then
		ok "io: $f: $(cat gzerr)"
	else
		bad "io: $f: status $st, $(cat gzerr)"
	fi
done
run kt-normalize /nonexistent.json >/dev/null 2>err
if [ $? -eq 2 ] && grep -q 'No such file' err; then
	ok "io: missing file"
else
	bad "io: missing file"
fi
run kt-normalize . >/dev/null 2>err
if [ $? -eq 2 ] && grep -q 'directory' err; then
	ok "io: a directory is refused"
else
	bad "io: directory"
fi

# The front command finds its filters beside itself.
if "$KT_BIN/kt" normalize t.json 2>/dev/null | cmp -s - want.json; then
	ok "io: kt normalize runs kt-normalize"
else
	bad "io: kt front command"
fi
"$KT_BIN/kt" help | grep -q '^  normalize' && ok "io: kt help lists normalize" ||
    bad "io: kt help"
"$KT_BIN/kt" nosuch >/dev/null 2>&1
[ $? -eq 2 ] && ok "io: kt with an unknown filter exits 2" ||
    bad "io: kt unknown filter"

# Filters that spool stdin to read it twice still call it <stdin>.
printf '{"traceEvents": [{"ph": "X", "ts": 1,, }]}' >bad-input.json
for f in "kt-layer-track -a x -n 1" "kt-compact-lanes" "kt-views -o views-out" \
    "kt-normalize" "kt-bucket" "kt-rank-tag --rank 0"; do
	# shellcheck disable=SC2086
	run $f - <bad-input.json >/dev/null 2>err
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "^${f%% *}: <stdin>:1:38: " err; then
		ok "io: ${f%% *} names stdin <stdin>"
	else
		bad "io: ${f%% *} on bad stdin: status $rc, $(head -1 err)"
	fi
done

# Sorting (kt-normalize) and slicing an unsorted input (kt-slice-window)
# hold a plain file's events as places in it and read their bytes again
# as they write them: an input that shrinks meanwhile is an error (exit 2,
# one line, no output file), never a signal or a short trace passed off
# as whole.  Each run is retried sooner when it ended before the cut.
"$KT_BUILD/ktgen" -s 64M -o big.json
for f in "kt-normalize" "kt-slice-window --from 0s"; do
	cut=
	for delay in 0.3 0.1 0.02; do
		cp big.json bt.json
		rm -f btc.json
		# shellcheck disable=SC2086
		run $f bt.json -o btc.json 2>terr &
		pid=$!
		sleep "$delay"
		truncate -s 1000 bt.json
		wait "$pid"
		rc=$?
		if [ "$rc" -gt 128 ]; then
			bad "io: $f, input cut while read: killed by signal $((rc - 128))"
			cut=signal
			break
		elif [ "$rc" -eq 0 ]; then
			continue	# done before the cut: try sooner
		fi
		if [ "$rc" -eq 2 ] && [ "$(wc -l <terr)" -eq 1 ] &&
		    grep -q 'bt.json' terr && [ ! -e btc.json ]; then
			ok "io: $f, input cut while read: exit 2, one line: $(cat terr)"
		else
			bad "io: $f, input cut while read: exit $rc, $(head -3 terr)"
		fi
		cut=yes
		break
	done
	[ -n "$cut" ] || skip "io: $f, input cut: every run ended before the cut"
done
rm -f big.json bt.json btc.json

# A pipe on standard output or input is widened to 1 MB (kt(7) Output:
# F_SETPIPE_SZ), and what goes through it is the same.  Python makes the
# pipes and asks each its size (fcntl F_GETPIPE_SZ) once the filter has
# written its first bytes, or has started.
if command -v python3 >/dev/null 2>&1 &&
    python3 -c 'import fcntl; fcntl.F_GETPIPE_SZ' 2>/dev/null &&
    [ "$(uname -s)" = Linux ]; then
	got=$(python3 - "$(command -v kt-normalize)" <<'P'
import fcntl, os, subprocess, sys, time
kt = sys.argv[1]
# Standard output: the filter writes into our pipe.
p = subprocess.Popen([kt, "t.json"], stdout=subprocess.PIPE)
first = p.stdout.read(1)
out_size = fcntl.fcntl(p.stdout.fileno(), fcntl.F_GETPIPE_SZ)
rest = first + p.stdout.read()
p.wait()
# Standard input: the filter reads our pipe; its size is asked before
# the filter starts, then until it changes (at most 10 s), then the
# trace is written and the pipe closed.
r, w = os.pipe()
before = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ)
q = subprocess.Popen([kt, "-"], stdin=r, stdout=subprocess.PIPE)
os.close(r)
in_size = before
for _ in range(1000):
    in_size = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ)
    if in_size != before:
        break
    time.sleep(0.01)
os.write(w, open("t.json", "rb").read())
os.close(w)
q.stdout.read()
q.wait()
# Whether this system lets a process have a 1 MB pipe at all.
a, b = os.pipe()
try:
    can = fcntl.fcntl(a, fcntl.F_SETPIPE_SZ, 1 << 20) >= 1 << 20
except OSError:
    can = False
print(out_size, before, in_size, p.returncode, q.returncode,
      rest == open("want.json", "rb").read(), can)
P
)
	case $got in
	"1048576 65536 1048576 0 0 True True")
		ok "io: a pipe on stdout and on stdin is widened to 1 MB, the output the same" ;;
	*" 0 0 True False")
		skip "io: pipes: this system refuses 1 MB pipes ($got)" ;;
	*)
		bad "io: pipes: sizes, statuses, same output: $got" ;;
	esac
else
	skip "io: pipes: needs Linux and Python's fcntl.F_GETPIPE_SZ"
fi
