/*
 * kt-correlate: one row per GPU activity with its launch chain: the
 * runtime call that launched it, the CPU op and annotation around that
 * call, the step, and the user's frame (file:line), each with its row
 * id, plus the launch delay and the part of it spent queued behind
 * earlier work on the stream.  With --id, only the activities of the
 * given rows: an activity itself, or every activity whose chain holds
 * the given call, op, annotation, step or frame.  The chain is
 * lib/model/chain.c's; this file adds the queue and the rows.
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
	    "usage: kt-correlate [-jStTV] [-F regex] [-i ids] [-m glob] "
	    "[-o file] [file]\n"
	    "  -F, --frame-skip REGEX  files that are not the user's code\n"
	    "                          (default: stdlib, site-packages, torch)\n"
	    "  -i, --id LIST           only these rows (kind:N or N, comma-\n"
	    "                          separated): activities, or those whose\n"
	    "                          chain holds the call, op, annotation\n"
	    "  -j, --json              JSON lines\n"
	    "  -m, --member GLOB       archive members to take\n"
	    "  -o, --output FILE       write FILE atomically\n"
	    "  -S, --strict            refuse damaged input\n"
	    "  -T, --text              an aligned text table\n"
	    "  -t, --tsv               TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* The filter's state. */
struct corr {
	struct kt_model		*m;
	struct kt_chains	*ch;
	int64_t			*queue;	/* per activity, ns */
	uint64_t		*ids;	/* --id row numbers, sorted */
	size_t			 nids;
	char			*found;	/* per id: matched something */
	struct count {		/* per worker of kt_cli_table_rows */
		uint64_t	 nolaunch, noop, noframe, nrows;
	}			 n[KT_CLI_MAX_WORKERS];
};

static const char *const cols[] = {
	"row", "rank", "device", "stream", "name", "ts_ns:n", "dur_ns:n",
	"launch", "launch_name", "op", "op_name", "annotation",
	"annotation_name", "step:n", "step_row", "frame", "frame_row",
	"delay_ns:n", "queue_ns:n", "fwd_op", "fwd_op_name", "graph_node:n"
};

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether row number r is asked for (and mark it found). */
static int
asked(struct corr *c, uint64_t r)
{
	size_t lo = 0, hi = c->nids;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->ids[mid] < r)
			lo = mid + 1;
		else if (c->ids[mid] > r)
			hi = mid;
		else {
			c->found[mid] = 1;
			return 1;
		}
	}
	return 0;
}

static int
cmp_stream(const void *a, const void *b, void *ctx)
{
	const struct kt_act *act = ctx;
	const struct kt_act *x = &act[*(const uint32_t *)a];
	const struct kt_act *y = &act[*(const uint32_t *)b];

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The queue time of every activity: of its launch delay (start minus
 * the call's start), the part during which earlier work of its stream
 * was still running, min(start, the latest end of the stream's earlier
 * activities) minus the call's start, at least 0.  -1 without a call.
 */
static void
queue_times(struct corr *c)
{
	const struct kt_model *m = c->m;
	uint32_t *o;
	size_t i;
	int64_t busy = 0;

	if ((c->queue = malloc((m->nact ? m->nact : 1) * sizeof(*c->queue))) ==
	    NULL || (o = malloc((m->nact ? m->nact : 1) * sizeof(*o))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < m->nact; i++)
		o[i] = (uint32_t)i;
	kt_sort_r(o, m->nact, sizeof(*o), cmp_stream, (void *)m->act);
	for (i = 0; i < m->nact; i++) {
		const struct kt_act *a = &m->act[o[i]];
		int first = i == 0 || a->dev != m->act[o[i - 1]].dev ||
		    a->stream != m->act[o[i - 1]].stream;
		int64_t q = -1;

		if (first)
			busy = INT64_MIN;
		if (a->launch != KT_NO) {
			int64_t call = m->spans[a->launch].ts;
			int64_t upto = busy < a->ts ? busy : a->ts;

			q = upto > call ? upto - call : 0;
		}
		c->queue[o[i]] = q;
		if (a->ts + a->dur > busy)
			busy = a->ts + a->dur;
	}
	free(o);
}

/* A span's row id and name cells, or "-" "-". */
static int
span_cells(struct kt_table *t, const struct kt_model *m, uint32_t s)
{
	const struct kt_span *sp;

	if (s == KT_NO)
		return kt_table_cell(t, "-") | kt_table_cell(t, "-");
	sp = &m->spans[s];
	return kt_table_rowid(t, sp->kind, sp->index) |
	    kt_table_cell(t, kt_model_str(m, sp->name));
}

static int
row(struct corr *c, struct kt_table *t, uint32_t i, const struct kt_chain *ch)
{
	const struct kt_model *m = c->m;
	const struct kt_act *a = &m->act[i];
	int rc = 0;

	rc |= kt_table_rowid(t, a->kind, a->index);
	rc |= kt_model_device_cells(t, m, a->dev);
	rc |= a->stream >= 0 ? kt_table_int(t, a->stream) :
	    kt_table_cell(t, "-");
	rc |= kt_table_cell(t, kt_model_str(m, a->name));
	rc |= kt_table_int(t, a->ts);
	rc |= kt_table_int(t, a->dur);
	rc |= span_cells(t, m, ch->launch);
	rc |= span_cells(t, m, ch->op);
	rc |= span_cells(t, m, ch->ann);
	if (ch->step != KT_NO) {
		const struct kt_step *st = &m->steps[ch->step];
		const struct kt_span *sp = &m->spans[st->span];

		rc |= st->number >= 0 ? kt_table_int(t, st->number) :
		    kt_table_cell(t, "-");
		rc |= kt_table_rowid(t, sp->kind, sp->index);
	} else
		rc |= kt_table_cell(t, "-") | kt_table_cell(t, "-");
	if (ch->frame != KT_NO) {
		const struct kt_span *sp = &m->spans[ch->frame];

		rc |= kt_table_celln(t, ch->frame_text, ch->frame_len);
		rc |= kt_table_rowid(t, sp->kind, sp->index);
	} else
		rc |= kt_table_cell(t, "-") | kt_table_cell(t, "-");
	if (ch->launch != KT_NO) {
		rc |= kt_table_int(t, a->ts - m->spans[ch->launch].ts);
		rc |= kt_table_int(t, c->queue[i]);
	} else
		rc |= kt_table_cell(t, "-") | kt_table_cell(t, "-");
	rc |= span_cells(t, m, ch->fwd);
	{
		const struct kt_node *k = kt_model_row(m->nodes, m->nnodes,
		    sizeof(*m->nodes), a->index, m->devices[a->dev].rank);

		rc |= k != NULL ? kt_table_int(t, k->node) :
		    kt_table_cell(t, "-");
	}
	return rc;
}

/* Whether activity i is wanted: no --id, or its chain holds an id. */
static int
wanted(struct corr *c, uint32_t i, const struct kt_chain *ch)
{
	const struct kt_model *m = c->m;
	int hit = 0;

	if (c->nids == 0)
		return 1;
	hit |= asked(c, m->act[i].index);
	if (ch->launch != KT_NO)
		hit |= asked(c, m->spans[ch->launch].index);
	if (ch->op != KT_NO) {
		uint32_t s;

		/* Every op around the call, not only the innermost. */
		for (s = m->spans[ch->launch].parent; s != KT_NO;
		    s = m->spans[s].parent)
			if (m->spans[s].kind != KT_PYTHON_FUNCTION)
				hit |= asked(c, m->spans[s].index);
	} else if (ch->ann != KT_NO)
		hit |= asked(c, m->spans[ch->ann].index);
	if (ch->step != KT_NO)
		hit |= asked(c, m->spans[m->steps[ch->step].span].index);
	if (ch->frame != KT_NO)
		hit |= asked(c, m->spans[ch->frame].index);
	if (ch->fwd != KT_NO)
		hit |= asked(c, m->spans[ch->fwd].index);
	return hit;
}

/* Activity i's row, if wanted, made by worker w: 0, or -1 no memory. */
static int
activity_row(void *arg, unsigned w, struct kt_table *t, size_t i)
{
	struct corr *c = arg;
	struct count *n = &c->n[w];
	struct kt_chain ch;

	if (kt_chain_get(c->ch, (uint32_t)i, &ch) == -1)
		return -1;
	if (!wanted(c, (uint32_t)i, &ch))
		return 0;
	n->nrows++;
	n->nolaunch += ch.launch == KT_NO;
	n->noop += ch.launch != KT_NO && ch.op == KT_NO;
	n->noframe += ch.frame == KT_NO;
	return row(c, t, (uint32_t)i, &ch) != 0 ? -1 : 0;
}

/*
 * The rows, streamed to ct (TSV and JSON lines: no row is held), made
 * on several threads; with --id on one (wanted marks the ids found).
 */
static struct kt_table *
correlate(struct corr *c, struct kt_cli_table *ct)
{
	struct kt_table *t;
	size_t i;

	if ((t = kt_table_new(cols, sizeof(cols) / sizeof(cols[0]))) == NULL)
		kt_cli_nomem();
	if (c->nids == 0) {
		kt_cli_table_rows(ct, t, c->m->nact, activity_row, c);
		return t;
	}
	for (i = 0; i < c->m->nact; i++) {
		if (activity_row(c, 0, t, i) == -1)
			kt_cli_nomem();
		kt_cli_table_flush(ct, t);
	}
	return t;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "frame-skip", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "id", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_table *t;
	struct kt_error err;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	struct kt_cli_table ct;
	struct corr c;
	const char *skip = NULL;
	size_t i;
	int ch, rc = 0;

	memset(&c, 0, sizeof(c));
	kt_cli_init("kt-correlate");
	while ((ch = getopt_long(argc, argv, "F:hi:jm:o:STtV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'F':
			skip = optarg;
			break;
		case 'i':
			kt_cli_ids("--id", optarg, &c.ids, &c.nids);
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	/* exit, not return: --id's list is still held (a leak checker). */
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		exit(2);
	}
	if (skip != NULL && kt_chains_check(skip, &err) == -1) {
		kt_cli_warn("%s", err.msg);
		exit(2);
	}
	if (c.nids > 1)
		qsort(c.ids, c.nids, sizeof(*c.ids), cmp_u64);
	if ((c.found = calloc(c.nids ? c.nids : 1, 1)) == NULL)
		kt_cli_nomem();
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1)
		exit(2);
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    co.member, co.rflags, &src);
	c.m = kt_cli_model_with(rd, KT_MODEL_SEQ | KT_MODEL_GRAPH);
	if ((c.ch = kt_chains_new(c.m, skip, &err)) == NULL)
		kt_cli_die(&err);
	queue_times(&c);
	kt_cli_table_open(&ct, co.output, co.form);
	t = correlate(&c, &ct);
	kt_cli_table_close(&ct, t);
	for (i = 1; i < KT_CLI_MAX_WORKERS; i++) {
		c.n[0].nrows += c.n[i].nrows;
		c.n[0].nolaunch += c.n[i].nolaunch;
		c.n[0].noop += c.n[i].noop;
		c.n[0].noframe += c.n[i].noframe;
	}
	if (c.n[0].nolaunch || c.n[0].noop || c.n[0].noframe)
		kt_cli_warn("%llu activities: %llu without a launching call, "
		    "%llu more without a CPU op, %llu without a user frame",
		    (unsigned long long)c.n[0].nrows,
		    (unsigned long long)c.n[0].nolaunch,
		    (unsigned long long)c.n[0].noop,
		    (unsigned long long)c.n[0].noframe);
	if (c.m->nflowcorr > 0)
		kt_cli_warn("%llu activities without args.correlation: linked "
		    "by their ac2g flow", (unsigned long long)c.m->nflowcorr);
	for (i = 0; i < c.nids; i++)
		if (!c.found[i]) {
			kt_cli_warn("row %llu: no GPU activity, or none "
			    "launched under it",
			    (unsigned long long)c.ids[i]);
			rc = 1;
		}
	if (c.m->nact == 0) {
		kt_cli_warn("%s: no GPU activity (kernel, gpu_memcpy, "
		    "gpu_memset) in the trace", kt_reader_name(rd));
		rc = 1;
	}
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_table_free(t);
	kt_chains_free(c.ch);
	kt_model_free(c.m);
	kt_reader_free(rd);
	kt_source_close(src);
	free(c.queue);
	free(c.ids);
	free(c.found);
	return rc;
}
