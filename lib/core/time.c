/*
 * time.c: exact time.  Trace times are decimal microseconds; kt holds
 * them as int64 nanoseconds.  No floating point is used anywhere here,
 * so 1712195495505582.988 survives digit for digit.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktint.h"

/*
 * Parse the JSON number s[0..n) as microseconds into *ns.  The value is
 * the digit string times 10^(3 + exponent - fraction digits); digits
 * below 1 ns are dropped (toward zero) and flagged.  *flags and
 * *decimals may be NULL.  Returns 0 or -1 (not a number, or overflow).
 */
int
kt_time_parse(const char *s, size_t n, int64_t *ns, int *flags,
    int *decimals)
{
	const char *p = s, *e = s + n;
	char digits[64];
	size_t nd = 0, i;
	int neg = 0, nfrac = 0, fl = 0, scale, sawdigit = 0;
	/* sawdigit: the integer part has a digit, as JSON requires. */
	long exp = 0;
	uint64_t v = 0;

	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	/*
	 * The usual form first: up to 16 digits (a microsecond ts since the
	 * epoch has 16), then up to 3 decimals (nothing below 1 ns), within
	 * KT_TIME_MAX.  Anything else takes the general way below.
	 */
	{
		static const uint64_t scale3[4] = { 1000, 100, 10, 1 };
		const char *q = p;
		int ni = 0, nf = 0, dot = 0;

		/* Eight digits at once where there are (a microsecond ts). */
		if (e - q >= 8 && kt_eight_digits(q, &v)) {
			q += 8;
			ni = 8;
		}
		for (; q < e && (unsigned)(*q - '0') < 10 && ni < 16; q++, ni++)
			v = v * 10 + (uint64_t)(*q - '0');
		if (q < e && *q == '.') {
			dot = 1;
			for (q++; q < e && (unsigned)(*q - '0') < 10 && nf < 4;
			    q++, nf++)
				v = v * 10 + (uint64_t)(*q - '0');
		}
		/* At most 19 digits: v has not overflowed. */
		if (q == e && ni >= 1 && ni <= 16 && nf <= 3 &&
		    (nf > 0 || !dot) &&
		    v <= (uint64_t)KT_TIME_MAX / scale3[nf]) {
			v *= scale3[nf];
			*ns = neg ? -(int64_t)v : (int64_t)v;
			if (flags)
				*flags = 0;
			if (decimals)
				*decimals = nf;
			return 0;
		}
		v = 0;
	}
	/* Integer part; leading zeros are skipped, significant ones kept. */
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		sawdigit = 1;
		if (nd == 0 && *p == '0')
			continue;
		if (nd >= sizeof(digits))
			return -1;
		digits[nd++] = *p;
	}
	if (p < e && *p == '.') {
		p++;
		for (; p < e && *p >= '0' && *p <= '9'; p++) {
			if (nd >= sizeof(digits))
				return -1;
			digits[nd++] = *p;
			nfrac++;
		}
		if (nfrac == 0)
			return -1;
	}
	if (!sawdigit)
		return -1;
	if (p < e && (*p == 'e' || *p == 'E')) {
		int eneg = 0, ed = 0;

		fl |= KT_TIME_EXP;
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		for (; p < e && *p >= '0' && *p <= '9'; p++, ed++)
			if (exp < 100000)
				exp = exp * 10 + (*p - '0');
		if (ed == 0)
			return -1;
		if (eneg)
			exp = -exp;
	}
	if (p != e)
		return -1;
	/* Value = digits * 10^scale nanoseconds. */
	scale = (int)(3 + exp - nfrac);
	if (exp > 1000 || exp < -1000)
		return -1;
	if (scale < 0) {
		size_t keep = (size_t)((long)nd + scale > 0 ? (long)nd + scale : 0);

		for (i = keep; i < nd; i++)
			if (digits[i] != '0')
				fl |= KT_TIME_SUBNS;
		nd = keep;
		scale = 0;
	}
	for (i = 0; i < nd; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(digits[i] - '0');
	}
	for (; scale > 0; scale--) {
		if (v > UINT64_MAX / 10)
			return -1;
		v *= 10;
	}
	if (v > (uint64_t)KT_TIME_MAX)
		return -1;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	if (flags)
		*flags = fl;
	if (decimals)
		*decimals = nfrac;
	return 0;
}

/*
 * Format v as decimal integer text into buf (at least 21 bytes); returns
 * the length.  The digits are counted first (from the bits, then one
 * power of ten compared), then written in place two at a time, from the
 * end, out of a table.
 */
size_t
kt_int_format(int64_t v, char *buf)
{
	static const char pairs[201] =
	    "00010203040506070809101112131415161718192021222324"
	    "25262728293031323334353637383940414243444546474849"
	    "50515253545556575859606162636465666768697071727374"
	    "75767778798081828384858687888990919293949596979899";
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
		1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
		10000000000ULL, 100000000000ULL, 1000000000000ULL,
		10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
		10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL, 10000000000000000000ULL
	};
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	/* log10 from log2 (1233 / 4096 is just under log10(2)), which is
	 * the digits less one or less two; u | 1 counts 0 as one digit. */
	unsigned t = ((64 - (unsigned)__builtin_clzll(u | 1)) * 1233) >> 12;
	size_t i = v < 0, n = t + 1 - ((u | 1) < pow10[t]);
	char *p = buf + i + n;

	buf[0] = '-';		/* the first digit's place when v >= 0 */
	*p = '\0';
	while (u >= 100) {
		unsigned d = (unsigned)(u % 100) * 2;

		u /= 100;
		p -= 2;
		memcpy(p, pairs + d, 2);
	}
	if (u >= 10)
		memcpy(p - 2, pairs + u * 2, 2);
	else
		p[-1] = (char)('0' + u);
	return i + n;
}

/*
 * Format ns as microseconds: the integer part, then a fraction of at
 * least min_decimals (0..3) digits and no more than the value needs.
 * Returns the length written to buf (>= 32 bytes).
 */
size_t
kt_time_format(int64_t ns, int min_decimals, char *buf)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t us = u / 1000, frac = u % 1000;
	size_t n = 0;
	int d = 3;

	if (ns < 0)
		buf[n++] = '-';
	n += kt_int_format((int64_t)us, buf + n);
	if (min_decimals > 3)
		min_decimals = 3;
	/* Drop trailing zero digits down to min_decimals. */
	while (d > min_decimals && frac % 10 == 0) {
		frac /= 10;
		d--;
	}
	if (d > 0) {
		char f[4];
		int i;

		for (i = d - 1; i >= 0; i--) {
			f[i] = (char)('0' + frac % 10);
			frac /= 10;
		}
		buf[n++] = '.';
		memcpy(buf + n, f, (size_t)d);
		n += (size_t)d;
	}
	buf[n] = '\0';
	return n;
}

int
kt_duration_parse(const char *s, int64_t *ns)
{
	static const struct {
		const char	*unit;
		int64_t		 mul;	/* applied to the value in ns/1000 */
		int64_t		 div;
	} units[] = {
		{ "ns", 1, 1000 }, { "us", 1, 1 }, { "ms", 1000, 1 },
		{ "s", 1000000, 1 },
	};
	size_t n = strlen(s), i;
	int64_t v;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t ul = strlen(units[i].unit);

		if (n <= ul || strcmp(s + n - ul, units[i].unit) != 0)
			continue;
		if (i == 3 && (s[n - 2] == 'n' || s[n - 2] == 'u' ||
		    s[n - 2] == 'm'))
			continue;
		if (i == 0 && n - ul < 20 && strspn(s, "0123456789") ==
		    n - ul) {
			/* Whole nanoseconds: read as they are. */
			char *end;

			errno = 0;
			v = strtoll(s, &end, 10);
			if (*end != 'n' || errno == ERANGE || v > KT_TIME_MAX)
				return -1;
			*ns = v;
			return 0;
		}
		/* The number read as microseconds gives value * 1000. */
		if (kt_time_parse(s, n - ul, &v, NULL, NULL) == -1)
			return -1;
		if (v > INT64_MAX / units[i].mul || v < INT64_MIN / units[i].mul)
			return -1;
		v = v * units[i].mul / units[i].div;
		if (v > KT_TIME_MAX || v < -KT_TIME_MAX)
			return -1;
		*ns = v;
		return 0;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/*
 * Option text: what the filters' options parse, without the printing
 * and exiting of lib/cli (kt_cli_int, kt_cli_duration, kt_cli_gb and
 * slice-window's --steps print the message and exit 2 on -1).
 */

int
kt_int_parse(const char *s, long long min, long long max, long long *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno == ERANGE || x < min ||
	    x > max)
		return -1;
	*v = x;
	return 0;
}

int
kt_duration_opt_parse(const char *s, int64_t *ns)
{
	int64_t v;
	char *end;

	if (kt_duration_parse(s, &v) == 0 && v >= 0) {
		*ns = v;
		return 0;
	}
	v = strtoll(s, &end, 10);
	if (*s >= '0' && *s <= '9' && *end == '\0' && v >= 0 &&
	    v < INT64_MAX) {
		*ns = v;
		return 0;
	}
	return -1;
}

int
kt_gb_parse(const char *s, int64_t *bytes)
{
	int64_t whole = 0, frac = 0, scale = 100000000;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > 1000000000)
			return -1;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	if (*p != '\0' || whole * 1000000000 + frac <= 0)
		return -1;
	*bytes = whole * 1000000000 + frac;
	return 0;
}

int
kt_steps_parse(const char *s, int64_t *a, int64_t *b, const char **bad,
    size_t *nbad)
{
	const char *dash = strchr(s, '-');
	char first[32];
	long long x, y;

	if (dash == NULL) {
		if (kt_int_parse(s, 0, INT32_MAX, &x) == -1) {
			*bad = s;
			*nbad = strlen(s);
			return KT_STEPS_NUMBER;
		}
		*a = *b = x;
		return KT_STEPS_OK;
	}
	if ((size_t)(dash - s) >= sizeof(first) || dash == s)
		return KT_STEPS_FORM;
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	if (kt_int_parse(first, 0, INT32_MAX, &x) == -1) {
		*bad = s;
		*nbad = (size_t)(dash - s);
		return KT_STEPS_NUMBER;
	}
	if (kt_int_parse(dash + 1, 0, INT32_MAX, &y) == -1) {
		*bad = dash + 1;
		*nbad = strlen(dash + 1);
		return KT_STEPS_NUMBER;
	}
	if (y < x)
		return KT_STEPS_ORDER;
	*a = x;
	*b = y;
	return KT_STEPS_OK;
}

static int
range_cmp(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

int
kt_ranklist_parse(const char *s, struct kt_ranklist *l, const char **bad,
    size_t *nbad)
{
	const char *p = s, *comma, *ibad;
	char item[64];
	size_t n, k, cap = 0, inbad;
	int64_t (*r)[2] = NULL, (*t)[2], a, b;
	int rc;

	l->r = NULL;
	l->n = 0;
	for (n = 0;; p = comma + 1) {
		size_t len;

		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		*bad = p;
		*nbad = len;
		if (len == 0 || len >= sizeof(item)) {
			free(r);
			return KT_STEPS_FORM;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if ((rc = kt_steps_parse(item, &a, &b, &ibad, &inbad)) !=
		    KT_STEPS_OK) {
			if (rc == KT_STEPS_NUMBER) {
				*bad = p + (ibad - item);
				*nbad = inbad;
			}
			free(r);
			return rc;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			if ((t = realloc(r, cap * sizeof(*r))) == NULL) {
				free(r);
				return -1;
			}
			r = t;
		}
		r[n][0] = a;
		r[n++][1] = b;
		if (comma == NULL)
			break;
	}
	/* Sorted, then each range that touches the last merged into it. */
	qsort(r, n, sizeof(*r), range_cmp);
	for (k = 0, l->n = 0; k < n; k++)
		if (l->n > 0 && r[k][0] <= r[l->n - 1][1] + 1) {
			if (r[k][1] > r[l->n - 1][1])
				r[l->n - 1][1] = r[k][1];
		} else {
			r[l->n][0] = r[k][0];
			r[l->n++][1] = r[k][1];
		}
	l->r = r;
	return KT_STEPS_OK;
}

int
kt_ranklist_has(const struct kt_ranklist *l, int64_t rank)
{
	size_t lo = 0, hi = l->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rank < l->r[mid][0])
			hi = mid;
		else if (rank > l->r[mid][1])
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

void
kt_ranklist_free(struct kt_ranklist *l)
{
	free(l->r);
	l->r = NULL;
	l->n = 0;
}
