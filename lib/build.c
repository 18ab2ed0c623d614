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

int
kt_json_escape(struct kt_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[6] = { '\\', 'u', '0', '0', 0, 0 };

		if (c == '"' || c == '\\') {
			e[1] = (char)c;
			if (kt_buf_add(b, e, 2) == -1)
				return -1;
		} else if (c < 0x20) {
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			if (kt_buf_add(b, e, 6) == -1)
				return -1;
		} else if (kt_buf_addc(b, (char)c) == -1)
			return -1;
	}
	return 0;
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
