/*
 * sort.c: a stable LSD radix sort of (key, value) pairs.  Sorting events
 * means sorting small index records, never the text; stability is what
 * keeps the file order among equal timestamps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktint.h"

int
kt_sort_pairs(struct kt_pair *a, size_t n)
{
	struct kt_pair *tmp, *src = a, *dst;
	size_t count[256], i;
	int shift;

	if (n < 2)
		return 0;
	if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
		return -1;
	dst = tmp;
	for (shift = 0; shift < 64; shift += 8) {
		size_t sum = 0;
		int d;

		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i].key >> shift) & 255]++;
		/* Skip a digit that is the same for every key. */
		if (count[(src[0].key >> shift) & 255] == n)
			continue;
		for (d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & 255]++] = src[i];
		{
			struct kt_pair *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	return 0;
}

/*
 * Merge the sorted runs a[0..m) and a[m..n) through tmp, stably.  What
 * is in place already is left there: the left run's elements up to the
 * right run's first (found by halving), and the right run's from where
 * the left one ends (the merge stops there), so that a run that is
 * nearly in order costs little more than its few out of place.
 */
static void
merge(char *a, size_t m, size_t n, size_t sz, char *tmp,
    int (*cmp)(const void *, const void *, void *), void *ctx)
{
	size_t i = 0, j = m, k = 0, hi = m;

	if (cmp(a + (m - 1) * sz, a + m * sz, ctx) <= 0)
		return;				/* already in order */
	/* The first of the left run after a[m]: a[m - 1] is. */
	while (i < hi) {
		size_t mid = i + (hi - i) / 2;

		if (cmp(a + mid * sz, a + m * sz, ctx) <= 0)
			i = mid + 1;
		else
			hi = mid;
	}
	a += i * sz;
	m -= i;
	n -= i;
	i = 0;
	j = m;
	while (i < m && j < n) {
		if (cmp(a + j * sz, a + i * sz, ctx) < 0) {
			memcpy(tmp + k * sz, a + j * sz, sz);
			j++;
		} else {
			memcpy(tmp + k * sz, a + i * sz, sz);
			i++;
		}
		k++;
	}
	if (i < m)
		memcpy(tmp + k * sz, a + i * sz, (m - i) * sz);
	memcpy(a, tmp, (k + m - i) * sz);
}

/* Swap two elements of sz bytes in place. */
static void
swap(char *x, char *y, size_t sz)
{
	while (sz-- > 0) {
		char t = *x;

		*x++ = *y;
		*y++ = t;
	}
}

/*
 * Insertion sort of a[0..n) (stable, no memory): for short runs, and the
 * fallback when the merge buffer cannot be had.  An element of up to 128
 * bytes is taken out and the greater ones before it moved up at once;
 * a larger one goes back by adjacent swaps.
 */
static void
insertion(char *a, size_t n, size_t sz,
    int (*cmp)(const void *, const void *, void *), void *ctx)
{
	union {
		char	 c[128];
		uint64_t u;		/* aligned as the arrays sorted */
		void	*p;
	} t;
	size_t i, j;

	for (i = 1; i < n; i++) {
		if (cmp(a + (i - 1) * sz, a + i * sz, ctx) <= 0)
			continue;
		if (sz > sizeof(t.c)) {
			for (j = i; j > 0 && cmp(a + (j - 1) * sz, a + j * sz,
			    ctx) > 0; j--)
				swap(a + (j - 1) * sz, a + j * sz, sz);
			continue;
		}
		memcpy(t.c, a + i * sz, sz);
		for (j = i - 1; j > 0 && cmp(a + (j - 1) * sz, t.c, ctx) > 0; j--)
			;
		memmove(a + (j + 1) * sz, a + j * sz, (i - j) * sz);
		memcpy(a + j * sz, t.c, sz);
	}
}

void
kt_sort_r(void *base, size_t n, size_t sz, int (*cmp)(const void *,
    const void *, void *), void *ctx)
{
	char *a = base, *tmp;
	size_t run, w, i;

	if (n < 2)
		return;
	/* Runs of 16 by insertion, then bottom-up merges of doubling runs. */
	if (n > SIZE_MAX / sz || (tmp = malloc(n * sz)) == NULL) {
		insertion(a, n, sz, cmp, ctx);
		return;
	}
	for (i = 0; i < n; i += 16)
		insertion(a + i * sz, n - i < 16 ? n - i : 16, sz, cmp, ctx);
	for (run = 16; run < n; run *= 2)
		for (w = 0; w + run < n; w += 2 * run)
			merge(a + w * sz, run, n - w < 2 * run ? n - w : 2 * run,
			    sz, tmp, cmp, ctx);
	free(tmp);
}

/* Runs that kt_qsort merges, at most; moves its insertion makes, per
 * element, at most. */
#define NEAR_RUNS	8
#define NEAR_MOVES	4

/*
 * Merge the sorted run a[m..n) into the sorted run a[0..m) before it,
 * stably: the right run copied to buf, then merged from the back, so
 * that what is in place already (the left run's elements below the
 * right run's first) is not moved.
 */
static void
merge_back(char *a, size_t m, size_t n, size_t sz, char *buf,
    int (*cmp)(const void *, const void *))
{
	size_t i = m, j = n - m, k = n;

	memcpy(buf, a + m * sz, (n - m) * sz);
	while (j > 0) {
		if (i > 0 && cmp(a + (i - 1) * sz, buf + (j - 1) * sz) > 0)
			memcpy(a + --k * sz, a + --i * sz, sz);
		else
			memcpy(a + --k * sz, buf + --j * sz, sz);
	}
}

void
kt_qsort(void *b, size_t n, size_t sz, int (*cmp)(const void *,
    const void *))
{
	union {
		char	 c[128];
		uint64_t u;		/* aligned as the arrays sorted */
		void	*p;
	} tmp;
	char *a = b, *buf;
	size_t run[NEAR_RUNS + 1], nr = 0, most = 0, i, j, moves = 0;

	/*
	 * A trace's arrays come in order or nearly: rows by number, a
	 * device's activities by start, in a few runs (written buffer
	 * after buffer) or with a few out of place (streams apart).  A few
	 * runs are merged, each into those before it; otherwise each
	 * element is moved back past the few greater ones before it
	 * (insertion), and past NEAR_MOVES moves an element on average the
	 * rest is qsort's.  Both are stable, as glibc's merge sort is:
	 * equal elements keep their order either way.
	 */
	if (n < 2)
		return;
	for (i = 1; i < n; i++)
		if (cmp(a + (i - 1) * sz, a + i * sz) > 0) {
			if (nr == NEAR_RUNS)
				break;
			run[nr++] = i;
		}
	if (nr == 0)
		return;
	if (i == n) {
		run[nr] = n;
		for (j = 0; j < nr; j++)
			if (run[j + 1] - run[j] > most)
				most = run[j + 1] - run[j];
		if ((buf = malloc(most * sz)) != NULL) {
			for (j = 0; j < nr; j++)
				merge_back(a, run[j], run[j + 1], sz, buf, cmp);
			free(buf);
			return;
		}
	}
	if (sz > sizeof(tmp.c)) {
		qsort(b, n, sz, cmp);
		return;
	}
	/* What comes before the first descent is in order already. */
	for (i = run[0]; i < n; i++) {
		if (cmp(a + (i - 1) * sz, a + i * sz) <= 0)
			continue;
		memcpy(tmp.c, a + i * sz, sz);
		for (j = i - 1; j > 0 && cmp(a + (j - 1) * sz, tmp.c) > 0; j--)
			;
		memmove(a + (j + 1) * sz, a + j * sz, (i - j) * sz);
		memcpy(a + j * sz, tmp.c, sz);
		if ((moves += i - j) > NEAR_MOVES * n) {
			qsort(b, n, sz, cmp);
			return;
		}
	}
}
