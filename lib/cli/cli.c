/*
 * cli.c: what every filter's main() shares: the program name, messages
 * in the family's format, strict number parsing, the output-is-not-an-
 * input check, repair reports and progress.  This is the one part of the
 * library that prints, and it prints only to stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kt.h"

static const char *progname = "kt";

#ifdef KT_DEBUG_SCANS
/* The debug build: the events scanned, on stderr at exit. */
static void
debug_scans(void)
{
	uint64_t scans, skims, pieces, workers, again, ended;

	kt_debug_scans(&scans, &skims);
	fprintf(stderr, "%s: debug: %llu scans, %llu skims\n", progname,
	    (unsigned long long)scans, (unsigned long long)skims);
	kt_debug_split(&pieces, &workers, &again, &ended);
	if (pieces > 0)
		fprintf(stderr, "%s: debug: split: %llu pieces, %llu on "
		    "workers, %llu read again, %llu ended early\n", progname,
		    (unsigned long long)pieces, (unsigned long long)workers,
		    (unsigned long long)again, (unsigned long long)ended);
}
#endif

/*
 * Linux's pipes hold 64 KB: a filter writing a trace through one wakes
 * its reader every 64 KB, and a 2 GB pipe between two filters costs
 * seconds of switching.  Where standard input or output is a pipe, ask
 * for 1 MB (the most an unprivileged process may, by default); where the
 * system refuses, the pipe stays as it was.
 */
#if defined(__linux__) && !defined(F_SETPIPE_SZ)
#define F_SETPIPE_SZ	1031	/* F_LINUX_SPECIFIC_BASE + 7 */
#endif
#define PIPE_BYTES	(1 << 20)

static void
widen_pipes(void)
{
#ifdef F_SETPIPE_SZ
	struct stat st;
	int fd;

	for (fd = 0; fd <= 1; fd++)
		if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
			(void)fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES);
#endif
}

void
kt_cli_init(const char *name)
{
	const char *scan;

	progname = name;
	/* KT_SCAN names the scanner's path (kt(7)): one this machine runs. */
	if ((scan = getenv("KT_SCAN")) != NULL && *scan != '\0' &&
	    kt_scan_path(scan) == -1) {
		kt_cli_warn("KT_SCAN=%s: not a path of the scanner here "
		    "(this machine runs portable%s%s)", scan,
		    kt_scan_path("sse2") > 0 ? ", sse2" : "",
		    kt_scan_path("avx2") > 0 ? ", avx2" : "");
		exit(2);
	}
	widen_pipes();
#ifdef KT_DEBUG_SCANS
	if (getenv("KT_DEBUG_SCANS") != NULL)
		atexit(debug_scans);
#endif
}

const char *
kt_cli_name(void)
{
	return progname;
}

/* Print "progname: message" on stderr. */
void
kt_cli_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Print an error as "progname: FILE:LINE:COL: what" (or shorter). */
void
kt_cli_error(const struct kt_error *e)
{
	kt_cli_progress_done();
	if (e->file[0] != '\0' && e->line > 0)
		fprintf(stderr, "%s: %s:%ld:%ld: %s\n", progname, e->file,
		    e->line, e->col, e->msg);
	else if (e->file[0] != '\0')
		fprintf(stderr, "%s: %s: %s\n", progname, e->file, e->msg);
	else
		fprintf(stderr, "%s: %s\n", progname, e->msg);
}

long long
kt_cli_int(const char *opt, const char *s, long long min, long long max)
{
	long long v;

	if (kt_int_parse(s, min, max, &v) == -1) {
		kt_cli_warn("%s: '%s' is not a number from %lld to %lld", opt,
		    s, min, max);
		exit(2);
	}
	return v;
}

/* A --id list: "kind:N" or "N", comma-separated (kt-correlate, kt-select). */
void
kt_cli_ids(const char *opt, const char *arg, uint64_t **ids, size_t *nids)
{
	const char *p = arg;

	while (*p != '\0') {
		const char *e = strchr(p, ','), *colon, *num;
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
		char buf[64], *end;
		unsigned long long v;
		uint64_t *ni;

		if (n == 0 || n >= sizeof(buf)) {
			kt_cli_warn("%s: bad row id '%.*s'", opt, (int)n, p);
			exit(2);
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		colon = strrchr(buf, ':');
		num = colon != NULL ? colon + 1 : buf;
		if (*num < '0' || *num > '9' ||
		    (v = strtoull(num, &end, 10), *end != '\0') ||
		    v > (1ull << 62)) {
			kt_cli_warn("%s: bad row id '%s' (kind:N or N)", opt,
			    buf);
			exit(2);
		}
		if ((ni = realloc(*ids, (*nids + 1) * sizeof(*ni))) == NULL)
			kt_cli_nomem();
		*ids = ni;
		(*ids)[(*nids)++] = v;
		p += n;
		if (*p == ',')
			p++;
	}
}

int
kt_cli_mkdir(const char *path)
{
	char *p, *s;
	int rc = 0;

	if ((p = strdup(path)) == NULL)
		return -1;
	for (s = p + 1; rc == 0 && *s != '\0'; s++)
		if (*s == '/' && s[-1] != '/') {
			*s = '\0';
			if (mkdir(p, 0777) == -1 && errno != EEXIST)
				rc = -1;
			*s = '/';
		}
	if (rc == 0 && mkdir(p, 0777) == -1 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

int
kt_cli_check_output(const char *out, char *const *in, int nin)
{
	struct stat so, si;
	int i, rc;

	if (out == NULL || strcmp(out, "-") == 0 || stat(out, &so) == -1 ||
	    !S_ISREG(so.st_mode))
		return 0;
	for (i = 0; i <= nin; i++) {
		/* No input names stdin; so does "-". */
		if (i == nin && nin > 0)
			break;
		if (i == nin || strcmp(in[i], "-") == 0)
			rc = fstat(0, &si);
		else
			rc = stat(in[i], &si);
		if (rc == 0 && si.st_dev == so.st_dev &&
		    si.st_ino == so.st_ino) {
			kt_cli_warn("%s: refusing to overwrite an input", out);
			return -1;
		}
	}
	return 0;
}

char **
kt_cli_merge_inputs(char **argv, int argc, const struct kt_cli_opts *co,
    size_t *n)
{
	static char dash[] = "-";
	static char *stdin_only[] = { dash, NULL };

	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co->output, argv, argc) == -1)
		return NULL;
	*n = argc > 0 ? (size_t)argc : 1;
	return argc > 0 ? argv : stdin_only;
}

int
kt_cli_merge_write(struct kt_table *t, const struct kt_error *err,
    const struct kt_cli_opts *co)
{
	if (t == NULL)
		kt_cli_die(err);
	kt_cli_write_table(t, co->output, co->form);
	kt_table_free(t);
	return 0;
}

int
kt_cli_report_repairs(const char *name, const struct kt_repairs *r)
{
	char line[256];
	int i, n = 0;

	for (i = 0; i < KT_NREPAIRS; i++) {
		if (r->n[i] == 0)
			continue;
		kt_repair_describe(r, (enum kt_repair)i, line, sizeof(line));
		kt_cli_progress_done();
		fprintf(stderr, "%s: %s: repaired: %s\n", progname, name, line);
		n++;
	}
	if (r->tsv_counted && r->tsv_rows_said != r->tsv_rows_read) {
		kt_cli_progress_done();
		fprintf(stderr, "%s: %s: note: %llu event rows, its end row "
		    "counted %llu: rows were removed or added after kt wrote "
		    "it\n", progname, name,
		    (unsigned long long)r->tsv_rows_read,
		    (unsigned long long)r->tsv_rows_said);
	}
	return n;
}

int64_t
kt_cli_keep_rank(struct kt_writer *w, const struct kt_reader *rd)
{
	const char *how;

	(void)kt_reader_rank_how(rd, &how);
	return kt_cli_keep_rank_as(w, kt_reader_rank_to_keep(rd),
	    kt_reader_name(rd), how);
}

int64_t
kt_cli_keep_rank_as(struct kt_writer *w, int64_t rank, const char *name,
    const char *how)
{
	if (rank < 0)
		return -1;
	kt_writer_rank(w, rank);
	kt_cli_progress_done();
	fprintf(stderr, "%s: %s: note: rank %lld (%s) written as "
	    KT_KEY_RANK "\n", progname, name, (long long)rank, how);
	return rank;
}

void
kt_cli_warn_no_device(const char *name)
{
	kt_cli_warn("%s: no device activity (kernel, gpu_memcpy, gpu_memset, "
	    "mtia_ccp_events) in the trace", name);
}

int
kt_cli_no_device(const struct kt_reader *rd, const struct kt_model *m)
{
	if (m->nact > 0)
		return 0;
	kt_cli_warn_no_device(kt_reader_name(rd));
	return 1;
}

/*
 * What a fatal end removes: the outputs not yet committed (a list, since
 * a filter may write several files at once) and a few temporary files.
 * The signal handler only reads these and calls unlink().
 */
#define CLI_NTEMP	8

static struct kt_out **cli_outs;
static size_t cli_nout, cli_capout;
static char cli_temp[CLI_NTEMP][PATH_MAX + 64];
static char *const *cli_in;
static int cli_nin = -1;
static char *cli_spool;		/* the copy of stdin, or NULL */
static const char *cli_step_regex;	/* --step-regex, or NULL */

/* On a fatal signal, remove the temporary files, then die of it. */
static void
on_signal(int sig)
{
	size_t i;

	for (i = 0; i < cli_nout; i++)
		if (cli_outs[i] != NULL && kt_out_tmppath(cli_outs[i])[0] != '\0')
			unlink(kt_out_tmppath(cli_outs[i]));
	for (i = 0; i < CLI_NTEMP; i++)
		if (cli_temp[i][0] != '\0')
			unlink(cli_temp[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
cli_catch(void)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGTERM, SIGPIPE };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
}

void
kt_cli_add_temp(const char *path)
{
	size_t i;

	if (path == NULL || path[0] == '\0')
		return;
	for (i = 0; i < CLI_NTEMP; i++)
		if (cli_temp[i][0] == '\0') {
			snprintf(cli_temp[i], sizeof(cli_temp[i]), "%s", path);
			break;
		}
	cli_catch();
}

void
kt_cli_drop_temp(const char *path)
{
	size_t i;

	for (i = 0; path != NULL && i < CLI_NTEMP; i++)
		if (strcmp(cli_temp[i], path) == 0)
			cli_temp[i][0] = '\0';
}

void
kt_cli_set_output(struct kt_out *o)
{
	struct kt_out **p;

	if (o == NULL)
		return;
	if (cli_nout == cli_capout) {
		size_t cap = cli_capout ? 2 * cli_capout : 8;

		if ((p = realloc(cli_outs, cap * sizeof(*p))) == NULL)
			kt_cli_nomem();
		cli_outs = p;
		cli_capout = cap;
	}
	cli_outs[cli_nout++] = o;
	cli_catch();
}

void
kt_cli_unset_output(struct kt_out *o)
{
	size_t i;

	for (i = 0; i < cli_nout; i++)
		if (cli_outs[i] == o) {
			cli_outs[i] = cli_outs[--cli_nout];
			break;
		}
}

void
kt_cli_inputs(char *const *in, int nin)
{
	cli_in = in;
	cli_nin = nin;
}

/* What kt_cli_on_exit() registered: one function and its argument. */
static void (*cli_exit_fn)(void *);
static void *cli_exit_arg;

static void
cli_at_exit(void)
{
	if (cli_exit_fn != NULL)
		cli_exit_fn(cli_exit_arg);
}

void
kt_cli_on_exit(void (*fn)(void *), void *arg)
{
	static int registered;

	if (!registered && atexit(cli_at_exit) == 0)
		registered = 1;
	cli_exit_fn = fn;
	cli_exit_arg = arg;
}

void
kt_cli_die(const struct kt_error *e)
{
	if (e != NULL)
		kt_cli_error(e);
	while (cli_nout > 0)
		kt_out_abort(cli_outs[--cli_nout]);
	exit(2);
}

void
kt_cli_nomem(void)
{
	struct kt_error e;

	kt_error_set(&e, NULL, 0, 0, "out of memory");
	kt_cli_die(&e);
}

static int progress_shown;
static struct timespec progress_start;
static struct timespec progress_last;

void
kt_cli_progress(const struct kt_reader *r)
{
	struct timespec now;
	double el;
	uint64_t off = kt_reader_offset(r), size = kt_reader_size(r);

	if (!isatty(2))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (progress_start.tv_sec == 0) {
		progress_start = now;
		progress_last = now;
		return;
	}
	el = (double)(now.tv_sec - progress_start.tv_sec);
	if (el < 2 || now.tv_sec == progress_last.tv_sec)
		return;
	progress_last = now;
	if (size > 0)
		fprintf(stderr, "\r%s: %s: %llu of %llu MB", progname,
		    kt_reader_name(r), (unsigned long long)(off >> 20),
		    (unsigned long long)(size >> 20));
	else
		fprintf(stderr, "\r%s: %s: %llu MB", progname,
		    kt_reader_name(r), (unsigned long long)(off >> 20));
	progress_shown = 1;
}

void
kt_cli_progress_done(void)
{
	if (progress_shown) {
		fputs("\r\033[K", stderr);
		progress_shown = 0;
	}
}

/* ------------------------------------------------------------------ */
/* The main() mechanics the filters share: one trace in, one output out. */

struct kt_reader *
kt_cli_open_one(const char *path, const char *name, const char *member,
    unsigned flags, struct kt_source **srcp)
{
	struct kt_error err;
	struct kt_reader *rd;
	int rc;

	if (path == NULL)
		path = "-";
	if (name == NULL)
		name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	if ((*srcp = kt_cli_source_open(path, member, flags, &err)) == NULL)
		kt_cli_die(&err);
	if ((rc = kt_source_next(*srcp, &rd, &err)) != 1) {
		if (rc == 0)
			kt_error_set(&err, name, 0, 0, "no trace");
		kt_cli_die(&err);
	}
	return rd;
}

void
kt_cli_one_trace(struct kt_source *src, const char *name, const char *msg,
    int strict)
{
	struct kt_error err;
	struct kt_reader *rd;
	int rc;

	if (!strict && !kt_source_archived(src))
		return;
	if ((rc = kt_source_next(src, &rd, &err)) == 1) {
		kt_reader_free(rd);
		kt_cli_warn("%s: %s", name, msg);
		kt_cli_die(NULL);
	}
	if (rc == -1 && strict)
		kt_cli_die(&err);
}

int
kt_cli_threads(void)
{
	const char *e = getenv("KT_THREADS");

	/* KT_THREADS=1: one thread (to compare, or on a loaded machine). */
	if (e != NULL && strcmp(e, "1") == 0)
		return 0;
	return kt_ahead_worth();
}

struct kt_model *
kt_cli_model(struct kt_reader *rd)
{
	return kt_cli_model_with(rd, 0);
}

/* kt_cli_model_try with each and ctx (kt_model_load_each). */
static struct kt_model *
model_try(struct kt_reader *rd, unsigned flags, int progress,
    int (*each)(void *, const struct kt_event *, struct kt_error *),
    void *ctx, struct kt_error *err)
{
	struct kt_model *m;

	if (!kt_cli_threads())
		flags |= KT_MODEL_ONE_THREAD;
	m = kt_model_load_each(rd, flags, progress ? kt_cli_progress : NULL,
	    each, ctx, err);
	if (m != NULL && cli_step_regex != NULL &&
	    kt_model_step_regex(m, cli_step_regex, err) == -1) {
		kt_model_free(m);
		m = NULL;
	}
	if (progress)
		kt_cli_progress_done();
	return m;
}

struct kt_model *
kt_cli_model_try(struct kt_reader *rd, unsigned flags, int progress,
    struct kt_error *err)
{
	return model_try(rd, flags, progress, NULL, NULL, err);
}

struct kt_model *
kt_cli_model_with(struct kt_reader *rd, unsigned flags)
{
	return kt_cli_model_each(rd, flags, NULL, NULL);
}

struct kt_model *
kt_cli_model_each(struct kt_reader *rd, unsigned flags,
    int (*each)(void *, const struct kt_event *, struct kt_error *),
    void *ctx)
{
	struct kt_error err;
	struct kt_model *m;

	if ((m = model_try(rd, flags, 1, each, ctx, &err)) == NULL)
		kt_cli_die(&err);
	return m;
}

int
kt_cli_small_files(char *const *paths, int n)
{
	struct stat st;
	int i;

	for (i = 0; i < n; i++)
		if (stat(paths[i], &st) == -1 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size >= KT_SMALL_FILE)
			return 0;
	return 1;
}

struct kt_out *
kt_cli_out_open(const char *path, int level)
{
	struct kt_error err;
	struct kt_out *out;

	if (cli_nin >= 0 && kt_cli_check_output(path, cli_in, cli_nin) == -1)
		kt_cli_die(NULL);
	if ((out = kt_out_open(path, level, &err)) == NULL)
		kt_cli_die(&err);
	kt_cli_set_output(out);
	return out;
}

void
kt_cli_out_commit(struct kt_out *out, int failed, struct kt_error *err)
{
	struct kt_error e;

	if (err == NULL) {
		memset(&e, 0, sizeof(e));
		err = &e;
	}
	if (failed) {
		/* Never committed: a failed output is removed, not renamed. */
		if (kt_out_errno(out) != 0)
			kt_error_set(err, kt_out_name(out), 0, 0, "%s",
			    strerror(kt_out_errno(out)));
		else if (err->msg[0] == '\0')
			kt_error_set(err, kt_out_name(out), 0, 0,
			    "write error");
		kt_cli_die(err);
	}
	kt_cli_unset_output(out);
	if (kt_out_commit(out, err) == -1)
		kt_cli_die(err);
}

void
kt_cli_write_table(const struct kt_table *t, const char *path, int form)
{
	struct kt_cli_table ct;

	kt_cli_table_open(&ct, path, form);
	kt_cli_table_close(&ct, t);
}

void
kt_cli_table_open(struct kt_cli_table *ct, const char *path, int form)
{
	int tostdout = path == NULL || strcmp(path, "-") == 0;

	ct->path = path ? path : "<stdout>";
	ct->out = kt_cli_out_open(path, -1);
	ct->form = kt_table_form_pick(form, tostdout ? STDOUT_FILENO : -1);
}

void
kt_cli_table_flush(struct kt_cli_table *ct, struct kt_table *t)
{
	struct kt_error err;

	if (kt_table_rows(t) < 4096)
		return;
	if (kt_table_flush(t, (enum kt_table_form)ct->form, 1, ct->out) ==
	    -1) {
		kt_error_set(&err, ct->path, 0, 0, "write error");
		kt_cli_out_commit(ct->out, 1, &err);
	}
}

void
kt_cli_table_close(struct kt_cli_table *ct, const struct kt_table *t)
{
	struct kt_error err;
	int failed;

	failed = kt_table_write(t, (enum kt_table_form)ct->form, 1,
	    ct->out) == -1;
	kt_error_set(&err, ct->path, 0, 0, "write error");
	kt_cli_out_commit(ct->out, failed, &err);
}

/* The rows of one kt_cli_table_rows call, shared by its workers. */
struct rows {
	struct kt_cli_table	*ct;
	size_t			 n;
	kt_cli_row_fn		*row;
	void			*arg;
	pthread_mutex_t		 lock;
	pthread_cond_t		 turned;
	size_t			 next;	/* the next block to make */
	size_t			 turn;	/* the next block to write */
	int			 failed; /* 1 out of memory, 2 write error */
};

/* Rows in a block: enough to keep a thread busy, few to hold. */
#define ROWS_BLOCK	2048

struct rows_worker {
	struct rows		*r;
	struct kt_table		*t;
	unsigned		 id;
};

static void *
rows_work(void *arg)
{
	struct rows_worker *w = arg;
	struct rows *r = w->r;

	for (;;) {
		size_t b, i, end;
		int failed = 0;

		pthread_mutex_lock(&r->lock);
		b = r->next++;
		failed = r->failed;
		pthread_mutex_unlock(&r->lock);
		if (failed || b >= (r->n + ROWS_BLOCK - 1) / ROWS_BLOCK)
			break;
		end = (b + 1) * ROWS_BLOCK < r->n ? (b + 1) * ROWS_BLOCK : r->n;
		for (i = b * ROWS_BLOCK; i < end && !failed; i++)
			failed = r->row(r->arg, w->id, w->t, i) == -1;
		/* Wait for the turn of block b; only one writes at a time. */
		pthread_mutex_lock(&r->lock);
		if (failed && !r->failed)
			r->failed = 1;
		while (r->turn != b && !r->failed)
			pthread_cond_wait(&r->turned, &r->lock);
		failed = r->failed;
		pthread_mutex_unlock(&r->lock);
		if (!failed && kt_table_flush(w->t, (enum kt_table_form)r->ct->form,
		    0, r->ct->out) == -1)
			failed = 2;
		pthread_mutex_lock(&r->lock);
		if (failed && !r->failed)
			r->failed = failed;
		r->turn++;
		pthread_cond_broadcast(&r->turned);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

unsigned
kt_cli_row_workers(void)
{
	unsigned n;

	if (!kt_cli_threads())
		return 1;
	n = kt_cpus();
	return n < 2 ? 2 : n > KT_CLI_MAX_WORKERS ? KT_CLI_MAX_WORKERS : n;
}

/* The tasks of kt_cli_tasks, taken one by one. */
struct tasks {
	pthread_mutex_t	 lock;
	size_t		 next, n;
	void		(*task)(void *, size_t);
	void		*arg;
};

static void *
tasks_worker(void *p)
{
	struct tasks *ts = p;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&ts->lock);
		i = ts->next < ts->n ? ts->next++ : ts->n;
		pthread_mutex_unlock(&ts->lock);
		if (i == ts->n)
			return NULL;
		ts->task(ts->arg, i);
	}
}

void
kt_cli_tasks(size_t n, void (*task)(void *, size_t), void *arg)
{
	pthread_t th[KT_CLI_MAX_WORKERS];
	struct tasks ts;
	unsigned nw = kt_cli_row_workers(), k, started = 0;

	ts.next = 0;
	ts.n = n;
	ts.task = task;
	ts.arg = arg;
	if (nw > n)
		nw = (unsigned)n;
	if (nw <= 1 || pthread_mutex_init(&ts.lock, NULL) != 0) {
		for (ts.next = 0; ts.next < n; ts.next++)
			task(arg, ts.next);
		return;
	}
	/* The caller is worker 0; a thread that does not start is none. */
	for (k = 1; k < nw; k++)
		if (pthread_create(&th[started], NULL, tasks_worker, &ts) == 0)
			started++;
	tasks_worker(&ts);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	pthread_mutex_destroy(&ts.lock);
}

void
kt_cli_table_rows(struct kt_cli_table *ct, struct kt_table *t, size_t n,
    kt_cli_row_fn *row, void *arg)
{
	struct rows_worker w[KT_CLI_MAX_WORKERS];
	pthread_t th[KT_CLI_MAX_WORKERS];
	struct rows r;
	struct kt_error err;
	unsigned nw = kt_cli_row_workers(), k, started = 1;
	size_t i;

	if (ct->form == KT_TABLE_TEXT || nw == 1 || n <= ROWS_BLOCK) {
		for (i = 0; i < n; i++) {
			if (row(arg, 0, t, i) == -1)
				kt_cli_nomem();
			kt_cli_table_flush(ct, t);
		}
		return;
	}
	/* The header now: each block is written without one. */
	if (kt_table_flush(t, (enum kt_table_form)ct->form, 1, ct->out) == -1) {
		kt_error_set(&err, ct->path, 0, 0, "write error");
		kt_cli_out_commit(ct->out, 1, &err);
	}
	memset(&r, 0, sizeof(r));
	r.ct = ct;
	r.n = n;
	r.row = row;
	r.arg = arg;
	if (pthread_mutex_init(&r.lock, NULL) != 0 ||
	    pthread_cond_init(&r.turned, NULL) != 0)
		kt_cli_nomem();
	for (k = 0; k < nw; k++) {
		w[k].r = &r;
		w[k].id = k;
		if ((w[k].t = kt_table_new_like(t)) == NULL)
			kt_cli_nomem();
	}
	for (k = 1; k < nw; k++, started++)
		if (pthread_create(&th[k], NULL, rows_work, &w[k]) != 0)
			break;
	rows_work(&w[0]);
	for (k = 1; k < started; k++)
		pthread_join(th[k], NULL);
	for (k = 0; k < nw; k++)
		kt_table_free(w[k].t);
	pthread_cond_destroy(&r.turned);
	pthread_mutex_destroy(&r.lock);
	if (r.failed == 1)
		kt_cli_nomem();
	if (r.failed == 2) {
		kt_error_set(&err, ct->path, 0, 0, "write error");
		kt_cli_out_commit(ct->out, 1, &err);
	}
}

int
kt_cli_check_level(int level, const char *output)
{
	size_t n;

	if (level < 0 || output == NULL || strcmp(output, "-") == 0)
		return 0;
	n = strlen(output);
	if (n < 3 || strcmp(output + n - 3, ".gz") != 0) {
		kt_cli_warn("--level applies to a .gz output only");
		return -1;
	}
	return 0;
}

int64_t
kt_cli_duration(const char *opt, const char *s)
{
	int64_t v;

	if (kt_duration_opt_parse(s, &v) == 0)
		return v;
	kt_cli_warn("%s: '%s' is not a duration with a unit (ns, us, ms, s) "
	    "or whole ns", opt, s);
	exit(2);
}

int64_t
kt_cli_gb(const char *opt, const char *s)
{
	int64_t v;

	if (kt_gb_parse(s, &v) == 0)
		return v;
	kt_cli_warn("%s: '%s': not a positive number of GB", opt, s);
	exit(2);
}


/*
 * The copies of inputs that cannot be read twice (stdin, a FIFO or a
 * pipe named as a file): each path with the name messages give it.
 */
#define CLI_NSPOOL	16

static struct {
	char	*path;
	char	*name;
} cli_spools[CLI_NSPOOL];
static int cli_nspool;

/* Remove the copies, however the program ends (a no-op where they were
 * unlinked at once and are named /proc/self/fd/N). */
static void
cli_unspool(void)
{
	int i;

	for (i = 0; i < cli_nspool; i++)
		if (strncmp(cli_spools[i].path, "/proc/self/fd/", 14) != 0)
			unlink(cli_spools[i].path);
}

static uint64_t cli_spool_cap;	/* --spool-max, or 0: not given */

/*
 * A size: digits, then an optional K, M, G or T (powers of 1024, with
 * an optional "iB" or "B").  -1 when it is not one.
 */
static int
cli_size(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift > 0 && *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0' || (shift > 0 && n > (UINT64_MAX >> shift)))
		return -1;
	*v = (uint64_t)n << shift;
	return 0;
}

/*
 * The cap on a copy: --spool-max, else $KT_SPOOL_MAX, else 64 GiB.  A
 * cap of 0 is none.
 */
static uint64_t
spool_max(void)
{
	const char *e = getenv("KT_SPOOL_MAX");
	uint64_t v;

	if (cli_spool_cap > 0)
		return cli_spool_cap;
	if (e != NULL && *e != '\0' && cli_size(e, &v) == 0)
		return v;
	return (uint64_t)64 << 30;
}

/* Remember path (malloc'd), a copy named name in messages; path. */
static char *
cli_spooled(char *path, const char *name)
{
	if (cli_nspool == 0)
		atexit(cli_unspool);
	cli_spools[cli_nspool].path = path;
	if ((cli_spools[cli_nspool].name = strdup(name)) == NULL)
		kt_cli_nomem();
	cli_nspool++;
	if (strncmp(path, "/proc/self/fd/", 14) != 0)
		kt_cli_add_temp(path);
	return path;
}

static void
cli_spool_room(void)
{
	if (cli_nspool == CLI_NSPOOL) {
		kt_cli_warn("too many inputs to copy (FIFOs or pipes)");
		kt_cli_die(NULL);
	}
}

/* Copy descriptor fd (named name) and remember it; the copy's path. */
static char *
cli_spool_fd(int fd, const char *name)
{
	struct kt_error err;
	char *path;

	cli_spool_room();
	if ((path = kt_spool_fd(fd, name, spool_max(), &err)) == NULL)
		kt_cli_die(&err);
	return cli_spooled(path, name);
}

char *
kt_cli_spool_stdin(void)
{
	struct stat st;
	char *path;
	int fd;

	if (cli_spool != NULL)
		return cli_spool;
	/*
	 * A regular file (< trace.json) from its start is read in place,
	 * as /proc/self/fd/0 (its own offset; fd 0 is left as it is).
	 */
	if (fstat(0, &st) == 0 && S_ISREG(st.st_mode) &&
	    lseek(0, 0, SEEK_CUR) == 0 &&
	    (fd = open("/proc/self/fd/0", O_RDONLY)) != -1) {
		close(fd);
		cli_spool_room();
		if ((path = strdup("/proc/self/fd/0")) == NULL)
			kt_cli_nomem();
		return cli_spool = cli_spooled(path, "<stdin>");
	}
	return cli_spool = cli_spool_fd(0, "<stdin>");
}

int
kt_cli_tee_file(const char *name, const char **pathp, uint64_t *max)
{
	struct kt_error err;
	char *path;
	int fd;

	cli_spool_room();
	if ((fd = kt_temp_file(&path, &err)) == -1)
		kt_cli_die(&err);
	*pathp = cli_spooled(path, name);
	*max = spool_max();
	return fd;
}

char *
kt_cli_spool_reader(struct kt_reader *rd)
{
	struct kt_error err;
	char *copy;

	cli_spool_room();
	if ((copy = kt_spool_reader(rd, spool_max(), &err)) == NULL)
		kt_cli_die(&err);
	return cli_spooled(copy, kt_reader_name(rd));
}

char *
kt_cli_input_path(char *path)
{
	struct stat st;
	int fd;

	if (path == NULL || strcmp(path, "-") == 0)
		return kt_cli_spool_stdin();
	if (stat(path, &st) == -1 || S_ISREG(st.st_mode) ||
	    S_ISDIR(st.st_mode))
		return path;		/* the reader says what is wrong */
	/* A FIFO, a pipe, a device: read once, into a copy. */
	if ((fd = open(path, O_RDONLY)) == -1)
		return path;
	path = cli_spool_fd(fd, path);
	close(fd);
	return path;
}

struct kt_source *
kt_cli_source_open(const char *path, const char *member, unsigned flags,
    struct kt_error *err)
{
	const char *name = NULL;
	int i;

	for (i = 0; path != NULL && i < cli_nspool; i++)
		if (strcmp(path, cli_spools[i].path) == 0)
			name = cli_spools[i].name;
	return kt_source_open_as(path, name, member, flags, err);
}

int
kt_cli_report_beside(const char *output, const char *suffix, char *buf,
    size_t n)
{
	struct stat st;

	if (output == NULL || strcmp(output, "-") == 0)
		return 0;
	if (lstat(output, &st) == 0 ? !S_ISREG(st.st_mode) : errno != ENOENT)
		return 0;
	return snprintf(buf, n, "%s%s", output, suffix) < (int)n;
}

uint64_t
kt_cli_size(const char *opt, const char *s)
{
	uint64_t v;

	if (cli_size(s, &v) == 0 && v > 0)
		return v;
	kt_cli_warn("%s: '%s' is not a size (bytes, or a number with K, M, "
	    "G or T)", opt, s);
	exit(2);
}

void
kt_cli_opt(struct kt_cli_opts *co, int ch, const char *arg,
    void (*usage)(FILE *))
{
	switch (ch) {
	case 'h':
		usage(stdout);
		exit(0);
	case 'j':
		co->form = KT_TABLE_JSON;
		break;
	case 'l':
		co->level = (int)kt_cli_int("--level", arg, 0, 9);
		break;
	case 'm':
		co->member = arg;
		break;
	case 'o':
		co->output = arg;
		break;
	case 'S':
		co->rflags |= KT_READ_STRICT;
		break;
	case 't':
		co->form = KT_TABLE_TSV;
		break;
	case 'T':
		co->form = KT_TABLE_TEXT;
		break;
	case 'V':
		printf("%s %s\n", progname, KT_VERSION);
		exit(0);
	case KT_CLI_SPOOL_MAX:
		cli_spool_cap = kt_cli_size("--spool-max", arg);
		break;
	case KT_CLI_STEP_REGEX: {
		char why[256];
		regex_t re;
		int rc;

		if (kt_regex_check(arg, why, sizeof(why)) == -1) {
			kt_cli_warn("--step-regex: '%s': %s", arg, why);
			exit(2);
		}
		if ((rc = regcomp(&re, arg, REG_EXTENDED)) != 0) {
			regerror(rc, &re, why, sizeof(why));
			kt_cli_warn("--step-regex: '%s': %s", arg, why);
			exit(2);
		}
		regfree(&re);
		cli_step_regex = arg;
		break;
	}
	default:
		usage(stderr);
		exit(2);
	}
}
