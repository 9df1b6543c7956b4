/* The CPU table of kernel-sample's operators (`--device cpu`): every
 * operator of SAMPLE_OP_LIST with its CPU reference (sample_ref.h). A state
 * is a struct sample_cpu_state whose tensors live in host memory, made and
 * filled by setup, outside the timed calls. */
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "sample/sample_op.h"
#include "sample/sample_ref.h"
#include "sample/sample_spec.h"

static void cpu_teardown(void *state)
{
	struct sample_cpu_state *st = state;
	if (!st)
		return;
	if (st->release)
		st->release(st->extra);
	for (int i = 0; i < st->s.n; i++)
		free(st->s.t[i].data);
	free(st);
}

/* The bytes of the state's tensors (floats and int32 ids alike), or
 * UINT64_MAX when the sum does not fit. */
static uint64_t state_bytes(const struct sample_state *s)
{
	uint64_t total = 0;
	for (int i = 0; i < s->n; i++) {
		uint64_t count = (uint64_t)s->t[i].count;
		if (count > (UINT64_MAX - total) / 4)
			return UINT64_MAX;
		total += count * 4;
	}
	return total;
}

static int cpu_setup(sample_layout_fn layout, sample_ref_prepare_fn prepare, const int64_t *shape,
		     enum sample_precision p, uint64_t seed, void **state, struct sp_err *err)
{
	struct sample_cpu_state *st = calloc(1, sizeof *st);
	*state = NULL;
	if (!st)
		return sp_fail(err, "out of memory for an operator's state");
	layout(shape, &st->s);
	st->s.p = p;
	st->s.seed = seed;
	/* All of it checked before any is allocated, as cudaMalloc refuses a
	 * shape on the GPU: malloc is lazy, so a shape larger than the process
	 * may hold would be killed while its tensors are filled, not refused. */
	if (mem_check(state_bytes(&st->s), "the shape's state", err)) {
		free(st);
		return -1;
	}
	for (int i = 0; i < st->s.n; i++) {
		struct sample_tensor *t = &st->s.t[i];
		size_t bytes = (size_t)t->count * 4; /* floats and int32 ids alike */
		if (!t->count)
			continue;
		t->data = malloc(bytes);
		if (!t->data) {
			sp_fail(err, "out of memory for '%s' (%zu bytes)", t->name, bytes);
			cpu_teardown(st);
			return -1;
		}
		sample_tensor_fill_host(t, i, p, seed, t->data);
	}
	if (prepare && prepare(st, err)) {
		cpu_teardown(st);
		return -1;
	}
	*state = st;
	return 0;
}

/* Families with nothing to make beyond their tensors. */
#define sample_ref_embedding_prepare NULL
#define sample_ref_norm_prepare NULL
#define sample_ref_linear_prepare NULL
#define sample_ref_gelu_prepare NULL
#define sample_ref_rope_prepare NULL
#define sample_ref_res_add_prepare NULL
#define sample_ref_xent_prepare NULL
#define sample_ref_softmax_prepare NULL
#define sample_ref_causal_softmax_prepare NULL
#define sample_ref_fillmask_prepare NULL
#define sample_ref_batched_prepare NULL
#define sample_ref_attention_prepare NULL
#define sample_ref_causal_attention_prepare NULL
#define sample_ref_moe_prepare NULL
#define sample_ref_adam_prepare NULL

/* One setup per operator, each with its own layout. */
#define CPU_SETUP(id, ncol, cols, check, family)                                           \
	static int setup_##id(const int64_t *shape, enum sample_precision p, uint64_t seed,  \
			      void **state, struct sp_err *err)                                \
	{                                                                                    \
		return cpu_setup(sample_layout_##id, sample_ref_##family##_prepare, shape, p,  \
				 seed, state, err);                                          \
	}
SAMPLE_OP_LIST(CPU_SETUP)
#undef CPU_SETUP

/* The residual sum has no backward (its gradient passes through); the
 * optimizer step, the SpMV and the ksmm factor (an inference kernel) are
 * one call. */
#define sample_ref_res_add_backward NULL
#define sample_ref_adam_backward NULL
#define sample_ref_macko_backward NULL
#define sample_ref_ksmm_backward NULL

#define CPU_ENTRY(id, ncol, cols, check, family)                                              \
	{#id, ncol, cols, check, setup_##id, sample_ref_##family##_forward,                    \
	 sample_ref_##family##_backward, cpu_teardown},
static const struct sample_op cpu_ops[] = {SAMPLE_OP_LIST(CPU_ENTRY)};
#undef CPU_ENTRY

const struct sample_op *sample_cpu_op(const char *name)
{
	for (size_t i = 0; i < sizeof cpu_ops / sizeof cpu_ops[0]; i++)
		if (strcmp(cpu_ops[i].name, name) == 0)
			return &cpu_ops[i];
	return NULL;
}
