/*
 * patch.c: raw patching.  A changed event keeps every byte except the
 * text of the fields that change; new keys are inserted next to the
 * opening brace of their object, removed members take their separating
 * comma with them.
 */
#include <string.h>

#include "ktint.h"

static const char *const fieldkeys[KT_NFIELDS] = {
	"ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp", "s",
	"args", "External id", "correlation", "stream", "device", "bytes",
	"rank"
};

/* Start an empty patch of ev (borrowed); kt_patch_free() ends it. */
void
kt_patch_init(struct kt_patch *p, const struct kt_event *ev)
{
	memset(p, 0, sizeof(*p));
	p->ev = ev;
}

void
kt_patch_reset(struct kt_patch *p, const struct kt_event *ev)
{
	p->ev = ev;
	p->n = 0;
	p->tmp.n = 0;
	p->newargs.n = 0;
}

void
kt_patch_free(struct kt_patch *p)
{
	kt_buf_free(&p->tmp);
	kt_buf_free(&p->newargs);
}

/* Queue an edit whose inserted text is the concatenation a + b + c. */
static int
edit(struct kt_patch *p, size_t off, size_t del, const char *a, size_t an,
    const char *b, size_t bn, const char *c)
{
	struct kt_patch_edit *e;

	if (p->n == KT_PATCH_MAX)
		return -1;
	e = &p->e[p->n];
	e->off = off;
	e->del = del;
	e->insoff = p->tmp.n;
	e->seq = p->n;
	if (kt_buf_add(&p->tmp, a, an) == -1 ||
	    kt_buf_add(&p->tmp, b, bn) == -1 ||
	    kt_buf_adds(&p->tmp, c) == -1)
		return -1;
	e->inslen = p->tmp.n - e->insoff;
	p->n++;
	return 0;
}

/* Is the object at raw[off] empty? */
static int
obj_empty(const char *raw, size_t off)
{
	off++;
	while (kt_ws[(unsigned char)raw[off]])
		off++;
	return raw[off] == '}';
}

/*
 * Insert "key": text as the first member of the object at off.  Several
 * insertions into one object come out in the order they were made, with
 * the commas an empty or non-empty object needs.
 */
static int
insert_member(struct kt_patch *p, size_t off, const char *key,
    const char *text, size_t len)
{
	char k[72];
	size_t kn = strlen(key), at = 0;
	int i, empty = obj_empty(p->ev->raw, off), before = 0;

	for (i = 0; i < p->n; i++)
		if (p->e[i].off == off + 1 && p->e[i].del == 0)
			before = 1;
	if (kn + 6 > sizeof(k))
		return -1;
	if (empty && before) {
		memcpy(k, ", ", 2);
		at = 2;
	}
	k[at] = '"';
	memcpy(k + at + 1, key, kn);
	memcpy(k + at + 1 + kn, "\": ", 3);
	return edit(p, off + 1, 0, k, at + kn + 4, text, len,
	    empty ? "" : ", ");
}

int
kt_patch_set(struct kt_patch *p, enum kt_field f, const char *text,
    size_t len)
{
	const struct kt_val *v = &p->ev->f[f];

	if (v->type != KT_NONE)
		return edit(p, v->off, v->len, text, len, "", 0, "");
	/* The scanner saw every member of args: the key is not there. */
	if (f >= KT_F_FIRSTARG)
		return kt_patch_arg_add(p, fieldkeys[f], text, len);
	return insert_member(p, 0, fieldkeys[f], text, len);
}

int
kt_patch_arg_add(struct kt_patch *p, const char *key, const char *text,
    size_t len)
{
	const struct kt_val *args = &p->ev->f[KT_F_ARGS];

	if (args->type == KT_NONE || args->type == KT_NULL) {
		/*
		 * Collect the members; kt_patch_apply() adds the object (in
		 * place of a null args).
		 */
		struct kt_buf *b = &p->newargs;

		return (b->n > 0 && kt_buf_adds(b, ", ") == -1) ||
		    kt_buf_addc(b, '"') == -1 || kt_buf_adds(b, key) == -1 ||
		    kt_buf_adds(b, "\": ") == -1 ||
		    kt_buf_add(b, text, len) == -1 ? -1 : 0;
	}
	if (args->type != KT_OBJECT)
		return -1;
	return insert_member(p, args->off, key, text, len);
}

int
kt_patch_arg(struct kt_patch *p, const char *key, const char *text,
    size_t len)
{
	const struct kt_val *args = &p->ev->f[KT_F_ARGS];
	struct kt_val v;

	if (args->type == KT_OBJECT &&
	    kt_event_find(p->ev, args, key, &v) == 0)
		return edit(p, v.off, v.len, text, len, "", 0, "");
	return kt_patch_arg_add(p, key, text, len);
}

/*
 * The member of the object at raw[obj..end) (end: its closing brace)
 * whose value begins at voff: *ks gets its key's offset, *prev the end
 * of the member before it (0 when it is the first).  0 or -1.
 */
static int
member_at(const char *raw, size_t obj, size_t end, size_t voff, size_t *ks,
    size_t *prev)
{
	struct kt_scanner sc;
	size_t p = obj + 1, k, ke, ve;
	int rc = -1;

	memset(&sc, 0, sizeof(sc));
	sc.strict = 1;
	*prev = 0;
	for (;;) {
		while (p < end && kt_ws[(unsigned char)raw[p]])
			p++;
		if (p >= end || raw[p] != '"')
			break;
		k = p;
		if (kt_scan_value(&sc, raw, k, end, &ke, NULL) != KT_SCAN_OK)
			break;
		p = ke;
		while (p < end && (kt_ws[(unsigned char)raw[p]] ||
		    raw[p] == ':'))
			p++;
		if (kt_scan_value(&sc, raw, p, end + 1, &ve, NULL) !=
		    KT_SCAN_OK)
			break;
		if (p == voff) {
			*ks = k;
			rc = 0;
			break;
		}
		*prev = ve;
		p = ve;
		while (p < end && kt_ws[(unsigned char)raw[p]])
			p++;
		if (p >= end || raw[p] != ',')
			break;
		p++;
	}
	kt_scanner_free(&sc);
	return rc;
}

/*
 * Remove the member whose value is v from the object at raw[obj..end):
 * a first member with the comma after it and one space after that (the
 * inverse of an insertion), another from the end of the member before
 * it.
 */
static int
remove_member(struct kt_patch *p, size_t obj, size_t end,
    const struct kt_val *v)
{
	const char *raw = p->ev->raw;
	size_t ks, prev, ve = (size_t)v->off + v->len, q;

	if (member_at(raw, obj, end, v->off, &ks, &prev) == -1)
		return -1;
	if (prev != 0)
		return edit(p, prev, ve - prev, "", 0, "", 0, "");
	for (q = ve; q < end && kt_ws[(unsigned char)raw[q]]; q++)
		;
	if (q < end && raw[q] == ',') {
		ve = q + 1;
		if (ve < end && raw[ve] == ' ')
			ve++;
	}
	return edit(p, ks, ve - ks, "", 0, "", 0, "");
}

int
kt_patch_remove(struct kt_patch *p, enum kt_field f)
{
	const struct kt_val *v = &p->ev->f[f];

	if (f >= KT_F_FIRSTARG)
		return kt_patch_arg_remove(p, fieldkeys[f]);
	if (v->type == KT_NONE || p->ev->len < 2)
		return -1;
	return remove_member(p, 0, p->ev->len - 1, v);
}

int
kt_patch_arg_remove(struct kt_patch *p, const char *key)
{
	const struct kt_val *args = &p->ev->f[KT_F_ARGS];
	struct kt_val v;

	if (args->type != KT_OBJECT ||
	    kt_event_find(p->ev, args, key, &v) == -1)
		return -1;
	return remove_member(p, args->off, (size_t)args->off + args->len - 1,
	    &v);
}

int
kt_patch_apply(struct kt_patch *p, struct kt_buf *out)
{
	const char *raw = p->ev->raw;
	size_t at = 0;
	int i, j;

	/* An edit whose text could not be kept makes the patch fail. */
	if (p->tmp.err || p->newargs.err)
		return -1;
	if (p->newargs.n > 0) {
		struct kt_buf obj = KT_BUF_INIT;
		int rc;

		rc = kt_buf_addc(&obj, '{') == -1 ||
		    kt_buf_add(&obj, p->newargs.p, p->newargs.n) == -1 ||
		    kt_buf_addc(&obj, '}') == -1 ? -1 :
		    p->ev->f[KT_F_ARGS].type == KT_NULL ?
		    edit(p, p->ev->f[KT_F_ARGS].off, p->ev->f[KT_F_ARGS].len,
		    obj.p, obj.n, "", 0, "") :
		    insert_member(p, 0, "args", obj.p, obj.n);
		kt_buf_free(&obj);
		p->newargs.n = 0;
		if (rc == -1)
			return -1;
	}

	/* Sort by offset, insertion order within an offset (n <= 16). */
	for (i = 1; i < p->n; i++) {
		struct kt_patch_edit t = p->e[i];

		for (j = i; j > 0 && (p->e[j - 1].off > t.off ||
		    (p->e[j - 1].off == t.off && p->e[j - 1].seq > t.seq)); j--)
			p->e[j] = p->e[j - 1];
		p->e[j] = t;
	}
	for (i = 0; i < p->n; i++) {
		const struct kt_patch_edit *e = &p->e[i];

		if (e->off < at)
			return -1;	/* overlapping edits */
		/* A removal inserts nothing (tmp may hold no text at all). */
		if (kt_buf_add(out, raw + at, e->off - at) == -1 ||
		    (e->inslen > 0 && kt_buf_add(out, p->tmp.p + e->insoff,
		    e->inslen) == -1))
			return -1;
		at = e->off + e->del;
	}
	return kt_buf_add(out, raw + at, p->ev->len - at);
}
