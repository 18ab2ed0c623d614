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
 * The runs the scanner spends its time in, sixteen bytes at a time where
 * SSE2 is there (every x86-64): a string's plain bytes, whitespace, and
 * a number's digits.  Each returns the first byte at or after p that
 * ends the run (end if none does); they read nothing at or past end.
 */
/* The first strstop byte at or after p. */
static inline size_t
str_run(const unsigned char *b, size_t p, size_t end)
{
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i lo = _mm_set1_epi8(0x20);

	for (; p + 16 <= end; p += 16) {
		__m128i x = LOAD16(b + p);
		/* Signed: below 0x20 are the controls and 0x80-0xff. */
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q),
		    _mm_cmpeq_epi8(x, bs)), _mm_cmplt_epi8(x, lo));
		unsigned k = (unsigned)_mm_movemask_epi8(m);

		if (k != 0)
			return p + (size_t)__builtin_ctz(k);
	}
#endif
	while (p + 4 <= end && !strstop[b[p]] && !strstop[b[p + 1]] &&
	    !strstop[b[p + 2]] && !strstop[b[p + 3]])
		p += 4;
	while (p < end && !strstop[b[p]])
		p++;
	return p;
}

/* The first byte at or after p that is not whitespace. */
static inline size_t
ws_run(const unsigned char *b, size_t p, size_t end)
{
	/* Most runs are one space, or none. */
	if (p >= end || !kt_ws[b[p]])
		return p;
	if (++p >= end || !kt_ws[b[p]])
		return p;
#ifdef __SSE2__
	{
		const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
		const __m128i tb = _mm_set1_epi8('\t'), cr = _mm_set1_epi8('\r');

		for (; p + 16 <= end; p += 16) {
			__m128i x = LOAD16(b + p);
			__m128i m = _mm_or_si128(_mm_or_si128(
			    _mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, nl)),
			    _mm_or_si128(_mm_cmpeq_epi8(x, tb),
			    _mm_cmpeq_epi8(x, cr)));
			unsigned k = (unsigned)_mm_movemask_epi8(m) ^ 0xffffu;

			if (k != 0)
				return p + (size_t)__builtin_ctz(k);
		}
	}
#endif
	while (p < end && kt_ws[b[p]])
		p++;
	return p;
}

/* The first byte at or after p that is not a decimal digit. */
static inline size_t
digit_run(const unsigned char *b, size_t p, size_t end)
{
#ifdef __SSE2__
	const __m128i lo = _mm_set1_epi8('0' - 1), hi = _mm_set1_epi8('9' + 1);

	for (; p + 16 <= end; p += 16) {
		__m128i x = LOAD16(b + p);
		/* Signed: 0x80-0xff are below '0'. */
		__m128i m = _mm_and_si128(_mm_cmpgt_epi8(x, lo),
		    _mm_cmplt_epi8(x, hi));
		unsigned k = (unsigned)_mm_movemask_epi8(m) ^ 0xffffu;

		if (k != 0)
			return p + (size_t)__builtin_ctz(k);
	}
#endif
	while (p < end && isdig[b[p]])
		p++;
	return p;
}

enum {
	S_VALUE,		/* a value must come */
	S_VALUE_OR_CLOSE,	/* after '[' */
	S_AFTER,		/* after a value */
	S_KEY,			/* after ',' in an object */
	S_KEY_OR_CLOSE,		/* after '{' */
	S_COLON
};

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

/*
 * Scan a string whose opening quote is at b[p].  Returns the offset just
 * past the closing quote, or 0 with *rc set to KT_SCAN_MORE/ERR.
 */
static size_t
scan_string(struct kt_scanner *sc, const unsigned char *b, size_t p,
    size_t end, int *rc)
{

	p++;
	for (;;) {
		p = str_run(b, p, end);
		if (p >= end) {
			*rc = KT_SCAN_MORE;
			return 0;
		}
		if (b[p] == '"')
			return p + 1;
		if (b[p] == '\\') {
			if (p + 1 >= end) {
				*rc = KT_SCAN_MORE;
				return 0;
			}
			switch (b[p + 1]) {
			case '"': case '\\': case '/': case 'b':
			case 'f': case 'n': case 'r': case 't':
				p += 2;
				continue;
			case 'u':
				if (p + 6 > end) {
					*rc = KT_SCAN_MORE;
					return 0;
				}
				if (ishex[b[p + 2]] && ishex[b[p + 3]] &&
				    ishex[b[p + 4]] && ishex[b[p + 5]]) {
					p += 6;
					continue;
				}
				break;
			default:
				break;
			}
			/* An invalid escape: keep the backslash literally. */
			if (sc->strict) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "invalid escape in string";
				return 0;
			}
			if (add_edit(sc, p, 0, "\\", 1, KT_R_ESCAPE) == -1) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "out of memory";
				return 0;
			}
			p += 1;
			continue;
		}
		if (b[p] >= 0x80) {
			int k = utf8_len(b, p, end);

			if (k > 0) {
				p += (size_t)k;
				continue;
			}
			if (k == -1) {
				*rc = KT_SCAN_MORE;
				return 0;
			}
			/* Not UTF-8: each such byte becomes U+FFFD. */
			if (sc->strict) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "invalid UTF-8 in string";
				return 0;
			}
			if (run_edit(sc, p, KT_R_UTF8) == -1) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "out of memory";
				return 0;
			}
			p++;
			continue;
		}
		/* A raw control character. */
		if (b[p] == '\n' || b[p] == '\r') {
			*rc = KT_SCAN_ERR;
			sc->err_off = p;
			sc->err_msg = "line break inside a string "
			    "(unterminated string, or events written into "
			    "each other)";
			return 0;
		}
		if (sc->strict) {
			*rc = KT_SCAN_ERR;
			sc->err_off = p;
			sc->err_msg = "raw control character in string";
			return 0;
		} else {
			if (run_edit(sc, p, KT_R_CONTROL) == -1) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "out of memory";
				return 0;
			}
		}
		p++;
	}
}

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
		break;
	case 6:
		if (memcmp(k, "stream", 6) == 0)
			return KT_F_STREAM;
		if (memcmp(k, "device", 6) == 0)
			return KT_F_DEVICE;
		break;
	case 11:
		if (memcmp(k, "External id", 11) == 0)
			return KT_F_EXTID;
		if (memcmp(k, "correlation", 11) == 0)
			return KT_F_CORR;
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

static int
scan_value(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t p = pos, depth = 0, vstart[3] = { 0, 0, 0 }, comma = 0;
	int state = S_VALUE, rc = KT_SCAN_OK, kf = -1, pend[3] = { -1, -1, -1 };
	int args_open = 0;
	unsigned char vtype[3] = { 0, 0, 0 };

	sc->nedits = 0;
	sc->nkeys = 0;
	if (ev != NULL) {
		memset(ev->f, 0, sizeof(ev->f));
		ev->known = KT_FALL;
		if (b[p] != '{')
			FAIL(p, "expected an event object");
	}
	for (;;) {
		unsigned char c;

		p = ws_run(b, p, end);
		if (p >= end)
			return KT_SCAN_MORE;
		c = b[p];
		switch (state) {
		case S_VALUE_OR_CLOSE:
			if (c == ']')
				goto close;
			/* FALLTHROUGH */
		case S_VALUE:
			if (c == ']' && comma) {
				REPAIR(comma, 1, "", 0, KT_R_TRAILING_COMMA,
				    "trailing comma");
				goto close;
			}
			comma = 0;
			if (ev != NULL && depth <= 2 && depth >= 1 &&
			    (depth == 1 || args_open)) {
				pend[depth] = kf;
				vstart[depth] = p;
			}
			switch (c) {
			case '{':
				if (ev != NULL && depth == 1)
					args_open = pend[1] == KT_F_ARGS;
				if (push(sc, depth++, 'o') == -1)
					FAIL(p, "out of memory");
				if (depth < 3)
					vtype[depth - 1] = KT_OBJECT;
				p++;
				state = S_KEY_OR_CLOSE;
				continue;
			case '[':
				if (push(sc, depth++, 'a') == -1)
					FAIL(p, "out of memory");
				if (depth < 3)
					vtype[depth - 1] = KT_ARRAY;
				p++;
				state = S_VALUE_OR_CLOSE;
				continue;
			case '"':
				if ((p = scan_string(sc, b, p, end, &rc)) == 0)
					return rc;
				if (depth < 3)
					vtype[depth] = KT_STRING;
				break;
			case 't':
			case 'f':
			case 'n': {
				const char *w = c == 't' ? "true" :
				    c == 'f' ? "false" : "null";
				int m = matchword(b, p, end, w);

				if (m == -1 && end - p < 8)
					return KT_SCAN_MORE;
				if (m > 0 && (p + (size_t)m >= end ||
				    !((b[p + m] >= 'a' && b[p + m] <= 'z') ||
				    (b[p + m] >= 'A' && b[p + m] <= 'Z')))) {
					if (memcmp(b + p, w, (size_t)m) != 0)
						FAIL(p, "invalid literal");
					if (depth < 3)
						vtype[depth] = c == 't' ?
						    KT_TRUE : c == 'f' ?
						    KT_FALSE : KT_NULL;
					p += (size_t)m;
					break;
				}
				if (c != 'n')
					FAIL(p, "invalid literal");
			}
				/* A word starting with n: maybe nan. */
				/* FALLTHROUGH */
			default: {
				size_t q = p;
				int m = 0;

				if (c == '-' || isdig[c]) {
					if (b[q] == '-')
						q++;
					if (q < end && isdig[b[q]]) {
						q = digit_run(b, q, end);
						if (q < end && b[q] == '.') {
							q++;
							if (q < end && !isdig[b[q]])
								FAIL(q, "invalid number");
							q = digit_run(b, q, end);
						}
						if (q < end && (b[q] == 'e' ||
						    b[q] == 'E')) {
							q++;
							if (q < end && (b[q] == '+' ||
							    b[q] == '-'))
								q++;
							if (q < end && !isdig[b[q]])
								FAIL(q, "invalid number");
							q = digit_run(b, q, end);
						}
						if (q >= end)
							return KT_SCAN_MORE;
						if (depth < 3)
							vtype[depth] = KT_NUMBER;
						p = q;
						break;
					}
					if (q >= end)
						return KT_SCAN_MORE;
				} else if (c == '+')
					q++;
				/* A bare inf, nan, Infinity or NaN? */
				if ((m = matchword(b, q, end, "infinity")) == 8 ||
				    (m >= 0 && (m = matchword(b, q, end,
				    "inf")) == 3) ||
				    (m >= 0 && (m = matchword(b, q, end,
				    "nan")) == 3)) {
					size_t len = q - p + (size_t)m;

					REPAIR(p, len, "null", 4,
					    KT_R_NONFINITE,
					    "non-finite number (inf or nan)");
					if (depth < 3)
						vtype[depth] = KT_NULL;
					p += len;
					break;
				}
				if (m == -1)
					return KT_SCAN_MORE;
				if (c == '}' || c == ']' || c == ',' || c == ':')
					FAIL(p, "expected a value");
				FAIL(p, "unexpected character where a value "
				    "should be");
			}
			}
			/* A scalar ended: it completes a value at depth. */
			if (depth == 0)
				goto done;
			if (ev != NULL && depth <= 2 && pend[depth] >= 0 &&
			    (depth == 1 || args_open)) {
				struct kt_val *v = &ev->f[pend[depth]];

				v->off = (uint32_t)(vstart[depth] - pos);
				v->len = (uint32_t)(p - vstart[depth]);
				v->type = vtype[depth];
			}
			state = S_AFTER;
			continue;
		case S_AFTER:
			if (c == ',') {
				comma = p++;
				state = STACK(sc)[depth - 1] == 'o' ?
				    S_KEY : S_VALUE;
				continue;
			}
			if ((c == '}' && STACK(sc)[depth - 1] == 'o') ||
			    (c == ']' && STACK(sc)[depth - 1] == 'a'))
				goto close;
			if (STACK(sc)[depth - 1] == 'o')
				FAIL(p, "expected ',' or '}' after a value");
			FAIL(p, "expected ',' or ']' after a value");
		case S_KEY_OR_CLOSE:
			if (c == '}')
				goto close;
			/* FALLTHROUGH */
		case S_KEY: {
			size_t ks = p;

			if (c == '}' && comma) {
				REPAIR(comma, 1, "", 0, KT_R_TRAILING_COMMA,
				    "trailing comma");
				goto close;
			}
			comma = 0;
			if (c != '"')
				FAIL(p, "expected a key string");
			if ((p = scan_string(sc, b, p, end, &rc)) == 0)
				return rc;
			kf = -1;
			if (ev != NULL) {
				if (depth == 1) {
					kf = top_field(b + ks + 1, p - ks - 2);
					sc->nkeys++;
				} else if (depth == 2 && args_open)
					kf = arg_field(b + ks + 1, p - ks - 2);
			}
			state = S_COLON;
			continue;
		}
		case S_COLON:
			if (c != ':')
				FAIL(p, "expected ':' after a key");
			p++;
			state = S_VALUE;
			continue;
		}
		continue;
close:
		/* c closes the container on top of the stack. */
		if (c == '}' ? STACK(sc)[depth - 1] != 'o' :
		    STACK(sc)[depth - 1] != 'a')
			FAIL(p, "mismatched bracket");
		p++;
		comma = 0;
		depth--;
		if (depth == 0)
			goto done;
		if (ev != NULL && depth <= 2 && pend[depth] >= 0 &&
		    (depth == 1 || args_open)) {
			struct kt_val *v = &ev->f[pend[depth]];

			v->off = (uint32_t)(vstart[depth] - pos);
			v->len = (uint32_t)(p - vstart[depth]);
			v->type = vtype[depth];
		}
		if (depth == 1)
			args_open = 0;
		state = S_AFTER;
	}
done:
	*endp = p;
	return KT_SCAN_OK;
}

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
	free(sc->stack);
	free(sc->edits);
	memset(sc, 0, sizeof(*sc));
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

int
kt_scan_value(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	int rc = scan_value(sc, buf, pos, end, endp, ev);

	/* An event scanned to its end (not a try that needs more data). */
	if (ev != NULL && rc == KT_SCAN_OK)
		COUNT(0);
	return rc;
}

int
kt_skim_value(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	int rc = skim_value(sc, buf, pos, end, endp, ev);

	if (rc == KT_SCAN_OK)
		COUNT(1);
	return rc;
}
