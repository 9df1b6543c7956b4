/* An operator kernel-sample times (estimate-train-time's kernel sampling,
 * DebarghaG/estimate-train-time, done in C): given one shape of the
 * config's grid (its first_n_column values, in the config's column order),
 * it says whether the shape makes sense, makes its inputs once outside the
 * timed region, and runs its forward and its backward. The sweep driver
 * (lib/sample/) times the calls: with events on the GPU, a wall clock on
 * the CPU. One table for the CPU references (lib/sample/) and one for the
 * GPU (kernels/sample/), with the same names and shape semantics. */
#ifndef SPKIT_SAMPLE_OP_H
#define SPKIT_SAMPLE_OP_H

#include <stdint.h>

#include "core/err.h"

enum sample_precision { SAMPLE_FP16, SAMPLE_BF16, SAMPLE_FP32 };

struct sample_op {
	const char *name;             /* the config's kernel_name, "layernorm" */
	int nshape;                   /* shape columns it takes */
	const char *const *shape_names; /* as the original configs name them: "mp","b","l","dim" */
	/* 0 if the shape can run; -1 with the reason otherwise ("dim 100
	 * not divisible by mp 8"): the sweep logs it and goes on. */
	int (*check)(const int64_t *shape, struct sp_err *why);
	/* Inputs, weights and outputs for one shape, random from seed. */
	int (*setup)(const int64_t *shape, enum sample_precision p, uint64_t seed, void **state,
		     struct sp_err *err);
	int (*forward)(void *state, struct sp_err *err);
	int (*backward)(void *state, struct sp_err *err); /* NULL: no backward */
	void (*teardown)(void *state);
};

/* NULL when there is no such operator (or, on the GPU, no CUDA). */
const struct sample_op *sample_cpu_op(const char *name);
const struct sample_op *sample_gpu_op(const char *name);
/* Every operator's name, NULL-terminated, for --help and messages. */
extern const char *const sample_op_names[];

const char *sample_precision_name(enum sample_precision p);
int sample_precision_parse(const char *text, enum sample_precision *out);

#endif
