/* Status checks for the C-callable launchers in kernels/ (.cu files): every CUDA,
 * cuBLAS and cuSPARSE status becomes an error value,
 *   "kernels/spmm.cu:42: cusparseSpMM(...): CUSPARSE_STATUS_INSUFFICIENT_RESOURCES"
 * and a return of -1 from the enclosing function, which must return int and
 * have a struct sp_err * to fill:
 *
 *   extern "C" int scale_launch(float *x, int n, float a, struct sp_err *err)
 *   {
 *           scale<<<(n + 255) / 256, 256>>>(x, n, a);
 *           GPU_CHECK_LAUNCH(err, "scale");
 *           return 0;
 *   }
 *
 * GPU_FAILED is the test without the return, for paths that free first:
 *   if (GPU_FAILED(err, cudaMemset(p, 0, n))) { gpu_free(p); return -1; }
 *
 * lib/ headers are C: include them inside extern "C" { } (gpu.h does so
 * for err.h). */
#ifndef SPKIT_GPU_CHECK_CUH
#define SPKIT_GPU_CHECK_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/gpu.h"

/* The message of a failed status, NULL on success; one overload per library
 * so that one macro checks them all. */
static inline const char *gpu_status_message(cudaError_t rc)
{
	if (rc == cudaSuccess)
		return NULL;
	/* Reported here, so clear the runtime's last-error slot: otherwise this
	 * (non-sticky) error would surface again at the next launch check. */
	cudaGetLastError();
	return cudaGetErrorString(rc);
}

static inline const char *gpu_status_message(cublasStatus_t rc)
{
	return rc == CUBLAS_STATUS_SUCCESS ? NULL : cublasGetStatusString(rc);
}

static inline const char *gpu_status_message(cusparseStatus_t rc)
{
	return rc == CUSPARSE_STATUS_SUCCESS ? NULL : cusparseGetErrorString(rc);
}

template <typename Status>
static inline int gpu_check_status(Status rc, const char *expr, const char *file, int line,
				   struct sp_err *err)
{
	const char *msg = gpu_status_message(rc);
	if (!msg)
		return 0;
	sp_fail(err, "%s:%d: %s: %s", file, line, expr, msg);
	return 1;
}

/* Nonzero (err filled) when `call` returned a failure status. */
#define GPU_FAILED(err, call) gpu_check_status((call), #call, __FILE__, __LINE__, (err))

/* Stringizes `call` itself: through GPU_FAILED it would be macro-expanded
 * first (cublasCreate would read cublasCreate_v2). */
#define GPU_CHECK(err, call)                                                          \
	do {                                                                          \
		if (gpu_check_status((call), #call, __FILE__, __LINE__, (err)))       \
			return -1;                                                    \
	} while (0)

/* After a <<<>>> launch: a bad configuration (too many threads, too much
 * shared memory, no code for this device) shows here; a fault inside the
 * kernel shows at the next synchronizing call (gpu_sync, gpu_download). */
#define GPU_CHECK_LAUNCH(err, kernel_name)                                                   \
	do {                                                                                 \
		if (gpu_check_status(cudaGetLastError(), "launch of " kernel_name, __FILE__, \
				     __LINE__, (err)))                                       \
			return -1;                                                           \
	} while (0)

#endif
