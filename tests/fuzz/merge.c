/*
 * fuzz/merge.c: a libFuzzer harness for kt-bucket --merge:
 * kt_bucket_merge() over up to four temporary files, the input split
 * at form feeds ("\f"), then the merged table written as TSV, text and
 * JSON lines (to a temporary output, removed).  Any crash, leak or
 * sanitizer report is a bug.
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

#define NFILES	4

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Write p[0..n) to a new temporary file named in path.  0 or -1. */
static int
temp_with(char *path, const uint8_t *p, size_t n)
{
	FILE *f;
	int fd;

	if ((fd = mkstemp(path)) == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(path);
		return -1;
	}
	fwrite(p, 1, n, f);
	fclose(f);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum kt_table_form forms[] = { KT_TABLE_TSV,
	    KT_TABLE_TEXT, KT_TABLE_JSON };
	char names[NFILES][32], *paths[NFILES];
	char outpath[] = "/tmp/kt-fuzz-merge-out.XXXXXX";
	struct kt_error err;
	struct kt_table *t;
	struct kt_out *out;
	const uint8_t *p = data, *e = data + size, *ff;
	size_t n = 0, i;
	int fd;

	if (size > 65536)
		return 0;
	while (n < NFILES) {
		if ((ff = memchr(p, '\f', (size_t)(e - p))) == NULL ||
		    n == NFILES - 1)
			ff = e;
		snprintf(names[n], sizeof(names[n]),
		    "/tmp/kt-fuzz-merge.XXXXXX");
		if (temp_with(names[n], p, (size_t)(ff - p)) == -1)
			break;
		paths[n] = names[n];
		n++;
		if (ff == e)
			break;
		p = ff + 1;
	}
	if (n > 0 && (t = kt_bucket_merge(paths, n, &err)) != NULL) {
		(void)kt_table_rows(t);
		if ((fd = mkstemp(outpath)) != -1) {
			close(fd);
			if ((out = kt_out_open(outpath, -1, &err)) != NULL) {
				for (i = 0; i < 3; i++)
					(void)kt_table_write(t, forms[i], 1,
					    out);
				kt_out_abort(out);
			}
			unlink(outpath);
		}
		kt_table_free(t);
	}
	for (i = 0; i < n; i++)
		unlink(paths[i]);
	return 0;
}
