/* The sweep of `ksmm-tune tune`: every pattern (at its own batch, or at
 * each batch asked for) in every dtype and layout is a job; every
 * configuration of the space that can run a job (and that the space lists
 * for the job's dtype and layout) is timed and checked
 * against the CPU reference, one CSV row each (ksmm_results.h), appended
 * and flushed as it comes, so a killed sweep resumes where it stopped with
 * no row lost or repeated (sweep/sweep.h). Jobs are dealt round-robin to
 * --parts. Configurations that cannot run a job (the runner's check says
 * why) are not run and not written; the dry run lists them with the
 * reason.
 *
 * The library cannot reach the GPU: what runs a configuration is the
 * runner the caller passes (kernels/ksmm/ksmm_tune_gpu.c). */
#ifndef SPKIT_KSMM_TUNE_H
#define SPKIT_KSMM_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/report.h"
#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_patterns.h"
#include "ksmm/ksmm_results.h"
#include "ksmm/ksmm_space.h"

struct ksmm_tune_job {
	struct ksmm_pattern p;
	int64_t batch;
	enum ksmm_dtype dtype;
	enum ksmm_layout layout;
	const char *where; /* the pattern's source, for messages */
};

/* One configuration of one job, as the runner's prepare sees it. */
struct ksmm_tune_item {
	const struct ksmm_tune_job *job;
	struct ksmm_config cfg;
};

struct ksmm_runner {
	ksmm_runnable_fn check; /* also all the dry run needs */
	/* Inputs, weights and the CPU reference for a job. */
	int (*begin)(void *ctx, const struct ksmm_tune_job *job, struct sp_err *err);
	/* Time one configuration of the job begun: r->ms, std, rel_err and
	 * status. A configuration that fails (compile, launch, wrong result)
	 * is a status, not an error: -1 only when the sweep cannot go on. */
	int (*run)(void *ctx, const struct ksmm_config *cfg, struct ksmm_result *r,
		   struct sp_err *err);
	void (*end)(void *ctx);
	void *ctx;
	/* Optional: every configuration the sweep is about to run, before
	 * the first is timed, so that the runner can build them all at once
	 * (the GPU runner compiles them on every CPU core). What fails here is
	 * not an error: the configuration's run records it. */
	void (*prepare)(void *ctx, const struct ksmm_tune_item *items, size_t n,
			const struct sp_report *report);
};

struct ksmm_tune_opts {
	const struct ksmm_pattern_list *patterns;
	const int64_t *batches; /* for patterns without their own batch */
	size_t nbatches;
	const enum ksmm_dtype *dtypes;
	size_t ndtypes;
	const enum ksmm_layout *layouts;
	size_t nlayouts;
	const struct ksmm_space *space;
	int parts, part;        /* part is 1-based */
	uint64_t max_runs;      /* stop after this many configurations (--ncu: 1); 0: all */
	const struct sp_report *report; /* progress and messages; may be NULL */
};

struct ksmm_tune_stats {
	uint64_t jobs;    /* this part's */
	uint64_t skipped; /* configurations that cannot run their job */
	uint64_t resumed; /* already in the CSV */
	uint64_t run, ok; /* run now; of which ok */
};

/* The jobs of all parts, every pattern checked at its batch first
 * (ksmm_pattern_check), so a bad pattern stops the sweep before it starts. */
int ksmm_tune_jobs(const struct ksmm_tune_opts *o, struct ksmm_tune_job **jobs, size_t *n,
		   struct sp_err *err);

/* The sweep into out (appended and resumed; "-": standard output, whole). */
int ksmm_tune_run(const struct ksmm_tune_opts *o, const struct ksmm_runner *r, const char *out,
		  struct ksmm_tune_stats *st, struct sp_err *err);

/* What the sweep would do, as CSV into out ("-": standard output): this
 * part's jobs times the space, the key columns and a status: "run", "done"
 * (in resume_csv already; may be NULL) or "skip: REASON". Runs nothing. */
int ksmm_tune_dry_run(const struct ksmm_tune_opts *o, ksmm_runnable_fn check, void *ctx,
		      const char *resume_csv, const char *out, struct ksmm_tune_stats *st,
		      struct sp_err *err);

#endif
