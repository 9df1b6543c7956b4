/* A tiny GNN dataset for the model and training tests: a random symmetric
 * graph (some nodes isolated), Gaussian features with a class signal, a
 * 60/20/20 split; gnn_data_free frees it. Include after cmocka.h. */
#ifndef SPKIT_GNNUTIL_H
#define SPKIT_GNNUTIL_H

#include <stdlib.h>
#include <string.h>

#include "sparse/csr.h"
#include "gnn/gnn_data.h"
#include "core/rng.h"

static inline void gu_dataset(struct gnn_dataset *d, int64_t n, int nfeat, int nclass,
			      int multilabel, uint64_t seed)
{
	struct rng r;
	struct sp_err e;
	rng_init(&r, seed, 0);
	memset(d, 0, sizeof *d);
	strcpy(d->name, "tiny");
	d->n = n;
	d->nfeat = nfeat;
	d->nclass = nclass;
	d->multilabel = multilabel;
	int64_t cap = n * n, nnz = 0;
	int64_t *rows = malloc((size_t)cap * sizeof *rows), *cols = malloc((size_t)cap * sizeof *cols);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = i + 1; j < n; j++)
			if (i % 7 != 6 && j % 7 != 6 && rng_uniform(&r) < 0.3) {
				rows[nnz] = i, cols[nnz++] = j;
				rows[nnz] = j, cols[nnz++] = i;
			}
	assert_int_equal(csr_from_coo(&d->graph, n, n, nnz, rows, cols, NULL, "tiny", &e), 0);
	assert_int_equal(csr_sort_rows(&d->graph, "tiny", &e), 0);
	free(rows);
	free(cols);
	d->features = malloc((size_t)(n * nfeat) * sizeof *d->features);
	d->split = malloc((size_t)n);
	if (multilabel)
		d->targets = calloc((size_t)(n * nclass), sizeof *d->targets);
	else
		d->labels = malloc((size_t)n * sizeof *d->labels);
	for (int64_t i = 0; i < n; i++) {
		int cls = (int)rng_below(&r, (uint64_t)nclass);
		if (multilabel) {
			for (int c = 0; c < nclass; c++)
				d->targets[i * nclass + c] = rng_uniform(&r) < 0.4 || c == cls;
		} else {
			d->labels[i] = cls;
		}
		for (int f = 0; f < nfeat; f++)
			d->features[i * nfeat + f] = (float)rng_normal(&r) + (f % nclass == cls);
		int64_t at = i * 10 / n;
		d->split[i] = at < 6 ? GNN_TRAIN : at < 8 ? GNN_VAL : GNN_TEST;
	}
}

#endif
