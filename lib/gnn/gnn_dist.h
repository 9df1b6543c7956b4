/* The aggregation of a model whose rows are cut among ranks
 * (gnn_part.h, gnn_comm.h): each layer's features of the rows other ranks
 * read travel to them, and in the backward the gradients of those rows
 * travel back to the ranks that hold them, where they are added.
 *
 * MaxK's output travels in CBSR form: k values and k column indices a row
 * (k (4 + index_bytes) bytes, 160 at k = 32 with 8-bit indices) instead of
 * H floats (1,024 at H = 256); its gradient as the k kept values (4 k).
 * ReLU's and the dense (cuSPARSE) mode's rows travel as H floats.
 *
 * Forward, halo exchange: pack the rows each peer reads, start the
 * transfers, aggregate over the own block meanwhile, wait, aggregate
 * over the received rows and add. Backward: the received rows' gradients
 * (A_halo^T dY) first, sent back while the own block's are computed; each
 * peer's share then added into the rows it belongs to (a launch a peer,
 * so the sums are in a fixed order). The all-gather exchange moves every
 * block to every rank and sums the gradients back by a reduce-scatter. */
#ifndef SPKIT_GNN_DIST_H
#define SPKIT_GNN_DIST_H

#include <stdint.h>

#include "core/err.h"
#include "gnn/gnn_comm.h"
#include "gnn/gnn_part.h"

struct gnn_model;

struct gnn_dist {
	const struct gnn_part *part;
	struct gnn_comm *comm;
	struct gnn_graph *halo_graph;
	int32_t *send_rows;      /* part->send_rows on the backend */
	size_t *off, *bytes;     /* host, 4 x size: send and receive offsets and sizes */
	void *send_values, *send_index; /* packed rows to send */
	void *halo_values;       /* received rows: values, or dense rows */
	uint8_t **halo_index;    /* per layer: the received rows' column indices */
	float *halo_grad;        /* A_halo^T dY for the received rows */
	float *back_grad;        /* gradients sent back to this rank */
	float *tmp;              /* nloc x H: the halo part of an aggregation */
	float *flag;             /* 1 float, for gnn_dist_agree */
	float *logits_pad, *logits_all;
	int64_t train_rows, train_rows_all; /* training rows here and on all ranks */
	void *allocs[16];
	int nallocs;
};

/* Called by gnn_model_create_part once the model's buffers exist; split
 * is the whole data set's (gnn_data.h). */
int gnn_dist_create(struct gnn_model *m, const struct gnn_part *part, struct gnn_comm *comm,
		    const uint8_t *split, struct sp_err *err);
void gnn_dist_free(struct gnn_model *m);

/* Layer l's aggregation, as the backend's of the same name (gnn_backend.h)
 * over the whole graph, for this rank's rows. */
int gnn_dist_aggregate(struct gnn_model *m, int l, const float *x, float *y, struct sp_err *err);
int gnn_dist_aggregate_backward(struct gnn_model *m, int l, const float *dy, float *dx,
				struct sp_err *err);
int gnn_dist_aggregate_maxk(struct gnn_model *m, int l, const float *values,
			    const uint16_t *index, float *y, struct sp_err *err);
int gnn_dist_aggregate_maxk_backward(struct gnn_model *m, int l, const uint16_t *index,
				     const float *dy, float *dvalues, struct sp_err *err);

/* Every rank's logits into host (n x classes, all rows). */
int gnn_dist_logits(struct gnn_model *m, float *host, struct sp_err *err);
/* 1 when any rank passes flag nonzero. */
int gnn_dist_agree(struct gnn_model *m, int flag, int *any, struct sp_err *err);

#endif
