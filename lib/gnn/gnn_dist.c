/* The partitioned aggregation (gnn_dist.h). */
#include "gnn/gnn_dist.h"

#include <stdlib.h>
#include <string.h>

#include "gnn/gnn_data.h"
#include "gnn/gnn_model.h"

static void *dalloc(struct gnn_model *m, size_t bytes, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	if (d->nallocs == (int)(sizeof d->allocs / sizeof *d->allocs)) {
		sp_fail(err, "gnn_dist: too many buffers");
		return NULL;
	}
	void *p = m->b->alloc(m->b, bytes ? bytes : 1, err);
	if (p)
		d->allocs[d->nallocs++] = p;
	return p;
}

static int maxk_rows(const struct gnn_model *m)
{
	return m->cfg.nonlinear == GNN_MAXK && !m->cfg.dense_agg;
}

static int index_row_bytes(const struct gnn_model *m)
{
	return m->cfg.maxk * m->b->index_bytes(m->cfg.hidden);
}

int gnn_dist_create(struct gnn_model *m, const struct gnn_part *part, struct gnn_comm *comm,
		    const uint8_t *split, struct sp_err *err)
{
	struct gnn_dist *d = calloc(1, sizeof *d);
	int P = part->size, L = m->cfg.layers;
	if (!d || !(d->off = calloc(4 * (size_t)P, sizeof *d->off)) ||
	    !(d->bytes = calloc(4 * (size_t)P, sizeof *d->bytes)) ||
	    !(d->halo_index = calloc((size_t)(L ? L : 1), sizeof *d->halo_index))) {
		if (d) {
			free(d->off);
			free(d->bytes);
		}
		free(d);
		return sp_fail(err, "out of memory");
	}
	m->dist = d;
	d->part = part;
	d->comm = comm;
	for (int64_t i = 0; i < part->n; i++) {
		const int train = split[i] == GNN_TRAIN;
		d->train_rows_all += train;
		d->train_rows += train && i >= part->lo && i < part->lo + part->nloc;
	}
	const int maxk = maxk_rows(m);
	const size_t H = (size_t)m->cfg.hidden, k = (size_t)m->cfg.maxk;
	const size_t row = maxk ? 4 * k : 4 * H, grad = row, irow = maxk ? index_row_bytes(m) : 0;
	const int halo = part->mode == GNN_EXCHANGE_HALO;
	const size_t sent = (size_t)(halo ? part->nsend : part->maxrows);
	const size_t back = (size_t)(halo ? part->nsend : part->maxrows);
	const size_t recv = (size_t)part->nhalo, C = (size_t)m->nclass;
	if (!(d->send_values = dalloc(m, sent * row, err)) ||
	    (irow && !(d->send_index = dalloc(m, sent * irow, err))) ||
	    !(d->halo_values = dalloc(m, recv * row, err)) ||
	    !(d->halo_grad = dalloc(m, recv * grad, err)) ||
	    !(d->back_grad = dalloc(m, back * grad, err)) ||
	    !(d->tmp = dalloc(m, (size_t)m->n * H * sizeof(float), err)) ||
	    !(d->flag = dalloc(m, sizeof(float), err)) ||
	    !(d->logits_pad = dalloc(m, (size_t)part->maxrows * C * sizeof(float), err)) ||
	    !(d->logits_all = dalloc(m, (size_t)P * (size_t)part->maxrows * C * sizeof(float),
				     err)))
		return -1;
	if (halo && !(d->send_rows = dalloc(m, (size_t)part->nsend * sizeof(int32_t), err)))
		return -1;
	if (halo && m->b->to_device(m->b, d->send_rows, part->send_rows,
				    (size_t)part->nsend * sizeof(int32_t), err))
		return -1;
	/* the received index rows are kept for the layer's backward */
	for (int l = 0; irow && l < L; l++) {
		d->halo_index[l] = m->b->alloc(m->b, recv * irow + 1, err);
		if (!d->halo_index[l])
			return -1;
	}
	return m->b->graph_create(m->b, &part->halo, EDGE_ONES, NULL, 0, &d->halo_graph, err);
}

void gnn_dist_free(struct gnn_model *m)
{
	struct gnn_dist *d = m->dist;
	if (!d)
		return;
	if (d->halo_graph)
		m->b->graph_free(m->b, d->halo_graph);
	for (int i = 0; i < d->nallocs; i++)
		m->b->release(m->b, d->allocs[i]);
	for (int l = 0; l < m->cfg.layers; l++)
		if (d->halo_index[l])
			m->b->release(m->b, d->halo_index[l]);
	free(d->halo_index);
	free(d->off);
	free(d->bytes);
	free(d);
	m->dist = NULL;
}

/* The offsets and sizes of a halo exchange of rows of row_bytes: forward
 * (this rank's send lists out, its halo columns in) or back (the reverse). */
static void lists(struct gnn_dist *d, size_t row_bytes, int back, size_t **so, size_t **sb,
		  size_t **ro, size_t **rb)
{
	const struct gnn_part *p = d->part;
	const int P = p->size;
	*so = d->off;
	*sb = d->bytes;
	*ro = d->off + P;
	*rb = d->bytes + P;
	for (int q = 0; q < P; q++) {
		const size_t sf = (size_t)p->send_first[q] * row_bytes,
			     sc = (size_t)p->send_count[q] * row_bytes,
			     rf = (size_t)p->recv_first[q] * row_bytes,
			     rc = (size_t)p->recv_count[q] * row_bytes;
		(*so)[q] = back ? rf : sf;
		(*sb)[q] = back ? rc : sc;
		(*ro)[q] = back ? sf : rf;
		(*rb)[q] = back ? sc : rc;
	}
}

/* Rows of row_bytes from src to the peers that read them, into dst (the
 * halo columns' rows); returns with the transfer started (halo) or done
 * (all-gather). */
static int send_rows(struct gnn_model *m, const void *src, size_t row_bytes, void *staging,
		     void *dst, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	const struct gnn_part *p = d->part;
	struct gnn_backend *b = m->b;
	if (p->mode == GNN_EXCHANGE_ALLGATHER)
		return b->copy(b, staging, src, (size_t)p->nloc * row_bytes, err) ||
		       d->comm->allgather(d->comm, staging, dst, (size_t)p->maxrows * row_bytes,
					  err);
	size_t *so, *sb, *ro, *rb;
	lists(d, row_bytes, 0, &so, &sb, &ro, &rb);
	return b->gather_rows(b, src, row_bytes, d->send_rows, p->nsend, staging, err) ||
	       d->comm->exchange_start(d->comm, staging, so, sb, dst, ro, rb, err);
}

/* The gradients of the halo columns' rows (width floats a row, in
 * halo_grad) back to the ranks that hold them: return_start starts the
 * transfers (halo; the all-gather's reduce-scatter waits for the finish),
 * the caller queues its own block's part of dx to run beside them, and
 * return_finish adds what came back into dx. */
static int return_start(struct gnn_model *m, int width, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	if (d->part->mode == GNN_EXCHANGE_ALLGATHER)
		return 0;
	size_t *so, *sb, *ro, *rb;
	lists(d, (size_t)width * sizeof(float), 1, &so, &sb, &ro, &rb);
	return d->comm->exchange_start(d->comm, d->halo_grad, so, sb, d->back_grad, ro, rb, err);
}

static int return_finish(struct gnn_model *m, int width, float *dx, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	const struct gnn_part *p = d->part;
	struct gnn_backend *b = m->b;
	if (p->mode == GNN_EXCHANGE_ALLGATHER)
		return d->comm->reduce_scatter_sum(d->comm, d->halo_grad, d->back_grad,
						   p->maxrows * width, err) ||
		       b->axpby(b, 1, d->back_grad, 1, dx, p->nloc * width, err);
	if (d->comm->exchange_join(d->comm, err))
		return -1;
	for (int q = 0; q < p->size; q++)
		if (q != p->rank &&
		    b->add_rows(b, d->back_grad + p->send_first[q] * width,
				d->send_rows + p->send_first[q], p->send_count[q], width, dx, err))
			return -1;
	return 0;
}

int gnn_dist_aggregate(struct gnn_model *m, int l, const float *x, float *y, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	struct gnn_backend *b = m->b;
	const int H = m->cfg.hidden;
	return send_rows(m, x, (size_t)H * sizeof(float), d->send_values, d->halo_values, err) ||
	       b->aggregate(b, m->graph, x, H, y, err) || d->comm->exchange_join(d->comm, err) ||
	       b->aggregate(b, d->halo_graph, d->halo_values, H, d->tmp, err) ||
	       b->axpby(b, 1, d->tmp, 1, y, m->n * H, err);
}

int gnn_dist_aggregate_maxk(struct gnn_model *m, int l, const float *values,
			    const uint16_t *index, float *y, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	struct gnn_backend *b = m->b;
	const int H = m->cfg.hidden, k = m->cfg.maxk;
	return send_rows(m, values, (size_t)k * sizeof(float), d->send_values, d->halo_values,
			 err) ||
	       send_rows(m, index, (size_t)index_row_bytes(m), d->send_index, d->halo_index[l],
			 err) ||
	       b->aggregate_maxk(b, m->graph, values, index, H, k, y, err) ||
	       d->comm->exchange_join(d->comm, err) ||
	       b->aggregate_maxk(b, d->halo_graph, d->halo_values,
				 (const uint16_t *)d->halo_index[l], H, k, d->tmp, err) ||
	       b->axpby(b, 1, d->tmp, 1, y, m->n * H, err);
}

int gnn_dist_aggregate_backward(struct gnn_model *m, int l, const float *dy, float *dx,
				struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const int H = m->cfg.hidden;
	return b->aggregate_backward(b, m->dist->halo_graph, dy, H, m->dist->halo_grad, err) ||
	       return_start(m, H, err) || b->aggregate_backward(b, m->graph, dy, H, dx, err) ||
	       return_finish(m, H, dx, err);
}

int gnn_dist_aggregate_maxk_backward(struct gnn_model *m, int l, const uint16_t *index,
				     const float *dy, float *dvalues, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	struct gnn_backend *b = m->b;
	const int H = m->cfg.hidden, k = m->cfg.maxk;
	return b->aggregate_maxk_backward(b, d->halo_graph, (const uint16_t *)d->halo_index[l], H,
					  k, dy, d->halo_grad, err) ||
	       return_start(m, k, err) ||
	       b->aggregate_maxk_backward(b, m->graph, index, H, k, dy, dvalues, err) ||
	       return_finish(m, k, dvalues, err);
}

int gnn_dist_logits(struct gnn_model *m, float *host, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	const struct gnn_part *p = d->part;
	const size_t C = (size_t)m->nclass, row = C * sizeof(float);
	if (m->b->copy(m->b, d->logits_pad, m->logits, (size_t)p->nloc * row, err) ||
	    d->comm->allgather(d->comm, d->logits_pad, d->logits_all, (size_t)p->maxrows * row,
			       err) ||
	    d->comm->sync(d->comm, err))
		return -1;
	for (int q = 0; q < p->size; q++)
		if (m->b->to_host(m->b, host + (size_t)p->starts[q] * C,
				  d->logits_all + (size_t)q * (size_t)p->maxrows * C,
				  (size_t)(p->starts[q + 1] - p->starts[q]) * row, err))
			return -1;
	return 0;
}

int gnn_dist_agree(struct gnn_model *m, int flag, int *any, struct sp_err *err)
{
	struct gnn_dist *d = m->dist;
	float f = flag ? 1.0f : 0.0f;
	if (m->b->to_device(m->b, d->flag, &f, sizeof f, err) ||
	    d->comm->allreduce_sum(d->comm, d->flag, 1, err) || d->comm->sync(d->comm, err) ||
	    m->b->to_host(m->b, &f, d->flag, sizeof f, err))
		return -1;
	*any = f > 0;
	return 0;
}
