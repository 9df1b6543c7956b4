/* A chain of Kronecker-sparse factors W = K_1 ... K_L applied to a batch,
 * as `ksmm-tune apply` does: patterns and weights listed right to left (the
 * first is the right-most factor, applied first, as PascalCarrivain/ksmm
 * lists them), weights as .npy arrays of shape (a,b,c,d), the input and
 * output as 2-D .npy arrays: (batch, width) batch-size-first, (width,
 * batch) batch-size-last. Between factors the activations are rounded to
 * the dtype, as a GPU chain stores them; each factor accumulates in double
 * on the CPU (ksmm_ref_factor). */
#ifndef SPKIT_KSMM_CHAIN_H
#define SPKIT_KSMM_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "ksmm/ksmm_patterns.h"

struct ksmm_chain {
	size_t n;
	struct ksmm_pattern *p; /* p[0] applied first */
	void **w;               /* (a,b,c,d) each, in dtype's storage */
	enum ksmm_dtype dtype;
};

/* One weight file per pattern; each factor's input width a*c*d must be the
 * previous factor's output height a*b*d. */
int ksmm_chain_load(const struct ksmm_pattern_list *patterns, const char *const *weights,
		    size_t nweights, enum ksmm_dtype t, struct ksmm_chain *c, struct sp_err *err);
void ksmm_chain_free(struct ksmm_chain *c);
/* The chain's input width and output height. */
int64_t ksmm_chain_cols(const struct ksmm_chain *c);
int64_t ksmm_chain_rows(const struct ksmm_chain *c);

/* The input (any numeric .npy, converted to the dtype): 2-D, its width
 * the first factor's a*c*d, a batch every factor can index in 32 bits. */
int ksmm_chain_input_read(const char *path, const struct ksmm_chain *c, enum ksmm_layout l,
			  int64_t *batch, void **x, struct sp_err *err);
/* y: ksmm_chain_rows x batch in the layout's shape, in dtype's storage. */
int ksmm_chain_apply_cpu(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
			 const void *x, void *y, struct sp_err *err);
/* y written atomically: f4 for fp32 and bf16 (exact), f2 for fp16. */
int ksmm_chain_output_write(const char *path, const struct ksmm_chain *c, enum ksmm_layout l,
			    int64_t batch, const void *y, struct sp_err *err);

#endif
