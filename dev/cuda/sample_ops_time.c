/* kernel-sample's GPU operators timed at the shapes scripts/bench-sample-torch.py
 * times PyTorch at (../shared/anchors/H100.md's operator table, and the same
 * sizes for the operators it leaves out): the median of 20 event timings
 * after 3 warm-ups, L2 flushed before each (kernels/core/gpu.h's gpu_time),
 * forward and backward each on its own; for the memory-bound operators the
 * bytes each must move and that as a fraction of the copy bandwidth measured
 * in the same run, for the GEMMs and fused attention TFLOP/s (attention:
 * 4 b h l^2 d forward, half that causal, the backward 2.5 times the
 * forward, as FlashAttention counts them). A probe for tuning the kernels,
 * not part of the build:
 *   make CUDA_ARCH=90 all
 *   cc -std=c11 -O2 -D_DEFAULT_SOURCE -Ilib -Ikernels dev/cuda/sample_ops_time.c \
 *      build/libspkit_gpu.a build/libspkit.a -L/usr/local/cuda/lib64 -lcublasLt -lcublas \
 *      -lcusparse -lcudart_static -ldl -lrt -lstdc++ -lm -pthread -o sample-ops-time
 *   ./sample-ops-time [fp16|bf16|fp32 [cudnn|own [OP,OP...]]] > ours.csv
 * (the second argument: flash_atten's backend, default cuDNN when it loads;
 * the third: only these operators) */
#include <stdio.h>
#include <string.h>

#include "core/gpu.h"
#include "sample/sample_gpu.h"
#include "sample/sample_op.h"
#include "sample/sample_spec.h"

struct size {
	int64_t mp, b, h, l, dim;
};
static const struct size small = {1, 4, 32, 2048, 4096}, large = {1, 8, 64, 4096, 8192};

static double tensor_bytes(const struct sample_state *st, int i)
{
	return (double)st->t[i].count * (double)sample_tensor_elem_bytes(&st->t[i], st->p);
}

/* Bytes an operator must move (read + written), forward or backward; 0 for
 * the GEMMs, which are counted in flops. */
static double must_move(const char *op, const struct sample_state *st, int backward)
{
#define B(i) tensor_bytes(st, i)
	if (!strcmp(op, "layernorm") || !strcmp(op, "RMSlayernorm"))
		return backward ? B(NORM_X) + B(NORM_DY) + B(NORM_DX) : B(NORM_X) + B(NORM_Y);
	if (!strcmp(op, "gelu"))
		return backward ? B(ELT_X) + B(ELT_DY) + B(ELT_DX) : B(ELT_X) + B(ELT_Y);
	if (!strcmp(op, "res_add"))
		return B(ELT_X) + B(ELT_X2) + B(ELT_Y);
	if (!strcmp(op, "softmax"))
		return backward ? B(SM_Y) + B(SM_DY) + B(SM_DX) : B(SM_X) + B(SM_Y);
	if (!strcmp(op, "ScaledUpperTriangMaskedSoftmax")) /* the kept lower triangle read */
		return backward ? (B(SM_Y) + B(SM_DY)) / 2 + B(SM_DX) : B(SM_X) / 2 + B(SM_Y);
	if (!strcmp(op, "RoPE"))
		return 2 * (B(ROPE_Q) + B(ROPE_K));
	if (!strcmp(op, "fillmask")) /* the upper triangle written */
		return B(MASK_S) / 2;
	if (!strcmp(op, "parallel_cross_entropy_128"))
		return backward ? 2 * B(XENT_LOGITS) : B(XENT_LOGITS);
	if (!strcmp(op, "embedding"))
		return backward ? B(EMB_DY) + B(EMB_DW) : 2 * B(EMB_Y);
	return 0;
#undef B
}

static double flops(const char *op, const struct sample_state *st, int backward)
{
	const struct sample_dims *d = &st->d;
	if (sample_is_attention(op))
		return (backward ? 2.5 : 1.0) * 4.0 * (double)d->batch * (double)d->heads *
		       (double)d->seq * (double)d->seq * (double)d->cols *
		       (strcmp(op, "flash_atten_causal") ? 1.0 : 0.5);
	return (backward ? 4.0 : 2.0) * (double)(d->batch ? d->batch : 1) * (double)d->m *
	       (double)d->n * (double)d->k;
}

static void run(const char *name, const struct size *z, enum sample_precision p, double copy_gbs)
{
	const struct sample_op *op = sample_gpu_op(name);
	int64_t all[] = {z->mp, z->b, z->h, z->l, z->dim}, shape[5];
	char text[96] = "";
	int n = 0;
	for (int i = 0; i < op->nshape; i++) {
		const char *c = op->shape_names[i];
		int at = !strcmp(c, "mp") ? 0 : !strcmp(c, "b") ? 1 : !strcmp(c, "h") ? 2
						: !strcmp(c, "l")  ? 3 : 4;
		shape[i] = all[at];
		n += snprintf(text + n, sizeof text - (size_t)n, "%s%s=%lld", i ? " " : "", c,
			      (long long)shape[i]);
	}
	struct sp_err e;
	void *st;
	struct gpu_timing f = {0}, b = {0};
	if (op->check(shape, &e) || sample_check_precision(name, p, &e) ||
	    op->setup(shape, p, 1, &st, &e) ||
	    gpu_time(op->forward, st, 3, 20, 1, &f, &e) ||
	    (op->backward && gpu_time(op->backward, st, 3, 20, 1, &b, &e))) {
		fprintf(stderr, "%s %s: %s\n", name, text, e.msg);
		return;
	}
	const struct sample_state *s = st;
	double mf = must_move(name, s, 0), mb = must_move(name, s, 1);
	double fu = f.median_ms * 1e3, bu = b.median_ms * 1e3;
	printf("%s,%s,%s,%.1f,", name, text, sample_precision_name(p), fu);
	if (op->backward)
		printf("%.1f", bu);
	if (mf > 0)
		printf(",%.0f%%,%.0f%%", 100 * mf / (fu * 1e3) / copy_gbs,
		       op->backward ? 100 * mb / (bu * 1e3) / copy_gbs : 0.0);
	else
		printf(",%.0f TFLOP/s,%.0f TFLOP/s", flops(name, s, 0) / fu / 1e6,
		       flops(name, s, 1) / bu / 1e6);
	printf("\n");
	fflush(stdout);
	op->teardown(st);
}

/* name is an item of the comma-separated list. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Whether the operator's columns are all among mp, b, h, l and dim. */
static int transformer_shape(const struct sample_op *op)
{
	static const char *const known[] = {"mp", "b", "h", "l", "dim"};
	for (int i = 0; i < op->nshape; i++) {
		int found = 0;
		for (int k = 0; k < 5; k++)
			found |= !strcmp(op->shape_names[i], known[k]);
		if (!found)
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	enum sample_precision p = SAMPLE_FP16;
	struct sp_err e;
	double gbs;
	enum sample_attention attention = SAMPLE_ATTENTION_AUTO, used;
	if ((argc > 1 && sample_precision_parse(argv[1], &p)) ||
	    (argc > 2 && strcmp(argv[2], "cudnn") && strcmp(argv[2], "own"))) {
		fprintf(stderr, "sample-ops-time: precision fp16, bf16 or fp32, then cudnn or own\n");
		return 2;
	}
	if (argc > 2)
		attention = strcmp(argv[2], "own") ? SAMPLE_ATTENTION_CUDNN : SAMPLE_ATTENTION_OWN;
	if (gpu_select(0, &e) || gpu_copy_bandwidth(0, 20, &gbs, &e)) {
		fprintf(stderr, "sample-ops-time: %s\n", e.msg);
		return 1;
	}
	if (sample_gpu_attention_use(attention, &used, &e)) {
		fprintf(stderr, "sample-ops-time: %s\n", e.msg);
		return 1;
	}
	printf("# copy bandwidth %.0f GB/s; flash_atten on %s\n", gbs,
	       used == SAMPLE_ATTENTION_OWN ? "our kernel" : "cuDNN");
	printf("op,shape,precision,F_dur(us),B_dur(us),F_of_copy_or_rate,B_of_copy_or_rate\n");
	for (int i = 0; sample_op_names[i]; i++) {
		const char *name = sample_op_names[i];
		if (argc > 3 && !listed(argv[3], name))
			continue;
		if (!transformer_shape(sample_gpu_op(name)))
			continue; /* moe, the optimizer steps: dev/cuda/sample_train_time.c */
		run(name, &small, p, gbs);
		if (!strcmp(name, "linear1") || !strcmp(name, "layernorm") || !strcmp(name, "gelu") ||
		    sample_is_attention(name))
			run(name, &large, p, gbs);
	}
	return 0;
}
