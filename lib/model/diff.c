/*
 * diff.c: one run against another (kt-diff).  The tables of two runs,
 * A (the baseline) and B, are joined by their keys: per view (buckets,
 * kernels, ops, user frames, lost time by cause, collectives) the rows
 * with the same key cells are summed on each side, and each cost column
 * gives a row with A's value, B's, the change and the relative change,
 * sorted by the absolute change.  The step-time series of the two runs
 * are joined step by step (the n-th step of A against the n-th of B)
 * with A's step-to-step range as the noise.  Integers only.
 *
 * A view's kind is known by its columns (kt_diff_kind), so a table that
 * kt wrote (kt bucket, kt gaps --by cause, kt ops, kt overlap, kt
 * decompose --series, or the files of kt views) can be given instead of
 * a trace.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

/* A kind of table: how to know it, its keys, its cost columns. */
struct kind {
	const char	*name;		/* the view's name by default */
	const char	*need[3];	/* columns that make the kind */
	const char	*keys[8];	/* key columns, where present */
	const char	*metrics[3];	/* cost columns (the first sorts) */
	const char	*count;		/* the count column, NULL: rows */
	const char	*keepcol;	/* keep rows whose keepcol ... */
	const char	*keepval;	/* ... is keepval */
	const char	*dropcol;	/* drop rows whose dropcol ... */
	const char	*dropvals[3];	/* ... is one of these */
	int		 steps;		/* the step series, not a view */
};

static const struct kind kinds[] = {
	{ "step", { "phase", "activities", "start_ns" }, { NULL },
	    { "wall_ns", NULL }, NULL, NULL, NULL, NULL, { NULL }, 1 },
	{ "step", { "phase", "step_spread", "step_mean_ns" }, { NULL },
	    { "wall_ns", NULL }, NULL, NULL, NULL, NULL, { NULL }, 2 },
	{ "kernel_table", { "row", "union_ns", "total_ns" },
	    { "bucket", "name", "op", "frame", "stream", "step", NULL },
	    { "total_ns", NULL }, "count", "row", "group", NULL, { NULL },
	    0 },
	{ "gap_cause", { "lost_pct", "cpu", "frame" },
	    { "cpu", "frame", NULL }, { "cost_ns", NULL }, "gaps", NULL,
	    NULL, NULL, { NULL }, 0 },
	{ "gap", { "offset_ns", "cost_ns", "kind" },
	    { "kind", "cpu", "frame", NULL }, { "cost_ns", NULL }, NULL,
	    NULL, NULL, "kind", { "step", "total", NULL }, 0 },
	{ "op", { "cpu_self_ns", "gpu_self_ns", "calls" },
	    { "kind", "name", "shapes", "frame", NULL },
	    { "cpu_total_ns", "gpu_self_ns", NULL }, "calls", NULL, NULL,
	    "kind", { "step", "cuda_runtime", "cuda_driver" }, 0 },
	{ "collective", { "exposed_ns", "collective", "hidden_ns" },
	    { "collective", "name", NULL }, { "exposed_ns", NULL }, NULL,
	    NULL, NULL, NULL, { NULL }, 0 },
};
#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

/* One row of one side, before the join. */
struct drow {
	uint32_t	 view;
	uint8_t		 side;
	uint8_t		 metric;
	char		*key;		/* key cells, " | " between */
	char		*rank;		/* "" when the table has none */
	char		*device;
	char		*full;		/* the joined key, at the join */
	int64_t		 value;
	int64_t		 count;
};

/* One step of one side. */
struct dstep {
	uint8_t		 side;
	char		*rank;
	char		*device;
	char		*step;		/* its number, or "mean" */
	int64_t		 wall, busy, idle;
	int64_t		 min, max;	/* of the wall (a summary row) */
	int		 summary;	/* a mean from kt views' summary */
	size_t		 order;
};

struct dview {
	char		 name[64];
	const struct kind *k;
	/* Per side: the first rank and device seen, and whether others. */
	char		*rank1[2], *dev1[2];
	int		 manyrank[2], manydev[2], seen[2];
};

struct kt_diff {
	struct dview	*views;
	size_t		 nviews;
	struct drow	*rows;
	size_t		 nrows, caprows;
	struct dstep	*steps;
	size_t		 nsteps, capsteps;
	int		 stepseen[2];
	int		 ignore_rank;	/* each side one rank: not a key */
};

struct kt_diff *
kt_diff_new(void)
{
	return calloc(1, sizeof(struct kt_diff));
}

void
kt_diff_free(struct kt_diff *d)
{
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->nrows; i++) {
		free(d->rows[i].key);
		free(d->rows[i].rank);
		free(d->rows[i].device);
		free(d->rows[i].full);
	}
	for (i = 0; i < d->nsteps; i++) {
		free(d->steps[i].rank);
		free(d->steps[i].device);
		free(d->steps[i].step);
	}
	for (i = 0; i < d->nviews; i++) {
		free(d->views[i].rank1[0]);
		free(d->views[i].rank1[1]);
		free(d->views[i].dev1[0]);
		free(d->views[i].dev1[1]);
	}
	free(d->views);
	free(d->rows);
	free(d->steps);
	free(d);
}

static const struct kind *
kind_of(const struct kt_table *t)
{
	size_t k, i;

	for (k = 0; k < NKINDS; k++) {
		for (i = 0; i < 3 && kinds[k].need[i] != NULL; i++)
			if (kt_table_column(t, kinds[k].need[i]) < 0)
				break;
		if (i == 3 || kinds[k].need[i] == NULL)
			return &kinds[k];
	}
	return NULL;
}

const char *
kt_diff_kind(const struct kt_table *t)
{
	const struct kind *k = kind_of(t);

	return k != NULL ? k->name : NULL;
}

/*
 * A cell as an int64: 0 with *v, 1 for "-" or "" (no value), -1 when it
 * is not an integer.
 */
static int
cell_int(const char *s, int64_t *v)
{
	int64_t x = 0;
	int neg = 0;

	if (*s == '\0' || strcmp(s, "-") == 0)
		return 1;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		x = x * 10 + (*s - '0');
	}
	if (*s != '\0')
		return -1;
	*v = neg ? -x : x;
	return 0;
}

static int
add_i64(int64_t *a, int64_t b)
{
	if ((b > 0 && *a > INT64_MAX - b) || (b < 0 && *a < INT64_MIN - b))
		return -1;
	*a += b;
	return 0;
}

static char *
cell_dup(const struct kt_table *t, size_t r, int c)
{
	return strdup(c >= 0 ? kt_table_get(t, r, (size_t)c) : "");
}

static struct dview *
view_get(struct kt_diff *d, const char *name, const struct kind *k)
{
	struct dview *nv;
	size_t i;

	for (i = 0; i < d->nviews; i++)
		if (strcmp(d->views[i].name, name) == 0)
			return d->views[i].k == k ? &d->views[i] : NULL;
	if ((nv = realloc(d->views, (d->nviews + 1) * sizeof(*nv))) == NULL)
		return NULL;
	d->views = nv;
	nv = &d->views[d->nviews++];
	memset(nv, 0, sizeof(*nv));
	snprintf(nv->name, sizeof(nv->name), "%s", name);
	nv->k = k;
	return nv;
}

/* Note rank and device values of a side, to know if they are keys. */
static int
note_one(char **first, int *many, const char *v)
{
	if (*first == NULL)
		return (*first = strdup(v)) == NULL ? -1 : 0;
	if (strcmp(*first, v) != 0)
		*many = 1;
	return 0;
}

static int
add_steps(struct kt_diff *d, int side, const struct kt_table *t,
    const struct kind *k, struct kt_error *err)
{
	int cphase = kt_table_column(t, "phase"),
	    cstep = kt_table_column(t, "step"),
	    crank = kt_table_column(t, "rank"),
	    cdev = kt_table_column(t, "device"),
	    cwall = kt_table_column(t, "wall_ns"),
	    cbusy = kt_table_column(t, "busy_ns"),
	    cidle = kt_table_column(t, "idle_ns"),
	    csteps = kt_table_column(t, "steps"),
	    cmin = kt_table_column(t, "step_min_ns"),
	    cmax = kt_table_column(t, "step_max_ns");
	size_t r, n = kt_table_rows(t);

	if (cwall < 0 || cbusy < 0 || cidle < 0 || cphase < 0 ||
	    (k->steps == 1 && cstep < 0) || (k->steps == 2 && (csteps < 0 ||
	    cmin < 0 || cmax < 0))) {
		kt_error_set(err, NULL, 0, 0, "a step table without wall_ns, "
		    "busy_ns and idle_ns");
		return -1;
	}
	if (d->stepseen[side]) {
		kt_error_set(err, NULL, 0, 0, "two step tables for run %c",
		    side ? 'B' : 'A');
		return -1;
	}
	d->stepseen[side] = 1;
	for (r = 0; r < n; r++) {
		struct dstep *s;
		int64_t ns = 1;

		if (strcmp(kt_table_get(t, r, (size_t)cphase),
		    k->steps == 1 ? "step" : "steady") != 0)
			continue;
		if (d->nsteps == d->capsteps) {
			size_t nc = d->capsteps ? d->capsteps * 2 : 64;
			struct dstep *ns2 = realloc(d->steps,
			    nc * sizeof(*ns2));

			if (ns2 == NULL)
				goto nomem;
			d->steps = ns2;
			d->capsteps = nc;
		}
		s = &d->steps[d->nsteps];
		memset(s, 0, sizeof(*s));
		s->side = (uint8_t)side;
		s->order = d->nsteps;
		s->summary = k->steps == 2;
		if (cell_int(kt_table_get(t, r, (size_t)cwall), &s->wall) ||
		    cell_int(kt_table_get(t, r, (size_t)cbusy), &s->busy) ||
		    cell_int(kt_table_get(t, r, (size_t)cidle), &s->idle) ||
		    (s->summary && (cell_int(kt_table_get(t, r,
		    (size_t)csteps), &ns) || ns <= 0 ||
		    cell_int(kt_table_get(t, r, (size_t)cmin), &s->min) ||
		    cell_int(kt_table_get(t, r, (size_t)cmax), &s->max)))) {
			kt_error_set(err, NULL, (long)r + 2, 1, "a step row "
			    "without its times");
			return -1;
		}
		if (s->summary) {
			/* kt views' steady row: totals over ns steps. */
			s->wall /= ns;
			s->busy /= ns;
			s->idle /= ns;
		}
		if ((s->rank = cell_dup(t, r, crank)) == NULL ||
		    (s->device = cell_dup(t, r, cdev)) == NULL ||
		    (s->step = s->summary ? strdup("mean") :
		    cell_dup(t, r, cstep)) == NULL) {
			d->nsteps++;
			goto nomem;
		}
		d->nsteps++;
	}
	return 0;
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
	return -1;
}

int
kt_diff_add(struct kt_diff *d, int side, const struct kt_table *t,
    const char *view, struct kt_error *err)
{
	const struct kind *k = kind_of(t);
	struct dview *v;
	int ckey[8], cmet[3], ccount, ckeep, cdrop, crank, cdev;
	size_t nk = 0, nm, r, n, i;
	struct kt_buf key = { 0 };

	if (k == NULL) {
		kt_error_set(err, NULL, 0, 0, "not a table kt diff knows (kt "
		    "bucket, kt gaps --by cause, kt ops, kt overlap, kt "
		    "decompose --series, kt views)");
		return -1;
	}
	if (k->steps)
		return add_steps(d, side, t, k, err);
	if (view == NULL && k == &kinds[2]) {
		/* A kernel table is named by its first grouping key. */
		static const char *const by[][2] = {
			{ "bucket", "bucket" }, { "name", "kernel" },
			{ "op", "launch_op" }, { "frame", "frame" },
			{ "stream", "stream" }, { "step", "step_kernels" }
		};

		for (i = 0; i < sizeof(by) / sizeof(by[0]); i++)
			if (kt_table_column(t, by[i][0]) >= 0)
				break;
		view = i < sizeof(by) / sizeof(by[0]) ? by[i][1] : "kernel_table";
	}
	if ((v = view_get(d, view != NULL ? view : k->name, k)) == NULL) {
		kt_error_set(err, NULL, 0, 0, "view %s: %s", view != NULL ?
		    view : k->name, d->nviews ? "of another kind in the "
		    "other run" : "out of memory");
		return -1;
	}
	for (i = 0; k->keys[i] != NULL; i++)
		if ((ckey[nk] = kt_table_column(t, k->keys[i])) >= 0)
			nk++;
	for (nm = 0; nm < 3 && k->metrics[nm] != NULL; nm++)
		if ((cmet[nm] = kt_table_column(t, k->metrics[nm])) < 0) {
			kt_error_set(err, NULL, 1, 1, "no column %s",
			    k->metrics[nm]);
			return -1;
		}
	ccount = k->count != NULL ? kt_table_column(t, k->count) : -1;
	ckeep = k->keepcol != NULL ? kt_table_column(t, k->keepcol) : -1;
	cdrop = k->dropcol != NULL ? kt_table_column(t, k->dropcol) : -1;
	crank = kt_table_column(t, "rank");
	cdev = kt_table_column(t, "device");
	v->seen[side] = 1;
	n = kt_table_rows(t);
	for (r = 0; r < n; r++) {
		int64_t cnt = 1;
		size_t m;

		if (ckeep >= 0 && strcmp(kt_table_get(t, r, (size_t)ckeep),
		    k->keepval) != 0)
			continue;
		if (cdrop >= 0) {
			const char *dv = kt_table_get(t, r, (size_t)cdrop);

			for (i = 0; i < 3 && k->dropvals[i] != NULL; i++)
				if (strcmp(dv, k->dropvals[i]) == 0)
					break;
			if (i < 3 && k->dropvals[i] != NULL)
				continue;
		}
		if (ccount >= 0 && cell_int(kt_table_get(t, r,
		    (size_t)ccount), &cnt) == -1) {
			kt_error_set(err, NULL, (long)r + 2, 1, "%s: not an "
			    "integer", k->count);
			goto fail;
		}
		kt_buf_clear(&key);
		for (i = 0; i < nk; i++)
			if ((i > 0 && kt_buf_adds(&key, " | ") == -1) ||
			    kt_buf_adds(&key, kt_table_get(t, r,
			    (size_t)ckey[i])) == -1)
				goto nomem;
		if (kt_buf_addc(&key, '\0') == -1)
			goto nomem;
		if ((crank >= 0 && note_one(&v->rank1[side],
		    &v->manyrank[side], kt_table_get(t, r, (size_t)crank)) ==
		    -1) || (cdev >= 0 && note_one(&v->dev1[side],
		    &v->manydev[side], kt_table_get(t, r, (size_t)cdev)) ==
		    -1))
			goto nomem;
		for (m = 0; m < nm; m++) {
			struct drow *dr;
			int64_t val;
			int rc = cell_int(kt_table_get(t, r, (size_t)cmet[m]),
			    &val);

			if (rc == -1) {
				kt_error_set(err, NULL, (long)r + 2, 1, "%s: "
				    "not an integer", k->metrics[m]);
				goto fail;
			}
			if (rc == 1)
				continue;
			if (d->nrows == d->caprows) {
				size_t nc = d->caprows ? d->caprows * 2 : 256;
				struct drow *nr = realloc(d->rows,
				    nc * sizeof(*nr));

				if (nr == NULL)
					goto nomem;
				d->rows = nr;
				d->caprows = nc;
			}
			dr = &d->rows[d->nrows];
			memset(dr, 0, sizeof(*dr));
			dr->view = (uint32_t)(v - d->views);
			dr->side = (uint8_t)side;
			dr->metric = (uint8_t)m;
			dr->value = val;
			dr->count = cnt;
			d->nrows++;
			if ((dr->key = strdup(key.p)) == NULL ||
			    (dr->rank = cell_dup(t, r, crank)) == NULL ||
			    (dr->device = cell_dup(t, r, cdev)) == NULL)
				goto nomem;
		}
	}
	kt_buf_free(&key);
	return 0;
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
fail:
	kt_buf_free(&key);
	return -1;
}

/* Whether the rank (or device) is a key of view v: more than one value. */
/*
 * Whether the rank (or device) is a key of a view: when a side has more
 * than one; with one a side, the two runs compare as one rank (rank 0
 * of A against rank 3 of B, if those are the files given).
 */
static int
is_key(const int many[2])
{
	return many[0] || many[1];
}

static int
cmp_join(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	int c;

	if (x->view != y->view)
		return x->view < y->view ? -1 : 1;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	if (x->view == UINT32_MAX)
		return 0;
	if ((c = strcmp(x->full, y->full)) != 0)
		return c;
	return x->side - y->side;
}

/* One joined row. */
struct jrow {
	uint32_t	 view;
	uint8_t		 metric;
	const char	*key;
	int64_t		 v[2];
	int64_t		 n[2];
	int		 has[2];
	int64_t		 delta;
	uint64_t	 mag;
};

static int
cmp_mag(const void *a, const void *b)
{
	const struct jrow *x = a, *y = b;
	int c;

	if (x->mag != y->mag)
		return x->mag > y->mag ? -1 : 1;
	if (x->view != y->view)
		return x->view < y->view ? -1 : 1;
	if ((c = strcmp(x->key, y->key)) != 0)
		return c;
	return x->metric - y->metric;
}

struct kt_table *
kt_diff_table(struct kt_diff *d, size_t top, struct kt_error *err)
{
	static const char *const cols[] = {
		"view", "key", "metric", "a:n", "b:n", "delta:n",
		"delta_pct:n", "a_count:n", "b_count:n", "change"
	};
	struct kt_table *t = NULL;
	struct jrow *j = NULL;
	struct kt_buf b = { 0 };
	size_t i, nj = 0, n;

	for (i = 0; i < d->nrows; i++) {
		struct drow *r = &d->rows[i];
		struct dview *v = &d->views[r->view];

		kt_buf_clear(&b);
		if (!v->seen[0] || !v->seen[1]) {
			/* A view of one run only: not joined. */
			r->view = UINT32_MAX;
			free(r->full);
			r->full = NULL;
			continue;
		}
		if (is_key(v->manyrank) && *r->rank != '\0' &&
		    (kt_buf_adds(&b, "rank ") == -1 ||
		    kt_buf_adds(&b, r->rank) == -1 ||
		    kt_buf_adds(&b, " | ") == -1))
			goto nomem;
		if (is_key(v->manydev) && *r->device != '\0' &&
		    (kt_buf_adds(&b, "device ") == -1 ||
		    kt_buf_adds(&b, r->device) == -1 ||
		    kt_buf_adds(&b, " | ") == -1))
			goto nomem;
		if (kt_buf_adds(&b, r->key) == -1 || kt_buf_addc(&b, '\0') ==
		    -1)
			goto nomem;
		free(r->full);
		if ((r->full = strdup(b.p)) == NULL)
			goto nomem;
	}
	if (d->nrows > 0)
		qsort(d->rows, d->nrows, sizeof(*d->rows), cmp_join);
	if (d->nrows > 0 && (j = calloc(d->nrows, sizeof(*j))) == NULL)
		goto nomem;
	for (i = 0; i < d->nrows; i++) {
		struct drow *r = &d->rows[i];
		struct jrow *o;

		if (r->view == UINT32_MAX)
			continue;
		if (nj > 0 && j[nj - 1].view == r->view &&
		    j[nj - 1].metric == r->metric &&
		    strcmp(j[nj - 1].key, r->full) == 0)
			o = &j[nj - 1];
		else {
			o = &j[nj++];
			o->view = r->view;
			o->metric = r->metric;
			o->key = r->full;
		}
		o->has[r->side] = 1;
		if (add_i64(&o->v[r->side], r->value) == -1 ||
		    add_i64(&o->n[r->side], r->count) == -1) {
			kt_error_set(err, NULL, 0, 0, "a sum of %s out of "
			    "range", d->views[r->view].name);
			goto fail;
		}
	}
	for (i = 0; i < nj; i++) {
		i128 dd = (i128)j[i].v[1] - j[i].v[0];

		if (dd > INT64_MAX || dd < -INT64_MAX) {
			kt_error_set(err, NULL, 0, 0, "a change out of range");
			goto fail;
		}
		j[i].delta = (int64_t)dd;
		j[i].mag = dd < 0 ? (uint64_t)-dd : (uint64_t)dd;
	}
	if (nj > 0)
		qsort(j, nj, sizeof(*j), cmp_mag);
	if ((t = kt_table_new(cols, sizeof(cols) / sizeof(cols[0]))) == NULL)
		goto nomem;
	n = top > 0 && top < nj ? top : nj;
	for (i = 0; i < n; i++) {
		const struct jrow *o = &j[i];
		const struct dview *v = &d->views[o->view];
		const char *chg;
		int rc = 0;

		if (!o->has[0])
			chg = "new";
		else if (!o->has[1])
			chg = "gone";
		else
			chg = o->delta > 0 ? "more" : o->delta < 0 ? "less" :
			    "same";
		rc |= kt_table_cell(t, v->name);
		rc |= kt_table_cell(t, o->key);
		rc |= kt_table_cell(t, v->k->metrics[o->metric]);
		rc |= o->has[0] ? kt_table_int(t, o->v[0]) :
		    kt_table_cell(t, "-");
		rc |= o->has[1] ? kt_table_int(t, o->v[1]) :
		    kt_table_cell(t, "-");
		rc |= kt_table_int(t, o->delta);
		rc |= kt_table_pct(t, o->delta, o->has[0] ? o->v[0] : 0);
		rc |= o->has[0] ? kt_table_int(t, o->n[0]) :
		    kt_table_cell(t, "-");
		rc |= o->has[1] ? kt_table_int(t, o->n[1]) :
		    kt_table_cell(t, "-");
		rc |= kt_table_cell(t, chg);
		if (rc != 0)
			goto nomem;
	}
	free(j);
	kt_buf_free(&b);
	return t;
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
fail:
	kt_table_free(t);
	free(j);
	kt_buf_free(&b);
	return NULL;
}

/* The steps of one side and group, in order. */
struct sgroup {
	const char	*rank;
	const char	*device;
	struct dstep	*s[2];		/* first step of each side */
	size_t		 n[2];
};

static int
cmp_step(const void *a, const void *b)
{
	const struct dstep *x = a, *y = b;

	if (x->side != y->side)
		return x->side - y->side;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The integer square root of v (the largest r with r * r <= v). */
static uint64_t
isqrt(u128 v)
{
	uint64_t lo = 0, hi = UINT64_MAX >> 31, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if ((u128)mid * mid <= v)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * The means of a run's steps (wall, busy, idle), the range of its step
 * walls (max - min: the noise of one step against one step) and the
 * noise of the mean: two standard errors of a difference of two means
 * of n steps each, 2 x sd x sqrt(2 / n), with sd the sample standard
 * deviation of these walls; -1 when there is no spread to take (one
 * step, or kt views' summary, whose range is used).
 */
static int
means(const struct dstep *s, size_t n, int64_t out[3], int64_t *range,
    int64_t *semean)
{
	i128 sum[3] = { 0, 0, 0 }, ss = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	*semean = -1;
	if (n == 0)
		return -1;
	if (n == 1 && s[0].summary) {
		out[0] = s[0].wall;
		out[1] = s[0].busy;
		out[2] = s[0].idle;
		*range = s[0].max - s[0].min;
		*semean = *range;
		return 0;
	}
	for (i = 0; i < n; i++) {
		sum[0] += s[i].wall;
		sum[1] += s[i].busy;
		sum[2] += s[i].idle;
		if (s[i].wall < lo)
			lo = s[i].wall;
		if (s[i].wall > hi)
			hi = s[i].wall;
	}
	for (i = 0; i < 3; i++)
		out[i] = (int64_t)(sum[i] / (i128)n);
	*range = hi - lo;
	if (n >= 2) {
		/*
		 * Exactly: with dv = n x wall - sum, the sum of squares about
		 * the mean is sum(dv^2) / n^2, var = that / (n - 1), and
		 * noise^2 = 8 var / n = 8 sum(dv^2) / (n^3 (n - 1)).
		 */
		for (i = 0; i < n; i++) {
			i128 dv = (i128)s[i].wall * (i128)n - sum[0];

			ss += dv * dv;
		}
		*semean = (int64_t)isqrt((u128)ss * 8 / ((u128)n * n * n *
		    (n - 1)));
	}
	return 0;
}

/* The first group of both sides (one rank and device each, or rank 0). */
static void
group_of(struct kt_diff *d, struct sgroup *g)
{
	size_t i;

	memset(g, 0, sizeof(*g));
	if (d->nsteps > 0)
		qsort(d->steps, d->nsteps, sizeof(*d->steps), cmp_step);
	for (i = 0; i < d->nsteps; i++) {
		struct dstep *s = &d->steps[i];

		if (g->s[s->side] == NULL)
			g->s[s->side] = s;
		/* The first (rank, device) of each side. */
		if (strcmp(s->rank, g->s[s->side]->rank) == 0 &&
		    strcmp(s->device, g->s[s->side]->device) == 0)
			g->n[s->side]++;
	}
}

/*
 * The steps of a side's first (rank, device), in order, into a new array
 * *out of *n (NULL and 0 when it has none).  0, or -1 out of memory.
 */
static int
side_steps(const struct kt_diff *d, const struct sgroup *g, int side,
    struct dstep **out, size_t *n)
{
	size_t i;

	*out = NULL;
	*n = 0;
	if (g->s[side] == NULL)
		return 0;
	if ((*out = calloc(g->n[side], sizeof(**out))) == NULL)
		return -1;
	/* Other groups' steps may come between: gather. */
	for (i = 0; i < d->nsteps && *n < g->n[side]; i++)
		if (d->steps[i].side == side && strcmp(d->steps[i].rank,
		    g->s[side]->rank) == 0 && strcmp(d->steps[i].device,
		    g->s[side]->device) == 0)
			(*out)[(*n)++] = d->steps[i];
	return 0;
}

int
kt_diff_mean(struct kt_diff *d, int side, int what, int64_t *v,
    int64_t *range)
{
	struct sgroup g;
	struct dstep *st;
	int64_t m[3], r, se;
	size_t n;
	int rc;

	group_of(d, &g);
	if (side_steps(d, &g, side, &st, &n) == -1)
		return -1;
	rc = means(st, n, m, &r, &se);
	free(st);
	if (rc != 0)
		return -1;
	*v = m[what];
	if (range != NULL)
		*range = r;
	return 0;
}

struct kt_table *
kt_diff_steps(struct kt_diff *d, struct kt_error *err)
{
	static const char *const cols[] = {
		"step_a", "step_b", "wall_a_ns:n", "wall_b_ns:n",
		"wall_delta_ns:n", "wall_delta_pct:n", "busy_a_ns:n",
		"busy_b_ns:n", "busy_delta_ns:n", "idle_a_ns:n",
		"idle_b_ns:n", "idle_delta_ns:n", "noise_ns:n", "verdict"
	};
	struct kt_table *t;
	struct dstep *side[2] = { NULL, NULL };
	struct sgroup g;
	size_t ns[2] = { 0, 0 }, i, s, n;
	int64_t mean[2][3], range[2] = { 0, 0 }, se[2] = { -1, -1 };
	int have[2];

	if ((t = kt_table_new(cols, sizeof(cols) / sizeof(cols[0]))) == NULL)
		goto nomem;
	group_of(d, &g);
	for (s = 0; s < 2; s++)
		if (side_steps(d, &g, (int)s, &side[s], &ns[s]) == -1)
			goto nomem;
	for (s = 0; s < 2; s++)
		have[s] = means(side[s], ns[s], mean[s], &range[s],
		    &se[s]) == 0;
	/* The n-th step of A against the n-th of B, then the means. */
	n = ns[0] > ns[1] ? ns[0] : ns[1];
	for (i = 0; i <= n; i++) {
		int64_t a[3] = { 0, 0, 0 }, b[3] = { 0, 0, 0 };
		int64_t noise = have[0] ? range[0] : -1;
		int ha, hb, rc = 0, k;
		const char *sa, *sb, *verdict;

		if (i < n) {
			ha = i < ns[0] && !side[0][i].summary;
			hb = i < ns[1] && !side[1][i].summary;
			if (!ha && !hb)
				continue;
			sa = ha ? side[0][i].step : "-";
			sb = hb ? side[1][i].step : "-";
			if (ha) {
				a[0] = side[0][i].wall;
				a[1] = side[0][i].busy;
				a[2] = side[0][i].idle;
			}
			if (hb) {
				b[0] = side[1][i].wall;
				b[1] = side[1][i].busy;
				b[2] = side[1][i].idle;
			}
		} else {
			ha = have[0];
			hb = have[1];
			if (!ha && !hb)
				break;
			sa = sb = "mean";
			noise = have[0] ? se[0] : -1;
			if (ha)
				memcpy(a, mean[0], sizeof(a));
			if (hb)
				memcpy(b, mean[1], sizeof(b));
		}
		for (k = 0; k < 3; k++) {
			rc |= k == 0 ? kt_table_cell(t, sa) : 0;
			rc |= k == 0 ? kt_table_cell(t, sb) : 0;
			rc |= ha ? kt_table_int(t, a[k]) : kt_table_cell(t,
			    "-");
			rc |= hb ? kt_table_int(t, b[k]) : kt_table_cell(t,
			    "-");
			rc |= ha && hb ? kt_table_int(t, b[k] - a[k]) :
			    kt_table_cell(t, "-");
			if (k == 0)
				rc |= ha && hb ? kt_table_pct(t, b[0] - a[0],
				    a[0]) : kt_table_cell(t, "-");
		}
		if (!ha || !hb)
			verdict = "-";
		else if (noise >= 0 && (b[0] - a[0] <= noise &&
		    a[0] - b[0] <= noise))
			verdict = "within noise";
		else
			verdict = b[0] > a[0] ? "slower" : b[0] < a[0] ?
			    "faster" : "same";
		rc |= noise >= 0 ? kt_table_int(t, noise) :
		    kt_table_cell(t, "-");
		rc |= kt_table_cell(t, verdict);
		if (rc != 0)
			goto nomem;
	}
	free(side[0]);
	free(side[1]);
	return t;
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
	free(side[0]);
	free(side[1]);
	kt_table_free(t);
	return NULL;
}

const char *
kt_diff_view(const struct kt_diff *d, size_t i, int *only)
{
	if (i >= d->nviews)
		return NULL;
	*only = d->views[i].seen[0] && d->views[i].seen[1] ? -1 :
	    d->views[i].seen[0] ? 0 : 1;
	return d->views[i].name;
}

size_t
kt_diff_nsteps(const struct kt_diff *d, int side)
{
	size_t i, n = 0;

	for (i = 0; i < d->nsteps; i++)
		if (d->steps[i].side == side && !d->steps[i].summary)
			n++;
	return n;
}
