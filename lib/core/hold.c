/*
 * hold.c: an input's bytes for filters that keep a whole trace in memory
 * or write the input again: events held as the mapped file's own bytes
 * when the input is a plain JSON file (copies otherwise), the input's
 * SHA-256, and a range of the input's bytes copied to an output.
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/mman.h>
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
	const char	*map;		/* the file mapped, or NULL */
	size_t		 mapsize;
	struct kt_arena	*arena;		/* copies of the other events */
	uint64_t	 n;		/* events held so far */
	char		 name[512];	/* for messages */
};

/* Map the file at path into h when it is a plain JSON file. */
static void
hold_map(struct kt_hold *h, const char *path)
{
	struct stat st;
	void *m;
	int fd;
	char head[64];
	ssize_t n;
	size_t i;

	if ((fd = open(path, O_RDONLY)) == -1)
		return;
	/* Plain JSON only: not compressed, archived or TSV. */
	n = read(fd, head, sizeof(head));
	for (i = 0; n > 0 && i < (size_t)n && (head[i] == ' ' ||
	    head[i] == '\t' || head[i] == '\n' || head[i] == '\r'); i++)
		;
	if (n <= 0 || i == (size_t)n || (head[i] != '{' && head[i] != '[' &&
	    (unsigned char)head[i] != 0xef)) {
		close(fd);
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
		    0);
		if (m != MAP_FAILED) {
			h->map = m;
			h->mapsize = (size_t)st.st_size;
		}
	}
	close(fd);
}

struct kt_hold *
kt_hold_new(const char *path, const char *name)
{
	struct kt_hold *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->arena = kt_arena_new()) == NULL) {
		free(h);
		return NULL;
	}
	snprintf(h->name, sizeof(h->name), "%s", name ? name : "<stdin>");
	if (path != NULL && strcmp(path, "-") != 0)
		hold_map(h, path);
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
	 * repaired them (only plain JSON is mapped).  One event in 1024 is
	 * compared, to catch a reader that counts otherwise.
	 */
	if (h->map != NULL && !(ev->flags & (KT_EV_REPAIRED |
	    KT_EV_PATCHED)) && (end = kt_reader_offset(rd)) >= ev->len &&
	    end <= h->mapsize) {
		p = h->map + end - ev->len;
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
kt_hold_sha256(const struct kt_hold *h, const char *path, char hex[65],
    struct kt_error *err)
{
	struct kt_sha256 c;

	if (h == NULL || h->map == NULL)
		return kt_sha256_file(path, hex, err);
	kt_sha256_init(&c);
	kt_sha256_update(&c, h->map, h->mapsize);
	kt_sha256_hex(&c, hex);
	return 0;
}

void
kt_hold_free(struct kt_hold *h)
{
	if (h == NULL)
		return;
	if (h->map != NULL)
		munmap((void *)h->map, h->mapsize);
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
