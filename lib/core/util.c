/*
 * util.c: small shared pieces: errors, growable buffers, a byte search.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kt.h"

/* Fill err (may be NULL) with a file name, position and message. */
void
kt_error_set(struct kt_error *err, const char *file, long line, long col,
    const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/*
 * Make room for n more bytes.  0, or -1 when out of memory, which sets
 * the sticky error: every later append fails too, so that a buffer is
 * checked once (b->err) after it is built, never left short silently.
 */
int
kt_buf_reserve(struct kt_buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->err)
		return -1;
	if (b->cap - b->n >= n)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->n < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = 1;
			return -1;
		}
		cap *= 2;
	}
	if ((p = realloc(b->p, cap)) == NULL) {
		b->err = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Append n bytes.  0 or -1. */
int
kt_buf_add(struct kt_buf *b, const void *s, size_t n)
{
	if (kt_buf_reserve(b, n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->p + b->n, s, n);
	b->n += n;
	return 0;
}

int
kt_buf_addc(struct kt_buf *b, char c)
{
	if (b->n < b->cap && !b->err) {
		b->p[b->n++] = c;
		return 0;
	}
	return kt_buf_add(b, &c, 1);
}

int
kt_buf_adds(struct kt_buf *b, const char *s)
{
	return kt_buf_add(b, s, strlen(s));
}

int
kt_buf_printf(struct kt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || kt_buf_reserve(b, (size_t)n + 1) == -1)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
	return 0;
}

void
kt_buf_clear(struct kt_buf *b)
{
	b->n = 0;
	b->err = 0;
}

void
kt_buf_free(struct kt_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
	b->err = 0;
}

/* Describe repair r in a few words, with its count. */
int
kt_repair_describe(const struct kt_repairs *r, enum kt_repair k, char *buf,
    size_t n)
{
	static const char *const what[KT_NREPAIRS][2] = {
		{ "byte-order mark removed", "byte-order marks removed" },
		{ "trailing comma removed", "trailing commas removed" },
		{ "truncated input closed", "truncated inputs closed" },
		{ "raw control character escaped",
		    "raw control characters escaped" },
		{ "invalid escape kept as a literal backslash",
		    "invalid escapes kept as literal backslashes" },
		{ "bare inf/nan made null", "bare inf/nan made null" },
		{ "empty {} event dropped", "empty {} events dropped" },
		{ "E without a B dropped", "E events without a B dropped" },
		{ "B without an E closed", "B events without an E closed" },
		{ "invalid UTF-8 byte replaced by U+FFFD",
		    "invalid UTF-8 bytes replaced by U+FFFD" },
		{ "event's numeric-string pid/tid made a number",
		    "events' numeric-string pids/tids made numbers" },
	};
	unsigned long long c = r->n[k];

	if ((unsigned)k >= KT_NREPAIRS)
		return -1;
	if (k == KT_R_TRUNCATED && r->tsv_cut)
		return snprintf(buf, n, "TSV input ends without its end row "
		    "(cut at a line boundary?): every row kept");
	if (k == KT_R_TRUNCATED)
		return snprintf(buf, n, "input truncated: every complete "
		    "event kept, arrays closed, %llu bytes dropped",
		    (unsigned long long)r->truncated_bytes);
	return snprintf(buf, n, "%llu %s", c, what[k][c != 1]);
}

/*
 * Where the n bytes of needle first occur in the hn bytes at hay, or
 * NULL (memmem(3)).  For the short texts kt looks in (an event's args,
 * tens to hundreds of bytes, for a key in quotes), glibc's memmem spends
 * more on its setup than on the search; here sixteen places are tried at
 * once for the needle's first and last bytes (SSE2), and only those that
 * match both are compared whole.
 */
const char *
kt_memfind(const char *hay, size_t hn, const char *needle, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return hay;
	if (n > hn)
		return NULL;
#ifdef __SSE2__
	{
		const __m128i f = _mm_set1_epi8(needle[0]);
		const __m128i l = _mm_set1_epi8(needle[n - 1]);

		for (; i + n - 1 + 16 <= hn; i += 16) {
			__m128i a = _mm_loadu_si128((const __m128i *)(const
			    void *)(hay + i));
			__m128i b = _mm_loadu_si128((const __m128i *)(const
			    void *)(hay + i + n - 1));
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(
			    _mm_cmpeq_epi8(a, f), _mm_cmpeq_epi8(b, l)));

			while (m != 0) {
				size_t j = i + (size_t)__builtin_ctz(m);

				if (memcmp(hay + j, needle, n) == 0)
					return hay + j;
				m &= m - 1;
			}
		}
	}
#endif
	for (; i + n <= hn; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}
