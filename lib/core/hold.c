/*
 * hold.c: an input's bytes for filters that keep a whole trace in memory
 * or write the input again: events held as the file's own bytes, read
 * once into memory, when the input is a plain JSON file (copies of the
 * reader's otherwise), the input's SHA-256, a check that the file did
 * not change while it was read, and a range of the input's bytes copied
 * to an output.
 *
 * The file is read (pread), never mapped: a mapped file that shrinks
 * while it is read faults (SIGBUS) on the pages it lost, and the core
 * keeps no signal handler.  Its size and modification time are kept and
 * compared by kt_hold_check().
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

struct kt_hold {
	char		*copy;		/* the file's bytes, or NULL */
	size_t		 size;		/* bytes in copy */
	int		 fd;		/* the file, or -1 */
	struct stat	 st;		/* it when opened */
	int		 short_read;	/* fewer bytes than st_size */
	struct kt_arena	*arena;		/* copies of the other events */
	uint64_t	 n;		/* events held so far */
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

/* Read the whole file into h->copy; a short read marks it changed. */
static void
hold_read(struct kt_hold *h)
{
	size_t want = (size_t)h->st.st_size, got = 0;
	ssize_t n;

	if ((h->copy = malloc(want)) == NULL)
		return;		/* the events are copied instead */
	while (got < want) {
		if ((n = pread(h->fd, h->copy + got, want - got,
		    (off_t)got)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got < want)
		h->short_read = 1;
	h->size = got;
}

/* Open the file at path; hold its bytes when it is plain JSON. */
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
	if (plain_json(head, n) && h->st.st_size > 0 &&
	    (uint64_t)h->st.st_size <= SIZE_MAX)
		hold_read(h);
}

struct kt_hold *
kt_hold_new(const char *path, const char *name)
{
	struct kt_hold *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->fd = -1;
	if ((h->arena = kt_arena_new()) == NULL) {
		free(h);
		return NULL;
	}
	snprintf(h->name, sizeof(h->name), "%s", name ? name : "<stdin>");
	if (path != NULL && strcmp(path, "-") != 0)
		hold_open(h, path);
	return h;
}

const char *
kt_hold_event(struct kt_hold *h, const struct kt_reader *rd,
    const struct kt_event *ev, struct kt_error *err)
{
	const char *p;
	uint64_t end;

	h->n++;
	/*
	 * The reader's bytes are the file's, at its offset, unless it
	 * repaired them (only plain JSON is held).  One event in 1024 is
	 * compared, to catch a reader that counts otherwise (or a file
	 * that changed).
	 */
	if (h->copy != NULL && !(ev->flags & (KT_EV_REPAIRED |
	    KT_EV_PATCHED)) && (end = kt_reader_offset(rd)) >= ev->len &&
	    end <= h->size) {
		p = h->copy + end - ev->len;
		if ((h->n & 1023) == 1 && memcmp(p, ev->raw, ev->len) != 0) {
			kt_error_set(err, h->name, 0, 0, "internal error: the "
			    "event at byte %llu is not the file's",
			    (unsigned long long)(end - ev->len));
			return NULL;
		}
		return p;
	}
	if ((p = kt_arena_copy(h->arena, ev->raw, ev->len)) == NULL)
		kt_error_set(err, NULL, 0, 0, "out of memory");
	return p;
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
	if (h->short_read || st.st_size != h->st.st_size ||
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

int
kt_hold_sha256(const struct kt_hold *h, const char *path, char hex[65],
    struct kt_error *err)
{
	struct kt_sha256 c;

	if (h == NULL || h->copy == NULL)
		return kt_sha256_file(path, hex, err);
	kt_sha256_init(&c);
	kt_sha256_update(&c, h->copy, h->size);
	kt_sha256_hex(&c, hex);
	return 0;
}

void
kt_hold_free(struct kt_hold *h)
{
	if (h == NULL)
		return;
	free(h->copy);
	if (h->fd != -1)
		close(h->fd);
	kt_arena_free(h->arena);
	free(h);
}

int
kt_file_copy(const char *path, uint64_t from, uint64_t to,
    struct kt_out *out)
{
	const size_t cap = 1 << 20;
	char *buf;
	ssize_t n;
	size_t want;
	int fd, rc = 0;

	if ((buf = malloc(cap)) == NULL)
		return -1;
	if ((fd = open(path, O_RDONLY)) == -1) {
		free(buf);
		return -1;
	}
	while (to == 0 || from < to) {
		want = cap;
		if (to != 0 && to - from < want)
			want = (size_t)(to - from);
		if ((n = pread(fd, buf, want, (off_t)from)) == -1) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		if (n == 0)
			break;
		if (kt_out_write(out, buf, (size_t)n) == -1) {
			rc = -1;
			break;
		}
		from += (uint64_t)n;
	}
	close(fd);
	free(buf);
	return rc;
}
