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
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ktint.h"

#ifdef KT_HAVE_ISAL
#include <isa-l/igzip_lib.h>

#define GZ_IN	(1 << 18)	/* compressed bytes asked for at once */

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

void
kt_gz_free(struct kt_gz *g)
{
	if (g == NULL)
		return;
	free(g->in);
	free(g->keep);
	free(g);
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
	if ((r = g->rd(g->arg, g->in, GZ_IN)) < 0)
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

ssize_t
kt_gz_read(struct kt_gz *g, void *buf, size_t n, const char **msg)
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
