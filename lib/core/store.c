/*
 * store.c: the event store, what every filter that holds events keeps
 * them in: one compact record per event (struct kt_rec: its bytes, row
 * number, times, kind, ph, interned thread), the offsets of only the
 * fields the filter asked for, packed beside the records, and the bytes
 * in an arena of the store's, or, for the events of a held file
 * (lib/core/hold.c), their place in it, in one more slot beside the
 * fields: their bytes are read again when asked for.
 *
 * Removals (kt_store_shift, kt_store_keep, kt_store_set) leave their
 * bytes in the arena until the dead bytes outweigh the live ones; then
 * the live ones are copied into a new arena (the store compacts), so a
 * store used as a queue stays within about twice what it holds.
 */
#include <stdlib.h>
#include <string.h>

#include "ktint.h"

#define REC_NOFIELDS	0x80	/* flags: fields too long to pack */
#define REC_INFILE	0x40	/* flags: the bytes are in the held file */
#define REC_OURS	(REC_NOFIELDS | REC_INFILE)
#define VAL_LEN_MAX	((1u << 29) - 1)
#define COMPACT_MIN	(1u << 20)	/* dead bytes before a compaction */

/* A field's value packed: offset, then length << 3 | type. */
struct sval {
	uint32_t	 off;
	uint32_t	 lt;
};

struct kt_store {
	unsigned	 flags;
	uint32_t	 mask;		/* fields kept */
	int		 fld[KT_NFIELDS]; /* their slots, in field order */
	uint8_t		 list[KT_NFIELDS]; /* the field of each slot */
	int		 nf;
	int		 ns;		/* slots per record: nf, 1 more with a
					   holder (the place in its file) */
	struct kt_rec	*recs;		/* recs[first..first+n) */
	struct sval	*vals;		/* ns per record, beside recs */
	size_t		 first, n, cap;
	struct kt_arena	*arena;		/* the bytes copied */
	struct kt_hold	*holder;
	uint64_t	 bytes;		/* in the arena */
	uint64_t	 live;		/* of records still held */
	struct kt_intern *threads;
	struct kt_buf	 key;		/* a thread's key */
	struct kt_idmemo memo;		/* the last event's thread */
};

struct kt_store *
kt_store_new(unsigned flags, uint32_t fields, struct kt_hold *holder)
{
	struct kt_store *s;
	int f;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->flags = flags;
	s->mask = fields & KT_FALL;
	s->holder = holder;
	kt_idmemo_init(&s->memo);
	for (f = 0; f < KT_NFIELDS; f++) {
		s->fld[f] = -1;
		if (s->mask & KT_FBIT(f)) {
			s->list[s->nf] = (uint8_t)f;
			s->fld[f] = s->nf++;
		}
	}
	s->ns = s->nf + (holder != NULL && !(flags & KT_STORE_NOBYTES));
	if (((flags & KT_STORE_THREADS) &&
	    (s->threads = kt_intern_new()) == NULL) ||
	    (!(flags & KT_STORE_NOBYTES) && holder == NULL &&
	    (s->arena = kt_arena_new()) == NULL)) {
		kt_store_free(s);
		return NULL;
	}
	return s;
}

void
kt_store_free(struct kt_store *s)
{
	if (s == NULL)
		return;
	free(s->recs);
	free(s->vals);
	kt_arena_free(s->arena);
	kt_intern_free(s->threads);
	kt_buf_free(&s->key);
	free(s);
}

size_t
kt_store_count(const struct kt_store *s)
{
	return s->n;
}

struct kt_rec *
kt_store_recs(struct kt_store *s, size_t *n)
{
	if (n != NULL)
		*n = s->n;
	return s->recs != NULL ? s->recs + s->first : NULL;
}

const struct kt_intern *
kt_store_threads(const struct kt_store *s)
{
	return s->threads;
}

uint64_t
kt_store_memory(const struct kt_store *s)
{
	return (uint64_t)s->cap * (sizeof(struct kt_rec) +
	    (size_t)s->ns * sizeof(struct sval)) + s->bytes;
}

/* The packed fields of the record at array position i (NULL: none kept). */
static struct sval *
vals_at(const struct kt_store *s, size_t i)
{
	return s->ns > 0 ? s->vals + i * (size_t)s->ns : NULL;
}

/* Room for one more record at the end.  0 or -1. */
static int
room(struct kt_store *s)
{
	size_t cap;
	void *p;

	if (s->first > 0 && (s->first + s->n == s->cap ||
	    s->first > s->n)) {
		/* Slide the records left over those shifted out. */
		memmove(s->recs, s->recs + s->first, s->n * sizeof(*s->recs));
		if (s->ns > 0)
			memmove(s->vals, s->vals + s->first * (size_t)s->ns,
			    s->n * (size_t)s->ns * sizeof(*s->vals));
		s->first = 0;
	}
	if (s->first + s->n < s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 1024;
	if ((p = realloc(s->recs, cap * sizeof(*s->recs))) == NULL)
		return -1;
	s->recs = p;
	if (s->ns > 0) {
		if ((p = realloc(s->vals, cap * (size_t)s->ns *
		    sizeof(*s->vals))) == NULL)
			return -1;
		s->vals = p;
	}
	s->cap = cap;
	return 0;
}

/* The interned thread of ev; the last one's is remembered (kt_idmemo). */
static int
thread_id(struct kt_store *s, const struct kt_event *ev, uint32_t *id)
{
	int64_t t;

	if (kt_idmemo_hit(&s->memo, ev, 0, 1, id))
		return 0;
	s->key.n = 0;
	if (kt_event_thread_key(ev, &s->key) == -1 ||
	    (t = kt_intern_put(s->threads, s->key.p, s->key.n)) == -1)
		return -1;
	*id = (uint32_t)t;
	kt_idmemo_keep(&s->memo, ev, 0, 1, *id);
	return 0;
}

/* Pack ev's kept fields into v; 0, or -1 when one is too long. */
static int
pack(const struct kt_store *s, const struct kt_event *ev, struct sval *v)
{
	int k;

	for (k = 0; k < s->nf; k++) {
		const struct kt_val *x = &ev->f[s->list[k]];

		if (x->len > VAL_LEN_MAX)
			return -1;
		v[k].off = x->off;
		v[k].lt = x->len << 3 | x->type;
	}
	return 0;
}

/*
 * Fill record r from ev: its bytes at raw, or (raw NULL, infile) at
 * offset off of the held file.
 */
static int
fill(struct kt_store *s, struct kt_rec *r, struct sval *v, const char *raw,
    int infile, uint64_t off, const struct kt_event *ev,
    struct kt_error *err)
{
	r->raw = raw;
	r->len = (uint32_t)ev->len;
	r->index = ev->index;
	r->ts = ev->ts;
	r->dur = ev->dur;
	r->flags = (uint8_t)(ev->flags & ~(unsigned)REC_OURS);
	if (s->ns > s->nf) {
		v[s->nf].off = (uint32_t)off;
		v[s->nf].lt = (uint32_t)(off >> 32);
		if (infile)
			r->flags |= REC_INFILE;
	}
	r->kind = (uint8_t)ev->kind;
	r->ph = ev->ph;
	r->aux = 0;
	r->tag = 0;
	r->thread = UINT32_MAX;
	if (s->threads != NULL && thread_id(s, ev, &r->thread) == -1) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return -1;
	}
	if (s->nf > 0 && ((ev->known & s->mask) != s->mask ||
	    pack(s, ev, v) == -1)) {
		/* A view taken again scans (kt_store_view). */
		memset(v, 0, (size_t)s->nf * sizeof(*v));
		r->flags |= REC_NOFIELDS;
	}
	return 0;
}

/* A copy of raw[0..len) in the store's arena. */
static const char *
copy_bytes(struct kt_store *s, const char *raw, size_t len,
    struct kt_error *err)
{
	const char *p;

	if (s->arena == NULL && (s->arena = kt_arena_new()) == NULL) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	if ((p = kt_arena_copy(s->arena, raw, len ? len : 1)) == NULL) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	s->bytes += len ? len : 1;
	s->live += len ? len : 1;
	return p;
}

/*
 * The bytes of ev to hold: none, its place in the held file (for an
 * event just read by rd from it: *infile set, *off), or a copy.
 */
static int
bytes_of(struct kt_store *s, const struct kt_reader *rd,
    const struct kt_event *ev, const char **raw, int *infile,
    uint64_t *off, struct kt_error *err)
{
	*raw = NULL;
	*infile = 0;
	*off = 0;
	if (s->flags & KT_STORE_NOBYTES)
		return 0;
	if (rd != NULL && (*infile = kt_hold_where(s->holder, ev, off,
	    err)) != 0) {
		*infile = *infile == 1;
		return *infile ? 0 : -1;
	}
	*raw = copy_bytes(s, ev->raw, ev->len, err);
	return *raw == NULL ? -1 : 0;
}

struct kt_rec *
kt_store_add(struct kt_store *s, const struct kt_reader *rd,
    const struct kt_event *ev, struct kt_error *err)
{
	struct kt_rec *r;
	const char *raw = NULL;
	uint64_t off;
	size_t i;
	int infile;

	if (ev->len > UINT32_MAX) {
		kt_error_set(err, NULL, 0, 0, "an event of over 4 GB");
		return NULL;
	}
	if (s->n >= UINT32_MAX) {
		kt_error_set(err, NULL, 0, 0, "more than 2^32 events");
		return NULL;
	}
	if (room(s) == -1) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	if (bytes_of(s, rd, ev, &raw, &infile, &off, err) == -1)
		return NULL;
	i = s->first + s->n;
	r = &s->recs[i];
	if (fill(s, r, vals_at(s, i), raw, infile, off, ev, err) == -1)
		return NULL;
	s->n++;
	return r;
}

struct kt_rec *
kt_store_copy(struct kt_store *dst, const struct kt_store *src, size_t i,
    struct kt_error *err)
{
	struct kt_event ev;

	if (kt_store_load(src, i, &ev, err) == -1)
		return NULL;
	return kt_store_add(dst, NULL, &ev, err);
}

/*
 * Compact the arena when the dead bytes outweigh the live ones: the live
 * bytes go into one new chunk (when it cannot be had, nothing changes).
 */
static void
maybe_compact(struct kt_store *s)
{
	struct kt_arena *a;
	char *p = NULL;
	size_t i;

	if (s->arena == NULL || s->bytes - s->live < COMPACT_MIN ||
	    s->bytes - s->live < s->live)
		return;
	if ((a = kt_arena_new()) == NULL)
		return;
	if (s->live > 0 && (p = kt_arena_alloc(a, (size_t)s->live)) == NULL) {
		kt_arena_free(a);
		return;
	}
	for (i = s->first; i < s->first + s->n; i++) {
		struct kt_rec *r = &s->recs[i];
		size_t len = r->len ? r->len : 1;

		if (r->raw == NULL)
			continue;
		memcpy(p, r->raw, len);
		r->raw = p;
		p += len;
	}
	kt_arena_free(s->arena);
	s->arena = a;
	s->bytes = s->live;
}

/* A record's bytes are gone. */
static void
dead(struct kt_store *s, const struct kt_rec *r)
{
	if (r->raw != NULL)
		s->live -= r->len ? r->len : 1;
}

struct kt_rec *
kt_store_set(struct kt_store *s, size_t i, const struct kt_reader *rd,
    const struct kt_event *ev, struct kt_error *err)
{
	struct kt_rec *r = &s->recs[s->first + i], old = *r;
	struct sval *v = vals_at(s, s->first + i), oldv[KT_NFIELDS + 1];
	const char *raw = NULL;
	uint64_t off;
	int infile;

	if (ev->len > UINT32_MAX) {
		kt_error_set(err, NULL, 0, 0, "an event of over 4 GB");
		return NULL;
	}
	if (bytes_of(s, rd, ev, &raw, &infile, &off, err) == -1)
		return NULL;
	if (v != NULL)
		memcpy(oldv, v, (size_t)s->ns * sizeof(*v));
	if (fill(s, r, v, raw, infile, off, ev, err) == -1) {
		*r = old;
		if (v != NULL)
			memcpy(v, oldv, (size_t)s->ns * sizeof(*v));
		return NULL;
	}
	dead(s, &old);
	maybe_compact(s);
	return &s->recs[s->first + i];
}

/* Record i as an event, its bytes at raw (NULL: none). */
static void
view(const struct kt_store *s, size_t i, const char *raw,
    struct kt_event *ev)
{
	const struct kt_rec *r = &s->recs[s->first + i];
	const struct sval *v = vals_at(s, s->first + i);
	int k, fl;

	ev->raw = raw;
	ev->len = r->len;
	ev->index = r->index;
	ev->ts = r->ts;
	ev->dur = r->dur;
	ev->flags = r->flags & ~(unsigned)REC_OURS;
	ev->kind = (enum kt_kind)r->kind;
	ev->ph = r->ph;
	ev->ts_decimals = ev->dur_decimals = 0;
	ev->known = 0;
	/* Where it ends in the held file, when it is there. */
	ev->end = kt_store_end(s, i);
	memset(ev->f, 0, sizeof(ev->f));
	if (r->flags & REC_NOFIELDS)
		return;		/* none known */
	ev->known = s->mask;
	for (k = 0; k < s->nf; k++) {
		struct kt_val *x = &ev->f[s->list[k]];

		x->off = v[k].off;
		x->len = v[k].lt >> 3;
		x->type = (uint8_t)(v[k].lt & 7);
	}
	/* The fraction digits a patch of the times keeps. */
	if (ev->f[KT_F_TS].type == KT_NUMBER && raw != NULL)
		(void)kt_time_parse(raw + ev->f[KT_F_TS].off,
		    ev->f[KT_F_TS].len, &(int64_t){ 0 }, &fl,
		    &ev->ts_decimals);
	if (ev->f[KT_F_DUR].type == KT_NUMBER && raw != NULL)
		(void)kt_time_parse(raw + ev->f[KT_F_DUR].off,
		    ev->f[KT_F_DUR].len, &(int64_t){ 0 }, &fl,
		    &ev->dur_decimals);
}

uint64_t
kt_store_end(const struct kt_store *s, size_t i)
{
	const struct kt_rec *r = &s->recs[s->first + i];
	const struct sval *v;

	if (!(r->flags & REC_INFILE))
		return 0;
	v = vals_at(s, s->first + i) + s->nf;
	return ((uint64_t)v->lt << 32 | v->off) + r->len;
}

void
kt_store_view(const struct kt_store *s, size_t i, struct kt_event *ev)
{
	view(s, i, s->recs[s->first + i].raw, ev);
}

const char *
kt_store_bytes(const struct kt_store *s, size_t i, struct kt_error *err)
{
	const struct kt_rec *r = &s->recs[s->first + i];
	const struct sval *v;

	if (r->flags & REC_INFILE) {
		v = vals_at(s, s->first + i) + s->nf;
		return kt_hold_bytes(s->holder, (uint64_t)v->lt << 32 | v->off,
		    r->len, err);
	}
	if (r->raw == NULL)
		kt_error_set(err, NULL, 0, 0, "no bytes kept");
	return r->raw;
}

int
kt_store_load(const struct kt_store *s, size_t i, struct kt_event *ev,
    struct kt_error *err)
{
	const char *raw;

	if ((raw = kt_store_bytes(s, i, err)) == NULL)
		return -1;
	view(s, i, raw, ev);
	return 0;
}

int
kt_store_event(const struct kt_store *s, size_t i, struct kt_event *ev,
    struct kt_error *err)
{
	const struct kt_rec *r = &s->recs[s->first + i];
	const char *raw;

	memset(ev, 0, sizeof(*ev));
	if ((raw = kt_store_bytes(s, i, err)) == NULL)
		return -1;
	if (kt_event_scan(raw, r->len, ev, err) == -1)
		return -1;
	ev->index = r->index;
	ev->flags |= r->flags & (KT_EV_REPAIRED | KT_EV_PATCHED);
	/* What the reader made of the times stands (KT_READ_ANYTIME). */
	ev->flags = (ev->flags & ~(unsigned)(KT_EV_TS | KT_EV_DUR)) |
	    (r->flags & (KT_EV_TS | KT_EV_DUR));
	ev->ts = r->ts;
	ev->dur = r->dur;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Order and removal. */

uint32_t *
kt_store_order(const struct kt_store *s, uint64_t (*key)(const struct
    kt_rec *, void *), void *ctx)
{
	const struct kt_rec *recs = kt_store_recs((struct kt_store *)s, NULL);
	struct kt_pair *p;
	uint32_t *o;
	size_t i, n = s->n;
	int sorted = 1;

	if ((p = malloc((n ? n : 1) * sizeof(*p))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		p[i].key = key(&recs[i], ctx);
		p[i].val = i;
		if (i > 0 && p[i].key < p[i - 1].key)
			sorted = 0;
	}
	if (!sorted && kt_sort_pairs(p, n) == -1) {
		free(p);
		return NULL;
	}
	/* The positions, in the pairs' memory, then that made smaller. */
	o = (uint32_t *)(void *)p;
	for (i = 0; i < n; i++)
		o[i] = (uint32_t)p[i].val;
	if ((o = realloc(p, (n ? n : 1) * sizeof(*o))) == NULL)
		o = (uint32_t *)(void *)p;
	return o;
}

void
kt_store_shift(struct kt_store *s, size_t n)
{
	size_t i;

	if (n > s->n)
		n = s->n;
	for (i = 0; i < n; i++)
		dead(s, &s->recs[s->first + i]);
	s->first += n;
	s->n -= n;
	if (s->n == 0)
		s->first = 0;
	maybe_compact(s);
}

void
kt_store_keep(struct kt_store *s, int (*keep)(const struct kt_rec *,
    void *), void *ctx)
{
	size_t i, k = s->first, nf = (size_t)s->ns;

	for (i = s->first; i < s->first + s->n; i++) {
		if (!keep(&s->recs[i], ctx)) {
			dead(s, &s->recs[i]);
			continue;
		}
		if (k != i) {
			s->recs[k] = s->recs[i];
			if (nf > 0)
				memcpy(s->vals + k * nf, s->vals + i * nf,
				    nf * sizeof(*s->vals));
		}
		k++;
	}
	s->n = k - s->first;
	maybe_compact(s);
}
