/*
 * kt-layer-track: add a guide track of transformer layers, L0 .. L<n-1>,
 * beside the GPU streams: one X event per layer, from the layer's anchor
 * kernel to the next layer's anchor.  The anchor is a kernel that the
 * user names (--anchor-regex) and trusts to run once per layer; the
 * filter refuses (exit 2) whenever the anchors do not say unambiguously
 * which one is L0 of each pass, and (exit 1) an anchor that runs several
 * times per layer, or once per several layers.  A stream is no identity of a pass: a CUDA graph puts
 * a node on any stream.  --suggest lists candidate anchors, ranked by
 * how alike the kernel sets between consecutive anchors are and how
 * regular their intervals.
 *
 * Every input event is written as it was; the guide events and their
 * thread metadata come after them.  The input is read first for the
 * anchors (standard input is kept in a temporary file), so that nothing
 * is written when they are refused.  A plain JSON file that needed no
 * repair is then copied byte for byte, the guides put in after its last
 * event; any other input is read again through the writer.
 */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <getopt.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kt.h"

#define GUIDE_TID	2000000000LL	/* the first guide row's tid */
#define GUIDE_SUFFIX	") \xe2\x80\x94 anchor intervals"
#define SPACING_FACTOR	3	/* mixed passes: an interval this far off */
#define ALIKE_NUM	3	/* several per layer: consecutive intervals */
#define ALIKE_DEN	4	/* share under 3/4 of what those q apart do */
#define PID_TEXT	128	/* pid_text()'s buffer */
#define WHY_TEXT	1024	/* mixed()'s buffer */

/* A kernel the filter keeps: an anchor, an end anchor, or (suggest) any. */
struct kern {
	int64_t		 ts;
	int64_t		 end;		/* ts + dur */
	uint64_t	 index;		/* file order */
	int64_t		 stream;	/* tid, or -1 */
	int64_t		 corr;		/* args.correlation, or -1 */
	uint32_t	 name;		/* in names */
	uint32_t	 gpu;		/* in gpus */
	int		 is_end;	/* matched the end regex */
	int		 is_anchor;
};

/* A GPU: a pid (raw JSON text) and args.device. */
struct gpu {
	char		*pid;
	size_t		 pidlen;
	int64_t		 device;	/* -1 when unknown */
	uint64_t	 anchors;
};

/* An existing guide row or guide event, or a thread's sort index. */
struct row {
	char		*pid;
	size_t		 pidlen;
	int64_t		 tid;
	char		*name;		/* thread name (rows) or event name */
	int64_t		 ts, dur;	/* guide events */
	int64_t		 sort;		/* sort index rows */
};

/* A CPU-side event for --suggest: a launch, or a cpu_op. */
struct cpuev {
	int64_t		 key;		/* correlation (launch) or ts (op) */
	int64_t		 ts, end;
	uint32_t	 thread;	/* in threads */
	uint32_t	 name;		/* in opnames */
};

/* One guide to write. */
struct guide {
	int64_t		 ts, end;
	int64_t		 layer;
	int64_t		 pass;
	size_t		 anchor;	/* index among the sorted anchors */
};

struct opts {
	const char	*anchor_re;
	const char	*end_re;
	int64_t		 nlayers;	/* 0: not given */
	int64_t		 offset;
	int64_t		 passes;	/* 0: every complete pass */
	int64_t		 first;
	const char	*phase;
	const char	*evidence;
	const char	*pid;
	int64_t		 device;
	int		 has_device;
	int		 suggest;
	const char	*report;
	struct kt_cli_opts co;	/* -l, -m, -o, -S */
};

/*
 * One run's state: the options, what the first pass collected, and the
 * decision.  main() makes it; every step is handed it.
 */
struct lt {
	struct opts	 o;
	regex_t		 anchor_rx, end_rx;
	struct kt_intern *names;	/* kernel names, raw JSON text */
	unsigned char	*match;		/* per name: 1 anchor, 2 end, 4 known */
	size_t		 nmatch;
	struct kt_intern *gputab;
	struct gpu	*gpus;
	size_t		 ngpus;
	struct kern	*kerns;
	size_t		 nkerns, capkerns;
	struct row	*rows, *gevs, *sorts;
	size_t		 nrows, ngevs, nsorts;
	struct kt_intern *threads, *opnames;
	struct cpuev	*launches, *ops;
	size_t		 nlaunches, nops, caplaunches, capops;
	int64_t		 tstart;	/* the earliest ts */
	int		 collecting;	/* pass() collects for decide() */
	uint64_t	 last_end;	/* input offset past the last event */
	uint64_t	 nread;		/* events read */
	struct kt_out	*rawout;	/* splicing: guides go straight here */
	struct kt_buf	 nbuf;		/* scratch: an unescaped name */
	struct kt_sha256_job *hash;	/* the input's, for the report */

	/* Labelling. */
	struct guide	*guides;
	size_t		 nguides;
	const struct gpu *chosen;
	struct kern	*anc;		/* the chosen GPU's anchors, by time */
	size_t		 nanc;
	struct kern	*ends, *gk;	/* its end anchors, all its kernels */
	size_t		 nends, ngk;
	int64_t		 guide_tid, guide_sort;
	int		 has_sort;
	int		 present;	/* the same guides are in the input */
	char		*trackname;
	uint32_t	 anchor_name;
	/* The input and the outputs. */
	const char	*path;		/* the file read (stdin: a copy) */
	const char	*input;		/* its name in messages */
	const char	*report;	/* the report's path, or NULL */
	char		 rbuf[4200];	/* the default report's path */
};

/* A run's state with the defaults: no option given yet. */
static struct lt *
lt_new(void)
{
	struct lt *lt;

	if ((lt = calloc(1, sizeof(*lt))) == NULL)
		kt_cli_nomem();
	lt->o.co.level = -1;
	lt->o.phase = "all";
	lt->tstart = INT64_MAX;
	lt->collecting = 1;
	lt->nbuf = (struct kt_buf)KT_BUF_INIT;
	return lt;
}

/* Free n rows. */
static void
rows_free(struct row *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].pid);
		free(r[i].name);
	}
	free(r);
}

/* Free a run's state. */
static void
lt_free(struct lt *lt)
{
	size_t i;

	if (lt->o.anchor_re != NULL)
		regfree(&lt->anchor_rx);
	if (lt->o.end_re != NULL)
		regfree(&lt->end_rx);
	kt_intern_free(lt->names);
	kt_intern_free(lt->gputab);
	kt_intern_free(lt->threads);
	kt_intern_free(lt->opnames);
	free(lt->match);
	for (i = 0; i < lt->ngpus; i++)
		free(lt->gpus[i].pid);
	free(lt->gpus);
	free(lt->kerns);
	rows_free(lt->rows, lt->nrows);
	rows_free(lt->gevs, lt->ngevs);
	rows_free(lt->sorts, lt->nsorts);
	free(lt->launches);
	free(lt->ops);
	kt_buf_free(&lt->nbuf);
	free(lt->guides);
	free(lt->anc);
	free(lt->ends);
	free(lt->gk);
	free(lt->trackname);
	free(lt);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-layer-track -a regex -n layers [-S] [-d device] [-E text]\n"
	    "                      [-e regex] [-f first] [-k offset] [-l level]\n"
	    "                      [-m glob] [-o file] [-P passes] [-p phase]\n"
	    "                      [-r report] [--pid pid] [--spool-max size]\n"
	    "                      [file]\n"
	    "       kt-layer-track --suggest [-n layers] [-d device] [--pid pid]\n"
	    "                      [-o file] [--spool-max size] [file]\n"
	    "  -a, --anchor-regex RE      the anchor kernel, once per layer (ERE)\n"
	    "  -d, --device D             only anchors on device D\n"
	    "  -E, --evidence TEXT        why the anchor is trusted (in the report)\n"
	    "  -e, --end-anchor-regex RE  a kernel ending each layer: the last\n"
	    "                             guide of a pass ends when it completes\n"
	    "  -f, --first-layer F        number the layers from F (default 0)\n"
	    "  -k, --anchor-offset K      the first L0 is the K-th anchor (from 0)\n"
	    "  -l, --level N              gzip level 0-9 for a .gz output\n"
	    "  -m, --member GLOB          the archive member to read\n"
	    "  -n, --num-layers N         layers per pass\n"
	    "  -o, --output FILE          write FILE atomically (.gz: gzip)\n"
	    "  -P, --passes P             label only the first P complete passes\n"
	    "  -p, --phase NAME           the phase, in the track name\n"
	    "  -r, --report FILE          the report (default with -o: FILE.layers.json)\n"
	    "  -s, --suggest              list candidate anchors; write no trace\n"
	    "  -S, --strict               refuse damaged input\n"
	    "      --spool-max SIZE       cap on copying a pipe or stdin\n"
	    "                             (default 64G; K, M, G, T)\n"
	    "      --pid PID              only anchors on process PID\n"
	    "  -h, --help, -V, --version\n");
}

static char *
dup_n(const char *s, size_t n)
{
	char *p;

	if ((p = malloc(n + 1)) == NULL)
		kt_cli_nomem();
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Grow *p (of *cap elements of size sz) to hold n + 1. */
static void
grow(void *pp, size_t *cap, size_t n, size_t sz)
{
	void **p = pp;
	size_t c;
	void *q;

	if (n < *cap)
		return;
	c = *cap ? *cap * 2 : 64;
	if ((q = realloc(*p, c * sz)) == NULL)
		kt_cli_nomem();
	*p = q;
	*cap = c;
}

/*
 * The JSON string text s[0..n) (with quotes) unescaped into lt->nbuf
 * (kt_json_unescape), as a C string: a NUL becomes a space.
 */
static const char *
unescape(struct lt *lt, const char *s, size_t n)
{
	size_t i;

	if (n >= 2 && s[0] == '"') {
		s++;
		n -= 2;
	}
	if (kt_json_unescape(s, n, &lt->nbuf) == -1 ||
	    kt_buf_addc(&lt->nbuf, '\0') == -1)
		kt_cli_nomem();
	for (i = 0; i + 1 < lt->nbuf.n; i++)
		if (lt->nbuf.p[i] == '\0')
			lt->nbuf.p[i] = ' ';
	return lt->nbuf.p;
}

/* Compile an extended regex or exit 2. */
static void
compile(regex_t *rx, const char *re, const char *opt)
{
	char msg[256];
	int rc;

	if (kt_regex_check(re, msg, sizeof(msg)) == -1) {
		kt_cli_warn("%s: '%s': %s", opt, re, msg);
		exit(2);
	}
	if ((rc = regcomp(rx, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, rx, msg, sizeof(msg));
		kt_cli_warn("%s: '%s': %s", opt, re, msg);
		exit(2);
	}
}

/* The match bits of kernel name id (1 anchor, 2 end anchor). */
static int
name_match(struct lt *lt, uint32_t id)
{
	size_t len;
	const char *s;
	int m = 4;

	if (id >= lt->nmatch) {
		size_t n = lt->nmatch ? lt->nmatch : 256;
		unsigned char *p;

		while (n <= id)
			n *= 2;
		if ((p = realloc(lt->match, n)) == NULL)
			kt_cli_nomem();
		memset(p + lt->nmatch, 0, n - lt->nmatch);
		lt->match = p;
		lt->nmatch = n;
	}
	if (lt->match[id])
		return lt->match[id] & 3;
	s = kt_intern_get(lt->names, id, &len);
	s = unescape(lt, s, len);
	if (lt->o.anchor_re != NULL && regexec(&lt->anchor_rx, s, 0, NULL,
	    0) == 0)
		m |= 1;
	if (lt->o.end_re != NULL && regexec(&lt->end_rx, s, 0, NULL, 0) == 0)
		m |= 2;
	lt->match[id] = (unsigned char)m;
	return m & 3;
}

/* The GPU id of a kernel event (pid and args.device). */
static uint32_t
gpu_of(struct lt *lt, const struct kt_event *ev)
{
	struct kt_buf *k = &lt->nbuf;
	const char *p;
	size_t n;
	int64_t dev = -1, id;

	kt_event_id_text(ev, KT_F_PID, &p, &n);		/* by value */
	if (ev->f[KT_F_PID].type == KT_NONE) {
		p = "null";
		n = 4;
	}
	if (kt_event_field_int(ev, KT_F_DEVICE, &dev) == -1 &&
	    kt_event_field_int(ev, KT_F_PID, &dev) == -1)
		dev = -1;
	k->n = 0;
	kt_buf_add(k, p, n);
	kt_buf_add(k, &dev, sizeof(dev));
	if (k->p == NULL || (id = kt_intern_put(lt->gputab, k->p, k->n)) == -1)
		kt_cli_nomem();
	if ((size_t)id == lt->ngpus) {
		struct gpu *g;

		if ((g = realloc(lt->gpus, (lt->ngpus + 1) * sizeof(*g))) ==
		    NULL)
			kt_cli_nomem();
		lt->gpus = g;
		g[lt->ngpus].pid = dup_n(p, n);
		g[lt->ngpus].pidlen = n;
		g[lt->ngpus].device = dev;
		g[lt->ngpus].anchors = 0;
		lt->ngpus++;
	}
	return (uint32_t)id;
}

/* A string field's text in a new C string (unescaped), or NULL. */
static char *
field_str(struct lt *lt, const struct kt_event *ev, const struct kt_val *v)
{
	const char *s;

	if (v->type != KT_STRING)
		return NULL;
	s = unescape(lt, ev->raw + v->off, v->len);
	return dup_n(s, strlen(s));
}

/* A row's pid (raw JSON text, null when none) and tid (-1) from ev. */
static void
row_thread(const struct kt_event *ev, struct row *r)
{
	const char *p;
	size_t n;

	if (ev->f[KT_F_PID].type == KT_NONE)
		p = NULL, n = 0;
	else
		kt_event_id_text(ev, KT_F_PID, &p, &n);	/* by value */
	r->pid = dup_n(p ? p : "null", p ? n : 4);
	r->pidlen = p ? n : 4;
	if (kt_event_field_int(ev, KT_F_TID, &r->tid) == -1)
		r->tid = -1;
}

/* Keep what the decision needs from metadata events. */
static void
collect_meta(struct lt *lt, const struct kt_event *ev)
{
	struct kt_val v;
	struct row r;

	memset(&r, 0, sizeof(r));
	if (kt_event_field_is(ev, KT_F_NAME, "thread_name")) {
		if (kt_event_find(ev, &ev->f[KT_F_ARGS], "name", &v) == -1 ||
		    v.type != KT_STRING || v.len < sizeof(KT_GUIDE_PREFIX) ||
		    memcmp(ev->raw + v.off + 1, KT_GUIDE_PREFIX,
		    sizeof(KT_GUIDE_PREFIX) - 1) != 0)
			return;
		r.name = field_str(lt, ev, &v);
		if ((lt->rows = realloc(lt->rows, (lt->nrows + 1) *
		    sizeof(*lt->rows))) == NULL)
			kt_cli_nomem();
		row_thread(ev, &r);
		lt->rows[lt->nrows++] = r;
	} else if (kt_event_field_is(ev, KT_F_NAME, "thread_sort_index")) {
		if (kt_event_sort_index(ev, &r.sort) == -1)
			return;
		if ((lt->sorts = realloc(lt->sorts, (lt->nsorts + 1) *
		    sizeof(*lt->sorts))) == NULL)
			kt_cli_nomem();
		row_thread(ev, &r);
		lt->sorts[lt->nsorts++] = r;
	}
}

/* The id of ev's thread (pid and tid text) in threads. */
static uint32_t
thread_of(struct lt *lt, const struct kt_event *ev)
{
	int64_t id;

	lt->nbuf.n = 0;
	if (kt_event_thread_key(ev, &lt->nbuf) == -1 ||
	    (id = kt_intern_put(lt->threads, lt->nbuf.p, lt->nbuf.n)) == -1)
		kt_cli_nomem();
	return (uint32_t)id;
}

/* --suggest: keep launches (by correlation) and cpu_ops. */
static void
collect_cpu(struct lt *lt, const struct kt_event *ev)
{
	struct cpuev c;
	const char *p;
	size_t n;
	int64_t id;

	if (!(ev->flags & KT_EV_TS))
		return;
	memset(&c, 0, sizeof(c));
	c.ts = ev->ts;
	c.end = ev->ts + ((ev->flags & KT_EV_DUR) ? ev->dur : 0);
	if ((ev->kind == KT_CUDA_RUNTIME || ev->kind == KT_CUDA_DRIVER) &&
	    kt_event_field_int(ev, KT_F_CORR, &c.key) == 0) {
		c.thread = thread_of(lt, ev);
		if ((p = kt_event_field(ev, KT_F_NAME, &n)) == NULL) {
			p = "\"\"";
			n = 2;
		}
		if ((id = kt_intern_put(lt->opnames, p, n)) == -1)
			kt_cli_nomem();
		c.name = (uint32_t)id;
		grow(&lt->launches, &lt->caplaunches, lt->nlaunches, sizeof(c));
		lt->launches[lt->nlaunches++] = c;
	} else if (ev->kind == KT_CPU_OP && ev->ph == 'X' &&
	    (p = kt_event_field(ev, KT_F_NAME, &n)) != NULL) {
		c.thread = thread_of(lt, ev);
		if ((id = kt_intern_put(lt->opnames, p, n)) == -1)
			kt_cli_nomem();
		c.name = (uint32_t)id;
		c.key = c.ts;
		grow(&lt->ops, &lt->capops, lt->nops, sizeof(c));
		lt->ops[lt->nops++] = c;
	}
}

/* An existing guide event (of any pid and row), for place(). */
static void
collect_guide(struct lt *lt, const struct kt_event *ev)
{
	struct row r;
	const char *p;
	size_t n;

	memset(&r, 0, sizeof(r));
	row_thread(ev, &r);
	p = kt_event_field(ev, KT_F_NAME, &n);
	r.name = dup_n(p ? p : "", p ? n : 0);
	r.ts = ev->ts;
	r.dur = (ev->flags & KT_EV_DUR) ? ev->dur : -1;
	if ((lt->gevs = realloc(lt->gevs, (lt->ngevs + 1) *
	    sizeof(*lt->gevs))) == NULL)
		kt_cli_nomem();
	lt->gevs[lt->ngevs++] = r;
}

/* A kernel: keep it, marked when it is an anchor or an end anchor. */
static void
collect_kernel(struct lt *lt, const struct kt_event *ev)
{
	struct kern k;
	const char *p;
	size_t n;
	int64_t id, dur = 0;
	int m;

	if ((p = kt_event_field(ev, KT_F_NAME, &n)) == NULL ||
	    ev->f[KT_F_NAME].type != KT_STRING)
		return;
	if ((id = kt_intern_put(lt->names, p, n)) == -1)
		kt_cli_nomem();
	/* Every kernel: the kernel sets between anchors need them all. */
	m = lt->o.suggest ? 0 : name_match(lt, (uint32_t)id);
	if (ev->flags & KT_EV_DUR)
		dur = ev->dur;
	memset(&k, 0, sizeof(k));
	k.ts = ev->ts;
	k.end = ev->ts + (dur > 0 ? dur : 0);
	k.index = ev->index;
	k.name = (uint32_t)id;
	if (kt_event_field_int(ev, KT_F_TID, &k.stream) == -1)
		k.stream = -1;
	if (kt_event_field_int(ev, KT_F_CORR, &k.corr) == -1)
		k.corr = -1;
	k.gpu = gpu_of(lt, ev);
	k.is_anchor = m & 1;
	k.is_end = (m & 2) != 0;
	grow(&lt->kerns, &lt->capkerns, lt->nkerns, sizeof(k));
	lt->kerns[lt->nkerns++] = k;
}

/* Look at one event for what the decision needs. */
static void
collect(struct lt *lt, const struct kt_event *ev)
{
	if (ev->ph == 'M') {
		collect_meta(lt, ev);
		return;
	}
	if ((ev->flags & KT_EV_TS) && ev->ts < lt->tstart)
		lt->tstart = ev->ts;
	if (ev->ph != 'X' || !(ev->flags & KT_EV_TS))
		return;
	if (ev->kind == KT_KERNEL)
		collect_kernel(lt, ev);
	else if (lt->o.suggest)
		collect_cpu(lt, ev);
	else if (kt_event_field_is(ev, KT_F_CAT, KT_CAT_LAYER_GUIDE))
		collect_guide(lt, ev);
}

/* ------------------------------------------------------------------ */
/* Reading and writing. */

/* Open path and return its one trace (several: an error). */
static struct kt_reader *
open_trace(struct lt *lt, const char *path, unsigned flags,
    struct kt_source **srcp)
{
	return kt_cli_open_one(path, path, lt->o.co.member, flags, srcp);
}

/* After the last event: refuse an archive of several traces. */
static void
close_trace(struct kt_source *src, struct kt_reader *r, const char *name)
{
	kt_reader_free(r);
	kt_cli_one_trace(src, name, "several traces; choose one with "
	    "--member", 0);
	kt_source_close(src);
}

/*
 * Read every event of r; collect it, and write it to w when w is not
 * NULL.  Returns the next free row number.  Without w, the events are
 * read and scanned on every CPU (kt_ahead_start): the writer would need
 * the reader's top-level keys while a thread has it.
 */
static uint64_t
pass(struct lt *lt, struct kt_reader *r, struct kt_writer *w)
{
	struct kt_event buf;
	const struct kt_event *ev;
	struct kt_error err;
	struct kt_ahead *ah = NULL;
	const struct kt_meta *metas;
	size_t nm;
	uint64_t next = 0, count = 0;
	int rc, begun = w == NULL;

	if (w == NULL && kt_cli_threads())
		ah = kt_ahead_start(r, kt_cli_progress);
	for (;;) {
		rc = kt_ahead_get(ah, r, &buf, &ev, &err);
		if (rc == -1)
			kt_cli_die(&err);
		if (!begun) {
			struct kt_rows si;
			int hassi = kt_reader_rows(r, &si, NULL);

			metas = kt_reader_metas(r, &nm);
			(void)kt_cli_keep_rank(w, r);
			if (kt_writer_begin_rows(w, metas, nm, hassi ? &si :
			    NULL) == -1)
				return UINT64_MAX;
			begun = 1;
		}
		if (rc == 0)
			break;
		if (ah == NULL && (++count & 0xffff) == 0)
			kt_cli_progress(r);
		if (ev->index >= next)
			next = ev->index + 1;
		lt->nread++;
		lt->last_end = ev->end;
		if (lt->collecting)
			collect(lt, ev);
		if (w != NULL && kt_writer_event(w, ev) == -1)
			return UINT64_MAX;
	}
	kt_ahead_stop(ah);
	kt_cli_progress_done();
	return next;
}

/* ------------------------------------------------------------------ */
/* The decision. */

static int
cmp_kern(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* By GPU, then as cmp_kern. */
static int
cmp_gpu_kern(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return cmp_kern(a, b);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v); the lower one for even n. */
static int64_t
median(int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	return v[(n - 1) / 2];
}

/*
 * A pid's text as the user would write it (quotes removed), in buf (of
 * PID_TEXT bytes); returns buf.
 */
static const char *
pid_text(const char *p, size_t n, char *buf)
{
	if (n >= 2 && p[0] == '"') {
		p++;
		n -= 2;
	}
	snprintf(buf, PID_TEXT, "%.*s", (int)(n < 100 ? n : 100), p);
	return buf;
}

/* Does GPU g pass --pid and --device? */
static int
gpu_chosen(const struct lt *lt, const struct gpu *g)
{
	char pt[PID_TEXT];

	if (lt->o.pid != NULL && strcmp(pid_text(g->pid, g->pidlen, pt),
	    lt->o.pid) != 0)
		return 0;
	if (lt->o.has_device && g->device != lt->o.device)
		return 0;
	return 1;
}

/* A kernel name, unescaped and cut for a message. */
static const char *
kname(struct lt *lt, uint32_t id, size_t max)
{
	size_t len;
	const char *raw = kt_intern_get(lt->names, id, &len);
	const char *s = unescape(lt, raw, len);

	if (strlen(s) > max)
		lt->nbuf.p[max] = '\0';
	return s;
}

/* Print "refused: " and why (printf-like) on one line. */
static void refused(const char *, va_list)
    __attribute__((format(printf, 1, 0)));

static void
refused(const char *fmt, va_list ap)
{
	kt_cli_progress_done();
	fprintf(stderr, "%s: refused: ", kt_cli_name());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Refuse: print why (printf-like) and exit 2, removing the output. */
static void refuse(const char *, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
refuse(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	refused(fmt, ap);
	va_end(ap);
	kt_cli_die(NULL);
}

/*
 * Refuse an anchor that runs several times per layer: a condition of the
 * data, so exit 1.  It is called before any output is opened.
 */
static void refuse_periodic(const char *, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
refuse_periodic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	refused(fmt, ap);
	va_end(ap);
	exit(1);
}

/*
 * The mixed-pass check over passes of n anchors a[0..np*n): every pass
 * must run the same kernels in the same order (on any streams: a CUDA
 * graph puts a node on whatever stream it likes), and
 * (with two passes or more) the interval after each position must be
 * within SPACING_FACTOR of its median over the passes, or differ from
 * it by no more than half the median interval of all.  Returns NULL
 * when they agree, else what differs, written in why (of WHY_TEXT
 * bytes).
 */
static const char *
mixed(struct lt *lt, const struct kern *a, size_t n, size_t np, char *why)
{
	int64_t *v, all;
	size_t p, j;

	for (p = 1; p < np; p++)
		for (j = 0; j < n; j++) {
			const struct kern *x = &a[j], *y = &a[p * n + j];

			if (x->name != y->name) {
				char n1[80];

				snprintf(n1, sizeof(n1), "%s", kname(lt,
				    x->name, 60));
				snprintf(why, WHY_TEXT, "anchor %zu of pass "
				    "0 is '%s' but anchor %zu of pass %zu is "
				    "'%s'", j, n1, j, p, kname(lt, y->name,
				    60));
				return why;
			}
		}
	if (np < 2 || n < 2)
		return NULL;
	if ((v = calloc(np * n, sizeof(*v))) == NULL)
		kt_cli_nomem();
	/* The typical interval: the median over every pass and position. */
	for (p = 0; p < np; p++)
		for (j = 0; j + 1 < n; j++)
			v[p * (n - 1) + j] = a[p * n + j + 1].ts -
			    a[p * n + j].ts;
	all = median(v, np * (n - 1));
	for (j = 0; j + 1 < n; j++) {
		int64_t m;

		for (p = 0; p < np; p++)
			v[p] = a[p * n + j + 1].ts - a[p * n + j].ts;
		m = median(v, np);
		for (p = 0; p < np; p++) {
			int64_t d = a[p * n + j + 1].ts - a[p * n + j].ts;

			if ((d > SPACING_FACTOR * m || d * SPACING_FACTOR <
			    m) && 2 * (d > m ? d - m : m - d) > all) {
				snprintf(why, WHY_TEXT, "the interval from "
				    "anchor %zu to %zu is %lld ns in pass %zu "
				    "but its median over the %zu passes is %lld "
				    "ns (more than %dx apart, and by more than "
				    "half the median interval, %lld ns)", j,
				    j + 1, (long long)d, p, np, (long long)m,
				    SPACING_FACTOR, (long long)all);
				free(v);
				return why;
			}
		}
	}
	free(v);
	return NULL;
}

/*
 * The kernel sets between consecutive anchors: for each interval within
 * a pass (anchor j to j+1 of pass p, index p * (n - 1) + j), the sorted
 * name ids of the GPU's kernels that start in [anchor j, anchor j+1).
 */
struct sets {
	uint32_t	*ids;
	size_t		*off;		/* interval i: ids[off[i] .. off[i+1]) */
	size_t		 m;		/* intervals per pass: n - 1 */
	size_t		 np;
};

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The first of the time-sorted kernels g[0..ng) starting at or after t. */
static size_t
first_at(const struct kern *g, size_t ng, int64_t t)
{
	size_t lo = 0, hi = ng;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Fill s from the anchors a[0..np*n) and the GPU's kernels g[0..ng). */
static void
sets_make(struct sets *s, const struct kern *a, size_t n, size_t np,
    const struct kern *g, size_t ng)
{
	size_t p, j, i = 0, total = 0, cap;

	memset(s, 0, sizeof(*s));
	s->m = n > 0 ? n - 1 : 0;
	s->np = np;
	for (p = 0; p < np; p++)
		if (n > 1)
			total += first_at(g, ng, a[p * n + n - 1].ts) -
			    first_at(g, ng, a[p * n].ts);
	cap = total + 1;
	if ((s->ids = calloc(cap, sizeof(*s->ids))) == NULL ||
	    (s->off = calloc(np * s->m + 1, sizeof(*s->off))) == NULL)
		kt_cli_nomem();
	for (p = 0; p < np; p++)
		for (j = 0; j < s->m; j++) {
			size_t k = first_at(g, ng, a[p * n + j].ts);
			size_t e = first_at(g, ng, a[p * n + j + 1].ts);
			size_t at = i;

			s->off[p * s->m + j] = i;
			for (; k < e; k++)
				s->ids[i++] = g[k].name;
			qsort(s->ids + at, i - at, sizeof(*s->ids), cmp_u32);
		}
	s->off[np * s->m] = i;
}

static void
sets_free(struct sets *s)
{
	free(s->ids);
	free(s->off);
}

/* The number of kernels in interval x. */
static size_t
sets_len(const struct sets *s, size_t x)
{
	return s->off[x + 1] - s->off[x];
}

/*
 * The kernels intervals x and y share (a name counted as often as it
 * runs in both); *big gets the larger one's count.
 */
static size_t
sets_shared(const struct sets *s, size_t x, size_t y, size_t *big)
{
	const uint32_t *a = s->ids + s->off[x], *b = s->ids + s->off[y];
	size_t na = sets_len(s, x), nb = sets_len(s, y), i = 0, j = 0, k = 0;

	while (i < na && j < nb)
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else {
			k++;
			i++;
			j++;
		}
	*big = na > nb ? na : nb;
	return k;
}

/*
 * How alike the intervals q apart in a pass are: the kernels they share,
 * summed over the pairs (j, j+q), of *of, the sum of the larger counts.
 */
static uint64_t
sets_apart(const struct sets *s, size_t q, uint64_t *of)
{
	size_t p, j, big;
	uint64_t k = 0;

	*of = 0;
	for (p = 0; p < s->np; p++)
		for (j = 0; j + q < s->m; j++) {
			k += sets_shared(s, p * s->m + j, p * s->m + j + q,
			    &big);
			*of += big;
		}
	return k;
}

static size_t
gcd(size_t x, size_t y)
{
	while (y != 0) {
		size_t t = x % y;

		x = y;
		y = t;
	}
	return x;
}

/*
 * Do the intervals hold copies of one layer each: the largest r such
 * that in every interval every kernel name but its anchor's runs a
 * multiple of r times (the anchor's name once less), each interval with
 * two names or more besides; 0 when some interval has fewer.  The
 * anchors are a[0..np*n).
 */
static size_t
sets_copies(const struct sets *s, const struct kern *a, size_t n)
{
	size_t p, j, i, e, r = 0;

	for (p = 0; p < s->np; p++)
		for (j = 0; j < s->m; j++) {
			size_t x = p * s->m + j, names = 0;

			for (i = s->off[x]; i < s->off[x + 1]; i = e) {
				size_t c;

				for (e = i; e < s->off[x + 1] &&
				    s->ids[e] == s->ids[i]; e++)
					;
				c = e - i;
				if (s->ids[i] == a[p * n + j].name)
					c--;
				if (c == 0)
					continue;
				names++;
				r = gcd(r, c);
			}
			if (names < 2)
				return 0;
		}
	return r;
}

/*
 * The period of the interval lengths over the passes of n anchors
 * a[0..np*n): the smallest q, with 2q <= n - 1, such that the intervals
 * from anchor j to j+1 with j mod q = *r are all more than SPACING_FACTOR
 * times shorter than those with j mod q = *l; 0 when there is none.  The
 * longest short one is *shortmax, the shortest long one *longmin.
 */
static size_t
dur_period(const struct kern *a, size_t n, size_t np, size_t *r, size_t *l,
    int64_t *shortmax, int64_t *longmin)
{
	int64_t *lo, *hi;
	size_t q, p, j, x, y, m = n > 0 ? n - 1 : 0;

	if (np == 0 || m < 4)
		return 0;
	if ((lo = calloc(m, sizeof(*lo))) == NULL ||
	    (hi = calloc(m, sizeof(*hi))) == NULL)
		kt_cli_nomem();
	for (q = 2; 2 * q <= m; q++) {
		for (x = 0; x < q; x++) {
			lo[x] = INT64_MAX;
			hi[x] = INT64_MIN;
		}
		for (p = 0; p < np; p++)
			for (j = 0; j < m; j++) {
				int64_t d = a[p * n + j + 1].ts - a[p * n + j].ts;

				if (d < lo[j % q])
					lo[j % q] = d;
				if (d > hi[j % q])
					hi[j % q] = d;
			}
		for (x = 0; x < q; x++)
			for (y = 0; y < q; y++)
				if (x != y && lo[y] > SPACING_FACTOR * hi[x]) {
					*r = x;
					*l = y;
					*shortmax = hi[x];
					*longmin = lo[y];
					free(lo);
					free(hi);
					return q;
				}
	}
	free(lo);
	free(hi);
	return 0;
}

/*
 * The anchors a[0..np*n) run several times per layer, q times (q >= 2,
 * the smallest, with 2q <= n - 1), when the intervals q apart share more
 * than half of their kernels, and the consecutive ones share less than
 * ALIKE_NUM / ALIKE_DEN as large a part (a layer's kernels are split
 * between them; layers of two kinds that alternate share most); or when
 * the consecutive ones share at most half and the interval lengths
 * alternate with a period of q.  Returns q (1: the consecutive intervals
 * share more than half; 0: neither), with what shows it in why (of
 * WHY_TEXT bytes); consecutive intervals share *sh of *of kernels.
 * When instead each interval holds r >= 2 copies of one set of kernels
 * (sets_copies()), the anchor runs once per r layers: *copies is r, the
 * result 0 and why says so.
 */
static size_t
periodic(const struct kern *a, size_t n, size_t np, const struct kern *g,
    size_t ng, char *why, uint64_t *sh, uint64_t *of, size_t *copies)
{
	struct sets s;
	size_t q, r, l;
	uint64_t k, nk;
	int64_t smax, lmin;
	char t1[40], t2[40];

	sets_make(&s, a, n, np, g, ng);
	*sh = sets_apart(&s, 1, of);
	if ((*copies = sets_copies(&s, a, n)) >= 2) {
		snprintf(why, WHY_TEXT, "in every interval from one anchor to "
		    "the next, every other kernel runs a multiple of %zu times "
		    "(%zu kernels after anchor 0): %zu copies of one layer's "
		    "kernels", *copies, sets_len(&s, 0), *copies);
		sets_free(&s);
		return 0;
	}
	for (q = 2; 2 * q <= s.m; q++) {
		k = sets_apart(&s, q, &nk);
		if (2 * k <= nk || ALIKE_DEN * *sh * nk >= ALIKE_NUM * k * *of)
			continue;
		snprintf(why, WHY_TEXT, "the intervals from anchor j to j+1 "
		    "and from j+%zu to j+%zu share %llu of %llu kernels, those "
		    "from j to j+1 and from j+1 to j+2 only %llu of %llu", q,
		    q + 1, (unsigned long long)k, (unsigned long long)nk,
		    (unsigned long long)*sh, (unsigned long long)*of);
		sets_free(&s);
		return q;
	}
	if (*of > 0 && 2 * *sh > *of) {
		sets_free(&s);
		return 1;
	}
	sets_free(&s);
	if ((q = dur_period(a, n, np, &r, &l, &smax, &lmin)) >= 2) {
		kt_time_format(smax, 0, t1);
		kt_time_format(lmin, 0, t2);
		snprintf(why, WHY_TEXT, "the intervals from anchor j to j+1 "
		    "alternate: with j mod %zu = %zu they are at most %s us, "
		    "with j mod %zu = %zu at least %s us (more than %dx), and "
		    "consecutive intervals share only %llu of %llu kernels", q,
		    r, t1, q, l, t2, SPACING_FACTOR, (unsigned long long)*sh,
		    (unsigned long long)*of);
		return q;
	}
	return 0;
}

/* A --suggest row: one kernel on one GPU. */
struct srow {
	size_t		 start, count, passes, per;
	int64_t		 med, lo, hi;	/* intervals within passes, ns */
	size_t		 linked;	/* occurrences with a launch found */
	int		 mixedp;
	size_t		 period;	/* 0: none found */
	size_t		 copies;	/* >= 2: once per that many layers */
	uint64_t	 reps, reps_of;	/* kernels consecutive intervals share */
	int64_t		 spread;	/* (hi - lo) / med in 1/1000 */
	int64_t		 stream;	/* -2: several */
	uint32_t	 op;		/* in ops */
	int		 has_op;
	uint32_t	 launch;	/* the launch's name, in opnames */
	int		 has_launch;
};

/*
 * Does row x come before row y: whole passes, then not several times per
 * layer, then not mixed, then the larger share of kernels that
 * consecutive intervals share, then the more of them, then the more
 * regular intervals, then the more frequent?
 */
static int
before(const struct srow *x, const struct srow *y)
{
	int xw = x->count % x->per == 0, yw = y->count % y->per == 0;
	int xp = x->period >= 2 || x->copies >= 2;
	int yp = y->period >= 2 || y->copies >= 2;
	uint64_t xr, yr;

	if (xw != yw)
		return xw;
	if (xp != yp)
		return yp;
	if (x->mixedp != y->mixedp)
		return y->mixedp;
	/* x->reps / x->reps_of against y's, 0/0 counting as 0 (the counts
	 * are kernels of the trace: the products do not overflow). */
	xr = x->reps * (y->reps_of ? y->reps_of : 1);
	yr = y->reps * (x->reps_of ? x->reps_of : 1);
	if (xr != yr)
		return xr > yr;
	if (x->reps != y->reps)
		return x->reps > y->reps;
	if (x->spread != y->spread)
		return x->spread < y->spread;
	return x->count > y->count;
}

/*
 * --suggest: keep the kernels on the chosen GPUs, grouped by GPU and
 * name (each group in file order).  Returns how many are kept.
 */
static size_t
group_kernels(struct lt *lt)
{
	struct kern *k = lt->kerns, *s;
	struct kt_pair *pr;
	size_t i, nc = 0;

	for (i = 0; i < lt->nkerns; i++)
		if (gpu_chosen(lt, &lt->gpus[k[i].gpu]))
			k[nc++] = k[i];
	if ((pr = calloc(nc + 1, sizeof(*pr))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < nc; i++) {
		pr[i].key = (uint64_t)k[i].gpu << 32 | k[i].name;
		pr[i].val = i;
	}
	if (kt_sort_pairs(pr, nc) == -1)
		kt_cli_nomem();
	if ((s = malloc((nc + 1) * sizeof(*s))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < nc; i++)
		s[i] = k[pr[i].val];
	if (nc > 0)
		memcpy(k, s, nc * sizeof(*s));
	free(s);
	free(pr);
	return nc;
}

/*
 * --suggest: the row of the c kernels k[0..c) of one group (sorted here
 * by time), as passes of s->per; v has room for c intervals.
 */
static void
suggest_stats(struct lt *lt, struct kern *k, size_t c, int64_t *v,
    const struct kern *g, size_t ng, struct srow *s)
{
	char why[WHY_TEXT];
	size_t p, q, nv = 0;

	s->count = c;
	s->per = lt->o.nlayers > 0 ? (size_t)lt->o.nlayers : c;
	s->passes = c / s->per;
	qsort(k, c, sizeof(*k), cmp_kern);
	for (p = 0; p < s->passes; p++)
		for (q = 0; q + 1 < s->per; q++)
			v[nv++] = k[p * s->per + q + 1].ts -
			    k[p * s->per + q].ts;
	s->med = median(v, nv);
	s->lo = nv ? v[0] : 0;
	s->hi = nv ? v[nv - 1] : 0;
	s->spread = s->med > 0 && s->hi - s->lo <= INT64_MAX / 1000 ?
	    (s->hi - s->lo) * 1000 / s->med : INT64_MAX;
	s->mixedp = mixed(lt, k, s->per, s->passes, why) != NULL;
	s->period = periodic(k, s->per, s->passes, g, ng, why, &s->reps,
	    &s->reps_of, &s->copies);
	s->stream = k[0].stream;
	for (q = 0; q < c; q++)
		if (k[q].stream != s->stream)
			s->stream = -2;
}

/*
 * --suggest: what launched the kernels k[0..c) (by correlation) and the
 * innermost cpu_op enclosing the first launch found.
 */
static void
suggest_link(const struct lt *lt, const struct kern *k, size_t c,
    struct srow *s)
{
	size_t q, o2;

	for (q = 0; q < c; q++) {
		struct cpuev key, *l;

		if (k[q].corr < 0 || lt->nlaunches == 0)
			continue;
		key.key = k[q].corr;
		l = bsearch(&key, lt->launches, lt->nlaunches,
		    sizeof(*lt->launches), cmp_i64);
		if (l == NULL)
			continue;
		s->linked++;
		if (!s->has_launch) {
			s->launch = l->name;
			s->has_launch = 1;
		}
		if (s->has_op)
			continue;
		/* The innermost op on its thread enclosing it. */
		for (o2 = 0; o2 < lt->nops; o2++) {
			const struct cpuev *op = &lt->ops[o2];

			if (op->thread == l->thread && op->ts <= l->ts &&
			    op->end >= l->end && (!s->has_op ||
			    op->ts >= lt->ops[s->op].ts)) {
				s->op = (uint32_t)o2;
				s->has_op = 1;
			}
		}
	}
}

/* --suggest: whole passes first, then the most frequent (stable). */
static void
sort_srows(struct srow *sr, size_t nsr)
{
	size_t i, j;

	for (i = 1; i < nsr; i++)
		for (j = i; j > 0 && before(&sr[j], &sr[j - 1]); j--) {
			struct srow x = sr[j];

			sr[j] = sr[j - 1];
			sr[j - 1] = x;
		}
}

/* --suggest: the cells of row s. */
static void
suggest_cells(struct lt *lt, struct kt_table *t, const struct srow *s)
{
	const struct kern *a = &lt->kerns[s->start];
	const struct gpu *g = &lt->gpus[a->gpu];
	char med[40], pt[PID_TEXT];

	kt_table_int(t, (int64_t)s->count);
	kt_table_int(t, (int64_t)s->per);
	kt_table_int(t, (int64_t)s->passes);
	kt_table_int(t, (int64_t)(s->count - s->passes * s->per));
	if (g->device >= 0)
		kt_table_cellf(t, "pid %s device %lld", pid_text(g->pid,
		    g->pidlen, pt), (long long)g->device);
	else
		kt_table_cellf(t, "pid %s", pid_text(g->pid, g->pidlen, pt));
	if (s->stream == -2)
		kt_table_cell(t, "several");
	else
		kt_table_int(t, s->stream);
	kt_time_format(s->med, 0, med);
	kt_table_cell(t, med);
	if (s->med > 0) {
		char lo[64], hi[64];

		kt_ratio_format(s->lo, s->med, 2, lo);
		kt_ratio_format(s->hi, s->med, 2, hi);
		kt_table_cellf(t, "%s..%s", lo, hi);
	} else
		kt_table_cell(t, "-");
	kt_table_cell(t, s->mixedp ? "yes" : "no");
	if (s->copies >= 2)
		kt_table_cellf(t, "1/%zu", s->copies);
	else if (s->period > 0)
		kt_table_int(t, (int64_t)s->period);
	else
		kt_table_cell(t, "-");
	kt_table_cellf(t, "%llu/%llu", (unsigned long long)s->reps,
	    (unsigned long long)s->reps_of);
	kt_table_int(t, (int64_t)s->linked);
	if (s->has_op || s->has_launch) {
		size_t len;
		const char *nm = kt_intern_get(lt->opnames, s->has_op ?
		    lt->ops[s->op].name : s->launch, &len);

		kt_table_cell(t, unescape(lt, nm, len));
	} else
		kt_table_cell(t, "-");
	kt_table_cell(t, kname(lt, a->name, 4096));
}

/* --suggest: one row per candidate kernel; returns the exit status. */
static int
suggest(struct lt *lt, struct kt_out *out)
{
	static const char *const cols[] = { "count:n", "per_pass:n",
	    "passes:n", "left_over:n", "gpu", "stream", "interval_us:n",
	    "spacing", "mixed", "period", "shared", "linked:n", "launched_by",
	    "kernel" };
	struct kt_table *t;
	struct kt_error err;
	int64_t *v;
	size_t i, j, start, nc;
	struct kern *k = lt->kerns;
	struct srow *sr = NULL;
	struct kern *all;
	size_t nsr = 0, csr = 0, gs, ge;
	int rc = 0;

	if ((t = kt_table_new(cols, sizeof(cols) / sizeof(cols[0]))) == NULL)
		kt_cli_nomem();
	nc = group_kernels(lt);
	if (lt->nlaunches > 0)
		qsort(lt->launches, lt->nlaunches, sizeof(*lt->launches),
		    cmp_i64);
	if ((v = calloc(nc + 1, sizeof(*v))) == NULL ||
	    (all = malloc((nc + 1) * sizeof(*all))) == NULL)
		kt_cli_nomem();
	/* Every kernel, by GPU, then by time: the kernel sets. */
	if (nc > 0)
		memcpy(all, k, nc * sizeof(*k));
	qsort(all, nc, sizeof(*all), cmp_gpu_kern);
	for (start = 0; start < nc; start = j) {
		struct srow s;
		size_t c;

		for (j = start; j < nc && k[j].gpu == k[start].gpu &&
		    k[j].name == k[start].name; j++)
			;
		c = j - start;
		if (c < 2)
			continue;
		if (lt->o.nlayers > 0 && c < (size_t)lt->o.nlayers)
			continue;
		memset(&s, 0, sizeof(s));
		s.start = start;
		for (gs = 0; gs < nc && all[gs].gpu < k[start].gpu; gs++)
			;
		for (ge = gs; ge < nc && all[ge].gpu == k[start].gpu; ge++)
			;
		suggest_stats(lt, &k[start], c, v, all + gs, ge - gs, &s);
		suggest_link(lt, &k[start], c, &s);
		grow(&sr, &csr, nsr, sizeof(s));
		sr[nsr++] = s;
	}
	sort_srows(sr, nsr);
	for (i = 0; i < nsr && rc == 0; i++)
		suggest_cells(lt, t, &sr[i]);
	kt_cli_out_commit(out, kt_table_write(t, kt_table_form_pick(0, 1), 1,
	    out) == -1, &err);
	kt_table_free(t);
	free(sr);
	free(v);
	free(all);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Labelling. */

/* Is the raw pid text p[0..n) the chosen GPU's pid? */
static int
same_pid(const struct lt *lt, const char *p, size_t n)
{
	return n == lt->chosen->pidlen && memcmp(p, lt->chosen->pid, n) == 0;
}

/* Choose the GPU, or refuse when the anchors are on several. */
static void
choose_gpu(struct lt *lt)
{
	size_t i, nchosen = 0;
	struct kt_buf b = KT_BUF_INIT;
	char pt[PID_TEXT];

	for (i = 0; i < lt->nkerns; i++)
		if (lt->kerns[i].is_anchor)
			lt->gpus[lt->kerns[i].gpu].anchors++;
	for (i = 0; i < lt->ngpus; i++)
		if (lt->gpus[i].anchors > 0 && gpu_chosen(lt, &lt->gpus[i])) {
			nchosen++;
			lt->chosen = &lt->gpus[i];
		}
	if (nchosen == 1)
		return;
	for (i = 0; i < lt->ngpus; i++) {
		char line[200];

		if (lt->gpus[i].anchors == 0)
			continue;
		snprintf(line, sizeof(line), "%spid %s device %lld (%llu)",
		    b.n ? ", " : "", pid_text(lt->gpus[i].pid,
		    lt->gpus[i].pidlen, pt),
		    (long long)lt->gpus[i].device,
		    (unsigned long long)lt->gpus[i].anchors);
		kt_buf_adds(&b, line);
	}
	kt_buf_addc(&b, '\0');
	if (nchosen == 0 && b.n <= 1)
		refuse("no kernel matches --anchor-regex '%s'",
		    lt->o.anchor_re);
	if (nchosen == 0)
		refuse("no anchor on the chosen GPU; anchors are on: %s", b.p);
	refuse("anchors occur on several GPUs or processes: %s; choose one "
	    "with --pid and --device", b.p);
}

/* The end anchor that runs after anchor a and before b (NULL: none). */
static const struct kern *
end_between(const struct kern *e, size_t ne, int64_t from, int64_t to,
    size_t *count)
{
	const struct kern *found = NULL;
	size_t lo = 0, hi = ne;

	/* The first end anchor at or after from. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	*count = 0;
	for (; lo < ne && e[lo].ts < to; lo++) {
		if (found == NULL)
			found = &e[lo];
		(*count)++;
	}
	return found;
}

/*
 * The chosen GPU's anchors into lt->anc, its end anchors into lt->ends
 * and all its kernels into lt->gk, each by time.
 */
static void
gather_anchors(struct lt *lt)
{
	struct kern *e, *g;
	size_t i, ne = 0, ng = 0, na = 0;

	for (i = 0; i < lt->nkerns; i++)
		if (&lt->gpus[lt->kerns[i].gpu] == lt->chosen) {
			na += lt->kerns[i].is_anchor != 0;
			ne += lt->kerns[i].is_end != 0;
			ng++;
		}
	if ((lt->anc = calloc(na + 1, sizeof(*lt->anc))) == NULL ||
	    (e = calloc(ne + 1, sizeof(*e))) == NULL ||
	    (g = calloc(ng + 1, sizeof(*g))) == NULL)
		kt_cli_nomem();
	ne = ng = 0;
	for (i = 0; i < lt->nkerns; i++) {
		if (&lt->gpus[lt->kerns[i].gpu] != lt->chosen)
			continue;
		g[ng++] = lt->kerns[i];
		if (lt->kerns[i].is_anchor)
			lt->anc[lt->nanc++] = lt->kerns[i];
		if (lt->kerns[i].is_end)
			e[ne++] = lt->kerns[i];
	}
	qsort(lt->anc, lt->nanc, sizeof(*lt->anc), cmp_kern);
	qsort(e, ne, sizeof(*e), cmp_kern);
	qsort(g, ng, sizeof(*g), cmp_kern);
	lt->ends = e;
	lt->nends = ne;
	lt->gk = g;
	lt->ngk = ng;
}

/*
 * How many passes to label from --anchor-offset on: --passes, or every
 * one; refuse when the anchors do not make them whole.
 */
static size_t
count_passes(const struct lt *lt)
{
	const struct opts *o = &lt->o;
	size_t n = (size_t)o->nlayers, np, want, rest;
	char pt[PID_TEXT];

	if ((size_t)o->offset >= lt->nanc)
		refuse("--anchor-offset %lld, but only %zu anchors match "
		    "'%s' on pid %s", (long long)o->offset, lt->nanc,
		    o->anchor_re, pid_text(lt->chosen->pid,
		    lt->chosen->pidlen, pt));
	if (o->passes > 0) {
		np = (size_t)o->passes;
		want = (size_t)o->offset + np * n;
		if (want > lt->nanc)
			refuse("the selection would cut a pass short: "
			    "--anchor-offset %lld + --passes %lld x "
			    "--num-layers %zu needs %zu anchors, and %zu match",
			    (long long)o->offset, (long long)o->passes, n,
			    want, lt->nanc);
		return np;
	}
	rest = lt->nanc - (size_t)o->offset;
	if (rest % n != 0 || rest < n)
		refuse("%zu anchors after --anchor-offset %lld are not a "
		    "whole number of passes of %zu layers (%zu left over); "
		    "give --passes to label only complete passes, or the "
		    "--anchor-offset of the first L0", rest,
		    (long long)o->offset, n, rest % n);
	return rest / n;
}

/*
 * The guides of np passes from the anchors, each ending at the next
 * anchor, or for the last of a pass at its end anchor's completion (one
 * of e[0..ne)), else at its own anchor's; refuse an end anchor not once
 * per layer.
 */
static void
make_guides(struct lt *lt, const struct kern *e, size_t ne, size_t np)
{
	const struct opts *o = &lt->o;
	size_t i, n = (size_t)o->nlayers;

	if ((lt->guides = calloc(np * n + 1, sizeof(*lt->guides))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < np * n; i++) {
		size_t a = (size_t)o->offset + i;
		struct guide *g = &lt->guides[lt->nguides++];
		int64_t next = a + 1 < lt->nanc ? lt->anc[a + 1].ts : INT64_MAX;

		g->ts = lt->anc[a].ts;
		g->layer = o->first + (int64_t)(i % n);
		g->pass = (int64_t)(i / n);
		g->anchor = a;
		if (o->end_re != NULL) {
			const struct kern *k;
			size_t cnt;

			k = end_between(e, ne, lt->anc[a].ts, next, &cnt);
			if (cnt != 1) {
				char at[32];

				kt_time_format(lt->anc[a].ts, 3, at);
				refuse("the end anchor '%s' occurs %zu times "
				    "between anchor %zu (pass %lld, layer %lld, "
				    "ts %s) and the next anchor; it must occur "
				    "exactly once", o->end_re, cnt, a,
				    (long long)g->pass, (long long)g->layer,
				    at);
			}
			if (i % n == n - 1) {
				g->end = k->end;
				if (i + 1 < np * n &&
				    g->end > lt->anc[a + 1].ts)
					refuse("the end anchor of pass %lld "
					    "completes after the next pass's "
					    "first anchor starts: the guides "
					    "would overlap", (long long)g->pass);
			}
		}
		if (i % n != n - 1)
			g->end = next;
		else if (o->end_re == NULL)	/* the anchor's completion */
			g->end = lt->anc[a].end > next ? next :
			    lt->anc[a].end > g->ts ? lt->anc[a].end : g->ts;
	}
}

/* Decide the guides from the anchors, or refuse. */
static void
decide(struct lt *lt)
{
	size_t np, n = (size_t)lt->o.nlayers, q, copies;
	uint64_t reps, of;
	char why[WHY_TEXT];

	choose_gpu(lt);
	gather_anchors(lt);
	np = count_passes(lt);
	lt->anchor_name = lt->anc[lt->o.offset].name;
	if (mixed(lt, &lt->anc[lt->o.offset], n, np, why) != NULL)
		refuse("%zu passes of %zu anchors would mix passes: %s; choose "
		    "the passes with --anchor-offset and --passes, or a "
		    "narrower --anchor-regex", np, n, why);
	q = periodic(&lt->anc[lt->o.offset], n, np, lt->gk, lt->ngk, why,
	    &reps, &of, &copies);
	if (copies >= 2)
		refuse_periodic("the anchor runs once per %zu layers, not once "
		    "per layer: %s; choose an anchor that runs once per layer "
		    "(--suggest)", copies, why);
	if (q >= 2)
		refuse_periodic("the anchor repeats with a period of %zu "
		    "within a pass, so it runs %zu times per layer, or a pass "
		    "has %zu layers, not %zu: %s; choose an anchor that runs "
		    "once per layer (--suggest), or the --num-layers", q, q, q,
		    n, why);
	make_guides(lt, lt->ends, lt->nends, np);
}

/*
 * The guide row's tid: the chosen pid's row of this track name, or a new
 * one past its rows.  Returns whether the row exists.
 */
static int
find_row(struct lt *lt)
{
	size_t i;
	int64_t maxtid = -1;
	int found = 0;

	for (i = 0; i < lt->nrows; i++) {
		if (!same_pid(lt, lt->rows[i].pid, lt->rows[i].pidlen))
			continue;
		if (lt->rows[i].tid > maxtid)
			maxtid = lt->rows[i].tid;
		if (strcmp(lt->rows[i].name, lt->trackname) == 0 && !found) {
			lt->guide_tid = lt->rows[i].tid;
			found = 1;
		}
	}
	if (!found)
		lt->guide_tid = maxtid >= GUIDE_TID ? maxtid + 1 : GUIDE_TID;
	return found;
}

/* The guide row's sort index: next to the streams, above the first. */
static void
row_sort(struct lt *lt)
{
	size_t i;
	int64_t minsort = INT64_MAX, minstream = INT64_MAX;

	for (i = 0; i < lt->nsorts; i++)
		if (same_pid(lt, lt->sorts[i].pid, lt->sorts[i].pidlen) &&
		    lt->sorts[i].tid != lt->guide_tid &&
		    lt->sorts[i].sort < minsort)
			minsort = lt->sorts[i].sort;
	for (i = 0; i < lt->nanc; i++)
		if (lt->anc[i].stream >= 0 && lt->anc[i].stream < minstream)
			minstream = lt->anc[i].stream;
	if (minsort != INT64_MAX) {
		lt->guide_sort = minsort - 1;
		lt->has_sort = 1;
	} else if (minstream != INT64_MAX) {
		lt->guide_sort = minstream - 1;
		lt->has_sort = 1;
	}
}

/* Is the old guide r guide g? */
static int
same_guide(const struct lt *lt, const struct row *r, const struct guide *g)
{
	char want[40];

	snprintf(want, sizeof(want), "\"L%lld\"", (long long)g->layer);
	return same_pid(lt, r->pid, r->pidlen) && r->tid == lt->guide_tid &&
	    r->ts == g->ts && r->dur == g->end - g->ts &&
	    strcmp(r->name, want) == 0;
}

/* The guide row exists: its guides must be these (present), or refuse. */
static void
check_present(struct lt *lt)
{
	char pt[PID_TEXT];
	size_t i, j, nold = 0;

	for (i = 0; i < lt->ngevs; i++)
		if (same_pid(lt, lt->gevs[i].pid, lt->gevs[i].pidlen) &&
		    lt->gevs[i].tid == lt->guide_tid)
			nold++;
	lt->present = nold == lt->nguides;
	for (j = 0; j < lt->nguides && lt->present; j++) {
		int hit = 0;

		for (i = 0; i < lt->ngevs && !hit; i++)
			hit = same_guide(lt, &lt->gevs[i], &lt->guides[j]);
		lt->present = hit;
	}
	if (!lt->present)
		refuse("pid %s already has a different layer guide for phase "
		    "'%s' (tid %lld, %zu guides); remove it or give another "
		    "--phase", pid_text(lt->chosen->pid, lt->chosen->pidlen,
		    pt), lt->o.phase, (long long)lt->guide_tid, nold);
}

/* Find the guide row for this phase, its sort index, and old guides. */
static void
place(struct lt *lt)
{
	int found = find_row(lt);

	row_sort(lt);
	if (found)
		check_present(lt);
}

/*
 * Write one made-up event (JSON text in b) as row number index, through
 * w, or when w is NULL after a separator straight to lt->rawout.
 */
static int
put(struct lt *lt, struct kt_writer *w, struct kt_buf *b, uint64_t index)
{
	if (w == NULL)
		return kt_out_write(lt->rawout, ",\n  ", 4) == -1 ||
		    kt_out_write(lt->rawout, b->p, b->n) == -1 ? -1 : 0;
	return kt_writer_raw(w, b->p, b->n, index);
}

/* The i-th guide as an X event's JSON text in b (a: scratch). */
static void
guide_event(struct lt *lt, size_t i, struct kt_buf *b, struct kt_buf *a)
{
	const struct guide *g = &lt->guides[i];
	size_t len, n = (size_t)lt->o.nlayers;
	const char *an = kt_intern_get(lt->names, lt->anchor_name, &len);
	char num[40];

	b->n = a->n = 0;
	kt_obj_begin(b);
	kt_obj_str(b, "ph", "X");
	kt_obj_str(b, "cat", KT_CAT_LAYER_GUIDE);
	snprintf(num, sizeof(num), "L%lld", (long long)g->layer);
	kt_obj_str(b, "name", num);
	kt_obj_raw(b, "pid", lt->chosen->pid, lt->chosen->pidlen);
	kt_obj_int(b, "tid", lt->guide_tid);
	kt_obj_raw(b, "ts", num, kt_time_format(g->ts, 3, num));
	kt_obj_raw(b, "dur", num, kt_time_format(g->end - g->ts, 3, num));
	kt_obj_begin(a);
	kt_obj_int(a, "layer", g->layer);
	kt_obj_int(a, "pass", g->pass);
	kt_obj_str(a, "phase", lt->o.phase);
	kt_obj_int(a, "anchor index", (int64_t)g->anchor);
	kt_obj_raw(a, "anchor", an, len);
	kt_obj_str(a, "end", i % n != n - 1 ? "next anchor" :
	    lt->o.end_re != NULL ? "end anchor completes" : "anchor completes");
	kt_obj_end(a);
	kt_obj_raw(b, "args", a->p, a->n);
	kt_obj_end(b);
}

/* The guide row's metadata event name, its args the JSON text a, in b. */
static void
row_meta(const struct lt *lt, const char *name, const struct kt_buf *a,
    struct kt_buf *b)
{
	b->n = 0;
	kt_obj_begin(b);
	kt_obj_str(b, "name", name);
	kt_obj_str(b, "ph", "M");
	kt_obj_raw(b, "pid", lt->chosen->pid, lt->chosen->pidlen);
	kt_obj_int(b, "tid", lt->guide_tid);
	kt_obj_raw(b, "args", a->p, a->n);
	kt_obj_end(b);
}

/* Write the guides and their row's metadata. */
static int
write_guides(struct lt *lt, struct kt_writer *w, uint64_t next)
{
	struct kt_buf b = KT_BUF_INIT, a = KT_BUF_INIT;
	size_t i;
	int rc = 0;

	if (lt->present)
		return 0;
	for (i = 0; i < lt->nguides && rc == 0; i++) {
		guide_event(lt, i, &b, &a);
		rc = put(lt, w, &b, next++);
	}
	a.n = 0;
	kt_obj_begin(&a);
	kt_obj_str(&a, "name", lt->trackname);
	kt_obj_end(&a);
	row_meta(lt, "thread_name", &a, &b);
	if (rc == 0)
		rc = put(lt, w, &b, next++);
	if (lt->has_sort && rc == 0) {
		a.n = 0;
		kt_obj_begin(&a);
		kt_obj_int(&a, "sort_index", lt->guide_sort);
		kt_obj_end(&a);
		row_meta(lt, "thread_sort_index", &a, &b);
		rc = put(lt, w, &b, next++);
	}
	kt_buf_free(&b);
	kt_buf_free(&a);
	return rc;
}

/* The report's guides, their times also relative to base. */
static json_t *
report_guides(const struct lt *lt, int64_t base)
{
	json_t *gs = json_array();
	size_t i;

	for (i = 0; i < lt->nguides; i++) {
		const struct guide *g = &lt->guides[i];
		json_t *x = json_object();
		char nm[40];

		snprintf(nm, sizeof(nm), "L%lld", (long long)g->layer);
		json_object_set_new(x, "name", json_string(nm));
		json_object_set_new(x, "pass", json_integer(g->pass));
		json_object_set_new(x, "layer", json_integer(g->layer));
		json_object_set_new(x, "startNs", json_integer(g->ts));
		json_object_set_new(x, "endNs", json_integer(g->end));
		json_object_set_new(x, "durNs", json_integer(g->end - g->ts));
		json_object_set_new(x, "relStartNs", json_integer(g->ts -
		    base));
		json_object_set_new(x, "relEndNs", json_integer(g->end -
		    base));
		json_array_append_new(gs, x);
	}
	return gs;
}

/*
 * The report: what was labelled, from what (hex: the input's SHA-256),
 * and where.
 */
static json_t *
report_json(struct lt *lt, const char *hex)
{
	const struct opts *o = &lt->o;
	json_t *j, *pid;
	size_t len;
	const char *an = kt_intern_get(lt->names, lt->anchor_name, &len);
	int64_t base = lt->tstart == INT64_MAX ? 0 : lt->tstart;

	if ((pid = json_loadb(lt->chosen->pid, lt->chosen->pidlen,
	    JSON_DECODE_ANY, NULL)) == NULL)
		pid = json_null();
	j = json_object();
	json_object_set_new(j, "input", json_string(lt->input));
	json_object_set_new(j, "inputSha256", json_string(hex));
	json_object_set_new(j, "pid", pid);
	json_object_set_new(j, "device", lt->chosen->device >= 0 ?
	    json_integer(lt->chosen->device) : json_null());
	json_object_set_new(j, "anchorRegex", json_string(o->anchor_re));
	json_object_set_new(j, "anchorKernel", json_string(unescape(lt, an,
	    len)));
	json_object_set_new(j, "endAnchorRegex", o->end_re ?
	    json_string(o->end_re) : json_null());
	json_object_set_new(j, "anchorOffset", json_integer(o->offset));
	json_object_set_new(j, "anchorsMatched", json_integer((json_int_t)
	    lt->nanc));
	json_object_set_new(j, "passes", json_integer((json_int_t)
	    (lt->nguides / (size_t)o->nlayers)));
	json_object_set_new(j, "numLayers", json_integer(o->nlayers));
	json_object_set_new(j, "firstLayer", json_integer(o->first));
	json_object_set_new(j, "phase", json_string(o->phase));
	json_object_set_new(j, "evidence", o->evidence ?
	    json_string(o->evidence) : json_null());
	json_object_set_new(j, "trackName", json_string(lt->trackname));
	json_object_set_new(j, "tid", json_integer(lt->guide_tid));
	json_object_set_new(j, "alreadyPresent", json_boolean(lt->present));
	json_object_set_new(j, "traceStartNs", json_integer(base));
	json_object_set_new(j, "guides", report_guides(lt, base));
	return j;
}

/* Write the report to lt->report. */
static void
write_report(struct lt *lt)
{
	struct kt_error err;
	struct kt_out *out;
	json_t *j;
	char hex[65], *s;

	if (kt_sha256_wait(lt->hash, hex, &err) == -1)
		kt_cli_die(&err);
	lt->hash = NULL;
	j = report_json(lt, hex);
	s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (s == NULL)
		kt_cli_nomem();
	out = kt_cli_out_open(lt->report, 0);
	kt_error_set(&err, lt->report, 0, 0, "cannot write the report");
	kt_cli_out_commit(out, kt_out_write(out, s, strlen(s)) == -1 ||
	    kt_out_write(out, "\n", 1) == -1, &err);
	free(s);
}

/*
 * Can the output be the input's own bytes with the guides put in after
 * its last event?  Only for a plain JSON file read without a repair,
 * whose last event is followed (after white space) by the ']' that
 * closes the events.  Sets *at to that event's end.
 */
static int
splice_ok(struct lt *lt, struct kt_source *src, struct kt_reader *r,
    const char *path, uint64_t *at)
{
	const struct kt_repairs *rp = kt_reader_repairs(r);
	unsigned char buf[4096];
	ssize_t n, i;
	int fd, k, ok = 0;

	/* A rank of the file name goes in as ktRank: through the writer. */
	if (lt->nread == 0 || kt_source_archived(src) ||
	    kt_reader_form(r) == KT_FORM_TSV || rp->truncated_bytes != 0 ||
	    kt_reader_rank_to_keep(r) >= 0)
		return 0;
	for (k = 0; k < KT_NREPAIRS; k++)
		if (rp->n[k] != 0)
			return 0;
	if ((fd = open(path, O_RDONLY)) == -1)
		return 0;
	/* Plain: the file starts with '{' or '[' (no compression). */
	if ((n = pread(fd, buf, sizeof(buf), 0)) > 0) {
		for (i = 0; i < n && (buf[i] == ' ' || buf[i] == '\t' ||
		    buf[i] == '\r' || buf[i] == '\n'); i++)
			;
		ok = i < n && (buf[i] == '{' || buf[i] == '[');
	}
	if (ok && (n = pread(fd, buf, sizeof(buf), (off_t)lt->last_end)) > 0) {
		for (i = 0; i < n && (buf[i] == ' ' || buf[i] == '\t' ||
		    buf[i] == '\r' || buf[i] == '\n'); i++)
			;
		ok = i < n && buf[i] == ']';
	} else
		ok = 0;
	close(fd);
	*at = lt->last_end;
	return ok;
}

/* Read the options into lt->o; returns optind. */
static int
parse_opts(struct lt *lt, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "anchor-regex", required_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'd' },
		{ "evidence", required_argument, NULL, 'E' },
		{ "end-anchor-regex", required_argument, NULL, 'e' },
		{ "first-layer", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "anchor-offset", required_argument, NULL, 'k' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "num-layers", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "passes", required_argument, NULL, 'P' },
		{ "phase", required_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'I' },
		{ "report", required_argument, NULL, 'r' },
		{ "strict", no_argument, NULL, 'S' },
		{ "spool-max", required_argument, NULL, KT_CLI_SPOOL_MAX },
		{ "suggest", no_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts *o = &lt->o;
	int ch;

	while ((ch = getopt_long(argc, argv, "a:d:E:e:f:hI:k:l:m:n:o:P:p:r:SsV",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->anchor_re = optarg;
			break;
		case 'd':
			o->device = kt_cli_int("--device", optarg, 0,
			    INT32_MAX);
			o->has_device = 1;
			break;
		case 'E':
			o->evidence = optarg;
			break;
		case 'e':
			o->end_re = optarg;
			break;
		case 'f':
			o->first = kt_cli_int("--first-layer", optarg, 0,
			    1000000);
			break;
		case 'I':
			o->pid = optarg;
			break;
		case 'k':
			o->offset = kt_cli_int("--anchor-offset", optarg, 0,
			    INT32_MAX);
			break;
		case 'n':
			o->nlayers = kt_cli_int("--num-layers", optarg, 1,
			    1000000);
			break;
		case 'P':
			o->passes = kt_cli_int("--passes", optarg, 1,
			    1000000);
			break;
		case 'p':
			o->phase = optarg;
			break;
		case 'r':
			o->report = optarg;
			break;
		case 's':
			o->suggest = 1;
			break;
		default:
			kt_cli_opt(&o->co, ch, optarg, usage);
		}
	}
	return optind;
}

/*
 * Check the operands argv[0..argc) and the options; compile the regexes,
 * name the input and the report.  Returns 0, or 2 after a warning.
 */
static int
check_args(struct lt *lt, int argc, char *argv[])
{
	const struct opts *o = &lt->o;

	if (argc > 1) {
		kt_cli_warn("one input at most; %d were given", argc);
		return 2;
	}
	if (!o->suggest && (o->anchor_re == NULL || o->nlayers == 0)) {
		kt_cli_warn("--anchor-regex and --num-layers are needed (or "
		    "--suggest)");
		usage(stderr);
		return 2;
	}
	if (o->anchor_re != NULL)
		compile(&lt->anchor_rx, o->anchor_re, "--anchor-regex");
	if (o->end_re != NULL)
		compile(&lt->end_rx, o->end_re, "--end-anchor-regex");
	lt->path = argc == 1 ? argv[0] : "-";
	lt->input = strcmp(lt->path, "-") == 0 ? "<stdin>" : lt->path;
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(o->co.output, argv, argc) == -1)
		return 2;
	if (o->report != NULL)
		lt->report = o->report;
	else if (!o->suggest && kt_cli_report_beside(o->co.output,
	    ".layers.json", lt->rbuf, sizeof(lt->rbuf)))
		lt->report = lt->rbuf;
	if (lt->report != NULL && kt_cli_check_output(lt->report, argv,
	    argc) == -1)
		return 2;
	if (o->co.output != NULL && lt->report != NULL &&
	    strcmp(lt->report, o->co.output) == 0) {
		kt_cli_warn("--report and --output name the same file");
		return 2;
	}
	return 0;
}

/* The guide row's name, the tables, and a copy of standard input. */
static void
prepare(struct lt *lt)
{
	size_t n = sizeof(KT_GUIDE_PREFIX) + strlen(lt->o.phase) +
	    sizeof(GUIDE_SUFFIX);

	if ((lt->trackname = malloc(n)) == NULL)
		kt_cli_nomem();
	snprintf(lt->trackname, n, "%s%s%s", KT_GUIDE_PREFIX, lt->o.phase,
	    GUIDE_SUFFIX);
	if ((lt->names = kt_intern_new()) == NULL ||
	    (lt->gputab = kt_intern_new()) == NULL ||
	    (lt->threads = kt_intern_new()) == NULL ||
	    (lt->opnames = kt_intern_new()) == NULL)
		kt_cli_nomem();
	/* Read twice: stdin, a FIFO or a pipe is copied once first. */
	lt->path = kt_cli_input_path((char *)lt->path);
}

/*
 * Write the input again through a writer, collecting nothing, with the
 * guides after its events.  Returns 0 or -1.
 */
static int
rewrite(struct lt *lt, struct kt_out *out)
{
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_writer *w;
	const struct kt_meta *metas;
	size_t nm;
	uint64_t next;
	int rc = 0;

	if ((w = kt_writer_new(out, 0)) == NULL)
		kt_cli_nomem();
	lt->collecting = 0;
	r = open_trace(lt, lt->path, lt->o.co.rflags, &src);
	next = pass(lt, r, w);
	if (next == UINT64_MAX)
		rc = -1;
	if (rc == 0)
		rc = write_guides(lt, w, next);
	metas = kt_reader_metas(r, &nm);
	if (rc == 0)
		rc = kt_writer_end(w, metas, nm);
	close_trace(src, r, lt->input);
	kt_writer_free(w);
	return rc;
}

/*
 * Write the labelled trace: when splice, the input's bytes with the
 * guides put in at offset at; else through the writer.
 */
static void
write_trace(struct lt *lt, int splice, uint64_t at)
{
	struct kt_error err;
	struct kt_out *out;
	int rc = 0;

	out = kt_cli_out_open(lt->o.co.output, lt->o.co.level);
	if (splice) {
		/* The input's bytes, the guides after its last event. */
		lt->rawout = out;
		if (kt_file_copy(lt->path, 0, at, out) == -1 ||
		    write_guides(lt, NULL, 0) == -1 ||
		    kt_file_copy(lt->path, at, 0, out) == -1)
			rc = -1;
	} else
		rc = rewrite(lt, out);
	if (rc == -1)
		kt_error_set(&err, lt->o.co.output ? lt->o.co.output :
		    "<stdout>", 0, 0, "cannot write the trace");
	kt_cli_out_commit(out, rc == -1, &err);
}

/*
 * Read the input for the decision (nothing is written before it), then
 * suggest, or decide, write the trace and the report.  Returns the exit
 * status.
 */
static int
run(struct lt *lt)
{
	struct kt_source *src;
	struct kt_reader *r;
	uint64_t at = 0;
	int splice;

	r = open_trace(lt, lt->path, lt->o.co.rflags, &src);
	pass(lt, r, NULL);
	if (lt->o.suggest) {
		close_trace(src, r, lt->input);
		return suggest(lt, kt_cli_out_open(lt->o.co.output, -1));
	}
	decide(lt);
	place(lt);
	kt_cli_report_repairs(lt->input, kt_reader_repairs(r));
	splice = splice_ok(lt, src, r, lt->path, &at);
	close_trace(src, r, lt->input);
	/* The report's SHA-256 of the input, while the trace is written. */
	if (lt->report != NULL &&
	    (lt->hash = kt_sha256_start(lt->path, kt_cli_threads())) == NULL)
		kt_cli_nomem();
	write_trace(lt, splice, at);
	if (lt->report != NULL)
		write_report(lt);
	if (lt->present)
		kt_cli_warn("the input already has these %zu guides on tid "
		    "%lld: nothing added", lt->nguides,
		    (long long)lt->guide_tid);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct lt *lt;
	int n, rc;

	kt_cli_init("kt-layer-track");
	lt = lt_new();
	n = parse_opts(lt, argc, argv);
	if ((rc = check_args(lt, argc - n, argv + n)) == 0) {
		prepare(lt);
		rc = run(lt);
	}
	lt_free(lt);
	return rc;
}
