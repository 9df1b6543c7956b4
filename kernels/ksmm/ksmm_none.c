/* kernels/ksmm/ksmm_gpu.h for builds without nvcc: no device, so every
 * configuration is checked against sm_90's limits and every call that would
 * compile, load or run a kernel fails with "built without CUDA". */
#ifndef SPKIT_CUDA
#include "ksmm/ksmm_impl.h"

static int no_cuda(struct sp_err *err, const char *what)
{
	return sp_fail(err, "%s: spkit was built without CUDA", what);
}

int ksmm_device_limits(size_t *smem_optin, int *cc)
{
	return -1;
}

int ksmm_kernel_get(const struct ksmm_config *cfg, const struct ksmm_pattern *p,
		    enum ksmm_dtype t, enum ksmm_layout l, struct ksmm_kernel **out,
		    struct sp_err *err)
{
	*out = NULL;
	return no_cuda(err, "ksmm_kernel_get");
}

int ksmm_kernel_build(const struct ksmm_config *cfg, const struct ksmm_pattern *p,
		      enum ksmm_dtype t, enum ksmm_layout l, int cc, struct sp_err *err)
{
	return no_cuda(err, "ksmm_kernel_build");
}

void ksmm_kernel_free(struct ksmm_kernel *k)
{
}

int ksmm_kernel_registers(const struct ksmm_kernel *k)
{
	return 0;
}

int ksmm_kernel_run(const struct ksmm_kernel *k, const void *d_w, const void *d_x, void *d_y,
		    int64_t batch, struct sp_err *err)
{
	return no_cuda(err, "ksmm_kernel_run");
}

int ksmm_weights_prepare(const struct ksmm_pattern *p, enum ksmm_dtype t, const void *d_w_abcd,
			 void *d_w_kernel, struct sp_err *err)
{
	return no_cuda(err, "ksmm_weights_prepare");
}

int ksmm_sample_download(void *host, const void *d, int64_t rows, int64_t batch,
			 enum ksmm_layout l, size_t esize, int64_t half, struct sp_err *err)
{
	return no_cuda(err, "ksmm_sample_download");
}

int ksmm_fill_uniform(void *d, int64_t n, enum ksmm_dtype t, uint64_t seed, struct sp_err *err)
{
	return no_cuda(err, "ksmm_fill_uniform");
}

int ksmm_poison(void *d_y, size_t bytes, struct sp_err *err)
{
	return no_cuda(err, "ksmm_poison");
}

int ksmm_kernel_time(const struct ksmm_kernel *k, const void *d_w, const void *d_x, void *d_y,
		     int64_t batch, int warmup, int reps, struct gpu_timing *out,
		     struct sp_err *err)
{
	return no_cuda(err, "ksmm_kernel_time");
}

int ksmm_bench_pattern(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		       enum ksmm_layout l, const struct ksmm_config *cfg,
		       const struct ksmm_bench_opts *opts, struct ksmm_bench_result *out,
		       struct sp_err *err)
{
	return no_cuda(err, "ksmm_bench_pattern");
}
#endif
