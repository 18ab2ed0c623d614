/*
 * fuzz/spool.c: a libFuzzer harness for the input that is read once
 * (stdin, a FIFO, a pipe such as <(zcat t.gz)): kt_spool_fd() copies it
 * from a pipe after looking at its first bytes (no trace, nothing
 * copied), up to a cap (KT_SPOOL_MAX in the filters; here the first
 * byte chooses a small one, so that the cap is reached), and the copy
 * is read back through kt_source_open_as() as "<stdin>", with the tail
 * parse the copy allows (it is a regular file); the second byte chooses
 * strict or skimming reads, and whether the same bytes are also read
 * from a pipe directly (kt_source_open on /proc/self/fd/N: no size, no
 * tail, libarchive over a pipe).  Any crash, leak or sanitizer report
 * is a bug.
 *
 * lib/cli's kt_cli_input_path() and kt_cli_spool_stdin() wrap the same
 * kt_spool_fd(), but exit on failure, so they are not called here.
 * The pipe is filled before it is read (the input is at most 64 KiB,
 * a pipe's buffer; it is made larger where the system allows).  The
 * copy goes to $TMPDIR, which is /dev/shm here when there is one.
 */
#define _GNU_SOURCE

#include <sys/stat.h>

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAXIN	65536

static int ready;

static void
setup(void)
{
	struct stat st;

	if (ready)
		return;
	ready = 1;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
}

/* A pipe holding p[0..n), its write end closed: the read end, or -1. */
static int
filled_pipe(const uint8_t *p, size_t n)
{
	int fds[2];
	size_t off = 0;

	if (pipe(fds) == -1)
		return -1;
	(void)fcntl(fds[1], F_SETPIPE_SZ, 2 * MAXIN);
	while (off < n) {
		ssize_t w = write(fds[1], p + off, n - off);

		if (w <= 0) {
			close(fds[0]);
			close(fds[1]);
			return -1;
		}
		off += (size_t)w;
	}
	close(fds[1]);
	return fds[0];
}

/* Read every trace of the source at path to its end. */
static void
drain(const char *path, const char *name, unsigned flags)
{
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_error err;
	struct kt_event ev;
	struct kt_rows rows;
	size_t n;

	if ((src = kt_source_open_as(path, name, NULL, flags, &err)) == NULL)
		return;
	while (kt_source_next(src, &r, &err) == 1) {
		if (kt_reader_tail(r, &err) != -1)
			while (kt_reader_next(r, &ev, &err) == 1)
				;
		(void)kt_reader_metas(r, &n);
		(void)kt_reader_rows(r, &rows, NULL);
		kt_reader_free(r);
	}
	kt_source_close(src);
}

/* Forget a copy: close its descriptor (/proc/self/fd/N) or remove it. */
static void
unspool(char *path)
{
	if (strncmp(path, "/proc/self/fd/", 14) == 0)
		close(atoi(path + 14));
	else
		unlink(path);
	free(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_error err;
	unsigned flags = 0;
	uint64_t cap;
	char *path, direct[64];
	int fd;

	if (size < 2 || size - 2 > MAXIN)
		return 0;
	setup();
	/* 0: no cap; else a cap of up to 16 KiB, in steps of 128 bytes. */
	cap = (uint64_t)(data[0] & 0x7f) * 128;
	if (data[1] & 1)
		flags |= KT_READ_STRICT;
	if (data[1] & 2)
		flags |= KT_READ_SKIM;
	if (data[1] & 4)
		flags |= KT_READ_SMALL;
	if ((fd = filled_pipe(data + 2, size - 2)) == -1)
		return 0;
	path = kt_spool_fd(fd, "<stdin>", cap, &err);
	close(fd);
	if (path != NULL) {
		drain(path, "<stdin>", flags);
		unspool(path);
	}
	if ((data[1] & 8) && (fd = filled_pipe(data + 2, size - 2)) != -1) {
		snprintf(direct, sizeof(direct), "/proc/self/fd/%d", fd);
		drain(direct, NULL, flags);
		close(fd);
	}
	return 0;
}
