/* An ONNX model as a small operator graph of its own: named values (tensors
 * with their dims, initializers marked as parameters) and nodes (op type,
 * name, input and output value indices, the attributes shape inference
 * needs). Only dims are kept of initializers; their data is dropped, except
 * small int64 and float tensors (the shape arithmetic of dynamic exports
 * and Resize's scales read those). The YAML model format (model_yaml.h)
 * builds the same graph.
 *
 * The protobuf is decoded with protobuf-c from Debian's onnx.proto, after
 * onnx_wire.h has streamed the file and left out the large tensor data, so
 * a model of hundreds of MB is never held in memory: what the load needs is
 * proportional to the node count, not to the weights. */
#ifndef SPKIT_ONNX_MODEL_H
#define SPKIT_ONNX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/strmap.h"

enum { OM_MAX_DIMS = 8, OM_CONST_MAX = 64 /* int64 elements kept of a constant */ };
#define OM_NONE ((size_t)-1) /* an optional input left empty ("") */

enum om_attr_type { OM_ATTR_OTHER, OM_ATTR_INT, OM_ATTR_FLOAT, OM_ATTR_INTS, OM_ATTR_FLOATS,
		    OM_ATTR_STRING, OM_ATTR_TENSOR };

struct om_attr {
	char *name;
	enum om_attr_type type;
	int64_t i;
	double f;
	int64_t *ints; /* INTS */
	double *floats; /* FLOATS */
	size_t nints;  /* entries of ints or floats */
	char *s;       /* STRING, NUL-terminated */
	size_t tensor; /* TENSOR: index of a value holding the tensor's dims and constant data */
};

struct om_value {
	char *name;
	int elem_type;      /* ONNX TensorProto.DataType; 0 unknown */
	int ndim;           /* -1: shape unknown */
	int64_t dims[OM_MAX_DIMS]; /* -1: a symbolic dim */
	int is_initializer; /* a parameter: an initializer */
	int is_constant;    /* a YAML model's constant: given values, not a parameter */
	int is_input;       /* a graph input that is not an initializer */
	int is_output;      /* a graph output */
	size_t producer;    /* node index, or OM_NONE */
	int64_t *cval;      /* constant integer contents (at most OM_CONST_MAX), or NULL */
	size_t ncval;
	double *fval;       /* constant floating-point contents (as many), or NULL */
	size_t nfval;
};

struct om_node {
	char *name;
	const char *op; /* the graph's copy of the op type, one per distinct type */
	size_t op_id;   /* its index in the graph's op_types */
	size_t *in, nin;   /* value indices, OM_NONE for an empty optional input */
	size_t *out, nout;
	struct om_attr *attrs;
	size_t nattrs;
	size_t line; /* where a YAML model defines it (messages say file:line); 0 for ONNX */
};

struct om_graph {
	char *path; /* for messages */
	int64_t opset;
	struct om_value *values;
	size_t nvalues, values_cap;
	struct om_node *nodes;
	size_t nnodes, nodes_cap;
	struct strmap names; /* value name -> index */
	struct strmap op_index; /* op type -> index in op_types */
	char **op_types;
	size_t nop_types, op_types_cap;
	uint64_t dropped_bytes; /* tensor data the load left unread (onnx_wire.h) */
};

/* Read and decode an .onnx file. On failure g is left empty (om_free is safe). */
int om_load(const char *path, struct om_graph *g, struct sp_err *err);
/* The same from memory; name is used in messages. */
int om_load_mem(const void *data, size_t size, const char *name, struct om_graph *g,
		struct sp_err *err);
void om_free(struct om_graph *g);

/* The value called name, adding it (shape unknown) if new; OM_NONE when out of memory. */
size_t om_value_intern(struct om_graph *g, const char *name);
/* Building a graph (the loader does, and tests do by hand). Each returns
 * -1 only when out of memory. om_add_node copies the names; an empty input
 * name is an absent optional input. */
int om_add_node(struct om_graph *g, const char *op, const char *name, const char *const *in,
		size_t nin, const char *const *out, size_t nout, struct sp_err *err);
int om_node_add_int(struct om_node *n, const char *name, int64_t v);
int om_node_add_ints(struct om_node *n, const char *name, const int64_t *v, size_t count);
int om_node_add_floats(struct om_node *n, const char *name, const double *v, size_t count);
int om_node_add_float(struct om_node *n, const char *name, double v);
int om_node_add_string(struct om_node *n, const char *name, const char *s);
/* Set a value's shape (ndim dims); with is_initializer it becomes a parameter. */
int om_set_value(struct om_graph *g, const char *name, int ndim, const int64_t *dims,
		 int is_initializer, struct sp_err *err);

/* Give v constant contents, replacing any: n floating-point numbers from
 * floats, or (floats NULL) n integers from ints, copied; more than
 * OM_CONST_MAX elements keep none. -1: out of memory. */
int om_value_set(struct om_value *v, const int64_t *ints, const double *floats, size_t n);

/* The attribute called name of node n, or NULL. */
const struct om_attr *om_attr(const struct om_node *n, const char *name);
int64_t om_attr_int(const struct om_node *n, const char *name, int64_t dflt);
/* Number of elements of a value with a known shape (1 for a scalar). */
int64_t om_value_numel(const struct om_value *v);
/* Counts from untrusted dims saturate at INT64_MAX instead of overflowing. */
int64_t om_mul(int64_t a, int64_t b);
int64_t om_add(int64_t a, int64_t b);

#endif
