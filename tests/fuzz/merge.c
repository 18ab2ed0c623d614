/*
 * fuzz/merge.c: a libFuzzer harness for kt-bucket --merge:
 * kt_bucket_merge() over up to four files, the input split at form
 * feeds ("\f"), then the merged table written as TSV, text and JSON
 * lines.  Any crash, leak or sanitizer report is a bug.
 *
 * Speed: the files are memfds made once and written again each run,
 * named /proc/self/fd/N, not new temporary files on disk (creating and
 * removing five files a run was nine tenths of its time); the output
 * is one more, written through (kt_out_open on a link).
 */
#define _GNU_SOURCE

#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

#define NFILES	4

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The files, made once: NFILES inputs and the output. */
static int fds[NFILES + 1] = { -1 };
static char fdpaths[NFILES + 1][64];

static int
setup(void)
{
	size_t i;

	if (fds[0] != -1)
		return 0;
	for (i = 0; i <= NFILES; i++) {
		if ((fds[i] = memfd_create("kt-fuzz-merge", 0)) == -1)
			return -1;
		snprintf(fdpaths[i], sizeof(fdpaths[i]), "/proc/self/fd/%d",
		    fds[i]);
	}
	return 0;
}

/* Replace file i's contents with p[0..n).  0 or -1. */
static int
put(size_t i, const uint8_t *p, size_t n)
{
	if (ftruncate(fds[i], 0) == -1)
		return -1;
	return n == 0 || pwrite(fds[i], p, n, 0) == (ssize_t)n ? 0 : -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum kt_table_form forms[] = { KT_TABLE_TSV,
	    KT_TABLE_TEXT, KT_TABLE_JSON };
	char *paths[NFILES];
	struct kt_error err;
	struct kt_table *t;
	struct kt_out *out;
	const uint8_t *p = data, *e = data + size, *ff;
	size_t n = 0, i;

	if (size > 65536 || setup() == -1)
		return 0;
	while (n < NFILES) {
		if ((ff = memchr(p, '\f', (size_t)(e - p))) == NULL ||
		    n == NFILES - 1)
			ff = e;
		if (put(n, p, (size_t)(ff - p)) == -1)
			return 0;
		paths[n] = fdpaths[n];
		n++;
		if (ff == e)
			break;
		p = ff + 1;
	}
	if ((t = kt_bucket_merge(paths, n, &err)) != NULL) {
		(void)kt_table_rows(t);
		if ((out = kt_out_open(fdpaths[NFILES], -1, &err)) != NULL) {
			for (i = 0; i < 3; i++)
				(void)kt_table_write(t, forms[i], 1, out);
			kt_out_abort(out);
		}
		kt_table_free(t);
	}
	return 0;
}
