/*
 * kt-rank-tag: tag every event with its rank (args.rank), and merge the
 * traces of several ranks into one: each rank gets its own pids, flow
 * and correlation ids, and clock offset, and the per-rank top-level
 * metadata is kept in the top-level list ktRanks.
 *
 * A first pass skims each input once for what the merge needs (rank,
 * clocks, pids, whether it is sorted), several files at once on one
 * thread per CPU (at most MAXTHREADS); the second pass merges, on one
 * thread: by time when every input is sorted, else rank after rank.
 * Memory stays that of one reader per input (per thread in the survey).
 * With --ranks, an input whose first bytes settle its rank and that is
 * not wanted is read no further (see peek_rank).
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/resource.h>

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kt.h"

#define PIDS_PER_RANK	1000	/* new pid = 1000 * (slot + 1) + i */
#define ID_SPACE	1000000000000LL	/* new id = 10^12 * (slot + 1) + id */

enum align { ALIGN_BASE, ALIGN_FIRST, ALIGN_STEP };

/* One pid of one input. */
struct pidinfo {
	char		*raw;		/* JSON text of the original pid */
	size_t		 len;
	int		 has_name;
	int		 has_sort;
	int64_t		 sort;		/* its process_sort_index */
	int64_t		 newpid;
	int64_t		 newsort;
	/* For the merge's fast path (see put_fast), made by map_pids. */
	char		*pidtext;	/* newpid as text */
	size_t		 pidtextlen;
	char		*ins;		/* "rank": R, "kt_pid": RAW, */
	size_t		 inslen;	/* ins less ", " is for an empty args */
};

/* One input trace: a file, or one member of an archive. */
struct input {
	char		*path;		/* to open again for the merge */
	int		 ordinal;	/* which trace of the source */
	char		 name[1100];
	size_t		 order;		/* position among the inputs given */
	int64_t		 rank;
	const char	*rank_from;
	int		 slot;		/* position in rank order */
	int		 has_base;
	int64_t		 base;
	int		 has_first;
	int64_t		 first;
	int		 has_min;
	int64_t		 min;		/* the earliest ts, metadata too */
	int		 has_step;
	int64_t		 step;
	int64_t		 offset;	/* ns added to every ts */
	char		 idhead[24];	/* slot + 1 as text: ns_id's digits */
	size_t		 idheadlen;
	int		 sorted;
	uint64_t	 nevents;
	struct kt_meta	*metas;
	size_t		 nmetas;
	struct kt_intern *pidtab;
	struct pidinfo	*pids;
	size_t		 npids;
	size_t		 lastpid;	/* the pid seen last */
	/* During the merge. */
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_event	 ev;
	int		 live;
	uint64_t	 key;
};

struct opts {
	int64_t		 rank;
	int		 has_rank;
	struct kt_ranklist ranks;	/* --ranks */
	int		 has_ranks;
	int		 allow_dup;
	enum align	 align;
	int64_t		 align_step;
	int		 verbose;
	int		 tsv;
	struct kt_cli_opts co;	/* -l, -m, -o, -S */
};

/* --ranks: an input left out, its rank and where that came from. */
struct skipped {
	const char	*name;
	int64_t		 rank;
	const char	*from;
};

/*
 * One source (a file given) for the survey: the traces found in it, or
 * the error that stopped it.  Sources are surveyed on several threads
 * at once; the errors are reported in the order the sources were given,
 * so the first one is what a survey one after the other would report.
 */
struct job {
	const char	*path;
	struct input	*ins;
	size_t		 nins;
	struct skipped	*skip;		/* --ranks: its traces not wanted */
	size_t		 nskip;
	int		 failed;
	struct kt_error	 err;
};

#define MAXTHREADS	4	/* survey threads at most (one reader each) */

/*
 * Everything one run keeps: the inputs, the strings kept for them (in
 * an arena the survey threads share), the survey's jobs, and the
 * buffers the writing reuses.  Made in main() and passed down; a survey
 * thread gets it as its argument.
 */
struct rt {
	struct opts	 o;
	struct input	*inputs;
	size_t		 ninputs;
	struct kt_arena	*arena;
	pthread_mutex_t	 arenalock;
	const char	*spool;		/* standard input's copy */
	struct job	*jobs;
	size_t		 njobs;
	size_t		 nextjob;	/* the next job a survey thread takes */
	pthread_mutex_t	 joblock;
	struct kt_buf	 ktranks;	/* the value of ktRanks */
	struct kt_patch	 patch;		/* put()'s, its buffers reused */
	struct kt_buf	 pname;		/* put()'s new process name */
	struct kt_buf	 eb;		/* one tagged event */
	struct skipped	*skip;		/* --ranks: the inputs left out */
	size_t		 nskip;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-rank-tag [-tSv] [--allow-duplicate-ranks] [--align how]\n"
	    "                   [-l level] [-m glob] [-o file] [-r rank]\n"
	    "                   [--ranks list] [--spool-max size] [file ...]\n"
	    "  -a, --align HOW           base (default), first, or step:K\n"
	    "  -D, --allow-duplicate-ranks  merge inputs of the same rank\n"
	    "  -l, --level N             gzip level 0-9 for a .gz output\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -o, --output FILE         write FILE atomically (.gz: gzip)\n"
	    "  -r, --rank N              the rank of the one input\n"
	    "      --ranks LIST          merge only these ranks (0,7,63-64);\n"
	    "                            the others are read to their rank\n"
	    "  -S, --strict              refuse damaged input\n"
	    "      --spool-max SIZE      cap on copying a pipe or stdin\n"
	    "                            (default 64G; K, M, G, T)\n"
	    "  -t, --tsv                 write the TSV event form, with a rank column\n"
	    "  -v, --verbose             say where each rank and offset came from\n"
	    "  -h, --help, -V, --version\n");
}

/* Copy n bytes into the arena as a string (survey threads share it). */
static char *
keep(struct rt *rt, const char *s, size_t n)
{
	char *p;

	pthread_mutex_lock(&rt->arenalock);
	p = kt_arena_alloc(rt->arena, n + 1);
	pthread_mutex_unlock(&rt->arenalock);
	if (p == NULL)
		kt_cli_nomem();
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* The pid entry of ev's pid in in, made on first sight. */
static struct pidinfo *
pid_of(struct rt *rt, struct input *in, const struct kt_event *ev)
{
	size_t n;
	const char *p;
	int64_t id;

	kt_event_id_text(ev, KT_F_PID, &p, &n);		/* by value */
	if (ev->f[KT_F_PID].type == KT_NONE) {
		p = "null";
		n = 4;
	}
	/* Runs of events share a pid: try the last one first. */
	if (in->lastpid < in->npids && in->pids[in->lastpid].len == n &&
	    memcmp(in->pids[in->lastpid].raw, p, n) == 0)
		return &in->pids[in->lastpid];
	if ((id = kt_intern_put(in->pidtab, p, n)) == -1)
		kt_cli_nomem();
	in->lastpid = (size_t)id;
	if ((size_t)id == in->npids) {
		struct pidinfo *t;

		if ((t = realloc(in->pids, (in->npids + 1) * sizeof(*t))) ==
		    NULL)
			kt_cli_nomem();
		in->pids = t;
		memset(&t[in->npids], 0, sizeof(*t));
		t[in->npids].raw = keep(rt, p, n);
		t[in->npids].len = n;
		in->npids++;
	}
	return &in->pids[id];
}

/* The sort key normalize uses: metadata, then no time, then by time. */
static uint64_t
order_key(const struct kt_event *ev, int64_t offset)
{
	if (ev->ph == 'M')
		return 0;
	if (!(ev->flags & KT_EV_TS))
		return 1;
	return (uint64_t)(ev->ts + offset) ^ ((uint64_t)1 << 63);
}

/*
 * First pass over one trace: what the merge needs to know of it.  Only
 * the main thread shows progress.  0, or -1 with err set.
 */
static int
survey(struct rt *rt, struct input *in, struct kt_reader *r, int progress,
    const struct kt_event *first, int firstrc, struct kt_error *err)
{
	const struct opts *o = &rt->o;
	struct kt_event ev;
	const struct kt_meta *m;
	size_t i, nm;
	uint64_t last = 0;
	int rc;

	in->sorted = 1;
	if ((in->pidtab = kt_intern_new()) == NULL)
		kt_cli_nomem();
	/* firstrc: what kt_reader_next gave for first (peek_rank), or -2. */
	if (firstrc != -2 && (rc = firstrc) == 1)
		ev = *first;
	else if (firstrc == -2)
		rc = kt_reader_next(r, &ev, err);
	for (; rc == 1; rc = kt_reader_next(r, &ev, err)) {
		struct pidinfo *pi = pid_of(rt, in, &ev);
		uint64_t k = order_key(&ev, 0);

		in->nevents++;
		if (k < last)
			in->sorted = 0;
		last = k;
		if ((ev.flags & KT_EV_TS) && (!in->has_min || ev.ts < in->min)) {
			in->min = ev.ts;
			in->has_min = 1;
		}
		if (ev.ph == 'M') {
			if (kt_event_field_is(&ev, KT_F_NAME, "process_name"))
				pi->has_name = 1;
			else if (kt_event_field_is(&ev, KT_F_NAME,
			    "process_sort_index") &&
			    kt_event_sort_index(&ev, &pi->sort) == 0)
				pi->has_sort = 1;
			continue;
		}
		if (!(ev.flags & KT_EV_TS))
			continue;
		if (!in->has_first || ev.ts < in->first) {
			in->first = ev.ts;
			in->has_first = 1;
		}
		if (o->align == ALIGN_STEP && ev.kind == KT_STEP &&
		    kt_event_step(&ev) == o->align_step &&
		    (!in->has_step || ev.ts < in->step)) {
			in->step = ev.ts;
			in->has_step = 1;
		}
		if (progress && (in->nevents & 0xffff) == 0)
			kt_cli_progress(r);
	}
	if (rc == -1)
		return -1;
	/* Repairs are reported by the merge pass, which reads every byte. */
	m = kt_reader_metas(r, &nm);
	if ((in->metas = calloc(nm + 1, sizeof(*in->metas))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < nm; i++) {
		in->metas[i] = m[i];
		in->metas[i].key = keep(rt, m[i].key, m[i].keylen);
		in->metas[i].val = keep(rt, m[i].val, m[i].vallen);
	}
	in->nmetas = nm;
	snprintf(in->name, sizeof(in->name), "%s", kt_reader_name(r));
	return 0;
}

/*
 * The rank that top-level keys m[0..n) and the name give: the first
 * distributedInfo.rank, else ktRank, else the file name.  Returns 0 with
 * *rank and *from (static text), or -1.
 */
static int
rank_of(const struct kt_meta *m, size_t n, const char *name, int64_t *rank,
    const char **from)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct kt_error err;
		json_t *j, *v;

		if (strcmp(m[i].key, "\"distributedInfo\"") != 0)
			continue;
		if ((j = kt_meta_json(&m[i], &err)) == NULL)
			break;
		v = json_object_get(j, "rank");
		if (json_is_integer(v)) {
			*rank = json_integer_value(v);
			*from = "distributedInfo.rank";
			json_decref(j);
			return 0;
		}
		json_decref(j);
	}
	/* The rank a kt filter kept from its input's name (ktRank). */
	for (i = 0; i < n; i++) {
		struct kt_error err;
		json_t *j;

		if (strcmp(m[i].key, "\"" KT_KEY_RANK "\"") != 0 ||
		    (j = kt_meta_json(&m[i], &err)) == NULL)
			continue;
		if (json_is_integer(j) && json_integer_value(j) >= 0) {
			*rank = json_integer_value(j);
			*from = KT_KEY_RANK;
			json_decref(j);
			return 0;
		}
		json_decref(j);
	}
	return kt_rank_from_name(name, rank, from);
}

/* Is rank among those of --ranks? */
static int
wanted(const struct opts *o, int64_t rank)
{
	return kt_ranklist_has(&o->ranks, rank);
}

/*
 * --ranks: does the start of trace r (the top-level keys before its
 * first event, which kt_reader_next gave firstrc for) settle its rank as
 * find_rank would find it from the whole trace?  It does when the keys
 * before the events hold distributedInfo.rank (the first such key wins),
 * or when every key is known: the trace has ended, or it is a plain file
 * whose keys after the events kt_reader_tail finds at its end (a second
 * reader, of the last few MB).  Returns 1 with *rank and *from, else 0:
 * only the whole trace can say.
 */
static int
peek_rank(const struct rt *rt, const char *path, int archived,
    struct kt_reader *r, int firstrc, int64_t *rank, const char **from)
{
	const struct kt_meta *m;
	struct kt_source *src;
	struct kt_reader *t;
	struct kt_error err;
	struct kt_event ev;
	size_t n;
	int found, ok = 0;

	m = kt_reader_metas(r, &n);
	found = rank_of(m, n, kt_reader_name(r), rank, from) == 0;
	if (found && (firstrc == 0 || strcmp(*from,
	    "distributedInfo.rank") == 0))
		return 1;
	if (archived || firstrc == 0 || (src = kt_cli_source_open(path,
	    rt->o.co.member, rt->o.co.rflags | KT_READ_SKIM, &err)) == NULL)
		return 0;
	if (kt_source_next(src, &t, &err) == 1) {
		if (kt_reader_tail(t, &err) == 0 && kt_reader_next(t, &ev,
		    &err) != -1) {
			m = kt_reader_metas(t, &n);
			ok = rank_of(m, n, kt_reader_name(r), rank, from) == 0;
		}
		kt_reader_free(t);
	}
	kt_source_close(src);
	return ok;
}

/* Survey every trace of job j's source (see survey). */
static void
survey_source(struct rt *rt, struct job *j, int progress)
{
	const struct opts *o = &rt->o;
	struct kt_source *src;
	struct kt_reader *r;
	int rc, ord = 0;

	/* A survey skims: the merge pass validates every byte. */
	if ((src = kt_cli_source_open(j->path, o->co.member, o->co.rflags |
	    KT_READ_SKIM, &j->err)) == NULL) {
		j->failed = 1;
		return;
	}
	while ((rc = kt_source_next(src, &r, &j->err)) == 1) {
		struct input *in;
		struct kt_event first;
		int firstrc = -2;
		int64_t rank;
		const char *from;

		if (o->has_ranks) {
			if ((firstrc = kt_reader_next(r, &first, &j->err)) ==
			    -1) {
				kt_reader_free(r);
				rc = -1;
				break;
			}
			if (peek_rank(rt, j->path, kt_source_archived(src), r,
			    firstrc, &rank, &from) && !wanted(o, rank)) {
				struct skipped *k;

				if ((k = realloc(j->skip, (j->nskip + 1) *
				    sizeof(*k))) == NULL)
					kt_cli_nomem();
				j->skip = k;
				k[j->nskip].name = keep(rt, kt_reader_name(r),
				    strlen(kt_reader_name(r)));
				k[j->nskip].rank = rank;
				k[j->nskip++].from = from;
				kt_reader_free(r);
				ord++;
				continue;
			}
		}
		if ((in = realloc(j->ins, (j->nins + 1) * sizeof(*in))) ==
		    NULL)
			kt_cli_nomem();
		j->ins = in;
		in = &j->ins[j->nins++];
		memset(in, 0, sizeof(*in));
		in->path = keep(rt, j->path, strlen(j->path));
		in->ordinal = ord++;
		/* A copy of stdin or a FIFO is named as given (lib/cli). */
		rc = survey(rt, in, r, progress, &first, firstrc, &j->err);
		kt_reader_free(r);
		if (rc == -1)
			break;
	}
	if (rc == -1)
		j->failed = 1;
	kt_source_close(src);
}

/* A survey thread: take the next source until none is left. */
static void *
surveyor(void *arg)
{
	struct rt *rt = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&rt->joblock);
		i = rt->nextjob++;
		pthread_mutex_unlock(&rt->joblock);
		if (i >= rt->njobs)
			return NULL;
		survey_source(rt, &rt->jobs[i], 0);
	}
}

/*
 * Survey the sources given, on up to MAXTHREADS threads (one per CPU)
 * when there are several and standard input is not one of them; one
 * after the other otherwise, as standard input is read when its turn
 * comes.  Dies on the first source, in order, that failed.
 */
static void
survey_all(struct rt *rt, char **argv, int argc)
{
	pthread_t t[MAXTHREADS];
	size_t i, k, nt = 1, started = 0;
	size_t ncpu = kt_cpus();

	if ((rt->jobs = calloc((size_t)argc, sizeof(*rt->jobs))) == NULL)
		kt_cli_nomem();
	rt->njobs = (size_t)argc;
	/*
	 * Each input is read twice (survey, merge): stdin, a FIFO or a pipe
	 * is copied once first (kt_cli_input_path), before any thread.
	 */
	for (i = 0; i < rt->njobs; i++) {
		if (strcmp(argv[i], "-") == 0) {
			if (rt->spool != NULL) {
				kt_cli_warn("standard input given twice");
				exit(2);
			}
			rt->spool = kt_cli_spool_stdin();
			rt->jobs[i].path = rt->spool;
		} else
			rt->jobs[i].path = kt_cli_input_path(argv[i]);
	}
	if (ncpu > 1)
		nt = ncpu < rt->njobs ? ncpu : rt->njobs;
	if (nt > MAXTHREADS)
		nt = MAXTHREADS;
	if (nt > 1) {
		for (i = 0; i + 1 < nt; i++)
			if (pthread_create(&t[started], NULL, surveyor,
			    rt) == 0)
				started++;
		for (;;) {
			pthread_mutex_lock(&rt->joblock);
			i = rt->nextjob++;
			pthread_mutex_unlock(&rt->joblock);
			if (i >= rt->njobs)
				break;
			survey_source(rt, &rt->jobs[i], 1);
		}
		for (i = 0; i < started; i++)
			pthread_join(t[i], NULL);
	} else
		for (i = 0; i < rt->njobs && (i == 0 ||
		    !rt->jobs[i - 1].failed); i++) {
			survey_source(rt, &rt->jobs[i], 1);
		}
	kt_cli_progress_done();
	for (i = 0; i < rt->njobs; i++) {
		if (rt->jobs[i].failed)
			kt_cli_die(&rt->jobs[i].err);
		for (k = 0; k < rt->jobs[i].nins; k++) {
			struct input *in;

			if ((in = realloc(rt->inputs, (rt->ninputs + 1) *
			    sizeof(*in))) == NULL)
				kt_cli_nomem();
			rt->inputs = in;
			in = &rt->inputs[rt->ninputs];
			*in = rt->jobs[i].ins[k];
			in->order = rt->ninputs++;
		}
		free(rt->jobs[i].ins);
		rt->jobs[i].ins = NULL;
		for (k = 0; k < rt->jobs[i].nskip; k++) {
			struct skipped *s;

			if ((s = realloc(rt->skip, (rt->nskip + 1) *
			    sizeof(*s))) == NULL)
				kt_cli_nomem();
			rt->skip = s;
			rt->skip[rt->nskip++] = rt->jobs[i].skip[k];
		}
		free(rt->jobs[i].skip);
	}
	free(rt->jobs);
	rt->jobs = NULL;
}

/* The rank of an input: --rank, distributedInfo.rank, ktRank, the file name. */
static void
find_rank(struct input *in, const struct opts *o)
{
	if (o->has_rank) {
		in->rank = o->rank;
		in->rank_from = "--rank";
		return;
	}
	if (rank_of(in->metas, in->nmetas, in->name, &in->rank,
	    &in->rank_from) == 0)
		return;
	kt_cli_warn("%s: no rank: no distributedInfo.rank, and the file name "
	    "has no rank<N>, rank-N, rank_N, worker<N> or -N.; give --rank",
	    in->name);
	kt_cli_die(NULL);
}

static int
cmp_rank(const void *a, const void *b)
{
	const struct input *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Order of a rank's pids: numbers by value, then strings by bytes. */
static int
cmp_pid(const void *a, const void *b)
{
	const struct pidinfo *x = *(const struct pidinfo *const *)a;
	const struct pidinfo *y = *(const struct pidinfo *const *)b;
	int xs = x->raw[0] == '"', ys = y->raw[0] == '"';
	size_t n;

	if (xs != ys)
		return xs - ys;
	if (!xs) {
		long long u = strtoll(x->raw, NULL, 10), v = strtoll(y->raw,
		    NULL, 10);

		if (u != v)
			return u < v ? -1 : 1;
	}
	n = x->len < y->len ? x->len : y->len;
	if (memcmp(x->raw, y->raw, n) != 0)
		return memcmp(x->raw, y->raw, n);
	return (x->len > y->len) - (x->len < y->len);
}

/* Order for sort indexes: the original index, then the pid order. */
static int
cmp_sort(const void *a, const void *b)
{
	const struct pidinfo *x = *(const struct pidinfo *const *)a;
	const struct pidinfo *y = *(const struct pidinfo *const *)b;

	if (x->has_sort != y->has_sort)
		return y->has_sort - x->has_sort;
	if (x->has_sort && x->sort != y->sort)
		return x->sort < y->sort ? -1 : 1;
	return x->newpid < y->newpid ? -1 : x->newpid > y->newpid;
}

/* Give each pid of in its new pid and sort index. */
static void
map_pids(struct rt *rt, struct input *in)
{
	struct pidinfo **v;
	size_t i;

	if (in->npids >= PIDS_PER_RANK) {
		kt_cli_warn("%s: more than %d processes in one rank", in->name,
		    PIDS_PER_RANK - 1);
		kt_cli_die(NULL);
	}
	if ((v = calloc(in->npids + 1, sizeof(*v))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < in->npids; i++)
		v[i] = &in->pids[i];
	qsort(v, in->npids, sizeof(*v), cmp_pid);
	for (i = 0; i < in->npids; i++)
		v[i]->newpid = (int64_t)PIDS_PER_RANK * (in->slot + 1) +
		    (int64_t)i;
	qsort(v, in->npids, sizeof(*v), cmp_sort);
	for (i = 0; i < in->npids; i++)
		v[i]->newsort = (int64_t)PIDS_PER_RANK * (in->slot + 1) +
		    (int64_t)i;
	free(v);
	in->idheadlen = kt_int_format(in->slot + 1, in->idhead);
	for (i = 0; i < in->npids; i++) {
		struct pidinfo *pi = &in->pids[i];
		struct kt_buf b = KT_BUF_INIT;
		char num[32];

		pi->pidtext = keep(rt, num, kt_int_format(pi->newpid, num));
		pi->pidtextlen = strlen(pi->pidtext);
		kt_buf_adds(&b, "\"" KT_ARG_RANK "\": ");
		kt_buf_add(&b, num, kt_int_format(in->rank, num));
		kt_buf_adds(&b, ", \"" KT_ARG_PID "\": ");
		kt_buf_add(&b, pi->raw, pi->len);
		if (kt_buf_adds(&b, ", ") == -1)
			kt_cli_nomem();
		pi->ins = keep(rt, b.p, b.n);
		pi->inslen = b.n;
		kt_buf_free(&b);
	}
}

/* Clock offsets, by the chosen alignment. */
static void
offsets(struct rt *rt)
{
	const struct opts *o = &rt->o;
	int64_t minbase = INT64_MAX;
	size_t i;

	for (i = 0; i < rt->ninputs; i++)
		if (rt->inputs[i].has_base && rt->inputs[i].base < minbase)
			minbase = rt->inputs[i].base;
	for (i = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];

		in->offset = in->has_base ? in->base - minbase : 0;
		if (minbase != INT64_MAX && !in->has_base)
			kt_cli_warn("%s: no baseTimeNanoseconds; its times are "
			    "taken as they are", in->name);
	}
	if (o->align == ALIGN_BASE)
		return;
	for (i = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];
		int has = o->align == ALIGN_STEP ? in->has_step : in->has_first;

		if (!has) {
			if (o->align == ALIGN_STEP)
				kt_cli_warn("%s: no ProfilerStep#%lld to align "
				    "on", in->name, (long long)o->align_step);
			else
				kt_cli_warn("%s: no event with a time to align "
				    "on", in->name);
			kt_cli_die(NULL);
		}
	}
	for (i = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];
		int64_t ref = o->align == ALIGN_STEP ? rt->inputs[0].step :
		    rt->inputs[0].first;
		int64_t mine = o->align == ALIGN_STEP ? in->step : in->first;

		/* Rank order's first input keeps its (base) offset. */
		in->offset = rt->inputs[0].offset + ref - mine;
	}
	/* Never a negative time: move every rank later together. */
	{
		int64_t low = 0;

		for (i = 0; i < rt->ninputs; i++)
			if (rt->inputs[i].has_min && rt->inputs[i].min +
			    rt->inputs[i].offset < low)
				low = rt->inputs[i].min + rt->inputs[i].offset;
		if (low < 0) {
			for (i = 0; i < rt->ninputs; i++)
				rt->inputs[i].offset -= low;
			kt_cli_warn("aligning would make times negative: every "
			    "rank moved %lld ns later", (long long)-low);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Writing. */

/* Does key k have the same value in every input? */
static int
common(const struct rt *rt, const struct kt_meta *k)
{
	struct kt_buf a = KT_BUF_INIT, b = KT_BUF_INIT;
	size_t i, j;
	int same = 1;

	kt_json_minify(k->val, k->vallen, &a);
	for (i = 1; i < rt->ninputs && same; i++) {
		const struct input *in = &rt->inputs[i];

		for (j = 0; j < in->nmetas; j++)
			if (strcmp(in->metas[j].key, k->key) == 0)
				break;
		b.n = 0;
		if (j == in->nmetas || kt_json_minify(in->metas[j].val,
		    in->metas[j].vallen, &b) == -1 || a.n != b.n ||
		    memcmp(a.p, b.p, a.n) != 0)
			same = 0;
	}
	kt_buf_free(&a);
	kt_buf_free(&b);
	return same;
}

/*
 * The output's top-level keys: those with the same value in every input
 * (in the first input's order and places), baseTimeNanoseconds as the
 * earliest base when they differ, and ktRanks.
 */
static struct kt_meta *
out_metas(struct rt *rt, size_t *n, int merging)
{
	struct kt_buf *kr = &rt->ktranks;
	struct kt_meta *m;
	/* --ranks may have left no input: then only ktRanks, empty. */
	struct input none = { 0 };
	struct input *first = rt->ninputs > 0 ? &rt->inputs[0] : &none;
	size_t i, k = 0;
	int64_t minbase = INT64_MAX;
	char num[32];
	int base_common = 0;

	if ((m = calloc(first->nmetas + 3, sizeof(*m))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < first->nmetas; i++) {
		if (strcmp(first->metas[i].key, "\"" KT_KEY_RANKS "\"") == 0)
			continue;
		if (!merging || common(rt, &first->metas[i])) {
			m[k++] = first->metas[i];
			if (strcmp(first->metas[i].key,
			    "\"baseTimeNanoseconds\"") == 0)
				base_common = 1;
		}
	}
	for (i = 0; i < rt->ninputs; i++)
		if (rt->inputs[i].has_base && rt->inputs[i].base < minbase)
			minbase = rt->inputs[i].base;
	if (minbase != INT64_MAX && !base_common) {
		m[k].key = (char *)"\"baseTimeNanoseconds\"";
		m[k].keylen = strlen(m[k].key);
		m[k].val = keep(rt, num, kt_int_format(minbase, num));
		m[k].vallen = strlen(m[k].val);
		k++;
	}
	/* ktRanks: one object per input, in rank order. */
	kt_buf_addc(kr, '[');
	for (i = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];
		size_t j;

		kt_buf_adds(kr, i ? ",\n    " : "\n    ");
		kt_obj_begin(kr);
		kt_obj_int(kr, "rank", in->rank);
		kt_obj_str(kr, "source", in->name);
		kt_obj_str(kr, "rankFrom", in->rank_from);
		kt_obj_int(kr, "offsetNs", in->offset);
		kt_obj_int(kr, "events", (int64_t)in->nevents);
		if (merging) {
			kt_obj_raw(kr, "pids", "{", 1);
			for (j = 0; j < in->npids; j++) {
				char q[40];
				const struct pidinfo *p = &in->pids[j];

				if (j > 0)
					kt_buf_adds(kr, ", ");
				if (p->raw[0] == '"')
					kt_buf_add(kr, p->raw, p->len);
				else {
					kt_buf_addc(kr, '"');
					kt_buf_add(kr, p->raw, p->len);
					kt_buf_addc(kr, '"');
				}
				kt_buf_adds(kr, ": ");
				kt_buf_add(kr, q, kt_int_format(p->newpid,
				    q));
			}
			kt_buf_addc(kr, '}');
		}
		kt_obj_raw(kr, "meta", "{", 1);
		for (j = 0; j < in->nmetas; j++) {
			if (j > 0)
				kt_buf_adds(kr, ", ");
			kt_buf_add(kr, in->metas[j].key,
			    in->metas[j].keylen);
			kt_buf_adds(kr, ": ");
			kt_buf_add(kr, in->metas[j].val,
			    in->metas[j].vallen);
		}
		kt_buf_addc(kr, '}');
		kt_obj_end(kr);
	}
	kt_buf_adds(kr, "\n  ]");
	m[k].key = (char *)"\"" KT_KEY_RANKS "\"";
	m[k].keylen = strlen(m[k].key);
	m[k].val = kr->p;
	m[k].vallen = kr->n;
	k++;
	*n = k;
	return m;
}

/* The namespaced text of id text p[0..n) for slot s. */
static size_t
ns_id(const char *p, size_t n, const struct input *in, char *out,
    size_t cap)
{
	size_t i;
	int slot = in->slot, isnum = n > 0 && n < 13;

	for (i = 0; i < n && isnum; i++)
		if (p[i] < '0' || p[i] > '9')
			isnum = 0;
	if (isnum) {
		/*
		 * ID_SPACE * (slot + 1) + id, id < ID_SPACE = 10^12: the
		 * digits of slot + 1, then id's own on 12 places.
		 */
		memcpy(out, in->idhead, in->idheadlen);
		memset(out + in->idheadlen, '0', 12 - n);
		memcpy(out + in->idheadlen + 12 - n, p, n);
		out[in->idheadlen + 12] = '\0';
		return in->idheadlen + 12;
	}
	/* A string, or too large: "r<slot>:<id>" as a string. */
	if (p[0] == '"') {
		p++;
		n -= 2;
	}
	return (size_t)snprintf(out, cap, "\"r%d:%.*s\"", slot, (int)n, p);
}

/*
 * Is ev a flow event (ph s, t or f)?  Those get no args: chrome://tracing
 * merges the args of a flow's ends and warns of each key on both; their
 * rank is that of their pid (kt_pidrank_of, kt(7)).
 */
static int
is_flow(const struct kt_event *ev)
{
	return ev->ph == 's' || ev->ph == 't' || ev->ph == 'f';
}

/* Does ev have args.key? */
static int
has_arg(const struct kt_event *ev, const char *key)
{
	struct kt_val v;

	return ev->f[KT_F_ARGS].type == KT_OBJECT && kt_event_find(ev,
	    &ev->f[KT_F_ARGS], key, &v) == 0;
}

/* One edit of put_fast: replace del bytes at off with s[0..n). */
struct fedit {
	size_t		 off;
	size_t		 del;
	const char	*s;
	size_t		 n;
};

/*
 * The merge's common case, the bytes put() would write, made without a
 * kt_patch: an event other than metadata, first tagged, whose args is
 * an object, and which has a pid.  The rank and kt_pid go first in args
 * (as kt_patch inserts them), pid and ids are replaced, ts is moved.
 * Returns 1 with the event in out, or 0 when put() must do it.
 */
static int
put_fast(struct rt *rt, struct input *in, const struct kt_event *ev,
    struct kt_buf *out)
{
	struct fedit e[6], t;
	char id[80], corr[80], ext[80], ts[96];
	const struct kt_val *args = &ev->f[KT_F_ARGS];
	const struct pidinfo *pi;
	const char *q;
	size_t n, at, i, j, ne = 0, k;

	if (ev->ph == 'M' || ev->f[KT_F_RANK].type != KT_NONE ||
	    args->type != KT_OBJECT || ev->f[KT_F_PID].type == KT_NONE ||
	    is_flow(ev))
		return 0;
	pi = pid_of(rt, in, ev);
	/* An empty args gets no ", " after its last member. */
	for (k = args->off + 1; ev->raw[k] == ' ' || ev->raw[k] == '\n' ||
	    ev->raw[k] == '\t' || ev->raw[k] == '\r'; k++)
		;
	e[ne].off = args->off + 1;
	e[ne].del = 0;
	e[ne].s = pi->ins;
	e[ne++].n = ev->raw[k] == '}' ? pi->inslen - 2 : pi->inslen;
	e[ne].off = ev->f[KT_F_PID].off;
	e[ne].del = ev->f[KT_F_PID].len;
	e[ne].s = pi->pidtext;
	e[ne++].n = pi->pidtextlen;
	if ((q = kt_event_field(ev, KT_F_ID, &n)) != NULL) {
		e[ne].off = ev->f[KT_F_ID].off;
		e[ne].del = n;
		e[ne].s = id;
		e[ne++].n = ns_id(q, n, in, id, sizeof(id));
	}
	if ((q = kt_event_field(ev, KT_F_CORR, &n)) != NULL) {
		e[ne].off = ev->f[KT_F_CORR].off;
		e[ne].del = n;
		e[ne].s = corr;
		e[ne++].n = ns_id(q, n, in, corr, sizeof(corr));
	}
	if ((q = kt_event_field(ev, KT_F_EXTID, &n)) != NULL) {
		e[ne].off = ev->f[KT_F_EXTID].off;
		e[ne].del = n;
		e[ne].s = ext;
		e[ne++].n = ns_id(q, n, in, ext, sizeof(ext));
	}
	if (in->offset != 0 && (ev->flags & KT_EV_TS)) {
		e[ne].off = ev->f[KT_F_TS].off;
		e[ne].del = ev->f[KT_F_TS].len;
		e[ne].s = ts;
		e[ne++].n = kt_event_ts_shifted(ev, in->offset, ts);
	}
	/* By offset (all differ); n <= 6. */
	for (i = 1; i < ne; i++) {
		t = e[i];
		for (j = i; j > 0 && e[j - 1].off > t.off; j--)
			e[j] = e[j - 1];
		e[j] = t;
	}
	k = ev->len;
	for (i = 0, at = 0; i < ne; i++) {
		if (e[i].off < at)
			return 0;	/* overlapping: put() says so */
		at = e[i].off + e[i].del;
		k += e[i].n;
	}
	out->n = 0;
	if (kt_buf_reserve(out, k) == -1)
		kt_cli_nomem();
	for (i = 0, at = 0; i < ne; i++) {
		memcpy(out->p + out->n, ev->raw + at, e[i].off - at);
		out->n += e[i].off - at;
		memcpy(out->p + out->n, e[i].s, e[i].n);
		out->n += e[i].n;
		at = e[i].off + e[i].del;
	}
	memcpy(out->p + out->n, ev->raw + at, ev->len - at);
	out->n += ev->len - at;
	return 1;
}

/* Write ev of in, with its rank and, when merging, its new ids. */
static int
put(struct rt *rt, struct kt_writer *w, struct input *in,
    const struct kt_event *ev, int merging, int tsv, struct kt_buf *out)
{
	struct kt_patch *p = &rt->patch;
	struct kt_buf *nm = &rt->pname;
	struct kt_event ne;
	char rank[32], pidt[32], ts[96], id[80], corr[80], ext[80], si[32];
	size_t n, k;
	const char *t;
	int rc = 0, flow = is_flow(ev);

	if (merging && !tsv && put_fast(rt, in, ev, out))
		return kt_writer_raw(w, out->p, out->n, ev->index);
	kt_patch_reset(p, ev);	/* its buffers are reused */
	if (!flow)
		rc |= kt_patch_set(p, KT_F_RANK, rank, kt_int_format(in->rank,
		    rank));
	else if (ev->f[KT_F_RANK].type != KT_NONE)
		rc |= kt_patch_remove(p, KT_F_RANK);
	if (merging) {
		struct pidinfo *pi = pid_of(rt, in, ev);

		rc |= kt_patch_set(p, KT_F_PID, pidt, kt_int_format(pi->newpid,
		    pidt));
		/* A first tagging adds kt_pid; a second one replaces it. */
		if (!flow)
			rc |= ev->f[KT_F_RANK].type == KT_NONE ?
			    kt_patch_arg_add(p, KT_ARG_PID, pi->raw, pi->len) :
			    kt_patch_arg(p, KT_ARG_PID, pi->raw, pi->len);
		else if (has_arg(ev, KT_ARG_PID))
			rc |= kt_patch_arg_remove(p, KT_ARG_PID);
		if ((t = kt_event_field(ev, KT_F_ID, &n)) != NULL) {
			k = ns_id(t, n, in, id, sizeof(id));
			rc |= kt_patch_set(p, KT_F_ID, id, k);
		}
		if ((t = kt_event_field(ev, KT_F_CORR, &n)) != NULL) {
			k = ns_id(t, n, in, corr, sizeof(corr));
			rc |= kt_patch_set(p, KT_F_CORR, corr, k);
		}
		if ((t = kt_event_field(ev, KT_F_EXTID, &n)) != NULL) {
			k = ns_id(t, n, in, ext, sizeof(ext));
			rc |= kt_patch_set(p, KT_F_EXTID, ext, k);
		}
		if (ev->ph == 'M' && kt_event_field_is(ev, KT_F_NAME,
		    "process_name")) {
			struct kt_val v;

			if (kt_event_find(ev, &ev->f[KT_F_ARGS], "name", &v) ==
			    0 && v.type == KT_STRING) {
				char pre[40];

				nm->n = 0;
				snprintf(pre, sizeof(pre), "\"rank %lld: ",
				    (long long)in->rank);
				kt_buf_adds(nm, pre);
				kt_buf_add(nm, ev->raw + v.off + 1, v.len - 1);
				rc |= kt_patch_arg(p, "name", nm->p, nm->n);
			}
		} else if (ev->ph == 'M' && kt_event_field_is(ev, KT_F_NAME,
		    "process_sort_index"))
			rc |= kt_patch_arg(p, "sort_index", si,
			    kt_int_format(pi->newsort, si));
	}
	if (in->offset != 0 && (ev->flags & KT_EV_TS))
		rc |= kt_patch_set(p, KT_F_TS, ts, kt_event_ts_shifted(ev,
		    in->offset, ts));
	/*
	 * JSON needs the bytes only; TSV the tagged event's fields, which
	 * come from the patch.
	 */
	out->n = 0;
	if (rc != 0 || (tsv ? kt_patch_apply_event(p, out, &ne) :
	    kt_patch_apply(p, out)) == -1) {
		kt_cli_warn("%s: cannot tag an event", in->name);
		kt_cli_die(NULL);
	}
	return tsv ? kt_writer_event(w, &ne) : kt_writer_raw(w, out->p,
	    out->n, ev->index);
}

/* Metadata for pids that have no process_name or process_sort_index. */
static int
put_missing(struct kt_writer *w, struct input *in)
{
	struct kt_buf b = KT_BUF_INIT, nm = KT_BUF_INIT;
	size_t i;
	int rc = 0, kind;

	for (i = 0; i < in->npids && rc == 0; i++) {
		struct pidinfo *pi = &in->pids[i];

		for (kind = 0; kind < 2 && rc == 0; kind++) {
			if (kind == 0 ? pi->has_name : pi->has_sort)
				continue;
			b.n = nm.n = 0;
			kt_obj_begin(&b);
			kt_obj_str(&b, "name", kind == 0 ? "process_name" :
			    "process_sort_index");
			kt_obj_str(&b, "ph", "M");
			kt_obj_int(&b, "pid", pi->newpid);
			kt_obj_int(&b, "tid", 0);
			kt_obj_begin(&nm);
			if (kind == 0) {
				char label[1100];

				const char *q = pi->raw;
				int ql = (int)pi->len;

				if (q[0] == '"') {
					q++;
					ql -= 2;
				}
				snprintf(label, sizeof(label), "rank %lld: pid "
				    "%.*s", (long long)in->rank, ql, q);
				kt_obj_str(&nm, "name", label);
			} else
				kt_obj_int(&nm, "sort_index", pi->newsort);
			kt_obj_int(&nm, KT_ARG_RANK, in->rank);
			kt_obj_raw(&nm, KT_ARG_PID, pi->raw, pi->len);
			kt_obj_end(&nm);
			kt_obj_raw(&b, "args", nm.p, nm.n);
			kt_obj_end(&b);
			/* Made up: numbers past the input's last. */
			rc = kt_writer_raw(w, b.p, b.n, in->nevents + 2 * i +
			    (uint64_t)kind);
		}
	}
	kt_buf_free(&b);
	kt_buf_free(&nm);
	return rc;
}

/* Open input in again for the merge, at its trace. */
static void
reopen(struct input *in, unsigned flags, const char *member)
{
	struct kt_error err;
	int i;

	if ((in->src = kt_cli_source_open(in->path, member, flags, &err)) ==
	    NULL)
		kt_cli_die(&err);
	for (i = 0; i <= in->ordinal; i++) {
		if (in->r != NULL)
			kt_reader_free(in->r);
		in->r = NULL;
		if (kt_source_next(in->src, &in->r, &err) != 1)
			kt_cli_die(&err);
	}
}

/* Advance input in to its next event; in->live says if there is one. */
static void
advance(struct input *in)
{
	struct kt_error err;
	int rc = kt_reader_next(in->r, &in->ev, &err);

	if (rc == -1)
		kt_cli_die(&err);
	in->live = rc == 1;
	if (in->live)
		in->key = order_key(&in->ev, in->offset);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* --ranks LIST (kt_ranklist_parse): 0,7,63-64. */
static void
parse_ranks(struct opts *o, const char *arg)
{
	const char *bad;
	size_t nbad;

	kt_ranklist_free(&o->ranks);
	switch (kt_ranklist_parse(arg, &o->ranks, &bad, &nbad)) {
	case KT_STEPS_OK:
		o->has_ranks = 1;
		return;
	case -1:
		kt_cli_nomem();
		break;
	case KT_STEPS_NUMBER:
		kt_cli_warn("--ranks: '%.*s' is not a number from 0 to %d",
		    (int)nbad, bad, INT32_MAX);
		break;
	case KT_STEPS_ORDER:
		kt_cli_warn("--ranks: '%.*s' ends before it starts",
		    (int)nbad, bad);
		break;
	default:
		kt_cli_warn("--ranks: '%s' is not a list of N or A-B, such as "
		    "0,7,63-64", arg);
	}
	exit(2);
}

/*
 * --ranks: keep the inputs of the ranks wanted (those the survey read
 * through to learn their rank, too), and say which ranks of the list no
 * input has, as ranges.  Returns 1 when some are missing, else 0.
 */
static int
select_inputs(struct rt *rt)
{
	struct kt_buf miss = KT_BUF_INIT;
	int64_t *have, at;
	size_t i, k, nh;

	for (i = 0, k = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];

		find_rank(in, &rt->o);
		if (wanted(&rt->o, in->rank)) {
			rt->inputs[k] = *in;
			rt->inputs[k].order = k;
			k++;
			continue;
		}
		if (rt->o.verbose)
			kt_cli_warn("%s: rank %lld (from %s), not in --ranks: "
			    "read through, as its first bytes do not settle "
			    "its rank", in->name, (long long)in->rank,
			    in->rank_from);
		kt_intern_free(in->pidtab);
		free(in->pids);
		free(in->metas);
	}
	rt->ninputs = k;
	if ((have = calloc(rt->ninputs + 1, sizeof(*have))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < rt->ninputs; i++)
		have[i] = rt->inputs[i].rank;
	qsort(have, rt->ninputs, sizeof(*have), cmp_i64);
	/* The gaps of each range between the ranks that inputs have. */
	for (i = 0, nh = 0; i < rt->o.ranks.n; i++) {
		int64_t hi = rt->o.ranks.r[i][1];

		for (at = rt->o.ranks.r[i][0]; at <= hi;) {
			int64_t end;

			while (nh < rt->ninputs && have[nh] < at)
				nh++;
			if (nh < rt->ninputs && have[nh] == at) {
				at++;
				continue;
			}
			end = nh < rt->ninputs && have[nh] <= hi ?
			    have[nh] - 1 : hi;
			if (miss.n > 0)
				kt_buf_adds(&miss, ", ");
			if (end == at)
				kt_buf_printf(&miss, "%lld", (long long)at);
			else
				kt_buf_printf(&miss, "%lld-%lld",
				    (long long)at, (long long)end);
			at = end + 1;
		}
	}
	free(have);
	if ((k = miss.n) > 0)
		kt_cli_warn("--ranks: no input has rank %.*s", (int)miss.n,
		    miss.p);
	kt_buf_free(&miss);
	return k > 0;
}

/* The options; returns the index of the first operand. */
static int
parse_args(struct opts *o, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "align", required_argument, NULL, 'a' },
		{ "allow-duplicate-ranks", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "rank", required_argument, NULL, 'r' },
		{ "ranks", required_argument, NULL, 'R' },
		{ "strict", no_argument, NULL, 'S' },
		{ "spool-max", required_argument, NULL, KT_CLI_SPOOL_MAX },
		{ "tsv", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "a:Dhl:m:o:r:StvV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'a':
			if (strcmp(optarg, "base") == 0)
				o->align = ALIGN_BASE;
			else if (strcmp(optarg, "first") == 0)
				o->align = ALIGN_FIRST;
			else if (strncmp(optarg, "step:", 5) == 0) {
				o->align = ALIGN_STEP;
				o->align_step = kt_cli_int("--align step:K",
				    optarg + 5, 0, INT64_MAX);
			} else {
				kt_cli_warn("--align: '%s' is not base, first "
				    "or step:K", optarg);
				exit(2);
			}
			break;
		case 'D':
			o->allow_dup = 1;
			break;
		case 'r':
			o->rank = kt_cli_int("--rank", optarg, 0, INT32_MAX);
			o->has_rank = 1;
			break;
		case 'R':
			parse_ranks(o, optarg);
			break;
		case 't':
			o->tsv = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		default:
			kt_cli_opt(&o->co, ch, optarg, usage);
		}
	}
	if (o->has_rank && o->has_ranks) {
		kt_cli_warn("--rank names the rank of one input; --ranks "
		    "selects among several: give one of them");
		exit(2);
	}
	return optind;
}

/*
 * Each input's rank and base time, the inputs in rank order (their
 * slots); two of one rank are refused unless --allow-duplicate-ranks.
 */
static void
rank_inputs(struct rt *rt)
{
	size_t i;

	if (rt->o.has_rank && rt->ninputs > 1) {
		kt_cli_warn("--rank names the rank of one input; %zu were "
		    "given", rt->ninputs);
		exit(2);
	}
	for (i = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];
		const struct kt_meta *b = NULL;
		size_t j;

		find_rank(in, &rt->o);
		for (j = 0; j < in->nmetas; j++)
			if (strcmp(in->metas[j].key,
			    "\"baseTimeNanoseconds\"") == 0)
				b = &in->metas[j];
		if (b != NULL) {
			char *end;
			long long v = strtoll(b->val, &end, 10);

			if (*end == '\0') {
				in->base = v;
				in->has_base = 1;
			}
		}
	}
	if (rt->ninputs > 1)	/* none: --ranks matched no input */
		qsort(rt->inputs, rt->ninputs, sizeof(*rt->inputs), cmp_rank);
	for (i = 0; i < rt->ninputs; i++) {
		struct input *in = &rt->inputs[i];

		in->slot = (int)i;
		if (i > 0 && in->rank == in[-1].rank && !rt->o.allow_dup) {
			kt_cli_warn("%s and %s are both rank %lld (from %s and "
			    "%s); --allow-duplicate-ranks merges them anyway",
			    in[-1].name, in->name, (long long)in->rank,
			    in[-1].rank_from, in->rank_from);
			exit(2);
		}
	}
}

/* --verbose: where each rank and offset came from. */
static void
say_inputs(const struct rt *rt, int merging, int allsorted)
{
	size_t i;

	for (i = 0; i < rt->nskip; i++)
		kt_cli_warn("%s: rank %lld (from %s), not in --ranks: read only "
		    "its top-level keys", rt->skip[i].name,
		    (long long)rt->skip[i].rank, rt->skip[i].from);
	for (i = 0; i < rt->ninputs; i++) {
		const struct input *in = &rt->inputs[i];

		kt_cli_warn("%s: rank %lld (from %s), clock offset %+lld ns, "
		    "%llu events%s", in->name, (long long)in->rank,
		    in->rank_from, (long long)in->offset,
		    (unsigned long long)in->nevents, merging ? (in->sorted ?
		    ", sorted" : ", not sorted") : "");
	}
	if (merging && !allsorted)
		kt_cli_warn("not every input is sorted: merging rank after "
		    "rank (kt normalize sorts)");
}

/* Merge sorted inputs by time: the input with the least key goes next. */
static int
merge_by_time(struct rt *rt, struct kt_writer *w, int merging)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < rt->ninputs; i++) {
		reopen(&rt->inputs[i], rt->o.co.rflags | KT_READ_SMALL,
		    rt->o.co.member);
		advance(&rt->inputs[i]);
	}
	while (rc == 0) {
		struct input *best = NULL;

		for (i = 0; i < rt->ninputs; i++)
			if (rt->inputs[i].live && (best == NULL ||
			    rt->inputs[i].key < best->key))
				best = &rt->inputs[i];
		if (best == NULL)
			break;
		rc = put(rt, w, best, &best->ev, merging, rt->o.tsv, &rt->eb);
		advance(best);
	}
	for (i = 0; i < rt->ninputs; i++)
		kt_cli_report_repairs(rt->inputs[i].name,
		    kt_reader_repairs(rt->inputs[i].r));
	return rc;
}

/* Write the inputs one after the other, in rank order. */
static int
merge_in_turn(struct rt *rt, struct kt_writer *w, int merging)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < rt->ninputs && rc == 0; i++) {
		struct input *in = &rt->inputs[i];

		reopen(in, rt->o.co.rflags, rt->o.co.member);
		for (advance(in); in->live && rc == 0; advance(in))
			rc = put(rt, w, in, &in->ev, merging, rt->o.tsv,
			    &rt->eb);
		kt_cli_report_repairs(in->name, kt_reader_repairs(in->r));
		kt_reader_free(in->r);
		in->r = NULL;
		kt_source_close(in->src);
		in->src = NULL;
	}
	return rc;
}

/* The second pass: the merged (or tagged) trace, written and committed. */
static void
write_output(struct rt *rt, int merging, int allsorted)
{
	struct kt_error err;
	struct kt_out *out;
	struct kt_writer *w;
	struct kt_meta *metas;
	struct rlimit rl;
	size_t i, nm;
	int rc = 0;

	out = kt_cli_out_open(rt->o.co.output, rt->o.co.level);
	if ((w = kt_writer_new(out, rt->o.tsv ? KT_WRITE_TSV | KT_WRITE_RANK :
	    KT_WRITE_ROWS)) == NULL)
		kt_cli_nomem();
	metas = out_metas(rt, &nm, merging);
	if (kt_writer_begin(w, metas, nm, NULL, 0) == -1)
		rc = -1;
	if (merging && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < rt->ninputs && rc == 0 && merging; i++)
		rc = put_missing(w, &rt->inputs[i]);
	if (rc == 0)
		rc = merging && allsorted ? merge_by_time(rt, w, merging) :
		    merge_in_turn(rt, w, merging);
	if (rc == 0)
		rc = kt_writer_end(w, metas, nm);
	kt_cli_out_commit(out, rc == -1, &err);
	free(metas);
	kt_writer_free(w);
}

/* Free what rt holds. */
static void
rt_free(struct rt *rt)
{
	size_t i;

	for (i = 0; i < rt->ninputs; i++) {
		kt_reader_free(rt->inputs[i].r);
		kt_source_close(rt->inputs[i].src);
		kt_intern_free(rt->inputs[i].pidtab);
		free(rt->inputs[i].pids);
		free(rt->inputs[i].metas);
	}
	free(rt->inputs);
	free(rt->skip);
	kt_ranklist_free(&rt->o.ranks);
	kt_buf_free(&rt->eb);
	kt_buf_free(&rt->ktranks);
	kt_buf_free(&rt->pname);
	kt_patch_free(&rt->patch);
	kt_arena_free(rt->arena);
	pthread_mutex_destroy(&rt->arenalock);
	pthread_mutex_destroy(&rt->joblock);
}

int
main(int argc, char *argv[])
{
	struct rt rt;
	size_t i;
	int merging, allsorted = 1, nfiles, missing = 0;
	char *const stdin_only[] = { (char *)"-" };

	memset(&rt, 0, sizeof(rt));
	rt.o.co.level = -1;
	if (pthread_mutex_init(&rt.arenalock, NULL) != 0 ||
	    pthread_mutex_init(&rt.joblock, NULL) != 0)
		kt_cli_nomem();
	kt_patch_init(&rt.patch, NULL);
	kt_cli_init("kt-rank-tag");
	i = (size_t)parse_args(&rt.o, argc, argv);
	argc -= (int)i;
	argv += i;
	nfiles = argc;
	if (argc == 0) {
		argv = (char **)stdin_only;
		argc = 1;
	}
	kt_cli_inputs(argv, nfiles);
	if (kt_cli_check_output(rt.o.co.output, argv, nfiles) == -1)
		return 2;
	if ((rt.arena = kt_arena_new()) == NULL)
		kt_cli_nomem();
	/* jansson seeds its hash once: before the survey threads. */
	json_object_seed(0);
	/* First pass: every trace of every source (with --ranks, wanted). */
	survey_all(&rt, argv, argc);
	if (rt.o.has_ranks)
		missing = select_inputs(&rt);
	for (i = 0; i < rt.ninputs; i++)
		if (!rt.inputs[i].sorted)
			allsorted = 0;
	rank_inputs(&rt);
	merging = rt.ninputs > 1;
	if (merging)
		for (i = 0; i < rt.ninputs; i++)
			map_pids(&rt, &rt.inputs[i]);
	offsets(&rt);
	if (rt.o.verbose)
		say_inputs(&rt, merging, allsorted);
	/* Second pass: merge. */
	write_output(&rt, merging, allsorted);
	rt_free(&rt);
	return missing ? 1 : 0;
}
