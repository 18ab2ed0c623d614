/*
 * fuzz/file.c: a libFuzzer harness for the paths a filter's input takes
 * from a file: the plain file's tail parse (kt_reader_tail: the keys
 * after traceEvents, ktSourceIndex) and the libarchive sources.  The
 * first byte chooses how the rest is written: plain, gzip, zstd, xz or
 * bzip2 compressed, one or two tar members, a gzipped tar, or a zip
 * member stored or deflated (the small stored member is where an
 * overlapping copy once hid); the second byte's bits choose strict or
 * skimming reads.  Every trace of the source is then read to its end.
 * A plain or gzip file is also read in pieces (kt_ahead's split mode,
 * kt(7) Threads; the piece size from the second byte's other bits; a
 * gzip file's from its decoder thread's window, which KT_SPLIT starts
 * for a file this small) and its events, repairs and end compared with
 * the one reader's: a difference aborts.  Any crash, leak or sanitizer
 * report is a bug.
 *
 * Speed (10 million runs must fit a campaign): the file is a memfd,
 * written again in place each run and opened by kt_source_open() as
 * /proc/self/fd/N (a regular file, so the tail parse runs), instead of
 * a new temporary file on disk; the archives are made in memory; and
 * the compressors run at their lowest levels (xz's default preset
 * alone allocated about 94 MB a run).  The decompressors, the bytes kt
 * reads and every path of kt's are the same.
 */
#define _GNU_SOURCE

#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "kt.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);


#define NHOW	10
#define OUTMAX	(1 << 19)	/* the largest archive of 64 KiB, twice */

/* The memfd every run writes and its /proc path; made once. */
static int memfd = -1;
static char mempath[64];
static unsigned char *outbuf;

static int
setup(void)
{
	if (memfd != -1)
		return 0;
	if ((outbuf = malloc(OUTMAX)) == NULL)
		return -1;
	if ((memfd = memfd_create("kt-fuzz-file", 0)) == -1)
		return -1;
	snprintf(mempath, sizeof(mempath), "/proc/self/fd/%d", memfd);
	return 0;
}

/* Replace the memfd's contents with p[0..n).  0 or -1. */
static int
put(const unsigned char *p, size_t n)
{
	size_t off = 0;

	if (ftruncate(memfd, 0) == -1)
		return -1;
	while (off < n) {
		ssize_t w = pwrite(memfd, p + off, n - off, (off_t)off);

		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* Write the members (each data[0..n)) into an archive or a filter. */
static int
wrap(int how, const uint8_t *data, size_t n)
{
	struct archive *a;
	struct archive_entry *e;
	size_t used = 0;
	int i, members = how == 4 ? 2 : 1, rc = 0;

	if ((a = archive_write_new()) == NULL)
		return -1;
	switch (how) {
	case 1:
		archive_write_add_filter_gzip(a);
		archive_write_set_format_raw(a);
		archive_write_set_filter_option(a, "gzip",
		    "compression-level", "1");
		break;
	case 2:
		archive_write_add_filter_zstd(a);
		archive_write_set_format_raw(a);
		archive_write_set_filter_option(a, "zstd",
		    "compression-level", "1");
		break;
	case 3:
	case 4:
		archive_write_set_format_ustar(a);
		break;
	case 5:
		archive_write_set_format_zip(a);
		archive_write_set_options(a, "zip:compression=store");
		break;
	case 6:
		archive_write_set_format_zip(a);
		archive_write_set_options(a, "zip:compression-level=1");
		break;
	case 7:
		archive_write_add_filter_xz(a);
		archive_write_set_format_raw(a);
		archive_write_set_filter_option(a, "xz",
		    "compression-level", "0");
		break;
	case 8:
		archive_write_add_filter_bzip2(a);
		archive_write_set_format_raw(a);
		archive_write_set_filter_option(a, "bzip2",
		    "compression-level", "1");
		break;
	default:
		archive_write_add_filter_gzip(a);
		archive_write_set_format_ustar(a);
		archive_write_set_filter_option(a, "gzip",
		    "compression-level", "1");
		break;
	}
	if (archive_write_open_memory(a, outbuf, OUTMAX, &used) !=
	    ARCHIVE_OK) {
		archive_write_free(a);
		return -1;
	}
	for (i = 0; i < members && rc == 0; i++) {
		if ((e = archive_entry_new()) == NULL)
			break;
		archive_entry_set_pathname(e, i == 0 ? "rank0.json" :
		    "dir/rank1.json");
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)n);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    (n > 0 && archive_write_data(a, data, n) < 0))
			rc = -1;
		archive_entry_free(e);
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		rc = -1;
	archive_write_free(a);
	return rc == -1 ? -1 : put(outbuf, used);
}

/* An event as the one reader gave it: what split reading must match. */
struct seen {
	uint64_t	 index, end;
	size_t		 len;
	uint64_t	 hash;		/* FNV-1a of its bytes */
	unsigned	 flags;
};

static uint64_t
fnv(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

/*
 * Read the plain or gzip file at mempath with the one reader, then in
 * pieces of piece bytes (KT_SPLIT), and abort unless both give the same
 * events, the same repairs and the same end (status, message, place).
 */
static void
split_diff(unsigned flags, unsigned piece)
{
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_ahead *ah;
	struct kt_error e1, e2;
	struct kt_event ev;
	struct kt_repairs rep;
	struct seen *s = NULL;
	size_t n = 0, cap = 0, i = 0;
	char num[24];
	int rc1, rc2;

	memset(&e1, 0, sizeof(e1));
	memset(&e2, 0, sizeof(e2));
	if ((src = kt_source_open(mempath, NULL, flags, &e1)) == NULL)
		return;
	if (kt_source_next(src, &r, &e1) != 1) {
		kt_source_close(src);
		return;
	}
	while ((rc1 = kt_reader_next(r, &ev, &e1)) == 1) {
		if (n == cap) {
			struct seen *t;

			cap = cap ? cap * 2 : 64;
			if ((t = realloc(s, cap * sizeof(*t))) == NULL)
				abort();
			s = t;
		}
		s[n].index = ev.index;
		s[n].end = ev.end;
		s[n].len = ev.len;
		s[n].hash = fnv(ev.raw, ev.len);
		/* KT_EV_SEP is a hint: a piece's first event lacks it. */
		s[n].flags = ev.flags & ~(unsigned)KT_EV_SEP;
		n++;
	}
	rep = *kt_reader_repairs(r);
	kt_reader_free(r);
	kt_source_close(src);

	snprintf(num, sizeof(num), "%u", piece);
	setenv("KT_SPLIT", num, 1);
	if ((src = kt_source_open(mempath, NULL, flags, &e2)) == NULL ||
	    kt_source_next(src, &r, &e2) != 1)
		abort();
	ah = kt_ahead_start(r, NULL);
	while ((rc2 = kt_ahead_next(ah, r, &ev, &e2)) == 1) {
		if (i >= n || s[i].index != ev.index || s[i].end != ev.end ||
		    s[i].len != ev.len || s[i].hash != fnv(ev.raw, ev.len) ||
		    s[i].flags != (ev.flags & ~(unsigned)KT_EV_SEP))
			abort();
		i++;
	}
	kt_ahead_stop(ah);
	if (i != n || rc1 != rc2 || (rc1 == -1 && (e1.line != e2.line ||
	    e1.col != e2.col || strcmp(e1.msg, e2.msg) != 0)) ||
	    memcmp(rep.n, kt_reader_repairs(r)->n, sizeof(rep.n)) != 0 ||
	    rep.truncated_bytes != kt_reader_repairs(r)->truncated_bytes)
		abort();
	unsetenv("KT_SPLIT");
	kt_reader_free(r);
	kt_source_close(src);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_error err;
	struct kt_event ev;
	unsigned flags = 0;
	int how, rc;

	if (size < 2 || size > 65536 || setup() == -1)
		return 0;
	how = data[0] % NHOW;
	if (data[1] & 1)
		flags |= KT_READ_STRICT;
	if (data[1] & 2)
		flags |= KT_READ_SKIM;
	data += 2;
	size -= 2;
	if ((how == 0 ? put(data, size) : wrap(how, data, size)) == -1)
		return 0;
	if ((how == 0 || how == 1) && (data[-1] & 4))
		split_diff(flags, 8 + (unsigned)(data[-1] >> 3) * 61u);
	if ((src = kt_source_open(mempath, NULL, flags, &err)) != NULL) {
		while ((rc = kt_source_next(src, &r, &err)) == 1) {
			struct kt_rows rows;
			uint64_t sum = 0;
			size_t n, k;

			if (kt_reader_tail(r, &err) != -1)
				while (kt_reader_next(r, &ev, &err) == 1)
					;
			(void)kt_reader_metas(r, &n);
			/* Every row number read (ASan sees the array). */
			if (kt_reader_rows(r, &rows, NULL))
				for (k = 0; k < rows.n; k++)
					sum += kt_rows_at(&rows, k);
			(void)sum;
			kt_reader_free(r);
		}
		(void)rc;
		kt_source_close(src);
	}
	return 0;
}
