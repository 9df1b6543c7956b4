/* Dense matrix products for the backend (gnn_backend.h: gemm) on cuBLAS,
 * in fp32 or, with the backend's tf32 flag, on TF32 tensor cores. */
#include <limits.h>

#include "gnn/gnn_gpu.cuh"

/* Row-major C (m x n) = alpha op(A) op(B) + beta C on column-major cuBLAS.
 * A row-major r x s matrix with rows of s floats is, read column-major,
 * its transpose (s x r, leading dimension s). So C's storage is C^T and
 * the call computes C^T = alpha op(B)^T op(A)^T + beta C^T: B first, with
 * cuBLAS's (m, n) being our (n, m), ldc = n.
 *   B is stored k x n (tb = 0) or n x k (tb = 1): read column-major it is
 *   B^T or B, and op(B)^T is wanted, so OP_N (ldb = n) or OP_T (ldb = k).
 *   A is stored m x k (ta = 0) or k x m (ta = 1): likewise OP_N with
 *   lda = k, or OP_T with lda = m.
 * The leading dimension is always the stored row length.
 * Example, a weight gradient dW (f x h) = X^T dY, X m0 x f, dY m0 x h:
 *   gemm(ta = 1, tb = 0, m = f, n = h, k = m0): cublasGemmEx(OP_N, OP_T,
 *   h, f, m0, dY, ldb = h, X, lda = f, dW, ldc = h), that is dW^T (h x f) =
 *   dY^T X (h x m0 times m0 x f). */
int gnn_gpu_gemm(struct gnn_backend *b, int ta, int tb, int64_t m, int64_t n, int64_t k,
		 float alpha, const float *A, const float *B, float beta, float *C,
		 struct sp_err *err)
{
	struct cuda_backend *c = impl(b);
	if (m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
		return sp_fail(err, "gemm: %lld x %lld x %lld is outside cuBLAS's 32-bit sizes",
			       (long long)m, (long long)n, (long long)k);
	if (m == 0 || n == 0)
		return 0;
	const int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
	/* cuBLAS wants leading dimensions of at least 1 even when k = 0. */
	GPU_CHECK(err, cublasGemmEx(c->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
				    ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha,
				    B, CUDA_R_32F, ldb > 1 ? ldb : 1, A, CUDA_R_32F,
				    lda > 1 ? lda : 1, &beta, C, CUDA_R_32F, (int)n,
				    b->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
				    CUBLAS_GEMM_DEFAULT));
	return 0;
}

