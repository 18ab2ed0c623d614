/*
 * model.c: the analysis model.  One pass over a reader keeps, for each
 * GPU activity, CPU span, gpu_user_annotation and ProfilerStep, a small
 * fixed-size record (never the event's text), with names interned once.
 * After the pass the records are sorted, GPU activities are joined to
 * their launching runtime calls by correlation, and assigned to steps.
 * kt-bucket, kt-gaps and the views of kt-decompose, kt-overlap and kt
 * views all work from this model.
 */
#define _GNU_SOURCE

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kt.h"

/* A growable array of fixed-size records. */
struct vec {
	void	*p;
	size_t	 n;
	size_t	 cap;
};

/*
 * A flow end kept for after the pass: an ac2g end that the pass could
 * not settle at once (see flow()), or (with KT_MODEL_SEQ) a fwdbwd end.
 */
enum { FL_AC2G_S, FL_AC2G_F, FL_FWDBWD_S, FL_FWDBWD_F };
struct flowend {
	int64_t		 ts;
	int64_t		 id;
	int64_t		 tid;		/* FL_AC2G_F: the stream (tid) */
	uint32_t	 where;		/* a thread; FL_AC2G_F: a device */
	uint32_t	 span;		/* fwdbwd: the op it binds to */
	uint8_t		 kind;
};

/* Room for one more record of size sz; returns it (zeroed) or NULL. */
static void *
vec_push(struct vec *v, size_t sz)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *p;

		if ((p = realloc(v->p, cap * sz)) == NULL)
			return NULL;
		v->p = p;
		v->cap = cap;
		kt_mem_huge(p, cap * sz);
	}
	memset((char *)v->p + v->n * sz, 0, sz);
	return (char *)v->p + v->n++ * sz;
}

/*
 * Room for n records up front.  For a large input this is address space
 * more than memory (pages count only once written), and it spares the
 * copies that growing by doubling would make.  0 or -1.
 */
static int
vec_reserve(struct vec *v, size_t n, size_t sz)
{
	void *p;

	if (n <= v->cap)
		return 0;
	if ((p = realloc(v->p, n * sz)) == NULL)
		return -1;
	v->p = p;
	v->cap = n;
	kt_mem_huge(p, n * sz);
	return 0;
}

/* Give back what a vec holds beyond its records. */
static void *
vec_trim(struct vec *v, size_t sz)
{
	void *p;

	if (v->n == 0) {
		free(v->p);
		return NULL;
	}
	if (v->n < v->cap && (p = realloc(v->p, v->n * sz)) != NULL)
		return p;
	return v->p;
}

#define NCACHE	4096		/* slots of the recent-names cache */

/* Loading state beyond the model itself. */
struct load {
	struct kt_model	*m;
	struct kt_intern *devkeys;	/* "rank\001pid" -> temporary device */
	struct kt_intern *thkeys;	/* "rank\001pid\ttid" -> temporary thread */
	struct kt_intern *flowdevs;	/* the device keys of kept ac2g "f" */
	struct kt_pidrank *pidrank;	/* a flow's rank: its pid's */
	struct vec	 devs, acts, comms, threads, anns, stacks, seqs,
			 shapes, nodes, flows;
	/*
	 * Each thread's spans apart, in the order read (by the thread's
	 * number while reading), put together in the threads' order once
	 * they are sorted (spans_join).
	 */
	struct vec	*tsp;
	size_t		 ntsp;		/* tsp[0..ntsp), some empty */
	size_t		 nspans;	/* in all */
	size_t		 sphint;	/* room for a thread's (spans_vec) */
	uint32_t	 last_sp;	/* the thread of the last span read */
	unsigned	 flags;
	struct kt_buf	 tmp;
	struct kt_buf	 key;
	int64_t		*dev_rank;	/* per temporary device: rank */
	int64_t		 gpu_sum;	/* every activity's dur, added */
	/* The last device and thread keys looked up, to skip the hashing. */
	struct kt_buf	 dev_key, th_key;
	uint32_t	 last_dev;
	uint32_t	 last_thread;
	struct kt_idmemo dev_raw, th_raw;
	/* Names seen lately, to skip the hashing of long kernel names. */
	struct ncache {
		const char	*p;	/* the interned copy */
		size_t		 n;
		uint32_t	 id;
	}		 nc[NCACHE];
};

/*
 * An integer in the value v of ev (a number, or a string holding one).
 * 0 or -1.
 */
static int
val_int(const struct kt_event *ev, const struct kt_val *v, int64_t *out)
{
	struct kt_event tmp;

	tmp.raw = ev->raw;
	tmp.f[0] = *v;
	return kt_event_field_int(&tmp, 0, out);
}

/* Intern the text in b with a NUL after it; the id, or -1. */
static int64_t
put_buf(struct kt_model *m, struct kt_buf *b)
{
	if (kt_buf_addc(b, '\0') == -1)
		return -1;
	return kt_intern_put(m->names, b->p, b->n);
}

/*
 * Intern the unescaped contents of string value v of ev ("" when it is
 * not a string); the id, or -1 when out of memory.
 */
static int64_t
intern_val(struct load *l, const struct kt_event *ev, const struct kt_val *v)
{
	struct ncache *c = NULL;
	const char *p;
	size_t n;
	int64_t id;

	if (v->type == KT_STRING && v->len >= 2) {
		p = ev->raw + v->off + 1;
		n = v->len - 2;
		/*
		 * A name without escapes is its own text: look for it among
		 * the names seen lately (comparing beats hashing).
		 */
		if (n >= 8 && memchr(p, '\\', n) == NULL) {
			uint32_t h = (uint32_t)n * 2654435761u;

			h ^= (uint32_t)(unsigned char)p[0] << 8 ^
			    (uint32_t)(unsigned char)p[n / 2] << 16 ^
			    (uint32_t)(unsigned char)p[n - 1] << 3 ^
			    (uint32_t)(unsigned char)p[n - 2] << 20 ^
			    (uint32_t)(unsigned char)p[n / 3];
			c = &l->nc[(h ^ h >> 13) & (NCACHE - 1)];
			if (c->p != NULL && c->n == n && memcmp(c->p, p, n) == 0)
				return c->id;
		}
	}
	l->tmp.n = 0;
	if (v->type == KT_STRING && v->len >= 2 &&
	    kt_json_unescape(ev->raw + v->off + 1, v->len - 2, &l->tmp) == -1)
		return -1;
	if ((id = put_buf(l->m, &l->tmp)) == -1)
		return -1;
	if (c != NULL) {
		c->p = kt_model_str(l->m, (uint32_t)id);
		c->n = l->tmp.n - 1;
		c->id = (uint32_t)id;
	}
	return id;
}

/* Build "rank\001" + raw text into l->key. */
static int
make_key(struct load *l, int64_t rank, const struct kt_event *ev, int thread)
{
	char num[32];
	size_t n = kt_int_format(rank, num), pn;
	const char *p;

	l->key.n = 0;
	if (kt_buf_add(&l->key, num, n) == -1 ||
	    kt_buf_addc(&l->key, '\001') == -1)
		return -1;
	if (thread)
		return kt_event_thread_key(ev, &l->key);
	kt_event_id_text(ev, KT_F_PID, &p, &pn);	/* by value */
	return kt_buf_add(&l->key, p, pn);
}

/*
 * The id of the key in l->key among the keys of in, with the last key
 * looked up (cache, *last) remembered: events come in runs of one thread.
 * *fresh says whether the key is new.  Returns the id, or -1.
 */
static int64_t
key_id(struct load *l, struct kt_intern *in, struct kt_buf *cache,
    uint32_t *last, int *fresh)
{
	size_t cnt;
	int64_t id;

	*fresh = 0;
	if (*last != KT_NO && cache->n == l->key.n &&
	    memcmp(cache->p, l->key.p, l->key.n) == 0)
		return *last;
	cnt = kt_intern_count(in);
	if ((id = kt_intern_put(in, l->key.p, l->key.n)) == -1)
		return -1;
	cache->n = 0;
	if (kt_buf_add(cache, l->key.p, l->key.n) == -1)
		return -1;
	*last = (uint32_t)id;
	*fresh = (size_t)id >= cnt;
	return id;
}

/* The temporary device of a GPU event; KT_NO on failure. */
static uint32_t
device_of(struct load *l, const struct kt_event *ev, int64_t rank)
{
	struct kt_device *d;
	int64_t id, v;
	int fresh;
	const char *p;
	size_t pn;
	uint32_t hit;

	if (kt_idmemo_hit(&l->dev_raw, ev, rank, 0, &hit))
		return hit;
	if (make_key(l, rank, ev, 0) == -1 ||
	    (id = key_id(l, l->devkeys, &l->dev_key, &l->last_dev,
	    &fresh)) == -1)
		return KT_NO;
	kt_idmemo_keep(&l->dev_raw, ev, rank, 0, (uint32_t)id);
	if (!fresh)
		return (uint32_t)id;
	if ((d = vec_push(&l->devs, sizeof(*d))) == NULL)
		return KT_NO;
	d->rank = rank;
	d->capacity = -1;
	d->index = -1;
	if (ev->f[KT_F_DEVICE].type != KT_NONE &&
	    kt_event_field_int(ev, KT_F_DEVICE, &v) == 0)
		d->index = v;
	else if (kt_event_field_int(ev, KT_F_PID, &v) == 0)
		d->index = v;
	kt_event_id_text(ev, KT_F_PID, &p, &pn);
	if ((v = kt_intern_put(l->m->names, p, pn)) == -1)
		return KT_NO;
	d->pid = (uint32_t)v;
	return (uint32_t)id;
}

/* The temporary thread of a CPU event; KT_NO on failure. */
static uint32_t
thread_of(struct load *l, const struct kt_event *ev, int64_t rank)
{
	struct kt_thread *t;
	int64_t id;
	int fresh;
	uint32_t hit;

	if (kt_idmemo_hit(&l->th_raw, ev, rank, 1, &hit))
		return hit;
	if (make_key(l, rank, ev, 1) == -1 ||
	    (id = key_id(l, l->thkeys, &l->th_key, &l->last_thread,
	    &fresh)) == -1)
		return KT_NO;
	kt_idmemo_keep(&l->th_raw, ev, rank, 1, (uint32_t)id);
	if (!fresh)
		return (uint32_t)id;
	if ((t = vec_push(&l->threads, sizeof(*t))) == NULL)
		return KT_NO;
	t->rank = rank;
	t->key = KT_NO;
	return (uint32_t)id;
}

/* The integer top-level key of the reader, else dflt. */
static int64_t
meta_int(const struct kt_reader *rd, const char *key, int64_t dflt)
{
	const struct kt_meta *k;
	long long v;
	char b[24];

	if ((k = kt_reader_meta_find(rd, key)) == NULL || k->vallen == 0 ||
	    k->vallen >= sizeof(b))
		return dflt;
	memcpy(b, k->val, k->vallen);
	b[k->vallen] = '\0';
	return kt_int_parse(b, -KT_TIME_MAX, KT_TIME_MAX, &v) == 0 ? v : dflt;
}

/* Does a step span carry kt-slice-window --clip's args.kt_clip? */
static int
clipped(const struct kt_event *ev)
{
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	struct kt_val v;

	return args->type == KT_OBJECT && kt_event_find(ev, args,
	    KT_ARG_CLIP, &v) == 0;
}

/*
 * Do the bytes p[0..n) hold s (len bytes)?  A memchr for its byte at k,
 * one rare in a kernel's args ('g' of "msg", 'C'), then a compare: far
 * cheaper than memmem on every activity.
 */
static int
has_text(const char *p, size_t n, const char *s, size_t len, size_t k)
{
	const char *e = p + n, *c = p + k;

	while (c < e && (c = memchr(c, s[k], (size_t)(e - c))) != NULL) {
		if ((size_t)(e - c) >= len - k &&
		    memcmp(c - k, s, len) == 0)
			return 1;
		c++;
	}
	return 0;
}

/* Keep the communication args of a GPU activity when it has them. */
static int
add_comm(struct load *l, const struct kt_event *ev, struct kt_act *a)
{
	static const char *const keys[] = { "In msg nelems",
		"Out msg nelems", "Group size", "Seq", "Comms Id",
		"Collective name", "dtype", "Process Group Name" };
	enum { K_IN, K_OUT, K_GROUP, K_SEQ, K_COMMS, K_COLL, K_DTYPE, K_PG,
		K_N };
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	struct kt_val v[K_N];
	struct kt_comm *c;
	int64_t id;
	int k;

	if (args->type != KT_OBJECT ||
	    (!has_text(ev->raw + args->off, args->len, "msg nelems", 10, 2) &&
	    !has_text(ev->raw + args->off, args->len, "Collective name", 15,
	    0)))
		return 0;
	if ((c = vec_push(&l->comms, sizeof(*c))) == NULL)
		return -1;
	c->in_nelems = c->out_nelems = c->group_size = c->seq = -1;
	c->comms_id = -1;
	c->coll = c->dtype = c->pg = KT_NO;
	/* One walk over a collective's args (they can be long), not eight. */
	(void)kt_event_find_keys(ev, args, keys, K_N, v);
	{
		/* Where each key's value goes, in keys' order. */
		int64_t *ints[K_COLL] = { &c->in_nelems, &c->out_nelems,
			&c->group_size, &c->seq, &c->comms_id };
		uint32_t *names[K_N - K_COLL] = { &c->coll, &c->dtype,
			&c->pg };

		for (k = 0; k < K_COLL; k++)
			if (v[k].type != KT_NONE)
				(void)val_int(ev, &v[k], ints[k]);
		for (k = K_COLL; k < K_N; k++)
			if (v[k].type != KT_NONE) {
				if ((id = intern_val(l, ev, &v[k])) == -1)
					return -1;
				*names[k - K_COLL] = (uint32_t)id;
			}
	}
	a->comm = (uint32_t)(l->comms.n - 1);
	return 0;
}

/* An int field or -1. */
static int64_t
int_or(const struct kt_event *ev, enum kt_field f, int64_t dflt)
{
	int64_t v;

	if (ev->f[f].type == KT_NONE || kt_event_field_int(ev, f, &v) == -1)
		return dflt;
	return v;
}

/*
 * Take one event into the model.  0, -1 (out of memory) or -2: a time
 * out of range (an end past KT_TIME_MAX, or GPU time that adds up past
 * it), so that no sum or difference the views make can wrap.
 */
/*
 * Whether the bytes p[0..n) hold the key "Call stack": a memchr for its
 * 'C', rare in args, is much cheaper than memmem on every op.
 */
static int
has_call_stack(const char *p, size_t n)
{
	const char *e = p + n, *c = p;

	while ((c = memchr(c, 'C', (size_t)(e - c))) != NULL) {
		if (c > p && c[-1] == '"' && e - c >= 11 &&
		    memcmp(c, "Call stack\"", 11) == 0)
			return 1;
		c++;
	}
	return 0;
}

/*
 * The interned args."Call stack" of a cpu_op (traces of PyTorch before
 * python_function events): its id, -2 when it has none, -1 when out of
 * memory.  The bytes are looked at for the key before the args are
 * scanned, so that a trace without stacks pays a memchr per op.
 */
static int64_t
call_stack(struct load *l, const struct kt_event *ev)
{
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	struct kt_val v;

	if (args->type != KT_OBJECT ||
	    !has_call_stack(ev->raw + args->off, args->len) ||
	    kt_event_find(ev, args, "Call stack", &v) == -1 ||
	    v.type != KT_STRING || v.len <= 2)
		return -2;
	return intern_val(l, ev, &v);
}

/*
 * KT_MODEL_SEQ: keep a cpu_op's "Sequence number" and "Fwd thread id"
 * (the latter 0 when absent).  0, or -1 when out of memory.
 */
static int
autograd(struct load *l, const struct kt_event *ev)
{
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	struct kt_val v;
	struct kt_seq *q;
	int64_t seq, fwd = 0;

	if (args->type != KT_OBJECT || memchr(ev->raw + args->off, 'S',
	    args->len) == NULL ||
	    kt_event_find(ev, args, "Sequence number", &v) == -1 ||
	    val_int(ev, &v, &seq) == -1 || seq < 0)
		return 0;
	if (kt_event_find(ev, args, "Fwd thread id", &v) == 0 &&
	    val_int(ev, &v, &fwd) == -1)
		fwd = 0;
	if ((q = vec_push(&l->seqs, sizeof(*q))) == NULL)
		return -1;
	q->index = ev->index;
	q->rank = kt_event_rank(ev);
	q->seq = seq;
	q->fwd_thread = fwd;
	return 0;
}

/*
 * KT_MODEL_SHAPES: keep a cpu_op's args."Input Dims", its JSON text
 * with the whitespace outside strings removed ("[[8,1024],[]]"), so that
 * the same shapes are one text however the trace spaced them.  0, or -1
 * when out of memory.
 */
static int
shapes(struct load *l, const struct kt_event *ev)
{
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	struct kt_val v;
	struct kt_stack *k;
	int64_t id;

	if (args->type != KT_OBJECT ||
	    kt_event_find(ev, args, "Input Dims", &v) == -1 ||
	    v.type != KT_ARRAY)
		return 0;
	l->tmp.n = 0;
	if (kt_json_minify(ev->raw + v.off, v.len, &l->tmp) == -1 ||
	    (id = put_buf(l->m, &l->tmp)) == -1 ||
	    (k = vec_push(&l->shapes, sizeof(*k))) == NULL)
		return -1;
	k->index = ev->index;
	k->rank = kt_event_rank(ev);
	k->text = (uint32_t)id;
	return 0;
}

/*
 * KT_MODEL_GRAPH: keep a kernel's args."graph node id".  0, or -1 when
 * out of memory.
 */
static int
graph_node(struct load *l, const struct kt_event *ev)
{
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	struct kt_val v;
	struct kt_node *k;
	int64_t node;

	if (args->type != KT_OBJECT ||
	    kt_event_find(ev, args, "graph node id", &v) == -1 ||
	    val_int(ev, &v, &node) == -1)
		return 0;
	if ((k = vec_push(&l->nodes, sizeof(*k))) == NULL)
		return -1;
	k->index = ev->index;
	k->rank = kt_event_rank(ev);
	k->node = node;
	return 0;
}

/*
 * A flow event.  ac2g flows (cat "ac2g", or "async" in old traces) are
 * the second route from a GPU activity to its launching call, for the
 * traces whose events lack args.correlation: the "s" end sits on the
 * call, the "f" end on the activity, and both carry the correlation as
 * their id.  Kineto writes each end right after its X event, so the
 * end usually settles at once against the span or activity just taken:
 * one with that correlation needs nothing; one without it at the same
 * ts (and thread or stream) takes the id.  Only an end that does not
 * settle so is kept, to be bound by time after the pass (bind_flows).
 * With KT_MODEL_SEQ, fwdbwd ends (forward op to backward op) are kept,
 * the second route from a backward op to its forward op.  0 or -1.
 */
static int
flow(struct load *l, const struct kt_event *ev)
{
	struct flowend *f;
	int64_t id, rank, tid;
	int fwdbwd = 0, start = ev->ph == 's';

	if ((!start && ev->ph != 'f') || !(ev->flags & KT_EV_TS) ||
	    (id = int_or(ev, KT_F_ID, -1)) < 0)
		return 0;
	if (kt_event_field_is(ev, KT_F_CAT, "fwdbwd"))
		fwdbwd = 1;
	else if (!kt_event_field_is(ev, KT_F_CAT, "ac2g") &&
	    !kt_event_field_is(ev, KT_F_CAT, "async"))
		return 0;
	if (fwdbwd && !(l->flags & KT_MODEL_SEQ))
		return 0;
	/* kt rank-tag writes no args on flows: the rank is the pid's. */
	if ((rank = kt_pidrank_of(l->pidrank, ev)) == -2)
		return -1;
	if (!fwdbwd && start && l->nspans > 0) {
		const struct vec *v = &l->tsp[l->last_sp];
		struct kt_span *s = (struct kt_span *)v->p + (v->n - 1);

		if (s->corr == id && s->ts == ev->ts)
			return 0;
		if (s->corr < 0 && s->ts == ev->ts &&
		    (s->kind == KT_CUDA_RUNTIME || s->kind == KT_CUDA_DRIVER) &&
		    thread_of(l, ev, rank) == s->thread) {
			s->corr = id;
			return 0;
		}
	}
	tid = int_or(ev, KT_F_TID, -1);
	if (!fwdbwd && !start && l->acts.n > 0) {
		struct kt_act *a = (struct kt_act *)l->acts.p +
		    (l->acts.n - 1);

		if (a->corr == id && a->ts == ev->ts)
			return 0;
		if (a->corr < 0 && a->ts == ev->ts && a->stream == tid &&
		    make_key(l, rank, ev, 0) == 0 && kt_intern_find(l->devkeys,
		    l->key.p, l->key.n) == (int64_t)a->dev) {
			a->corr = id;
			l->m->nflowcorr++;
			return 0;
		}
	}
	if ((f = vec_push(&l->flows, sizeof(*f))) == NULL)
		return -1;
	f->ts = ev->ts;
	f->id = id;
	f->tid = tid;
	f->span = KT_NO;
	f->kind = (uint8_t)(fwdbwd ? (start ? FL_FWDBWD_S : FL_FWDBWD_F) :
	    (start ? FL_AC2G_S : FL_AC2G_F));
	/*
	 * The device of an "f" end is looked up after the pass (an end may
	 * come before its activity, and must not make the device).
	 */
	if (f->kind == FL_AC2G_F) {
		if (make_key(l, rank, ev, 0) == -1 || (id = kt_intern_put(
		    l->flowdevs, l->key.p, l->key.n)) == -1)
			return -1;
		f->where = (uint32_t)id;
		return 0;
	}
	f->where = thread_of(l, ev, rank);
	return f->where == KT_NO ? -1 : 0;
}

/* The spans of (load-time) thread th: a vec, or NULL out of memory. */
static struct vec *
spans_vec(struct load *l, uint32_t th)
{
	struct vec *v;

	if (th >= l->ntsp) {
		size_t n = 2 * l->ntsp > (size_t)th + 1 ? 2 * l->ntsp :
		    (size_t)th + 1;

		if ((v = realloc(l->tsp, n * sizeof(*v))) == NULL)
			return NULL;
		memset(v + l->ntsp, 0, (n - l->ntsp) * sizeof(*v));
		l->tsp = v;
		l->ntsp = n;
	}
	/*
	 * Room for the input's usual many spans up front for the first
	 * thread with spans, and for any other once it has 65536, sparing
	 * the copies of growing (address space more than memory).
	 */
	v = &l->tsp[th];
	if (v->n == v->cap && l->sphint > v->cap && (l->nspans == 0 ||
	    v->n >= 65536) && vec_reserve(v, l->sphint,
	    sizeof(struct kt_span)) == -1)
		return NULL;
	return v;
}

static int
take(struct load *l, const struct kt_event *ev)
{
	int64_t rank, id, end;

	/* The ranks of pids, for the flows (which name none). */
	if (ev->f[KT_F_RANK].type != KT_NONE &&
	    kt_pidrank_of(l->pidrank, ev) == -2)
		return -1;
	if (ev->kind == KT_FLOW)
		return flow(l, ev);
	if (ev->ph != 'X' || !(ev->flags & KT_EV_TS))
		return 0;
	if ((ev->flags & KT_EV_DUR) && ev->dur > 0 &&
	    kt_time_add(ev->ts, ev->dur, &end) == -1)
		return -2;
	if ((ev->kind == KT_KERNEL || ev->kind == KT_GPU_MEMCPY ||
	    ev->kind == KT_GPU_MEMSET) && (ev->flags & KT_EV_DUR) &&
	    ev->dur > 0 && kt_time_add(l->gpu_sum, ev->dur, &l->gpu_sum) == -1)
		return -2;
	switch (ev->kind) {
	case KT_KERNEL:
	case KT_GPU_MEMCPY:
	case KT_GPU_MEMSET: {
		struct kt_act *a;

		rank = kt_event_rank(ev);
		if ((a = vec_push(&l->acts, sizeof(*a))) == NULL)
			return -1;
		a->ts = ev->ts;
		a->dur = (ev->flags & KT_EV_DUR) && ev->dur > 0 ? ev->dur : 0;
		a->stream = int_or(ev, KT_F_STREAM, -1);
		if (a->stream == -1)
			a->stream = int_or(ev, KT_F_TID, -1);
		a->corr = int_or(ev, KT_F_CORR, -1);
		a->extid = int_or(ev, KT_F_EXTID, -1);
		a->bytes = int_or(ev, KT_F_BYTES, -1);
		a->index = ev->index;
		a->kind = (uint8_t)ev->kind;
		a->comm = a->launch = a->thread = a->step = a->op = KT_NO;
		if ((id = intern_val(l, ev, &ev->f[KT_F_NAME])) == -1)
			return -1;
		a->name = (uint32_t)id;
		if ((a->dev = device_of(l, ev, rank)) == KT_NO)
			return -1;
		if (ev->kind == KT_KERNEL && add_comm(l, ev, a) == -1)
			return -1;
		if (ev->kind == KT_KERNEL && (l->flags & KT_MODEL_GRAPH) &&
		    graph_node(l, ev) == -1)
			return -1;
		return 0;
	}
	case KT_GPU_USER_ANNOTATION: {
		struct kt_gpu_ann *g;

		rank = kt_event_rank(ev);
		if ((g = vec_push(&l->anns, sizeof(*g))) == NULL)
			return -1;
		g->ts = ev->ts;
		g->dur = (ev->flags & KT_EV_DUR) && ev->dur > 0 ? ev->dur : 0;
		g->index = ev->index;
		if ((id = intern_val(l, ev, &ev->f[KT_F_NAME])) == -1)
			return -1;
		g->name = (uint32_t)id;
		if ((g->dev = device_of(l, ev, rank)) == KT_NO)
			return -1;
		return 0;
	}
	case KT_CPU_OP:
	case KT_USER_ANNOTATION:
	case KT_STEP:
	case KT_CUDA_RUNTIME:
	case KT_CUDA_DRIVER:
	case KT_PYTHON_FUNCTION: {
		struct kt_span *s;
		struct vec *v;
		uint32_t th;

		rank = kt_event_rank(ev);
		if ((th = thread_of(l, ev, rank)) == KT_NO ||
		    (v = spans_vec(l, th)) == NULL ||
		    (s = vec_push(v, sizeof(*s))) == NULL)
			return -1;
		l->nspans++;
		l->last_sp = th;
		s->thread = th;
		s->ts = ev->ts;
		s->dur = (ev->flags & KT_EV_DUR) && ev->dur > 0 ? ev->dur : 0;
		s->corr = s->extid = -1;
		if (ev->kind == KT_CUDA_RUNTIME || ev->kind == KT_CUDA_DRIVER)
			s->corr = int_or(ev, KT_F_CORR, -1);
		if (ev->kind == KT_CPU_OP || ev->kind == KT_USER_ANNOTATION)
			s->extid = int_or(ev, KT_F_EXTID, -1);
		s->index = ev->index;
		s->kind = (uint8_t)ev->kind;
		s->parent = KT_NO;
		s->clipped = (uint8_t)(ev->kind == KT_STEP && clipped(ev));
		if ((id = intern_val(l, ev, &ev->f[KT_F_NAME])) == -1)
			return -1;
		s->name = (uint32_t)id;
		if (ev->kind == KT_CPU_OP && (id = call_stack(l, ev)) != -2) {
			struct kt_stack *k;

			if (id == -1 ||
			    (k = vec_push(&l->stacks, sizeof(*k))) == NULL)
				return -1;
			k->index = ev->index;
	k->rank = kt_event_rank(ev);
			k->text = (uint32_t)id;
		}
		if (ev->kind == KT_CPU_OP && (l->flags & KT_MODEL_SEQ) &&
		    autograd(l, ev) == -1)
			return -1;
		if (ev->kind == KT_CPU_OP && (l->flags & KT_MODEL_SHAPES) &&
		    shapes(l, ev) == -1)
			return -1;
		return 0;
	}
	default:
		return 0;
	}
}

/*
 * Row numbers: a ktSourceIndex after traceEvents (kt rank-tag's, kt
 * slice-window's) is known only at the end, so the events were numbered
 * by position; map them through it now (the spans' in spans_join).
 */
static void
remap_rows(struct kt_model *m, const struct kt_rows *si)
{
	size_t i, nsi = si->n;

	for (i = 0; i < m->nact; i++)
		if (m->act[i].index < nsi)
			m->act[i].index = kt_rows_at(si, m->act[i].index);
	/* The spans' (not yet put together): spans_join. */
	for (i = 0; i < m->ngpu_ann; i++)
		if (m->gpu_ann[i].index < nsi)
			m->gpu_ann[i].index =
			    kt_rows_at(si, m->gpu_ann[i].index);
	for (i = 0; i < m->nstacks; i++)
		if (m->stacks[i].index < nsi)
			m->stacks[i].index =
			    kt_rows_at(si, m->stacks[i].index);
	for (i = 0; i < m->nseqs; i++)
		if (m->seqs[i].index < nsi)
			m->seqs[i].index = kt_rows_at(si, m->seqs[i].index);
	for (i = 0; i < m->nshapes; i++)
		if (m->shapes[i].index < nsi)
			m->shapes[i].index =
			    kt_rows_at(si, m->shapes[i].index);
	for (i = 0; i < m->nnodes; i++)
		if (m->nodes[i].index < nsi)
			m->nodes[i].index = kt_rows_at(si, m->nodes[i].index);
}

/* Capacities from deviceProperties[].totalGlobalMem by id. */
static void
capacities(struct kt_reader *rd, struct kt_model *m)
{
	const struct kt_meta *mt;
	struct kt_error e;
	json_t *j, *d, *id, *mem;
	size_t i, k;

	if ((mt = kt_reader_meta_find(rd, "deviceProperties")) == NULL ||
	    (j = kt_meta_json(mt, &e)) == NULL)
		return;
	if (json_is_array(j))
		json_array_foreach(j, i, d) {
			id = json_object_get(d, "id");
			mem = json_object_get(d, "totalGlobalMem");
			if (!json_is_integer(id) || !json_is_integer(mem))
				continue;
			for (k = 0; k < m->ndevices; k++)
				if (m->devices[k].index ==
				    json_integer_value(id) &&
				    (m->devices[k].rank == m->rank ||
				    m->rank == -1))
					m->devices[k].capacity =
					    json_integer_value(mem);
		}
	json_decref(j);
}

static int
cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Comparisons with the model as their context (kt_sort_r). */
static int
cmp_dev(const void *a, const void *b, void *ctx)
{
	const struct kt_model *sort_m = ctx;
	const struct kt_device *x = a, *y = b;
	size_t nx, ny;
	const char *px, *py;
	int c;

	if ((c = cmp_i64(x->rank, y->rank)) != 0 ||
	    (c = cmp_i64(x->index, y->index)) != 0)
		return c;
	px = kt_intern_get(sort_m->names, x->pid, &nx);
	py = kt_intern_get(sort_m->names, y->pid, &ny);
	if ((c = memcmp(px, py, nx < ny ? nx : ny)) != 0)
		return c;
	return cmp_i64((int64_t)nx, (int64_t)ny);
}

static int
cmp_thread(const void *a, const void *b, void *ctx)
{
	const struct kt_model *sort_m = ctx;
	const struct kt_thread *x = a, *y = b;
	size_t nx, ny;
	const char *px, *py;
	int c;

	if ((c = cmp_i64(x->rank, y->rank)) != 0)
		return c;
	px = kt_intern_get(sort_m->names, x->key, &nx);
	py = kt_intern_get(sort_m->names, y->key, &ny);
	if ((c = memcmp(px, py, nx < ny ? nx : ny)) != 0)
		return c;
	return cmp_i64((int64_t)nx, (int64_t)ny);
}

static int
cmp_ann(const void *a, const void *b)
{
	const struct kt_gpu_ann *x = a, *y = b;
	int c;

	if ((c = cmp_i64(x->dev, y->dev)) != 0 ||
	    (c = cmp_i64(x->ts, y->ts)) != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int
cmp_step(const void *a, const void *b)
{
	const struct kt_step *x = a, *y = b;
	int c;

	if ((c = cmp_i64(x->rank, y->rank)) != 0 ||
	    (c = cmp_i64(x->cpu_start, y->cpu_start)) != 0)
		return c;
	return cmp_i64(x->span, y->span);
}

static int
cmp_act(const void *a, const void *b)
{
	const struct kt_act *x = a, *y = b;
	int c;

	if ((c = cmp_i64(x->dev, y->dev)) != 0 ||
	    (c = cmp_i64(x->ts, y->ts)) != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Side arrays (stacks, seqs) whose first member is the row number. */
/* Side arrays: by row number, then rank (their first two members). */
static int
cmp_row(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	int64_t p = ((const int64_t *)a)[1], q = ((const int64_t *)b)[1];

	if (x != y)
		return x < y ? -1 : 1;
	return p < q ? -1 : p > q;
}

static int
cmp_span(const void *a, const void *b)
{
	const struct kt_span *x = a, *y = b;
	int c;

	if ((c = cmp_i64(x->thread, y->thread)) != 0 ||
	    (c = cmp_i64(x->ts, y->ts)) != 0 ||
	    (c = cmp_i64(y->dur, x->dur)) != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Runs of one ts in p[0..n), in ts order: longest first, then by row. */
static void
order_ties(const struct kt_span *sp, struct kt_pair *p, size_t n)
{
	size_t i, k, r;

	for (i = 0; i < n; i = r) {
		for (r = i + 1; r < n && p[r].key == p[i].key; r++)
			;
		for (k = i + 1; k < r; k++) {
			struct kt_pair x = p[k];
			size_t j = k;

			for (; j > i && cmp_span(&sp[p[j - 1].val], &sp[x.val]) >
			    0; j--)
				p[j] = p[j - 1];
			p[j] = x;
		}
	}
}

/*
 * Sort the spans p[0..n).val (indices into sp) name by cmp_span, within
 * one thread: by ts (kt_sort_pairs, a radix sort), the few of one ts by
 * insertion.  0 or -1.
 */
static int
sort_span_pairs(const struct kt_span *sp, struct kt_pair *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i].key = (uint64_t)sp[p[i].val].ts ^ (uint64_t)1 << 63;
	if (kt_sort_pairs(p, n) == -1)
		return -1;
	order_ties(sp, p, n);
	return 0;
}

#define NRUNS	64	/* runs of rising ts merged, not sorted, up to */

/*
 * Merge the nr runs of p, each in key order, that start at run[0..nr)
 * (run[nr]: the end of the last) into one, through q (as long as p),
 * pairwise, those of one key in the order they were; returns p or q,
 * the one that holds it.  run is overwritten.
 */
static struct kt_pair *
merge_runs(struct kt_pair *p, struct kt_pair *q, size_t *run, size_t nr)
{
	struct kt_pair *t;
	size_t k, j, a, m, b, i, l;

	while (nr > 1) {
		for (k = j = 0; k < nr; k += 2) {
			a = run[k];
			if (k + 1 == nr) {
				/* The odd one: as it is. */
				memcpy(q + a, p + a, (run[nr] - a) * sizeof(*p));
				run[j++] = a;
				break;
			}
			m = run[k + 1];
			b = run[k + 2];
			for (i = a, l = m, t = q + a; i < m && l < b; )
				*t++ = p[l].key < p[i].key ? p[l++] : p[i++];
			memcpy(t, p + i, (m - i) * sizeof(*p));
			t += m - i;
			memcpy(t, p + l, (b - l) * sizeof(*p));
			run[j++] = a;
		}
		run[j] = run[nr];
		nr = j;
		t = p;
		p = q;
		q = t;
	}
	return p;
}

/*
 * Put the indices of one thread's spans, ix[0..n), in cmp_span's order;
 * p and q have room for n each.  A thread's spans are mostly runs in
 * time order (Kineto writes a thread's ops, then its python functions,
 * each kind in time order): a few such runs are merged.  Otherwise the
 * spans that come after a later one are taken out, sorted, and merged
 * back; when they are many, all are sorted.  0 or -1.
 */
static int
sort_thread(const struct kt_span *sp, size_t *ix, size_t n, struct kt_pair *p,
    struct kt_pair *q)
{
	size_t i, nm = 1, ns = 0, last = ix[0], run[NRUNS + 1], nr = 1;
	struct kt_pair *r;

	run[0] = 0;
	for (i = 0; i < n; i++) {
		p[i].key = (uint64_t)sp[ix[i]].ts ^ (uint64_t)1 << 63;
		p[i].val = ix[i];
		if (i > 0 && p[i].key < p[i - 1].key) {
			if (nr == NRUNS)
				break;
			run[nr++] = i;
		}
	}
	if (i == n) {
		run[nr] = n;
		r = merge_runs(p, q, run, nr);
		order_ties(sp, r, n);
		for (i = 0; i < n; i++)
			ix[i] = (size_t)r[i].val;
		return 0;
	}
	for (i = 1; i < n; i++)
		if (cmp_span(&sp[last], &sp[ix[i]]) <= 0)
			ix[nm++] = last = ix[i];
		else
			p[ns++].val = ix[i];
	if (ns == 0)
		return 0;
	if (ns > n / 8) {
		/* Many out of place: all of them sorted together. */
		for (i = 0; i < nm; i++)
			p[ns + i].val = ix[i];
		if (sort_span_pairs(sp, p, n) == -1)
			return -1;
		for (i = 0; i < n; i++)
			ix[i] = (size_t)p[i].val;
		return 0;
	}
	if (sort_span_pairs(sp, p, ns) == -1)
		return -1;
	/* Merged from the ends: ix[0..nm) in order, then p[0..ns). */
	for (i = n; ns > 0; ) {
		if (nm > 0 && cmp_span(&sp[ix[nm - 1]], &sp[p[ns - 1].val]) > 0)
			ix[--i] = ix[--nm];
		else
			ix[--i] = (size_t)p[--ns].val;
	}
	return 0;
}

/* The buffers of sort_thread, for the longest thread sorted so far. */
struct span_order {
	size_t		*ix;
	struct kt_pair	*p, *q;
	size_t		 cap;
};

/* Whether sp[0..n) are in cmp_span's order. */
static int
spans_sorted(const struct kt_span *sp, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp_span(&sp[i - 1], &sp[i]) > 0)
			return 0;
	return 1;
}

/*
 * so->ix[0..n): sp[0..n) (one thread's spans) in cmp_span's order, as
 * indices (sort_thread).  0 or -1.
 */
static int
span_order(struct span_order *so, const struct kt_span *sp, size_t n)
{
	size_t k;

	if (n > so->cap) {
		free(so->ix);
		free(so->p);
		free(so->q);
		so->p = so->q = NULL;
		so->cap = 0;
		if ((so->ix = malloc(n * sizeof(*so->ix))) == NULL ||
		    (so->p = malloc(n * sizeof(*so->p))) == NULL ||
		    (so->q = malloc(n * sizeof(*so->q))) == NULL)
			return -1;
		so->cap = n;
	}
	for (k = 0; k < n; k++)
		so->ix[k] = k;
	return sort_thread(sp, so->ix, n, so->p, so->q);
}

/*
 * Put sp[0..n) in the order ix gives (sp[k] becomes the sp[ix[k]] of
 * before) in place, following each cycle of the permutation once; ix is
 * spent (each ix[k] becomes k).
 */
static void
permute_spans(struct kt_span *sp, size_t *ix, size_t n)
{
	struct kt_span first;
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (ix[i] == i)
			continue;
		first = sp[i];
		for (j = i;; j = k) {
			k = ix[j];
			ix[j] = j;
			if (k == i) {
				sp[j] = first;
				break;
			}
			sp[j] = sp[k];
		}
	}
}

/*
 * The kept ac2g "f" ends name their device by key (flowdevs): make it
 * the temporary device of that key, or KT_NO when no activity made one.
 * 0 or -1.
 */
static int
flow_devices(struct load *l)
{
	uint32_t *map;
	size_t i, n, kn;
	const char *k;
	int64_t id;

	if (l->flowdevs == NULL || (n = kt_intern_count(l->flowdevs)) == 0)
		return 0;
	if ((map = malloc(n * sizeof(*map))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		k = kt_intern_get(l->flowdevs, (uint32_t)i, &kn);
		id = kt_intern_find(l->devkeys, k, kn);
		map[i] = id < 0 ? KT_NO : (uint32_t)id;
	}
	for (i = 0; i < l->flows.n; i++) {
		struct flowend *f = (struct flowend *)l->flows.p + i;

		if (f->kind == FL_AC2G_F)
			f->where = map[f->where];
	}
	free(map);
	return 0;
}

/* Sort devices and threads and renumber the records that point to them. */
static int
renumber(struct load *l)
{
	struct kt_model *m = l->m;
	uint32_t *map;
	size_t i, n = 0;

	/* Threads get their key text in names first. */
	for (i = 0; i < m->nthreads; i++) {
		size_t kn;
		const char *k = kt_intern_get(l->thkeys, (uint32_t)i, &kn);
		const char *tab = memchr(k, '\001', kn);
		int64_t id;

		l->tmp.n = 0;
		if (kt_buf_add(&l->tmp, tab + 1, kn - (size_t)(tab + 1 - k)) ==
		    -1 || (id = put_buf(m, &l->tmp)) == -1)
			return -1;
		m->threads[i].key = (uint32_t)id;
		m->threads[i].first = (uint32_t)i;	/* old number */
	}
	n = m->ndevices > m->nthreads ? m->ndevices : m->nthreads;
	if ((map = kt_zalloc(n ? n : 1, sizeof(*map))) == NULL)
		return -1;
	/* Devices: remember the old number in first, sort, map. */
	for (i = 0; i < m->ndevices; i++)
		m->devices[i].first = (uint32_t)i;
	kt_sort_r(m->devices, m->ndevices, sizeof(*m->devices), cmp_dev, m);
	for (i = 0; i < m->ndevices; i++)
		map[m->devices[i].first] = (uint32_t)i;
	for (i = 0; i < m->nact; i++)
		m->act[i].dev = map[m->act[i].dev];
	for (i = 0; i < m->ngpu_ann; i++)
		m->gpu_ann[i].dev = map[m->gpu_ann[i].dev];
	for (i = 0; i < l->flows.n; i++) {
		struct flowend *f = (struct flowend *)l->flows.p + i;

		if (f->kind == FL_AC2G_F && f->where != KT_NO)
			f->where = map[f->where];
	}
	kt_sort_r(m->threads, m->nthreads, sizeof(*m->threads), cmp_thread,
	    m);
	/* threads[i].first keeps the old number, for spans_join. */
	for (i = 0; i < m->nthreads; i++)
		map[m->threads[i].first] = (uint32_t)i;
	for (i = 0; i < l->flows.n; i++) {
		struct flowend *f = (struct flowend *)l->flows.p + i;

		if (f->kind != FL_AC2G_F)
			f->where = map[f->where];
	}
	free(map);
	return 0;
}

static int	steps_build(struct kt_model *, const regex_t *);

/* Parents, per-thread ranges, steps. */
static int
spans_finish(struct kt_model *m)
{
	uint32_t *stack = NULL;
	size_t i, sp = 0, cap = 0;

	for (i = 0; i < m->nthreads; i++) {
		m->threads[i].first = m->threads[i].nspans = 0;
		m->threads[i].end = INT64_MIN;
	}
	for (i = 0; i < m->nspans; i++) {
		struct kt_span *s = &m->spans[i];
		struct kt_thread *t = &m->threads[s->thread];

		if (t->nspans == 0) {
			t->first = (uint32_t)i;
			sp = 0;
		}
		t->nspans++;
		if (s->ts + s->dur > t->end)
			t->end = s->ts + s->dur;
		/* Pop what ends before s starts, or does not contain it. */
		while (sp > 0) {
			const struct kt_span *p = &m->spans[stack[sp - 1]];

			if (p->ts <= s->ts && s->ts + s->dur <= p->ts + p->dur &&
			    (s->ts < p->ts + p->dur || p->dur == 0))
				break;
			sp--;
		}
		s->parent = sp > 0 ? stack[sp - 1] : KT_NO;
		if (sp == cap) {
			size_t nc = cap ? cap * 2 : 64;
			uint32_t *ns = realloc(stack, nc * sizeof(*ns));

			if (ns == NULL) {
				free(stack);
				return -1;
			}
			stack = ns;
			cap = nc;
		}
		stack[sp++] = (uint32_t)i;
	}
	free(stack);
	return steps_build(m, NULL);
}

/*
 * The step number of a span re matched (kt_model_step_regex): its first
 * group when that is a whole decimal number, else the first digits of
 * the name, else -1.
 */
static int64_t
regex_number(const char *name, const regmatch_t *g)
{
	long long v;
	char b[24];
	size_t n, i;

	if (g[1].rm_so >= 0 && (n = (size_t)(g[1].rm_eo - g[1].rm_so)) > 0 &&
	    n < sizeof(b)) {
		memcpy(b, name + g[1].rm_so, n);
		b[n] = '\0';
		for (i = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++)
			;
		if (i == n && kt_int_parse(b, 0, INT64_MAX, &v) == 0)
			return v;
	}
	for (i = 0; name[i] != '\0' && (name[i] < '0' || name[i] > '9'); i++)
		;
	for (n = 0; name[i + n] >= '0' && name[i + n] <= '9'; n++)
		;
	if (n == 0 || n >= sizeof(b))
		return -1;
	memcpy(b, name + i, n);
	b[n] = '\0';
	return kt_int_parse(b, 0, INT64_MAX, &v) == 0 ? v : -1;
}

/*
 * The steps: the ProfilerStep#N spans, or with re the spans of the
 * kinds --step-regex takes whose names it matches; partial where the
 * trace was cut inside one.  0, or -1 out of memory.
 */
static int
steps_build(struct kt_model *m, const regex_t *re)
{
	size_t i, nsteps = 0;
	unsigned kinds = re == NULL ? 1u << KT_STEP : 1u << KT_STEP |
	    1u << KT_USER_ANNOTATION | 1u << KT_CPU_OP;
	regmatch_t g[2];

	free(m->steps);
	m->steps = NULL;
	m->nsteps = 0;
	for (i = 0; i < m->nspans; i++) {
		m->spans[i].is_step = 0;
		if (kinds & (1u << m->spans[i].kind))
			nsteps++;
	}
	if (nsteps == 0)
		return 0;
	if ((m->steps = calloc(nsteps, sizeof(*m->steps))) == NULL)
		return -1;
	for (i = 0; i < m->nspans; i++) {
		struct kt_span *s = &m->spans[i];
		struct kt_step *st;
		const char *name;

		if (!(kinds & (1u << s->kind)))
			continue;
		name = kt_model_str(m, s->name);
		if (re != NULL && regexec(re, name, 2, g, 0) != 0)
			continue;
		s->is_step = 1;
		st = &m->steps[m->nsteps++];
		st->rank = m->threads[s->thread].rank;
		st->cpu_start = s->ts;
		st->cpu_end = s->ts + s->dur;
		st->gpu_start = st->gpu_end = -1;
		st->thread = s->thread;
		st->span = (uint32_t)i;
		st->number = re != NULL ? regex_number(name, g) :
		    kt_step_parse(name, strlen(name));
		st->partial = s->clipped || st->cpu_start < m->cut_start ||
		    st->cpu_end > m->cut_end;
	}
	kt_qsort(m->steps, m->nsteps, sizeof(*m->steps), cmp_step);
	return 0;
}

/* Does step s start at or before (r, t), in the steps' order? */
static int
step_le(const struct kt_step *s, int64_t r, int64_t t)
{
	return s->rank < r || (s->rank == r && s->cpu_start <= t);
}

/*
 * The step of rank r whose CPU span contains t, or KT_NO.  *hint is
 * where the search before ended: activities come mostly in time order,
 * so this one ends there or at the next step, else it halves.
 */
static uint32_t
step_at(const struct kt_model *m, int64_t r, int64_t t, size_t *hint)
{
	size_t lo = 0, hi = m->nsteps, k;

	/* The first step after (r, t) in (rank, cpu_start) order. */
	for (k = *hint; k <= *hint + 1 && k <= m->nsteps; k++)
		if ((k == 0 || step_le(&m->steps[k - 1], r, t)) &&
		    (k == m->nsteps || !step_le(&m->steps[k], r, t))) {
			lo = hi = k;
			break;
		}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (step_le(&m->steps[mid], r, t))
			lo = mid + 1;
		else
			hi = mid;
	}
	*hint = lo;
	/* Steps may nest or repeat on two threads: look back a little. */
	for (k = lo; k > 0 && lo - k < 4; k--) {
		const struct kt_step *s = &m->steps[k - 1];

		if (s->rank != r)
			break;
		if (t < s->cpu_end)
			return (uint32_t)(k - 1);
	}
	return KT_NO;
}

/*
 * The innermost span on thread th that holds time t (t in [ts, ts +
 * dur), or with at_start also t == ts: a zero-length call), among the
 * kinds in mask; KT_NO if none.
 */
static uint32_t
innermost_at(const struct kt_model *m, uint32_t th, int64_t t, unsigned mask,
    int at_start)
{
	const struct kt_thread *tr;
	size_t lo, hi;
	uint32_t s;

	if (th == KT_NO || th >= m->nthreads)
		return KT_NO;
	tr = &m->threads[th];
	lo = tr->first;
	hi = (size_t)tr->first + tr->nspans;
	/* The last span with ts <= t. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->spans[mid].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == tr->first)
		return KT_NO;
	for (s = (uint32_t)(lo - 1); s != KT_NO; s = m->spans[s].parent) {
		const struct kt_span *sp = &m->spans[s];

		if ((t < sp->ts + sp->dur || (at_start && t == sp->ts)) &&
		    (mask & (1u << sp->kind)))
			return s;
	}
	return KT_NO;
}

/*
 * The innermost span on thread th that a flow end at t binds to (it
 * starts at t, or contains t), among the kinds in mask; KT_NO if none.
 */
static uint32_t
flow_span(const struct kt_model *m, uint32_t th, int64_t t, unsigned mask)
{
	return innermost_at(m, th, t, mask, 1);
}

static int
cmp_flowend(const void *a, const void *b)
{
	const struct flowend *x = a, *y = b;
	int c;

	if ((c = cmp_i64(x->kind, y->kind)) != 0 ||
	    (c = cmp_i64(x->where, y->where)) != 0 ||
	    (c = cmp_i64(x->tid, y->tid)) != 0 ||
	    (c = cmp_i64(x->ts, y->ts)) != 0)
		return c;
	return cmp_i64(x->id, y->id);
}

static int
cmp_fwdbwd(const void *a, const void *b)
{
	const struct flowend *x = a, *y = b;
	int c;

	if ((c = cmp_i64(x->kind, y->kind)) != 0 ||
	    (c = cmp_i64(x->tid, y->tid)) != 0 ||	/* the rank here */
	    (c = cmp_i64(x->id, y->id)) != 0)
		return c;
	return cmp_i64(x->ts, y->ts);
}

static int
cmp_link(const void *a, const void *b)
{
	const struct kt_link *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* The flow ends in bind_flows' order (sorted before the spans are). */
static void
sort_flows(struct load *l)
{
	kt_qsort(l->flows.p, l->flows.n, sizeof(struct flowend), cmp_flowend);
}

/*
 * After the pass, the flow ends that did not settle in it (flow()),
 * sorted by sort_flows:
 * an ac2g "s" gives its id to the innermost runtime or driver call
 * without a correlation that it binds to; an ac2g "f" to the activity
 * without one that starts at (or contains) its ts on its device and
 * stream.  fwdbwd ends bind to the innermost cpu_op at their ts, and
 * each "f" with an "s" of the same id and rank links the backward op
 * to the forward op (m->fwdbwd).  0 or -1.
 */
static int
bind_flows(struct load *l)
{
	struct kt_model *m = l->m;
	struct flowend *f = l->flows.p, *e;
	size_t n = l->flows.n, i, j, nf, ns, nl;
	const unsigned calls = 1u << KT_CUDA_RUNTIME | 1u << KT_CUDA_DRIVER;

	if (n == 0)
		return 0;
	/* ac2g "s": a call without a correlation takes the id. */
	for (i = 0; i < n && f[i].kind == FL_AC2G_S; i++) {
		uint32_t s = flow_span(m, f[i].where, f[i].ts, calls);

		if (s != KT_NO && m->spans[s].corr < 0)
			m->spans[s].corr = f[i].id;
	}
	/* ac2g "f": sorted by (device, stream, ts); each activity without. */
	for (ns = i, nf = i; nf < n && f[nf].kind == FL_AC2G_F; nf++)
		;
	for (j = 0; j < m->nact && nf > ns; j++) {
		struct kt_act *a = &m->act[j];
		size_t lo = ns, hi = nf;

		if (a->corr >= 0)
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			e = &f[mid];
			if (e->where < a->dev || (e->where == a->dev &&
			    (e->tid < a->stream || (e->tid == a->stream &&
			    e->ts < a->ts))))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nf && f[lo].where == a->dev && f[lo].tid ==
		    a->stream && (f[lo].ts == a->ts ||
		    f[lo].ts < a->ts + a->dur)) {
			a->corr = f[lo].id;
			m->nflowcorr++;
		}
	}
	/* fwdbwd: bind each end, then pair them by (rank, id). */
	for (i = nf; i < n; i++) {
		f[i].span = flow_span(m, f[i].where, f[i].ts,
		    1u << KT_CPU_OP);
		f[i].tid = m->threads[f[i].where].rank;
	}
	kt_qsort(f + nf, n - nf, sizeof(*f), cmp_fwdbwd);
	for (ns = nf; ns < n && f[ns].kind == FL_FWDBWD_S; ns++)
		;
	if (ns == nf || ns == n)
		return 0;
	if ((m->fwdbwd = malloc((n - ns) * sizeof(*m->fwdbwd))) == NULL)
		return -1;
	for (i = ns, j = nf, nl = 0; i < n; i++) {
		while (j < ns && (f[j].tid < f[i].tid || (f[j].tid ==
		    f[i].tid && f[j].id < f[i].id)))
			j++;
		if (j < ns && f[j].tid == f[i].tid && f[j].id == f[i].id &&
		    f[i].span != KT_NO && f[j].span != KT_NO) {
			m->fwdbwd[nl].from = f[i].span;
			m->fwdbwd[nl++].to = f[j].span;
		}
	}
	m->nfwdbwd = nl;
	kt_qsort(m->fwdbwd, nl, sizeof(*m->fwdbwd), cmp_link);
	return 0;
}

static uint32_t	step_of(const struct kt_model *, const struct kt_act *,
		    int64_t, size_t *);
static void	step_count(struct kt_step *, const struct kt_act *);
static int64_t	launch_ts(const struct kt_model *, const struct kt_act *);

/*
 * The innermost cpu_op around span s (into spans), or KT_NO: found at
 * the join, while the launching call's span is in cache, for
 * kt_model_op_of.
 */
static uint32_t
op_around(const struct kt_model *m, uint32_t s)
{
	for (s = m->spans[s].parent; s != KT_NO; s = m->spans[s].parent)
		if (m->spans[s].kind == KT_CPU_OP)
			return s;
	return KT_NO;
}

#define JOIN_THREAD	(1u << 16)	/* activities joined on two threads,
					   at least */

/*
 * What joins activities [lo, hi) to their calls (join_run): the calls of
 * each correlation chained from a table indexed by it (head, next: when
 * the correlations lie in [minc, minc + w], not many more than the
 * calls), else join's sorted pairs; the activities' steps counted in
 * steps (m->steps, or a part's own), odd set when a time of -1 (the
 * counts' "none") was counted.
 */
struct join_part {
	struct kt_model	*m;
	const uint32_t	*head, *next;
	int64_t		 minc;
	size_t		 w;
	const struct kt_pair *pairs;
	size_t		 np;
	size_t		 lo, hi;
	struct kt_step	*steps;
	int		 odd;
};

/* Activity a's launching call: the first of its correlation on its rank. */
static void
join_one(const struct join_part *p, struct kt_act *a)
{
	struct kt_model *m = p->m;
	int64_t rank = m->devices[a->dev].rank;
	size_t lo = 0, hi = p->np;
	uint32_t k;

	if (p->head != NULL) {
		if (a->corr < p->minc || (uint64_t)(a->corr - p->minc) > p->w)
			return;
		for (k = p->head[a->corr - p->minc]; k != KT_NO; k = p->next[k])
			if (m->threads[m->spans[k].thread].rank == rank) {
				a->launch = k;
				a->thread = m->spans[k].thread;
				a->op = op_around(m, k);
				return;
			}
		return;
	}
	if (a->corr < 0)
		return;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->pairs[mid].key < (uint64_t)a->corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->np && p->pairs[lo].key == (uint64_t)a->corr; lo++) {
		const struct kt_span *s = &m->spans[p->pairs[lo].val];

		if (m->threads[s->thread].rank == rank) {
			a->launch = (uint32_t)p->pairs[lo].val;
			a->thread = s->thread;
			a->op = op_around(m, a->launch);
			return;
		}
	}
}

/* Join activities [p->lo, p->hi) and count their steps in p->steps. */
static void *
join_run(void *arg)
{
	struct join_part *p = arg;
	struct kt_model *m = p->m;
	size_t i, hint = 0;

	for (i = p->lo; i < p->hi; i++) {
		struct kt_act *a = &m->act[i];

		join_one(p, a);
		/* Its step now, while its call's span is at hand. */
		a->step = step_of(m, a, launch_ts(m, a), &hint);
		if (a->step != KT_NO) {
			if (a->ts == -1 || a->ts + a->dur == -1)
				p->odd = 1;
			step_count(&p->steps[a->step], a);
		}
	}
	return NULL;
}

/*
 * Join every activity as p says: on two threads when there are many and
 * threads may be used, the second half's steps counted apart and added
 * to the first's as one thread would have counted them in order.  0 or
 * -1 (out of memory).
 */
static int
join_acts(struct kt_model *m, struct join_part *p)
{
	struct join_part q;
	pthread_t th;
	size_t i;
	int started = 0;

	p->m = m;
	p->lo = 0;
	p->hi = m->nact;
	p->steps = m->steps;
	p->odd = 0;
	if (m->nact >= JOIN_THREAD && !(m->flags & KT_MODEL_ONE_THREAD) &&
	    kt_ahead_worth()) {
		q = *p;
		q.lo = p->hi = m->nact / 2;
		if ((q.steps = malloc((m->nsteps + 1) * sizeof(*q.steps))) ==
		    NULL)
			return -1;
		for (i = 0; i < m->nsteps; i++) {
			q.steps[i].gpu_start = q.steps[i].gpu_end = -1;
			q.steps[i].nact = 0;
		}
		started = kt_thread_start(&th, join_run, &q, "kt-join") == 0;
		if (!started) {
			free(q.steps);
			p->hi = m->nact;
		}
	}
	(void)join_run(p);
	if (!started)
		return 0;
	pthread_join(th, NULL);
	if (q.odd) {
		/* A -1 among them: counted again, in order, as one thread. */
		for (i = q.lo; i < q.hi; i++)
			if (m->act[i].step != KT_NO)
				step_count(&m->steps[m->act[i].step],
				    &m->act[i]);
	} else
		for (i = 0; i < m->nsteps; i++) {
			struct kt_step *st = &m->steps[i];
			const struct kt_step *o = &q.steps[i];

			/* Without a -1 among them, counts are min, max, sum. */
			if (o->gpu_start != -1 && (st->gpu_start == -1 ||
			    o->gpu_start < st->gpu_start))
				st->gpu_start = o->gpu_start;
			if (o->gpu_end != -1 && (st->gpu_end == -1 ||
			    o->gpu_end > st->gpu_end))
				st->gpu_end = o->gpu_end;
			st->nact += o->nact;
		}
	free(q.steps);
	return 0;
}

/*
 * join() where the calls' correlations lie in [minc, minc + w], not many
 * more than the calls: the calls of each correlation chained from a
 * table indexed by it, in their order (as join's sorted pairs give
 * them), instead of a sort and a search per activity.  0 or -1.
 */
static int
join_dense(struct kt_model *m, int64_t minc, size_t w)
{
	struct join_part p;
	uint32_t *head, *next;
	size_t i;
	int rc;

	if (m->nspans >= KT_NO || (head = malloc((w + 1) *
	    sizeof(*head))) == NULL)
		return -1;
	if ((next = malloc(m->nspans * sizeof(*next))) == NULL) {
		free(head);
		return -1;
	}
	for (i = 0; i <= w; i++)
		head[i] = KT_NO;
	for (i = m->nspans; i-- > 0; )
		if (m->spans[i].corr >= 0) {
			size_t c = (size_t)(m->spans[i].corr - minc);

			next[i] = head[c];
			head[c] = (uint32_t)i;
		}
	memset(&p, 0, sizeof(p));
	p.head = head;
	p.next = next;
	p.minc = minc;
	p.w = w;
	rc = join_acts(m, &p);
	free(next);
	free(head);
	return rc;
}

/* Join activities to runtime calls by correlation; assign steps. */
static int
join(struct kt_model *m)
{
	struct join_part p;
	struct kt_pair *pairs;
	size_t i, np = 0;
	int64_t minc = INT64_MAX, maxc = -1;
	int rc;

	for (i = 0; i < m->nspans; i++)
		if (m->spans[i].corr >= 0) {
			np++;
			if (m->spans[i].corr > maxc)
				maxc = m->spans[i].corr;
			if (m->spans[i].corr < minc)
				minc = m->spans[i].corr;
		}
	/* Correlations are counted up: a table when they are dense. */
	if (np > 0 && (uint64_t)(maxc - minc) < 4 * (uint64_t)np + 4096)
		return join_dense(m, minc, (size_t)(maxc - minc));
	if ((pairs = malloc((np ? np : 1) * sizeof(*pairs))) == NULL)
		return -1;
	np = 0;
	for (i = 0; i < m->nspans; i++)
		if (m->spans[i].corr >= 0) {
			pairs[np].key = (uint64_t)m->spans[i].corr;
			pairs[np++].val = i;
		}
	if (kt_sort_pairs(pairs, np) == -1) {
		free(pairs);
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.pairs = pairs;
	p.np = np;
	rc = join_acts(m, &p);
	free(pairs);
	return rc;
}

/*
 * Assign activity a to the step whose span contains its launching call
 * (which starts at lts), else the one whose span contains its start,
 * else none; *hint for step_at.
 */
static void
act_step(struct kt_model *m, struct kt_act *a, int64_t lts, size_t *hint)
{
	a->step = step_of(m, a, lts, hint);
	if (a->step != KT_NO)
		step_count(&m->steps[a->step], a);
}

/* act_step's step for a, not counted. */
static uint32_t
step_of(const struct kt_model *m, const struct kt_act *a, int64_t lts,
    size_t *hint)
{
	int64_t rank = m->devices[a->dev].rank;
	uint32_t step = KT_NO;

	if (m->nsteps == 0)
		return KT_NO;
	if (a->launch != KT_NO)
		step = step_at(m, rank, lts, hint);
	/*
	 * Launched before a slice's window (its call is there, or the
	 * activity starts at the cut, cut by --clip): not a step of the
	 * slice.
	 */
	if (step == KT_NO && (a->launch != KT_NO ? lts >= m->cut_start :
	    a->ts > m->cut_start))
		step = step_at(m, rank, a->ts, hint);
	return step;
}

/* Count activity a in its step st: its GPU start, end, activities. */
static void
step_count(struct kt_step *st, const struct kt_act *a)
{
	if (st->gpu_start == -1 || a->ts < st->gpu_start)
		st->gpu_start = a->ts;
	if (st->gpu_end == -1 || a->ts + a->dur > st->gpu_end)
		st->gpu_end = a->ts + a->dur;
	st->nact++;
}

/* The start of activity a's launching call, or 0 when it has none. */
static int64_t
launch_ts(const struct kt_model *m, const struct kt_act *a)
{
	return a->launch != KT_NO ? m->spans[a->launch].ts : 0;
}

/* act_step for every activity. */
static void
steps_assign(struct kt_model *m)
{
	size_t i, hint = 0;

	for (i = 0; i < m->nact; i++)
		act_step(m, &m->act[i], launch_ts(m, &m->act[i]), &hint);
}

int
kt_model_step_regex(struct kt_model *m, const char *re_text,
    struct kt_error *err)
{
	regex_t re;
	char msg[256];
	int rc;

	if (kt_regex_check(re_text, msg, sizeof(msg)) == -1) {
		kt_error_set(err, NULL, 0, 0, "--step-regex: '%s': %s",
		    re_text, msg);
		return -1;
	}
	if ((rc = regcomp(&re, re_text, REG_EXTENDED)) != 0) {
		regerror(rc, &re, msg, sizeof(msg));
		kt_error_set(err, NULL, 0, 0, "--step-regex: '%s': %s",
		    re_text, msg);
		return -1;
	}
	rc = steps_build(m, &re);
	regfree(&re);
	if (rc == -1) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return -1;
	}
	steps_assign(m);
	return 0;
}

/* Per-device ranges and stream counts. */
static int
devices_finish(struct kt_model *m)
{
	size_t i, j;

	for (i = 0; i < m->ndevices; i++) {
		m->devices[i].first = m->devices[i].nact = 0;
		m->devices[i].end = INT64_MIN;
	}
	for (i = 0; i < m->nact; i = j) {
		struct kt_device *d = &m->devices[m->act[i].dev];
		struct kt_pair *p;
		size_t k, ns = 0;

		for (j = i; j < m->nact && m->act[j].dev == m->act[i].dev; j++)
			;
		d->first = (uint32_t)i;
		d->nact = (uint32_t)(j - i);
		if ((p = malloc((j - i) * sizeof(*p))) == NULL)
			return -1;
		for (k = i; k < j; k++) {
			p[k - i].key = (uint64_t)m->act[k].stream;
			p[k - i].val = 0;
			if (m->act[k].ts + m->act[k].dur > d->end)
				d->end = m->act[k].ts + m->act[k].dur;
		}
		if (kt_sort_pairs(p, j - i) == -1) {
			free(p);
			return -1;
		}
		for (k = 0; k < j - i; k++)
			if (k == 0 || p[k].key != p[k - 1].key)
				ns++;
		d->nstreams = (uint32_t)ns;
		free(p);
	}
	return 0;
}

/*
 * The spans sorted and nested (spans_join, spans_finish, which touch
 * the spans, threads and steps only) on a thread of their own, while
 * the caller's sorts the rest.
 */
#define SPANS_THREAD	(1u << 14)	/* spans sorted on a thread, at least */

struct spans_job {
	struct kt_model	*m;
	struct load	*l;
	struct kt_rows	 si;		/* the rows to map the spans' through */
	int		 remap;		/* (remap_rows) */
	pthread_t	 th;
	int		 started;
	int		 rc;		/* 0 or -1 (out of memory) */
};

/*
 * Put the threads' spans together in m->spans, by thread in the threads'
 * order (renumber), each thread's in cmp_span's order, with their
 * thread's number and their rows (j->remap, mapped first: rows order
 * the spans of one time).  The first thread's array is grown to hold
 * them all (realloc, which moves a large one's pages without a copy) and
 * sorted in place; each other thread's is copied after it in order (a
 * thread's spans mostly come in time order: when they do not, through
 * the order sort_thread gives, 40 bytes a span of the longest such
 * thread) and freed.  Each thread's first and nspans are set.  0 or -1.
 */
static int
spans_join(struct spans_job *j)
{
	struct kt_model *m = j->m;
	struct load *l = j->l;
	struct span_order so = { NULL, NULL, NULL, 0 };
	struct kt_span *o = NULL;
	size_t t, k, at = 0;
	int rc = -1;

	for (t = 0; t < m->nthreads; t++) {
		uint32_t old = m->threads[t].first;
		struct vec *v = old < l->ntsp ? &l->tsp[old] : NULL;
		struct kt_span *from;
		size_t n = v != NULL ? v->n : 0;
		int sorted;

		m->threads[t].first = (uint32_t)at;
		m->threads[t].nspans = (uint32_t)n;
		if (n == 0)
			continue;
		from = v->p;
		if (j->remap)
			for (k = 0; k < n; k++)
				if (from[k].index < j->si.n)
					from[k].index = kt_rows_at(&j->si,
					    from[k].index);
		/* One thread's spans: their thread numbers are the same. */
		if (!(sorted = spans_sorted(from, n)) &&
		    span_order(&so, from, n) == -1)
			goto out;
		if (o == NULL) {
			if ((o = realloc(v->p, l->nspans * sizeof(*o))) ==
			    NULL)
				goto out;
			kt_mem_huge(o, l->nspans * sizeof(*o));
			v->p = NULL;
			v->n = v->cap = 0;
			m->spans = o;
			if (!sorted)
				permute_spans(o, so.ix, n);
			if (old != t)
				for (k = 0; k < n; k++)
					o[k].thread = (uint32_t)t;
			at = n;
			continue;
		}
		for (k = 0; k < n; k++) {
			o[at + k] = from[sorted ? k : so.ix[k]];
			o[at + k].thread = (uint32_t)t;
		}
		at += n;
		free(v->p);
		v->p = NULL;
		v->n = v->cap = 0;
	}
	m->nspans = at;
	rc = 0;
out:
	free(so.ix);
	free(so.p);
	free(so.q);
	return rc;
}

static void *
spans_run(void *arg)
{
	struct spans_job *j = arg;

	j->rc = spans_join(j) == -1 || spans_finish(j->m) == -1 ? -1 : 0;
	return NULL;
}

/* Start job j on model m: on a thread when threads, else here. */
static void
spans_start(struct spans_job *j, struct kt_model *m, int threads)
{
	j->m = m;
	j->rc = 0;
	j->started = threads && kt_thread_start(&j->th, spans_run, j,
	    "kt-spans") == 0;
	if (!j->started)
		(void)spans_run(j);
}

/* Free what is left of the threads' spans (spans_join took them). */
static void
spans_free(struct load *l)
{
	size_t i;

	for (i = 0; i < l->ntsp; i++)
		free(l->tsp[i].p);
	free(l->tsp);
	l->tsp = NULL;
	l->ntsp = 0;
}

/* Wait for job j: its rc. */
static int
spans_wait(struct spans_job *j)
{
	if (j->started)
		pthread_join(j->th, NULL);
	j->started = 0;
	return j->rc;
}

struct kt_model *
kt_model_load(struct kt_reader *rd, void (*progress)(const struct kt_reader *),
    struct kt_error *err)
{
	return kt_model_load_with(rd, 0, progress, err);
}

struct kt_model *
kt_model_load_with(struct kt_reader *rd, unsigned flags,
    void (*progress)(const struct kt_reader *), struct kt_error *err)
{
	return kt_model_load_each(rd, flags, progress, NULL, NULL, err);
}

struct kt_model *
kt_model_load_each(struct kt_reader *rd, unsigned flags,
    void (*progress)(const struct kt_reader *),
    int (*each)(void *, const struct kt_event *, struct kt_error *),
    void *ctx, struct kt_error *err)
{
	struct load l;
	struct kt_model *m;
	struct kt_event ev;
	const struct kt_event *e;
	struct kt_ahead *ah = NULL;
	struct spans_job sj;
	struct kt_rows si = { NULL, NULL, 0 };
	uint64_t hint;
	int remap, applied;
	size_t i;
	int rc;

	memset(&l, 0, sizeof(l));
	l.flags = flags;
	l.last_dev = l.last_thread = l.last_sp = KT_NO;
	kt_idmemo_init(&l.dev_raw);
	kt_idmemo_init(&l.th_raw);
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->names = kt_intern_new()) == NULL ||
	    (l.devkeys = kt_intern_new()) == NULL ||
	    (l.thkeys = kt_intern_new()) == NULL ||
	    (l.flowdevs = kt_intern_new()) == NULL ||
	    (l.pidrank = kt_pidrank_new()) == NULL)
		goto nomem;
	l.m = m;
	m->rank = -1;
	m->flags = flags;
	if ((flags & KT_MODEL_MEMORY) && (m->memory = kt_memory_new()) == NULL)
		goto nomem;
	/*
	 * A large input (a plain or gzip file): reserve for the usual
	 * density of events, sparing the copies and the pages of growing.
	 */
	hint = kt_reader_size_hint(rd);
	if (hint > (8u << 20)) {
		l.sphint = hint / 256;	/* a thread's spans, at most */
		if (vec_reserve(&l.acts, hint / 1024, sizeof(struct kt_act)) ==
		    -1)
			goto nomem;
	}
	/* Scan on a second CPU while this one builds (kt_ahead_start). */
	if (!(flags & KT_MODEL_ONE_THREAD) && kt_ahead_worth())
		ah = kt_ahead_start(rd, progress);
	while ((rc = kt_ahead_get(ah, rd, &ev, &e, err)) == 1) {
		m->nevents++;
		if (ah == NULL && progress != NULL &&
		    (m->nevents & 0x3fff) == 0)
			progress(rd);
		if (each != NULL && each(ctx, e, err) == -1) {
			rc = -1;
			break;
		}
		if ((rc = take(&l, e)) == -1)
			goto nomem;
		if (rc == -2) {
			kt_error_set(err, kt_reader_name(rd), 0, 0, "%s:%llu: "
			    "time out of range: an end or the GPU time adds up "
			    "past 2^62 ns (146 years)", kt_kind_name(e->kind),
			    (unsigned long long)e->index);
			goto fail;
		}
		if (m->memory != NULL && (e->kind == KT_MEMORY ||
		    e->kind == KT_STEP) && kt_memory_add(m->memory, e) == -1)
			goto nomem;
	}
	kt_ahead_stop(ah);
	ah = NULL;
	if (rc == -1)
		goto fail;
	m->rank = kt_reader_rank(rd);
	m->cut_start = meta_int(rd, KT_KEY_WINDOW_START, INT64_MIN);
	m->cut_end = meta_int(rd, KT_KEY_WINDOW_END, INT64_MAX);
	m->devices = vec_trim(&l.devs, sizeof(*m->devices));
	m->ndevices = l.devs.n;
	m->act = vec_trim(&l.acts, sizeof(*m->act));
	m->nact = l.acts.n;
	m->comms = vec_trim(&l.comms, sizeof(*m->comms));
	m->ncomms = l.comms.n;
	m->threads = vec_trim(&l.threads, sizeof(*m->threads));
	m->nthreads = l.threads.n;
	m->gpu_ann = vec_trim(&l.anns, sizeof(*m->gpu_ann));
	m->ngpu_ann = l.anns.n;
	m->stacks = vec_trim(&l.stacks, sizeof(*m->stacks));
	m->nstacks = l.stacks.n;
	m->seqs = vec_trim(&l.seqs, sizeof(*m->seqs));
	m->nseqs = l.seqs.n;
	m->shapes = vec_trim(&l.shapes, sizeof(*m->shapes));
	m->nshapes = l.shapes.n;
	m->nodes = vec_trim(&l.nodes, sizeof(*m->nodes));
	m->nnodes = l.nodes.n;
	memset(&l.devs, 0, sizeof(l.devs));
	memset(&l.acts, 0, sizeof(l.acts));
	memset(&l.comms, 0, sizeof(l.comms));
	memset(&l.threads, 0, sizeof(l.threads));
	memset(&l.anns, 0, sizeof(l.anns));
	memset(&l.stacks, 0, sizeof(l.stacks));
	memset(&l.seqs, 0, sizeof(l.seqs));
	memset(&l.shapes, 0, sizeof(l.shapes));
	memset(&l.nodes, 0, sizeof(l.nodes));
	/* A ktSourceIndex known only at the end: the rows through it. */
	remap = kt_reader_rows(rd, &si, &applied) && !applied;
	if (remap)
		remap_rows(m, &si);
	/* Events without args.rank belong to the trace's rank. */
	for (i = 0; i < m->ndevices; i++)
		if (m->devices[i].rank == -1)
			m->devices[i].rank = m->rank;
	for (i = 0; i < m->nthreads; i++)
		if (m->threads[i].rank == -1)
			m->threads[i].rank = m->rank;
	for (i = 0; i < m->nstacks; i++)
		if (m->stacks[i].rank == -1)
			m->stacks[i].rank = m->rank;
	for (i = 0; i < m->nseqs; i++)
		if (m->seqs[i].rank == -1)
			m->seqs[i].rank = m->rank;
	for (i = 0; i < m->nshapes; i++)
		if (m->shapes[i].rank == -1)
			m->shapes[i].rank = m->rank;
	for (i = 0; i < m->nnodes; i++)
		if (m->nodes[i].rank == -1)
			m->nodes[i].rank = m->rank;
	if (flow_devices(&l) == -1 || renumber(&l) == -1)
		goto nomem;
	/*
	 * The spans on a second CPU, where there is one and they are many
	 * enough to pay for a thread, while this one sorts the activities,
	 * annotations, side arrays and flow ends and finishes the devices:
	 * none of it touches the spans.
	 */
	memset(&sj, 0, sizeof(sj));
	sj.l = &l;
	sj.remap = remap;
	sj.si = si;
	spans_start(&sj, m, !(flags & KT_MODEL_ONE_THREAD) &&
	    l.nspans >= SPANS_THREAD && kt_ahead_worth());
	kt_qsort(m->act, m->nact, sizeof(*m->act), cmp_act);
	kt_qsort(m->gpu_ann, m->ngpu_ann, sizeof(*m->gpu_ann), cmp_ann);
	kt_qsort(m->stacks, m->nstacks, sizeof(*m->stacks), cmp_row);
	kt_qsort(m->seqs, m->nseqs, sizeof(*m->seqs), cmp_row);
	kt_qsort(m->shapes, m->nshapes, sizeof(*m->shapes), cmp_row);
	kt_qsort(m->nodes, m->nnodes, sizeof(*m->nodes), cmp_row);
	sort_flows(&l);
	rc = devices_finish(m);
	if (spans_wait(&sj) == -1 || rc == -1 || bind_flows(&l) == -1 ||
	    join(m) == -1)
		goto nomem;
	capacities(rd, m);
	kt_intern_free(l.devkeys);
	kt_intern_free(l.thkeys);
	kt_intern_free(l.flowdevs);
	kt_pidrank_free(l.pidrank);
	kt_buf_free(&l.tmp);
	kt_buf_free(&l.key);
	kt_buf_free(&l.dev_key);
	kt_buf_free(&l.th_key);
	free(l.flows.p);
	spans_free(&l);
	return m;
nomem:
	kt_ahead_stop(ah);
	ah = NULL;
	kt_error_set(err, kt_reader_name(rd), 0, 0, "out of memory");
fail:
	kt_ahead_stop(ah);
	free(l.devs.p);
	free(l.acts.p);
	free(l.comms.p);
	free(l.threads.p);
	spans_free(&l);
	free(l.anns.p);
	free(l.stacks.p);
	free(l.seqs.p);
	free(l.shapes.p);
	free(l.nodes.p);
	free(l.flows.p);
	kt_intern_free(l.devkeys);
	kt_intern_free(l.thkeys);
	kt_intern_free(l.flowdevs);
	kt_pidrank_free(l.pidrank);
	kt_buf_free(&l.tmp);
	kt_buf_free(&l.key);
	kt_buf_free(&l.dev_key);
	kt_buf_free(&l.th_key);
	kt_model_free(m);
	return NULL;
}

void
kt_model_free(struct kt_model *m)
{
	if (m == NULL)
		return;
	kt_intern_free(m->names);
	free(m->devices);
	free(m->act);
	free(m->comms);
	free(m->threads);
	free(m->spans);
	free(m->gpu_ann);
	free(m->steps);
	free(m->stacks);
	free(m->seqs);
	free(m->shapes);
	free(m->nodes);
	free(m->fwdbwd);
	kt_memory_free(m->memory);
	free(m);
}

uint32_t
kt_model_op_of(const struct kt_model *m, uint32_t act)
{
	return m->act[act].op;
}

const void *
kt_model_row(const void *base, size_t n, size_t sz, uint64_t index,
    int64_t rank)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const void *e = (const char *)base + mid * sz;
		uint64_t r = *(const uint64_t *)e;
		int64_t k = ((const int64_t *)e)[1];

		if (r < index || (r == index && k < rank))
			lo = mid + 1;
		else if (r > index || k > rank)
			hi = mid;
		else
			return e;
	}
	return NULL;
}

const char *
kt_model_str(const struct kt_model *m, uint32_t id)
{
	const char *p;
	size_t n;

	if (id == KT_NO || (p = kt_intern_get(m->names, id, &n)) == NULL)
		return "";
	return p;
}

uint32_t
kt_model_span_at(const struct kt_model *m, uint32_t th, int64_t t,
    unsigned skip)
{
	return innermost_at(m, th, t, ~skip, 0);
}

int
kt_dtype_size(const char *d)
{
	static const struct {
		const char	*name;
		int		 size;
	} t[] = {
		{ "Float", 4 }, { "float", 4 }, { "float32", 4 },
		{ "BFloat16", 2 }, { "bfloat16", 2 }, { "Half", 2 },
		{ "float16", 2 }, { "Double", 8 }, { "float64", 8 },
		{ "Long", 8 }, { "int64", 8 }, { "Int", 4 }, { "int32", 4 },
		{ "Short", 2 }, { "int16", 2 }, { "Char", 1 }, { "int8", 1 },
		{ "Byte", 1 }, { "uint8", 1 }, { "Bool", 1 }, { "bool", 1 },
		{ "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 },
		{ "Float8_e4m3fnuz", 1 }, { "Float8_e5m2fnuz", 1 },
		{ "ComplexFloat", 8 }, { "ComplexDouble", 16 },
		{ "ComplexHalf", 4 }, { "UInt16", 2 }, { "UInt32", 4 },
		{ "UInt64", 8 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i].name, d) == 0)
			return t[i].size;
	return -1;
}

int64_t
kt_act_bytes(const struct kt_model *m, const struct kt_act *a)
{
	const struct kt_comm *c;
	int sz;

	if (a->bytes >= 0)
		return a->bytes;
	if (a->comm == KT_NO)
		return -1;
	c = &m->comms[a->comm];
	if (c->in_nelems < 0 || c->dtype == KT_NO ||
	    (sz = kt_dtype_size(kt_model_str(m, c->dtype))) < 0 ||
	    c->in_nelems > INT64_MAX / sz)
		return -1;
	return c->in_nelems * sz;
}

int
kt_model_device_cells(struct kt_table *t, const struct kt_model *m,
    uint32_t dev)
{
	const struct kt_device *d = &m->devices[dev];
	int rc = 0;

	if (d->rank >= 0)
		rc |= kt_table_int(t, d->rank);
	else
		rc |= kt_table_cell(t, "-");
	if (d->index >= 0)
		rc |= kt_table_int(t, d->index);
	else
		rc |= kt_table_cellf(t, "pid:%s", kt_model_str(m, d->pid));
	return rc;
}
