/*
 * bucket.c: the kernel table of kt-bucket (and kt views): GPU activities
 * grouped by bucket, name, stream, step, rank or device, with counts,
 * sums, the union of each group's time, percentiles and bytes; the busy
 * time (union over all streams) of every device; and the merge of such
 * tables written by several runs (one per rank).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

static const char *const by_names[KT_NBY] = {
	"bucket", "name", "stream", "step", "rank", "device", "op", "frame"
};

/* The measure columns, after the key columns. */
static const char *const measures[] = {
	"count:n", "total_ns:n", "union_ns:n", "share_pct:n", "mean_ns:n",
	"p50_ns:n", "p90_ns:n", "max_ns:n", "bytes:n", "bytes_ns:n", "gbps:n"
};
#define NMEASURES (sizeof(measures) / sizeof(measures[0]))

int
kt_bucket_by_parse(struct kt_bucket_opts *o, const char *s)
{
	const char *p = s;
	size_t i;

	o->nby = 0;
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		int k = -1;

		for (i = 0; i < KT_NBY; i++)
			if (strlen(by_names[i]) == n &&
			    strncmp(by_names[i], p, n) == 0)
				k = (int)i;
		if (k == -1)
			return -1;
		for (i = 0; i < o->nby; i++)
			if (o->by[i] == k)
				return -1;
		o->by[o->nby++] = k;
		p += n;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	return o->nby > 0 ? 0 : -1;
}

/* Whether key k is among the grouping keys. */
static int
has(const struct kt_bucket_opts *o, int k)
{
	size_t i;

	for (i = 0; i < o->nby; i++)
		if (o->by[i] == k)
			return 1;
	return 0;
}

/* The column names of a table for these keys: a new array (free it). */
static const char **
columns(const struct kt_bucket_opts *o, size_t *n)
{
	const char **c;
	size_t i, k = 0;

	if ((c = calloc(3 + KT_NBY + NMEASURES, sizeof(*c))) == NULL)
		return NULL;
	c[k++] = "row";
	c[k++] = "rank:n";
	c[k++] = "device:n";
	for (i = 0; i < o->nby; i++)
		switch (o->by[i]) {
		case KT_BY_BUCKET:
			c[k++] = "bucket";
			break;
		case KT_BY_NAME:
			c[k++] = "name";
			break;
		case KT_BY_STREAM:
			c[k++] = "stream:n";
			break;
		case KT_BY_STEP:
			c[k++] = "step:n";
			break;
		case KT_BY_OP:
			c[k++] = "op";
			break;
		case KT_BY_FRAME:
			c[k++] = "frame";
			break;
		default:
			break;
		}
	for (i = 0; i < NMEASURES; i++)
		c[k++] = measures[i];
	*n = k;
	return c;
}

/* One activity with its group key. */
struct item {
	int64_t	 k[KT_NBY];
	int64_t	 dur;
	uint32_t act;
};

/* One output row. */
struct group {
	int64_t	 k[KT_NBY];
	int64_t	 count, total, uni, p50, p90, max, bytes, bytes_ns;
	int	 has_bytes;
	int	 busy;			/* a busy row */
};

/* What the comparisons and rows of one table need (no globals). */
struct bctx {
	const struct kt_model		*m;
	const struct kt_rules		*rules;
	const struct kt_bucket_opts	*o;
	int64_t				*op;	/* per activity: op name, -1 */
	int64_t				*frame;	/* per activity: into frames */
	struct kt_intern		*frames;
};

/* A text key's cell: op name, frame text, or "-". */
static const char *
key_text(const struct bctx *bc, int k, int64_t v)
{
	size_t n;

	if (v < 0)
		return "-";
	if (k == KT_BY_OP)
		return kt_model_str(bc->m, (uint32_t)v);
	return kt_intern_get(bc->frames, (uint32_t)v, &n);
}

/* Whether key k is text (compared and written as text). */
static int
text_key(int k)
{
	return k == KT_BY_BUCKET || k == KT_BY_NAME || k == KT_BY_OP ||
	    k == KT_BY_FRAME;
}

static int
cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Output order: numeric keys in --by order, then the largest total,
 * then the bucket and name texts. */
static int
cmp_group(const void *a, const void *b, void *ctx)
{
	const struct bctx *bc = ctx;
	const struct kt_model *sm = bc->m;
	const struct kt_rules *srules = bc->rules;
	const struct kt_bucket_opts *sopt = bc->o;
	const struct group *x = a, *y = b;
	size_t i;
	int c;

	if (x->busy != y->busy)
		return x->busy - y->busy;
	for (i = 0; i < sopt->nby; i++) {
		int k = sopt->by[i];

		if (text_key(k))
			continue;
		if ((c = cmp_i64(x->k[k], y->k[k])) != 0)
			return c;
	}
	if ((c = cmp_i64(y->total, x->total)) != 0)
		return c;
	if (has(sopt, KT_BY_BUCKET) && (c = strcmp(kt_rules_bucket_name(srules,
	    (uint32_t)x->k[KT_BY_BUCKET]), kt_rules_bucket_name(srules,
	    (uint32_t)y->k[KT_BY_BUCKET]))) != 0)
		return c;
	if (has(sopt, KT_BY_NAME) && (c = strcmp(kt_model_str(sm,
	    (uint32_t)x->k[KT_BY_NAME]), kt_model_str(sm,
	    (uint32_t)y->k[KT_BY_NAME]))) != 0)
		return c;
	if (has(sopt, KT_BY_OP) && (c = strcmp(key_text(bc, KT_BY_OP,
	    x->k[KT_BY_OP]), key_text(bc, KT_BY_OP, y->k[KT_BY_OP]))) != 0)
		return c;
	if (has(sopt, KT_BY_FRAME) && (c = strcmp(key_text(bc, KT_BY_FRAME,
	    x->k[KT_BY_FRAME]), key_text(bc, KT_BY_FRAME,
	    y->k[KT_BY_FRAME]))) != 0)
		return c;
	return 0;
}

/*
 * The sum over devices of the union of the activities order[0..n) (all
 * of them when order is NULL), which are in the model's (device, start)
 * order.
 */
static int64_t
union_order(const struct kt_model *m, const uint32_t *order, size_t n)
{
	int64_t t = 0, cs = 0, ce = 0;
	uint32_t cd = KT_NO;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct kt_act *a = &m->act[order ? order[i] : i];

		if (a->dev != cd || a->ts > ce) {
			t += ce - cs;
			cd = a->dev;
			cs = a->ts;
			ce = a->ts + a->dur;
		} else if (a->ts + a->dur > ce)
			ce = a->ts + a->dur;
	}
	return t + (ce - cs);
}

/* Append a number cell. */
static int
cell_int(struct kt_table *t, int64_t v)
{
	return kt_table_int(t, v);
}

/* Write group g as a row. */
static int
put_group(const struct bctx *bc, struct kt_table *t, const struct group *g,
    const char *row, int64_t busy_all)
{
	const struct kt_model *m = bc->m;
	const struct kt_rules *srules = bc->rules;
	const struct kt_bucket_opts *sopt = bc->o;
	size_t i;
	int star = g->busy == 2;	/* the total row */
	int r = 0;

	r |= kt_table_cell(t, row);
	/* rank and device */
	if (!star && (has(sopt, KT_BY_RANK) || has(sopt, KT_BY_DEVICE) ||
	    g->busy)) {
		int64_t rk = g->k[KT_BY_RANK];

		r |= rk < 0 ? kt_table_cell(t, "-") : cell_int(t, rk);
	} else
		r |= kt_table_cell(t, "*");
	if (!star && (has(sopt, KT_BY_DEVICE) || g->busy)) {
		int64_t ix = m->devices[g->k[KT_BY_DEVICE]].index;

		r |= ix < 0 ? kt_table_cell(t, "-") : cell_int(t, ix);
	} else
		r |= kt_table_cell(t, "*");
	for (i = 0; i < sopt->nby; i++)
		switch (sopt->by[i]) {
		case KT_BY_BUCKET:
			r |= g->busy ? kt_table_cell(t, "*") :
			    kt_table_cell(t, kt_rules_bucket_name(srules,
			    (uint32_t)g->k[KT_BY_BUCKET]));
			break;
		case KT_BY_NAME:
			r |= g->busy ? kt_table_cell(t, "*") :
			    kt_table_cell(t, kt_model_str(m,
			    (uint32_t)g->k[KT_BY_NAME]));
			break;
		case KT_BY_STREAM:
			r |= g->busy ? kt_table_cell(t, "*") :
			    g->k[KT_BY_STREAM] < 0 ? kt_table_cell(t, "-") :
			    cell_int(t, g->k[KT_BY_STREAM]);
			break;
		case KT_BY_STEP:
			r |= star ? kt_table_cell(t, "*") :
			    g->k[KT_BY_STEP] < 0 ? kt_table_cell(t, "-") :
			    cell_int(t, g->k[KT_BY_STEP]);
			break;
		case KT_BY_OP:
		case KT_BY_FRAME:
			r |= g->busy ? kt_table_cell(t, "*") :
			    kt_table_cell(t, key_text(bc, sopt->by[i],
			    g->k[sopt->by[i]]));
			break;
		default:
			break;
		}
	r |= cell_int(t, g->count);
	r |= cell_int(t, g->total);
	r |= cell_int(t, g->uni);
	/* A busy row's share is its union's; the others' their sum's (the
	 * total row's is over 100% when activities overlap). */
	r |= kt_table_pct(t, g->busy == 1 ? g->uni : g->total, busy_all);
	if (g->busy) {
		r |= kt_table_ratio(t, g->total, g->count, 0);
		for (i = 0; i < 3; i++)
			r |= kt_table_cell(t, "-");
	} else {
		r |= kt_table_ratio(t, g->total, g->count, 0);
		r |= cell_int(t, g->p50);
		r |= cell_int(t, g->p90);
		r |= cell_int(t, g->max);
	}
	if (g->has_bytes) {
		r |= cell_int(t, g->bytes);
		r |= cell_int(t, g->bytes_ns);
		r |= kt_table_ratio(t, g->bytes, g->bytes_ns, 2);
	} else
		for (i = 0; i < 3; i++)
			r |= kt_table_cell(t, "-");
	return r ? -1 : 0;
}

/* The key of activity i. */
static void
item_key(const struct bctx *bc, const uint32_t *bk, size_t i,
    struct item *it)
{
	const struct kt_bucket_opts *sopt = bc->o;
	const struct kt_model *m = bc->m;
	const struct kt_act *a = &m->act[i];

	memset(it->k, 0, sizeof(it->k));
	it->dur = a->dur;
	it->act = (uint32_t)i;
	if (has(sopt, KT_BY_BUCKET))
		it->k[KT_BY_BUCKET] = bk[i];
	if (has(sopt, KT_BY_NAME))
		it->k[KT_BY_NAME] = a->name;
	if (has(sopt, KT_BY_STREAM))
		it->k[KT_BY_STREAM] = a->stream;
	if (has(sopt, KT_BY_STEP))
		it->k[KT_BY_STEP] = a->step == KT_NO ? -1 :
		    m->steps[a->step].number;
	if (has(sopt, KT_BY_RANK) || has(sopt, KT_BY_DEVICE))
		it->k[KT_BY_RANK] = m->devices[a->dev].rank;
	if (has(sopt, KT_BY_DEVICE))
		it->k[KT_BY_DEVICE] = a->dev;
	if (has(sopt, KT_BY_OP))
		it->k[KT_BY_OP] = bc->op[i];
	if (has(sopt, KT_BY_FRAME))
		it->k[KT_BY_FRAME] = bc->frame[i];
}

/*
 * The op and frame keys of every activity, when asked for: the op's
 * name id, the frame text's id in bc->frames (-1: none).  0 or -1.
 */
static int
text_keys(struct bctx *bc)
{
	const struct kt_model *m = bc->m;
	size_t i, n = m->nact ? m->nact : 1;
	struct kt_chain ch;
	int64_t id;

	if (has(bc->o, KT_BY_OP)) {
		if ((bc->op = malloc(n * sizeof(*bc->op))) == NULL)
			return -1;
		for (i = 0; i < m->nact; i++) {
			uint32_t s = kt_model_op_of(m, (uint32_t)i);

			bc->op[i] = s == KT_NO ? -1 : (int64_t)m->spans[s].name;
		}
	}
	if (has(bc->o, KT_BY_FRAME)) {
		struct kt_buf b = KT_BUF_INIT;

		if (bc->o->chains == NULL ||
		    (bc->frame = malloc(n * sizeof(*bc->frame))) == NULL ||
		    (bc->frames = kt_intern_new()) == NULL)
			return -1;
		for (i = 0; i < m->nact; i++) {
			if (kt_chain_get(bc->o->chains, (uint32_t)i, &ch) == -1)
				goto fail;
			bc->frame[i] = -1;
			if (ch.frame_text == NULL)
				continue;
			/* NUL-terminated: the cell is its text. */
			kt_buf_clear(&b);
			kt_buf_add(&b, ch.frame_text, ch.frame_len);
			if (kt_buf_addc(&b, '\0') == -1 ||
			    (id = kt_intern_put(bc->frames, b.p, b.n)) == -1)
				goto fail;
			bc->frame[i] = id;
		}
		kt_buf_free(&b);
		return 0;
fail:
		kt_buf_free(&b);
		return -1;
	}
	return 0;
}

struct kt_table *
kt_bucket_table(const struct kt_model *m, const struct kt_bucket_opts *o)
{
	struct kt_table *t = NULL;
	struct kt_intern *keys = NULL;
	struct bctx bc;
	struct item it0;
	struct group *g = NULL;
	struct kt_pair *durs = NULL;
	const char **cols = NULL;
	uint32_t *own = NULL, *gid = NULL, *order = NULL;
	const uint32_t *bk = o->classes;
	size_t *start = NULL;
	struct kt_table *t2 = NULL;
	size_t ncols, i, j, k, ng = 0;
	int64_t busy_all, sum_all = 0;

	memset(&bc, 0, sizeof(bc));
	bc.m = m;
	bc.rules = o->rules;
	bc.o = o;
	if (text_keys(&bc) == -1 || (cols = columns(o, &ncols)) == NULL ||
	    (t = kt_table_new(cols, ncols)) == NULL ||
	    (bk == NULL && (bk = own = kt_rules_classify(o->rules, m)) ==
	    NULL))
		goto fail;
	/*
	 * Number the groups (interning each activity's key), then order
	 * the activities by group with a counting sort: within a group they
	 * stay in the model's (device, start) order, so that a union is one
	 * sweep, and only the durations need sorting (for percentiles).
	 */
	if ((keys = kt_intern_new()) == NULL ||
	    (gid = malloc((m->nact ? m->nact : 1) * sizeof(*gid))) == NULL)
		goto fail;
	for (i = 0; i < m->nact; i++) {
		int64_t id;

		item_key(&bc, bk, i, &it0);
		if ((id = kt_intern_put(keys, (const char *)it0.k,
		    sizeof(it0.k))) == -1)
			goto fail;
		gid[i] = (uint32_t)id;
		sum_all += m->act[i].dur;
	}
	busy_all = union_order(m, NULL, m->nact);
	ng = kt_intern_count(keys);
	if ((g = kt_zalloc(ng ? ng : 1, sizeof(*g))) == NULL ||
	    (start = kt_zalloc(ng + 1, sizeof(*start))) == NULL ||
	    (order = malloc((m->nact ? m->nact : 1) * sizeof(*order))) ==
	    NULL || (durs = malloc((m->nact ? m->nact : 1) *
	    sizeof(*durs))) == NULL)
		goto fail;
	for (i = 0; i < m->nact; i++)
		start[gid[i] + 1]++;
	for (k = 0; k < ng; k++)
		start[k + 1] += start[k];
	for (i = 0; i < m->nact; i++)
		order[start[gid[i]]++] = (uint32_t)i;
	for (k = ng; k > 0; k--)
		start[k] = start[k - 1];
	start[0] = 0;
	for (k = 0; k < ng; k++) {
		size_t a0 = start[k], n = start[k + 1] - start[k];
		struct group *gg = &g[k];

		item_key(&bc, bk, order[a0], &it0);
		memcpy(gg->k, it0.k, sizeof(gg->k));
		gg->count = (int64_t)n;
		for (j = 0; j < n; j++) {
			const struct kt_act *a = &m->act[order[a0 + j]];
			int64_t b = kt_act_bytes(m, a);

			durs[j].key = (uint64_t)a->dur;
			durs[j].val = 0;
			gg->total += a->dur;
			if (b >= 0) {
				gg->bytes += b;
				gg->bytes_ns += a->dur;
				gg->has_bytes = 1;
			}
		}
		if (kt_sort_pairs(durs, n) == -1)
			goto fail;
		/* Nearest-rank percentiles of the sorted durations. */
		gg->p50 = (int64_t)durs[(n * 50 + 99) / 100 - 1].key;
		gg->p90 = (int64_t)durs[(n * 90 + 99) / 100 - 1].key;
		gg->max = (int64_t)durs[n - 1].key;
		gg->uni = union_order(m, order + a0, n);
	}
	kt_sort_r(g, ng, sizeof(*g), cmp_group, &bc);
	for (i = 0; i < ng; i++)
		if (put_group(&bc, t, &g[i], "group", busy_all) == -1)
			goto fail;
	/* Busy rows: per device, and per step of it when grouped by step. */
	for (i = 0; i < m->ndevices; i++) {
		const struct kt_device *d = &m->devices[i];
		size_t ns = has(o, KT_BY_STEP) ? m->nsteps + 1 : 1, s;
		struct group *bs;

		if (d->nact == 0)
			continue;
		if ((bs = kt_zalloc(ns, sizeof(*bs))) == NULL)
			goto fail;
		for (s = 0; s < ns; s++) {
			bs[s].busy = 1;
			bs[s].k[KT_BY_RANK] = d->rank;
			bs[s].k[KT_BY_DEVICE] = (int64_t)i;
			bs[s].k[KT_BY_STEP] = s + 1 == ns ? -1 :
			    m->steps[s].number;
			bs[s].p50 = -1;	/* the current interval's start */
		}
		for (k = d->first; k < (size_t)d->first + d->nact; k++) {
			const struct kt_act *a = &m->act[k];
			struct group *b = &bs[ns == 1 || a->step == KT_NO ?
			    ns - 1 : a->step];

			b->count++;
			b->total += a->dur;
			/* p50/p90 hold the running interval here. */
			if (b->p50 == -1 || a->ts > b->p90) {
				if (b->p50 != -1)
					b->uni += b->p90 - b->p50;
				b->p50 = a->ts;
				b->p90 = a->ts + a->dur;
			} else if (a->ts + a->dur > b->p90)
				b->p90 = a->ts + a->dur;
		}
		/* A step's busy is its step window's (kt(7) Step windows). */
		if (ns > 1) {
			struct kt_stepwin *sw;
			size_t nsw, q;

			if (kt_step_windows(m, (uint32_t)i, &sw, &nsw) == -1) {
				free(bs);
				goto fail;
			}
			for (q = 0; q < nsw; q++) {
				bs[sw[q].step].p50 = -1;
				bs[sw[q].step].uni = sw[q].busy;
			}
			free(sw);
		}
		/* Rows: no step first, then steps in order. */
		for (s = 0; s < ns; s++) {
			size_t at = s == 0 ? ns - 1 : s - 1;
			struct group *b = &bs[at];

			if (b->count == 0)
				continue;
			if (b->p50 != -1)
				b->uni += b->p90 - b->p50;
			if (put_group(&bc, t, b, "busy", busy_all) == -1) {
				free(bs);
				goto fail;
			}
		}
		free(bs);
	}
	/* The total row. */
	{
		struct group tot;

		memset(&tot, 0, sizeof(tot));
		tot.busy = 2;
		tot.count = (int64_t)m->nact;
		tot.total = sum_all;
		tot.uni = busy_all;
		tot.k[KT_BY_STEP] = -1;
		if (put_group(&bc, t, &tot, "total", busy_all) == -1)
			goto fail;
	}
	t2 = t;
	t = NULL;
fail:
	kt_intern_free(keys);
	free(gid);
	free(start);
	free(order);
	free(durs);
	free(g);
	free(own);
	free(cols);
	free(bc.op);
	free(bc.frame);
	kt_intern_free(bc.frames);
	kt_table_free(t);
	return t2;
}

/* ------------------------------------------------------------------ */
/* Merging tables (lib/model/merge.c does the work). */

static const struct kt_merge_col merge_cols[] = {
	{ "row", KT_MERGE_KEY, 0, 1, NULL, NULL, 0, NULL, NULL },
	{ "rank", KT_MERGE_KEY, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "device", KT_MERGE_KEY, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "bucket", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "name", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "stream", KT_MERGE_KEY, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "step", KT_MERGE_KEY, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "op", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "frame", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "count", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "total_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "union_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	/* A busy row's share is its union's, the others' their sum's. */
	{ "share_pct", KT_MERGE_PCT, 1, 1, "total_ns", "union_ns", 0,
	  "union_ns", "busy" },
	{ "mean_ns", KT_MERGE_RATIO, 1, 1, "total_ns", "count", 0, NULL,
	  NULL },
	{ "p50_ns", KT_MERGE_PCTL, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "p90_ns", KT_MERGE_PCTL, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "max_ns", KT_MERGE_MAX, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "bytes", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "bytes_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "gbps", KT_MERGE_RATIO, 1, 1, "bytes", "bytes_ns", 2, NULL, NULL }
};
#define NMERGECOLS	(sizeof(merge_cols) / sizeof(merge_cols[0]))
#define MC_ROW		0
#define MC_TOTAL	10

/* group rows, then busy rows, then the total row. */
static int
merge_section(const struct kt_merge_row *r, const struct kt_merge_spec *sp)
{
	(void)sp;
	return strcmp(r->cell[MC_ROW], "busy") == 0 ? 1 :
	    strcmp(r->cell[MC_ROW], "total") == 0 ? 2 : 0;
}

/* The numeric key cells in column order, the largest total, the keys. */
static int
merge_cmp(const struct kt_merge_row *x, const struct kt_merge_row *y,
    const struct kt_merge_spec *sp, const void *ctx)
{
	int64_t a = 0, b = 0;
	size_t i;
	int c;

	(void)ctx;
	for (i = 1; i < x->nhdr; i++) {
		const struct kt_merge_col *mc = &sp->cols[x->hdr[i]];

		if (mc->role == KT_MERGE_KEY && mc->num &&
		    (c = kt_merge_cmp_cells(x->cell[x->hdr[i]],
		    y->cell[x->hdr[i]])) != 0)
			return c;
	}
	kt_merge_int(x->cell[MC_TOTAL], &a);
	kt_merge_int(y->cell[MC_TOTAL], &b);
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(x->key, y->key);
}

static const struct kt_merge_spec merge_spec = {
	"kt-bucket", merge_cols, NMERGECOLS, "row", "row", "total", 0,
	merge_section, merge_cmp, NULL, NULL, NULL
};

struct kt_table *
kt_bucket_merge(char *const *paths, size_t npaths, struct kt_error *err)
{
	return kt_merge_tables(&merge_spec, paths, npaths, 0, err);
}
