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
	"rank", "Bytes", "Total Allocated", "Total Reserved", "Device Type",
	"Device Id"
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
	p->naset = 0;
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
	e->field = -1;
	e->valoff = e->vallen = 0;
	p->n++;
	return 0;
}

/*
 * Mark the last edit as the one that gives field f (-1: none) its value
 * at [valoff, valoff + vallen) of the inserted text, or (vallen 0) that
 * removes it.
 */
static int
tag(struct kt_patch *p, int rc, int f, size_t valoff, size_t vallen)
{
	if (rc == 0 && p->n > 0) {
		p->e[p->n - 1].field = f;
		p->e[p->n - 1].valoff = valoff;
		p->e[p->n - 1].vallen = vallen;
	}
	return rc;
}

static int	arg_add(struct kt_patch *, const char *, int, const char *,
		    size_t);

/* The field an args key names (correlation: KT_F_CORR), or -1. */
static int
arg_field(const char *key)
{
	int f;

	/* Their first letters: E, c, s, d, b, r, B, T, D (kt's own: _, k). */
	switch (key[0]) {
	case 'E': case 'c': case 's': case 'd': case 'b': case 'r':
	case 'B': case 'T': case 'D':
		break;
	default:
		return -1;
	}
	for (f = KT_F_FIRSTARG; f < KT_NFIELDS; f++)
		if (fieldkeys[f][0] == key[0] && strcmp(fieldkeys[f], key) == 0)
			return f;
	return -1;
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
    const char *text, size_t len, int f)
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
	return tag(p, edit(p, off + 1, 0, k, at + kn + 4, text, len,
	    empty ? "" : ", "), f, at + kn + 4, len);
}

int
kt_patch_set(struct kt_patch *p, enum kt_field f, const char *text,
    size_t len)
{
	const struct kt_val *v = &p->ev->f[f];

	if (v->type != KT_NONE)
		return tag(p, edit(p, v->off, v->len, text, len, "", 0, ""),
		    (int)f, 0, len);
	/* The scanner saw every member of args: the key is not there. */
	if (f >= KT_F_FIRSTARG)
		return arg_add(p, fieldkeys[f], (int)f, text, len);
	return insert_member(p, 0, fieldkeys[f], text, len, (int)f);
}

int
kt_patch_key(struct kt_patch *p, const char *key, const char *text,
    size_t len)
{
	struct kt_val whole, v;

	whole.type = KT_OBJECT;
	whole.off = 0;
	whole.len = (uint32_t)p->ev->len;
	if (kt_event_find(p->ev, &whole, key, &v) == 0)
		return edit(p, v.off, v.len, text, len, "", 0, "");
	return insert_member(p, 0, key, text, len, -1);
}

int
kt_patch_arg_add(struct kt_patch *p, const char *key, const char *text,
    size_t len)
{
	return arg_add(p, key, arg_field(key), text, len);
}

/* Add args.key, which is field f (or -1: none). */
static int
arg_add(struct kt_patch *p, const char *key, int f, const char *text,
    size_t len)
{
	const struct kt_val *args = &p->ev->f[KT_F_ARGS];

	if (args->type == KT_NONE || args->type == KT_NULL) {
		/*
		 * Collect the members; kt_patch_apply() adds the object (in
		 * place of a null args).
		 */
		struct kt_buf *b = &p->newargs;

		if ((b->n > 0 && kt_buf_adds(b, ", ") == -1) ||
		    kt_buf_addc(b, '"') == -1 || kt_buf_adds(b, key) == -1 ||
		    kt_buf_adds(b, "\": ") == -1)
			return -1;
		if (f >= 0 && b->n <= UINT32_MAX && len <= UINT32_MAX) {
			p->naoff[f - KT_F_FIRSTARG] = (uint32_t)b->n;
			p->nalen[f - KT_F_FIRSTARG] = (uint32_t)len;
			p->naset |= 1u << (f - KT_F_FIRSTARG);
		}
		return kt_buf_add(b, text, len);
	}
	if (args->type != KT_OBJECT)
		return -1;
	return insert_member(p, args->off, key, text, len, f);
}

int
kt_patch_arg(struct kt_patch *p, const char *key, const char *text,
    size_t len)
{
	const struct kt_val *args = &p->ev->f[KT_F_ARGS];
	struct kt_val v;

	if (args->type == KT_OBJECT &&
	    kt_event_find(p->ev, args, key, &v) == 0)
		return tag(p, edit(p, v.off, v.len, text, len, "", 0, ""),
		    arg_field(key), 0, len);
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
 * The end of what removing the member whose value ends at ve takes with
 * it as a first member: the comma after it and one space after that, or
 * nothing when no member follows (raw[..end): the object's closing
 * brace).
 */
static size_t
sep_end(const char *raw, size_t ve, size_t end)
{
	size_t q;

	for (q = ve; q < end && kt_ws[(unsigned char)raw[q]]; q++)
		;
	if (q < end && raw[q] == ',') {
		ve = q + 1;
		if (ve < end && raw[ve] == ' ')
			ve++;
	}
	return ve;
}

/* The queued removal (an edit that inserts nothing) from off, or NULL. */
static struct kt_patch_edit *
removal_from(struct kt_patch *p, size_t off)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (p->e[i].inslen == 0 && p->e[i].del > 0 &&
		    p->e[i].off == off)
			return &p->e[i];
	return NULL;
}

/* Is a removal queued that ends in (prev, ks]: the member before's? */
static int
removed_before(const struct kt_patch *p, size_t prev, size_t ks)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (p->e[i].inslen == 0 && p->e[i].del > 0 &&
		    p->e[i].off + p->e[i].del > prev &&
		    p->e[i].off + p->e[i].del <= ks)
			return 1;
	return 0;
}

/*
 * Remove the member whose value is v from the object at raw[obj..end):
 * a first member with the comma after it and one space after that (the
 * inverse of an insertion), another from the end of the member before
 * it.  A member whose neighbour is removed too is removed as a first
 * one, so that the two removals never overlap: one after a removed
 * first member; and a first member's removal turns that of the member
 * after it (from this one's end) into a first member's, and so on.
 */
static int
remove_member(struct kt_patch *p, size_t obj, size_t end,
    const struct kt_val *v, int f)
{
	const char *raw = p->ev->raw;
	struct kt_patch_edit *e;
	size_t ks, prev, ve = (size_t)v->off + v->len, at, nks, nve;

	if (member_at(raw, obj, end, v->off, &ks, &prev) == -1)
		return -1;
	if (prev != 0 && !removed_before(p, prev, ks))
		return tag(p, edit(p, prev, ve - prev, "", 0, "", 0, ""), f, 0,
		    0);
	/* The members after it removed from their neighbour's end. */
	for (at = ve; (e = removal_from(p, at)) != NULL; at = nve) {
		nve = e->off + e->del;
		for (nks = at; nks < nve && raw[nks] != '"'; nks++)
			;
		e->off = nks;
		e->del = sep_end(raw, nve, end) - nks;
	}
	return tag(p, edit(p, ks, sep_end(raw, ve, end) - ks, "", 0, "", 0,
	    ""), f, 0, 0);
}

int
kt_patch_remove(struct kt_patch *p, enum kt_field f)
{
	const struct kt_val *v = &p->ev->f[f];

	if (f >= KT_F_FIRSTARG)
		return kt_patch_arg_remove(p, fieldkeys[f]);
	if (v->type == KT_NONE || p->ev->len < 2)
		return -1;
	return remove_member(p, 0, p->ev->len - 1, v, (int)f);
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
	    &v, arg_field(key));
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
		    tag(p, edit(p, p->ev->f[KT_F_ARGS].off,
		    p->ev->f[KT_F_ARGS].len, obj.p, obj.n, "", 0, ""),
		    KT_F_ARGS, 0, obj.n) :
		    insert_member(p, 0, "args", obj.p, obj.n, KT_F_ARGS);
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

/* Parse time field f of ev again into *ns, setting its flags. */
static void
retime(struct kt_event *ev, enum kt_field f, int64_t *ns, int *dec,
    unsigned ok, unsigned subns)
{
	int fl = 0;

	ev->flags &= ~(ok | subns);
	*ns = 0;
	*dec = 0;
	if (ev->f[f].type != KT_NUMBER || kt_time_parse(ev->raw +
	    ev->f[f].off, ev->f[f].len, ns, &fl, dec) == -1) {
		*ns = 0;
		return;
	}
	ev->flags |= ok;
	if (fl & KT_TIME_SUBNS)
		ev->flags |= subns;
}

int
kt_patch_apply_event(struct kt_patch *p, struct kt_buf *out,
    struct kt_event *nev)
{
	struct kt_event orig = *p->ev;	/* nev may be p->ev itself */
	const struct kt_event *ev = &orig;
	size_t start = out->n, opos[KT_PATCH_MAX];
	uint32_t naset = p->naset;
	int64_t delta = 0;
	int i, f, lost = 0, argsobj = -1, touched = 0;

	p->ev = ev;
	if (kt_patch_apply(p, out) == -1)
		return -1;
	p->ev = NULL;
	/* The edits are in order now: where each one's text landed. */
	for (i = 0; i < p->n; i++) {
		opos[i] = (size_t)((int64_t)p->e[i].off + delta);
		delta += (int64_t)p->e[i].inslen - (int64_t)p->e[i].del;
	}
	*nev = *ev;
	nev->raw = out->p + start;
	nev->len = out->n - start;
	/* Every field moves by the edits before it, grows by those inside. */
	for (f = 0; f < KT_NFIELDS; f++) {
		struct kt_val *v = &nev->f[f];
		size_t o = v->off, end = (size_t)v->off + v->len;
		int64_t shift = 0, grow = 0;

		if (v->type == KT_NONE)
			continue;
		for (i = 0; i < p->n; i++) {
			const struct kt_patch_edit *e = &p->e[i];
			size_t eend = e->off + e->del;
			int64_t d = (int64_t)e->inslen - (int64_t)e->del;

			if (e->del == 0 ? e->off <= o : eend <= o)
				shift += d;
			else if (e->off >= end)
				continue;
			else if (e->off == o && eend == end) {
				/* The value itself, replaced. */
				if (e->field != f)
					lost = 1;
				break;
			} else if (e->off > o && eend < end)
				grow += d;
			else if (e->inslen == 0 && e->off <= o && eend >= end) {
				v->type = KT_NONE;	/* removed with it */
				break;
			} else if (f >= KT_F_FIRSTARG) {
				/* Inside an args replaced: see below. */
				v->type = KT_NONE;
				break;
			} else
				lost = 1;
		}
		if (v->type != KT_NONE) {
			v->off = (uint32_t)((int64_t)o + shift);
			v->len = (uint32_t)((int64_t)v->len + grow);
		}
	}
	/* The fields the patch set, added or removed. */
	for (i = 0; i < p->n; i++) {
		const struct kt_patch_edit *e = &p->e[i];
		struct kt_val *v;

		if (e->field < 0)
			continue;
		v = &nev->f[e->field];
		touched |= 1 << e->field;
		if (e->vallen == 0) {
			v->type = KT_NONE;
			v->off = v->len = 0;
			if (e->field == KT_F_ARGS)
				for (f = KT_F_FIRSTARG; f < KT_NFIELDS; f++)
					nev->f[f].type = KT_NONE;
			continue;
		}
		v->off = (uint32_t)(opos[i] + e->valoff);
		v->len = (uint32_t)e->vallen;
		v->type = (uint8_t)kt_type_of(nev->raw[v->off]);
		if (e->field == KT_F_ARGS) {
			if (naset != 0 && e->del == ev->f[KT_F_ARGS].len &&
			    (ev->f[KT_F_ARGS].type == KT_NULL ||
			    ev->f[KT_F_ARGS].type == KT_NONE))
				argsobj = i;	/* made of newargs */
			else if (v->type == KT_OBJECT)
				lost = 1;	/* new members: scan them */
		}
	}
	/* The members of an args the patch made. */
	if (argsobj >= 0)
		for (f = KT_F_FIRSTARG; f < KT_NFIELDS; f++) {
			struct kt_val *v = &nev->f[f];

			if (!(naset & (1u << (f - KT_F_FIRSTARG))))
				continue;
			v->off = nev->f[KT_F_ARGS].off + 1 +
			    p->naoff[f - KT_F_FIRSTARG];
			v->len = p->nalen[f - KT_F_FIRSTARG];
			v->type = (uint8_t)kt_type_of(nev->raw[v->off]);
			touched |= 1 << f;
		}
	if (lost) {
		uint64_t index = ev->index;
		unsigned keep = ev->flags & (KT_EV_REPAIRED | KT_EV_PATCHED);

		memset(nev, 0, sizeof(*nev));
		if (kt_event_scan(out->p + start, out->n - start, nev,
		    NULL) == -1)
			return -1;
		nev->index = index;
		nev->flags |= keep;
		return 0;
	}
	nev->known = ev->known | (uint32_t)touched;
	if ((nev->known & KT_FDERIVED) == KT_FDERIVED) {
		/* ts, dur, ph and kind as a scan would make them. */
		kt_event_finish(nev);
		return 0;
	}
	/* A view: what it knew stands, but times the patch changed. */
	if (touched & (1 << KT_F_TS))
		retime(nev, KT_F_TS, &nev->ts, &nev->ts_decimals, KT_EV_TS,
		    KT_EV_TS_SUBNS);
	if (touched & (1 << KT_F_DUR))
		retime(nev, KT_F_DUR, &nev->dur, &nev->dur_decimals,
		    KT_EV_DUR, KT_EV_DUR_SUBNS);
	return 0;
}
