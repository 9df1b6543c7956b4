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
#include "sample/sample_calibrate.h"
#include "sample/sample_gpu.h"
#include "sample/sample_layer.h"
#include "sample/sample_op.h"
#include "sample/sample_spec.h"


/* enc: mp, b, h, l, dim */
static void run(const char *name, const int64_t *enc, enum sample_precision p, double copy_gbs)
{
	const struct sample_op *op = sample_gpu_op(name);
	int64_t shape[5];
	char text[128];
	struct sp_err e;
	if (sample_layer_shape(name, op->shape_names, op->nshape, enc, shape, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return;
	}
	sample_shape_named(op, shape, text, sizeof text);
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
	double mf = sample_op_bytes(name, s, 0), mb = sample_op_bytes(name, s, 1);
	double fu = f.median_ms * 1e3, bu = b.median_ms * 1e3;
	printf("%s,%s,%s,%.1f,", name, text, sample_precision_name(p), fu);
	if (op->backward)
		printf("%.1f", bu);
	if (mf > 0)
		printf(",%.0f%%,%.0f%%", 100 * mf / (fu * 1e3) / copy_gbs,
		       op->backward ? 100 * mb / (bu * 1e3) / copy_gbs : 0.0);
	else
		printf(",%.0f TFLOP/s,%.0f TFLOP/s", sample_op_flops(name, s, 0) / fu / 1e6,
		       sample_op_flops(name, s, 1) / bu / 1e6);
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
		if (!sample_calibrate_fits(sample_gpu_op(name)))
			continue; /* moe, the optimizer steps: dev/cuda/sample_train_time.c */
		run(name, sample_calibrate_small, p, gbs);
		if (sample_calibrate_large_too(name))
			run(name, sample_calibrate_large, p, gbs);
	}
	return 0;
}
