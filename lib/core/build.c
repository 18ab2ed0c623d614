/*
 * build.c: serialising new JSON: events kt adds (guides, counters,
 * repairs) and reports.  Times are printed from integer nanoseconds,
 * never through a floating-point formatter.  Top-level metadata, where a
 * DOM fits, is read with jansson (kt_meta_json).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "kt.h"

/* Start an object. */
int
kt_obj_begin(struct kt_buf *b)
{
	return kt_buf_addc(b, '{');
}

/* Append the key with its separator. */
static int
key(struct kt_buf *b, const char *k)
{
	if (b->n > 0 && b->p[b->n - 1] != '{' && kt_buf_adds(b, ", ") == -1)
		return -1;
	return kt_buf_addc(b, '"') == -1 || kt_json_escape(b, k,
	    strlen(k)) == -1 || kt_buf_adds(b, "\": ") == -1 ? -1 : 0;
}

/*
 * Whether one of the eight bytes of x needs an escape: below 0x20, '"'
 * or '\\' (the test of "has a zero byte" on x and on x with each
 * quote or backslash made zero; exact for whether there is one).
 */
static int
word_needs_escape(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t q = x ^ (ones * '"'), s = x ^ (ones * '\\');

	return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) |
	    ((s - ones) & ~s)) & high ? 1 : 0;
}

int
kt_json_escape(struct kt_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned char c;
		char e[6] = { '\\', 'u', '0', '0', 0, 0 };

		if (i + 8 <= n) {
			uint64_t x;

			memcpy(&x, s + i, 8);
			if (!word_needs_escape(x)) {
				i += 8;
				continue;
			}
		}
		c = (unsigned char)s[i];
		if (c != '"' && c != '\\' && c >= 0x20) {
			i++;
			continue;
		}
		/* The plain bytes before this one, at once. */
		if (kt_buf_add(b, s + run, i - run) == -1)
			return -1;
		if (c == '"' || c == '\\') {
			e[1] = (char)c;
			if (kt_buf_add(b, e, 2) == -1)
				return -1;
		} else {
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			if (kt_buf_add(b, e, 6) == -1)
				return -1;
		}
		run = ++i;
	}
	return kt_buf_add(b, s + run, n - run);
}

int
kt_obj_str(struct kt_buf *b, const char *k, const char *v)
{
	return key(b, k) == -1 || kt_buf_addc(b, '"') == -1 ||
	    kt_json_escape(b, v, strlen(v)) == -1 ||
	    kt_buf_addc(b, '"') == -1 ? -1 : 0;
}

int
kt_obj_raw(struct kt_buf *b, const char *k, const char *raw, size_t n)
{
	return key(b, k) == -1 || kt_buf_add(b, raw, n) == -1 ? -1 : 0;
}

int
kt_obj_time(struct kt_buf *b, const char *k, int64_t ns)
{
	char num[32];

	return kt_obj_raw(b, k, num, kt_time_format(ns, 0, num));
}

int
kt_obj_int(struct kt_buf *b, const char *k, int64_t v)
{
	char num[32];

	return kt_obj_raw(b, k, num, kt_int_format(v, num));
}

int
kt_obj_end(struct kt_buf *b)
{
	return kt_buf_addc(b, '}');
}

json_t *
kt_meta_json(const struct kt_meta *m, struct kt_error *err)
{
	json_error_t je;
	json_t *j;

	j = json_loadb(m->val, m->vallen, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &je);
	if (j == NULL)
		kt_error_set(err, NULL, je.line, je.column, "%.*s: %s",
		    (int)m->keylen, m->key, je.text);
	return j;
}

/* An integer member "rank" of a JSON value (or the value), or -1. */
static int64_t
meta_rank(const struct kt_meta *mt, int member)
{
	struct kt_error e;
	json_t *j, *r;
	int64_t rank = -1;

	if (mt == NULL || (j = kt_meta_json(mt, &e)) == NULL)
		return -1;
	r = member ? json_object_get(j, "rank") : j;
	if (r != NULL && json_is_integer(r) && json_integer_value(r) >= 0)
		rank = json_integer_value(r);
	json_decref(j);
	return rank;
}

/*
 * The trace's rank: distributedInfo.rank, else ktRank, else from the
 * file name.
 */
int64_t
kt_reader_rank_how(const struct kt_reader *rd, const char **how)
{
	int64_t rank;

	*how = NULL;
	if ((rank = meta_rank(kt_reader_meta_find(rd, "distributedInfo"),
	    1)) >= 0) {
		*how = "distributedInfo.rank";
		return rank;
	}
	if ((rank = meta_rank(kt_reader_meta_find(rd, KT_KEY_RANK), 0)) >=
	    0) {
		*how = KT_KEY_RANK;
		return rank;
	}
	if (kt_rank_from_name(kt_reader_name(rd), &rank, how) == 0)
		return rank;
	*how = NULL;
	return -1;
}

int64_t
kt_reader_rank(const struct kt_reader *rd)
{
	const char *how;

	return kt_reader_rank_how(rd, &how);
}

/* The 4 hex digits at p as a number, or -1. */
static long
hex4(const char *p)
{
	long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int c = (unsigned char)p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Append code point c as UTF-8. */
static int
put_utf8(struct kt_buf *b, unsigned long c)
{
	char u[4];
	size_t k;

	if (c < 0x80)
		return kt_buf_addc(b, (char)c);
	if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		k = 1;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		k = 2;
	} else {
		u[0] = (char)(0xf0 | (c >> 18));
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		k = 3;
	}
	u[k++] = (char)(0x80 | (c & 0x3f));
	return kt_buf_add(b, u, k);
}

int
kt_json_unescape(const char *p, size_t n, struct kt_buf *b)
{
	size_t i;

	b->n = 0;
	if (memchr(p, '\\', n) == NULL)
		return kt_buf_add(b, p, n);
	for (i = 0; i < n; i++) {
		long c, lo;
		char ch;

		if (p[i] != '\\' || i + 1 == n) {
			if (kt_buf_addc(b, p[i]) == -1)
				return -1;
			continue;
		}
		switch (ch = p[++i]) {
		case 'b':
			ch = '\b';
			break;
		case 'f':
			ch = '\f';
			break;
		case 'n':
			ch = '\n';
			break;
		case 'r':
			ch = '\r';
			break;
		case 't':
			ch = '\t';
			break;
		case 'u':
			if (i + 4 >= n || (c = hex4(p + i + 1)) < 0)
				break;		/* kept as a literal 'u' */
			i += 4;
			if (c >= 0xd800 && c < 0xdc00 && i + 6 < n &&
			    p[i + 1] == '\\' && p[i + 2] == 'u' &&
			    (lo = hex4(p + i + 3)) >= 0xdc00 && lo < 0xe000) {
				/* A surrogate pair: one code point. */
				c = 0x10000 + ((c - 0xd800) << 10) +
				    (lo - 0xdc00);
				i += 6;
			} else if (c >= 0xd800 && c < 0xe000)
				c = 0xfffd;	/* a lone surrogate */
			if (put_utf8(b, (unsigned long)c) == -1)
				return -1;
			continue;
		default:
			break;			/* '"', '\\', '/' and the rest */
		}
		if (kt_buf_addc(b, ch) == -1)
			return -1;
	}
	return 0;
}
