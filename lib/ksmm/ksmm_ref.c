/* The CPU reference for one Kronecker-sparse factor: the definition,
 * y[al,be,de] = sum_ga W[al,be,ga,de] x[al,ga,de], for every batch column,
 * accumulated in double. Threads take chunks of the batch; each chunk
 * writes only its own outputs, so the result does not depend on the thread
 * count. */
#include "ksmm/ksmm.h"

#include "core/parallel.h"
#include "ksmm/ksmm_value.h"

/* Batch columns a chunk takes: enough to amortise a pass over W. */
#define REF_CHUNK 64

struct ref_job {
	const struct ksmm_pattern *p;
	enum ksmm_layout layout;
	enum ksmm_dtype t;
	int64_t batch;
	const void *w, *x;
	double *y;
};

/* One chunk of batch columns [n0, n1); t is a constant at each call site
 * below, so the compiler makes one loop nest per dtype. */
static inline __attribute__((always_inline)) void ref_chunk(const struct ref_job *j,
							    enum ksmm_dtype t, int64_t n0,
							    int64_t n1)
{
	const int64_t a = j->p->a, b = j->p->b, c = j->p->c, d = j->p->d, B = j->batch;
	const int64_t rows = a * b * d, cols = a * c * d;
	for (int64_t al = 0; al < a; al++)
		for (int64_t be = 0; be < b; be++)
			for (int64_t de = 0; de < d; de++) {
				const int64_t r = al * b * d + be * d + de;
				const int64_t wrow = (al * b + be) * c * d + de;
				if (j->layout == KSMM_BS_LAST) {
					/* y (rows x B): walk contiguous batch columns. */
					double *yr = j->y + r * B;
					for (int64_t n = n0; n < n1; n++)
						yr[n] = 0;
					for (int64_t ga = 0; ga < c; ga++) {
						const double w = ksmm_value(t, j->w, wrow + ga * d);
						const int64_t xr = (al * c * d + ga * d + de) * B;
						for (int64_t n = n0; n < n1; n++)
							yr[n] += w * ksmm_value(t, j->x, xr + n);
					}
				} else {
					/* y (B x rows), x (B x cols). */
					for (int64_t n = n0; n < n1; n++) {
						double s = 0;
						const int64_t xr = n * cols + al * c * d + de;
						for (int64_t ga = 0; ga < c; ga++)
							s += ksmm_value(t, j->w, wrow + ga * d) *
							     ksmm_value(t, j->x, xr + ga * d);
						j->y[n * rows + r] = s;
					}
				}
			}
}

static void ref_task(void *ctx, int64_t chunk)
{
	const struct ref_job *j = ctx;
	int64_t n0 = chunk * REF_CHUNK, n1 = n0 + REF_CHUNK < j->batch ? n0 + REF_CHUNK : j->batch;
	switch (j->t) {
	case KSMM_F32:
		ref_chunk(j, KSMM_F32, n0, n1);
		break;
	case KSMM_F16:
		ref_chunk(j, KSMM_F16, n0, n1);
		break;
	case KSMM_BF16:
		ref_chunk(j, KSMM_BF16, n0, n1);
		break;
	}
}

void ksmm_ref_factor(const struct ksmm_pattern *p, enum ksmm_layout layout, enum ksmm_dtype t,
		     int64_t batch, const void *w, const void *x, double *y)
{
	struct ref_job j = {p, layout, t, batch, w, x, y};
	parallel_for((batch + REF_CHUNK - 1) / REF_CHUNK, ref_task, &j);
}
