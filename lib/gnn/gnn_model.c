/* The GNN models against the backend table (gnn_model.h). Shapes: n nodes,
 * H hidden, k kept, C classes; matrices row-major; a Linear's weight is
 * (out x in) as PyTorch stores it, so y = x W^T + b is gemm(0, 1, ...);
 * GCN's weight is (in x out) as DGL's GraphConv stores it. */
#include "gnn/gnn_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/rng.h"
#include "formats/npz.h"
#include "gnn/gnn_dist.h"
#include "gnn/gnn_dropout.h"
#include "gnn/gnn_part.h"

#define GNN_MAX_LAYERS 64
/* Parameter tensors start at multiples of 64 floats (256 bytes), the
 * alignment cuBLAS and vector loads like. */
#define PARAM_ALIGN 64

const char *const gnn_conv_names[] = {
	[GNN_SAGE] = "sage", [GNN_GCN] = "gcn", [GNN_GIN] = "gin", NULL,
};
const char *const gnn_nonlinear_names[] = {[GNN_RELU] = "relu", [GNN_MAXK] = "maxk", NULL};

enum init { INIT_ZERO, INIT_ONE, INIT_GLOROT, INIT_GLOROT_RELU, INIT_FAN_IN };

struct gnn_act {
	float *h;          /* ReLU: output, n x H */
	float *values;     /* MaxK: kept values, n x k */
	uint16_t *index;   /* MaxK: their columns, n x k */
	float *drop;       /* dropout's output: n x H (ReLU) or n x k (MaxK) */
	float *scattered;  /* MaxK: dense n x H form, allocated when first needed */
	/* Set by each forward. */
	const float *out_values; /* MaxK: values or drop */
	const float *out_dense;  /* ReLU: h or drop; MaxK: scattered or NULL */
};

struct gnn_conv_buf {
	float *agg;    /* aggregation (GIN: (1 + eps) a + neighbour sum) */
	float *out;    /* conv output */
	float *normed; /* LayerNorm output, or out */
	float *mean, *rstd;
};

static void *balloc(struct gnn_model *m, size_t bytes, struct sp_err *err)
{
	void **grown = buf_grow_array(m->allocs, &m->cap_allocs, m->nallocs + 1, sizeof *grown);
	if (!grown) {
		sp_fail(err, "out of memory");
		return NULL;
	}
	m->allocs = grown;
	void *p = m->b->alloc(m->b, bytes, err);
	if (p)
		m->allocs[m->nallocs++] = p;
	return p;
}

/* A tensor named by fmt: a rows x cols matrix, or a vector of cols when
 * rows is 0. */
__attribute__((format(printf, 6, 7)))
static int64_t add_param(struct gnn_model *m, int64_t rows, int64_t cols, enum init init,
			 int64_t fan_in, const char *fmt, ...)
{
	struct gnn_param *p = &m->params[m->nparam_tensors++];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->name, sizeof p->name, fmt, ap);
	va_end(ap);
	p->offset = m->nparams;
	p->ndim = rows ? 2 : 1;
	p->rows = rows ? rows : 1;
	p->cols = cols;
	p->init = init;
	p->fan_in = fan_in;
	m->nparams += (p->rows * cols + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
	return p->offset;
}

/* The tensors of the model, in the order of its state_dict. */
static int layout_params(struct gnn_model *m, struct sp_err *err)
{
	const struct gnn_model_config *c = &m->cfg;
	int64_t H = c->hidden;
	m->params = calloc((size_t)(4 + 6 * c->layers), sizeof *m->params);
	m->lp = calloc((size_t)(c->layers + 1), sizeof *m->lp);
	if (!m->params || !m->lp)
		return sp_fail(err, "out of memory");
	m->lin_in_w = add_param(m, H, m->nfeat, INIT_GLOROT, m->nfeat, "lin_in.weight");
	m->lin_in_b = add_param(m, 0, H, INIT_FAN_IN, m->nfeat, "lin_in.bias");
	for (int l = 0; l < c->layers; l++) {
		struct gnn_layer_params *lp = &m->lp[l];
		*lp = (struct gnn_layer_params){-1, -1, -1, -1, -1, -1, -1};
		switch (c->conv) {
		case GNN_SAGE:
			lp->w_self = add_param(m, H, H, INIT_GLOROT_RELU, H,
					       "layers.%d.fc_self.weight", l);
			lp->w_neigh = add_param(m, H, H, INIT_GLOROT_RELU, H,
						"layers.%d.fc_neigh.weight", l);
			lp->bias = add_param(m, 0, H, INIT_ZERO, H, "layers.%d.bias", l);
			break;
		case GNN_GCN:
			lp->w = add_param(m, H, H, INIT_GLOROT, H, "layers.%d.weight", l);
			lp->bias = add_param(m, 0, H, INIT_ZERO, H, "layers.%d.bias", l);
			break;
		case GNN_GIN:
			lp->eps = add_param(m, 0, 1, INIT_ZERO, 1, "layers.%d.eps", l);
			lp->w = add_param(m, H, H, INIT_FAN_IN, H, "layers.%d.apply_func.weight", l);
			lp->bias = add_param(m, 0, H, INIT_FAN_IN, H, "layers.%d.apply_func.bias", l);
			break;
		}
		if (c->norm) {
			lp->gamma = add_param(m, 0, H, INIT_ONE, H, "norms.%d.weight", l);
			lp->beta = add_param(m, 0, H, INIT_ZERO, H, "norms.%d.bias", l);
		}
	}
	m->lin_out_w = add_param(m, m->nclass, H, INIT_GLOROT, H, "lin_out.weight");
	m->lin_out_b = add_param(m, 0, m->nclass, INIT_FAN_IN, H, "lin_out.bias");
	return 0;
}

/* Each tensor draws from its own stream of the seed, so adding a layer
 * does not change the others' initial values. */
static void init_params(const struct gnn_model *m, float *host)
{
	for (int i = 0; i < m->nparam_tensors; i++) {
		const struct gnn_param *p = &m->params[i];
		int64_t count = p->rows * p->cols;
		double bound = 0;
		switch (p->init) {
		case INIT_ONE:
			for (int64_t j = 0; j < count; j++)
				host[p->offset + j] = 1;
			continue;
		case INIT_ZERO:
			continue;
		case INIT_GLOROT:
			bound = sqrt(6.0 / (double)(p->rows + p->cols));
			break;
		case INIT_GLOROT_RELU:
			bound = sqrt(2.0) * sqrt(6.0 / (double)(p->rows + p->cols));
			break;
		case INIT_FAN_IN:
			bound = 1 / sqrt((double)p->fan_in);
			break;
		}
		struct rng r;
		rng_init(&r, m->cfg.seed, 0x6e6e0000u + (uint64_t)i);
		for (int64_t j = 0; j < count; j++)
			host[p->offset + j] = (float)((2 * rng_uniform(&r) - 1) * bound);
	}
}

static int check_config(const struct gnn_model_config *c, const struct gnn_dataset *d,
			struct sp_err *err)
{
	if (c->layers < 0 || c->layers > GNN_MAX_LAYERS)
		return sp_fail(err, "layers: %d is outside 0..%d", c->layers, GNN_MAX_LAYERS);
	if (c->hidden < 1 || c->hidden > MAXK_MAX_WIDTH)
		return sp_fail(err, "hidden width %d is outside 1..%d", c->hidden, MAXK_MAX_WIDTH);
	if (c->nonlinear == GNN_MAXK && (c->maxk < 1 || c->maxk > c->hidden))
		return sp_fail(err, "k = %d is outside 1..%d (the hidden width)", c->maxk,
			       c->hidden);
	if (!(c->dropout >= 0 && c->dropout < 1))
		return sp_fail(err, "dropout %g is outside [0, 1)", c->dropout);
	if (d->n < 1 || d->nfeat < 1 || d->nclass < 1)
		return sp_fail(err, "%s: empty dataset (%lld nodes, %d features, %d classes)",
			       d->name, (long long)d->n, d->nfeat, d->nclass);
	return 0;
}

static int upload(struct gnn_model *m, void **dst, const void *src, size_t bytes,
		  struct sp_err *err)
{
	*dst = balloc(m, bytes, err);
	return *dst ? m->b->to_device(m->b, *dst, src, bytes, err) : -1;
}

static const enum edge_norm conv_norms[] = {[GNN_SAGE] = EDGE_MEAN, [GNN_GCN] = EDGE_GCN,
					    [GNN_GIN] = EDGE_ONES};

enum edge_norm gnn_model_edge_norm(enum gnn_conv conv)
{
	return conv_norms[conv];
}

static int create_graph(struct gnn_model *m, const struct csr *g, struct sp_err *err)
{
	/* No .warp4 records: a backend that uses them builds them itself. A
	 * rank's block carries the whole graph's edge values. */
	return m->b->graph_create(m->b, g, conv_norms[m->cfg.conv], NULL, 0, &m->graph, err);
}

static int alloc_buffers(struct gnn_model *m, struct sp_err *err)
{
	const struct gnn_model_config *c = &m->cfg;
	size_t n = (size_t)m->n, H = (size_t)c->hidden, k = (size_t)c->maxk;
	size_t nh = n * H * sizeof(float), nk = n * k * sizeof(float);
	int slots = c->layers > 0 ? c->layers : 1;
	m->act = calloc((size_t)slots, sizeof *m->act);
	m->conv = calloc((size_t)c->layers + 1, sizeof *m->conv);
	if (!m->act || !m->conv)
		return sp_fail(err, "out of memory");
	size_t P = (size_t)m->nparams * sizeof(float);
	if (!(m->param = balloc(m, P, err)) || !(m->grad = balloc(m, P, err)) ||
	    !(m->adam_m1 = balloc(m, P, err)) || !(m->adam_m2 = balloc(m, P, err)) ||
	    !(m->x0 = balloc(m, nh, err)) || !(m->dx = balloc(m, nh, err)) ||
	    !(m->dtmp1 = balloc(m, nh, err)) || !(m->dtmp2 = balloc(m, nh, err)) ||
	    !(m->logits = balloc(m, n * (size_t)m->nclass * sizeof(float), err)) ||
	    !(m->dlogits = balloc(m, n * (size_t)m->nclass * sizeof(float), err)) ||
	    !(m->loss = balloc(m, sizeof(float), err)))
		return -1;
	for (int s = 0; s < slots; s++) {
		struct gnn_act *a = &m->act[s];
		if (c->nonlinear == GNN_RELU) {
			if (!(a->h = balloc(m, nh, err)) ||
			    (c->dropout > 0 && !(a->drop = balloc(m, nh, err))))
				return -1;
		} else if (!(a->values = balloc(m, nk, err)) ||
			   !(a->index = balloc(m, n * k * sizeof(uint16_t), err)) ||
			   (c->dropout > 0 && !(a->drop = balloc(m, nk, err)))) {
			return -1;
		}
	}
	for (int l = 0; l < c->layers; l++) {
		struct gnn_conv_buf *cb = &m->conv[l];
		if (!(cb->agg = balloc(m, nh, err)) || !(cb->out = balloc(m, nh, err)))
			return -1;
		cb->normed = cb->out;
		if (c->norm && (!(cb->normed = balloc(m, nh, err)) ||
				!(cb->mean = balloc(m, n * sizeof(float), err)) ||
				!(cb->rstd = balloc(m, n * sizeof(float), err))))
			return -1;
	}
	if (c->nonlinear == GNN_MAXK &&
	    (!(m->dk1 = balloc(m, nk, err)) || !(m->dk2 = balloc(m, nk, err))))
		return -1;
	return 0;
}

static int create(struct gnn_backend *b, const struct gnn_dataset *d,
		  const struct gnn_model_config *cfg, const struct gnn_part *part,
		  struct gnn_comm *comm, struct gnn_model **out, struct sp_err *err)
{
	*out = NULL;
	if (check_config(cfg, d, err))
		return -1;
	struct gnn_model *m = calloc(1, sizeof *m);
	if (!m)
		return sp_fail(err, "out of memory");
	m->cfg = *cfg;
	if (cfg->nonlinear == GNN_RELU)
		m->cfg.maxk = 0;
	m->b = b;
	m->n = part ? part->nloc : d->n;
	m->row0 = part ? part->lo : 0;
	m->nfeat = d->nfeat;
	m->nclass = d->nclass;
	m->multilabel = d->multilabel;
	float *host = NULL;
	size_t n = (size_t)m->n, r0 = (size_t)m->row0;
	if (layout_params(m, err) || alloc_buffers(m, err) ||
	    (part && gnn_dist_create(m, part, comm, d->split, err)))
		goto fail;
	host = calloc((size_t)m->nparams, sizeof *host);
	if (!host) {
		sp_fail(err, "out of memory for %lld parameters", (long long)m->nparams);
		goto fail;
	}
	init_params(m, host);
	const size_t F = (size_t)d->nfeat, C = (size_t)d->nclass;
	if (b->to_device(b, m->param, host, (size_t)m->nparams * sizeof *host, err) ||
	    create_graph(m, part ? &part->own : &d->graph, err) ||
	    upload(m, (void **)&m->features, d->features + r0 * F, n * F * sizeof(float), err) ||
	    upload(m, (void **)&m->split, d->split + r0, n, err))
		goto fail;
	if (d->multilabel ? upload(m, (void **)&m->targets, d->targets + r0 * C,
				   n * C * sizeof(float), err)
			  : upload(m, (void **)&m->labels, d->labels + r0, n * sizeof(int32_t),
				   err))
		goto fail;
	free(host);
	*out = m;
	return 0;
fail:
	free(host);
	gnn_model_free(m);
	return -1;
}

int gnn_model_create(struct gnn_backend *b, const struct gnn_dataset *d,
		     const struct gnn_model_config *cfg, struct gnn_model **out,
		     struct sp_err *err)
{
	return create(b, d, cfg, NULL, NULL, out, err);
}

int gnn_model_create_part(struct gnn_backend *b, const struct gnn_dataset *d,
			  const struct gnn_model_config *cfg, const struct gnn_part *part,
			  struct gnn_comm *comm, struct gnn_model **out, struct sp_err *err)
{
	if (part->n != d->n)
		return sp_fail(err, "partition of %lld rows for a data set of %lld",
			       (long long)part->n, (long long)d->n);
	return create(b, d, cfg, part, comm, out, err);
}

void gnn_model_free(struct gnn_model *m)
{
	if (!m)
		return;
	gnn_dist_free(m);
	if (m->graph)
		m->b->graph_free(m->b, m->graph);
	for (size_t i = 0; i < m->nallocs; i++)
		m->b->release(m->b, m->allocs[i]);
	free(m->allocs);
	free(m->params);
	free(m->lp);
	free(m->act);
	free(m->conv);
	free(m);
}

uint64_t gnn_dropout_seed(uint64_t seed, uint64_t epoch, int layer)
{
	uint64_t z = seed ^ (epoch * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)layer << 48);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* y (n x out) = x (n x in) W^T + bias. */
static int linear(struct gnn_model *m, const float *x, int64_t in, int64_t out, int64_t w,
		  int64_t bias, float *y, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	return b->gemm(b, 0, 1, m->n, out, in, 1, x, m->param + w, 0, y, err) ||
	       b->bias_add(b, y, m->param + bias, m->n, out, err);
}

/* Does slot s need its output as a dense matrix? SAGE's fc_self and GIN's
 * (1 + eps) term use it, as do the baseline's lin_out and the dense
 * aggregation; GCN with the MaxK kernels never does. */
static int needs_dense(const struct gnn_model *m)
{
	return m->cfg.conv != GNN_GCN || m->cfg.dense_agg || m->cfg.layers == 0;
}

static float dropout_rate(const struct gnn_model *m)
{
	return m->train_mode ? m->cfg.dropout : 0;
}

/* Slot s's dropout seed for this model's rows: the masks of the whole
 * graph's rows, of width H (ReLU) or k (MaxK) each, from row0 on. */
static uint64_t row_seed(const struct gnn_model *m, int s)
{
	const uint64_t width = (uint64_t)(m->cfg.nonlinear == GNN_RELU ? m->cfg.hidden : m->cfg.maxk);
	return gnn_dropout_shift(gnn_dropout_seed(m->cfg.seed, m->epoch, s),
				 (uint64_t)m->row0 * width);
}

/* Slot s: the nonlinearity of z, then dropout. */
static int act_forward(struct gnn_model *m, int s, const float *z, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	struct gnn_act *a = &m->act[s];
	int H = m->cfg.hidden, k = m->cfg.maxk;
	float p = dropout_rate(m);
	uint64_t seed = row_seed(m, s);
	if (m->cfg.nonlinear == GNN_RELU) {
		a->out_dense = a->h;
		if (b->relu(b, z, a->h, m->n * H, err))
			return -1;
		if (p > 0) {
			a->out_dense = a->drop;
			return b->dropout(b, a->h, a->drop, m->n * H, p, seed, err);
		}
		return 0;
	}
	a->out_values = p > 0 ? a->drop : a->values;
	a->out_dense = NULL;
	if (b->topk(b, z, m->n, H, k, a->values, a->index, err) ||
	    (p > 0 && b->dropout(b, a->values, a->drop, m->n * k, p, seed, err)))
		return -1;
	if (!needs_dense(m))
		return 0;
	if (!a->scattered &&
	    !(a->scattered = balloc(m, (size_t)m->n * (size_t)H * sizeof(float), err)))
		return -1;
	a->out_dense = a->scattered;
	return b->scatter(b, a->out_values, a->index, m->n, H, k, a->scattered, err);
}

static int uses_maxk_kernels(const struct gnn_model *m)
{
	return m->cfg.nonlinear == GNN_MAXK && !m->cfg.dense_agg;
}

/* Layer l's aggregations over the whole graph: the backend's, or the
 * partitioned one (gnn_dist.h). */
static int agg_dense(struct gnn_model *m, int l, const float *x, float *y, struct sp_err *err)
{
	return m->dist ? gnn_dist_aggregate(m, l, x, y, err)
		       : m->b->aggregate(m->b, m->graph, x, m->cfg.hidden, y, err);
}

static int agg_dense_backward(struct gnn_model *m, int l, const float *dy, float *dx,
			      struct sp_err *err)
{
	return m->dist ? gnn_dist_aggregate_backward(m, l, dy, dx, err)
		       : m->b->aggregate_backward(m->b, m->graph, dy, m->cfg.hidden, dx, err);
}

static int agg_maxk(struct gnn_model *m, int l, const float *values, const uint16_t *index,
		    float *y, struct sp_err *err)
{
	return m->dist ? gnn_dist_aggregate_maxk(m, l, values, index, y, err)
		       : m->b->aggregate_maxk(m->b, m->graph, values, index, m->cfg.hidden,
					      m->cfg.maxk, y, err);
}

static int agg_maxk_backward(struct gnn_model *m, int l, const uint16_t *index, const float *dy,
			     float *dvalues, struct sp_err *err)
{
	return m->dist ? gnn_dist_aggregate_maxk_backward(m, l, index, dy, dvalues, err)
		       : m->b->aggregate_maxk_backward(m->b, m->graph, index, m->cfg.hidden,
						       m->cfg.maxk, dy, dvalues, err);
}

static int conv_forward(struct gnn_model *m, int l, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const struct gnn_act *a = &m->act[l];
	struct gnn_conv_buf *c = &m->conv[l];
	const struct gnn_layer_params *lp = &m->lp[l];
	const float *P = m->param;
	int64_t n = m->n, H = m->cfg.hidden;
	int rc = uses_maxk_kernels(m) ? agg_maxk(m, l, a->out_values, a->index, c->agg, err)
				      : agg_dense(m, l, a->out_dense, c->agg, err);
	if (rc)
		return -1;
	switch (m->cfg.conv) {
	case GNN_SAGE:
		rc = b->gemm(b, 0, 1, n, H, H, 1, a->out_dense, P + lp->w_self, 0, c->out, err) ||
		     b->gemm(b, 0, 1, n, H, H, 1, c->agg, P + lp->w_neigh, 1, c->out, err);
		break;
	case GNN_GCN:
		rc = b->gemm(b, 0, 0, n, H, H, 1, c->agg, P + lp->w, 0, c->out, err);
		break;
	case GNN_GIN:
		rc = b->axpy_eps(b, P + lp->eps, a->out_dense, c->agg, n * H, err) ||
		     b->gemm(b, 0, 1, n, H, H, 1, c->agg, P + lp->w, 0, c->out, err);
		break;
	}
	if (rc || b->bias_add(b, c->out, P + lp->bias, n, H, err))
		return -1;
	if (!m->cfg.norm)
		return 0;
	return b->layernorm(b, c->out, P + lp->gamma, P + lp->beta, n, H, c->normed, c->mean,
			    c->rstd, err);
}

int gnn_model_forward(struct gnn_model *m, int train, uint64_t epoch, struct sp_err *err)
{
	m->train_mode = train;
	m->epoch = epoch;
	int H = m->cfg.hidden;
	if (linear(m, m->features, m->nfeat, H, m->lin_in_w, m->lin_in_b, m->x0, err))
		return -1;
	const float *z = m->x0;
	for (int l = 0; l < m->cfg.layers; l++) {
		if (act_forward(m, l, z, err) || conv_forward(m, l, err))
			return -1;
		z = m->conv[l].normed;
	}
	if (m->cfg.layers == 0) {
		if (act_forward(m, 0, z, err))
			return -1;
		z = m->act[0].out_dense;
	}
	return linear(m, z, H, m->nclass, m->lin_out_w, m->lin_out_b, m->logits, err);
}

/* Partitioned, each rank's loss is the mean over its training rows: its
 * share of the whole graph's mean is that times its rows' fraction, and
 * the loss is the sum of the shares. */
static int loss_share(struct gnn_model *m, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const struct gnn_dist *d = m->dist;
	const float share = d->train_rows_all ? (float)((double)d->train_rows /
							 (double)d->train_rows_all)
					      : 0.0f;
	return b->axpby(b, share, m->dlogits, 0, m->dlogits, m->n * m->nclass, err) ||
	       b->axpby(b, share, m->loss, 0, m->loss, 1, err) ||
	       d->comm->allreduce_sum(d->comm, m->loss, 1, err);
}

int gnn_model_loss(struct gnn_model *m, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	int rc = m->multilabel ? b->bce(b, m->logits, m->targets, m->split, GNN_TRAIN, m->n,
					m->nclass, m->dlogits, m->loss, err)
			       : b->softmax_xent(b, m->logits, m->labels, m->split, GNN_TRAIN,
						 m->n, m->nclass, m->dlogits, m->loss, err);
	return rc || (m->dist && loss_share(m, err)) ? -1 : 0;
}

/* Slot s's backward: from the gradient of its output, given densely
 * (n x H: dense) or as the gradient of the kept values after dropout
 * (n x k: kept, MaxK only), to the gradient of its input z in m->dx.
 * dense may be m->dx. */
static int act_backward(struct gnn_model *m, int s, float *dense, float *kept, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const struct gnn_act *a = &m->act[s];
	int H = m->cfg.hidden, k = m->cfg.maxk;
	float p = dropout_rate(m);
	uint64_t seed = row_seed(m, s);
	if (m->cfg.nonlinear == GNN_RELU)
		return (p > 0 && b->dropout(b, dense, dense, m->n * H, p, seed, err)) ||
		       b->relu_backward(b, a->h, dense, m->dx, m->n * H, err);
	if (dense) {
		kept = m->dk1;
		if (b->gather(b, dense, a->index, m->n, H, k, kept, err))
			return -1;
	}
	return (p > 0 && b->dropout(b, kept, kept, m->n * k, p, seed, err)) ||
	       b->scatter(b, kept, a->index, m->n, H, k, m->dx, err);
}

/* Layer l's conv backward from dc, the gradient of its output: the
 * parameter gradients, and the gradient of its input (the slot's output),
 * densely in *dense or, with the MaxK kernels, as kept values in *kept.
 * g1 and g2 are n x H scratch other than dc. */
static int conv_backward(struct gnn_model *m, int l, const float *dc, float *g1, float *g2,
			 float **dense, float **kept, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const struct gnn_act *a = &m->act[l];
	const struct gnn_conv_buf *c = &m->conv[l];
	const struct gnn_layer_params *lp = &m->lp[l];
	const float *P = m->param;
	float *G = m->grad;
	int64_t n = m->n, H = m->cfg.hidden;
	int k = m->cfg.maxk, maxk = uses_maxk_kernels(m);
	*dense = maxk ? NULL : g2;
	*kept = maxk ? m->dk1 : NULL;
	if (b->col_sum(b, dc, n, H, 0, G + lp->bias, err))
		return -1;
	switch (m->cfg.conv) {
	case GNN_SAGE:
		/* dW_self = dc^T a, dW_neigh = dc^T agg, d(agg) = dc W_neigh,
		 * da = A^T d(agg) + dc W_self. */
		if (b->gemm(b, 1, 0, H, H, n, 1, dc, a->out_dense, 0, G + lp->w_self, err) ||
		    b->gemm(b, 1, 0, H, H, n, 1, dc, c->agg, 0, G + lp->w_neigh, err) ||
		    b->gemm(b, 0, 0, n, H, H, 1, dc, P + lp->w_neigh, 0, g1, err))
			return -1;
		if (!maxk)
			return agg_dense_backward(m, l, g1, g2, err) ||
			       b->gemm(b, 0, 0, n, H, H, 1, dc, P + lp->w_self, 1, g2, err);
		return agg_maxk_backward(m, l, a->index, g1, m->dk1, err) ||
		       b->gemm(b, 0, 0, n, H, H, 1, dc, P + lp->w_self, 0, g2, err) ||
		       b->gather(b, g2, a->index, n, (int)H, k, m->dk2, err) ||
		       b->axpby(b, 1, m->dk2, 1, m->dk1, n * k, err);
	case GNN_GCN:
		/* dW = agg^T dc, d(agg) = dc W^T, da = A^T d(agg). */
		if (b->gemm(b, 1, 0, H, H, n, 1, c->agg, dc, 0, G + lp->w, err) ||
		    b->gemm(b, 0, 1, n, H, H, 1, dc, P + lp->w, 0, g1, err))
			return -1;
		if (!maxk)
			return agg_dense_backward(m, l, g1, g2, err);
		return agg_maxk_backward(m, l, a->index, g1, m->dk1, err);
	case GNN_GIN:
		/* dW = dc^T s, ds = dc W, d(eps) = <ds, a>, da = A^T ds + (1 + eps) ds. */
		if (b->gemm(b, 1, 0, H, H, n, 1, dc, c->agg, 0, G + lp->w, err) ||
		    b->gemm(b, 0, 0, n, H, H, 1, dc, P + lp->w, 0, g1, err))
			return -1;
		if (!maxk)
			return b->dot(b, g1, a->out_dense, n * H, 0, G + lp->eps, err) ||
			       agg_dense_backward(m, l, g1, g2, err) ||
			       b->axpy_eps(b, P + lp->eps, g1, g2, n * H, err);
		/* a is zero off the kept positions, so <ds, a> needs only those. */
		return b->gather(b, g1, a->index, n, (int)H, k, m->dk2, err) ||
		       b->dot(b, m->dk2, a->out_values, n * k, 0, G + lp->eps, err) ||
		       agg_maxk_backward(m, l, a->index, g1, m->dk1, err) ||
		       b->axpy_eps(b, P + lp->eps, m->dk2, m->dk1, n * k, err);
	}
	return 0;
}

int gnn_model_backward(struct gnn_model *m, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const struct gnn_model_config *c = &m->cfg;
	float *G = m->grad;
	int64_t n = m->n, H = c->hidden, C = m->nclass;
	int L = c->layers;
	const float *z = L ? m->conv[L - 1].normed : m->act[0].out_dense;
	/* lin_out: dW = dlogits^T z, dz = dlogits W. */
	if (b->gemm(b, 1, 0, C, H, n, 1, m->dlogits, z, 0, G + m->lin_out_w, err) ||
	    b->col_sum(b, m->dlogits, n, C, 0, G + m->lin_out_b, err) ||
	    b->gemm(b, 0, 0, n, H, C, 1, m->dlogits, m->param + m->lin_out_w, 0, m->dx, err))
		return -1;
	if (L == 0 && act_backward(m, 0, m->dx, NULL, err))
		return -1;
	for (int l = L - 1; l >= 0; l--) {
		const struct gnn_conv_buf *cb = &m->conv[l];
		const struct gnn_layer_params *lp = &m->lp[l];
		float *dc = m->dx, *g1 = m->dtmp1, *dense, *kept;
		if (c->norm) {
			dc = m->dtmp1;
			g1 = m->dx;
			if (b->layernorm_backward(b, cb->out, m->dx, m->param + lp->gamma, cb->mean,
						  cb->rstd, n, H, dc, G + lp->gamma, G + lp->beta, err))
				return -1;
		}
		if (conv_backward(m, l, dc, g1, m->dtmp2, &dense, &kept, err) ||
		    act_backward(m, l, dense, kept, err))
			return -1;
	}
	/* lin_in: dW = dz^T features. Partitioned, each rank's gradients are
	 * sums over its rows: the whole graph's are their sum. */
	return b->gemm(b, 1, 0, H, m->nfeat, n, 1, m->dx, m->features, 0, G + m->lin_in_w, err) ||
	       b->col_sum(b, m->dx, n, H, 0, G + m->lin_in_b, err) ||
	       (m->dist && m->dist->comm->allreduce_sum(m->dist->comm, G, m->nparams, err));
}

int gnn_model_sync(struct gnn_model *m, struct sp_err *err)
{
	return m->dist ? m->dist->comm->sync(m->dist->comm, err) : m->b->sync(m->b, err);
}

int gnn_model_logits(struct gnn_model *m, float *host, struct sp_err *err)
{
	if (m->dist)
		return gnn_dist_logits(m, host, err);
	return m->b->to_host(m->b, host, m->logits, (size_t)m->n * (size_t)m->nclass * sizeof *host,
			     err);
}

int gnn_model_agree(struct gnn_model *m, int flag, int *any, struct sp_err *err)
{
	if (m->dist)
		return gnn_dist_agree(m, flag, any, err);
	*any = flag != 0;
	return 0;
}

int gnn_model_adam(struct gnn_model *m, float lr, float weight_decay, int64_t t,
		   struct sp_err *err)
{
	return m->b->adam(m->b, m->param, m->grad, m->adam_m1, m->adam_m2, m->nparams, lr, 0.9f,
			  0.999f, 1e-8f, weight_decay, t, err);
}

/* Largest |x - ref| and |ref| over count floats on the backend, read in
 * blocks so the host holds little. */
static int compare_blocks(struct gnn_backend *b, const float *x, const float *ref, int64_t count,
			  double *max_diff, double *max_ref, struct sp_err *err)
{
	enum { BLOCK = 1 << 18 };
	float *hx = malloc(BLOCK * sizeof *hx), *hr = malloc(BLOCK * sizeof *hr);
	int rc = hx && hr ? 0 : sp_fail(err, "out of memory");
	*max_diff = *max_ref = 0;
	for (int64_t at = 0; !rc && at < count; at += BLOCK) {
		size_t len = (size_t)(count - at < BLOCK ? count - at : BLOCK);
		rc = b->to_host(b, hx, x + at, len * sizeof *hx, err) ||
		     b->to_host(b, hr, ref + at, len * sizeof *hr, err);
		for (size_t i = 0; !rc && i < len; i++) {
			double d = fabs((double)hx[i] - hr[i]), r = fabs((double)hr[i]);
			/* A NaN difference must fail the check, not vanish in a max. */
			*max_diff = d > *max_diff || isnan(d) ? d : *max_diff;
			*max_ref = r > *max_ref ? r : *max_ref;
		}
	}
	free(hx);
	free(hr);
	return rc ? -1 : 0;
}

static double relative(double diff, double ref)
{
	return ref > 0 ? diff / ref : diff;
}

int gnn_model_validate(struct gnn_model *m, double *max_err, struct sp_err *err)
{
	struct gnn_backend *b = m->b;
	const struct gnn_model_config *c = &m->cfg;
	if (c->nonlinear != GNN_MAXK || c->layers < 1)
		return sp_fail(err, "kernel validation needs the MaxK nonlinearity and a layer");
	const struct gnn_act *a = &m->act[0];
	int64_t n = m->n;
	int H = c->hidden, k = c->maxk;
	double fdiff, fref, bdiff, bref;
	/* Forward: A scatter(topk(x0)) both ways; then the backward of both
	 * with the dense result as the incoming gradient. */
	if (linear(m, m->features, m->nfeat, H, m->lin_in_w, m->lin_in_b, m->x0, err) ||
	    b->topk(b, m->x0, n, H, k, a->values, a->index, err) ||
	    b->scatter(b, a->values, a->index, n, H, k, m->dtmp1, err) ||
	    b->aggregate_maxk(b, m->graph, a->values, a->index, H, k, m->dtmp2, err) ||
	    b->aggregate(b, m->graph, m->dtmp1, H, m->dx, err) ||
	    compare_blocks(b, m->dtmp2, m->dx, n * H, &fdiff, &fref, err) ||
	    b->aggregate_maxk_backward(b, m->graph, a->index, H, k, m->dx, m->dk1, err) ||
	    b->aggregate_backward(b, m->graph, m->dx, H, m->dtmp1, err) ||
	    b->gather(b, m->dtmp1, a->index, n, H, k, m->dk2, err) ||
	    compare_blocks(b, m->dk1, m->dk2, n * k, &bdiff, &bref, err))
		return -1;
	double fe = relative(fdiff, fref), be = relative(bdiff, bref);
	*max_err = fe > be || isnan(fe) ? fe : be;
	return 0;
}

int gnn_model_find_param(const struct gnn_model *m, const char *name)
{
	for (int i = 0; i < m->nparam_tensors; i++)
		if (!strcmp(m->params[i].name, name))
			return i;
	return -1;
}

int gnn_model_save(const struct gnn_model *m, const char *path, struct sp_err *err)
{
	float *host = malloc((size_t)m->nparams * sizeof *host);
	if (!host)
		return sp_fail(err, "out of memory");
	struct npz_writer w;
	if (m->b->to_host(m->b, host, m->param, (size_t)m->nparams * sizeof *host, err) ||
	    npz_writer_open(&w, path, 0, err)) {
		free(host);
		return -1;
	}
	for (int i = 0; i < m->nparam_tensors; i++) {
		const struct gnn_param *p = &m->params[i];
		struct npy_array arr = {.dtype = NPY_F4, .itemsize = 4, .ndim = p->ndim,
					.data = host + p->offset};
		arr.shape[0] = p->ndim == 2 ? p->rows : p->cols;
		arr.shape[1] = p->cols;
		if (npz_writer_add(&w, p->name, &arr, err)) {
			npz_writer_abort(&w);
			free(host);
			return -1;
		}
	}
	free(host);
	return npz_writer_commit(&w, err);
}
