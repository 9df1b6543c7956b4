#include "partition/opgraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static int oom(struct sp_err *err, const struct opgraph *g)
{
	return sp_fail(err, "%s: out of memory", g->path ? g->path : "model");
}

size_t opgraph_value_intern(struct opgraph *g, const char *name)
{
	int added;
	size_t len = strlen(name), *slot = strmap_insert(&g->names, name, len, &added);
	if (!slot)
		return OPGRAPH_NONE;
	if (!added)
		return *slot; /* the values do not move: callers may hold pointers into them */
	/* out of memory from here on, the name maps to no value: the caller
	 * fails and the graph is only freed */
	struct opgraph_value *v =
		buf_grow_array(g->values, &g->values_cap, g->nvalues + 1, sizeof *v);
	if (!v)
		return OPGRAPH_NONE;
	g->values = v;
	v = &g->values[g->nvalues];
	memset(v, 0, sizeof *v);
	v->ndim = -1;
	v->producer = OPGRAPH_NONE;
	*slot = g->nvalues++;
	v->name = malloc(len + 1);
	if (!v->name)
		return OPGRAPH_NONE;
	memcpy(v->name, name, len + 1);
	return *slot;
}

static struct opgraph_attr *attr_new(struct opgraph_node *n, const char *name,
				     enum opgraph_attr_type type)
{
	struct opgraph_attr *a = realloc(n->attrs, (n->nattrs + 1) * sizeof *a);
	if (!a)
		return NULL;
	n->attrs = a;
	a = &a[n->nattrs];
	memset(a, 0, sizeof *a);
	a->name = strdup(name);
	if (!a->name)
		return NULL;
	a->type = type;
	a->tensor = OPGRAPH_NONE;
	n->nattrs++;
	return a;
}

int opgraph_node_add_int(struct opgraph_node *n, const char *name, int64_t v)
{
	struct opgraph_attr *a = attr_new(n, name, OPGRAPH_ATTR_INT);
	return a ? (a->i = v, 0) : -1;
}

int opgraph_node_add_float(struct opgraph_node *n, const char *name, double v)
{
	struct opgraph_attr *a = attr_new(n, name, OPGRAPH_ATTR_FLOAT);
	return a ? (a->f = v, 0) : -1;
}

/* A list attribute: count elements of size bytes copied from v (NULL when 0). */
static void *add_list(struct opgraph_node *n, const char *name, enum opgraph_attr_type type,
		      const void *v, size_t count, size_t size)
{
	struct opgraph_attr *a = attr_new(n, name, type);
	void *copy = a ? malloc((count ? count : 1) * size) : NULL;
	if (!copy)
		return NULL;
	if (count)
		memcpy(copy, v, count * size);
	a->nints = count;
	return type == OPGRAPH_ATTR_INTS ? (void *)(a->ints = copy) : (void *)(a->floats = copy);
}

int opgraph_node_add_ints(struct opgraph_node *n, const char *name, const int64_t *v, size_t count)
{
	return add_list(n, name, OPGRAPH_ATTR_INTS, v, count, sizeof *v) ? 0 : -1;
}

int opgraph_node_add_floats(struct opgraph_node *n, const char *name, const double *v, size_t count)
{
	return add_list(n, name, OPGRAPH_ATTR_FLOATS, v, count, sizeof *v) ? 0 : -1;
}

struct opgraph_attr *opgraph_node_add_tensor(struct opgraph_node *n, const char *name)
{
	return attr_new(n, name, OPGRAPH_ATTR_TENSOR);
}

int opgraph_node_add_string(struct opgraph_node *n, const char *name, const char *s)
{
	struct opgraph_attr *a = attr_new(n, name, OPGRAPH_ATTR_STRING);
	return a && (a->s = strdup(s)) ? 0 : -1;
}

static int add_names(struct opgraph *g, const char *const *names, size_t count, size_t **out)
{
	*out = malloc((count ? count : 1) * sizeof **out);
	if (!*out)
		return -1;
	for (size_t i = 0; i < count; i++) {
		(*out)[i] = names[i][0] ? opgraph_value_intern(g, names[i]) : OPGRAPH_NONE;
		if (names[i][0] && (*out)[i] == OPGRAPH_NONE)
			return -1;
	}
	return 0;
}

/* The graph's one copy of an op type's name (nodes share it), and its index. */
static const char *intern_op(struct opgraph *g, const char *op, size_t *id)
{
	int added;
	size_t *slot = strmap_insert(&g->op_index, op, strlen(op), &added);
	if (!slot)
		return NULL;
	*id = *slot;
	if (!added)
		return g->op_types[*slot];
	char **grown = buf_grow_array(g->op_types, &g->op_types_cap, g->nop_types + 1,
				      sizeof *grown);
	char *copy = strdup(op);
	if (!grown || !copy) {
		free(copy);
		g->op_types = grown ? grown : g->op_types;
		return NULL; /* the map holds a slot pointing nowhere: the graph is freed next */
	}
	g->op_types = grown;
	*id = *slot = g->nop_types;
	g->op_types[g->nop_types++] = copy;
	return copy;
}

int opgraph_add_node(struct opgraph *g, const char *op, const char *name, const char *const *in,
		     size_t nin, const char *const *out, size_t nout, struct sp_err *err)
{
	struct opgraph_node *nodes =
		buf_grow_array(g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof *nodes);
	if (!nodes)
		return oom(err, g);
	g->nodes = nodes;
	struct opgraph_node *n = &nodes[g->nnodes++];
	memset(n, 0, sizeof *n);
	n->op = intern_op(g, op, &n->op_id);
	n->name = strdup(name);
	n->nin = nin;
	n->nout = nout;
	if (!n->op || !n->name || add_names(g, in, nin, &n->in) || add_names(g, out, nout, &n->out))
		return oom(err, g);
	for (size_t i = 0; i < nout; i++) {
		if (n->out[i] == OPGRAPH_NONE)
			continue;
		struct opgraph_value *v = &g->values[n->out[i]];
		if (v->producer != OPGRAPH_NONE || v->is_initializer || v->is_input ||
		    v->is_constant)
			return sp_fail(err, "%s: node '%s' (%s): output '%s' is already produced",
				       g->path, name, op, v->name);
		v->producer = g->nnodes - 1;
	}
	return 0;
}

int opgraph_set_value(struct opgraph *g, const char *name, int ndim, const int64_t *dims,
		      int is_initializer, struct sp_err *err)
{
	if (ndim > OPGRAPH_MAX_DIMS)
		return sp_fail(err, "%s: tensor '%s' has %d dims, more than %d", g->path, name,
			       ndim, OPGRAPH_MAX_DIMS);
	size_t i = opgraph_value_intern(g, name);
	if (i == OPGRAPH_NONE)
		return oom(err, g);
	struct opgraph_value *v = &g->values[i];
	v->ndim = ndim;
	for (int d = 0; d < ndim; d++) {
		if (dims[d] < -1)
			return sp_fail(err, "%s: tensor '%s' has a negative dim %lld", g->path, name,
				       (long long)dims[d]);
		v->dims[d] = dims[d];
	}
	v->is_initializer |= is_initializer;
	return 0;
}

static void clear_contents(struct opgraph_value *v)
{
	free(v->cval);
	free(v->fval);
	v->cval = NULL;
	v->fval = NULL;
	v->ncval = v->nfval = 0;
}

int opgraph_value_set_contents(struct opgraph_value *v, const int64_t *ints, const double *floats,
			       size_t n)
{
	clear_contents(v);
	if (n > OPGRAPH_CONST_MAX)
		return 0;
	size_t size = floats ? sizeof *floats : sizeof *ints;
	void *p = malloc((n ? n : 1) * size);
	if (!p)
		return -1;
	if (n)
		memcpy(p, floats ? (const void *)floats : (const void *)ints, n * size);
	if (floats) {
		v->fval = p;
		v->nfval = n;
	} else {
		v->cval = p;
		v->ncval = n;
	}
	return 0;
}

void opgraph_free(struct opgraph *g)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		struct opgraph_node *n = &g->nodes[i];
		for (size_t k = 0; k < n->nattrs; k++) {
			free(n->attrs[k].name);
			free(n->attrs[k].ints);
			free(n->attrs[k].floats);
			free(n->attrs[k].s);
		}
		free(n->attrs);
		free(n->in);
		free(n->out);
		free(n->name);
	}
	for (size_t i = 0; i < g->nvalues; i++) {
		free(g->values[i].name);
		free(g->values[i].cval);
		free(g->values[i].fval);
	}
	for (size_t i = 0; i < g->nop_types; i++)
		free(g->op_types[i]);
	free(g->op_types);
	strmap_free(&g->op_index);
	free(g->nodes);
	free(g->values);
	free(g->path);
	strmap_free(&g->names);
	memset(g, 0, sizeof *g);
}

const struct opgraph_attr *opgraph_attr(const struct opgraph_node *n, const char *name)
{
	for (size_t k = 0; k < n->nattrs; k++)
		if (!strcmp(n->attrs[k].name, name))
			return &n->attrs[k];
	return NULL;
}

int64_t opgraph_attr_int(const struct opgraph_node *n, const char *name, int64_t dflt)
{
	const struct opgraph_attr *a = opgraph_attr(n, name);
	return a && a->type == OPGRAPH_ATTR_INT ? a->i : dflt;
}

int64_t opgraph_mul_sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t opgraph_add_sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t opgraph_value_numel(const struct opgraph_value *v)
{
	int64_t n = 1;
	for (int d = 0; d < v->ndim; d++)
		n = opgraph_mul_sat(n, v->dims[d] < 0 ? 0 : v->dims[d]);
	return n;
}

/* Where a node is: the file, and the line for a YAML model's node. */
const char *opgraph_node_where(const struct opgraph *g, const struct opgraph_node *n, char *buf,
			       size_t size)
{
	if (n->line)
		snprintf(buf, size, "%s:%zu", g->path, n->line);
	else
		snprintf(buf, size, "%s", g->path);
	return buf;
}

/* Kahn's algorithm over producer -> consumer edges. */
int opgraph_topo_order(const struct opgraph *g, size_t *order, struct sp_err *err)
{
	size_t *missing = calloc(g->nnodes + 1, sizeof *missing);
	size_t *nusers = calloc(g->nvalues + 1, sizeof *nusers);
	size_t *start = calloc(g->nvalues + 2, sizeof *start), *users = NULL;
	size_t nedges = 0, head = 0, tail = 0;
	int rc = -1;
	char at[300];
	if (!missing || !nusers || !start)
		goto oom;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct opgraph_node *n = &g->nodes[i];
		for (size_t k = 0; k < n->nin; k++) {
			if (n->in[k] == OPGRAPH_NONE)
				continue;
			const struct opgraph_value *v = &g->values[n->in[k]];
			if (v->producer == OPGRAPH_NONE) {
				if (!v->is_initializer && !v->is_input && !v->is_constant) {
					rc = sp_fail(err,
						     "%s: node '%s' (%s): input '%s' is never "
						     "produced",
						     opgraph_node_where(g, n, at, sizeof at),
						     n->name, n->op, v->name);
					goto done;
				}
				continue;
			}
			missing[i]++;
			nusers[n->in[k]]++;
			nedges++;
		}
	}
	for (size_t v = 0; v < g->nvalues; v++)
		start[v + 1] = start[v] + nusers[v];
	users = malloc((nedges ? nedges : 1) * sizeof *users);
	if (!users)
		goto oom;
	memset(nusers, 0, (g->nvalues + 1) * sizeof *nusers);
	for (size_t i = 0; i < g->nnodes; i++)
		for (size_t k = 0; k < g->nodes[i].nin; k++) {
			size_t v = g->nodes[i].in[k];
			if (v != OPGRAPH_NONE && g->values[v].producer != OPGRAPH_NONE)
				users[start[v] + nusers[v]++] = i;
		}
	for (size_t i = 0; i < g->nnodes; i++)
		if (!missing[i])
			order[tail++] = i;
	while (head < tail) {
		const struct opgraph_node *n = &g->nodes[order[head++]];
		for (size_t k = 0; k < n->nout; k++) {
			size_t v = n->out[k];
			if (v == OPGRAPH_NONE)
				continue;
			for (size_t u = start[v]; u < start[v + 1]; u++)
				if (--missing[users[u]] == 0)
					order[tail++] = users[u];
		}
	}
	if (tail < g->nnodes) {
		for (size_t i = 0; i < g->nnodes; i++)
			if (missing[i]) {
				rc = sp_fail(err,
					     "%s: the graph has a cycle through node '%s' (%s)",
					     opgraph_node_where(g, &g->nodes[i], at, sizeof at),
					     g->nodes[i].name, g->nodes[i].op);
				break;
			}
		goto done;
	}
	rc = 0;
	goto done;
oom:
	rc = sp_fail(err, "%s: out of memory", g->path);
done:
	free(missing);
	free(nusers);
	free(start);
	free(users);
	return rc;
}
