/* maxk_spmm on the GPU: spkit's MaxK-GNN kernels (kernels/maxk/) on the
 * operator's power-law graph (sample_maxk_graph, made and uploaded once at
 * setup with its transpose and row work items). Forward: maxk_topk_gpu
 * (values and 8- or 16-bit column index, n x k), then maxk_forward_gpu
 * (Y = A maxk(X)); backward: maxk_backward_gpu (the kept values' gradient,
 * scattered with atomics from the work items), then maxk_scatter_gpu into
 * the dense dX. The kept values are copied into their tensor in forward (n x
 * k floats) so the test compares them. fp32 throughout, whatever the
 * precision: the MaxK kernels are fp32. */
#include "sample/sample_gpu.cuh"
extern "C" {
#include "maxk/maxk_gpu.h"
#include "maxk/maxk_ref.h"
}

struct maxk_extra {
	struct maxk_dev_graph g;
	void *index;  /* n x k column indices */
	float *dkept; /* n x k */
};

static void maxk_release(void *extra)
{
	struct maxk_extra *e = (struct maxk_extra *)extra;
	if (!e)
		return;
	maxk_dev_graph_free(&e->g);
	gpu_free(e->index);
	gpu_free(e->dkept);
	free(e);
}

int sample_gpu_maxk_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	struct maxk_extra *e = (struct maxk_extra *)calloc(1, sizeof *e);
	if (!e)
		return sp_fail(err, "out of memory for the MaxK state");
	st->extra = e;
	st->release = maxk_release;
	struct csr g;
	float *vals;
	if (sample_maxk_graph(&st->s, &g, &vals, err))
		return -1;
	int rc = maxk_dev_graph_upload(&g, vals, NULL, 0, &e->g, err);
	csr_free(&g);
	free(vals);
	const size_t kept = (size_t)(d->rows * d->k);
	if (rc ||
	    gpu_malloc(&e->index, kept * (size_t)maxk_index_bytes((int)d->cols), "MaxK index", err) ||
	    gpu_malloc((void **)&e->dkept, kept * sizeof(float), "MaxK kept gradients", err))
		return -1;
	return 0;
}

int sample_gpu_maxk_forward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	struct maxk_extra *e = (struct maxk_extra *)st->extra;
	const struct sample_dims *d = &st->s.d;
	float *kept = sample_dev<float>(st, MAXK_KEPT);
	if (maxk_topk_gpu(sample_dev<float>(st, MAXK_X), d->rows, (int)d->cols, (int)d->k, kept,
			  e->index, err))
		return -1;
	return maxk_forward_gpu(&e->g, kept, e->index, (int)d->cols, (int)d->k,
				sample_dev<float>(st, MAXK_Y), err);
}

int sample_gpu_maxk_backward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	struct maxk_extra *e = (struct maxk_extra *)st->extra;
	const struct sample_dims *d = &st->s.d;
	if (maxk_backward_gpu(&e->g, e->index, (int)d->cols, (int)d->k,
			      sample_dev<float>(st, MAXK_DY), e->dkept, err))
		return -1;
	return maxk_scatter_gpu(e->dkept, e->index, d->rows, (int)d->cols, (int)d->k,
				sample_dev<float>(st, MAXK_DX), err);
}
