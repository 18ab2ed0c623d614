/*
 * kt-select: search as a filter.  Keep the events of a trace that meet
 * every criterion given (kind, name, category, rank, device, stream,
 * communicator, duration, time window, row ids), every metadata event,
 * and the flows whose ends' slices all stay; with --links also what the
 * matches link to (a GPU activity's launch chain, the activities a call
 * launched, the slices at the other end of their flows).  The output is
 * a trace again (or the TSV event form), every event's bytes as read,
 * with the row numbers of the original file (ktSourceIndex).
 *
 * The input is read twice (a pipe or standard input is copied first):
 * pass 1 decides, by position, which events stay, and pass 2 writes
 * them.  A plain JSON file written as JSON is read whole once, on every
 * CPU: pass 1 notes where each event is (kt_places, 8 bytes an event)
 * and pass 2 reads again only the bytes of the events kept.  A flow end
 * (ph s, t, f) binds to a slice of its own thread
 * (FORMAT.md), which may come after it, and --links needs the model
 * (kt_model_load, read with KT_READ_POSITIONS between the two passes so
 * that its rows are positions), so no single pass can decide.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

/* What pass 1 learns of each event, by position. */
#define E_SEEN	0x01	/* an event was read at this position */
#define E_META	0x02	/* metadata (ph M): always kept */
#define E_FLOW	0x04	/* a flow end: kept with its flow */
#define E_PASS	0x08	/* meets every criterion but --id */
#define E_ID	0x10	/* its row is in --id's list */
#define E_DROP	0x20	/* its kind is dropped (--drop) */
#define E_HIT	0x40	/* a match (before --limit cut it) */
#define E_KEEP	0x80	/* written */

struct opts {
	uint32_t	 kinds;		/* bits 1 << kind; 0: any */
	uint32_t	 drop;
	regex_t		*names;
	size_t		 nnames;
	const char	**cats;
	size_t		 ncats;
	int64_t		*ranks, *devices, *streams;
	size_t		 nranks, ndevices, nstreams;
	const char	**comms;
	size_t		 ncomms;
	int64_t		 min_dur, from, to;
	int		 has_min_dur, has_from, has_to;
	uint64_t	*ids;		/* sorted */
	size_t		 nids;
	int64_t		 limit;		/* -1: none */
	int		 links;
	int		 count;
	int		 tsv;
	struct kt_cli_opts co;
};

/* Everything one run keeps, made in main() and passed down. */
struct sel {
	struct opts	 o;
	const char	*path;		/* the input to read (maybe a copy) */
	const char	*name;		/* its name in messages */
	uint8_t		*ev;		/* per position: E_* */
	uint64_t	 nev, capev;
	struct kt_flows	*flows;		/* the slices and flow ends */
	const struct kt_flow_end *fl;	/* bound, by (flow, position) */
	size_t		 nfl;
	uint64_t	*si;		/* pass 1's ktSourceIndex when the rows
				   are positions (after the events, places) */
	size_t		 nsi;
	int64_t		 rank;		/* the trace's, or -1 */
	int		 rank_known;
	struct kt_pidrank *pidrank;	/* ranks of pids, for flows */
	int		 tsv_in;	/* the input is the TSV form */
	struct kt_buf	 tmp;
	uint64_t	 hits, matched;	/* kept matches; all, before --limit */
	/*
	 * A plain JSON file written as JSON: where pass 1 read each event,
	 * and its reader, kept for pass 2 (its metadata; the rows are si),
	 * with the rank to write as it stood at the first event.
	 */
	struct kt_hold	*hold;
	struct kt_places *places;
	struct kt_source *src1;
	struct kt_reader *rd1;
	int64_t		 rank_keep;
	const char	*rank_how;
	int		 rank_seen;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-select [-LNStV] [-C comm] [-c cat] [-D devices] [-d kinds]\n"
	    "           [-f time] [-i ids] [-k kinds] [-l level] [-m glob]\n"
	    "           [-n regex] [-o file] [-r ranks] [-s streams] [-T time]\n"
	    "           [-u time] [--limit n] [--spool-max size] [file]\n"
	    "  -k, --kind LIST      these kinds (kernel,cpu_op,...; kt(7))\n"
	    "  -d, --drop LIST      not these kinds (after the rest)\n"
	    "  -n, --name REGEX     name matches (POSIX extended, case-sensitive)\n"
	    "  -c, --cat CAT        category is CAT\n"
	    "  -r, --rank LIST      the event's rank (args.rank, its pid's, or the\n"
	    "                       trace's)\n"
	    "  -D, --device LIST    GPU activities of these devices\n"
	    "  -s, --stream LIST    GPU activities on these streams\n"
	    "  -C, --comm NAME      collectives of process group or collective NAME\n"
	    "  -u, --min-dur T      lasting T or more (ns, or with a unit)\n"
	    "  -f, --from T, -T, --to T  overlapping [T, T] (trace time, absolute)\n"
	    "  -i, --id LIST        these rows (kind:N or N)\n"
	    "  -L, --links          and what they link to: launch chain, launched\n"
	    "                       activities, flow peers\n"
	    "  -N, --count          print the number of events kept, no trace\n"
	    "      --limit N        the first N matches only\n"
	    "      --spool-max SIZE cap on copying a pipe or stdin\n"
	    "  -l, --level N, -m, --member GLOB, -o, --output FILE, -S, --strict,\n"
	    "  -t, --tsv, -h, --help, -V, --version  as in kt(7)\n");
}

/* ------------------------------------------------------------------ */
/* Options. */

/* Call fn(s, piece) for each piece of a comma list. */
static void
each_piece(const char *opt, const char *arg, void (*fn)(struct opts *,
    const char *, const char *), struct opts *o)
{
	char buf[256];
	const char *p = arg;

	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (n == 0 || n >= sizeof(buf)) {
			kt_cli_warn("%s: bad list '%s'", opt, arg);
			exit(2);
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		fn(o, opt, buf);
		if (e == NULL)
			break;
		p = e + 1;
	}
}

/* A kind of --kind or --drop. */
static uint32_t
kind_bit(const char *opt, const char *s)
{
	int k = kt_kind_parse(s, strlen(s));

	if (k < 0) {
		kt_cli_warn("%s: unknown kind '%s' (kernel, gpu_memcpy, "
		    "gpu_memset, cpu_op, cuda_runtime, python_function, ...; "
		    "kt(7))", opt, s);
		exit(2);
	}
	if (k == KT_METADATA) {
		kt_cli_warn("%s: metadata events are always kept", opt);
		exit(2);
	}
	if (k == KT_FLOW && strcmp(opt, "--kind") == 0) {
		kt_cli_warn("--kind: flow events go with the slices they "
		    "link (--drop flow drops them)");
		exit(2);
	}
	return 1u << k;
}

static void
add_kind(struct opts *o, const char *opt, const char *s)
{
	o->kinds |= kind_bit(opt, s);
}

static void
add_drop(struct opts *o, const char *opt, const char *s)
{
	o->drop |= kind_bit(opt, s);
}

/* Append v to a list of integers. */
static void
push_int(int64_t **a, size_t *n, int64_t v)
{
	int64_t *t;

	if ((t = realloc(*a, (*n + 1) * sizeof(*t))) == NULL)
		kt_cli_nomem();
	*a = t;
	(*a)[(*n)++] = v;
}

static void
add_rank(struct opts *o, const char *opt, const char *s)
{
	push_int(&o->ranks, &o->nranks, kt_cli_int(opt, s, 0, INT32_MAX));
}

static void
add_device(struct opts *o, const char *opt, const char *s)
{
	push_int(&o->devices, &o->ndevices, kt_cli_int(opt, s, -1,
	    INT64_MAX));
}

static void
add_stream(struct opts *o, const char *opt, const char *s)
{
	push_int(&o->streams, &o->nstreams, kt_cli_int(opt, s, -1,
	    INT64_MAX));
}

/* Append s to a list of strings (borrowed from argv). */
static void
push_str(const char ***a, size_t *n, const char *s)
{
	const char **t;

	if ((t = realloc(*a, (*n + 1) * sizeof(*t))) == NULL)
		kt_cli_nomem();
	*a = t;
	(*a)[(*n)++] = s;
}

/* --name REGEX, checked before regcomp (kt_regex_check). */
static void
add_name(struct opts *o, const char *re)
{
	char msg[160];
	regex_t *t;
	int rc;

	if (kt_regex_check(re, msg, sizeof(msg)) == -1) {
		kt_cli_warn("--name: '%s': %s", re, msg);
		exit(2);
	}
	if ((t = realloc(o->names, (o->nnames + 1) * sizeof(*t))) == NULL)
		kt_cli_nomem();
	o->names = t;
	if ((rc = regcomp(&o->names[o->nnames], re, REG_EXTENDED |
	    REG_NOSUB)) != 0) {
		regerror(rc, &o->names[o->nnames], msg, sizeof(msg));
		kt_cli_warn("--name: '%s': %s", re, msg);
		exit(2);
	}
	o->nnames++;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The options, checked.  Returns the index of the first operand. */
static int
parse_args(struct opts *o, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "cat", required_argument, NULL, 'c' },
		{ "comm", required_argument, NULL, 'C' },
		{ "count", no_argument, NULL, 'N' },
		{ "device", required_argument, NULL, 'D' },
		{ "drop", required_argument, NULL, 'd' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "id", required_argument, NULL, 'i' },
		{ "kind", required_argument, NULL, 'k' },
		{ "level", required_argument, NULL, 'l' },
		{ "limit", required_argument, NULL, 'x' },
		{ "links", no_argument, NULL, 'L' },
		{ "member", required_argument, NULL, 'm' },
		{ "min-dur", required_argument, NULL, 'u' },
		{ "name", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "rank", required_argument, NULL, 'r' },
		{ "spool-max", required_argument, NULL, KT_CLI_SPOOL_MAX },
		{ "stream", required_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "to", required_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	o->co.level = -1;
	o->limit = -1;
	while ((ch = getopt_long(argc, argv, "C:c:D:d:f:hi:k:Ll:m:Nn:o:r:s:ST:tu:V",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'C':
			push_str(&o->comms, &o->ncomms, optarg);
			break;
		case 'c':
			push_str(&o->cats, &o->ncats, optarg);
			break;
		case 'D':
			each_piece("--device", optarg, add_device, o);
			break;
		case 'd':
			each_piece("--drop", optarg, add_drop, o);
			break;
		case 'f':
			o->from = kt_cli_duration("--from", optarg);
			o->has_from = 1;
			break;
		case 'i':
			kt_cli_ids("--id", optarg, &o->ids, &o->nids);
			break;
		case 'k':
			each_piece("--kind", optarg, add_kind, o);
			break;
		case 'L':
			o->links = 1;
			break;
		case 'N':
			o->count = 1;
			break;
		case 'n':
			add_name(o, optarg);
			break;
		case 'r':
			each_piece("--rank", optarg, add_rank, o);
			break;
		case 's':
			each_piece("--stream", optarg, add_stream, o);
			break;
		case 'T':
			o->to = kt_cli_duration("--to", optarg);
			o->has_to = 1;
			break;
		case 't':
			o->tsv = 1;
			break;
		case 'u':
			o->min_dur = kt_cli_duration("--min-dur", optarg);
			o->has_min_dur = 1;
			break;
		case 'x':
			o->limit = kt_cli_int("--limit", optarg, 1, INT64_MAX);
			break;
		default:
			kt_cli_opt(&o->co, ch, optarg, usage);
		}
	}
	if (o->has_from && o->has_to && o->to < o->from) {
		kt_cli_warn("--to is before --from");
		exit(2);
	}
	if (o->count && o->co.output != NULL) {
		kt_cli_warn("--count prints a number: no -o");
		exit(2);
	}
	if (argc - optind > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		exit(2);
	}
	if (o->nids > 1)
		qsort(o->ids, o->nids, sizeof(*o->ids), cmp_u64);
	return optind;
}

/* ------------------------------------------------------------------ */
/* The criteria. */

static int
in_ints(const int64_t *a, size_t n, int64_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] == v)
			return 1;
	return 0;
}

static int
asked(const struct opts *o, uint64_t row)
{
	return bsearch(&row, o->ids, o->nids, sizeof(*o->ids), cmp_u64) !=
	    NULL;
}

/* The unescaped contents of string value v of ev in s->tmp, or NULL. */
static const char *
text_of(struct sel *s, const struct kt_event *ev, const struct kt_val *v)
{
	if (v->type != KT_STRING)
		return NULL;
	if (kt_json_unescape(ev->raw + v->off + 1, v->len - 2, &s->tmp) ==
	    -1 || kt_buf_addc(&s->tmp, '\0') == -1)
		kt_cli_nomem();
	return s->tmp.p;
}

static int
is_activity(const struct kt_event *ev)
{
	return ev->kind == KT_KERNEL || ev->kind == KT_GPU_MEMCPY ||
	    ev->kind == KT_GPU_MEMSET;
}

/* An activity's device (args.device, else the pid) or stream (args.stream,
 * else the tid), as the model takes them; 0 or -1. */
static int
gpu_int(const struct kt_event *ev, enum kt_field f, enum kt_field alt,
    int64_t *v)
{
	if (ev->f[f].type != KT_NONE)
		return kt_event_field_int(ev, f, v);
	return kt_event_field_int(ev, alt, v);
}

/* Is one of the communication args of ev one of --comm's names? */
static int
comm_match(struct sel *s, const struct kt_event *ev)
{
	static const char *const keys[] = {
		"Process Group Name", "Process Group Description",
		"Collective name"
	};
	struct kt_val v;
	const char *t;
	size_t i, k;

	if (ev->f[KT_F_ARGS].type != KT_OBJECT)
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (kt_event_find(ev, &ev->f[KT_F_ARGS], keys[i], &v) == -1 ||
		    (t = text_of(s, ev, &v)) == NULL)
			continue;
		for (k = 0; k < s->o.ncomms; k++)
			if (strcmp(t, s->o.comms[k]) == 0)
				return 1;
	}
	return 0;
}

/*
 * The event's rank: args.rank, else its pid's (a flow of a merged trace),
 * else the trace's; -1 when unknown.
 */
static int64_t
rank_of(struct sel *s, const struct kt_reader *rd, const struct kt_event *ev)
{
	int64_t r;

	if ((r = kt_pidrank_of(s->pidrank, ev)) == -2)
		kt_cli_nomem();
	if (r >= 0)
		return r;
	if (!s->rank_known) {
		/* The keys before traceEvents are known by now. */
		s->rank = kt_reader_rank(rd);
		s->rank_known = 1;
	}
	return s->rank;
}

/* Does ev meet every criterion but --id? */
static int
passes(struct sel *s, const struct kt_reader *rd, const struct kt_event *ev)
{
	const struct opts *o = &s->o;
	const char *t;
	int64_t v;
	size_t i;

	if (o->kinds != 0 && !(o->kinds & (1u << ev->kind)))
		return 0;
	if (o->has_min_dur && (!(ev->flags & KT_EV_DUR) ||
	    ev->dur < o->min_dur))
		return 0;
	if (o->has_from || o->has_to) {
		int64_t end;

		if (!(ev->flags & KT_EV_TS))
			return 0;
		end = ev->ts + ((ev->flags & KT_EV_DUR) && ev->dur > 0 ?
		    ev->dur : 0);
		if ((o->has_to && ev->ts > o->to) ||
		    (o->has_from && end < o->from))
			return 0;
	}
	if (o->ndevices && (!is_activity(ev) || gpu_int(ev, KT_F_DEVICE,
	    KT_F_PID, &v) == -1 || !in_ints(o->devices, o->ndevices, v)))
		return 0;
	if (o->nstreams && (!is_activity(ev) || gpu_int(ev, KT_F_STREAM,
	    KT_F_TID, &v) == -1 || !in_ints(o->streams, o->nstreams, v)))
		return 0;
	if (o->nranks && ((v = rank_of(s, rd, ev)) < 0 ||
	    !in_ints(o->ranks, o->nranks, v)))
		return 0;
	if (o->ncats) {
		if ((t = text_of(s, ev, &ev->f[KT_F_CAT])) == NULL)
			return 0;
		for (i = 0; i < o->ncats && strcmp(t, o->cats[i]) != 0; i++)
			;
		if (i == o->ncats)
			return 0;
	}
	if (o->nnames) {
		if ((t = text_of(s, ev, &ev->f[KT_F_NAME])) == NULL)
			return 0;
		for (i = 0; i < o->nnames &&
		    regexec(&o->names[i], t, 0, NULL, 0) != 0; i++)
			;
		if (i == o->nnames)
			return 0;
	}
	if (o->ncomms && !comm_match(s, ev))
		return 0;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Pass 1: what each event is. */

/* The flags of position p, the array grown to hold it. */
static uint8_t *
flags_at(struct sel *s, uint64_t p)
{
	if (p >= s->capev) {
		uint64_t c = s->capev ? s->capev : 4096;
		uint8_t *t;

		while (c <= p)
			c *= 2;
		if ((t = realloc(s->ev, c)) == NULL)
			kt_cli_nomem();
		memset(t + s->capev, 0, c - s->capev);
		s->ev = t;
		s->capev = c;
	}
	if (p >= s->nev)
		s->nev = p + 1;
	return &s->ev[p];
}

/* The rank pass 2 writes, as rd says it now (at the first event). */
static void
rank_at(struct sel *s, const struct kt_reader *rd)
{
	s->rank_keep = kt_reader_rank_to_keep(rd);
	(void)kt_reader_rank_how(rd, &s->rank_how);
	s->rank_seen = 1;
}

/* What event ev, at position p, is (pass 1). */
static void
take_event(struct sel *s, const struct kt_reader *rd,
    const struct kt_event *ev, uint64_t p)
{
	struct kt_error err;
	uint8_t *e = flags_at(s, p);

	*e = E_SEEN;
	if (s->places != NULL && kt_places_add(s->places, p, ev, &err) == -1)
		kt_cli_die(&err);
	if (ev->ph == 'M') {
		*e |= E_META;
		return;
	}
	if (ev->kind == KT_FLOW)
		*e |= E_FLOW;
	if (kt_flows_add(s->flows, ev, p) == -1)
		kt_cli_nomem();
	if (s->o.drop & (1u << ev->kind))
		*e |= E_DROP;
	if (passes(s, rd, ev))
		*e |= E_PASS;
	if (s->o.nids && asked(&s->o, ev->index))
		*e |= E_ID;
}

/*
 * Read every event once: its flags, the slices and the flow ends.  A
 * plain JSON file (places) is numbered by position (KT_READ_POSITIONS),
 * its rows mapped at the end, and read on every CPU after its first
 * event (kt_ahead); what needs the reader (the rank, the keys before the
 * events) is taken at the first event.
 */
static void
pass1(struct sel *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_event ev;
	const struct kt_event *e;
	struct kt_ahead *ah = NULL;
	struct kt_error err;
	struct kt_rows si;
	size_t k;
	int rc, applied, positions, ahead, mapped;
	uint64_t n = 0;

	if (!s->o.count && !s->o.tsv) {
		if ((s->hold = kt_hold_new(s->path, s->name)) == NULL)
			kt_cli_nomem();
		if (!kt_hold_plain(s->hold)) {
			kt_hold_free(s->hold);
			s->hold = NULL;
		} else if ((s->places = kt_places_new(s->hold)) == NULL)
			kt_cli_nomem();
	}
	positions = s->places != NULL;
	ahead = positions && kt_cli_threads();
	rd = kt_cli_open_one(s->path, s->name, s->o.co.member,
	    s->o.co.rflags | (positions ? KT_READ_POSITIONS : 0), &src);
	while ((rc = kt_ahead_get(ah, rd, &ev, &e, &err)) == 1) {
		uint64_t p = positions ? e->index : kt_reader_position(rd);

		if (ah == NULL && (++n & 0xffff) == 0)
			kt_cli_progress(rd);
		if (s->places != NULL && !s->rank_seen)
			rank_at(s, rd);
		if (positions && !s->rank_known) {
			/* The keys before traceEvents: all there are now. */
			s->rank = kt_reader_rank(rd);
			s->rank_known = 1;
		}
		take_event(s, rd, e, p);
		if (ahead && ah == NULL &&
		    (ah = kt_ahead_start(rd, kt_cli_progress)) == NULL)
			ahead = 0;	/* read on here */
	}
	kt_ahead_stop(ah);
	if (rc == -1)
		kt_cli_die(&err);
	kt_cli_progress_done();
	kt_cli_one_trace(src, s->name, "several traces: pick one with "
	    "--member", 0);
	s->tsv_in = kt_reader_form(rd) == KT_FORM_TSV;
	/*
	 * A ktSourceIndex after the events numbered them by position, and
	 * so did KT_READ_POSITIONS any.
	 */
	if (positions)
		mapped = kt_reader_srcindex(rd, &si);
	else
		mapped = kt_reader_rows(rd, &si, &applied) && !applied;
	if (mapped) {
		uint64_t p;

		if ((s->si = malloc((si.n ? si.n : 1) * sizeof(*s->si))) ==
		    NULL)
			kt_cli_nomem();
		for (k = 0; k < si.n; k++)
			s->si[k] = kt_rows_at(&si, k);
		s->nsi = si.n;
		for (p = 0; p < s->nev && s->o.nids; p++) {
			s->ev[p] &= (uint8_t)~E_ID;
			if (asked(&s->o, p < si.n ? s->si[p] : p))
				s->ev[p] |= E_ID;
		}
	}
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	if (s->places != NULL && !s->tsv_in) {
		/* Pass 2 writes from the places, with this reader's metadata. */
		if (!s->rank_seen)
			rank_at(s, rd);
		s->rd1 = rd;
		s->src1 = src;
		return;
	}
	kt_places_free(s->places);
	s->places = NULL;
	kt_reader_free(rd);
	kt_source_close(src);
}

/* ------------------------------------------------------------------ */
/* Flows: each end's slice (kt_flows_bind), and which flows stay. */

/* Keep event p unless its kind is dropped. */
static void
keep(struct sel *s, uint64_t p)
{
	if (p < s->nev && (s->ev[p] & E_SEEN) && !(s->ev[p] & E_DROP))
		s->ev[p] |= E_KEEP;
}

/*
 * With --links, a match's flow peers: every flow with an end on a match
 * brings the slices of all its ends.
 */
static void
flow_peers(struct sel *s)
{
	size_t a, b, i;

	for (a = 0; a < s->nfl; a = b) {
		int pull = 0;

		for (b = a; b < s->nfl && s->fl[b].key == s->fl[a].key; b++)
			if (s->fl[b].anchor != KT_FLOW_NONE &&
			    (s->ev[s->fl[b].anchor] & E_HIT))
				pull = 1;
		for (i = a; pull && i < b; i++)
			if (s->fl[i].anchor != KT_FLOW_NONE)
				keep(s, s->fl[i].anchor);
	}
}

/*
 * A flow stays whole or not at all: when none of its ends is dropped and
 * every end's slice stays (an end without a slice: when it is a match
 * itself), so that no flow end is left pointing at nothing.
 */
static void
keep_flows(struct sel *s)
{
	size_t a, b, i;

	for (a = 0; a < s->nfl; a = b) {
		int whole = 1;

		for (b = a; b < s->nfl && s->fl[b].key == s->fl[a].key; b++) {
			const struct kt_flow_end *f = &s->fl[b];

			if ((s->ev[f->pos] & E_DROP) ||
			    (f->anchor != KT_FLOW_NONE ?
			    !(s->ev[f->anchor] & E_KEEP) :
			    !(s->ev[f->pos] & E_HIT)))
				whole = 0;
		}
		for (i = a; whole && i < b; i++)
			s->ev[s->fl[i].pos] |= E_KEEP;
	}
}

/* ------------------------------------------------------------------ */
/* The decision. */

/*
 * The matches: every criterion met, --id too, not dropped, not metadata,
 * and a flow end only when it has no slice of its own; the first
 * --limit of them.
 */
static void
matches(struct sel *s)
{
	size_t i;
	uint64_t p;

	/* A flow end with a slice goes with its flow, not by itself. */
	for (i = 0; i < s->nfl; i++)
		if (s->fl[i].anchor != KT_FLOW_NONE)
			s->ev[s->fl[i].pos] &= (uint8_t)~E_PASS;
	for (p = 0; p < s->nev; p++) {
		uint8_t e = s->ev[p];

		if (!(e & E_SEEN) || (e & (E_META | E_DROP)) ||
		    !(e & E_PASS) || (s->o.nids && !(e & E_ID)))
			continue;
		s->matched++;
		if (s->o.limit >= 0 && s->hits >= (uint64_t)s->o.limit)
			continue;
		s->ev[p] |= E_HIT | E_KEEP;
		s->hits++;
	}
}

/*
 * --links over the model (rows are positions, KT_READ_POSITIONS): a
 * matching GPU activity brings its chain (kt_chain_get: the launching
 * call, cpu_op, annotation, step, user frame, forward op); a matching
 * runtime or driver call, the activities it launched.
 */
static void
links(struct sel *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_chains *ch;
	struct kt_chain c;
	struct kt_error err;
	size_t i;

	rd = kt_cli_open_one(s->path, s->name, s->o.co.member,
	    s->o.co.rflags | KT_READ_POSITIONS, &src);
	m = kt_cli_model_with(rd, KT_MODEL_SEQ);
	if ((ch = kt_chains_new(m, NULL, &err)) == NULL)
		kt_cli_die(&err);
	for (i = 0; i < m->nact; i++) {
		const struct kt_act *a = &m->act[i];
		uint64_t p = a->index;

		if (a->launch != KT_NO && m->spans[a->launch].index < s->nev &&
		    (s->ev[m->spans[a->launch].index] & E_HIT))
			keep(s, p);
		if (p >= s->nev || !(s->ev[p] & E_HIT))
			continue;
		if (kt_chain_get(ch, (uint32_t)i, &c) == -1)
			kt_cli_nomem();
		if (c.launch != KT_NO)
			keep(s, m->spans[c.launch].index);
		if (c.op != KT_NO)
			keep(s, m->spans[c.op].index);
		if (c.ann != KT_NO)
			keep(s, m->spans[c.ann].index);
		if (c.step != KT_NO)
			keep(s, m->spans[m->steps[c.step].span].index);
		if (c.frame != KT_NO)
			keep(s, m->spans[c.frame].index);
		if (c.fwd != KT_NO)
			keep(s, m->spans[c.fwd].index);
	}
	kt_chains_free(ch);
	kt_model_free(m);
	kt_reader_free(rd);
	kt_source_close(src);
}

/* Decide every event: matches, their links, metadata, whole flows. */
static void
decide(struct sel *s)
{
	uint64_t p;

	if (kt_flows_bind(s->flows) == -1)
		kt_cli_nomem();
	s->fl = kt_flows_ends(s->flows, &s->nfl);
	matches(s);
	if (s->o.links) {
		links(s);
		flow_peers(s);
	}
	for (p = 0; p < s->nev; p++)
		if (s->ev[p] & E_META)
			s->ev[p] |= E_KEEP;
	keep_flows(s);
}

/* ------------------------------------------------------------------ */
/* Pass 2: write what stays. */

static void
pass2(struct sel *s)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_event ev;
	struct kt_error err;
	struct kt_out *out;
	struct kt_writer *w;
	const struct kt_meta *m;
	size_t nm;
	int rc, begun = 0, tsv = s->o.tsv || s->tsv_in, bad = 0;

	out = kt_cli_out_open(s->o.co.output, s->o.co.level);
	if ((w = kt_writer_new(out, tsv ? KT_WRITE_TSV : KT_WRITE_ROWS)) ==
	    NULL)
		kt_cli_nomem();
	rd = kt_cli_open_one(s->path, s->name, s->o.co.member,
	    s->o.co.rflags, &src);
	while (!bad && (rc = kt_reader_next(rd, &ev, &err)) == 1) {
		uint64_t p = kt_reader_position(rd);

		if (!begun) {
			/* The keys before traceEvents are known now. */
			m = kt_reader_metas(rd, &nm);
			(void)kt_cli_keep_rank(w, rd);
			bad = kt_writer_begin(w, m, nm, NULL, 0) == -1;
			begun = 1;
		}
		if (p >= s->nev || !(s->ev[p] & E_KEEP))
			continue;
		/* The row of the original file (an unapplied index maps). */
		if (s->si != NULL && p < s->nsi)
			ev.index = s->si[p];
		if (tsv)
			bad = kt_writer_event(w, &ev) == -1;
		else
			bad = kt_writer_raw(w, ev.raw, ev.len, ev.index) == -1;
	}
	if (!bad && rc == -1)
		kt_cli_die(&err);
	m = kt_reader_metas(rd, &nm);
	if (!bad && !begun) {
		(void)kt_cli_keep_rank(w, rd);
		bad = kt_writer_begin(w, m, nm, NULL, 0) == -1;
	}
	if (!bad)
		bad = kt_writer_end(w, m, nm) == -1;
	kt_cli_out_commit(out, bad, NULL);
	kt_writer_free(w);
	kt_reader_free(rd);
	kt_source_close(src);
}

/*
 * Pass 2 from pass 1's places: the bytes of the events kept read again
 * from the file (kt_hold checks that it did not change), the metadata
 * of pass 1's reader, the rows of its ktSourceIndex (si).  The same
 * output as pass2().
 */
static void
pass2_places(struct sel *s)
{
	struct kt_error err;
	struct kt_out *out;
	struct kt_writer *w;
	const struct kt_meta *m;
	const char *raw;
	size_t nm, len;
	uint64_t p;
	int bad;

	memset(&err, 0, sizeof(err));
	out = kt_cli_out_open(s->o.co.output, s->o.co.level);
	if ((w = kt_writer_new(out, KT_WRITE_ROWS)) == NULL)
		kt_cli_nomem();
	if (kt_hold_check(s->hold, &err) == -1)
		kt_cli_die(&err);
	m = kt_reader_metas(s->rd1, &nm);
	(void)kt_cli_keep_rank_as(w, s->rank_keep, kt_reader_name(s->rd1),
	    s->rank_how);
	bad = kt_writer_begin(w, m, nm, NULL, 0) == -1;
	for (p = 0; !bad && p < s->nev; p++) {
		if (!(s->ev[p] & E_KEEP))
			continue;
		switch (kt_places_get(s->places, p, &raw, &len, NULL, &err)) {
		case -1:
			kt_cli_die(&err);
			break;
		case 0:
			continue;
		}
		/* The row of the original file: its ktSourceIndex's. */
		bad = kt_writer_raw(w, raw, len, s->si != NULL && p < s->nsi ?
		    s->si[p] : p) == -1;
	}
	if (!bad)
		bad = kt_writer_end(w, m, nm) == -1;
	if (!bad && kt_hold_check(s->hold, &err) == -1)
		kt_cli_die(&err);
	kt_cli_out_commit(out, bad, NULL);
	kt_writer_free(w);
}

/* The events kept, metadata aside. */
static uint64_t
kept(const struct sel *s)
{
	uint64_t p, n = 0;

	for (p = 0; p < s->nev; p++)
		n += (s->ev[p] & (E_KEEP | E_META)) == E_KEEP;
	return n;
}

static void
sel_free(struct sel *s)
{
	size_t i;

	for (i = 0; i < s->o.nnames; i++)
		regfree(&s->o.names[i]);
	free(s->o.names);
	free(s->o.cats);
	free(s->o.comms);
	free(s->o.ranks);
	free(s->o.devices);
	free(s->o.streams);
	free(s->o.ids);
	free(s->ev);
	free(s->si);
	kt_flows_free(s->flows);
	kt_pidrank_free(s->pidrank);
	kt_buf_free(&s->tmp);
	kt_places_free(s->places);
	kt_hold_free(s->hold);
	kt_reader_free(s->rd1);
	kt_source_close(s->src1);
}

int
main(int argc, char *argv[])
{
	struct sel s;
	int i;

	memset(&s, 0, sizeof(s));
	s.rank = -1;
	if ((s.pidrank = kt_pidrank_new()) == NULL)
		kt_cli_nomem();
	kt_cli_init("kt-select");
	i = parse_args(&s.o, argc, argv);
	argc -= i;
	argv += i;
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(s.o.co.output, argv, argc) == -1)
		exit(2);
	if ((s.flows = kt_flows_new()) == NULL)
		kt_cli_nomem();
	s.name = argc && strcmp(argv[0], "-") != 0 ? argv[0] : "<stdin>";
	/* Read twice: standard input, a FIFO or a pipe is copied once. */
	s.path = kt_cli_input_path(argc ? argv[0] : NULL);
	pass1(&s);
	decide(&s);
	if (s.o.count)
		printf("%llu\n", (unsigned long long)kept(&s));
	else if (s.places != NULL)
		pass2_places(&s);
	else
		pass2(&s);
	if (s.o.limit >= 0 && s.matched > s.hits)
		kt_cli_warn("%s: limited to the first %llu of %llu matching "
		    "events", s.name, (unsigned long long)s.hits,
		    (unsigned long long)s.matched);
	i = 0;
	if (s.hits == 0) {
		kt_cli_warn("%s: no event matched", s.name);
		i = 1;
	}
	sel_free(&s);
	return i;
}
