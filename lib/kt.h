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

#include <stddef.h>
#include <stdint.h>

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

struct kt_buf {
	char	*p;
	size_t	 n;
	size_t	 cap;
};

int	 kt_buf_reserve(struct kt_buf *, size_t);
int	 kt_buf_add(struct kt_buf *, const void *, size_t);
int	 kt_buf_addc(struct kt_buf *, char);
int	 kt_buf_adds(struct kt_buf *, const char *);
void	 kt_buf_free(struct kt_buf *);

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

/* Sort pairs by key, stably (equal keys keep their order).  0 or -1. */
struct kt_pair {
	uint64_t key;
	uint64_t val;
};

int		 kt_sort_pairs(struct kt_pair *, size_t);

/* ------------------------------------------------------------------ */
/* Exact time: decimal microsecond text <-> int64 nanoseconds. */

#define KT_TIME_SUBNS	0x01	/* digits below 1 ns were present */
#define KT_TIME_EXP	0x02	/* the text used an exponent */

/*
 * Parse the JSON number text s[0..n) as microseconds into *ns.  No floating
 * point is involved.  Digits below one nanosecond are truncated toward
 * zero and flagged with KT_TIME_SUBNS; *decimals gets the number of
 * fraction digits written in the text.  Returns 0, or -1 if the text is
 * not a number or does not fit in int64 nanoseconds.
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

/* Format ns as plain integer text; returns the length. */
size_t	 kt_int_format(int64_t, char *);

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

/* The fields the scanner extracts; the last five come from args. */
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
	unsigned	 flags;
	int		 ts_decimals;	/* fraction digits in the ts text */
	int		 dur_decimals;
	enum kt_kind	 kind;
	char		 ph;		/* first byte of ph, or 0 */
	struct kt_val	 f[KT_NFIELDS];
};

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

/* Append the event's thread key (raw pid text, tab, raw tid text). */
int	 kt_event_thread_key(const struct kt_event *, struct kt_buf *);

/* An integer field (number, or a string holding one) in *v; 0 or -1. */
int	 kt_event_field_int(const struct kt_event *, enum kt_field, int64_t *);

/*
 * Find key (unescaped ASCII) among the members of the object value v of
 * ev (KT_F_ARGS for args), and return its value in *out.  0 or -1.
 */
int	 kt_event_find(const struct kt_event *, const struct kt_val *,
	    const char *, struct kt_val *);

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
};

struct kt_patch {
	const struct kt_event	*ev;
	struct kt_patch_edit	 e[KT_PATCH_MAX];
	int			 n;
	struct kt_buf		 tmp;	/* owned copies of inserted texts */
	struct kt_buf		 newargs; /* members of an args to add */
};

void	 kt_patch_init(struct kt_patch *, const struct kt_event *);
/* Start over on ev with a patch already used, keeping its buffers. */
void	 kt_patch_reset(struct kt_patch *, const struct kt_event *);
/* Replace field f's value with text, or add the field when absent. */
int	 kt_patch_set(struct kt_patch *, enum kt_field, const char *, size_t);
/* Set args.key (ASCII key) to the raw JSON text; adds args when absent. */
int	 kt_patch_arg(struct kt_patch *, const char *, const char *, size_t);
/* Add args.key, which the caller knows is absent (no search). */
int	 kt_patch_arg_add(struct kt_patch *, const char *, const char *,
	    size_t);
/* Append the patched event to out.  0 or -1. */
int	 kt_patch_apply(struct kt_patch *, struct kt_buf *);
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
	KT_NREPAIRS
};

struct kt_repairs {
	uint64_t n[KT_NREPAIRS];
	uint64_t truncated_bytes;	/* bytes dropped by KT_R_TRUNCATED */
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

/*
 * The next trace of the source (an archive yields one per member that
 * holds a trace).  Returns 1 with *r set to a new reader, 0 at the end,
 * or -1 with err set.  A reader reads only until the next call; the
 * caller frees it with kt_reader_free(), before closing the source.
 */
int	 kt_source_next(struct kt_source *, struct kt_reader **,
	    struct kt_error *);
/* Is the source a tar or zip archive (known after kt_source_next)? */
int	 kt_source_archived(const struct kt_source *);
void	 kt_source_close(struct kt_source *);

/*
 * Copy standard input into a new temporary file, for filters that read
 * their input twice.  Returns its path (malloc'd; the caller unlinks and
 * frees it), or NULL with err set.
 */
char	*kt_spool_stdin(struct kt_error *);

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

const char		*kt_reader_name(const struct kt_reader *);
enum kt_form		 kt_reader_form(const struct kt_reader *);
/* The top-level keys read so far, in input order (borrowed). */
const struct kt_meta	*kt_reader_metas(const struct kt_reader *, size_t *);
/* The value of top-level key name (ASCII), or NULL. */
const struct kt_meta	*kt_reader_meta_find(const struct kt_reader *,
			    const char *);
/*
 * The input's ktSourceIndex (row numbers), or NULL.  *applied (may be
 * NULL) says whether the events' index came from it: one written after
 * traceEvents is known only at the end, so the events were numbered by
 * position and the caller maps them.
 */
const uint64_t		*kt_reader_srcindex(const struct kt_reader *, size_t *,
			    int *);
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

/* The top-level key kt writes to keep row ids across reordering. */
#define KT_KEY_SOURCE_INDEX	"ktSourceIndex"
#define KT_KEY_REBASE		"ktRebaseNs"
#define KT_KEY_ORIGIN		"ktOriginNs"	/* TSV trace row only */

/* ------------------------------------------------------------------ */
/* Writing. */

struct kt_out;

/*
 * Open an output: path NULL or "-" is stdout; otherwise a temporary file
 * beside path that kt_out_commit() renames over it.  level < 0 means
 * gzip when the name ends in ".gz" at a fast level; 0..9 forces that
 * gzip level for a ".gz" name.  Returns NULL with err set.
 */
struct kt_out	*kt_out_open(const char *, int, struct kt_error *);
int		 kt_out_write(struct kt_out *, const void *, size_t);
/* The temporary file's path, or "" (for removal by a signal handler). */
const char	*kt_out_tmppath(const struct kt_out *);
/* Flush and close; rename the temporary file into place.  0 or -1. */
int		 kt_out_commit(struct kt_out *, struct kt_error *);
/* Close and remove the temporary file.  Safe after failure. */
void		 kt_out_abort(struct kt_out *);

struct kt_writer;

#define KT_WRITE_TSV	0x01
#define KT_WRITE_RANK	0x02	/* TSV: a rank column (from args.rank) */

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
/*
 * Set the TSV time origin (ts_ns counts from it).  Without it the first
 * event that is not metadata and has a time sets it, and the events
 * before that one wait in memory.
 */
void	 kt_writer_origin(struct kt_writer *, int64_t);
int	 kt_writer_event(struct kt_writer *, const struct kt_event *);
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
void		 kt_table_free(struct kt_table *);
/* Append the next cell, row after row (tabs and newlines become spaces). */
int		 kt_table_cell(struct kt_table *, const char *);
int		 kt_table_cellf(struct kt_table *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
int		 kt_table_int(struct kt_table *, int64_t);
/* num/den with that many decimals, rounded; "-" when den is 0. */
int		 kt_table_ratio(struct kt_table *, int64_t, int64_t, int);
size_t		 kt_table_rows(const struct kt_table *);
const char	*kt_table_get(const struct kt_table *, size_t, size_t);
/* Write the table (header: whether to write the header line).  0 or -1. */
int		 kt_table_write(const struct kt_table *, enum kt_table_form,
		    int, struct kt_out *);
/* forced when it is a form, else text when fd is a terminal, else TSV. */
enum kt_table_form kt_table_form_pick(int, int);
/*
 * num/den as decimal text with d (0..9) decimals into out (64 bytes),
 * rounded half away from zero, from integers only; "-" when den is 0.
 * Returns the length.
 */
size_t		 kt_ratio_format(int64_t, int64_t, int, char *);

/* ------------------------------------------------------------------ */
/* Command-line helpers shared by the filters; these print. */

void	 kt_cli_init(const char *);
const char *kt_cli_name(void);
void	 kt_cli_warn(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
void	 kt_cli_error(const struct kt_error *);
/* The output to remove (kt_out_abort) if the program dies; NULL: none. */
void	 kt_cli_set_output(struct kt_out *);
/* One more temporary file to remove if a signal kills the program. */
void	 kt_cli_add_temp(const char *);
/* Print e (when not NULL), remove the registered output, exit 2. */
void	 kt_cli_die(const struct kt_error *) __attribute__((noreturn));
void	 kt_cli_nomem(void) __attribute__((noreturn));
/* Parse a whole decimal integer in [min, max]; on error print and exit 2. */
long long kt_cli_int(const char *, const char *, long long, long long);
/* Refuse an output path that names one of the inputs.  0 or -1 (printed). */
int	 kt_cli_check_output(const char *, char *const *, int);
/* Print one stderr line per kind of repair; returns the number of kinds. */
int	 kt_cli_report_repairs(const char *, const struct kt_repairs *);
/* Print progress on stderr when it is a terminal and the work is long. */
void	 kt_cli_progress(const struct kt_reader *);
void	 kt_cli_progress_done(void);

#endif /* KT_H */
