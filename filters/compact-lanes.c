/*
 * kt-compact-lanes: a compact view of a trace's GPU rows.  Per GPU
 * device (per rank in a merged trace) the GPU activity (kernels, memcpy,
 * memset and the other X events of the stream rows) is placed on a few
 * synthetic display lanes, as many as the most activities that run at
 * once (interval partitioning on sorted starts); gpu_user_annotation
 * scopes go to a process of their own, "GPU scopes".  A moved event keeps
 * every byte but its tid (and pid, for scopes) and gains
 * args._compact_gpu_track, which holds the original pid, tid and row
 * number; each ac2g flow end moves with its kernel.  Nothing about what
 * ran changes: names, times, durations and args.stream stay.
 *
 * The stream rows left empty lose their thread_name and
 * thread_sort_index events, which the report keeps; --restore puts them
 * back and writes the source's event array exactly.
 *
 * A lane is known only once every activity of the device is known, so
 * the events are held (lib/hold.c): a plain JSON input file is mapped
 * and its events stay where they are in it, other inputs are copied.
 * With a report, the input's SHA-256 is computed in a second thread
 * while the events are read.  --restore holds the compact view the same
 * way.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <pthread.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kt.h"

#define NONE		UINT32_MAX
#define LANE_TID_BASE	1000000000LL	/* lane K is tid base + K */
#define SCOPE_PID_BASE	1000000000LL	/* scopes of pid P: base + P */
#define TRACK_KEY	"_compact_gpu_track"
#define ADDED_KEY	"_compact_gpu_added"
#define TOP_KEY		"ktCompactLanes"
#define REPORT_VERSION	1

enum role { R_KEEP = 0, R_ACT, R_SCOPE, R_FLOW, R_RETIRE };
enum mkind { MK_NONE = 0, MK_THREAD_NAME, MK_THREAD_SORT, MK_PROC_NAME,
    MK_PROC_SORT };
enum grp { G_COMPUTE = 0, G_COMM, G_COPY, G_N };
enum tclass { TC_STREAM = 0, TC_LANE, TC_GUIDE };

static const char *const grpnames[G_N] = { "compute", "communication",
    "copies" };

/* A value's place in an event's raw text. */
struct span {
	uint32_t	 off;
	uint32_t	 len;
};

/* What is known of each event, in input order. */
struct rec {
	uint64_t	 index;		/* its row number */
	int64_t		 ts;
	int64_t		 dur;
	uint32_t	 thread;	/* interned pid/tid */
	uint32_t	 aux;		/* ACT, SCOPE: item; FLOW: act's rec */
	uint8_t		 kind;
	char		 ph;
	uint8_t		 role;
	uint8_t		 mk;		/* enum mkind */
	uint8_t		 grp;
	uint8_t		 bp_e;
	uint8_t		 hasts;
};

/* An event's bytes, held by --restore. */
struct held {
	const char	*raw;
	struct span	 pid;
	struct span	 tid;
	struct span	 args;
	uint32_t	 len;
	uint8_t		 argtype;	/* enum kt_type of args */
};

/* An activity or a scope to place. */
struct item {
	int64_t		 ts;
	int64_t		 end;
	uint32_t	 rec;
	uint32_t	 lane;		/* 0-based lane, or scope row */
	uint32_t	 unit;		/* scope: nesting group; act: device */
};

struct thr {
	uint32_t	 pid;		/* interned pid */
	uint8_t		 cls;		/* enum tclass */
	uint8_t		 has_gpu;	/* a kernel, memcpy, memset or scope */
	uint8_t		 has_cpu;	/* an X event of a CPU kind */
	uint32_t	 name_rec;	/* its first thread_name, or NONE */
	const char	*name;		/* that one's raw args.name, or NULL */
	size_t		 namelen;
	uint64_t	 nacts;		/* its activities */
	uint64_t	 kept;		/* events (not M) that stay */
	uint64_t	 moved;
	int		 retired;
};

struct pidi {
	int		 gpu;		/* holds GPU activity */
	int		 compact;	/* lanes or GPU scopes already */
	uint32_t	 dev;		/* device number, or NONE */
	const char	*rank;		/* raw args.rank text, or NULL */
	int		 rank_looked;	/* an event's args were searched */
	size_t		 ranklen;
	int		 has_sort;
	int64_t		 sort;
};

/* One device being compacted. */
struct dev {
	uint32_t	 pid;
	uint32_t	*acts;		/* items, by start */
	size_t		 nacts;
	uint32_t	*scopes;
	size_t		 nscopes;
	int		 lanes;
	int		 glanes[G_N];
	int		 gbase[G_N];
	int		 peak;
	int64_t		 peak_ts;
	uint32_t	*peak_items;
	int		 npeak;
	int		 streams;
	int		 scope_rows;
	uint64_t	 moved_flows;
	uint64_t	 retired_rows;
	char		 scope_pid[96];
};

struct opts {
	int		 group;
	int		 restore;
	long long	 max_lanes;
	const char	*report;
	struct kt_cli_opts co;	/* -l, -m, -o, -S */
};

static struct opts o;
static struct kt_reader *rd;
static struct kt_arena *arena;
static struct kt_intern *threads, *pids;
static struct rec *recs;
static size_t nrecs, caprecs;
static struct held *helds;
static struct item *acts, *scopes;
static size_t nacts, capacts, nscopes, capscopes;
static struct thr *thrs;
static size_t nthrs;
static struct pidi *pidis;
static size_t npidis;
static struct dev *devs;
static size_t ndevs;
static int already;		/* the input is a compact view already */
static char sha[65];
static const char *inname = "<stdin>";

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-compact-lanes [-gS] [-l level] [-m glob] [-n lanes]\n"
	    "                        [-o file] [-r report] [file]\n"
	    "       kt-compact-lanes --restore [-r report] [-o file] [file]\n"
	    "  -g, --group              communication, copies, compute apart\n"
	    "  -l, --level N            gzip level 0-9 for a .gz output\n"
	    "  -m, --member GLOB        take the archive member matching GLOB\n"
	    "  -n, --max-gpu-lanes N    refuse a device needing more (default 10)\n"
	    "  -o, --output FILE        write FILE atomically (.gz: gzip)\n"
	    "  -r, --report FILE        the report (default with -o: FILE.compact.json)\n"
	    "  -R, --restore            write back the source of a compact view\n"
	    "  -S, --strict             refuse damaged input\n"
	    "  -h, --help, -V, --version\n");
}

#define nomem()	kt_cli_nomem()

/* Is the raw JSON string s[0..n) (with quotes) starting with prefix? */
static int
str_prefix(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k + 2 && s[0] == '"' && memcmp(s + 1, prefix, k) == 0;
}

/* Does s[0..n) contain needle, ignoring ASCII case? */
static int
contains_ci(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle), i, j;

	for (i = 0; i + k <= n; i++) {
		for (j = 0; j < k; j++) {
			char c = s[i + j];

			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (c != needle[j])
				break;
		}
		if (j == k)
			return 1;
	}
	return 0;
}

/*
 * The lane group of a GPU activity: copies (memcpy, memset),
 * communication (NCCL, RCCL and the like, or a kernel that names its
 * collective) or compute.
 */
static enum grp
group_of(const struct kt_event *ev, int kind)
{
	static const char *const comm[] = {
		"nccl", "rccl", "msccl", "deep_ep", "deepep", "allreduce",
		"all_reduce", "allgather", "all_gather", "reducescatter",
		"reduce_scatter", "alltoall", "all_to_all", "sendrecv",
		"cross_device_reduce", "c10d::"
	};
	const char *n;
	size_t len, i;
	struct kt_val v;

	if (kind == KT_GPU_MEMCPY || kind == KT_GPU_MEMSET)
		return G_COPY;
	if ((n = kt_event_field(ev, KT_F_NAME, &len)) != NULL) {
		if (str_prefix(n, len, "Memcpy") || str_prefix(n, len,
		    "Memset"))
			return G_COPY;
		for (i = 0; i < sizeof(comm) / sizeof(comm[0]); i++)
			if (contains_ci(n, len, comm[i]))
				return G_COMM;
	}
	if (ev->f[KT_F_ARGS].type == KT_OBJECT && kt_event_find(ev,
	    &ev->f[KT_F_ARGS], "Collective name", &v) == 0)
		return G_COMM;
	return G_COMPUTE;
}

/* ------------------------------------------------------------------ */
/* Reading. */

static struct pidi *
pidi_at(uint32_t id)
{
	if (id >= npidis) {
		size_t n = (id + 1) * 2;

		if ((pidis = realloc(pidis, n * sizeof(*pidis))) == NULL)
			nomem();
		memset(&pidis[npidis], 0, (n - npidis) * sizeof(*pidis));
		for (; npidis < n; npidis++)
			pidis[npidis].dev = NONE;
	}
	return &pidis[id];
}

/* The thread id of ev, interned with its pid; the last one is cached. */
static uint32_t
thread_of(const struct kt_event *ev)
{
	static struct kt_buf key, last;
	static uint32_t lastid = NONE;
	int64_t id;
	const char *tab;

	key.n = 0;
	if (kt_event_thread_key(ev, &key) == -1)
		nomem();
	if (lastid != NONE && key.n == last.n && memcmp(key.p, last.p,
	    key.n) == 0)
		return lastid;
	if ((id = kt_intern_put(threads, key.p, key.n)) == -1)
		nomem();
	if ((size_t)id == nthrs) {
		int64_t p;

		if ((thrs = realloc(thrs, (nthrs + 1) * sizeof(*thrs))) ==
		    NULL)
			nomem();
		memset(&thrs[nthrs], 0, sizeof(*thrs));
		thrs[nthrs].name_rec = NONE;
		tab = memchr(key.p, '\t', key.n);
		if ((p = kt_intern_put(pids, key.p, (size_t)(tab - key.p))) ==
		    -1)
			nomem();
		thrs[nthrs].pid = (uint32_t)p;
		pidi_at((uint32_t)p);
		nthrs++;
	}
	last.n = 0;
	if (kt_buf_add(&last, key.p, key.n) == -1)
		nomem();
	lastid = (uint32_t)id;
	return lastid;
}

/* The raw text of args.name of a metadata event, or NULL. */
static const char *
meta_name(const struct kt_event *ev, size_t *n)
{
	struct kt_val v;

	if (ev->f[KT_F_ARGS].type != KT_OBJECT || kt_event_find(ev,
	    &ev->f[KT_F_ARGS], "name", &v) == -1 || v.type != KT_STRING)
		return NULL;
	*n = v.len;
	return ev->raw + v.off;
}

/* What a metadata event says about its thread or process. */
static void
note_meta(struct rec *r, const struct kt_event *ev)
{
	struct thr *t = &thrs[r->thread];
	struct pidi *p = &pidis[t->pid];
	const char *s;
	size_t n;

	if (kt_event_field_is(ev, KT_F_NAME, "thread_name")) {
		r->mk = MK_THREAD_NAME;
		if ((s = meta_name(ev, &n)) == NULL)
			return;
		if (t->name_rec == NONE) {
			t->name_rec = (uint32_t)(r - recs);
			if ((t->name = kt_arena_copy(arena, s, n)) == NULL)
				nomem();
			t->namelen = n;
		}
		if (str_prefix(s, n, "Layer guide ("))
			t->cls = TC_GUIDE;
		else if (str_prefix(s, n, "GPU lane ") &&
		    contains_ci(s, n, "(synthetic")) {
			t->cls = TC_LANE;
			p->compact = 1;
		}
	} else if (kt_event_field_is(ev, KT_F_NAME, "thread_sort_index"))
		r->mk = MK_THREAD_SORT;
	else if (kt_event_field_is(ev, KT_F_NAME, "process_name")) {
		r->mk = MK_PROC_NAME;
		if ((s = meta_name(ev, &n)) != NULL &&
		    str_prefix(s, n, "GPU scopes"))
			p->compact = 1;
	} else if (kt_event_field_is(ev, KT_F_NAME, "process_sort_index")) {
		struct kt_val v;

		r->mk = MK_PROC_SORT;
		if (ev->f[KT_F_ARGS].type == KT_OBJECT && kt_event_find(ev,
		    &ev->f[KT_F_ARGS], "sort_index", &v) == 0) {
			struct kt_event t2 = *ev;

			t2.f[KT_F_ID] = v;
			if (kt_event_field_int(&t2, KT_F_ID, &p->sort) == 0)
				p->has_sort = 1;
		}
	}
}

static struct span
span_of(const struct kt_event *ev, enum kt_field f)
{
	struct span s;

	s.off = ev->f[f].off;
	s.len = ev->f[f].len;
	return s;
}

/* Is k a kind of event that runs on a CPU thread? */
static int
cpu_kind(int k)
{
	return k == KT_CPU_OP || k == KT_USER_ANNOTATION || k == KT_STEP ||
	    k == KT_CUDA_RUNTIME || k == KT_CUDA_DRIVER ||
	    k == KT_PYTHON_FUNCTION;
}

/*
 * Is thread t a GPU stream row: a row of a GPU process that is not a
 * lane or a layer guide, and holds GPU activity or no CPU work?
 */
static int
stream_row(const struct thr *t)
{
	const struct pidi *p = &pidis[t->pid];

	return p->gpu && !p->compact && t->cls == TC_STREAM &&
	    (t->has_gpu || !t->has_cpu);
}

/*
 * The input's events, held as the file's own bytes when it is a plain
 * file, else copied.
 */
static struct kt_hold *holder;

/* Keep ev. */
static void
hold(const struct kt_event *ev)
{
	static uint32_t lastx = NONE;
	struct rec *r;
	int kind = ev->kind;

	if (nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 65536;
		if ((recs = realloc(recs, caprecs * sizeof(*recs))) == NULL ||
		    (helds = realloc(helds, caprecs * sizeof(*helds))) == NULL)
			nomem();
	}
	if (ev->len > UINT32_MAX) {
		kt_cli_warn("%s: an event of over 4 GB", inname);
		kt_cli_die(NULL);
	}
	r = &recs[nrecs++];
	memset(r, 0, sizeof(*r));
	{
		struct held *h = &helds[nrecs - 1];
		struct kt_error err;

		if ((h->raw = kt_hold_event(holder, rd, ev, &err)) == NULL)
			kt_cli_die(&err);
		h->len = (uint32_t)ev->len;
		h->pid = span_of(ev, KT_F_PID);
		h->tid = span_of(ev, KT_F_TID);
		h->args = span_of(ev, KT_F_ARGS);
		h->argtype = ev->f[KT_F_ARGS].type;
	}
	r->index = ev->index;
	r->ph = ev->ph;
	r->hasts = (ev->flags & KT_EV_TS) != 0;
	r->ts = ev->ts;
	r->dur = (ev->flags & KT_EV_DUR) && ev->dur > 0 ? ev->dur : 0;
	r->kind = (uint8_t)kind;
	r->aux = NONE;
	r->thread = thread_of(ev);
	/* A compact view's own marks: the first member of args. */
	if (ev->f[KT_F_ARGS].type == KT_OBJECT && ev->f[KT_F_ARGS].len > 16 &&
	    memcmp(ev->raw + ev->f[KT_F_ARGS].off, "{\"_compact_gpu_", 15) ==
	    0)
		already = 1;
	switch (ev->ph) {
	case 'M':
		note_meta(r, ev);
		break;
	case 'X':
		if (cpu_kind(kind))
			thrs[r->thread].has_cpu = 1;
		else if (kt_event_field_is(ev, KT_F_CAT, "layer_guide"))
			thrs[r->thread].cls = TC_GUIDE;
		if (kind == KT_KERNEL || kind == KT_GPU_MEMCPY ||
		    kind == KT_GPU_MEMSET || kind == KT_GPU_USER_ANNOTATION) {
			struct pidi *p = &pidis[thrs[r->thread].pid];
			struct kt_val v = ev->f[KT_F_RANK];

			thrs[r->thread].has_gpu = 1;
			p->gpu = 1;
			/* Its args.rank, looked for once per pid. */
			if (!p->rank_looked && (p->rank_looked = 1) &&
			    (v.type != KT_NONE ||
			    (ev->f[KT_F_ARGS].type == KT_OBJECT &&
			    kt_event_find(ev, &ev->f[KT_F_ARGS], "rank", &v) ==
			    0))) {
				p->ranklen = v.len;
				if ((p->rank = kt_arena_copy(arena, ev->raw +
				    v.off, v.len)) == NULL)
					nomem();
			}
		}
		if (o.group)
			r->grp = (uint8_t)group_of(ev, kind);
		lastx = (uint32_t)(nrecs - 1);
		break;
	default:
		if (kind == KT_FLOW) {
			r->bp_e = kt_event_field_is(ev, KT_F_BP, "e");
			/* Kineto writes a flow end right after its kernel. */
			if (lastx != NONE && recs[lastx].thread == r->thread &&
			    r->hasts && recs[lastx].hasts &&
			    recs[lastx].ts == r->ts)
				r->aux = lastx;
		}
		break;
	}
}

/* Read every event; map row numbers written after the events. */
static void
read_all(void)
{
	struct kt_event ev;
	struct kt_error err;
	const uint64_t *si;
	size_t nsi, i;
	int rc, applied;

	while ((rc = kt_reader_next(rd, &ev, &err)) == 1) {
		hold(&ev);
		if ((nrecs & 0xffff) == 0)
			kt_cli_progress(rd);
	}
	if (rc == -1)
		kt_cli_die(&err);
	si = kt_reader_srcindex(rd, &nsi, &applied);
	if (si != NULL && !applied)
		for (i = 0; i < nrecs && i < nsi; i++)
			recs[i].index = si[i];
	kt_cli_progress_done();
}

/* ------------------------------------------------------------------ */
/* Placing. */

struct hent {
	int64_t		 end;
	uint32_t	 lane;
};

static int
hless(const struct hent *a, const struct hent *b)
{
	return a->end < b->end || (a->end == b->end && a->lane < b->lane);
}

static void
hpush(struct hent *h, size_t *n, struct hent e)
{
	size_t i = (*n)++;

	while (i > 0 && hless(&e, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = e;
}

static struct hent
hpop(struct hent *h, size_t *n)
{
	struct hent top = h[0], e = h[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && hless(&h[c + 1], &h[c]))
			c++;
		if (!hless(&h[c], &e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
	return top;
}

/*
 * Interval partitioning: give items idx[0..n) of it (sorted by start)
 * lanes base, base + 1, ... so that no two on one lane overlap ([ts,
 * end); touching is fine): each takes the lowest free lane, and a new
 * lane opens only when every lane is busy, so the number of lanes, the
 * return value, is the most items that run at once.  When that peak is
 * first reached, *peak_ts gets its time and *snap (when not NULL) the
 * items running then.
 */
static int
partition(struct item *it, const uint32_t *idx, size_t n, uint32_t base,
    int64_t *peak_ts, uint32_t **snap, int *nsnap)
{
	struct hent *busy;
	uint32_t *freel, *occ;
	size_t nb = 0, nf = 0, i;
	uint32_t nl = 0;

	if ((busy = malloc((n + 1) * sizeof(*busy))) == NULL ||
	    (freel = malloc((n + 1) * sizeof(*freel))) == NULL ||
	    (occ = malloc((n + 1) * sizeof(*occ))) == NULL)
		nomem();
	*peak_ts = 0;
	for (i = 0; i < n; i++) {
		struct item *x = &it[idx[i]];
		struct hent e;
		uint32_t lane;

		while (nb > 0 && busy[0].end <= x->ts) {
			/* A min-heap of free lanes, by number. */
			uint32_t l = hpop(busy, &nb).lane;
			size_t k = nf++;

			while (k > 0 && l < freel[(k - 1) / 2]) {
				freel[k] = freel[(k - 1) / 2];
				k = (k - 1) / 2;
			}
			freel[k] = l;
		}
		if (nf > 0) {
			uint32_t last = freel[--nf];
			size_t k = 0, c;

			lane = freel[0];
			while ((c = 2 * k + 1) < nf) {
				if (c + 1 < nf && freel[c + 1] < freel[c])
					c++;
				if (freel[c] >= last)
					break;
				freel[k] = freel[c];
				k = c;
			}
			if (nf > 0)
				freel[k] = last;
			occ[lane] = idx[i];
		} else {
			lane = nl++;
			occ[lane] = idx[i];
			*peak_ts = x->ts;
			if (snap != NULL) {
				if ((*snap = realloc(*snap, nl *
				    sizeof(**snap))) == NULL)
					nomem();
				memcpy(*snap, occ, nl * sizeof(*occ));
				*nsnap = (int)nl;
			}
		}
		x->lane = base + lane;
		e.end = x->end;
		e.lane = lane;
		hpush(busy, &nb, e);
	}
	free(busy);
	free(freel);
	free(occ);
	return (int)nl;
}

/* The raw text of interned pid p. */
static const char *
pid_text(uint32_t p, size_t *n)
{
	return kt_intern_get(pids, p, n);
}

/* The raw text of thread t's tid. */
static const char *
tid_text(uint32_t t, size_t *n)
{
	size_t kn;
	const char *k = kt_intern_get(threads, t, &kn);
	const char *tab = memchr(k, '\t', kn);

	*n = kn - (size_t)(tab - k) - 1;
	return tab + 1;
}

/* Is raw JSON number text s[0..n) an integer?  Its value in *v. */
static int
int_text(const char *s, size_t n, int64_t *v)
{
	size_t i = 0;
	int64_t x = 0;
	int neg = 0;

	if (n > 0 && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == n || n - i > 18)
		return 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		x = x * 10 + (s[i] - '0');
	}
	*v = neg ? -x : x;
	return 1;
}

/* Print "pid P" (and the rank) of device d into buf. */
static const char *
dev_label(const struct dev *d, char *buf, size_t cap)
{
	size_t n;
	const char *p = pid_text(d->pid, &n);
	const struct pidi *pi = &pidis[d->pid];

	if (pi->rank != NULL)
		snprintf(buf, cap, "pid %.*s (rank %.*s)", (int)n, p,
		    (int)pi->ranklen, pi->rank);
	else
		snprintf(buf, cap, "pid %.*s", (int)n, p);
	return buf;
}

/* Order threads by tid: numbers by value, then the rest by text. */
static int
cmp_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t xn, yn;
	const char *xs = tid_text(x, &xn), *ys = tid_text(y, &yn);
	int64_t xv, yv;
	int xi = int_text(xs, xn, &xv), yi = int_text(ys, yn, &yv);
	int c;

	if (xi != yi)
		return yi - xi;
	if (xi && xv != yv)
		return xv < yv ? -1 : 1;
	if ((c = memcmp(xs, ys, xn < yn ? xn : yn)) != 0)
		return c;
	return (xn > yn) - (xn < yn);
}

/*
 * The stream rows (tids) of items snap[0..n), in tid order, as "7, 11,
 * 15" (at most 12, then "...").
 */
static void
stream_list(const uint32_t *snap, int n, char *buf, size_t cap)
{
	uint32_t *t;
	size_t at = 0;
	int i, j, nt = 0;

	buf[0] = '\0';
	if ((t = malloc(((size_t)n + 1) * sizeof(*t))) == NULL)
		nomem();
	for (i = 0; i < n; i++) {
		uint32_t th = recs[acts[snap[i]].rec].thread;

		for (j = 0; j < nt && t[j] != th; j++)
			;
		if (j == nt)
			t[nt++] = th;
	}
	qsort(t, (size_t)nt, sizeof(*t), cmp_tid);
	for (i = 0; i < nt && at < cap; i++) {
		const char *s;
		size_t k;

		if (i == 12) {
			snprintf(buf + at, cap - at, ", ...");
			break;
		}
		s = tid_text(t[i], &k);
		at += (size_t)snprintf(buf + at, cap - at, "%s%.*s",
		    i ? ", " : "", (int)k, s);
	}
	free(t);
}

/* Sort items by start, then file order. */
static const struct item *sort_base;

static int
cmp_start(const void *a, const void *b)
{
	const struct item *x = &sort_base[*(const uint32_t *)a];
	const struct item *y = &sort_base[*(const uint32_t *)b];

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* Scopes: thread, then start, then the longer first, then file order. */
static int
cmp_scope(const void *a, const void *b)
{
	const struct item *x = &scopes[*(const uint32_t *)a];
	const struct item *y = &scopes[*(const uint32_t *)b];
	uint32_t tx = recs[x->rec].thread, ty = recs[y->rec].thread;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/* Activities: thread, then start, then file order. */
static int
cmp_thread(const void *a, const void *b)
{
	const struct item *x = &acts[*(const uint32_t *)a];
	const struct item *y = &acts[*(const uint32_t *)b];
	uint32_t tx = recs[x->rec].thread, ty = recs[y->rec].thread;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

static void
add_item(struct item **v, size_t *n, size_t *cap, uint32_t rec)
{
	struct item *x;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		if ((*v = realloc(*v, *cap * sizeof(**v))) == NULL)
			nomem();
	}
	x = &(*v)[(*n)++];
	x->ts = recs[rec].ts;
	x->end = recs[rec].ts + recs[rec].dur;
	x->rec = rec;
	x->lane = 0;
	x->unit = 0;
}

/* The device of pid p, made on first sight. */
static struct dev *
dev_of(uint32_t p)
{
	struct pidi *pi = &pidis[p];

	if (pi->dev == NONE) {
		if ((devs = realloc(devs, (ndevs + 1) * sizeof(*devs))) == NULL)
			nomem();
		memset(&devs[ndevs], 0, sizeof(*devs));
		devs[ndevs].pid = p;
		pi->dev = (uint32_t)ndevs++;
	}
	return &devs[pi->dev];
}

/* Which events move: activities and scopes of the GPU stream rows. */
static void
select_items(void)
{
	size_t i;

	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		struct thr *t = &thrs[r->thread];

		if (r->ph != 'X' || !r->hasts || !stream_row(t) ||
		    cpu_kind(r->kind))
			continue;
		dev_of(t->pid);
		if (r->kind == KT_GPU_USER_ANNOTATION) {
			r->role = R_SCOPE;
			r->aux = (uint32_t)nscopes;
			add_item(&scopes, &nscopes, &capscopes, (uint32_t)i);
		} else {
			r->role = R_ACT;
			r->aux = (uint32_t)nacts;
			t->nacts++;
			add_item(&acts, &nacts, &capacts, (uint32_t)i);
			acts[nacts - 1].unit = pidis[t->pid].dev;
		}
	}
}

/* Refuse a device that needs more than --max-gpu-lanes lanes. */
static int
too_many(const struct dev *d, int total)
{
	char lbl[200], streams[400], when[40], groups[160] = "";

	if (total <= o.max_lanes)
		return 0;
	if (o.group)
		snprintf(groups, sizeof(groups), " (compute %d, communication "
		    "%d, copies %d)", d->glanes[G_COMPUTE], d->glanes[G_COMM],
		    d->glanes[G_COPY]);
	stream_list(d->peak_items, d->npeak, streams, sizeof(streams));
	kt_time_format(d->peak_ts, 0, when);
	kt_cli_warn("%s: %s needs %d GPU lanes%s, more than --max-gpu-lanes "
	    "%lld: %d activities run at once at ts %s, on streams %s",
	    inname, dev_label(d, lbl, sizeof(lbl)), total, groups,
	    o.max_lanes, d->peak, when, streams);
	return 1;
}

/*
 * Sort idx[0..n) (items of it, in file order) by start, equal starts in
 * file order: a stable radix sort.
 */
static void
sort_by_start(const struct item *it, uint32_t *idx, size_t n)
{
	struct kt_pair *pr;
	int64_t lo = INT64_MAX;
	size_t i;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		if (it[idx[i]].ts < lo)
			lo = it[idx[i]].ts;
	if ((pr = malloc(n * sizeof(*pr))) == NULL)
		nomem();
	for (i = 0; i < n; i++) {
		pr[i].key = (uint64_t)it[idx[i]].ts - (uint64_t)lo;
		pr[i].val = idx[i];
	}
	if (kt_sort_pairs(pr, n) == -1)
		nomem();
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)pr[i].val;
	free(pr);
}

/* Give every activity of every device its lane. */
static void
place_acts(void)
{
	uint32_t *idx, *byg;
	size_t i, k;
	int refuse = 0;

	if ((idx = malloc((nacts + 1) * sizeof(*idx))) == NULL ||
	    (byg = malloc((nacts + 1) * sizeof(*byg))) == NULL)
		nomem();
	/* Per device, by start: counting sort by device, then qsort. */
	for (i = 0; i < nacts; i++)
		devs[acts[i].unit].nacts++;
	for (i = k = 0; i < ndevs; i++) {
		devs[i].acts = idx + k;
		k += devs[i].nacts;
		devs[i].nacts = 0;
	}
	for (i = 0; i < nacts; i++) {
		struct dev *d = &devs[acts[i].unit];

		d->acts[d->nacts++] = (uint32_t)i;
	}
	sort_base = acts;
	for (i = 0; i < ndevs; i++) {
		struct dev *d = &devs[i];
		size_t j, n;
		int g, total = 0;
		uint32_t *seen;

		sort_by_start(acts, d->acts, d->nacts);
		d->peak = partition(acts, d->acts, d->nacts, 0, &d->peak_ts,
		    &d->peak_items, &d->npeak);
		if (o.group) {
			for (g = 0; g < G_N; g++) {
				int64_t pts;

				for (j = n = 0; j < d->nacts; j++)
					if (recs[acts[d->acts[j]].rec].grp == g)
						byg[n++] = d->acts[j];
				d->gbase[g] = total;
				d->glanes[g] = partition(acts, byg, n,
				    (uint32_t)total, &pts, NULL, NULL);
				total += d->glanes[g];
			}
		} else
			total = d->peak;
		d->lanes = total;
		refuse |= too_many(d, total);
		/* The stream rows the activities came from. */
		if ((seen = calloc(nthrs + 1, sizeof(*seen))) == NULL)
			nomem();
		for (j = 0; j < d->nacts; j++) {
			uint32_t t = recs[acts[d->acts[j]].rec].thread;

			if (!seen[t]++)
				d->streams++;
		}
		free(seen);
	}
	free(byg);
	if (refuse)
		kt_cli_die(NULL);
}

/* Nesting groups of scopes per source row, then rows for the groups. */
static void
place_scopes(void)
{
	uint32_t *idx, *stack, *uidx;
	struct item *u;
	size_t i, j, nu = 0, sp = 0;

	if (nscopes == 0)
		return;
	if ((idx = malloc(nscopes * sizeof(*idx))) == NULL ||
	    (stack = malloc(nscopes * sizeof(*stack))) == NULL ||
	    (u = malloc(nscopes * sizeof(*u))) == NULL ||
	    (uidx = malloc(nscopes * sizeof(*uidx))) == NULL)
		nomem();
	for (i = 0; i < nscopes; i++)
		idx[i] = (uint32_t)i;
	qsort(idx, nscopes, sizeof(*idx), cmp_scope);
	for (i = 0; i < nscopes; i++) {
		struct item *x = &scopes[idx[i]];

		if (i > 0 && recs[x->rec].thread !=
		    recs[scopes[idx[i - 1]].rec].thread)
			sp = 0;
		while (sp > 0 && scopes[stack[sp - 1]].end <= x->ts)
			sp--;
		if (sp > 0 && x->end > scopes[stack[sp - 1]].end)
			sp = 0;		/* a partial overlap: a new group */
		if (sp == 0) {
			u[nu].ts = x->ts;
			u[nu].end = x->end;
			u[nu].rec = x->rec;
			u[nu].lane = 0;
			u[nu].unit = pidis[thrs[recs[x->rec].thread].pid].dev;
			nu++;
		}
		x->unit = (uint32_t)(nu - 1);
		stack[sp++] = idx[i];
	}
	/* Rows per device, by the groups' starts. */
	for (j = 0; j < ndevs; j++) {
		struct dev *d = &devs[j];
		size_t n = 0;
		int64_t pts;

		for (i = 0; i < nu; i++)
			if (u[i].unit == j)
				uidx[n++] = (uint32_t)i;
		sort_base = u;
		qsort(uidx, n, sizeof(*uidx), cmp_start);
		d->scope_rows = partition(u, uidx, n, 0, &pts, NULL, NULL);
		d->nscopes = 0;
	}
	for (i = 0; i < nscopes; i++) {
		scopes[i].lane = u[scopes[i].unit].lane;
		devs[pidis[thrs[recs[scopes[i].rec].thread].pid].dev].nscopes++;
	}
	free(idx);
	free(stack);
	free(u);
	free(uidx);
}

/* Bind every flow event of a moved row to the activity it belongs to. */
static void
bind_flows(void)
{
	uint32_t *byt = NULL;
	size_t i;
	int bad = 0;

	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		struct thr *t = &thrs[r->thread];
		struct pidi *p = &pidis[t->pid];
		size_t lo, hi;
		uint32_t a = NONE;

		/* Flows of rows without activities stay where they are. */
		if (r->kind != KT_FLOW || p->dev == NONE || !stream_row(t) ||
		    t->nacts == 0)
			continue;
		if (r->aux != NONE && recs[r->aux].role == R_ACT) {
			r->role = R_FLOW;
			continue;
		}
		if (!r->hasts)
			goto unbound;
		if (byt == NULL) {
			if ((byt = malloc((nacts + 1) * sizeof(*byt))) == NULL)
				nomem();
			for (lo = 0; lo < nacts; lo++)
				byt[lo] = (uint32_t)lo;
			qsort(byt, nacts, sizeof(*byt), cmp_thread);
		}
		/* The first activity of the row with start > ts. */
		lo = 0;
		hi = nacts;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct item *x = &acts[byt[mid]];
			uint32_t tx = recs[x->rec].thread;

			if (tx < r->thread || (tx == r->thread &&
			    x->ts <= r->ts))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (r->ph == 'f' && !r->bp_e) {
			/* The next slice that begins at or after ts. */
			size_t k = lo;

			while (k > 0 && recs[acts[byt[k - 1]].rec].thread ==
			    r->thread && acts[byt[k - 1]].ts == r->ts)
				k--;
			if (k < nacts && recs[acts[byt[k]].rec].thread ==
			    r->thread)
				a = byt[k];
			if (a != NONE && acts[a].ts != r->ts) {
				/* Another slice of its lane must not begin
				 * in between. */
				struct dev *d = &devs[p->dev];
				size_t m;

				for (m = 0; m < d->nacts; m++) {
					const struct item *y =
					    &acts[d->acts[m]];

					if (d->acts[m] != a &&
					    y->lane == acts[a].lane &&
					    y->ts >= r->ts &&
					    y->ts <= acts[a].ts) {
						a = NONE;
						break;
					}
				}
			}
		} else if (lo > 0 && recs[acts[byt[lo - 1]].rec].thread ==
		    r->thread) {
			/* The enclosing slice: the latest start <= ts. */
			size_t k = lo;

			while (k > 0 && recs[acts[byt[k - 1]].rec].thread ==
			    r->thread && lo - k < 64) {
				if (acts[byt[k - 1]].end >= r->ts) {
					a = byt[k - 1];
					break;
				}
				k--;
			}
		}
		if (a != NONE) {
			r->aux = acts[a].rec;
			r->role = R_FLOW;
			continue;
		}
unbound:
		if (bad++ < 5) {
			size_t pn, tn;
			const char *ps = pid_text(t->pid, &pn);
			const char *ts = tid_text(r->thread, &tn);
			char when[40] = "?";

			if (r->hasts)
				kt_time_format(r->ts, 0, when);
			kt_cli_warn("%s: flow:%llu (ph '%c') at ts %s on pid "
			    "%.*s tid %.*s belongs to no GPU activity of its "
			    "row; refusing to move the row without it", inname,
			    (unsigned long long)r->index, r->ph ? r->ph : '?',
			    when, (int)pn, ps, (int)tn, ts);
		}
	}
	free(byt);
	if (bad > 0) {
		if (bad > 5)
			kt_cli_warn("%s: %d flow ends in all cannot be matched",
			    inname, bad);
		kt_cli_die(NULL);
	}
}

/* Rows left empty lose their thread_name and thread_sort_index. */
static uint64_t
retire(void)
{
	size_t i;
	uint64_t n = 0;

	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];

		if (r->ph == 'M')
			continue;
		if (r->role == R_KEEP)
			thrs[r->thread].kept++;
		else
			thrs[r->thread].moved++;
	}
	for (i = 0; i < nthrs; i++)
		if (thrs[i].moved > 0 && thrs[i].kept == 0) {
			thrs[i].retired = 1;
			devs[pidis[thrs[i].pid].dev].retired_rows++;
		}
	for (i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];

		if ((r->mk == MK_THREAD_NAME || r->mk == MK_THREAD_SORT) &&
		    thrs[r->thread].retired) {
			r->role = R_RETIRE;
			n++;
		}
		if (r->role == R_FLOW)
			devs[pidis[thrs[r->thread].pid].dev].moved_flows++;
	}
	return n;
}

/* The scopes pid of every device; refuse one that is taken. */
static void
scope_pids(void)
{
	size_t i;

	for (i = 0; i < ndevs; i++) {
		struct dev *d = &devs[i];
		size_t n;
		const char *p = pid_text(d->pid, &n);
		int64_t v;

		if (int_text(p, n, &v) && v >= 0 && v < SCOPE_PID_BASE)
			snprintf(d->scope_pid, sizeof(d->scope_pid), "%lld",
			    (long long)(SCOPE_PID_BASE + v));
		else if (p[0] == '"' && n < 60)
			snprintf(d->scope_pid, sizeof(d->scope_pid),
			    "\"%.*s scopes\"", (int)n - 2, p + 1);
		else
			snprintf(d->scope_pid, sizeof(d->scope_pid),
			    "\"GPU scopes %zu\"", i);
		if (d->nscopes > 0 && kt_intern_find(pids, d->scope_pid,
		    strlen(d->scope_pid)) != -1) {
			kt_cli_warn("%s: pid %s for the GPU scopes of pid %.*s "
			    "is taken", inname, d->scope_pid, (int)n, p);
			kt_cli_die(NULL);
		}
	}
	/* A lane's tid must be free on its pid. */
	for (i = 0; i < nthrs; i++) {
		size_t n;
		const char *s = tid_text((uint32_t)i, &n);
		int64_t v;
		struct pidi *p = &pidis[thrs[i].pid];

		if (p->dev != NONE && !p->compact && int_text(s, n, &v) &&
		    v > LANE_TID_BASE && v <= LANE_TID_BASE +
		    devs[p->dev].lanes) {
			kt_cli_warn("%s: tid %lld of a GPU lane is taken",
			    inname, (long long)v);
			kt_cli_die(NULL);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Writing. */

/* The events added: lane and scope row metadata, each marked. */
static struct kt_buf added;
static size_t nadded;

static void
add_meta(const char *pid, size_t pn, int64_t tid, const char *what,
    const char *name, int64_t sort, const struct pidi *pi)
{
	static struct kt_buf args;
	struct kt_buf *b = &added;

	args.n = 0;
	if (kt_obj_begin(&args) == -1 ||
	    kt_obj_int(&args, ADDED_KEY, 1) == -1 ||
	    (name != NULL ? kt_obj_str(&args, "name", name) :
	    kt_obj_int(&args, "sort_index", sort)) == -1 ||
	    (pi->rank != NULL &&
	    kt_obj_raw(&args, "rank", pi->rank, pi->ranklen) == -1) ||
	    kt_obj_end(&args) == -1 ||
	    kt_obj_begin(b) == -1 || kt_obj_str(b, "name", what) == -1 ||
	    kt_obj_str(b, "ph", "M") == -1 ||
	    kt_obj_raw(b, "pid", pid, pn) == -1 ||
	    kt_obj_int(b, "tid", tid) == -1 ||
	    kt_obj_raw(b, "args", args.p, args.n) == -1 ||
	    kt_obj_end(b) == -1 || kt_buf_addc(b, '\n') == -1)
		nomem();
	nadded++;
}

/* Build the added events: per device its lanes, then its scope rows. */
static void
make_added(void)
{
	size_t i;
	int k, g;
	char name[120];

	for (i = 0; i < ndevs; i++) {
		struct dev *d = &devs[i];
		struct pidi *pi = &pidis[d->pid];
		size_t pn;
		const char *p = pid_text(d->pid, &pn);

		for (k = 0; k < d->lanes; k++) {
			const char *label = NULL;

			if (o.group)
				for (g = 0; g < G_N; g++)
					if (k >= d->gbase[g] &&
					    k < d->gbase[g] + d->glanes[g])
						label = grpnames[g];
			if (label != NULL)
				snprintf(name, sizeof(name), "GPU lane %d "
				    "(synthetic; %s)", k + 1, label);
			else
				snprintf(name, sizeof(name), "GPU lane %d "
				    "(synthetic)", k + 1);
			add_meta(p, pn, LANE_TID_BASE + k + 1, "thread_name",
			    name, 0, pi);
			add_meta(p, pn, LANE_TID_BASE + k + 1,
			    "thread_sort_index", NULL, k + 1, pi);
		}
		if (d->nscopes == 0)
			continue;
		p = d->scope_pid;
		pn = strlen(p);
		add_meta(p, pn, 0, "process_name", "GPU scopes", 0, pi);
		{
			int64_t si, v;
			size_t dn;
			const char *dp = pid_text(d->pid, &dn);

			si = pi->has_sort ? pi->sort : int_text(dp, dn, &v) ?
			    v : 0;
			add_meta(p, pn, 0, "process_sort_index", NULL, si, pi);
		}
		for (k = 0; k < d->scope_rows; k++) {
			snprintf(name, sizeof(name), "GPU scopes %d", k + 1);
			add_meta(p, pn, k + 1, "thread_name", name, 0, pi);
			add_meta(p, pn, k + 1, "thread_sort_index", NULL, k + 1,
			    pi);
		}
	}
}

/*
 * The text of args._compact_gpu_track of ev, row index, into buf (1100
 * bytes or more).
 */
static size_t
track_text(const struct kt_event *ev, uint64_t index, char *buf)
{
	char *p = buf;
	const struct kt_val *pid = &ev->f[KT_F_PID], *tid = &ev->f[KT_F_TID];

#define PUT(s, n)	do { memcpy(p, (s), (n)); p += (n); } while (0)
	PUT("{\"pid\": ", 8);
	PUT(ev->raw + pid->off, pid->len);
	PUT(", \"tid\": ", 9);
	PUT(ev->raw + tid->off, tid->len);
	PUT(", \"index\": ", 11);
	p += kt_int_format((int64_t)index, p);
	if (ev->f[KT_F_ARGS].type == KT_NONE)
		PUT(", \"args\": \"absent\"", 18);
	else if (ev->f[KT_F_ARGS].type == KT_NULL)
		PUT(", \"args\": \"null\"", 16);
	PUT("}", 1);
#undef PUT
	return (size_t)(p - buf);
}

/* Held event i as an event with the fields patching needs. */
static void
held_event(size_t i, struct kt_event *ev)
{
	const struct held *h = &helds[i];

	memset(ev, 0, sizeof(*ev));
	ev->raw = h->raw;
	ev->len = h->len;
	ev->index = recs[i].index;
	ev->f[KT_F_PID].off = h->pid.off;
	ev->f[KT_F_PID].len = h->pid.len;
	ev->f[KT_F_PID].type = h->pid.len ? KT_NUMBER : KT_NONE;
	ev->f[KT_F_TID].off = h->tid.off;
	ev->f[KT_F_TID].len = h->tid.len;
	ev->f[KT_F_TID].type = h->tid.len ? KT_NUMBER : KT_NONE;
	ev->f[KT_F_ARGS].off = h->args.off;
	ev->f[KT_F_ARGS].len = h->args.len;
	ev->f[KT_F_ARGS].type = h->argtype;
}

/* Write moved event ev (record r) on its lane or scope row. */
static int
put_moved(struct kt_writer *w, const struct rec *r, const struct kt_event *ev,
    struct kt_patch *p, struct kt_buf *out)
{
	struct kt_event ne;
	const struct rec *a = r->role == R_FLOW ? &recs[r->aux] : r;
	const struct dev *d = &devs[pidis[thrs[r->thread].pid].dev];
	char track[1200], tid[32];
	size_t tn, kn;
	int rc = 0;

	if (ev->f[KT_F_PID].len > 500 || ev->f[KT_F_TID].len > 500) {
		kt_cli_warn("%s: row %llu: a pid or tid of over 500 bytes",
		    inname, (unsigned long long)r->index);
		kt_cli_die(NULL);
	}
	kt_patch_reset(p, ev);
	kn = track_text(ev, r->index, track);
	if (a->role == R_SCOPE) {
		tn = kt_int_format(scopes[a->aux].lane + 1, tid);
		rc |= kt_patch_set(p, KT_F_PID, d->scope_pid,
		    strlen(d->scope_pid));
	} else
		tn = kt_int_format(LANE_TID_BASE + acts[a->aux].lane + 1, tid);
	rc |= kt_patch_set(p, KT_F_TID, tid, tn);
	rc |= kt_patch_arg_add(p, TRACK_KEY, track, kn);
	out->n = 0;
	if (rc != 0 || kt_patch_apply(p, out) == -1) {
		kt_cli_warn("%s: row %llu: cannot move the event", inname,
		    (unsigned long long)r->index);
		kt_cli_die(NULL);
	}
	memset(&ne, 0, sizeof(ne));
	ne.raw = out->p;
	ne.len = out->n;
	ne.index = r->index;
	return kt_writer_event(w, &ne);
}

/* The retired events, kept for the report as they are left out. */
struct retired {
	uint64_t	 position;
	uint64_t	 row;
	const char	*text;
	size_t		 len;
};

static struct retired *rets;
static size_t nrets;

static void
keep_retired(const struct rec *r, const struct kt_event *ev, size_t pos)
{
	struct retired *x;

	if ((rets = realloc(rets, (nrets + 1) * sizeof(*rets))) == NULL)
		nomem();
	x = &rets[nrets++];
	x->position = pos;
	x->row = r->index;
	x->len = ev->len;
	if ((x->text = kt_arena_copy(arena, ev->raw, ev->len)) == NULL)
		nomem();
}

/* Write the added events (index: their first row number). */
static int
put_added(struct kt_writer *w, uint64_t index)
{
	size_t at = 0;
	int rc = 0;

	while (at < added.n && rc == 0) {
		const char *nl = memchr(added.p + at, '\n', added.n - at);
		struct kt_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.raw = added.p + at;
		ev.len = (size_t)(nl - (added.p + at));
		ev.index = index++;
		rc = kt_writer_event(w, &ev);
		at = (size_t)(nl - added.p) + 1;
	}
	return rc;
}

/* Where the added events go: at the first retired one, else the first
 * metadata event, else the start. */
static size_t
added_at(void)
{
	size_t i;

	for (i = 0; i < nrecs; i++)
		if (recs[i].role == R_RETIRE)
			return i;
	for (i = 0; i < nrecs; i++)
		if (recs[i].ph == 'M')
			return i;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The report. */

/* A raw JSON text as a jansson value (a string when it does not load). */
static json_t *
raw_json(const char *p, size_t n)
{
	json_t *j = json_loadb(p, n, JSON_DECODE_ANY, NULL);

	return j != NULL ? j : json_stringn(p, n);
}

static json_t *
report_json(uint64_t nretired, uint64_t nout, const char *outname)
{
	json_t *rep = json_object(), *dv = json_array(), *ret = json_array();
	uint64_t moved = 0, flows = 0, nsc = 0;
	size_t i;
	const uint64_t *si;
	size_t nsi;
	int applied;

	for (i = 0; i < nrecs; i++) {
		const struct rec *r = &recs[i];

		if (r->role == R_ACT)
			moved++;
		else if (r->role == R_FLOW)
			flows++;
		else if (r->role == R_SCOPE)
			nsc++;
	}
	for (i = 0; i < nrets; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "position", json_integer(
		    (json_int_t)rets[i].position));
		json_object_set_new(e, "row", json_integer(
		    (json_int_t)rets[i].row));
		json_object_set_new(e, "event", json_stringn_nocheck(
		    rets[i].text, rets[i].len));
		json_array_append_new(ret, e);
	}
	for (i = 0; i < ndevs; i++) {
		const struct dev *d = &devs[i];
		const struct pidi *pi = &pidis[d->pid];
		json_t *e = json_object(), *rows = json_array(),
		    *ps = json_array(), *gl;
		size_t n, j;
		const char *p = pid_text(d->pid, &n);
		char when[40];
		int g;

		json_object_set_new(e, "pid", raw_json(p, n));
		if (pi->rank != NULL)
			json_object_set_new(e, "rank", raw_json(pi->rank,
			    pi->ranklen));
		json_object_set_new(e, "streams", json_integer(d->streams));
		json_object_set_new(e, "activities", json_integer(
		    (json_int_t)d->nacts));
		json_object_set_new(e, "flowEnds", json_integer(
		    (json_int_t)d->moved_flows));
		json_object_set_new(e, "peak", json_integer(d->peak));
		json_object_set_new(e, "peakTsNs", json_integer(d->peak_ts));
		kt_time_format(d->peak_ts, 0, when);
		json_object_set_new(e, "peakTs", json_string(when));
		for (j = 0; j < (size_t)d->npeak; j++) {
			const char *t;
			size_t tn;

			t = tid_text(recs[acts[d->peak_items[j]].rec].thread,
			    &tn);
			json_array_append_new(ps, raw_json(t, tn));
		}
		json_object_set_new(e, "peakStreams", ps);
		json_object_set_new(e, "lanes", json_integer(d->lanes));
		if (o.group) {
			gl = json_object();
			for (g = 0; g < G_N; g++)
				json_object_set_new(gl, grpnames[g],
				    json_integer(d->glanes[g]));
			json_object_set_new(e, "laneGroups", gl);
		}
		json_object_set_new(e, "laneTids", json_pack("[I,I]",
		    (json_int_t)(LANE_TID_BASE + 1),
		    (json_int_t)(LANE_TID_BASE + d->lanes)));
		json_object_set_new(e, "scopes", json_integer(
		    (json_int_t)d->nscopes));
		if (d->nscopes > 0) {
			json_object_set_new(e, "scopesPid", raw_json(
			    d->scope_pid, strlen(d->scope_pid)));
			json_object_set_new(e, "scopeRows", json_integer(
			    d->scope_rows));
		}
		for (j = 0; j < nthrs; j++) {
			const struct thr *t = &thrs[j];
			json_t *row;
			const char *s;
			size_t sn;

			if (t->pid != d->pid || !t->retired)
				continue;
			row = json_object();
			s = tid_text((uint32_t)j, &sn);
			json_object_set_new(row, "tid", raw_json(s, sn));
			if (t->name != NULL)
				json_object_set_new(row, "name", raw_json(
				    t->name, t->namelen));
			json_array_append_new(rows, row);
		}
		json_object_set_new(e, "retiredRows", rows);
		json_array_append_new(dv, e);
	}
	json_object_set_new(rep, "tool", json_string("kt-compact-lanes"));
	json_object_set_new(rep, "version", json_string(KT_VERSION));
	json_object_set_new(rep, "reportVersion", json_integer(REPORT_VERSION));
	json_object_set_new(rep, "input", json_string(inname));
	json_object_set_new(rep, "inputSha256", json_string(sha));
	json_object_set_new(rep, "output", json_string(outname));
	json_object_set_new(rep, "maxGpuLanes", json_integer(o.max_lanes));
	json_object_set_new(rep, "group", json_boolean(o.group));
	json_object_set_new(rep, "alreadyCompact", json_boolean(already));
	json_object_set_new(rep, "devices", dv);
	json_object_set_new(rep, "events", json_pack("{s:I,s:I,s:I,s:I,s:I,"
	    "s:I,s:I}", "input", (json_int_t)nrecs, "output", (json_int_t)nout,
	    "activitiesMoved", (json_int_t)moved, "flowEndsMoved",
	    (json_int_t)flows, "scopesMoved", (json_int_t)nsc, "retired",
	    (json_int_t)nretired, "added", (json_int_t)nadded));
	si = kt_reader_srcindex(rd, &nsi, &applied);
	json_object_set_new(rep, "restore", json_pack("{s:s,s:s,s:s,s:I,s:s}",
	    "how", "kt compact-lanes --restore: drop the events whose args "
	    "begin with " ADDED_KEY "; put back pid and tid from args."
	    TRACK_KEY " and remove it (args \"absent\" or \"null\": as it "
	    "was); insert the retired events at their positions",
	    "trackKey", TRACK_KEY, "addedKey", ADDED_KEY, "sourceEvents",
	    (json_int_t)nrecs, "sourceIndex", si == NULL ? "none" :
	    applied ? "before" : "after"));
	json_object_set_new(rep, "retired", ret);
	return rep;
}

/* Write the report to path atomically. */
static struct kt_out *
open_report(const char *path, json_t *rep)
{
	struct kt_error err;
	struct kt_out *ro;
	char *s;

	if ((s = json_dumps(rep, JSON_INDENT(2) | JSON_PRESERVE_ORDER)) ==
	    NULL)
		nomem();
	ro = kt_cli_out_open(path, -1);
	if (kt_out_write(ro, s, strlen(s)) == -1 ||
	    kt_out_write(ro, "\n", 1) == -1) {
		kt_error_set(&err, path, 0, 0, "write error");
		kt_cli_out_commit(ro, 1, &err);
	}
	free(s);
	return ro;
}

/* ------------------------------------------------------------------ */

/*
 * The input's SHA-256 (of the file's bytes as given), in a thread of its
 * own while the events are read: hash_start(), then hash_wait().
 */
static pthread_t hasher;
static const char *hashpath;
static struct kt_error hasherr;
static int hashrc, hashing;

static void *
hash_run(void *arg)
{
	(void)arg;
	hashrc = kt_hold_sha256(holder, hashpath, sha, &hasherr);
	return NULL;
}

static void
hash_start(const char *path)
{
	hashpath = path;
	if (pthread_create(&hasher, NULL, hash_run, NULL) == 0)
		hashing = 1;
	else
		hash_run(NULL);
}

static void
hash_wait(void)
{
	if (hashing)
		pthread_join(hasher, NULL);
	hashing = 0;
	if (hashrc == -1)
		kt_cli_die(&hasherr);
}

/* The top-level keys to write: the input's, and ktCompactLanes. */
static struct kt_meta *
out_metas(size_t *n, struct kt_buf *top, uint64_t nretired,
    const char *report)
{
	const struct kt_meta *m = kt_reader_metas(rd, n);
	struct kt_meta *om;
	size_t i;

	if ((om = calloc(*n + 1, sizeof(*om))) == NULL)
		nomem();
	for (i = 0; i < *n; i++)
		om[i] = m[i];
	if (already)
		return om;
	kt_obj_begin(top);
	kt_obj_int(top, "version", REPORT_VERSION);
	if (sha[0] != '\0')
		kt_obj_str(top, "inputSha256", sha);
	if (report != NULL)
		kt_obj_str(top, "report", report);
	kt_obj_int(top, "devices", (int64_t)ndevs);
	kt_obj_int(top, "retired", (int64_t)nretired);
	kt_obj_int(top, "added", (int64_t)nadded);
	kt_obj_end(top);
	om[*n].key = (char *)"\"" TOP_KEY "\"";
	om[*n].keylen = strlen(om[*n].key);
	om[*n].val = top->p;
	om[*n].vallen = top->n;
	om[*n].after = 1;
	(*n)++;
	return om;
}

static int
compact(struct kt_source *src, const char *inpath)
{
	struct kt_error err;
	struct kt_out *out, *ro = NULL;
	struct kt_writer *w;
	struct kt_meta *metas;
	struct kt_buf top = KT_BUF_INIT, pb = KT_BUF_INIT;
	struct kt_patch p;
	uint64_t nretired = 0, *srcindex, next = 0;
	size_t i, nm, at, nout = 0;
	int rc = 0, identity = 1, si_at_end = 0;
	char rpath[4200];
	const char *report = o.report;
	json_t *rep;

	read_all();
	hash_wait();
	kt_cli_one_trace(src, inname, "holds several traces; pick one with "
	    "--member or merge them with kt rank-tag", 1);
	if (kt_reader_meta_find(rd, TOP_KEY) != NULL)
		already = 1;
	for (i = 0; i < npidis; i++)
		if (pidis[i].compact)
			already = 1;
	if (!already) {
		select_items();
		place_acts();
		place_scopes();
		bind_flows();
		nretired = retire();
		scope_pids();
		make_added();
	}
	if (report == NULL && kt_cli_report_beside(o.co.output,
	    ".compact.json", rpath, sizeof(rpath)))
		report = rpath;
	if (report != NULL) {
		char *const outs[] = { (char *)(o.co.output ? o.co.output : "-"),
		    (char *)inpath };

		if ((o.co.output != NULL && strcmp(report, o.co.output) == 0) ||
		    kt_cli_check_output(report, outs, 2) == -1) {
			kt_cli_warn("%s: the report cannot be the output "
			    "or the input", report);
			kt_cli_die(NULL);
		}
	}
	/* Row numbers in output order. */
	at = added_at();
	for (i = 0; i < nrecs; i++)
		if (recs[i].index >= next)
			next = recs[i].index + 1;
	if ((srcindex = malloc((nrecs + nadded + 1) * sizeof(*srcindex))) ==
	    NULL)
		nomem();
	for (i = 0; i <= nrecs; i++) {
		size_t j;

		if (i == at && nadded > 0)
			for (j = 0; j < nadded; j++)
				srcindex[nout++] = next + j;
		if (i == nrecs)
			break;
		if (recs[i].role != R_RETIRE)
			srcindex[nout++] = recs[i].index;
	}
	for (i = 0; i < nout && identity; i++)
		identity = srcindex[i] == i;
	if (already) {
		/* Unchanged: ktSourceIndex goes where it was. */
		const uint64_t *si;
		size_t nsi;

		if ((si = kt_reader_srcindex(rd, &nsi, &si_at_end)) != NULL)
			si_at_end = !si_at_end;
	}
	out = kt_cli_out_open(o.co.output, o.co.level);
	if ((w = kt_writer_new(out, 0)) == NULL)
		nomem();
	metas = out_metas(&nm, &top, nretired, report);
	if (kt_writer_begin(w, metas, nm, identity || si_at_end ? NULL :
	    srcindex, nout) == -1)
		rc = -1;
	/* Out, in order, from memory. */
	kt_patch_init(&p, NULL);
	for (i = 0; rc == 0; i++) {
		const struct rec *r;
		struct kt_event ev;

		if (i == at && nadded > 0)
			rc = put_added(w, next);
		if (rc != 0 || i == nrecs)
			break;
		r = &recs[i];
		held_event(i, &ev);
		switch (r->role) {
		case R_RETIRE:
			keep_retired(r, &ev, i);
			continue;
		case R_ACT:
		case R_SCOPE:
		case R_FLOW:
			rc = put_moved(w, r, &ev, &p, &pb);
			break;
		default:
			rc = kt_writer_event(w, &ev);
		}
	}
	kt_cli_progress_done();
	if (rc == 0)
		rc = kt_writer_end_index(w, metas, nm, identity || !si_at_end ?
		    NULL : srcindex, nout);
	if (rc == 0 && report != NULL) {
		rep = report_json(nretired, nout, o.co.output ? o.co.output :
		    "<stdout>");
		ro = open_report(report, rep);
		json_decref(rep);
	}
	/* Both or neither: a failure removes the report too. */
	kt_error_set(&err, o.co.output ? o.co.output : "<stdout>", 0, 0,
	    "write error");
	kt_cli_out_commit(out, rc == -1, &err);
	if (ro != NULL)
		kt_cli_out_commit(ro, 0, &err);
	kt_cli_report_repairs(inname, kt_reader_repairs(rd));
	if (already)
		kt_cli_warn("%s: already a compact view: written unchanged",
		    inname);
	for (i = 0; i < ndevs; i++) {
		const struct dev *d = &devs[i];
		char lbl[200], when[40];

		kt_time_format(d->peak_ts, 0, when);
		kt_cli_warn("%s: %s: %d stream row%s onto %d GPU lane%s (peak "
		    "%d at ts %s), %zu scope%s on %d row%s, %llu row%s "
		    "retired", inname, dev_label(d, lbl, sizeof(lbl)),
		    d->streams, d->streams == 1 ? "" : "s", d->lanes,
		    d->lanes == 1 ? "" : "s", d->peak, when, d->nscopes,
		    d->nscopes == 1 ? "" : "s", d->scope_rows,
		    d->scope_rows == 1 ? "" : "s",
		    (unsigned long long)d->retired_rows,
		    d->retired_rows == 1 ? "" : "s");
	}
	if (report == NULL && nretired > 0)
		kt_cli_warn("%s: no report (--report FILE): the %llu retired "
		    "metadata events are needed to restore the source", inname,
		    (unsigned long long)nretired);
	kt_patch_free(&p);
	kt_buf_free(&pb);
	kt_buf_free(&top);
	kt_writer_free(w);
	free(metas);
	free(srcindex);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Restore. */

/* The raw text of member key of object value obj of ev, or -1. */
static int
member(const struct kt_event *ev, const struct kt_val *obj, const char *key,
    struct kt_val *v)
{
	return kt_event_find(ev, obj, key, v);
}

/*
 * Put back the source text of moved event ev (compact view) into out,
 * then check that moving it again gives ev's bytes.  0 or -1.
 */
static int
unpatch(const struct kt_event *ev, struct kt_buf *out, struct kt_buf *chk)
{
	struct kt_val args = ev->f[KT_F_ARGS], tv, pv, iv, av;
	struct {
		size_t off, del;
		const char *ins;
		size_t inslen;
	} e[3], t;
	const char *raw = ev->raw;
	size_t end, at = 0;
	int ne = 0, i, j, form = 0;	/* 0 plain, 1 absent, 2 null */
	struct kt_event src;
	struct kt_patch p;
	int rc;

	if (member(ev, &args, TRACK_KEY, &tv) == -1 || tv.type != KT_OBJECT ||
	    member(ev, &tv, "pid", &pv) == -1 ||
	    member(ev, &tv, "tid", &iv) == -1)
		return -1;
	if (member(ev, &tv, "args", &av) == 0) {
		if (av.len == 8 && memcmp(raw + av.off, "\"absent\"", 8) == 0)
			form = 1;
		else if (av.len == 6 && memcmp(raw + av.off, "\"null\"", 6) ==
		    0)
			form = 2;
		else
			return -1;
	}
	end = tv.off + tv.len;
	if (raw[args.off + 1] != '"' || args.off + 1 + 22 != tv.off)
		return -1;
	if (form == 0) {
		e[ne].off = args.off + 1;
		e[ne].del = end - e[ne].off;
		if (end + 1 < ev->len && raw[end] == ',' && raw[end + 1] == ' ')
			e[ne].del += 2;
		e[ne].ins = "";
		e[ne].inslen = 0;
		ne++;
	} else {
		struct kt_val key;

		/* The args member itself was added: "args": {...}. */
		if (raw[end] != '}')
			return -1;
		if (form == 2) {
			e[ne].off = args.off;
			e[ne].del = args.len;
			e[ne].ins = "null";
			e[ne].inslen = 4;
		} else {
			/* Inserted first: {"args": {...}, ... */
			key.off = 1;
			if (args.off != 1 + 8 || memcmp(raw + 1, "\"args\": ",
			    8) != 0)
				return -1;
			e[ne].off = key.off;
			e[ne].del = args.off + args.len - key.off;
			if (args.off + args.len + 1 < ev->len &&
			    raw[args.off + args.len] == ',' &&
			    raw[args.off + args.len + 1] == ' ')
				e[ne].del += 2;
			e[ne].ins = "";
			e[ne].inslen = 0;
		}
		ne++;
	}
	e[ne].off = ev->f[KT_F_PID].off;
	e[ne].del = ev->f[KT_F_PID].len;
	e[ne].ins = raw + pv.off;
	e[ne].inslen = pv.len;
	ne++;
	e[ne].off = ev->f[KT_F_TID].off;
	e[ne].del = ev->f[KT_F_TID].len;
	e[ne].ins = raw + iv.off;
	e[ne].inslen = iv.len;
	ne++;
	for (i = 1; i < ne; i++) {
		t = e[i];
		for (j = i; j > 0 && e[j - 1].off > t.off; j--)
			e[j] = e[j - 1];
		e[j] = t;
	}
	out->n = 0;
	for (i = 0; i < ne; i++) {
		if (e[i].off < at)
			return -1;
		kt_buf_add(out, raw + at, e[i].off - at);
		kt_buf_add(out, e[i].ins, e[i].inslen);
		at = e[i].off + e[i].del;
	}
	if (kt_buf_add(out, raw + at, ev->len - at) == -1)
		nomem();
	/* The proof: moving it again gives the compact view's bytes. */
	memset(&src, 0, sizeof(src));
	if (kt_event_scan(out->p, out->n, &src, NULL) == -1)
		return -1;
	kt_patch_init(&p, &src);
	chk->n = 0;
	rc = kt_patch_set(&p, KT_F_PID, raw + ev->f[KT_F_PID].off,
	    ev->f[KT_F_PID].len) == -1 ||
	    kt_patch_set(&p, KT_F_TID, raw + ev->f[KT_F_TID].off,
	    ev->f[KT_F_TID].len) == -1 ||
	    kt_patch_arg_add(&p, TRACK_KEY, raw + tv.off, tv.len) == -1 ||
	    kt_patch_apply(&p, chk) == -1 ? -1 : 0;
	kt_patch_free(&p);
	if (rc == -1 || chk->n != ev->len || memcmp(chk->p, raw, ev->len) != 0)
		return -1;
	return 0;
}

/* Does ev's args begin with key (our marks are the first member)? */
static int
marked(const struct kt_event *ev, const char *key)
{
	size_t k = strlen(key);

	return ev->f[KT_F_ARGS].type == KT_OBJECT &&
	    ev->f[KT_F_ARGS].len > k + 3 &&
	    ev->raw[ev->f[KT_F_ARGS].off + 1] == '"' &&
	    memcmp(ev->raw + ev->f[KT_F_ARGS].off + 2, key, k) == 0 &&
	    ev->raw[ev->f[KT_F_ARGS].off + 2 + k] == '"';
}

static int
restore(struct kt_source *src, const char *path)
{
	struct kt_error err;
	struct kt_out *out;
	struct kt_writer *w;
	const struct kt_meta *top, *m;
	struct kt_meta *metas;
	struct kt_event ev;
	struct kt_reader *again;
	struct kt_buf ub = KT_BUF_INIT, chk = KT_BUF_INIT;
	struct retired *ret = NULL;
	json_t *rep = NULL, *topj, *jv;
	json_error_t je;
	size_t nret = 0, ri = 0, i, nm, k, nrows = 0;
	uint64_t pos = 0, *rows = NULL, want = 0, bad = 0;
	int rc = 0, after = 0, identity = 1, have_want = 0;
	char rpath[4200];
	const char *report = o.report;
	struct stat st;

	read_all();
	if (kt_source_next(src, &again, &err) != 0) {
		kt_cli_warn("%s: one trace at a time", inname);
		kt_cli_die(NULL);
	}
	if ((top = kt_reader_meta_find(rd, TOP_KEY)) == NULL) {
		kt_cli_warn("%s: not a compact view (no %s key)", inname,
		    TOP_KEY);
		kt_cli_die(NULL);
	}
	if ((topj = kt_meta_json(top, &err)) == NULL)
		kt_cli_die(&err);
	if (report == NULL && path != NULL && strcmp(path, "-") != 0) {
		snprintf(rpath, sizeof(rpath), "%s.compact.json", path);
		if (stat(rpath, &st) == 0)
			report = rpath;
	}
	if (report == NULL) {
		/* The report the view names, when it is there. */
		jv = json_object_get(topj, "report");
		if (json_is_string(jv) && stat(json_string_value(jv), &st) == 0)
			report = json_string_value(jv);
	}
	if (report != NULL) {
		json_t *a;

		if ((rep = json_load_file(report, 0, &je)) == NULL) {
			kt_error_set(&err, report, je.line, je.column, "%s",
			    je.text);
			kt_cli_die(&err);
		}
		jv = json_object_get(rep, "alreadyCompact");
		if (json_is_true(jv)) {
			/* The compaction wrote its input unchanged. */
			o.report = NULL;
			json_decref(rep);
			rep = NULL;
			goto identity_copy;
		}
		if (json_object_get(topj, "inputSha256") == NULL) {
			kt_cli_warn("%s: the view was written without a report",
			    inname);
			kt_cli_die(NULL);
		}
		if (!json_equal(json_object_get(rep, "inputSha256"),
		    json_object_get(topj, "inputSha256"))) {
			kt_cli_warn("%s: %s is the report of another compact "
			    "view (inputSha256 differs)", inname, report);
			kt_cli_die(NULL);
		}
		a = json_object_get(rep, "retired");
		nret = json_array_size(a);
		if ((ret = calloc(nret + 1, sizeof(*ret))) == NULL)
			nomem();
		for (i = 0; i < nret; i++) {
			json_t *e = json_array_get(a, i);
			json_t *ps = json_object_get(e, "position");
			json_t *rw = json_object_get(e, "row");
			json_t *tx = json_object_get(e, "event");

			if (!json_is_integer(ps) || !json_is_integer(rw) ||
			    !json_is_string(tx) || json_integer_value(ps) < 0 ||
			    (i > 0 && (uint64_t)json_integer_value(ps) <=
			    ret[i - 1].position)) {
				kt_cli_warn("%s: retired[%zu] is not a "
				    "position, row and event", report, i);
				kt_cli_die(NULL);
			}
			ret[i].position = (uint64_t)json_integer_value(ps);
			ret[i].row = (uint64_t)json_integer_value(rw);
			ret[i].text = json_string_value(tx);
			ret[i].len = json_string_length(tx);
		}
		jv = json_object_get(json_object_get(rep, "restore"),
		    "sourceEvents");
		if (json_is_integer(jv)) {
			want = (uint64_t)json_integer_value(jv);
			have_want = 1;
		}
		jv = json_object_get(json_object_get(rep, "restore"),
		    "sourceIndex");
		after = json_is_string(jv) && strcmp(json_string_value(jv),
		    "after") == 0;
	} else {
		jv = json_object_get(topj, "retired");
		if (json_is_integer(jv) && json_integer_value(jv) > 0) {
			kt_cli_warn("%s: %lld retired metadata events are in "
			    "the report: give it with --report", inname,
			    (long long)json_integer_value(jv));
			kt_cli_die(NULL);
		}
	}
	json_decref(topj);
	/* The source's rows: the compact view's, the retired ones'. */
	if ((rows = malloc((nrecs + nret + 1) * sizeof(*rows))) == NULL)
		nomem();
	out = kt_cli_out_open(o.co.output, o.co.level);
	if ((w = kt_writer_new(out, 0)) == NULL)
		nomem();
	m = kt_reader_metas(rd, &nm);
	if ((metas = calloc(nm + 1, sizeof(*metas))) == NULL)
		nomem();
	for (i = k = 0; i < nm; i++)
		if (&m[i] != top)
			metas[k++] = m[i];
	nm = k;
	/* First the rows, to know whether to write ktSourceIndex. */
	for (i = 0; i < nrecs; i++) {
		const struct rec *r = &recs[i];

		const struct held *h = &helds[i];

		if (h->argtype == KT_OBJECT && h->args.len > 24 &&
		    memcmp(h->raw + h->args.off, "{\"" ADDED_KEY "\"",
		    sizeof(ADDED_KEY) + 2) == 0)
			continue;
		while (ri < nret && ret[ri].position == nrows)
			rows[nrows++] = ret[ri++].row;
		rows[nrows++] = r->index;
	}
	while (ri < nret && ret[ri].position == nrows)
		rows[nrows++] = ret[ri++].row;
	if (ri < nret || (have_want && nrows != want)) {
		kt_cli_warn("%s: the report does not fit: %llu events "
		    "restored, the source had %llu", inname,
		    (unsigned long long)nrows, (unsigned long long)want);
		kt_cli_die(NULL);
	}
	for (i = 0; i < nrows && identity; i++)
		identity = rows[i] == i;
	if (kt_writer_begin(w, metas, nm, identity || after ? NULL : rows,
	    nrows) == -1)
		rc = -1;
	ri = 0;
	for (i = 0; i <= nrecs && rc == 0; i++) {
		const struct rec *r;
		const struct held *h;
		struct kt_event o2;

		while (rc == 0 && ri < nret && ret[ri].position == pos) {
			memset(&o2, 0, sizeof(o2));
			o2.raw = ret[ri].text;
			o2.len = ret[ri].len;
			o2.index = ret[ri].row;
			rc = kt_writer_event(w, &o2);
			ri++;
			pos++;
		}
		if (i == nrecs || rc != 0)
			break;
		r = &recs[i];
		h = &helds[i];
		memset(&ev, 0, sizeof(ev));
		if (h->argtype == KT_OBJECT && h->args.len > 20 &&
		    memcmp(h->raw + h->args.off, "{\"_compact_gpu_", 15) == 0) {
			if (kt_event_scan(h->raw, h->len, &ev, &err) == -1)
				kt_cli_die(&err);
			if (marked(&ev, ADDED_KEY))
				continue;
			if (marked(&ev, TRACK_KEY)) {
				if (unpatch(&ev, &ub, &chk) == -1) {
					if (bad++ < 5)
						kt_cli_warn("%s: row %llu: "
						    "cannot put the event back "
						    "exactly",
						    inname, (unsigned long long)
						    r->index);
					pos++;
					continue;
				}
				ev.raw = ub.p;
				ev.len = ub.n;
			}
		} else {
			ev.raw = h->raw;
			ev.len = h->len;
		}
		ev.index = r->index;
		rc = kt_writer_event(w, &ev);
		pos++;
	}
	if (bad > 0) {
		kt_cli_warn("%s: %llu events cannot be restored exactly",
		    inname, (unsigned long long)bad);
		kt_cli_die(NULL);
	}
	if (rc == 0)
		rc = kt_writer_end_index(w, metas, nm, identity || !after ?
		    NULL : rows, nrows);
	kt_cli_out_commit(out, rc == -1, &err);
	kt_writer_free(w);
	free(metas);
	free(rows);
	free(ret);
	kt_buf_free(&ub);
	kt_buf_free(&chk);
	json_decref(rep);
	return 0;

identity_copy:
	json_decref(topj);
	out = kt_cli_out_open(o.co.output, o.co.level);
	if ((w = kt_writer_new(out, 0)) == NULL)
		nomem();
	m = kt_reader_metas(rd, &nm);
	{
		const uint64_t *si;
		size_t nsi;
		int applied;

		si = kt_reader_srcindex(rd, &nsi, &applied);
		if ((rows = malloc((nrecs + 1) * sizeof(*rows))) == NULL)
			nomem();
		for (i = 0; i < nrecs; i++)
			rows[i] = recs[i].index;
		rc = kt_writer_begin(w, m, nm, si != NULL && applied ? rows :
		    NULL, nrecs);
		for (i = 0; i < nrecs && rc == 0; i++) {
			memset(&ev, 0, sizeof(ev));
			ev.raw = helds[i].raw;
			ev.len = helds[i].len;
			ev.index = recs[i].index;
			rc = kt_writer_event(w, &ev);
		}
		if (rc == 0)
			rc = kt_writer_end_index(w, m, nm, si != NULL &&
			    !applied ? rows : NULL, nrecs);
	}
	kt_cli_out_commit(out, rc == -1, &err);
	kt_writer_free(w);
	free(rows);
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "group", no_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "max-gpu-lanes", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'r' },
		{ "restore", no_argument, NULL, 'R' },
		{ "strict", no_argument, NULL, 'S' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_source *src;
	const char *path;
	char *readpath, rbuf[4200];
	int ch, rc, want_report;

	kt_cli_init("kt-compact-lanes");
	memset(&o, 0, sizeof(o));
	o.co.level = -1;
	o.max_lanes = 10;
	while ((ch = getopt_long(argc, argv, "ghl:m:n:o:r:RSV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'g':
			o.group = 1;
			break;
		case 'n':
			o.max_lanes = kt_cli_int("--max-gpu-lanes", optarg, 1,
			    100000);
			break;
		case 'r':
			o.report = optarg;
			break;
		case 'R':
			o.restore = 1;
			break;
		default:
			kt_cli_opt(&o.co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		usage(stderr);
		return 2;
	}
	if (o.restore && o.group) {
		kt_cli_warn("--restore takes no --group");
		return 2;
	}
	path = argc == 1 ? argv[0] : "-";
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(o.co.output, argv, argc) == -1)
		return 2;
	if (o.report != NULL && !o.restore &&
	    kt_cli_check_output(o.report, argv, argc) == -1)
		return 2;
	if (kt_cli_check_level(o.co.level, o.co.output) == -1)
		return 2;
	want_report = !o.restore && (o.report != NULL ||
	    kt_cli_report_beside(o.co.output, "", rbuf, sizeof(rbuf)));
	readpath = (char *)path;
	if (strcmp(path, "-") != 0)
		inname = path;
	else if (want_report) {
		/* Standard input is hashed too: keep a copy of it. */
		readpath = kt_cli_spool_stdin();
	}
	if ((holder = kt_hold_new(o.restore ? NULL : readpath, inname)) ==
	    NULL)
		nomem();
	/* The SHA-256 is for the report: no report, no hashing. */
	if (want_report)
		hash_start(readpath);
	rd = kt_cli_open_one(readpath, inname, o.co.member, o.co.rflags, &src);
	if ((arena = kt_arena_new()) == NULL ||
	    (threads = kt_intern_new()) == NULL ||
	    (pids = kt_intern_new()) == NULL)
		nomem();
	rc = o.restore ? restore(src, path) : compact(src, readpath);
	kt_reader_free(rd);
	kt_source_close(src);
	kt_hold_free(holder);
	return rc;
}
