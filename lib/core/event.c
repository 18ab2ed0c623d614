/*
 * event.c: the event model: kinds that follow Kineto's categories, field
 * access on an event's raw text, and member lookup inside its objects.
 */

#include <stdlib.h>
#include <string.h>

#include "ktint.h"

static const char *const kindnames[KT_NKINDS] = {
	"other", "cpu_op", "user_annotation", "step", "gpu_user_annotation",
	"cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset",
	"python_function", "memory", "flow", "metadata", "counter", "instant"
};

const char *
kt_kind_name(enum kt_kind k)
{
	return (unsigned)k < KT_NKINDS ? kindnames[k] : "other";
}

/* The kind named s[0..n), or -1. */
int
kt_kind_parse(const char *s, size_t n)
{
	int k;

	for (k = 0; k < KT_NKINDS; k++)
		if (strlen(kindnames[k]) == n && memcmp(kindnames[k], s, n) == 0)
			return k;
	return -1;
}

const char *
kt_event_field(const struct kt_event *ev, enum kt_field f, size_t *n)
{
	if (ev->f[f].type == KT_NONE) {
		*n = 0;
		return NULL;
	}
	*n = ev->f[f].len;
	return ev->raw + ev->f[f].off;
}

/* Is field f a string whose escaped contents equal s? */
int
kt_event_field_is(const struct kt_event *ev, enum kt_field f, const char *s)
{
	size_t n = strlen(s);

	return ev->f[f].type == KT_STRING && ev->f[f].len == n + 2 &&
	    memcmp(ev->raw + ev->f[f].off + 1, s, n) == 0;
}

/* Does string field f start with the prefix s? */
static int
field_prefix(const struct kt_event *ev, enum kt_field f, const char *s)
{
	size_t n = strlen(s);

	return ev->f[f].type == KT_STRING && ev->f[f].len >= n + 2 &&
	    memcmp(ev->raw + ev->f[f].off + 1, s, n) == 0;
}

int64_t
kt_event_rank(const struct kt_event *ev)
{
	int64_t r;

	if (ev->f[KT_F_RANK].type != KT_NONE &&
	    kt_event_field_int(ev, KT_F_RANK, &r) == 0)
		return r;
	return -1;
}

struct kt_pidrank {
	struct kt_intern	*pids;
	int64_t			*rank;	/* by pid id */
	size_t			 cap;
	/* The last pid looked up (events of a pid come in runs). */
	char			 last[32];
	size_t			 lastn;
	int64_t			 lastrank;
};

struct kt_pidrank *
kt_pidrank_new(void)
{
	struct kt_pidrank *pr;

	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		return NULL;
	if ((pr->pids = kt_intern_new()) == NULL) {
		free(pr);
		return NULL;
	}
	return pr;
}

int64_t
kt_pidrank_of(struct kt_pidrank *pr, const struct kt_event *ev)
{
	const struct kt_val *p = &ev->f[KT_F_PID];
	const char *s = ev->raw + p->off;
	size_t n = p->len;
	int64_t r = kt_event_rank(ev), id;

	if (p->type == KT_NONE)
		return r;
	if (p->type == KT_STRING && n >= 2) {	/* by value */
		s++;
		n -= 2;
	}
	if (pr->lastn > 0 && n == pr->lastn && memcmp(s, pr->last, n) == 0 &&
	    (r < 0 || r == pr->lastrank))
		return pr->lastrank;
	if (r < 0) {
		if (pr->cap == 0)
			return -1;
		id = kt_intern_find(pr->pids, s, n);
		r = id >= 0 ? pr->rank[id] : -1;
		goto remember;
	}
	if ((id = kt_intern_put(pr->pids, s, n)) == -1)
		return -2;
	if ((size_t)id >= pr->cap) {
		size_t cap = pr->cap ? 2 * pr->cap : 64, i;
		int64_t *t;

		if ((t = realloc(pr->rank, cap * sizeof(*t))) == NULL)
			return -2;
		for (i = pr->cap; i < cap; i++)
			t[i] = -1;
		pr->rank = t;
		pr->cap = cap;
	}
	if (pr->rank[id] == -1)
		pr->rank[id] = r;
	else if (pr->rank[id] != r)
		return r;	/* not the pid's first: do not remember it */
remember:
	if (n <= sizeof(pr->last)) {
		memcpy(pr->last, s, n);
		pr->lastn = n;
		pr->lastrank = r;
	}
	return r;
}

void
kt_pidrank_free(struct kt_pidrank *pr)
{
	if (pr == NULL)
		return;
	kt_intern_free(pr->pids);
	free(pr->rank);
	free(pr);
}

int64_t
kt_step_parse(const char *s, size_t n)
{
	int64_t v = 0;
	size_t i;

	if (n <= 13 || memcmp(s, "ProfilerStep#", 13) != 0)
		return -1;
	for (i = 13; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (INT64_MAX - (s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int64_t
kt_event_step(const struct kt_event *ev)
{
	const struct kt_val *v = &ev->f[KT_F_NAME];

	if (v->type != KT_STRING || v->len < 2)
		return -1;
	/* Step names carry no escapes; one that does is no step. */
	return kt_step_parse(ev->raw + v->off + 1, v->len - 2);
}

int
kt_event_id_text(const struct kt_event *ev, enum kt_field f, const char **p,
    size_t *n)
{
	const struct kt_val *v = &ev->f[f];
	const char *s = ev->raw + v->off;
	size_t i, k;

	*p = s;
	*n = v->len;
	if (v->type != KT_STRING || v->len < 3 || v->len > 2 + 19)
		return 0;
	i = s[1] == '-' ? 2 : 1;
	k = v->len - 1;		/* the closing quote */
	if (i == k || k - i > 18 || (s[i] == '0' && k - i > 1) ||
	    (i == 2 && s[i] == '0'))
		return 0;
	for (; i < k; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	*p = s + 1;
	*n = v->len - 2;
	return 1;
}

int
kt_event_thread_key(const struct kt_event *ev, struct kt_buf *b)
{
	const char *p, *t;
	size_t pn, tn;

	kt_event_id_text(ev, KT_F_PID, &p, &pn);
	kt_event_id_text(ev, KT_F_TID, &t, &tn);
	return kt_buf_add(b, p, pn) == -1 || kt_buf_addc(b, '\t') == -1 ||
	    kt_buf_add(b, t, tn) == -1 ? -1 : 0;
}

void
kt_idmemo_init(struct kt_idmemo *m)
{
	m->n = 0;
	m->rank = 0;
	m->id = UINT32_MAX;
}

/* The length of ev's memo key, or 0 when it has none (kt_idmemo). */
static size_t
idmemo_len(const struct kt_idmemo *m, const struct kt_event *ev, int thread)
{
	const struct kt_val *pv = &ev->f[KT_F_PID], *tv = &ev->f[KT_F_TID];
	size_t n = pv->len + (thread ? 1 + tv->len : 0);

	if (pv->type == KT_NONE || (thread && tv->type == KT_NONE) ||
	    n > sizeof(m->b))
		return 0;
	return n;
}

/* Whether the w bytes (at most 8) at a and b are the same. */
static inline int
word_eq(const char *a, const char *b, size_t w)
{
	uint64_t x = 0, y = 0;

	memcpy(&x, a, w);
	memcpy(&y, b, w);
	return x == y;
}

/*
 * Whether a[0..n) and b[0..n) are the same, n <= 16 (a pid or tid's
 * text): the first and last words of the size that fits, which overlap
 * (a call to memcmp costs more than these few bytes).
 */
static inline int
short_eq(const char *a, const char *b, size_t n)
{
	if (n >= 8)
		return word_eq(a, b, 8) && word_eq(a + n - 8, b + n - 8, 8);
	if (n >= 4)
		return word_eq(a, b, 4) && word_eq(a + n - 4, b + n - 4, 4);
	return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] &&
	    a[n - 1] == b[n - 1]);
}

/* a[0..n) and b[0..n) the same. */
static inline int
same_bytes(const char *a, const char *b, size_t n)
{
	return n <= 16 ? short_eq(a, b, n) : memcmp(a, b, n) == 0;
}

int
kt_idmemo_hit(struct kt_idmemo *m, const struct kt_event *ev, int64_t rank,
    int thread, uint32_t *id)
{
	const struct kt_val *pv = &ev->f[KT_F_PID], *tv = &ev->f[KT_F_TID];
	size_t n = idmemo_len(m, ev, thread);

	if (n == 0 || m->n != n || m->rank != rank || m->id == UINT32_MAX ||
	    !same_bytes(m->b, ev->raw + pv->off, pv->len) ||
	    (thread && (m->b[pv->len] != '\001' || !same_bytes(m->b +
	    pv->len + 1, ev->raw + tv->off, tv->len))))
		return 0;
	*id = m->id;
	return 1;
}

void
kt_idmemo_keep(struct kt_idmemo *m, const struct kt_event *ev, int64_t rank,
    int thread, uint32_t id)
{
	const struct kt_val *pv = &ev->f[KT_F_PID], *tv = &ev->f[KT_F_TID];

	if (idmemo_len(m, ev, thread) == 0)
		return;
	memcpy(m->b, ev->raw + pv->off, pv->len);
	m->n = pv->len;
	if (thread) {
		m->b[m->n++] = '\001';
		memcpy(m->b + m->n, ev->raw + tv->off, tv->len);
		m->n += tv->len;
	}
	m->rank = rank;
	m->id = id;
}

int
kt_event_field_int(const struct kt_event *ev, enum kt_field f, int64_t *v)
{
	return kt_val_int(ev, &ev->f[f], v);
}

int
kt_event_sort_index(const struct kt_event *ev, int64_t *v)
{
	struct kt_val a;

	if (ev->f[KT_F_ARGS].type != KT_OBJECT || kt_event_find(ev,
	    &ev->f[KT_F_ARGS], "sort_index", &a) != 0)
		return -1;
	return kt_val_int(ev, &a, v);
}

int
kt_val_int(const struct kt_event *ev, const struct kt_val *val, int64_t *v)
{
	const char *p = ev->raw + val->off;
	size_t n = val->len, i = 0;
	uint64_t u = 0;
	int neg = 0;

	if (val->type == KT_STRING && n >= 2) {
		p++;
		n -= 2;
	} else if (val->type != KT_NUMBER)
		return -1;
	if (n > 0 && p[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == n)
		return -1;
	/* 18 digits or fewer cannot overflow: eight at a time, then one. */
	if (n - i <= 18) {
		uint64_t w;

		for (; n - i >= 8; i += 8) {
			if (!kt_eight_digits(p + i, &w))
				return -1;
			u = u * 100000000 + w;
		}
		for (; i < n; i++) {
			if ((unsigned)(p[i] - '0') > 9)
				return -1;
			u = u * 10 + (uint64_t)(p[i] - '0');
		}
		*v = neg ? -(int64_t)u : (int64_t)u;
		return 0;
	}
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9' || u > (uint64_t)INT64_MAX / 10)
			return -1;
		u = u * 10 + (uint64_t)(p[i] - '0');
	}
	if (u > (uint64_t)INT64_MAX)
		return -1;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

/*
 * Classify an event by ph, cat and name, the way Kineto labels them,
 * including the 2021-era names (Kernel, Runtime, Memcpy, Operator).
 * Other accelerators: XPU and PrivateUse1 devices write kernel and
 * gpu_memcpy as CUDA does; MTIA writes its device activities as
 * mtia_ccp_events, of which dma_request is a copy and event_record and
 * event_wait are synchronisation, not work (other).
 */
enum kt_kind
kt_event_classify(const struct kt_event *ev)
{
#define CAT(s, k)	{ s, sizeof(s) - 1, k }
	static const struct {
		const char	*cat;
		size_t		 len;
		enum kt_kind	 kind;
	} cats[] = {
		CAT("kernel", KT_KERNEL),
		CAT("cpu_op", KT_CPU_OP),
		CAT("cuda_runtime", KT_CUDA_RUNTIME),
		CAT("python_function", KT_PYTHON_FUNCTION),
		CAT("user_annotation", KT_USER_ANNOTATION),
		CAT("gpu_user_annotation", KT_GPU_USER_ANNOTATION),
		CAT("cuda_driver", KT_CUDA_DRIVER),
		CAT("gpu_memcpy", KT_GPU_MEMCPY),
		CAT("gpu_memset", KT_GPU_MEMSET),
		CAT("Kernel", KT_KERNEL),
		CAT("Operator", KT_CPU_OP),
		CAT("Runtime", KT_CUDA_RUNTIME),
		CAT("Memcpy", KT_GPU_MEMCPY),
		CAT("Memset", KT_GPU_MEMSET),
		CAT("mtia_ccp_events", KT_KERNEL),
	};
#undef CAT
	enum kt_kind k = KT_OTHER;
	size_t i;

	switch (ev->ph) {
	case 'M':
		return KT_METADATA;
	case 'C':
		return KT_COUNTER;
	case 's':
	case 't':
	case 'f':
		return KT_FLOW;
	case 'i':
	case 'I':
		if (kt_event_field_is(ev, KT_F_NAME, "[memory]"))
			return KT_MEMORY;
		return KT_INSTANT;
	}
	if (ev->f[KT_F_CAT].type == KT_STRING) {
		const char *c = ev->raw + ev->f[KT_F_CAT].off + 1;
		size_t n = ev->f[KT_F_CAT].len - 2;

		/* Compare only names of the right length and first byte. */
		for (i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
			if (cats[i].len == n && cats[i].cat[0] == c[0] &&
			    same_bytes(cats[i].cat, c, n)) {
				k = cats[i].kind;
				break;
			}
		if (k == KT_KERNEL && c[0] == 'm') {
			if (kt_event_field_is(ev, KT_F_NAME, "dma_request"))
				k = KT_GPU_MEMCPY;
			else if (kt_event_field_is(ev, KT_F_NAME,
			    "event_record") || kt_event_field_is(ev, KT_F_NAME,
			    "event_wait"))
				k = KT_OTHER;
		}
	}
	if ((k == KT_USER_ANNOTATION || k == KT_CPU_OP ||
	    (k == KT_OTHER && ev->f[KT_F_CAT].type == KT_NONE)) &&
	    field_prefix(ev, KT_F_NAME, "ProfilerStep#"))
		return KT_STEP;
	return k;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The eight bytes that end at p (p - 8 to p), the first in the low byte. */
static inline uint64_t
word_before(const char *p)
{
	uint64_t x;

	memcpy(&x, p - 8, 8);
	return x;
}

/* x with its bytes below byte n (n < 8) made '0'. */
static inline uint64_t
zero_pad(uint64_t x, unsigned n)
{
	uint64_t m = ((uint64_t)1 << (8 * n)) - 1;

	return (x & ~m) | (0x3030303030303030ULL & m);
}

/*
 * Kineto's usual time, 1 to 16 digits, a point and three decimals, read
 * in whole words: the eight bytes that end the text (the last four
 * digits before the point, the point, the decimals: the point taken out,
 * a '0' put first, they read as the last four digits' ns), and the eight
 * and four digits before those, each word read where it ends; bytes
 * before the text are made '0'.  The text is raw[off..off+len), and the
 * words stay within raw[0..off+len).  0 with *ns (as kt_time_parse gives
 * it: no flag, three decimals), or -1 for kt_time_parse.
 */
static int
time3_fast(const char *raw, size_t off, size_t len, int64_t *ns)
{
	const char *e = raw + off + len;
	uint64_t x, lo, mid = 0, hi = 0, v;
	size_t nint = len - 4;

	if (len < 5 || len > 20 || off + len < (size_t)8 * (1 +
	    (nint > 4) + (nint > 12)))
		return -1;
	x = word_before(e);
	if ((x >> 32 & 0xff) != '.')
		return -1;
	/* "0", the last four digits before the point, the decimals. */
	x = (x & 0xffffffffULL) << 8 | 0x30 | (x & 0xffffff0000000000ULL);
	if (nint < 4)
		x = zero_pad(x >> 8, (unsigned)(4 - nint)) << 8 | 0x30;
	if (!kt_eight_digits_word(x, &lo))
		return -1;
	if (nint > 4) {
		x = word_before(e - 8);
		if (nint < 12)
			x = zero_pad(x, (unsigned)(12 - nint));
		if (!kt_eight_digits_word(x, &mid))
			return -1;
	}
	if (nint > 12 && !kt_eight_digits_word(zero_pad(word_before(e - 16),
	    (unsigned)(20 - nint)), &hi))
		return -1;
	v = hi * 1000000000000000ULL + mid * 10000000ULL + lo;
	if (v > (uint64_t)KT_TIME_MAX)
		return -1;
	*ns = (int64_t)v;
	return 0;
}
#endif

/* Parse a time field into *ns; sets flags on success. */
static void
finish_time(struct kt_event *ev, enum kt_field f, int64_t *ns, int *dec,
    unsigned ok, unsigned subns)
{
	int fl = 0;

	*ns = 0;
	*dec = 0;
	if (ev->f[f].type != KT_NUMBER)
		return;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (time3_fast(ev->raw, ev->f[f].off, ev->f[f].len, ns) == 0) {
		*dec = 3;
		ev->flags |= ok;
		return;
	}
#endif
	if (kt_time_parse(ev->raw + ev->f[f].off, ev->f[f].len, ns, &fl,
	    dec) == -1) {
		*ns = 0;
		return;
	}
	ev->flags |= ok;
	if (fl & KT_TIME_SUBNS)
		ev->flags |= subns;
}

void
kt_event_finish(struct kt_event *ev)
{
	ev->flags &= ~(unsigned)(KT_EV_TS | KT_EV_DUR | KT_EV_TS_SUBNS |
	    KT_EV_DUR_SUBNS | KT_EV_LATE);
	finish_time(ev, KT_F_TS, &ev->ts, &ev->ts_decimals, KT_EV_TS,
	    KT_EV_TS_SUBNS);
	finish_time(ev, KT_F_DUR, &ev->dur, &ev->dur_decimals, KT_EV_DUR,
	    KT_EV_DUR_SUBNS);
	ev->ph = ev->f[KT_F_PH].type == KT_STRING && ev->f[KT_F_PH].len > 2 ?
	    ev->raw[ev->f[KT_F_PH].off + 1] : 0;
	ev->kind = kt_event_classify(ev);
}

/*
 * The survey's cheaper finish: ph and ts only, and the kind only of a
 * possible ProfilerStep (dur and the kind of the rest are not needed).
 */
void
kt_event_finish_skim(struct kt_event *ev)
{
	ev->flags &= ~(unsigned)(KT_EV_TS | KT_EV_DUR | KT_EV_TS_SUBNS |
	    KT_EV_DUR_SUBNS);
	finish_time(ev, KT_F_TS, &ev->ts, &ev->ts_decimals, KT_EV_TS,
	    KT_EV_TS_SUBNS);
	ev->dur = 0;
	ev->ph = ev->f[KT_F_PH].type == KT_STRING && ev->f[KT_F_PH].len > 2 ?
	    ev->raw[ev->f[KT_F_PH].off + 1] : 0;
	ev->kind = field_prefix(ev, KT_F_NAME, "ProfilerStep#") ?
	    kt_event_classify(ev) : KT_OTHER;
}

int
kt_event_scan(const char *buf, size_t n, struct kt_event *ev,
    struct kt_error *err)
{
	struct kt_scanner rescan;	/* no state kept between calls */
	size_t end = 0, p;
	int rc;

	memset(&rescan, 0, sizeof(rescan));
	rescan.strict = 1;
	for (p = 0; p < n && kt_ws[(unsigned char)buf[p]]; p++)
		;
	ev->raw = buf + p;
	rc = p < n ? kt_scan_value(&rescan, buf, p, n, &end, ev) :
	    KT_SCAN_MORE;
	if (rc == KT_SCAN_OK) {
		size_t q;

		for (q = end; q < n && kt_ws[(unsigned char)buf[q]]; q++)
			;
		if (q != n) {
			kt_error_set(err, NULL, 0, (long)q + 1,
			    "unexpected text after the event");
			return -1;
		}
		ev->len = end - p;
		ev->flags &= ~(unsigned)KT_EV_REPAIRED;
		kt_event_finish(ev);
		kt_scanner_free(&rescan);
		return 0;
	}
	if (rc == KT_SCAN_MORE)
		kt_error_set(err, NULL, 0, (long)n + 1, "incomplete event");
	else
		kt_error_set(err, NULL, 0, (long)rescan.err_off + 1, "%s",
		    rescan.err_msg);
	kt_scanner_free(&rescan);
	return -1;
}

/* The type of the value whose first byte is c. */
enum kt_type
kt_type_of(char c)
{
	switch (c) {
	case '"':
		return KT_STRING;
	case '{':
		return KT_OBJECT;
	case '[':
		return KT_ARRAY;
	case 't':
		return KT_TRUE;
	case 'f':
		return KT_FALSE;
	case 'n':
		return KT_NULL;
	default:
		return KT_NUMBER;
	}
}

/*
 * Unlike kt_event_scan(), this keeps no state between calls (its scanner
 * is its own, allocating only for a value that nests), so that threads
 * may call it at once on different events.
 */
int
kt_event_find(const struct kt_event *ev, const struct kt_val *obj,
    const char *key, struct kt_val *out)
{
	size_t klen = strlen(key);
	struct kt_val v;
	char quoted[64];

	if (obj->type != KT_OBJECT)
		return -1;
	/*
	 * A member matches by its name's raw bytes, so an object whose text
	 * does not hold "key" (quotes and all) has none: one kt_memfind, far
	 * cheaper than scanning every member (a kernel's args without a
	 * "graph node id", an op's without a Sequence number).
	 */
	if (klen + 2 <= sizeof(quoted)) {
		quoted[0] = '"';
		memcpy(quoted + 1, key, klen);
		quoted[klen + 1] = '"';
		if (kt_memfind(ev->raw + obj->off, obj->len, quoted,
		    klen + 2) == NULL)
			return -1;
	}
	if (kt_event_find_keys(ev, obj, &key, 1, &v) != 1)
		return -1;
	*out = v;
	return 0;
}

/*
 * kt_event_find for several keys at once, in one walk over the members
 * (each key takes the first member of its name, as there).
 */
/*
 * The end of the value at b[p], before end: a string, number or literal
 * by its bytes (the event's bytes were scanned whole when read, so only
 * their ends are looked for here, never past end), an object or array
 * by the scanner (*sc, made on first use).  0 when there is none.
 */
/* The bytes that end a string's run of plain bytes. */
static const unsigned char string_stop[256] = { ['"'] = 1, ['\\'] = 1 };

/* The bytes that end a number or literal. */
static const unsigned char value_end[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [','] = 1, ['}'] = 1,
	[']'] = 1, [':'] = 1
};

static size_t
skip_value(struct kt_scanner *sc, int *have_sc, const char *b, size_t p,
    size_t end)
{
	size_t q = p;

	switch (b[p]) {
	case '"':
		for (q = p + 1; q < end; q += 2) {
			while (q < end && !string_stop[(unsigned char)b[q]])
				q++;
			if (q < end && b[q] == '"')
				return q + 1;
		}
		return 0;	/* past a backslash, its byte skipped */
	case '{':
	case '[':
		if (!*have_sc) {
			memset(sc, 0, sizeof(*sc));
			sc->strict = 1;
			*have_sc = 1;
		}
		return kt_scan_value(sc, b, p, end, &q, NULL) == KT_SCAN_OK ?
		    q : 0;
	}
	while (q < end && !value_end[(unsigned char)b[q]])
		q++;
	return q > p ? q : 0;
}

int
kt_event_find_keys(const struct kt_event *ev, const struct kt_val *obj,
    const char *const *keys, size_t nkeys, struct kt_val *out)
{
	struct kt_scanner sc;
	const char *b = ev->raw;
	size_t p, end, k, kl[16];
	int nfound = 0, have_sc = 0;

	for (k = 0; k < nkeys; k++) {
		out[k].type = KT_NONE;
		if (k < 16)
			kl[k] = strlen(keys[k]);
	}
	if (obj->type != KT_OBJECT)
		return 0;
	p = obj->off + 1;
	end = obj->off + obj->len - 1;	/* the closing brace */
	while ((size_t)nfound < nkeys) {
		size_t ks, ke, vs, ve;

		while (p < end && kt_ws[(unsigned char)b[p]])
			p++;
		if (p >= end || b[p] != '"')
			break;
		ks = p;
		if ((ke = skip_value(&sc, &have_sc, b, ks, end)) == 0)
			break;
		p = ke;
		while (p < end && (kt_ws[(unsigned char)b[p]] || b[p] == ':'))
			p++;
		vs = p;
		if (p >= end || (ve = skip_value(&sc, &have_sc, b, vs, end)) ==
		    0)
			break;
		for (k = 0; k < nkeys; k++)
			if (out[k].type == KT_NONE &&
			    ke - ks - 2 == (k < 16 ? kl[k] : strlen(keys[k])) &&
			    memcmp(b + ks + 1, keys[k], ke - ks - 2) == 0) {
				out[k].off = (uint32_t)vs;
				out[k].len = (uint32_t)(ve - vs);
				out[k].type = (uint8_t)kt_type_of(b[vs]);
				nfound++;
			}
		p = ve;
		while (p < end && kt_ws[(unsigned char)b[p]])
			p++;
		if (p >= end || b[p] != ',')
			break;
		p++;
	}
	if (have_sc)
		kt_scanner_free(&sc);
	return nfound;
}

size_t
kt_event_ts_shifted(const struct kt_event *ev, int64_t delta, char *out)
{
	const char *p = ev->raw + ev->f[KT_F_TS].off, *dot;
	size_t n, len = ev->f[KT_F_TS].len, tail;

	n = kt_time_format(ev->ts + delta, ev->ts_decimals, out);
	if (ev->ts_decimals <= 3 || ev->ts + delta < 0 ||
	    (dot = memchr(p, '.', len)) == NULL ||
	    memchr(p, 'e', len) != NULL || memchr(p, 'E', len) != NULL)
		return n;
	/* Digits below 1 ns (zeros too) come from the original text. */
	tail = (size_t)(p + len - dot) - 4;
	if (tail > 60)
		tail = 60;
	n = kt_time_format(ev->ts + delta, 3, out);
	memcpy(out + n, dot + 4, tail);
	n += tail;
	out[n] = '\0';
	return n;
}
