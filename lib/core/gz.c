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
 * stream's own inflates ahead into a ring of GZ_NBUF buffers while the
 * caller scans, so decompression and scanning take two cores instead
 * of adding up on one.  The caller's kt_gz_read copies out of the ring;
 * the bytes it gets, and the error after them, are those of the same
 * stream read without the thread (what an inflate step that failed had
 * written is dropped, there as here).  The thread takes no signals, and
 * kt_gz_free stops it, even while it waits for input.
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
#define GZ_NBUF	2		/* the decoder thread's ring: buffers */
#define GZ_BUF	(1 << 19)	/* of this many decompressed bytes */

/* The decoder thread and its ring (kt_gz_start). */
struct gzq {
	pthread_t	 th;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;		/* a buffer filled or freed, or stop */
	unsigned char	*buf[GZ_NBUF];
	size_t		 len[GZ_NBUF];
	uint64_t	 head, tail;	/* filled: buffers head..tail-1; the
					   thread fills buffer tail */
	size_t		 curlen;	/* the bytes of buffer tail so far */
	size_t		 off;		/* the caller's place in buf[head] */
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
	int i;

	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	if (cancel)
		pthread_cancel(q->th);
	pthread_join(q->th, NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	for (i = 0; i < GZ_NBUF; i++)
		free(q->buf[i]);
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
	return (ssize_t)(want - g->st.avail_out);
}

/*
 * The decoder thread: fill a free buffer of the ring, hand it over, and
 * again, until the stream ends or fails (the bytes before the failure
 * are handed over first).  The bytes of each inflate step are shown at
 * once (curlen), so that a slow input is passed on as it comes.
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
	int e;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		pthread_mutex_lock(&q->mu);
		while (!q->stop && q->tail - q->head == GZ_NBUF)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop) {
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		b = q->buf[q->tail % GZ_NBUF];
		pthread_mutex_unlock(&q->mu);
		for (n = 0; n < GZ_BUF; ) {
			if ((r = inflate_some(g, b + n, GZ_BUF - n, &msg)) <= 0)
				break;
			n += (size_t)r;
			if (n < GZ_BUF) {
				pthread_mutex_lock(&q->mu);
				q->curlen = n;
				pthread_cond_broadcast(&q->cv);
				pthread_mutex_unlock(&q->mu);
			}
		}
		e = errno;
		pthread_mutex_lock(&q->mu);
		if (n > 0) {
			q->len[q->tail % GZ_NBUF] = n;
			q->tail++;
		}
		q->curlen = 0;
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
	int i;

	if (g->q != NULL || g->keeping || g->done)
		return g->q != NULL ? 0 : -1;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return -1;
	for (i = 0; i < GZ_NBUF; i++)
		if ((q->buf[i] = malloc(GZ_BUF)) == NULL)
			goto fail;
	if (pthread_mutex_init(&q->mu, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&q->cv, NULL) != 0) {
		pthread_mutex_destroy(&q->mu);
		goto fail;
	}
	/* Signals go to the caller's threads, never to the decoder. */
	g->q = q;
	if (kt_thread_start(&q->th, decoder, g, "kt-gz") == 0)
		return 0;
	g->q = NULL;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
fail:
	for (i = 0; i < GZ_NBUF; i++)
		free(q->buf[i]);
	free(q);
	return -1;
}

ssize_t
kt_gz_read(struct kt_gz *g, void *buf, size_t n, const char **msg)
{
	struct gzq *q = g->q;
	unsigned char *b;
	size_t len, m;

	if (q == NULL)
		return inflate_some(g, buf, n, msg);
	*msg = NULL;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		if (q->head < q->tail) {
			/* A whole buffer, or the rest of one. */
			len = q->len[q->head % GZ_NBUF];
			if (q->off < len)
				break;
			q->head++;
			q->off = 0;
			pthread_cond_broadcast(&q->cv);
			continue;
		}
		if (q->off < q->curlen) {
			/* The buffer the thread is filling, so far. */
			len = q->curlen;
			break;
		}
		if (q->end != 0) {
			pthread_mutex_unlock(&q->mu);
			if (q->end > 0)
				return 0;
			*msg = q->msg;
			errno = q->err;
			return -1;
		}
		pthread_cond_wait(&q->cv, &q->mu);
	}
	b = q->buf[q->head % GZ_NBUF];
	pthread_mutex_unlock(&q->mu);
	m = len - q->off < n ? len - q->off : n;
	memcpy(buf, b + q->off, m);
	q->off += m;
	return (ssize_t)m;
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
kt_gz_available(void)
{
	return 0;
}

#endif
