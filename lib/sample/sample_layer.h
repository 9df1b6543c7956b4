/* One transformer layer as operators, for kernel-sample predict --layer
 * (the sum of the operators' predicted times) and kernel-sample layer (the
 * same operators run back to back, and each alone).
 *
 * The layer is estimate-train-time's encoder_function_list of a GPT-style
 * layer (its mml_3d_prediction configs), from the encoder's (mp, b, h, l,
 * dim):
 *
 *   NORM, linear1, RoPE, ATTENTION, linear2, NORM, res_add, linear3, gelu,
 *   linear4, res_add
 *
 * NORM is RMSlayernorm (LLaMA) or layernorm (GPT-2), the original's
 * layernorm_name. ATTENTION is flash_atten, as in the original, or, where
 * that operator is not there, the unfused attention of Megatron-LM:
 * baddbmm (q k^T), ScaledUpperTriangMaskedSoftmax (the causal softmax) and
 * bmm (the scores times v). Each operator's shape takes the encoder's
 * values of its columns by name (linear1: mp, b, l, dim). The backward
 * runs the operators' backwards in the reverse order; res_add has none.
 * The tensor-parallel all-reduces the original adds (its fwd_syncs and
 * bwd_syncs) are communication, not in a layer on one GPU. */
#ifndef SPKIT_SAMPLE_LAYER_H
#define SPKIT_SAMPLE_LAYER_H

#include <stdint.h>

#include "core/err.h"
#include "sample/sample_config.h"
#include "sample/sample_model.h"
#include "sample/sample_run.h"

#define SAMPLE_LAYER_MAX_OPS 16

/* The encoder's columns, in the order --layer takes them. */
extern const char *const sample_layer_columns[]; /* mp, b, h, l, dim */
extern const char *const sample_layer_norms[];   /* RMSlayernorm, layernorm, NULL */
extern const char *const sample_layer_attentions[]; /* unfused, flash_atten, flash_atten_causal, NULL */

/* The operators' names in order; returns their count. attention is
 * "unfused" or an operator's name (flash_atten). */
int sample_layer_ops(const char *norm, const char *attention, const char **ops);

/* The shape of an operator with columns cols[0..ncols) in the layer of
 * encoder enc[5]; a column the encoder has no value for is an error. */
int sample_layer_shape(const char *op, const char *const *cols, int ncols, const int64_t *enc,
		       int64_t *shape, struct sp_err *err);

/* Times of a layer's operators, measured or predicted, and their shapes. */
struct sample_layer_times {
	int n;
	int nshape[SAMPLE_LAYER_MAX_OPS];
	int64_t shape[SAMPLE_LAYER_MAX_OPS][SAMPLE_MAX_DIMS];
	struct sample_times alone[SAMPLE_LAYER_MAX_OPS]; /* each operator on its own */
	/* measured: the forwards back to back, then the backwards; predicted:
	 * the sum of the operators' */
	struct sample_times layer;
};

/* Each operator's times predicted by its models in folder dir (fit's
 * names; one device's), and their sum in t->layer; device gets the models'
 * device. An operator without a backward (res_add) needs no bwd model. A
 * model missing, unreadable or whose content is not what its name says
 * (another operator, precision or direction) is an error naming it. */
int sample_layer_predict(const char *dir, const char *const *ops, int n,
			 enum sample_precision p, const int64_t *enc, char *device,
			 size_t device_size, struct sample_layer_times *t, struct sp_err *err);

/* Set up every operator at t->shape[i] (ops[i] from the CPU or GPU table),
 * then time each alone as kernel-sample's sweeps do (wait + warmup
 * untimed runs, active timed, the trimmed mean), then the whole layer with
 * the same schedule. Errors name the operator and its shape. */
int sample_layer_measure(const struct sample_op *const *ops, int n,
			 const struct sample_clock *clock, enum sample_precision p,
			 uint64_t seed, int wait, int warmup, int active,
			 struct sample_layer_times *t, struct sp_err *err);

#endif
