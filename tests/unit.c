/*
 * unit.c: unit tests of the kt library: exact time, the scanner, event
 * kinds, raw patching, the reader's repairs and errors, TSV, sorting and
 * interning.  It prints "FAIL file:line: what" for each failed check and
 * ends with "unit: N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <zlib.h>

#include "kt.h"
#include "core/ktint.h"

static int npass, nfail;

#define CHECK(c) check((c) != 0, __LINE__, #c)

static void
check(int ok, int line, const char *what)
{
	if (ok)
		npass++;
	else {
		nfail++;
		printf("FAIL unit.c:%d: %s\n", line, what);
	}
}

/* The random texts' generator: one xorshift64 step, the new state. */
static uint64_t
xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* n bytes at p equal m at q (memcmp wants pointers even for none). */
static int
bytes_eq(const void *p, size_t n, const void *q, size_t m)
{
	return n == m && (n == 0 || memcmp(p, q, n) == 0);
}

/* Parse then format back: the text must come out the same. */
static int
roundtrip(const char *s, int64_t want)
{
	char buf[64];
	int64_t ns;
	int fl, dec;

	if (kt_time_parse(s, strlen(s), &ns, &fl, &dec) == -1 || ns != want)
		return 0;
	kt_time_format(ns, dec, buf);
	return strcmp(buf, s) == 0;
}

/* kt_buf_printf appends text of any length whole, after what is there. */
static void
test_buf_printf(void)
{
	struct kt_buf b = KT_BUF_INIT;
	char big[5000];
	size_t i;

	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i % 26);
	big[sizeof(big) - 1] = '\0';
	CHECK(kt_buf_adds(&b, "x=") == 0);
	CHECK(kt_buf_printf(&b, "%d:%s;", 42, big) == 0);
	CHECK(b.n == 2 + 3 + 4999 + 1 && memcmp(b.p, "x=42:", 5) == 0 &&
	    memcmp(b.p + 5, big, 4999) == 0 && b.p[b.n - 1] == ';');
	CHECK(kt_buf_printf(&b, "%s", "") == 0 && b.n == 2 + 3 + 4999 + 1);
	kt_buf_free(&b);
}

/* v = v * 10 + d, or *big once past KT_TIME_MAX (it only grows). */
static void
oracle_digit(uint64_t *v, int d, int *big)
{
	if (*big || *v > (uint64_t)KT_TIME_MAX / 10)
		*big = 1;
	else if ((*v = *v * 10 + (uint64_t)d) > (uint64_t)KT_TIME_MAX)
		*big = 1;
}

/*
 * kt_time_parse against a plain reading of the same text: -? digits
 * (.digits)? in microseconds, decimals past the third dropped (and
 * flagged when not zero).  1 valid (*ns, *subns set), 0 not a number or
 * out of range.
 */
static int
time_oracle(const char *s, int64_t *ns, int *subns)
{
	uint64_t v = 0;
	int neg = 0, ni = 0, nf = 0, big = 0, k;

	*subns = 0;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++, ni++)
		oracle_digit(&v, *s - '0', &big);
	if (ni == 0)
		return 0;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, nf++) {
			if (nf < 3)
				oracle_digit(&v, *s - '0', &big);
			else if (*s != '0')
				*subns = 1;
		}
	}
	if (*s != '\0' || s[-1] == '.')
		return 0;
	for (k = nf; k < 3; k++)
		oracle_digit(&v, 0, &big);
	if (big)
		return 0;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

/* Random decimal texts of 0-20 digits and 0-6 decimals, both paths. */
static void
test_time_oracle(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int i, bad = 0;

	for (i = 0; i < 200000 && !bad; i++) {
		char s[40];
		size_t n = 0;
		int k, ni, nf, want, sub, fl, dec, got;
		int64_t ns = 0, wns = 0;

		xorshift(&x);
		if (x & 1)
			s[n++] = '-';
		ni = (int)(x >> 8 & 31) % 21;
		nf = (int)(x >> 16 & 7) % 7;
		for (k = 0; k < ni; k++)
			/* Leading zeros and nines are where lengths bite. */
			s[n++] = (char)("0123456789990000"[(x >> (24 + 2 * k % 36)) & 15]);
		if ((x >> 60) & 1 || nf > 0)
			s[n++] = '.';
		for (k = 0; k < nf; k++)
			s[n++] = (char)('0' + (x >> (4 * k + 3)) % 10);
		s[n] = '\0';
		want = time_oracle(s, &wns, &sub);
		got = kt_time_parse(s, n, &ns, &fl, &dec);
		if (want == 1)
			bad = got != 0 || ns != wns ||
			    !!(fl & KT_TIME_SUBNS) != sub || dec != nf;
		else
			bad = got != -1;	/* not a number, or too large */
		if (bad)
			printf("time oracle: '%s' want %d %lld, got %d %lld\n",
			    s, want, (long long)wns, got, (long long)ns);
	}
	CHECK(!bad);
}

/*
 * An event's ts and dur as the scan reads them (event.c's word-at-a-time
 * reading of Kineto's "digits.ddd", else kt_time_parse) against the
 * oracle: texts of 1-20 digits with three decimals mostly, the rest
 * other forms, after keys of 0-30 bytes of padding (so that the words
 * read before the text start at the event's first byte or near it);
 * each event in an allocation of its exact size, for AddressSanitizer.
 */
static void
test_time_event_oracle(void)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int i, bad = 0, fast = 0;

	for (i = 0; i < 300000 && !bad; i++) {
		char t[2][40], *buf;
		struct kt_event ev;
		struct kt_error err;
		size_t n;
		int j, k, pad, want[2], sub[2], ok;
		int64_t wns[2] = { 0, 0 };

		for (j = 0; j < 2; j++) {
			int ni, nf, m = 0;

			xorshift(&x);
			ni = 1 + (int)(x & 31) % 20;
			nf = (x >> 5 & 7) < 6 ? 3 : (int)(x >> 8 & 7) % 6;
			if ((x >> 11 & 15) == 0)
				t[j][m++] = '-';
			for (k = 0; k < ni; k++)
				t[j][m++] = (char)("0123456789990000"[(x >>
				    (14 + 2 * k % 40)) & 15]);
			if (nf > 0)
				t[j][m++] = '.';
			xorshift(&x);
			for (k = 0; k < nf; k++)
				t[j][m++] = (char)('0' + (x >> (5 * k)) % 10);
			t[j][m] = '\0';
			want[j] = time_oracle(t[j], &wns[j], &sub[j]);
		}
		pad = (int)(x >> 40) % 31;
		n = (size_t)snprintf(NULL, 0, "{\"%.*s\":1,\"ts\":%s,\"dur\":%s}",
		    pad, "abcdefghijklmnopqrstuvwxyzabcdef", t[0], t[1]);
		if ((buf = malloc(n + 1)) == NULL)
			abort();
		snprintf(buf, n + 1, "{\"%.*s\":1,\"ts\":%s,\"dur\":%s}", pad,
		    "abcdefghijklmnopqrstuvwxyzabcdef", t[0], t[1]);
		/* Also with ts the first key, its text at the 6th byte. */
		if (pad == 0)
			n = (size_t)sprintf(buf, "{\"ts\":%s,\"dur\":%s,\"\":1}",
			    t[0], t[1]);
		ok = kt_event_scan(buf, n, &ev, &err) == 0;
		if (ok) {
			fast += want[0] == 1 && strlen(t[0]) > 4 &&
			    t[0][strlen(t[0]) - 4] == '.';
			bad = !!(ev.flags & KT_EV_TS) != want[0] ||
			    !!(ev.flags & KT_EV_DUR) != want[1] ||
			    (want[0] && (ev.ts != wns[0] ||
			    !!(ev.flags & KT_EV_TS_SUBNS) != sub[0] ||
			    ev.ts_decimals != (strchr(t[0], '.') ?
			    (int)strlen(strchr(t[0], '.') + 1) : 0))) ||
			    (want[1] && (ev.dur != wns[1] ||
			    !!(ev.flags & KT_EV_DUR_SUBNS) != sub[1]));
			if (bad)
				printf("time event oracle: %s: ts %lld dec %d "
				    "flags %x, dur %lld\n", buf,
				    (long long)ev.ts, ev.ts_decimals,
				    ev.flags, (long long)ev.dur);
		}
		free(buf);
	}
	CHECK(!bad);
	CHECK(fast > 100000);	/* the usual form was most of them */
}

static void
test_time(void)
{
	int64_t ns;
	int fl, dec, i;
	char buf[64];
	uint64_t x = 88172645463325252ULL;

	CHECK(roundtrip("1712195495505582.988", 1712195495505582988LL));
	CHECK(roundtrip("1712195495505583", 1712195495505583000LL));
	CHECK(roundtrip("0.5", 500));
	CHECK(roundtrip("-0.5", -500));
	CHECK(roundtrip("0", 0));
	CHECK(roundtrip("27168130034.472", 27168130034472LL));
	/* The range: +-(2^62 - 1) ns, so that two times never overflow. */
	CHECK(roundtrip("4611686018427387.903", KT_TIME_MAX));
	CHECK(roundtrip("-4611686018427387.903", -KT_TIME_MAX));
	CHECK(kt_time_parse("4611686018427387.904", 20, &ns, NULL, NULL) ==
	    -1);
	CHECK(kt_time_parse("9223372036854775.807", 20, &ns, NULL, NULL) ==
	    -1);
	CHECK(kt_time_add(KT_TIME_MAX - 1, 1, &ns) == 0 && ns == KT_TIME_MAX);
	CHECK(kt_time_add(KT_TIME_MAX, 1, &ns) == -1);
	CHECK(kt_time_add(-KT_TIME_MAX, -1, &ns) == -1);
	CHECK(kt_time_add(INT64_MAX, -INT64_MAX, &ns) == -1);
	CHECK(kt_time_parse("12.3456", 7, &ns, &fl, &dec) == 0 &&
	    ns == 12345 && (fl & KT_TIME_SUBNS) && dec == 4);
	CHECK(kt_time_parse("12.3450", 7, &ns, &fl, &dec) == 0 &&
	    ns == 12345 && !(fl & KT_TIME_SUBNS));
	CHECK(kt_time_parse("1.5e3", 5, &ns, &fl, &dec) == 0 &&
	    ns == 1500000 && (fl & KT_TIME_EXP));
	CHECK(kt_time_parse("1E-3", 4, &ns, &fl, &dec) == 0 && ns == 1);
	CHECK(kt_time_parse("2e-4", 4, &ns, &fl, &dec) == 0 && ns == 0 &&
	    (fl & KT_TIME_SUBNS));
	CHECK(kt_time_parse("-0.001", 6, &ns, &fl, &dec) == 0 && ns == -1);
	CHECK(kt_time_parse("007", 3, &ns, &fl, &dec) == 0 && ns == 7000);
	CHECK(kt_time_parse("9223372036854775.808", 20, &ns, NULL, NULL) ==
	    -1);
	CHECK(kt_time_parse("1e300", 5, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse("abc", 3, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse("1.", 2, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse(".5", 2, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse("-", 1, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse("", 0, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse("1e", 2, &ns, NULL, NULL) == -1);
	CHECK(kt_time_parse("1x", 2, &ns, NULL, NULL) == -1);
	CHECK(kt_duration_parse("1623142623460172000ns", &ns) == 0 &&
	    ns == 1623142623460172000LL);
	CHECK(kt_duration_parse("1.5ms", &ns) == 0 && ns == 1500000);
	CHECK(kt_duration_parse("2s", &ns) == 0 && ns == 2000000000);
	CHECK(kt_duration_parse("300us", &ns) == 0 && ns == 300000);
	CHECK(kt_duration_parse("7", &ns) == -1);
	/* Past the range: refused, never saturated (fuzz-time found it). */
	CHECK(kt_duration_parse("9223372036854775808ns", &ns) == -1);
	CHECK(kt_duration_parse("9999999999999999999ns", &ns) == -1);
	CHECK(kt_duration_parse("4611686018427387903ns", &ns) == 0 &&
	    ns == KT_TIME_MAX);
	CHECK(kt_duration_parse("4611686018427387904ns", &ns) == -1);
	CHECK(kt_duration_parse("ms", &ns) == -1);
	kt_time_format(1500, 0, buf);
	CHECK(strcmp(buf, "1.5") == 0);
	kt_time_format(1500, 3, buf);
	CHECK(strcmp(buf, "1.500") == 0);
	kt_time_format(2000, 0, buf);
	CHECK(strcmp(buf, "2") == 0);
	kt_time_format(-1, 0, buf);
	CHECK(strcmp(buf, "-0.001") == 0);
	kt_int_format(INT64_MIN, buf);
	CHECK(strcmp(buf, "-9223372036854775808") == 0);
	/* Random values: format with 3 decimals, parse back exactly. */
	for (i = 0; i < 100000; i++) {
		int64_t v, back;

		xorshift(&x);
		v = (int64_t)(x >> 2) * (i % 2 ? 1 : -1);
		kt_time_format(v, 3, buf);
		if (kt_time_parse(buf, strlen(buf), &back, NULL, NULL) == -1 ||
		    back != v) {
			CHECK(!"random time round trip");
			break;
		}
	}
	CHECK(i == 100000);
}

static void
test_scan(void)
{
	static const char ev1[] = "{\"ph\": \"X\", \"cat\": \"kernel\", "
	    "\"name\": \"k<1, 2>\", \"pid\": 0, \"tid\": 7, "
	    "\"ts\": 1712195495505582.988, \"dur\": 2,\n \"args\": {"
	    "\"External id\": 5, \"correlation\": 9, \"nested\": "
	    "{\"stream\": 99}, \"stream\": 7, \"device\": 0, "
	    "\"bytes\": 100, \"x\": [[[]]]}}";
	struct kt_event ev;
	struct kt_error err;
	int64_t v;
	size_t n;
	const char *p;
	struct kt_val a;

	memset(&ev, 0, sizeof(ev));
	CHECK(kt_event_scan(ev1, sizeof(ev1) - 1, &ev, &err) == 0);
	CHECK(ev.kind == KT_KERNEL);
	CHECK(ev.ph == 'X');
	CHECK((ev.flags & KT_EV_TS) && ev.ts == 1712195495505582988LL);
	CHECK((ev.flags & KT_EV_DUR) && ev.dur == 2000);
	CHECK(kt_event_field_is(&ev, KT_F_NAME, "k<1, 2>"));
	p = kt_event_field(&ev, KT_F_STREAM, &n);
	CHECK(p != NULL && n == 1 && *p == '7');
	CHECK(kt_event_field_int(&ev, KT_F_CORR, &v) == 0 && v == 9);
	CHECK(kt_event_field_int(&ev, KT_F_EXTID, &v) == 0 && v == 5);
	CHECK(kt_event_field_int(&ev, KT_F_BYTES, &v) == 0 && v == 100);
	CHECK(kt_event_field_int(&ev, KT_F_DEVICE, &v) == 0 && v == 0);
	CHECK(ev.f[KT_F_ARGS].type == KT_OBJECT);
	CHECK(kt_event_find(&ev, &ev.f[KT_F_ARGS], "x", &a) == 0 &&
	    a.type == KT_ARRAY && a.len == 6);
	CHECK(kt_event_find(&ev, &ev.f[KT_F_ARGS], "nope", &a) == -1);
	CHECK(ev.f[KT_F_ID].type == KT_NONE);
	{
		/* Several keys in one walk: what kt_event_find finds each. */
		static const char *const keys[] = { "stream", "nope", "x",
		    "External id", "stream" };
		struct kt_val o[5], one;
		size_t k;
		int same = 1;

		CHECK(kt_event_find_keys(&ev, &ev.f[KT_F_ARGS], keys, 5, o) ==
		    4);
		for (k = 0; k < 5; k++) {
			if (kt_event_find(&ev, &ev.f[KT_F_ARGS], keys[k],
			    &one) == -1)
				one.type = KT_NONE;
			if (one.type != o[k].type || (one.type != KT_NONE &&
			    (one.off != o[k].off || one.len != o[k].len)))
				same = 0;
		}
		CHECK(same);
		CHECK(o[0].type == KT_NUMBER && o[0].len == 1 &&
		    ev1[o[0].off] == '7' && o[1].type == KT_NONE);
		CHECK(kt_event_find_keys(&ev, &ev.f[KT_F_NAME], keys, 1, o) ==
		    0 && o[0].type == KT_NONE);
	}
	/* Invalid text is refused, never half-read. */
	CHECK(kt_event_scan("{\"a\": tru}", 10, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"a\": 1", 7, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"a\": 1]", 8, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"a\" 1}", 7, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"a\": 01x}", 10, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"a\": \"\\q\"}", 11, &ev, &err) == -1);
	CHECK(kt_event_scan("[1]", 3, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"a\": 1} x", 10, &ev, &err) == -1);
	CHECK(kt_event_scan("{\"s\": \"\\u00e9\\n\"}", 17, &ev, &err) == 0);
}

/* Classify the event in s. */
static int
kind_of(const char *s)
{
	struct kt_event ev;

	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(s, strlen(s), &ev, NULL) == -1)
		return -1;
	return (int)ev.kind;
}

static void
test_kinds(void)
{
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\"}") ==
	    KT_CPU_OP);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"a\"}") ==
	    KT_CPU_OP);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"user_annotation\","
	    "\"name\":\"ProfilerStep#3\"}") == KT_STEP);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"cpu_op\","
	    "\"name\":\"ProfilerStep#3\"}") == KT_STEP);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\","
	    "\"name\":\"ProfilerStep#3\"}") == KT_GPU_USER_ANNOTATION);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"user_annotation\","
	    "\"name\":\"fwd\"}") == KT_USER_ANNOTATION);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"cuda_runtime\"}") ==
	    KT_CUDA_RUNTIME);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"Runtime\"}") == KT_CUDA_RUNTIME);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"cuda_driver\"}") ==
	    KT_CUDA_DRIVER);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"kernel\"}") == KT_KERNEL);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"Kernel\"}") == KT_KERNEL);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"gpu_memcpy\"}") ==
	    KT_GPU_MEMCPY);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"Memcpy\"}") == KT_GPU_MEMCPY);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"gpu_memset\"}") ==
	    KT_GPU_MEMSET);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"Memset\"}") == KT_GPU_MEMSET);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"python_function\"}") ==
	    KT_PYTHON_FUNCTION);
	CHECK(kind_of("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\"}") ==
	    KT_MEMORY);
	CHECK(kind_of("{\"ph\":\"i\",\"name\":\"x\"}") == KT_INSTANT);
	CHECK(kind_of("{\"ph\":\"s\",\"cat\":\"ac2g\"}") == KT_FLOW);
	CHECK(kind_of("{\"ph\":\"f\",\"cat\":\"async\",\"bp\":\"e\"}") ==
	    KT_FLOW);
	CHECK(kind_of("{\"ph\":\"t\"}") == KT_FLOW);
	CHECK(kind_of("{\"ph\":\"M\",\"name\":\"thread_name\"}") ==
	    KT_METADATA);
	CHECK(kind_of("{\"ph\":\"C\",\"name\":\"mem\"}") == KT_COUNTER);
	CHECK(kind_of("{\"ph\":\"X\",\"cat\":\"Trace\"}") == KT_OTHER);
	CHECK(kind_of("{\"ph\":\"X\",\"name\":\"ProfilerStep#1\"}") == KT_STEP);
	CHECK(strcmp(kt_kind_name(KT_GPU_MEMSET), "gpu_memset") == 0);
	CHECK(kt_kind_parse("python_function", 15) == KT_PYTHON_FUNCTION);
	CHECK(kt_kind_parse("nope", 4) == -1);
}

/* Patch the event in s; returns the new text (static). */
static const char *
patched(const char *s, int field, const char *key, const char *val)
{
	static char out[512];
	struct kt_event ev;
	struct kt_patch p;
	struct kt_buf b = KT_BUF_INIT;

	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(s, strlen(s), &ev, NULL) == -1)
		return "scan failed";
	kt_patch_init(&p, &ev);
	if ((key ? kt_patch_arg(&p, key, val, strlen(val)) :
	    kt_patch_set(&p, (enum kt_field)field, val, strlen(val))) == -1 ||
	    kt_patch_apply(&p, &b) == -1)
		snprintf(out, sizeof(out), "patch failed");
	else
		snprintf(out, sizeof(out), "%.*s", (int)b.n, b.p);
	kt_patch_free(&p);
	kt_buf_free(&b);
	return out;
}

static void
test_patch(void)
{
	struct kt_event ev;
	struct kt_patch p;
	struct kt_buf b = KT_BUF_INIT;
	static const char e[] = "{ \"ts\" : 1.5 ,\n \"name\": \"a\", "
	    "\"args\": {\"x\": 1} }";

	CHECK(strcmp(patched(e, KT_F_TS, NULL, "2.5"), "{ \"ts\" : 2.5 ,\n "
	    "\"name\": \"a\", \"args\": {\"x\": 1} }") == 0);
	CHECK(strcmp(patched(e, KT_F_DUR, NULL, "3"), "{\"dur\": 3,  \"ts\" : "
	    "1.5 ,\n \"name\": \"a\", \"args\": {\"x\": 1} }") == 0);
	CHECK(strcmp(patched(e, 0, "rank", "3"), "{ \"ts\" : 1.5 ,\n "
	    "\"name\": \"a\", \"args\": {\"rank\": 3, \"x\": 1} }") == 0);
	CHECK(strcmp(patched(e, 0, "x", "\"y\""), "{ \"ts\" : 1.5 ,\n "
	    "\"name\": \"a\", \"args\": {\"x\": \"y\"} }") == 0);
	CHECK(strcmp(patched("{\"a\": 1, \"args\": { }}", 0, "rank", "3"),
	    "{\"a\": 1, \"args\": {\"rank\": 3 }}") == 0);
	CHECK(strcmp(patched("{\"a\": 1}", 0, "rank", "3"),
	    "{\"args\": {\"rank\": 3}, \"a\": 1}") == 0);
	CHECK(strcmp(patched("{\"a\": 1}", KT_F_STREAM, NULL, "7"),
	    "{\"args\": {\"stream\": 7}, \"a\": 1}") == 0);
	CHECK(strcmp(patched("{\"args\": null, \"a\": 1}", KT_F_RANK, NULL,
	    "3"), "{\"args\": {\"rank\": 3}, \"a\": 1}") == 0);
	CHECK(strcmp(patched("{\"args\": [1], \"a\": 1}", KT_F_RANK, NULL,
	    "3"), "patch failed") == 0);
	CHECK(strcmp(patched("{\"a\": 1, \"args\": {}}", KT_F_RANK, NULL, "3"),
	    "{\"a\": 1, \"args\": {\"rank\": 3}}") == 0);
	/* Several new members of one object, empty or not, and new args. */
	memset(&ev, 0, sizeof(ev));
	CHECK(kt_event_scan("{\"args\": {}}", 12, &ev, NULL) == 0);
	kt_patch_init(&p, &ev);
	CHECK(kt_patch_arg(&p, "a", "1", 1) == 0 &&
	    kt_patch_arg(&p, "b", "2", 1) == 0 && kt_patch_apply(&p, &b) == 0);
	CHECK(b.n == 26 && memcmp(b.p, "{\"args\": {\"a\": 1, \"b\": 2}}",
	    26) == 0);
	kt_patch_free(&p);
	b.n = 0;
	CHECK(kt_event_scan("{\"x\": 0}", 8, &ev, NULL) == 0);
	kt_patch_init(&p, &ev);
	CHECK(kt_patch_arg(&p, "a", "1", 1) == 0 &&
	    kt_patch_arg(&p, "b", "2", 1) == 0 &&
	    kt_patch_set(&p, KT_F_PID, "7", 1) == 0 &&
	    kt_patch_apply(&p, &b) == 0);
	CHECK(b.n == 44 && memcmp(b.p, "{\"pid\": 7, \"args\": {\"a\": 1, "
	    "\"b\": 2}, \"x\": 0}", 44) == 0);
	if (b.n != 44)
		printf("%.*s\n", (int)b.n, b.p);
	kt_patch_free(&p);
	b.n = 0;
	/* Two edits at once keep every other byte. */
	memset(&ev, 0, sizeof(ev));
	CHECK(kt_event_scan(e, sizeof(e) - 1, &ev, NULL) == 0);
	kt_patch_init(&p, &ev);
	CHECK(kt_patch_set(&p, KT_F_NAME, "\"b\"", 3) == 0);
	CHECK(kt_patch_set(&p, KT_F_TS, "0", 1) == 0);
	CHECK(kt_patch_apply(&p, &b) == 0);
	CHECK(b.n == sizeof(e) - 3 && memcmp(b.p, "{ \"ts\" : 0 ,\n "
	    "\"name\": \"b\", \"args\": {\"x\": 1} }", b.n) == 0);
	kt_patch_free(&p);
	kt_buf_free(&b);
}

/* Read all events of a memory trace; returns the count or -1. */
static int
read_all(const char *s, unsigned flags, struct kt_repairs *rep,
    struct kt_error *err, struct kt_buf *raws)
{
	struct kt_reader *r = kt_reader_mem(s, strlen(s), "t.json", flags);
	struct kt_event ev;
	int n = 0, rc;

	while ((rc = kt_reader_next(r, &ev, err)) == 1) {
		n++;
		if (raws != NULL) {
			kt_buf_add(raws, ev.raw, ev.len);
			kt_buf_addc(raws, '\n');
		}
	}
	if (rep != NULL)
		*rep = *kt_reader_repairs(r);
	kt_reader_free(r);
	return rc == -1 ? -1 : n;
}

/*
 * Remove from the event in s: field (>= 0) or args.key, then, when
 * field2 >= 0, that field too.  The text, or why not (static); a text
 * that jansson cannot load is "invalid JSON".
 */
static const char *
removed(const char *s, int field, const char *key, int field2)
{
	static char out[512];
	struct kt_event ev;
	struct kt_patch p;
	struct kt_buf b = KT_BUF_INIT;
	json_t *j;

	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(s, strlen(s), &ev, NULL) == -1)
		return "scan failed";
	kt_patch_init(&p, &ev);
	if ((field >= 0 ? kt_patch_remove(&p, (enum kt_field)field) :
	    kt_patch_arg_remove(&p, key)) == -1 ||
	    (field2 >= 0 && kt_patch_remove(&p, (enum kt_field)field2) == -1) ||
	    kt_patch_apply(&p, &b) == -1)
		snprintf(out, sizeof(out), "patch failed");
	else if ((j = json_loadb(b.p, b.n, 0, NULL)) == NULL)
		snprintf(out, sizeof(out), "invalid JSON: %.*s", (int)b.n,
		    b.p);
	else {
		json_decref(j);
		snprintf(out, sizeof(out), "%.*s", (int)b.n, b.p);
	}
	kt_patch_free(&p);
	kt_buf_free(&b);
	return out;
}

/* Remove args members k1, k2 and (unless NULL) k3 in one patch. */
static const char *
removed2(const char *s, const char *k1, const char *k2, const char *k3)
{
	static char out[512];
	struct kt_event ev;
	struct kt_patch p;
	struct kt_buf b = KT_BUF_INIT;
	json_t *j;

	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(s, strlen(s), &ev, NULL) == -1)
		return "scan failed";
	kt_patch_init(&p, &ev);
	if (kt_patch_arg_remove(&p, k1) == -1 ||
	    kt_patch_arg_remove(&p, k2) == -1 ||
	    (k3 != NULL && kt_patch_arg_remove(&p, k3) == -1) ||
	    kt_patch_apply(&p, &b) == -1)
		snprintf(out, sizeof(out), "patch failed");
	else if ((j = json_loadb(b.p, b.n, 0, NULL)) == NULL)
		snprintf(out, sizeof(out), "invalid JSON: %.*s", (int)b.n,
		    b.p);
	else {
		json_decref(j);
		snprintf(out, sizeof(out), "%.*s", (int)b.n, b.p);
	}
	kt_patch_free(&p);
	kt_buf_free(&b);
	return out;
}

/* Removal: each result checked against the text written by hand. */
/* The id text of field f of the one-event text ev ("-" when unchanged). */
static const char *
id_text(const char *evtext, enum kt_field f, char *buf)
{
	struct kt_event ev;
	const char *p;
	size_t n;
	int r;

	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(evtext, strlen(evtext), &ev, NULL) == -1)
		return "scan failed";
	r = kt_event_id_text(&ev, f, &p, &n);
	snprintf(buf, 64, "%d %.*s", r, (int)n, p);
	return buf;
}

/* Scan the one-event text t into ev.  0 or -1. */
static int
scan_text(const char *t, struct kt_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	return kt_event_scan(t, strlen(t), ev, NULL);
}

/* Does b hold exactly the text t? */
static int
same_text(const struct kt_buf *b, const char *t)
{
	return b->n == strlen(t) && memcmp(b->p, t, b->n) == 0;
}

/* Ids by value, sort indexes, a top-level key set by a patch. */
static void
test_ids_keys(void)
{
	struct kt_event ev;
	struct kt_patch p;
	struct kt_buf b = KT_BUF_INIT, k1 = KT_BUF_INIT, k2 = KT_BUF_INIT;
	char buf[64];
	int64_t v;

	CHECK(strcmp(id_text("{\"tid\": \"25738\"}", KT_F_TID, buf),
	    "1 25738") == 0);
	CHECK(strcmp(id_text("{\"tid\": 25738}", KT_F_TID, buf),
	    "0 25738") == 0);
	CHECK(strcmp(id_text("{\"pid\": \"-3\"}", KT_F_PID, buf),
	    "1 -3") == 0);
	CHECK(strcmp(id_text("{\"pid\": \"0\"}", KT_F_PID, buf),
	    "1 0") == 0);
	/* Not canonical integers: kept as strings. */
	CHECK(strcmp(id_text("{\"pid\": \"007\"}", KT_F_PID, buf),
	    "0 \"007\"") == 0);
	CHECK(strcmp(id_text("{\"pid\": \"-0\"}", KT_F_PID, buf),
	    "0 \"-0\"") == 0);
	CHECK(strcmp(id_text("{\"tid\": \"stream 7\"}", KT_F_TID, buf),
	    "0 \"stream 7\"") == 0);
	CHECK(strcmp(id_text("{\"tid\": \"1234567890123456789\"}", KT_F_TID,
	    buf), "0 \"1234567890123456789\"") == 0);
	CHECK(strcmp(id_text("{\"tid\": \"123456789012345678\"}", KT_F_TID,
	    buf), "1 123456789012345678") == 0);
	CHECK(strcmp(id_text("{\"tid\": \"\"}", KT_F_TID, buf),
	    "0 \"\"") == 0);
	/* One thread key for both spellings. */
	CHECK(scan_text("{\"pid\": 1, \"tid\": \"9\"}", &ev) == 0 &&
	    kt_event_thread_key(&ev, &k1) == 0);
	CHECK(scan_text("{\"pid\": \"1\", \"tid\": 9}", &ev) == 0 &&
	    kt_event_thread_key(&ev, &k2) == 0);
	CHECK(k1.n == 3 && k2.n == 3 && memcmp(k1.p, "1\t9", 3) == 0 &&
	    memcmp(k2.p, "1\t9", 3) == 0);
	/* args.sort_index, a number or a string holding one. */
	CHECK(scan_text("{\"args\": {\"sort_index\": -4}}", &ev) == 0 &&
	    kt_event_sort_index(&ev, &v) == 0 && v == -4);
	CHECK(scan_text("{\"args\": {\"sort_index\": \"6\"}}", &ev) == 0 &&
	    kt_event_sort_index(&ev, &v) == 0 && v == 6);
	CHECK(scan_text("{\"args\": {\"name\": 6}}", &ev) == 0 &&
	    kt_event_sort_index(&ev, &v) == -1);
	/* kt_patch_key: added first when absent, its value set when there. */
	CHECK(scan_text("{\"ph\": \"C\", \"ts\": 1}", &ev) == 0);
	kt_patch_init(&p, &ev);
	CHECK(kt_patch_key(&p, "kt_carried_from", "1", 1) == 0 &&
	    kt_patch_set(&p, KT_F_TS, "5", 1) == 0 &&
	    kt_patch_apply(&p, &b) == 0);
	CHECK(same_text(&b,
	    "{\"kt_carried_from\": 1, \"ph\": \"C\", \"ts\": 5}"));
	kt_patch_free(&p);
	b.n = 0;
	CHECK(scan_text("{\"ph\": \"C\", \"kt_carried_from\": 1}", &ev) == 0);
	kt_patch_init(&p, &ev);
	CHECK(kt_patch_key(&p, "kt_carried_from", "2.5", 3) == 0 &&
	    kt_patch_apply(&p, &b) == 0);
	CHECK(same_text(&b, "{\"ph\": \"C\", \"kt_carried_from\": 2.5}"));
	kt_patch_free(&p);
	kt_buf_free(&b);
	kt_buf_free(&k1);
	kt_buf_free(&k2);
}

static void
test_patch_remove(void)
{
	static const char ev1[] = "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, "
	    "\"args\": {\"a\": 1, \"b\": [1, {\"c\": 2}], \"c\": \"x\"}}";
	const char *r;

	/* A first member takes ", " after it; others the comma before. */
	r = removed(ev1, KT_F_PH, NULL, -1);
	CHECK(strcmp(r, "{\"pid\": 1, \"tid\": 2, \"args\": {\"a\": 1, "
	    "\"b\": [1, {\"c\": 2}], \"c\": \"x\"}}") == 0);
	r = removed(ev1, KT_F_PID, NULL, -1);
	CHECK(strcmp(r, "{\"ph\": \"X\", \"tid\": 2, \"args\": {\"a\": 1, "
	    "\"b\": [1, {\"c\": 2}], \"c\": \"x\"}}") == 0);
	r = removed(ev1, KT_F_ARGS, NULL, -1);
	CHECK(strcmp(r, "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2}") == 0);
	r = removed(ev1, -1, "a", -1);
	CHECK(strcmp(r, "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"b\": [1, {\"c\": 2}], \"c\": \"x\"}}") == 0);
	r = removed(ev1, -1, "b", -1);
	CHECK(strcmp(r, "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"a\": 1, \"c\": \"x\"}}") == 0);
	/* "c" of args, not the "c" nested in args.b. */
	r = removed(ev1, -1, "c", -1);
	CHECK(strcmp(r, "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"a\": 1, \"b\": [1, {\"c\": 2}]}}") == 0);
	/* Two removals at once, one in args, one at the top. */
	r = removed(ev1, -1, "a", KT_F_TID);
	CHECK(strcmp(r, "{\"ph\": \"X\", \"pid\": 1, \"args\": "
	    "{\"b\": [1, {\"c\": 2}], \"c\": \"x\"}}") == 0);
	/*
	 * Two adjacent members, in either order: first and second, second
	 * and last (args), the first two and all three (top level: ph,
	 * pid, tid before args).
	 */
	CHECK(strcmp(removed2(ev1, "a", "b", NULL),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"c\": \"x\"}}") == 0);
	CHECK(strcmp(removed2(ev1, "b", "a", NULL),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"c\": \"x\"}}") == 0);
	CHECK(strcmp(removed2(ev1, "b", "c", NULL),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"a\": 1}}") == 0);
	CHECK(strcmp(removed2(ev1, "c", "b", NULL),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": "
	    "{\"a\": 1}}") == 0);
	CHECK(strcmp(removed2(ev1, "a", "b", "c"),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": {}}") ==
	    0);
	CHECK(strcmp(removed2(ev1, "c", "a", "b"),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": {}}") ==
	    0);
	CHECK(strcmp(removed2(ev1, "b", "c", "a"),
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"args\": {}}") ==
	    0);
	CHECK(strcmp(removed(ev1, KT_F_PH, NULL, KT_F_PID),
	    "{\"tid\": 2, \"args\": {\"a\": 1, \"b\": [1, {\"c\": 2}], "
	    "\"c\": \"x\"}}") == 0);
	CHECK(strcmp(removed(ev1, KT_F_PID, NULL, KT_F_PH),
	    "{\"tid\": 2, \"args\": {\"a\": 1, \"b\": [1, {\"c\": 2}], "
	    "\"c\": \"x\"}}") == 0);
	CHECK(strcmp(removed(ev1, KT_F_TID, NULL, KT_F_ARGS),
	    "{\"ph\": \"X\", \"pid\": 1}") == 0);
	/*
	 * Separators over lines (as Kineto writes them): the white space
	 * after a comma stays, as with one removal.
	 */
	CHECK(strcmp(removed2("{\"args\": {\n  \"a\": 1,\n  \"b\": 2,\n  "
	    "\"c\": 3\n}}", "a", "b", NULL),
	    "{\"args\": {\n  \n  \n  \"c\": 3\n}}") == 0);
	CHECK(strcmp(removed2("{\"args\": {\n  \"a\": 1,\n  \"b\": 2,\n  "
	    "\"c\": 3\n}}", "c", "b", NULL), "{\"args\": {\n  \"a\": 1\n}}") ==
	    0);
	/* The only member: an empty object stays. */
	CHECK(strcmp(removed("{\"args\": {\"k\": 1}}", -1, "k", -1),
	    "{\"args\": {}}") == 0);
	CHECK(strcmp(removed("{\"args\": {\"k\": 1}}", KT_F_ARGS, NULL, -1),
	    "{}") == 0);
	/* Other white space: only the one space after the comma goes. */
	CHECK(strcmp(removed("{ \"pid\" : 1 ,  \"tid\": 2 }", KT_F_PID, NULL,
	    -1), "{  \"tid\": 2 }") == 0);
	CHECK(strcmp(removed("{ \"pid\" : 1 ,\n\t\"tid\": 2 }", KT_F_TID,
	    NULL, -1), "{ \"pid\" : 1 }") == 0);
	CHECK(strcmp(removed("{\"pid\":1,\"tid\":2,\"ts\":3}", KT_F_TID, NULL,
	    -1), "{\"pid\":1,\"ts\":3}") == 0);
	/* An args field by its enum; escaped quotes in a key before it. */
	CHECK(strcmp(removed("{\"args\": {\"q\\\"x\": \"}\", \"stream\": 7}}",
	    KT_F_STREAM, NULL, -1), "{\"args\": {\"q\\\"x\": \"}\"}}") == 0);
	/* Absent: -1. */
	CHECK(strcmp(removed(ev1, KT_F_TS, NULL, -1), "patch failed") == 0);
	CHECK(strcmp(removed(ev1, -1, "nope", -1), "patch failed") == 0);
	CHECK(strcmp(removed("{\"args\": null}", -1, "a", -1),
	    "patch failed") == 0);
	/* Removal then setting another field, and the inverse of an add. */
	{
		struct kt_event ev;
		struct kt_patch p;
		struct kt_buf b = KT_BUF_INIT, c = KT_BUF_INIT;
		static const char src[] = "{\"pid\": 1, \"args\": {\"s\": 2}}";

		memset(&ev, 0, sizeof(ev));
		CHECK(kt_event_scan(src, sizeof(src) - 1, &ev, NULL) == 0);
		kt_patch_init(&p, &ev);
		CHECK(kt_patch_arg_add(&p, "t", "{\"u\": 1}", 8) == 0 &&
		    kt_patch_set(&p, KT_F_PID, "\"r\"", 3) == 0 &&
		    kt_patch_apply(&p, &b) == 0);
		CHECK(b.n == 45 && memcmp(b.p, "{\"pid\": \"r\", \"args\": "
		    "{\"t\": {\"u\": 1}, \"s\": 2}}", 45) == 0);
		memset(&ev, 0, sizeof(ev));
		CHECK(kt_event_scan(b.p, b.n, &ev, NULL) == 0);
		kt_patch_reset(&p, &ev);
		CHECK(kt_patch_arg_remove(&p, "t") == 0 &&
		    kt_patch_set(&p, KT_F_PID, "1", 1) == 0 &&
		    kt_patch_apply(&p, &c) == 0);
		CHECK(c.n == sizeof(src) - 1 && memcmp(c.p, src, c.n) == 0);
		kt_patch_free(&p);
		kt_buf_free(&b);
		kt_buf_free(&c);
	}
}

/*
 * kt_ahead gives what kt_reader_next gives: the same events (bytes,
 * fields, index, end), the same repairs and the same error after the
 * last, across batches (over 1024 events, one event over a batch's
 * 256 kB); and it stops early without a leak.
 */
static int
same_event(const struct kt_event *a, const struct kt_event *b)
{
	return a->len == b->len && memcmp(a->raw, b->raw, a->len) == 0 &&
	    a->index == b->index && a->ts == b->ts && a->dur == b->dur &&
	    a->end == b->end && a->flags == b->flags && a->kind == b->kind &&
	    a->known == b->known && memcmp(a->f, b->f, sizeof(a->f)) == 0;
}

static void
ahead_case(const char *text, size_t len, unsigned flags, int want_rc,
    uint64_t want_n)
{
	struct kt_reader *r1, *r2;
	struct kt_ahead *a;
	struct kt_event e1, e2;
	struct kt_error err1, err2;
	uint64_t n = 0;
	int rc1, rc2, same = 1;

	r1 = kt_reader_mem(text, len, "a.json", flags);
	r2 = kt_reader_mem(text, len, "a.json", flags);
	CHECK(r1 != NULL && r2 != NULL && (a = kt_ahead_start(r2, NULL)) != NULL);
	if (r1 == NULL || r2 == NULL || a == NULL)
		return;
	for (;;) {
		rc1 = kt_reader_next(r1, &e1, &err1);
		rc2 = kt_ahead_next(a, NULL, &e2, &err2);
		if (rc1 != rc2 || rc1 != 1)
			break;
		same &= same_event(&e1, &e2);
		n++;
	}
	if (!(rc1 == want_rc && rc2 == want_rc && n == want_n && same))
		fprintf(stderr, "ahead: rc %d %d n %llu same %d\n", rc1, rc2,
		    (unsigned long long)n, same);
	CHECK(rc1 == want_rc && rc2 == want_rc && n == want_n && same);
	if (rc1 == -1)
		CHECK(strcmp(err1.msg, err2.msg) == 0 &&
		    err1.line == err2.line && err1.col == err2.col);
	CHECK(memcmp(kt_reader_repairs(r1), kt_reader_repairs(r2),
	    sizeof(struct kt_repairs)) == 0);
	kt_ahead_stop(a);
	kt_reader_free(r1);
	kt_reader_free(r2);
}

static void
test_ahead(void)
{
	struct kt_buf b = KT_BUF_INIT;
	struct kt_reader *r;
	struct kt_ahead *a;
	struct kt_event ev;
	struct kt_error err;
	size_t i, cut;
	uint64_t n;

	kt_buf_adds(&b, "{\"traceEvents\": [\n");
	for (i = 0; i < 5000; i++) {
		kt_buf_printf(&b, "{\"ph\": \"X\", \"name\": \"k%zu\", "
		    "\"ts\": %zu.5, \"dur\": 2, \"pid\": 1, \"tid\": 2}", i,
		    i * 10);
		/* One repair, and one event larger than a batch. */
		if (i == 77)
			kt_buf_adds(&b, ",{\"a\": NaN}");
		if (i == 3000) {
			kt_buf_adds(&b, ",{\"big\": \"");
			for (cut = 0; cut < 300000; cut++)
				kt_buf_addc(&b, 'x');
			kt_buf_adds(&b, "\"}");
		}
		kt_buf_adds(&b, i + 1 < 5000 ? ",\n" : "\n");
	}
	kt_buf_adds(&b, "], \"after\": 1}");
	CHECK(!b.err);
	ahead_case(b.p, b.n, 0, 0, 5002);
	/* Strict: the NaN is an error after 78 events. */
	ahead_case(b.p, b.n, KT_READ_STRICT, -1, 78);
	/* Cut: a truncation repaired, or an error when strict. */
	cut = b.n - 4000;
	/* The lines begun before the cut, the last of them cut, and the two
	   events that share a line with another. */
	for (i = 0, n = 0; i + 1 < cut; i++)
		n += b.p[i] == '\n' && b.p[i + 1] == '{';
	ahead_case(b.p, cut, 0, 0, n - 1 + 2);
	ahead_case(b.p, cut, KT_READ_STRICT, -1, 78);
	/* Stopped after one event, with batches still full. */
	r = kt_reader_mem(b.p, b.n, "a.json", 0);
	CHECK((a = kt_ahead_start(r, NULL)) != NULL);
	CHECK(kt_ahead_next(a, NULL, &ev, &err) == 1 && ev.index == 0);
	kt_ahead_stop(a);
	kt_reader_free(r);
	/* No thread: the reader's own events. */
	r = kt_reader_mem(b.p, b.n, "a.json", 0);
	CHECK(kt_ahead_next(NULL, r, &ev, &err) == 1 && ev.index == 0 &&
	    kt_ahead_next(NULL, r, &ev, &err) == 1 && ev.index == 1);
	kt_reader_free(r);
	kt_buf_free(&b);
}

static void
test_reader(void)
{
	struct kt_repairs rep;
	struct kt_error err;
	struct kt_buf b = KT_BUF_INIT;
	struct kt_reader *r;
	struct kt_event ev;
	const struct kt_meta *m;
	size_t nm;

	CHECK(read_all("{\"traceEvents\": [{\"a\":1}, {\"b\":2},]}", 0, &rep,
	    &err, NULL) == 2 && rep.n[KT_R_TRAILING_COMMA] == 1);
	CHECK(read_all("{\"traceEvents\": [{\"a\":1}, {\"b\":2},]}",
	    KT_READ_STRICT, NULL, &err, NULL) == -1 && err.line == 1 &&
	    err.col == 35);
	CHECK(read_all("\xef\xbb\xbf[{\"a\":1}]", 0, &rep, &err, NULL) == 1 &&
	    rep.n[KT_R_BOM] == 1);
	CHECK(read_all("[{\"a\":1}, {\"b\":", 0, &rep, &err, NULL) == 1 &&
	    rep.n[KT_R_TRUNCATED] == 1 && rep.truncated_bytes == 5);
	CHECK(read_all("[{\"a\":1}, {}]", 0, &rep, &err, NULL) == 1 &&
	    rep.n[KT_R_EMPTY_EVENT] == 1);
	CHECK(read_all("[{\"a\":\"x\001y\"}]", 0, &rep, &err, &b) == 1 &&
	    rep.n[KT_R_CONTROL] == 1 && b.n == 17 &&
	    memcmp(b.p, "{\"a\":\"x\\u0001y\"}\n", 17) == 0);
	b.n = 0;
	CHECK(read_all("[{\"a\":\"C:\\Users\\me\\tmp\"}]", 0, &rep, &err,
	    &b) == 1 && rep.n[KT_R_ESCAPE] == 2 && b.n > 0 &&
	    memcmp(b.p, "{\"a\":\"C:\\\\Users\\\\me\\tmp\"}", 25) == 0);
	b.n = 0;
	CHECK(read_all("[{\"a\":inf, \"b\": -Infinity, \"c\": NaN, \"d\": "
	    "null}]", 0, &rep, &err, &b) == 1 && rep.n[KT_R_NONFINITE] == 3 &&
	    memcmp(b.p, "{\"a\":null, \"b\": null, \"c\": null, \"d\": null}",
	    43) == 0);
	CHECK(read_all("[{\"a\":\"x\ny\"}]", 0, &rep, &err, NULL) == -1 &&
	    err.line == 1 && err.col == 9);
	CHECK(read_all("{\n \"traceEvents\": [\n  {\"a\": tru}\n]}", 0, NULL,
	    &err, NULL) == -1 && err.line == 3 && err.col == 9);
	CHECK(read_all("", 0, NULL, &err, NULL) == -1 &&
	    strcmp(err.msg, "empty input") == 0);
	CHECK(read_all("hello", 0, NULL, &err, NULL) == -1);
	CHECK(read_all("{\"a\": 1}", 0, NULL, &err, NULL) == -1);
	CHECK(read_all("{\"a\": [1, 2", 0, NULL, &err, NULL) == -1);
	CHECK(read_all("[{\"a\":1}] x", 0, NULL, &err, NULL) == -1);
	CHECK(read_all("[{\"a\":1}, 3]", 0, NULL, &err, NULL) == -1);
	CHECK(read_all("{\"traceEvents\": 3}", 0, NULL, &err, NULL) == -1);
	CHECK(read_all("[]", 0, NULL, &err, NULL) == 0);
	/* Top-level keys keep their text and their side of traceEvents. */
	r = kt_reader_mem("{\"a\": {\"x\" : [1,2]}, \"traceEvents\": "
	    "[{\"ts\": 1}], \"z\": \"end\"}", 60, "t", 0);
	CHECK(kt_reader_next(r, &ev, &err) == 1);
	m = kt_reader_metas(r, &nm);
	CHECK(nm == 1 && strcmp(m[0].key, "\"a\"") == 0 &&
	    strcmp(m[0].val, "{\"x\" : [1,2]}") == 0 && !m[0].after);
	CHECK(kt_reader_next(r, &ev, &err) == 0);
	m = kt_reader_metas(r, &nm);
	CHECK(nm == 2 && strcmp(m[1].val, "\"end\"") == 0 && m[1].after);
	kt_reader_free(r);
	/* Row ids from ktSourceIndex. */
	r = kt_reader_mem("{\"ktSourceIndex\": [7, 3], \"traceEvents\": "
	    "[{\"ts\": 1}, {\"ts\": 2}]}", 62, "t", 0);
	CHECK(kt_reader_next(r, &ev, &err) == 1 && ev.index == 7);
	CHECK(kt_reader_next(r, &ev, &err) == 1 && ev.index == 3);
	kt_reader_free(r);
	kt_buf_free(&b);
}

static void
test_tsv(void)
{
	static const char tsv[] =
	    "id\tkind\tph\tts_ns\tdur_ns\tpid\ttid\tcat\tname\tjson\n"
	    "trace:0\ttrace\t\t\t\t\t\t\t\t{\"a\":1,\"traceEvents\":[],"
	    "\"ktOriginNs\":1000}\n"
	    "kernel:5\tkernel\tX\t500\t2000\t0\t7\tkernel\tk2\t"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
	    "\"tid\":7,\"ts\":1,\"dur\":2}\n";
	struct kt_reader *r = kt_reader_mem(tsv, sizeof(tsv) - 1, "t.tsv", 0);
	struct kt_event ev;
	struct kt_error err;
	struct kt_buf b = KT_BUF_INIT;

	CHECK(kt_reader_form(r) == KT_FORM_OBJECT);	/* not known yet */
	CHECK(kt_reader_next(r, &ev, &err) == 1);
	CHECK(kt_reader_form(r) == KT_FORM_TSV);
	CHECK(ev.index == 5);
	/* ts_ns 500 from origin 1000 is 1.5 us; name k2 wins over k. */
	CHECK(ev.ts == 1500 && kt_event_field_is(&ev, KT_F_NAME, "k2"));
	if (ev.len != 70)
		printf("tsv event: %.*s\n", (int)ev.len, ev.raw);
	CHECK(ev.len == 70 && memcmp(ev.raw, "{\"ph\":\"X\",\"cat\":\"kernel\","
	    "\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":1.5,\"dur\":2}", 70) == 0);
	CHECK(kt_reader_next(r, &ev, &err) == 0);
	kt_reader_free(r);
	CHECK(kt_json_minify("{ \"a b\" : [1, \"\\\" x\"] }", 24, &b) == 0 &&
	    b.n == 19 && memcmp(b.p, "{\"a b\":[1,\"\\\" x\"]}", 19) == 0);
	kt_buf_free(&b);
}

static void
test_sort_intern(void)
{
	struct kt_pair p[1000];
	struct kt_intern *t = kt_intern_new();
	size_t i, n;
	int ok = 1;
	char key[16];
	uint64_t x = 12345;

	for (i = 0; i < 1000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		p[i].key = (x >> 33) % 50;
		p[i].val = i;
	}
	CHECK(kt_sort_pairs(p, 1000) == 0);
	for (i = 1; i < 1000; i++)
		if (p[i - 1].key > p[i].key || (p[i - 1].key == p[i].key &&
		    p[i - 1].val > p[i].val))
			ok = 0;
	CHECK(ok);
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%zu", i % 700);
		if (kt_intern_put(t, key, strlen(key)) != (int64_t)(i % 700))
			ok = 0;
	}
	CHECK(ok && kt_intern_count(t) == 700);
	CHECK(strncmp(kt_intern_get(t, 3, &n), "k3", 2) == 0 && n == 2);
	kt_intern_free(t);
}

/* Write a trace with kt_out and read it back through a source. */
/*
 * A .gz output at the default level (ISA-L's igzip where built in) and
 * at level 6 (zlib), with a suspend between two writes (two members),
 * read back by zlib's gzread, not by kt: the same bytes (fails with a
 * member not ended, its trailer's CRC or length wrong, or bytes left in
 * the compressor when the output is suspended or committed).
 */
static void
test_out_gzip(void)
{
	static const int levels[] = { -1, 1, 6 };
	struct kt_error err;
	struct kt_out *o;
	char path[] = "/tmp/kt-unit-gz-XXXXXX", gz[64];
	char *text, *back;
	size_t n = 5u << 20, i, got;
	uint32_t x = 12345;
	int fd = mkstemp(path), li;

	if (fd == -1 || (text = malloc(n)) == NULL ||
	    (back = malloc(n + 1)) == NULL) {
		CHECK(!"setup");
		return;
	}
	close(fd);
	/* Text that compresses some: words from a small set, and noise. */
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		text[i] = (x & 7) == 0 ? (char)(x >> 8) : "kernel_ts"[x % 9];
	}
	snprintf(gz, sizeof(gz), "%s.gz", path);
	for (li = 0; li < 3; li++) {
		gzFile g;

		CHECK((o = kt_out_open(gz, levels[li], &err)) != NULL);
		if (o == NULL)
			continue;
		CHECK(kt_out_write(o, text, n / 3) == 0);
		CHECK(kt_out_suspend(o) == 0);
		CHECK(kt_out_write(o, text + n / 3, n - n / 3) == 0);
		CHECK(kt_out_commit(o, &err) == 0);
		got = 0;
		if ((g = gzopen(gz, "rb")) != NULL) {
			int k;

			while (got < n + 1 && (k = gzread(g, back + got,
			    (unsigned)(n + 1 - got))) > 0)
				got += (size_t)k;
			gzclose(g);
		}
		CHECK(got == n && memcmp(back, text, n) == 0);
		unlink(gz);
	}
	unlink(path);
	free(text);
	free(back);
}

/* Event i of test_writer_sizes into text (cap bytes): its length. */
static size_t
sized_event(char *text, size_t cap, int i, uint64_t *x)
{
	size_t len = i >= 2500 ? xorshift(x) % 8 :
	    xorshift(x) % 8 == 0 ? 60000 + xorshift(x) % 10000 :
	    i % 97 == 0 ? 1048576 - 64 + xorshift(x) % 64 :
	    9 + xorshift(x) % 400;
	size_t h = (size_t)snprintf(text, cap, "{\"ts\": %d, \"a\": \"", i);

	memset(text + h, 'a' + i % 26, len);
	memcpy(text + h + len, "\"}", 2);
	return h + len + 2;
}

/*
 * Events of every size through a writer, to a plain file and to gzip,
 * read back: each event's bytes in order.  First 2500 of mixed sizes:
 * most short (copied into the output's buffer with their separator at
 * once), some 60-70 kB (around the size written past the buffer without
 * a copy) or filling the 1 MB buffer to a few bytes of its end; then
 * 300,000 of 21-30 bytes, which fill the buffer several times, so that
 * its end falls within an event's separator too.  Fails with a
 * separator or an event written twice, lost or out of place where the
 * buffer fills, or (ASan) with the room reckoned without the separator.
 */
static void
test_writer_sizes(void)
{
	static const char *const ext[] = { "", ".gz" };
	char base[] = "/tmp/kt-unit-XXXXXX", path[64];
	int fd = mkstemp(base), k;
	size_t cap = 1100000;
	char *text = malloc(cap);

	if (fd == -1 || text == NULL) {
		CHECK(!"mkstemp");
		free(text);
		return;
	}
	close(fd);
	for (k = 0; k < 2; k++) {
		struct kt_error err;
		struct kt_out *o;
		struct kt_writer *w;
		struct kt_source *s;
		struct kt_reader *r;
		struct kt_event ev;
		uint64_t x = 0x5151a5a5c3c3ULL;
		int i, n = 0, bad = 0, total = 2500 + 300000;

		snprintf(path, sizeof(path), "%s%s", base, ext[k]);
		if ((o = kt_out_open(path, -1, &err)) == NULL ||
		    (w = kt_writer_new(o, 0)) == NULL) {
			CHECK(!"kt_out_open");
			break;
		}
		CHECK(kt_writer_begin(w, NULL, 0, NULL, 0) == 0);
		for (i = 0; i < total; i++) {
			size_t len = sized_event(text, cap, i, &x);

			memset(&ev, 0, sizeof(ev));
			if (kt_event_scan(text, len, &ev, NULL) != 0 ||
			    kt_writer_event(w, &ev) != 0)
				bad++;
		}
		CHECK(kt_writer_end(w, NULL, 0) == 0);
		CHECK(kt_out_commit(o, &err) == 0);
		kt_writer_free(w);
		if ((s = kt_source_open(path, NULL, 0, &err)) == NULL ||
		    kt_source_next(s, &r, &err) != 1) {
			CHECK(!"kt_source_open");
			break;
		}
		x = 0x5151a5a5c3c3ULL;
		while (kt_reader_next(r, &ev, &err) == 1) {
			size_t len = sized_event(text, cap, n, &x);

			if (!bytes_eq(ev.raw, ev.len, text, len))
				bad++;
			n++;
		}
		kt_reader_free(r);
		kt_source_close(s);
		if (bad != 0 || n != total)
			printf("writer sizes%s: %d of %d events read back, %d "
			    "differ\n", ext[k], n, total, bad);
		CHECK(bad == 0 && n == total);
		unlink(path);
	}
	unlink(base);
	free(text);
}

static void
test_out_source(void)
{
	char path[] = "/tmp/kt-unit-XXXXXX";
	char gz[64];
	struct kt_error err;
	struct kt_out *o;
	struct kt_writer *w;
	struct kt_source *s;
	struct kt_reader *r;
	struct kt_event ev;
	struct kt_meta m = { (char *)"\"k\"", 3, (char *)"[1]", 3, 1 };
	int fd = mkstemp(path), n = 0;

	if (fd == -1) {
		CHECK(!"mkstemp");
		return;
	}
	close(fd);
	snprintf(gz, sizeof(gz), "%s.gz", path);
	CHECK((o = kt_out_open(gz, -1, &err)) != NULL);
	w = kt_writer_new(o, 0);
	CHECK(kt_writer_begin(w, &m, 1, NULL, 0) == 0);
	memset(&ev, 0, sizeof(ev));
	CHECK(kt_event_scan("{\"ts\": 1}", 9, &ev, NULL) == 0);
	/*
	 * Suspended between the events and before the end: three gzip
	 * members in one file, its descriptor closed meanwhile.
	 */
	{
		int probe = dup(0), fds;

		CHECK(kt_writer_event(w, &ev) == 0);
		close(probe);
		CHECK(kt_out_suspend(o) == 0 && kt_out_suspend(o) == 0);
		fds = dup(0);
		CHECK(fds < probe);	/* the output's descriptor is free */
		close(fds);
		CHECK(kt_writer_event(w, &ev) == 0);
		CHECK(kt_out_suspend(o) == 0);
	}
	CHECK(kt_writer_end(w, &m, 1) == 0);
	CHECK(access(gz, F_OK) == -1);		/* not there until commit */
	CHECK(kt_out_commit(o, &err) == 0);
	kt_writer_free(w);
	CHECK((s = kt_source_open(gz, NULL, 0, &err)) != NULL);
	CHECK(kt_source_next(s, &r, &err) == 1);
	while (kt_reader_next(r, &ev, &err) == 1)
		n++;
	CHECK(n == 2 && kt_reader_meta_find(r, "k") != NULL &&
	    kt_reader_meta_find(r, "k")->after);
	kt_reader_free(r);
	CHECK(kt_source_next(s, &r, &err) == 0);
	kt_source_close(s);
	unlink(gz);
	unlink(path);
	CHECK(kt_source_open("/nonexistent/x", NULL, 0, &err) == NULL);
	CHECK(kt_out_open("/nonexistent/x.json", -1, &err) == NULL);
}

static void
test_build(void)
{
	struct kt_buf b = KT_BUF_INIT;
	struct kt_meta m = { (char *)"\"n\"", 3, (char *)"{\"rank\": 3}", 11,
	    0 };
	struct kt_error err;
	json_t *j;

	kt_obj_begin(&b);
	kt_obj_str(&b, "name", "L\"0\"\n");
	kt_obj_time(&b, "ts", 1712195495505582988LL);
	kt_obj_int(&b, "pid", -1);
	kt_obj_raw(&b, "args", "{}", 2);
	kt_obj_end(&b);
	CHECK(b.n == 75 && memcmp(b.p, "{\"name\": \"L\\\"0\\\"\\u000a\", "
	    "\"ts\": 1712195495505582.988, \"pid\": -1, \"args\": {}}", 75) == 0);
	kt_buf_free(&b);
	CHECK((j = kt_meta_json(&m, &err)) != NULL &&
	    json_integer_value(json_object_get(j, "rank")) == 3);
	json_decref(j);
	m.val = (char *)"{1}";
	m.vallen = 3;
	CHECK(kt_meta_json(&m, &err) == NULL && err.line == 1);
}

static void
test_rank_name(void)
{
	int64_t r;
	const char *how;

	CHECK(kt_rank_from_name("a/bs_32_rank0.json.gz", &r, &how) == 0 &&
	    r == 0 && strcmp(how, "file name: rank<N>") == 0);
	CHECK(kt_rank_from_name("rank-34.Jul_15_10_52.1074.pt.trace.json", &r,
	    &how) == 0 && r == 34 && strcmp(how, "file name: rank-N") == 0);
	CHECK(kt_rank_from_name("graph_capture_rank_7.1773709742.json", &r,
	    &how) == 0 && r == 7);
	CHECK(kt_rank_from_name("x/worker5_step_12.1694128201549.json", &r,
	    &how) == 0 && r == 5 && strcmp(how, "file name: worker<N>") == 0);
	CHECK(kt_rank_from_name("trace-12.json", &r, &how) == 0 && r == 12 &&
	    strcmp(how, "file name: -N.") == 0);
	CHECK(kt_rank_from_name("rank3/trace.json", &r, &how) == -1);
	CHECK(kt_rank_from_name("trace-12x.json", &r, &how) == -1);
	CHECK(kt_rank_from_name("ranking.json", &r, &how) == -1);
	/* A version number is no rank: -0.5B is not "-N." before .json. */
	CHECK(kt_rank_from_name("Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", &r,
	    &how) == -1);
	CHECK(kt_rank_from_name("model-1.3b-trace-2.json", &r, &how) == 0 &&
	    r == 2);
}

/*
 * The reader's way from one event to the next (a direct path for white
 * space, a comma, white space and '{'): random traces whose events are
 * parted by every mix of spaces, tabs, newlines and carriage returns
 * around the comma, some events empty ({}: dropped, a repair), the last
 * sometimes followed by a trailing comma (a repair); each event found
 * where it was put, with its ts, and the repairs counted.
 */
static void
test_reader_seps(void)
{
	static const char ws[] = " \t\n\r";
	uint64_t x = 0x3c6ef372fe94f82bULL;
	int i, ok = 1;

	for (i = 0; i < 20000 && ok; i++) {
		struct kt_buf t = KT_BUF_INIT;
		size_t at[40];
		int e, ne = 1 + (int)(xorshift(&x) % 40), nempty = 0, k, n = 0;
		int trailing = xorshift(&x) % 4 == 0, empty[40];
		struct kt_reader *r;
		struct kt_event ev;
		struct kt_error err;
		const struct kt_repairs *rep;
		char num[24];
		char *copy;

		kt_buf_adds(&t, "{\"traceEvents\":[");
		for (e = 0; e < ne; e++) {
			if (e > 0) {
				for (k = (int)(xorshift(&x) % 4); k > 0; k--)
					kt_buf_addc(&t, ws[xorshift(&x) % 4]);
				kt_buf_addc(&t, ',');
				for (k = (int)(xorshift(&x) % 5); k > 0; k--)
					kt_buf_addc(&t, ws[xorshift(&x) % 4]);
			}
			at[e] = t.n;
			empty[e] = xorshift(&x) % 10 == 0;
			if (empty[e]) {
				kt_buf_adds(&t, "{}");
				nempty++;
				continue;
			}
			snprintf(num, sizeof(num), "%d", e);
			kt_buf_adds(&t, "{\"ph\":\"i\",\"ts\":");
			kt_buf_adds(&t, num);
			kt_buf_addc(&t, '}');
		}
		if (trailing)
			kt_buf_adds(&t, " ,\n");
		kt_buf_adds(&t, "]}");
		if ((copy = malloc(t.n)) == NULL)
			abort();
		memcpy(copy, t.p, t.n);
		r = kt_reader_mem(copy, t.n, "seps", 0);
		for (e = 0; r != NULL && e < ne; e++) {
			if (empty[e])
				continue;
			if (kt_reader_next(r, &ev, &err) != 1 ||
			    ev.raw != copy + at[e] || ev.ts != (int64_t)e * 1000) {
				ok = 0;
				break;
			}
			n++;
		}
		if (r == NULL || (ok && kt_reader_next(r, &ev, &err) != 0))
			ok = 0;
		if (ok) {
			rep = kt_reader_repairs(r);
			ok = rep->n[KT_R_EMPTY_EVENT] == (uint64_t)nempty &&
			    rep->n[KT_R_TRAILING_COMMA] == (uint64_t)trailing;
		}
		if (!ok)
			printf("reader seps: %.*s\n", (int)t.n, t.p);
		kt_reader_free(r);
		free(copy);
		kt_buf_free(&t);
	}
	CHECK(ok);
}

/* The skimming reader finds the same top-level fields as the scanner. */
static void
test_skim(void)
{
	static const char t[] = "{\"traceEvents\": [\n"
	    "{\"ph\": \"X\", \"name\": \"a \\\"q\\\" \\\\\", \"args\": {\"ts\": 9, "
	    "\"x\": [1, {\"pid\": 3}]}, \"pid\": 7 , \"ts\": 1.5,\"dur\":2},\n"
	    "{\"ts\": -3, \"ph\": \"i\", \"s\": \"t\", \"tid\": \"stream 7\", "
	    "\"id\": true},\n"
	    "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"args\": "
	    "{\"sort_index\": 5}}, {\"cat\": \"kernel\", \"ts\": 7}]}";
	struct kt_reader *a = kt_reader_mem(t, sizeof(t) - 1, "t", 0);
	struct kt_reader *b = kt_reader_mem(t, sizeof(t) - 1, "t", KT_READ_SKIM);
	struct kt_event x, y;
	struct kt_error err;
	int i, n = 0, ok = 1;

	while (kt_reader_next(a, &x, &err) == 1) {
		if (kt_reader_next(b, &y, &err) != 1) {
			ok = 0;
			break;
		}
		n++;
		for (i = 0; i < KT_F_ARGS; i++) {
			size_t n1, n2;
			const char *p1 = kt_event_field(&x, (enum kt_field)i, &n1);
			const char *p2 = kt_event_field(&y, (enum kt_field)i, &n2);

			if ((p1 == NULL) != (p2 == NULL) || (p1 != NULL &&
			    (n1 != n2 || memcmp(p1, p2, n1) != 0)))
				ok = 0;
		}
		/* A skim leaves dur, and the kind of all but steps, unset. */
		if (x.ts != y.ts || x.len != y.len || x.ph != y.ph ||
		    ((x.kind == KT_STEP) != (y.kind == KT_STEP)))
			ok = 0;
	}
	CHECK(ok && n == 4 && kt_reader_next(b, &y, &err) == 0);
	kt_reader_free(a);
	kt_reader_free(b);
}

/*
 * The survey's skim on the AVX2 path (the walk over bit masks, nested
 * values skipped a block's brackets at a time) against the portable
 * path's byte loop: random traces whose events hold nested arrays and
 * objects (strings with brackets and quotes in them, some escaped),
 * many spanning several 64-byte blocks and the data's end; every
 * top-level field and each event's extent the same.  Each trace in an
 * allocation of its exact size.
 */
static void
test_skim_paths(void)
{
	uint64_t x = 0x6a09e667f3bcc909ULL;
	int i, ok = 1, n = 0;

	if (kt_scan_path("avx2") == -1) {
		CHECK(1);	/* no AVX2 here: nothing to compare */
		return;
	}
	for (i = 0; i < 3000 && ok; i++) {
		struct kt_buf t = KT_BUF_INIT;
		struct kt_reader *a, *b;
		struct kt_event ev1, ev2;
		struct kt_error err;
		char *copy;
		int e, ne = 1 + (int)(xorshift(&x) % 6), rc1, rc2, f;

		kt_buf_adds(&t, "{\"traceEvents\": [");
		for (e = 0; e < ne; e++) {
			int depth = 0, k, items = (int)(xorshift(&x) % 40);

			kt_buf_adds(&t, e ? ",\n  " : "\n  ");
			kt_buf_adds(&t, "{\"ph\": \"X\", \"args\": ");
			/* A random nested value: brackets, strings, numbers. */
			kt_buf_addc(&t, '{');
			kt_buf_adds(&t, "\"a\": ");
			depth = 1;
			for (k = 0; k < items; k++) {
				switch (xorshift(&x) % 7) {
				case 0:
					kt_buf_adds(&t, "[");
					depth++;
					break;
				case 1:
					kt_buf_adds(&t, "{\"k\": ");
					depth++;
					break;
				case 2:
					kt_buf_adds(&t, "\"s]}{[\", ");
					break;
				case 3:
					kt_buf_adds(&t, xorshift(&x) % 8 ?
					    "\"long string with [brackets] and "
					    "{braces} in it\", " :
					    "\"x\\\"]\", ");
					break;
				case 4:
					kt_buf_adds(&t, "12.5, ");
					break;
				default:
					if (depth > 1) {
						kt_buf_adds(&t, "0]");
						depth--;
						kt_buf_adds(&t, ", ");
					}
					break;
				}
			}
			/* Close what is open, arrays and objects alike. */
			kt_buf_adds(&t, "0");
			while (depth-- > 0)
				kt_buf_addc(&t, '}');
			kt_buf_adds(&t, ", \"pid\": 7, \"ts\": 1.500, \"name\": "
			    "\"n]\"}");
		}
		kt_buf_adds(&t, "\n]}");
		if ((copy = malloc(t.n)) == NULL)
			abort();
		memcpy(copy, t.p, t.n);
		setenv("KT_SCAN", "portable", 1);
		a = kt_reader_mem(copy, t.n, "p", KT_READ_SKIM);
		setenv("KT_SCAN", "avx2", 1);
		b = kt_reader_mem(copy, t.n, "a", KT_READ_SKIM);
		unsetenv("KT_SCAN");
		do {
			rc1 = kt_reader_next(a, &ev1, &err);
			rc2 = kt_reader_next(b, &ev2, &err);
			if (rc1 != rc2)
				ok = 0;
			if (rc1 != 1 || rc2 != 1)
				break;
			n++;
			if (ev1.len != ev2.len || ev1.raw != ev2.raw)
				ok = 0;
			for (f = 0; f <= KT_F_ARGS; f++)
				if (ev1.f[f].type != ev2.f[f].type ||
				    (ev1.f[f].type != KT_NONE &&
				    (ev1.f[f].off != ev2.f[f].off ||
				    ev1.f[f].len != ev2.f[f].len)))
					ok = 0;
		} while (ok);
		if (!ok)
			printf("skim paths differ on: %.*s\n", (int)t.n, t.p);
		kt_reader_free(a);
		kt_reader_free(b);
		free(copy);
		kt_buf_free(&t);
	}
	CHECK(ok && n > 5000);
}

/* Ratios from integers, and the three table forms. */
static int
ratio_is(int64_t num, int64_t den, int d, const char *want)
{
	char b[64];

	kt_ratio_format(num, den, d, b);
	return strcmp(b, want) == 0;
}

/*
 * Cells lose tabs, newlines and carriage returns (spaces instead), at
 * every offset of cells of 0 to 40 bytes, and keep every other byte,
 * control bytes below 14 included: against a byte-by-byte copy.
 */
static void
test_table_cells(void)
{
	static const char *const cols[] = { "c" };
	static const char special[] = "\t\n\r\x01\x0d\x0e\x1f a";
	struct kt_table *t = kt_table_new(cols, 1);
	char in[41], want[41];
	size_t n, at, k, row = 0;
	int ok = t != NULL;

	for (n = 0; ok && n <= 40; n++)
		for (at = 0; at < (n ? n : 1); at++)
			for (k = 0; k + 1 < sizeof(special); k++) {
				size_t i;
				const char *got;

				for (i = 0; i < n; i++)
					in[i] = (char)('a' + i % 26);
				if (n > 0)
					in[at] = special[k];
				if (n > 3)
					in[n - 1] = '\t';
				for (i = 0; i < n; i++)
					want[i] = in[i] == '\t' || in[i] == '\n' ||
					    in[i] == '\r' ? ' ' : in[i];
				want[n] = '\0';
				if (kt_table_celln(t, in, n) == -1 ||
				    (got = kt_table_get(t, row++, 0)) == NULL ||
				    strcmp(got, want) != 0)
					ok = 0;
			}
	CHECK(ok);
	kt_table_free(t);
}

static void
test_table(void)
{
	static const char *const cols[] = { "name", "count:n", "share:n" };
	struct kt_table *t = kt_table_new(cols, 3);
	char path[] = "/tmp/kt-unit-table.XXXXXX";
	struct kt_error err;
	struct kt_out *o;
	char got[512];
	size_t n;
	FILE *f;
	int fd, form;
	static const char *const want[] = {
		"name\tcount\tshare\ngemm\t12\t0.333\nattn x\t1234567\t-\n",
		"name      count  share\ngemm         12  0.333\nattn x  1234567      -\n",
		("{\"name\": \"gemm\", \"count\": 12, \"share\": 0.333}\n"
		    "{\"name\": \"attn x\", \"count\": 1234567, \"share\": null}\n"),
	};

	CHECK(ratio_is(1, 3, 3, "0.333") && ratio_is(2, 3, 3, "0.667"));
	CHECK(ratio_is(5, 2, 0, "3") && ratio_is(-1, 2, 0, "-1"));
	CHECK(ratio_is(-1, 1000, 2, "0.00") && ratio_is(7, 0, 2, "-"));
	CHECK(ratio_is(INT64_MAX, 1, 1, "9223372036854775807.0"));
	CHECK(ratio_is(123456789, 1000, 3, "123456.789"));
	CHECK(t != NULL && kt_table_cell(t, "gemm") == 0 &&
	    kt_table_int(t, 12) == 0 && kt_table_ratio(t, 1, 3, 3) == 0 &&
	    kt_table_cell(t, "attn\tx") == 0 && kt_table_int(t, 1234567) == 0 &&
	    kt_table_cell(t, "-") == 0 && kt_table_rows(t) == 2);
	for (form = KT_TABLE_TSV; t != NULL && form <= KT_TABLE_JSON; form++) {
		fd = mkstemp(path);
		close(fd);
		o = kt_out_open(path, -1, &err);
		CHECK(o != NULL && kt_table_write(t, (enum kt_table_form)form, 1,
		    o) == 0 && kt_out_commit(o, &err) == 0);
		f = fopen(path, "r");
		n = f != NULL ? fread(got, 1, sizeof(got) - 1, f) : 0;
		got[n] = '\0';
		if (f != NULL)
			fclose(f);
		unlink(path);
		strcpy(path, "/tmp/kt-unit-table.XXXXXX");
		CHECK(strcmp(got, want[form - KT_TABLE_TSV]) == 0);
	}
	kt_table_free(t);
}

/*
 * kt_int_format (two digits at a time) against snprintf's %lld: the
 * edges and every power of ten and its neighbours, then random values
 * of every magnitude (fails with a pair taken in the wrong order, a
 * last odd digit dropped, or the digits miscounted at a power of ten).
 */
static void
test_int_format_oracle(void)
{
	static const int64_t edges[] = { 0, 1, -1, 9, 10, 11, 99, 100, 101,
	    -10, -99, -100, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
	char got[32], want[32];
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int64_t p = 1;
	size_t i;
	int ok = 1;

#define INT_IS(v) do {							\
	size_t n_ = kt_int_format((v), got);				\
	snprintf(want, sizeof(want), "%lld", (long long)(v));		\
	if (strcmp(got, want) != 0 || n_ != strlen(want))		\
		ok = 0;							\
} while (0)
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		INT_IS(edges[i]);
	for (i = 0; i < 19; i++) {
		INT_IS(p);
		INT_IS(p - 1);
		INT_IS(p + 1);
		INT_IS(-p);
		if (i < 18)
			p *= 10;	/* 10^18 is the last below INT64_MAX */
	}
	for (i = 0; i < 200000; i++) {
		int64_t v;

		xorshift(&x);
		v = (int64_t)(x >> (x % 63));
		INT_IS(i % 2 ? v : -v);
	}
#undef INT_IS
	CHECK(ok);
}

/* A byte-by-byte JSON string escape: the oracle of the one below. */
static size_t
escape_plain(const char *s, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char)c;
		} else if (c < 0x20) {
			memcpy(out + k, "\\u00", 4);
			out[k + 4] = hex[c >> 4];
			out[k + 5] = hex[c & 15];
			k += 6;
		} else
			out[k++] = (char)c;
	}
	return k;
}

/*
 * kt_json_escape (eight bytes at a time where none needs an escape)
 * against escape_plain: one byte of every kind at every offset of texts
 * of 0 to 40 bytes, then random texts over an alphabet heavy in quotes,
 * backslashes, control and high bytes (fails with the word test
 * skipping a word that holds one, or a run before an escape lost).
 */
static void
test_json_escape_oracle(void)
{
	static const char special[] = "\"\\\x01\x1f\x20\x21\x5b\x5d\x7f\x80\xff\t";
	char in[64], want[400];
	struct kt_buf b = KT_BUF_INIT;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t n, at, k, i;
	int ok = 1;

	for (n = 0; n <= 40; n++)
		for (at = 0; at < (n ? n : 1); at++)
			for (k = 0; k + 1 < sizeof(special); k++) {
				for (i = 0; i < n; i++)
					in[i] = (char)('a' + i % 26);
				if (n > 0)
					in[at] = special[k];
				b.n = 0;
				if (kt_json_escape(&b, in, n) == -1 ||
				    !bytes_eq(b.p, b.n, want, escape_plain(in, n, want)))
					ok = 0;
			}
	for (i = 0; i < 100000; i++) {
		xorshift(&x);
		n = (size_t)(x % 64);
		for (k = 0; k < n; k++) {
			xorshift(&x);
			in[k] = x % 4 == 0 ? special[x / 4 % (sizeof(special) - 1)] :
			    (char)(x >> 8);
		}
		b.n = 0;
		if (kt_json_escape(&b, in, n) == -1 ||
		    !bytes_eq(b.p, b.n, want, escape_plain(in, n, want)))
			ok = 0;
	}
	CHECK(ok && !b.err);
	kt_buf_free(&b);
}

/* Table t written in form f (with its header), into got.  0 or -1. */
static int
table_bytes(const struct kt_table *t, enum kt_table_form f, struct kt_buf *got)
{
	char path[] = "/tmp/kt-unit-forms.XXXXXX", chunk[4096];
	struct kt_error err;
	struct kt_out *o;
	size_t n;
	FILE *fp;
	int fd, rc = 0;

	if ((fd = mkstemp(path)) == -1)
		return -1;
	close(fd);
	o = kt_out_open(path, -1, &err);
	if (o == NULL || kt_table_write(t, f, 1, o) != 0 ||
	    kt_out_commit(o, &err) != 0)
		rc = -1;
	got->n = 0;
	if ((fp = fopen(path, "r")) != NULL) {
		while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
			kt_buf_add(got, chunk, n);
		fclose(fp);
	} else
		rc = -1;
	unlink(path);
	return rc;
}

/*
 * A table written as TSV and as JSON lines (each row one copy, keys
 * escaped once) against the rows built here cell by cell: random cells
 * with tabs, newlines, quotes and a NUL (the cell ends there, as its C
 * string does), numbers and "-" in number columns (fails with a row's
 * tabs put one cell off, a NUL written, or a key not escaped).
 */
static void
test_table_forms_oracle(void)
{
	static const char *const cols[] = { "a\"b", "n:n", "c", "m:n" };
	static const char alpha[] = "ab\t\n\r\"\\\x01 9-";
	struct kt_table *t = kt_table_new(cols, 4);
	static const size_t heads[] = { 0, 1, 2, 1500, 2999, 3000, 5000 };
	struct kt_buf tsv = KT_BUF_INIT, json = KT_BUF_INIT, got = KT_BUF_INIT;
	uint64_t x = 0x243f6a8885a308d3ULL;
	size_t r, c, i;
	int ok = t != NULL, form;

	kt_buf_adds(&tsv, "a\"b\tn\tc\tm\n");
	for (r = 0; ok && r < 3000; r++) {
		kt_buf_addc(&json, '{');
		for (c = 0; c < 4; c++) {
			char cell[40], clean[40];
			size_t n, k = 0;

			xorshift(&x);
			n = (size_t)(x % 24);
			for (i = 0; i < n; i++)
				cell[i] = alpha[(x >> (i % 56)) % (sizeof(alpha) - 1)];
			if (c % 2 == 1 && n > 0)
				cell[0] = 'a';	/* text, never a number */
			if (c % 2 == 1 && x % 3 == 0)
				n = (size_t)snprintf(cell, sizeof(cell), "%lld",
				    (long long)(x >> 20) - (1LL << 42));
			else if (c % 2 == 1 && x % 3 == 1)
				n = (size_t)snprintf(cell, sizeof(cell), "-");
			if (x % 17 == 0 && n > 2)
				cell[n / 2] = '\0';
			for (i = 0; i < n && cell[i] != '\0'; i++)
				clean[k++] = cell[i] == '\t' || cell[i] == '\n' ||
				    cell[i] == '\r' ? ' ' : cell[i];
			clean[k] = '\0';
			if (kt_table_celln(t, cell, n) == -1)
				ok = 0;
			kt_buf_add(&tsv, clean, k);
			kt_buf_addc(&tsv, c < 3 ? '\t' : '\n');
			if (c > 0)
				kt_buf_adds(&json, ", ");
			kt_buf_adds(&json, c == 0 ? "\"a\\\"b\": " : c == 1 ?
			    "\"n\": " : c == 2 ? "\"c\": " : "\"m\": ");
			if (c % 2 == 1 && (k == 0 || strcmp(clean, "-") == 0))
				kt_buf_adds(&json, "null");
			else if (c % 2 == 1 && x % 3 == 0)
				kt_buf_add(&json, clean, k);
			else {
				char e[240];

				kt_buf_addc(&json, '"');
				kt_buf_add(&json, e, escape_plain(clean, k, e));
				kt_buf_addc(&json, '"');
			}
		}
		kt_buf_adds(&json, "}\n");
	}
	for (form = KT_TABLE_TSV; ok && form <= KT_TABLE_JSON;
	    form += KT_TABLE_JSON - KT_TABLE_TSV) {
		const struct kt_buf *want = form == KT_TABLE_TSV ? &tsv : &json;

		if (table_bytes(t, (enum kt_table_form)form, &got) == -1 ||
		    !bytes_eq(got.p, got.n, want->p, want->n))
			ok = 0;
	}
	CHECK(ok && !tsv.err && !json.err);
	/* kt_table_head: the header and the first n lines of the same TSV. */
	for (i = 0; ok && i < sizeof(heads) / sizeof(heads[0]); i++) {
		struct kt_table *h = kt_table_head(t, heads[i]);
		size_t k, lines = 0;

		for (k = 0; k < tsv.n && lines < heads[i] + 1; k++)
			lines += tsv.p[k] == '\n';
		if (h == NULL || kt_table_rows(h) != (heads[i] < 3000 ?
		    heads[i] : 3000) || kt_table_ncols(h) != 4 ||
		    table_bytes(h, KT_TABLE_TSV, &got) == -1 ||
		    !bytes_eq(got.p, got.n, tsv.p, k))
			ok = 0;
		kt_table_free(h);
	}
	CHECK(ok);
	kt_table_free(t);
	kt_buf_free(&tsv);
	kt_buf_free(&json);
	kt_buf_free(&got);
}

/*
 * SHA-256 against the FIPS 180-4 examples and Python's hashlib, whole
 * and fed in pieces (the SHA-extension path where the CPU has it).
 */
static void
test_sha256(void)
{
	struct kt_sha256 c;
	static const struct {
		size_t		 n;
		const char	*hex;
	} edges[] = {
		{ 55, "463eb28e72f82e0a96c0a4cc53690c57"
		    "1281131f672aa229e0d45ae59b598b59" },
		{ 56, "da2ae4d6b36748f2a318f23e7ab1dfdf"
		    "45acdc9d049bd80e59de82a60895f562" },
		{ 63, "29af2686fd53374a36b0846694cc3421"
		    "77e428d1647515f078784d69cdb9e488" },
		{ 64, "fdeab9acf3710362bd2658cdc9a29e8f"
		    "9c757fcf9811603a8c447cd1d9151108" },
		{ 65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2"
		    "694182027e6d0fc075074f2fabb31781" },
		{ 127, "92ca0fa6651ee2f97b884b7246a562fa"
		    "71250fedefe5ebf270d31c546bfea976" },
		{ 128, "471fb943aa23c511f6f72f8d1652d9c8"
		    "80cfa392ad80503120547703e56a2be5" },
		{ 1000, "4e4c294b331f7a2099a379bec34b9f9f"
		    "c03dc46ab465d998f4d683da53487e6d" }
	};
	char hex[65], mill[1000], path[] = "/tmp/kt-unit-sha.XXXXXX";
	const char *two =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	size_t i;
	FILE *f;
	int fd;

	kt_sha256_init(&c);
	kt_sha256_hex(&c, hex);
	CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855") == 0);
	kt_sha256_init(&c);
	kt_sha256_update(&c, "abc", 3);
	kt_sha256_hex(&c, hex);
	CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad") == 0);
	kt_sha256_init(&c);
	for (i = 0; i < strlen(two); i++)
		kt_sha256_update(&c, two + i, 1);
	kt_sha256_hex(&c, hex);
	CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1") == 0);
	kt_sha256_init(&c);
	memset(mill, 'a', sizeof(mill));
	for (i = 0; i < 1000; i++)
		kt_sha256_update(&c, mill, sizeof(mill));
	kt_sha256_hex(&c, hex);
	CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0") == 0);
	/* Lengths around the block and padding edges, fed in 7-byte steps. */
	for (i = 0; i < sizeof(mill); i++)
		mill[i] = (char)(i % 251);
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		size_t j, k;

		kt_sha256_init(&c);
		for (j = 0; j < edges[i].n; j += k) {
			k = edges[i].n - j < 7 ? edges[i].n - j : 7;
			kt_sha256_update(&c, mill + j, k);
		}
		kt_sha256_hex(&c, hex);
		CHECK(strcmp(hex, edges[i].hex) == 0);
	}
	if ((fd = mkstemp(path)) != -1 && (f = fdopen(fd, "w")) != NULL) {
		fputs("abc", f);
		fclose(f);
		CHECK(kt_sha256_file(path, hex, NULL) == 0 &&
		    strcmp(hex, "ba7816bf8f01cfea414140de5dae2223"
		    "b00361a396177a9cb410ff61f20015ad") == 0);
		/* The same on a thread, and without one. */
		for (i = 0; i < 2; i++) {
			struct kt_sha256_job *j = kt_sha256_start(path,
			    (int)i);

			memset(hex, 0, sizeof(hex));
			CHECK(j != NULL && kt_sha256_wait(j, hex, NULL) == 0 &&
			    strcmp(hex, "ba7816bf8f01cfea414140de5dae2223"
			    "b00361a396177a9cb410ff61f20015ad") == 0);
		}
		unlink(path);
	} else
		CHECK(0);
	CHECK(kt_sha256_file("/nonexistent/kt-sha", hex, NULL) == -1);
	for (i = 0; i < 2; i++) {
		struct kt_sha256_job *j = kt_sha256_start("/nonexistent/kt-sha",
		    (int)i);
		struct kt_error err;

		memset(&err, 0, sizeof(err));
		CHECK(j != NULL && kt_sha256_wait(j, hex, &err) == -1 &&
		    strcmp(err.file, "/nonexistent/kt-sha") == 0 &&
		    strstr(err.msg, "No such file") != NULL);
	}
}


/*
 * Places (kt_places): each event noted at its position gives its own
 * bytes back, read again from the held file, or from a copy when the
 * file does not have them (a repaired event, no holder); a position
 * noted with no event gives 0; a file that changed after it was read
 * gives -1.  Every event of a generated trace is compared with the
 * reader's bytes, in order, skipping every third position.
 */
static void
test_places(void)
{
	char path[] = "/tmp/kt-unit-places.XXXXXX";
	struct kt_error err;
	struct kt_event ev;
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_hold *h, *h2;
	struct kt_places *pl[3];
	struct kt_buf text = KT_BUF_INIT, want = KT_BUF_INIT;
	uint64_t *wpos = NULL, p, n = 0, k;
	size_t *wlen = NULL, cap = 0, len, at;
	const char *raw;
	unsigned fl;
	FILE *f;
	int fd, i, ok, added = 1;

	memset(&err, 0, sizeof(err));
	/* 3000 events, every 7th a long name, one of 20 MB (a copy). */
	kt_buf_adds(&text, "{\"traceEvents\": [\n");
	for (i = 0; i < 3000; i++) {
		char e[128];

		if (i > 0)
			kt_buf_adds(&text, ",\n");
		snprintf(e, sizeof(e), "{\"ph\": \"X\", \"name\": \"e%d%s", i,
		    i % 7 == 0 ? "_long_long_long_name" : "");
		kt_buf_adds(&text, e);
		if (i == 1500)
			for (k = 0; k < ((uint64_t)20 << 20) / 8; k++)
				kt_buf_adds(&text, "abcdefgh");
		snprintf(e, sizeof(e), "\", \"pid\": 1, \"tid\": %d, \"ts\": "
		    "%d, \"dur\": 1}", i % 3, i);
		kt_buf_adds(&text, e);
	}
	kt_buf_adds(&text, "\n]}\n");
	CHECK(!text.err);
	if ((fd = mkstemp(path)) == -1 || write(fd, text.p, text.n) !=
	    (ssize_t)text.n) {
		CHECK(!"mkstemp");
		kt_buf_free(&text);
		return;
	}
	close(fd);
	CHECK((h = kt_hold_new(path, path)) != NULL && kt_hold_plain(h));
	CHECK((pl[0] = kt_places_new(h)) != NULL);
	CHECK((pl[1] = kt_places_new(NULL)) != NULL);
	CHECK((h2 = kt_hold_new(path, path)) != NULL);
	CHECK((pl[2] = kt_places_new(h2)) != NULL);
	CHECK((src = kt_source_open(path, NULL, 0, &err)) != NULL);
	CHECK(kt_source_next(src, &rd, &err) == 1);
	while (kt_reader_next(rd, &ev, &err) == 1) {
		p = kt_reader_position(rd);
		if (p % 3 == 1)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			wpos = realloc(wpos, cap * sizeof(*wpos));
			wlen = realloc(wlen, cap * sizeof(*wlen));
			CHECK(wpos != NULL && wlen != NULL);
		}
		wpos[n] = p;
		wlen[n] = ev.len;
		kt_buf_add(&want, ev.raw, ev.len);
		n++;
		/* Every 10th as a repaired one: kept as a copy. */
		if (p % 10 == 0)
			ev.flags |= KT_EV_REPAIRED;
		added &= kt_places_add(pl[0], p, &ev, &err) == 0 &&
		    kt_places_add(pl[1], p, &ev, &err) == 0 &&
		    kt_places_add(pl[2], p, &ev, &err) == 0;
	}
	CHECK(n == 2000 && added);
	kt_reader_free(rd);
	kt_source_close(src);
	for (i = 0; i < 2; i++) {
		ok = 1;
		at = 0;
		for (k = 0, p = 0; p < 3001; p++) {
			int rc = kt_places_get(pl[i], p, &raw, &len, &fl, &err);

			if (k < n && wpos[k] == p) {
				ok &= rc == 1 && len == wlen[k] &&
				    memcmp(raw, want.p + at, len) == 0 &&
				    fl == (p % 10 == 0 ? KT_EV_REPAIRED : 0);
				at += wlen[k++];
			} else
				ok &= rc == 0;
		}
		CHECK(ok && k == n);
	}
	/*
	 * The file changes (a byte put in front, every event moved): a
	 * place read again is refused, a copy is still the event read.
	 */
	if ((f = fopen(path, "wb")) != NULL) {
		fputc(' ', f);
		fwrite(text.p, 1, text.n, f);
		fclose(f);
	}
	CHECK(kt_places_get(pl[2], 3, &raw, &len, NULL, &err) == -1 &&
	    strstr(err.msg, "changed") != NULL);
	CHECK(kt_hold_check(h2, &err) == -1);
	CHECK(kt_places_get(pl[2], 2990, &raw, &len, &fl, &err) == 1 &&
	    fl == KT_EV_REPAIRED &&
	    memcmp(raw, "{\"ph\": \"X\", \"name\": \"e2990\"", 27) == 0);
	for (i = 0; i < 3; i++)
		kt_places_free(pl[i]);
	kt_hold_free(h);
	kt_hold_free(h2);
	unlink(path);
	free(wpos);
	free(wlen);
	kt_buf_free(&text);
	kt_buf_free(&want);
}

/*
 * Holding events (lib/hold.c, through the store): a plain file's events
 * keep only their place in the file and are read again from it, others
 * are copied; both give the reader's bytes after the reader is gone.  A
 * file that changes is told, by kt_hold_bytes and kt_hold_check.  A byte
 * range copied to an output.
 */
static void
test_hold(void)
{
	static const char trace[] =
	    "{\"traceEvents\": [\n"
	    "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, "
	    "\"ts\": 1, \"dur\": 2},\n"
	    "{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, "
	    "\"ts\": 3.25, \"dur\": 4}\n"
	    "]}\n";
	const char *ea = trace + 18, *eb = strstr(trace, "{\"ph\": \"X\", "
	    "\"name\": \"b\"");
	char path[] = "/tmp/kt-unit-hold.XXXXXX";
	char copy[] = "/tmp/kt-unit-hold-copy.XXXXXX";
	char got[sizeof(trace)];
	struct kt_error err;
	struct kt_event ev, lv;
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_hold *h[3];
	struct kt_store *st[2];
	struct kt_out *out;
	uint64_t off[2] = { 0, 0 }, o;
	size_t k, n = 0, len[2] = { 0, 0 };
	FILE *f;
	int fd;

	if ((fd = mkstemp(path)) == -1 || write(fd, trace, sizeof(trace) -
	    1) != (ssize_t)(sizeof(trace) - 1)) {
		CHECK(!"mkstemp");
		return;
	}
	close(fd);
	CHECK((h[0] = kt_hold_new(path, path)) != NULL);
	CHECK((h[1] = kt_hold_new(NULL, "<stdin>")) != NULL);
	CHECK((st[0] = kt_store_new(0, KT_FBIT(KT_F_PID) | KT_FBIT(KT_F_TS),
	    h[0])) != NULL);
	CHECK((st[1] = kt_store_new(0, KT_FBIT(KT_F_PID) | KT_FBIT(KT_F_TS),
	    h[1])) != NULL);
	CHECK((src = kt_source_open(path, NULL, 0, &err)) != NULL);
	CHECK(kt_source_next(src, &rd, &err) == 1);
	while (kt_reader_next(rd, &ev, &err) == 1 && n < 2) {
		CHECK(kt_hold_where(h[0], &ev, &off[n], &err) == 1);
		CHECK(kt_hold_where(h[1], &ev, &o, &err) == 0 &&
		    kt_hold_where(NULL, &ev, &o, &err) == 0);
		len[n] = ev.len;
		for (k = 0; k < 2; k++)
			CHECK(kt_store_add(st[k], rd, &ev, &err) != NULL);
		n++;
	}
	CHECK(n == 2);
	kt_reader_free(rd);
	kt_source_close(src);
	/* Their places: where the text has them. */
	CHECK(off[0] == 18 && off[1] == (uint64_t)(eb - trace) &&
	    len[0] == (size_t)(strchr(ea, '}') + 1 - ea));
	/* Kept in the file: no bytes in memory, a view without them. */
	kt_store_view(st[0], 1, &lv);
	CHECK(lv.raw == NULL && lv.len == len[1] && lv.ts == 3250);
	kt_store_view(st[1], 1, &lv);
	CHECK(lv.raw != NULL && memcmp(lv.raw, eb, len[1]) == 0);
	for (k = 0; k < 2; k++)
		for (n = 0; n < 2; n++) {
			memset(&lv, 0, sizeof(lv));
			CHECK(kt_store_load(st[k], n, &lv, &err) == 0 &&
			    lv.len == len[n] && memcmp(lv.raw, n ? eb : ea,
			    len[n]) == 0);
			/* The fields kept, and the digits of ts. */
			CHECK(lv.f[KT_F_PID].len == 1 &&
			    lv.raw[lv.f[KT_F_PID].off] == '1' &&
			    lv.ts_decimals == (n ? 2 : 0));
			CHECK(kt_store_event(st[k], n, &lv, &err) == 0 &&
			    lv.ph == 'X' && lv.ts == (n ? 3250 : 1000));
		}
	/* The held file was read again once: one window holds it. */
	CHECK(kt_hold_reads(h[0]) == 1 && kt_hold_reads(h[1]) == 0);
	/* A bad place is refused, not read. */
	CHECK(kt_hold_bytes(h[0], sizeof(trace), 2, &err) == NULL &&
	    kt_hold_bytes(h[1], 0, 2, &err) == NULL);
	/* Unchanged. */
	CHECK(kt_hold_check(h[0], &err) == 0 && kt_hold_check(h[1], &err) ==
	    0 && kt_hold_check(NULL, &err) == 0);
	/*
	 * Changed in place (the same size, one byte later): an event read
	 * again from a new holder is not there now, and the check fails;
	 * then shorter: the check of the first holder fails too.
	 */
	CHECK((h[2] = kt_hold_new(path, path)) != NULL);
	if ((f = fopen(path, "r+b")) != NULL) {
		fputc(' ', f);
		fwrite(trace, 1, sizeof(trace) - 2, f);
		fclose(f);
	}
	/* A holder of a file that is not the one read: its first event. */
	if ((fd = mkstemp(copy)) != -1) {
		CHECK(write(fd, trace, sizeof(trace) - 1) ==
		    (ssize_t)(sizeof(trace) - 1));
		close(fd);
		CHECK((src = kt_source_open(copy, NULL, 0, &err)) != NULL);
		CHECK(kt_source_next(src, &rd, &err) == 1);
		CHECK(kt_reader_next(rd, &ev, &err) == 1);
		CHECK(kt_hold_where(h[2], &ev, &o, &err) == -1 &&
		    strstr(err.msg, "not the file's") != NULL);
		kt_reader_free(rd);
		kt_source_close(src);
		unlink(copy);
		strcpy(copy, "/tmp/kt-unit-hold-copy.XXXXXX");
	} else
		CHECK(!"mkstemp");
	kt_hold_free(h[2]);
	CHECK((h[2] = kt_hold_new(path, path)) != NULL);
	if ((f = fopen(path, "r+b")) != NULL) {
		fputc(' ', f);
		fwrite(trace, 1, sizeof(trace) - 2, f);
		fclose(f);
	}
	CHECK(kt_hold_bytes(h[2], off[0], len[0], &err) == NULL &&
	    strstr(err.msg, "changed while it was read") != NULL);
	CHECK(kt_hold_check(h[2], &err) == -1 &&
	    strstr(err.msg, "changed while it was read") != NULL);
	kt_hold_free(h[2]);
	if (truncate(path, 10) == 0) {
		CHECK(kt_hold_check(h[0], &err) == -1 &&
		    strstr(err.msg, "changed while it was read") != NULL);
		CHECK((h[2] = kt_hold_new(path, path)) != NULL);
		CHECK(kt_hold_check(h[2], &err) == 0);
		CHECK(kt_hold_bytes(h[2], off[1], len[1], &err) == NULL);
		kt_hold_free(h[2]);
	} else
		CHECK(!"truncate");
	if ((f = fopen(path, "wb")) != NULL) {
		fputs(trace, f);
		fclose(f);
	}
	kt_store_free(st[0]);
	kt_store_free(st[1]);
	kt_hold_free(h[0]);
	kt_hold_free(h[1]);
	/* Bytes [16, 40) and then from 40 to the end: the file again. */
	if ((fd = mkstemp(copy)) != -1) {
		close(fd);
		CHECK((out = kt_out_open(copy, -1, &err)) != NULL);
		CHECK(kt_file_copy(path, 0, 16, out) == 0 &&
		    kt_file_copy(path, 16, 40, out) == 0 &&
		    kt_file_copy(path, 40, 0, out) == 0 &&
		    kt_out_commit(out, &err) == 0);
		memset(got, 0, sizeof(got));
		if ((f = fopen(copy, "rb")) != NULL) {
			CHECK(fread(got, 1, sizeof(got), f) ==
			    sizeof(trace) - 1);
			fclose(f);
		}
		CHECK(memcmp(got, trace, sizeof(trace) - 1) == 0);
		unlink(copy);
	} else
		CHECK(!"mkstemp");
	CHECK(kt_file_copy("/nonexistent/kt-copy", 0, 0, NULL) == -1);
	unlink(path);
}


/*
 * kt_model_load_each: each event read is handed to the callback, in the
 * file's order, before the model takes it (positions 0..n-1 with
 * KT_READ_POSITIONS, the model the same as without a callback), and a
 * callback's -1 ends the load with its error.  kt_reader_srcindex gives
 * a ktSourceIndex after the events also with KT_READ_POSITIONS.
 */
struct each_seen {
	uint64_t	 pos[16];
	int		 kinds[16];
	size_t		 n;
	size_t		 stop;		/* fail at this event (0: never) */
};

static int
each_note(void *arg, const struct kt_event *ev, struct kt_error *err)
{
	struct each_seen *es = arg;

	if (es->n < 16) {
		es->pos[es->n] = ev->index;
		es->kinds[es->n] = (int)ev->kind;
	}
	if (++es->n == es->stop) {
		kt_error_set(err, "each", 0, 0, "stopped at %zu", es->n);
		return -1;
	}
	return 0;
}

static void
test_model_each(void)
{
	static const char trace[] =
	    "{\"traceEvents\": [\n"
	    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,"
	    "\"tid\":1,\"ts\":10,\"dur\":5},\n"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,"
	    "\"args\":{\"name\":\"main\"}},\n"
	    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
	    "\"pid\":1,\"tid\":1,\"ts\":11,\"dur\":2,\"args\":{\"correlation\":7}},\n"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
	    "\"ts\":20,\"dur\":3,\"args\":{\"device\":0,\"stream\":7,"
	    "\"correlation\":7}}\n"
	    "], \"ktSourceIndex\": [40, 41, 42, 43]}\n";
	struct each_seen es;
	struct kt_reader *rd;
	struct kt_model *m, *m0;
	struct kt_error err;
	struct kt_rows si;
	size_t i;

	memset(&es, 0, sizeof(es));
	rd = kt_reader_mem(trace, sizeof(trace) - 1, "each", 0);
	m0 = rd != NULL ? kt_model_load(rd, NULL, &err) : NULL;
	CHECK(m0 != NULL);
	kt_reader_free(rd);
	rd = kt_reader_mem(trace, sizeof(trace) - 1, "each",
	    KT_READ_POSITIONS);
	m = rd != NULL ? kt_model_load_each(rd, KT_MODEL_ONE_THREAD, NULL,
	    each_note, &es, &err) : NULL;
	CHECK(m != NULL && es.n == 4);
	for (i = 0; i < 4; i++)
		CHECK(es.pos[i] == i);
	CHECK(es.kinds[0] == KT_CPU_OP && es.kinds[3] == KT_KERNEL);
	CHECK(m != NULL && m0 != NULL && m->nact == 1 && m0->nact == 1 &&
	    m->nspans == 2 && m0->nspans == 2);
	/* Rows by position here, the index's without the flag. */
	CHECK(m != NULL && m->act[0].index == 3 && m0 != NULL &&
	    m0->act[0].index == 43);
	CHECK(m != NULL && m->act[0].launch != KT_NO);
	CHECK(kt_reader_srcindex(rd, &si) == 1 && si.n == 4 &&
	    kt_rows_at(&si, 2) == 42);
	CHECK(kt_reader_rows(rd, &si, NULL) == 0);
	kt_model_free(m);
	kt_model_free(m0);
	kt_reader_free(rd);
	/* The callback's -1: no model, its error. */
	memset(&es, 0, sizeof(es));
	es.stop = 2;
	rd = kt_reader_mem(trace, sizeof(trace) - 1, "each", 0);
	m = rd != NULL ? kt_model_load_each(rd, 0, NULL, each_note, &es,
	    &err) : NULL;
	CHECK(m == NULL && es.n == 2 && strstr(err.msg, "stopped at 2") !=
	    NULL);
	kt_reader_free(rd);
}

/*
 * The model's spans in (thread, ts, longest first, row) order, whatever
 * order a thread's events come in: thread 1 in three runs of rising ts
 * (the shape Kineto writes: ops, then python functions, ...) with equal
 * ts of several lengths across the runs, thread 2 in a scrambled order
 * (over 64 runs: sorted by the other path), thread 3 in order; n1, n2,
 * n3 spans each (n1 a multiple of 3), interleaved in blocks of 7.
 * Checked as what a sort is: a permutation (every row once, with its own
 * ts and dur) in that order.
 */
static void
span_order(size_t n1, size_t n2, size_t n3)
{
	size_t n = n1 + n2 + n3, i, k = 0, j[3] = { 0, 0, 0 };
	int64_t *ts = calloc(n, sizeof(*ts)), *dur = calloc(n, sizeof(*dur));
	int *tid = calloc(n, sizeof(*tid));
	unsigned char *seen = calloc(n, 1);
	struct kt_buf b = { 0 };
	struct kt_reader *rd = NULL;
	struct kt_model *m = NULL;
	struct kt_error err;
	uint64_t x = 12345;
	int ok = 1;

	CHECK(ts != NULL && dur != NULL && tid != NULL && seen != NULL);
	if (ts == NULL || dur == NULL || tid == NULL || seen == NULL)
		goto out;
	/* Row i: the next span of thread (i / 7) % 3 that has any left. */
	for (i = 0; i < n; i++) {
		int t = (int)((i / 7) % 3);
		const size_t lim[3] = { n1, n2, n3 };

		while (j[t] == lim[t])
			t = (t + 1) % 3;
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		tid[i] = t + 1;
		if (t == 0) {
			/* Three runs, each rising from 0 by 0 or 1 us. */
			ts[i] = j[0] % (n1 / 3) == 0 ? 0 : ts[k] +
			    (int64_t)(x >> 63);
			k = i;
		} else if (t == 1)
			ts[i] = (int64_t)(x >> 33) % 300;
		else
			ts[i] = (int64_t)j[2];
		dur[i] = (int64_t)(x >> 40) % 7;
		j[t]++;
	}
	kt_buf_adds(&b, "{\"traceEvents\": [\n");
	for (i = 0; i < n; i++) {
		char ev[200];

		snprintf(ev, sizeof(ev), "%s{\"ph\":\"X\",\"cat\":\"cpu_op\","
		    "\"name\":\"op\",\"pid\":1,\"tid\":%d,\"ts\":%lld,"
		    "\"dur\":%lld}\n", i ? "," : "", tid[i], (long long)ts[i],
		    (long long)dur[i]);
		kt_buf_adds(&b, ev);
	}
	kt_buf_adds(&b, "]}");
	rd = kt_reader_mem(b.p, b.n, "order", 0);
	CHECK(rd != NULL);
	m = rd != NULL ? kt_model_load(rd, NULL, &err) : NULL;
	CHECK(m != NULL && m->nspans == n && m->nthreads == 3);
	for (k = 0; m != NULL && m->nspans == n && k < n; k++) {
		const struct kt_span *s = &m->spans[k], *p = s - 1;

		i = (size_t)s->index;
		if (i >= n || seen[i]++ || s->ts != ts[i] * 1000 ||
		    s->dur != dur[i] * 1000)
			ok = 0;
		else if (k > 0 && (p->thread > s->thread ||
		    (p->thread == s->thread && (p->ts > s->ts ||
		    (p->ts == s->ts && (p->dur < s->dur ||
		    (p->dur == s->dur && p->index >= s->index)))))))
			ok = 0;
	}
	CHECK(ok);
out:
	kt_model_free(m);
	kt_reader_free(rd);
	kt_buf_free(&b);
	free(ts);
	free(dur);
	free(tid);
	free(seen);
}

static void
test_model_span_order(void)
{
	span_order(3000, 2000, 500);
	span_order(45000, 30000, 6000);
}

/*
 * kt_idmemo: the last event's id again only for the same pid and tid
 * bytes and rank; pids and tids that join to the same bytes ("1","23"
 * and "12","3"), a string id and its number, the same bytes with another
 * rank (the fifth event), no pid: looked up.
 */
static void
test_idmemo(void)
{
	static const char trace[] = "{\"traceEvents\": [\n"
	    "{\"ph\":\"i\",\"pid\":1,\"tid\":23,\"ts\":1},\n"
	    "{\"ph\":\"i\",\"pid\":1,\"tid\":23,\"ts\":2},\n"
	    "{\"ph\":\"i\",\"pid\":12,\"tid\":3,\"ts\":3},\n"
	    "{\"ph\":\"i\",\"pid\":\"12\",\"tid\":3,\"ts\":4},\n"
	    "{\"ph\":\"i\",\"pid\":\"12\",\"tid\":3,\"ts\":5},\n"
	    "{\"ph\":\"i\",\"tid\":3,\"ts\":6}\n"
	    "]}";
	/* Per event: the (pid, tid) memo hits. */
	static const int want[6] = { 0, 1, 0, 0, 0, 0 };
	struct kt_idmemo th, pid;
	struct kt_reader *rd;
	struct kt_event ev;
	struct kt_error err;
	uint32_t id;
	int i = 0, ok = 1, got;

	kt_idmemo_init(&th);
	kt_idmemo_init(&pid);
	rd = kt_reader_mem(trace, sizeof(trace) - 1, "memo", 0);
	CHECK(rd != NULL);
	while (rd != NULL && i < 6 && kt_reader_next(rd, &ev, &err) == 1) {
		int64_t rank = i == 4 ? 7 : 0;

		got = kt_idmemo_hit(&th, &ev, rank, 1, &id);
		if (got != want[i] || (got && id != 100u + (unsigned)i - 1))
			ok = 0;
		if (!got)
			kt_idmemo_keep(&th, &ev, rank, 1, 100u + (unsigned)i);
		/* The pid alone: 1, 1 (hit), 12, "12", "12" (rank 7), none. */
		got = kt_idmemo_hit(&pid, &ev, rank, 0, &id);
		if (got != (i == 1) || (got && id != 5))
			ok = 0;
		if (!got)
			kt_idmemo_keep(&pid, &ev, rank, 0, 5);
		i++;
	}
	CHECK(ok && i == 6);
	kt_reader_free(rd);
}

/*
 * kt_idmemo against a plain comparison of the texts: pids and tids of
 * 1-20 bytes (quoted strings too), the second event's the same as the
 * first's or one byte changed at any place, each event in an allocation
 * of its exact size (the comparison reads words, for AddressSanitizer).
 */
static void
test_idmemo_random(void)
{
	uint64_t x = 0x853c49e6748fea9bULL;
	int i, k, bad = 0, hits = 0;

	for (i = 0; i < 100000 && !bad; i++) {
		char id[2][2][24], *buf[2];
		struct kt_event ev[2];
		struct kt_error err;
		struct kt_idmemo m;
		uint32_t got;
		size_t n;
		int e, f, same, hit;

		for (f = 0; f < 2; f++) {
			int len = 1 + (int)(xorshift(&x) % 20);

			for (k = 0; k < len; k++)
				id[0][f][k] = (char)('1' + xorshift(&x) % 3);
			id[0][f][len] = '\0';
			memcpy(id[1][f], id[0][f], sizeof(id[0][f]));
			if (xorshift(&x) % 2)
				id[1][f][xorshift(&x) % (uint64_t)len] = '7';
		}
		same = strcmp(id[0][0], id[1][0]) == 0 &&
		    strcmp(id[0][1], id[1][1]) == 0;
		kt_idmemo_init(&m);
		for (e = 0; e < 2; e++) {
			n = (size_t)snprintf(NULL, 0, "{\"pid\":\"%s\",\"tid\":%s}",
			    id[e][0], id[e][1]);
			if ((buf[e] = malloc(n + 1)) == NULL)
				abort();
			snprintf(buf[e], n + 1, "{\"pid\":\"%s\",\"tid\":%s}",
			    id[e][0], id[e][1]);
			if (kt_event_scan(buf[e], n, &ev[e], &err) != 0)
				bad = 1;
		}
		if (!bad) {
			kt_idmemo_keep(&m, &ev[0], 0, 1, 9);
			hit = kt_idmemo_hit(&m, &ev[1], 0, 1, &got);
			bad = hit != same || (hit && got != 9);
			hits += hit;
			if (bad)
				printf("idmemo: %s %s against %s %s: %d\n",
				    id[0][0], id[0][1], id[1][0], id[1][1], hit);
		}
		free(buf[0]);
		free(buf[1]);
	}
	CHECK(!bad && hits > 20000 && hits < 80000);
}

/* The analysis model on a small trace, the bucket rules, intervals. */
/*
 * What the model keeps at the join and at the end of its sorts
 * (kt_act.op, kt_thread.end, kt_device.end), its spans put together by
 * thread (the thread read first is second in order), and
 * kt_rules_classify's two threads, on 36000 kernels, each launched (by
 * correlation) under one of four nestings on one of two threads; judged
 * by the trace's own layout, by walking the spans' parents here, and by
 * deciding each activity alone (kt_rules_decide, no caches), with and
 * without threads (KT_MODEL_ONE_THREAD).
 */
static void
test_model_join_cache(void)
{
	static const char *const kname[4] = {
		"my_custom_kernel", "sm90_xmma_gemm_bf16",
		"ncclDevKernel_AllReduce_Sum", "vectorized_elementwise_kernel"
	};
	static const char *const opname[4] = {
		"aten::mm", "aten::add", NULL, NULL
	};
	const size_t n = 36000;
	struct kt_buf b = KT_BUF_INIT;
	struct kt_model *m[2];
	struct kt_rules *rs;
	struct kt_error err;
	uint32_t *cls[2];
	size_t i, k, bad_op = 0, bad_walk = 0, bad_cls = 0, bad_order = 0;
	int rc = 0, v;

	rc |= kt_buf_adds(&b, "{\"traceEvents\":[\n");
	for (i = 0; i < n; i++) {
		unsigned long long t = (unsigned long long)i * 10;
		/* tid 2 first: read first, second in the threads' order. */
		int tid = 2 - (int)(i % 2), mode = (int)(i % 4);

		if (mode == 0 || mode == 1)
			rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"cpu_op\","
			    "\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%llu,"
			    "\"dur\":8},\n", opname[mode], tid, t);
		if (mode == 1)
			rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":"
			    "\"user_annotation\",\"name\":\"ann\",\"pid\":1,"
			    "\"tid\":%d,\"ts\":%llu.5,\"dur\":6}, \n", tid, t);
		if (mode == 2)
			rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":"
			    "\"python_function\",\"name\":\"fwd\",\"pid\":1,"
			    "\"tid\":%d,\"ts\":%llu,\"dur\":8},\n", tid, t);
		rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\","
		    "\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":%d,"
		    "\"ts\":%llu,\"dur\":1,\"args\":{\"correlation\":%zu}},\n",
		    tid, t + 1, i + 1);
		rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"kernel\","
		    "\"name\":\"%s\",\"pid\":0,\"tid\":%zu,\"ts\":%llu,"
		    "\"dur\":5,\"args\":{\"correlation\":%zu,\"stream\":%zu,"
		    "\"device\":0}}%s\n", kname[mode], 7 + i % 3, t + 3, i + 1,
		    7 + i % 3, i + 1 < n ? "," : "");
	}
	rc |= kt_buf_adds(&b, "]}");
	CHECK(rc == 0);
	rs = kt_rules_new(1);
	CHECK(rs != NULL);
	if (rc != 0 || rs == NULL) {
		kt_buf_free(&b);
		kt_rules_free(rs);
		return;
	}
	for (v = 0; v < 2; v++) {
		struct kt_reader *rd = kt_reader_mem(b.p, b.n, "t", 0);

		m[v] = rd == NULL ? NULL : kt_model_load_with(rd,
		    v ? KT_MODEL_ONE_THREAD : 0, NULL, &err);
		CHECK(m[v] != NULL && m[v]->nact == n && m[v]->nthreads == 2 &&
		    m[v]->ndevices == 1);
		cls[v] = m[v] != NULL ? kt_rules_classify(rs, m[v]) : NULL;
		CHECK(cls[v] != NULL);
		kt_reader_free(rd);
	}
	for (v = 0; v < 2 && m[0] != NULL && m[1] != NULL && cls[0] != NULL &&
	    cls[1] != NULL; v++) {
		const struct kt_model *mm = m[v];

		for (k = 0; k < mm->nact; k++) {
			const struct kt_act *a = &mm->act[k];
			size_t j = (size_t)a->corr - 1;
			uint32_t op = kt_model_op_of(mm, (uint32_t)k), s = KT_NO;
			struct kt_decision d;

			if (a->corr < 1 || j >= n) {
				bad_op++;
				continue;
			}
			/* The op the trace put it under, by name. */
			if (opname[j % 4] == NULL ? op != KT_NO : op == KT_NO ||
			    strcmp(kt_model_str(mm, mm->spans[op].name),
			    opname[j % 4]) != 0)
				bad_op++;
			/* The innermost cpu_op above its launch, walked here. */
			if (a->launch != KT_NO)
				for (s = mm->spans[a->launch].parent; s != KT_NO &&
				    mm->spans[s].kind != KT_CPU_OP;
				    s = mm->spans[s].parent)
					;
			if (a->launch == KT_NO || s != op)
				bad_walk++;
			kt_rules_decide(rs, mm, (uint32_t)k, &d);
			if (cls[v][k] != d.bucket || cls[v][k] != cls[0][k])
				bad_cls++;
		}
		/*
		 * tid 1's last span (i = n - 1, a bare launch) ends at 10 i + 2
		 * us, tid 2's (i = n - 2, a python_function) at 10 i + 8, the
		 * device's last kernel at 10 (n - 1) + 8.
		 */
		CHECK(mm->threads[0].end == (int64_t)((n - 1) * 10 + 2) * 1000 &&
		    mm->threads[1].end == (int64_t)((n - 2) * 10 + 8) * 1000);
		/*
		 * Each thread's spans together, its own, in (ts, longest
		 * first) order: n each (odd i: 3 + 1 per two, even: 2 + 2).
		 */
		for (k = 0; k < mm->nspans; k++) {
			const struct kt_span *sp = &mm->spans[k];
			const struct kt_thread *th = &mm->threads[sp->thread];

			if (k < th->first || k >= (size_t)th->first +
			    th->nspans || (k > th->first && (sp[-1].ts > sp->ts ||
			    (sp[-1].ts == sp->ts && sp[-1].dur < sp->dur))))
				bad_order++;
		}
		CHECK(mm->nspans == 2 * n && mm->threads[0].first == 0 &&
		    mm->threads[0].nspans == n && mm->threads[1].nspans == n &&
		    strcmp(kt_model_str(mm, mm->threads[0].key), "1\t1") == 0);
		CHECK(mm->devices[0].end == (int64_t)((n - 1) * 10 + 8) * 1000);
	}
	CHECK(bad_op == 0);
	CHECK(bad_walk == 0);
	CHECK(bad_cls == 0);
	CHECK(bad_order == 0);
	/* Three buckets or more: the rules and the op evidence both spoke. */
	if (cls[0] != NULL && m[0] != NULL) {
		uint32_t seen[64] = { 0 };
		size_t ndist = 0;

		for (k = 0; k < m[0]->nact; k++)
			if (cls[0][k] < 64 && seen[cls[0][k]]++ == 0)
				ndist++;
		CHECK(ndist >= 3);
	}
	for (v = 0; v < 2; v++) {
		free(cls[v]);
		kt_model_free(m[v]);
	}
	kt_rules_free(rs);
	kt_buf_free(&b);
}

/*
 * The join on two threads (70,000 kernels and more): each activity's
 * launch, thread, op and step, and each step's GPU start, end and count,
 * the same as on one thread (KT_MODEL_ONE_THREAD); the steps' by the
 * trace's layout (kernel i launched in step i / 1000, at 10 i + 4 us for
 * 5 us).  With extra the second device adds three kernels launched in
 * step 10, the first at -1 ns (the counts' "none", so the step's start
 * is taken again by the next one, as one thread counts in order): on the
 * second half, which is counted apart, while step 10's other kernels are
 * on the first (a min of the halves' starts would be 100004 us).
 */
static void
join_threads(int extra)
{
	const size_t n = 70000, nsteps = 70;
	struct kt_buf b = KT_BUF_INIT;
	struct kt_model *m[2] = { NULL, NULL };
	size_t i, k, bad_act = 0, bad_step = 0, bad_truth = 0;
	int rc = 0, v;

	rc |= kt_buf_adds(&b, "{\"traceEvents\":[\n");
	for (k = 0; k < nsteps; k++)
		rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"cpu_op\","
		    "\"name\":\"ProfilerStep#%zu\",\"pid\":1,\"tid\":1,"
		    "\"ts\":%zu,\"dur\":9999},\n", k, k * 10000);
	for (i = 0; i < n + (extra ? 3 : 0); i++) {
		unsigned long long t = i < n ? (unsigned long long)i * 10 :
		    105004 + i - n;
		const char *kts = i < n ? NULL : i == n ? "-0.001" :
		    i == n + 1 ? "105000" : "105010";

		rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\","
		    "\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
		    "\"ts\":%llu,\"dur\":1,\"args\":{\"correlation\":%zu}},\n",
		    t + 1, i + 1);
		if (kts == NULL)
			rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"kernel\","
			    "\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%llu,"
			    "\"dur\":5,\"args\":{\"correlation\":%zu,"
			    "\"device\":0}}%s\n", t + 4, i + 1,
			    i + 1 < n + (extra ? 3 : 0) ? "," : "");
		else
			rc |= kt_buf_printf(&b, "{\"ph\":\"X\",\"cat\":\"kernel\","
			    "\"name\":\"k\",\"pid\":2,\"tid\":7,\"ts\":%s,"
			    "\"dur\":5,\"args\":{\"correlation\":%zu,"
			    "\"device\":1}}%s\n", kts, i + 1,
			    i + 1 < n + 3 ? "," : "");
	}
	rc |= kt_buf_adds(&b, "]}");
	CHECK(rc == 0);
	for (v = 0; v < 2 && rc == 0; v++) {
		struct kt_reader *rd = kt_reader_mem(b.p, b.n, "j", 0);

		m[v] = rd == NULL ? NULL : kt_model_load_with(rd,
		    v ? KT_MODEL_ONE_THREAD : 0, NULL, NULL);
		CHECK(m[v] != NULL && m[v]->nact == n + (extra ? 3 : 0) &&
		    m[v]->nsteps == nsteps);
		kt_reader_free(rd);
	}
	if (m[0] != NULL && m[1] != NULL && m[0]->nact == m[1]->nact &&
	    m[0]->nsteps == nsteps && m[1]->nsteps == nsteps) {
		for (i = 0; i < m[0]->nact; i++) {
			const struct kt_act *a = &m[0]->act[i], *o = &m[1]->act[i];

			if (a->launch != o->launch || a->thread != o->thread ||
			    a->op != o->op || a->step != o->step ||
			    a->launch == KT_NO || a->step == KT_NO)
				bad_act++;
		}
		for (k = 0; k < nsteps; k++) {
			const struct kt_step *s = &m[0]->steps[k];
			const struct kt_step *o = &m[1]->steps[k];
			int64_t gs = (int64_t)(k * 10000 + 4) * 1000;
			int64_t ge = (int64_t)(k * 10000 + 9990 + 9) * 1000;

			if (s->gpu_start != o->gpu_start ||
			    s->gpu_end != o->gpu_end || s->nact != o->nact)
				bad_step++;
			if (extra && k == 10) {
				/* -1 ns, then 105000 us taken as the first. */
				if (s->nact != 1003 || s->gpu_start !=
				    INT64_C(105000000) || s->gpu_end != ge)
					bad_truth++;
			} else if (s->nact != 1000 || s->gpu_start != gs ||
			    s->gpu_end != ge)
				bad_truth++;
		}
	}
	CHECK(bad_act == 0);
	CHECK(bad_step == 0);
	CHECK(bad_truth == 0);
	kt_model_free(m[0]);
	kt_model_free(m[1]);
	kt_buf_free(&b);
}

static void
test_model_join_threads(void)
{
	join_threads(0);
	join_threads(1);
}

static void
test_model(void)
{
	static const char trace[] =
	    "{\"distributedInfo\": {\"rank\": 3}, \"traceEvents\": [\n"
	    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#7\","
	    "\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},\n"
	    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\","
	    "\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":20},\n"
	    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
	    "\"pid\":1,\"tid\":1,\"ts\":115,\"dur\":5,\"args\":{\"correlation\":9}},\n"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_\\u0041\","
	    "\"pid\":0,\"tid\":7,\"ts\":300.5,\"dur\":10,"
	    "\"args\":{\"correlation\":9,\"stream\":7,\"device\":0}},\n"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllGather\","
	    "\"pid\":0,\"tid\":20,\"ts\":150,\"dur\":4,"
	    "\"args\":{\"stream\":20,\"In msg nelems\":8,\"dtype\":\"BFloat16\"}},\n"
	    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\","
	    "\"pid\":0,\"tid\":13,\"ts\":120,\"dur\":2,\"args\":{\"bytes\":64}}\n"
	    "]}";
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_error err;
	struct kt_rules *rs;
	struct kt_buf b = { 0 };
	struct kt_iv a[4] = { { 5, 10 }, { 0, 3 }, { 3, 4 }, { 20, 20 } };
	struct kt_iv c[2] = { { 2, 6 }, { 9, 30 } };
	uint32_t *bk;
	size_t n;

	rd = kt_reader_mem(trace, sizeof(trace) - 1, "t", 0);
	CHECK(rd != NULL);
	if (rd == NULL)
		return;
	m = kt_model_load(rd, NULL, &err);
	CHECK(m != NULL);
	if (m == NULL) {
		kt_reader_free(rd);
		return;
	}
	CHECK(m->rank == 3 && m->ndevices == 1 && m->nact == 3);
	CHECK(m->devices[0].rank == 3 && m->devices[0].nstreams == 3);
	CHECK(m->act[0].ts == 120000 && m->act[2].ts == 300500);
	CHECK(strcmp(kt_model_str(m, m->act[2].name), "sm90_xmma_gemm_A") == 0);
	CHECK(m->nsteps == 1 && m->steps[0].number == 7);
	/* The gemm joins its launch (thread 0, step 0) by correlation. */
	CHECK(m->act[2].thread == 0 && m->act[2].step == 0 &&
	    m->spans[m->act[2].launch].corr == 9);
	/* The memcpy falls in the step's CPU span; steps span the GPU. */
	CHECK(m->act[0].step == 0 && m->steps[0].gpu_start == 120000 &&
	    m->steps[0].gpu_end == 310500 && m->steps[0].nact == 3);
	CHECK(kt_act_bytes(m, &m->act[1]) == 16 &&
	    kt_act_bytes(m, &m->act[0]) == 64);
	n = kt_model_span_at(m, 0, 117000, 0);
	CHECK(n != KT_NO && strcmp(kt_model_str(m, m->spans[n].name),
	    "cudaLaunchKernel") == 0);
	n = kt_model_span_at(m, 0, 125000, 0);
	CHECK(n != KT_NO && strcmp(kt_model_str(m, m->spans[n].name),
	    "aten::mm") == 0);
	n = kt_model_span_at(m, 0, 117000, 1u << KT_CUDA_RUNTIME);
	CHECK(n != KT_NO && strcmp(kt_model_str(m, m->spans[n].name),
	    "aten::mm") == 0);
	CHECK(kt_model_span_at(m, 0, 200000, 0) == KT_NO);
	rs = kt_rules_new(1);
	CHECK(rs != NULL);
	if (rs != NULL) {
		bk = kt_rules_classify(rs, m);
		CHECK(bk != NULL && strcmp(kt_rules_bucket_name(rs, bk[0]),
		    "transfer") == 0 && strcmp(kt_rules_bucket_name(rs, bk[1]),
		    "communication") == 0 && strcmp(kt_rules_bucket_name(rs,
		    bk[2]), "gemm") == 0);
		free(bk);
		CHECK(strcmp(kt_rules_bucket_name(rs, kt_rules_match(rs,
		    KT_KERNEL, "Cijk_Ailk_Bljk_HHS_BH_MT128x128")), "gemm") == 0);
		CHECK(strcmp(kt_rules_bucket_name(rs, kt_rules_match(rs,
		    KT_KERNEL, "void flash_fwd_kernel<cutlass::bfloat16_t>")),
		    "attention") == 0);
		CHECK(strcmp(kt_rules_bucket_name(rs, kt_rules_match(rs,
		    KT_KERNEL, "void deep_ep::intranode::dispatch<8>(int)")),
		    "communication") == 0);
		CHECK(strcmp(kt_rules_bucket_name(rs, kt_rules_match(rs,
		    KT_KERNEL, "mystery")), "other") == 0);
		CHECK(kt_rules_explain(rs, KT_KERNEL, "rcclKernel", &b) ==
		    kt_rules_match(rs, KT_KERNEL, "rcclKernel") &&
		    b.n > 0 && strstr(b.p, "matches 'rccl'") != NULL);
		kt_buf_free(&b);
		kt_rules_free(rs);
	}
	{
		/*
		 * Function names, worked out by hand from the Itanium C++
		 * ABI's mangling (<length><identifier>, N...E nesting, I
		 * template arguments, St std::, _GLOBAL__N_1 the anonymous
		 * namespace); what it does not read is kept whole.
		 */
		static const char *const fnames[][2] = {
			{ "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bLi64EEEvPT0_",
			    "aiter::add_rmsnorm_quant_kernel" },
			{ "_ZN10fbgemm_gpu12_GLOBAL__N_125_FP8_quantize_cuda_"
			    "kernelIN7cutlass10bfloat16_tEEEvPKT_ii",
			    "fbgemm_gpu::(anonymous namespace)::"
			    "_FP8_quantize_cuda_kernel" },
			{ "_ZL15gelu_fwd_kernelPf", "gelu_fwd_kernel" },
			{ "_Z13my_kernel_xyzPfS_i", "my_kernel_xyz" },
			{ "_ZNSt3foo3barEv", "std::foo::bar" },
			{ "_ZNK3foo3barEv", "foo::bar" },
			/* A launcher, a substitution, bad lengths: whole. */
			{ "_ZN7ck_tile6kentryILi2ENS_4FmhaEEEvv",
			    "_ZN7ck_tile6kentryILi2ENS_4FmhaEEEvv" },
			{ "_ZNS_3fooEv", "_ZNS_3fooEv" },
			{ "_ZN3ab", "_ZN3ab" },
			{ "_ZN99999999999999999999abc", "_ZN99999999999999999999abc" },
			{ "_ZNSt3", "_ZNSt3" },
			{ "_ZN3fooXv", "_ZN3fooXv" },
			{ "_Z", "_Z" },
		};
		size_t k;

		for (k = 0; k < sizeof(fnames) / sizeof(fnames[0]); k++) {
			kt_buf_clear(&b);
			CHECK(kt_kernel_function(fnames[k][0], &b) == 0 &&
			    kt_buf_addc(&b, '\0') == 0 &&
			    strcmp(b.p, fnames[k][1]) == 0);
		}
		kt_buf_free(&b);
	}
	kt_model_free(m);
	kt_reader_free(rd);
	n = kt_iv_union(a, 4);
	CHECK(n == 2 && a[0].start == 0 && a[0].end == 4 && a[1].start == 5 &&
	    a[1].end == 10 && kt_iv_length(a, n) == 9);
	CHECK(kt_iv_overlap(a, n, c, 2) == 4);
	CHECK(kt_iv_clip_length(a, n, 2, 7) == 4);
	{
		struct kt_bucket_opts bo;

		memset(&bo, 0, sizeof(bo));
		CHECK(kt_bucket_by_parse(&bo, "step,bucket") == 0 &&
		    bo.nby == 2 && bo.by[0] == KT_BY_STEP &&
		    bo.by[1] == KT_BY_BUCKET);
		CHECK(kt_bucket_by_parse(&bo, "name,name") == -1);
		CHECK(kt_bucket_by_parse(&bo, "bucket,") == -1);
		CHECK(kt_bucket_by_parse(&bo, "") == -1);
		CHECK(kt_bucket_by_parse(&bo, "devices") == -1);
	}
	CHECK(kt_dtype_size("BFloat16") == 2 && kt_dtype_size("Float") == 4 &&
	    kt_dtype_size("Long") == 8 && kt_dtype_size("quaternion") == -1);
}

/* Records for the stable sort: key, then the original position. */
struct srec {
	int	 key;
	int	 pos;
	char	 pad[300];	/* larger than any small-element shortcut */
};

static int
cmp_srec(const void *a, const void *b, void *ctx)
{
	const struct srec *x = a, *y = b;
	int *calls = ctx;

	(*calls)++;
	return (x->key > y->key) - (x->key < y->key);
}

static int
cmp_qsrec(const void *a, const void *b)
{
	const struct srec *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/*
 * kt_cpus counts the CPUs this process may run on, as nproc(1) does (it
 * reads the same affinity mask): under taskset -c 0 both say 1.
 */
static void
test_cpus(void)
{
	FILE *f = popen("nproc 2>/dev/null", "r");
	unsigned n = 0;

	if (f == NULL)
		return;
	if (fscanf(f, "%u", &n) == 1)
		CHECK(kt_cpus() == n);
	pclose(f);
}

/* Are r[0..n) ordered by key, equal keys in their first order? */
static int
sorted_stably(const struct srec *r, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (r[i - 1].key > r[i].key || (r[i - 1].key == r[i].key &&
		    r[i - 1].pos > r[i].pos))
			return 0;
	return 1;
}

/* An element of 40 bytes, as kt_flows' slices: the moves of insertion. */
struct srec40 {
	int	 key;
	int	 pos;
	char	 pad[32];
};

static int
cmp_srec40(const void *a, const void *b, void *ctx)
{
	const struct srec40 *x = a, *y = b;

	(void)ctx;
	return (x->key > y->key) - (x->key < y->key);
}

/*
 * kt_sort_r on 40-byte elements (taken out and put back, not swapped):
 * random keys with many equal, in sizes around the runs of 16, and
 * nearly in order; ordered by key, equal keys in their first order, the
 * padding moved with its element.
 */
static void
test_sort_r40(void)
{
	static const int sizes[] = { 2, 15, 16, 17, 33, 1000, 4099 };
	size_t k, i, bad = 0;
	uint64_t x = 777;

	for (k = 0; k < 2 * sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = (size_t)sizes[k % 7];
		struct srec40 *r = calloc(n, sizeof(*r));

		if (r == NULL)
			return;
		for (i = 0; i < n; i++) {
			xorshift(&x);
			r[i].key = k < 7 ? (int)(x % 7) : (int)i / 3 -
			    (x % 50 == 0 ? 20 : 0);
			r[i].pos = (int)i;
			memset(r[i].pad, (int)(i & 0xff), sizeof(r[i].pad));
		}
		kt_sort_r(r, n, sizeof(*r), cmp_srec40, NULL);
		for (i = 0; i < n; i++)
			bad += (i > 0 && (r[i - 1].key > r[i].key ||
			    (r[i - 1].key == r[i].key &&
			    r[i - 1].pos > r[i].pos))) ||
			    r[i].pad[0] != (char)(r[i].pos & 0xff) ||
			    r[i].pad[31] != (char)(r[i].pos & 0xff);
		free(r);
	}
	CHECK(bad == 0);
}

/* kt_sort_r: ordered by key, equal keys in their first order (checked
 * element by element against the definition, not another sort). */
static void
test_sort_r(void)
{
	static const int sizes[] = { 0, 1, 2, 15, 16, 17, 33, 1000, 4099 };
	size_t k, i;
	uint64_t x = 12345;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int n = sizes[k], calls = 0;
		struct srec *r = calloc(n ? (size_t)n : 1, sizeof(*r));

		if (r == NULL)
			return;
		for (i = 0; i < (size_t)n; i++) {
			xorshift(&x);
			r[i].key = (int)(x % 7);	/* many equal keys */
			r[i].pos = (int)i;
		}
		kt_sort_r(r, (size_t)n, sizeof(*r), cmp_srec, &calls);
		CHECK(sorted_stably(r, (size_t)n));
		CHECK(n < 2 || calls > 0);
		free(r);
	}
	/*
	 * Nearly in order, as a thread's spans come: ascending keys with a
	 * few moved far (a parent written after its children), runs of
	 * equal keys, where the merges leave most in place.
	 */
	for (k = 0; k < 40; k++) {
		int n = 100 + (int)(k * 97), calls = 0;
		struct srec *r = calloc((size_t)n, sizeof(*r));

		if (r == NULL)
			return;
		for (i = 0; i < (size_t)n; i++) {
			r[i].key = (int)i / 3;
			r[i].pos = (int)i;
		}
		for (i = 0; i < 1 + k % 5; i++) {
			size_t a, b;

			xorshift(&x);
			a = x % (size_t)n;
			xorshift(&x);
			b = x % (size_t)n;
			r[a].key = r[b].key;	/* out of place, far */
		}
		kt_sort_r(r, (size_t)n, sizeof(*r), cmp_srec, &calls);
		CHECK(sorted_stably(r, (size_t)n));
		free(r);
	}
}

/*
 * kt_iv_add: intervals in order of start (some empty, some touching,
 * some inside others) joined as they come, checked against the unit
 * cells each one covers (a bitmap), not against kt_iv_union: in order,
 * apart (a touching pair is one), none empty, and covering exactly
 * the cells the intervals cover.
 */
static void
test_iv_add(void)
{
	uint64_t x = 4242;
	int round;

	for (round = 0; round < 200; round++) {
		struct kt_iv v[65];
		unsigned char cell[300];
		size_t n = 0, i, want = (size_t)(round % 64) + 1;
		int64_t start = 0, t;
		int ok = 1;

		memset(cell, 0, sizeof(cell));
		for (i = 0; i < want; i++) {
			int64_t end;

			xorshift(&x);
			start += (int64_t)(x % 4);	/* ties too */
			end = start + (int64_t)(x >> 8) % 9 - 1; /* maybe empty */
			for (t = start; t < end; t++)
				cell[t] = 1;
			kt_iv_add(v, &n, start, end);
		}
		for (i = 0; i < n; i++) {
			if (v[i].end <= v[i].start || (i > 0 &&
			    v[i].start <= v[i - 1].end))
				ok = 0;
			for (t = v[i].start; ok && t < v[i].end; t++)
				if (cell[t]++ != 1)
					ok = 0;	/* not covered, or twice */
		}
		for (t = 0; t < (int64_t)sizeof(cell); t++)
			if (cell[t] == 1)
				ok = 0;		/* covered, not in the union */
		CHECK(ok);
	}
}

/* An element of kt_qsort's tests: small (its insertion and merges). */
struct qrec {
	int64_t	 key;
	int64_t	 pos;
	char	 pad[24];
};

static int
cmp_qrec(const void *a, const void *b)
{
	const struct qrec *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/*
 * Are q[0..n) ordered by key, equal keys in their first order (pos), and
 * each of the n positions there once?
 */
static int
qsorted_stably(const struct qrec *q, size_t n)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	size_t i;
	int ok = seen != NULL;

	for (i = 0; ok && i < n; i++) {
		if (q[i].pos < 0 || (size_t)q[i].pos >= n || seen[q[i].pos]++)
			ok = 0;
		if (i > 0 && (q[i - 1].key > q[i].key || (q[i - 1].key ==
		    q[i].key && q[i - 1].pos > q[i].pos)))
			ok = 0;
	}
	free(seen);
	return ok;
}

/*
 * kt_qsort on the shapes a trace's arrays have and on those they have
 * not, each checked against the definition (ordered, equal keys in
 * their first order, a permutation), not another sort: in order; a few
 * runs (2, 9: merged) and one more (10: not); neighbours swapped (a
 * pass of insertion); far moves (past insertion's budget); random with
 * many equal keys; and elements too large for insertion.
 */
static void
test_qsort(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 100, 5003 };
	uint64_t x = 777;
	size_t k, i, shape;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (shape = 0; shape < 7; shape++) {
			size_t n = sizes[k], runs = shape == 1 ? 2 : shape == 2 ?
			    9 : 10, len = n / runs + 1;
			struct qrec *q = calloc(n ? n : 1, sizeof(*q));

			if (q == NULL)
				return;
			for (i = 0; i < n; i++) {
				xorshift(&x);
				q[i].pos = (int64_t)i;
				switch (shape) {
				case 0:		/* in order, ties in runs */
					q[i].key = (int64_t)(i / 3);
					break;
				case 1:
				case 2:
				case 3:		/* runs, each rising, with ties */
					q[i].key = (int64_t)(i % len * 2 +
					    i / len % 2);
					break;
				case 4:		/* neighbours swapped */
					q[i].key = (int64_t)(i / 2 * 2 +
					    (i % 2 == 0 && x % 3 == 0 ? 2 : 0));
					break;
				case 5:		/* far moves: sorted descending */
					q[i].key = (int64_t)(n - i) / 2;
					break;
				default:	/* random, many equal */
					q[i].key = (int64_t)(x % 11);
				}
			}
			kt_qsort(q, n, sizeof(*q), cmp_qrec);
			CHECK(qsorted_stably(q, n));
			free(q);
		}
	{
		/* Too large for insertion's buffer: qsort's (distinct keys). */
		struct srec *r = calloc(300, sizeof(*r));

		if (r == NULL)
			return;
		for (i = 0; i < 300; i++)
			r[i].key = (int)((i * 7919) % 300);
		kt_qsort(r, 300, sizeof(*r), cmp_qsrec);
		for (i = 0; i < 300; i++)
			CHECK(r[i].key == (int)i);
		free(r);
	}
}

/* The one unescaper: escapes, pairs, lone surrogates, bad escapes. */
static void
test_unescape(void)
{
	struct kt_buf b = KT_BUF_INIT;

#define UNESC(in, want) (kt_json_unescape(in, strlen(in), &b) == 0 && \
	b.n == sizeof(want) - 1 && memcmp(b.p, want, b.n) == 0)
	CHECK(UNESC("plain", "plain"));
	CHECK(UNESC("a\\nb\\t\\\"\\\\\\/", "a\nb\t\"\\/"));
	CHECK(UNESC("\\u00e9", "\xc3\xa9"));
	CHECK(UNESC("\\u20AC", "\xe2\x82\xac"));
	/* A surrogate pair is one code point (U+1F600), four bytes. */
	CHECK(UNESC("\\ud83d\\ude00", "\xf0\x9f\x98\x80"));
	/* Lone surrogates become U+FFFD. */
	CHECK(UNESC("\\ud83dx", "\xef\xbf\xbdx"));
	CHECK(UNESC("\\ude00", "\xef\xbf\xbd"));
	/* A bad \\u escape keeps the u; a cut one too. */
	CHECK(UNESC("\\uZZZZ", "uZZZZ"));
	CHECK(UNESC("\\u12", "u12"));
#undef UNESC
	kt_buf_free(&b);
	/* The step parser. */
	CHECK(kt_step_parse("ProfilerStep#12", 15) == 12);
	CHECK(kt_step_parse("ProfilerStep#0", 14) == 0);
	CHECK(kt_step_parse("ProfilerStep#", 13) == -1);
	CHECK(kt_step_parse("ProfilerStep#1x", 15) == -1);
	CHECK(kt_step_parse("ProfilerStep#99999999999999999999", 33) == -1);
	CHECK(kt_step_parse("ProfilerStep#9223372036854775807", 32) ==
	    INT64_MAX);
	CHECK(kt_step_parse("ProfilerStep#9223372036854775808", 32) == -1);
	CHECK(kt_step_parse("Step#3", 6) == -1);
}

/*
 * kt_val_int against strtoll: a number (or a string of one) of 0 to 24
 * digits, maybe negative, maybe with one byte that is no digit, is read
 * exactly when it is all digits and within int64 (INT64_MIN refused, as
 * the magnitude is read first), and its value is strtoll's.
 */
static void
test_val_int_oracle(void)
{
	struct kt_event ev;
	struct kt_val val;
	char text[40];
	uint64_t x = 0x243f6a8885a308d3ULL;
	unsigned i, bad = 0;

	memset(&ev, 0, sizeof(ev));
	ev.raw = text;
	for (i = 0; i < 200000; i++) {
		size_t n = 0, nd, k, q;
		int str, neg, ok, rc;
		int64_t got = 0;
		long long want;
		char *end;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		str = x & 1;
		neg = (x >> 1 & 3) == 0;
		nd = (size_t)(x >> 3) % 25;
		if (str)
			text[n++] = '"';
		q = n;
		if (neg)
			text[n++] = '-';
		for (k = 0; k < nd; k++)
			text[n++] = (char)('0' + (x >> (8 + k % 48) & 7) +
			    (k % 3 == 0 ? (x >> 20 & 2) : 0));
		/* Now and then a byte that is no digit, or the largest. */
		if ((x >> 56 & 15) == 0 && nd > 0)
			text[q + neg + (x >> 40) % nd] = (char)(x >> 48 & 1 ?
			    '.' : 0xb9);
		else if ((x >> 56 & 15) == 1) {
			n = q;
			n += (size_t)sprintf(text + n, "%s", neg ?
			    "-9223372036854775808" : "9223372036854775807");
		} else if ((x >> 56 & 15) == 2) {
			n = q;
			n += (size_t)sprintf(text + n, "%s", neg ?
			    "-9223372036854775807" : "9223372036854775808");
		}
		if (str)
			text[n++] = '"';
		text[n] = '\0';
		val.off = 0;
		val.len = (uint32_t)n;
		val.type = str ? KT_STRING : KT_NUMBER;
		rc = kt_val_int(&ev, &val, &got);
		/* The oracle, on the digits alone. */
		ok = n - q - (size_t)str > (size_t)(text[q] == '-');
		for (k = q + (text[q] == '-'); k < n - (size_t)str; k++)
			if (text[k] < '0' || text[k] > '9')
				ok = 0;
		errno = 0;
		want = ok ? strtoll(text + q, &end, 10) : 0;
		if (ok && (errno != 0 || want == LLONG_MIN))
			ok = 0;
		if ((rc == 0) != ok || (ok && got != want)) {
			if (bad++ == 0)
				printf("  kt_val_int(%s): rc %d, %lld\n", text, rc,
				    (long long)got);
		}
	}
	CHECK(bad == 0);
}

/*
 * A [memory] instant's five args are scanner fields (KT_F_MBYTES and the
 * rest) where kt_event_find finds them (in args itself, not deeper), and
 * kt_memory_add reads the same table from them as from its walk of args
 * (the fields unknown, as in a record's view).  The expected cells are
 * worked by hand from the events: cuda:0 peaks at 1024 at 10 us and ends
 * at 512; cuda:1 has no Total Allocated, so it is the sum of Bytes, 8 +
 * 24 (the nested Bytes of the first instant is not counted).
 */
static void
test_memory_fields(void)
{
#define MEMEV(ts, args) "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", " \
	"\"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, " \
	"\"ts\": " ts ", \"args\": {" args "}}"
	static const char *const evs[] = {
		"{\"ph\": \"X\", \"name\": \"ProfilerStep#3\", \"cat\": "
		    "\"user_annotation\", \"pid\": 1, \"tid\": 1, \"ts\": 0, "
		    "\"dur\": 100}",
		MEMEV("10", "\"Total Reserved\": 4096, \"Total Allocated\": "
		    "1024, \"Bytes\": 1024, \"Addr\": 77, \"Device Id\": 0, "
		    "\"Device Type\": 1, \"nested\": {\"Bytes\": 9}"),
		MEMEV("20", "\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": "
		    "-512, \"Total Allocated\": 512, \"Total Reserved\": 4096"),
		MEMEV("30", "\"Device Type\": 0, \"Device Id\": -1, \"Bytes\": "
		    "\"64\", \"Total Allocated\": 64"),
		MEMEV("40", "\"Device Type\": 1, \"Device Id\": 1, \"Bytes\": 8"),
		MEMEV("50", "\"Bytes\":24,\"Device Id\":1,\"Device Type\":1"),
	};
#undef MEMEV
	static const char *const keys[] = { "Bytes", "Total Allocated",
	    "Total Reserved", "Device Type", "Device Id" };
	static const enum kt_field fields[] = { KT_F_MBYTES, KT_F_MALLOC,
	    KT_F_MRESV, KT_F_DEVTYPE, KT_F_DEVID };
	struct kt_memory *mem[2];
	struct kt_table *t[2];
	struct kt_event ev;
	struct kt_val a;
	size_t i, k, r, c;
	int same = 1, walk, found = 0;

	mem[0] = kt_memory_new();
	mem[1] = kt_memory_new();
	CHECK(mem[0] != NULL && mem[1] != NULL);
	if (mem[0] == NULL || mem[1] == NULL)
		return;
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		CHECK(kt_event_scan(evs[i], strlen(evs[i]), &ev, NULL) == 0);
		for (k = 0; k < 5; k++) {
			const struct kt_val *v = &ev.f[fields[k]];

			if (kt_event_find(&ev, &ev.f[KT_F_ARGS], keys[k], &a) ==
			    -1)
				a.type = KT_NONE;
			else
				found++;
			if (a.type != v->type || (a.type != KT_NONE &&
			    (a.off != v->off || a.len != v->len)))
				same = 0;
		}
		CHECK(kt_memory_add(mem[0], &ev) == 0);
		/* The walk: the five fields unknown. */
		for (k = 0; k < 5; k++) {
			memset(&ev.f[fields[k]], 0, sizeof(ev.f[0]));
			ev.known &= ~KT_FBIT(fields[k]);
		}
		CHECK(kt_memory_add(mem[1], &ev) == 0);
	}
	CHECK(same);
	CHECK(found == 5 + 5 + 4 + 3 + 3);
	CHECK(kt_memory_finish(mem[0], NULL, 0, -1, -1) == 0 &&
	    kt_memory_finish(mem[1], NULL, 0, -1, -1) == 0);
	t[0] = kt_memory_table(mem[0]);
	t[1] = kt_memory_table(mem[1]);
	CHECK(t[0] != NULL && t[1] != NULL);
	if (t[0] != NULL && t[1] != NULL) {
		CHECK(kt_table_rows(t[0]) == 3 && kt_table_rows(t[1]) == 3 &&
		    kt_table_ncols(t[0]) == kt_table_ncols(t[1]));
		for (walk = 0; walk < 2; walk++) {
			const struct kt_table *x = t[walk];
			int dev = kt_table_column(x, "device"),
			    peak = kt_table_column(x, "peak_allocated"),
			    at = kt_table_column(x, "peak_allocated_ns"),
			    fin = kt_table_column(x, "final_allocated"),
			    from = kt_table_column(x, "allocated_from");

			CHECK(dev >= 0 && peak >= 0 && at >= 0 && fin >= 0 &&
			    from >= 0);
			if (dev < 0 || peak < 0 || at < 0 || fin < 0 || from < 0)
				continue;
			for (r = 0; r < kt_table_rows(x); r++) {
				const char *d = kt_table_get(x, r, (size_t)dev);

				if (strcmp(d, "cuda:0") == 0)
					CHECK(strcmp(kt_table_get(x, r,
					    (size_t)peak), "1024") == 0 &&
					    strcmp(kt_table_get(x, r,
					    (size_t)at), "10000") == 0 &&
					    strcmp(kt_table_get(x, r,
					    (size_t)fin), "512") == 0);
				else if (strcmp(d, "cuda:1") == 0)
					CHECK(strcmp(kt_table_get(x, r,
					    (size_t)peak), "32") == 0 &&
					    strcmp(kt_table_get(x, r,
					    (size_t)from), "bytes-sum") == 0);
				else
					CHECK(strcmp(d, "cpu") == 0 &&
					    strcmp(kt_table_get(x, r,
					    (size_t)peak), "64") == 0);
			}
		}
		for (r = 0; r < kt_table_rows(t[0]) && r < kt_table_rows(t[1]);
		    r++)
			for (c = 0; c < kt_table_ncols(t[0]); c++)
				if (strcmp(kt_table_get(t[0], r, c),
				    kt_table_get(t[1], r, c)) != 0)
					same = 0;
		CHECK(same);
	}
	kt_table_free(t[0]);
	kt_table_free(t[1]);
	kt_memory_free(mem[0]);
	kt_memory_free(mem[1]);
}

/* Do two events have the same fields in mask, times, kind and ph? */
static int
same_fields(const struct kt_event *a, const struct kt_event *b,
    uint32_t mask)
{
	int f;

	for (f = 0; f < KT_NFIELDS; f++) {
		if (!(mask & KT_FBIT(f)))
			continue;
		if (a->f[f].type != b->f[f].type || (a->f[f].type != KT_NONE &&
		    (a->f[f].off != b->f[f].off ||
		    a->f[f].len != b->f[f].len))) {
			printf("  field %d: %u+%u type %u, want %u+%u type %u\n",
			    f, a->f[f].off, a->f[f].len, a->f[f].type,
			    b->f[f].off, b->f[f].len, b->f[f].type);
			return 0;
		}
	}
	return 1;
}

/*
 * Patch (op) event text with kt_patch_apply_event: the fields it locates
 * must be those a scan of the result finds, and ts, dur, kind and ph too.
 */
static int
patch_event_ok(const char *text, int op, uint32_t known)
{
	struct kt_event ev, pe, sc;
	struct kt_patch p;
	struct kt_buf b = KT_BUF_INIT;
	int rc = 0, ok;

	memset(&ev, 0, sizeof(ev));
	if (kt_event_scan(text, strlen(text), &ev, NULL) == -1)
		return 0;
	ev.index = 7;
	if (known != KT_FALL) {
		int f;

		for (f = 0; f < KT_NFIELDS; f++)
			if (!(known & KT_FBIT(f)))
				memset(&ev.f[f], 0, sizeof(ev.f[f]));
		ev.known = known;
	}
	kt_patch_init(&p, &ev);
	switch (op) {
	case 0:		/* rebase */
		rc = kt_patch_set(&p, KT_F_TS, "12.5", 4);
		break;
	case 1:		/* rank-tag, merging */
		rc = kt_patch_set(&p, KT_F_RANK, "3", 1) |
		    kt_patch_set(&p, KT_F_PID, "4001", 4) |
		    kt_patch_arg_add(&p, "kt_pid", "\"x\"", 3) |
		    (ev.f[KT_F_CORR].type != KT_NONE ?
		    kt_patch_set(&p, KT_F_CORR, "3000000000007", 13) : 0) |
		    kt_patch_set(&p, KT_F_TS, "1.001", 5);
		break;
	case 2:		/* compact-lanes: a lane */
		rc = kt_patch_set(&p, KT_F_TID, "1000000001", 10) |
		    kt_patch_arg_add(&p, "_compact_gpu_track",
		    "{\"pid\": 0, \"tid\": 7}", 20);
		break;
	case 3:		/* slice-window --clip */
		rc = kt_patch_set(&p, KT_F_TS, "2", 1) |
		    kt_patch_set(&p, KT_F_DUR, "0.5", 3) |
		    kt_patch_arg(&p, "kt_clip", "{\"ts\": 1}", 9);
		break;
	case 4:		/* remove args, set the name (a kind changes) */
		rc = kt_patch_remove(&p, KT_F_ARGS) |
		    kt_patch_set(&p, KT_F_CAT, "\"kernel\"", 8);
		break;
	case 5:		/* remove an arg field */
		rc = kt_patch_arg_remove(&p, "correlation");
		break;
	case 8:		/* remove a member of args that is no field */
		rc = kt_patch_arg_remove(&p, "z");
		break;
	case 6:		/* args made null, pid a string */
		rc = kt_patch_set(&p, KT_F_ARGS, "null", 4) |
		    kt_patch_set(&p, KT_F_PID, "\"p\"", 3);
		break;
	case 7:		/* a field added, one removed at the top */
		rc = kt_patch_set(&p, KT_F_ID, "5", 1) |
		    kt_patch_remove(&p, KT_F_CAT);
		break;
	}
	ok = rc == 0 && kt_patch_apply_event(&p, &b, &pe) == 0;
	memset(&sc, 0, sizeof(sc));
	ok = ok && kt_event_scan(b.p, b.n, &sc, NULL) == 0;
	ok = ok && pe.raw == b.p && pe.len == b.n && pe.index == 7;
	/* The fields known before and the fields patched are located. */
	ok = ok && same_fields(&pe, &sc, pe.known);
	ok = ok && (pe.flags & (KT_EV_TS | KT_EV_DUR)) ==
	    (sc.flags & (KT_EV_TS | KT_EV_DUR)) && pe.ts == sc.ts &&
	    (!(sc.flags & KT_EV_DUR) || pe.dur == sc.dur);
	ok = ok && (known != KT_FALL || (pe.kind == sc.kind &&
	    pe.ph == sc.ph && pe.ts_decimals == sc.ts_decimals));
	if (!ok)
		printf("  op %d on %s: %.*s\n", op, text, (int)b.n,
		    b.p ? b.p : "");
	kt_patch_free(&p);
	kt_buf_free(&b);
	return ok;
}

static void
test_patch_event(void)
{
	static const char *const evs[] = {
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
		    "\"pid\": 0, \"tid\": 7, \"ts\": 1.5, \"dur\": 2, "
		    "\"args\": {\"External id\": 3, \"correlation\": 9, "
		    "\"stream\": 7, \"z\": [1, {\"a\": 2}], \"device\": 0}}",
		"{\"name\": \"n\", \"ph\": \"X\", \"ts\": 10.1234, "
		    "\"pid\": \"Spans\", \"tid\": \"t\", \"dur\": 1, "
		    "\"cat\": \"cpu_op\"}",
		"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,"
		    "\"tid\":2,\"ts\":5,\"args\":null}",
		"{ \"args\" : {  } , \"ph\" : \"C\" , \"name\" : \"c\" , "
		    "\"pid\" : 3 , \"tid\" : 0 , \"ts\" : 4 }",
		"{\"ph\": \"f\", \"bp\": \"e\", \"id\": 9, \"cat\": \"ac2g\", "
		    "\"name\": \"ac2g\", \"pid\": 0, \"tid\": 7, \"ts\": 1.5, "
		    "\"args\": {\"z\": 1, \"correlation\": 9}}",
	};
	size_t i;
	int op;

	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		for (op = 0; op < 9; op++) {
			/* Some ops need a member that is not there. */
			if ((op == 8 && strstr(evs[i], "\"z\"") == NULL) ||
			    (op == 5 && strstr(evs[i], "correlation") == NULL) ||
			    (op == 4 && strstr(evs[i], "args") == NULL) ||
			    (op == 7 && strstr(evs[i], "\"cat\"") == NULL) ||
			    (op == 7 && strstr(evs[i], "\"id\"") != NULL))
				continue;
			CHECK(patch_event_ok(evs[i], op, KT_FALL));
			/*
			 * A view that knows only some fields, patched in
			 * those (as the filters do).
			 */
			if (op == 0 || op == 2 || op == 6 || op == 8)
				CHECK(patch_event_ok(evs[i], op,
				    KT_FBIT(KT_F_PID) | KT_FBIT(KT_F_TID) |
				    KT_FBIT(KT_F_ARGS) | KT_FBIT(KT_F_TS)));
		}
}

/* Key of a record for test_store: its ts, metadata first. */
static uint64_t
store_key(const struct kt_rec *r, void *ctx)
{
	(void)ctx;
	return r->ph == 'M' ? 0 : (uint64_t)r->ts + 1;
}

/* Keep the records of odd row number. */
static int
store_odd(const struct kt_rec *r, void *ctx)
{
	(void)ctx;
	return (r->index & 1) != 0;
}

static void
test_store(void)
{
	struct kt_store *s, *d;
	struct kt_event ev, v, w;
	struct kt_error err;
	struct kt_rec *r;
	uint32_t *order;
	char text[160];
	size_t i, n;
	int ok = 1, sorted = 1;
	uint32_t mask = KT_FBIT(KT_F_PID) | KT_FBIT(KT_F_TID) |
	    KT_FBIT(KT_F_ARGS) | KT_FBIT(KT_F_TS);

	CHECK((s = kt_store_new(KT_STORE_THREADS, mask, NULL)) != NULL);
	if (s == NULL)
		return;
	/* 3000 events of 3 threads, times going down and up, each of its
	 * own text (the store's arena holds copies). */
	for (i = 0; i < 3000; i++) {
		int k = snprintf(text, sizeof(text), "{\"ph\": \"%s\", \"pid\": "
		    "%d, \"tid\": \"t%d\", \"ts\": %d.5, \"args\": {\"i\": %d}}",
		    i % 100 == 0 ? "M" : "X", (int)(i % 3), (int)(i % 3),
		    (int)((i * 7919) % 1000), (int)i);

		memset(&ev, 0, sizeof(ev));
		if (kt_event_scan(text, (size_t)k, &ev, NULL) == -1)
			ok = 0;
		ev.index = i;
		if ((r = kt_store_add(s, NULL, &ev, &err)) == NULL)
			ok = 0;
		else
			r->tag = (uint8_t)(i & 0xff);
	}
	CHECK(ok && kt_store_count(s) == 3000);
	CHECK(kt_intern_count(kt_store_threads(s)) == 3);
	/* A view is the scanned event's fields kept, without a scan. */
	for (i = 0, ok = 1; i < 3000; i += 37) {
		kt_store_view(s, i, &v);
		CHECK(kt_store_event(s, i, &w, &err) == 0);
		ok = ok && v.known == mask && same_fields(&v, &w, mask) &&
		    v.ts == w.ts && v.index == i && w.index == i &&
		    v.ts_decimals == 1 && v.kind == w.kind && v.ph == w.ph &&
		    v.len == w.len && memcmp(v.raw, w.raw, v.len) == 0;
	}
	CHECK(ok);
	/* Ordered stably: by key, equal keys in their first order. */
	CHECK((order = kt_store_order(s, store_key, NULL)) != NULL);
	r = kt_store_recs(s, &n);
	for (i = 1; order != NULL && i < n; i++) {
		const struct kt_rec *x = &r[order[i - 1]], *y = &r[order[i]];

		if (store_key(x, NULL) > store_key(y, NULL) ||
		    (store_key(x, NULL) == store_key(y, NULL) &&
		    x->index > y->index))
			sorted = 0;
	}
	CHECK(sorted && n == 3000);
	free(order);
	/* The records stayed, their tags with them. */
	for (i = 0, ok = 1; i < n; i++)
		ok = ok && r[i].index == i && r[i].tag == (uint8_t)(i & 0xff);
	CHECK(ok);
	/* Copied into another store that keeps fewer fields. */
	CHECK((d = kt_store_new(0, KT_FBIT(KT_F_TS), NULL)) != NULL);
	for (i = 0; d != NULL && i < n; i++)
		if (kt_store_copy(d, s, i, &err) == NULL)
			ok = 0;
	CHECK(ok && d != NULL && kt_store_count(d) == n);
	/* Removed: the first half, then the even rows; set: replaced. */
	kt_store_shift(s, 1500);
	kt_store_keep(s, store_odd, NULL);
	r = kt_store_recs(s, &n);
	for (i = 0, ok = 1; i < n; i++) {
		ok = ok && (r[i].index & 1) && kt_store_event(s, i, &w,
		    &err) == 0 && w.index == r[i].index;
		snprintf(text, sizeof(text), "\"i\": %llu}",
		    (unsigned long long)r[i].index);
		ok = ok && strstr(w.raw, text) != NULL;
	}
	CHECK(ok && n > 0 && n < 1500);
	memset(&ev, 0, sizeof(ev));
	CHECK(kt_event_scan("{\"ph\": \"X\", \"pid\": 9, \"tid\": 9, "
	    "\"ts\": 1}", 40, &ev, NULL) == 0);
	ev.index = 99;
	CHECK(kt_store_set(s, 0, NULL, &ev, &err) != NULL);
	kt_store_view(s, 0, &v);
	CHECK(v.index == 99 && v.len == 40 && memcmp(v.raw, "{\"ph\": \"X\"",
	    10) == 0 && v.f[KT_F_PID].type == KT_NUMBER);
	CHECK(kt_intern_count(kt_store_threads(s)) == 4);
	/* Records only. */
	kt_store_free(d);
	CHECK((d = kt_store_new(KT_STORE_NOBYTES, 0, NULL)) != NULL);
	CHECK(d != NULL && (r = kt_store_add(d, NULL, &ev, &err)) != NULL &&
	    r->raw == NULL && r->ts == 1000);
	kt_store_free(d);
	kt_store_free(s);
}

/* A failed append sticks: nothing is added after it. */
static void
test_buf_sticky(void)
{
	struct kt_buf b = KT_BUF_INIT;

	CHECK(kt_buf_adds(&b, "ab") == 0 && b.err == 0);
	CHECK(kt_buf_reserve(&b, SIZE_MAX) == -1 && b.err == 1);
	CHECK(kt_buf_adds(&b, "cd") == -1 && b.n == 2);
	CHECK(kt_buf_addc(&b, 'e') == -1 && b.n == 2);
	kt_buf_clear(&b);
	CHECK(b.err == 0 && kt_buf_adds(&b, "x") == 0 && b.n == 1);
	kt_buf_free(&b);
}

/* The parsers of option text (lib/core/time.c), as lib/cli uses them. */
static void
test_options(void)
{
	long long v = 7;
	int64_t a = -1, b = -1, ns = -1;
	const char *bad = NULL;
	size_t nbad = 0;

	CHECK(kt_int_parse("42", 0, 100, &v) == 0 && v == 42);
	CHECK(kt_int_parse(" +3", 0, 100, &v) == 0 && v == 3);
	v = 7;
	CHECK(kt_int_parse("", 0, 100, &v) == -1 && v == 7);
	CHECK(kt_int_parse("101", 0, 100, &v) == -1 && v == 7);
	CHECK(kt_int_parse("3x", 0, 100, &v) == -1);
	CHECK(kt_int_parse("99999999999999999999", LLONG_MIN, LLONG_MAX,
	    &v) == -1);
	CHECK(kt_steps_parse("3", &a, &b, &bad, &nbad) == KT_STEPS_OK &&
	    a == 3 && b == 3);
	CHECK(kt_steps_parse("3-5", &a, &b, &bad, &nbad) == KT_STEPS_OK &&
	    a == 3 && b == 5);
	CHECK(kt_steps_parse("5-3", &a, &b, &bad, &nbad) == KT_STEPS_ORDER);
	CHECK(kt_steps_parse("-3", &a, &b, &bad, &nbad) == KT_STEPS_FORM);
	CHECK(kt_steps_parse("000000000000000000000000000000001-2", &a, &b,
	    &bad, &nbad) == KT_STEPS_FORM);
	CHECK(kt_steps_parse("x-5", &a, &b, &bad, &nbad) ==
	    KT_STEPS_NUMBER && nbad == 1 && *bad == 'x');
	CHECK(kt_steps_parse("1-2-3", &a, &b, &bad, &nbad) ==
	    KT_STEPS_NUMBER && nbad == 3 && strncmp(bad, "2-3", 3) == 0);
	CHECK(kt_steps_parse("2147483648", &a, &b, &bad, &nbad) ==
	    KT_STEPS_NUMBER && nbad == 10);
	{
		/* Rank lists, checked against a membership table. */
		struct kt_ranklist rl;
		static const char *const okl[] = { "0,7,63-64", "5",
		    "9-9,3,4-6,5", "2147483647,0" };
		static const char *const badl[] = { "", "1,", ",1", "1,,2",
		    "3-1", "x", "1,2-y", "-4", "2147483648",
		    "1,0000000000000000000000000000000000000000000000000000000000000000001" };
		static const int rcl[] = { KT_STEPS_FORM, KT_STEPS_FORM,
		    KT_STEPS_FORM, KT_STEPS_FORM, KT_STEPS_ORDER,
		    KT_STEPS_NUMBER, KT_STEPS_NUMBER, KT_STEPS_FORM,
		    KT_STEPS_NUMBER, KT_STEPS_FORM };
		size_t i;
		int64_t q;

		CHECK(kt_ranklist_parse(okl[0], &rl, &bad, &nbad) ==
		    KT_STEPS_OK && rl.n == 3);
		for (q = -1; q < 70; q++)
			CHECK(kt_ranklist_has(&rl, q) == (q == 0 || q == 7 ||
			    q == 63 || q == 64));
		kt_ranklist_free(&rl);
		CHECK(rl.n == 0 && !kt_ranklist_has(&rl, 0));
		CHECK(kt_ranklist_parse(okl[1], &rl, &bad, &nbad) ==
		    KT_STEPS_OK && rl.n == 1 && kt_ranklist_has(&rl, 5) &&
		    !kt_ranklist_has(&rl, 4) && !kt_ranklist_has(&rl, 6));
		kt_ranklist_free(&rl);
		/* Overlapping and adjacent items merge: 3-6 and 9. */
		CHECK(kt_ranklist_parse(okl[2], &rl, &bad, &nbad) ==
		    KT_STEPS_OK && rl.n == 2 && rl.r[0][0] == 3 &&
		    rl.r[0][1] == 6 && rl.r[1][0] == 9 && rl.r[1][1] == 9);
		kt_ranklist_free(&rl);
		CHECK(kt_ranklist_parse(okl[3], &rl, &bad, &nbad) ==
		    KT_STEPS_OK && rl.n == 2 && kt_ranklist_has(&rl, 0) &&
		    kt_ranklist_has(&rl, INT32_MAX) && !kt_ranklist_has(&rl, 1));
		kt_ranklist_free(&rl);
		for (i = 0; i < sizeof(badl) / sizeof(badl[0]); i++)
			CHECK(kt_ranklist_parse(badl[i], &rl, &bad, &nbad) ==
			    rcl[i] && rl.n == 0 && rl.r == NULL);
		/* The item named is the bad one, in the text given. */
		CHECK(kt_ranklist_parse("1,2-y", &rl, &bad, &nbad) ==
		    KT_STEPS_NUMBER && nbad == 1 && *bad == 'y');
		CHECK(kt_ranklist_parse("1,,2", &rl, &bad, &nbad) ==
		    KT_STEPS_FORM && nbad == 0 && bad[-1] == ',' && *bad == ',');
		CHECK(kt_ranklist_parse("0,9-3", &rl, &bad, &nbad) ==
		    KT_STEPS_ORDER && nbad == 3 && strncmp(bad, "9-3", 3) == 0);
	}
	CHECK(kt_duration_opt_parse("10us", &ns) == 0 && ns == 10000);
	CHECK(kt_duration_opt_parse("250", &ns) == 0 && ns == 250);
	CHECK(kt_duration_opt_parse("-1us", &ns) == -1);
	CHECK(kt_duration_opt_parse("10xs", &ns) == -1);
	CHECK(kt_gb_parse("79.5", &ns) == 0 && ns == 79500000000LL);
	CHECK(kt_gb_parse("0.000002", &ns) == 0 && ns == 2000);
	CHECK(kt_gb_parse("0", &ns) == -1 && kt_gb_parse("1.", &ns) == -1 &&
	    kt_gb_parse(".5", &ns) == -1 && kt_gb_parse("abc", &ns) == -1);
	{
		char why[160], deep[300];

		CHECK(kt_regex_check("nccl|all[-_]?reduce|(^|[^a-z_])x{2,5}",
		    why, sizeof(why)) == 0);
		CHECK(kt_regex_check("(a{10}){100}", why, sizeof(why)) == 0);
		CHECK(kt_regex_check("(a{100}){100}", why, sizeof(why)) == -1);
		CHECK(kt_regex_check("a++", why, sizeof(why)) == -1 &&
		    strstr(why, "repeats a repetition") != NULL);
		CHECK(kt_regex_check("a?+", why, sizeof(why)) == -1);
		CHECK(kt_regex_check("a{2}{3}", why, sizeof(why)) == -1);
		CHECK(kt_regex_check("(a*)+b\\*+c\\+*x", why, sizeof(why)) ==
		    0);
		CHECK(kt_regex_check("((((((((a+)+)+)+)+)+)+)+)+", why,
		    sizeof(why)) == 0);
		CHECK(kt_regex_check("((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+",
		    why, sizeof(why)) == -1 && strstr(why, "copies") != NULL);
		CHECK(kt_regex_check("(a)\\1", why, sizeof(why)) == -1 &&
		    strstr(why, "back-references") != NULL);
		CHECK(kt_regex_check("[\\1]\\.", why, sizeof(why)) == 0);
		CHECK(kt_regex_check("[[:alpha:]]+{3}", why, sizeof(why)) ==
		    -1);
		CHECK(kt_regex_check("x{3", why, sizeof(why)) == 0);
		/* glibc's "{,m}" is "{0,m}" (the rules fuzzer's OOM). */
		CHECK(kt_regex_check("D{,14028}3", why, sizeof(why)) == -1 &&
		    strstr(why, "copies") != NULL);
		CHECK(kt_regex_check("(a{,100}){,100}", why, sizeof(why)) ==
		    -1);
		CHECK(kt_regex_check("x{,30}y{,}", why, sizeof(why)) == 0);
		memset(deep, '(', sizeof(deep) - 1);
		deep[sizeof(deep) - 1] = '\0';
		CHECK(kt_regex_check(deep, why, sizeof(why)) == -1);
	}
}

/*
 * A reader's first buffer is small and becomes the full one once an
 * input fills it: events on both sides of that point, and one event
 * larger than the first buffer, all read whole, from a plain file and
 * from a pipe.
 */
static void
test_first_buffer(void)
{
	char path[] = "/tmp/kt-unit-XXXXXX";
	struct kt_buf t = KT_BUF_INIT;
	struct kt_error err;
	struct kt_source *s;
	struct kt_reader *r;
	struct kt_event ev;
	int fd, i, n, big, pass;
	FILE *f;

	kt_buf_adds(&t, "{\"traceEvents\": [");
	for (i = 0; i < 3000; i++) {
		char e[96];

		snprintf(e, sizeof(e), "%s{\"ph\": \"X\", \"ts\": %d, "
		    "\"dur\": 1, \"name\": \"e%d\"}", i ? ", " : "", i, i);
		kt_buf_adds(&t, e);
		if (i == 1500) {
			int k;

			kt_buf_adds(&t, ", {\"ph\": \"i\", \"ts\": 1, "
			    "\"name\": \"");
			for (k = 0; k < 100000; k++)
				kt_buf_addc(&t, 'a' + k % 26);
			kt_buf_adds(&t, "\"}");
		}
	}
	kt_buf_adds(&t, "], \"after\": 1}");
	CHECK(!t.err && t.n > 3 * 65536);
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		CHECK(!"mkstemp");
		kt_buf_free(&t);
		return;
	}
	fwrite(t.p, 1, t.n, f);
	fclose(f);
	for (pass = 0; pass < 2; pass++) {
		char cmd[128];
		FILE *p = NULL;

		if (pass == 0)
			s = kt_source_open(path, NULL, 0, &err);
		else {
			/* A pipe: no size known, 64 KiB a read at most. */
			snprintf(cmd, sizeof(cmd), "cat %s", path);
			if ((p = popen(cmd, "r")) == NULL) {
				CHECK(!"popen");
				break;
			}
			snprintf(cmd, sizeof(cmd), "/proc/self/fd/%d",
			    fileno(p));
			s = kt_source_open(cmd, NULL, KT_READ_SMALL, &err);
		}
		CHECK(s != NULL);
		if (s == NULL)
			break;
		CHECK(kt_source_next(s, &r, &err) == 1);
		n = big = 0;
		while (kt_reader_next(r, &ev, &err) == 1) {
			n++;
			if (ev.len > 100000)
				big++;
		}
		CHECK(n == 3001 && big == 1);
		CHECK(kt_reader_meta_find(r, "after") != NULL);
		kt_reader_free(r);
		kt_source_close(s);
		if (p != NULL)
			pclose(p);
	}
	unlink(path);
	kt_buf_free(&t);
}

/*
 * kt_reader_read: the bytes of a trace as they are, in any slices: of a
 * memory reader, and of a gzip file (decompressed), with a large text
 * that takes many reads of the source; a byte order mark, blanks and a
 * damage a repair would change come out unchanged.
 */
static void
test_reader_read(void)
{
	static const char t[] = "\xef\xbb\xbf {\"traceEvents\": [{\"ts\": 1,},]}\n";
	char path[] = "/tmp/kt-unit-XXXXXX", gz[64], got[64];
	struct kt_buf big = KT_BUF_INIT, back = KT_BUF_INIT;
	struct kt_error err;
	struct kt_reader *r;
	struct kt_source *s;
	struct kt_out *o;
	struct kt_event ev;
	size_t n = 0;
	int64_t k;
	int fd, i;

	CHECK((r = kt_reader_mem(t, sizeof(t) - 1, "t", 0)) != NULL);
	while ((k = kt_reader_read(r, got + n, n + 7 < sizeof(got) ?
	    7 : sizeof(got) - n, &err)) > 0)
		n += (size_t)k;
	CHECK(k == 0 && n == sizeof(t) - 1 && memcmp(got, t, n) == 0);
	CHECK(kt_reader_read(r, got, sizeof(got), &err) == 0);
	CHECK(kt_reader_offset(r) == sizeof(t) - 1);
	kt_reader_free(r);
	/* A reader that read nothing yet still has its events. */
	CHECK((r = kt_reader_mem(t, sizeof(t) - 1, "t", 0)) != NULL);
	CHECK(kt_reader_next(r, &ev, &err) == 1);
	kt_reader_free(r);

	if ((fd = mkstemp(path)) == -1) {
		CHECK(!"mkstemp");
		return;
	}
	close(fd);
	snprintf(gz, sizeof(gz), "%s.gz", path);
	kt_buf_adds(&big, "{\"traceEvents\": [");
	for (i = 0; i < 80000; i++) {
		char e[96];

		snprintf(e, sizeof(e), "%s{\"ph\": \"X\", \"ts\": %d, "
		    "\"dur\": 1, \"name\": \"k%d\"}", i ? ", " : "", i, i);
		kt_buf_adds(&big, e);
	}
	kt_buf_adds(&big, "]}");
	CHECK(!big.err && big.n > 3 << 20);
	CHECK((o = kt_out_open(gz, -1, &err)) != NULL);
	if (o == NULL) {
		unlink(path);
		kt_buf_free(&big);
		return;
	}
	CHECK(kt_out_write(o, big.p, big.n) == 0);
	CHECK(kt_out_commit(o, &err) == 0);
	CHECK((s = kt_source_open(gz, NULL, 0, &err)) != NULL);
	if (s != NULL) {
		CHECK(kt_source_next(s, &r, &err) == 1);
		for (;;) {
			if (kt_buf_reserve(&back, 100000) == -1)
				break;
			k = kt_reader_read(r, back.p + back.n, 100000, &err);
			if (k <= 0)
				break;
			back.n += (size_t)k;
		}
		CHECK(k == 0 && back.n == big.n &&
		    memcmp(back.p, big.p, big.n) == 0);
		kt_reader_free(r);
		CHECK(kt_source_next(s, &r, &err) == 0);
		kt_source_close(s);
	}
	unlink(gz);
	unlink(path);
	kt_buf_free(&big);
	kt_buf_free(&back);
}

/*
 * kt_json_minify against a byte-at-a-time reference: outside strings
 * drop white space; a string runs to its closing quote, a backslash
 * taking the byte after it.  Random texts of quotes, backslashes, white
 * space and others, long runs included.
 */
static size_t
minify_ref(const char *p, size_t n, char *out)
{
	size_t i = 0, k = 0;

	while (i < n) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
		    p[i] == '\r') {
			i++;
			continue;
		}
		if (p[i] != '"') {
			out[k++] = p[i++];
			continue;
		}
		out[k++] = p[i++];
		while (i < n && p[i] != '"') {
			if (p[i] == '\\' && i + 1 < n)
				out[k++] = p[i++];
			out[k++] = p[i++];
		}
		if (i < n)
			out[k++] = p[i++];
	}
	return k;
}

static void
test_minify(void)
{
	static const char alpha[] = "\"\\\\  \n\tab:,{}1";
	char in[300], want[300];
	struct kt_buf b = KT_BUF_INIT;
	unsigned seed = 14;
	int round, bad = 0;

	for (round = 0; round < 200000; round++) {
		size_t n, i, k;

		seed = seed * 1103515245u + 12345u;
		n = (seed >> 16) % (round % 16 == 0 ? 300 : 24);
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			in[i] = alpha[(seed >> 16) % (sizeof(alpha) - 1)];
		}
		k = minify_ref(in, n, want);
		b.n = 0;
		if (kt_json_minify(in, n, &b) == -1 || !bytes_eq(b.p, b.n, want, k))
			bad++;
	}
	CHECK(bad == 0);
	/*
	 * Long texts of long plain runs, strings and white space, so that
	 * the sixteen-byte path meets each at every offset of a block and
	 * near the end (fails with a run stored one byte short, a quote or
	 * an escape inside a block missed, or the tail left to the wrong
	 * state).
	 */
	for (round = 0; round < 100000; round++) {
		static const char *const piece[] = { "abcdefghijklmnopq",
			"xy", "\"", "\\", " ", "\n    ", ":", "1234567", "\t",
			"\"long string with spaces in it\"", "\\\"", "{" };
		size_t n = 0, k, pre;
		int np;

		seed = seed * 1103515245u + 12345u;
		np = (int)((seed >> 16) % 40);
		while (np-- > 0) {
			const char *pc;

			seed = seed * 1103515245u + 12345u;
			pc = piece[(seed >> 16) % (sizeof(piece) / sizeof(piece[0]))];
			k = strlen(pc);
			if (n + k > sizeof(in))
				break;
			memcpy(in + n, pc, k);
			n += k;
		}
		k = minify_ref(in, n, want);
		b.n = 0;
		seed = seed * 1103515245u + 12345u;
		/* Appended after what the buffer holds, as a row is. */
		pre = (seed >> 16) % 2 ? 3 : 0;
		kt_buf_add(&b, "pre", pre);
		if (kt_json_minify(in, n, &b) == -1 || b.n < pre ||
		    memcmp(b.p, "pre", pre) != 0 ||
		    !bytes_eq(b.p + pre, b.n - pre, want, k))
			bad++;
	}
	CHECK(bad == 0);
	kt_buf_free(&b);
}

/*
 * Each way of kt_json_minify called directly (lib/core/ktint.h), so that
 * every one is tested whatever the CPU would choose: the byte loop, SSE2
 * SSSE3 and AVX-512 (where the CPU has them).  Each text is copied to a buffer of
 * its exact size and written to one of n + 16 bytes, so that under ASan
 * a read past the text or a write past the room is an error.
 */
typedef size_t (*minify_fn)(const char *, size_t, char *);

/* One text through f against the oracle: 1 when the bytes agree. */
static int
minify_agrees(minify_fn f, const char *text, size_t n)
{
	char *in = malloc(n ? n : 1), *out = malloc(n + 16);
	char *want = malloc(n ? n : 1);
	size_t k, got;
	int ok;

	if (in == NULL || out == NULL || want == NULL) {
		free(in);
		free(out);
		free(want);
		return 0;
	}
	if (n > 0)
		memcpy(in, text, n);
	k = minify_ref(in, n, want);
	got = f(in, n, out);
	ok = bytes_eq(out, got, want, k);
	free(in);
	free(out);
	free(want);
	return ok;
}

static void
test_minify_paths(void)
{
	static const char alpha[] = "\"\\\\  \n\tab:,{}1";
	static const char plain[] = "\"  \n\tab:,{}1";
	static const char *const piece[] = { "abcdefghijklmnopq", "xy",
		"\"", "\\", " ", "\n    ", ":", "1234567", "\t",
		"\"long string with spaces in it\"", "\\\"", "{", "\r\n  " };
	struct {
		const char *name;
		minify_fn f;
	} way[4];
	char text[600];
	uint64_t x = 0x5eed14;
	int nw = 0, w;

	way[nw].name = "scalar";
	way[nw++].f = kt_minify_scalar;
#ifdef __SSE2__
	way[nw].name = "sse2";
	way[nw++].f = kt_minify_sse2;
#endif
#ifdef KT_MINIFY_SSSE3
	if (kt_minify_have_ssse3()) {
		way[nw].name = "ssse3";
		way[nw++].f = kt_minify_ssse3;
	}
#endif
#ifdef KT_MINIFY_AVX512
	if (kt_minify_have_avx512()) {
		way[nw].name = "avx512";
		way[nw++].f = kt_minify_avx512;
	}
#endif
	for (w = 0; w < nw; w++) {
		size_t n, i, j;
		int round, bad = 0;

		/*
		 * Every length 0 to 200 of random bytes from a small alphabet
		 * thick with quotes, backslashes and white space, every other
		 * text without the backslashes (so that whole blocks of 16
		 * and of 64 bytes take the way without one): catches a text
		 * under a block or a last partial block handled wrongly (the
		 * bytes already done kept twice or lost, a byte written past
		 * the room), and a string's state lost between blocks.
		 */
		for (round = 0; round < 40000; round++) {
			const char *al = round % 2 ? plain : alpha;
			size_t nal = strlen(al);

			n = (size_t)(round / 2) % 201;
			for (i = 0; i < n; i++)
				text[i] = al[xorshift(&x) % nal];
			if (!minify_agrees(way[w].f, text, n))
				bad++;
		}
		/*
		 * Texts of pieces (plain runs, strings with spaces, escapes,
		 * indentation) up to 600 bytes, then every suffix and prefix
		 * of one of them, so that each piece meets each offset of a
		 * block: catches a wrong keep8 entry or count (a byte moved
		 * to the wrong place, a run one byte short), white space
		 * dropped inside a string (the running XOR of quotes wrong or
		 * not carried), and an escaped quote at a block's end or start
		 * taken as a string's end.
		 */
		for (round = 0; round < 20000; round++) {
			int np = (int)(xorshift(&x) % 60);

			n = 0;
			while (np-- > 0) {
				const char *pc = piece[xorshift(&x) %
				    (sizeof(piece) / sizeof(piece[0]))];
				size_t k = strlen(pc);

				if (n + k > sizeof(text))
					break;
				memcpy(text + n, pc, k);
				n += k;
			}
			if (!minify_agrees(way[w].f, text, n))
				bad++;
			if (round % 200 == 0)
				for (i = 0; i < n && i < 40; i++)
					if (!minify_agrees(way[w].f, text + i,
					    n - i) || !minify_agrees(way[w].f,
					    text, n - i))
						bad++;
		}
		/*
		 * A backslash and a quote across each place of a block, inside
		 * a string: "aaaa...\"  b" with the escape at every offset
		 * (catches an escape pending at a block's end forgotten, so
		 * the escaped quote closes the string and its spaces go).
		 */
		for (j = 1; j < 140; j++) {
			n = 0;
			text[n++] = '"';
			for (i = 0; i < j; i++)
				text[n++] = 'a';
			memcpy(text + n, "\\\"  b  \"  c ", 12);
			n += 12;
			for (i = 0; i < 20; i++)
				text[n++] = i % 3 ? 'd' : ' ';
			if (!minify_agrees(way[w].f, text, n))
				bad++;
		}
		if (bad != 0)
			printf("minify %s: %d texts differ\n", way[w].name, bad);
		CHECK(bad == 0);
	}
}

/* The oracle's column: a string's contents, a number, else minified. */
static void
tsv_col_ref(struct kt_buf *b, const struct kt_event *ev, enum kt_field f)
{
	const struct kt_val *v = &ev->f[f];
	char *tmp;

	if (v->type == KT_STRING)
		kt_buf_add(b, ev->raw + v->off + 1, v->len - 2);
	else if (v->type == KT_NUMBER)
		kt_buf_add(b, ev->raw + v->off, v->len);
	else if (v->type != KT_NONE && (tmp = malloc(v->len + 1)) != NULL) {
		kt_buf_add(b, tmp, minify_ref(ev->raw + v->off, v->len, tmp));
		free(tmp);
	}
	kt_buf_addc(b, '\t');
}

/*
 * The writer's TSV event rows (rendered in one pass into the output's
 * buffer, or through a line when too long for it) against rows made
 * cell by cell here: random events with each column a string, a number,
 * an array or absent, names with escapes, white space everywhere, and
 * one event of 1.5 MB; 3000 rows, so that rows meet the output buffer's
 * end.  Fails with a row's room too small (a crash under ASan), a cell
 * copied with its quotes or cut, rel_ns put in the wrong place, or a
 * row lost where the buffer is flushed.
 */
static void
test_tsv_rows_oracle(void)
{
	struct kt_buf text = KT_BUF_INIT, want = KT_BUF_INIT,
	    got = KT_BUF_INIT;
	char path[] = "/tmp/kt-unit-rows.XXXXXX", buf[65536], *tmp;
	static const char *const val[] = { "7", "\"s 7\"", "[1, 2]", NULL };
	struct kt_reader *r;
	struct kt_writer *w = NULL;
	struct kt_error err;
	struct kt_event ev;
	struct kt_out *o = NULL;
	uint64_t x = 0x7357;
	size_t nm, k, line;
	FILE *f;
	int i, fd, rc = 0;

	kt_buf_adds(&text, "{\"traceEvents\": [\n");
	for (i = 0; i < 3000; i++) {
		const char *pid = val[xorshift(&x) % 4];
		const char *tid = val[xorshift(&x) % 4];

		kt_buf_printf(&text, "%s{ \"ph\" : \"%s\"", i ? ",\n " : "",
		    xorshift(&x) % 2 ? "X" : "i");
		if (pid != NULL)
			kt_buf_printf(&text, ",\n  \"pid\": %s", pid);
		if (tid != NULL)
			kt_buf_printf(&text, ", \"tid\":%s", tid);
		if (xorshift(&x) % 3)
			kt_buf_adds(&text, ",\t\"cat\": \"kernel\"");
		if (xorshift(&x) % 4)
			kt_buf_printf(&text, ", \"name\": \"n \\\"%d\\\"  x\"", i);
		if (xorshift(&x) % 5)
			kt_buf_printf(&text, ", \"ts\": %d.%03d", 5000 + i,
			    (int)(xorshift(&x) % 1000));
		if (xorshift(&x) % 2)
			kt_buf_printf(&text, ", \"dur\": %d", (int)(xorshift(&x) %
			    100000));
		kt_buf_adds(&text, ", \"args\": {\"a\": [ 1 ,\n 2 ], \"b\": \"x  y\"");
		if (i == 1500) {
			kt_buf_adds(&text, ", \"big\": \"");
			for (k = 0; k < (3 << 19) / 32; k++)
				kt_buf_adds(&text, "0123456789abcdef  0123456789 ab ");
			kt_buf_adds(&text, "\"");
		}
		kt_buf_adds(&text, " } }");
	}
	kt_buf_adds(&text, "\n]}\n");
	CHECK(!text.err);
	/* The rows the writer should write, from the events read. */
	r = kt_reader_mem(text.p, text.n, "t.json", 0);
	while (r != NULL && kt_reader_next(r, &ev, &err) == 1) {
		char num[32];

		kt_buf_printf(&want, "%s:%llu\t%s\t", kt_kind_name(ev.kind),
		    (unsigned long long)ev.index, kt_kind_name(ev.kind));
		tsv_col_ref(&want, &ev, KT_F_PH);
		if (ev.flags & KT_EV_TS)
			kt_buf_add(&want, num, kt_int_format(ev.ts - 4000000,
			    num));
		kt_buf_addc(&want, '\t');
		if (ev.flags & KT_EV_DUR)
			kt_buf_add(&want, num, kt_int_format(ev.dur, num));
		kt_buf_addc(&want, '\t');
		tsv_col_ref(&want, &ev, KT_F_PID);
		tsv_col_ref(&want, &ev, KT_F_TID);
		tsv_col_ref(&want, &ev, KT_F_CAT);
		tsv_col_ref(&want, &ev, KT_F_NAME);
		if ((tmp = malloc(ev.len)) != NULL) {
			kt_buf_add(&want, tmp, minify_ref(ev.raw, ev.len, tmp));
			free(tmp);
		}
		kt_buf_addc(&want, '\n');
	}
	kt_reader_free(r);
	/* The writer's, from a second reading, its lines but the first two. */
	r = kt_reader_mem(text.p, text.n, "t.json", 0);
	fd = mkstemp(path);
	if (fd != -1)
		close(fd);
	if (r == NULL || fd == -1 || (o = kt_out_open(path, -1, &err)) ==
	    NULL || (w = kt_writer_new(o, KT_WRITE_TSV)) == NULL)
		rc = -1;
	if (rc == 0) {
		/* nm set before it is passed (argument order is unspecified). */
		const struct kt_meta *m = kt_reader_metas(r, &nm);

		kt_writer_origin(w, 4000000);
		rc = kt_writer_begin(w, m, nm, NULL, 0);
	}
	while (rc == 0 && (rc = kt_reader_next(r, &ev, &err)) == 1)
		rc = kt_writer_event(w, &ev);
	if (rc == 0 && (kt_writer_end(w, kt_reader_metas(r, &nm), nm) ==
	    -1 || kt_out_commit(o, &err) == -1))
		rc = -1;
	else if (rc != 0 && o != NULL)
		kt_out_abort(o);
	kt_writer_free(w);
	kt_reader_free(r);
	if (rc == 0 && (f = fopen(path, "r")) != NULL) {
		while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
			kt_buf_add(&got, buf, k);
		fclose(f);
	}
	if (fd != -1)
		unlink(path);
	CHECK(rc == 0 && !want.err && !got.err);
	/* Leave out the header and trace rows, and the end row. */
	for (k = 0, line = 0; k < got.n && line < 2; k++)
		if (got.p[k] == '\n')
			line++;
	CHECK(want.n > 0 && got.n >= k + want.n &&
	    memcmp(got.p + k, want.p, want.n) == 0 &&
	    strncmp(got.p + k + want.n, "end:3000\t", 9) == 0);
	kt_buf_free(&text);
	kt_buf_free(&want);
	kt_buf_free(&got);
}

/*
 * kt_regex_literals against regexec itself (REG_ICASE, as the bucket
 * rules are compiled): whenever a pattern matches a text, the lowercased
 * text holds one of the pattern's literals.  Texts: the pattern's own
 * words and pieces with their case flipped and other bytes around, and
 * random texts over the pattern's characters.  Then the bucket rules
 * with the test (kt_rules_match) against the same rules without it
 * (kt_rules_explain: every rule given to regexec) on kernel names.
 */
static void
test_regex_literals(void)
{
	static const char *const pats[] = {
		"^mem(cpy|set)( |$)",
		"nccl|rccl|all[-_]?reduce|reduce[-_]?scatter|send_?recv|"
		    "(^|[^a-z_])(dispatch|combine)(_?kernel|$)",
		"^triton_(red|per)_.*((layer|rms|group|batch)_?norm|"
		    "mean.*rsqrt|rsqrt.*var_mean)",
		"(^|[^b])gemm|gemv|bmm|conv(olution|_?[123]d|_fwd)|^fc([-_]|$)",
		"reduce|softmax|(^|_)(sum|dot)(_|$)|(max|avg|average)_?pool",
		"(^|::|_)(add|sub|log2?|exp|eq|ne)([-_.]|$)",
		"a+b|xy+z|ab*cd|p(qr)?st|u(vw)+x|k\\.l|mm\\wnn|[ab]cd|eef{2}gg",
		"^aten::(mm|bmm|addmm|_scaled_mm)$|flash_?attn",
		"ABC|De(F|gh)|(IJ)+", "xyz.w|(a|)bcd|(ab|cd)*ef|gh{1,3}ij"
	};
	static const char *const names[] = {
		("void at::native::vectorized_elementwise_kernel<4, "
		    "at::native::CUDAFunctor_add<float>>(int, float)"),
		"ampere_sgemm_128x64_tn", "sm90_xmma_gemm_bf16bf16_bf16f32",
		"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
		"Memcpy HtoD (Pageable -> Device)", "Memset (Device)",
		"triton_red_fused_native_layer_norm_0", "triton_poi_fused_add_1",
		"triton_per_fused_mean_rsqrt_2", "triton_tem_fused_mm_3",
		"void flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Params)",
		"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm>(Params)",
		"void at::native::reduce_kernel<512, 1>(ReduceOp)",
		"cunn_SoftMaxForward", "fc_1", "FC-2", "conv2d_fwd", "some_kernel",
		"_Z20add_rmsnorm_kernelPf", "EXP_", "log2.x", "x::NE", "sum", "dot_",
		"MEMCPY", "memsetx", "rccl_all_gather", "dispatch_kernel",
		"xdispatch", "a::combine", "max_pool2d", "AVERAGEPOOL", ""
	};
	const char alpha[] = "abcdefgknmpqrstuvwxyz_-.:12 ABCEFGMNRSTX";
	struct kt_buf lits = KT_BUF_INIT, low = KT_BUF_INIT;
	struct kt_rules *rs;
	unsigned seed = 7;
	size_t i, k, bad = 0, tried = 0, skipped = 0;

	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		regex_t re;
		int have;

		CHECK(regcomp(&re, pats[i], REG_EXTENDED | REG_ICASE |
		    REG_NOSUB) == 0);
		have = kt_regex_literals(pats[i], &lits) == 0;
		if (!have) {
			skipped++;
			regfree(&re);
			continue;
		}
		for (k = 0; k < 40000; k++) {
			char t[40];
			size_t n = 0, m, j;

			/* Half the texts: a piece of the pattern. */
			if (k % 2 == 0) {
				size_t pl = strlen(pats[i]);
				size_t a = (size_t)rand_r(&seed) % pl;
				size_t l = 1 + (size_t)rand_r(&seed) % 12;

				if (rand_r(&seed) % 3 == 0)
					t[n++] = alpha[rand_r(&seed) % (sizeof(alpha) - 1)];
				for (j = a; j < pl && j < a + l && n < 30; j++)
					t[n++] = pats[i][j];
			}
			m = (size_t)rand_r(&seed) % 8;
			for (j = 0; j < m && n < 38; j++)
				t[n++] = alpha[rand_r(&seed) % (sizeof(alpha) - 1)];
			t[n] = '\0';
			for (j = 0; j < n; j++)
				if (rand_r(&seed) % 4 == 0 && t[j] >= 'a' && t[j] <= 'z')
					t[j] = (char)(t[j] - 32);
			if (regexec(&re, t, 0, NULL, 0) != 0)
				continue;
			tried++;
			low.n = 0;
			for (j = 0; j <= n; j++)
				kt_buf_addc(&low, t[j] >= 'A' && t[j] <= 'Z' ?
				    (char)(t[j] + 32) : t[j]);
			if (!kt_regex_literals_in(lits.p, low.p)) {
				if (bad++ < 3)
					fprintf(stderr, "literals of /%s/ miss "
					    "'%s'\n", pats[i], t);
			}
		}
		regfree(&re);
	}
	CHECK(bad == 0);
	CHECK(tried > 1000);	/* the texts do match */
	CHECK(skipped == 0);	/* every pattern has literals */
	/* The literals themselves, on a few: rarer wins, case folded. */
	CHECK(kt_regex_literals("^mem(cpy|set)( |$)", &lits) == 0 &&
	    strcmp(lits.p, "mem") == 0 && lits.p[4] == '\0');
	CHECK(kt_regex_literals("ABC|De(F|gh)", &lits) == 0 &&
	    strcmp(lits.p, "abc") == 0 && strcmp(lits.p + 4, "de") == 0);
	CHECK(kt_regex_literals("(^|_)(sum|dot)(_|$)", &lits) == 0 &&
	    strcmp(lits.p, "sum") == 0 && strcmp(lits.p + 4, "dot") == 0);
	CHECK(kt_regex_literals("ab*c", &lits) == -1 && lits.n == 0);
	CHECK(kt_regex_literals("x(ab)?y", &lits) == -1);
	CHECK(kt_regex_literals("[abc]d|efg", &lits) == -1);

	/* The rules with and without the test agree. */
	CHECK((rs = kt_rules_new(1)) != NULL);
	for (i = 0; rs != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
		struct kt_buf ex = KT_BUF_INIT;
		uint32_t a = kt_rules_match(rs, KT_KERNEL, names[i]);
		uint32_t b = kt_rules_explain(rs, KT_KERNEL, names[i], &ex);

		if (a != b)
			fprintf(stderr, "rules: '%s': %u with literals, %u "
			    "without\n", names[i], a, b);
		CHECK(a == b);
		kt_buf_free(&ex);
	}
	kt_rules_free(rs);
	kt_buf_free(&lits);
	kt_buf_free(&low);
}

/*
 * kt_scan_lines against a byte loop: random buffers of every length up
 * to 300 bytes and some of 5000 to 70,000 (past 255 blocks of 16, where
 * the byte lanes are summed), newlines from none to every byte, at every
 * start offset mod 16.
 */
static void
test_scan_lines(void)
{
	static char buf[70016];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t n, i, k, want, wafter, after, got;
	int bad = 0, t;

	for (t = 0; t < 4000; t++) {
		size_t off = (size_t)t % 16;
		unsigned dens = (unsigned)(xorshift(&x) % 5);

		n = t < 3000 ? (size_t)t % 301 : 5000 + (size_t)(xorshift(&x) %
		    65000);
		for (i = 0; i < n; i++) {
			uint64_t r = xorshift(&x);

			buf[off + i] = dens == 0 ? 'a' : dens == 4 ? '\n' :
			    r % (dens == 1 ? 200 : dens == 2 ? 16 : 2) == 0 ?
			    '\n' : (char)(r >> 8 | 1);
			if (buf[off + i] == '\n' && dens == 0)
				buf[off + i] = 'b';
		}
		want = 0;
		wafter = (size_t)-1;
		for (k = 0; k < n; k++)
			if (buf[off + k] == '\n') {
				want++;
				wafter = k + 1;
			}
		got = kt_scan_lines(buf + off, n, &after);
		if (got != want || after != wafter)
			bad++;
	}
	CHECK(bad == 0);
	/* All newlines, 70,000 of them: each lane's count wraps at 256. */
	memset(buf, '\n', 70000);
	CHECK(kt_scan_lines(buf, 70000, &after) == 70000 && after == 70000);
	CHECK(kt_scan_lines(buf, 0, &after) == 0 && after == (size_t)-1);
}

/*
 * kt_reader_size_hint: a plain file's size; a gzip file's inflated size
 * from its trailer (written here by zlib, not kt), between 4 and 64
 * times the file; the trailer made too large or too small is clamped.
 */
static uint64_t
hint_of(const char *path)
{
	struct kt_error err;
	struct kt_source *s;
	struct kt_reader *r;
	uint64_t h = (uint64_t)-1;

	if ((s = kt_source_open(path, NULL, 0, &err)) == NULL)
		return h;
	if (kt_source_next(s, &r, &err) == 1) {
		h = kt_reader_size_hint(r);
		kt_reader_free(r);
	}
	kt_source_close(s);
	return h;
}

static void
test_size_hint(void)
{
	char path[] = "/tmp/kt-unit-hint-XXXXXX", gz[64];
	struct kt_buf b = KT_BUF_INIT;
	struct stat st;
	uint64_t x = 88172645463325252ULL, fz = 0;
	unsigned char t[4];
	gzFile g;
	int fd = mkstemp(path), i;
	FILE *f;

	if (fd == -1) {
		CHECK(!"setup");
		return;
	}
	close(fd);
	kt_buf_adds(&b, "{\"traceEvents\": [\n");
	for (i = 0; i < 20000; i++)
		kt_buf_printf(&b, "%s{\"ph\": \"X\", \"name\": \"k%llu\", "
		    "\"pid\": 1, \"tid\": 2, \"ts\": %d, \"dur\": %llu}", i ?
		    ",\n" : "", (unsigned long long)(xorshift(&x) % 1000),
		    i * 10, (unsigned long long)(xorshift(&x) % 100000));
	kt_buf_adds(&b, "\n]}\n");
	if ((f = fopen(path, "wb")) != NULL) {
		fwrite(b.p, 1, b.n, f);
		fclose(f);
	}
	CHECK(hint_of(path) == b.n);
	snprintf(gz, sizeof(gz), "%s.gz", path);
	if ((g = gzopen(gz, "wb6")) != NULL) {
		gzwrite(g, b.p, (unsigned)b.n);
		gzclose(g);
	}
	if (stat(gz, &st) == 0)
		fz = (uint64_t)st.st_size;
	/* The text compresses 4-64 times, so the trailer's length holds. */
	CHECK(fz > 0 && b.n > 4 * fz && b.n < 64 * fz);
	CHECK(hint_of(gz) == b.n);
	/* A trailer's length past 64 times the file, then under 4 times. */
	memset(t, 0xff, 4);
	fd = open(gz, O_WRONLY);
	CHECK(fd != -1 && pwrite(fd, t, 4, (off_t)fz - 4) == 4);
	CHECK(hint_of(gz) == 64 * fz);
	memset(t, 0, 4);
	CHECK(fd != -1 && pwrite(fd, t, 4, (off_t)fz - 4) == 4);
	CHECK(hint_of(gz) == 4 * fz);
	if (fd != -1)
		close(fd);
	unlink(gz);
	unlink(path);
	kt_buf_free(&b);
}

/*
 * ktSourceIndex rows as the reader keeps them: 4 bytes each while they
 * fit, all 8 once one does not; the events numbered by them (before
 * traceEvents), or by position and the rows handed over (after).
 */
static void
test_rows(void)
{
	static const char *const texts[] = {
		"{\"ktSourceIndex\": [5, 3, 9], \"traceEvents\": ["
		    "{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2},"
		    "{\"ph\":\"i\",\"ts\":3}]}",
		"{\"ktSourceIndex\": [5, 4294967296, 9], \"traceEvents\": ["
		    "{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2},"
		    "{\"ph\":\"i\",\"ts\":3}]}",
		"{\"traceEvents\": [{\"ph\":\"i\",\"ts\":1},"
		    "{\"ph\":\"i\",\"ts\":2},{\"ph\":\"i\",\"ts\":3}],"
		    "\"ktSourceIndex\": [5, 3, 9]}",
		"{\"ktSourceIndex\": [], \"traceEvents\": []}"
	};
	static const uint64_t want[][3] = {
		{ 5, 3, 9 }, { 5, 4294967296ULL, 9 }, { 5, 3, 9 }, { 0, 0, 0 }
	};
	size_t t, i;

	for (t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		struct kt_reader *r = kt_reader_mem(texts[t], strlen(texts[t]),
		    "rows.json", 0);
		struct kt_event ev;
		struct kt_error err;
		struct kt_rows rows;
		uint64_t idx[3] = { 0, 0, 0 };
		int applied = -1, have;

		for (i = 0; r != NULL && kt_reader_next(r, &ev, &err) == 1 &&
		    i < 3; i++)
			idx[i] = ev.index;
		have = r != NULL && kt_reader_rows(r, &rows, &applied);
		if (t == 3) {
			CHECK(r != NULL && !have && rows.n == 0);
			kt_reader_free(r);
			continue;
		}
		CHECK(have && rows.n == 3 && applied == (t != 2));
		CHECK(have && (t == 1 ? rows.r32 == NULL && rows.r64 != NULL :
		    rows.r32 != NULL && rows.r64 == NULL));
		for (i = 0; have && i < 3; i++) {
			CHECK(kt_rows_at(&rows, i) == want[t][i]);
			/* Before the events: their index; after: position. */
			CHECK(idx[i] == (t == 2 ? i : want[t][i]));
		}
		kt_reader_free(r);
	}
}

/*
 * kt_few_digits against a digit-by-digit count on random words over
 * digits, the bytes around them ('/' and ':' beside '0' and '9') and
 * high ones (0xfa-0xff carry when 6 is added).  One check: it fails with
 * a count off by one or a value from the wrong end of the word.
 */
static void
test_few_digits(void)
{
	static const char alpha[] = "0123456789/:, ]\xfa\xff\x10";
	uint64_t x = 88172645463325252ULL, v, want;
	unsigned n, k, bad = 0;
	char w[8];
	int i, j;

	for (i = 0; i < 200000; i++) {
		for (j = 0; j < 8; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* Mostly digits, so that long runs come too. */
			w[j] = (x >> 8) % 4 != 0 ? (char)('0' + x % 10) :
			    alpha[x % (sizeof(alpha) - 1)];
		}
		for (k = 0, want = 0; k < 8 && w[k] >= '0' && w[k] <= '9'; k++)
			want = want * 10 + (uint64_t)(w[k] - '0');
		v = 12345;
		n = kt_few_digits(w, &v);
		if (n != k || (k < 8 && v != want))
			bad++;
	}
	CHECK(bad == 0);
}

/*
 * kt_memfind against a byte-by-byte search: 300000 haystacks of 0-200
 * bytes over a small alphabet (so that near matches are many), needles
 * of 1-20 bytes cut from the haystack or made up; each haystack is
 * copied into an allocation of its exact size, so that under
 * AddressSanitizer (make check-asan) a load past its end fails.  Fails
 * with a match past the end taken, the last byte checked one place off,
 * or the tail after the last block of 16 skipped.
 */
static void
test_memfind(void)
{
	static const char alpha[] = "\"ab:,{} \\";
	char hay[256], nd[32];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned bad = 0;
	int i;

	for (i = 0; i < 300000; i++) {
		size_t hn, n, j, k, want;
		const char *got;
		char *exact;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		hn = x % 201;
		for (j = 0; j < hn; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			hay[j] = alpha[x % (sizeof(alpha) - 1)];
		}
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = 1 + x % 20;
		if (hn >= n && (x >> 8) % 2 == 0)
			memcpy(nd, hay + (x >> 16) % (hn - n + 1), n);
		else
			for (j = 0; j < n; j++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				nd[j] = alpha[x % (sizeof(alpha) - 1)];
			}
		for (want = hn, k = 0; hn >= n && k + n <= hn; k++)
			if (memcmp(hay + k, nd, n) == 0) {
				want = k;
				break;
			}
		if ((exact = malloc(hn > 0 ? hn : 1)) == NULL)
			abort();
		memcpy(exact, hay, hn);
		got = kt_memfind(exact, hn, nd, n);
		if ((got == NULL) != (want == hn) ||
		    (got != NULL && (size_t)(got - exact) != want))
			bad++;
		free(exact);
	}
	CHECK(bad == 0);
	CHECK(kt_memfind("abc", 3, "", 0) != NULL);
	CHECK(kt_memfind("ab", 2, "abc", 3) == NULL);
}

/*
 * kt_flows_bind against the rule itself, applied slice by slice: on four
 * threads, properly nested X slices (a random forest of them, some of
 * equal start and end), added interleaved across the threads and, on
 * one thread, partly out of time order; flow ends (ph s, and f with and
 * without bp "e") at random times, some on a thread without slices.  An
 * end binds to the slice holding its ts that comes last by (ts, longest
 * first, number), an f without bp "e" to the first slice at or after it
 * in that order; the ends come back sorted by (key, number).  Run with
 * the numbers increasing, as a pass gives them, and shuffled.  Fails
 * with a slice's thread range one off, the binary search's bound taken
 * the wrong way, or the ends' counting sort unstable.
 */
struct ut_slice {
	int64_t ts, end;
	uint64_t pos;
	int th;
};

static uint64_t ut_flows_x = 0x6a09e667f3bcc908ULL;

static uint64_t
ut_flows_rand(void)
{
	ut_flows_x ^= ut_flows_x << 13;
	ut_flows_x ^= ut_flows_x >> 7;
	ut_flows_x ^= ut_flows_x << 17;
	return ut_flows_x;
}

/* Nested slices of thread th within [lo, hi), depth levels down. */
static void
ut_nest(struct ut_slice *sl, size_t *n, size_t cap, int th, int64_t lo,
    int64_t hi, int depth)
{
	int64_t t = lo;

	while (t < hi && *n < cap) {
		int64_t a = t + (int64_t)(ut_flows_rand() % 5);
		int64_t b = a + (int64_t)(ut_flows_rand() % 40);

		if (b > hi)
			break;
		sl[*n].ts = a;
		sl[*n].end = b;
		sl[*n].th = th;
		(*n)++;
		if (depth > 0 && b > a && ut_flows_rand() % 2 == 0)
			ut_nest(sl, n, cap, th, a, b, depth - 1);
		t = b + (int64_t)(ut_flows_rand() % 4);
	}
}

/* Whether slice a comes before b by (ts, longest first, number). */
static int
ut_before(const struct ut_slice *a, const struct ut_slice *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->end != b->end)
		return a->end > b->end;
	return a->pos < b->pos;
}

static void
test_flows_bind(void)
{
	enum { NS = 3000, NF = 2000, NT = 4 };
	static struct ut_slice sl[NS];
	static uint64_t want[NF], fpos[NF], fkey[NF], order[NS + NF];
	static int64_t fts[NF];
	static int fth[NF], fnext[NF], fe[NF];
	int round, bad = 0, nout = 0;

	for (round = 0; round < 2; round++) {
		struct kt_flows *f = kt_flows_new();
		struct kt_buf t = KT_BUF_INIT;
		const struct kt_flow_end *ends;
		size_t ns = 0, nends, i, j, k, nev;
		int th;

		for (th = 0; th < NT - 1; th++)
			ut_nest(sl, &ns, NS, th, 0, 20000, 3);
		/* The numbers: event i's, increasing, or shuffled. */
		nev = ns + NF;
		for (i = 0; i < nev; i++)
			order[i] = i * 3 + 1;
		if (round == 1)
			for (i = nev - 1; i > 0; i--) {
				uint64_t tmp;

				j = ut_flows_rand() % (i + 1);
				tmp = order[i];
				order[i] = order[j];
				order[j] = tmp;
			}
		for (i = 0; i < ns; i++)
			sl[i].pos = order[i];
		for (i = 0; i < NF; i++) {
			fpos[i] = order[ns + i];
			fts[i] = (int64_t)(ut_flows_rand() % 20100);
			fth[i] = (int)(ut_flows_rand() % NT);
			fkey[i] = ut_flows_rand() % 700;
			fnext[i] = ut_flows_rand() % 3 == 0;
			fe[i] = !fnext[i] && ut_flows_rand() % 2 == 0;
		}
		/* Added interleaved: the slices of each thread in a stream of
		 * their own, a few swapped out of time order on thread 1. */
		for (i = 0; i + 1 < ns; i++)
			if (sl[i].th == 1 && sl[i + 1].th == 1 &&
			    ut_flows_rand() % 50 == 0) {
				struct ut_slice tmp = sl[i];

				sl[i] = sl[i + 1];
				sl[i + 1] = tmp;
				nout++;
			}
		for (i = 0, j = 0; f != NULL && (i < ns || j < NF); ) {
			struct kt_event ev;
			uint64_t pos;

			t.n = 0;
			if (j >= NF || (i < ns && ut_flows_rand() % 3 != 0)) {
				/* The next slice of a random thread's stream. */
				size_t m = i;

				for (k = i; k < ns && k < i + 8; k++)
					if (sl[k].th == (int)(ut_flows_rand() %
					    NT)) {
						m = k;
						break;
					}
				if (m != i) {
					struct ut_slice tmp = sl[m];

					memmove(&sl[i + 1], &sl[i], (m - i) *
					    sizeof(sl[0]));
					sl[i] = tmp;
				}
				kt_buf_printf(&t, "{\"ph\": \"X\", \"name\": \"a\", "
				    "\"pid\": 1, \"tid\": %d, \"ts\": %lld, "
				    "\"dur\": %lld}", sl[i].th,
				    (long long)sl[i].ts,
				    (long long)(sl[i].end - sl[i].ts));
				pos = sl[i++].pos;
			} else {
				kt_buf_printf(&t, "{\"ph\": \"%s\", \"cat\": "
				    "\"ac2g\", \"name\": \"ac2g\", \"id\": %llu, "
				    "\"pid\": 1, \"tid\": %d, \"ts\": %lld%s}",
				    fnext[j] || fe[j] ? "f" : "s",
				    (unsigned long long)fkey[j], fth[j],
				    (long long)fts[j], fe[j] ?
				    ", \"bp\": \"e\"" : "");
				pos = fpos[j++];
			}
			memset(&ev, 0, sizeof(ev));
			if (kt_event_scan(t.p, t.n, &ev, NULL) == -1 ||
			    kt_flows_add(f, &ev, pos) == -1)
				bad++;
		}
		/* The rule, slice by slice. */
		for (j = 0; j < NF; j++) {
			const struct ut_slice *best = NULL;

			for (i = 0; i < ns; i++) {
				const struct ut_slice *c = &sl[i];

				if (c->th != fth[j])
					continue;
				if (fnext[j] ? c->ts >= fts[j] &&
				    (best == NULL || ut_before(c, best)) :
				    c->ts <= fts[j] && c->end >= fts[j] &&
				    (best == NULL || ut_before(best, c)))
					best = c;
			}
			want[j] = best != NULL ? best->pos : KT_FLOW_NONE;
		}
		if (f == NULL || kt_flows_bind(f) == -1) {
			bad++;
			kt_flows_free(f);
			kt_buf_free(&t);
			continue;
		}
		ends = kt_flows_ends(f, &nends);
		bad += nends != NF;
		for (k = 0; k < nends; k++) {
			/* Key numbers are handed out as keys come: compare
			 * the ends of one flow by their numbers only. */
			for (j = 0; j < NF && fpos[j] != ends[k].pos; j++)
				;
			if (j == NF || ends[k].anchor != want[j])
				bad++;
			if (k > 0 && (ends[k - 1].key > ends[k].key ||
			    (ends[k - 1].key == ends[k].key &&
			    ends[k - 1].pos >= ends[k].pos)))
				bad++;
		}
		kt_flows_free(f);
		kt_buf_free(&t);
	}
	CHECK(bad == 0 && nout > 5);
}

/*
 * kt_flowkeys against the text of (cat, name, id) interned, in the order
 * the keys come: 30000 flow events over three cats and names, integer
 * ids (in runs, as Kineto's), their texts that are not canonical (a
 * string, leading zeros, -0, a fraction, 19 digits) and none.  Fails with
 * a string "5" taken for 5, or a cat or name left out of the key.
 */
static void
test_flowkeys(void)
{
	static const char *const cats[] = { "\"ac2g\"", "\"fwdbwd\"", "1" };
	static const char *const names[] = { "\"ac2g\"", "\"x\"", "\"\"" };
	static const char *const odd[] = { "\"5\"", "05", "-0", "5.0",
	    "1234567890123456789", "-5", "0", "\"0x1f\"" };
	struct kt_flowkeys *fk = kt_flowkeys_new();
	struct kt_intern *oracle = kt_intern_new();
	struct kt_buf t = KT_BUF_INIT, k = KT_BUF_INIT;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int i, bad = 0, nkeys = 0;

	for (i = 0; fk != NULL && oracle != NULL && i < 30000; i++) {
		struct kt_event ev;
		char id[32];
		const char *c, *n;
		int64_t got, want;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		c = cats[(x >> 3) % 16 == 0 ? (x >> 8) % 3 : 0];
		n = names[(x >> 5) % 16 == 0 ? (x >> 10) % 3 : 0];
		if ((x >> 12) % 8 == 0)
			snprintf(id, sizeof(id), "%s", odd[(x >> 16) % 8]);
		else
			snprintf(id, sizeof(id), "%d", i / 2 - (int)((x >> 20) % 4));
		t.n = 0;
		kt_buf_printf(&t, "{\"ph\": \"s\", \"cat\": %s, \"name\": %s, "
		    "%s%s%s\"ts\": 1}", c, n, (x >> 24) % 64 == 0 ? "" :
		    "\"id\": ", (x >> 24) % 64 == 0 ? "" : id,
		    (x >> 24) % 64 == 0 ? "" : ", ");
		memset(&ev, 0, sizeof(ev));
		if (kt_event_scan(t.p, t.n, &ev, NULL) == -1) {
			bad++;
			continue;
		}
		k.n = 0;
		kt_buf_printf(&k, "%s\t%s\t%s", c, n, (x >> 24) % 64 == 0 ?
		    "" : id);
		want = kt_intern_put(oracle, k.p, k.n);
		got = kt_flowkeys_put(fk, &ev);
		bad += got != want;
		nkeys = (int)want + 1 > nkeys ? (int)want + 1 : nkeys;
	}
	CHECK(fk != NULL && oracle != NULL && bad == 0 && nkeys > 10000);
	kt_flowkeys_free(fk);
	kt_intern_free(oracle);
	kt_buf_free(&t);
	kt_buf_free(&k);
}

/*
 * KT_EV_SEP: set on an event that the writer's separator comes before
 * in the input, not on the first, one after other white space, or a
 * repaired copy (its control character removed).
 */
static void
test_sep_flag(void)
{
	static const char text[] = "{\"traceEvents\": [{\"ph\":\"i\"},\n  "
	    "{\"ph\":\"i\"}, {\"ph\":\"i\"},\n  {\"ph\":\"i\x01\"},\n  "
	    "{\"ph\":\"i\"}]}";
	static const int want[] = { 0, 1, 0, 0, 1 };
	struct kt_reader *r = kt_reader_mem(text, sizeof(text) - 1, "sep",
	    0);
	struct kt_event ev;
	struct kt_error err;
	int i = 0, bad = 0;

	while (r != NULL && kt_reader_next(r, &ev, &err) == 1) {
		bad += i >= 5 || ((ev.flags & KT_EV_SEP) != 0) != want[i];
		i++;
	}
	CHECK(i == 5 && bad == 0);
	kt_reader_free(r);
}

/*
 * A long ktSourceIndex (2 MB, read from a file in 512 KiB buffers, and
 * from memory), its rows of 1 to 19 digits, leading zeros, values past
 * 2^32, after commas with and without white space: every row as
 * written.  And what is refused or repaired inside a long run: a row
 * of 20 digits, an empty one, a sign; a trailing comma (one repair).
 */
static void
test_rows_long(void)
{
	static const char *const seps[] = { ",", ",", ",", ",", ", ",
	    ",\n  ", " ,", "\t,\r\n" };
	char path[] = "/tmp/kt-unit-rows.XXXXXX";
	struct kt_buf b = KT_BUF_INIT;
	uint64_t *want = NULL, x = 0x9e3779b97f4a7c15ULL;
	size_t n = 250000, i, bad = 0, t;
	int fd, pass;

	if ((want = calloc(n, sizeof(*want))) == NULL) {
		CHECK(!"calloc");
		return;
	}
	kt_buf_adds(&b, "{\"ktSourceIndex\": [");
	for (i = 0; i < n; i++) {
		unsigned d;
		uint64_t p = 1;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		d = x % 16 != 0 ? 1 + (unsigned)(x >> 8) % 8 :
		    1 + (unsigned)(x >> 8) % 19;
		for (t = 1; t < d; t++)
			p *= 10;
		want[i] = (x >> 12) % (p * 10);
		if (i > 0)
			kt_buf_adds(&b, seps[(x >> 40) % 8]);
		if ((x >> 44) % 64 == 0)
			kt_buf_adds(&b, "00");		/* leading zeros */
		kt_buf_printf(&b, "%llu", (unsigned long long)want[i]);
	}
	kt_buf_adds(&b, "], \"traceEvents\": [{\"ph\": \"i\", \"ts\": 1}]}\n");
	CHECK(!b.err);
	if ((fd = mkstemp(path)) == -1 || write(fd, b.p, b.n) != (ssize_t)b.n) {
		CHECK(!"temporary file");
		goto out;
	}
	close(fd);
	for (pass = 0; pass < 2; pass++) {
		struct kt_source *src = NULL;
		struct kt_reader *r = NULL;
		struct kt_event ev;
		struct kt_error err;
		struct kt_rows rows;
		int applied;

		if (pass == 0) {
			if ((src = kt_source_open(path, NULL, KT_READ_SMALL,
			    &err)) == NULL || kt_source_next(src, &r, &err) != 1)
				r = NULL;
		} else
			r = kt_reader_mem(b.p, b.n, "rows.json", 0);
		CHECK(r != NULL && kt_reader_next(r, &ev, &err) == 1);
		CHECK(r != NULL && kt_reader_rows(r, &rows, &applied) &&
		    rows.n == n && ev.index == want[0]);
		for (i = 0; r != NULL && i < rows.n && i < n; i++)
			bad += kt_rows_at(&rows, i) != want[i];
		CHECK(bad == 0);
		kt_reader_free(r);
		kt_source_close(src);
	}
	/* Damage in the middle of a long run of rows. */
	{
		static const char *const cuts[] = { "12345678901234567890",
		    "", "-5", "5,]" };
		size_t at = b.n / 2;

		while (b.p[at] != ',')
			at++;
		for (t = 0; t < 4; t++) {
			struct kt_buf c = KT_BUF_INIT;
			struct kt_reader *r;
			struct kt_event ev;
			struct kt_error err;
			int rc;

			kt_buf_add(&c, b.p, at + 1);
			kt_buf_adds(&c, cuts[t]);
			if (t < 3)
				kt_buf_add(&c, b.p + at, b.n - at);
			else
				kt_buf_adds(&c, ", \"traceEvents\": []}");
			r = kt_reader_mem(c.p, c.n, "rows.json", 0);
			rc = r != NULL ? kt_reader_next(r, &ev, &err) : 1;
			if (t < 3)
				CHECK(rc == -1 && strstr(err.msg,
				    "ktSourceIndex") != NULL);
			else
				CHECK(rc == 0 && kt_reader_repairs(r)->n[
				    KT_R_TRAILING_COMMA] == 1);
			kt_reader_free(r);
			kt_buf_free(&c);
		}
	}
out:
	unlink(path);
	free(want);
	kt_buf_free(&b);
}

/*
 * The AVX2 path's walk over bit masks (kt_scan_fast) against the
 * portable scanner, on random events of Kineto's shape: the keys the
 * scanner records at every depth, strings with the bytes of JSON's
 * syntax in them and crossing 64-byte blocks, every kind of number and
 * literal, white space of every kind, nesting past the walk's 63 levels,
 * and damage (escapes, UTF-8, controls, bad numbers and literals, trailing
 * commas, missing colons, a cut) that the walk must leave to the full
 * scanner.  Wherever the walk takes an event, the portable scanner reads
 * it without an edit to the same end, keys and fields; every clean event
 * is taken; and kt_scan_value on the AVX2 path (walk, then full scanner)
 * reads every event as the portable one does.
 */
struct fgen {
	struct kt_buf b;
	uint64_t x;
	int dirty;		/* something the walk must not take */
};

static unsigned
fg_rand(struct fgen *g, unsigned n)
{
	return (unsigned)(xorshift(&g->x) % n);
}

static void
fg_add(struct fgen *g, const char *s)
{
	(void)kt_buf_adds(&g->b, s);
}

static void
fg_ws(struct fgen *g)
{
	static const char *const ws[] = { "", "", " ", " ", "\n    ",
	    "\r\n\t", "\n      " };

	if (fg_rand(g, 40) == 0) {
		unsigned n = fg_rand(g, 90);

		while (n-- > 0)
			(void)kt_buf_addc(&g->b, " \t\r\n"[fg_rand(g, 4)]);
		return;
	}
	fg_add(g, ws[fg_rand(g, sizeof(ws) / sizeof(ws[0]))]);
}

static void
fg_string(struct fgen *g, const char *fixed)
{
	static const char plain[] = "abcXYZ019 _:;,.{}[]()<>/#-+'";
	unsigned n, r;

	(void)kt_buf_addc(&g->b, '"');
	if (fixed != NULL)
		fg_add(g, fixed);
	else {
		n = fg_rand(g, 8) == 0 ? fg_rand(g, 160) : fg_rand(g, 20);
		while (n-- > 0) {
			r = fg_rand(g, 400);
			if (r == 0) {
				static const char *const esc[] = { "\\\"",
				    "\\\\", "\\n", "\\u00e9", "\\q", "\\u12" };

				fg_add(g, esc[fg_rand(g, 6)]);
				g->dirty = 1;
			} else if (r == 1) {
				fg_add(g, fg_rand(g, 2) ? "\xc3\xa9" : "\xff");
				g->dirty = 1;
			} else if (r == 2) {
				(void)kt_buf_addc(&g->b,
				    "\t\x01\x1f\x0c\x1a"[fg_rand(g, 5)]);
				g->dirty = 1;
			} else
				(void)kt_buf_addc(&g->b,
				    plain[fg_rand(g, sizeof(plain) - 1)]);
		}
	}
	(void)kt_buf_addc(&g->b, '"');
}

static void
fg_scalar(struct fgen *g)
{
	static const char *const good[] = { "0", "7", "-3", "12345678901234",
	    "1669783687464200", "27168132393.957", "-0.5", "1.5e3", "2E-07",
	    "6.02e+23", "00", "-12.000", "true", "false", "null", "0.125" };
	static const char *const bad[] = { "1.", "-", "1e", "+1", ".5",
	    "1.5.5", "nan", "-Infinity", "inf", "True", "nul", "truex",
	    "1x", "0x1f", "--1", "1e+", "NaN", "falsey", "1-2", "t" };

	if (fg_rand(g, 25) == 0) {
		fg_add(g, bad[fg_rand(g, sizeof(bad) / sizeof(bad[0]))]);
		g->dirty = 1;
	} else
		fg_add(g, good[fg_rand(g, sizeof(good) / sizeof(good[0]))]);
}

static void fg_value(struct fgen *, int, int);

/* An object at depth (1: the event's members; args: args' members). */
static void
fg_object(struct fgen *g, int depth, int args)
{
	static const char *const top[] = { "ph", "cat", "name", "pid", "tid",
	    "ts", "dur", "id", "bp", "s", "args", "args", "Ev Idx", "foo",
	    "" };
	static const char *const arg[] = { "External id", "correlation",
	    "stream", "device", "bytes", "rank", "Input Dims", "queued",
	    "ph", "ts", "Bytes", "Total Allocated", "Total Reserved",
	    "Device Type", "Device Id", "Device" };
	unsigned n = fg_rand(g, depth == 1 ? 12 : 6), i;

	(void)kt_buf_addc(&g->b, '{');
	fg_ws(g);
	for (i = 0; i < n; i++) {
		const char *k = depth == 1 || fg_rand(g, 2) ?
		    (depth == 1 ? top[fg_rand(g, sizeof(top) / sizeof(top[0]))] :
		    arg[fg_rand(g, sizeof(arg) / sizeof(arg[0]))]) : NULL;

		if (i > 0) {
			(void)kt_buf_addc(&g->b, ',');
			fg_ws(g);
		}
		fg_string(g, k);
		fg_ws(g);
		if (fg_rand(g, 200) == 0)
			g->dirty = 1;	/* no colon */
		else
			(void)kt_buf_addc(&g->b, ':');
		fg_ws(g);
		fg_value(g, depth + 1, depth == 1 && k != NULL &&
		    strcmp(k, "args") == 0);
		fg_ws(g);
	}
	if (n > 0 && fg_rand(g, 100) == 0) {
		(void)kt_buf_addc(&g->b, ',');
		g->dirty = 1;	/* a trailing comma */
	}
	(void)kt_buf_addc(&g->b, '}');
	(void)args;
}

/* A value at depth (the number of containers around it). */
static void
fg_value(struct fgen *g, int depth, int args)
{
	unsigned r = fg_rand(g, 10);

	if (args && r < 7) {
		fg_object(g, depth, 1);
		return;
	}
	if (depth < 5 && r == 0) {
		fg_object(g, depth, 0);
		return;
	}
	if (r == 1 && depth < 6) {
		unsigned n = fg_rand(g, 5), i;

		(void)kt_buf_addc(&g->b, '[');
		for (i = 0; i < n; i++) {
			if (i > 0)
				(void)kt_buf_addc(&g->b, ',');
			fg_ws(g);
			fg_value(g, depth + 1, 0);
			fg_ws(g);
		}
		(void)kt_buf_addc(&g->b, ']');
		return;
	}
	if (r == 2 && fg_rand(g, 30) == 0) {
		/* Nesting about the walk's limit of 63 levels. */
		unsigned n = 55 + fg_rand(g, 15), i;

		if (depth + (int)n >= 63)
			g->dirty = 1;
		for (i = 0; i < n; i++)
			(void)kt_buf_addc(&g->b, "[{"[0]);
		fg_scalar(g);
		for (i = 0; i < n; i++)
			(void)kt_buf_addc(&g->b, ']');
		return;
	}
	if (r < 6)
		fg_string(g, NULL);
	else
		fg_scalar(g);
}

static int
same_scan(int rc1, size_t e1, const struct kt_scanner *s1,
    const struct kt_event *v1, int rc2, size_t e2,
    const struct kt_scanner *s2, const struct kt_event *v2)
{
	if (rc1 != rc2)
		return 0;
	if (rc1 == KT_SCAN_ERR)
		return s1->err_off == s2->err_off &&
		    strcmp(s1->err_msg, s2->err_msg) == 0;
	if (rc1 != KT_SCAN_OK)
		return 1;
	return e1 == e2 && s1->nedits == s2->nedits &&
	    s1->nkeys == s2->nkeys && v1->known == v2->known &&
	    memcmp(v1->f, v2->f, sizeof(v1->f)) == 0;
}

static void
test_scan_fast(void)
{
	static const char *const tails[] = { "", ",\n  {\"ph\": \"X\"",
	    "\n]}\n", ",{\"name\": \"a\\\\b\xff\x01\"}", "   \t" };
	struct fgen g;
	struct kt_scanner sp, sf, sa;
	struct kt_event ep, ef, ea;
	size_t ev_end, e_p, e_f, e_a, end;
	uint64_t i, clean = 0, taken = 0, taken_clean = 0, wrong = 0;
	uint64_t differ = 0;
	int rc_p, rc_f, rc_a, cut;

	if (kt_scan_path("avx2") == -1) {
		printf("skip unit.c: kt_scan_fast: no AVX2 here\n");
		return;
	}
	memset(&g, 0, sizeof(g));
	memset(&sp, 0, sizeof(sp));
	memset(&sa, 0, sizeof(sa));
	memset(&sf, 0, sizeof(sf));
	sp.path = KT_SCAN_PORTABLE;
	sa.path = KT_SCAN_AVX2;
	g.x = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < 60000; i++) {
		g.b.n = 0;
		g.dirty = 0;
		fg_object(&g, 1, 0);
		ev_end = g.b.n;
		fg_add(&g, tails[fg_rand(&g, sizeof(tails) / sizeof(tails[0]))]);
		/* Now and then the data ends inside the event. */
		cut = fg_rand(&g, 8) == 0 && ev_end > 1;
		end = cut ? fg_rand(&g, (unsigned)ev_end - 1) + 1 : g.b.n;
		/* Room past end, so that no read past it goes unnoticed
		 * by ASan: a copy of exactly end bytes. */
		{
			char *d = malloc(end);

			if (d == NULL)
				abort();
			memcpy(d, g.b.p, end);
			rc_p = kt_scan_value(&sp, d, 0, end, &e_p, &ep);
			rc_f = kt_scan_fast(&sf, d, 0, end, &e_f, &ef);
			rc_a = kt_scan_value(&sa, d, 0, end, &e_a, &ea);
			free(d);
		}
		if (rc_f == KT_SCAN_OK) {
			taken++;
			if (rc_p != KT_SCAN_OK || e_p != e_f ||
			    sp.nedits != 0 || sp.nkeys != sf.nkeys ||
			    sf.nedits != 0 || ep.known != ef.known ||
			    memcmp(ep.f, ef.f, sizeof(ep.f)) != 0 ||
			    e_f != ev_end) {
				if (wrong++ == 0)
					printf("kt_scan_fast took %.*s\n",
					    (int)end, g.b.p);
			}
		}
		if (!g.dirty && !cut) {
			clean++;
			if (rc_f == KT_SCAN_OK)
				taken_clean++;
			else if (clean - taken_clean == 1)
				printf("kt_scan_fast left %.*s\n", (int)end,
				    g.b.p);
		}
		/* The AVX2 path reads as the portable one. */
		if (!same_scan(rc_p, e_p, &sp, &ep, rc_a, e_a, &sa, &ea)) {
			if (differ++ == 0)
				printf("KT_SCAN=avx2 reads otherwise: %.*s\n",
				    (int)end, g.b.p);
		}
	}
	CHECK(wrong == 0);
	CHECK(differ == 0);
	CHECK(clean > 20000 && taken_clean == clean);
	CHECK(taken >= clean && taken < i);
	kt_scanner_free(&sp);
	kt_scanner_free(&sa);
	kt_scanner_free(&sf);
	kt_buf_free(&g.b);
}

int
main(void)
{
	test_scan_fast();
	test_size_hint();
	test_rows();
	test_scan_lines();
	test_regex_literals();
	test_time();
	test_time_oracle();
	test_time_event_oracle();
	test_buf_printf();
	test_scan();
	test_memory_fields();
	test_val_int_oracle();
	test_kinds();
	test_patch();
	test_patch_remove();
	test_ids_keys();
	test_patch_event();
	test_store();
	test_reader();
	test_ahead();
	test_tsv();
	test_sort_intern();
	test_out_source();
	test_writer_sizes();
	test_out_gzip();
	test_build();
	test_rank_name();
	test_reader_seps();
	test_skim();
	test_skim_paths();
	test_table();
	test_table_cells();
	test_table_forms_oracle();
	test_json_escape_oracle();
	test_int_format_oracle();
	test_sha256();
	test_hold();
	test_places();
	test_few_digits();
	test_memfind();
	test_flows_bind();
	test_flowkeys();
	test_sep_flag();
	test_rows_long();
	test_idmemo();
	test_idmemo_random();
	test_model();
	test_model_join_cache();
	test_model_join_threads();
	test_model_span_order();
	test_model_each();
	test_sort_r();
	test_sort_r40();
	test_qsort();
	test_iv_add();
	test_cpus();
	test_unescape();
	test_buf_sticky();
	test_options();
	test_first_buffer();
	test_reader_read();
	test_minify();
	test_minify_paths();
	test_tsv_rows_oracle();
	printf("unit: %d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
