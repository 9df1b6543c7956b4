/* Copies global -> shared memory by cp.async (sm_80 and later): issued
 * without a register to hold the data, awaited by groups. A copy whose
 * `valid` is false reads nothing and writes zeros. Used where a kernel
 * brings its next tile while it works on this one. */
#ifndef SPKIT_CP_ASYNC_CUH
#define SPKIT_CP_ASYNC_CUH

#include <stdint.h>

static __device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16 bytes, bypassing L1 (.cg). */
static __device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
		     "l"(src), "r"(valid ? 16 : 0));
}
/* 4 bytes, through L1 (.ca: the only way for copies under 16 bytes). */
static __device__ __forceinline__ void cp_async4(void *dst, const void *src, bool valid)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)),
		     "l"(src), "r"(valid ? 4 : 0));
}
/* Close the group of the copies issued since the last commit. */
static __device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}
/* Wait until at most N of this thread's groups are still in flight. */
template <int N> static __device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

#endif
