/*
 * kt-diff: one run against another.  Two traces, two kt views folders,
 * or two tables of the same kind (run A, the baseline, then run B) are
 * reduced to the same views (GPU time per bucket, kernel and user
 * frame, CPU and GPU self time per op, lost time by cause, exposed
 * communication per collective) and joined by their keys; each row is
 * a cost in A, in B, the change and the relative change, most changed
 * first.  --steps joins the step series instead: the n-th step of A
 * against the n-th of B, and the means, against A's step-to-step range.
 * Two comment lines first say what the runs are (path, SHA-256, steps,
 * the trace's start date), so that a report cites its baseline.
 * The join is lib/model/diff.c's.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kt.h"

#define NVIEWS	6

__extension__ typedef __int128 i128;

static const char *const viewnames[NVIEWS] = {
	"bucket", "kernel", "frame", "op", "gap", "collective"
};

struct run {
	const char	*path;
	char		 sha[65];	/* hex, or "-" */
	char		 date[32];	/* the trace's start, or "-" */
	long long	 steps;		/* -1: unknown */
	int		 dir;
};

struct opts {
	const char	*rules;
	size_t		 top;
	int		 steps;
	unsigned	 views;		/* bits of viewnames */
	long long	 fail_milli;	/* --fail-above in 1/1000 %, or -1 */
	int		 fail_on;	/* 0 wall, 1 busy, 2 idle */
	struct kt_cli_opts co;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-diff [-jsSTtV] [-F pct] [-f metric] [-m glob] "
	    "[-n top] [-o file]\n"
	    "               [-r rules] [-v views] A B\n"
	    "  -F, --fail-above PCT      exit 1 when B's mean step time is more\n"
	    "                            than PCT %% above A's\n"
	    "  -f, --fail-on METRIC      wall (default), busy or idle\n"
	    "  -j, --json                JSON lines\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -n, --top N               the N most changed rows\n"
	    "  -o, --output FILE         write FILE atomically\n"
	    "  -r, --rules FILE          bucket rules (bucket<TAB>regex) before\n"
	    "                            the default ones\n"
	    "  -s, --steps               the step series: step against step\n"
	    "  -S, --strict              refuse damaged input\n"
	    "  -T, --text                an aligned text table\n"
	    "  -t, --tsv                 TSV (the default unless on a terminal)\n"
	    "  -v, --views LIST          of bucket, kernel, frame, op, gap,\n"
	    "                            collective (default all)\n"
	    "  -h, --help, -V, --version\n");
}

static unsigned
parse_views(const char *arg)
{
	const char *p = arg;
	unsigned bits = 0;
	size_t i, len;

	for (;;) {
		len = strcspn(p, ",");
		for (i = 0; i < NVIEWS; i++)
			if (strlen(viewnames[i]) == len &&
			    strncmp(viewnames[i], p, len) == 0)
				break;
		if (i == NVIEWS) {
			kt_cli_warn("--views: no view '%.*s' (bucket, kernel, "
			    "frame, op, gap, collective)", (int)len, p);
			exit(2);
		}
		bits |= 1u << i;
		p += len;
		if (*p == '\0')
			return bits;
		p++;
	}
}

/* A percentage with up to three decimals, in thousandths of a percent. */
static long long
parse_pct(const char *arg)
{
	const char *p = arg;
	long long v = 0;
	int dec = -1;

	if (*p == '\0')
		goto bad;
	for (; *p != '\0'; p++) {
		if (*p == '.' && dec < 0) {
			dec = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || dec == 3 || v > 1000000000)
			goto bad;
		v = v * 10 + (*p - '0');
		if (dec >= 0)
			dec++;
	}
	for (dec = dec < 0 ? 0 : dec; dec < 3; dec++)
		v *= 10;
	return v;
bad:
	kt_cli_warn("--fail-above: '%s' is not a percentage (like 5 or 2.5)",
	    arg);
	exit(2);
}

/* The SHA-256 of a file's bytes as they are on disk, or "-". */
static void
file_sha(const char *path, char out[65])
{
	struct kt_sha256 h;
	unsigned char dig[32], buf[65536];
	ssize_t n;
	int fd, i;

	snprintf(out, 65, "-");
	if (strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY)) == -1)
		return;
	kt_sha256_init(&h);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		kt_sha256_update(&h, buf, (size_t)n);
	close(fd);
	if (n < 0)
		return;
	kt_sha256_final(&h, dig);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
}

/* The earliest time of a model as a UTC date when it is a Unix time. */
static void
model_date(const struct kt_model *m, char out[32])
{
	int64_t t0 = INT64_MAX;
	struct tm tm;
	time_t secs;
	size_t i;

	snprintf(out, 32, "-");
	for (i = 0; i < m->nspans; i++)
		if (m->spans[i].ts < t0)
			t0 = m->spans[i].ts;
	for (i = 0; i < m->nact; i++)
		if (m->act[i].ts < t0)
			t0 = m->act[i].ts;
	/* 2001-09-09 to 2100: a Kineto trace's epoch time, not a counter. */
	if (t0 < 1000000000LL * 1000000000LL ||
	    t0 >= 4102444800LL * 1000000000LL)
		return;
	secs = (time_t)(t0 / 1000000000LL);
	if (gmtime_r(&secs, &tm) == NULL)
		return;
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
need(const void *p)
{
	if (p == NULL)
		kt_cli_nomem();
}

static void
add(struct kt_diff *d, int side, struct kt_table *t, const char *view,
    const char *name)
{
	struct kt_error err;

	if (kt_diff_add(d, side, t, view, &err) == -1) {
		char msg[sizeof(err.msg)];

		snprintf(msg, sizeof(msg), "%s", err.msg);
		kt_error_set(&err, name, err.line, err.col, "%s", msg);
		kt_cli_die(&err);
	}
	kt_table_free(t);
}

/* A trace: the model, then each view's table from the library. */
static void
add_trace(struct kt_diff *d, int side, struct run *r, const struct opts *o,
    const struct kt_rules *rs)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_decompose *dc;
	struct kt_error err;
	struct kt_bucket_opts bo;
	struct kt_chains *ch = NULL;
	uint32_t *classes;
	const char *name = strcmp(r->path, "-") == 0 ? "<stdin>" : r->path;
	static const char *const by[3] = { "bucket", "name", "frame" };
	int v;

	rd = kt_cli_open_one(r->path, name, o->co.member, o->co.rflags, &src);
	m = kt_cli_model(rd);
	model_date(m, r->date);
	r->steps = (long long)m->nsteps;
	/* One classification for the views that ask. */
	if ((classes = kt_rules_classify(rs, m)) == NULL)
		kt_cli_nomem();
	if ((dc = kt_decompose_new_with(m, rs, classes, &err)) == NULL)
		kt_cli_die(&err);
	add(d, side, kt_decompose_series(dc), NULL, name);
	kt_decompose_free(dc);
	for (v = 0; v < 3 && !o->steps; v++) {
		if (!(o->views & (1u << v)))
			continue;
		memset(&bo, 0, sizeof(bo));
		bo.rules = rs;
		bo.classes = classes;
		if (v == 2) {
			if ((ch = kt_chains_new(m, NULL, &err)) == NULL)
				kt_cli_die(&err);
			bo.chains = ch;
		}
		if (kt_bucket_by_parse(&bo, by[v]) == -1)
			kt_cli_nomem();
		add(d, side, kt_bucket_table(m, &bo), viewnames[v], name);
	}
	if (!o->steps && (o->views & (1u << 3))) {
		struct kt_ops_opts oo = KT_OPS_OPTS_INIT;
		struct kt_table *t;

		oo.by = KT_OPS_BY_RANK;
		if ((t = kt_ops_table(m, &oo, NULL, &err)) == NULL)
			kt_cli_die(&err);
		add(d, side, t, viewnames[3], name);
	}
	if (!o->steps && (o->views & (1u << 4))) {
		struct kt_gaps_opts go = KT_GAPS_OPTS_INIT;

		add(d, side, kt_gaps_table(m, &go, NULL, NULL), viewnames[4],
		    name);
	}
	if (!o->steps && (o->views & (1u << 5))) {
		struct kt_overlap *ov;

		if ((ov = kt_overlap_new_with(m, rs, classes, &err)) == NULL)
			kt_cli_die(&err);
		add(d, side, kt_overlap_table(ov, 0), viewnames[5], name);
		kt_overlap_free(ov);
	}
	kt_chains_free(ch);
	free(classes);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_model_free(m);
	kt_reader_free(rd);
	kt_source_close(src);
}

/* Whether a view name (of a table read back) is one --views keeps. */
static int
view_wanted(const char *kind, const struct opts *o)
{
	size_t i;

	if (strcmp(kind, "step") == 0)
		return 1;
	if (o->steps)
		return 0;
	if (strcmp(kind, "kernel_table") == 0)
		kind = "bucket";
	for (i = 0; i < NVIEWS; i++)
		if (strcmp(kind, viewnames[i]) == 0)
			return (o->views & (1u << i)) != 0;
	return 1;
}

/* A table file, or each known .tsv of a kt views folder. */
static int
add_table(struct kt_diff *d, int side, const char *path, const struct opts *o,
    struct run *r, int quiet)
{
	struct kt_error err;
	struct kt_table *t;
	const char *kind;

	if ((t = kt_table_load(path, &err)) == NULL)
		kt_cli_die(&err);
	if ((kind = kt_diff_kind(t)) == NULL) {
		kt_table_free(t);
		if (quiet)
			return 0;
		kt_error_set(&err, path, 1, 1, "not a trace, nor a table kt "
		    "diff knows (kt bucket, kt gaps, kt ops, kt overlap, kt "
		    "decompose --series, kt views)");
		kt_cli_die(&err);
	}
	if (!view_wanted(kind, o)) {
		kt_table_free(t);
		return 1;
	}
	if (strcmp(kind, "step") == 0 && kt_table_column(t, "steps") >= 0 &&
	    kt_table_rows(t) > 0) {
		/* kt views' summary: the steady row counts the steps. */
		int c = kt_table_column(t, "steps"), p = kt_table_column(t,
		    "phase");
		size_t i;

		for (i = 0; i < kt_table_rows(t); i++)
			if (strcmp(kt_table_get(t, i, (size_t)p), "steady") ==
			    0)
				r->steps = strtoll(kt_table_get(t, i,
				    (size_t)c), NULL, 10);
	}
	add(d, side, t, NULL, path);
	return 1;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
add_dir(struct kt_diff *d, int side, struct run *r, const struct opts *o)
{
	DIR *dp;
	struct dirent *de;
	char **names = NULL, path[4096];
	size_t n = 0, i, used = 0;

	if ((dp = opendir(r->path)) == NULL) {
		kt_cli_warn("%s: %s", r->path, strerror(errno));
		exit(2);
	}
	while ((de = readdir(dp)) != NULL) {
		size_t len = strlen(de->d_name);
		char **nn;

		if (len < 5 || strcmp(de->d_name + len - 4, ".tsv") != 0)
			continue;
		need(nn = realloc(names, (n + 1) * sizeof(*names)));
		names = nn;
		need(names[n++] = strdup(de->d_name));
	}
	closedir(dp);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->path, names[i]);
		used += (size_t)add_table(d, side, path, o, r, 1);
		free(names[i]);
	}
	free(names);
	if (used == 0) {
		kt_cli_warn("%s: a folder without a table kt diff knows (the "
		    "files of kt views)", r->path);
		exit(2);
	}
}

/* Whether a file is a TSV table: its first byte a letter. */
static int
is_table(const char *path)
{
	unsigned char c = 0;
	int fd;
	ssize_t n;

	if (strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY)) == -1)
		return 0;
	n = read(fd, &c, 1);
	close(fd);
	return n == 1 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

static void
header(struct kt_out *out, int form, const struct run *r, char side)
{
	char line[8192];
	int n;

	if (form == KT_TABLE_JSON) {
		struct kt_buf b = { 0 };
		char steps[32];

		if (kt_json_escape(&b, r->path, strlen(r->path)) == -1 ||
		    kt_buf_addc(&b, '\0') == -1)
			kt_cli_nomem();
		if (r->steps < 0)
			snprintf(steps, sizeof(steps), "null");
		else
			snprintf(steps, sizeof(steps), "%lld", r->steps);
		n = snprintf(line, sizeof(line), "{\"run\":\"%c\",\"path\":\"%s\","
		    "\"sha256\":\"%s\",\"steps\":%s,\"date\":\"%s\"}\n",
		    side, b.p, r->sha, steps, r->date);
		kt_buf_free(&b);
	} else if (r->steps < 0)
		n = snprintf(line, sizeof(line), "# %c: %s  sha256 %s  steps "
		    "-  date %s\n", side, r->path, r->sha, r->date);
	else
		n = snprintf(line, sizeof(line), "# %c: %s  sha256 %s  steps "
		    "%lld  date %s\n", side, r->path, r->sha, r->steps,
		    r->date);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = (int)strlen(line);
	if (kt_out_write(out, line, (size_t)n) == -1) {
		struct kt_error err;

		kt_error_set(&err, kt_out_name(out), 0, 0, "write error");
		kt_cli_out_commit(out, 1, &err);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "fail-above", required_argument, NULL, 'F' },
		{ "fail-on", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "rules", required_argument, NULL, 'r' },
		{ "steps", no_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "top", required_argument, NULL, 'n' },
		{ "tsv", no_argument, NULL, 't' },
		{ "views", required_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const metric[3] = { "wall", "busy", "idle" };
	struct opts o;
	struct run runs[2];
	struct kt_sha256_job *job[2] = { NULL, NULL };
	struct kt_diff *d;
	struct kt_rules *rs;
	struct kt_table *t;
	struct kt_error err;
	struct kt_cli_table ct;
	struct stat st;
	int ch, i, rc = 0, only, reg;
	size_t v;

	memset(&o, 0, sizeof(o));
	o.co = (struct kt_cli_opts)KT_CLI_OPTS_INIT;
	o.views = (1u << NVIEWS) - 1;
	o.fail_milli = -1;
	kt_cli_init("kt-diff");
	while ((ch = getopt_long(argc, argv, "F:f:hjm:n:o:r:sSTtv:V",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'F':
			o.fail_milli = parse_pct(optarg);
			break;
		case 'f':
			for (i = 0; i < 3; i++)
				if (strcmp(optarg, metric[i]) == 0)
					break;
			if (i == 3) {
				kt_cli_warn("--fail-on: no metric '%s' (wall, "
				    "busy, idle)", optarg);
				exit(2);
			}
			o.fail_on = i;
			break;
		case 'n':
			o.top = (size_t)kt_cli_int("--top", optarg, 1,
			    1ll << 40);
			break;
		case 'r':
			o.rules = optarg;
			break;
		case 's':
			o.steps = 1;
			break;
		case 'v':
			o.views = parse_views(optarg);
			break;
		default:
			kt_cli_opt(&o.co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2) {
		kt_cli_warn("two runs to compare: A (the baseline) and B");
		usage(stderr);
		exit(2);
	}
	if (strcmp(argv[0], "-") == 0 && strcmp(argv[1], "-") == 0) {
		kt_cli_warn("standard input can be one of the runs, not both");
		exit(2);
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(o.co.output, argv, argc) == -1)
		exit(2);
	if ((rs = kt_rules_new(1)) == NULL)
		kt_cli_nomem();
	if (o.rules != NULL && kt_rules_load(rs, o.rules, 0, &err) == -1)
		kt_cli_die(&err);
	need(d = kt_diff_new());
	for (i = 0; i < 2; i++) {
		struct run *r = &runs[i];

		memset(r, 0, sizeof(*r));
		r->path = argv[i];
		r->steps = -1;
		snprintf(r->date, sizeof(r->date), "-");
		reg = strcmp(r->path, "-") != 0 && stat(r->path, &st) == 0;
		r->dir = reg && S_ISDIR(st.st_mode);
		reg = reg && S_ISREG(st.st_mode);
		/* A regular file is hashed on a thread while it is read. */
		snprintf(r->sha, sizeof(r->sha), "-");
		if (reg) {
			if ((job[i] = kt_sha256_start(r->path,
			    kt_cli_threads())) == NULL)
				kt_cli_nomem();
		} else
			file_sha(r->dir ? "-" : r->path, r->sha);
		if (r->dir)
			add_dir(d, i, r, &o);
		else if (is_table(r->path))
			add_table(d, i, r->path, &o, r, 0);
		else
			add_trace(d, i, r, &o, rs);
		if (kt_diff_nsteps(d, i) > 0)
			r->steps = (long long)kt_diff_nsteps(d, i);
	}
	for (i = 0; i < 2; i++)
		if (job[i] != NULL && kt_sha256_wait(job[i], runs[i].sha,
		    NULL) == -1)
			snprintf(runs[i].sha, sizeof(runs[i].sha), "-");
	for (v = 0; (kt_diff_view(d, v, &only)) != NULL; v++)
		if (only >= 0)
			kt_cli_warn("view %s: only in run %c (%s), not "
			    "compared", kt_diff_view(d, v, &only),
			    only ? 'B' : 'A', runs[only].path);
	if (o.steps)
		t = kt_diff_steps(d, &err);
	else
		t = kt_diff_table(d, o.top, &err);
	if (t == NULL)
		kt_cli_die(&err);
	kt_cli_table_open(&ct, o.co.output, o.co.form);
	header(ct.out, ct.form, &runs[0], 'a');
	header(ct.out, ct.form, &runs[1], 'b');
	kt_cli_table_close(&ct, t);
	if (o.fail_milli >= 0) {
		int64_t a, b, range;

		if (kt_diff_mean(d, 0, o.fail_on, &a, &range) == -1 ||
		    kt_diff_mean(d, 1, o.fail_on, &b, NULL) == -1) {
			kt_cli_warn("--fail-above: no steps in run %s to judge "
			    "the %s time by", kt_diff_mean(d, 0, o.fail_on,
			    &a, NULL) == -1 ? "A" : "B", metric[o.fail_on]);
			rc = 1;
		} else if ((i128)(b - a) * 100000 >
		    (i128)o.fail_milli * a) {
			kt_cli_warn("mean step %s time %lld ns in B, %lld ns "
			    "in A: %+lld ns, above the %lld.%03lld%% allowed",
			    metric[o.fail_on], (long long)b, (long long)a,
			    (long long)(b - a), o.fail_milli / 1000,
			    o.fail_milli % 1000);
			rc = 1;
		}
	}
	kt_table_free(t);
	kt_diff_free(d);
	kt_rules_free(rs);
	return rc;
}
