/*
 * fuzz/time.c: a libFuzzer harness for exact time: kt_time_parse(),
 * kt_time_format() and kt_duration_parse() over arbitrary text.  Beyond
 * crashes it checks the round trips: a time parsed and formatted
 * (with any minimum of decimals) parses back to the same nanoseconds,
 * with at least that many decimals and at most 3; a duration formatted
 * as whole "ns" or as decimal "us" parses back to the same value; and
 * whole nanoseconds ("123ns") read exactly, or are refused.  A failed
 * check aborts, which libFuzzer reports with the input.
 */
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
	fprintf(stderr, "fuzz/time: %s: '%s'\n", what, text);
	abort();
}

/* format(parse(s)) parses back to the same value. */
static void
time_round_trip(const char *s, size_t n, int min_decimals)
{
	char buf[64];
	int64_t ns, again;
	int fl, dec;
	size_t len;

	if (kt_time_parse(s, n, &ns, &fl, &dec) == -1)
		return;
	len = kt_time_format(ns, min_decimals, buf);
	if (len != strlen(buf) || len >= 32)
		fail("format length", buf);
	if (kt_time_parse(buf, len, &again, &fl, &dec) == -1)
		fail("formatted time does not parse", buf);
	if (again != ns)
		fail("time round trip changed the value", buf);
	if (fl != 0)
		fail("formatted time has an exponent or sub-ns digits", buf);
	if (dec > 3 || (dec < min_decimals && min_decimals <= 3))
		fail("formatted time has the wrong decimals", buf);
}

/* Whole nanoseconds: the exact value of the digits, or -1 (too big). */
static int
whole_ns(const char *s, size_t n, int64_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (*v > (INT64_MAX - (s[i] - '0')) / 10)
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

static void
duration_round_trip(const char *s)
{
	char buf[64];
	int64_t d, again, exact;
	size_t n = strlen(s), len;

	if (kt_duration_parse(s, &d) == -1)
		return;
	/* "123ns": whole nanoseconds, read exactly. */
	if (n > 2 && strcmp(s + n - 2, "ns") == 0 &&
	    strspn(s, "0123456789") == n - 2) {
		if (whole_ns(s, n - 2, &exact) == -1)
			fail("whole ns over int64 accepted", s);
		if (exact != d)
			fail("whole ns misread", s);
	}
	len = kt_int_format(d, buf);
	memcpy(buf + len, "ns", 3);
	if (d >= 0 && (kt_duration_parse(buf, &again) == -1 || again != d))
		fail("duration as ns does not parse back", buf);
	len = kt_time_format(d, 0, buf);
	memcpy(buf + len, "us", 3);
	if (kt_duration_parse(buf, &again) == -1 || again != d)
		fail("duration as us does not parse back", buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size == 0 || size > 4096)
		return 0;
	/* The first byte: the minimum decimals (0..3, or more). */
	if ((s = malloc(size)) == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	time_round_trip(s, size - 1, data[0] % 5);
	/* kt_duration_parse takes a C string: up to the first NUL. */
	duration_round_trip(s);
	free(s);
	return 0;
}
