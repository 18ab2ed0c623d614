/*
 * fuzz/spec.c: a libFuzzer harness for the parsers of option text that
 * live in the library: whole numbers (kt_int_parse: -n, --nth, --top,
 * --rank ...), durations with a unit or whole ns (kt_duration_opt_parse:
 * --min-gap, --tiny ...; kt_duration_parse: slice-window's --from and
 * --to), sizes in GB (kt_gb_parse: kt-memory --capacity), step ranges
 * (kt_steps_parse: slice-window --steps N or A-B), kinds
 * (kt_kind_parse), ProfilerStep#N names (kt_step_parse), bucket --by
 * lists (kt_bucket_by_parse), the rank in a file name
 * (kt_rank_from_name), dtype names (kt_dtype_size) and a rule added on
 * the command line (kt_rules_add, --rule-like BUCKET and regex).  The
 * input is one text, up to its first NUL; each parser runs on it.
 * Beyond crashes it checks what each promises: a value inside its
 * range, the same value as strtoll(3) where that is the definition, a
 * range in order, a kind that names itself, no key twice.  A failed
 * check aborts.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fail(const char *what, const char *text)
{
	fprintf(stderr, "fuzz/spec: %s: '%s'\n", what, text);
	abort();
}

static void
ints(const char *s)
{
	static const long long lim[][2] = {
		{ 0, INT32_MAX }, { 1, INT32_MAX }, { 0, 9 },
		{ LLONG_MIN, LLONG_MAX }, { -5, 5 }
	};
	long long v, w;
	char *end;
	size_t i;

	for (i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		v = 12345;
		if (kt_int_parse(s, lim[i][0], lim[i][1], &v) == -1) {
			if (v != 12345)
				fail("int: a refusal changed the value", s);
			continue;
		}
		if (v < lim[i][0] || v > lim[i][1])
			fail("int out of its range", s);
		errno = 0;
		w = strtoll(s, &end, 10);
		if (w != v || *end != '\0' || errno != 0 || *s == '\0')
			fail("int is not strtoll's", s);
	}
}

static void
times(const char *s)
{
	int64_t v;

	if (kt_duration_opt_parse(s, &v) == 0 && (v < 0 || v == INT64_MAX))
		fail("duration option negative", s);
	if (kt_duration_parse(s, &v) == 0 && (v > KT_TIME_MAX ||
	    v < -KT_TIME_MAX))
		fail("duration out of range", s);
	if (kt_gb_parse(s, &v) == 0 && (v <= 0 ||
	    v > (int64_t)1000000000 * 1000000001))
		fail("GB not positive", s);
}

static void
steps(const char *s)
{
	int64_t a = -1, b = -1;
	const char *bad = NULL;
	size_t nbad = 0;

	switch (kt_steps_parse(s, &a, &b, &bad, &nbad)) {
	case KT_STEPS_OK:
		if (a < 0 || b < a || b > INT32_MAX)
			fail("steps out of order or range", s);
		break;
	case KT_STEPS_NUMBER:
		if (bad < s || bad + nbad > s + strlen(s))
			fail("steps: the bad number is not in the text", s);
		/* FALLTHROUGH */
	case KT_STEPS_FORM:
	case KT_STEPS_ORDER:
		if (a != -1 || b != -1)
			fail("steps: a refusal changed the range", s);
		break;
	default:
		fail("steps: no such answer", s);
	}
}

static void
names(const char *s, size_t n)
{
	struct kt_bucket_opts bo;
	const char *how;
	int64_t rank, step;
	size_t i, j;
	int k;

	if ((k = kt_kind_parse(s, n)) != -1) {
		if (k < 0 || k >= KT_NKINDS)
			fail("kind out of range", s);
		if (strcmp(kt_kind_name((enum kt_kind)k), s) != 0)
			fail("kind does not name itself", s);
	}
	if ((step = kt_step_parse(s, n)) != -1 && (step < 0 ||
	    strncmp(s, "ProfilerStep#", 13) != 0))
		fail("step from no ProfilerStep#N", s);
	memset(&bo, 0, sizeof(bo));
	if (kt_bucket_by_parse(&bo, s) == 0) {
		if (bo.nby == 0 || bo.nby > KT_NBY)
			fail("--by: no key or too many", s);
		for (i = 0; i < bo.nby; i++) {
			if (bo.by[i] < 0 || bo.by[i] >= KT_NBY)
				fail("--by: no such key", s);
			for (j = 0; j < i; j++)
				if (bo.by[i] == bo.by[j])
					fail("--by: a key twice", s);
		}
	}
	if (kt_rank_from_name(s, &rank, &how) == 0 &&
	    (rank < 0 || how == NULL))
		fail("rank from a name negative", s);
	(void)kt_dtype_size(s);
}

/* A rule from the text: BUCKET, a tab, a regex. */
static void
rule(const char *s)
{
	struct kt_rules *rs;
	struct kt_error err;
	char *copy, *tab;
	uint32_t id;

	if ((tab = strchr(s, '\t')) == NULL || (copy = strdup(s)) == NULL)
		return;
	copy[tab - s] = '\0';
	if ((rs = kt_rules_new(0)) != NULL) {
		if (kt_rules_add(rs, copy, copy + (tab - s) + 1, &err) == 0) {
			id = kt_rules_match(rs, KT_KERNEL,
			    "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
			if (id >= kt_rules_nbuckets(rs))
				fail("rule: no such bucket", s);
		}
		kt_rules_free(rs);
	}
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	size_t n;

	if (size > 1024 || (s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	n = strlen(s);
	ints(s);
	times(s);
	steps(s);
	names(s, n);
	rule(s);
	free(s);
	return 0;
}
