/* kernel-sample's CPU operators (lib/sample/): the table, the shape checks
 * and their reasons, the padded vocabulary, the inputs' generator, known
 * values of each family, and every backward against central finite
 * differences of its forward (loss = sum over outputs of upstream . output,
 * at fp32, fresh state for each evaluation, so in-place operators work too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/sample_op.h"
#include "sample/sample_rand.h"
#include "sample/sample_spec.h"
#include "core/half.h"
#include "macko/macko.h"
#include "sparse/csr.h"

#define SEED 27

/* A small shape per operator: sizes that are no power of two. */
static const struct {
	const char *name;
	int64_t shape[7];
} small[] = {
	{"embedding", {2, 2, 3, 5}},
	{"layernorm", {2, 3, 7}},
	{"RMSlayernorm", {2, 3, 7}},
	{"linear1", {2, 2, 3, 6}},
	{"linear2", {2, 2, 3, 6}},
	{"linear3", {2, 2, 3, 6}},
	{"linear4", {2, 2, 3, 6}},
	{"linear_final", {8, 1, 2, 3}},
	{"flash_atten", {2, 2, 4, 5, 256}},
	{"flash_atten_causal", {1, 1, 2, 5, 256}},
	{"gelu", {2, 2, 3, 6}},
	{"RoPE", {1, 2, 2, 3, 12}},
	{"res_add", {2, 3, 5}},
	{"parallel_cross_entropy_128", {8, 2, 3}},
	{"softmax", {2, 2, 4, 5}},
	{"fillmask", {1, 1, 2, 5, 4}},
	{"baddbmm", {1, 2, 2, 5, 6}},
	{"bmm", {1, 2, 2, 5, 6}},
	{"ScaledUpperTriangMaskedSoftmax", {2, 2, 4, 5}},
	/* top_k = the experts: every token takes every expert, so the finite
	 * differences never cross a change of route. */
	{"moe", {1, 2, 3, 5, 3, 6, 3}},
	{"firstStage_optimizer", {2, 6, 1}},
	{"middleStage_optimizer", {1, 5, 2}},
	{"lastStage_optimizer", {3, 3, 1}},
	/* k = hidden: every entry kept, so no finite difference crosses a change
	 * of the kept set. */
	{"maxk_spmm", {9, 3, 5, 5}},
	{"macko_spmv", {37, 50, 30, 3}},
	{"ksmm", {2, 3, 5, 2, 7}},
};
#define NSMALL (sizeof small / sizeof small[0])

static struct sample_state *setup(const char *name, const int64_t *shape, enum sample_precision p)
{
	const struct sample_op *op = sample_cpu_op(name);
	struct sp_err e;
	void *st;
	assert_non_null(op);
	assert_int_equal(op->check(shape, &e), 0);
	assert_int_equal(op->setup(shape, p, SEED, &st, &e), 0);
	return st;
}

static float *values(struct sample_state *st, int i)
{
	return (float *)st->t[i].data;
}

static void test_table(void **unused)
{
	size_t n = 0;
	for (; sample_op_names[n]; n++) {
		const struct sample_op *op = sample_cpu_op(sample_op_names[n]);
		assert_non_null(op);
		assert_string_equal(op->name, sample_op_names[n]);
		assert_true(op->nshape >= 3 && op->nshape <= 7);
		assert_true((op->backward == NULL) == !sample_has_backward(op->name));
	}
	assert_int_equal(n, NSMALL);
	assert_null(sample_cpu_op("flash"));
	assert_string_equal(sample_cpu_op("RoPE")->shape_names[2], "h");
	assert_string_equal(sample_cpu_op("layernorm")->shape_names[0], "b");
}

static void test_precision(void **unused)
{
	enum sample_precision p;
	assert_int_equal(sample_precision_parse("bf16", &p), 0);
	assert_int_equal(p, SAMPLE_BF16);
	assert_string_equal(sample_precision_name(SAMPLE_FP16), "fp16");
	assert_int_equal(sample_precision_parse("fp64", &p), -1);
	/* Nearest, ties to even: 1 + 2^-11 is a tie in fp16, 1 + 2^-8 in bf16. */
	assert_true(sample_round(SAMPLE_FP16, 1 + 0x1p-11) == 1.0f);
	assert_true(sample_round(SAMPLE_FP16, 1 + 0x1p-11 + 0x1p-20) == 1 + 0x1p-10f);
	assert_true(sample_round(SAMPLE_BF16, 1 + 0x1p-8) == 1.0f);
	assert_true(sample_round(SAMPLE_BF16, 1 + 3 * 0x1p-8) == 1 + 0x1p-6f);
}

static void expect_refusal(const char *name, const int64_t *shape, const char *reason)
{
	struct sp_err e;
	assert_int_equal(sample_cpu_op(name)->check(shape, &e), -1);
	if (!strstr(e.msg, reason))
		fail_msg("%s: \"%s\" lacks \"%s\"", name, e.msg, reason);
}

static void test_checks(void **unused)
{
	expect_refusal("linear1", (int64_t[]){8, 4, 2048, 100}, "dim 100 not divisible by mp 8");
	expect_refusal("softmax", (int64_t[]){4, 4, 6, 1024}, "h 6 not divisible by mp 4");
	expect_refusal("bmm", (int64_t[]){1, 4, 24, 1024, 4000}, "dim 4000 not divisible by h 24");
	expect_refusal("RoPE", (int64_t[]){1, 1, 4, 8, 12}, "head size dim/h = 3 is odd");
	expect_refusal("layernorm", (int64_t[]){0, 8, 8}, "b 0 is below 1");
	expect_refusal("flash_atten", (int64_t[]){1, 4, 16, 1024, 2560},
		       "head size dim/h = 160 is not 64 or 128");
	expect_refusal("flash_atten_causal", (int64_t[]){16, 4, 24, 1024, 3072},
		       "h 24 not divisible by mp 16");
	expect_refusal("res_add", (int64_t[]){1 << 20, 1 << 20, 1 << 20}, "too large");
	expect_refusal("moe", (int64_t[]){2, 1, 8, 6, 5, 4, 1}, "moe_num_experts 5 not divisible by mp 2");
	expect_refusal("moe", (int64_t[]){2, 1, 8, 6, 4, 4, 3}, "mp 2 times top_k 3 is above");
	expect_refusal("moe", (int64_t[]){1, 1, 8, 6, 4, 25, 1}, "intermediate_size 25 is above 4 dim");
	expect_refusal("moe", (int64_t[]){2, 1, 7, 6, 4, 4, 1}, "l 7 not divisible by mp 2");
	expect_refusal("moe", (int64_t[]){2, 1, 8, 6, 4, 5, 1}, "intermediate_size 5 not divisible");
	expect_refusal("lastStage_optimizer", (int64_t[]){3, 8, 1}, "dim 8 not divisible by mp 3");
	expect_refusal("maxk_spmm", (int64_t[]){10, 10, 8, 2}, "degree 10 is not below nodes 10");
	expect_refusal("maxk_spmm", (int64_t[]){10, 2, 2000, 2}, "hidden 2000 is above 1024");
	expect_refusal("maxk_spmm", (int64_t[]){10, 2, 8, 9}, "k 9 is above hidden 8");
	expect_refusal("macko_spmv", (int64_t[]){10, 10, 101, 1}, "density 101 is above 100");
	expect_refusal("macko_spmv", (int64_t[]){10, 10, 50, 17}, "vectors 17 is above 16");
	expect_refusal("macko_spmv", (int64_t[]){1 << 20, 1 << 14, 50, 1}, "2^34 or more");
	expect_refusal("ksmm", (int64_t[]){64, 64, 64, 64, 16384}, "a*b*d*batch reaches 2^31");
	expect_refusal("middleStage_optimizer", (int64_t[]){1, (int64_t)1 << 28, 1},
		       "parameter count overflows");
	struct sp_err e;
	assert_int_equal(sample_cpu_op("moe")->check((int64_t[]){8, 8, 5120, 8192, 64, 8192, 8},
						     &e), 0);
	assert_int_equal(sample_cpu_op("linear_final")->check((int64_t[]){3, 1, 1, 7}, &e), 0);
	assert_int_equal(sample_cpu_op("fillmask")->check((int64_t[]){2, 4, 16, 1024, 2048}, &e), 0);
	/* The largest collect shapes pass. */
	assert_int_equal(sample_cpu_op("linear1")->check((int64_t[]){16, 8, 5120, 8192}, &e), 0);
	assert_int_equal(sample_cpu_op("bmm")->check((int64_t[]){1, 8, 64, 5120, 8192}, &e), 0);
	assert_int_equal(sample_cpu_op("flash_atten")->check((int64_t[]){16, 8, 64, 5120, 8192}, &e),
			 0);
}

/* Fused attention is half-precision: fp32 refused with the reason, the rest
 * of the operators run at every precision. */
static void test_precision_checks(void **unused)
{
	struct sp_err e;
	assert_int_equal(sample_check_precision("flash_atten_causal", SAMPLE_FP32, &e), -1);
	assert_non_null(strstr(e.msg, "flash_atten_causal runs in fp16 or bf16 only"));
	assert_int_equal(sample_check_precision("flash_atten", SAMPLE_BF16, &e), 0);
	for (size_t i = 0; sample_op_names[i]; i++)
		if (strncmp(sample_op_names[i], "flash_atten", 11))
			assert_int_equal(sample_check_precision(sample_op_names[i], SAMPLE_FP32, &e), 0);
}

static void test_vocab_and_layouts(void **unused)
{
	assert_int_equal(sample_vocab_partition(1), 50304);
	assert_int_equal(sample_vocab_partition(2), 25216);
	assert_int_equal(sample_vocab_partition(8), 6400);
	struct sample_state st;
	sample_layout_linear1((int64_t[]){2, 4, 8, 64}, &st);
	assert_true(st.d.m == 32 && st.d.k == 64 && st.d.n == 96 && st.t[LIN_B].count == 96);
	sample_layout_linear4((int64_t[]){2, 4, 8, 64}, &st);
	assert_true(st.d.k == 128 && st.d.n == 64 && st.t[LIN_B].count == 0);
	sample_layout_linear_final((int64_t[]){4, 1, 2, 16}, &st);
	assert_int_equal(st.d.n, 12672);
	sample_layout_baddbmm((int64_t[]){2, 4, 16, 32, 512}, &st);
	assert_true(st.d.batch == 32 && st.d.m == 32 && st.d.k == 32 && st.d.n == 32);
	sample_layout_bmm((int64_t[]){2, 4, 16, 32, 1024}, &st);
	assert_true(st.d.batch == 32 && st.d.m == 32 && st.d.k == 32 && st.d.n == 64);
	sample_layout_RoPE((int64_t[]){2, 3, 8, 5, 256}, &st);
	assert_true(st.d.rows == 5 * 3 * 4 && st.d.cols == 32 && st.t[ROPE_FREQ].count == 16);
	sample_layout_flash_atten((int64_t[]){2, 3, 8, 5, 512}, &st);
	assert_true(st.d.batch == 3 && st.d.heads == 4 && st.d.seq == 5 && st.d.cols == 64);
	assert_true(st.t[ATT_Q].count == 3 * 5 * 4 * 64 && st.t[ATT_LSE].count == 3 * 4 * 5);
	assert_true(st.t[ATT_LSE].kind == SAMPLE_STATS && st.t[ATT_O].upstream == ATT_DO);
}

/* A Megatron-LM GPT layer on one of mp ranks holds 12 dim^2/mp + 7 dim/mp +
 * 6 dim parameters; the first stage adds the vocabulary partition's
 * embedding, the last the final LayerNorm and the LM head. */
static void test_stage_params(void **unused)
{
	assert_int_equal(sample_stage_params("middle", (int64_t[]){1, 4, 1}), 12 * 16 + 28 + 24);
	assert_int_equal(sample_stage_params("middle", (int64_t[]){2, 8, 3}), 3 * (384 + 28 + 48));
	assert_int_equal(sample_stage_params("first", (int64_t[]){2, 8, 1}), 460 + 25216 * 8);
	assert_int_equal(sample_stage_params("last", (int64_t[]){2, 8, 1}), 460 + 16 + 25216 * 8);
	/* GPT-3 2.7B-like: dim 2560, 32 layers, mp 1: 2.5e9 in the middle. */
	assert_int_equal(sample_stage_params("middle", (int64_t[]){1, 2560, 32}),
			 32 * (12LL * 2560 * 2560 + 13 * 2560));
	struct sample_state st;
	sample_layout_lastStage_optimizer((int64_t[]){2, 8, 1}, &st);
	assert_int_equal(st.t[ADAM_MASTER].count, 460 + 16 + 25216 * 8);
	assert_int_equal(st.t[ADAM_V].fill, SAMPLE_RANDOM_ABS);
	sample_layout_moe((int64_t[]){2, 3, 8, 16, 4, 12, 2}, &st);
	assert_true(st.d.rows == 12 && st.d.m == 24 && st.d.n == 6 && st.d.experts == 4);
	assert_int_equal(st.t[MOE_W1].count, 4 * 6 * 16);
}

static void test_inputs_repeat(void **unused)
{
	int64_t shape[] = {2, 3, 7};
	struct sample_state *a = setup("layernorm", shape, SAMPLE_BF16);
	struct sample_state *b = setup("layernorm", shape, SAMPLE_BF16);
	assert_memory_equal(a->t[NORM_X].data, b->t[NORM_X].data, 42 * sizeof(float));
	assert_memory_not_equal(a->t[NORM_X].data, a->t[NORM_DY].data, 42 * sizeof(float));
	for (int i = 0; i < 42; i++) {
		float x = values(a, NORM_X)[i];
		assert_true(x >= -1 && x < 1 && sample_round(SAMPLE_BF16, x) == x);
	}
	sample_cpu_op("layernorm")->teardown(a);
	sample_cpu_op("layernorm")->teardown(b);
	assert_true(sample_rand_value(1, 0, 1.0f) != sample_rand_value(2, 0, 1.0f));
}

static void run(const char *name, struct sample_state *st, int backward)
{
	const struct sample_op *op = sample_cpu_op(name);
	struct sp_err e;
	assert_int_equal(backward ? op->backward(st, &e) : op->forward(st, &e), 0);
}

/* Four tokens, four experts, top 2: token t points at expert t alone, so it
 * takes expert t first and then the lowest other (ties go to the lower
 * index): expert 0 gets every token, in token order (rows 0-3), expert 1
 * tokens 0 and 1 (rows 4, 5), experts 2 and 3 one each. */
static void test_moe_routing(void)
{
	const int64_t shape[] = {1, 1, 4, 4, 4, 8, 2};
	struct sample_state *st = setup("moe", shape, SAMPLE_FP32);
	float *x = values(st, MOE_X), *wr = values(st, MOE_WR), *w1 = values(st, MOE_W1);
	for (int i = 0; i < 16; i++)
		x[i] = wr[i] = i % 5 == 0 ? 1.0f : 0.0f;
	run("moe", st, 0);
	const int32_t *expert = st->t[MOE_EXPERT].data;
	const int32_t want[] = {0, 1, 1, 0, 2, 0, 3, 0};
	assert_memory_equal(expert, want, sizeof want);
	const float *probs = values(st, MOE_PROBS), *gate = values(st, MOE_GATE);
	assert_float_equal(probs[0], exp(1) / (exp(1) + 3), 1e-6);
	assert_float_equal(gate[1], 1 / (exp(1) + 3), 1e-6);
	/* Row 5 is expert 1's token 1: h = x_1 . w1[1][f] = w1[1][f][1]. */
	for (int f = 0; f < 8; f++) {
		assert_float_equal(values(st, MOE_H)[5 * 8 + f], w1[(8 + f) * 4 + 1], 1e-7);
		assert_float_equal(values(st, MOE_H)[2 * 8 + f], w1[f * 4 + 2], 1e-7);
	}
	/* out = gate-weighted rows of Y: token 3 takes rows 7 (expert 3) and 3. */
	const float *y = values(st, MOE_Y), *out = values(st, MOE_OUT);
	for (int d = 0; d < 4; d++)
		assert_float_equal(out[12 + d], (double)gate[6] * y[28 + d] + (double)gate[7] * y[12 + d],
				   1e-6);
	sample_cpu_op("moe")->teardown(st);
}

/* maxk_spmm keeps the k largest of each row (ascending columns) and
 * averages them over each node's neighbours (mean edge values 1/deg). */
static void test_maxk_values(void)
{
	const int64_t shape[] = {6, 2, 5, 2};
	struct sample_state *st = setup("maxk_spmm", shape, SAMPLE_FP32);
	float *x = values(st, MAXK_X);
	const float row0[] = {0.125f, 0.5f, -0.25f, 0.75f, 0.25f};
	memcpy(x, row0, sizeof row0);
	run("maxk_spmm", st, 0);
	assert_true(values(st, MAXK_KEPT)[0] == 0.5f && values(st, MAXK_KEPT)[1] == 0.75f);
	struct csr g;
	float *vals;
	struct sp_err e;
	assert_int_equal(sample_maxk_graph(st, &g, &vals, &e), 0);
	assert_int_equal(g.nnz, 12);
	for (int64_t r = 0; r < 6; r++)
		for (int c = 0; c < 5; c++) {
			double want = 0;
			for (int64_t i = g.indptr[r]; i < g.indptr[r + 1]; i++) {
				const float *xj = x + (int64_t)g.indices[i] * 5;
				int above = 0; /* entries of the row that beat column c */
				for (int o = 0; o < 5; o++)
					above += xj[o] > xj[c] || (xj[o] == xj[c] && o < c);
				want += above < 2 ? (double)vals[i] * xj[c] : 0;
			}
			assert_float_equal(values(st, MAXK_Y)[r * 5 + c], want, 1e-6);
		}
	csr_free(&g);
	free(vals);
	sample_cpu_op("maxk_spmm")->teardown(st);
}

/* macko_spmv: y = A x with x rounded to fp16, A the decompressed matrix. */
static void test_macko_values(void)
{
	const int64_t shape[] = {7, 20, 40, 2};
	struct sample_state *st = setup("macko_spmv", shape, SAMPLE_BF16);
	const float *x = values(st, MACKO_X);
	for (int i = 0; i < 40; i++)
		assert_true(sample_round(SAMPLE_FP16, x[i]) == x[i]);
	run("macko_spmv", st, 0);
	struct macko m;
	struct sp_err e;
	uint16_t dense[140];
	assert_int_equal(sample_macko_matrix(st, &m, &e), 0);
	assert_true(m.elements > 20 && m.elements < 100); /* about 40% of 140 */
	macko_decompress(&m, dense);
	for (int v = 0; v < 2; v++)
		for (int r = 0; r < 7; r++) {
			double want = 0;
			for (int c = 0; c < 20; c++)
				want += (double)half_to_float(dense[r * 20 + c]) * x[v * 20 + c];
			assert_float_equal(values(st, MACKO_Y)[v * 7 + r], want, 1e-6);
		}
	macko_free(&m);
	sample_cpu_op("macko_spmv")->teardown(st);
}

/* ksmm: y[n][al,be,de] = sum_ga W[al,be,ga,de] x[n][al,ga,de], batch first. */
static void test_ksmm_values(void)
{
	const int64_t shape[] = {2, 3, 4, 5, 3}; /* a b c d batch */
	struct sample_state *st = setup("ksmm", shape, SAMPLE_BF16);
	run("ksmm", st, 0);
	const float *w = values(st, KS_W), *x = values(st, KS_X), *y = values(st, KS_Y);
	for (int n = 0; n < 3; n++)
		for (int al = 0; al < 2; al++)
			for (int be = 0; be < 3; be++)
				for (int de = 0; de < 5; de++) {
					double want = 0;
					for (int ga = 0; ga < 4; ga++)
						want += (double)w[((al * 3 + be) * 4 + ga) * 5 + de] *
							x[n * 40 + (al * 4 + ga) * 5 + de];
					assert_true(y[n * 30 + (al * 3 + be) * 5 + de] ==
						    sample_round(SAMPLE_BF16, want));
				}
	sample_cpu_op("ksmm")->teardown(st);
}

static void test_known_values(void **unused)
{
	struct sample_state *st = setup("layernorm", (int64_t[]){1, 1, 4}, SAMPLE_FP32);
	for (int j = 0; j < 4; j++) {
		values(st, NORM_X)[j] = (float)(j + 1); /* mean 2.5, var 1.25 */
		values(st, NORM_W)[j] = 2.0f;
		values(st, NORM_B)[j] = 1.0f;
	}
	run("layernorm", st, 0);
	assert_float_equal(values(st, NORM_Y)[0], 1 - 2 * 1.5 / sqrt(1.25 + 1e-5), 1e-6);
	assert_float_equal(values(st, NORM_MEAN)[0], 2.5, 1e-7);
	sample_cpu_op("layernorm")->teardown(st);

	st = setup("RMSlayernorm", (int64_t[]){1, 1, 2}, SAMPLE_FP32);
	values(st, NORM_X)[0] = 3;
	values(st, NORM_X)[1] = 4; /* rms 5 / sqrt(2) */
	values(st, NORM_W)[0] = values(st, NORM_W)[1] = 1;
	run("RMSlayernorm", st, 0);
	assert_float_equal(values(st, NORM_Y)[1], 4 * sqrt(2) / 5, 1e-6);
	sample_cpu_op("RMSlayernorm")->teardown(st);

	st = setup("gelu", (int64_t[]){1, 1, 1, 1}, SAMPLE_FP32);
	values(st, ELT_X)[0] = 1.0f;
	run("gelu", st, 0);
	assert_float_equal(values(st, ELT_Y)[0], 0.8413447, 1e-6);
	sample_cpu_op("gelu")->teardown(st);

	/* Causal softmax: row i of a 5 x 5 matrix spreads over its i + 1 columns. */
	st = setup("ScaledUpperTriangMaskedSoftmax", (int64_t[]){1, 1, 1, 5}, SAMPLE_FP32);
	for (int i = 0; i < 25; i++)
		values(st, SM_X)[i] = 0.5f;
	run("ScaledUpperTriangMaskedSoftmax", st, 0);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++)
			assert_float_equal(values(st, SM_Y)[i * 5 + j], j <= i ? 1.0 / (i + 1) : 0, 1e-7);
	sample_cpu_op("ScaledUpperTriangMaskedSoftmax")->teardown(st);

	/* fillmask keeps the lower triangle as it was. */
	st = setup("fillmask", (int64_t[]){1, 1, 1, 4, 4}, SAMPLE_FP16);
	float before[16];
	memcpy(before, st->t[MASK_S].data, sizeof before);
	run("fillmask", st, 0);
	for (int i = 0; i < 16; i++)
		assert_true(values(st, MASK_S)[i] == (i % 4 <= i / 4 ? before[i] : 0.0f));
	sample_cpu_op("fillmask")->teardown(st);

	/* Cross-entropy of equal logits: log(vocab) whatever the target. */
	st = setup("parallel_cross_entropy_128", (int64_t[]){8, 1, 2}, SAMPLE_FP32);
	for (int64_t i = 0; i < st->t[XENT_LOGITS].count; i++)
		values(st, XENT_LOGITS)[i] = 0.25f;
	((int32_t *)st->t[XENT_TARGET].data)[0] = 3;
	((int32_t *)st->t[XENT_TARGET].data)[1] = 50000; /* another partition's: logit counts 0 */
	run("parallel_cross_entropy_128", st, 0);
	assert_float_equal(values(st, XENT_LOSS)[0], log(6400.0), 1e-5);
	assert_float_equal(values(st, XENT_LOSS)[1], log(6400.0) + 0.25, 1e-5);
	sample_cpu_op("parallel_cross_entropy_128")->teardown(st);

	/* RoPE at position 0 is the identity; the embedding gathers rows. */
	st = setup("RoPE", (int64_t[]){1, 1, 1, 2, 4}, SAMPLE_FP32);
	run("RoPE", st, 0);
	assert_memory_equal(st->t[ROPE_QO].data, st->t[ROPE_Q].data, 4 * sizeof(float));
	assert_memory_not_equal(values(st, ROPE_QO) + 4, values(st, ROPE_Q) + 4, 4 * sizeof(float));
	sample_cpu_op("RoPE")->teardown(st);

	st = setup("embedding", (int64_t[]){1, 2, 3, 4}, SAMPLE_BF16);
	run("embedding", st, 0);
	int32_t id = ((int32_t *)st->t[EMB_IDS].data)[5];
	assert_memory_equal(values(st, EMB_Y) + 20, values(st, EMB_W) + id * 4, 4 * sizeof(float));
	sample_cpu_op("embedding")->teardown(st);

	/* Attention with every key equal: uniform weights, so each query's output
	 * is the mean of the values it sees (all of them; causal: 0..i), and the
	 * logsumexp is the logit plus log(keys seen). */
	for (int causal = 0; causal < 2; causal++) {
		const char *name = causal ? "flash_atten_causal" : "flash_atten";
		st = setup(name, (int64_t[]){1, 1, 2, 3, 128}, SAMPLE_FP32); /* heads 2, d 64 */
		for (int64_t i = 0; i < 3 * 2 * 64; i++)
			values(st, ATT_K)[i] = values(st, ATT_K)[i % 64];
		run(name, st, 0);
		const float *q = values(st, ATT_Q), *k = values(st, ATT_K), *v = values(st, ATT_V);
		for (int i = 0; i < 3; i++)
			for (int h = 0; h < 2; h++) {
				int seen = causal ? i + 1 : 3;
				double mean = 0, logit = 0;
				for (int j = 0; j < seen; j++)
					mean += v[(j * 2 + h) * 64 + 5] / (double)seen;
				for (int c = 0; c < 64; c++)
					logit += (double)q[(i * 2 + h) * 64 + c] * k[c] / 8;
				assert_float_equal(values(st, ATT_O)[(i * 2 + h) * 64 + 5], mean, 1e-6);
				assert_float_equal(values(st, ATT_LSE)[h * 3 + i], logit + log(seen),
						   1e-5);
			}
		sample_cpu_op(name)->teardown(st);
	}
	/* Adam's first step from m = v = 0 with g = 1 moves p by lr: m' = 0.1,
	 * v' = 0.001, both bias-corrected to 1. The second moments start >= 0. */
	st = setup("middleStage_optimizer", (int64_t[]){1, 4, 1}, SAMPLE_BF16);
	for (int64_t i = 0; i < st->t[ADAM_V].count; i++)
		assert_true(values(st, ADAM_V)[i] >= 0);
	values(st, ADAM_MASTER)[0] = 0.5f;
	values(st, ADAM_M)[0] = values(st, ADAM_V)[0] = 0;
	values(st, ADAM_GRAD)[0] = 1;
	run("middleStage_optimizer", st, 0);
	assert_float_equal(values(st, ADAM_MASTER)[0], 0.499, 1e-7);
	assert_float_equal(values(st, ADAM_M)[0], 0.1, 1e-8);
	assert_float_equal(values(st, ADAM_WEIGHT)[0], sample_round(SAMPLE_BF16, 0.499), 0);
	sample_cpu_op("middleStage_optimizer")->teardown(st);

	test_moe_routing();
	test_maxk_values();
	test_macko_values();
	test_ksmm_values();

	/* bmm: a 1 x 2 times 2 x 1 product. */
	st = setup("bmm", (int64_t[]){1, 1, 1, 2, 1}, SAMPLE_FP32);
	float *a = values(st, MM_A), *b = values(st, MM_B);
	run("bmm", st, 0);
	assert_float_equal(values(st, MM_C)[1], (double)a[2] * b[0] + (double)a[3] * b[1], 1e-6);
	sample_cpu_op("bmm")->teardown(st);
}

/* Sum over every forward output with an upstream gradient of upstream . output. */
static double loss(struct sample_state *st)
{
	double l = 0;
	for (int i = 0; i < st->n; i++) {
		int u = st->t[i].upstream;
		if (u == SAMPLE_NONE)
			continue;
		for (int64_t j = 0; j < st->t[i].count; j++)
			l += (double)values(st, u)[j] * values(st, i)[j];
	}
	return l;
}

/* The loss with element j of tensor x moved to x[j] + h, from a fresh state;
 * *moved gets the float actually stored. */
static double loss_at(const char *name, const int64_t *shape, int x, int64_t j, double h,
		      float *moved)
{
	struct sample_state *st = setup(name, shape, SAMPLE_FP32);
	values(st, x)[j] = (float)(values(st, x)[j] + h);
	*moved = values(st, x)[j];
	run(name, st, 0);
	double l = loss(st);
	sample_cpu_op(name)->teardown(st);
	return l;
}

static void test_finite_differences(void **unused)
{
	for (size_t o = 0; o < NSMALL; o++) {
		const char *name = small[o].name;
		if (!sample_has_backward(name))
			continue;
		struct sample_state *st = setup(name, small[o].shape, SAMPLE_FP32);
		run(name, st, 0);
		run(name, st, 1);
		int checked = 0;
		for (int x = 0; x < st->n; x++) {
			int g = st->t[x].grad;
			if (g == SAMPLE_NONE)
				continue;
			int64_t n = st->t[x].count, at[] = {0, n / 3, n / 2, n - 1};
			for (int a = 0; a < 4; a++) {
				float hi, lo;
				double lp = loss_at(name, small[o].shape, x, at[a], 1e-2, &hi);
				double lm = loss_at(name, small[o].shape, x, at[a], -1e-2, &lo);
				double fd = (lp - lm) / ((double)hi - lo), an = values(st, g)[at[a]];
				if (fabs(fd - an) > 2e-3 * (1 + fabs(an)))
					fail_msg("%s: d loss / d %s[%lld]: backward %.6g, finite "
						 "differences %.6g",
						 name, st->t[x].name, (long long)at[a], an, fd);
				checked++;
			}
		}
		assert_true(checked > 0);
		sample_cpu_op(name)->teardown(st);
	}
}

/* Every operator runs at every precision, and its outputs are finite and
 * representable in the precision. */
static void test_all_precisions(void **unused)
{
	for (size_t o = 0; o < NSMALL; o++)
		for (int p = 0; p < 3; p++) {
			struct sample_state *st = setup(small[o].name, small[o].shape, p);
			run(small[o].name, st, 0);
			if (sample_has_backward(small[o].name))
				run(small[o].name, st, 1);
			for (int i = 0; i < st->n; i++) {
				if (st->t[i].kind != SAMPLE_VALUES)
					continue;
				for (int64_t j = 0; j < st->t[i].count; j++) {
					float v = values(st, i)[j];
					assert_true(isfinite(v) && sample_round(p, v) == v);
				}
			}
			sample_cpu_op(small[o].name)->teardown(st);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_precision),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_precision_checks),
		cmocka_unit_test(test_vocab_and_layouts),
		cmocka_unit_test(test_stage_params),
		cmocka_unit_test(test_inputs_repeat),
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_finite_differences),
		cmocka_unit_test(test_all_precisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
