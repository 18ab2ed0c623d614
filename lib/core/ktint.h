/*
 * ktint.h: private interfaces between the library's own files.  Filters
 * include kt.h only.
 */
#ifndef KTINT_H
#define KTINT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "kt.h"

/*
 * Whether the eight bytes of x, the first in the low byte, are decimal
 * digits, and their value in *v: checked and combined in pairs, fours
 * and eights (no loop, no branch per digit).
 */
static inline int
kt_eight_digits_word(uint64_t x, uint64_t *v)
{
	/* Each byte 0x30-0x39: high nibble 3, and +6 keeps it below 0x40. */
	if ((x & 0xf0f0f0f0f0f0f0f0ULL) != 0x3030303030303030ULL ||
	    ((x + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) !=
	    0x3030303030303030ULL)
		return 0;
	x -= 0x3030303030303030ULL;
	x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffULL;
	x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffULL;
	x = (x * 10000 + (x >> 32)) & 0xffffffffULL;
	*v = x;
	return 1;
}

/* The same of s[0..8): the eight bytes as one little-endian word. */
static inline int
kt_eight_digits(const char *s, uint64_t *v)
{
	uint64_t x;

	memcpy(&x, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);	/* the first digit in the low byte */
#endif
	return kt_eight_digits_word(x, v);
}

/*
 * How many decimal digits s[0..8) begins with, and when fewer than 8,
 * their value in *v (0 for none): the digits moved to the top of the
 * word, below them zeros, combined as kt_eight_digits does.
 */
static inline unsigned
kt_few_digits(const char *s, uint64_t *v)
{
	uint64_t x, nd;
	unsigned n;

	memcpy(&x, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	/* A byte's high nibble not 3, or not 3 with 6 added: no digit. */
	nd = ((x & 0xf0f0f0f0f0f0f0f0ULL) ^ 0x3030303030303030ULL) |
	    (((x + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) ^
	    0x3030303030303030ULL);
	if (nd == 0)
		return 8;
	if ((n = (unsigned)__builtin_ctzll(nd) / 8) == 0) {
		*v = 0;
		return 0;
	}
	/* Below the first non-digit no borrow: the digits' values. */
	x = (x - 0x3030303030303030ULL) << (8 * (8 - n));
	x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffULL;
	x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffULL;
	x = (x * 10000 + (x >> 32)) & 0xffffffffULL;
	*v = x;
	return n;
}

/*
 * libarchive's functions that the sources use, loaded by the source that
 * needs them (arch.c): kt_arch_load, 0, or -1 with why set ("needs
 * libarchive (...)"); kt_arch_unload when the source closes.
 */
struct kt_arch {
	void		*dl;
	struct archive	*(*read_new)(void);
	int		 (*read_support_filter_all)(struct archive *);
	int		 (*read_support_format_tar)(struct archive *);
	int		 (*read_support_format_zip)(struct archive *);
	int		 (*read_support_format_raw)(struct archive *);
	int		 (*read_open)(struct archive *, void *,
			    archive_open_callback *, archive_read_callback *,
			    archive_close_callback *);
	int		 (*read_next_header)(struct archive *,
			    struct archive_entry **);
	la_ssize_t	 (*read_data)(struct archive *, void *, size_t);
	int		 (*read_free)(struct archive *);
	int		 (*format)(struct archive *);
	const char	*(*error_string)(struct archive *);
	void		 (*set_error)(struct archive *, int, const char *, ...);
	const char	*(*entry_pathname)(struct archive_entry *);
	__LA_MODE_T	 (*entry_filetype)(struct archive_entry *);
};

int	 kt_arch_load(struct kt_arch *, char *, size_t);
void	 kt_arch_unload(struct kt_arch *);

enum {
	KT_SCAN_OK = 0,
	KT_SCAN_MORE,		/* the value runs past the end of the data */
	KT_SCAN_ERR
};

/* One repair the scanner wants applied: replace del bytes at off. */
struct kt_scan_edit {
	size_t	 off;
	size_t	 del;
	char	 ins[8];
	uint8_t	 inslen;
	uint8_t	 repair;	/* enum kt_repair */
};

/*
 * The scanner's paths (scan.c): the same scan with the portable byte
 * loops, with SSE2, with AVX2.  A scanner's path is 0 until its first
 * scan, which takes the best this CPU runs.
 */
enum {
	KT_SCAN_PORTABLE = 1,
	KT_SCAN_SSE2,
	KT_SCAN_AVX2
};

/* Scanner state that lives across calls (to avoid reallocation). */
struct kt_scanner {
	int			 path;		/* KT_SCAN_*, 0: the best */
	unsigned char		*stack;		/* 'o' or 'a' per open container, */
	size_t			 stackcap;	/* when deeper than inl holds */
	unsigned char		 inl[64];
	struct kt_scan_edit	*edits;
	size_t			 nedits;
	size_t			 capedits;
	int			 strict;
	int			 nkeys;		/* members of the outer object */
	int			 plain_nums;	/* the walk took the event last
						   scanned, no number of it
						   with an exponent (else 0) */
	size_t			 err_off;	/* on KT_SCAN_ERR */
	const char		*err_msg;
	char			 err_buf[96];
};

/*
 * Scan one JSON value that starts at buf[pos] (not whitespace) and must
 * end before buf[end].  On KT_SCAN_OK *endp is the offset just past it.
 * With ev not NULL the value must be an object, and its fields are
 * recorded in ev relative to buf + pos.  Repairs are collected in
 * sc->edits (cleared on entry), or are errors when sc->strict.
 */
int	 kt_scan_value(struct kt_scanner *, const char *, size_t, size_t,
	    size_t *, struct kt_event *);
void	 kt_scanner_free(struct kt_scanner *);

/*
 * Turn O_DIRECT on or off for fd's writes: 0, or -1 where the system or
 * the file's file system has none (direct.c).
 */
int	 kt_fd_direct(int, int);

/*
 * The AVX2 path's first try at an event (kt_scan_value makes it there):
 * KT_SCAN_OK with what kt_scan_value records for a plain event (one it
 * scans without an edit), or -1 where it leaves the event to the full
 * scanner (and on a machine without AVX2).  For the unit tests.
 */
int	 kt_scan_fast(struct kt_scanner *, const char *, size_t, size_t,
	    size_t *, struct kt_event *);

/*
 * Skim one event object at buf[pos]: find its end and its top-level
 * fields (not those inside args) without validating it.  For readers
 * that only survey a trace; the same return values as kt_scan_value.
 */
int	 kt_skim_value(struct kt_scanner *, const char *, size_t, size_t,
	    size_t *, struct kt_event *);

/*
 * The newlines of p[0..n): their count, and in *after the offset just
 * past the last of them ((size_t)-1 when there is none).
 */
size_t	 kt_scan_lines(const char *, size_t, size_t *);

/* Apply sc's edits to buf[pos..endp) into out. */
int	 kt_scan_apply(const struct kt_scanner *, const char *, size_t,
	    size_t, struct kt_buf *);

/* Fill ev's derived members (ts, dur, kind, ph) from its fields. */
void	 kt_event_finish(struct kt_event *);
/* The same for a skimmed event: ph, ts, and the kind of a step only. */
void	 kt_event_finish_skim(struct kt_event *);

/*
 * Split reading (read.c, for ahead.c): the events of a plain regular
 * JSON file, or of a gzip file inflated on a thread (gz.c), read in
 * parts on several threads.
 *
 * kt_reader_splittable: whether r reads such a file (not otherwise
 * compressed, archived, copied or a pipe).  kt_reader_split_size: the
 * bytes to cut into parts (a gzip stream's: unknown, 2^62).
 * kt_reader_split_begin(r, at, ahead): the split begins at r's offset at
 * (a gzip stream keeps its bytes from there and inflates up to ahead
 * more; 0, or -1 when it cannot); kt_reader_split_release(r, off): no
 * part is looked for before off any more; kt_reader_split_end: the
 * whole reader reads on alone.  kt_reader_split_point: where r stands
 * once it has given an event (the offset just past it), or -1 when it
 * cannot be split there.  kt_reader_part: a reader of r's file that
 * reads with pread (NULL when out of memory); its events' index is
 * their position from where it was put (kt_reader_part_seek: at from,
 * an event's first byte when at_event, else just past an event), and
 * it stops before the first event that starts at limit or after, or at
 * the end of the events' array: kt_reader_next returns 0 and
 * kt_reader_part_stop says where (1: an event starts at *at, 2: the
 * array ends at *at; 0: neither) and how many positions it read.  Any other end (an error, the input
 * cut) is -1: the part is read again by the whole reader.
 * kt_reader_part_find: the first '{' in [from, to) that follows "}"
 * and "," (white space between): where an event may start.  0 with
 * *at, 1 none, -1 a read error.  kt_reader_resume: the whole reader r
 * goes on at off (at_event as above), its next event's position pos.
 * kt_reader_row: the row number of position pos (its ktSourceIndex).
 */
int		 kt_reader_splittable(const struct kt_reader *);

/*
 * The bytes of r's file on disk where it is a regular file (compressed
 * or not), else 0.  Under KT_SMALL_FILE (kt.h) of them, a reader starts no
 * thread (gzip's decoder, kt_ahead): the thread and its buffers cost
 * more than the scan of so little.
 */
uint64_t	 kt_reader_file_bytes(const struct kt_reader *);
int		 kt_reader_split_point(const struct kt_reader *, uint64_t *);
struct kt_reader *kt_reader_part(const struct kt_reader *);
/*
 * Leave the finish of an event (its times parsed, its kind: that of
 * kt_event_finish) to whoever takes it from the reader's thread, when its
 * times cannot be out of range: such an event comes with KT_EV_LATE, and
 * kt_event_finish clears it.  For a reader read on a thread of its own
 * (ahead.c), whose caller has less to do.
 */
void	 kt_reader_late(struct kt_reader *, int);
#define KT_EV_LATE	0x0080	/* not finished yet (kt_reader_late) */
void		 kt_reader_part_free(struct kt_reader *);
void		 kt_reader_part_seek(struct kt_reader *, uint64_t, int,
		    uint64_t);
int		 kt_reader_part_stop(const struct kt_reader *, uint64_t *,
		    uint64_t *);
int		 kt_reader_part_find(struct kt_reader *, uint64_t, uint64_t,
		    uint64_t *);
int		 kt_reader_resume(struct kt_reader *, uint64_t, int, uint64_t,
		    struct kt_error *);
uint64_t	 kt_reader_split_size(const struct kt_reader *);
int		 kt_reader_split_begin(struct kt_reader *, uint64_t, uint64_t);
void		 kt_reader_split_release(struct kt_reader *, uint64_t);
void		 kt_reader_split_end(struct kt_reader *);
uint64_t	 kt_reader_row(const struct kt_reader *, uint64_t);

/* The JSON type of the value whose first byte is c (event.c). */
enum kt_type kt_type_of(char);
extern const unsigned char kt_ws[256];

/*
 * gz.c: a plain gzip stream through ISA-L, fed by rd(arg, buf, n) (bytes
 * read, 0 at the end, -1 with errno).  kt_gz_new is NULL without ISA-L
 * (or memory).  kt_gz_read gives up to n bytes, 0 at the end, or -1 with
 * *msg (NULL: the input's errno).  Until kt_gz_keep_stop, every byte rd
 * gave is kept in order (kt_gz_kept), to hand to another decoder.
 * kt_gz_start, after kt_gz_keep_stop, inflates ahead on a thread of the
 * stream's own (kt_gz_free stops it): 0, or -1 (it reads on without).
 *
 * With that thread (kt_gz_threaded), the stream's bytes can be read by
 * offset (counted from its first byte) from several threads: kt_gz_split
 * keeps every byte from at on (pre, npre: the bytes from at that
 * kt_gz_read gave already, which it gives again from rpos; pre, from
 * malloc, is the window's now, or freed when it fails) and inflates
 * up to ahead bytes past what is kept; kt_gz_pread gives n bytes at off
 * (fewer only at the end, 0 past it, -1 with *msg, NULL: errno) and
 * waits for them; kt_gz_release(off): no byte before off is read again;
 * kt_gz_seek sets where kt_gz_read reads on; kt_gz_split_end: kt_gz_read
 * drops what it reads again.  kt_gz_lines counts the newlines of a
 * stream's first upto bytes (and the bytes after the last), inflating
 * it again from rd: 0, or -1 when it has fewer.
 */
struct kt_gz;
struct kt_gz	*kt_gz_new(ssize_t (*)(void *, void *, size_t), void *);
void		 kt_gz_free(struct kt_gz *);
void		 kt_gz_finish(struct kt_gz *);	/* without cancelling */
ssize_t		 kt_gz_read(struct kt_gz *, void *, size_t, const char **);
const unsigned char *kt_gz_kept(const struct kt_gz *, size_t *);
void		 kt_gz_keep_stop(struct kt_gz *);
int		 kt_gz_start(struct kt_gz *);
int		 kt_gz_available(void);
int		 kt_gz_threaded(const struct kt_gz *);
ssize_t		 kt_gz_pread(struct kt_gz *, void *, size_t, uint64_t,
		    const char **);
int		 kt_gz_split(struct kt_gz *, uint64_t, unsigned char *, size_t,
		    uint64_t, uint64_t);
void		 kt_gz_release(struct kt_gz *, uint64_t);
void		 kt_gz_seek(struct kt_gz *, uint64_t);
void		 kt_gz_split_end(struct kt_gz *);
int		 kt_gz_lines(ssize_t (*)(void *, void *, size_t), void *,
		    uint64_t, long *, long *);

/*
 * kt_json_minify's ways (write.c), each writing the minified n bytes of
 * p to o (n + 16 bytes of room) and returning the length: the portable
 * byte loop; SSE2 (x86); SSSE3, which kt_json_minify takes when
 * kt_minify_have_ssse3() says the CPU has it; AVX-512 with VBMI2, taken
 * before it where kt_minify_have_avx512() says so.  All give the same bytes;
 * they are here so that the unit tests can call each.
 */
size_t		 kt_minify_scalar(const char *, size_t, char *);
#ifdef __SSE2__
size_t		 kt_minify_sse2(const char *, size_t, char *);
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define KT_MINIFY_SSSE3 1
size_t		 kt_minify_ssse3(const char *, size_t, char *);
int		 kt_minify_have_ssse3(void);
#ifdef __x86_64__
#define KT_MINIFY_AVX512 1
size_t		 kt_minify_avx512(const char *, size_t, char *);
int		 kt_minify_have_avx512(void);
#endif
#endif
#endif

#endif /* KTINT_H */
