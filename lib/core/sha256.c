/*
 * sha256.c: SHA-256 (FIPS 180-4), for reports that name their input by
 * its digest.  Streaming: init, update any number of times, final.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

/* Mix one 64-byte block into the state. */
static void
sha256_block(struct kt_sha256 *c, const unsigned char *p)
{
	uint32_t w[64], a, b, d, e, f, g, h, cc, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
		    (w[i - 2] >> 10)) + w[i - 7] + (ROR(w[i - 15], 7) ^
		    ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 16];
	a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3];
	e = c->h[4]; f = c->h[5]; g = c->h[6]; h = c->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + k256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & cc) ^ (b & cc));
		h = g; g = f; f = e; e = d + t1;
		d = cc; cc = b; b = a; a = t1 + t2;
	}
	c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
	c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KT_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>

/*
 * Mix n 64-byte blocks into the state with the x86 SHA extensions, four
 * rounds per step; the message schedule comes from sha256msg1/msg2.
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void
sha256_blocks_ni(uint32_t h[8], const unsigned char *p, size_t n)
{
	const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL,
	    0x0405060700010203ULL);
	__m128i s0, s1, t, m, w0, w1, w2, w3, abef, cdgh;
	int g;

/* Message words 4g..4g+3 of the block, big-endian. */
#define LOADW(g)	_mm_shuffle_epi8(_mm_loadu_si128( \
	(const __m128i *)(const void *)(p + 16 * (g))), mask)
/* Four rounds with words w and constants 4g..4g+3. */
#define RND4(w, g)	do { \
	m = _mm_add_epi32((w), _mm_loadu_si128( \
	    (const __m128i *)(const void *)&k256[4 * (g)])); \
	s1 = _mm_sha256rnds2_epu32(s1, s0, m); \
	m = _mm_shuffle_epi32(m, 0x0e); \
	s0 = _mm_sha256rnds2_epu32(s0, s1, m); \
} while (0)
/* The next four words into a, which holds the four before b, c, d. */
#define SCHED(a, b, c, d)	((a) = _mm_sha256msg2_epu32(_mm_add_epi32( \
	_mm_sha256msg1_epu32((a), (b)), _mm_alignr_epi8((d), (c), 4)), (d)))

	t = _mm_loadu_si128((const __m128i *)(const void *)&h[0]);
	s1 = _mm_loadu_si128((const __m128i *)(const void *)&h[4]);
	t = _mm_shuffle_epi32(t, 0xb1);			/* CDAB */
	s1 = _mm_shuffle_epi32(s1, 0x1b);		/* EFGH */
	s0 = _mm_alignr_epi8(t, s1, 8);			/* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xf0);		/* CDGH */
	for (; n > 0; n--, p += 64) {
		abef = s0;
		cdgh = s1;
		w0 = LOADW(0);
		RND4(w0, 0);
		w1 = LOADW(1);
		RND4(w1, 1);
		w2 = LOADW(2);
		RND4(w2, 2);
		w3 = LOADW(3);
		RND4(w3, 3);
		for (g = 4; g < 16; g += 4) {
			SCHED(w0, w1, w2, w3);
			RND4(w0, g);
			SCHED(w1, w2, w3, w0);
			RND4(w1, g + 1);
			SCHED(w2, w3, w0, w1);
			RND4(w2, g + 2);
			SCHED(w3, w0, w1, w2);
			RND4(w3, g + 3);
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}
	t = _mm_shuffle_epi32(s0, 0x1b);		/* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xb1);		/* DCHG */
	s0 = _mm_blend_epi16(t, s1, 0xf0);		/* DCBA */
	s1 = _mm_alignr_epi8(s1, t, 8);			/* HGFE */
	_mm_storeu_si128((__m128i *)(void *)&h[0], s0);
	_mm_storeu_si128((__m128i *)(void *)&h[4], s1);
#undef LOADW
#undef RND4
#undef SCHED
}

/* Does the CPU have the SHA extensions (and SSSE3, SSE4.1)? */
static int
have_sha_ni(void)
{
	unsigned a, b, c, d;

	if (getenv("KT_SHA256_GENERIC") != NULL)
		return 0;
	return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 9)) &&
	    (c & (1u << 19)) && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
	    (b & (1u << 29));
}
#endif

/* Mix n 64-byte blocks into the state. */
static void
sha256_blocks(struct kt_sha256 *c, const unsigned char *p, size_t n)
{
#ifdef KT_SHA_NI
	if (c->ni) {
		sha256_blocks_ni(c->h, p, n);
		return;
	}
#endif
	for (; n > 0; n--, p += 64)
		sha256_block(c, p);
}

/* Start a digest. */
void
kt_sha256_init(struct kt_sha256 *c)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
	};

	memcpy(c->h, h0, sizeof(c->h));
	c->len = 0;
#ifdef KT_SHA_NI
	c->ni = have_sha_ni();	/* asked once per digest, kept in it */
#else
	c->ni = 0;
#endif
	c->nbuf = 0;
}

/* Add n bytes of data. */
void
kt_sha256_update(struct kt_sha256 *c, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t take;

	c->len += (uint64_t)n;
	if (c->nbuf > 0) {
		take = 64 - c->nbuf;
		if (take > n)
			take = n;
		memcpy(c->buf + c->nbuf, p, take);
		c->nbuf += take;
		p += take;
		n -= take;
		if (c->nbuf < 64)
			return;
		sha256_blocks(c, c->buf, 1);
		c->nbuf = 0;
	}
	sha256_blocks(c, p, n / 64);
	p += n / 64 * 64;
	n %= 64;
	if (n > 0) {
		memcpy(c->buf, p, n);
		c->nbuf = n;
	}
}

/* Finish: the 32-byte digest into out.  c must be started again after. */
void
kt_sha256_final(struct kt_sha256 *c, unsigned char out[32])
{
	uint64_t bits = c->len * 8;
	int i;

	c->buf[c->nbuf++] = 0x80;
	if (c->nbuf > 56) {
		memset(c->buf + c->nbuf, 0, 64 - c->nbuf);
		sha256_blocks(c, c->buf, 1);
		c->nbuf = 0;
	}
	memset(c->buf + c->nbuf, 0, 56 - c->nbuf);
	for (i = 0; i < 8; i++)
		c->buf[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_blocks(c, c->buf, 1);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(c->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)c->h[i];
	}
	c->nbuf = 0;
}

/* Finish as 64 lowercase hex digits and a NUL into hex (65 bytes). */
void
kt_sha256_hex(struct kt_sha256 *c, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char d[32];
	int i;

	kt_sha256_final(c, d);
	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = '\0';
}

/*
 * The SHA-256 of the file at path as hex into hex (65 bytes).  0, or -1
 * with err filled.
 */
int
kt_sha256_file(const char *path, char hex[65], struct kt_error *err)
{
	struct kt_sha256 c;
	unsigned char buf[65536];
	FILE *f;
	size_t n;

	if ((f = fopen(path, "rb")) == NULL) {
		kt_error_set(err, path, 0, 0, "%s", strerror(errno));
		return -1;
	}
	kt_sha256_init(&c);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		kt_sha256_update(&c, buf, n);
	if (ferror(f)) {
		kt_error_set(err, path, 0, 0, "read error: %s", strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	kt_sha256_hex(&c, hex);
	return 0;
}

struct kt_sha256_job {
	pthread_t	 th;
	int		 running;
	char		*path;
	char		 hex[65];
	struct kt_error	 err;
	int		 rc;
};

static void *
job_run(void *arg)
{
	struct kt_sha256_job *j = arg;

	j->rc = kt_sha256_file(j->path, j->hex, &j->err);
	return NULL;
}

struct kt_sha256_job *
kt_sha256_start(const char *path, int threads)
{
	struct kt_sha256_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	if ((j->path = strdup(path)) == NULL) {
		free(j);
		return NULL;
	}
	if (threads && kt_thread_start(&j->th, job_run, j, "kt-sha256") == 0)
		j->running = 1;
	return j;
}

int
kt_sha256_wait(struct kt_sha256_job *j, char hex[65], struct kt_error *err)
{
	int rc;

	if (j->running)
		pthread_join(j->th, NULL);
	else
		job_run(j);
	rc = j->rc;
	if (rc == 0)
		memcpy(hex, j->hex, sizeof(j->hex));
	else if (err != NULL)
		*err = j->err;
	free(j->path);
	free(j);
	return rc;
}
