/* The GNN models on the CPU backend: every parameter's gradient against
 * central finite differences of the whole model's loss, for SAGE, GCN and
 * GIN with ReLU and MaxK, with and without LayerNorm and dropout, the MaxK
 * kernels and the dense aggregation, the MLP-like baseline, both losses;
 * the two aggregation paths agree; the same seed gives the same model;
 * kernel validation; saved parameter names and shapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gnn/gnn_model.h"
#include "gnnutil.h"
#include "formats/npz.h"
#include "core/rng.h"

static struct gnn_backend *cpu(void)
{
	struct gnn_backend *b;
	struct sp_err e;
	assert_int_equal(gnn_cpu_backend(&b, &e), 0);
	return b;
}

static struct gnn_model *build(struct gnn_backend *b, const struct gnn_dataset *d,
			       const struct gnn_model_config *cfg)
{
	struct gnn_model *m;
	struct sp_err e;
	if (gnn_model_create(b, d, cfg, &m, &e))
		fail_msg("gnn_model_create: %s", e.msg);
	return m;
}

static float *download(struct gnn_model *m, const float *p)
{
	struct sp_err e;
	float *h = malloc((size_t)m->nparams * sizeof *h);
	assert_int_equal(m->b->to_host(m->b, h, p, (size_t)m->nparams * sizeof *h, &e), 0);
	return h;
}

/* The training loss at the given parameters (epoch 1's dropout masks). */
static double loss_at(struct gnn_model *m, const float *params)
{
	struct sp_err e;
	float loss;
	assert_int_equal(m->b->to_device(m->b, m->param, params,
					 (size_t)m->nparams * sizeof *params, &e), 0);
	if (gnn_model_forward(m, 1, 1, &e) || gnn_model_loss(m, &e) ||
	    m->b->to_host(m->b, &loss, m->loss, sizeof loss, &e))
		fail_msg("forward: %s", e.msg);
	return loss;
}

/* Finite differences at a few entries of every tensor. A kink (ReLU at 0,
 * MaxK's top-k set changing) shows as differences that disagree between
 * step h and h/2; such samples are skipped, and must stay few. */
static void check_gradients(const struct gnn_dataset *d, const struct gnn_model_config *cfg)
{
	struct gnn_backend *b = cpu();
	struct gnn_model *m = build(b, d, cfg);
	struct sp_err e;
	float *p = download(m, m->param);
	double base = loss_at(m, p);
	if (gnn_model_backward(m, &e))
		fail_msg("backward: %s", e.msg);
	float *g = download(m, m->grad);
	struct rng r;
	rng_init(&r, 99, 0);
	int checked = 0, skipped = 0;
	for (int t = 0; t < m->nparam_tensors; t++) {
		const struct gnn_param *pt = &m->params[t];
		int64_t count = pt->rows * pt->cols;
		for (int s = 0; s < 4 && s < count; s++) {
			int64_t at = pt->offset + (int64_t)rng_below(&r, (uint64_t)count);
			float keep = p[at];
			double fd[2];
			for (int half = 0; half < 2; half++) {
				double h = half ? 5e-4 : 1e-3;
				p[at] = keep + (float)h;
				double up = loss_at(m, p);
				p[at] = keep - (float)h;
				double down = loss_at(m, p);
				p[at] = keep;
				fd[half] = (up - down) / (2 * h);
			}
			double an = g[at], tol = 2e-3 + 3e-2 * fabs(an);
			if (fabs(fd[0] - fd[1]) > tol) {
				skipped++;
				continue;
			}
			if (fabs(fd[0] - an) > tol)
				fail_msg("%s[%lld]: finite difference %.6g, backward %.6g (loss %.6g)",
					 pt->name, (long long)(at - pt->offset), fd[0], an, base);
			checked++;
		}
	}
	if (skipped * 5 > checked)
		fail_msg("%d samples checked, %d skipped at kinks", checked, skipped);
	free(p);
	free(g);
	gnn_model_free(m);
	b->destroy(b);
}

static const struct gnn_model_config base_cfg = {
	.conv = GNN_SAGE, .nonlinear = GNN_RELU, .layers = 2, .hidden = 12, .maxk = 4,
	.dropout = 0, .seed = 7,
};

static void test_gradients_all_models(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 30, 6, 3, 0, 1);
	for (int conv = GNN_SAGE; conv <= GNN_GIN; conv++) {
		for (int nl = GNN_RELU; nl <= GNN_MAXK; nl++) {
			for (int norm = 0; norm < 2; norm++) {
				struct gnn_model_config c = base_cfg;
				c.conv = conv;
				c.nonlinear = nl;
				c.norm = norm;
				check_gradients(&d, &c);
			}
		}
	}
	gnn_data_free(&d);
}

/* Dropout (its masks fixed by the epoch), the dense aggregation of MaxK
 * output, three layers. */
static void test_gradients_dropout_and_dense(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 30, 6, 3, 0, 2);
	for (int conv = GNN_SAGE; conv <= GNN_GIN; conv++) {
		for (int dense = 0; dense < 2; dense++) {
			struct gnn_model_config c = base_cfg;
			c.conv = conv;
			c.nonlinear = GNN_MAXK;
			c.dense_agg = dense;
			c.dropout = 0.3f;
			c.layers = 3;
			check_gradients(&d, &c);
		}
		struct gnn_model_config c = base_cfg;
		c.conv = conv;
		c.dropout = 0.5f;
		c.norm = 1;
		check_gradients(&d, &c);
	}
	gnn_data_free(&d);
}

static void test_gradients_baseline_and_bce(void **state)
{
	struct gnn_dataset d, ml;
	gu_dataset(&d, 30, 6, 3, 0, 3);
	gu_dataset(&ml, 30, 6, 4, 1, 4);
	for (int nl = GNN_RELU; nl <= GNN_MAXK; nl++) {
		struct gnn_model_config c = base_cfg;
		c.nonlinear = nl;
		c.layers = 0;
		c.dropout = 0.2f;
		check_gradients(&d, &c);
		c.layers = 1;
		c.conv = GNN_GIN;
		check_gradients(&ml, &c);
	}
	gnn_data_free(&d);
	gnn_data_free(&ml);
}

static void forward_logits(struct gnn_model *m, int train, float *out)
{
	struct sp_err e;
	if (gnn_model_forward(m, train, 3, &e))
		fail_msg("forward: %s", e.msg);
	size_t bytes = (size_t)(m->n * m->nclass) * sizeof *out;
	assert_int_equal(m->b->to_host(m->b, out, m->logits, bytes, &e), 0);
}

/* The MaxK kernels and the dense aggregation give the same logits and
 * gradients up to rounding; two models from one seed are identical. */
static void test_aggregation_paths_agree(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 40, 5, 3, 0, 5);
	struct gnn_backend *b = cpu();
	for (int conv = GNN_SAGE; conv <= GNN_GIN; conv++) {
		struct gnn_model_config c = base_cfg;
		c.conv = conv;
		c.nonlinear = GNN_MAXK;
		c.dropout = 0.4f;
		struct gnn_model *a = build(b, &d, &c), *same = build(b, &d, &c);
		c.dense_agg = 1;
		struct gnn_model *dense = build(b, &d, &c);
		size_t n = (size_t)(d.n * d.nclass);
		float *la = malloc(n * sizeof *la), *ls = malloc(n * sizeof *ls),
		      *ld = malloc(n * sizeof *ld);
		forward_logits(a, 1, la);
		forward_logits(same, 1, ls);
		forward_logits(dense, 1, ld);
		assert_memory_equal(la, ls, n * sizeof *la);
		for (size_t i = 0; i < n; i++)
			assert_true(fabsf(la[i] - ld[i]) <= 1e-5f * (1 + fabsf(ld[i])));
		struct sp_err e;
		assert_int_equal(gnn_model_loss(a, &e) || gnn_model_backward(a, &e), 0);
		assert_int_equal(gnn_model_loss(dense, &e) || gnn_model_backward(dense, &e), 0);
		float *ga = download(a, a->grad), *gd = download(dense, dense->grad);
		for (int64_t i = 0; i < a->nparams; i++)
			assert_true(fabsf(ga[i] - gd[i]) <= 1e-4f * (1 + fabsf(gd[i])));
		/* Evaluation has no dropout: two calls agree, and differ from training. */
		forward_logits(a, 0, ls);
		forward_logits(a, 0, ld);
		assert_memory_equal(ls, ld, n * sizeof *ls);
		assert_memory_not_equal(la, ls, n * sizeof *la);
		free(ga);
		free(gd);
		free(la);
		free(ls);
		free(ld);
		gnn_model_free(a);
		gnn_model_free(same);
		gnn_model_free(dense);
	}
	b->destroy(b);
	gnn_data_free(&d);
}

static void test_validate(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 40, 5, 3, 0, 6);
	struct gnn_backend *b = cpu();
	struct gnn_model_config c = base_cfg;
	c.nonlinear = GNN_MAXK;
	struct gnn_model *m = build(b, &d, &c);
	double err_max = -1;
	struct sp_err e;
	assert_int_equal(gnn_model_validate(m, &err_max, &e), 0);
	assert_true(err_max >= 0 && err_max < 1e-6);
	gnn_model_free(m);
	c.nonlinear = GNN_RELU;
	m = build(b, &d, &c);
	assert_int_equal(gnn_model_validate(m, &err_max, &e), -1);
	assert_non_null(strstr(e.msg, "MaxK"));
	gnn_model_free(m);
	b->destroy(b);
	gnn_data_free(&d);
}

static void test_bad_config(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 20, 5, 3, 0, 7);
	struct gnn_backend *b = cpu();
	struct gnn_model *m;
	struct sp_err e;
	struct gnn_model_config c = base_cfg;
	c.nonlinear = GNN_MAXK;
	c.maxk = 13;
	assert_int_equal(gnn_model_create(b, &d, &c, &m, &e), -1);
	assert_non_null(strstr(e.msg, "k = 13"));
	assert_null(m);
	c = base_cfg;
	c.dropout = 1;
	assert_int_equal(gnn_model_create(b, &d, &c, &m, &e), -1);
	assert_non_null(strstr(e.msg, "dropout"));
	b->destroy(b);
	gnn_data_free(&d);
}

/* The saved .npz holds PyTorch's names and shapes, and the initial values
 * follow the documented distributions. */
static void test_save_names_and_init(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 20, 5, 3, 0, 8);
	struct gnn_backend *b = cpu();
	struct gnn_model_config c = base_cfg;
	c.conv = GNN_GIN;
	c.norm = 1;
	c.hidden = 64;
	struct gnn_model *m = build(b, &d, &c);
	char path[] = "/tmp/test_gnn_model.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	struct sp_err e;
	assert_int_equal(gnn_model_save(m, path, &e), 0);
	struct npz z;
	assert_int_equal(npz_open(&z, path, &e), 0);
	static const struct {
		const char *name;
		int ndim;
		int64_t d0, d1;
		double lo, hi; /* bounds of the initial values */
	} want[] = {
		{"lin_in.weight", 2, 64, 5, -0.2949, 0.2949},   /* Glorot: sqrt(6 / 69) */
		{"lin_in.bias", 1, 64, 0, -0.4473, 0.4473},     /* 1 / sqrt(5) */
		{"layers.1.eps", 1, 1, 0, 0, 0},
		{"layers.1.apply_func.weight", 2, 64, 64, -0.125, 0.125},
		{"layers.0.apply_func.bias", 1, 64, 0, -0.125, 0.125},
		{"norms.0.weight", 1, 64, 0, 1, 1},
		{"norms.1.bias", 1, 64, 0, 0, 0},
		{"lin_out.weight", 2, 3, 64, -0.2993, 0.2993},  /* sqrt(6 / 67) */
		{"lin_out.bias", 1, 3, 0, -0.125, 0.125},
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		struct npy_array a;
		if (npz_read(&z, want[i].name, &a, &e))
			fail_msg("%s", e.msg);
		assert_int_equal(a.dtype, NPY_F4);
		assert_int_equal(a.ndim, want[i].ndim);
		assert_int_equal(a.shape[0], want[i].d0);
		if (a.ndim == 2)
			assert_int_equal(a.shape[1], want[i].d1);
		const float *v = a.data;
		double lo = 1e30, hi = -1e30;
		for (int64_t j = 0; j < npy_count(&a); j++) {
			lo = v[j] < lo ? v[j] : lo;
			hi = v[j] > hi ? v[j] : hi;
		}
		if (lo < want[i].lo - 1e-6 || hi > want[i].hi + 1e-6)
			fail_msg("%s: values in [%g, %g]", want[i].name, lo, hi);
		/* Spread over most of the range when random. */
		if (want[i].hi > want[i].lo && npy_count(&a) >= 64)
			assert_true(hi - lo > 1.5 * want[i].hi);
		npy_free(&a);
	}
	assert_int_equal(gnn_model_find_param(m, "layers.2.eps"), -1);
	assert_true(gnn_model_find_param(m, "layers.1.eps") >= 0);
	npz_close(&z);
	close(fd);
	unlink(path);
	gnn_model_free(m);
	b->destroy(b);
	gnn_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gradients_all_models),
		cmocka_unit_test(test_gradients_dropout_and_dense),
		cmocka_unit_test(test_gradients_baseline_and_bce),
		cmocka_unit_test(test_aggregation_paths_agree),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_save_names_and_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
