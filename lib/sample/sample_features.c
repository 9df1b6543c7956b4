#include "sample/sample_features.h"

#include <stdio.h>
#include <string.h>

#include "sample/sample_spec.h"

/* A rule: the operators it covers, their columns, the features it makes.
 * map writes the shape features and then flops (or elements) and bytes,
 * e being the bytes of one element. */
struct rule {
	const char *const *ops;
	int ncols;
	const char *const *cols;
	int n;
	const char *const *names;
	void (*map)(const char *op, const int64_t *s, double e, double *x);
};

static double at_least_1(double v)
{
	return v < 1 ? 1 : v;
}

/* m, k, n, then 2 m k n and the three matrices' bytes, batch times. */
static void gemm(double batch, double m, double k, double n, double e, double *x)
{
	x[0] = m, x[1] = k, x[2] = n;
	x[3] = 2 * batch * m * k * n;
	x[4] = e * batch * (m * k + k * n + m * n);
}

/* mp, b, l, dim: the (k, n) of each projection, as sample_spec.c lays them out. */
static void map_linear(const char *op, const int64_t *s, double e, double *x)
{
	double dim = (double)s[3], k = dim, n = dim;
	if (!strcmp(op, "linear1"))
		n = (double)(3 * s[3] / s[0]);
	else if (!strcmp(op, "linear2"))
		k = (double)(s[3] / s[0]);
	else if (!strcmp(op, "linear3"))
		n = (double)(4 * s[3] / s[0]);
	else if (!strcmp(op, "linear4"))
		k = (double)(4 * s[3] / s[0]);
	else /* linear_final */
		n = (double)sample_vocab_partition(s[0]);
	gemm(1, (double)(s[1] * s[2]), at_least_1(k), at_least_1(n), e, x);
}

/* mp, b, h, l, dim: batch b h/mp; bmm is scores (l x l) times v (l x dim/h),
 * baddbmm q (l x dim/h) times k^T (dim/h x l). */
static void map_batched(const char *op, const int64_t *s, double e, double *x)
{
	double batch = at_least_1((double)(s[1] * (s[2] / s[0]))), l = (double)s[3];
	double hd = at_least_1((double)(s[4] / s[2]));
	x[0] = batch;
	if (!strcmp(op, "bmm"))
		gemm(batch, l, l, hd, e, x + 1);
	else
		gemm(batch, l, hd, l, e, x + 1);
}

/* mp, b, h, l, dim: b, l, heads, head_dim; q k^T and p v. */
static void map_attention(const char *op, const int64_t *s, double e, double *x)
{
	double b = (double)s[1], heads = at_least_1((double)(s[2] / s[0])), l = (double)s[3];
	double hd = at_least_1((double)(s[4] / s[2]));
	x[0] = b, x[1] = l, x[2] = heads, x[3] = hd;
	x[4] = 4 * b * heads * l * l * hd;
	x[5] = e * 4 * b * heads * l * hd;
}

/* The first nshape features, then their product and twice its bytes. */
static void elements(double *x, int nshape, double e)
{
	double p = 1;
	for (int i = 0; i < nshape; i++)
		p *= x[i];
	x[nshape] = p;
	x[nshape + 1] = 2 * e * p;
}

static void map_rows(const char *op, const int64_t *s, double e, double *x)
{
	x[0] = (double)s[0], x[1] = (double)s[1], x[2] = (double)s[2];
	elements(x, 3, e);
}

/* mp, b, l, dim: the FFN's activation, tokens x 4 dim/mp. */
static void map_gelu(const char *op, const int64_t *s, double e, double *x)
{
	x[0] = (double)(s[1] * s[2]);
	x[1] = at_least_1((double)(4 * s[3] / s[0]));
	elements(x, 2, e);
}

/* mp, b, h, l: rows of scores b h/mp l, each l long. */
static void map_softmax(const char *op, const int64_t *s, double e, double *x)
{
	x[0] = at_least_1((double)(s[1] * (s[2] / s[0]) * s[3]));
	x[1] = (double)s[3];
	elements(x, 2, e);
}

/* mp, b, h, l, dim: l, b, heads, head_dim. */
static void map_rope(const char *op, const int64_t *s, double e, double *x)
{
	x[0] = (double)s[3], x[1] = (double)s[1];
	x[2] = at_least_1((double)(s[2] / s[0]));
	x[3] = at_least_1((double)(s[4] / s[2]));
	elements(x, 4, e);
}

static const char *const linear_ops[] = {"linear1", "linear2", "linear3", "linear4",
					 "linear_final", NULL};
static const char *const batched_ops[] = {"bmm", "baddbmm", NULL};
static const char *const attention_ops[] = {"flash_atten", NULL};
static const char *const row_ops[] = {"layernorm", "RMSlayernorm", "res_add", NULL};
static const char *const gelu_ops[] = {"gelu", NULL};
static const char *const softmax_ops[] = {"softmax", "ScaledUpperTriangMaskedSoftmax", NULL};
static const char *const rope_ops[] = {"RoPE", NULL};

static const char *const gemm_names[] = {"m", "k", "n", "flops", "bytes"};
static const char *const batched_names[] = {"batch", "m", "k", "n", "flops", "bytes"};
static const char *const attention_names[] = {"b", "l", "heads", "head_dim", "flops", "bytes"};
static const char *const row_names[] = {"b", "l", "dim", "elements", "bytes"};
static const char *const gelu_names[] = {"tokens", "width", "elements", "bytes"};
static const char *const softmax_names[] = {"rows", "cols", "elements", "bytes"};
static const char *const rope_names[] = {"l", "b", "heads", "head_dim", "elements", "bytes"};

static const struct rule rules[] = {
	{linear_ops, 4, sample_cols_mp_b_l_dim, 5, gemm_names, map_linear},
	{batched_ops, 5, sample_cols_mp_b_h_l_dim, 6, batched_names, map_batched},
	{attention_ops, 5, sample_cols_mp_b_h_l_dim, 6, attention_names, map_attention},
	{row_ops, 3, sample_cols_b_l_dim, 5, row_names, map_rows},
	{gelu_ops, 4, sample_cols_mp_b_l_dim, 4, gelu_names, map_gelu},
	{softmax_ops, 4, sample_cols_mp_b_h_l, 4, softmax_names, map_softmax},
	{rope_ops, 5, sample_cols_mp_b_h_l_dim, 6, rope_names, map_rope},
};

static const struct rule *find_rule(const char *op)
{
	for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
		for (const char *const *o = rules[r].ops; *o; o++)
			if (!strcmp(*o, op))
				return &rules[r];
	return NULL;
}

static void join(const char *const *names, int n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
}

int sample_features_init(struct sample_features *f, const char *op, const char *const *cols,
			 int ncols, struct sp_err *err)
{
	memset(f, 0, sizeof *f);
	snprintf(f->op, sizeof f->op, "%s", op);
	if (ncols < 1 || ncols > SAMPLE_MAX_DIMS)
		return sp_fail(err, "%s: %d shape columns, expected 1 to %d", op, ncols,
			       SAMPLE_MAX_DIMS);
	const struct rule *r = find_rule(op);
	if (!r) { /* the generic rule: the columns and their product */
		f->n = ncols + 1;
		f->nbase = 1;
		for (int i = 0; i < ncols; i++)
			f->names[i] = cols[i];
		f->names[ncols] = "product";
		return 0;
	}
	int same = ncols == r->ncols;
	for (int i = 0; same && i < ncols; i++)
		same = !strcmp(cols[i], r->cols[i]);
	if (!same) {
		char want[128], have[128];
		join(r->cols, r->ncols, want, sizeof want);
		join(cols, ncols, have, sizeof have);
		return sp_fail(err, "%s takes the shape (%s), not (%s)", op, want, have);
	}
	f->rule = r;
	f->n = r->n;
	f->nbase = 2;
	for (int i = 0; i < r->n; i++)
		f->names[i] = r->names[i];
	return 0;
}

void sample_features_of(const struct sample_features *f, const int64_t *shape,
			enum sample_precision p, double *x)
{
	const struct rule *r = f->rule;
	if (r) {
		r->map(f->op, shape, p == SAMPLE_FP32 ? 4 : 2, x);
		return;
	}
	double prod = 1;
	for (int i = 0; i < f->n - 1; i++)
		prod *= (x[i] = (double)shape[i]);
	x[f->n - 1] = prod;
}
