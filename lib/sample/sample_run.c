#include "sample/sample_run.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"
#include "core/timer.h"
#include "formats/csv_writer.h"
#include "sample/sample_spec.h"

static int wall_time(void *ctx, sample_call_fn fn, void *state, double *us, struct sp_err *err)
{
	double t0 = timer_now();
	int rc = fn(state, err);
	*us = (timer_now() - t0) * 1e6;
	return rc;
}

void sample_device_name(const char *raw, char *out, size_t size)
{
	size_t n = 0;
	for (const char *p = raw; *p && n + 1 < size; p++)
		if (isalnum((unsigned char)*p) || strchr(".+-", *p))
			out[n++] = *p;
	out[n] = '\0';
}

void sample_cpu_clock(struct sample_clock *c)
{
	memset(c, 0, sizeof *c);
	c->time = wall_time;
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (fp && fgets(line, sizeof line, fp)) {
		char *colon = strchr(line, ':');
		if (colon && !strncmp(line, "model name", 10)) {
			sample_device_name(colon + 1, c->device, sizeof c->device);
			break;
		}
	}
	if (fp)
		fclose(fp);
	if (!c->device[0])
		snprintf(c->device, sizeof c->device, "CPU");
}

const char *sample_shape_text(int ndims, const int64_t *shape, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "[");
	for (int i = 0; i < ndims && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, i ? ", " : "", shape[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
	return buf;
}

const char *sample_range_name(const struct sample_job *job, const int64_t *shape, char *buf,
			      size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "%s_%s", job->cfg->kernel_name,
				    sample_precision_name(job->precision));
	for (int i = 0; i < job->cfg->grid.ndims && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "_%" PRId64, shape[i]);
	return buf;
}

double sample_trimmed_mean(double *runs, int n)
{
	num_sort(runs, (size_t)n);
	int lo = n > 2 ? 2 : 0, hi = n < 7 ? n : 7;
	double sum = 0;
	for (int i = lo; i < hi; i++)
		sum += runs[i];
	return sum / (hi - lo);
}

int sample_job_check(const struct sample_job *job, struct sp_err *err)
{
	const struct sample_config *cfg = job->cfg;
	const struct sample_op *op = job->op;
	int same = op->nshape == cfg->grid.ndims;
	for (int i = 0; same && i < op->nshape; i++)
		same = !strcmp(op->shape_names[i], cfg->columns[i]);
	if (!same) {
		char want[256] = "", have[256] = "";
		for (int i = 0; i < op->nshape; i++)
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
				 i ? ", " : "", op->shape_names[i]);
		for (int i = 0; i < cfg->grid.ndims; i++)
			snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s",
				 i ? ", " : "", cfg->columns[i]);
		return sp_fail(err, "%s:%zu: columns_name: %s takes the shape (%s), the config "
				    "names (%s)",
			       cfg->path, cfg->columns_line, op->name, want, have);
	}
	char shape[256];
	if (cfg->has_warmup_shape && op->check(cfg->warmup_shape, err))
		return sp_err_prefix(err, "%s: warmup_shapes %s", cfg->path,
				     sample_shape_text(cfg->grid.ndims, cfg->warmup_shape, shape,
						       sizeof shape));
	return 0;
}

static int setup(const struct sample_job *job, const int64_t *shape, void **state,
		 struct sp_err *err)
{
	/* A setup that fails frees what it made: there is nothing to tear down. */
	if (job->op->setup(shape, job->precision, job->seed, state, err)) {
		*state = NULL;
		return -1;
	}
	return 0;
}

/* One run, untimed: the forward, then the backward. */
static int run_both(const struct sample_op *op, void *state, struct sp_err *err)
{
	return op->forward(state, err) || (op->backward && op->backward(state, err)) ? -1 : 0;
}

/* The schedule's wait + warmup runs, on the warm-up shape's inputs. */
static int warm_up(const struct sample_job *job, void *state, struct sp_err *err)
{
	for (int i = 0; i < job->cfg->wait + job->cfg->warmup; i++)
		if (run_both(job->op, state, err))
			return -1;
	return 0;
}

int sample_time_schedule(const struct sample_clock *c, sample_call_fn fwd, sample_call_fn bwd,
			 void *warm_state, void *state, int untimed, int active, const char *range,
			 struct sample_times *t, struct sp_err *err)
{
	double *runs = malloc(2 * (size_t)active * sizeof *runs), *back = runs + active;
	int rc = -1;
	if (!runs)
		return sp_fail(err, "out of memory for %d runs", active);
	for (int i = 0; i < untimed; i++)
		if (fwd(warm_state, err) || (bwd && bwd(warm_state, err)))
			goto done;
	if (range && c->range_push)
		c->range_push(range);
	rc = 0;
	for (int i = 0; rc == 0 && i < active; i++)
		rc = c->time(c->ctx, fwd, state, &runs[i], err) ||
				     (bwd && c->time(c->ctx, bwd, state, &back[i], err))
			     ? -1
			     : 0;
	if (range && c->range_pop)
		c->range_pop();
	if (rc == 0) {
		t->fwd_us = sample_trimmed_mean(runs, active);
		t->bwd_us = bwd ? sample_trimmed_mean(back, active) : 0;
	}
done:
	free(runs);
	return rc;
}

/* Untimed work on a GPU is queued: wait for it, so its faults surface. */
static int settle(const struct sample_job *job, struct sp_err *err)
{
	return job->clock->sync ? job->clock->sync(job->clock->ctx, err) : 0;
}

static void range_push(const struct sample_job *job, const int64_t *shape)
{
	char name[256];
	if (job->clock->range_push)
		job->clock->range_push(sample_range_name(job, shape, name, sizeof name));
}

static void range_pop(const struct sample_job *job)
{
	if (job->clock->range_pop)
		job->clock->range_pop();
}

int sample_job_accepts(const struct sample_job *job, const int64_t *shape, struct sp_err *why)
{
	if (job->op->check(shape, why))
		return -1;
	return sample_check_precision(job->op->name, job->precision, why);
}

int sample_warm_open(const struct sample_job *job, void **warm, struct sp_err *err)
{
	*warm = NULL;
	const struct sample_config *cfg = job->cfg;
	char shape[256];
	struct sp_err why;
	if (sample_check_precision(job->op->name, job->precision, &why))
		return 0;
	if (cfg->has_warmup_shape && setup(job, cfg->warmup_shape, warm, err))
		return sp_err_prefix(err, "%s: warmup_shapes %s", cfg->path,
				     sample_shape_text(cfg->grid.ndims, cfg->warmup_shape, shape,
						       sizeof shape));
	return 0;
}

void sample_warm_close(const struct sample_job *job, void *warm)
{
	if (warm)
		job->op->teardown(warm);
}

int sample_measure(const struct sample_job *job, void *warm, const int64_t *shape,
		   struct sample_times *t, struct sp_err *err)
{
	void *state = NULL;
	char range[256];
	if (setup(job, shape, &state, err))
		return -1;
	int rc = sample_time_schedule(job->clock, job->op->forward, job->op->backward,
				      warm ? warm : state, state, job->cfg->wait + job->cfg->warmup,
				      job->cfg->active,
				      sample_range_name(job, shape, range, sizeof range), t, err);
	job->op->teardown(state);
	return rc;
}

/* A single-shape mode's error: the config and the shape first. */
static int fail_shape(const struct sample_job *job, const int64_t *shape, struct sp_err *err)
{
	char text[256];
	return sp_err_prefix(err, "%s: %s %s", job->cfg->path, job->cfg->kernel_name,
			     sample_shape_text(job->cfg->grid.ndims, shape, text, sizeof text));
}

int sample_one(const struct sample_job *job, const int64_t *shape, struct sample_times *t,
	       struct sp_err *err)
{
	void *warm;
	if (sample_job_accepts(job, shape, err))
		return fail_shape(job, shape, err);
	if (sample_warm_open(job, &warm, err))
		return -1;
	int rc = sample_measure(job, warm, shape, t, err);
	sample_warm_close(job, warm);
	return rc ? fail_shape(job, shape, err) : 0;
}

int sample_profile(const struct sample_job *job, const int64_t *shape, struct sp_err *err)
{
	void *warm, *state = NULL;
	if (sample_job_accepts(job, shape, err))
		return fail_shape(job, shape, err);
	if (sample_warm_open(job, &warm, err))
		return -1;
	int rc = -1;
	if (setup(job, shape, &state, err) || warm_up(job, warm ? warm : state, err) ||
	    settle(job, err))
		goto done;
	range_push(job, shape);
	rc = run_both(job->op, state, err);
	range_pop(job);
	if (rc == 0)
		rc = settle(job, err);
done:
	if (state)
		job->op->teardown(state);
	sample_warm_close(job, warm);
	return rc ? fail_shape(job, shape, err) : 0;
}

int sample_run_once(const struct sample_job *job, const int64_t *shape, struct sp_err *err)
{
	void *state = NULL;
	if (sample_job_accepts(job, shape, err) || setup(job, shape, &state, err))
		return fail_shape(job, shape, err);
	int rc = run_both(job->op, state, err) || settle(job, err) ? -1 : 0;
	job->op->teardown(state);
	return rc ? fail_shape(job, shape, err) : 0;
}

void sample_write_us(struct csv_writer *w, double us)
{
	if (isnan(us))
		csv_writer_str(w, "");
	else
		csv_writer_double(w, round(us * 1000) / 1000, 0);
}
