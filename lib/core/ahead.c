/*
 * ahead.c: a reader's events read and scanned on a second thread, ahead
 * of the caller.  Scanning an event costs about as much as what a
 * filter that builds a model does with it, so on two cores the two add
 * up to the larger of them instead of their sum.
 *
 * The thread fills a ring of AH_NBATCH batches, each a run of events
 * whose bytes are copied next to them (an event's raw text points into
 * its batch); the caller takes them in order.  What the caller gets, and
 * the error after the last event, is what kt_reader_next would have
 * given: the same events, the same bytes, the same repairs.  While it
 * runs the reader belongs to the thread; the caller uses it again once
 * kt_ahead_next has returned 0 or -1, or after kt_ahead_stop.  The
 * progress callback, if any, is called on the thread, with the reader.
 * The thread takes no signals.
 *
 * A plain file (regular, not compressed or archived) of SP_MIN bytes or
 * more, or a gzip file inflated on its decoder thread whose trailer says
 * as much (read by offset from the thread's window: gz.c), is read in
 * parts instead (split mode): once the caller has its
 * first event, the rest of the file is cut into pieces of SP_PIECE bytes,
 * and every CPU reads and scans pieces, each with a part reader of its
 * own (read.c), the caller's thread too, when the piece it needs next is
 * not taken yet.  A piece after the first starts at the first '{' in it
 * that follows "}," (kt_reader_part_find), which is a guess: an event
 * starts there only when the piece before, read from a place known to be
 * an event's start, stopped at it.  The caller checks that as it takes
 * the pieces in order, and a piece that fails the check, or that holds
 * an error or the input's cut end, ends the split: the whole reader goes
 * on from the last place checked, on the caller's thread, and says what
 * it says of the rest (the same repairs, errors and places).  Between
 * pieces the whole reader is moved to where the last piece stopped
 * (kt_reader_resume), so that its offset and position are always those
 * of the events given; the bytes before the piece it takes next (less
 * the room its guess looks back) are released (a gzip window drops them).
 * KT_SPLIT=0 in the environment reads on one thread ahead instead;
 * KT_SPLIT=N cuts pieces of N bytes from files of any size (for tests).
 */
#define _GNU_SOURCE	/* sched_getaffinity */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktint.h"

#define AH_NBATCH	4		/* the ring */
#define AH_EVENTS	1024		/* events a batch holds at most */
#define AH_BYTES	(256u << 10)	/* their bytes, unless one is larger */

#define SP_MIN		(8u << 20)	/* a file this large is split */
#define SP_PIECE	(256u << 10)	/* the bytes of a piece */
#define SP_SLOTS	4		/* pieces in flight per thread */
#define SP_WORKERS	15		/* threads beside the caller, at most */

/* A piece of the file, read (or being read) by one thread. */
struct piece {
	uint64_t	 i;		/* [X + i * len, X + (i + 1) * len) */
	int		 state;		/* PS_* */
	int		 rc;		/* 1 read; 0 no '{' after "},"; -1 failed */
	int		 end;		/* the events' array ends at stop */
	uint64_t	 start;		/* where its first event starts */
	uint64_t	 stop;		/* where it stopped (see read.c) */
	uint64_t	 npos;		/* the positions it read */
	struct kt_repairs rep;
	struct kt_event	*ev;		/* its events (raw set as given) */
	size_t		*off;		/* where each one's bytes are in buf */
	size_t		 n, cap;
	char		*buf;
	size_t		 len, bcap;
};

enum { PS_FREE, PS_TAKEN, PS_DONE };

/* A thread beside the caller's, and its part reader. */
struct worker {
	struct kt_ahead	*a;
	struct kt_reader *part;
	pthread_t	 th;
	int		 started;
};

struct batch {
	struct kt_event	 ev[AH_EVENTS];
	size_t		 n;
	char		*buf;
	size_t		 len, cap;
};

struct kt_ahead {
	struct kt_reader *rd;
	void		(*progress)(const struct kt_reader *);
	pthread_t	 th;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;		/* a batch filled or freed, or stop */
	struct batch	*b[AH_NBATCH];
	uint64_t	 head, tail;	/* filled: batches head..tail-1 */
	struct batch	*cur;		/* b[head], while the caller reads it */
	size_t		 pos;		/* the caller's place in it */
	int		 end;		/* the thread is done: rc is set */
	int		 rc;		/* kt_reader_next's last: 0 or -1 */
	struct kt_error	 err;		/* with -1 */
	int		 stop;		/* kt_ahead_stop: end now */
	int		 joined;
	uint64_t	 nev;		/* events read (for progress) */
	/*
	 * Split mode: split 1 to start after the first event, 2 running,
	 * 3 ended (the whole reader reads on alone); 0 reading ahead.
	 */
	int		 split;
	uint64_t	 x, piece;	/* where the pieces begin; their size */
	uint64_t	 size;		/* the file's */
	uint64_t	 npieces;
	uint64_t	 next;		/* the first piece no thread took */
	uint64_t	 at;		/* the piece the caller reads */
	uint64_t	 expect;	/* where its first event must start */
	uint64_t	 posbase;	/* the position of its first */
	struct piece	*slot;		/* SP_SLOTS per thread, by i */
	size_t		 nslots;
	struct piece	*curp;		/* the caller's, while it gives it */
	size_t		 k;		/* its next event */
	struct worker	*w;
	size_t		 nw;
	struct kt_reader *part;		/* the caller's part reader */
};

/*
 * How many CPUs this process may run on: its affinity mask (taskset,
 * a container's cpuset), else the CPUs online; at least 1.
 */
unsigned
kt_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4096 ? 4096 : (unsigned)n;
}

/* Whether this process may run on more than one CPU. */
int
kt_ahead_worth(void)
{
	return kt_cpus() > 1;
}

int
kt_thread_start(pthread_t *th, void *(*fn)(void *), void *arg,
    const char *name)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	(void)pthread_setname_np(*th, name);
	return 0;
}

/*
 * Copy ev into b (it fits, or b is empty and grows), unless it is b's
 * next place already, and its bytes.  -1 out of memory.
 */
static int
put(struct batch *b, const struct kt_event *ev)
{
	struct kt_event *e;

	if (b->len + ev->len > b->cap) {
		size_t cap = b->len + ev->len;
		char *p;

		/* Only an empty batch grows: no event points into it. */
		if ((p = realloc(b->buf, cap)) == NULL)
			return -1;
		b->buf = p;
		b->cap = cap;
	}
	e = &b->ev[b->n++];
	if (e != ev)
		*e = *ev;
	memcpy(b->buf + b->len, ev->raw, ev->len);
	e->raw = b->buf + b->len;
	b->len += ev->len;
	return 0;
}

static void *
reader(void *arg)
{
	struct kt_ahead *a = arg;
	struct kt_event ev;
	struct kt_error err;
	int have = 0, rc = 1;

	memset(&err, 0, sizeof(err));
	for (;;) {
		struct batch *b;

		pthread_mutex_lock(&a->mu);
		while (!a->stop && a->tail - a->head == AH_NBATCH)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		b = a->b[a->tail % AH_NBATCH];
		pthread_mutex_unlock(&a->mu);
		b->n = b->len = 0;
		/* The event that did not fit the batch before. */
		if (have) {
			if (put(b, &ev) == -1)
				goto nomem;
			have = 0;
		}
		while (b->n < AH_EVENTS) {
			/* Scanned into its place in the batch, not copied. */
			struct kt_event *slot = &b->ev[b->n];

			if ((rc = kt_reader_next(a->rd, slot, &err)) != 1)
				break;
			if (a->progress != NULL && (++a->nev & 0x3fff) == 0)
				a->progress(a->rd);
			if (b->n > 0 && b->len + slot->len > b->cap) {
				ev = *slot;
				have = 1;
				break;
			}
			if (put(b, slot) == -1)
				goto nomem;
		}
		pthread_mutex_lock(&a->mu);
		a->tail++;
		if (rc != 1) {
			a->rc = rc;
			a->err = err;
			a->end = 1;
		}
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (rc != 1)
			return NULL;
	}
nomem:
	kt_error_set(&err, kt_reader_name(a->rd), 0, 0, "out of memory");
	pthread_mutex_lock(&a->mu);
	a->tail++;	/* the events put so far, then the error */
	a->rc = -1;
	a->err = err;
	a->end = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static void
ahead_free(struct kt_ahead *a)
{
	int i;

	for (i = 0; i < AH_NBATCH; i++)
		if (a->b[i] != NULL) {
			free(a->b[i]->buf);
			free(a->b[i]);
		}
	free(a);
}

/* ------------------------------------------------------------------ */
/* Split mode. */

#ifdef KT_DEBUG_SCANS
/*
 * The debug build counts the pieces read, those read on a worker, those
 * read again from where the piece before stopped (a guess that was not
 * an event), and the splits that ended before the events did (an error,
 * a cut input): like the scan counts, state of the debug build only.
 */
static uint64_t debug_split[4];

void
kt_debug_split(uint64_t *pieces, uint64_t *workers, uint64_t *again,
    uint64_t *ended)
{
	*pieces = __atomic_load_n(&debug_split[0], __ATOMIC_RELAXED);
	*workers = __atomic_load_n(&debug_split[1], __ATOMIC_RELAXED);
	*again = __atomic_load_n(&debug_split[2], __ATOMIC_RELAXED);
	*ended = __atomic_load_n(&debug_split[3], __ATOMIC_RELAXED);
}
#define SPLIT_COUNT(k)	__atomic_add_fetch(&debug_split[k], 1, __ATOMIC_RELAXED)
#else
#define SPLIT_COUNT(k)	(void)0
#endif

/* Room in p for one more event.  -1 when out of memory. */
static int
piece_room(struct piece *p)
{
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 1024;
		struct kt_event *e;
		size_t *o;

		if ((e = realloc(p->ev, c * sizeof(*e))) == NULL)
			return -1;
		p->ev = e;
		if ((o = realloc(p->off, c * sizeof(*o))) == NULL)
			return -1;
		p->off = o;
		p->cap = c;
	}
	return 0;
}

/*
 * Keep p->ev[p->n], just read into its place, its bytes copied.  -1 when
 * out of memory.
 */
static int
piece_put(struct piece *p)
{
	const struct kt_event *ev = &p->ev[p->n];

	if (p->len + ev->len > p->bcap) {
		size_t c = p->bcap ? p->bcap : SP_PIECE + SP_PIECE / 2;
		char *b;

		while (c < p->len + ev->len)
			c *= 2;
		if ((b = realloc(p->buf, c)) == NULL)
			return -1;
		p->buf = b;
		p->bcap = c;
	}
	memcpy(p->buf + p->len, ev->raw, ev->len);
	p->off[p->n] = p->len;
	p->len += ev->len;
	p->n++;
	return 0;
}

/* The bytes [*from, *to) that piece i covers (*to: UINT64_MAX, the last). */
static void
piece_span(const struct kt_ahead *a, uint64_t i, uint64_t *from,
    uint64_t *to)
{
	*from = a->x + i * a->piece;
	*to = i + 1 < a->npieces ? *from + a->piece : UINT64_MAX;
}

/*
 * Read piece p with the part reader given (on any thread): from start,
 * an event's first byte (at_event) or just past an event; UINT64_MAX:
 * from the first '{' after "}," in it.
 */
static void
read_piece(const struct kt_ahead *a, struct kt_reader *part, struct piece *p,
    uint64_t start, int at_event)
{
	struct kt_error err;
	uint64_t from, to;
	int rc;

	p->n = p->len = 0;
	p->npos = 0;
	p->end = 0;
	p->rc = -1;
	piece_span(a, p->i, &from, &to);
	p->start = start;
	if (start == UINT64_MAX &&
	    (rc = kt_reader_part_find(part, from, to, &p->start)) != 0) {
		p->rc = rc == 1 ? 0 : -1;
		return;
	}
	kt_reader_part_seek(part, p->start, at_event, to);
	/* Each event read into its place in p (no copy of the record). */
	for (;;) {
		if (piece_room(p) == -1)
			return;
		if ((rc = kt_reader_next(part, &p->ev[p->n], &err)) != 1)
			break;
		if (piece_put(p) == -1)
			return;
	}
	if (rc == -1 || (rc = kt_reader_part_stop(part, &p->stop,
	    &p->npos)) == 0)
		return;
	p->end = rc == 2;
	p->rep = *kt_reader_repairs(part);
	p->rc = 1;
}

/* Whether a thread may take the next piece (a->mu held). */
static int
piece_free(const struct kt_ahead *a)
{
	return a->next < a->npieces && a->next < a->at + a->nslots;
}

/*
 * Take the next piece no thread took and read it with part, a->mu held
 * on entry and on return (released while reading).
 */
static void
take_piece(struct kt_ahead *a, struct kt_reader *part)
{
	struct piece *p = &a->slot[a->next % a->nslots];

	p->i = a->next++;
	p->state = PS_TAKEN;
	pthread_mutex_unlock(&a->mu);
	read_piece(a, part, p, p->i == 0 ? a->x : UINT64_MAX, p->i > 0);
	SPLIT_COUNT(0);
	pthread_mutex_lock(&a->mu);
	p->state = PS_DONE;
	pthread_cond_broadcast(&a->cv);
}

/* The caller is done with piece p, the one at a->at: a thread may take it. */
static void
piece_done(struct kt_ahead *a, struct piece *p)
{
	pthread_mutex_lock(&a->mu);
	p->state = PS_FREE;
	a->at++;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct kt_ahead *a = w->a;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->stop && a->next < a->npieces && !piece_free(a))
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop || a->next >= a->npieces)
			break;
		take_piece(a, w->part);
		SPLIT_COUNT(1);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Stop the workers and wait for them. */
static void
split_join(struct kt_ahead *a)
{
	size_t i;

	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	for (i = 0; i < a->nw; i++)
		if (a->w != NULL && a->w[i].started) {
			pthread_join(a->w[i].th, NULL);
			a->w[i].started = 0;
		}
}

static void
split_free(struct kt_ahead *a)
{
	size_t i;

	for (i = 0; a->slot != NULL && i < a->nslots; i++) {
		free(a->slot[i].ev);
		free(a->slot[i].off);
		free(a->slot[i].buf);
	}
	free(a->slot);
	for (i = 0; a->w != NULL && i < a->nw; i++)
		kt_reader_part_free(a->w[i].part);
	free(a->w);
	kt_reader_part_free(a->part);
}

/*
 * Cut the rest of the file after the caller's first event into pieces
 * and start the workers.  -1 when it is not worth it or cannot be done
 * (the caller then reads on alone).
 */
static int
split_start(struct kt_ahead *a)
{
	struct kt_reader *rd = a->rd;
	unsigned cpus = kt_cpus();
	size_t i;

	if (kt_reader_split_point(rd, &a->x) == -1 || a->x >= a->size)
		return -1;
	a->npieces = (a->size - a->x + a->piece - 1) / a->piece;
	a->nw = cpus - 1 < SP_WORKERS ? cpus - 1 : SP_WORKERS;
	if (a->nw > a->npieces)
		a->nw = (size_t)a->npieces;
	a->nslots = SP_SLOTS * (a->nw + 1);
	a->expect = a->x;
	a->posbase = kt_reader_position(rd) + 1;
	if ((a->slot = calloc(a->nslots, sizeof(*a->slot))) == NULL ||
	    (a->w = calloc(a->nw ? a->nw : 1, sizeof(*a->w))) == NULL ||
	    (a->part = kt_reader_part(rd)) == NULL)
		return -1;
	for (i = 0; i < a->nw; i++) {
		a->w[i].a = a;
		if ((a->w[i].part = kt_reader_part(rd)) == NULL)
			return -1;
	}
	/*
	 * A gzip stream is inflated as far as the pieces in flight reach,
	 * and what their last events usually take past them.
	 */
	if (kt_reader_split_begin(rd, a->x, (uint64_t)a->nslots * a->piece +
	    (64u << 10)) == -1)
		return -1;
	for (i = 0; i < a->nw; i++)
		a->w[i].started = kt_thread_start(&a->w[i].th, work, &a->w[i],
		    "kt-part") == 0;
	return 0;
}

/* The split ends: the whole reader goes on alone from where it stands. */
static int
split_end(struct kt_ahead *a, struct kt_event *ev, struct kt_error *err)
{
	split_join(a);
	kt_reader_split_end(a->rd);
	a->split = 3;
	a->curp = NULL;
	return kt_reader_next(a->rd, ev, err);
}

/* The next event: *evp in the piece it is in, or ev (split_end). */
static int
split_next(struct kt_ahead *a, struct kt_event *ev,
    const struct kt_event **evp, struct kt_error *err)
{
	struct kt_reader *rd = a->rd;
	struct piece *p;
	uint64_t from, to, nev;
	size_t r;
	int end;

	for (;;) {
		if ((p = a->curp) != NULL) {
			if (a->k < p->n) {
				struct kt_event *e = &p->ev[a->k];

				e->raw = p->buf + p->off[a->k];
				e->index = kt_reader_row(rd, a->posbase - p->npos +
				    e->index);
				a->k++;
				*evp = e;
				return 1;
			}
			/* Done with it: once freed, a worker may take it. */
			end = p->end;
			piece_done(a, p);
			a->curp = NULL;
			if (end)
				return split_end(a, ev, err);
		}
		if (a->at >= a->npieces)
			return split_end(a, ev, err);
		piece_span(a, a->at, &from, &to);
		kt_reader_split_release(rd, from);
		p = &a->slot[a->at % a->nslots];
		pthread_mutex_lock(&a->mu);
		/*
		 * While a worker reads the piece needed, read the next one no
		 * thread took (this one, if none did).
		 */
		while (p->state != PS_DONE || p->i != a->at) {
			if (piece_free(a))
				take_piece(a, a->part);
			else
				pthread_cond_wait(&a->cv, &a->mu);
		}
		pthread_mutex_unlock(&a->mu);
		if (a->at > 0 && a->expect >= to) {
			/* An event from before covers it: nothing starts in it. */
			piece_done(a, p);
			continue;
		}
		if (a->at > 0 && (p->rc != 1 || p->start != a->expect)) {
			/*
			 * Its guess was not an event's start (a "}, {" in a
			 * string, objects in an array), or it failed: read it
			 * again from where its first event does start.
			 */
			read_piece(a, a->part, p, a->expect, 1);
			SPLIT_COUNT(2);
		}
		if (p->rc != 1) {
			SPLIT_COUNT(3);
			return split_end(a, ev, err);
		}
		/* Its events are the next ones. */
		for (r = 0; r < KT_NREPAIRS; r++)
			kt_reader_repairs_mut(rd)->n[r] += p->rep.n[r];
		a->posbase += p->npos;
		a->expect = p->stop;
		if (kt_reader_resume(rd, p->stop, !p->end, a->posbase, err) == -1)
			return -1;
		nev = a->nev;
		a->nev += p->n;
		if (a->progress != NULL && (a->nev >> 14) != (nev >> 14))
			a->progress(rd);
		a->curp = p;
		a->k = 0;
	}
}

struct kt_ahead *
kt_ahead_start(struct kt_reader *rd, void (*progress)(const struct kt_reader *))
{
	struct kt_ahead *a;
	uint64_t min = SP_MIN, fb = kt_reader_file_bytes(rd), hint;
	const char *e = getenv("KT_SPLIT");
	int i;

	/* A small file is read on the caller's thread (KT_SMALL_FILE). */
	if (fb > 0 && fb < KT_SMALL_FILE && e == NULL)
		return NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	if (pthread_mutex_init(&a->mu, NULL) != 0) {
		free(a);
		return NULL;
	}
	if (pthread_cond_init(&a->cv, NULL) != 0) {
		pthread_mutex_destroy(&a->mu);
		free(a);
		return NULL;
	}
	a->rd = rd;
	a->progress = progress;
	a->piece = SP_PIECE;
	if (e != NULL) {
		a->piece = strtoull(e, NULL, 10);
		min = 0;
	}
	/* A gzip stream's end is unknown: its trailer says about how far. */
	a->size = kt_reader_split_size(rd);
	hint = kt_reader_size_hint(rd);
	if (a->piece > 0 && kt_reader_splittable(rd) && hint >= min) {
		a->split = 1;		/* the pieces start after an event */
		a->joined = 1;
		return a;
	}
	for (i = 0; i < AH_NBATCH; i++) {
		if ((a->b[i] = calloc(1, sizeof(*a->b[i]))) == NULL ||
		    (a->b[i]->buf = malloc(AH_BYTES)) == NULL)
			goto fail;
		a->b[i]->cap = AH_BYTES;
	}
	kt_reader_late(rd, 1);
	if (kt_thread_start(&a->th, reader, a, "kt-ahead") == -1) {
		kt_reader_late(rd, 0);
		goto fail;
	}
	return a;
fail:
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	ahead_free(a);
	return NULL;
}

/*
 * The next event of the current batch, finished here where the thread
 * left it to its caller (kt_reader_late): the caller has less to do.
 */
static const struct kt_event *
take(struct kt_ahead *a)
{
	struct kt_event *e = &a->cur->ev[a->pos++];

	if (e->flags & KT_EV_LATE)
		kt_event_finish(e);
	return e;
}

int
kt_ahead_get(struct kt_ahead *a, struct kt_reader *rd, struct kt_event *ev,
    const struct kt_event **evp, struct kt_error *err)
{
	int rc;

	*evp = ev;
	if (a == NULL)
		return kt_reader_next(rd, ev, err);
	switch (a->split) {
	case 1:
		/* The first event here; the rest in pieces, if it can be. */
		if ((rc = kt_reader_next(rd, ev, err)) != 1) {
			a->split = 3;
			return rc;
		}
		a->split = split_start(a) == 0 ? 2 : 3;
		if (a->split == 3)
			split_join(a);
		return 1;
	case 2:
		return split_next(a, ev, evp, err);
	case 3:
		return kt_reader_next(rd, ev, err);
	}

	/* Within a batch no lock is taken: it is the caller's until then. */
	if (a->cur != NULL && a->pos < a->cur->n) {
		*evp = take(a);
		return 1;
	}
	pthread_mutex_lock(&a->mu);
	for (;;) {
		if (a->cur != NULL) {
			/* Done with this batch: hand it back. */
			a->cur = NULL;
			a->head++;
			pthread_cond_broadcast(&a->cv);
		}
		if (a->head < a->tail) {
			a->cur = a->b[a->head % AH_NBATCH];
			a->pos = 0;
			if (a->cur->n > 0)
				break;
			continue;
		}
		if (a->end)
			break;
		pthread_cond_wait(&a->cv, &a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	if (a->cur != NULL) {
		*evp = take(a);
		return 1;
	}
	if (!a->joined) {
		pthread_join(a->th, NULL);
		a->joined = 1;
		kt_reader_late(a->rd, 0);
	}
	rc = a->rc;
	if (rc == -1 && err != NULL)
		*err = a->err;
	return rc;
}

int
kt_ahead_next(struct kt_ahead *a, struct kt_reader *rd, struct kt_event *ev,
    struct kt_error *err)
{
	const struct kt_event *e;
	int rc = kt_ahead_get(a, rd, ev, &e, err);

	if (rc == 1 && e != ev)
		*ev = *e;
	return rc;
}

void
kt_ahead_stop(struct kt_ahead *a)
{
	if (a == NULL)
		return;
	if (a->split) {
		split_join(a);
		kt_reader_split_end(a->rd);
		split_free(a);
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
		return;
	}
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (!a->joined)
		pthread_join(a->th, NULL);
	kt_reader_late(a->rd, 0);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	ahead_free(a);
}
