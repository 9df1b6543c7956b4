/* The shapes, checks and tensor layouts of kernel-sample's training-step
 * operators (sample_spec.h): the mixture-of-experts layer (`moe`) and the
 * Adam step of a pipeline stage (`firstStage_optimizer`,
 * `middleStage_optimizer`, `lastStage_optimizer`), after estimate-train-time's
 * target_functions.py (DebarghaG/estimate-train-time). */
#include <stdint.h>

#include "sample/sample_spec.h"

const char *const sample_cols_moe[] = {"mp",		  "b",		       "l",	"dim",
				       "moe_num_experts", "intermediate_size", "top_k"};
const char *const sample_cols_mp_dim_encoders[] = {"mp", "dim", "encoders"};

/* The product of n counts, or -1 when it reaches 2^56 (bytes and offsets of
 * 8-byte elements stay below 2^62). */
static int64_t product(int n, const int64_t *v)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		if (__builtin_mul_overflow(p, v[i], &p) || p >= (int64_t)1 << 56)
			return -1;
	return p;
}

int sample_check_moe(const int64_t *shape, struct sp_err *why)
{
	const int64_t mp = shape[0], b = shape[1], l = shape[2], dim = shape[3];
	const int64_t experts = shape[4], inter = shape[5], topk = shape[6];
	for (int i = 0; i < 7; i++)
		if (shape[i] < 1)
			return sp_fail(why, "%s %lld is below 1", sample_cols_moe[i],
				       (long long)shape[i]);
	/* The largest tensors: the experts' weights (E x I x dim at most), the
	 * pairs' rows (b l top_k x dim or x I), the probabilities (b l x E). */
	if (product(3, (const int64_t[]){experts, inter, dim}) < 0 ||
	    product(4, (const int64_t[]){b, l, topk, dim > inter ? dim : inter}) < 0 ||
	    product(3, (const int64_t[]){b, l, experts}) < 0)
		return sp_fail(why, "shape too large: its tensors' sizes overflow");
	if (b * l * topk > INT32_MAX) /* rows are int32 indices */
		return sp_fail(why, "shape too large: b l top_k = %lld pairs, above 2^31 - 1",
			       (long long)(b * l * topk));
	if (sample_check_divides(dim, "dim", mp, "mp", why) ||
	    sample_check_divides(experts, "moe_num_experts", mp, "mp", why) ||
	    sample_check_divides(l, "l", mp, "mp", why) ||
	    sample_check_divides(inter, "intermediate_size", mp, "mp", why))
		return -1;
	if (mp * topk > experts)
		return sp_fail(why, "mp %lld times top_k %lld is above moe_num_experts %lld",
			       (long long)mp, (long long)topk, (long long)experts);
	if (inter > 4 * dim)
		return sp_fail(why, "intermediate_size %lld is above 4 dim (%lld)", (long long)inter,
			       (long long)(4 * dim));
	return 0;
}

/* Parameters of one Megatron-LM GPT layer on one of mp tensor-parallel ranks:
 * two LayerNorms (weight and bias, 2 dim each, replicated), the QKV projection
 * (dim x 3dim/mp and its bias, column-parallel), the attention output
 * projection (dim/mp x dim, row-parallel, its dim bias replicated), the FFN
 * up (dim x 4dim/mp and bias) and down (4dim/mp x dim, bias dim):
 * 12 dim^2/mp + 7 dim/mp + 6 dim. */
static int mul_add(int64_t *acc, int64_t a, int64_t b)
{
	int64_t p;
	return __builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(*acc, p, acc);
}

/* -1 when the count overflows. */
static int64_t stage_params(char which, const int64_t *shape)
{
	const int64_t mp = shape[0], dim = shape[1], encoders = shape[2];
	const int64_t vocab = sample_vocab_partition(mp);
	int64_t layer = 0, n = 0;
	if (mul_add(&layer, 12 * (dim / mp), dim) || mul_add(&layer, 7, dim / mp) ||
	    mul_add(&layer, 6, dim) || mul_add(&n, layer, encoders))
		return -1;
	/* The first stage's word embedding (positions are rotary: no table); the
	 * last stage's final LayerNorm and its own LM head (untied: the embedding
	 * lives on another stage). */
	if (which == 'f' && mul_add(&n, vocab, dim))
		return -1;
	if (which == 'l' && (mul_add(&n, 2, dim) || mul_add(&n, vocab, dim)))
		return -1;
	return n;
}

int64_t sample_stage_params(const char *which, const int64_t *shape)
{
	return stage_params(which[0], shape);
}

int sample_check_stage(const int64_t *shape, struct sp_err *why)
{
	if (sample_check_columns(shape, 3, sample_cols_mp_dim_encoders, why) ||
	    sample_check_divides(shape[1], "dim", shape[0], "mp", why))
		return -1;
	/* The largest stage (the last) at 16 bytes a parameter under 2^62. */
	int64_t n = stage_params('l', shape);
	if (n < 0 || n >= (int64_t)1 << 58)
		return sp_fail(why, "shape too large: the stage's parameter count overflows");
	return 0;
}

/* The layer on one rank: T = b l/mp tokens (the original's (l/mp, b, dim)
 * input), every one of the E experts at width F = intermediate_size/mp. */
void sample_layout_moe(const int64_t *shape, struct sample_state *st)
{
	const int64_t mp = shape[0], dim = shape[3], experts = shape[4], topk = shape[6];
	const int64_t tokens = shape[1] * (shape[2] / mp), ffn = shape[5] / mp;
	const int64_t pairs = tokens * topk, weights = experts * ffn * dim;
	sample_spec_start(st);
	st->d.rows = tokens;
	st->d.cols = dim;
	st->d.m = pairs;
	st->d.n = ffn;
	st->d.k = dim;
	st->d.batch = experts;
	st->d.experts = experts;
	st->d.topk = topk;
	sample_spec_add(st, "x", tokens * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "w_router", experts * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "w1", weights, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "w2", weights, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "out", tokens * dim, SAMPLE_VALUES, SAMPLE_FORWARD);
	sample_spec_add(st, "probs", tokens * experts, SAMPLE_STATS, SAMPLE_FORWARD);
	sample_spec_add(st, "gate", pairs, SAMPLE_STATS, SAMPLE_FORWARD);
	sample_spec_add(st, "expert", pairs, SAMPLE_IDS, SAMPLE_FORWARD);
	st->t[MOE_EXPERT].id_range = experts;
	sample_spec_add(st, "h", pairs * ffn, SAMPLE_VALUES, SAMPLE_FORWARD);
	sample_spec_add(st, "y", pairs * dim, SAMPLE_VALUES, SAMPLE_FORWARD);
	sample_spec_add(st, "dout", tokens * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "dx", tokens * dim, SAMPLE_VALUES, SAMPLE_BACKWARD);
	sample_spec_add(st, "dw_router", experts * dim, SAMPLE_VALUES, SAMPLE_BACKWARD);
	sample_spec_add(st, "dw1", weights, SAMPLE_VALUES, SAMPLE_BACKWARD);
	sample_spec_add(st, "dw2", weights, SAMPLE_VALUES, SAMPLE_BACKWARD);
	/* Weights of 1/8 keep the products of a few thousand terms moderate. */
	st->t[MOE_WR].scale = st->t[MOE_W1].scale = st->t[MOE_W2].scale = 0.125f;
	st->t[MOE_X].grad = MOE_DX;
	st->t[MOE_WR].grad = MOE_DWR;
	st->t[MOE_W1].grad = MOE_DW1;
	st->t[MOE_W2].grad = MOE_DW2;
	st->t[MOE_OUT].upstream = MOE_DOUT;
}

/* Adam over the stage's parameters as one flat buffer: fp32 master weights
 * and moments (updated in place), the gradient and the model's copy at the
 * run's precision (the copy written back). */
static void layout_stage(const char *which, const int64_t *shape, struct sample_state *st)
{
	const int64_t n = stage_params(which[0], shape);
	sample_spec_start(st);
	st->d.rows = 1;
	st->d.cols = n;
	sample_spec_add(st, "master", n, SAMPLE_STATS, SAMPLE_FORWARD);
	sample_spec_add(st, "exp_avg", n, SAMPLE_STATS, SAMPLE_FORWARD);
	sample_spec_add(st, "exp_avg_sq", n, SAMPLE_STATS, SAMPLE_FORWARD);
	st->t[ADAM_V].fill = SAMPLE_RANDOM_ABS;
	sample_spec_add(st, "grad", n, SAMPLE_VALUES, SAMPLE_INPUT);
	sample_spec_add(st, "weight", n, SAMPLE_VALUES, SAMPLE_FORWARD);
}

void sample_layout_firstStage_optimizer(const int64_t *shape, struct sample_state *st)
{
	layout_stage("first", shape, st);
}

void sample_layout_middleStage_optimizer(const int64_t *shape, struct sample_state *st)
{
	layout_stage("middle", shape, st);
}

void sample_layout_lastStage_optimizer(const int64_t *shape, struct sample_state *st)
{
	layout_stage("last", shape, st);
}
