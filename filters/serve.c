/*
 * kt-serve: open one local trace in the Perfetto UI without uploading it.
 * A small HTTP server on the loopback address serves two things only, a
 * page and the trace, under a random token: the page opens the UI and
 * hands it the trace with Perfetto's postMessage protocol (PING until
 * PONG, then the buffer); the trace also answers the UI's ?url= deep link
 * (on 127.0.0.1:9001, the one origin the UI fetches from), with the CORS
 * header for the UI's origin only.  The security model is in
 * kt-serve(1).
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "kt.h"

#define UI_ORIGIN	"https://ui.perfetto.dev"
#define MAX_HEADER	8192		/* a request's line and headers */
#define IO_SECONDS	10		/* per read or write of a client */
#define DEFAULT_MAX	(2ull << 30)	/* what the UI takes, about */

struct opts {
	int		 port;		/* 0: a free one */
	int		 v6;		/* ::1, not 127.0.0.1 */
	int		 once;		/* exit after one full transfer */
	uint64_t	 max;		/* the largest trace served */
	struct kt_cli_opts co;		/* -m */
};

struct serve {
	struct opts	 o;
	char		*data;		/* the trace, decompressed */
	size_t		 n;
	char		 token[33];	/* 128 random bits, hex */
	char		 file[128];	/* the trace's name in its path */
	char		 trace_path[200], page_path[64];
	char		 hosts[3][80];	/* the Host values accepted */
	char		*page;		/* the page's HTML */
	size_t		 npage;
	int		 lfd;
	int		 port;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-serve [-16] [-M size] [-m glob] [-p port] [file]\n"
	    "  -p, --port N       listen on port N (default: a free one; 9001\n"
	    "                     for the Perfetto UI's ?url= deep link)\n"
	    "  -6, --ipv6         listen on ::1 instead of 127.0.0.1\n"
	    "  -1, --once         exit after the trace was sent once\n"
	    "  -M, --max-size N   refuse a trace above N bytes (k, M, G;\n"
	    "                     default 2G, what the UI takes)\n"
	    "  -m, --member GLOB  take the archive member matching GLOB\n"
	    "  -h, --help         this help;  -V, --version  the version\n");
}

/* Parse a size with an optional k, M or G suffix (powers of 1024). */
static int
parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;
	int shift = 0;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (end == s || errno != 0 || *s == '-')
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (*end != '\0' && end[1] != '\0')
		return -1;
	if (x > (UINT64_MAX >> shift))
		return -1;
	*v = (uint64_t)x << shift;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The trace and the page. */

/* Read the whole trace, decompressed, refusing one above the limit. */
static void
slurp(struct serve *s, struct kt_reader *rd, const char *name)
{
	struct kt_error err;
	size_t cap = 1 << 20;
	int64_t k;
	size_t i;

	if ((s->data = malloc(cap)) == NULL)
		kt_cli_nomem();
	for (;;) {
		if (s->n == cap) {
			char *p;

			cap *= 2;
			if ((p = realloc(s->data, cap)) == NULL)
				kt_cli_nomem();
			s->data = p;
		}
		if ((k = kt_reader_read(rd, s->data + s->n, cap - s->n,
		    &err)) == -1)
			kt_cli_die(&err);
		if (k == 0)
			break;
		s->n += (size_t)k;
		if (s->n > s->o.max) {
			kt_cli_warn("%s: the trace is larger than %llu bytes, "
			    "more than the Perfetto UI takes; make it smaller "
			    "first: kt slice-window --steps N (a few steps), "
			    "or kt select --drop python_function", name,
			    (unsigned long long)s->o.max);
			exit(1);
		}
	}
	for (i = 0; i < s->n && strchr(" \t\r\n", s->data[i]) != NULL; i++)
		;
	if (i == s->n || (s->data[i] != '{' && s->data[i] != '[')) {
		kt_cli_warn("%s: not a Chrome JSON trace (a TSV event form? "
		    "kt normalize writes it as JSON)", name);
		exit(2);
	}
}

/* The trace's name in its URL: the input's, safe characters only. */
static void
file_name(struct serve *s, const char *path)
{
	const char *b = strrchr(path, '/');
	size_t i, j = 0;
	char *dot;

	b = b != NULL ? b + 1 : path;
	if (strcmp(path, "-") == 0 || *b == '\0')
		b = "trace";
	for (i = 0; b[i] != '\0' && j + 6 < sizeof(s->file); i++)
		s->file[j++] = strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", b[i]) != NULL ?
		    b[i] : '_';
	s->file[j] = '\0';
	/* Served decompressed: foo.json.gz is foo.json. */
	while ((dot = strrchr(s->file, '.')) != NULL && dot != s->file &&
	    (strcmp(dot, ".gz") == 0 || strcmp(dot, ".zst") == 0 ||
	    strcmp(dot, ".xz") == 0 || strcmp(dot, ".bz2") == 0 ||
	    strcmp(dot, ".tar") == 0 || strcmp(dot, ".zip") == 0 ||
	    strcmp(dot, ".tgz") == 0))
		*dot = '\0';
	if ((dot = strrchr(s->file, '.')) == NULL || strcmp(dot, ".json") != 0)
		strcat(s->file, ".json");
}

/* 128 random bits in hex. */
static void
make_token(struct serve *s)
{
	unsigned char r[16];
	int fd, i;
	size_t got = 0;
	ssize_t k;

	if ((fd = open("/dev/urandom", O_RDONLY)) == -1) {
		kt_cli_warn("/dev/urandom: %s", strerror(errno));
		exit(2);
	}
	while (got < sizeof(r)) {
		if ((k = read(fd, r + got, sizeof(r) - got)) <= 0) {
			if (k == -1 && errno == EINTR)
				continue;
			kt_cli_warn("/dev/urandom: cannot read");
			exit(2);
		}
		got += (size_t)k;
	}
	close(fd);
	for (i = 0; i < 16; i++)
		snprintf(s->token + 2 * i, 3, "%02x", r[i]);
}

/*
 * The page: it fetches the trace (same origin), opens the UI, sends
 * PING every 50 ms until the UI answers PONG, then the buffer and its
 * title.  ?ui=ORIGIN, for tests, names another UI, a loopback http
 * origin only.
 */
static void
make_page(struct serve *s, const char *title)
{
	static const char head[] =
	    "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n"
	    "<meta name=\"referrer\" content=\"no-referrer\">\n"
	    "<title>kt serve</title></head><body>\n"
	    "<p id=\"s\">Fetching the trace for the Perfetto UI...</p>\n"
	    "<script>\n"
	    "\"use strict\";\n";
	static const char body[] =
	    "const say = t => { document.getElementById('s').textContent = t; };\n"
	    "let ui = '" UI_ORIGIN "', at = '" UI_ORIGIN "/#!/';\n"
	    "const q = new URLSearchParams(location.search).get('ui');\n"
	    "if (q) {\n"
	    "  const u = new URL(q);\n"
	    "  if (u.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) {\n"
	    "    say('refused: ?ui= must be a loopback http origin'); throw new Error('ui');\n"
	    "  }\n"
	    "  ui = u.origin; at = u.origin + '/';\n"
	    "}\n"
	    "fetch(FILE).then(r => {\n"
	    "  if (!r.ok) throw new Error('HTTP ' + r.status);\n"
	    "  return r.arrayBuffer();\n"
	    "}).then(buf => {\n"
	    "  const w = window.open(at);\n"
	    "  if (!w) { say('The browser blocked the new window: allow pop-ups for this page and reload it.'); return; }\n"
	    "  say('Waiting for the Perfetto UI to answer...');\n"
	    "  const ping = setInterval(() => w.postMessage('PING', ui), 50);\n"
	    "  window.addEventListener('message', e => {\n"
	    "    if (e.origin !== ui || e.data !== 'PONG') return;\n"
	    "    clearInterval(ping);\n"
	    "    w.postMessage({perfetto: {buffer: buf, title: TITLE}}, ui);\n"
	    "    say('Sent ' + TITLE + ' (' + buf.byteLength + ' bytes) to the Perfetto UI.');\n"
	    "  });\n"
	    "}).catch(e => say('Cannot fetch the trace: ' + e.message));\n"
	    "</script></body></html>\n";
	struct kt_buf b = KT_BUF_INIT;
	json_t *t = json_string(title), *f = json_string(s->file);
	char *tj, *fj;

	if (t == NULL)	/* not UTF-8 */
		t = json_string("trace");
	tj = json_dumps(t, JSON_ENCODE_ANY | JSON_ESCAPE_SLASH);
	fj = json_dumps(f, JSON_ENCODE_ANY | JSON_ESCAPE_SLASH);
	if (tj == NULL || fj == NULL)
		kt_cli_nomem();
	kt_buf_adds(&b, head);
	kt_buf_adds(&b, "const TITLE = ");
	kt_buf_adds(&b, tj);
	kt_buf_adds(&b, ", FILE = ");
	kt_buf_adds(&b, fj);
	kt_buf_adds(&b, ";\n");
	kt_buf_adds(&b, body);
	if (b.err)
		kt_cli_nomem();
	free(tj);
	free(fj);
	json_decref(t);
	json_decref(f);
	s->page = b.p;
	s->npage = b.n;
}

/* ------------------------------------------------------------------ */
/* The server. */

static void
on_signal(int sig)
{
	(void)sig;	/* pselect returns EINTR: the loop ends */
}

/* Listen on the loopback address; exit 2 when the port is taken. */
static void
listen_loopback(struct serve *s)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *addr = s->o.v6 ? "::1" : "127.0.0.1";
	int one = 1;

	memset(&ss, 0, sizeof(ss));
	if (s->o.v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)s->o.port);
		a->sin6_addr = in6addr_loopback;
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)s->o.port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*a);
	}
	if ((s->lfd = socket(ss.ss_family, SOCK_STREAM, 0)) == -1) {
		kt_cli_warn("socket: %s", strerror(errno));
		exit(2);
	}
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s->o.v6)
		setsockopt(s->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&ss, sl) == -1 ||
	    listen(s->lfd, 16) == -1) {
		kt_cli_warn("%s%s%s:%d: %s", s->o.v6 ? "[" : "", addr,
		    s->o.v6 ? "]" : "", s->o.port, strerror(errno));
		exit(2);
	}
	sl = sizeof(ss);
	if (getsockname(s->lfd, (struct sockaddr *)&ss, &sl) == -1) {
		kt_cli_warn("getsockname: %s", strerror(errno));
		exit(2);
	}
	s->port = ntohs(s->o.v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	snprintf(s->hosts[0], sizeof(s->hosts[0]), "%s:%d", s->o.v6 ?
	    "[::1]" : "127.0.0.1", s->port);
	snprintf(s->hosts[1], sizeof(s->hosts[1]), "localhost:%d", s->port);
	s->hosts[2][0] = '\0';
}

/* Write all of p; 0, or -1 when the client went away or stalled. */
static int
send_all(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		if ((k = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Answer with status and a short text body (or none for HEAD). */
static void
reply(int fd, int head, const char *status, const char *extra)
{
	char b[512];
	int n;

	n = snprintf(b, sizeof(b), "HTTP/1.1 %s\r\nContent-Type: text/plain; "
	    "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n"
	    "%s\r\n%s\n", status, strlen(status) + 1, extra ? extra : "",
	    head ? "" : status);
	if (n > 0 && (size_t)n < sizeof(b))
		send_all(fd, b, head ? (size_t)n - strlen(status) - 1 :
		    (size_t)n);
}

/* The value of header name in the request's headers, or NULL. */
static const char *
header(char *req, const char *name, size_t *len)
{
	size_t nl = strlen(name);
	char *p = strstr(req, "\r\n");

	while (p != NULL && p[2] != '\r') {
		char *line = p + 2, *e = strstr(line, "\r\n");

		if (e == NULL)
			return NULL;
		if ((size_t)(e - line) > nl && line[nl] == ':' &&
		    strncasecmp(line, name, nl) == 0) {
			char *v = line + nl + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			*len = (size_t)(e - v);
			while (*len > 0 && (v[*len - 1] == ' ' ||
			    v[*len - 1] == '\t'))
				(*len)--;
			return v;
		}
		p = e;
	}
	return NULL;
}

/* Is the Host header one of the loopback names of this server? */
static int
host_ok(const struct serve *s, char *req)
{
	size_t n, i;
	const char *h = header(req, "Host", &n);

	if (h == NULL)
		return 0;
	for (i = 0; i < 3 && s->hosts[i][0] != '\0'; i++)
		if (n == strlen(s->hosts[i]) && memcmp(h, s->hosts[i], n) == 0)
			return 1;
	return 0;
}

/*
 * Serve one connection.  Returns 1 when the trace was sent in full (a
 * GET), else 0.
 */
static int
handle(struct serve *s, int fd)
{
	static const char cors[] =
	    "Access-Control-Allow-Origin: " UI_ORIGIN "\r\n"
	    "Vary: Origin\r\n";
	char req[MAX_HEADER + 1], *sp, *path, *q, hdr[768];
	size_t got = 0;
	ssize_t k;
	int head, n, is_trace, is_page;
	struct timeval tv = { IO_SECONDS, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		if (got == MAX_HEADER) {
			reply(fd, 0, "431 Request Header Fields Too Large",
			    NULL);
			return 0;
		}
		if ((k = read(fd, req + got, MAX_HEADER - got)) == -1 &&
		    errno == EINTR)
			continue;
		if (k <= 0)
			return 0;	/* gone, or too slow */
		got += (size_t)k;
		req[got] = '\0';
		if (memchr(req, '\0', got) != NULL) {
			reply(fd, 0, "400 Bad Request", NULL);
			return 0;
		}
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	/* The request line: METHOD SP PATH SP HTTP/1.x */
	if ((sp = strchr(req, ' ')) == NULL || sp == req ||
	    (q = strchr(sp + 1, ' ')) == NULL || strncmp(q + 1, "HTTP/1.", 7)
	    != 0 || sp[1] != '/') {
		reply(fd, 0, "400 Bad Request", NULL);
		return 0;
	}
	*sp = '\0';
	*q = '\0';
	path = sp + 1;
	head = strcmp(req, "HEAD") == 0;
	*q = ' ';	/* header() looks past the request line */
	if (!host_ok(s, q)) {
		reply(fd, head, "403 Forbidden", NULL);
		return 0;
	}
	*q = '\0';
	if ((q = strchr(path, '?')) != NULL)
		*q = '\0';
	is_trace = strcmp(path, s->trace_path) == 0;
	is_page = strcmp(path, s->page_path) == 0;
	if (!is_trace && !is_page) {
		reply(fd, head, "404 Not Found", NULL);
		return 0;
	}
	if (is_trace && strcmp(req, "OPTIONS") == 0) {
		n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 204 No Content\r\n%s"
		    "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
		    "Access-Control-Allow-Headers: Range\r\n"
		    "Access-Control-Max-Age: 600\r\nContent-Length: 0\r\n"
		    "Connection: close\r\n\r\n", cors);
		send_all(fd, hdr, (size_t)n);
		return 0;
	}
	if (!head && strcmp(req, "GET") != 0) {
		reply(fd, 0, "405 Method Not Allowed", is_trace ?
		    "Allow: GET, HEAD, OPTIONS\r\n" : "Allow: GET, HEAD\r\n");
		return 0;
	}
	n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\n"
	    "Content-Type: %s\r\nContent-Length: %zu\r\n"
	    "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
	    "Referrer-Policy: no-referrer\r\n%sConnection: close\r\n\r\n",
	    is_trace ? "application/json" : "text/html; charset=utf-8",
	    is_trace ? s->n : s->npage, is_trace ? cors : "");
	if (send_all(fd, hdr, (size_t)n) == -1 || head)
		return 0;
	if (is_page)
		return send_all(fd, s->page, s->npage), 0;
	return send_all(fd, s->data, s->n) == 0;
}

/* Accept and serve until a signal, or the first full transfer (--once). */
static void
run(struct serve *s)
{
	fd_set rf;
	sigset_t block, empty;
	struct sigaction sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* The signals arrive only while waiting, where pselect says so. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigemptyset(&empty);
	for (;;) {
		FD_ZERO(&rf);
		FD_SET(s->lfd, &rf);
		if (pselect(s->lfd + 1, &rf, NULL, NULL, NULL, &empty) == -1) {
			if (errno == EINTR)
				return;		/* SIGINT or SIGTERM */
			kt_cli_warn("poll: %s", strerror(errno));
			exit(2);
		}
		if ((fd = accept(s->lfd, NULL, NULL)) == -1)
			continue;
		if (handle(s, fd) && s->o.once) {
			close(fd);
			return;
		}
		close(fd);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "member", required_argument, NULL, 'm' },
		{ "once", no_argument, NULL, '1' },
		{ "port", required_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct serve s;
	struct kt_source *src;
	struct kt_reader *rd;
	const char *path, *slash;
	char *end;
	long v;
	int ch;

	kt_cli_init("kt-serve");
	memset(&s, 0, sizeof(s));
	s.o.max = DEFAULT_MAX;
	s.o.co.level = -1;
	while ((ch = getopt_long(argc, argv, "16hM:m:p:V", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case '1':
			s.o.once = 1;
			break;
		case '6':
			s.o.v6 = 1;
			break;
		case 'M':
			if (parse_size(optarg, &s.o.max) == -1 || s.o.max == 0) {
				kt_cli_warn("--max-size: '%s' is not a size "
				    "(N, Nk, NM or NG)", optarg);
				return 2;
			}
			break;
		case 'p':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || errno != 0 ||
			    v < 1 || v > 65535) {
				kt_cli_warn("--port: '%s' is not a port "
				    "(1-65535)", optarg);
				return 2;
			}
			s.o.port = (int)v;
			break;
		default:
			kt_cli_opt(&s.o.co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one trace at a time");
		usage(stderr);
		return 2;
	}
	path = argc == 1 ? argv[0] : "-";
	kt_cli_inputs(argv, argc);
	rd = kt_cli_open_one(path, path, s.o.co.member, 0, &src);
	slurp(&s, rd, kt_reader_name(rd));
	file_name(&s, path);
	make_token(&s);
	snprintf(s.page_path, sizeof(s.page_path), "/%s/", s.token);
	snprintf(s.trace_path, sizeof(s.trace_path), "/%s/%s", s.token,
	    s.file);
	slash = strrchr(path, '/');
	make_page(&s, strcmp(path, "-") == 0 ? "stdin" : slash != NULL ?
	    slash + 1 : path);
	kt_reader_free(rd);
	kt_source_close(src);
	listen_loopback(&s);
	printf("http://%s%s\n", s.hosts[0], s.page_path);
	fflush(stdout);
	fprintf(stderr, "kt-serve: %zu bytes; open the URL above in a browser "
	    "(it opens the Perfetto UI and hands it the trace); %s\n", s.n,
	    s.o.once ? "exits after one transfer" : "Ctrl-C stops");
	if (s.port == 9001 && !s.o.v6)
		fprintf(stderr, "kt-serve: or open https://ui.perfetto.dev/"
		    "#!/?url=http://127.0.0.1:9001%s\n", s.trace_path);
	run(&s);
	close(s.lfd);
	free(s.data);
	free(s.page);
	return 0;
}
