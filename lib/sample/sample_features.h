/* What a timing model of kernel-sample predict learns from: an operator's
 * shape turned into features, in the spirit of estimate-train-time's
 * layer_input_to_predictor_input.py (DebarghaG/estimate-train-time), with
 * the work and the traffic added as derived features:
 *
 *   linear1..4, linear_final  m (tokens l b), k, n of the GEMM, flops, bytes
 *   bmm, baddbmm              batch (b h/mp), m, k, n, flops, bytes
 *   flash_atten               b, l, heads (h/mp), head_dim (dim/h), flops, bytes
 *   layernorm, RMSlayernorm,
 *   res_add                   b, l, dim, elements, bytes
 *   gelu                      tokens, width (4 dim/mp), elements, bytes
 *   softmax, ScaledUpper...   rows (b h/mp l), cols (l), elements, bytes
 *   RoPE                      l, b, heads, head_dim, elements, bytes
 *   any other operator        its shape columns and their product
 *
 * flops counts a multiply-add as two (attention: its two GEMMs, 4 b heads
 * l^2 head_dim); bytes is the elements the operator must read and write at
 * its precision (a GEMM's three matrices; attention's q, k, v and o; two
 * tensors of the shape for the elementwise and row operators). The last
 * sample_features_base() features (flops and bytes, or the product) are
 * those the model's power-law base fits on (sample_gbt.h). */
#ifndef SPKIT_SAMPLE_FEATURES_H
#define SPKIT_SAMPLE_FEATURES_H

#include <stdint.h>

#include "core/err.h"
#include "sample/sample_config.h"
#include "sample/sample_op.h"

#define SAMPLE_MAX_FEATURES (SAMPLE_MAX_DIMS + 1)

struct sample_features {
	char op[128];
	int n;    /* features */
	int nbase; /* the last nbase of them feed the base */
	const char *names[SAMPLE_MAX_FEATURES];
	const void *rule; /* private: the operator's rule, NULL for the generic one */
};

/* The features of operator `op` whose shape columns are cols[0..ncols):
 * an operator with a rule must have its columns, in its order
 * ("linear1 takes the shape (mp, b, l, dim), not (b, l, dim)"). */
int sample_features_init(struct sample_features *f, const char *op, const char *const *cols,
			 int ncols, struct sp_err *err);
/* x[0..f->n) for one shape, every value at least 1 (a ratio that
 * rounds to 0, as dim/h with h > dim, counts as 1). */
void sample_features_of(const struct sample_features *f, const int64_t *shape,
			enum sample_precision p, double *x);

#endif
