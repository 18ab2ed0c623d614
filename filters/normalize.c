/*
 * kt-normalize: write a canonical trace: metadata events first, then the
 * events sorted by time (equal times keep their file order), repaired
 * where the input is damaged, and exact: an event nothing changed keeps
 * its bytes.  --check reports problems instead of writing a trace.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kt.h"

/* The tags of a held record (struct kt_rec). */
#define TAG_BP_E	0x01	/* a flow with "bp": "e" */
#define TAG_DROP	0x02	/* an unmatched E, dropped */
#define TAG_PID_STR	0x04	/* pid "7": written as the number 7 */
#define TAG_TID_STR	0x08	/* tid "7": written as the number 7 */
#define TAG_THREAD_I	0x10	/* an instant of its thread (s "t" or none) */

/* A B/E pairing pass's result: Es to drop, Bs to close. */
struct closer {
	uint32_t	 thread;
	int64_t		 ts;
	uint64_t	 index;
};

/* A record's position in the store, or none. */
#define NOREC	SIZE_MAX

/* What --check's viewer rules need of a thread (by its interned id). */
struct vthread {
	size_t		 str, num;	/* first records: tid "7", tid 7 */
	size_t		 sort;		/* its thread_sort_index event */
	int64_t		 sortv;		/* its value */
	int		 guide;		/* a kt-layer-track guide row */
	int		 used;		/* holds events but metadata */
};

/* Of a pid (by value): its first records spelled "7" and 7. */
struct vfirst {
	size_t		 str, num;
};

/* A flow event: its flow (cat, name, id interned), its args' keys. */
struct vflow {
	size_t		 pos;
	int64_t		 ts;		/* INT64_MIN: none */
	uint32_t	 flow;
	char		*keys;		/* each \n-ended; NULL: no args */
};

/*
 * --check's viewer rules (kt-normalize(1)): what the events held tell,
 * noted as they are read.
 */
struct viewer {
	struct vthread	*thr;
	size_t		 nthr;
	struct kt_intern *pids, *flows, *counters;
	struct kt_intern *names;	/* B and E names, unescaped */
	struct vfirst	*pid;
	size_t		 npid;
	struct vflow	*flow;		/* every flow event */
	size_t		 nflow, capflow;
	size_t		*many;		/* counter events of several series */
	size_t		 nmany, capmany;
	struct kt_buf	 key;
	struct kt_buf	 uname;
};

struct opts {
	int		 check;
	int		 keep_order;
	int		 rebase;
	int		 tsv;
	struct kt_cli_opts co;	/* -l, -m, -o, -S */
};

struct state {
	struct kt_reader	*r;
	struct kt_store		*store;		/* the events held */
	struct kt_hold		*holder;	/* their file (lib/core/hold.c) */
	struct kt_rec		*recs;		/* its records, once read */
	size_t			 n;
	uint32_t		*order;		/* their output order, or NULL */
	const struct kt_intern	*threads;	/* pid/tid: the store's, */
	struct kt_intern	*own;		/* or (streaming) these */
	struct kt_idmemo	 memo;		/* the last event's thread */
	struct kt_buf		 key;
	struct closer		*closers;
	size_t			 nclosers;
	uint64_t		 nextindex;	/* for synthesized events */
	struct viewer		*vw;		/* --check */
};

static void	unmatched(struct state *);

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-normalize [-ckrSt] [-l level] [-m glob] [-o file] [file]\n"
	    "  -c, --check        report problems, write no trace; exit 1 if any\n"
	    "  -k, --keep-order   keep the input order; only repair (streams)\n"
	    "  -l, --level N      gzip level 0-9 for a .gz output (default 1)\n"
	    "  -m, --member GLOB  take the archive member matching GLOB\n"
	    "  -o, --output FILE  write FILE atomically (.gz: gzip)\n"
	    "  -r, --rebase       shift times so the first event is at 0\n"
	    "  -S, --strict       refuse damaged input instead of repairing it\n"
	    "  -t, --tsv          write the TSV event form\n"
	    "  -h, --help         this help;  -V, --version  the version\n");
}

#define die_error(e)	kt_cli_die(e)
#define nomem()		kt_cli_nomem()

/* Intern the event's (pid, tid) pair (streaming). */
static uint32_t
thread_of(struct state *st, const struct kt_event *ev)
{
	int64_t id;
	uint32_t hit;

	if (kt_idmemo_hit(&st->memo, ev, 0, 1, &hit))
		return hit;
	st->key.n = 0;
	if (kt_event_thread_key(ev, &st->key) == -1 ||
	    (id = kt_intern_put(st->own, st->key.p, st->key.n)) == -1)
		nomem();
	kt_idmemo_keep(&st->memo, ev, 0, 1, (uint32_t)id);
	return (uint32_t)id;
}

/* The record at position i of the output order. */
static size_t
at(const struct state *st, size_t i)
{
	return st->order != NULL ? st->order[i] : i;
}

/*
 * Which of ev's pid and tid are strings holding a number ("25738"):
 * viewers that key threads by the JSON value (Perfetto) make two threads
 * of "25738" and 25738, so they are written as numbers.
 */
static unsigned
id_tags(const struct kt_event *ev)
{
	const char *p;
	size_t n;

	return (kt_event_id_text(ev, KT_F_PID, &p, &n) ? TAG_PID_STR : 0) |
	    (kt_event_id_text(ev, KT_F_TID, &p, &n) ? TAG_TID_STR : 0);
}

/*
 * Set ev's numeric-string ids (tags) to numbers in patch p (reset for
 * ev by the caller), counted as a repair.
 */
static int
patch_ids(struct state *st, const struct kt_event *ev, unsigned tags,
    struct kt_patch *p)
{
	const char *s;
	size_t n;

	if (tags & (TAG_PID_STR | TAG_TID_STR))
		kt_reader_repairs_mut(st->r)->n[KT_R_STRING_ID]++;
	if ((tags & TAG_PID_STR) && (kt_event_id_text(ev, KT_F_PID, &s, &n),
	    kt_patch_set(p, KT_F_PID, s, n) == -1))
		return -1;
	if ((tags & TAG_TID_STR) && (kt_event_id_text(ev, KT_F_TID, &s, &n),
	    kt_patch_set(p, KT_F_TID, s, n) == -1))
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* --check: what viewers make of the events, noted as they are held. */

/* Grow array *a of *n elements of size sz to hold index i (zeroed). */
static void *
grow(void *a, size_t *n, size_t i, size_t sz)
{
	size_t nn = *n;
	char *t;

	if (i < nn)
		return a;
	while (nn <= i)
		nn = nn ? 2 * nn : 64;
	if ((t = realloc(a, nn * sz)) == NULL)
		nomem();
	memset(t + *n * sz, 0, (nn - *n) * sz);
	*n = nn;
	return t;
}

static struct vthread *
vthread(struct viewer *vw, uint32_t t)
{
	size_t i, old = vw->nthr;

	vw->thr = grow(vw->thr, &vw->nthr, t, sizeof(*vw->thr));
	for (i = old; i < vw->nthr; i++) {
		vw->thr[i].str = vw->thr[i].num = vw->thr[i].sort = NOREC;
	}
	return &vw->thr[t];
}

/* The entry of key vw->key in intern in with entries *a (*n of them). */
static struct vfirst *
vfirst(struct viewer *vw, struct kt_intern *in, struct vfirst **a,
    size_t *n)
{
	int64_t id;
	size_t i, old = *n;

	if ((id = kt_intern_put(in, vw->key.p ? vw->key.p : "",
	    vw->key.n)) == -1)
		nomem();
	*a = grow(*a, n, (size_t)id, sizeof(**a));
	for (i = old; i < *n; i++)
		(*a)[i].str = (*a)[i].num = NOREC;
	return &(*a)[id];
}

/* The keys of object args (one event's: a DOM fits), each \n-ended. */
static char *
arg_keys(const struct kt_event *ev, size_t *nkeys)
{
	const struct kt_val *v = &ev->f[KT_F_ARGS];
	struct kt_buf b = KT_BUF_INIT;
	const char *k;
	json_t *o, *val;

	*nkeys = 0;
	if (v->type != KT_OBJECT ||
	    (o = json_loadb(ev->raw + v->off, v->len, 0, NULL)) == NULL)
		return NULL;
	json_object_foreach(o, k, val) {
		kt_buf_adds(&b, k);
		kt_buf_addc(&b, '\n');
		(*nkeys)++;
	}
	json_decref(o);
	if (kt_buf_addc(&b, '\0') == -1)
		nomem();
	return b.p;
}

/* The first key in keys (\n-ended) that is also in other, or NULL. */
static const char *
shared_key(const char *keys, const char *other, size_t *n)
{
	const char *k, *e, *o, *oe;

	for (k = keys; (e = strchr(k, '\n')) != NULL; k = e + 1)
		for (o = other; (oe = strchr(o, '\n')) != NULL; o = oe + 1)
			if (e - k == oe - o && memcmp(k, o, (size_t)(e - k)) ==
			    0) {
				*n = (size_t)(e - k);
				return k;
			}
	return NULL;
}

/*
 * Note what the viewer rules need of held event ev (record at position
 * pos): how its pid and tid are spelled, the guide rows and sort indexes
 * of threads, counters of several series, the args keys of flow ends.
 */
static void
viewer_note(struct state *st, const struct kt_event *ev,
    const struct kt_rec *r, size_t pos)
{
	struct viewer *vw = st->vw;
	struct vthread *t;
	struct vfirst *f;
	struct kt_val v;
	const char *s;
	size_t n, nk;
	char *keys;

	if (r->thread == UINT32_MAX)
		return;
	t = vthread(vw, r->thread);
	if (r->ph != 'M')
		t->used = 1;
	if (ev->f[KT_F_TID].type != KT_NONE) {
		if (r->tag & TAG_TID_STR) {
			if (t->str == NOREC)
				t->str = pos;
		} else if (ev->f[KT_F_TID].type == KT_NUMBER && t->num == NOREC)
			t->num = pos;
	}
	if (ev->f[KT_F_PID].type != KT_NONE) {
		vw->key.n = 0;
		kt_event_id_text(ev, KT_F_PID, &s, &n);
		if (kt_buf_add(&vw->key, s, n) == -1)
			nomem();
		f = vfirst(vw, vw->pids, &vw->pid, &vw->npid);
		if (r->tag & TAG_PID_STR) {
			if (f->str == NOREC)
				f->str = pos;
		} else if (ev->f[KT_F_PID].type == KT_NUMBER && f->num == NOREC)
			f->num = pos;
	}
	if (r->ph == 'M' && kt_event_field_is(ev, KT_F_NAME, "thread_name") &&
	    kt_event_find(ev, &ev->f[KT_F_ARGS], "name", &v) == 0 &&
	    v.type == KT_STRING && v.len >= sizeof(KT_GUIDE_PREFIX) + 1 &&
	    memcmp(ev->raw + v.off + 1, KT_GUIDE_PREFIX,
	    sizeof(KT_GUIDE_PREFIX) - 1) == 0)
		t->guide = 1;
	if (r->ph == 'M' && kt_event_field_is(ev, KT_F_NAME,
	    "thread_sort_index") && kt_event_sort_index(ev, &t->sortv) == 0)
		t->sort = pos;
	if (r->ph == 'C' && ev->f[KT_F_ARGS].type == KT_OBJECT) {
		if ((keys = arg_keys(ev, &nk)) != NULL && nk > 1) {
			/* One finding per counter (pid and name). */
			vw->key.n = 0;
			kt_event_thread_key(ev, &vw->key);
			kt_buf_add(&vw->key, ev->raw + ev->f[KT_F_NAME].off,
			    ev->f[KT_F_NAME].len);
			if (vw->key.err)
				nomem();
			n = kt_intern_count(vw->counters);
			if (kt_intern_put(vw->counters, vw->key.p,
			    vw->key.n) == -1)
				nomem();
			if (kt_intern_count(vw->counters) > n) {
				vw->many = grow(vw->many, &vw->capmany,
				    vw->nmany, sizeof(*vw->many));
				vw->many[vw->nmany++] = pos;
			}
		}
		free(keys);
	}
	if (r->kind == KT_FLOW && (r->ph == 's' || r->ph == 't' ||
	    r->ph == 'f')) {
		/* catapult's flow: (id, cat, name). */
		static const enum kt_field fs[] = { KT_F_ID, KT_F_CAT,
		    KT_F_NAME };
		struct vflow *fl;
		int64_t id;

		vw->key.n = 0;
		for (n = 0; n < 3; n++) {
			kt_buf_add(&vw->key, ev->raw + ev->f[fs[n]].off,
			    ev->f[fs[n]].len);
			kt_buf_addc(&vw->key, '\001');
		}
		if (vw->key.err || (id = kt_intern_put(vw->flows, vw->key.p,
		    vw->key.n)) == -1)
			nomem();
		vw->flow = grow(vw->flow, &vw->capflow, vw->nflow,
		    sizeof(*vw->flow));
		fl = &vw->flow[vw->nflow++];
		fl->pos = pos;
		fl->ts = (r->flags & KT_EV_TS) ? r->ts : INT64_MIN;
		fl->flow = (uint32_t)id;
		fl->keys = NULL;
		if ((keys = arg_keys(ev, &nk)) != NULL && nk > 0)
			fl->keys = keys;
		else
			free(keys);
	}
}

static void
viewer_free(struct viewer *vw)
{
	size_t i;

	if (vw == NULL)
		return;
	for (i = 0; i < vw->nflow; i++)
		free(vw->flow[i].keys);
	free(vw->thr);
	free(vw->pid);
	free(vw->flow);
	free(vw->many);
	kt_intern_free(vw->pids);
	kt_intern_free(vw->flows);
	kt_intern_free(vw->counters);
	kt_intern_free(vw->names);
	kt_buf_free(&vw->key);
	kt_buf_free(&vw->uname);
	free(vw);
}

/*
 * The name of B or E event ev as --check compares them: 1 + its id among
 * the names (unescaped), or 0 when it has none (a missing or empty name
 * closes any B: catapult compares only a name given).
 */
static uint32_t
be_name(struct viewer *vw, const struct kt_event *ev)
{
	const struct kt_val *v = &ev->f[KT_F_NAME];
	int64_t id;

	if ((ev->ph != 'B' && ev->ph != 'E') || v->type != KT_STRING ||
	    v->len <= 2)
		return 0;
	if (kt_json_unescape(ev->raw + v->off + 1, v->len - 2,
	    &vw->uname) == -1 || (id = kt_intern_put(vw->names,
	    vw->uname.p, vw->uname.n)) == -1)
		nomem();
	return (uint32_t)id + 1;
}

/* Keep ev in the store. */
static void
hold(struct state *st, const struct kt_event *ev)
{
	struct kt_rec *r;
	struct kt_error err;

	if ((r = kt_store_add(st->store, st->r, ev, &err)) == NULL) {
		kt_cli_warn("%s: %s", kt_reader_name(st->r), err.msg);
		exit(2);
	}
	if (kt_event_field_is(ev, KT_F_BP, "e"))
		r->tag |= TAG_BP_E;
	r->tag |= id_tags(ev);
	if ((ev->ph == 'i' || ev->ph == 'I') &&
	    (ev->f[KT_F_S].type == KT_NONE || kt_event_field_is(ev, KT_F_S,
	    "t")))
		r->tag |= TAG_THREAD_I;
	if (ev->index >= st->nextindex)
		st->nextindex = ev->index + 1;
	if (st->vw != NULL) {
		r->aux = be_name(st->vw, ev);
		viewer_note(st, ev, r, kt_store_count(st->store) - 1);
	}
}

/* ------------------------------------------------------------------ */
/* B/E pairing, in output order: which E to drop, which B to close. */

struct depth {
	int64_t		 open;	/* B events open */
	int64_t		 last;	/* latest time seen on the thread */
};

static void
pair_begin_end(struct state *st, size_t n, struct kt_repairs *rep)
{
	size_t nt = kt_intern_count(st->threads), i;
	struct depth *d;
	int64_t k;

	if ((d = calloc(nt ? nt : 1, sizeof(*d))) == NULL)
		nomem();
	for (i = 0; i < nt; i++)
		d[i].last = INT64_MIN;
	for (i = 0; i < n; i++) {
		struct kt_rec *r = &st->recs[at(st, i)];
		struct depth *t = &d[r->thread];

		if (r->flags & KT_EV_TS) {
			int64_t end = r->ts + ((r->flags & KT_EV_DUR) &&
			    r->dur > 0 ? r->dur : 0);

			if (end > t->last)
				t->last = end;
		}
		if (r->ph == 'B')
			t->open++;
		else if (r->ph == 'E') {
			if (t->open == 0) {
				r->tag |= TAG_DROP;
				rep->n[KT_R_UNMATCHED_E]++;
			} else
				t->open--;
		}
	}
	for (i = 0; i < nt; i++)
		for (k = 0; k < d[i].open; k++) {
			struct closer *c;

			if ((c = realloc(st->closers, (st->nclosers + 1) *
			    sizeof(*c))) == NULL)
				nomem();
			st->closers = c;
			c = &c[st->nclosers++];
			c->thread = (uint32_t)i;
			c->ts = d[i].last == INT64_MIN ? 0 : d[i].last;
			c->index = st->nextindex++;
			rep->n[KT_R_UNMATCHED_B]++;
		}
	free(d);
}

/* Write a synthesized E event for closer c. */
static int
write_closer(struct state *st, struct kt_writer *w, const struct closer *c,
    int64_t shift)
{
	struct kt_buf b = KT_BUF_INIT;
	const char *key, *tab;
	size_t kn;
	int rc;

	key = kt_intern_get(st->threads, c->thread, &kn);
	tab = memchr(key, '\t', kn);
	if (kt_obj_begin(&b) == -1 || kt_obj_str(&b, "ph", "E") == -1 ||
	    kt_obj_raw(&b, "pid", key, (size_t)(tab - key)) == -1 ||
	    kt_obj_raw(&b, "tid", tab + 1, kn - (size_t)(tab - key) - 1) ==
	    -1 || kt_obj_time(&b, "ts", c->ts - shift) == -1 ||
	    kt_obj_raw(&b, "args", "{\"kt_repair\": \"closes an unmatched "
	    "B\"}", 38) == -1 || kt_obj_end(&b) == -1)
		nomem();
	rc = kt_writer_raw(w, b.p, b.n, c->index);
	kt_buf_free(&b);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writing held events. */

/*
 * Write held record i, patched when rebasing, from its view: JSON needs
 * its bytes, TSV the fields the store keeps for it, a rebase its ts (the
 * patched event's fields come from the patch).  A metadata event whose
 * time would go below 0 is set to 0 (Perfetto drops negative times) and
 * counted in *clamped.
 */
static int
write_rec(struct state *st, struct kt_writer *w, size_t i,
    int64_t shift, const struct opts *o, struct kt_patch *p,
    struct kt_buf *pb, uint64_t *clamped)
{
	const struct kt_rec *r = &st->recs[i];
	struct kt_event ev, pev;
	char num[96];
	size_t k;
	unsigned ids = r->tag & (TAG_PID_STR | TAG_TID_STR);
	int move = o->rebase && (r->flags & KT_EV_TS) && shift != 0;
	struct kt_error err;
	const char *raw;

	/* JSON needs only the bytes (read again from a plain file). */
	if (!o->tsv && !move && !ids) {
		if ((raw = kt_store_bytes(st->store, i, &err)) == NULL)
			kt_cli_die(&err);
		return kt_writer_raw(w, raw, r->len, r->index);
	}
	/*
	 * The store keeps no pid or tid offsets (16 bytes an event, for the
	 * few old traces that spell ids as strings): those events are
	 * scanned again.
	 */
	if ((ids ? kt_store_event(st->store, i, &ev, &err) :
	    kt_store_load(st->store, i, &ev, &err)) == -1)
		kt_cli_die(&err);
	if (!move && !ids)
		return kt_writer_event(w, &ev);
	kt_patch_reset(p, &ev);
	pb->n = 0;
	if (patch_ids(st, &ev, ids, p) == -1)
		nomem();
	if (!move) {
		if (kt_patch_apply_event(p, pb, &pev) == -1)
			nomem();
		return kt_writer_event(w, &pev);
	}
	if (ev.ts - shift > KT_TIME_MAX) {
		/* Times spread over more than the range: refused. */
		kt_cli_warn("%s: %s:%llu: rebased ts out of range (the "
		    "times span more than 2^62 ns)", kt_reader_name(st->r),
		    kt_kind_name(ev.kind), (unsigned long long)ev.index);
		kt_cli_die(NULL);
	}
	if (ev.ts - shift < 0) {
		/* Only metadata can be earlier than the shift. */
		(*clamped)++;
		k = kt_time_format(0, ev.ts_decimals, num);
	} else
		k = kt_event_ts_shifted(&ev, -shift, num);
	if (kt_patch_set(p, KT_F_TS, num, k) == -1 ||
	    kt_patch_apply_event(p, pb, &pev) == -1)
		nomem();
	return kt_writer_event(w, &pev);
}

/* Build the top-level keys to write: the input's, with ktRebaseNs set. */
static struct kt_meta *
out_metas(struct kt_reader *r, int64_t shift, int rebase, size_t *n,
    char *numbuf)
{
	const struct kt_meta *m = kt_reader_metas(r, n);
	struct kt_meta *o;
	size_t i, j = 0;
	int64_t prev = 0;

	if ((o = calloc(*n + 1, sizeof(*o))) == NULL)
		nomem();
	for (i = 0; i < *n; i++) {
		if (rebase && strcmp(m[i].key, "\"" KT_KEY_REBASE "\"") == 0) {
			/* An earlier rebase: the shifts add up. */
			struct kt_error err;
			json_t *jv = kt_meta_json(&m[i], &err);

			if (jv == NULL || !json_is_integer(jv)) {
				kt_cli_warn("%s: %s is not an integer",
				    kt_reader_name(r), KT_KEY_REBASE);
				kt_cli_die(NULL);
			}
			prev = json_integer_value(jv);
			json_decref(jv);
			continue;
		}
		o[j++] = m[i];
	}
	if (rebase) {
		o[j].key = (char *)"\"" KT_KEY_REBASE "\"";
		o[j].keylen = strlen(o[j].key);
		if (kt_time_add(prev, shift, &prev) == -1) {
			kt_cli_warn("%s: %s plus this shift is out of range "
			    "(2^62 ns)", kt_reader_name(r), KT_KEY_REBASE);
			kt_cli_die(NULL);
		}
		o[j].vallen = kt_int_format(prev, numbuf);
		o[j].val = numbuf;
		o[j].after = 0;
		j++;
	}
	*n = j;
	return o;
}

/* Read every event into the store. */
static void
read_held(struct state *st)
{
	struct kt_event ev;
	struct kt_error err;
	struct kt_rows si;
	size_t i;
	int rc, applied;

	while ((rc = kt_reader_next(st->r, &ev, &err)) == 1) {
		hold(st, &ev);
		if ((kt_store_count(st->store) & 0xffff) == 0)
			kt_cli_progress(st->r);
	}
	if (rc == -1)
		die_error(&err);
	st->recs = kt_store_recs(st->store, &st->n);
	st->threads = kt_store_threads(st->store);
	/* Row numbers the input gave after its events: map positions. */
	if (kt_reader_rows(st->r, &si, &applied) && !applied) {
		for (i = 0; i < st->n && st->recs[i].index == i; i++)
			;
		if (i == st->n)
			for (i = 0; i < st->n; i++)
				st->recs[i].index = i < si.n ?
				    kt_rows_at(&si, i) : i;
	}
}

/* The output order: metadata, then events without a time, then by time. */
static uint64_t
order_key(const struct kt_rec *r, void *ctx)
{
	int64_t minkey = *(const int64_t *)ctx;

	if (r->ph == 'M')
		return 0;
	if (!(r->flags & KT_EV_TS))
		return 1;
	return (uint64_t)(r->ts - minkey) + 2;
}

/*
 * The held events' output order: metadata first, then events without a
 * time, then the rest by time; the sort is stable, so equal times keep
 * the file order.  Then pair B and E in that order: the
 * dropped Es are tagged, the synthesized Es (closers) sorted by time;
 * write_held() puts each closer before the first event later than it
 * (at the end with --keep-order).
 */
static void
plan(struct state *st, const struct opts *o, int64_t minkey)
{
	struct kt_pair *cp;
	size_t i, nc;

	if (!o->keep_order && (st->order = kt_store_order(st->store,
	    order_key, &minkey)) == NULL)
		nomem();
	pair_begin_end(st, st->n, kt_reader_repairs_mut(st->r));
	if ((nc = st->nclosers) == 0)
		return;
	if ((cp = calloc(nc, sizeof(*cp))) == NULL)
		nomem();
	for (i = 0; i < nc; i++) {
		cp[i].key = o->keep_order ? 0 :
		    (uint64_t)(st->closers[i].ts - minkey) + 2;
		cp[i].val = i;
	}
	if (kt_sort_pairs(cp, nc) == -1)
		nomem();
	{
		struct closer *c = malloc(nc * sizeof(*c));

		if (c == NULL)
			nomem();
		for (i = 0; i < nc; i++)
			c[i] = st->closers[cp[i].val];
		free(st->closers);
		st->closers = c;
	}
	free(cp);
}

/*
 * Does closer c go before record r: r is later than it (and not
 * metadata or without a time), and the order is by time?
 */
static int
closer_before(const struct state *st, const struct opts *o, size_t c,
    const struct kt_rec *r, int64_t minkey)
{
	uint64_t rk = order_key(r, &minkey);

	return !o->keep_order && rk >= 2 && rk >
	    (uint64_t)(st->closers[c].ts - minkey) + 2;
}

/* Sort, repair, rebase and write the held events. */
static int
write_held(struct state *st, const struct opts *o, struct kt_writer *w)
{
	struct kt_buf pb = KT_BUF_INIT;
	struct kt_patch p;
	struct kt_meta *metas;
	size_t i, k, nm, nout;
	int64_t minkey = INT64_MAX, shift = 0;
	uint64_t *srcindex, clamped = 0;
	int identity = 1, rc = 0;
	char numbuf[32];

	/* The earliest time of an event that is not metadata. */
	for (i = 0; i < st->n; i++)
		if ((st->recs[i].flags & KT_EV_TS) && st->recs[i].ph != 'M' &&
		    st->recs[i].ts < minkey)
			minkey = st->recs[i].ts;
	if (minkey == INT64_MAX)
		minkey = 0;
	plan(st, o, minkey);
	if ((o->co.rflags & KT_READ_STRICT) && st->nclosers +
	    kt_reader_repairs(st->r)->n[KT_R_UNMATCHED_E] > 0)
		unmatched(st);
	if (o->rebase)
		shift = minkey;
	/* Row ids: write ktSourceIndex when the order is not the identity. */
	if ((srcindex = malloc((st->n + st->nclosers + 1) *
	    sizeof(*srcindex))) == NULL)
		nomem();
	for (i = k = nout = 0; i <= st->n; i++) {
		const struct kt_rec *r = i < st->n ? &st->recs[at(st, i)] :
		    NULL;

		for (; k < st->nclosers && (r == NULL ||
		    closer_before(st, o, k, r, minkey)); k++)
			srcindex[nout++] = st->closers[k].index;
		if (r != NULL && !(r->tag & TAG_DROP))
			srcindex[nout++] = r->index;
	}
	for (i = 0; i < nout && identity; i++)
		identity = srcindex[i] == i;
	metas = out_metas(st->r, shift, o->rebase, &nm, numbuf);
	kt_writer_origin(w, minkey - shift);
	(void)kt_cli_keep_rank(w, st->r);
	if (kt_writer_begin(w, metas, nm, identity ? NULL : srcindex,
	    nout) == -1)
		rc = -1;
	free(srcindex);
	kt_patch_init(&p, NULL);
	for (i = k = 0; i <= st->n && rc == 0; i++) {
		const struct kt_rec *r = i < st->n ? &st->recs[at(st, i)] :
		    NULL;

		for (; rc == 0 && k < st->nclosers && (r == NULL ||
		    closer_before(st, o, k, r, minkey)); k++)
			rc = write_closer(st, w, &st->closers[k], shift);
		if (rc == 0 && r != NULL && !(r->tag & TAG_DROP))
			rc = write_rec(st, w, at(st, i), shift, o, &p, &pb,
			    &clamped);
	}
	if (rc == 0)
		rc = kt_writer_end(w, metas, nm);
	if (clamped > 0)
		kt_cli_warn("%s: rebase: %llu metadata event%s earlier than "
		    "the first event set to ts 0", kt_reader_name(st->r),
		    (unsigned long long)clamped, clamped == 1 ? "" : "s");
	free(metas);
	kt_patch_free(&p);
	kt_buf_free(&pb);
	return rc;
}

/* --strict meets an unmatched B or E. */
static void
unmatched(struct state *st)
{
	kt_cli_warn("%s: unmatched B/E events (kt normalize --check lists "
	    "them)", kt_reader_name(st->r));
	kt_cli_die(NULL);
}

/* Stream in input order: repairs only.  Memory stays bounded. */
static int
run_stream(struct state *st, struct kt_writer *w, int strict)
{
	struct kt_event ev;
	struct kt_error err;
	struct depth *d = NULL;
	size_t nd = 0, i, nm;
	const struct kt_meta *metas;
	int rc, begun = 0;
	uint64_t count = 0;
	int64_t k;
	struct kt_patch p;
	struct kt_buf pb = KT_BUF_INIT;
	unsigned tags;

	kt_patch_init(&p, NULL);
	for (;;) {
		rc = kt_reader_next(st->r, &ev, &err);
		if (rc == -1)
			die_error(&err);
		if (!begun) {
			struct kt_rows si;
			int hassi = kt_reader_rows(st->r, &si, NULL);

			/* Row ids read from the input go on as they were. */
			metas = kt_reader_metas(st->r, &nm);
			(void)kt_cli_keep_rank(w, st->r);
			if (kt_writer_begin_rows(w, metas, nm, hassi ? &si :
			    NULL) == -1)
				goto fail;
			begun = 1;
		}
		if (rc == 0)
			break;
		if ((++count & 0xffff) == 0)
			kt_cli_progress(st->r);
		if (ev.index >= st->nextindex)
			st->nextindex = ev.index + 1;
		if (ev.ph == 'B' || ev.ph == 'E' ||
		    (ev.flags & KT_EV_TS)) {
			uint32_t t = thread_of(st, &ev);

			if (t >= nd) {
				size_t nn = (t + 1) * 2;

				if ((d = realloc(d, nn * sizeof(*d))) == NULL)
					nomem();
				for (i = nd; i < nn; i++) {
					d[i].open = 0;
					d[i].last = INT64_MIN;
				}
				nd = nn;
			}
			if (ev.flags & KT_EV_TS) {
				int64_t end = ev.ts + ((ev.flags & KT_EV_DUR) &&
				    ev.dur > 0 ? ev.dur : 0);

				if (end > d[t].last)
					d[t].last = end;
			}
			if (ev.ph == 'B')
				d[t].open++;
			else if (ev.ph == 'E') {
				if (d[t].open == 0) {
					if (strict)
						unmatched(st);
					kt_reader_repairs_mut(st->r)->
					    n[KT_R_UNMATCHED_E]++;
					continue;
				}
				d[t].open--;
			}
		}
		if ((tags = id_tags(&ev)) != 0) {
			kt_patch_reset(&p, &ev);
			pb.n = 0;
			if (patch_ids(st, &ev, tags, &p) == -1 ||
			    kt_patch_apply_event(&p, &pb, &ev) == -1)
				nomem();
		}
		if (kt_writer_event(w, &ev) == -1)
			goto fail;
	}
	kt_patch_free(&p);
	kt_buf_free(&pb);
	for (i = 0; i < nd; i++)
		for (k = 0; k < d[i].open; k++) {
			struct closer c;

			if (strict)
				unmatched(st);
			c.thread = (uint32_t)i;
			c.ts = d[i].last == INT64_MIN ? 0 : d[i].last;
			c.index = st->nextindex++;
			kt_reader_repairs_mut(st->r)->n[KT_R_UNMATCHED_B]++;
			if (write_closer(st, w, &c, 0) == -1) {
				free(d);
				return -1;
			}
		}
	free(d);
	metas = kt_reader_metas(st->r, &nm);
	return kt_writer_end(w, metas, nm);
fail:
	kt_patch_free(&p);
	kt_buf_free(&pb);
	free(d);
	return -1;
}

/* ------------------------------------------------------------------ */
/* --check */

struct finding {
	const char	*check;
	const struct kt_rec *a;
	const struct kt_rec *b;
	const char	*detail;
};

/* The checks; those from "mixed-id" on are the viewer rules. */
enum check {
	C_OVERLAP, C_UNMATCHED_B, C_UNMATCHED_E, C_BE_NAME, C_MISSING_TS,
	C_NEGATIVE_TS, C_UNBOUND_FLOW, C_TRUNCATED, C_MIXED_ID, C_ROW_ORDER,
	C_COUNTER_SERIES, C_ZERO_NESTED, C_FLOW_ARGS, C_N
};

static const char *const checknames[C_N] = {
	"overlap", "unmatched-B", "unmatched-E", "be-name", "missing-ts",
	"negative-ts", "unbound-flow", "truncated", "mixed-id", "row-order",
	"counter-series", "zero-nested", "flow-args"
};

/* A slice of a thread: an X event (e NULL), or a B and its E. */
struct span {
	struct kt_rec	*a, *e;
	int64_t		 ts, end;
};

/* Append a raw JSON value, without the quotes of a string. */
static void
unquoted(struct kt_buf *b, const char *p, size_t n)
{
	if (n >= 2 && p[0] == '"') {
		p++;
		n -= 2;
	}
	kt_buf_add(b, p, n);
}

static int
report(struct state *st, struct kt_out *out, int which, const struct kt_rec *a,
    const struct kt_rec *b, const char *detail, uint64_t *counts)
{
	struct kt_buf l = KT_BUF_INIT;
	const char *key, *tab;
	size_t kn;
	char num[32];
	int rc;

	counts[which]++;
	kt_buf_adds(&l, checknames[which]);
	kt_buf_addc(&l, '\t');
	kt_buf_adds(&l, kt_kind_name((enum kt_kind)a->kind));
	kt_buf_addc(&l, ':');
	kt_buf_add(&l, num, kt_int_format((int64_t)a->index, num));
	kt_buf_addc(&l, '\t');
	if (b != NULL) {
		kt_buf_adds(&l, kt_kind_name((enum kt_kind)b->kind));
		kt_buf_addc(&l, ':');
		kt_buf_add(&l, num, kt_int_format((int64_t)b->index, num));
	}
	kt_buf_addc(&l, '\t');
	key = kt_intern_get(st->threads, a->thread, &kn);
	tab = memchr(key, '\t', kn);
	unquoted(&l, key, (size_t)(tab - key));
	kt_buf_addc(&l, '\t');
	unquoted(&l, tab + 1, kn - (size_t)(tab - key) - 1);
	kt_buf_addc(&l, '\t');
	if (a->flags & KT_EV_TS)
		kt_buf_add(&l, num, kt_int_format(a->ts, num));
	kt_buf_addc(&l, '\t');
	kt_buf_adds(&l, detail);
	kt_buf_addc(&l, '\n');
	rc = kt_out_write(out, l.p, l.n);
	kt_buf_free(&l);
	return rc;
}

/* Order: thread, then start, then longer first, then file order. */
static int
cmp_slice(const void *x, const void *y)
{
	const struct kt_rec *a = *(const struct kt_rec *const *)x;
	const struct kt_rec *b = *(const struct kt_rec *const *)y;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a < b ? -1 : a > b;	/* file order */
}

/* The end of slice r (ts + dur, dur taken as 0 when missing). */
static int64_t
end_of(const struct kt_rec *r)
{
	return r->ts + ((r->flags & KT_EV_DUR) ? r->dur : 0);
}

/* Is r a zero-length slice: X of dur 0, or an instant of its thread? */
static int
zero_len(const struct kt_rec *r)
{
	if (r->ph == 'X')
		return (r->flags & KT_EV_DUR) && r->dur == 0;
	return (r->ph == 'i' || r->ph == 'I') && (r->tag & TAG_THREAD_I);
}

/*
 * Zero-length slices that start where a slice of their thread ends:
 * chrome://tracing nests such a slice inside the one that ends there
 * (a child may start at or end at its parent's bounds), a level down.
 * all holds the X events and thread instants sorted by cmp_slice.
 */
static void
zero_nested(struct state *st, struct kt_out *out, struct kt_rec **all,
    size_t n, struct kt_rec **stack, uint64_t *counts)
{
	size_t i, j, sp;

	for (i = 0; i < n; i = j) {
		sp = 0;
		for (j = i; j < n && all[j]->thread == all[i]->thread; j++) {
			struct kt_rec *r = all[j];

			while (sp > 0 && end_of(stack[sp - 1]) < r->ts)
				sp--;
			if (zero_len(r)) {
				if (sp > 0 && end_of(stack[sp - 1]) == r->ts &&
				    stack[sp - 1]->ts < r->ts)
					report(st, out, C_ZERO_NESTED,
					    stack[sp - 1], r, "a zero-length "
					    "slice starts where this one ends: "
					    "chrome://tracing draws it inside, "
					    "a level down", counts);
				continue;
			}
			while (sp > 0 && end_of(stack[sp - 1]) <= r->ts)
				sp--;
			if (sp == 0 || end_of(r) <= end_of(stack[sp - 1]))
				stack[sp++] = r;
		}
	}
}

/* Order: thread, then start, then longer first, then file order. */
static int
cmp_span(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->a->thread != b->a->thread)
		return a->a->thread < b->a->thread ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end - a->ts != b->end - b->ts)
		return a->end - a->ts > b->end - b->ts ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;	/* file order */
}

/*
 * A complete slice and a B/E pair of one thread that overlap without
 * nesting (sp, n of them, sorted by cmp_span): the viewers' stack of a
 * thread holds both kinds.  X against X is the overlap check's own.
 */
static void
span_overlaps(struct state *st, struct kt_out *out, struct span *sp,
    size_t n, struct span **stack, uint64_t *counts)
{
	size_t i, j, k;

	for (i = 0; i < n; i = j) {
		k = 0;
		for (j = i; j < n && sp[j].a->thread == sp[i].a->thread; j++) {
			struct span *r = &sp[j];

			while (k > 0 && stack[k - 1]->end <= r->ts)
				k--;
			if (k > 0 && r->end > stack[k - 1]->end) {
				if ((stack[k - 1]->e == NULL) != (r->e == NULL))
					report(st, out, C_OVERLAP,
					    stack[k - 1]->a, r->a, "a complete "
					    "slice and a B/E slice on one thread "
					    "overlap without nesting", counts);
				continue;
			}
			stack[k++] = r;
		}
	}
}

/* Order: flow, then time, then file order. */
static int
cmp_vflow(const void *x, const void *y)
{
	const struct vflow *a = x, *b = y;

	if (a->flow != b->flow)
		return a->flow < b->flow ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/*
 * Flow ends whose args chrome://tracing merges into one flow event: in
 * time order, an s (or t) opens a flow and the next t or f of the same
 * (id, cat, name) ends it, its args merged into the opener's; a key in
 * both is an arg_merge_error.  A t opens the next flow; an s while one is
 * open, or an f with none, is ignored.
 */
static void
flow_args(struct state *st, struct kt_out *out, uint64_t *counts)
{
	struct viewer *vw = st->vw;
	const struct vflow *open = NULL;
	size_t i, n;

	if (vw->nflow > 1)
		qsort(vw->flow, vw->nflow, sizeof(*vw->flow), cmp_vflow);
	for (i = 0; i < vw->nflow; i++) {
		const struct vflow *f = &vw->flow[i];
		char ph = st->recs[f->pos].ph;

		if (i > 0 && f->flow != vw->flow[i - 1].flow)
			open = NULL;
		if (f->ts == INT64_MIN)
			continue;
		if (ph == 's') {
			if (open == NULL)
				open = f;
			continue;
		}
		if (open != NULL && open->keys != NULL && f->keys != NULL &&
		    shared_key(f->keys, open->keys, &n) != NULL)
			report(st, out, C_FLOW_ARGS, &st->recs[open->pos],
			    &st->recs[f->pos], "both ends of a flow carry args "
			    "with one key: chrome://tracing merges them "
			    "(arg_merge_error)", counts);
		open = ph == 't' && open != NULL ? f : NULL;
	}
}

/*
 * The viewer rules (kt-normalize(1)): ids spelled as strings and as
 * numbers, layer guide rows that do not sort above their pid's other
 * rows, counters of several series, flow ends that share args keys.
 */
static void
viewer_rules(struct state *st, struct kt_out *out, uint64_t *counts)
{
	struct viewer *vw = st->vw;
	struct kt_buf d = KT_BUF_INIT;
	size_t i, j, kn, nt = kt_intern_count(st->threads);
	const char *key;
	char num[32];

	if (nt > vw->nthr)
		nt = vw->nthr;

	for (i = 0; i < vw->npid; i++)
		if (vw->pid[i].str != NOREC && vw->pid[i].num != NOREC)
			report(st, out, C_MIXED_ID, &st->recs[vw->pid[i].str],
			    &st->recs[vw->pid[i].num], "pid spelled as a "
			    "string and as a number: Perfetto makes two "
			    "processes (kt normalize repairs it)", counts);
	for (i = 0; i < nt; i++)
		if (vw->thr[i].str != NOREC && vw->thr[i].num != NOREC)
			report(st, out, C_MIXED_ID, &st->recs[vw->thr[i].str],
			    &st->recs[vw->thr[i].num], "tid spelled as a "
			    "string and as a number: Perfetto makes two "
			    "threads (kt normalize repairs it)", counts);
	/* A guide row sorts above every other row of its pid. */
	for (i = 0; i < nt; i++) {
		const struct vthread *g = &vw->thr[i];
		const char *gk;
		size_t gp;

		if (!g->guide || g->sort == NOREC)
			continue;
		gk = kt_intern_get(st->threads, (uint32_t)i, &kn);
		gp = (size_t)((const char *)memchr(gk, '\t', kn) - gk);
		for (j = 0; j < nt; j++) {
			const struct vthread *o = &vw->thr[j];
			size_t on;

			if (j == i || o->guide || !o->used || o->sort == NOREC ||
			    o->sortv > g->sortv)
				continue;
			key = kt_intern_get(st->threads, (uint32_t)j, &on);
			if (on <= gp || key[gp] != '\t' ||
			    memcmp(key, gk, gp) != 0)
				continue;
			d.n = 0;
			kt_buf_adds(&d, "the layer guide row sorts at ");
			kt_buf_add(&d, num, kt_int_format(g->sortv, num));
			kt_buf_adds(&d, ", not above the row of tid ");
			kt_buf_add(&d, key + gp + 1, on - gp - 1);
			kt_buf_adds(&d, " at ");
			kt_buf_add(&d, num, kt_int_format(o->sortv, num));
			kt_buf_adds(&d, ": viewers draw it below");
			if (kt_buf_addc(&d, '\0') == -1)
				nomem();
			report(st, out, C_ROW_ORDER, &st->recs[g->sort],
			    &st->recs[o->sort], d.p, counts);
		}
	}
	for (i = 0; i < vw->nmany; i++)
		report(st, out, C_COUNTER_SERIES, &st->recs[vw->many[i]], NULL,
		    "a counter of several series: chrome://tracing stacks "
		    "them (write one counter per series)", counts);
	flow_args(st, out, counts);
	kt_buf_free(&d);
}

static int
run_check(struct state *st, struct kt_out *out)
{
	static const char hdr[] = "check\tid\tother\tpid\ttid\tts_ns\tdetail\n";
	struct kt_rec **sl, **be, **stack, **all;
	struct span *spans, **sstack;
	const struct kt_repairs *rep = kt_reader_repairs(st->r);
	int64_t *maxend;
	size_t i, j, nsl = 0, nbe = 0, nall = 0, nspan = 0, sp;
	uint64_t counts[C_N];
	int any = 0;

	memset(counts, 0, sizeof(counts));

	if (kt_out_write(out, hdr, sizeof(hdr) - 1) == -1)
		return -1;
	if ((sl = malloc((st->n + 1) * sizeof(*sl))) == NULL ||
	    (be = malloc((st->n + 1) * sizeof(*be))) == NULL ||
	    (stack = malloc((st->n + 1) * sizeof(*stack))) == NULL ||
	    (maxend = malloc((st->n + 1) * sizeof(*maxend))) == NULL ||
	    (all = malloc((st->n + 1) * sizeof(*all))) == NULL ||
	    (spans = malloc((st->n + 1) * sizeof(*spans))) == NULL ||
	    (sstack = malloc((st->n + 1) * sizeof(*sstack))) == NULL)
		nomem();
	for (i = 0; i < st->n; i++) {
		struct kt_rec *r = &st->recs[i];

		if (r->ph == 'M')
			continue;
		if (!(r->flags & KT_EV_TS)) {
			report(st, out, C_MISSING_TS, r, NULL, "no numeric ts", counts);
			continue;
		}
		if (r->ts < 0)
			report(st, out, C_NEGATIVE_TS, r, NULL, "Perfetto drops negative "
			    "times", counts);
		if (r->ph == 'X')
			sl[nsl++] = r;
		else if (r->ph == 'B' || r->ph == 'E')
			be[nbe++] = r;
		if (r->ph == 'X' || zero_len(r))
			all[nall++] = r;
	}
	/* Same-thread partial overlaps of X events. */
	qsort(sl, nsl, sizeof(*sl), cmp_slice);
	for (i = 0; i < nsl; i = j) {
		sp = 0;
		for (j = i; j < nsl && sl[j]->thread == sl[i]->thread; j++) {
			struct kt_rec *r = sl[j];

			while (sp > 0 && end_of(stack[sp - 1]) <= r->ts)
				sp--;
			if (sp > 0 && end_of(r) > end_of(stack[sp - 1])) {
				report(st, out, C_OVERLAP, stack[sp - 1], r,
				    "slices on one thread overlap without "
				    "nesting", counts);
				continue;
			}
			stack[sp++] = r;
		}
	}
	/*
	 * B/E pairing per thread, in time order: an E ends the innermost B
	 * open, whatever its name (as both viewers do).
	 */
	qsort(be, nbe, sizeof(*be), cmp_slice);
	for (i = 0; i < nbe; i = j) {
		sp = 0;
		for (j = i; j < nbe && be[j]->thread == be[i]->thread; j++) {
			if (be[j]->ph == 'B') {
				stack[sp++] = be[j];
				continue;
			}
			if (sp == 0) {
				report(st, out, C_UNMATCHED_E, be[j], NULL, "E without a "
				    "B", counts);
				continue;
			}
			sp--;
			if (be[j]->aux != 0 && stack[sp]->aux != 0 &&
			    be[j]->aux != stack[sp]->aux)
				report(st, out, C_BE_NAME, stack[sp], be[j],
				    "the E that ends this B has another name: "
				    "the viewers end the B's slice "
				    "(chrome://tracing warns title_match_error)",
				    counts);
			spans[nspan].a = stack[sp];
			spans[nspan].e = be[j];
			spans[nspan].ts = stack[sp]->ts;
			spans[nspan++].end = be[j]->ts;
		}
		while (sp > 0)
			report(st, out, C_UNMATCHED_B, stack[--sp], NULL, "B without an "
			    "E", counts);
	}
	/* Complete slices against B/E slices, where a thread has both. */
	if (nspan > 0) {
		for (i = 0; i < nsl; i++) {
			spans[nspan].a = sl[i];
			spans[nspan].e = NULL;
			spans[nspan].ts = sl[i]->ts;
			spans[nspan++].end = end_of(sl[i]);
		}
		qsort(spans, nspan, sizeof(*spans), cmp_span);
		span_overlaps(st, out, spans, nspan, sstack, counts);
	}
	/*
	 * Flow ends: s, t and f with bp "e" bind to an enclosing slice of
	 * their thread; f without it to the next slice that begins.
	 */
	for (i = 0; i < nsl; i++)
		maxend[i] = i > 0 && sl[i - 1]->thread == sl[i]->thread &&
		    maxend[i - 1] > end_of(sl[i]) ? maxend[i - 1] :
		    end_of(sl[i]);
	for (i = 0; i < st->n; i++) {
		struct kt_rec *r = &st->recs[i];
		size_t lo = 0, hi = nsl;
		int ok = 0;

		if (r->kind != KT_FLOW || !(r->flags & KT_EV_TS))
			continue;
		/* First slice with (thread, ts) > (r->thread, r->ts). */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (sl[mid]->thread < r->thread ||
			    (sl[mid]->thread == r->thread &&
			    sl[mid]->ts <= r->ts))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (r->ph == 'f' && !(r->tag & TAG_BP_E)) {
			/* The next slice that begins at or after ts. */
			size_t k = lo;

			while (k > 0 && sl[k - 1]->thread == r->thread &&
			    sl[k - 1]->ts == r->ts)
				k--;
			ok = k < nsl && sl[k]->thread == r->thread;
		} else
			ok = lo > 0 && sl[lo - 1]->thread == r->thread &&
			    maxend[lo - 1] >= r->ts;
		if (!ok)
			report(st, out, C_UNBOUND_FLOW, r, NULL, r->ph == 'f' &&
			    !(r->tag & TAG_BP_E) ?
			    "no slice begins on the thread after the flow end" :
			    "no slice on the thread encloses the flow end",
			    counts);
	}
	qsort(all, nall, sizeof(*all), cmp_slice);
	zero_nested(st, out, all, nall, stack, counts);
	viewer_rules(st, out, counts);
	free(sl);
	free(be);
	free(stack);
	free(maxend);
	free(all);
	free(spans);
	free(sstack);
	/*
	 * An input that ends early: every complete event was checked, but
	 * the trace is not whole (a data condition, exit 1); its line says
	 * where it ends, as the error of --strict does.
	 */
	if (rep->n[KT_R_TRUNCATED] > 0) {
		char line[256];

		counts[C_TRUNCATED]++;
		if (rep->tsv_cut)
			snprintf(line, sizeof(line), "truncated\t\t\t\t\t\t"
			    "the TSV input ends without its end row\n");
		else
			snprintf(line, sizeof(line), "truncated\t\t\t\t\t\t"
			    "the input ends inside an event: %llu bytes after "
			    "the last complete event\n", (unsigned long long)
			    rep->truncated_bytes);
		if (kt_out_write(out, line, strlen(line)) == -1)
			return -1;
	}
	for (i = 0; i < C_N; i++) {
		if (counts[i] == 0)
			continue;
		any = 1;
		if (i == C_TRUNCATED)
			kt_cli_warn("%s:%ld:%ld: check: truncated input: every "
			    "complete event checked, %llu bytes dropped",
			    kt_reader_name(st->r), rep->truncated_line,
			    rep->truncated_col, (unsigned long long)
			    rep->truncated_bytes);
		else
			kt_cli_warn("%s: check: %llu %s", kt_reader_name(st->r),
			    (unsigned long long)counts[i], checknames[i]);
	}
	return any;
}

/* Is path a regular file of plain JSON (held as its events' places)? */
static int
plain_file(const char *path)
{
	struct kt_hold *h = kt_hold_new(path, path);
	int plain = kt_hold_plain(h);

	kt_hold_free(h);
	return plain;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "keep-order", no_argument, NULL, 'k' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "rebase", no_argument, NULL, 'r' },
		{ "strict", no_argument, NULL, 'S' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { 0, 0, 0, 0, KT_CLI_OPTS_INIT };
	struct state st;
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_out *out;
	struct kt_writer *w;
	struct kt_error err;
	struct kt_repairs repairs;
	const char *path;
	char name[1100];
	int ch, rc, stream;

	kt_cli_init("kt-normalize");
	while ((ch = getopt_long(argc, argv, "chkl:m:o:rStV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			o.check = 1;
			break;
		case 'k':
			o.keep_order = 1;
			break;
		case 'r':
			o.rebase = 1;
			break;
		case 't':
			o.tsv = 1;
			break;
		default:
			kt_cli_opt(&o.co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one input at a time (use kt rank-tag to merge)");
		usage(stderr);
		return 2;
	}
	if (o.check && (o.rebase || o.tsv)) {
		kt_cli_warn("--check writes a report, not a trace: it takes "
		    "no --rebase or --tsv");
		return 2;
	}
	path = argc == 1 ? argv[0] : "-";
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(o.co.output, argv, argc) == -1)
		return 2;
	if (kt_cli_check_level(o.co.level, o.co.output) == -1)
		return 2;
	/* --check reports a time out of range; the others refuse it. */
	r = kt_cli_open_one(path, path, o.co.member, o.co.rflags |
	    (o.check ? KT_READ_ANYTIME : 0), &src);
	memset(&st, 0, sizeof(st));
	kt_idmemo_init(&st.memo);
	st.r = r;
	/*
	 * Stream only when the order stays and the input is one trace; else
	 * read it all first, and refuse an archive of several traces before
	 * anything is written.
	 */
	stream = o.keep_order && !o.rebase && !o.check &&
	    !kt_source_archived(src);
	/*
	 * Sorted, a compressed or archived trace, or a pipe, would be held
	 * as its text: it is decompressed into a temporary file instead
	 * and held as a plain file (its events' places), as slice-window
	 * holds one.  An archive of several traces is refused first.
	 */
	if (!stream && !o.check && kt_reader_form(r) != KT_FORM_TSV &&
	    !plain_file(path)) {
		char *copy = kt_cli_spool_reader(r);

		kt_reader_free(r);
		kt_cli_one_trace(src, path, "holds several traces; pick one "
		    "with --member or merge them with kt rank-tag", 1);
		kt_source_close(src);
		path = copy;
		st.r = r = kt_cli_open_one(path, NULL, NULL, o.co.rflags, &src);
	}
	/*
	 * Held, a record per event: its bytes (but with --check; of a plain
	 * file, only their place: they are read again as they are written),
	 * its thread, and the fields the output needs without a second
	 * scan: the columns of TSV, the ts a rebase changes.
	 */
	if ((!stream && !o.check &&
	    (st.holder = kt_hold_new(path, path)) == NULL) ||
	    (st.store = kt_store_new(KT_STORE_THREADS | (o.check ?
	    KT_STORE_NOBYTES : 0), (o.tsv ? KT_FCOLUMNS : 0) |
	    (o.rebase ? KT_FBIT(KT_F_TS) : 0), st.holder)) == NULL ||
	    (st.own = kt_intern_new()) == NULL)
		nomem();
	st.threads = st.own;
	if (o.check && ((st.vw = calloc(1, sizeof(*st.vw))) == NULL ||
	    (st.vw->pids = kt_intern_new()) == NULL ||
	    (st.vw->flows = kt_intern_new()) == NULL ||
	    (st.vw->counters = kt_intern_new()) == NULL ||
	    (st.vw->names = kt_intern_new()) == NULL))
		nomem();
	out = kt_cli_out_open(o.co.output, o.co.level);
	if ((w = kt_writer_new(out, o.tsv ? KT_WRITE_TSV : KT_WRITE_ROWS)) == NULL)
		nomem();
	/*
	 * Streaming writes ktSourceIndex before the events: a plain file's
	 * end tells if it has one after them.
	 */
	if (stream && kt_reader_tail(r, &err) == -1)
		kt_cli_die(&err);
	if (!stream) {
		read_held(&st);
		/* What was read is what is written: the file must not change. */
		if (kt_hold_check(st.holder, &err) == -1)
			kt_cli_die(&err);
		kt_cli_one_trace(src, path, "holds several traces; pick one "
		    "with --member or merge them with kt rank-tag", 1);
	}
	if (o.check)
		rc = run_check(&st, out);
	else if (stream)
		rc = run_stream(&st, w, (o.co.rflags & KT_READ_STRICT) != 0);
	else
		rc = write_held(&st, &o, w);
	kt_cli_progress_done();
	/* The events were read again as they were written: still the same? */
	if (rc != -1 && kt_hold_check(st.holder, &err) == -1)
		kt_cli_die(&err);
	repairs = *kt_reader_repairs(r);
	/* --check reported the truncation as a finding, not a repair. */
	if (o.check)
		repairs.n[KT_R_TRUNCATED] = 0;
	snprintf(name, sizeof(name), "%s", kt_reader_name(r));
	/* When a write failed, commit reports why and removes the file. */
	kt_cli_out_commit(out, rc == -1, &err);
	kt_cli_report_repairs(name, &repairs);
	kt_writer_free(w);
	kt_reader_free(r);
	kt_source_close(src);
	kt_store_free(st.store);
	kt_hold_free(st.holder);
	free(st.order);
	kt_intern_free(st.own);
	viewer_free(st.vw);
	free(st.closers);
	kt_buf_free(&st.key);
	return rc == 1 ? 1 : 0;
}
