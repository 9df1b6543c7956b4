#include "macko/macko_input.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/half.h"
#include "core/timer.h"
#include "formats/npy.h"
#include "formats/npy_float.h"
#include "formats/npz.h"
#include "macko/macko_npz.h"
#include "macko/randmat.h"
#include "sparse/csr.h"
#include "sparse/graph_load.h"

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcasecmp(s + n - m, suffix);
}

int macko_input_is_macko(const char *path)
{
	return has_suffix(path, ".npz") && macko_npz_probe(path);
}

static int make_random(const struct macko_input *in, uint16_t **dense, struct sp_err *err)
{
	*dense = malloc((size_t)(in->rows * in->cols) * 2);
	if (!*dense)
		return sp_fail(err, "%s: out of memory for a %lld x %lld matrix", in->name,
			       (long long)in->rows, (long long)in->cols);
	randmat_fp16(*dense, in->rows, in->cols, in->density, in->seed);
	return 0;
}

/* in->member of the .npz in->path, read alone (npz.h); a missing one is
 * named with the members there are. */
static int read_member(const struct macko_input *in, struct npy_array *a, struct sp_err *err)
{
	struct npz z;
	if (npz_open(&z, in->path, err))
		return -1;
	int rc = 0;
	if (!npz_has(&z, in->member)) {
		char have[SP_ERR_MAX] = "";
		size_t len = 0;
		for (size_t i = 0; i < z.zip.count && len < sizeof have; i++) {
			const char *name = z.zip.entries[i].name;
			size_t n = strlen(name);
			if (n > 4 && !strcmp(name + n - 4, ".npy"))
				len += (size_t)snprintf(have + len, sizeof have - len, "%s%.*s",
							len ? ", " : "", (int)(n - 4), name);
		}
		rc = sp_fail(err, "%s: no member '%s' (it holds %s)", in->path, in->member,
			     have[0] ? have : "no arrays");
	} else {
		rc = npz_read(&z, in->member, a, err);
	}
	npz_close(&z);
	return rc;
}

/* A dense 2-d float .npy (or .npz member), as fp16 bits (rounded), pruned
 * as asked. */
static int read_dense(const struct macko_input *in, uint16_t **dense, int64_t *rows,
		      int64_t *cols, struct sp_err *err)
{
	struct npy_array a;
	if (in->member ? read_member(in, &a, err) : npy_read(in->path, &a, err))
		return -1;
	if (a.ndim != 2) {
		npy_free(&a);
		return sp_fail(err, "%s: expected a 2-d matrix, found %d dimensions", in->name,
			       a.ndim);
	}
	if (npy_float_require(&a, in->name, err) || npy_cast(&a, NPY_F2, in->name, err)) {
		npy_free(&a);
		return -1;
	}
	*rows = a.shape[0];
	*cols = a.shape[1];
	*dense = a.data;
	int64_t n = *rows * *cols;
	if (in->prune == MACKO_PRUNE_DENSITY && prune_to_density(*dense, n, in->keep, err)) {
		free(*dense);
		return -1;
	}
	if (in->prune == MACKO_PRUNE_BELOW)
		prune_below(*dense, n, in->threshold);
	return 0;
}

/* A pattern matrix (a .mtx "pattern") has values 1, as SciPy reads it. */
static int give_pattern_values(struct csr *a, const char *name, struct sp_err *err)
{
	if (a->values)
		return 0;
	if (!(a->values = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *a->values)))
		return sp_fail(err, "%s: out of memory", name);
	for (int64_t i = 0; i < a->nnz; i++)
		a->values[i] = 1;
	return 0;
}

/* Prune a sparse matrix's entries in place, their values rounded to fp16
 * first. The density asked for is of the whole matrix. */
static int prune_sparse(const struct macko_input *in, struct csr *a, struct sp_err *err)
{
	if (in->prune == MACKO_PRUNE_NONE)
		return 0;
	uint16_t *h = malloc((size_t)(a->nnz ? a->nnz : 1) * 2);
	if (!h)
		return sp_fail(err, "%s: out of memory", in->name);
	for (int64_t i = 0; i < a->nnz; i++)
		h[i] = half_from_float(a->values[i]);
	if (in->prune == MACKO_PRUNE_DENSITY && a->nnz) {
		double keep = in->keep * (double)a->nrows * (double)a->ncols / (double)a->nnz;
		if (keep < 1 && prune_to_density(h, a->nnz, keep, err)) {
			free(h);
			return -1;
		}
	}
	if (in->prune == MACKO_PRUNE_BELOW)
		prune_below(h, a->nnz, in->threshold);
	for (int64_t i = 0; i < a->nnz; i++)
		a->values[i] = half_to_float(h[i]);
	free(h);
	return 0;
}

static int compress_dense(const struct macko_input *in, struct macko *m,
			  const struct sp_report *r, struct sp_err *err)
{
	double t0 = timer_now();
	uint16_t *dense;
	int64_t rows = in->rows, cols = in->cols;
	if (in->path ? read_dense(in, &dense, &rows, &cols, err) : make_random(in, &dense, err))
		return -1;
	sp_report_msg(r, 2, "read and prune: %.3f s", timer_now() - t0);
	t0 = timer_now();
	int rc = macko_compress_dense(dense, rows, cols, m, in->name, err);
	free(dense);
	if (!rc)
		sp_report_msg(r, 2, "compress: %.3f s", timer_now() - t0);
	return rc;
}

static int compress_sparse(const struct macko_input *in, struct macko *m,
			   const struct sp_report *r, struct sp_err *err)
{
	double t0 = timer_now();
	struct csr a;
	if (graph_load(in->path, NULL, &a, err))
		return -1;
	int rc = csr_sort_rows(&a, in->name, err) || give_pattern_values(&a, in->name, err) ||
		 prune_sparse(in, &a, err);
	if (!rc) {
		sp_report_msg(r, 2, "read and prune: %.3f s", timer_now() - t0);
		t0 = timer_now();
		rc = macko_compress_csr(&a, m, in->name, err);
	}
	csr_free(&a);
	if (!rc)
		sp_report_msg(r, 2, "compress: %.3f s", timer_now() - t0);
	return rc ? -1 : 0;
}

int macko_input_compress(const struct macko_input *in, struct macko *m, const struct sp_report *r,
			 struct sp_err *err)
{
	if (!in->path || in->member || has_suffix(in->path, ".npy"))
		return compress_dense(in, m, r, err);
	if (!graph_load_knows(in->path))
		return sp_fail(err, "%s: unknown matrix format (expected .npy, " GRAPH_LOAD_SUFFIXES ")",
			       in->name);
	return compress_sparse(in, m, r, err);
}
