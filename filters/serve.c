/*
 * kt-serve: one trace to the Perfetto UI.  The trace is read whole into
 * memory (decompressed, out of its archive member, from a file or a
 * pipe), then a small HTTP server on the loopback address serves two
 * things under a random token: a page that opens https://ui.perfetto.dev
 * and hands it the trace with the UI's postMessage protocol (PING until
 * PONG, then the bytes), and the trace itself, for that page and for the
 * UI's own ?url= deep link (port 9001).  Every other request is refused:
 * a Host other than the loopback address and port (DNS rebinding), a
 * path other than those two (a wrong token), a method other than GET,
 * HEAD and OPTIONS.  One poll(2) loop serves a few connections at once,
 * each with a deadline, so that an idle or slow client holds up nobody.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "kt.h"

#define UI_URL		"https://ui.perfetto.dev"
#define DEFAULT_MAX	((uint64_t)2 << 30)	/* what the UI takes */
#define CHUNK		((size_t)1 << 20)	/* bytes read at once */
#define HEAD_MAX	8192	/* a request's line and header fields */
#define NCONN		32	/* connections served at once */
#define HEAD_MS		10000	/* a request's header comes within this */
#define IDLE_MS		30000	/* a response may stall this long */
#define DRAIN_MS	2000	/* reading what a client still sends */
#define TICK_MS		200	/* a pending SIGINT or SIGTERM is seen */
#define WRITE_MAX	((size_t)1 << 20)

enum cstate {
	C_FREE = 0,
	C_READ,		/* reading the request */
	C_WRITE,	/* writing the response */
	C_DRAIN		/* written and shut down: reading until EOF */
};

struct conn {
	int		 fd;
	enum cstate	 st;
	char		 req[HEAD_MAX];
	size_t		 nreq;
	char		 head[1024];	/* the response's status and fields */
	size_t		 nhead;
	size_t		 offhead;
	const char	*body;		/* borrowed: the trace or the page */
	size_t		 nbody;
	size_t		 offbody;
	int		 trace;		/* a GET of the trace */
	int		 sent;		/* ... written in full */
	int64_t		 deadline;	/* CLOCK_MONOTONIC ms */
};

struct serve {
	int		 v6;
	long long	 port;		/* asked for; 0: any free one */
	int		 once;
	uint64_t	 max;
	const char	*title;		/* NULL: the input's file name */
	struct kt_buf	 trace;		/* the bytes served */
	struct kt_buf	 page;		/* the HTML page */
	char		 name[80];	/* the trace's URL name, no .json */
	char		 token[33];	/* 128 random bits in hex */
	char		 pagepath[64];	/* /TOKEN/ */
	char		 tracepath[160];	/* /TOKEN/NAME.json */
	char		 where[64];	/* 127.0.0.1:PORT or [::1]:PORT */
	char		 host[2][80];	/* the Host fields accepted */
	unsigned	 bound;		/* the port listened on */
	int		 lfd;
	struct conn	 c[NCONN];
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-serve [-6] [--once] [-m glob] [--max-size size] [-p port]\n"
	    "                [--title name] [file]\n"
	    "  -6, --ipv6            listen on ::1 instead of 127.0.0.1\n"
	    "  -m, --member GLOB     take the archive member matching GLOB\n"
	    "      --max-size SIZE   refuse a trace over SIZE bytes decompressed\n"
	    "                        (K, M, G, T; default 2G, what the UI takes)\n"
	    "      --once            exit once the trace was sent in full\n"
	    "  -p, --port PORT       listen on PORT (default: a free one); 9001\n"
	    "                        for the Perfetto UI's ?url= deep link\n"
	    "      --title NAME      the trace's title in the UI (default: its\n"
	    "                        file name)\n"
	    "  -h, --help            this help;  -V, --version  the version\n"
	    "The URL to open is printed on stdout; Ctrl-C stops the server.\n");
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* The trace: read whole, before listening. */

static void
too_big(const struct serve *sv, const struct kt_reader *rd)
{
	kt_cli_warn("%s: more than %llu bytes decompressed, more than the "
	    "Perfetto UI takes (--max-size): make it smaller with kt "
	    "slice-window (a few steps, a rank) or kt select --drop "
	    "python_function", kt_reader_name(rd),
	    (unsigned long long)sv->max);
	exit(1);
}

static void
load(struct serve *sv, struct kt_reader *rd)
{
	struct kt_error err;
	const unsigned char *p;
	size_t i = 0, want;
	uint64_t left;
	int64_t k;

	for (;;) {
		/* Never more than max + 1 bytes held. */
		left = sv->max - sv->trace.n;
		want = left < CHUNK ? (size_t)left + 1 : CHUNK;
		if (kt_buf_reserve(&sv->trace, want) == -1)
			kt_cli_nomem();
		k = kt_reader_read(rd, sv->trace.p + sv->trace.n, want, &err);
		if (k == -1)
			kt_cli_die(&err);
		if (k == 0)
			break;
		sv->trace.n += (size_t)k;
		if (sv->trace.n > sv->max)
			too_big(sv, rd);
		kt_cli_progress(rd);
	}
	kt_cli_progress_done();
	/* The UI reads JSON: say so here rather than there. */
	p = (const unsigned char *)sv->trace.p;
	if (sv->trace.n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		i = 3;
	while (i < sv->trace.n && (p[i] == ' ' || p[i] == '\t' ||
	    p[i] == '\n' || p[i] == '\r'))
		i++;
	if (i == sv->trace.n) {
		kt_error_set(&err, kt_reader_name(rd), 0, 0, "empty input");
		kt_cli_die(&err);
	}
	if (sv->trace.n - i >= 8 && memcmp(p + i, "id\tkind\t", 8) == 0) {
		kt_error_set(&err, kt_reader_name(rd), 0, 0, "the TSV event "
		    "form: the Perfetto UI reads JSON (kt normalize makes it)");
		kt_cli_die(&err);
	}
	if (p[i] != '{' && p[i] != '[') {
		kt_error_set(&err, kt_reader_name(rd), 1, 1, "not a JSON trace: "
		    "expected '{' or '['");
		kt_cli_die(&err);
	}
}

/*
 * The trace's name in its URL: the last part of the reader's name
 * without its .json and compression suffixes, in letters, digits, '.',
 * '-' and '_' (others become '_').
 */
static void
url_name(struct serve *sv, const char *title)
{
	static const char *const sfx[] = { ".gz", ".zst", ".xz", ".bz2",
	    ".zip", ".tar", ".tgz", ".json" };
	size_t n, i, k;
	int again;

	n = strlen(title);
	do {
		again = 0;
		for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			k = strlen(sfx[i]);
			if (n > k && strncasecmp(title + n - k, sfx[i], k) == 0) {
				n -= k;
				again = 1;
			}
		}
	} while (again);
	if (n >= sizeof(sv->name))
		n = sizeof(sv->name) - 1;
	for (i = 0; i < n; i++) {
		char ch = title[i];

		sv->name[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' &&
		    ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		    ch == '-' || ch == '_' ? ch : '_';
	}
	sv->name[n] = '\0';
	if (n == 0 || strcmp(title, "<stdin>") == 0)
		snprintf(sv->name, sizeof(sv->name), "%s",
		    n == 0 ? "trace" : "stdin");
}

/* 128 bits from /dev/urandom as 32 hex digits. */
static void
make_token(struct serve *sv)
{
	unsigned char r[16];
	struct kt_error err;
	size_t got = 0;
	ssize_t k;
	int fd, i;

	if ((fd = open("/dev/urandom", O_RDONLY)) == -1) {
		kt_error_set(&err, "/dev/urandom", 0, 0, "%s", strerror(errno));
		kt_cli_die(&err);
	}
	while (got < sizeof(r)) {
		k = read(fd, r + got, sizeof(r) - got);
		if (k == -1 && errno == EINTR)
			continue;
		if (k <= 0) {
			kt_error_set(&err, "/dev/urandom", 0, 0, "%s",
			    k == 0 ? "end of file" : strerror(errno));
			close(fd);
			kt_cli_die(&err);
		}
		got += (size_t)k;
	}
	close(fd);
	for (i = 0; i < 16; i++)
		snprintf(sv->token + 2 * i, 3, "%02x", r[i]);
}

/* ------------------------------------------------------------------ */
/* The page. */

/* s as a JavaScript string literal that is safe inside <script>. */
static void
js_string(struct kt_buf *b, const char *s)
{
	char esc[8];

	kt_buf_addc(b, '"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\' ||
		    ch == '<' || ch == '>' || ch == '&' || ch == '\'') {
			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			kt_buf_adds(b, esc);
		} else
			kt_buf_addc(b, (char)ch);
	}
	kt_buf_addc(b, '"');
}

/*
 * The page opens the UI (window.open, else a button: a browser may block
 * a window a page opens by itself), fetches the trace meanwhile, pings
 * the UI's window every 50 ms until it answers PONG, then posts the
 * trace to it.  ?ui=URL replaces the UI by another page on a loopback
 * address (a stand-in for tests, a UI run locally); &frame=1 loads it in
 * a frame instead of a window.
 */
static void
make_page(struct serve *sv, const char *title)
{
	static const char *const head =
	    "<!doctype html>\n"
	    "<html lang=\"en\">\n"
	    "<head>\n"
	    "<meta charset=\"utf-8\">\n"
	    "<meta name=\"referrer\" content=\"no-referrer\">\n"
	    "<title>kt serve</title>\n"
	    "<style>body { font-family: sans-serif; margin: 2em; }\n"
	    "iframe { width: 100%; height: 85vh; border: 1px solid #ccc; }"
	    "</style>\n"
	    "</head>\n"
	    "<body>\n"
	    "<p id=\"say\">Opening the trace in the Perfetto UI...</p>\n"
	    "<p id=\"warn\"></p>\n"
	    "<p><button id=\"open\" hidden>Open in the Perfetto UI</button></p>\n"
	    "<script>\n"
	    "\"use strict\";\n";
	static const char *const body =
	    "(function () {\n"
	    "  var ui = UI, frame = false, q = new URLSearchParams(location.search);\n"
	    "  var say = document.getElementById(\"say\");\n"
	    "  var button = document.getElementById(\"open\");\n"
	    "  function tell(s) { say.textContent = s; }\n"
	    "  document.title = \"kt serve: \" + TITLE;\n"
	    "  if (q.has(\"ui\")) {\n"
	    "    /* A stand-in for the UI: a loopback address only. */\n"
	    "    var u = null;\n"
	    "    try { u = new URL(q.get(\"ui\")); } catch (e) { u = null; }\n"
	    "    if (u !== null && (u.protocol === \"http:\" || u.protocol === \"https:\") &&\n"
	    "        (u.hostname === \"127.0.0.1\" || u.hostname === \"localhost\" ||\n"
	    "        u.hostname === \"[::1]\")) {\n"
	    "      ui = u.href;\n"
	    "      frame = q.get(\"frame\") === \"1\";\n"
	    "    } else {\n"
	    "      document.getElementById(\"warn\").textContent =\n"
	    "          \"?ui= must name a loopback address (127.0.0.1, localhost, [::1]): not used.\";\n"
	    "    }\n"
	    "  }\n"
	    "  var origin = new URL(ui).origin;\n"
	    "  var win = null, buf = null, ponged = false, sent = false, timer = null;\n"
	    "  function post() {\n"
	    "    if (sent || !ponged || buf === null)\n"
	    "      return;\n"
	    "    sent = true;\n"
	    "    var n = buf.byteLength;\n"
	    "    win.postMessage({perfetto: {buffer: buf, title: TITLE, fileName: FILE}},\n"
	    "        origin, [buf]);\n"
	    "    tell(\"Sent \" + n + \" bytes to \" + origin + \".\");\n"
	    "  }\n"
	    "  window.addEventListener(\"message\", function (e) {\n"
	    "    if (win === null || e.source !== win || e.origin !== origin ||\n"
	    "        e.data !== \"PONG\")\n"
	    "      return;\n"
	    "    ponged = true;\n"
	    "    clearInterval(timer);\n"
	    "    post();\n"
	    "  });\n"
	    "  function open() {\n"
	    "    if (frame) {\n"
	    "      var f = document.createElement(\"iframe\");\n"
	    "      f.src = ui;\n"
	    "      document.body.appendChild(f);\n"
	    "      win = f.contentWindow;\n"
	    "    } else {\n"
	    "      win = window.open(ui);\n"
	    "    }\n"
	    "    if (!win) {\n"
	    "      win = null;\n"
	    "      tell(\"The browser blocked the new window: press the button.\");\n"
	    "      button.hidden = false;\n"
	    "      return;\n"
	    "    }\n"
	    "    button.hidden = true;\n"
	    "    clearInterval(timer);\n"
	    "    timer = setInterval(function () {\n"
	    "      try { win.postMessage(\"PING\", origin); } catch (e) { }\n"
	    "    }, 50);\n"
	    "  }\n"
	    "  button.addEventListener(\"click\", open);\n"
	    "  fetch(TRACE, {cache: \"no-store\"}).then(function (r) {\n"
	    "    if (!r.ok)\n"
	    "      throw new Error(\"HTTP \" + r.status);\n"
	    "    return r.arrayBuffer();\n"
	    "  }).then(function (b) {\n"
	    "    buf = b;\n"
	    "    post();\n"
	    "  }).catch(function (e) {\n"
	    "    tell(\"Cannot fetch the trace: \" + e.message);\n"
	    "  });\n"
	    "  open();\n"
	    "})();\n"
	    "</script>\n"
	    "</body>\n"
	    "</html>\n";
	char file[128];

	snprintf(file, sizeof(file), "%s.json", sv->name);
	kt_buf_adds(&sv->page, head);
	kt_buf_adds(&sv->page, "var UI = ");
	js_string(&sv->page, UI_URL "/");
	kt_buf_adds(&sv->page, ";\nvar TRACE = ");
	js_string(&sv->page, sv->tracepath);
	kt_buf_adds(&sv->page, ";\nvar TITLE = ");
	js_string(&sv->page, title);
	kt_buf_adds(&sv->page, ";\nvar FILE = ");
	js_string(&sv->page, file);
	kt_buf_adds(&sv->page, ";\n");
	kt_buf_adds(&sv->page, body);
	if (sv->page.err)
		kt_cli_nomem();
}

/* ------------------------------------------------------------------ */
/* Listening. */

static void
listen_on(struct serve *sv)
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	struct sockaddr_storage got;
	socklen_t glen = sizeof(got);
	int one = 1, fd;

	snprintf(sv->where, sizeof(sv->where), sv->v6 ? "[::1]:%lld" :
	    "127.0.0.1:%lld", sv->port);
	if ((fd = socket(sv->v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)) == -1)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1)
		goto fail;
	if (sv->v6) {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one)) == -1)
			goto fail;
		memset(&a6, 0, sizeof(a6));
		a6.sin6_family = AF_INET6;
		a6.sin6_addr = in6addr_loopback;
		a6.sin6_port = htons((uint16_t)sv->port);
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == -1)
			goto fail;
	} else {
		memset(&a4, 0, sizeof(a4));
		a4.sin_family = AF_INET;
		a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a4.sin_port = htons((uint16_t)sv->port);
		if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)) == -1)
			goto fail;
	}
	if (listen(fd, 16) == -1 ||
	    getsockname(fd, (struct sockaddr *)&got, &glen) == -1 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		goto fail;
	sv->bound = ntohs(sv->v6 ? ((struct sockaddr_in6 *)&got)->sin6_port :
	    ((struct sockaddr_in *)&got)->sin_port);
	sv->lfd = fd;
	snprintf(sv->where, sizeof(sv->where), sv->v6 ? "[::1]:%u" :
	    "127.0.0.1:%u", sv->bound);
	snprintf(sv->host[0], sizeof(sv->host[0]), "%s", sv->where);
	snprintf(sv->host[1], sizeof(sv->host[1]), "localhost:%u", sv->bound);
	return;
fail:
	kt_cli_warn("%s: %s", sv->where, strerror(errno));
	if (fd != -1)
		close(fd);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* Requests. */

/* Are a[0..an) and b[0..bn) the same, in time that depends on bn only? */
static int
same(const char *a, size_t an, const char *b, size_t bn)
{
	unsigned char d = an != bn;
	size_t i;

	for (i = 0; i < bn; i++)
		d |= (unsigned char)(b[i] ^ (i < an ? a[i] : 0));
	return d == 0;
}

static void
conn_close(struct conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	c->st = C_FREE;
}

/* Start writing the response: status, fields, and body (borrowed). */
static void
respond(struct conn *c, int status, const char *extra, const char *type,
    const char *body, size_t n, int head_only)
{
	static const struct {
		int		 code;
		const char	*text;
	} st[] = {
		{ 200, "OK" }, { 400, "Bad Request" }, { 403, "Forbidden" },
		{ 404, "Not Found" }, { 405, "Method Not Allowed" },
		{ 431, "Request Header Fields Too Large" },
		{ 505, "HTTP Version Not Supported" },
	};
	const char *text = "Error";
	size_t i;
	int k;

	for (i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		if (st[i].code == status)
			text = st[i].text;
	k = snprintf(c->head, sizeof(c->head), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\n"
	    "Content-Length: %zu\r\n"
	    "%s"
	    "Cache-Control: no-store\r\n"
	    "X-Content-Type-Options: nosniff\r\n"
	    "Referrer-Policy: no-referrer\r\n"
	    "Connection: close\r\n"
	    "\r\n", status, text, type, n, extra != NULL ? extra : "");
	c->nhead = k > 0 && (size_t)k < sizeof(c->head) ? (size_t)k : 0;
	c->offhead = 0;
	c->body = body;
	c->nbody = head_only ? 0 : n;
	c->offbody = 0;
	c->st = C_WRITE;
	c->deadline = now_ms() + IDLE_MS;
}

/* An error's short text body: its status line's words. */
static void
refuse(struct conn *c, int status, const char *extra, int head_only)
{
	static const char *const bodies[] = {
		"400 Bad Request\n", "403 Forbidden\n", "404 Not Found\n",
		"405 Method Not Allowed\n",
		"431 Request Header Fields Too Large\n",
		"505 HTTP Version Not Supported\n",
	};
	const char *b = "error\n";
	size_t i;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		if (atoi(bodies[i]) == status)
			b = bodies[i];
	respond(c, status, extra, "text/plain; charset=utf-8", b, strlen(b),
	    head_only);
}

/* A Host field's value fit for a one-line message. */
static void
printable(char *out, size_t n, const char *in, size_t len)
{
	size_t i, k = 0;

	for (i = 0; i < len && k + 1 < n; i++)
		out[k++] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[k] = '\0';
}

/* Is the token character set of RFC 9110 (a method, a field name)? */
static int
token_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || (ch != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

/*
 * The request in c->req[0..end): answer it.  The checks in order: the
 * form of the request (400, 505), the Host field (403), the path (404),
 * the method (405).
 */
static void
request(struct serve *sv, struct conn *c, size_t end)
{
	static const char *const cors =
	    "Access-Control-Allow-Origin: " UI_URL "\r\n";
	char *p = c->req, *e = c->req + end, *nl, *sp1, *sp2;
	const char *host = NULL, *method, *target, *version, *q;
	size_t hostlen = 0, tlen;
	int nhost = 0, head, pna = 0, is_page, is_trace;

	/* The request line: METHOD SP TARGET SP HTTP/1.x */
	if ((nl = memchr(p, '\n', (size_t)(e - p))) == NULL) {
		refuse(c, 400, NULL, 0);
		return;
	}
	*nl = '\0';
	if (nl > p && nl[-1] == '\r')
		nl[-1] = '\0';
	method = p;
	if ((sp1 = strchr(p, ' ')) == NULL ||
	    (sp2 = strchr(sp1 + 1, ' ')) == NULL ||
	    strchr(sp2 + 1, ' ') != NULL || sp1 == p || sp2 == sp1 + 1) {
		refuse(c, 400, NULL, 0);
		return;
	}
	*sp1 = '\0';
	*sp2 = '\0';
	target = sp1 + 1;
	version = sp2 + 1;
	for (q = method; *q != '\0'; q++)
		if (!token_char(*q)) {
			refuse(c, 400, NULL, 0);
			return;
		}
	head = strcmp(method, "HEAD") == 0;
	if (strncmp(version, "HTTP/", 5) != 0) {
		refuse(c, 400, NULL, head);
		return;
	}
	if (strcmp(version, "HTTP/1.0") != 0 &&
	    strcmp(version, "HTTP/1.1") != 0) {
		refuse(c, 505, NULL, head);
		return;
	}
	/* The header fields, up to the empty line. */
	for (p = nl + 1; p < e; p = nl + 1) {
		char *colon, *v, *ve;

		if ((nl = memchr(p, '\n', (size_t)(e - p))) == NULL)
			nl = e;
		ve = nl;
		if (ve > p && ve[-1] == '\r')
			ve--;
		if (ve == p)
			break;
		if ((colon = memchr(p, ':', (size_t)(ve - p))) == NULL ||
		    colon == p) {
			refuse(c, 400, NULL, head);
			return;
		}
		for (q = p; q < colon; q++)
			if (!token_char(*q)) {
				refuse(c, 400, NULL, head);
				return;
			}
		for (v = colon + 1; v < ve && (*v == ' ' || *v == '\t'); v++)
			;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (colon - p == 4 && strncasecmp(p, "host", 4) == 0) {
			host = v;
			hostlen = (size_t)(ve - v);
			nhost++;
		} else if (colon - p == 38 && strncasecmp(p,
		    "access-control-request-private-network", 38) == 0 &&
		    ve - v == 4 && strncasecmp(v, "true", 4) == 0)
			pna = 1;
	}
	if (nhost > 1) {
		refuse(c, 400, NULL, head);
		return;
	}
	if (nhost == 0 || !((hostlen == strlen(sv->host[0]) &&
	    strncasecmp(host, sv->host[0], hostlen) == 0) ||
	    (hostlen == strlen(sv->host[1]) &&
	    strncasecmp(host, sv->host[1], hostlen) == 0))) {
		char shown[80];

		printable(shown, sizeof(shown), host != NULL ? host : "",
		    hostlen);
		kt_cli_warn("refused a request with %s%s%s (not %s): 403",
		    nhost ? "Host '" : "no Host", shown, nhost ? "'" : "",
		    sv->where);
		refuse(c, 403, NULL, head);
		return;
	}
	/* The two paths, each with the token. */
	tlen = strlen(target);
	{
		size_t pl = strlen(sv->pagepath), ql;
		const char *query = memchr(target, '?', tlen);

		ql = query != NULL ? (size_t)(query - target) : tlen;
		is_page = same(target, ql, sv->pagepath, pl);
		is_trace = same(target, tlen, sv->tracepath,
		    strlen(sv->tracepath));
	}
	if (!is_page && !is_trace) {
		refuse(c, 404, NULL, head);
		return;
	}
	if (is_page) {
		if (strcmp(method, "GET") != 0 && !head) {
			refuse(c, 405, "Allow: GET, HEAD\r\n", 0);
			return;
		}
		respond(c, 200, "Content-Security-Policy: default-src 'none'; "
		    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
		    "connect-src 'self'; frame-src " UI_URL " http://127.0.0.1:* "
		    "http://localhost:*; frame-ancestors 'none'; "
		    "base-uri 'none'; form-action 'none'\r\n",
		    "text/html; charset=utf-8", sv->page.p, sv->page.n, head);
		return;
	}
	if (strcmp(method, "OPTIONS") == 0) {
		/* A CORS preflight: for the UI only. */
		char extra[512];

		snprintf(extra, sizeof(extra), "%s"
		    "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
		    "Access-Control-Max-Age: 600\r\n"
		    "%s", cors, pna ? "Access-Control-Allow-Private-Network: "
		    "true\r\n" : "");
		respond(c, 200, extra, "text/plain; charset=utf-8", "", 0, 0);
		return;
	}
	if (strcmp(method, "GET") != 0 && !head) {
		refuse(c, 405, "Allow: GET, HEAD, OPTIONS\r\n", 0);
		return;
	}
	respond(c, 200, cors, "application/json", sv->trace.p, sv->trace.n,
	    head);
	c->trace = !head;
}

/* Where the request's header ends (after its empty line), or 0. */
static size_t
header_end(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		if (p[i] != '\n')
			continue;
		if (p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static void
conn_read(struct serve *sv, struct conn *c)
{
	ssize_t k;
	size_t end;

	k = read(c->fd, c->req + c->nreq, sizeof(c->req) - c->nreq);
	if (k == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (k <= 0) {
		conn_close(c);
		return;
	}
	c->nreq += (size_t)k;
	if ((end = header_end(c->req, c->nreq)) > 0)
		request(sv, c, end);
	else if (c->nreq == sizeof(c->req))
		refuse(c, 431, NULL, 0);
}

/*
 * Write what the socket takes.  Returns 1 when the trace was just sent
 * in full, else 0.
 */
static int
conn_write(struct serve *sv, struct conn *c)
{
	const char *p;
	size_t n;
	ssize_t k;

	for (;;) {
		if (c->offhead < c->nhead) {
			p = c->head + c->offhead;
			n = c->nhead - c->offhead;
		} else if (c->offbody < c->nbody) {
			p = c->body + c->offbody;
			n = c->nbody - c->offbody;
			if (n > WRITE_MAX)
				n = WRITE_MAX;
		} else
			break;
		k = write(c->fd, p, n);
		if (k == -1 && errno == EINTR)
			continue;
		if (k == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (k <= 0) {
			conn_close(c);
			return 0;
		}
		if (c->offhead < c->nhead)
			c->offhead += (size_t)k;
		else
			c->offbody += (size_t)k;
		c->deadline = now_ms() + IDLE_MS;
	}
	/*
	 * All written: shut down our side and read what the client still
	 * sends until it closes, so that closing with unread bytes does
	 * not reset the connection under the response's tail.
	 */
	shutdown(c->fd, SHUT_WR);
	c->st = C_DRAIN;
	c->deadline = now_ms() + DRAIN_MS;
	if (c->trace && !c->sent) {
		c->sent = 1;
		kt_cli_warn("sent the trace (%zu bytes)", sv->trace.n);
		return 1;
	}
	return 0;
}

static void
conn_drain(struct conn *c)
{
	char buf[4096];
	ssize_t k;

	k = read(c->fd, buf, sizeof(buf));
	if (k == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (k <= 0)
		conn_close(c);
}

static void
conn_accept(struct serve *sv)
{
	struct conn *c;
	int fd, i;

	for (;;) {
		for (i = 0; i < NCONN && sv->c[i].st != C_FREE; i++)
			;
		if (i == NCONN)
			return;
		c = &sv->c[i];
		if ((fd = accept(sv->lfd, NULL, NULL)) == -1)
			return;		/* EAGAIN, or a connection gone */
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->st = C_READ;
		c->deadline = now_ms() + HEAD_MS;
	}
}

/*
 * Serve until SIGINT or SIGTERM (blocked, and looked for between polls:
 * no handler, no global flag), or with --once until the connection that
 * took the whole trace is closed.
 */
static void
serve_loop(struct serve *sv)
{
	struct pollfd pfd[NCONN + 1];
	int who[NCONN + 1];
	sigset_t pending;
	int once_done = 0;

	for (;;) {
		int64_t now = now_ms();
		int n = 0, i, r, timeout = TICK_MS, busy = 0, open_trace = 0;

		if (sigpending(&pending) == 0 &&
		    (sigismember(&pending, SIGINT) == 1 ||
		    sigismember(&pending, SIGTERM) == 1)) {
			kt_cli_warn("stopped");
			return;
		}
		for (i = 0; i < NCONN; i++) {
			struct conn *c = &sv->c[i];

			if (c->st == C_FREE)
				continue;
			if (now >= c->deadline)
				conn_close(c);
			if (c->st == C_FREE)
				continue;
			busy++;
			if (c->sent)
				open_trace = 1;
			if (c->deadline - now < timeout)
				timeout = (int)(c->deadline - now);
			pfd[n].fd = c->fd;
			pfd[n].events = c->st == C_WRITE ? POLLOUT : POLLIN;
			pfd[n].revents = 0;
			who[n++] = i;
		}
		if (once_done && !open_trace) {
			kt_cli_warn("--once: done");
			return;
		}
		if (busy < NCONN) {
			pfd[n].fd = sv->lfd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			who[n++] = -1;
		}
		if (timeout < 0)
			timeout = 0;
		if ((r = poll(pfd, (nfds_t)n, timeout)) == -1) {
			if (errno == EINTR)
				continue;
			kt_cli_warn("poll: %s", strerror(errno));
			exit(2);
		}
		for (i = 0; r > 0 && i < n; i++) {
			struct conn *c;

			if (pfd[i].revents == 0)
				continue;
			if (who[i] == -1) {
				conn_accept(sv);
				continue;
			}
			c = &sv->c[who[i]];
			switch (c->st) {
			case C_READ:
				conn_read(sv, c);
				/* Answered: try to write at once. */
				if (c->st == C_WRITE &&
				    conn_write(sv, c) && sv->once)
					once_done = 1;
				break;
			case C_WRITE:
				if (conn_write(sv, c) && sv->once)
					once_done = 1;
				break;
			case C_DRAIN:
				conn_drain(c);
				break;
			case C_FREE:
				break;
			}
		}
	}
}

/* kt_cli_on_exit's callback: what the server holds. */
static void
at_exit(void *arg)
{
	struct serve *sv = arg;
	int i;

	for (i = 0; i < NCONN; i++)
		conn_close(&sv->c[i]);
	if (sv->lfd != -1)
		close(sv->lfd);
	kt_buf_free(&sv->trace);
	kt_buf_free(&sv->page);
	free(sv);
}

int
main(int argc, char *argv[])
{
	enum { OPT_MAX_SIZE = 0x100, OPT_ONCE, OPT_TITLE };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "member", required_argument, NULL, 'm' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "port", required_argument, NULL, 'p' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	struct kt_source *src;
	struct kt_reader *rd;
	struct serve *sv;
	const char *input, *base, *slash;
	sigset_t stop;
	int ch, i;

	kt_cli_init("kt-serve");
	if ((sv = calloc(1, sizeof(*sv))) == NULL)
		kt_cli_nomem();
	sv->lfd = -1;
	for (i = 0; i < NCONN; i++)
		sv->c[i].fd = -1;
	sv->max = DEFAULT_MAX;
	kt_cli_on_exit(at_exit, sv);
	while ((ch = getopt_long(argc, argv, "6hm:p:V", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case '6':
			sv->v6 = 1;
			break;
		case 'p':
			sv->port = kt_cli_int("--port", optarg, 0, 65535);
			break;
		case OPT_MAX_SIZE:
			sv->max = kt_cli_size("--max-size", optarg);
			break;
		case OPT_ONCE:
			sv->once = 1;
			break;
		case OPT_TITLE:
			sv->title = optarg;
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one trace at a time");
		return 2;
	}
	input = argc ? argv[0] : "-";
	kt_cli_inputs(argv, argc);

	/* The trace, whole, before anything listens. */
	rd = kt_cli_open_one(input, NULL, co.member, co.rflags, &src);
	load(sv, rd);
	kt_cli_one_trace(src, strcmp(input, "-") == 0 ? "<stdin>" : input,
	    "several traces: pick one with --member", 0);
	/* Named by its file (an archive's member: "ARCHIVE:MEMBER"). */
	base = kt_reader_name(rd);
	if (kt_source_archived(src)) {
		base += strlen(strcmp(input, "-") == 0 ? "<stdin>" : input);
		if (*base == ':')
			base++;
	}
	if ((slash = strrchr(base, '/')) != NULL)
		base = slash + 1;
	url_name(sv, base);
	if (sv->title == NULL)
		sv->title = base;

	make_token(sv);
	snprintf(sv->pagepath, sizeof(sv->pagepath), "/%s/", sv->token);
	snprintf(sv->tracepath, sizeof(sv->tracepath), "/%s/%s.json",
	    sv->token, sv->name);
	make_page(sv, sv->title);

	/* Signals: a broken connection is an error of a write, not death;
	 * SIGINT and SIGTERM are taken between polls (serve_loop). */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	listen_on(sv);

	printf("http://%s%s\n", sv->where, sv->pagepath);
	if (fflush(stdout) == EOF) {
		kt_cli_warn("<stdout>: %s", strerror(errno));
		exit(2);
	}
	kt_cli_warn("serving %s (%zu bytes) on %s: open the URL above in a "
	    "browser; Ctrl-C stops", sv->title, sv->trace.n, sv->where);
	if (sv->bound == 9001 && !sv->v6)
		kt_cli_warn("or open " UI_URL "/#!/?url=http://%s%s",
		    sv->where, sv->tracepath);
	kt_reader_free(rd);
	kt_source_close(src);
	serve_loop(sv);
	return 0;
}
