// The per-warp timeline hooks of kernels/macko/macko_spmv.cu and of the read
// kernels in this folder, switched on by MACKO_TRACE (defined here, and
// included only by the probes; in the library the kernel defines them
// empty). Lane 0
// of each warp writes %globaltimer (ns) into the warp's row of TRACE_SLOTS
// words in g_macko_trace: at entry, once its first row's ends are loaded,
// once its own loads of x are in (TRACE_X_ARRIVED, before the block waits for
// its other warps), once x is staged, after every decoded step, and at exit;
// and the SM it ran on and its number of steps. Warps are numbered block by
// block.
// The stamps cost time, and not the same for every kernel: on an H100 the
// traced kernel (.cg loads) ran 7% slower than the library's at d = 0.5 and
// 14% at d = 0.1, where with .cs loads it was within 1% (streaming stores
// for the stamps changed nothing; not explained). Its start (row ends and x
// staged at the same times either way) is trustworthy; read the steady rate
// beside the untraced kernel's time (bench/RESULTS.md, macko-spmv,
// "Timelines").
#ifndef SPKIT_MACKO_TRACE_CUH
#define SPKIT_MACKO_TRACE_CUH

#define MACKO_TRACE 1

enum {
	TRACE_ENTRY,
	TRACE_ENDS,
	TRACE_STAGED,
	TRACE_EXIT_AT,
	TRACE_SM,
	TRACE_STEPS,
	TRACE_X_IN,
	TRACE_STEP0 = 8, // the first step's stamp; steps past TRACE_SLOTS are counted, not stamped
	TRACE_SLOTS = 96
};

__device__ unsigned long long *g_macko_trace;

__device__ __forceinline__ unsigned long long trace_now()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ unsigned long long *trace_warp_row()
{
	const size_t warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
	return g_macko_trace + warp * TRACE_SLOTS;
}

__device__ __forceinline__ unsigned long long *trace_row(int lane)
{
	unsigned smid;
	asm("mov.u32 %0, %%smid;" : "=r"(smid));
	unsigned long long *row = trace_warp_row();
	if (lane == 0) {
		row[TRACE_ENTRY] = trace_now();
		row[TRACE_SM] = smid;
	}
	return row;
}

#define TRACE_ENTER(lane)                                        \
	unsigned long long *const trace_row_ = trace_row(lane); \
	int trace_steps_ = 0
#define TRACE_AT(lane, slot)                           \
	do {                                           \
		if ((lane) == 0)                       \
			trace_row_[slot] = trace_now(); \
	} while (0)
#define TRACE_STEP(lane)                                                                      \
	do {                                                                                  \
		if ((lane) == 0 && trace_steps_ < TRACE_SLOTS - TRACE_STEP0)                   \
			trace_row_[TRACE_STEP0 + trace_steps_] = trace_now();         \
		trace_steps_++;                                                               \
	} while (0)
/* In a function the kernel calls (stage_x), where trace_row_ is not seen. */
#define TRACE_X_ARRIVED()                                              \
	do {                                                           \
		if ((threadIdx.x & 31) == 0)                           \
			trace_warp_row()[TRACE_X_IN] = trace_now();    \
	} while (0)
#define TRACE_EXIT(lane)                                   \
	do {                                               \
		TRACE_AT(lane, TRACE_EXIT_AT);             \
		if ((lane) == 0)                           \
			trace_row_[TRACE_STEPS] = trace_steps_; \
	} while (0)


#endif
