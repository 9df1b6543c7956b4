/* The MACKO sparse format of MACKO-SpMV (Mutually Aligned Compressed
 * coordinates Kernel Optimised SpMV, Vladimir Macko and Vladimir Boza), for
 * 20-90% sparse fp16 matrices.
 *
 * Row-major. Walking a row's columns with a count of skipped zeros, a
 * nonzero, or the 16th zero of a run of zeros, is stored: its value goes to
 * `values` (fp16) and the number of zeros skipped just before it (0..15) to
 * the next 4-bit nibble of `deltas` (element i in byte i/2, the low nibble
 * for even i). Stored zeros at the end of a row are trimmed. Rows are packed
 * back to back; row_indices[r] is the index of row r's first element
 * (row_indices[rows] = elements stored). values and deltas are padded with
 * zeros to a multiple of 8 elements. The column of element j of a row is
 * j + (delta_0 + ... + delta_j).
 *
 * Bytes per stored element: 2 (value) + 0.5 (delta). At density d with few
 * runs over 15 zeros that is 2.5 d bytes per matrix entry against 2 for
 * dense fp16: 0.625 of the dense bytes at d = 0.5, 0.125 at d = 0.1. */
#ifndef SPKIT_MACKO_H
#define SPKIT_MACKO_H

#include <stddef.h>
#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

#define MACKO_MAX_DELTA 15
#define MACKO_PAD 8
/* The most vectors one product takes (an x of N x cols, N <= this); more
 * run as several products (macko_multiply). */
#define MACKO_MAX_VECTORS 16

struct macko {
	int64_t rows, cols;
	int64_t elements;     /* stored, explicit zeros included: row_indices[rows] */
	int64_t padded;       /* length of values: elements rounded up to MACKO_PAD */
	uint16_t *values;     /* fp16 bits, padded */
	uint8_t *deltas;      /* padded / 2 bytes */
	int32_t *row_indices; /* rows + 1 */
};

/* Element k's delta (k the global element index): nibble k of deltas. */
static inline unsigned macko_delta(const uint8_t *deltas, int64_t k)
{
	return (deltas[k >> 1] >> ((k & 1) << 2)) & 0xfu;
}

struct macko_stats {
	int64_t rows, cols, nonzeros, stored, padding_zeros;
	double density;           /* nonzeros / (rows * cols) */
	double effective_density; /* stored / (rows * cols) */
	int64_t bytes_macko, bytes_dense_fp16, bytes_csr32, bytes_csr16;
};

/* The most bytes compressing a rows x cols matrix allocates: its arrays
 * with every entry stored (2.5 bytes an element, which passes dense fp16's
 * 2 above density 0.8) and 8 bytes a row (row_indices, and the counts of
 * the first pass). */
uint64_t macko_compress_bytes(int64_t rows, int64_t cols);
/* Compress a dense row-major fp16 matrix (bits). Multithreaded. */
int macko_compress_dense(const uint16_t *dense, int64_t rows, int64_t cols, struct macko *m,
			 const char *name, struct sp_err *err);
/* Compress a CSR matrix (columns sorted within rows; values rounded to fp16;
 * an entry that rounds to zero is dropped). */
int macko_compress_csr(const struct csr *a, struct macko *m, const char *name, struct sp_err *err);
/* Back to dense fp16 bits, rows x cols. Exact for fp16 input, except that
 * -0 comes back as +0: compression treats +0 and -0 alike as zero (NaN and
 * inf are nonzeros, stored as they are). */
void macko_decompress(const struct macko *m, uint16_t *dense);

/* Everything a kernel relies on: row_indices from 0, monotone, within the
 * arrays; padded a multiple of 8 and >= elements; no element past the last
 * column. */
int macko_validate(const struct macko *m, const char *name, struct sp_err *err);

void macko_stats(const struct macko *m, struct macko_stats *s);

/* The CPU reference: y[v] = alpha * A x[v] + beta * y_in[v] for nvec vectors,
 * accumulated in double. x is nvec x cols, y_in and y are nvec x rows
 * (y_in may be NULL when beta is 0). */
void macko_spmv_ref(const struct macko *m, const float *x, int nvec, double alpha, double beta,
		    const float *y_in, double *y);

int macko_alloc(struct macko *m, int64_t rows, int64_t cols, int64_t elements, const char *name,
		struct sp_err *err);
void macko_free(struct macko *m);
/* calloc for a matrix's big arrays: asks for transparent huge pages. */
void *macko_calloc(size_t n, size_t size);

/* Magnitude pruning of a dense fp16 matrix before compression: keep the
 * round(density * n) entries of largest magnitude (ties broken by position),
 * or zero every entry with |value| < threshold. Magnitudes order as their
 * bits do, so NaNs rank above inf; pruned entries become +0. */
int prune_to_density(uint16_t *dense, int64_t n, double density, struct sp_err *err);
void prune_below(uint16_t *dense, int64_t n, double threshold);

#endif
