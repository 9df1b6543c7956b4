/* The training loop on the CPU backend: the loss falls; the same seed
 * gives the same run bit for bit; a run stopped and resumed from its
 * checkpoint ends exactly as the uninterrupted run; a checkpoint refuses
 * other settings and a corrupt log; the log's rows. */
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

#include "gnn/gnn_train.h"
#include "gnnutil.h"
#include "formats/npz.h"

static const struct gnn_model_config cfg = {
	.conv = GNN_SAGE, .nonlinear = GNN_MAXK, .layers = 2, .hidden = 16, .maxk = 4,
	.norm = 1, .dropout = 0.3f, .seed = 11,
};

struct run {
	struct gnn_backend *b;
	struct gnn_model *m;
	struct gnn_trainer t;
	float *params;
};

static void start(struct run *r, const struct gnn_dataset *d, const struct gnn_model_config *c,
		  const struct gnn_train_opts *o)
{
	struct sp_err e;
	memset(r, 0, sizeof *r);
	assert_int_equal(gnn_cpu_backend(&r->b, &e), 0);
	if (gnn_model_create(r->b, d, c, &r->m, &e) || gnn_trainer_init(&r->t, r->m, d, o, &e))
		fail_msg("%s", e.msg);
}

static void finish(struct run *r)
{
	struct sp_err e;
	r->params = malloc((size_t)r->m->nparams * 3 * sizeof *r->params);
	size_t bytes = (size_t)r->m->nparams * sizeof *r->params;
	assert_int_equal(r->b->to_host(r->b, r->params, r->m->param, bytes, &e), 0);
	assert_int_equal(r->b->to_host(r->b, r->params + r->m->nparams, r->m->adam_m1, bytes, &e), 0);
	assert_int_equal(r->b->to_host(r->b, r->params + 2 * r->m->nparams, r->m->adam_m2, bytes,
				       &e), 0);
}

static void cleanup(struct run *r)
{
	free(r->params);
	gnn_trainer_free(&r->t);
	gnn_model_free(r->m);
	r->b->destroy(r->b);
}

static void assert_same_run(const struct run *a, const struct run *b)
{
	assert_int_equal(a->t.epoch, b->t.epoch);
	assert_int_equal(a->m->nparams, b->m->nparams);
	assert_memory_equal(a->params, b->params, (size_t)a->m->nparams * 3 * sizeof *a->params);
	for (int64_t i = 0; i < a->t.epoch; i++) {
		const struct gnn_epoch *x = &a->t.log[i], *y = &b->t.log[i];
		assert_int_equal(x->epoch, y->epoch);
		assert_memory_equal(&x->loss, &y->loss, 4 * sizeof x->loss); /* loss and scores */
	}
	assert_int_equal(a->t.best_epoch, b->t.best_epoch);
	assert_memory_equal(&a->t.best_test, &b->t.best_test, sizeof a->t.best_test);
}

static const struct gnn_train_opts opts = {
	.epochs = 12, .eval_every = 2, .checkpoint_every = 5, .lr = 0.01f,
	.weight_decay = 5e-4f, .metric = GNN_ACCURACY,
};

static void test_loss_falls_and_runs_repeat(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 60, 8, 3, 0, 21);
	struct run a, b;
	struct sp_err e;
	start(&a, &d, &cfg, &opts);
	start(&b, &d, &cfg, &opts);
	assert_int_equal(gnn_train_run(&a.t, NULL, &e), 0);
	assert_int_equal(gnn_train_run(&b.t, NULL, &e), 0);
	finish(&a);
	finish(&b);
	assert_same_run(&a, &b);
	assert_true(a.t.log[11].loss < 0.8 * a.t.log[0].loss);
	/* Scores only in evaluated epochs: every second one and the last. */
	assert_true(isnan(a.t.log[0].val) && !isnan(a.t.log[1].val) && !isnan(a.t.log[11].test));
	assert_true(a.t.best_epoch >= 2 && a.t.best_epoch % 2 == 0);
	assert_int_equal(a.t.logits_epoch, 12);
	cleanup(&a);
	cleanup(&b);
	gnn_data_free(&d);
}

static int stop_at_7(void *ctx)
{
	const struct run *r = ctx;
	return r->t.epoch == 7;
}

static void test_resume_equals_uninterrupted(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 60, 8, 3, 0, 22);
	char dir[] = "/tmp/test_gnn_train.XXXXXX", ck[64], log_a[64], log_b[64];
	assert_non_null(mkdtemp(dir));
	snprintf(ck, sizeof ck, "%s/ck.npz", dir);
	snprintf(log_a, sizeof log_a, "%s/a.csv", dir);
	snprintf(log_b, sizeof log_b, "%s/b.csv", dir);
	struct gnn_train_opts o = opts;
	o.log = log_a;
	struct run whole, first, second;
	struct sp_err e;
	start(&whole, &d, &cfg, &o);
	assert_int_equal(gnn_train_run(&whole.t, NULL, &e), 0);
	finish(&whole);

	o.checkpoint = ck;
	o.log = log_b;
	start(&first, &d, &cfg, &o);
	struct gnn_train_hooks h = {.ctx = &first, .stop = stop_at_7};
	assert_int_equal(gnn_train_run(&first.t, &h, &e), 1);
	assert_int_equal(first.t.epoch, 7);
	cleanup(&first);

	start(&second, &d, &cfg, &o);
	if (gnn_trainer_resume(&second.t, ck, &e))
		fail_msg("resume: %s", e.msg);
	assert_int_equal(second.t.epoch, 7);
	assert_int_equal(gnn_train_run(&second.t, NULL, &e), 0);
	finish(&second);
	assert_same_run(&whole, &second);

	/* The logs agree but for the times; epoch 1 had no evaluation. */
	FILE *fa = fopen(log_a, "r"), *fb = fopen(log_b, "r");
	char la[256], lb[256];
	int lines = 0;
	while (fgets(la, sizeof la, fa)) {
		assert_non_null(fgets(lb, sizeof lb, fb));
		if (lines++ == 0) {
			assert_string_equal(la, "epoch,loss,train,val,test,forward_ms,"
					    "backward_ms,epoch_ms\n");
			continue;
		}
		if (lines == 2)
			assert_non_null(strstr(la, ",,,,"));
		*strrchr(la, ',') = *strrchr(lb, ',') = 0;
		*strrchr(la, ',') = *strrchr(lb, ',') = 0;
		*strrchr(la, ',') = *strrchr(lb, ',') = 0;
		assert_string_equal(la, lb);
	}
	assert_null(fgets(lb, sizeof lb, fb));
	assert_int_equal(lines, 13);
	fclose(fa);
	fclose(fb);
	cleanup(&whole);
	cleanup(&second);
	unlink(ck);
	unlink(log_a);
	unlink(log_b);
	rmdir(dir);
	gnn_data_free(&d);
}

/* Rewrites the checkpoint at path with row 0 of its log saying `epoch`. */
static void set_log_epoch(const char *path, double epoch)
{
	static const char *const names[] = {"state", "config", "best", "params", "adam_m1",
					     "adam_m2", "log"};
	struct npy_array a[7];
	struct npz z;
	struct npz_writer w;
	struct sp_err e;
	assert_int_equal(npz_open(&z, path, &e), 0);
	for (int i = 0; i < 7; i++)
		assert_int_equal(npz_read(&z, names[i], &a[i], &e), 0);
	npz_close(&z);
	((double *)a[6].data)[0] = epoch;
	assert_int_equal(npz_writer_open(&w, path, 0, &e), 0);
	for (int i = 0; i < 7; i++) {
		assert_int_equal(npz_writer_add(&w, names[i], &a[i], &e), 0);
		npy_free(&a[i]);
	}
	assert_int_equal(npz_writer_commit(&w, &e), 0);
}

static void test_resume_refuses_other_settings(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 40, 8, 3, 0, 23);
	char path[] = "/tmp/test_gnn_train_ck.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct gnn_train_opts o = opts;
	o.epochs = 3;
	o.checkpoint = path;
	struct run a, b;
	struct sp_err e;
	start(&a, &d, &cfg, &o);
	assert_int_equal(gnn_train_run(&a.t, NULL, &e), 0);
	cleanup(&a);

	struct gnn_model_config c = cfg;
	c.hidden = 20;
	start(&b, &d, &c, &o);
	assert_int_equal(gnn_trainer_resume(&b.t, path, &e), -1);
	assert_non_null(strstr(e.msg, "made with hidden 16, this run has 20"));
	cleanup(&b);

	o.lr = 0.02f;
	start(&b, &d, &cfg, &o);
	assert_int_equal(gnn_trainer_resume(&b.t, path, &e), -1);
	assert_non_null(strstr(e.msg, "made with lr 0.01, this run has 0.02"));
	cleanup(&b);

	o = opts;
	o.epochs = 2;
	start(&b, &d, &cfg, &o);
	assert_int_equal(gnn_trainer_resume(&b.t, path, &e), -1);
	assert_non_null(strstr(e.msg, "at epoch 3, past the 2 epochs"));
	cleanup(&b);

	/* A resumed finished run has nothing left to do. */
	o.epochs = 3;
	start(&b, &d, &cfg, &o);
	assert_int_equal(gnn_trainer_resume(&b.t, path, &e), 0);
	assert_int_equal(gnn_train_run(&b.t, NULL, &e), 0);
	assert_int_equal(b.t.epoch, 3);
	cleanup(&b);

	/* Seen reading the code, then confirmed with fuzz_checkpoint: a log
	 * row's epoch was converted to an integer unchecked (1e300: undefined
	 * behaviour). */
	set_log_epoch(path, 1e300);
	start(&b, &d, &cfg, &o);
	assert_int_equal(gnn_trainer_resume(&b.t, path, &e), -1);
	assert_non_null(strstr(e.msg, ": member 'log': row 0 holds epoch 1e+300, expected 1"));
	cleanup(&b);
	unlink(path);
	gnn_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_falls_and_runs_repeat),
		cmocka_unit_test(test_resume_equals_uninterrupted),
		cmocka_unit_test(test_resume_refuses_other_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
