/* An operator graph: named values (tensors with their dims, initializers
 * marked as parameters, small constant contents) and nodes (op type, name,
 * input and output value indices, the attributes shape inference needs).
 * An ONNX model (onnx_model.h) and a YAML model (model_yaml.h) load into
 * it; shape inference, cost, stages, fusion and the report read it. */
#ifndef SPKIT_OPGRAPH_H
#define SPKIT_OPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/strmap.h"

enum { OPGRAPH_MAX_DIMS = 8, OPGRAPH_CONST_MAX = 64 /* int64 elements kept of a constant */ };
#define OPGRAPH_NONE ((size_t)-1) /* an optional input left empty ("") */

enum opgraph_attr_type {
	OPGRAPH_ATTR_OTHER,
	OPGRAPH_ATTR_INT,
	OPGRAPH_ATTR_FLOAT,
	OPGRAPH_ATTR_INTS,
	OPGRAPH_ATTR_FLOATS,
	OPGRAPH_ATTR_STRING,
	OPGRAPH_ATTR_TENSOR
};

struct opgraph_attr {
	char *name;
	enum opgraph_attr_type type;
	int64_t i;
	double f;
	int64_t *ints; /* INTS */
	double *floats; /* FLOATS */
	size_t nints;  /* entries of ints or floats */
	char *s;       /* STRING, NUL-terminated */
	size_t tensor; /* TENSOR: index of a value holding the tensor's dims and constant data */
};

struct opgraph_value {
	char *name;
	int elem_type;      /* ONNX TensorProto.DataType; 0 unknown */
	int ndim;           /* -1: shape unknown */
	int64_t dims[OPGRAPH_MAX_DIMS]; /* -1: a symbolic dim */
	int is_initializer; /* a parameter: an initializer */
	int is_constant;    /* a YAML model's constant: given values, not a parameter */
	int is_input;       /* a graph input that is not an initializer */
	int is_output;      /* a graph output */
	size_t producer;    /* node index, or OPGRAPH_NONE */
	int64_t *cval;      /* constant integer contents (at most OPGRAPH_CONST_MAX), or NULL */
	size_t ncval;
	double *fval;       /* constant floating-point contents (as many), or NULL */
	size_t nfval;
};

struct opgraph_node {
	char *name;
	const char *op; /* the graph's copy of the op type, one per distinct type */
	size_t op_id;   /* its index in the graph's op_types */
	size_t *in, nin; /* value indices, OPGRAPH_NONE for an empty optional input */
	size_t *out, nout;
	struct opgraph_attr *attrs;
	size_t nattrs;
	size_t line; /* where a YAML model defines it (messages say file:line); 0 for ONNX */
};

/* The ONNX opsets whose operator semantics the shape rules know (opset
 * 10's Resize and Upsample included); a model of another opset is refused
 * rather than read with the wrong meaning. */
#define OPGRAPH_OPSET_MIN 10
#define OPGRAPH_OPSET_MAX 21

struct opgraph {
	char *path; /* for messages */
	int64_t opset;
	struct opgraph_value *values;
	size_t nvalues, values_cap;
	struct opgraph_node *nodes;
	size_t nnodes, nodes_cap;
	struct strmap names; /* value name -> index */
	struct strmap op_index; /* op type -> index in op_types */
	char **op_types;
	size_t nop_types, op_types_cap;
	uint64_t dropped_bytes; /* tensor data the load left unread (onnx_wire.h) */
};

void opgraph_free(struct opgraph *g);

/* The value called name, adding it (shape unknown) if new; OPGRAPH_NONE when out of memory. */
size_t opgraph_value_intern(struct opgraph *g, const char *name);
/* Building a graph (the loader does, and tests do by hand). Each returns
 * -1 only when out of memory. opgraph_add_node copies the names; an empty input
 * name is an absent optional input. */
int opgraph_add_node(struct opgraph *g, const char *op, const char *name, const char *const *in,
		     size_t nin, const char *const *out, size_t nout, struct sp_err *err);
int opgraph_node_add_int(struct opgraph_node *n, const char *name, int64_t v);
int opgraph_node_add_ints(struct opgraph_node *n, const char *name, const int64_t *v, size_t count);
int opgraph_node_add_floats(struct opgraph_node *n, const char *name, const double *v,
			    size_t count);
int opgraph_node_add_float(struct opgraph_node *n, const char *name, double v);
int opgraph_node_add_string(struct opgraph_node *n, const char *name, const char *s);
/* A TENSOR attribute, its value index (tensor) OPGRAPH_NONE for the caller
 * to set; NULL when out of memory. */
struct opgraph_attr *opgraph_node_add_tensor(struct opgraph_node *n, const char *name);
/* Set a value's shape (ndim dims); with is_initializer it becomes a parameter. */
int opgraph_set_value(struct opgraph *g, const char *name, int ndim, const int64_t *dims,
		      int is_initializer, struct sp_err *err);

/* Give v constant contents, replacing any: n floating-point numbers from
 * floats, or (floats NULL) n integers from ints, copied; more than
 * OPGRAPH_CONST_MAX elements keep none. -1: out of memory. */
int opgraph_value_set_contents(struct opgraph_value *v, const int64_t *ints, const double *floats,
			       size_t n);

/* The attribute called name of node n, or NULL. */
const struct opgraph_attr *opgraph_attr(const struct opgraph_node *n, const char *name);
int64_t opgraph_attr_int(const struct opgraph_node *n, const char *name, int64_t dflt);
/* Number of elements of a value with a known shape (1 for a scalar). */
int64_t opgraph_value_numel(const struct opgraph_value *v);
/* Counts from untrusted dims saturate at INT64_MAX instead of overflowing. */
int64_t opgraph_mul_sat(int64_t a, int64_t b);
int64_t opgraph_add_sat(int64_t a, int64_t b);

/* Where node n is, for messages: the file, and file:line for a YAML
 * model's node (into buf, which it returns). */
const char *opgraph_node_where(const struct opgraph *g, const struct opgraph_node *n, char *buf,
			       size_t size);

/* order receives the g->nnodes node indices in a topological order (Kahn's
 * algorithm over producer -> consumer edges). Fails on an input no node
 * produces that is no graph input, initializer or constant, and on a
 * cycle, naming a node. */
int opgraph_topo_order(const struct opgraph *g, size_t *order, struct sp_err *err);

#endif
