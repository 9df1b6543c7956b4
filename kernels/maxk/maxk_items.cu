/* The host side of the work items (maxk_items.cuh): a layout of lanes for
 * k and h, the grid of resident blocks for a kernel, and the size checks
 * the kernels' 32-bit offsets need. */
#include <mutex>

#include "maxk/maxk_items.cuh"

layout maxk_items_layout(int k, int h, int max_floats, int max_groups)
{
	int V = k % 4 == 0 ? 4 : k % 2 == 0 ? 2 : 1, KP, G;
	for (;;) {
		const int lanes = (k + V - 1) / V;
		KP = 1;
		while (KP < lanes && KP < 32)
			KP *= 2;
		G = 32 / KP;
		if ((G * pow2_at_least(h) <= max_floats && G <= max_groups) || V == 1)
			break;
		V /= 2;
	}
	while (G > 8 || G > max_groups || (G > 1 && G * pow2_at_least(h) > max_floats))
		G /= 2;
	KP = 32 / G;
	return layout{V, G, (k + KP * V - 1) / (KP * V)};
}

int maxk_items_grid(const void *kernel, size_t smem, int64_t nitems, unsigned *grid,
		    struct sp_err *err)
{
	static struct {
		const void *kernel;
		size_t smem;
		int device, resident;
	} seen[64];
	static int nseen;
	/* Ranks that are threads of one process (maxk-train --gpus N) share it. */
	static std::mutex lock;
	std::lock_guard<std::mutex> hold(lock);
	int device, i;
	GPU_CHECK(err, cudaGetDevice(&device));
	for (i = 0; i < nseen; i++)
		if (seen[i].kernel == kernel && seen[i].smem == smem && seen[i].device == device)
			break;
	if (i == nseen) {
		int sms, per_sm;
		GPU_CHECK(err, cudaFuncSetAttribute(kernel,
						    cudaFuncAttributePreferredSharedMemoryCarveout,
						    cudaSharedmemCarveoutMaxShared));
		if (smem > 48 * 1024)
			GPU_CHECK(err, cudaFuncSetAttribute(kernel,
							    cudaFuncAttributeMaxDynamicSharedMemorySize,
							    (int)smem));
		GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
		GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK,
									    smem));
		if (nseen == (int)(sizeof seen / sizeof *seen))
			nseen = 0; /* more shapes than ever seen together: start over */
		i = nseen++;
		seen[i].kernel = kernel;
		seen[i].smem = smem;
		seen[i].device = device;
		seen[i].resident = sms * (per_sm > 0 ? per_sm : 1);
	}
	*grid = grid_for(nitems, WARPS, seen[i].resident);
	return 0;
}

int maxk_items_check(const struct maxk_dev_graph *g, int h, int k, const char *what,
		     struct sp_err *err)
{
	if (k < 1 || k > h)
		return sp_fail(err, "%s: k = %d is outside 1..%d (the feature width)", what, k, h);
	const int64_t rows = g->n > g->ncols ? g->n : g->ncols;
	if ((uint64_t)rows * (uint64_t)k > UINT32_MAX)
		return sp_fail(err, "%s: %lld rows x k = %d kept values pass 2^32", what,
			       (long long)rows, k);
	return 0;
}
