/* cuDNN's fused attention (kernels/sample/attention_cudnn.c) against a
 * double-precision CPU reference, forward (O and the logsumexp stats) and
 * backward (dQ, dK, dV), at fp16 and bf16, causal and not, head dims 64 and
 * 128, on sequences that are not multiples of any tile (77, 200). Inputs are
 * uniform in [-1, 1), rounded to the precision, so both sides see the same
 * numbers. An element passes when |gpu - ref| <= tol (|ref| + rms), rms the
 * tensor's root mean square and tol a number of units in the last place of
 * the precision: the GPU rounds P and dS to it before two of the matmuls.
 * Skips, saying why, when there is no GPU or libcudnn.so.9 cannot be loaded.
 *
 * The reference here is this test's own; kernel-sample's flash_atten CPU
 * reference computes the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/gpu.h"
#include "core/half.h"
#include "core/rng.h"
#include "sample/attention.h"

static struct attention_cudnn *dnn;
static char why_skipped[SP_ERR_MAX];

struct shape {
	int64_t batch, seq, heads, head_dim;
};
static const struct shape shapes[] = {{2, 77, 3, 64}, {1, 77, 2, 128}, {1, 200, 2, 64}};

/* Units in the last place: fp16 2^-11, bf16 2^-8. */
static double ulp(int bf16)
{
	return bf16 ? 0x1p-8 : 0x1p-11;
}

/* The reference, in double: o and lse from q, k, v; then dq, dk, dv from
 * dout. Layout (batch, seq, heads, head_dim); lse (batch, heads, seq). */
struct ref {
	double *q, *k, *v, *dout, *o, *lse, *dq, *dk, *dv;
};

static size_t at(const struct shape *z, int64_t b, int64_t s, int64_t h)
{
	return (size_t)(((b * z->seq + s) * z->heads + h) * z->head_dim);
}

static void reference(const struct shape *z, int causal, double scale, struct ref *r)
{
	const int64_t S = z->seq, D = z->head_dim;
	double *p = malloc((size_t)(S * S) * sizeof *p);
	assert_non_null(p);
	for (int64_t b = 0; b < z->batch; b++) {
		for (int64_t h = 0; h < z->heads; h++) {
			for (int64_t i = 0; i < S; i++) { /* P = softmax(scale q k^T) */
				const int64_t n = causal ? i + 1 : S;
				double m = -INFINITY, sum = 0;
				for (int64_t j = 0; j < n; j++) {
					double dot = 0;
					for (int64_t e = 0; e < D; e++)
						dot += r->q[at(z, b, i, h) + e] * r->k[at(z, b, j, h) + e];
					p[i * S + j] = scale * dot;
					m = fmax(m, p[i * S + j]);
				}
				for (int64_t j = 0; j < n; j++)
					sum += exp(p[i * S + j] - m);
				const double lse = m + log(sum);
				r->lse[(b * z->heads + h) * S + i] = lse;
				for (int64_t j = 0; j < S; j++)
					p[i * S + j] = j < n ? exp(p[i * S + j] - lse) : 0;
				for (int64_t e = 0; e < D; e++) {
					double o = 0;
					for (int64_t j = 0; j < n; j++)
						o += p[i * S + j] * r->v[at(z, b, j, h) + e];
					r->o[at(z, b, i, h) + e] = o;
				}
			}
			for (int64_t i = 0; i < S; i++) { /* dS = P (dO V^T - rowsum(dO O)) */
				double delta = 0;
				for (int64_t e = 0; e < D; e++)
					delta += r->dout[at(z, b, i, h) + e] * r->o[at(z, b, i, h) + e];
				for (int64_t j = 0; j < S; j++) {
					const double pij = p[i * S + j];
					double dp = 0;
					for (int64_t e = 0; e < D; e++)
						dp += r->dout[at(z, b, i, h) + e] * r->v[at(z, b, j, h) + e];
					const double ds = pij * (dp - delta) * scale;
					for (int64_t e = 0; e < D; e++) {
						r->dq[at(z, b, i, h) + e] += ds * r->k[at(z, b, j, h) + e];
						r->dk[at(z, b, j, h) + e] += ds * r->q[at(z, b, i, h) + e];
						r->dv[at(z, b, j, h) + e] +=
							pij * r->dout[at(z, b, i, h) + e];
					}
				}
			}
		}
	}
	free(p);
}

static double to_double(uint16_t x, int bf16)
{
	return bf16 ? bf16_to_float(x) : half_to_float(x);
}

/* Random values in [-1, 1) rounded to the precision: the 16-bit copy for the
 * GPU and the same numbers in double for the reference. */
static void fill(uint16_t *x, double *ref, size_t n, int bf16, struct rng *rng)
{
	for (size_t i = 0; i < n; i++) {
		const float f = (float)(2 * rng_uniform(rng) - 1);
		x[i] = bf16 ? bf16_from_float(f) : half_from_float(f);
		ref[i] = to_double(x[i], bf16);
	}
}

/* Worst |gpu - ref| / (|ref| + rms) over the tensor; fails above tol. */
static void compare(const char *what, const char *label, const double *ref, const uint16_t *g16,
		    const float *g32, size_t n, int bf16, double tol)
{
	double ss = 0, worst = 0;
	size_t worst_at = 0;
	for (size_t i = 0; i < n; i++)
		ss += ref[i] * ref[i];
	const double rms = sqrt(ss / (double)n);
	for (size_t i = 0; i < n; i++) {
		const double g = g16 ? to_double(g16[i], bf16) : g32[i];
		const double dev = fabs(g - ref[i]) / (fabs(ref[i]) + rms);
		if (!(dev <= worst)) {
			worst = dev;
			worst_at = i;
		}
	}
	print_message("%s %s: worst deviation %.2f of the tolerance\n", label, what, worst / tol);
	if (!(worst <= tol))
		fail_msg("%s %s: element %zu is %.6g, reference %.6g (tolerance %.3g x (|ref| + "
			 "rms %.3g))", label, what, worst_at,
			 g16 ? to_double(g16[worst_at], bf16) : g32[worst_at], ref[worst_at], tol,
			 rms);
}

static void *device_copy(const void *host, size_t bytes, const char *what)
{
	struct sp_err e;
	void *d = NULL;
	if (gpu_malloc(&d, bytes, what, &e) || (host && gpu_upload(d, host, bytes, &e)))
		fail_msg("%s", e.msg);
	return d;
}

static void fetch(void *host, const void *dev, size_t bytes)
{
	struct sp_err e;
	if (gpu_download(host, dev, bytes, &e))
		fail_msg("%s", e.msg);
}

static void check_shape(const struct shape *z, int bf16, int causal)
{
	const size_t n = (size_t)(z->batch * z->seq * z->heads * z->head_dim);
	const size_t rows = (size_t)(z->batch * z->heads * z->seq);
	const size_t bytes = n * sizeof(uint16_t);
	const double scale = 1 / sqrt((double)z->head_dim);
	char label[96];
	snprintf(label, sizeof label, "%s %scausal b%lld s%lld h%lld d%lld", bf16 ? "bf16" : "fp16",
		 causal ? "" : "non-", (long long)z->batch, (long long)z->seq,
		 (long long)z->heads, (long long)z->head_dim);

	struct ref r;
	double **all[] = {&r.q, &r.k, &r.v, &r.dout, &r.o, &r.lse, &r.dq, &r.dk, &r.dv};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		assert_non_null(*all[i] = calloc(n, sizeof(double)));
	uint16_t *in[4], *out[4];
	for (int i = 0; i < 4; i++) {
		assert_non_null(in[i] = malloc(bytes));
		assert_non_null(out[i] = malloc(bytes));
	}
	float *stats = malloc(rows * sizeof(float));
	assert_non_null(stats);
	struct rng rng;
	rng_init(&rng, 2026, 0);
	fill(in[0], r.q, n, bf16, &rng);
	fill(in[1], r.k, n, bf16, &rng);
	fill(in[2], r.v, n, bf16, &rng);
	fill(in[3], r.dout, n, bf16, &rng);
	reference(z, causal, scale, &r);

	void *q = device_copy(in[0], bytes, "Q"), *k = device_copy(in[1], bytes, "K");
	void *v = device_copy(in[2], bytes, "V"), *dout = device_copy(in[3], bytes, "dO");
	void *o = device_copy(NULL, bytes, "O"), *dq = device_copy(NULL, bytes, "dQ");
	void *dk = device_copy(NULL, bytes, "dK"), *dv = device_copy(NULL, bytes, "dV");
	float *dstats = device_copy(NULL, rows * sizeof(float), "stats");

	struct attention_dims d = {z->batch, z->seq, z->heads, z->head_dim, causal, bf16,
				   (float)scale};
	struct attention_cudnn_plan *p;
	struct sp_err e;
	if (attention_cudnn_plan(dnn, &d, &p, &e) ||
	    attention_cudnn_forward(p, q, k, v, o, dstats, &e) ||
	    attention_cudnn_backward(p, q, k, v, o, dout, dstats, dq, dk, dv, &e) || gpu_sync(&e))
		fail_msg("%s: %s", label, e.msg);
	fetch(out[0], o, bytes);
	fetch(stats, dstats, rows * sizeof(float));
	fetch(out[1], dq, bytes);
	fetch(out[2], dk, bytes);
	fetch(out[3], dv, bytes);

	const double fwd_tol = 16 * ulp(bf16), bwd_tol = 32 * ulp(bf16);
	compare("O", label, r.o, out[0], NULL, n, bf16, fwd_tol);
	compare("stats", label, r.lse, NULL, stats, rows, bf16, fwd_tol);
	compare("dQ", label, r.dq, out[1], NULL, n, bf16, bwd_tol);
	compare("dK", label, r.dk, out[2], NULL, n, bf16, bwd_tol);
	compare("dV", label, r.dv, out[3], NULL, n, bf16, bwd_tol);

	attention_cudnn_plan_free(p);
	void *dev[] = {q, k, v, dout, o, dq, dk, dv, dstats};
	for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
		gpu_free(dev[i]);
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		free(*all[i]);
	for (int i = 0; i < 4; i++) {
		free(in[i]);
		free(out[i]);
	}
	free(stats);
}

/* state: {bf16, causal} */
static void test_attention(void **state)
{
	const int *c = *state;
	if (!dnn) {
		print_message("skipped: %s\n", why_skipped);
		skip();
	}
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		check_shape(&shapes[i], c[0], c[1]);
}

static int open_cudnn(void **state)
{
	struct sp_err e;
	if (gpu_probe(&e) == 0 || gpu_select(0, &e) ||
	    attention_cudnn_open(getenv("SPKIT_CUDNN"), &dnn, &e))
		snprintf(why_skipped, sizeof why_skipped, "%s", e.msg);
	return 0;
}

static int close_cudnn(void **state)
{
	attention_cudnn_close(dnn);
	return 0;
}

int main(void)
{
	static const int modes[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
	const struct CMUnitTest tests[] = {
		{"fp16 non-causal", test_attention, NULL, NULL, (void *)modes[0]},
		{"fp16 causal", test_attention, NULL, NULL, (void *)modes[1]},
		{"bf16 non-causal", test_attention, NULL, NULL, (void *)modes[2]},
		{"bf16 causal", test_attention, NULL, NULL, (void *)modes[3]},
	};
	return cmocka_run_group_tests_name("attention_cudnn", tests, open_cudnn, close_cudnn);
}
