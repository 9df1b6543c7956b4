#include "partition/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "partition/model_yaml.h"
#include "partition/onnx_model.h"
#include "core/strmap.h"

/* The classes each kind of thresholds gives, in the order reports list them. */
static const enum roofline_class ridge_classes[] = {ROOFLINE_COMPUTE, ROOFLINE_MEMORY,
						    ROOFLINE_LATENCY, ROOFLINE_NONE};
static const enum roofline_class fixed_classes[] = {ROOFLINE_COMPUTE, ROOFLINE_BALANCED,
						   ROOFLINE_MEMORY, ROOFLINE_BANDWIDTH,
						   ROOFLINE_NONE};

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

int partition_load(const char *path, struct opgraph *g, struct sp_err *err)
{
	if (has_suffix(path, ".yaml") || has_suffix(path, ".yml"))
		return model_yaml_load(path, g, err);
	return onnx_model_load(path, g, err);
}

static int oom(const struct partition_report *r, struct sp_err *err)
{
	return sp_fail(err, "%s: out of memory", r->g.path);
}

/* How many ops of each type, most common first (ties by name). */
static int cmp_count(const void *a, const void *b)
{
	const struct partition_count *x = a, *y = b;
	return x->count != y->count ? (x->count < y->count) - (x->count > y->count)
				    : strcmp(x->name, y->name);
}

static int count_op_types(struct partition_report *r, struct sp_err *err)
{
	struct strmap seen = {0};
	size_t cap = 0;
	for (size_t k = 0; k < r->g.nnodes; k++) {
		const char *op = r->g.nodes[k].op;
		int added;
		size_t *slot = strmap_insert(&seen, op, strlen(op), &added);
		struct partition_count *grown =
			slot && added
				? buf_grow_array(r->op_types, &cap, r->nop_types + 1, sizeof *grown)
				: r->op_types;
		if (!slot || !grown) {
			strmap_free(&seen);
			return oom(r, err);
		}
		r->op_types = grown;
		if (added) {
			*slot = r->nop_types;
			r->op_types[r->nop_types++] = (struct partition_count){op, 0, 0};
		}
		r->op_types[*slot].count++;
	}
	strmap_free(&seen);
	if (r->nop_types)
		qsort(r->op_types, r->nop_types, sizeof *r->op_types, cmp_count);
	return 0;
}

/* Cost, roofline and class of every op, and the sums over them. */
static void cost_ops(struct partition_report *r)
{
	static const char *const buckets[PARTITION_THREAD_BUCKETS] = {"<1K", "1K-10K", "10K-100K",
								      "100K-1M", ">1M"};
	const struct partition_options *o = r->o;
	int dtype_bytes = op_cost_dtype_size(hardware_dtype_name(o->dtype)),
	    fixed = o->thresholds == ROOFLINE_FIXED;
	const enum roofline_class *cls = fixed ? fixed_classes : ridge_classes;
	int64_t by_class[ROOFLINE_NCLASSES] = {0};
	double threads = 0;
	r->nbottlenecks = fixed ? sizeof fixed_classes / sizeof fixed_classes[0]
			       : sizeof ridge_classes / sizeof ridge_classes[0];
	for (int b = 0; b < PARTITION_THREAD_BUCKETS; b++)
		r->threads[b] = (struct partition_count){buckets[b], 0, b};
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		struct partition_op *op = &r->ops[k];
		struct op_cost *c = &op->cost;
		op_cost(&r->g, k, op->unknown, r->is_param, dtype_bytes, c);
		if (r->stage[k] < 0) {
			op_cost_make_constant(c);
			r->constant_ops++;
		}
		op_cost_accumulate(&r->totals, c);
		struct roofline_op ro = {.kernel = c->kernel,
					 .matrix = c->cls == OP_COST_MATMUL,
					 .flops = c->flops,
					 .bytes = opgraph_add_sat(opgraph_add_sat(c->input_bytes,
										  c->output_bytes),
								  c->weight_bytes)};
		roofline_estimate(&o->hw, o->dtype, o->thresholds, &ro, &op->roof);
		r->roofline_time_s += op->roof.time_s;
		by_class[op->roof.cls]++;
		r->unknown_ops += op->unknown;
		r->depthwise_ops += c->depthwise;
		r->grouped_ops += c->groups > 1 && !c->depthwise;
		if (!c->kernel)
			continue;
		r->kernels++;
		threads += (double)c->threads;
		int b = 0;
		for (int64_t limit = 1000; b < PARTITION_THREAD_BUCKETS - 1 && c->threads >= limit;
		     limit *= 10)
			b++;
		r->threads[b].count++;
	}
	r->avg_threads = r->kernels ? threads / (double)r->kernels : 0;
	for (size_t i = 0; i < r->nbottlenecks; i++)
		r->bottlenecks[i] = (struct partition_count){roofline_class_name(cls[i]),
							     by_class[cls[i]], cls[i]};
}

/* The critical paths: by FLOPs (marking its ops) and by roofline time
 * (in picoseconds, to reuse the integer path). */
static int critical_paths(struct partition_report *r, struct sp_err *err)
{
	size_t n = r->g.nnodes;
	int64_t *w = malloc((n ? n : 1) * sizeof *w), ps;
	unsigned char *on_path = malloc(n ? n : 1);
	int rc = 0;
	if (!w || !on_path) {
		rc = oom(r, err);
		goto done;
	}
	for (size_t k = 0; k < n; k++)
		w[k] = r->ops[k].cost.flops;
	if ((rc = stages_heaviest_path(&r->g, r->order, r->stage, w, &r->critical_path_flops,
				       on_path, err)))
		goto done;
	for (size_t k = 0; k < n; k++) {
		r->ops[k].critical = on_path[k];
		/* An op past 2^63 ps (107 days: a huge model on a slow hardware
		 * file) saturates, as the FLOP counts do. */
		double ps_k = r->ops[k].roof.time_s * 1e12 + 0.5;
		w[k] = ps_k < 0x1p63 ? (int64_t)ps_k : INT64_MAX;
	}
	rc = stages_heaviest_path(&r->g, r->order, r->stage, w, &ps, NULL, err);
	r->critical_path_time_s = (double)ps * 1e-12;
done:
	free(w);
	free(on_path);
	return rc;
}

/* The staged nodes grouped by stage (a counting sort of the order). */
static int group_stages(struct partition_report *r, struct sp_err *err)
{
	size_t n = r->g.nnodes, ns = (size_t)r->stages.stages;
	r->by_stage = malloc((n ? n : 1) * sizeof *r->by_stage);
	r->stage_start = calloc(ns + 2, sizeof *r->stage_start);
	if (!r->by_stage || !r->stage_start)
		return oom(r, err);
	for (size_t k = 0; k < n; k++)
		if (r->stage[k] >= 0)
			r->stage_start[r->stage[k] + 2]++;
	for (size_t s = 2; s < ns + 2; s++)
		r->stage_start[s] += r->stage_start[s - 1];
	for (size_t i = 0; i < n; i++) {
		size_t k = r->order[i];
		if (r->stage[k] >= 0)
			r->by_stage[r->stage_start[r->stage[k] + 1]++] = k;
	}
	return 0;
}

int partition_analyse(struct partition_report *r, const struct partition_options *o,
		      struct sp_err *err)
{
	size_t n = r->g.nnodes ? r->g.nnodes : 1;
	r->o = o;
	r->order = malloc(n * sizeof *r->order);
	r->ops = calloc(n, sizeof *r->ops);
	r->stage = malloc(n * sizeof *r->stage);
	r->is_param = calloc(r->g.nvalues ? r->g.nvalues : 1, 1);
	unsigned char *unknown = calloc(n, 1);
	int rc = -1;
	if (!r->order || !r->ops || !r->stage || !r->is_param || !unknown) {
		rc = oom(r, err);
		goto done;
	}
	if (shape_infer(&r->g, &o->si, r->order, unknown, err) ||
	    stages_assign(&r->g, r->order, r->stage, &r->stages, err))
		goto done;
	for (size_t k = 0; k < r->g.nnodes; k++)
		r->ops[k].unknown = unknown[k];
	r->totals.params = op_cost_mark_params(&r->g, r->order, r->is_param);
	cost_ops(r);
	rc = critical_paths(r, err) || count_op_types(r, err) || group_stages(r, err) ||
			     fusion_find(&r->g, r->order, r->stage, r->is_param,
					 op_cost_dtype_size(hardware_dtype_name(o->dtype)),
					 &r->fusions, &r->nfusions, err)
		     ? -1
		     : 0;
done:
	free(unknown);
	return rc;
}

void partition_free(struct partition_report *r)
{
	opgraph_free(&r->g);
	free(r->order);
	free(r->ops);
	free(r->stage);
	free(r->by_stage);
	free(r->stage_start);
	free(r->is_param);
	free(r->op_types);
	free(r->fusions);
	memset(r, 0, sizeof *r);
}

void partition_fusion_pattern(const struct partition_report *r, const struct fusion *f, char *buf,
			      size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < f->nops && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "+" : "",
					r->g.nodes[f->ops[i]].op);
}
