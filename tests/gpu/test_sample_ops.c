/* kernel-sample's GPU operators (kernels/sample/) against their CPU
 * references (lib/sample/), every operator at fp16, bf16 and fp32, on shapes
 * whose row lengths are and are not multiples of the 16-byte vector and of
 * any block, from a few rows to thousands: the same seed gives both sides the
 * same inputs (checked), then every forward output is compared, then every
 * backward output. An element passes when |gpu - cpu| <= tol (|cpu| + rms)
 * with rms the tensor's root mean square (a scale for sums that cancel) and
 * tol a few units in the last place of the precision. Also: shapes too
 * large for the device fail in setup with the reason, and the next one runs.
 * Fused attention (fp16 and bf16 only) runs once per backend that loads:
 * ours always, cuDNN's where libcudnn.so.9 opens; sequences from 3 to past
 * two tiles, none a multiple of a tile, heads of 64 and 128, one and
 * several heads a partition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "sample/sample_gpu.h"
#include "sample/sample_op.h"
#include "sample/sample_spec.h"

#define SEED 2026
#define NSHAPES 4

struct op_case {
	const char *name;
	int64_t shape[NSHAPES][7]; /* an all-zero shape ends the list */
};

static const struct op_case cases[] = {
	{"embedding", {{1, 3, 37, 72}, {2, 2, 19, 13}, {8, 4, 256, 256}}},
	/* norms: the register backward (2 vectors a thread: dim 13, 1000 where
	 * the last thread has 1, and 8192 at 16 bits: 512 threads) and the
	 * cached one (dim 4099: single elements; 8192 at fp32) */
	{"layernorm", {{3, 5, 8192}, {2, 19, 13}, {4, 64, 1000}, {1, 8, 4099}}},
	{"RMSlayernorm", {{3, 5, 8192}, {2, 19, 13}, {4, 64, 1000}, {1, 8, 4099}}},
	{"linear1", {{2, 3, 37, 72}, {3, 2, 19, 15}, {1, 4, 128, 256}}},
	{"linear2", {{2, 3, 37, 72}, {3, 2, 19, 15}, {1, 4, 128, 256}}},
	{"linear3", {{2, 3, 37, 72}, {3, 2, 19, 15}, {1, 4, 128, 256}}},
	{"linear4", {{2, 3, 37, 72}, {3, 2, 19, 15}, {1, 4, 128, 256}}},
	{"linear_final", {{8, 2, 19, 24}, {3, 1, 33, 13}}},
	{"gelu", {{2, 3, 37, 72}, {3, 2, 19, 15}, {1, 4, 512, 1000}}},
	{"RoPE", {{1, 2, 4, 37, 64}, {2, 3, 4, 19, 24}, {1, 2, 8, 129, 1024}}},
	{"res_add", {{3, 37, 72}, {2, 19, 13}, {4, 512, 1000}}},
	{"parallel_cross_entropy_128", {{8, 2, 19}, {1, 1, 7}, {3, 2, 5}}},
	/* softmax: rows of a warp (1 and 2 vectors a lane; 8 at 2048 columns and
	 * 16 bits), of a pair of warps (4096 at 16 bits, 2048 at fp32) and of a
	 * block (4104: 513 vectors at 16 bits; 4096 at fp32) */
	{"softmax", {{2, 2, 4, 37}, {1, 1, 3, 200}, {1, 1, 2, 4096}, {1, 1, 1, 4104}}},
	{"fillmask", {{1, 2, 2, 37, 6}, {2, 1, 4, 64, 8}, {1, 1, 2, 1000, 16}}},
	{"baddbmm", {{1, 2, 2, 37, 6}, {2, 2, 8, 64, 256}, {1, 1, 4, 129, 512}}},
	{"bmm", {{1, 2, 2, 37, 6}, {2, 2, 8, 64, 256}, {1, 1, 4, 129, 512}}},
	{"ScaledUpperTriangMaskedSoftmax", {{2, 2, 4, 37}, {1, 1, 3, 200}, {1, 1, 2, 2048}, {1, 2, 4, 1030}}},
	/* moe: rows not a multiple of any vector, mp 2 (F = 15), thousands of
	 * pairs, and 3 tokens over 16 experts (most get none: their dW are 0). */
	{"moe",
	 {{1, 3, 74, 72, 4, 40, 2},
	  {2, 2, 38, 24, 6, 30, 3},
	  {1, 4, 256, 256, 8, 512, 2},
	  {1, 1, 3, 16, 16, 8, 1}}},
	/* Parameter counts of 3.3 million, odd (2197: the tail), and mp 8. */
	{"firstStage_optimizer", {{1, 64, 1}, {2, 24, 2}}},
	{"middleStage_optimizer", {{2, 72, 3}, {1, 13, 1}}},
	{"lastStage_optimizer", {{8, 24, 2}, {1, 13, 1}}},
	/* 8- and 16-bit column indices (hidden up to 256, above), k odd, rows
	 * longer than a work item (degree 40 with sigma-1 log-normal tails). */
	{"maxk_spmm", {{1000, 8, 64, 7}, {3000, 40, 300, 32}, {50, 3, 5, 5}}},
	/* one vector, eight (one pass), sixteen (two); odd columns; dense rows */
	{"macko_spmv", {{1000, 777, 30, 1}, {513, 2048, 50, 8}, {301, 96, 100, 16}}},
	/* ksmm: a butterfly-like factor, a small odd one, a wide batch */
	{"ksmm", {{1, 64, 64, 4, 256}, {3, 5, 7, 2, 9}, {4, 32, 16, 2, 1024}}},
};
#define NCASES (sizeof cases / sizeof cases[0])

static const struct op_case attention_cases[] = {
	{"flash_atten", {{1, 2, 2, 37, 128}, {2, 1, 4, 200, 512}, {1, 1, 1, 3, 64}, {1, 1, 2, 300, 256}}},
	{"flash_atten_causal",
	 {{1, 2, 2, 37, 128}, {2, 1, 4, 200, 512}, {1, 1, 1, 3, 64}, {1, 1, 2, 300, 256}}},
};

/* A few units in the last place: fp16 2^-11, bf16 2^-8, fp32 2^-24 (the
 * fp32 bound is looser: the GPU sums in fp32, the reference in double). */
static const double tolerance[] = {8 * 0x1p-11, 8 * 0x1p-8, 2e-5};

static void compare(const char *name, const int64_t *shape, int nshape, enum sample_precision p,
		    const struct sample_tensor *t, const void *gpu_state, const float *cpu)
{
	struct sp_err e;
	float *gpu = malloc((size_t)t->count * sizeof(float) + 4);
	assert_non_null(gpu);
	if (sample_gpu_tensor_read(gpu_state, (int)(t - ((const struct sample_state *)gpu_state)->t),
				   gpu, &e))
		fail_msg("%s: reading '%s': %s", name, t->name, e.msg);
	if (t->kind == SAMPLE_IDS) {
		assert_memory_equal(gpu, cpu, (size_t)t->count * 4);
		free(gpu);
		return;
	}
	double ss = 0;
	for (int64_t j = 0; j < t->count; j++)
		ss += (double)cpu[j] * cpu[j];
	const double rms = sqrt(ss / (double)t->count);
	const double tol = t->kind == SAMPLE_VALUES ? tolerance[p] : tolerance[SAMPLE_FP32] * 8;
	for (int64_t j = 0; j < t->count; j++) {
		double diff = fabs((double)gpu[j] - cpu[j]);
		if (!(diff <= tol * (fabs(cpu[j]) + rms))) {
			char dims[64] = "";
			for (int i = 0; i < nshape; i++)
				snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld",
					 i ? "," : "", (long long)shape[i]);
			fail_msg("%s [%s] %s: '%s'[%lld]: gpu %.8g, cpu %.8g (rms %.3g)", name, dims,
				 sample_precision_name(p), t->name, (long long)j, gpu[j], cpu[j], rms);
		}
	}
	free(gpu);
}

/* Compare every tensor of one stage. */
static void compare_stage(const char *name, const int64_t *shape, int nshape,
			  enum sample_precision p, const struct sample_state *cpu,
			  const void *gpu, enum sample_stage stage)
{
	for (int i = 0; i < cpu->n; i++)
		if (cpu->t[i].stage == stage && cpu->t[i].count)
			compare(name, shape, nshape, p, &((const struct sample_state *)gpu)->t[i], gpu,
				cpu->t[i].data);
}

static void check_op(const struct op_case *c)
{
	const struct sample_op *cop = sample_cpu_op(c->name), *gop = sample_gpu_op(c->name);
	struct sp_err e;
	assert_non_null(cop);
	assert_non_null(gop);
	assert_int_equal(gop->nshape, cop->nshape);
	assert_true((gop->backward == NULL) == (cop->backward == NULL));
	for (int s = 0; s < NSHAPES && c->shape[s][0]; s++)
		for (int p = 0; p < 3; p++) {
			const int64_t *shape = c->shape[s];
			void *cs, *gs;
			assert_int_equal(gop->check(shape, &e), 0);
			if (sample_check_precision(c->name, p, &e))
				continue;
			assert_int_equal(cop->setup(shape, p, SEED, &cs, &e), 0);
			if (gop->setup(shape, p, SEED, &gs, &e))
				fail_msg("%s: GPU setup: %s", c->name, e.msg);
			compare_stage(c->name, shape, cop->nshape, p, cs, gs, SAMPLE_INPUT);
			assert_int_equal(cop->forward(cs, &e), 0);
			if (gop->forward(gs, &e) || gpu_sync(&e))
				fail_msg("%s: GPU forward: %s", c->name, e.msg);
			compare_stage(c->name, shape, cop->nshape, p, cs, gs, SAMPLE_FORWARD);
			if (cop->backward) {
				assert_int_equal(cop->backward(cs, &e), 0);
				if (gop->backward(gs, &e) || gpu_sync(&e))
					fail_msg("%s: GPU backward: %s", c->name, e.msg);
				compare_stage(c->name, shape, cop->nshape, p, cs, gs,
					      SAMPLE_BACKWARD);
			}
			cop->teardown(cs);
			gop->teardown(gs);
		}
}

static void test_op(void **state)
{
	check_op(*state);
}

/* Both attention operators on each backend; fp32 refused at setup. */
static void test_attention(void **unused)
{
	static const enum sample_attention backends[] = {SAMPLE_ATTENTION_OWN,
							 SAMPLE_ATTENTION_CUDNN};
	struct sp_err e;
	for (int b = 0; b < 2; b++) {
		enum sample_attention used;
		if (sample_gpu_attention_use(backends[b], &used, &e)) {
			fprintf(stderr, "# cuDNN's attention not tested: %s\n", e.msg);
			continue;
		}
		assert_int_equal(used, backends[b]);
		for (size_t i = 0; i < 2; i++)
			check_op(&attention_cases[i]);
	}
	void *st = (void *)1;
	assert_int_equal(sample_gpu_op("flash_atten")->setup((int64_t[]){1, 1, 1, 8, 64},
							     SAMPLE_FP32, SEED, &st, &e),
			 -1);
	assert_null(st);
	assert_non_null(strstr(e.msg, "fp16 or bf16 only"));
}

/* 2^40 bytes of input: setup says which tensor did not fit; a row beyond
 * the shared memory a block may have: setup says so; the device stays usable. */
static void test_setup_failures(void **unused)
{
	const struct sample_op *op = sample_gpu_op("linear_final");
	struct sp_err e;
	void *st = (void *)1;
	int64_t huge[] = {1, 1024, 65536, 8192};
	assert_int_equal(op->check(huge, &e), 0);
	assert_int_equal(op->setup(huge, SAMPLE_FP16, SEED, &st, &e), -1);
	assert_null(st);
	assert_non_null(strstr(e.msg, "'x'"));
	/* A row too long for the norm's row cache: the reason, at setup. */
	const struct sample_op *ln = sample_gpu_op("layernorm");
	int64_t wide[] = {1, 2, 60000};
	assert_int_equal(ln->setup(wide, SAMPLE_FP32, SEED, &st, &e), -1);
	assert_null(st);
	assert_non_null(strstr(e.msg, "bytes of shared memory a block, this GPU allows"));
	int64_t small[] = {1, 1, 8, 64};
	assert_int_equal(op->setup(small, SAMPLE_FP16, SEED, &st, &e), 0);
	assert_int_equal(op->forward(st, &e), 0);
	assert_int_equal(gpu_sync(&e), 0);
	op->teardown(st);
}

static int select_gpu(void **state)
{
	struct sp_err e;
	if (gpu_count() < 1 || gpu_select(0, &e)) {
		fprintf(stderr, "no GPU\n");
		return -1;
	}
	return 0;
}

/* SAMPLE_OPS=a,b,... runs those operators' cases only (and the setup
 * failures), for a quick check of a few on a shared GPU. */
static int wanted(const char *name)
{
	const char *list = getenv("SAMPLE_OPS");
	size_t n = strlen(name);
	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return !list || !*list;
}

int main(void)
{
	struct CMUnitTest tests[NCASES + 2];
	size_t n = 0;
	for (size_t i = 0; i < NCASES; i++)
		if (wanted(cases[i].name))
			tests[n++] = (struct CMUnitTest){cases[i].name, test_op, NULL, NULL,
							 (void *)&cases[i]};
	if (wanted("flash_atten") || wanted("flash_atten_causal"))
		tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_attention);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_setup_failures);
	return _cmocka_run_group_tests("sample_ops", tests, n, select_gpu, NULL);
}
