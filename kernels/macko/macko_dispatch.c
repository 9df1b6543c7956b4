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
static int multiply_gpu(const struct macko *m, const uint16_t *x, int nvec, double alpha,
			double beta, const float *y_in, void *y, enum macko_out out, struct sp_err *err)
{
	size_t nx = (size_t)nvec * m->cols, ny = (size_t)nvec * m->rows;
	size_t ysize = out == MACKO_OUT_F16 ? 2 : 4;
	struct macko_dev d;
	void *x_dev = NULL, *y_dev = NULL;
	if (macko_dev_upload(m, nvec, &d, err))
		return -1;
	int rc = -1;
	if (gpu_malloc(&x_dev, nx * 2, "x", err) || gpu_malloc(&y_dev, ny * ysize, "y", err) ||
	    gpu_upload(x_dev, x, nx * 2, err))
		goto out;
	if (beta != 0) {
		/* y_in goes up in the output's type; the kernel reads and writes y in place. */
		for (size_t i = 0; i < ny; i++) {
			if (out == MACKO_OUT_F16)
				((uint16_t *)y)[i] = half_from_float(y_in[i]);
			else
				((float *)y)[i] = y_in[i];
		}
		if (gpu_upload(y_dev, y, ny * ysize, err))
			goto out;
	}
	if (macko_dev_spmv(&d, x_dev, nvec, (float)alpha, (float)beta, beta != 0 ? y_dev : NULL,
			   y_dev, out, err) ||
	    gpu_download(y, y_dev, ny * ysize, err))
		goto out;
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
