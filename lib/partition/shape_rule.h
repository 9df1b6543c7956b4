/* The shape rules of shape inference (shape_infer.h), one file per family
 * of operators, and what they share: the node a rule runs on, reading its
 * inputs and attributes, setting its outputs' dims and constant contents,
 * and failing with a message that names the node.
 *
 * A rule reads the node's input dims and attributes and sets its outputs';
 * it returns 0, or -1 with the message in c->err. */
#ifndef SPKIT_SHAPE_RULE_H
#define SPKIT_SHAPE_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "partition/opgraph.h"

/* The node a rule runs on. */
struct shape_rule {
	struct opgraph *g;
	const struct opgraph_node *n;
	struct sp_err *err;
};

/* An op type and its rule. */
struct shape_rule_op {
	const char *op;
	int (*fn)(const struct shape_rule *c);
};

/* The families' rules, each table ending with {NULL, NULL}. */
extern const struct shape_rule_op shape_rule_elementwise[]; /* unary ops, broadcasting */
extern const struct shape_rule_op shape_rule_window[];      /* convolution and pooling */
extern const struct shape_rule_op shape_rule_matmul[];      /* Gemm, MatMul, Einsum */
extern const struct shape_rule_op shape_rule_layout[];      /* reshapes, slices, gathers */
extern const struct shape_rule_op shape_rule_constant[];    /* Constant, Shape, Range ... */
extern const struct shape_rule_op shape_rule_reduce[];      /* reductions, TopK, LayerNorm */

/* "FILE[:LINE]: node 'NAME' (OP): " and the message, into c->err; -1. */
int shape_rule_fail(const struct shape_rule *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Input i, which must be present with a known shape (else a message, NULL). */
struct opgraph_value *shape_rule_input(const struct shape_rule *c, size_t i);
/* Output i, or NULL when the node has none there (left out: ""). */
struct opgraph_value *shape_rule_output(const struct shape_rule *c, size_t i);
/* Output i's dims (dims may be NULL for a scalar) and, when not 0, its
 * element type; nothing when the output is left out. */
int shape_rule_set_output(const struct shape_rule *c, size_t i, int ndim, const int64_t *dims,
			  int elem_type);
/* Constant contents for output i, copied; more than OPGRAPH_CONST_MAX keep none. */
int shape_rule_set_ints(const struct shape_rule *c, size_t i, const int64_t *vals, size_t n);
int shape_rule_set_floats(const struct shape_rule *c, size_t i, const double *vals, size_t n);
/* Output 0 takes these dims, x's element type and x's constant contents
 * (the ops that only move or relabel data). */
int shape_rule_set_output_keep(const struct shape_rule *c, const struct opgraph_value *x,
			       int ndim, const int64_t *dims);
/* Is this ONNX element type (TensorProto.DataType) an integer one? Its
 * constants are carried as int64; the floating-point ones as double. */
int shape_rule_is_integral(int elem_type);
/* axis in [-rank, rank) into [0, rank) in *out. */
int shape_rule_axis(const struct shape_rule *c, int64_t axis, int rank, int64_t *out);
/* The int list of attribute name, or of constant input i when the
 * attribute is absent (opset 13 moved axes and the like to inputs), at most
 * cap entries. *found 0: neither is there. */
int shape_rule_int_list(const struct shape_rule *c, const char *name, size_t i, int64_t *out,
			size_t cap, size_t *count, int *found);
/* The axes of Squeeze, Unsqueeze and the reductions as a bit mask over
 * rank dims, and their count (grows: Unsqueeze, whose axes index the
 * output). */
int shape_rule_axes_mask(const struct shape_rule *c, int rank, int grows, int *mask,
			 size_t *count, int *found);

#endif
