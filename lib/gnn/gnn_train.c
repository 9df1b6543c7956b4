#include "gnn/gnn_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "formats/csv_writer.h"
#include "formats/npz.h"
#include "core/timer.h"

#define CHECKPOINT_VERSION 1
enum { LOG_COLS = 8 };

int gnn_trainer_init(struct gnn_trainer *t, struct gnn_model *m, const struct gnn_dataset *d,
		     const struct gnn_train_opts *o, struct sp_err *err)
{
	memset(t, 0, sizeof *t);
	t->m = m;
	t->d = d;
	t->o = *o;
	t->logits_epoch = -1;
	t->best_train = t->best_val = t->best_test = NAN;
	if (o->epochs < 1 || o->eval_every < 1 || o->checkpoint_every < 1)
		return sp_fail(err, "epochs, evaluation and checkpoint intervals must be positive");
	t->logits = malloc((size_t)d->n * (size_t)d->nclass * sizeof *t->logits);
	if (!t->logits)
		return sp_fail(err, "out of memory for the logits (%lld x %d)", (long long)d->n,
			       d->nclass);
	return 0;
}

void gnn_trainer_free(struct gnn_trainer *t)
{
	free(t->log);
	free(t->logits);
	memset(t, 0, sizeof *t);
}

static int evaluate_at(struct gnn_trainer *t, int64_t epoch, double *scores, struct sp_err *err)
{
	struct gnn_model *m = t->m;
	if (gnn_model_forward(m, 0, (uint64_t)epoch, err) || gnn_model_logits(m, t->logits, err))
		return -1;
	t->logits_epoch = epoch;
	for (int s = 0; s < 3; s++)
		if (gnn_metric_eval(t->o.metric, t->d, t->logits, GNN_TRAIN + s, &scores[s], err))
			return -1;
	return 0;
}

int gnn_trainer_evaluate(struct gnn_trainer *t, double *train, double *val, double *test,
			 struct sp_err *err)
{
	double s[3];
	if (evaluate_at(t, t->epoch, s, err))
		return -1;
	*train = s[0];
	*val = s[1];
	*test = s[2];
	return 0;
}

static int log_reserve(struct gnn_trainer *t, size_t rows, struct sp_err *err)
{
	struct gnn_epoch *grown = buf_grow_array(t->log, &t->cap_log, rows, sizeof *grown);
	if (!grown)
		return sp_fail(err, "out of memory for the training log");
	t->log = grown;
	return 0;
}

/* NVTX ranges (the backend's; none on the CPU) named after the phase:
 * `nsys profile` shows each epoch's forward (with the loss), backward,
 * step and evaluation inside the epoch's range, and `ncu --nvtx
 * --nvtx-include forward/` profiles one phase's kernels. range_pop passes
 * the phase's result through, so a failed phase pops its range too. */
static void range_push(struct gnn_backend *b, const char *name)
{
	if (b->range_push)
		b->range_push(name);
}

static int range_pop(struct gnn_backend *b, int rc)
{
	if (b->range_pop)
		b->range_pop();
	return rc;
}

static int epoch_body(struct gnn_trainer *t, struct sp_err *err)
{
	struct gnn_model *m = t->m;
	struct gnn_backend *b = m->b;
	int64_t e = t->epoch + 1;
	float loss;
	if (log_reserve(t, (size_t)e, err) || gnn_model_sync(m, err))
		return -1;
	double t0 = timer_now();
	range_push(b, "forward");
	if (range_pop(b, gnn_model_forward(m, 1, (uint64_t)e, err) || gnn_model_loss(m, err) ||
				 gnn_model_sync(m, err) ||
				 b->to_host(b, &loss, m->loss, sizeof loss, err)))
		return -1;
	double t1 = timer_now();
	if (!isfinite(loss))
		return sp_fail(err, "epoch %lld: the training loss is %g: training diverged (a "
			       "smaller learning rate may help)", (long long)e, loss);
	range_push(b, "backward");
	if (range_pop(b, gnn_model_backward(m, err) || gnn_model_sync(m, err)))
		return -1;
	double t2 = timer_now();
	range_push(b, "step");
	if (range_pop(b, gnn_model_adam(m, t->o.lr, t->o.weight_decay, e, err) ||
			 gnn_model_sync(m, err)))
		return -1;
	double t3 = timer_now();
	struct gnn_epoch row = {e, loss, NAN, NAN, NAN, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
				(t3 - t0) * 1e3};
	if (e % t->o.eval_every == 0 || e == t->o.epochs) {
		double s[3];
		range_push(b, "evaluate");
		if (range_pop(b, evaluate_at(t, e, s, err)))
			return -1;
		row.train = s[0];
		row.val = s[1];
		row.test = s[2];
		if (t->best_epoch == 0 || row.val > t->best_val ||
		    (isnan(t->best_val) && !isnan(row.val))) {
			t->best_epoch = e;
			t->best_train = row.train;
			t->best_val = row.val;
			t->best_test = row.test;
		}
	}
	t->log[t->epoch++] = row;
	return 0;
}

int gnn_trainer_epoch(struct gnn_trainer *t, struct sp_err *err)
{
	range_push(t->m->b, "epoch");
	return range_pop(t->m->b, epoch_body(t, err));
}

void gnn_trainer_mean_times(const struct gnn_trainer *t, double *forward, double *backward,
			    double *epoch)
{
	size_t first = t->epoch > 1, count = (size_t)t->epoch - first;
	*forward = *backward = *epoch = 0;
	for (size_t i = first; i < (size_t)t->epoch; i++) {
		*forward += t->log[i].forward_ms / (double)count;
		*backward += t->log[i].backward_ms / (double)count;
		*epoch += t->log[i].epoch_ms / (double)count;
	}
}

static void csv_score(struct csv_writer *w, double v)
{
	if (isnan(v))
		csv_writer_str(w, "");
	else
		csv_writer_double(w, v, 0);
}

static const char *const log_columns[LOG_COLS] = {"epoch", "loss", "train", "val", "test",
						 "forward_ms", "backward_ms", "epoch_ms"};

static int log_row(struct csv_writer *w, const struct gnn_epoch *r, struct sp_err *err)
{
	csv_writer_int(w, r->epoch);
	csv_writer_double(w, r->loss, 0);
	csv_score(w, r->train);
	csv_score(w, r->val);
	csv_score(w, r->test);
	csv_writer_double(w, r->forward_ms, 6);
	csv_writer_double(w, r->backward_ms, 6);
	csv_writer_double(w, r->epoch_ms, 6);
	return csv_writer_end_row(w, err);
}

int gnn_trainer_log_open(const struct gnn_trainer *t, struct csv_writer *w, struct sp_err *err)
{
	if (csv_writer_open_stream(w, t->o.log, log_columns, LOG_COLS, err))
		return -1;
	for (int64_t i = 0; i < t->epoch; i++)
		if (log_row(w, &t->log[i], err)) {
			csv_writer_abort(w);
			return -1;
		}
	return 0;
}

int gnn_trainer_write_log(const struct gnn_trainer *t, const char *path, struct sp_err *err)
{
	struct csv_writer w;
	if (csv_writer_open(&w, path, log_columns, LOG_COLS, err))
		return -1;
	for (int64_t i = 0; i < t->epoch; i++)
		if (log_row(&w, &t->log[i], err)) {
			csv_writer_abort(&w);
			return -1;
		}
	return csv_writer_commit(&w, err);
}

/* The settings a checkpoint must agree on, as int64 (floats by their
 * bits), and how to show them. */
enum setting_kind { SET_INT, SET_FLOAT, SET_CONV, SET_NONLINEAR, SET_METRIC };
static const struct {
	const char *name;
	enum setting_kind kind;
} settings[] = {
	{"model", SET_CONV},        {"nonlinear", SET_NONLINEAR}, {"layers", SET_INT},
	{"hidden", SET_INT},        {"maxk", SET_INT},            {"norm", SET_INT},
	{"nodes", SET_INT},         {"edges", SET_INT},           {"features", SET_INT},
	{"classes", SET_INT},       {"multi-label", SET_INT},     {"seed", SET_INT},
	{"dropout", SET_FLOAT},     {"lr", SET_FLOAT},            {"weight-decay", SET_FLOAT},
	{"metric", SET_METRIC},     {"eval-every", SET_INT},
};
enum { NSETTINGS = sizeof settings / sizeof *settings };

static int64_t float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static void collect_settings(const struct gnn_trainer *t, int64_t *v)
{
	const struct gnn_model_config *c = &t->m->cfg;
	const int64_t values[NSETTINGS] = {
		c->conv, c->nonlinear, c->layers, c->hidden, c->maxk, c->norm, t->d->n,
		t->d->graph.nnz, t->d->nfeat, t->d->nclass, t->d->multilabel, (int64_t)c->seed,
		float_bits(c->dropout), float_bits(t->o.lr), float_bits(t->o.weight_decay),
		t->o.metric, t->o.eval_every,
	};
	memcpy(v, values, sizeof values);
}

/* names[v], where v indexes the NULL-terminated names; else NULL. */
static const char *name_at(const char *const *names, int64_t v)
{
	for (int64_t i = 0; names[i]; i++)
		if (i == v)
			return names[i];
	return NULL;
}

static const char *show_setting(int i, int64_t v, char *buf, size_t size)
{
	const char *name = NULL;
	switch (settings[i].kind) {
	case SET_INT: snprintf(buf, size, "%lld", (long long)v); return buf;
	case SET_FLOAT: {
		uint32_t u = (uint32_t)v;
		float f;
		memcpy(&f, &u, sizeof f);
		snprintf(buf, size, "%g", f);
		return buf;
	}
	case SET_CONV: name = name_at(gnn_conv_names, v); break;
	case SET_NONLINEAR: name = name_at(gnn_nonlinear_names, v); break;
	case SET_METRIC: name = name_at(gnn_metric_names, v); break;
	}
	snprintf(buf, size, "%s", name ? name : "?");
	return buf;
}

struct ck_arrays {
	int64_t state[4]; /* version, epoch, best epoch, parameter floats */
	int64_t config[NSETTINGS];
	double best[3];   /* train, val, test at the best epoch */
	float *params, *m1, *m2;
	double *log;      /* epoch x LOG_COLS */
};

int gnn_trainer_checkpoint(const struct gnn_trainer *t, const char *path, struct sp_err *err)
{
	const struct gnn_model *m = t->m;
	struct gnn_backend *b = m->b;
	size_t P = (size_t)m->nparams;
	struct ck_arrays a = {.state = {CHECKPOINT_VERSION, t->epoch, t->best_epoch, m->nparams},
			      .best = {t->best_train, t->best_val, t->best_test}};
	collect_settings(t, a.config);
	a.params = malloc(3 * P * sizeof(float));
	a.log = malloc(((size_t)t->epoch + 1) * LOG_COLS * sizeof(double));
	int rc = -1;
	if (!a.params || !a.log) {
		sp_fail(err, "out of memory for a checkpoint");
		goto done;
	}
	a.m1 = a.params + P;
	a.m2 = a.m1 + P;
	for (int64_t i = 0; i < t->epoch; i++) {
		const struct gnn_epoch *r = &t->log[i];
		const double row[LOG_COLS] = {(double)r->epoch, r->loss, r->train, r->val, r->test,
					      r->forward_ms, r->backward_ms, r->epoch_ms};
		memcpy(a.log + i * LOG_COLS, row, sizeof row);
	}
	if (b->to_host(b, a.params, m->param, P * sizeof(float), err) ||
	    b->to_host(b, a.m1, m->adam_m1, P * sizeof(float), err) ||
	    b->to_host(b, a.m2, m->adam_m2, P * sizeof(float), err))
		goto done;
	const struct npy_array arrays[] = {
		{NPY_I8, 8, 1, {4}, a.state},
		{NPY_I8, 8, 1, {NSETTINGS}, a.config},
		{NPY_F8, 8, 1, {3}, a.best},
		{NPY_F4, 4, 1, {(int64_t)P}, a.params},
		{NPY_F4, 4, 1, {(int64_t)P}, a.m1},
		{NPY_F4, 4, 1, {(int64_t)P}, a.m2},
		{NPY_F8, 8, 2, {t->epoch, LOG_COLS}, a.log},
	};
	static const char *const names[] = {"state", "config", "best", "params", "adam_m1",
					     "adam_m2", "log"};
	struct npz_writer w;
	if (npz_writer_open(&w, path, 0, err))
		goto done;
	for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
		if (npz_writer_add(&w, names[i], &arrays[i], err)) {
			npz_writer_abort(&w);
			goto done;
		}
	}
	rc = npz_writer_commit(&w, err);
done:
	free(a.params);
	free(a.log);
	return rc;
}

/* Member `name` of dtype dt and shape (d0) or (d0, d1) into dst. */
static int read_member(struct npz *z, const char *path, const char *name, enum npy_dtype dt,
		       int ndim, int64_t d0, int64_t d1, void *dst, struct sp_err *err)
{
	struct npy_array arr;
	if (!npz_has(z, name))
		return sp_fail(err, "%s: not a maxk-train checkpoint: no member '%s'", path, name);
	if (npz_read(z, name, &arr, err))
		return -1;
	int ok = arr.dtype == dt && arr.ndim == ndim && arr.shape[0] == d0 &&
		 (ndim == 1 || arr.shape[1] == d1);
	if (ok)
		memcpy(dst, arr.data, npy_nbytes(&arr));
	npy_free(&arr);
	if (ok)
		return 0;
	if (ndim == 1)
		return sp_fail(err, "%s: member '%s': expected %s of shape (%lld,)", path, name,
			       npy_dtype_name(dt), (long long)d0);
	return sp_fail(err, "%s: member '%s': expected %s of shape (%lld, %lld)", path, name,
		       npy_dtype_name(dt), (long long)d0, (long long)d1);
}

static int check_settings(const struct gnn_trainer *t, const char *path, const int64_t *have,
			  struct sp_err *err)
{
	int64_t want[NSETTINGS];
	collect_settings(t, want);
	for (int i = 0; i < NSETTINGS; i++) {
		if (have[i] == want[i])
			continue;
		char a[64], b[64];
		return sp_fail(err, "%s: the checkpoint was made with %s %s, this run has %s", path,
			       settings[i].name, show_setting(i, have[i], a, sizeof a),
			       show_setting(i, want[i], b, sizeof b));
	}
	return 0;
}

/* The checkpoint's arrays into a (a.params holds three parameter vectors,
 * a.log the rows), after checking them against this run. */
static int read_checkpoint(struct gnn_trainer *t, const char *path, struct ck_arrays *a,
			   struct sp_err *err)
{
	struct npz z;
	size_t P = (size_t)t->m->nparams;
	if (npz_open(&z, path, err))
		return -1;
	int rc = read_member(&z, path, "state", NPY_I8, 1, 4, 0, a->state, err) ||
		 read_member(&z, path, "config", NPY_I8, 1, NSETTINGS, 0, a->config, err);
	if (!rc && a->state[0] != CHECKPOINT_VERSION)
		rc = sp_fail(err, "%s: checkpoint version %lld, this maxk-train reads %d", path,
			     (long long)a->state[0], CHECKPOINT_VERSION);
	if (!rc)
		rc = check_settings(t, path, a->config, err);
	int64_t epoch = a->state[1];
	if (!rc && (epoch < 0 || epoch > t->o.epochs || a->state[2] < 0 || a->state[2] > epoch ||
		    a->state[3] != t->m->nparams))
		rc = epoch > t->o.epochs
			     ? sp_fail(err, "%s: the checkpoint is at epoch %lld, past the %lld "
				       "epochs of this run", path, (long long)epoch,
				       (long long)t->o.epochs)
			     : sp_fail(err, "%s: inconsistent checkpoint state", path);
	if (!rc) {
		a->params = malloc(3 * P * sizeof(float));
		a->log = malloc(((size_t)epoch + 1) * LOG_COLS * sizeof(double));
		if (!a->params || !a->log)
			rc = sp_fail(err, "out of memory reading %s", path);
	}
	if (!rc)
		rc = read_member(&z, path, "best", NPY_F8, 1, 3, 0, a->best, err) ||
		     read_member(&z, path, "params", NPY_F4, 1, (int64_t)P, 0, a->params, err) ||
		     read_member(&z, path, "adam_m1", NPY_F4, 1, (int64_t)P, 0, a->params + P,
				 err) ||
		     read_member(&z, path, "adam_m2", NPY_F4, 1, (int64_t)P, 0, a->params + 2 * P,
				 err) ||
		     read_member(&z, path, "log", NPY_F8, 2, epoch, LOG_COLS, a->log, err);
	/* Training from NaN or infinite weights or moments would only predict
	 * NaN and print a score: such a checkpoint is broken, not resumable. */
	static const char *const param_names[] = {"params", "adam_m1", "adam_m2"};
	for (size_t i = 0; !rc && i < 3 * P; i++)
		if (!isfinite(a->params[i]) || (i >= 2 * P && a->params[i] < 0))
			rc = sp_fail(err, "%s: member '%s': element %zu is %g%s", path,
				     param_names[i / P], i % P, a->params[i],
				     isfinite(a->params[i]) ? ", a negative second moment" : "");
	if (!rc && a->state[2] > 0 && !isfinite(a->best[0]) && !isfinite(a->best[1]) &&
	    !isfinite(a->best[2]))
		rc = sp_fail(err, "%s: member 'best': no finite score at best epoch %lld", path,
			     (long long)a->state[2]);
	/* Row i is epoch i + 1; checked before it becomes an integer. */
	for (int64_t i = 0; !rc && i < epoch; i++)
		if (a->log[i * LOG_COLS] != (double)(i + 1))
			rc = sp_fail(err, "%s: member 'log': row %lld holds epoch %g, expected %lld", path,
				     (long long)i, a->log[i * LOG_COLS], (long long)(i + 1));
	npz_close(&z);
	return rc ? -1 : 0;
}

int gnn_trainer_resume(struct gnn_trainer *t, const char *path, struct sp_err *err)
{
	struct gnn_model *m = t->m;
	struct gnn_backend *b = m->b;
	size_t P = (size_t)m->nparams;
	struct ck_arrays a = {0};
	int rc = read_checkpoint(t, path, &a, err);
	int64_t epoch = a.state[1];
	if (!rc)
		rc = log_reserve(t, (size_t)epoch + 1, err) ||
		     b->to_device(b, m->param, a.params, P * sizeof(float), err) ||
		     b->to_device(b, m->adam_m1, a.params + P, P * sizeof(float), err) ||
		     b->to_device(b, m->adam_m2, a.params + 2 * P, P * sizeof(float), err);
	if (!rc) {
		for (int64_t i = 0; i < epoch; i++) {
			const double *r = a.log + i * LOG_COLS;
			t->log[i] = (struct gnn_epoch){(int64_t)r[0], r[1], r[2], r[3], r[4],
						       r[5], r[6], r[7]};
		}
		t->epoch = epoch;
		t->best_epoch = a.state[2];
		t->best_train = a.best[0];
		t->best_val = a.best[1];
		t->best_test = a.best[2];
		t->logits_epoch = -1;
	}
	free(a.params);
	free(a.log);
	return rc ? -1 : 0;
}

int gnn_train_run(struct gnn_trainer *t, const struct gnn_train_hooks *hooks,
		  struct sp_err *err)
{
	/* The log is made anew with the rows so far (those of a checkpoint
	 * resumed from), then a row is appended as each epoch ends. */
	struct csv_writer log;
	if (t->o.log && gnn_trainer_log_open(t, &log, err))
		return -1;
	int rc = 0;
	while (t->epoch < t->o.epochs) {
		if (gnn_trainer_epoch(t, err) ||
		    (t->o.log && log_row(&log, &t->log[t->epoch - 1], err))) {
			rc = -1;
			break;
		}
		if (hooks && hooks->epoch_done)
			hooks->epoch_done(hooks->ctx, t, &t->log[t->epoch - 1]);
		int last = t->epoch == t->o.epochs, stop = 0;
		/* ranks of a partitioned run stop after the same epoch */
		if (!last && gnn_model_agree(t->m, hooks && hooks->stop && hooks->stop(hooks->ctx),
					     &stop, err)) {
			rc = -1;
			break;
		}
		if (t->o.checkpoint && (last || stop || t->epoch % t->o.checkpoint_every == 0) &&
		    gnn_trainer_checkpoint(t, t->o.checkpoint, err)) {
			rc = -1;
			break;
		}
		if (stop) {
			rc = 1;
			break;
		}
	}
	if (t->o.log && rc < 0)
		csv_writer_abort(&log); /* the rows written stay */
	else if (t->o.log && csv_writer_commit(&log, err))
		rc = -1;
	return rc;
}
