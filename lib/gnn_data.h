/* GNN datasets for maxk-train: a graph, node features, labels and the
 * train/validation/test split, from
 *
 *   - a dataset folder (SPEC.md): graph.npz, features.npy (n x f, f4/f8/f2),
 *     labels.npy (n int class ids, or an n x c 0/1 matrix for multi-label),
 *     train_mask.npy, val_mask.npy, test_mask.npy (bool, n);
 *   - the OGB node-property raw layout: raw/edge.csv.gz, raw/node-feat.csv.gz,
 *     raw/node-label.csv.gz, split/<name>/{train,valid,test}.csv.gz (read
 *     with zlib);
 *   - a --synthetic SPEC generated in memory (see gnn_data_synthetic).
 *
 * Every loader checks what it reads (row counts that agree with the graph,
 * labels in range, masks that are non-empty and disjoint, finite features)
 * and names the file in its one-line error. */
#ifndef SPKIT_GNN_DATA_H
#define SPKIT_GNN_DATA_H

#include <stdint.h>

#include "csr.h"
#include "err.h"

enum gnn_split { GNN_NONE = 0, GNN_TRAIN = 1, GNN_VAL = 2, GNN_TEST = 3 };

struct gnn_dataset {
	char name[64];      /* folder base name or the synthetic preset */
	struct csr graph;   /* n x n pattern (values NULL), rows sorted, no duplicates */
	int64_t n;          /* nodes */
	int nfeat, nclass;
	int multilabel;     /* 0: labels holds class ids; 1: targets holds 0/1 */
	float *features;    /* n x nfeat */
	int32_t *labels;    /* n, in 0..nclass-1 (single-label), else NULL */
	float *targets;     /* n x nclass of 0/1 (multi-label), else NULL */
	uint8_t *split;     /* n, enum gnn_split */
};

/* A dataset folder or an OGB raw folder (told apart by their files). */
int gnn_data_load(const char *dir, struct gnn_dataset *d, struct sp_err *err);

/* SPEC is one of
 *   csbm[:nodes=N,classes=C,feat=F,deg=D,p_in=P,snr=S,seed=K]
 *       contextual stochastic block model: C equal communities, mean degree
 *       D of which the fraction P falls inside the node's community, and
 *       features = class mean + noise at signal-to-noise S; weak enough
 *       features that an MLP scores far below a GNN;
 *   reddit_like | products_like [:seed=K]
 *       power-law graphs with Reddit's (232,965 nodes, mean degree 492, 602
 *       features, 41 classes) and ogbn-products' (2,449,029 / 50.5 / 100 /
 *       47) sizes, random features and labels, for speed work.
 * Splits are random (fixed fractions, seeded). Errors read "--synthetic: ...". */
int gnn_data_synthetic(const char *spec, struct gnn_dataset *d, struct sp_err *err);

/* Adds the missing self-loops (a node that has one keeps it once). */
int gnn_data_add_selfloops(struct gnn_dataset *d, struct sp_err *err);

/* Number of nodes in a split. */
int64_t gnn_data_count(const struct gnn_dataset *d, enum gnn_split s);

void gnn_data_free(struct gnn_dataset *d);

#endif
