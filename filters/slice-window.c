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

/*
 * An event held by the engine: a copy of its bytes, what deciding its
 * fate needs, and its fields when the output needs them (the TSV form,
 * --clip, a counter moved to a start): else the bytes are enough.
 */
struct item {
	char		*raw;
	size_t		 len;
	uint64_t	 index;
	int64_t		 ts;
	int64_t		 end;		/* ts + dur, or ts */
	int64_t		 flow;		/* flow key id, or -1 */
	struct kt_event	*ev;		/* its fields (raw), or NULL */
	char		 ph;
	uint8_t		 state;
	uint8_t		 is_s;		/* flow start */
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
	/*
	 * Graph launches (see graph_done): their number still open, the
	 * correlations launched after the window's last step, the devices
	 * that ran the window's graph work, and on which of them work
	 * launched after it has begun.
	 */
	size_t		 graphs;
	size_t		 graphs_unseen;	/* no GPU work seen yet */
	struct kt_intern *later;
	struct kt_intern *gdevs;
	uint8_t		*moved;
	size_t		 capmoved, nmoved;
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
	int		 committed;	/* its output is written and closed */
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

/*
 * Everything one run keeps, made in main() and passed down: the
 * options, the input, what a window starting later needs (the open
 * events, the counter values, the metadata events), the windows, and
 * what is known of the trace so far.
 */
struct sw {
	struct opts	 o;
	struct kt_reader *rd;
	struct kt_intern *flowkeys;
	struct kt_buf	 flowkey;	/* flow_key()'s, reused */
	struct kt_intern *tracks;	/* counter tracks */
	struct kt_buf	*lastc;		/* per track: last counter event */
	size_t		 nlastc;
	struct item	*open_;		/* events that may overlap a start */
	size_t		 nopen, capopen;
	struct item	*metas_ev;	/* metadata events, kept for all */
	size_t		 nmeta_ev, capmeta_ev;
	struct window	*wins;
	size_t		 nwins;
	int		 full;		/* held events keep their fields */
	int		 commit_early;	/* commit a split window once done */
	int64_t		 now;
	int64_t		 first_ts;	/* the earliest non-metadata time */
	int64_t		 last_ts;
	int64_t		 first_step, last_step;
	int64_t		 nmatches;
	uint64_t	 nseen;
	int		 tail_known;	/* the keys after the events are known */
};

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

static void	win_drop_work(struct window *);
static void	take_ev(struct sw *, struct window *, const struct kt_event *,
		    int64_t);

/* ------------------------------------------------------------------ */
/* Items. */

/* Copy ev into a new item, with its fields. */
static void
item_make(struct item *it, const struct kt_event *ev)
{
	if ((it->raw = malloc(ev->len ? ev->len : 1)) == NULL ||
	    (it->ev = malloc(sizeof(*it->ev))) == NULL)
		kt_cli_nomem();
	memcpy(it->raw, ev->raw, ev->len);
	*it->ev = *ev;
	it->ev->raw = it->raw;
	it->len = ev->len;
	it->index = ev->index;
	it->ts = ev->ts;
	it->end = ev->ts + ((ev->flags & KT_EV_DUR) && ev->dur > 0 ?
	    ev->dur : 0);
	it->ph = ev->ph;
	it->state = KEEP;
	it->flow = -1;
	it->is_s = 0;
}

/* Free what an item owns (not bytes from a queue). */
static void
item_free(struct item *it)
{
	free(it->raw);
	free(it->ev);
	it->raw = NULL;
	it->ev = NULL;
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

/* Free every chunk of queue q. */
static void
q_free(struct queue *q)
{
	struct qchunk *c, *next;

	for (c = q->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	q->head = q->tail = NULL;
}

/* Duplicate an item (a new copy of its bytes and fields). */
static struct item
item_dup(const struct item *it)
{
	struct item c = *it;

	if ((c.raw = malloc(it->len ? it->len : 1)) == NULL)
		kt_cli_nomem();
	memcpy(c.raw, it->raw, it->len);
	if (it->ev != NULL) {
		if ((c.ev = malloc(sizeof(*c.ev))) == NULL)
			kt_cli_nomem();
		*c.ev = *it->ev;
		c.ev->raw = c.raw;
	}
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
flow_key(struct sw *sw, const struct kt_event *ev)
{
	struct kt_buf *k = &sw->flowkey;
	const char *p;
	size_t n;
	int64_t id;

	k->n = 0;
	p = kt_event_field(ev, KT_F_CAT, &n);
	kt_buf_add(k, p ? p : "", n);
	kt_buf_addc(k, '\t');
	p = kt_event_field(ev, KT_F_NAME, &n);
	kt_buf_add(k, p ? p : "", n);
	kt_buf_addc(k, '\t');
	p = kt_event_field(ev, KT_F_ID, &n);
	kt_buf_add(k, p ? p : "", n);
	if ((id = kt_intern_put(sw->flowkeys, k->p ? k->p : "", k->n)) == -1)
		kt_cli_nomem();
	return id;
}

/* ------------------------------------------------------------------ */
/* Writing a window. */

/*
 * The cut (or carried) copy of in, in b, scanned into ev: clipped to
 * window w at the edges it crosses, or, when newts is not INT64_MIN, a
 * counter value moved to newts.
 */
static void
patched(const struct kt_event *in, const struct window *w, int clip_start,
    int clip_end, int64_t newts, struct kt_buf *b, struct kt_event *ev)
{
	struct kt_patch p;
	struct kt_buf rec = KT_BUF_INIT;
	struct kt_error err;
	char ts[48], dur[48];
	int64_t iend = in->ts + ((in->flags & KT_EV_DUR) && in->dur > 0 ?
	    in->dur : 0);
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
		kt_patch_arg(&p, KT_ARG_CARRIED, t, tn);
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
		kt_patch_arg(&p, KT_ARG_CLIP, rec.p, rec.n);
	}
	memset(ev, 0, sizeof(*ev));
	if (kt_patch_apply(&p, b) == -1 ||
	    kt_event_scan(b->p, b->n, ev, &err) == -1) {
		kt_cli_warn("internal error: patched event");
		kt_cli_die(NULL);
	}
	ev->index = in->index;
	kt_patch_free(&p);
	kt_buf_free(&rec);
}

/*
 * Write ev to window w, clipped to the window when asked; newts, when
 * not INT64_MIN, moves a counter value to the window's start.
 */
static void
emit_ev(struct sw *sw, struct window *w, const struct kt_event *in,
    int64_t newts)
{
	struct kt_event ev;
	const struct kt_event *out = in;
	struct kt_buf b = KT_BUF_INIT;
	int64_t iend = in->ts + ((in->flags & KT_EV_DUR) && in->dur > 0 ?
	    in->dur : 0);
	int clip_start = sw->o.clip && in->ph == 'X' && in->ts < w->start &&
	    (in->flags & KT_EV_TS);
	int clip_end = sw->o.clip && in->ph == 'X' && w->final &&
	    iend > w->end && (in->flags & KT_EV_TS);

	if (clip_start || clip_end || newts != INT64_MIN) {
		patched(in, w, clip_start, clip_end, newts, &b, &ev);
		out = &ev;
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
emit(struct sw *sw, struct window *w, const struct item *it, int64_t newts)
{
	struct kt_event ev;

	if (it->ev != NULL) {
		emit_ev(sw, w, it->ev, newts);
		return;
	}
	/* Held without its fields (JSON, no --clip): the bytes suffice. */
	ev.raw = it->raw;
	ev.len = it->len;
	ev.index = it->index;
	ev.ts = it->ts;
	ev.dur = it->end - it->ts;
	ev.flags = 0;
	ev.ph = it->ph;
	emit_ev(sw, w, &ev, newts);
}

/* Open window w's output and write the top-level keys and metadata. */
static void
win_open(struct sw *sw, struct window *w)
{
	const struct kt_meta *m;
	size_t nm, i;
	const char *path = sw->o.co.output;

	if (sw->o.split) {
		snprintf(w->path, sizeof(w->path), "%s-steps-%lld-%lld.%s",
		    sw->o.co.output, (long long)w->step_a,
		    (long long)w->step_b, sw->o.tsv ? "tsv" : "json");
		path = w->path;
	}
	/* Every window's file is checked against the input (split too). */
	w->out = kt_cli_out_open(path, sw->o.co.level);
	if ((w->w = kt_writer_new(w->out, sw->o.tsv ? KT_WRITE_TSV : 0)) ==
	    NULL)
		kt_cli_nomem();
	m = kt_reader_metas(sw->rd, &nm);
	if (kt_writer_begin(w->w, m, nm, NULL, 0) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
	for (i = 0; i < sw->nmeta_ev; i++)
		emit(sw, w, &sw->metas_ev[i], INT64_MIN);
}

/*
 * Write the end of window w's output (the keys after the events, its
 * row numbers mapped through the input's ktSourceIndex) and commit it;
 * then free what the window holds.
 */
static void
win_commit(struct sw *sw, struct window *w)
{
	const struct kt_meta *m;
	const uint64_t *si;
	struct kt_error err;
	size_t nm, nsi, k;
	int applied;

	memset(&err, 0, sizeof(err));
	m = kt_reader_metas(sw->rd, &nm);
	si = kt_reader_srcindex(sw->rd, &nsi, &applied);
	if (si != NULL && !applied)
		for (k = 0; k < w->nrows; k++)
			if (w->rows[k] < nsi)
				w->rows[k] = si[w->rows[k]];
	for (k = 0; k < w->nrows && w->rows[k] == k; k++)
		;
	kt_cli_out_commit(w->out, kt_writer_end_index(w->w, m, nm,
	    k == w->nrows ? NULL : w->rows, w->nrows) == -1, &err);
	w->out = NULL;
	w->committed = 1;
	kt_writer_free(w->w);
	w->w = NULL;
	win_drop_work(w);
	free(w->rows);
	w->rows = NULL;
	w->nrows = w->caprows = 0;
}

/*
 * Free what deciding window w's events needs (once it is done), but
 * not its output or its row numbers.
 */
static void
win_drop_work(struct window *w)
{
	q_free(&w->q);
	kt_intern_free(w->launched);
	w->launched = NULL;
	kt_intern_free(w->later);
	kt_intern_free(w->gdevs);
	w->later = w->gdevs = NULL;
	free(w->moved);
	w->moved = NULL;
	w->capmoved = w->nmoved = 0;
	free(w->resolved);
	free(w->graph);
	free(w->fifo);
	free(w->flows);
	w->resolved = w->graph = NULL;
	w->fifo = NULL;
	w->flows = NULL;
	w->nresolved = w->nfifo = w->head = w->capfifo = w->nflows = 0;
}

/*
 * A split window that is done but cannot be committed yet (the keys
 * after the events are not known, or metadata may still come): its file
 * is closed until then, so that a thousand windows need neither a
 * thousand descriptors nor their buffers.
 */
static void
win_suspend(struct window *w)
{
	win_drop_work(w);
	if (kt_out_suspend(w->out) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
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
release(struct sw *sw, struct window *w)
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
			emit(sw, w, it, INT64_MIN);
		else if (it->flow >= 0)
			w->dropped_flows++;
		free(it->ev);	/* its bytes go back to the queue */
		it->ev = NULL;
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
decide(const struct sw *sw, struct window *w, struct item *it)
{
	/* With --clip, an X event may cross an end not yet certain. */
	if (it->ts > w->end || (sw->o.clip && it->ph == 'X' && !w->final &&
	    (w->end == NOEND || it->end > w->end)))
		return UNSURE;
	if (it->flow >= 0) {
		decide_flow(w, it);
		return it->state;
	}
	return KEEP;
}

/* Hold item it in window w's FIFO, its bytes in the window's queue. */
static void
hold(struct sw *sw, struct window *w, struct item *it)
{
	push(&w->fifo, &w->nfifo, &w->capfifo, it);
	if (it->flow >= 0 && it->state == KEEP)
		release(sw, w);
}

/* Take item it (owned) into window w. */
static void
take(struct sw *sw, struct window *w, struct item *it)
{
	char *raw;

	it->state = (uint8_t)decide(sw, w, it);
	if (it->state == KEEP && w->head == w->nfifo) {
		emit(sw, w, it, INT64_MIN);
		item_free(it);
		return;
	}
	if (!sw->full) {
		free(it->ev);
		it->ev = NULL;
	}
	raw = q_get(&w->q, it->len ? it->len : 1);
	memcpy(raw, it->raw, it->len);
	free(it->raw);
	it->raw = raw;
	if (it->ev != NULL)
		it->ev->raw = raw;
	hold(sw, w, it);
}

/* Take event ev into window w: written at once when nothing waits. */
static void
take_ev(struct sw *sw, struct window *w, const struct kt_event *ev,
    int64_t flow)
{
	struct item it;

	it.raw = NULL;
	it.ev = NULL;
	it.len = ev->len;
	it.index = ev->index;
	it.ts = ev->ts;
	it.end = ev->ts + ((ev->flags & KT_EV_DUR) && ev->dur > 0 ?
	    ev->dur : 0);
	it.ph = ev->ph;
	it.flow = flow;
	it.is_s = ev->ph == 's';
	it.state = (uint8_t)decide(sw, w, &it);
	if (it.state == KEEP && w->head == w->nfifo) {
		emit_ev(sw, w, ev, INT64_MIN);
		return;
	}
	it.raw = q_get(&w->q, ev->len ? ev->len : 1);
	memcpy(it.raw, ev->raw, ev->len);
	if (sw->full) {
		if ((it.ev = malloc(sizeof(*it.ev))) == NULL)
			kt_cli_nomem();
		*it.ev = *ev;
		it.ev->raw = it.raw;
	}
	hold(sw, w, &it);
}

/* The window's end is certain: decide everything it holds. */
static void
finalize(struct sw *sw, struct window *w)
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
	release(sw, w);
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
win_start(struct sw *sw, int64_t start, int64_t end, int final, int64_t a,
    int64_t b)
{
	struct window *w;
	size_t i, k;

	if ((w = realloc(sw->wins, (sw->nwins + 1) * sizeof(*w))) == NULL)
		kt_cli_nomem();
	sw->wins = w;
	w = &sw->wins[sw->nwins++];
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
	win_open(sw, w);
	/* Events open across the start, in file order. */
	for (i = 0; i < sw->nopen; i++) {
		const struct item *op = &sw->open_[i];
		struct item it;

		if (op->end < start || op->ph == 'C' || op->ts >= start ||
		    op->flow >= 0)
			continue;
		it = item_dup(op);
		take(sw, w, &it);
	}
	/*
	 * The counter values in force at the start, carried to it, and
	 * those set at the start itself: they sort at the start.
	 */
	for (k = 0; k < sw->nlastc; k++) {
		const struct kt_buf *lc = &sw->lastc[k];
		struct kt_event ev;
		struct item it;

		if (lc->n == 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		if (kt_event_scan(lc->p, lc->n, &ev, NULL) == -1 ||
		    !(ev.flags & KT_EV_TS))
			continue;
		memcpy(&ev.index, lc->p + lc->n + 1, sizeof(ev.index));
		if (ev.ts >= start) {
			take_ev(sw, w, &ev, -1);
			continue;
		}
		item_make(&it, &ev);
		emit(sw, w, &it, start);
		item_free(&it);
	}
	/* Then the events at the start that came before this one. */
	for (i = 0; i < sw->nopen; i++) {
		struct item it;

		if (sw->open_[i].ph == 'C' || sw->open_[i].ts < start)
			continue;
		it = item_dup(&sw->open_[i]);
		take(sw, w, &it);
	}
	return w;
}

/*
 * A graph runs many kernels under one correlation, so no one kernel says
 * its work is done.  The rule (kt-slice-window(1)): a window's graph
 * launches are done once each has run GPU work, and on every device
 * where they ran, work launched after the window's last step has begun.
 * Until then the window's end stays uncertain.
 */
static void
graph_check(struct window *w)
{
	if (w->graphs_unseen == 0 && w->gdevs != NULL &&
	    w->nmoved == kt_intern_count(w->gdevs)) {
		w->outstanding -= w->graphs;
		w->graphs = 0;
	}
}

static void
graph_work(struct window *w, const struct kt_event *ev, int64_t id)
{
	const char *p;
	size_t n, before;
	int64_t d;

	if (!w->resolved[id]) {
		w->resolved[id] = 1;
		w->graphs_unseen--;
	}
	p = kt_event_field(ev, KT_F_PID, &n);
	if (p == NULL)
		p = "", n = 0;
	if (w->gdevs == NULL && (w->gdevs = kt_intern_new()) == NULL)
		kt_cli_nomem();
	before = kt_intern_count(w->gdevs);
	if ((d = kt_intern_put(w->gdevs, p, n)) == -1)
		kt_cli_nomem();
	if ((size_t)d == before && (size_t)d >= w->capmoved) {
		size_t c = w->capmoved ? w->capmoved * 2 : 8;
		uint8_t *t = realloc(w->moved, c);

		if (t == NULL)
			kt_cli_nomem();
		memset(t + w->capmoved, 0, c - w->capmoved);
		w->moved = t;
		w->capmoved = c;
	}
	graph_check(w);
}

/* GPU work launched after window w began on ev's device. */
static void
graph_next(struct window *w, const struct kt_event *ev)
{
	const char *p;
	size_t n;
	int64_t d;

	if (w->gdevs == NULL)
		return;
	p = kt_event_field(ev, KT_F_PID, &n);
	if (p == NULL)
		p = "", n = 0;
	if ((d = kt_intern_find(w->gdevs, p, n)) < 0 || w->moved[d])
		return;
	w->moved[d] = 1;
	w->nmoved++;
	graph_check(w);
}

/* Track window w's end: CPU end of its last step, GPU work launched. */
static void
track_end(const struct sw *sw, struct window *w, const struct kt_event *ev)
{
	int64_t end = ev->ts + ((ev->flags & KT_EV_DUR) ? ev->dur : 0);
	int64_t k, id;

	if (w->final)
		return;
	if (sw->o.kind == W_STEPS && ev->kind == KT_STEP &&
	    (k = kt_event_step(ev)) == w->step_b) {
		w->seen_b = 1;
		w->cpu_end = end;
	}
	if (sw->o.kind != W_STEPS)
		return;
	if (!sw->o.cpu_only && (ev->kind == KT_CUDA_RUNTIME ||
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
			if ((w->graph[id] = graph_launch(ev)) != 0) {
				w->graphs++;
				w->graphs_unseen++;
			}
			w->outstanding++;
		}
	} else if (w->graphs > 0 && w->seen_b && ev->ts > w->cpu_end &&
	    (ev->kind == KT_CUDA_RUNTIME || ev->kind == KT_CUDA_DRIVER) &&
	    ev->f[KT_F_CORR].type != KT_NONE && launches(ev)) {
		/* Work launched after the window: the next step's. */
		size_t n;
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((w->later == NULL && (w->later = kt_intern_new()) ==
		    NULL) || kt_intern_put(w->later, p, n) == -1)
			kt_cli_nomem();
	}
	if (!sw->o.cpu_only && (ev->kind == KT_KERNEL ||
	    ev->kind == KT_GPU_MEMCPY || ev->kind == KT_GPU_MEMSET) &&
	    ev->f[KT_F_CORR].type != KT_NONE) {
		size_t n;
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((id = kt_intern_find(w->launched, p, n)) >= 0) {
			if (!w->resolved[id] && !w->graph[id]) {
				w->resolved[id] = 1;
				w->outstanding--;
			} else if (w->graph[id] && w->graphs > 0)
				graph_work(w, ev, id);
			if (end > w->gpu_end)
				w->gpu_end = end;
		} else if (w->later != NULL &&
		    kt_intern_find(w->later, p, n) >= 0)
			graph_next(w, ev);
	}
	if (!sw->o.cpu_only && ev->kind == KT_GPU_USER_ANNOTATION &&
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
evict(struct sw *sw)
{
	size_t i, k = 0;

	for (i = 0; i < sw->nopen; i++) {
		struct item *op = &sw->open_[i];

		if (op->end < sw->now && op->ts < sw->now) {
			item_free(op);
			continue;
		}
		sw->open_[k++] = *op;
	}
	sw->nopen = k;
}

/* Does an event held open overlap [s, e]? */
static int
window_open_at(const struct sw *sw, int64_t s, int64_t e)
{
	size_t i;

	for (i = 0; i < sw->nopen; i++)
		if (sw->open_[i].end >= s && sw->open_[i].ts <= e &&
		    sw->open_[i].ph != 'C')
			return 1;
	return 0;
}

/* Will a window still start later? */
static int
more_windows(const struct sw *sw)
{
	if (sw->o.split)
		return 1;
	return sw->nwins == 0;
}

/* A metadata event: kept for the windows to come, written to the open. */
static void
feed_meta(struct sw *sw, const struct kt_event *ev)
{
	struct item it;
	size_t i;

	item_make(&it, ev);
	push(&sw->metas_ev, &sw->nmeta_ev, &sw->capmeta_ev, &it);
	/* Every window has every metadata event, late ones too. */
	for (i = 0; i < sw->nwins; i++)
		if (!sw->wins[i].committed) {
			emit(sw, &sw->wins[i], &it, INT64_MIN);
			if (sw->wins[i].done && sw->o.split &&
			    kt_out_suspend(sw->wins[i].out) == -1)
				kt_cli_out_commit(sw->wins[i].out, 1, NULL);
		}
}

/* What is known of the trace: its time span and its steps. */
static void
note_times(struct sw *sw, const struct kt_event *ev)
{
	int64_t k;

	if (ev->ts > sw->now)
		sw->now = ev->ts;
	if (sw->first_ts == NOEND)
		sw->first_ts = ev->ts;
	if (ev->ts > sw->last_ts)
		sw->last_ts = ev->ts;
	if (ev->kind == KT_STEP && (k = kt_event_step(ev)) >= 0) {
		if (sw->first_step < 0 || k < sw->first_step)
			sw->first_step = k;
		if (k > sw->last_step)
			sw->last_step = k;
	}
}

/*
 * Close the windows whose end has passed.  A split window's output is
 * committed at once when nothing read later can change it (see run):
 * then the outputs open at a time are those of the windows open then.
 */
static void
close_ended(struct sw *sw)
{
	size_t i;

	for (i = 0; i < sw->nwins; i++) {
		struct window *w = &sw->wins[i];

		if (!w->done && w->end != NOEND && sw->now > w->end &&
		    (w->final || (w->seen_b && w->outstanding == 0))) {
			finalize(sw, w);
			if (sw->o.split && sw->commit_early)
				win_commit(sw, w);
			else if (sw->o.split)
				win_suspend(w);
		}
	}
}

/* Does the annotation ev match the K-th time (--annotation, --nth)? */
static int
nth_match(struct sw *sw, const struct kt_event *ev)
{
	size_t n;
	const char *p = kt_event_field(ev, KT_F_NAME, &n);
	char name[4096];

	if (p == NULL || n < 2 || n - 2 >= sizeof(name))
		return 0;
	memcpy(name, p + 1, n - 2);
	name[n - 2] = '\0';
	return regexec(&sw->o.re, name, 0, NULL, 0) == 0 &&
	    ++sw->nmatches == sw->o.nth;
}

/* Start a window at ev when it is where one starts. */
static void
maybe_start(struct sw *sw, const struct kt_event *ev)
{
	const struct opts *o = &sw->o;
	int64_t k;

	if (o->kind == W_TIME && sw->nwins == 0) {
		int64_t s = o->absolute ? o->from : sw->first_ts + o->from;
		int64_t e = !o->has_to ? NOEND : o->absolute ? o->to :
		    sw->first_ts + o->to;

		/* Events open across the start seed it, even when none
		 * begins inside it. */
		if (ev->ts >= s && (ev->ts <= e || window_open_at(sw, s, e)))
			win_start(sw, s, e, 1, 0, 0);
	} else if (o->kind == W_STEPS && ev->kind == KT_STEP &&
	    (k = kt_event_step(ev)) >= 0) {
		if (!o->split && sw->nwins == 0 && k >= o->step_a &&
		    k <= o->step_b)
			win_start(sw, ev->ts, NOEND, 0, k, o->step_b);
		else if (o->split && (sw->nwins == 0 ||
		    k > sw->wins[sw->nwins - 1].step_b))
			win_start(sw, ev->ts, NOEND, 0, k, k + o->split - 1);
	} else if (o->kind == W_ANNOTATION && sw->nwins == 0 &&
	    (ev->kind == KT_USER_ANNOTATION ||
	    ev->kind == KT_GPU_USER_ANNOTATION) && nth_match(sw, ev))
		win_start(sw, ev->ts, ev->ts + ((ev->flags & KT_EV_DUR) ?
		    ev->dur : 0), 1, 0, 0);
}

/* Remember the last value of ev's counter track, for a later start. */
static void
remember_counter(struct sw *sw, const struct kt_event *ev)
{
	struct kt_buf key = KT_BUF_INIT, *lc;
	const char *p;
	size_t n;
	int64_t t;

	kt_event_thread_key(ev, &key);
	p = kt_event_field(ev, KT_F_NAME, &n);
	kt_buf_add(&key, p ? p : "", n);
	if ((t = kt_intern_put(sw->tracks, key.p, key.n)) == -1)
		kt_cli_nomem();
	kt_buf_free(&key);
	if ((size_t)t >= sw->nlastc) {
		struct kt_buf *l = realloc(sw->lastc, ((size_t)t + 1) *
		    sizeof(*l));

		if (l == NULL)
			kt_cli_nomem();
		memset(l + sw->nlastc, 0, ((size_t)t + 1 - sw->nlastc) *
		    sizeof(*l));
		sw->lastc = l;
		sw->nlastc = (size_t)t + 1;
	}
	/* The bytes, then a NUL, then the row number. */
	lc = &sw->lastc[t];
	lc->n = 0;
	kt_buf_add(lc, ev->raw, ev->len);
	kt_buf_addc(lc, '\0');
	kt_buf_add(lc, &ev->index, sizeof(ev->index));
	lc->n = ev->len;
}

/* One event of the sorted stream. */
static void
feed(struct sw *sw, const struct kt_event *ev)
{
	size_t i;

	if (sw->o.has_rank && ev->f[KT_F_RANK].type != KT_NONE) {
		int64_t r;

		if (kt_event_field_int(ev, KT_F_RANK, &r) == 0 &&
		    r != sw->o.rank)
			return;
	}
	if (ev->ph == 'M') {
		feed_meta(sw, ev);
		return;
	}
	if (!(ev->flags & KT_EV_TS))
		return;
	note_times(sw, ev);
	close_ended(sw);
	maybe_start(sw, ev);
	/* Only now, after a window may have started here, forget what ended. */
	if (sw->nopen > 64 && more_windows(sw))
		evict(sw);
	/* Feed the open windows. */
	for (i = 0; i < sw->nwins; i++) {
		struct window *w = &sw->wins[i];

		if (w->done || ev->ts < w->start)
			continue;
		track_end(sw, w, ev);
		if (w->final && ev->ts > w->end)
			continue;
		take_ev(sw, w, ev, ev->kind == KT_FLOW ? flow_key(sw, ev) : -1);
	}
	/* Remember what a later window may need at its start. */
	if (more_windows(sw)) {
		if (ev->ph == 'C')
			remember_counter(sw, ev);
		else {
			struct item it;

			item_make(&it, ev);
			if (ev->kind == KT_FLOW) {
				it.flow = flow_key(sw, ev);
				it.is_s = ev->ph == 's';
			}
			push(&sw->open_, &sw->nopen, &sw->capopen, &it);
		}
	}
}

/* Has every window ended, with no more to come? */
static int
all_done(const struct sw *sw)
{
	size_t i;

	if (more_windows(sw))
		return 0;
	for (i = 0; i < sw->nwins; i++)
		if (!sw->wins[i].done)
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

/* The events held so far, while it is not known whether it is sorted. */
struct heldset {
	struct kt_arena	*ar;
	struct held	*h;
	size_t		 nh, caph;
};

/* Hold a copy of ev. */
static void
hold_ev(struct heldset *hd, const struct kt_event *ev)
{
	if (hd->nh == hd->caph) {
		hd->caph = hd->caph ? hd->caph * 2 : 4096;
		if ((hd->h = realloc(hd->h, hd->caph * sizeof(*hd->h))) == NULL)
			kt_cli_nomem();
	}
	if ((hd->h[hd->nh].raw = kt_arena_copy(hd->ar, ev->raw, ev->len)) ==
	    NULL)
		kt_cli_nomem();
	hd->h[hd->nh].len = ev->len;
	hd->h[hd->nh++].index = ev->index;
}

/* Feed the events held, in file order, and forget them. */
static void
feed_held(struct sw *sw, struct heldset *hd)
{
	size_t i;

	for (i = 0; i < hd->nh; i++) {
		struct kt_event e;

		memset(&e, 0, sizeof(e));
		kt_event_scan(hd->h[i].raw, hd->h[i].len, &e, NULL);
		e.index = hd->h[i].index;
		feed(sw, &e);
	}
	hd->nh = 0;
}

/* Feed the events held, sorted by time (stably) unless sorted. */
static void
feed_sorted(struct sw *sw, struct heldset *hd, int sorted)
{
	struct kt_pair *p = malloc(hd->nh * sizeof(*p));
	struct kt_event ev;
	size_t i;

	if (p == NULL)
		kt_cli_nomem();
	for (i = 0; i < hd->nh; i++) {
		memset(&ev, 0, sizeof(ev));
		kt_event_scan(hd->h[i].raw, hd->h[i].len, &ev, NULL);
		p[i].key = order_key(&ev);
		p[i].val = i;
	}
	if (!sorted && kt_sort_pairs(p, hd->nh) == -1)
		kt_cli_nomem();
	for (i = 0; i < hd->nh && !all_done(sw); i++) {
		struct held *x = &hd->h[p[i].val];

		memset(&ev, 0, sizeof(ev));
		kt_event_scan(x->raw, x->len, &ev, NULL);
		ev.index = x->index;
		feed(sw, &ev);
	}
	free(p);
}

/*
 * Read the trace: stream it when it is sorted; else hold it all, sort
 * it (stably, as kt normalize does) and stream that.
 *
 * A split window's output is committed as soon as the window is done
 * (commit_early) when nothing read later can change it.  The keys after
 * traceEvents, ktSourceIndex among them (which maps the row numbers),
 * must be known already: they are for a plain file (kt_reader_tail);
 * for any other input (standard input, gzip, an archive member) they
 * come only at the end, and every window's output stays open to the
 * end.  And no metadata event may come later: it would belong in every
 * window.  Streaming, the metadata came first (as kt normalize writes
 * it): that is when a single window stops reading early, so a late one
 * would miss --steps K-K's output too.  Held: sorted, metadata goes
 * first; held in file order (a short sorted input), it came first.
 */
static void
run(struct sw *sw)
{
	struct kt_event ev;
	struct kt_error err;
	struct heldset hd;
	uint64_t last = 0;
	int rc, sorted = 1, early = 0, seen_event = 0, meta_first = 0;

	memset(&hd, 0, sizeof(hd));
	if ((hd.ar = kt_arena_new()) == NULL)
		kt_cli_nomem();
	while ((rc = kt_reader_next(sw->rd, &ev, &err)) == 1) {
		uint64_t key = order_key(&ev);

		/* Metadata may come anywhere; times must not go back. */
		if (ev.ph != 'M') {
			if (key < last)
				sorted = 0;
			last = key > last ? key : last;
			seen_event = 1;
		} else if (!seen_event)
			meta_first = 1;
		sw->nseen++;
		if ((sw->nseen & 0xffff) == 0)
			kt_cli_progress(sw->rd);
		if (sorted && sw->nseen > PROBE_EVENTS) {
			sw->commit_early = sw->tail_known && meta_first;
			feed_held(sw, &hd);
			feed(sw, &ev);
			/*
			 * Stop early only when the metadata came first (as kt
			 * normalize writes it): else some may still come.
			 */
			if (meta_first && all_done(sw)) {
				early = 1;
				break;
			}
			continue;
		}
		if (!sorted && sw->nseen > PROBE_EVENTS && hd.nh == 0) {
			kt_cli_warn("%s: not sorted by time at event %llu, after "
			    "%d sorted ones; sort it with kt normalize first",
			    kt_reader_name(sw->rd),
			    (unsigned long long)sw->nseen, PROBE_EVENTS);
			kt_cli_die(NULL);
		}
		hold_ev(&hd, &ev);
	}
	if (rc == -1)
		kt_cli_die(&err);
	if (hd.nh > 0) {
		/* Held: sort by time (stable), then stream. */
		sw->commit_early = sw->tail_known && (meta_first || !sorted);
		feed_sorted(sw, &hd, sorted);
	}
	if (early && !sw->tail_known) {
		/* Read on to the keys after traceEvents. */
		while ((rc = kt_reader_next(sw->rd, &ev, &err)) == 1)
			;
		if (rc == -1)
			kt_cli_die(&err);
	}
	free(hd.h);
	kt_arena_free(hd.ar);
}

/* Explain a window that matched nothing, and exit 2. */
static void
nothing(const struct sw *sw)
{
	const struct opts *o = &sw->o;
	const char *name = kt_reader_name(sw->rd);
	char a[48], b[48];

	kt_cli_progress_done();
	switch (o->kind) {
	case W_STEPS:
		if (sw->first_step < 0)
			kt_cli_warn("%s: no ProfilerStep in the trace%s", name,
			    o->has_rank ? " (for that rank)" : "");
		else
			kt_cli_warn("%s: no ProfilerStep#%lld to #%lld; the "
			    "trace has steps %lld to %lld", name,
			    (long long)o->step_a, (long long)o->step_b,
			    (long long)sw->first_step,
			    (long long)sw->last_step);
		break;
	case W_TIME:
		if (sw->first_ts == NOEND)
			kt_cli_warn("%s: no event has a time", name);
		else {
			kt_time_format(sw->last_ts - sw->first_ts, 3, a);
			kt_time_format(sw->first_ts, 3, b);
			kt_cli_warn("%s: nothing in the window; the trace spans "
			    "0 to %s us from its first event (absolute %s us)",
			    name, a, b);
		}
		break;
	case W_ANNOTATION:
		kt_cli_warn("%s: %lld annotation%s match%s '%s'; --nth %lld "
		    "asks for more", name, (long long)sw->nmatches,
		    sw->nmatches == 1 ? "" : "s", sw->nmatches == 1 ? "es" : "",
		    o->re_text, (long long)o->nth);
		break;
	}
	kt_cli_die(NULL);
}

/* Parse --steps A-B or --steps N (kt_steps_parse). */
static void
parse_steps(struct opts *o, const char *s)
{
	const char *bad;
	size_t nbad;

	switch (kt_steps_parse(s, &o->step_a, &o->step_b, &bad, &nbad)) {
	case KT_STEPS_OK:
		return;
	case KT_STEPS_NUMBER:
		kt_cli_warn("--steps: '%.*s' is not a number from 0 to %d",
		    (int)nbad, bad, INT32_MAX);
		break;
	case KT_STEPS_ORDER:
		kt_cli_warn("--steps: '%s' ends before it starts", s);
		break;
	default:
		kt_cli_warn("--steps: '%s' is not N or A-B", s);
	}
	exit(2);
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

/* --annotation RE. */
static void
parse_annotation(struct opts *o, const char *re)
{
	char msg[160];
	int rc;

	if (kt_regex_check(re, msg, sizeof(msg)) == -1) {
		kt_cli_warn("--annotation: '%s': %s", re, msg);
		exit(2);
	}
	o->re_text = re;
	if ((rc = regcomp(&o->re, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &o->re, msg, sizeof(msg));
		kt_cli_warn("--annotation: '%s': %s", re, msg);
		exit(2);
	}
}

/* Refuse a mix of windows or options; exit 2. */
static void
check_args(const struct opts *o, int nkinds, int has_steps, int noperands)
{
	if (nkinds != 1 || (has_steps && o->split)) {
		kt_cli_warn("choose one window: --steps, --from/--to, "
		    "--annotation or --split-steps");
		usage(stderr);
		exit(2);
	}
	if (o->has_to && o->has_from && o->to < o->from) {
		kt_cli_warn("--to is before --from");
		exit(2);
	}
	if (o->split && (o->co.output == NULL ||
	    strcmp(o->co.output, "-") == 0)) {
		kt_cli_warn("--split-steps writes files: give -o PREFIX");
		exit(2);
	}
	if (o->cpu_only && o->kind != W_STEPS) {
		kt_cli_warn("--cpu-only is for --steps windows");
		exit(2);
	}
	if (noperands > 1) {
		kt_cli_warn("one input at a time");
		exit(2);
	}
}

/*
 * The options, checked: one window.  Returns the index of the first
 * operand; exits 2 on a mistake.
 */
static int
parse_args(struct opts *o, int argc, char *argv[])
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
	int ch, nkinds = 0, has_steps = 0;

	o->co.level = -1;
	o->nth = 1;
	while ((ch = getopt_long(argc, argv, "Aa:cCf:hl:m:n:o:p:r:s:ST:tV",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'A':
			o->absolute = 1;
			break;
		case 'a':
			parse_annotation(o, optarg);
			o->kind = W_ANNOTATION;
			nkinds++;
			break;
		case 'c':
			o->clip = 1;
			break;
		case 'C':
			o->cpu_only = 1;
			break;
		case 'f':
			o->from = parse_time("--from", optarg);
			o->has_from = 1;
			break;
		case 'n':
			o->nth = kt_cli_int("--nth", optarg, 1, INT32_MAX);
			break;
		case 'p':
			o->split = (int)kt_cli_int("--split-steps", optarg, 1,
			    INT32_MAX);
			o->kind = W_STEPS;
			nkinds++;
			break;
		case 'r':
			o->rank = kt_cli_int("--rank", optarg, 0, INT32_MAX);
			o->has_rank = 1;
			break;
		case 's':
			parse_steps(o, optarg);
			o->kind = W_STEPS;
			has_steps = 1;
			nkinds++;
			break;
		case 'T':
			o->to = parse_time("--to", optarg);
			o->has_to = 1;
			break;
		case 't':
			o->tsv = 1;
			break;
		default:
			kt_cli_opt(&o->co, ch, optarg, usage);
		}
	}
	if (o->has_from || o->has_to) {
		o->kind = W_TIME;
		nkinds++;
	}
	if (nkinds == 0 && o->has_rank) {
		/* Only a rank: the whole trace of it. */
		o->kind = W_TIME;
		nkinds = 1;
	}
	check_args(o, nkinds, has_steps, argc - optind);
	return optind;
}

/* Free what sw holds, the windows committed. */
static void
sw_free(struct sw *sw)
{
	size_t i;

	for (i = 0; i < sw->nopen; i++)
		item_free(&sw->open_[i]);
	for (i = 0; i < sw->nmeta_ev; i++)
		item_free(&sw->metas_ev[i]);
	for (i = 0; i < sw->nlastc; i++)
		kt_buf_free(&sw->lastc[i]);
	free(sw->open_);
	free(sw->metas_ev);
	free(sw->lastc);
	free(sw->wins);
	kt_intern_free(sw->flowkeys);
	kt_intern_free(sw->tracks);
	kt_buf_free(&sw->flowkey);
	if (sw->o.re_text != NULL)
		regfree(&sw->o.re);
	kt_reader_free(sw->rd);
}

int
main(int argc, char *argv[])
{
	struct sw sw;
	struct kt_source *src;
	struct kt_error err;
	size_t i;
	int rc;
	uint64_t dropped = 0;

	memset(&sw, 0, sizeof(sw));
	sw.now = INT64_MIN;
	sw.first_ts = NOEND;
	sw.last_ts = INT64_MIN;
	sw.first_step = sw.last_step = -1;
	kt_cli_init("kt-slice-window");
	i = (size_t)parse_args(&sw.o, argc, argv);
	argc -= (int)i;
	argv += i;
	sw.full = sw.o.tsv || sw.o.clip;
	kt_cli_inputs(argv, argc);
	if (!sw.o.split && kt_cli_check_output(sw.o.co.output, argv, argc) ==
	    -1)
		return 2;
	sw.rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] :
	    "<stdin>", sw.o.co.member, sw.o.co.rflags, &src);
	if ((sw.flowkeys = kt_intern_new()) == NULL ||
	    (sw.tracks = kt_intern_new()) == NULL)
		kt_cli_nomem();
	/* A plain file's end first: then reading can stop early. */
	if ((rc = kt_reader_tail(sw.rd, &err)) == -1)
		kt_cli_die(&err);
	sw.tail_known = rc == 0;
	run(&sw);
	kt_cli_progress_done();
	if (sw.nwins == 0)
		nothing(&sw);
	for (i = 0; i < sw.nwins; i++) {
		struct window *w = &sw.wins[i];

		if (!w->done) {
			if (w->end == NOEND || !w->final)
				w->end = w->end == NOEND ? INT64_MAX - 1 :
				    w->end;
			finalize(&sw, w);
		}
		dropped += w->dropped_flows;
		if (!w->committed)
			win_commit(&sw, w);
		if (sw.o.split)
			printf("%s\n", w->path);
	}
	kt_cli_report_repairs(kt_reader_name(sw.rd),
	    kt_reader_repairs(sw.rd));
	if (dropped > 0)
		kt_cli_warn("%s: %llu flow event%s dropped: the other end is "
		    "outside the window", kt_reader_name(sw.rd),
		    (unsigned long long)dropped, dropped == 1 ? "" : "s");
	sw_free(&sw);
	kt_source_close(src);
	return 0;
}
