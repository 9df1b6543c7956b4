/* One Kronecker-sparse factor times a batch of vectors (Gonon, Zheng,
 * Carrivain, Le, "Fast inference with Kronecker-sparse matrices", ICML
 * 2025). This file is compiled at run time by NVRTC (kernels/ksmm/
 * ksmm_nvrtc.cu), one build per configuration: every hyperparameter below
 * is a -D macro, so tile loops unroll and indices fold into constants, and
 * any point of a tuning space runs without rebuilding spkit. The published
 * kernel (PascalCarrivain/ksmm) reaches the same freedom by rewriting its
 * source with sed and calling nvcc; NVRTC with a disk cache does it in
 * process. No headers: fp16/bf16 conversions are PTX, so the compile needs
 * no CUDA include folder on the machine that runs it.
 *
 * What it computes: for every group g = (al, de) of the a*d groups,
 *     Y_g (b x B) = W_g (b x c) * X_g (c x B)
 * with W_g[be][ga] = w[((al*d + de)*b + be)*c + ga] (the weights in the
 * kernels' (a,d,b,c) layout) and
 *     batch-size-last  X_g[ga][n] = x[((al*c + ga)*d + de)*B + n],
 *                      Y_g[be][n] = y[((al*b + be)*d + de)*B + n];
 *     batch-size-first X_g[ga][n] = x[n*a*c*d + (al*c + ga)*d + de],
 *                      Y_g[be][n] = y[n*a*b*d + (al*b + be)*d + de].
 * fp16 and bf16 are read and written in their type and accumulated in fp32.
 *
 * Work decomposition: a block computes a KSMM_TR x KSMM_TB tile of one
 * group's Y (rows of b by batch columns), walking c in steps of KSMM_TK.
 * Each step stages the W tile (TR x TK) and the X tile (TK x TB) in shared
 * memory. 16-bit tensor-core tiles whose shared layout is the global one go
 * there by cp.async, KSMM_STAGES buffers deep (STAGES - 1 steps in flight
 * during a multiply, no registers spent on them), as do SIMT fp32 bsl
 * tiles at three stages or more (by TMA on sm_90 and later: KSMM_TMA,
 * tma_step); the others go through registers, the next step loaded while
 * the current one is multiplied (KSMM_STAGES 2: double buffering, one
 * barrier a step). cp.async won on the H100 by 4 to 20% on the anchors'
 * fp16 bsl patterns (same space): the register path holds a whole step per
 * thread and waits for it a step later, where cp.async keeps several steps
 * in flight without registers.
 * The output tile stays in registers until the end:
 *   SIMT (KSMM_MMA 0): each thread owns KSMM_WR x KSMM_WB outputs (its
 *     columns in 4-wide chunks spread over the tile: acc_t below), an outer
 *     product a k; shared memory holds fp32 (fp16/bf16 converted once).
 *   MMA (KSMM_MMA 1): each warp owns a KSMM_WR x KSMM_WB tile made of
 *     m16n8k16 mma.sync (fp16, bf16; fragments by ldmatrix) or m16n8k8
 *     on fp32 (only when asked): KSMM_TF32 1 rounds the inputs to TF32,
 *     KSMM_TF32 3 keeps fp32's accuracy with three TF32 products (below,
 *     mma_tf32x3); shared memory holds the inputs' own type. Small warp tiles win where the pattern is memory-bound:
 *     32 x 16 (64 registers, 8 warps a 64 x 64 block) is the best point on
 *     7 of the 9 anchor patterns (fp16 bsl): more warps an SM, more loads
 *     in flight. (It came in with the paired bsl stores of store_pair;
 *     together they took 4,64,64,16 and 16,64,64,4 from 0.43 ms to 0.22.)
 * Blocks are numbered row tile fastest, then de, then batch tile, then al:
 * blocks that read the same X tile (other row tiles) or the same sectors
 * of it (batch-size-first: neighbouring de) run side by side and share L2.
 *
 * Bytes moved: x, y and w once each from DRAM at best (the memory floor);
 * x again from L2 for each of ceil(b/TR) row tiles and w for each of
 * ceil(B/TB) batch tiles. Large TR and TB cut those re-reads; the shared
 * memory and registers they cost are what the tuner trades.
 *
 * Global loads are KSMM_VEC elements wide along the contiguous dimension
 * (w along c; x along the batch for bsl, along c for bsf when d = 1:
 * KSMM_XVEC), whole vectors in or out of range (the host checks that VEC
 * divides c, and the batch for bsl); elements past b, c or the batch are
 * read as zeros and not written.
 *
 * Batch-size-first with d > 1: x[n][al][ga][de] has de contiguous, so a
 * block of KSMM_TD = 1 reads x one element a load, d elements apart (4 to
 * 12x the memory floor on the H100 anchors). With KSMM_TD > 1 (dividing d)
 * a block covers TD neighbouring de, and x moves KSMM_XVEC elements wide
 * along de (with TD = d a step's x tile is TK * d contiguous elements a
 * batch row):
 *   16-bit mma (KSMM_DTM): the x tile stays in shared memory as in global
 *     memory, [n][k][de], brought by cp.async; a warp computes its tile for
 *     all TD de, reading for each (n, k) the TD values of de in one load
 *     and pairing neighbouring k with prmt into each de's B fragment; its
 *     accumulators hold all TD de of an output, stored TD wide.
 *   SIMT and TF32: TD groups of threads, each the block of one de above,
 *     share the loads, transposed on their way into each group's tiles;
 *     the output tile goes through shared memory ([n][r][de]) so that y is
 *     written as wide along de. */

#define KSMM_F32 0
#define KSMM_F16 1
#define KSMM_BF16 2

#if KSMM_DTYPE == KSMM_F32
typedef float elem_t;
#else
typedef unsigned short elem_t; /* fp16 or bf16 bits */
#endif

/* Tiles go global -> shared by cp.async when shared memory holds them as
 * global memory does (16-bit tensor-core tiles, x loaded as wide as w, at
 * least 4 bytes, one de a block; and SIMT fp32 bsl at three stages or
 * more, KSMM_SIMT_ASYNC below); otherwise through registers. Must match
 * ksmm_async() on the host. */
/* A block spans TD values of de (bsf only; 1 otherwise); DTM: on 16-bit
 * tensor cores, each warp all TD of them; DTS: in TD groups of threads,
 * the output staged through shared memory. */
#define KSMM_DT (KSMM_TD > 1)
#define KSMM_DTM (KSMM_DT && KSMM_MMA && !KSMM_TF32)
#define KSMM_DTS (KSMM_DT && !KSMM_DTM)

#define KSMM_X_ASYNC (KSMM_DTM || (KSMM_TD == 1 && KSMM_XVEC == KSMM_VEC))
/* SIMT, fp32, bsl, STAGES >= 3: W kept [r][k] as in global memory (not
 * transposed) so that both tiles go by cp.async, STAGES - 1 steps in
 * flight and no registers held for them; 1 or 2 stages keep the register
 * path. */
#define KSMM_SIMT_ASYNC (!KSMM_MMA && KSMM_DTYPE == KSMM_F32 && KSMM_BSL && KSMM_STAGES >= 3)
/* KSMM_TMA 1 (set by the host for KSMM_SIMT_ASYNC points of 16-byte
 * vectors on sm_90 and later): the tensor memory accelerator brings both
 * tiles instead of cp.async (tma_step below). */
#define KSMM_MMA_ASYNC (KSMM_MMA && KSMM_VEC >= 2 && KSMM_STAGES >= 2)
#if (KSMM_MMA_ASYNC && KSMM_X_ASYNC) || KSMM_SIMT_ASYNC
#define KSMM_ASYNC 1
#else
#define KSMM_ASYNC 0
#endif

/* Threads of one de's tile (a group), and of a block: TD groups. */
#if KSMM_MMA
#define KSMM_GROUP ((KSMM_TR / KSMM_WR) * (KSMM_TB / KSMM_WB) * 32)
#else
#define KSMM_GROUP ((KSMM_TR / KSMM_WR) * (KSMM_TB / KSMM_WB))
#endif
#define KSMM_GROUPS (KSMM_DTM ? 1 : KSMM_TD)
#define KSMM_THREADS (KSMM_GROUPS * KSMM_GROUP)

__device__ __forceinline__ float elem_to_float(elem_t v)
{
#if KSMM_DTYPE == KSMM_F32
	return v;
#elif KSMM_DTYPE == KSMM_F16
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
	return f;
#else
	return __uint_as_float((unsigned)v << 16);
#endif
}

__device__ __forceinline__ elem_t float_to_elem(float f)
{
#if KSMM_DTYPE == KSMM_F32
	return f;
#elif KSMM_DTYPE == KSMM_F16
	unsigned short v;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v) : "f"(f));
	return v;
#else
	unsigned short v;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v) : "f"(f));
	return v;
#endif
}

/* N elements moved as one load of N * sizeof(elem_t) bytes. */
template <int N> struct __align__(N * sizeof(elem_t)) vec_t {
	elem_t e[N];
};

/* A shared-memory pointer as the 32-bit address PTX takes. */
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* Shared-memory tiles. Rows are padded so that the reads of the inner
 * loop fall in distinct banks: SIMT reads a k-row of W and of X (padding 4
 * floats keeps 16-byte reads aligned); MMA's ldmatrix reads 8 rows of 16
 * bytes (padding 8 halves spreads them over all 32 banks); TF32 reads 4 k
 * of 8 rows of W (padding 4 floats) and, for bsl, 8 n of 4 k-rows of X
 * (padding 8 floats: lane (g, t) at bank 8 t + g). */
#if KSMM_MMA
#if KSMM_TF32
typedef float smem_t;
#define KSMM_KSTEP 8
#define KSMM_PAD 4
#define KSMM_BPAD (KSMM_BSL ? 8 : 4)
#else
typedef unsigned short smem_t;
#define KSMM_KSTEP 16
#define KSMM_PAD 8
#define KSMM_BPAD 8
#endif
/* W as [row][k]; X as [n][k] (bsf: contiguous along k as in memory) or, for
 * bsl, [k][n] (contiguous along n as in memory; ldmatrix.trans turns it for
 * 16-bit types). Both as in memory, so that cp.async can bring them. */
#define A_LD (KSMM_TK + KSMM_PAD)
#define A_AT(r, k) ((r) * A_LD + (k))
#if KSMM_BSL
#define B_LD (KSMM_TB + KSMM_BPAD)
#define B_AT(k, n) ((k) * B_LD + (n))
#else
#define B_LD (KSMM_TK + KSMM_PAD)
#define B_AT(k, n) ((n) * B_LD + (k))
#endif
#define A_SIZE (KSMM_TR * A_LD)
#if KSMM_DTM
/* X as [n][k][de], TD values of de a (n, k); rows padded so that the
 * loads of a warp's eight n fall in distinct banks. */
#define XS_PAD (KSMM_TD >= 8 ? 8 : KSMM_TD)
#define XS_LD (KSMM_TK * KSMM_TD + XS_PAD)
#define B_SIZE (KSMM_TB * XS_LD)
#else
#define B_SIZE (KSMM_BSL ? KSMM_TK * B_LD : KSMM_TB * B_LD)
#endif
#else
typedef float smem_t;
#define KSMM_PAD (KSMM_TMA ? 0 : 4)
/* Both as [k][...]: the outer product reads a row of each per k. With
 * cp.async (KSMM_SIMT_ASYNC) W stays [r][k] as in memory, and a thread
 * reads 4 k of a row at once. TMA writes its boxes unpadded: on the
 * default space's points a warp's 16-byte reads then touch two W rows TK
 * floats apart and 16 consecutive X chunks, no bank conflict either way.
 * The host's size (padded) holds the unpadded buffers and TMA's barriers
 * after them. */
#if KSMM_SIMT_ASYNC
#define A_LD (KSMM_TK + KSMM_PAD)
#define A_AT(r, k) ((r) * A_LD + (k))
#define A_SIZE (KSMM_TR * A_LD)
#else
#define A_LD (KSMM_TR + KSMM_PAD)
#define A_AT(r, k) ((k) * A_LD + (r))
#define A_SIZE (KSMM_TK * A_LD)
#endif
#define B_LD (KSMM_TB + KSMM_PAD)
#define B_AT(k, n) ((k) * B_LD + (n))
#define B_SIZE (KSMM_TK * B_LD)
#endif
/* One buffer: the TD W tiles, then the groups' X tiles. */
#define STAGE_SIZE (KSMM_TD * A_SIZE + KSMM_GROUPS * B_SIZE)

/* An element as shared memory holds it: fp32 for SIMT, the input's own
 * type for MMA (TF32's rounding happens as fragments are read). */
__device__ __forceinline__ smem_t to_smem(elem_t v)
{
#if KSMM_MMA
	return v;
#else
	return elem_to_float(v);
#endif
}

/* The vectors of one step's tiles, for each of TD de: W is TR x TK along
 * k; X is TK x TB, along n for bsl, along k for bsf (d = 1) and along de
 * (TD > 1). A thread holds every KSMM_THREADS-th. */
#define W_VECS (KSMM_TD * KSMM_TR * KSMM_TK / KSMM_VEC)
#define X_VECS (KSMM_TD * KSMM_TK * KSMM_TB / KSMM_XVEC)
#define W_PER_THREAD ((W_VECS + KSMM_THREADS - 1) / KSMM_THREADS)
#define X_PER_THREAD ((X_VECS + KSMM_THREADS - 1) / KSMM_THREADS)

struct ksmm_args {
	int a, b, c, d, batch;
};

struct step_regs {
	vec_t<KSMM_VEC> w[W_PER_THREAD];
	vec_t<KSMM_XVEC> x[X_PER_THREAD];
};

/* The W vector i of the tiles at (r0, k0): its de (of TD), row and first
 * k. In row order, except for SIMT (W transposed into [k][r] in shared
 * memory) with an even number of vectors a row: there two neighbouring
 * threads take the two halves of 2 VEC elements of a row (one 32-byte
 * sector for fp32 VEC 4) and the next pair the next row, so that the
 * scattered stores of a warp fall in distinct banks (row order put 8
 * threads on one row, 4 ways in each bank for 64- and 128-row tiles).
 * With the thread tiles below, on the H100 run described there: 43 of 51
 * patterns won at a median 1.39x over the best baseline with the pairs,
 * 42 at 1.34x (the kernel no faster than before) in row order. Not for
 * every point: 64 x 32 x 128 of 8 x 4 took 87.0 ms on 1,1024,1024,64
 * with the pairs, 82.9 in row order, where 128 x 8 x 128 of 8 x 8 took
 * 85.1 and 86.9; yet row order at tile_k 32 and above, tuned over the 51
 * patterns, left the tuned times where they were (median 1.003 times). */
#define W_PAIRS (!KSMM_MMA && !KSMM_SIMT_ASYNC && (KSMM_TK / KSMM_VEC) % 2 == 0)
__device__ __forceinline__ void w_vec_pos(unsigned i, int *dd, int *r, int *k)
{
	*dd = i / (KSMM_TR * KSMM_TK / KSMM_VEC);
	i %= KSMM_TR * KSMM_TK / KSMM_VEC;
#if W_PAIRS
	*r = i / 2 % KSMM_TR;
	*k = (i / (2 * KSMM_TR) * 2 + i % 2) * KSMM_VEC;
#else
	*r = i / (KSMM_TK / KSMM_VEC);
	*k = i % (KSMM_TK / KSMM_VEC) * KSMM_VEC;
#endif
}

/* The X vector i of the tiles at (k0, n0): its first de, k and n; the
 * vectors in memory order (de, then k, then n fastest last). */
__device__ __forceinline__ void x_vec_pos(unsigned i, int *dd, int *k, int *n)
{
#if KSMM_BSL
	*dd = 0;
	*k = i / (KSMM_TB / KSMM_XVEC);
	*n = i % (KSMM_TB / KSMM_XVEC) * KSMM_XVEC;
#elif KSMM_DT
	*dd = i % (KSMM_TD / KSMM_XVEC) * KSMM_XVEC;
	i /= KSMM_TD / KSMM_XVEC;
	*k = i % KSMM_TK;
	*n = i / KSMM_TK;
#else
	*dd = 0;
	*n = i / (KSMM_TK / KSMM_XVEC);
	*k = i % (KSMM_TK / KSMM_XVEC) * KSMM_XVEC;
#endif
}

/* Global to registers: one step's vectors of this thread, zeros outside. */
__device__ __forceinline__ void load_step(const elem_t *__restrict__ wg,
						 const elem_t *__restrict__ xg,
						 const struct ksmm_args &p, int r0, int k0, int n0,
						 struct step_regs *s)
{
#pragma unroll
	for (int j = 0; j < W_PER_THREAD; j++) {
		const int i = threadIdx.x + j * KSMM_THREADS;
		int dd, r, k;
		w_vec_pos(i, &dd, &r, &k);
		vec_t<KSMM_VEC> v = {};
		if ((W_VECS % KSMM_THREADS == 0 || i < W_VECS) && r0 + r < p.b && k0 + k < p.c)
			v = *(const vec_t<KSMM_VEC> *)(wg + ((size_t)dd * p.b + r0 + r) * p.c + k0 +
							k);
		s->w[j] = v;
	}
#pragma unroll
	for (int j = 0; j < X_PER_THREAD; j++) {
		const int i = threadIdx.x + j * KSMM_THREADS;
		int dd, k, n;
		x_vec_pos(i, &dd, &k, &n);
		vec_t<KSMM_XVEC> v = {};
		if ((X_VECS % KSMM_THREADS == 0 || i < X_VECS) && k0 + k < p.c &&
		    n0 + n < p.batch) {
#if KSMM_BSL
			/* xg: row (al*c)*d + de; rows of X_g are d apart. */
			v = *(const vec_t<KSMM_XVEC> *)(xg + (size_t)(k0 + k) * p.d * p.batch +
							n0 + n);
#else
			/* xg: column (al*c)*d + de0; X_g's k are d apart (the vector
			 * goes along k when d = 1, along de when TD > 1). */
			v = *(const vec_t<KSMM_XVEC> *)(xg + (size_t)(n0 + n) * p.a * p.c * p.d +
							(size_t)(k0 + k) * p.d + dd);
#endif
		}
		s->x[j] = v;
	}
}

/* Registers to one shared-memory buffer. */
__device__ __forceinline__ void store_step(const struct step_regs *s, smem_t *as,
						  smem_t *bs)
{
#pragma unroll
	for (int j = 0; j < W_PER_THREAD; j++) {
		const int i = threadIdx.x + j * KSMM_THREADS;
		if (W_VECS % KSMM_THREADS != 0 && i >= W_VECS)
			break;
		int dd, r, k;
		w_vec_pos(i, &dd, &r, &k);
#pragma unroll
		for (int e = 0; e < KSMM_VEC; e++)
			as[dd * A_SIZE + A_AT(r, k + e)] = to_smem(s->w[j].e[e]);
	}
#pragma unroll
	for (int j = 0; j < X_PER_THREAD; j++) {
		const int i = threadIdx.x + j * KSMM_THREADS;
		if (X_VECS % KSMM_THREADS != 0 && i >= X_VECS)
			break;
		int dd, k, n;
		x_vec_pos(i, &dd, &k, &n);
#pragma unroll
		for (int e = 0; e < KSMM_XVEC; e++)
#if KSMM_BSL
			bs[B_AT(k, n + e)] = to_smem(s->x[j].e[e]);
#elif KSMM_DT
			bs[(dd + e) * B_SIZE + B_AT(k, n)] = to_smem(s->x[j].e[e]);
#else
			bs[B_AT(k + e, n)] = to_smem(s->x[j].e[e]);
#endif
	}
}

#if KSMM_ASYNC
/* Global straight to shared memory (cp.async, no registers, no wait until
 * the step is needed): 16-bit tensor-core tiles whose shared layout is the
 * global one, so a vector lands where it is read. Out of range: the source
 * size 0 fills zeros (and reads nothing at the tile's own address). */
template <int BYTES>
__device__ __forceinline__ void cp_async(unsigned dst, const elem_t *src, bool in)
{
	if (BYTES == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
			     "r"(in ? 16 : 0));
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(src),
			     "n"(BYTES), "r"(in ? BYTES : 0));
}

__device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;");
}

/* Until at most STAGES - 2 groups are pending: the oldest step has landed. */
__device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;" ::"n"(KSMM_STAGES - 2));
}

/* A thread's cp.async vectors, placed once before the loop: each one's
 * source at k0 = 0, its place in a stage-0 buffer and whether its row (w)
 * or batch column (x) is inside. A row or column past the edge is clamped
 * to the last one, so that every address a step forms lies inside the
 * array (size 0 reads nothing there); offsets fit 32 bits, as
 * ksmm_pattern_check keeps every array under 2^31 elements. A step moves
 * each source on by TK of c and adds the buffer's offset to each place:
 * ~1,130 instructions a step on the 64 x 8 x 128 point of 16 x 8 (fp32
 * bsl, sm_90), where working each address out from (r, k, n) every step
 * took 1,193. Alone it left the tuned fp32 bsl times where they were (H200,
 * 51 speed patterns, median +0.3%: that kernel waits on more than its
 * instruction count); with the stores' fast path (store_acc) and unsigned
 * tile and thread indices, which took 60 to 200 instructions off each
 * block's start, 2.7% off them (bench/RESULTS.md). */
struct async_plan {
	const elem_t *w_src[W_PER_THREAD], *x_src[X_PER_THREAD];
	unsigned w_dst[W_PER_THREAD], x_dst[X_PER_THREAD];
	bool w_in[W_PER_THREAD], x_in[X_PER_THREAD];
};

/* Whether vector i of a step exists (the last round of a thread's vectors
 * may hold fewer than KSMM_THREADS). */
#define W_VEC_EXISTS(i) (W_VECS % KSMM_THREADS == 0 || (i) < W_VECS)
#define X_VEC_EXISTS(i) (X_VECS % KSMM_THREADS == 0 || (i) < X_VECS)

__device__ __forceinline__ void plan_async(const elem_t *wg, const elem_t *xg,
					   const struct ksmm_args &p, int r0, int n0, smem_t *as,
					   struct async_plan *pl)
{
	smem_t *bs = as + KSMM_TD * A_SIZE;
#pragma unroll
	for (int j = 0; j < W_PER_THREAD; j++) {
		int dd, r, k;
		w_vec_pos(threadIdx.x + j * KSMM_THREADS, &dd, &r, &k);
		pl->w_in[j] = r0 + r < p.b;
		pl->w_src[j] = wg + ((unsigned)dd * p.b + min(r0 + r, p.b - 1)) * p.c + k;
		pl->w_dst[j] = smem_addr(as + dd * A_SIZE + A_AT(r, k));
	}
#pragma unroll
	for (int j = 0; j < X_PER_THREAD; j++) {
		int dd, k, n;
		x_vec_pos(threadIdx.x + j * KSMM_THREADS, &dd, &k, &n);
		pl->x_in[j] = n0 + n < p.batch;
#if KSMM_BSL
		pl->x_src[j] = xg + ((unsigned)k * p.d * p.batch + min(n0 + n, p.batch - KSMM_XVEC));
#else
		pl->x_src[j] = xg + ((unsigned)min(n0 + n, p.batch - 1) * p.a * p.c * p.d +
				     (unsigned)k * p.d + dd);
#endif
#if KSMM_DTM
		pl->x_dst[j] = smem_addr(bs + n * XS_LD + k * KSMM_TD + dd);
#else
		pl->x_dst[j] = smem_addr(bs + B_AT(k, n));
#endif
	}
}

/* One planned vector (w's or x's) into the buffer stage_bytes past stage
 * 0's, its source moved on by `step`. FULL: the step lies within c (every
 * step but a last, partial one); otherwise the vector, at k of the step,
 * is zeros where k >= kleft (kleft = c - k0). */
template <int BYTES, bool FULL>
__device__ __forceinline__ void load_vec(const elem_t *&src, unsigned dst, bool in, int k,
					 int kleft, const elem_t *base, unsigned step)
{
	in = in && (FULL || k < kleft);
	cp_async<BYTES>(dst, FULL || in ? src : base, in);
	src += step;
}

/* The next step's tiles, and the sources on to the step after. x_step:
 * x's k stride times TK. */
template <bool FULL>
__device__ __forceinline__ void load_async(struct async_plan *pl, const elem_t *wg,
					   const elem_t *xg, int kleft, unsigned x_step,
					   unsigned stage_bytes)
{
#pragma unroll
	for (int j = 0; j < W_PER_THREAD; j++) {
		const int i = threadIdx.x + j * KSMM_THREADS;
		if (!W_VEC_EXISTS(i))
			break;
		int dd, r, k;
		w_vec_pos(i, &dd, &r, &k);
		load_vec<KSMM_VEC * (int)sizeof(elem_t), FULL>(pl->w_src[j], pl->w_dst[j] + stage_bytes,
							       pl->w_in[j], k, kleft, wg, KSMM_TK);
	}
#pragma unroll
	for (int j = 0; j < X_PER_THREAD; j++) {
		const int i = threadIdx.x + j * KSMM_THREADS;
		if (!X_VEC_EXISTS(i))
			break;
		int dd, k, n;
		x_vec_pos(i, &dd, &k, &n);
		load_vec<KSMM_XVEC * (int)sizeof(elem_t), FULL>(pl->x_src[j], pl->x_dst[j] + stage_bytes,
								pl->x_in[j], k, kleft, xg, x_step);
	}
}

/* Step s's tiles (none past the last step) into the buffer stage_bytes
 * past stage 0's: the prologue's first steps and each step's next. The
 * first full_steps steps lie within c. */
__device__ __forceinline__ void load_async_step(struct async_plan *pl, const elem_t *wg,
						const elem_t *xg, const struct ksmm_args &p, int s,
						int full_steps, int steps, unsigned x_step,
						unsigned stage_bytes)
{
	if (s < full_steps)
		load_async<true>(pl, wg, xg, 0, x_step, stage_bytes);
	else if (s < steps)
		load_async<false>(pl, wg, xg, p.c - s * KSMM_TK, x_step, stage_bytes);
}
#endif

/* Y_g[r][n] = v when inside the matrix; yg points at row (al*b)*d + de.
 * TD > 1: into the block's output tile in shared memory, [n][r][de], at
 * the block's own r and n (yg: the tile plus this group's de). */
__device__ __forceinline__ void store_out(elem_t *__restrict__ yg,
						 const struct ksmm_args &p, int r, int n, float v)
{
#if KSMM_DTS
	yg[(n * KSMM_TR + r) * KSMM_TD] = float_to_elem(v);
	return;
#endif
	if (r >= p.b || n >= p.batch)
		return;
#if KSMM_BSL
	yg[(size_t)r * p.d * p.batch + n] = float_to_elem(v);
#else
	yg[(size_t)n * p.a * p.b * p.d + (size_t)r * p.d] = float_to_elem(v);
#endif
}

#if KSMM_MMA
#define MI (KSMM_WR / 16)
#define NI (KSMM_WB / 8)
#if KSMM_DTM
struct acc_t {
	float v[KSMM_TD][MI][NI][4];
};
#else
struct acc_t {
	float v[MI][NI][4];
};
#endif

#if !KSMM_TF32
/* c += A (16 x 16, four registers) times B (16 x 8, two), 16-bit inputs,
 * fp32 accumulators. */
__device__ __forceinline__ void mma_16(float *c, const unsigned *a, unsigned b0, unsigned b1)
{
#if KSMM_DTYPE == KSMM_F16
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#else
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#endif
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif

#if KSMM_DTM
/* Four 8 x 8 matrices of 16-bit values, lane l giving the row address of
 * matrix l / 8 (ldmatrix.x4). */
__device__ __forceinline__ void ldsm_x4(unsigned *r, const smem_t *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(smem_addr(p)));
}

/* The TD values of de at p (an (n, k) of the x tile) as TD / 2 words. */
__device__ __forceinline__ void load_de(const smem_t *p, unsigned *w)
{
#if KSMM_TD == 2
	w[0] = *(const unsigned *)p;
#elif KSMM_TD == 4
	const uint2 v = *(const uint2 *)p;
	w[0] = v.x, w[1] = v.y;
#else
#pragma unroll
	for (int i = 0; i < KSMM_TD / 8; i++) {
		const uint4 v = *(const uint4 *)(p + 8 * i);
		w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
	}
#endif
}

/* The 16-bit halves of de in lo (low) and hi (high): a B fragment's pair
 * of neighbouring k. */
template <int ODD> __device__ __forceinline__ unsigned pair_de(unsigned lo, unsigned hi)
{
	unsigned r;
	asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "n"(ODD ? 0x7632 : 0x5410));
	return r;
}

/* One step of TK for all TD de: for each n8 tile, the B fragments (k, n)
 * of every de from four loads of TD values a lane (k = 2t, 2t + 1, 2t + 8,
 * 2t + 9 at n = g), paired by prmt; the A fragments (W of each de) by
 * ldmatrix, again for each n8 tile: holding one tile's fragments at a time
 * keeps the registers of TD x MI x NI accumulators affordable. */
__device__ __forceinline__ void compute_step(const smem_t *as, const smem_t *bs, int wr0,
					     int wn0, struct acc_t *acc)
{
	const int lane = threadIdx.x & 31, q = lane >> 3, l8 = lane & 7;
	const int g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int kk = 0; kk < KSMM_TK; kk += 16)
#pragma unroll
		for (int ni = 0; ni < NI; ni++) {
			const smem_t *p = bs + (wn0 + ni * 8 + g) * XS_LD + (kk + 2 * t) * KSMM_TD;
			unsigned v[4][KSMM_TD / 2];
			load_de(p, v[0]);
			load_de(p + KSMM_TD, v[1]);
			load_de(p + 8 * KSMM_TD, v[2]);
			load_de(p + 9 * KSMM_TD, v[3]);
#pragma unroll
			for (int dd = 0; dd < KSMM_TD; dd++) {
				const int w = dd >> 1;
				const unsigned b0 = dd & 1 ? pair_de<1>(v[0][w], v[1][w])
							   : pair_de<0>(v[0][w], v[1][w]);
				const unsigned b1 = dd & 1 ? pair_de<1>(v[2][w], v[3][w])
							   : pair_de<0>(v[2][w], v[3][w]);
#pragma unroll
				for (int mi = 0; mi < MI; mi++) {
					unsigned af[4];
					const smem_t *a = as + dd * A_SIZE +
							  A_AT(wr0 + mi * 16 + l8 + (q & 1) * 8,
							       kk + (q >> 1) * 8);
					ldsm_x4(af, a);
					mma_16(acc->v[dd][mi][ni], af, b0, b1);
				}
			}
		}
}

/* Outputs (r, n) and (r, n + 1), elements e and e + 1 of fragment (mi,
 * ni), for all TD de: TD neighbours in y each, one store of TD * 2 bytes
 * (two of 16 for TD = 16). */
__device__ __forceinline__ void store_frag(elem_t *__restrict__ yg, const struct ksmm_args &p,
					   int r, int n, const struct acc_t *acc, int mi, int ni,
					   int e)
{
#pragma unroll
	for (int j = 0; j < 2; j++) {
		if (r >= p.b || n + j >= p.batch)
			continue;
		unsigned w[KSMM_TD / 2];
#pragma unroll
		for (int i = 0; i < KSMM_TD / 2; i++)
			w[i] = (unsigned)float_to_elem(acc->v[2 * i][mi][ni][e + j]) |
			       (unsigned)float_to_elem(acc->v[2 * i + 1][mi][ni][e + j]) << 16;
		elem_t *o = yg + (size_t)(n + j) * p.a * p.b * p.d + (size_t)r * p.d;
#if KSMM_TD == 2
		*(unsigned *)o = w[0];
#elif KSMM_TD == 4
		*(uint2 *)o = make_uint2(w[0], w[1]);
#else
#pragma unroll
		for (int i = 0; i < KSMM_TD / 8; i++)
			*(uint4 *)(o + 8 * i) =
				make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
#endif
	}
}
#else
#if KSMM_TF32
/* c += A (16 x 8, four registers) times B (8 x 8, two), TF32 inputs. */
__device__ __forceinline__ void mma_tf32(float *c, const unsigned *a, const unsigned *b)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* v rounded to TF32 (10 bits of mantissa), to nearest with ties away from
 * zero as cvt.rna.tf32.f32 does (it rounds the magnitude, and fp32 keeps
 * sign and magnitude apart), in two integer operations where cvt.rna takes
 * about five on sm_90 (it also guards NaNs, which this does not need: a
 * NaN stays one unless its payload lies in the low 13 bits only). */
__device__ __forceinline__ unsigned tf32_round(float v)
{
	return (__float_as_uint(v) + 0x1000u) & 0xffffe000u;
}

/* An fp32 fragment element as TF32: big, its rounding, and for KSMM_TF32 3
 * small, what big left out (v - big, exact in fp32) truncated to TF32 (one
 * operation; small is as often negative as positive, so truncation's error
 * builds no bias), so that big + small carries 21 bits of v. */
__device__ __forceinline__ void tf32_split(float v, unsigned *big, unsigned *small)
{
	*big = tf32_round(v);
#if KSMM_TF32 == 3
	*small = __float_as_uint(v - __uint_as_float(*big)) & 0xffffe000u;
#endif
}

/* c += A B with fp32's accuracy from TF32 tensor cores ("3xTF32", as
 * CUTLASS's fast fp32 GEMMs): A B = Ab Bb + Ab Bs + As Bb + As Bs, the
 * last term below 2^-20 of the product and dropped; the small terms first,
 * so that they are not lost against a large accumulator. Three mma.sync a
 * tile where TF32 takes one. Non-finite inputs give NaN (inf - inf in the
 * split). */
__device__ __forceinline__ void mma_tf32x3(float *c, const unsigned *ab, const unsigned *as,
					   const unsigned *bb, const unsigned *bs)
{
	mma_tf32(c, as, bb);
	mma_tf32(c, ab, bs);
	mma_tf32(c, ab, bb);
}

/* One step of TK on TF32 tensor cores: the warp's MI x NI tiles of m16n8
 * accumulate A (wr0.., k) times B (k, wn0..) into acc. Fragments as the PTX
 * ISA's mma.m16n8k8 figures: A (g, t), (g + 8, t), (g, t + 4), (g + 8,
 * t + 4); B (k t, n g), (t + 4, g). The small parts are used at KSMM_TF32 3
 * only. */
__device__ __forceinline__ void tf32_step(const smem_t *as, const smem_t *bs, int wr0, int wn0,
					  struct acc_t *acc)
{
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int kk = 0; kk < KSMM_TK; kk += KSMM_KSTEP) {
		unsigned af[MI][4], bf[NI][2], afs[MI][4], bfs[NI][2];
#pragma unroll
		for (int mi = 0; mi < MI; mi++) {
			const int r = wr0 + mi * 16 + g;
#pragma unroll
			for (int e = 0; e < 4; e++)
				tf32_split(as[A_AT(r + (e & 1) * 8, kk + t + (e >> 1) * 4)],
					   &af[mi][e], &afs[mi][e]);
		}
#pragma unroll
		for (int ni = 0; ni < NI; ni++) {
			const int n = wn0 + ni * 8 + g;
#pragma unroll
			for (int e = 0; e < 2; e++)
				tf32_split(bs[B_AT(kk + t + e * 4, n)], &bf[ni][e], &bfs[ni][e]);
		}
#pragma unroll
		for (int mi = 0; mi < MI; mi++)
#pragma unroll
			for (int ni = 0; ni < NI; ni++) {
#if KSMM_TF32 == 3
				mma_tf32x3(acc->v[mi][ni], af[mi], afs[mi], bf[ni], bfs[ni]);
#else
				mma_tf32(acc->v[mi][ni], af[mi], bf[ni]);
#endif
			}
	}
}
#endif

/* One step of TK: the warp's MI x NI tiles of m16n8 accumulate A (wr0.., k)
 * times B (k, wn0..). Fragment layouts are those of the PTX ISA's
 * mma.m16n8k16 / m16n8k8 figures. */
__device__ __forceinline__ void compute_step(const smem_t *as, const smem_t *bs, int wr0,
						    int wn0, struct acc_t *acc)
{
#if KSMM_TF32 == 3
	/* The tensor cores' fp32 accumulator drops the bits an addition
	 * shifts out (truncation, always toward zero): summed into acc over a
	 * whole c of 1,024, that bias reached 8.6e-6 of the output on the H100,
	 * near fp32's 1e-5. A step's products summed apart, then added to acc
	 * with rounding to nearest, keep it to the few additions of a step (a
	 * model of it: 9.3e-6 -> 3.4e-7 at c = 1,024 with tile_k 16), for MI x
	 * NI x 4 more registers. */
	struct acc_t part;
#pragma unroll
	for (int i = 0; i < (int)(sizeof part.v / sizeof(float)); i++)
		((float *)part.v)[i] = 0.f;
	tf32_step(as, bs, wr0, wn0, &part);
#pragma unroll
	for (int i = 0; i < (int)(sizeof part.v / sizeof(float)); i++)
		((float *)acc->v)[i] += ((float *)part.v)[i];
#elif KSMM_TF32
	tf32_step(as, bs, wr0, wn0, acc);
#else
	const int lane = threadIdx.x & 31;
#pragma unroll
	for (int kk = 0; kk < KSMM_TK; kk += KSMM_KSTEP) {
		const int q = lane >> 3, l8 = lane & 7;
		unsigned af[MI][4], bf[NI][2];
		/* A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
		 * k 8-15), (rows 8-15, k 8-15); lane supplies row l8 of matrix q. */
#pragma unroll
		for (int mi = 0; mi < MI; mi++) {
			const smem_t *p = as + A_AT(wr0 + mi * 16 + l8 + (q & 1) * 8, kk + (q >> 1) * 8);
			asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
				     : "=r"(af[mi][0]), "=r"(af[mi][1]), "=r"(af[mi][2]),
				       "=r"(af[mi][3])
				     : "r"(smem_addr(p)));
		}
		/* B, two n8 tiles at a time: matrices (n 0-7, k 0-7), (n 0-7, k
		 * 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15). */
#pragma unroll
		for (int ni = 0; ni < NI; ni += 2) {
			const int n = wn0 + ni * 8 + (q >> 1) * 8, k = kk + (q & 1) * 8;
#if KSMM_BSL
			/* [k][n] in shared memory: lane gives row k + l8 of an 8 x 8
			 * block, .trans hands out its transpose. */
			const smem_t *p = bs + B_AT(k + l8, n);
			asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
				     "{%0,%1,%2,%3}, [%4];"
				     : "=r"(bf[ni][0]), "=r"(bf[ni][1]), "=r"(bf[ni + 1][0]),
				       "=r"(bf[ni + 1][1])
				     : "r"(smem_addr(p)));
#else
			const smem_t *p = bs + B_AT(k, n + l8);
			asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
				     : "=r"(bf[ni][0]), "=r"(bf[ni][1]), "=r"(bf[ni + 1][0]),
				       "=r"(bf[ni + 1][1])
				     : "r"(smem_addr(p)));
#endif
		}
#pragma unroll
		for (int mi = 0; mi < MI; mi++)
#pragma unroll
			for (int ni = 0; ni < NI; ni++) {
				mma_16(acc->v[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
			}
	}
#endif
}

/* Y_g[r][n], Y_g[r][n + 1] = v0, v1. For bsl they are neighbours in memory:
 * one store of both when the batch is even (the pair then starts at an even
 * element), halving the epilogue's store instructions. */
__device__ __forceinline__ void store_pair(elem_t *__restrict__ yg, const struct ksmm_args &p,
					   int r, int n, float v0, float v1)
{
#if KSMM_BSL
	if (r < p.b && n + 1 < p.batch && !(p.batch & 1)) {
		elem_t *q = yg + (size_t)r * p.d * p.batch + n;
#if KSMM_DTYPE == KSMM_F32
		*(float2 *)q = make_float2(v0, v1);
#else
		*(unsigned *)q = (unsigned)float_to_elem(v0) | (unsigned)float_to_elem(v1) << 16;
#endif
		return;
	}
#endif
	store_out(yg, p, r, n, v0);
	store_out(yg, p, r, n + 1, v1);
}

__device__ __forceinline__ void store_frag(elem_t *__restrict__ yg, const struct ksmm_args &p,
					   int r, int n, const struct acc_t *acc, int mi, int ni,
					   int e)
{
	store_pair(yg, p, r, n, acc->v[mi][ni][e], acc->v[mi][ni][e + 1]);
}
#endif /* KSMM_DTM */

/* The warp's tile: c0, c1 at (row g, n 2t, 2t+1), c2, c3 at row g + 8. */
__device__ __forceinline__ void store_acc(const struct acc_t *acc, elem_t *yg,
					  const struct ksmm_args &p, int r0, int n0)
{
	const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
	for (int mi = 0; mi < MI; mi++)
#pragma unroll
		for (int ni = 0; ni < NI; ni++)
#pragma unroll
			for (int h = 0; h < 2; h++)
				store_frag(yg, p, r0 + mi * 16 + g + h * 8, n0 + ni * 8 + 2 * t,
					   acc, mi, ni, 2 * h);
}
#else
struct acc_t {
	float v[KSMM_WR][KSMM_WB];
};

/* A thread's WR x WB outputs: WR contiguous rows by WB columns taken in
 * chunks of BCH (4 where WB allows, else all WB), the threads' chunks side
 * by side and a thread's own NSTEP columns apart, so that a warp's 16-byte
 * reads of a k-row of X are consecutive: no bank conflict. Contiguous
 * 8-wide thread tiles put neighbouring threads 32 bytes apart, a 2-way
 * conflict on every read of X. Measured on an H100 (2026-11-27, fp32 bsl,
 * batch 25,088, the 51 patterns of configs/ksmm/patterns_speed.in, seven
 * points each, tuned): 128 x 8 x 128 blocks of 8 x 8 went from 100.1 to
 * 85.0 ms on 1,1024,1024,64 and 8 x 8 points became the best on 43 of 51
 * patterns (5 before); the kernel's time over the set, median 2.8% less
 * (28 faster by over 2%, 9 slower). Chunking the rows the same way as
 * well was 1.2 points worse at the median. */
#define KSMM_BCH (KSMM_WB % 4 == 0 ? 4 : KSMM_WB)
#define KSMM_NSTEP (KSMM_TB / KSMM_WB * KSMM_BCH)
#define THREAD_COL(j) ((j) / KSMM_BCH * KSMM_NSTEP + (j) % KSMM_BCH)

/* A thread's rows: WR contiguous ones; with W as [r][k] (KSMM_SIMT_ASYNC)
 * one row of every TR / WR instead, so that the threads of a warp read
 * neighbouring rows (A_LD floats apart, distinct banks) rather than rows
 * WR * A_LD floats apart, which puts several of them in one bank (a
 * multiple of 32 floats at WR 8). */
#if KSMM_SIMT_ASYNC
#define THREAD_ROW(i) ((i) * (KSMM_TR / KSMM_WR))
#define KSMM_ROW0 1
#else
#define THREAD_ROW(i) (i)
#define KSMM_ROW0 KSMM_WR
#endif

/* One step of TK: this thread's WR x WB outer products; tr0, tn0: its
 * first row and its first chunk's column in the tile. */
__device__ __forceinline__ void compute_step(const smem_t *as, const smem_t *bs, int tr0,
						    int tn0, struct acc_t *acc)
{
#if KSMM_SIMT_ASYNC
	/* W as [r][k]: 4 k of each row in one 16-byte read, then 4 k-rows of
	 * X. */
#pragma unroll
	for (int k4 = 0; k4 < KSMM_TK; k4 += 4) {
		float a4[KSMM_WR][4];
#pragma unroll
		for (int i = 0; i < KSMM_WR; i++)
			*(float4 *)a4[i] = *(const float4 *)(as + A_AT(tr0 + THREAD_ROW(i), k4));
#pragma unroll
		for (int kk = 0; kk < 4; kk++) {
			float bv[KSMM_WB];
#pragma unroll
			for (int j = 0; j < KSMM_WB; j++)
				bv[j] = bs[B_AT(k4 + kk, tn0 + THREAD_COL(j))];
#pragma unroll
			for (int i = 0; i < KSMM_WR; i++)
#pragma unroll
				for (int j = 0; j < KSMM_WB; j++)
					acc->v[i][j] = fmaf(a4[i][kk], bv[j], acc->v[i][j]);
		}
	}
#else
#pragma unroll
	for (int k = 0; k < KSMM_TK; k++) {
		float av[KSMM_WR], bv[KSMM_WB];
#pragma unroll
		for (int i = 0; i < KSMM_WR; i++)
			av[i] = as[A_AT(tr0 + THREAD_ROW(i), k)];
#pragma unroll
		for (int j = 0; j < KSMM_WB; j++)
			bv[j] = bs[B_AT(k, tn0 + THREAD_COL(j))];
#pragma unroll
		for (int i = 0; i < KSMM_WR; i++)
#pragma unroll
			for (int j = 0; j < KSMM_WB; j++)
				acc->v[i][j] = fmaf(av[i], bv[j], acc->v[i][j]);
	}
#endif
}

/* Element by element: a vector store of each bsl chunk (4 contiguous n)
 * took 21 more registers on the 64 x 128, 8 x 4 point (149, one block an
 * SM instead of two; ptxas of CUDA 13.0), and in the fast path below,
 * with no more registers on the 16 x 8 points, it left the tuned fp32 bsl
 * times 0.8% slower at the median (H200, 51 speed patterns). */
__device__ __forceinline__ void store_acc(const struct acc_t *acc, elem_t *yg,
						 const struct ksmm_args &p, int r0, int n0)
{
#if !KSMM_DTS
	/* All of this thread's outputs inside (every tile but those at the
	 * edges of b and the batch): no check an element, and one address a
	 * row (bsl; for bsf the address of the row's first batch column), the
	 * rest constant offsets from it. On the 64 x 8 x 128 point of 16 x 8
	 * the stores take 178 instructions (128 of them STG) where checking
	 * and addressing each output took 535; before, a block's stores held
	 * 12% of the warps' stall samples and its start 15% on pattern
	 * 2,512,128,16 (c = 128; ncu, H200), 2% each at c = 1,024. */
	if (r0 + THREAD_ROW(KSMM_WR - 1) < p.b && n0 + THREAD_COL(KSMM_WB - 1) < p.batch) {
#pragma unroll
		for (int i = 0; i < KSMM_WR; i++) {
#if KSMM_BSL
			elem_t *row = yg + (size_t)(r0 + THREAD_ROW(i)) * p.d * p.batch + n0;
#pragma unroll
			for (int j = 0; j < KSMM_WB; j++)
				row[THREAD_COL(j)] = float_to_elem(acc->v[i][j]);
#else
			elem_t *row = yg + (size_t)n0 * p.a * p.b * p.d +
				      (size_t)(r0 + THREAD_ROW(i)) * p.d;
#pragma unroll
			for (int j = 0; j < KSMM_WB; j++)
				row[(size_t)THREAD_COL(j) * p.a * p.b * p.d] = float_to_elem(acc->v[i][j]);
#endif
		}
		return;
	}
#endif
#pragma unroll
	for (int i = 0; i < KSMM_WR; i++)
#pragma unroll
		for (int j = 0; j < KSMM_WB; j++)
			store_out(yg, p, r0 + THREAD_ROW(i), n0 + THREAD_COL(j), acc->v[i][j]);
}
#endif

#if KSMM_DTS
/* The output tile, [n][r][de] in shared memory, to y: TD contiguous
 * elements for each (n, r) (all of them one run when TD = d), written
 * KSMM_OVEC at a time. */
#define KSMM_OVEC (KSMM_TD * (int)sizeof(elem_t) < 16 ? KSMM_TD : 16 / (int)sizeof(elem_t))
__device__ __forceinline__ void write_tile(const elem_t *ot, elem_t *__restrict__ yb,
					   const struct ksmm_args &p, int r0, int n0)
{
	for (int i = threadIdx.x; i < KSMM_TB * KSMM_TR * KSMM_TD / KSMM_OVEC; i += KSMM_THREADS) {
		const int dd = i % (KSMM_TD / KSMM_OVEC) * KSMM_OVEC, j = i / (KSMM_TD / KSMM_OVEC);
		const int r = j % KSMM_TR, n = j / KSMM_TR;
		if (r0 + r < p.b && n0 + n < p.batch)
			*(vec_t<KSMM_OVEC> *)(yb + (size_t)(n0 + n) * p.a * p.b * p.d +
					      (size_t)(r0 + r) * p.d + dd) =
				*(const vec_t<KSMM_OVEC> *)(ot + (n * KSMM_TR + r) * KSMM_TD + dd);
	}
}
#endif

#if KSMM_TMA
/* A CUtensorMap as the host encodes it (cuTensorMapEncodeTiled): W as
 * (c, b, a*d), boxes TK x TR x 1; X as (B, d, c, a), boxes TB x 1 x TK x 1;
 * boxes past an edge read zeros. */
struct __align__(64) tensor_map {
	unsigned long long opaque[16];
};

/* One mbarrier a buffer: the thread that starts a step's copies arrives
 * once and announces the bytes; the copies complete the phase. */
__device__ __forceinline__ void barrier_init(unsigned bar)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
}

/* Until the buffer's phase `parity` completes. One line of PTX: each
 * statement ends at its ';', so the string needs no "\n". */
__device__ __forceinline__ void barrier_wait(unsigned bar, unsigned parity)
{
	asm volatile("{ .reg .pred done; WAIT: "
		     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1; "
		     "@!done bra.uni WAIT; }" ::"r"(bar),
		     "r"(parity)
		     : "memory");
}

/* Step k0's W and X tiles into the buffer at `dst`, issued by one thread:
 * two instructions a step where cp.async took six 16-byte copies a thread
 * on 64 x 8 x 128 of 16 x 8, with their addresses, predicates and the
 * registers holding them. Measured on an H200 (2026-11-29, fp32 bsl, batch
 * 25,088, the 51 speed patterns, 11 points of 16 x 8 and 8 x 8 tuned
 * beside the cp.async build in one call): each pattern's best 9% faster
 * at the median, each point 2 to 18% faster at its median. */
__device__ __forceinline__ void tma_step(const struct tensor_map *tw, const struct tensor_map *tx,
					 unsigned dst, unsigned bar, int k0, int r0, int de, int al,
					 int n0, int d)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
		     "n"((unsigned)(STAGE_SIZE * sizeof(smem_t)))
		     : "memory");
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
		     "l"(tw), "r"(k0), "r"(r0), "r"(al * d + de), "r"(bar)
		     : "memory");
	asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst + (unsigned)(A_SIZE * sizeof(smem_t))),
		     "l"(tx), "r"(n0), "r"(de), "r"(k0), "r"(al), "r"(bar)
		     : "memory");
}
#endif

extern "C" __global__ void __launch_bounds__(KSMM_THREADS)
	ksmm_kernel(const elem_t *__restrict__ w, const elem_t *__restrict__ x,
		    elem_t *__restrict__ y, struct ksmm_args p
#if KSMM_TMA
		    ,
		    const __grid_constant__ struct tensor_map tw,
		    const __grid_constant__ struct tensor_map tx
#endif
	)
{
	extern __shared__ __align__(16) unsigned char smem_raw[];
	smem_t *smem = (smem_t *)smem_raw;

	/* Block -> (row tile, de tile, batch tile, al), row tile fastest. */
	const unsigned row_tiles = (p.b + KSMM_TR - 1) / KSMM_TR;
	const unsigned batch_tiles = (p.batch + KSMM_TB - 1) / KSMM_TB;
	unsigned id = blockIdx.x;
	const int r0 = id % row_tiles * KSMM_TR;
	id /= row_tiles;
	const int de = id % (unsigned)(p.d / KSMM_TD) * KSMM_TD;
	id /= (unsigned)(p.d / KSMM_TD);
	const int n0 = id % batch_tiles * KSMM_TB;
	const int al = id / batch_tiles;

#if KSMM_TMA /* the tensor maps address w and x */
	elem_t *yg = y + ((size_t)al * p.b * p.d + de) * p.batch;
#elif KSMM_BSL
	const elem_t *wg = w + (size_t)(al * p.d + de) * p.b * p.c;
	const elem_t *xg = x + ((size_t)al * p.c * p.d + de) * p.batch;
	elem_t *yg = y + ((size_t)al * p.b * p.d + de) * p.batch;
#else
	const elem_t *wg = w + (size_t)(al * p.d + de) * p.b * p.c;
	const elem_t *xg = x + (size_t)al * p.c * p.d + de;
	elem_t *yg = y + (size_t)al * p.b * p.d + de;
#endif

	/* This thread's group (its de among the TD) and place in it. */
	const unsigned grp = threadIdx.x / KSMM_GROUP, gt = threadIdx.x % KSMM_GROUP;
#if KSMM_MMA
	const int warp = gt >> 5;
	const int wr0 = warp / (KSMM_TB / KSMM_WB) * KSMM_WR;
	const int wn0 = warp % (KSMM_TB / KSMM_WB) * KSMM_WB;
#else
	const int wr0 = gt / (KSMM_TB / KSMM_WB) * KSMM_ROW0;
	const int wn0 = gt % (KSMM_TB / KSMM_WB) * KSMM_BCH;
#endif
	struct acc_t acc;
#pragma unroll
	for (int i = 0; i < (int)(sizeof acc.v / sizeof(float)); i++)
		((float *)acc.v)[i] = 0.f;
	/* The group's tiles within a buffer. */
	const int a_off = grp * A_SIZE, b_off = KSMM_TD * A_SIZE + grp * B_SIZE;

	const int steps = (p.c + KSMM_TK - 1) / KSMM_TK;
#if KSMM_TMA
	/* As cp.async below, STAGES - 1 steps in flight; a buffer's barrier
	 * says its step has landed, the block's barrier after it that the
	 * buffer step s - 1 read is free. */
	const unsigned stage_bytes = STAGE_SIZE * sizeof(smem_t);
	const unsigned buf0 = smem_addr(smem), bar0 = buf0 + KSMM_STAGES * stage_bytes;
	if (threadIdx.x == 0) {
		for (int s = 0; s < KSMM_STAGES; s++)
			barrier_init(bar0 + 8 * s);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		for (int s = 0; s < KSMM_STAGES - 1 && s < steps; s++)
			tma_step(&tw, &tx, buf0 + s * stage_bytes, bar0 + 8 * s, s * KSMM_TK, r0, de,
				 al, n0, p.d);
	}
	__syncthreads();
	/* This thread's first reads in a buffer. */
	const unsigned a_rd = (a_off + A_AT(wr0, 0)) * sizeof(smem_t),
		       b_rd = (b_off + B_AT(0, wn0)) * sizeof(smem_t);
	int cur = 0, fill = KSMM_STAGES - 1;
	unsigned parity = 0;
	for (int s = 0; s < steps; s++) {
		barrier_wait(bar0 + 8 * cur, parity);
		__syncthreads();
		if (threadIdx.x == 0 && s + KSMM_STAGES - 1 < steps)
			tma_step(&tw, &tx, buf0 + fill * stage_bytes, bar0 + 8 * fill,
				 (s + KSMM_STAGES - 1) * KSMM_TK, r0, de, al, n0, p.d);
		const unsigned char *buf = smem_raw + cur * stage_bytes;
		compute_step((const smem_t *)(buf + a_rd), (const smem_t *)(buf + b_rd), 0, 0, &acc);
		fill = cur;
		if (++cur == KSMM_STAGES) {
			cur = 0;
			parity ^= 1;
		}
	}
#elif KSMM_ASYNC
	/* KSMM_STAGES - 1 steps in flight while one is multiplied: the
	 * barrier at the top of step s also tells every thread that the buffer
	 * step s - 1 read is free for step s + STAGES - 1. */
	struct async_plan plan;
	plan_async(wg, xg, p, r0, n0, smem, &plan);
#if KSMM_BSL
	const unsigned x_step = KSMM_TK * p.d * p.batch;
#else
	const unsigned x_step = KSMM_TK * p.d;
#endif
	const int full_steps = p.c / KSMM_TK;
	const unsigned stage_bytes = STAGE_SIZE * sizeof(smem_t);
#pragma unroll
	for (int s = 0; s < KSMM_STAGES - 1; s++) {
		load_async_step(&plan, wg, xg, p, s, full_steps, steps, x_step, s * stage_bytes);
		cp_async_commit();
	}
	/* Byte offsets of the buffers step s reads and step s + STAGES - 1
	 * fills, turned round rather than taken modulo STAGES. */
	const unsigned last_stage = (KSMM_STAGES - 1) * stage_bytes;
	unsigned cur_stage = 0, fill_stage = last_stage;
	for (int s = 0; s < steps; s++) {
		cp_async_wait();
		__syncthreads();
		load_async_step(&plan, wg, xg, p, s + KSMM_STAGES - 1, full_steps, steps, x_step,
				fill_stage);
		cp_async_commit();
		const smem_t *cur = (const smem_t *)(smem_raw + cur_stage);
		compute_step(cur + a_off, cur + b_off, wr0, wn0, &acc);
		cur_stage = cur_stage == last_stage ? 0 : cur_stage + stage_bytes;
		fill_stage = fill_stage == last_stage ? 0 : fill_stage + stage_bytes;
	}
#else
	struct step_regs regs;
	load_step(wg, xg, p, r0, 0, n0, &regs);
	store_step(&regs, smem, smem + KSMM_TD * A_SIZE);
	__syncthreads();
	for (int s = 0; s < steps; s++) {
		const int buf = KSMM_STAGES == 1 ? 0 : s & 1;
		const int more = s + 1 < steps;
		if (more)
			load_step(wg, xg, p, r0, (s + 1) * KSMM_TK, n0, &regs);
		smem_t *cur = smem + buf * STAGE_SIZE;
		compute_step(cur + a_off, cur + b_off, wr0, wn0, &acc);
		if (more) {
			/* One buffer: everyone must be done reading it first. Two:
			 * the other buffer was last read before the previous
			 * barrier. */
			if (KSMM_STAGES == 1)
				__syncthreads();
			smem_t *nxt = smem + (KSMM_STAGES == 1 ? 0 : (buf ^ 1)) * STAGE_SIZE;
			store_step(&regs, nxt, nxt + KSMM_TD * A_SIZE);
		}
		__syncthreads();
	}
#endif
#if KSMM_DTS
	/* The loop's last barrier freed the buffers: the output tile goes
	 * there, then out. */
	elem_t *ot = (elem_t *)smem_raw;
	store_acc(&acc, ot + grp, p, wr0, wn0);
	__syncthreads();
	write_tile(ot, yg, p, r0, n0);
#else
	store_acc(&acc, yg, p, r0 + wr0, n0 + wn0);
#endif
}
