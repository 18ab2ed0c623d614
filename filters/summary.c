/*
 * kt-summary: the inventory of a trace, the table a user reads first:
 * its time span, the events of each kind and phase, its ranks, devices
 * and streams, its steps, what it holds (steps, memory, Python stacks,
 * flows, shapes, collectives, CUDA graphs) and so what each kt view can
 * and cannot say about it.  One pass over the events, keeping counts
 * and one record per distinct rank, device, stream, thread and step, so
 * that memory grows with those and never with the events.  The events
 * are read and scanned on every CPU where there are several (kt_ahead).
 * kt-summary(1) defines every row.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-summary [-jStTV] [-m glob] [-o file] [file]\n"
	    "  -j, --json          JSON lines\n"
	    "  -m, --member GLOB   archive members to take\n"
	    "  -o, --output FILE   write FILE atomically\n"
	    "  -S, --strict        refuse damaged input\n"
	    "  -T, --text          an aligned text table\n"
	    "  -t, --tsv           TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* A GPU device: one per (rank, GPU pid), as in the analysis model. */
struct dev {
	int64_t		 rank;		/* kt_event_rank, -1: the trace's */
	int64_t		 index;		/* args.device, else the pid, or -1 */
	uint64_t	 n[3];		/* kernels, gpu_memcpy, gpu_memset */
	uint32_t	 nstreams;
};

/* A stream of a device (args.stream, else the tid). */
struct stream {
	uint32_t	 dev;
	int64_t		 stream;
	uint64_t	 nact;
	uint64_t	 kernels;
};

struct rank {
	int64_t		 rank;
	uint64_t	 events;
	uint64_t	 threads;
	uint64_t	 devices;
};

struct step {
	int64_t		 number;	/* N of ProfilerStep#N, or -1 */
	int64_t		 dur;
};

/* A growable array of records of one size. */
struct vec {
	void		*p;
	size_t		 n;
	size_t		 cap;
};

/*
 * Kernel names seen lately and whether the bucket rules call them
 * communication: the rules are regexes, and a trace runs the same few
 * hundred kernels again and again.  Fixed size, so memory stays bounded.
 */
#define NCACHE	512
struct cached {
	struct kt_buf	 raw;		/* the name's raw JSON text */
	int		 comm;
	int		 set;
};

/* The filter's state: counts, and a record per distinct thing. */
struct sum {
	struct kt_rules	*rs;
	struct kt_intern *devkeys;	/* "rank\1pid" -> devs */
	struct kt_intern *streamkeys;	/* "dev\1stream" -> streams */
	struct kt_intern *threadkeys;	/* "rank\1pid\ttid" -> threads */
	struct kt_intern *rankkeys;	/* the rank's 8 bytes -> ranks */
	struct kt_pidrank *pidrank;	/* a flow's rank: its pid's */
	struct vec	 devs, streams, ranks, steps;
	struct vec	 thread_rank;	/* int64_t rank of each thread */
	struct cached	*cache;
	struct kt_buf	 key, name;
	/* The last event's ids: a trace's events come in runs of one. */
	struct kt_idmemo threadmemo, devmemo;
	int64_t		 last_rank;
	uint32_t	 last_rid;	/* last_rank's, or KT_NO */
	uint32_t	 last_sv;	/* last_dv's last_stream, or KT_NO */
	uint32_t	 last_dv;
	int64_t		 last_stream;

	uint64_t	 events;
	uint64_t	 kind[KT_NKINDS];
	uint64_t	 complete[KT_NKINDS];	/* X events with a dur */
	int64_t		 dur[KT_NKINDS];	/* their summed dur, ns */
	uint64_t	 ph[256];
	int		 timed;			/* an event had a ts */
	int64_t		 first_ts, last_end;

	uint64_t	 nact;		/* X GPU activities with a ts */
	uint64_t	 act_corr;	/* ... with args.correlation */
	uint64_t	 kernel_corr;	/* kernels with args.correlation */
	uint64_t	 call_corr;	/* runtime, driver calls with it */
	uint64_t	 comm;		/* communication kernels (rules) */
	uint64_t	 comm_seq;	/* ... with args.Seq or Comms Id */
	uint64_t	 comm_size;	/* ... with msg nelems or bytes */
	uint64_t	 graph_kernels;	/* kernels with args."graph id" */
	uint64_t	 graph_launches; /* cudaGraphLaunch, hipGraphLaunch */
	uint64_t	 call_stack;	/* cpu_ops with args."Call stack" */
	uint64_t	 input_dims;	/* cpu_ops with args."Input Dims" */
	uint64_t	 ac2g;		/* flow events of cat ac2g */
	uint64_t	 cpu_spans;	/* X cpu_op events */
};

static void *
vec_push(struct vec *v, size_t sz)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		void *p;

		if ((p = realloc(v->p, cap * sz)) == NULL)
			kt_cli_nomem();
		v->p = p;
		v->cap = cap;
	}
	return (char *)v->p + sz * v->n++;
}

/* Whether the raw args of ev hold the text s (a key, with its quotes). */
static int
args_have(const struct kt_event *ev, const char *s)
{
	const struct kt_val *a = &ev->f[KT_F_ARGS];

	return a->type == KT_OBJECT &&
	    kt_memfind(ev->raw + a->off, a->len, s, strlen(s)) != NULL;
}

/* An integer field, or dflt when absent or not one. */
static int64_t
int_or(const struct kt_event *ev, enum kt_field f, int64_t dflt)
{
	int64_t v;

	if (ev->f[f].type == KT_NONE || kt_event_field_int(ev, f, &v) == -1)
		return dflt;
	return v;
}

/* The id of the key in s->key in in, made when new (*fresh says so). */
static uint32_t
key_id(struct sum *s, struct kt_intern *in, int *fresh)
{
	size_t cnt = kt_intern_count(in);
	int64_t id;

	if ((id = kt_intern_put(in, s->key.p, s->key.n)) == -1)
		kt_cli_nomem();
	*fresh = (size_t)id >= cnt;
	return (uint32_t)id;
}

static void
key_start(struct sum *s, int64_t rank)
{
	char num[32];

	kt_buf_clear(&s->key);
	kt_buf_add(&s->key, num, kt_int_format(rank, num));
	kt_buf_addc(&s->key, '\001');
}

static void
count_rank(struct sum *s, int64_t rank)
{
	struct rank *r;
	int fresh;
	uint32_t id;

	if (s->last_rid != KT_NO && rank == s->last_rank) {
		((struct rank *)s->ranks.p)[s->last_rid].events++;
		return;
	}
	kt_buf_clear(&s->key);
	kt_buf_add(&s->key, &rank, sizeof(rank));
	if (s->key.err)
		kt_cli_nomem();
	id = key_id(s, s->rankkeys, &fresh);
	if (fresh) {
		r = vec_push(&s->ranks, sizeof(*r));
		memset(r, 0, sizeof(*r));
		r->rank = rank;
	}
	((struct rank *)s->ranks.p)[id].events++;
	s->last_rank = rank;
	s->last_rid = id;
}

/* A CPU span's thread (pid, tid of its rank), counted once. */
static void
count_thread(struct sum *s, const struct kt_event *ev, int64_t rank)
{
	int fresh;
	uint32_t id;

	if (kt_idmemo_hit(&s->threadmemo, ev, rank, 1, &id))
		return;
	key_start(s, rank);
	kt_event_thread_key(ev, &s->key);
	if (s->key.err)
		kt_cli_nomem();
	id = key_id(s, s->threadkeys, &fresh);
	kt_idmemo_keep(&s->threadmemo, ev, rank, 1, id);
	if (fresh)
		*(int64_t *)vec_push(&s->thread_rank, sizeof(int64_t)) = rank;
}

/* The device and stream of a GPU activity, counted. */
static void
count_activity(struct sum *s, const struct kt_event *ev, int64_t rank)
{
	const char *pt;
	size_t pn;
	struct dev *d;
	struct stream *st;
	char num[32];
	uint32_t dv, sv;
	int64_t stream;
	int fresh = 0;

	if (!kt_idmemo_hit(&s->devmemo, ev, rank, 0, &dv)) {
		key_start(s, rank);
		kt_event_id_text(ev, KT_F_PID, &pt, &pn); /* by value */
		kt_buf_add(&s->key, pt, pn);
		if (s->key.err)
			kt_cli_nomem();
		dv = key_id(s, s->devkeys, &fresh);
		kt_idmemo_keep(&s->devmemo, ev, rank, 0, dv);
	}
	if (fresh) {
		d = vec_push(&s->devs, sizeof(*d));
		memset(d, 0, sizeof(*d));
		d->rank = rank;
		d->index = int_or(ev, KT_F_DEVICE, int_or(ev, KT_F_PID, -1));
	}
	d = &((struct dev *)s->devs.p)[dv];
	d->n[ev->kind == KT_KERNEL ? 0 : ev->kind == KT_GPU_MEMCPY ? 1 : 2]++;
	stream = int_or(ev, KT_F_STREAM, int_or(ev, KT_F_TID, -1));
	fresh = 0;
	if (s->last_sv != KT_NO && s->last_dv == dv &&
	    s->last_stream == stream)
		sv = s->last_sv;
	else {
		kt_buf_clear(&s->key);
		kt_buf_add(&s->key, &dv, sizeof(dv));
		kt_buf_add(&s->key, num, kt_int_format(stream, num));
		if (s->key.err)
			kt_cli_nomem();
		sv = key_id(s, s->streamkeys, &fresh);
		s->last_dv = dv;
		s->last_stream = stream;
		s->last_sv = sv;
	}
	if (fresh) {
		st = vec_push(&s->streams, sizeof(*st));
		memset(st, 0, sizeof(*st));
		st->dev = dv;
		st->stream = stream;
		d->nstreams++;
	}
	st = &((struct stream *)s->streams.p)[sv];
	st->nact++;
	st->kernels += ev->kind == KT_KERNEL;
}

/* Whether the kernel ev is communication by the default bucket rules. */
static int
is_comm(struct sum *s, const struct kt_event *ev)
{
	const struct kt_val *nm = &ev->f[KT_F_NAME];
	const char *raw = ev->raw + nm->off;
	struct cached *c;

	if (nm->type != KT_STRING || nm->len < 2)
		return 0;
	c = &s->cache[kt_hash(raw, nm->len) % NCACHE];
	if (c->set && c->raw.n == nm->len && memcmp(c->raw.p, raw,
	    nm->len) == 0)
		return c->comm;
	if (kt_json_unescape(raw + 1, nm->len - 2, &s->name) == -1 ||
	    kt_buf_addc(&s->name, '\0') == -1)
		kt_cli_nomem();
	kt_buf_clear(&c->raw);
	if (kt_buf_add(&c->raw, raw, nm->len) == -1)
		kt_cli_nomem();
	c->comm = kt_rules_class(s->rs, kt_rules_match(s->rs, KT_KERNEL,
	    s->name.p)) == KT_CLASS_COMM;
	c->set = 1;
	return c->comm;
}

/* Take one event into the counts. */
static void
take(struct sum *s, const struct kt_event *ev)
{
	int64_t rank = kt_pidrank_of(s->pidrank, ev), end;
	int x = ev->ph == 'X';

	if (rank == -2)
		kt_cli_nomem();
	s->events++;
	s->kind[ev->kind]++;
	s->ph[(unsigned char)ev->ph]++;
	count_rank(s, rank);
	if (x && (ev->flags & KT_EV_DUR)) {
		s->complete[ev->kind]++;
		if (ev->dur > 0 && kt_time_add(s->dur[ev->kind], ev->dur,
		    &s->dur[ev->kind]) == -1) {
			kt_cli_warn("%s:%llu: time out of range: the durations "
			    "of %s add up past 2^62 ns (146 years)",
			    kt_kind_name(ev->kind), (unsigned long long)ev->index,
			    kt_kind_name(ev->kind));
			kt_cli_die(NULL);
		}
	}
	/* Metadata often has ts 0: it is no time of the trace. */
	if ((ev->flags & KT_EV_TS) && ev->ph != 'M') {
		end = ev->ts;
		if (x && (ev->flags & KT_EV_DUR) && ev->dur > 0)
			end = ev->ts + ev->dur;	/* both within 2^62 */
		if (!s->timed || ev->ts < s->first_ts)
			s->first_ts = ev->ts;
		if (!s->timed || end > s->last_end)
			s->last_end = end;
		s->timed = 1;
	}
	switch (ev->kind) {
	case KT_KERNEL:
	case KT_GPU_MEMCPY:
	case KT_GPU_MEMSET:
		if (!x || !(ev->flags & KT_EV_TS))
			break;
		s->nact++;
		count_activity(s, ev, rank);
		if (ev->f[KT_F_CORR].type != KT_NONE) {
			s->act_corr++;
			s->kernel_corr += ev->kind == KT_KERNEL;
		}
		if (ev->kind != KT_KERNEL)
			break;
		if (args_have(ev, "\"graph id\""))
			s->graph_kernels++;
		if (is_comm(s, ev)) {
			s->comm++;
			if (args_have(ev, "\"Seq\"") ||
			    args_have(ev, "\"Comms Id\""))
				s->comm_seq++;
			if (args_have(ev, "msg nelems\"") ||
			    ev->f[KT_F_BYTES].type != KT_NONE)
				s->comm_size++;
		}
		break;
	case KT_CUDA_RUNTIME:
	case KT_CUDA_DRIVER:
		if (ev->f[KT_F_CORR].type != KT_NONE)
			s->call_corr++;
		if (kt_event_field_is(ev, KT_F_NAME, "cudaGraphLaunch") ||
		    kt_event_field_is(ev, KT_F_NAME, "hipGraphLaunch"))
			s->graph_launches++;
		/* FALLTHROUGH */
	case KT_CPU_OP:
	case KT_USER_ANNOTATION:
	case KT_STEP:
	case KT_PYTHON_FUNCTION:
		if (!x || !(ev->flags & KT_EV_TS))
			break;
		count_thread(s, ev, rank);
		if (ev->kind == KT_CPU_OP) {
			s->cpu_spans++;
			if (args_have(ev, "\"Call stack\""))
				s->call_stack++;
			if (args_have(ev, "\"Input Dims\""))
				s->input_dims++;
		}
		if (ev->kind == KT_STEP && (ev->flags & KT_EV_DUR)) {
			struct step *st = vec_push(&s->steps, sizeof(*st));

			st->number = kt_event_step(ev);
			st->dur = ev->dur;
		}
		break;
	case KT_FLOW:
		if (kt_event_field_is(ev, KT_F_CAT, "ac2g"))
			s->ac2g++;
		break;
	default:
		break;
	}
}

/* The facts of the top-level keys. */
struct meta {
	int64_t		 rank;		/* kt_reader_rank */
	const char	*rank_from;
	int64_t		 world;		/* distributedInfo.world_size, or -1 */
	int		 dist;		/* distributedInfo is there */
	uint64_t	 capacities;	/* deviceProperties with totalGlobalMem */
	const char	*schema;	/* raw text of schemaVersion, or NULL */
	size_t		 schemalen;
	const char	*base;		/* baseTimeNanoseconds */
	size_t		 baselen;
};

static void
read_meta(struct kt_reader *rd, struct meta *mt)
{
	const struct kt_meta *k;
	struct kt_error e;
	json_t *j, *v, *d;
	size_t i;
	int64_t r;
	const char *how;

	memset(mt, 0, sizeof(*mt));
	mt->world = -1;
	mt->rank = kt_reader_rank(rd);
	mt->rank_from = "none";
	if ((k = kt_reader_meta_find(rd, "distributedInfo")) != NULL &&
	    (j = kt_meta_json(k, &e)) != NULL) {
		mt->dist = 1;
		if ((v = json_object_get(j, "world_size")) != NULL &&
		    json_is_integer(v))
			mt->world = json_integer_value(v);
		if ((v = json_object_get(j, "rank")) != NULL &&
		    json_is_integer(v) && json_integer_value(v) >= 0)
			mt->rank_from = "distributedInfo";
		json_decref(j);
	}
	if (mt->rank >= 0 && strcmp(mt->rank_from, "none") == 0 &&
	    kt_rank_from_name(kt_reader_name(rd), &r, &how) == 0)
		mt->rank_from = "file name";
	if ((k = kt_reader_meta_find(rd, "deviceProperties")) != NULL &&
	    (j = kt_meta_json(k, &e)) != NULL) {
		if (json_is_array(j))
			json_array_foreach(j, i, d)
				if (json_is_integer(json_object_get(d,
				    "totalGlobalMem")))
					mt->capacities++;
		json_decref(j);
	}
	if ((k = kt_reader_meta_find(rd, "schemaVersion")) != NULL) {
		mt->schema = k->val;
		mt->schemalen = k->vallen;
	}
	if ((k = kt_reader_meta_find(rd, "baseTimeNanoseconds")) != NULL) {
		mt->base = k->val;
		mt->baselen = k->vallen;
	}
}

static const char *const cols[] = { "section", "item", "value", "note" };

/* One row; note may be NULL (empty). */
static void
row(struct kt_table *t, const char *sec, const char *item, const char *val,
    const char *note)
{
	if (kt_table_cell(t, sec) | kt_table_cell(t, item) |
	    kt_table_cell(t, val) | kt_table_cell(t, note ? note : ""))
		kt_cli_nomem();
}

static void
row_int(struct kt_table *t, const char *sec, const char *item, int64_t v,
    const char *note)
{
	char num[32];

	kt_int_format(v, num);
	row(t, sec, item, num, note);
}

/* A row whose value is an integer, or "-" when absent (have 0). */
static void
row_opt(struct kt_table *t, const char *sec, const char *item, int have,
    int64_t v, const char *note)
{
	if (have)
		row_int(t, sec, item, v, note);
	else
		row(t, sec, item, "-", note);
}

static int64_t
resolved(int64_t rank, const struct meta *mt)
{
	return rank == -1 ? mt->rank : rank;
}

/* "R" or "-" for an unknown rank, into buf (32 bytes). */
static const char *
rank_text(int64_t rank, char *buf)
{
	if (rank < 0)
		return strcpy(buf, "-");
	kt_int_format(rank, buf);
	return buf;
}

static int
cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int
cmp_rank(const void *a, const void *b)
{
	return cmp_i64(((const struct rank *)a)->rank,
	    ((const struct rank *)b)->rank);
}

static int
cmp_dev(const void *a, const void *b, void *ctx)
{
	const struct dev *d = ctx;
	const struct dev *x = &d[*(const uint32_t *)a];
	const struct dev *y = &d[*(const uint32_t *)b];

	if (x->rank != y->rank)
		return cmp_i64(x->rank, y->rank);
	return cmp_i64(x->index, y->index);
}

static int
cmp_stream(const void *a, const void *b, void *ctx)
{
	const uint32_t *pos = ctx;	/* each device's sorted position */
	const struct stream *x = a, *y = b;

	if (x->dev != y->dev)
		return cmp_i64(pos[x->dev], pos[y->dev]);
	return cmp_i64(x->stream, y->stream);
}

static int
cmp_dur(const void *a, const void *b)
{
	return cmp_i64(((const struct step *)a)->dur,
	    ((const struct step *)b)->dur);
}

/*
 * Ranks: the events without args.rank are of the trace's rank, which is
 * known only at the end; fold them into its row.
 */
static void
ranks_finish(struct sum *s, const struct meta *mt)
{
	struct rank *r = s->ranks.p;
	const struct dev *d = s->devs.p;
	const int64_t *tr = s->thread_rank.p;
	size_t i, j, n = 0;

	for (i = 0; i < s->ranks.n; i++)
		r[i].rank = resolved(r[i].rank, mt);
	kt_qsort(r, s->ranks.n, sizeof(*r), cmp_rank);
	for (i = 0; i < s->ranks.n; i++) {
		if (n > 0 && r[n - 1].rank == r[i].rank)
			r[n - 1].events += r[i].events;
		else
			r[n++] = r[i];
	}
	s->ranks.n = n;
	for (i = 0; i < n; i++) {
		for (j = 0; j < s->thread_rank.n; j++)
			r[i].threads += resolved(tr[j], mt) == r[i].rank;
		for (j = 0; j < s->devs.n; j++)
			r[i].devices += resolved(d[j].rank, mt) == r[i].rank;
	}
}

static void
trace_rows(struct kt_table *t, const struct sum *s, struct kt_reader *rd,
    const struct meta *mt)
{
	static const char *const forms[] = { "object", "array", "tsv" };
	const struct kt_repairs *rp = kt_reader_repairs(rd);
	uint64_t nrep = 0;
	char buf[64];
	size_t i;
	enum kt_form f = kt_reader_form(rd);

	for (i = 0; i < KT_NREPAIRS; i++)
		nrep += rp->n[i];
	row(t, "trace", "name", kt_reader_name(rd), NULL);
	row(t, "trace", "form", (unsigned)f < 3 ? forms[f] : "-", NULL);
	row_int(t, "trace", "events", (int64_t)s->events, NULL);
	row_int(t, "trace", "repairs", (int64_t)nrep, nrep ?
	    "the reader repaired damage: see stderr" : NULL);
	row_opt(t, "trace", "first_ts_ns", s->timed, s->first_ts,
	    "earliest ts, metadata aside");
	row_opt(t, "trace", "last_end_ns", s->timed, s->last_end,
	    "latest ts, or ts+dur of an X event");
	row_opt(t, "trace", "span_ns", s->timed, s->last_end - s->first_ts,
	    NULL);
	if (mt->base != NULL) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(mt->baselen < 40 ?
		    mt->baselen : 40), mt->base);
		row(t, "trace", "base_time_ns", buf, "baseTimeNanoseconds");
	} else
		row(t, "trace", "base_time_ns", "-", NULL);
	if (mt->schema != NULL) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(mt->schemalen < 40 ?
		    mt->schemalen : 40), mt->schema);
		row(t, "trace", "schema", buf, "schemaVersion");
	} else
		row(t, "trace", "schema", "-", NULL);
	row(t, "trace", "rank", rank_text(mt->rank, buf), mt->rank_from);
	row_opt(t, "trace", "world", mt->world >= 0, mt->world,
	    mt->world >= 0 ? "distributedInfo.world_size" : NULL);
	row_int(t, "trace", "ranks", (int64_t)s->ranks.n,
	    "distinct ranks of the events");
	row_int(t, "trace", "threads", (int64_t)s->thread_rank.n,
	    "CPU threads with spans");
	row_int(t, "trace", "devices", (int64_t)s->devs.n,
	    "GPU devices with activities");
	row_int(t, "trace", "streams", (int64_t)s->streams.n, NULL);
}

static void
kind_rows(struct kt_table *t, const struct sum *s)
{
	char note[96], item[4];
	int k;

	for (k = 0; k < KT_NKINDS; k++) {
		note[0] = '\0';
		if (s->complete[k] > 0)
			snprintf(note, sizeof(note), "complete=%llu dur_ns=%lld",
			    (unsigned long long)s->complete[k],
			    (long long)s->dur[k]);
		row_int(t, "kind", kt_kind_name((enum kt_kind)k),
		    (int64_t)s->kind[k], note);
	}
	for (k = 0; k < 256; k++) {
		if (s->ph[k] == 0)
			continue;
		if (k == 0)
			strcpy(item, "-");
		else if (k < 0x20 || k >= 0x7f)
			snprintf(item, sizeof(item), "?");
		else
			snprintf(item, sizeof(item), "%c", k);
		row_int(t, "ph", item, (int64_t)s->ph[k], k == 0 ?
		    "no ph" : NULL);
	}
}

static void
place_rows(struct kt_table *t, struct sum *s, const struct meta *mt)
{
	const struct rank *r = s->ranks.p;
	struct dev *d = s->devs.p;
	struct stream *st = s->streams.p;
	uint32_t *o, *pos;
	char item[96], note[160], rb[32];
	size_t i;

	for (i = 0; i < s->ranks.n; i++) {
		snprintf(note, sizeof(note), "threads=%llu devices=%llu",
		    (unsigned long long)r[i].threads,
		    (unsigned long long)r[i].devices);
		row_int(t, "rank", rank_text(r[i].rank, rb),
		    (int64_t)r[i].events, note);
	}
	if ((o = malloc((s->devs.n + 1) * sizeof(*o))) == NULL ||
	    (pos = malloc((s->devs.n + 1) * sizeof(*pos))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < s->devs.n; i++) {
		d[i].rank = resolved(d[i].rank, mt);
		o[i] = (uint32_t)i;
	}
	kt_sort_r(o, s->devs.n, sizeof(*o), cmp_dev, d);
	for (i = 0; i < s->devs.n; i++) {
		const struct dev *x = &d[o[i]];

		pos[o[i]] = (uint32_t)i;
		snprintf(item, sizeof(item), "%s:%lld", rank_text(x->rank, rb),
		    (long long)x->index);
		snprintf(note, sizeof(note), "streams=%u kernels=%llu "
		    "memcpy=%llu memset=%llu", x->nstreams,
		    (unsigned long long)x->n[0], (unsigned long long)x->n[1],
		    (unsigned long long)x->n[2]);
		row_int(t, "device", item, (int64_t)(x->n[0] + x->n[1] +
		    x->n[2]), note);
	}
	kt_sort_r(st, s->streams.n, sizeof(*st), cmp_stream, pos);
	for (i = 0; i < s->streams.n; i++) {
		const struct dev *x = &d[st[i].dev];

		snprintf(item, sizeof(item), "%s:%lld:%lld",
		    rank_text(x->rank, rb), (long long)x->index,
		    (long long)st[i].stream);
		snprintf(note, sizeof(note), "kernels=%llu",
		    (unsigned long long)st[i].kernels);
		row_int(t, "stream", item, (int64_t)st[i].nact, note);
	}
	free(o);
	free(pos);
}

static void
step_rows(struct kt_table *t, struct sum *s)
{
	struct step *st = s->steps.p;
	size_t i, n = s->steps.n;
	int64_t lo = -1, hi = -1;

	for (i = 0; i < n; i++) {
		if (st[i].number < 0)
			continue;
		if (lo == -1 || st[i].number < lo)
			lo = st[i].number;
		if (hi == -1 || st[i].number > hi)
			hi = st[i].number;
	}
	kt_qsort(st, n, sizeof(*st), cmp_dur);
	row_int(t, "step", "count", (int64_t)n, "ProfilerStep#N spans");
	row_opt(t, "step", "first", lo >= 0, lo, "smallest N");
	row_opt(t, "step", "last", hi >= 0, hi, "largest N");
	row_opt(t, "step", "dur_min_ns", n > 0, n ? st[0].dur : 0, NULL);
	row_opt(t, "step", "dur_median_ns", n > 0, n ? st[(n - 1) / 2].dur : 0,
	    "the lower middle for an even count");
	row_opt(t, "step", "dur_max_ns", n > 0, n ? st[n - 1].dur : 0, NULL);
}

/* A "has" row: the evidence count, and yes or no with what it is. */
static void
has_row(struct kt_table *t, const char *item, uint64_t n, const char *what)
{
	char note[160];

	snprintf(note, sizeof(note), "%s: %s", n > 0 ? "yes" : "no", what);
	row_int(t, "has", item, (int64_t)n, note);
}

static void
has_rows(struct kt_table *t, const struct sum *s, const struct meta *mt)
{
	has_row(t, "steps", s->steps.n, "ProfilerStep#N spans");
	has_row(t, "memory", s->kind[KT_MEMORY], "[memory] instants");
	has_row(t, "capacity", mt->capacities,
	    "deviceProperties with totalGlobalMem");
	has_row(t, "python_stack", s->kind[KT_PYTHON_FUNCTION],
	    "python_function events");
	has_row(t, "call_stack", s->call_stack,
	    "cpu_ops with args.\"Call stack\"");
	has_row(t, "flows", s->kind[KT_FLOW], "flow events (ph s, t, f)");
	has_row(t, "ac2g", s->ac2g, "launch flows (cat ac2g)");
	has_row(t, "launch_correlation", s->act_corr && s->call_corr ?
	    s->act_corr : 0, "GPU activities with args.correlation, "
	    "beside runtime calls with one");
	has_row(t, "input_shapes", s->input_dims,
	    "cpu_ops with args.\"Input Dims\"");
	has_row(t, "collectives", s->comm,
	    "communication kernels (the default bucket rules)");
	has_row(t, "collective_seq", s->comm_seq,
	    "communication kernels with args.Seq or \"Comms Id\"");
	has_row(t, "collective_sizes", s->comm_size,
	    "communication kernels with msg nelems or bytes");
	has_row(t, "cuda_graphs", s->graph_kernels + s->graph_launches,
	    "kernels with args.\"graph id\", and graph launch calls");
	has_row(t, "gpu_annotations", s->kind[KT_GPU_USER_ANNOTATION],
	    "gpu_user_annotation events");
	has_row(t, "distributed_info", (uint64_t)mt->dist,
	    "the distributedInfo key");
}

enum { NO = 0, PARTIAL, YES };
static const char *const verdicts[] = { "no", "partial", "yes" };

/* A view's verdict and why, built as its conditions are checked. */
struct verdict {
	int	 v;
	char	 why[256];
};

static void
v_init(struct verdict *vd)
{
	vd->v = YES;
	vd->why[0] = '\0';
}

/* Lower the verdict to v (never raise it), and say why. */
static void
v_set(struct verdict *vd, int v, const char *why)
{
	size_t n = strlen(vd->why);

	if (v > vd->v)
		return;
	if (v < vd->v && v == NO)
		n = 0;		/* a "no" needs only its own reason */
	vd->v = v;
	snprintf(vd->why + n, sizeof(vd->why) - n, "%s%s", n ? "; " : "",
	    why);
}

static void
v_row(struct kt_table *t, const char *view, const struct verdict *vd,
    const char *ok)
{
	row(t, "view", view, verdicts[vd->v], vd->v == YES ? ok : vd->why);
}

static void
view_rows(struct kt_table *t, const struct sum *s, const struct meta *mt)
{
	static const char *const five[] = {
		"decompose", "gaps", "bucket", "overlap", "memory"
	};
	struct verdict vd, vs[5];
	char ok[160];
	size_t i, nno = 0;
	int nosteps = s->steps.n == 0, noact = s->nact == 0;

	for (i = 0; i < 5; i++)
		v_init(&vs[i]);
	/* decompose, gaps, bucket: GPU activities, per step with steps. */
	for (i = 0; i < 3; i++)
		if (noact)
			v_set(&vs[i], NO, "no kernel, gpu_memcpy or gpu_memset "
			    "X events");
	if (nosteps) {
		v_set(&vs[0], PARTIAL, "no ProfilerStep#: per-step rows "
		    "unavailable, one window per device");
		v_set(&vs[1], PARTIAL, "no ProfilerStep#: one window per "
		    "device, no per-step rows");
		v_set(&vs[2], PARTIAL, "no ProfilerStep#: --by step has no "
		    "steps");
	}
	if (noact)
		v_set(&vs[3], NO, "no GPU activity");
	else if (s->comm == 0)
		v_set(&vs[3], NO, "no communication kernel (nccl, rccl, ...): "
		    "nothing to overlap");
	if (s->comm > 0 && s->comm_size == 0)
		v_set(&vs[3], PARTIAL, "no msg nelems or bytes on the "
		    "collectives: no bandwidth");
	if (s->comm > 0 && s->ranks.n > 1 && s->comm_seq == 0)
		v_set(&vs[3], PARTIAL, "no Seq or Comms Id: no join across "
		    "ranks");
	if (s->kind[KT_MEMORY] == 0)
		v_set(&vs[4], NO, "no [memory] instants (profile_memory off)");
	else if (mt->capacities == 0)
		v_set(&vs[4], PARTIAL, "no deviceProperties totalGlobalMem: "
		    "no capacity, no headroom");
	snprintf(ok, sizeof(ok), "%llu GPU activities on %zu devices",
	    (unsigned long long)s->nact, s->devs.n);
	v_row(t, "bucket", &vs[2], ok);
	v_row(t, "gaps", &vs[1], ok);
	v_row(t, "decompose", &vs[0], ok);
	snprintf(ok, sizeof(ok), "%llu communication kernels",
	    (unsigned long long)s->comm);
	v_row(t, "overlap", &vs[3], ok);
	snprintf(ok, sizeof(ok), "%llu [memory] instants",
	    (unsigned long long)s->kind[KT_MEMORY]);
	v_row(t, "memory", &vs[4], ok);

	/* views: the five above, each in a file of its own. */
	v_init(&vd);
	for (i = 0; i < 5; i++) {
		char why[48];

		nno += vs[i].v == NO;
		if (vs[i].v != YES) {
			snprintf(why, sizeof(why), "%s %s", five[i],
			    verdicts[vs[i].v]);
			v_set(&vd, PARTIAL, why);
		}
	}
	if (nno == 5)
		v_set(&vd, NO, "none of its five views has anything to show");
	v_row(t, "views", &vd, "all five views");

	v_init(&vd);
	if (noact)
		v_set(&vd, NO, "no GPU activity to chase");
	if (s->act_corr == 0 || s->call_corr == 0)
		v_set(&vd, PARTIAL, "no args.correlation on GPU activities "
		    "and runtime calls: no launch links");
	if (s->kind[KT_PYTHON_FUNCTION] == 0 && s->call_stack == 0)
		v_set(&vd, PARTIAL, "no python_function or Call stack: no "
		    "file:line");
	v_row(t, "correlate", &vd, "launch, op, step and file:line");

	v_init(&vd);
	if (s->kind[KT_KERNEL] == 0)
		v_set(&vd, NO, "no kernels: no anchor");
	v_row(t, "layer-track", &vd, "needs an anchor kernel (-a) and the "
	    "layer count (-n); --suggest lists anchors");

	v_init(&vd);
	if (noact)
		v_set(&vd, NO, "no GPU activity: nothing to compact");
	snprintf(ok, sizeof(ok), "%zu stream rows on %zu devices",
	    s->streams.n, s->devs.n);
	v_row(t, "compact-lanes", &vd, ok);

	v_init(&vd);
	if (s->cpu_spans == 0)
		v_set(&vd, NO, "no cpu_op spans");
	if (s->kernel_corr == 0 || s->call_corr == 0)
		v_set(&vd, PARTIAL, "no kernels with launch correlation: no "
		    "GPU columns");
	snprintf(ok, sizeof(ok), "%llu cpu_op spans",
	    (unsigned long long)s->cpu_spans);
	v_row(t, "ops", &vd, ok);
}

static struct kt_table *
summary(struct sum *s, struct kt_reader *rd)
{
	struct kt_table *t;
	struct meta mt;

	read_meta(rd, &mt);
	ranks_finish(s, &mt);
	if ((t = kt_table_new(cols, sizeof(cols) / sizeof(cols[0]))) == NULL)
		kt_cli_nomem();
	trace_rows(t, s, rd, &mt);
	kind_rows(t, s);
	place_rows(t, s, &mt);
	step_rows(t, s);
	has_rows(t, s, &mt);
	view_rows(t, s, &mt);
	return t;
}

static void
sum_free(struct sum *s)
{
	size_t i;

	kt_rules_free(s->rs);
	kt_intern_free(s->devkeys);
	kt_intern_free(s->streamkeys);
	kt_intern_free(s->threadkeys);
	kt_intern_free(s->rankkeys);
	kt_pidrank_free(s->pidrank);
	free(s->devs.p);
	free(s->streams.p);
	free(s->ranks.p);
	free(s->steps.p);
	free(s->thread_rank.p);
	for (i = 0; s->cache != NULL && i < NCACHE; i++)
		kt_buf_free(&s->cache[i].raw);
	free(s->cache);
	kt_buf_free(&s->key);
	kt_buf_free(&s->name);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_table *t;
	struct kt_error err;
	struct kt_event ev;
	const struct kt_event *e;
	struct kt_ahead *ah = NULL;
	struct sum s;
	const char *name;
	int ch, rc;

	memset(&s, 0, sizeof(s));
	kt_idmemo_init(&s.threadmemo);
	kt_idmemo_init(&s.devmemo);
	s.last_rid = s.last_sv = KT_NO;
	kt_cli_init("kt-summary");
	while ((ch = getopt_long(argc, argv, "hjm:o:STtV", longopts,
	    NULL)) != -1)
		kt_cli_opt(&co, ch, optarg, usage);
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		return 2;
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1)
		return 2;
	if ((s.rs = kt_rules_new(1)) == NULL ||
	    (s.devkeys = kt_intern_new()) == NULL ||
	    (s.streamkeys = kt_intern_new()) == NULL ||
	    (s.threadkeys = kt_intern_new()) == NULL ||
	    (s.rankkeys = kt_intern_new()) == NULL ||
	    (s.pidrank = kt_pidrank_new()) == NULL ||
	    (s.cache = calloc(NCACHE, sizeof(*s.cache))) == NULL)
		kt_cli_nomem();
	name = argc ? argv[0] : "<stdin>";
	rd = kt_cli_open_one(argc ? argv[0] : "-", name, co.member,
	    co.rflags, &src);
	/* Read and scan on every CPU (a large plain file in pieces). */
	if (kt_cli_threads())
		ah = kt_ahead_start(rd, kt_cli_progress);
	while ((rc = kt_ahead_get(ah, rd, &ev, &e, &err)) == 1) {
		take(&s, e);
		if (ah == NULL && (s.events & 0x3fff) == 0)
			kt_cli_progress(rd);
	}
	kt_ahead_stop(ah);
	if (rc == -1)
		kt_cli_die(&err);
	kt_cli_progress_done();
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_cli_one_trace(src, name, "several traces: pick one with --member",
	    0);
	t = summary(&s, rd);
	kt_cli_write_table(t, co.output, co.form);
	kt_table_free(t);
	kt_reader_free(rd);
	kt_source_close(src);
	sum_free(&s);
	return 0;
}
