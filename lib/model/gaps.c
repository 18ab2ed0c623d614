/*
 * gaps.c: lost GPU time, ranked (kt-gaps, kt views).  Per device, the
 * union of every stream's activities is busy time; inside each step's
 * window an idle gap of at least min_gap is a row, and so is a run of
 * tiny kernels (launch-bound stretches).  Each row names the kernels
 * around it and what the launching CPU thread was doing meanwhile.
 *
 * The window of a step on a device runs from the end of the previous
 * step's window (for the first step: its first GPU activity) to the
 * last end of its own activities, so windows tile the device's time
 * and a stall before a step's first kernel (a data loader) belongs to
 * that step.  Without steps the window is the device's first activity
 * to its last.
 */
#include <stdlib.h>
#include <string.h>

#include "kt.h"

enum { R_GAP, R_RUN, R_STEP, R_TOTAL };

static const char *const kind_names[] = { "gap", "tiny-run", "step",
	"total" };

/* A window: one step on one device. */
struct win {
	int64_t	 start, end, idle;
	int64_t	 ref;		/* the origin of offsets: the step's start */
	uint32_t step;		/* into m->steps, or KT_NO */
	int	 partial;
	int64_t	 nact;		/* activities starting in it */
};

/* A row before it is written. */
struct row {
	int64_t	 start, dur, busy, cost, wstart, wall;
	uint32_t dev, step, before, after, first;
	int64_t	 kernels;
	int	 kind;
	int	 partial;	/* a step row of a partial step */
};

struct rows {
	struct row	*r;
	size_t		 n, cap;
};

static struct row *
row_add(struct rows *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		struct row *p = realloc(v->r, cap * sizeof(*p));

		if (p == NULL)
			return NULL;
		v->r = p;
		v->cap = cap;
	}
	memset(&v->r[v->n], 0, sizeof(v->r[0]));
	return &v->r[v->n++];
}

/*
 * The windows of device d: the step windows (kt_step_windows), else
 * the device's first activity to its last end; a new array in *out and
 * its count, or -1 when out of memory.
 */
static int
windows(const struct kt_model *m, const struct kt_device *d, uint32_t dev,
    struct win **out, size_t *nout)
{
	struct kt_stepwin *sw;
	struct win *w;
	size_t i, n;

	*out = NULL;
	*nout = 0;
	if (d->nact == 0)
		return 0;
	if (kt_step_windows(m, dev, &sw, &n) == -1)
		return -1;
	if (n == 0) {
		/* No steps: the whole span of the device. */
		if ((w = calloc(1, sizeof(*w))) == NULL)
			return -1;
		w->start = m->act[d->first].ts;
		w->end = w->start;
		for (i = d->first; i < (size_t)d->first + d->nact; i++)
			if (m->act[i].ts + m->act[i].dur > w->end)
				w->end = m->act[i].ts + m->act[i].dur;
		w->ref = w->start;
		w->step = KT_NO;
		*out = w;
		*nout = 1;
		return 0;
	}
	if ((w = kt_zalloc(n, sizeof(*w))) == NULL) {
		free(sw);
		return -1;
	}
	for (i = 0; i < n; i++) {
		w[i].start = sw[i].start;
		w[i].end = sw[i].end;
		w[i].ref = sw[i].ref;
		w[i].step = sw[i].step;
		w[i].partial = sw[i].partial;
	}
	free(sw);
	*out = w;
	*nout = n;
	return 0;
}

/* The window containing t (the last starting at or before it). */
static size_t
win_at(const struct win *w, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? 0 : lo - 1;
}

/* Add the idle time [a, b) between acts before and after, split by
 * windows; rows for the pieces of at least min_gap. */
static int
idle(const struct kt_gaps_opts *o, struct win *w, size_t nw, uint32_t dev,
    int64_t a, int64_t b, uint32_t before, uint32_t after, struct rows *rv)
{
	size_t k;

	if (a < w[0].start)
		a = w[0].start;
	if (b > w[nw - 1].end)
		b = w[nw - 1].end;
	if (b <= a)
		return 0;
	for (k = win_at(w, nw, a); k < nw && w[k].start < b; k++) {
		int64_t s = a > w[k].start ? a : w[k].start;
		int64_t e = b < w[k].end ? b : w[k].end;
		struct row *r;

		if (e <= s)
			continue;
		w[k].idle += e - s;
		if (e - s < o->min_gap)
			continue;
		if ((r = row_add(rv)) == NULL)
			return -1;
		r->kind = R_GAP;
		r->start = s;
		r->dur = e - s;
		r->cost = e - s;
		r->wstart = w[k].ref;
		r->wall = w[k].end - w[k].start;
		r->dev = dev;
		r->step = w[k].step;
		r->before = before;
		r->after = after;
		r->first = after;
		r->kernels = -1;
	}
	return 0;
}

/* Close the tiny run acts[first..last] if it is long enough. */
static int
run_close(const struct kt_model *m, const struct kt_gaps_opts *o,
    const struct win *w, size_t nw, uint32_t dev, size_t first, size_t last,
    struct rows *rv)
{
	const struct kt_device *d = &m->devices[dev];
	struct row *r;
	int64_t reach, busy = 0, cs, ce;
	size_t i, k;

	if (first == SIZE_MAX || (int64_t)(last - first + 1) < o->run_min)
		return 0;
	cs = m->act[first].ts;
	ce = reach = cs + m->act[first].dur;
	for (i = first + 1; i <= last; i++) {
		const struct kt_act *a = &m->act[i];

		if (a->ts > ce) {
			busy += ce - cs;
			cs = a->ts;
			ce = a->ts + a->dur;
		} else if (a->ts + a->dur > ce)
			ce = a->ts + a->dur;
		if (a->ts + a->dur > reach)
			reach = a->ts + a->dur;
	}
	busy += ce - cs;
	k = win_at(w, nw, m->act[first].ts);
	if ((r = row_add(rv)) == NULL)
		return -1;
	r->kind = R_RUN;
	r->start = m->act[first].ts;
	r->dur = reach - r->start;
	r->busy = busy;
	r->cost = r->dur - busy;
	r->wstart = w[k].ref;
	r->wall = w[k].end - w[k].start;
	r->dev = dev;
	r->step = w[k].step;
	r->before = first > d->first ? (uint32_t)(first - 1) : KT_NO;
	r->after = last + 1 < (size_t)d->first + d->nact ?
	    (uint32_t)(last + 1) : KT_NO;
	r->first = (uint32_t)first;
	r->kernels = (int64_t)(last - first + 1);
	return 0;
}

/* Find the gaps, runs and windows of device dev. */
static int
device_rows(const struct kt_model *m, const struct kt_gaps_opts *o,
    uint32_t dev, struct rows *rv, struct rows *sv,
    struct kt_gaps_total *tot)
{
	const struct kt_device *d = &m->devices[dev];
	struct win *w;
	size_t nw, i, end = (size_t)d->first + d->nact;
	size_t run_first = SIZE_MAX, run_last = 0, run_win = 0;
	int64_t reach, run_reach = 0, wall = 0, busy = 0, idl = 0;
	uint32_t reach_act;
	struct row *r;

	if (windows(m, d, dev, &w, &nw) == -1)
		return -1;
	if (nw == 0)
		return 0;
	reach = m->act[d->first].ts + m->act[d->first].dur;
	reach_act = d->first;
	for (i = d->first; i < end; i++) {
		const struct kt_act *a = &m->act[i];
		size_t k = win_at(w, nw, a->ts);
		int tiny = a->kind == KT_KERNEL && a->dur < o->tiny &&
		    a->ts >= w[0].start && a->ts < w[nw - 1].end;

		if (a->ts >= w[k].start && a->ts < w[k].end)
			w[k].nact++;
		if (i > d->first && a->ts > reach &&
		    idle(o, w, nw, dev, reach, a->ts, reach_act, (uint32_t)i,
		    rv) == -1)
			goto fail;
		/* A run goes on while tiny kernels follow in one window
		 * with no gap that is itself a row. */
		if (run_first != SIZE_MAX && (!tiny || k != run_win ||
		    (a->ts - run_reach >= o->min_gap && a->ts > run_reach))) {
			if (run_close(m, o, w, nw, dev, run_first, run_last,
			    rv) == -1)
				goto fail;
			run_first = SIZE_MAX;
		}
		if (tiny) {
			if (run_first == SIZE_MAX) {
				run_first = i;
				run_win = k;
				run_reach = a->ts + a->dur;
			}
			run_last = i;
			if (a->ts + a->dur > run_reach)
				run_reach = a->ts + a->dur;
		}
		if (i == d->first || a->ts + a->dur > reach) {
			reach = a->ts + a->dur;
			reach_act = (uint32_t)i;
		}
	}
	if (run_close(m, o, w, nw, dev, run_first, run_last, rv) == -1)
		goto fail;
	for (i = 0; i < nw; i++) {
		int64_t wl = w[i].end - w[i].start;

		wall += wl;
		idl += w[i].idle;
		busy += wl - w[i].idle;
		if ((r = row_add(sv)) == NULL)
			goto fail;
		r->kind = R_STEP;
		r->partial = w[i].partial;
		r->start = w[i].start;
		r->wstart = w[i].ref;
		r->dur = r->wall = wl;
		r->busy = wl - w[i].idle;
		r->cost = w[i].idle;
		r->dev = dev;
		r->step = w[i].step;
		r->before = r->after = r->first = KT_NO;
		r->kernels = w[i].nact;
	}
	if ((r = row_add(sv)) == NULL)
		goto fail;
	r->kind = R_TOTAL;
	r->start = r->wstart = w[0].start;
	r->dur = r->wall = wall;
	r->busy = busy;
	r->cost = idl;
	r->dev = dev;
	r->step = KT_NO;
	r->before = r->after = r->first = KT_NO;
	r->kernels = d->nact;
	if (tot != NULL) {
		tot->wall += wall;
		tot->busy += busy;
		tot->idle += idl;
	}
	free(w);
	return 0;
fail:
	free(w);
	return -1;
}


/* Largest cost first; then rank, device, start. */
static int
cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->kind - y->kind;
}

/* The thread whose CPU activity explains row r, or KT_NO. */
static uint32_t
row_thread(const struct kt_model *m, const struct row *r)
{
	if (r->kind == R_RUN && r->first != KT_NO &&
	    m->act[r->first].thread != KT_NO)
		return m->act[r->first].thread;
	if (r->after != KT_NO && m->act[r->after].thread != KT_NO)
		return m->act[r->after].thread;
	if (r->before != KT_NO && m->act[r->before].thread != KT_NO)
		return m->act[r->before].thread;
	if (r->step != KT_NO)
		return m->steps[r->step].thread;
	return KT_NO;
}

/*
 * The span of thread th (not a step or python frame) with the largest
 * overlap with [a, b); ties go to the longer span.  KT_NO if none.
 */
static uint32_t
longest(const struct kt_model *m, uint32_t th, int64_t a, int64_t b)
{
	const struct kt_thread *t = &m->threads[th];
	unsigned skip = (1u << KT_STEP) | (1u << KT_PYTHON_FUNCTION);
	uint32_t best = KT_NO, s;
	int64_t bo = -1;
	size_t lo = t->first, hi = (size_t)t->first + t->nspans, i;

	/* Spans open at a: the chain above the last starting at or before. */
	for (s = kt_model_span_at(m, th, a, 0); s != KT_NO;
	    s = m->spans[s].parent) {
		const struct kt_span *sp = &m->spans[s];
		int64_t e = sp->ts + sp->dur, ov;

		if (skip & (1u << sp->kind) || sp->is_step || e <= a)
			continue;
		ov = (e < b ? e : b) - a;
		if (ov > bo || (ov == bo && sp->dur > m->spans[best].dur)) {
			bo = ov;
			best = s;
		}
	}
	/* Spans that start inside. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->spans[mid].ts <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < (size_t)t->first + t->nspans && m->spans[i].ts < b;
	    i++) {
		const struct kt_span *sp = &m->spans[i];
		int64_t e = sp->ts + sp->dur, ov;

		if (skip & (1u << sp->kind) || sp->is_step)
			continue;
		ov = (e < b ? e : b) - sp->ts;
		if (ov > bo || (ov == bo && best != KT_NO &&
		    sp->dur > m->spans[best].dur)) {
			bo = ov;
			best = (uint32_t)i;
		}
	}
	return best;
}

/*
 * The user frame (kt-correlate(1)) at time t on thread th: of the
 * innermost span there of any kind, the frame at or above it.
 */
static int
frame_cell(const struct kt_model *m, struct kt_chains *c, struct kt_table *t,
    uint32_t th, int64_t at)
{
	uint32_t s = th == KT_NO ? KT_NO : kt_model_span_at(m, th, at, 0);
	const char *text;
	size_t len;

	if (kt_chains_frame_of(c, s, &text, &len) == KT_NO)
		return kt_table_cell(t, "-");
	return kt_table_cellf(t, "%.*s", (int)len, text);
}

/* The CPU op that launched activity a (its chain's), or "-". */
static int
op_cell(const struct kt_model *m, struct kt_chains *c, struct kt_table *t,
    uint32_t a)
{
	struct kt_chain ch;

	if (a == KT_NO || kt_chain_get(c, a, &ch) == -1 || ch.op == KT_NO)
		return kt_table_cell(t, "-");
	return kt_table_cell(t, kt_model_str(m, m->spans[ch.op].name));
}

static int
put_int_or(struct kt_table *t, int64_t v, int dash)
{
	return dash ? kt_table_cell(t, "-") : kt_table_int(t, v);
}

/* Write row r; c gives the user frame and the launching op. */
static int
put_row(const struct kt_model *m, struct kt_chains *c, struct kt_table *t,
    const struct row *r)
{
	const struct kt_device *d = &m->devices[r->dev];
	int rc = 0;
	int span = r->kind == R_GAP || r->kind == R_RUN;

	rc |= put_int_or(t, d->rank, d->rank < 0);
	rc |= put_int_or(t, d->index, d->index < 0);
	if (r->kind == R_TOTAL)
		rc |= kt_table_cell(t, "*");
	else
		rc |= put_int_or(t, r->step == KT_NO ? -1 :
		    m->steps[r->step].number, r->step == KT_NO ||
		    m->steps[r->step].number < 0);
	rc |= kt_table_cell(t, r->partial ? "partial" :
	    kind_names[r->kind]);
	rc |= kt_table_int(t, r->start);
	rc |= kt_table_int(t, r->start - r->wstart);
	rc |= kt_table_int(t, r->dur);
	rc |= kt_table_int(t, r->busy);
	rc |= kt_table_int(t, r->cost);
	rc |= kt_table_pct(t, r->cost, r->wall);
	rc |= put_int_or(t, r->kernels, r->kernels < 0);
	rc |= kt_table_cell(t, r->before == KT_NO ? "-" :
	    kt_model_str(m, m->act[r->before].name));
	rc |= kt_table_cell(t, r->after == KT_NO ? "-" :
	    kt_model_str(m, m->act[r->after].name));
	if (span) {
		uint32_t th = row_thread(m, r), s;
		int64_t mid = r->start + r->dur / 2;

		s = kt_model_span_at(m, th, mid, 1u << KT_PYTHON_FUNCTION);
		rc |= kt_table_cell(t, s == KT_NO ? "-" :
		    kt_model_str(m, m->spans[s].name));
		s = th == KT_NO ? KT_NO : longest(m, th, r->start,
		    r->start + r->dur);
		rc |= kt_table_cell(t, s == KT_NO ? "-" :
		    kt_model_str(m, m->spans[s].name));
		s = kt_model_span_at(m, th, mid,
		    ~(1u << KT_PYTHON_FUNCTION));
		rc |= kt_table_cell(t, s == KT_NO ? "-" :
		    kt_model_str(m, m->spans[s].name));
		rc |= frame_cell(m, c, t, th, mid);
		rc |= op_cell(m, c, t, r->after);
	} else {
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "-");
	}
	return rc ? -1 : 0;
}

static const char *const gap_cols[] = {
	"rank:n", "device:n", "step:n", "kind", "start_ns:n", "offset_ns:n",
	"dur_ns:n", "busy_ns:n", "cost_ns:n", "share_pct:n", "kernels:n",
	"before", "after", "cpu", "cpu_longest", "python", "frame", "after_op"
};
#define NGAPCOLS (sizeof(gap_cols) / sizeof(gap_cols[0]))

/*
 * --by cause: the gap and run rows folded by what the CPU was doing:
 * the row's cpu (the innermost op at the row's middle on the thread
 * that explains it) and user frame, per device.
 */
struct cause {
	uint32_t	 dev;
	uint32_t	 cpu;		/* span name id, or KT_NO */
	uint32_t	 frame;		/* into the frames, or KT_NO */
	int64_t		 gaps, runs, dur, cost, max_cost, max_start;
};

static const char *const cause_cols[] = {
	"rank:n", "device:n", "cpu", "frame", "gaps:n", "runs:n", "dur_ns:n",
	"cost_ns:n", "lost_pct:n", "max_cost_ns:n", "max_start_ns:n"
};
#define NCAUSECOLS (sizeof(cause_cols) / sizeof(cause_cols[0]))

static int
cmp_cause(const void *a, const void *b)
{
	const struct cause *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->max_start < y->max_start ? -1 : x->max_start > y->max_start;
}

static struct kt_table *
cause_table(const struct kt_model *m, struct kt_chains *c,
    const struct rows *rv, int64_t top)
{
	struct kt_intern *keys = NULL, *frames = NULL;
	struct kt_buf kb = KT_BUF_INIT;
	struct cause *cs = NULL;
	struct kt_table *t = NULL;
	size_t i, nc = 0, cap = 0, n, fl;
	int64_t all = 0, id;
	int rc = 0;

	if ((keys = kt_intern_new()) == NULL ||
	    (frames = kt_intern_new()) == NULL)
		goto fail;
	for (i = 0; i < rv->n; i++) {
		const struct row *r = &rv->r[i];
		uint32_t th = row_thread(m, r), s, f, fid = KT_NO, cpu;
		int64_t mid = r->start + r->dur / 2;
		const char *text;
		size_t len;
		struct cause *k;

		s = kt_model_span_at(m, th, mid, 1u << KT_PYTHON_FUNCTION);
		cpu = s == KT_NO ? KT_NO : m->spans[s].name;
		s = th == KT_NO ? KT_NO : kt_model_span_at(m, th, mid, 0);
		if ((f = kt_chains_frame_of(c, s, &text, &len)) != KT_NO) {
			kt_buf_clear(&kb);
			kt_buf_add(&kb, text, len);
			if (kt_buf_addc(&kb, '\0') == -1 ||
			    (id = kt_intern_put(frames, kb.p, kb.n)) == -1)
				goto fail;
			fid = (uint32_t)id;
		}
		kt_buf_clear(&kb);
		kt_buf_add(&kb, &r->dev, sizeof(r->dev));
		kt_buf_add(&kb, &cpu, sizeof(cpu));
		if (kt_buf_add(&kb, &fid, sizeof(fid)) == -1 ||
		    (id = kt_intern_put(keys, kb.p, kb.n)) == -1)
			goto fail;
		if ((size_t)id == nc) {
			if (nc == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct cause *p = realloc(cs,
				    ncap * sizeof(*p));

				if (p == NULL)
					goto fail;
				cs = p;
				cap = ncap;
			}
			memset(&cs[nc], 0, sizeof(cs[nc]));
			cs[nc].dev = r->dev;
			cs[nc].cpu = cpu;
			cs[nc].frame = fid;
			cs[nc].max_cost = -1;
			nc++;
		}
		k = &cs[id];
		if (r->kind == R_GAP)
			k->gaps++;
		else
			k->runs++;
		k->dur += r->dur;
		k->cost += r->cost;
		all += r->cost;
		if (r->cost > k->max_cost) {
			k->max_cost = r->cost;
			k->max_start = r->start;
		}
	}
	kt_qsort(cs, nc, sizeof(*cs), cmp_cause);
	n = top > 0 && (size_t)top < nc ? (size_t)top : nc;
	if ((t = kt_table_new(cause_cols, NCAUSECOLS)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		const struct cause *k = &cs[i];
		const struct kt_device *d = &m->devices[k->dev];

		rc |= put_int_or(t, d->rank, d->rank < 0);
		rc |= put_int_or(t, d->index, d->index < 0);
		rc |= kt_table_cell(t, k->cpu == KT_NO ? "-" :
		    kt_model_str(m, k->cpu));
		rc |= kt_table_cell(t, k->frame == KT_NO ? "-" :
		    kt_intern_get(frames, k->frame, &fl));
		rc |= kt_table_int(t, k->gaps);
		rc |= kt_table_int(t, k->runs);
		rc |= kt_table_int(t, k->dur);
		rc |= kt_table_int(t, k->cost);
		rc |= kt_table_pct(t, k->cost, all);
		rc |= kt_table_int(t, k->max_cost);
		rc |= kt_table_int(t, k->max_start);
	}
	if (rc != 0)
		goto fail;
	kt_intern_free(keys);
	kt_intern_free(frames);
	kt_buf_free(&kb);
	free(cs);
	return t;
fail:
	kt_intern_free(keys);
	kt_intern_free(frames);
	kt_buf_free(&kb);
	free(cs);
	kt_table_free(t);
	return NULL;
}

struct kt_table *
kt_gaps_table(const struct kt_model *m, const struct kt_gaps_opts *o,
    struct kt_table **steps, struct kt_gaps_total *tot)
{
	struct rows rv = { NULL, 0, 0 }, sv = { NULL, 0, 0 };
	struct kt_table *t = NULL, *st = NULL;
	struct kt_chains *c;
	size_t i, n;

	if (steps != NULL)
		*steps = NULL;
	if ((c = kt_chains_new(m, NULL, NULL)) == NULL)
		return NULL;
	if (tot != NULL)
		memset(tot, 0, sizeof(*tot));
	for (i = 0; i < m->ndevices; i++)
		if (device_rows(m, o, (uint32_t)i, &rv, &sv, tot) == -1)
			goto fail;
	if (tot != NULL)
		for (i = 0; i < rv.n; i++) {
			if (rv.r[i].kind == R_GAP)
				tot->gaps++;
			else
				tot->runs++;
		}
	kt_qsort(rv.r, rv.n, sizeof(*rv.r), cmp_row);
	n = o->top > 0 && (size_t)o->top < rv.n ? (size_t)o->top : rv.n;
	if (o->by_cause) {
		if ((t = cause_table(m, c, &rv, o->top)) == NULL)
			goto fail;
	} else if ((t = kt_table_new(gap_cols, NGAPCOLS)) == NULL)
		goto fail;
	for (i = 0; i < n && !o->by_cause; i++)
		if (put_row(m, c, t, &rv.r[i]) == -1)
			goto fail;
	if (o->summary && !o->by_cause)
		for (i = 0; i < sv.n; i++)
			if (put_row(m, c, t, &sv.r[i]) == -1)
				goto fail;
	if (steps != NULL) {
		if ((st = kt_table_new(gap_cols, NGAPCOLS)) == NULL)
			goto fail;
		for (i = 0; i < sv.n; i++)
			if (put_row(m, c, st, &sv.r[i]) == -1)
				goto fail;
		*steps = st;
	}
	free(rv.r);
	free(sv.r);
	kt_chains_free(c);
	return t;
fail:
	free(rv.r);
	free(sv.r);
	kt_chains_free(c);
	kt_table_free(t);
	kt_table_free(st);
	return NULL;
}

/* ------------------------------------------------------------------ */
/*
 * Merging per-rank tables (lib/model/merge.c), gap rows or --by cause
 * rows: each row is one rank's (its key leads with rank and device), so
 * rows pass through; a rank in two inputs is an error.  The order is the
 * table's (cost, device, start), the step and total rows after, in
 * (rank, device) order.  lost_pct (by cause) is computed again over the
 * merged cost: exact when the per-rank tables are whole (no --top).
 */
static const struct kt_merge_col merge_cols[] = {
	{ "rank", KT_MERGE_KEY, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "device", KT_MERGE_KEY, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "step", KT_MERGE_KEY, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "kind", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "start_ns", KT_MERGE_KEY, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "offset_ns", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "dur_ns", KT_MERGE_FIRST, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "busy_ns", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "cost_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "share_pct", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "kernels", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "before", KT_MERGE_FIRST, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "after", KT_MERGE_FIRST, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "cpu", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "cpu_longest", KT_MERGE_FIRST, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "python", KT_MERGE_FIRST, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "frame", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "after_op", KT_MERGE_FIRST, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "gaps", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "runs", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "lost_pct", KT_MERGE_PCT, 1, 0, "cost_ns", "cost_ns", 0, NULL,
	  NULL },
	{ "max_cost_ns", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "max_start_ns", KT_MERGE_FIRST, 1, 0, NULL, NULL, 0, NULL, NULL }
};
#define NMERGECOLS	(sizeof(merge_cols) / sizeof(merge_cols[0]))
#define MC_RANK		0
#define MC_DEVICE	1
#define MC_KIND		3
#define MC_START	4
#define MC_COST		8
#define MC_MAX_START	22

/* Gap and run rows (and cause rows) first, then step and total rows. */
static int
merge_section(const struct kt_merge_row *r, const struct kt_merge_spec *sp)
{
	const char *k = r->cell[MC_KIND];

	(void)sp;
	return k != NULL && strcmp(k, "gap") != 0 &&
	    strcmp(k, "tiny-run") != 0;
}

static int
cmp_num(const char *a, const char *b)
{
	int64_t x = 0, y = 0;

	if (a == NULL || b == NULL)
		return 0;
	if (kt_merge_int(a, &x) == -1 || kt_merge_int(b, &y) == -1)
		return kt_merge_cmp_cells(a, b);
	return x < y ? -1 : x > y;
}

static int
merge_cmp(const struct kt_merge_row *x, const struct kt_merge_row *y,
    const struct kt_merge_spec *sp, const void *ctx)
{
	int c;

	(void)ctx;
	if (merge_section(x, sp) == 0 &&
	    (c = cmp_num(y->cell[MC_COST], x->cell[MC_COST])) != 0)
		return c;
	if ((c = cmp_num(x->cell[MC_RANK], y->cell[MC_RANK])) != 0 ||
	    (c = cmp_num(x->cell[MC_DEVICE], y->cell[MC_DEVICE])) != 0)
		return c;
	if (merge_section(x, sp) != 0)
		return 0;		/* the table's own order */
	if ((c = cmp_num(x->cell[MC_START], y->cell[MC_START])) != 0 ||
	    (c = cmp_num(x->cell[MC_MAX_START], y->cell[MC_MAX_START])) != 0)
		return c;
	if (x->cell[MC_KIND] != NULL && y->cell[MC_KIND] != NULL)
		return strcmp(x->cell[MC_KIND], y->cell[MC_KIND]);
	return 0;
}

static const struct kt_merge_spec merge_spec = {
	"kt-gaps", merge_cols, NMERGECOLS, "rank", NULL, NULL, 1,
	merge_section, merge_cmp, NULL, NULL, NULL
};

struct kt_table *
kt_gaps_merge_top(char *const *paths, size_t npaths, int64_t top,
    struct kt_error *err)
{
	return kt_merge_tables(&merge_spec, paths, npaths, top, err);
}

struct kt_table *
kt_gaps_merge(char *const *paths, size_t npaths, struct kt_error *err)
{
	return kt_gaps_merge_top(paths, npaths, 0, err);
}
