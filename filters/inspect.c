/*
 * kt-inspect: one event as a person wants to read it.  For each row id
 * given: the event's bytes as read, its typed fields (times in ns from
 * the decimal text), on its thread the spans around it and those
 * directly in it, its step, a GPU activity's launch chain
 * (lib/model/chain.c) or the activities launched under a span, the
 * flows bound to it with the slice at each end (lib/model/flow.c), and
 * the Python stack around it.
 *
 * The input is read three times (standard input or a pipe is copied
 * first): pass 1 the row number of each position and the flows, pass 2
 * the model (with KT_READ_POSITIONS, so that its rows are positions,
 * which a merged trace's row numbers are not), pass 3 the bytes of the
 * events printed.  A plain JSON file is read once: passes 1 and 2 are one
 * read (kt_cli_model_each: the model by position, and with each event
 * read, its row, its flow end or slice, and where it is, kt_places), and
 * pass 3 reads again the bytes of the events printed from their places.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

#define UNSEEN	UINT64_MAX	/* no event was read at this position */
#define FIRST	5		/* children and activities listed */

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-inspect [-jSV] [-F regex] [-f file] [-m glob] "
	    "[-n count] [-o file]\n"
	    "           rowid ... [file]\n"
	    "  rowid                   kind:N or N, the event's row number\n"
	    "                          (as kt-correlate, kt-ops print it)\n"
	    "  -F, --frame-skip REGEX  files that are not the user's code\n"
	    "  -f, --file FILE         the trace (else the last operand when\n"
	    "                          it is no row id, else stdin)\n"
	    "  -j, --json              one JSON object per row\n"
	    "  -m, --member GLOB       archive members to take\n"
	    "  -n, --first N           children and activities listed (5;\n"
	    "                          0: all)\n"
	    "  -o, --output FILE       write FILE atomically\n"
	    "  -S, --strict            refuse damaged input\n"
	    "  -h, --help, -V, --version\n");
}

/* A row id asked for: its operand, its row number. */
struct ask {
	const char	*arg;
	uint64_t	 row;
};

/* Everything one run keeps, made in main() and passed down. */
struct insp {
	struct kt_cli_opts	 co;
	const char		*skip;
	const char		*path;	/* the input to read (maybe a copy) */
	const char		*name;	/* its name in messages */
	size_t			 first;	/* -n; SIZE_MAX: all */
	struct ask		*asks;
	size_t			 nasks;
	uint64_t		*rows;	/* per position: row number */
	uint64_t		 npos, cappos;
	int64_t			 rank;	/* the trace's, or -1 */
	struct kt_flows		*flows;
	const struct kt_flow_end *fl;
	size_t			 nfl;
	struct kt_model		*m;
	struct kt_chains	*ch;
	uint32_t		*act_at;	/* per position: activity */
	uint32_t		*span_at;	/* per position: span */
	uint64_t		*targets;	/* positions printed */
	size_t			 ntargets, captargets;
	/*
	 * The positions of the events whose bytes pass 3 keeps (sorted),
	 * and each one's record in store (NOREC: not read).
	 */
	uint64_t		*held;
	uint32_t		*hrec;
	size_t			 nheld, capheld;
	struct kt_store		*store;
	struct kt_hold		*hold;	/* a plain JSON file: */
	struct kt_places	*places; /* where pass 1 read each event */
	struct kt_buf		 b;	/* one block of text */
	struct kt_buf		 tmp;
	struct kt_out		*out;
	int			 json;
};

/* ------------------------------------------------------------------ */
/* Options. */

/* Whether s is a list of row ids, kind:N or N (kt_cli_ids parses it). */
static int
is_rowids(const char *s)
{
	const char *p = s;

	while (*p != '\0') {
		const char *q = p;

		while ((*q >= 'a' && *q <= 'z') || *q == '_')
			q++;
		if (q > p) {
			if (*q != ':')
				return 0;
			q++;
		}
		if (*q < '0' || *q > '9')
			return 0;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == ',' && q[1] != '\0')
			q++;
		else if (*q != '\0')
			return 0;
		p = q;
	}
	return p > s;
}

static void
add_asks(struct insp *s, const char *arg)
{
	uint64_t *ids = NULL;
	size_t n = 0, i;
	struct ask *a;

	kt_cli_ids("row id", arg, &ids, &n);
	if ((a = realloc(s->asks, (s->nasks + n) * sizeof(*a))) == NULL)
		kt_cli_nomem();
	s->asks = a;
	for (i = 0; i < n; i++) {
		a[s->nasks].arg = arg;
		a[s->nasks++].row = ids[i];
	}
	free(ids);
}

static void
parse_args(struct insp *s, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "first", required_argument, NULL, 'n' },
		{ "frame-skip", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 'S' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_error err;
	char *file = NULL;
	long long n;
	int ch, i;

	s->first = FIRST;
	while ((ch = getopt_long(argc, argv, "F:f:hjm:n:o:SV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'F':
			s->skip = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'n':
			n = kt_cli_int("--first", optarg, 0, INT32_MAX);
			s->first = n == 0 ? SIZE_MAX : (size_t)n;
			break;
		default:
			kt_cli_opt(&s->co, ch, optarg, usage);
		}
	}
	s->json = s->co.form == KT_TABLE_JSON;
	argc -= optind;
	argv += optind;
	if (file == NULL && argc > 1 && !is_rowids(argv[argc - 1]))
		file = argv[--argc];
	if (argc == 0) {
		kt_cli_warn("no row id (kind:N or N)");
		usage(stderr);
		exit(2);
	}
	for (i = 0; i < argc; i++) {
		if (!is_rowids(argv[i])) {
			kt_cli_warn("bad row id '%s' (kind:N or N; the trace "
			    "is the last operand or -f)", argv[i]);
			exit(2);
		}
		add_asks(s, argv[i]);
	}
	if (s->skip != NULL && kt_chains_check(s->skip, &err) == -1) {
		kt_cli_warn("%s", err.msg);
		exit(2);
	}
	kt_cli_inputs(file != NULL ? &file : NULL, file != NULL);
	if (kt_cli_check_output(s->co.output, file != NULL ? &file : NULL,
	    file != NULL) == -1)
		exit(2);
	s->name = file != NULL && strcmp(file, "-") != 0 ? file : "<stdin>";
	s->path = kt_cli_input_path(file);
}

/* ------------------------------------------------------------------ */
/* Pass 1: the row number of each position, the slices and flows. */

static void
set_row(struct insp *s, uint64_t p, uint64_t row)
{
	if (p >= s->cappos) {
		uint64_t c = s->cappos ? s->cappos : 4096, *t;

		while (c <= p)
			c *= 2;
		if ((t = realloc(s->rows, c * sizeof(*t))) == NULL)
			kt_cli_nomem();
		memset(t + s->cappos, 0xff, (c - s->cappos) * sizeof(*t));
		s->rows = t;
		s->cappos = c;
	}
	if (p >= s->npos)
		s->npos = p + 1;
	s->rows[p] = row;
}

/*
 * The end of pass 1: each row through si (when not NULL), the trace's
 * rank, the repairs told, the reader closed, the flows bound.
 */
static void
rows_done(struct insp *s, struct kt_reader *rd, struct kt_source *src,
    const struct kt_rows *si)
{
	uint64_t p;

	for (p = 0; si != NULL && p < s->npos && p < si->n; p++)
		if (s->rows[p] != UNSEEN)
			s->rows[p] = kt_rows_at(si, p);
	s->rank = kt_reader_rank(rd);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_reader_free(rd);
	kt_source_close(src);
	if (kt_flows_bind(s->flows) == -1)
		kt_cli_nomem();
	s->fl = kt_flows_ends(s->flows, &s->nfl);
}

/*
 * Passes 1 and 2 in one read (a plain JSON file): each event read for the
 * model (by position, KT_READ_POSITIONS) also gives its row (the
 * ktSourceIndex's, mapped at the end), its flow end or slice and its
 * place.
 */
static int
each_event(void *arg, const struct kt_event *ev, struct kt_error *err)
{
	struct insp *s = arg;
	uint64_t p = ev->index;		/* its position */

	set_row(s, p, p);
	if (kt_flows_add(s->flows, ev, p) == -1) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return -1;
	}
	return kt_places_add(s->places, p, ev, err);
}

static void
rows_and_model(struct insp *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_rows si;

	rd = kt_cli_open_one(s->path, s->name, s->co.member,
	    s->co.rflags | KT_READ_POSITIONS, &src);
	s->m = kt_cli_model_each(rd, KT_MODEL_SEQ, each_event, s);
	kt_cli_one_trace(src, s->name, "several traces: pick one with "
	    "--member", 0);
	/* Row p is the ktSourceIndex's (before or after the events). */
	rows_done(s, rd, src, kt_reader_srcindex(rd, &si) ? &si : NULL);
}

static void
pass_rows(struct insp *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_event ev;
	struct kt_error err;
	struct kt_rows si;
	uint64_t p;
	int rc, applied;

	if ((s->hold = kt_hold_new(s->path, s->name)) == NULL)
		kt_cli_nomem();
	if (kt_hold_plain(s->hold)) {
		if ((s->places = kt_places_new(s->hold)) == NULL)
			kt_cli_nomem();
		rows_and_model(s);
		return;
	}
	rd = kt_cli_open_one(s->path, s->name, s->co.member, s->co.rflags,
	    &src);
	while ((rc = kt_reader_next(rd, &ev, &err)) == 1) {
		p = kt_reader_position(rd);
		set_row(s, p, ev.index);
		if (kt_flows_add(s->flows, &ev, p) == -1)
			kt_cli_nomem();
	}
	if (rc == -1)
		kt_cli_die(&err);
	kt_cli_one_trace(src, s->name, "several traces: pick one with "
	    "--member", 0);
	/* A ktSourceIndex after the events numbered them by position. */
	rows_done(s, rd, src, kt_reader_rows(rd, &si, &applied) &&
	    !applied ? &si : NULL);
}

/* Pass 2: the model, by position, and where each position is in it. */
static void
pass_model(struct insp *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_error err;
	uint64_t n = s->npos ? s->npos : 1;
	size_t i;

	if (s->m == NULL) {	/* not read with the rows */
		rd = kt_cli_open_one(s->path, s->name, s->co.member,
		    s->co.rflags | KT_READ_POSITIONS, &src);
		s->m = kt_cli_model_with(rd, KT_MODEL_SEQ);
		kt_reader_free(rd);
		kt_source_close(src);
	}
	if ((s->ch = kt_chains_new(s->m, s->skip, &err)) == NULL)
		kt_cli_die(&err);
	if ((s->act_at = malloc(n * sizeof(*s->act_at))) == NULL ||
	    (s->span_at = malloc(n * sizeof(*s->span_at))) == NULL)
		kt_cli_nomem();
	memset(s->act_at, 0xff, n * sizeof(*s->act_at));
	memset(s->span_at, 0xff, n * sizeof(*s->span_at));
	for (i = 0; i < s->m->nact; i++)
		if (s->m->act[i].index < s->npos)
			s->act_at[s->m->act[i].index] = (uint32_t)i;
	for (i = 0; i < s->m->nspans; i++)
		if (s->m->spans[i].index < s->npos)
			s->span_at[s->m->spans[i].index] = (uint32_t)i;
}

/* ------------------------------------------------------------------ */
/* Which events are printed, and whose bytes are needed. */

#define NOREC	UINT32_MAX

static void
hold(struct insp *s, uint64_t p)
{
	uint64_t *h;

	if (s->nheld == s->capheld) {
		size_t c = s->capheld ? s->capheld * 2 : 64;

		if ((h = realloc(s->held, c * sizeof(*h))) == NULL)
			kt_cli_nomem();
		s->held = h;
		s->capheld = c;
	}
	s->held[s->nheld++] = p;
}

static int
cmp_pos(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The record of the held event at position p, or NOREC. */
static uint32_t
held_at(const struct insp *s, uint64_t p)
{
	const uint64_t *h;

	if (s->nheld == 0 || (h = bsearch(&p, s->held, s->nheld,
	    sizeof(*s->held), cmp_pos)) == NULL)
		return NOREC;
	return s->hrec[h - s->held];
}

/* Whether the held event at position p was repaired as it was read. */
static int
held_repaired(struct insp *s, uint64_t p)
{
	uint32_t r = held_at(s, p);
	size_t n;

	return r != NOREC &&
	    (kt_store_recs(s->store, &n)[r].flags & KT_EV_REPAIRED) != 0;
}

/* The flow ends [*a, *b) of the flow of end i. */
static void
flow_range(const struct insp *s, size_t i, size_t *a, size_t *b)
{
	for (*a = i; *a > 0 && s->fl[*a - 1].key == s->fl[i].key; (*a)--)
		;
	for (*b = i; *b < s->nfl && s->fl[*b].key == s->fl[i].key; (*b)++)
		;
}

/* Whether flow end i is bound to position p or is p. */
static int
flow_touches(const struct insp *s, size_t i, uint64_t p)
{
	return s->fl[i].pos == p || s->fl[i].anchor == p;
}

/*
 * The positions of every row asked for (a merged trace's row numbers
 * repeat: each event with the number), and the events whose bytes are
 * needed: those, and the ends of their flows with their slices.
 */
static int
targets(struct insp *s)
{
	size_t k, i, a, b, j;
	uint64_t p;
	int rc = 0;

	for (k = 0; k < s->nasks; k++) {
		size_t before = s->ntargets;

		for (p = 0; p < s->npos; p++) {
			if (s->rows[p] != s->asks[k].row)
				continue;
			if (s->ntargets == s->captargets) {
				size_t c = s->captargets ?
				    s->captargets * 2 : 16;
				uint64_t *t;

				if ((t = realloc(s->targets, c *
				    sizeof(*t))) == NULL)
					kt_cli_nomem();
				s->targets = t;
				s->captargets = c;
			}
			s->targets[s->ntargets++] = p;
			hold(s, p);
		}
		if (s->ntargets == before) {
			kt_cli_warn("%s: row %llu (of '%s'): no such event",
			    s->name, (unsigned long long)s->asks[k].row,
			    s->asks[k].arg);
			rc = 1;
		}
	}
	for (k = 0; k < s->ntargets; k++)
		for (i = 0; i < s->nfl; i++) {
			if (!flow_touches(s, i, s->targets[k]))
				continue;
			flow_range(s, i, &a, &b);
			for (j = a; j < b; j++) {
				hold(s, s->fl[j].pos);
				if (s->fl[j].anchor != KT_FLOW_NONE)
					hold(s, s->fl[j].anchor);
			}
			i = b - 1;
		}
	kt_qsort(s->held, s->nheld, sizeof(*s->held), cmp_pos);
	for (i = j = 0; i < s->nheld; i++)
		if (j == 0 || s->held[j - 1] != s->held[i])
			s->held[j++] = s->held[i];
	s->nheld = j;
	return rc;
}

/* Pass 3 from pass 1's places: the events held, scanned again. */
static void
bytes_placed(struct insp *s)
{
	struct kt_event ev;
	struct kt_error err;
	const char *raw;
	size_t i, len;
	unsigned fl;

	memset(&err, 0, sizeof(err));
	if (kt_hold_check(s->hold, &err) == -1)
		kt_cli_die(&err);
	for (i = 0; i < s->nheld; i++) {
		switch (kt_places_get(s->places, s->held[i], &raw, &len, &fl,
		    &err)) {
		case -1:
			kt_cli_die(&err);
			break;
		case 0:
			continue;
		}
		memset(&ev, 0, sizeof(ev));
		if (kt_event_scan(raw, len, &ev, &err) == -1)
			kt_cli_die(&err);
		ev.index = s->rows[s->held[i]];
		ev.flags |= fl;	/* repaired as pass 1 read it */
		if (kt_store_add(s->store, NULL, &ev, &err) == NULL)
			kt_cli_die(&err);
		s->hrec[i] = (uint32_t)(kt_store_count(s->store) - 1);
	}
	if (kt_hold_check(s->hold, &err) == -1)
		kt_cli_die(&err);
}

/* Pass 3: the bytes of the events held, in a store. */
static void
pass_bytes(struct insp *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_event ev;
	struct kt_error err;
	uint64_t *h;
	size_t i;
	int rc;

	if (s->nheld == 0)
		return;
	if ((s->hrec = malloc(s->nheld * sizeof(*s->hrec))) == NULL ||
	    (s->store = kt_store_new(0, 0, NULL)) == NULL)
		kt_cli_nomem();
	for (i = 0; i < s->nheld; i++)
		s->hrec[i] = NOREC;
	if (s->places != NULL) {
		bytes_placed(s);
		return;
	}
	rd = kt_cli_open_one(s->path, s->name, s->co.member, s->co.rflags,
	    &src);
	while ((rc = kt_reader_next(rd, &ev, &err)) == 1) {
		uint64_t p = kt_reader_position(rd);

		if ((h = bsearch(&p, s->held, s->nheld, sizeof(*s->held),
		    cmp_pos)) == NULL)
			continue;
		if (kt_store_add(s->store, NULL, &ev, &err) == NULL)
			kt_cli_die(&err);
		s->hrec[h - s->held] = (uint32_t)(kt_store_count(s->store) - 1);
	}
	if (rc == -1)
		kt_cli_die(&err);
	kt_reader_free(rd);
	kt_source_close(src);
}

/* The held event at position p scanned into *ev; 0, or -1 if none. */
static int
event_at(struct insp *s, uint64_t p, struct kt_event *ev)
{
	uint32_t r = held_at(s, p);
	struct kt_error err;

	if (r == NOREC || kt_store_event(s->store, r, ev, &err) == -1)
		return -1;
	ev->index = p;
	ev->kind = kt_event_classify(ev);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Facts about an event, the same for text and JSON. */

/* A linked event: row id, name, times (ts -1 and no dur: unknown). */
struct link {
	int		 ok;		/* 0: none (printed as - or null) */
	enum kt_kind	 kind;
	uint64_t	 row;
	const char	*name;
	size_t		 namelen;
	int64_t		 ts, dur;
	int		 has_ts, has_dur;
	int		 user;		/* python: the user frame */
	int		 esc;		/* name is JSON-escaped text */
};

/* One flow end, and its slice. */
struct end {
	char		 ph;
	uint64_t	 row;
	int64_t		 ts;
	int		 has_ts;
	int		 self;		/* it or its slice is the event */
	struct link	 slice;
};

/* One flow: its key as written (cat, name, id), its ends [a, b). */
struct flow {
	const char	*cat, *name, *id;
	size_t		 ncat, nname, nid;
	size_t		 a, b;
};

static void
span_link(const struct insp *s, uint32_t i, struct link *l)
{
	const struct kt_span *sp;

	memset(l, 0, sizeof(*l));
	if (i == KT_NO)
		return;
	sp = &s->m->spans[i];
	l->ok = 1;
	l->kind = (enum kt_kind)sp->kind;
	l->row = s->rows[sp->index];
	l->name = kt_model_str(s->m, sp->name);
	l->namelen = strlen(l->name);
	l->ts = sp->ts;
	l->dur = sp->dur;
	l->has_ts = l->has_dur = 1;
}

static void
act_link(const struct insp *s, uint32_t i, struct link *l)
{
	const struct kt_act *a = &s->m->act[i];

	memset(l, 0, sizeof(*l));
	l->ok = 1;
	l->kind = (enum kt_kind)a->kind;
	l->row = s->rows[a->index];
	l->name = kt_model_str(s->m, a->name);
	l->namelen = strlen(l->name);
	l->ts = a->ts;
	l->dur = a->dur;
	l->has_ts = l->has_dur = 1;
}

/* The unescaped text of string field f of ev in b (NUL-terminated). */
static const char *
field_text(const struct kt_event *ev, enum kt_field f, struct kt_buf *b,
    size_t *n)
{
	const struct kt_val *v = &ev->f[f];

	kt_buf_clear(b);
	if (v->type == KT_STRING) {
		if (kt_json_unescape(ev->raw + v->off + 1, v->len - 2, b) == -1)
			kt_cli_nomem();
	} else if (v->type != KT_NONE)
		kt_buf_add(b, ev->raw + v->off, v->len);
	if (kt_buf_addc(b, '\0') == -1)
		kt_cli_nomem();
	*n = b->n - 1;
	return v->type == KT_NONE ? NULL : b->p;
}

/* The contents of a string's raw text p[0..*n), quotes dropped. */
static const char *
bare(const char *p, size_t *n)
{
	if (p != NULL && *n >= 2 && p[0] == '"') {
		*n -= 2;
		return p + 1;
	}
	return p;
}

/* A held event (a flow's slice) as a link; its name escaped, held. */
static void
held_link(struct insp *s, uint64_t p, struct link *l)
{
	struct kt_event ev;

	memset(l, 0, sizeof(*l));
	if (p == KT_FLOW_NONE || event_at(s, p, &ev) == -1)
		return;
	l->ok = 1;
	l->kind = ev.kind;
	l->row = s->rows[p];
	l->esc = 1;
	l->name = bare(kt_event_field(&ev, KT_F_NAME, &l->namelen),
	    &l->namelen);
	if (l->name == NULL)
		l->name = "";
	l->ts = ev.ts;
	l->dur = ev.dur;
	l->has_ts = (ev.flags & KT_EV_TS) != 0;
	l->has_dur = (ev.flags & KT_EV_DUR) != 0;
}

/* The innermost ProfilerStep span at or above span i, or KT_NO. */
static uint32_t
step_span_above(const struct insp *s, uint32_t i)
{
	for (; i != KT_NO; i = s->m->spans[i].parent)
		if (s->m->spans[i].kind == KT_STEP)
			return i;
	return KT_NO;
}

/* The span of rank's step whose CPU span holds t (the latest), or KT_NO. */
static uint32_t
step_at(const struct insp *s, int64_t rank, int64_t t)
{
	uint32_t best = KT_NO;
	size_t i;

	for (i = 0; i < s->m->nsteps; i++) {
		const struct kt_step *st = &s->m->steps[i];

		if (st->rank != rank || t < st->cpu_start || t >= st->cpu_end)
			continue;
		if (best == KT_NO ||
		    st->cpu_start >= s->m->steps[best].cpu_start)
			best = (uint32_t)i;
	}
	return best != KT_NO ? s->m->steps[best].span : KT_NO;
}

/* ------------------------------------------------------------------ */
/* Writing: a text block or a JSON object, through these helpers. */

static void
text_kv(struct kt_buf *b, const char *key)
{
	kt_buf_adds(b, "  ");
	kt_buf_adds(b, key);
	kt_buf_add(b, "              ", 13 - strlen(key));
}

static void
text_int(struct kt_buf *b, const char *key, int ok, int64_t v)
{
	char num[32];

	text_kv(b, key);
	if (ok)
		kt_buf_add(b, num, kt_int_format(v, num));
	else
		kt_buf_addc(b, '-');
	kt_buf_addc(b, '\n');
}

static void
text_str(struct kt_buf *b, const char *key, const char *v, size_t n)
{
	text_kv(b, key);
	if (v != NULL)
		kt_buf_add(b, v, n);
	else
		kt_buf_addc(b, '-');
	kt_buf_addc(b, '\n');
}

static void
text_rowid(struct kt_buf *b, enum kt_kind k, uint64_t row)
{
	char num[32];

	kt_buf_adds(b, kt_kind_name(k));
	kt_buf_addc(b, ':');
	kt_buf_add(b, num, kt_int_format((int64_t)row, num));
}

/* "kind:N ts dur name" (times "-" when unknown), or "-". */
static void
text_link(struct kt_buf *b, const struct link *l, int times)
{
	char num[32];

	if (!l->ok) {
		kt_buf_addc(b, '-');
		return;
	}
	text_rowid(b, l->kind, l->row);
	if (times) {
		kt_buf_addc(b, ' ');
		if (l->has_ts)
			kt_buf_add(b, num, kt_int_format(l->ts, num));
		else
			kt_buf_addc(b, '-');
		kt_buf_addc(b, ' ');
		if (l->has_dur)
			kt_buf_add(b, num, kt_int_format(l->dur, num));
		else
			kt_buf_addc(b, '-');
	}
	kt_buf_addc(b, ' ');
	if (l->esc) {
		struct kt_buf u = KT_BUF_INIT;

		if (kt_json_unescape(l->name, l->namelen, &u) == -1)
			kt_cli_nomem();
		kt_buf_add(b, u.p ? u.p : "", u.n);
		kt_buf_free(&u);
	} else
		kt_buf_add(b, l->name, l->namelen);
	if (l->user)
		kt_buf_adds(b, " [user frame]");
}

static void
text_link_line(struct kt_buf *b, const char *key, const struct link *l,
    int times)
{
	text_kv(b, key);
	text_link(b, l, times);
	kt_buf_addc(b, '\n');
}

static void
text_cont(struct kt_buf *b, size_t k)
{
	if (k > 0)
		kt_buf_adds(b, "               ");
}

static json_t *
jnew(json_t *j)
{
	if (j == NULL)
		kt_cli_nomem();
	return j;
}

static void
jset(json_t *o, const char *key, json_t *v)
{
	if (json_object_set_new(o, key, v == NULL ? json_null() : v) == -1)
		kt_cli_nomem();
}

static void
jpush(json_t *a, json_t *v)
{
	if (json_array_append_new(a, v) == -1)
		kt_cli_nomem();
}

static json_t *
jstr(const char *p, size_t n)
{
	json_t *j;

	if (p == NULL)
		return json_null();
	/* Names are valid UTF-8 once read (the reader repairs them). */
	if ((j = json_stringn(p, n)) == NULL)
		j = json_stringn_nocheck(p, n);
	return jnew(j);
}

static json_t *
jint(int ok, int64_t v)
{
	return ok ? jnew(json_integer((json_int_t)v)) : json_null();
}

static json_t *
jrowid(enum kt_kind k, uint64_t row)
{
	return jnew(json_sprintf("%s:%llu", kt_kind_name(k),
	    (unsigned long long)row));
}

static json_t *
jlink(const struct link *l, int times)
{
	json_t *o;

	if (!l->ok)
		return json_null();
	o = jnew(json_object());
	jset(o, "row", jrowid(l->kind, l->row));
	if (l->esc) {
		struct kt_buf u = KT_BUF_INIT;

		if (kt_json_unescape(l->name, l->namelen, &u) == -1)
			kt_cli_nomem();
		jset(o, "name", jstr(u.p ? u.p : "", u.n));
		kt_buf_free(&u);
	} else
		jset(o, "name", jstr(l->name, l->namelen));
	if (times) {
		jset(o, "ts_ns", jint(l->has_ts, l->ts));
		jset(o, "dur_ns", jint(l->has_dur, l->dur));
	}
	return o;
}

/* A value of the event: a whole number, a string, or its text. */
static json_t *
jvalue(const struct kt_event *ev, enum kt_field f, struct kt_buf *b)
{
	const char *t;
	size_t n;
	int64_t v;

	if (ev->f[f].type == KT_NUMBER && kt_event_field_int(ev, f, &v) == 0)
		return jint(1, v);
	if ((t = field_text(ev, f, b, &n)) == NULL)
		return json_null();
	return jstr(t, n);
}

/* ------------------------------------------------------------------ */
/* One event. */

struct facts {
	struct kt_event	 ev;
	uint64_t	 pos;
	uint32_t	 act, span, around;	/* around: the span whose
						   Python stack it has */
	int64_t		 rank;
	int		 has_rank;
	int64_t		 device, stream, corr, extid;
	int		 has_device, has_stream, has_corr, has_extid;
	struct link	 step;
	int64_t		 step_number;
};

static void
facts_of(struct insp *s, uint64_t p, struct facts *f)
{
	const struct kt_model *m = s->m;
	struct kt_event *ev = &f->ev;
	uint32_t st = KT_NO;
	int64_t r;

	memset(f, 0, sizeof(*f));
	f->pos = p;
	if (event_at(s, p, ev) == -1) {
		kt_cli_warn("%s: position %llu: the event could not be read "
		    "again", s->name, (unsigned long long)p);
		kt_cli_die(NULL);
	}
	f->act = p < s->npos ? s->act_at[p] : KT_NO;
	f->span = p < s->npos ? s->span_at[p] : KT_NO;
	f->around = f->span;
	f->rank = s->rank;
	if ((r = kt_event_rank(ev)) >= 0)
		f->rank = r;
	f->has_rank = f->rank >= 0;
	f->has_corr = kt_event_field_int(ev, KT_F_CORR, &f->corr) == 0;
	f->has_extid = kt_event_field_int(ev, KT_F_EXTID, &f->extid) == 0;
	if (f->act != KT_NO) {
		const struct kt_act *a = &m->act[f->act];
		const struct kt_device *d = &m->devices[a->dev];

		f->device = d->index;
		f->has_device = d->index >= 0;
		f->stream = a->stream;
		f->has_stream = a->stream >= 0;
		f->around = a->launch;
		if (a->step != KT_NO)
			st = m->steps[a->step].span;
	} else if (f->span != KT_NO) {
		st = step_span_above(s, f->span);
		if (st == KT_NO) {
			const struct kt_span *sp = &m->spans[f->span];

			st = step_at(s, m->threads[sp->thread].rank, sp->ts);
		}
	} else if (ev->flags & KT_EV_TS)
		st = step_at(s, f->rank, ev->ts);
	span_link(s, st, &f->step);
	f->step_number = st != KT_NO ? kt_step_parse(f->step.name,
	    f->step.namelen) : -1;
}

/* The spans around span i on its thread, innermost first. */
static size_t
parent_links(const struct insp *s, uint32_t i, struct link **out)
{
	struct link *l = NULL;
	size_t n = 0;
	uint32_t p;

	for (p = i == KT_NO ? KT_NO : s->m->spans[i].parent; p != KT_NO;
	    p = s->m->spans[p].parent) {
		struct link *t;

		if ((t = realloc(l, (n + 1) * sizeof(*t))) == NULL)
			kt_cli_nomem();
		l = t;
		span_link(s, p, &l[n++]);
	}
	*out = l;
	return n;
}

/*
 * The spans whose parent is span i (after it on its thread, in time
 * order): their count, and the first s->first of them in *out.
 */
static size_t
child_links(const struct insp *s, uint32_t i, struct link **out, size_t *nout)
{
	const struct kt_model *m = s->m;
	const struct kt_span *sp = &m->spans[i];
	struct link *l = NULL;
	size_t j, n = 0;

	*nout = 0;
	for (j = i + 1; j < m->nspans && m->spans[j].thread == sp->thread &&
	    m->spans[j].ts <= sp->ts + sp->dur; j++) {
		if (m->spans[j].parent != i)
			continue;
		if (n++ < s->first) {
			struct link *t;

			if ((t = realloc(l, (*nout + 1) * sizeof(*t))) == NULL)
				kt_cli_nomem();
			l = t;
			span_link(s, (uint32_t)j, &l[(*nout)++]);
		}
	}
	*out = l;
	return n;
}

/*
 * The GPU activities launched under span i (their call is i or inside
 * it): the count, the sum of their durations, the first s->first.
 */
static size_t
launched_links(const struct insp *s, uint32_t i, int64_t *total,
    struct link **out, size_t *nout)
{
	const struct kt_model *m = s->m;
	struct link *l = NULL;
	size_t a, n = 0;
	uint32_t c;

	*total = 0;
	*nout = 0;
	for (a = 0; a < m->nact; a++) {
		for (c = m->act[a].launch; c != KT_NO && c != i;
		    c = m->spans[c].parent)
			;
		if (c == KT_NO)
			continue;
		*total += m->act[a].dur;
		if (n++ < s->first) {
			struct link *t;

			if ((t = realloc(l, (*nout + 1) * sizeof(*t))) == NULL)
				kt_cli_nomem();
			l = t;
			act_link(s, (uint32_t)a, &l[(*nout)++]);
		}
	}
	*out = l;
	return n;
}

/*
 * The python_function spans around span i (it too when it is one),
 * innermost first, the user frame (kt_chains_frame_of) marked.
 */
static size_t
python_links(struct insp *s, uint32_t i, struct link **out)
{
	struct link *l = NULL;
	const char *text;
	size_t n = 0, len;
	uint32_t p, user;

	*out = NULL;
	if (i == KT_NO)
		return 0;
	user = kt_chains_frame_of(s->ch, i, &text, &len);
	for (p = i; p != KT_NO; p = s->m->spans[p].parent) {
		struct link *t;

		if (s->m->spans[p].kind != KT_PYTHON_FUNCTION)
			continue;
		if ((t = realloc(l, (n + 1) * sizeof(*t))) == NULL)
			kt_cli_nomem();
		l = t;
		span_link(s, p, &l[n]);
		l[n++].user = p == user;
	}
	*out = l;
	return n;
}

/* The user frame at or above span i, with its text: a link, or none. */
static void
frame_link(struct insp *s, uint32_t i, struct link *l)
{
	const char *text;
	size_t len;
	uint32_t f;

	memset(l, 0, sizeof(*l));
	if (i == KT_NO)
		return;
	if ((f = kt_chains_frame_of(s->ch, i, &text, &len)) == KT_NO)
		return;
	span_link(s, f, l);
	l->name = text;
	l->namelen = len;
}

/*
 * The flows the event is an end of or that bind to it: each with its
 * ends (and their slices) in *ends.  Returns the number of flows.
 */
static size_t
flows_of(struct insp *s, uint64_t p, struct flow **fout, struct end **eout)
{
	struct flow *fw = NULL;
	struct end *e = NULL;
	struct kt_event ev;
	size_t nf = 0, n = 0, i, a, b, j;

	for (i = 0; i < s->nfl; i++) {
		if (!flow_touches(s, i, p))
			continue;
		flow_range(s, i, &a, &b);
		if ((fw = realloc(fw, (nf + 1) * sizeof(*fw))) == NULL ||
		    (e = realloc(e, (n + b - a) * sizeof(*e))) == NULL)
			kt_cli_nomem();
		memset(&fw[nf], 0, sizeof(fw[nf]));
		fw[nf].a = n;
		if (event_at(s, s->fl[a].pos, &ev) == 0) {
			fw[nf].cat = kt_event_field(&ev, KT_F_CAT,
			    &fw[nf].ncat);
			fw[nf].name = kt_event_field(&ev, KT_F_NAME,
			    &fw[nf].nname);
			fw[nf].id = kt_event_field(&ev, KT_F_ID, &fw[nf].nid);
		}
		for (j = a; j < b; j++, n++) {
			memset(&e[n], 0, sizeof(e[n]));
			e[n].row = s->rows[s->fl[j].pos];
			e[n].self = flow_touches(s, j, p);
			if (event_at(s, s->fl[j].pos, &ev) == 0) {
				e[n].ph = ev.ph;
				e[n].ts = ev.ts;
				e[n].has_ts = (ev.flags & KT_EV_TS) != 0;
			}
			held_link(s, s->fl[j].anchor, &e[n].slice);
		}
		fw[nf++].b = n;
		i = b - 1;
	}
	*fout = fw;
	*eout = e;
	return nf;
}

/* Everything printed of one event. */
struct view {
	struct facts	 f;
	struct link	*par, *kids, *acts, *py;
	size_t		 npar, nkids, nkidl, nacts, nactl, npy;
	int64_t		 total;
	struct flow	*fw;
	struct end	*ends;
	size_t		 nflows;
	int		 chained;
	struct kt_chain	 chn;
	struct link	 launch, op, ann, cstep, cframe, fwd, user;
	const char	*cs;		/* args."Call stack", escaped */
	size_t		 ncs;
};

static void
view_of(struct insp *s, uint64_t p, struct view *v)
{
	const struct kt_event *ev;
	struct kt_val cs;

	memset(v, 0, sizeof(*v));
	facts_of(s, p, &v->f);
	ev = &v->f.ev;
	if (v->f.span != KT_NO) {
		v->npar = parent_links(s, v->f.span, &v->par);
		v->nkids = child_links(s, v->f.span, &v->kids, &v->nkidl);
		v->nacts = launched_links(s, v->f.span, &v->total, &v->acts,
		    &v->nactl);
	}
	v->npy = python_links(s, v->f.around, &v->py);
	frame_link(s, v->f.around, &v->user);
	v->nflows = flows_of(s, p, &v->fw, &v->ends);
	if (ev->f[KT_F_ARGS].type == KT_OBJECT &&
	    kt_event_find(ev, &ev->f[KT_F_ARGS], "Call stack", &cs) == 0 &&
	    cs.type == KT_STRING) {
		v->cs = ev->raw + cs.off + 1;
		v->ncs = cs.len - 2;
	}
	if (v->f.act == KT_NO)
		return;
	if (kt_chain_get(s->ch, v->f.act, &v->chn) == -1)
		kt_cli_nomem();
	v->chained = 1;
	span_link(s, v->chn.launch, &v->launch);
	span_link(s, v->chn.op, &v->op);
	span_link(s, v->chn.ann, &v->ann);
	span_link(s, v->chn.step == KT_NO ? KT_NO :
	    s->m->steps[v->chn.step].span, &v->cstep);
	span_link(s, v->chn.frame, &v->cframe);
	if (v->cframe.ok) {
		v->cframe.name = v->chn.frame_text;
		v->cframe.namelen = v->chn.frame_len;
	}
	/* The chain's frame, which a backward call takes from its op. */
	v->user = v->cframe;
	span_link(s, v->chn.fwd, &v->fwd);
}

static void
view_free(struct view *v)
{
	free(v->par);
	free(v->kids);
	free(v->acts);
	free(v->py);
	free(v->fw);
	free(v->ends);
}

/* A list of links, "count: first..., and N more" style, in text. */
static void
text_list(struct kt_buf *b, const char *key, const struct link *l,
    size_t nl, size_t n)
{
	char num[32];
	size_t i;

	text_kv(b, key);
	kt_buf_add(b, num, kt_int_format((int64_t)n, num));
	kt_buf_addc(b, '\n');
	for (i = 0; i < nl; i++) {
		text_kv(b, "");
		text_link(b, &l[i], 1);
		kt_buf_addc(b, '\n');
	}
	if (n > nl) {
		text_kv(b, "");
		kt_buf_adds(b, "and ");
		kt_buf_add(b, num, kt_int_format((int64_t)(n - nl), num));
		kt_buf_adds(b, " more\n");
	}
}

static void
text_flows(struct kt_buf *b, const struct view *v)
{
	char num[32];
	size_t k, i;

	text_kv(b, "flows");
	kt_buf_add(b, num, kt_int_format((int64_t)v->nflows, num));
	kt_buf_addc(b, '\n');
	for (k = 0; k < v->nflows; k++) {
		const struct flow *fw = &v->fw[k];

		const char *t;
		size_t n;

		text_kv(b, "");
		kt_buf_adds(b, "cat ");
		n = fw->ncat;
		t = bare(fw->cat, &n);
		kt_buf_add(b, t ? t : "-", t ? n : 1);
		kt_buf_adds(b, " name ");
		n = fw->nname;
		t = bare(fw->name, &n);
		kt_buf_add(b, t ? t : "-", t ? n : 1);
		kt_buf_adds(b, " id ");
		kt_buf_add(b, fw->id ? fw->id : "-", fw->id ? fw->nid : 1);
		kt_buf_addc(b, '\n');
		for (i = fw->a; i < fw->b; i++) {
			const struct end *e = &v->ends[i];

			text_kv(b, "");
			kt_buf_adds(b, "  ");
			kt_buf_addc(b, e->ph ? e->ph : '-');
			kt_buf_addc(b, ' ');
			text_rowid(b, KT_FLOW, e->row);
			kt_buf_addc(b, ' ');
			if (e->has_ts)
				kt_buf_add(b, num, kt_int_format(e->ts, num));
			else
				kt_buf_addc(b, '-');
			kt_buf_adds(b, " -> ");
			text_link(b, &e->slice, 0);
			kt_buf_addc(b, '\n');
		}
	}
}

static void
write_text(struct insp *s, uint64_t p, const struct view *v)
{
	const struct facts *f = &v->f;
	const struct kt_event *ev = &f->ev;
	struct kt_buf *b = &s->b;
	const char *t;
	size_t n, i;

	text_rowid(b, ev->kind, s->rows[p]);
	kt_buf_addc(b, '\n');
	text_int(b, "position", 1, (int64_t)p);
	text_str(b, "kind", kt_kind_name(ev->kind),
	    strlen(kt_kind_name(ev->kind)));
	t = field_text(ev, KT_F_NAME, &s->tmp, &n);
	text_str(b, "name", t, n);
	t = field_text(ev, KT_F_CAT, &s->tmp, &n);
	text_str(b, "cat", t, n);
	t = field_text(ev, KT_F_PH, &s->tmp, &n);
	text_str(b, "ph", t, n);
	t = kt_event_field(ev, KT_F_PID, &n);
	text_str(b, "pid", t, n);
	t = kt_event_field(ev, KT_F_TID, &n);
	text_str(b, "tid", t, n);
	text_int(b, "ts_ns", ev->flags & KT_EV_TS, ev->ts);
	text_int(b, "dur_ns", ev->flags & KT_EV_DUR, ev->dur);
	text_int(b, "end_ns", (ev->flags & KT_EV_TS) &&
	    (ev->flags & KT_EV_DUR), ev->ts + ev->dur);
	text_int(b, "rank", f->has_rank, f->rank);
	text_int(b, "device", f->has_device, f->device);
	text_int(b, "stream", f->has_stream, f->stream);
	text_int(b, "correlation", f->has_corr, f->corr);
	text_int(b, "external_id", f->has_extid, f->extid);
	text_link_line(b, "step", &f->step, 0);
	if (f->span != KT_NO) {
		text_kv(b, "parents");
		if (v->npar == 0)
			kt_buf_adds(b, "-\n");
		for (i = 0; i < v->npar; i++) {
			text_cont(b, i);
			text_link(b, &v->par[i], 1);
			kt_buf_addc(b, '\n');
		}
		text_list(b, "children", v->kids, v->nkidl, v->nkids);
		text_list(b, "launched", v->acts, v->nactl, v->nacts);
		text_int(b, "launched_ns", 1, v->total);
	} else {
		text_str(b, "parents", NULL, 0);
		text_str(b, "children", NULL, 0);
	}
	if (v->chained) {
		text_link_line(b, "launch", &v->launch, 1);
		text_link_line(b, "op", &v->op, 1);
		text_link_line(b, "annotation", &v->ann, 0);
		text_link_line(b, "chain_step", &v->cstep, 0);
		text_link_line(b, "frame", &v->cframe, 0);
		text_link_line(b, "fwd_op", &v->fwd, 0);
	}
	text_flows(b, v);
	text_kv(b, "python");
	if (v->npy == 0)
		kt_buf_adds(b, "-\n");
	for (i = 0; i < v->npy; i++) {
		text_cont(b, i);
		text_link(b, &v->py[i], 0);
		kt_buf_addc(b, '\n');
	}
	text_link_line(b, "user_frame", &v->user, 0);
	text_kv(b, "call_stack");
	if (v->cs != NULL) {
		if (kt_json_unescape(v->cs, v->ncs, &s->tmp) == -1)
			kt_cli_nomem();
		kt_buf_add(b, s->tmp.p ? s->tmp.p : "", s->tmp.n);
	} else
		kt_buf_addc(b, '-');
	kt_buf_addc(b, '\n');
	kt_buf_adds(b, held_repaired(s, p) ? "  event (repaired):\n" :
	    "  event:\n");
	kt_buf_add(b, ev->raw, ev->len);
	kt_buf_addc(b, '\n');
}

static json_t *
jlist(const struct link *l, size_t nl, size_t n, int64_t total, int with)
{
	json_t *x = jnew(json_object()), *a = jnew(json_array());
	size_t i;

	jset(x, "count", jint(1, (int64_t)n));
	if (with)
		jset(x, "dur_ns", jint(1, total));
	for (i = 0; i < nl; i++)
		jpush(a, jlink(&l[i], 1));
	jset(x, "first", a);
	return x;
}

static json_t *
jflows(const struct view *v)
{
	json_t *a = jnew(json_array()), *x, *ea, *e;
	size_t k, i;

	for (k = 0; k < v->nflows; k++) {
		const struct flow *fw = &v->fw[k];
		const char *t;
		size_t n;

		x = jnew(json_object());
		n = fw->ncat;
		t = bare(fw->cat, &n);
		jset(x, "cat", jstr(t, n));
		n = fw->nname;
		t = bare(fw->name, &n);
		jset(x, "name", jstr(t, n));
		jset(x, "id", fw->id != NULL ? json_loadb(fw->id, fw->nid,
		    JSON_DECODE_ANY, NULL) : NULL);
		ea = jnew(json_array());
		for (i = fw->a; i < fw->b; i++) {
			const struct end *en = &v->ends[i];

			e = jnew(json_object());
			jset(e, "row", jrowid(KT_FLOW, en->row));
			jset(e, "ph", en->ph ? jstr(&en->ph, 1) : NULL);
			jset(e, "ts_ns", jint(en->has_ts, en->ts));
			jset(e, "slice", jlink(&en->slice, 0));
			jset(e, "self", json_boolean(en->self));
			jpush(ea, e);
		}
		jset(x, "ends", ea);
		jpush(a, x);
	}
	return a;
}

static void
write_json(struct insp *s, uint64_t p, const struct view *v)
{
	const struct facts *f = &v->f;
	const struct kt_event *ev = &f->ev;
	struct kt_buf *b = &s->b;
	json_t *o = jnew(json_object()), *a, *x;
	char *dump;
	size_t i;

	jset(o, "row", jrowid(ev->kind, s->rows[p]));
	jset(o, "position", jint(1, (int64_t)p));
	jset(o, "kind", jstr(kt_kind_name(ev->kind),
	    strlen(kt_kind_name(ev->kind))));
	jset(o, "name", jvalue(ev, KT_F_NAME, &s->tmp));
	jset(o, "cat", jvalue(ev, KT_F_CAT, &s->tmp));
	jset(o, "ph", jvalue(ev, KT_F_PH, &s->tmp));
	jset(o, "pid", jvalue(ev, KT_F_PID, &s->tmp));
	jset(o, "tid", jvalue(ev, KT_F_TID, &s->tmp));
	jset(o, "ts_ns", jint(ev->flags & KT_EV_TS, ev->ts));
	jset(o, "dur_ns", jint(ev->flags & KT_EV_DUR, ev->dur));
	jset(o, "end_ns", jint((ev->flags & KT_EV_TS) &&
	    (ev->flags & KT_EV_DUR), ev->ts + ev->dur));
	jset(o, "rank", jint(f->has_rank, f->rank));
	jset(o, "device", jint(f->has_device, f->device));
	jset(o, "stream", jint(f->has_stream, f->stream));
	jset(o, "correlation", jint(f->has_corr, f->corr));
	jset(o, "external_id", jint(f->has_extid, f->extid));
	x = jlink(&f->step, 0);
	if (!json_is_null(x))
		jset(x, "number", jint(f->step_number >= 0, f->step_number));
	jset(o, "step", x);
	if (f->span != KT_NO) {
		a = jnew(json_array());
		for (i = 0; i < v->npar; i++)
			jpush(a, jlink(&v->par[i], 1));
		jset(o, "parents", a);
		jset(o, "children", jlist(v->kids, v->nkidl, v->nkids, 0, 0));
		jset(o, "launched", jlist(v->acts, v->nactl, v->nacts,
		    v->total, 1));
	} else {
		jset(o, "parents", NULL);
		jset(o, "children", NULL);
		jset(o, "launched", NULL);
	}
	if (v->chained) {
		x = jnew(json_object());
		jset(x, "launch", jlink(&v->launch, 1));
		jset(x, "op", jlink(&v->op, 1));
		jset(x, "annotation", jlink(&v->ann, 0));
		jset(x, "step", jlink(&v->cstep, 0));
		jset(x, "frame", jlink(&v->cframe, 0));
		jset(x, "fwd_op", jlink(&v->fwd, 0));
		jset(o, "chain", x);
	} else
		jset(o, "chain", NULL);
	jset(o, "flows", jflows(v));
	a = jnew(json_array());
	for (i = 0; i < v->npy; i++) {
		x = jlink(&v->py[i], 0);
		jset(x, "user", json_boolean(v->py[i].user));
		jpush(a, x);
	}
	jset(o, "python", a);
	jset(o, "user_frame", jlink(&v->user, 0));
	if (v->cs != NULL) {
		if (kt_json_unescape(v->cs, v->ncs, &s->tmp) == -1)
			kt_cli_nomem();
		jset(o, "call_stack", jstr(s->tmp.p ? s->tmp.p : "",
		    s->tmp.n));
	} else
		jset(o, "call_stack", NULL);
	jset(o, "repaired", json_boolean(held_repaired(s, p)));
	if ((dump = json_dumps(o, JSON_COMPACT)) == NULL)
		kt_cli_nomem();
	/* The event as read, its numbers' digits kept: not through jansson. */
	kt_buf_add(b, dump, strlen(dump) - 1);
	kt_buf_adds(b, ",\"event\":");
	kt_json_minify(ev->raw, ev->len, b);
	kt_buf_adds(b, "}\n");
	free(dump);
	json_decref(o);
}

/* Print every target, one block each (text: a blank line between). */
static void
print(struct insp *s)
{
	struct view v;
	size_t k;

	s->out = kt_cli_out_open(s->co.output, -1);
	for (k = 0; k < s->ntargets; k++) {
		kt_buf_clear(&s->b);
		if (!s->json && k > 0)
			kt_buf_addc(&s->b, '\n');
		view_of(s, s->targets[k], &v);
		if (s->json)
			write_json(s, s->targets[k], &v);
		else
			write_text(s, s->targets[k], &v);
		view_free(&v);
		if (s->b.err)
			kt_cli_nomem();
		if (kt_out_write(s->out, s->b.p, s->b.n) == -1)
			break;
	}
	kt_cli_out_commit(s->out, kt_out_errno(s->out) != 0, NULL);
}

static void
insp_free(struct insp *s)
{
	free(s->held);
	free(s->hrec);
	kt_store_free(s->store);
	kt_places_free(s->places);
	kt_hold_free(s->hold);
	free(s->asks);
	free(s->rows);
	free(s->act_at);
	free(s->span_at);
	free(s->targets);
	kt_flows_free(s->flows);
	kt_chains_free(s->ch);
	kt_model_free(s->m);
	kt_buf_free(&s->b);
	kt_buf_free(&s->tmp);
}

int
main(int argc, char *argv[])
{
	struct insp s;
	int rc;

	memset(&s, 0, sizeof(s));
	s.co.level = -1;
	kt_cli_init("kt-inspect");
	parse_args(&s, argc, argv);
	if ((s.flows = kt_flows_new()) == NULL)
		kt_cli_nomem();
	pass_rows(&s);
	pass_model(&s);
	rc = targets(&s);
	pass_bytes(&s);
	print(&s);
	insp_free(&s);
	return rc;
}
