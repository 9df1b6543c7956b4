/* The GNN models of MaxK-GNN (its models.py), written once
 * against the backend table (gnn_backend.h), so the CPU and the GPU run
 * the same code:
 *
 *   x = lin_in(features)
 *   for each of L layers:
 *       a = dropout(nonlinear(x))   nonlinear: MaxK(k) or ReLU; the dropout is
 *                                   the conv's feat_drop (for MaxK on the k
 *                                   kept values of each row)
 *       x = conv(a)                 SAGE, GCN or GIN, as DGL's layers
 *       x = LayerNorm(x)            with --norm
 *   logits = lin_out(x)
 *
 * conv is DGL's SAGEConv 'mean' (fc_self(a) + fc_neigh(mean of neighbours)
 * + bias), GraphConv norm='both' (D^-1/2 A D^-1/2 a, then weight + bias) or
 * GINConv 'sum' with a learnable eps and a Linear ((1 + eps) a + sum of
 * neighbours, then the Linear). With L = 0 the model is the MLP-like
 * baseline lin_in -> nonlinear -> dropout -> lin_out, which sees no edges.
 *
 * The MaxK output stays in CBSR form (values and column index, n x k) and
 * is aggregated by the MaxK SpGEMM (aggregate_maxk), unless dense_agg is
 * set (--kernel-mode cusparse, or a failed --validate-kernels): then it is
 * scattered into an n x hidden matrix and aggregated by the dense SpMM.
 * Both give the same numbers up to rounding.
 *
 * All parameters live in one buffer on the backend (and their gradients
 * and Adam's two moments in three more of the same layout), so the
 * optimizer is one call and a checkpoint one download. Each parameter has
 * a name (PyTorch's state_dict names: lin_in.weight, layers.0.fc_self.weight,
 * norms.0.weight, ...) and an offset into the buffer. */
#ifndef SPKIT_GNN_MODEL_H
#define SPKIT_GNN_MODEL_H

#include <stdint.h>

#include "core/err.h"
#include "gnn/gnn_backend.h"
#include "gnn/gnn_data.h"

enum gnn_conv { GNN_SAGE, GNN_GCN, GNN_GIN };
enum gnn_nonlinear { GNN_RELU, GNN_MAXK };

/* Their names, indexed by the enums and NULL-terminated: what maxk-train's
 * --model and --nonlinear take and what a checkpoint's settings show. */
extern const char *const gnn_conv_names[];
extern const char *const gnn_nonlinear_names[];

struct gnn_model_config {
	enum gnn_conv conv;
	enum gnn_nonlinear nonlinear;
	int layers;    /* 0: the MLP-like baseline */
	int hidden;    /* 1..MAXK_MAX_WIDTH */
	int maxk;      /* 1..hidden, with GNN_MAXK */
	int norm;      /* LayerNorm after each conv */
	float dropout; /* [0, 1) */
	uint64_t seed; /* initial weights and dropout masks */
	int dense_agg; /* aggregate MaxK's output densely (scatter + aggregate) */
};

/* One named parameter tensor: a matrix (rows x cols) or a vector (cols). */
struct gnn_param {
	char name[48];
	int64_t offset; /* floats into the parameter buffer */
	int ndim;
	int64_t rows, cols; /* rows is 1 for a vector */
	int init;           /* how gnn_model_create fills it (gnn_model.c) */
	int64_t fan_in;
};

/* Offsets of one layer's tensors (-1 when the model has none). */
struct gnn_layer_params {
	int64_t w_self, w_neigh, w, bias, eps, gamma, beta;
};

/* What the forward pass keeps for the backward pass (gnn_model.c). */
struct gnn_act;
struct gnn_conv_buf;
struct gnn_dist;
struct gnn_part;
struct gnn_comm;

struct gnn_model {
	struct gnn_model_config cfg;
	struct gnn_backend *b;
	int64_t n;    /* the rows this model holds (all, or a rank's block) */
	int64_t row0; /* the first one's number in the whole graph */
	int nfeat, nclass, multilabel;

	struct gnn_param *params; /* nparam_tensors named tensors */
	int nparam_tensors;
	int64_t nparams; /* floats in each of the four buffers, padding included */
	int64_t lin_in_w, lin_in_b, lin_out_w, lin_out_b;
	struct gnn_layer_params *lp; /* layers */

	/* On the backend. */
	float *param, *grad, *adam_m1, *adam_m2;
	struct gnn_graph *graph;
	float *features;   /* n x nfeat */
	int32_t *labels;   /* single-label */
	float *targets;    /* multi-label, n x nclass */
	uint8_t *split;    /* n, enum gnn_split */
	float *x0;         /* lin_in output */
	struct gnn_act *act;      /* max(layers, 1) slots */
	struct gnn_conv_buf *conv; /* layers */
	float *logits, *dlogits, *loss;
	float *dx, *dtmp1, *dtmp2; /* n x hidden scratch for gradients */
	float *dk1, *dk2;          /* n x k scratch */
	int train_mode;            /* the last forward's: dropout on */
	uint64_t epoch;            /* the last forward's, for the dropout seeds */
	struct gnn_dist *dist;     /* partitioned (gnn_model_create_part), else NULL */
	void **allocs;             /* every backend buffer, for gnn_model_free */
	size_t nallocs, cap_allocs;
};

/* Builds the model for dataset d on backend b: the aggregation graph with
 * the conv's edge normalisation (SAGE: mean, GCN: symmetric, GIN: ones),
 * the data uploaded, the parameters initialised
 * from cfg->seed as DGL and PyTorch do (lin_in/lin_out weights Glorot
 * uniform, biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as nn.Linear; SAGE's
 * fc_self/fc_neigh Glorot with the ReLU gain and GCN's weight Glorot, their
 * biases zero; GIN's Linear as nn.Linear (Kaiming uniform, a = sqrt(5)),
 * eps 0; LayerNorm weight 1 and bias 0) and every buffer allocated. */
int gnn_model_create(struct gnn_backend *b, const struct gnn_dataset *d,
		     const struct gnn_model_config *cfg, struct gnn_model **out,
		     struct sp_err *err);
/* The same for one rank of a partitioned run: the rows of part (of d's
 * graph), the aggregation through gnn_dist.h over comm. Every rank starts
 * from the same weights; the loss and the gradients are the whole graph's
 * (each rank's share summed over comm), so every rank takes the same Adam
 * step the one-rank run takes, up to the order of the sums. part and comm
 * must outlive the model. */
int gnn_model_create_part(struct gnn_backend *b, const struct gnn_dataset *d,
			  const struct gnn_model_config *cfg, const struct gnn_part *part,
			  struct gnn_comm *comm, struct gnn_model **out, struct sp_err *err);
void gnn_model_free(struct gnn_model *m);

/* Waits for the work queued (and, partitioned, the other ranks: a rank
 * that failed or stopped answering fails it, see gnn_comm.h). */
int gnn_model_sync(struct gnn_model *m, struct sp_err *err);
/* The logits of the last forward, all n rows, into host (n x classes),
 * once the forward (and, partitioned, every rank's) is done. */
int gnn_model_logits(struct gnn_model *m, float *host, struct sp_err *err);
/* *any = whether flag is nonzero on any rank (flag itself on one). */
int gnn_model_agree(struct gnn_model *m, int flag, int *any, struct sp_err *err);

/* The edge values a conv aggregates with (SAGE: mean, GCN: symmetric,
 * GIN: ones): what a partition of the graph must carry. */
enum edge_norm gnn_model_edge_norm(enum gnn_conv conv);

/* The dropout seed of (seed, epoch, layer): masks are a function of these
 * alone, so a resumed run drops what the uninterrupted run dropped. */
uint64_t gnn_dropout_seed(uint64_t seed, uint64_t epoch, int layer);

/* logits = the model on all nodes. train: with dropout (masks of epoch). */
int gnn_model_forward(struct gnn_model *m, int train, uint64_t epoch, struct sp_err *err);
/* The training loss of the last forward into m->loss (on the backend) and
 * its gradient into m->dlogits: softmax cross-entropy (single-label) or
 * BCE with logits (multi-label) over the training nodes. */
int gnn_model_loss(struct gnn_model *m, struct sp_err *err);
/* Every parameter's gradient of that loss into m->grad. */
int gnn_model_backward(struct gnn_model *m, struct sp_err *err);
/* One Adam step (t >= 1) over all parameters. */
int gnn_model_adam(struct gnn_model *m, float lr, float weight_decay, int64_t t,
		   struct sp_err *err);

/* --validate-kernels: the first layer's aggregation of MaxK output (from
 * the current weights, without dropout) by the MaxK kernels against the
 * dense aggregation of the same features scattered into a dense matrix,
 * forward (aggregate_maxk vs aggregate) and backward
 * (aggregate_maxk_backward vs gather of aggregate_backward). *max_err is
 * the larger of the two largest differences, each over the largest
 * absolute value of its dense result. Needs nonlinear MaxK and a layer. */
int gnn_model_validate(struct gnn_model *m, double *max_err, struct sp_err *err);

/* The parameter index of a name, or -1. */
int gnn_model_find_param(const struct gnn_model *m, const char *name);
/* Writes the named tensors to an .npz (float32, PyTorch's shapes). */
int gnn_model_save(const struct gnn_model *m, const char *path, struct sp_err *err);

#endif
