/*
 * decompose.c: the runtime decomposition of kt-decompose and kt views,
 * over the analysis model (model.c) and the bucket classes (gpu.c).
 *
 * For each GPU device, time is cut into windows: the startup (from the
 * rank's first event to the first step window), one window per step
 * (kt_step_windows, kt(7) Step windows; partial ones apart), and the
 * trailing part (after the last step window, to the rank's last
 * event).  In each window:
 *   wall = its length; busy = the length of the union of the device's
 *   GPU activities (every stream) inside it; idle = wall - busy;
 *   compute, communication, transfer = the length of the union of the
 *   activities of that class inside it; communication hidden = the
 *   length of (communication union) intersected with (compute union),
 *   exposed = communication - hidden.
 * All in integer ns.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "kt.h"

/* A window of one device. */
struct kt_dwin {
	int64_t		 rank;
	uint32_t	 dev;
	int		 phase;		/* KT_PHASE_* */
	int64_t		 step;		/* step number, or -1 */
	int64_t		 start, end;
	int64_t		 busy, compute, comm, hidden, transfer;
	uint32_t	 nact;		/* activities starting in it */
};

enum { PH_STARTUP, PH_STEP, PH_PARTIAL, PH_TRAILING, PH_ALL };
static const char *const phname[] = {
	"startup", "step", "partial", "trailing", "all"
};

struct kt_decompose {
	const struct kt_model	*m;
	struct kt_dwin		*w;
	size_t			 nw, capw;
};

/* The unions of one device: all, per class, and comm with compute. */
struct unions {
	struct kt_iv	*all, *cls[3], *both;
	size_t		 nall, ncls[3], nboth;
};

static void
unions_free(struct unions *u)
{
	int c;

	free(u->all);
	free(u->both);
	for (c = 0; c < 3; c++)
		free(u->cls[c]);
	memset(u, 0, sizeof(*u));
}

/* Intersect two unions into a new array in *out; returns the count. */
static int
iv_intersect(const struct kt_iv *a, size_t na, const struct kt_iv *b,
    size_t nb, struct kt_iv **out, size_t *nout)
{
	size_t i = 0, j = 0, k = 0;
	struct kt_iv *v;

	if ((v = malloc((na + nb + 1) * sizeof(*v))) == NULL)
		return -1;
	while (i < na && j < nb) {
		int64_t s = a[i].start > b[j].start ? a[i].start : b[j].start;
		int64_t e = a[i].end < b[j].end ? a[i].end : b[j].end;

		if (e > s) {
			v[k].start = s;
			v[k++].end = e;
		}
		if (a[i].end < b[j].end)
			i++;
		else
			j++;
	}
	*out = v;
	*nout = k;
	return 0;
}

/* The unions of device d's activities (classes from bucket ids). */
static int
unions_make(const struct kt_model *m, const struct kt_device *d,
    const struct kt_rules *rs, const uint32_t *bucket, struct unions *u)
{
	size_t i;
	int c;

	memset(u, 0, sizeof(*u));
	if ((u->all = malloc((d->nact + 1) * sizeof(*u->all))) == NULL)
		return -1;
	for (c = 0; c < 3; c++)
		if ((u->cls[c] = malloc((d->nact + 1) * sizeof(struct kt_iv)))
		    == NULL) {
			unions_free(u);
			return -1;
		}
	/*
	 * A device's activities are in order of start: each joins the
	 * unions as it comes (only what they hold is written; the arrays'
	 * pages past it are never touched).
	 */
	for (i = d->first; i < (size_t)d->first + d->nact; i++) {
		const struct kt_act *a = &m->act[i];

		c = (int)kt_rules_class(rs, bucket[i]);
		if (c < 0 || c > 2)
			c = 0;
		kt_iv_add(u->all, &u->nall, a->ts, a->ts + a->dur);
		kt_iv_add(u->cls[c], &u->ncls[c], a->ts, a->ts + a->dur);
	}
	if (iv_intersect(u->cls[KT_CLASS_COMM], u->ncls[KT_CLASS_COMM],
	    u->cls[KT_CLASS_COMPUTE], u->ncls[KT_CLASS_COMPUTE], &u->both,
	    &u->nboth) == -1) {
		unions_free(u);
		return -1;
	}
	return 0;
}

/* The index of d's first activity that starts at or after t. */
static size_t
first_at(const struct kt_model *m, const struct kt_device *d, int64_t t)
{
	size_t lo = d->first, hi = (size_t)d->first + d->nact;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->act[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
add_win(struct kt_decompose *dc, const struct unions *u, int64_t rank,
    uint32_t dev, int phase, int64_t step, int64_t start, int64_t end)
{
	struct kt_dwin *w;
	const struct kt_device *d = &dc->m->devices[dev];

	if (end < start)
		end = start;
	if (dc->nw == dc->capw) {
		size_t c = dc->capw ? 2 * dc->capw : 64;

		if ((w = realloc(dc->w, c * sizeof(*w))) == NULL)
			return -1;
		dc->w = w;
		dc->capw = c;
	}
	w = &dc->w[dc->nw++];
	memset(w, 0, sizeof(*w));
	w->rank = rank;
	w->dev = dev;
	w->phase = phase;
	w->step = step;
	w->start = start;
	w->end = end;
	w->busy = kt_iv_clip_length(u->all, u->nall, start, end);
	w->compute = kt_iv_clip_length(u->cls[KT_CLASS_COMPUTE],
	    u->ncls[KT_CLASS_COMPUTE], start, end);
	w->comm = kt_iv_clip_length(u->cls[KT_CLASS_COMM],
	    u->ncls[KT_CLASS_COMM], start, end);
	w->transfer = kt_iv_clip_length(u->cls[KT_CLASS_TRANSFER],
	    u->ncls[KT_CLASS_TRANSFER], start, end);
	w->hidden = kt_iv_clip_length(u->both, u->nboth, start, end);
	w->nact = (uint32_t)(first_at(dc->m, d, end) - first_at(dc->m, d,
	    start));
	return 0;
}

/* The rank's first and last event times (spans and all its devices). */
static void
rank_range(const struct kt_model *m, int64_t rank, int64_t *t0, int64_t *t1)
{
	size_t i;

	*t0 = INT64_MAX;
	*t1 = INT64_MIN;
	for (i = 0; i < m->nthreads; i++) {
		const struct kt_thread *th = &m->threads[i];

		/* A thread's spans are in ts order, its end kept. */
		if (th->rank != rank || th->nspans == 0)
			continue;
		if (m->spans[th->first].ts < *t0)
			*t0 = m->spans[th->first].ts;
		if (th->end > *t1)
			*t1 = th->end;
	}
	for (i = 0; i < m->ndevices; i++) {
		const struct kt_device *d = &m->devices[i];

		if (d->rank != rank || d->nact == 0)
			continue;
		if (m->act[d->first].ts < *t0)
			*t0 = m->act[d->first].ts;
		if (d->end > *t1)
			*t1 = d->end;
	}
}

/* The windows of device dev: startup, the step windows, trailing. */
static int
device_windows(struct kt_decompose *dc, uint32_t dev,
    const struct kt_rules *rs, const uint32_t *bucket)
{
	const struct kt_model *m = dc->m;
	const struct kt_device *d = &m->devices[dev];
	struct kt_stepwin *sw;
	struct unions u;
	int64_t t0, t1, range;
	size_t i, nsw;
	int rc = 0;

	if (unions_make(m, d, rs, bucket, &u) == -1)
		return -1;
	rank_range(m, d->rank, &t0, &t1);
	/* A range no real trace has (bad input) would overflow the sums. */
	if (t0 < t1 && (__builtin_sub_overflow(t1, t0, &range) ||
	    range > INT64_MAX / 4)) {
		unions_free(&u);
		return 0;
	}
	if (kt_step_windows(m, dev, &sw, &nsw) == -1) {
		unions_free(&u);
		return -1;
	}
	if (nsw == 0) {
		if (t0 < t1)
			rc |= add_win(dc, &u, d->rank, dev, PH_ALL, -1, t0, t1);
	} else {
		if (t0 < sw[0].start)
			rc |= add_win(dc, &u, d->rank, dev, PH_STARTUP, -1, t0,
			    sw[0].start);
		for (i = 0; i < nsw && rc == 0; i++)
			rc |= add_win(dc, &u, d->rank, dev, sw[i].partial ?
			    PH_PARTIAL : PH_STEP, m->steps[sw[i].step].number,
			    sw[i].start, sw[i].end);
		if (t1 > sw[nsw - 1].end && rc == 0)
			rc |= add_win(dc, &u, d->rank, dev, PH_TRAILING, -1,
			    sw[nsw - 1].end, t1);
	}
	free(sw);
	unions_free(&u);
	return rc;
}

struct kt_decompose *
kt_decompose_new(const struct kt_model *m, const struct kt_rules *rs,
    struct kt_error *err)
{
	return kt_decompose_new_with(m, rs, NULL, err);
}

struct kt_decompose *
kt_decompose_new_with(const struct kt_model *m, const struct kt_rules *rs,
    const uint32_t *classes, struct kt_error *err)
{
	struct kt_decompose *dc;
	uint32_t *own = NULL;
	const uint32_t *bucket = classes;
	size_t i;

	if ((dc = calloc(1, sizeof(*dc))) == NULL || (bucket == NULL &&
	    (bucket = own = kt_rules_classify(rs, m)) == NULL)) {
		free(dc);
		kt_error_set(err, "", 0, 0, "out of memory");
		return NULL;
	}
	dc->m = m;
	for (i = 0; i < m->ndevices; i++)
		if (device_windows(dc, (uint32_t)i, rs, bucket) == -1) {
			free(own);
			kt_decompose_free(dc);
			kt_error_set(err, "", 0, 0, "out of memory");
			return NULL;
		}
	free(own);
	return dc;
}

void
kt_decompose_free(struct kt_decompose *dc)
{
	if (dc == NULL)
		return;
	free(dc->w);
	free(dc);
}

/* The sums of the common columns. */
struct sums {
	int64_t	 wall, busy, compute, comm, hidden, transfer;
	uint32_t nact;
};

static void
sums_add(struct sums *s, const struct kt_dwin *w)
{
	s->wall += w->end - w->start;
	s->busy += w->busy;
	s->compute += w->compute;
	s->comm += w->comm;
	s->hidden += w->hidden;
	s->transfer += w->transfer;
	s->nact += w->nact;
}

static void
sums_cells(struct kt_table *t, const struct sums *s, int *rc)
{
	*rc |= kt_table_int(t, s->wall);
	*rc |= kt_table_int(t, s->busy);
	*rc |= kt_table_int(t, s->wall - s->busy);
	*rc |= kt_table_int(t, s->compute);
	*rc |= kt_table_int(t, s->comm);
	*rc |= kt_table_int(t, s->comm - s->hidden);
	*rc |= kt_table_int(t, s->hidden);
	*rc |= kt_table_int(t, s->transfer);
	*rc |= kt_table_pct(t, s->busy, s->wall);
	*rc |= kt_table_pct(t, s->comm - s->hidden, s->wall);
}

#define COMMON_COLS \
	"wall_ns:n", "busy_ns:n", "idle_ns:n", "compute_ns:n", "comm_ns:n", \
	"comm_exposed_ns:n", "comm_hidden_ns:n", "transfer_ns:n", \
	"busy_pct:n", "comm_exposed_pct:n"

/* The columns of the table, of --series and of --ranks. */
static const char *const tcols[] = {
	"rank:n", "device", "phase", "steps:n", COMMON_COLS,
	"step_mean_ns:n", "step_min_ns:n", "step_max_ns:n",
	"step_spread:n", "slowest_step"
};
#define NTCOLS	(sizeof(tcols) / sizeof(tcols[0]))
static const char *const scols[] = {
	"rank:n", "device", "phase", "step", "start_ns:n", "end_ns:n",
	COMMON_COLS, "activities:n"
};
#define NSCOLS	(sizeof(scols) / sizeof(scols[0]))
static const char *const rcols[] = {
	"step:n", "ranks:n", "longest_wall_rank:n",
	"longest_wall_ns:n", "median_wall_ns:n", "shortest_wall_ns:n",
	"wall_gap_ns:n", "collectives:n", "straggler_rank:n",
	"straggler_late_ns:n", "waiting_ranks:n",
	"longest_wait_rank:n", "longest_wait_ns:n",
	"longest_compute_rank:n", "longest_compute_ns:n"
};
#define NRCOLS	(sizeof(rcols) / sizeof(rcols[0]))

struct kt_table *
kt_decompose_table(const struct kt_decompose *dc)
{
	const char *const *cols = tcols;
	const size_t ncols = NTCOLS;
	struct kt_table *t;
	size_t i, j, k;
	int rc = 0, p;

	if ((t = kt_table_new(cols, ncols)) == NULL)
		return NULL;
	if (dc->nw == 0) {
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "no device activity");
		for (k = 2; k < ncols; k++)
			rc |= kt_table_cell(t, "-");
	}
	for (i = 0; i < dc->nw && rc == 0; i = j) {
		for (j = i; j < dc->nw && dc->w[j].dev == dc->w[i].dev; j++)
			;
		for (p = PH_STARTUP; p <= PH_ALL; p++) {
			struct sums s;
			int64_t mn = INT64_MAX, mx = INT64_MIN, slow = -1;
			uint32_t n = 0;

			memset(&s, 0, sizeof(s));
			for (k = i; k < j; k++) {
				const struct kt_dwin *w = &dc->w[k];
				int64_t wl = w->end - w->start;

				if (w->phase != p)
					continue;
				sums_add(&s, w);
				n++;
				if (wl < mn)
					mn = wl;
				if (wl > mx) {
					mx = wl;
					slow = w->step;
				}
			}
			if (n == 0)
				continue;
			rc |= kt_model_device_cells(t, dc->m, dc->w[i].dev);
			rc |= kt_table_cell(t, p == PH_STEP ? "steady" :
			    phname[p]);
			rc |= kt_table_int(t, p == PH_STEP || p == PH_PARTIAL ?
			    (int64_t)n : 0);
			sums_cells(t, &s, &rc);
			if (p == PH_STEP) {
				rc |= kt_table_ratio(t, s.wall, n, 0);
				rc |= kt_table_int(t, mn);
				rc |= kt_table_int(t, mx);
				rc |= kt_table_ratio(t, mx, mn, 2);
				rc |= kt_table_int(t, slow);
			} else
				for (k = 0; k < 5; k++)
					rc |= kt_table_cell(t, "-");
		}
	}
	if (rc != 0) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

struct kt_table *
kt_decompose_series(const struct kt_decompose *dc)
{
	struct kt_table *t;
	size_t i;
	int rc = 0;

	if ((t = kt_table_new(scols, NSCOLS)) == NULL)
		return NULL;
	for (i = 0; i < dc->nw && rc == 0; i++) {
		const struct kt_dwin *w = &dc->w[i];
		struct sums s;

		memset(&s, 0, sizeof(s));
		sums_add(&s, w);
		rc |= kt_model_device_cells(t, dc->m, w->dev);
		rc |= kt_table_cell(t, phname[w->phase]);
		if (w->step >= 0 && (w->phase == PH_STEP ||
		    w->phase == PH_PARTIAL))
			rc |= kt_table_int(t, w->step);
		else
			rc |= kt_table_cell(t, "-");
		rc |= kt_table_int(t, w->start);
		rc |= kt_table_int(t, w->end);
		sums_cells(t, &s, &rc);
		rc |= kt_table_int(t, w->nact);
	}
	if (rc != 0) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

/* A (step, rank, wall) of a steady step, for the table across ranks. */
struct srw {
	int64_t	 step, rank, wall;
	int64_t	 late, wait;	/* summed over the step's joined collectives */
	int64_t	 comp;		/* their compute_before_ns, summed */
	int64_t	 ncoll;
};

static int
cmp_srw(const void *a, const void *b)
{
	const struct srw *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->wall != y->wall)
		return x->wall < y->wall ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int
cmp_step_rank(const void *a, const void *b)
{
	const struct srw *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* A joined collective's kernel: (join, rank, start, step number). */
struct jrow {
	int64_t	 grp, rank, ts, step;
	int64_t	 before;	/* compute_before_ns, or -1 */
};

static int
cmp_jrow(const void *a, const void *b)
{
	const struct jrow *x = a, *y = b;

	if (x->grp != y->grp)
		return x->grp < y->grp ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/*
 * Add each join of j (nj of them, sorted here) to the (step, rank)
 * entries of v (sorted by step and rank): lateness = the rank's first
 * start minus the earliest rank's, wait = the last rank's start minus
 * the rank's.  The step of a join is that of its earliest kernel.
 */
static void
add_jrows(struct jrow *j, size_t nj, struct srw *v, size_t n)
{
	size_t i, k, q;

	qsort(j, nj, sizeof(*j), cmp_jrow);
	for (i = 0; i < nj; i = k) {
		int64_t lo = INT64_MAX, hi = INT64_MIN, step = -1;

		for (k = i; k < nj && j[k].grp == j[i].grp; k++) {
			if (k > i && j[k].rank == j[k - 1].rank)
				continue;	/* a rank's first kernel */
			if (j[k].ts < lo) {
				lo = j[k].ts;
				step = j[k].step;
			}
			if (j[k].ts > hi)
				hi = j[k].ts;
		}
		if (step < 0)
			continue;
		for (q = i; q < k; q++) {
			struct srw key, *e;

			if (q > i && j[q].rank == j[q - 1].rank)
				continue;
			key.step = step;
			key.rank = j[q].rank;
			if ((e = bsearch(&key, v, n, sizeof(*v),
			    cmp_step_rank)) == NULL)
				continue;
			e->late += j[q].ts - lo;
			e->wait += hi - j[q].ts;
			if (j[q].before > 0)
				e->comp += j[q].before;
			e->ncoll++;
		}
	}
}

/* Add each join of ov to v, as add_jrows.  0 or -1 (memory). */
static int
add_joins(const struct kt_model *m, const struct kt_overlap *ov,
    struct srw *v, size_t n)
{
	struct jrow *j;
	size_t i, nj = 0, nr = kt_overlap_count(ov);

	if ((j = kt_zalloc(nr + 1, sizeof(*j))) == NULL)
		return -1;
	for (i = 0; i < nr; i++) {
		uint32_t act;
		int64_t g = kt_overlap_join(ov, i, &act);
		const struct kt_act *a = &m->act[act];

		if (g < 0)
			continue;
		j[nj].grp = g;
		j[nj].rank = m->devices[a->dev].rank;
		j[nj].ts = a->ts;
		j[nj].before = kt_overlap_before(ov, i);
		j[nj++].step = a->step != KT_NO ? m->steps[a->step].number :
		    -1;
	}
	add_jrows(j, nj, v, n);
	free(j);
	return 0;
}

static struct kt_table *ranks_table(struct srw *, size_t, int);

struct kt_table *
kt_decompose_ranks(const struct kt_decompose *dc, const struct kt_overlap *ov)
{
	struct kt_table *t;
	struct srw *v;
	size_t i, j, n = 0;

	if ((v = kt_zalloc(dc->nw + 1, sizeof(*v))) == NULL)
		return NULL;
	/* One wall per (rank, step): a rank's first device. */
	for (i = 0; i < dc->nw; i++) {
		const struct kt_dwin *w = &dc->w[i];

		if (w->phase != PH_STEP || w->step < 0)
			continue;
		for (j = 0; j < n; j++)
			if (v[j].rank == w->rank && v[j].step == w->step)
				break;
		if (j < n)
			continue;
		v[n].step = w->step;
		v[n].rank = w->rank;
		v[n++].wall = w->end - w->start;
	}
	qsort(v, n, sizeof(*v), cmp_step_rank);
	if (ov != NULL && add_joins(dc->m, ov, v, n) == -1) {
		free(v);
		return NULL;
	}
	t = ranks_table(v, n, ov != NULL);
	free(v);
	return t;
}

/* The --ranks table of the (step, rank) walls and joins of v. */
static struct kt_table *
ranks_table(struct srw *v, size_t n, int joined)
{
	struct kt_table *t;
	size_t i, j, k;
	int rc = 0;

	if ((t = kt_table_new(rcols, NRCOLS)) == NULL)
		return NULL;
	qsort(v, n, sizeof(*v), cmp_srw);
	for (i = 0; i < n && rc == 0; i = j) {
		size_t c, sl = 0, wt = 0, lc = 0;
		int64_t nc = 0, nwait = 0;

		for (j = i; j < n && v[j].step == v[i].step; j++)
			;
		c = j - i;
		rc |= kt_table_int(t, v[i].step);
		rc |= kt_table_int(t, (int64_t)c);
		rc |= kt_table_int(t, v[j - 1].rank);
		rc |= kt_table_int(t, v[j - 1].wall);
		/* The median: the lower middle of the sorted walls. */
		rc |= kt_table_int(t, v[i + (c - 1) / 2].wall);
		rc |= kt_table_int(t, v[i].wall);
		rc |= kt_table_int(t, v[j - 1].wall - v[i + (c - 1) / 2].wall);
		/* The latest and the longest waiting: ties to the lower rank. */
		for (k = i; k < j; k++) {
			if (v[k].ncoll > nc)
				nc = v[k].ncoll;
			if (sl == 0 || v[k].late > v[sl - 1].late ||
			    (v[k].late == v[sl - 1].late &&
			    v[k].rank < v[sl - 1].rank))
				sl = k + 1;
			if (wt == 0 || v[k].wait > v[wt - 1].wait ||
			    (v[k].wait == v[wt - 1].wait &&
			    v[k].rank < v[wt - 1].rank))
				wt = k + 1;
			if (lc == 0 || v[k].comp > v[lc - 1].comp ||
			    (v[k].comp == v[lc - 1].comp &&
			    v[k].rank < v[lc - 1].rank))
				lc = k + 1;
		}
		for (k = i; k < j; k++)
			if (k + 1 != sl && v[k].wait > 0)
				nwait++;
		rc |= joined ? kt_table_int(t, nc) : kt_table_cell(t, "-");
		if (nc == 0 || v[sl - 1].late == 0) {
			for (k = 0; k < 5; k++)
				rc |= kt_table_cell(t, "-");
		} else {
			rc |= kt_table_int(t, v[sl - 1].rank);
			rc |= kt_table_int(t, v[sl - 1].late);
			rc |= kt_table_int(t, nwait);
			rc |= kt_table_int(t, v[wt - 1].rank);
			rc |= kt_table_int(t, v[wt - 1].wait);
		}
		if (nc == 0) {
			rc |= kt_table_cell(t, "-");
			rc |= kt_table_cell(t, "-");
		} else {
			rc |= kt_table_int(t, v[lc - 1].rank);
			rc |= kt_table_int(t, v[lc - 1].comp);
		}
	}
	if (rc != 0) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

/* ------------------------------------------------------------------ */
/* The merges of per-rank tables. */

struct kt_table *
kt_decompose_merge(char *const *paths, size_t npaths, struct kt_error *err)
{
	return kt_ranks_concat(paths, npaths, tcols, NTCOLS, "kt-decompose",
	    err);
}

struct kt_table *
kt_decompose_series_merge(char *const *paths, size_t npaths,
    struct kt_error *err)
{
	return kt_ranks_concat(paths, npaths, scols, NSCOLS,
	    "kt-decompose --series", err);
}

/* A step row of a series table: its (step, rank), device, place. */
struct sref {
	struct srw	 w;
	const char	*rank, *dev;
	size_t		 pos;
};

static int
cmp_sref(const void *a, const void *b)
{
	const struct sref *x = a, *y = b;
	int c;

	if (x->w.step != y->w.step)
		return x->w.step < y->w.step ? -1 : 1;
	if ((c = kt_ranks_cmp_device(x->rank, x->dev, y->rank, y->dev)) != 0)
		return c;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

struct kt_table *
kt_decompose_ranks_merge(char *const *paths, size_t npaths,
    struct kt_error *err)
{
	struct kt_table **in, **ovt = NULL, *t = NULL;
	struct kt_join_row *jr = NULL;
	struct jrow *j = NULL;
	struct sref *s = NULL;
	struct srw *v = NULL;
	char **ovn = NULL;
	size_t i, k, n = 0, nv = 0, nov = 0, nj = 0, tot = 0;

	if ((in = calloc(npaths + 1, sizeof(*in))) == NULL ||
	    (ovt = calloc(npaths + 1, sizeof(*ovt))) == NULL ||
	    (ovn = calloc(npaths + 1, sizeof(*ovn))) == NULL)
		goto nomem;
	for (i = 0; i < npaths; i++) {
		const char *name = strcmp(paths[i], "-") == 0 ? "<stdin>" :
		    paths[i];

		if ((in[i] = kt_table_load(paths[i], err)) == NULL)
			goto fail;
		if (kt_overlap_is_table(in[i])) {
			ovn[nov] = paths[i];
			ovt[nov++] = in[i];
			continue;
		}
		if (!kt_ranks_header(in[i], scols, NSCOLS)) {
			kt_error_set(err, name, 1, 1, "not a kt-decompose "
			    "--series or kt-overlap table (TSV with its "
			    "header)");
			goto fail;
		}
		tot += kt_table_rows(in[i]);
	}
	if ((s = kt_zalloc(tot + 1, sizeof(*s))) == NULL ||
	    (v = kt_zalloc(tot + 1, sizeof(*v))) == NULL)
		goto nomem;
	/* The steady step windows: one wall per (rank, step). */
	for (i = 0; i < npaths; i++) {
		if (kt_overlap_is_table(in[i]))
			continue;
		for (k = 0; k < kt_table_rows(in[i]); k++) {
			struct sref *e = &s[n];
			int64_t st, wall, rk;
			int kr;

			if (strcmp(kt_table_get(in[i], k, 2), "step") != 0 ||
			    kt_ranks_int(kt_table_get(in[i], k, 3), &st) != 0 ||
			    st < 0)
				continue;
			if ((kr = kt_ranks_int(kt_table_get(in[i], k, 0), &rk))
			    == -1 || kt_ranks_int(kt_table_get(in[i], k, 6),
			    &wall) != 0) {
				kt_error_set(err, strcmp(paths[i], "-") == 0 ?
				    "<stdin>" : paths[i], (long)k + 2, 1,
				    "rank or wall_ns is not a whole number");
				goto fail;
			}
			memset(e, 0, sizeof(*e));
			e->w.step = st;
			e->w.rank = kr == 1 ? -1 : rk;
			e->w.wall = wall;
			e->rank = kt_table_get(in[i], k, 0);
			e->dev = kt_table_get(in[i], k, 1);
			e->pos = n++;
		}
	}
	kt_qsort(s, n, sizeof(*s), cmp_sref);
	for (i = 0; i < n; i++)
		if (nv == 0 || v[nv - 1].step != s[i].w.step ||
		    v[nv - 1].rank != s[i].w.rank)
			v[nv++] = s[i].w;
	qsort(v, nv, sizeof(*v), cmp_step_rank);
	if (nov > 0) {
		size_t nr;

		if (kt_overlap_tables_join(ovt, nov, ovn, &jr, &nr, err) == -1)
			goto fail;
		if ((j = kt_zalloc(nr + 1, sizeof(*j))) == NULL)
			goto nomem;
		for (i = 0; i < nr; i++)
			if (jr[i].grp >= 0) {
				j[nj].grp = jr[i].grp;
				j[nj].rank = jr[i].rank;
				j[nj].ts = jr[i].ts;
				j[nj].before = jr[i].before;
				j[nj++].step = jr[i].step;
			}
		add_jrows(j, nj, v, nv);
	}
	if ((t = ranks_table(v, nv, nov > 0)) == NULL)
		goto nomem;
	goto done;
nomem:
	kt_error_set(err, "", 0, 0, "out of memory");
fail:
	kt_table_free(t);
	t = NULL;
done:
	if (in != NULL)
		for (i = 0; i < npaths; i++)
			kt_table_free(in[i]);
	free(in);
	free(ovt);
	free(ovn);
	free(jr);
	free(j);
	free(s);
	free(v);
	return t;
}
