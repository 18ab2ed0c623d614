/*
 * write.c: writing.  An output is stdout or a file written atomically
 * (a temporary file beside it, renamed at the end), optionally gzip
 * compressed with zlib.  A trace writer puts events on it as JSON (each
 * event's raw bytes, untouched) or as the TSV event form.
 */
#define _POSIX_C_SOURCE 200809L

#ifdef __linux__
#include <sys/sendfile.h>
#endif
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#ifdef KT_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "ktint.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef KT_MINIFY_SSSE3
#include <immintrin.h>
#endif

#define OUTBUF	(1 << 20)
#define BYPASS	(64 << 10)	/* a plain write this large is not copied */

struct kt_out {
	char		 name[PATH_MAX];	/* as the user gave it */
	char		 tmp[PATH_MAX + 32];	/* temporary file, or "" */
	int		 fd;
	int		 gz;
	int		 zinit;
	z_stream	 zs;
	char		*buf;
	size_t		 n;
	char		*zbuf;
	int		 level;			/* gzip level, or -1 */
	int		 err;			/* errno of a failed write */
	int		 nosend;		/* sendfile cannot write it */
#ifdef KT_HAVE_ISAL
	struct isal_zstream *is;		/* gzip at level 1: ISA-L's */
	unsigned char	*islevel;
#endif
};

static int	write_all(int, const char *, size_t);

/*
 * Start a gzip member: at the fast level (the default, or --level 1)
 * with ISA-L's igzip where it is built in (several times zlib's speed
 * at a like size), else and at other levels with zlib.  0, or -1 out of
 * memory.
 */
static int
gz_start(struct kt_out *o)
{
#ifdef KT_HAVE_ISAL
	if (o->level < 0 || o->level == 1) {
		if ((o->is = calloc(1, sizeof(*o->is))) == NULL ||
		    (o->islevel = malloc(ISAL_DEF_LVL1_DEFAULT)) == NULL)
			return -1;
		isal_deflate_init(o->is);
		o->is->level = 1;
		o->is->level_buf = o->islevel;
		o->is->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
		o->is->gzip_flag = IGZIP_GZIP;
		o->zinit = 1;
		return 0;
	}
#endif
	memset(&o->zs, 0, sizeof(o->zs));
	if (deflateInit2(&o->zs, o->level < 0 ? 1 : o->level, Z_DEFLATED,
	    15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	o->zinit = 1;
	return 0;
}

/* End the gzip member's compressor (its bytes are written). */
static void
gz_end(struct kt_out *o)
{
#ifdef KT_HAVE_ISAL
	if (o->is != NULL || o->islevel != NULL) {
		free(o->is);
		free(o->islevel);
		o->is = NULL;
		o->islevel = NULL;
		o->zinit = 0;
		return;
	}
#endif
	if (o->zinit)
		deflateEnd(&o->zs);
	o->zinit = 0;
}

/* Compress o->buf[0..n) into the file (finish: end the member). */
static int
gz_flush(struct kt_out *o, int finish)
{
#ifdef KT_HAVE_ISAL
	if (o->is != NULL) {
		struct isal_zstream *z = o->is;

		z->next_in = (uint8_t *)o->buf;
		z->avail_in = (uint32_t)o->n;
		z->end_of_stream = finish;
		z->flush = NO_FLUSH;
		do {
			z->next_out = (uint8_t *)o->zbuf;
			z->avail_out = OUTBUF;
			if (isal_deflate(z) != COMP_OK) {
				o->err = EIO;
				return -1;
			}
			if (write_all(o->fd, o->zbuf, OUTBUF - z->avail_out) ==
			    -1) {
				o->err = errno;
				return -1;
			}
		} while (z->avail_out == 0 || z->avail_in > 0 ||
		    (finish && z->internal_state.state != ZSTATE_END));
		return 0;
	}
#endif
	o->zs.next_in = (Bytef *)o->buf;
	o->zs.avail_in = (uInt)o->n;
	do {
		int rc;

		o->zs.next_out = (Bytef *)o->zbuf;
		o->zs.avail_out = OUTBUF;
		rc = deflate(&o->zs, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR) {
			o->err = EIO;
			return -1;
		}
		if (write_all(o->fd, o->zbuf, OUTBUF - o->zs.avail_out) ==
		    -1) {
			o->err = errno;
			return -1;
		}
	} while (o->zs.avail_out == 0 || o->zs.avail_in > 0);
	return 0;
}

/* Write all of p[0..n) to fd.  0 or -1 with errno. */
static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Write all of a[0..an) and then b[0..bn) to fd, in one call when it
 * can.  0 or -1 with errno.
 */
static int
write_two(int fd, const char *a, size_t an, const char *b, size_t bn)
{
	while (an > 0) {
		struct iovec iov[2];
		ssize_t w;

		iov[0].iov_base = (void *)a;
		iov[0].iov_len = an;
		iov[1].iov_base = (void *)b;
		iov[1].iov_len = bn;
		if ((w = writev(fd, iov, 2)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if ((size_t)w < an) {
			a += w;
			an -= (size_t)w;
			continue;
		}
		b += (size_t)w - an;
		bn -= (size_t)w - an;
		an = 0;
	}
	return write_all(fd, b, bn);
}

/*
 * Open a path that is not a regular file for writing, through it: when
 * it is the file of stdout or stderr, a copy of that descriptor (so that
 * "> f" and ">> f" behave as they would for stdout itself); a link to a
 * regular file truncates that file; a device or FIFO is opened as it is.
 */
static int
open_through(const char *path)
{
	struct stat st, sd;
	int fd, flags = O_WRONLY;

	if (stat(path, &st) == 0) {
		for (fd = 1; fd <= 2; fd++)
			if (fstat(fd, &sd) == 0 && sd.st_dev == st.st_dev &&
			    sd.st_ino == st.st_ino && (S_ISREG(st.st_mode) ||
			    S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
				return fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (S_ISREG(st.st_mode))
			flags |= O_TRUNC;
	} else if (errno == ENOENT)
		flags |= O_CREAT | O_TRUNC;	/* a dangling link */
	else
		return -1;
	return open(path, flags | O_CLOEXEC, 0666);
}

struct kt_out *
kt_out_open(const char *path, int level, struct kt_error *err)
{
	struct kt_out *o;
	struct stat st;
	size_t len;

	if ((o = calloc(1, sizeof(*o))) == NULL ||
	    (o->buf = malloc(OUTBUF)) == NULL) {
		free(o);
		kt_error_set(err, path, 0, 0, "out of memory");
		return NULL;
	}
	o->level = level;
	if (path == NULL || strcmp(path, "-") == 0) {
		snprintf(o->name, sizeof(o->name), "<stdout>");
		o->fd = 1;
		if (level >= 0)
			o->gz = 1;
	} else {
		snprintf(o->name, sizeof(o->name), "%s", path);
		len = strlen(path);
		o->gz = len > 3 && strcmp(path + len - 3, ".gz") == 0;
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			/* A link, a device or a pipe: written through. */
			if ((o->fd = open_through(path)) == -1)
				goto fail;
		} else {
			const char *slash = strrchr(path, '/');
			int dl = slash ? (int)(slash - path + 1) : 0;
			mode_t um;

			snprintf(o->tmp, sizeof(o->tmp), "%.*s.%s.kt-XXXXXX",
			    dl, path, slash ? slash + 1 : path);
			if ((o->fd = mkstemp(o->tmp)) == -1) {
				o->tmp[0] = '\0';
				goto fail;
			}
			um = umask(0);
			umask(um);
			(void)fchmod(o->fd, 0666 & ~um);
		}
	}
	if (o->gz && ((o->zbuf = malloc(OUTBUF)) == NULL ||
	    gz_start(o) == -1))
		goto nomem;
	return o;
nomem:
	errno = ENOMEM;
fail:
	kt_error_set(err, path, 0, 0, "%s", strerror(errno));
	kt_out_abort(o);
	return NULL;
}

/* Pass n bytes on to the file, through deflate when compressing. */
static int
out_flush(struct kt_out *o, int finish)
{
	if (o->err)
		return -1;
	if (!o->gz) {
		if (write_all(o->fd, o->buf, o->n) == -1) {
			o->err = errno;
			return -1;
		}
		o->n = 0;
		return 0;
	}
	if (gz_flush(o, finish) == -1)
		return -1;
	o->n = 0;
	return 0;
}

int
kt_out_write(struct kt_out *o, const void *p, size_t n)
{
	const char *s = p;

	if (o->fd < 0 && n > 0 && kt_out_resume(o) == -1)
		return -1;
	if (!o->gz && n >= BYPASS) {
		/* Large and plain: after the buffer, without a copy. */
		if (o->err)
			return -1;
		if (write_two(o->fd, o->buf, o->n, s, n) == -1) {
			o->err = errno;
			return -1;
		}
		o->n = 0;
		return 0;
	}
	while (n > 0) {
		size_t m = OUTBUF - o->n;

		if (m > n)
			m = n;
		memcpy(o->buf + o->n, s, m);
		o->n += m;
		s += m;
		n -= m;
		if (o->n == OUTBUF && out_flush(o, 0) == -1)
			return -1;
	}
	return o->err ? -1 : 0;
}

/*
 * kt_out_write of a short separator a (an bytes) and then b (bn): where
 * both fit in the buffer with room to spare, copied there at once (what
 * the two calls would do, without their tests and the separator's call
 * to memcpy); anything else is the two calls.
 */
static int
out_write_sep(struct kt_out *o, const char *a, size_t an, const char *b,
    size_t bn)
{
	if (o->fd >= 0 && o->err == 0 && bn < BYPASS && an + bn < OUTBUF -
	    o->n) {
		char *d = o->buf + o->n;

		memcpy(d, a, an);
		memcpy(d + an, b, bn);
		o->n += an + bn;
		return 0;
	}
	if (kt_out_write(o, a, an) == -1)
		return -1;
	return kt_out_write(o, b, bn);
}

int64_t
kt_out_from_fd(struct kt_out *o, int fd, uint64_t from, uint64_t n)
{
	uint64_t done = 0;
	ssize_t k;

	if (o->fd < 0 && n > 0 && kt_out_resume(o) == -1)
		return -1;
#ifdef __linux__
	/*
	 * Plain: by the kernel, from the page cache to the output, without
	 * a copy here (none at all to /dev/null, page references to a
	 * pipe).  A descriptor it cannot write (appending, some devices
	 * and file systems) says EINVAL at once, and is written as below.
	 */
	if (!o->gz && !o->nosend && n > 0) {
		if (out_flush(o, 0) == -1)
			return -1;
		while (done < n) {
			off_t at = (off_t)(from + done);
			size_t want = n - done > (1u << 30) ? 1u << 30 :
			    (size_t)(n - done);

			if ((k = sendfile(o->fd, fd, &at, want)) > 0)
				done += (uint64_t)k;
			else if (k == 0)
				return (int64_t)done;	/* the file ended */
			else if (errno == EINVAL || errno == ENOSYS ||
			    errno == EOPNOTSUPP) {
				o->nosend = 1;
				break;
			} else if (errno != EINTR) {
				o->err = errno;
				return -1;
			}
		}
	}
#endif
	/* Read into the output's own buffer, and written from there. */
	while (done < n) {
		size_t want = OUTBUF - o->n;

		if (want == 0) {
			if (out_flush(o, 0) == -1)
				return -1;
			continue;
		}
		if (want > n - done)
			want = (size_t)(n - done);
		if ((k = pread(fd, o->buf + o->n, want, (off_t)(from + done))) ==
		    -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0)
			break;
		o->n += (size_t)k;
		done += (uint64_t)k;
	}
	return o->err ? -1 : (int64_t)done;
}

int
kt_out_commit(struct kt_out *o, struct kt_error *err)
{
	int rc = 0;

	if (o->fd < 0 && kt_out_resume(o) == -1)
		rc = -1;
	else if (out_flush(o, 1) == -1)
		rc = -1;
	if (o->fd > 2 && close(o->fd) == -1 && rc == 0) {
		o->err = errno;
		rc = -1;
	}
	if (o->fd > 2)
		o->fd = -1;
	if (rc == 0 && o->tmp[0] != '\0') {
		if (rename(o->tmp, o->name) == -1) {
			o->err = errno;
			rc = -1;
		} else
			o->tmp[0] = '\0';
	}
	if (rc == -1)
		kt_error_set(err, o->name, 0, 0, "%s", strerror(o->err));
	kt_out_abort(o);
	return rc;
}

int
kt_out_suspend(struct kt_out *o)
{
	if (o->fd < 0)
		return 0;
	if (o->tmp[0] == '\0')
		return 0;		/* written through: stays open */
	if (out_flush(o, 1) == -1)
		return -1;
	if (close(o->fd) == -1) {
		o->err = errno;
		o->fd = -1;
		return -1;
	}
	o->fd = -1;
	gz_end(o);
	free(o->buf);
	free(o->zbuf);
	o->buf = o->zbuf = NULL;
	return 0;
}

int
kt_out_resume(struct kt_out *o)
{
	if (o->fd >= 0)
		return o->err ? -1 : 0;
	if (o->err)
		return -1;
	if ((o->buf = malloc(OUTBUF)) == NULL ||
	    (o->gz && (o->zbuf = malloc(OUTBUF)) == NULL)) {
		o->err = ENOMEM;
		return -1;
	}
	o->n = 0;
	if ((o->fd = open(o->tmp, O_WRONLY | O_APPEND | O_CLOEXEC)) == -1) {
		o->err = errno;
		return -1;
	}
	/* A gzip output goes on in a new member (gzip(1) reads both). */
	if (o->gz && gz_start(o) == -1) {
		o->err = ENOMEM;
		return -1;
	}
	return 0;
}

const char *
kt_out_tmppath(const struct kt_out *o)
{
	return o->tmp;
}

const char *
kt_out_name(const struct kt_out *o)
{
	return o->name;
}

int
kt_out_errno(const struct kt_out *o)
{
	return o->err;
}

void
kt_out_abort(struct kt_out *o)
{
	if (o == NULL)
		return;
	if (o->fd > 2)
		close(o->fd);
	if (o->tmp[0] != '\0')
		unlink(o->tmp);
	gz_end(o);
	free(o->buf);
	free(o->zbuf);
	free(o);
}

/* ------------------------------------------------------------------ */

struct kt_writer {
	struct kt_out	*out;
	unsigned	 flags;
	uint64_t	 nev;
	int		 tsv_after;	/* the first trace row had after-keys */
	int		 pending;	/* the first trace row waits for ts */
	int		 origin_set;
	int64_t		 origin;	/* TSV rel_ns are relative to this */
	struct kt_buf	 row;
	struct kt_buf	 held;		/* events waiting for the origin */
	struct kt_buf	 line;
	/* KT_WRITE_ROWS: the row numbers, kept once one is not nev. */
	uint64_t	*rows;
	size_t		 nrows, rowcap;
	int		 rows_moved;
	int		 rows_given;	/* kt_writer_begin wrote an index */
	int64_t		 rank;		/* ktRank to write, or -1 */
};

/* KT_WRITE_ROWS: note the row number of the event written next. */
static int
rows_note(struct kt_writer *w, uint64_t index)
{
	size_t i;

	if (!w->rows_moved) {
		if (index == w->nrows) {
			w->nrows++;
			return 0;
		}
		w->rows_moved = 1;
		w->rowcap = w->nrows + 4096;
		if ((w->rows = malloc(w->rowcap * sizeof(*w->rows))) == NULL)
			return -1;
		for (i = 0; i < w->nrows; i++)
			w->rows[i] = i;
	}
	if (w->nrows == w->rowcap) {
		size_t nc = w->rowcap * 2;
		uint64_t *nr = realloc(w->rows, nc * sizeof(*nr));

		if (nr == NULL)
			return -1;
		w->rows = nr;
		w->rowcap = nc;
	}
	w->rows[w->nrows++] = index;
	return 0;
}

struct kt_writer *
kt_writer_new(struct kt_out *out, unsigned flags)
{
	struct kt_writer *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->out = out;
	w->flags = flags;
	w->rank = -1;
	return w;
}

void
kt_writer_free(struct kt_writer *w)
{
	if (w == NULL)
		return;
	kt_buf_free(&w->line);
	kt_buf_free(&w->row);
	kt_buf_free(&w->held);
	free(w->rows);
	free(w);
}

/*
 * kt_json_minify has four ways, all giving the same bytes (unit tests
 * call each on random texts against a byte-by-byte oracle, and the scan
 * fuzzer each against the byte loop): the portable byte loop
 * (minify_plain), sixteen bytes at a time with SSE2 (minify16, then the
 * byte loop), and chosen at run time, with SSSE3 a block of sixteen
 * bytes without a branch per run or string (see kt_minify_ssse3), with
 * AVX-512 VBMI2 a block of 64 (kt_minify_avx512).  Each writes to o,
 * which has sixteen bytes of room past n, and returns the length
 * written.
 */

/* The portable loop: from outside a string to the end of the text. */
static char *
minify_plain(const char *p, const char *e, char *o)
{
	const char *s, *q, *b;

	while (p < e) {
		unsigned char c = (unsigned char)*p++;

		/* Outside strings: every byte but white space, no branch. */
		*o = (char)c;
		o += 1 - kt_ws[c];
		if (c != '"')
			continue;
		/*
		 * A string: it ends at the first quote after an even run of
		 * backslashes (each pair one escaped backslash), or at the end
		 * of the text.  A short one is looked at here; past 16 bytes or
		 * a backslash, memchr finds the quotes.
		 */
		for (s = p, q = p; q < e && q - s < 16 && *q != '"' &&
		    *q != '\\'; q++)
			;
		if (q < e && *q == '"')
			q++;
		else
			for (;; q++) {
				if ((q = memchr(q, '"', (size_t)(e - q))) ==
				    NULL) {
					q = e;
					break;
				}
				for (b = q; b > s && b[-1] == '\\'; b--)
					;
				if ((q - b) % 2 == 0) {
					q++;
					break;
				}
			}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		p = q;
	}
	return o;
}

size_t
kt_minify_scalar(const char *p, size_t n, char *o)
{
	return (size_t)(minify_plain(p, p + n, o) - o);
}

#ifdef __SSE2__
#define LOAD16(b)	_mm_loadu_si128((const __m128i *)(const void *)(b))
#define STORE16(o, x)	_mm_storeu_si128((__m128i *)(void *)(o), (x))

/*
 * kt_json_minify sixteen bytes at a time while sixteen are left: outside
 * a string, the runs between white space are stored whole (each store
 * sixteen bytes, the next one writing over the rest); inside, the plain
 * bytes up to a quote or a backslash.  Returns where p and o got to:
 * outside a string, with fewer than sixteen bytes left.  out has sixteen
 * bytes of room past what it is given.
 */
static void
minify16(const char **pp, const char *e, char **op)
{
	const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
	const __m128i tb = _mm_set1_epi8('\t'), cr = _mm_set1_epi8('\r');
	const __m128i qu = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const char *p = *pp;
	char *o = *op;

	while (e - p >= 16) {
		__m128i x = LOAD16(p);
		unsigned ws = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		    _mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, nl)),
		    _mm_or_si128(_mm_cmpeq_epi8(x, tb), _mm_cmpeq_epi8(x, cr))));
		unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, qu));
		unsigned stop = q != 0 ? (unsigned)__builtin_ctz(q) : 16;
		unsigned keep = ~ws & ((1u << stop) - 1);

		if (keep == (1u << stop) - 1) {
			STORE16(o, x);
			o += stop;
		} else
			while (keep != 0) {
				unsigned s = (unsigned)__builtin_ctz(keep);
				unsigned run = (unsigned)__builtin_ctz(~(keep >> s));

				if (p + s + 16 <= e)
					STORE16(o, LOAD16(p + s));
				else
					memcpy(o, p + s, run);
				o += run;
				keep &= ~(((1u << run) - 1) << s);
			}
		p += stop;
		if (stop == 16)
			continue;
		/* A string: its quote, then up to its closing one. */
		*o++ = *p++;
		for (;;) {
			unsigned m;

			if (e - p < 16) {
				while (p < e) {
					char c = *p++;

					*o++ = c;
					if (c == '"')
						break;
					if (c == '\\' && p < e)
						*o++ = *p++;
				}
				*pp = p;
				*op = o;
				return;
			}
			x = LOAD16(p);
			m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
			    _mm_cmpeq_epi8(x, qu), _mm_cmpeq_epi8(x, bs)));
			STORE16(o, x);
			if (m == 0) {
				o += 16;
				p += 16;
				continue;
			}
			m = (unsigned)__builtin_ctz(m);
			o += m;
			p += m;
			if (*p == '"') {
				*o++ = *p++;
				break;
			}
			/* A backslash and the byte it escapes. */
			*o++ = *p++;
			if (p < e)
				*o++ = *p++;
		}
	}
	*pp = p;
	*op = o;
}
size_t
kt_minify_sse2(const char *p, size_t n, char *o)
{
	const char *e = p + n;
	char *s = o;

	minify16(&p, e, &o);
	return (size_t)(minify_plain(p, e, o) - s);
}

#ifdef KT_MINIFY_SSSE3
/*
 * Byte by byte from a state: bit 0 inside a string, bit 1 after its
 * backslash (the next byte is copied whatever it is).  For a block with
 * a backslash and for short texts.
 */
static char *
minify_state(const char *p, const char *e, char *o, unsigned *st)
{
	unsigned s = *st;

	while (p < e) {
		unsigned char c = (unsigned char)*p++;

		if (s != 0) {
			*o++ = (char)c;
			if (s == 3)
				s = 1;
			else if (c == '\\')
				s = 2 | 1;
			else if (c == '"')
				s = 0;
			continue;
		}
		*o = (char)c;
		o += 1 - kt_ws[c];
		if (c == '"')
			s = 1;
	}
	*st = s;
	return o;
}

/*
 * For each byte k of bits to keep, the places of its set bits in order
 * (a pshufb control for eight bytes, 0x80 after them), and their count.
 */
static const uint64_t keep8[256] = {
	0x8080808080808080ULL, 0x8080808080808000ULL, 0x8080808080808001ULL,
	0x8080808080800100ULL, 0x8080808080808002ULL, 0x8080808080800200ULL,
	0x8080808080800201ULL, 0x8080808080020100ULL, 0x8080808080808003ULL,
	0x8080808080800300ULL, 0x8080808080800301ULL, 0x8080808080030100ULL,
	0x8080808080800302ULL, 0x8080808080030200ULL, 0x8080808080030201ULL,
	0x8080808003020100ULL, 0x8080808080808004ULL, 0x8080808080800400ULL,
	0x8080808080800401ULL, 0x8080808080040100ULL, 0x8080808080800402ULL,
	0x8080808080040200ULL, 0x8080808080040201ULL, 0x8080808004020100ULL,
	0x8080808080800403ULL, 0x8080808080040300ULL, 0x8080808080040301ULL,
	0x8080808004030100ULL, 0x8080808080040302ULL, 0x8080808004030200ULL,
	0x8080808004030201ULL, 0x8080800403020100ULL, 0x8080808080808005ULL,
	0x8080808080800500ULL, 0x8080808080800501ULL, 0x8080808080050100ULL,
	0x8080808080800502ULL, 0x8080808080050200ULL, 0x8080808080050201ULL,
	0x8080808005020100ULL, 0x8080808080800503ULL, 0x8080808080050300ULL,
	0x8080808080050301ULL, 0x8080808005030100ULL, 0x8080808080050302ULL,
	0x8080808005030200ULL, 0x8080808005030201ULL, 0x8080800503020100ULL,
	0x8080808080800504ULL, 0x8080808080050400ULL, 0x8080808080050401ULL,
	0x8080808005040100ULL, 0x8080808080050402ULL, 0x8080808005040200ULL,
	0x8080808005040201ULL, 0x8080800504020100ULL, 0x8080808080050403ULL,
	0x8080808005040300ULL, 0x8080808005040301ULL, 0x8080800504030100ULL,
	0x8080808005040302ULL, 0x8080800504030200ULL, 0x8080800504030201ULL,
	0x8080050403020100ULL, 0x8080808080808006ULL, 0x8080808080800600ULL,
	0x8080808080800601ULL, 0x8080808080060100ULL, 0x8080808080800602ULL,
	0x8080808080060200ULL, 0x8080808080060201ULL, 0x8080808006020100ULL,
	0x8080808080800603ULL, 0x8080808080060300ULL, 0x8080808080060301ULL,
	0x8080808006030100ULL, 0x8080808080060302ULL, 0x8080808006030200ULL,
	0x8080808006030201ULL, 0x8080800603020100ULL, 0x8080808080800604ULL,
	0x8080808080060400ULL, 0x8080808080060401ULL, 0x8080808006040100ULL,
	0x8080808080060402ULL, 0x8080808006040200ULL, 0x8080808006040201ULL,
	0x8080800604020100ULL, 0x8080808080060403ULL, 0x8080808006040300ULL,
	0x8080808006040301ULL, 0x8080800604030100ULL, 0x8080808006040302ULL,
	0x8080800604030200ULL, 0x8080800604030201ULL, 0x8080060403020100ULL,
	0x8080808080800605ULL, 0x8080808080060500ULL, 0x8080808080060501ULL,
	0x8080808006050100ULL, 0x8080808080060502ULL, 0x8080808006050200ULL,
	0x8080808006050201ULL, 0x8080800605020100ULL, 0x8080808080060503ULL,
	0x8080808006050300ULL, 0x8080808006050301ULL, 0x8080800605030100ULL,
	0x8080808006050302ULL, 0x8080800605030200ULL, 0x8080800605030201ULL,
	0x8080060503020100ULL, 0x8080808080060504ULL, 0x8080808006050400ULL,
	0x8080808006050401ULL, 0x8080800605040100ULL, 0x8080808006050402ULL,
	0x8080800605040200ULL, 0x8080800605040201ULL, 0x8080060504020100ULL,
	0x8080808006050403ULL, 0x8080800605040300ULL, 0x8080800605040301ULL,
	0x8080060504030100ULL, 0x8080800605040302ULL, 0x8080060504030200ULL,
	0x8080060504030201ULL, 0x8006050403020100ULL, 0x8080808080808007ULL,
	0x8080808080800700ULL, 0x8080808080800701ULL, 0x8080808080070100ULL,
	0x8080808080800702ULL, 0x8080808080070200ULL, 0x8080808080070201ULL,
	0x8080808007020100ULL, 0x8080808080800703ULL, 0x8080808080070300ULL,
	0x8080808080070301ULL, 0x8080808007030100ULL, 0x8080808080070302ULL,
	0x8080808007030200ULL, 0x8080808007030201ULL, 0x8080800703020100ULL,
	0x8080808080800704ULL, 0x8080808080070400ULL, 0x8080808080070401ULL,
	0x8080808007040100ULL, 0x8080808080070402ULL, 0x8080808007040200ULL,
	0x8080808007040201ULL, 0x8080800704020100ULL, 0x8080808080070403ULL,
	0x8080808007040300ULL, 0x8080808007040301ULL, 0x8080800704030100ULL,
	0x8080808007040302ULL, 0x8080800704030200ULL, 0x8080800704030201ULL,
	0x8080070403020100ULL, 0x8080808080800705ULL, 0x8080808080070500ULL,
	0x8080808080070501ULL, 0x8080808007050100ULL, 0x8080808080070502ULL,
	0x8080808007050200ULL, 0x8080808007050201ULL, 0x8080800705020100ULL,
	0x8080808080070503ULL, 0x8080808007050300ULL, 0x8080808007050301ULL,
	0x8080800705030100ULL, 0x8080808007050302ULL, 0x8080800705030200ULL,
	0x8080800705030201ULL, 0x8080070503020100ULL, 0x8080808080070504ULL,
	0x8080808007050400ULL, 0x8080808007050401ULL, 0x8080800705040100ULL,
	0x8080808007050402ULL, 0x8080800705040200ULL, 0x8080800705040201ULL,
	0x8080070504020100ULL, 0x8080808007050403ULL, 0x8080800705040300ULL,
	0x8080800705040301ULL, 0x8080070504030100ULL, 0x8080800705040302ULL,
	0x8080070504030200ULL, 0x8080070504030201ULL, 0x8007050403020100ULL,
	0x8080808080800706ULL, 0x8080808080070600ULL, 0x8080808080070601ULL,
	0x8080808007060100ULL, 0x8080808080070602ULL, 0x8080808007060200ULL,
	0x8080808007060201ULL, 0x8080800706020100ULL, 0x8080808080070603ULL,
	0x8080808007060300ULL, 0x8080808007060301ULL, 0x8080800706030100ULL,
	0x8080808007060302ULL, 0x8080800706030200ULL, 0x8080800706030201ULL,
	0x8080070603020100ULL, 0x8080808080070604ULL, 0x8080808007060400ULL,
	0x8080808007060401ULL, 0x8080800706040100ULL, 0x8080808007060402ULL,
	0x8080800706040200ULL, 0x8080800706040201ULL, 0x8080070604020100ULL,
	0x8080808007060403ULL, 0x8080800706040300ULL, 0x8080800706040301ULL,
	0x8080070604030100ULL, 0x8080800706040302ULL, 0x8080070604030200ULL,
	0x8080070604030201ULL, 0x8007060403020100ULL, 0x8080808080070605ULL,
	0x8080808007060500ULL, 0x8080808007060501ULL, 0x8080800706050100ULL,
	0x8080808007060502ULL, 0x8080800706050200ULL, 0x8080800706050201ULL,
	0x8080070605020100ULL, 0x8080808007060503ULL, 0x8080800706050300ULL,
	0x8080800706050301ULL, 0x8080070605030100ULL, 0x8080800706050302ULL,
	0x8080070605030200ULL, 0x8080070605030201ULL, 0x8007060503020100ULL,
	0x8080808007060504ULL, 0x8080800706050400ULL, 0x8080800706050401ULL,
	0x8080070605040100ULL, 0x8080800706050402ULL, 0x8080070605040200ULL,
	0x8080070605040201ULL, 0x8007060504020100ULL, 0x8080800706050403ULL,
	0x8080070605040300ULL, 0x8080070605040301ULL, 0x8007060504030100ULL,
	0x8080070605040302ULL, 0x8007060504030200ULL, 0x8007060504030201ULL,
	0x0706050403020100ULL,
};

#define C2(n)	n, n + 1, n + 1, n + 2
#define C4(n)	C2(n), C2(n + 1), C2(n + 1), C2(n + 2)
#define C6(n)	C4(n), C4(n + 1), C4(n + 1), C4(n + 2)
static const unsigned char count8[256] = { C6(0), C6(1), C6(1), C6(2) };
#undef C2
#undef C4
#undef C6

/*
 * The bits of ws (white space), q (quotes) and bs (backslashes) of the
 * sixteen bytes at p, and x, the bytes.
 */
#define MASKS(x, p, ws, q, bs) do {					\
	(x) = LOAD16(p);						\
	(ws) = (unsigned)_mm_movemask_epi8(_mm_or_si128(		\
	    _mm_or_si128(_mm_cmpeq_epi8((x), sp), _mm_cmpeq_epi8((x), nl)), \
	    _mm_or_si128(_mm_cmpeq_epi8((x), tb), _mm_cmpeq_epi8((x), cr)))); \
	(q) = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8((x), qu));	\
	(bs) = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8((x), bq));	\
} while (0)

/*
 * Sixteen bytes at a time: a block without a backslash is inside a
 * string from each quote to the next (the running XOR of its quote
 * bits, started from whether the block before ended inside one), its
 * white space outside strings is dropped, and the bytes kept are moved
 * together with pshufb, eight at a time from keep8.  A block with a
 * backslash (rare in traces) goes byte by byte; the last partial block
 * is the text's last sixteen bytes, those already done dropped.
 */
__attribute__((target("ssse3"))) size_t
kt_minify_ssse3(const char *p, size_t n, char *o)
{
	const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
	const __m128i tb = _mm_set1_epi8('\t'), cr = _mm_set1_epi8('\r');
	const __m128i qu = _mm_set1_epi8('"'), bq = _mm_set1_epi8('\\');
	const __m128i eight = _mm_set1_epi8(8);
	const char *e = p + n;
	char *s = o;
	unsigned st = 0;	/* as minify_state's */

	if (n < 16)
		return (size_t)(minify_state(p, e, o, &st) - s);
	for (;;) {
		__m128i x, y;
		unsigned ws, q, bs, in, drop, done = 0;

		if (e - p < 16) {
			if (p == e)
				break;
			/* The last sixteen, less the done ones. */
			done = 16 - (unsigned)(e - p);
			p = e - 16;
		}
		MASKS(x, p, ws, q, bs);
		q &= 0xffffu << done;
		if ((bs & (0xffffu << done)) != 0 || st == 3) {
			o = minify_state(p + done, p + 16, o, &st);
			p += 16;
			continue;
		}
		in = q ^ (q << 1);
		in ^= in << 2;
		in ^= in << 4;
		in ^= in << 8;
		in = (in ^ (0u - st)) & 0xffff;
		st = in >> 15;
		drop = (ws & ~in) | ((1u << done) - 1);
		p += 16;
		if (drop == 0) {
			STORE16(o, x);
			o += 16;
			continue;
		}
		drop = ~drop & 0xffff;	/* now the bytes kept */
		y = _mm_shuffle_epi8(x, _mm_unpacklo_epi64(
		    _mm_loadl_epi64((const __m128i *)(const void *)
		    &keep8[drop & 0xff]), _mm_add_epi8(eight,
		    _mm_loadl_epi64((const __m128i *)(const void *)
		    &keep8[drop >> 8]))));
		_mm_storel_epi64((__m128i *)(void *)o, y);
		o += count8[drop & 0xff];
		_mm_storel_epi64((__m128i *)(void *)o,
		    _mm_unpackhi_epi64(y, y));
		o += count8[drop >> 8];
	}
	return (size_t)(o - s);
}
#undef MASKS

int
kt_minify_have_ssse3(void)
{
	return __builtin_cpu_supports("ssse3") != 0;
}

#ifdef KT_MINIFY_AVX512
#define AVX512	__attribute__((target("avx512f,avx512bw,avx512vbmi2,pclmul")))

/*
 * Sixty-four bytes at a time with AVX-512 (VBMI2): the block's white
 * space, quotes and backslashes as 64-bit masks; without a backslash,
 * inside a string from each quote to the next is the quotes' running
 * XOR (a carry-less multiply by all ones), started from whether the
 * block before ended inside one; vpcompressb moves the bytes kept
 * together, stored whole (a full block writes at most its own 64 bytes
 * past where it started, never past the text's length, as the output is
 * never ahead of the input) or, for the last partial block, through a
 * mask of the bytes kept.  A block with a backslash goes byte by byte,
 * as in kt_minify_ssse3; a text under 64 bytes is kt_minify_ssse3's.
 */
AVX512 size_t
kt_minify_avx512(const char *p, size_t n, char *o)
{
	const __m512i sp = _mm512_set1_epi8(' '), nl = _mm512_set1_epi8('\n');
	const __m512i tb = _mm512_set1_epi8('\t'), cr = _mm512_set1_epi8('\r');
	const __m512i qu = _mm512_set1_epi8('"'), bq = _mm512_set1_epi8('\\');
	const __m128i ones = _mm_set1_epi8(-1);
	const char *e = p + n;
	char *s = o;
	unsigned st = 0;	/* as minify_state's */

	if (n < 64)
		return kt_minify_ssse3(p, n, o);
	for (;;) {
		__m512i x;
		uint64_t ws, q, bs, in, keep, from = ~0ULL;
		unsigned done = 0, k;

		if (e - p < 64) {
			if (p == e)
				break;
			/* The last 64, less the done ones. */
			done = 64 - (unsigned)(e - p);
			from <<= done;
			p = e - 64;
		}
		x = _mm512_loadu_si512((const void *)p);
		bs = _mm512_cmpeq_epi8_mask(x, bq) & from;
		if (bs != 0 || st == 3) {
			o = minify_state(p + done, p + 64, o, &st);
			p += 64;
			continue;
		}
		ws = _mm512_cmpeq_epi8_mask(x, sp) |
		    _mm512_cmpeq_epi8_mask(x, nl) |
		    _mm512_cmpeq_epi8_mask(x, tb) |
		    _mm512_cmpeq_epi8_mask(x, cr);
		q = _mm512_cmpeq_epi8_mask(x, qu) & from;
		in = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(
		    _mm_cvtsi64_si128((long long)q), ones, 0));
		in ^= 0 - (uint64_t)st;
		st = (unsigned)(in >> 63);
		keep = ~(ws & ~in) & from;
		p += 64;
		x = _mm512_maskz_compress_epi8(keep, x);
		k = (unsigned)__builtin_popcountll(keep);
		if (done == 0)
			_mm512_storeu_si512((void *)o, x);
		else if (k > 0)
			_mm512_mask_storeu_epi8((void *)o, ~0ULL >> (64 - k), x);
		o += k;
	}
	return (size_t)(o - s);
}
#undef AVX512

int
kt_minify_have_avx512(void)
{
	return __builtin_cpu_supports("avx512f") != 0 &&
	    __builtin_cpu_supports("avx512bw") != 0 &&
	    __builtin_cpu_supports("avx512vbmi2") != 0 &&
	    __builtin_cpu_supports("pclmul") != 0;
}
#endif /* KT_MINIFY_AVX512 */
#endif /* KT_MINIFY_SSSE3 */
#endif /* __SSE2__ */

/* kt_json_minify's bytes at o (sixteen bytes of room past n): the end. */
static char *
minify_at(const char *p, size_t n, char *o)
{
#if defined(KT_MINIFY_SSSE3)
#ifdef KT_MINIFY_AVX512
	if (kt_minify_have_avx512())
		return o + kt_minify_avx512(p, n, o);
#endif
	if (kt_minify_have_ssse3())
		return o + kt_minify_ssse3(p, n, o);
	return o + kt_minify_sse2(p, n, o);
#elif defined(__SSE2__)
	return o + kt_minify_sse2(p, n, o);
#else
	return o + kt_minify_scalar(p, n, o);
#endif
}

int
kt_json_minify(const char *p, size_t n, struct kt_buf *out)
{
	if (kt_buf_reserve(out, n + 16) == -1)
		return -1;
	out->n = (size_t)(minify_at(p, n, out->p + out->n) - out->p);
	return 0;
}

/*
 * A TSV trace row: the keys before traceEvents, a "traceEvents": []
 * placeholder, then the keys after it (only those when which is 1).
 * The first row is left open in w->row until the first event gives the
 * time origin (see flush_row).
 */
static int
tsv_trace_row(struct kt_writer *w, const struct kt_meta *m, size_t n,
    int which)
{
	struct kt_buf *b = which ? &w->line : &w->row;
	size_t i;
	int pass, first = 1;

	b->n = 0;
	kt_buf_adds(b, which ? "trace:1\ttrace\t\t\t\t\t\t\t\t" :
	    "trace:0\ttrace\t\t\t\t\t\t\t\t");
	kt_buf_adds(b, (w->flags & KT_WRITE_RANK) ? "\t{" : "{");
	for (pass = which; pass < 2; pass++) {
		if (pass == 1) {
			kt_buf_adds(b, first ? "\"traceEvents\":[]" :
			    ",\"traceEvents\":[]");
			first = 0;
		}
		for (i = 0; i < n; i++) {
			if (m[i].after != pass)
				continue;
			if (pass == 1)
				w->tsv_after = 1;
			if (!first)
				kt_buf_addc(b, ',');
			first = 0;
			kt_buf_add(b, m[i].key, m[i].keylen);
			kt_buf_addc(b, ':');
			if (kt_json_minify(m[i].val, m[i].vallen, b) == -1)
				return -1;
		}
	}
	if (which == 0 && w->rank >= 0) {
		char num[32];

		kt_buf_adds(b, first ? "\"" KT_KEY_RANK "\":" :
		    ",\"" KT_KEY_RANK "\":");
		kt_buf_add(b, num, kt_int_format(w->rank, num));
	}
	if (which == 0) {
		w->pending = 1;
		return 0;
	}
	if (kt_buf_adds(b, "}\n") == -1)
		return -1;
	return kt_out_write(w->out, b->p, b->n);
}

void
kt_writer_rank(struct kt_writer *w, int64_t rank)
{
	w->rank = rank;
}

int64_t
kt_reader_rank_to_keep(const struct kt_reader *rd)
{
	const char *how;
	int64_t rank = kt_reader_rank_how(rd, &how);

	if (rank < 0 || strcmp(how, "distributedInfo.rank") == 0 ||
	    strcmp(how, KT_KEY_RANK) == 0 ||
	    kt_reader_meta_find(rd, KT_KEY_RANKS) != NULL)
		return -1;
	return rank;
}

void
kt_writer_origin(struct kt_writer *w, int64_t ns)
{
	w->origin = ns;
	w->origin_set = 1;
}

static int tsv_event(struct kt_writer *, const struct kt_event *);
static int tsv_row(struct kt_writer *, const struct kt_event *,
    struct kt_buf *, size_t *);

/*
 * Close and write the first trace row, then the events that waited for
 * it.  TSV times count from an origin, by default the first time of an
 * event that is not metadata, so that they stay small enough for awk's
 * doubles; the row records it as ktOriginNs.
 */
static int
flush_row(struct kt_writer *w)
{
	size_t at = 0;
	char num[32];

	w->pending = 0;
	if (w->origin_set) {
		kt_buf_adds(&w->row, ",\"" KT_KEY_ORIGIN "\":");
		kt_buf_add(&w->row, num, kt_int_format(w->origin, num));
	}
	if (kt_buf_adds(&w->row, "}\n") == -1 ||
	    kt_out_write(w->out, w->row.p, w->row.n) == -1)
		return -1;
	/* Each waited as its row, but for its rel_ns (see kt_writer_event). */
	while (at < w->held.n) {
		int64_t ts;
		size_t len, tsat;
		int has;

		memcpy(&ts, w->held.p + at, sizeof(ts));
		memcpy(&has, w->held.p + at + sizeof(ts), sizeof(has));
		memcpy(&tsat, w->held.p + at + sizeof(ts) + sizeof(has),
		    sizeof(tsat));
		memcpy(&len, w->held.p + at + sizeof(ts) + sizeof(has) +
		    sizeof(tsat), sizeof(len));
		at += sizeof(ts) + sizeof(has) + sizeof(tsat) + sizeof(len);
		if (kt_out_write(w->out, w->held.p + at, tsat) == -1 ||
		    (has && kt_out_write(w->out, num, kt_int_format(ts -
		    w->origin, num)) == -1) ||
		    kt_out_write(w->out, w->held.p + at + tsat, len - tsat) ==
		    -1)
			return -1;
		at += len;
	}
	kt_buf_free(&w->held);
	return 0;
}

int
kt_writer_begin(struct kt_writer *w, const struct kt_meta *m, size_t n,
    const uint64_t *srcindex, size_t nidx)
{
	struct kt_rows rows;

	rows.r32 = NULL;
	rows.r64 = srcindex;
	rows.n = nidx;
	return kt_writer_begin_rows(w, m, n, srcindex != NULL ? &rows : NULL);
}

int
kt_writer_begin_rows(struct kt_writer *w, const struct kt_meta *m, size_t n,
    const struct kt_rows *srcindex)
{
	struct kt_buf *b = &w->line;
	size_t i;

	if (w->flags & KT_WRITE_TSV) {
		static const char hdr[] = "id\tkind\tph\trel_ns\tdur_ns\tpid\t"
		    "tid\tcat\tname\tjson\n";
		static const char rhdr[] = "id\tkind\tph\trel_ns\tdur_ns\tpid\t"
		    "tid\tcat\tname\trank\tjson\n";

		if ((w->flags & KT_WRITE_RANK) ?
		    kt_out_write(w->out, rhdr, sizeof(rhdr) - 1) == -1 :
		    kt_out_write(w->out, hdr, sizeof(hdr) - 1) == -1)
			return -1;
		return tsv_trace_row(w, m, n, 0);
	}
	b->n = 0;
	kt_buf_adds(b, "{");
	for (i = 0; i < n; i++) {
		if (m[i].after)
			continue;
		kt_buf_adds(b, "\n  ");
		kt_buf_add(b, m[i].key, m[i].keylen);
		kt_buf_adds(b, ": ");
		kt_buf_add(b, m[i].val, m[i].vallen);
		kt_buf_addc(b, ',');
		if (b->n > OUTBUF) {
			if (kt_out_write(w->out, b->p, b->n) == -1)
				return -1;
			b->n = 0;
		}
	}
	if (w->rank >= 0) {
		char num[32];

		kt_buf_adds(b, "\n  \"" KT_KEY_RANK "\": ");
		kt_buf_add(b, num, kt_int_format(w->rank, num));
		kt_buf_addc(b, ',');
	}
	if (srcindex != NULL) {
		char num[24];

		w->rows_given = 1;
		kt_buf_adds(b, "\n  \"" KT_KEY_SOURCE_INDEX "\": [");
		for (i = 0; i < srcindex->n; i++) {
			size_t k = kt_int_format((int64_t)kt_rows_at(srcindex,
			    i), num);

			if (i > 0)
				kt_buf_addc(b, ',');
			kt_buf_add(b, num, k);
			if (b->n > OUTBUF) {
				if (kt_out_write(w->out, b->p, b->n) == -1)
					return -1;
				b->n = 0;
			}
		}
		kt_buf_adds(b, "],");
	}
	if (kt_buf_adds(b, "\n  \"traceEvents\": [") == -1)
		return -1;
	return kt_out_write(w->out, b->p, b->n);
}

int
kt_writer_raw(struct kt_writer *w, const char *raw, size_t len,
    uint64_t index)
{
	struct kt_event ev;

	if (!(w->flags & KT_WRITE_TSV)) {
		ev.raw = raw;
		ev.len = len;
		ev.index = index;
		ev.flags = 0;
		ev.known = 0;
		return kt_writer_event(w, &ev);
	}
	/* The columns need the fields. */
	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(raw, len, &ev, NULL) == -1)
		return -1;
	ev.index = index;
	return kt_writer_event(w, &ev);
}

/*
 * Before n events given joined (JSON without row numbers only): count
 * them and write the separator before the first.  0 or -1.
 */
static int
joined_start(struct kt_writer *w, uint64_t n)
{
	int first;

	if ((w->flags & (KT_WRITE_TSV | KT_WRITE_ROWS)) || n == 0)
		return -1;
	first = w->nev == 0;
	w->nev += n;
	return kt_out_write(w->out, first ? "\n  " : KT_WRITE_SEP, first ? 3 :
	    sizeof(KT_WRITE_SEP) - 1);
}

int
kt_writer_joined(struct kt_writer *w, const char *p, size_t len, uint64_t n)
{
	if (joined_start(w, n) == -1)
		return -1;
	return kt_out_write(w->out, p, len);
}

int64_t
kt_writer_joined_fd(struct kt_writer *w, int fd, uint64_t off, uint64_t len,
    uint64_t n)
{
	if (joined_start(w, n) == -1)
		return -1;
	return kt_out_from_fd(w->out, fd, off, len);
}

int
kt_writer_event(struct kt_writer *w, const struct kt_event *ev)
{
	if ((w->flags & KT_WRITE_TSV) && (ev->known & KT_FCOLUMNS) !=
	    KT_FCOLUMNS) {
		/* A view without all the fields: the columns need them. */
		struct kt_event full;

		memset(&full, 0, sizeof(full));
		if (kt_event_scan(ev->raw, ev->len, &full, NULL) == -1)
			return -1;
		full.index = ev->index;
		full.ts = ev->ts;
		full.dur = ev->dur;
		full.flags = (full.flags & ~(unsigned)(KT_EV_TS | KT_EV_DUR)) |
		    (ev->flags & (KT_EV_TS | KT_EV_DUR));
		return kt_writer_event(w, &full);
	}
	if (!(w->flags & KT_WRITE_TSV)) {
		int first = w->nev++ == 0;

		if ((w->flags & KT_WRITE_ROWS) && !w->rows_given &&
		    rows_note(w, ev->index) == -1)
			return -1;
		if (first)
			return out_write_sep(w->out, "\n  ", 3, ev->raw,
			    ev->len);
		return out_write_sep(w->out, KT_WRITE_SEP,
		    sizeof(KT_WRITE_SEP) - 1, ev->raw, ev->len);
	}
	w->nev++;
	if (w->pending) {
		if (!w->origin_set && ev->ph != 'M' &&
		    (ev->flags & KT_EV_TS))
			kt_writer_origin(w, ev->ts);
		if (!w->origin_set) {
			/*
			 * Keep its row until the origin is known, all but
			 * rel_ns: its ts, and where that column goes.
			 */
			size_t tsat, len;
			int has = (ev->flags & KT_EV_TS) != 0;

			if (tsv_row(w, ev, &w->line, &tsat) == -1)
				return -1;
			len = w->line.n;
			if (kt_buf_add(&w->held, &ev->ts, sizeof(ev->ts)) ==
			    -1 || kt_buf_add(&w->held, &has, sizeof(has)) ==
			    -1 || kt_buf_add(&w->held, &tsat,
			    sizeof(tsat)) == -1 || kt_buf_add(&w->held, &len,
			    sizeof(len)) == -1 || kt_buf_add(&w->held,
			    w->line.p, len) == -1)
				return -1;
			return 0;
		}
		if (flush_row(w) == -1)
			return -1;
	}
	return tsv_event(w, ev);
}

/*
 * The most bytes ev's TSV line can take in tsv_put: the kind twice, three
 * numbers of up to 21 bytes (each with its NUL), the columns and the
 * event as they are (minifying only drops bytes), ten tabs and the
 * newline, sixteen bytes of room for each of seven minified texts.
 */
static size_t
row_bound(const struct kt_event *ev)
{
	static const enum kt_field cols[] = { KT_F_PH, KT_F_PID, KT_F_TID,
	    KT_F_CAT, KT_F_NAME, KT_F_RANK };
	size_t n = 2 * strlen(kt_kind_name(ev->kind)) + 3 * 21 + ev->len +
	    11 + 7 * 16, i;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (ev->f[cols[i]].type != KT_NONE)
			n += ev->f[cols[i]].len;
	return n;
}

/* A column at o: a string field's contents, or the raw value; a tab. */
static char *
col_put(char *o, const struct kt_event *ev, enum kt_field f)
{
	const struct kt_val *v = &ev->f[f];
	const char *p = ev->raw + v->off;

	switch (v->type) {
	case KT_NONE:
		break;
	case KT_STRING:
		memcpy(o, p + 1, v->len - 2);
		o += v->len - 2;
		break;
	case KT_NUMBER:
		memcpy(o, p, v->len);
		o += v->len;
		break;
	default:
		o = minify_at(p, v->len, o);
		break;
	}
	*o++ = '\t';
	return o;
}

/*
 * Render ev's TSV line at o, which has row_bound(ev) bytes of room, and
 * return its end.  With tsat NULL the line is whole (rel_ns from the
 * origin); else rel_ns is left out, for the caller to put at *tsat (it
 * depends on an origin not known yet).
 */
static char *
tsv_put(const struct kt_writer *w, const struct kt_event *ev, char *o,
    char **tsat)
{
	const char *kind = kt_kind_name(ev->kind);
	size_t kn = strlen(kind);

	memcpy(o, kind, kn);
	o += kn;
	*o++ = ':';
	o += kt_int_format((int64_t)ev->index, o);
	*o++ = '\t';
	memcpy(o, kind, kn);
	o += kn;
	*o++ = '\t';
	o = col_put(o, ev, KT_F_PH);
	if (tsat != NULL)
		*tsat = o;
	else if (ev->flags & KT_EV_TS)
		o += kt_int_format(ev->ts - w->origin, o);
	*o++ = '\t';
	if (ev->flags & KT_EV_DUR)
		o += kt_int_format(ev->dur, o);
	*o++ = '\t';
	o = col_put(o, ev, KT_F_PID);
	o = col_put(o, ev, KT_F_TID);
	o = col_put(o, ev, KT_F_CAT);
	o = col_put(o, ev, KT_F_NAME);
	if (w->flags & KT_WRITE_RANK)
		o = col_put(o, ev, KT_F_RANK);
	o = minify_at(ev->raw, ev->len, o);
	*o++ = '\n';
	return o;
}

/*
 * Write one TSV event line: rendered straight into the output's buffer
 * where it is plain, open and has room for it, else in w->line.
 */
static int
tsv_event(struct kt_writer *w, const struct kt_event *ev)
{
	struct kt_out *o = w->out;
	size_t need = row_bound(ev);
	char *e;

	if (o->fd >= 0 && !o->err && need <= OUTBUF) {
		if (OUTBUF - o->n < need && out_flush(o, 0) == -1)
			return -1;
		e = tsv_put(w, ev, o->buf + o->n, NULL);
		o->n = (size_t)(e - o->buf);
		return 0;
	}
	w->line.n = 0;
	if (kt_buf_reserve(&w->line, need) == -1)
		return -1;
	e = tsv_put(w, ev, w->line.p, NULL);
	return kt_out_write(o, w->line.p, (size_t)(e - w->line.p));
}

/*
 * Render ev's TSV line into b but for its rel_ns, which the caller puts
 * at *tsat (it depends on the origin).  0 or -1.
 */
static int
tsv_row(struct kt_writer *w, const struct kt_event *ev, struct kt_buf *b,
    size_t *tsat)
{
	char *at, *e;

	b->n = 0;
	if (kt_buf_reserve(b, row_bound(ev)) == -1)
		return -1;
	e = tsv_put(w, ev, b->p, &at);
	*tsat = (size_t)(at - b->p);
	b->n = (size_t)(e - b->p);
	return 0;
}

int
kt_writer_end(struct kt_writer *w, const struct kt_meta *m, size_t n)
{
	if ((w->flags & KT_WRITE_ROWS) && w->rows_moved)
		return kt_writer_end_index(w, m, n, w->rows, w->nrows);
	return kt_writer_end_index(w, m, n, NULL, 0);
}

int
kt_writer_end_index(struct kt_writer *w, const struct kt_meta *m, size_t n,
    const uint64_t *idx, size_t nidx)
{
	struct kt_buf *b = &w->line;
	size_t i;

	if (w->flags & KT_WRITE_TSV) {
		char num[32];

		if (w->pending && flush_row(w) == -1)
			return -1;
		for (i = 0; i < n; i++)
			if (m[i].after && !w->tsv_after) {
				if (tsv_trace_row(w, m, n, 1) == -1)
					return -1;
				break;
			}
		/* The end row: its absence tells a reader the stream was cut. */
		b->n = 0;
		kt_buf_adds(b, "end:");
		kt_buf_add(b, num, kt_int_format((int64_t)w->nev, num));
		if (kt_buf_adds(b, (w->flags & KT_WRITE_RANK) ?
		    "\tend\t\t\t\t\t\t\t\t\t{}\n" :
		    "\tend\t\t\t\t\t\t\t\t{}\n") == -1)
			return -1;
		return kt_out_write(w->out, b->p, b->n);
	}
	b->n = 0;
	kt_buf_adds(b, w->nev ? "\n  ]" : "]");
	for (i = 0; i < n; i++) {
		if (!m[i].after)
			continue;
		kt_buf_adds(b, ",\n  ");
		kt_buf_add(b, m[i].key, m[i].keylen);
		kt_buf_adds(b, ": ");
		kt_buf_add(b, m[i].val, m[i].vallen);
	}
	if (idx != NULL) {
		char num[24];

		kt_buf_adds(b, ",\n  \"" KT_KEY_SOURCE_INDEX "\": [");
		for (i = 0; i < nidx; i++) {
			if (i > 0)
				kt_buf_addc(b, ',');
			kt_buf_add(b, num, kt_int_format((int64_t)idx[i], num));
			if (b->n > OUTBUF) {
				if (kt_out_write(w->out, b->p, b->n) == -1)
					return -1;
				b->n = 0;
			}
		}
		kt_buf_addc(b, ']');
	}
	if (kt_buf_adds(b, "\n}\n") == -1)
		return -1;
	return kt_out_write(w->out, b->p, b->n);
}
