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
 * the events are held (lib/hold.c): a plain JSON input file is read
 * into memory once and its events stay where they are in it, other
 * inputs are copied; a file that changes while it is read is refused.
 * With a report, the input's SHA-256 is computed in a second thread
 * while the events are read.  --restore holds the compact view the same
 * way.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>


#include <getopt.h>
#include <pthread.h>
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
#define REPORT_VERSION	1

enum role { R_KEEP = 0, R_ACT, R_SCOPE, R_FLOW, R_RETIRE };
enum mkind { MK_NONE = 0, MK_THREAD_NAME, MK_THREAD_SORT, MK_PROC_NAME,
    MK_PROC_SORT };
enum grp { G_COMPUTE = 0, G_COMM, G_COPY, G_N };
enum tclass { TC_STREAM = 0, TC_LANE, TC_GUIDE };

static const char *const grpnames[G_N] = { "compute", "communication",
    "copies" };

/*
 * The events are held in a store (lib/core/store.c), in input order,
 * with the offsets of their pid, tid and args (what moving one needs).
 * A record's aux is an ACT or SCOPE's item, a FLOW's activity record;
 * its tag holds the role (bits 0-2), the kind of metadata of an M event
 * or the group of an X event (bits 3-5) and a flow's "bp": "e" (bit 6).
 */
#define TAG_ROLE	0x07
#define TAG_SUB		0x38
#define TAG_SUB_SHIFT	3
#define TAG_BP_E	0x40

static int
role_of(const struct kt_rec *r)
{
	return r->tag & TAG_ROLE;
}

static void
set_role(struct kt_rec *r, int role)
{
	r->tag = (uint8_t)((r->tag & ~TAG_ROLE) | role);
}

/* The kind of metadata of an M event (enum mkind). */
static int
mk_of(const struct kt_rec *r)
{
	return r->ph == 'M' ? (r->tag & TAG_SUB) >> TAG_SUB_SHIFT : MK_NONE;
}

/* The lane group of an X event (enum grp). */
static int
grp_of(const struct kt_rec *r)
{
	return r->ph == 'X' ? (r->tag & TAG_SUB) >> TAG_SUB_SHIFT : G_COMPUTE;
}

static void
set_sub(struct kt_rec *r, int v)
{
	r->tag = (uint8_t)((r->tag & ~TAG_SUB) | v << TAG_SUB_SHIFT);
}

/* Has the record a valid ts; its duration (0 when none or negative). */
#define HAS_TS(r)	(((r)->flags & KT_EV_TS) != 0)
#define DUR_OF(r)	(((r)->flags & KT_EV_DUR) && (r)->dur > 0 ? \
			    (r)->dur : 0)

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
	int		 has_sort;	/* a thread_sort_index was read */
	int64_t		 sort;		/* its sort_index */
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

/* The retired events, kept for the report as they are left out. */
struct retired {
	uint64_t	 position;
	uint64_t	 row;
	const char	*text;
	size_t		 len;
};

/* Everything one run knows: made in main(), handed down. */
struct cl {
	struct opts	 o;
	const char	*inname;
	struct kt_reader *rd;
	struct kt_hold	*holder;	/* the input's events (lib/hold.c) */
	struct kt_arena	*arena;
	struct kt_store	*store;		/* the events, in input order */
	const struct kt_intern *threads; /* its pid/tid keys */
	struct kt_intern *pids;
	struct kt_rules	*rules;		/* the library's buckets (--group) */
	struct kt_intern *names;	/* the names grouped, */
	uint8_t		*namegrp;	/* and their groups */
	size_t		 nnamegrp;
	struct kt_buf	 uname;		/* a name, unescaped */
	struct kt_rec	*recs;		/* the store's records */
	size_t		 nrecs;
	struct item	*acts, *scopes;
	size_t		 nacts, capacts, nscopes, capscopes;
	struct thr	*thrs;
	size_t		 nthrs;
	struct pidi	*pidis;
	size_t		 npidis;
	struct dev	*devs;
	size_t		 ndevs;
	uint32_t	*devacts;	/* the devices' activities, by device */
	int		 already;	/* the input is a compact view */
	char		 sha[65];
	uint32_t	 lastx;		/* hold(c): the last X event */
	struct kt_buf	 added;		/* the events added, one a line */
	size_t		 nadded;
	struct kt_buf	 margs;		/* add_meta(c)'s args */
	struct retired	*rets;
	size_t		 nrets;
	/*
	 * The input's SHA-256 (of the file's bytes as given), on a thread
	 * of its own while the view is planned and written (reading keeps
	 * both CPUs busy already; writing, one).  A plain file's is the
	 * framer's (below), which reads every byte anyway: no job then.
	 */
	struct kt_sha256_job *hash;
	/* For a report: the source's bytes around its events (restore). */
	int		 framing;	/* note where each event ends */
	uint64_t	*evend;		/* per record: its end in the bytes */
	size_t		 capend;
	char		 why[300];	/* why they cannot be restored, or "" */
	json_t		*frame;		/* the bytes around the events */
	char		 tsha[65];	/* the SHA-256 of the trace's bytes */
	int		 tsha_sha;	/* tsha is sha's (a plain file) */
	/*
	 * The framer (frame_build) on a thread of its own for a plain
	 * file, while the view is planned and written: it reads only
	 * what reading left (records, their ends, the store's places and
	 * the bytes of those held in memory, none of which change after
	 * reading) and writes only why, frame and tsha, which nothing
	 * reads before frame_wait().
	 */
	struct kt_source *fsrc;		/* the source framed */
	struct kt_reader *frd;		/* its reader */
	pthread_t	 fth;
	int		 fthread;	/* fth runs */
	int		 frc;		/* frame_build's: 0 or -1 with ferr */
	struct kt_error	 ferr;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-compact-lanes [-gS] [-l level] [-m glob] [-n lanes]\n"
	    "                        [-o file] [-r report] [--spool-max size]\n"
	    "                        [file]\n"
	    "       kt-compact-lanes --restore [-r report] [-o file] [file]\n"
	    "  -g, --group              communication, copies, compute apart\n"
	    "  -l, --level N            gzip level 0-9 for a .gz output\n"
	    "  -m, --member GLOB        take the archive member matching GLOB\n"
	    "  -n, --max-gpu-lanes N    refuse a device needing more (default 10)\n"
	    "  -o, --output FILE        write FILE atomically (.gz: gzip)\n"
	    "  -r, --report FILE        the report (default with -o: FILE.compact.json)\n"
	    "  -R, --restore            write back the source of a compact view\n"
	    "  -S, --strict             refuse damaged input\n"
	    "      --spool-max SIZE     cap on copying a pipe or stdin\n"
	    "                           (default 64G; K, M, G, T)\n"
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
 * The lane group of a name (its raw JSON text): copies (Memcpy, Memset,
 * or the library's "transfer" bucket), communication (the library's
 * "communication" bucket: NCCL, RCCL and the like, collectives, MoE
 * dispatch and combine) or compute.  Each name is matched once.
 */
static enum grp
name_group(struct cl *c, const char *n, size_t len, int kind)
{
	int64_t id;
	enum grp g = G_COMPUTE;
	uint32_t b;

	if ((id = kt_intern_put(c->names, n, len)) == -1)
		nomem();
	if ((size_t)id < c->nnamegrp)
		return (enum grp)c->namegrp[id];
	if (str_prefix(n, len, "Memcpy") || str_prefix(n, len, "Memset"))
		g = G_COPY;
	else if (len >= 2 && n[0] == '"') {
		if (kt_json_unescape(n + 1, len - 2, &c->uname) == -1 ||
		    kt_buf_addc(&c->uname, '\0') == -1)
			nomem();
		b = kt_rules_match(c->rules, kind, c->uname.p);
		if (kt_rules_class(c->rules, b) == KT_CLASS_COMM)
			g = G_COMM;
		else if (kt_rules_class(c->rules, b) == KT_CLASS_TRANSFER)
			g = G_COPY;
	}
	if ((c->namegrp = realloc(c->namegrp, (size_t)id + 1)) == NULL)
		nomem();
	c->namegrp[id] = (uint8_t)g;
	c->nnamegrp = (size_t)id + 1;
	return g;
}

/*
 * The lane group of a GPU activity: copies (memcpy, memset), the group
 * of its name, or communication when its args name a collective.
 */
static enum grp
group_of(struct cl *c, const struct kt_event *ev, int kind)
{
	const char *n;
	size_t len;
	struct kt_val v;
	enum grp g;

	if (kind == KT_GPU_MEMCPY || kind == KT_GPU_MEMSET)
		return G_COPY;
	if ((n = kt_event_field(ev, KT_F_NAME, &len)) != NULL &&
	    (g = name_group(c, n, len, kind)) != G_COMPUTE)
		return g;
	if (ev->f[KT_F_ARGS].type == KT_OBJECT && kt_event_find(ev,
	    &ev->f[KT_F_ARGS], "Collective name", &v) == 0)
		return G_COMM;
	return G_COMPUTE;
}

/* ------------------------------------------------------------------ */
/* Reading. */

static struct pidi *
pidi_at(struct cl *c, uint32_t id)
{
	if (id >= c->npidis) {
		size_t n = (id + 1) * 2;

		if ((c->pidis = realloc(c->pidis, n * sizeof(*c->pidis))) ==
		    NULL)
			nomem();
		memset(&c->pidis[c->npidis], 0, (n - c->npidis) *
		    sizeof(*c->pidis));
		for (; c->npidis < n; c->npidis++)
			c->pidis[c->npidis].dev = NONE;
	}
	return &c->pidis[id];
}

/* A thread the store interned: its entry, its pid interned. */
static void
new_thread(struct cl *c, uint32_t id)
{
	const char *key, *tab;
	size_t kn;
	int64_t p;

	if (id < c->nthrs)
		return;
	if ((c->thrs = realloc(c->thrs, (c->nthrs + 1) *
	    sizeof(*c->thrs))) == NULL)
		nomem();
	memset(&c->thrs[c->nthrs], 0, sizeof(*c->thrs));
	c->thrs[c->nthrs].name_rec = NONE;
	key = kt_intern_get(c->threads, id, &kn);
	tab = memchr(key, '\t', kn);
	if ((p = kt_intern_put(c->pids, key, (size_t)(tab - key))) == -1)
		nomem();
	c->thrs[c->nthrs].pid = (uint32_t)p;
	pidi_at(c, (uint32_t)p);
	c->nthrs++;
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
note_meta(struct cl *c, struct kt_rec *r, const struct kt_event *ev)
{
	struct thr *t = &c->thrs[r->thread];
	struct pidi *p = &c->pidis[t->pid];
	const char *s;
	size_t n;

	if (kt_event_field_is(ev, KT_F_NAME, "thread_name")) {
		set_sub(r, MK_THREAD_NAME);
		if ((s = meta_name(ev, &n)) == NULL)
			return;
		if (t->name_rec == NONE) {
			t->name_rec = (uint32_t)(r - c->recs);
			if ((t->name = kt_arena_copy(c->arena, s, n)) == NULL)
				nomem();
			t->namelen = n;
		}
		if (str_prefix(s, n, KT_GUIDE_PREFIX))
			t->cls = TC_GUIDE;
		else if (str_prefix(s, n, "GPU lane ") &&
		    contains_ci(s, n, "(synthetic")) {
			t->cls = TC_LANE;
			p->compact = 1;
		}
	} else if (kt_event_field_is(ev, KT_F_NAME, "thread_sort_index")) {
		set_sub(r, MK_THREAD_SORT);
		if (!t->has_sort && kt_event_sort_index(ev, &t->sort) == 0)
			t->has_sort = 1;
	} else if (kt_event_field_is(ev, KT_F_NAME, "process_name")) {
		set_sub(r, MK_PROC_NAME);
		if ((s = meta_name(ev, &n)) != NULL &&
		    str_prefix(s, n, "GPU scopes"))
			p->compact = 1;
	} else if (kt_event_field_is(ev, KT_F_NAME, "process_sort_index")) {
		set_sub(r, MK_PROC_SORT);
		if (kt_event_sort_index(ev, &p->sort) == 0)
			p->has_sort = 1;
	}
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
stream_row(struct cl *c, const struct thr *t)
{
	const struct pidi *p = &c->pidis[t->pid];

	return p->gpu && !p->compact && t->cls == TC_STREAM &&
	    (t->has_gpu || !t->has_cpu);
}


/* What an X event says about its thread and pid (record r). */
static void
note_x(struct cl *c, struct kt_rec *r, const struct kt_event *ev)
{
	struct thr *t = &c->thrs[r->thread];
	struct pidi *p = &c->pidis[t->pid];
	struct kt_val v = ev->f[KT_F_RANK];
	int kind = ev->kind;

	if (cpu_kind(kind))
		t->has_cpu = 1;
	else if (kt_event_field_is(ev, KT_F_CAT, KT_CAT_LAYER_GUIDE))
		t->cls = TC_GUIDE;
	if (kind == KT_KERNEL || kind == KT_GPU_MEMCPY ||
	    kind == KT_GPU_MEMSET || kind == KT_GPU_USER_ANNOTATION) {
		t->has_gpu = 1;
		p->gpu = 1;
		/* Its args.rank, looked for once per pid. */
		if (!p->rank_looked && (p->rank_looked = 1) &&
		    (v.type != KT_NONE ||
		    (ev->f[KT_F_ARGS].type == KT_OBJECT &&
		    kt_event_find(ev, &ev->f[KT_F_ARGS], KT_ARG_RANK, &v) ==
		    0))) {
			p->ranklen = v.len;
			if ((p->rank = kt_arena_copy(c->arena, ev->raw + v.off,
			    v.len)) == NULL)
				nomem();
		}
	}
	/* Only GPU activities are placed on lanes. */
	if (c->o.group && !cpu_kind(kind) && kind != KT_GPU_USER_ANNOTATION)
		set_sub(r, group_of(c, ev, kind));
}

/* Keep ev. */
static void
hold(struct cl *c, const struct kt_event *ev)
{
	struct kt_rec *r;
	struct kt_error err;
	int kind = ev->kind;

	if (ev->len > UINT32_MAX) {
		kt_cli_warn("%s: an event of over 4 GB", c->inname);
		kt_cli_die(NULL);
	}
	if ((r = kt_store_add(c->store, c->rd, ev, &err)) == NULL)
		kt_cli_die(&err);
	c->recs = kt_store_recs(c->store, &c->nrecs);
	r->aux = NONE;
	new_thread(c, r->thread);
	/* A compact view's own marks: the first member of args. */
	if (ev->f[KT_F_ARGS].type == KT_OBJECT && ev->f[KT_F_ARGS].len > 16 &&
	    memcmp(ev->raw + ev->f[KT_F_ARGS].off, "{\"_compact_gpu_", 15) ==
	    0)
		c->already = 1;
	switch (ev->ph) {
	case 'M':
		note_meta(c, r, ev);
		break;
	case 'X':
		note_x(c, r, ev);
		c->lastx = (uint32_t)(c->nrecs - 1);
		break;
	default:
		if (kind == KT_FLOW) {
			if (kt_event_field_is(ev, KT_F_BP, "e"))
				r->tag |= TAG_BP_E;
			/* Kineto writes a flow end right after its kernel. */
			if (c->lastx != NONE &&
			    c->recs[c->lastx].thread == r->thread &&
			    HAS_TS(r) && HAS_TS(&c->recs[c->lastx]) &&
			    c->recs[c->lastx].ts == r->ts)
				r->aux = c->lastx;
		}
		break;
	}
}

/*
 * Note where event ev, just read, ends in the trace's bytes (the bytes
 * out of the decompression and the archive), for the frame of the
 * report; or why the restore cannot give those bytes back.
 */
static void
note_end(struct cl *c, const struct kt_event *ev)
{
	uint64_t end = ev->end, i = c->nrecs - 1;

	if (c->why[0] != '\0')
		return;
	if (kt_reader_form(c->rd) == KT_FORM_TSV) {
		snprintf(c->why, sizeof(c->why), "the source is in the TSV "
		    "event form: the events are restored as JSON");
		return;
	}
	if (ev->flags & (KT_EV_REPAIRED | KT_EV_PATCHED) || end < ev->len ||
	    (i > 0 && end - ev->len < c->evend[i - 1])) {
		snprintf(c->why, sizeof(c->why), "row %llu was repaired on "
		    "reading (kt-normalize(1)): its bytes are not the file's",
		    (unsigned long long)ev->index);
		return;
	}
	if (i >= c->capend) {
		c->capend = c->capend ? c->capend * 2 : 4096;
		if ((c->evend = realloc(c->evend, c->capend *
		    sizeof(*c->evend))) == NULL)
			nomem();
	}
	c->evend[i] = end;
}

/* Read every event; map row numbers written after the events. */
static void
read_all(struct cl *c)
{
	struct kt_event ev;
	const struct kt_event *e;
	struct kt_error err;
	struct kt_ahead *ah = NULL;
	struct kt_rows si;
	size_t i;
	int rc, applied;

	/*
	 * Scan on a second CPU while this one holds (kt_ahead_start); the
	 * report's hash takes that CPU later, while the view is written.
	 */
	if (kt_cli_threads())
		ah = kt_ahead_start(c->rd, kt_cli_progress);
	while ((rc = kt_ahead_get(ah, c->rd, &ev, &e, &err)) == 1) {
		hold(c, e);
		if (c->framing)
			note_end(c, e);
		if (ah == NULL && (c->nrecs & 0xffff) == 0)
			kt_cli_progress(c->rd);
	}
	kt_ahead_stop(ah);
	if (rc == -1)
		kt_cli_die(&err);
	if (kt_reader_rows(c->rd, &si, &applied) && !applied)
		for (i = 0; i < c->nrecs && i < si.n; i++)
			c->recs[i].index = kt_rows_at(&si, i);
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
pid_text(struct cl *c, uint32_t p, size_t *n)
{
	return kt_intern_get(c->pids, p, n);
}

/* The raw text of thread t's tid. */
static const char *
tid_text(struct cl *c, uint32_t t, size_t *n)
{
	size_t kn;
	const char *k = kt_intern_get(c->threads, t, &kn);
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
dev_label(struct cl *c, const struct dev *d, char *buf, size_t cap)
{
	size_t n;
	const char *p = pid_text(c, d->pid, &n);
	const struct pidi *pi = &c->pidis[d->pid];

	if (pi->rank != NULL)
		snprintf(buf, cap, "pid %.*s (rank %.*s)", (int)n, p,
		    (int)pi->ranklen, pi->rank);
	else
		snprintf(buf, cap, "pid %.*s", (int)n, p);
	return buf;
}

/* A tid's text, and its value when it is an integer. */
struct tidkey {
	const char	*s;
	size_t		 n;
	int64_t		 v;
	int		 isint;
};

/* Order tids: numbers by value, then the rest by text. */
static int
cmp_tid(const void *a, const void *b)
{
	const struct tidkey *x = a, *y = b;
	int c;

	if (x->isint != y->isint)
		return y->isint - x->isint;
	if (x->isint && x->v != y->v)
		return x->v < y->v ? -1 : 1;
	if ((c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n)) != 0)
		return c;
	return (x->n > y->n) - (x->n < y->n);
}

/*
 * The stream rows (tids) of items snap[0..n), in tid order, as "7, 11,
 * 15" (at most 12, then "...").
 */
static void
stream_list(struct cl *c, const uint32_t *snap, int n, char *buf, size_t cap)
{
	uint32_t *t;
	struct tidkey *tk;
	size_t at = 0;
	int i, j, nt = 0;

	buf[0] = '\0';
	if ((t = malloc(((size_t)n + 1) * sizeof(*t))) == NULL ||
	    (tk = malloc(((size_t)n + 1) * sizeof(*tk))) == NULL)
		nomem();
	for (i = 0; i < n; i++) {
		uint32_t th = c->recs[c->acts[snap[i]].rec].thread;

		for (j = 0; j < nt && t[j] != th; j++)
			;
		if (j == nt)
			t[nt++] = th;
	}
	for (i = 0; i < nt; i++) {
		tk[i].s = tid_text(c, t[i], &tk[i].n);
		tk[i].isint = int_text(tk[i].s, tk[i].n, &tk[i].v);
	}
	kt_qsort(tk, (size_t)nt, sizeof(*tk), cmp_tid);
	for (i = 0; i < nt && at < cap; i++) {
		if (i == 12) {
			snprintf(buf + at, cap - at, ", ...");
			break;
		}
		at += (size_t)snprintf(buf + at, cap - at, "%s%.*s",
		    i ? ", " : "", (int)tk[i].n, tk[i].s);
	}
	free(t);
	free(tk);
}

/* An item's sort key: thread (or 0), start, end (or 0), record. */
struct ikey {
	uint32_t	 thread;
	int64_t		 ts;
	int64_t		 end;
	uint32_t	 rec;
	uint32_t	 idx;
};

/* Thread, then start, then the longer first, then file order. */
static int
cmp_ikey(const void *a, const void *b)
{
	const struct ikey *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

/*
 * Sort idx[0..n) (items of it) by start, then file order; by_thread:
 * by thread first; longer: the longer first at equal starts.
 */
static void
sort_items(struct cl *c, const struct item *it, uint32_t *idx, size_t n,
    int by_thread, int longer)
{
	struct ikey *k;
	size_t i;

	if ((k = malloc((n + 1) * sizeof(*k))) == NULL)
		nomem();
	for (i = 0; i < n; i++) {
		const struct item *x = &it[idx[i]];

		k[i].thread = by_thread ? c->recs[x->rec].thread : 0;
		k[i].ts = x->ts;
		k[i].end = longer ? x->end : 0;
		k[i].rec = x->rec;
		k[i].idx = idx[i];
	}
	kt_qsort(k, n, sizeof(*k), cmp_ikey);
	for (i = 0; i < n; i++)
		idx[i] = k[i].idx;
	free(k);
}

static void
add_item(struct cl *c, struct item **v, size_t *n, size_t *cap, uint32_t rec)
{
	struct item *x;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		if ((*v = realloc(*v, *cap * sizeof(**v))) == NULL)
			nomem();
	}
	x = &(*v)[(*n)++];
	x->ts = c->recs[rec].ts;
	x->end = c->recs[rec].ts + DUR_OF(&c->recs[rec]);
	x->rec = rec;
	x->lane = 0;
	x->unit = 0;
}

/* The device of pid p, made on first sight. */
static struct dev *
dev_of(struct cl *c, uint32_t p)
{
	struct pidi *pi = &c->pidis[p];

	if (pi->dev == NONE) {
		if ((c->devs = realloc(c->devs, (c->ndevs + 1) *
		    sizeof(*c->devs))) == NULL)
			nomem();
		memset(&c->devs[c->ndevs], 0, sizeof(*c->devs));
		c->devs[c->ndevs].pid = p;
		pi->dev = (uint32_t)c->ndevs++;
	}
	return &c->devs[pi->dev];
}

/* The thread of activity a. */
static uint32_t
act_thread(const struct cl *c, uint32_t a)
{
	return c->recs[c->acts[a].rec].thread;
}

/* The device index of record rec's pid. */
static uint32_t
dev_index(const struct cl *c, size_t rec)
{
	return c->pidis[c->thrs[c->recs[rec].thread].pid].dev;
}

/* Which events move: activities and scopes of the GPU stream rows. */
static void
select_items(struct cl *c)
{
	size_t i;

	for (i = 0; i < c->nrecs; i++) {
		struct kt_rec *r = &c->recs[i];
		struct thr *t = &c->thrs[r->thread];

		if (r->ph != 'X' || !HAS_TS(r) || !stream_row(c, t) ||
		    cpu_kind(r->kind))
			continue;
		dev_of(c, t->pid);
		if (r->kind == KT_GPU_USER_ANNOTATION) {
			set_role(r, R_SCOPE);
			r->aux = (uint32_t)c->nscopes;
			add_item(c, &c->scopes, &c->nscopes, &c->capscopes,
			    (uint32_t)i);
		} else {
			set_role(r, R_ACT);
			r->aux = (uint32_t)c->nacts;
			t->nacts++;
			add_item(c, &c->acts, &c->nacts, &c->capacts,
			    (uint32_t)i);
			c->acts[c->nacts - 1].unit = c->pidis[t->pid].dev;
		}
	}
}

/* Refuse a device that needs more than --max-gpu-lanes lanes. */
static int
too_many(struct cl *c, const struct dev *d, int total)
{
	char lbl[200], streams[400], when[40], groups[160] = "";

	if (total <= c->o.max_lanes)
		return 0;
	if (c->o.group)
		snprintf(groups, sizeof(groups), " (compute %d, communication "
		    "%d, copies %d)", d->glanes[G_COMPUTE], d->glanes[G_COMM],
		    d->glanes[G_COPY]);
	stream_list(c, d->peak_items, d->npeak, streams, sizeof(streams));
	kt_time_format(d->peak_ts, 0, when);
	kt_cli_warn("%s: %s needs %d GPU lanes%s, more than --max-gpu-lanes "
	    "%lld: %d activities run at once at ts %s, on streams %s",
	    c->inname, dev_label(c, d, lbl, sizeof(lbl)), total, groups,
	    c->o.max_lanes, d->peak, when, streams);
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

/*
 * The lanes of device d: its peak, and with --group the lanes of each
 * group in turn (byg: room for its activities).  Returns the lanes.
 */
static int
place_dev(struct cl *c, struct dev *d, uint32_t *byg)
{
	size_t j, n;
	int g, total = 0;
	int64_t pts;

	sort_by_start(c->acts, d->acts, d->nacts);
	d->peak = partition(c->acts, d->acts, d->nacts, 0, &d->peak_ts,
	    &d->peak_items, &d->npeak);
	if (!c->o.group)
		return d->peak;
	for (g = 0; g < G_N; g++) {
		for (j = n = 0; j < d->nacts; j++) {
			uint32_t a = d->acts[j];

			if (grp_of(&c->recs[c->acts[a].rec]) == g)
				byg[n++] = a;
		}
		d->gbase[g] = total;
		d->glanes[g] = partition(c->acts, byg, n, (uint32_t)total, &pts,
		    NULL, NULL);
		total += d->glanes[g];
	}
	return total;
}

/* The stream rows device d's activities came from. */
static int
dev_streams(struct cl *c, const struct dev *d)
{
	uint32_t *seen;
	size_t j;
	int n = 0;

	if ((seen = calloc(c->nthrs + 1, sizeof(*seen))) == NULL)
		nomem();
	for (j = 0; j < d->nacts; j++)
		if (!seen[act_thread(c, d->acts[j])]++)
			n++;
	free(seen);
	return n;
}

/* Give every activity of every device its lane. */
static void
place_acts(struct cl *c)
{
	uint32_t *idx, *byg;
	size_t i, k;
	int refuse = 0;

	if ((idx = malloc((c->nacts + 1) * sizeof(*idx))) == NULL ||
	    (byg = malloc((c->nacts + 1) * sizeof(*byg))) == NULL)
		nomem();
	c->devacts = idx;	/* the devices' acts point into it */
	/* Per device, by start: counting sort by device, then qsort. */
	for (i = 0; i < c->nacts; i++)
		c->devs[c->acts[i].unit].nacts++;
	for (i = k = 0; i < c->ndevs; i++) {
		c->devs[i].acts = idx + k;
		k += c->devs[i].nacts;
		c->devs[i].nacts = 0;
	}
	for (i = 0; i < c->nacts; i++) {
		struct dev *d = &c->devs[c->acts[i].unit];

		d->acts[d->nacts++] = (uint32_t)i;
	}
	for (i = 0; i < c->ndevs; i++) {
		struct dev *d = &c->devs[i];

		d->lanes = place_dev(c, d, byg);
		refuse |= too_many(c, d, d->lanes);
		d->streams = dev_streams(c, d);
	}
	free(byg);
	if (refuse)
		kt_cli_die(NULL);
}

/* Nesting groups of scopes per source row, then rows for the groups. */
static void
place_scopes(struct cl *c)
{
	uint32_t *idx, *stack, *uidx;
	struct item *u;
	size_t i, j, nu = 0, sp = 0;

	if (c->nscopes == 0)
		return;
	if ((idx = malloc(c->nscopes * sizeof(*idx))) == NULL ||
	    (stack = malloc(c->nscopes * sizeof(*stack))) == NULL ||
	    (u = malloc(c->nscopes * sizeof(*u))) == NULL ||
	    (uidx = malloc(c->nscopes * sizeof(*uidx))) == NULL)
		nomem();
	for (i = 0; i < c->nscopes; i++)
		idx[i] = (uint32_t)i;
	sort_items(c, c->scopes, idx, c->nscopes, 1, 1);
	for (i = 0; i < c->nscopes; i++) {
		struct item *x = &c->scopes[idx[i]];

		if (i > 0 && c->recs[x->rec].thread !=
		    c->recs[c->scopes[idx[i - 1]].rec].thread)
			sp = 0;
		while (sp > 0 && c->scopes[stack[sp - 1]].end <= x->ts)
			sp--;
		if (sp > 0 && x->end > c->scopes[stack[sp - 1]].end)
			sp = 0;		/* a partial overlap: a new group */
		if (sp == 0) {
			u[nu].ts = x->ts;
			u[nu].end = x->end;
			u[nu].rec = x->rec;
			u[nu].lane = 0;
			u[nu].unit = dev_index(c, x->rec);
			nu++;
		}
		x->unit = (uint32_t)(nu - 1);
		stack[sp++] = idx[i];
	}
	/* Rows per device, by the groups' starts. */
	for (j = 0; j < c->ndevs; j++) {
		struct dev *d = &c->devs[j];
		size_t n = 0;
		int64_t pts;

		for (i = 0; i < nu; i++)
			if (u[i].unit == j)
				uidx[n++] = (uint32_t)i;
		sort_items(c, u, uidx, n, 0, 0);
		d->scope_rows = partition(u, uidx, n, 0, &pts, NULL, NULL);
		d->nscopes = 0;
	}
	for (i = 0; i < c->nscopes; i++) {
		c->scopes[i].lane = u[c->scopes[i].unit].lane;
		c->devs[dev_index(c, c->scopes[i].rec)].nscopes++;
	}
	free(idx);
	free(stack);
	free(u);
	free(uidx);
}

/* Bind every flow event of a moved row to the activity it belongs to. */
static void
bind_flows(struct cl *c)
{
	uint32_t *byt = NULL;
	size_t i;
	int bad = 0;

	for (i = 0; i < c->nrecs; i++) {
		struct kt_rec *r = &c->recs[i];
		struct thr *t = &c->thrs[r->thread];
		struct pidi *p = &c->pidis[t->pid];
		size_t lo, hi;
		uint32_t a = NONE;

		/* Flows of rows without activities stay where they are. */
		if (r->kind != KT_FLOW || p->dev == NONE || !stream_row(c, t) ||
		    t->nacts == 0)
			continue;
		if (r->aux != NONE && role_of(&c->recs[r->aux]) == R_ACT) {
			set_role(r, R_FLOW);
			continue;
		}
		if (!HAS_TS(r))
			goto unbound;
		if (byt == NULL) {
			if ((byt = malloc((c->nacts + 1) * sizeof(*byt))) ==
			    NULL)
				nomem();
			for (lo = 0; lo < c->nacts; lo++)
				byt[lo] = (uint32_t)lo;
			sort_items(c, c->acts, byt, c->nacts, 1, 0);
		}
		/* The first activity of the row with start > ts. */
		lo = 0;
		hi = c->nacts;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct item *x = &c->acts[byt[mid]];
			uint32_t tx = c->recs[x->rec].thread;

			if (tx < r->thread || (tx == r->thread &&
			    x->ts <= r->ts))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (r->ph == 'f' && !(r->tag & TAG_BP_E)) {
			/* The next slice that begins at or after ts. */
			size_t k = lo;

			while (k > 0 && act_thread(c, byt[k - 1]) ==
			    r->thread && c->acts[byt[k - 1]].ts == r->ts)
				k--;
			if (k < c->nacts && act_thread(c, byt[k]) == r->thread)
				a = byt[k];
			if (a != NONE && c->acts[a].ts != r->ts) {
				/* Another slice of its lane must not begin
				 * in between. */
				struct dev *d = &c->devs[p->dev];
				size_t m;

				for (m = 0; m < d->nacts; m++) {
					const struct item *y =
					    &c->acts[d->acts[m]];

					if (d->acts[m] != a &&
					    y->lane == c->acts[a].lane &&
					    y->ts >= r->ts &&
					    y->ts <= c->acts[a].ts) {
						a = NONE;
						break;
					}
				}
			}
		} else if (lo > 0 && act_thread(c, byt[lo - 1]) == r->thread) {
			/* The enclosing slice: the latest start <= ts. */
			size_t k = lo;

			while (k > 0 && act_thread(c, byt[k - 1]) ==
			    r->thread && lo - k < 64) {
				if (c->acts[byt[k - 1]].end >= r->ts) {
					a = byt[k - 1];
					break;
				}
				k--;
			}
		}
		if (a != NONE) {
			r->aux = c->acts[a].rec;
			set_role(r, R_FLOW);
			continue;
		}
unbound:
		if (bad++ < 5) {
			size_t pn, tn;
			const char *ps = pid_text(c, t->pid, &pn);
			const char *ts = tid_text(c, r->thread, &tn);
			char when[40] = "?";

			if (HAS_TS(r))
				kt_time_format(r->ts, 0, when);
			kt_cli_warn("%s: flow:%llu (ph '%c') at ts %s on pid "
			    "%.*s tid %.*s belongs to no GPU activity of its "
			    "row; refusing to move the row without it",
			    c->inname, (unsigned long long)r->index,
			    r->ph ? r->ph : '?',
			    when, (int)pn, ps, (int)tn, ts);
		}
	}
	free(byt);
	if (bad > 0) {
		if (bad > 5)
			kt_cli_warn("%s: %d flow ends in all cannot be matched",
			    c->inname, bad);
		kt_cli_die(NULL);
	}
}

/* Rows left empty lose their thread_name and thread_sort_index. */
static uint64_t
retire(struct cl *c)
{
	size_t i;
	uint64_t n = 0;

	for (i = 0; i < c->nrecs; i++) {
		struct kt_rec *r = &c->recs[i];

		if (r->ph == 'M')
			continue;
		if (role_of(r) == R_KEEP)
			c->thrs[r->thread].kept++;
		else
			c->thrs[r->thread].moved++;
	}
	for (i = 0; i < c->nthrs; i++)
		if (c->thrs[i].moved > 0 && c->thrs[i].kept == 0) {
			c->thrs[i].retired = 1;
			c->devs[c->pidis[c->thrs[i].pid].dev].retired_rows++;
		}
	for (i = 0; i < c->nrecs; i++) {
		struct kt_rec *r = &c->recs[i];

		if ((mk_of(r) == MK_THREAD_NAME || mk_of(r) == MK_THREAD_SORT) &&
		    c->thrs[r->thread].retired) {
			set_role(r, R_RETIRE);
			n++;
		}
		if (role_of(r) == R_FLOW)
			c->devs[dev_index(c, i)].moved_flows++;
	}
	return n;
}

/* The scopes pid of every device; refuse one that is taken. */
static void
scope_pids(struct cl *c)
{
	size_t i;

	for (i = 0; i < c->ndevs; i++) {
		struct dev *d = &c->devs[i];
		size_t n;
		const char *p = pid_text(c, d->pid, &n);
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
		if (d->nscopes > 0 && kt_intern_find(c->pids, d->scope_pid,
		    strlen(d->scope_pid)) != -1) {
			kt_cli_warn("%s: pid %s for the GPU scopes of pid %.*s "
			    "is taken", c->inname, d->scope_pid, (int)n, p);
			kt_cli_die(NULL);
		}
	}
	/* A lane's tid must be free on its pid. */
	for (i = 0; i < c->nthrs; i++) {
		size_t n;
		const char *s = tid_text(c, (uint32_t)i, &n);
		int64_t v;
		struct pidi *p = &c->pidis[c->thrs[i].pid];

		if (p->dev != NONE && !p->compact && int_text(s, n, &v) &&
		    v > LANE_TID_BASE && v <= LANE_TID_BASE +
		    c->devs[p->dev].lanes) {
			kt_cli_warn("%s: tid %lld of a GPU lane is taken",
			    c->inname, (long long)v);
			kt_cli_die(NULL);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Writing. */

static void
add_meta(struct cl *c, const char *pid, size_t pn, int64_t tid,
    const char *what, const char *name, int64_t sort, const struct pidi *pi)
{
	struct kt_buf *args = &c->margs, *b = &c->added;

	args->n = 0;
	if (kt_obj_begin(args) == -1 ||
	    kt_obj_int(args, ADDED_KEY, 1) == -1 ||
	    (name != NULL ? kt_obj_str(args, "name", name) :
	    kt_obj_int(args, "sort_index", sort)) == -1 ||
	    (pi->rank != NULL &&
	    kt_obj_raw(args, KT_ARG_RANK, pi->rank, pi->ranklen) == -1) ||
	    kt_obj_end(args) == -1 ||
	    kt_obj_begin(b) == -1 || kt_obj_str(b, "name", what) == -1 ||
	    kt_obj_str(b, "ph", "M") == -1 ||
	    kt_obj_raw(b, "pid", pid, pn) == -1 ||
	    kt_obj_int(b, "tid", tid) == -1 ||
	    kt_obj_raw(b, "args", args->p, args->n) == -1 ||
	    kt_obj_end(b) == -1 || kt_buf_addc(b, '\n') == -1)
		nomem();
	c->nadded++;
}

/*
 * The lanes of a pid take sort indexes base+1.. below its layer guide
 * rows (kt-layer-track(1) draws guides above the streams): base is the
 * largest sort index of a guide row that stays, or 0.
 */
static int64_t
lane_base(const struct cl *c, uint32_t pid)
{
	size_t i;
	int64_t base = 0;

	for (i = 0; i < c->nthrs; i++) {
		const struct thr *t = &c->thrs[i];

		if (t->pid == pid && t->cls == TC_GUIDE && !t->retired &&
		    t->has_sort && t->sort > base && t->sort < INT64_MAX / 2)
			base = t->sort;
	}
	return base;
}

/* Build the added events: per device its lanes, then its scope rows. */
static void
make_added(struct cl *c)
{
	size_t i;
	int k, g;
	char name[120];

	for (i = 0; i < c->ndevs; i++) {
		struct dev *d = &c->devs[i];
		struct pidi *pi = &c->pidis[d->pid];
		size_t pn;
		const char *p = pid_text(c, d->pid, &pn);
		int64_t base = lane_base(c, d->pid);

		for (k = 0; k < d->lanes; k++) {
			const char *label = NULL;

			if (c->o.group)
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
			add_meta(c, p, pn, LANE_TID_BASE + k + 1, "thread_name",
			    name, 0, pi);
			add_meta(c, p, pn, LANE_TID_BASE + k + 1,
			    "thread_sort_index", NULL, base + k + 1, pi);
		}
		if (d->nscopes == 0)
			continue;
		p = d->scope_pid;
		pn = strlen(p);
		add_meta(c, p, pn, 0, "process_name", "GPU scopes", 0, pi);
		{
			int64_t si, v;
			size_t dn;
			const char *dp = pid_text(c, d->pid, &dn);

			si = pi->has_sort ? pi->sort : int_text(dp, dn, &v) ?
			    v : 0;
			add_meta(c, p, pn, 0, "process_sort_index", NULL, si,
			    pi);
		}
		for (k = 0; k < d->scope_rows; k++) {
			snprintf(name, sizeof(name), "GPU scopes %d", k + 1);
			add_meta(c, p, pn, k + 1, "thread_name", name, 0, pi);
			add_meta(c, p, pn, k + 1, "thread_sort_index", NULL,
			    k + 1, pi);
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

/*
 * Held event i as an event with the fields patching needs: its bytes
 * (read again from a held file: valid until the next call), row number,
 * and its pid, tid and args as the reader saw them (a string pid stays a
 * string), without scanning it again.
 */
static void
held_event(struct cl *c, size_t i, struct kt_event *ev)
{
	struct kt_error err;

	if (kt_store_load(c->store, i, ev, &err) == -1)
		kt_cli_die(&err);
}

/* The bytes of held event i, as held_event() has them. */
static const char *
held_bytes(struct cl *c, size_t i)
{
	struct kt_error err;
	const char *p;

	if ((p = kt_store_bytes(c->store, i, &err)) == NULL)
		kt_cli_die(&err);
	return p;
}

/* Write moved event ev (record r) on its lane or scope row. */
static int
put_moved(struct cl *c, struct kt_writer *w, const struct kt_rec *r,
    const struct kt_event *ev, struct kt_patch *p, struct kt_buf *out)
{
	const struct kt_rec *a = role_of(r) == R_FLOW ? &c->recs[r->aux] : r;
	const struct dev *d = &c->devs[c->pidis[c->thrs[r->thread].pid].dev];
	char track[1200], tid[32];
	size_t tn, kn;
	int rc = 0;

	if (ev->f[KT_F_PID].len > 500 || ev->f[KT_F_TID].len > 500) {
		kt_cli_warn("%s: row %llu: a pid or tid of over 500 bytes",
		    c->inname, (unsigned long long)r->index);
		kt_cli_die(NULL);
	}
	kt_patch_reset(p, ev);
	kn = track_text(ev, r->index, track);
	if (role_of(a) == R_SCOPE) {
		tn = kt_int_format(c->scopes[a->aux].lane + 1, tid);
		rc |= kt_patch_set(p, KT_F_PID, d->scope_pid,
		    strlen(d->scope_pid));
	} else
		tn = kt_int_format(LANE_TID_BASE + c->acts[a->aux].lane + 1,
		    tid);
	rc |= kt_patch_set(p, KT_F_TID, tid, tn);
	rc |= kt_patch_arg_add(p, TRACK_KEY, track, kn);
	out->n = 0;
	if (rc != 0 || kt_patch_apply(p, out) == -1) {
		kt_cli_warn("%s: row %llu: cannot move the event", c->inname,
		    (unsigned long long)r->index);
		kt_cli_die(NULL);
	}
	return kt_writer_raw(w, out->p, out->n, r->index);
}

static void
keep_retired(struct cl *c, const struct kt_rec *r, size_t pos)
{
	struct retired *x;
	const char *raw = held_bytes(c, pos);

	if ((c->rets = realloc(c->rets, (c->nrets + 1) * sizeof(*c->rets))) ==
	    NULL)
		nomem();
	x = &c->rets[c->nrets++];
	x->position = pos;
	x->row = r->index;
	x->len = r->len;
	if ((x->text = kt_arena_copy(c->arena, raw, r->len)) == NULL)
		nomem();
}

/* Write the added events (index: their first row number). */
static int
put_added(struct cl *c, struct kt_writer *w, uint64_t index)
{
	size_t at = 0;
	int rc = 0;

	while (at < c->added.n && rc == 0) {
		const char *nl = memchr(c->added.p + at, '\n', c->added.n - at);
		struct kt_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.raw = c->added.p + at;
		ev.len = (size_t)(nl - (c->added.p + at));
		ev.index = index++;
		rc = kt_writer_event(w, &ev);
		at = (size_t)(nl - c->added.p) + 1;
	}
	return rc;
}

/* Where the added events go: at the first retired one, else the first
 * metadata event, else the start. */
static size_t
added_at(struct cl *c)
{
	size_t i;

	for (i = 0; i < c->nrecs; i++)
		if (role_of(&c->recs[i]) == R_RETIRE)
			return i;
	for (i = 0; i < c->nrecs; i++)
		if (c->recs[i].ph == 'M')
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
report_json(struct cl *c, uint64_t nretired, uint64_t nout, const char *outname)
{
	json_t *rep = json_object(), *dv = json_array(), *ret = json_array();
	json_t *jr;
	uint64_t moved = 0, flows = 0, nsc = 0;
	size_t i;
	struct kt_rows si;
	int applied, hassi;

	for (i = 0; i < c->nrecs; i++) {
		const struct kt_rec *r = &c->recs[i];

		if (role_of(r) == R_ACT)
			moved++;
		else if (role_of(r) == R_FLOW)
			flows++;
		else if (role_of(r) == R_SCOPE)
			nsc++;
	}
	for (i = 0; i < c->nrets; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "position", json_integer(
		    (json_int_t)c->rets[i].position));
		json_object_set_new(e, "row", json_integer(
		    (json_int_t)c->rets[i].row));
		json_object_set_new(e, "event", json_stringn_nocheck(
		    c->rets[i].text, c->rets[i].len));
		json_array_append_new(ret, e);
	}
	for (i = 0; i < c->ndevs; i++) {
		const struct dev *d = &c->devs[i];
		const struct pidi *pi = &c->pidis[d->pid];
		json_t *e = json_object(), *rows = json_array(),
		    *ps = json_array(), *gl;
		size_t n, j;
		const char *p = pid_text(c, d->pid, &n);
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

			t = tid_text(c, act_thread(c, d->peak_items[j]), &tn);
			json_array_append_new(ps, raw_json(t, tn));
		}
		json_object_set_new(e, "peakStreams", ps);
		json_object_set_new(e, "lanes", json_integer(d->lanes));
		if (c->o.group) {
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
		for (j = 0; j < c->nthrs; j++) {
			const struct thr *t = &c->thrs[j];
			json_t *row;
			const char *s;
			size_t sn;

			if (t->pid != d->pid || !t->retired)
				continue;
			row = json_object();
			s = tid_text(c, (uint32_t)j, &sn);
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
	json_object_set_new(rep, "input", json_string(c->inname));
	json_object_set_new(rep, "inputSha256", json_string(c->sha));
	json_object_set_new(rep, "output", json_string(outname));
	json_object_set_new(rep, "maxGpuLanes", json_integer(c->o.max_lanes));
	json_object_set_new(rep, "group", json_boolean(c->o.group));
	json_object_set_new(rep, "alreadyCompact", json_boolean(c->already));
	json_object_set_new(rep, "devices", dv);
	json_object_set_new(rep, "events", json_pack("{s:I,s:I,s:I,s:I,s:I,"
	    "s:I,s:I}", "input", (json_int_t)c->nrecs, "output",
	    (json_int_t)nout,
	    "activitiesMoved", (json_int_t)moved, "flowEndsMoved",
	    (json_int_t)flows, "scopesMoved", (json_int_t)nsc, "retired",
	    (json_int_t)nretired, "added", (json_int_t)c->nadded));
	hassi = kt_reader_rows(c->rd, &si, &applied);
	json_object_set_new(rep, "restore", json_pack("{s:s,s:s,s:s,s:I,s:s}",
	    "how", "kt compact-lanes --restore: drop the events whose args "
	    "begin with " ADDED_KEY "; put back pid and tid from args."
	    TRACK_KEY " and remove it (args \"absent\" or \"null\": as it "
	    "was); insert the retired events at their positions",
	    "trackKey", TRACK_KEY, "addedKey", ADDED_KEY, "sourceEvents",
	    (json_int_t)c->nrecs, "sourceIndex", !hassi ? "none" :
	    applied ? "before" : "after"));
	/*
	 * The source's own bytes: their SHA-256 (the file's, decompressed
	 * and out of its archive), and what is around its events, or why
	 * the restore cannot give them back.
	 */
	jr = json_object_get(rep, "restore");
	json_object_set_new(jr, "traceSha256", json_string(c->tsha));
	json_object_set_new(jr, "exact", json_boolean(c->frame != NULL));
	if (c->frame != NULL) {
		json_object_set_new(jr, "frame", c->frame);
		c->frame = NULL;
	} else
		json_object_set_new(jr, "why", json_string(c->why));
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
 * The top-level keys to write: the input's, and ktCompactLanes (written
 * after the events; its value comes from compact_meta(), once the input's
 * SHA-256 is known).
 */
static struct kt_meta *
out_metas(struct cl *c, size_t *n)
{
	const struct kt_meta *m = kt_reader_metas(c->rd, n);
	struct kt_meta *om;
	size_t i;

	if ((om = calloc(*n + 1, sizeof(*om))) == NULL)
		nomem();
	for (i = 0; i < *n; i++)
		om[i] = m[i];
	if (c->already)
		return om;
	om[*n].key = (char *)"\"" KT_KEY_COMPACT "\"";
	om[*n].keylen = strlen(om[*n].key);
	om[*n].after = 1;
	(*n)++;
	return om;
}

/* The value of ktCompactLanes, m (out_metas' last), written into top. */
static void
compact_meta(struct cl *c, struct kt_meta *m, struct kt_buf *top,
    uint64_t nretired, const char *report)
{
	kt_obj_begin(top);
	kt_obj_int(top, "version", REPORT_VERSION);
	if (c->sha[0] != '\0')
		kt_obj_str(top, "inputSha256", c->sha);
	if (report != NULL)
		kt_obj_str(top, "report", report);
	kt_obj_int(top, "devices", (int64_t)c->ndevs);
	kt_obj_int(top, "retired", (int64_t)nretired);
	kt_obj_int(top, "added", (int64_t)c->nadded);
	kt_obj_end(top);
	if (top->err)
		nomem();
	m->val = top->p;
	m->vallen = top->n;
}

/* Where the view's row numbers go: the order of its events. */
struct order {
	size_t		 at;		/* the added events before event at */
	uint64_t	 next;		/* the first added one's row number */
	uint64_t	*rows;		/* per event written, its row number */
	size_t		 n;
	int		 identity;	/* rows[i] == i: no ktSourceIndex */
	int		 at_end;	/* ktSourceIndex after the events */
};

/*
 * Is the input a compact view already (its top-level key, or lanes or
 * GPU scopes of its own)?
 */
static int
is_compact(struct cl *c)
{
	size_t i;

	if (kt_reader_meta_find(c->rd, KT_KEY_COMPACT) != NULL)
		return 1;
	for (i = 0; i < c->npidis; i++)
		if (c->pidis[i].compact)
			return 1;
	return 0;
}

/*
 * Place everything: the lanes, the scope rows, the flow ends, the rows
 * retired and the metadata added.  Returns the events retired.
 */
static uint64_t
plan(struct cl *c)
{
	uint64_t nretired;

	select_items(c);
	place_acts(c);
	place_scopes(c);
	bind_flows(c);
	nretired = retire(c);
	scope_pids(c);
	make_added(c);
	return nretired;
}

/*
 * The report's path: --report, else beside -o (rpath), else NULL; one
 * that is the output or the input is refused.
 */
static const char *
report_path(struct cl *c, const char *inpath, char *rpath, size_t cap)
{
	const char *report = c->o.report, *output = c->o.co.output;

	if (report == NULL && kt_cli_report_beside(output, ".compact.json",
	    rpath, cap))
		report = rpath;
	if (report != NULL) {
		char *const outs[] = { (char *)(output ? output : "-"),
		    (char *)inpath };

		if ((output != NULL && strcmp(report, output) == 0) ||
		    kt_cli_check_output(report, outs, 2) == -1) {
			kt_cli_warn("%s: the report cannot be the output "
			    "or the input", report);
			kt_cli_die(NULL);
		}
	}
	return report;
}

/* The row numbers in output order, and where ktSourceIndex goes. */
static void
row_order(struct cl *c, struct order *od)
{
	size_t i, j;

	memset(od, 0, sizeof(*od));
	od->at = added_at(c);
	for (i = 0; i < c->nrecs; i++)
		if (c->recs[i].index >= od->next)
			od->next = c->recs[i].index + 1;
	if ((od->rows = malloc((c->nrecs + c->nadded + 1) *
	    sizeof(*od->rows))) == NULL)
		nomem();
	for (i = 0; i <= c->nrecs; i++) {
		if (i == od->at && c->nadded > 0)
			for (j = 0; j < c->nadded; j++)
				od->rows[od->n++] = od->next + j;
		if (i == c->nrecs)
			break;
		if (role_of(&c->recs[i]) != R_RETIRE)
			od->rows[od->n++] = c->recs[i].index;
	}
	od->identity = 1;
	for (i = 0; i < od->n && od->identity; i++)
		od->identity = od->rows[i] == i;
	if (c->already) {
		/* Unchanged: ktSourceIndex goes where it was. */
		struct kt_rows si;

		if (kt_reader_rows(c->rd, &si, &od->at_end))
			od->at_end = !od->at_end;
	}
}

/* Write the events, in order, from memory: moved, kept, added. */
static int
write_events(struct cl *c, struct kt_writer *w, const struct order *od)
{
	struct kt_buf pb = KT_BUF_INIT;
	struct kt_patch p;
	size_t i;
	int rc = 0;

	kt_patch_init(&p, NULL);
	for (i = 0; rc == 0; i++) {
		const struct kt_rec *r;
		struct kt_event ev;

		if (i == od->at && c->nadded > 0)
			rc = put_added(c, w, od->next);
		if (rc != 0 || i == c->nrecs)
			break;
		r = &c->recs[i];
		switch (role_of(r)) {
		case R_RETIRE:
			keep_retired(c, r, i);
			continue;
		case R_ACT:
		case R_SCOPE:
		case R_FLOW:
			held_event(c, i, &ev);
			rc = put_moved(c, w, r, &ev, &p, &pb);
			break;
		default:
			/* Kept as it is: its bytes. */
			rc = kt_writer_raw(w, held_bytes(c, i), r->len,
			    r->index);
		}
	}
	kt_cli_progress_done();
	kt_patch_free(&p);
	kt_buf_free(&pb);
	return rc;
}

/* What was done, per device, on standard error. */
static void
summary(struct cl *c, const char *report, uint64_t nretired)
{
	size_t i;

	kt_cli_report_repairs(c->inname, kt_reader_repairs(c->rd));
	if (c->already)
		kt_cli_warn("%s: already a compact view: written unchanged",
		    c->inname);
	for (i = 0; i < c->ndevs; i++) {
		const struct dev *d = &c->devs[i];
		char lbl[200], when[40];

		kt_time_format(d->peak_ts, 0, when);
		kt_cli_warn("%s: %s: %d stream row%s onto %d GPU lane%s (peak "
		    "%d at ts %s), %zu scope%s on %d row%s, %llu row%s "
		    "retired", c->inname, dev_label(c, d, lbl, sizeof(lbl)),
		    d->streams, d->streams == 1 ? "" : "s", d->lanes,
		    d->lanes == 1 ? "" : "s", d->peak, when, d->nscopes,
		    d->nscopes == 1 ? "" : "s", d->scope_rows,
		    d->scope_rows == 1 ? "" : "s",
		    (unsigned long long)d->retired_rows,
		    d->retired_rows == 1 ? "" : "s");
	}
	if (report == NULL && nretired > 0)
		kt_cli_warn("%s: no report (--report FILE): the %llu retired "
		    "metadata events are needed to restore the source",
		    c->inname, (unsigned long long)nretired);
}

#define BUFSZ	(1 << 16)

/* The gaps around the events of the source's bytes, as they come. */
struct framer {
	struct kt_buf	 gap, last;	/* this gap, the separator before */
	uint64_t	 run;		/* how many times last came */
	json_t		*seps;		/* [[count, text], ...] */
	json_t		*head;
	int		 bad;		/* not UTF-8 */
};

static json_t *
frame_text(struct framer *f, const struct kt_buf *b)
{
	json_t *j;

	if ((j = json_stringn(b->p != NULL ? b->p : "", b->n)) == NULL)
		f->bad = 1;
	return j;
}

static void
frame_sep(struct framer *f)
{
	if (f->run > 0)
		json_array_append_new(f->seps, json_pack("[I,o]",
		    (json_int_t)f->run, frame_text(f, &f->last)));
	f->run = 0;
}

static void
frame_gap(struct framer *f, size_t i)
{
	if (i == 0)
		f->head = frame_text(f, &f->gap);
	else if (f->run > 0 && f->gap.n == f->last.n &&
	    (f->gap.n == 0 || memcmp(f->gap.p, f->last.p, f->gap.n) == 0))
		f->run++;
	else {
		frame_sep(f);
		f->last.n = 0;
		kt_buf_add(&f->last, f->gap.p != NULL ? f->gap.p : "", f->gap.n);
		f->run = 1;
	}
	f->gap.n = 0;
}

/*
 * Read the trace's bytes again (c->fsrc, decompressed, out of its archive
 * member): their SHA-256 into c->tsha, and, unless c->why says why not,
 * the bytes around the events into c->frame (head, the separators between
 * events run-length coded, tail), each event's bytes compared with those
 * held, so that --restore can write the file back byte for byte.  0, or
 * -1 with c->ferr filled: a read error.
 */
static int
frame_build(struct cl *c)
{
	struct kt_reader *rd = c->frd;
	struct kt_sha256 sh;
	struct framer f;
	const char *ev = NULL;
	char *buf;
	uint64_t at = 0, start, take;
	size_t i = 0, k;
	int64_t n;
	int plain = c->tsha_sha;

	memset(&f, 0, sizeof(f));
	if ((buf = malloc(BUFSZ)) == NULL)
		nomem();
	if ((f.seps = json_array()) == NULL)
		nomem();
	kt_sha256_init(&sh);
	while ((n = kt_reader_read(rd, buf, BUFSZ, &c->ferr)) > 0) {
		kt_sha256_update(&sh, buf, (size_t)n);
		for (k = 0; k < (size_t)n && c->why[0] == '\0'; k += take,
		    at += take) {
			if (i == c->nrecs) {
				take = (size_t)n - k;
				kt_buf_add(&f.gap, buf + k, take);
				continue;
			}
			start = c->evend[i] - c->recs[i].len;
			if (at < start) {
				take = start - at < (size_t)n - k ?
				    start - at : (size_t)n - k;
				kt_buf_add(&f.gap, buf + k, take);
				continue;
			}
			take = c->evend[i] - at < (size_t)n - k ?
			    c->evend[i] - at : (size_t)n - k;
			/*
			 * Held as its place in this same file (a plain one):
			 * those bytes are these, nothing to compare (the
			 * file is checked unchanged before the output is
			 * committed).
			 */
			if (ev == NULL && !(plain &&
			    kt_store_end(c->store, i) == c->evend[i]))
				ev = held_bytes(c, i);
			if (ev != NULL &&
			    memcmp(buf + k, ev + (at - start), take) != 0) {
				snprintf(c->why, sizeof(c->why), "row %llu is "
				    "not the file's bytes where the reader "
				    "found it", (unsigned long long)
				    c->recs[i].index);
				break;
			}
			if (at + take == c->evend[i]) {
				frame_gap(&f, i++);
				ev = NULL;
			}
		}
	}
	if (n == -1) {
		json_decref(f.seps);
		kt_buf_free(&f.gap);
		kt_buf_free(&f.last);
		free(buf);
		return -1;
	}
	kt_sha256_hex(&sh, c->tsha);
	if (c->why[0] == '\0' && i < c->nrecs)
		snprintf(c->why, sizeof(c->why), "the trace's bytes end "
		    "before its events do");
	if (c->why[0] == '\0') {
		json_t *tail;

		frame_sep(&f);
		tail = frame_text(&f, &f.gap);
		if (c->nrecs == 0)
			f.head = NULL;
		if (f.gap.err || f.last.err)
			nomem();
		if (f.bad)
			snprintf(c->why, sizeof(c->why), "the bytes around "
			    "the events are not UTF-8 (a report is JSON)");
		else
			c->frame = json_pack("{s:o,s:o,s:o}", "head",
			    f.head != NULL ? f.head : json_string(""),
			    "separators", f.seps, "tail", tail);
		if (f.bad) {
			json_decref(f.head);
			json_decref(f.seps);
			json_decref(tail);
		}
	} else {
		json_decref(f.head);
		json_decref(f.seps);
	}
	kt_buf_free(&f.gap);
	kt_buf_free(&f.last);
	free(buf);
	return 0;
}

static void *
frame_run(void *arg)
{
	struct cl *c = arg;

	c->frc = frame_build(c);
	return NULL;
}

/*
 * Open the trace again for frame_build and start it: on a thread for a
 * plain file (its SHA-256 is the file's too: no hashing job), else
 * beside the job hashing the file, here.
 */
static void
frame_start(struct cl *c, const char *path)
{
	struct kt_error err;

	if ((c->fsrc = kt_cli_source_open(path, c->o.co.member,
	    c->o.co.rflags, &err)) == NULL ||
	    kt_source_next(c->fsrc, &c->frd, &err) != 1)
		kt_cli_die(&err);
	c->tsha_sha = kt_source_plain(c->fsrc);
	if (!c->tsha_sha && (c->hash = kt_sha256_start(path,
	    kt_cli_threads())) == NULL)
		nomem();
	if (c->tsha_sha && kt_cli_threads() &&
	    pthread_create(&c->fth, NULL, frame_run, c) == 0)
		c->fthread = 1;
	else
		c->frc = frame_build(c);
}

/* Wait for frame_build and the hashing job: c->sha and c->tsha set. */
static void
frame_wait(struct cl *c)
{
	struct kt_error err;

	if (c->fthread)
		pthread_join(c->fth, NULL);
	c->fthread = 0;
	if (c->frc == -1)
		kt_cli_die(&c->ferr);
	kt_reader_free(c->frd);
	kt_source_close(c->fsrc);
	c->frd = NULL;
	c->fsrc = NULL;
	if (c->hash != NULL) {
		if (kt_sha256_wait(c->hash, c->sha, &err) == -1)
			kt_cli_die(&err);
		c->hash = NULL;
	}
	/* A plain file's bytes are the trace's. */
	if (c->tsha_sha)
		memcpy(c->sha, c->tsha, sizeof(c->sha));
}

static int
compact(struct cl *c, struct kt_source *src, const char *inpath)
{
	struct kt_error err;
	struct kt_out *out, *ro = NULL;
	struct kt_writer *w;
	struct kt_meta *metas;
	struct kt_buf top = KT_BUF_INIT;
	struct order od;
	uint64_t nretired = 0;
	size_t nm;
	int rc = 0;
	char rpath[4200];
	const char *report, *outname = c->o.co.output ? c->o.co.output :
	    "<stdout>";
	json_t *rep;

	read_all(c);
	/* What was read is what is written: the file must not change. */
	if (kt_hold_check(c->holder, &err) == -1)
		kt_cli_die(&err);
	kt_cli_one_trace(src, c->inname, "holds several traces; pick one with "
	    "--member or merge them with kt rank-tag", 1);
	/* The SHA-256 is for the report: no report, no hashing. */
	if (c->framing)
		frame_start(c, inpath);
	c->already = c->already || is_compact(c);
	if (!c->already)
		nretired = plan(c);
	report = report_path(c, inpath, rpath, sizeof(rpath));
	row_order(c, &od);
	out = kt_cli_out_open(c->o.co.output, c->o.co.level);
	if ((w = kt_writer_new(out, 0)) == NULL)
		nomem();
	/* A view of a view is its input unchanged: no ktRank then. */
	if (!c->already)
		(void)kt_cli_keep_rank(w, c->rd);
	metas = out_metas(c, &nm);
	if (kt_writer_begin(w, metas, nm, od.identity || od.at_end ? NULL :
	    od.rows, od.n) == -1)
		rc = -1;
	if (rc == 0)
		rc = write_events(c, w, &od);
	if (c->framing)
		frame_wait(c);
	if (!c->already)
		compact_meta(c, &metas[nm - 1], &top, nretired, report);
	if (rc == 0)
		rc = kt_writer_end_index(w, metas, nm, od.identity ||
		    !od.at_end ? NULL : od.rows, od.n);
	/* The events were read again as they were written: still the same? */
	if (rc == 0 && kt_hold_check(c->holder, &err) == -1)
		kt_cli_die(&err);
	if (rc == 0 && report != NULL) {
		rep = report_json(c, nretired, od.n, outname);
		ro = open_report(report, rep);
		json_decref(rep);
	}
	/* Both or neither: a failure removes the report too. */
	kt_error_set(&err, outname, 0, 0, "write error");
	kt_cli_out_commit(out, rc == -1, &err);
	if (ro != NULL)
		kt_cli_out_commit(ro, 0, &err);
	summary(c, report, nretired);
	kt_buf_free(&top);
	kt_writer_free(w);
	free(metas);
	free(od.rows);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Restore. */

/* What the report of a compact view says. */
struct rreport {
	json_t		*rep;		/* its DOM: ret[].text are in it */
	struct retired	*ret;		/* the retired events, by position */
	size_t		 nret;
	uint64_t	 want;		/* the source's events, */
	int		 have_want;	/* when it says */
	int		 after;		/* ktSourceIndex after the events */
	json_t		*frame;		/* the bytes around the events, */
	const char	*tsha;		/* and the SHA-256 they give, */
	const char	*why;		/* or why there are none */
};

/*
 * Where restored events go: through a writer (its own layout), or, with
 * the report's frame, as the source's bytes themselves, hashed.
 */
struct remit {
	struct kt_writer *w;
	struct kt_out	*out;		/* NULL: through w */
	struct kt_sha256 sh;
	json_t		*seps;		/* [[count, text], ...] */
	size_t		 sep;		/* the run of the next separator */
	json_int_t	 left;		/* its uses left */
	uint64_t	 n;		/* events written */
	int		 misfit;	/* more events than separators */
};

/*
 * Put back the source text of moved event ev (compact view) into out,
 * with patch p, then check with patch q that moving it again gives ev's
 * bytes.  0 or -1.
 */
static int
unpatch(const struct kt_event *ev, struct kt_patch *p, struct kt_patch *q,
    struct kt_buf *out, struct kt_buf *chk)
{
	struct kt_val args = ev->f[KT_F_ARGS], tv, pv, iv, av;
	const char *raw = ev->raw;
	int form = 0, rc;	/* 0 plain, 1 absent, 2 null */
	struct kt_event src;

	if (kt_event_find(ev, &args, TRACK_KEY, &tv) == -1 ||
	    tv.type != KT_OBJECT ||
	    kt_event_find(ev, &tv, "pid", &pv) == -1 ||
	    kt_event_find(ev, &tv, "tid", &iv) == -1)
		return -1;
	if (kt_event_find(ev, &tv, "args", &av) == 0) {
		if (av.len == 8 && memcmp(raw + av.off, "\"absent\"", 8) == 0)
			form = 1;
		else if (av.len == 6 && memcmp(raw + av.off, "\"null\"", 6) ==
		    0)
			form = 2;
		else
			return -1;
	}
	/* Our mark is the first member of args, right after its brace. */
	if (raw[args.off + 1] != '"' || args.off + 1 + 22 != tv.off)
		return -1;
	kt_patch_reset(p, ev);
	if (form == 0)
		rc = kt_patch_arg_remove(p, TRACK_KEY);
	else if (raw[tv.off + tv.len] != '}')
		return -1;	/* the args member itself was added */
	else if (form == 2)
		rc = kt_patch_set(p, KT_F_ARGS, "null", 4);
	else if (args.off != 1 + 8 || memcmp(raw + 1, "\"args\": ", 8) != 0)
		return -1;	/* inserted first: {"args": {...}, ... */
	else
		rc = kt_patch_remove(p, KT_F_ARGS);
	rc |= kt_patch_set(p, KT_F_PID, raw + pv.off, pv.len);
	rc |= kt_patch_set(p, KT_F_TID, raw + iv.off, iv.len);
	/* The source event, its fields located from the patch. */
	out->n = 0;
	if (rc != 0 || kt_patch_apply_event(p, out, &src) == -1) {
		if (out->err)
			nomem();
		return -1;
	}
	/* The proof: moving it again gives the compact view's bytes. */
	kt_patch_reset(q, &src);
	chk->n = 0;
	if (kt_patch_set(q, KT_F_PID, raw + ev->f[KT_F_PID].off,
	    ev->f[KT_F_PID].len) == -1 ||
	    kt_patch_set(q, KT_F_TID, raw + ev->f[KT_F_TID].off,
	    ev->f[KT_F_TID].len) == -1 ||
	    kt_patch_arg_add(q, TRACK_KEY, raw + tv.off, tv.len) == -1 ||
	    kt_patch_apply(q, chk) == -1)
		return -1;
	if (chk->n != ev->len || memcmp(chk->p, raw, ev->len) != 0)
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

/*
 * Are held event ev's args longer than min bytes, and do they begin with
 * text s (n bytes)?
 */
static int
held_args_begin(const struct kt_event *ev, size_t min, const char *s,
    size_t n)
{
	const struct kt_val *a = &ev->f[KT_F_ARGS];

	return a->type == KT_OBJECT && a->len > min &&
	    memcmp(ev->raw + a->off, s, n) == 0;
}

/*
 * The report of the view: --report, else FILE.compact.json beside the
 * view, else the one the view names when it is there; NULL: none.
 */
static const char *
restore_report_path(struct cl *c, const char *path, json_t *topj,
    char *rpath, size_t cap)
{
	const char *report = c->o.report;
	struct stat st;
	json_t *jv;

	if (report == NULL && path != NULL && strcmp(path, "-") != 0) {
		snprintf(rpath, cap, "%s.compact.json", path);
		if (stat(rpath, &st) == 0)
			report = rpath;
	}
	if (report == NULL) {
		jv = json_object_get(topj, "report");
		if (json_is_string(jv) && stat(json_string_value(jv), &st) == 0)
			report = json_string_value(jv);
	}
	return report;
}

/*
 * Load the report of the view (top-level key topj) into rr.  Returns 1
 * when it says that the compaction wrote its input unchanged, else 0.
 */
static int
load_report(struct cl *c, const char *report, json_t *topj,
    struct rreport *rr)
{
	struct kt_error err;
	json_error_t je;
	json_t *a, *jv;
	size_t i;

	if ((rr->rep = json_load_file(report, 0, &je)) == NULL) {
		kt_error_set(&err, report, je.line, je.column, "%s", je.text);
		kt_cli_die(&err);
	}
	jv = json_object_get(rr->rep, "restore");
	rr->frame = json_object_get(jv, "frame");
	rr->tsha = json_string_value(json_object_get(jv, "traceSha256"));
	rr->why = json_string_value(json_object_get(jv, "why"));
	if (rr->frame != NULL && (rr->tsha == NULL ||
	    !json_is_string(json_object_get(rr->frame, "head")) ||
	    !json_is_string(json_object_get(rr->frame, "tail")) ||
	    !json_is_array(json_object_get(rr->frame, "separators")))) {
		kt_cli_warn("%s: restore.frame is not a head, separators and "
		    "tail with a traceSha256", report);
		kt_cli_die(NULL);
	}
	if (json_is_true(json_object_get(rr->rep, "alreadyCompact")))
		return 1;
	if (json_object_get(topj, "inputSha256") == NULL) {
		kt_cli_warn("%s: the view was written without a report",
		    c->inname);
		kt_cli_die(NULL);
	}
	if (!json_equal(json_object_get(rr->rep, "inputSha256"),
	    json_object_get(topj, "inputSha256"))) {
		kt_cli_warn("%s: %s is the report of another compact view "
		    "(inputSha256 differs)", c->inname, report);
		kt_cli_die(NULL);
	}
	a = json_object_get(rr->rep, "retired");
	rr->nret = json_array_size(a);
	if ((rr->ret = calloc(rr->nret + 1, sizeof(*rr->ret))) == NULL)
		nomem();
	for (i = 0; i < rr->nret; i++) {
		json_t *e = json_array_get(a, i);
		json_t *ps = json_object_get(e, "position");
		json_t *rw = json_object_get(e, "row");
		json_t *tx = json_object_get(e, "event");

		if (!json_is_integer(ps) || !json_is_integer(rw) ||
		    !json_is_string(tx) || json_integer_value(ps) < 0 ||
		    (i > 0 && (uint64_t)json_integer_value(ps) <=
		    rr->ret[i - 1].position)) {
			kt_cli_warn("%s: retired[%zu] is not a position, row "
			    "and event", report, i);
			kt_cli_die(NULL);
		}
		rr->ret[i].position = (uint64_t)json_integer_value(ps);
		rr->ret[i].row = (uint64_t)json_integer_value(rw);
		rr->ret[i].text = json_string_value(tx);
		rr->ret[i].len = json_string_length(tx);
	}
	jv = json_object_get(json_object_get(rr->rep, "restore"),
	    "sourceEvents");
	if (json_is_integer(jv)) {
		rr->want = (uint64_t)json_integer_value(jv);
		rr->have_want = 1;
	}
	jv = json_object_get(json_object_get(rr->rep, "restore"),
	    "sourceIndex");
	rr->after = json_is_string(jv) && strcmp(json_string_value(jv),
	    "after") == 0;
	return 0;
}

/*
 * The source's row numbers, in its order: the view's events but the
 * added ones, the retired ones at their positions.  A new array of
 * *nrows.
 */
static uint64_t *
source_rows(struct cl *c, const struct rreport *rr, size_t *nrows)
{
	static const char added[] = "{\"" ADDED_KEY "\"";
	uint64_t *rows;
	size_t i, ri = 0, n = 0;

	if ((rows = malloc((c->nrecs + rr->nret + 1) * sizeof(*rows))) ==
	    NULL)
		nomem();
	for (i = 0; i < c->nrecs; i++) {
		struct kt_event ev;

		held_event(c, i, &ev);
		if (held_args_begin(&ev, 24, added, sizeof(added) - 1))
			continue;
		while (ri < rr->nret && rr->ret[ri].position == n)
			rows[n++] = rr->ret[ri++].row;
		rows[n++] = c->recs[i].index;
	}
	while (ri < rr->nret && rr->ret[ri].position == n)
		rows[n++] = rr->ret[ri++].row;
	if (ri < rr->nret || (rr->have_want && n != rr->want)) {
		kt_cli_warn("%s: the report does not fit: %llu events "
		    "restored, the source had %llu", c->inname,
		    (unsigned long long)n, (unsigned long long)rr->want);
		kt_cli_die(NULL);
	}
	*nrows = n;
	return rows;
}

/* Raw bytes of the restored file, hashed as they are written. */
static int
remit_bytes(struct remit *e, const char *p, size_t n)
{
	kt_sha256_update(&e->sh, p, n);
	return kt_out_write(e->out, p, n);
}

/* A JSON string of the frame, as its bytes. */
static int
remit_text(struct remit *e, json_t *j)
{
	return remit_bytes(e, json_string_value(j), json_string_length(j));
}

/*
 * Restored event p[0..n) (row row; an event of the report if retired):
 * after the separator the source had before it, or through the writer.
 */
static int
remit_event(struct remit *e, const char *p, size_t n, uint64_t row,
    int retired)
{
	struct kt_event ev;
	json_t *run;

	if (e->out == NULL) {
		if (!retired)
			return kt_writer_raw(e->w, p, n, row);
		memset(&ev, 0, sizeof(ev));
		ev.raw = p;
		ev.len = n;
		ev.index = row;
		return kt_writer_event(e->w, &ev);
	}
	if (e->n++ > 0) {
		while (e->left == 0) {
			run = json_array_get(e->seps, e->sep++);
			if (run == NULL) {
				e->misfit = 1;
				return remit_bytes(e, p, n);
			}
			e->left = json_integer_value(json_array_get(run, 0));
			if (e->left < 0)
				e->left = 0;
		}
		e->left--;
		if (remit_text(e, json_array_get(json_array_get(e->seps,
		    e->sep - 1), 1)) == -1)
			return -1;
	}
	return remit_bytes(e, p, n);
}

/*
 * Write the source's events: the retired ones at their positions, the
 * moved ones put back, the added ones left out.
 */
static int
restore_events(struct cl *c, struct remit *w, const struct rreport *rr)
{
	static const char mark[] = "{\"_compact_gpu_";
	struct kt_buf ub = KT_BUF_INIT, chk = KT_BUF_INIT;
	struct kt_patch p, q;
	struct kt_event ev;
	uint64_t pos = 0, bad = 0;
	size_t i, ri = 0;
	int rc = 0;

	kt_patch_init(&p, NULL);
	kt_patch_init(&q, NULL);
	for (i = 0; i <= c->nrecs && rc == 0; i++) {
		const struct kt_rec *r;

		while (rc == 0 && ri < rr->nret && rr->ret[ri].position ==
		    pos) {
			rc = remit_event(w, rr->ret[ri].text, rr->ret[ri].len,
			    rr->ret[ri].row, 1);
			ri++;
			pos++;
		}
		if (i == c->nrecs || rc != 0)
			break;
		r = &c->recs[i];
		held_event(c, i, &ev);
		if (held_args_begin(&ev, 20, mark, sizeof(mark) - 1)) {
			/* Its pid, tid and args are all unpatch() needs. */
			if (marked(&ev, ADDED_KEY))
				continue;
			if (marked(&ev, TRACK_KEY)) {
				if (unpatch(&ev, &p, &q, &ub, &chk) == -1) {
					if (bad++ < 5)
						kt_cli_warn("%s: row %llu: "
						    "cannot put the event back "
						    "exactly", c->inname,
						    (unsigned long long)
						    r->index);
					pos++;
					continue;
				}
				ev.raw = ub.p;
				ev.len = ub.n;
			}
		}
		rc = remit_event(w, ev.raw, ev.len, r->index, 0);
		pos++;
	}
	kt_patch_free(&p);
	kt_patch_free(&q);
	kt_buf_free(&ub);
	kt_buf_free(&chk);
	if (bad > 0) {
		kt_cli_warn("%s: %llu events cannot be restored exactly",
		    c->inname, (unsigned long long)bad);
		kt_cli_die(NULL);
	}
	return rc;
}

/* The compaction wrote its input unchanged: so does the restore. */
static int
identity_copy(struct cl *c)
{
	struct kt_error err;
	struct kt_out *out;
	struct kt_writer *w;
	const struct kt_meta *m;
	struct kt_rows si;
	uint64_t *rows;
	size_t i, nm;
	int rc, applied, hassi;

	out = kt_cli_out_open(c->o.co.output, c->o.co.level);
	if ((w = kt_writer_new(out, 0)) == NULL)
		nomem();
	m = kt_reader_metas(c->rd, &nm);
	hassi = kt_reader_rows(c->rd, &si, &applied);
	if ((rows = malloc((c->nrecs + 1) * sizeof(*rows))) == NULL)
		nomem();
	for (i = 0; i < c->nrecs; i++)
		rows[i] = c->recs[i].index;
	rc = kt_writer_begin(w, m, nm, hassi && applied ? rows : NULL,
	    c->nrecs);
	for (i = 0; i < c->nrecs && rc == 0; i++)
		rc = kt_writer_raw(w, held_bytes(c, i), c->recs[i].len,
		    c->recs[i].index);
	if (rc == 0)
		rc = kt_writer_end_index(w, m, nm, hassi && !applied ?
		    rows : NULL, c->nrecs);
	kt_cli_out_commit(out, rc == -1, &err);
	kt_writer_free(w);
	free(rows);
	return 0;
}

/*
 * The source's file itself: the frame's head, the events each after the
 * separator the source had before it, the tail; its SHA-256 must be the
 * one the report recorded, else the output is removed.
 */
static int
restore_bytes(struct cl *c, struct rreport *rr, int identity)
{
	struct kt_error err;
	struct remit em;
	uint64_t *rows;
	size_t i, nrows;
	char hex[65];
	int rc;

	if (!identity) {
		rows = source_rows(c, rr, &nrows);	/* it checks the count */
		free(rows);
	}
	memset(&em, 0, sizeof(em));
	em.seps = json_object_get(rr->frame, "separators");
	kt_sha256_init(&em.sh);
	em.out = kt_cli_out_open(c->o.co.output, c->o.co.level);
	rc = remit_text(&em, json_object_get(rr->frame, "head"));
	if (rc == 0 && !identity)
		rc = restore_events(c, &em, rr);
	/* A compact view already: its events as they are. */
	for (i = 0; identity && i < c->nrecs && rc == 0; i++)
		rc = remit_event(&em, held_bytes(c, i), c->recs[i].len,
		    c->recs[i].index, 0);
	if (rc == 0)
		rc = remit_text(&em, json_object_get(rr->frame, "tail"));
	kt_sha256_hex(&em.sh, hex);
	if (rc == 0 && (em.misfit || em.left != 0 ||
	    json_array_get(em.seps, em.sep) != NULL)) {
		kt_error_set(&err, c->inname, 0, 0, "the report's separators "
		    "do not fit the %llu events restored",
		    (unsigned long long)em.n);
		kt_cli_out_commit(em.out, 1, &err);
	}
	if (rc == 0 && strcmp(hex, rr->tsha) != 0) {
		kt_error_set(&err, c->inname, 0, 0, "the bytes restored are "
		    "not the source's (SHA-256 %s, the report says %s)", hex,
		    rr->tsha);
		kt_cli_out_commit(em.out, 1, &err);
	}
	kt_error_set(&err, c->o.co.output ? c->o.co.output : "<stdout>", 0,
	    0, "write error");
	kt_cli_out_commit(em.out, rc == -1, &err);
	free(rr->ret);
	json_decref(rr->rep);
	return 0;
}

static int
restore(struct cl *c, struct kt_source *src, const char *path)
{
	struct kt_error err;
	struct kt_out *out;
	struct kt_writer *w;
	const struct kt_meta *top, *m;
	struct kt_meta *metas;
	struct kt_reader *again;
	struct rreport rr;
	struct remit em;
	json_t *topj, *jv;
	size_t i, nm, k, nrows;
	uint64_t *rows;
	int rc = 0, identity = 1;
	char rpath[4200];
	const char *report;

	memset(&rr, 0, sizeof(rr));
	read_all(c);
	if (kt_source_next(src, &again, &err) != 0) {
		kt_cli_warn("%s: one trace at a time", c->inname);
		kt_cli_die(NULL);
	}
	if ((top = kt_reader_meta_find(c->rd, KT_KEY_COMPACT)) == NULL) {
		kt_cli_warn("%s: not a compact view (no %s key)", c->inname,
		    KT_KEY_COMPACT);
		kt_cli_die(NULL);
	}
	if ((topj = kt_meta_json(top, &err)) == NULL)
		kt_cli_die(&err);
	report = restore_report_path(c, path, topj, rpath, sizeof(rpath));
	if (report != NULL && load_report(c, report, topj, &rr) == 1) {
		json_decref(topj);
		if (rr.frame != NULL)
			return restore_bytes(c, &rr, 1);
		json_decref(rr.rep);
		return identity_copy(c);
	}
	if (report == NULL) {
		jv = json_object_get(topj, "retired");
		if (json_is_integer(jv) && json_integer_value(jv) > 0) {
			kt_cli_warn("%s: %lld retired metadata events are in "
			    "the report: give it with --report", c->inname,
			    (long long)json_integer_value(jv));
			kt_cli_die(NULL);
		}
	}
	json_decref(topj);
	if (rr.frame != NULL)
		return restore_bytes(c, &rr, 0);
	/* The events only: say why the file's bytes cannot come back. */
	kt_cli_warn("%s: the source's events are restored, not its file's "
	    "bytes: %s", c->inname, report == NULL ? "no report" :
	    rr.why != NULL ? rr.why : "the report has no restore.frame "
	    "(an older kt-compact-lanes wrote it)");
	out = kt_cli_out_open(c->o.co.output, c->o.co.level);
	if ((w = kt_writer_new(out, 0)) == NULL)
		nomem();
	memset(&em, 0, sizeof(em));
	em.w = w;
	m = kt_reader_metas(c->rd, &nm);
	if ((metas = calloc(nm + 1, sizeof(*metas))) == NULL)
		nomem();
	for (i = k = 0; i < nm; i++)
		if (&m[i] != top)
			metas[k++] = m[i];
	nm = k;
	/* First the rows, to know whether to write ktSourceIndex. */
	rows = source_rows(c, &rr, &nrows);
	for (i = 0; i < nrows && identity; i++)
		identity = rows[i] == i;
	if (kt_writer_begin(w, metas, nm, identity || rr.after ? NULL : rows,
	    nrows) == -1)
		rc = -1;
	if (rc == 0)
		rc = restore_events(c, &em, &rr);
	if (rc == 0)
		rc = kt_writer_end_index(w, metas, nm, identity || !rr.after ?
		    NULL : rows, nrows);
	kt_cli_out_commit(out, rc == -1, &err);
	kt_writer_free(w);
	free(metas);
	free(rows);
	free(rr.ret);
	json_decref(rr.rep);
	return 0;
}

/* A new run with the default options. */
static struct cl *
cl_new(void)
{
	struct cl *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		nomem();
	c->o.co.level = -1;
	c->o.max_lanes = 10;
	c->inname = "<stdin>";
	c->lastx = NONE;
	return c;
}

static void
cl_free(struct cl *c)
{
	size_t i;

	for (i = 0; i < c->ndevs; i++)
		free(c->devs[i].peak_items);
	free(c->devs);
	free(c->devacts);
	kt_store_free(c->store);
	free(c->acts);
	free(c->scopes);
	free(c->thrs);
	free(c->pidis);
	free(c->rets);
	kt_buf_free(&c->uname);
	kt_buf_free(&c->added);
	kt_buf_free(&c->margs);
	kt_rules_free(c->rules);
	kt_intern_free(c->names);
	free(c->namegrp);
	kt_intern_free(c->pids);
	kt_arena_free(c->arena);
	kt_hold_free(c->holder);
	free(c->evend);
	json_decref(c->frame);
	free(c);
}

/* The options into c->o; returns optind. */
static int
parse_opts(struct cl *c, int argc, char *argv[])
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
		{ "spool-max", required_argument, NULL, KT_CLI_SPOOL_MAX },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "ghl:m:n:o:r:RSV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'g':
			c->o.group = 1;
			break;
		case 'n':
			c->o.max_lanes = kt_cli_int("--max-gpu-lanes", optarg,
			    1, 100000);
			break;
		case 'r':
			c->o.report = optarg;
			break;
		case 'R':
			c->o.restore = 1;
			break;
		default:
			kt_cli_opt(&c->o.co, ch, optarg, usage);
		}
	}
	return optind;
}

int
main(int argc, char *argv[])
{
	struct cl *c;
	struct kt_source *src;
	const char *path;
	char *readpath, rbuf[4200];
	int rc, want_report, n;

	kt_cli_init("kt-compact-lanes");
	c = cl_new();
	n = parse_opts(c, argc, argv);
	argc -= n;
	argv += n;
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		usage(stderr);
		goto usage_error;
	}
	if (c->o.restore && c->o.group) {
		kt_cli_warn("--restore takes no --group");
		goto usage_error;
	}
	path = argc == 1 ? argv[0] : "-";
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(c->o.co.output, argv, argc) == -1)
		goto usage_error;
	if (c->o.report != NULL && !c->o.restore &&
	    kt_cli_check_output(c->o.report, argv, argc) == -1)
		goto usage_error;
	if (kt_cli_check_level(c->o.co.level, c->o.co.output) == -1)
		goto usage_error;
	want_report = !c->o.restore && (c->o.report != NULL ||
	    kt_cli_report_beside(c->o.co.output, "", rbuf, sizeof(rbuf)));
	readpath = (char *)path;
	if (strcmp(path, "-") != 0)
		c->inname = path;
	/*
	 * The input is hashed too: stdin, a FIFO or a pipe is copied once
	 * first, so that the hash and the read see the same bytes.
	 */
	if (want_report)
		readpath = kt_cli_input_path(readpath);
	if ((c->holder = kt_hold_new(c->o.restore ? NULL : readpath,
	    c->inname)) == NULL)
		nomem();
	c->framing = want_report;
	c->rd = kt_cli_open_one(readpath, c->inname, c->o.co.member,
	    c->o.co.rflags, &src);
	if ((c->arena = kt_arena_new()) == NULL ||
	    (c->store = kt_store_new(KT_STORE_THREADS, KT_FBIT(KT_F_PID) |
	    KT_FBIT(KT_F_TID) | KT_FBIT(KT_F_ARGS), c->holder)) == NULL ||
	    (c->pids = kt_intern_new()) == NULL ||
	    (c->o.group && ((c->rules = kt_rules_new(1)) == NULL ||
	    (c->names = kt_intern_new()) == NULL)))
		nomem();
	c->threads = kt_store_threads(c->store);
	rc = c->o.restore ? restore(c, src, path) : compact(c, src, readpath);
	kt_reader_free(c->rd);
	kt_source_close(src);
	cl_free(c);
	return rc;

usage_error:
	cl_free(c);
	return 2;
}
