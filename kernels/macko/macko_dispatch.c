#include "macko/macko_dispatch.h"

#include <stdlib.h>

#include "core/gpu.h"
#include "core/half.h"

static int multiply_cpu(const struct macko *m, const uint16_t *x, int nvec, double alpha,
			double beta, const float *y_in, void *y, enum macko_out out, struct sp_err *err)
{
	size_t nx = (size_t)nvec * m->cols, ny = (size_t)nvec * m->rows;
	float *xf = malloc((nx ? nx : 1) * sizeof *xf);
	double *acc = malloc((ny ? ny : 1) * sizeof *acc);
	if (!xf || !acc) {
		free(xf);
		free(acc);
		return sp_fail(err, "out of memory for %zu x values and %zu results", nx, ny);
	}
	for (size_t i = 0; i < nx; i++)
		xf[i] = half_to_float(x[i]);
	macko_spmv_ref(m, xf, nvec, alpha, beta, y_in, acc);
	for (size_t i = 0; i < ny; i++) {
		if (out == MACKO_OUT_F16)
			((uint16_t *)y)[i] = half_from_double(acc[i]);
		else
			((float *)y)[i] = (float)acc[i];
	}
	free(xf);
	free(acc);
	return 0;
}

#if SPKIT_CUDA
/* More than MACKO_MAX_VECTORS vectors run as several products of at most
 * that many, over one upload of the matrix: x, y_in and y are row-major
 * (vector-major), so batch b is a contiguous slice of each, and the cost is
 * one more pass over the matrix per batch. */
static int multiply_gpu(const struct macko *m, const uint16_t *x, int nvec, double alpha,
			double beta, const float *y_in, void *y, enum macko_out out, struct sp_err *err)
{
	const int batch = nvec < MACKO_MAX_VECTORS ? nvec : MACKO_MAX_VECTORS;
	size_t nx = (size_t)batch * m->cols, ny = (size_t)batch * m->rows;
	size_t ysize = out == MACKO_OUT_F16 ? 2 : 4;
	struct macko_dev d;
	void *x_dev = NULL, *y_dev = NULL;
	if (macko_dev_upload(m, batch, &d, err))
		return -1;
	int rc = -1;
	if (gpu_malloc(&x_dev, nx * 2, "x", err) || gpu_malloc(&y_dev, ny * ysize, "y", err))
		goto out;
	if (beta != 0) {
		/* y_in goes up in the output's type; the kernel reads and writes y in place. */
		for (size_t i = 0; i < (size_t)nvec * m->rows; i++) {
			if (out == MACKO_OUT_F16)
				((uint16_t *)y)[i] = half_from_float(y_in[i]);
			else
				((float *)y)[i] = y_in[i];
		}
	}
	for (int first = 0; first < nvec; first += batch) {
		int n = nvec - first < batch ? nvec - first : batch;
		size_t xo = (size_t)first * m->cols, yo = (size_t)first * m->rows * ysize;
		size_t yb = (size_t)n * m->rows * ysize;
		if (gpu_upload(x_dev, x + xo, (size_t)n * m->cols * 2, err) ||
		    (beta != 0 && gpu_upload(y_dev, (char *)y + yo, yb, err)) ||
		    macko_dev_spmv(&d, x_dev, n, (float)alpha, (float)beta, beta != 0 ? y_dev : NULL,
				   y_dev, out, err) ||
		    gpu_download((char *)y + yo, y_dev, yb, err))
			goto out;
	}
	rc = 0;
out:
	gpu_free(x_dev);
	gpu_free(y_dev);
	macko_dev_free(&d);
	return rc;
}

int macko_run_bench(const struct macko *m, const struct macko_bench_opts *o,
		    struct macko_bench_result *res, int *count, struct sp_err *err)
{
	return macko_bench(m, o, res, count, err);
}
#else
static int multiply_gpu(const struct macko *m, const uint16_t *x, int nvec, double alpha,
			double beta, const float *y_in, void *y, enum macko_out out, struct sp_err *err)
{
	return sp_fail(err, "spkit was built without CUDA");
}

int macko_run_bench(const struct macko *m, const struct macko_bench_opts *o,
		    struct macko_bench_result *res, int *count, struct sp_err *err)
{
	return sp_fail(err, "bench: spkit was built without CUDA");
}
#endif

int macko_multiply(const struct macko *m, const uint16_t *x, int nvec, double alpha, double beta,
		   const float *y_in, void *y, enum macko_out out, int use_gpu, struct sp_err *err)
{
	if (use_gpu)
		return multiply_gpu(m, x, nvec, alpha, beta, y_in, y, out, err);
	return multiply_cpu(m, x, nvec, alpha, beta, y_in, y, out, err);
}
