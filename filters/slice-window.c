/*
 * kt-slice-window: cut a window out of a trace (ProfilerSteps, a time
 * range, an annotation, a rank) and write it as a valid trace: every
 * metadata event, the events that overlap the window (cut at its edges
 * with --clip), the counter values in force at its start, the flows
 * whose ends both survive, and from before its start the launch calls
 * (with their ac2g flow starts and ProfilerSteps) of the GPU work it
 * keeps, so that the views attribute that work as in the whole trace.
 *
 * The engine reads a trace sorted by time (as kt normalize writes it) in
 * one pass, holding only what the window needs: the events still open
 * when the window starts, the launch calls whose GPU work may be in it,
 * and the output behind a flow whose other end (or behind a call whose
 * GPU work) has not come yet.  Once the window's end is certain it stops
 * reading.  An input that is not sorted is held in memory and sorted
 * first (of a plain file, an index: each event's place and row, not its
 * text; the bytes are read and scanned again as they are fed, but of
 * the events that end before a window known in advance starts, only
 * the few it needs there, see struct held); one
 * found unsorted only after PROBE_EVENTS is cut again that way from its
 * start (a pipe is copied, as far as it is read, so that it can be; a
 * compressed or archived one is held as the places of its events in the
 * decompressed stream, and the bytes of those fed decompressed again).
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

#define NOEND		INT64_MAX
#define PROBE_EVENTS	4096	/* events looked at to decide sortedness */

enum wkind { W_TIME, W_STEPS, W_ANNOTATION };

enum state { KEEP, DROP, PENDING, UNSURE };

/*
 * The events the engine holds are in stores (lib/core/store.c): the
 * output waiting on a decision (per window, a queue), the events that
 * may overlap a window's start, the metadata events, the last value of
 * each counter track, and an unsorted input.  A record's aux is its
 * flow key id (NOFLOW: not a flow), its tag its state (bits 0-1) and
 * whether it is a flow start (bit 2); its end is ts + dur.  Held events
 * keep the offsets of what their output needs (the columns of TSV, and
 * the times and args a cut or a carried counter changes), so that none
 * is scanned again.
 */
#define NOFLOW		UINT32_MAX
#define TAG_STATE	0x03
#define TAG_IS_S	0x04
/*
 * A record whose aux is a slot of its window (see pre_seed), not a
 * flow: with TAG_WAITS one kept from before the window that waits on
 * the slot's fate (a launch call, its flow start, its ProfilerStep),
 * without it a GPU activity whose fate decides the slot's.
 */
#define TAG_SLOT	0x08
#define TAG_WAITS	0x10
#define TAG_PRE		0x20	/* a flow start from before the window */
#define TAG_SEP		0x40	/* KT_WRITE_SEP before it in the file */

#define NOSLOT		UINT32_MAX
enum slotstate { S_OPEN, S_KEPT, S_DROPPED };

/* What writing a held event needs of its fields (with --tsv or --clip). */
#define EMIT_FIELDS	(KT_FCOLUMNS | KT_FBIT(KT_F_TS) | KT_FBIT(KT_F_DUR) | \
			 KT_FBIT(KT_F_ARGS))
/* What a counter carried to a start needs. */
#define CARRY_FIELDS	(KT_FBIT(KT_F_TS) | KT_FBIT(KT_F_ARGS))
/*
 * What feed() reads of an event: the name (steps, annotations, launches),
 * cat, name and id (a flow's key), pid and tid (a counter's track), the
 * correlation (launches and their GPU work) and the rank (--rank).
 */
#define FEED_FIELDS	(CARRY_FIELDS | KT_FBIT(KT_F_NAME) | \
			 KT_FBIT(KT_F_CAT) | KT_FBIT(KT_F_ID) | \
			 KT_FBIT(KT_F_PID) | KT_FBIT(KT_F_TID) | \
			 KT_FBIT(KT_F_CORR))

static int
state_of(const struct kt_rec *r)
{
	return r->tag & TAG_STATE;
}

static void
set_state(struct kt_rec *r, int st)
{
	r->tag = (uint8_t)((r->tag & ~TAG_STATE) | st);
}

/* The end of a held event: ts + dur (0 when none or negative). */
static int64_t
end_of(const struct kt_rec *r)
{
	return r->ts + ((r->flags & KT_EV_DUR) && r->dur > 0 ? r->dur : 0);
}

/* A flow's ends inside one window. */
struct flowstate {
	uint8_t	 has_s;
	uint8_t	 has_f;
};

struct window {
	struct kt_store	*fifo;		/* output waiting on a decision */
	int64_t		 start;
	int64_t		 end;		/* NOEND until known */
	int		 final;		/* end is certain */
	int		 done;
	int64_t		 step_a, step_b;
	int		 seen_b;
	int64_t		 cpu_end;
	int64_t		 gpu_end;
	struct kt_intern *launched;	/* correlations launched inside */
	uint8_t		*resolved;	/* per launched: GPU work seen */
	uint8_t		*graph;		/* per launched: a graph launch */
	size_t		 nresolved;
	size_t		 outstanding;
	/*
	 * Graph launches (see graph_done): their number still open, the
	 * correlations launched after the window's last step, the devices
	 * that ran the window's graph work, and on which of them work
	 * launched after it has begun.
	 */
	size_t		 graphs;
	size_t		 graphs_unseen;	/* no GPU work seen yet */
	struct kt_intern *later;
	struct kt_intern *gdevs;
	uint8_t		*moved;
	size_t		 capmoved, nmoved;
	struct flowstate *flows;	/* by flow key id */
	size_t		 nflows;
	/*
	 * The launch calls before the window whose GPU work may be in it
	 * (their correlations by value: the slots), then the ProfilerSteps
	 * that hold them: each slot's fate, a launch's step slot, and the
	 * launches a step slot still waits on.
	 */
	struct kt_intern *slots;
	uint8_t		*sstate;
	uint32_t	*sstep;
	uint32_t	*swait;
	size_t		 nslots;
	uint64_t	 pre_launches, pre_steps, pre_flows;
	uint64_t	 dropped_flows;
	uint64_t	 written;
	/*
	 * The row numbers written, in order: kept once one is not its
	 * place (rows[k] == k before, as a full pass of a file writes).
	 */
	uint64_t	*rows;
	size_t		 nrows, caprows;
	int		 rows_kept;
	struct kt_out	*out;
	struct kt_writer *w;
	int		 committed;	/* its output is written and closed */
	char		 path[PATH_MAX];
	/*
	 * An output written through (stdout, a FIFO, a device) while the
	 * input is streamed goes first to this temporary file, copied to
	 * it at the commit: the input may yet turn out unsorted, and the
	 * window be cut again from the input held and sorted (see run).
	 * A JSON window of a plain file is not copied so but logged
	 * (defer): each event written as its place in the file (8 bytes),
	 * or, when it is not the file's bytes as they are there (cut,
	 * repaired, held), as its bytes in dlit; the commit writes them.
	 * A place that follows the one logged before it by the writer's
	 * separator in the file, as the reader saw (TAG_SEP), joins it in
	 * one entry, a run (DLOG_RUN): written from the file by the system
	 * at the commit, unread here.
	 * Past DEFER_MAX bytes of log, the window goes to a file as above.
	 */
	char		 spool[PATH_MAX];
	int		 defer;
	uint64_t	*dlog;
	size_t		 ndlog, capdlog;
	size_t		 dlast;		/* where the last entry begins */
	uint64_t	 dend;		/* the last place's end, or 0 */
	struct kt_buf	 dlit;
	char		*runbuf;	/* RUN_SEND bytes, for replay_run */
};

/* A log entry (window.dlog): a place in the file, or bytes in dlit. */
#define DLOG_LIT	((uint64_t)1 << 63)	/* in dlit */
#define DLOG_LONG	((uint64_t)1 << 62)	/* offset, length follow */
#define DLOG_RUN	((uint64_t)1 << 61)	/* offset, length, count follow */
#define DLOG_FLAGS	(DLOG_LIT | DLOG_LONG | DLOG_RUN)
#define DLOG_LENBITS	25
#define DLOG_OFFBITS	36
#define DEFER_MAX	((uint64_t)64 << 20)	/* log bytes, then a file */

struct opts {
	enum wkind	 kind;
	int64_t		 from, to;
	int		 has_from, has_to;
	int		 absolute;
	int64_t		 step_a, step_b;
	int		 split;		/* --split-steps N */
	regex_t		 re;
	const char	*re_text;
	int64_t		 nth;
	struct kt_ranklist ranks;	/* --rank LIST */
	int		 has_rank;
	int		 clip;
	int		 cpu_only;
	int		 tsv;
	struct kt_cli_opts co;	/* -l, -m, -o, -S */
};

/*
 * Everything one run keeps, made in main() and passed down: the
 * options, the input, what a window starting later needs (the open
 * events, the counter values, the metadata events), the windows, and
 * what is known of the trace so far.
 */
struct sw {
	struct opts	 o;
	const char	*path;		/* the input, a copy of a pipe */
	const char	*name;		/* its name in messages */
	struct kt_source *src;
	struct kt_reader *rd;
	int		 hold_all;	/* hold and sort it all (a restart) */
	/*
	 * A compressed or archived input found unsorted is held as the
	 * places of its events in the decompressed stream, and the bytes
	 * of those fed are decompressed again, a batch at a time (fetch).
	 */
	int		 deferred;
	struct stat	 st;		/* the input, when it was first read */
	/*
	 * A pipe or a FIFO is read as it comes and copied to a temporary
	 * file (tee, -1: none) as far as it is read, at most teemax bytes:
	 * out of order, the rest is copied too and the copy read again
	 * (teepath); a window done, what is left is read uncopied.
	 */
	int		 tee;
	uint64_t	 teemax;
	const char	*teepath;
	int		 streaming;	/* the input is streamed: may restart */
	struct kt_hold	*holder;	/* a plain input file: what hd holds
					   are places in it (lib/core/hold.c) */
	struct kt_flowkeys *flowkeys;	/* flow keys to their ids */
	struct kt_pidrank *pidrank;	/* --rank: ranks of pids, for flows */
	struct kt_intern *tracks;	/* counter tracks */
	struct kt_store	*lastc;		/* per track: last counter event */
	struct kt_store	*open_;		/* events that may overlap a start */
	struct kt_store	*metas_ev;	/* metadata events, kept for all */
	/*
	 * For a window to come, the launch calls whose GPU work may still
	 * be in it (with the flow starts of their ac2g flows; aux: their
	 * correlation's id in precorr), the last end of that work seen,
	 * and the ProfilerSteps that may hold them.
	 */
	struct kt_store	*pre_;
	struct kt_intern *precorr;
	int64_t		*pregend;
	size_t		 cappregend;
	size_t		 pre_next;	/* pre_'s size at its next cleaning */
	struct kt_store	*presteps;
	struct window	*wins;
	size_t		 nwins;
	uint32_t	 fields;	/* what held events keep of theirs */
	int		 commit_early;	/* commit a split window once done */
	int64_t		 now;
	int64_t		 first_ts;	/* the earliest non-metadata time */
	int64_t		 last_ts;
	int64_t		 first_step, last_step;
	int64_t		 nmatches;
	uint64_t	 nseen;
	int		 tail_known;	/* the keys after the events are known */
};

/*
 * The input held to be sorted (run): an index entry per event, in file
 * order, and the sort keys.  The first PROBE_EVENTS events, which decide
 * whether the input is sorted, are records of first with the fields that
 * feed() reads (off: IX_FIRST and the position), so that a short or a
 * sorted input is scanned once.  Any later event read from a plain file
 * without a repair is its place there (off: offset, 38 bits, and length,
 * 24 bits) and is read again and scanned again when it is fed; any other
 * (a compressed input's, a repaired one, one of 16 MB or more) is copied
 * into copies, and off is IX_COPY with its position there.  With row
 * (the event's row number) and its pair, 28 bytes an event, 44 while it
 * is sorted: none of the text of a plain file is held.
 */
#define IX_COPY		((uint64_t)1 << 63)
#define IX_FIRST	((uint64_t)1 << 62)
#define IX_POS		(IX_FIRST - 1)
#define IX_LENBITS	24
/*
 * Most of a trace ends before a window's start, and feeding it there
 * (read again, scanned again) did nothing but remember a few things
 * for the window (feed, remember_launch).  So each entry also says what
 * feeding it before the window needs, in the pair's value (the
 * position in its low 32 bits) and dur (its duration, DUR_LONG when it
 * is 2^32 ns or more): CLS_FULL (a metadata event, a counter, a
 * ProfilerStep, a launch call, an ac2g flow start, one with no time or
 * a correlation that is not a plain number: fed), CLS_SKIP (nothing:
 * any other event that ends before the start, which only the set of
 * events open at the start would have held, and not after it), or a
 * GPU activity's correlation (only its launch's last end of GPU work,
 * feed_light).  An event that ends at or after the start, or comes
 * after it, is fed as it is (feed_sorted).  4 bytes an event more.
 */
#define CLS_FULL	UINT32_MAX
#define CLS_SKIP	(UINT32_MAX - 1)
#define CLS_MAXCORR	(UINT32_MAX - 2)
#define DUR_LONG	UINT32_MAX
struct held {
	uint64_t	*off;
	uint32_t	*row;
	uint32_t	*dur;
	struct kt_pair	*key;		/* (order key, class and position) */
	size_t		 n, cap;
	struct kt_store	*first;		/* the first PROBE_EVENTS */
	struct kt_store	*copies;
	/*
	 * What run saw of the window's start as it held the events: the
	 * earliest time, and that of the earliest ProfilerStep in --steps.
	 */
	int64_t		 min_ts, min_step_ts;
	/*
	 * Deferred (sw->deferred): the bytes of the next events fed that
	 * need them, decompressed again (fetch): need[c..m) in the order
	 * they are fed, each its place in the sorted index and in batch.
	 */
	struct need {
		size_t	 i;
		uint64_t at;
	}		*need;
	size_t		 c, m;
	char		*batch;
};
#define BATCH_BYTES	((size_t)32 << 20)	/* decompressed again at once */

/*
 * A size, dflt; the debug build takes the environment's name instead
 * (tests: KT_DEBUG_BATCH, the batch's, KT_DEBUG_DEFER, a window's log).
 */
static uint64_t
debug_size(const char *name, uint64_t dflt)
{
#ifdef KT_DEBUG_SCANS
	const char *e = getenv(name);

	if (e != NULL && atol(e) > 0)
		return (uint64_t)atol(e);
#else
	(void)name;
#endif
	return dflt;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-slice-window [-AcCSt] [-l level] [-m glob] [-o file] [-r ranks]\n"
	    "           (--steps A[-B] | --from T --to T | --annotation RE [--nth K]\n"
	    "           | --split-steps N -o prefix) [--spool-max size] [file]\n"
	    "  -s, --steps A-B        ProfilerStep#A to #B (or one step: --steps 7)\n"
	    "  -f, --from T, -T, --to T  a time range, with a unit (ns, us, ms, s),\n"
	    "                         from the first event unless --absolute\n"
	    "  -a, --annotation RE    the window of the K-th matching annotation\n"
	    "  -n, --nth K            which match (default 1)\n"
	    "  -r, --rank LIST        only these ranks of a merged trace: 0,7,63-64\n"
	    "  -c, --clip             cut events that cross an edge\n"
	    "  -C, --cpu-only         a step window ends with its CPU annotation\n"
	    "  -p, --split-steps N    one file per N steps: PREFIX-steps-A-B.json\n"
	    "  -A, --absolute         --from and --to are absolute times\n"
	    "      --spool-max SIZE   cap on copying a pipe or stdin\n"
	    "  -l, --level N, -m, --member GLOB, -o, --output FILE, -S, --strict,\n"
	    "  -t, --tsv, -h, --help, -V, --version  as in kt(7)\n");
}

static void	win_drop_work(struct window *);
static void	take_ev(struct sw *, struct window *, const struct kt_event *,
		    uint32_t);

/* ------------------------------------------------------------------ */
/* Held events. */

/* A new store for held events, keeping fields of theirs. */
static struct kt_store *
store_new(uint32_t fields)
{
	struct kt_store *st;

	if ((st = kt_store_new(0, fields, NULL)) == NULL)
		kt_cli_nomem();
	return st;
}

/*
 * Hold ev as st's last record, with its flow (NOFLOW: none); rd, when
 * not NULL, read it (a store with a holder keeps its place).
 */
static struct kt_rec *
keep_ev(struct kt_store *st, const struct kt_reader *rd,
    const struct kt_event *ev, uint32_t flow)
{
	struct kt_rec *r;
	struct kt_error err;

	if ((r = kt_store_add(st, rd, ev, &err)) == NULL)
		kt_cli_die(&err);
	r->aux = flow;
	if (ev->ph == 's')
		r->tag |= TAG_IS_S;
	if (rd != NULL && (ev->flags & KT_EV_SEP))
		r->tag |= TAG_SEP;
	return r;
}

/* The flow key id of a flow event: (cat, name, id), kt_flowkeys. */
static uint32_t
flow_key(struct sw *sw, const struct kt_event *ev)
{
	int64_t k;

	if ((k = kt_flowkeys_put(sw->flowkeys, ev)) == -1)
		kt_cli_nomem();
	return (uint32_t)k;
}

/* ------------------------------------------------------------------ */
/* Writing a window. */

/*
 * The cut (or carried) copy of in, in b, scanned into ev: clipped to
 * window w at the edges it crosses, or, when newts is not INT64_MIN, a
 * counter value moved to newts.
 */
static void
patched(const struct kt_event *in, const struct window *w, int clip_start,
    int clip_end, int64_t newts, struct kt_buf *b, struct kt_event *ev)
{
	struct kt_patch p;
	struct kt_buf rec = KT_BUF_INIT;
	char ts[48], dur[48];
	int64_t iend = in->ts + ((in->flags & KT_EV_DUR) && in->dur > 0 ?
	    in->dur : 0);
	int64_t s = clip_start ? w->start : in->ts;
	int64_t e = clip_end ? w->end : iend;
	size_t tn, dn;
	const char *t;

	kt_patch_init(&p, in);
	if (newts != INT64_MIN) {
		/* A counter value carried to the window's start. */
		t = kt_event_field(in, KT_F_TS, &tn);
		kt_patch_set(&p, KT_F_TS, ts, kt_time_format(newts,
		    in->ts_decimals, ts));
		kt_patch_key(&p, KT_KEY_CARRIED, t, tn);
	} else {
		/* The cut, recorded with the original times. */
		kt_obj_begin(&rec);
		t = kt_event_field(in, KT_F_TS, &tn);
		kt_obj_raw(&rec, "ts", t, tn);
		t = kt_event_field(in, KT_F_DUR, &dn);
		if (t != NULL)
			kt_obj_raw(&rec, "dur", t, dn);
		kt_obj_end(&rec);
		kt_patch_set(&p, KT_F_TS, ts, kt_time_format(s,
		    in->ts_decimals, ts));
		kt_patch_set(&p, KT_F_DUR, dur, kt_time_format(e - s,
		    in->dur_decimals, dur));
		kt_patch_arg(&p, KT_ARG_CLIP, rec.p, rec.n);
	}
	/* Its fields come from the patch: nothing is scanned again. */
	if (kt_patch_apply_event(&p, b, ev) == -1) {
		kt_cli_warn("internal error: patched event");
		kt_cli_die(NULL);
	}
	kt_patch_free(&p);
	kt_buf_free(&rec);
}

/*
 * Window w's output (a file of our own, spool_open, or where it goes):
 * its writer, and the top-level keys before the events.
 */
static void
win_writer(struct sw *sw, struct window *w)
{
	const struct kt_meta *m;
	size_t nm;

	if ((w->w = kt_writer_new(w->out, sw->o.tsv ? KT_WRITE_TSV : 0)) ==
	    NULL)
		kt_cli_nomem();
	m = kt_reader_metas(sw->rd, &nm);
	(void)kt_cli_keep_rank(w->w, sw->rd);
	if (kt_writer_begin(w->w, m, nm, NULL, 0) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
}

/* Open a file of our own for window w's output (w->spool). */
static void
spool_open(struct window *w)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(w->spool, sizeof(w->spool), "%s/kt-slice-window.XXXXXX",
	    dir != NULL && dir[0] != '\0' ? dir : "/tmp");
	if ((fd = mkstemp(w->spool)) == -1) {
		kt_cli_warn("%s: %s", w->spool, strerror(errno));
		kt_cli_die(NULL);
	}
	close(fd);
	kt_cli_add_temp(w->spool);
	w->out = kt_cli_out_open(w->spool, -1);
}

/* Room for need more entries in *a of *cap (doubling, from least). */
static void
grow_u64(uint64_t **a, size_t *cap, size_t n, size_t need, size_t least)
{
	size_t c;
	uint64_t *t;

	if (n + need <= *cap)
		return;
	for (c = *cap ? *cap * 2 : least; c < n + need; c *= 2)
		;
	if ((t = realloc(*a, c * sizeof(*t))) == NULL)
		kt_cli_nomem();
	*a = t;
	*cap = c;
}

/*
 * Log entry *i of window w (*i moved to its last word): its offset and
 * length, and how many events it is (*n: more than one in a run);
 * is it in dlit?
 */
static int
dlog_at(const struct window *w, size_t *i, uint64_t *off, uint64_t *len,
    uint64_t *n)
{
	uint64_t e = w->dlog[*i];

	*n = 1;
	if (e & (DLOG_LONG | DLOG_RUN)) {
		*off = w->dlog[++*i];
		*len = w->dlog[++*i];
		if (e & DLOG_RUN)
			*n = w->dlog[++*i];
	} else {
		*off = (e & ~DLOG_FLAGS) >> DLOG_LENBITS;
		*len = e & (((uint64_t)1 << DLOG_LENBITS) - 1);
	}
	return (e & DLOG_LIT) != 0;
}

/*
 * Write n events joined in the held file by the writer's separator,
 * bytes [off, off + len), to window w: from RUN_SEND bytes on by the
 * system, from the file to the output (kt_hold_joined), else read and
 * written as they are (kt_writer_joined).
 */
#define RUN_SEND	((uint64_t)64 << 10)
static void
replay_run(struct sw *sw, struct window *w, uint64_t off, uint64_t len,
    uint64_t n)
{
	struct kt_error err;

	memset(&err, 0, sizeof(err));
	if (len >= RUN_SEND) {
		switch (kt_hold_joined(sw->holder, w->w, off, len, n, &err)) {
		case -1:
			kt_cli_die(&err);
			break;
		case -2:
			kt_cli_out_commit(w->out, 1, NULL);
			break;
		}
		return;
	}
	if (w->runbuf == NULL && (w->runbuf = malloc(RUN_SEND)) == NULL)
		kt_cli_nomem();
	if (kt_hold_read(sw->holder, w->runbuf, off, (size_t)len, &err) == -1)
		kt_cli_die(&err);
	if (kt_writer_joined(w->w, w->runbuf, (size_t)len, n) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
}

/* Write what window w logged to its writer, and forget the log. */
static void
win_replay(struct sw *sw, struct window *w)
{
	struct kt_event ev;
	struct kt_error err;
	uint64_t off, len, n;
	size_t i;

	memset(&ev, 0, sizeof(ev));
	memset(&err, 0, sizeof(err));
	for (i = 0; i < w->ndlog; i++) {
		if (dlog_at(w, &i, &off, &len, &n))
			ev.raw = w->dlit.p + off;
		else if (n > 1) {
			replay_run(sw, w, off, len, n);
			continue;
		}
		else if ((ev.raw = kt_hold_bytes(sw->holder, off, (size_t)len,
		    &err)) == NULL)
			kt_cli_die(&err);
		ev.len = (size_t)len;
		if (kt_writer_event(w->w, &ev) == -1)
			kt_cli_out_commit(w->out, 1, NULL);
	}
	free(w->dlog);
	w->dlog = NULL;
	w->ndlog = w->capdlog = 0;
	kt_buf_free(&w->dlit);
	free(w->runbuf);
	w->runbuf = NULL;
	w->defer = 0;
	w->dlast = 0;
	w->dend = 0;
}

/*
 * Log a place or bytes (lit) of len at off in window w's log; a place
 * that the file joins to the last one by the writer's separator (join)
 * extends its entry, a run.
 */
static void
defer_add(struct sw *sw, struct window *w, uint64_t off, uint64_t len,
    int lit, int join)
{
	uint64_t flags = lit ? DLOG_LIT : 0, o, l, n;
	size_t k = w->dlast;

	if (join) {
		if (!(w->dlog[k] & DLOG_RUN)) {
			(void)dlog_at(w, &k, &o, &l, &n);
			w->ndlog = w->dlast;
			grow_u64(&w->dlog, &w->capdlog, w->ndlog, 4, 4096);
			w->dlog[w->ndlog++] = DLOG_RUN;
			w->dlog[w->ndlog++] = o;
			w->dlog[w->ndlog++] = l;
			w->dlog[w->ndlog++] = 1;
		}
		w->dlog[w->dlast + 2] = off + len - w->dlog[w->dlast + 1];
		w->dlog[w->dlast + 3]++;
		return;
	}
	w->dlast = w->ndlog;
	grow_u64(&w->dlog, &w->capdlog, w->ndlog, 3, 4096);
	if (off >> DLOG_OFFBITS || len >> DLOG_LENBITS) {
		w->dlog[w->ndlog++] = flags | DLOG_LONG;
		w->dlog[w->ndlog++] = off;
		w->dlog[w->ndlog++] = len;
	} else
		w->dlog[w->ndlog++] = flags | off << DLOG_LENBITS | len;
	if ((uint64_t)w->ndlog * sizeof(*w->dlog) + w->dlit.n >
	    debug_size("KT_DEBUG_DEFER", DEFER_MAX)) {
		/* Too much to log: to a file of our own from here on. */
		spool_open(w);
		win_writer(sw, w);
		win_replay(sw, w);
	}
}

/*
 * Log event ev in window w's output: its place in the file when it is
 * the file's bytes there (asis), else its bytes; sep as emit_ev's.
 */
static void
defer_ev(struct sw *sw, struct window *w, const struct kt_event *ev,
    int asis, int sep)
{
	struct kt_error err;
	uint64_t off;
	int rc = 0;

	if (asis && ev->raw == NULL && ev->end >= ev->len) {
		/* A record of the held file (the FIFO's): placed already. */
		off = ev->end - ev->len;
		rc = 1;
	} else if (asis && (rc = kt_hold_where(sw->holder, ev, &off, &err)) ==
	    -1)
		kt_cli_die(&err);
	if (rc == 1) {
		int join = w->dend != 0 && off == w->dend +
		    sizeof(KT_WRITE_SEP) - 1 && (sep == 1 || (sep == -1 &&
		    (ev->flags & KT_EV_SEP)));

		w->dend = off + ev->len;
		defer_add(sw, w, off, ev->len, 0, join);
		return;
	}
	w->dend = 0;
	off = w->dlit.n;
	kt_buf_add(&w->dlit, ev->raw, ev->len);
	if (w->dlit.err)
		kt_cli_nomem();
	defer_add(sw, w, off, ev->len, 1, 0);
}

/*
 * Does --clip cut X event in at window w's start (*cs) or end (*ce)?
 * One kept from before the window (pre_seed) crosses no edge.
 */
static int
clips(const struct sw *sw, const struct window *w, const struct kt_event *in,
    int *cs, int *ce)
{
	int64_t iend = in->ts + ((in->flags & KT_EV_DUR) && in->dur > 0 ?
	    in->dur : 0);

	*cs = sw->o.clip && in->ph == 'X' && in->ts < w->start &&
	    iend >= w->start && (in->flags & KT_EV_TS);
	*ce = sw->o.clip && in->ph == 'X' && w->final && iend > w->end &&
	    (in->flags & KT_EV_TS);
	return *cs || *ce;
}

/* Keep window w's row numbers from here on (rows_kept). */
static void
rows_keep(struct window *w)
{
	size_t k;

	if (w->rows_kept)
		return;
	grow_u64(&w->rows, &w->caprows, 0, w->nrows + 1, 1024);
	for (k = 0; k < w->nrows; k++)
		w->rows[k] = k;
	w->rows_kept = 1;
}

/*
 * Write ev to window w, clipped to the window when asked; newts, when
 * not INT64_MIN, moves a counter value to the window's start.  sep: does
 * KT_WRITE_SEP come before it in the file (TAG_SEP), or -1: ev is the
 * reader's, which knows.
 */
static void
emit_ev(struct sw *sw, struct window *w, const struct kt_event *in,
    int64_t newts, int sep)
{
	struct kt_event ev;
	const struct kt_event *out = in;
	struct kt_buf b = KT_BUF_INIT;
	int clip_start, clip_end;

	if (clips(sw, w, in, &clip_start, &clip_end) || newts != INT64_MIN) {
		patched(in, w, clip_start, clip_end, newts, &b, &ev);
		out = &ev;
	}
	if (w->defer)
		defer_ev(sw, w, out, out == in, sep);
	else if (kt_writer_event(w->w, out) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
	if (w->rows_kept || in->index != w->nrows) {
		rows_keep(w);
		grow_u64(&w->rows, &w->caprows, w->nrows, 1, 1024);
		w->rows[w->nrows] = in->index;
	}
	w->nrows++;
	w->written++;
	kt_buf_free(&b);
}

/* Write record i of store st (held) to window w. */
static void
emit(struct sw *sw, struct window *w, const struct kt_store *st, size_t i,
    int64_t newts)
{
	const struct kt_rec *r = &kt_store_recs((struct kt_store *)st,
	    NULL)[i];
	struct kt_event ev;
	struct kt_error err;
	int cs, ce;

	/*
	 * JSON, nothing cut: the bytes are enough, or in a logged window
	 * (whose FIFO keeps the held file's events as places) the place.
	 */
	if (newts == INT64_MIN && (r->raw != NULL ? sw->fields == 0 :
	    w->defer && !sw->o.clip)) {
		ev.raw = r->raw;
		ev.len = r->len;
		ev.index = r->index;
		ev.ts = r->ts;
		ev.dur = r->dur;
		ev.flags = r->flags;
		ev.ph = r->ph;
		ev.known = 0;
		ev.end = r->raw != NULL ? 0 : kt_store_end(st, i);
		emit_ev(sw, w, &ev, newts, (r->tag & TAG_SEP) != 0);
		return;
	}
	kt_store_view(st, i, &ev);
	/* In the held file: its place is enough, unless it is cut. */
	if (ev.raw == NULL && (!w->defer || newts != INT64_MIN ||
	    clips(sw, w, &ev, &cs, &ce)) && kt_store_load(st, i, &ev, &err) ==
	    -1)
		kt_cli_die(&err);
	emit_ev(sw, w, &ev, newts, (r->tag & TAG_SEP) != 0);
}

/* Open window w's output and write the top-level keys and metadata. */
static void
win_open(struct sw *sw, struct window *w)
{
	size_t i;
	const char *path = sw->o.co.output;

	if (sw->o.split) {
		snprintf(w->path, sizeof(w->path), "%s-steps-%lld-%lld.%s",
		    sw->o.co.output, (long long)w->step_a,
		    (long long)w->step_b, sw->o.tsv ? "tsv" : "json");
		path = w->path;
	}
	if (sw->streaming && !kt_cli_report_beside(path, "", w->spool,
	    sizeof(w->spool))) {
		/*
		 * Written through: logged (a plain file's JSON window) or
		 * first into a file of our own.
		 */
		w->spool[0] = '\0';
		if (!sw->o.tsv && !sw->o.split && kt_hold_plain(sw->holder))
			w->defer = 1;
		else
			spool_open(w);
	} else {
		w->spool[0] = '\0';
		/* Every window's file is checked against the input (split
		 * too). */
		w->out = kt_cli_out_open(path, sw->o.co.level);
	}
	if (!w->defer)
		win_writer(sw, w);
	for (i = 0; i < kt_store_count(sw->metas_ev); i++)
		emit(sw, w, sw->metas_ev, i, INT64_MIN);
}

/*
 * The top-level keys of window w's output: the input's, with the window
 * cut (KT_KEY_WINDOW_*, after the events, in ws and we) in place of an
 * earlier slice's, so that the views know which steps it cut (kt(7)
 * Step windows).  A new array of *n keys.
 */
static struct kt_meta *
win_metas(struct sw *sw, const struct window *w, size_t *n, char *ws,
    char *we)
{
	const struct kt_meta *m = kt_reader_metas(sw->rd, n);
	struct kt_meta *o;
	size_t i, j = 0;

	if ((o = calloc(*n + 2, sizeof(*o))) == NULL)
		kt_cli_nomem();
	for (i = 0; i < *n; i++)
		if (strcmp(m[i].key, "\"" KT_KEY_WINDOW_START "\"") != 0 &&
		    strcmp(m[i].key, "\"" KT_KEY_WINDOW_END "\"") != 0)
			o[j++] = m[i];
	o[j].key = (char *)"\"" KT_KEY_WINDOW_START "\"";
	o[j].keylen = strlen(o[j].key);
	o[j].vallen = kt_int_format(w->start, ws);
	o[j].val = ws;
	o[j++].after = 1;
	if (w->end != NOEND) {
		o[j].key = (char *)"\"" KT_KEY_WINDOW_END "\"";
		o[j].keylen = strlen(o[j].key);
		o[j].vallen = kt_int_format(w->end, we);
		o[j].val = we;
		o[j++].after = 1;
	}
	*n = j;
	return o;
}

/*
 * Write the end of window w's output (the keys after the events, its
 * row numbers mapped through the input's ktSourceIndex) and commit it;
 * then free what the window holds.
 */
static void
win_commit(struct sw *sw, struct window *w)
{
	struct kt_meta *m;
	struct kt_rows si;
	struct kt_error err;
	size_t nm, k;
	int applied;
	char ws[24], we[24];

	memset(&err, 0, sizeof(err));
	if (w->defer) {
		/* Logged: written now, to where it goes. */
		w->out = kt_cli_out_open(sw->o.co.output, sw->o.co.level);
		win_writer(sw, w);
		win_replay(sw, w);
	}
	m = win_metas(sw, w, &nm, ws, we);
	if (kt_reader_rows(sw->rd, &si, &applied) && !applied) {
		rows_keep(w);
		for (k = 0; k < w->nrows; k++)
			if (w->rows[k] < si.n)
				w->rows[k] = kt_rows_at(&si, w->rows[k]);
	}
	for (k = 0; w->rows_kept && k < w->nrows && w->rows[k] == k; k++)
		;
	if (!w->rows_kept)
		k = w->nrows;
	/* Held events were read again as they were written: the same? */
	if (kt_hold_check(sw->holder, &err) == -1)
		kt_cli_die(&err);
	kt_cli_out_commit(w->out, kt_writer_end_index(w->w, m, nm,
	    k == w->nrows ? NULL : w->rows, w->nrows) == -1, &err);
	free(m);
	w->out = NULL;
	if (w->spool[0] != '\0') {
		/* Its file of our own, to where it goes. */
		struct kt_out *o = kt_cli_out_open(sw->o.split ? w->path :
		    sw->o.co.output, sw->o.co.level);

		kt_cli_out_commit(o, kt_file_copy(w->spool, 0, 0, o) == -1,
		    NULL);
		unlink(w->spool);
		kt_cli_drop_temp(w->spool);
		w->spool[0] = '\0';
	}
	w->committed = 1;
	kt_writer_free(w->w);
	w->w = NULL;
	win_drop_work(w);
	free(w->rows);
	w->rows = NULL;
	w->nrows = w->caprows = 0;
	w->rows_kept = 0;
}

/*
 * Free what deciding window w's events needs (once it is done), but
 * not its output or its row numbers.
 */
static void
win_drop_work(struct window *w)
{
	kt_store_free(w->fifo);
	w->fifo = NULL;
	kt_intern_free(w->launched);
	w->launched = NULL;
	kt_intern_free(w->later);
	kt_intern_free(w->gdevs);
	w->later = w->gdevs = NULL;
	free(w->moved);
	w->moved = NULL;
	w->capmoved = w->nmoved = 0;
	free(w->resolved);
	free(w->graph);
	free(w->flows);
	w->resolved = w->graph = NULL;
	w->flows = NULL;
	w->nresolved = w->nflows = 0;
	kt_intern_free(w->slots);
	w->slots = NULL;
	free(w->sstate);
	free(w->sstep);
	free(w->swait);
	w->sstate = NULL;
	w->sstep = w->swait = NULL;
	w->nslots = 0;
}

/*
 * A split window that is done but cannot be committed yet (the keys
 * after the events are not known, or metadata may still come): its file
 * is closed until then, so that a thousand windows need neither a
 * thousand descriptors nor their buffers.
 */
static void
win_suspend(struct window *w)
{
	win_drop_work(w);
	if (kt_out_suspend(w->out) == -1)
		kt_cli_out_commit(w->out, 1, NULL);
}

/* Decide the fate of held flow event r in window w. */
static void
decide_flow(struct window *w, struct kt_rec *r)
{
	struct flowstate *f;

	if ((size_t)r->aux >= w->nflows) {
		size_t n = (size_t)r->aux + 1 + w->nflows;

		if ((f = realloc(w->flows, n * sizeof(*f))) == NULL)
			kt_cli_nomem();
		memset(f + w->nflows, 0, (n - w->nflows) * sizeof(*f));
		w->flows = f;
		w->nflows = n;
	}
	f = &w->flows[r->aux];
	if (r->tag & TAG_IS_S)
		f->has_s = 1;
	else
		f->has_f = 1;
	set_state(r, f->has_s && f->has_f ? KEEP : PENDING);
}

/* Are both ends of held flow event r in window w? */
static int
flow_whole(const struct window *w, const struct kt_rec *r)
{
	return r->aux != NOFLOW && !(r->tag & TAG_SLOT) &&
	    (size_t)r->aux < w->nflows &&
	    w->flows[r->aux].has_s && w->flows[r->aux].has_f;
}

/* The fate of held record r, kept from before window w, once known. */
static int
waits_state(const struct window *w, const struct kt_rec *r)
{
	switch (w->sstate[r->aux]) {
	case S_KEPT:
		return KEEP;
	case S_DROPPED:
		return DROP;
	default:
		return PENDING;
	}
}

/* Count record r, kept from before window w, for the report. */
static void
count_pre(struct window *w, const struct kt_rec *r)
{
	if (r->kind == KT_STEP)
		w->pre_steps++;
	else if (r->kind == KT_FLOW)
		w->pre_flows++;
	else
		w->pre_launches++;
}

/*
 * The slot of GPU activity ev in window w: that of the launch call
 * before the window with its correlation, while its fate is open; else
 * NOSLOT.
 */
static uint32_t
gpu_slot(const struct window *w, const struct kt_event *ev)
{
	const char *p;
	size_t n;
	int64_t id;

	if (w->nslots == 0 || (ev->kind != KT_KERNEL &&
	    ev->kind != KT_GPU_MEMCPY && ev->kind != KT_GPU_MEMSET) ||
	    ev->f[KT_F_CORR].type == KT_NONE)
		return NOSLOT;
	kt_event_id_text(ev, KT_F_CORR, &p, &n);	/* by value */
	if ((id = kt_intern_find(w->slots, p, n)) < 0 ||
	    w->sstate[id] != S_OPEN)
		return NOSLOT;
	return (uint32_t)id;
}

/* Launch slot sl of window w is decided (kept or dropped); so its step. */
static void
slot_decide(struct window *w, uint32_t sl, int kept)
{
	uint32_t st;

	if (w->sstate[sl] != S_OPEN)
		return;
	w->sstate[sl] = kept ? S_KEPT : S_DROPPED;
	if ((st = w->sstep[sl]) == NOSLOT)
		return;
	w->swait[st]--;
	if (kept)
		w->sstate[st] = S_KEPT;
	else if (w->swait[st] == 0 && w->sstate[st] == S_OPEN)
		w->sstate[st] = S_DROPPED;
}

/* Write what the FIFO's head has decided. */
static void
release(struct sw *sw, struct window *w)
{
	struct kt_rec *q;
	size_t i, n;

	q = kt_store_recs(w->fifo, &n);
	for (i = 0; i < n; i++) {
		struct kt_rec *r = &q[i];

		if (state_of(r) == PENDING && (r->tag & TAG_WAITS))
			set_state(r, waits_state(w, r));
		else if (state_of(r) == PENDING && flow_whole(w, r))
			set_state(r, KEEP);
		if (state_of(r) == PENDING || state_of(r) == UNSURE)
			break;
		if (state_of(r) == KEEP) {
			emit(sw, w, w->fifo, i, INT64_MIN);
			if (r->tag & (TAG_WAITS | TAG_PRE))
				count_pre(w, r);
		} else if (r->aux != NOFLOW &&
		    !(r->tag & (TAG_SLOT | TAG_PRE)))
			w->dropped_flows++;
	}
	/* Their bytes go back to the store. */
	kt_store_shift(w->fifo, i);
}

/* The state of an event just come to window w (flows are marked). */
static int
decide(const struct sw *sw, struct window *w, struct kt_rec *r)
{
	/* With --clip, an X event may cross an end not yet certain. */
	if (r->ts > w->end || (sw->o.clip && r->ph == 'X' && !w->final &&
	    (w->end == NOEND || end_of(r) > w->end)))
		return UNSURE;
	if (r->aux != NOFLOW && !(r->tag & TAG_SLOT)) {
		decide_flow(w, r);
		return state_of(r);
	}
	return KEEP;
}

/*
 * Take record i of store st into window w: written at once when nothing
 * waits, else held in the window's FIFO.
 */
static void
take(struct sw *sw, struct window *w, const struct kt_store *st, size_t i)
{
	struct kt_rec probe = kt_store_recs((struct kt_store *)st, NULL)[i];
	struct kt_rec *r;
	struct kt_error err;
	int state;

	probe.tag &= TAG_IS_S | TAG_SEP;
	state = decide(sw, w, &probe);
	if (state == KEEP && kt_store_count(w->fifo) == 0) {
		emit(sw, w, st, i, INT64_MIN);
		return;
	}
	if ((r = kt_store_copy(w->fifo, st, i, &err)) == NULL)
		kt_cli_die(&err);
	r->aux = probe.aux;
	r->tag = probe.tag;
	set_state(r, state);
	if (r->aux != NOFLOW && state == KEEP)
		release(sw, w);
}

/* Take event ev into window w: written at once when nothing waits. */
static void
take_ev(struct sw *sw, struct window *w, const struct kt_event *ev,
    uint32_t flow)
{
	struct kt_rec probe, *r;
	uint32_t sl;
	int state, decided = 0;

	memset(&probe, 0, sizeof(probe));
	probe.ts = ev->ts;
	probe.dur = ev->dur;
	probe.flags = (uint8_t)ev->flags;
	probe.ph = ev->ph;
	probe.aux = flow;
	probe.tag = ev->ph == 's' ? TAG_IS_S : 0;
	state = decide(sw, w, &probe);
	/* The GPU work of a launch call before the window decides it. */
	if ((sl = gpu_slot(w, ev)) != NOSLOT && state == KEEP) {
		slot_decide(w, sl, 1);
		sl = NOSLOT;
		decided = 1;
	}
	if (state == KEEP && kt_store_count(w->fifo) == 0) {
		emit_ev(sw, w, ev, INT64_MIN, -1);
		return;
	}
	r = keep_ev(w->fifo, sw->rd, ev, flow);
	set_state(r, state);
	if (sl != NOSLOT) {
		r->aux = sl;
		r->tag |= TAG_SLOT;
	}
	if ((flow != NOFLOW && state == KEEP) || decided)
		release(sw, w);
}

/* The window's end is certain: decide everything it holds. */
static void
finalize(struct sw *sw, struct window *w)
{
	struct kt_rec *q;
	size_t i, n;

	w->final = 1;
	q = kt_store_recs(w->fifo, &n);
	for (i = 0; i < n; i++) {
		struct kt_rec *r = &q[i];

		if (state_of(r) != UNSURE)
			continue;
		if (r->ts > w->end) {
			set_state(r, DROP);
			if (r->tag & TAG_SLOT)
				slot_decide(w, r->aux, 0);
		} else if (r->tag & TAG_SLOT) {
			set_state(r, KEEP);
			slot_decide(w, r->aux, 1);
		} else if (r->aux != NOFLOW)
			decide_flow(w, r);
		else
			set_state(r, KEEP);
	}
	for (i = 0; i < n; i++) {
		if (state_of(&q[i]) != PENDING)
			continue;
		if (q[i].tag & TAG_WAITS)
			set_state(&q[i], waits_state(w, &q[i]) == KEEP ? KEEP :
			    DROP);
		else
			set_state(&q[i], flow_whole(w, &q[i]) ? KEEP : DROP);
	}
	release(sw, w);
	w->done = 1;
}

/* ------------------------------------------------------------------ */
/* Windows: where they start, how their end is found. */

/* Does a runtime call of this name put work on the GPU? */
static int
launches(const struct kt_event *ev)
{
	const char *p;
	size_t n;
	char name[128];

	p = kt_event_field(ev, KT_F_NAME, &n);
	if (p == NULL || n >= sizeof(name))
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	return strstr(name, "Launch") != NULL || strstr(name, "Memcpy") !=
	    NULL || strstr(name, "Memset") != NULL;
}

/* Is a runtime call a graph launch (many kernels, one correlation)? */
static int
graph_launch(const struct kt_event *ev)
{
	const char *p;
	size_t n;

	size_t i;

	p = kt_event_field(ev, KT_F_NAME, &n);
	for (i = 0; p != NULL && i + 5 <= n; i++)
		if (memcmp(p + i, "Graph", 5) == 0)
			return 1;
	return 0;
}

/* A new slot of window w, open; its id. */
static uint32_t
slot_new(struct window *w)
{
	size_t c = w->nslots + 1;
	uint8_t *a;
	uint32_t *b, *d;

	if ((a = realloc(w->sstate, c)) == NULL ||
	    (w->sstate = a, (b = realloc(w->sstep, c * sizeof(*b))) == NULL) ||
	    (w->sstep = b, (d = realloc(w->swait, c * sizeof(*d))) == NULL))
		kt_cli_nomem();
	w->swait = d;
	w->sstate[w->nslots] = S_OPEN;
	w->sstep[w->nslots] = NOSLOT;
	w->swait[w->nslots] = 0;
	return (uint32_t)w->nslots++;
}

/* Hold record i of st in window w's FIFO, waiting on slot sl. */
static void
take_waiting(struct window *w, const struct kt_store *st, size_t i,
    uint32_t sl)
{
	struct kt_rec *r;
	struct kt_error err;

	if ((r = kt_store_copy(w->fifo, st, i, &err)) == NULL)
		kt_cli_die(&err);
	r->aux = sl;
	r->tag = (uint8_t)((r->tag & TAG_IS_S) | TAG_SLOT | TAG_WAITS);
	set_state(r, PENDING);
}

/*
 * What window w keeps from before its start so that the views link its
 * GPU work as in the whole trace (kt-slice-window(1)): every launch
 * call whose GPU work is still to come or still running at the start
 * (a slot each; kept if that work is kept) and the ProfilerStep that
 * holds it, when these ended before the start (else they are open
 * there, and kept), and the flow start of its ac2g flow, kept when the
 * flow's end is in the window.  They wait in the FIFO, first.
 */
static void
pre_seed(struct sw *sw, struct window *w, int64_t start)
{
	struct kt_rec *pr, *sr;
	struct kt_event ev;
	const char *p;
	size_t i, k, np, ns, pn, first;
	int64_t id, bestts;
	uint32_t sl, *stepslot = NULL;

	pr = kt_store_recs(sw->pre_, &np);
	if (np == 0)
		return;
	if ((w->slots = kt_intern_new()) == NULL)
		kt_cli_nomem();
	sr = kt_store_recs(sw->presteps, &ns);
	if (ns > 0 && (stepslot = malloc(ns * sizeof(*stepslot))) == NULL)
		kt_cli_nomem();
	for (k = 0; k < ns; k++)
		stepslot[k] = NOSLOT;
	/* The launch calls: a slot each, and their steps'. */
	for (i = 0; i < np; i++) {
		int64_t gend = sw->pregend[pr[i].aux];

		if ((pr[i].tag & TAG_IS_S) || end_of(&pr[i]) >= start ||
		    pr[i].ts >= start || (gend != INT64_MIN && gend < start))
			continue;
		kt_store_view(sw->pre_, i, &ev);
		kt_event_id_text(&ev, KT_F_CORR, &p, &pn);
		first = kt_intern_count(w->slots);
		if ((id = kt_intern_put(w->slots, p, pn)) == -1)
			kt_cli_nomem();
		if ((size_t)id != first)
			continue;	/* one call a correlation */
		sl = slot_new(w);
		/* Its work seen and running at the start: kept. */
		if (gend != INT64_MIN)
			w->sstate[sl] = S_KEPT;
		/* The latest ProfilerStep whose CPU span holds its start. */
		bestts = INT64_MIN;
		for (k = 0; k < ns; k++)
			if (sr[k].ts <= pr[i].ts && pr[i].ts < end_of(&sr[k]) &&
			    sr[k].ts >= bestts) {
				bestts = sr[k].ts;
				w->sstep[sl] = (uint32_t)k;	/* for now */
			}
	}
	/* Slots for the steps, after the launches'. */
	first = w->nslots;
	for (sl = 0; sl < first; sl++) {
		if ((k = w->sstep[sl]) == NOSLOT)
			continue;
		if (end_of(&sr[k]) >= start) {
			/* Open at the start: kept anyway. */
			w->sstep[sl] = NOSLOT;
			continue;
		}
		if (stepslot[k] == NOSLOT)
			stepslot[k] = slot_new(w);
		w->sstep[sl] = stepslot[k];
		if (w->sstate[sl] == S_KEPT)
			w->sstate[stepslot[k]] = S_KEPT;
		else
			w->swait[stepslot[k]]++;
	}
	/* In the FIFO: the steps, then the calls and flows, in order. */
	for (k = 0; k < ns; k++)
		if (stepslot[k] != NOSLOT)
			take_waiting(w, sw->presteps, k, stepslot[k]);
	for (i = 0; i < kt_store_count(sw->pre_); i++) {
		pr = kt_store_recs(sw->pre_, NULL);
		if (pr[i].ts >= start || end_of(&pr[i]) >= start)
			continue;
		kt_store_view(sw->pre_, i, &ev);
		if (pr[i].tag & TAG_IS_S)
			kt_event_id_text(&ev, KT_F_ID, &p, &pn);
		else
			kt_event_id_text(&ev, KT_F_CORR, &p, &pn);
		if ((id = kt_intern_find(w->slots, p, pn)) < 0)
			continue;
		if (pr[i].tag & TAG_IS_S) {
			/* A flow start: kept with its end, as in a window. */
			struct kt_rec *r;
			struct kt_error err;

			if ((r = kt_store_copy(w->fifo, sw->pre_, i, &err)) ==
			    NULL)
				kt_cli_die(&err);
			r->aux = flow_key(sw, &ev);
			r->tag = TAG_IS_S | TAG_PRE;
			decide_flow(w, r);
			continue;
		}
		take_waiting(w, sw->pre_, i, (uint32_t)id);
	}
	free(stepslot);
	release(sw, w);
}

/* Start a window at now: seed it with what is open there. */
static struct window *
win_start(struct sw *sw, int64_t start, int64_t end, int final, int64_t a,
    int64_t b)
{
	struct window *w;
	struct kt_rec *op;
	size_t i, k, nop;

	if ((w = realloc(sw->wins, (sw->nwins + 1) * sizeof(*w))) == NULL)
		kt_cli_nomem();
	sw->wins = w;
	w = &sw->wins[sw->nwins++];
	memset(w, 0, sizeof(*w));
	w->start = start;
	w->end = end;
	w->final = final;
	w->step_a = a;
	w->step_b = b;
	w->cpu_end = NOEND;
	w->gpu_end = INT64_MIN;
	if ((w->launched = kt_intern_new()) == NULL)
		kt_cli_nomem();
	win_open(sw, w);
	/* A logged window's FIFO keeps the file's events as places. */
	if ((w->fifo = kt_store_new(0, sw->fields, w->defer ? sw->holder :
	    NULL)) == NULL)
		kt_cli_nomem();
	pre_seed(sw, w, start);
	/* Events open across the start, in file order. */
	op = kt_store_recs(sw->open_, &nop);
	for (i = 0; i < nop; i++) {
		if (end_of(&op[i]) < start || op[i].ph == 'C' ||
		    op[i].ts >= start || op[i].aux != NOFLOW)
			continue;
		take(sw, w, sw->open_, i);
	}
	/*
	 * The counter values in force at the start, carried to it, and
	 * those set at the start itself: they sort at the start.
	 */
	for (k = 0; k < kt_store_count(sw->lastc); k++) {
		struct kt_event ev;

		kt_store_view(sw->lastc, k, &ev);
		if (!(ev.flags & KT_EV_TS))
			continue;
		if (ev.ts >= start) {
			take_ev(sw, w, &ev, NOFLOW);
			continue;
		}
		emit_ev(sw, w, &ev, start, 0);
	}
	/* Then the events at the start that came before this one. */
	for (i = 0; i < nop; i++) {
		if (op[i].ph == 'C' || op[i].ts < start)
			continue;
		take(sw, w, sw->open_, i);
	}
	return w;
}

/*
 * A graph runs many kernels under one correlation, so no one kernel says
 * its work is done.  The rule (kt-slice-window(1)): a window's graph
 * launches are done once each has run GPU work, and on every device
 * where they ran, work launched after the window's last step has begun.
 * Until then the window's end stays uncertain.
 */
static void
graph_check(struct window *w)
{
	if (w->graphs_unseen == 0 && w->gdevs != NULL &&
	    w->nmoved == kt_intern_count(w->gdevs)) {
		w->outstanding -= w->graphs;
		w->graphs = 0;
	}
}

static void
graph_work(struct window *w, const struct kt_event *ev, int64_t id)
{
	const char *p;
	size_t n, before;
	int64_t d;

	if (!w->resolved[id]) {
		w->resolved[id] = 1;
		w->graphs_unseen--;
	}
	kt_event_id_text(ev, KT_F_PID, &p, &n);	/* by value */
	if (w->gdevs == NULL && (w->gdevs = kt_intern_new()) == NULL)
		kt_cli_nomem();
	before = kt_intern_count(w->gdevs);
	if ((d = kt_intern_put(w->gdevs, p, n)) == -1)
		kt_cli_nomem();
	if ((size_t)d == before && (size_t)d >= w->capmoved) {
		size_t c = w->capmoved ? w->capmoved * 2 : 8;
		uint8_t *t = realloc(w->moved, c);

		if (t == NULL)
			kt_cli_nomem();
		memset(t + w->capmoved, 0, c - w->capmoved);
		w->moved = t;
		w->capmoved = c;
	}
	graph_check(w);
}

/* GPU work launched after window w began on ev's device. */
static void
graph_next(struct window *w, const struct kt_event *ev)
{
	const char *p;
	size_t n;
	int64_t d;

	if (w->gdevs == NULL)
		return;
	kt_event_id_text(ev, KT_F_PID, &p, &n);	/* by value */
	if ((d = kt_intern_find(w->gdevs, p, n)) < 0 || w->moved[d])
		return;
	w->moved[d] = 1;
	w->nmoved++;
	graph_check(w);
}

/* Track window w's end: CPU end of its last step, GPU work launched. */
static void
track_end(const struct sw *sw, struct window *w, const struct kt_event *ev)
{
	int64_t end = ev->ts + ((ev->flags & KT_EV_DUR) ? ev->dur : 0);
	int64_t k, id;

	if (w->final)
		return;
	if (sw->o.kind == W_STEPS && ev->kind == KT_STEP &&
	    (k = kt_event_step(ev)) == w->step_b) {
		w->seen_b = 1;
		w->cpu_end = end;
	}
	if (sw->o.kind != W_STEPS)
		return;
	if (!sw->o.cpu_only && (ev->kind == KT_CUDA_RUNTIME ||
	    ev->kind == KT_CUDA_DRIVER) && ev->ts <= w->cpu_end &&
	    ev->f[KT_F_CORR].type != KT_NONE && launches(ev)) {
		size_t n, before = kt_intern_count(w->launched);
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((id = kt_intern_put(w->launched, p, n)) == -1)
			kt_cli_nomem();
		if ((size_t)id == before) {
			/*
			 * A new launch: its GPU work is still to come.  A graph
			 * runs many kernels under one correlation: it stays
			 * open (and the window's end uncertain) to the end.
			 */
			if ((size_t)id >= w->nresolved) {
				size_t c = w->nresolved ? w->nresolved * 2 : 64;
				uint8_t *t = realloc(w->resolved, c);

				if (t == NULL)
					kt_cli_nomem();
				memset(t + w->nresolved, 0, c - w->nresolved);
				w->resolved = t;
				if ((t = realloc(w->graph, c)) == NULL)
					kt_cli_nomem();
				memset(t + w->nresolved, 0, c - w->nresolved);
				w->graph = t;
				w->nresolved = c;
			}
			if ((w->graph[id] = graph_launch(ev)) != 0) {
				w->graphs++;
				w->graphs_unseen++;
			}
			w->outstanding++;
		}
	} else if (w->graphs > 0 && w->seen_b && ev->ts > w->cpu_end &&
	    (ev->kind == KT_CUDA_RUNTIME || ev->kind == KT_CUDA_DRIVER) &&
	    ev->f[KT_F_CORR].type != KT_NONE && launches(ev)) {
		/* Work launched after the window: the next step's. */
		size_t n;
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((w->later == NULL && (w->later = kt_intern_new()) ==
		    NULL) || kt_intern_put(w->later, p, n) == -1)
			kt_cli_nomem();
	}
	if (!sw->o.cpu_only && (ev->kind == KT_KERNEL ||
	    ev->kind == KT_GPU_MEMCPY || ev->kind == KT_GPU_MEMSET) &&
	    ev->f[KT_F_CORR].type != KT_NONE) {
		size_t n;
		const char *p = kt_event_field(ev, KT_F_CORR, &n);

		if ((id = kt_intern_find(w->launched, p, n)) >= 0) {
			if (!w->resolved[id] && !w->graph[id]) {
				w->resolved[id] = 1;
				w->outstanding--;
			} else if (w->graph[id] && w->graphs > 0)
				graph_work(w, ev, id);
			if (end > w->gpu_end)
				w->gpu_end = end;
		} else if (w->later != NULL &&
		    kt_intern_find(w->later, p, n) >= 0)
			graph_next(w, ev);
	}
	if (!sw->o.cpu_only && ev->kind == KT_GPU_USER_ANNOTATION &&
	    (k = kt_event_step(ev)) >= w->step_a && k <= w->step_b &&
	    end > w->gpu_end)
		w->gpu_end = end;
	if (w->seen_b)
		w->end = w->cpu_end > w->gpu_end ? w->cpu_end : w->gpu_end;
}

/* ------------------------------------------------------------------ */
/* The driver. */

/* May held event r still overlap a window's start at now? */
static int
still_open(const struct kt_rec *r, void *ctx)
{
	int64_t now = *(const int64_t *)ctx;

	return !(end_of(r) < now && r->ts < now);
}

/* Keep the open set to what may still overlap a window's start. */
static void
evict(struct sw *sw)
{
	kt_store_keep(sw->open_, still_open, &sw->now);
}

/* Does an event held open overlap [s, e]? */
static int
window_open_at(const struct sw *sw, int64_t s, int64_t e)
{
	const struct kt_rec *op;
	size_t i, n;

	op = kt_store_recs(sw->open_, &n);
	for (i = 0; i < n; i++)
		if (end_of(&op[i]) >= s && op[i].ts <= e && op[i].ph != 'C')
			return 1;
	return 0;
}

/* Will a window still start later? */
static int
more_windows(const struct sw *sw)
{
	if (sw->o.split)
		return 1;
	return sw->nwins == 0;
}

/* A metadata event: kept for the windows to come, written to the open. */
static void
feed_meta(struct sw *sw, const struct kt_event *ev)
{
	size_t i;

	keep_ev(sw->metas_ev, NULL, ev, NOFLOW);
	/* Every window has every metadata event, late ones too. */
	for (i = 0; i < sw->nwins; i++)
		if (!sw->wins[i].committed) {
			emit_ev(sw, &sw->wins[i], ev, INT64_MIN, -1);
			if (sw->wins[i].done && sw->o.split &&
			    kt_out_suspend(sw->wins[i].out) == -1)
				kt_cli_out_commit(sw->wins[i].out, 1, NULL);
		}
}

/* What is known of the trace: its time span and its steps. */
static void
note_times(struct sw *sw, const struct kt_event *ev)
{
	int64_t k;

	if (ev->ts > sw->now)
		sw->now = ev->ts;
	if (sw->first_ts == NOEND)
		sw->first_ts = ev->ts;
	if (ev->ts > sw->last_ts)
		sw->last_ts = ev->ts;
	if (ev->kind == KT_STEP && (k = kt_event_step(ev)) >= 0) {
		if (sw->first_step < 0 || k < sw->first_step)
			sw->first_step = k;
		if (k > sw->last_step)
			sw->last_step = k;
	}
}

/*
 * Close the windows whose end has passed.  A split window's output is
 * committed at once when nothing read later can change it (see run):
 * then the outputs open at a time are those of the windows open then.
 */
static void
close_ended(struct sw *sw)
{
	size_t i;

	for (i = 0; i < sw->nwins; i++) {
		struct window *w = &sw->wins[i];

		if (!w->done && w->end != NOEND && sw->now > w->end &&
		    (w->final || (w->seen_b && w->outstanding == 0))) {
			finalize(sw, w);
			if (sw->o.split && sw->commit_early)
				win_commit(sw, w);
			else if (sw->o.split)
				win_suspend(w);
		}
	}
}

/* Does the annotation ev match the K-th time (--annotation, --nth)? */
static int
nth_match(struct sw *sw, const struct kt_event *ev)
{
	size_t n;
	const char *p = kt_event_field(ev, KT_F_NAME, &n);
	char name[4096];

	if (p == NULL || n < 2 || n - 2 >= sizeof(name))
		return 0;
	memcpy(name, p + 1, n - 2);
	name[n - 2] = '\0';
	return regexec(&sw->o.re, name, 0, NULL, 0) == 0 &&
	    ++sw->nmatches == sw->o.nth;
}

/* Start a window at ev when it is where one starts. */
static void
maybe_start(struct sw *sw, const struct kt_event *ev)
{
	const struct opts *o = &sw->o;
	int64_t k;

	if (o->kind == W_TIME && sw->nwins == 0) {
		int64_t s = o->absolute ? o->from : sw->first_ts + o->from;
		int64_t e = !o->has_to ? NOEND : o->absolute ? o->to :
		    sw->first_ts + o->to;

		/* Events open across the start seed it, even when none
		 * begins inside it. */
		if (ev->ts >= s && (ev->ts <= e || window_open_at(sw, s, e)))
			win_start(sw, s, e, 1, 0, 0);
	} else if (o->kind == W_STEPS && ev->kind == KT_STEP &&
	    (k = kt_event_step(ev)) >= 0) {
		if (!o->split && sw->nwins == 0 && k >= o->step_a &&
		    k <= o->step_b)
			win_start(sw, ev->ts, NOEND, 0, k, o->step_b);
		else if (o->split && (sw->nwins == 0 ||
		    k > sw->wins[sw->nwins - 1].step_b))
			win_start(sw, ev->ts, NOEND, 0, k, k + o->split - 1);
	} else if (o->kind == W_ANNOTATION && sw->nwins == 0 &&
	    (ev->kind == KT_USER_ANNOTATION ||
	    ev->kind == KT_GPU_USER_ANNOTATION) && nth_match(sw, ev))
		win_start(sw, ev->ts, ev->ts + ((ev->flags & KT_EV_DUR) ?
		    ev->dur : 0), 1, 0, 0);
}

/*
 * At the end of the input, a time window that no event began in or
 * after: it starts now when an event held open overlaps it (one that
 * began before it and runs into it, the last events of the trace).
 */
static void
start_at_end(struct sw *sw)
{
	const struct opts *o = &sw->o;
	int64_t s, e;

	if (o->kind != W_TIME || sw->nwins > 0 || sw->first_ts == NOEND)
		return;
	s = o->absolute ? o->from : sw->first_ts + o->from;
	e = !o->has_to ? NOEND : o->absolute ? o->to : sw->first_ts + o->to;
	if (window_open_at(sw, s, e))
		win_start(sw, s, e, 1, 0, 0);
}

/* Remember the last value of ev's counter track, for a later start. */
static void
remember_counter(struct sw *sw, const struct kt_event *ev)
{
	struct kt_buf key = KT_BUF_INIT;
	struct kt_error err;
	const char *p;
	size_t n;
	int64_t t;

	kt_event_thread_key(ev, &key);
	p = kt_event_field(ev, KT_F_NAME, &n);
	kt_buf_add(&key, p ? p : "", n);
	if ((t = kt_intern_put(sw->tracks, key.p, key.n)) == -1)
		kt_cli_nomem();
	kt_buf_free(&key);
	/* A new track is the next record; a known one's is replaced. */
	if ((size_t)t == kt_store_count(sw->lastc))
		keep_ev(sw->lastc, NULL, ev, NOFLOW);
	else if (kt_store_set(sw->lastc, (size_t)t, NULL, ev, &err) == NULL)
		kt_cli_die(&err);
}

/* May held launch call (or flow start) r still be kept by a window? */
static int
pre_live(const struct kt_rec *r, void *ctx)
{
	const struct sw *sw = ctx;
	int64_t g = sw->pregend[r->aux];

	return g == INT64_MIN || g >= sw->now;
}

/* May ProfilerStep r still hold one of them (from ctx on)? */
static int
step_live(const struct kt_rec *r, void *ctx)
{
	return end_of(r) >= *(const int64_t *)ctx;
}

/*
 * Forget the launch calls whose GPU work has ended (no window to come
 * keeps it), and the steps that hold none of the rest; now and then
 * make the correlations' ids again, for those left.
 */
static void
pre_clean(struct sw *sw)
{
	struct kt_intern *in;
	struct kt_event ev;
	struct kt_rec *pr;
	int64_t *g, from = sw->now;
	const char *p;
	size_t i, n, pn;
	int64_t id;

	kt_store_keep(sw->pre_, pre_live, sw);
	pr = kt_store_recs(sw->pre_, &n);
	for (i = 0; i < n; i++)
		if (pr[i].ts < from)
			from = pr[i].ts;
	kt_store_keep(sw->presteps, step_live, &from);
	if (kt_intern_count(sw->precorr) > 2 * n + 1024) {
		if ((in = kt_intern_new()) == NULL ||
		    (g = malloc((n + 1) * sizeof(*g))) == NULL)
			kt_cli_nomem();
		for (i = 0; i < n; i++) {
			kt_store_view(sw->pre_, i, &ev);
			kt_event_id_text(&ev, (pr[i].tag & TAG_IS_S) ? KT_F_ID :
			    KT_F_CORR, &p, &pn);
			if ((id = kt_intern_put(in, p, pn)) == -1)
				kt_cli_nomem();
			g[id] = sw->pregend[pr[i].aux];
			pr[i].aux = (uint32_t)id;
		}
		kt_intern_free(sw->precorr);
		free(sw->pregend);
		sw->precorr = in;
		sw->pregend = g;
		sw->cappregend = n + 1;
	}
	sw->pre_next = 2 * n + 256;
}

/* Remember the launch calls, their flows and steps, for a window to come. */
static void
remember_launch(struct sw *sw, const struct kt_event *ev)
{
	const char *p;
	size_t n, before;
	int64_t id, end;

	if (ev->kind == KT_STEP && ev->ph == 'X') {
		keep_ev(sw->presteps, NULL, ev, NOFLOW);
		return;
	}
	if ((ev->kind == KT_CUDA_RUNTIME || ev->kind == KT_CUDA_DRIVER) &&
	    ev->f[KT_F_CORR].type != KT_NONE && launches(ev)) {
		kt_event_id_text(ev, KT_F_CORR, &p, &n);	/* by value */
		before = kt_intern_count(sw->precorr);
		if ((id = kt_intern_put(sw->precorr, p, n)) == -1)
			kt_cli_nomem();
		if ((size_t)id >= sw->cappregend) {
			size_t c = sw->cappregend ? 2 * sw->cappregend : 1024;
			int64_t *t = realloc(sw->pregend, c * sizeof(*t));

			if (t == NULL)
				kt_cli_nomem();
			sw->pregend = t;
			sw->cappregend = c;
		}
		if ((size_t)id == before)
			sw->pregend[id] = INT64_MIN;
		keep_ev(sw->pre_, NULL, ev, (uint32_t)id);
		if (kt_store_count(sw->pre_) >= sw->pre_next)
			pre_clean(sw);
		return;
	}
	/* An ac2g flow (cat "async" in old traces), as lib/model has it. */
	if (ev->kind == KT_FLOW && ev->ph == 's' &&
	    ev->f[KT_F_ID].type != KT_NONE &&
	    (kt_event_field_is(ev, KT_F_CAT, "ac2g") ||
	    kt_event_field_is(ev, KT_F_CAT, "async"))) {
		kt_event_id_text(ev, KT_F_ID, &p, &n);
		if ((id = kt_intern_find(sw->precorr, p, n)) >= 0)
			keep_ev(sw->pre_, NULL, ev, (uint32_t)id);
		return;
	}
	if ((ev->kind == KT_KERNEL || ev->kind == KT_GPU_MEMCPY ||
	    ev->kind == KT_GPU_MEMSET) && ev->f[KT_F_CORR].type != KT_NONE) {
		kt_event_id_text(ev, KT_F_CORR, &p, &n);
		if ((id = kt_intern_find(sw->precorr, p, n)) < 0)
			return;
		end = ev->ts + ((ev->flags & KT_EV_DUR) && ev->dur > 0 ?
		    ev->dur : 0);
		if (end > sw->pregend[id])
			sw->pregend[id] = end;
	}
}

/* One event of the sorted stream. */
static void
feed(struct sw *sw, const struct kt_event *ev)
{
	size_t i;

	if (sw->o.has_rank) {
		/* A flow of a merged trace has its pid's rank. */
		int64_t r = kt_pidrank_of(sw->pidrank, ev);

		if (r == -2)
			kt_cli_nomem();
		if (r >= 0 && !kt_ranklist_has(&sw->o.ranks, r))
			return;
	}
	if (ev->ph == 'M') {
		feed_meta(sw, ev);
		return;
	}
	if (!(ev->flags & KT_EV_TS))
		return;
	note_times(sw, ev);
	close_ended(sw);
	maybe_start(sw, ev);
	/* Only now, after a window may have started here, forget what ended. */
	if (kt_store_count(sw->open_) > 64 && more_windows(sw))
		evict(sw);
	/* Feed the open windows. */
	for (i = 0; i < sw->nwins; i++) {
		struct window *w = &sw->wins[i];

		if (w->done || ev->ts < w->start)
			continue;
		track_end(sw, w, ev);
		if (w->final && ev->ts > w->end)
			continue;
		take_ev(sw, w, ev, ev->kind == KT_FLOW ? flow_key(sw, ev) :
		    NOFLOW);
	}
	/* Remember what a later window may need at its start. */
	if (more_windows(sw)) {
		remember_launch(sw, ev);
		if (ev->ph == 'C')
			remember_counter(sw, ev);
		else
			keep_ev(sw->open_, NULL, ev, ev->kind == KT_FLOW ?
			    flow_key(sw, ev) : NOFLOW);
	}
}

/* Has every window ended, with no more to come? */
static int
all_done(const struct sw *sw)
{
	size_t i;

	if (more_windows(sw))
		return 0;
	for (i = 0; i < sw->nwins; i++)
		if (!sw->wins[i].done)
			return 0;
	return 1;
}

/* The sort key of an event: metadata, then no time, then by time. */
static uint64_t
order_key(const struct kt_event *ev)
{
	if (ev->ph == 'M')
		return 0;
	if (!(ev->flags & KT_EV_TS))
		return 1;
	return (uint64_t)ev->ts ^ ((uint64_t)1 << 63);
}

/* What feeding ev before the window's start needs (see struct held). */
static uint32_t
light_class(const struct kt_event *ev)
{
	const char *p;
	size_t n, i;
	uint64_t v;

	if (ev->ph == 'M' || ev->ph == 'C' || !(ev->flags & KT_EV_TS) ||
	    ev->kind == KT_STEP || ev->kind == KT_CUDA_RUNTIME ||
	    ev->kind == KT_CUDA_DRIVER)
		return CLS_FULL;
	if (ev->kind == KT_FLOW)
		return ev->ph == 's' && ev->f[KT_F_ID].type != KT_NONE &&
		    (kt_event_field_is(ev, KT_F_CAT, "ac2g") ||
		    kt_event_field_is(ev, KT_F_CAT, "async")) ? CLS_FULL :
		    CLS_SKIP;
	if ((ev->kind != KT_KERNEL && ev->kind != KT_GPU_MEMCPY &&
	    ev->kind != KT_GPU_MEMSET) || ev->f[KT_F_CORR].type == KT_NONE)
		return CLS_SKIP;
	/* The correlation as remember_launch has it, by value. */
	kt_event_id_text(ev, KT_F_CORR, &p, &n);
	if (n == 0 || n > 10 || (p[0] == '0' && n > 1))
		return CLS_FULL;
	for (i = 0, v = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return CLS_FULL;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return v <= CLS_MAXCORR ? (uint32_t)v : CLS_FULL;
}

/* Hold ev, just read, in hd (see struct held). */
static void
hold(struct sw *sw, struct held *hd, const struct kt_event *ev)
{
	struct kt_error err;
	uint64_t off;
	int64_t d;
	int rc;

	if (hd->n == hd->cap) {
		size_t c = hd->cap ? 2 * hd->cap : 4096;
		uint64_t *o;
		uint32_t *r, *u;
		struct kt_pair *k;

		if ((o = realloc(hd->off, c * sizeof(*o))) == NULL ||
		    (hd->off = o, (r = realloc(hd->row, c * sizeof(*r))) ==
		    NULL) || (hd->row = r, (u = realloc(hd->dur, c *
		    sizeof(*u))) == NULL) || (hd->dur = u, (k =
		    realloc(hd->key, c * sizeof(*k))) == NULL))
			kt_cli_nomem();
		hd->key = k;
		hd->cap = c;
	}
	if (ev->index >= UINT32_MAX) {
		kt_cli_warn("%s: more than %lu events to sort", sw->name,
		    (unsigned long)UINT32_MAX);
		kt_cli_die(NULL);
	}
	if (kt_store_count(hd->first) < PROBE_EVENTS)
		rc = 2;
	else if (sw->deferred) {
		/* Its place in the decompressed stream, unless repaired. */
		uint64_t end = kt_reader_offset(sw->rd);

		rc = !(ev->flags & (KT_EV_REPAIRED | KT_EV_PATCHED)) &&
		    ev->len > 0 && end >= ev->len;
		off = rc ? end - ev->len : 0;
	} else if ((rc = kt_hold_where(sw->holder, ev, &off, &err)) ==
	    -1)
		kt_cli_die(&err);
	if (rc == 2) {
		if (kt_store_add(hd->first, sw->rd, ev, &err) == NULL)
			kt_cli_die(&err);
		hd->off[hd->n] = IX_FIRST | (kt_store_count(hd->first) - 1);
	} else if (rc == 1 && ev->len < ((size_t)1 << IX_LENBITS) &&
	    off < ((uint64_t)1 << (62 - IX_LENBITS)))
		hd->off[hd->n] = off << IX_LENBITS | ev->len;
	else {
		if (kt_store_add(hd->copies, NULL, ev, &err) == NULL)
			kt_cli_die(&err);
		hd->off[hd->n] = IX_COPY | (kt_store_count(hd->copies) - 1);
	}
	hd->row[hd->n] = (uint32_t)ev->index;
	hd->key[hd->n].key = order_key(ev);
	hd->key[hd->n].val = hd->n | (uint64_t)light_class(ev) << 32;
	d = (ev->flags & KT_EV_DUR) && ev->dur > 0 ? ev->dur : 0;
	hd->dur[hd->n] = d < DUR_LONG ? (uint32_t)d : DUR_LONG;
	if (ev->ph != 'M' && (ev->flags & KT_EV_TS)) {
		const struct opts *o = &sw->o;
		int64_t k;

		if (ev->ts < hd->min_ts)
			hd->min_ts = ev->ts;
		if (ev->kind == KT_STEP && (k = kt_event_step(ev)) >= 0 &&
		    k >= o->step_a && k <= o->step_b && ev->ts <
		    hd->min_step_ts)
			hd->min_step_ts = ev->ts;
	}
	hd->n++;
}

/* Held event i of hd (its position in file order), read and scanned. */
static void
held_event(struct sw *sw, const struct held *hd, size_t i,
    struct kt_event *ev)
{
	struct kt_error err;
	uint64_t o = hd->off[i];
	size_t len = (size_t)(o & (((uint64_t)1 << IX_LENBITS) - 1));
	const char *raw;

	if (o & IX_FIRST) {
		if (kt_store_load(hd->first, (size_t)(o & IX_POS), ev, &err) ==
		    -1)
			kt_cli_die(&err);
		return;
	}
	if (o & IX_COPY) {
		if (kt_store_event(hd->copies, (size_t)(o & IX_POS), ev,
		    &err) == -1)
			kt_cli_die(&err);
		return;
	}
	memset(ev, 0, sizeof(*ev));
	if ((raw = kt_hold_bytes(sw->holder, o >> IX_LENBITS, len,
	    &err)) == NULL || kt_event_scan(raw, len, ev, &err) == -1)
		kt_cli_die(&err);
	ev->index = hd->row[i];
}

/* Free what hd holds. */
static void
held_free(struct held *hd)
{
	free(hd->off);
	free(hd->row);
	free(hd->dur);
	free(hd->key);
	free(hd->need);
	free(hd->batch);
	kt_store_free(hd->first);
	kt_store_free(hd->copies);
}

/* Forget the events held. */
static void
held_clear(struct held *hd)
{
	hd->n = 0;
	kt_store_shift(hd->first, kt_store_count(hd->first));
	kt_store_shift(hd->copies, kt_store_count(hd->copies));
}

/* Feed the events held, in file order, and forget them. */
static void
feed_held(struct sw *sw, struct held *hd)
{
	size_t i;

	for (i = 0; i < hd->n; i++) {
		struct kt_event e;

		held_event(sw, hd, i, &e);
		feed(sw, &e);
	}
	held_clear(hd);
}

/*
 * Where the one window starts, when that is known before the events are
 * fed (INT64_MIN when not): the earliest ProfilerStep of --steps A-B, or
 * --from (after the first time, unless absolute).  A split or an
 * annotation's window, or --rank's (a rank's events are known only as
 * they are fed), is not.
 */
static int64_t
known_start(const struct sw *sw, const struct held *hd)
{
	const struct opts *o = &sw->o;

	if (o->split || o->has_rank || hd->min_ts == INT64_MAX)
		return INT64_MIN;
	if (o->kind == W_STEPS)
		return hd->min_step_ts == INT64_MAX ? INT64_MIN :
		    hd->min_step_ts;
	if (o->kind != W_TIME)
		return INT64_MIN;
	if (o->absolute)
		return o->from;
	if ((o->from > 0 && hd->min_ts > INT64_MAX - o->from) ||
	    (o->from < 0 && hd->min_ts < INT64_MIN + 1 - o->from))
		return INT64_MIN;
	return hd->min_ts + o->from;
}

/*
 * Held event ev, before the window's start (see struct held): a GPU
 * activity of correlation corr, ending at end, as remember_launch has it.
 */
static void
feed_light(struct sw *sw, uint32_t corr, int64_t ts, int64_t end)
{
	char t[16];
	int64_t id;
	size_t n = 0;
	uint32_t v = corr;

	if (ts > sw->now)
		sw->now = ts;
	if (ts > sw->last_ts)
		sw->last_ts = ts;
	if (corr >= CLS_SKIP)
		return;
	do
		t[sizeof(t) - 1 - n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if ((id = kt_intern_find(sw->precorr, t + sizeof(t) - n, n)) >= 0 &&
	    end > sw->pregend[id])
		sw->pregend[id] = end;
}

/*
 * Is sorted entry i of hd fed light (feed_light), before a window that
 * starts at start (INT64_MIN: unknown)?  Its class and time then.
 */
static int
is_light(const struct held *hd, size_t i, int64_t start, uint32_t *cls,
    int64_t *ts)
{
	uint64_t v = hd->key[i].val;
	size_t j = (size_t)(v & UINT32_MAX);

	*cls = (uint32_t)(v >> 32);
	if (*cls == CLS_FULL || start == INT64_MIN)
		return 0;
	*ts = (int64_t)(hd->key[i].key ^ ((uint64_t)1 << 63));
	return *ts < start && hd->dur[j] != DUR_LONG &&
	    *ts + (int64_t)hd->dur[j] < start;
}

/* Does sorted entry i's event have its bytes only in the input? */
static int
in_input(const struct held *hd, size_t i)
{
	return (hd->off[hd->key[i].val & UINT32_MAX] & (IX_FIRST | IX_COPY)) ==
	    0;
}

/*
 * Deferred: decompress the input again and keep the bytes of the events
 * fed from sorted entry from on that need them, at most BATCH_BYTES of
 * them (at least one event), in hd->need.
 */
static void
fetch(struct sw *sw, struct held *hd, size_t from, int64_t start)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_error err;
	struct kt_pair *want;
	struct stat st;
	char *chunk;
	size_t i, k, m = 0, total = 0;
	size_t batch = (size_t)debug_size("KT_DEBUG_BATCH", BATCH_BYTES);
	uint64_t pos = 0, lenmask = ((uint64_t)1 << IX_LENBITS) - 1;
	int64_t ts, got;
	uint32_t cls;

	for (i = from; i < hd->n; i++) {
		size_t len;

		if (is_light(hd, i, start, &cls, &ts) || !in_input(hd, i))
			continue;
		len = (size_t)(hd->off[hd->key[i].val & UINT32_MAX] & lenmask);
		if (m > 0 && total + len > batch)
			break;
		total += len;
		m++;
	}
	free(hd->need);
	if ((hd->need = malloc((m + 1) * sizeof(*hd->need))) == NULL ||
	    (want = malloc((m + 1) * sizeof(*want))) == NULL)
		kt_cli_nomem();
	for (i = from, k = 0; k < m; i++) {
		if (is_light(hd, i, start, &cls, &ts) || !in_input(hd, i))
			continue;
		hd->need[k].i = i;
		want[k].key = hd->off[hd->key[i].val & UINT32_MAX] >> IX_LENBITS;
		want[k].val = k;
		k++;
	}
	if (kt_sort_pairs(want, m) == -1)
		kt_cli_nomem();
	/* In the batch in the order of the input. */
	for (k = 0, total = 0; k < m; k++) {
		size_t n = (size_t)(hd->off[hd->key[hd->need[want[k].val].i].val &
		    UINT32_MAX] & lenmask);

		hd->need[want[k].val].at = total;
		total += n;
	}
	free(hd->batch);
	if ((hd->batch = malloc(total + 1)) == NULL ||
	    (chunk = malloc((size_t)1 << 20)) == NULL)
		kt_cli_nomem();
	/* The same input, not changed since it was read. */
	if (stat(sw->path, &st) == -1 || st.st_size != sw->st.st_size ||
	    st.st_mtime != sw->st.st_mtime) {
		kt_cli_warn("%s: the file changed while it was read",
		    sw->name);
		kt_cli_die(NULL);
	}
	rd = kt_cli_open_one(sw->path, sw->name, sw->o.co.member,
	    sw->o.co.rflags, &src);
	for (k = 0; k < m; ) {
		if ((got = kt_reader_read(rd, chunk, (size_t)1 << 20, &err)) ==
		    -1)
			kt_cli_die(&err);
		if (got == 0) {
			kt_cli_warn("%s: the file changed while it was read "
			    "(it ended early)", sw->name);
			kt_cli_die(NULL);
		}
		/* Copy what this chunk holds of the events wanted. */
		while (k < m) {
			struct need *nd = &hd->need[want[k].val];
			uint64_t a = want[k].key, o = hd->off[hd->key[nd->i].val &
			    UINT32_MAX], b = a + (o & lenmask);
			uint64_t lo = a > pos ? a : pos;
			uint64_t hi = b < pos + (uint64_t)got ? b : pos +
			    (uint64_t)got;

			if (lo >= pos + (uint64_t)got)
				break;
			memcpy(hd->batch + nd->at + (lo - a), chunk + (lo - pos),
			    (size_t)(hi - lo));
			if (hi < b)
				break;	/* the rest is in the next chunk */
			k++;
		}
		pos += (uint64_t)got;
	}
	free(chunk);
	free(want);
	kt_reader_free(rd);
	kt_source_close(src);
	hd->c = 0;
	hd->m = m;
}

/* Deferred: sorted entry i's event (the next one in hd->need), scanned. */
static void
deferred_event(struct sw *sw, struct held *hd, size_t i, int64_t start,
    struct kt_event *ev)
{
	struct kt_error err;
	size_t j = (size_t)(hd->key[i].val & UINT32_MAX);
	size_t len = (size_t)(hd->off[j] & (((uint64_t)1 << IX_LENBITS) - 1));
	const char *raw;

	if (hd->c == hd->m)
		fetch(sw, hd, i, start);
	if (hd->c == hd->m || hd->need[hd->c].i != i) {
		kt_cli_warn("internal error: a deferred event out of turn");
		kt_cli_die(NULL);
	}
	raw = hd->batch + hd->need[hd->c++].at;
	memset(ev, 0, sizeof(*ev));
	if (len < 2 || raw[0] != '{' || raw[len - 1] != '}') {
		kt_cli_warn("%s: the file changed while it was read (an event "
		    "is not where it was)", sw->name);
		kt_cli_die(NULL);
	}
	if (kt_event_scan(raw, len, ev, &err) == -1)
		kt_cli_die(&err);
	ev->index = hd->row[j];
}

/* Feed the events held, sorted by time (stably) unless sorted. */
static void
feed_sorted(struct sw *sw, struct held *hd, int sorted)
{
	struct kt_event ev;
	int64_t start = known_start(sw, hd), ts;
	uint32_t cls;
	size_t i;

	if (!sorted && kt_sort_pairs(hd->key, hd->n) == -1)
		kt_cli_nomem();
	if (start != INT64_MIN && sw->first_ts == NOEND)
		sw->first_ts = hd->min_ts;	/* as the first fed sets it */
	for (i = 0; i < hd->n && !all_done(sw); i++) {
		size_t j = (size_t)(hd->key[i].val & UINT32_MAX);

		if (is_light(hd, i, start, &cls, &ts)) {
			feed_light(sw, cls, ts, ts + hd->dur[j]);
			continue;
		}
		if (sw->deferred && in_input(hd, i))
			deferred_event(sw, hd, i, start, &ev);
		else
			held_event(sw, hd, j, &ev);
		feed(sw, &ev);
	}
}

/*
 * Read the trace: stream it when it is sorted; else hold it all, sort
 * it (stably, as kt normalize does) and stream that.
 *
 * A split window's output is committed as soon as the window is done
 * (commit_early) when nothing read later can change it.  The keys after
 * traceEvents, ktSourceIndex among them (which maps the row numbers),
 * must be known already: they are for a plain file (kt_reader_tail);
 * for any other input (standard input, gzip, an archive member) they
 * come only at the end, and every window's output stays open to the
 * end.  And no metadata event may come later: it would belong in every
 * window.  Streaming, the metadata came first (as kt normalize writes
 * it): that is when a single window stops reading early, so a late one
 * would miss --steps K-K's output too.  Held: sorted, metadata goes
 * first; held in file order (a short sorted input), it came first.
 */
static int
run(struct sw *sw)
{
	struct kt_event evbuf;
	const struct kt_event *e;
	struct kt_error err;
	struct held hd;
	struct kt_ahead *ah = NULL;
	uint64_t last = 0;
	int rc, sorted = 1, early = 0, seen_event = 0, meta_first = 0;

	/* Held events are fed later: an index entry each (struct held). */
	memset(&hd, 0, sizeof(hd));
	hd.min_ts = hd.min_step_ts = INT64_MAX;
	if ((hd.first = kt_store_new(0, sw->fields | FEED_FIELDS |
	    (sw->o.has_rank ? KT_FBIT(KT_F_RANK) : 0), sw->holder)) == NULL ||
	    (hd.copies = kt_store_new(0, 0, NULL)) == NULL)
		kt_cli_nomem();
	/*
	 * A plain file, its end known, is read in pieces on every CPU
	 * (kt_ahead; not with KT_THREADS=1): nothing below asks the reader
	 * where it stands.
	 */
	if (sw->tee == -1 && !sw->deferred && sw->tail_known &&
	    kt_hold_plain(sw->holder) && kt_cli_threads())
		ah = kt_ahead_start(sw->rd, kt_cli_progress);
	while ((rc = kt_ahead_get(ah, sw->rd, &evbuf, &e, &err)) == 1) {
		uint64_t key = order_key(e);

		/* Metadata may come anywhere; times must not go back. */
		if (e->ph != 'M') {
			if (key < last)
				sorted = 0;
			last = key > last ? key : last;
			seen_event = 1;
		} else if (!seen_event)
			meta_first = 1;
		sw->nseen++;
		if ((sw->nseen & 0xffff) == 0 && ah == NULL)
			kt_cli_progress(sw->rd);
		if (sorted && sw->nseen > PROBE_EVENTS && !sw->hold_all) {
			sw->streaming = 1;
			sw->commit_early = sw->tail_known && meta_first;
			feed_held(sw, &hd);
			feed(sw, e);
			/*
			 * Stop early only when the metadata came first (as kt
			 * normalize writes it): else some may still come.
			 */
			if (meta_first && all_done(sw)) {
				early = 1;
				break;
			}
			continue;
		}
		if (!sorted && sw->tee != -1) {
			/*
			 * Out of order, read from a pipe: read the rest into
			 * its copy, and from there again (main).
			 */
			kt_ahead_stop(ah);
			held_free(&hd);
			return 3;
		}
		if (!sorted && !sw->deferred && !kt_hold_plain(sw->holder) &&
		    kt_reader_form(sw->rd) != KT_FORM_TSV) {
			/*
			 * Out of order, and compressed or archived: held, it
			 * would be copied whole into memory.  Read it again,
			 * held as an index (deferred).
			 */
			kt_ahead_stop(ah);
			held_free(&hd);
			return 2;
		}
		if (!sorted && sw->streaming) {
			/*
			 * Out of order after the events streamed: cut the
			 * windows again from the input held and sorted.
			 */
			kt_ahead_stop(ah);
			held_free(&hd);
			return 1;
		}
		hold(sw, &hd, e);
	}
	kt_ahead_stop(ah);
	if (rc == -1)
		kt_cli_die(&err);
	if (hd.n > 0) {
		/* Held: sort by time (stable), then stream. */
		sw->commit_early = sw->tail_known && (meta_first || !sorted);
		feed_sorted(sw, &hd, sorted);
	}
	if (early && !sw->tail_known) {
		/*
		 * Read on to the keys after traceEvents; what a pipe has left
		 * is not copied (not while a decoder's thread reads it).
		 */
		if (sw->tee != -1 && kt_source_untee(sw->src) == 0)
			sw->tee = -1;
		while ((rc = kt_reader_next(sw->rd, &evbuf, &err)) == 1)
			;
		if (rc == -1)
			kt_cli_die(&err);
	}
	held_free(&hd);
	return 0;
}

/* Explain a window that matched nothing, and exit 2. */
static void
nothing(const struct sw *sw)
{
	const struct opts *o = &sw->o;
	const char *name = kt_reader_name(sw->rd);
	char a[48], b[48];

	kt_cli_progress_done();
	switch (o->kind) {
	case W_STEPS:
		if (sw->first_step < 0)
			kt_cli_warn("%s: no ProfilerStep in the trace%s", name,
			    !o->has_rank ? "" : o->ranks.n == 1 &&
			    o->ranks.r[0][0] == o->ranks.r[0][1] ?
			    " (for that rank)" : " (for those ranks)");
		else
			kt_cli_warn("%s: no ProfilerStep#%lld to #%lld; the "
			    "trace has steps %lld to %lld", name,
			    (long long)o->step_a, (long long)o->step_b,
			    (long long)sw->first_step,
			    (long long)sw->last_step);
		break;
	case W_TIME:
		if (sw->first_ts == NOEND)
			kt_cli_warn("%s: no event has a time", name);
		else {
			kt_time_format(sw->last_ts - sw->first_ts, 3, a);
			kt_time_format(sw->first_ts, 3, b);
			kt_cli_warn("%s: nothing in the window; the trace spans "
			    "0 to %s us from its first event (absolute %s us)",
			    name, a, b);
		}
		break;
	case W_ANNOTATION:
		kt_cli_warn("%s: %lld annotation%s match%s '%s'; --nth %lld "
		    "asks for more", name, (long long)sw->nmatches,
		    sw->nmatches == 1 ? "" : "s", sw->nmatches == 1 ? "es" : "",
		    o->re_text, (long long)o->nth);
		break;
	}
	kt_cli_die(NULL);
}

/* Parse --steps A-B or --steps N (kt_steps_parse). */
static void
parse_steps(struct opts *o, const char *s)
{
	const char *bad;
	size_t nbad;

	switch (kt_steps_parse(s, &o->step_a, &o->step_b, &bad, &nbad)) {
	case KT_STEPS_OK:
		return;
	case KT_STEPS_NUMBER:
		kt_cli_warn("--steps: '%.*s' is not a number from 0 to %d",
		    (int)nbad, bad, INT32_MAX);
		break;
	case KT_STEPS_ORDER:
		kt_cli_warn("--steps: '%s' ends before it starts", s);
		break;
	default:
		kt_cli_warn("--steps: '%s' is not N or A-B", s);
	}
	exit(2);
}

/* Parse --rank LIST (kt_ranklist_parse): 0,7,63-64. */
static void
parse_ranks(struct opts *o, const char *s)
{
	const char *bad;
	size_t nbad;

	kt_ranklist_free(&o->ranks);
	switch (kt_ranklist_parse(s, &o->ranks, &bad, &nbad)) {
	case KT_STEPS_OK:
		return;
	case -1:
		kt_cli_nomem();
		break;
	case KT_STEPS_NUMBER:
		kt_cli_warn("--rank: '%.*s' is not a number from 0 to %d",
		    (int)nbad, bad, INT32_MAX);
		break;
	case KT_STEPS_ORDER:
		kt_cli_warn("--rank: '%.*s' ends before it starts", (int)nbad,
		    bad);
		break;
	default:
		kt_cli_warn("--rank: '%s' is not a list of N or A-B, such as "
		    "0,7,63-64", s);
	}
	exit(2);
}

/* Parse a time option with its unit. */
static int64_t
parse_time(const char *opt, const char *s)
{
	int64_t v;

	if (kt_duration_parse(s, &v) == -1) {
		kt_cli_warn("%s: '%s' is not a time with a unit (ns, us, ms, "
		    "s), such as 1.5ms", opt, s);
		exit(2);
	}
	return v;
}

/* --annotation RE. */
static void
parse_annotation(struct opts *o, const char *re)
{
	char msg[160];
	int rc;

	if (kt_regex_check(re, msg, sizeof(msg)) == -1) {
		kt_cli_warn("--annotation: '%s': %s", re, msg);
		exit(2);
	}
	o->re_text = re;
	if ((rc = regcomp(&o->re, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &o->re, msg, sizeof(msg));
		kt_cli_warn("--annotation: '%s': %s", re, msg);
		exit(2);
	}
}

/* Refuse a mix of windows or options; exit 2. */
static void
check_args(const struct opts *o, int nkinds, int has_steps, int noperands)
{
	if (nkinds != 1 || (has_steps && o->split)) {
		kt_cli_warn("choose one window: --steps, --from/--to, "
		    "--annotation or --split-steps");
		usage(stderr);
		exit(2);
	}
	if (o->has_to && o->has_from && o->to < o->from) {
		kt_cli_warn("--to is before --from");
		exit(2);
	}
	if (o->split && (o->co.output == NULL ||
	    strcmp(o->co.output, "-") == 0)) {
		kt_cli_warn("--split-steps writes files: give -o PREFIX");
		exit(2);
	}
	if (o->cpu_only && o->kind != W_STEPS) {
		kt_cli_warn("--cpu-only is for --steps windows");
		exit(2);
	}
	if (noperands > 1) {
		kt_cli_warn("one input at a time");
		exit(2);
	}
}

/*
 * The options, checked: one window.  Returns the index of the first
 * operand; exits 2 on a mistake.
 */
static int
parse_args(struct opts *o, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "absolute", no_argument, NULL, 'A' },
		{ "annotation", required_argument, NULL, 'a' },
		{ "clip", no_argument, NULL, 'c' },
		{ "cpu-only", no_argument, NULL, 'C' },
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "nth", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "rank", required_argument, NULL, 'r' },
		{ "split-steps", required_argument, NULL, 'p' },
		{ "spool-max", required_argument, NULL, KT_CLI_SPOOL_MAX },
		{ "steps", required_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "to", required_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch, nkinds = 0, has_steps = 0;

	o->co.level = -1;
	o->nth = 1;
	while ((ch = getopt_long(argc, argv, "Aa:cCf:hl:m:n:o:p:r:s:ST:tV",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'A':
			o->absolute = 1;
			break;
		case 'a':
			parse_annotation(o, optarg);
			o->kind = W_ANNOTATION;
			nkinds++;
			break;
		case 'c':
			o->clip = 1;
			break;
		case 'C':
			o->cpu_only = 1;
			break;
		case 'f':
			o->from = parse_time("--from", optarg);
			o->has_from = 1;
			break;
		case 'n':
			o->nth = kt_cli_int("--nth", optarg, 1, INT32_MAX);
			break;
		case 'p':
			o->split = (int)kt_cli_int("--split-steps", optarg, 1,
			    INT32_MAX);
			o->kind = W_STEPS;
			nkinds++;
			break;
		case 'r':
			parse_ranks(o, optarg);
			o->has_rank = 1;
			break;
		case 's':
			parse_steps(o, optarg);
			o->kind = W_STEPS;
			has_steps = 1;
			nkinds++;
			break;
		case 'T':
			o->to = parse_time("--to", optarg);
			o->has_to = 1;
			break;
		case 't':
			o->tsv = 1;
			break;
		default:
			kt_cli_opt(&o->co, ch, optarg, usage);
		}
	}
	if (o->has_from || o->has_to) {
		o->kind = W_TIME;
		nkinds++;
	}
	if (nkinds == 0 && o->has_rank) {
		/* Only a rank: the whole trace of it. */
		o->kind = W_TIME;
		nkinds = 1;
	}
	check_args(o, nkinds, has_steps, argc - optind);
	return optind;
}

/* Open the input and make what a run keeps (see run). */
static void
sw_open(struct sw *sw)
{
	struct kt_error err;
	int rc;

	sw->now = INT64_MIN;
	sw->first_ts = NOEND;
	sw->last_ts = INT64_MIN;
	sw->first_step = sw->last_step = -1;
	if (sw->tee != -1) {
		/* A pipe: read as it comes, copied as far as it is read. */
		if ((sw->src = kt_source_open_tee(sw->path, sw->name,
		    sw->o.co.member, sw->o.co.rflags, sw->tee, sw->teemax,
		    &err)) == NULL)
			kt_cli_die(&err);
		if ((rc = kt_source_next(sw->src, &sw->rd, &err)) != 1) {
			if (rc == 0)
				kt_error_set(&err, sw->name, 0, 0, "no trace");
			kt_cli_die(&err);
		}
	} else
		sw->rd = kt_cli_open_one(sw->path, sw->name, sw->o.co.member,
		    sw->o.co.rflags, &sw->src);
	if ((sw->holder = kt_hold_new(sw->path, sw->name)) == NULL)
		kt_cli_nomem();
	if ((sw->flowkeys = kt_flowkeys_new()) == NULL ||
	    (sw->tracks = kt_intern_new()) == NULL ||
	    (sw->pidrank = kt_pidrank_new()) == NULL)
		kt_cli_nomem();
	sw->open_ = store_new(sw->fields);
	sw->metas_ev = store_new(sw->fields);
	sw->lastc = store_new(sw->fields | CARRY_FIELDS);
	/* What pre_seed and pre_clean read of them: FEED_FIELDS. */
	sw->pre_ = store_new(sw->fields | FEED_FIELDS);
	sw->presteps = store_new(sw->fields);
	if ((sw->precorr = kt_intern_new()) == NULL)
		kt_cli_nomem();
	sw->pre_next = 256;
	/* A plain file's end first: then reading can stop early. */
	if ((rc = kt_reader_tail(sw->rd, &err)) == -1)
		kt_cli_die(&err);
	sw->tail_known = rc == 0;
}

/* Free what one run of sw holds (the windows committed or dropped). */
static void
sw_close(struct sw *sw)
{
	size_t i;

	for (i = 0; i < sw->nwins; i++) {
		kt_store_free(sw->wins[i].fifo);
		free(sw->wins[i].dlog);
		kt_buf_free(&sw->wins[i].dlit);
		free(sw->wins[i].runbuf);
	}
	kt_store_free(sw->open_);
	kt_store_free(sw->metas_ev);
	kt_store_free(sw->pre_);
	kt_store_free(sw->presteps);
	kt_intern_free(sw->precorr);
	free(sw->pregend);
	kt_store_free(sw->lastc);
	free(sw->wins);
	kt_flowkeys_free(sw->flowkeys);
	sw->flowkeys = NULL;
	kt_intern_free(sw->tracks);
	kt_pidrank_free(sw->pidrank);
	kt_hold_free(sw->holder);
	kt_reader_free(sw->rd);
	kt_source_close(sw->src);
}

/*
 * The input turned out unsorted after windows were streamed: forget
 * them (their outputs removed, none written through yet) and what the
 * run kept, to cut them again from the input held and sorted.
 */
static void
sw_restart(struct sw *sw)
{
	struct opts o = sw->o;
	const char *path = sw->path, *name = sw->name;
	uint32_t fields = sw->fields;
	int deferred = sw->deferred, tee = sw->tee;
	struct stat st = sw->st;
	uint64_t teemax = sw->teemax;
	size_t i;

	for (i = 0; i < sw->nwins; i++) {
		struct window *w = &sw->wins[i];

		/* A split file committed early is written again. */
		if (!w->committed) {
			kt_writer_free(w->w);
			kt_cli_unset_output(w->out);
			kt_out_abort(w->out);
		}
		if (w->spool[0] != '\0') {
			unlink(w->spool);
			kt_cli_drop_temp(w->spool);
		}
		win_drop_work(w);
		free(w->rows);
	}
	sw_close(sw);
	memset(sw, 0, sizeof(*sw));
	sw->o = o;
	sw->path = path;
	sw->name = name;
	sw->fields = fields;
	sw->deferred = deferred;
	sw->st = st;
	sw->tee = tee;
	sw->teemax = teemax;
	sw->hold_all = 1;
	sw_open(sw);
}

/* Is input path (NULL or "-": standard input) a pipe, a FIFO, a device? */
static int
is_pipe(const char *path)
{
	struct stat st;

	if (path == NULL || strcmp(path, "-") == 0)
		return fstat(0, &st) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISDIR(st.st_mode);
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode);
}

int
main(int argc, char *argv[])
{
	struct sw sw;
	size_t i;
	int rc;
	uint64_t dropped = 0, prel = 0, pres = 0, pref = 0;

	memset(&sw, 0, sizeof(sw));
	kt_cli_init("kt-slice-window");
	i = (size_t)parse_args(&sw.o, argc, argv);
	argc -= (int)i;
	argv += i;
	/* With --tsv or --clip, held events keep what writing needs. */
	sw.fields = sw.o.tsv || sw.o.clip ? EMIT_FIELDS : 0;
	kt_cli_inputs(argv, argc);
	if (!sw.o.split && kt_cli_check_output(sw.o.co.output, argv, argc) ==
	    -1)
		return 2;
	sw.name = argc && strcmp(argv[0], "-") != 0 ? argv[0] : "<stdin>";
	sw.tee = -1;
	if (is_pipe(argc ? argv[0] : NULL)) {
		/* Copied as far as it is read: it may have to be read again. */
		sw.path = argc ? argv[0] : "-";
		sw.tee = kt_cli_tee_file(sw.name, &sw.teepath, &sw.teemax);
	} else
		sw.path = kt_cli_input_path(argc ? argv[0] : NULL);
	sw_open(&sw);
	for (i = 0; (rc = run(&sw)) != 0; i++) {
		struct kt_error err;

		if (i == 3) {
			kt_cli_warn("internal error: restarted %d times", 4);
			kt_cli_die(NULL);
		}
		if (rc == 3) {
			if (kt_source_drain(sw.src, &err) == -1)
				kt_cli_die(&err);
			sw.path = sw.teepath;
			sw.tee = -1;
		}
		if (rc == 2) {
			sw.deferred = 1;
			if (stat(sw.path, &sw.st) == -1) {
				kt_cli_warn("%s: %s", sw.name, strerror(errno));
				kt_cli_die(NULL);
			}
		}
		sw_restart(&sw);
	}
	kt_cli_progress_done();
	start_at_end(&sw);
	if (sw.nwins == 0)
		nothing(&sw);
	for (i = 0; i < sw.nwins; i++) {
		struct window *w = &sw.wins[i];

		if (!w->done) {
			if (w->end == NOEND || !w->final)
				w->end = w->end == NOEND ? INT64_MAX - 1 :
				    w->end;
			finalize(&sw, w);
		}
		dropped += w->dropped_flows;
		prel += w->pre_launches;
		pres += w->pre_steps;
		pref += w->pre_flows;
		if (!w->committed)
			win_commit(&sw, w);
		if (sw.o.split)
			printf("%s\n", w->path);
	}
	kt_cli_report_repairs(kt_reader_name(sw.rd),
	    kt_reader_repairs(sw.rd));
	if (dropped > 0)
		kt_cli_warn("%s: %llu flow event%s dropped: the other end is "
		    "outside the window", kt_reader_name(sw.rd),
		    (unsigned long long)dropped, dropped == 1 ? "" : "s");
	if (prel > 0)
		kt_cli_warn("%s: kept from before the window, for the GPU work "
		    "in it: %llu launch call%s, %llu flow event%s, %llu "
		    "ProfilerStep%s", kt_reader_name(sw.rd),
		    (unsigned long long)prel, prel == 1 ? "" : "s",
		    (unsigned long long)pref, pref == 1 ? "" : "s",
		    (unsigned long long)pres, pres == 1 ? "" : "s");
	sw_close(&sw);
	if (sw.o.re_text != NULL)
		regfree(&sw.o.re);
	kt_ranklist_free(&sw.o.ranks);
	return 0;
}
