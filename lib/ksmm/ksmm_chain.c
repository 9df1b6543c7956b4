#include "ksmm/ksmm_chain.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/npy.h"
#include "ksmm/ksmm_value.h"

static const char *shape_text(const struct npy_array *a, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "(");
	for (int i = 0; i < a->ndim && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", a->shape[i]);
	if (k < n)
		snprintf(buf + k, n - k, a->ndim == 1 ? ",)" : ")");
	return buf;
}

/* a's values (converted through double) into a new array in t's storage. */
static int to_storage(struct npy_array *a, enum ksmm_dtype t, const char *path, void **out,
		      struct sp_err *err)
{
	if (a->dtype == NPY_BYTES)
		return sp_fail(err, "%s: byte strings, not numbers", path);
	if (npy_cast(a, NPY_F8, path, err))
		return -1;
	int64_t n = npy_count(a);
	void *v = malloc((size_t)(n ? n : 1) * ksmm_dtype_size(t));
	if (!v)
		return sp_fail(err, "%s: out of memory", path);
	const double *d = a->data;
	for (int64_t i = 0; i < n; i++)
		ksmm_value_store(t, v, i, d[i]);
	*out = v;
	return 0;
}

void ksmm_chain_free(struct ksmm_chain *c)
{
	for (size_t i = 0; c->w && i < c->n; i++)
		free(c->w[i]);
	free(c->w);
	free(c->p);
	*c = (struct ksmm_chain){0};
}

int ksmm_chain_load(const struct ksmm_pattern_list *patterns, const char *const *weights,
		    size_t nweights, enum ksmm_dtype t, struct ksmm_chain *c, struct sp_err *err)
{
	*c = (struct ksmm_chain){.dtype = t};
	if (nweights != patterns->n)
		return sp_fail(err, "--weights: %zu file%s for %zu pattern%s", nweights,
			       sp_plural(nweights), patterns->n, sp_plural(patterns->n));
	c->p = calloc(nweights, sizeof *c->p);
	c->w = calloc(nweights, sizeof *c->w);
	if (!c->p || !c->w) {
		ksmm_chain_free(c);
		return sp_fail(err, "--weights: out of memory");
	}
	c->n = nweights;
	for (size_t i = 0; i < c->n; i++) {
		const struct ksmm_pattern_entry *e = &patterns->v[i];
		c->p[i] = e->p;
		if (ksmm_pattern_check(&e->p, 1, e->where, err))
			goto fail;
		if (i > 0 && ksmm_cols(&e->p) != ksmm_rows(&c->p[i - 1])) {
			sp_fail(err, "%s: pattern %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
				" takes %" PRId64 " inputs, but the factor before it gives %" PRId64,
				e->where, e->p.a, e->p.b, e->p.c, e->p.d, ksmm_cols(&e->p),
				ksmm_rows(&c->p[i - 1]));
			goto fail;
		}
		struct npy_array a;
		if (npy_read(weights[i], &a, err))
			goto fail;
		const int64_t want[4] = {e->p.a, e->p.b, e->p.c, e->p.d};
		int match = a.ndim == 4;
		for (int k = 0; match && k < 4; k++)
			match = a.shape[k] == want[k];
		if (!match) {
			char got[200];
			sp_fail(err, "%s: shape %s does not match pattern %" PRId64 ",%" PRId64
				",%" PRId64 ",%" PRId64 " (%s): expected (a, b, c, d)", weights[i],
				shape_text(&a, got, sizeof got), e->p.a, e->p.b, e->p.c, e->p.d,
				e->where);
			npy_free(&a);
			goto fail;
		}
		int rc = to_storage(&a, t, weights[i], &c->w[i], err);
		npy_free(&a);
		if (rc)
			goto fail;
	}
	return 0;
fail:
	ksmm_chain_free(c);
	return -1;
}

int64_t ksmm_chain_cols(const struct ksmm_chain *c)
{
	return ksmm_cols(&c->p[0]);
}

int64_t ksmm_chain_rows(const struct ksmm_chain *c)
{
	return ksmm_rows(&c->p[c->n - 1]);
}

int ksmm_chain_input_read(const char *path, const struct ksmm_chain *c, enum ksmm_layout l,
			  int64_t *batch, void **x, struct sp_err *err)
{
	struct npy_array a;
	if (npy_read(path, &a, err))
		return -1;
	char got[200];
	const int64_t cols = ksmm_chain_cols(c);
	const int wdim = l == KSMM_BS_LAST ? 0 : 1;
	if (a.ndim != 2 || a.shape[wdim] != cols) {
		sp_fail(err, "%s: shape %s: expected %s with width a*c*d = %" PRId64
			" (pattern %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ", the first)",
			path, shape_text(&a, got, sizeof got),
			l == KSMM_BS_LAST ? "(width, batch)" : "(batch, width)", cols, c->p[0].a,
			c->p[0].b, c->p[0].c, c->p[0].d);
		npy_free(&a);
		return -1;
	}
	*batch = a.shape[1 - wdim];
	for (size_t i = 0; i < c->n; i++)
		if (ksmm_pattern_check(&c->p[i], *batch, path, err)) {
			npy_free(&a);
			return -1;
		}
	int rc = to_storage(&a, c->dtype, path, x, err);
	npy_free(&a);
	return rc;
}

int ksmm_chain_apply_cpu(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
			 const void *x, void *y, struct sp_err *err)
{
	/* The widest activation, in double (the reference's output) and in
	 * the dtype's storage (the next factor's input). */
	int64_t widest = ksmm_chain_cols(c);
	for (size_t i = 0; i < c->n; i++)
		if (ksmm_rows(&c->p[i]) > widest)
			widest = ksmm_rows(&c->p[i]);
	size_t n = (size_t)(widest * batch);
	double *acc = malloc(n * sizeof *acc);
	void *act = malloc(n * ksmm_dtype_size(c->dtype));
	if (!acc || !act) {
		free(acc), free(act);
		return sp_fail(err, "out of memory for a chain's activations (%zu values)", n);
	}
	const void *in = x;
	for (size_t i = 0; i < c->n; i++) {
		ksmm_ref_factor(&c->p[i], l, c->dtype, batch, c->w[i], in, acc);
		void *dst = i + 1 == c->n ? y : act;
		int64_t m = ksmm_rows(&c->p[i]) * batch;
		for (int64_t k = 0; k < m; k++)
			ksmm_value_store(c->dtype, dst, k, acc[k]);
		in = dst;
	}
	free(acc), free(act);
	return 0;
}

int ksmm_chain_output_write(const char *path, const struct ksmm_chain *c, enum ksmm_layout l,
			    int64_t batch, const void *y, struct sp_err *err)
{
	const int64_t rows = ksmm_chain_rows(c), n = rows * batch;
	struct npy_array a = {.dtype = c->dtype == KSMM_F16 ? NPY_F2 : NPY_F4, .ndim = 2};
	a.shape[0] = l == KSMM_BS_LAST ? rows : batch;
	a.shape[1] = l == KSMM_BS_LAST ? batch : rows;
	a.itemsize = npy_dtype_size(a.dtype);
	if (c->dtype != KSMM_BF16) {
		a.data = (void *)y;
		return npy_write(path, &a, err);
	}
	float *f = malloc((size_t)n * sizeof *f);
	if (!f)
		return sp_fail(err, "%s: out of memory", path);
	for (int64_t k = 0; k < n; k++)
		f[k] = (float)ksmm_value(KSMM_BF16, y, k);
	a.data = f;
	int rc = npy_write(path, &a, err);
	free(f);
	return rc;
}
