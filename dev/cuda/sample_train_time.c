/* kernel-sample's training-step operators on the GPU timed at the shapes
 * scripts/bench-sample-torch.py times PyTorch at, in sample_ops_time's CSV
 * format: moe at a Mixtral-like layer (dim 4096, 8 experts of 14336, top 2)
 * and an OLMoE-like one (dim 2048, 64 experts of 1024, top 8), b4 l2048;
 * the three optimizer stages at estimate-train-time's get_one shape (mp 2,
 * dim 4096, 8 encoders). The median of 20 event timings after 3 warm-ups,
 * L2 flushed before each; TFLOP/s for moe, for the optimizer steps the 28
 * (fp32: 32) bytes a parameter moves as a fraction of the copy bandwidth.
 * Built by `make dev`: build/dev/sample_train_time [fp16|bf16|fp32]. */
#include <stdio.h>
#include <string.h>

#include "core/gpu.h"
#include "sample/sample_op.h"
#include "sample/sample_spec.h"

static const struct {
	const char *name;
	int64_t shape[7];
} cases[] = {
	{"moe", {1, 4, 2048, 4096, 8, 14336, 2}},
	{"moe", {1, 4, 2048, 2048, 64, 1024, 8}},
	{"firstStage_optimizer", {2, 4096, 8}},
	{"middleStage_optimizer", {2, 4096, 8}},
	{"lastStage_optimizer", {2, 4096, 8}},
};

/* moe: the router and the experts' two GEMMs; backward twice that. */
static double moe_flops(const struct sample_dims *d, int backward)
{
	double f = 2.0 * (double)d->rows * (double)d->experts * (double)d->k +
		   4.0 * (double)d->m * (double)d->k * (double)d->n;
	return backward ? 2 * f : f;
}

int main(int argc, char **argv)
{
	enum sample_precision p = SAMPLE_FP16;
	struct sp_err e;
	double gbs;
	if (argc > 1 && sample_precision_parse(argv[1], &p)) {
		fprintf(stderr, "sample_train_time: precision fp16, bf16 or fp32\n");
		return 2;
	}
	if (gpu_select(0, &e) || gpu_copy_bandwidth(0, 20, &gbs, &e)) {
		fprintf(stderr, "sample_train_time: %s\n", e.msg);
		return 1;
	}
	printf("# copy bandwidth %.0f GB/s\n", gbs);
	printf("op,shape,precision,F_dur(us),B_dur(us),F_of_copy_or_rate,B_of_copy_or_rate\n");
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const struct sample_op *op = sample_gpu_op(cases[c].name);
		char text[160] = "";
		int n = 0;
		for (int i = 0; i < op->nshape; i++)
			n += snprintf(text + n, sizeof text - (size_t)n, "%s%s=%lld", i ? " " : "",
				      op->shape_names[i], (long long)cases[c].shape[i]);
		void *st;
		struct gpu_timing f = {0}, b = {0};
		if (op->check(cases[c].shape, &e) || op->setup(cases[c].shape, p, 1, &st, &e) ||
		    gpu_time(op->forward, st, 3, 20, 1, &f, &e) ||
		    (op->backward && gpu_time(op->backward, st, 3, 20, 1, &b, &e))) {
			fprintf(stderr, "%s %s: %s\n", op->name, text, e.msg);
			continue;
		}
		const struct sample_state *s = st;
		const double fu = f.median_ms * 1e3, bu = b.median_ms * 1e3;
		printf("%s,%s,%s,%.1f,", op->name, text, sample_precision_name(p), fu);
		if (op->backward)
			printf("%.1f,%.0f TFLOP/s,%.0f TFLOP/s\n", bu, moe_flops(&s->d, 0) / fu / 1e6,
			       moe_flops(&s->d, 1) / bu / 1e6);
		else
			printf(",%.0f%%,%.3g params\n",
			       100 * (double)s->d.cols * (p == SAMPLE_FP32 ? 32 : 28) / (fu * 1e3) / gbs,
			       (double)s->d.cols);
		fflush(stdout);
		op->teardown(st);
	}
	return 0;
}
