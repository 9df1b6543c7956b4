/* kernel-sample merge: part files of one sweep into one CSV, as the
 * original's guide does it with pandas (concat, drop duplicates, sort by the
 * shape columns), but refusing to mix what does not belong together.
 *
 * The files' names say what they hold, "{device}_{op}_{precision}_{parts}_
 * {part}.csv" (a part) or "{device}_{op}_{precision}.csv" (merged already);
 * every input must name the same device, operator and precision, and have
 * the same header, whose last two columns are the durations and the others
 * the shape (whole numbers: "1024", or "1024.0" as the original's NumPy rows
 * write them). Rows are sorted by the shape, numerically, first column first;
 * a shape in several rows keeps the first (in the order of the inputs). The
 * output is written whole or not at all (outfile.h); "-" is stdout. */
#ifndef SPKIT_SAMPLE_MERGE_H
#define SPKIT_SAMPLE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct sample_file_name {
	char device[128], op[128], precision[16];
	int parts, part; /* 0 for a merged file */
};

int sample_file_name_parse(const char *path, struct sample_file_name *name, struct sp_err *err);

/* A shape cell of a sampling CSV: a whole number from 0 to 2^40, written
 * as kernel-sample writes it ("1024") or as the original does (its rows are
 * NumPy floats: "1024.0"). */
struct table;
int sample_is_shape_value(double v);
/* A duration cell: a finite number >= 0 (fit needs it so). */
int sample_is_time(double v);
int sample_shape_cell(const struct table *t, size_t row, size_t col, int64_t *out,
		      struct sp_err *err);

struct sample_merge_result {
	uint64_t rows_in, rows_out; /* rows read, rows written (duplicates dropped) */
};

int sample_merge(const char *const *inputs, size_t n, const char *output,
		 struct sample_merge_result *r, struct sp_err *err);

#endif
