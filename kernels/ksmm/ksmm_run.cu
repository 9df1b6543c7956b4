/* The tuned KSMM kernel's host side: a configuration becomes -D options,
 * NVRTC compiles kernels/ksmm/ksmm_kernel.cuh for the running device's
 * architecture (or the disk cache hands back the machine code), the CUDA
 * runtime loads it as a library (cudaLibraryLoadData: no libcuda link),
 * and launches run it. Also the weights' permutation to the kernels'
 * layout and the timing job.
 *
 * NVRTC rather than nvcc at build time: a tuning space of hundreds of
 * configurations, each a different unrolling, cannot be compiled into the
 * binary, and the published kernel's sed-and-nvcc loop needs a compiler on
 * the GPU node and a process per configuration. */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_check.cuh"

extern "C" {
#include "ksmm/ksmm_impl.h"
}

static inline const char *gpu_status_message(nvrtcResult rc)
{
	return rc == NVRTC_SUCCESS ? NULL : nvrtcGetErrorString(rc);
}

struct ksmm_kernel {
	cudaLibrary_t lib;
	cudaKernel_t fn;
	struct ksmm_config cfg;
	struct ksmm_pattern p;
	enum ksmm_dtype t;
	enum ksmm_layout l;
	int threads, registers;
	size_t smem;
	int tma; /* KSMM_TMA: tiles by the tensor memory accelerator */
};

/* Must match struct ksmm_args in the kernel source. */
struct kernel_args {
	int a, b, c, d, batch;
};

extern "C" int ksmm_device_limits(size_t *smem_optin, int *cc)
{
	int dev, smem, major, minor;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
		    cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
		cudaGetLastError(); /* no device: not an error to keep */
		return -1;
	}
	*smem_optin = (size_t)smem;
	*cc = major * 10 + minor;
	return 0;
}

/* The build's options: every hyperparameter, the dtype, the layout and the
 * width of x's loads, then the architecture. */
#define MAX_OPTS 16
struct build_opts {
	char text[MAX_OPTS][48];
	const char *ptr[MAX_OPTS];
	int n;
};

static void opt_add(struct build_opts *o, const char *name, int value)
{
	snprintf(o->text[o->n], sizeof o->text[0], name[0] == '-' ? "%s%d" : "-D%s=%d", name,
		 value);
	o->ptr[o->n] = o->text[o->n];
	o->n++;
}

/* SIMT fp32 bsl points staged by cp.async in 16-byte vectors go by TMA on
 * sm_90 and later (the vectors' checks make c and the batch multiples of 4,
 * so the tensor maps' strides are multiples of 16 bytes). */
static int kernel_tma(const struct ksmm_config *k, const struct ksmm_pattern *p,
		      enum ksmm_dtype t, enum ksmm_layout l, int cc)
{
	return cc >= 90 && k->variant == KSMM_SIMT && k->vec == 4 && ksmm_async(p, t, l, k);
}

static void build_opts_make(const struct ksmm_config *k, const struct ksmm_pattern *p,
			    enum ksmm_dtype t, enum ksmm_layout l, int cc, struct build_opts *o)
{
	o->n = 0;
	opt_add(o, "KSMM_DTYPE", t == KSMM_F32 ? 0 : t == KSMM_F16 ? 1 : 2);
	opt_add(o, "KSMM_BSL", l == KSMM_BS_LAST);
	opt_add(o, "KSMM_MMA", k->variant == KSMM_MMA);
	opt_add(o, "KSMM_TF32", k->tf32);
	opt_add(o, "KSMM_TR", k->tile_rows);
	opt_add(o, "KSMM_TK", k->tile_k);
	opt_add(o, "KSMM_TB", k->tile_batch);
	opt_add(o, "KSMM_WR", k->thread_rows);
	opt_add(o, "KSMM_WB", k->thread_batch);
	opt_add(o, "KSMM_VEC", k->vec);
	opt_add(o, "KSMM_XVEC", ksmm_xvec(p, l, k));
	opt_add(o, "KSMM_STAGES", k->stages);
	opt_add(o, "KSMM_TD", k->tile_d);
	opt_add(o, "KSMM_TMA", kernel_tma(k, p, t, l, cc));
	opt_add(o, "-arch=sm_", cc);
}

/* The first line of NVRTC's log, for a one-line message. */
static void log_first_line(nvrtcProgram prog, char *out, size_t n)
{
	size_t len = 0;
	out[0] = 0;
	if (nvrtcGetProgramLogSize(prog, &len) != NVRTC_SUCCESS || len < 2)
		return;
	char *log = (char *)malloc(len);
	if (!log)
		return;
	if (nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
		log[strcspn(log, "\n")] = 0;
		snprintf(out, n, "%s", log);
	}
	free(log);
}

static int nvrtc_compile(const struct build_opts *o, void **cubin, size_t *size,
			 struct sp_err *err)
{
	nvrtcProgram prog;
	GPU_CHECK(err, nvrtcCreateProgram(&prog, ksmm_kernel_src, "ksmm_kernel.cuh", 0, NULL,
					  NULL));
	int rc = -1;
	const nvrtcResult res = nvrtcCompileProgram(prog, o->n, o->ptr);
	ksmm_cache_count_compile();
	if (res != NVRTC_SUCCESS) {
		char line[300];
		log_first_line(prog, line, sizeof line);
		sp_fail(err, "NVRTC: %s: %s", nvrtcGetErrorString(res), line);
		goto done;
	}
	if (GPU_FAILED(err, nvrtcGetCUBINSize(prog, size)))
		goto done;
	*cubin = malloc(*size);
	if (!*cubin) {
		sp_fail(err, "NVRTC: out of host memory for %zu bytes of machine code", *size);
		goto done;
	}
	if (GPU_FAILED(err, nvrtcGetCUBIN(prog, (char *)*cubin))) {
		free(*cubin);
		*cubin = NULL; /* the callers free what they are given */
		goto done;
	}
	rc = 0;
done:
	nvrtcDestroyProgram(&prog);
	return rc;
}

/* The machine code for the options: from the disk cache, or compiled and
 * then stored there. The key names everything the code depends on. */
static int cubin_get(const struct build_opts *o, void **cubin, size_t *size, struct sp_err *err)
{
	int major, minor;
	GPU_CHECK(err, nvrtcVersion(&major, &minor));
	char key[1024];
	int len = snprintf(key, sizeof key, "ksmm_kernel.cuh %016llx nvrtc %d.%d",
			   (unsigned long long)ksmm_hash(ksmm_kernel_src, strlen(ksmm_kernel_src),
							 0),
			   major, minor);
	for (int i = 0; i < o->n && len < (int)sizeof key; i++)
		len += snprintf(key + len, sizeof key - len, " %s", o->ptr[i]);
	if (ksmm_cache_load(key, cubin, size))
		return 0;
	if (nvrtc_compile(o, cubin, size, err))
		return -1;
	ksmm_cache_store(key, *cubin, *size);
	return 0;
}

extern "C" int ksmm_kernel_build(const struct ksmm_config *cfg, const struct ksmm_pattern *p,
				 enum ksmm_dtype t, enum ksmm_layout l, int cc, struct sp_err *err)
{
	char why[SP_ERR_MAX];
	if (ksmm_config_check_any(p, 0, t, l, cfg, why, sizeof why)) {
		sp_fail(err, "%s", why);
		return KSMM_UNRUNNABLE;
	}
	struct build_opts o;
	build_opts_make(cfg, p, t, l, cc, &o);
	void *cubin = NULL;
	size_t size;
	const int rc = cubin_get(&o, &cubin, &size, err);
	free(cubin);
	return rc;
}

extern "C" void ksmm_kernel_free(struct ksmm_kernel *k)
{
	if (!k)
		return;
	if (k->lib)
		cudaLibraryUnload(k->lib);
	free(k);
}

extern "C" int ksmm_kernel_registers(const struct ksmm_kernel *k)
{
	return k->registers;
}

/* Load the code and check what only the compiled kernel knows: its
 * registers allow the block size. */
static int kernel_load(struct ksmm_kernel *k, const void *cubin, struct sp_err *err)
{
	GPU_CHECK(err, cudaLibraryLoadData(&k->lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
	GPU_CHECK(err, cudaLibraryGetKernel(&k->fn, k->lib, "ksmm_kernel"));
	struct cudaFuncAttributes attr;
	GPU_CHECK(err, cudaFuncGetAttributes(&attr, (const void *)k->fn));
	k->registers = attr.numRegs;
	if (k->threads > attr.maxThreadsPerBlock) {
		sp_fail(err, "registers: %d a thread allow %d threads a block, the configuration has %d",
			attr.numRegs, attr.maxThreadsPerBlock, k->threads);
		return KSMM_UNRUNNABLE;
	}
	int dev;
	GPU_CHECK(err, cudaGetDevice(&dev));
	GPU_CHECK(err, cudaKernelSetAttributeForDevice(
			       k->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)k->smem, dev));
	return 0;
}

extern "C" int ksmm_kernel_get(const struct ksmm_config *cfg, const struct ksmm_pattern *p,
			       enum ksmm_dtype t, enum ksmm_layout l, struct ksmm_kernel **out,
			       struct sp_err *err)
{
	*out = NULL;
	char why[SP_ERR_MAX];
	if (ksmm_config_check_any(p, 0, t, l, cfg, why, sizeof why)) {
		sp_fail(err, "%s", why);
		return KSMM_UNRUNNABLE;
	}
	size_t smem_optin;
	int cc;
	if (ksmm_device_limits(&smem_optin, &cc))
		return sp_fail(err, "ksmm: no CUDA device to compile for");
	struct ksmm_kernel *k = (struct ksmm_kernel *)calloc(1, sizeof *k);
	if (!k)
		return sp_fail(err, "ksmm: out of host memory");
	k->cfg = *cfg;
	k->p = *p;
	k->t = t;
	k->l = l;
	k->threads = ksmm_config_threads(cfg);
	k->smem = ksmm_config_smem_bytes(cfg, t, l);
	k->tma = kernel_tma(cfg, p, t, l, cc);

	struct build_opts o;
	build_opts_make(cfg, p, t, l, cc, &o);
	void *cubin = NULL;
	size_t size;
	int rc = cubin_get(&o, &cubin, &size, err);
	if (rc == 0)
		rc = kernel_load(k, cubin, err);
	free(cubin);
	if (rc) {
		ksmm_kernel_free(k);
		return rc;
	}
	*out = k;
	return 0;
}

/* The tensor maps of a TMA kernel (struct tensor_map in the kernel source):
 * W in the kernels' (a,d,b,c) layout as (c, b, a*d), X (bsl) as
 * (B, d, c, a), innermost first; boxes of one step's tiles; zeros past
 * the edges. cuTensorMapEncodeTiled is a driver function: reached through
 * the runtime, so spkit still links no libcuda. */
static int tensor_maps_make(const struct ksmm_kernel *k, const void *d_w, const void *d_x,
			    int64_t batch, CUtensorMap *tw, CUtensorMap *tx, struct sp_err *err)
{
	static PFN_cuTensorMapEncodeTiled_v12000 encode;
	static PFN_cuGetErrorString_v6000 error_string;
	if (!encode) {
		cudaDriverEntryPointQueryResult found, found_string;
		GPU_CHECK(err, cudaGetDriverEntryPointByVersion("cuGetErrorString",
							       (void **)&error_string, 6000,
							       cudaEnableDefault, &found_string));
		GPU_CHECK(err, cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
							       (void **)&encode, 12000,
							       cudaEnableDefault, &found));
		if (found != cudaDriverEntryPointSuccess ||
		    found_string != cudaDriverEntryPointSuccess) {
			encode = NULL;
			return sp_fail(err, "ksmm: the CUDA driver has no %s",
				       found != cudaDriverEntryPointSuccess ? "cuTensorMapEncodeTiled"
									   : "cuGetErrorString");
		}
	}
	const cuuint64_t a = k->p.a, b = k->p.b, c = k->p.c, d = k->p.d, n = batch;
	const cuuint64_t elem = sizeof(float);
	const cuuint64_t w_dims[3] = {c, b, a * d}, w_strides[2] = {c * elem, b * c * elem};
	const cuuint64_t x_dims[4] = {n, d, c, a},
			 x_strides[3] = {n * elem, d * n * elem, c * d * n * elem};
	const cuuint32_t tk = (cuuint32_t)k->cfg.tile_k;
	const cuuint32_t w_box[3] = {tk, (cuuint32_t)k->cfg.tile_rows, 1},
			 x_box[4] = {(cuuint32_t)k->cfg.tile_batch, 1, tk, 1}, ones[4] = {1, 1, 1, 1};
	const struct {
		const char *what;
		CUtensorMap *map;
		const void *base;
		cuuint32_t rank;
		const cuuint64_t *dims, *strides;
		const cuuint32_t *box;
	} maps[2] = {{"weights", tw, d_w, 3, w_dims, w_strides, w_box},
		     {"input", tx, d_x, 4, x_dims, x_strides, x_box}};
	for (int i = 0; i < 2; i++) {
		const CUresult rc = encode(maps[i].map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, maps[i].rank,
					   (void *)maps[i].base, maps[i].dims, maps[i].strides,
					   maps[i].box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
					   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
					   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
		if (rc != CUDA_SUCCESS) {
			const char *msg = NULL;
			if (error_string(rc, &msg) != CUDA_SUCCESS || !msg)
				msg = "unknown error";
			return sp_fail(err, "ksmm: cuTensorMapEncodeTiled (%s): %s", maps[i].what, msg);
		}
	}
	return 0;
}

extern "C" int ksmm_kernel_run(const struct ksmm_kernel *k, const void *d_w, const void *d_x,
			       void *d_y, int64_t batch, struct sp_err *err)
{
	char why[SP_ERR_MAX];
	if (ksmm_config_check(&k->p, batch, k->t, k->l, &k->cfg, why, sizeof why))
		return sp_fail(err, "ksmm: %s", why);
	struct kernel_args args = {(int)k->p.a, (int)k->p.b, (int)k->p.c, (int)k->p.d, (int)batch};
	const void *w = d_w, *x = d_x;
	void *y = d_y;
	CUtensorMap tw, tx;
	if (k->tma && tensor_maps_make(k, d_w, d_x, batch, &tw, &tx, err))
		return -1;
	void *params[] = {&w, &x, &y, &args, &tw, &tx};
	const dim3 grid((unsigned)ksmm_grid_blocks(&k->p, batch, &k->cfg));
	GPU_CHECK(err, cudaLaunchKernel((const void *)k->fn, grid, dim3(k->threads), params,
					k->smem, 0));
	return 0;
}

/* (a,b,c,d) -> (a,d,b,c): one thread an output element, reads gathered
 * with stride d (the weights are small and read once). */
template <typename T>
__global__ void weights_permute(const T *__restrict__ in, T *__restrict__ out, int a, int b,
				int c, int d)
{
	const int64_t total = (int64_t)a * b * c * d;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
	     i += (int64_t)gridDim.x * blockDim.x) {
		const int ga = (int)(i % c);
		int64_t r = i / c;
		const int be = (int)(r % b);
		r /= b;
		const int de = (int)(r % d);
		const int al = (int)(r / d);
		out[i] = in[(((int64_t)al * b + be) * c + ga) * d + de];
	}
}

extern "C" int ksmm_weights_prepare(const struct ksmm_pattern *p, enum ksmm_dtype t,
				    const void *d_w_abcd, void *d_w_kernel, struct sp_err *err)
{
	const int64_t total = p->a * p->b * p->c * p->d;
	const unsigned blocks = (unsigned)(total / 256 + 1 < 4096 ? total / 256 + 1 : 4096);
	if (t == KSMM_F32)
		weights_permute<float><<<blocks, 256>>>((const float *)d_w_abcd, (float *)d_w_kernel,
							(int)p->a, (int)p->b, (int)p->c, (int)p->d);
	else
		weights_permute<unsigned short><<<blocks, 256>>>(
			(const unsigned short *)d_w_abcd, (unsigned short *)d_w_kernel, (int)p->a,
			(int)p->b, (int)p->c, (int)p->d);
	GPU_CHECK_LAUNCH(err, "weights_permute");
	return 0;
}

/* Batch entries [n0, n0 + count) of d into host, which holds ncols
 * entries compactly, at its entry `at`. */
static int download_batch(void *host, const void *d, int64_t rows, int64_t batch,
			  enum ksmm_layout l, size_t es, int64_t n0, int64_t count, int64_t ncols,
			  int64_t at, struct sp_err *err)
{
	char *to = (char *)host;
	const char *from = (const char *)d;
	const size_t r = (size_t)rows;
	if (l == KSMM_BS_FIRST) /* count whole rows of rows elements */
		GPU_CHECK(err, cudaMemcpy(to + at * r * es, from + n0 * r * es, count * r * es,
					  cudaMemcpyDeviceToHost));
	else /* count elements of each of the rows */
		GPU_CHECK(err, cudaMemcpy2D(to + at * es, ncols * es, from + n0 * es, batch * es,
					    count * es, r, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" int ksmm_sample_download(void *host, const void *d, int64_t rows, int64_t batch,
				    enum ksmm_layout l, size_t esize, int64_t half,
				    struct sp_err *err)
{
	const int64_t n = ksmm_sample_size(batch, half);
	if (n == batch)
		return download_batch(host, d, rows, batch, l, esize, 0, batch, n, 0, err);
	if (download_batch(host, d, rows, batch, l, esize, 0, half, n, 0, err))
		return -1;
	return download_batch(host, d, rows, batch, l, esize, batch - half, half, n, half, err);
}

/* splitmix64 of (seed, i) to 24 bits, then [-1, 1) in T. */
template <typename T, typename F>
__global__ void fill_uniform(T *__restrict__ d, int64_t n, uint64_t seed, F convert)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		uint64_t z = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		d[i] = convert((float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f);
	}
}

struct to_f32 {
	__device__ float operator()(float v) const { return v; }
};
struct to_f16 {
	__device__ unsigned short operator()(float v) const
	{
		return __half_as_ushort(__float2half_rn(v));
	}
};
struct to_bf16 {
	__device__ unsigned short operator()(float v) const
	{
		return __bfloat16_as_ushort(__float2bfloat16_rn(v));
	}
};

extern "C" int ksmm_fill_uniform(void *d, int64_t n, enum ksmm_dtype t, uint64_t seed,
				 struct sp_err *err)
{
	const unsigned blocks = (unsigned)(n / 256 + 1 < 8192 ? n / 256 + 1 : 8192);
	if (t == KSMM_F32)
		fill_uniform<<<blocks, 256>>>((float *)d, n, seed, to_f32());
	else if (t == KSMM_F16)
		fill_uniform<<<blocks, 256>>>((unsigned short *)d, n, seed, to_f16());
	else
		fill_uniform<<<blocks, 256>>>((unsigned short *)d, n, seed, to_bf16());
	GPU_CHECK_LAUNCH(err, "fill_uniform");
	return 0;
}

extern "C" int ksmm_poison(void *d_y, size_t bytes, struct sp_err *err)
{
	GPU_CHECK(err, cudaMemsetAsync(d_y, 0xff, bytes, 0));
	return 0;
}

struct run_job {
	const struct ksmm_kernel *k;
	const void *w, *x;
	void *y;
	int64_t batch;
};

static int run_enqueue(void *ctx, struct sp_err *err)
{
	const struct run_job *j = (const struct run_job *)ctx;
	return ksmm_kernel_run(j->k, j->w, j->x, j->y, j->batch, err);
}

extern "C" int ksmm_kernel_time(const struct ksmm_kernel *k, const void *d_w, const void *d_x,
				void *d_y, int64_t batch, int warmup, int reps,
				struct gpu_timing *out, struct sp_err *err)
{
	struct run_job job = {k, d_w, d_x, d_y, batch};
	return gpu_time(run_enqueue, &job, warmup, reps, 1, out, err);
}
