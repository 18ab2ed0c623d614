/*
 * fuzz/tsv.c: a libFuzzer harness for the reader's TSV event form.  The
 * input follows a TSV header (10 columns, or 11 with rank: the first
 * byte chooses), so that every run reaches the rows: the id, kind, ph,
 * ts_ns, dur_ns, pid, tid, cat, name and rank columns, the json
 * column's object, the trace row and its metadata.  It is read from
 * memory (with repairs, strict, skimming, with small buffers) and once
 * through kt_source_open() on a file (the path filters take): a memfd
 * made once and written again each run, opened as /proc/self/fd/N (a
 * regular file, as a temporary file on disk was, at a fraction of the
 * cost).  Any crash, leak or sanitizer report is a bug.
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

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The file of the kt_source_open() run, made once. */
static int memfd = -1;
static char mempath[64];

static const char hdr10[] =
    "id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\tjson\n";
static const char hdr11[] =
    "id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\trank\tjson\n";

/* Read every event of r, touching what the filters look at. */
static void
drain(struct kt_reader *r)
{
	struct kt_event ev;
	struct kt_error err;
	const struct kt_meta *m;
	struct kt_buf b = KT_BUF_INIT;
	struct kt_rows rows;
	size_t nm;
	int64_t v;
	int rc;

	while ((rc = kt_reader_next(r, &ev, &err)) == 1) {
		struct kt_val a;

		(void)kt_event_field_int(&ev, KT_F_CORR, &v);
		(void)kt_event_find(&ev, &ev.f[KT_F_ARGS], "rank", &a);
		b.n = 0;
		(void)kt_event_thread_key(&ev, &b);
	}
	m = kt_reader_metas(r, &nm);
	(void)m;
	(void)kt_reader_rows(r, &rows, NULL);
	kt_buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_error err;
	const char *hdr;
	char *buf;
	static const unsigned flagsets[] = { 0, KT_READ_STRICT, KT_READ_SKIM,
	    KT_READ_SMALL };
	size_t hn, n, i;

	if (size == 0)
		return 0;
	hdr = (data[0] & 1) ? hdr11 : hdr10;
	hn = strlen(hdr);
	n = hn + size - 1;
	if ((buf = malloc(n)) == NULL)
		return 0;
	memcpy(buf, hdr, hn);
	memcpy(buf + hn, data + 1, size - 1);
	for (i = 0; i < sizeof(flagsets) / sizeof(flagsets[0]); i++) {
		if ((r = kt_reader_mem(buf, n, "fuzz", flagsets[i])) == NULL)
			continue;
		drain(r);
		kt_reader_free(r);
	}
	if (memfd == -1 && (memfd = memfd_create("kt-fuzz-tsv", 0)) != -1)
		snprintf(mempath, sizeof(mempath), "/proc/self/fd/%d", memfd);
	if (memfd != -1 && ftruncate(memfd, 0) == 0 &&
	    pwrite(memfd, buf, n, 0) == (ssize_t)n &&
	    (src = kt_source_open(mempath, NULL, 0, &err)) != NULL) {
		while (kt_source_next(src, &r, &err) == 1) {
			(void)kt_reader_tail(r, &err);
			drain(r);
			kt_reader_free(r);
		}
		kt_source_close(src);
	}
	free(buf);
	return 0;
}
