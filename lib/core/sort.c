/*
 * sort.c: a stable LSD radix sort of (key, value) pairs.  Sorting events
 * means sorting small index records, never the text; stability is what
 * keeps the file order among equal timestamps.
 */
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

void
kt_qsort(void *b, size_t n, size_t sz, int (*cmp)(const void *,
    const void *))
{
	if (n > 1)
		qsort(b, n, sz, cmp);
}
