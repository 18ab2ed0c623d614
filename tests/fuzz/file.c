/*
 * fuzz/file.c: a libFuzzer harness for the paths a filter's input takes
 * from a file: the plain file's tail parse (kt_reader_tail: the keys
 * after traceEvents, ktSourceIndex) and the libarchive sources.  The
 * first byte chooses how the rest is written to a temporary file:
 * plain, gzip, zstd or xz compressed, one or two tar members, or a zip
 * member stored or deflated (the small stored member is where an
 * overlapping copy once hid); the second byte's bits choose strict or
 * skimming reads.  Every trace of the source is then read to its end.
 * Any crash, leak or sanitizer report is a bug.
 */
#define _POSIX_C_SOURCE 200809L

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

/* Write the members (each data[0..n)) into an archive or a filter. */
static int
wrap(int how, const uint8_t *data, size_t n, const char *path)
{
	struct archive *a;
	struct archive_entry *e;
	int i, members = how == 4 ? 2 : 1, rc = 0;

	if ((a = archive_write_new()) == NULL)
		return -1;
	switch (how) {
	case 1:
		archive_write_add_filter_gzip(a);
		archive_write_set_format_raw(a);
		break;
	case 2:
		archive_write_add_filter_zstd(a);
		archive_write_set_format_raw(a);
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
		break;
	default:
		archive_write_add_filter_xz(a);
		archive_write_set_format_raw(a);
		break;
	}
	if (archive_write_open_filename(a, path) != ARCHIVE_OK) {
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
	archive_write_close(a);
	archive_write_free(a);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_source *src;
	struct kt_reader *r;
	struct kt_error err;
	struct kt_event ev;
	char path[] = "/tmp/kt-fuzz-file.XXXXXX";
	unsigned flags = 0;
	int fd, how, rc;

	if (size < 2)
		return 0;
	how = data[0] % 8;
	if (data[1] & 1)
		flags |= KT_READ_STRICT;
	if (data[1] & 2)
		flags |= KT_READ_SKIM;
	data += 2;
	size -= 2;
	if ((fd = mkstemp(path)) == -1)
		return 0;
	if (how == 0) {
		size_t off = 0;

		while (off < size) {
			ssize_t w = write(fd, data + off, size - off);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
		close(fd);
	} else {
		close(fd);
		if (wrap(how, data, size, path) == -1) {
			unlink(path);
			return 0;
		}
	}
	if ((src = kt_source_open(path, NULL, flags, &err)) != NULL) {
		while ((rc = kt_source_next(src, &r, &err)) == 1) {
			size_t n;

			if (kt_reader_tail(r, &err) != -1)
				while (kt_reader_next(r, &ev, &err) == 1)
					;
			(void)kt_reader_metas(r, &n);
			(void)kt_reader_srcindex(r, &n, NULL);
			kt_reader_free(r);
		}
		(void)rc;
		kt_source_close(src);
	}
	unlink(path);
	return 0;
}
