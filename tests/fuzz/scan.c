/*
 * fuzz/scan.c: a libFuzzer harness for the parsers: the trace reader over
 * arbitrary bytes (JSON object or array form, TSV, with and without
 * repairs, and the survey's skim), and the event scanner on its own.  Any crash, leak or
 * sanitizer report is a bug; commit the input as a golden case.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kt.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_reader *r;
	struct kt_event ev;
	struct kt_error err;
	unsigned flags;
	int64_t v;

	static const unsigned modes[] = {
		0, KT_READ_STRICT, KT_READ_SKIM, KT_READ_SMALL,
		KT_READ_SKIM | KT_READ_SMALL
	};
	size_t m;

	/* Every mode of the reader: repairing, strict, the survey's skim. */
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		flags = modes[m];
		r = kt_reader_mem((const char *)data, size, "fuzz", flags);
		if (r == NULL)
			return 0;
		while (kt_reader_next(r, &ev, &err) == 1) {
			struct kt_val a;

			(void)kt_event_field_int(&ev, KT_F_CORR, &v);
			(void)kt_event_find(&ev, &ev.f[KT_F_ARGS], "rank", &a);
		}
		kt_reader_free(r);
	}
	memset(&ev, 0, sizeof(ev));
	(void)kt_event_scan((const char *)data, size, &ev, &err);
	return 0;
}
