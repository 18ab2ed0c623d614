/*
 * kt-views: the views a diagnosis reads before concluding anything,
 * rendered into numbered files of one folder:
 *   1_runtime_decomposition  (lib/decompose.c)
 *   2_lost_time              (lib/gaps.c)
 *   3_kernel_table           (lib/bucket.c)
 *   4_overlap_exposure       (lib/overlap.c)
 *   5_memory                 (lib/memory.c), and memory.svg
 *   6_op_table               (lib/ops.c)
 * each as aligned text (.txt) and TSV (.tsv).  Each input is read once,
 * into the analysis model, which the six views share: the model keeps
 * the [memory] instants of the same read for the memory view
 * (KT_MODEL_MEMORY).
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

#define NVIEWS		6

static const char *const vname[NVIEWS] = {
	"1_runtime_decomposition", "2_lost_time", "3_kernel_table",
	"4_overlap_exposure", "5_memory", "6_op_table"
};
static const char *const vtitle[NVIEWS] = {
	"Runtime decomposition: wall = busy + idle, per device and phase",
	"Lost time: idle gaps and tiny-kernel runs, ranked by cost",
	"Kernel table: GPU time per bucket",
	"Overlap and exposure: communication against compute",
	"Memory over time: peaks, capacity and headroom",
	"Op table: CPU and GPU time per CPU op (key_averages)"
};

/* The tables of one input. */
struct input {
	char		 name[1100];
	char		 rdname[1100];	/* its reader's name, for messages */
	struct kt_repairs repairs;	/* reported after the read */
	int		 dead;		/* its read failed: no tables */
	/* Per view: the .tsv table, and more tables for the .txt. */
	struct kt_table	*tsv[NVIEWS];
	struct kt_table	*txt[NVIEWS][3];
	const char	*txtname[NVIEWS][3];
	struct kt_memory *mem;
	int		 nodev;		/* no device activity: exit 1 */
};

struct opts {
	int64_t		 capacity;
	size_t		 top;
	const char	*dir;
	const char	*rules;
	struct kt_cli_opts co;	/* -m, -S */
};

/* What one run keeps: the options, the inputs' tables. */
struct views {
	struct opts	 o;
	struct input	*ins;
	size_t		 nins;
	char		*spool;		/* standard input's copy, or NULL */
};

/*
 * The read of one path of the command line: the tables of its traces
 * (several in an archive), and how it failed.  Paths read at once, each
 * on a thread of its own, are reported in their order when all are read.
 */
struct job {
	const struct views	*vw;
	const struct kt_rules	*rs;
	char			*path;
	int			 alone;		/* progress on the terminal */
	struct input		*ins;
	size_t			 nins;
	int			 failed;	/* 1 err, 2 out of memory */
	struct kt_error		 err;
};

/* Remove standard input's copy. */
static void
cleanup(struct views *vw)
{
	if (vw->spool != NULL)
		unlink(vw->spool);
}

/* Free the tables of every input and the rules. */
static void
free_views(struct views *vw, struct kt_rules *rs)
{
	struct input *ins = vw->ins;
	size_t k;
	int v;

	for (k = 0; k < vw->nins; k++) {
		for (v = 0; v < NVIEWS; v++) {
			if (ins[k].txt[v][0] != ins[k].tsv[v])
				kt_table_free(ins[k].txt[v][0]);
			kt_table_free(ins[k].tsv[v]);
			kt_table_free(ins[k].txt[v][1]);
			kt_table_free(ins[k].txt[v][2]);
		}
		kt_memory_free(ins[k].mem);
	}
	free(ins);
	vw->ins = NULL;
	vw->nins = 0;
	kt_rules_free(rs);
}

/* kt_cli_on_exit's callback: the run to clean up after an exit(3). */
static void
at_exit(void *vw)
{
	cleanup(vw);
}

/* Clean up before main returns (its vw goes with it); returns rc. */
static int
leave(struct views *vw, int rc)
{
	kt_cli_on_exit(NULL, NULL);
	cleanup(vw);
	return rc;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-views [-SV] [-c gb] [-m glob] [-n top] [-r rules]\n"
	    "                [--spool-max size] [--step-regex re] -o dir [file ...]\n"
	    "       kt-views -M [-n top] -o dir dir ...\n"
	    "  -c, --capacity-gb GB      device capacity in GB (10^9 bytes)\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -M, --merge               merge per-rank view folders into the\n"
	    "                            views of the whole job (kt-views(1) says\n"
	    "                            which views)\n"
	    "  -n, --top N               rows of the ranked views (default 50)\n"
	    "  -o, --output DIR          the folder to write (made if missing,\n"
	    "                            with its parents)\n"
	    "  -r, --rules FILE          bucket rules (bucket<TAB>regex) before\n"
	    "                            the default ones\n"
	    "  -S, --strict              refuse damaged input\n"
	    "      --step-regex RE       steps: the spans RE matches, see kt(7)\n"
	    "      --spool-max SIZE      cap on copying a pipe or stdin\n"
	    "                            (default 64G; K, M, G, T)\n"
	    "  -h, --help, -V, --version\n");
}

static struct input *
new_input(struct job *j, const char *name)
{
	struct input *t;

	if ((t = realloc(j->ins, (j->nins + 1) * sizeof(*t))) == NULL)
		return NULL;
	j->ins = t;
	t = &j->ins[j->nins++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	return t;
}

/*
 * The views of one model, made as tasks on every CPU (kt_cli_tasks):
 * each reads the model and writes tables of its own into the input.
 */
enum { T_OPS, T_DECOMPOSE, T_GAPS, T_BUCKET, T_BUCKET_STEP, T_MEMORY,
	NTASKS };

struct vtask {
	struct input		*in;
	const struct kt_model	*m;
	const struct kt_rules	*rs;
	const uint32_t		*classes;	/* every activity's bucket */
	const struct opts	*o;
	const struct kt_meta	*meta;
	size_t			 nmeta;
	int64_t			 rank;
	int			 nomem[NTASKS];
	int			 failed[NTASKS];
	struct kt_error		 err[NTASKS];
};

static int
made(struct vtask *vt, size_t i, const void *p)
{
	if (p == NULL)
		vt->nomem[i] = 1;
	return p != NULL;
}

static void
bucket_view(struct vtask *vt, size_t i, const char *by, struct kt_table **t)
{
	struct kt_bucket_opts bo;

	memset(&bo, 0, sizeof(bo));
	bo.rules = vt->rs;
	bo.classes = vt->classes;
	if (kt_bucket_by_parse(&bo, by) == -1)
		vt->nomem[i] = 1;
	else
		made(vt, i, *t = kt_bucket_table(vt->m, &bo));
}

static void
view_task(void *arg, size_t i)
{
	struct vtask *vt = arg;
	struct input *in = vt->in;
	struct kt_decompose *dc;
	struct kt_overlap *ov;

	switch (i) {
	case T_OPS: {
		struct kt_ops_opts oo = KT_OPS_OPTS_INIT;

		/* The rank column tells several inputs' rows apart. */
		oo.by = KT_OPS_BY_RANK;
		if ((in->tsv[5] = kt_ops_table(vt->m, &oo, NULL,
		    &vt->err[i])) == NULL)
			vt->failed[i] = 1;
		/* The text's rows are the first of the same order. */
		else
			made(vt, i, in->txt[5][0] = kt_table_head(in->tsv[5],
			    vt->o->top));
		in->txtname[5][0] = "the ops with the most GPU time";
		break;
	}
	case T_DECOMPOSE:
		if ((dc = kt_decompose_new_with(vt->m, vt->rs, vt->classes,
		    &vt->err[i])) == NULL) {
			vt->failed[i] = 1;
			break;
		}
		if ((ov = kt_overlap_new_with(vt->m, vt->rs, vt->classes,
		    &vt->err[i])) == NULL) {
			vt->failed[i] = 1;
			kt_decompose_free(dc);
			break;
		}
		if (made(vt, i, in->tsv[0] = kt_decompose_table(dc)) &&
		    made(vt, i, in->txt[0][1] = kt_decompose_series(dc)) &&
		    made(vt, i, in->txt[0][2] = kt_decompose_ranks(dc, ov)) &&
		    made(vt, i, in->tsv[3] = kt_overlap_table(ov, 0)) &&
		    made(vt, i, in->txt[3][0] = kt_overlap_summary(ov,
		    KT_OVERLAP_THRESHOLD)))
			made(vt, i, in->txt[3][1] = kt_overlap_table(ov,
			    vt->o->top));
		in->txt[0][0] = in->tsv[0];
		in->txtname[0][0] = "per phase";
		in->txtname[0][1] = "per step";
		in->txtname[0][2] = "across ranks";
		in->txtname[3][0] = "per device";
		in->txtname[3][1] = "communication kernels, most exposed first";
		kt_overlap_free(ov);
		kt_decompose_free(dc);
		break;
	case T_GAPS: {
		struct kt_gaps_opts go = KT_GAPS_OPTS_INIT;

		go.top = (int64_t)vt->o->top;
		go.summary = 1;
		made(vt, i, in->tsv[1] = kt_gaps_table(vt->m, &go, NULL, NULL));
		in->txt[1][0] = in->tsv[1];
		in->txtname[1][0] = "gaps and tiny-kernel runs";
		break;
	}
	case T_BUCKET:
		bucket_view(vt, i, KT_BUCKET_BY_DEFAULT, &in->tsv[2]);
		in->txt[2][0] = in->tsv[2];
		in->txtname[2][0] = "by bucket";
		break;
	case T_BUCKET_STEP:
		bucket_view(vt, i, "step," KT_BUCKET_BY_DEFAULT,
		    &in->txt[2][1]);
		in->txtname[2][1] = "by step and bucket";
		break;
	case T_MEMORY:
		/* The [memory] instants the model kept of the same read. */
		if (kt_memory_finish(in->mem, vt->meta, vt->nmeta,
		    vt->o->capacity, vt->rank) == -1)
			vt->nomem[i] = 1;
		else
			made(vt, i, in->tsv[4] = kt_memory_table(in->mem));
		in->txt[4][0] = in->tsv[4];
		in->txtname[4][0] = "per device";
		break;
	}
}

/*
 * The one read of a trace: the model and the six views on it.  Returns 0,
 * or 1 with j->err set, or 2 out of memory: the first failure in the
 * views' order, as one thread would have met it.
 */
static int
model_views(struct job *j, struct input *in, struct kt_reader *rd)
{
	struct kt_model *m;
	static const size_t order[NTASKS] = { T_DECOMPOSE, T_GAPS, T_BUCKET,
		T_BUCKET_STEP, T_OPS, T_MEMORY };
	struct vtask vt;
	uint32_t *classes;
	size_t i, k;
	int rc = 0;

	if ((m = kt_cli_model_try(rd, KT_MODEL_MEMORY, j->alone,
	    &j->err)) == NULL)
		return 1;
	in->nodev = m->nact == 0;
	in->mem = m->memory;
	m->memory = NULL;
	/* One classification of the model for the four views that ask. */
	if ((classes = kt_rules_classify(j->rs, m)) == NULL) {
		kt_model_free(m);
		return 2;
	}
	memset(&vt, 0, sizeof(vt));
	vt.in = in;
	vt.m = m;
	vt.rs = j->rs;
	vt.classes = classes;
	vt.o = &j->vw->o;
	vt.meta = kt_reader_metas(rd, &vt.nmeta);
	vt.rank = kt_reader_rank(rd);
	kt_cli_tasks(NTASKS, view_task, &vt);
	free(classes);
	for (k = 0; k < NTASKS && rc == 0; k++) {
		i = order[k];
		if (vt.failed[i]) {
			j->err = vt.err[i];
			rc = 1;
		} else if (vt.nomem[i])
			rc = 2;
	}
	kt_model_free(m);
	return rc;
}

/* Open dir/name for writing, atomically. */
static struct kt_out *
open_in(const char *dir, const char *name, const char *ext)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext);
	return kt_cli_out_open(path, -1);
}

static void
put(struct kt_out *out, const char *s)
{
	if (kt_out_write(out, s, strlen(s)) == -1)
		kt_cli_out_commit(out, 1, NULL);
}

static void
commit(struct kt_out *out)
{
	kt_cli_out_commit(out, 0, NULL);
}

static void
table(struct kt_out *out, const struct kt_table *t, enum kt_table_form f,
    int header)
{
	if (kt_table_write(t, f, header, out) == -1)
		kt_cli_out_commit(out, 1, NULL);
}

/* Does the table across ranks have a step with more than one rank? */
static int
several_ranks(const struct kt_table *t)
{
	size_t r;

	for (r = 0; r < kt_table_rows(t); r++)
		if (strcmp(kt_table_get(t, r, 1), "1") != 0)
			return 1;
	return 0;
}

/* Write view v: the .txt with every table, the .tsv with the first. */
static void
write_view(const struct views *vw, int v)
{
	const struct input *ins = vw->ins;
	size_t nins = vw->nins;
	struct kt_out *out;
	size_t i, k;
	char line[1400];

	out = open_in(vw->o.dir, vname[v], ".txt");
	put(out, vtitle[v]);
	put(out, "\n");
	for (i = 0; i < nins; i++)
		for (k = 0; k < 3; k++) {
			const struct kt_table *t = ins[i].txt[v][k];

			if (t == NULL)
				continue;
			if (v == 0 && k == 2 && !several_ranks(t))
				continue;
			snprintf(line, sizeof(line), "\n%s%s%s:\n",
			    nins > 1 ? ins[i].name : "", nins > 1 ? ": " : "",
			    ins[i].txtname[v][k]);
			put(out, line);
			table(out, t, KT_TABLE_TEXT, 1);
		}
	if (v == 3)
		put(out, "\nhidden: the time a communication kernel ran while "
		    "compute ran on the same device;\nexposed = duration - "
		    "hidden.  A fully hidden collective is not a finding.\n");
	commit(out);
	out = open_in(vw->o.dir, vname[v], ".tsv");
	for (i = 0; i < nins; i++)
		table(out, ins[i].tsv[v], KT_TABLE_TSV, i == 0);
	commit(out);
}

/* memory.svg: every input's devices, one drawing per input. */
static void
write_svg(const struct views *vw)
{
	struct kt_out *out;
	struct kt_buf b = { 0 };
	size_t i;
	char name[64];

	for (i = 0; i < vw->nins; i++) {
		b.n = 0;
		if (kt_memory_svg(vw->ins[i].mem, KT_MEMORY_SVG_POINTS,
		    vw->ins[i].name, &b) == -1)
			kt_cli_nomem();
		if (vw->nins == 1)
			snprintf(name, sizeof(name), "memory");
		else
			snprintf(name, sizeof(name), "memory-%zu", i + 1);
		out = open_in(vw->o.dir, name, ".svg");
		if (kt_out_write(out, b.p, b.n) == -1)
			kt_cli_out_commit(out, 1, NULL);
		commit(out);
	}
	kt_buf_free(&b);
}

/* Read path j: the model of each of its traces and the views on it. */
static void
read_path(struct job *j)
{
	const struct views *vw = j->vw;
	struct kt_source *src;
	struct kt_reader *rd;
	int rc;

	if ((src = kt_cli_source_open(j->path, vw->o.co.member,
	    vw->o.co.rflags, &j->err)) == NULL) {
		j->failed = 1;
		return;
	}
	while ((rc = kt_source_next(src, &rd, &j->err)) == 1) {
		struct input *in = new_input(j, j->path == vw->spool ?
		    "<stdin>" : kt_reader_name(rd));

		if (in == NULL)
			j->failed = 2;
		else {
			snprintf(in->rdname, sizeof(in->rdname), "%s",
			    kt_reader_name(rd));
			j->failed = model_views(j, in, rd);
			in->repairs = *kt_reader_repairs(rd);
		}
		kt_reader_free(rd);
		if (j->failed) {
			if (in != NULL)
				in->dead = 1;
			break;
		}
	}
	if (rc == -1 && !j->failed)
		j->failed = 1;
	kt_source_close(src);
	if (!j->failed && j->nins == 0) {
		kt_error_set(&j->err, j->path == vw->spool ? "<stdin>" :
		    j->path, 0, 0, "no trace");
		j->failed = 1;
	}
}

static void
read_task(void *arg, size_t i)
{
	read_path(&((struct job *)arg)[i]);
}

/*
 * Say what path j's read met, in the order one thread would have, keep
 * its tables, and exit on its failure.
 */
static void
report_path(struct views *vw, struct job *j)
{
	struct input *t;
	size_t k;

	for (k = 0; k < j->nins; k++) {
		if (j->ins[k].nodev)
			kt_cli_warn_no_device(j->ins[k].rdname);
		/* A failed trace is only the error (and the warning before). */
		if (j->ins[k].dead) {
			j->nins = k;
			break;
		}
		kt_cli_report_repairs(j->ins[k].rdname, &j->ins[k].repairs);
	}
	if (j->failed == 2)
		kt_cli_nomem();
	if (j->failed)
		kt_cli_die(&j->err);
	if (j->nins > 0) {
		if ((t = realloc(vw->ins, (vw->nins + j->nins) *
		    sizeof(*t))) == NULL)
			kt_cli_nomem();
		vw->ins = t;
		memcpy(vw->ins + vw->nins, j->ins, j->nins * sizeof(*t));
		vw->nins += j->nins;
	}
	free(j->ins);
	j->ins = NULL;
	j->nins = 0;
}

/*
 * The model of every trace of the inputs, and the six views on it.  Small
 * files (kt_cli_small_files: one thread each would idle the other CPUs)
 * are read at once, one per CPU; larger ones one by one, each read on
 * every CPU (kt_ahead, gzip's decoder, the views' tasks).
 */
static void
model_pass(struct views *vw, char **paths, int n, const struct kt_rules *rs)
{
	struct job *jobs;
	int i, many = n > 1 && kt_cli_small_files(paths, n);

	if (n < 1 || (jobs = calloc((size_t)n, sizeof(*jobs))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < n; i++) {
		jobs[i].vw = vw;
		jobs[i].rs = rs;
		jobs[i].path = paths[i];
		jobs[i].alone = !many;
	}
	if (many)
		kt_cli_tasks((size_t)n, read_task, jobs);
	for (i = 0; i < n; i++) {
		if (!many)
			read_path(&jobs[i]);
		report_path(vw, &jobs[i]);
	}
	free(jobs);
}

/* ------------------------------------------------------------------ */
/*
 * --merge: per-rank view folders (kt-views -o DIR, one per rank) into
 * the views of the whole job, from their .tsv tables alone: each view a
 * merge function of lib/model (the table of the merged trace), its .tsv
 * and a .txt of the merged table (memory.svg is not written).
 */
static const struct merged_view {
	const char	*name;
	struct kt_table	*(*merge)(char *const *, size_t, struct kt_error *);
	struct kt_table	*(*merge_top)(char *const *, size_t, int64_t,
			    struct kt_error *);	/* when --top cuts it */
} merged_views[] = {	/* in the order of vname[] and vtitle[] */
	{ "1_runtime_decomposition", kt_decompose_merge, NULL },
	{ "2_lost_time", NULL, kt_gaps_merge_top },
	{ "3_kernel_table", kt_bucket_merge, NULL },
	{ "4_overlap_exposure", kt_overlap_merge, NULL },
	{ "5_memory", kt_memory_merge, NULL },
	{ "6_op_table", kt_ops_merge, NULL }
};

/* Write t to dir/name.ext in form f, with a title line for the text. */
static void
merged_write(const char *dir, const struct merged_view *mv,
    const struct kt_table *t, size_t ndirs, enum kt_table_form f)
{
	char path[4096], head[1024];
	struct kt_out *out;
	int bad = 0;

	snprintf(path, sizeof(path), "%s/%s%s", dir, mv->name,
	    f == KT_TABLE_TSV ? ".tsv" : ".txt");
	out = kt_cli_out_open(path, -1);
	if (f == KT_TABLE_TEXT) {
		snprintf(head, sizeof(head), "%s\n\nmerged from %zu view "
		    "folders:\n", vtitle[mv - merged_views], ndirs);
		bad = kt_out_write(out, head, strlen(head)) == -1;
	}
	bad = bad || kt_table_write(t, f, 1, out) == -1;
	kt_cli_out_commit(out, bad, NULL);
}

static int
merge_views(const struct opts *o, char **dirs, int ndirs)
{
	struct stat so, sd;
	struct kt_error err;
	char **paths;
	size_t v, k, n;
	int i;

	if (ndirs == 0) {
		kt_cli_warn("--merge: give the per-rank view folders");
		return 2;
	}
	if (o->capacity >= 0 || o->rules != NULL || o->co.member != NULL) {
		kt_cli_warn("--merge takes view folders: only -n and -o");
		return 2;
	}
	if (kt_cli_mkdir(o->dir) == -1) {
		kt_cli_warn("%s: %s", o->dir, strerror(errno));
		return 2;
	}
	if (stat(o->dir, &so) == -1 || !S_ISDIR(so.st_mode)) {
		kt_cli_warn("%s: not a folder", o->dir);
		return 2;
	}
	for (i = 0; i < ndirs; i++)
		if (stat(dirs[i], &sd) == 0 && sd.st_dev == so.st_dev &&
		    sd.st_ino == so.st_ino) {
			kt_cli_warn("%s: the output folder is an input",
			    dirs[i]);
			return 2;
		}
	if ((paths = calloc((size_t)ndirs, sizeof(*paths))) == NULL)
		kt_cli_nomem();
	for (v = 0; v < sizeof(merged_views) / sizeof(merged_views[0]); v++) {
		const struct merged_view *mv = &merged_views[v];
		struct kt_table *t;

		for (k = 0; k < (size_t)ndirs; k++) {
			n = strlen(dirs[k]) + strlen(mv->name) + 6;
			if ((paths[k] = malloc(n)) == NULL)
				kt_cli_nomem();
			snprintf(paths[k], n, "%s/%s.tsv", dirs[k], mv->name);
		}
		t = mv->merge_top != NULL ? mv->merge_top(paths,
		    (size_t)ndirs, (int64_t)o->top, &err) :
		    mv->merge(paths, (size_t)ndirs, &err);
		for (k = 0; k < (size_t)ndirs; k++)
			free(paths[k]);
		if (t == NULL) {
			free(paths);
			kt_cli_die(&err);
		}
		merged_write(o->dir, mv, t, (size_t)ndirs, KT_TABLE_TSV);
		merged_write(o->dir, mv, t, (size_t)ndirs, KT_TABLE_TEXT);
		kt_table_free(t);
	}
	free(paths);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "capacity-gb", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "member", required_argument, NULL, 'm' },
		{ "merge", no_argument, NULL, 'M' },
		{ "output", required_argument, NULL, 'o' },
		{ "rules", required_argument, NULL, 'r' },
		{ "strict", no_argument, NULL, 'S' },
		{ "spool-max", required_argument, NULL, KT_CLI_SPOOL_MAX },
		{ "top", required_argument, NULL, 'n' },
		{ "step-regex", required_argument, NULL, KT_CLI_STEP_REGEX },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char dash[] = "-";
	static char *stdin_arg[] = { dash, NULL };
	struct views vw;
	struct opts *o = &vw.o;
	struct kt_rules *rs;
	struct kt_error err;
	struct stat st;
	int ch, i, v, rc, merge = 0;

	memset(&vw, 0, sizeof(vw));
	o->capacity = -1;
	o->top = 50;
	kt_cli_init("kt-views");
	while ((ch = getopt_long(argc, argv, "c:hMm:n:o:r:SV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->capacity = kt_cli_gb("--capacity-gb", optarg);
			break;
		case 'n':
			o->top = (size_t)kt_cli_int("--top", optarg, 0,
			    INT32_MAX);
			break;
		case 'o':
			o->dir = optarg;
			break;
		case 'r':
			o->rules = optarg;
			break;
		case 'M':
			merge = 1;
			break;
		default:
			kt_cli_opt(&o->co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (o->dir == NULL) {
		kt_cli_warn("give the folder to write with -o DIR");
		usage(stderr);
		return 2;
	}
	if (merge)
		return merge_views(o, argv, argc);
	if (argc == 0) {
		argc = 1;
		argv = stdin_arg;
	}
	kt_cli_inputs(argv, argc);
	if (stat(o->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		kt_cli_warn("%s: not a folder", o->dir);
		return 2;
	}
	if (kt_cli_mkdir(o->dir) == -1) {
		kt_cli_warn("%s: %s", o->dir, strerror(errno));
		return 2;
	}
	if ((rs = kt_rules_new(1)) == NULL)
		kt_cli_nomem();
	if (o->rules != NULL && kt_rules_load(rs, o->rules, 0, &err) == -1)
		kt_cli_die(&err);
	kt_cli_on_exit(at_exit, &vw);
	/*
	 * Standard input, a FIFO or a pipe is copied once
	 * (kt_cli_input_path; the copy is named as the input in messages).
	 */
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-") == 0) {
			if (vw.spool != NULL) {
				kt_cli_warn("standard input named twice");
				kt_rules_free(rs);
				return leave(&vw, 2);
			}
			argv[i] = vw.spool = kt_cli_spool_stdin();
		} else
			argv[i] = kt_cli_input_path(argv[i]);
	}
	model_pass(&vw, argv, argc, rs);
	for (v = 0; v < NVIEWS; v++)
		write_view(&vw, v);
	write_svg(&vw);
	/* An input without device activity is a data condition. */
	for (i = 0, rc = 0; i < (int)vw.nins; i++)
		rc |= vw.ins[i].nodev;
	free_views(&vw, rs);
	return leave(&vw, rc);
}
