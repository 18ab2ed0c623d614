/*
 * fuzz/rules.c: a libFuzzer harness for bucket rule files (kt-bucket
 * --rules, kt views -r): kt_rules_load() on a file holding the input,
 * over rules already there or replacing them (the first byte chooses),
 * then kt_rules_match() and kt_rules_explain() on a few kernel names,
 * and the bucket names and classes; and the default rules matched
 * against the input's first lines as kernel names.  Any crash, leak or
 * sanitizer report is a bug, and so is a name that kt_rules_match (a
 * rule tried only where the name holds one of its literals,
 * kt_regex_literals) puts in another bucket than kt_rules_explain
 * (every rule given to regexec): the harness aborts.
 *
 * Speed: compiling the default rules (kt_rules_new(1)) cost more than
 * everything else of a run (about 300 runs a second), so they are
 * compiled once, in a static set the runs only match against; the set
 * each run loads into holds three cheap rules instead (the first byte
 * chooses them or none), which reach the same merging and replacing
 * of the rules there.  The file is a memfd made once, written again
 * each run, and named /proc/self/fd/N.
 */
#define _GNU_SOURCE

#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const names[] = {
	"", "void at::native::vectorized_elementwise_kernel<4>",
	"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)",
	"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
	"Memcpy HtoD (Pageable -> Device)", "flash_fwd_kernel",
	"\t\xff\xfe caf\xc3\xa9"
};

/* The same bucket with the literals' test and without it, or abort. */
static void
agree(const struct kt_rules *rs, const char *name, struct kt_buf *b)
{
	uint32_t a = kt_rules_match(rs, KT_KERNEL, name), x;

	b->n = 0;
	x = kt_rules_explain(rs, KT_KERNEL, name, b);
	if (x != KT_NO && x != a) {
		fprintf(stderr, "rules: '%s': %u matched, %u explained\n",
		    name, a, x);
		abort();
	}
}

/* The first four lines of the input (after its first byte) as kernel
 * names under rs: a bucket in range, the same with and without the
 * literals' test. */
static void
lines(const uint8_t *data, size_t size, const struct kt_rules *rs,
    struct kt_buf *b)
{
	const uint8_t *p, *e, *nl;
	char line[256];
	size_t i;

	for (p = data + 1, e = data + size, i = 0; p < e && i < 4; i++) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(e - p));
		n = (size_t)((nl ? nl : e) - p);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		if (kt_rules_match(rs, KT_KERNEL, line) >= kt_rules_nbuckets(rs))
			abort();
		agree(rs, line, b);
		p = nl ? nl + 1 : e;
	}
}

/* The default rules and the file, made once. */
static struct kt_rules *defaults;
static int memfd = -1;
static char mempath[64];

static int
setup(void)
{
	if (memfd != -1)
		return 0;
	if ((defaults = kt_rules_new(1)) == NULL)
		return -1;
	if ((memfd = memfd_create("kt-fuzz-rules", 0)) == -1)
		return -1;
	snprintf(mempath, sizeof(mempath), "/proc/self/fd/%d", memfd);
	return 0;
}

/* The rules a run loads over: none, or three cheap ones. */
static struct kt_rules *
rules_before(int some)
{
	struct kt_rules *rs;
	struct kt_error err;

	if ((rs = kt_rules_new(0)) == NULL || !some)
		return rs;
	if (kt_rules_add(rs, "communication", "nccl", &err) == -1 ||
	    kt_rules_add(rs, "gemm", "gemm|cutlass", &err) == -1 ||
	    kt_rules_add(rs, "mine", "^my_", &err) == -1) {
		kt_rules_free(rs);
		return NULL;
	}
	return rs;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_rules *rs;
	struct kt_error err;
	struct kt_buf b = KT_BUF_INIT;
	size_t i, nb;
	uint32_t id;

	if (size == 0 || size > 4096 || setup() == -1)
		return 0;
	if (ftruncate(memfd, 0) == -1 || (size > 1 &&
	    pwrite(memfd, data + 1, size - 1, 0) != (ssize_t)(size - 1)))
		return 0;
	if ((rs = rules_before(!(data[0] & 2))) != NULL) {
		(void)kt_rules_load(rs, mempath, data[0] & 1, &err);
		nb = kt_rules_nbuckets(rs);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			id = kt_rules_match(rs, KT_KERNEL, names[i]);
			if (id >= nb && nb > 0)
				abort();
			(void)kt_rules_bucket_name(rs, id);
			(void)kt_rules_class(rs, id);
			agree(rs, names[i], &b);
		}
		/* The input's lines, whose rules they may well match. */
		lines(data, size, rs, &b);
		(void)kt_rules_match(rs, KT_GPU_MEMCPY, names[1]);
		for (id = 0; id < nb + 1; id++)
			(void)kt_rules_bucket_name(rs, id);
		kt_rules_free(rs);
	}
	/* The first lines as kernel names under the default rules. */
	lines(data, size, defaults, &b);
	kt_buf_free(&b);
	return 0;
}
