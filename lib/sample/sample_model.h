/* kernel-sample's timing models: one per (operator, precision, direction),
 * the regressor of sample_gbt.h over the features of sample_features.h,
 * and their file, a text format read by a strict parser:
 *
 *   spkit-timing-model 1              magic and version
 *   operator linear1
 *   precision fp16                    fp16, bf16 or fp32
 *   direction fwd                     fwd (F_dur(us)) or bwd (B_dur(us))
 *   device NVIDIAH10080GBHBM3         where the times were measured
 *   columns mp b l dim                the shape, as the sampling CSV names it
 *   features m k n flops bytes        what this version computes from it
 *   rows 176                          the rows it was fitted on
 *   base 2 C0 C1 C2                   the power law: log us = C0 + C1 log flops + C2 log bytes
 *                                     (base 0 C0: a constant)
 *   trees 400
 *   tree 7                            then its 7 nodes, the root first:
 *   s F THRESHOLD LEFT RIGHT          a split, x[F] <= THRESHOLD goes to node LEFT
 *   l VALUE                           a leaf, added to log us
 *   ...
 *   end
 *
 * Fields are separated by one space, numbers are C decimals (doubles
 * written to round-trip), lines end with "\n". A tree's children come after
 * their parent and every node but the root has one parent. Errors name the
 * file and the line: "m.model:7: features 'a b' are not those this
 * kernel-sample computes for linear1 (m k n flops bytes)". */
#ifndef SPKIT_SAMPLE_MODEL_H
#define SPKIT_SAMPLE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "sample/sample_features.h"
#include "sample/sample_gbt.h"
#include "sample/sample_op.h"

#define SAMPLE_MODEL_MAGIC "spkit-timing-model"
#define SAMPLE_MODEL_VERSION 1

enum sample_direction { SAMPLE_FWD, SAMPLE_BWD };
/* "fwd", "bwd", NULL: as the original names its models' propagation. */
extern const char *const sample_direction_names[];
/* The sampling CSV's column of each direction: "F_dur(us)", "B_dur(us)". */
extern const char *const sample_direction_columns[];

struct sample_model {
	char op[128], device[128];
	enum sample_precision precision;
	enum sample_direction direction;
	int ncols;
	char cols[SAMPLE_MAX_DIMS][64];
	const char *colp[SAMPLE_MAX_DIMS]; /* cols as a list, for sample_features_init */
	struct sample_features feat;
	uint64_t rows;
	struct gbt gbt;
};

/* The name kernel-sample fit gives a model: "DEVICE_OP_PRECISION_DIR.model". */
const char *sample_model_file_name(const struct sample_model *m, char *buf, size_t size);

/* The model fit wrote for (op, precision, direction) in folder dir: path
 * gets "DIR/DEVICE_OP_PRECISION_DIR.model". device is in and out: empty,
 * any device's model is taken, but the folder may hold only one device's;
 * set, only that device's. Returns 1 when found, 0 when there is none, -1
 * on an error (the folder unreadable, models of two devices). */
int sample_model_find(const char *dir, const char *op, enum sample_precision p,
		      enum sample_direction d, char *device, size_t device_size, char *path,
		      size_t path_size, struct sp_err *err);

/* Write n models to n paths, each whole or not at all: every file is
 * written before any is put into place. */
int sample_model_save(const struct sample_model *const *models, const char *const *paths,
		      size_t n, struct sp_err *err);
/* On failure m is empty (sample_model_free is safe). */
int sample_model_read(const char *path, struct sample_model *m, struct sp_err *err);
int sample_model_read_buffer(const void *data, size_t len, const char *name,
			     struct sample_model *m, struct sp_err *err);
void sample_model_free(struct sample_model *m);

/* The predicted time in microseconds of one shape (the model's columns, in
 * its order). A shape its operator cannot run ("dim 100 not divisible by
 * mp 8") is an error. */
int sample_model_predict(const struct sample_model *m, const int64_t *shape, double *us,
			 struct sp_err *err);

#endif
