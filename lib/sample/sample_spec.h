/* What an operator is, independent of where it runs: its shape columns, the
 * shapes it refuses, and the tensors one shape needs, with their sizes, in a
 * fixed order that the CPU references (lib/sample/sample_ref_*.c) and the
 * GPU operators (kernels/sample/) both index. Shapes and layouts follow
 * estimate-train-time's target_functions.py (DebarghaG/estimate-train-time):
 * activations sequence-first (l, b, dim), the tensor-parallel degree mp
 * dividing the hidden size and the heads as Megatron-LM does, the vocabulary
 * (GPT-2's 50257) padded per partition to a multiple of 128. */
#ifndef SPKIT_SAMPLE_SPEC_H
#define SPKIT_SAMPLE_SPEC_H

#include <stdint.h>

#include "core/err.h"
#include "sample/sample_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every operator: X(identifier = kernel_name, shape columns, column names,
 * check, family). Both tables are built from this list, so they cannot
 * disagree; operators of one family share their code (the five linears, bmm
 * and baddbmm, the two norms), told apart by their tensors' sizes. */
#define SAMPLE_OP_LIST(X)                                                                   \
	X(embedding, 4, sample_cols_mp_b_l_dim, sample_check_mp_b_l_dim, embedding)          \
	X(layernorm, 3, sample_cols_b_l_dim, sample_check_b_l_dim, norm)                     \
	X(RMSlayernorm, 3, sample_cols_b_l_dim, sample_check_b_l_dim, norm)                  \
	X(linear1, 4, sample_cols_mp_b_l_dim, sample_check_dim_mp, linear)                   \
	X(linear2, 4, sample_cols_mp_b_l_dim, sample_check_dim_mp, linear)                   \
	X(linear3, 4, sample_cols_mp_b_l_dim, sample_check_dim_mp, linear)                   \
	X(linear4, 4, sample_cols_mp_b_l_dim, sample_check_dim_mp, linear)                   \
	X(linear_final, 4, sample_cols_mp_b_l_dim, sample_check_mp_b_l_dim, linear)          \
	X(flash_atten, 5, sample_cols_mp_b_h_l_dim, sample_check_attention, attention)       \
	X(flash_atten_causal, 5, sample_cols_mp_b_h_l_dim, sample_check_attention,           \
	  causal_attention)                                                                  \
	X(gelu, 4, sample_cols_mp_b_l_dim, sample_check_dim_mp, gelu)                        \
	X(RoPE, 5, sample_cols_mp_b_h_l_dim, sample_check_rope, rope)                        \
	X(res_add, 3, sample_cols_b_l_dim, sample_check_b_l_dim, res_add)                    \
	X(parallel_cross_entropy_128, 3, sample_cols_mp_b_l, sample_check_mp_b_l, xent)      \
	X(softmax, 4, sample_cols_mp_b_h_l, sample_check_h_mp, softmax)                      \
	X(fillmask, 5, sample_cols_mp_b_h_l_dim, sample_check_heads, fillmask)               \
	X(baddbmm, 5, sample_cols_mp_b_h_l_dim, sample_check_heads, batched)                 \
	X(bmm, 5, sample_cols_mp_b_h_l_dim, sample_check_heads, batched)                     \
	X(ScaledUpperTriangMaskedSoftmax, 4, sample_cols_mp_b_h_l, sample_check_h_mp, causal_softmax) \
	SAMPLE_OP_LIST_TRAIN(X)

/* The mixture-of-experts layer and the optimizer steps of a pipeline stage
 * (sample_spec_train.c). */
#define SAMPLE_OP_LIST_TRAIN(X)                                                              \
	X(moe, 7, sample_cols_moe, sample_check_moe, moe)                                     \
	X(firstStage_optimizer, 3, sample_cols_mp_dim_encoders, sample_check_stage, adam)    \
	X(middleStage_optimizer, 3, sample_cols_mp_dim_encoders, sample_check_stage, adam)   \
	X(lastStage_optimizer, 3, sample_cols_mp_dim_encoders, sample_check_stage, adam)    \
	SAMPLE_OP_LIST_KERNELS(X)

/* spkit's own kernels as operators (sample_spec_kernels.c). */
#define SAMPLE_OP_LIST_KERNELS(X) \
	X(maxk_spmm, 4, sample_cols_maxk, sample_check_maxk, maxk)                         \
	X(macko_spmv, 4, sample_cols_macko, sample_check_macko, macko)                     \
	X(ksmm, 5, sample_cols_ksmm, sample_check_ksmm, ksmm)

extern const char *const sample_cols_b_l_dim[];
extern const char *const sample_cols_mp_b_l[];
extern const char *const sample_cols_mp_b_l_dim[];
extern const char *const sample_cols_mp_b_h_l[];
extern const char *const sample_cols_mp_b_h_l_dim[];
extern const char *const sample_cols_moe[];
extern const char *const sample_cols_mp_dim_encoders[];
extern const char *const sample_cols_maxk[];
extern const char *const sample_cols_macko[];
extern const char *const sample_cols_ksmm[];

/* Every check: each column at least 1, and the columns small enough that
 * no tensor's element count can overflow. Then what the name adds. */
int sample_check_b_l_dim(const int64_t *shape, struct sp_err *why);
int sample_check_mp_b_l(const int64_t *shape, struct sp_err *why);
int sample_check_mp_b_l_dim(const int64_t *shape, struct sp_err *why);
/* mp, b, l, dim: dim divisible by mp. */
int sample_check_dim_mp(const int64_t *shape, struct sp_err *why);
/* mp, b, h, l: h divisible by mp. */
int sample_check_h_mp(const int64_t *shape, struct sp_err *why);
/* mp, b, h, l, dim: dim divisible by mp and by h, h by mp. */
int sample_check_heads(const int64_t *shape, struct sp_err *why);
/* sample_check_heads and an even head size (dim / h): the rotation pairs
 * element i with element i + dim/h/2. */
int sample_check_rope(const int64_t *shape, struct sp_err *why);
/* sample_check_heads and a head size (dim / h) of 64 or 128, those the
 * fused attention kernels have tiles for (flash_attn_func's common ones). */
int sample_check_attention(const int64_t *shape, struct sp_err *why);
/* mp, b, l, dim, moe_num_experts, intermediate_size, top_k: estimate-train-time's
 * refusals (dim and the experts divisible by mp, mp top_k at most the experts,
 * intermediate_size at most 4 dim), and l and intermediate_size divisible by
 * mp (each rank holds l/mp tokens and intermediate_size/mp of each expert). */
int sample_check_moe(const int64_t *shape, struct sp_err *why);
/* mp, dim, encoders: dim divisible by mp, and the stage's parameter count
 * (sample_stage_params) small enough that its bytes do not overflow. */
int sample_check_stage(const int64_t *shape, struct sp_err *why);
/* nodes, degree, hidden, k: degree below nodes (a simple graph), k at most
 * hidden, hidden at most 1024 (the GPU's top-k keeps a row in registers). */
int sample_check_maxk(const int64_t *shape, struct sp_err *why);
/* rows, cols, density (percent), vectors: density 1 to 100, vectors 1 to 16
 * (MACKO's most a product takes), rows x cols under 2^34 (the dense fp16
 * matrix the compressor starts from). */
int sample_check_macko(const int64_t *shape, struct sp_err *why);
/* a, b, c, d, batch: ksmm-tune's pattern check (every size positive, every
 * index the kernels form below 2^31). */
int sample_check_ksmm(const int64_t *shape, struct sp_err *why);

/* The vocabulary every operator with one uses, and its padded partition:
 * ceil(50257 / (128 mp)) * 128 rows. */
#define SAMPLE_VOCAB 50257
int64_t sample_vocab_partition(int64_t mp);

/* Which kind of numbers a tensor holds: the run's precision (fp16, bf16 or
 * fp32), always fp32 (saved statistics, losses), or int32 token ids. */
enum sample_kind { SAMPLE_VALUES, SAMPLE_STATS, SAMPLE_IDS };
/* Which call writes it: none (an input, or the gradient arriving from the
 * layer above), forward, or backward. Every tensor starts random, outputs
 * too, so the CPU and GPU states start equal. */
enum sample_stage { SAMPLE_INPUT, SAMPLE_FORWARD, SAMPLE_BACKWARD };
/* How setup fills it: random (sample_rand.h), or RoPE's inverse frequencies
 * 1 / 10000^(2i / head_size), i < head_size / 2, as Megatron-LM's
 * RotaryEmbedding (base 10000) makes them, in fp32. */
enum sample_fill { SAMPLE_RANDOM, SAMPLE_ROPE_FREQ, SAMPLE_RANDOM_ABS };
/* SAMPLE_RANDOM_ABS: |random|, in [0, scale) (Adam's second moments). */

#define SAMPLE_NONE (-1)
#define SAMPLE_MAX_TENSORS 16

struct sample_tensor {
	const char *name;
	int64_t count;
	enum sample_kind kind;
	enum sample_stage stage;
	enum sample_fill fill;
	float scale;      /* values uniform in [-scale, scale): a power of two, exact in every precision */
	int64_t id_range; /* ids uniform in [0, id_range) */
	int upstream;     /* a forward output: the tensor holding dLoss/d(this); else SAMPLE_NONE */
	int grad;         /* an input: the tensor backward writes dLoss/d(this) to; else SAMPLE_NONE */
	void *data;       /* CPU: float (values rounded to the precision) or int32_t; GPU: device memory */
};

/* The sizes an operator's code works with, derived from the shape once. */
struct sample_dims {
	int64_t rows;  /* rows of the operator's 2-D view: tokens (l b), or (b h/mp l) for attention */
	int64_t cols;  /* elements a row */
	int64_t batch; /* GEMMs: matrices in the batch */
	int64_t m, n, k; /* GEMMs, row-major: C[m][n] = A[m][k] B[k][n] */
	int64_t seq;   /* l: the position a row or a head vector is at is (row / (rows / seq)) */
	int64_t vocab; /* padded vocabulary partition */
	int64_t heads; /* attention: the heads a partition holds, h/mp */
	int64_t experts, topk; /* moe: experts, and the experts each token goes to */
};

/* An operator's state on either side starts with this, so code that works on
 * tensors alone (the tests) handles every operator the same way. */
struct sample_state {
	int n;
	struct sample_tensor t[SAMPLE_MAX_TENSORS];
	struct sample_dims d;
	enum sample_precision p;
	uint64_t seed; /* of the inputs, for what a family makes beyond them (graphs) */
};

/* Fill `st` (tensors without data, dims) for one checked shape. */
typedef void (*sample_layout_fn)(const int64_t *shape, struct sample_state *st);

/* Tensor order, one enum per layout: both sides index tensors by these. */
enum { EMB_IDS, EMB_W, EMB_Y, EMB_DY, EMB_DW };
enum { NORM_X, NORM_W, NORM_B, NORM_Y, NORM_MEAN, NORM_RSTD, NORM_DY, NORM_DX, NORM_DW, NORM_DB };
/* RMS norm: NORM_B is absent (no bias), NORM_MEAN is unused, NORM_RSTD is 1 / (rms + eps). */
enum { LIN_X, LIN_W, LIN_B, LIN_Y, LIN_DY, LIN_DX, LIN_DW, LIN_DB };
enum { ELT_X, ELT_Y, ELT_DY, ELT_DX, ELT_X2 }; /* gelu; res_add: Y = X + X2 */
enum { ROPE_Q, ROPE_K, ROPE_FREQ, ROPE_QO, ROPE_KO, ROPE_DQO, ROPE_DKO, ROPE_DQ, ROPE_DK };
enum { XENT_LOGITS, XENT_TARGET, XENT_LOSS, XENT_LSE, XENT_DLOSS, XENT_DLOGITS };
enum { SM_X, SM_Y, SM_DY, SM_DX };
enum { MASK_S, MASK_G }; /* fillmask: both in place */
enum { MM_A, MM_B, MM_C, MM_DC, MM_DA, MM_DB };   /* bmm, baddbmm: C = A B */
/* Fused attention (kernels/sample/attention.h): Q, K, V, O and their
 * gradients (b, l, h/mp, dim/h); ATT_LSE (b, h/mp, l) the forward's fp32
 * logsumexp of each query's scaled logits, read by the backward. */
enum { ATT_Q, ATT_K, ATT_V, ATT_O, ATT_LSE, ATT_DO, ATT_DQ, ATT_DK, ATT_DV };
/* moe: tokens (T of them) in x, routed to top_k of the experts; the pairs
 * (token, choice) in expert-major order (stable in token order) are the
 * rows of H and Y. */
enum {
	MOE_X, MOE_WR, MOE_W1, MOE_W2, MOE_OUT, MOE_PROBS, MOE_GATE, MOE_EXPERT, MOE_H, MOE_Y,
	MOE_DOUT, MOE_DX, MOE_DWR, MOE_DW1, MOE_DW2
};
/* maxk_spmm: Y = A maxk(X) over a power-law graph A (sample_maxk_graph),
 * the kept values (n x k), and dX = the kept positions of A^T dY. All fp32. */
enum { MAXK_X, MAXK_KEPT, MAXK_Y, MAXK_DY, MAXK_DX };
/* macko_spmv: y (vectors x rows, fp32) = A x, A a random sparse fp16
 * matrix in MACKO form (sample_macko_matrix), x (vectors x cols) rounded to
 * fp16 at setup. */
enum { MACKO_X, MACKO_Y };
/* ksmm: one Kronecker-sparse factor of pattern (a,b,c,d) (lib/ksmm/ksmm.h),
 * batch-size-first: Y (batch x a b d) = X (batch x a c d) K^T, weights
 * (a,b,c,d) at the run's precision. */
enum { KS_W, KS_X, KS_Y };
/* The optimizer steps: one flat buffer of the stage's parameters. */
enum { ADAM_MASTER, ADAM_M, ADAM_V, ADAM_GRAD, ADAM_WEIGHT };
/* The step estimate-train-time times (DeepSpeed's FusedAdam): lr 1e-3,
 * betas (0.9, 0.999), eps 1e-8, no weight decay; every call is step 1 (its
 * bias corrections), so a timed run and a test's single run do the same. */
#define SAMPLE_ADAM_LR 1e-3
#define SAMPLE_ADAM_BETA1 0.9
#define SAMPLE_ADAM_BETA2 0.999
#define SAMPLE_ADAM_EPS 1e-8

/* One layout per operator, named sample_layout_<kernel_name>. */
#define SAMPLE_DECLARE_LAYOUT(id, ncol, cols, check, family) \
	void sample_layout_##id(const int64_t *shape, struct sample_state *st);
SAMPLE_OP_LIST(SAMPLE_DECLARE_LAYOUT)
#undef SAMPLE_DECLARE_LAYOUT
/* The layout of the operator named `name`; NULL for no such operator. */
sample_layout_fn sample_op_layout(const char *name);

/* The parameters a pipeline stage of the GPT model holds on one of mp
 * tensor-parallel ranks (shape: mp, dim, encoders; which: 'f'irst,
 * 'm'iddle or 'l'ast): see sample_spec_train.c. */
int64_t sample_stage_params(const char *which, const int64_t *shape);

/* maxk_spmm's graph, the same on both sides: powerlaw:nodes=N,edges=N
 * degree (lib/sparse/graph_gen.h, log-normal degrees of sigma 1), from the
 * state's seed, with GraphSAGE's mean edge values 1/deg(row) (*vals, nnz,
 * malloc'd). */
struct csr;
int sample_maxk_graph(const struct sample_state *st, struct csr *g, float **vals,
		      struct sp_err *err);

/* macko_spmv's matrix, the same on both sides: lib/macko/randmat.h's
 * random fp16 matrix at the shape's density from the state's seed,
 * compressed by macko_compress_dense. */
struct macko;
int sample_macko_matrix(const struct sample_state *st, struct macko *m, struct sp_err *err);

/* For checks and layouts outside sample_spec.c: the columns' common check
 * (each at least 1, no count overflows), divisibility, start an empty state, append a tensor
 * (values in [-1, 1)), returning its index. */
int sample_check_columns(const int64_t *shape, int n, const char *const *names,
			 struct sp_err *why);
int sample_check_divides(int64_t a, const char *an, int64_t b, const char *bn,
			 struct sp_err *why);
void sample_spec_start(struct sample_state *st);
int sample_spec_add(struct sample_state *st, const char *name, int64_t count,
		    enum sample_kind kind, enum sample_stage stage);

/* Whether the operator has a backward (res_add has none: the gradient of a
 * sum is passed through, no kernel runs). */
int sample_has_backward(const char *name);

/* Whether the operator is fused attention (flash_atten, flash_atten_causal). */
int sample_is_attention(const char *name);

/* 0 when the operator runs at precision p; else -1 with the reason (fused
 * attention is half-precision: flash_attn_func takes fp16 and bf16 only).
 * The sweep skips every shape with it, as it skips shapes check refuses. */
int sample_check_precision(const char *name, enum sample_precision p, struct sp_err *why);

/* Bytes one element of a tensor takes at precision p. */
size_t sample_tensor_elem_bytes(const struct sample_tensor *t, enum sample_precision p);

/* A value rounded to precision p (nearest, ties to even), as a float. */
float sample_round(enum sample_precision p, double v);

/* Fill a tensor's host copy as setup does (float values already rounded to
 * precision p, or int32 ids); tensor number `index` of the state. */
void sample_tensor_fill_host(const struct sample_tensor *t, int index, enum sample_precision p,
			     uint64_t seed, void *host);

#ifdef __cplusplus
}
#endif

#endif
