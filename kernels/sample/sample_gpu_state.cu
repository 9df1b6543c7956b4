/* The GPU operators' state (sample_gpu.cuh): every tensor of the layout in
 * device memory, filled by a kernel with the numbers the CPU reference
 * starts from (sample_rand.h), then the family's own set-up. Setup runs once
 * per shape, outside the timed calls; a failure (out of memory) frees what
 * was made and returns the reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample_gpu.cuh"
extern "C" {
#include "core/half.h"
#include "sample/sample_gpu.h"
#include "sample/sample_rand.h"
}

/* One element per thread, grid-stride: setup only, never timed. */
template <typename T>
static __global__ void fill_values(T *p, int64_t count, uint64_t stream, float scale, bool abs)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float x = sample_rand_value(stream, (uint64_t)i, scale);
		p[i] = from_f<T>(abs ? fabsf(x) : x);
	}
}

static __global__ void fill_ids(int32_t *p, int64_t count, uint64_t stream, int64_t range)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += (int64_t)gridDim.x * blockDim.x)
		p[i] = sample_rand_id(stream, (uint64_t)i, range);
}

static int fill(const struct sample_tensor *t, int index, enum sample_precision p, uint64_t seed,
		struct sp_err *err)
{
	if (t->fill == SAMPLE_ROPE_FREQ) { /* a small table: made on the host */
		size_t bytes = (size_t)t->count * 4;
		void *host = malloc(bytes);
		if (!host)
			return sp_fail(err, "out of memory for '%s' (%zu bytes)", t->name, bytes);
		sample_tensor_fill_host(t, index, p, seed, host);
		int rc = gpu_upload(t->data, host, bytes, err);
		free(host);
		return rc;
	}
	uint64_t stream = sample_rand_stream(seed, index);
	const bool abs = t->fill == SAMPLE_RANDOM_ABS;
	int64_t blocks = (t->count + 255) / 256;
	int grid = (int)(blocks < 65536 ? blocks : 65536);
	if (t->kind == SAMPLE_IDS)
		fill_ids<<<grid, 256>>>((int32_t *)t->data, t->count, stream, t->id_range);
	else if (t->kind == SAMPLE_STATS)
		fill_values<<<grid, 256>>>((float *)t->data, t->count, stream, t->scale, abs);
	else
		SAMPLE_DISPATCH(p, T,
				fill_values<<<grid, 256>>>((T *)t->data, t->count, stream, t->scale,
							   abs));
	GPU_CHECK_LAUNCH(err, "fill_values");
	return 0;
}

void sample_gpu_teardown(void *state)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	if (!st)
		return;
	if (st->release)
		st->release(st->extra);
	for (int i = 0; i < st->s.n; i++)
		gpu_free(st->s.t[i].data);
	free(st);
}

int sample_gpu_setup(sample_layout_fn layout, sample_gpu_prepare_fn prepare, const int64_t *shape,
		     enum sample_precision p, uint64_t seed, void **state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)calloc(1, sizeof *st);
	*state = NULL;
	if (!st)
		return sp_fail(err, "out of memory for an operator's state");
	layout(shape, &st->s);
	st->s.p = p;
	st->s.seed = seed;
	/* The kernels launch a block (or a row of blocks) a row of the 2-D view:
	 * grid.x is at most 2^31 - 1. */
	if (st->s.d.rows > INT32_MAX) {
		long long rows = (long long)st->s.d.rows;
		free(st);
		return sp_fail(err, "%lld rows: more than one launch takes (2^31 - 1)", rows);
	}
	for (int i = 0; i < st->s.n; i++) {
		struct sample_tensor *t = &st->s.t[i];
		if (!t->count)
			continue;
		if (gpu_malloc(&t->data, (size_t)t->count * sample_tensor_elem_bytes(t, p), t->name,
			       err) ||
		    fill(t, i, p, seed, err)) {
			sample_gpu_teardown(st);
			return -1;
		}
	}
	if ((prepare && prepare(st, err)) || gpu_sync(err)) {
		sample_gpu_teardown(st);
		return -1;
	}
	*state = st;
	return 0;
}

int sample_gpu_sms(struct sp_err *err, int *sms)
{
	int dev;
	GPU_CHECK(err, cudaGetDevice(&dev));
	GPU_CHECK(err, cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
	return 0;
}

int sample_gpu_smem_fits(size_t bytes, const char *what, struct sp_err *err)
{
	int dev, optin;
	GPU_CHECK(err, cudaGetDevice(&dev));
	GPU_CHECK(err, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	if (bytes > (size_t)optin)
		return sp_fail(err, "%s needs %zu bytes of shared memory a block, this GPU allows %d",
			       what, bytes, optin);
	return 0;
}

extern "C" int sample_gpu_tensor_read(const void *state, int i, void *host, struct sp_err *err)
{
	const struct sample_gpu_state *st = (const struct sample_gpu_state *)state;
	const struct sample_tensor *t = &st->s.t[i];
	size_t elem = sample_tensor_elem_bytes(t, st->s.p);
	if (!t->count)
		return 0;
	if (elem == 4)
		return gpu_download(host, t->data, (size_t)t->count * 4, err);
	uint16_t *raw = (uint16_t *)malloc((size_t)t->count * 2);
	if (!raw)
		return sp_fail(err, "out of memory reading '%s'", t->name);
	if (gpu_download(raw, t->data, (size_t)t->count * 2, err)) {
		free(raw);
		return -1;
	}
	float *out = (float *)host;
	for (int64_t j = 0; j < t->count; j++) {
		uint32_t bits = (uint32_t)raw[j] << 16; /* bf16: the top half of a float */
		if (st->s.p == SAMPLE_FP16)
			out[j] = half_to_float(raw[j]);
		else
			memcpy(&out[j], &bits, 4);
	}
	free(raw);
	return 0;
}
