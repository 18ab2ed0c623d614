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
	struct kt_idmemo	 memo;		/* the last event's thread */
	struct kt_flowkeys	*keys;
	struct kt_buf		 tmp;
};

/* ------------------------------------------------------------------ */
/* Flow keys (kt.h). */

#define FLOW_TEXT	((uint32_t)1 << 31)	/* cn: v is a text's number */

struct flowkey {
	int64_t		 v;		/* the integer, or the text's number */
	uint32_t	 cn;		/* the cat and name's number */
};

/*
 * The cat and names seen last, with their numbers: a trace's flows take
 * a few (Kineto's ac2g and fwdbwd flows come interleaved).
 */
#define NCATNAME	4

struct kt_flowkeys {
	struct kt_intern *catname;	/* "cat\tname" */
	struct kt_buf	 key[NCATNAME];	/* "cat\tname" seen last */
	uint32_t	 keycn[NCATNAME]; /* their numbers */
	unsigned	 nextkey;	/* the one to replace next */
	struct kt_intern *text;		/* ids that are not integers */
	uint32_t	*slots;		/* 1 + a key's place in keys; 0: empty */
	size_t		 nslots;	/* a power of two */
	struct flowkey	*keys;		/* as they came: key i has number i */
	size_t		 nkeys;
	size_t		 capkeys;
};

struct kt_flowkeys *
kt_flowkeys_new(void)
{
	struct kt_flowkeys *fk;

	if ((fk = calloc(1, sizeof(*fk))) == NULL)
		return NULL;
	if ((fk->catname = kt_intern_new()) == NULL ||
	    (fk->text = kt_intern_new()) == NULL) {
		kt_flowkeys_free(fk);
		return NULL;
	}
	return fk;
}

void
kt_flowkeys_free(struct kt_flowkeys *fk)
{
	size_t i;

	if (fk == NULL)
		return;
	kt_intern_free(fk->catname);
	kt_intern_free(fk->text);
	for (i = 0; i < NCATNAME; i++)
		kt_buf_free(&fk->key[i]);
	free(fk->slots);
	free(fk->keys);
	free(fk);
}

/* The slot of (cn, v): eight consecutive v to a run of slots. */
static size_t
flow_slot(const struct kt_flowkeys *fk, uint32_t cn, int64_t v)
{
	uint64_t h = ((uint64_t)v >> 3 ^ (uint64_t)cn * 0xff51afd7ed558ccdULL) *
	    0x9e3779b97f4a7c15ULL;

	return (size_t)((h >> 20 << 3 | ((uint64_t)v & 7)) & (fk->nslots - 1));
}

static int
flowkeys_grow(struct kt_flowkeys *fk)
{
	size_t i, j, n = fk->nslots ? 2 * fk->nslots : 4096;
	uint32_t *s;

	if ((s = kt_zalloc(n, sizeof(*s))) == NULL)
		return -1;
	free(fk->slots);
	fk->slots = s;
	fk->nslots = n;
	for (i = 0; i < fk->nkeys; i++) {
		j = flow_slot(fk, fk->keys[i].cn, fk->keys[i].v);
		while (fk->slots[j] != 0)
			j = (j + 1) & (fk->nslots - 1);
		fk->slots[j] = (uint32_t)i + 1;
	}
	return 0;
}

/*
 * The integer of an id's text when it is canonical (-?[1-9][0-9]{0,17}
 * or 0), else -1.
 */
static int
flow_int(const char *p, size_t n, int64_t *v)
{
	size_t i = 0;
	int64_t x = 0;

	if (n > 0 && p[0] == '-')
		i = 1;
	if (n == i || n - i > 18 || (p[i] == '0' && (n - i > 1 || i == 1)))
		return -1;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		x = x * 10 + (p[i] - '0');
	}
	*v = p[0] == '-' ? -x : x;
	return 0;
}

int64_t
kt_flowkeys_put(struct kt_flowkeys *fk, const struct kt_event *ev)
{
	struct flowkey *k;
	const char *cat, *name, *id;
	size_t cn, nn, in, j, i;
	int64_t v, x;
	uint32_t c;

	cat = kt_event_field(ev, KT_F_CAT, &cn);
	name = kt_event_field(ev, KT_F_NAME, &nn);
	id = kt_event_field(ev, KT_F_ID, &in);
	/* The cat and name's number: most often one of the last few's. */
	for (i = 0; i < NCATNAME; i++) {
		const struct kt_buf *b = &fk->key[i];

		if (b->n == cn + 1 + nn && (cn == 0 || memcmp(b->p, cat,
		    cn) == 0) && (nn == 0 || memcmp(b->p + cn + 1, name,
		    nn) == 0))
			break;
	}
	if (i == NCATNAME) {
		struct kt_buf *b = &fk->key[i = fk->nextkey];

		fk->nextkey = (fk->nextkey + 1) % NCATNAME;
		b->n = 0;
		kt_buf_add(b, cat ? cat : "", cn);
		kt_buf_addc(b, '\t');
		kt_buf_add(b, name ? name : "", nn);
		if (b->err || (x = kt_intern_put(fk->catname, b->p,
		    b->n)) == -1 || x >= FLOW_TEXT) {
			b->n = 0;
			return -1;
		}
		fk->keycn[i] = (uint32_t)x;
	}
	c = fk->keycn[i];
	if (id == NULL || flow_int(id, in, &v) == -1) {
		if ((v = kt_intern_put(fk->text, id ? id : "", in)) == -1)
			return -1;
		c |= FLOW_TEXT;
	}
	if (2 * (fk->nkeys + 1) > fk->nslots && flowkeys_grow(fk) == -1)
		return -1;
	j = flow_slot(fk, c, v);
	while (fk->slots[j] != 0) {
		k = &fk->keys[fk->slots[j] - 1];
		if (k->v == v && k->cn == c)
			return fk->slots[j] - 1;
		j = (j + 1) & (fk->nslots - 1);
	}
	if (fk->nkeys >= UINT32_MAX - 1)
		return -1;
	if (fk->nkeys == fk->capkeys) {
		size_t cap = fk->capkeys ? 2 * fk->capkeys : 1024;

		if ((k = realloc(fk->keys, cap * sizeof(*k))) == NULL)
			return -1;
		fk->keys = k;
		fk->capkeys = cap;
	}
	fk->keys[fk->nkeys].v = v;
	fk->keys[fk->nkeys].cn = c;
	fk->slots[j] = (uint32_t)++fk->nkeys;
	return fk->slots[j] - 1;
}

size_t
kt_flowkeys_count(const struct kt_flowkeys *fk)
{
	return fk->nkeys;
}

/* ------------------------------------------------------------------ */
/* Flow ends and their slices. */

struct kt_flows *
kt_flows_new(void)
{
	struct kt_flows *f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	kt_idmemo_init(&f->memo);
	if ((f->threads = kt_intern_new()) == NULL ||
	    (f->keys = kt_flowkeys_new()) == NULL) {
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
	kt_flowkeys_free(f->keys);
	kt_buf_free(&f->tmp);
	free(f);
}

/* The interned thread key of ev, or -1: most often the last event's. */
static int64_t
thread_of(struct kt_flows *f, const struct kt_event *ev)
{
	uint32_t hit;
	int64_t id;

	if (kt_idmemo_hit(&f->memo, ev, 0, 1, &hit))
		return hit;
	f->tmp.n = 0;
	if (kt_event_thread_key(ev, &f->tmp) == -1 ||
	    (id = kt_intern_put(f->threads, f->tmp.p ? f->tmp.p : "",
	    f->tmp.n)) == -1)
		return -1;
	kt_idmemo_keep(&f->memo, ev, 0, 1, (uint32_t)id);
	return id;
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
	if ((key = kt_flowkeys_put(f->keys, ev)) == -1 ||
	    (th = thread_of(f, ev)) == -1)
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

/*
 * The first slice of sl[lo..hi) (one thread's, in cmp_slice's order)
 * after those of ts < t, or of ts <= t.
 */
static size_t
slice_bound(const struct slice *sl, size_t lo, size_t hi, int64_t t,
    int upper)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sl[mid].ts < t || (upper && sl[mid].ts == t))
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

/*
 * The slices in cmp_slice's order, and where each thread's begin
 * (first[th] .. first[th + 1], nth threads).  A thread's slices mostly
 * come in that order already, interleaved with other threads': they are
 * moved, thread by thread in the order they came (a counting sort, into
 * an array of the size a merge sort would take), and only a thread's
 * run found out of order is sorted.  0 or -1 (out of memory).
 */
static int
sort_slices(struct kt_flows *f, size_t **firstp, size_t nth)
{
	struct slice *to;
	size_t *first, *at, i, t;

	*firstp = NULL;
	if ((first = calloc(nth + 1, sizeof(*first))) == NULL ||
	    (at = malloc((nth + 1) * sizeof(*at))) == NULL) {
		free(first);
		return -1;
	}
	for (i = 0; i < f->nsl; i++)
		first[f->sl[i].thread + 1]++;
	for (t = 0; t < nth; t++)
		first[t + 1] += first[t];
	memcpy(at, first, (nth + 1) * sizeof(*at));
	if (f->nsl > 0) {
		if ((to = malloc(f->nsl * sizeof(*to))) == NULL) {
			free(first);
			free(at);
			return -1;
		}
		kt_mem_huge(to, f->nsl * sizeof(*to));
		for (i = 0; i < f->nsl; i++)
			to[at[f->sl[i].thread]++] = f->sl[i];
		free(f->sl);
		f->sl = to;
		f->capsl = f->nsl;
	}
	free(at);
	for (t = 0; t < nth; t++) {
		size_t lo = first[t], hi = first[t + 1];

		for (i = lo + 1; i < hi; i++)
			if (cmp_slice(&f->sl[i - 1], &f->sl[i], NULL) > 0)
				break;
		if (i < hi)
			kt_sort_r(f->sl + lo, hi - lo, sizeof(*f->sl),
			    cmp_slice, NULL);
	}
	*firstp = first;
	return 0;
}

/*
 * The flow ends in (key, number) order.  They are added in the order of
 * their numbers, as a pass over a trace gives them: then a counting sort
 * by key (keys are dense) keeps that order within a key; else a sort.
 * 0 or -1 (out of memory).
 */
static int
sort_ends(struct kt_flows *f)
{
	struct kt_flow_end *to;
	size_t *at, nk = kt_flowkeys_count(f->keys), i, k;

	for (i = 1; i < f->nfl; i++)
		if (f->fl[i - 1].pos > f->fl[i].pos)
			break;
	if (i < f->nfl) {
		kt_sort_r(f->fl, f->nfl, sizeof(*f->fl), cmp_flow, NULL);
		return 0;
	}
	if (f->nfl < 2)
		return 0;
	if ((at = calloc(nk + 1, sizeof(*at))) == NULL)
		return -1;
	if ((to = malloc(f->nfl * sizeof(*to))) == NULL) {
		free(at);
		return -1;
	}
	kt_mem_huge(to, f->nfl * sizeof(*to));
	for (i = 0; i < f->nfl; i++)
		at[f->fl[i].key + 1]++;
	for (k = 0; k < nk; k++)
		at[k + 1] += at[k];
	for (i = 0; i < f->nfl; i++)
		to[at[f->fl[i].key]++] = f->fl[i];
	free(at);
	free(f->fl);
	f->fl = to;
	f->capfl = f->nfl;
	return 0;
}

int
kt_flows_bind(struct kt_flows *f)
{
	size_t i, nth = kt_intern_count(f->threads), *first;

	if (sort_slices(f, &first, nth) == -1)
		return -1;
	if (parents(f) == -1) {
		free(first);
		return -1;
	}
	for (i = 0; i < f->nfl; i++) {
		struct kt_flow_end *e = &f->fl[i];
		size_t k, lo, hi;
		uint64_t c;

		if (e->ts == INT64_MIN || e->thread >= nth)
			continue;
		lo = first[e->thread];
		hi = first[e->thread + 1];
		if (e->next) {
			k = slice_bound(f->sl, lo, hi, e->ts, 0);
			if (k < hi)
				e->anchor = f->sl[k].pos;
			continue;
		}
		k = slice_bound(f->sl, lo, hi, e->ts, 1);
		if (k == lo)
			continue;
		for (c = k - 1; c != KT_FLOW_NONE && f->sl[c].end < e->ts;
		    c = f->sl[c].parent)
			;
		if (c != KT_FLOW_NONE)
			e->anchor = f->sl[c].pos;
	}
	free(first);
	return sort_ends(f);
}

const struct kt_flow_end *
kt_flows_ends(const struct kt_flows *f, size_t *n)
{
	*n = f->nfl;
	return f->fl;
}
