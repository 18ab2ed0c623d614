/*
 * fuzz/scan.c: a libFuzzer harness for the parsers: the trace reader over
 * arbitrary bytes (JSON object or array form, TSV, with and without
 * repairs, and the survey's skim), and the event scanner on its own.  Any crash, leak or
 * sanitizer report is a bug; commit the input as a golden case.  The
 * scanner's paths (kt_scan_path: portable, SSE2, AVX2 where the CPU has
 * it; KT_SCAN picks a reader's) read the same bytes to the same events,
 * fields, repairs and end, or the harness aborts; the survey's skim too
 * (on AVX2 the walk over bit masks takes a plain event's top-level
 * fields, on the others the skimmer's byte loop).  The bytes are also
 * minified (kt_json_minify, the TSV form's json column) by each of its
 * ways the CPU has, into room of exactly their length and sixteen, and
 * each must give the byte loop's bytes.
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"
#include "core/ktint.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What a read gives: each event's bytes and fields, then the end. */
static void
digest(const uint8_t *data, size_t size, const char *path, unsigned flags,
    char **out, size_t *outlen)
{
	struct kt_reader *r;
	struct kt_event ev;
	struct kt_error err;
	FILE *f;
	int rc, k;

	setenv("KT_SCAN", path, 1);
	r = kt_reader_mem((const char *)data, size, "fuzz", flags);
	unsetenv("KT_SCAN");
	if ((f = open_memstream(out, outlen)) == NULL || r == NULL)
		abort();
	while ((rc = kt_reader_next(r, &ev, &err)) == 1) {
		fprintf(f, "%llu %zu %x %lld %lld %u %d %d|",
		    (unsigned long long)ev.index, ev.len, ev.flags,
		    (long long)ev.ts, (long long)ev.dur, ev.known, (int)ev.kind,
		    ev.ph);
		fwrite(ev.raw, 1, ev.len, f);
		for (k = 0; k < KT_NFIELDS; k++)
			fprintf(f, " %u:%u:%u", ev.f[k].off, ev.f[k].len,
			    ev.f[k].type);
	}
	fprintf(f, "end %d %ld %ld %s", rc, rc == -1 ? err.line : 0,
	    rc == -1 ? err.col : 0, rc == -1 ? err.msg : "");
	fclose(f);
	kt_reader_free(r);
}

/* Every way of kt_json_minify the CPU has against the byte loop. */
static void
minify_ways(const uint8_t *data, size_t size)
{
	typedef size_t (*way)(const char *, size_t, char *);
	way ways[3];
	char *in = malloc(size ? size : 1), *want = malloc(size + 16);
	char *got = malloc(size + 16);
	size_t wn, gn, nw = 0, i;

	if (in == NULL || want == NULL || got == NULL)
		abort();
	memcpy(in, data, size);
#ifdef __SSE2__
	ways[nw++] = kt_minify_sse2;
#endif
#ifdef KT_MINIFY_SSSE3
	if (kt_minify_have_ssse3())
		ways[nw++] = kt_minify_ssse3;
#endif
#ifdef KT_MINIFY_AVX512
	if (kt_minify_have_avx512())
		ways[nw++] = kt_minify_avx512;
#endif
	wn = kt_minify_scalar(in, size, want);
	for (i = 0; i < nw; i++) {
		gn = ways[i](in, size, got);
		if (gn != wn || memcmp(got, want, wn) != 0) {
			fprintf(stderr, "scan: minify way %zu writes otherwise "
			    "than the byte loop\n", i);
			abort();
		}
	}
	free(in);
	free(want);
	free(got);
}

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

	/* Every path of the scanner reads what the portable one reads. */
	for (m = 0; m < 3; m++) {
		static const char *const paths[] = { "sse2", "avx2" };
		char *want = NULL, *got = NULL;
		size_t wn = 0, gn = 0, i;

		flags = m == 2 ? KT_READ_SKIM : m ? KT_READ_STRICT : 0;
		digest(data, size, "portable", flags, &want, &wn);
		for (i = 0; i < 2; i++) {
			if (kt_scan_path(paths[i]) == -1)
				continue;
			digest(data, size, paths[i], flags, &got, &gn);
			if (gn != wn || memcmp(got, want, wn) != 0) {
				fprintf(stderr, "scan: KT_SCAN=%s reads "
				    "otherwise than portable\n", paths[i]);
				abort();
			}
			free(got);
			got = NULL;
		}
		free(want);
	}
	minify_ways(data, size);
	return 0;
}
