/* Shape rules of the matrix products: Gemm, MatMul (numpy batch
 * broadcasting, 1-D operands promoted) and Einsum. */
#include "partition/shape_rule.h"

#include <string.h>

static int rule_gemm(const struct shape_rule *c)
{
	const struct opgraph_value *a = shape_rule_input(c, 0),
				   *b = a ? shape_rule_input(c, 1) : NULL;
	if (!b)
		return -1;
	if (a->ndim != 2 || b->ndim != 2)
		return shape_rule_fail(c, "inputs of rank %d and %d, expected 2 and 2", a->ndim,
				       b->ndim);
	int ta = opgraph_attr_int(c->n, "transA", 0) != 0,
	    tb = opgraph_attr_int(c->n, "transB", 0) != 0;
	int64_t m = a->dims[ta], k = a->dims[!ta], kb = b->dims[tb], n = b->dims[!tb];
	if (k != kb)
		return shape_rule_fail(c, "inner dims %lld and %lld differ", (long long)k,
				       (long long)kb);
	int64_t dims[2] = {m, n};
	return shape_rule_set_output(c, 0, 2, dims, a->elem_type);
}

static int rule_matmul(const struct shape_rule *c)
{
	const struct opgraph_value *a = shape_rule_input(c, 0),
				   *b = a ? shape_rule_input(c, 1) : NULL;
	if (!b)
		return -1;
	if (a->ndim < 1 || b->ndim < 1)
		return shape_rule_fail(c, "MatMul of a scalar");
	/* 1-D operands are promoted to matrices and the added dim removed after. */
	int64_t ad[OPGRAPH_MAX_DIMS + 1], bd[OPGRAPH_MAX_DIMS + 1];
	int ar = a->ndim, br = b->ndim;
	memcpy(ad, a->dims, sizeof a->dims);
	memcpy(bd, b->dims, sizeof b->dims);
	if (ar == 1) {
		ad[1] = ad[0];
		ad[0] = 1;
		ar = 2;
	}
	if (br == 1) {
		bd[1] = 1;
		br = 2;
	}
	if (ad[ar - 1] != bd[br - 2])
		return shape_rule_fail(c, "inner dims %lld and %lld differ", (long long)ad[ar - 1],
				       (long long)bd[br - 2]);
	int r = ar > br ? ar : br, nd = 0;
	int64_t dims[OPGRAPH_MAX_DIMS + 1];
	for (int d = 0; d < r - 2; d++) {
		int da = d - (r - ar), db = d - (r - br);
		int64_t x = da >= 0 ? ad[da] : 1, y = db >= 0 ? bd[db] : 1;
		if (x != y && x != 1 && y != 1)
			return shape_rule_fail(c, "batch dims %lld and %lld cannot broadcast",
					       (long long)x, (long long)y);
		dims[nd++] = x == 1 ? y : x;
	}
	if (a->ndim > 1)
		dims[nd++] = ad[ar - 2];
	if (b->ndim > 1)
		dims[nd++] = bd[br - 1];
	return shape_rule_set_output(c, 0, nd, dims, a->elem_type);
}

/* Einsum without ellipses: each operand's letters name its dims; the
 * output's letters (after "->", or the letters used once, sorted) give the
 * output dims. A letter's dims must agree (or be 1, broadcast). */
static int rule_einsum(const struct shape_rule *c)
{
	const struct opgraph_attr *ea = opgraph_attr(c->n, "equation");
	if (!ea || ea->type != OPGRAPH_ATTR_STRING)
		return shape_rule_fail(c, "no equation");
	int64_t size[128];
	int count[128] = {0};
	for (int i = 0; i < 128; i++)
		size[i] = -1;
	const char *p = ea->s;
	size_t k = 0;
	int elem = 0;
	for (;; p++) {
		const struct opgraph_value *v = shape_rule_input(c, k);
		if (!v)
			return -1;
		elem = elem ? elem : v->elem_type;
		int d = 0;
		for (; *p && *p != ',' && *p != '-'; p++) {
			if (*p == ' ')
				continue;
			unsigned char l = (unsigned char)*p;
			if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')))
				return shape_rule_fail(c,
						       "equation '%s': only letters are supported",
						       ea->s);
			if (d >= v->ndim)
				return shape_rule_fail(c, "equation '%s': operand %zu has rank %d",
						       ea->s, k, v->ndim);
			int64_t dim = v->dims[d++];
			if (size[l] >= 0 && size[l] != dim && size[l] != 1 && dim != 1)
				return shape_rule_fail(c, "equation '%s': '%c' is %lld and %lld",
						       ea->s, l, (long long)size[l],
						       (long long)dim);
			if (size[l] < 0 || size[l] == 1)
				size[l] = dim;
			count[l]++;
		}
		if (d != v->ndim)
			return shape_rule_fail(c, "equation '%s': operand %zu has rank %d", ea->s,
					       k, v->ndim);
		k++;
		if (*p != ',')
			break;
	}
	if (k != c->n->nin)
		return shape_rule_fail(c, "equation '%s' names %zu operands, the node has %zu",
				       ea->s, k, c->n->nin);
	int64_t dims[OPGRAPH_MAX_DIMS];
	int nd = 0;
	if (*p == '-') {
		if (p[1] != '>')
			return shape_rule_fail(c, "equation '%s': '-' without '>'", ea->s);
		for (p += 2; *p; p++) {
			unsigned char l = (unsigned char)*p;
			if (l == ' ')
				continue;
			if (l >= 128 || size[l] < 0 || nd == OPGRAPH_MAX_DIMS)
				return shape_rule_fail(c,
						       "equation '%s': output letter '%c' is no "
						       "input's",
						       ea->s, *p);
			dims[nd++] = size[l];
		}
	} else {
		for (int l = 0; l < 128; l++)
			if (count[l] == 1) {
				if (nd == OPGRAPH_MAX_DIMS)
					return shape_rule_fail(
						c, "equation '%s': too many output dims", ea->s);
				dims[nd++] = size[l];
			}
	}
	return shape_rule_set_output(c, 0, nd, dims, elem);
}

const struct shape_rule_op shape_rule_matmul[] = {
	{"Gemm", rule_gemm}, {"MatMul", rule_matmul}, {"Einsum", rule_einsum},
	{NULL, NULL},
};
