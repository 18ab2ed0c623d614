# tests/t/gzthread.sh: gzip input inflated on the reader's decoder thread
# (lib/core/gz.c), on a trace larger than its window (1 MB ahead, in
# blocks of 256 kB), so that blocks are filled, handed over, dropped and
# reused many times.  The judge is
# gzip(1): kt on the .gz gives what kt gives on the text gzip -dc gives
# (a file, and standard input), and a .gz damaged far into the stream
# (its CRC, its end cut off, bytes after it) fails as gzip -t says it
# does, with one message and exit 2.  A slow pipe is read to its end.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
"$KT_BUILD/ktgen" --size 24M -o big.json
gzip -1 -c big.json >big.gz
gzip -dc big.gz >plain.json
run kt-normalize --keep-order plain.json >want.json 2>/dev/null
run kt-normalize --keep-order big.gz >got.json 2>err
rc=$?
run kt-normalize --keep-order <big.gz >got2.json 2>err2
rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ ! -s err ] && [ ! -s err2 ] &&
    [ "$(wc -c <want.json)" -gt 20000000 ] && cmp -s got.json want.json &&
    cmp -s got2.json want.json; then
	ok "gzthread: a 24 MB trace through the ring, file and stdin"
else
	bad "gzthread: file exit $rc, stdin exit $rc2: $(cat err err2)"
fi
# The six views of the .gz and of the text (the model's reader).
run kt-views -o v1 big.gz 2>/dev/null
run kt-views -o v2 plain.json 2>/dev/null
same=1
for f in 1_runtime_decomposition 2_lost_time 3_kernel_table 4_overlap_exposure 5_memory 6_op_table; do
	[ -s "v1/$f.tsv" ] && cmp -s "v1/$f.tsv" "v2/$f.tsv" || same=0
done
if [ $same = 1 ]; then ok "gzthread: kt views of the .gz = of the text"; else bad "gzthread: kt views of the .gz differ"; fi

n=$(wc -c <big.gz | tr -d ' ')
# The CRC-32 (the trailer's first 4 bytes) flipped; the last 100 bytes
# cut off; garbage after the member.
python3 -c '
import sys
d = bytearray(open("big.gz", "rb").read())
c = bytearray(d); c[-8] ^= 1; open("crc.gz", "wb").write(c)
open("cut.gz", "wb").write(d[:-100])
open("trail.gz", "wb").write(d + b"junk")
'
e=0 why=
for f in crc:'CRC' cut:'truncated' trail:'trailing garbage'; do
	name=${f%%:*} want=${f#*:}
	gzip -t "$name.gz" 2>/dev/null && { e=1; why="$why gzip -t passes $name.gz"; }
	run kt-normalize --keep-order -o out.json "$name.gz" 2>err
	rc=$?
	if [ $rc != 2 ] || [ "$(wc -l <err)" -ne 1 ] || ! grep -q "^kt-normalize: $name.gz: .*$want" err ||
	    [ -e out.json ]; then
		e=1 why="$why $name: exit $rc $(cat err)"
	fi
done
if [ $e = 0 ]; then ok "gzthread: damage far into the stream: the error gzip -t finds"; else bad "gzthread:$why"; fi

# A slow writer: the thread waits for input and passes it on.
{ head -c 300000 big.gz; sleep 1; tail -c +300001 big.gz; } |
    run kt-normalize --keep-order >slow.json 2>err
if [ $? = 0 ] && cmp -s slow.json want.json; then ok "gzthread: a slow pipe"; else bad "gzthread: a slow pipe: $(cat err)"; fi
