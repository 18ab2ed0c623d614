# tests/t/layers.sh: the library keeps its layers' promises, read from
# the object files (nm, objdump), not from the sources:
#   - the core (lib/core) and the model (lib/model) never print, exit or
#     call the err(3) family: no reference to exit, printf, stderr, ...;
#   - neither keeps writable state of its own (no .data or .bss object);
#   - the core uses nothing of the model or the front end (lib/cli), and
#     the model nothing of the front end.
. "$(dirname "$0")/../lib.sh"

B=$KT_BUILD/lib
for d in core model cli; do
	if ! ls "$B/$d"/*.o >/dev/null 2>&1; then
		bad "layers: no objects in $B/$d"
		exit 0
	fi
done
if ! command -v nm >/dev/null 2>&1 || ! command -v objdump >/dev/null 2>&1; then
	skip "layers: nm or objdump not installed"
	exit 0
fi

forbidden='^(exit|_exit|_Exit|abort|printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|fputc|putc|putchar|perror|err|errx|verr|verrx|warn|warnx|vwarn|vwarnx|stdout|stderr|__printf_chk|__fprintf_chk|__vfprintf_chk|__vprintf_chk|__dprintf_chk)$'

# Symbols each layer defines.
for d in core model cli; do
	nm -g --defined-only "$B/$d"/*.o 2>/dev/null |
	    awk 'NF == 3 { print $3 }' | sort -u >"$TMP/def.$d"
done

for d in core model; do
	for o in "$B/$d"/*.o; do
		f=$(basename "$o")
		nm -u "$o" | awk '{ print $NF }' | sort -u >"$TMP/undef"
		bad_calls=$(grep -E "$forbidden" "$TMP/undef" | tr '\n' ' ')
		if [ -z "$bad_calls" ]; then
			ok "layers: $d/$f prints and exits nowhere"
		else
			bad "layers: $d/$f references $bad_calls"
		fi
		# (the sanitizers' own descriptors, __unnamed_N and the like,
		# are the compiler's, not the library's)
		state=$(objdump -t "$o" | awk '$3 == "O" && ($4 == ".data" ||
		    $4 == ".bss" || $4 ~ /^\.(data|bss)\./) && $4 !~ /rel\.ro/ &&
		    $NF !~ /^(__unnamed_|___asan_gen_|__asan|__ubsan|__sancov|\.L)/ { print $NF }' |
		    tr '\n' ' ')
		if [ -z "$state" ]; then
			ok "layers: $d/$f keeps no writable state"
		else
			bad "layers: $d/$f keeps state: $state"
		fi
		above=
		case $d in
		core) above="model cli" ;;
		model) above="cli" ;;
		esac
		for u in $above; do
			up=$(comm -12 "$TMP/undef" "$TMP/def.$u" | tr '\n' ' ')
			if [ -z "$up" ]; then
				ok "layers: $d/$f uses nothing of $u"
			else
				bad "layers: $d/$f uses $u: $up"
			fi
		done
	done
done

# The check can fail: the front end does print and exit.
if nm -u "$B/cli"/*.o | awk '{ print $NF }' | grep -Eq "$forbidden"; then
	ok "layers: the check sees the front end's printing"
else
	bad "layers: the check found no printing even in lib/cli"
fi
exit 0
