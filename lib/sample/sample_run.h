/* Timing one operator at one shape, as kernel-sample's modes do it.
 *
 * The schedule is estimate-train-time's (its profiler's wait, warmup and
 * active steps): wait + warmup untimed runs of the warm-up shape (the
 * config's warmup_shapes, or the timed shape itself when it has none), then
 * `active` timed runs of the shape. A run is the operator's forward, then
 * its backward, each timed on its own; inputs are made once per shape, by
 * the operator's setup, outside the timed region. The time kept for each
 * direction is the original's average: the runs sorted, the third to the
 * seventh fastest averaged (its np.mean(sorted[2:7])), so the two fastest
 * and, of 10 runs, the three slowest are left out; with fewer runs the
 * slice is shorter, and with 1 or 2 runs all of them count.
 *
 * The active runs of a shape are one NVTX range, named as the original
 * named its profiler folders: "layernorm_fp16_16_2048_1024". The clock
 * (struct sample_clock) says how a run is timed: CUDA events around it on
 * the GPU (kernels/sample/sample_gpu_clock.c), a wall clock on the CPU. */
#ifndef SPKIT_SAMPLE_RUN_H
#define SPKIT_SAMPLE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/report.h"
#include "sample/sample_config.h"
#include "sample/sample_op.h"

typedef int (*sample_call_fn)(void *state, struct sp_err *err);

struct sample_clock {
	/* The machine, as output names write it ("NVIDIAH10080GBHBM3"). */
	char device[128];
	/* Run fn(state) once; *us is how long it took, in microseconds. */
	int (*time)(void *ctx, sample_call_fn fn, void *state, double *us, struct sp_err *err);
	/* Wait for the work queued so far, reporting its faults; NULL where
	 * work is not queued (the CPU). */
	int (*sync)(void *ctx, struct sp_err *err);
	/* NVTX ranges; NULL where there are none (the CPU). */
	void (*range_push)(const char *name);
	void (*range_pop)(void);
	void *ctx;
};

/* The CPU's clock: the monotonic wall clock, no ranges, and the processor's
 * model name from /proc/cpuinfo ("CPU" where it says none). */
void sample_cpu_clock(struct sample_clock *c);
/* A device name for file names, as the original writes the GPU's (its
 * blanks removed), keeping only letters, digits, '.', '+' and '-' so that
 * '_' separates the fields of an output name. */
void sample_device_name(const char *raw, char *out, size_t size);

struct sample_job {
	const struct sample_config *cfg;
	const struct sample_op *op;
	const struct sample_clock *clock;
	enum sample_precision precision;
	uint64_t seed; /* of the operators' random inputs */
	/* get_all only */
	int parts, part;        /* 1-based part of parts */
	const char *output_dir; /* sampling_data/ and sampling_log/ go in it */
	const struct sp_report *report;
};

/* The operator takes the config's shape columns (its names, in its order),
 * and can run the warm-up shape; the errors name the config. */
int sample_job_check(const struct sample_job *job, struct sp_err *err);

/* Whether the job runs the shape: the operator's check, then its
 * precision (sample_check_precision); -1 with the reason otherwise. */
int sample_job_accepts(const struct sample_job *job, const int64_t *shape, struct sp_err *why);

/* The warm-up shape's inputs, made once for a sweep (*warm stays NULL
 * when the config has no warmup_shapes: each shape then warms itself; and
 * when the operator does not run at the job's precision: no shape will). */
int sample_warm_open(const struct sample_job *job, void **warm, struct sp_err *err);
void sample_warm_close(const struct sample_job *job, void *warm);

struct sample_times {
	/* bwd_us is 0 for an operator without backward (res_add: the gradient
	 * passes through, no kernel runs) */
	double fwd_us, bwd_us;
};

/* The schedule for one shape the operator accepts (check). Errors are the
 * operator's own ("cudaMalloc(...) for 'x': out of memory"). */
int sample_measure(const struct sample_job *job, void *warm, const int64_t *shape,
		   struct sample_times *t, struct sp_err *err);

/* The schedule on states already set up: `untimed` runs (forward, then
 * backward) on warm_state, then `active` runs on state, each direction
 * timed on its own, inside the NVTX range `range` (NULL: none); t gets the
 * trimmed means. bwd may be NULL (t->bwd_us is then 0). sample_measure is
 * this on an operator; kernel-sample layer runs it on a whole layer. */
int sample_time_schedule(const struct sample_clock *c, sample_call_fn fwd, sample_call_fn bwd,
			 void *warm_state, void *state, int untimed, int active, const char *range,
			 struct sample_times *t, struct sp_err *err);

/* The single-shape modes, on the config's `shapes` or the shape given.
 * Their errors name the config and the shape. get_one: sample_measure;
 * get_profiler: the warm-up runs, then one run inside the shape's NVTX
 * range, so `ncu --nvtx --nvtx-include RANGE/` profiles exactly it;
 * run_function: one forward and backward, untimed, no warm-up. */
int sample_one(const struct sample_job *job, const int64_t *shape, struct sample_times *t,
	       struct sp_err *err);
int sample_profile(const struct sample_job *job, const int64_t *shape, struct sp_err *err);
int sample_run_once(const struct sample_job *job, const int64_t *shape, struct sp_err *err);

/* "layernorm_fp16_16_2048_1024". */
const char *sample_range_name(const struct sample_job *job, const int64_t *shape, char *buf,
			      size_t size);
/* "[16, 2048, 1024]", as the original prints a shape. */
const char *sample_shape_text(int ndims, const int64_t *shape, char *buf, size_t size);

struct csv_writer;
/* A duration in a sampling CSV, to the nanosecond (the digits that mean
 * something); NAN as an empty cell. */
void sample_write_us(struct csv_writer *w, double us);

/* The original's average of n runs (sorts them). */
double sample_trimmed_mean(double *runs, int n);

#endif
