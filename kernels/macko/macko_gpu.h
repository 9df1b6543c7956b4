/* MACKO SpMV on the GPU, as plain C: upload a struct macko, then
 * y = alpha A x + beta y_in for 1..16 vectors (up to eight in one pass over
 * the matrix, more in two).
 * kernels/macko/macko_spmv.cu has the kernel and says how it works. */
#ifndef SPKIT_MACKO_GPU_H
#define SPKIT_MACKO_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/err.h"
#include "macko/macko.h"

/* A MACKO matrix in device memory, in the layout of lib/macko/macko_layout.h
 * (every row from a multiple of 8 elements). rows to padded are the
 * format's own figures, which the reported bytes count. */
struct macko_dev {
	int64_t rows, cols, elements, padded;
	void *values; /* fp16 */
	void *deltas;
	int32_t *ends; /* rows + 1: where each row's elements end */
	int max_vectors; /* the most vectors a product may take (macko_dev_upload) */
	void *xt;        /* scratch: x transposed to [col][vector]; NULL for one vector */
	void *order;     /* the eight-vector kernel's gather order (macko_order.h), or NULL */
};

enum macko_out { MACKO_OUT_F16, MACKO_OUT_F32 };

/* max_vectors (1..MACKO_MAX_VECTORS) is the most vectors a product of this
 * upload will take. The scratch for x transposed (more than one vector) and
 * the eight-vector kernel's gather order (five or more: 1.1 ms on the GPU
 * and a byte per 8 elements for 28672 x 8192 at d = 0.5) are made only
 * when a product can use them. */
int macko_dev_upload(const struct macko *m, int max_vectors, struct macko_dev *d,
		     struct sp_err *err);
void macko_dev_free(struct macko_dev *d);

/* Enqueues y = alpha A x + beta y_in on the default stream. x: device fp16,
 * nvec x cols, row-major, nvec at most the upload's max_vectors. y_in, y:
 * device, nvec x rows, of type `out`; y_in is not read when beta is 0 and
 * may be NULL then (or equal y). */
int macko_dev_spmv(const struct macko_dev *d, const void *x, int nvec, float alpha, float beta,
		   const void *y_in, void *y, enum macko_out out, struct sp_err *err);

/* Bytes the product must move at the least: the MACKO arrays, x, y (and
 * y_in when beta != 0). The denominator of the reported GB/s. */
double macko_dev_bytes(const struct macko_dev *d, int nvec, enum macko_out out, int reads_y);

#ifdef __cplusplus
}
#endif

#endif
