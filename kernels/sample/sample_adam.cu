/* The optimizer steps on the GPU: one fused Adam kernel over a pipeline
 * stage's flat parameter buffer (lib/sample/sample_ref_adam.c's update, in
 * fp32): fp32 master weights and moments read and written in place, the
 * gradient read at the run's precision, the model's copy written at it.
 * Bytes a parameter at fp16/bf16: 12 + 2 read, 12 + 2 written (28); a
 * thread takes 4 consecutive parameters (16-byte loads of the fp32 arrays). The
 * alternative PyTorch runs (torch.optim.Adam(fused=True) on fp32 master
 * weights, with the gradient converted before and the model's copy made
 * after) moves 40 bytes a parameter in three kernels. */
#include "sample/sample_gpu.cuh"

#include <math.h>

#define ADAM_THREADS 256

/* The step's constants, folded on the host. */
struct adam_k {
	float b1, b2, step, rsq, eps; /* step = lr / (1 - b1), rsq = 1 / sqrt(1 - b2) */
};

static __device__ __forceinline__ float adam_one(const struct adam_k &k, float &p, float &m,
						 float &v, float g)
{
	m = k.b1 * m + (1 - k.b1) * g;
	v = k.b2 * v + (1 - k.b2) * g * g;
	p -= k.step * m / (sqrtf(v) * k.rsq + k.eps);
	return p;
}

/* Grid-stride over groups of 4 parameters (float4 loads of p, m and v); the
 * last n % 4 by the first threads. */
template <typename T>
static __global__ void adam_step(struct adam_k k, float *__restrict__ p, float *__restrict__ m,
				 float *__restrict__ v, const T *__restrict__ g, T *__restrict__ w,
				 int64_t n)
{
	const int64_t groups = n / 4, tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	for (int64_t q = tid; q < groups; q += (int64_t)gridDim.x * blockDim.x) {
		float4 pp = ((float4 *)p)[q], mm = ((float4 *)m)[q], vv = ((float4 *)v)[q];
		const vec<T, 4> gg = vload<T, 4>(g + 4 * q);
		vec<T, 4> ww;
		ww.v[0] = from_f<T>(adam_one(k, pp.x, mm.x, vv.x, to_f(gg.v[0])));
		ww.v[1] = from_f<T>(adam_one(k, pp.y, mm.y, vv.y, to_f(gg.v[1])));
		ww.v[2] = from_f<T>(adam_one(k, pp.z, mm.z, vv.z, to_f(gg.v[2])));
		ww.v[3] = from_f<T>(adam_one(k, pp.w, mm.w, vv.w, to_f(gg.v[3])));
		((float4 *)p)[q] = pp;
		((float4 *)m)[q] = mm;
		((float4 *)v)[q] = vv;
		vstore<T, 4>(w + 4 * q, ww);
	}
	if (tid < n % 4) {
		const int64_t i = groups * 4 + tid;
		w[i] = from_f<T>(adam_one(k, p[i], m[i], v[i], to_f(g[i])));
	}
}

int sample_gpu_adam_forward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	const int64_t n = st->s.d.cols;
	const struct adam_k k = {(float)SAMPLE_ADAM_BETA1, (float)SAMPLE_ADAM_BETA2,
				 (float)(SAMPLE_ADAM_LR / (1 - SAMPLE_ADAM_BETA1)),
				 (float)(1 / sqrt(1 - SAMPLE_ADAM_BETA2)), (float)SAMPLE_ADAM_EPS};
	/* a thread a group of 4, up to 2^20 blocks (then grid-stride) */
	const int64_t need = (n / 4 + ADAM_THREADS - 1) / ADAM_THREADS;
	const unsigned grid = (unsigned)(need < 1 ? 1 : need < (1 << 20) ? need : (1 << 20));
	SAMPLE_DISPATCH(st->s.p, T,
			adam_step<T><<<grid, ADAM_THREADS>>>(
				k, sample_dev<float>(st, ADAM_MASTER), sample_dev<float>(st, ADAM_M),
				sample_dev<float>(st, ADAM_V), sample_dev<T>(st, ADAM_GRAD),
				sample_dev<T>(st, ADAM_WEIGHT), n));
	GPU_CHECK_LAUNCH(err, "adam_step");
	return 0;
}
