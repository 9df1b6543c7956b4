/* Fusion candidates: chains of operators a compiler would run as one
 * kernel, so that the tensors between them never go through memory.
 *
 * A chain starts at a convolution (Conv, ConvTranspose) or a matrix
 * product (Gemm, MatMul), then takes, in this order and each at most once:
 * a BatchNormalization (after a convolution), an Add of a parameter (a bias,
 * after a matrix product), and one activation (Relu, Clip, LeakyRelu,
 * Sigmoid, HardSigmoid, HardSwish, Tanh, Gelu, Elu, Selu, Mish, Softplus,
 * PRelu). Each link needs the tensor between the two ops to have that next
 * op as its only consumer and not to be a graph output. A chain has at
 * least two ops. Constant ops (stage -1) never start one. */
#ifndef SPKIT_FUSION_H
#define SPKIT_FUSION_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "partition/opgraph.h"

enum { FUSION_MAX_OPS = 4 };

struct fusion {
	size_t ops[FUSION_MAX_OPS]; /* node indices, first to last */
	size_t nops;
	int64_t saved_bytes; /* each intermediate written and read once less */
};

/* The chains in the graph, in order (a topological order of the nodes);
 * stage per node (stages.h); is_param per value (op_cost.h). *out is the
 * caller's to free. */
int fusion_find(const struct opgraph *g, const size_t *order, const int64_t *stage,
		const unsigned char *is_param, int dtype_bytes, struct fusion **out, size_t *n,
		struct sp_err *err);

#endif
