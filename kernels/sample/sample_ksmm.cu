/* The ksmm operator on the GPU: one Kronecker-sparse factor through
 * ksmm-tune's kernel (kernels/ksmm/: compiled with NVRTC for the device,
 * cached on disk), batch-size-first. Setup puts the weights in the kernel's
 * (a,d,b,c) layout and picks the configuration: from the best table given
 * with --ksmm-table (sample_gpu_ksmm_table; ksmm-tune's rules: exact row,
 * nearest batch, nearest pattern), else ksmm-tune's default heuristic
 * (ksmm_config_default); compiling or loading it happens there too, so the
 * timed call is the product alone. */
#include "sample/sample_gpu.cuh"
extern "C" {
#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_gpu.h"
#include "sample/sample_gpu.h"
#include "sample/sample_ksmm.h"
}

static const struct ksmm_table *chosen_table; /* --ksmm-table, or NULL */

extern "C" void sample_gpu_ksmm_table(const struct ksmm_table *t)
{
	chosen_table = t;
}

struct ksmm_extra {
	struct ksmm_kernel *kernel;
	void *w; /* the kernels' layout */
};

static void ksmm_release(void *extra)
{
	struct ksmm_extra *e = (struct ksmm_extra *)extra;
	if (!e)
		return;
	ksmm_kernel_free(e->kernel);
	gpu_free(e->w);
	free(e);
}

static int runnable(void *ctx, const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
		    enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n)
{
	return ksmm_config_check(p, batch, t, l, cfg, why, n);
}

int sample_gpu_ksmm_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	const struct ksmm_pattern p = {d->m, d->n, d->k, d->seq};
	const enum ksmm_dtype t = sample_ksmm_dtype(st->s.p);
	struct ksmm_extra *e = (struct ksmm_extra *)calloc(1, sizeof *e);
	if (!e)
		return sp_fail(err, "out of memory for the ksmm state");
	st->extra = e;
	st->release = ksmm_release;
	const struct sample_tensor *w = &st->s.t[KS_W];
	if (gpu_malloc(&e->w, (size_t)w->count * ksmm_dtype_size(t), "ksmm weights", err) ||
	    ksmm_weights_prepare(&p, t, w->data, e->w, err))
		return -1;
	struct ksmm_config cfg;
	enum ksmm_rule rule;
	const struct ksmm_result *from;
	ksmm_config_default(&p, d->batch, t, KSMM_BS_FIRST, &cfg);
	if (ksmm_table_choose(chosen_table, &p, d->batch, t, KSMM_BS_FIRST, runnable, NULL, &cfg,
			      &rule, &from, err))
		return -1;
	/* KSMM_UNRUNNABLE (registers over the block's limit) carries its reason too */
	return ksmm_kernel_get(&cfg, &p, t, KSMM_BS_FIRST, &e->kernel, err) ? -1 : 0;
}

int sample_gpu_ksmm_forward(void *state, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	struct ksmm_extra *e = (struct ksmm_extra *)st->extra;
	return ksmm_kernel_run(e->kernel, e->w, st->s.t[KS_X].data, st->s.t[KS_Y].data,
			       st->s.d.batch, err);
}
