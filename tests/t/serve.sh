# tests/t/serve.sh: kt-serve, over the loopback address only, every
# server bounded by timeout(1).  The client is Python's http.client and
# raw sockets (the request's exact Host and method); the judges are
# independent of kt: sha256sum of the file or of gzip -dc, tar's member.
#  - the page (HTML with the PING/PONG code and the token's trace path)
#    and the trace, whose bytes are the decompressed input's: plain,
#    gzip, piped on stdin, a tar member; HEAD; Content-Length always;
#  - refused: other paths, a wrong or missing token (404), another Host
#    (403, DNS rebinding), no Host, other methods (405), a header over
#    8 KiB (431), a malformed request (400); CORS on the trace is
#    exactly https://ui.perfetto.dev, also for the OPTIONS preflight;
#  - a busy --port (exit 2, the one-line message), a trace over
#    --max-size (exit 1, the advice), the size itself (served), usage
#    errors, TSV and non-JSON input (exit 2); --once exits 0 after the
#    whole trace and not after the page or a HEAD; SIGTERM exits 0;
#    nothing of the trace is written (no descriptor of a file, TMPDIR
#    left empty); -6 on ::1; the --port 9001 deep link;
#  - headless Chromium (chromium-headless-shell, when installed): a
#    stand-in for the UI on another loopback port answers PONG and
#    reports the SHA-256 of the buffer it was posted (crypto.subtle),
#    in a window (window.open) and in a frame; a ?ui= that is not a
#    loopback address is not used.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
ex=$(cd "$(dirname "$0")/../../examples" && pwd)
cd "$TMP" || exit 1
if ! command -v python3 >/dev/null 2>&1; then
	skip "serve: no python3"
	exit 0
fi

# The client: cl.py PORT METHOD PATH HOST BODY [FIELD: VALUE]...
# (HOST "-": none; ADDR in $CL_ADDR, default 127.0.0.1) prints
# "status N" and "h name: value" lines (names lowercased), the body to
# BODY; raw.py PORT FILE sends FILE's bytes and prints the status line.
cat >cl.py <<'EOF'
import http.client, os, sys
port, method, path, host, body = sys.argv[1:6]
c = http.client.HTTPConnection(os.environ.get('CL_ADDR', '127.0.0.1'), int(port), timeout=20)
c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
if host != '-':
    c.putheader('Host', host)
for f in sys.argv[6:]:
    k, v = f.split(': ', 1)
    c.putheader(k, v)
c.endheaders()
r = c.getresponse()
print('status', r.status)
for k, v in r.getheaders():
    print('h %s: %s' % (k.lower(), v))
with open(body, 'wb') as f:
    f.write(r.read())
EOF
cat >raw.py <<'EOF'
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=20)
s.sendall(open(sys.argv[2], 'rb').read())
d = b''
while b'\r\n' not in d:
    k = s.recv(4096)
    if not k:
        break
    d += k
print(d.split(b'\r\n')[0].decode())
EOF
# busy.py PORTFILE: hold a listening socket on 127.0.0.1 (60 s at most).
cat >busy.py <<'EOF'
import socket, sys, time
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(1)
open(sys.argv[1], 'w').write('%d\n' % s.getsockname()[1])
time.sleep(60)
EOF

gzip -dc "$ex/trace.json.gz" >trace.json
cp "$ex/trace.json.gz" trace.json.gz
want=$(sha256sum <trace.json | cut -d' ' -f1)
wantgz=$(gzip -dc trace.json.gz | sha256sum | cut -d' ' -f1)
size=$(wc -c <trace.json | tr -d ' ')

# start NAME ARGS...: kt-serve ARGS in the background (60 s at most),
# stdin from $STDIN (default /dev/null: a job in the background
# cannot have the shell's), stdout in NAME.url, stderr in NAME.err, its
# status in NAME.rc when it
# ends; sets PID (the timeout's), SUB (the shell that waits for it),
# URL, PORT, TOKEN.  1 when no URL came
# within 10 s.
start() {
	_n=$1
	shift
	rm -f "$_n.url" "$_n.err" "$_n.rc"
	(timeout 60 $VALGRIND kt-serve "$@" <"${STDIN:-/dev/null}" \
	    >"$_n.url" 2>"$_n.err" &
	    echo $! >"$_n.pid"
	    wait $!
	    echo $? >"$_n.rc") &
	SUB=$!
	_i=0
	while [ ! -s "$_n.pid" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	PID=$(cat "$_n.pid")
	_i=0
	while [ ! -s "$_n.url" ] && [ ! -f "$_n.rc" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	URL=$(head -1 "$_n.url" 2>/dev/null)
	PORT=$(echo "$URL" | sed -n 's|^http://[^/]*:\([0-9]*\)/.*|\1|p')
	TOKEN=$(echo "$URL" | sed -n 's|^http://[^/]*/\([0-9a-f]*\)/$|\1|p')
	[ -n "$PORT" ] && [ -n "$TOKEN" ]
}

# finish NAME: wait (10 s at most) for kt-serve to end; its status.
finish() {
	_i=0
	while [ ! -f "$1.rc" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	wait "$SUB" 2>/dev/null
	cat "$1.rc" 2>/dev/null || echo none
}

# stop NAME: SIGTERM to kt-serve (through timeout); its status.
stop() {
	kill -TERM "$PID" 2>/dev/null
	finish "$1"
}

# get METHOD PATH [HOST [FIELD...]]: a request to $PORT; the response's
# fields in r.txt, the body in r.body.  HOST defaults to 127.0.0.1:PORT.
get() {
	_m=$1 _p=$2
	shift 2
	_h=127.0.0.1:$PORT
	if [ $# -gt 0 ]; then
		_h=$1
		shift
	fi
	rm -f r.txt r.body
	python3 cl.py "$PORT" "$_m" "$_p" "$_h" r.body "$@" >r.txt 2>r.pyerr
}

status() { sed -n 's/^status //p' r.txt; }
field() { sed -n "s/^h $1: //p" r.txt; }
bodysha() { sha256sum <r.body | cut -d' ' -f1; }

# ------------------------------------------------------------------
# A plain trace: the page, the trace, HEAD, CORS.
if start plain trace.json; then
	get GET "/$TOKEN/"
	if [ "$(status)" = 200 ] &&
	    [ "$(field content-type)" = "text/html; charset=utf-8" ] &&
	    [ "$(field content-length)" = "$(wc -c <r.body | tr -d ' ')" ] &&
	    grep -q "postMessage(\"PING\"" r.body &&
	    grep -q '"PONG"' r.body &&
	    grep -q "perfetto: {buffer: buf" r.body &&
	    grep -q "window.open(ui)" r.body &&
	    grep -q '"https://ui.perfetto.dev/"' r.body &&
	    grep -qF "\"/$TOKEN/trace.json\"" r.body &&
	    [ -z "$(field access-control-allow-origin)" ]; then
		ok "serve: the page: HTML with PING/PONG and the token's trace path"
	else
		bad "serve: the page: $(head -c 300 r.txt | tr '\n' ' ')"
	fi
	get GET "/$TOKEN/trace.json"
	if [ "$(status)" = 200 ] && [ "$(bodysha)" = "$want" ] &&
	    [ "$(field content-type)" = application/json ] &&
	    [ "$(field content-length)" = "$size" ]; then
		ok "serve: the trace's bytes (sha256 of the file)"
	else
		bad "serve: the trace: $(tr '\n' ' ' <r.txt)"
	fi
	if [ "$(field access-control-allow-origin)" = https://ui.perfetto.dev ] &&
	    [ "$(grep -c '^h access-control-allow-origin:' r.txt)" = 1 ]; then
		ok "serve: CORS on the trace: exactly https://ui.perfetto.dev"
	else
		bad "serve: CORS: '$(field access-control-allow-origin)'"
	fi
	get HEAD "/$TOKEN/trace.json"
	if [ "$(status)" = 200 ] && [ ! -s r.body ] &&
	    [ "$(field content-length)" = "$size" ]; then
		ok "serve: HEAD: the length, no body"
	else
		bad "serve: HEAD: $(tr '\n' ' ' <r.txt)"
	fi
	# Reached as localhost too; the page takes a query (?ui=).
	get GET "/$TOKEN/?ui=http://127.0.0.1:1/" "localhost:$PORT"
	if [ "$(status)" = 200 ] && grep -q PONG r.body; then
		ok "serve: Host localhost:PORT, the page with a query"
	else
		bad "serve: localhost: $(status)"
	fi
	# The preflight: the UI's origin only, the private network asked.
	get OPTIONS "/$TOKEN/trace.json" "127.0.0.1:$PORT" \
	    "Origin: https://ui.perfetto.dev" \
	    "Access-Control-Request-Method: GET" \
	    "Access-Control-Request-Private-Network: true"
	if [ "$(status)" = 200 ] && [ ! -s r.body ] &&
	    [ "$(field content-length)" = 0 ] &&
	    [ "$(field access-control-allow-origin)" = https://ui.perfetto.dev ] &&
	    [ "$(field access-control-allow-private-network)" = true ] &&
	    field access-control-allow-methods | grep -q GET; then
		ok "serve: OPTIONS preflight on the trace"
	else
		bad "serve: OPTIONS: $(tr '\n' ' ' <r.txt)"
	fi

	# Refusals, each with its status.
	# The token with its first digit changed.
	case $TOKEN in
	0*) wrong=1${TOKEN#?} ;;
	*) wrong=0${TOKEN#?} ;;
	esac
	fails=
	for t in "GET / 127.0.0.1:$PORT 404" \
	    "GET /trace.json 127.0.0.1:$PORT 404" \
	    "GET /$TOKEN 127.0.0.1:$PORT 404" \
	    "GET /$TOKEN/other.json 127.0.0.1:$PORT 404" \
	    "GET /$TOKEN/trace.json?x=1 127.0.0.1:$PORT 404" \
	    "GET /$TOKEN/../$TOKEN/trace.json 127.0.0.1:$PORT 404" \
	    "GET /$wrong/ 127.0.0.1:$PORT 404" \
	    "GET /$wrong/trace.json 127.0.0.1:$PORT 404" \
	    "GET //trace.json 127.0.0.1:$PORT 404" \
	    "GET http://127.0.0.1:$PORT/$TOKEN/trace.json 127.0.0.1:$PORT 404" \
	    "GET /$TOKEN/trace.json evil.example:$PORT 403" \
	    "GET /$TOKEN/ evil.example:$PORT 403" \
	    "GET /$TOKEN/trace.json 127.0.0.1 403" \
	    "GET /$TOKEN/trace.json 127.0.0.1:$((PORT + 1)) 403" \
	    "GET /$TOKEN/trace.json - 403" \
	    "GET /nothing evil.example:$PORT 403" \
	    "POST /$TOKEN/trace.json 127.0.0.1:$PORT 405" \
	    "PUT /$TOKEN/ 127.0.0.1:$PORT 405" \
	    "DELETE /$TOKEN/trace.json 127.0.0.1:$PORT 405" \
	    "OPTIONS /$TOKEN/ 127.0.0.1:$PORT 405" \
	    "POST /elsewhere 127.0.0.1:$PORT 404"; do
		set -- $t
		get "$1" "$2" "$3"
		got=$(status)
		if [ "$got" != "$4" ] || [ -n "$(field access-control-allow-origin)" ] ||
		    [ -z "$(field content-length)" ] || cmp -s r.body trace.json; then
			fails="$fails [$t: $got]"
		fi
	done
	if [ -z "$fails" ]; then
		ok "serve: wrong paths, tokens, Hosts and methods refused"
	else
		bad "serve: refusals:$fails"
	fi
	grep -q "refused a request with Host 'evil.example:$PORT'" plain.err &&
	    ok "serve: a refused Host is reported" ||
	    bad "serve: no report of the refused Host"
	# A header over 8 KiB, a malformed request line, HTTP/2.0.
	{ printf 'GET /%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nX-Pad: ' "$TOKEN" "$PORT"
	  head -c 9000 /dev/zero | tr '\0' a
	  printf '\r\n\r\n'; } >big.req
	printf 'GET\r\n\r\n' >bad.req
	printf 'GET /%s/ HTTP/2.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$TOKEN" "$PORT" >v2.req
	printf 'GET /%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nHost: 127.0.0.1:%s\r\n\r\n' \
	    "$TOKEN" "$PORT" "$PORT" >two.req
	a=$(python3 raw.py "$PORT" big.req 2>&1)
	b=$(python3 raw.py "$PORT" bad.req 2>&1)
	c=$(python3 raw.py "$PORT" v2.req 2>&1)
	d=$(python3 raw.py "$PORT" two.req 2>&1)
	case "$a|$b|$c|$d" in
	"HTTP/1.1 431 "*"|HTTP/1.1 400 "*"|HTTP/1.1 505 "*"|HTTP/1.1 400 "*)
		ok "serve: a header over 8 KiB 431, malformed 400, HTTP/2.0 505, two Hosts 400" ;;
	*)
		bad "serve: bad requests: $a | $b | $c | $d" ;;
	esac
	# An idle connection holds up nobody: the next request is served.
	python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
time.sleep(4)' "$PORT" &
	idle=$!
	sleep 0.3
	get GET "/$TOKEN/trace.json"
	if [ "$(status)" = 200 ] && [ "$(bodysha)" = "$want" ]; then
		ok "serve: served beside an idle connection"
	else
		bad "serve: an idle connection blocked the server"
	fi
	wait "$idle"
	rc=$(stop plain)
	if [ "$rc" = 0 ] && grep -q '^kt-serve: stopped$' plain.err; then
		ok "serve: SIGTERM: exit 0"
	else
		bad "serve: SIGTERM: status $rc: $(tail -2 plain.err)"
	fi
else
	bad "serve: no URL: $(cat plain.err)"
	stop plain >/dev/null
fi

# ------------------------------------------------------------------
# Gzip, decompressed; --once waits for the trace itself.
if start gz --once trace.json.gz; then
	get GET "/$TOKEN/"
	get HEAD "/$TOKEN/trace.json"
	sleep 0.5
	if [ ! -f gz.rc ]; then
		ok "serve: --once: still serving after the page and a HEAD"
	else
		bad "serve: --once ended early: $(cat gz.rc)"
	fi
	get GET "/$TOKEN/trace.json"
	rc=$(finish gz)
	if [ "$(status)" = 200 ] && [ "$(bodysha)" = "$wantgz" ] &&
	    [ "$(field content-length)" = "$size" ]; then
		ok "serve: a gzip trace served decompressed (sha256 of gzip -dc)"
	else
		bad "serve: gzip: $(tr '\n' ' ' <r.txt)"
	fi
	if [ "$rc" = 0 ]; then
		ok "serve: --once: exit 0 after the transfer"
	else
		bad "serve: --once: status $rc"
	fi
else
	bad "serve: gzip: no URL: $(cat gz.err)"
	stop gz >/dev/null
fi

# ------------------------------------------------------------------
# Piped on stdin, nothing written: TMPDIR stays empty, and no open file
# of the server is a regular file (a copy, deleted or not).
mkdir -p spool
rm -f in.fifo
mkfifo in.fifo
cat trace.json.gz >in.fifo &
cpid=$!
otmp=${TMPDIR-}
TMPDIR=$TMP/spool
export TMPDIR
STDIN=in.fifo
start stdin --once
started=$?
unset STDIN
TMPDIR=$otmp
[ -n "$TMPDIR" ] || unset TMPDIR
wait "$cpid"
if [ "$started" = 0 ]; then
	files= found=
	if [ -d /proc/self/fd ] && command -v ps >/dev/null 2>&1; then
		for p in $(ps -e -o pid= -o comm= | awk '$2 == "kt-serve" { print $1 }'); do
			# Only the server of this test: its stdout is stdin.url.
			[ "$(readlink "/proc/$p/fd/1" 2>/dev/null)" = "$TMP/stdin.url" ] || continue
			found=$p
			for fd in /proc/$p/fd/*; do
				l=$(readlink "$fd" 2>/dev/null)
				case $l in
				/dev/* | pipe:* | socket:* | anon_inode:* | "$TMP/in.fifo" | "$TMP/stdin.url" | "$TMP/stdin.err") ;;
				*) files="$files $l" ;;
				esac
			done
		done
	fi
	get GET "/$TOKEN/stdin.json"
	rc=$(finish stdin)
	if [ "$(status)" = 200 ] && [ "$(bodysha)" = "$wantgz" ] && [ "$rc" = 0 ]; then
		ok "serve: piped gzip on stdin, served decompressed, --once"
	else
		bad "serve: stdin: status $rc, $(tr '\n' ' ' <r.txt)"
	fi
	if [ -z "$found" ] && [ -z "$VALGRIND" ] && [ -d /proc/self/fd ] &&
	    command -v ps >/dev/null 2>&1; then
		bad "serve: nothing written: the server's process not found"
	elif [ -z "$files" ] && [ -z "$(ls -A spool)" ]; then
		ok "serve: nothing written: no file open, TMPDIR empty"
	else
		bad "serve: files:$files $(ls -A spool)"
	fi
else
	bad "serve: stdin: no URL: $(cat stdin.err)"
	stop stdin >/dev/null
fi

# ------------------------------------------------------------------
# A tar member: its own bytes, named by the member.
mkdir -p a/dir
cp trace.json a/dir/rank0.json
tar -C a -cf one.tar dir
if start tar --once one.tar; then
	get GET "/$TOKEN/rank0.json"
	rc=$(finish tar)
	if [ "$(status)" = 200 ] && [ "$(bodysha)" = "$want" ] && [ "$rc" = 0 ]; then
		ok "serve: a tar member, by its name"
	else
		bad "serve: tar: status $rc, $(tr '\n' ' ' <r.txt)"
	fi
else
	bad "serve: tar: no URL: $(cat tar.err)"
	stop tar >/dev/null
fi

# ------------------------------------------------------------------
# A busy port: exit 2, one line.
rm -f busy.port
python3 busy.py busy.port &
bpid=$!
i=0
while [ ! -s busy.port ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
bport=$(cat busy.port 2>/dev/null)
timeout 20 $VALGRIND kt-serve --port "$bport" trace.json >busy.out 2>busy.err
rc=$?
kill "$bpid" 2>/dev/null
wait "$bpid" 2>/dev/null
if [ "$rc" = 2 ] && [ ! -s busy.out ] &&
    [ "$(cat busy.err)" = "kt-serve: 127.0.0.1:$bport: Address already in use" ]; then
	ok "serve: a busy --port: exit 2, the one-line message"
else
	bad "serve: busy port $bport: status $rc: $(cat busy.err)"
fi

# ------------------------------------------------------------------
# --max-size: over it exit 1 with the advice; the size itself is served.
timeout 20 $VALGRIND kt-serve --max-size 1K trace.json.gz >big.out 2>big.err
rc=$?
if [ "$rc" = 1 ] && [ ! -s big.out ] && [ "$(wc -l <big.err | tr -d ' ')" = 1 ] &&
    grep -q '^kt-serve: trace.json.gz: more than 1024 bytes' big.err &&
    grep -q 'kt slice-window' big.err &&
    grep -q 'kt select --drop python_function' big.err; then
	ok "serve: over --max-size: exit 1 and the advice"
else
	bad "serve: --max-size: status $rc: $(cat big.err)"
fi
timeout 20 $VALGRIND kt-serve --max-size $((size - 1)) trace.json >big.out 2>big.err
rc1=$?
if start exact --once --max-size "$size" trace.json; then
	get GET "/$TOKEN/trace.json"
	rc=$(finish exact)
	got=$(bodysha)
else
	rc=none got=
	stop exact >/dev/null
fi
if [ "$rc1" = 1 ] && [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
	ok "serve: --max-size: one byte less refused, the size served"
else
	bad "serve: --max-size edge: $rc1 $rc"
fi

# ------------------------------------------------------------------
# Usage and input errors: exit 2, nothing on stdout.
printf 'id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\tjson\n' >t.tsv
echo 'hello' >t.txt
: >empty.json
fails=
for a in "--port 70000 trace.json" "--port x trace.json" "trace.json trace.json" \
    "--max-size 0 trace.json" "--max-size 1Q trace.json" "-o x trace.json" \
    "--bogus trace.json" "t.tsv" "t.txt" "empty.json" "nonexistent.json"; do
	timeout 20 $VALGRIND kt-serve $a >u.out 2>u.err
	rc=$?
	if [ "$rc" != 2 ] || [ -s u.out ] || [ ! -s u.err ]; then
		fails="$fails [$a: $rc]"
	fi
done
timeout 20 $VALGRIND kt-serve t.tsv >/dev/null 2>u.err
tsv=$(cat u.err)
if [ -z "$fails" ] && [ "$tsv" = "kt-serve: t.tsv: the TSV event form: the Perfetto UI reads JSON (kt normalize makes it)" ]; then
	ok "serve: usage and input errors: exit 2"
else
	bad "serve: usage errors:$fails $tsv"
fi

# ------------------------------------------------------------------
# -6: ::1, its own Host.
if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	if start v6 -6 trace.json && case $URL in "http://[::1]:"*) true ;; *) false ;; esac; then
		CL_ADDR=::1
		export CL_ADDR
		get GET "/$TOKEN/trace.json" "[::1]:$PORT"
		a=$(status) sa=$(bodysha)
		get GET "/$TOKEN/trace.json" "127.0.0.1:$PORT"
		b=$(status)
		unset CL_ADDR
		if [ "$a" = 200 ] && [ "$sa" = "$want" ] && [ "$b" = 403 ]; then
			ok "serve: -6: on [::1], its Host only"
		else
			bad "serve: -6: $a $b"
		fi
	else
		bad "serve: -6: no URL: $URL $(cat v6.err)"
	fi
	rc=$(stop v6)
	[ "$rc" = 0 ] || bad "serve: -6: SIGTERM status $rc"
else
	skip "serve: -6: no ::1 here"
fi

# ------------------------------------------------------------------
# --port 9001: the UI's own fetch, by the deep link on stderr.
if start deep --port 9001 trace.json; then
	link=$(sed -n 's/^kt-serve: or open //p' deep.err)
	path=${link#https://ui.perfetto.dev/\#!/?url=http://127.0.0.1:9001}
	get GET "$path" "127.0.0.1:9001" "Origin: https://ui.perfetto.dev"
	if [ "$link" = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/$TOKEN/trace.json" ] &&
	    [ "$(status)" = 200 ] && [ "$(bodysha)" = "$want" ]; then
		ok "serve: --port 9001: the deep link, fetched"
	else
		bad "serve: deep link: '$link' $(status)"
	fi
	stop deep >/dev/null
elif grep -q 'Address already in use' deep.err; then
	skip "serve: --port 9001: the port is busy here"
else
	bad "serve: --port 9001: $(cat deep.err)"
	stop deep >/dev/null
fi

# ------------------------------------------------------------------
# Headless Chromium: the page speaks the UI's protocol to a stand-in.
chrome=$(command -v chromium-headless-shell 2>/dev/null)
if [ -z "$chrome" ]; then
	skip "serve: chromium popup: no chromium-headless-shell"
	skip "serve: chromium frame: no chromium-headless-shell"
	skip "serve: chromium ?ui= not loopback: no chromium-headless-shell"
	exit 0
fi
# standin.py PORTFILE REPORT: the stand-in UI on a free loopback port;
# it answers PING with PONG, digests the trace it is posted and
# reports what it got to /report, then the server ends (60 s at most).
cat >standin.py <<'EOF'
import http.server, socketserver, sys, threading, urllib.parse
page = b'''<!doctype html><html><head><meta charset="utf-8"><title>stand-in</title></head><body><script>
"use strict";
window.addEventListener("message", function (e) {
  if (e.data === "PING") { e.source.postMessage("PONG", "*"); return; }
  if (!e.data || !e.data.perfetto) return;
  var p = e.data.perfetto;
  crypto.subtle.digest("SHA-256", p.buffer).then(function (d) {
    var h = Array.from(new Uint8Array(d), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
    fetch("/report?sha=" + h + "&n=" + p.buffer.byteLength + "&title=" + encodeURIComponent(p.title) +
      "&origin=" + encodeURIComponent(e.origin) + "&opener=" + (window.opener !== null) +
      "&framed=" + (window.parent !== window));
  });
});
</script></body></html>'''
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == '/standin.html':
            body = page
        elif u.path == '/report':
            q = urllib.parse.parse_qs(u.query)
            with open(sys.argv[2] + '.tmp', 'w') as f:
                for k in sorted(q):
                    f.write('%s %s\n' % (k, q[k][0]))
            import os
            os.rename(sys.argv[2] + '.tmp', sys.argv[2])
            body = b'ok'
            threading.Thread(target=self.server.shutdown).start()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header('Content-Type', 'text/html' if body is page else 'text/plain')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = socketserver.TCPServer(('127.0.0.1', 0), H)
open(sys.argv[1], 'w').write('%d\n' % s.server_address[1])
t = threading.Timer(60, s.shutdown)
t.daemon = True
t.start()
s.serve_forever()
EOF

# browse NAME QUERY: kt-serve --once on the gzip trace, the stand-in,
# and Chromium on the page with QUERY (PORT2 is the stand-in's port);
# the stand-in's report in NAME.report.
browse() {
	rm -f "$1.port2" "$1.report"
	python3 standin.py "$1.port2" "$1.report" &
	spid=$!
	i=0
	while [ ! -s "$1.port2" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	PORT2=$(cat "$1.port2")
	if ! start "$1" --once --title "T <x> \"y\"" trace.json.gz; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		return 1
	fi
	q=$(echo "$2" | sed "s/PORT2/$PORT2/")
	timeout 60 "$chrome" --no-sandbox --disable-gpu --disable-popup-blocking \
	    --no-first-run --user-data-dir="$TMP/$1.profile" "$URL$q" \
	    >"$1.chrome" 2>&1 &
	cpid=$!
	# The stand-in ends once it has reported (or after 60 s).
	wait "$spid"
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	RC=$(finish "$1")
	[ -f "$1.report" ]
}

# judge NAME WHAT: the report says the whole trace came, by the UI's
# protocol, from the page's origin, and kt-serve ended by --once.
judge() {
	r=$1.report
	if [ "$(sed -n 's/^sha //p' "$r")" = "$wantgz" ] &&
	    [ "$(sed -n 's/^n //p' "$r")" = "$size" ] &&
	    [ "$(sed -n 's/^title //p' "$r")" = "T <x> \"y\"" ] &&
	    [ "$(sed -n 's/^origin //p' "$r")" = "http://127.0.0.1:$PORT" ] &&
	    grep -q "^$3" "$r" && [ "$RC" = 0 ]; then
		ok "serve: chromium $2: the stand-in UI got the trace intact"
	else
		bad "serve: chromium $2: $(tr '\n' ' ' <"$r") status $RC"
	fi
}

if browse pop "?ui=http://127.0.0.1:PORT2/standin.html"; then
	judge pop popup "opener true"
else
	bad "serve: chromium popup: no report; $(cat pop.err) $(tail -3 pop.chrome)"
fi
if browse frm "?ui=http://127.0.0.1:PORT2/standin.html&frame=1"; then
	judge frm frame "framed true"
else
	bad "serve: chromium frame: no report; $(cat frm.err) $(tail -3 frm.chrome)"
fi

# A ?ui= elsewhere than on the loopback address is not used.
if start notloop trace.json; then
	timeout 60 "$chrome" --no-sandbox --disable-gpu --dump-dom \
	    --user-data-dir="$TMP/notloop.profile" \
	    "$URL?ui=http://evil.example:$PORT/" >notloop.dom 2>notloop.chrome
	if grep -q 'must name a loopback address' notloop.dom; then
		ok "serve: chromium ?ui= not loopback: not used"
	else
		bad "serve: chromium ?ui= not loopback: $(head -c 300 notloop.dom)"
	fi
	stop notloop >/dev/null
else
	bad "serve: chromium ?ui= not loopback: no URL"
fi
exit 0
