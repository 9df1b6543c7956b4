/* `ksmm-tune apply --device cuda`: a chain (lib/ksmm/ksmm_chain.h) on the
 * GPU, each factor by the tuned kernel, its configuration chosen from a
 * best table (ksmm_table_choose's rules; the default configuration when
 * there is no table or no row fits). */
#ifndef SPKIT_KSMM_CHAIN_GPU_H
#define SPKIT_KSMM_CHAIN_GPU_H

#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_chain.h"

/* Each factor's configuration (cfgs and rules: c->n entries) from table
 * (may be NULL). Needs no GPU: apply checks a table this way on the CPU
 * path too, so a stale row is an error wherever it runs. */
int ksmm_chain_configs(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
		       const struct ksmm_table *table, struct ksmm_config *cfgs,
		       enum ksmm_rule *rules, struct sp_err *err);
/* The chain with those configurations. */
int ksmm_chain_apply_gpu(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
			 const struct ksmm_config *cfgs, const void *x, void *y,
			 struct sp_err *err);

#endif
