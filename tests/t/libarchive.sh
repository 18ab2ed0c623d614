# tests/t/libarchive.sh: libarchive is loaded by the inputs that need it
# (lib/core/arch.c, kt(7) Memory), not linked: no filter names it among
# its needed libraries (readelf -d); xz, bzip2, zstd and a tar read
# through it give what the plain file gives (jq judges that one in
# io.sh); and where it cannot be loaded (KT_LIBARCHIVE naming a file that
# is not there, or a library that is not libarchive), such an input is
# refused with status 2, one line and no output, while plain JSON and
# gzip (ISA-L, where kt is built with it) are still read.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1

if command -v readelf >/dev/null 2>&1; then
	linked=
	for f in "$KT_BIN"/kt-* "$KT_BIN"/kt; do
		readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*libarchive' &&
		    linked="$linked $(basename "$f")"
	done
	if [ -z "$linked" ]; then
		ok "libarchive: no filter links it"
	else
		bad "libarchive: linked by$linked"
	fi
else
	skip "libarchive: no readelf"
fi

"$KT_BUILD/ktgen" --size 1M >t.json 2>/dev/null
run "$KT_BIN/kt-normalize" --keep-order t.json >want.json 2>/dev/null
xz -c t.json >t.xz
bzip2 -c t.json >t.bz2
gzip -c t.json >t.gz
tar -cf t.tar t.json
set -- t.xz t.bz2 t.tar
if command -v zstd >/dev/null 2>&1; then
	zstd -q -c t.json >t.zst
	set -- "$@" t.zst
fi
for f in "$@"; do
	run "$KT_BIN/kt-normalize" --keep-order "$f" >got.json 2>err
	rc=$?
	if [ "$rc" -eq 0 ] && cmp -s want.json got.json; then
		ok "libarchive: $f read (loaded) as the plain file"
	else
		bad "libarchive: $f: status $rc, $(head -1 err)"
	fi
done

# Not loadable: refused, one line, nothing written.
lib=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 / { print $NF; exit }')
for how in /nonexistent/libarchive.so.13 ${lib:+"$lib"}; do
	for f in "$@"; do
		KT_LIBARCHIVE=$how run "$KT_BIN/kt-normalize" --keep-order \
		    -o out.json "$f" >/dev/null 2>err
		rc=$?
		if [ "$rc" -eq 2 ] && [ ! -e out.json ] && [ "$(wc -l <err)" -eq 1 ] &&
		    grep -q "^kt-normalize: $f: compressed or archived input needs libarchive" err; then
			ok "libarchive: KT_LIBARCHIVE=$how: $f refused (status 2, one line)"
		else
			bad "libarchive: KT_LIBARCHIVE=$how: $f: status $rc, $(head -1 err)"
		fi
		rm -f out.json
	done
done
for f in t.json t.gz; do
	KT_LIBARCHIVE=/nonexistent/libarchive.so.13 run "$KT_BIN/kt-normalize" \
	    --keep-order "$f" >got.json 2>err
	rc=$?
	if [ "$f" = t.gz ] && [ "$rc" -eq 2 ] && grep -q 'needs libarchive' err; then
		# A kt built without ISA-L reads gzip through libarchive.
		skip "libarchive: gzip without libarchive: this kt reads gzip through it"
	elif [ "$rc" -eq 0 ] && cmp -s want.json got.json; then
		ok "libarchive: $f read without libarchive"
	else
		bad "libarchive: $f without libarchive: status $rc, $(head -1 err)"
	fi
done
exit 0
