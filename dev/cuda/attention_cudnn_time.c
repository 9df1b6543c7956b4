/* cuDNN's fused attention through spkit's backend-API graphs
 * (kernels/sample/attention_cudnn.c), timed at ../shared/anchors/H100.md's
 * flash_atten shapes (b4 h32 l2048 and b8 h64 l4096, head dim 128, causal,
 * fp16): the median of 20 event timings after 3 warm-ups, L2 flushed before
 * each (gpu_time), forward and backward each on its own, with TFLOP/s
 * counting the causal half of 4 b h l^2 d for the forward and 2.5 times that
 * for the backward. scripts/bench-attention-torch.py times PyTorch's cuDNN
 * backend (SDPBackend.CUDNN_ATTENTION) the same way; run both in one call.
 *   make CUDA_ARCH=90 build/dev/attention_cudnn_time
 *   LD_LIBRARY_PATH=<cudnn lib>:... build/dev/attention_cudnn_time [libcudnn path]
 * Output CSV: backend,shape,precision,F_dur(us),B_dur(us),F_TFLOPs,B_TFLOPs */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/gpu.h"
#include "sample/attention.h"
#include "sample/attention_cudnn_api.h"

struct job {
	struct attention_cudnn_plan *p;
	void *q, *k, *v, *o, *dout, *dq, *dk, *dv;
	float *stats;
};

static int forward(void *ctx, struct sp_err *err)
{
	struct job *j = ctx;
	return attention_cudnn_forward(j->p, j->q, j->k, j->v, j->o, j->stats, err);
}

static int backward(void *ctx, struct sp_err *err)
{
	struct job *j = ctx;
	return attention_cudnn_backward(j->p, j->q, j->k, j->v, j->o, j->dout, j->stats, j->dq,
					j->dk, j->dv, err);
}

/* n fp16 values in [-1, 1): a 1 Mi-element random tile repeated (the
 * timings do not depend on the values, only on their being finite). */
static int fill(void *dev, size_t n, uint32_t seed, struct sp_err *err)
{
	enum { TILE = 1 << 20 };
	static uint16_t tile[TILE];
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < TILE; i++) {
		x = x * 1664525u + 1013904223u;
		tile[i] = (uint16_t)(0x3800 | (x >> 22 & 0x3ff) | (x >> 16 & 0x8000)); /* +-[0.5, 1) */
	}
	for (size_t at = 0; at < n; at += TILE) {
		size_t k = n - at < TILE ? n - at : TILE;
		if (gpu_upload((uint16_t *)dev + at, tile, k * sizeof(uint16_t), err))
			return -1;
	}
	return 0;
}

static int run(struct attention_cudnn *c, int64_t b, int64_t h, int64_t l, int64_t d,
	       struct sp_err *e)
{
	struct attention_dims dims = {b, l, h, d, 1, 0, 1 / sqrtf((float)d)};
	const size_t n = (size_t)(b * l * h * d), bytes = n * 2;
	struct job j = {0};
	void **t[] = {&j.q, &j.k, &j.v, &j.o, &j.dout, &j.dq, &j.dk, &j.dv};
	int rc = -1;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (gpu_malloc(t[i], bytes, "attention tensor", e))
			goto out;
	if (gpu_malloc((void **)&j.stats, (size_t)(b * h * l) * sizeof(float), "stats", e) ||
	    fill(j.q, n, 1, e) || fill(j.k, n, 2, e) || fill(j.v, n, 3, e) ||
	    fill(j.dout, n, 4, e) || attention_cudnn_plan(c, &dims, &j.p, e))
		goto out;
	struct gpu_timing f, g;
	if (gpu_time(forward, &j, 3, 20, 1, &f, e) || gpu_time(backward, &j, 3, 20, 1, &g, e))
		goto out;
	const double flops = 4.0 * (double)b * (double)h * (double)l * (double)l * (double)d / 2;
	printf("spkit-cudnn,b%lld h%lld l%lld d%lld causal,fp16,%.1f,%.1f,%.0f,%.0f\n",
	       (long long)b, (long long)h, (long long)l, (long long)d, f.median_ms * 1e3,
	       g.median_ms * 1e3, flops / f.median_ms / 1e9, 2.5 * flops / g.median_ms / 1e9);
	fflush(stdout);
	rc = 0;
out:
	attention_cudnn_plan_free(j.p);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		gpu_free(*t[i]);
	gpu_free(j.stats);
	return rc;
}

int main(int argc, char **argv)
{
	struct sp_err e;
	struct attention_cudnn *c;
	struct attention_cudnn_api api;
	const char *lib = argc > 1 ? argv[1] : NULL;
	if (attention_cudnn_api_load(lib, &api, &e) || gpu_select(0, &e) ||
	    attention_cudnn_open(lib, &c, &e)) {
		fprintf(stderr, "attention_cudnn_time: %s\n", e.msg);
		return 1;
	}
	printf("# cuDNN %zu from %s\n", api.version, api.path);
	attention_cudnn_api_unload(&api);
	printf("backend,shape,precision,F_dur(us),B_dur(us),F_TFLOPs,B_TFLOPs\n");
	int failed = run(c, 4, 32, 2048, 128, &e) || run(c, 8, 64, 4096, 128, &e);
	if (failed)
		fprintf(stderr, "attention_cudnn_time: %s\n", e.msg);
	attention_cudnn_close(c);
	return failed;
}
