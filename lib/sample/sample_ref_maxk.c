/* CPU reference of maxk_spmm: MaxK-GNN's layer (lib/maxk/maxk_ref.h) on
 * the operator's graph (sample_maxk_graph). Forward: the top k of each row
 * of X, Y = A maxk(X). Backward: the gradient of the kept values
 * (A^T dY at their columns, through A's transpose, built once at setup),
 * scattered into the dense dX (zero elsewhere). fp32 in and out, sums in
 * double. */
#include <stdlib.h>
#include <string.h>

#include "maxk/maxk_ref.h"
#include "sample/sample_ref.h"

struct maxk_cpu {
	struct csr g, at;
	float *vals;
	struct cbsr kept;
	float *dkept; /* n x k */
};

static void maxk_cpu_release(void *extra)
{
	struct maxk_cpu *m = extra;
	if (!m)
		return;
	csr_free(&m->g);
	csr_free(&m->at);
	free(m->vals);
	cbsr_free(&m->kept);
	free(m->dkept);
	free(m);
}

int sample_ref_maxk_prepare(struct sample_cpu_state *st, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	struct maxk_cpu *m = calloc(1, sizeof *m);
	if (!m)
		return sp_fail(err, "out of memory for the MaxK state");
	st->extra = m;
	st->release = maxk_cpu_release;
	if (sample_maxk_graph(&st->s, &m->g, &m->vals, err) ||
	    csr_transpose(&m->g, m->vals, &m->at, err) ||
	    cbsr_alloc(&m->kept, d->rows, (int)d->cols, (int)d->k, err))
		return -1;
	m->dkept = malloc((size_t)(d->rows * d->k) * sizeof(float));
	if (!m->dkept)
		return sp_fail(err, "out of memory for the kept gradients");
	return 0;
}

int sample_ref_maxk_forward(void *state, struct sp_err *err)
{
	struct sample_cpu_state *st = state;
	struct maxk_cpu *m = st->extra;
	maxk_topk_fill(sample_ref_values(&st->s, MAXK_X), &m->kept);
	memcpy(sample_ref_values(&st->s, MAXK_KEPT), m->kept.values,
	       (size_t)(st->s.d.rows * st->s.d.k) * sizeof(float));
	maxk_spgemm_float(&m->g, m->vals, &m->kept, sample_ref_values(&st->s, MAXK_Y));
	return 0;
}

int sample_ref_maxk_backward(void *state, struct sp_err *err)
{
	struct sample_cpu_state *st = state;
	struct maxk_cpu *m = st->extra;
	maxk_sspmm_transposed(&m->at, &m->kept, sample_ref_values(&st->s, MAXK_DY), m->dkept);
	const struct cbsr dense = {m->kept.n, m->kept.h, m->kept.k, m->dkept, m->kept.index};
	cbsr_to_dense(&dense, sample_ref_values(&st->s, MAXK_DX));
	return 0;
}
