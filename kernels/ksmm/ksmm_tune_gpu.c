#include "ksmm/ksmm_tune_gpu.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/num.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "core/strmap.h"
#include "core/timer.h"
#include "ksmm/ksmm_gpu.h"
#include "ksmm/ksmm_impl.h"
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

static int begin_job(void *ctx, const struct ksmm_tune_job *job, struct sp_err *err)
{
	struct ksmm_tune_gpu *g = ctx;
	g->job = *job;
	const struct ksmm_pattern *p = &job->p;
	const enum ksmm_dtype t = job->dtype;
	const size_t es = ksmm_dtype_size(t);
	const int64_t nw = p->a * p->b * p->c * p->d, nx = ksmm_cols(p) * job->batch,
		      ny = ksmm_rows(p) * job->batch;
	const uint64_t key = (uint64_t)(p->a * 1000003 + p->b * 1009 + p->c * 101 + p->d);
	g->nsample = ksmm_sample_size(job->batch, KSMM_TUNE_SAMPLE);
	struct rng r;
	rng_init(&r, g->seed, key);
	/* w on the CPU (small, and the reference reads all of it), x on the
	 * GPU (up to gigabytes) and only its sample brought back */
	void *w = random_values(&r, t, nw);
	void *xs = malloc((size_t)(ksmm_cols(p) * g->nsample) * es);
	g->ref = malloc((size_t)(ksmm_rows(p) * g->nsample) * sizeof *g->ref);
	g->y_host = malloc((size_t)(ksmm_rows(p) * g->nsample) * es);
	int rc = 0;
	if (!w || !xs || !g->ref || !g->y_host)
		rc = sp_fail(err, "%s: out of memory for the inputs", job->where);
	if (!rc && (gpu_malloc(&g->d_w_abcd, (size_t)nw * es, "weights", err) ||
		    gpu_malloc(&g->d_w, (size_t)nw * es, "weights", err) ||
		    gpu_malloc(&g->d_x, (size_t)nx * es, "input", err) ||
		    gpu_malloc(&g->d_y, (size_t)ny * es, "output", err) ||
		    gpu_upload(g->d_w_abcd, w, (size_t)nw * es, err) ||
		    ksmm_fill_uniform(g->d_x, nx, t, g->seed ^ key << 32, err) ||
		    ksmm_weights_prepare(p, t, g->d_w_abcd, g->d_w, err) || gpu_sync(err) ||
		    ksmm_sample_download(xs, g->d_x, ksmm_cols(p), job->batch, job->layout, es,
					 KSMM_TUNE_SAMPLE, err)))
		rc = -1;
	if (!rc) {
		ksmm_ref_factor(p, job->layout, t, g->nsample, w, xs, g->ref);
		g->ref_max = 0;
		for (int64_t i = 0; i < ksmm_rows(p) * g->nsample; i++)
			g->ref_max = fmax(g->ref_max, fabs(g->ref[i]));
	}
	free(w), free(xs);
	if (rc)
		end_job(g);
	return rc;
}

/* max|y - ref| / max|ref| over the sampled columns (y_host and ref in the
 * same compact layout). */
static double sample_error(const struct ksmm_tune_gpu *g)
{
	const struct ksmm_tune_job *j = &g->job;
	const int64_t count = ksmm_rows(&j->p) * g->nsample;
	double worst = 0;
	for (int64_t i = 0; i < count; i++) {
		double e = fabs(ksmm_value(j->dtype, g->y_host, i) - g->ref[i]);
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
	else if (ksmm_poison(g->d_y, (size_t)(ksmm_rows(&j->p) * j->batch) *
						 ksmm_dtype_size(j->dtype), &e) ||
		 ksmm_kernel_run(k, g->d_w, g->d_x, g->d_y, j->batch, &e) ||
		 ksmm_sample_download(g->y_host, g->d_y, ksmm_rows(&j->p), j->batch, j->layout,
				      ksmm_dtype_size(j->dtype), KSMM_TUNE_SAMPLE, &e))
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

/* What one build depends on besides the source: the configuration, dtype,
 * layout and x's load width (the pattern matters only through it). */
struct build_key {
	struct ksmm_config cfg;
	int dtype, layout, xvec;
};

struct builds {
	const struct ksmm_tune_item **items; /* one per distinct build */
	int cc;
};

static void build_one(void *ctx, int64_t i)
{
	const struct builds *b = ctx;
	const struct ksmm_tune_item *it = b->items[i];
	struct sp_err e;
	/* a failure is the configuration's status when it runs */
	ksmm_kernel_build(&it->cfg, &it->job->p, it->job->dtype, it->job->layout, b->cc, &e);
}

/* Every distinct build of the sweep compiled (or found in the disk cache)
 * on all CPU cores before the first timing: NVRTC takes 0.3 to 1 s a
 * configuration, which one at a time between timings would hold the GPU
 * idle for most of a sweep. */
static void prepare(void *ctx, const struct ksmm_tune_item *items, size_t n,
		    const struct sp_report *report)
{
	size_t smem;
	struct builds b = {malloc((n ? n : 1) * sizeof *b.items), 0};
	struct strmap seen = {0};
	if (!b.items || ksmm_device_limits(&smem, &b.cc)) {
		free(b.items);
		return; /* each run compiles its own, or says why it cannot */
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		struct build_key k;
		memset(&k, 0, sizeof k);
		k.cfg = items[i].cfg;
		k.dtype = (int)items[i].job->dtype;
		k.layout = (int)items[i].job->layout;
		k.xvec = ksmm_xvec(&items[i].job->p, items[i].job->layout, &items[i].cfg);
		int added = 0;
		if (strmap_insert(&seen, &k, sizeof k, &added) && added)
			b.items[m++] = &items[i];
	}
	strmap_free(&seen);
	struct ksmm_cache_stats s0, s1;
	ksmm_cache_stats(&s0);
	const double t0 = timer_now();
	parallel_for((int64_t)m, build_one, &b);
	ksmm_cache_stats(&s1);
	const int threads = parallel_threads();
	sp_report_msg(report, 1, "%zu configuration%s, %zu distinct build%s: %" PRIu64
		      " compiled, %" PRIu64 " from the disk cache, %.1f s on %d thread%s", n,
		      sp_plural(n), m, sp_plural(m), s1.compiles - s0.compiles, s1.hits - s0.hits,
		      timer_now() - t0, threads, sp_plural(threads));
	free(b.items);
}

struct ksmm_runner ksmm_tune_gpu_runner(struct ksmm_tune_gpu *g)
{
	return (struct ksmm_runner){ksmm_runnable, begin_job, run_config, end_job, g, prepare};
}
