/*
 * gpu.c: what GPU time is spent on and when: bucket rules (regexes over
 * kernel names, first match wins) and set operations on half-open
 * intervals of int64 ns.  The default rules are written to handle the
 * names real traces carry (NVIDIA and ROCm libraries, NCCL and RCCL,
 * DeepEP, Triton, flash attention); kt-bucket(1) lists them.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

/* The buckets every rule set has, in this order (ids 0..7). */
static const char *const std_buckets[] = {
	"attention", "gemm", "communication", "elementwise", "reduction",
	"norm", "transfer", "other"
};
#define B_COMM		2
#define B_TRANSFER	6
#define B_OTHER		7
#define NSTD		8

/*
 * The default rules, tried in this order on a kernel's function name
 * (kt_kernel_function: no return type, argument list or template
 * arguments, so that a parameter type such as cutlass::bfloat16_t or
 * flashinfer::... or a "bias" argument says nothing): communication
 * first (NCCL kernel names contain "Reduce"); Triton kernels by the
 * prefix Inductor gives them (what they do); KV-cache stores before
 * attention; attention before gemm (flash kernels are built from
 * cutlass); norm before gemm (cudnn::bn_*); reduction before
 * elementwise.
 */
static const struct {
	const char	*bucket;
	const char	*re;
} defaults[] = {
	{ "transfer", "^mem(cpy|set)( |$)" },
	{ "communication",
	    "nccl|rccl|msccl|all[-_]?reduce|all[-_]?gather|reduce[-_]?scatter|"
	    "all[-_]?to[-_]?all|send_?recv|c10d|deep_?ep|dpsk::ep|"
	    "notify_dispatch|cached_notify|nvshmem|multimem|userbuffers|"
	    "lamport|custom_?ar(_|$)|mscclpp|"
	    "cross_device_reduce|(^|[^a-z_])(dispatch|combine)(_?kernel|$)" },
	{ "gemm", "^triton_tem_" },
	{ "norm", "^triton_(red|per)_.*((layer|rms|group|batch)_?norm|"
	    "mean.*rsqrt|rsqrt.*var_mean)" },
	{ "reduction", "^triton_(red|per)_" },
	{ "elementwise", "^triton_poi_|store_?kv_?cache|reshape_and_cache|"
	    "concat_and_cache|append_?paged_?kv_?cache|copy_blocks|kv_?indices" },
	{ "attention",
	    "flash_?(attn|fwd|bwd)|flash::|fmha|sdpa|xformers|attention|attn|"
	    "scaled_dot_product|mha_(fwd|bwd)|sage_?(fwd|attn)|"
	    "(prefill|decode)_?with_?paged|batch_?(prefill|decode)|"
	    "merge_?state|paged_?attention" },
	{ "norm",
	    "(layer|rms|batch|group|instance)_?norm|norm_(fw|bw|fwd|bwd|kernel)|"
	    "bn_(fw|bw)|welford|gammabeta|rowwisemoments|"
	    "compute(internalgradients|(backward)?fusedparams)" },
	{ "gemm",
	    "(^|[^b])gemm|gemv|bmm|cutlass|cublas|xmma|cijk_|hipblas|rocblas|"
	    "wgmma|matmul|nvjet|splitkreduce|convolve|winograd|fprop|dgrad|"
	    "wgrad|conv(olution|_?[123]d|_fwd|_bwd|uni)|"
	    "cudnn(::(cnn|winograd|detail)|_)|scudnn|miopen|fft|"
	    "ck_moe|fused_moe|epilogue|cask_|flip_filter|^fc([-_]|$)" },
	{ "reduction",
	    "reduce|reduction|softmax|argmax|argmin|topk|cub::|rocprim|"
	    "radix|sort|scan|cumsum|nll_?loss|nllcriterion|cross_entropy|"
	    "(max|avg|average)_?pool|pooling|sum_kernel|mean_kernel|"
	    "(^|_)(sum|dot)(_|$)|vector_norm|(^|_)(min|max)_dim" },
	{ "elementwise",
	    "elementwise|vectorized|unrolled|pointwise|fill|copy|"
	    "cat_?array|index|gather|scatter|where|relu|gelu|silu|swiglu|"
	    "sigmoid|tanh|dropout|embedding|transpose|permute|rotary|rope|"
	    "act_and_mul|activation|bias|cast|convert|multi_tensor_apply|"
	    "foreach|adam|tensorop|im2d?2?col|quant|qparam|fp8|to_float|"
	    "float_to|scal(e|_)|nchw|nhwc|routing|upsample|interpolat|resize|"
	    "indices|offsets|bucketize|lengths|bounds_check|adagrad|^split_eb_|"
	    "(^|::|_)(add|sub|mul|div|divide|neg|log2?|exp|sqrt|rsqrt|abs|pow|"
	    "eq|ne|gt|ge|lt|le|cat|clip|clamp|nan_to_num)([-_.]|$)" },
};

/*
 * Op evidence: the innermost cpu_op around a kernel's launching call
 * says what the kernel is for, whatever its name: a GEMM op's kernels
 * are GEMM (cuBLAS split-K reductions and epilogues included), an
 * attention op's attention, a collective's communication.  Tried after
 * the rules of a --rules file and before the default rules; matched on
 * the whole op name, case-insensitive.  Ops that launch kernels of
 * several kinds (convolution's layout transposes and bias reductions)
 * are not evidence.
 */
static const struct {
	uint32_t	 bucket;		/* a std_buckets id */
	const char	*re;
} evidence[] = {
	{ 1, "^aten::(mm|bmm|addmm|addmv|addbmm|baddbmm|mv|matmul|linear|"
	    "_scaled_mm|_int_mm|_addmm_activation)$" },
	{ 0, "^aten::(_?scaled_dot_product|_flash_attention|"
	    "_efficient_attention|_cudnn_attention)|flash_?attn|"
	    "^vllm::unified_attention" },
	{ 2, "^(record_param_comms$|nccl:|c10d::|_?c10d_functional::)" },
};
#define NEVIDENCE	(sizeof(evidence) / sizeof(evidence[0]))

/*
 * Launchers whose one template argument is the kernel (CUTLASS, CK):
 * their function name says nothing, so the argument's name is added.
 */
static const char *const wrappers[] = {
	"cutlass::Kernel", "cutlass::Kernel2", "cutlass::device_kernel",
	"ck_tile::kentry"
};

/* Append s[0..n) without its template arguments; -1 if unbalanced. */
static int
untemplate(const char *s, size_t n, struct kt_buf *out)
{
	size_t i;
	int depth = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '<' && !(i >= 8 && memcmp(s + i - 8, "operator",
		    8) == 0))
			depth++;
		else if (s[i] == '>' && depth > 0 && !(i > 0 &&
		    s[i - 1] == '-'))
			depth--;
		else if (depth == 0)
			kt_buf_addc(out, s[i]);
	}
	return depth == 0 ? 0 : -1;
}

/*
 * Append the qualified name of an Itanium-mangled function name
 * (_Z[L] <len><id> or _ZN[rVK] <len><id>... E), its namespace kept and
 * read up to its template arguments (I) or its parameters: "_ZN5aiter24
 * add_rmsnorm_quant_kernelIDF16b...EEEvPT0_..." is
 * aiter::add_rmsnorm_quant_kernel.  -1, out unchanged, for what it does
 * not read (substitutions but a leading St, operators, constructors,
 * local names) and for a launcher, whose kernel is in its template
 * arguments: those are matched whole.
 */
static int
demangle_qname(const char *s, struct kt_buf *out)
{
	size_t at = out->n, len, i, ncomp = 0;
	int nested;

	if (strncmp(s, "_Z", 2) != 0)
		return -1;
	s += 2;
	if (*s == 'L')
		s++;
	if ((nested = *s == 'N') != 0)
		for (s++; *s == 'r' || *s == 'V' || *s == 'K'; s++)
			;
	for (;;) {
		if (ncomp == 0 && nested && s[0] == 'S' && s[1] == 't') {
			kt_buf_adds(out, "std");
			s += 2;
			ncomp++;
			continue;
		}
		if (*s == 'L' && nested)
			s++;
		if (*s < '1' || *s > '9')
			break;
		for (len = 0; *s >= '0' && *s <= '9'; s++) {
			if (len > 100000)
				goto fail;
			len = len * 10 + (size_t)(*s - '0');
		}
		if (strnlen(s, len) < len)
			goto fail;
		if (ncomp++ > 0)
			kt_buf_adds(out, "::");
		if (len == 12 && memcmp(s, "_GLOBAL__N_1", 12) == 0)
			kt_buf_adds(out, "(anonymous namespace)");
		else
			kt_buf_add(out, s, len);
		s += len;
		if (!nested)
			break;
	}
	/* A nested name goes on with template arguments or ends. */
	if (ncomp == 0 || (nested && *s != 'I' && *s != 'E'))
		goto fail;
	for (i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (out->n - at == strlen(wrappers[i]) &&
		    memcmp(out->p + at, wrappers[i], out->n - at) == 0)
			goto fail;
	return out->err ? -1 : 0;
fail:
	out->n = at;
	return -1;
}

int
kt_kernel_function(const char *name, struct kt_buf *out)
{
	size_t n = strlen(name), e, i, at = out->n;
	const char *lt;
	int depth;

	if (demangle_qname(name, out) == 0)
		return 0;
	if (out->err)
		return -1;

	/* The return type. */
	if (n > 5 && memcmp(name, "void ", 5) == 0) {
		name += 5;
		n -= 5;
	}
	/* The argument list: the balanced (...) that ends the name. */
	e = n;
	while (e > 0 && name[e - 1] == ' ')
		e--;
	if (e > 6 && memcmp(name + e - 6, " const", 6) == 0)
		e -= 6;
	if (e > 0 && name[e - 1] == ')') {
		for (depth = 0, i = e; i > 0; i--) {
			if (name[i - 1] == ')')
				depth++;
			else if (name[i - 1] == '(' && --depth == 0)
				break;
		}
		if (i > 1)
			e = i - 1;
	}
	if (untemplate(name, e, out) == -1) {
		out->n = at;
		kt_buf_add(out, name, e);
		return out->err ? -1 : 0;
	}
	/* A launcher: its template argument is the kernel. */
	for (i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (out->n - at == strlen(wrappers[i]) &&
		    memcmp(out->p + at, wrappers[i], out->n - at) == 0 &&
		    (lt = memchr(name, '<', e)) != NULL) {
			size_t gt = e;

			while (gt > 0 && name[gt - 1] != '>')
				gt--;
			kt_buf_addc(out, ' ');
			if (gt > 0 && name + gt - 1 > lt)
				(void)untemplate(lt + 1, (size_t)(name + gt -
				    1 - lt - 1), out);
			break;
		}
	while (out->n > at && out->p[out->n - 1] == ' ')
		out->n--;
	return out->err ? -1 : 0;
}

struct rule {
	uint32_t	 bucket;
	char		*text;		/* the regex */
	char		*origin;	/* "default", or "FILE:LINE" */
	int		 dflt;		/* a default rule */
	regex_t		 re;
	char		*lits;		/* kt_regex_literals, or NULL */
};

struct kt_rules {
	struct rule	*r;
	size_t		 n;
	size_t		 cap;
	char		**bucket;	/* bucket names by id */
	size_t		 nb;
	int		 evidence;	/* the op evidence is compiled */
	regex_t		 ev[NEVIDENCE];
	char		*evlits[NEVIDENCE];
};

/*
 * The strings one of which a text the regex re matches holds
 * (kt_regex_literals), a list of its own; NULL when there are none (or
 * out of memory): every text is then given to regexec.
 */
static char *
literals(const char *re)
{
	struct kt_buf b = KT_BUF_INIT;

	if (kt_regex_literals(re, &b) == -1) {
		kt_buf_free(&b);
		return NULL;
	}
	return b.p;
}

/* Whether regexec may match lower (s lowercased): a literal is there. */
static int
may_match(const char *lits, const char *lower)
{
	return lits == NULL || kt_regex_literals_in(lits, lower);
}

/* s lowercased into b ('\0' ended).  0, or -1 when out of memory. */
static int
lowered(const char *s, struct kt_buf *b)
{
	b->n = 0;
	for (; *s != '\0'; s++)
		if (kt_buf_addc(b, *s >= 'A' && *s <= 'Z' ? (char)(*s + 32) :
		    *s) == -1)
			return -1;
	return kt_buf_addc(b, '\0');
}

static void
rule_free(struct rule *r)
{
	regfree(&r->re);
	free(r->lits);
	free(r->text);
	free(r->origin);
}

void
kt_rules_free(struct kt_rules *rs)
{
	size_t i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->n; i++)
		rule_free(&rs->r[i]);
	for (i = 0; i < rs->nb; i++)
		free(rs->bucket[i]);
	if (rs->evidence)
		for (i = 0; i < NEVIDENCE; i++) {
			regfree(&rs->ev[i]);
			free(rs->evlits[i]);
		}
	free(rs->bucket);
	free(rs->r);
	free(rs);
}

/* The id of bucket name, added when new; KT_NO when out of memory. */
static uint32_t
bucket_id(struct kt_rules *rs, const char *name)
{
	char **nb;
	size_t i;

	for (i = 0; i < rs->nb; i++)
		if (strcmp(rs->bucket[i], name) == 0)
			return (uint32_t)i;
	if ((nb = realloc(rs->bucket, (rs->nb + 1) * sizeof(*nb))) == NULL)
		return KT_NO;
	rs->bucket = nb;
	if ((rs->bucket[rs->nb] = strdup(name)) == NULL)
		return KT_NO;
	return (uint32_t)rs->nb++;
}

/* Compile a rule into r.  0, or -1 with err set. */
static int
rule_make(struct kt_rules *rs, struct rule *r, const char *bucket,
    const char *re, const char *origin, struct kt_error *err)
{
	int rc;

	memset(r, 0, sizeof(*r));
	if (*bucket == '\0') {
		kt_error_set(err, NULL, 0, 0, "%s: empty bucket name", origin);
		return -1;
	}
	{
		char why[160];

		if (kt_regex_check(re, why, sizeof(why)) == -1) {
			kt_error_set(err, NULL, 0, 0, "%s: regex '%s': %s",
			    origin, re, why);
			return -1;
		}
	}
	if ((rc = regcomp(&r->re, re, REG_EXTENDED | REG_ICASE)) != 0) {
		char msg[160];

		regerror(rc, &r->re, msg, sizeof(msg));
		kt_error_set(err, NULL, 0, 0, "%s: regex '%s': %s", origin,
		    re, msg);
		return -1;
	}
	r->lits = literals(re);
	if ((r->bucket = bucket_id(rs, bucket)) == KT_NO ||
	    (r->text = strdup(re)) == NULL ||
	    (r->origin = strdup(origin)) == NULL) {
		rule_free(r);
		kt_error_set(err, NULL, 0, 0, "out of memory");
		return -1;
	}
	return 0;
}

/* Append a compiled rule. */
static int
rules_push(struct kt_rules *rs, const char *bucket, const char *re,
    const char *origin, struct kt_error *err)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct rule *nr;

		if ((nr = realloc(rs->r, cap * sizeof(*nr))) == NULL) {
			kt_error_set(err, NULL, 0, 0, "out of memory");
			return -1;
		}
		rs->r = nr;
		rs->cap = cap;
	}
	if (rule_make(rs, &rs->r[rs->n], bucket, re, origin, err) == -1)
		return -1;
	rs->r[rs->n].dflt = strcmp(origin, "default") == 0;
	rs->n++;
	return 0;
}

struct kt_rules *
kt_rules_new(int with_defaults)
{
	struct kt_rules *rs;
	struct kt_error err;
	size_t i;

	if ((rs = calloc(1, sizeof(*rs))) == NULL)
		return NULL;
	for (i = 0; i < NSTD; i++)
		if (bucket_id(rs, std_buckets[i]) == KT_NO) {
			kt_rules_free(rs);
			return NULL;
		}
	if (!with_defaults)
		return rs;
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (rules_push(rs, defaults[i].bucket, defaults[i].re,
		    "default", &err) == -1) {
			kt_rules_free(rs);
			return NULL;
		}
	for (i = 0; i < NEVIDENCE; i++)
		if (regcomp(&rs->ev[i], evidence[i].re, REG_EXTENDED |
		    REG_ICASE | REG_NOSUB) != 0) {
			while (i-- > 0) {
				regfree(&rs->ev[i]);
				free(rs->evlits[i]);
			}
			kt_rules_free(rs);
			return NULL;
		} else
			rs->evlits[i] = literals(evidence[i].re);
	rs->evidence = 1;
	return rs;
}

int
kt_rules_add(struct kt_rules *rs, const char *bucket, const char *re,
    struct kt_error *err)
{
	return rules_push(rs, bucket, re, "added", err);
}

int
kt_rules_load(struct kt_rules *rs, const char *path, int replace,
    struct kt_error *err)
{
	struct rule *old = rs->r;
	size_t nold = rs->n, i;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;
	int rc = 0;

	if ((f = fopen(path, "r")) == NULL) {
		kt_error_set(err, path, 0, 0, "%s", strerror(errno));
		return -1;
	}
	rs->r = NULL;
	rs->n = rs->cap = 0;
	while ((len = getline(&line, &cap, f)) != -1) {
		char origin[600], *tab, *re;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		snprintf(origin, sizeof(origin), "%s:%ld", path, lineno);
		if ((tab = strchr(line, '\t')) == NULL) {
			kt_error_set(err, path, lineno, 1,
			    "not bucket<TAB>regex");
			rc = -1;
			break;
		}
		*tab = '\0';
		for (re = tab + 1; *re == '\t'; re++)
			;
		if (rules_push(rs, line, re, origin, err) == -1) {
			if (err->line == 0) {
				/* Put the position in the error. */
				char msg[sizeof(err->msg)];
				size_t ol = strlen(origin) + 2;

				snprintf(msg, sizeof(msg), "%s",
				    strlen(err->msg) > ol ? err->msg + ol :
				    err->msg);
				kt_error_set(err, path, lineno, 1, "%s", msg);
			}
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		kt_error_set(err, path, 0, 0, "%s", strerror(errno));
		rc = -1;
	}
	free(line);
	fclose(f);
	if (rc == -1) {
		for (i = 0; i < rs->n; i++)
			rule_free(&rs->r[i]);
		free(rs->r);
		rs->r = old;
		rs->n = rs->cap = nold;
		return -1;
	}
	/* The file's rules first; then the old ones, unless replaced. */
	if (replace && rs->evidence) {
		for (i = 0; i < NEVIDENCE; i++) {
			regfree(&rs->ev[i]);
			free(rs->evlits[i]);
			rs->evlits[i] = NULL;
		}
		rs->evidence = 0;
	}
	for (i = 0; i < nold; i++) {
		if (replace) {
			rule_free(&old[i]);
			continue;
		}
		if (rs->n == rs->cap) {
			size_t ncap = rs->cap ? rs->cap * 2 : 16;
			struct rule *nr;

			if ((nr = realloc(rs->r, ncap * sizeof(*nr))) ==
			    NULL) {
				kt_error_set(err, path, 0, 0, "out of memory");
				for (; i < nold; i++)
					rule_free(&old[i]);
				free(old);
				return -1;
			}
			rs->r = nr;
			rs->cap = ncap;
		}
		rs->r[rs->n++] = old[i];
	}
	free(old);
	return 0;
}

/*
 * The index of the first rule matching a kernel's name, or rs->n; and
 * in *native whether it is one of PyTorch's own kernels (at::native::),
 * whose names say what they are (elementwise_kernel, reduce_kernel): no
 * op evidence for them, so that the bias add or the copy an aten::addmm
 * launches stays elementwise.
 */
static size_t
match_rule(const struct kt_rules *rs, const char *name, int *native)
{
	struct kt_buf fn = KT_BUF_INIT, low = KT_BUF_INIT;
	const char *s = name;
	size_t i;
	int lo;

	if (kt_kernel_function(name, &fn) == 0 && kt_buf_addc(&fn, '\0') == 0)
		s = fn.p;
	*native = strncmp(s, "at::native::", 12) == 0;
	/* A rule whose literals s lacks cannot match: no regexec. */
	lo = lowered(s, &low) == 0;
	for (i = 0; i < rs->n; i++)
		if ((!lo || may_match(rs->r[i].lits, low.p)) &&
		    regexec(&rs->r[i].re, s, 0, NULL, 0) == 0)
			break;
	kt_buf_free(&fn);
	kt_buf_free(&low);
	return i;
}

uint32_t
kt_rules_match(const struct kt_rules *rs, int kind, const char *name)
{
	size_t i;
	int native;

	if (kind == KT_GPU_MEMCPY || kind == KT_GPU_MEMSET)
		return B_TRANSFER;
	i = match_rule(rs, name, &native);
	return i < rs->n ? rs->r[i].bucket : B_OTHER;
}

/* The op evidence index of an op name, or -1. */
static int
match_evidence(const struct kt_rules *rs, const char *op)
{
	struct kt_buf low = KT_BUF_INIT;
	size_t i;
	int lo, e = -1;

	if (!rs->evidence)
		return -1;
	lo = lowered(op, &low) == 0;
	for (i = 0; i < NEVIDENCE; i++)
		if ((!lo || may_match(rs->evlits[i], low.p)) &&
		    regexec(&rs->ev[i], op, 0, NULL, 0) == 0) {
			e = (int)i;
			break;
		}
	kt_buf_free(&low);
	return e;
}

/*
 * Decide activity act's bucket, with caches by name id (rule index + 1,
 * 0 unknown; bit 31 a native kernel) and by op name id (evidence index
 * + 2, 1 none, 0 unknown), each of the model's name count or NULL.
 */
#define NATIVE	0x80000000u
static void
decide(const struct kt_rules *rs, const struct kt_model *m, uint32_t act,
    uint32_t *rcache, uint32_t *ecache, struct kt_decision *d)
{
	const struct kt_act *a = &m->act[act];
	size_t r;
	int e = -1, native;

	memset(d, 0, sizeof(*d));
	d->op = KT_NO;
	if (a->kind != KT_KERNEL) {
		d->bucket = B_TRANSFER;
		d->how = KT_DECIDED_KIND;
		return;
	}
	/* record_param_comms args make a collective, whatever its name. */
	if (a->comm != KT_NO && (m->comms[a->comm].coll != KT_NO ||
	    m->comms[a->comm].in_nelems >= 0)) {
		d->bucket = B_COMM;
		d->how = KT_DECIDED_ARGS;
		return;
	}
	if (rcache != NULL && rcache[a->name] != 0) {
		r = (rcache[a->name] & ~NATIVE) - 1;
		native = (rcache[a->name] & NATIVE) != 0;
	} else {
		r = match_rule(rs, kt_model_str(m, a->name), &native);
		if (rcache != NULL)
			rcache[a->name] = ((uint32_t)r + 1) |
			    (native ? NATIVE : 0);
	}
	if (r < rs->n && !rs->r[r].dflt) {
		d->bucket = rs->r[r].bucket;
		d->how = KT_DECIDED_RULE;
		d->rule = r;
		return;
	}
	d->op = kt_model_op_of(m, act);
	if (d->op != KT_NO && rs->evidence && !native) {
		uint32_t on = m->spans[d->op].name;

		if (ecache != NULL && ecache[on] != 0)
			e = (int)ecache[on] - 2;
		else {
			e = match_evidence(rs, kt_model_str(m, on));
			if (ecache != NULL)
				ecache[on] = (uint32_t)(e + 2);
		}
	}
	if (e >= 0) {
		d->bucket = evidence[e].bucket;
		d->how = KT_DECIDED_OP;
		d->rule = (size_t)e;
	} else if (r < rs->n) {
		d->bucket = rs->r[r].bucket;
		d->how = KT_DECIDED_RULE;
		d->rule = r;
	} else {
		d->bucket = B_OTHER;
		d->how = KT_DECIDED_NONE;
	}
}

void
kt_rules_decide(const struct kt_rules *rs, const struct kt_model *m,
    uint32_t act, struct kt_decision *d)
{
	decide(rs, m, act, NULL, NULL, d);
}

int
kt_rules_describe(const struct kt_rules *rs, const struct kt_model *m,
    const struct kt_decision *d, struct kt_buf *out)
{
	const struct rule *r;
	const char *op = d->op != KT_NO ?
	    kt_model_str(m, m->spans[d->op].name) : NULL;

	switch (d->how) {
	case KT_DECIDED_KIND:
		return kt_buf_adds(out, "every memcpy and memset is a "
		    "transfer");
	case KT_DECIDED_ARGS:
		return kt_buf_adds(out, "collective args (Collective name, "
		    "In msg nelems) make it communication");
	case KT_DECIDED_OP:
		return kt_buf_printf(out, "its launching op %s is %s (op "
		    "evidence /%s/)", op, rs->bucket[d->bucket],
		    evidence[d->rule].re);
	case KT_DECIDED_RULE:
		r = &rs->r[d->rule];
		return kt_buf_printf(out, "rule %zu (%s) %s /%s/%s%s",
		    d->rule + 1, r->origin, rs->bucket[r->bucket], r->text,
		    op != NULL ? "; its launching op " : "",
		    op != NULL ? op : "");
	default:
		return kt_buf_printf(out, "no rule matches%s%s",
		    op != NULL ? "; its launching op " : "",
		    op != NULL ? op : "");
	}
}

size_t
kt_rules_nbuckets(const struct kt_rules *rs)
{
	return rs->nb;
}

const char *
kt_rules_bucket_name(const struct kt_rules *rs, uint32_t b)
{
	return b < rs->nb ? rs->bucket[b] : "other";
}

enum kt_class
kt_rules_class(const struct kt_rules *rs, uint32_t b)
{
	(void)rs;
	if (b == B_COMM)
		return KT_CLASS_COMM;
	if (b == B_TRANSFER)
		return KT_CLASS_TRANSFER;
	return KT_CLASS_COMPUTE;
}

static uint32_t	explain_on(const struct kt_rules *, const char *,
		    const char *, struct kt_buf *);

uint32_t
kt_rules_explain(const struct kt_rules *rs, int kind, const char *name,
    struct kt_buf *out)
{
	char line[1024];
	struct kt_buf fn = KT_BUF_INIT;
	const char *s = name;
	uint32_t b;

	if (kind == KT_GPU_MEMCPY || kind == KT_GPU_MEMSET) {
		snprintf(line, sizeof(line), ": bucket transfer: every %s "
		    "is a transfer\n", kt_kind_name(kind));
		return kt_buf_adds(out, name) == -1 ||
		    kt_buf_adds(out, line) == -1 ? KT_NO : B_TRANSFER;
	}
	if (kt_kernel_function(name, &fn) == 0 &&
	    kt_buf_addc(&fn, '\0') == 0 && strcmp(fn.p, name) != 0) {
		s = fn.p;
		if (kt_buf_adds(out, "function name (what the rules "
		    "match): ") == -1 || kt_buf_adds(out, s) == -1 ||
		    kt_buf_addc(out, '\n') == -1) {
			kt_buf_free(&fn);
			return KT_NO;
		}
	}
	b = explain_on(rs, name, s, out);
	kt_buf_free(&fn);
	return b;
}

/* kt_rules_explain's rules, matched on s (the function name of name). */
static uint32_t
explain_on(const struct kt_rules *rs, const char *name, const char *s,
    struct kt_buf *out)
{
	char line[1024];
	size_t i;

	for (i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->r[i];
		regmatch_t pm[1];

		if (regexec(&r->re, s, 1, pm, 0) != 0) {
			snprintf(line, sizeof(line), "rule %zu (%s) %s /%s/: "
			    "no match\n", i + 1, r->origin,
			    rs->bucket[r->bucket], r->text);
			if (kt_buf_adds(out, line) == -1)
				return KT_NO;
			continue;
		}
		snprintf(line, sizeof(line), "rule %zu (%s) %s /%s/: "
		    "matches '%.*s' at offset %lld\n", i + 1, r->origin,
		    rs->bucket[r->bucket], r->text,
		    (int)(pm[0].rm_eo - pm[0].rm_so), s + pm[0].rm_so,
		    (long long)pm[0].rm_so);
		if (kt_buf_adds(out, line) == -1)
			return KT_NO;
		snprintf(line, sizeof(line), ": bucket %s\n",
		    rs->bucket[r->bucket]);
		return kt_buf_adds(out, name) == -1 ||
		    kt_buf_adds(out, line) == -1 ? KT_NO : r->bucket;
	}
	return kt_buf_adds(out, name) == -1 ||
	    kt_buf_adds(out, ": bucket other: no rule matches\n") == -1 ?
	    KT_NO : B_OTHER;
}

/* Activities [from, to) of m decided into out, with caches of their own. */
struct classify_job {
	const struct kt_rules	*rs;
	const struct kt_model	*m;
	uint32_t		*out;
	size_t			 from;
	size_t			 to;
	pthread_t		 th;
	int			 rc;		/* 0 or -1 (out of memory) */
};

static void *
classify_run(void *arg)
{
	struct classify_job *j = arg;
	size_t nn = kt_intern_count(j->m->names), i;
	uint32_t *rcache, *ecache;
	struct kt_decision d;

	j->rc = -1;
	if ((rcache = kt_zalloc(nn ? nn : 1, sizeof(*rcache))) == NULL)
		return NULL;
	if ((ecache = kt_zalloc(nn ? nn : 1, sizeof(*ecache))) == NULL) {
		free(rcache);
		return NULL;
	}
	for (i = j->from; i < j->to; i++) {
		decide(j->rs, j->m, (uint32_t)i, rcache, ecache, &d);
		j->out[i] = d.bucket;
	}
	free(rcache);
	free(ecache);
	j->rc = 0;
	return NULL;
}

#define CLASSIFY_THREAD	(1u << 15)	/* activities split on two threads,
					   at least */

uint32_t *
kt_rules_classify(const struct kt_rules *rs, const struct kt_model *m)
{
	struct classify_job a, b;
	uint32_t *out;
	int two;

	if ((out = malloc((m->nact ? m->nact : 1) * sizeof(*out))) == NULL)
		return NULL;
	a.rs = b.rs = rs;
	a.m = b.m = m;
	a.out = b.out = out;
	a.from = 0;
	a.to = b.from = b.to = m->nact;
	/*
	 * Many: the second half on a thread of its own, where the model
	 * was loaded with threads and there is a second CPU (each name's
	 * rule is then matched once per thread).
	 */
	if (m->nact >= CLASSIFY_THREAD && !(m->flags & KT_MODEL_ONE_THREAD) &&
	    kt_ahead_worth()) {
		a.to = b.from = m->nact / 2;
		if (kt_thread_start(&b.th, classify_run, &b, "kt-classify") ==
		    -1)
			a.to = m->nact;
	}
	two = a.to < m->nact;
	(void)classify_run(&a);
	if (two)
		pthread_join(b.th, NULL);
	if (a.rc == -1 || (two && b.rc == -1)) {
		free(out);
		return NULL;
	}
	return out;
}

/* ------------------------------------------------------------------ */
/* Intervals. */

static int
cmp_iv(const void *a, const void *b)
{
	const struct kt_iv *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

void
kt_iv_add(struct kt_iv *v, size_t *n, int64_t start, int64_t end)
{
	if (end <= start)
		return;
	if (*n > 0 && start <= v[*n - 1].end) {
		if (end > v[*n - 1].end)
			v[*n - 1].end = end;
		return;
	}
	v[*n].start = start;
	v[(*n)++].end = end;
}

size_t
kt_iv_union(struct kt_iv *v, size_t n)
{
	size_t i, k = 0;

	kt_qsort(v, n, sizeof(*v), cmp_iv);
	for (i = 0; i < n; i++)
		kt_iv_add(v, &k, v[i].start, v[i].end);
	return k;
}

int64_t
kt_iv_length(const struct kt_iv *v, size_t n)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < n; i++)
		t += v[i].end - v[i].start;
	return t;
}

int64_t
kt_iv_overlap(const struct kt_iv *a, size_t na, const struct kt_iv *b,
    size_t nb)
{
	size_t i = 0, j = 0;
	int64_t t = 0;

	while (i < na && j < nb) {
		int64_t s = a[i].start > b[j].start ? a[i].start : b[j].start;
		int64_t e = a[i].end < b[j].end ? a[i].end : b[j].end;

		if (e > s)
			t += e - s;
		if (a[i].end < b[j].end)
			i++;
		else
			j++;
	}
	return t;
}

int64_t
kt_iv_clip_length(const struct kt_iv *v, size_t n, int64_t start,
    int64_t end)
{
	size_t lo = 0, hi = n;
	int64_t t = 0;

	/* The first interval that ends after start. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo].start < end; lo++) {
		int64_t s = v[lo].start > start ? v[lo].start : start;
		int64_t e = v[lo].end < end ? v[lo].end : end;

		if (e > s)
			t += e - s;
	}
	return t;
}
