/*
 * memory.c: memory over time, from the [memory] instants of a trace
 * (kt-memory and kt views).  The caller feeds every event of one pass;
 * this keeps, per device, one small sample per [memory] instant (time,
 * allocated, reserved) and the ProfilerStep spans, so that the peaks can
 * be given with their step.  Everything is integer: bytes and ns.
 *
 * A device is (rank, Device Type, Device Id); rank is args.rank (kt
 * rank-tag), else the trace's (kt_reader_rank), else -1.  Allocated is
 * args."Total Allocated"; in traces that lack it (Kineto before 2022) it is the running sum of args.Bytes in
 * input order, counted from 0 at the device's first instant, and the
 * device is marked so.  Reserved is args."Total Reserved" or unknown.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kt.h"

struct sample {
	int64_t		 ts;
	int64_t		 alloc;
	int64_t		 resv;		/* -1: unknown */
};

struct mdev {
	int64_t		 rank;
	int64_t		 type;
	int64_t		 id;
	char		 pid[64];	/* raw pid text of its first instant */
	struct sample	*s;
	size_t		 n, cap;
	int		 summed;	/* allocated from the sum of Bytes */
	int		 has_resv;
	int64_t		 sum;		/* running sum of Bytes */
	int64_t		 capacity;	/* bytes, or -1 */
	const char	*capfrom;
	/* After kt_memory_finish(). */
	size_t		 ipa, ipr;	/* the samples of the peaks */
};

struct mstep {
	int64_t		 rank;
	int64_t		 num;
	int64_t		 start, end;
};

struct kt_memory {
	struct mdev	*d;
	size_t		 nd;
	size_t		 last;
	struct mstep	*st;
	size_t		 nst, capst;
	uint64_t	 nevents;
	int		 finished;
};

struct kt_memory *
kt_memory_new(void)
{
	return calloc(1, sizeof(struct kt_memory));
}

void
kt_memory_free(struct kt_memory *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nd; i++)
		free(m->d[i].s);
	free(m->d);
	free(m->st);
	free(m);
}

/*
 * The args a [memory] instant holds (arg_int): the scanner's fields, or,
 * for an event not scanned whole (a record's view), found in one walk.
 * A key given twice: the scanner keeps the last, as JSON parsers do; the
 * walk the first.
 */
enum { A_TYPE, A_ID, A_BYTES, A_ALLOC, A_RESV, NARGS };
static const char *const arg_keys[NARGS] = {
	"Device Type", "Device Id", "Bytes", "Total Allocated",
	"Total Reserved"
};
static const enum kt_field arg_fields[NARGS] = {
	KT_F_DEVTYPE, KT_F_DEVID, KT_F_MBYTES, KT_F_MALLOC, KT_F_MRESV
};
#define ARG_BITS	(KT_FBIT(KT_F_DEVTYPE) | KT_FBIT(KT_F_DEVID) | \
			 KT_FBIT(KT_F_MBYTES) | KT_FBIT(KT_F_MALLOC) | \
			 KT_FBIT(KT_F_MRESV))

/* args[k] of ev as an integer in *v: 0, or -1 when absent or not one. */
static int
arg_int(const struct kt_event *ev, const struct kt_val *args, int k,
    int64_t *v)
{
	if (args[k].type == KT_NONE)
		return -1;
	return kt_val_int(ev, &args[k], v);
}

/* The device of (rank, type, id), made on first sight; NULL: no memory. */
static struct mdev *
device(struct kt_memory *m, int64_t rank, int64_t type, int64_t id)
{
	struct mdev *d;
	size_t i;

	if (m->last < m->nd) {
		d = &m->d[m->last];
		if (d->rank == rank && d->type == type && d->id == id)
			return d;
	}
	for (i = 0; i < m->nd; i++) {
		d = &m->d[i];
		if (d->rank == rank && d->type == type && d->id == id) {
			m->last = i;
			return d;
		}
	}
	if ((d = realloc(m->d, (m->nd + 1) * sizeof(*d))) == NULL)
		return NULL;
	m->d = d;
	d = &m->d[m->nd];
	memset(d, 0, sizeof(*d));
	d->rank = rank;
	d->type = type;
	d->id = id;
	d->capacity = -1;
	d->capfrom = "unknown";
	m->last = m->nd++;
	return d;
}

int
kt_memory_add(struct kt_memory *m, const struct kt_event *ev)
{
	int64_t rank = -1, type, id, v;
	struct mdev *d;
	struct sample *s;
	struct kt_val args[NARGS];

	if (ev->kind == KT_STEP) {
		if (ev->ph != 'X' || !(ev->flags & KT_EV_TS) ||
		    !(ev->flags & KT_EV_DUR))
			return 0;
		if ((v = kt_event_step(ev)) < 0)
			return 0;
		if (m->nst == m->capst) {
			size_t c = m->capst ? 2 * m->capst : 64;
			struct mstep *t;

			if ((t = realloc(m->st, c * sizeof(*t))) == NULL)
				return -1;
			m->st = t;
			m->capst = c;
		}
		if (kt_event_field_int(ev, KT_F_RANK, &rank) == -1)
			rank = -1;
		m->st[m->nst].rank = rank;
		m->st[m->nst].num = v;
		m->st[m->nst].start = ev->ts;
		m->st[m->nst].end = ev->ts + ev->dur;
		m->nst++;
		return 0;
	}
	if (ev->kind != KT_MEMORY || !(ev->flags & KT_EV_TS))
		return 0;
	m->nevents++;
	if ((ev->known & ARG_BITS) == ARG_BITS) {
		int k;

		for (k = 0; k < NARGS; k++)
			args[k] = ev->f[arg_fields[k]];
	} else
		kt_event_find_keys(ev, &ev->f[KT_F_ARGS], arg_keys, NARGS,
		    args);
	if (arg_int(ev, args, A_TYPE, &type) == -1)
		type = -1;
	if (arg_int(ev, args, A_ID, &id) == -1)
		id = -1;
	if (kt_event_field_int(ev, KT_F_RANK, &rank) == -1)
		rank = -1;
	if ((d = device(m, rank, type, id)) == NULL)
		return -1;
	if (d->n == d->cap) {
		size_t c = d->cap ? 2 * d->cap : 256;

		if ((s = realloc(d->s, c * sizeof(*s))) == NULL)
			return -1;
		d->s = s;
		d->cap = c;
	}
	if (d->n == 0) {
		const char *p;
		size_t n;

		n = 0;
		if (ev->f[KT_F_PID].type != KT_NONE)
			kt_event_id_text(ev, KT_F_PID, &p, &n);	/* by value */
		if (n > 0 && n < sizeof(d->pid)) {
			memcpy(d->pid, p, n);
			d->pid[n] = '\0';
		} else
			snprintf(d->pid, sizeof(d->pid), "0");
	}
	s = &d->s[d->n++];
	s->ts = ev->ts;
	/* The running sum saturates rather than overflow on bad input. */
	if (arg_int(ev, args, A_BYTES, &v) == 0 &&
	    __builtin_add_overflow(d->sum, v,
	    &d->sum))
		d->sum = v < 0 ? INT64_MIN : INT64_MAX;
	if (arg_int(ev, args, A_ALLOC, &s->alloc) == -1) {
		d->summed = 1;
		s->alloc = d->sum;
	}
	if (arg_int(ev, args, A_RESV, &s->resv) == 0)
		d->has_resv = 1;
	else
		s->resv = -1;
	return 0;
}

static int
cmp_dev(const void *a, const void *b)
{
	const struct mdev *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Sort n samples by time, keeping the input order of equal times: qsort
 * is not stable, so sort pairs (ts, position) and permute.
 */
static int
sort_samples(struct sample *s, size_t n)
{
	struct kt_pair *p;
	struct sample *t;
	size_t i, sorted = 1;

	for (i = 1; i < n; i++)
		if (s[i].ts < s[i - 1].ts) {
			sorted = 0;
			break;
		}
	if (sorted)
		return 0;
	if ((p = kt_zalloc(n, sizeof(*p))) == NULL ||
	    (t = kt_zalloc(n, sizeof(*t))) == NULL) {
		free(p);
		return -1;
	}
	for (i = 0; i < n; i++) {
		p[i].key = (uint64_t)s[i].ts ^ ((uint64_t)1 << 63);
		p[i].val = i;
	}
	if (kt_sort_pairs(p, n) == -1) {
		free(p);
		free(t);
		return -1;
	}
	for (i = 0; i < n; i++)
		t[i] = s[p[i].val];
	memcpy(s, t, n * sizeof(*s));
	free(p);
	free(t);
	return 0;
}

/* totalGlobalMem of device id in the deviceProperties list dp, or -1. */
static int64_t
capacity_of(json_t *dp, int64_t id)
{
	size_t i;
	json_t *e;

	if (!json_is_array(dp))
		return -1;
	json_array_foreach(dp, i, e) {
		json_t *jid = json_object_get(e, "id");
		json_t *mem = json_object_get(e, "totalGlobalMem");

		if (json_is_integer(jid) && json_integer_value(jid) == id &&
		    json_is_integer(mem) && json_integer_value(mem) > 0)
			return json_integer_value(mem);
	}
	return -1;
}

/* The capacity of d from the top-level keys (ktRanks first), or -1. */
static int64_t
meta_capacity(const struct mdev *d, const struct kt_meta *metas, size_t nm)
{
	struct kt_error err;
	int64_t cap = -1;
	size_t i, k;
	json_t *j, *e;

	if (d->type == 0 || d->id < 0)
		return -1;		/* the CPU has no deviceProperties */
	for (i = 0; i < nm && cap == -1; i++) {
		if (strcmp(metas[i].key, "\"ktRanks\"") == 0 && d->rank >= 0) {
			if ((j = kt_meta_json(&metas[i], &err)) == NULL)
				continue;
			json_array_foreach(j, k, e) {
				json_t *r = json_object_get(e, "rank");
				json_t *mt = json_object_get(e, "meta");

				if (json_is_integer(r) &&
				    json_integer_value(r) == d->rank)
					cap = capacity_of(json_object_get(mt,
					    "deviceProperties"), d->id);
			}
			json_decref(j);
		}
	}
	for (i = 0; i < nm && cap == -1; i++)
		if (strcmp(metas[i].key, "\"deviceProperties\"") == 0) {
			if ((j = kt_meta_json(&metas[i], &err)) == NULL)
				continue;
			cap = capacity_of(j, d->id);
			json_decref(j);
		}
	return cap;
}

int
kt_memory_finish(struct kt_memory *m, const struct kt_meta *metas, size_t nm,
    int64_t capacity, int64_t rank)
{
	size_t i, k;

	/* Events without args.rank belong to the trace's rank. */
	for (i = 0; i < m->nd; i++)
		if (m->d[i].rank == -1)
			m->d[i].rank = rank;
	for (i = 0; i < m->nst; i++)
		if (m->st[i].rank == -1)
			m->st[i].rank = rank;
	if (m->nd > 1)
		qsort(m->d, m->nd, sizeof(*m->d), cmp_dev);
	m->last = 0;
	for (i = 0; i < m->nd; i++) {
		struct mdev *d = &m->d[i];

		if (sort_samples(d->s, d->n) == -1)
			return -1;
		d->ipa = d->ipr = 0;
		for (k = 1; k < d->n; k++) {
			if (d->s[k].alloc > d->s[d->ipa].alloc)
				d->ipa = k;
			if (d->s[k].resv > d->s[d->ipr].resv)
				d->ipr = k;
		}
		if (capacity > 0 && d->type != 0) {
			d->capacity = capacity;
			d->capfrom = "--capacity-gb";
		} else if ((d->capacity = meta_capacity(d, metas, nm)) > 0)
			d->capfrom = "deviceProperties";
	}
	m->finished = 1;
	return 0;
}

size_t
kt_memory_ndevices(const struct kt_memory *m)
{
	return m->nd;
}

uint64_t
kt_memory_nevents(const struct kt_memory *m)
{
	return m->nevents;
}

/* The name of device d into buf (32 bytes): "cuda:0", "cpu", ... */
static const char *
devname(const struct mdev *d, char *buf, size_t n)
{
	static const struct {
		int64_t		 type;
		const char	*name;
	} names[] = {
		{ 0, "cpu" }, { 1, "cuda" }, { 6, "hip" }, { 9, "xla" },
		{ 13, "mps" }, { 20, "privateuse1" }
	};
	const char *nm = NULL;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].type == d->type)
			nm = names[i].name;
	if (nm == NULL)
		snprintf(buf, n, "type%lld:%lld", (long long)d->type,
		    (long long)d->id);
	else if (d->id < 0)
		snprintf(buf, n, "%s", nm);
	else
		snprintf(buf, n, "%s:%lld", nm, (long long)d->id);
	return buf;
}

const char *
kt_memory_device_name(const struct kt_memory *m, size_t i, char *buf,
    size_t n)
{
	return devname(&m->d[i], buf, n);
}

/* The step (rank's ProfilerStep#N containing ts) as text into buf. */
static const char *
step_at(const struct kt_memory *m, int64_t rank, int64_t ts, char *buf,
    size_t n)
{
	size_t i;

	for (i = 0; i < m->nst; i++)
		if (m->st[i].rank == rank && m->st[i].start <= ts &&
		    ts < m->st[i].end) {
			snprintf(buf, n, "%lld", (long long)m->st[i].num);
			return buf;
		}
	return "-";
}

/* a - b, saturated. */
static int64_t
sub_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int
cell_ns_or_unknown(struct kt_table *t, int known, int64_t v)
{
	return known ? kt_table_int(t, v) : kt_table_cell(t, "unknown");
}

struct kt_table *
kt_memory_table(const struct kt_memory *m)
{
	static const char *const cols[] = {
		"rank:n", "device", "events:n", "allocated_from",
		"peak_allocated:n", "peak_allocated_ns:n", "peak_allocated_step",
		"peak_reserved:n", "peak_reserved_ns:n", "peak_reserved_step",
		"final_allocated:n", "capacity:n", "capacity_from",
		"headroom:n"
	};
	struct kt_table *t;
	size_t i;
	int rc = 0;

	if ((t = kt_table_new(cols, sizeof(cols) / sizeof(cols[0]))) == NULL)
		return NULL;
	if (m->nd == 0) {
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "no memory events");
		for (i = 2; i < sizeof(cols) / sizeof(cols[0]); i++)
			rc |= kt_table_cell(t, i == 2 ? "0" : "-");
	}
	for (i = 0; i < m->nd && rc == 0; i++) {
		const struct mdev *d = &m->d[i];
		const struct sample *pa = &d->s[d->ipa], *pr = &d->s[d->ipr];
		char name[64], step[32];

		if (d->rank >= 0)
			rc |= kt_table_int(t, d->rank);
		else
			rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, devname(d, name, sizeof(name)));
		rc |= kt_table_int(t, (int64_t)d->n);
		rc |= kt_table_cell(t, d->summed ? "bytes-sum" :
		    "total-allocated");
		rc |= kt_table_int(t, pa->alloc);
		rc |= kt_table_int(t, pa->ts);
		rc |= kt_table_cell(t, step_at(m, d->rank, pa->ts, step,
		    sizeof(step)));
		rc |= cell_ns_or_unknown(t, d->has_resv, pr->resv);
		rc |= cell_ns_or_unknown(t, d->has_resv, pr->ts);
		rc |= kt_table_cell(t, d->has_resv ? step_at(m, d->rank,
		    pr->ts, step, sizeof(step)) : "unknown");
		rc |= kt_table_int(t, d->s[d->n - 1].alloc);
		rc |= cell_ns_or_unknown(t, d->capacity > 0, d->capacity);
		rc |= kt_table_cell(t, d->capfrom);
		rc |= cell_ns_or_unknown(t, d->capacity > 0 && d->has_resv,
		    sub_sat(d->capacity, pr->resv));
	}
	if (rc != 0) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

/*
 * The series of device d in at most points rows: every sample when there
 * are no more, else the time range cut in points equal buckets, each
 * with the maximum of allocated and of reserved over the bucket (the
 * value carried in from before it included), so no peak is lost.
 * Calls put(arg, ts, alloc, resv) for each; stops at its first -1.
 */
static int
series(const struct mdev *d, size_t points,
    int (*put)(void *, int64_t, int64_t, int64_t), void *arg)
{
	int64_t t0, t1, ca, cr;
	__extension__ __int128 span;
	size_t i, b, k;

	if (d->n == 0)
		return 0;
	if (points == 0 || d->n <= points) {
		for (i = 0; i < d->n; i++)
			if (put(arg, d->s[i].ts, d->s[i].alloc,
			    d->s[i].resv) == -1)
				return -1;
		return 0;
	}
	t0 = d->s[0].ts;
	t1 = d->s[d->n - 1].ts;
	span = t1;
	span = span - t0 + 1;
	ca = d->s[0].alloc;
	cr = d->s[0].resv;
	for (b = 0, k = 0; b < points; b++) {
		/* Bucket b is [t0 + span*b/points, t0 + span*(b+1)/points). */
		__extension__ __int128 lo = span * b / points;
		__extension__ __int128 hi = span * (b + 1) / points;
		int64_t ma = ca, mr = cr, bs = t0 + (int64_t)lo;
		int64_t be = t0 + (int64_t)hi;

		if (k < d->n && d->s[k].ts >= be && b + 1 < points)
			continue;	/* nothing new in it: the carry shows */
		while (k < d->n && (d->s[k].ts < be || b + 1 == points)) {
			ca = d->s[k].alloc;
			cr = d->s[k].resv;
			if (ca > ma)
				ma = ca;
			if (cr > mr)
				mr = cr;
			k++;
		}
		if (put(arg, bs, ma, mr) == -1)
			return -1;
	}
	return 0;
}

struct series_arg {
	struct kt_table		*t;
	const struct mdev	*d;
	const char		*name;
};

static int
put_row(void *arg, int64_t ts, int64_t a, int64_t r)
{
	struct series_arg *s = arg;
	int rc = 0;

	if (s->d->rank >= 0)
		rc |= kt_table_int(s->t, s->d->rank);
	else
		rc |= kt_table_cell(s->t, "-");
	rc |= kt_table_cell(s->t, s->name);
	rc |= kt_table_int(s->t, ts);
	rc |= kt_table_int(s->t, a);
	rc |= cell_ns_or_unknown(s->t, s->d->has_resv && r >= 0, r);
	return rc ? -1 : 0;
}

struct kt_table *
kt_memory_series(const struct kt_memory *m, size_t points)
{
	static const char *const cols[] = {
		"rank:n", "device", "ts_ns:n", "allocated:n", "reserved:n"
	};
	struct kt_table *t;
	struct series_arg a;
	size_t i;
	char name[64];

	if ((t = kt_table_new(cols, 5)) == NULL)
		return NULL;
	a.t = t;
	for (i = 0; i < m->nd; i++) {
		a.d = &m->d[i];
		a.name = devname(a.d, name, sizeof(name));
		if (series(a.d, points, put_row, &a) == -1) {
			kt_table_free(t);
			return NULL;
		}
	}
	return t;
}

/*
 * The counter events: per sample of every device one event for each
 * series it knows (allocated; reserved; headroom), each series its own
 * counter, since chrome://tracing stacks the series of one counter.
 */
size_t
kt_memory_counter_count(const struct kt_memory *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->nd; i++)
		n += m->d[i].n;
	return n;
}

static const char *const series_names[KT_MEMORY_SERIES] = {
	"allocated", "reserved", "headroom"
};

int
kt_memory_counter_event(const struct kt_memory *m, size_t k, int series,
    struct kt_buf *b)
{
	const struct mdev *d = NULL;
	const struct sample *s;
	char name[160], dn[64], tb[40], ib[32];
	size_t i;
	int64_t v;
	int rc = 0;

	for (i = 0; i < m->nd; i++) {
		if (k < m->d[i].n) {
			d = &m->d[i];
			break;
		}
		k -= m->d[i].n;
	}
	if (d == NULL || series < 0 || series >= KT_MEMORY_SERIES)
		return -1;
	s = &d->s[k];
	if (series == 0)
		v = s->alloc;
	else if (!d->has_resv || s->resv < 0 ||
	    (series == 2 && d->capacity <= 0))
		return 1;
	else
		v = series == 1 ? s->resv : sub_sat(d->capacity, s->resv);
	devname(d, dn, sizeof(dn));
	if (d->rank >= 0)
		snprintf(name, sizeof(name), "memory %s rank %lld %s", dn,
		    (long long)d->rank, series_names[series]);
	else
		snprintf(name, sizeof(name), "memory %s %s", dn,
		    series_names[series]);
	rc |= kt_buf_adds(b, "{\"ph\": \"C\", \"cat\": \"kt_memory\", "
	    "\"name\": \"");
	rc |= kt_json_escape(b, name, strlen(name));
	rc |= kt_buf_adds(b, "\", \"pid\": ");
	rc |= kt_buf_adds(b, d->pid);
	rc |= kt_buf_adds(b, ", \"tid\": 0, \"ts\": ");
	rc |= kt_buf_add(b, tb, kt_time_format(s->ts, 3, tb));
	rc |= kt_buf_adds(b, ", \"args\": {\"bytes\": ");
	rc |= kt_buf_add(b, ib, kt_int_format(v, ib));
	rc |= kt_buf_adds(b, "}}");
	return rc ? -1 : 0;
}

/* ---- SVG ---- */

struct svg_pts {
	struct kt_buf	*b;
	int64_t		 t0, t1, vmax;
	int		 x0, y0, w, h;
	int		 resv;		/* draw reserved, not allocated */
	int		 rc;
	int		 havep;		/* a point was drawn: step from it */
	double		 py;
};

/* Map a value to a pixel coordinate (doubles only for drawing). */
static double
xpos(const struct svg_pts *p, int64_t ts)
{
	double span = p->t1 > p->t0 ? (double)(p->t1 - p->t0) : 1.0;

	return p->x0 + (double)(ts - p->t0) / span * p->w;
}

static double
ypos(const struct svg_pts *p, int64_t v)
{
	double top = p->vmax > 0 ? (double)p->vmax : 1.0;

	return p->y0 + p->h - (double)v / top * p->h;
}

static int
bprintf(struct kt_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
bprintf(struct kt_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	return kt_buf_add(b, tmp, (size_t)n);
}

/*
 * Append " X,Y" as "%.1f" writes them: tenths rounded from x * 10, whose
 * error (below 1e-7 under 1e9) cannot change the rounding but within
 * 1e-6 of a tie, where printf writes them (and a sign, NaN, the large).
 */
static int
add_pt(struct kt_buf *b, double x, double y)
{
	double v[2] = { x, y };
	char tmp[64];
	size_t n = 0;
	int i;

	for (i = 0; i < 2; i++) {
		double t = v[i] * 10, f;
		long long r;

		if (!(t >= 0 && t < 1e9))
			return bprintf(b, " %.1f,%.1f", x, y);
		r = (long long)t;
		if ((f = t - (double)r) > 0.5 - 1e-6 && f < 0.5 + 1e-6)
			return bprintf(b, " %.1f,%.1f", x, y);
		r += f > 0.5;
		tmp[n++] = i == 0 ? ' ' : ',';
		n += kt_int_format(r / 10, tmp + n);
		tmp[n++] = '.';
		tmp[n++] = (char)('0' + r % 10);
	}
	return kt_buf_add(b, tmp, n);
}

static int
put_pt(void *arg, int64_t ts, int64_t a, int64_t r)
{
	struct svg_pts *p = arg;
	int64_t v = p->resv ? r : a;

	if (v < 0)
		return 0;
	/* A step curve: the value holds until the next sample. */
	if (p->havep)
		p->rc |= add_pt(p->b, xpos(p, ts), p->py);
	p->py = ypos(p, v);
	p->havep = 1;
	p->rc |= add_pt(p->b, xpos(p, ts), p->py);
	return p->rc ? -1 : 0;
}

/* Bytes as text with a binary unit ("12.3 GiB"), for labels only. */
static void
human(int64_t v, char *buf, size_t n)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;
	int64_t d = 1;

	while (i < 4 && v / d >= 1024) {
		d *= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%lld B", (long long)v);
	else {
		char r[64];

		kt_ratio_format(v, d, 2, r);
		snprintf(buf, n, "%.30s %s", r, u[i]);
	}
}

int
kt_memory_svg(const struct kt_memory *m, size_t points, const char *title,
    struct kt_buf *b)
{
	const int W = 900, PH = 260, ML = 90, MR = 20, MT = 40, GAP = 60;
	size_t i, nd = m->nd;
	int H = MT + (int)(nd ? nd : 1) * (PH + GAP);
	int rc = 0;

	rc |= bprintf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
	    "font-size=\"12\">\n", W, H, W, H);
	rc |= bprintf(b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
	    W, H);
	rc |= kt_buf_adds(b, "<text x=\"10\" y=\"22\" font-size=\"15\">");
	{
		struct kt_buf esc = { 0 };
		size_t k;

		/* Escape for XML: & < > and quotes. */
		for (k = 0; title != NULL && title[k] != '\0'; k++)
			switch (title[k]) {
			case '&': rc |= kt_buf_adds(&esc, "&amp;"); break;
			case '<': rc |= kt_buf_adds(&esc, "&lt;"); break;
			case '>': rc |= kt_buf_adds(&esc, "&gt;"); break;
			default:
				if ((unsigned char)title[k] >= 0x20)
					rc |= kt_buf_addc(&esc, title[k]);
			}
		rc |= kt_buf_adds(b, "memory over time");
		if (esc.n > 0) {
			rc |= kt_buf_adds(b, ": ");
			rc |= kt_buf_add(b, esc.p, esc.n);
		}
		kt_buf_free(&esc);
	}
	rc |= kt_buf_adds(b, "</text>\n");
	if (nd == 0)
		rc |= bprintf(b, "<text x=\"%d\" y=\"%d\">no memory events"
		    "</text>\n", ML, MT + PH / 2);
	for (i = 0; i < nd && rc == 0; i++) {
		const struct mdev *d = &m->d[i];
		struct svg_pts p;
		char name[64], lab[64], step[32], tb[40];
		int64_t pa = d->s[d->ipa].alloc, pr = d->s[d->ipr].resv;
		double x, y;

		memset(&p, 0, sizeof(p));
		p.b = b;
		p.t0 = d->s[0].ts;
		p.t1 = d->s[d->n - 1].ts;
		p.vmax = pa;
		if (d->has_resv && pr > p.vmax)
			p.vmax = pr;
		if (d->capacity > p.vmax)
			p.vmax = d->capacity;
		if (p.vmax <= 0)
			p.vmax = 1;
		p.x0 = ML;
		p.y0 = MT + (int)i * (PH + GAP) + 20;
		p.w = W - ML - MR;
		p.h = PH - 20;
		devname(d, name, sizeof(name));
		if (d->rank >= 0)
			rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" "
			    "font-weight=\"bold\">rank %lld %s</text>\n", ML,
			    p.y0 - 8, (long long)d->rank, name);
		else
			rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" "
			    "font-weight=\"bold\">%s</text>\n", ML, p.y0 - 8,
			    name);
		/* The frame and the y axis labels (0 and the top). */
		rc |= bprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
		    "height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n", p.x0,
		    p.y0, p.w, p.h);
		human(p.vmax, lab, sizeof(lab));
		rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		    "%s</text>\n", ML - 6, p.y0 + 4, lab);
		rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		    "0</text>\n", ML - 6, p.y0 + p.h + 4);
		kt_time_format(p.t1 - p.t0, 0, tb);
		rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		    "+%s us</text>\n", p.x0 + p.w, p.y0 + p.h + 16, tb);
		if (d->capacity > 0) {
			y = ypos(&p, d->capacity);
			human(d->capacity, lab, sizeof(lab));
			rc |= bprintf(b, "<line x1=\"%d\" y1=\"%.1f\" "
			    "x2=\"%d\" y2=\"%.1f\" stroke=\"#c00\" "
			    "stroke-dasharray=\"6,4\"/>\n", p.x0, y,
			    p.x0 + p.w, y);
			rc |= bprintf(b, "<text x=\"%d\" y=\"%.1f\" "
			    "fill=\"#c00\" text-anchor=\"end\">capacity %s"
			    "</text>\n", p.x0 + p.w - 4, y + 14, lab);
		}
		if (d->has_resv) {
			p.resv = 1;
			p.havep = 0;
			rc |= kt_buf_adds(b, "<polyline fill=\"none\" "
			    "stroke=\"#e69f00\" stroke-width=\"1.5\" "
			    "points=\"");
			rc |= series(d, points, put_pt, &p) | p.rc;
			rc |= kt_buf_adds(b, "\"/>\n");
		}
		p.resv = 0;
		p.havep = 0;
		rc |= kt_buf_adds(b, "<polyline fill=\"none\" stroke=\"#0072b2\" "
		    "stroke-width=\"1.5\" points=\"");
		rc |= series(d, points, put_pt, &p) | p.rc;
		rc |= kt_buf_adds(b, "\"/>\n");
		/* The peak of allocated. */
		x = xpos(&p, d->s[d->ipa].ts);
		y = ypos(&p, pa);
		human(pa, lab, sizeof(lab));
		rc |= bprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
		    "fill=\"#0072b2\"/>\n", x, y);
		rc |= bprintf(b, "<text x=\"%.1f\" y=\"%.1f\" "
		    "text-anchor=\"%s\">peak allocated %s (step %s)</text>\n",
		    x, y - 8 < p.y0 + 12 ? p.y0 + 12.0 : y - 8,
		    x > p.x0 + p.w / 2 ? "end" : "start", lab,
		    step_at(m, d->rank, d->s[d->ipa].ts, step, sizeof(step)));
		/* The legend. */
		rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" fill=\"#0072b2\">"
		    "allocated%s</text>\n", p.x0 + p.w - 260, p.y0 - 8,
		    d->summed ? " (sum of Bytes)" : "");
		if (d->has_resv)
			rc |= bprintf(b, "<text x=\"%d\" y=\"%d\" "
			    "fill=\"#e69f00\">reserved</text>\n",
			    p.x0 + p.w - 80, p.y0 - 8);
	}
	rc |= kt_buf_adds(b, "</svg>\n");
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/*
 * Merging per-rank kt-memory tables (lib/model/merge.c): a row is one
 * device of one rank, and a device's peaks need its whole series, so a
 * (rank, device) in two inputs is an error and rows pass through, in
 * rank order (an input's own order within a rank).  The "no memory
 * events" row stays only when no input has a device.
 */
static const struct kt_merge_col merge_cols[] = {
	{ "rank", KT_MERGE_KEY, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "device", KT_MERGE_KEY, 0, 1, NULL, NULL, 0, NULL, NULL },
	{ "events", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "allocated_from", KT_MERGE_FIRST, 0, 1, NULL, NULL, 0, NULL, NULL },
	{ "peak_allocated", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "peak_allocated_ns", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL,
	  NULL },
	{ "peak_allocated_step", KT_MERGE_FIRST, 0, 1, NULL, NULL, 0, NULL,
	  NULL },
	{ "peak_reserved", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "peak_reserved_ns", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL,
	  NULL },
	{ "peak_reserved_step", KT_MERGE_FIRST, 0, 1, NULL, NULL, 0, NULL,
	  NULL },
	{ "final_allocated", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "capacity", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "capacity_from", KT_MERGE_FIRST, 0, 1, NULL, NULL, 0, NULL, NULL },
	{ "headroom", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL }
};
#define NMERGECOLS	(sizeof(merge_cols) / sizeof(merge_cols[0]))

static int
merge_cmp(const struct kt_merge_row *x, const struct kt_merge_row *y,
    const struct kt_merge_spec *sp, const void *ctx)
{
	(void)sp;
	(void)ctx;
	return kt_merge_cmp_cells(x->cell[0], y->cell[0]);
}

static const struct kt_merge_spec merge_spec = {
	"kt-memory", merge_cols, NMERGECOLS, "rank", NULL, NULL, 1,
	NULL, merge_cmp, NULL, "device", "no memory events"
};

struct kt_table *
kt_memory_merge(char *const *paths, size_t npaths, struct kt_error *err)
{
	return kt_merge_tables(&merge_spec, paths, npaths, 0, err);
}
