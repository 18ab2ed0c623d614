/*
 * read.c: reading traces.  A source is a path or stdin; its content (not
 * its name) says whether it is plain JSON, the kt TSV form, compressed
 * (gzip, zstd, xz, bzip2, through libarchive) or an archive (tar, zip)
 * whose members are traces.  A reader walks one trace's top level, keeps
 * every key other than traceEvents verbatim, and hands out the events one
 * at a time as raw byte spans with their fields located, repairing
 * damaged input where that is safe and counting each repair.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "ktint.h"

#define CHUNK		(1 << 20)	/* bytes asked of the input at once */
#define FIRST		(1 << 16)	/* a reader's first buffer: a small
					   input never needs the full one */
#define PEEK		512		/* bytes looked at to recognise it */
#define PART_READ	(256 << 10)	/* a part reader's read (kt_reader_part) */
#define PART_SLACK	(16 << 10)	/* and what it reads past its limit */
#define NOLIMIT		UINT64_MAX

struct kt_source {
	char		 name[512];
	int		 fd;
	int		 own_fd;
	unsigned	 flags;
	char		*glob;
	struct archive	*ar;		/* NULL for plain input */
	struct kt_arch	 la;		/* libarchive, loaded for ar */
	int		 archived;	/* tar or zip: several members */
	int		 started;
	int		 ended;
	unsigned char	 peek[PEEK];	/* first bytes, read before deciding */
	unsigned char	 head[PEEK];	/* a member's first bytes (peek may
					   still be libarchive's block) */
	char		 block[1 << 16];	/* libarchive reads into it */
	size_t		 npeek;
	size_t		 peekpos;
	uint64_t	 size;
	uint64_t	 fsize;		/* a regular file's bytes on disk */
	struct kt_reader *cur;
	char		 member[512];
	/* A plain gzip stream read with ISA-L (gz.c), not libarchive. */
	struct kt_gz	*gz;
	unsigned char	 gzhead[PEEK];	/* its first output, looked at */
	size_t		 ngzhead, gzheadpos;
	/*
	 * A part reader's source of a gzip stream read split: the whole
	 * reader's stream, read by offset (kt_gz_pread).  gzlazy: the
	 * lines of a gzip stream are counted only when an error needs them
	 * (by inflating it again), once it is read split.
	 */
	struct kt_gz	*pgz;
	int		 gzlazy;
	/* Compressed bytes the gzip probe read, for libarchive after all. */
	unsigned char	*pre;
	size_t		 npre, prepos;
	/*
	 * kt_source_open_tee: every byte read from fd is also written to
	 * tee (-1: none), at most teemax (0: no cap); teeerr the errno of
	 * a write that failed, or -1 past the cap (then no more is written).
	 */
	int		 tee;
	uint64_t	 teemax, teed;
	int		 teeerr;
	/*
	 * The copy written past the page cache (kt_fd_direct), TEE_BLOCK
	 * aligned bytes at a time from teebuf; its last bytes are written
	 * as usual when the copy is complete (kt_source_drain).
	 */
	char		*teebuf;
	size_t		 teen;
	int		 teedirect;	/* O_DIRECT is on */
	/*
	 * A part reader's source (kt_reader_part): the file of another
	 * source read with pread from at, so that several readers share
	 * one descriptor without sharing its offset.
	 */
	int		 part;
	uint64_t	 at;
};

enum {
	R_START, R_TOPKEY, R_TOPNEXT, R_EVFIRST, R_EVNEXT, R_DONE, R_END,
	R_TSV
};

struct kt_reader {
	char		 name[1024];
	struct kt_source *src;		/* NULL for a memory reader */
	char		*own;		/* the buffer, when streaming */
	const char	*buf;
	size_t		 cap;
	size_t		 lo;		/* parse position */
	size_t		 hi;		/* end of data */
	int		 eof;
	int		 eof_next;	/* the last refill ended at EOF */
	int		 filled;	/* a refill filled the first buffer */
	uint64_t	 base;		/* input offset of buf[0] */
	long		 line_base;	/* newlines before buf[0] */
	long		 col_base;	/* bytes after the last of them */
	int		 late;		/* kt_reader_late */
	unsigned	 flags;
	int		 state;
	enum kt_form	 form;
	int		 seen_events;
	int		 first_member;	/* next top-level member is the first */
	struct kt_scanner sc;
	struct kt_buf	 rep;		/* a repaired or patched event */
	struct kt_buf	 tmp;
	struct kt_meta	*meta;
	size_t		 nmeta;
	size_t		 capmeta;
	struct kt_repairs repairs;
	uint64_t	 pos;		/* events handed out so far */
	/* ktSourceIndex: 4 bytes a row while every one fits, else 8. */
	uint32_t	*si32;
	uint64_t	*si64;
	size_t		 nsrcindex;
	int		 srcindex_after;	/* read after the events */
	int		 tail_known;	/* keys after the events read first */
	long		 tsvline;
	int		 tsvcols;	/* 10, or 11 with a rank column */
	int64_t		 origin;	/* TSV rel_ns count from here */
	int		 tsvend;	/* its end row was read */
	/*
	 * Split reading (kt_reader_part): a part reader stops before the
	 * first event that starts at or past limit, and at the end of the
	 * events' array, and says where in stop (stop_end: the array's
	 * end); any other end is a failure of the part.
	 */
	uint64_t	 limit;
	uint64_t	 stop;
	int		 stop_end;
};

/* ------------------------------------------------------------------ */
/* Sources. */

/* Read from the source's file descriptor, retrying on EINTR. */
static ssize_t
fd_read(int fd, void *buf, size_t n)
{
	ssize_t r;

	do
		r = read(fd, buf, n);
	while (r == -1 && errno == EINTR);
	return r;
}

/*
 * Copy a name from the input into out (n bytes) fit for a one-line
 * message: control characters (newline, tab, ESC, DEL) written as \xNN,
 * and a backslash doubled.  NULL reads as "".
 */
static void
printable(char *out, size_t n, const char *in)
{
	size_t k = 0;

	for (; in != NULL && *in != '\0' && k + 5 < n; in++) {
		unsigned char c = (unsigned char)*in;

		if (c < 0x20 || c == 0x7f)
			k += (size_t)snprintf(out + k, n - k, "\\x%02x", c);
		else if (c == '\\') {
			out[k++] = '\\';
			out[k++] = '\\';
		} else
			out[k++] = (char)c;
	}
	if (n > 0)
		out[k] = '\0';
}

/* The error of a copy (a spool, a tee) past its cap of max bytes. */
static void
over_cap(struct kt_error *err, const char *name, uint64_t max)
{
	kt_error_set(err, name, 0, 0, "more than %llu bytes to copy (the cap "
	    "on a copy: --spool-max or KT_SPOOL_MAX; give a file instead)",
	    (unsigned long long)max);
}

/* pread, retrying on EINTR. */
static ssize_t
fd_pread(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	do
		r = pread(fd, buf, n, (off_t)off);
	while (r == -1 && errno == EINTR);
	return r;
}

#define TEE_BLOCK	((size_t)4 << 20)	/* a direct write of the copy */
#define TEE_ALIGN	4096			/* its buffer's alignment */

/* Write n bytes to the tee; 0, or -1 with teeerr set. */
static int
tee_write(struct kt_source *s, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(s->tee, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EINVAL && s->teedirect &&
			    kt_fd_direct(s->tee, 0) == 0) {
				/* No direct writes here after all. */
				s->teedirect = 0;
				continue;
			}
			s->teeerr = errno;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write the copy's held bytes as usual: it is complete (teeerr says
 * whether it could be). */
static void
tee_finish(struct kt_source *s)
{
	if (s->teebuf == NULL)
		return;
	if (s->teedirect && kt_fd_direct(s->tee, 0) == -1)
		s->teeerr = errno ? errno : EIO;
	else {
		s->teedirect = 0;
		(void)tee_write(s, s->teebuf, s->teen);
	}
	free(s->teebuf);
	s->teebuf = NULL;
	s->teen = 0;
}

/* Read from the source's descriptor, and copy it to the tee. */
static ssize_t
src_fd_read(struct kt_source *s, void *buf, size_t n)
{
	ssize_t r = fd_read(s->fd, buf, n);
	size_t off = 0, k;
	int cs;

	if (r <= 0 || s->tee == -1 || s->teeerr != 0)
		return r;
	if (s->teemax > 0 && s->teed + (uint64_t)r > s->teemax) {
		s->teeerr = -1;
		return r;
	}
	/*
	 * gzip's decoder thread reads here, and kt_gz_free cancels it: not
	 * between reading these bytes and copying them (write is a
	 * cancellation point), or the copy would lose them.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	if (s->teebuf == NULL)
		(void)tee_write(s, buf, (size_t)r);
	/* Else through teebuf, a block at a time. */
	while (s->teebuf != NULL && off < (size_t)r && s->teeerr == 0) {
		k = TEE_BLOCK - s->teen;
		if (k > (size_t)r - off)
			k = (size_t)r - off;
		memcpy(s->teebuf + s->teen, (char *)buf + off, k);
		s->teen += k;
		off += k;
		if (s->teen == TEE_BLOCK &&
		    tee_write(s, s->teebuf, TEE_BLOCK) == 0)
			s->teen = 0;
	}
	if (s->teeerr == 0)
		s->teed += (uint64_t)r;
	pthread_setcancelstate(cs, NULL);
	return r;
}

/* libarchive's read callback: the peeked bytes first, then the fd. */
static la_ssize_t
ar_read(struct archive *a, void *arg, const void **out)
{
	struct kt_source *s = arg;
	ssize_t r;

	(void)a;
	if (s->prepos < s->npre) {
		*out = s->pre + s->prepos;
		r = (ssize_t)(s->npre - s->prepos);
		s->prepos = s->npre;
		return r;
	}
	if (s->peekpos < s->npeek) {
		*out = s->peek + s->peekpos;
		r = (ssize_t)(s->npeek - s->peekpos);
		s->peekpos = s->npeek;
		return r;
	}
	*out = s->block;
	r = src_fd_read(s, s->block, sizeof(s->block));
	if (r == -1)
		s->la.set_error(a, errno, "%s", strerror(errno));
	return r;
}

/* Copy up to n of the bytes of p[*pos..len) into buf; the count. */
static size_t
take(const unsigned char *p, size_t len, size_t *pos, void *buf, size_t n)
{
	size_t m = len - *pos;

	if (m > n)
		m = n;
	memcpy(buf, p + *pos, m);
	*pos += m;
	return m;
}

/*
 * A part reader's bytes at off: its file's, or its gzip stream's (whose
 * errors it does not tell: the whole reader reads them again).
 */
static ssize_t
part_pread(struct kt_source *s, void *buf, size_t n, uint64_t off)
{
	const char *msg;
	ssize_t r;

	if (s->pgz == NULL)
		return fd_pread(s->fd, buf, n, off);
	if ((r = kt_gz_pread(s->pgz, buf, n, off, &msg)) == -1 &&
	    msg != NULL)
		errno = EIO;
	return r;
}

/*
 * A plain input's bytes, the peeked ones first, then the fd's (arg: the
 * source; also the gzip decoder's input).
 */
static ssize_t
plain_read(void *arg, void *buf, size_t n)
{
	struct kt_source *s = arg;

	if (s->peekpos < s->npeek)
		return (ssize_t)take(s->peek, s->npeek, &s->peekpos, buf, n);
	if (s->part) {
		ssize_t r = part_pread(s, buf, n, s->at);

		if (r > 0)
			s->at += (uint64_t)r;
		return r;
	}
	return src_fd_read(s, buf, n);
}


/*
 * A gzip stream: decompress it with ISA-L unless it holds a tar archive
 * or its first bytes do not decompress (then libarchive reads it all,
 * the bytes read so far given back first, and says what is wrong).
 * 1: s->gz reads it; 0: libarchive; -1 with err (out of memory).
 */
static int
gz_try(struct kt_source *s, struct kt_error *err)
{
	const unsigned char *kept;
	const char *msg;
	size_t n = 0;
	ssize_t r;
	int ok = 1;

	if ((s->gz = kt_gz_new(plain_read, s)) == NULL)
		return 0;
	while (n < PEEK) {
		if ((r = kt_gz_read(s->gz, s->gzhead + n, PEEK - n,
		    &msg)) == -1) {
			ok = 0;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (ok && !(n >= 262 && memcmp(s->gzhead + 257, "ustar", 5) == 0)) {
		kt_gz_keep_stop(s->gz);
		/*
		 * Inflate ahead on a second core (not for many readers, nor
		 * for a small file, whose thread costs more than it saves,
		 * unless KT_SPLIT asks for pieces of any file: for tests).
		 */
		if (!(s->flags & KT_READ_SMALL) &&
		    (!(s->fsize > 0 && s->fsize < KT_SMALL_FILE) ||
		    getenv("KT_SPLIT") != NULL))
			(void)kt_gz_start(s->gz);
		s->ngzhead = n;
		s->size = 0;	/* not a plain file: no offsets into it */
		return 1;
	}
	kept = kt_gz_kept(s->gz, &n);
	if (n > 0) {
		if ((s->pre = malloc(n)) == NULL) {
			kt_error_set(err, s->name, 0, 0, "out of memory");
			return -1;
		}
		memcpy(s->pre, kept, n);
		s->npre = n;
	}
	kt_gz_free(s->gz);
	s->gz = NULL;
	return 0;
}

/* Is the first content a trace (JSON object or array, or kt TSV)? */
static int
looks_like_trace(const unsigned char *p, size_t n)
{
	size_t i = 0;

	if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		i = 3;
	while (i < n && kt_ws[p[i]])
		i++;
	if (i == n)
		return n == 0 ? 0 : 1;	/* all blank: let the reader say */
	if (p[i] == '{' || p[i] == '[')
		return 1;
	return n - i >= 8 && memcmp(p + i, "id\tkind\t", 8) == 0;
}

/* Is it compressed (gzip, zstd, xz, bzip2) or archived (zip, tar)? */
static int
packed(const unsigned char *p, size_t n)
{
	return (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) ||
	    (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0) ||
	    (n >= 6 && memcmp(p, "\xfd" "7zXZ\0", 6) == 0) ||
	    (n >= 3 && memcmp(p, "BZh", 3) == 0) ||
	    (n >= 4 && memcmp(p, "PK\3\4", 4) == 0) ||
	    (n >= 262 && memcmp(p + 257, "ustar", 5) == 0);
}

struct kt_source *
kt_source_open(const char *path, const char *glob, unsigned flags,
    struct kt_error *err)
{
	return kt_source_open_as(path, NULL, glob, flags, err);
}

static struct kt_source *source_open(const char *, const char *,
		    const char *, unsigned, int, uint64_t, struct kt_error *);

struct kt_source *
kt_source_open_as(const char *path, const char *name, const char *glob,
    unsigned flags, struct kt_error *err)
{
	return source_open(path, name, glob, flags, -1, 0, err);
}

struct kt_source *
kt_source_open_tee(const char *path, const char *name, const char *glob,
    unsigned flags, int tee, uint64_t max, struct kt_error *err)
{
	return source_open(path, name, glob, flags, tee, max, err);
}

int
kt_source_untee(struct kt_source *s)
{
	if (s->gz != NULL)
		return -1;	/* its thread may be reading */
	s->tee = -1;
	free(s->teebuf);
	s->teebuf = NULL;
	s->teedirect = 0;
	return 0;
}

int
kt_source_drain(struct kt_source *s, struct kt_error *err)
{
	char *buf;
	ssize_t r;

	/* Its decoder's thread stopped first: the rest is read here. */
	kt_gz_finish(s->gz);
	s->gz = NULL;
	if ((buf = malloc((size_t)1 << 20)) == NULL) {
		kt_error_set(err, s->name, 0, 0, "out of memory");
		return -1;
	}
	while ((r = src_fd_read(s, buf, (size_t)1 << 20)) > 0 &&
	    s->teeerr == 0)
		;
	free(buf);
	if (r == 0 && s->teeerr == 0)
		tee_finish(s);
	if (r == -1) {
		kt_error_set(err, s->name, 0, 0, "%s", strerror(errno));
		return -1;
	}
	if (s->teeerr == -1) {
		over_cap(err, s->name, s->teemax);
		return -1;
	}
	if (s->teeerr != 0) {
		kt_error_set(err, s->name, 0, 0, "a copy of it: %s",
		    strerror(s->teeerr));
		return -1;
	}
	return 0;
}

static struct kt_source *
source_open(const char *path, const char *name, const char *glob,
    unsigned flags, int tee, uint64_t teemax, struct kt_error *err)
{
	struct kt_source *s;
	struct stat st;
	const unsigned char *p;
	ssize_t r;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		kt_error_set(err, path, 0, 0, "out of memory");
		return NULL;
	}
	s->flags = flags;
	s->tee = tee;
	s->teemax = teemax;
	/* The copy past the page cache, where its file system can. */
	if (tee != -1 && lseek(tee, 0, SEEK_CUR) == 0 &&
	    posix_memalign((void **)&s->teebuf, TEE_ALIGN, TEE_BLOCK) == 0) {
		if (kt_fd_direct(tee, 1) == 0)
			s->teedirect = 1;
		else {
			free(s->teebuf);
			s->teebuf = NULL;
		}
	}
	if (path == NULL || strcmp(path, "-") == 0) {
		snprintf(s->name, sizeof(s->name), "<stdin>");
		s->fd = 0;
	} else {
		snprintf(s->name, sizeof(s->name), "%s", name ? name : path);
		if ((s->fd = open(path, O_RDONLY)) == -1) {
			kt_error_set(err, path, 0, 0, "%s", strerror(errno));
			free(s);
			return NULL;
		}
		s->own_fd = 1;
	}
	if (fstat(s->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			kt_error_set(err, s->name, 0, 0, "is a directory");
			kt_source_close(s);
			return NULL;
		}
		if (S_ISREG(st.st_mode))
			s->size = s->fsize = (uint64_t)st.st_size;
	}
	if (glob != NULL && (s->glob = strdup(glob)) == NULL) {
		kt_error_set(err, s->name, 0, 0, "out of memory");
		kt_source_close(s);
		return NULL;
	}
	while (s->npeek < PEEK) {
		r = src_fd_read(s, s->peek + s->npeek, PEEK - s->npeek);
		if (r == -1) {
			kt_error_set(err, s->name, 0, 0, "%s", strerror(errno));
			kt_source_close(s);
			return NULL;
		}
		if (r == 0)
			break;
		s->npeek += (size_t)r;
	}
	p = s->peek;
	if (s->npeek >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		int rc = gz_try(s, err);

		if (rc == 1)
			return s;
		if (rc == -1) {
			kt_source_close(s);
			return NULL;
		}
	}
	if (packed(p, s->npeek)) {
		char why[512];

		if (kt_arch_load(&s->la, why, sizeof(why)) == -1) {
			kt_error_set(err, s->name, 0, 0, "compressed or "
			    "archived input %s", why);
			kt_source_close(s);
			return NULL;
		}
		if ((s->ar = s->la.read_new()) == NULL) {
			kt_error_set(err, s->name, 0, 0, "out of memory");
			kt_source_close(s);
			return NULL;
		}
		s->la.read_support_filter_all(s->ar);
		s->la.read_support_format_tar(s->ar);
		s->la.read_support_format_zip(s->ar);
		s->la.read_support_format_raw(s->ar);
		if (s->la.read_open(s->ar, s, NULL, ar_read, NULL) !=
		    ARCHIVE_OK) {
			kt_error_set(err, s->name, 0, 0, "%s",
			    s->la.error_string(s->ar));
			kt_source_close(s);
			return NULL;
		}
	}
	return s;
}

void
kt_source_close(struct kt_source *s)
{
	if (s == NULL)
		return;
	if (s->cur != NULL)
		s->cur->src = NULL;
	if (s->ar != NULL)
		s->la.read_free(s->ar);
	kt_arch_unload(&s->la);
	kt_gz_free(s->gz);
	free(s->pre);
	free(s->teebuf);
	if (s->own_fd)
		close(s->fd);
	free(s->glob);
	free(s);
}

/* Read up to n bytes of the current trace into buf. */
static ssize_t
src_read(struct kt_source *s, char *buf, size_t n, struct kt_error *err)
{
	ssize_t r;

	if (s->gz != NULL) {
		const char *msg;

		if (s->gzheadpos < s->ngzhead)
			return (ssize_t)take(s->gzhead, s->ngzhead,
			    &s->gzheadpos, buf, n);
		if ((r = kt_gz_read(s->gz, buf, n, &msg)) == -1)
			kt_error_set(err, s->cur ? s->cur->name : s->name, 0,
			    0, "%s", msg != NULL ? msg : strerror(errno));
		return r;
	}
	if (s->ar != NULL) {
		r = s->la.read_data(s->ar, buf, n);
		if (r < 0) {
			kt_error_set(err, s->cur ? s->cur->name : s->name, 0, 0,
			    "%s", s->la.error_string(s->ar));
			return -1;
		}
		return r;
	}
	r = plain_read(s, buf, n);
	if (r == -1)
		kt_error_set(err, s->name, 0, 0, "%s", strerror(errno));
	return r;
}

static struct kt_reader *reader_new(const char *, unsigned);

/*
 * --member on a trace that is not an archive: it must name the file
 * itself, else it would be ignored without a word.  0, or -1 with err.
 */
static int
glob_plain(struct kt_source *s, struct kt_error *err)
{
	const char *base = strrchr(s->name, '/');

	base = base != NULL ? base + 1 : s->name;
	if (s->glob == NULL || fnmatch(s->glob, base, 0) == 0)
		return 0;
	s->ended = 1;
	kt_error_set(err, s->name, 0, 0, "not an archive: no member matches "
	    "--member");
	return -1;
}

int
kt_source_next(struct kt_source *s, struct kt_reader **rp,
    struct kt_error *err)
{
	struct archive_entry *ae;
	struct kt_reader *r;
	ssize_t n;
	int rc;

	s->cur = NULL;
	if (s->ended)
		return 0;
	if (s->ar == NULL || s->la.format(s->ar) == ARCHIVE_FORMAT_RAW) {
		/* A single trace: plain, or compressed with no archive. */
		if (s->started) {
			s->ended = 1;
			return 0;
		}
	}
	for (;;) {
		if (s->ar == NULL) {
			if (glob_plain(s, err) == -1)
				return -1;
			s->started = 1;
			if ((r = reader_new(s->name, s->flags)) == NULL)
				goto nomem;
			break;
		}
		rc = s->la.read_next_header(s->ar, &ae);
		if (rc == ARCHIVE_EOF) {
			s->ended = 1;
			if (!s->started) {
				kt_error_set(err, s->name, 0, 0, "%s",
				    s->glob ? "no archive member matches "
				    "--member" : "no trace in the archive");
				return -1;
			}
			return 0;
		}
		if (rc < ARCHIVE_WARN) {
			kt_error_set(err, s->name, 0, 0, "%s",
			    s->la.error_string(s->ar));
			return -1;
		}
		if (s->la.format(s->ar) == ARCHIVE_FORMAT_RAW) {
			if (glob_plain(s, err) == -1)
				return -1;
			s->started = 1;
			if ((r = reader_new(s->name, s->flags)) == NULL)
				goto nomem;
			break;
		}
		s->archived = 1;
		if (s->la.entry_filetype(ae) != AE_IFREG)
			continue;
		/* Named escaped in messages; matched as it is. */
		printable(s->member, sizeof(s->member),
		    s->la.entry_pathname(ae));
		if (s->glob != NULL && fnmatch(s->glob,
		    s->la.entry_pathname(ae) != NULL ?
		    s->la.entry_pathname(ae) : "", 0) != 0)
			continue;
		/* Look at the member's first bytes: is it a trace? */
		n = s->la.read_data(s->ar, s->head, PEEK);
		if (n < 0) {
			kt_error_set(err, s->name, 0, 0, "%s: %s", s->member,
			    s->la.error_string(s->ar));
			return -1;
		}
		if (!looks_like_trace(s->head, (size_t)n) && s->glob == NULL)
			continue;
		{
			char nm[1100];

			snprintf(nm, sizeof(nm), "%s:%s", s->name, s->member);
			if ((r = reader_new(nm, s->flags)) == NULL)
				goto nomem;
		}
		/* Hand the peeked bytes to the reader first. */
		memcpy(r->own, s->head, (size_t)n);
		r->hi = (size_t)n;
		s->started = 1;
		break;
	}
	r->src = s;
	s->cur = r;
	*rp = r;
	return 1;
nomem:
	kt_error_set(err, s->name, 0, 0, "out of memory");
	return -1;
}

char *
kt_spool_stdin(struct kt_error *err)
{
	return kt_spool_fd(0, "<stdin>", 0, err);
}

int
kt_temp_file(char **pathp, struct kt_error *err)
{
	const char *dir = getenv("TMPDIR");
	char *path, fdpath[32];
	int fd, probe;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if ((path = malloc(strlen(dir) + 32)) == NULL) {
		kt_error_set(err, dir, 0, 0, "out of memory");
		return -1;
	}
	sprintf(path, "%s/kt-stdin.XXXXXX", dir);
	if ((fd = mkstemp(path)) == -1) {
		kt_error_set(err, path, 0, 0, "%s", strerror(errno));
		free(path);
		return -1;
	}
	/*
	 * Named by its descriptor from now on: the file is unlinked at
	 * once, so that nothing is left behind however the program ends.
	 * Without /proc the path stays, for the caller to remove.
	 */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if ((probe = open(fdpath, O_RDONLY)) != -1) {
		close(probe);
		unlink(path);
		snprintf(path, strlen(dir) + 32, "%s", fdpath);
	}
	*pathp = path;
	return fd;
}

/*
 * What spool copies: a descriptor's bytes, or a reader's
 * (kt_reader_read).  Up to n bytes into buf: the count, 0 at the end,
 * -1 with errno set (fd) or err set (reader).
 */
struct spool_in {
	int		 fd;
	struct kt_reader *rd;
};

static ssize_t
spool_read(struct spool_in *in, void *buf, size_t n, struct kt_error *err)
{
	if (in->rd != NULL)
		return (ssize_t)kt_reader_read(in->rd, buf, n, err);
	return fd_read(in->fd, buf, n);
}

/*
 * Copy in into a new temporary file; its path (see kt_spool_fd).  The
 * first bytes of a descriptor are looked at first.
 */
static char *
spool(struct spool_in *in, const char *name, uint64_t max,
    struct kt_error *err)
{
	char *path, *buf;
	ssize_t n;
	size_t head = 0, bufsz = (size_t)1 << 20;
	uint64_t total = 0;
	int fd;

	if ((buf = malloc(bufsz)) == NULL) {
		kt_error_set(err, name, 0, 0, "out of memory");
		return NULL;
	}
	/* The first bytes first: nothing is copied that is not a trace. */
	while (head < PEEK && (n = spool_read(in, buf + head, PEEK - head,
	    err)) > 0)
		head += (size_t)n;
	if (in->rd == NULL && head > 0 && !packed((unsigned char *)buf, head) &&
	    !looks_like_trace((unsigned char *)buf, head)) {
		kt_error_set(err, name, 1, 1, "not a JSON trace: expected "
		    "'{' or '['; nothing was copied");
		free(buf);
		return NULL;
	}
	if ((fd = kt_temp_file(&path, err)) == -1) {
		free(buf);
		return NULL;
	}
	n = (ssize_t)head;
	do {
		ssize_t w, off = 0;

		total += (uint64_t)n;
		if (max > 0 && total > max) {
			over_cap(err, name, max);
			goto fail_quiet;
		}
		while (off < n) {
			if ((w = write(fd, buf + off, (size_t)(n - off))) == -1) {
				if (errno == EINTR)
					continue;
				goto fail;
			}
			off += w;
		}
	} while ((n = spool_read(in, buf, bufsz, err)) > 0);
	if (n == -1) {
		if (in->rd != NULL)
			goto fail_quiet;
		goto fail;
	}
	/* fd stays open: it is the file while the path is /proc/self/fd. */
	if (strncmp(path, "/proc/self/fd/", 14) != 0 && close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	free(buf);
	return path;
fail:
	kt_error_set(err, name, 0, 0, "%s", strerror(errno));
fail_quiet:
	if (fd != -1)
		close(fd);
	if (strncmp(path, "/proc/self/fd/", 14) != 0)
		unlink(path);
	free(path);
	free(buf);
	return NULL;
}

char *
kt_spool_fd(int in, const char *name, uint64_t max, struct kt_error *err)
{
	struct spool_in si;

	si.fd = in;
	si.rd = NULL;
	return spool(&si, name, max, err);
}

char *
kt_spool_reader(struct kt_reader *rd, uint64_t max, struct kt_error *err)
{
	struct spool_in si;

	si.fd = -1;
	si.rd = rd;
	return spool(&si, rd->name, max, err);
}

int
kt_rank_from_name(const char *name, int64_t *rank, const char **how)
{
	static const struct {
		const char	*prefix;
		const char	*how;
	} pats[] = {
		{ "rank", "file name: rank<N>" },
		{ "rank-", "file name: rank-N" },
		{ "rank_", "file name: rank_N" },
		{ "worker", "file name: worker<N>" },
		{ "-", "file name: -N." },
	};
	const char *base = strrchr(name, '/'), *p;
	size_t i, k;

	base = base ? base + 1 : name;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		size_t pl = strlen(pats[i].prefix);

		for (p = base; (p = strstr(p, pats[i].prefix)) != NULL; p++) {
			const char *d = p + pl;
			int64_t v = 0;

			for (k = 0; d[k] >= '0' && d[k] <= '9' && k < 9; k++)
				v = v * 10 + (d[k] - '0');
			if (k == 0 || (d[k] >= '0' && d[k] <= '9'))
				continue;
			/* -N. only before a file extension: "trace-3.json",
			   not a version ("Qwen1.5-0.5B-Chat"). */
			if (i == 4 && (d[k] != '.' || !((d[k + 1] >= 'a' &&
			    d[k + 1] <= 'z') || (d[k + 1] >= 'A' &&
			    d[k + 1] <= 'Z'))))
				continue;
			*rank = v;
			*how = pats[i].how;
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* Readers. */

/* The scanner's path a reader takes: KT_SCAN's, else the CPU's best. */
static int
reader_scan_path(void)
{
	int path = kt_scan_path(getenv("KT_SCAN"));

	return path > 0 ? path : 0;
}

static struct kt_reader *
reader_new(const char *name, unsigned flags)
{
	struct kt_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->cap = FIRST;
	if ((r->own = malloc(r->cap)) == NULL) {
		free(r);
		return NULL;
	}
	r->buf = r->own;
	r->flags = flags;
	r->sc.strict = (flags & KT_READ_STRICT) != 0;
	r->sc.path = reader_scan_path();
	r->first_member = 1;
	r->limit = NOLIMIT;
	return r;
}

struct kt_reader *
kt_reader_mem(const char *buf, size_t n, const char *name, unsigned flags)
{
	struct kt_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "<memory>");
	r->buf = buf;
	r->hi = r->cap = n;
	r->eof = 1;
	r->flags = flags;
	r->sc.strict = (flags & KT_READ_STRICT) != 0;
	r->sc.path = reader_scan_path();
	r->first_member = 1;
	r->limit = NOLIMIT;
	return r;
}

void
kt_reader_free(struct kt_reader *r)
{
	size_t i;

	if (r == NULL)
		return;
	if (r->src != NULL && r->src->cur == r)
		r->src->cur = NULL;
	for (i = 0; i < r->nmeta; i++) {
		free(r->meta[i].key);
		free(r->meta[i].val);
	}
	free(r->meta);
	free(r->own);
	free(r->si32);
	free(r->si64);
	kt_scanner_free(&r->sc);
	kt_buf_free(&r->rep);
	kt_buf_free(&r->tmp);
	free(r);
}

/*
 * The raw bytes: first those already in the buffer (a member's peeked
 * first bytes, a memory reader's text), then straight from the source.
 * base follows, so that kt_reader_offset() counts the bytes read.
 */
int64_t
kt_reader_read(struct kt_reader *r, void *buf, size_t n,
    struct kt_error *err)
{
	ssize_t got;
	size_t m;

	if (n == 0)
		return 0;
	if (n > (size_t)1 << 30)
		n = (size_t)1 << 30;
	if (r->lo < r->hi) {
		m = r->hi - r->lo < n ? r->hi - r->lo : n;
		memcpy(buf, r->buf + r->lo, m);
		r->lo += m;
		return (int64_t)m;
	}
	if (r->eof || r->eof_next || r->src == NULL || r->src->cur != r) {
		r->eof = 1;
		return 0;
	}
	if ((got = src_read(r->src, buf, n, err)) < 0)
		return -1;
	if (got == 0)
		r->eof = 1;
	r->base += (uint64_t)got;
	return (int64_t)got;
}

int
kt_source_archived(const struct kt_source *s)
{
	return s->archived;
}

int
kt_source_plain(const struct kt_source *s)
{
	return s->started && s->ar == NULL && s->gz == NULL && !s->part;
}

int
kt_reader_rows(const struct kt_reader *r, struct kt_rows *rows, int *applied)
{
	memset(rows, 0, sizeof(*rows));
	if (r->flags & KT_READ_POSITIONS) {
		/* Numbered by position: no row numbers to map. */
		if (applied != NULL)
			*applied = 1;
		return 0;
	}
	if (applied != NULL)
		*applied = !r->srcindex_after;
	return kt_reader_srcindex(r, rows);
}

int
kt_reader_srcindex(const struct kt_reader *r, struct kt_rows *rows)
{
	memset(rows, 0, sizeof(*rows));
	if (r->si32 == NULL && r->si64 == NULL)
		return 0;
	rows->r32 = r->si32;
	rows->r64 = r->si64;
	rows->n = r->nsrcindex;
	return 1;
}

uint64_t
kt_reader_position(const struct kt_reader *r)
{
	return r->pos > 0 ? r->pos - 1 : 0;
}

/*
 * Does the writer's separator come just before ev, which reader_next
 * just returned, in r's buffer?  ev's bytes must be the input's, at their
 * place, not a repaired copy.
 */
static int
sep_before(const struct kt_reader *r, const struct kt_event *ev)
{
	const size_t n = sizeof(KT_WRITE_SEP) - 1;
	uintptr_t b = (uintptr_t)r->buf, e = (uintptr_t)ev->raw;

	return r->buf != NULL && ev->raw != NULL && e >= b + n &&
	    e - b <= r->hi && ev->len <= r->hi - (e - b) &&
	    r->base + (e - b) + ev->len == ev->end &&
	    memcmp(ev->raw - n, KT_WRITE_SEP, n) == 0;
}

uint64_t
kt_reader_row(const struct kt_reader *r, uint64_t pos)
{
	if (pos >= r->nsrcindex || r->srcindex_after ||
	    (r->flags & KT_READ_POSITIONS))
		return pos;
	return r->si32 != NULL ? r->si32[pos] : r->si64[pos];
}

/* ------------------------------------------------------------------ */
/*
 * Split reading: a plain file's events read in parts (ahead.c), or a
 * gzip file's, from its decoder thread's window (gz.c).
 */

int
kt_reader_splittable(const struct kt_reader *r)
{
	const struct kt_source *s = r->src;

	/* A gzip stream: inflated on a thread, from a file opened here. */
	return s != NULL && s->cur == r && s->ar == NULL &&
	    (s->gz != NULL ? kt_gz_threaded(s->gz) && s->own_fd &&
	    s->fsize > 0 : s->size > 0) &&
	    s->tee == -1 && !s->part && r->limit == NOLIMIT &&
	    r->state != R_TSV;
}

int
kt_reader_split_point(const struct kt_reader *r, uint64_t *off)
{
	/* Between events of a JSON trace (never R_TSV's). */
	if (!kt_reader_splittable(r) || r->state != R_EVNEXT)
		return -1;
	*off = r->base + r->lo;
	return 0;
}

struct kt_reader *
kt_reader_part(const struct kt_reader *r)
{
	struct kt_source *s;
	struct kt_reader *p;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((p = reader_new(r->name, r->flags | KT_READ_POSITIONS |
	    KT_READ_SMALL)) == NULL) {
		free(s);
		return NULL;
	}
	memcpy(s->name, r->src->name, sizeof(s->name));
	s->fd = r->src->fd;
	s->tee = -1;
	s->part = 1;
	s->size = r->src->size;
	s->pgz = r->src->gz;
	s->gzlazy = r->src->gz != NULL;
	s->started = 1;
	s->cur = p;
	p->src = s;
	p->form = r->form;
	p->seen_events = 1;
	p->filled = 1;		/* the full buffer from the first refill */
	p->state = R_END;
	return p;
}

void
kt_reader_part_free(struct kt_reader *p)
{
	struct kt_source *s;

	if (p == NULL)
		return;
	s = p->src;
	kt_reader_free(p);
	kt_source_close(s);
}

/* Forget what the buffer holds: the next refill reads from off. */
static void
reposition(struct kt_reader *r, uint64_t off, int at_event, uint64_t pos)
{
	r->base = off;
	r->lo = r->hi = 0;
	r->eof = r->eof_next = 0;
	r->line_base = r->col_base = 0;	/* lines are counted lazily */
	r->state = at_event ? R_EVFIRST : R_EVNEXT;
	r->pos = pos;
}

void
kt_reader_part_seek(struct kt_reader *p, uint64_t from, int at_event,
    uint64_t limit)
{
	reposition(p, from, at_event, 0);
	p->src->at = from;
	p->limit = limit;
	p->stop = 0;
	p->stop_end = 0;
	memset(&p->repairs, 0, sizeof(p->repairs));
}

int
kt_reader_part_stop(const struct kt_reader *p, uint64_t *at, uint64_t *npos)
{
	if (p->stop == 0)
		return 0;
	*at = p->stop;
	*npos = p->pos;
	return p->stop_end ? 2 : 1;
}

/* Is there "}" ws "," ws just before b[i] (not before b[lo])? */
static int
after_event(const char *b, size_t lo, size_t i)
{
	while (i > lo && kt_ws[(unsigned char)b[i - 1]])
		i--;
	if (i == lo || b[--i] != ',')
		return 0;
	while (i > lo && kt_ws[(unsigned char)b[i - 1]])
		i--;
	return i > lo && b[i - 1] == '}';
}

#define FIND_BACK	256	/* bytes before a '{' its separator may take */
#define FIND_FIRST	4096	/* the first window looked at */

int
kt_reader_part_find(struct kt_reader *p, uint64_t from, uint64_t to,
    uint64_t *at)
{
	uint64_t lo = from > FIND_BACK ? from - FIND_BACK : 0;
	size_t win = FIND_FIRST;

	for (;;) {
		size_t i = (size_t)(from - lo);
		ssize_t got;
		const char *q;

		/* A few kB usually hold one: read more only when they do not. */
		if (win > p->cap)
			win = p->cap;
		if ((got = part_pread(p->src, p->own, win, lo)) < 0)
			return -1;
		while (i < (size_t)got && lo + i < to &&
		    (q = memchr(p->own + i, '{', (size_t)got - i)) != NULL) {
			i = (size_t)(q - p->own);
			if (lo + i >= to)
				break;
			if (after_event(p->own, 0, i)) {
				*at = lo + i;
				return 0;
			}
			i++;
		}
		if ((size_t)got < win || lo + (uint64_t)got >= to)
			return 1;
		/* The next window: its first FIND_BACK bytes seen already. */
		lo += (uint64_t)got - FIND_BACK;
		from = lo + FIND_BACK;
		win *= 2;
	}
}

int
kt_reader_resume(struct kt_reader *r, uint64_t off, int at_event,
    uint64_t pos, struct kt_error *err)
{
	struct kt_source *s = r->src;

	if (s->gz != NULL) {
		/*
		 * Read on from the stream's window; lines counted on error.
		 * (The source's compressed bytes are the decoder thread's.)
		 */
		kt_gz_seek(s->gz, off);
		s->gzheadpos = s->ngzhead;
		s->gzlazy = 1;
	} else {
		if (lseek(s->fd, (off_t)off, SEEK_SET) == (off_t)-1) {
			kt_error_set(err, r->name, 0, 0, "%s",
			    strerror(errno));
			return -1;
		}
		s->peekpos = s->npeek;
	}
	reposition(r, off, at_event, pos);
	return 0;
}

int
kt_reader_split_begin(struct kt_reader *r, uint64_t at, uint64_t ahead)
{
	struct kt_source *s = r->src;
	size_t k, n1, n2;
	unsigned char *pre;
	int rc;

	if (s->gz == NULL)
		return 0;
	/*
	 * The stream from at on: what the reader holds of it, the first
	 * output not yet given, then the window's.
	 */
	if (at < r->base || at > r->base + r->hi)
		return -1;
	k = (size_t)(at - r->base);
	n1 = r->hi - k;
	n2 = s->ngzhead - s->gzheadpos;
	if ((pre = malloc(n1 + n2 + 1)) == NULL)
		return -1;
	memcpy(pre, r->own + k, n1);
	memcpy(pre + n1, s->gzhead + s->gzheadpos, n2);
	rc = kt_gz_split(s->gz, at, pre, n1 + n2, r->base + r->hi, ahead);
	if (rc == 0)
		s->gzheadpos = s->ngzhead;
	return rc;
}

void
kt_reader_split_release(struct kt_reader *r, uint64_t off)
{
	/* A piece's first event is looked for from FIND_BACK before it. */
	if (r->src->gz != NULL)
		kt_gz_release(r->src->gz, off > FIND_BACK ? off - FIND_BACK :
		    0);
}

void
kt_reader_split_end(struct kt_reader *r)
{
	if (r->src != NULL && r->src->gz != NULL)
		kt_gz_split_end(r->src->gz);
}

uint64_t
kt_reader_split_size(const struct kt_reader *r)
{
	/* A gzip stream's end is known only when it comes. */
	if (r->src != NULL && r->src->gz != NULL)
		return UINT64_MAX >> 2;
	return kt_reader_size(r);
}

const char *
kt_reader_name(const struct kt_reader *r)
{
	return r->name;
}

enum kt_form
kt_reader_form(const struct kt_reader *r)
{
	return r->form;
}

const struct kt_meta *
kt_reader_metas(const struct kt_reader *r, size_t *n)
{
	*n = r->nmeta;
	return r->meta;
}

const struct kt_meta *
kt_reader_meta_find(const struct kt_reader *r, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < r->nmeta; i++)
		if (r->meta[i].keylen == n + 2 &&
		    memcmp(r->meta[i].key + 1, key, n) == 0)
			return &r->meta[i];
	return NULL;
}

const struct kt_repairs *
kt_reader_repairs(const struct kt_reader *r)
{
	return &r->repairs;
}

struct kt_repairs *
kt_reader_repairs_mut(struct kt_reader *r)
{
	return &r->repairs;
}

uint64_t
kt_reader_offset(const struct kt_reader *r)
{
	return r->base + r->lo;
}

uint64_t
kt_reader_file_bytes(const struct kt_reader *r)
{
	return r->src != NULL ? r->src->fsize : 0;
}

uint64_t
kt_reader_size(const struct kt_reader *r)
{
	return r->src != NULL && r->src->ar == NULL ? r->src->size : 0;
}

uint64_t
kt_reader_size_hint(const struct kt_reader *r)
{
	const struct kt_source *s = r->src;
	unsigned char t[4];
	uint64_t isize;

	if (s == NULL || s->ar != NULL)
		return 0;
	if (s->gz == NULL || s->fsize < 32)
		return s->size;
	/* ISIZE: the last member's length mod 2^32, little-endian. */
	if (fd_pread(s->fd, t, 4, s->fsize - 4) != 4)
		return 0;
	isize = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 |
	    (uint64_t)t[3] << 24;
	if (isize < 4 * s->fsize)
		isize = 4 * s->fsize;
	if (isize > 64 * s->fsize)
		isize = 64 * s->fsize;
	return isize;
}

/*
 * A plain regular file counts its lines only when an error needs them:
 * the newlines before the buffer are counted again from the file.
 */
static int
lazy_lines(const struct kt_reader *r)
{
	return r->src != NULL && r->src->ar == NULL &&
	    (r->src->size > 0 || r->src->gzlazy);
}

/* A file's compressed bytes in order from its start (kt_gz_lines). */
struct fd_at {
	int		 fd;
	uint64_t	 at;
};

static ssize_t
fd_read_at(void *arg, void *buf, size_t n)
{
	struct fd_at *f = arg;
	ssize_t r = fd_pread(f->fd, buf, n, f->at);

	if (r > 0)
		f->at += (uint64_t)r;
	return r;
}

/* Count the lines before the buffer from the file (lazy counting). */
static void
count_before(const struct kt_reader *r, long *lines, long *col)
{
	char buf[1 << 16];
	uint64_t at = 0;

	*lines = 0;
	*col = 0;
	if (r->src->gzlazy) {
		struct fd_at f;

		/* A part reader's errors are not told: no need to count. */
		if (r->src->part)
			return;
		f.fd = r->src->fd;
		f.at = 0;
		(void)kt_gz_lines(fd_read_at, &f, r->base, lines, col);
		return;
	}
	while (at < r->base) {
		size_t want = r->base - at < sizeof(buf) ? (size_t)(r->base - at) :
		    sizeof(buf), after;
		ssize_t got = pread(r->src->fd, buf, want, (off_t)at);

		if (got <= 0)
			return;
		*lines += (long)kt_scan_lines(buf, (size_t)got, &after);
		*col = after != (size_t)-1 ? (long)((size_t)got - after) :
		    *col + (long)got;
		at += (uint64_t)got;
	}
}

/* Line and column (1-based) of buffer offset off. */
static void
position(const struct kt_reader *r, size_t off, long *line, long *col)
{
	long lb = r->line_base, cb = r->col_base;
	size_t n, after;

	if (lazy_lines(r) && r->base > 0)
		count_before(r, &lb, &cb);
	n = kt_scan_lines(r->buf, off, &after);
	*line = lb + (long)n + 1;
	*col = after != (size_t)-1 ? (long)(off - after) + 1 :
	    cb + (long)off + 1;
}

/* Set err to a parse error at buffer offset off. */
static int
fail_at(struct kt_reader *r, size_t off, struct kt_error *err,
    const char *msg)
{
	long line, col;

	if (r->form == KT_FORM_TSV) {
		line = r->tsvline;
		col = (long)(off - r->lo) + 1;
	} else
		position(r, off, &line, &col);
	kt_error_set(err, r->name, line, col, "%s", msg);
	return -1;
}

/*
 * Get more bytes: drop what is before r->lo, grow the buffer when it is
 * full, and read.  Returns 1 if bytes came, 0 at EOF, -1 on error.
 */
static int
refill(struct kt_reader *r, struct kt_error *err)
{
	ssize_t n;
	size_t got, full, want;
	int small;

	if (r->eof || r->eof_next || r->src == NULL || r->src->cur != r) {
		r->eof = 1;
		return 0;
	}
	if (r->lo > 0) {
		size_t after;

		/* A file's lines are counted from the file on error. */
		if (!lazy_lines(r)) {
			r->line_base += (long)kt_scan_lines(r->own, r->lo,
			    &after);
			r->col_base = after != (size_t)-1 ?
			    (long)(r->lo - after) : r->col_base + (long)r->lo;
		}
		memmove(r->own, r->own + r->lo, r->hi - r->lo);
		r->base += r->lo;
		r->hi -= r->lo;
		r->lo = 0;
	}
	/*
	 * The first buffer is small, so that a small input (most archive
	 * members, the test suite's traces, rank-tag's many readers) costs
	 * little; once an input fills it, the buffer becomes the full one
	 * (512 KiB with KT_READ_SMALL, from a file under KT_SMALL_FILE on
	 * disk or from gzip, whose decoder holds buffers of its own; else
	 * 4 MiB) and grows from there whenever less than a chunk of it is
	 * free.
	 */
	small = (r->flags & KT_READ_SMALL) || r->src->gz != NULL ||
	    (r->src->fsize > 0 && r->src->fsize < KT_SMALL_FILE);
	full = small ? CHUNK / 2 : 4 * CHUNK;
	if ((r->cap < full && r->filled) || (r->cap >= full &&
	    r->cap - r->hi < (small ? CHUNK / 4 : CHUNK))) {
		size_t cap = r->cap < full ? full : r->cap * 2;
		char *p;

		if ((p = realloc(r->own, cap)) == NULL) {
			kt_error_set(err, r->name, 0, 0, "out of memory");
			return -1;
		}
		r->own = p;
		r->buf = p;
		r->cap = cap;
	}
	/*
	 * Fill the free space, however little each read gives (a pipe gives
	 * 64 KiB): the caller scans again from the event's start after a
	 * refill, so a refill must at least double what it can see, or a
	 * large event read from a pipe is scanned quadratically often.
	 */
	got = 0;
	want = r->cap - r->hi;
	/*
	 * A part reader reads a piece of a file: up to its limit and a
	 * little past it (where its last event ends), or PART_READ at a
	 * time without one; at least what it could see, for the rule above.
	 */
	if (r->src->part) {
		uint64_t at = r->base + r->hi;
		size_t w = r->limit == NOLIMIT ? PART_READ :
		    r->limit > at && r->limit - at < PART_READ ?
		    (size_t)(r->limit - at) + PART_SLACK : r->limit > at ?
		    PART_READ : PART_SLACK;

		if (w < r->hi - r->lo)
			w = r->hi - r->lo;
		if (w < want)
			want = w;
	}
	while (got < want) {
		n = src_read(r->src, r->own + r->hi, want - got, err);
		if (n < 0)
			return -1;
		if (n == 0) {
			r->eof = got == 0;
			r->eof_next = got > 0;
			break;
		}
		r->hi += (size_t)n;
		got += (size_t)n;
	}
	if (r->hi == r->cap)
		r->filled = 1;
	return got > 0;
}

/* Skip whitespace; make sure a byte is there.  1 yes, 0 EOF, -1 error. */
static int
next_byte(struct kt_reader *r, struct kt_error *err)
{
	for (;;) {
		while (r->lo < r->hi && kt_ws[(unsigned char)r->buf[r->lo]])
			r->lo++;
		if (r->lo < r->hi)
			return 1;
		switch (refill(r, err)) {
		case -1:
			return -1;
		case 0:
			return 0;
		}
	}
}

/* Count the scanner's edits as repairs. */
static void
count_edits(struct kt_reader *r)
{
	size_t i;

	/* A run of control characters is one edit of del characters. */
	for (i = 0; i < r->sc.nedits; i++)
		r->repairs.n[r->sc.edits[i].repair] +=
		    r->sc.edits[i].repair == KT_R_CONTROL ||
		    r->sc.edits[i].repair == KT_R_UTF8 ?
		    r->sc.edits[i].del : 1;
}

/*
 * Scan a whole value at r->lo, reading more as needed.  Returns
 * KT_SCAN_OK with *end, KT_SCAN_MORE at EOF (truncated), or -1 with err.
 */
static int
scan_whole(struct kt_reader *r, size_t *end, struct kt_event *ev,
    struct kt_error *err)
{
	int rc;

	for (;;) {
		rc = kt_scan_value(&r->sc, r->buf, r->lo, r->hi, end, ev);
		if (rc == KT_SCAN_OK)
			return rc;
		if (rc == KT_SCAN_ERR)
			return fail_at(r, r->sc.err_off, err, r->sc.err_msg);
		switch (refill(r, err)) {
		case -1:
			return -1;
		case 0:
			return KT_SCAN_MORE;
		}
	}
}

static int
add_meta(struct kt_reader *r, const char *key, size_t keylen,
    const char *val, size_t vallen, int after)
{
	struct kt_meta *m;

	if (r->nmeta == r->capmeta) {
		size_t cap = r->capmeta ? r->capmeta * 2 : 16;

		if ((m = realloc(r->meta, cap * sizeof(*m))) == NULL)
			return -1;
		r->meta = m;
		r->capmeta = cap;
	}
	m = &r->meta[r->nmeta];
	if ((m->key = malloc(keylen + 1)) == NULL)
		return -1;
	if ((m->val = malloc(vallen + 1)) == NULL) {
		free(m->key);
		return -1;
	}
	memcpy(m->key, key, keylen);
	m->key[keylen] = '\0';
	memcpy(m->val, val, vallen);
	m->val[vallen] = '\0';
	m->keylen = keylen;
	m->vallen = vallen;
	m->after = after;
	r->nmeta++;
	return 0;
}

static const char bad_rows[] = "ktSourceIndex is not an array of row numbers";

/*
 * Row numbers as they are read: 4 bytes each until one needs 8 (then
 * all are widened).  rows_push: 0, or -1 when out of memory.
 */
struct rowbuf {
	uint32_t	*a32;
	uint64_t	*a64;
	size_t		 n, cap;
};

static int
rows_push(struct rowbuf *b, uint64_t u)
{
	size_t i;
	void *t;

	if (u > UINT32_MAX && b->a64 == NULL) {
		uint64_t *w;

		if (b->cap == 0)
			b->cap = 1024;
		if ((w = malloc(b->cap * sizeof(*w))) == NULL)
			return -1;
		for (i = 0; i < b->n; i++)
			w[i] = b->a32[i];
		free(b->a32);
		b->a32 = NULL;
		b->a64 = w;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;

		if (b->a64 != NULL) {
			if ((t = realloc(b->a64, cap * sizeof(*b->a64))) ==
			    NULL)
				return -1;
			b->a64 = t;
		} else {
			if ((t = realloc(b->a32, cap * sizeof(*b->a32))) ==
			    NULL)
				return -1;
			b->a32 = t;
		}
		b->cap = cap;
	}
	if (b->a64 != NULL)
		b->a64[b->n++] = u;
	else
		b->a32[b->n++] = (uint32_t)u;
	return 0;
}

static void
rows_free(struct rowbuf *b)
{
	free(b->a32);
	free(b->a64);
}

/* The reader's row numbers become b's (NULL: none). */
static void
rows_set(struct kt_reader *r, struct rowbuf *b)
{
	free(r->si32);
	free(r->si64);
	r->si32 = b != NULL ? b->a32 : NULL;
	r->si64 = b != NULL ? b->a64 : NULL;
	r->nsrcindex = b != NULL ? b->n : 0;
}

/* Parse a ktSourceIndex array of row numbers. */
static int
parse_srcindex(struct kt_reader *r, const char *v, size_t n)
{
	struct rowbuf b = { NULL, NULL, 0, 0 };
	size_t i = 0;

	rows_set(r, NULL);
	while (i < n && v[i] != '[')
		i++;
	for (i++; i < n; i++) {
		uint64_t u = 0;
		int digits = 0;

		while (i < n && (kt_ws[(unsigned char)v[i]] || v[i] == ','))
			i++;
		if (i < n && v[i] == ']')
			break;
		for (; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++)
			u = u * 10 + (uint64_t)(v[i] - '0');
		if (digits == 0 || digits > 19 || rows_push(&b, u) == -1)
			goto fail;
		i--;
	}
	rows_set(r, &b);
	return 0;
fail:
	/* No count without its array. */
	rows_free(&b);
	return -1;
}

/*
 * The input ended early: close the arrays, count the bytes dropped since
 * the input offset from.
 */
static int
truncated(struct kt_reader *r, uint64_t from, struct kt_error *err)
{
	if (r->src != NULL && r->src->part) {
		/* Left to the whole reader, which says where. */
		kt_error_set(err, r->name, 0, 0, "a part ends before its "
		    "events");
		return -1;
	}
	if (!r->seen_events) {
		kt_error_set(err, r->name, 0, 0,
		    "input ends before traceEvents");
		return -1;
	}
	if (r->flags & KT_READ_STRICT)
		return fail_at(r, r->hi, err, "truncated input");
	r->repairs.n[KT_R_TRUNCATED]++;
	r->repairs.truncated_bytes += r->base + r->hi - from;
	position(r, r->hi, &r->repairs.truncated_line,
	    &r->repairs.truncated_col);
	r->lo = r->hi;
	r->state = R_END;
	return 0;
}

static int tsv_next(struct kt_reader *, struct kt_event *,
    struct kt_error *);

/* truncated(), as stream_srcindex() returns it: 1 (cut, a repair) or -1. */
static int
cut(struct kt_reader *r, uint64_t from, struct kt_error *err)
{
	return truncated(r, from, err) == 0 ? 1 : -1;
}

/*
 * The ktSourceIndex array at r->lo ('['), read as it comes so that its
 * text is never held whole (a sorted 2 GB trace's is 40 MB, beside 40 MB
 * of row numbers): row numbers between commas and white space, as
 * parse_srcindex takes them from a whole value; a trailing comma is a
 * repair, as the scanner makes it (refused when strict).  0 with r->lo
 * past its ']', 1 when the input is cut short in it (truncated(): no
 * rows, as when the value was read whole), or -1 with err.  from is
 * where the key began.
 */
static int
stream_srcindex(struct kt_reader *r, uint64_t from, struct kt_error *err)
{
	struct rowbuf b = { NULL, NULL, 0, 0 };
	size_t q;
	uint64_t u;
	int rc, state = 0;	/* 0 after '[', 1 after a row, 2 after ',' */

	rows_set(r, NULL);
	r->lo++;
	for (;;) {
		if ((rc = next_byte(r, err)) <= 0) {
			rc = rc == 0 ? cut(r, from, err) : -1;
			goto fail;
		}
		if (r->buf[r->lo] == ']') {
			if (state == 2 && r->sc.strict) {
				rc = fail_at(r, r->lo, err, bad_rows);
				goto fail;
			}
			if (state == 2)
				r->repairs.n[KT_R_TRAILING_COMMA]++;
			r->lo++;
			break;
		}
		if (state == 1) {
			if (r->buf[r->lo] != ',') {
				rc = fail_at(r, r->lo, err, bad_rows);
				goto fail;
			}
			r->lo++;
			state = 2;
			continue;
		}
		if (state != 1 && r->hi - r->lo > 24) {
			/*
			 * Rows "d,d,..." with no white space, all within the
			 * buffer, taken at once; anything else stops it at a
			 * row's start, for the loop to take as it comes.
			 */
			const char *p = r->buf + r->lo, *t;
			const char *lim = r->buf + r->hi - 21;
			size_t was = r->lo;
			unsigned n;

			while (p < lim) {
				if ((n = kt_few_digits(p, &u)) < 8)
					t = p + n;
				else
					for (u = 0, t = p; *t >= '0' &&
					    *t <= '9' && t - p < 20; t++)
						u = u * 10 + (uint64_t)(*t -
						    '0');
				if (t == p || t - p > 19 || *t != ',')
					break;
				if (b.a64 == NULL && u <= UINT32_MAX &&
				    b.n < b.cap)
					b.a32[b.n++] = (uint32_t)u;
				else if (rows_push(&b, u) == -1) {
					rc = fail_at(r, r->lo, err,
					    "out of memory");
					goto fail;
				}
				p = t + 1;
			}
			if ((r->lo = (size_t)(p - r->buf)) != was) {
				state = 2;
				continue;
			}
		}
		/* A row: its digits whole in the buffer, then what ends them. */
		for (;;) {
			for (q = r->lo; q < r->hi && r->buf[q] >= '0' &&
			    r->buf[q] <= '9'; q++)
				;
			if (q < r->hi)
				break;
			if ((rc = refill(r, err)) == -1)
				goto fail;
			if (rc == 0) {
				rc = cut(r, from, err);
				goto fail;
			}
		}
		if (q == r->lo || q - r->lo > 19 || !(kt_ws[(unsigned char)
		    r->buf[q]] || r->buf[q] == ',' || r->buf[q] == ']')) {
			rc = fail_at(r, r->lo, err, bad_rows);
			goto fail;
		}
		for (u = 0; r->lo < q; r->lo++)
			u = u * 10 + (uint64_t)(r->buf[r->lo] - '0');
		if (rows_push(&b, u) == -1) {
			rc = fail_at(r, r->lo, err, "out of memory");
			goto fail;
		}
		state = 1;
	}
	rows_set(r, &b);
	return 0;
fail:
	/* No count without its array. */
	rows_free(&b);
	return rc;
}

/* Read one top-level key and its value (object form). */
static int
top_member(struct kt_reader *r, struct kt_error *err)
{
	size_t kend, vend;
	uint64_t start = r->base + r->lo;
	int rc, si, after = r->seen_events;

	if (r->buf[r->lo] != '"')
		return fail_at(r, r->lo, err, "expected a key string");
	if ((rc = scan_whole(r, &kend, NULL, err)) != KT_SCAN_OK)
		return rc == KT_SCAN_MORE ? truncated(r, start, err) : -1;
	/* Keys are short; keep a copy since the buffer may move. */
	r->tmp.n = 0;
	if (kt_buf_add(&r->tmp, r->buf + r->lo, kend - r->lo) == -1)
		return fail_at(r, r->lo, err, "out of memory");
	r->lo = kend;
	if ((rc = next_byte(r, err)) <= 0)
		return rc == 0 ? truncated(r, start, err) : -1;
	if (r->buf[r->lo] != ':')
		return fail_at(r, r->lo, err, "expected ':' after a key");
	r->lo++;
	if ((rc = next_byte(r, err)) <= 0)
		return rc == 0 ? truncated(r, start, err) : -1;
	if (r->tmp.n == 13 && memcmp(r->tmp.p, "\"traceEvents\"", 13) == 0) {
		if (r->seen_events)
			return fail_at(r, r->lo, err,
			    "a second traceEvents array");
		if (r->buf[r->lo] != '[')
			return fail_at(r, r->lo, err,
			    "traceEvents is not an array");
		r->lo++;
		r->seen_events = 1;
		r->state = R_EVFIRST;
		return 0;
	}
	/* ktSourceIndex, unless read already from the end of the file. */
	si = !(after && r->tail_known) &&
	    r->tmp.n == sizeof(KT_KEY_SOURCE_INDEX) + 1 &&
	    memcmp(r->tmp.p + 1, KT_KEY_SOURCE_INDEX,
	    sizeof(KT_KEY_SOURCE_INDEX) - 1) == 0;
	if (si && r->buf[r->lo] == '[') {
		r->srcindex_after = after;
		if ((rc = stream_srcindex(r, start, err)) != 0)
			return rc == 1 ? 0 : -1;	/* cut: R_END */
		r->state = R_TOPNEXT;
		return 0;
	}
	if ((rc = scan_whole(r, &vend, NULL, err)) != KT_SCAN_OK)
		return rc == KT_SCAN_MORE ? truncated(r, start, err) : -1;
	count_edits(r);
	if (after && r->tail_known) {
		/* Read already, from the end of the file. */
	} else if (si) {
		r->srcindex_after = after;
		if (parse_srcindex(r, r->buf + r->lo, vend - r->lo) == -1)
			return fail_at(r, r->lo, err, bad_rows);
	} else {
		struct kt_buf v = KT_BUF_INIT;

		if (kt_scan_apply(&r->sc, r->buf, r->lo, vend, &v) == -1 ||
		    add_meta(r, r->tmp.p, r->tmp.n, v.p, v.n, after) == -1) {
			kt_buf_free(&v);
			return fail_at(r, r->lo, err, "out of memory");
		}
		kt_buf_free(&v);
	}
	r->lo = vend;
	r->state = R_TOPNEXT;
	return 0;
}

/*
 * Skim the event at r->lo (KT_READ_SKIM), reading more as needed:
 * KT_SCAN_OK with *end, KT_SCAN_MORE at EOF, or -1 when the event needs
 * the full scanner (metadata, whose args a survey reads, or a fault for
 * it to report or repair).
 */
static int
skim(struct kt_reader *r, size_t *end, struct kt_event *ev)
{
	struct kt_error err;
	int rc;

	for (;;) {
		rc = kt_skim_value(&r->sc, r->buf, r->lo, r->hi, end, ev);
		if (rc == KT_SCAN_OK) {
			ev->raw = r->buf + r->lo;
			if (ev->f[KT_F_PH].type == KT_STRING &&
			    ev->f[KT_F_PH].len == 3 &&
			    ev->raw[ev->f[KT_F_PH].off + 1] == 'M')
				return -1;
			return rc;
		}
		if (rc == KT_SCAN_ERR)
			return -1;
		switch (refill(r, &err)) {
		case -1:
			return -1;
		case 0:
			return KT_SCAN_MORE;
		}
	}
}

/*
 * A ts or dur that is a number but no time kt can hold (outside
 * +-KT_TIME_MAX ns) makes the event an error, never a wrapped value.
 */
static int
check_times(struct kt_reader *r, const struct kt_event *ev, size_t at,
    struct kt_error *err)
{
	if (r->flags & KT_READ_ANYTIME)
		return 0;
	if (ev->f[KT_F_TS].type == KT_NUMBER && !(ev->flags & KT_EV_TS))
		return fail_at(r, at, err, "ts out of range: kt holds times "
		    "within 2^62 ns (146 years) of 0");
	if (ev->f[KT_F_DUR].type == KT_NUMBER && !(ev->flags & KT_EV_DUR) &&
	    !(r->flags & KT_READ_SKIM))
		return fail_at(r, at, err, "dur out of range: kt holds times "
		    "within 2^62 ns (146 years) of 0");
	return 0;
}

/*
 * Is field f of ev, scanned by r (a number of JSON's grammar when it is a
 * number), a time that kt_time_parse takes, so that check_times cannot
 * refuse it?  Without an exponent (none when the walk saw none), within
 * 60 bytes (its digits fit), an integer part of 15 digits, or 16 below
 * 4 * 10^15 (us), is within KT_TIME_MAX ns (4.6 * 10^18).
 */
static int
in_range(const struct kt_reader *r, const struct kt_event *ev,
    enum kt_field f)
{
	const struct kt_val *v = &ev->f[f];
	const char *p = ev->raw + v->off, *dot;
	size_t n = v->len, i;

	if (v->type != KT_NUMBER)
		return 1;
	if (!r->sc.plain_nums && (memchr(p, 'e', n) != NULL ||
	    memchr(p, 'E', n) != NULL))
		return 0;
	if (n < 16)
		return 1;
	if (n > 60)
		return 0;
	i = p[0] == '-';
	dot = memchr(p, '.', n);
	n = (dot != NULL ? (size_t)(dot - p) : n) - i;
	return n < 16 || (n == 16 && p[i] < '4');
}

/* Scan the event at r->lo.  1 event, 0 dropped or ended, -1 error. */
static int
event(struct kt_reader *r, struct kt_event *ev, struct kt_error *err)
{
	size_t end, start;
	int rc;

	if (r->buf[r->lo] != '{')
		return fail_at(r, r->lo, err, "expected an event object");
	if ((r->flags & KT_READ_SKIM) && (rc = skim(r, &end, ev)) != -1) {
		if (rc == KT_SCAN_MORE)
			return truncated(r, r->base + r->lo, err);
		start = r->lo;
		r->lo = end;
		r->state = R_EVNEXT;
		if (r->sc.nkeys == 0) {
			r->pos++;
			return 0;
		}
		ev->raw = r->buf + start;
		ev->len = end - start;
		ev->flags = 0;
		kt_event_finish_skim(ev);
		if (check_times(r, ev, start, err) == -1)
			return -1;
		ev->index = kt_reader_row(r, r->pos);
		r->pos++;
		return 1;
	}
	if ((rc = scan_whole(r, &end, ev, err)) != KT_SCAN_OK)
		return rc == KT_SCAN_MORE ? truncated(r, r->base + r->lo, err) : -1;
	start = r->lo;
	r->lo = end;
	r->state = R_EVNEXT;
	if (r->sc.nkeys == 0) {
		if (r->flags & KT_READ_STRICT)
			return fail_at(r, start, err, "empty event {}");
		r->repairs.n[KT_R_EMPTY_EVENT]++;
		r->pos++;
		return 0;
	}
	ev->flags = 0;
	if (r->sc.nedits > 0) {
		count_edits(r);
		r->rep.n = 0;
		if (kt_scan_apply(&r->sc, r->buf, start, end, &r->rep) == -1)
			return fail_at(r, start, err, "out of memory");
		if (kt_event_scan(r->rep.p, r->rep.n, ev, NULL) == -1)
			return fail_at(r, start, err, "event could not be "
			    "repaired");
		ev->flags |= KT_EV_REPAIRED;
	} else {
		ev->raw = r->buf + start;
		ev->len = end - start;
		if (r->late && in_range(r, ev, KT_F_TS) &&
		    in_range(r, ev, KT_F_DUR))
			ev->flags |= KT_EV_LATE;
		else
			kt_event_finish(ev);
	}
	if (!(ev->flags & KT_EV_LATE) && check_times(r, ev, start, err) == -1)
		return -1;
	ev->index = kt_reader_row(r, r->pos);
	r->pos++;
	return 1;
}

void
kt_reader_late(struct kt_reader *r, int on)
{
	r->late = on;
}

/*
 * Past the comma at r->lo, find what follows: 2 a member, 1 the closing
 * bracket close (a trailing comma, repaired), 0 the end of the input
 * (truncated, repaired), -1 an error.
 */
static int
after_comma(struct kt_reader *r, char close, struct kt_error *err)
{
	int rc;

	r->lo++;
	if ((rc = next_byte(r, err)) <= 0)
		return rc == -1 || truncated(r, r->base + r->lo, err) == -1 ?
		    -1 : 0;
	if (r->buf[r->lo] != close)
		return 2;
	if (r->flags & KT_READ_STRICT)
		return fail_at(r, r->lo, err, close == ']' ?
		    "trailing comma before ']'" : "trailing comma before '}'");
	r->repairs.n[KT_R_TRAILING_COMMA]++;
	return 1;
}

/* An event starts at r->lo, past a part reader's limit: stop there. */
static int
at_limit(struct kt_reader *r)
{
	r->stop = r->base + r->lo;
	r->stop_end = 0;
	return 0;
}

static int
reader_next(struct kt_reader *r, struct kt_event *ev, struct kt_error *err)
{
	int rc;

	for (;;) {
		if (r->state == R_EVNEXT) {
			/*
			 * The usual way from an event to the next within the
			 * buffer (white space, a comma, white space, a '{'
			 * before the limit), else the way below from here.
			 */
			const unsigned char *b = (const unsigned char *)r->buf;
			size_t q = r->lo;

			while (q < r->hi && kt_ws[b[q]])
				q++;
			if (q < r->hi && b[q] == ',') {
				for (q++; q < r->hi && kt_ws[b[q]]; q++)
					;
				if (q < r->hi && b[q] == '{' &&
				    r->base + q < r->limit) {
					r->lo = q;
					if ((rc = event(r, ev, err)) != 0)
						return rc;
					continue;
				}
			}
		}
		if (r->state == R_END)
			return 0;
		if (r->state == R_TSV)
			return tsv_next(r, ev, err);
		if ((rc = next_byte(r, err)) == -1)
			return -1;
		if (rc == 0) {
			/* End of input. */
			switch (r->state) {
			case R_START:
				kt_error_set(err, r->name, 0, 0, "empty input");
				return -1;
			case R_DONE:
				r->state = R_END;
				if (r->form == KT_FORM_OBJECT && !r->seen_events) {
					kt_error_set(err, r->name, 0, 0,
					    "no traceEvents array: not a trace");
					return -1;
				}
				return 0;
			default:
				if (!r->seen_events) {
					kt_error_set(err, r->name, 0, 0,
					    "input ends before traceEvents");
					return -1;
				}
				if (truncated(r, r->base + r->lo, err) == -1)
					return -1;
				return 0;
			}
		}
		switch (r->state) {
		case R_START:
			if (r->base == 0 && r->lo == 0 && r->hi - r->lo >= 3 &&
			    memcmp(r->buf, "\xef\xbb\xbf", 3) == 0) {
				if (r->flags & KT_READ_STRICT)
					return fail_at(r, 0, err,
					    "byte-order mark");
				r->repairs.n[KT_R_BOM]++;
				r->lo += 3;
				continue;
			}
			if (r->buf[r->lo] == '{') {
				r->form = KT_FORM_OBJECT;
				r->lo++;
				r->state = R_TOPKEY;
			} else if (r->buf[r->lo] == '[') {
				r->form = KT_FORM_ARRAY;
				r->seen_events = 1;
				r->lo++;
				r->state = R_EVFIRST;
			} else if (r->hi - r->lo >= 8 &&
			    memcmp(r->buf + r->lo, "id\tkind\t", 8) == 0) {
				r->form = KT_FORM_TSV;
				r->state = R_TSV;
			} else
				return fail_at(r, r->lo, err, "not a JSON "
				    "trace: expected '{' or '['");
			continue;
		case R_TOPKEY:
			if (r->buf[r->lo] == '}') {
				r->lo++;
				r->state = R_DONE;
				continue;
			}
			if (top_member(r, err) == -1)
				return -1;
			continue;
		case R_TOPNEXT:
			if (r->buf[r->lo] == '}') {
				r->lo++;
				r->state = R_DONE;
				continue;
			}
			if (r->buf[r->lo] != ',')
				return fail_at(r, r->lo, err,
				    "expected ',' or '}' between top-level "
				    "keys");
			if ((rc = after_comma(r, '}', err)) <= 0)
				return rc;
			if (rc == 1)
				continue;
			if (top_member(r, err) == -1)
				return -1;
			continue;
		case R_EVFIRST:
			if (r->buf[r->lo] == ']')
				goto events_end;
			if (r->base + r->lo >= r->limit)
				return at_limit(r);
			if ((rc = event(r, ev, err)) != 0)
				return rc;
			continue;
		case R_EVNEXT:
			if (r->buf[r->lo] == ']')
				goto events_end;
			if (r->buf[r->lo] != ',')
				return fail_at(r, r->lo, err,
				    "expected ',' or ']' after an event");
			if ((rc = after_comma(r, ']', err)) <= 0)
				return rc;
			if (rc == 1)
				goto events_end;
			if (r->base + r->lo >= r->limit) {
				r->state = R_EVFIRST;
				return at_limit(r);
			}
			if ((rc = event(r, ev, err)) != 0)
				return rc;
			continue;
		case R_DONE:
			return fail_at(r, r->lo, err,
			    "unexpected text after the end of the trace");
		}
		continue;
events_end:
		if (r->src != NULL && r->src->part) {
			/* A part ends where the events do. */
			r->stop = r->base + r->lo;
			r->stop_end = 1;
			r->state = R_END;
			return 0;
		}
		r->lo++;
		r->state = r->form == KT_FORM_OBJECT ? R_TOPNEXT : R_DONE;
	}
}

int
kt_reader_next(struct kt_reader *r, struct kt_event *ev,
    struct kt_error *err)
{
	int rc = reader_next(r, ev, err);

	if (rc == 1) {
		ev->end = r->base + r->lo;
		if (sep_before(r, ev))
			ev->flags |= KT_EV_SEP;
	}
	return rc;
}

/*
 * Parse text[0..n) as the end of an object-form trace: ']' then
 * (',' key ':' value)* and '}' up to the end.  With keep, appends the
 * keys to r's metadata as keys after traceEvents.  0 when it is such an
 * end, -1 when not.
 *
 * memo (NULL, or one byte per byte of text) makes a search over many
 * candidate ends linear: whether the rest parses from a point between
 * members does not depend on where the parse began, so each point is
 * parsed once (1: it parses to the end, 2: it does not) and a later
 * parse that reaches a known point stops there.
 */
static int
tail_parse(struct kt_reader *r, const char *t, size_t n, int keep,
    unsigned char *memo)
{
	size_t p = 1, e, i;
	size_t first = r->nmeta;
	int rc = -1;
	struct kt_buf seen = KT_BUF_INIT;	/* points visited (size_t) */

	for (;;) {
		if (memo != NULL) {
			if (memo[p] != 0) {
				rc = memo[p] == 1 ? 0 : -1;
				break;
			}
			if (kt_buf_add(&seen, &p, sizeof(p)) == -1)
				memo = NULL;	/* no memory: plain parse */
		}
		while (p < n && kt_ws[(unsigned char)t[p]])
			p++;
		if (p < n && t[p] == '}') {
			for (p++; p < n && kt_ws[(unsigned char)t[p]]; p++)
				;
			rc = p == n ? 0 : -1;
			break;
		}
		if (p >= n || t[p] != ',')
			break;
		for (p++; p < n && kt_ws[(unsigned char)t[p]]; p++)
			;
		if (p >= n || t[p] != '"' ||
		    kt_scan_value(&r->sc, t, p, n, &e, NULL) != KT_SCAN_OK ||
		    r->sc.nedits > 0)
			break;
		{
			size_t ks = p, ke = e, vs;

			/* Still before the events, not after them. */
			if (ke - ks == 13 && memcmp(t + ks, "\"traceEvents\"",
			    13) == 0)
				break;
			for (p = e; p < n && (kt_ws[(unsigned char)t[p]] ||
			    t[p] == ':'); p++)
				;
			vs = p;
			if (p >= n || kt_scan_value(&r->sc, t, vs, n, &e,
			    NULL) != KT_SCAN_OK || r->sc.nedits > 0)
				break;
			if (keep && add_meta(r, t + ks, ke - ks, t + vs, e - vs,
			    1) == -1)
				break;
			p = e;
		}
	}
	if (memo != NULL)
		for (i = 0; i + sizeof(size_t) <= seen.n; i += sizeof(size_t)) {
			size_t q;

			memcpy(&q, seen.p + i, sizeof(q));
			memo[q] = rc == 0 ? 1 : 2;
		}
	kt_buf_free(&seen);
	if (rc == -1 || !keep) {
		while (r->nmeta > first) {
			r->nmeta--;
			free(r->meta[r->nmeta].key);
			free(r->meta[r->nmeta].val);
		}
	}
	return rc;
}

/*
 * The place of the last byte c in p[0..n), or SIZE_MAX: eight bytes at a
 * time from the end while none of them is c (a word XOR c has a zero
 * byte exactly when one is), then byte by byte.
 */
static size_t
last_byte(const char *p, size_t n, unsigned char c)
{
	const uint64_t ones = 0x0101010101010101ULL, cc = ones * c;

	while (n >= 8) {
		uint64_t x;

		memcpy(&x, p + n - 8, 8);
		x ^= cc;
		if (((x - ones) & ~x & (ones << 7)) != 0)
			break;
		n -= 8;
	}
	while (n > 0)
		if ((unsigned char)p[--n] == c)
			return n;
	return SIZE_MAX;
}

int
kt_reader_tail(struct kt_reader *r, struct kt_error *err)
{
	struct kt_source *s = r->src;
	char *buf;
	unsigned char *memo;
	size_t n, i, best = SIZE_MAX, k;
	ssize_t got;

	if (s == NULL || s->ar != NULL || s->size < 2 || r->pos > 0 ||
	    r->state != R_START || r->lo > 0 || r->base > 0)
		return 1;
	n = s->size > (4u << 20) ? (4u << 20) : (size_t)s->size;
	if ((buf = malloc(n)) == NULL || (memo = calloc(n + 1, 1)) == NULL) {
		free(buf);
		kt_error_set(err, r->name, 0, 0, "out of memory");
		return -1;
	}
	got = pread(s->fd, buf, n, (off_t)(s->size - n));
	if (got != (ssize_t)n) {
		free(buf);
		free(memo);
		return 1;
	}
	/*
	 * The events end at the earliest ']' after an event ('}') or an
	 * empty array ('[') whose rest parses to the end of the file; a
	 * later one can only be inside a trailing key's value.
	 */
	for (i = n; (i = last_byte(buf, i, ']')) != SIZE_MAX;) {
		size_t q = i;

		while (q > 0 && kt_ws[(unsigned char)buf[q - 1]])
			q--;
		if (q == 0 || (buf[q - 1] != '}' && buf[q - 1] != '['))
			continue;
		if (tail_parse(r, buf + i, n - i, 0, memo + i) == 0)
			best = i;
	}
	free(memo);
	if (best == SIZE_MAX || tail_parse(r, buf + best, n - best, 1,
	    NULL) == -1) {
		free(buf);
		return 1;
	}
	free(buf);
	/* ktSourceIndex is kt's own: the events are numbered from it. */
	for (k = 0; k < r->nmeta; k++)
		if (strcmp(r->meta[k].key, "\"" KT_KEY_SOURCE_INDEX "\"") == 0) {
			if (parse_srcindex(r, r->meta[k].val,
			    r->meta[k].vallen) == -1) {
				kt_error_set(err, r->name, 0, 0, "%s",
				    bad_rows);
				return -1;
			}
			r->srcindex_after = 0;
			free(r->meta[k].key);
			free(r->meta[k].val);
			memmove(&r->meta[k], &r->meta[k + 1], (r->nmeta - k - 1) *
			    sizeof(r->meta[0]));
			r->nmeta--;
			break;
		}
	r->tail_known = 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The TSV event form. */

#define TSV_COLS 11	/* with the rank column */

/* Get the next line into [*s, *e) (without the newline).  1, 0, -1. */
static int
tsv_line(struct kt_reader *r, size_t *s, size_t *e, struct kt_error *err)
{
	const char *nl;

	for (;;) {
		nl = memchr(r->buf + r->lo, '\n', r->hi - r->lo);
		if (nl != NULL || r->eof) {
			size_t end = nl ? (size_t)(nl - r->buf) : r->hi;

			if (end == r->lo && nl == NULL)
				return 0;
			*s = r->lo;
			*e = end;
			if (*e > *s && r->buf[*e - 1] == '\r')
				(*e)--;
			r->tsvline++;
			return 1;
		}
		if (refill(r, err) == -1)
			return -1;
	}
}

/* Parse integer column text; empty gives 0 with *has = 0. */
static int
col_int(const char *p, size_t n, int64_t *v, int *has)
{
	char tmp[32];
	char *end;

	*has = 0;
	if (n == 0)
		return 0;
	if (n >= sizeof(tmp))
		return -1;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	errno = 0;
	*v = strtoll(tmp, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*has = 1;
	return 0;
}

/* The text a TSV column shows for field f of ev. */
static void
col_text(const struct kt_event *ev, enum kt_field f, const char **p,
    size_t *n)
{
	*p = kt_event_field(ev, f, n);
	if (*p != NULL && ev->f[f].type == KT_STRING) {
		(*p)++;
		*n -= 2;
	}
}

/* Does the column text look like a JSON number? */
static int
is_number(const char *p, size_t n)
{
	int64_t v;
	int fl, dec;

	return kt_time_parse(p, n, &v, &fl, &dec) == 0;
}

/* Read the trace row's object: its keys become top-level metadata. */
static int
tsv_trace_row(struct kt_reader *r, const char *p, size_t n,
    struct kt_error *err)
{
	struct kt_event ev;
	size_t i = 0, ks, ke, vs, ve;
	int after = 0;

	memset(&ev, 0, sizeof(ev));
	while (i < n && kt_ws[(unsigned char)p[i]])
		i++;
	if (i == n || p[i] != '{')
		return fail_at(r, r->lo, err, "trace row: json is not an "
		    "object");
	i++;
	for (;;) {
		while (i < n && kt_ws[(unsigned char)p[i]])
			i++;
		if (i < n && p[i] == '}')
			return 0;
		ks = i;
		if (kt_scan_value(&r->sc, p, ks, n, &ke, NULL) != KT_SCAN_OK ||
		    p[ks] != '"')
			return fail_at(r, r->lo, err, "trace row: bad json");
		i = ke;
		while (i < n && (kt_ws[(unsigned char)p[i]] || p[i] == ':'))
			i++;
		vs = i;
		if (vs >= n || kt_scan_value(&r->sc, p, vs, n, &ve, NULL) !=
		    KT_SCAN_OK)
			return fail_at(r, r->lo, err, "trace row: bad json");
		if (ke - ks == 13 && memcmp(p + ks, "\"traceEvents\"", 13) == 0)
			after = 1;
		else if (ke - ks == sizeof(KT_KEY_ORIGIN) + 1 &&
		    memcmp(p + ks + 1, KT_KEY_ORIGIN,
		    sizeof(KT_KEY_ORIGIN) - 1) == 0) {
			char num[32];
			char *end;

			if (ve - vs >= sizeof(num))
				return fail_at(r, r->lo, err, "trace row: bad "
				    KT_KEY_ORIGIN);
			memcpy(num, p + vs, ve - vs);
			num[ve - vs] = '\0';
			errno = 0;
			r->origin = strtoll(num, &end, 10);
			if (*end != '\0' || errno == ERANGE ||
			    r->origin > KT_TIME_MAX || r->origin < -KT_TIME_MAX)
				return fail_at(r, r->lo, err, "trace row: bad "
				    KT_KEY_ORIGIN);
		}
		else if (!(ke - ks == sizeof(KT_KEY_SOURCE_INDEX) + 1 &&
		    memcmp(p + ks + 1, KT_KEY_SOURCE_INDEX,
		    sizeof(KT_KEY_SOURCE_INDEX) - 1) == 0) &&
		    add_meta(r, p + ks, ke - ks, p + vs, ve - vs,
		    after || r->seen_events) == -1)
			return fail_at(r, r->lo, err, "out of memory");
		i = ve;
		while (i < n && kt_ws[(unsigned char)p[i]])
			i++;
		if (i < n && p[i] == ',')
			i++;
	}
}

/*
 * The end row ("end:N", kind "end") that kt writes last: N counts the
 * event rows before it.  Its absence at EOF means the stream was cut.
 */
static int
tsv_end_row(struct kt_reader *r, const char *p, size_t n,
    struct kt_error *err)
{
	int64_t v;
	int has;

	if (n < 4 || memcmp(p, "end:", 4) != 0 ||
	    col_int(p + 4, n - 4, &v, &has) == -1 || !has || v < 0)
		return fail_at(r, r->lo, err, "bad TSV end row (want "
		    "end:N in the id column)");
	r->tsvend = 1;
	r->repairs.tsv_counted = 1;
	r->repairs.tsv_rows_said = (uint64_t)v;
	r->repairs.tsv_rows_read = r->pos;
	return 0;
}

static int
tsv_next(struct kt_reader *r, struct kt_event *ev, struct kt_error *err)
{
	/* rel_ns: from ktOriginNs; ts_ns, its old name, is read too. */
	static const char header[] =
	    "id\tkind\tph\trel_ns\tdur_ns\tpid\ttid\tcat\tname\tjson";
	static const char rheader[] =
	    "id\tkind\tph\trel_ns\tdur_ns\tpid\ttid\tcat\tname\trank\tjson";
	static const char oheader[] =
	    "id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\tjson";
	static const char orheader[] =
	    "id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\trank\tjson";
	size_t s, e, col[TSV_COLS], coln[TSV_COLS];
	int rc, i, J = r->tsvcols - 1;

	for (;;) {
		if ((rc = tsv_line(r, &s, &e, err)) <= 0) {
			if (rc == 0 && !r->tsvend && r->tsvline > 0) {
				/* Cut at a line boundary (| head -n N |). */
				if (r->flags & KT_READ_STRICT) {
					kt_error_set(err, r->name, r->tsvline +
					    1, 1, "TSV input ends without its "
					    "end row (cut?)");
					return -1;
				}
				r->repairs.n[KT_R_TRUNCATED]++;
				r->repairs.tsv_cut = 1;
				r->repairs.truncated_line = r->tsvline + 1;
				r->repairs.truncated_col = 1;
			}
			if (rc == 0)
				r->state = R_END;
			return rc;
		}
		if (r->tsvend) {
			if (e == s) {
				r->lo = e + 1 <= r->hi ? e + 1 : r->hi;
				continue;
			}
			return fail_at(r, s, err, "data after the TSV end row");
		}
		if (r->tsvline == 1) {
			if ((e - s == sizeof(header) - 1 &&
			    memcmp(r->buf + s, header, e - s) == 0) ||
			    (e - s == sizeof(oheader) - 1 &&
			    memcmp(r->buf + s, oheader, e - s) == 0))
				r->tsvcols = 10;
			else if ((e - s == sizeof(rheader) - 1 &&
			    memcmp(r->buf + s, rheader, e - s) == 0) ||
			    (e - s == sizeof(orheader) - 1 &&
			    memcmp(r->buf + s, orheader, e - s) == 0))
				r->tsvcols = 11;
			else
				return fail_at(r, s, err, "bad TSV header");
			J = r->tsvcols - 1;
			r->lo = e + 1 <= r->hi ? e + 1 : r->hi;
			continue;
		}
		if (e == s) {
			r->lo = e + 1 <= r->hi ? e + 1 : r->hi;
			continue;
		}
		/* Split: tab-separated columns, then json. */
		{
			size_t p = s;

			for (i = 0; i < J; i++) {
				const char *t = memchr(r->buf + p, '\t', e - p);

				if (t == NULL)
					return fail_at(r, p, err, r->tsvcols ==
					    10 ? "TSV line has fewer than 10 "
					    "columns" : "TSV line has fewer than "
					    "11 columns");
				col[i] = p;
				coln[i] = (size_t)(t - r->buf) - p;
				p = (size_t)(t - r->buf) + 1;
			}
			col[i] = p;
			coln[i] = e - p;
		}
		if (coln[1] == 3 && memcmp(r->buf + col[1], "end", 3) == 0) {
			if (tsv_end_row(r, r->buf + col[0], coln[0], err) == -1)
				return -1;
			r->lo = e + 1 <= r->hi ? e + 1 : r->hi;
			continue;
		}
		if (coln[1] == 5 && memcmp(r->buf + col[1], "trace", 5) == 0) {
			if (tsv_trace_row(r, r->buf + col[J], coln[J], err) ==
			    -1)
				return -1;
			r->lo = e + 1 <= r->hi ? e + 1 : r->hi;
			continue;
		}
		r->seen_events = 1;
		break;
	}
	{
		const char *json = r->buf + col[J];
		struct kt_patch pt;
		int64_t v;
		int has;
		size_t k;
		char num[40];

		r->sc.nedits = 0;
		if (coln[J] == 0 || json[0] != '{' ||
		    kt_scan_value(&r->sc, json, 0, coln[J], &k, ev) !=
		    KT_SCAN_OK || k != coln[J])
			return fail_at(r, col[J], err, r->sc.err_msg ?
			    r->sc.err_msg : "json column is not one object");
		if (r->sc.nedits > 0) {
			count_edits(r);
			r->rep.n = 0;
			if (kt_scan_apply(&r->sc, json, 0, coln[J],
			    &r->rep) == -1 ||
			    kt_event_scan(r->rep.p, r->rep.n, ev, NULL) == -1)
				return fail_at(r, col[J], err,
				    "event could not be repaired");
			ev->flags = KT_EV_REPAIRED;
		} else {
			ev->raw = json;
			ev->len = coln[J];
			ev->flags = 0;
			kt_event_finish(ev);
		}
		/* The row number comes from the id column. */
		ev->index = r->pos;
		if (!(r->flags & KT_READ_POSITIONS)) {
			const char *c = memchr(r->buf + col[0], ':', coln[0]);

			if (c != NULL && col_int(c + 1, (size_t)(r->buf +
			    col[0] + coln[0] - c - 1), &v, &has) == 0 &&
			    has && v >= 0)
				ev->index = (uint64_t)v;
			else if (coln[0] != 0)
				return fail_at(r, col[0], err,
				    "bad id column (want KIND:N)");
		}
		r->pos++;
		/* The columns win over json where they differ. */
		kt_patch_init(&pt, ev);
		rc = 0;
		if (coln[2] > 0) {
			const char *t;
			size_t tn;

			col_text(ev, KT_F_PH, &t, &tn);
			if (t == NULL || tn != coln[2] ||
			    memcmp(t, r->buf + col[2], tn) != 0) {
				r->tmp.n = 0;
				kt_buf_addc(&r->tmp, '"');
				kt_buf_add(&r->tmp, r->buf + col[2], coln[2]);
				kt_buf_addc(&r->tmp, '"');
				rc |= kt_patch_set(&pt, KT_F_PH, r->tmp.p,
				    r->tmp.n);
			}
		}
		for (i = 3; i <= 4; i++) {
			enum kt_field f = i == 3 ? KT_F_TS : KT_F_DUR;
			unsigned ok = i == 3 ? KT_EV_TS : KT_EV_DUR;
			int64_t cur = i == 3 ? ev->ts : ev->dur;
			int dec = i == 3 ? ev->ts_decimals : ev->dur_decimals;

			if (col_int(r->buf + col[i], coln[i], &v, &has) == -1) {
				kt_patch_free(&pt);
				return fail_at(r, col[i], err, i == 3 ?
				    "bad rel_ns column: want integer ns (an awk "
				    "that prints 1e+09 needs -v CONVFMT=%.0f, "
				    "or use gawk)" :
				    "bad dur_ns column: want integer ns");
			}
			if (has && ((i == 3 && kt_time_add(v, r->origin,
			    &v) == -1) || v > KT_TIME_MAX || v < -KT_TIME_MAX)) {
				kt_patch_free(&pt);
				return fail_at(r, col[i], err, i == 3 ?
				    "rel_ns + " KT_KEY_ORIGIN " out of range: kt "
				    "holds times within 2^62 ns of 0" :
				    "dur_ns out of range: kt holds times within "
				    "2^62 ns of 0");
			}
			if (has && (!(ev->flags & ok) || v != cur)) {
				k = kt_time_format(v, dec, num);
				rc |= kt_patch_set(&pt, f, num, k);
			}
		}
		for (i = 5; i <= 8; i++) {
			static const enum kt_field fs[] = { KT_F_PID, KT_F_TID,
			    KT_F_CAT, KT_F_NAME };
			enum kt_field f = fs[i - 5];
			const char *t, *c = r->buf + col[i];
			size_t tn;

			if (coln[i] == 0)
				continue;
			col_text(ev, f, &t, &tn);
			if (t != NULL && tn == coln[i] &&
			    memcmp(t, c, tn) == 0)
				continue;
			r->tmp.n = 0;
			if ((f == KT_F_PID || f == KT_F_TID) &&
			    ev->f[f].type != KT_STRING &&
			    is_number(c, coln[i]))
				kt_buf_add(&r->tmp, c, coln[i]);
			else {
				kt_buf_addc(&r->tmp, '"');
				kt_buf_add(&r->tmp, c, coln[i]);
				kt_buf_addc(&r->tmp, '"');
			}
			rc |= kt_patch_set(&pt, f, r->tmp.p, r->tmp.n);
		}
		if (J == 10 && coln[9] > 0) {
			/* The rank column wins over args.rank. */
			const char *t, *c = r->buf + col[9];
			size_t tn;

			col_text(ev, KT_F_RANK, &t, &tn);
			if (!is_number(c, coln[9])) {
				kt_patch_free(&pt);
				return fail_at(r, col[9], err, "bad rank column");
			}
			if (t == NULL || tn != coln[9] || memcmp(t, c, tn) != 0)
				rc |= kt_patch_set(&pt, KT_F_RANK, c, coln[9]);
		}
		if (rc != 0) {
			kt_patch_free(&pt);
			return fail_at(r, col[0], err, "cannot patch event");
		}
		if (pt.n > 0) {
			uint64_t idx = ev->index;
			struct kt_buf nb = KT_BUF_INIT;

			if (kt_patch_apply(&pt, &nb) == -1) {
				kt_patch_free(&pt);
				kt_buf_free(&nb);
				return fail_at(r, col[0], err, "out of memory");
			}
			kt_buf_free(&r->rep);
			r->rep = nb;
			if (kt_event_scan(r->rep.p, r->rep.n, ev, NULL) == -1) {
				kt_patch_free(&pt);
				return fail_at(r, col[0], err, "a column's "
				    "text makes the event invalid JSON");
			}
			ev->index = idx;
			ev->flags |= KT_EV_PATCHED;
		}
		kt_patch_free(&pt);
	}
	r->lo = e + 1 <= r->hi ? e + 1 : r->hi;
	return 1;
}
