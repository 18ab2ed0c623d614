/*
 * mem.c: memory for held events: an arena of large chunks that never
 * move (so pointers into it stay valid), and an intern table that maps
 * byte strings (thread keys, names) to small dense ids.
 */
#define _DEFAULT_SOURCE	/* MADV_HUGEPAGE */

#include <sys/mman.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

#define ARENA_CHUNK	(64u << 20)
#define HUGE_PAGE	((uintptr_t)2 << 20)

void
kt_mem_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t e = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);

	if (p != NULL && n >= 8 * HUGE_PAGE && e > a)
		(void)madvise((void *)a, (size_t)(e - a), MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

struct chunk {
	struct chunk	*next;
	size_t		 used;
	size_t		 cap;
	char		 data[];
};

struct kt_arena {
	struct chunk	*head;
	uint64_t	 bytes;
};

void *
kt_zalloc(size_t n, size_t sz)
{
	void *p;

	if (n == 0 || sz == 0)
		return calloc(1, 1);
	if (n > SIZE_MAX / sz || (p = malloc(n * sz)) == NULL)
		return NULL;
	kt_mem_huge(p, n * sz);
	/* Not to be folded into a calloc by the compiler (GCC does). */
	__asm__ volatile("" : : "r"(p) : "memory");
	memset(p, 0, n * sz);
	return p;
}

struct kt_arena *
kt_arena_new(void)
{
	return calloc(1, sizeof(struct kt_arena));
}

void
kt_arena_free(struct kt_arena *a)
{
	struct chunk *c, *n;

	if (a == NULL)
		return;
	for (c = a->head; c != NULL; c = n) {
		n = c->next;
		free(c);
	}
	free(a);
}

char *
kt_arena_alloc(struct kt_arena *a, size_t n)
{
	struct chunk *c = a->head;
	char *p;

	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;

		/* Start small; grow toward the full chunk size. */
		if (a->head == NULL && n < (1u << 20))
			cap = 1u << 20;
		else if (a->head != NULL && a->head->cap < ARENA_CHUNK &&
		    n < a->head->cap * 2)
			cap = a->head->cap * 2;
		if ((c = malloc(sizeof(*c) + cap)) == NULL)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
	}
	p = c->data + c->used;
	c->used += n;
	a->bytes += n;
	return p;
}

char *
kt_arena_copy(struct kt_arena *a, const void *s, size_t n)
{
	char *p;

	if ((p = kt_arena_alloc(a, n)) != NULL && n > 0)
		memcpy(p, s, n);
	return p;
}

/* ------------------------------------------------------------------ */

struct entry {
	const char	*p;
	uint32_t	 n;
	uint32_t	 hash;
};

struct kt_intern {
	struct kt_arena	*arena;
	uint32_t	*slots;		/* id + 1, 0 empty */
	size_t		 nslots;
	struct entry	*ents;
	size_t		 n;
	size_t		 cap;
};

/*
 * Eight bytes at a time, each word mixed in by a multiply and a shift,
 * then the whole avalanched (the finaliser of MurmurHash3's 64-bit
 * hash): names run to tens of bytes, and a byte at a time (FNV-1a) was
 * 2% of kt views' CPU (and 8% of kt slice-window's while it interned
 * whole flow keys).  Only where an entry sits depends on it.
 */
uint32_t
kt_hash(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n, w;

	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (n > 0) {
		w = 0;
		memcpy(&w, b, n);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

struct kt_intern *
kt_intern_new(void)
{
	struct kt_intern *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((t->arena = kt_arena_new()) == NULL ||
	    (t->slots = calloc(64, sizeof(*t->slots))) == NULL) {
		kt_intern_free(t);
		return NULL;
	}
	t->nslots = 64;
	return t;
}

void
kt_intern_free(struct kt_intern *t)
{
	if (t == NULL)
		return;
	kt_arena_free(t->arena);
	free(t->slots);
	free(t->ents);
	free(t);
}

static int
grow(struct kt_intern *t)
{
	size_t ns = t->nslots * 2, i;
	uint32_t *s;

	if ((s = kt_zalloc(ns, sizeof(*s))) == NULL)
		return -1;
	for (i = 0; i < t->n; i++) {
		size_t j = t->ents[i].hash & (ns - 1);

		while (s[j] != 0)
			j = (j + 1) & (ns - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = ns;
	return 0;
}

int64_t
kt_intern_put(struct kt_intern *t, const char *p, size_t n)
{
	uint32_t h = kt_hash(p, n);
	size_t j = h & (t->nslots - 1);
	struct entry *e;

	while (t->slots[j] != 0) {
		e = &t->ents[t->slots[j] - 1];
		if (e->hash == h && e->n == n && memcmp(e->p, p, n) == 0)
			return t->slots[j] - 1;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;

		if ((e = realloc(t->ents, cap * sizeof(*e))) == NULL)
			return -1;
		t->ents = e;
		t->cap = cap;
	}
	e = &t->ents[t->n];
	if ((e->p = kt_arena_copy(t->arena, p, n)) == NULL)
		return -1;
	e->n = (uint32_t)n;
	e->hash = h;
	t->slots[j] = (uint32_t)++t->n;
	if (t->n * 2 > t->nslots && grow(t) == -1)
		return -1;
	return (int64_t)t->n - 1;
}

int64_t
kt_intern_find(const struct kt_intern *t, const char *p, size_t n)
{
	uint32_t h = kt_hash(p, n);
	size_t j = h & (t->nslots - 1);

	while (t->slots[j] != 0) {
		const struct entry *e = &t->ents[t->slots[j] - 1];

		if (e->hash == h && e->n == n && memcmp(e->p, p, n) == 0)
			return t->slots[j] - 1;
		j = (j + 1) & (t->nslots - 1);
	}
	return -1;
}

const char *
kt_intern_get(const struct kt_intern *t, uint32_t id, size_t *n)
{
	if (id >= t->n) {
		*n = 0;
		return NULL;
	}
	*n = t->ents[id].n;
	return t->ents[id].p;
}

size_t
kt_intern_count(const struct kt_intern *t)
{
	return t->n;
}
