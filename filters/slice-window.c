/*
 * kt-slice-window: cut a window out of a trace (ProfilerSteps, a time
 * range, an annotation, a rank) and write it as a valid trace: every
 * metadata event, the events that overlap the window (cut at its edges
 * with --clip), the counter values in force at its start, and the flows
 * whose ends both survive.
 *
 * The engine reads a trace sorted by time (as kt normalize writes it) in
 * one pass, holding only what the window needs: the events still open
 * when the window starts, and the output behind a flow whose other end
 * has not come yet.  Once the window's end is certain it stops reading.
 * An input that is not sorted is held in memory and sorted first.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

#define NOEND		INT64_MAX
#define PROBE_EVENTS	4096	/* events looked at to decide sortedness */

enum wkind { W_TIME, W_STEPS, W_ANNOTATION };

enum state { KEEP, DROP, PENDING, UNSURE };

/* An event held by the engine: a copy of its bytes. */
struct item {
	char		*raw;
	size_t		 len;
	struct kt_event	 ev;		/* its fields; ev.raw is raw */
	uint64_t	 index;
	int64_t		 ts;
	int64_t		 end;		/* ts + dur, or ts */
	unsigned	 flags;
	char		 ph;
	uint8_t		 kind;
	uint8_t		 state;
	int64_t		 flow;		/* flow key id, or -1 */
	int		 is_s;		/* flow start */
	int		 light;		/* ev not kept: JSON without --clip */
};

/* A flow's ends inside one window. */
struct flowstate {
	uint8_t	 has_s;
	uint8_t	 has_f;
};

/*
 * Bytes for held events, handed out and given back in FIFO order: a
 * list of chunks, the oldest freed once all its events are gone.
 */
struct qchunk {
	struct qchunk	*next;
	size_t		 used;
	size_t		 cap;
	size_t		 live;		/* events not yet given back */
	char		 data[];
};

struct queue {
	struct qchunk	*head;
	struct qchunk	*tail;
};

struct window {
	struct queue	 q;
	int64_t		 start;
	int64_t		 end;		/* NOEND until known */
	int		 final;		/* end is certain */
	int		 done;
	int64_t		 step_a, step_b;
	int		 seen_b;
	int64_t		 cpu_end;
	int64_t		 gpu_end;
	struct kt_intern *launched;	/* correlations launched inside */
	uint8_t		*resolved;	/* per launched: GPU work seen */
	uint8_t		*graph;		/* per launched: a graph launch */
	size_t		 nresolved;
	size_t		 outstanding;
	struct item	*fifo;		/* output waiting on a decision */
	size_t		 nfifo, head, capfifo;
	struct flowstate *flows;	/* by flow key id */
	size_t		 nflows;
	uint64_t	 dropped_flows;
	uint64_t	 written;
	uint64_t	*rows;		/* row numbers written, in order */
	size_t		 nrows, caprows;
	struct kt_out	*out;
	struct kt_writer *w;
	char		 path[PATH_MAX];
};

struct opts {
	enum wkind	 kind;
	int64_t		 from, to;
	int		 has_from, has_to;
	int		 absolute;
	int64_t		 step_a, step_b;
	int		 split;		/* --split-steps N */
	regex_t		 re;
	const char	*re_text;
	int64_t		 nth;
	int64_t		 rank;
	int		 has_rank;
	int		 clip;
	int		 cpu_only;
	int		 tsv;
	struct kt_cli_opts co;	/* -l, -m, -o, -S */
};

static struct opts o;
static struct kt_reader *rd;
static struct kt_intern *flowkeys;
static struct kt_intern *tracks;	/* counter tracks */
static struct kt_buf *lastc;		/* per track: last counter event */
static size_t nlastc;
static struct item *open_;		/* events that may overlap a start */
static size_t nopen, capopen;
static struct item *metas_ev;		/* metadata events, kept for all */
static size_t nmeta_ev, capmeta_ev;
static struct window *wins;
static size_t nwins;
static int64_t now = INT64_MIN;
static int64_t first_ts = NOEND;	/* the earliest non-metadata time */
static int64_t last_ts = INT64_MIN;
static int64_t first_step = -1, last_step = -1;
static int64_t nmatches;
static uint64_t nseen;
static int tail_known;		/* the keys after the events are known */

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-slice-window [-AcCSt] [-l level] [-m glob] [-o file] [-r rank]\n"
	    "           (--steps A[-B] | --from T --to T | --annotation RE [--nth K]\n"
	    "           | --split-steps N -o prefix) [file]\n"
	    "  -s, --steps A-B        ProfilerStep#A to #B (or one step: --steps 7)\n"
	    "  -f, --from T, -T, --to T  a time range, with a unit (ns, us, ms, s),\n"
	    "                         from the first event unless --absolute\n"
	    "  -a, --annotation RE    the window of the K-th matching annotation\n"
	    "  -n, --nth K            which match (default 1)\n"
	    "  -r, --rank N           only rank N of a merged trace\n"
	    "  -c, --clip             cut events that cross an edge\n"
	    "  -C, --cpu-only         a step window ends with its CPU annotation\n"
	    "  -p, --split-steps N    one file per N steps: PREFIX-steps-A-B.json\n"
	    "  -A, --absolute         --from and --to are absolute times\n"
	    "  -l, --level N, -m, --member GLOB, -o, --output FILE, -S, --strict,\n"
	    "  -t, --tsv, -h, --help, -V, --version  as in kt(7)\n");
}

static void	take_ev(struct window *, const struct kt_event *, int64_t);

/* ------------------------------------------------------------------ */
/* Items. */

/* Copy ev into a new item. */
static void
item_make(struct item *it, const struct kt_event *ev)
{
	if ((it->raw = malloc(ev->len ? ev->len : 1)) == NULL)
		kt_cli_nomem();
	memcpy(it->raw, ev->raw, ev->len);
	it->len = ev->len;
	it->ev = *ev;
	it->ev.raw = it->raw;
	it->index = ev->index;
	it->ts = ev->ts;
	it->end = ev->ts + ((ev->flags & KT_EV_DUR) && ev->dur > 0 ?
	    ev->dur : 0);
	it->flags = ev->flags;
	it->ph = ev->ph;
	it->kind = (uint8_t)ev->kind;
	it->state = KEEP;
	it->flow = -1;
	it->is_s = 0;
	it->light = 0;
}

/* n bytes from queue q, for a held event; q_put() gives them back. */
static char *
q_get(struct queue *q, size_t n)
{
	struct qchunk *c = q->tail;

	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > (1u << 20) ? n : (1u << 20);

		if ((c = malloc(sizeof(*c) + cap)) == NULL)
			kt_cli_nomem();
		c->next = NULL;
		c->used = c->live = 0;
		c->cap = cap;
		if (q->tail != NULL)
			q->tail->next = c;
		else
			q->head = c;
		q->tail = c;
	}
	c->live++;
	c->used += n;
	return c->data + c->used - n;
}

/* Give back the oldest bytes q_get() handed out. */
static void
q_put(struct queue *q)
{
	struct qchunk *c = q->head;

	while (c != NULL && c->live == 0 && c != q->tail) {
		q->head = c->next;
		free(c);
		c = q->head;
	}
	if (c == NULL)
		return;
	if (--c->live == 0 && c != q->tail) {
		q->head = c->next;
		free(c);
	} else if (c->live == 0) {
		c->used = 0;	/* the tail, empty: reuse it */
	}
}

/* Duplicate an item (a new copy of its bytes). */
static struct item
item_dup(const struct item *it)
{
	struct item c = *it;

	if ((c.raw = malloc(it->len ? it->len : 1)) == NULL)
		kt_cli_nomem();
	memcpy(c.raw, it->raw, it->len);
	c.ev.raw = c.raw;
	return c;
}

/* Append it to an array. */
static void
push(struct item **a, size_t *n, size_t *cap, const struct item *it)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct item *t;

		if ((t = realloc(*a, c * sizeof(*t))) == NULL)
			kt_cli_nomem();
		*a = t;
		*cap = c;
	}
	(*a)[(*n)++] = *it;
}

/* The flow key id of a flow event: (cat, name, id). */
static int64_t
flow_key(const struct kt_event *ev)
{
	static struct kt_buf k;
	const char *p;
	size_t n;
	int64_t id;

	k.n = 0;
	p = kt_event_field(ev, KT_F_CAT, &n);
	kt_buf_add(&k, p ? p : "", n);
	kt_buf_addc(&k, '\t');
	p = kt_event_field(ev, KT_F_NAME, &n);
	kt_buf_add(&k, p ? p : "", n);
	kt_buf_addc(&k, '\t');
	p = kt_event_field(ev, KT_F_ID, &n);
	kt_buf_add(&k, p ? p : "", n);
	if ((id = kt_intern_put(flowkeys, k.p ? k.p : "", k.n)) == -1)
		kt_cli_nomem();
	return id;
}

/* ------------------------------------------------------------------ */
/* Writing a window. */

/*
 * Write ev to window w, clipped to the window when asked; newts, when
 * not INT64_MIN, moves a counter value to the window's start.
 */
static void
emit_ev(struct window *w, const struct kt_event *in, int64_t newts)
{
	struct kt_event ev;
	const struct kt_event *out = in;
	struct kt_buf b = KT_BUF_INIT;
	struct kt_error err;
	int64_t iend = in->ts + ((in->flags & KT_EV_DUR) && in->dur > 0 ?
	    in->dur : 0);
	int clip_start = o.clip && in->ph == 'X' && in->ts < w->start &&
	    (in->flags & KT_EV_TS);
	int clip_end = o.clip && in->ph == 'X' && w->final && iend > w->end &&
	    (in->flags & KT_EV_TS);

	if (clip_start || clip_end || newts != INT64_MIN) {
		struct kt_patch p;
		struct kt_buf rec = KT_BUF_INIT;
		char ts[48], dur[48];
		int64_t s = clip_start ? w->start : in->ts;
		int64_t e = clip_end ? w->end : iend;
		size_t tn, dn;
		const char *t;

		kt_patch_init(&p, in);
		if (newts != INT64_MIN) {
			/* A counter value carried to the window's start. */
			t = kt_event_field(in, KT_F_TS, &tn);
			kt_patch_set(&p, KT_F_TS, ts, kt_time_format(newts,
			    in->ts_decimals, ts));
			kt_patch_arg(&p, "kt_carried_from", t, tn);
		} else {
			/* The cut, recorded with the original times. */
			kt_obj_begin(&rec);
			t = kt_event_field(in, KT_F_TS, &tn);
			kt_obj_raw(&rec, "ts", t, tn);
			t = kt_event_field(in, KT_F_DUR, &dn);
			if (t != NULL)
				kt_obj_raw(&rec, "dur", t, dn);
			kt_obj_end(&rec);
			kt_patch_set(&p, KT_F_TS, ts, kt_time_format(s,
			    in->ts_decimals, ts));
			kt_patch_set(&p, KT_F_DUR, dur, kt_time_format(e - s,
			    in->dur_decimals, dur));
			kt_patch_arg(&p, "kt_clip", rec.p, rec.n);
		}
		memset(&ev, 0, sizeof(ev));
		if (kt_patch_apply(&p, &b) == -1 ||
		    kt_event_scan(b.p, b.n, &ev, &err) == -1) {
			kt_cli_warn("internal error: patched event");
			kt_cli_die(NULL);
		}
		ev.index = in->index;
		out = &ev;
		kt_patch_free(&p);
		kt_buf_free(&rec);
	}
	if (kt_writer_event(w->w, out) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
	if (w->nrows == w->caprows) {
		size_t c = w->caprows ? w->caprows * 2 : 1024;
		uint64_t *t;

		if ((t = realloc(w->rows, c * sizeof(*t))) == NULL)
			kt_cli_nomem();
		w->rows = t;
		w->caprows = c;
	}
	w->rows[w->nrows++] = in->index;
	w->written++;
	kt_buf_free(&b);
}

/* Write a held item to window w. */
static void
emit(struct window *w, const struct item *it, int64_t newts)
{
	struct kt_event ev;

	if (it->light) {
		/* Plain JSON output without --clip needs the bytes only. */
		ev.raw = it->raw;
		ev.len = it->len;
		ev.index = it->index;
		ev.ts = it->ts;
		ev.dur = it->end - it->ts;
		ev.flags = it->flags;
		ev.ph = it->ph;
		emit_ev(w, &ev, newts);
		return;
	}
	ev = it->ev;
	ev.raw = it->raw;
	ev.index = it->index;
	emit_ev(w, &ev, newts);
}

/* Open window w's output and write the top-level keys and metadata. */
static void
win_open(struct window *w)
{
	const struct kt_meta *m;
	size_t nm, i;
	const char *path = o.co.output;

	if (o.split) {
		snprintf(w->path, sizeof(w->path), "%s-steps-%lld-%lld.%s",
		    o.co.output, (long long)w->step_a, (long long)w->step_b,
		    o.tsv ? "tsv" : "json");
		path = w->path;
	}
	/* Every window's file is checked against the input (split too). */
	w->out = kt_cli_out_open(path, o.co.level);
	if ((w->w = kt_writer_new(w->out, o.tsv ? KT_WRITE_TSV : 0)) == NULL)
		kt_cli_nomem();
	m = kt_reader_metas(rd, &nm);
	if (kt_writer_begin(w->w, m, nm, NULL, 0) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
	for (i = 0; i < nmeta_ev; i++)
		emit(w, &metas_ev[i], INT64_MIN);
}

/* Decide the fate of a flow item in window w. */
static void
decide_flow(struct window *w, struct item *it)
{
	struct flowstate *f;

	if ((size_t)it->flow >= w->nflows) {
		size_t n = (size_t)it->flow + 1 + w->nflows;

		if ((f = realloc(w->flows, n * sizeof(*f))) == NULL)
			kt_cli_nomem();
		memset(f + w->nflows, 0, (n - w->nflows) * sizeof(*f));
		w->flows = f;
		w->nflows = n;
	}
	f = &w->flows[it->flow];
	if (it->is_s)
		f->has_s = 1;
	else
		f->has_f = 1;
	it->state = f->has_s && f->has_f ? KEEP : PENDING;
}

/* Write what the FIFO's head has decided. */
static void
release(struct window *w)
{
	while (w->head < w->nfifo) {
		struct item *it = &w->fifo[w->head];

		if (it->state == PENDING && it->flow >= 0 &&
		    (size_t)it->flow < w->nflows &&
		    w->flows[it->flow].has_s && w->flows[it->flow].has_f)
			it->state = KEEP;
		if (it->state == PENDING || it->state == UNSURE)
			break;
		if (it->state == KEEP)
			emit(w, it, INT64_MIN);
		else if (it->flow >= 0)
			w->dropped_flows++;
		q_put(&w->q);
		w->head++;
	}
	if (w->head == w->nfifo)
		w->head = w->nfifo = 0;
	else if (w->head > 4096 && w->head * 2 > w->nfifo) {
		memmove(w->fifo, w->fifo + w->head, (w->nfifo - w->head) *
		    sizeof(*w->fifo));
		w->nfifo -= w->head;
		w->head = 0;
	}
}

/* The state of an event just come to window w (flows are marked). */
static int
decide(struct window *w, struct item *it)
{
	/* With --clip, an X event may cross an end not yet certain. */
	if (it->ts > w->end || (o.clip && it->ph == 'X' && !w->final &&
	    (w->end == NOEND || it->end > w->end)))
		return UNSURE;
	if (it->flow >= 0) {
		decide_flow(w, it);
		return it->state;
	}
	return KEEP;
}

/* Take item it (owned) into window w. */
static void
take(struct window *w, struct item *it)
{
	char *raw;

	it->state = (uint8_t)decide(w, it);
	if (it->state == KEEP && w->head == w->nfifo) {
		emit(w, it, INT64_MIN);
		free(it->raw);
		return;
	}
	raw = q_get(&w->q, it->len ? it->len : 1);
	memcpy(raw, it->raw, it->len);
	free(it->raw);
	it->raw = raw;
	it->ev.raw = raw;
	push(&w->fifo, &w->nfifo, &w->capfifo, it);
	if (it->flow >= 0 && it->state == KEEP)
		release(w);
}

/* Take event ev into window w: written at once when nothing waits. */
static void
take_ev(struct window *w, const struct kt_event *ev, int64_t flow)
{
	struct item it;

	it.raw = NULL;
	it.len = ev->len;
	it.index = ev->index;
	it.ts = ev->ts;
	it.end = ev->ts + ((ev->flags & KT_EV_DUR) && ev->dur > 0 ?
	    ev->dur : 0);
	it.flags = ev->flags;
	it.ph = ev->ph;
	it.kind = (uint8_t)ev->kind;
	it.flow = flow;
	it.is_s = ev->ph == 's';
	it.state = (uint8_t)decide(w, &it);
	if (it.state == KEEP && w->head == w->nfifo) {
		emit_ev(w, ev, INT64_MIN);
		return;
	}
	it.raw = q_get(&w->q, ev->len ? ev->len : 1);
	memcpy(it.raw, ev->raw, ev->len);
	it.light = !o.tsv && !o.clip;
	if (!it.light) {
		it.ev = *ev;
		it.ev.raw = it.raw;
	}
	push(&w->fifo, &w->nfifo, &w->capfifo, &it);
	if (it.flow >= 0 && it.state == KEEP)
		release(w);
}

/* The window's end is certain: decide everything it holds. */
static void
finalize(struct window *w)
{
	size_t i;

	w->final = 1;
	for (i = w->head; i < w->nfifo; i++) {
		struct item *it = &w->fifo[i];

		if (it->state != UNSURE)
			continue;
		if (it->ts > w->end)
			it->state = DROP;
		else if (it->flow >= 0)
			decide_flow(w, it);
		else
			it->state = KEEP;
	}
	for (i = w->head; i < w->nfifo; i++)
		if (w->fifo[i].state == PENDING) {
			struct item *it = &w->fifo[i];

			it->state = w->flows[it->flow].has_s &&
			    w->flows[it->flow].has_f ? KEEP : DROP;
		}
	release(w);
	w->done = 1;
}

/* ------------------------------------------------------------------ */
/* Windows: where they start, how their end is found. */

/* Does a runtime call of this name put work on the GPU? */
static int
launches(const struct kt_event *ev)
{
	const char *p;
	size_t n;
	char name[128];

	p = kt_event_field(ev, KT_F_NAME, &n);
	if (p == NULL || n >= sizeof(name))
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	return strstr(name, "Launch") != NULL || strstr(name, "Memcpy") !=
	    NULL || strstr(name, "Memset") != NULL;
}

/* Is a runtime call a graph launch (many kernels, one correlation)? */
static int
graph_launch(const struct kt_event *ev)
{
	const char *p;
	size_t n;

	size_t i;

	p = kt_event_field(ev, KT_F_NAME, &n);
	for (i = 0; p != NULL && i + 5 <= n; i++)
		if (memcmp(p + i, "Graph", 5) == 0)
			return 1;
	return 0;
}

/* Start a window at now: seed it with what is open there. */
static struct window *
win_start(int64_t start, int64_t end, int final, int64_t a, int64_t b)
{
	struct window *w;
	size_t i, k;

	if ((w = realloc(wins, (nwins + 1) * sizeof(*w))) == NULL)
		kt_cli_nomem();
	wins = w;
	w = &wins[nwins++];
	memset(w, 0, sizeof(*w));
	w->start = start;
	w->end = end;
	w->final = final;
	w->step_a = a;
	w->step_b = b;
	w->cpu_end = NOEND;
	w->gpu_end = INT64_MIN;
	if ((w->launched = kt_intern_new()) == NULL)
		kt_cli_nomem();
	win_open(w);
	/* Events open across the start, in file order. */
	for (i = 0; i < nopen; i++) {
		struct item it;

		if (open_[i].end < start || open_[i].ph == 'C' ||
		    open_[i].ts >= start || open_[i].flow >= 0)
			continue;
		it = item_dup(&open_[i]);
		take(w, &it);
	}
	/*
	 * The counter values in force at the start, carried to it, and
	 * those set at the start itself: they sort at the start.
	 */
	for (k = 0; k < nlastc; k++) {
		struct kt_event ev;
		struct item it;

		if (lastc[k].n == 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		if (kt_event_scan(lastc[k].p, lastc[k].n, &ev, NULL) == -1 ||
		    !(ev.flags & KT_EV_TS))
			continue;
		memcpy(&ev.index, lastc[k].p + lastc[k].n + 1,
		    sizeof(ev.index));
		if (ev.ts >= start) {
			take_ev(w, &ev, -1);
			continue;
		}
		item_make(&it, &ev);
		emit(w, &it, start);
		free(it.raw);
	}
	/* Then the events at the start that came before this one. */
	for (i = 0; i < nopen; i++) {
		struct item it;

		if (open_[i].ph == 'C' || open_[i].ts < start)
			continue;
		it = item_dup(&open_[i]);
		take(w, &it);
	}
	return w;
}

/* Track window w's end: CPU end of its last step, GPU work launched. */
static void
track_end(struct window *w, const struct kt_event *ev)
{
	int64_t end = ev->ts + ((ev->flags & KT_EV_DUR) ? ev->dur : 0);
	int64_t k, id;

	if (w->final)
		return;
	if (o.kind == W_STEPS && ev->kind == KT_STEP &&
	    (k = kt_event_step(ev)) == w->step_b) {
		w->seen_b = 1;
		w->cpu_end = end;
	}
	if (o.kind != W_STEPS)
		return;
	if (!o.cpu_only && (ev->kind == KT_CUDA_RUNTIME ||
	    ev->kind == KT_CUDA_DRIVER) && ev->ts <= w->cpu_end &&
	    ev->f[KT_F_CORR].type != KT_NONE && launches(ev)) {
		size_t n, before = kt_intern_count(w->launched);
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((id = kt_intern_put(w->launched, p, n)) == -1)
			kt_cli_nomem();
		if ((size_t)id == before) {
			/*
			 * A new launch: its GPU work is still to come.  A graph
			 * runs many kernels under one correlation: it stays
			 * open (and the window's end uncertain) to the end.
			 */
			if ((size_t)id >= w->nresolved) {
				size_t c = w->nresolved ? w->nresolved * 2 : 64;
				uint8_t *t = realloc(w->resolved, c);

				if (t == NULL)
					kt_cli_nomem();
				memset(t + w->nresolved, 0, c - w->nresolved);
				w->resolved = t;
				if ((t = realloc(w->graph, c)) == NULL)
					kt_cli_nomem();
				memset(t + w->nresolved, 0, c - w->nresolved);
				w->graph = t;
				w->nresolved = c;
			}
			w->graph[id] = graph_launch(ev);
			w->outstanding++;
		}
	}
	if (!o.cpu_only && (ev->kind == KT_KERNEL || ev->kind == KT_GPU_MEMCPY ||
	    ev->kind == KT_GPU_MEMSET) && ev->f[KT_F_CORR].type != KT_NONE) {
		size_t n;
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((id = kt_intern_find(w->launched, p, n)) >= 0) {
			if (!w->resolved[id] && !w->graph[id]) {
				w->resolved[id] = 1;
				w->outstanding--;
			}
			if (end > w->gpu_end)
				w->gpu_end = end;
		}
	}
	if (!o.cpu_only && ev->kind == KT_GPU_USER_ANNOTATION &&
	    (k = kt_event_step(ev)) >= w->step_a && k <= w->step_b &&
	    end > w->gpu_end)
		w->gpu_end = end;
	if (w->seen_b)
		w->end = w->cpu_end > w->gpu_end ? w->cpu_end : w->gpu_end;
}

/* ------------------------------------------------------------------ */
/* The driver. */

/* Keep the open set to what may still overlap a window's start. */
static void
evict(void)
{
	size_t i, k = 0;

	for (i = 0; i < nopen; i++) {
		if (open_[i].end < now && open_[i].ts < now) {
			free(open_[i].raw);
			continue;
		}
		open_[k++] = open_[i];
	}
	nopen = k;
}

/* Does an event held open overlap [s, e]? */
static int
window_open_at(int64_t s, int64_t e)
{
	size_t i;

	for (i = 0; i < nopen; i++)
		if (open_[i].end >= s && open_[i].ts <= e && open_[i].ph != 'C')
			return 1;
	return 0;
}

/* Will a window still start later? */
static int
more_windows(void)
{
	if (o.split)
		return 1;
	return nwins == 0;
}

/* One event of the sorted stream. */
static void
feed(const struct kt_event *ev)
{
	size_t i;
	int64_t k;

	if (o.has_rank && ev->f[KT_F_RANK].type != KT_NONE) {
		int64_t r;

		if (kt_event_field_int(ev, KT_F_RANK, &r) == 0 && r != o.rank)
			return;
	}
	if (ev->ph == 'M') {
		struct item it;

		item_make(&it, ev);
		push(&metas_ev, &nmeta_ev, &capmeta_ev, &it);
		/* Every window has every metadata event, late ones too. */
		for (i = 0; i < nwins; i++)
			emit(&wins[i], &it, INT64_MIN);
		return;
	}
	if (!(ev->flags & KT_EV_TS))
		return;
	if (ev->ts > now)
		now = ev->ts;
	if (first_ts == NOEND)
		first_ts = ev->ts;
	if (ev->ts > last_ts)
		last_ts = ev->ts;
	if (ev->kind == KT_STEP && (k = kt_event_step(ev)) >= 0) {
		if (first_step < 0 || k < first_step)
			first_step = k;
		if (k > last_step)
			last_step = k;
	}
	/* Close the windows whose end has passed. */
	for (i = 0; i < nwins; i++) {
		struct window *w = &wins[i];

		if (!w->done && w->end != NOEND && now > w->end &&
		    (w->final || (w->seen_b && w->outstanding == 0)))
			finalize(w);
	}
	/* Start a window here? */
	if (o.kind == W_TIME && nwins == 0) {
		int64_t s = o.absolute ? o.from : first_ts + o.from;
		int64_t e = !o.has_to ? NOEND : o.absolute ? o.to :
		    first_ts + o.to;

		/* Events open across the start seed it, even when none
		 * begins inside it. */
		if (ev->ts >= s && (ev->ts <= e || window_open_at(s, e)))
			win_start(s, e, 1, 0, 0);
	} else if (o.kind == W_STEPS && ev->kind == KT_STEP &&
	    (k = kt_event_step(ev)) >= 0) {
		if (!o.split && nwins == 0 && k >= o.step_a && k <= o.step_b)
			win_start(ev->ts, NOEND, 0, k, o.step_b);
		else if (o.split && (nwins == 0 ||
		    k > wins[nwins - 1].step_b))
			win_start(ev->ts, NOEND, 0, k, k + o.split - 1);
	} else if (o.kind == W_ANNOTATION && nwins == 0 &&
	    (ev->kind == KT_USER_ANNOTATION ||
	    ev->kind == KT_GPU_USER_ANNOTATION)) {
		const char *p = kt_event_field(ev, KT_F_NAME, &i);
		char name[4096];

		if (p != NULL && i >= 2 && i - 2 < sizeof(name)) {
			memcpy(name, p + 1, i - 2);
			name[i - 2] = '\0';
			if (regexec(&o.re, name, 0, NULL, 0) == 0 &&
			    ++nmatches == o.nth)
				win_start(ev->ts, ev->ts + ((ev->flags &
				    KT_EV_DUR) ? ev->dur : 0), 1, 0, 0);
		}
	}
	/* Only now, after a window may have started here, forget what ended. */
	if (nopen > 64 && more_windows())
		evict();
	/* Feed the open windows. */
	for (i = 0; i < nwins; i++) {
		struct window *w = &wins[i];

		if (w->done || ev->ts < w->start)
			continue;
		track_end(w, ev);
		if (w->final && ev->ts > w->end)
			continue;
		take_ev(w, ev, ev->kind == KT_FLOW ? flow_key(ev) : -1);
	}
	/* Remember what a later window may need at its start. */
	if (more_windows()) {
		if (ev->ph == 'C') {
			struct kt_buf key = KT_BUF_INIT;
			const char *p;
			size_t n;
			int64_t t;

			kt_event_thread_key(ev, &key);
			p = kt_event_field(ev, KT_F_NAME, &n);
			kt_buf_add(&key, p ? p : "", n);
			if ((t = kt_intern_put(tracks, key.p, key.n)) == -1)
				kt_cli_nomem();
			kt_buf_free(&key);
			if ((size_t)t >= nlastc) {
				struct kt_buf *l = realloc(lastc, ((size_t)t +
				    1) * sizeof(*l));

				if (l == NULL)
					kt_cli_nomem();
				memset(l + nlastc, 0, ((size_t)t + 1 - nlastc) *
				    sizeof(*l));
				lastc = l;
				nlastc = (size_t)t + 1;
			}
			/* The bytes, then a NUL, then the row number. */
			lastc[t].n = 0;
			kt_buf_add(&lastc[t], ev->raw, ev->len);
			kt_buf_addc(&lastc[t], '\0');
			kt_buf_add(&lastc[t], &ev->index, sizeof(ev->index));
			lastc[t].n = ev->len;
		} else {
			struct item it;

			item_make(&it, ev);
			if (ev->kind == KT_FLOW) {
				it.flow = flow_key(ev);
				it.is_s = ev->ph == 's';
			}
			push(&open_, &nopen, &capopen, &it);
		}
	}
}

/* Has every window ended, with no more to come? */
static int
all_done(void)
{
	size_t i;

	if (more_windows())
		return 0;
	for (i = 0; i < nwins; i++)
		if (!wins[i].done)
			return 0;
	return 1;
}

/* The sort key of an event: metadata, then no time, then by time. */
static uint64_t
order_key(const struct kt_event *ev)
{
	if (ev->ph == 'M')
		return 0;
	if (!(ev->flags & KT_EV_TS))
		return 1;
	return (uint64_t)ev->ts ^ ((uint64_t)1 << 63);
}

/* A held event of an unsorted input. */
struct held {
	const char	*raw;
	size_t		 len;
	uint64_t	 index;
};

/*
 * Read the trace: stream it when it is sorted; else hold it all, sort
 * it (stably, as kt normalize does) and stream that.
 */
static void
run(void)
{
	struct kt_event ev;
	struct kt_error err;
	struct kt_arena *ar;
	struct held *h = NULL;
	size_t nh = 0, caph = 0, i;
	uint64_t last = 0;
	int rc, sorted = 1, early = 0, seen_event = 0, meta_first = 0;

	if ((ar = kt_arena_new()) == NULL)
		kt_cli_nomem();
	while ((rc = kt_reader_next(rd, &ev, &err)) == 1) {
		uint64_t key = order_key(&ev);

		/* Metadata may come anywhere; times must not go back. */
		if (ev.ph != 'M') {
			if (key < last)
				sorted = 0;
			last = key > last ? key : last;
			seen_event = 1;
		} else if (!seen_event)
			meta_first = 1;
		nseen++;
		if ((nseen & 0xffff) == 0)
			kt_cli_progress(rd);
		if (sorted && nseen > PROBE_EVENTS) {
			if (nh > 0) {
				for (i = 0; i < nh; i++) {
					struct kt_event e;

					memset(&e, 0, sizeof(e));
					kt_event_scan(h[i].raw, h[i].len, &e,
					    NULL);
					e.index = h[i].index;
					feed(&e);
				}
				nh = 0;
			}
			feed(&ev);
			/*
			 * Stop early only when the metadata came first (as kt
			 * normalize writes it): else some may still come.
			 */
			if (meta_first && all_done()) {
				early = 1;
				break;
			}
			continue;
		}
		if (!sorted && nseen > PROBE_EVENTS && nh == 0) {
			kt_cli_warn("%s: not sorted by time at event %llu, after "
			    "%d sorted ones; sort it with kt normalize first",
			    kt_reader_name(rd), (unsigned long long)nseen,
			    PROBE_EVENTS);
			kt_cli_die(NULL);
		}
		if (nh == caph) {
			caph = caph ? caph * 2 : 4096;
			if ((h = realloc(h, caph * sizeof(*h))) == NULL)
				kt_cli_nomem();
		}
		if ((h[nh].raw = kt_arena_copy(ar, ev.raw, ev.len)) == NULL)
			kt_cli_nomem();
		h[nh].len = ev.len;
		h[nh++].index = ev.index;
	}
	if (rc == -1)
		kt_cli_die(&err);
	if (nh > 0) {
		/* Held: sort by time (stable), then stream. */
		struct kt_pair *p = malloc(nh * sizeof(*p));

		if (p == NULL)
			kt_cli_nomem();
		for (i = 0; i < nh; i++) {
			memset(&ev, 0, sizeof(ev));
			kt_event_scan(h[i].raw, h[i].len, &ev, NULL);
			p[i].key = order_key(&ev);
			p[i].val = i;
		}
		if (!sorted && kt_sort_pairs(p, nh) == -1)
			kt_cli_nomem();
		for (i = 0; i < nh && !all_done(); i++) {
			struct held *x = &h[p[i].val];

			memset(&ev, 0, sizeof(ev));
			kt_event_scan(x->raw, x->len, &ev, NULL);
			ev.index = x->index;
			feed(&ev);
		}
		free(p);
	}
	if (early && !tail_known) {
		/* Read on to the keys after traceEvents. */
		while ((rc = kt_reader_next(rd, &ev, &err)) == 1)
			;
		if (rc == -1)
			kt_cli_die(&err);
	}
	free(h);
	kt_arena_free(ar);
}

/* Explain a window that matched nothing, and exit 2. */
static void
nothing(void)
{
	char a[48], b[48];

	kt_cli_progress_done();
	switch (o.kind) {
	case W_STEPS:
		if (first_step < 0)
			kt_cli_warn("%s: no ProfilerStep in the trace%s",
			    kt_reader_name(rd), o.has_rank ? " (for that "
			    "rank)" : "");
		else
			kt_cli_warn("%s: no ProfilerStep#%lld to #%lld; the "
			    "trace has steps %lld to %lld", kt_reader_name(rd),
			    (long long)o.step_a, (long long)o.step_b,
			    (long long)first_step, (long long)last_step);
		break;
	case W_TIME:
		if (first_ts == NOEND)
			kt_cli_warn("%s: no event has a time",
			    kt_reader_name(rd));
		else {
			kt_time_format(last_ts - first_ts, 3, a);
			kt_time_format(first_ts, 3, b);
			kt_cli_warn("%s: nothing in the window; the trace spans "
			    "0 to %s us from its first event (absolute %s us)",
			    kt_reader_name(rd), a, b);
		}
		break;
	case W_ANNOTATION:
		kt_cli_warn("%s: %lld annotation%s match%s '%s'; --nth %lld "
		    "asks for more", kt_reader_name(rd), (long long)nmatches,
		    nmatches == 1 ? "" : "s", nmatches == 1 ? "es" : "",
		    o.re_text, (long long)o.nth);
		break;
	}
	kt_cli_die(NULL);
}

/* Parse --steps A-B or --steps N. */
static void
parse_steps(const char *s)
{
	const char *dash = strchr(s, '-');
	char a[32];

	if (dash == NULL) {
		o.step_a = o.step_b = kt_cli_int("--steps", s, 0, INT32_MAX);
		return;
	}
	if ((size_t)(dash - s) >= sizeof(a) || dash == s) {
		kt_cli_warn("--steps: '%s' is not N or A-B", s);
		exit(2);
	}
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = '\0';
	o.step_a = kt_cli_int("--steps", a, 0, INT32_MAX);
	o.step_b = kt_cli_int("--steps", dash + 1, 0, INT32_MAX);
	if (o.step_b < o.step_a) {
		kt_cli_warn("--steps: '%s' ends before it starts", s);
		exit(2);
	}
}

/* Parse a time option with its unit. */
static int64_t
parse_time(const char *opt, const char *s)
{
	int64_t v;

	if (kt_duration_parse(s, &v) == -1) {
		kt_cli_warn("%s: '%s' is not a time with a unit (ns, us, ms, "
		    "s), such as 1.5ms", opt, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "absolute", no_argument, NULL, 'A' },
		{ "annotation", required_argument, NULL, 'a' },
		{ "clip", no_argument, NULL, 'c' },
		{ "cpu-only", no_argument, NULL, 'C' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "nth", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "rank", required_argument, NULL, 'r' },
		{ "split-steps", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "to", required_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_source *src;
	struct kt_error err;
	const struct kt_meta *m;
	size_t i, nm;
	int ch, rc, nkinds = 0, has_steps = 0;
	uint64_t dropped = 0;

	o.co.level = -1;
	o.nth = 1;
	kt_cli_init("kt-slice-window");
	while ((ch = getopt_long(argc, argv, "Aa:cCf:hl:m:n:o:p:r:s:ST:tV",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'A':
			o.absolute = 1;
			break;
		case 'a':
			o.re_text = optarg;
			if ((rc = regcomp(&o.re, optarg, REG_EXTENDED |
			    REG_NOSUB)) != 0) {
				char msg[128];

				regerror(rc, &o.re, msg, sizeof(msg));
				kt_cli_warn("--annotation: '%s': %s", optarg,
				    msg);
				return 2;
			}
			o.kind = W_ANNOTATION;
			nkinds++;
			break;
		case 'c':
			o.clip = 1;
			break;
		case 'C':
			o.cpu_only = 1;
			break;
		case 'f':
			o.from = parse_time("--from", optarg);
			o.has_from = 1;
			break;
		case 'n':
			o.nth = kt_cli_int("--nth", optarg, 1, INT32_MAX);
			break;
		case 'p':
			o.split = (int)kt_cli_int("--split-steps", optarg, 1,
			    INT32_MAX);
			o.kind = W_STEPS;
			nkinds++;
			break;
		case 'r':
			o.rank = kt_cli_int("--rank", optarg, 0, INT32_MAX);
			o.has_rank = 1;
			break;
		case 's':
			parse_steps(optarg);
			o.kind = W_STEPS;
			has_steps = 1;
			nkinds++;
			break;
		case 'T':
			o.to = parse_time("--to", optarg);
			o.has_to = 1;
			break;
		case 't':
			o.tsv = 1;
			break;
		default:
			kt_cli_opt(&o.co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (o.has_from || o.has_to) {
		o.kind = W_TIME;
		nkinds++;
	}
	if (nkinds == 0 && o.has_rank) {
		/* Only a rank: the whole trace of it. */
		o.kind = W_TIME;
		nkinds = 1;
	}
	if (nkinds != 1 || (has_steps && o.split)) {
		kt_cli_warn("choose one window: --steps, --from/--to, "
		    "--annotation or --split-steps");
		usage(stderr);
		return 2;
	}
	if (o.has_to && o.has_from && o.to < o.from) {
		kt_cli_warn("--to is before --from");
		return 2;
	}
	if (o.split && (o.co.output == NULL || strcmp(o.co.output, "-") == 0)) {
		kt_cli_warn("--split-steps writes files: give -o PREFIX");
		return 2;
	}
	if (o.cpu_only && o.kind != W_STEPS) {
		kt_cli_warn("--cpu-only is for --steps windows");
		return 2;
	}
	if (argc > 1) {
		kt_cli_warn("one input at a time");
		return 2;
	}
	kt_cli_inputs(argv, argc);
	if (!o.split && kt_cli_check_output(o.co.output, argv, argc) == -1)
		return 2;
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    o.co.member, o.co.rflags, &src);
	if ((flowkeys = kt_intern_new()) == NULL ||
	    (tracks = kt_intern_new()) == NULL)
		kt_cli_nomem();
	/* A plain file's end first: then reading can stop early. */
	if ((rc = kt_reader_tail(rd, &err)) == -1)
		kt_cli_die(&err);
	tail_known = rc == 0;
	run();
	kt_cli_progress_done();
	if (nwins == 0)
		nothing();
	m = kt_reader_metas(rd, &nm);
	for (i = 0; i < nwins; i++) {
		struct window *w = &wins[i];
		const uint64_t *si;
		size_t nsi, k;
		int applied;

		if (!w->done) {
			if (w->end == NOEND || !w->final)
				w->end = w->end == NOEND ? INT64_MAX - 1 :
				    w->end;
			finalize(w);
		}
		dropped += w->dropped_flows;
		/* Row numbers: map positions through the input's. */
		si = kt_reader_srcindex(rd, &nsi, &applied);
		if (si != NULL && !applied)
			for (k = 0; k < w->nrows; k++)
				if (w->rows[k] < nsi)
					w->rows[k] = si[w->rows[k]];
		for (k = 0; k < w->nrows && w->rows[k] == k; k++)
			;
		kt_cli_out_commit(w->out, kt_writer_end_index(w->w, m, nm,
		    k == w->nrows ? NULL : w->rows, w->nrows) == -1, &err);
		if (o.split)
			printf("%s\n", w->path);
	}
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	if (dropped > 0)
		kt_cli_warn("%s: %llu flow event%s dropped: the other end is "
		    "outside the window", kt_reader_name(rd),
		    (unsigned long long)dropped, dropped == 1 ? "" : "s");
	return 0;
}
