/* Kronecker-sparse factors (Gonon, Zheng, Carrivain, Le, "Fast inference
 * with Kronecker-sparse matrices", ICML 2025): the types every part of
 * ksmm-tune shares.
 *
 * A factor with pattern (a,b,c,d) has support I_a (x) 1_{b x c} (x) I_d,
 * shape (a*b*d) x (a*c*d), and weights W of shape (a,b,c,d), C order:
 *     K[al*b*d + be*d + de, al*c*d + ga*d + de] = W[al,be,ga,de]
 * so y[al,be,de] = sum_ga W[al,be,ga,de] * x[al,ga,de].
 * Batch-size-first: X is B x (a*c*d), Y = X K^T is B x (a*b*d).
 * Batch-size-last:  X is (a*c*d) x B, Y = K X   is (a*b*d) x B.
 * A chain W = K_1 ... K_L is listed right to left: patterns[0] is the
 * right-most factor, applied first. fp16 and bf16 accumulate in fp32. */
#ifndef SPKIT_KSMM_H
#define SPKIT_KSMM_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

enum ksmm_dtype { KSMM_F32, KSMM_F16, KSMM_BF16 };
enum ksmm_layout { KSMM_BS_FIRST, KSMM_BS_LAST };

struct ksmm_pattern {
	int64_t a, b, c, d;
};

/* One point of the tuning space: the kernel's hyperparameters, all runtime
 * values of one source compiled with NVRTC. Sizes are in elements. */
enum ksmm_variant { KSMM_SIMT, KSMM_MMA };
struct ksmm_config {
	enum ksmm_variant variant;
	int tile_rows;   /* output rows of b a block computes */
	int tile_k;      /* reduction tile over c, staged in shared memory */
	int tile_batch;  /* batch columns a block computes */
	int thread_rows; /* per-thread output tile (SIMT), or warp tile (MMA) */
	int thread_batch;
	int vec;         /* vector width of global loads, in elements */
	int stages;      /* shared-memory buffers (2 = double buffering) */
	int tf32;        /* fp32 on tensor cores, only when asked: 1 as TF32, 3 as
			  * three TF32 products (fp32's accuracy); 0 not */
	int tile_d;      /* bsf: neighbouring de a block covers (divides d), so
			  * that x and y move along de, their contiguous
			  * dimension; 1 otherwise */
};

/* Names as the CSV and the CLI write them ("fp32", "bsl", "simt"). */
const char *ksmm_dtype_name(enum ksmm_dtype t);
const char *ksmm_layout_name(enum ksmm_layout l);
const char *ksmm_variant_name(enum ksmm_variant v);
int ksmm_dtype_parse(const char *text, enum ksmm_dtype *out);
int ksmm_layout_parse(const char *text, enum ksmm_layout *out);
size_t ksmm_dtype_size(enum ksmm_dtype t);

/* Rows and columns of the factor: a*b*d and a*c*d. */
int64_t ksmm_rows(const struct ksmm_pattern *p);
int64_t ksmm_cols(const struct ksmm_pattern *p);

/* Every size positive, and every index the kernels form (rows*batch,
 * cols*batch, a*b*c*d) below 2^31; batch >= 1. what names the pattern's
 * source in the message ("--pattern", "patterns.in line 4"). */
int ksmm_pattern_check(const struct ksmm_pattern *p, int64_t batch, const char *what,
		       struct sp_err *err);

/* The CPU reference for one factor (lib/ksmm/ksmm_ref.c), what every GPU
 * result is checked against: w (a,b,c,d) and x in dtype's storage (fp16 and
 * bf16 as uint16_t bits), accumulated in double, y in double, in the
 * layout's shape (rows x batch for bsl, batch x rows for bsf). Threads over
 * the batch; no allocation, cannot fail once the pattern is checked. */
void ksmm_ref_factor(const struct ksmm_pattern *p, enum ksmm_layout layout, enum ksmm_dtype t,
		     int64_t batch, const void *w, const void *x, double *y);

#endif
