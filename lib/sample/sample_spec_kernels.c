/* spkit's own kernels as kernel-sample operators (sample_spec.h): shapes,
 * checks, layouts and the inputs beyond the tensors (the graph). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/memory.h"
#include "ksmm/ksmm.h"
#include "macko/macko.h"
#include "macko/randmat.h"
#include "maxk/maxk_ref.h"
#include "sample/sample_spec.h"
#include "sparse/graph_gen.h"

const char *const sample_cols_maxk[] = {"nodes", "degree", "hidden", "k"};
const char *const sample_cols_macko[] = {"rows", "cols", "density", "vectors"};
const char *const sample_cols_ksmm[] = {"a", "b", "c", "d", "batch"};

int sample_check_maxk(const int64_t *shape, struct sp_err *why)
{
	const int64_t nodes = shape[0], degree = shape[1], hidden = shape[2], k = shape[3];
	if (sample_check_columns(shape, 4, sample_cols_maxk, why))
		return -1;
	if (nodes > INT32_MAX - 1 || nodes * degree > INT32_MAX)
		return sp_fail(why, "nodes %lld with degree %lld: more than 2^31 - 1 edges or nodes",
			       (long long)nodes, (long long)degree);
	if (degree >= nodes)
		return sp_fail(why, "degree %lld is not below nodes %lld (no self-loops or repeats)",
			       (long long)degree, (long long)nodes);
	if (hidden > 1024)
		return sp_fail(why, "hidden %lld is above 1024", (long long)hidden);
	if (k > hidden)
		return sp_fail(why, "k %lld is above hidden %lld", (long long)k, (long long)hidden);
	return 0;
}

void sample_layout_maxk_spmm(const int64_t *shape, struct sample_state *st)
{
	const int64_t n = shape[0], h = shape[2], k = shape[3];
	sample_spec_start(st);
	st->d.rows = n;
	st->d.cols = h;
	st->d.k = k;
	st->d.m = n * shape[1]; /* edges */
	sample_spec_add(st, "x", n * h, SAMPLE_STATS, SAMPLE_INPUT);
	sample_spec_add(st, "kept", n * k, SAMPLE_STATS, SAMPLE_FORWARD);
	sample_spec_add(st, "y", n * h, SAMPLE_STATS, SAMPLE_FORWARD);
	sample_spec_add(st, "dy", n * h, SAMPLE_STATS, SAMPLE_INPUT);
	sample_spec_add(st, "dx", n * h, SAMPLE_STATS, SAMPLE_BACKWARD);
	st->t[MAXK_X].grad = MAXK_DX;
	st->t[MAXK_Y].upstream = MAXK_DY;
}

int sample_maxk_graph(const struct sample_state *st, struct csr *g, float **vals,
		      struct sp_err *err)
{
	struct graph_spec spec = {"powerlaw", st->d.rows, st->d.m, 1.0, st->seed};
	*vals = NULL;
	if (graph_gen(&spec, g, err))
		return -1;
	*vals = malloc((size_t)(g->nnz ? g->nnz : 1) * sizeof **vals);
	if (!*vals) {
		csr_free(g);
		return sp_fail(err, "out of memory for %lld edge values", (long long)g->nnz);
	}
	edge_values(g, EDGE_MEAN, *vals);
	return 0;
}

int sample_check_macko(const int64_t *shape, struct sp_err *why)
{
	if (sample_check_columns(shape, 4, sample_cols_macko, why))
		return -1;
	if (shape[2] > 100)
		return sp_fail(why, "density %lld is above 100 (percent)", (long long)shape[2]);
	if (shape[3] > MACKO_MAX_VECTORS)
		return sp_fail(why, "vectors %lld is above %d", (long long)shape[3], MACKO_MAX_VECTORS);
	if (shape[0] > INT32_MAX - 1 || shape[0] * shape[1] >= (int64_t)1 << 34)
		return sp_fail(why, "rows x cols %lld is 2^34 or more", (long long)(shape[0] * shape[1]));
	return 0;
}

void sample_layout_macko_spmv(const int64_t *shape, struct sample_state *st)
{
	sample_spec_start(st);
	st->d.rows = shape[0];
	st->d.cols = shape[1];
	st->d.m = shape[2];
	st->d.k = shape[3];
	sample_spec_add(st, "x", shape[3] * shape[1], SAMPLE_STATS, SAMPLE_INPUT);
	sample_spec_add(st, "y", shape[3] * shape[0], SAMPLE_STATS, SAMPLE_FORWARD);
}

int sample_macko_matrix(const struct sample_state *st, struct macko *m, struct sp_err *err)
{
	const int64_t rows = st->d.rows, cols = st->d.cols;
	/* The dense matrix and, beside it while it is compressed, the MACKO
	 * form, counted at its largest (past dense size above density 0.8):
	 * checked before either is made, as malloc is lazy and the fill would
	 * be killed, not refused. */
	char what[128];
	snprintf(what, sizeof what, "a %lld x %lld fp16 matrix with its compressed form",
		 (long long)rows, (long long)cols);
	if (mem_check((uint64_t)(rows * cols) * sizeof(uint16_t) + macko_compress_bytes(rows, cols),
		      what, err))
		return -1;
	uint16_t *dense = malloc((size_t)(rows * cols) * sizeof *dense);
	if (!dense)
		return sp_fail(err, "out of memory for a %lld x %lld fp16 matrix", (long long)rows,
			       (long long)cols);
	randmat_fp16(dense, rows, cols, (double)st->d.m / 100, st->seed);
	int rc = macko_compress_dense(dense, rows, cols, m, "macko_spmv", err);
	free(dense);
	return rc;
}

int sample_check_ksmm(const int64_t *shape, struct sp_err *why)
{
	if (sample_check_columns(shape, 5, sample_cols_ksmm, why))
		return -1;
	const struct ksmm_pattern p = {shape[0], shape[1], shape[2], shape[3]};
	return ksmm_pattern_check(&p, shape[4], "the shape", why);
}

void sample_layout_ksmm(const int64_t *shape, struct sample_state *st)
{
	const int64_t a = shape[0], b = shape[1], c = shape[2], d = shape[3], batch = shape[4];
	sample_spec_start(st);
	st->d.batch = batch;
	st->d.m = a; /* the pattern, as (m, n, k, seq) = (a, b, c, d) */
	st->d.n = b;
	st->d.k = c;
	st->d.seq = d;
	st->d.rows = batch;
	st->d.cols = a * b * d;
	sample_spec_add(st, "w", a * b * c * d, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "x", batch * a * c * d, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "y", batch * a * b * d, SAMPLE_VALUES, SAMPLE_FORWARD);
}
