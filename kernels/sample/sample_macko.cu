/* macko_spmv on the GPU: spkit's MACKO SpMV (kernels/macko/) on the
 * operator's matrix (sample_macko_matrix, compressed and uploaded once at
 * setup), y = A x for 1 to 16 vectors, fp32 out. x is a fp32 tensor (the
 * run's precision does not apply: MACKO is fp16); setup rounds it to fp16
 * in place, as the reference does, and keeps the fp16 copy the product
 * reads, so the timed call is the product alone. */
#include "sample/sample_gpu.cuh"
extern "C" {
#include "macko/macko_gpu.h"
}

struct macko_extra {
	struct macko_dev dev;
	__half *x16; /* vectors x cols */
};

static void macko_release(void *extra)
{
	struct macko_extra *e = (struct macko_extra *)extra;
	if (!e)
		return;
	macko_dev_free(&e->dev);
	gpu_free(e->x16);
	free(e);
}

static __global__ void macko_round_x(float *x, __half *x16, int64_t n)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		x16[i] = __float2half_rn(x[i]);
		x[i] = __half2float(x16[i]);
	}
}

int sample_gpu_macko_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	struct macko_extra *e = (struct macko_extra *)calloc(1, sizeof *e);
	if (!e)
		return sp_fail(err, "out of memory for the MACKO state");
	st->extra = e;
	st->release = macko_release;
	const int64_t n = st->s.t[MACKO_X].count;
	if (gpu_malloc((void **)&e->x16, (size_t)n * 2, "MACKO x (fp16)", err))
		return -1;
	const int64_t blocks = (n + 255) / 256;
	macko_round_x<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256>>>(
		sample_dev<float>(st, MACKO_X), e->x16, n);
	GPU_CHECK_LAUNCH(err, "macko_round_x");
	struct macko m;
	if (sample_macko_matrix(&st->s, &m, err))
		return -1;
	int rc = macko_dev_upload(&m, (int)st->s.d.k, &e->dev, err);
	macko_free(&m);
	return rc;
}

int sample_gpu_macko_forward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	struct macko_extra *e = (struct macko_extra *)st->extra;
	return macko_dev_spmv(&e->dev, e->x16, (int)st->s.d.k, 1.0f, 0.0f, NULL,
			      st->s.t[MACKO_Y].data, MACKO_OUT_F32, err);
}
