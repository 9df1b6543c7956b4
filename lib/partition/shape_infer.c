#include "partition/shape_infer.h"

#include <stdlib.h>
#include <string.h>

#include "partition/shape_rule.h"

/* The rules by family; each table ends with {NULL, NULL}. */
static const struct shape_rule_op *const families[] = {
	shape_rule_elementwise, shape_rule_window, shape_rule_matmul,
	shape_rule_layout,      shape_rule_constant, shape_rule_reduce,
};

static const struct shape_rule_op *find_rule(const char *op)
{
	for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
		for (const struct shape_rule_op *r = families[f]; r->op; r++)
			if (!strcmp(r->op, op))
				return r;
	return NULL;
}

int shape_infer_knows_op(const char *op)
{
	return find_rule(op) != NULL;
}

static int apply_inputs(struct opgraph *g, const struct shape_infer_opts *o, struct sp_err *err)
{
	for (size_t k = 0; k < o->noverrides; k++) {
		const struct shape_infer_override *ov = &o->overrides[k];
		size_t *i = strmap_find(&g->names, ov->name, strlen(ov->name));
		if (!i || !g->values[*i].is_input)
			return sp_fail(err, "--input-shape: %s has no graph input '%s'", g->path,
				       ov->name);
		struct opgraph_value *v = &g->values[*i];
		v->ndim = ov->ndim;
		memcpy(v->dims, ov->dims, (size_t)ov->ndim * sizeof *ov->dims);
	}
	for (size_t i = 0; i < g->nvalues; i++) {
		struct opgraph_value *v = &g->values[i];
		if (!v->is_input)
			continue;
		int overridden = 0;
		for (size_t k = 0; k < o->noverrides; k++)
			overridden |= !strcmp(o->overrides[k].name, v->name);
		if (o->batch > 0 && !overridden && v->ndim >= 1)
			v->dims[0] = o->batch;
		if (v->ndim < 0)
			return sp_fail(err, "%s: input '%s' has no shape; give --input-shape", g->path,
				       v->name);
		for (int d = 0; d < v->ndim; d++)
			if (v->dims[d] < 0)
				return sp_fail(err, "%s: input '%s' dim %d is symbolic; give %s", g->path,
					       v->name, d, d ? "--input-shape" : "--batch or --input-shape");
	}
	return 0;
}

int shape_infer(struct opgraph *g, const struct shape_infer_opts *o, size_t *order,
		unsigned char *unknown, struct sp_err *err)
{
	if (apply_inputs(g, o, err) || opgraph_topo_order(g, order, err))
		return -1;
	/* each op type's rule, looked up once */
	const struct shape_rule_op **rule_of = malloc((g->nop_types + 1) * sizeof *rule_of);
	if (!rule_of)
		return sp_fail(err, "%s: out of memory", g->path);
	for (size_t t = 0; t < g->nop_types; t++)
		rule_of[t] = find_rule(g->op_types[t]);
	int rc = 0;
	for (size_t i = 0; i < g->nnodes && !rc; i++) {
		const struct opgraph_node *n = &g->nodes[order[i]];
		struct shape_rule c = {g, n, err};
		const struct shape_rule_op *r = rule_of[n->op_id];
		unknown[order[i]] = !r;
		if (!r && !o->allow_unknown)
			rc = shape_rule_fail(&c, "no shape rule for this op (--allow-unknown "
						 "counts it as "
						 "zero)");
		else if (r)
			rc = r->fn(&c);
	}
	free(rule_of);
	return rc;
}
