/* One rank's share of a graph cut into row blocks (1D), for training on
 * several ranks (maxk-train --gpus N): which rows it holds, its edges, and
 * what must travel between ranks in each layer.
 *
 * Rank q holds rows starts[q] .. starts[q+1]-1, the blocks balanced by
 * edges (a row's edges are its aggregation's work), each row counting one
 * edge more (its dense layers' share), so that a graph with few edges is
 * cut by rows. Its edges are split in two CSRs with the
 * same rows: `own`, to its own rows (local column ids), and `halo`, to
 * rows other ranks hold, whose features it must receive each layer. The
 * edge values are the whole graph's (a GCN value needs both ends'
 * degrees), so every rank computes what the one-rank run computes.
 *
 * Two ways to move the rows (enum gnn_exchange):
 *   halo:      only the rows each peer aggregates, sent point to point.
 *              halo's columns are the received rows, ascending by global
 *              id (so grouped by the peer that holds them: recv_first and
 *              recv_count per peer); send_rows lists, peer after peer,
 *              the local rows each peer needs (send_first, send_count).
 *              Computed once per graph from the whole CSR.
 *   allgather: every row to every rank (the simple alternative):
 *              halo's column for row j of rank q is q * maxrows + (j -
 *              starts[q]), the row's place in an all-gather of blocks
 *              padded to maxrows rows. */
#ifndef SPKIT_GNN_PART_H
#define SPKIT_GNN_PART_H

#include <stdint.h>

#include "core/err.h"
#include "maxk/maxk_ref.h"
#include "sparse/csr.h"

enum gnn_exchange { GNN_EXCHANGE_HALO, GNN_EXCHANGE_ALLGATHER };
/* "halo", "allgather", NULL-terminated: what --exchange takes. */
extern const char *const gnn_exchange_names[];

struct gnn_part {
	int rank, size;
	enum gnn_exchange mode;
	int64_t n, lo, nloc, maxrows;
	int64_t *starts;  /* size + 1 */
	struct csr own;   /* nloc x nloc, with values */
	struct csr halo;  /* nloc x nhalo, with values */
	int64_t nhalo;    /* halo's columns: received rows (allgather: size x maxrows) */
	int64_t *recv_first, *recv_count; /* halo: per peer, its rows among halo's columns */
	int32_t *send_rows;               /* halo: local rows to send, peer after peer */
	int64_t *send_first, *send_count; /* halo: per peer, its part of send_rows */
	int64_t nsend;                    /* entries of send_rows */
};

/* starts (size + 1 entries) of g's rows cut into size blocks balanced by
 * edges plus rows, each at least one row (g has at least size rows). */
int gnn_part_starts(const struct csr *g, int size, int64_t *starts, struct sp_err *err);

/* Rank `rank`'s share of g (square, n x n) with edge values of norm. */
int gnn_part_create(const struct csr *g, enum edge_norm norm, int size, int rank,
		    enum gnn_exchange mode, struct gnn_part *p, struct sp_err *err);
void gnn_part_free(struct gnn_part *p);

#endif
