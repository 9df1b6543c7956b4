/* Precisions by name, rounding to them, and the host fill of a tensor
 * (sample_spec.h): the numbers the CPU reference starts from and the GPU
 * tests compare against. */
#include <math.h>
#include <string.h>

#include "core/bf16.h"
#include "core/half.h"
#include "sample/sample_op.h"
#include "sample/sample_rand.h"
#include "sample/sample_spec.h"

static const char *const precision_names[] = {"fp16", "bf16", "fp32"};

const char *sample_precision_name(enum sample_precision p)
{
	return precision_names[p];
}

int sample_precision_parse(const char *text, enum sample_precision *out)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(text, precision_names[i]) == 0) {
			*out = (enum sample_precision)i;
			return 0;
		}
	return -1;
}

float sample_round(enum sample_precision p, double v)
{
	switch (p) {
	case SAMPLE_FP16:
		return half_to_float(half_from_double(v));
	case SAMPLE_BF16:
		return bf16_to_float(bf16_from_float((float)v));
	case SAMPLE_FP32:
		break;
	}
	return (float)v;
}

void sample_tensor_fill_host(const struct sample_tensor *t, int index, enum sample_precision p,
			     uint64_t seed, void *host)
{
	if (t->fill == SAMPLE_ROPE_FREQ) {
		/* inv_freq = 1 / base^(arange(0, d, 2) / d), computed in fp32. */
		float *f = host;
		for (int64_t i = 0; i < t->count; i++)
			f[i] = (float)(1.0 / pow(10000.0, (double)(2 * i) / (double)(2 * t->count)));
		return;
	}
	uint64_t stream = sample_rand_stream(seed, index);
	if (t->kind == SAMPLE_IDS) {
		int32_t *ids = host;
		for (int64_t i = 0; i < t->count; i++)
			ids[i] = sample_rand_id(stream, (uint64_t)i, t->id_range);
		return;
	}
	enum sample_precision q = t->kind == SAMPLE_VALUES ? p : SAMPLE_FP32;
	float *v = host;
	for (int64_t i = 0; i < t->count; i++) {
		float x = sample_rand_value(stream, (uint64_t)i, t->scale);
		v[i] = sample_round(q, t->fill == SAMPLE_RANDOM_ABS ? fabsf(x) : x);
	}
}
