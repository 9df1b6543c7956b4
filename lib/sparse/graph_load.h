/* Load a graph from whichever format its file name says: SciPy .npz (CSR or
 * COO), Matrix Market .mtx, an edge list (.csv .tsv .txt .el .edges), or
 * MaxK-GNN's NAME.indptr with NAME.indices beside it (csr_raw.h).
 * Every loader validates what it builds (csr_validate), so callers get a
 * structurally sound CSR or a one-line error naming the file. */
#ifndef SPKIT_GRAPH_LOAD_H
#define SPKIT_GRAPH_LOAD_H

#include <stdint.h>

#include "sparse/csr.h"
#include "sparse/edgelist.h"
#include "core/err.h"

/* The suffixes graph_load reads, as its messages list them. */
#define GRAPH_LOAD_SUFFIXES ".npz, .mtx, .csv, .tsv, .txt, .el, .edges or .indptr"

struct graph_load_opts {
	struct edgelist_opts edgelist; /* for edge lists only */
};

/* Whether path's suffix is one graph_load reads. */
int graph_load_knows(const char *path);

/* opts may be NULL for the defaults. */
int graph_load(const char *path, const struct graph_load_opts *opts, struct csr *g,
	       struct sp_err *err);

/* Only the row pointers (nrows + 1, malloc'd): for a CSR .npz just the
 * indptr member is read, for NAME.indptr just that file; other formats are
 * loaded whole. */
int graph_load_indptr(const char *path, const struct graph_load_opts *opts, int64_t **indptr,
		      int64_t *nrows, struct sp_err *err);

#endif
