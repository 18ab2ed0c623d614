/*
 * kt-ops: the key_averages() table of a trace.  One row per CPU op name
 * (optionally also per input shapes, user frame or rank): calls, total
 * and self CPU time, total and self GPU time of the activities it
 * launched, averages and shares, the longest call's row id.
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

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-ops [-jStTV] [-b keys] [-F regex] [-k kinds] "
	    "[-m glob] [-n count]\n"
	    "              [-o file] [-s column] [file]\n"
	    "  -b, --by LIST           also group by shape, frame, rank\n"
	    "  -F, --frame-skip REGEX  files that are not the user's code\n"
	    "  -k, --kind LIST         rows of these kinds (default cpu_op,\n"
	    "                          user_annotation, step, cuda_runtime,\n"
	    "                          cuda_driver)\n"
	    "  -j, --json              JSON lines\n"
	    "  -m, --member GLOB       archive members to take\n"
	    "  -n, --limit N           the first N rows\n"
	    "  -o, --output FILE       write FILE atomically\n"
	    "  -s, --sort COLUMN       sort by it (default gpu_total_ns)\n"
	    "  -S, --strict            refuse damaged input\n"
	    "  -T, --text              an aligned text table\n"
	    "  -t, --tsv               TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* --by keys. */
#define BY_SHAPE	0x01
#define BY_FRAME	0x02
#define BY_RANK		0x04

/* The kinds in the op tree. */
#define TREE	(1u << KT_CPU_OP | 1u << KT_USER_ANNOTATION | 1u << KT_STEP | \
		 1u << KT_CUDA_RUNTIME | 1u << KT_CUDA_DRIVER)
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
	uint32_t	 name;		/* interned in the model */
	int64_t		 rank;
	uint32_t	 shapes;	/* interned, or KT_NO */
	uint32_t	 frame;		/* interned in the model, or KT_NO */
	int64_t		 calls, cpu_total, cpu_self, gpu_self, gpu_total;
	int64_t		 launches, longest;
	uint32_t	 longest_span;
};

/* The filter's state. */
struct ops {
	struct kt_model		*m;
	struct kt_chains	*ch;
	unsigned		 by;
	unsigned		 kinds;		/* bit (1 << kind) per row kind */
	enum col		 sort;
	long long		 limit;		/* -1: all */
	uint32_t		*tparent;	/* per span: tree parent, KT_NO */
	int64_t			*self;		/* per span: self CPU ns */
	int64_t			*gself;		/* per span: self GPU ns */
	int64_t			*gtotal;	/* per span: total GPU ns */
	uint32_t		*nlaunch;	/* per span: activities owned */
	struct kt_intern	*keys;		/* group key -> group */
	struct group		*groups;
	size_t			 ngroups, cap;
	uint32_t		 step_name;	/* "ProfilerStep#*", interned */
	int64_t			 cpu_sum;	/* every tree span's self */
	int64_t			 gpu_sum;	/* every activity's dur */
	int64_t			 lost_ns;	/* activities without a call */
	uint64_t		 lost;
	uint64_t		 clamped;	/* spans whose children overrun */
};

/* a + b, or the one error a time out of range is (exit 2). */
static int64_t
add(int64_t a, int64_t b)
{
	int64_t s;

	if (kt_time_add(a, b, &s) == -1) {
		kt_cli_warn("a sum of times is out of range (over %lld ns)",
		    (long long)KT_TIME_MAX);
		exit(2);
	}
	return s;
}

static enum col
parse_col(const char *arg)
{
	size_t i, n = strlen(arg);

	for (i = 0; i < C_NCOLS; i++) {
		const char *c = strchr(colnames[i], ':');
		size_t cn = c != NULL ? (size_t)(c - colnames[i]) :
		    strlen(colnames[i]);

		if (cn == n && strncmp(colnames[i], arg, n) == 0)
			return (enum col)i;
	}
	kt_cli_warn("--sort: no column '%s'", arg);
	exit(2);
}

/* Parse a comma list into bits: each item one of names[] (bit vals[]). */
static unsigned
parse_list(const char *opt, const char *arg, const char *const *names,
    const unsigned *vals, size_t n)
{
	const char *p = arg;
	unsigned bits = 0;

	for (;;) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len &&
			    strncmp(names[i], p, len) == 0)
				break;
		if (i == n) {
			kt_cli_warn("%s: no '%.*s' (%s%s%s%s%s%s%s%s%s)", opt,
			    (int)len, p, names[0], n > 1 ? ", " : "",
			    n > 1 ? names[1] : "", n > 2 ? ", " : "",
			    n > 2 ? names[2] : "", n > 3 ? ", " : "",
			    n > 3 ? names[3] : "", n > 4 ? ", " : "",
			    n > 4 ? names[4] : "");
			exit(2);
		}
		bits |= vals[i];
		p += len;
		if (*p == '\0')
			return bits;
		p++;
	}
}

/*
 * The op tree: a second containment walk over each thread's spans (in
 * the model's order, parents first), of tree kinds only, with the
 * model's rule of containment; then self CPU time.
 */
static void
tree(struct ops *o)
{
	const struct kt_model *m = o->m;
	uint32_t *stack;
	int64_t *kids;
	size_t i, t, n = m->nspans ? m->nspans : 1;

	if ((o->tparent = malloc(n * sizeof(*o->tparent))) == NULL ||
	    (o->self = calloc(n, sizeof(*o->self))) == NULL ||
	    (kids = calloc(n, sizeof(*kids))) == NULL ||
	    (stack = malloc(n * sizeof(*stack))) == NULL)
		kt_cli_nomem();
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
				kids[stack[sp - 1]] = add(kids[stack[sp - 1]],
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
			o->clamped++;
		}
		o->cpu_sum = add(o->cpu_sum, o->self[i]);
	}
	free(kids);
	free(stack);
}

/*
 * GPU time: each activity to its owner (the innermost cpu_op,
 * annotation or step above its call in the tree, else the call), then
 * up the tree, children before parents (the spans in reverse order).
 */
static void
gpu(struct ops *o)
{
	const struct kt_model *m = o->m;
	size_t i, n = m->nspans ? m->nspans : 1;

	if ((o->gself = calloc(n, sizeof(*o->gself))) == NULL ||
	    (o->gtotal = calloc(n, sizeof(*o->gtotal))) == NULL ||
	    (o->nlaunch = calloc(n, sizeof(*o->nlaunch))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < m->nact; i++) {
		const struct kt_act *a = &m->act[i];
		uint32_t s, own;

		o->gpu_sum = add(o->gpu_sum, a->dur);
		if (a->launch == KT_NO) {
			o->lost++;
			o->lost_ns = add(o->lost_ns, a->dur);
			continue;
		}
		own = a->launch;
		for (s = o->tparent[a->launch]; s != KT_NO; s = o->tparent[s])
			if (OWNERS & 1u << m->spans[s].kind) {
				own = s;
				break;
			}
		o->gself[own] = add(o->gself[own], a->dur);
		o->nlaunch[own]++;
	}
	for (i = 0; i < m->nspans; i++)
		o->gtotal[i] = o->gself[i];
	for (i = m->nspans; i-- > 0; )
		if (o->tparent[i] != KT_NO)
			o->gtotal[o->tparent[i]] = add(o->gtotal[o->tparent[i]],
			    o->gtotal[i]);
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
	g.name = sp->kind == KT_STEP ? o->step_name : sp->name;
	g.rank = (o->by & BY_RANK) ? m->threads[sp->thread].rank : -1;
	g.shapes = g.frame = KT_NO;
	if (o->by & BY_SHAPE) {
		const struct kt_stack *k = kt_model_row(m->shapes, m->nshapes,
		    sizeof(*m->shapes), sp->index);

		if (k != NULL)
			g.shapes = k->text;
	}
	if (o->by & BY_FRAME) {
		const char *text;
		size_t len;
		uint32_t f = kt_chains_frame_of(o->ch, s, &text, &len);

		if (f == KT_NO - 1)
			kt_cli_nomem();
		if (f != KT_NO) {
			kt_buf_clear(key);
			kt_buf_add(key, text, len);
			if (kt_buf_addc(key, '\0') == -1 ||
			    (id = kt_intern_put(m->names, key->p, key->n)) == -1)
				kt_cli_nomem();
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
		kt_cli_nomem();
	if ((size_t)id == o->ngroups) {
		if (o->ngroups == o->cap) {
			size_t nc = o->cap ? o->cap * 2 : 256;
			struct group *ng = realloc(o->groups,
			    nc * sizeof(*ng));

			if (ng == NULL)
				kt_cli_nomem();
			o->groups = ng;
			o->cap = nc;
		}
		g.longest = -1;
		o->groups[o->ngroups++] = g;
	}
	return &o->groups[id];
}

static void
fold(struct ops *o)
{
	const struct kt_model *m = o->m;
	struct kt_buf key = KT_BUF_INIT;
	int64_t id;
	size_t i;

	if ((o->keys = kt_intern_new()) == NULL ||
	    (id = kt_intern_put(m->names, "ProfilerStep#*",
	    sizeof("ProfilerStep#*"))) == -1)
		kt_cli_nomem();
	o->step_name = (uint32_t)id;
	for (i = 0; i < m->nspans; i++) {
		const struct kt_span *s = &m->spans[i];
		struct group *g;

		if (!(o->kinds & 1u << s->kind))
			continue;
		g = group_of(o, (uint32_t)i, &key);
		g->calls++;
		g->cpu_total = add(g->cpu_total, s->dur);
		g->cpu_self = add(g->cpu_self, o->self[i]);
		g->gpu_self = add(g->gpu_self, o->gself[i]);
		g->gpu_total = add(g->gpu_total, o->gtotal[i]);
		g->launches += o->nlaunch[i];
		if (s->dur > g->longest) {
			g->longest = s->dur;
			g->longest_span = (uint32_t)i;
		}
	}
	kt_buf_free(&key);
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
	switch (c) {
	case C_KIND:
		return kt_kind_name((enum kt_kind)g->kind);
	case C_NAME:
		return kt_model_str(o->m, g->name);
	case C_SHAPES:
		return g->shapes != KT_NO ? kt_model_str(o->m, g->shapes) : "-";
	case C_FRAME:
		return g->frame != KT_NO ? kt_model_str(o->m, g->frame) : "-";
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
		kt_cli_nomem();
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
				rc |= kt_table_cellf(t, "%s:%llu",
				    kt_kind_name((enum kt_kind)ls->kind),
				    (unsigned long long)ls->index);
				break;
			default:
				rc |= c <= C_FRAME ?
				    kt_table_cell(t, text(o, g, (enum col)c)) :
				    kt_table_int(t, num(g, (enum col)c));
			}
		}
		if (rc != 0)
			kt_cli_nomem();
	}
	return t;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "frame-skip", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "kind", required_argument, NULL, 'k' },
		{ "limit", required_argument, NULL, 'n' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const bynames[] = { "shape", "frame", "rank" };
	static const unsigned byvals[] = { BY_SHAPE, BY_FRAME, BY_RANK };
	static const char *const kindnames[] = { "cpu_op", "user_annotation",
	    "step", "cuda_runtime", "cuda_driver" };
	static const unsigned kindvals[] = { 1u << KT_CPU_OP,
	    1u << KT_USER_ANNOTATION, 1u << KT_STEP, 1u << KT_CUDA_RUNTIME,
	    1u << KT_CUDA_DRIVER };
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_table *t;
	struct kt_error err;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	struct ops o;
	const char *skip = NULL;
	size_t i;
	int ch, rc = 0;
	uint64_t nops = 0;

	memset(&o, 0, sizeof(o));
	o.kinds = TREE;
	o.sort = C_GPU_TOTAL;
	o.limit = -1;
	kt_cli_init("kt-ops");
	while ((ch = getopt_long(argc, argv, "b:F:hjk:m:n:o:s:STtV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			o.by |= parse_list("--by", optarg, bynames, byvals, 3);
			break;
		case 'F':
			skip = optarg;
			break;
		case 'k':
			o.kinds = parse_list("--kind", optarg, kindnames,
			    kindvals, 5);
			break;
		case 'n':
			o.limit = kt_cli_int("--limit", optarg, 0, 1ll << 40);
			break;
		case 's':
			o.sort = parse_col(optarg);
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		exit(2);
	}
	if (!shown(&o, o.sort)) {
		kt_cli_warn("--sort: column '%s' needs --by %s",
		    o.sort == C_RANK ? "rank" : o.sort == C_SHAPES ? "shapes" :
		    "frame", o.sort == C_RANK ? "rank" : o.sort == C_SHAPES ?
		    "shape" : "frame");
		exit(2);
	}
	if (skip != NULL && kt_chains_check(skip, &err) == -1) {
		kt_cli_warn("%s", err.msg);
		exit(2);
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1)
		exit(2);
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    co.member, co.rflags, &src);
	o.m = kt_cli_model_with(rd, (o.by & BY_SHAPE) ? KT_MODEL_SHAPES : 0);
	if ((o.by & BY_FRAME) &&
	    (o.ch = kt_chains_new(o.m, skip, &err)) == NULL)
		kt_cli_die(&err);
	tree(&o);
	gpu(&o);
	fold(&o);
	t = table(&o);
	kt_cli_write_table(t, co.output, co.form);
	for (i = 0; i < o.m->nspans; i++)
		nops += (TREE & 1u << o.m->spans[i].kind) != 0;
	if (nops == 0) {
		kt_cli_warn("%s: no CPU op (cpu_op, user_annotation, "
		    "ProfilerStep#, cuda_runtime, cuda_driver) in the trace",
		    kt_reader_name(rd));
		rc = 1;
	}
	if (o.lost > 0)
		kt_cli_warn("%llu GPU activities (%lld ns) without a "
		    "launching call are in no row",
		    (unsigned long long)o.lost, (long long)o.lost_ns);
	if (o.clamped > 0)
		kt_cli_warn("%llu calls whose children overlap and add up to "
		    "more than the call: self CPU time 0",
		    (unsigned long long)o.clamped);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_table_free(t);
	kt_chains_free(o.ch);
	kt_intern_free(o.keys);
	kt_model_free(o.m);
	kt_reader_free(rd);
	kt_source_close(src);
	free(o.tparent);
	free(o.self);
	free(o.gself);
	free(o.gtotal);
	free(o.nlaunch);
	free(o.groups);
	return rc;
}
