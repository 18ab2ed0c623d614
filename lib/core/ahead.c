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
 */
#define _GNU_SOURCE	/* sched_getaffinity */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktint.h"

#define AH_NBATCH	8		/* the ring */
#define AH_EVENTS	1024		/* events a batch holds at most */
#define AH_BYTES	(256u << 10)	/* their bytes, unless one is larger */

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

/* Copy ev into b (it fits, or b is empty and grows). -1 out of memory. */
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
			if ((rc = kt_reader_next(a->rd, &ev, &err)) != 1)
				break;
			if (a->progress != NULL && (++a->nev & 0x3fff) == 0)
				a->progress(a->rd);
			if (b->n > 0 && b->len + ev.len > b->cap) {
				have = 1;
				break;
			}
			if (put(b, &ev) == -1)
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

struct kt_ahead *
kt_ahead_start(struct kt_reader *rd, void (*progress)(const struct kt_reader *))
{
	struct kt_ahead *a;
	sigset_t all, old;
	int i, rc;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->rd = rd;
	a->progress = progress;
	for (i = 0; i < AH_NBATCH; i++) {
		if ((a->b[i] = calloc(1, sizeof(*a->b[i]))) == NULL ||
		    (a->b[i]->buf = malloc(AH_BYTES)) == NULL) {
			ahead_free(a);
			return NULL;
		}
		a->b[i]->cap = AH_BYTES;
	}
	if (pthread_mutex_init(&a->mu, NULL) != 0) {
		ahead_free(a);
		return NULL;
	}
	if (pthread_cond_init(&a->cv, NULL) != 0) {
		pthread_mutex_destroy(&a->mu);
		ahead_free(a);
		return NULL;
	}
	/* Signals go to the caller's threads, never to the reader's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&a->th, NULL, reader, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		(void)pthread_setname_np(a->th, "kt-ahead");	/* top -H, perf */
	if (rc != 0) {
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		ahead_free(a);
		return NULL;
	}
	return a;
}

int
kt_ahead_next(struct kt_ahead *a, struct kt_reader *rd, struct kt_event *ev,
    struct kt_error *err)
{
	int rc;

	if (a == NULL)
		return kt_reader_next(rd, ev, err);

	/* Within a batch no lock is taken: it is the caller's until then. */
	if (a->cur != NULL && a->pos < a->cur->n) {
		*ev = a->cur->ev[a->pos++];
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
		*ev = a->cur->ev[a->pos++];
		return 1;
	}
	if (!a->joined) {
		pthread_join(a->th, NULL);
		a->joined = 1;
	}
	rc = a->rc;
	if (rc == -1 && err != NULL)
		*err = a->err;
	return rc;
}

void
kt_ahead_stop(struct kt_ahead *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (!a->joined)
		pthread_join(a->th, NULL);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	ahead_free(a);
}
