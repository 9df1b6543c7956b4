/* graph-partition's comparison of several models: one row per model of
 * model-level numbers (the graphs project's compare_models example), as
 * a table (a line per number, a column per model), CSV (a row per model)
 * or JSON (an array of objects, one per model). The same names and units
 * in all three:
 *
 *   ops, kernels, total_flops, matmul_flops, params   counts
 *   weight_mb, peak_activation_mb    10^6 bytes at --dtype (activation.h)
 *   intensity                        total FLOPs over memory traffic
 *   stages, max_parallel_ops, critical_path_ops      stages.h
 *   critical_path_time_us, roofline_time_us          roofline.h
 *   CLASS_share                      the fraction of kernels of each
 *                                    bottleneck class of the thresholds
 *   batch_to_saturate                saturate.h; none ("-" in the table,
 *                                    empty in CSV, null in JSON) when the
 *                                    model stays latency-bound
 */
#ifndef SPKIT_COMPARE_H
#define SPKIT_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "partition/partition.h"

enum { COMPARE_MAX_COLUMNS = 24 };

struct compare_cell {
	int64_t i;
	double d;
	int none; /* no value */
};

struct compare_row {
	char *model;
	struct compare_cell cells[COMPARE_MAX_COLUMNS];
};

struct compare {
	const char *cols[COMPARE_MAX_COLUMNS];
	unsigned char is_int[COMPARE_MAX_COLUMNS];
	size_t ncols;
	char share_names[ROOFLINE_NCLASSES][32];
	struct compare_row *rows;
	size_t nrows, cap;
};

/* Add r (analysed) as a row; saturating_batch as saturate_batch gives it
 * (0: none). The first row sets the columns. */
int compare_add(struct compare *c, const struct partition_report *r, int64_t saturating_batch,
		struct sp_err *err);
/* The comparison to path ("-": standard output) as PARTITION_TABLE, _CSV
 * or _JSON, atomically. */
int compare_write(const char *path, enum partition_format format, const struct compare *c,
		  struct sp_err *err);
void compare_free(struct compare *c);

#endif
