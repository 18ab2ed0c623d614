/*
 * kt.h: the one header of the kt library, which every filter includes.
 *
 * The library owns reading (files, stdin, compressed and archived input),
 * the streaming JSON scanner, the event model, exact time, raw patching,
 * writing (JSON, TSV, gzip, atomic output) and the TSV event form.
 *
 * Conventions: names are kt_<noun>_<verb>; success is 0 or non-NULL,
 * failure is -1 or NULL with details in a caller's struct kt_error.  The
 * library never prints and never exits, except for the kt_cli_* helpers
 * in cli.c, which exist to print the family's messages.
 */
#ifndef KT_H
#define KT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KT_VERSION "0.1.0"

/* An error: where (file, 1-based line and column when known) and what. */
struct kt_error {
	char	 file[512];
	long	 line;		/* 0 when there is no position */
	long	 col;
	char	 msg[512];
};

void	 kt_error_set(struct kt_error *, const char *, long, long,
	    const char *, ...)
	    __attribute__((format(printf, 5, 6)));

/* ------------------------------------------------------------------ */
/* Growable byte buffer. */

/*
 * Growable byte buffer with a sticky error: once an append fails (out
 * of memory) err is set and every later append fails without adding,
 * so a buffer is checked once, after it is built (b.err), and text is
 * never dropped silently in the middle.  Each append returns 0 or -1.
 */
struct kt_buf {
	char	*p;
	size_t	 n;
	size_t	 cap;
	int	 err;		/* an append failed */
};

#define KT_BUF_INIT	{ NULL, 0, 0, 0 }

int	 kt_buf_reserve(struct kt_buf *, size_t);
int	 kt_buf_add(struct kt_buf *, const void *, size_t);
int	 kt_buf_addc(struct kt_buf *, char);
int	 kt_buf_adds(struct kt_buf *, const char *);
/* Append printf-formatted text of any length.  0 or -1. */
int	 kt_buf_printf(struct kt_buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Empty the buffer and clear its error, keeping its memory. */
void	 kt_buf_clear(struct kt_buf *);
void	 kt_buf_free(struct kt_buf *);

/*
 * calloc(n, sz) written through at once: memory that a thread reads
 * before it writes (a sum added to) would first map the shared zero
 * page, and each page's first write would then flush the other CPUs'
 * TLBs (an interrupt to each, costly in a virtual machine) while the
 * process has threads.  NULL on overflow or when out of memory.
 */
void	*kt_zalloc(size_t, size_t);
/*
 * Advice that [p, p + n), a large array about to be written through, be
 * backed by transparent huge pages where the system gives them on
 * request (one page fault per 2 MB instead of 512); nothing below 16 MB
 * (a smaller trace's arrays would only grow by part of a huge page).
 * Advice only: the contents are the same either way.
 */
void	 kt_mem_huge(void *, size_t);

/*
 * An arena: memory handed out in large chunks that never move, freed all
 * at once.  kt_arena_copy() returns a new copy of n bytes, or NULL.
 */
struct kt_arena;

struct kt_arena	*kt_arena_new(void);
char		*kt_arena_alloc(struct kt_arena *, size_t);
char		*kt_arena_copy(struct kt_arena *, const void *, size_t);
void		 kt_arena_free(struct kt_arena *);

/*
 * An intern table: equal byte strings get the same dense id (0, 1, ...).
 * kt_intern_put() returns the id, or -1 when out of memory;
 * kt_intern_get() borrows the stored copy.
 */
struct kt_intern;

struct kt_intern *kt_intern_new(void);
int64_t		 kt_intern_put(struct kt_intern *, const char *, size_t);
/* The id of a string already put, or -1. */
int64_t		 kt_intern_find(const struct kt_intern *, const char *, size_t);
const char	*kt_intern_get(const struct kt_intern *, uint32_t, size_t *);
size_t		 kt_intern_count(const struct kt_intern *);
void		 kt_intern_free(struct kt_intern *);
/* The intern table's hash of n bytes (eight at a time), for a filter's own. */
uint32_t	 kt_hash(const void *, size_t);

/* Sort pairs by key, stably (equal keys keep their order).  0 or -1. */
struct kt_pair {
	uint64_t key;
	uint64_t val;
};

int		 kt_sort_pairs(struct kt_pair *, size_t);
/*
 * qsort(3), which may not be given a NULL array even when it is empty,
 * stable as glibc's is: an array in order is left as it is, one in up to
 * nine runs in order is merged, and one nearly in order (each element a
 * few places from its own) is sorted by insertion, in a pass or so.
 */
void		 kt_qsort(void *, size_t, size_t, int (*)(const void *,
		    const void *));
/*
 * A stable sort with a context handed to the comparison (no globals):
 * equal elements keep their order.  Without memory for its buffer it
 * falls back to an insertion sort in place.
 */
void		 kt_sort_r(void *, size_t, size_t, int (*)(const void *,
		    const void *, void *), void *);

/* ------------------------------------------------------------------ */
/* Exact time: decimal microsecond text <-> int64 nanoseconds. */

#define KT_TIME_SUBNS	0x01	/* digits below 1 ns were present */
#define KT_TIME_EXP	0x02	/* the text used an exponent */

/*
 * The range of a time or duration kt holds: within +-KT_TIME_MAX ns
 * (2^62 - 1 ns, about 146 years), so that the sum or difference of any
 * two fits int64 and no arithmetic on times can wrap.  A trace with a
 * time outside it is refused (exit 2), never wrapped.
 */
#define KT_TIME_MAX	((int64_t)0x3fffffffffffffff)

/*
 * Parse the JSON number text s[0..n) as microseconds into *ns.  No floating
 * point is involved.  Digits below one nanosecond are truncated toward
 * zero and flagged with KT_TIME_SUBNS; *decimals gets the number of
 * fraction digits written in the text.  Returns 0, or -1 if the text is
 * not a number or falls outside +-KT_TIME_MAX ns.
 */
int	 kt_time_parse(const char *, size_t, int64_t *, int *, int *);

/*
 * Format ns as microsecond text into buf (at least 32 bytes), with at
 * least min_decimals fraction digits (0..3) and no more than needed
 * otherwise.  Returns the length.
 */
size_t	 kt_time_format(int64_t, int, char *);

/*
 * Parse a duration or time with its unit, "1.5ms", "300us", "2s",
 * "100ns", into ns.  Returns 0, or -1 (no unit, bad number).
 */
int	 kt_duration_parse(const char *, int64_t *);

/*
 * *out = a + b when a, b and the sum are within +-KT_TIME_MAX; else -1.
 * Inline: the views add up every activity and span with it.
 */
static inline int
kt_time_add(int64_t a, int64_t b, int64_t *out)
{
	/* Each within KT_TIME_MAX, the sum cannot overflow int64. */
	if (a > KT_TIME_MAX || a < -KT_TIME_MAX || b > KT_TIME_MAX ||
	    b < -KT_TIME_MAX || a + b > KT_TIME_MAX || a + b < -KT_TIME_MAX)
		return -1;
	*out = a + b;
	return 0;
}

/* Format ns as plain integer text; returns the length. */
size_t	 kt_int_format(int64_t, char *);

/*
 * Option text (the filters' options; lib/cli prints and exits on -1).
 * kt_int_parse: a whole decimal integer (strtoll(3)) in [min, max].
 * kt_duration_opt_parse: a duration with a unit (kt_duration_parse),
 * or whole ns, >= 0.  kt_gb_parse: a positive decimal number of GB
 * ("79.5") in bytes, 10^9 per GB.  Each returns 0, or -1 and leaves
 * its result alone.
 */
int	 kt_int_parse(const char *, long long, long long, long long *);
int	 kt_duration_opt_parse(const char *, int64_t *);
int	 kt_gb_parse(const char *, int64_t *);

/*
 * A step range, kt-slice-window --steps: "N", or "A-B" with A <= B,
 * whole numbers (kt_int_parse) from 0 to INT32_MAX, into *a and *b.
 * Returns KT_STEPS_OK, or why not: KT_STEPS_FORM (A empty or of 32
 * bytes or more), KT_STEPS_NUMBER (the number at *bad, *nbad bytes of
 * the text, is not one), KT_STEPS_ORDER (B < A).
 */
enum {
	KT_STEPS_OK = 0,
	KT_STEPS_FORM,
	KT_STEPS_NUMBER,
	KT_STEPS_ORDER
};
int	 kt_steps_parse(const char *, int64_t *, int64_t *, const char **,
	    size_t *);

/*
 * A list of ranks, kt-slice-window --rank and kt-rank-tag --ranks:
 * items separated by commas, each "N" or "A-B" as for kt_steps_parse
 * (whole numbers from 0 to INT32_MAX, A <= B), such as "0,7,63-64".
 * kt_ranklist_parse fills *l with the ranges, sorted and merged (an
 * item may repeat or overlap another), and returns KT_STEPS_OK, or why
 * not, as kt_steps_parse, of the item at *bad, *nbad bytes long:
 * KT_STEPS_FORM also for an empty item ("1,,2", "", "3,") and one of
 * 64 bytes or more; or -1 when
 * out of memory.  On failure *l is empty.  kt_ranklist_has: is rank r
 * in the list; kt_ranklist_free frees the ranges.
 */
struct kt_ranklist {
	int64_t	(*r)[2];	/* [first, last], sorted, disjoint */
	size_t	  n;
};
int	 kt_ranklist_parse(const char *, struct kt_ranklist *, const char **,
	    size_t *);
int	 kt_ranklist_has(const struct kt_ranklist *, int64_t);
void	 kt_ranklist_free(struct kt_ranklist *);

/*
 * A regex a user gave (bucket rules, --annotation, layer-track's
 * anchors), looked at before regcomp(3): glibc's regcomp copies the atom
 * under each '+' and {n,m}, so "a+++...+" or nested intervals take
 * memory without bound (and time that grows faster than the copies:
 * 2^15 of them took 2.4 s), and its regexec is exponential with
 * back-references, which POSIX EREs do not have.  Returns 0, or -1 with
 * why (n bytes) for a back-reference, groups nested over 256 deep, or
 * more than KT_REGEX_MAX atoms once the repetitions are copied out.
 * Text that is not a regex is left to regcomp to report.
 */
#define KT_REGEX_MAX	4096
int	 kt_regex_check(const char *, char *, size_t);
/*
 * Strings of which every text an ERE matches with case ignored holds one
 * (lowercased; a cheap test before regexec): the longest run of plain
 * characters of each top-level alternative, or the strings of a group
 * it needs, whichever is rarer.  They are put in out, each ended by
 * '\0', the list by an empty string.  0, or -1 (out empty) when some
 * alternative has no such string of two characters or more, or out of
 * memory.  kt_regex_literals_in: whether the lowercased text holds one.
 */
int	 kt_regex_literals(const char *, struct kt_buf *);
int	 kt_regex_literals_in(const char *, const char *);

/* ------------------------------------------------------------------ */
/* The event model. */

enum kt_type {
	KT_NONE = 0,		/* absent */
	KT_STRING,
	KT_NUMBER,
	KT_OBJECT,
	KT_ARRAY,
	KT_TRUE,
	KT_FALSE,
	KT_NULL
};

/* A value inside an event: its raw text, relative to the event's start. */
struct kt_val {
	uint32_t off;
	uint32_t len;
	uint8_t	 type;		/* enum kt_type */
};

enum kt_kind {
	KT_OTHER = 0,
	KT_CPU_OP,
	KT_USER_ANNOTATION,
	KT_STEP,
	KT_GPU_USER_ANNOTATION,
	KT_CUDA_RUNTIME,
	KT_CUDA_DRIVER,
	KT_KERNEL,
	KT_GPU_MEMCPY,
	KT_GPU_MEMSET,
	KT_PYTHON_FUNCTION,
	KT_MEMORY,
	KT_FLOW,
	KT_METADATA,
	KT_COUNTER,
	KT_INSTANT,
	KT_NKINDS
};

/*
 * The fields the scanner extracts; those from KT_F_EXTID on come from
 * args (of a [memory] instant, the five it is read by).
 */
enum kt_field {
	KT_F_PH = 0,
	KT_F_CAT,
	KT_F_NAME,
	KT_F_PID,
	KT_F_TID,
	KT_F_TS,
	KT_F_DUR,
	KT_F_ID,
	KT_F_BP,
	KT_F_S,
	KT_F_ARGS,
	KT_F_EXTID,		/* args."External id" */
	KT_F_CORR,		/* args.correlation */
	KT_F_STREAM,		/* args.stream */
	KT_F_DEVICE,		/* args.device */
	KT_F_BYTES,		/* args.bytes */
	KT_F_RANK,		/* args.rank (kt rank-tag) */
	KT_F_MBYTES,		/* args.Bytes */
	KT_F_MALLOC,		/* args."Total Allocated" */
	KT_F_MRESV,		/* args."Total Reserved" */
	KT_F_DEVTYPE,		/* args."Device Type" */
	KT_F_DEVID,		/* args."Device Id" */
	KT_NFIELDS
};
#define KT_F_FIRSTARG KT_F_EXTID

#define KT_EV_TS	0x0001	/* ts is a valid number, in ts */
#define KT_EV_DUR	0x0002	/* dur is a valid number, in dur */
#define KT_EV_REPAIRED	0x0004	/* raw is a repaired copy of the input */
#define KT_EV_TS_SUBNS	0x0008	/* ts has digits below 1 ns */
#define KT_EV_DUR_SUBNS	0x0010
#define KT_EV_PATCHED	0x0020	/* raw was patched from TSV columns */
/*
 * The writer's separator (KT_WRITE_SEP) comes just before the event in
 * the input, as the reader saw it: set by kt_reader_next (and kt_ahead's
 * pieces) when it still had those bytes, which it may not have at the
 * edge of a buffer or a piece.  A hint, for a filter that copies runs of
 * the input's events as they stand (kt-slice-window); a store's records
 * do not keep it.
 */
#define KT_EV_SEP	0x0100

/*
 * One event.  raw/len is the event object's bytes, borrowed from the
 * reader and valid until its next call.  index is the event's row number
 * (its position in the source's traceEvents); its row id is
 * "<kind>:<index>".
 */
struct kt_event {
	const char	*raw;
	size_t		 len;
	uint64_t	 index;
	int64_t		 ts;		/* ns, when KT_EV_TS */
	int64_t		 dur;		/* ns, when KT_EV_DUR */
	uint64_t	 end;		/* read by kt_reader_next: where it
					   ends in the input's bytes (its
					   kt_reader_offset), else 0 */
	unsigned	 flags;
	int		 ts_decimals;	/* fraction digits in the ts text */
	int		 dur_decimals;
	enum kt_kind	 kind;
	char		 ph;		/* first byte of ph, or 0 */
	uint32_t	 known;		/* the fields located (KT_FBIT bits):
					   all when scanned; a view of a
					   record (kt_store_view) has some,
					   an event made of bytes alone none;
					   the others read absent */
	struct kt_val	 f[KT_NFIELDS];
};

/* The bit of field f in a mask of fields, and every field's. */
#define KT_FBIT(f)	(1u << (f))
#define KT_FALL		((1u << KT_NFIELDS) - 1)
/* The fields a TSV row's columns are made of. */
#define KT_FCOLUMNS	(KT_FBIT(KT_F_PH) | KT_FBIT(KT_F_PID) | \
			 KT_FBIT(KT_F_TID) | KT_FBIT(KT_F_CAT) | \
			 KT_FBIT(KT_F_NAME) | KT_FBIT(KT_F_RANK))
/* Those ts, dur, ph and kind are made of (kt_event_finish). */
#define KT_FDERIVED	(KT_FBIT(KT_F_PH) | KT_FBIT(KT_F_CAT) | \
			 KT_FBIT(KT_F_NAME) | KT_FBIT(KT_F_TS) | \
			 KT_FBIT(KT_F_DUR))

const char	*kt_kind_name(enum kt_kind);
int		 kt_kind_parse(const char *, size_t);
enum kt_kind	 kt_event_classify(const struct kt_event *);

/* The raw text of a field, or NULL with *n = 0 when absent. */
const char	*kt_event_field(const struct kt_event *, enum kt_field, size_t *);

/*
 * Compare a string field's contents (without quotes, as escaped in the
 * JSON) with s.  Returns 1 when equal.
 */
int	 kt_event_field_is(const struct kt_event *, enum kt_field, const char *);

/*
 * The text of ev's ts moved by delta ns into out (96 bytes or more): as
 * many fraction digits as the original, and its digits below 1 ns kept.
 * Returns the length.
 */
size_t	 kt_event_ts_shifted(const struct kt_event *, int64_t, char *);

/*
 * The one step-number parser: N of the name "ProfilerStep#N" (s[0..n),
 * unescaped; N whole decimal digits), else -1.  kt_event_step() reads
 * the name field of ev.
 */
int64_t	 kt_step_parse(const char *, size_t);
int64_t	 kt_event_step(const struct kt_event *);

/*
 * The rank an event names itself (args.rank, which kt rank-tag writes on
 * every event of a merged trace but flows), or -1: the event is of the
 * trace's rank (kt_reader_rank).
 */
int64_t	 kt_event_rank(const struct kt_event *);
/*
 * The ranks of pids, for events that do not name theirs (the flows of a
 * merged trace): kt_pidrank_of() gives args.rank when the event has it,
 * noting it for its pid (the first one a pid names counts), else the
 * rank noted for its pid (by value: pid "7" is pid 7), else -1.  kt
 * rank-tag writes every pid's metadata, with its rank, before the pid's
 * other events.  -2 when out of memory.
 */
struct kt_pidrank;

struct kt_pidrank *kt_pidrank_new(void);
int64_t	 kt_pidrank_of(struct kt_pidrank *, const struct kt_event *);
void	 kt_pidrank_free(struct kt_pidrank *);

/*
 * The text a pid or tid (field f) is known by: a string that holds a
 * decimal integer ("25738": no sign but '-', no leading zero, at most 18
 * digits) is that number (25738), as kt compares ids by value (2021-era
 * traces spell one thread "25738" on X events and 25738 on flows); any
 * other value is its raw text.  Returns 1 when a string was read as a
 * number (kt normalize repairs such ids into numbers), else 0.
 */
int	 kt_event_id_text(const struct kt_event *, enum kt_field,
	    const char **, size_t *);

/* Append the event's thread key (pid text, tab, tid text: by value). */
int	 kt_event_thread_key(const struct kt_event *, struct kt_buf *);

/*
 * The id of the last (pid) or (pid, tid) looked up, by the raw bytes of
 * the event's fields and a rank: an event whose bytes are the last one's
 * has its key, without making it (a trace's events come in runs of one
 * thread).  kt_idmemo_hit gives it (1) or says to look it up (0); then
 * kt_idmemo_keep remembers the id found for the event's bytes (none kept
 * without a pid, or a tid when asked, or when they are over 63 bytes).
 */
struct kt_idmemo {
	char		 b[64];
	size_t		 n;
	int64_t		 rank;
	uint32_t	 id;		/* UINT32_MAX: none */
};

void	 kt_idmemo_init(struct kt_idmemo *);
int	 kt_idmemo_hit(struct kt_idmemo *, const struct kt_event *, int64_t,
	    int, uint32_t *);
void	 kt_idmemo_keep(struct kt_idmemo *, const struct kt_event *,
	    int64_t, int, uint32_t);

/* An integer field (number, or a string holding one) in *v; 0 or -1. */
int	 kt_event_field_int(const struct kt_event *, enum kt_field, int64_t *);
/* The same of a value of ev (one kt_event_find() gave): args.sort_index. */
int	 kt_val_int(const struct kt_event *, const struct kt_val *, int64_t *);
/* The integer args.sort_index of a *_sort_index metadata event: 0 or -1. */
int	 kt_event_sort_index(const struct kt_event *, int64_t *);

/*
 * Find key (unescaped ASCII) among the members of the object value v of
 * ev (KT_F_ARGS for args), and return its value in *out.  0 or -1.
 */
int	 kt_event_find(const struct kt_event *, const struct kt_val *,
	    const char *, struct kt_val *);
/*
 * The same for keys[0..n) in one walk over the members: out[i] is the
 * value of keys[i], or of type KT_NONE when absent.  Returns how many
 * were found.
 */
int	 kt_event_find_keys(const struct kt_event *, const struct kt_val *,
	    const char *const *, size_t, struct kt_val *);

/*
 * The scanner's paths: the same scan of the same bytes with the portable
 * byte loops ("portable"), sixteen bytes at a time with SSE2 ("sse2"),
 * thirty-two with AVX2 ("avx2"), the best the CPU runs chosen at run
 * time.  Readers take the path that KT_SCAN names (kt(7)); a single
 * event's scan (kt_event_scan) the best.  kt_scan_path: the path that
 * name names (NULL or "": the best), or -1 when this build or CPU does
 * not run it.  kt_scan_path_name: a path's name.
 */
int		 kt_scan_path(const char *);
int		 kt_scan_path_best(void);
const char	*kt_scan_path_name(int);

/*
 * Scan one event object held in buf[0..n) into ev, with ev->raw = buf.
 * The text must be valid JSON (no repairs happen here).  ev->index is
 * left as is.  Returns 0, or -1 with err->msg set (err may be NULL).
 */
int	 kt_event_scan(const char *, size_t, struct kt_event *,
	    struct kt_error *);

/* ------------------------------------------------------------------ */
/* Raw patching: change a few fields of an event, keep every other byte. */

#define KT_PATCH_MAX 16

struct kt_patch_edit {
	size_t	 off;		/* in the event's raw text */
	size_t	 del;		/* bytes removed there */
	size_t	 insoff;	/* inserted text, in tmp */
	size_t	 inslen;
	int	 seq;		/* keeps insertions at one offset in order */
	int	 field;		/* the field it sets, adds or removes, or -1 */
	size_t	 valoff;	/* the field's new value in the inserted text */
	size_t	 vallen;	/* (0 and 0 when the edit removes it) */
};

struct kt_patch {
	const struct kt_event	*ev;
	struct kt_patch_edit	 e[KT_PATCH_MAX];
	int			 n;
	struct kt_buf		 tmp;	/* owned copies of inserted texts */
	struct kt_buf		 newargs; /* members of an args to add */
	/* fields among newargs: value offset and length in it, by field */
	uint32_t		 naoff[KT_NFIELDS - KT_F_FIRSTARG];
	uint32_t		 nalen[KT_NFIELDS - KT_F_FIRSTARG];
	uint32_t		 naset;	/* bit f - KT_F_FIRSTARG: in newargs */
};

void	 kt_patch_init(struct kt_patch *, const struct kt_event *);
/* Start over on ev with a patch already used, keeping its buffers. */
void	 kt_patch_reset(struct kt_patch *, const struct kt_event *);
/* Replace field f's value with text, or add the field when absent. */
int	 kt_patch_set(struct kt_patch *, enum kt_field, const char *, size_t);
/* Set args.key (ASCII key) to the raw JSON text; adds args when absent. */
int	 kt_patch_arg(struct kt_patch *, const char *, const char *, size_t);
/*
 * Set the top-level member key (ASCII, not a field's) to the raw JSON
 * text: its value replaced when present, else added.  For a record kept
 * beside args: a C event's args are all series of its counter.
 */
int	 kt_patch_key(struct kt_patch *, const char *, const char *, size_t);
/* Add args.key, which the caller knows is absent (no search). */
int	 kt_patch_arg_add(struct kt_patch *, const char *, const char *,
	    size_t);
/*
 * Remove field f (a top-level member; an args field: that member of
 * args) with the comma that separates it: the first member of an object
 * goes with the comma after it and one space after that comma (the
 * inverse of an insertion), another from the end of the member before
 * it.  0, or -1 when the field is absent or the patch is full.
 */
int	 kt_patch_remove(struct kt_patch *, enum kt_field);
/* Remove args.key (ASCII key) the same way.  0, or -1 when absent. */
int	 kt_patch_arg_remove(struct kt_patch *, const char *);
/* Append the patched event to out.  0 or -1. */
int	 kt_patch_apply(struct kt_patch *, struct kt_buf *);
/*
 * The same, and the patched event in *nev (its raw in out, valid until
 * out changes), its fields located from the patch, not by scanning it
 * again: every field known of the event patched moves by the edits
 * before it, a field set, added or removed is where the patch put it,
 * and ts, dur, ph and kind follow from them (when the fields they come
 * from are known; else they stay, but for a ts or dur set).
 * nev->index is the event's.  Only an edit that cuts a field's value
 * (which no kt_patch_* call makes but a replaced args holding fields)
 * makes it scan the result.  0 or -1.
 */
int	 kt_patch_apply_event(struct kt_patch *, struct kt_buf *,
	    struct kt_event *);
void	 kt_patch_free(struct kt_patch *);

/* ------------------------------------------------------------------ */
/* Reading. */

enum kt_repair {
	KT_R_BOM = 0,		/* byte-order mark */
	KT_R_TRAILING_COMMA,
	KT_R_TRUNCATED,		/* input ended early: arrays closed */
	KT_R_CONTROL,		/* raw control character in a string */
	KT_R_ESCAPE,		/* invalid escape kept as a literal '\' */
	KT_R_NONFINITE,		/* bare inf/nan made null */
	KT_R_EMPTY_EVENT,	/* {} event dropped */
	KT_R_UNMATCHED_E,	/* E without B dropped */
	KT_R_UNMATCHED_B,	/* B without E closed */
	KT_R_UTF8,		/* a byte of invalid UTF-8 made U+FFFD */
	KT_R_STRING_ID,		/* pid/tid "25738" made 25738 (normalize) */
	KT_NREPAIRS
};

struct kt_repairs {
	uint64_t n[KT_NREPAIRS];
	uint64_t truncated_bytes;	/* bytes dropped by KT_R_TRUNCATED */
	long	 truncated_line;	/* where the input ends (1-based), */
	long	 truncated_col;		/* 0 when not known */
	int	 tsv_cut;		/* KT_R_TRUNCATED: a TSV without its end row */
	int	 tsv_counted;		/* a TSV end row gave its row count: */
	uint64_t tsv_rows_said;		/* that count */
	uint64_t tsv_rows_read;		/* the event rows before it */
};

/* Format the report line of repair r ("3 trailing commas removed"). */
int	 kt_repair_describe(const struct kt_repairs *, enum kt_repair,
	    char *, size_t);

enum kt_form {
	KT_FORM_OBJECT = 0,	/* {"traceEvents": [...], ...} */
	KT_FORM_ARRAY,		/* [...] */
	KT_FORM_TSV		/* the kt TSV event form */
};

/* A top-level key other than traceEvents: raw key text (with quotes). */
struct kt_meta {
	char	*key;
	size_t	 keylen;
	char	*val;
	size_t	 vallen;
	int	 after;		/* it came after traceEvents */
};

#define KT_READ_STRICT	0x01	/* no repairs: a repairable fault is an error */
#define KT_READ_SMALL	0x02	/* small buffers, for many readers at once */
#define KT_READ_SKIM	0x04	/* survey: top-level fields only (args of
				   metadata events too), no validation; ts
				   but not dur, kind only for steps */
#define KT_READ_ANYTIME	0x08	/* a ts or dur out of range reads as
				   absent (kt-normalize --check reports
				   it) instead of an error */
#define KT_READ_POSITIONS 0x10	/* ev->index is the event's position in
				   traceEvents, not its row number (no
				   ktSourceIndex, no TSV id column), and
				   kt_reader_rows() gives none: a
				   model loaded so has positions for rows
				   (kt-select) */

/*
 * A file smaller than this on disk (compressed or not) is read on the
 * caller's thread: a reader of it starts no thread (gzip's decoder,
 * kt_ahead), whose start and buffers cost more than the scan of so little.
 */
#define KT_SMALL_FILE	((uint64_t)512 << 10)

struct kt_source;
struct kt_reader;

/*
 * Open path ("-" or NULL for stdin).  The content decides the format:
 * plain JSON, TSV, gzip/zstd/xz/bzip2, or a tar or zip archive.  glob,
 * when not NULL, selects archive members by name (fnmatch(3)).  Returns a
 * new source, or NULL with err set.
 */
struct kt_source *kt_source_open(const char *, const char *, unsigned,
		    struct kt_error *);
/* The same, named in messages as name (NULL: path), say "<stdin>" for
 * a copy of standard input. */
struct kt_source *kt_source_open_as(const char *, const char *,
		    const char *, unsigned, struct kt_error *);

/*
 * The next trace of the source (an archive yields one per member that
 * holds a trace).  Returns 1 with *r set to a new reader, 0 at the end,
 * or -1 with err set.  A reader reads only until the next call; the
 * caller frees it with kt_reader_free(), before closing the source.
 */
int	 kt_source_next(struct kt_source *, struct kt_reader **,
	    struct kt_error *);
/*
 * kt_source_open_as() that also writes every byte it reads from the
 * input, as it is (compressed, archived), to descriptor tee, at most max
 * bytes (0: no cap): a copy made only as far as the input is read, for
 * a filter that may have to read it again (a pipe).  kt_source_untee()
 * stops the copy (0), or cannot while a decoder's thread reads (-1: it
 * goes on).  kt_source_drain() copies the rest of the input, unread, to
 * the tee and ends the source's reading: 0, or -1 with err set (a read
 * or a write failed, or more than max bytes).
 */
struct kt_source *kt_source_open_tee(const char *, const char *,
		    const char *, unsigned, int, uint64_t, struct kt_error *);
int	 kt_source_untee(struct kt_source *);
int	 kt_source_drain(struct kt_source *, struct kt_error *);
/* Is the source a tar or zip archive (known after kt_source_next)? */
int	 kt_source_archived(const struct kt_source *);
/*
 * Are the source's bytes its file's own, unchanged: not decompressed,
 * not an archive's member (known after kt_source_next)?  Then the
 * SHA-256 of what kt_reader_read() gives is the file's.
 */
int	 kt_source_plain(const struct kt_source *);
void	 kt_source_close(struct kt_source *);

/*
 * Copy standard input into a new temporary file, for filters that read
 * their input twice.  Returns its path (malloc'd; the caller unlinks and
 * frees it), or NULL with err set.
 */
char	*kt_spool_stdin(struct kt_error *);
/*
 * The same for any descriptor in (a pipe, a FIFO named as an input),
 * named name in messages.  The first bytes are looked at before any
 * copy: content that is no trace (not JSON, TSV, compressed or
 * archived) is an error and nothing is copied.  More than max bytes
 * (0: no cap) is an error.  Where /proc is mounted the copy is unlinked
 * at once and the path returned is /proc/self/fd/N, so nothing is left
 * behind even after SIGKILL; the caller still may unlink() the path.
 */
char	*kt_spool_fd(int, const char *, uint64_t, struct kt_error *);
/*
 * The same for a reader's own bytes (kt_reader_read: decompressed, the
 * archive member's), from where it stands; on a new reader, the whole
 * trace as plain JSON, for a filter that must read it again by place.
 */
char	*kt_spool_reader(struct kt_reader *, uint64_t, struct kt_error *);
/*
 * A new temporary file in $TMPDIR (or /tmp), open for writing and
 * reading: its descriptor, and in *path (malloc'd) its name,
 * /proc/self/fd/N where /proc is mounted (then it is unlinked already:
 * nothing is left behind), else its path, for the caller to remove.
 * -1 with err set.
 */
int	 kt_temp_file(char **, struct kt_error *);

/*
 * The rank a file name gives, by the first pattern that matches, in this
 * order: rank<N>, rank-N, rank_N, worker<N>, -N. (the last path component
 * is searched).  Returns 0 with *rank and *how (the pattern, static), or
 * -1.
 */
int	 kt_rank_from_name(const char *, int64_t *, const char **);

/* A reader over a memory buffer (for fuzzers and tests).  Borrows buf. */
struct kt_reader *kt_reader_mem(const char *, size_t, const char *,
		    unsigned);
void	 kt_reader_free(struct kt_reader *);

/*
 * The next event.  Returns 1 with ev filled (borrowed until the next
 * call), 0 at the end of the trace, or -1 with err set.  Top-level keys
 * before traceEvents are known once the first call returns; those after
 * it once a call has returned 0.
 */
int	 kt_reader_next(struct kt_reader *, struct kt_event *,
	    struct kt_error *);
/*
 * The same events read and scanned on a thread of their own, ahead of
 * the caller (ahead.c): worth it when the caller does as much with each
 * event as the scan costs, and the process has a second CPU
 * (kt_ahead_worth).  kt_ahead_start returns NULL when it cannot start.
 * kt_ahead_next is kt_reader_next's twin: the same events, bytes and
 * end; the event is borrowed until the next call; with no thread (NULL)
 * it is kt_reader_next on the reader given (else unused).  The reader is the thread's until kt_ahead_next has
 * returned 0 or -1, or kt_ahead_stop (which also frees).  progress, if
 * not NULL, is called on the thread every 16384 events.  A plain file
 * of 8 MB or more is read in pieces on every CPU instead (ahead.c, kt(7)
 * Threads), the same events in the same order; progress is then called
 * on the caller's thread.
 */
struct kt_ahead;
unsigned	 kt_cpus(void);		/* CPUs this process may run on */
int		 kt_ahead_worth(void);
/*
 * Start a thread of the library, named name (top -H, perf), that takes
 * no signals: they go to the caller's threads.  0, or -1 when it could
 * not start.
 */
int		 kt_thread_start(pthread_t *, void *(*)(void *), void *,
		    const char *);
struct kt_ahead	*kt_ahead_start(struct kt_reader *,
		    void (*)(const struct kt_reader *));
int		 kt_ahead_next(struct kt_ahead *, struct kt_reader *,
		    struct kt_event *, struct kt_error *);
/*
 * kt_ahead_next without copying the event: *evp points at it, where the
 * thread left it (borrowed until the next call), or at the event given,
 * which kt_reader_next filled (no thread, or reading alone again).
 */
int		 kt_ahead_get(struct kt_ahead *, struct kt_reader *,
		    struct kt_event *, const struct kt_event **,
		    struct kt_error *);
void		 kt_ahead_stop(struct kt_ahead *);
/*
 * The trace's own bytes instead of its events: up to n bytes into buf,
 * as they come out of the decompression and the archive member (gzip,
 * zstd, xz, bzip2, tar and zip undone; stdin as it is), from where the
 * reader stands (a new reader: the first byte), unchanged (no repair, no
 * check).  For a filter that hands a trace on whole (kt-serve).  Call it
 * instead of kt_reader_next(), never on a reader that has handed out
 * events.  Returns the count (> 0), 0 at the end, or -1 with err set.
 */
int64_t	 kt_reader_read(struct kt_reader *, void *, size_t,
	    struct kt_error *);

const char		*kt_reader_name(const struct kt_reader *);
/*
 * The position in traceEvents (from 0, counting the events dropped as
 * damaged) of the event the last kt_reader_next() returned.
 */
uint64_t		 kt_reader_position(const struct kt_reader *);
enum kt_form		 kt_reader_form(const struct kt_reader *);
/* The top-level keys read so far, in input order (borrowed). */
const struct kt_meta	*kt_reader_metas(const struct kt_reader *, size_t *);
/* The value of top-level key name (ASCII), or NULL. */
const struct kt_meta	*kt_reader_meta_find(const struct kt_reader *,
			    const char *);
/*
 * The trace's rank: distributedInfo.rank (of the keys read so far), else
 * ktRank (the rank a kt filter resolved from its input's name, see
 * kt_writer_rank), else the one its name gives (kt_rank_from_name), else
 * -1.  An event of a merged trace has its own (args.rank, KT_F_RANK).
 * kt_reader_rank_how() also says where it came from (static text:
 * "distributedInfo.rank", "ktRank", a kt_rank_from_name pattern; NULL
 * with -1).
 */
int64_t			 kt_reader_rank(const struct kt_reader *);
int64_t			 kt_reader_rank_how(const struct kt_reader *,
			    const char **);
/*
 * Row numbers, as the reader keeps a ktSourceIndex: 4 bytes each when
 * every one fits (r32), else 8 (r64); kt_rows_at() reads row i < n.
 */
struct kt_rows {
	const uint32_t	*r32;
	const uint64_t	*r64;
	size_t		 n;
};

static inline uint64_t
kt_rows_at(const struct kt_rows *r, size_t i)
{
	return r->r32 != NULL ? r->r32[i] : r->r64[i];
}

/*
 * The input's ktSourceIndex into *rows: 1, or 0 when there is none (rows
 * empty).  *applied (may be NULL) says whether the events' index came
 * from it: one written after traceEvents is known only at the end, so
 * the events were numbered by position and the caller maps them.
 */
int			 kt_reader_rows(const struct kt_reader *,
			    struct kt_rows *, int *);
/*
 * The input's ktSourceIndex as read, whatever the reader's flags (also
 * with KT_READ_POSITIONS, for a filter that numbers events by position
 * and wants their rows too: row p is rows[p] where p < n, else p): 1, or
 * 0 when there is none.
 */
int			 kt_reader_srcindex(const struct kt_reader *,
			    struct kt_rows *);
/*
 * Before reading any event, take the top-level keys after traceEvents
 * from the end of the file (plain files only), so that a filter can stop
 * early and still write them, and so that a ktSourceIndex among them
 * numbers the events from the start.  Returns 0 when the reader has them
 * (it skips them when it gets there), 1 when it cannot, -1 on error.
 */
int			 kt_reader_tail(struct kt_reader *, struct kt_error *);
const struct kt_repairs	*kt_reader_repairs(const struct kt_reader *);
struct kt_repairs	*kt_reader_repairs_mut(struct kt_reader *);
/* Bytes consumed so far, and the input's size when known (else 0). */
uint64_t		 kt_reader_offset(const struct kt_reader *);
uint64_t		 kt_reader_size(const struct kt_reader *);
/*
 * What the input likely holds, for reserving room up front: a plain
 * file's size, a gzip file's inflated size as its trailer says (one
 * member; at least 4 times the file, at most 64 times), else 0.
 */
uint64_t		 kt_reader_size_hint(const struct kt_reader *);

/*
 * Every name kt writes into a trace, defined once.  Top-level keys:
 * row ids across reordering, the rebase, the TSV origin, the merged
 * ranks (rank-tag), a compact view (compact-lanes).
 */
#define KT_KEY_SOURCE_INDEX	"ktSourceIndex"
#define KT_KEY_REBASE		"ktRebaseNs"
#define KT_KEY_ORIGIN		"ktOriginNs"	/* TSV trace row only */
#define KT_KEY_RANKS		"ktRanks"
#define KT_KEY_COMPACT		"ktCompactLanes"
/* The window kt-slice-window cut (ns, as the events' times): integers. */
#define KT_KEY_WINDOW_START	"ktWindowStartNs"
#define KT_KEY_WINDOW_END	"ktWindowEndNs"
#define KT_KEY_RANK		"ktRank"	/* the rank of the input's name */
/* args keys kt adds to events. */
#define KT_ARG_RANK		"rank"		/* rank-tag */
#define KT_ARG_PID		"kt_pid"	/* rank-tag: the pid before */
#define KT_KEY_CARRIED		"kt_carried_from" /* slice-window counters:
						   a top-level key, not an
						   arg (a series) */
#define KT_ARG_CLIP		"kt_clip"	/* slice-window --clip */
#define KT_ARG_REPAIR		"kt_repair"	/* normalize's repairs */
/* Categories and names of the events kt makes. */
#define KT_CAT_LAYER_GUIDE	"layer_guide"	/* layer-track's guides */
#define KT_CAT_MEMORY		"kt_memory"	/* kt-memory's counters */
#define KT_GUIDE_PREFIX		"Layer guide ("	/* a guide row's name */

/* ------------------------------------------------------------------ */
/* Writing. */

struct kt_out;

/*
 * Open an output: path NULL or "-" is stdout; a regular file (or a name
 * not there yet) is written as a temporary file beside path that
 * kt_out_commit() renames over it.  A symbolic link, a device, a FIFO or
 * a socket is written through, never renamed over: one that names the
 * file of stdout or stderr (/dev/stdout, /proc/self/fd/1) writes to that
 * descriptor as it is (appending when it appends), a link to a regular
 * file truncates it.  level < 0 means
 * gzip when the name ends in ".gz" at a fast level; 0..9 forces that
 * gzip level for a ".gz" name.  Returns NULL with err set.
 */
struct kt_out	*kt_out_open(const char *, int, struct kt_error *);
int		 kt_out_write(struct kt_out *, const void *, size_t);
/*
 * Write bytes [from, from + n) of the regular file fd to the output: by
 * the system (sendfile) when the output is plain and takes it, else read
 * into the output's buffer.  The bytes copied (fewer than n when the file
 * ends first), or -1: a read failed (errno) or a write (kt_out_errno).
 */
int64_t		 kt_out_from_fd(struct kt_out *, int, uint64_t, uint64_t);
/* The temporary file's path, or "" (for removal by a signal handler). */
const char	*kt_out_tmppath(const struct kt_out *);
/* The name messages use ("<stdout>" for stdout). */
const char	*kt_out_name(const struct kt_out *);
/* The errno of the first failed write, or 0. */
int		 kt_out_errno(const struct kt_out *);
/* Flush and close; rename the temporary file into place.  0 or -1. */
int		 kt_out_commit(struct kt_out *, struct kt_error *);
/*
 * Close an output's file for now (a regular file's temporary only; one
 * written through stays open), freeing its buffers; the next write or
 * the commit opens it again to append (kt_out_resume; a gzip output goes
 * on in a new member, which gzip readers join).  So that many outputs
 * can wait for their end with a few descriptors and little memory.
 * 0 or -1 (kt_out_errno).
 */
int		 kt_out_suspend(struct kt_out *);
int		 kt_out_resume(struct kt_out *);
/* Close and remove the temporary file.  Safe after failure. */
void		 kt_out_abort(struct kt_out *);

struct kt_writer;

#define KT_WRITE_TSV	0x01
#define KT_WRITE_RANK	0x02	/* TSV: a rank column (from args.rank) */
/*
 * JSON: keep each event's row number (memory only once one differs from
 * its position: 8 bytes an event from there) and have kt_writer_end()
 * write them as ktSourceIndex after the events, unless kt_writer_begin()
 * was given an index.  For streaming filters that merge, drop or reorder.
 */
#define KT_WRITE_ROWS	0x04

/*
 * A trace writer on out (borrowed).  Call kt_writer_begin() with the
 * top-level keys known so far (it writes those before traceEvents, and in
 * TSV those after it too), then kt_writer_event() for each event and
 * kt_writer_end() with all the keys (it writes the rest).  srcindex, when not
 * NULL, holds the row numbers of the events in output order and is
 * written as the ktSourceIndex key (JSON) so that row ids survive.
 */
struct kt_writer *kt_writer_new(struct kt_out *, unsigned);
int	 kt_writer_begin(struct kt_writer *, const struct kt_meta *, size_t,
	    const uint64_t *, size_t);
/* The same with the row numbers as a reader keeps them (NULL: none). */
int	 kt_writer_begin_rows(struct kt_writer *, const struct kt_meta *,
	    size_t, const struct kt_rows *);
/*
 * Set the TSV time origin (rel_ns counts from it).  Without it the first
 * event that is not metadata and has a time sets it, and the events
 * before that one wait in memory.
 */
void	 kt_writer_origin(struct kt_writer *, int64_t);
/*
 * Before kt_writer_begin(): write "ktRank": rank among the keys before
 * traceEvents (rank >= 0), so that the rank an input's file name gave
 * survives a pipe.  kt_reader_rank_to_keep() gives that rank when rd's
 * rank came from its name (not from distributedInfo or ktRank, and rd is
 * no merged trace: no ktRanks), else -1.
 */
void	 kt_writer_rank(struct kt_writer *, int64_t);
int64_t	 kt_reader_rank_to_keep(const struct kt_reader *);
int	 kt_writer_event(struct kt_writer *, const struct kt_event *);
/*
 * Write an event given only as its bytes and row number: JSON writes
 * the bytes; TSV, whose columns need the fields, scans them (as does
 * kt_writer_event() with an event whose known lacks KT_FCOLUMNS).
 * 0 or -1.
 */
int	 kt_writer_raw(struct kt_writer *, const char *, size_t, uint64_t);
/*
 * JSON without KT_WRITE_ROWS: write n events (n >= 1) given as their
 * bytes already joined by the writer's separator (KT_WRITE_SEP), as
 * they are.  0, or -1 (TSV, row numbers to keep, a write failed).
 */
#define KT_WRITE_SEP	",\n  "
int	 kt_writer_joined(struct kt_writer *, const char *, size_t,
	    uint64_t);
/*
 * The same, with the bytes [off, off + len) of the regular file fd
 * (kt_out_from_fd): the bytes copied, or -1.
 */
int64_t	 kt_writer_joined_fd(struct kt_writer *, int, uint64_t, uint64_t,
	    uint64_t);
int	 kt_writer_end(struct kt_writer *, const struct kt_meta *, size_t);
/* The same, writing the row numbers srcindex as ktSourceIndex after the
 * events (JSON), for writers that learn them only as they go. */
int	 kt_writer_end_index(struct kt_writer *, const struct kt_meta *,
	    size_t, const uint64_t *, size_t);
void	 kt_writer_free(struct kt_writer *);

/*
 * Serialise a new object into b: kt_obj_begin(), then members (a string
 * value escaped; raw JSON text; a time from ns, printed as microseconds;
 * an integer), then kt_obj_end().  Each returns 0 or -1.
 */
int	 kt_obj_begin(struct kt_buf *);
int	 kt_obj_str(struct kt_buf *, const char *, const char *);
int	 kt_obj_raw(struct kt_buf *, const char *, const char *, size_t);
int	 kt_obj_time(struct kt_buf *, const char *, int64_t);
int	 kt_obj_int(struct kt_buf *, const char *, int64_t);
int	 kt_obj_end(struct kt_buf *);
/* Append s[0..n) escaped for a JSON string (no quotes). */
int	 kt_json_escape(struct kt_buf *, const char *, size_t);
/*
 * The one JSON unescaper: decode a string's contents p[0..n) (without
 * the quotes) into b, replacing what b held.  \uXXXX becomes UTF-8, a
 * surrogate pair one code point, a lone surrogate U+FFFD; an invalid
 * escape keeps the character after the backslash.  0 or -1 (memory).
 */
int	 kt_json_unescape(const char *, size_t, struct kt_buf *);

/*
 * memmem(3) for the short texts of one event: the first place of the
 * needle's n bytes in the haystack's, or NULL.
 */
const char *kt_memfind(const char *, size_t, const char *, size_t);

/*
 * A top-level key's value as a new jansson DOM (json_decref it), or NULL
 * with err set.  Numbers are read by jansson: use it for metadata, never
 * to print times.
 */
struct json_t;
struct json_t	*kt_meta_json(const struct kt_meta *, struct kt_error *);

/* Append the JSON text with whitespace outside strings removed. */
int	 kt_json_minify(const char *, size_t, struct kt_buf *);

/* ------------------------------------------------------------------ */
/*
 * Tables: what the analysis filters (kt-bucket, kt-gaps, ...) print.  A
 * table is a header and rows of text cells, written as TSV under a header
 * line, as an aligned text table (for a terminal), or as JSON lines.
 */
enum kt_table_form {
	KT_TABLE_TSV = 1,
	KT_TABLE_TEXT,
	KT_TABLE_JSON
};

struct kt_table;

/*
 * A new table with these column names; "name:n" marks a number column
 * (right-aligned in text; in JSON lines a JSON number, or null for "",
 * "-" or "unknown").  NULL when out of memory.
 */
struct kt_table	*kt_table_new(const char *const *, size_t);
/* A new table with t's columns and no rows.  NULL when out of memory. */
struct kt_table	*kt_table_new_like(const struct kt_table *);
/* A copy of the first n rows of a table (all if it has fewer); NULL out
   of memory. */
struct kt_table	*kt_table_head(const struct kt_table *, size_t);
void		 kt_table_free(struct kt_table *);
/* Append the next cell, row after row (tabs and newlines become spaces). */
int		 kt_table_cell(struct kt_table *, const char *);
/* A cell of n bytes (no NUL needed). */
int		 kt_table_celln(struct kt_table *, const char *, size_t);
/* A row id cell, "kind:N" (kt(7)). */
int		 kt_table_rowid(struct kt_table *, int, uint64_t);
int		 kt_table_cellf(struct kt_table *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
int		 kt_table_int(struct kt_table *, int64_t);
/* num/den with that many decimals, rounded; "-" when den is 0. */
int		 kt_table_ratio(struct kt_table *, int64_t, int64_t, int);
/* 100 x num / den with one decimal, exact for any int64 values. */
int		 kt_table_pct(struct kt_table *, int64_t, int64_t);
size_t		 kt_table_rows(const struct kt_table *);
const char	*kt_table_get(const struct kt_table *, size_t, size_t);
size_t		 kt_table_ncols(const struct kt_table *);
/* Column col's name (without ":n"), or NULL past the last. */
const char	*kt_table_colname(const struct kt_table *, size_t);
/* The index of the column of that name, or -1. */
int		 kt_table_column(const struct kt_table *, const char *);
/*
 * A TSV table (a file, "-" for stdin) read back: its header line names
 * the columns, every later line is a row of as many cells; empty lines
 * and lines that begin with '#' are skipped.  NULL with err set.
 */
struct kt_table	*kt_table_load(const char *, struct kt_error *);

/*
 * Merging tables (lib/model/merge.c): TSV tables of one kind, one per
 * rank or per trace, into the table the merged trace would give.  Each
 * column has a role: key columns join the rows (equal keys become one
 * row), sums add (an overflow is an error, never a wrap), max and min
 * keep the extreme, a ratio or a percentage is computed again from the
 * merged numerator and denominator (never averaged), a percentile
 * stays only on a row that one input alone has ("-" otherwise), a row
 * id (kind:index, per file) is taken from the row that gave the max of
 * its column and cites that file ("FILE:kind:index"), and a "first"
 * cell is the first input's.  A cell "-" is no value (a sum or max of
 * none is "-").  NULL with err set: unreadable, not a table of that
 * kind ("not a KIND table (TSV with its header)"), columns that differ
 * from the first input's, a cell that is not an integer, an overflow,
 * or (for kinds whose keys are per rank) a key in two inputs.
 */
enum kt_merge_role {
	KT_MERGE_KEY, KT_MERGE_SUM, KT_MERGE_MAX, KT_MERGE_MIN,
	KT_MERGE_RATIO, KT_MERGE_PCT, KT_MERGE_PCTL, KT_MERGE_ROWID,
	KT_MERGE_FIRST
};

struct kt_merge_col {
	const char	*name;		/* as in the header */
	int		 role;		/* enum kt_merge_role */
	int		 num;		/* a number column (text and JSON forms) */
	int		 need;		/* every table of the kind has it */
	const char	*a;		/* RATIO, PCT: the numerator column;
					   ROWID: the MAX column that picks
					   the row */
	const char	*b;		/* RATIO: the denominator column; PCT:
					   the column whose sum over the
					   denominator rows is the whole */
	int		 decimals;	/* RATIO */
	const char	*alt;		/* PCT: in rows whose first cell is
					   alt_row, alt is the numerator */
	const char	*alt_row;
};

/* A merged row as the order and the sections see it. */
struct kt_merge_row {
	const char	*const *cell;	/* per spec column: the output cell,
					   NULL when the tables lack it */
	const size_t	*hdr;		/* the tables' columns in order: each
					   one's spec column */
	size_t		 nhdr;
	const char	*key;		/* the key cells joined by tabs */
	size_t		 first;		/* first seen: file, then row order */
	int		 inputs;	/* how many input rows it merges */
};

struct kt_merge_spec {
	const char	*kind;		/* "kt-bucket", for messages */
	const struct kt_merge_col *cols;	/* every column a table may have */
	size_t		 ncols;
	const char	*first;		/* the name of the first column */
	/* PCT: the denominator rows are those whose den_col is den_row;
	   without such rows, every row. */
	const char	*den_col, *den_row;
	int		 unique;	/* a key in two inputs is an error */
	/* The rows in order: section (ascending), then cmp; the top
	   (when > 0) is kept of section 0, every row of the others. */
	int		(*section)(const struct kt_merge_row *,
			    const struct kt_merge_spec *);
	int		(*cmp)(const struct kt_merge_row *,
			    const struct kt_merge_row *,
			    const struct kt_merge_spec *, const void *);
	const void	*ctx;		/* for cmp */
	/* Cells that are the same in every row that is not data (rows
	   that may be left out when others exist): a row whose cell of
	   column none_col is none_val is kept only when no row is not. */
	const char	*none_col, *none_val;
};

struct kt_table	*kt_merge_tables(const struct kt_merge_spec *,
		    char *const *, size_t, int64_t, struct kt_error *);
/* The index of column name in spec, or -1. */
int		 kt_merge_spec_col(const struct kt_merge_spec *, const char *);
/* A whole decimal integer cell: 0 and *v, or -1. */
int		 kt_merge_int(const char *, int64_t *);
/* Compare two cells as integers when both are, else as text. */
int		 kt_merge_cmp_cells(const char *, const char *);
/* Write the table (header: whether to write the header line).  0 or -1. */
int		 kt_table_write(const struct kt_table *, enum kt_table_form,
		    int, struct kt_out *);
/*
 * Write the rows so far and drop them (the header with the first),
 * so that a long table streams: TSV and JSON only (an aligned text
 * table needs every row first: a no-op), and only between rows.  A
 * later kt_table_write writes the rest, without the header.  0 or -1.
 */
int		 kt_table_flush(struct kt_table *, enum kt_table_form, int,
		    struct kt_out *);
/* forced when it is a form, else text when fd is a terminal, else TSV. */
enum kt_table_form kt_table_form_pick(int, int);
/*
 * num/den as decimal text with d (0..9) decimals into out (64 bytes),
 * rounded half away from zero, from integers only; "-" when den is 0.
 * Returns the length.
 */
size_t		 kt_ratio_format(int64_t, int64_t, int, char *);
/* 100 x num/den with one decimal, the same way, exactly (no overflow). */
size_t		 kt_pct_format(int64_t, int64_t, char *);

/* ------------------------------------------------------------------ */
/* Command-line helpers shared by the filters; these print. */

void	 kt_cli_init(const char *);
const char *kt_cli_name(void);
void	 kt_cli_warn(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
void	 kt_cli_error(const struct kt_error *);
/*
 * Register an output to remove (kt_out_abort) if the program dies, one
 * of any number; kt_cli_unset_output() takes one off the list.
 */
void	 kt_cli_set_output(struct kt_out *);
void	 kt_cli_unset_output(struct kt_out *);
/*
 * One more temporary file (of at most eight) to remove if a signal kills
 * the program; kt_cli_drop_temp() forgets one.
 */
void	 kt_cli_add_temp(const char *);
void	 kt_cli_drop_temp(const char *);
/*
 * The inputs (paths, "-" for stdin; none: stdin): from then on every
 * output that kt_cli_out_open() opens is refused (exit 2) when it names
 * one of them.
 */
void	 kt_cli_inputs(char *const *, int);
/*
 * Call fn(arg) when the program ends through exit(3), kt_cli_die()
 * included (one at a time: a later call replaces it; fn NULL: none), so
 * that a filter can clean up its own state without a file-scope pointer.
 */
void	 kt_cli_on_exit(void (*)(void *), void *);
/* Print e (when not NULL), remove the registered outputs, exit 2. */
void	 kt_cli_die(const struct kt_error *) __attribute__((noreturn));
void	 kt_cli_nomem(void) __attribute__((noreturn));
/* Parse a whole decimal integer in [min, max]; on error print and exit 2. */
long long kt_cli_int(const char *, const char *, long long, long long);
/*
 * Append the row ids of a --id list to *ids (*n of them; realloc'd):
 * "kind:N" or "N", comma-separated (the kind is not checked: a row
 * number names one event).  On a bad id print "OPT: bad row id" and
 * exit 2.
 */
void	 kt_cli_ids(const char *, const char *, uint64_t **, size_t *);
/*
 * Make the folder path and the missing folders above it (mkdir -p).
 * 0, or -1 with errno set; an existing non-folder is left for the
 * caller's stat to refuse.
 */
int	 kt_cli_mkdir(const char *);
/* Refuse an output path that names one of the inputs.  0 or -1 (printed). */
int	 kt_cli_check_output(const char *, char *const *, int);
/*
 * A table filter's --merge: kt_cli_merge_inputs() registers the tables
 * named (argv; none: "-", stdin) as inputs, checks the output against
 * them and returns the paths and their number in *n, or NULL (printed:
 * the caller exits 2).  kt_cli_merge_write() writes t, the merge's
 * result, to co's output in co's form and frees it, or dies with err
 * when t is NULL; it returns 0.
 */
struct kt_cli_opts;
char	**kt_cli_merge_inputs(char **, int, const struct kt_cli_opts *,
	    size_t *);
int	 kt_cli_merge_write(struct kt_table *, const struct kt_error *,
	    const struct kt_cli_opts *);
/* Print one stderr line per kind of repair; returns the number of kinds. */
int	 kt_cli_report_repairs(const char *, const struct kt_repairs *);
/*
 * Before kt_writer_begin(): kt_writer_rank(w, kt_reader_rank_to_keep(rd))
 * when that rank is one, and say so on stderr ("note: rank N (file name:
 * rank-N) written as ktRank"), for the output is then not the input's
 * bytes alone.  Returns the rank added, or -1.
 */
int64_t	 kt_cli_keep_rank(struct kt_writer *, const struct kt_reader *);
/*
 * The same with what kt_reader_rank_to_keep and kt_reader_rank_how said
 * earlier (a filter that writes after its reader read on, kt-select):
 * rank (-1: none), the input's name, how.
 */
int64_t	 kt_cli_keep_rank_as(struct kt_writer *, int64_t, const char *,
	    const char *);
/*
 * A view's data condition: when m has no device activity at all (no
 * kernel, gpu_memcpy, gpu_memset or MTIA device event), say so in one
 * line and return 1 (the exit status), else 0.
 */
struct kt_model;
int	 kt_cli_no_device(const struct kt_reader *, const struct kt_model *);
/* The same warning for the trace named name (its reader gone). */
void	 kt_cli_warn_no_device(const char *);
/* Print progress on stderr when it is a terminal and the work is long. */
void	 kt_cli_progress(const struct kt_reader *);
void	 kt_cli_progress_done(void);

/*
 * One trace in, one output out: the mechanics every filter's main()
 * repeats, each of which prints the family's message and exits 2 on
 * failure (removing the registered output).
 *
 * kt_cli_open_one() opens path (NULL or "-": stdin) and returns its first
 * trace (a new reader; *srcp gets the new source); "NAME: no trace" when
 * it has none, name NULL meaning path, or <stdin> for "-".
 */
struct kt_reader *kt_cli_open_one(const char *, const char *, const char *,
		    unsigned, struct kt_source **);
/*
 * After the first trace's last event: when another trace follows, print
 * "NAME: MSG" and exit 2.  strict: look at any source, and a failure to
 * read on is an error too; else only an archive is looked at, and a
 * failure is ignored.
 */
void	 kt_cli_one_trace(struct kt_source *, const char *, const char *,
	    int);
/* The analysis model of rd with progress (kt_model_load); new. */
struct kt_model;
/*
 * Whether to read on a second thread (kt_ahead_start): a second CPU, and
 * KT_THREADS in the environment is not 1.
 */
int		 kt_cli_threads(void);
struct kt_model	*kt_cli_model(struct kt_reader *);
struct kt_model	*kt_cli_model_with(struct kt_reader *, unsigned);
/* kt_cli_model_with, with kt_model_load_each's each and ctx. */
struct kt_model	*kt_cli_model_each(struct kt_reader *, unsigned,
		    int (*)(void *, const struct kt_event *, struct kt_error *),
		    void *);
/*
 * kt_cli_model_with that returns NULL with err set instead of exiting,
 * with progress on the terminal or without (on a worker thread: several
 * models made at once).
 */
struct kt_model	*kt_cli_model_try(struct kt_reader *, unsigned, int,
		    struct kt_error *);
/*
 * Whether every one of the n paths is a regular file smaller than
 * KT_SMALL_FILE on disk: so small that one reader of it starts no thread,
 * and several of them are better read at once, one per CPU.
 */
int		 kt_cli_small_files(char *const *, int);
/*
 * kt_out_open(path, level), registered with kt_cli_set_output(), after
 * the check against the inputs of kt_cli_inputs().
 */
struct kt_out	*kt_cli_out_open(const char *, int);
/*
 * Unregister and commit out.  When the commit fails, or failed says a
 * write went wrong before, exit 2 with the reason: the commit's, else
 * *err as the caller set it (err may be NULL).
 */
void	 kt_cli_out_commit(struct kt_out *, int, struct kt_error *);
/*
 * Write a table to path (NULL or "-": stdout) atomically, in form
 * (0: text on a terminal, else TSV), with its header line.
 */
void	 kt_cli_write_table(const struct kt_table *, const char *, int);
/*
 * A table that streams: kt_cli_table_open opens the output (as
 * kt_cli_write_table does) and picks the form; kt_cli_table_flush
 * writes the rows so far when many are held (TSV, JSON lines);
 * kt_cli_table_close writes the rest and commits.  Exit 2 on an error.
 */
struct kt_cli_table {
	struct kt_out	*out;
	const char	*path;
	int		 form;		/* enum kt_table_form */
};
void	 kt_cli_table_open(struct kt_cli_table *, const char *, int);
void	 kt_cli_table_flush(struct kt_cli_table *, struct kt_table *);
void	 kt_cli_table_close(struct kt_cli_table *, const struct kt_table *);
/*
 * Rows 0..n-1 of t, the i-th made by row(arg, worker, t', i) (cells of
 * whole rows into t'; 0, or -1 out of memory), written to ct in order.
 * TSV and JSON lines are made in blocks on up to kt_cli_row_workers()
 * threads (worker 0 is the caller's), each into a table of its own, and
 * written block after block: row must only read what it shares, and
 * keep what it counts per worker.  The text form is made here, into t,
 * for kt_cli_table_close to align.  Exit 2 on an error.
 */
typedef int kt_cli_row_fn(void *, unsigned, struct kt_table *, size_t);
#define KT_CLI_MAX_WORKERS	8
unsigned kt_cli_row_workers(void);
void	 kt_cli_table_rows(struct kt_cli_table *, struct kt_table *, size_t,
	    kt_cli_row_fn *, void *);
/*
 * Tasks 0..n-1, task(arg, i) each, on up to kt_cli_row_workers()
 * threads (the caller's one of them), each taking the next task not
 * taken; returns when all are done.  A task must only read what it
 * shares, and keep its failures to report after (it must not exit).
 */
void	 kt_cli_tasks(size_t, void (*)(void *, size_t), void *);
/* Refuse --level (>= 0) unless output is a ".gz" file.  0 or -1. */
int	 kt_cli_check_level(int, const char *);
/*
 * The options most filters share, in the same letters: -h (usage to
 * stdout, exit 0), -j, -t, -T (the table form: JSON lines, TSV, text),
 * -l N (the gzip level, 0 to 9), -m GLOB (the archive member), -o FILE,
 * -S (strict reading) and -V (print the version, exit 0).  Call
 * kt_cli_opt() with getopt's result ch and optarg in the default case
 * of the option switch: it takes these, and for any other ch (an unknown
 * option) writes usage to stderr and exits 2.  A filter whose letter
 * means something else handles it in a case of its own.
 */
struct kt_cli_opts {
	const char	*member;
	const char	*output;
	unsigned	 rflags;
	int		 form;		/* enum kt_table_form, or 0 */
	int		 level;		/* -1: none given */
};

#define KT_CLI_OPTS_INIT	{ NULL, NULL, 0, 0, -1 }

void	 kt_cli_opt(struct kt_cli_opts *, int, const char *,
	    void (*)(FILE *));
/*
 * The getopt_long value of --spool-max SIZE (the cap on a copy of a
 * pipe, kt_cli_input_path), which kt_cli_opt handles.
 */
#define KT_CLI_SPOOL_MAX	0x1000
/*
 * The getopt_long value of --step-regex RE, which every view takes and
 * kt_cli_opt handles: RE is checked (kt_regex_check, regcomp) at once,
 * and kt_cli_model makes the steps with it (kt_model_step_regex).
 */
#define KT_CLI_STEP_REGEX	0x1001
/*
 * Copy standard input into a temporary file (kt_spool_stdin) removed when
 * the program ends, however it ends; a regular file at its start is not
 * copied but read again as /proc/self/fd/0.  Returns its path (borrowed;
 * the same one when called again).
 */
char	*kt_cli_spool_stdin(void);
/*
 * The path to read an input from more than once: path itself for a
 * regular file; for "-" or NULL the copy of stdin; for a FIFO, a pipe
 * (<(zcat t.gz)) or a device, a copy of it read once (kt_spool_fd, cap
 * $KT_SPOOL_MAX bytes, 64 GiB by default), named path in messages.
 */
char	*kt_cli_input_path(char *);
/*
 * A new reader's trace as a plain JSON file to read again by place: a
 * copy of its bytes decompressed (kt_spool_reader, cap as above) removed
 * when the program ends, named as the trace is in messages.  Returns its
 * path (borrowed).
 */
char	*kt_cli_spool_reader(struct kt_reader *);
/*
 * A temporary file for kt_source_open_tee's copy of an input named name,
 * removed when the program ends, and in messages named as the input:
 * its descriptor, its path in *path (borrowed), the cap on a copy in
 * *max.
 */
int	 kt_cli_tee_file(const char *, const char **, uint64_t *);
/*
 * kt_source_open() for a filter: the copy of standard input that
 * kt_cli_spool_stdin() made is named "<stdin>" in messages.
 */
struct kt_source *kt_cli_source_open(const char *, const char *, unsigned,
		    struct kt_error *);
/*
 * The default path of a report beside output: OUTPUT SUFFIX in buf (n
 * bytes), and 1, when output is a regular file or a name not there yet;
 * 0 for stdout, a link, a device or a FIFO (such an output needs an
 * explicit report path).
 */
int	 kt_cli_report_beside(const char *, const char *, char *, size_t);
/* A duration option with a unit (ns, us, ms, s), or whole ns, >= 0. */
int64_t	 kt_cli_duration(const char *, const char *);
/* A positive decimal number of GB ("79.5") in bytes (10^9 per GB). */
int64_t	 kt_cli_gb(const char *, const char *);
/*
 * A size option: bytes, or a number with K, M, G or T (powers of 1024,
 * an optional "iB" or "B"), above 0, as --spool-max takes it; else print
 * "OPT: 'TEXT' is not a size ..." and exit 2.
 */
uint64_t kt_cli_size(const char *, const char *);

/* ------------------------------------------------------------------ */
/* SHA-256 (lib/sha256.c), for reports that name their input by digest. */

struct kt_sha256 {
	uint32_t	 h[8];
	uint64_t	 len;		/* bytes added so far */
	unsigned char	 buf[64];
	size_t		 nbuf;
	int		 ni;		/* the CPU's SHA extensions are used */
};

void	 kt_sha256_init(struct kt_sha256 *);
void	 kt_sha256_update(struct kt_sha256 *, const void *, size_t);
/* The 32-byte digest; start again with kt_sha256_init to reuse. */
void	 kt_sha256_final(struct kt_sha256 *, unsigned char[32]);
/* Finish as 64 lowercase hex digits and a NUL (65 bytes). */
void	 kt_sha256_hex(struct kt_sha256 *, char[65]);
/* The digest of the file at path as hex.  0, or -1 with err filled. */
int	 kt_sha256_file(const char *, char[65], struct kt_error *);
/*
 * kt_sha256_file() on a thread of its own while the caller goes on (for a
 * report written after the output): kt_sha256_start(path, threads), then
 * kt_sha256_wait(), which gives its result and frees it.  With threads 0,
 * or when no thread can be started, the file is hashed in
 * kt_sha256_wait().  start returns NULL only when out of memory.
 */
struct kt_sha256_job;
struct kt_sha256_job *kt_sha256_start(const char *, int);
int	 kt_sha256_wait(struct kt_sha256_job *, char[65], struct kt_error *);

/* ------------------------------------------------------------------ */
/*
 * An input's bytes (lib/hold.c), for filters that hold a whole trace in
 * memory or write the input again.  When the input is a plain JSON file,
 * an event read from it without a repair is held as its place in the
 * file, and its bytes are read again when they are needed (through a few
 * windows that move forward: in the file's order, or a merge of a few
 * runs of it, each byte is read about once; a held trace costs its
 * records, not its text); every other event is copied (by the store).  The file is read,
 * never mapped: a file that shrinks cannot fault.
 */
struct kt_hold;

/*
 * A new holder; path (NULL or "-": none, events are copied) is the file
 * to hold, name its name in messages.  NULL when out of memory.
 */
struct kt_hold	*kt_hold_new(const char *, const char *);
/*
 * Is ev, read from the held file (ev->end is its place), the file's own
 * bytes?  1 with its offset in *off (read them again with
 * kt_hold_bytes), 0 (h NULL, no plain file, a repaired event: keep a
 * copy), or -1 with err set (one event in 1024 is compared with the
 * file, which must be the one read).
 */
int		 kt_hold_where(struct kt_hold *, const struct kt_event *,
		    uint64_t *, struct kt_error *);
/*
 * The held file's bytes [off, off + len), an event's by kt_hold_where,
 * read again: borrowed until the next call (the holder's windows move).
 * NULL with err set when they cannot be read or are no event's now (the
 * file changed: kt_hold_check fails from then on).
 */
const char	*kt_hold_bytes(struct kt_hold *, uint64_t, size_t,
		    struct kt_error *);
/*
 * Read the held file's bytes [off, off + len) into buf: events, the
 * first beginning there and the last ending at its end (checked as
 * kt_hold_bytes checks one).  0, or -1 with err set.
 */
int		 kt_hold_read(struct kt_hold *, char *, uint64_t, size_t,
		    struct kt_error *);
/*
 * Write the held file's bytes [off, off + len), n events joined by the
 * writer's separator, to w (kt_writer_joined_fd: by the system where the
 * output takes it, not read here); their ends are checked as
 * kt_hold_read checks.  0, -1 with err set (the file changed), or -2
 * when the writer failed (kt_out_errno).
 */
int		 kt_hold_joined(struct kt_hold *, struct kt_writer *,
		    uint64_t, uint64_t, uint64_t, struct kt_error *);
/* How many times kt_hold_bytes read the file (256 KB or more at a time). */
uint64_t	 kt_hold_reads(const struct kt_hold *);
/* Does it hold a plain JSON file (events kept as their places)? */
int		 kt_hold_plain(const struct kt_hold *);
/*
 * Did the file stay as it was opened (its size and modification time,
 * and every event read again)?  Call it after reading, before writing
 * what was read, and after writing, before the output is committed.  0
 * (also without a file), or -1 with err set.
 */
int		 kt_hold_check(const struct kt_hold *, struct kt_error *);
void		 kt_hold_free(struct kt_hold *);
/* Copy bytes [from, to) of the file at path (to 0: to its end) to out. */
int		 kt_file_copy(const char *, uint64_t, uint64_t, struct kt_out *);

/*
 * Places (lib/core/hold.c): where the events of a pass are, by their
 * position, for a filter that decides in one pass and writes in a later
 * step (kt-select, kt-inspect): 8 bytes an event read from a held plain
 * file (its offset and length), its bytes copied otherwise (a repaired
 * event; use places only where kt_hold_plain holds, else every event
 * would be a copy).  The bytes are read again by kt_places_get.
 */
struct kt_places;

/* New places over holder h (borrowed).  NULL when out of memory. */
struct kt_places *kt_places_new(struct kt_hold *);
/* Note ev, read at position pos (kt_reader_position).  0 or -1, err set. */
int		 kt_places_add(struct kt_places *, uint64_t,
		    const struct kt_event *, struct kt_error *);
/*
 * The bytes of the event at position pos in *raw, *len (borrowed until
 * the next call: read positions in order), and in *flags (may be NULL)
 * its KT_EV_REPAIRED and KT_EV_PATCHED as read: 1, 0 when no event was
 * noted there, or -1 with err set (the file changed).
 */
int		 kt_places_get(struct kt_places *, uint64_t, const char **,
		    size_t *, unsigned *, struct kt_error *);
void		 kt_places_free(struct kt_places *);

/* ------------------------------------------------------------------ */
/*
 * The event store (lib/core/store.c): the events a filter holds, as
 * compact records in an array, their bytes in the store's arena (or a
 * holder's, or none), their threads interned, and of their fields only
 * the offsets the filter asked for.  A record is 48 bytes, and 8 more
 * per field kept and for its place in a held file (kt(7) gives the
 * memory per held event).
 *
 * kt_store_view() makes an event of a record without scanning it (the
 * fields kept are its known ones); kt_store_event() scans the bytes
 * again for the whole event, for a filter step that needs a field not
 * kept.
 * Records move (kt_store_add, removals): refer to them by position.
 * Bytes move only when a removal compacts the store.
 */
struct kt_rec {
	const char	*raw;		/* its bytes (NULL: none kept) */
	uint64_t	 index;		/* its row number */
	int64_t		 ts;		/* ns, when flags has KT_EV_TS */
	int64_t		 dur;		/* ns, when KT_EV_DUR */
	uint32_t	 len;
	uint32_t	 thread;	/* interned pid/tid, or UINT32_MAX */
	uint32_t	 aux;		/* the filter's own: 0 when added */
	uint8_t		 flags;		/* KT_EV_* of the event read */
	uint8_t		 kind;		/* enum kt_kind */
	char		 ph;
	uint8_t		 tag;		/* the filter's own: 0 when added */
};

#define KT_STORE_THREADS	0x01	/* intern each event's pid/tid */
#define KT_STORE_NOBYTES	0x02	/* keep no bytes: records only */

struct kt_store;

/*
 * A new store keeping fields (a mask of KT_FBIT bits) of each event;
 * with a holder (borrowed; NULL: none) the events read from a held file
 * keep only their place in it (kt_hold_where), 8 bytes, and their bytes
 * are read again by kt_store_bytes and kt_store_load.  NULL when out of
 * memory.
 */
struct kt_store	*kt_store_new(unsigned, uint32_t, struct kt_hold *);
void		 kt_store_free(struct kt_store *);
/*
 * Keep ev (read by rd, which only a holder needs: NULL otherwise) as a
 * new last record; returns it (valid until the store changes), or NULL
 * with err set (out of memory, an event or field of 4 GB or more).
 */
struct kt_rec	*kt_store_add(struct kt_store *, const struct kt_reader *,
		    const struct kt_event *, struct kt_error *);
/* Keep record i of another store (its bytes copied) as a new last one. */
struct kt_rec	*kt_store_copy(struct kt_store *, const struct kt_store *,
		    size_t, struct kt_error *);
/* Replace record i with ev (its old bytes freed when the store compacts). */
struct kt_rec	*kt_store_set(struct kt_store *, size_t,
		    const struct kt_reader *, const struct kt_event *,
		    struct kt_error *);
/* The records, in order (borrowed: valid until the store changes). */
struct kt_rec	*kt_store_recs(struct kt_store *, size_t *);
size_t		 kt_store_count(const struct kt_store *);
/* The interned pid/tid keys (raw pid text, tab, raw tid text). */
const struct kt_intern *kt_store_threads(const struct kt_store *);
/*
 * Record i as an event, without a scan (see above); its raw is NULL when
 * its bytes are in a held file (kt_store_load reads them).
 */
void		 kt_store_view(const struct kt_store *, size_t,
		    struct kt_event *);
/*
 * Where record i ends in the held file (its kt_event end), or 0 when
 * its bytes are kept (or none).
 */
uint64_t	 kt_store_end(const struct kt_store *, size_t);
/*
 * Record i's bytes (r->len of them): the kept ones, or those of a held
 * file read again (borrowed until the next call: read the records in
 * order).  NULL with err set when none are kept or the file changed.
 */
const char	*kt_store_bytes(const struct kt_store *, size_t,
		    struct kt_error *);
/* Record i as kt_store_view() makes it, with its bytes.  0 or -1. */
int		 kt_store_load(const struct kt_store *, size_t,
		    struct kt_event *, struct kt_error *);
/* Record i as a whole event: its bytes scanned again.  0 or -1. */
int		 kt_store_event(const struct kt_store *, size_t,
		    struct kt_event *, struct kt_error *);
/*
 * The records' positions sorted stably by key(rec, ctx) (equal keys keep
 * their order): a new array of kt_store_count() entries (free it), or
 * NULL when out of memory.  The records stay where they are.
 */
uint32_t	*kt_store_order(const struct kt_store *, uint64_t (*)(const
		    struct kt_rec *, void *), void *);
/* Forget the first n records. */
void		 kt_store_shift(struct kt_store *, size_t);
/* Keep only the records for which keep(rec, ctx) is true, in order. */
void		 kt_store_keep(struct kt_store *, int (*)(const struct
		    kt_rec *, void *), void *);
/* Bytes of memory the store holds (records, fields, bytes, threads). */
uint64_t	 kt_store_memory(const struct kt_store *);

#ifdef KT_DEBUG_SCANS
/*
 * A debug build (-DKT_DEBUG_SCANS) counts the events scanned whole
 * (kt_scan_value of an event: reading, kt_event_scan, kt_store_event)
 * and skimmed, over the process; kt_cli_init() prints both at exit
 * when KT_DEBUG_SCANS is set in the environment.
 */
void		 kt_debug_scans(uint64_t *, uint64_t *);
/*
 * And the pieces of split reading (kt_ahead): read, read on a thread
 * beside the caller's, read again (their guess was not an event's
 * start), and the splits that ended before the events.
 */
void		 kt_debug_split(uint64_t *, uint64_t *, uint64_t *,
		    uint64_t *);
#endif

/* ------------------------------------------------------------------ */
/*
 * Memory over time (lib/memory.c; kt-memory, kt views): the [memory]
 * instants of a trace per device (rank, Device Type, Device Id), in
 * integer bytes and ns.  Feed every event of a pass with
 * kt_memory_add() (it keeps [memory] instants and ProfilerStep spans
 * only), then call kt_memory_finish() once with the top-level keys, a
 * capacity in bytes that overrides deviceProperties (-1: none) and the
 * trace's rank (kt_reader_rank: the rank of events without args.rank).
 */
struct kt_memory;

struct kt_memory *kt_memory_new(void);
void		 kt_memory_free(struct kt_memory *);
/* Take what ev holds for memory.  0, or -1 when out of memory. */
int		 kt_memory_add(struct kt_memory *, const struct kt_event *);
/* Sort, find the peaks and capacities.  0, or -1 when out of memory. */
int		 kt_memory_finish(struct kt_memory *, const struct kt_meta *,
		    size_t, int64_t, int64_t);
size_t		 kt_memory_ndevices(const struct kt_memory *);
uint64_t	 kt_memory_nevents(const struct kt_memory *);
/* Device i's name ("cuda:0", "cpu") into buf; returns buf. */
const char	*kt_memory_device_name(const struct kt_memory *, size_t,
		    char *, size_t);
/* One row per device (a "no memory events" row when none); new, or NULL. */
struct kt_table	*kt_memory_table(const struct kt_memory *);
/*
 * Merge kt-memory TSV tables (one per rank) into the table of the
 * merged trace: every rank's devices in rank order; a (rank, device) in
 * two inputs is an error (its peaks need its whole series).  NULL with
 * err set.
 */
struct kt_table	*kt_memory_merge(char *const *, size_t, struct kt_error *);
/* The series in at most points rows per device (0: all, max per bucket). */
struct kt_table	*kt_memory_series(const struct kt_memory *, size_t);
/*
 * The counter events: how many samples, and of the k-th sample the
 * event of one series (0 allocated, 1 reserved, 2 headroom; each its own
 * counter) appended to b: 0, 1 when the sample does not know that
 * series, -1 on error.
 */
#define KT_MEMORY_SERIES	3
size_t		 kt_memory_counter_count(const struct kt_memory *);
int		 kt_memory_counter_event(const struct kt_memory *, size_t, int,
		    struct kt_buf *);
/*
 * A self-contained SVG of the curves appended to b (title may be NULL).
 * KT_MEMORY_SVG_POINTS: the points kt-memory --svg --points 0 and kt
 * views draw.
 */
#define KT_MEMORY_SVG_POINTS	2000
int		 kt_memory_svg(const struct kt_memory *, size_t, const char *,
		    struct kt_buf *);

/* ------------------------------------------------------------------ */
/*
 * The analysis model (lib/model.c; kt-bucket, kt-gaps, kt-decompose,
 * kt-overlap, kt views): the few fields of a trace that the analysis
 * filters need, kept as compact records after one pass over a reader
 * (JSON or the TSV event form, sorted or not).  Times are int64 ns as
 * written (ts x 1000); names are interned (unescaped UTF-8).  Every
 * array is public and read-only for callers; indexes into them are
 * uint32_t, KT_NO (UINT32_MAX) meaning none.
 */
#define KT_NO	UINT32_MAX

/* A GPU device: one per (rank, GPU pid) of the trace. */
struct kt_device {
	int64_t		 rank;		/* args.rank, distributedInfo.rank or -1 */
	int64_t		 index;		/* args.device, else the pid, else -1 */
	int64_t		 capacity;	/* deviceProperties totalGlobalMem, or -1 */
	uint32_t	 pid;		/* interned raw pid text */
	uint32_t	 nstreams;	/* distinct streams with activity */
	int64_t		 end;		/* the latest end (ts + dur) of its
					   activities, or INT64_MIN */
	uint32_t	 first;		/* its activities: act[first..first+nact) */
	uint32_t	 nact;
};

/* Communication args of a GPU activity (record_param_comms). */
struct kt_comm {
	int64_t		 in_nelems;	/* -1 when absent */
	int64_t		 out_nelems;
	int64_t		 group_size;
	int64_t		 seq;
	int64_t		 comms_id;
	uint32_t	 coll;		/* Collective name, interned, or KT_NO */
	uint32_t	 dtype;		/* dtype, interned, or KT_NO */
	uint32_t	 pg;		/* Process Group Name, or KT_NO */
};

/* A GPU activity: kernel, gpu_memcpy or gpu_memset (X with a dur). */
struct kt_act {
	int64_t		 ts;		/* ns */
	int64_t		 dur;		/* ns, >= 0 */
	int64_t		 stream;	/* args.stream, else the tid, else -1 */
	int64_t		 corr;		/* args.correlation, or -1 */
	int64_t		 extid;		/* args."External id", or -1 */
	int64_t		 bytes;		/* args.bytes, or -1 */
	uint64_t	 index;		/* the event's row number */
	uint32_t	 name;		/* interned */
	uint32_t	 dev;		/* into devices */
	uint32_t	 comm;		/* into comms, or KT_NO */
	uint32_t	 launch;	/* the launching runtime call (into
					   spans), or KT_NO */
	uint32_t	 thread;	/* the launching thread, or KT_NO */
	uint32_t	 step;		/* into steps, or KT_NO */
	uint32_t	 op;		/* the innermost cpu_op around launch
					   (into spans), or KT_NO:
					   kt_model_op_of */
	uint8_t		 kind;		/* KT_KERNEL, KT_GPU_MEMCPY, KT_GPU_MEMSET */
};

/* A CPU thread (pid, tid) with its spans spans[first..first+nspans). */
struct kt_thread {
	int64_t		 rank;
	int64_t		 end;		/* the latest end (ts + dur) of its
					   spans, or INT64_MIN */
	uint32_t	 key;		/* interned "pid<TAB>tid" raw text */
	uint32_t	 first;
	uint32_t	 nspans;
};

/*
 * A CPU span (X event of kind cpu_op, user_annotation, step,
 * cuda_runtime, cuda_driver or python_function), sorted by (thread, ts,
 * longest first), so that on a thread a parent comes before its
 * children; parent is the innermost span of the same thread that
 * contains it (spans that overlap without nesting are not parents).
 */
struct kt_span {
	int64_t		 ts;
	int64_t		 dur;
	int64_t		 corr;		/* -1 when absent */
	int64_t		 extid;		/* -1 when absent */
	uint64_t	 index;
	uint32_t	 name;
	uint32_t	 thread;	/* into threads */
	uint32_t	 parent;	/* into spans, or KT_NO */
	uint8_t		 kind;		/* enum kt_kind */
	uint8_t		 clipped;	/* a step cut by kt-slice-window
					   --clip (args.kt_clip) */
	uint8_t		 is_step;	/* a step's span (m->steps) */
};

/*
 * A cpu_op's args."Call stack" (traces before python_function events),
 * by the op's row number; few traces have them, so they are kept apart
 * from the spans, sorted by index (the first member: chain.c and
 * model.c search and sort both side arrays by it).
 */
struct kt_stack {
	uint64_t	 index;
	int64_t		 rank;		/* the event's rank (a merged trace's
					   row numbers repeat per rank) */
	uint32_t	 text;		/* interned */
};

/*
 * A cpu_op's autograd link (with KT_MODEL_SEQ): args."Sequence number"
 * and args."Fwd thread id" (0 on a forward op, else the forward
 * thread's: a backward op), by the op's row number (the first member,
 * as in struct kt_stack).
 */
struct kt_seq {
	uint64_t	 index;
	int64_t		 rank;
	int64_t		 seq;
	int64_t		 fwd_thread;
};

/*
 * A kernel's args."graph node id" (with KT_MODEL_GRAPH: a kernel a CUDA
 * graph ran), by its row number (the first member, as in kt_stack).
 */
struct kt_node {
	uint64_t	 index;
	int64_t		 rank;
	int64_t		 node;
};

/* A gpu_user_annotation span, sorted by (dev, ts). */
struct kt_gpu_ann {
	int64_t		 ts;
	int64_t		 dur;
	uint64_t	 index;
	uint32_t	 name;
	uint32_t	 dev;
};

/*
 * A ProfilerStep#N span (or a span --step-regex matched: kt(7) Step
 * windows), sorted by (rank, cpu_start).  gpu_start and gpu_end are the
 * first start and last end of the GPU activities of the step (over all
 * devices of its rank; both -1 when it has none).  partial: the trace
 * was cut inside the step (a slice's window, KT_KEY_WINDOW_*, starts
 * after the step does or ends before it does, or --clip cut its span).
 */
struct kt_step {
	int64_t		 number;	/* N, or -1 when the name has none */
	int64_t		 rank;
	int64_t		 cpu_start;
	int64_t		 cpu_end;
	int64_t		 gpu_start;
	int64_t		 gpu_end;
	uint32_t	 thread;
	uint32_t	 span;		/* into spans */
	uint32_t	 nact;		/* activities assigned to it */
	int		 partial;
};

/* A link between two spans (m->fwdbwd: a backward op to its forward op). */
struct kt_link {
	uint32_t	 from;
	uint32_t	 to;
};

struct kt_model {
	struct kt_intern	*names;		/* names and pid/tid keys */
	struct kt_device	*devices;	/* sorted by (rank, index, pid) */
	size_t			 ndevices;
	struct kt_act		*act;		/* sorted by (dev, ts, index) */
	size_t			 nact;
	struct kt_comm		*comms;
	size_t			 ncomms;
	struct kt_thread	*threads;	/* sorted by (rank, key text) */
	size_t			 nthreads;
	struct kt_span		*spans;		/* sorted by (thread, ts, -dur) */
	size_t			 nspans;
	struct kt_gpu_ann	*gpu_ann;
	size_t			 ngpu_ann;
	struct kt_step		*steps;
	size_t			 nsteps;
	struct kt_stack		*stacks;	/* sorted by index */
	size_t			 nstacks;
	struct kt_seq		*seqs;		/* sorted by index */
	size_t			 nseqs;
	struct kt_stack		*shapes;	/* Input Dims, sorted by index */
	size_t			 nshapes;
	struct kt_node		*nodes;		/* graph node ids, by index */
	size_t			 nnodes;
	struct kt_link		*fwdbwd;	/* fwdbwd flows (KT_MODEL_SEQ),
						   sorted by from */
	size_t			 nfwdbwd;
	uint64_t		 nflowcorr;	/* activities whose correlation
						   came from an ac2g flow */
	int64_t			 rank;		/* the trace's rank, or -1 */
	uint64_t		 nevents;	/* events read */
	int64_t			 cut_start;	/* a slice's window (KT_KEY_
						   WINDOW_*), else INT64_MIN */
	int64_t			 cut_end;	/* else INT64_MAX */
	struct kt_memory	*memory;	/* KT_MODEL_MEMORY, else NULL */
	unsigned		 flags;		/* the KT_MODEL_* it was loaded
						   with */
};

/*
 * Read every event of rd (to its end) into a new model.  progress, when
 * not NULL, is called every few thousand events (kt_cli_progress).
 * Each GPU activity is joined to its launching runtime call by
 * correlation (on the same rank) and so to its thread, and assigned to
 * the step whose ProfilerStep span contains that call, else the step
 * whose CPU span contains the activity's start, else none.  Returns the
 * model (free with kt_model_free), or NULL with err set.
 */
struct kt_model	*kt_model_load(struct kt_reader *,
		    void (*)(const struct kt_reader *), struct kt_error *);
/*
 * The same, keeping more: KT_MODEL_SEQ, the cpu_ops' autograd links
 * (seqs), which cost a scan of their args.
 */
#define KT_MODEL_SEQ	0x01
/*
 * KT_MODEL_SHAPES: a cpu_op's args."Input Dims" (shapes, as kt_stack
 * records: the JSON text with whitespace outside strings removed).
 */
#define KT_MODEL_SHAPES	0x02
/* KT_MODEL_GRAPH: a kernel's args."graph node id" (nodes). */
#define KT_MODEL_GRAPH	0x04
/*
 * KT_MODEL_MEMORY: also feed every [memory] instant and ProfilerStep
 * span of the same read to a new kt_memory in m->memory (kt_memory_add;
 * kt views' memory view, without a second read).  The caller finishes
 * it (kt_memory_finish) and may take it, setting m->memory to NULL;
 * kt_model_free frees it otherwise.
 */
#define KT_MODEL_MEMORY	0x08
/*
 * KT_MODEL_ONE_THREAD: scan on the caller's thread.  Without it the
 * events are read on a second thread where there is a CPU for it
 * (kt_ahead_start); the model is the same either way.
 */
#define KT_MODEL_ONE_THREAD 0x10
struct kt_model	*kt_model_load_with(struct kt_reader *, unsigned,
		    void (*)(const struct kt_reader *), struct kt_error *);
/*
 * The same, calling each(ctx, ev, err) with every event read, in order,
 * on the caller's thread, before the model takes it: for a filter that
 * needs more of each event than the model keeps, in the same read
 * (kt-inspect: the flows, where each event is).  each returns 0, or -1
 * with err set to end the load (NULL returned).
 */
struct kt_model	*kt_model_load_each(struct kt_reader *, unsigned,
		    void (*)(const struct kt_reader *),
		    int (*)(void *, const struct kt_event *, struct kt_error *),
		    void *, struct kt_error *);
void		 kt_model_free(struct kt_model *);
/*
 * Make the steps again from the spans (user_annotation, cpu_op or
 * ProfilerStep#N) whose names the regex re (POSIX extended, checked
 * with kt_regex_check) matches, instead of the ProfilerStep#N spans:
 * the step number is the text of the regex's first group when it has
 * one and it is a whole decimal number, else the first run of digits
 * of the name, else -1; the activities are assigned to them again.
 * 0, or -1 with err (a bad regex, out of memory).
 */
int		 kt_model_step_regex(struct kt_model *, const char *,
		    struct kt_error *);

/*
 * Step windows, the one definition every view uses (kt(7) Step
 * windows).  On a device, the window of a step with activities there
 * (attributed to it by launch: kt_model_load) runs from the end of the
 * window of the step before it on that device (for the first, from
 * the first start of its own activities) to the last end of its own
 * activities, so the windows tile the device's time and an idle stall
 * before a step's first kernel is the step's.  busy is the length of
 * the union of all the device's activities inside the window, idle =
 * wall - busy; nact the activities attributed to it.  partial: the step
 * is partial (struct kt_step), or it is the last window of the device,
 * there are 3 or more, and it is shorter than half the median of the
 * others (a step the profiler cut short).  ref is the step's CPU start
 * (ProfilerStep#N), the origin of offsets.
 */
struct kt_stepwin {
	uint32_t	 step;		/* into steps */
	int64_t		 start, end;
	int64_t		 busy, idle;
	int64_t		 ref;
	int64_t		 nact;
	int		 partial;
};

/*
 * The step windows of device dev in step order: a new array in *out
 * (free it) and its count (0 and NULL when none).  0, or -1 when out
 * of memory.
 */
int		 kt_step_windows(const struct kt_model *, uint32_t,
		    struct kt_stepwin **, size_t *);
/*
 * The element of a side array (stacks, seqs, shapes, nodes: sorted by
 * the row number and the rank that are each element's first two
 * members; n elements of sz bytes) for row index of rank, or NULL.
 */
const void	*kt_model_row(const void *, size_t, size_t, uint64_t, int64_t);
/* The interned string id (borrowed, NUL-terminated), "" for KT_NO. */
const char	*kt_model_str(const struct kt_model *, uint32_t);
/* Append device dev's rank and device cells ("-", "pid:P" when unknown). */
int		 kt_model_device_cells(struct kt_table *, const struct kt_model *,
		    uint32_t);
/*
 * The innermost span of thread th that contains time t ([ts, ts+dur)),
 * skipping kinds whose bit (1 << kind) is set in skip; KT_NO if none.
 */
uint32_t	 kt_model_span_at(const struct kt_model *, uint32_t, int64_t,
		    unsigned);
/*
 * The innermost cpu_op around activity act's launching call (into
 * spans), or KT_NO: the op of kt-correlate(1)'s chain.
 */
uint32_t	 kt_model_op_of(const struct kt_model *, uint32_t);
/*
 * Bytes an activity moved: args.bytes, else for a collective In msg
 * nelems x the size of its dtype; -1 when unknown.
 */
int64_t		 kt_act_bytes(const struct kt_model *, const struct kt_act *);
/* The size in bytes of a PyTorch dtype name ("BFloat16": 2), or -1. */
int		 kt_dtype_size(const char *);

/* ------------------------------------------------------------------ */
/*
 * Launch chains (lib/model/chain.c; kt-correlate(1) defines each link).
 * For a GPU activity: the runtime or driver call that launched it (the
 * model's join by correlation), the innermost cpu_op and user_annotation
 * (not ProfilerStep#N) that contain that call on its thread, its step,
 * and the user frame: the innermost python_function named "FILE(LINE):
 * FUNC", or frame of a cpu_op's args."Call stack", among those
 * containing the call, whose FILE the skip regex (POSIX extended) does
 * not match.  KT_FRAME_SKIP is the default: the Python standard library
 * (by module name, as the profiler writes paths relative to sys.path,
 * or under lib/pythonX.Y/), site-packages and dist-packages, the torch
 * package and the triton, numpy and tqdm packages (library code that
 * runs under a user's call), and files named <...> (<frozen ...>,
 * <string>, <eval_with_key>).
 */
#define KT_FRAME_SKIP \
	"^<|(^|/)(torch|triton|numpy|tqdm|site-packages|dist-packages)/|" \
	"(^|/)lib/python[0-9.]*/|^(abc|argparse|ast|asyncio|base64|bdb|" \
	"bisect|calendar|codecs|codeop|collections|concurrent|contextlib|" \
	"contextvars|copy|copyreg|dataclasses|datetime|decimal|dis|email|" \
	"enum|fnmatch|fractions|functools|genericpath|getopt|gettext|" \
	"glob|gzip|hashlib|heapq|hmac|http|importlib|inspect|io|ipaddress|" \
	"json|keyword|linecache|locale|logging|lzma|mimetypes|multiprocessing|" \
	"numbers|opcode|operator|optparse|os|pathlib|pdb|pickle|pkgutil|" \
	"platform|posixpath|pprint|queue|random|re|reprlib|runpy|sched|" \
	"selectors|shlex|shutil|signal|site|socket|socketserver|sre_compile|" \
	"sre_parse|ssl|stat|statistics|string|struct|subprocess|sysconfig|" \
	"tarfile|tempfile|textwrap|threading|tokenize|traceback|types|" \
	"typing|unittest|urllib|uuid|warnings|weakref|zipfile|zipimport|" \
	"_collections_abc|_weakrefset|_bootlocale|_compat_pickle|_sitebuiltins|" \
	"_threading_local|_strptime|typing_extensions)(/|\\.py$)"

struct kt_chains;

struct kt_chain {
	uint32_t	 launch;	/* into spans, or KT_NO */
	uint32_t	 op;		/* into spans: innermost cpu_op */
	uint32_t	 ann;		/* into spans: user_annotation */
	uint32_t	 step;		/* into steps (the activity's step) */
	uint32_t	 frame;		/* into spans: the python_function, or
					   the cpu_op whose Call stack has it */
	uint32_t	 fwd;		/* into spans: for a backward call, the
					   forward op of its autograd node */
	const char	*frame_text;	/* "FILE(LINE): FUNC", frame_len bytes,
					   borrowed from the model; or NULL */
	size_t		 frame_len;
};

/*
 * The chains of model m with this skip regex (NULL: KT_FRAME_SKIP),
 * which must outlive it; NULL with err on a bad regex or no memory.
 */
struct kt_chains *kt_chains_new(const struct kt_model *, const char *,
		    struct kt_error *);
void		 kt_chains_free(struct kt_chains *);
/* Whether skip is a regex kt_chains_new takes: 0, or -1 with err. */
int		 kt_chains_check(const char *, struct kt_error *);
/*
 * Activity act's chain into *ch (KT_NO where a link is missing); 0 or -1.
 * It only reads the chains: several threads may ask at once.
 */
int		 kt_chain_get(const struct kt_chains *, uint32_t,
		    struct kt_chain *);
/*
 * The user frame at or above span s (into spans: a python_function, or a
 * cpu_op with a Call stack), its text in *text, *len (borrowed); KT_NO
 * when there is none.  It only reads the chains, as kt_chain_get.
 */
uint32_t	 kt_chains_frame_of(const struct kt_chains *, uint32_t,
		    const char **, size_t *);
/* Whether p[0..n) is a frame "FILE(LINE): FUNC" of the user: 1, 0, -1. */
int		 kt_chains_user_frame(struct kt_chains *, const char *, size_t);

/* ------------------------------------------------------------------ */
/*
 * The op table (lib/model/ops.c; kt-ops(1) defines the rows, the op
 * tree, self and total times): one row per CPU op name, optionally also
 * per input shapes (a model loaded with KT_MODEL_SHAPES), user frame
 * (chains) or rank.
 */
#define KT_OPS_BY_SHAPE	0x01
#define KT_OPS_BY_FRAME	0x02
#define KT_OPS_BY_RANK	0x04
/* The kinds in the op tree, and the default row kinds (1 << kind). */
#define KT_OPS_KINDS	(1u << KT_CPU_OP | 1u << KT_USER_ANNOTATION | \
			 1u << KT_STEP | 1u << KT_CUDA_RUNTIME | \
			 1u << KT_CUDA_DRIVER)

struct kt_ops_opts {
	unsigned		 by;		/* KT_OPS_BY_* */
	unsigned		 kinds;		/* row kinds; 0: KT_OPS_KINDS */
	const char		*sort;		/* a column; NULL: gpu_total_ns */
	int64_t			 limit;		/* rows; -1: all */
	struct kt_chains	*chains;	/* borrowed: for KT_OPS_BY_FRAME */
	int			 totals;	/* a last row "total": the
						   wholes of the shares */
};
#define KT_OPS_OPTS_INIT	{ 0, 0, NULL, -1, NULL, 0 }

struct kt_ops_totals {
	uint64_t	 calls;		/* spans in the op tree */
	uint64_t	 lost;		/* activities without a launching call */
	int64_t		 lost_ns;
	uint64_t	 clamped;	/* calls whose children overrun them */
};

/*
 * Column name's index (without ":n"), -1 when there is none, -2 when
 * it is a key column these KT_OPS_BY_* keys do not show.
 */
int		 kt_ops_column(const char *, unsigned);
/*
 * The op table of a model (sorted, limited); *tot (when not NULL) gets
 * the totals.  NULL with err set: out of memory, a bad sort column, or a
 * sum of times out of range.
 */
struct kt_table	*kt_ops_table(const struct kt_model *,
		    const struct kt_ops_opts *, struct kt_ops_totals *,
		    struct kt_error *);
/*
 * Merge kt-ops TSV tables (one per rank, same columns) into the table
 * of the merged trace: rows of equal keys add up, averages and shares
 * are computed again, longest_ns is the largest and longest_row cites
 * the file of that call (FILE:kind:index).  The shares' wholes are the
 * inputs' "total" rows (--totals), else the sums of cpu_self_ns and
 * gpu_self_ns over the rows (exact for whole tables: no --limit, the
 * default kinds, every GPU activity launched).  Sorted by gpu_total_ns.
 */
struct kt_table	*kt_ops_merge(char *const *, size_t, struct kt_error *);

/* ------------------------------------------------------------------ */
/*
 * Flows (lib/model/flow.c; kt-select, kt-inspect): each flow end (ph s,
 * t, f) bound to its slice on its own thread (FORMAT.md): the innermost
 * X slice whose [ts, ts + dur] holds its ts, or for an f without bp "e"
 * the first slice that begins at or after it.  The caller names each
 * event it adds by a number (a position: row numbers of a merged trace
 * repeat); the ends of one flow share a key, (cat, name, id) as
 * written.
 */
#define KT_FLOW_NONE	UINT64_MAX

struct kt_flow_end {
	int64_t		 ts;		/* INT64_MIN: none */
	uint64_t	 pos;		/* the number it was added with */
	uint64_t	 anchor;	/* its slice's number, or KT_FLOW_NONE */
	uint32_t	 key;		/* the same for the ends of one flow */
	uint32_t	 thread;
	int		 next;		/* binds to the next slice (f
					   without bp "e") */
};

/*
 * Flow keys, (cat, name, id) as written, to dense numbers handed out in
 * the order the keys come (0, 1, ...): kt_flowkeys_put gives ev's, or -1
 * when out of memory.  Most ids are integers, and a trace's flows take
 * them in order: such a key is kept as (its cat and name's number, the
 * integer), in a table where eight consecutive ids share a run of slots,
 * so that a flow's end finds its start in the cache lines its
 * neighbours' starts used; the cat and name are most often the last
 * key's.  Any other id (a string, leading zeros, -0, a fraction, past 18
 * digits) is kept as its text's number.  An integer's text is canonical,
 * so that two texts are two keys.  16 bytes a key, a table of 8 to 16
 * bytes a key, and the texts of the cat and name pairs and of the other
 * ids.
 */
struct kt_flowkeys;

struct kt_flowkeys	*kt_flowkeys_new(void);
void			 kt_flowkeys_free(struct kt_flowkeys *);
int64_t			 kt_flowkeys_put(struct kt_flowkeys *,
			    const struct kt_event *);
/* How many keys it has numbered. */
size_t			 kt_flowkeys_count(const struct kt_flowkeys *);

struct kt_flows;

/* A new, empty set of slices and flow ends; NULL when out of memory. */
struct kt_flows	*kt_flows_new(void);
void		 kt_flows_free(struct kt_flows *);
/*
 * Take ev, numbered pos: a flow end, or an X slice with ts and dur (any
 * other event is ignored).  0, or -1 when out of memory.
 */
int		 kt_flows_add(struct kt_flows *, const struct kt_event *,
		    uint64_t);
/* Bind every end to its slice, once all are added.  0 or -1 (memory). */
int		 kt_flows_bind(struct kt_flows *);
/* The flow ends, after kt_flows_bind sorted by (key, number). */
const struct kt_flow_end *kt_flows_ends(const struct kt_flows *, size_t *);

/* ------------------------------------------------------------------ */
/*
 * GPU buckets and intervals (lib/gpu.c).  A rule set maps a GPU
 * activity to a bucket: gpu_memcpy and gpu_memset are always
 * "transfer"; a kernel takes the bucket of the first rule whose regex
 * (POSIX extended, case-insensitive) matches its name, else "other".
 * The default rules (kt_rules_default) are documented in kt-bucket(1).
 */
struct kt_rules;

/* The class of a bucket, for views that split compute and the rest. */
enum kt_class {
	KT_CLASS_COMPUTE = 0,
	KT_CLASS_COMM,		/* the "communication" bucket */
	KT_CLASS_TRANSFER	/* the "transfer" bucket: memcpy, memset */
};

/* A new rule set with the default rules (or none, when empty).  NULL:
 * out of memory. */
struct kt_rules	*kt_rules_new(int);
void		 kt_rules_free(struct kt_rules *);
/* Append a rule (after the rules already there).  0, or -1 with err. */
int		 kt_rules_add(struct kt_rules *, const char *, const char *,
		    struct kt_error *);
/*
 * Read rules from a TSV file (bucket<TAB>regex per line; blank lines
 * and lines starting with '#' skipped).  replace: drop the rules there
 * first (else the file's rules come before them).  0, or -1 with err.
 */
int		 kt_rules_load(struct kt_rules *, const char *, int,
		    struct kt_error *);
/* The bucket id of an activity of kind k named name (0..nbuckets-1). */
/*
 * Append a kernel's function name to out: its name without the return
 * type ("void "), the argument list and the template arguments, with the
 * namespace (at::native::vectorized_elementwise_kernel); for a launcher
 * whose template argument is the kernel (cutlass::Kernel2<X>,
 * cutlass::device_kernel<X>, ck_tile::kentry<...>), that argument's name
 * after a space.  A mangled name (_Z...) gives its qualified name, up to
 * its template arguments (_ZN5aiter24add_rmsnorm_quant_kernelI...:
 * aiter::add_rmsnorm_quant_kernel); a mangled launcher is kept whole.  A
 * name it cannot take apart is appended whole.  The bucket rules match
 * this.  0, or -1 out of memory.
 */
int		 kt_kernel_function(const char *, struct kt_buf *);
uint32_t	 kt_rules_match(const struct kt_rules *, int, const char *);
size_t		 kt_rules_nbuckets(const struct kt_rules *);
const char	*kt_rules_bucket_name(const struct kt_rules *, uint32_t);
enum kt_class	 kt_rules_class(const struct kt_rules *, uint32_t);
/*
 * Explain which rule matches a kernel name: one line per rule tried
 * up to the match, appended to out.  Returns the bucket id, or
 * KT_NO when out of memory.
 */
uint32_t	 kt_rules_explain(const struct kt_rules *, int, const char *,
		    struct kt_buf *);
/*
 * How an activity's bucket is decided (kt-bucket(1) documents the
 * order): a memcpy or memset is a transfer; a kernel with collective
 * args is communication; else the first rule of a --rules file (not a
 * default rule) that matches its name; else the op evidence: the
 * innermost cpu_op around its launching call, when its name is a GEMM,
 * attention or collective op; else the first default rule; else other.
 */
enum kt_decided {
	KT_DECIDED_KIND = 0,
	KT_DECIDED_ARGS,
	KT_DECIDED_RULE,		/* rule: the rule's index */
	KT_DECIDED_OP,			/* rule: the evidence's index */
	KT_DECIDED_NONE
};

struct kt_decision {
	uint32_t	 bucket;
	int		 how;		/* enum kt_decided */
	size_t		 rule;
	uint32_t	 op;		/* the launching op (spans), or KT_NO */
};

/* The decision for activity act of model m. */
void		 kt_rules_decide(const struct kt_rules *,
		    const struct kt_model *, uint32_t, struct kt_decision *);
/* Append what decided, in words (one line, no newline).  0 or -1. */
int		 kt_rules_describe(const struct kt_rules *,
		    const struct kt_model *, const struct kt_decision *,
		    struct kt_buf *);
/*
 * The bucket of every activity of a model (kt_rules_decide): a new
 * array of m->nact bucket ids (free it), or NULL when out of memory.
 * Rules are matched once per distinct name, op evidence once per op
 * name; with 32768 activities or more, a model loaded with threads
 * (not KT_MODEL_ONE_THREAD) and a second CPU, each half of the
 * activities on a thread of its own, with caches of its own.
 */
uint32_t	*kt_rules_classify(const struct kt_rules *,
		    const struct kt_model *);

/* Half-open intervals [start, end) of int64 ns. */
struct kt_iv {
	int64_t	 start;
	int64_t	 end;
};

/*
 * Sort and merge v[0..n) in place into disjoint intervals in order
 * (empty ones dropped; touching ones joined); returns the new count.
 */
size_t		 kt_iv_union(struct kt_iv *, size_t);
/*
 * Add [start, end) to the union v[0..*n) of intervals added in order of
 * start (kt_iv_union's output, built as they come: no sort, no copy of
 * the intervals joined); v has room for one more.
 */
void		 kt_iv_add(struct kt_iv *, size_t *, int64_t, int64_t);
/* The total length of disjoint intervals. */
int64_t		 kt_iv_length(const struct kt_iv *, size_t);
/* The length of the intersection of two unions (kt_iv_union output). */
int64_t		 kt_iv_overlap(const struct kt_iv *, size_t,
		    const struct kt_iv *, size_t);
/* The length of a union inside [start, end). */
int64_t		 kt_iv_clip_length(const struct kt_iv *, size_t, int64_t,
		    int64_t);

/* ------------------------------------------------------------------ */
/*
 * The kernel table (lib/bucket.c; kt-bucket, kt views) and lost time
 * (lib/gaps.c; kt-gaps, kt views).  Both return a new table (free it
 * with kt_table_free); kt-bucket(1) and kt-gaps(1) define the columns.
 */
enum kt_by {
	KT_BY_BUCKET = 0,
	KT_BY_NAME,
	KT_BY_STREAM,
	KT_BY_STEP,
	KT_BY_RANK,
	KT_BY_DEVICE,
	KT_BY_OP,			/* the launching cpu_op's name */
	KT_BY_FRAME,			/* the user frame (needs chains) */
	KT_NBY
};

struct kt_bucket_opts {
	const struct kt_rules	*rules;		/* borrowed */
	const uint32_t		*classes;	/* borrowed: kt_rules_classify
						   of rules and the model,
						   or NULL: classified here */
	int			 by[KT_NBY];	/* grouping keys, in order */
	size_t			 nby;
	struct kt_chains	*chains;	/* borrowed: for KT_BY_FRAME */
};

/* The grouping of kt-bucket without --by, and of kt views' table. */
#define KT_BUCKET_BY_DEFAULT	"bucket"

/* Parse "step,bucket" into o->by.  0, or -1 (unknown or repeated). */
int		 kt_bucket_by_parse(struct kt_bucket_opts *, const char *);
/* The kernel table of a model; NULL when out of memory. */
struct kt_table	*kt_bucket_table(const struct kt_model *,
		    const struct kt_bucket_opts *);
/*
 * Sum kt-bucket TSV tables (files, "-" for stdin) with the same columns
 * into one: counts, sums, unions and bytes add, max is the largest,
 * shares and means are computed again, and p50/p90 are kept only for
 * rows that one input alone has ("-" otherwise).  NULL with err set.
 */
struct kt_table	*kt_bucket_merge(char *const *, size_t, struct kt_error *);

struct kt_gaps_opts {
	int64_t		 min_gap;	/* ns: gaps shorter are not rows */
	int64_t		 tiny;		/* ns: a tiny kernel is shorter */
	int64_t		 run_min;	/* tiny kernels in a run, at least */
	int64_t		 top;		/* rows kept (0: all) */
	int		 summary;	/* add the step and total rows */
	int		 by_cause;	/* fold the rows by cause (cpu, frame) */
};

/*
 * kt-gaps's defaults, which kt views uses too: --min-gap 10us, --tiny
 * 5us, --run-min 8, every row, no summary rows.
 */
#define KT_GAPS_MIN_GAP		10000	/* ns */
#define KT_GAPS_TINY		5000	/* ns */
#define KT_GAPS_RUN_MIN		8
#define KT_GAPS_OPTS_INIT	{ KT_GAPS_MIN_GAP, KT_GAPS_TINY, \
				  KT_GAPS_RUN_MIN, 0, 0, 0 }

/* Totals over every step window of every device. */
struct kt_gaps_total {
	int64_t		 wall;
	int64_t		 busy;
	int64_t		 idle;
	int64_t		 gaps;		/* gap rows found (before --top) */
	int64_t		 runs;		/* tiny-run rows found */
};

/*
 * The gaps and tiny-kernel runs of a model, ranked by cost.  *steps,
 * when not NULL, gets a new table of the step and total rows alone (for
 * a summary on stderr); tot, when not NULL, the totals.  NULL when out
 * of memory.
 */
struct kt_table	*kt_gaps_table(const struct kt_model *,
		    const struct kt_gaps_opts *, struct kt_table **,
		    struct kt_gaps_total *);
/*
 * Merge kt-gaps TSV tables (one per rank; gap rows, --summary rows or
 * --by cause rows) into the table of the merged trace: the rows of
 * every rank ranked together by cost, the step and total rows after.
 * The top (> 0) keeps that many gap and run rows: the global top N is
 * within the union of the per-rank top N, so per-rank tables cut at N
 * merge exactly into a top N.  A rank in two inputs is an error.
 */
struct kt_table	*kt_gaps_merge(char *const *, size_t, struct kt_error *);
struct kt_table	*kt_gaps_merge_top(char *const *, size_t, int64_t,
		    struct kt_error *);

/* ------------------------------------------------------------------ */
/*
 * Runtime decomposition (lib/decompose.c; kt-decompose, kt views) over
 * the analysis model: per device, windows for the startup, each step,
 * and the trailing part, each with wall, busy (the union of all
 * streams), idle, and the unions of compute, communication (exposed and
 * hidden by compute) and transfer, by the classes of rs.  The exact
 * definitions are in kt-decompose(1).  New, or NULL with err set.
 */
struct kt_decompose;

struct kt_decompose *kt_decompose_new(const struct kt_model *,
		    const struct kt_rules *, struct kt_error *);
/*
 * The same with the activities' classes given (kt_rules_classify of rs
 * and the model, borrowed; NULL: classified here), so that the views of
 * one model classify it once.  The same for kt_overlap_new_with.
 */
struct kt_decompose *kt_decompose_new_with(const struct kt_model *,
		    const struct kt_rules *, const uint32_t *,
		    struct kt_error *);
void		 kt_decompose_free(struct kt_decompose *);
/* Per device: startup, steady (the steps), partial, trailing rows. */
struct kt_table	*kt_decompose_table(const struct kt_decompose *);
/* One row per window (the step-time series). */
struct kt_table	*kt_decompose_series(const struct kt_decompose *);
struct kt_overlap;
/*
 * One row per step number across ranks: the longest wall and its gap to
 * the median, and, from the collectives ov joined across ranks (may be
 * NULL: "-"), the straggler, the rank whose summed lateness at the
 * step's collectives (its start minus the first rank's) is largest, the
 * ranks that waited for it (their start before the last rank's), and the
 * rank with the most compute before those collectives.
 */
struct kt_table	*kt_decompose_ranks(const struct kt_decompose *,
		    const struct kt_overlap *);

/*
 * Communication against compute per collective (lib/overlap.c;
 * kt-overlap, kt views): each communication kernel's hidden and exposed
 * time against the compute of its device, bandwidths, and on a merged
 * trace the join across ranks by Seq or Comms Id.  See kt-overlap(1).
 */
struct kt_overlap;

struct kt_overlap *kt_overlap_new(const struct kt_model *,
		    const struct kt_rules *, struct kt_error *);
struct kt_overlap *kt_overlap_new_with(const struct kt_model *,
		    const struct kt_rules *, const uint32_t *,
		    struct kt_error *);
void		 kt_overlap_free(struct kt_overlap *);
/*
 * The communication kernels of ov (in no given order): kernel i's
 * activity in *act, and the number of the join across ranks it is in,
 * or -1 when it joined none.
 */
size_t		 kt_overlap_count(const struct kt_overlap *);
int64_t		 kt_overlap_join(const struct kt_overlap *, size_t,
		    uint32_t *);
/* Kernel i's compute_before_ns (kt-overlap(1)), or -1. */
int64_t		 kt_overlap_before(const struct kt_overlap *, size_t);
/* The kernels, most exposed first; top > 0 keeps that many rows. */
struct kt_table	*kt_overlap_table(const struct kt_overlap *, size_t);
/* One row per device; exposed under threshold % of the span: no finding. */
struct kt_table	*kt_overlap_summary(const struct kt_overlap *, int64_t);
/* The threshold of kt-overlap without --threshold, and of kt views. */
#define KT_OVERLAP_THRESHOLD	1

/*
 * The merges of per-rank tables (lib/model/ranks.c, decompose.c,
 * overlap.c; kt-decompose and kt-overlap --merge, kt views --merge):
 * from the TSV tables of several runs (files, "-" for stdin), one per
 * rank, the table the merged trace of those ranks gives (kt-rank-tag),
 * with the cross-rank figures computed again from the rows.  NULL with
 * err set.  kt-decompose(1) and kt-overlap(1) say what cannot be exact.
 */
/* kt-decompose's default table, --series, and --ranks (from --series
 * and kt-overlap tables, in any order). */
struct kt_table	*kt_decompose_merge(char *const *, size_t, struct kt_error *);
struct kt_table	*kt_decompose_series_merge(char *const *, size_t,
		    struct kt_error *);
struct kt_table	*kt_decompose_ranks_merge(char *const *, size_t,
		    struct kt_error *);
/* kt-overlap's table (top > 0 keeps that many rows), and --summary. */
struct kt_table	*kt_overlap_merge(char *const *, size_t, struct kt_error *);
struct kt_table	*kt_overlap_merge_top(char *const *, size_t, size_t,
		    struct kt_error *);
struct kt_table	*kt_overlap_summary_merge(char *const *, size_t,
		    struct kt_error *);
/*
 * The joins of the kernels of kt-overlap tables (loaded, checked with
 * kt_overlap_is_table; names: their files, for messages) across ranks:
 * for each row, in the tables' order, its join's number (-1: none),
 * rank, start, step (-1: none) and compute_before_ns (-1: none) in
 * *out.  0, or -1 with err set.
 */
struct kt_join_row {
	int64_t		 grp, rank, ts, step, before;
};
int		 kt_overlap_is_table(const struct kt_table *);
int		 kt_overlap_tables_join(struct kt_table *const *, size_t,
		    char *const *, struct kt_join_row **, size_t *,
		    struct kt_error *);
/* Whether t's header is cols (names, ":n" aside): 1 or 0. */
int		 kt_ranks_header(const struct kt_table *, const char *const *,
		    size_t);
/* A whole decimal integer cell: 0; "-": 1; else -1. */
int		 kt_ranks_int(const char *, int64_t *);
/* The order of the model's devices, from rank and device cells. */
int		 kt_ranks_cmp_device(const char *, const char *, const char *,
		    const char *);
/* Load the tables, each with the header cols ("not a WHAT table"). */
struct kt_table	**kt_ranks_load(char *const *, size_t, const char *const *,
		    size_t, const char *, struct kt_error *);
void		 kt_ranks_free(struct kt_table **, size_t);
/* Per-device rows: every input's, in (rank, device) order; the rows
 * "no device activity" only when no input has another. */
struct kt_table	*kt_ranks_concat(char *const *, size_t, const char *const *,
		    size_t, const char *, struct kt_error *);

/* ------------------------------------------------------------------ */
/*
 * One run against another (lib/model/diff.c; kt-diff): the tables of
 * run A (side 0, the baseline) and run B (side 1) joined by their keys.
 * See kt-diff(1) for the views, keys and costs.
 */
struct kt_diff;

struct kt_diff	*kt_diff_new(void);
void		 kt_diff_free(struct kt_diff *);
/*
 * The kind of view a table is, by its columns ("bucket", "gap", "op",
 * "collective", "step", ...), or NULL when kt diff does not know it.
 */
const char	*kt_diff_kind(const struct kt_table *);
/*
 * Add table t of run side (0 or 1) as the view named view (NULL: by its
 * kind).  A step table (kt decompose --series, or kt views' summary)
 * gives the run's steps.  0, or -1 with err.
 */
int		 kt_diff_add(struct kt_diff *, int, const struct kt_table *,
		    const char *, struct kt_error *);
/*
 * The joined rows of the views both runs have, most changed first, at
 * most top (0: all).  NULL with err set.
 */
struct kt_table	*kt_diff_table(struct kt_diff *, size_t, struct kt_error *);
/* The n-th step of A against the n-th of B, and the means.  NULL, err. */
struct kt_table	*kt_diff_steps(struct kt_diff *, struct kt_error *);
/*
 * The mean over a run's steps of wall (what 0), busy (1) or idle (2)
 * time, and the range of its step walls (max - min).  0, or -1: none.
 */
int		 kt_diff_mean(struct kt_diff *, int, int, int64_t *,
		    int64_t *);
/* View i's name and *only: -1 both runs have it, else the one that has. */
const char	*kt_diff_view(const struct kt_diff *, size_t, int *);
/* The steps of a run's step series (0 for a summary). */
size_t		 kt_diff_nsteps(const struct kt_diff *, int);

#endif /* KT_H */
