/*
 * fuzz/rules.c: a libFuzzer harness for bucket rule files (kt-bucket
 * --rules, kt views -r): kt_rules_load() on a temporary file holding
 * the input, over the default rules or replacing them (the first byte
 * chooses), then kt_rules_match() and kt_rules_explain() on a few
 * kernel names, and the bucket names and classes.  Any crash, leak or
 * sanitizer report is a bug.
 */
#define _POSIX_C_SOURCE 200809L

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kt_rules *rs;
	struct kt_error err;
	struct kt_buf b = KT_BUF_INIT;
	char path[] = "/tmp/kt-fuzz-rules.XXXXXX";
	size_t i, nb;
	uint32_t id;
	FILE *f;
	int fd;

	if (size == 0 || size > 4096)
		return 0;
	if ((fd = mkstemp(path)) == -1)
		return 0;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(path);
		return 0;
	}
	fwrite(data + 1, 1, size - 1, f);
	fclose(f);
	if ((rs = kt_rules_new(!(data[0] & 2))) != NULL) {
		(void)kt_rules_load(rs, path, data[0] & 1, &err);
		nb = kt_rules_nbuckets(rs);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			id = kt_rules_match(rs, KT_KERNEL, names[i]);
			if (id >= nb && nb > 0)
				abort();
			(void)kt_rules_bucket_name(rs, id);
			(void)kt_rules_class(rs, id);
			b.n = 0;
			(void)kt_rules_explain(rs, KT_KERNEL, names[i], &b);
		}
		(void)kt_rules_match(rs, KT_GPU_MEMCPY, names[1]);
		for (id = 0; id < nb + 1; id++)
			(void)kt_rules_bucket_name(rs, id);
		kt_rules_free(rs);
	}
	kt_buf_free(&b);
	unlink(path);
	return 0;
}
