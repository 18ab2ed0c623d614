/*
 * ops.c: the op table of kt-ops (and kt views): per CPU op name,
 * optionally also per input shapes, user frame or rank, its calls,
 * total and self CPU time, total and self GPU time of the activities
 * it launched, averages and shares, the longest call's row id.
 *
 * The definitions (kt-ops(1) states them for the user):
 * - The op tree of a thread is its cpu_op, user_annotation,
 *   ProfilerStep#N, cuda_runtime and cuda_driver spans, each the child
 *   of the innermost such span that contains it (python_function frames
 *   are not in the tree).  An op's self CPU time is its duration less
 *   its children's, at least 0.
 * - A GPU activity's time is the self GPU time of the innermost cpu_op,
 *   user_annotation or step around its launching call, else of the call
 *   itself; an op's total GPU time adds its descendants'.
 * - A row sums its calls, so an op called inside an op of its own name
 *   counts in both (as key_averages() does).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

#define BY_SHAPE	KT_OPS_BY_SHAPE
#define BY_FRAME	KT_OPS_BY_FRAME
#define BY_RANK		KT_OPS_BY_RANK

/* The kinds in the op tree. */
#define TREE	KT_OPS_KINDS
/* The kinds that own the GPU time of what is launched under them. */
#define OWNERS	(1u << KT_CPU_OP | 1u << KT_USER_ANNOTATION | 1u << KT_STEP)

/* The columns; their order in the table (key columns as --by asks). */
enum col {
	C_KIND, C_NAME, C_RANK, C_SHAPES, C_FRAME, C_CALLS, C_CPU_TOTAL,
	C_CPU_SELF, C_CPU_AVG, C_CPU_SELF_PCT, C_CPU_TOTAL_PCT, C_GPU_SELF,
	C_GPU_TOTAL, C_GPU_AVG, C_GPU_SELF_PCT, C_GPU_TOTAL_PCT, C_LAUNCHES,
	C_LONGEST, C_LONGEST_ROW, C_NCOLS
};

static const char *const colnames[C_NCOLS] = {
	"kind", "name", "rank", "shapes", "frame", "calls:n",
	"cpu_total_ns:n", "cpu_self_ns:n", "cpu_avg_ns:n", "cpu_self_pct:n",
	"cpu_total_pct:n", "gpu_self_ns:n", "gpu_total_ns:n", "gpu_avg_ns:n",
	"gpu_self_pct:n", "gpu_total_pct:n", "launches:n", "longest_ns:n",
	"longest_row"
};

/* One row: a group of calls. */
struct group {
	uint8_t		 kind;
	uint32_t	 name;		/* interned in the model; KT_NO: the
					   steps, "ProfilerStep#*" */
	int64_t		 rank;
	uint32_t	 shapes;	/* interned, or KT_NO */
	uint32_t	 frame;		/* into ops.frames, or KT_NO */
	int64_t		 calls, cpu_total, cpu_self, gpu_self, gpu_total;
	int64_t		 launches, longest;
	uint32_t	 longest_span;
};

/* One table's state. */
struct ops {
	const struct kt_model	*m;
	struct kt_chains	*ch;
	unsigned		 by;
	unsigned		 kinds;		/* bit (1 << kind) per row kind */
	enum col		 sort;
	int64_t			 limit;		/* -1: all */
	int			 totals;	/* the total row */
	int			 nomem;		/* sticky: out of memory */
	int			 range;		/* sticky: a sum out of range */
	struct kt_intern	*frames;	/* frame texts, NUL-terminated */
	uint32_t		*tparent;	/* per span: tree parent, KT_NO */
	int64_t			*self;		/* per span: self CPU ns */
	int64_t			*gself;		/* per span: self GPU ns */
	int64_t			*gtotal;	/* per span: total GPU ns */
	uint32_t		*nlaunch;	/* per span: activities owned */
	struct kt_intern	*keys;		/* group key -> group */
	/*
	 * Grouped by kind and name alone: group + 1 (0: none yet) by
	 * kind and name id (KT_NO: the last), instead of keys.
	 */
	uint32_t		*direct;
	size_t			 nnames;
	uint8_t			 slot[KT_NKINDS];	/* a kind's, in direct */
	struct group		*groups;
	size_t			 ngroups, cap;
	int64_t			 cpu_sum;	/* every tree span's self */
	int64_t			 gpu_sum;	/* every activity's dur */
	struct kt_ops_totals	 tot;
};

/* a + b; out of range: a, and the table fails (sticky). */
static int64_t
add(struct ops *o, int64_t a, int64_t b)
{
	int64_t s;

	if (kt_time_add(a, b, &s) == -1) {
		o->range = 1;
		return a;
	}
	return s;
}

/*
 * The op tree: a second containment walk over each thread's spans (in
 * the model's order, parents first), of tree kinds only, with the
 * model's rule of containment; then self CPU time.
 */
static int
tree(struct ops *o)
{
	const struct kt_model *m = o->m;
	uint32_t *stack = NULL;
	int64_t *kids = NULL;
	size_t i, t, n = m->nspans ? m->nspans : 1;

	if ((o->tparent = malloc(n * sizeof(*o->tparent))) == NULL ||
	    (o->self = kt_zalloc(n, sizeof(*o->self))) == NULL ||
	    (kids = kt_zalloc(n, sizeof(*kids))) == NULL ||
	    (stack = malloc(n * sizeof(*stack))) == NULL) {
		free(kids);
		return -1;
	}
	for (t = 0; t < m->nthreads; t++) {
		const struct kt_thread *th = &m->threads[t];
		size_t sp = 0;

		for (i = th->first; i < (size_t)th->first + th->nspans; i++) {
			const struct kt_span *s = &m->spans[i];

			o->tparent[i] = KT_NO;
			if (!(TREE & 1u << s->kind))
				continue;
			while (sp > 0) {
				const struct kt_span *p = &m->spans[stack[sp - 1]];

				if (p->ts <= s->ts &&
				    s->ts + s->dur <= p->ts + p->dur &&
				    (s->ts < p->ts + p->dur || p->dur == 0))
					break;
				sp--;
			}
			if (sp > 0) {
				o->tparent[i] = stack[sp - 1];
				kids[stack[sp - 1]] = add(o, kids[stack[sp - 1]],
				    s->dur);
			}
			stack[sp++] = (uint32_t)i;
		}
	}
	for (i = 0; i < m->nspans; i++) {
		if (!(TREE & 1u << m->spans[i].kind))
			continue;
		o->self[i] = m->spans[i].dur - kids[i];
		if (o->self[i] < 0) {
			o->self[i] = 0;
			o->tot.clamped++;
		}
		o->cpu_sum = add(o, o->cpu_sum, o->self[i]);
		o->tot.calls++;
	}
	free(kids);
	free(stack);
	return 0;
}

/*
 * GPU time: each activity to its owner (the innermost cpu_op,
 * annotation or step above its call in the tree, else the call), then
 * up the tree, children before parents (the spans in reverse order).
 */
static int
gpu(struct ops *o)
{
	const struct kt_model *m = o->m;
	size_t i, n = m->nspans ? m->nspans : 1;

	if ((o->gself = kt_zalloc(n, sizeof(*o->gself))) == NULL ||
	    (o->gtotal = kt_zalloc(n, sizeof(*o->gtotal))) == NULL ||
	    (o->nlaunch = kt_zalloc(n, sizeof(*o->nlaunch))) == NULL)
		return -1;
	for (i = 0; i < m->nact; i++) {
		const struct kt_act *a = &m->act[i];
		uint32_t s, own;

		o->gpu_sum = add(o, o->gpu_sum, a->dur);
		if (a->launch == KT_NO) {
			o->tot.lost++;
			o->tot.lost_ns = add(o, o->tot.lost_ns, a->dur);
			continue;
		}
		own = a->launch;
		for (s = o->tparent[a->launch]; s != KT_NO; s = o->tparent[s])
			if (OWNERS & 1u << m->spans[s].kind) {
				own = s;
				break;
			}
		o->gself[own] = add(o, o->gself[own], a->dur);
		o->nlaunch[own]++;
	}
	for (i = 0; i < m->nspans; i++)
		o->gtotal[i] = o->gself[i];
	for (i = m->nspans; i-- > 0; )
		if (o->tparent[i] != KT_NO)
			o->gtotal[o->tparent[i]] = add(o,
			    o->gtotal[o->tparent[i]], o->gtotal[i]);
	return 0;
}

/* Keep g as a new last group.  0 or -1. */
static int
new_group(struct ops *o, struct group *g)
{
	if (o->ngroups == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 256;
		struct group *ng = realloc(o->groups, nc * sizeof(*ng));

		if (ng == NULL)
			return -1;
		o->groups = ng;
		o->cap = nc;
	}
	g->longest = -1;
	o->groups[o->ngroups++] = *g;
	return 0;
}

/* The group of span s (made when new). */
static struct group *
group_of(struct ops *o, uint32_t s, struct kt_buf *key)
{
	const struct kt_model *m = o->m;
	const struct kt_span *sp = &m->spans[s];
	struct group g;
	int64_t id;

	memset(&g, 0, sizeof(g));
	g.kind = sp->kind;
	g.name = sp->kind == KT_STEP ? KT_NO : sp->name;
	g.rank = (o->by & BY_RANK) ? m->threads[sp->thread].rank : -1;
	g.shapes = g.frame = KT_NO;
	if (o->direct != NULL) {
		size_t at = (size_t)o->slot[g.kind] * (o->nnames + 1) + (g.name ==
		    KT_NO || g.name >= o->nnames ? o->nnames : g.name);

		if (o->direct[at] != 0)
			return &o->groups[o->direct[at] - 1];
		id = (int64_t)o->ngroups;
		if (new_group(o, &g) == -1)
			return NULL;
		o->direct[at] = (uint32_t)id + 1;
		return &o->groups[id];
	}
	if (o->by & BY_SHAPE) {
		const struct kt_stack *k = kt_model_row(m->shapes, m->nshapes,
		    sizeof(*m->shapes), sp->index, m->threads[sp->thread].rank);

		if (k != NULL)
			g.shapes = k->text;
	}
	if (o->by & BY_FRAME) {
		const char *text;
		size_t len;
		uint32_t f = kt_chains_frame_of(o->ch, s, &text, &len);

		if (f != KT_NO) {
			kt_buf_clear(key);
			kt_buf_add(key, text, len);
			if (kt_buf_addc(key, '\0') == -1 ||
			    (id = kt_intern_put(o->frames, key->p, key->n)) == -1)
				return NULL;
			g.frame = (uint32_t)id;
		}
	}
	kt_buf_clear(key);
	kt_buf_add(key, &g.kind, sizeof(g.kind));
	kt_buf_add(key, &g.name, sizeof(g.name));
	kt_buf_add(key, &g.rank, sizeof(g.rank));
	kt_buf_add(key, &g.shapes, sizeof(g.shapes));
	if (kt_buf_add(key, &g.frame, sizeof(g.frame)) == -1 ||
	    (id = kt_intern_put(o->keys, key->p, key->n)) == -1)
		return NULL;
	if ((size_t)id == o->ngroups && new_group(o, &g) == -1)
		return NULL;
	return &o->groups[id];
}

static int
fold(struct ops *o)
{
	const struct kt_model *m = o->m;
	struct kt_buf key = KT_BUF_INIT;
	size_t i;

	if ((o->keys = kt_intern_new()) == NULL ||
	    (o->frames = kt_intern_new()) == NULL)
		return -1;
	/*
	 * By kind and name alone (and rank, when every thread has the
	 * same): a table, not a hash of each key.
	 */
	for (i = 1; (o->by & BY_RANK) && i < m->nthreads &&
	    m->threads[i].rank == m->threads[0].rank; i++)
		;
	if (!(o->by & (BY_SHAPE | BY_FRAME)) && (!(o->by & BY_RANK) ||
	    i >= m->nthreads)) {
		size_t nk = 0, k;

		for (k = 0; k < KT_NKINDS; k++)
			if (o->kinds & 1u << k)
				o->slot[k] = (uint8_t)nk++;
		o->nnames = kt_intern_count(m->names);
		if ((o->direct = kt_zalloc((nk ? nk : 1) * (o->nnames + 1),
		    sizeof(*o->direct))) == NULL)
			return -1;
	}
	for (i = 0; i < m->nspans; i++) {
		const struct kt_span *s = &m->spans[i];
		struct group *g;

		if (!(o->kinds & 1u << s->kind))
			continue;
		if ((g = group_of(o, (uint32_t)i, &key)) == NULL) {
			kt_buf_free(&key);
			return -1;
		}
		g->calls++;
		g->cpu_total = add(o, g->cpu_total, s->dur);
		g->cpu_self = add(o, g->cpu_self, o->self[i]);
		g->gpu_self = add(o, g->gpu_self, o->gself[i]);
		g->gpu_total = add(o, g->gpu_total, o->gtotal[i]);
		g->launches += o->nlaunch[i];
		if (s->dur > g->longest) {
			g->longest = s->dur;
			g->longest_span = (uint32_t)i;
		}
	}
	kt_buf_free(&key);
	return 0;
}

/* A numeric column's value for sorting. */
static int64_t
num(const struct group *g, enum col c)
{
	switch (c) {
	case C_CALLS:
		return g->calls;
	case C_CPU_TOTAL:
	case C_CPU_TOTAL_PCT:
		return g->cpu_total;
	case C_CPU_SELF:
	case C_CPU_SELF_PCT:
		return g->cpu_self;
	case C_CPU_AVG:
		return g->cpu_total / g->calls;
	case C_GPU_SELF:
	case C_GPU_SELF_PCT:
		return g->gpu_self;
	case C_GPU_TOTAL:
	case C_GPU_TOTAL_PCT:
		return g->gpu_total;
	case C_GPU_AVG:
		return g->gpu_total / g->calls;
	case C_LAUNCHES:
		return g->launches;
	case C_LONGEST:
		return g->longest;
	default:
		return 0;
	}
}

static int
cmp_text(const char *a, const char *b)
{
	int c = strcmp(a, b);

	return c < 0 ? -1 : c > 0;
}

/* A group's text cell for column c (borrowed). */
static const char *
text(const struct ops *o, const struct group *g, enum col c)
{
	size_t n;

	switch (c) {
	case C_KIND:
		return kt_kind_name((enum kt_kind)g->kind);
	case C_NAME:
		return g->name == KT_NO ? "ProfilerStep#*" :
		    kt_model_str(o->m, g->name);
	case C_SHAPES:
		return g->shapes != KT_NO ? kt_model_str(o->m, g->shapes) : "-";
	case C_FRAME:
		return g->frame != KT_NO ?
		    kt_intern_get(o->frames, g->frame, &n) : "-";
	default:
		return "";
	}
}

static int
cmp_group(const void *a, const void *b, void *ctx)
{
	const struct ops *o = ctx;
	const struct group *x = a, *y = b;
	enum col c = o->sort;
	int r;

	if (c == C_RANK) {
		if (x->rank != y->rank)
			return x->rank < y->rank ? -1 : 1;
	} else if (c == C_LONGEST_ROW) {
		uint64_t p = o->m->spans[x->longest_span].index;
		uint64_t q = o->m->spans[y->longest_span].index;

		if (p != q)
			return p < q ? -1 : 1;
	} else if (c <= C_FRAME) {
		if ((r = cmp_text(text(o, x, c), text(o, y, c))) != 0)
			return r;
	} else if (num(x, c) != num(y, c))
		return num(x, c) > num(y, c) ? -1 : 1;
	/* Ties: the most CPU time first, then by the key's text. */
	if (x->cpu_total != y->cpu_total)
		return x->cpu_total > y->cpu_total ? -1 : 1;
	if ((r = cmp_text(text(o, x, C_NAME), text(o, y, C_NAME))) != 0 ||
	    (r = cmp_text(text(o, x, C_KIND), text(o, y, C_KIND))) != 0 ||
	    (r = cmp_text(text(o, x, C_SHAPES), text(o, y, C_SHAPES))) != 0 ||
	    (r = cmp_text(text(o, x, C_FRAME), text(o, y, C_FRAME))) != 0)
		return r;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Whether column c is in the table. */
static int
shown(const struct ops *o, enum col c)
{
	return (c != C_RANK || (o->by & BY_RANK)) &&
	    (c != C_SHAPES || (o->by & BY_SHAPE)) &&
	    (c != C_FRAME || (o->by & BY_FRAME));
}

/*
 * The total row (--totals): every call of the op tree, the self CPU
 * time of every span and the time of every GPU activity, the wholes of
 * the shares, so that a merge of per-rank tables computes them again.
 */
static int
total_row(const struct ops *o, struct kt_table *t)
{
	int rc = 0, c;

	for (c = 0; c < C_NCOLS; c++) {
		if (!shown(o, (enum col)c))
			continue;
		switch (c) {
		case C_KIND:
			rc |= kt_table_cell(t, "total");
			break;
		case C_CALLS:
			rc |= kt_table_int(t, (int64_t)o->tot.calls);
			break;
		case C_CPU_TOTAL:
		case C_CPU_SELF:
			rc |= kt_table_int(t, o->cpu_sum);
			break;
		case C_CPU_AVG:
			rc |= kt_table_ratio(t, o->cpu_sum,
			    (int64_t)o->tot.calls, 0);
			break;
		case C_CPU_SELF_PCT:
		case C_CPU_TOTAL_PCT:
			rc |= kt_table_pct(t, o->cpu_sum, o->cpu_sum);
			break;
		case C_GPU_SELF:
		case C_GPU_TOTAL:
			rc |= kt_table_int(t, o->gpu_sum);
			break;
		case C_GPU_AVG:
			rc |= kt_table_ratio(t, o->gpu_sum,
			    (int64_t)o->tot.calls, 0);
			break;
		case C_GPU_SELF_PCT:
		case C_GPU_TOTAL_PCT:
			rc |= kt_table_pct(t, o->gpu_sum, o->gpu_sum);
			break;
		case C_LAUNCHES:
		case C_LONGEST:
		case C_LONGEST_ROW:
			rc |= kt_table_cell(t, "-");
			break;
		default:	/* name, rank, shapes, frame */
			rc |= kt_table_cell(t, "*");
		}
	}
	return rc ? -1 : 0;
}

static struct kt_table *
table(struct ops *o)
{
	const char *cols[C_NCOLS];
	struct kt_table *t;
	size_t i, nc = 0, n;
	int c;

	for (c = 0; c < C_NCOLS; c++)
		if (shown(o, (enum col)c))
			cols[nc++] = colnames[c];
	if ((t = kt_table_new(cols, nc)) == NULL)
		return NULL;
	kt_sort_r(o->groups, o->ngroups, sizeof(*o->groups), cmp_group, o);
	n = o->limit >= 0 && (size_t)o->limit < o->ngroups ?
	    (size_t)o->limit : o->ngroups;
	for (i = 0; i < n; i++) {
		const struct group *g = &o->groups[i];
		const struct kt_span *ls = &o->m->spans[g->longest_span];
		int rc = 0;

		for (c = 0; c < C_NCOLS; c++) {
			if (!shown(o, (enum col)c))
				continue;
			switch (c) {
			case C_RANK:
				rc |= g->rank >= 0 ? kt_table_int(t, g->rank) :
				    kt_table_cell(t, "-");
				break;
			case C_CPU_AVG:
				rc |= kt_table_ratio(t, g->cpu_total, g->calls,
				    0);
				break;
			case C_GPU_AVG:
				rc |= kt_table_ratio(t, g->gpu_total, g->calls,
				    0);
				break;
			case C_CPU_SELF_PCT:
				rc |= kt_table_pct(t, g->cpu_self, o->cpu_sum);
				break;
			case C_CPU_TOTAL_PCT:
				rc |= kt_table_pct(t, g->cpu_total, o->cpu_sum);
				break;
			case C_GPU_SELF_PCT:
				rc |= kt_table_pct(t, g->gpu_self, o->gpu_sum);
				break;
			case C_GPU_TOTAL_PCT:
				rc |= kt_table_pct(t, g->gpu_total, o->gpu_sum);
				break;
			case C_LONGEST_ROW:
				rc |= kt_table_rowid(t, ls->kind, ls->index);
				break;
			default:
				rc |= c <= C_FRAME ?
				    kt_table_cell(t, text(o, g, (enum col)c)) :
				    kt_table_int(t, num(g, (enum col)c));
			}
		}
		if (rc != 0) {
			kt_table_free(t);
			return NULL;
		}
	}
	if (o->totals && total_row(o, t) == -1) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

int
kt_ops_column(const char *name, unsigned by)
{
	size_t i, n = strlen(name);
	struct ops o;

	memset(&o, 0, sizeof(o));
	o.by = by;
	for (i = 0; i < C_NCOLS; i++) {
		const char *c = strchr(colnames[i], ':');
		size_t cn = c != NULL ? (size_t)(c - colnames[i]) :
		    strlen(colnames[i]);

		if (cn == n && strncmp(colnames[i], name, n) == 0)
			return shown(&o, (enum col)i) ? (int)i : -2;
	}
	return -1;
}

struct kt_table *
kt_ops_table(const struct kt_model *m, const struct kt_ops_opts *opts,
    struct kt_ops_totals *tot, struct kt_error *err)
{
	struct kt_table *t = NULL;
	struct ops o;
	int c;

	memset(&o, 0, sizeof(o));
	o.m = m;
	o.ch = opts->chains;
	o.by = opts->by;
	o.kinds = opts->kinds ? opts->kinds : TREE;
	o.limit = opts->limit;
	o.totals = opts->totals;
	o.sort = C_GPU_TOTAL;
	if (opts->sort != NULL) {
		if ((c = kt_ops_column(opts->sort, o.by)) < 0) {
			kt_error_set(err, NULL, 0, 0, "--sort: %s '%s'",
			    c == -1 ? "no column" : "not a column without --by",
			    opts->sort);
			return NULL;
		}
		o.sort = (enum col)c;
	}
	if ((o.by & BY_FRAME) && o.ch == NULL) {
		kt_error_set(err, NULL, 0, 0, "ops by frame without chains");
		return NULL;
	}
	if (tree(&o) == -1 || gpu(&o) == -1 || fold(&o) == -1 ||
	    (!o.range && (t = table(&o)) == NULL))
		kt_error_set(err, NULL, 0, 0, "out of memory");
	else if (o.range)
		kt_error_set(err, NULL, 0, 0, "a sum of times is out of "
		    "range (over %lld ns)", (long long)KT_TIME_MAX);
	if (tot != NULL)
		*tot = o.tot;
	kt_intern_free(o.keys);
	kt_intern_free(o.frames);
	free(o.direct);
	free(o.tparent);
	free(o.self);
	free(o.gself);
	free(o.gtotal);
	free(o.nlaunch);
	free(o.groups);
	if (o.range) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}


/* ------------------------------------------------------------------ */
/* Merging per-rank tables (lib/model/merge.c). */

static const struct kt_merge_col merge_cols[] = {
	{ "kind", KT_MERGE_KEY, 0, 1, NULL, NULL, 0, NULL, NULL },
	{ "name", KT_MERGE_KEY, 0, 1, NULL, NULL, 0, NULL, NULL },
	{ "rank", KT_MERGE_KEY, 1, 0, NULL, NULL, 0, NULL, NULL },
	{ "shapes", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "frame", KT_MERGE_KEY, 0, 0, NULL, NULL, 0, NULL, NULL },
	{ "calls", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "cpu_total_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "cpu_self_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "cpu_avg_ns", KT_MERGE_RATIO, 1, 1, "cpu_total_ns", "calls", 0,
	  NULL, NULL },
	{ "cpu_self_pct", KT_MERGE_PCT, 1, 1, "cpu_self_ns", "cpu_self_ns", 0,
	  NULL, NULL },
	{ "cpu_total_pct", KT_MERGE_PCT, 1, 1, "cpu_total_ns", "cpu_self_ns",
	  0, NULL, NULL },
	{ "gpu_self_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "gpu_total_ns", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "gpu_avg_ns", KT_MERGE_RATIO, 1, 1, "gpu_total_ns", "calls", 0,
	  NULL, NULL },
	{ "gpu_self_pct", KT_MERGE_PCT, 1, 1, "gpu_self_ns", "gpu_self_ns", 0,
	  NULL, NULL },
	{ "gpu_total_pct", KT_MERGE_PCT, 1, 1, "gpu_total_ns", "gpu_self_ns",
	  0, NULL, NULL },
	{ "launches", KT_MERGE_SUM, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "longest_ns", KT_MERGE_MAX, 1, 1, NULL, NULL, 0, NULL, NULL },
	{ "longest_row", KT_MERGE_ROWID, 0, 1, "longest_ns", NULL, 0, NULL,
	  NULL }
};
#define NMERGECOLS	(sizeof(merge_cols) / sizeof(merge_cols[0]))

/* The ops, then the total row. */
static int
merge_section(const struct kt_merge_row *r, const struct kt_merge_spec *sp)
{
	(void)sp;
	return strcmp(r->cell[C_KIND], "total") == 0;
}

static int
merge_num(const struct kt_merge_row *x, const struct kt_merge_row *y,
    enum col c)
{
	int64_t a = 0, b = 0;

	kt_merge_int(x->cell[c], &a);
	kt_merge_int(y->cell[c], &b);
	return a > b ? -1 : a < b;
}

/* kt_ops_table's default order: gpu_total_ns, then the ties' order. */
static int
merge_cmp(const struct kt_merge_row *x, const struct kt_merge_row *y,
    const struct kt_merge_spec *sp, const void *ctx)
{
	static const enum col text_cols[] = { C_NAME, C_KIND, C_SHAPES,
	    C_FRAME };
	size_t i;
	int r;

	(void)sp;
	(void)ctx;
	if ((r = merge_num(x, y, C_GPU_TOTAL)) != 0 ||
	    (r = merge_num(x, y, C_CPU_TOTAL)) != 0)
		return r;
	for (i = 0; i < sizeof(text_cols) / sizeof(text_cols[0]); i++)
		if (x->cell[text_cols[i]] != NULL &&
		    (r = cmp_text(x->cell[text_cols[i]],
		    y->cell[text_cols[i]])) != 0)
			return r;
	if (x->cell[C_RANK] != NULL)
		return kt_merge_cmp_cells(x->cell[C_RANK], y->cell[C_RANK]);
	return 0;
}

static const struct kt_merge_spec merge_spec = {
	"kt-ops", merge_cols, NMERGECOLS, "kind", "kind", "total", 0,
	merge_section, merge_cmp, NULL, NULL, NULL
};

struct kt_table *
kt_ops_merge(char *const *paths, size_t npaths, struct kt_error *err)
{
	return kt_merge_tables(&merge_spec, paths, npaths, 0, err);
}
