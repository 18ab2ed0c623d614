/*
 * ktgen: deterministic generator of synthetic PyTorch profiler (Kineto)
 * Chrome-JSON traces, for the benchmarks and the tests of kt.
 *
 * It writes a Kineto-like trace of a transformer training run: per step
 * a ProfilerStep on the main CPU thread, python_function frames, cpu_op,
 * cuda_runtime launches with ac2g flows, kernels on the GPU, a backward
 * pass on a second CPU thread, NCCL all-reduces on a communication
 * stream, memcpy and memset, an optimizer section and [memory] instants.
 * With --graph, each step is one cudaGraphLaunch whose kernels run on
 * many streams.  All times are int64 nanoseconds, printed as
 * microseconds with three decimals like Kineto does since 2024.
 *
 * The output streams: only the records of one step are kept in memory.
 * The same arguments give byte-identical output.  With --truth it also
 * writes the ground truth (layer anchor kernels, per-step GPU busy time,
 * peak kernel concurrency) as TSV; with --truth-chain, the launch chain
 * of every GPU activity as indexes into traceEvents, counted as the
 * events are written.  See usage() and tests/ktgen.md.
 *
 * Build: cc -std=c99 -O2 -o ktgen tests/ktgen.c
 */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTCAP		(1 << 20)	/* output buffer, bytes */
#define MAXD		64		/* CPU nesting depth */
#define BASETIME	"1767225600000000000"	/* 2026-01-01 UTC, ns */
#define T0		27168130000000LL	/* first step, ns after the base (7.5 h) */
#define FIRSTSTEP	5		/* number of the first ProfilerStep */
#define CPUPID		12345		/* CPU pid of rank 0 */
#define BWDTID		211		/* backward thread tid = pid + this */
#define GPUPID		0		/* device 0 */
#define NUMSMS		132

/* model shape: 4 x 2048 tokens, hidden 2048, ffn 8192, vocab 32000 */
#define TOK		8192LL
#define HID		2048LL
#define FFN		8192LL
#define VOCAB		32000LL
#define PARAMS_LAYER	(12LL * HID * HID)

#define MEMBASE		0x7f2c40000000LL	/* first activation address */
#define MEMPARAMS	6442450944LL		/* allocated before the steps */
#define MEMRESERVED	8589934592LL		/* reserved before the steps */
#define SEGMENT		(2LL << 20)		/* allocator segment rounding */

/* CPU record kinds */
enum { CK_OP, CK_USER, CK_PY, CK_RT, CK_DRV, CK_MEM };

/* GPU record kinds */
enum { GK_KERNEL, GK_MEMCPY, GK_MEMSET, GK_ANN };

/* stream indexes in eager mode; graph mode uses 0..nstreams-1 */
enum { S_COMP, S_COMM, S_COPY };

/* passes of the truth file */
enum { P_FWD, P_BWD };

/* A kernel: name, launch shape, duration range. */
struct kspec {
	const char	*name;
	int		 grid[3];
	int		 block[3];
	int		 regs;
	int		 smem;
	int		 occ;		/* est. achieved occupancy % */
	int		 driver;	/* launched with cuLaunchKernel */
	int64_t		 dmin, dmax;	/* duration range, ns */
};

enum {
	K_EMB, K_LN, K_QKV, K_FLASH, K_OUT, K_ADD, K_LN2, K_FC1, K_GELU,
	K_FC2, K_LMHEAD, K_LSM, K_NLL, K_FILL, K_NLLB, K_LSMB, K_DGRAD,
	K_WGRAD, K_REDUCE, K_GELUB, K_LN2B, K_FDOT, K_FBWD, K_FCVT, K_LNB,
	K_GAMMA, K_EMBB, K_NCCL, K_ADAM, K_TINY, K_COUNT
};

static const struct kspec ktab[K_COUNT] = {
	[K_EMB] = { "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
	    { 1056, 1, 1 }, { 128, 1, 1 }, 32, 0, 88, 0, 18000, 26000 },
	[K_LN] = { "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
	    { 8192, 1, 1 }, { 32, 4, 1 }, 40, 0, 71, 0, 12000, 19000 },
	[K_QKV] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
	    { 48, 64, 1 }, { 384, 1, 1 }, 168, 213248, 19, 0, 150000, 210000 },
	[K_FLASH] = { "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t>>, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
	    { 16, 4, 16 }, { 128, 1, 1 }, 255, 49152, 6, 0, 180000, 260000 },
	[K_OUT] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
	    { 16, 128, 1 }, { 256, 1, 1 }, 154, 164864, 12, 0, 55000, 80000 },
	[K_ADD] = { "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
	    { 16384, 1, 1 }, { 128, 1, 1 }, 28, 0, 84, 0, 9000, 14000 },
	[K_LN2] = { "triton_red_fused_add_native_layer_norm_1",
	    { 8192, 1, 1 }, { 256, 1, 1 }, 38, 0, 77, 1, 14000, 22000 },
	[K_FC1] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
	    { 32, 64, 1 }, { 384, 1, 1 }, 168, 221184, 19, 0, 200000, 260000 },
	[K_GELU] = { "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
	    { 65536, 1, 1 }, { 128, 1, 1 }, 30, 0, 86, 0, 24000, 34000 },
	[K_FC2] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
	    { 8, 64, 1 }, { 384, 1, 1 }, 168, 221184, 19, 0, 200000, 260000 },
	[K_LMHEAD] = { "nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_TNT",
	    { 32, 125, 1 }, { 384, 1, 1 }, 168, 225280, 19, 0, 450000, 600000 },
	[K_LSM] = { "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
	    { 8192, 1, 1 }, { 1024, 1, 1 }, 37, 64, 92, 0, 120000, 170000 },
	[K_NLL] = { "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, long>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, long, long, long)",
	    { 1, 1, 1 }, { 32, 1, 1 }, 24, 1024, 1, 0, 4000, 7000 },
	[K_FILL] = { "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1>)",
	    { 262144, 1, 1 }, { 128, 1, 1 }, 16, 0, 90, 0, 60000, 90000 },
	[K_NLLB] = { "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, long>(c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, c10::BFloat16 const*, bool, int, int, long, long)",
	    { 1, 1, 1 }, { 1024, 1, 1 }, 26, 0, 2, 0, 8000, 14000 },
	[K_LSMB] = { "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, long)",
	    { 8192, 1, 1 }, { 1024, 1, 1 }, 40, 64, 90, 0, 150000, 200000 },
	[K_DGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
	    { 16, 64, 1 }, { 384, 1, 1 }, 168, 213248, 19, 0, 90000, 250000 },
	[K_WGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
	    { 16, 32, 1 }, { 384, 1, 1 }, 168, 221184, 19, 0, 100000, 260000 },
	[K_REDUCE] = { "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)",
	    { 32, 16, 1 }, { 32, 16, 1 }, 32, 16, 48, 0, 15000, 35000 },
	[K_GELUB] = { "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3>)",
	    { 65536, 1, 1 }, { 128, 1, 1 }, 32, 0, 85, 0, 38000, 52000 },
	[K_LN2B] = { "triton_red_fused_add_native_layer_norm_backward_3",
	    { 8192, 1, 1 }, { 256, 1, 1 }, 48, 0, 68, 1, 28000, 42000 },
	[K_FDOT] = { "void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t>>>(Flash_bwd_params)",
	    { 16, 4, 16 }, { 256, 1, 1 }, 40, 0, 44, 0, 9000, 15000 },
	[K_FBWD] = { "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t>>, true, false, false, false, false, true, false, false>(Flash_bwd_params)",
	    { 32, 4, 16 }, { 256, 1, 1 }, 255, 114688, 12, 0, 400000, 560000 },
	[K_FCVT] = { "void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t>>>(Flash_bwd_params, int)",
	    { 32, 4, 16 }, { 256, 1, 1 }, 64, 16384, 40, 0, 14000, 22000 },
	[K_LNB] = { "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
	    { 8192, 1, 1 }, { 128, 1, 1 }, 40, 0, 70, 0, 18000, 28000 },
	[K_GAMMA] = { "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 32u, 32u, 256u, false, false, true>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
	    { 64, 32, 1 }, { 32, 32, 1 }, 64, 8192, 45, 0, 22000, 36000 },
	[K_EMBB] = { "void at::native::(anonymous namespace)::indexing_backward_kernel<c10::BFloat16, 4>(long const*, long const*, c10::BFloat16*, c10::BFloat16*, long, long, long, long, bool)",
	    { 256, 16, 1 }, { 32, 4, 1 }, 56, 0, 30, 0, 40000, 70000 },
	[K_NCCL] = { "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	    { 24, 1, 1 }, { 640, 1, 1 }, 96, 9760, 7, 0, 250000, 900000 },
	[K_ADAM] = { "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, float*, float*, double, double, double, double, double, double, bool, float const*, float const*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, float*, float*, double, double, double, double, double, double, bool, float const*, float const*)",
	    { 2048, 1, 1 }, { 512, 1, 1 }, 72, 0, 42, 0, 180000, 320000 },
	/* --inject-tiny only */
	[K_TINY] = { "void at::native::unrolled_elementwise_kernel<at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
	    { 1, 1, 1 }, { 64, 1, 1 }, 16, 0, 3, 0, 1200, 3000 },
};

/*
 * What each kernel is, for --truth-buckets (the generator's own
 * knowledge, not a match on names).
 */
static const char *const kbucket[K_COUNT] = {
	[K_EMB] = "elementwise", [K_LN] = "norm", [K_QKV] = "gemm",
	[K_FLASH] = "attention", [K_OUT] = "gemm", [K_ADD] = "elementwise",
	[K_LN2] = "norm", [K_FC1] = "gemm", [K_GELU] = "elementwise",
	[K_FC2] = "gemm", [K_LMHEAD] = "gemm", [K_LSM] = "reduction",
	[K_NLL] = "reduction", [K_FILL] = "elementwise",
	[K_NLLB] = "reduction", [K_LSMB] = "reduction", [K_DGRAD] = "gemm",
	[K_WGRAD] = "gemm", [K_REDUCE] = "reduction",
	[K_GELUB] = "elementwise", [K_LN2B] = "norm",
	[K_FDOT] = "attention", [K_FBWD] = "attention",
	[K_FCVT] = "attention", [K_LNB] = "norm", [K_GAMMA] = "norm",
	[K_EMBB] = "elementwise", [K_NCCL] = "communication",
	[K_ADAM] = "elementwise", [K_TINY] = "elementwise",
};

/* Shapes of some cpu_ops (record_shapes), written before "Ev Idx". */
static const char A_EMB[] = "\"Input type\": [\"c10::BFloat16\", \"long int\", \"Scalar\", \"Scalar\", \"Scalar\"], \"Input Dims\": [[32000, 2048], [4, 2048], [], [], []]";
static const char A_LN[] = "\"Input type\": [\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"], \"Input Dims\": [[4, 2048, 2048], [], [2048], [2048], [], []]";
static const char A_QKV[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"], \"Input Dims\": [[6144], [8192, 2048], [2048, 6144], [], []]";
static const char A_OUT[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Dims\": [[8192, 2048], [2048, 2048]]";
static const char A_FC1[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"], \"Input Dims\": [[8192], [8192, 2048], [2048, 8192], [], []]";
static const char A_FC2[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"], \"Input Dims\": [[2048], [8192, 8192], [8192, 2048], [], []]";
static const char A_ADD[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"], \"Input Dims\": [[4, 2048, 2048], [4, 2048, 2048], []]";
static const char A_GELU[] = "\"Input type\": [\"c10::BFloat16\", \"\"], \"Input Dims\": [[4, 2048, 8192], []]";
static const char A_SDPA[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"\", \"Scalar\", \"Scalar\", \"\"], \"Input Dims\": [[4, 16, 2048, 128], [4, 16, 2048, 128], [4, 16, 2048, 128], [], [], [], []]";
static const char A_LMHEAD[] = "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Dims\": [[8192, 2048], [2048, 32000]]";
static const char A_TO[] = "\"Input type\": [\"long int\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"], \"Input Dims\": [[4, 2048], [], [], [], [], []]";

/* A CPU-side record of the current step. */
struct cev {
	int64_t		 ts, dur;	/* ns */
	int64_t		 a[4];		/* arguments, by kind */
	const char	*name;
	const char	*extra;		/* cpu_op shapes, or NULL */
	int32_t		 num;		/* appended to name if >= 0 */
	uint8_t		 kind;
	uint8_t		 thr;		/* 0 main, 1 backward */
	uint8_t		 flow;		/* runtime call with an ac2g flow */
	uint8_t		 seq;		/* a[1] is a sequence number */
	uint8_t		 fwdbwd;	/* a fwdbwd flow after it: 1 "s" (a
					 * forward op), 2 "f" (its node) */
	int		 up[5];		/* --truth-chain, launch calls: open
					 * cpu_op, annotation, step, frame */
	int64_t		 pos;		/* index in traceEvents, -1: none */
};

/* A GPU-side record of the current step. */
struct gev {
	int64_t		 ts, dur;	/* ns */
	int64_t		 ext, corr;
	int64_t		 bytes;		/* memcpy, memset; nelems for nccl */
	int64_t		 seq;		/* nccl Seq */
	int64_t		 node;		/* graph node id, -1 in eager mode */
	const struct kspec *k;		/* kernels */
	const char	*name;		/* others */
	int32_t		 stream;	/* tid */
	int32_t		 num;		/* appended to name if >= 0 */
	int		 launch;	/* launching call (cev), -1: none */
	int64_t		 pos;		/* index in traceEvents */
	uint8_t		 kind;
};

/* A layer anchor kernel of the current step, for the truth file. */
struct anchor {
	int		 pass, layer;
	size_t		 gi;		/* index into gev */
};

/* An interval end point, for union and peak concurrency. */
struct endpt {
	int64_t		 t;
	int		 d;		/* -1 end, +1 start */
};

/* Output: a big buffer written with write(2); fd -1 only counts. */
struct out {
	char		*buf;
	size_t		 len;
	int		 fd;
	uint64_t	 total;
};

/* Options. */
struct opts {
	int64_t		 size;
	int64_t		 steps;		/* 0: from size */
	int		 layers;
	int		 graph;
	int		 nstreams;
	int		 sshift;	/* --stream-shift */
	int		 rank, world;
	uint64_t	 seed;
	int		 nomem, nopy;
	const char	*outpath;
	const char	*truthpath;
	const char	*truthmore;	/* --truth-more FILE */
	int64_t		 injgap;	/* --inject-gap NS, 0: none */
	int		 injtiny;	/* --inject-tiny N, 0: none */
	const char	*truthbk;	/* --truth-buckets FILE */
	const char	*truthchain;	/* --truth-chain FILE */
};

/* An injected gap or tiny-kernel run of the current step. */
struct inj {
	int		 tiny;		/* 0: a gap */
	int		 layer;
	size_t		 a, b;		/* gev records: gap before a; run [a, b) */
};

/* Generator state. */
struct gen {
	const struct opts *o;
	int		 rank;		/* rank used for timing and ids */
	struct out	 out;
	FILE		*truth;
	FILE		*truthx;	/* --truth-more, or NULL */
	FILE		*truthc;	/* --truth-chain, or NULL */
	uint64_t	 rng;		/* timing PRNG, seeded with rank */
	uint64_t	 grng;		/* graph shape PRNG, seed only */
	int64_t		 pid, tid[2];
	int64_t		 extid, corr, evidx, pyid, seqnr, bseqnr, ncclseq;
	int64_t		 fseq0;		/* the step's first forward seqnr */
	int64_t		 cur[2];	/* CPU thread clocks, ns */
	int		 stk[2][MAXD];	/* open records, by thread */
	int		 sp[2];
	int		 stepno;
	uint64_t	 nev;		/* events written */
	int		 capture;	/* inside a CUDA graph body */
	/* streams */
	int		 ns;
	int64_t		*sfree;		/* when each stream is free */
	int32_t		*stid;		/* tid of each stream */
	uint8_t		*sused;
	/* graph replay */
	int64_t		 gcorr, gext, gstart, gnode;
	int		 glaunch;	/* the cudaGraphLaunch (cev) */
	int64_t		 wready, wend;
	int		 wleft, wpos, wfirst;
	/* memory */
	int64_t		*mstk;
	size_t		 msp, mcap;
	int64_t		 allocated, reserved, live;
	/* records */
	struct cev	*cev;
	size_t		 ncev, ccev;
	struct gev	*gev;
	size_t		 ngev, cgev;
	struct anchor	*anc;
	size_t		 nanc, canc;
	struct endpt	*ep;
	size_t		 cep;
	int64_t		 lossfirst, losslast;	/* gev range, -1 none */
	/* whole trace */
	int64_t		 tstart;	/* profiler start */
	int64_t		 gfirst, glast, cfirst, clast;
	int64_t		 tcount, tkern, tbusy, tkbusy, tunion;
	int64_t		 peak, peakstep, peakts;
	/* --truth-more: memory peaks (first in time), instants written */
	int64_t		 mpa, mpats, mpastep, mpr, mprts, mevents;
	struct endpt	*xiv;		/* intervals of one class */
	size_t		 cxiv;
	/* --inject-gap, --inject-tiny: this step's; --truth-buckets */
	struct inj	 inj[4];
	int		 ninj;
	int64_t		 bkcount[K_COUNT + 2], bksum[K_COUNT + 2];
};

static void	 usage(FILE *);
static void	 badusage(const char *, const char *);
static void	 die(const char *);
static void	*xrealloc(void *, size_t, size_t);
static int64_t	 parsenum(const char *, const char *, int64_t, int64_t, int);
static uint64_t	 splitmix(uint64_t *);
static int64_t	 rnd(struct gen *, int64_t, int64_t);
static void	 out_write(struct out *, const char *, size_t);
static void	 out_flush(struct out *);
static void	 put(struct out *, const char *, size_t);
static void	 putstr(struct out *, const char *);
static void	 putjstr(struct out *, const char *);
static void	 putu(struct out *, uint64_t);
static void	 puti(struct out *, int64_t);
static void	 putts(struct out *, int64_t);
static void	 putfix(struct out *, int64_t, int);
static void	 adv(struct gen *, int, int64_t, int64_t);
static int	 cadd(struct gen *, int, int, const char *, int);
static int64_t	 curext(struct gen *, int);
static int	 xopen(struct gen *, int, int, const char *, int);
static void	 done(struct gen *, int);
static void	 py(struct gen *, int, const char *, int);
static void	 user(struct gen *, int, const char *, int);
static void	 op(struct gen *, int, const char *, const char *, int);
static void	 evfn(struct gen *, int, const char *);
static int	 rtcall(struct gen *, int, int, const char *, int, int,
		    int64_t);
static size_t	 gadd(struct gen *, int, int, int64_t, int64_t);
static int64_t	 sched(struct gen *, int, int64_t, int64_t);
static void	 gpu_wait(struct gen *, int, int);
static int	 wavewidth(struct gen *);
static size_t	 node(struct gen *, const struct kspec *);
static size_t	 kern(struct gen *, int, int, int);
static void	 xfer(struct gen *, int, int, const char *, int64_t, int);
static void	 mem_alloc(struct gen *, int, int64_t);
static void	 mem_free(struct gen *, int);
static void	 anchor(struct gen *, int, int, size_t);
static void	 linear(struct gen *, int, int, const char *, const char *,
		    int, int64_t);
static void	 allreduce(struct gen *, int);
static void	 inject_gap(struct gen *, int, int);
static void	 inject_tiny(struct gen *, int);
static void	 truth_inj(struct gen *);
static void	 truth_buckets(struct gen *);
static int	 userframe(const char *, int);
static void	 chain_up(struct gen *, int, int);
static void	 chain_pos(FILE *, int64_t, int);
static void	 truth_chain(struct gen *);
static void	 fwd(struct gen *, int);
static void	 bwd(struct gen *, int);
static void	 opt(struct gen *, int);
static void	 step(struct gen *, int);
static void	 ev_begin(struct gen *);
static void	 emit_cev(struct gen *, const struct cev *);
static void	 emit_gev(struct gen *, const struct gev *);
static void	 emit_step(struct gen *);
static int	 endpt_cmp(const void *, const void *);
static void	 truth_step(struct gen *);
static void	 truth_more_step(struct gen *);
static void	 mem_note(struct gen *, const struct cev *);
static void	 header(struct gen *);
static void	 meta(struct gen *, const char *, int64_t, int64_t,
		    const char *, const char *, int64_t);
static void	 trailer(struct gen *);
static void	 gen_init(struct gen *, const struct opts *, int, int);
static void	 gen_free(struct gen *);
static uint64_t	 run(const struct opts *, int, int64_t, int, FILE *,
		    FILE *, FILE *);

static const char *const helptext[] = {
"usage: ktgen [options]",
"Write a synthetic, deterministic Kineto (PyTorch profiler) Chrome-JSON",
"trace of a transformer training run to stdout, or to FILE with -o.",
"",
"  -o, --output FILE   write FILE (uncompressed) instead of stdout",
"  -s, --size SIZE     approximate output size, suffix k, M or G (powers",
"                      of 1024); whole steps only; default 1M",
"  -n, --steps N       exactly N ProfilerSteps; --size is then ignored",
"  -l, --layers N      transformer layers per pass (default 12)",
"  -g, --graph         CUDA-graph mode: one cudaGraphLaunch per step, its",
"                      kernels spread over --streams streams",
"  -S, --streams N     streams of the graph (default 200)",
"  -R, --stream-shift K  --graph: in the i-th step (from 0) graph node j",
"                      runs on stream index (j + i * K) mod N, so a",
"                      replay puts a layer on other streams (default 0)",
"  -r, --rank R        rank in distributedInfo (default 0)",
"  -w, --world W       world size in distributedInfo (default 1)",
"  -e, --seed S        PRNG seed (default 1)",
"  -M, --no-memory     omit the [memory] instants",
"  -P, --no-python     omit the python_function events",
"  -t, --truth FILE    write the ground truth as TSV to FILE",
"  -x, --truth-more FILE  write more truth (compute/communication per",
"                      step and per NCCL kernel, memory peaks) to FILE",
"  -G, --inject-gap NS  in every step, a CPU stall of NS ns (after a GPU",
"                      sync) before the forward of layer layers/2: the",
"                      GPU idles; truth rows gap and gap-python",
"  -T, --inject-tiny N in every step, N tiny kernels (1.2-3 us) launched",
"                      in a row before the LM head; truth rows tiny",
"  -B, --truth-buckets FILE  write count and total ns per kernel bucket",
"                      (the generator's own labels) to FILE",
"  -C, --truth-chain FILE  write the launch chain of every GPU activity",
"                      (see Chain TSV below) to FILE",
"  -h, --help          print this help and exit",
"",
"Same arguments give byte-identical output.  Timing jitter depends on",
"seed and rank, the structure only on the other options: all ranks of one",
"run have the same events and step count (for --size the step count is",
"taken from a probe of rank 0).  --no-python and --no-memory drop events",
"but change no time stamp.  Times are relative to baseTimeNanoseconds",
BASETIME ".  Steps are numbered from 5.",
"",
"Streams (tid on pid 0): eager mode: compute 7, NCCL 20, copy 13 (memcpy",
"HtoD, memset); the NCCL stream overlaps compute.  --graph: streams",
"7, 11, 15, ... (7 + 4k, k < N), all graph kernels including NCCL, and",
"the memcpy and memset on stream 7, so exactly N tids if a step has at",
"least N kernels (a step has 29 * layers + 11 + layers / 4 kernels, plus",
"3 memcpy and 2 memset).  The graph is a chain of waves of 1 to 64",
"concurrent kernels (at most N), the same in every step; peak concurrency",
"is at most min(64, N) in graph mode (35 for the defaults) and 2 in eager",
"mode (compute and NCCL).  The exact value is in the truth file.",
"",
"Layer anchors: fwd: the vectorized_layer_norm_kernel that opens each",
"layer's forward; bwd: the layer_norm_grad_input_kernel_vectorized that",
"ends each layer's backward.  Each occurs once per layer and pass.",
"",
"Truth TSV: a header line, then tab-separated rows; '-' = not applicable.",
"Columns: kind step pass layer stream start_ns end_ns cpu_start_ns",
"cpu_end_ns count kernels busy_ns kernel_ns union_ns peak name",
"All times are ns since baseTimeNanoseconds (the trace ts times 1000).",
"  layer  one per anchor kernel, in execution order: step, pass (fwd or",
"         bwd), layer, stream (tid), start_ns, end_ns, name",
"  step   after its layers: step, start_ns/end_ns = first start and last",
"         end of the step's GPU activities (kernel, gpu_memcpy,",
"         gpu_memset; not gpu_user_annotation), cpu_start_ns/cpu_end_ns =",
"         the ProfilerStep X event, count = GPU activities, kernels =",
"         kernel events, busy_ns = sum of activity durations, kernel_ns =",
"         sum of kernel durations, union_ns = length of the union of the",
"         activities, peak = most activities running at once (intervals",
"         [ts, ts+dur), an end before a start at equal times), name =",
"         ProfilerStep#N.  Steps never overlap on the GPU.",
"  peak   the trace's peak concurrency: step = first step that reaches",
"         it, start_ns = when, peak",
"  total  sums over the trace: start_ns/end_ns, cpu_start_ns/cpu_end_ns,",
"         count, kernels, busy_ns, kernel_ns, union_ns, peak",
"",
"Chain TSV (-C): header row launch cpu_op annotation step frame_row",
"frame, then one row per GPU activity (kernel, gpu_memcpy, gpu_memset) in",
"file order.  Ids are 0-based indexes into traceEvents (every element,",
"metadata and flows included), '-' = none.  row = the activity, launch =",
"the call with its correlation (cudaLaunchKernel, cuLaunchKernel,",
"cudaMemcpyAsync, cudaMemsetAsync, or cudaGraphLaunch for every graph",
"kernel); on the call's thread, the innermost events that contain its",
"start ts: cpu_op, user_annotation (not ProfilerStep#N), step =",
"ProfilerStep#N (the main thread's for the backward thread), frame = python_function named FILE(LINE): FUNC whose",
"FILE is not library code (torch/, /torch/, site-packages/,",
"dist-packages/, <...>, lib/pythonX.Y/, a standard module such as",
"threading.py); frame_row its index.  Indexes follow the trace written,",
"so --no-python and --no-memory change them.",
NULL
};

/* Print the help text to fp. */
static void
usage(FILE *fp)
{
	int i;

	for (i = 0; helptext[i] != NULL; i++) {
		fputs(helptext[i], fp);
		fputc('\n', fp);
	}
}

/* Report a usage error in one line and exit 2. */
static void
badusage(const char *what, const char *arg)
{
	if (arg != NULL)
		fprintf(stderr, "ktgen: %s: %s\n", what, arg);
	else
		fprintf(stderr, "ktgen: %s\n", what);
	exit(2);
}

/* Report a system error and exit 1. */
static void
die(const char *what)
{
	fprintf(stderr, "ktgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* realloc n elements of size sz, or exit. */
static void *
xrealloc(void *p, size_t n, size_t sz)
{
	if (n != 0 && sz > SIZE_MAX / n) {
		errno = ENOMEM;
		die("realloc");
	}
	if ((p = realloc(p, n * sz)) == NULL)
		die("realloc");
	return p;
}

/*
 * Parse the value s of option opt as an integer in [lo, hi]; with
 * sizes, accept a suffix k, M or G (powers of 1024).
 */
static int64_t
parsenum(const char *opt, const char *s, int64_t lo, int64_t hi, int sizes)
{
	char *end, msg[64];
	long long v;
	int64_t mul = 1;

	snprintf(msg, sizeof(msg), "bad %s", opt);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || errno != 0)
		badusage(msg, s);
	if (sizes && *end != '\0' && end[1] == '\0') {
		switch (*end) {
		case 'k': case 'K':
			mul = 1LL << 10;
			break;
		case 'm': case 'M':
			mul = 1LL << 20;
			break;
		case 'g': case 'G':
			mul = 1LL << 30;
			break;
		default:
			badusage(msg, s);
		}
		end++;
	}
	if (*end != '\0' || v < 0 || v > hi / mul || v * mul < lo)
		badusage(msg, s);
	return (int64_t)v * mul;
}

/* splitmix64: the next 64-bit value of the state s. */
static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z;

	z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform random integer in [lo, hi] from the timing PRNG. */
static int64_t
rnd(struct gen *g, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(splitmix(&g->rng) % (uint64_t)(hi - lo + 1));
}

/* Write n bytes to the output file, or only count them. */
static void
out_write(struct out *o, const char *s, size_t n)
{
	ssize_t w;

	o->total += n;
	if (o->fd < 0)
		return;
	while (n > 0) {
		if ((w = write(o->fd, s, n)) < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		s += w;
		n -= (size_t)w;
	}
}

/* Write out the buffer. */
static void
out_flush(struct out *o)
{
	out_write(o, o->buf, o->len);
	o->len = 0;
}

/* Append n bytes to the output. */
static void
put(struct out *o, const char *s, size_t n)
{
	if (o->len + n > OUTCAP) {
		out_flush(o);
		if (n > OUTCAP) {
			out_write(o, s, n);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

#define PUTS(o, s)	put((o), (s), sizeof(s) - 1)

/* Append a NUL-terminated string. */
static void
putstr(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Append s escaped for a JSON string (no quotes added). */
static void
putjstr(struct out *o, const char *s)
{
	char t[8];

	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\') {
			t[0] = '\\';
			t[1] = *s;
			put(o, t, 2);
		} else if ((unsigned char)*s < 0x20) {
			snprintf(t, sizeof(t), "\\u%04x", (unsigned char)*s);
			put(o, t, 6);
		} else
			put(o, s, 1);
	}
}

/* Append an unsigned decimal. */
static void
putu(struct out *o, uint64_t v)
{
	char t[24];
	int n = sizeof(t);

	do {
		t[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	put(o, t + n, sizeof(t) - (size_t)n);
}

/* Append a signed decimal. */
static void
puti(struct out *o, int64_t v)
{
	if (v < 0) {
		PUTS(o, "-");
		putu(o, (uint64_t)0 - (uint64_t)v);
	} else
		putu(o, (uint64_t)v);
}

/* Append ns (>= 0) as microseconds with three decimals. */
static void
putts(struct out *o, int64_t ns)
{
	char t[32];
	uint64_t us = (uint64_t)ns / 1000, r = (uint64_t)ns % 1000;
	int n = sizeof(t);

	t[--n] = (char)('0' + r % 10);
	t[--n] = (char)('0' + r / 10 % 10);
	t[--n] = (char)('0' + r / 100);
	t[--n] = '.';
	do {
		t[--n] = (char)('0' + us % 10);
		us /= 10;
	} while (us != 0);
	put(o, t + n, sizeof(t) - (size_t)n);
}

/* Append v (>= 0, in units of 10^-dec) as a fixed decimal. */
static void
putfix(struct out *o, int64_t v, int dec)
{
	char t[40];
	uint64_t u = (uint64_t)v;
	int n = sizeof(t), i;

	for (i = 0; i < dec; i++) {
		t[--n] = (char)('0' + u % 10);
		u /= 10;
	}
	t[--n] = '.';
	do {
		t[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	put(o, t + n, sizeof(t) - (size_t)n);
}

/* Advance the clock of CPU thread thr by a random time in [lo, hi]. */
static void
adv(struct gen *g, int thr, int64_t lo, int64_t hi)
{
	if (!g->capture)
		g->cur[thr] += rnd(g, lo, hi);
}

/* Append a CPU record starting now on thread thr; return its index. */
static int
cadd(struct gen *g, int thr, int kind, const char *name, int num)
{
	struct cev *e;

	if (g->ncev == g->ccev) {
		g->ccev = g->ccev ? 2 * g->ccev : 4096;
		g->cev = xrealloc(g->cev, g->ccev, sizeof(*g->cev));
	}
	e = &g->cev[g->ncev];
	memset(e, 0, sizeof(*e));
	e->ts = g->cur[thr];
	e->name = name;
	e->num = num;
	e->kind = (uint8_t)kind;
	e->thr = (uint8_t)thr;
	e->up[0] = e->up[1] = e->up[2] = e->up[3] = e->up[4] = -1;
	e->pos = -1;
	return (int)g->ncev++;
}

/*
 * Whether python frame name (num appended if >= 0) is user code: of the
 * form "FILE(LINE): FUNC", with FILE not library code (torch/, /torch/,
 * site-packages/, dist-packages/, <...>, lib/pythonX.Y/, or a module of
 * the Python standard library).
 */
static int
userframe(const char *name, int num)
{
	static const char *const stdlib[] = {
		"abc", "argparse", "asyncio", "collections", "concurrent",
		"contextlib", "copy", "dataclasses", "enum", "functools",
		"importlib", "inspect", "logging", "multiprocessing", "os",
		"pickle", "queue", "runpy", "selectors", "subprocess",
		"threading", "traceback", "typing", "unittest", "warnings",
		"weakref", NULL
	};
	const char *p, *q, *r;
	size_t n, len;
	int i;

	if ((p = strstr(name, "): ")) == NULL || (p[3] == '\0' && num < 0))
		return 0;
	for (q = p; q > name && q[-1] >= '0' && q[-1] <= '9'; q--)
		;
	if (q == p || q - 1 <= name || q[-1] != '(')
		return 0;
	len = (size_t)(q - 1 - name);
	if (name[0] == '<' || strncmp(name, "torch/", 6) == 0)
		return 0;
	for (r = name; r + 1 < q; r++)
		if (strncmp(r, "/torch/", 7) == 0 ||
		    strncmp(r, "site-packages/", 14) == 0 ||
		    strncmp(r, "dist-packages/", 14) == 0 ||
		    (strncmp(r, "lib/python", 10) == 0 && r[10] >= '0' &&
		    r[10] <= '9'))
			return 0;
	/* a standard module: its first path component, less ".py" */
	for (n = 0; n < len && name[n] != '/'; n++)
		;
	if (n == len && n > 3 && strncmp(name + n - 3, ".py", 3) == 0)
		n -= 3;
	for (i = 0; stdlib[i] != NULL; i++)
		if (strlen(stdlib[i]) == n && strncmp(name, stdlib[i], n) == 0)
			return 0;
	return 1;
}

/*
 * --truth-chain: note in the launch call i of thread thr the innermost
 * open cpu_op, user_annotation (not a ProfilerStep), ProfilerStep and
 * user python frame, which are the records of the thread that contain
 * its start.
 */
static void
chain_up(struct gen *g, int thr, int i)
{
	struct cev *c = &g->cev[i];
	const struct cev *e;
	size_t n;
	int j, k, w;

	for (j = g->sp[thr] - 1; j >= 0; j--) {
		k = g->stk[thr][j];
		e = &g->cev[k];
		if (e->kind == CK_OP)
			w = 0;
		else if (e->kind == CK_USER)
			w = strncmp(e->name, "ProfilerStep#", 13) == 0 ? 2 : 1;
		else if (e->kind == CK_PY && userframe(e->name, e->num))
			w = 3;
		else
			continue;
		if (c->up[w] < 0)
			c->up[w] = k;
	}
	/*
	 * A backward call: the innermost autograd node above it names its
	 * forward op by sequence number (the step's forward pass made it);
	 * without a frame of its own the call has the forward op's.
	 */
	for (j = g->sp[thr] - 1; j >= 0; j--) {
		e = &g->cev[g->stk[thr][j]];
		if (e->kind != CK_OP || e->seq != 2)
			continue;
		for (n = 0; n < g->ncev; n++)
			if (g->cev[n].kind == CK_OP && g->cev[n].seq == 1 &&
			    g->cev[n].a[1] == e->a[1])
				break;
		if (n < g->ncev) {
			c->up[4] = (int)n;
			if (c->up[3] < 0)
				c->up[3] = g->cev[n].up[3];
		}
		break;
	}
	/* The step is the rank's: a backward call is in the main thread's. */
	for (j = g->sp[0] - 1; thr != 0 && c->up[2] < 0 && j >= 0; j--) {
		e = &g->cev[g->stk[0][j]];
		if (e->kind == CK_USER &&
		    strncmp(e->name, "ProfilerStep#", 13) == 0)
			c->up[2] = g->stk[0][j];
	}
}

/* External id of the innermost open cpu_op or user_annotation. */
static int64_t
curext(struct gen *g, int thr)
{
	int i;
	const struct cev *e;

	for (i = g->sp[thr] - 1; i >= 0; i--) {
		e = &g->cev[g->stk[thr][i]];
		if (e->kind == CK_OP || e->kind == CK_USER)
			return e->a[0];
	}
	return 0;
}

/*
 * Open an X event of kind on thread thr; it ends at the matching done().
 * Returns its index, or -1 inside a graph body (nothing runs on the CPU).
 */
static int
xopen(struct gen *g, int thr, int kind, const char *name, int num)
{
	struct cev *e;
	int i, j;

	if (g->capture)
		return -1;
	i = cadd(g, thr, kind, name, num);
	e = &g->cev[i];
	if (kind == CK_PY) {
		e->a[0] = ++g->pyid;
		e->a[1] = -1;
		for (j = g->sp[thr] - 1; j >= 0; j--)
			if (g->cev[g->stk[thr][j]].kind == CK_PY) {
				e->a[1] = g->cev[g->stk[thr][j]].a[0];
				break;
			}
	} else
		e->a[0] = ++g->extid;
	if (g->sp[thr] == MAXD) {
		fprintf(stderr, "ktgen: nesting too deep\n");
		exit(1);
	}
	g->stk[thr][g->sp[thr]++] = i;
	adv(g, thr, kind == CK_PY ? 300 : 500, kind == CK_PY ? 1200 : 2500);
	return i;
}

/* Close the innermost open X event of thread thr. */
static void
done(struct gen *g, int thr)
{
	int i;

	if (g->capture)
		return;
	adv(g, thr, 200, 1200);
	i = g->stk[thr][--g->sp[thr]];
	g->cev[i].dur = g->cur[thr] - g->cev[i].ts;
	adv(g, thr, 100, 800);
}

/* Open a python_function frame. */
static void
py(struct gen *g, int thr, const char *name, int num)
{
	xopen(g, thr, CK_PY, name, num);
}

/* Open a user_annotation. */
static void
user(struct gen *g, int thr, const char *name, int num)
{
	xopen(g, thr, CK_USER, name, num);
}

/*
 * Open a cpu_op with optional shapes; with seq, give it a forward
 * sequence number.
 */
static void
op(struct gen *g, int thr, const char *name, const char *extra, int seq)
{
	int i;

	if ((i = xopen(g, thr, CK_OP, name, -1)) < 0)
		return;
	g->cev[i].extra = extra;
	if (seq) {
		g->cev[i].seq = 1;
		g->cev[i].a[1] = ++g->seqnr;
		/* Its user frame, for the backward calls of its node. */
		if (g->truthc != NULL)
			chain_up(g, thr, i);
	}
}

/*
 * Open the two cpu_ops of an autograd node on the backward thread:
 * "autograd::engine::evaluate_function: X" and X.  Close both with done().
 */
static void
evfn(struct gen *g, int thr, const char *node_name)
{
	static const char *const evname[] = {
		"autograd::engine::evaluate_function: NllLossBackward0",
		"autograd::engine::evaluate_function: LogSoftmaxBackward0",
		"autograd::engine::evaluate_function: MmBackward0",
		"autograd::engine::evaluate_function: AddBackward0",
		"autograd::engine::evaluate_function: AddmmBackward0",
		"autograd::engine::evaluate_function: GeluBackward0",
		"autograd::engine::evaluate_function: CompiledFunctionBackward",
		"autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0",
		"autograd::engine::evaluate_function: NativeLayerNormBackward0",
		"autograd::engine::evaluate_function: EmbeddingBackward0",
		NULL
	};
	static const char prefix[] = "autograd::engine::evaluate_function: ";
	const char *outer = "autograd::engine::evaluate_function";
	int i, k;

	for (k = 0; evname[k] != NULL; k++)
		if (strcmp(evname[k] + sizeof(prefix) - 1, node_name) == 0) {
			outer = evname[k];
			break;
		}
	op(g, thr, outer, NULL, 0);
	if ((i = xopen(g, thr, CK_OP, node_name, -1)) < 0)
		return;
	g->cev[i].seq = 2;
	/*
	 * The nodes count down the step's forward sequence numbers; the
	 * ones past its first (more nodes than numbered forward ops) get
	 * 0, a number no forward op has.
	 */
	g->cev[i].a[1] = g->bseqnr >= g->fseq0 && g->bseqnr > 0 ?
	    g->bseqnr-- : 0;
}

/*
 * Record a runtime (or driver) call of duration dur on thread thr, with
 * a new correlation id; flow asks for an ac2g "s" after it.  Returns its
 * index, or -1 inside a graph body.
 */
static int
rtcall(struct gen *g, int thr, int kind, const char *name, int cbid, int flow,
    int64_t dur)
{
	struct cev *e;
	int i;

	if (g->capture)
		return -1;
	i = cadd(g, thr, kind, name, -1);
	e = &g->cev[i];
	e->a[0] = curext(g, thr);
	e->a[1] = cbid;
	e->a[2] = ++g->corr;
	e->flow = (uint8_t)flow;
	e->dur = dur;
	if (flow && g->truthc != NULL)
		chain_up(g, thr, i);
	g->cur[thr] += dur;
	adv(g, thr, 300, 1500);
	return i;
}

/* Append a GPU record on stream index s; return its index. */
static size_t
gadd(struct gen *g, int kind, int s, int64_t ts, int64_t dur)
{
	struct gev *e;

	if (g->ngev == g->cgev) {
		g->cgev = g->cgev ? 2 * g->cgev : 1024;
		g->gev = xrealloc(g->gev, g->cgev, sizeof(*g->gev));
	}
	e = &g->gev[g->ngev];
	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->dur = dur;
	e->kind = (uint8_t)kind;
	e->node = -1;
	e->num = -1;
	e->launch = -1;
	e->pos = -1;
	if (s >= 0) {
		e->stream = g->stid[s];
		g->sused[s] = 1;
	}
	return g->ngev++;
}

/*
 * Schedule work of length dur on stream s, ready at time ready: it
 * starts when the stream is free after a small gap.  Returns the start.
 */
static int64_t
sched(struct gen *g, int s, int64_t ready, int64_t dur)
{
	int64_t t, f;

	f = g->sfree[s] + rnd(g, 600, 2500);
	t = ready > f ? ready : f;
	g->sfree[s] = t + dur;
	return t;
}

/* Stream dst waits for the work queued so far on stream src. */
static void
gpu_wait(struct gen *g, int dst, int src)
{
	if (!g->capture && g->sfree[dst] < g->sfree[src])
		g->sfree[dst] = g->sfree[src];
}

/* Width of the next wave of the graph, from the graph PRNG. */
static int
wavewidth(struct gen *g)
{
	uint64_t r = splitmix(&g->grng) % 100, x = splitmix(&g->grng);
	int w;

	if (r < 50)
		w = 1;
	else if (r < 80)
		w = 2 + (int)(x % 3);
	else if (r < 95)
		w = 5 + (int)(x % 12);
	else
		w = 17 + (int)(x % 48);
	return w < g->ns ? w : g->ns;
}

/*
 * Add a kernel node of the graph being replayed.  Node j runs on stream
 * j mod nstreams; nodes form waves that run concurrently, and a wave
 * starts when the previous one has finished.
 */
static size_t
node(struct gen *g, const struct kspec *k)
{
	struct gev *e;
	int64_t dur, t, f;
	size_t gi;
	int s;

	if (g->wleft == 0) {
		g->wready = g->wfirst ? g->gstart : g->wend + rnd(g, 1000, 3000);
		g->wfirst = 0;
		g->wleft = wavewidth(g);
		g->wpos = 0;
		g->wend = g->wready;
	}
	s = (int)((g->gnode + (uint64_t)(g->stepno - FIRSTSTEP) *
	    (uint64_t)g->o->sshift) % (uint64_t)g->ns);
	dur = rnd(g, k->dmin, k->dmax);
	t = g->wready + g->wpos * rnd(g, 300, 1500);
	f = g->sfree[s] + rnd(g, 600, 2500);
	if (f > t)
		t = f;
	g->sfree[s] = t + dur;
	if (t + dur > g->wend)
		g->wend = t + dur;
	g->wpos++;
	g->wleft--;
	gi = gadd(g, GK_KERNEL, s, t, dur);
	e = &g->gev[gi];
	e->k = k;
	e->ext = g->gext;
	e->corr = g->gcorr;
	e->launch = g->glaunch;
	e->node = (1LL << 32) + g->gnode + 1;
	g->gnode++;
	return gi;
}

/*
 * Launch kernel kid on stream s from thread thr: a cudaLaunchKernel (or
 * cuLaunchKernel) with a flow, and the kernel a bit later.  Inside a
 * graph body, add a graph node instead.  Returns the kernel's index.
 */
static size_t
kern(struct gen *g, int thr, int kid, int s)
{
	const struct kspec *k = &ktab[kid];
	struct gev *e;
	int64_t dur, ts;
	size_t gi;
	int i;

	if (g->capture)
		return node(g, k);
	i = rtcall(g, thr, k->driver ? CK_DRV : CK_RT,
	    k->driver ? "cuLaunchKernel" : "cudaLaunchKernel",
	    k->driver ? 307 : 211, 1, rnd(g, 2500, 7000));
	dur = rnd(g, k->dmin, k->dmax);
	ts = sched(g, s, g->cev[i].ts + rnd(g, 1500, 4000), dur);
	gi = gadd(g, GK_KERNEL, s, ts, dur);
	e = &g->gev[gi];
	e->k = k;
	e->ext = g->cev[i].a[0];
	e->corr = g->cev[i].a[2];
	e->launch = i;
	return gi;
}

/* A cudaMemcpyAsync or cudaMemsetAsync of bytes on stream s. */
static void
xfer(struct gen *g, int thr, int kind, const char *name, int64_t bytes, int s)
{
	struct gev *e;
	int64_t dur, ts;
	size_t gi;
	int i;

	if (kind == GK_MEMCPY) {
		i = rtcall(g, thr, CK_RT, "cudaMemcpyAsync", 41, 1,
		    rnd(g, 4000, 12000));
		dur = 900 + bytes / 8 + rnd(g, 0, 600);
	} else {
		i = rtcall(g, thr, CK_RT, "cudaMemsetAsync", 51, 1,
		    rnd(g, 2500, 6000));
		dur = 1100 + bytes / 600 + rnd(g, 0, 500);
	}
	ts = sched(g, s, g->cev[i].ts + rnd(g, 1500, 4000), dur);
	gi = gadd(g, kind, s, ts, dur);
	e = &g->gev[gi];
	e->name = name;
	e->bytes = bytes;
	e->ext = g->cev[i].a[0];
	e->corr = g->cev[i].a[2];
	e->launch = i;
}

/* Allocate bytes on device 0 from thread thr: a [memory] instant. */
static void
mem_alloc(struct gen *g, int thr, int64_t bytes)
{
	struct cev *e;
	int i;

	if (g->capture)
		return;
	bytes = (bytes + 511) / 512 * 512;
	if (g->msp == g->mcap) {
		g->mcap = g->mcap ? 2 * g->mcap : 256;
		g->mstk = xrealloc(g->mstk, g->mcap, sizeof(*g->mstk));
	}
	g->mstk[g->msp++] = bytes;
	i = cadd(g, thr, CK_MEM, "[memory]", -1);
	e = &g->cev[i];
	e->a[3] = MEMBASE + g->live;
	g->live += bytes;
	g->allocated += bytes;
	if (g->allocated > g->reserved)
		g->reserved += (g->allocated - g->reserved + SEGMENT - 1) /
		    SEGMENT * SEGMENT;
	e->a[0] = g->reserved;
	e->a[1] = g->allocated;
	e->a[2] = bytes;
	mem_note(g, e);
	adv(g, thr, 200, 900);
}

/* Free the most recent live allocation: a [memory] instant. */
static void
mem_free(struct gen *g, int thr)
{
	struct cev *e;
	int64_t bytes;
	int i;

	if (g->capture)
		return;
	if (g->msp == 0) {
		fprintf(stderr, "ktgen: internal error: free without alloc\n");
		exit(1);
	}
	bytes = g->mstk[--g->msp];
	g->live -= bytes;
	g->allocated -= bytes;
	i = cadd(g, thr, CK_MEM, "[memory]", -1);
	e = &g->cev[i];
	e->a[0] = g->reserved;
	e->a[1] = g->allocated;
	e->a[2] = -bytes;
	e->a[3] = MEMBASE + g->live;
	mem_note(g, e);
	adv(g, thr, 200, 900);
}

/* Note GPU record gi as the anchor of (pass, layer). */
static void
anchor(struct gen *g, int pass, int layer, size_t gi)
{
	if (g->nanc == g->canc) {
		g->canc = g->canc ? 2 * g->canc : 64;
		g->anc = xrealloc(g->anc, g->canc, sizeof(*g->anc));
	}
	g->anc[g->nanc].pass = pass;
	g->anc[g->nanc].layer = layer;
	g->anc[g->nanc].gi = gi;
	g->nanc++;
}

/* An nn.Linear forward: module frame, aten::linear, aten::t, mm. */
static void
linear(struct gen *g, int t, int num, const char *mm, const char *shapes,
    int kid, int64_t outbytes)
{
	py(g, t, "nn.Module: Linear_", num);
	op(g, t, "aten::linear", NULL, 0);
	op(g, t, "aten::t", NULL, 0);
	op(g, t, "aten::transpose", NULL, 0);
	op(g, t, "aten::as_strided", NULL, 0);
	done(g, t);
	done(g, t);
	done(g, t);
	op(g, t, mm, shapes, 1);
	mem_alloc(g, t, outbytes);
	kern(g, t, kid, S_COMP);
	done(g, t);
	done(g, t);
	done(g, t);
}

/* A DDP bucket all-reduce, launched from the backward thread. */
static void
allreduce(struct gen *g, int t)
{
	struct gev *e;
	size_t gi;

	op(g, t, "nccl:all_reduce", NULL, 0);
	op(g, t, "record_param_comms", NULL, 0);
	rtcall(g, t, CK_RT, "cudaEventRecord", 135, 0, rnd(g, 1500, 3500));
	rtcall(g, t, CK_RT, "cudaStreamWaitEvent", 146, 0, rnd(g, 1200, 3000));
	gpu_wait(g, S_COMM, S_COMP);
	gi = kern(g, t, K_NCCL, S_COMM);
	e = &g->gev[gi];
	e->bytes = PARAMS_LAYER;
	e->seq = ++g->ncclseq;
	done(g, t);
	done(g, t);
}

/*
 * --inject-gap: before layer l's forward, wait for the GPU (aten::item)
 * and then stall the CPU for the given time inside ktgen::sleep, under
 * the annotation "ktgen: injected stall": the GPU idles from the end of
 * its work until the next kernel.
 */
static void
inject_gap(struct gen *g, int t, int l)
{
	int64_t maxfree = 0, end, dur;
	int i;

	user(g, t, "ktgen: injected stall", -1);
	op(g, t, "aten::item", NULL, 0);
	op(g, t, "aten::_local_scalar_dense", NULL, 0);
	for (i = 0; i < g->ns; i++)
		if (maxfree < g->sfree[i])
			maxfree = g->sfree[i];
	end = maxfree + rnd(g, 1500, 5000);
	dur = end - g->cur[t];
	if (dur < 1000)
		dur = 1000 + rnd(g, 0, 500);
	rtcall(g, t, CK_RT, "cudaStreamSynchronize", 131, 0, dur);
	done(g, t);
	done(g, t);
	op(g, t, "ktgen::sleep", NULL, 0);
	g->cur[t] += g->o->injgap;
	done(g, t);
	done(g, t);
	g->inj[g->ninj].tiny = 0;
	g->inj[g->ninj].layer = l;
	g->inj[g->ninj].a = g->ngev;
	g->inj[g->ninj++].b = g->ngev;
}

/*
 * --inject-tiny: a loop launching N tiny kernels (1.2 to 3 us) on the
 * compute stream, under "ktgen: tiny kernels" / ktgen::tiny_loop.
 */
static void
inject_tiny(struct gen *g, int t)
{
	size_t a = g->ngev;
	int i;

	user(g, t, "ktgen: tiny kernels", -1);
	op(g, t, "ktgen::tiny_loop", NULL, 0);
	for (i = 0; i < g->o->injtiny; i++)
		kern(g, t, K_TINY, S_COMP);
	done(g, t);
	done(g, t);
	g->inj[g->ninj].tiny = 1;
	g->inj[g->ninj].layer = -1;
	g->inj[g->ninj].a = a;
	g->inj[g->ninj++].b = g->ngev;
}

/* The forward pass and the loss, on thread t. */
static void
fwd(struct gen *g, int t)
{
	int l;

	g->fseq0 = g->seqnr + 1;
	py(g, t, "nn.Module: GPT_", 0);
	py(g, t, "model.py(301): forward", -1);
	py(g, t, "nn.Module: Embedding_", 0);
	op(g, t, "aten::embedding", A_EMB, 1);
	op(g, t, "aten::index_select", NULL, 0);
	mem_alloc(g, t, TOK * HID * 2);
	kern(g, t, K_EMB, S_COMP);
	done(g, t);
	done(g, t);
	done(g, t);
	for (l = 0; l < g->o->layers; l++) {
		if (g->o->injgap > 0 && l == g->o->layers / 2)
			inject_gap(g, t, l);
		py(g, t, "nn.Module: DecoderLayer_", l);
		py(g, t, "model.py(123): forward", -1);

		/* pre-attention layer norm: the layer's forward anchor */
		py(g, t, "nn.Module: LayerNorm_", 2 * l);
		op(g, t, "aten::layer_norm", A_LN, 0);
		op(g, t, "aten::native_layer_norm", NULL, 1);
		mem_alloc(g, t, TOK * HID * 2);
		anchor(g, P_FWD, l, kern(g, t, K_LN, S_COMP));
		done(g, t);
		done(g, t);
		done(g, t);

		linear(g, t, 4 * l, "aten::addmm", A_QKV, K_QKV,
		    TOK * 3 * HID * 2);

		py(g, t, "model.py(88): attention", -1);
		op(g, t, "aten::scaled_dot_product_attention", A_SDPA, 0);
		op(g, t, "aten::_scaled_dot_product_flash_attention", NULL, 1);
		op(g, t, "aten::_flash_attention_forward", NULL, 0);
		op(g, t, "aten::empty", NULL, 0);
		mem_alloc(g, t, TOK * HID * 2);
		done(g, t);
		op(g, t, "aten::empty", NULL, 0);
		mem_alloc(g, t, 4 * 16 * 2048 * 4);
		done(g, t);
		kern(g, t, K_FLASH, S_COMP);
		done(g, t);
		done(g, t);
		done(g, t);
		done(g, t);

		linear(g, t, 4 * l + 1, "aten::mm", A_OUT, K_OUT,
		    TOK * HID * 2);

		op(g, t, "aten::add", A_ADD, 1);
		mem_alloc(g, t, TOK * HID * 2);
		kern(g, t, K_ADD, S_COMP);
		done(g, t);

		py(g, t, "nn.Module: LayerNorm_", 2 * l + 1);
		op(g, t, "triton_red_fused_add_native_layer_norm_1", NULL, 0);
		mem_alloc(g, t, TOK * HID * 2);
		kern(g, t, K_LN2, S_COMP);
		done(g, t);
		done(g, t);

		linear(g, t, 4 * l + 2, "aten::addmm", A_FC1, K_FC1,
		    TOK * FFN * 2);

		py(g, t, "nn.Module: GELU_", l);
		op(g, t, "aten::gelu", A_GELU, 1);
		mem_alloc(g, t, TOK * FFN * 2);
		kern(g, t, K_GELU, S_COMP);
		done(g, t);
		done(g, t);

		linear(g, t, 4 * l + 3, "aten::addmm", A_FC2, K_FC2,
		    TOK * HID * 2);

		op(g, t, "aten::add", A_ADD, 1);
		mem_alloc(g, t, TOK * HID * 2);
		kern(g, t, K_ADD, S_COMP);
		done(g, t);

		done(g, t);
		done(g, t);
	}
	if (g->o->injtiny > 0)
		inject_tiny(g, t);
	linear(g, t, 4 * g->o->layers, "aten::mm", A_LMHEAD, K_LMHEAD,
	    TOK * VOCAB * 2);
	done(g, t);
	done(g, t);

	/* the loss, with a JSON escape in its name */
	user(g, t, "## loss \"cross_entropy\" ##", -1);
	op(g, t, "aten::cross_entropy_loss", NULL, 0);
	op(g, t, "aten::log_softmax", NULL, 0);
	op(g, t, "aten::_log_softmax", NULL, 1);
	mem_alloc(g, t, TOK * VOCAB * 2);
	g->lossfirst = (int64_t)kern(g, t, K_LSM, S_COMP);
	done(g, t);
	done(g, t);
	op(g, t, "aten::nll_loss_nd", NULL, 0);
	op(g, t, "aten::nll_loss", NULL, 0);
	op(g, t, "aten::nll_loss_forward", NULL, 1);
	mem_alloc(g, t, 4);
	g->losslast = (int64_t)kern(g, t, K_NLL, S_COMP);
	done(g, t);
	done(g, t);
	done(g, t);
	done(g, t);
	done(g, t);
}

/*
 * The backward pass on thread t, in reverse layer order, with one
 * all-reduce per layer on the communication stream.  It frees the
 * forward activations in reverse order; each autograd node allocates
 * and frees its own gradient buffer.
 */
static void
bwd(struct gen *g, int t)
{
	int l;

	g->bseqnr = g->seqnr;
	evfn(g, t, "NllLossBackward0");
	op(g, t, "aten::nll_loss_backward", NULL, 0);
	mem_alloc(g, t, TOK * VOCAB * 2);
	kern(g, t, K_FILL, S_COMP);
	kern(g, t, K_NLLB, S_COMP);
	mem_free(g, t);
	done(g, t);
	done(g, t);
	mem_free(g, t);
	done(g, t);

	evfn(g, t, "LogSoftmaxBackward0");
	op(g, t, "aten::_log_softmax_backward_data", NULL, 0);
	mem_alloc(g, t, TOK * VOCAB * 2);
	kern(g, t, K_LSMB, S_COMP);
	mem_free(g, t);
	done(g, t);
	done(g, t);
	mem_free(g, t);
	done(g, t);

	evfn(g, t, "MmBackward0");
	mem_alloc(g, t, TOK * HID * 2);
	op(g, t, "aten::mm", NULL, 0);
	kern(g, t, K_DGRAD, S_COMP);
	done(g, t);
	op(g, t, "aten::mm", NULL, 0);
	kern(g, t, K_WGRAD, S_COMP);
	done(g, t);
	mem_free(g, t);
	done(g, t);
	mem_free(g, t);
	done(g, t);

	for (l = g->o->layers - 1; l >= 0; l--) {
		evfn(g, t, "AddBackward0");
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "AddmmBackward0");
		mem_alloc(g, t, TOK * FFN * 2);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_DGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_WGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::sum", NULL, 0);
		kern(g, t, K_REDUCE, S_COMP);
		done(g, t);
		mem_free(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "GeluBackward0");
		op(g, t, "aten::gelu_backward", NULL, 0);
		mem_alloc(g, t, TOK * FFN * 2);
		kern(g, t, K_GELUB, S_COMP);
		mem_free(g, t);
		done(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "AddmmBackward0");
		mem_alloc(g, t, TOK * HID * 2);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_DGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_WGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::sum", NULL, 0);
		kern(g, t, K_REDUCE, S_COMP);
		done(g, t);
		mem_free(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "CompiledFunctionBackward");
		op(g, t, "triton_red_fused_add_native_layer_norm_backward_3",
		    NULL, 0);
		mem_alloc(g, t, TOK * HID * 2);
		kern(g, t, K_LN2B, S_COMP);
		mem_free(g, t);
		done(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "AddBackward0");
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "MmBackward0");
		mem_alloc(g, t, TOK * HID * 2);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_DGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_WGRAD, S_COMP);
		done(g, t);
		mem_free(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "ScaledDotProductFlashAttentionBackward0");
		op(g, t, "aten::_scaled_dot_product_flash_attention_backward",
		    NULL, 0);
		op(g, t, "aten::_flash_attention_backward", NULL, 0);
		mem_alloc(g, t, TOK * 3 * HID * 2);
		kern(g, t, K_FDOT, S_COMP);
		kern(g, t, K_FBWD, S_COMP);
		kern(g, t, K_FCVT, S_COMP);
		mem_free(g, t);
		done(g, t);
		done(g, t);
		done(g, t);
		mem_free(g, t);
		mem_free(g, t);
		done(g, t);

		evfn(g, t, "AddmmBackward0");
		mem_alloc(g, t, TOK * HID * 2);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_DGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::mm", NULL, 0);
		kern(g, t, K_WGRAD, S_COMP);
		done(g, t);
		op(g, t, "aten::sum", NULL, 0);
		kern(g, t, K_REDUCE, S_COMP);
		done(g, t);
		mem_free(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		/* input layer norm: the layer's backward anchor */
		evfn(g, t, "NativeLayerNormBackward0");
		op(g, t, "aten::native_layer_norm_backward", NULL, 0);
		mem_alloc(g, t, TOK * HID * 2);
		anchor(g, P_BWD, l, kern(g, t, K_LNB, S_COMP));
		kern(g, t, K_GAMMA, S_COMP);
		mem_free(g, t);
		done(g, t);
		done(g, t);
		mem_free(g, t);
		done(g, t);

		allreduce(g, t);
	}

	evfn(g, t, "EmbeddingBackward0");
	op(g, t, "aten::embedding_backward", NULL, 0);
	op(g, t, "aten::embedding_dense_backward", NULL, 0);
	kern(g, t, K_EMBB, S_COMP);
	done(g, t);
	done(g, t);
	done(g, t);
	mem_free(g, t);
	done(g, t);
}

/* The optimizer step on thread t. */
static void
opt(struct gen *g, int t)
{
	int i, n = 1 + g->o->layers / 4;

	user(g, t, "Optimizer.step#AdamW.step", -1);
	py(g, t, "torch/optim/optimizer.py(487): wrapper", -1);
	py(g, t, "torch/optim/adamw.py(209): step", -1);
	rtcall(g, t, CK_RT, "cudaStreamWaitEvent", 146, 0, rnd(g, 1200, 3000));
	gpu_wait(g, S_COMP, S_COMM);
	op(g, t, "aten::_fused_adamw_", NULL, 0);
	for (i = 0; i < n; i++)
		kern(g, t, K_ADAM, S_COMP);
	done(g, t);
	done(g, t);
	done(g, t);
	done(g, t);
}

/* Simulate training step idx, then write it out. */
static void
step(struct gen *g, int idx)
{
	const int t = 0, b = 1;
	int64_t end, dur, maxfree;
	int i, r, si, cs;

	g->ncev = g->ngev = g->nanc = 0;
	g->ninj = 0;
	g->lossfirst = g->losslast = -1;
	g->stepno = FIRSTSTEP + idx;
	cs = g->o->graph ? S_COMP : S_COPY;

	adv(g, t, 15000, 60000);
	si = xopen(g, t, CK_USER, "ProfilerStep#", g->stepno);
	py(g, t, "train.py(88): train_step", -1);

	/* data loading; now and then a long stall leaves the GPU idle */
	user(g, t, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
	    -1);
	py(g, t, "torch/utils/data/dataloader.py(631): __next__", -1);
	if (rnd(g, 0, 5) == 0)
		adv(g, t, 2000000, 8000000);
	else
		adv(g, t, 120000, 400000);
	done(g, t);
	done(g, t);

	/* input ids and labels to the GPU */
	for (i = 0; i < 2; i++) {
		op(g, t, "aten::to", A_TO, 0);
		op(g, t, "aten::_to_copy", NULL, 0);
		op(g, t, "aten::empty_strided", NULL, 0);
		mem_alloc(g, t, TOK * 8);
		done(g, t);
		op(g, t, "aten::copy_", NULL, 0);
		xfer(g, t, GK_MEMCPY, "Memcpy HtoD (Pageable -> Device)",
		    TOK * 8, cs);
		done(g, t);
		done(g, t);
		done(g, t);
	}
	user(g, t, "Optimizer.zero_grad#AdamW.zero_grad", -1);
	for (i = 0; i < 2; i++) {
		op(g, t, "aten::zero_", NULL, 0);
		op(g, t, "aten::fill_", NULL, 0);
		xfer(g, t, GK_MEMSET, "Memset (Device)", i ? 4096 : 8388608,
		    cs);
		done(g, t);
		done(g, t);
	}
	done(g, t);

	if (g->o->graph) {
		user(g, t, "CUDAGraph.replay", -1);
		py(g, t, "torch/cuda/graphs.py(96): replay", -1);
		r = rtcall(g, t, CK_RT, "cudaGraphLaunch", 311, 1,
		    rnd(g, 9000, 25000));
		g->gcorr = g->cev[r].a[2];
		g->glaunch = r;
		g->gext = g->cev[r].a[0];
		g->gstart = g->cev[r].ts + rnd(g, 4000, 9000);
		if (g->gstart < g->sfree[S_COMP] + 1000)
			g->gstart = g->sfree[S_COMP] + 1000;
		g->wleft = 0;
		g->wfirst = 1;
		g->gnode = 0;
		g->grng = g->o->seed * 0x2545f4914f6cdd1dULL + 0x1234567;
		g->capture = 1;
		fwd(g, t);
		bwd(g, t);
		opt(g, t);
		g->capture = 0;
		/* the graph joins back into the launching stream */
		for (i = 0; i < g->ns; i++)
			if (g->sfree[S_COMP] < g->sfree[i])
				g->sfree[S_COMP] = g->sfree[i];
		done(g, t);
		done(g, t);
	} else {
		fwd(g, t);
		py(g, t, "torch/_tensor.py(626): backward", -1);
		py(g, t, "torch/autograd/__init__.py(347): backward", -1);
		py(g, t, "torch/autograd/graph.py(823): _engine_run_backward",
		    -1);
		g->cur[b] = g->cur[t] + rnd(g, 4000, 12000);
		bwd(g, b);
		g->cur[t] = g->cur[b] + rnd(g, 3000, 9000);
		done(g, t);
		done(g, t);
		done(g, t);
		opt(g, t);
	}

	/* loss.item(): copy the loss to the host and wait for the GPU */
	op(g, t, "aten::item", NULL, 0);
	op(g, t, "aten::_local_scalar_dense", NULL, 0);
	xfer(g, t, GK_MEMCPY, "Memcpy DtoH (Device -> Pageable)", 4, S_COMP);
	maxfree = 0;
	for (i = 0; i < g->ns; i++)
		if (maxfree < g->sfree[i])
			maxfree = g->sfree[i];
	end = maxfree + rnd(g, 1500, 5000);
	dur = end - g->cur[t];
	if (dur < 1000)
		dur = 1000 + rnd(g, 0, 500);
	rtcall(g, t, CK_RT, "cudaStreamSynchronize", 131, 0, dur);
	done(g, t);
	done(g, t);
	mem_free(g, t);
	mem_free(g, t);
	done(g, t);
	done(g, t);
	if (g->sp[t] != 0 || g->sp[b] != 0 || g->msp != 0) {
		fprintf(stderr, "ktgen: internal error: unbalanced step\n");
		exit(1);
	}
	if (g->cfirst < 0)
		g->cfirst = g->cev[si].ts;
	g->clast = g->cev[si].ts + g->cev[si].dur;
	emit_step(g);
	truth_step(g);
	if (g->truthc != NULL)
		truth_chain(g);
}

/* Start an event: separator and opening brace. */
static void
ev_begin(struct gen *g)
{
	struct out *o = &g->out;

	if (g->nev++ != 0)
		PUTS(o, ",\n  {\n");
	else
		PUTS(o, "  {\n");
}

/*
 * Write one flow event: ph 's' or 'f' (an "f" binds to its enclosing
 * slice, "bp": "e"), cat and name both cat.
 */
static void
put_flow(struct gen *g, char ph, int64_t id, int64_t pid, int64_t tid,
    int64_t ts, const char *cat)
{
	struct out *o = &g->out;

	ev_begin(g);
	PUTS(o, "    \"ph\": \"");
	put(o, &ph, 1);
	PUTS(o, "\", \"id\": ");
	puti(o, id);
	PUTS(o, ", \"pid\": ");
	puti(o, pid);
	PUTS(o, ", \"tid\": ");
	puti(o, tid);
	PUTS(o, ", \"ts\": ");
	putts(o, ts);
	PUTS(o, ",\n    \"cat\": \"");
	putstr(o, cat);
	PUTS(o, "\", \"name\": \"");
	putstr(o, cat);
	if (ph == 'f')
		PUTS(o, "\", \"bp\": \"e\"\n  }");
	else
		PUTS(o, "\"\n  }");
}

/* Write one CPU record, and its ac2g "s" flow if it has one. */
static void
emit_cev(struct gen *g, const struct cev *e)
{
	static const char *const cat[] = {
		"cpu_op", "user_annotation", "python_function", "cuda_runtime",
		"cuda_driver"
	};
	struct out *o = &g->out;
	int64_t tid = g->tid[e->thr];

	if ((e->kind == CK_PY && g->o->nopy) ||
	    (e->kind == CK_MEM && g->o->nomem))
		return;
	ev_begin(g);
	if (e->kind == CK_MEM) {
		PUTS(o, "    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", "
		    "\"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
		puti(o, g->pid);
		PUTS(o, ", \"tid\": ");
		puti(o, tid);
		PUTS(o, ",\n    \"ts\": ");
		putts(o, e->ts);
		PUTS(o, ",\n    \"args\": {\n      \"Total Reserved\": ");
		puti(o, e->a[0]);
		PUTS(o, ", \"Total Allocated\": ");
		puti(o, e->a[1]);
		PUTS(o, ", \"Bytes\": ");
		puti(o, e->a[2]);
		PUTS(o, ", \"Device Id\": 0, \"Device Type\": 1, \"Addr\": ");
		puti(o, e->a[3]);
		PUTS(o, ", \"Ev Idx\": ");
		puti(o, g->evidx++);
		PUTS(o, "\n    }\n  }");
		return;
	}
	PUTS(o, "    \"ph\": \"X\", \"cat\": \"");
	putstr(o, cat[e->kind]);
	PUTS(o, "\", \"name\": \"");
	putjstr(o, e->name);
	if (e->num >= 0)
		puti(o, e->num);
	PUTS(o, "\", \"pid\": ");
	puti(o, g->pid);
	PUTS(o, ", \"tid\": ");
	puti(o, tid);
	PUTS(o, ",\n    \"ts\": ");
	putts(o, e->ts);
	PUTS(o, ", \"dur\": ");
	putts(o, e->dur);
	PUTS(o, ",\n    \"args\": {\n      ");
	switch (e->kind) {
	case CK_OP:
	case CK_USER:
		PUTS(o, "\"External id\": ");
		puti(o, e->a[0]);
		PUTS(o, ",\"Record function id\": 0, ");
		if (e->seq) {
			PUTS(o, "\"Sequence number\": ");
			puti(o, e->a[1]);
			if (e->seq == 2)
				PUTS(o, ", \"Fwd thread id\": 1, ");
			else
				PUTS(o, ", \"Fwd thread id\": 0, ");
		}
		if (e->extra != NULL) {
			putstr(o, e->extra);
			PUTS(o, ", ");
		}
		PUTS(o, "\"Ev Idx\": ");
		puti(o, g->evidx++);
		break;
	case CK_PY:
		PUTS(o, "\"Python parent id\": ");
		if (e->a[1] < 0)
			PUTS(o, "null");
		else
			puti(o, e->a[1]);
		PUTS(o, ", \"Python id\": ");
		puti(o, e->a[0]);
		PUTS(o, ", \"Ev Idx\": ");
		puti(o, g->evidx++);
		break;
	default:
		PUTS(o, "\"External id\": ");
		puti(o, e->a[0]);
		PUTS(o, ",      \"cbid\": ");
		puti(o, e->a[1]);
		PUTS(o, ", \"correlation\": ");
		puti(o, e->a[2]);
		break;
	}
	PUTS(o, "\n    }\n  }");
	/* PyTorch's fwdbwd: "s" on the forward op, "f" on its node. */
	if (e->fwdbwd)
		put_flow(g, e->fwdbwd == 1 ? 's' : 'f', e->a[1], g->pid, tid,
		    e->ts, "fwdbwd");
	if (e->flow)
		put_flow(g, 's', e->a[2], g->pid, tid, e->ts, "ac2g");
}

/* Write one GPU record, and its ac2g "f" flow unless an annotation. */
static void
emit_gev(struct gen *g, const struct gev *e)
{
	static const char *const cat[] = {
		"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"
	};
	struct out *o = &g->out;
	const struct kspec *k = e->k;
	int64_t blocks, wpb;

	ev_begin(g);
	PUTS(o, "    \"ph\": \"X\", \"cat\": \"");
	putstr(o, cat[e->kind]);
	PUTS(o, "\", \"name\": \"");
	putjstr(o, k != NULL ? k->name : e->name);
	if (e->num >= 0)
		puti(o, e->num);
	PUTS(o, "\", \"pid\": " "0" ", \"tid\": ");
	puti(o, e->stream);
	PUTS(o, ",\n    \"ts\": ");
	putts(o, e->ts);
	PUTS(o, ", \"dur\": ");
	putts(o, e->dur);
	PUTS(o, ",\n    \"args\": {\n      \"External id\": ");
	puti(o, e->ext);
	switch (e->kind) {
	case GK_KERNEL:
		PUTS(o, ",      \"queued\": 0, \"device\": 0, \"context\": 1,"
		    "      \"stream\": ");
		puti(o, e->stream);
		PUTS(o, ", \"correlation\": ");
		puti(o, e->corr);
		PUTS(o, ",      \"registers per thread\": ");
		puti(o, k->regs);
		PUTS(o, ",      \"shared memory\": ");
		puti(o, k->smem);
		blocks = (int64_t)k->grid[0] * k->grid[1] * k->grid[2];
		wpb = ((int64_t)k->block[0] * k->block[1] * k->block[2] + 31) /
		    32;
		PUTS(o, ",      \"blocks per SM\": ");
		putfix(o, blocks * 1000000 / NUMSMS, 6);
		PUTS(o, ",      \"warps per SM\": ");
		putfix(o, blocks * wpb * 1000000 / NUMSMS, 6);
		PUTS(o, ",      \"grid\": [");
		puti(o, k->grid[0]);
		PUTS(o, ", ");
		puti(o, k->grid[1]);
		PUTS(o, ", ");
		puti(o, k->grid[2]);
		PUTS(o, "],      \"block\": [");
		puti(o, k->block[0]);
		PUTS(o, ", ");
		puti(o, k->block[1]);
		PUTS(o, ", ");
		puti(o, k->block[2]);
		PUTS(o, "],      \"est. achieved occupancy %\": ");
		puti(o, k->occ);
		if (e->node >= 0) {
			PUTS(o, ",      \"graph id\": 1, \"graph node id\": ");
			puti(o, e->node);
		}
		if (k == &ktab[K_NCCL]) {
			PUTS(o, ", \"Collective name\": \"allreduce\", "
			    "\"In msg nelems\": ");
			puti(o, e->bytes);
			PUTS(o, ", \"Out msg nelems\": ");
			puti(o, e->bytes);
			PUTS(o, ", \"Group size\": ");
			puti(o, g->o->world);
			PUTS(o, ", \"dtype\": \"Float\", \"In split size\": "
			    "\"[]\", \"Out split size\": \"[]\", "
			    "\"Process Group Name\": \"0\", "
			    "\"Process Group Description\": \"default_pg\", "
			    "\"Seq\": ");
			puti(o, e->seq);
		}
		break;
	case GK_MEMCPY:
	case GK_MEMSET:
		PUTS(o, ",      \"device\": 0, \"context\": 1,"
		    "      \"stream\": ");
		puti(o, e->stream);
		PUTS(o, ", \"correlation\": ");
		puti(o, e->corr);
		PUTS(o, ",      \"bytes\": ");
		puti(o, e->bytes);
		PUTS(o, ", \"memory bandwidth (GB/s)\": ");
		putfix(o, e->bytes * 1000000 / e->dur, 6);
		break;
	default:
		break;
	}
	PUTS(o, "\n    }\n  }");
	if (e->kind == GK_ANN)
		return;
	put_flow(g, 'f', e->corr, 0, e->stream, e->ts, "ac2g");
}

/*
 * The fwdbwd flows of the step, as PyTorch's profiler writes them: one
 * from each forward op (Sequence number N, Fwd thread id 0) to the
 * autograd node with the same N, when the step has both; the flow's id
 * is N (unique on the rank).  The step's forward ops have the numbers
 * fseq0..seqnr, so a table over that range finds the pairs.
 */
static void
fwdbwd_mark(struct gen *g)
{
	unsigned char *has;
	int64_t lo = g->fseq0, hi = g->seqnr;
	size_t i;

	if (hi < lo || lo <= 0 || (has = calloc((size_t)(hi - lo + 1), 1)) ==
	    NULL)
		return;
	for (i = 0; i < g->ncev; i++) {
		struct cev *e = &g->cev[i];

		e->fwdbwd = 0;
		if (e->kind == CK_OP && e->seq == 1 && e->a[1] >= lo &&
		    e->a[1] <= hi)
			has[e->a[1] - lo] |= 1;
		if (e->kind == CK_OP && e->seq == 2 && e->a[1] >= lo &&
		    e->a[1] <= hi)
			has[e->a[1] - lo] |= 2;
	}
	for (i = 0; i < g->ncev; i++) {
		struct cev *e = &g->cev[i];

		if (e->kind == CK_OP && (e->seq == 1 || e->seq == 2) &&
		    e->a[1] >= lo && e->a[1] <= hi && has[e->a[1] - lo] == 3)
			e->fwdbwd = e->seq;
	}
	free(has);
}

/*
 * Write the step: all CPU records in CPU order, then the GPU records in
 * launch order, then the gpu_user_annotations (Kineto's -1 ns, +2 ns).
 */
static void
emit_step(struct gen *g)
{
	struct gev ann;
	int64_t first = INT64_MAX, last = 0;
	uint64_t n;
	size_t i;

	fwdbwd_mark(g);
	for (i = 0; i < g->ncev; i++) {
		n = g->nev;
		emit_cev(g, &g->cev[i]);
		if (g->nev != n)
			g->cev[i].pos = (int64_t)n;
	}
	for (i = 0; i < g->ngev; i++) {
		g->gev[i].pos = (int64_t)g->nev;
		emit_gev(g, &g->gev[i]);
		if (first > g->gev[i].ts)
			first = g->gev[i].ts;
		if (last < g->gev[i].ts + g->gev[i].dur)
			last = g->gev[i].ts + g->gev[i].dur;
	}
	memset(&ann, 0, sizeof(ann));
	ann.kind = GK_ANN;
	ann.stream = g->stid[S_COMP];
	ann.num = -1;
	if (!g->o->graph && g->lossfirst >= 0) {
		ann.name = "## loss \"cross_entropy\" ##";
		ann.ts = g->gev[g->lossfirst].ts - 1;
		ann.dur = g->gev[g->losslast].ts + g->gev[g->losslast].dur -
		    g->gev[g->lossfirst].ts + 2;
		for (i = 0; i < g->ncev; i++)
			if (g->cev[i].kind == CK_USER &&
			    g->cev[i].name[0] == '#') {
				ann.ext = g->cev[i].a[0];
				break;
			}
		emit_gev(g, &ann);
	}
	ann.name = "ProfilerStep#";
	ann.num = g->stepno;
	ann.ts = first - 1;
	ann.dur = last - first + 2;
	ann.ext = g->cev[0].a[0];
	emit_gev(g, &ann);
}

/* Order end points by time, an end before a start at equal times. */
static int
endpt_cmp(const void *a, const void *b)
{
	const struct endpt *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->d - y->d;
}

/* --truth-more: note a [memory] instant for the peaks (first in time). */
static void
mem_note(struct gen *g, const struct cev *e)
{
	if (g->o->nomem)
		return;
	g->mevents++;
	if (g->mevents == 1 || e->a[1] > g->mpa ||
	    (e->a[1] == g->mpa && e->ts < g->mpats)) {
		g->mpa = e->a[1];
		g->mpats = e->ts;
		g->mpastep = g->stepno;
	}
	if (g->mevents == 1 || e->a[0] > g->mpr ||
	    (e->a[0] == g->mpr && e->ts < g->mprts)) {
		g->mpr = e->a[0];
		g->mprts = e->ts;
	}
}

/* Class of a GPU record for --truth-more: 0 compute, 1 comm, 2 transfer. */
static int
gclass(const struct gev *e)
{
	if (e->kind == GK_MEMCPY || e->kind == GK_MEMSET)
		return 2;
	return e->k == &ktab[K_NCCL] ? 1 : 0;
}

static int
iv_cmp(const void *a, const void *b)
{
	const struct endpt *x = a, *y = b;

	return (x->t > y->t) - (x->t < y->t);
}

/*
 * The union of the step's records of class c (start in t, end in d...
 * kept as pairs in xiv[2k], xiv[2k+1]) merged in place into *out
 * (malloc'd pairs start, end); returns the number of intervals.
 */
static size_t
class_union(struct gen *g, int c, int64_t **out)
{
	struct endpt *v;
	int64_t *u;
	size_t i, n = 0, k = 0;

	if (g->cxiv < g->ngev + 1) {
		g->cxiv = g->ngev + 1;
		g->xiv = xrealloc(g->xiv, g->cxiv, sizeof(*g->xiv));
	}
	v = g->xiv;
	for (i = 0; i < g->ngev; i++)
		if (gclass(&g->gev[i]) == c && g->gev[i].dur > 0) {
			v[n].t = g->gev[i].ts;
			v[n].d = (int)i;
			n++;
		}
	qsort(v, n, sizeof(*v), iv_cmp);
	u = xrealloc(NULL, 2 * n + 2, sizeof(*u));
	for (i = 0; i < n; i++) {
		const struct gev *e = &g->gev[v[i].d];

		if (k > 0 && e->ts <= u[2 * k - 1]) {
			if (e->ts + e->dur > u[2 * k - 1])
				u[2 * k - 1] = e->ts + e->dur;
		} else {
			u[2 * k] = e->ts;
			u[2 * k + 1] = e->ts + e->dur;
			k++;
		}
	}
	*out = u;
	return k;
}

/* The length of the union u[0..n) inside [a, b). */
static int64_t
clip_len(const int64_t *u, size_t n, int64_t a, int64_t b)
{
	int64_t len = 0, lo, hi;
	size_t i;

	for (i = 0; i < n; i++) {
		lo = u[2 * i] > a ? u[2 * i] : a;
		hi = u[2 * i + 1] < b ? u[2 * i + 1] : b;
		if (hi > lo)
			len += hi - lo;
	}
	return len;
}

/*
 * --truth-more rows of the step: the unions of compute, communication
 * and transfer, communication exposed (not overlapped by compute) and
 * hidden, and one row per communication kernel.
 */
static void
truth_more_step(struct gen *g)
{
	int64_t *uc, *um, *ut, len[3] = { 0, 0, 0 }, hid = 0, h;
	size_t nc, nm, nt, i;

	nc = class_union(g, 0, &uc);
	nm = class_union(g, 1, &um);
	nt = class_union(g, 2, &ut);
	for (i = 0; i < nc; i++)
		len[0] += uc[2 * i + 1] - uc[2 * i];
	for (i = 0; i < nm; i++) {
		len[1] += um[2 * i + 1] - um[2 * i];
		hid += clip_len(uc, nc, um[2 * i], um[2 * i + 1]);
	}
	for (i = 0; i < nt; i++)
		len[2] += ut[2 * i + 1] - ut[2 * i];
	for (i = 0; i < g->ngev; i++) {
		const struct gev *e = &g->gev[i];

		if (gclass(e) != 1)
			continue;
		h = clip_len(uc, nc, e->ts, e->ts + e->dur);
		fprintf(g->truthx, "comm\t%d\t%lld\t%lld\t%lld\t-\t-\t-\t"
		    "%lld\t%lld\t-\t-\t-\t-\t-\n", g->stepno,
		    (long long)e->seq, (long long)e->ts,
		    (long long)(e->ts + e->dur), (long long)(e->dur - h),
		    (long long)h);
	}
	fprintf(g->truthx, "step\t%d\t-\t-\t-\t%lld\t%lld\t%lld\t%lld\t"
	    "%lld\t-\t-\t-\t-\t-\n", g->stepno, (long long)len[0],
	    (long long)len[1], (long long)len[2], (long long)(len[1] - hid),
	    (long long)hid);
	free(uc);
	free(um);
	free(ut);
}

/*
 * Compute the step's GPU metrics, update the trace totals, and write
 * the step's truth rows.
 */
static void
truth_step(struct gen *g)
{
	const struct gev *e;
	int64_t first = INT64_MAX, last = 0, busy = 0, kbusy = 0, un = 0;
	int64_t count = 0, kerns = 0, peak = 0, peakts = 0, open = 0, ustart;
	size_t i, n = 0;
	const char *pname[] = { "fwd", "bwd" };
	int si = 0;

	if (g->cep < 2 * g->ngev) {
		g->cep = 2 * g->ngev;
		g->ep = xrealloc(g->ep, g->cep, sizeof(*g->ep));
	}
	for (i = 0; i < g->ngev; i++) {
		e = &g->gev[i];
		if (e->kind == GK_KERNEL || e->kind == GK_MEMCPY ||
		    e->kind == GK_MEMSET) {
			size_t b = e->kind == GK_MEMCPY ? K_COUNT :
			    e->kind == GK_MEMSET ? K_COUNT + 1 :
			    (size_t)(e->k - ktab);

			g->bkcount[b]++;
			g->bksum[b] += e->dur;
		}
		count++;
		busy += e->dur;
		if (e->kind == GK_KERNEL) {
			kerns++;
			kbusy += e->dur;
		}
		if (first > e->ts)
			first = e->ts;
		if (last < e->ts + e->dur)
			last = e->ts + e->dur;
		g->ep[n].t = e->ts;
		g->ep[n++].d = 1;
		g->ep[n].t = e->ts + e->dur;
		g->ep[n++].d = -1;
	}
	qsort(g->ep, n, sizeof(*g->ep), endpt_cmp);
	ustart = 0;
	for (i = 0; i < n; i++) {
		if (g->ep[i].d > 0 && open++ == 0)
			ustart = g->ep[i].t;
		if (g->ep[i].d < 0 && --open == 0)
			un += g->ep[i].t - ustart;
		if (open > peak) {
			peak = open;
			peakts = g->ep[i].t;
		}
	}
	if (g->gfirst < 0)
		g->gfirst = first;
	g->glast = last;
	g->tcount += count;
	g->tkern += kerns;
	g->tbusy += busy;
	g->tkbusy += kbusy;
	g->tunion += un;
	if (peak > g->peak) {
		g->peak = peak;
		g->peakstep = g->stepno;
		g->peakts = peakts;
	}
	if (g->truthx != NULL)
		truth_more_step(g);
	if (g->truth == NULL)
		return;
	for (i = 0; i < g->nanc; i++) {
		e = &g->gev[g->anc[i].gi];
		fprintf(g->truth, "layer\t%d\t%s\t%d\t%d\t%lld\t%lld\t-\t-\t-\t-"
		    "\t-\t-\t-\t-\t%s\n", g->stepno, pname[g->anc[i].pass],
		    g->anc[i].layer, (int)e->stream, (long long)e->ts,
		    (long long)(e->ts + e->dur), e->k->name);
	}
	for (i = 0; i < g->ncev; i++)
		if (g->cev[i].kind == CK_USER && g->cev[i].num >= 0) {
			si = (int)i;
			break;
		}
	if (g->ninj > 0)
		truth_inj(g);
	fprintf(g->truth, "step\t%d\t-\t-\t-\t%lld\t%lld\t%lld\t%lld\t%lld\t"
	    "%lld\t%lld\t%lld\t%lld\t%lld\tProfilerStep#%d\n", g->stepno,
	    (long long)first, (long long)last, (long long)g->cev[si].ts,
	    (long long)(g->cev[si].ts + g->cev[si].dur), (long long)count,
	    (long long)kerns, (long long)busy, (long long)kbusy, (long long)un,
	    (long long)peak, g->stepno);
}

/*
 * The innermost CPU record of thread 0 that contains time t: with py, a
 * python_function frame, else a cpu_op, user_annotation or runtime call.
 * NULL if none.
 */
static const struct cev *
cpu_at(const struct gen *g, int64_t t, int py)
{
	const struct cev *best = NULL, *e;
	size_t i;

	for (i = 0; i < g->ncev; i++) {
		e = &g->cev[i];
		if (e->thr != 0 || e->kind == CK_MEM ||
		    (e->kind == CK_PY) != (py != 0) || t < e->ts ||
		    t >= e->ts + e->dur)
			continue;
		if (best == NULL || e->ts > best->ts ||
		    (e->ts == best->ts && e->dur < best->dur))
			best = e;
	}
	return best;
}

/*
 * Truth rows of the injected gaps and tiny runs of the step:
 *   gap         step, layer, start_ns/end_ns (the GPU idle interval),
 *               cpu_start_ns/cpu_end_ns and name: the innermost CPU
 *               record (not python) of the main thread at its middle
 *   gap-python  the same with the innermost python_function frame
 *   tiny        step, stream, start_ns/end_ns (first start, last end),
 *               count = kernels, busy_ns = kernel_ns = sum of durations,
 *               union_ns, name: the CPU record at the middle
 */
static void
truth_inj(struct gen *g)
{
	const struct cev *c, *p;
	char num[32];
	int k;

	for (k = 0; k < g->ninj; k++) {
		const struct inj *in = &g->inj[k];
		int64_t s = INT64_MIN, e = INT64_MAX, busy = 0, un = 0;
		int64_t cs = 0, ce = INT64_MIN, mid;
		size_t i;

		if (!in->tiny) {
			for (i = 0; i < in->a; i++)
				if (g->gev[i].ts + g->gev[i].dur > s)
					s = g->gev[i].ts + g->gev[i].dur;
			for (i = in->a; i < g->ngev; i++)
				if (g->gev[i].kind != GK_ANN && g->gev[i].ts < e)
					e = g->gev[i].ts;
		} else {
			s = g->gev[in->a].ts;
			for (i = in->a; i < in->b; i++) {
				const struct gev *v = &g->gev[i];

				busy += v->dur;
				if (v->ts + v->dur > e || e == INT64_MAX)
					e = v->ts + v->dur;
				if (v->ts > ce) {
					if (ce != INT64_MIN)
						un += ce - cs;
					cs = v->ts;
					ce = v->ts + v->dur;
				} else if (v->ts + v->dur > ce)
					ce = v->ts + v->dur;
			}
			un += ce - cs;
		}
		mid = s + (e - s) / 2;
		c = cpu_at(g, mid, 0);
		p = cpu_at(g, mid, 1);
		if (in->tiny) {
			fprintf(g->truth, "tiny\t%d\t-\t-\t%d\t%lld\t%lld\t"
			    "%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t-\t%s\n",
			    g->stepno, (int)g->gev[in->a].stream, (long long)s,
			    (long long)e, (long long)(c ? c->ts : 0),
			    (long long)(c ? c->ts + c->dur : 0),
			    (long long)(in->b - in->a),
			    (long long)(in->b - in->a), (long long)busy,
			    (long long)busy, (long long)un, c ? c->name : "-");
			continue;
		}
		snprintf(num, sizeof(num), "%d", in->layer);
		fprintf(g->truth, "gap\t%d\t-\t%s\t-\t%lld\t%lld\t%lld\t%lld"
		    "\t-\t-\t0\t-\t-\t-\t%s\n", g->stepno, num, (long long)s,
		    (long long)e, (long long)(c ? c->ts : 0),
		    (long long)(c ? c->ts + c->dur : 0), c ? c->name : "-");
		fprintf(g->truth, "gap-python\t%d\t-\t%s\t-\t%lld\t%lld\t"
		    "%lld\t%lld\t-\t-\t0\t-\t-\t-\t%s\n", g->stepno, num,
		    (long long)s, (long long)e, (long long)(p ? p->ts : 0),
		    (long long)(p ? p->ts + p->dur : 0), p ? p->name : "-");
	}
}

/* Write a traceEvents index, or "-" if negative, then the char sep. */
static void
chain_pos(FILE *f, int64_t pos, int sep)
{
	if (pos < 0)
		fputc('-', f);
	else
		fprintf(f, "%lld", (long long)pos);
	fputc(sep, f);
}

/*
 * --truth-chain rows of the step, one per GPU activity in file order:
 * its index in traceEvents, and those of its launch call and of the
 * cpu_op, user_annotation, ProfilerStep and user python frame open on
 * the launching thread at the call's start, plus the frame's name.
 */
static void
truth_chain(struct gen *g)
{
	const struct cev *l, *fr;
	const struct gev *e;
	size_t i;
	int k;

	for (i = 0; i < g->ngev; i++) {
		e = &g->gev[i];
		if (e->kind == GK_ANN)
			continue;
		chain_pos(g->truthc, e->pos, '\t');
		if (e->launch < 0) {
			fputs("-\t-\t-\t-\t-\t-\t-\n", g->truthc);
			continue;
		}
		l = &g->cev[e->launch];
		chain_pos(g->truthc, l->pos, '\t');
		for (k = 0; k < 3; k++)
			chain_pos(g->truthc, l->up[k] < 0 ? -1 :
			    g->cev[l->up[k]].pos, '\t');
		fr = l->up[3] < 0 ? NULL : &g->cev[l->up[3]];
		if (fr == NULL || fr->pos < 0)
			fputs("-\t-", g->truthc);
		else {
			chain_pos(g->truthc, fr->pos, '\t');
			fputs(fr->name, g->truthc);
			if (fr->num >= 0)
				fprintf(g->truthc, "%d", (int)fr->num);
		}
		fputc('\t', g->truthc);
		chain_pos(g->truthc, l->up[4] < 0 ? -1 :
		    g->cev[l->up[4]].pos, '\n');
	}
}

/* --truth-buckets: count and total ns of each bucket over the trace. */
static void
truth_buckets(struct gen *g)
{
	static const char *const names[] = {
		"attention", "communication", "elementwise", "gemm", "norm",
		"other", "reduction", "transfer"
	};
	FILE *f;
	size_t i, k;

	if ((f = fopen(g->o->truthbk, "w")) == NULL)
		die(g->o->truthbk);
	fputs("bucket\tcount\ttotal_ns\n", f);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		int64_t n = 0, sum = 0;

		for (i = 0; i < K_COUNT + 2; i++) {
			const char *b = i >= K_COUNT ? "transfer" : kbucket[i];

			if (strcmp(b, names[k]) == 0) {
				n += g->bkcount[i];
				sum += g->bksum[i];
			}
		}
		if (n > 0)
			fprintf(f, "%s\t%lld\t%lld\n", names[k], (long long)n,
			    (long long)sum);
	}
	if (fclose(f) != 0)
		die(g->o->truthbk);
}

/* Write everything before the first event. */
static void
header(struct gen *g)
{
	struct out *o = &g->out;

	PUTS(o, "\n{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n"
	    "    {\n"
	    "      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", "
	    "\"totalGlobalMem\": 85045231616,\n"
	    "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
	    "      \"maxThreadsPerBlock\": 1024, "
	    "\"maxThreadsPerMultiprocessor\": 2048,\n"
	    "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
	    "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
	    "    , \"regsPerMultiprocessor\": 65536, "
	    "\"sharedMemPerBlockOptin\": 232448, "
	    "\"sharedMemPerMultiprocessor\": 233472\n"
	    "    }\n  ],\n"
	    "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
	puti(o, g->rank);
	PUTS(o, ", \"world_size\": ");
	puti(o, g->o->world);
	PUTS(o, ", \"pg_count\": 1, \"pg_config\": [], "
	    "\"nccl_version\": \"2.21.5\"},\n"
	    "  \"record_shapes\": 1,\n"
	    "  \"profile_memory\": 1,\n"
	    "  \"displayTimeUnit\": \"ms\",\n"
	    "  \"baseTimeNanoseconds\": " BASETIME ",\n"
	    "  \"traceEvents\": [\n");
}

/* Write a metadata (M) event with a string or an integer argument. */
static void
meta(struct gen *g, const char *name, int64_t pid, int64_t tid,
    const char *key, const char *sval, int64_t ival)
{
	struct out *o = &g->out;

	ev_begin(g);
	PUTS(o, "    \"name\": \"");
	putstr(o, name);
	PUTS(o, "\", \"ph\": \"M\", \"ts\": ");
	putts(o, g->tstart);
	PUTS(o, ", \"pid\": ");
	puti(o, pid);
	PUTS(o, ", \"tid\": ");
	puti(o, tid);
	PUTS(o, ",\n    \"args\": {\n      \"");
	putstr(o, key);
	PUTS(o, "\": ");
	if (sval != NULL) {
		PUTS(o, "\"");
		putjstr(o, sval);
		PUTS(o, "\"");
	} else
		puti(o, ival);
	PUTS(o, "\n    }\n  }");
}

/* Write the metadata events, Kineto's trailing instants and the end. */
static void
trailer(struct gen *g)
{
	struct out *o = &g->out;
	char buf[64];
	int64_t wend;
	int i;

	meta(g, "process_name", g->pid, 0, "name", "python3", 0);
	meta(g, "process_labels", g->pid, 0, "labels", "CPU", 0);
	meta(g, "process_sort_index", g->pid, 0, "sort_index", NULL, g->pid);
	meta(g, "process_name", GPUPID, 0, "name", "python3", 0);
	meta(g, "process_labels", GPUPID, 0, "labels", "GPU 0", 0);
	meta(g, "process_sort_index", GPUPID, 0, "sort_index", NULL, 5000000);
	for (i = 0; i < g->ns; i++) {
		if (!g->sused[i])
			continue;
		snprintf(buf, sizeof(buf), "stream %d ", (int)g->stid[i]);
		meta(g, "thread_name", GPUPID, g->stid[i], "name", buf, 0);
		meta(g, "thread_sort_index", GPUPID, g->stid[i], "sort_index",
		    NULL, g->stid[i]);
	}
	snprintf(buf, sizeof(buf), "thread %lld (python3)",
	    (long long)g->tid[0]);
	meta(g, "thread_name", g->pid, g->tid[0], "name", buf, 0);
	meta(g, "thread_sort_index", g->pid, g->tid[0], "sort_index", NULL,
	    g->tid[0]);
	if (!g->o->graph) {
		snprintf(buf, sizeof(buf), "thread %lld (pt_autograd_0)",
		    (long long)g->tid[1]);
		meta(g, "thread_name", g->pid, g->tid[1], "name", buf, 0);
		meta(g, "thread_sort_index", g->pid, g->tid[1], "sort_index",
		    NULL, g->tid[1]);
	}
	wend = (g->clast > g->glast ? g->clast : g->glast) + 1000000;
	ev_begin(g);
	PUTS(o, "    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
	putts(o, g->tstart);
	PUTS(o, ", \"dur\": ");
	putts(o, wend - g->tstart);
	PUTS(o, ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
	    "    \"name\": \"PyTorch Profiler (0)\",\n"
	    "    \"args\": {\n      \"Op count\": 0\n    }\n  }");
	ev_begin(g);
	PUTS(o, "    \"name\": \"process_sort_index\", \"ph\": \"M\", "
	    "\"ts\": ");
	putts(o, g->tstart);
	PUTS(o, ",\n    \"pid\": \"Spans\", \"tid\": 0,\n"
	    "    \"args\": {\n      \"sort_index\": 536870912\n    }\n  }");
	ev_begin(g);
	PUTS(o, "    \"name\": \"Iteration Start: PyTorch Profiler\", "
	    "\"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"Traces\", "
	    "\"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
	putts(o, g->tstart);
	PUTS(o, "\n  }");
	ev_begin(g);
	PUTS(o, "    \"name\": \"Record Window End\", \"ph\": \"i\", "
	    "\"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
	putts(o, wend);
	PUTS(o, "\n  }\n  ],\n  \"traceName\": \"");
	if (g->o->outpath != NULL)
		putjstr(o, g->o->outpath);
	else {
		snprintf(buf, sizeof(buf), "ktgen_rank%d.pt.trace.json",
		    g->rank);
		putjstr(o, buf);
	}
	PUTS(o, "\"\n}\n");
}

/* Set up a generator for rank, writing to fd (-1: count only). */
static void
gen_init(struct gen *g, const struct opts *o, int rank, int fd)
{
	int i;

	memset(g, 0, sizeof(*g));
	g->o = o;
	g->rank = rank;
	g->out.fd = fd;
	if ((g->out.buf = malloc(OUTCAP)) == NULL)
		die("malloc");
	g->rng = o->seed ^ ((uint64_t)rank * 0xd1b54a32d192ed03ULL);
	(void)splitmix(&g->rng);
	g->pid = CPUPID + rank;
	g->tid[0] = g->pid;
	g->tid[1] = g->pid + BWDTID;
	g->extid = 0;
	g->corr = 100000;
	g->ns = o->graph ? o->nstreams : 3;
	g->sfree = xrealloc(NULL, (size_t)g->ns, sizeof(*g->sfree));
	g->stid = xrealloc(NULL, (size_t)g->ns, sizeof(*g->stid));
	g->sused = xrealloc(NULL, (size_t)g->ns, sizeof(*g->sused));
	for (i = 0; i < g->ns; i++) {
		g->sfree[i] = 0;
		g->sused[i] = 0;
		g->stid[i] = o->graph ? 7 + 4 * i : (i == S_COMP ? 7 :
		    i == S_COMM ? 20 : 13);
	}
	g->allocated = MEMPARAMS;
	g->reserved = MEMRESERVED;
	g->cur[0] = g->cur[1] = T0 + rnd(g, 0, 40000);
	g->tstart = g->cur[0] - rnd(g, 1000000, 3000000);
	g->gfirst = g->cfirst = -1;
}

/* Release a generator's memory. */
static void
gen_free(struct gen *g)
{
	free(g->out.buf);
	free(g->sfree);
	free(g->stid);
	free(g->sused);
	free(g->mstk);
	free(g->cev);
	free(g->gev);
	free(g->anc);
	free(g->ep);
	free(g->xiv);
}

/*
 * Generate a trace of nsteps steps for rank to fd (-1: count only), the
 * truth to tf, more truth to xf and the launch chains to cf (each may
 * be NULL).  Returns the number of bytes.
 */
static uint64_t
run(const struct opts *o, int rank, int64_t nsteps, int fd, FILE *tf,
    FILE *xf, FILE *cf)
{
	struct gen g;
	uint64_t total;
	int64_t i;

	gen_init(&g, o, rank, fd);
	g.truth = tf;
	g.truthx = xf;
	g.truthc = cf;
	if (cf != NULL)
		fputs("row\tlaunch\tcpu_op\tannotation\tstep\tframe_row\t"
		    "frame\tfwd_op\n", cf);
	if (xf != NULL)
		fputs("kind\tstep\tseq\tstart_ns\tend_ns\tcompute_ns\t"
		    "comm_ns\ttransfer_ns\tcomm_exposed_ns\tcomm_hidden_ns\t"
		    "peak_allocated\tpeak_allocated_ns\tpeak_reserved\t"
		    "peak_reserved_ns\tevents\n", xf);
	if (tf != NULL)
		fputs("kind\tstep\tpass\tlayer\tstream\tstart_ns\tend_ns\t"
		    "cpu_start_ns\tcpu_end_ns\tcount\tkernels\tbusy_ns\t"
		    "kernel_ns\tunion_ns\tpeak\tname\n", tf);
	header(&g);
	for (i = 0; i < nsteps; i++)
		step(&g, (int)i);
	trailer(&g);
	out_flush(&g.out);
	if (tf != NULL) {
		fprintf(tf, "peak\t%lld\t-\t-\t-\t%lld\t-\t-\t-\t-\t-\t-\t-\t-\t"
		    "%lld\t-\n", (long long)g.peakstep, (long long)g.peakts,
		    (long long)g.peak);
		fprintf(tf, "total\t-\t-\t-\t-\t%lld\t%lld\t%lld\t%lld\t%lld\t"
		    "%lld\t%lld\t%lld\t%lld\t%lld\t-\n", (long long)g.gfirst,
		    (long long)g.glast, (long long)g.cfirst,
		    (long long)g.clast, (long long)g.tcount,
		    (long long)g.tkern, (long long)g.tbusy,
		    (long long)g.tkbusy, (long long)g.tunion,
		    (long long)g.peak);
	}
	if (xf != NULL && g.mevents > 0)
		fprintf(xf, "memory\t%lld\t-\t-\t-\t-\t-\t-\t-\t-\t%lld\t"
		    "%lld\t%lld\t%lld\t%lld\n", (long long)g.mpastep,
		    (long long)g.mpa, (long long)g.mpats, (long long)g.mpr,
		    (long long)g.mprts, (long long)g.mevents);
	if (o->truthbk != NULL && fd >= 0)
		truth_buckets(&g);
	total = g.out.total;
	gen_free(&g);
	return total;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "output",	required_argument,	NULL, 'o' },
		{ "size",	required_argument,	NULL, 's' },
		{ "steps",	required_argument,	NULL, 'n' },
		{ "layers",	required_argument,	NULL, 'l' },
		{ "graph",	no_argument,		NULL, 'g' },
		{ "streams",	required_argument,	NULL, 'S' },
		{ "stream-shift", required_argument,	NULL, 'R' },
		{ "rank",	required_argument,	NULL, 'r' },
		{ "world",	required_argument,	NULL, 'w' },
		{ "seed",	required_argument,	NULL, 'e' },
		{ "no-memory",	no_argument,		NULL, 'M' },
		{ "no-python",	no_argument,		NULL, 'P' },
		{ "truth",	required_argument,	NULL, 't' },
		{ "truth-more",	required_argument,	NULL, 'x' },
		{ "inject-gap",	required_argument,	NULL, 'G' },
		{ "inject-tiny", required_argument,	NULL, 'T' },
		{ "truth-buckets", required_argument,	NULL, 'B' },
		{ "truth-chain", required_argument,	NULL, 'C' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	struct opts o;
	FILE *tf = NULL, *xf = NULL, *cf = NULL;
	uint64_t b1, b2, step1;
	int64_t nsteps, rest;
	char shortopt[3];
	int ch, fd = STDOUT_FILENO, rankset = 0;

	memset(&o, 0, sizeof(o));
	o.size = 1LL << 20;
	o.layers = 12;
	o.nstreams = 200;
	o.world = 1;
	o.seed = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:s:n:l:gS:R:r:w:e:MPt:x:G:T:B:C:h",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			o.outpath = optarg;
			break;
		case 's':
			o.size = parsenum("size", optarg, 1, 1LL << 50, 1);
			break;
		case 'n':
			o.steps = parsenum("steps", optarg, 1, 100000000, 0);
			break;
		case 'l':
			o.layers = (int)parsenum("layers", optarg, 1, 10000, 0);
			break;
		case 'g':
			o.graph = 1;
			break;
		case 'S':
			o.nstreams = (int)parsenum("streams", optarg, 1,
			    100000, 0);
			break;
		case 'R':
			o.sshift = (int)parsenum("stream-shift", optarg, 0,
			    100000, 0);
			break;
		case 'r':
			o.rank = (int)parsenum("rank", optarg, 0, 1000000, 0);
			rankset = 1;
			break;
		case 'w':
			o.world = (int)parsenum("world", optarg, 1, 1000000, 0);
			break;
		case 'e':
			o.seed = (uint64_t)parsenum("seed", optarg, 0,
			    INT64_MAX, 0);
			break;
		case 'M':
			o.nomem = 1;
			break;
		case 'P':
			o.nopy = 1;
			break;
		case 't':
			o.truthpath = optarg;
			break;
		case 'x':
			o.truthmore = optarg;
			break;
		case 'G':
			o.injgap = parsenum("inject-gap", optarg, 1,
			    1000000000000LL, 0);
			break;
		case 'T':
			o.injtiny = (int)parsenum("inject-tiny", optarg, 1,
			    100000, 0);
			break;
		case 'B':
			o.truthbk = optarg;
			break;
		case 'C':
			o.truthchain = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
		default:
			if (strncmp(argv[optind - 1], "--", 2) != 0 &&
			    optopt != 0) {
				snprintf(shortopt, sizeof(shortopt), "-%c",
				    optopt);
				badusage(ch == ':' ? "option needs a value" :
				    "unknown option", shortopt);
			}
			badusage(ch == ':' ? "option needs a value" :
			    "unknown option", argv[optind - 1]);
			break;
		}
	}
	if (optind < argc)
		badusage("unexpected argument", argv[optind]);
	if (o.rank >= o.world)
		badusage(rankset ? "rank must be less than world" :
		    "world must be more than rank", NULL);
	if (o.graph && (o.injgap > 0 || o.injtiny > 0))
		badusage("--inject-gap and --inject-tiny are for eager mode",
		    NULL);

	if (o.steps > 0)
		nsteps = o.steps;
	else {
		/* probe rank 0, so that all ranks get the same steps */
		b1 = run(&o, 0, 1, -1, NULL, NULL, NULL);
		b2 = run(&o, 0, 2, -1, NULL, NULL, NULL);
		step1 = b2 - b1;
		rest = o.size - (int64_t)(b1 - step1);
		nsteps = rest <= (int64_t)step1 ? 1 :
		    (rest + (int64_t)step1 - 1) / (int64_t)step1;
	}
	if (o.outpath != NULL &&
	    (fd = open(o.outpath, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
		die(o.outpath);
	if (o.truthpath != NULL && (tf = fopen(o.truthpath, "w")) == NULL)
		die(o.truthpath);
	if (o.truthmore != NULL && (xf = fopen(o.truthmore, "w")) == NULL)
		die(o.truthmore);
	if (o.truthchain != NULL && (cf = fopen(o.truthchain, "w")) == NULL)
		die(o.truthchain);
	run(&o, o.rank, nsteps, fd, tf, xf, cf);
	if (tf != NULL && fclose(tf) != 0)
		die(o.truthpath);
	if (xf != NULL && fclose(xf) != 0)
		die(o.truthmore);
	if (cf != NULL && fclose(cf) != 0)
		die(o.truthchain);
	if (o.outpath != NULL && close(fd) != 0)
		die(o.outpath);
	return 0;
}
