/* `ksmm-tune bench`: ksmm_bench_pattern for every pattern, batch, dtype and
 * layout, the kernel's configuration chosen from a best table (or the
 * default), one CSV row each: the median ms, relative error and status of
 * every method, the best baseline and the kernel's speedup over it, and
 * the memory floor with the kernel's ratio to it. */
#ifndef SPKIT_KSMM_BENCH_CSV_H
#define SPKIT_KSMM_BENCH_CSV_H

#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_gpu.h"
#include "ksmm/ksmm_tune.h"

/* o's patterns, batches, dtypes and layouts (its space, parts and report
 * unused but for progress); out "-" is standard output. */
int ksmm_bench_csv(const struct ksmm_tune_opts *o, const struct ksmm_table *table,
		   const struct ksmm_bench_opts *bo, const char *out, struct sp_err *err);

#endif
