# tests/t/serve.sh: kt-serve, over loopback only, each run bounded by
# timeout(1).  The judges are independent of kt: Python's http.client
# fetches the page and the trace, sha256sum of the decompressed input
# (gzip -dc) says whether the bytes are intact; wrong paths, a wrong
# Host, a missing token, other methods and a busy port are refused; and,
# where Debian's chromium-headless-shell is installed, the page served
# hands the trace to a stand-in for the Perfetto UI (a page of ours that
# answers PING with PONG and posts back the SHA-256 of what it got, from
# crypto.subtle) intact.
. "$(dirname "$0")/../lib.sh"

LC_ALL=C
export LC_ALL
cd "$TMP" || exit 1
gen=$KT_BUILD/ktgen
if ! command -v python3 >/dev/null 2>&1; then
	skip "serve: no python3"
	exit 0
fi
"$gen" --steps 2 --layers 2 -o t.json || exit 1
gzip -c t.json >t.json.gz
want=$(sha256sum t.json | cut -c1-64)

# start OUT ARGS...: kt-serve ARGS in the background (killed after 90 s
# at most), its standard input $IN (else /dev/null); wait for its URL
# line in OUT.  Sets pid, url, port, token.
start() {
	_o=$1
	shift
	rm -f "$_o" "$_o.err"
	timeout 90 kt-serve "$@" <"${IN:-/dev/null}" >"$_o" 2>"$_o.err" &
	pid=$!
	_i=0
	while [ ! -s "$_o" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	url=$(head -1 "$_o")
	port=$(echo "$url" | sed -n 's#^http://127\.0\.0\.1:\([0-9]*\)/.*#\1#p')
	token=$(echo "$url" | sed -n 's#^http://[^/]*/\([0-9a-f]*\)/$#\1#p')
}

# get METHOD PATH [HOST]: "status sha256 content-type cors" of one
# request (Python's http.client; the body's SHA-256 of what came).
cat >get.py <<'EOF'
import sys, http.client, hashlib
method, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
host = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1:%d" % port
c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
c.request(method, path, headers={"Host": host})
r = c.getresponse()
body = r.read()
print(r.status, hashlib.sha256(body).hexdigest(), r.getheader("Content-Type", "-").split(";")[0],
      r.getheader("Access-Control-Allow-Origin", "-"), len(body), r.getheader("Content-Length", "-"))
EOF
get() {
	timeout 30 python3 get.py "$1" "$port" "$2" ${3:+"$3"} 2>/dev/null
}

# ------------------------------------------------------------------
# A plain file: the page, the trace intact, everything else refused.
start u1 t.json
if [ -z "$port" ] || [ -z "$token" ]; then
	bad "serve: no URL printed: $(cat u1 u1.err)"
	kill "$pid" 2>/dev/null
	exit 0
fi
ok "serve: prints http://127.0.0.1:PORT/TOKEN/ ($(echo "$token" | wc -c | tr -d ' ') chars of token)"
set -- $(get GET "/$token/")
[ "$1" = 200 ] && [ "$3" = text/html ] && ok "serve: the page (200, text/html)" || bad "serve: page: $*"
timeout 20 python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "$url" >page.html 2>/dev/null
grep -q "postMessage('PING'" page.html && grep -q "e.data !== 'PONG'" page.html &&
    grep -q 'FILE = "t.json"' page.html &&
    ok "serve: the page speaks PING/PONG and fetches t.json" || bad "serve: page content"
set -- $(get GET "/$token/t.json")
[ "$1" = 200 ] && [ "$2" = "$want" ] && [ "$3" = application/json ] &&
    [ "$4" = https://ui.perfetto.dev ] && [ "$5" = "$6" ] &&
    ok "serve: the trace intact (sha256), JSON, CORS for ui.perfetto.dev only" ||
    bad "serve: trace: $* (want sha256 $want)"
set -- $(get HEAD "/$token/t.json")
[ "$1" = 200 ] && [ "$6" = "$(wc -c <t.json | tr -d ' ')" ] && [ "$5" = 0 ] &&
    ok "serve: HEAD gives the length, no body" || bad "serve: HEAD: $*"
set -- $(get OPTIONS "/$token/t.json")
[ "$1" = 204 ] && [ "$4" = https://ui.perfetto.dev ] && ok "serve: OPTIONS preflight for the UI's origin" ||
    bad "serve: OPTIONS: $*"
# A token one hex digit off.
case $token in *0) near=${token%?}1 ;; *) near=${token%?}0 ;; esac
for p in / /t.json "/$token" "/$token/other.json" "/$near/t.json" /favicon.ico "/../$token/t.json"; do
	set -- $(get GET "$p")
	[ "$1" = 404 ] && ok "serve: $p is 404" || bad "serve: $p: $*"
done
for h in "evil.example:$port" "127.0.0.1" "127.0.0.1:1" "localhost.evil:$port" ""; do
	set -- $(get GET "/$token/t.json" "${h:-x}")
	[ "$1" = 403 ] && ok "serve: Host '${h:-x}' refused (403)" || bad "serve: Host $h: $*"
done
set -- $(get GET "/$token/t.json" "localhost:$port")
[ "$1" = 200 ] && [ "$2" = "$want" ] && ok "serve: Host localhost:PORT accepted" || bad "serve: localhost: $*"
set -- $(get POST "/$token/t.json")
[ "$1" = 405 ] && ok "serve: POST is 405" || bad "serve: POST: $*"
# A request without its end, then one too large: the server goes on.
timeout 20 python3 - "$port" <<'EOF' >big.txt 2>&1
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 9000 + b"\r\n\r\n")
print(s.recv(100).split(b"\r\n")[0].decode())
EOF
grep -q '^HTTP/1.1 431' big.txt && ok "serve: a header over 8 KiB is 431" || bad "serve: large header: $(cat big.txt)"
set -- $(get GET "/$token/t.json")
[ "$1" = 200 ] && ok "serve: still serving after bad requests" || bad "serve: after bad requests: $*"
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 0 ] && ok "serve: SIGINT stops it, exit 0" || bad "serve: SIGINT: exit $rc"

# gzip and piped input are served decompressed; --once exits after the
# first full transfer.
start u2 --once t.json.gz
set -- $(get GET "/$token/")
set -- $(get GET "/$token/t.json")
[ "$1" = 200 ] && [ "$2" = "$want" ] && ok "serve: gzip input served decompressed, as gzip -dc" ||
    bad "serve: gzip: $*"
_i=0
while kill -0 "$pid" 2>/dev/null && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
if kill -0 "$pid" 2>/dev/null; then
	bad "serve: --once still running after the transfer"
	kill "$pid"
else
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] && ok "serve: --once exits 0 after one transfer (the page does not count)" ||
	    bad "serve: --once: exit $rc"
fi
IN=t.json.gz start u3 --once -
set -- $(get GET "/$token/trace.json")
[ "$1" = 200 ] && [ "$2" = "$want" ] && ok "serve: piped gzip input, as trace.json" || bad "serve: stdin: $*"
wait "$pid"

# Refusals: too large (exit 1, with advice), a busy port (exit 2), not
# JSON, usage.
kt-serve --max-size 1k t.json >/dev/null 2>big.err
rc=$?
[ "$rc" = 1 ] && grep -q 'kt slice-window' big.err && grep -q 'kt select --drop python_function' big.err &&
    [ "$(wc -l <big.err)" = 1 ] && ok "serve: a trace over --max-size refused with advice (exit 1)" ||
    bad "serve: --max-size: exit $rc: $(cat big.err)"
timeout 30 python3 - <<'EOF' >busy.txt 2>&1 &
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
time.sleep(15)
EOF
bpid=$!
_i=0
while [ ! -s busy.txt ] && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
bport=$(head -1 busy.txt)
timeout 10 kt-serve --port "$bport" t.json >/dev/null 2>busy.err
rc=$?
[ "$rc" = 2 ] && grep -q "^kt-serve: 127.0.0.1:$bport: Address already in use" busy.err &&
    ok "serve: a busy --port refused (exit 2, one line)" || bad "serve: busy port: exit $rc: $(cat busy.err)"
kill "$bpid" 2>/dev/null
wait "$bpid" 2>/dev/null
kt-normalize --tsv t.json >t.tsv 2>/dev/null
timeout 10 kt-serve t.tsv >/dev/null 2>tsv.err
[ $? = 2 ] && ok "serve: a TSV input refused (exit 2)" || bad "serve: TSV: $(cat tsv.err)"
timeout 10 kt-serve --port 0 t.json >/dev/null 2>&1
[ $? = 2 ] && ok "serve: --port 0 is a usage error" || bad "serve: --port 0 accepted"

# ------------------------------------------------------------------
# The page in a browser: a stand-in for the UI receives the trace.
browser=
for b in chromium-headless-shell chromium; do
	command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
	skip "serve-browser: no chromium-headless-shell"
	exit 0
fi
cat >standin.py <<'EOF'
# A stand-in for the Perfetto UI on another loopback port: it answers
# PING with PONG and reports the SHA-256 of the buffer it receives.
import http.server, sys, urllib.parse
page = b"""<!doctype html><meta charset="utf-8"><title>stand-in</title><script>
window.addEventListener('message', async e => {
  if (e.data === 'PING') { e.source.postMessage('PONG', e.origin); return; }
  if (!e.data || !e.data.perfetto) return;
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', e.data.perfetto.buffer));
  const hex = Array.from(d).map(b => b.toString(16).padStart(2, '0')).join('');
  fetch('/result?sha=' + hex + '&title=' + encodeURIComponent(e.data.perfetto.title) + '&from=' + encodeURIComponent(e.origin));
});
</script>"""
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        if u.path == "/result":
            q = urllib.parse.parse_qs(u.query)
            with open(sys.argv[1], "w") as f:
                f.write("%s %s %s\n" % (q["sha"][0], q["title"][0], q["from"][0]))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
EOF
rm -f result.txt sp.txt
timeout 90 python3 standin.py result.txt >sp.txt 2>sp.err &
spid=$!
_i=0
while [ ! -s sp.txt ] && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
sport=$(head -1 sp.txt)
start u4 --once t.json.gz
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-popup-blocking \
    --no-first-run --user-data-dir="$TMP/chrome" "${url}?ui=http://127.0.0.1:$sport" \
    >chrome.log 2>&1 &
cpid=$!
_i=0
while [ ! -s result.txt ] && [ $_i -lt 450 ]; do sleep 0.1; _i=$((_i + 1)); done
kill "$cpid" "$spid" 2>/dev/null
wait "$cpid" 2>/dev/null
wait "$spid" 2>/dev/null
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ -s result.txt ] && [ "$(cut -d' ' -f1 result.txt)" = "$want" ]; then
	ok "serve-browser: the stand-in UI got the trace intact over PING/PONG ($(cut -d' ' -f2- result.txt))"
else
	bad "serve-browser: stand-in got '$(cat result.txt 2>/dev/null)', want $want"
fi
