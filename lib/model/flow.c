/*
 * flow.c: flow ends bound to their slices (FORMAT.md).  A flow end (ph
 * s, t or f) binds to a slice of its own thread: the innermost X slice
 * whose [ts, ts + dur] holds its ts, or, for an f without bp "e", the
 * first slice that begins at or after it.  The ends of one flow share
 * (cat, name, id) as written.  Events are named by the number the
 * caller gives with each (kt-select and kt-inspect give positions).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "kt.h"

/* An X slice, a flow end's anchor: by (thread, ts, longest first). */
struct slice {
	int64_t		 ts;
	int64_t		 end;
	uint64_t	 pos;
	uint64_t	 parent;	/* into slices: the innermost around
					   its start, or KT_FLOW_NONE */
	uint32_t	 thread;
};

struct kt_flows {
	struct slice		*sl;
	size_t			 nsl, capsl;
	struct kt_flow_end	*fl;
	size_t			 nfl, capfl;
	struct kt_intern	*threads;
	struct kt_intern	*keys;
	struct kt_buf		 tmp;
};

struct kt_flows *
kt_flows_new(void)
{
	struct kt_flows *f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	if ((f->threads = kt_intern_new()) == NULL ||
	    (f->keys = kt_intern_new()) == NULL) {
		kt_flows_free(f);
		return NULL;
	}
	return f;
}

void
kt_flows_free(struct kt_flows *f)
{
	if (f == NULL)
		return;
	free(f->sl);
	free(f->fl);
	kt_intern_free(f->threads);
	kt_intern_free(f->keys);
	kt_buf_free(&f->tmp);
	free(f);
}

/* The interned thread key of ev, or -1. */
static int64_t
thread_of(struct kt_flows *f, const struct kt_event *ev)
{
	f->tmp.n = 0;
	if (kt_event_thread_key(ev, &f->tmp) == -1)
		return -1;
	return kt_intern_put(f->threads, f->tmp.p ? f->tmp.p : "", f->tmp.n);
}

/* The interned key of a flow, (cat, name, id) as written, or -1. */
static int64_t
flow_key(struct kt_flows *f, const struct kt_event *ev)
{
	static const enum kt_field parts[] = { KT_F_CAT, KT_F_NAME, KT_F_ID };
	struct kt_buf *k = &f->tmp;
	const char *p;
	size_t i, n;

	k->n = 0;
	for (i = 0; i < 3; i++) {
		p = kt_event_field(ev, parts[i], &n);
		kt_buf_add(k, p ? p : "", n);
		kt_buf_addc(k, '\t');
	}
	if (k->err)
		return -1;
	return kt_intern_put(f->keys, k->p, k->n);
}

static int
add_slice(struct kt_flows *f, const struct kt_event *ev, uint64_t pos)
{
	struct slice *sl;
	int64_t th;

	if (f->nsl == f->capsl) {
		size_t c = f->capsl ? f->capsl * 2 : 4096;

		if ((sl = realloc(f->sl, c * sizeof(*sl))) == NULL)
			return -1;
		f->sl = sl;
		f->capsl = c;
	}
	if ((th = thread_of(f, ev)) == -1)
		return -1;
	sl = &f->sl[f->nsl++];
	sl->ts = ev->ts;
	sl->end = ev->ts + (ev->dur > 0 ? ev->dur : 0);
	sl->pos = pos;
	sl->parent = KT_FLOW_NONE;
	sl->thread = (uint32_t)th;
	return 0;
}

static int
add_flow(struct kt_flows *f, const struct kt_event *ev, uint64_t pos)
{
	struct kt_flow_end *e;
	int64_t key, th;

	if (f->nfl == f->capfl) {
		size_t c = f->capfl ? f->capfl * 2 : 4096;

		if ((e = realloc(f->fl, c * sizeof(*e))) == NULL)
			return -1;
		f->fl = e;
		f->capfl = c;
	}
	if ((key = flow_key(f, ev)) == -1 || (th = thread_of(f, ev)) == -1)
		return -1;
	e = &f->fl[f->nfl++];
	e->ts = (ev->flags & KT_EV_TS) ? ev->ts : INT64_MIN;
	e->pos = pos;
	e->anchor = KT_FLOW_NONE;
	e->key = (uint32_t)key;
	e->thread = (uint32_t)th;
	e->next = ev->ph == 'f' && !kt_event_field_is(ev, KT_F_BP, "e");
	return 0;
}

int
kt_flows_add(struct kt_flows *f, const struct kt_event *ev, uint64_t pos)
{
	if (ev->kind == KT_FLOW)
		return add_flow(f, ev, pos);
	if (ev->ph == 'X' && (ev->flags & KT_EV_TS) && (ev->flags & KT_EV_DUR))
		return add_slice(f, ev, pos);
	return 0;
}

static int
cmp_slice(const void *a, const void *b, void *ctx)
{
	const struct slice *x = a, *y = b;

	(void)ctx;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;	/* longest first */
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int
cmp_flow(const void *a, const void *b, void *ctx)
{
	const struct kt_flow_end *x = a, *y = b;

	(void)ctx;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The first slice after those of (thread, ts < t), or of ts <= t. */
static size_t
slice_bound(const struct kt_flows *f, uint32_t thread, int64_t t, int upper)
{
	size_t lo = 0, hi = f->nsl;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct slice *m = &f->sl[mid];

		if (m->thread < thread || (m->thread == thread &&
		    (m->ts < t || (upper && m->ts == t))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Each slice's parent, the innermost slice of its thread around its
 * start (X slices nest on a thread, FORMAT.md), for the innermost
 * slice around a flow end.
 */
static int
parents(struct kt_flows *f)
{
	size_t *stack, depth = 0, i;

	if ((stack = malloc((f->nsl ? f->nsl : 1) * sizeof(*stack))) == NULL)
		return -1;
	for (i = 0; i < f->nsl; i++) {
		struct slice *c = &f->sl[i];

		if (i > 0 && f->sl[i - 1].thread != c->thread)
			depth = 0;
		while (depth > 0 && f->sl[stack[depth - 1]].end < c->ts)
			depth--;
		c->parent = depth > 0 ? stack[depth - 1] : KT_FLOW_NONE;
		stack[depth++] = i;
	}
	free(stack);
	return 0;
}

int
kt_flows_bind(struct kt_flows *f)
{
	size_t i;

	kt_sort_r(f->sl, f->nsl, sizeof(*f->sl), cmp_slice, NULL);
	if (parents(f) == -1)
		return -1;
	for (i = 0; i < f->nfl; i++) {
		struct kt_flow_end *e = &f->fl[i];
		size_t k;
		uint64_t c;

		if (e->ts == INT64_MIN)
			continue;
		if (e->next) {
			k = slice_bound(f, e->thread, e->ts, 0);
			if (k < f->nsl && f->sl[k].thread == e->thread)
				e->anchor = f->sl[k].pos;
			continue;
		}
		k = slice_bound(f, e->thread, e->ts, 1);
		if (k == 0 || f->sl[k - 1].thread != e->thread)
			continue;
		for (c = k - 1; c != KT_FLOW_NONE && f->sl[c].end < e->ts;
		    c = f->sl[c].parent)
			;
		if (c != KT_FLOW_NONE)
			e->anchor = f->sl[c].pos;
	}
	kt_sort_r(f->fl, f->nfl, sizeof(*f->fl), cmp_flow, NULL);
	return 0;
}

const struct kt_flow_end *
kt_flows_ends(const struct kt_flows *f, size_t *n)
{
	*n = f->nfl;
	return f->fl;
}
