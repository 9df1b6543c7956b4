/* Synthetic graphs for demos and benchmarks, from a one-line SPEC:
 *
 *   reddit_like | products_like | flickr_like     the graphs of H200.md
 *   powerlaw:nodes=N,edges=E[,sigma=S]            your own
 *   any of them followed by ",seed=K" or ":seed=K" overrides (e.g. reddit_like:seed=2)
 *
 * Power-law graphs have log-normal degrees (sigma 1 unless given) scaled so
 * the edge count is E exactly (less only if a degree had to be capped at
 * the node count), and uniformly random distinct neighbours, sorted, no
 * self-loops. The same SPEC gives the same graph on any machine and for any
 * thread count: rows are generated in fixed blocks, each with its own
 * random stream. */
#ifndef SPKIT_GRAPH_GEN_H
#define SPKIT_GRAPH_GEN_H

#include <stdint.h>

#include "sparse/csr.h"
#include "core/err.h"

struct graph_spec {
	char name[64]; /* the preset or "powerlaw", for reports */
	int64_t nodes, edges;
	double sigma;
	uint64_t seed;
};

/* Parses SPEC; errors read "--synthetic: ...". */
int graph_spec_parse(const char *text, struct graph_spec *s, struct sp_err *err);

/* Row pointers alone (what maxk-genmeta needs): nodes + 1 entries, malloc'd. */
int graph_gen_indptr(const struct graph_spec *s, int64_t **indptr, struct sp_err *err);

/* The whole graph: pattern CSR (values NULL), square, nodes x nodes. */
int graph_gen(const struct graph_spec *s, struct csr *g, struct sp_err *err);

#endif
