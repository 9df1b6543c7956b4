/* kernel-sample fit: the sampling CSVs of one operator into its timing
 * models (sample_model.h), with their held-out error.
 *
 * The CSVs are kernel-sample's (or the original's): named
 * DEVICE_OP_PRECISION[_PARTS_PART].csv, all of one device, operator and
 * precision, with the same header: the shape columns, then F_dur(us) and
 * B_dur(us). Every row is a sample (parts are simply read together; a shape
 * in two files counts twice). A direction whose times are all 0 has no
 * kernel (res_add's backward) and gets no model; otherwise every time must be
 * positive.
 *
 * The held-out error is k-fold cross-validation: the rows shuffled by the
 * seed and dealt into k folds, each fold predicted by a model fitted on the
 * others, and of the relative errors |predicted - measured| / measured of
 * every row, the mean (MAPE), the median and the 90th percentile (the
 * nearest rank). The model written is then fitted on every row. */
#ifndef SPKIT_SAMPLE_FIT_H
#define SPKIT_SAMPLE_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "sample/sample_merge.h"
#include "sample/sample_model.h"

/* A fit needs this many rows, and 2 a fold with cross-validation. */
#define SAMPLE_FIT_MIN_ROWS 8

struct sample_data {
	struct sample_file_name name; /* device, op, precision, from the first file's name */
	enum sample_precision precision;
	int ncols;
	char cols[SAMPLE_MAX_DIMS][64];
	const char *colp[SAMPLE_MAX_DIMS];
	struct sample_features feat;
	char first[256]; /* the first file, for messages */
	size_t n;
	int64_t *shape; /* n x ncols */
	double *us[2];  /* the times of each direction (enum sample_direction) */
};

int sample_data_read(const char *const *paths, size_t npaths, struct sample_data *d,
		     struct sp_err *err);
void sample_data_free(struct sample_data *d);
/* Does the direction have a kernel (a time above 0)? */
int sample_data_has(const struct sample_data *d, enum sample_direction dir);

struct sample_cv {
	int folds; /* 0: none made */
	double mape, median, p90; /* relative errors, as fractions */
};

/* Fit one direction; with folds >= 2, cross-validate first (cv->folds 0
 * otherwise). Too few rows is an error that says how many are needed. */
int sample_fit(const struct sample_data *d, enum sample_direction dir,
	       const struct gbt_params *params, int folds, struct sample_model *m,
	       struct sample_cv *cv, struct sp_err *err);

#endif
