/* Per-operator cost of an opgraph whose shapes are inferred (shape_infer.h):
 * FLOPs, MACs, bytes in and out, arithmetic intensity, thread-level
 * parallelism and the grouped/depthwise flags; and the totals.
 *
 * What counts what (the man page says the same):
 *   conv        2*B*Cout*prod(out spatial)*(Cin/group)*prod(kernel); bias not counted
 *   convtranspose 2*B*Cin*prod(in spatial)*(Cout/group)*prod(kernel)
 *   gemm/matmul 2*M*N*K per (broadcast) batch; einsum 2*prod(every index's
 *     size); MACs are half of these
 *   elementwise and activations: 1 per output element
 *   BatchNormalization 2 per element (scale and shift at inference)
 *   LayerNormalization, InstanceNormalization, GroupNormalization,
 *     MeanVarianceNormalization, LRN, Softmax, LogSoftmax, Hardmax: 5 per
 *     element (mean, variance or max, subtract, scale or exp, normalise)
 *   MaxPool/AveragePool: output elements * kernel size; global pools,
 *     reductions, ArgMax/ArgMin and TopK: 1 per input element
 *   Resize: 2 per tap and output element, 2^k taps for linear and 4^k for
 *     cubic over the k axes it resizes, none for nearest
 *   layout and shape ops (Reshape, Transpose, Concat, Gather, Slice, Pad, ...): 0
 * Views (Identity, Reshape, Flatten, Squeeze, Unsqueeze, Dropout) run no
 * kernel at inference: they move no bytes and have no threads either.
 * Thread-level parallelism is the element count of the first output (one
 * thread per output element), as the graphs project's GraphPartitioner
 * counts it. */
#ifndef SPKIT_OP_COST_H
#define SPKIT_OP_COST_H

#include <stddef.h>
#include <stdint.h>

#include "partition/opgraph.h"

enum op_cost_class {
	OP_COST_MATMUL,
	OP_COST_ELEMENTWISE,
	OP_COST_NORMALIZATION,
	OP_COST_POOL,
	OP_COST_REDUCE,
	OP_COST_DATA,
	OP_COST_UNKNOWN
};

struct op_cost {
	enum op_cost_class cls;
	int kernel; /* runs as a kernel: not a view (nor, set by the caller, a constant) */
	int64_t flops, macs;
	int64_t input_bytes, output_bytes, weight_bytes;
	double intensity; /* flops per byte moved; 0 when nothing moves */
	int64_t threads;  /* output elements */
	int64_t groups;   /* Conv and ConvTranspose's group; 1 for other ops */
	int depthwise;    /* a Conv with group > 1 equal to its input channels */
};

struct op_cost_totals {
	int64_t total_flops, matmul_flops, macs, params, memory_bytes;
};

/* Bytes per element of "fp32", "tf32" (fp32 data, TF32 matrix units),
 * "fp16", "bf16" or "int8"; 0 for another name. */
int op_cost_dtype_size(const char *name);
const char *op_cost_class_name(enum op_cost_class cls);

/* Mark the parameters: initializers, and outputs of an Identity of a
 * parameter (the exporter aliases identical initializers that way, and
 * each alias counts as a tensor of its own). is_param has g->nvalues
 * entries; order is a topological order of the nodes. Returns the
 * parameter count (elements). */
int64_t op_cost_mark_params(const struct opgraph *g, const size_t *order, unsigned char *is_param);

/* The cost of node i. unknown: the node's op had no shape rule (zero cost). */
void op_cost(const struct opgraph *g, size_t i, int unknown, const unsigned char *is_param,
	     int dtype_bytes, struct op_cost *c);
/* A constant op (computed once from initializers and shapes, stages.h):
 * no kernel, no cost; its class stays. */
void op_cost_make_constant(struct op_cost *c);
/* Add one op to the totals. */
void op_cost_accumulate(struct op_cost_totals *t, const struct op_cost *c);

#endif
