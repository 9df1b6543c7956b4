/* MaxK-GNN warp work items. Every row of a CSR graph is cut into chunks of
 * at most warp_max_nz neighbours; each chunk is one record of four int32:
 * (row, offset into indices, length, 0). Empty rows have no record. This is
 * the layout of the original generate_meta.py (raw int32, no header), so
 * existing .warp4 files keep working. The MaxK kernels give one warp per
 * record, which bounds the work of every warp by warp_max_nz. */
#ifndef SPKIT_WARP4_H
#define SPKIT_WARP4_H

#include <stdint.h>

#include "core/outfile.h"
#include "core/err.h"

#define WARP4_MAX_NZ_LIMIT 65536
/* maxk-genmeta's default, and what a backend builds when given no records. */
#define WARP4_DEFAULT_MAX_NZ 64

struct warp4_stats {
	int64_t rows, edges, records, empty_rows, max_degree;
	double mean_degree;
	double records_per_row;   /* over all rows */
	double fill;              /* mean record length / warp_max_nz */
	double degree_imbalance;  /* max degree / mean degree: what one warp per row would suffer */
};

/* Records a graph needs. */
int64_t warp4_count(const int64_t *indptr, int64_t nrows, int warp_max_nz);

/* Fills records (4 * warp4_count int32). Fails when offsets do not fit int32,
 * the limit of the original format. */
int warp4_build(const int64_t *indptr, int64_t nrows, int warp_max_nz, int32_t *records,
		const char *name, struct sp_err *err);

void warp4_stats(const int64_t *indptr, int64_t nrows, int warp_max_nz, struct warp4_stats *s);

/* Writes the records to f (outfile_open'd), which the caller commits (or, on
 * failure, aborts): maxk-genmeta writes them before it saves a graph and
 * commits them after, so that no failure leaves one output without the other. */
int warp4_write(struct outfile *f, const int32_t *records, int64_t count, struct sp_err *err);
int warp4_read(const char *path, int32_t **records, int64_t *count, struct sp_err *err);

/* Checks that records cover every edge of every row exactly once, in order,
 * with lengths in 1..warp_max_nz and a fourth field of 0: what a kernel
 * relies on. */
int warp4_validate(const int32_t *records, int64_t count, const int64_t *indptr, int64_t nrows,
		   int warp_max_nz, const char *name, struct sp_err *err);

#endif
