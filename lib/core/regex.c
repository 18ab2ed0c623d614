/*
 * regex.c: what kt asks of a regex a user gives (bucket rules,
 * slice-window --annotation, layer-track's anchors) before regcomp(3)
 * sees it.  glibc's regcomp copies the atom under each '+' and each
 * {n,m} (a+ is a a*, a{3} is a a a), so that "a++++...+" or nested
 * intervals grow exponentially and take gigabytes; a repetition of a
 * repetition ("a?+?+?+..."; undefined in POSIX EREs) takes time that
 * grows tenfold with each; and its regexec is exponential with
 * back-references, which POSIX EREs do not have.  kt_regex_check()
 * refuses all three before any memory is spent.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kt.h"

#define DEPTH	256		/* groups nested at most */

struct frame {
	uint64_t	 alts;		/* the alternatives before '|' */
	uint64_t	 cur;		/* this alternative so far */
	uint64_t	 last;		/* its last atom, for a repetition */
};

/* a + b, or a * b, saturating above KT_REGEX_MAX. */
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a + b > KT_REGEX_MAX ? KT_REGEX_MAX + 1 : a + b;
}

static uint64_t
sat_mul(uint64_t a, uint64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	return a > (KT_REGEX_MAX + 1) / b ? KT_REGEX_MAX + 1 : a * b;
}

/* The end of the bracket expression that starts at s[i] ('['), or 0. */
static size_t
bracket_end(const char *s, size_t i)
{
	i++;
	if (s[i] == '^')
		i++;
	if (s[i] == ']')
		i++;
	for (; s[i] != '\0'; i++) {
		if (s[i] == '[' && (s[i + 1] == ':' || s[i + 1] == '.' ||
		    s[i + 1] == '=')) {
			char c = s[i + 1];
			const char *e;

			for (e = s + i + 2; *e != '\0'; e++)
				if (e[0] == c && e[1] == ']')
					break;
			if (*e == '\0')
				return 0;
			i = (size_t)(e + 1 - s);
			continue;
		}
		if (s[i] == ']')
			return i;
	}
	return 0;
}

/*
 * An interval {n}, {n,}, {n,m} or {,m} at s[i]: its end and copies, or
 * 0.  glibc reads "{,m}" as "{0,m}" (its comment: We treat "{,m}" as
 * "{0,m}"), so it copies the atom m times too.
 */
static size_t
interval(const char *s, size_t i, uint64_t *copies)
{
	uint64_t n = 0, m = 0;
	int has_m = 0, comma = 0;

	if ((s[++i] < '0' || s[i] > '9') && s[i] != ',')
		return 0;
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		if ((n = n * 10 + (uint64_t)(s[i] - '0')) > 100000)
			n = 100000;
	if (s[i] == ',') {
		comma = 1;
		for (i++; s[i] >= '0' && s[i] <= '9'; i++) {
			has_m = 1;
			if ((m = m * 10 + (uint64_t)(s[i] - '0')) > 100000)
				m = 100000;
		}
	}
	if (s[i] != '}')
		return 0;
	*copies = !comma ? n : !has_m ? n + 1 : (m > n ? m : n);
	if (*copies == 0)
		*copies = 1;
	return i;
}

int
kt_regex_check(const char *s, char *why, size_t n)
{
	struct frame st[DEPTH + 1];
	uint64_t copies = 1, total;
	size_t i, e = 0;
	int d = 0, rep = 0;	/* rep: the last thing was a repetition */

	memset(&st[0], 0, sizeof(st[0]));
	for (i = 0; s[i] != '\0'; i++) {
		struct frame *f = &st[d];
		int isrep = 0;

		switch (s[i]) {
		case '\\':
			if (s[i + 1] >= '1' && s[i + 1] <= '9') {
				snprintf(why, n, "back-references (\\%c) are "
				    "not part of extended regexes", s[i + 1]);
				return -1;
			}
			if (s[i + 1] != '\0')
				i++;
			f->cur = sat_add(f->cur, 1);
			f->last = 1;
			break;
		case '[':
			if ((e = bracket_end(s, i)) == 0)
				return 0;	/* regcomp says what is wrong */
			i = e;
			f->cur = sat_add(f->cur, 1);
			f->last = 1;
			break;
		case '(':
			if (d == DEPTH) {
				snprintf(why, n, "groups nested more than %d "
				    "deep", DEPTH);
				return -1;
			}
			memset(&st[++d], 0, sizeof(st[0]));
			break;
		case ')':
			if (d == 0) {
				f->cur = sat_add(f->cur, 1);
				f->last = 1;
				break;
			}
			total = sat_add(sat_add(f->alts, f->cur), 1);
			f = &st[--d];
			f->cur = sat_add(f->cur, total);
			f->last = total;
			break;
		case '|':
			f->alts = sat_add(f->alts, f->cur);
			f->cur = f->last = 0;
			break;
		case '*':
		case '?':
		case '+':
		case '{':
			if (s[i] == '{' && (e = interval(s, i, &copies)) == 0)
				goto atom;	/* a '{' of its own */
			if (f->last == 0)
				goto atom;	/* nothing to repeat: literal */
			if (rep) {
				snprintf(why, n, "'%c' repeats a repetition "
				    "(undefined in extended regexes)", s[i]);
				return -1;
			}
			/*
			 * The subtree grows by the operator's node; '+' and
			 * {n,m} copy it (a+ is a a*, a{3} is a a a).
			 */
			if (s[i] == '*' || s[i] == '?')
				total = sat_add(f->last, 1);
			else if (s[i] == '+')
				total = sat_add(sat_mul(f->last, 2), 1);
			else {
				i = e;
				total = sat_add(sat_mul(f->last, copies), 1);
			}
			f->cur = sat_add(f->cur, total - f->last);
			f->last = total;
			isrep = 1;
			break;
		default:
atom:
			f->cur = sat_add(f->cur, 1);
			f->last = 1;
		}
		rep = isrep;
		if (f->cur > KT_REGEX_MAX || f->last > KT_REGEX_MAX)
			goto big;
	}
	for (total = 0; d >= 0; d--)
		total = sat_add(total, sat_add(st[d].alts, st[d].cur));
	if (total <= KT_REGEX_MAX)
		return 0;
big:
	snprintf(why, n, "its repetitions make more than %d copies of its "
	    "parts", KT_REGEX_MAX);
	return -1;
}
