/* Shape inference of its own for an opgraph: the graph inputs' dims (from
 * the file, --input-shape overrides, --batch), then every node in
 * topological order, its output dims from its inputs' dims and attributes.
 * Small int64 constants are carried along (Constant, Shape, Gather, Concat,
 * Unsqueeze, Squeeze, Identity, Cast, Slice, ConstantOfShape, Range) and
 * elementwise arithmetic on them is evaluated, so that the Reshape targets
 * of dynamic-shape exports resolve.
 *
 * The rules are in shape_rule_*.c, one file per family of ops (shape_rule.h).
 *
 * Errors name the file and the node: "m.onnx: node 'conv1' (Conv): input
 * channels 3 are not weight channels 4 x group 1". */
#ifndef SPKIT_SHAPE_INFER_H
#define SPKIT_SHAPE_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "partition/opgraph.h"

struct shape_infer_override {
	const char *name; /* a graph input */
	int ndim;
	int64_t dims[OPGRAPH_MAX_DIMS];
};

struct shape_infer_opts {
	int64_t batch; /* > 0: the first dim of every graph input not overridden */
	const struct shape_infer_override *overrides;
	size_t noverrides;
	int allow_unknown; /* an op without a rule: outputs keep their value_info shapes */
};

/* order receives the g->nnodes node indices in a topological order;
 * unknown[i] is set to 1 for each node whose op has no rule (only with
 * allow_unknown; otherwise that is an error). */
int shape_infer(struct opgraph *g, const struct shape_infer_opts *o, size_t *order,
		unsigned char *unknown, struct sp_err *err);

/* Does shape inference have a rule for this op type? */
int shape_infer_knows_op(const char *op);

#endif
