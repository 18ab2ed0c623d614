/*
 * hold.c: an input's bytes for filters that keep a whole trace in memory
 * or write the input again.  When the input is a plain JSON file, an
 * event read from it without a repair is kept as its place in the file
 * only, and its bytes are read again (pread) when they are written:
 * through 64 windows of 256 KB, each moving forward over the file, so
 * that the file's order reads each byte once, and a merge of runs of it
 * (a sort of a Kineto trace, whose threads and devices come one after
 * another) a few times (five on HTA's 87 MB MTIA trace, in 16 MB).  A
 * held trace costs its records, not its text.
 * Every other event is copied by the store.
 * The file's size and modification time are kept and compared by
 * kt_hold_check(), and every event read again must still begin and end
 * as an object.
 *
 * The file is read, never mapped: a mapped file that shrinks while it is
 * read faults (SIGBUS) on the pages it lost, and the core keeps no
 * signal handler.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

#define WINDOW	(256u << 10)	/* bytes read again at a time, at least */
#define NWINDOWS 64		/* windows, the least used one refilled */

struct window {
	char		*p;		/* bytes [from, from + n) of the file */
	size_t		 n, cap;
	uint64_t	 from;
	uint64_t	 used;		/* when last used (the holder's clock) */
};

struct kt_hold {
	int		 fd;		/* the file, or -1 */
	int		 plain;		/* it is plain JSON: events are in it */
	struct stat	 st;		/* it when opened */
	int		 changed;	/* a read again did not fit */
	struct window	 win[NWINDOWS];
	uint64_t	 clock;
	int		 last;		/* the window used last */
	uint64_t	 reads;		/* windows filled (kt_hold_reads) */
	uint64_t	 nwhere;	/* events placed */
	char		*cmp;		/* for the one in 1024 compared */
	size_t		 cmpcap;
	char		 name[512];	/* for messages */
};

/* Is the file's head (n bytes) the start of plain JSON? */
static int
plain_json(const char *head, ssize_t n)
{
	ssize_t i;

	/* Not compressed, archived or TSV. */
	for (i = 0; i < n && (head[i] == ' ' || head[i] == '\t' ||
	    head[i] == '\n' || head[i] == '\r'); i++)
		;
	return n > 0 && i < n && (head[i] == '{' || head[i] == '[' ||
	    (unsigned char)head[i] == 0xef);
}

/* Open the file at path; note whether it is plain JSON. */
static void
hold_open(struct kt_hold *h, const char *path)
{
	char head[64];
	ssize_t n;

	if ((h->fd = open(path, O_RDONLY)) == -1)
		return;
	if (fstat(h->fd, &h->st) == -1 || !S_ISREG(h->st.st_mode)) {
		close(h->fd);
		h->fd = -1;
		return;
	}
	n = pread(h->fd, head, sizeof(head), 0);
	h->plain = plain_json(head, n) && h->st.st_size > 0;
}

struct kt_hold *
kt_hold_new(const char *path, const char *name)
{
	struct kt_hold *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->fd = -1;
	snprintf(h->name, sizeof(h->name), "%s", name ? name : "<stdin>");
	if (path != NULL && strcmp(path, "-") != 0)
		hold_open(h, path);
	return h;
}

/*
 * Read up to n bytes at off into buf, again after EINTR or a short read;
 * the count read (fewer at the end of the file or on an error).
 */
static size_t
pread_full(int fd, char *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		if ((k = pread(fd, buf + got, n - got, (off_t)(off + got))) ==
		    -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return got;
}

/* Are the file's bytes at off ev's?  1, 0, or -1 (no memory). */
static int
same_bytes(struct kt_hold *h, uint64_t off, const struct kt_event *ev)
{
	size_t got;

	if (ev->len > h->cmpcap) {
		free(h->cmp);
		h->cmpcap = 0;
		if ((h->cmp = malloc(ev->len)) == NULL)
			return -1;
		h->cmpcap = ev->len;
	}
	got = pread_full(h->fd, h->cmp, ev->len, off);
	return got == ev->len && memcmp(h->cmp, ev->raw, ev->len) == 0;
}

int
kt_hold_where(struct kt_hold *h, const struct kt_event *ev, uint64_t *off,
    struct kt_error *err)
{
	uint64_t end;
	int same;

	/*
	 * The reader's bytes are the file's, at its offset, unless it
	 * repaired them (only plain JSON is read so).
	 */
	if (h == NULL || !h->plain || (ev->flags & (KT_EV_REPAIRED |
	    KT_EV_PATCHED)) || ev->len == 0 ||
	    (end = ev->end) < ev->len ||
	    end > (uint64_t)h->st.st_size)
		return 0;
	*off = end - ev->len;
	/*
	 * One event in 1024 is compared with the file's bytes, to catch a
	 * reader that counts otherwise, or a file that is not the one read.
	 */
	if ((h->nwhere++ & 1023) == 0) {
		if ((same = same_bytes(h, *off, ev)) == -1) {
			kt_error_set(err, NULL, 0, 0, "out of memory");
			return -1;
		}
		if (!same) {
			h->changed = 1;
			kt_error_set(err, h->name, 0, 0, "the file changed "
			    "while it was read (the event at byte %llu is "
			    "not the file's)", (unsigned long long)*off);
			return -1;
		}
	}
	return 1;
}

/* Read bytes [from, from + n) of the file, and more, into window w. */
static int
fill_window(struct kt_hold *h, struct window *w, uint64_t from, size_t n)
{
	size_t want = n > WINDOW ? n : WINDOW;

	if ((uint64_t)h->st.st_size - from < want)
		want = (size_t)((uint64_t)h->st.st_size - from);
	if (want > w->cap) {
		free(w->p);
		w->n = w->cap = 0;
		if ((w->p = malloc(want)) == NULL)
			return -1;
		w->cap = want;
	}
	w->from = from;
	w->n = pread_full(h->fd, w->p, want, from);
	h->reads++;
	return 0;
}

/* The window that holds [off, off + len), or the least used one. */
static struct window *
window_for(struct kt_hold *h, uint64_t off, size_t len, int *hit)
{
	struct window *w = &h->win[h->last], *lru = &h->win[0];
	int i;

	if (w->n > 0 && off >= w->from && off + len <= w->from + w->n) {
		*hit = 1;
		return w;
	}
	for (i = 0; i < NWINDOWS; i++) {
		w = &h->win[i];
		if (w->n > 0 && off >= w->from && off + len <= w->from + w->n) {
			*hit = 1;
			return w;
		}
		if (w->used < lru->used)
			lru = w;
	}
	*hit = 0;
	return lru;
}

/* Is [off, off + len) in the held file?  Else err is set. */
static int
in_file(const struct kt_hold *h, uint64_t off, size_t len,
    struct kt_error *err)
{
	if (h->fd == -1 || !h->plain || len == 0 ||
	    off > (uint64_t)h->st.st_size ||
	    len > (uint64_t)h->st.st_size - off) {
		kt_error_set(err, h->name, 0, 0, "internal error: no event "
		    "at byte %llu", (unsigned long long)off);
		return 0;
	}
	return 1;
}

/* The file has changed (from then on): err says where it was seen. */
static void
changed_at(struct kt_hold *h, uint64_t off, struct kt_error *err)
{
	h->changed = 1;
	kt_error_set(err, h->name, 0, 0, "the file changed while it was read "
	    "(the event at byte %llu is not there now)",
	    (unsigned long long)off);
}

/*
 * Are the bytes read again at off (p, len) still events, and the file
 * unchanged?  Else it has changed (from then on) and err is set.
 */
static int
still_there(struct kt_hold *h, const char *p, size_t len, uint64_t off,
    struct kt_error *err)
{
	if (h->changed || p[0] != '{' || p[len - 1] != '}') {
		changed_at(h, off, err);
		return 0;
	}
	return 1;
}

const char *
kt_hold_bytes(struct kt_hold *h, uint64_t off, size_t len,
    struct kt_error *err)
{
	struct window *w;
	const char *p;
	int hit;

	if (!in_file(h, off, len, err))
		return NULL;
	w = window_for(h, off, len, &hit);
	if (!hit) {
		if (fill_window(h, w, off, len) == -1) {
			kt_error_set(err, NULL, 0, 0, "out of memory");
			return NULL;
		}
		if (w->n < len)
			h->changed = 1;
	}
	w->used = ++h->clock;
	h->last = (int)(w - h->win);
	p = w->p + (off - w->from);
	return still_there(h, p, len, off, err) ? p : NULL;
}

int
kt_hold_read(struct kt_hold *h, char *buf, uint64_t off, size_t len,
    struct kt_error *err)
{
	if (!in_file(h, off, len, err))
		return -1;
	h->reads++;
	if (pread_full(h->fd, buf, len, off) != len)
		h->changed = 1;
	return still_there(h, buf, len, off, err) ? 0 : -1;
}

int
kt_hold_joined(struct kt_hold *h, struct kt_writer *w, uint64_t off,
    uint64_t len, uint64_t n, struct kt_error *err)
{
	char b[2];
	int64_t k;

	if (!in_file(h, off, len, err))
		return -1;
	h->reads++;
	/* Its ends, read again, are still an event's (as still_there). */
	if (h->changed || pread(h->fd, b, 1, (off_t)off) != 1 ||
	    pread(h->fd, b + 1, 1, (off_t)(off + len - 1)) != 1 ||
	    b[0] != '{' || b[1] != '}') {
		changed_at(h, off, err);
		return -1;
	}
	if ((k = kt_writer_joined_fd(w, h->fd, off, len, n)) == -1)
		return -2;
	if ((uint64_t)k != len) {
		changed_at(h, off, err);
		return -1;
	}
	return 0;
}

int
kt_hold_plain(const struct kt_hold *h)
{
	return h != NULL && h->fd != -1 && h->plain;
}

uint64_t
kt_hold_reads(const struct kt_hold *h)
{
	return h != NULL ? h->reads : 0;
}

int
kt_hold_check(const struct kt_hold *h, struct kt_error *err)
{
	struct stat st;

	if (h == NULL || h->fd == -1)
		return 0;
	if (fstat(h->fd, &st) == -1) {
		kt_error_set(err, h->name, 0, 0, "%s", strerror(errno));
		return -1;
	}
	if (h->changed || st.st_size != h->st.st_size ||
	    st.st_mtim.tv_sec != h->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != h->st.st_mtim.tv_nsec) {
		kt_error_set(err, h->name, 0, 0, "the file changed while it "
		    "was read (%llu bytes, now %llu)",
		    (unsigned long long)h->st.st_size,
		    (unsigned long long)st.st_size);
		return -1;
	}
	return 0;
}

void
kt_hold_free(struct kt_hold *h)
{
	int i;

	if (h == NULL)
		return;
	for (i = 0; i < NWINDOWS; i++)
		free(h->win[i].p);
	free(h->cmp);
	if (h->fd != -1)
		close(h->fd);
	free(h);
}

int
kt_file_copy(const char *path, uint64_t from, uint64_t to,
    struct kt_out *out)
{
	struct stat st;
	int64_t n = 0;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		n = -1;
	else if (to == 0 || to > (uint64_t)st.st_size)
		to = (uint64_t)st.st_size;
	if (n == 0 && from < to)
		n = kt_out_from_fd(out, fd, from, to - from);
	close(fd);
	return n == -1 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/*
 * Places: where each event of a pass is, by position, so that a later
 * step reads again the bytes of the events it keeps instead of the
 * whole input.  An entry is 8 bytes: PL_SEEN, and the event's offset in
 * the held file and its length (PL_LENBITS), or PL_COPY and the number
 * of a copy of its bytes (a repaired event, one of 16 MB or more, one
 * past 256 GB).
 */
#define PL_SEEN		((uint64_t)1 << 63)
#define PL_COPY		((uint64_t)1 << 62)
#define PL_LENBITS	24
#define PL_OFFBITS	38

struct kt_places {
	struct kt_hold	*h;		/* borrowed */
	uint64_t	*v;		/* per position; 0: no event */
	uint64_t	 n, cap;
	struct kt_buf	 copy;		/* the copies' bytes */
	uint64_t	*cpos;		/* copy k: bytes [cpos[k], cpos[k + 1]) */
	uint8_t		*cflags;	/* and its repairs (KT_EV_REPAIRED...) */
	size_t		 ncopies, capcopies;
};

struct kt_places *
kt_places_new(struct kt_hold *h)
{
	struct kt_places *pl;

	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		return NULL;
	pl->h = h;
	return pl;
}

void
kt_places_free(struct kt_places *pl)
{
	if (pl == NULL)
		return;
	free(pl->v);
	free(pl->cpos);
	free(pl->cflags);
	kt_buf_free(&pl->copy);
	free(pl);
}

/* A copy of ev's bytes, as copy k in *k.  0 or -1 (no memory). */
static int
place_copy(struct kt_places *pl, const struct kt_event *ev, uint64_t *k)
{
	if (pl->ncopies + 2 > pl->capcopies) {
		size_t c = pl->capcopies ? 2 * pl->capcopies : 64;
		uint64_t *t;
		uint8_t *f;

		if ((t = realloc(pl->cpos, c * sizeof(*t))) == NULL)
			return -1;
		pl->cpos = t;
		if ((f = realloc(pl->cflags, c)) == NULL)
			return -1;
		pl->cflags = f;
		pl->capcopies = c;
	}
	if (pl->ncopies == 0)
		pl->cpos[0] = 0;
	kt_buf_add(&pl->copy, ev->raw, ev->len);
	if (pl->copy.err)
		return -1;
	pl->cflags[pl->ncopies] = (uint8_t)(ev->flags & (KT_EV_REPAIRED |
	    KT_EV_PATCHED));
	*k = pl->ncopies++;
	pl->cpos[pl->ncopies] = pl->copy.n;
	return 0;
}

int
kt_places_add(struct kt_places *pl, uint64_t pos, const struct kt_event *ev,
    struct kt_error *err)
{
	uint64_t off, k;
	int rc;

	if (pos >= pl->cap) {
		uint64_t c = pl->cap ? pl->cap : 4096, *t;

		while (c <= pos)
			c *= 2;
		if (c > SIZE_MAX / sizeof(*t) ||
		    (t = realloc(pl->v, (size_t)c * sizeof(*t))) == NULL)
			goto nomem;
		memset(t + pl->cap, 0, (size_t)(c - pl->cap) * sizeof(*t));
		pl->v = t;
		pl->cap = c;
	}
	if (pos >= pl->n)
		pl->n = pos + 1;
	if ((rc = kt_hold_where(pl->h, ev, &off, err)) == -1)
		return -1;
	if (rc == 1 && ev->len < ((size_t)1 << PL_LENBITS) &&
	    off < ((uint64_t)1 << PL_OFFBITS)) {
		pl->v[pos] = PL_SEEN | off << PL_LENBITS | ev->len;
		return 0;
	}
	if (place_copy(pl, ev, &k) == -1)
		goto nomem;
	pl->v[pos] = PL_SEEN | PL_COPY | k;
	return 0;
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
	return -1;
}

int
kt_places_get(struct kt_places *pl, uint64_t pos, const char **raw,
    size_t *len, unsigned *flags, struct kt_error *err)
{
	uint64_t v;

	if (pos >= pl->n || !((v = pl->v[pos]) & PL_SEEN))
		return 0;
	if (flags != NULL)
		*flags = 0;
	if (v & PL_COPY) {
		uint64_t k = v & ~(PL_SEEN | PL_COPY);

		if (flags != NULL)
			*flags = pl->cflags[k];
		*raw = pl->copy.p != NULL ? pl->copy.p + pl->cpos[k] : "";
		*len = (size_t)(pl->cpos[k + 1] - pl->cpos[k]);
		return 1;
	}
	*len = (size_t)(v & (((uint64_t)1 << PL_LENBITS) - 1));
	*raw = kt_hold_bytes(pl->h, (v & ~PL_SEEN) >> PL_LENBITS, *len, err);
	return *raw != NULL ? 1 : -1;
}
