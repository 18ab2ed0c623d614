/*
 * scan.c: the streaming JSON scanner.  It walks one JSON value over raw
 * bytes with an explicit stack (so deep nesting cannot overflow the C
 * stack), validates it, records where an event's fields are, and notes
 * the repairs that damaged input needs.  It never builds a DOM and never
 * copies the bytes it scans.
 */
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>

/* Sixteen bytes at b, unaligned. */
#define LOAD16(b)	_mm_loadu_si128((const __m128i *)(const void *)(b))

/* AVX2 is compiled in on x86-64 (GCC, clang) and used where the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KT_SCAN_HAVE_AVX2	1
#endif
#endif

#include "ktint.h"

const unsigned char kt_ws[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1
};

/* Bytes that stop the fast loop inside a string: quote, backslash,
 * controls, and the bytes of UTF-8 sequences (validated one by one). */
static const unsigned char strstop[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1,
	[0x80] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};

/*
 * The length of the well-formed UTF-8 sequence at b[p] (a byte >= 0x80),
 * 0 when it is not one, or -1 when it may be one but runs past end.
 */
static int
utf8_len(const unsigned char *b, size_t p, size_t end)
{
	unsigned c = b[p], lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* no more than U+10FFFF */
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if (p + (size_t)i >= end)
			return -1;
		c = b[p + (size_t)i];
		if (c < lo || c > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

static const unsigned char isdig[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
	['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1
};

static const unsigned char ishex[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
	['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1
};

/*
 * The runs the scanner spends its time in: a string's plain bytes,
 * whitespace, and a number's digits.  Each returns the first byte at or
 * after p that ends the run (end if none does); they read nothing at or
 * past end.  There is one set of runs for each of the scanner's paths
 * (KT_SCAN): the portable byte loops, sixteen bytes at a time with SSE2
 * (every x86-64), and thirty-two with AVX2, chosen at run time where
 * the CPU has it.  A wide run finishes with the narrower ones.
 */
/* The first strstop byte at or after p. */
static inline size_t
str_run_portable(const unsigned char *b, size_t p, size_t end)
{
	while (p + 4 <= end && !strstop[b[p]] && !strstop[b[p + 1]] &&
	    !strstop[b[p + 2]] && !strstop[b[p + 3]])
		p += 4;
	while (p < end && !strstop[b[p]])
		p++;
	return p;
}

/* The first byte at or after p that is not whitespace. */
static inline size_t
ws_run_portable(const unsigned char *b, size_t p, size_t end)
{
	while (p < end && kt_ws[b[p]])
		p++;
	return p;
}

/* The first byte at or after p that is not a decimal digit. */
static inline size_t
digit_run_portable(const unsigned char *b, size_t p, size_t end)
{
	while (p < end && isdig[b[p]])
		p++;
	return p;
}

#ifdef __SSE2__
#define ALWAYS	__attribute__((always_inline))

/*
 * Sixteen bytes' stop masks, a bit set for each byte that ends a run: a
 * string's plain run ends at a quote, a backslash, or (signed below
 * 0x20) a control or a byte of 0x80-0xff; white space at any other byte;
 * digits at any other byte (signed: 0x80-0xff are below '0').
 */
static inline ALWAYS unsigned
str_stop16(__m128i x)
{
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
	    _mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
	    _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
	    _mm_cmplt_epi8(x, _mm_set1_epi8(0x20))));
}

static inline ALWAYS unsigned
ws_stop16(__m128i x)
{
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
	    _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')),
	    _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
	    _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\t')),
	    _mm_cmpeq_epi8(x, _mm_set1_epi8('\r'))))) ^ 0xffffu;
}

static inline ALWAYS unsigned
digit_stop16(__m128i x)
{
	return (unsigned)_mm_movemask_epi8(_mm_and_si128(
	    _mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
	    _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)))) ^ 0xffffu;
}

/*
 * In a run (b, p, end in scope): return the first byte at or after p
 * whose bit stop16 sets, sixteen bytes at a time, or go on with p where
 * fewer than sixteen are left.
 */
#define RUN16(stop16) do {						\
	for (; p + 16 <= end; p += 16) {				\
		unsigned k_ = stop16(LOAD16(b + p));			\
									\
		if (k_ != 0)						\
			return p + (size_t)__builtin_ctz(k_);		\
	}								\
} while (0)

static inline ALWAYS size_t
str_run_sse2(const unsigned char *b, size_t p, size_t end)
{
	RUN16(str_stop16);
	return str_run_portable(b, p, end);
}

/* A run of white space from b[p] on, two bytes or more. */
static size_t __attribute__((noinline))
ws_long_sse2(const unsigned char *b, size_t p, size_t end)
{
	RUN16(ws_stop16);
	return ws_run_portable(b, p, end);
}

/* Most runs are one space, or none: those two bytes inline. */
#define WS_SHORT(b, p, end, long_run) do {				\
	if (p >= end || !kt_ws[b[p]])					\
		return p;						\
	if (++p >= end || !kt_ws[b[p]])					\
		return p;						\
	return long_run(b, p, end);					\
} while (0)

static inline ALWAYS size_t
ws_run_sse2(const unsigned char *b, size_t p, size_t end)
{
	WS_SHORT(b, p, end, ws_long_sse2);
}

static inline ALWAYS size_t
digit_run_sse2(const unsigned char *b, size_t p, size_t end)
{
	RUN16(digit_stop16);
	return digit_run_portable(b, p, end);
}
#endif /* __SSE2__ */

#ifdef KT_SCAN_HAVE_AVX2
#define AVX2	__attribute__((target("avx2,pclmul")))
#define LOAD32(b)	_mm256_loadu_si256((const __m256i *)(const void *)(b))

/* Thirty-two bytes' stop masks, as the sixteen bytes' above. */
AVX2 static inline ALWAYS unsigned
str_stop32(__m256i x)
{
	return (unsigned)_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('"')),
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\'))),
	    _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), x)));
}

AVX2 static inline ALWAYS unsigned
ws_stop32(__m256i x)
{
	return ~(unsigned)_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8(' ')),
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('\n'))),
	    _mm256_or_si256(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('\t')),
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('\r')))));
}

AVX2 static inline ALWAYS unsigned
digit_stop32(__m256i x)
{
	return ~(unsigned)_mm256_movemask_epi8(_mm256_and_si256(
	    _mm256_cmpgt_epi8(x, _mm256_set1_epi8('0' - 1)),
	    _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), x)));
}

/*
 * RUN16's with AVX2: the first sixteen bytes with SSE2 instructions
 * (most strings, white space and numbers end there, where a 32-byte
 * load costs more), then thirty-two at a time.
 */
#define RUN32(stop16, stop32) do {					\
	if (p + 16 <= end) {						\
		unsigned k_ = stop16(LOAD16(b + p));			\
									\
		if (k_ != 0)						\
			return p + (size_t)__builtin_ctz(k_);		\
		p += 16;						\
	}								\
	for (; p + 32 <= end; p += 32) {				\
		unsigned k_ = stop32(LOAD32(b + p));			\
									\
		if (k_ != 0)						\
			return p + (size_t)__builtin_ctz(k_);		\
	}								\
} while (0)

AVX2 static inline ALWAYS size_t
str_run_avx2(const unsigned char *b, size_t p, size_t end)
{
	RUN32(str_stop16, str_stop32);
	return str_run_sse2(b, p, end);
}

AVX2 static size_t __attribute__((noinline))
ws_long_avx2(const unsigned char *b, size_t p, size_t end)
{
	RUN32(ws_stop16, ws_stop32);
	return ws_long_sse2(b, p, end);
}

AVX2 static inline ALWAYS size_t
ws_run_avx2(const unsigned char *b, size_t p, size_t end)
{
	WS_SHORT(b, p, end, ws_long_avx2);
}

AVX2 static inline ALWAYS size_t
digit_run_avx2(const unsigned char *b, size_t p, size_t end)
{
	RUN32(digit_stop16, digit_stop32);
	return digit_run_sse2(b, p, end);
}
#endif /* KT_SCAN_HAVE_AVX2 */

static const char hexd[] = "0123456789abcdef";

/* Record an edit; returns -1 when out of memory. */
static int
add_edit(struct kt_scanner *sc, size_t off, size_t del, const char *ins,
    size_t inslen, int repair)
{
	struct kt_scan_edit *e;

	if (sc->nedits == sc->capedits) {
		size_t cap = sc->capedits ? sc->capedits * 2 : 16;

		if ((e = realloc(sc->edits, cap * sizeof(*e))) == NULL)
			return -1;
		sc->edits = e;
		sc->capedits = cap;
	}
	e = &sc->edits[sc->nedits++];
	e->off = off;
	e->del = del;
	if (inslen > 0)
		memcpy(e->ins, ins, inslen);
	e->inslen = (uint8_t)inslen;
	e->repair = (uint8_t)repair;
	return 0;
}

/*
 * Record the byte at off for a repair that kt_scan_apply writes byte by
 * byte (KT_R_CONTROL, KT_R_UTF8): a run of such bytes is one edit, so
 * that memory stays bounded by the event (a record per run, not per
 * byte).  0, or -1 when out of memory.
 */
static int
run_edit(struct kt_scanner *sc, size_t off, int repair)
{
	struct kt_scan_edit *last = sc->nedits > 0 ?
	    &sc->edits[sc->nedits - 1] : NULL;

	if (last != NULL && last->repair == repair &&
	    last->off + last->del == off) {
		last->del++;
		return 0;
	}
	return add_edit(sc, off, 1, NULL, 0, repair);
}

#define FAIL(at, m) do { sc->err_off = (at); sc->err_msg = (m); \
	return KT_SCAN_ERR; } while (0)

/*
 * A repair at offset at: an error in strict mode, else an edit.
 */
#define REPAIR(at, del, ins, inslen, r, m) do {				\
	if (sc->strict)							\
		FAIL(at, m);						\
	if (add_edit(sc, at, del, ins, inslen, r) == -1)		\
		FAIL(at, "out of memory");				\
} while (0)

/* Case-insensitive match of word at b[p..end). */
static int
matchword(const unsigned char *b, size_t p, size_t end, const char *w)
{
	size_t i;

	for (i = 0; w[i] != '\0'; i++) {
		unsigned char c;

		if (p + i >= end)
			return -1;	/* need more */
		c = b[p + i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		if (c != (unsigned char)w[i])
			return 0;
	}
	return (int)i;
}

/* The field a key at the event's top level names, or -1. */
static int
top_field(const unsigned char *k, size_t n)
{
	switch (n) {
	case 1:
		if (k[0] == 's')
			return KT_F_S;
		break;
	case 2:
		if (k[0] == 'p' && k[1] == 'h')
			return KT_F_PH;
		if (k[0] == 't' && k[1] == 's')
			return KT_F_TS;
		if (k[0] == 'i' && k[1] == 'd')
			return KT_F_ID;
		if (k[0] == 'b' && k[1] == 'p')
			return KT_F_BP;
		break;
	case 3:
		if (memcmp(k, "cat", 3) == 0)
			return KT_F_CAT;
		if (memcmp(k, "pid", 3) == 0)
			return KT_F_PID;
		if (memcmp(k, "tid", 3) == 0)
			return KT_F_TID;
		if (memcmp(k, "dur", 3) == 0)
			return KT_F_DUR;
		break;
	case 4:
		if (memcmp(k, "name", 4) == 0)
			return KT_F_NAME;
		if (memcmp(k, "args", 4) == 0)
			return KT_F_ARGS;
		break;
	}
	return -1;
}

/* The field a key inside args names, or -1. */
static int
arg_field(const unsigned char *k, size_t n)
{
	switch (n) {
	case 4:
		if (memcmp(k, "rank", 4) == 0)
			return KT_F_RANK;
		break;
	case 5:
		if (memcmp(k, "bytes", 5) == 0)
			return KT_F_BYTES;
		if (memcmp(k, "Bytes", 5) == 0)
			return KT_F_MBYTES;
		break;
	case 6:
		if (memcmp(k, "stream", 6) == 0)
			return KT_F_STREAM;
		if (memcmp(k, "device", 6) == 0)
			return KT_F_DEVICE;
		break;
	case 9:
		if (memcmp(k, "Device Id", 9) == 0)
			return KT_F_DEVID;
		break;
	case 11:
		if (memcmp(k, "External id", 11) == 0)
			return KT_F_EXTID;
		if (memcmp(k, "correlation", 11) == 0)
			return KT_F_CORR;
		if (memcmp(k, "Device Type", 11) == 0)
			return KT_F_DEVTYPE;
		break;
	case 14:
		if (memcmp(k, "Total Reserved", 14) == 0)
			return KT_F_MRESV;
		break;
	case 15:
		if (memcmp(k, "Total Allocated", 15) == 0)
			return KT_F_MALLOC;
		break;
	}
	return -1;
}

/* The open containers: the scanner's own few bytes until they fill. */
#define STACK(sc)	((sc)->stack != NULL ? (sc)->stack : (sc)->inl)

/* Room for level depth on the stack, past the inline levels.  0 or -1. */
static int
push_grow(struct kt_scanner *sc, size_t depth)
{
	size_t cap = sc->stackcap ? sc->stackcap * 2 : 2 * sizeof(sc->inl);
	unsigned char *s;

	while (cap <= depth)
		cap *= 2;
	if ((s = realloc(sc->stack, cap)) == NULL)
		return -1;
	if (sc->stack == NULL)
		memcpy(s, sc->inl, sizeof(sc->inl));
	sc->stack = s;
	sc->stackcap = cap;
	return 0;
}

/* Level depth is c (an object's or array's opening byte).  0 or -1. */
static inline int
push(struct kt_scanner *sc, size_t depth, unsigned char c)
{
	if (depth >= sizeof(sc->inl) && depth >= sc->stackcap &&
	    push_grow(sc, depth) == -1)
		return -1;
	STACK(sc)[depth] = c;
	return 0;
}

/*
 * The scanner's paths (KT_SCAN_PORTABLE, _SSE2, _AVX2): scan_body.h once
 * for each, with its runs.
 */
#define SCAN_ATTR
#define SCAN_FN(name)	name##_portable
#define STR_RUN		str_run_portable
#define WS_RUN		ws_run_portable
#define DIGIT_RUN	digit_run_portable
#include "scan_body.h"
#undef SCAN_FN
#undef STR_RUN
#undef WS_RUN
#undef DIGIT_RUN

#ifdef __SSE2__
#define SCAN_FN(name)	name##_sse2
#define STR_RUN		str_run_sse2
#define WS_RUN		ws_run_sse2
#define DIGIT_RUN	digit_run_sse2
#include "scan_body.h"
#undef SCAN_FN
#undef STR_RUN
#undef WS_RUN
#undef DIGIT_RUN
#endif
#undef SCAN_ATTR

#ifdef KT_SCAN_HAVE_AVX2
#define SCAN_ATTR	AVX2
#define SCAN_FN(name)	name##_avx2
#define STR_RUN		str_run_avx2
#define WS_RUN		ws_run_avx2
#define DIGIT_RUN	digit_run_avx2
#include "scan_body.h"
#undef SCAN_FN
#undef STR_RUN
#undef WS_RUN
#undef DIGIT_RUN
#undef SCAN_ATTR
#include "scan_fast.h"
#endif

/* Append buf[pos..endp) to out with the scanner's edits applied. */
int
kt_scan_apply(const struct kt_scanner *sc, const char *buf, size_t pos,
    size_t endp, struct kt_buf *out)
{
	size_t i, at = pos;

	for (i = 0; i < sc->nedits; i++) {
		const struct kt_scan_edit *e = &sc->edits[i];

		if (kt_buf_add(out, buf + at, e->off - at) == -1)
			return -1;
		if (e->repair == KT_R_CONTROL) {
			/* Each control byte of the run as \u00XX. */
			size_t k;
			char u[6] = { '\\', 'u', '0', '0', 0, 0 };

			for (k = 0; k < e->del; k++) {
				unsigned char c = (unsigned char)buf[e->off + k];

				u[4] = hexd[c >> 4];
				u[5] = hexd[c & 15];
				if (kt_buf_add(out, u, 6) == -1)
					return -1;
			}
		} else if (e->repair == KT_R_UTF8) {
			size_t k;

			for (k = 0; k < e->del; k++)
				if (kt_buf_add(out, "\xef\xbf\xbd", 3) == -1)
					return -1;
		} else if (kt_buf_add(out, e->ins, e->inslen) == -1)
			return -1;
		at = e->off + e->del;
	}
	return kt_buf_add(out, buf + at, endp - at);
}

void
kt_scanner_free(struct kt_scanner *sc)
{
	int path = sc->path;

	free(sc->stack);
	free(sc->edits);
	memset(sc, 0, sizeof(*sc));
	sc->path = path;
}

/* Record the scalar value [vstart, e) (trailing space trimmed). */
static void
skim_scalar(const unsigned char *b, size_t pos, size_t vstart, size_t e,
    struct kt_val *v)
{
	while (e > vstart && kt_ws[b[e - 1]])
		e--;
	v->off = (uint32_t)(vstart - pos);
	v->len = (uint32_t)(e - vstart);
	v->type = b[vstart] == 't' ? KT_TRUE : b[vstart] == 'f' ? KT_FALSE :
	    b[vstart] == 'n' ? KT_NULL : KT_NUMBER;
}

/* Bytes the skimmer stops at outside strings. */
static const unsigned char skimstop[256] = {
	['"'] = 1, ['{'] = 2, ['['] = 2, ['}'] = 3, [']'] = 3, [':'] = 4,
	[','] = 5
};

/* The same below the event's top level, where ':' and ',' do nothing. */
static const unsigned char deepstop[256] = {
	['"'] = 1, ['{'] = 2, ['['] = 2, ['}'] = 3, [']'] = 3
};

static int
skim_value(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t p = pos, depth = 0, vstart = 0;
	int want_key = 0, field = -1, kf = -1;

	sc->nkeys = 0;
	sc->nedits = 0;
	sc->plain_nums = 0;
	memset(ev->f, 0, sizeof(ev->f));
	/* The top-level fields (a metadata event's args too, unmarked). */
	ev->known = KT_FBIT(KT_F_FIRSTARG) - 1;
	for (;;) {
		const unsigned char *stop = depth == 1 ? skimstop : deepstop;

		while (p + 4 <= end && !stop[b[p]] && !stop[b[p + 1]] &&
		    !stop[b[p + 2]] && !stop[b[p + 3]])
			p += 4;
		while (p < end && !stop[b[p]])
			p++;
		if (p >= end)
			return KT_SCAN_MORE;
		switch (stop[b[p]]) {
		case 1: {
			const unsigned char *q = b + p + 1;

			for (;;) {
				size_t k = 0;

				q = memchr(q, '"', (size_t)(b + end - q));
				if (q == NULL)
					return KT_SCAN_MORE;
				while (q - k - 1 > b + p && q[-(long)k - 1] == '\\')
					k++;
				if (k % 2 == 0)
					break;
				q++;
			}
			if (depth == 1 && want_key) {
				kf = top_field(b + p + 1, (size_t)(q - b - p - 1));
				sc->nkeys++;
			} else if (depth == 1 && kf >= 0) {
				ev->f[kf].off = (uint32_t)(p - pos);
				ev->f[kf].len = (uint32_t)(q - b + 1 - p);
				ev->f[kf].type = KT_STRING;
				kf = -1;
			}
			p = (size_t)(q - b) + 1;
			continue;
		}
		case 2:
			if (depth == 1 && !want_key && kf >= 0) {
				field = kf;
				vstart = p;
			}
			depth++;
			if (depth == 1)
				want_key = 1;
			p++;
			continue;
		case 3:
			if (depth == 0) {
				sc->err_off = p;
				sc->err_msg = "mismatched bracket";
				return KT_SCAN_ERR;
			}
			if (depth == 1 && field >= 0) {
				skim_scalar(b, pos, vstart, p, &ev->f[field]);
				field = kf = -1;
			}
			depth--;
			p++;
			if (depth == 1 && field >= 0) {
				ev->f[field].off = (uint32_t)(vstart - pos);
				ev->f[field].len = (uint32_t)(p - vstart);
				ev->f[field].type = b[vstart] == '{' ? KT_OBJECT :
				    KT_ARRAY;
				field = kf = -1;
			}
			if (depth == 0) {
				*endp = p;
				return KT_SCAN_OK;
			}
			continue;
		case 4:
			p++;
			if (depth != 1)
				continue;
			want_key = 0;
			if (kf < 0)
				continue;
			/* A scalar value of a field we want starts here. */
			while (p < end && kt_ws[b[p]])
				p++;
			if (p >= end)
				return KT_SCAN_MORE;
			if (!skimstop[b[p]]) {
				field = kf;
				vstart = p;
			}
			continue;
		case 5:
			if (depth == 1) {
				if (field >= 0) {
					skim_scalar(b, pos, vstart, p,
					    &ev->f[field]);
					field = -1;
				}
				kf = -1;
				want_key = 1;
			}
			p++;
			continue;
		}
	}
}

#ifdef KT_DEBUG_SCANS
/*
 * The debug build's count of events scanned whole and skimmed: the one
 * piece of state the core keeps, and only there (the layers test reads
 * the objects of the ordinary build).
 */
static uint64_t debug_scans[2];

void
kt_debug_scans(uint64_t *scans, uint64_t *skims)
{
	*scans = __atomic_load_n(&debug_scans[0], __ATOMIC_RELAXED);
	*skims = __atomic_load_n(&debug_scans[1], __ATOMIC_RELAXED);
}
#define COUNT(k)	__atomic_add_fetch(&debug_scans[k], 1, __ATOMIC_RELAXED)
#else
#define COUNT(k)	(void)0
#endif

/* The scanner's paths by name (KT_SCAN), and whether this machine runs each. */
static const char *const path_names[] = {
	[KT_SCAN_PORTABLE] = "portable",
	[KT_SCAN_SSE2] = "sse2",
	[KT_SCAN_AVX2] = "avx2"
};

static int
path_runs(int path)
{
	switch (path) {
	case KT_SCAN_PORTABLE:
		return 1;
#ifdef __SSE2__
	case KT_SCAN_SSE2:
		return 1;
#endif
#ifdef KT_SCAN_HAVE_AVX2
	case KT_SCAN_AVX2:
		return __builtin_cpu_supports("avx2") != 0 &&
		    __builtin_cpu_supports("pclmul") != 0;
#endif
	default:
		return 0;
	}
}

int
kt_scan_path_best(void)
{
	return path_runs(KT_SCAN_AVX2) ? KT_SCAN_AVX2 :
	    path_runs(KT_SCAN_SSE2) ? KT_SCAN_SSE2 : KT_SCAN_PORTABLE;
}

int
kt_scan_path(const char *name)
{
	int i;

	if (name == NULL || *name == '\0')
		return kt_scan_path_best();
	for (i = KT_SCAN_PORTABLE; i <= KT_SCAN_AVX2; i++)
		if (strcmp(name, path_names[i]) == 0)
			return path_runs(i) ? i : -1;
	return -1;
}

const char *
kt_scan_path_name(int path)
{
	return path >= KT_SCAN_PORTABLE && path <= KT_SCAN_AVX2 ?
	    path_names[path] : "?";
}

int
kt_scan_value(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	int rc;

	if (sc->path == 0)
		sc->path = kt_scan_path_best();
	switch (sc->path) {
#ifdef KT_SCAN_HAVE_AVX2
	case KT_SCAN_AVX2:
		/* Most events are plain: first the walk over bit masks. */
		if (ev != NULL &&
		    fast_event_avx2(sc, buf, pos, end, endp, ev) == KT_SCAN_OK) {
			rc = KT_SCAN_OK;
			break;
		}
		rc = scan_value_avx2(sc, buf, pos, end, endp, ev);
		break;
#endif
#ifdef __SSE2__
	case KT_SCAN_SSE2:
		rc = scan_value_sse2(sc, buf, pos, end, endp, ev);
		break;
#endif
	default:
		rc = scan_value_portable(sc, buf, pos, end, endp, ev);
		break;
	}

	/* An event scanned to its end (not a try that needs more data). */
	if (ev != NULL && rc == KT_SCAN_OK)
		COUNT(0);
	return rc;
}

int
kt_scan_fast(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
#ifdef KT_SCAN_HAVE_AVX2
	if (path_runs(KT_SCAN_AVX2))
		return fast_event_avx2(sc, buf, pos, end, endp, ev);
#endif
	(void)sc;
	(void)buf;
	(void)pos;
	(void)end;
	(void)endp;
	(void)ev;
	return -1;
}

int
kt_skim_value(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	int rc;

#ifdef KT_SCAN_HAVE_AVX2
	if (sc->path == 0)
		sc->path = kt_scan_path_best();
	/* A plain event: the walk over bit masks (scan_fast.h). */
	if (sc->path == KT_SCAN_AVX2 &&
	    skim_event_avx2(sc, buf, pos, end, endp, ev) == KT_SCAN_OK) {
		COUNT(1);
		return KT_SCAN_OK;
	}
#endif
	rc = skim_value(sc, buf, pos, end, endp, ev);
	if (rc == KT_SCAN_OK)
		COUNT(1);
	return rc;
}

#ifdef KT_SCAN_HAVE_AVX2
/*
 * The newlines of whole 32-byte blocks of p[0..n), counted as the SSE2
 * loop of kt_scan_lines counts them, 32 bytes at a time; *at: the bytes
 * counted.
 */
AVX2 static size_t
lines_avx2(const char *p, size_t n, size_t *at)
{
	const __m256i nl = _mm256_set1_epi8('\n'), zero = _mm256_setzero_si256();
	size_t i = 0, lines = 0;

	while (n - i >= 32) {
		__m256i acc = zero, s;
		size_t stop = n - i >= 255 * 32 ? i + 255 * 32 :
		    i + (n - i) / 32 * 32;

		for (; i < stop; i += 32)
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(LOAD32(p +
			    i), nl));
		s = _mm256_sad_epu8(acc, zero);
		lines += (size_t)_mm256_extract_epi64(s, 0) +
		    (size_t)_mm256_extract_epi64(s, 1) +
		    (size_t)_mm256_extract_epi64(s, 2) +
		    (size_t)_mm256_extract_epi64(s, 3);
	}
	*at = i;
	return lines;
}
#endif

size_t
kt_scan_lines(const char *p, size_t n, size_t *after)
{
	size_t i = 0, lines = 0, k;

	*after = (size_t)-1;
#ifdef KT_SCAN_HAVE_AVX2
	/* Where the scanner would take AVX2 (a gzip input's buffers). */
	if (n >= 256 && path_runs(KT_SCAN_AVX2))
		lines = lines_avx2(p, n, &i);
#endif
#ifdef __SSE2__
	{
		const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();

		/*
		 * Each byte lane counts its newlines down from 0 (a match is
		 * -1); 255 blocks at most before the lanes are summed.
		 */
		while (n - i >= 16) {
			__m128i acc = zero, s;
			size_t stop = n - i >= 255 * 16 ? i + 255 * 16 :
			    i + (n - i) / 16 * 16;

			for (; i < stop; i += 16)
				acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(LOAD16(p +
				    i), nl));
			s = _mm_sad_epu8(acc, zero);
			lines += (size_t)_mm_cvtsi128_si32(s) +
			    (size_t)_mm_cvtsi128_si32(_mm_srli_si128(s, 8));
		}
	}
#endif
	for (; i < n; i++)
		lines += p[i] == '\n';
	if (lines > 0)
		for (k = n; k > 0; k--)
			if (p[k - 1] == '\n') {
				*after = k;
				break;
			}
	return lines;
}
