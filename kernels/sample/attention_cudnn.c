/* Fused attention through cuDNN's backend (graph) API, the library PyTorch's
 * SDPA calls on Hopper (SDPBackend.CUDNN_ATTENTION): see attention.h.
 *
 * Through most of cuDNN 9 its backend has no single attention operation (the
 * unified SDPA operations are late additions); it recognises attention in a
 * graph of matmuls, pointwise operations and reductions and runs the whole
 * graph as one fused kernel. So the graphs
 * below are the ones the NVIDIA/cudnn-frontend library builds for its sdpa
 * and sdpa_backward nodes (composite lowering), tensor for tensor: the
 * engines match that pattern, and a graph of a different shape finds none.
 *
 *   forward:  S = Q K^T (fp32), S *= scale, causal: S = row >= col ? S : -FLT_MAX,
 *             m = rowmax S, e = exp(S - m), l = rowsum e,
 *             stats = m + log l, P = e / l (io type), O = P V
 *   backward: D = rowsum(dO * O) (a workspace tensor, "softmax_sum"),
 *             P = exp(scale Q K^T - stats) (masked as above),
 *             dV = P^T dO, dS = P * (dO V^T - D) * scale,
 *             dK = dS^T Q, dQ = dS K accumulated in fp32 in the workspace
 *
 * Q, K, V, O and their gradients are (batch, seq, heads, head_dim) in
 * memory, described to cuDNN as (b, h, s, d) with strides (s h d, d, h d, 1);
 * K^T and V^T are the same memory with the last two dims and strides
 * swapped. The scalars (scale, -FLT_MAX, 1) travel by value.
 *
 * A plan finalizes both graphs once (heuristics mode A first, then B, then
 * the fallback list; the first engine configuration that finalizes wins)
 * and holds one device workspace for both plus the backward's two fp32
 * tensors. Every call checks its status and reports cuDNN's own text. */
#include "sample/attention.h"
#include "sample/attention_cudnn_api.h"

#ifdef SPKIT_CUDA
#include <float.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/gpu.h"

enum {
	UID_Q = 1,
	UID_K,
	UID_V,
	UID_O,
	UID_STATS,
	UID_DO,
	UID_DQ,
	UID_DK,
	UID_DV,
	UID_SCALE,
	UID_NEG_INF,
	UID_ONE,
	UID_SOFTMAX_SUM,
	UID_DQ_ACCUM,
	UID_FIRST_VIRTUAL = 100,
};

/* Descriptors of one graph, all destroyed together; an engine
 * configuration may refer to any of them until its plan is freed. */
#define GRAPH_MAX_DESC 256
#define GRAPH_MAX_OPS 32
#define HEUR_MAX_CONFIGS 16

struct graph {
	const struct attention_cudnn_api *api;
	void *handle;
	const char *name; /* "forward" or "backward", for messages */
	void *desc[GRAPH_MAX_DESC];
	int ndesc;
	void *ops[GRAPH_MAX_OPS];
	int nops;
	int64_t next_uid;
	int failed; /* sticky: after the first failure every graph_ call is a no-op */
	struct sp_err *err;
	void *scale;	 /* the by-value scale, one tensor however many uses */
	void *plan;	 /* the finalized execution plan */
	int64_t workspace;
};

struct attention_cudnn {
	struct attention_cudnn_api api;
	void *handle;
};

struct attention_cudnn_plan {
	struct attention_cudnn *c;
	struct attention_dims d;
	struct graph fwd, bwd;
	float scale, neg_inf, one; /* the by-value scalars */
	void *workspace;	   /* max(fwd, bwd) plan workspace, softmax_sum, dq_accum */
	float *softmax_sum, *dq_accum;
	size_t dq_accum_bytes;
	int zero_dq_accum; /* cuDNN before 9.6 expects dq_accum zeroed by the caller */
};

/* The shapes every graph uses, as (dims, strides). */
struct shapes {
	int64_t qkv[4], qkv_stride[4]; /* (b, h, s, d) over (b, s, h, d) memory */
	int64_t kt[4], kt_stride[4];   /* its transpose (b, h, d, s) */
	int64_t ss[4], ss_stride[4];   /* scores (b, h, s, s), packed */
	int64_t sst_stride[4];	       /* their transpose */
	int64_t row[4], row_stride[4]; /* (b, h, s, 1) */
	int64_t bhsd_stride[4];	       /* packed (b, h, s, d) */
	int io;			       /* DNN_DATA_HALF or DNN_DATA_BFLOAT16 */
};

static void shapes_init(struct shapes *z, const struct attention_dims *d)
{
	const int64_t b = d->batch, h = d->heads, s = d->seq, e = d->head_dim;
	const int64_t qkv[4] = {b, h, s, e}, qkv_stride[4] = {s * h * e, e, h * e, 1};
	const int64_t kt[4] = {b, h, e, s}, kt_stride[4] = {s * h * e, e, 1, h * e};
	const int64_t ss[4] = {b, h, s, s}, ss_stride[4] = {h * s * s, s * s, s, 1};
	const int64_t sst_stride[4] = {h * s * s, s * s, 1, s};
	const int64_t row[4] = {b, h, s, 1}, row_stride[4] = {h * s, s, 1, 1};
	const int64_t bhsd_stride[4] = {h * s * e, s * e, e, 1};
	memcpy(z->qkv, qkv, sizeof qkv);
	memcpy(z->qkv_stride, qkv_stride, sizeof qkv_stride);
	memcpy(z->kt, kt, sizeof kt);
	memcpy(z->kt_stride, kt_stride, sizeof kt_stride);
	memcpy(z->ss, ss, sizeof ss);
	memcpy(z->ss_stride, ss_stride, sizeof ss_stride);
	memcpy(z->sst_stride, sst_stride, sizeof sst_stride);
	memcpy(z->row, row, sizeof row);
	memcpy(z->row_stride, row_stride, sizeof row_stride);
	memcpy(z->bhsd_stride, bhsd_stride, sizeof bhsd_stride);
	z->io = d->bf16 ? DNN_DATA_BFLOAT16 : DNN_DATA_HALF;
}

/* ---- graph building: each function records a failure and returns NULL ---- */

static int graph_check(struct graph *g, int status, const char *call, const char *what)
{
	if (status == DNN_STATUS_SUCCESS)
		return 0;
	char where[160];
	snprintf(where, sizeof where, "%s graph, %s: %s", g->name, what, call);
	attention_cudnn_api_fail(g->api, status, where, g->err);
	g->failed = 1;
	return -1;
}

static void *graph_make(struct graph *g, int type, const char *what)
{
	void *desc = NULL;
	if (g->failed)
		return NULL;
	if (g->ndesc == GRAPH_MAX_DESC) {
		sp_fail(g->err, "cuDNN %s graph: more than %d descriptors", g->name, GRAPH_MAX_DESC);
		g->failed = 1;
		return NULL;
	}
	if (graph_check(g, g->api->backend_create(type, &desc), "cudnnBackendCreateDescriptor",
			what))
		return NULL;
	g->desc[g->ndesc++] = desc;
	return desc;
}

static void graph_set(struct graph *g, void *desc, int name, int type, int64_t count,
		      const void *values, const char *what)
{
	if (g->failed)
		return;
	graph_check(g, g->api->backend_set(desc, name, type, count, values),
		    "cudnnBackendSetAttribute", what);
}

static void graph_finalize(struct graph *g, void *desc, const char *what)
{
	if (!g->failed)
		graph_check(g, g->api->backend_finalize(desc), "cudnnBackendFinalize", what);
}

static void graph_set_desc(struct graph *g, void *desc, int name, void *value, const char *what)
{
	graph_set(g, desc, name, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &value, what);
}

/* uid 0: a virtual tensor (never in memory, numbered here). */
static void *graph_tensor(struct graph *g, int64_t uid, int type, const int64_t dim[4],
			  const int64_t stride[4], const char *what)
{
	static const int64_t alignment = 16;
	bool is_virtual = uid == 0, by_value = uid == UID_SCALE || uid == UID_NEG_INF ||
					       uid == UID_ONE;
	if (is_virtual)
		uid = g->next_uid++;
	void *t = graph_make(g, DNN_BACKEND_TENSOR_DESCRIPTOR, what);
	graph_set(g, t, DNN_ATTR_TENSOR_DATA_TYPE, DNN_TYPE_DATA_TYPE, 1, &type, what);
	graph_set(g, t, DNN_ATTR_TENSOR_DIMENSIONS, DNN_TYPE_INT64, 4, dim, what);
	graph_set(g, t, DNN_ATTR_TENSOR_STRIDES, DNN_TYPE_INT64, 4, stride, what);
	graph_set(g, t, DNN_ATTR_TENSOR_UNIQUE_ID, DNN_TYPE_INT64, 1, &uid, what);
	graph_set(g, t, DNN_ATTR_TENSOR_BYTE_ALIGNMENT, DNN_TYPE_INT64, 1, &alignment, what);
	graph_set(g, t, DNN_ATTR_TENSOR_IS_VIRTUAL, DNN_TYPE_BOOLEAN, 1, &is_virtual, what);
	if (by_value)
		graph_set(g, t, DNN_ATTR_TENSOR_IS_BY_VALUE, DNN_TYPE_BOOLEAN, 1, &by_value, what);
	graph_finalize(g, t, what);
	return g->failed ? NULL : t;
}

static void *graph_scalar(struct graph *g, int64_t uid, const char *what)
{
	static const int64_t one[4] = {1, 1, 1, 1};
	return graph_tensor(g, uid, DNN_DATA_FLOAT, one, one, what);
}

static void *graph_scale(struct graph *g)
{
	if (!g->scale)
		g->scale = graph_scalar(g, UID_SCALE, "scale");
	return g->scale;
}

static void graph_add_op(struct graph *g, void *op, const char *what)
{
	graph_finalize(g, op, what);
	if (g->failed)
		return;
	if (g->nops == GRAPH_MAX_OPS) {
		sp_fail(g->err, "cuDNN %s graph: more than %d operations", g->name, GRAPH_MAX_OPS);
		g->failed = 1;
		return;
	}
	g->ops[g->nops++] = op;
}

/* An operation of the given type whose attributes are descriptors (NULL:
 * left unset), added to the graph. */
static void graph_op(struct graph *g, int type, int n, const int *names, void *const *descs,
		     const char *what)
{
	void *op = graph_make(g, type, what);
	for (int i = 0; i < n; i++)
		if (descs[i])
			graph_set_desc(g, op, names[i], descs[i], what);
	graph_add_op(g, op, what);
}

/* y = mode(x, b, t) in fp32 (prec: the math precision); b and t may be NULL.
 * axis >= 0 for GEN_INDEX. Returns y. */
static void *graph_pointwise(struct graph *g, int mode, int prec, void *x, void *b, void *t,
			     void *y, int64_t axis, const char *what)
{
	void *pw = graph_make(g, DNN_BACKEND_POINTWISE_DESCRIPTOR, what);
	graph_set(g, pw, DNN_ATTR_POINTWISE_MODE, DNN_TYPE_POINTWISE_MODE, 1, &mode, what);
	graph_set(g, pw, DNN_ATTR_POINTWISE_MATH_PREC, DNN_TYPE_DATA_TYPE, 1, &prec, what);
	if (axis >= 0)
		graph_set(g, pw, DNN_ATTR_POINTWISE_AXIS, DNN_TYPE_INT64, 1, &axis, what);
	graph_finalize(g, pw, what);
	static const int names[] = {
		DNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, DNN_ATTR_OPERATION_POINTWISE_XDESC,
		DNN_ATTR_OPERATION_POINTWISE_BDESC, DNN_ATTR_OPERATION_POINTWISE_TDESC,
		DNN_ATTR_OPERATION_POINTWISE_YDESC};
	graph_op(g, DNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, 5, names,
		 (void *const[]){pw, x, b, t, y}, what);
	return y;
}

/* A pointwise operation in fp32 into a new virtual tensor of the given
 * shape, the common case. */
static void *graph_pw(struct graph *g, int mode, void *x, void *b, const int64_t dim[4],
		      const int64_t stride[4], const char *what)
{
	void *y = graph_tensor(g, 0, DNN_DATA_FLOAT, dim, stride, what);
	return graph_pointwise(g, mode, DNN_DATA_FLOAT, x, b, NULL, y, -1, what);
}

static void *graph_reduce(struct graph *g, int mode, void *x, void *y, const char *what)
{
	static const int comp = DNN_DATA_FLOAT;
	void *r = graph_make(g, DNN_BACKEND_REDUCTION_DESCRIPTOR, what);
	graph_set(g, r, DNN_ATTR_REDUCTION_OPERATOR, DNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode,
		  what);
	graph_set(g, r, DNN_ATTR_REDUCTION_COMP_TYPE, DNN_TYPE_DATA_TYPE, 1, &comp, what);
	graph_finalize(g, r, what);
	static const int names[] = {DNN_ATTR_OPERATION_REDUCTION_DESC,
				    DNN_ATTR_OPERATION_REDUCTION_XDESC,
				    DNN_ATTR_OPERATION_REDUCTION_YDESC};
	graph_op(g, DNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, 3, names, (void *const[]){r, x, y},
		 what);
	return y;
}

/* c = a b over the last two dims, batched over the first two, fp32 accumulate. */
static void *graph_matmul(struct graph *g, void *a, void *b, void *c, const char *what)
{
	static const int comp = DNN_DATA_FLOAT;
	void *m = graph_make(g, DNN_BACKEND_MATMUL_DESCRIPTOR, what);
	graph_set(g, m, DNN_ATTR_MATMUL_COMP_TYPE, DNN_TYPE_DATA_TYPE, 1, &comp, what);
	graph_finalize(g, m, what);
	static const int names[] = {DNN_ATTR_OPERATION_MATMUL_DESC, DNN_ATTR_OPERATION_MATMUL_ADESC,
				    DNN_ATTR_OPERATION_MATMUL_BDESC, DNN_ATTR_OPERATION_MATMUL_CDESC};
	graph_op(g, DNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, 4, names, (void *const[]){m, a, b, c},
		 what);
	return c;
}

/* y = x seen through other dims and strides (a transpose, for the backward). */
static void *graph_reshape(struct graph *g, void *x, void *y, const char *what)
{
	static const int names[] = {DNN_ATTR_OPERATION_RESHAPE_XDESC,
				    DNN_ATTR_OPERATION_RESHAPE_YDESC};
	graph_op(g, DNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, 2, names, (void *const[]){x, y},
		 what);
	return y;
}

/* scale Q K^T, minus stats when given (the backward's recomputation), with
 * the causal mask when asked: row >= col keeps, the rest gets -FLT_MAX. */
static void *graph_logits(struct graph *g, const struct shapes *z, int causal, void *q, void *kt,
			  void *stats)
{
	void *s = graph_tensor(g, 0, DNN_DATA_FLOAT, z->ss, z->ss_stride, "Q K^T");
	graph_matmul(g, q, kt, s, "matmul Q K^T");
	s = graph_pw(g, DNN_POINTWISE_MUL, s, graph_scale(g), z->ss, z->ss_stride, "scale");
	if (stats)
		s = graph_pw(g, DNN_POINTWISE_SUB, s, stats, z->ss, z->ss_stride, "minus stats");
	if (!causal)
		return s;
	void *row = graph_tensor(g, 0, DNN_DATA_INT32, z->ss, z->ss_stride, "row index");
	void *col = graph_tensor(g, 0, DNN_DATA_INT32, z->ss, z->ss_stride, "column index");
	void *keep = graph_tensor(g, 0, DNN_DATA_BOOLEAN, z->ss, z->ss_stride, "causal mask");
	graph_pointwise(g, DNN_POINTWISE_GEN_INDEX, DNN_DATA_INT32, s, NULL, NULL, row, 2,
			"row index");
	graph_pointwise(g, DNN_POINTWISE_GEN_INDEX, DNN_DATA_INT32, s, NULL, NULL, col, 3,
			"column index");
	graph_pointwise(g, DNN_POINTWISE_CMP_GE, DNN_DATA_BOOLEAN, row, col, NULL, keep, -1,
			"causal mask");
	void *masked = graph_tensor(g, 0, DNN_DATA_FLOAT, z->ss, z->ss_stride, "masked logits");
	return graph_pointwise(g, DNN_POINTWISE_BINARY_SELECT, DNN_DATA_FLOAT, s,
			       graph_scalar(g, UID_NEG_INF, "-FLT_MAX"), keep, masked, -1,
			       "masked logits");
}

static void graph_build_forward(struct graph *g, const struct shapes *z, int causal)
{
	void *q = graph_tensor(g, UID_Q, z->io, z->qkv, z->qkv_stride, "Q");
	void *kt = graph_tensor(g, UID_K, z->io, z->kt, z->kt_stride, "K^T");
	void *v = graph_tensor(g, UID_V, z->io, z->qkv, z->qkv_stride, "V");
	void *o = graph_tensor(g, UID_O, z->io, z->qkv, z->qkv_stride, "O");
	void *stats = graph_tensor(g, UID_STATS, DNN_DATA_FLOAT, z->row, z->row_stride, "stats");
	void *s = graph_logits(g, z, causal, q, kt, NULL);

	void *max = graph_tensor(g, 0, DNN_DATA_FLOAT, z->row, z->row_stride, "row max");
	graph_reduce(g, DNN_REDUCE_TENSOR_MAX, s, max, "row max");
	void *e = graph_pw(g, DNN_POINTWISE_SUB, s, max, z->ss, z->ss_stride, "minus max");
	e = graph_pw(g, DNN_POINTWISE_EXP, e, NULL, z->ss, z->ss_stride, "exp");
	void *sum = graph_tensor(g, 0, DNN_DATA_FLOAT, z->row, z->row_stride, "row sum");
	graph_reduce(g, DNN_REDUCE_TENSOR_ADD, e, sum, "row sum");
	void *log = graph_pw(g, DNN_POINTWISE_LOG, sum, NULL, z->row, z->row_stride, "log sum");
	graph_pointwise(g, DNN_POINTWISE_ADD, DNN_DATA_FLOAT, max, log, NULL, stats, -1, "stats");
	/* P enters the second matmul in the io type, as the engines require. */
	void *p = graph_tensor(g, 0, z->io, z->ss, z->ss_stride, "P");
	graph_pointwise(g, DNN_POINTWISE_DIV, DNN_DATA_FLOAT, e, sum, NULL, p, -1, "softmax");
	graph_matmul(g, p, v, o, "matmul P V");
}

static void graph_build_backward(struct graph *g, const struct shapes *z, int causal)
{
	void *q = graph_tensor(g, UID_Q, z->io, z->qkv, z->qkv_stride, "Q");
	void *kt = graph_tensor(g, UID_K, z->io, z->kt, z->kt_stride, "K^T");
	void *vt = graph_tensor(g, UID_V, z->io, z->kt, z->kt_stride, "V^T");
	void *o = graph_tensor(g, UID_O, z->io, z->qkv, z->qkv_stride, "O");
	void *dout = graph_tensor(g, UID_DO, z->io, z->qkv, z->qkv_stride, "dO");
	void *stats = graph_tensor(g, UID_STATS, DNN_DATA_FLOAT, z->row, z->row_stride, "stats");
	void *dq = graph_tensor(g, UID_DQ, z->io, z->qkv, z->qkv_stride, "dQ");
	void *dk = graph_tensor(g, UID_DK, z->io, z->qkv, z->qkv_stride, "dK");
	void *dv = graph_tensor(g, UID_DV, z->io, z->qkv, z->qkv_stride, "dV");

	/* D = rowsum(dO * O), kept in memory (times 1, as the engines expect). */
	void *t = graph_pw(g, DNN_POINTWISE_MUL, dout, o, z->qkv, z->bhsd_stride, "dO * O");
	void *red = graph_tensor(g, 0, DNN_DATA_FLOAT, z->row, z->row_stride, "rowsum dO * O");
	graph_reduce(g, DNN_REDUCE_TENSOR_ADD, t, red, "rowsum dO * O");
	void *dsum = graph_tensor(g, UID_SOFTMAX_SUM, DNN_DATA_FLOAT, z->row, z->row_stride,
				  "softmax_sum");
	graph_pointwise(g, DNN_POINTWISE_MUL, DNN_DATA_FLOAT, red, graph_scalar(g, UID_ONE, "one"),
			NULL, dsum, -1, "softmax_sum");

	void *s = graph_logits(g, z, causal, q, kt, stats);
	void *p = graph_pw(g, DNN_POINTWISE_EXP, s, NULL, z->ss, z->ss_stride, "P");

	void *pt = graph_tensor(g, 0, z->io, z->ss, z->sst_stride, "P^T");
	graph_reshape(g, p, pt, "P^T");
	graph_matmul(g, pt, dout, dv, "matmul P^T dO");

	void *dp = graph_tensor(g, 0, DNN_DATA_FLOAT, z->ss, z->ss_stride, "dP");
	graph_matmul(g, dout, vt, dp, "matmul dO V^T");
	void *ds = graph_pw(g, DNN_POINTWISE_SUB, dp, dsum, z->ss, z->ss_stride, "dP - D");
	ds = graph_pw(g, DNN_POINTWISE_MUL, ds, p, z->ss, z->ss_stride, "P (dP - D)");
	ds = graph_pw(g, DNN_POINTWISE_MUL, ds, graph_scale(g), z->ss, z->ss_stride, "dS");

	void *dst = graph_tensor(g, 0, z->io, z->ss, z->sst_stride, "dS^T");
	graph_reshape(g, ds, dst, "dS^T");
	graph_matmul(g, dst, q, dk, "matmul dS^T Q");

	void *k = graph_tensor(g, 0, DNN_DATA_FLOAT, z->qkv, z->qkv_stride, "K");
	graph_reshape(g, kt, k, "K");
	void *acc = graph_tensor(g, UID_DQ_ACCUM, DNN_DATA_FLOAT, z->qkv, z->bhsd_stride,
				 "dQ accumulator");
	graph_matmul(g, ds, k, acc, "matmul dS K");
	graph_pointwise(g, DNN_POINTWISE_IDENTITY, DNN_DATA_FLOAT, acc, NULL, NULL, dq, -1, "dQ");
}

/* The operation graph, then the first engine configuration that finalizes
 * into an execution plan, from heuristics mode A, then B, then fallback. */
static int graph_plan(struct graph *g)
{
	static const int modes[] = {DNN_HEUR_MODE_A, DNN_HEUR_MODE_B, DNN_HEUR_MODE_FALLBACK};
	void *og = graph_make(g, DNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
	graph_set(g, og, DNN_ATTR_OPERATIONGRAPH_HANDLE, DNN_TYPE_HANDLE, 1, &g->handle,
		  "operation graph");
	graph_set(g, og, DNN_ATTR_OPERATIONGRAPH_OPS, DNN_TYPE_BACKEND_DESCRIPTOR, g->nops, g->ops,
		  "operation graph");
	graph_finalize(g, og, "operation graph");
	if (g->failed)
		return -1;
	struct sp_err last = {"no engine configuration offered"};
	int tried = 0;
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		void *heur = graph_make(g, DNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics");
		graph_set(g, heur, DNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, DNN_TYPE_BACKEND_DESCRIPTOR,
			  1, &og, "heuristics");
		graph_set(g, heur, DNN_ATTR_ENGINEHEUR_MODE, DNN_TYPE_HEUR_MODE, 1, &modes[m],
			  "heuristics");
		graph_finalize(g, heur, "heuristics");
		int64_t n = 0;
		if (!g->failed)
			graph_check(g,
				    g->api->backend_get(heur, DNN_ATTR_ENGINEHEUR_RESULTS,
							DNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL),
				    "cudnnBackendGetAttribute", "heuristics results");
		if (g->failed) { /* this mode is unavailable: the next one may be */
			last = *g->err;
			g->failed = 0;
			continue;
		}
		void *cfg[HEUR_MAX_CONFIGS];
		n = n < HEUR_MAX_CONFIGS ? n : HEUR_MAX_CONFIGS;
		for (int64_t i = 0; i < n; i++)
			cfg[i] = graph_make(g, DNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config");
		if (n)
			graph_check(g,
				    g->api->backend_get(heur, DNN_ATTR_ENGINEHEUR_RESULTS,
							DNN_TYPE_BACKEND_DESCRIPTOR, n, &n, cfg),
				    "cudnnBackendGetAttribute", "heuristics results");
		if (g->failed)
			return -1;
		for (int64_t i = 0; i < n; i++) {
			void *plan = graph_make(g, DNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "plan");
			graph_set(g, plan, DNN_ATTR_EXECUTION_PLAN_HANDLE, DNN_TYPE_HANDLE, 1,
				  &g->handle, "plan");
			graph_set_desc(g, plan, DNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg[i],
				       "plan");
			graph_finalize(g, plan, "execution plan");
			tried++;
			if (g->failed) { /* this engine cannot run it: try the next */
				last = *g->err;
				g->failed = 0;
				continue;
			}
			int64_t count = 0;
			graph_check(g,
				    g->api->backend_get(plan, DNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
							DNN_TYPE_INT64, 1, &count, &g->workspace),
				    "cudnnBackendGetAttribute", "plan workspace size");
			if (g->failed)
				return -1;
			g->plan = plan;
			return 0;
		}
	}
	return sp_fail(g->err, "cuDNN %s graph: no engine runs it (%d configurations tried; "
			       "last: %s)", g->name, tried, last.msg);
}

static void graph_free(struct graph *g)
{
	for (int i = g->ndesc - 1; i >= 0; i--)
		g->api->backend_destroy(g->desc[i]);
	g->ndesc = 0;
}

static int graph_execute(struct graph *g, int n, const int64_t *uids, void **ptrs,
			 void *workspace)
{
	const struct attention_cudnn_api *a = g->api;
	void *pack = NULL;
	int st = a->backend_create(DNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
	if (st != DNN_STATUS_SUCCESS)
		return attention_cudnn_api_fail(a, st, "variant pack: cudnnBackendCreateDescriptor",
						g->err);
	const char *call = "cudnnBackendSetAttribute";
	st = a->backend_set(pack, DNN_ATTR_VARIANT_PACK_UNIQUE_IDS, DNN_TYPE_INT64, n, uids);
	if (st == DNN_STATUS_SUCCESS)
		st = a->backend_set(pack, DNN_ATTR_VARIANT_PACK_DATA_POINTERS, DNN_TYPE_VOID_PTR, n,
				    ptrs);
	if (st == DNN_STATUS_SUCCESS)
		st = a->backend_set(pack, DNN_ATTR_VARIANT_PACK_WORKSPACE, DNN_TYPE_VOID_PTR, 1,
				    &workspace);
	if (st == DNN_STATUS_SUCCESS) {
		call = "cudnnBackendFinalize";
		st = a->backend_finalize(pack);
	}
	if (st == DNN_STATUS_SUCCESS) {
		call = "cudnnBackendExecute";
		st = a->backend_execute(g->handle, g->plan, pack);
	}
	char what[96];
	snprintf(what, sizeof what, "%s: %s", g->name, call);
	if (st != DNN_STATUS_SUCCESS)
		attention_cudnn_api_fail(a, st, what, g->err);
	a->backend_destroy(pack);
	return st == DNN_STATUS_SUCCESS ? 0 : -1;
}

/* ---- the interface of attention.h ---- */

int attention_cudnn_open(const char *library, struct attention_cudnn **out, struct sp_err *err)
{
	*out = NULL;
	struct attention_cudnn *c = calloc(1, sizeof *c);
	if (!c)
		return sp_fail(err, "cuDNN: out of memory");
	if (attention_cudnn_api_load(library, &c->api, err)) {
		free(c);
		return -1;
	}
	int st = c->api.create(&c->handle);
	if (st != DNN_STATUS_SUCCESS) {
		attention_cudnn_api_fail(&c->api, st, "cudnnCreate", err);
		attention_cudnn_api_unload(&c->api);
		free(c);
		return -1;
	}
	*out = c;
	return 0;
}

void attention_cudnn_close(struct attention_cudnn *c)
{
	if (!c)
		return;
	c->api.destroy(c->handle);
	attention_cudnn_api_unload(&c->api);
	free(c);
}

static size_t align256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

int attention_cudnn_plan(struct attention_cudnn *c, const struct attention_dims *d,
			 struct attention_cudnn_plan **out, struct sp_err *err)
{
	*out = NULL;
	if (d->batch < 1 || d->seq < 1 || d->heads < 1 || d->head_dim < 8 || d->head_dim % 8)
		return sp_fail(err, "cuDNN attention: batch %lld, seq %lld, heads %lld, head_dim "
				    "%lld: needs positive sizes and a head_dim multiple of 8",
			       (long long)d->batch, (long long)d->seq, (long long)d->heads,
			       (long long)d->head_dim);
	struct attention_cudnn_plan *p = calloc(1, sizeof *p);
	if (!p)
		return sp_fail(err, "cuDNN: out of memory");
	p->c = c;
	p->d = *d;
	p->scale = d->scale;
	p->neg_inf = -FLT_MAX;
	p->one = 1;
	p->zero_dq_accum = c->api.version < 90600;
	struct shapes z;
	shapes_init(&z, d);
	struct graph *gs[2] = {&p->fwd, &p->bwd};
	for (int i = 0; i < 2; i++) {
		struct graph *g = gs[i];
		g->api = &c->api;
		g->handle = c->handle;
		g->name = i ? "backward" : "forward";
		g->next_uid = UID_FIRST_VIRTUAL;
		g->err = err;
		if (i)
			graph_build_backward(g, &z, d->causal);
		else
			graph_build_forward(g, &z, d->causal);
		if (g->failed || graph_plan(g)) {
			attention_cudnn_plan_free(p);
			return -1;
		}
	}
	const size_t rows = (size_t)(d->batch * d->heads * d->seq);
	const size_t plan_ws = align256((size_t)(p->fwd.workspace > p->bwd.workspace
							 ? p->fwd.workspace
							 : p->bwd.workspace));
	const size_t sum_bytes = align256(rows * sizeof(float));
	p->dq_accum_bytes = rows * (size_t)d->head_dim * sizeof(float);
	if (gpu_malloc(&p->workspace, plan_ws + sum_bytes + p->dq_accum_bytes,
		       "cuDNN attention workspace", err)) {
		attention_cudnn_plan_free(p);
		return -1;
	}
	p->softmax_sum = (float *)((char *)p->workspace + plan_ws);
	p->dq_accum = (float *)((char *)p->workspace + plan_ws + sum_bytes);
	*out = p;
	return 0;
}

void attention_cudnn_plan_free(struct attention_cudnn_plan *p)
{
	if (!p)
		return;
	if (p->fwd.api)
		graph_free(&p->fwd);
	if (p->bwd.api)
		graph_free(&p->bwd);
	gpu_free(p->workspace);
	free(p);
}

int attention_cudnn_forward(struct attention_cudnn_plan *p, const void *q, const void *k,
			    const void *v, void *o, float *stats, struct sp_err *err)
{
	static const int64_t uids[] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE,
				       UID_NEG_INF};
	void *ptrs[] = {(void *)q, (void *)k, (void *)v, o, stats, &p->scale, &p->neg_inf};
	p->fwd.err = err;
	/* Only the causal graph has the -FLT_MAX scalar. */
	const int n = p->d.causal ? 7 : 6;
	return graph_execute(&p->fwd, n, uids, ptrs, p->workspace);
}

int attention_cudnn_backward(struct attention_cudnn_plan *p, const void *q, const void *k,
			     const void *v, const void *o, const void *dout, const float *stats,
			     void *dq, void *dk, void *dv, struct sp_err *err)
{
	static const int64_t uids[] = {UID_Q,  UID_K,  UID_V,  UID_O,		UID_DO,
				       UID_STATS, UID_DQ, UID_DK, UID_DV,	UID_SCALE,
				       UID_ONE, UID_SOFTMAX_SUM, UID_DQ_ACCUM, UID_NEG_INF};
	void *ptrs[] = {(void *)q,  (void *)k,	  (void *)v,	      (void *)o,   (void *)dout,
			(void *)stats, dq,	  dk,		      dv,	   &p->scale,
			&p->one,	p->softmax_sum, p->dq_accum, &p->neg_inf};
	p->bwd.err = err;
	if (p->zero_dq_accum) {
		cudaError_t rc = cudaMemsetAsync(p->dq_accum, 0, p->dq_accum_bytes, 0);
		if (rc != cudaSuccess)
			return sp_fail(err, "cuDNN attention: clearing the dQ accumulator: %s",
				       cudaGetErrorString(rc));
	}
	const int n = p->d.causal ? 14 : 13;
	return graph_execute(&p->bwd, n, uids, ptrs, p->workspace);
}

#else /* builds without nvcc: no device, so no cuDNN either */

int attention_cudnn_open(const char *library, struct attention_cudnn **out, struct sp_err *err)
{
	*out = NULL;
	return sp_fail(err, "cuDNN attention: spkit was built without CUDA");
}

void attention_cudnn_close(struct attention_cudnn *c)
{
}

int attention_cudnn_plan(struct attention_cudnn *c, const struct attention_dims *d,
			 struct attention_cudnn_plan **out, struct sp_err *err)
{
	*out = NULL;
	return sp_fail(err, "cuDNN attention: spkit was built without CUDA");
}

void attention_cudnn_plan_free(struct attention_cudnn_plan *p)
{
}

int attention_cudnn_forward(struct attention_cudnn_plan *p, const void *q, const void *k,
			    const void *v, void *o, float *stats, struct sp_err *err)
{
	return sp_fail(err, "cuDNN attention: spkit was built without CUDA");
}

int attention_cudnn_backward(struct attention_cudnn_plan *p, const void *q, const void *k,
			     const void *v, const void *o, const void *dout, const float *stats,
			     void *dq, void *dk, void *dv, struct sp_err *err)
{
	return sp_fail(err, "cuDNN attention: spkit was built without CUDA");
}

#endif
