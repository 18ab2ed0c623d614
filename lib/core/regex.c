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
#include <stdlib.h>
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

/*
 * Literals: a set of strings, one of which every text an ERE matches
 * holds (kt_regex_literals).  At most LIT_N strings of LIT_LEN bytes.
 */
#define LIT_N	64
#define LIT_LEN	48
#define LIT_DEPTH	8	/* groups looked into, nested at most */

struct litset {
	int	 ok;			/* a set was found */
	size_t	 n;
	char	 s[LIT_N][LIT_LEN];
};

/* The shortest string of a set (its worth: longer is rarer). */
static size_t
lit_min(const struct litset *l)
{
	size_t i, m = SIZE_MAX;

	for (i = 0; i < l->n; i++)
		if (strlen(l->s[i]) < m)
			m = strlen(l->s[i]);
	return l->n ? m : 0;
}

/* Keep the better of *best and c (both may be unset). */
static void
lit_better(struct litset *best, const struct litset *c)
{
	size_t a, b;

	if (!c->ok)
		return;
	a = best->ok ? lit_min(best) : 0;
	b = lit_min(c);
	if (!best->ok || b > a || (b == a && c->n < best->n))
		*best = *c;
}

/* A run of plain characters ends: a set of one when it is long enough. */
static void
lit_run(struct litset *best, const char *run, size_t n)
{
	struct litset one;

	if (n < 2 || n >= LIT_LEN)
		return;
	one.ok = 1;
	one.n = 1;
	memcpy(one.s[0], run, n);
	one.s[0][n] = '\0';
	lit_better(best, &one);
}

/* The end of the group that starts at s[i] ('('): its ')', or 0. */
static size_t
group_end(const char *s, size_t i, size_t end)
{
	size_t depth = 0;

	for (; i < end; i++) {
		if (s[i] == '\\') {
			if (++i >= end)
				return 0;
		} else if (s[i] == '[') {
			if ((i = bracket_end(s, i)) == 0 || i >= end)
				return 0;
		} else if (s[i] == '(')
			depth++;
		else if (s[i] == ')' && --depth == 0)
			return i;
	}
	return 0;
}

static void lit_alts(const char *, size_t, size_t, struct litset *, int);

/*
 * The literals of one alternative s[i..end): the best of its longest
 * run of plain characters and the sets of the groups it needs (not
 * followed by ?, * or an interval), looked into down to LIT_DEPTH
 * groups deep (each level holds two sets on the stack).  Unset when it
 * has none.
 */
static void
lit_branch(const char *s, size_t i, size_t end, struct litset *best,
    int depth)
{
	char run[LIT_LEN];
	size_t rn = 0;
	int lastlit = 0;

	best->ok = 0;
	best->n = 0;
	while (i < end) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '(': {
			size_t e = group_end(s, i, end);
			struct litset g;

			lit_run(best, run, rn);
			rn = 0;
			lastlit = 0;
			if (e == 0) {
				best->ok = 0;
				return;
			}
			if (depth < LIT_DEPTH && (e + 1 >= end ||
			    (s[e + 1] != '?' && s[e + 1] != '*' &&
			    s[e + 1] != '{'))) {
				lit_alts(s, i + 1, e, &g, depth + 1);
				lit_better(best, &g);
			}
			i = e + 1;
			continue;
		}
		case '[': {
			size_t e = bracket_end(s, i);

			lit_run(best, run, rn);
			rn = 0;
			lastlit = 0;
			if (e == 0 || e >= end) {
				best->ok = 0;
				return;
			}
			i = e + 1;
			continue;
		}
		case '*':
		case '?':
		case '{':
			/* The atom before may be absent: not in the run. */
			if (lastlit && rn > 0)
				rn--;
			lit_run(best, run, rn);
			rn = 0;
			lastlit = 0;
			if (c == '{') {
				while (i < end && s[i] != '}')
					i++;
			}
			i++;
			continue;
		case '+':
			/* Once at least: the run ends after it, and a new one
			 * starts with it. */
			lit_run(best, run, rn);
			if (lastlit && rn > 0) {
				run[0] = run[rn - 1];
				rn = 1;
			} else
				rn = 0;
			i++;
			continue;
		case '\\':
			if (i + 1 >= end) {
				best->ok = 0;
				return;
			}
			c = (unsigned char)s[i + 1];
			i += 2;
			/* \w, \b, a back-reference...: not a character. */
			if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z') || c >= 0x80) {
				lit_run(best, run, rn);
				rn = 0;
				lastlit = 0;
				continue;
			}
			break;
		case '.':
		case '^':
		case '$':
		case ')':
		case '|':
			lit_run(best, run, rn);
			rn = 0;
			lastlit = 0;
			i++;
			continue;
		default:
			i++;
			if (c >= 0x80) {
				lit_run(best, run, rn);
				rn = 0;
				lastlit = 0;
				continue;
			}
			break;
		}
		/* A plain character c, lowercased (the match ignores case). */
		if (rn + 1 >= LIT_LEN) {
			lit_run(best, run, rn);
			rn = 0;
		}
		run[rn++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		lastlit = 1;
	}
	lit_run(best, run, rn);
}

/*
 * The literals of the alternation s[i..end): the union of its
 * alternatives' sets, unset when one of them has none.
 */
static void
lit_alts(const char *s, size_t i, size_t end, struct litset *out, int depth)
{
	struct litset b;
	size_t k, j;

	out->ok = 0;
	out->n = 0;
	for (;;) {
		/* The end of this alternative: a '|' at this level. */
		for (k = i; k < end && s[k] != '|'; k++) {
			if (s[k] == '\\')
				k++;
			else if (s[k] == '[') {
				if ((k = bracket_end(s, k)) == 0)
					return;
			} else if (s[k] == '(') {
				if ((k = group_end(s, k, end)) == 0)
					return;
			}
		}
		if (k > end)
			return;
		lit_branch(s, i, k, &b, depth);
		if (!b.ok || out->n + b.n > LIT_N)
			return;
		for (j = 0; j < b.n; j++)
			memcpy(out->s[out->n++], b.s[j], LIT_LEN);
		if (k >= end)
			break;
		i = k + 1;
	}
	out->ok = 1;
}

int
kt_regex_literals(const char *re, struct kt_buf *out)
{
	struct litset *l;
	size_t i;
	int rc = -1;

	out->n = 0;
	if ((l = malloc(sizeof(*l))) == NULL)
		return -1;
	lit_alts(re, 0, strlen(re), l, 0);
	if (l->ok && l->n > 0) {
		rc = 0;
		for (i = 0; i < l->n && rc == 0; i++)
			if (kt_buf_add(out, l->s[i], strlen(l->s[i]) + 1) == -1)
				rc = -1;
		if (rc == 0 && kt_buf_addc(out, '\0') == -1)
			rc = -1;
	}
	free(l);
	if (rc == -1)
		out->n = 0;
	return rc;
}

int
kt_regex_literals_in(const char *lits, const char *lower)
{
	for (; *lits != '\0'; lits += strlen(lits) + 1)
		if (strstr(lower, lits) != NULL)
			return 1;
	return 0;
}
