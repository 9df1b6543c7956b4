/* GNN datasets for maxk-train: a graph, node features, labels and the
 * train/validation/test split, from
 *
 *   - a dataset folder (SPEC.md): graph.npz (SciPy CSR or COO, n x n),
 *     features.npy (n x f; f2, f4 or f8, read as float), labels.npy (n
 *     integer class ids, also as an n x 1 column; or an n x c 0/1 matrix of
 *     any numeric dtype for multi-label), train_mask.npy, val_mask.npy,
 *     test_mask.npy (bool or u1 of 0/1, n). The graph is taken as given
 *     (directed if it is), less repeated edges.
 *   - the OGB node-property raw layout: raw/edge.csv.gz ("src,dst" lines),
 *     raw/node-feat.csv.gz (a row of comma-separated floats a node),
 *     raw/node-label.csv.gz (a class id a line, or c 0/1 values for
 *     multi-label such as ogbn-proteins), the optional
 *     raw/num-node-list.csv.gz (n), and split/NAME/{train,valid,test}.csv.gz
 *     (a node id a line) in the one folder under split/. Read with zlib in
 *     large chunks. OGB stores each edge once; the reverse of every edge is
 *     added, so the graph is symmetric (as OGB's examples make it with
 *     to_undirected).
 *   - a --synthetic SPEC generated in memory (see gnn_data_synthetic).
 *
 * Every loader checks what it reads (row counts that agree with the graph,
 * labels in range, masks that are non-empty and disjoint, finite features)
 * and names the file in its one-line error ("d/features.npy: NaN at row 3
 * column 7"). Self-loops are kept as given; nodes in no split are
 * GNN_NONE. */
#ifndef SPKIT_GNN_DATA_H
#define SPKIT_GNN_DATA_H

#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

enum gnn_split { GNN_NONE = 0, GNN_TRAIN = 1, GNN_VAL = 2, GNN_TEST = 3 };

/* Most classes (or multi-label columns) a dataset may have: a label past it
 * is taken for a corrupt file rather than a reason to allocate. */
#define GNN_MAX_CLASSES 65536

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

/* A dataset folder or an OGB raw folder (told apart by their files: any
 * of the dataset folder's, else raw/ or split/). d is filled on success and
 * left empty on failure. */
int gnn_data_load(const char *dir, struct gnn_dataset *d, struct sp_err *err);

/* SPEC is one of
 *   csbm[:nodes=N,classes=C,feat=F,deg=D,p_in=P,snr=S,seed=K]
 *       contextual stochastic block model: C equal communities (node i in
 *       class i mod C), mean degree D of which the fraction P falls inside
 *       the node's community, and features = S * (the class's unit mean) +
 *       N(0, 1) noise; weak enough features that an MLP scores far below a
 *       GNN. Symmetric, no self-loops. Defaults nodes=3000, classes=5,
 *       feat=32, deg=10, p_in=0.7, snr=1, seed=1 (logistic regression: 47%
 *       on the features, 77% after one mean aggregation, 93% after two);
 *       split 60/20/20.
 *   reddit_like | products_like | flickr_like [:seed=K,feat=F,classes=C]
 *   powerlaw:nodes=N,edges=E[,sigma=S,seed=K,feat=F,classes=C]
 *       graph_gen's power-law graphs (directed, no self-loops) with Reddit's
 *       (232,965 nodes, mean degree 492, 602 features, 41 classes, split
 *       66/10/24) and ogbn-products' (2,449,029 / 50.5 / 100 / 47, split
 *       8/1.6/90.4) sizes, N(0, 1) features and uniform labels, for speed
 *       work; powerlaw defaults to 64 features and 8 classes, split 60/20/20.
 * Splits are random (fixed fractions, seeded); the data is the same for any
 * thread count. Errors read "--synthetic: ...". */
int gnn_data_synthetic(const char *spec, struct gnn_dataset *d, struct sp_err *err);

/* Only parses and checks SPEC (the same errors, nothing generated), so a
 * program can report a bad spec as a usage error before any work. */
int gnn_data_synthetic_check(const char *spec, struct sp_err *err);

/* Adds the missing self-loops (a node that has one keeps it once); rows
 * stay sorted. */
int gnn_data_add_selfloops(struct gnn_dataset *d, struct sp_err *err);

/* Number of nodes in a split. */
int64_t gnn_data_count(const struct gnn_dataset *d, enum gnn_split s);

void gnn_data_free(struct gnn_dataset *d);

#endif
