/* Kronecker-sparse factors on the GPU (Gonon, Zheng, Carrivain, Le, "Fast
 * inference with Kronecker-sparse matrices", ICML 2025; the published kernel
 * is PascalCarrivain/ksmm): one kernel source whose hyperparameters
 * (struct ksmm_config) are compile-time constants, compiled at run time with
 * NVRTC for the running device and cached on disk, and the baselines it is
 * measured against (cuBLAS dense fp32 and TF32, the "bmm" algorithm,
 * cuSPARSE BSR, the memory floor).
 *
 * The product is a batched GEMM over the a*d groups: for each (al, de),
 *     Y[al,:,de] (b x B) = W[al,:,:,de] (b x c) * X[al,:,de] (c x B).
 * The kernels read the weights in their own layout, (a,d,b,c) C order (each
 * group's b x c block contiguous, as the bmm algorithm holds them), made
 * once from the (a,b,c,d) weights by ksmm_weights_prepare; x and y are in
 * the layout's shape (ksmm/ksmm.h).
 *
 * Plain C. Functions that can fail return 0 or -1 and fill a struct sp_err
 * (never print, never exit); those that check a configuration against the
 * device return KSMM_UNRUNNABLE (1) with the reason when it cannot run
 * there, which is not an error: a sweep records it and goes on. All work is
 * enqueued on the default stream, on the current device (gpu_select). */
#ifndef SPKIT_KSMM_GPU_H
#define SPKIT_KSMM_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/err.h"
#include "core/gpu.h"
#include "ksmm/ksmm.h"

#define KSMM_UNRUNNABLE 1

/* 0 when the configuration can run the pattern at this batch on the current
 * device (or, without one, on an sm_90 with 227 KB of shared memory a
 * block); else KSMM_UNRUNNABLE with the reason in why (n bytes, may be
 * NULL): a size that does not divide ("vec 4 does not divide c = 6"), a
 * tile the variant cannot take, shared memory or threads per block over the
 * limit. Registers are only known once compiled: ksmm_kernel_get checks
 * them. Never fails otherwise. */
int ksmm_config_check(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		      enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n);

/* A configuration for a pattern nobody tuned: the tensor-core variant for
 * fp16/bf16 (64 x 64 tiles, warps of 32 x 16, k by 64, 3 cp.async stages),
 * SIMT for fp32 (64 x 64 tiles, 8 x 4 a thread, k by 16; TF32 never
 * chosen for the caller), the points that won most often in sweeps on the
 * H100; tiles shrink to small b, c and batches, loads narrow to what
 * divides c (and a bsl batch). Always passes ksmm_config_check. */
void ksmm_config_default(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
			 enum ksmm_layout l, struct ksmm_config *out);

/* The shared memory (bytes) and threads a block of this configuration uses. */
size_t ksmm_config_smem_bytes(const struct ksmm_config *cfg, enum ksmm_dtype t,
			      enum ksmm_layout l);
int ksmm_config_threads(const struct ksmm_config *cfg);

/* A compiled, loaded kernel for one (configuration, dtype, layout), bound
 * to a pattern. ksmm_kernel_get checks the configuration (returns
 * KSMM_UNRUNNABLE with the reason in err, *out NULL), takes the machine
 * code from the disk cache or compiles it with NVRTC for the current
 * device's architecture (a compile error is -1, its log's first line in
 * err), loads it, and checks its registers against the block size. */
struct ksmm_kernel;
int ksmm_kernel_get(const struct ksmm_config *cfg, const struct ksmm_pattern *p,
		    enum ksmm_dtype t, enum ksmm_layout l, struct ksmm_kernel **out,
		    struct sp_err *err);
void ksmm_kernel_free(struct ksmm_kernel *k); /* NULL is fine */
/* Compile a configuration into the disk cache for compute capability cc
 * (90 for sm_90) without touching a device: a sweep can build its whole
 * space on CPU threads (thread-safe) before the GPU times it, or on a
 * login node for the GPU node. 0 when built or already cached. */
int ksmm_kernel_build(const struct ksmm_config *cfg, const struct ksmm_pattern *p,
		      enum ksmm_dtype t, enum ksmm_layout l, int cc, struct sp_err *err);
/* Registers a thread of the loaded kernel uses. */
int ksmm_kernel_registers(const struct ksmm_kernel *k);

/* Enqueue y = the factor applied to x for `batch` columns (bsl) or rows
 * (bsf); d_w in the kernels' layout (ksmm_weights_prepare). batch may
 * differ from the one the configuration was checked for only where
 * ksmm_config_check passes for it too (it checks again). */
int ksmm_kernel_run(const struct ksmm_kernel *k, const void *d_w, const void *d_x, void *d_y,
		    int64_t batch, struct sp_err *err);

/* Weights (a,b,c,d), as ksmm_ref_factor reads them, to the kernels' layout
 * (a,d,b,c), device to device (enqueued). */
int ksmm_weights_prepare(const struct ksmm_pattern *p, enum ksmm_dtype t, const void *d_w_abcd,
			 void *d_w_kernel, struct sp_err *err);

/* The sample of the batch that checks against the CPU reference look at:
 * the whole batch when it has at most 2 * half entries, else its first and
 * last `half` (the edge tiles, in order). Its size. */
int64_t ksmm_sample_size(int64_t batch, int64_t half);
/* The sample's entries of d (x or y: rows x batch for bsl, batch x rows
 * for bsf) into host, compact in the same layout (rows x size or size x
 * rows): without copying whole inputs or outputs across (gigabytes on the
 * larger grid patterns). Synchronous. */
int ksmm_sample_download(void *host, const void *d, int64_t rows, int64_t batch,
			 enum ksmm_layout l, size_t esize, int64_t half, struct sp_err *err);
/* n values uniform in [-1, 1) in dtype t's storage, generated on the GPU
 * from (seed, index) (splitmix64): inputs of gigabytes in milliseconds,
 * where the CPU takes 16 ns a value. Enqueued. */
int ksmm_fill_uniform(void *d, int64_t n, enum ksmm_dtype t, uint64_t seed, struct sp_err *err);
/* bytes of d_y set to 0xff (NaN in every dtype), enqueued: an output the
 * kernel fails to write cannot pass a check on what an earlier one left. */
int ksmm_poison(void *d_y, size_t bytes, struct sp_err *err);

/* Median time of ksmm_kernel_run through gpu_time (events, warm-up, L2
 * flushed before each repetition). */
int ksmm_kernel_time(const struct ksmm_kernel *k, const void *d_w, const void *d_x, void *d_y,
		     int64_t batch, int warmup, int reps, struct gpu_timing *out,
		     struct sp_err *err);

/* The NVRTC disk cache. Folder: $SPKIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/spkit/nvrtc, else $HOME/.cache/spkit/nvrtc; an entry's
 * name is a hash of the kernel source, the compile options, the
 * architecture and the NVRTC version; entries are written to a temporary
 * file and renamed. An unwritable folder only costs recompiles. The
 * counters are this process's, for tests and progress lines. */
struct ksmm_cache_stats {
	uint64_t hits;     /* machine code read from the disk cache */
	uint64_t compiles; /* NVRTC compilations */
};
void ksmm_cache_stats(struct ksmm_cache_stats *out);
int ksmm_cache_dir(char *buf, size_t n, struct sp_err *err);

/* ksmm-tune bench for one pattern: every method timed on the same random
 * inputs in one run and checked against ksmm_ref_factor on a sample of the
 * batch (relative error max|y - ref| / max|ref|). Dense: the factor as a
 * dense (a*b*d) x (a*c*d) matrix through cuBLAS (fp32 without TF32, TF32
 * separately; fp16/bf16 in their type with fp32 accumulation, TF32 then
 * not applicable). bmm: X permuted to (a*d, B, c), one strided-batched
 * GEMM against W as (a*d, b, c), permuted back; the permutations count.
 * BSR: the factor as cuSPARSE BSR (blocks of 1 x 1 when d > 1 leaves no
 * dense block, d = 1: blocks of b x c) times X. */
enum ksmm_method {
	KSMM_M_KERNEL,
	KSMM_M_DENSE,
	KSMM_M_DENSE_TF32,
	KSMM_M_BMM,
	KSMM_M_BSR,
	KSMM_M_COUNT
};
/* "kernel", "dense", "dense_tf32", "bmm", "bsr" */
const char *ksmm_method_name(enum ksmm_method m);

struct ksmm_bench_opts {
	int warmup, reps;
	double copy_gbs; /* copy bandwidth for the floor; 0: measured in this call */
	uint64_t seed;
	unsigned skip; /* bit 1 << m: method m not run (status "skipped"); 0: all */
};
struct ksmm_bench_result {
	double ms[KSMM_M_COUNT];      /* median; NAN where status is not "ok" */
	double rel_err[KSMM_M_COUNT]; /* NAN where not run */
	/* "ok", "wrong" (over the dtype's threshold), "n/a" (TF32 for fp16),
	 * or the reason it did not run ("out of memory: ...", "unrunnable: ..."). */
	char status[KSMM_M_COUNT][160];
	double floor_ms; /* (x + y + w) bytes / copy_gbs */
	double copy_gbs;
	int registers; /* of the tuned kernel, 0 when it did not load */
};
/* Fails (-1) only when nothing could be measured (no device, no memory for
 * the inputs); a method that fails has its reason in status. */
int ksmm_bench_pattern(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		       enum ksmm_layout l, const struct ksmm_config *cfg,
		       const struct ksmm_bench_opts *opts, struct ksmm_bench_result *out,
		       struct sp_err *err);

/* Relative error allowed per dtype: fp32 1e-5 (1e-3 with cfg->tf32 1; three
 * TF32 products, tf32 3, are held to fp32's), fp16 and bf16 1e-2. */
double ksmm_tolerance(enum ksmm_dtype t, int tf32);

#ifdef __cplusplus
}
#endif

#endif
