#include "ksmm/ksmm_chain_gpu.h"

#include "core/gpu.h"
#include "ksmm/ksmm_gpu.h"
#include "ksmm/ksmm_tune_gpu.h"

int ksmm_chain_configs(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
		       const struct ksmm_table *table, struct ksmm_config *cfgs,
		       enum ksmm_rule *rules, struct sp_err *err)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct ksmm_result *from;
		if (ksmm_table_choose(table, &c->p[i], batch, c->dtype, l, ksmm_runnable, NULL,
				      &cfgs[i], &rules[i], &from, err))
			return -1;
		if (rules[i] == KSMM_RULE_DEFAULT)
			ksmm_config_default(&c->p[i], batch, c->dtype, l, &cfgs[i]);
	}
	return 0;
}

/* One factor: in -> out on the device, its weights through d_w_abcd into
 * the kernels' layout in d_w. */
static int apply_factor(const struct ksmm_chain *c, size_t i, enum ksmm_layout l, int64_t batch,
			const struct ksmm_config *cfg, void *d_w_abcd, void *d_w,
			const void *d_in, void *d_out, struct sp_err *err)
{
	const struct ksmm_pattern *p = &c->p[i];
	const size_t wbytes = (size_t)(p->a * p->b * p->c * p->d) * ksmm_dtype_size(c->dtype);
	struct ksmm_kernel *k;
	if (gpu_upload(d_w_abcd, c->w[i], wbytes, err) ||
	    ksmm_weights_prepare(p, c->dtype, d_w_abcd, d_w, err) ||
	    ksmm_kernel_get(cfg, p, c->dtype, l, &k, err))
		return -1;
	/* The launch is asynchronous: its module stays loaded until it ran. */
	int rc = ksmm_kernel_run(k, d_w, d_in, d_out, batch, err) || gpu_sync(err);
	ksmm_kernel_free(k);
	return rc;
}

int ksmm_chain_apply_gpu(const struct ksmm_chain *c, enum ksmm_layout l, int64_t batch,
			 const struct ksmm_config *cfgs, const void *x, void *y,
			 struct sp_err *err)
{
	const size_t es = ksmm_dtype_size(c->dtype);
	int64_t widest = ksmm_chain_cols(c), wmax = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct ksmm_pattern *p = &c->p[i];
		widest = ksmm_rows(p) > widest ? ksmm_rows(p) : widest;
		wmax = p->a * p->b * p->c * p->d > wmax ? p->a * p->b * p->c * p->d : wmax;
	}
	void *d_act[2] = {NULL, NULL}, *d_w_abcd = NULL, *d_w = NULL;
	const size_t abytes = (size_t)(widest * batch) * es;
	int rc = gpu_malloc(&d_act[0], abytes, "activations", err) ||
			 gpu_malloc(&d_act[1], abytes, "activations", err) ||
			 gpu_malloc(&d_w_abcd, (size_t)wmax * es, "weights", err) ||
			 gpu_malloc(&d_w, (size_t)wmax * es, "weights", err) ||
			 gpu_upload(d_act[0], x, (size_t)(ksmm_chain_cols(c) * batch) * es, err)
		 ? -1
		 : 0;
	for (size_t i = 0; i < c->n && !rc; i++)
		rc = apply_factor(c, i, l, batch, &cfgs[i], d_w_abcd, d_w, d_act[i % 2],
				  d_act[(i + 1) % 2], err);
	if (!rc)
		rc = gpu_download(y, d_act[c->n % 2], (size_t)(ksmm_chain_rows(c) * batch) * es,
				  err);
	gpu_free(d_act[0]), gpu_free(d_act[1]), gpu_free(d_w_abcd), gpu_free(d_w);
	return rc;
}
