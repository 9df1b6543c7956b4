#include "ksmm/ksmm_tune_gpu.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/num.h"
#include "core/rng.h"
#include "ksmm/ksmm_gpu.h"
#include "ksmm/ksmm_value.h"

int ksmm_runnable(void *ctx, const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		  enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n)
{
	return ksmm_config_check(p, batch, t, l, cfg, why, n);
}

static void end_job(void *ctx)
{
	struct ksmm_tune_gpu *g = ctx;
	gpu_free(g->d_w_abcd), gpu_free(g->d_w), gpu_free(g->d_x), gpu_free(g->d_y);
	free(g->ref), free(g->y_host);
	g->d_w_abcd = g->d_w = g->d_x = g->d_y = NULL;
	g->ref = NULL;
	g->y_host = NULL;
}

static void *random_values(struct rng *r, enum ksmm_dtype t, int64_t n)
{
	void *v = malloc((size_t)n * ksmm_dtype_size(t));
	for (int64_t i = 0; v && i < n; i++)
		ksmm_value_store(t, v, i, rng_uniform(r) * 2 - 1);
	return v;
}

/* x's sampled batch columns, compact, in the layout's shape. */
static void gather_sample(const struct ksmm_tune_gpu *g, const void *x, void *xs)
{
	const struct ksmm_tune_job *j = &g->job;
	const int64_t cols = ksmm_cols(&j->p);
	const size_t es = ksmm_dtype_size(j->dtype);
	for (int64_t s = 0; s < g->nsample; s++)
		for (int64_t k = 0; k < cols; k++) {
			int64_t from = j->layout == KSMM_BS_LAST ? k * j->batch + g->sample[s]
								 : g->sample[s] * cols + k;
			int64_t to = j->layout == KSMM_BS_LAST ? k * g->nsample + s : s * cols + k;
			memcpy((char *)xs + to * es, (const char *)x + from * es, es);
		}
}

static int begin_job(void *ctx, const struct ksmm_tune_job *job, struct sp_err *err)
{
	struct ksmm_tune_gpu *g = ctx;
	g->job = *job;
	const struct ksmm_pattern *p = &job->p;
	const enum ksmm_dtype t = job->dtype;
	const size_t es = ksmm_dtype_size(t);
	const int64_t nw = p->a * p->b * p->c * p->d, nx = ksmm_cols(p) * job->batch,
		      ny = ksmm_rows(p) * job->batch;
	g->nsample = 0;
	for (int64_t n = 0; n < job->batch; n++)
		if (n < KSMM_TUNE_SAMPLE || n >= job->batch - KSMM_TUNE_SAMPLE)
			g->sample[g->nsample++] = n;
	struct rng r;
	rng_init(&r, g->seed, (uint64_t)(p->a * 1000003 + p->b * 1009 + p->c * 101 + p->d));
	void *w = random_values(&r, t, nw), *x = random_values(&r, t, nx);
	void *xs = malloc((size_t)(ksmm_cols(p) * g->nsample) * es);
	g->ref = malloc((size_t)(ksmm_rows(p) * g->nsample) * sizeof *g->ref);
	g->y_host = malloc((size_t)ny * es);
	int rc = 0;
	if (!w || !x || !xs || !g->ref || !g->y_host)
		rc = sp_fail(err, "%s: out of memory for the inputs", job->where);
	if (!rc) {
		gather_sample(g, x, xs);
		ksmm_ref_factor(p, job->layout, t, g->nsample, w, xs, g->ref);
		g->ref_max = 0;
		for (int64_t i = 0; i < ksmm_rows(p) * g->nsample; i++)
			g->ref_max = fmax(g->ref_max, fabs(g->ref[i]));
	}
	if (!rc && (gpu_malloc(&g->d_w_abcd, (size_t)nw * es, "weights", err) ||
		    gpu_malloc(&g->d_w, (size_t)nw * es, "weights", err) ||
		    gpu_malloc(&g->d_x, (size_t)nx * es, "input", err) ||
		    gpu_malloc(&g->d_y, (size_t)ny * es, "output", err) ||
		    gpu_upload(g->d_w_abcd, w, (size_t)nw * es, err) ||
		    gpu_upload(g->d_x, x, (size_t)nx * es, err) ||
		    ksmm_weights_prepare(p, t, g->d_w_abcd, g->d_w, err) || gpu_sync(err)))
		rc = -1;
	free(w), free(x), free(xs);
	if (rc)
		end_job(g);
	return rc;
}

/* max|y - ref| / max|ref| over the sampled columns. */
static double sample_error(const struct ksmm_tune_gpu *g)
{
	const struct ksmm_tune_job *j = &g->job;
	const int64_t rows = ksmm_rows(&j->p);
	double worst = 0;
	for (int64_t s = 0; s < g->nsample; s++)
		for (int64_t i = 0; i < rows; i++) {
			int64_t at = j->layout == KSMM_BS_LAST ? i * j->batch + g->sample[s]
							       : g->sample[s] * rows + i;
			double ref = g->ref[j->layout == KSMM_BS_LAST ? i * g->nsample + s
								      : s * rows + i];
			double e = fabs(ksmm_value(j->dtype, g->y_host, at) - ref);
			worst = e > worst || isnan(e) ? e : worst;
		}
	return g->ref_max > 0 ? worst / g->ref_max : worst;
}

static void set_status(struct ksmm_result *r, const char *what, const struct sp_err *e)
{
	snprintf(r->status, sizeof r->status, "%s: %.140s", what, e->msg);
}

static int run_config(void *ctx, const struct ksmm_config *cfg, struct ksmm_result *r,
		      struct sp_err *err)
{
	struct ksmm_tune_gpu *g = ctx;
	const struct ksmm_tune_job *j = &g->job;
	r->ms = r->std = r->rel_err = NAN;
	char range[200];
	snprintf(range, sizeof range,
		 "ksmm %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 " B%" PRId64
		 " %s %s %s %d,%d,%d,%d,%d,%d,%d,%d", j->p.a, j->p.b, j->p.c, j->p.d, j->batch,
		 ksmm_dtype_name(j->dtype), ksmm_layout_name(j->layout),
		 ksmm_variant_name(cfg->variant), cfg->tile_rows, cfg->tile_k, cfg->tile_batch,
		 cfg->thread_rows, cfg->thread_batch, cfg->vec, cfg->stages, cfg->tf32);
	gpu_range_push(range);
	struct ksmm_kernel *k = NULL;
	struct sp_err e = {{0}};
	int got = ksmm_kernel_get(cfg, &j->p, j->dtype, j->layout, &k, &e);
	if (got)
		set_status(r, got == KSMM_UNRUNNABLE ? "unrunnable" : "compile", &e);
	else if (ksmm_kernel_run(k, g->d_w, g->d_x, g->d_y, j->batch, &e) ||
		 gpu_download(g->y_host, g->d_y,
			      (size_t)(ksmm_rows(&j->p) * j->batch) * ksmm_dtype_size(j->dtype),
			      &e))
		set_status(r, "launch", &e);
	else {
		r->rel_err = sample_error(g);
		double med[16];
		/* --reps runs in all, dealt over the rounds (fewer rounds than
		 * that many runs); ms is the median of the rounds' medians. */
		int rounds = g->rounds < 1 ? 1 : g->rounds > 16 ? 16 : g->rounds, timed = 0;
		if (rounds > g->reps)
			rounds = g->reps > 0 ? g->reps : 1;
		for (int i = 0; i < rounds; i++) {
			struct gpu_timing tm;
			int per = g->reps / rounds + (i < g->reps % rounds);
			if (ksmm_kernel_time(k, g->d_w, g->d_x, g->d_y, j->batch,
					     i ? 0 : g->warmup, per > 0 ? per : 1, &tm, &e)) {
				set_status(r, "launch", &e);
				break;
			}
			med[timed++] = tm.median_ms;
		}
		if (timed == rounds) {
			num_sort(med, (size_t)rounds);
			double mean = 0, var = 0;
			for (int i = 0; i < rounds; i++)
				mean += med[i] / rounds;
			for (int i = 0; i < rounds; i++)
				var += (med[i] - mean) * (med[i] - mean);
			r->ms = num_median_sorted(med, (size_t)rounds);
			r->std = rounds > 1 ? sqrt(var / (rounds - 1)) : NAN;
			snprintf(r->status, sizeof r->status, "%s",
				 r->rel_err <= ksmm_tolerance(j->dtype, cfg->tf32) ? "ok" : "wrong");
		}
	}
	ksmm_kernel_free(k);
	gpu_range_pop();
	/* A fault that broke the context would fail every later configuration
	 * too, and a rerun would take those rows as done: stop, unwritten. */
	if (!strncmp(r->status, "launch", 6) && !gpu_context_usable())
		return sp_fail(err, "the GPU stopped working at configuration %s: %s", range,
			       r->status);
	return 0;
}

struct ksmm_runner ksmm_tune_gpu_runner(struct ksmm_tune_gpu *g)
{
	return (struct ksmm_runner){ksmm_runnable, begin_job, run_config, end_job, g};
}
