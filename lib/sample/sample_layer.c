#include "sample/sample_layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample_spec.h"

const char *const sample_layer_columns[] = {"mp", "b", "h", "l", "dim", NULL};
const char *const sample_layer_norms[] = {"RMSlayernorm", "layernorm", NULL};
const char *const sample_layer_attentions[] = {"unfused", "flash_atten", "flash_atten_causal",
						NULL};

int sample_layer_ops(const char *norm, const char *attention, const char **ops)
{
	int n = 0;
	ops[n++] = norm;
	ops[n++] = "linear1";
	ops[n++] = "RoPE";
	if (!strcmp(attention, "unfused")) {
		ops[n++] = "baddbmm";
		ops[n++] = "ScaledUpperTriangMaskedSoftmax";
		ops[n++] = "bmm";
	} else {
		ops[n++] = attention;
	}
	ops[n++] = "linear2";
	ops[n++] = norm;
	ops[n++] = "res_add";
	ops[n++] = "linear3";
	ops[n++] = "gelu";
	ops[n++] = "linear4";
	ops[n++] = "res_add";
	return n;
}

int sample_layer_shape(const char *op, const char *const *cols, int ncols, const int64_t *enc,
		       int64_t *shape, struct sp_err *err)
{
	for (int c = 0; c < ncols; c++) {
		int k = 0;
		while (sample_layer_columns[k] && strcmp(sample_layer_columns[k], cols[c]))
			k++;
		if (!sample_layer_columns[k])
			return sp_fail(err, "%s: column '%s' is not one of the layer's (mp, b, h, l, "
					    "dim)",
				       op, cols[c]);
		shape[c] = enc[k];
	}
	return 0;
}

/* The layer as one call each way, for sample_time_schedule. */
struct layer_run {
	const struct sample_op *const *ops;
	void **states;
	int n;
};

static int layer_forward(void *arg, struct sp_err *err)
{
	struct layer_run *L = arg;
	for (int i = 0; i < L->n; i++)
		if (L->ops[i]->forward(L->states[i], err))
			return -1;
	return 0;
}

static int layer_backward(void *arg, struct sp_err *err)
{
	struct layer_run *L = arg;
	for (int i = L->n - 1; i >= 0; i--)
		if (L->ops[i]->backward && L->ops[i]->backward(L->states[i], err))
			return -1;
	return 0;
}

static int fail_op(const struct sample_op *op, const int64_t *shape, struct sp_err *err)
{
	char text[256];
	return sp_err_prefix(err, "%s %s", op->name, sample_shape_text(op->nshape, shape, text,
								       sizeof text));
}

int sample_layer_measure(const struct sample_op *const *ops, int n,
			 const struct sample_clock *clock, enum sample_precision p,
			 uint64_t seed, int wait, int warmup, int active,
			 struct sample_layer_times *t, struct sp_err *err)
{
	void *states[SAMPLE_LAYER_MAX_OPS] = {0};
	struct layer_run L = {ops, states, n};
	int64_t (*shapes)[SAMPLE_MAX_DIMS] = t->shape;
	int rc = -1, i;
	t->n = n;
	for (i = 0; i < n; i++)
		if (ops[i]->check(shapes[i], err) ||
		    ops[i]->setup(shapes[i], p, seed, &states[i], err)) {
			states[i] = NULL;
			fail_op(ops[i], shapes[i], err);
			goto done;
		}
	for (i = 0; i < n; i++)
		if (sample_time_schedule(clock, ops[i]->forward, ops[i]->backward, states[i],
					 states[i], wait + warmup, active, NULL, &t->alone[i], err)) {
			fail_op(ops[i], shapes[i], err);
			goto done;
		}
	if (sample_time_schedule(clock, layer_forward, layer_backward, &L, &L, wait + warmup,
				 active, "layer", &t->layer, err)) {
		sp_err_prefix(err, "the layer");
		goto done;
	}
	rc = 0;
done:
	for (i = 0; i < n; i++)
		if (states[i])
			ops[i]->teardown(states[i]);
	return rc;
}

/* One direction of one operator: 0 when it has no kernel. */
static int predict_one(const char *dir, const char *op, enum sample_precision p,
		       enum sample_direction d, const int64_t *enc, char *device,
		       size_t device_size, struct sample_layer_times *t, int i, double *us,
		       struct sp_err *err)
{
	char path[4096], want[256], have[256];
	struct sample_model m;
	int found = sample_model_find(dir, op, p, d, device, device_size, path, sizeof path, err);
	*us = 0;
	if (found < 0)
		return -1;
	if (!found && d == SAMPLE_BWD && !sample_has_backward(op))
		return 0;
	if (!found)
		return sp_fail(err, "%s: no model %s_%s_%s_%s.model (kernel-sample fit of %s's "
				    "sampling CSVs writes it)",
			       dir, device[0] ? device : "DEVICE", op,
			       sample_precision_name(p), sample_direction_names[d], op);
	if (sample_model_read(path, &m, err))
		return -1;
	snprintf(want, sizeof want, "%s_%s_%s", op, sample_precision_name(p),
		 sample_direction_names[d]);
	snprintf(have, sizeof have, "%s_%s_%s", m.op, sample_precision_name(m.precision),
		 sample_direction_names[m.direction]);
	int rc = -1;
	if (strcmp(want, have))
		sp_fail(err, "%s: a model of %s, its name says %s", path, have, want);
	else if (sample_layer_shape(op, m.colp, m.ncols, enc, t->shape[i], err) ||
		 sample_model_predict(&m, t->shape[i], us, err))
		sp_err_prefix(err, "%s", path);
	else
		rc = 0;
	t->nshape[i] = m.ncols;
	sample_model_free(&m);
	return rc;
}

int sample_layer_predict(const char *dir, const char *const *ops, int n,
			 enum sample_precision p, const int64_t *enc, char *device,
			 size_t device_size, struct sample_layer_times *t, struct sp_err *err)
{
	memset(t, 0, sizeof *t);
	t->n = n;
	device[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (predict_one(dir, ops[i], p, SAMPLE_FWD, enc, device, device_size, t, i,
				&t->alone[i].fwd_us, err) ||
		    predict_one(dir, ops[i], p, SAMPLE_BWD, enc, device, device_size, t, i,
				&t->alone[i].bwd_us, err))
			return -1;
		t->layer.fwd_us += t->alone[i].fwd_us;
		t->layer.bwd_us += t->alone[i].bwd_us;
	}
	return 0;
}
