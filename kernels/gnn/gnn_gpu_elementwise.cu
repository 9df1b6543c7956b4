/* The backend's elementwise operations on the GPU (gnn_backend.h: bias_add,
 * axpby, axpy_eps, relu and its backward, dropout, Adam): one grid-stride
 * kernel, an operation a functor.
 *
 * Work: a thread an element, at most 32 blocks of THREADS an SM. Bytes:
 * each operand read once and the result written once; the kernels are
 * memory-bound, which is why their arithmetic can be in double (below). */
#include <math.h>

#include "gnn/gnn_gpu.cuh"

extern "C" {
#include "gnn/gnn_dropout.h"
}

template <class F>
__global__ void __launch_bounds__(THREADS) each_kernel(int64_t count, F f)
{
	for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < count;
	     i += (int64_t)gridDim.x * THREADS)
		f(i);
}

template <class F>
static int launch_each(const struct cuda_backend *c, int64_t count, F f, const char *what,
		       struct sp_err *err)
{
	if (count <= 0)
		return 0;
	each_kernel<<<blocks_for(c, count, THREADS, 32), THREADS>>>(count, f);
	return gpu_check_status(cudaGetLastError(), what, __FILE__, __LINE__, err) ? -1 : 0;
}

struct bias_add_op {
	float *y;
	const float *bias;
	int64_t n;
	__device__ void operator()(int64_t i) const { y[i] += bias[i % n]; }
};

/* The arithmetic of these ops is in double, rounded to float once, as
 * lib/gnn/gnn_cpu.c does: the work is memory-bound, so it costs nothing, and
 * both backends agree to the last bit or close to it. */

/* beta = 0 ignores y's old contents, as BLAS does (they may be NaN). */
struct axpby_op {
	double alpha;
	const float *x;
	double beta;
	float *y;
	__device__ void operator()(int64_t i) const
	{
		y[i] = (float)(alpha * x[i] + (beta != 0.0 ? beta * y[i] : 0.0));
	}
};

struct axpy_eps_op {
	const float *eps;
	const float *x;
	float *y;
	__device__ void operator()(int64_t i) const
	{
		y[i] = (float)(y[i] + (1.0 + (double)*eps) * x[i]);
	}
};

struct relu_op {
	const float *x;
	float *y;
	/* x < 0 is false for NaN, which passes through (and shows). */
	__device__ void operator()(int64_t i) const { y[i] = x[i] < 0.0f ? 0.0f : x[i]; }
};

struct relu_backward_op {
	const float *y, *dy;
	float *dx;
	__device__ void operator()(int64_t i) const { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }
};

struct dropout_op {
	const float *x;
	float *y;
	float p;
	uint64_t seed;
	/* A division, as the header writes it, in double as the CPU's: the
	 * two agree to the bit (nvcc's division is correctly rounded). */
	__device__ void operator()(int64_t i) const
	{
		y[i] = gnn_dropout_keep(seed, (uint64_t)i, p) ? (float)(x[i] / (1.0 - p)) : 0.0f;
	}
};

/* PyTorch's Adam (torch.optim.Adam, weight_decay as L2 on the gradient),
 * bc1 = 1 - beta1^t and bc2 = 1 - beta2^t the bias corrections. */
struct adam_op {
	float *param;
	const float *grad;
	float *m1, *m2;
	double lr, beta1, beta2, eps, weight_decay, bc1, bc2;
	__device__ void operator()(int64_t i) const
	{
		const double g = grad[i] + weight_decay * param[i];
		const double a = beta1 * m1[i] + (1.0 - beta1) * g;
		const double v = beta2 * m2[i] + (1.0 - beta2) * g * g;
		m1[i] = (float)a;
		m2[i] = (float)v;
		param[i] = (float)(param[i] - lr * (a / bc1) / (sqrt(v / bc2) + eps));
	}
};

int gnn_gpu_bias_add(struct gnn_backend *b, float *y, const float *bias, int64_t m, int64_t n,
		     struct sp_err *err)
{
	return launch_each(impl(b), m * n, bias_add_op{y, bias, n}, "bias_add", err);
}

int gnn_gpu_axpby(struct gnn_backend *b, float alpha, const float *x, float beta, float *y,
		  int64_t count, struct sp_err *err)
{
	return launch_each(impl(b), count, axpby_op{alpha, x, beta, y}, "axpby", err);
}

int gnn_gpu_axpy_eps(struct gnn_backend *b, const float *eps, const float *x, float *y,
		     int64_t count, struct sp_err *err)
{
	return launch_each(impl(b), count, axpy_eps_op{eps, x, y}, "axpy_eps", err);
}

int gnn_gpu_relu(struct gnn_backend *b, const float *x, float *y, int64_t count,
		 struct sp_err *err)
{
	return launch_each(impl(b), count, relu_op{x, y}, "relu", err);
}

int gnn_gpu_relu_backward(struct gnn_backend *b, const float *y, const float *dy, float *dx,
			  int64_t count, struct sp_err *err)
{
	return launch_each(impl(b), count, relu_backward_op{y, dy, dx}, "relu_backward", err);
}

int gnn_gpu_dropout(struct gnn_backend *b, const float *x, float *y, int64_t count, float p,
		    uint64_t seed, struct sp_err *err)
{
	if (!(p >= 0.0f && p < 1.0f))
		return sp_fail(err, "dropout: rate %g is outside [0, 1)", (double)p);
	return launch_each(impl(b), count, dropout_op{x, y, p, seed}, "dropout", err);
}

int gnn_gpu_adam(struct gnn_backend *b, float *param, const float *grad, float *m1, float *m2,
		 int64_t count, float lr, float beta1, float beta2, float eps,
		 float weight_decay, int64_t t, struct sp_err *err)
{
	if (t < 1)
		return sp_fail(err, "adam: step %lld, expected 1 or more", (long long)t);
	const double bc1 = 1.0 - pow((double)beta1, (double)t);
	const double bc2 = 1.0 - pow((double)beta2, (double)t);
	const adam_op op = {param, grad, m1, m2, lr, beta1, beta2, eps, weight_decay, bc1, bc2};
	return launch_each(impl(b), count, op, "adam", err);
}

