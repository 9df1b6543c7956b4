/* The GPU API (kernels/gpu.h) for builds without nvcc: there is no device,
 * NVTX ranges are no-ops, and everything that would touch a device fails
 * with "built without CUDA", so a program's CPU path links and runs. */
#ifndef SPKIT_CUDA
#include <string.h>

#include "gnn/gnn_backend.h"
#include "core/gpu.h"

static int no_cuda(struct sp_err *err, const char *what)
{
	return sp_fail(err, "%s: spkit was built without CUDA", what);
}

int gpu_probe(struct sp_err *why)
{
	sp_fail(why, "spkit was built without CUDA");
	return 0;
}

int gpu_query(int device, struct gpu_info *info, struct sp_err *err)
{
	memset(info, 0, sizeof *info);
	return no_cuda(err, "gpu_query");
}

int gpu_select(int device, struct sp_err *err)
{
	return no_cuda(err, "gpu_select");
}

int gpu_malloc(void **p, size_t n, const char *what, struct sp_err *err)
{
	*p = NULL;
	return sp_fail(err, "device memory for '%s' (%zu bytes): spkit was built without CUDA",
		       what, n);
}

void gpu_free(void *p)
{
}

int gpu_upload(void *dst, const void *src, size_t n, struct sp_err *err)
{
	return no_cuda(err, "gpu_upload");
}

int gpu_download(void *dst, const void *src, size_t n, struct sp_err *err)
{
	return no_cuda(err, "gpu_download");
}

int gpu_context_usable(void)
{
	return 0;
}

int gpu_sync(struct sp_err *err)
{
	return no_cuda(err, "gpu_sync");
}

int gpu_copy_enqueue(void *job, struct sp_err *err)
{
	return no_cuda(err, "gpu_copy_enqueue");
}

int gpu_l2_flusher_init(struct gpu_l2_flusher *f, struct sp_err *err)
{
	memset(f, 0, sizeof *f);
	return no_cuda(err, "gpu_l2_flusher_init");
}

int gpu_l2_flusher_run(void *flusher, struct sp_err *err)
{
	return no_cuda(err, "gpu_l2_flusher_run");
}

void gpu_l2_flusher_free(struct gpu_l2_flusher *f)
{
}

int gpu_time(gpu_enqueue_fn enqueue, void *ctx, int warmup, int reps, int flush_l2,
	     struct gpu_timing *out, struct sp_err *err)
{
	memset(out, 0, sizeof *out);
	return no_cuda(err, "gpu_time");
}

int gpu_time_after(gpu_enqueue_fn enqueue, void *ctx, int warmup, int reps, gpu_enqueue_fn before,
		   void *before_ctx, struct gpu_timing *out, struct sp_err *err)
{
	memset(out, 0, sizeof *out);
	return no_cuda(err, "gpu_time_after");
}

int gpu_spin(void *us, struct sp_err *err)
{
	return no_cuda(err, "gpu_spin");
}

int gpu_copy_bandwidth(size_t bytes, int reps, double *gbs, struct sp_err *err)
{
	*gbs = 0;
	return no_cuda(err, "gpu_copy_bandwidth");
}

void gpu_range_push(const char *name)
{
}

void gpu_range_pop(void)
{
}
int gnn_cuda_backend(struct gnn_backend **out, struct sp_err *err)
{
	*out = NULL;
	return no_cuda(err, "--kernel-mode");
}
#endif
