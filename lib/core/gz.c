/*
 * gz.c: gzip input decompressed with ISA-L's igzip (libisal), several
 * times faster than zlib, which libarchive uses.  Only a plain gzip
 * stream comes here (read.c gives archives, .tar.gz included, and the
 * other formats to libarchive): one member or several one after another,
 * each checked against its CRC-32 and length, trailing zero bytes
 * allowed.  The bytes read from the input are kept while the caller
 * decides (kt_gz_kept), so that it can hand them to libarchive after all.
 * Built without ISA-L (no KT_HAVE_ISAL), kt_gz_new returns NULL and
 * read.c uses libarchive for gzip too.
 *
 * Once the caller has decided (kt_gz_start), a decoder thread of this
 * stream's own inflates ahead into a window of blocks while the caller
 * scans, so decompression and scanning take two cores instead of adding
 * up on one.  The caller's kt_gz_read copies out of the window; the bytes
 * it gets, and the error after them, are those of the same stream read
 * without the thread (what an inflate step that failed had written is
 * dropped, there as here).  A split read (ahead.c, through read.c) reads
 * the window by offset from several threads instead (kt_gz_split,
 * kt_gz_pread, kt_gz_release) and then on in order (kt_gz_seek,
 * kt_gz_split_end).  The thread takes no signals, and kt_gz_free stops
 * it, even while it waits for input.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ktint.h"

#ifdef KT_HAVE_ISAL
#include <isa-l/igzip_lib.h>

#define GZ_IN	(1 << 18)	/* compressed bytes asked for at once */
#define GZ_BLK	(1 << 18)	/* the decoder thread's blocks: bytes */
#define GZ_AHEAD (1 << 20)	/* inflated past the reader's place, at most */
#define GZ_SPARE 8		/* free blocks kept for reuse */

/* A block of the window: bytes [off, off + len) of the stream. */
struct gzblk {
	unsigned char	*p;
	uint64_t	 off;
	size_t		 len;
	int		 own;		/* a block of GZ_BLK, reused */
};

/*
 * The decoder thread (kt_gz_start) and its window: the stream's bytes
 * from low on, in blocks in stream order, the last one being filled
 * while filling.  The thread inflates while it has less than ahead bytes
 * past low, or while a reader waits for more (want).  kt_gz_read reads
 * at rpos and drops what it read (low follows rpos), unless a split
 * (kt_gz_split) reads the window by offset: then kt_gz_release moves low.
 * A reader copies out of a block after the lock: a block is dropped only
 * once low is past it, and no reader reads below low.
 */
struct gzq {
	pthread_t	 th;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;		/* bytes inflated, low moved, or stop */
	struct gzblk	*blk;
	size_t		 nblk, capblk;
	unsigned char	*spare[GZ_SPARE];
	size_t		 nspare;
	int		 filling;	/* blk[nblk - 1] is being filled */
	uint64_t	 top;		/* the end of the bytes inflated */
	uint64_t	 low;		/* no byte before it is read again */
	uint64_t	 want;		/* a reader waits for bytes up to it */
	uint64_t	 ahead;
	uint64_t	 rpos;		/* kt_gz_read's place */
	int		 split;
	int		 end;		/* the thread is done: 1 at the end
					   of the stream, -1 on an error */
	const char	*msg;		/* that error's, or NULL: errno */
	int		 err;
	int		 stop;		/* kt_gz_free: end now */
};

struct kt_gz {
	struct inflate_state st;
	ssize_t		(*rd)(void *, void *, size_t);
	void		*arg;
	unsigned char	*in;
	int		 in_eof;	/* the input has no more bytes */
	int		 between;	/* a member ended, no other begun */
	int		 done;		/* the stream ended */
	uint64_t	 out;		/* bytes inflated so far */
	int		 keeping;
	unsigned char	*keep;		/* every byte read, while keeping */
	size_t		 nkeep, capkeep;
	struct gzq	*q;		/* the decoder thread, or NULL */
};

struct kt_gz *
kt_gz_new(ssize_t (*rd)(void *, void *, size_t), void *arg)
{
	struct kt_gz *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	if ((g->in = malloc(GZ_IN)) == NULL) {
		free(g);
		return NULL;
	}
	g->rd = rd;
	g->arg = arg;
	g->keeping = 1;
	isal_inflate_init(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	return g;
}

/*
 * Stop the decoder thread (it may wait for input: cancel it, unless
 * every byte it reads must reach the input's reader) and free.
 */
static void
gzq_free(struct gzq *q, int cancel)
{
	size_t i;

	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	if (cancel)
		pthread_cancel(q->th);
	pthread_join(q->th, NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	for (i = 0; i < q->nblk; i++)
		free(q->blk[i].p);
	for (i = 0; i < q->nspare; i++)
		free(q->spare[i]);
	free(q->blk);
	free(q);
}

static void
gz_free(struct kt_gz *g, int cancel)
{
	if (g == NULL)
		return;
	if (g->q != NULL)
		gzq_free(g->q, cancel);
	free(g->in);
	free(g->keep);
	free(g);
}

void
kt_gz_free(struct kt_gz *g)
{
	gz_free(g, 1);
}

/*
 * The same, but the thread is not cancelled: it ends after the read it
 * waits on.  A read cancelled just as it returns can lose the bytes it
 * read (glibc's cancellation race, BZ #12683; seen here), and a source
 * that copies every byte it reads (kt_source_drain) must lose none.
 */
void
kt_gz_finish(struct kt_gz *g)
{
	gz_free(g, 0);
}

const unsigned char *
kt_gz_kept(const struct kt_gz *g, size_t *n)
{
	*n = g->nkeep;
	return g->keep;
}

void
kt_gz_keep_stop(struct kt_gz *g)
{
	g->keeping = 0;
	free(g->keep);
	g->keep = NULL;
	g->nkeep = g->capkeep = 0;
}

/* More compressed input when none is left: 0, or -1 (errno). */
static int
fill(struct kt_gz *g)
{
	ssize_t r;

	if (g->st.avail_in > 0 || g->in_eof)
		return 0;
	/* The decoder thread may be cancelled while it waits for input. */
	if (g->q != NULL)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	r = g->rd(g->arg, g->in, GZ_IN);
	if (g->q != NULL) {
		int e = errno;

		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		errno = e;
	}
	if (r < 0)
		return -1;
	if (r == 0) {
		g->in_eof = 1;
		return 0;
	}
	if (g->keeping) {
		if (g->nkeep + (size_t)r > g->capkeep) {
			size_t nc = (g->nkeep + (size_t)r) * 2;
			unsigned char *nk = realloc(g->keep, nc);

			if (nk == NULL) {
				errno = ENOMEM;
				return -1;
			}
			g->keep = nk;
			g->capkeep = nc;
		}
		memcpy(g->keep + g->nkeep, g->in, (size_t)r);
		g->nkeep += (size_t)r;
	}
	g->st.next_in = g->in;
	g->st.avail_in = (uint32_t)r;
	return 0;
}

static const char *
why(int rc)
{
	switch (rc) {
	case ISAL_INVALID_WRAPPER:
		return "not gzip data (bad header)";
	case ISAL_UNSUPPORTED_METHOD:
		return "gzip data not compressed by deflate";
	case ISAL_INCORRECT_CHECKSUM:
		return "gzip data corrupt (CRC or length mismatch)";
	default:
		return "gzip data corrupt (invalid deflate stream)";
	}
}

/*
 * Between members: the rest may be another member, or zero bytes
 * (padding); anything else is an error.  0: go on (a member begins, or
 * the stream is done), -1 with *msg.
 */
static int
next_member(struct kt_gz *g, const char **msg)
{
	for (;;) {
		if (fill(g) == -1) {
			*msg = NULL;
			return -1;
		}
		if (g->st.avail_in == 0) {
			g->done = 1;
			return 0;
		}
		if (g->st.next_in[0] == 0x1f)
			break;
		while (g->st.avail_in > 0 && g->st.next_in[0] == 0) {
			g->st.next_in++;
			g->st.avail_in--;
		}
		if (g->st.avail_in > 0) {
			*msg = "trailing garbage after the gzip data";
			return -1;
		}
	}
	{
		uint8_t *next = g->st.next_in;
		uint32_t avail = g->st.avail_in;

		isal_inflate_reset(&g->st);
		g->st.crc_flag = ISAL_GZIP;
		g->st.next_in = next;
		g->st.avail_in = avail;
	}
	g->between = 0;
	return 0;
}

/* The stream's next bytes, inflated here (kt_gz_read's contract). */
static ssize_t
inflate_some(struct kt_gz *g, void *buf, size_t n, const char **msg)
{
	size_t want = n > UINT32_MAX ? UINT32_MAX : n;
	int rc;

	*msg = NULL;
	g->st.next_out = buf;
	g->st.avail_out = (uint32_t)want;
	while (g->st.avail_out == want && !g->done) {
		if (g->between && next_member(g, msg) == -1)
			return -1;
		if (g->done)
			break;
		if (fill(g) == -1)
			return -1;
		rc = isal_inflate(&g->st);
		if (rc < 0) {
			*msg = why(rc);
			return -1;
		}
		if (g->st.block_state == ISAL_BLOCK_FINISH) {
			g->between = 1;
			continue;
		}
		if (g->st.avail_in == 0 && g->in_eof &&
		    g->st.avail_out == want) {
			*msg = "truncated gzip input";
			return -1;
		}
	}
	g->out += want - g->st.avail_out;
	return (ssize_t)(want - g->st.avail_out);
}

/* Drop the blocks wholly before q->low (q->mu held). */
static void
drop(struct gzq *q)
{
	size_t k = 0;

	while (k < q->nblk && !(q->filling && k == q->nblk - 1) &&
	    q->blk[k].off + q->blk[k].len <= q->low) {
		if (q->blk[k].own && q->nspare < GZ_SPARE)
			q->spare[q->nspare++] = q->blk[k].p;
		else
			free(q->blk[k].p);
		k++;
	}
	if (k > 0) {
		memmove(q->blk, q->blk + k, (q->nblk - k) * sizeof(*q->blk));
		q->nblk -= k;
	}
}

/* Room for one more block in q->blk (q->mu held): 0, or -1. */
static int
blk_room(struct gzq *q)
{
	struct gzblk *b;
	size_t c;

	if (q->nblk < q->capblk)
		return 0;
	c = q->capblk ? q->capblk * 2 : 16;
	if ((b = realloc(q->blk, c * sizeof(*b))) == NULL)
		return -1;
	q->blk = b;
	q->capblk = c;
	return 0;
}

/*
 * The decoder thread: take a block, add it to the window, fill it, and
 * again, until the stream ends or fails (the bytes before the failure
 * are handed over first).  The bytes of each inflate step are shown at
 * once, so that a slow input is passed on as it comes.
 */
static void *
decoder(void *arg)
{
	struct kt_gz *g = arg;
	struct gzq *q = g->q;
	const char *msg = NULL;
	unsigned char *b;
	ssize_t r = 1;
	size_t n;
	int e, ok;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		pthread_mutex_lock(&q->mu);
		while (!q->stop && q->top >= q->low &&
		    q->top - q->low >= q->ahead && q->want <= q->top)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop) {
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		b = q->nspare > 0 ? q->spare[--q->nspare] : NULL;
		pthread_mutex_unlock(&q->mu);
		if (b == NULL)
			b = malloc(GZ_BLK);
		pthread_mutex_lock(&q->mu);
		if ((ok = b != NULL && blk_room(q) == 0)) {
			q->blk[q->nblk].p = b;
			q->blk[q->nblk].off = q->top;
			q->blk[q->nblk].len = 0;
			q->blk[q->nblk].own = 1;
			q->nblk++;
			q->filling = 1;
		}
		pthread_mutex_unlock(&q->mu);
		if (!ok) {
			free(b);
			r = -1;
			errno = ENOMEM;
			msg = NULL;
			n = 0;
		} else
			for (n = 0; n < GZ_BLK; ) {
				if ((r = inflate_some(g, b + n, GZ_BLK - n,
				    &msg)) <= 0)
					break;
				n += (size_t)r;
				pthread_mutex_lock(&q->mu);
				q->blk[q->nblk - 1].len = n;
				q->top += (uint64_t)r;
				pthread_cond_broadcast(&q->cv);
				pthread_mutex_unlock(&q->mu);
			}
		e = errno;
		pthread_mutex_lock(&q->mu);
		if (q->filling) {
			q->filling = 0;
			if (n == 0) {
				/* Nothing came: the block goes back. */
				q->nblk--;
				if (q->nspare < GZ_SPARE)
					q->spare[q->nspare++] = b;
				else
					free(b);
			}
		}
		if (r <= 0) {
			q->end = r == 0 ? 1 : -1;
			q->msg = msg;
			q->err = e;
		}
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		if (r <= 0)
			return NULL;
	}
}

int
kt_gz_start(struct kt_gz *g)
{
	struct gzq *q;

	if (g->q != NULL || g->keeping || g->done)
		return g->q != NULL ? 0 : -1;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return -1;
	if (pthread_mutex_init(&q->mu, NULL) != 0) {
		free(q);
		return -1;
	}
	if (pthread_cond_init(&q->cv, NULL) != 0) {
		pthread_mutex_destroy(&q->mu);
		free(q);
		return -1;
	}
	q->top = q->low = q->want = q->rpos = g->out;
	q->ahead = GZ_AHEAD;
	/* Signals go to the caller's threads, never to the decoder. */
	g->q = q;
	if (kt_thread_start(&q->th, decoder, g, "kt-gz") == 0)
		return 0;
	g->q = NULL;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
	return -1;
}

/*
 * Copy up to n of the stream's bytes at off (not before q->low) into buf,
 * as many as one block holds, waiting for the thread when it has none:
 * how many; 0 at the end; -1 on its error or when off was dropped.
 */
static ssize_t
win_get(struct gzq *q, void *buf, size_t n, uint64_t off, const char **msg)
{
	const unsigned char *p = NULL;
	size_t k, m = 0;

	*msg = NULL;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		for (k = 0; k < q->nblk; k++)
			if (off >= q->blk[k].off &&
			    off < q->blk[k].off + q->blk[k].len) {
				p = q->blk[k].p + (off - q->blk[k].off);
				m = q->blk[k].off + q->blk[k].len - off;
				break;
			}
		if (p != NULL)
			break;
		if (off < q->low || (q->nblk > 0 && off < q->blk[0].off)) {
			pthread_mutex_unlock(&q->mu);
			*msg = "gzip window: bytes read again after they were "
			    "dropped";
			return -1;
		}
		if (off >= q->top && q->end != 0) {
			int end = q->end, e = q->err;

			*msg = q->msg;
			pthread_mutex_unlock(&q->mu);
			if (end > 0) {
				*msg = NULL;
				return 0;
			}
			errno = e;
			return -1;
		}
		if (q->want < off + n) {
			q->want = off + n;
			pthread_cond_broadcast(&q->cv);
		}
		pthread_cond_wait(&q->cv, &q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	if (m > n)
		m = n;
	memcpy(buf, p, m);
	return (ssize_t)m;
}

ssize_t
kt_gz_read(struct kt_gz *g, void *buf, size_t n, const char **msg)
{
	struct gzq *q = g->q;
	ssize_t r;

	if (q == NULL)
		return inflate_some(g, buf, n, msg);
	if ((r = win_get(q, buf, n, q->rpos, msg)) > 0) {
		pthread_mutex_lock(&q->mu);
		q->rpos += (uint64_t)r;
		if (!q->split && q->rpos > q->low) {
			q->low = q->rpos;
			drop(q);
			pthread_cond_broadcast(&q->cv);
		}
		pthread_mutex_unlock(&q->mu);
	}
	return r;
}

int
kt_gz_threaded(const struct kt_gz *g)
{
	return g->q != NULL;
}

ssize_t
kt_gz_pread(struct kt_gz *g, void *buf, size_t n, uint64_t off,
    const char **msg)
{
	size_t got = 0;
	ssize_t r;

	*msg = NULL;
	if (g->q == NULL) {
		*msg = "gzip window: no decoder thread";
		return -1;
	}
	while (got < n) {
		if ((r = win_get(g->q, (char *)buf + got, n - got, off + got,
		    msg)) <= 0) {
			if (r == -1 && got == 0)
				return -1;
			break;
		}
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int
kt_gz_split(struct kt_gz *g, uint64_t at, unsigned char *pre, size_t npre,
    uint64_t rpos, uint64_t ahead)
{
	struct gzq *q = g->q;

	if (q == NULL) {
		free(pre);
		return -1;
	}
	pthread_mutex_lock(&q->mu);
	if (npre > 0) {
		if (blk_room(q) == -1) {
			pthread_mutex_unlock(&q->mu);
			free(pre);
			return -1;
		}
		memmove(q->blk + 1, q->blk, q->nblk * sizeof(*q->blk));
		q->blk[0].p = pre;
		q->blk[0].off = at;
		q->blk[0].len = npre;
		q->blk[0].own = 0;
		q->nblk++;
	} else
		free(pre);
	q->low = at;
	q->rpos = rpos;
	q->split = 1;
	q->ahead = ahead;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

void
kt_gz_release(struct kt_gz *g, uint64_t off)
{
	struct gzq *q = g->q;

	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	if (off > q->low) {
		q->low = off;
		drop(q);
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
}

void
kt_gz_seek(struct kt_gz *g, uint64_t off)
{
	struct gzq *q = g->q;

	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	q->rpos = off;
	pthread_mutex_unlock(&q->mu);
}

void
kt_gz_split_end(struct kt_gz *g)
{
	struct gzq *q = g->q;

	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	q->split = 0;
	q->ahead = GZ_AHEAD;
	if (q->rpos > q->low) {
		q->low = q->rpos;
		drop(q);
	}
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

int
kt_gz_lines(ssize_t (*rd)(void *, void *, size_t), void *arg, uint64_t upto,
    long *lines, long *col)
{
	unsigned char buf[1 << 16];
	struct kt_gz *g;
	const char *msg;
	uint64_t at = 0;
	size_t after;
	ssize_t r;

	*lines = 0;
	*col = 0;
	if ((g = kt_gz_new(rd, arg)) == NULL)
		return -1;
	kt_gz_keep_stop(g);
	while (at < upto) {
		size_t want = upto - at < sizeof(buf) ? (size_t)(upto - at) :
		    sizeof(buf);

		if ((r = inflate_some(g, buf, want, &msg)) <= 0)
			break;
		*lines += (long)kt_scan_lines((const char *)buf, (size_t)r,
		    &after);
		*col = after != (size_t)-1 ? (long)((size_t)r - after) :
		    *col + (long)r;
		at += (uint64_t)r;
	}
	gz_free(g, 0);
	return at == upto ? 0 : -1;
}

int
kt_gz_available(void)
{
	return 1;
}

#else /* !KT_HAVE_ISAL */

struct kt_gz *
kt_gz_new(ssize_t (*rd)(void *, void *, size_t), void *arg)
{
	(void)rd;
	(void)arg;
	return NULL;
}

void
kt_gz_free(struct kt_gz *g)
{
	(void)g;
}

void
kt_gz_finish(struct kt_gz *g)
{
	(void)g;
}

const unsigned char *
kt_gz_kept(const struct kt_gz *g, size_t *n)
{
	(void)g;
	*n = 0;
	return NULL;
}

void
kt_gz_keep_stop(struct kt_gz *g)
{
	(void)g;
}

int
kt_gz_start(struct kt_gz *g)
{
	(void)g;
	return -1;
}

ssize_t
kt_gz_read(struct kt_gz *g, void *buf, size_t n, const char **msg)
{
	(void)g;
	(void)buf;
	(void)n;
	*msg = "no gzip decompressor";
	return -1;
}

int
kt_gz_threaded(const struct kt_gz *g)
{
	(void)g;
	return 0;
}

ssize_t
kt_gz_pread(struct kt_gz *g, void *buf, size_t n, uint64_t off,
    const char **msg)
{
	(void)g;
	(void)buf;
	(void)n;
	(void)off;
	*msg = "no gzip decompressor";
	return -1;
}

int
kt_gz_split(struct kt_gz *g, uint64_t at, unsigned char *pre, size_t npre,
    uint64_t rpos, uint64_t ahead)
{
	(void)g;
	(void)at;
	free(pre);
	(void)npre;
	(void)rpos;
	(void)ahead;
	return -1;
}

void
kt_gz_release(struct kt_gz *g, uint64_t off)
{
	(void)g;
	(void)off;
}

void
kt_gz_seek(struct kt_gz *g, uint64_t off)
{
	(void)g;
	(void)off;
}

void
kt_gz_split_end(struct kt_gz *g)
{
	(void)g;
}

int
kt_gz_lines(ssize_t (*rd)(void *, void *, size_t), void *arg, uint64_t upto,
    long *lines, long *col)
{
	(void)rd;
	(void)arg;
	(void)upto;
	*lines = 0;
	*col = 0;
	return -1;
}

int
kt_gz_available(void)
{
	return 0;
}

#endif
