/* Which configurations of kernels/ksmm/ksmm_kernel.cuh can run a pattern,
 * and the one to use for a pattern nobody tuned. The rules mirror what the
 * kernel assumes; each rejection names the rule, so that a sweep's CSV says
 * why a point of the space was skipped. */
#include <stdarg.h>
#include <stdio.h>

#include "ksmm/ksmm_impl.h"

/* Without a device the limits of an H100/H200 (sm_90). */
#define SMEM_DEFAULT (227 * 1024)
#define MAX_THREADS 1024
/* Accumulators a thread may hold: past this the compiler spills them. */
#define MAX_ACC 256

static int reject(char *why, size_t n, const char *fmt, ...)
{
	if (why && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return KSMM_UNRUNNABLE;
}

int ksmm_config_threads(const struct ksmm_config *cfg)
{
	if (cfg->thread_rows < 1 || cfg->thread_batch < 1)
		return 0;
	const int tiles = (cfg->tile_rows / cfg->thread_rows) * (cfg->tile_batch / cfg->thread_batch);
	/* tile_d > 1: a group of threads for each de, but on 16-bit tensor
	 * cores each warp computes all of them */
	const int groups = cfg->tile_d > 1 && !ksmm_de_warps(cfg) ? cfg->tile_d : 1;
	return (cfg->variant == KSMM_MMA ? 32 * tiles : tiles) * groups;
}

size_t ksmm_config_smem_bytes(const struct ksmm_config *cfg, enum ksmm_dtype t,
			      enum ksmm_layout l)
{
	const size_t tr = (size_t)cfg->tile_rows, tk = (size_t)cfg->tile_k,
		     tb = (size_t)cfg->tile_batch, stages = (size_t)cfg->stages,
		     td = cfg->tile_d > 1 ? (size_t)cfg->tile_d : 1;
	size_t buffers;
	if (cfg->variant == KSMM_SIMT) { /* fp32, both tiles [k][...], rows padded by 4 */
		buffers = stages * td * 4 * tk * (tr + 4 + tb + 4);
		if (ksmm_async(NULL, t, l, cfg)) /* W as [r][k] */
			buffers = stages * 4 * (tr * (tk + 4) + tk * (tb + 4));
	} else if (ksmm_de_warps(cfg)) {
		/* td W tiles [r][k] padded by 8; one x tile [n][k][de], rows
		 * padded by min(td, 8); no staged output */
		const size_t xpad = td >= 8 ? 8 : td;
		return stages * 2 * (td * tr * (tk + 8) + tb * (tk * td + xpad));
	} else {
		/* MMA: the inputs' type (TF32 as fp32), rows padded by 8 halves
		 * or 4 floats (8 for TF32's bsl X); bsl's X tile is [k][n], bsf's
		 * [n][k]. */
		const size_t size = cfg->tf32 ? 4 : 2, pad = cfg->tf32 ? 4 : 8;
		const size_t b_tile = l == KSMM_BS_LAST ? tk * (tb + (cfg->tf32 ? 8 : pad))
							 : tb * (tk + pad);
		buffers = stages * td * size * (tr * (tk + pad) + b_tile);
	}
	/* tile_d > 1 on SIMT or TF32: the output tile passes through the same
	 * memory. */
	const size_t out = td > 1 ? td * tr * tb * ksmm_dtype_size(t) : 0;
	return buffers > out ? buffers : out;
}

int ksmm_xvec(const struct ksmm_pattern *p, enum ksmm_layout l, const struct ksmm_config *cfg)
{
	if (cfg->tile_d > 1) /* along de, within the block's tile_d */
		return cfg->vec < cfg->tile_d ? cfg->vec : cfg->tile_d;
	return l == KSMM_BS_LAST || p->d == 1 ? cfg->vec : 1;
}

int ksmm_de_warps(const struct ksmm_config *cfg)
{
	return cfg->tile_d > 1 && cfg->variant == KSMM_MMA && !cfg->tf32;
}

int ksmm_async(const struct ksmm_pattern *p, enum ksmm_dtype t, enum ksmm_layout l,
	       const struct ksmm_config *cfg)
{
	if (cfg->variant == KSMM_SIMT) /* fp32 bsl, three stages or more, 4 k a read */
		return t == KSMM_F32 && l == KSMM_BS_LAST && cfg->tile_d == 1 && cfg->stages >= 3 &&
		       cfg->tile_k % 4 == 0;
	return cfg->variant == KSMM_MMA && cfg->vec >= 2 && cfg->stages >= 2 &&
	       (ksmm_de_warps(cfg) || (cfg->tile_d == 1 && ksmm_xvec(p, l, cfg) == cfg->vec));
}

int64_t ksmm_grid_blocks(const struct ksmm_pattern *p, int64_t batch,
			 const struct ksmm_config *cfg)
{
	return p->a * (p->d / (cfg->tile_d > 1 ? cfg->tile_d : 1)) *
	       ((p->b + cfg->tile_rows - 1) / cfg->tile_rows) *
	       ((batch + cfg->tile_batch - 1) / cfg->tile_batch);
}

static int divides(int64_t x, int64_t y)
{
	return y % x == 0;
}

int ksmm_config_check_any(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
			  enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n)
{
	const struct ksmm_config *k = cfg;
	if (k->variant != KSMM_SIMT && k->variant != KSMM_MMA)
		return reject(why, n, "unknown variant %d", (int)k->variant);
	if (k->tile_rows < 1 || k->tile_k < 1 || k->tile_batch < 1 || k->thread_rows < 1 ||
	    k->thread_batch < 1 || k->vec < 1 || k->stages < 1 || k->tile_d < 1)
		return reject(why, n, "every tile size, vec and stages must be at least 1");
	if (k->tile_d > 1 && l != KSMM_BS_FIRST)
		return reject(why, n, "tile_d %d: bsf only (bsl reads x along the batch)",
			      k->tile_d);
	if (k->tile_d & (k->tile_d - 1))
		return reject(why, n, "tile_d %d: not a power of two", k->tile_d);
	if (!divides(k->tile_d, p->d))
		return reject(why, n, "tile_d %d does not divide d = %lld", k->tile_d,
			      (long long)p->d);
	if (ksmm_de_warps(k) && (k->vec < 2 || k->stages < 2))
		return reject(why, n, "tile_d %d on mma: needs cp.async (vec >= 2, stages >= 2)",
			      k->tile_d);
	const size_t esize = ksmm_dtype_size(t);
	if (k->vec != 1 && k->vec != 2 && k->vec != 4 && k->vec != 8)
		return reject(why, n, "vec %d: must be 1, 2, 4 or 8", k->vec);
	if (k->vec * esize > 16)
		return reject(why, n, "vec %d: %zu bytes, over the widest load (16)", k->vec,
			      k->vec * esize);

	if (k->tf32 != 0 && k->tf32 != 1 && k->tf32 != 3)
		return reject(why, n, "tf32 %d: must be 0, 1 (TF32) or 3 (three TF32 products)",
			      k->tf32);
	if (k->tf32 && t != KSMM_F32)
		return reject(why, n, "tf32 applies to fp32 only");
	if (k->tf32 && k->variant != KSMM_MMA)
		return reject(why, n, "tf32 needs the mma variant");
	if (k->variant == KSMM_MMA && t == KSMM_F32 && !k->tf32)
		return reject(why, n, "mma with fp32 needs tf32 (never implied)");

	if (!divides(k->thread_rows, k->tile_rows))
		return reject(why, n, "thread_rows %d does not divide tile_rows %d", k->thread_rows,
			      k->tile_rows);
	if (!divides(k->thread_batch, k->tile_batch))
		return reject(why, n, "thread_batch %d does not divide tile_batch %d",
			      k->thread_batch, k->tile_batch);
	if (k->variant == KSMM_MMA) {
		/* Warp tiles of m16 x n8 (TF32) or m16 x n16 (16-bit: ldmatrix
		 * loads two n8 fragments at once), k steps of 8 or 16. */
		const int nstep = k->tf32 ? 8 : 16, kstep = k->tf32 ? 8 : 16;
		if (!divides(16, k->thread_rows))
			return reject(why, n, "mma: thread_rows %d (warp tile) not a multiple of 16",
				      k->thread_rows);
		if (!divides(nstep, k->thread_batch))
			return reject(why, n, "mma: thread_batch %d (warp tile) not a multiple of %d",
				      k->thread_batch, nstep);
		if (!divides(kstep, k->tile_k))
			return reject(why, n, "mma: tile_k %d not a multiple of %d", k->tile_k,
				      kstep);
	}
	const int xvec = ksmm_xvec(p, l, k);
	if (k->stages > 2 && !ksmm_async(p, t, l, k))
		return reject(why, n, "stages %d: more than 2 needs cp.async (mma: vec >= 2, x "
				      "loaded as wide as w, or tile_d > 1 on fp16/bf16; simt: fp32 "
				      "bsl, tile_k a multiple of 4)", k->stages);
	if (k->stages > 8)
		return reject(why, n, "stages %d: at most 8", k->stages);
	if (!divides(k->vec, k->tile_k))
		return reject(why, n, "vec %d does not divide tile_k %d", k->vec, k->tile_k);
	if (l == KSMM_BS_LAST && !divides(xvec, k->tile_batch))
		return reject(why, n, "vec %d does not divide tile_batch %d", xvec, k->tile_batch);
	if (!divides(k->vec, p->c))
		return reject(why, n, "vec %d does not divide c = %lld", k->vec, (long long)p->c);
	if (batch > 0 && l == KSMM_BS_LAST && !divides(xvec, batch))
		return reject(why, n, "vec %d does not divide the batch %lld (bsl reads x along it)",
			      xvec, (long long)batch);

	const int threads = ksmm_config_threads(k);
	if (threads > MAX_THREADS)
		return reject(why, n, "threads per block: %d, over %d", threads, MAX_THREADS);
	/* mma: 4 floats an m16n8 tile, for each de a warp covers */
	const long tiles = (long)k->thread_rows / 16 * (k->thread_batch / 8);
	const long acc = k->variant == KSMM_MMA ? tiles * 4 * (ksmm_de_warps(k) ? k->tile_d : 1)
						 : (long)k->thread_rows * k->thread_batch;
	if (acc > MAX_ACC)
		return reject(why, n, "registers: %ld accumulators a thread, over %d", acc, MAX_ACC);

	size_t smem_limit = SMEM_DEFAULT;
	int cc;
	if (ksmm_device_limits(&smem_limit, &cc))
		smem_limit = SMEM_DEFAULT;
	const size_t smem = ksmm_config_smem_bytes(k, t, l);
	if (smem > smem_limit)
		return reject(why, n, "shared memory: %zu bytes a block, over %zu", smem, smem_limit);
	if (batch > 0 && ksmm_grid_blocks(p, batch, k) > INT32_MAX)
		return reject(why, n, "%lld blocks, over 2^31 - 1",
			      (long long)ksmm_grid_blocks(p, batch, k));
	return 0;
}

int ksmm_config_check(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		      enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n)
{
	if (batch < 1)
		return reject(why, n, "batch %lld: must be at least 1", (long long)batch);
	return ksmm_config_check_any(p, batch, t, l, cfg, why, n);
}

/* The largest power of two up to `cap` that is at most `x` (at least `lo`). */
static int fit_pow2(int64_t x, int lo, int cap)
{
	int v = cap;
	while (v > lo && v > x)
		v /= 2;
	return v;
}

/* The widest load that divides c (and a bsl batch), within 16 bytes, and
 * three stages for mma (by cp.async), two for SIMT (through registers, as
 * the default's SIMT point stages): 0 when k can then run. */
static int widest(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		  enum ksmm_layout l, struct ksmm_config *k)
{
	for (int vec = (int)(16 / ksmm_dtype_size(t)); vec >= 1; vec /= 2)
		for (int stages = k->variant == KSMM_MMA ? 3 : 2; stages >= 2; stages--) {
			k->vec = vec;
			k->stages = stages;
			if (ksmm_config_check(p, batch, t, l, k, NULL, 0) == 0)
				return 0;
		}
	return -1;
}

void ksmm_config_default(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
			 enum ksmm_layout l, struct ksmm_config *out)
{
	struct ksmm_config k = {.tile_d = 1};
	if (t == KSMM_F32) {
		/* 8 x 4 outputs a thread, 128 threads, 64 rows by 64 batch
		 * columns, k by 16: the fastest point of a 72-point SIMT sweep on
		 * all 9 KSMM patterns of the H100 anchors (bsl, batch 25,088). */
		k.variant = KSMM_SIMT;
		k.tile_rows = fit_pow2(p->b, 8, 64);
		k.thread_rows = k.tile_rows >= 8 ? 8 : k.tile_rows;
		k.tile_batch = fit_pow2(batch, 4, 64);
		k.thread_batch = k.tile_batch >= 4 ? 4 : k.tile_batch;
		k.tile_k = fit_pow2(p->c, 4, 16);
	} else {
		/* Eight warps of 32 x 16 on m16n8k16, 64 x 64 tiles, k by 64,
		 * three cp.async stages. In a 96-point sweep on the 9 KSMM
		 * patterns of the H100 anchors (bsl, batch 25,088, fp16 and bf16)
		 * 32 x 16 warp tiles won on 7, this point on 4; a sweep of warp
		 * tiles of 32 x 32 and up (twice the registers), before bsl's
		 * paired stores, was 1.6 to 2x slower on those. */
		k.variant = KSMM_MMA;
		k.tile_rows = fit_pow2(p->b, 32, 64);
		k.thread_rows = 32;
		k.tile_batch = fit_pow2(batch, 16, 64);
		k.thread_batch = 16;
		k.tile_k = fit_pow2(p->c, 16, 64);
	}
	if (l == KSMM_BS_FIRST && p->d > 1) {
		/* bsf, d > 1: blocks over up to 8 neighbouring de, so that x and
		 * y move along de, 8 to 32 bytes a run. SIMT: 32 x 32 tiles of 64
		 * threads of 4 x 4 a de; mma: 64 x 64 tiles, k by 16, warps of 32
		 * x 32 for all 2 or 4 de, 32 x 16 for 8: the fastest points of
		 * the bsf sweep on configs/ksmm/patterns_short.in (H100, fp16). */
		struct ksmm_config td = k;
		while (td.tile_d < 8 && p->d % (2 * td.tile_d) == 0)
			td.tile_d *= 2;
		if (td.variant == KSMM_SIMT) {
			td.tile_rows = fit_pow2(p->b, 8, 32);
			td.tile_batch = fit_pow2(batch, 16, 32);
			td.thread_rows = td.tile_rows >= 4 ? 4 : td.tile_rows;
			td.thread_batch = 4;
			td.tile_k = fit_pow2(p->c, 4, 32);
		} else {
			td.thread_batch = td.tile_d >= 8 ? 16 : 32;
			td.tile_batch = fit_pow2(batch, td.thread_batch, 64);
			td.tile_k = 16;
		}
		if (widest(p, batch, t, l, &td) == 0) {
			*out = td;
			return;
		}
	}
	if (widest(p, batch, t, l, &k) == 0) {
		*out = k;
		return;
	}
	/* Anything runs on this one: one output a thread, scalar loads. */
	*out = (struct ksmm_config){.variant = KSMM_SIMT,
				    .tile_rows = 16,
				    .tile_k = 16,
				    .tile_batch = 16,
				    .thread_rows = 1,
				    .thread_batch = 1,
				    .vec = 1,
				    .stages = 2,
				    .tile_d = 1};
}

int64_t ksmm_sample_size(int64_t batch, int64_t half)
{
	return batch <= 2 * half ? batch : 2 * half;
}

double ksmm_tolerance(enum ksmm_dtype t, int tf32)
{
	if (t != KSMM_F32)
		return 1e-2;
	return tf32 == 1 ? 1e-3 : 1e-5;
}

const char *ksmm_method_name(enum ksmm_method m)
{
	static const char *const names[KSMM_M_COUNT] = {"kernel", "dense", "dense_tf32", "bmm",
							 "bsr"};
	return (unsigned)m < KSMM_M_COUNT ? names[m] : "?";
}
