/* Training on the GPU backend against the same training on the CPU
 * backend (the same model code, lib/gnn/gnn_model.c, over both): 20 epochs
 * with dropout on a 2,000-node contextual SBM, for SAGE, GCN and GIN with
 * ReLU and MaxK (SAGE and GIN with LayerNorm), and MaxK's output aggregated densely
 * (--kernel-mode cusparse). How closely they must agree: see check(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/gnn_train.h"
#include "core/gpu.h"

enum { EPOCHS = 20 };

static struct gnn_dataset data;

static int setup(void **state)
{
	struct sp_err e;
	if (gnn_data_synthetic("csbm:nodes=2000,classes=5,feat=50,deg=12", &data, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	gnn_data_free(&data);
	return 0;
}

struct run {
	struct gnn_backend *b;
	struct gnn_model *m;
	struct gnn_trainer t;
};

static void run_open(struct run *r, int gpu, const struct gnn_model_config *c)
{
	struct sp_err e;
	const struct gnn_train_opts o = {.epochs = EPOCHS, .eval_every = 5, .checkpoint_every = 10,
					 .lr = 0.005f, .metric = GNN_ACCURACY};
	if ((gpu ? gnn_cuda_backend(&r->b, &e) : gnn_cpu_backend(&r->b, &e)) ||
	    gnn_model_create(r->b, &data, c, &r->m, &e) ||
	    gnn_trainer_init(&r->t, r->m, &data, &o, &e))
		fail_msg("%s: %s", gpu ? "cuda" : "cpu", e.msg);
}

static void run_close(struct run *r)
{
	gnn_trainer_free(&r->t);
	gnn_model_free(r->m);
	r->b->destroy(r->b);
}

/* The weights and Adam's moments of `from` copied into `to`. */
static void copy_state(const struct run *from, struct run *to)
{
	struct sp_err e;
	const size_t bytes = (size_t)from->m->nparams * sizeof(float);
	float *h = malloc(bytes);
	float *const src[] = {from->m->param, from->m->adam_m1, from->m->adam_m2};
	float *const dst[] = {to->m->param, to->m->adam_m1, to->m->adam_m2};
	for (int i = 0; i < 3; i++)
		if (from->b->to_host(from->b, h, src[i], bytes, &e) ||
		    to->b->to_device(to->b, dst[i], h, bytes, &e))
			fail_msg("copying the state: %s", e.msg);
	free(h);
}

/* Trains on both backends in step, epoch by epoch, and compares each
 * epoch's loss. With ReLU the two run free: they differ by rounding alone
 * (the dropout masks are the same), the first epoch's losses within 1e-4
 * and every later one within 1e-3. MaxK is discontinuous: a rounding
 * difference flips which of two nearly equal entries is kept, the flips
 * compound over the epochs (and on the GPU the backward's atomic adds
 * make the order of a sum vary from run to run), so free-running curves
 * drift apart by a few percent, more or less from one run to the next.
 * So each MaxK epoch starts the GPU from the CPU's weights and moments, and
 * every one of the 20 epochs (forward, backward, Adam) must then give the
 * CPU's loss within 1e-4 on the CPU's trajectory. The best validation
 * scores agree within 2 points. */
static void check(const struct gnn_model_config *c)
{
	struct run cpu, gpu;
	struct sp_err e;
	const int forced = c->nonlinear == GNN_MAXK;
	double worst = 0;
	run_open(&cpu, 0, c);
	run_open(&gpu, 1, c);
	for (int i = 0; i < EPOCHS; i++) {
		if (forced)
			copy_state(&cpu, &gpu);
		if (gnn_trainer_epoch(&cpu.t, &e) || gnn_trainer_epoch(&gpu.t, &e))
			fail_msg("epoch %d: %s", i + 1, e.msg);
		const double l0 = cpu.t.log[i].loss, l1 = gpu.t.log[i].loss;
		const double dev = fabs(l0 - l1) / fabs(l0);
		worst = dev > worst || dev != dev ? dev : worst;
		if (!(dev <= (i == 0 || forced ? 1e-4 : 1e-3)))
			fail_msg("conv %d nonlinear %d norm %d dense %d, epoch %d: loss %.7g on the "
				 "CPU, %.7g on the GPU", c->conv, c->nonlinear, c->norm, c->dense_agg,
				 i + 1, l0, l1);
	}
	if (!(fabs(cpu.t.best_val - gpu.t.best_val) <= 0.02))
		fail_msg("best validation accuracy %.4f on the CPU, %.4f on the GPU",
			 cpu.t.best_val, gpu.t.best_val);
	print_message("conv %d nonlinear %d norm %d dense %d%s: loss %.5f -> %.5f (worst relative "
		      "deviation %.1e), val %.4f / %.4f\n", c->conv, c->nonlinear, c->norm,
		      c->dense_agg, forced ? " (in step)" : "", gpu.t.log[0].loss,
		      gpu.t.log[EPOCHS - 1].loss, worst, cpu.t.best_val, gpu.t.best_val);
	run_close(&cpu);
	run_close(&gpu);
}

static void test_loss_curves_match(void **state)
{
	if (gpu_count() == 0)
		skip();
	for (int conv = GNN_SAGE; conv <= GNN_GIN; conv++) {
		for (int nl = GNN_RELU; nl <= GNN_MAXK; nl++) {
			struct gnn_model_config c = {.conv = conv, .nonlinear = nl, .layers = 2,
						     .hidden = 128, .maxk = 16, .dropout = 0.5f,
						     .seed = 3, .norm = conv != GNN_GCN};
			check(&c);
		}
	}
	struct gnn_model_config c = {.conv = GNN_SAGE, .nonlinear = GNN_MAXK, .layers = 3,
				     .hidden = 256, .maxk = 32, .dropout = 0.5f, .seed = 4,
				     .dense_agg = 1};
	check(&c);
	c.layers = 0;
	check(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_curves_match),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
