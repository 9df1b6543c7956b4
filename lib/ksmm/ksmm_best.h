/* Best configurations: `ksmm-tune best` reduces tuning CSVs (the part files
 * of one sweep, or of several) to the fastest ok row per pattern, batch,
 * dtype and layout, and `apply` and `bench` read that table back and pick a
 * configuration for any pattern and batch:
 *
 *   1. exact: the table's row for this pattern, batch, dtype and layout. A
 *      row whose configuration cannot run its own pattern is an error (the
 *      table is stale or was edited), naming the file and line.
 *   2. nearest batch: rows of the same pattern, dtype and layout, nearest
 *      batch first (by |log(batch/B)|, a tie to the larger batch); the
 *      first whose configuration can run.
 *   3. nearest pattern: rows of the same dtype and layout, nearest first by
 *      the sum of |log2| ratios of a, b, c, d and the batch; the first
 *      whose configuration can run.
 *   4. default: none can; the caller uses the GPU side's default
 *      configuration (ksmm_config_default). */
#ifndef SPKIT_KSMM_BEST_H
#define SPKIT_KSMM_BEST_H

#include <stddef.h>

#include "core/err.h"
#include "ksmm/ksmm_results.h"

/* The best ok row of every (pattern, batch, dtype, layout) over all files,
 * sorted by dtype, layout, pattern and batch. Rows that are not ok are
 * skipped; a key with no ok row is left out (*nskipped counts such keys).
 * A file that is not a ksmm-tune CSV or does not parse is an error. */
int ksmm_best_reduce(const char *const *paths, size_t npaths, struct ksmm_result **out,
		     size_t *n, size_t *nskipped, struct sp_err *err);
/* Atomically: the file appears whole or not at all. */
int ksmm_best_write(const char *path, const struct ksmm_result *rows, size_t n,
		    struct sp_err *err);

struct ksmm_table {
	char *path;
	struct ksmm_result *rows;
	size_t n;
};
/* A best table: a ksmm-tune CSV whose rows are all ok, one per key. */
int ksmm_table_read(const char *path, struct ksmm_table *t, struct sp_err *err);
void ksmm_table_free(struct ksmm_table *t);

/* Can cfg run p at batch? 0 yes; else nonzero with the reason in why. */
typedef int (*ksmm_runnable_fn)(void *ctx, const struct ksmm_pattern *p, int64_t batch,
				enum ksmm_dtype t, enum ksmm_layout l,
				const struct ksmm_config *cfg, char *why, size_t n);

enum ksmm_rule { KSMM_RULE_EXACT, KSMM_RULE_NEAREST_BATCH, KSMM_RULE_NEAREST_PATTERN,
		 KSMM_RULE_DEFAULT };
const char *ksmm_rule_name(enum ksmm_rule r); /* "exact", "nearest batch", ... */

/* The configuration for p at batch by the rules above; t may be NULL (no
 * table: the default). *from is the row chosen (NULL for the default);
 * *out is left alone for KSMM_RULE_DEFAULT. Fails only for an exact row
 * that cannot run. */
int ksmm_table_choose(const struct ksmm_table *t, const struct ksmm_pattern *p, int64_t batch,
		      enum ksmm_dtype dt, enum ksmm_layout l, ksmm_runnable_fn runnable,
		      void *ctx, struct ksmm_config *out, enum ksmm_rule *rule,
		      const struct ksmm_result **from, struct sp_err *err);

#endif
