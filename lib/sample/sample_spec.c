/* The operators' shape columns, checks and tensor layouts (sample_spec.h),
 * after estimate-train-time's target_functions.py. */
#include "sample/sample_spec.h"

#include <string.h>

#include "sample/sample_rand.h"

const char *const sample_cols_b_l_dim[] = {"b", "l", "dim"};
const char *const sample_cols_mp_b_l[] = {"mp", "b", "l"};
const char *const sample_cols_mp_b_l_dim[] = {"mp", "b", "l", "dim"};
const char *const sample_cols_mp_b_h_l[] = {"mp", "b", "h", "l"};
const char *const sample_cols_mp_b_h_l_dim[] = {"mp", "b", "h", "l", "dim"};

#define SAMPLE_NAME(id, ncol, cols, check, family) #id,
const char *const sample_op_names[] = {SAMPLE_OP_LIST(SAMPLE_NAME) NULL};
#undef SAMPLE_NAME

sample_layout_fn sample_op_layout(const char *name)
{
#define SAMPLE_LAYOUT(id, ncol, cols, check, family) sample_layout_##id,
	static const sample_layout_fn layouts[] = {SAMPLE_OP_LIST(SAMPLE_LAYOUT)};
#undef SAMPLE_LAYOUT
	for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
		if (!strcmp(sample_op_names[i], name))
			return layouts[i];
	return NULL;
}

/* Every column at least 1; the product of the columns times the larger of
 * 2^16 and the largest column under 2^62. Every operator's largest tensor is
 * at most that many elements (the padded vocabulary is below 2^16, attention
 * scores are the columns' product times l at most), so no count overflows. */
static int check_columns(const int64_t *shape, int n, const char *const *names,
			 struct sp_err *why)
{
	int64_t prod = 1, big = (int64_t)1 << 16;
	for (int i = 0; i < n; i++) {
		if (shape[i] < 1)
			return sp_fail(why, "%s %lld is below 1", names[i], (long long)shape[i]);
		if (shape[i] > big)
			big = shape[i];
		if (__builtin_mul_overflow(prod, shape[i], &prod))
			return sp_fail(why, "shape too large: its tensors' sizes overflow");
	}
	if (__builtin_mul_overflow(prod, big, &prod) || prod >= (int64_t)1 << 62)
		return sp_fail(why, "shape too large: its tensors' sizes overflow");
	return 0;
}

static int check_divides(int64_t a, const char *an, int64_t b, const char *bn, struct sp_err *why)
{
	if (a % b)
		return sp_fail(why, "%s %lld not divisible by %s %lld", an, (long long)a, bn,
			       (long long)b);
	return 0;
}

int sample_check_b_l_dim(const int64_t *shape, struct sp_err *why)
{
	return check_columns(shape, 3, sample_cols_b_l_dim, why);
}

int sample_check_mp_b_l(const int64_t *shape, struct sp_err *why)
{
	return check_columns(shape, 3, sample_cols_mp_b_l, why);
}

int sample_check_mp_b_l_dim(const int64_t *shape, struct sp_err *why)
{
	return check_columns(shape, 4, sample_cols_mp_b_l_dim, why);
}

int sample_check_dim_mp(const int64_t *shape, struct sp_err *why)
{
	if (check_columns(shape, 4, sample_cols_mp_b_l_dim, why))
		return -1;
	return check_divides(shape[3], "dim", shape[0], "mp", why);
}

int sample_check_h_mp(const int64_t *shape, struct sp_err *why)
{
	if (check_columns(shape, 4, sample_cols_mp_b_h_l, why))
		return -1;
	return check_divides(shape[2], "h", shape[0], "mp", why);
}

int sample_check_heads(const int64_t *shape, struct sp_err *why)
{
	if (check_columns(shape, 5, sample_cols_mp_b_h_l_dim, why) ||
	    check_divides(shape[4], "dim", shape[0], "mp", why) ||
	    check_divides(shape[2], "h", shape[0], "mp", why) ||
	    check_divides(shape[4], "dim", shape[2], "h", why))
		return -1;
	return 0;
}

int sample_check_rope(const int64_t *shape, struct sp_err *why)
{
	if (sample_check_heads(shape, why))
		return -1;
	if ((shape[4] / shape[2]) % 2)
		return sp_fail(why, "head size dim/h = %lld is odd (the rotation pairs halves)",
			       (long long)(shape[4] / shape[2]));
	return 0;
}

int sample_check_attention(const int64_t *shape, struct sp_err *why)
{
	if (sample_check_heads(shape, why))
		return -1;
	int64_t hd = shape[4] / shape[2];
	if (hd != 64 && hd != 128)
		return sp_fail(why, "head size dim/h = %lld is not 64 or 128 (the fused attention "
				    "kernels' head sizes)",
			       (long long)hd);
	return 0;
}

int64_t sample_vocab_partition(int64_t mp)
{
	return (SAMPLE_VOCAB + 128 * mp - 1) / (128 * mp) * 128;
}

int sample_has_backward(const char *name)
{
	return strcmp(name, "res_add") != 0 && strcmp(name, "macko_spmv") != 0 &&
	       strcmp(name, "ksmm") != 0 && !strstr(name, "Stage_optimizer");
}

int sample_is_attention(const char *name)
{
	return !strncmp(name, "flash_atten", 11);
}

int sample_check_precision(const char *name, enum sample_precision p, struct sp_err *why)
{
	if (p == SAMPLE_FP32 && sample_is_attention(name))
		return sp_fail(why, "%s runs in fp16 or bf16 only: fused attention is "
				    "half-precision (flash_attn_func takes no fp32)",
			       name);
	return 0;
}

size_t sample_tensor_elem_bytes(const struct sample_tensor *t, enum sample_precision p)
{
	if (t->kind == SAMPLE_VALUES)
		return p == SAMPLE_FP32 ? 4 : 2;
	return 4;
}

/* Append a tensor; returns its index. Values default to [-1, 1). */
static int add(struct sample_state *st, const char *name, int64_t count, enum sample_kind kind,
	       enum sample_stage stage)
{
	struct sample_tensor *t = &st->t[st->n];
	memset(t, 0, sizeof *t);
	t->name = name;
	t->count = count;
	t->kind = kind;
	t->stage = stage;
	t->fill = SAMPLE_RANDOM;
	t->scale = 1.0f;
	t->upstream = t->grad = SAMPLE_NONE;
	return st->n++;
}

static void start(struct sample_state *st)
{
	st->n = 0;
	memset(&st->d, 0, sizeof st->d);
}

int sample_check_columns(const int64_t *shape, int n, const char *const *names,
			 struct sp_err *why)
{
	return check_columns(shape, n, names, why);
}

int sample_check_divides(int64_t a, const char *an, int64_t b, const char *bn,
			 struct sp_err *why)
{
	return check_divides(a, an, b, bn, why);
}

void sample_spec_start(struct sample_state *st)
{
	start(st);
}

int sample_spec_add(struct sample_state *st, const char *name, int64_t count,
		    enum sample_kind kind, enum sample_stage stage)
{
	return add(st, name, count, kind, stage);
}

/* nn.Embedding(vocab partition, dim) on ids (b, l): rows are tokens. */
void sample_layout_embedding(const int64_t *shape, struct sample_state *st)
{
	int64_t mp = shape[0], b = shape[1], l = shape[2], dim = shape[3];
	start(st);
	st->d.rows = b * l;
	st->d.cols = dim;
	st->d.vocab = sample_vocab_partition(mp);
	add(st, "ids", b * l, SAMPLE_IDS, SAMPLE_INPUT);
	st->t[EMB_IDS].id_range = st->d.vocab;
	add(st, "weight", st->d.vocab * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "out", b * l * dim, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dout", b * l * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dweight", st->d.vocab * dim, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[EMB_W].grad = EMB_DW;
	st->t[EMB_Y].upstream = EMB_DY;
}

/* LayerNorm / RMSNorm over dim of (l, b, dim). */
static void layout_norm(const int64_t *shape, struct sample_state *st, int with_mean)
{
	int64_t rows = shape[0] * shape[1], dim = shape[2];
	int64_t bias = with_mean ? dim : 0;
	start(st);
	st->d.rows = rows;
	st->d.cols = dim;
	add(st, "x", rows * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "weight", dim, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "bias", bias, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "y", rows * dim, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "mean", with_mean ? rows : 0, SAMPLE_STATS, SAMPLE_FORWARD);
	add(st, with_mean ? "rstd" : "rinv", rows, SAMPLE_STATS, SAMPLE_FORWARD);
	add(st, "dy", rows * dim, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dx", rows * dim, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dweight", dim, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dbias", bias, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[NORM_X].grad = NORM_DX;
	st->t[NORM_W].grad = NORM_DW;
	if (with_mean)
		st->t[NORM_B].grad = NORM_DB;
	st->t[NORM_Y].upstream = NORM_DY;
}

void sample_layout_layernorm(const int64_t *shape, struct sample_state *st)
{
	layout_norm(shape, st, 1);
}

void sample_layout_RMSlayernorm(const int64_t *shape, struct sample_state *st)
{
	layout_norm(shape, st, 0);
}

/* nn.Linear(k, n) on (l, b, k): Y[m][n] = X[m][k] W[n][k]^T (+ bias). */
static void layout_linear(const int64_t *shape, struct sample_state *st, int64_t k, int64_t n,
			  int bias)
{
	int64_t m = shape[1] * shape[2];
	start(st);
	st->d.rows = st->d.m = m;
	st->d.cols = st->d.n = n;
	st->d.k = k;
	st->d.batch = 1;
	add(st, "x", m * k, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "weight", n * k, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "bias", bias ? n : 0, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "y", m * n, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dy", m * n, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dx", m * k, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dweight", n * k, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dbias", bias ? n : 0, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[LIN_X].grad = LIN_DX;
	st->t[LIN_W].grad = LIN_DW;
	if (bias)
		st->t[LIN_B].grad = LIN_DB;
	st->t[LIN_Y].upstream = LIN_DY;
}

/* Megatron-LM's attention QKV projection, column-parallel, with bias. */
void sample_layout_linear1(const int64_t *shape, struct sample_state *st)
{
	layout_linear(shape, st, shape[3], 3 * shape[3] / shape[0], 1);
}

/* The attention output projection, row-parallel: dim/mp -> dim. */
void sample_layout_linear2(const int64_t *shape, struct sample_state *st)
{
	layout_linear(shape, st, shape[3] / shape[0], shape[3], 0);
}

/* FFN up, column-parallel: dim -> 4 dim/mp. */
void sample_layout_linear3(const int64_t *shape, struct sample_state *st)
{
	layout_linear(shape, st, shape[3], 4 * shape[3] / shape[0], 0);
}

/* FFN down, row-parallel: 4 dim/mp -> dim. */
void sample_layout_linear4(const int64_t *shape, struct sample_state *st)
{
	layout_linear(shape, st, 4 * shape[3] / shape[0], shape[3], 0);
}

/* The output layer: dim -> the padded vocabulary partition. */
void sample_layout_linear_final(const int64_t *shape, struct sample_state *st)
{
	layout_linear(shape, st, shape[3], sample_vocab_partition(shape[0]), 0);
}

/* Elementwise over `rows` x `cols`: gelu (Y = gelu(X)) or res_add (Y = X + X2). */
static void layout_elementwise(struct sample_state *st, int64_t rows, int64_t cols, int sum)
{
	int64_t count = rows * cols;
	start(st);
	st->d.rows = rows;
	st->d.cols = cols;
	add(st, "x", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "y", count, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dy", sum ? 0 : count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dx", sum ? 0 : count, SAMPLE_VALUES, SAMPLE_BACKWARD);
	if (sum) {
		add(st, "x2", count, SAMPLE_VALUES, SAMPLE_INPUT);
		return;
	}
	st->t[ELT_X].scale = 4.0f; /* gelu's curved part */
	st->t[ELT_X].grad = ELT_DX;
	st->t[ELT_Y].upstream = ELT_DY;
}

/* F.gelu on the FFN's (l, b, 4 dim/mp). */
void sample_layout_gelu(const int64_t *shape, struct sample_state *st)
{
	layout_elementwise(st, shape[1] * shape[2], 4 * shape[3] / shape[0], 0);
}

/* The residual sum of two (l, b, dim). */
void sample_layout_res_add(const int64_t *shape, struct sample_state *st)
{
	layout_elementwise(st, shape[0] * shape[1], shape[2], 1);
}

/* Rotary embedding of query and key, (l, b, h/mp, dim/h) each. */
void sample_layout_RoPE(const int64_t *shape, struct sample_state *st)
{
	int64_t mp = shape[0], b = shape[1], h = shape[2], l = shape[3], dim = shape[4];
	int64_t hd = dim / h, rows = l * b * (h / mp), count = rows * hd;
	start(st);
	st->d.rows = rows;
	st->d.cols = hd;
	st->d.seq = l;
	add(st, "q", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "k", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "inv_freq", hd / 2, SAMPLE_STATS, SAMPLE_INPUT);
	st->t[ROPE_FREQ].fill = SAMPLE_ROPE_FREQ;
	add(st, "q_out", count, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "k_out", count, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dq_out", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dk_out", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dq", count, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dk", count, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[ROPE_Q].grad = ROPE_DQ;
	st->t[ROPE_K].grad = ROPE_DK;
	st->t[ROPE_QO].upstream = ROPE_DQO;
	st->t[ROPE_KO].upstream = ROPE_DKO;
}

/* Megatron-LM's vocab_parallel_cross_entropy on logits (b, l, vocab/mp),
 * targets over the whole vocabulary (those outside partition 0 are masked). */
void sample_layout_parallel_cross_entropy_128(const int64_t *shape, struct sample_state *st)
{
	int64_t rows = shape[1] * shape[2];
	start(st);
	st->d.rows = rows;
	st->d.cols = st->d.vocab = sample_vocab_partition(shape[0]);
	add(st, "logits", rows * st->d.vocab, SAMPLE_VALUES, SAMPLE_INPUT);
	st->t[XENT_LOGITS].scale = 4.0f;
	add(st, "target", rows, SAMPLE_IDS, SAMPLE_INPUT);
	st->t[XENT_TARGET].id_range = SAMPLE_VOCAB;
	add(st, "loss", rows, SAMPLE_STATS, SAMPLE_FORWARD);
	add(st, "logsumexp", rows, SAMPLE_STATS, SAMPLE_FORWARD);
	add(st, "dloss", rows, SAMPLE_STATS, SAMPLE_INPUT);
	add(st, "dlogits", rows * st->d.vocab, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[XENT_LOGITS].grad = XENT_DLOGITS;
	st->t[XENT_LOSS].upstream = XENT_DLOSS;
}

/* Softmax over the last dimension of attention scores (b, h/mp, l, l). */
void sample_layout_softmax(const int64_t *shape, struct sample_state *st)
{
	int64_t l = shape[3], rows = shape[1] * (shape[2] / shape[0]) * l;
	start(st);
	st->d.rows = rows;
	st->d.cols = st->d.seq = l;
	add(st, "x", rows * l, SAMPLE_VALUES, SAMPLE_INPUT);
	st->t[SM_X].scale = 4.0f;
	add(st, "y", rows * l, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dy", rows * l, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dx", rows * l, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[SM_X].grad = SM_DX;
	st->t[SM_Y].upstream = SM_DY;
}

/* Megatron-LM's fused causal softmax on (b h/mp, l, l), scale 1: the same
 * tensors as softmax. */
void sample_layout_ScaledUpperTriangMaskedSoftmax(const int64_t *shape, struct sample_state *st)
{
	sample_layout_softmax(shape, st);
}

/* masked_fill_ of the causal mask (zero above the diagonal) on the scores
 * (b, h/mp, l, l), and in backward on their gradient, both in place. */
void sample_layout_fillmask(const int64_t *shape, struct sample_state *st)
{
	int64_t l = shape[3], rows = shape[1] * (shape[2] / shape[0]) * l;
	start(st);
	st->d.rows = rows;
	st->d.cols = st->d.seq = l;
	add(st, "scores", rows * l, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dscores", rows * l, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[MASK_S].grad = MASK_G;
	st->t[MASK_S].upstream = MASK_G;
}

/* A batch of b h/mp products C[m][n] = A[m][k] B[k][n]. */
static void layout_batched(const int64_t *shape, struct sample_state *st, int scores_times_v)
{
	int64_t mp = shape[0], b = shape[1], h = shape[2], l = shape[3], dim = shape[4];
	int64_t batch = b * (h / mp), hd = dim / h;
	int64_t m = l, k = scores_times_v ? l : hd, n = scores_times_v ? hd : l;
	start(st);
	st->d.batch = batch;
	st->d.m = m;
	st->d.n = n;
	st->d.k = k;
	st->d.rows = batch * m;
	st->d.cols = n;
	add(st, scores_times_v ? "scores" : "q", batch * m * k, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, scores_times_v ? "v" : "k", batch * k * n, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "out", batch * m * n, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "dout", batch * m * n, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, scores_times_v ? "dscores" : "dq", batch * m * k, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, scores_times_v ? "dv" : "dk", batch * k * n, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[MM_A].grad = MM_DA;
	st->t[MM_B].grad = MM_DB;
	st->t[MM_C].upstream = MM_DC;
}

/* flash_attn_func(q, k, v, causal) on (b, l, h/mp, dim/h), as
 * estimate-train-time's flash_atten calls it; rows are the queries of every
 * head, (b, h/mp, l), the stats' order. */
static void layout_attention(const int64_t *shape, struct sample_state *st)
{
	int64_t mp = shape[0], b = shape[1], h = shape[2], l = shape[3], dim = shape[4];
	int64_t hp = h / mp, hd = dim / h, count = b * l * hp * hd;
	start(st);
	st->d.batch = b;
	st->d.heads = hp;
	st->d.seq = l;
	st->d.cols = hd;
	st->d.rows = b * hp * l;
	add(st, "q", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "k", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "v", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "out", count, SAMPLE_VALUES, SAMPLE_FORWARD);
	add(st, "logsumexp", st->d.rows, SAMPLE_STATS, SAMPLE_FORWARD);
	add(st, "dout", count, SAMPLE_VALUES, SAMPLE_INPUT);
	add(st, "dq", count, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dk", count, SAMPLE_VALUES, SAMPLE_BACKWARD);
	add(st, "dv", count, SAMPLE_VALUES, SAMPLE_BACKWARD);
	st->t[ATT_Q].grad = ATT_DQ;
	st->t[ATT_K].grad = ATT_DK;
	st->t[ATT_V].grad = ATT_DV;
	st->t[ATT_O].upstream = ATT_DO;
}

/* estimate-train-time's flash_atten: flash_attn_func(Q, K, V), not causal. */
void sample_layout_flash_atten(const int64_t *shape, struct sample_state *st)
{
	layout_attention(shape, st);
}

/* The same with causal=True, as GPT-style training (Megatron-LM,
 * GPT-NeoX) calls it: query i sees keys 0..i. */
void sample_layout_flash_atten_causal(const int64_t *shape, struct sample_state *st)
{
	layout_attention(shape, st);
}

/* torch.baddbmm(c, q, k, beta=0): scores (b h/mp, l, l) = q (.., l, dim/h) k (.., dim/h, l). */
void sample_layout_baddbmm(const int64_t *shape, struct sample_state *st)
{
	layout_batched(shape, st, 0);
}

/* torch.bmm(scores, v): (b h/mp, l, dim/h) = scores (.., l, l) v (.., l, dim/h). */
void sample_layout_bmm(const int64_t *shape, struct sample_state *st)
{
	layout_batched(shape, st, 1);
}
