/* `ksmm-tune apply --device cuda`: a chain (lib/ksmm/ksmm_chain.h) on the
 * GPU, each factor by the tuned kernel, its configuration chosen from a
 * best table (ksmm_table_choose's rules; the default configuration when
 * there is no table or no row fits). */
#ifndef SPKIT_KSMM_CHAIN_GPU_H
#define SPKIT_KSMM_CHAIN_GPU_H

#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_chain.h"

/* rules (c->n entries, may be NULL) receives the rule that chose each
 * factor's configuration. table may be NULL. */
int ksmm_chain_apply_gpu(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
			 const struct ksmm_table *table, const void *x, void *y,
			 enum ksmm_rule *rules, struct sp_err *err);

#endif
