/* graph-partition's report: a table, JSON, CSV or Graphviz DOT (partition.h). */
#include <stdio.h>
#include <string.h>

#include "csvw.h"
#include "jsonw.h"
#include "num.h"
#include "partition.h"

/* The classes each kind of thresholds gives, in the order reports list them. */
static const enum rl_class ridge_classes[] = {RL_COMPUTE, RL_MEMORY, RL_LATENCY, RL_NONE};
static const enum rl_class seed_classes[] = {RL_COMPUTE, RL_BALANCED, RL_MEMORY, RL_BANDWIDTH,
					     RL_NONE};

static const enum rl_class *classes(const struct gp_report *r, size_t *n)
{
	*n = r->o->thresholds == RL_SEED ? sizeof seed_classes / sizeof seed_classes[0]
					 : sizeof ridge_classes / sizeof ridge_classes[0];
	return r->o->thresholds == RL_SEED ? seed_classes : ridge_classes;
}

static const char *thresholds_name(const struct gp_report *r)
{
	return r->o->thresholds == RL_SEED ? "seed" : "ridge";
}

static const struct om_value *first_output(const struct gp_report *r, const struct om_node *n)
{
	return n->nout && n->out[0] != OM_NONE && r->g.values[n->out[0]].ndim >= 0
		       ? &r->g.values[n->out[0]]
		       : NULL;
}

/* "1x64x56x56"; empty for an unknown shape, a scalar too. */
static void shape_text(const struct om_value *y, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int d = 0; y && d < y->ndim && len + 24 < size; d++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "x" : "",
					(long long)y->dims[d]);
}

static double ridge_point(const struct gp_report *r)
{
	return r->o->hw.peak_flops[r->o->dtype] / r->o->hw.bandwidth;
}

static int finish(FILE *fp)
{
	return fflush(fp) || ferror(fp) ? -1 : 0;
}

/* ---- table ---- */

int gp_write_table(FILE *fp, const struct gp_report *r)
{
	const struct oc_totals *t = &r->totals;
	const struct hw_spec *hw = &r->o->hw;
	fprintf(fp, "%-40s %-20s %-13s %5s %-18s %15s %15s %13s %13s %13s %9s %10s %-5s %-15s "
		    "%10s\n",
		"name", "op_type", "class", "stage", "output_shape", "flops", "macs", "input_bytes",
		"output_bytes", "weight_bytes", "intensity", "threads", "conv", "bottleneck",
		"time_us");
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct om_node *n = &r->g.nodes[k];
		const struct gp_op *op = &r->ops[k];
		const struct op_cost *c = &op->cost;
		char shape[128], conv[24] = "";
		shape_text(first_output(r, n), shape, sizeof shape);
		if (c->depthwise)
			snprintf(conv, sizeof conv, "dw");
		else if (c->groups > 1)
			snprintf(conv, sizeof conv, "g%lld", (long long)c->groups);
		fprintf(fp, "%-40s %-20s %-13s %5lld %-18s %15lld %15lld %13lld %13lld %13lld %9.3f "
			    "%10lld %-5s %-15s %10.3f\n",
			n->name, n->op, oc_class_name(c->cls), (long long)r->stage[k], shape,
			(long long)c->flops, (long long)c->macs, (long long)c->input_bytes,
			(long long)c->output_bytes, (long long)c->weight_bytes, c->intensity,
			(long long)c->threads, conv, rl_class_name(op->roof.cls),
			op->roof.time_s * 1e6);
	}
	fprintf(fp, "\nmodel         %s\nops           %zu\nkernels       %lld\ndtype         %s\n",
		r->g.path, r->g.nnodes, (long long)r->kernels, hw_dtype_name(r->o->dtype));
	fprintf(fp, "total_flops   %lld\nmatmul_flops  %lld\nmacs          %lld\n"
		    "params        %lld\nmemory_bytes  %lld\n",
		(long long)t->total_flops, (long long)t->matmul_flops, (long long)t->macs,
		(long long)t->params, (long long)t->memory_bytes);
	fprintf(fp, "stages               %lld\nmax_parallel_ops     %lld\n"
		    "critical_path_ops    %lld\ncritical_path_flops  %lld\n",
		(long long)r->stages.stages, (long long)r->stages.max_parallel_ops,
		(long long)r->stages.critical_path_ops, (long long)r->critical_path_flops);
	fprintf(fp, "hardware             %s (ridge point %.1f FLOP/byte at %s; thresholds %s)\n",
		hw->name, ridge_point(r), hw_dtype_name(r->o->dtype), thresholds_name(r));
	fprintf(fp, "roofline_time_us     %.3f\ncritical_path_time_us %.3f\n",
		r->roofline_time_s * 1e6, r->critical_path_time_s * 1e6);
	fprintf(fp, "op_types            ");
	for (size_t i = 0; i < r->nop_types; i++)
		fprintf(fp, "%s %s %lld", i ? "," : "", r->op_types[i].name,
			(long long)r->op_types[i].count);
	fprintf(fp, "\nbottlenecks         ");
	size_t ncls;
	const enum rl_class *cls = classes(r, &ncls);
	for (size_t i = 0; i < ncls; i++)
		fprintf(fp, "%s %s %lld", i ? "," : "", rl_class_name(cls[i]),
			(long long)r->bottlenecks[cls[i]]);
	fprintf(fp, "\nthreads_per_kernel   %.0f on average;", r->avg_threads);
	for (int b = 0; b < GP_THREAD_BUCKETS; b++)
		fprintf(fp, "%s %s %lld", b ? "," : "", gp_thread_bucket_names[b],
			(long long)r->thread_buckets[b]);
	fprintf(fp, "\nconv_groups          depthwise %lld, grouped %lld\n",
		(long long)r->depthwise_ops, (long long)r->grouped_ops);
	fprintf(fp, "fusion_candidates    %zu\n", r->nfusions);
	for (size_t i = 0; i < r->nfusions; i++) {
		const struct fusion *f = &r->fusions[i];
		char pattern[160];
		gp_fusion_pattern(r, f, pattern, sizeof pattern);
		fprintf(fp, "  %-36s saves %12lld bytes:", pattern, (long long)f->saved_bytes);
		for (size_t j = 0; j < f->nops; j++)
			fprintf(fp, " %s", r->g.nodes[f->ops[j]].name);
		fputc('\n', fp);
	}
	return finish(fp);
}

/* ---- JSON ---- */

static void json_double(FILE *fp, const char *key, double v)
{
	char num[NUM_DOUBLE_MAX];
	fprintf(fp, "\"%s\": %s", key, num_format_double(num, v, 6));
}

static void json_summary(FILE *fp, const struct gp_report *r)
{
	const struct oc_totals *t = &r->totals;
	fprintf(fp, " \"summary\": {\"ops\": %zu, \"kernels\": %lld, \"unknown_ops\": %lld, "
		    "\"total_flops\": %lld, \"matmul_flops\": %lld, \"macs\": %lld, "
		    "\"params\": %lld, \"memory_bytes\": %lld, \"stages\": %lld, "
		    "\"max_parallel_ops\": %lld, \"critical_path_ops\": %lld, "
		    "\"critical_path_flops\": %lld,\n  \"critical_path\": [",
		r->g.nnodes, (long long)r->kernels, (long long)r->unknown_ops,
		(long long)t->total_flops, (long long)t->matmul_flops, (long long)t->macs,
		(long long)t->params, (long long)t->memory_bytes, (long long)r->stages.stages,
		(long long)r->stages.max_parallel_ops, (long long)r->stages.critical_path_ops,
		(long long)r->critical_path_flops);
	int first = 1;
	for (size_t i = 0; i < r->g.nnodes; i++)
		if (r->ops[r->order[i]].critical) {
			fprintf(fp, "%s", first ? "" : ", ");
			jsonw_string(fp, r->g.nodes[r->order[i]].name);
			first = 0;
		}
	fprintf(fp, "],\n  ");
	json_double(fp, "roofline_time_s", r->roofline_time_s);
	fprintf(fp, ", ");
	json_double(fp, "critical_path_time_s", r->critical_path_time_s);
	fprintf(fp, ", \"depthwise_ops\": %lld, \"grouped_ops\": %lld, ",
		(long long)r->depthwise_ops, (long long)r->grouped_ops);
	json_double(fp, "avg_threads", r->avg_threads);
	fprintf(fp, ",\n  \"parallelism\": {");
	for (int b = 0; b < GP_THREAD_BUCKETS; b++)
		fprintf(fp, "%s\"%s\": %lld", b ? ", " : "", gp_thread_bucket_names[b],
			(long long)r->thread_buckets[b]);
	fprintf(fp, "},\n  \"op_types\": {");
	for (size_t i = 0; i < r->nop_types; i++) {
		fprintf(fp, "%s", i ? ", " : "");
		jsonw_string(fp, r->op_types[i].name);
		fprintf(fp, ": %lld", (long long)r->op_types[i].count);
	}
	fprintf(fp, "},\n  \"bottlenecks\": {");
	size_t ncls;
	const enum rl_class *cls = classes(r, &ncls);
	for (size_t i = 0; i < ncls; i++)
		fprintf(fp, "%s\"%s\": %lld", i ? ", " : "", rl_class_name(cls[i]),
			(long long)r->bottlenecks[cls[i]]);
	fprintf(fp, "}, \"fusion_candidates\": %zu},\n", r->nfusions);
}

static void json_op(FILE *fp, const struct gp_report *r, size_t k)
{
	const struct om_node *n = &r->g.nodes[k];
	const struct gp_op *op = &r->ops[k];
	const struct op_cost *c = &op->cost;
	const struct om_value *y = first_output(r, n);
	fprintf(fp, "  {\"name\": ");
	jsonw_string(fp, n->name);
	fprintf(fp, ", \"op_type\": ");
	jsonw_string(fp, n->op);
	fprintf(fp, ", \"class\": \"%s\", \"stage\": %lld, \"output_shape\": [",
		oc_class_name(c->cls), (long long)r->stage[k]);
	for (int d = 0; y && d < y->ndim; d++)
		fprintf(fp, "%s%lld", d ? ", " : "", (long long)y->dims[d]);
	fprintf(fp, "], \"flops\": %lld, \"macs\": %lld, \"input_bytes\": %lld, "
		    "\"output_bytes\": %lld, \"weight_bytes\": %lld, ",
		(long long)c->flops, (long long)c->macs, (long long)c->input_bytes,
		(long long)c->output_bytes, (long long)c->weight_bytes);
	json_double(fp, "intensity", c->intensity);
	fprintf(fp, ",\n   \"kernel\": %s, \"threads\": %lld, \"groups\": %lld, "
		    "\"depthwise\": %s, \"grouped\": %s, \"bottleneck\": \"%s\", ",
		c->kernel ? "true" : "false", (long long)c->threads, (long long)c->groups,
		c->depthwise ? "true" : "false", c->groups > 1 && !c->depthwise ? "true" : "false",
		rl_class_name(op->roof.cls));
	json_double(fp, "time_s", op->roof.time_s);
	fprintf(fp, ", ");
	json_double(fp, "compute_s", op->roof.compute_s);
	fprintf(fp, ", ");
	json_double(fp, "memory_s", op->roof.memory_s);
	fprintf(fp, ", \"critical\": %s}", op->critical ? "true" : "false");
}

int gp_write_json(FILE *fp, const struct gp_report *r)
{
	const struct hw_spec *hw = &r->o->hw;
	fprintf(fp, "{\"model\": ");
	jsonw_string(fp, r->g.path);
	fprintf(fp, ", \"opset\": %lld, \"dtype\": \"%s\", \"thresholds\": \"%s\",\n",
		(long long)r->g.opset, hw_dtype_name(r->o->dtype), thresholds_name(r));
	fprintf(fp, " \"hardware\": {\"name\": ");
	jsonw_string(fp, hw->name);
	fprintf(fp, ", ");
	json_double(fp, "peak_flops", hw->peak_flops[r->o->dtype]);
	fprintf(fp, ", ");
	json_double(fp, "vector_flops", hw->vector_flops);
	fprintf(fp, ", ");
	json_double(fp, "bandwidth", hw->bandwidth);
	fprintf(fp, ", ");
	json_double(fp, "l2_bytes", hw->l2_bytes);
	fprintf(fp, ", \"sms\": %lld, ", (long long)hw->sms);
	json_double(fp, "launch_overhead_s", hw->launch_s);
	fprintf(fp, ", ");
	json_double(fp, "ridge_point", ridge_point(r));
	fprintf(fp, "},\n");
	json_summary(fp, r);
	fprintf(fp, " \"ops\": [");
	for (size_t i = 0; i < r->g.nnodes; i++) {
		fprintf(fp, "%s\n", i ? "," : "");
		json_op(fp, r, r->order[i]);
	}
	fprintf(fp, "\n ],\n \"fusions\": [");
	for (size_t i = 0; i < r->nfusions; i++) {
		const struct fusion *f = &r->fusions[i];
		char pattern[160];
		gp_fusion_pattern(r, f, pattern, sizeof pattern);
		fprintf(fp, "%s\n  {\"pattern\": \"%s\", \"saved_bytes\": %lld, \"ops\": [",
			i ? "," : "", pattern, (long long)f->saved_bytes);
		for (size_t j = 0; j < f->nops; j++) {
			fprintf(fp, "%s", j ? ", " : "");
			jsonw_string(fp, r->g.nodes[f->ops[j]].name);
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, "%s]}\n", r->nfusions ? "\n " : "");
	return finish(fp);
}

/* ---- CSV ---- */

int gp_write_csv(const char *path, const struct gp_report *r, struct sp_err *err)
{
	static const char *const cols[] = {
		"name", "op_type", "class", "stage", "output_shape", "flops", "macs",
		"input_bytes", "output_bytes", "weight_bytes", "intensity", "threads", "groups",
		"depthwise", "bottleneck", "time_s", "critical"};
	struct csvw w;
	if (csvw_open(&w, path, cols, sizeof cols / sizeof cols[0], err))
		return -1;
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct om_node *n = &r->g.nodes[k];
		const struct gp_op *op = &r->ops[k];
		const struct op_cost *c = &op->cost;
		char shape[128];
		shape_text(first_output(r, n), shape, sizeof shape);
		csvw_str(&w, n->name);
		csvw_str(&w, n->op);
		csvw_str(&w, oc_class_name(c->cls));
		csvw_int(&w, r->stage[k]);
		csvw_str(&w, shape);
		csvw_int(&w, c->flops);
		csvw_int(&w, c->macs);
		csvw_int(&w, c->input_bytes);
		csvw_int(&w, c->output_bytes);
		csvw_int(&w, c->weight_bytes);
		csvw_double(&w, c->intensity, 6);
		csvw_int(&w, c->threads);
		csvw_int(&w, c->groups);
		csvw_int(&w, c->depthwise);
		csvw_str(&w, rl_class_name(op->roof.cls));
		csvw_double(&w, op->roof.time_s, 6);
		csvw_int(&w, op->critical);
		if (csvw_end_row(&w, err)) {
			csvw_abort(&w);
			return -1;
		}
	}
	return csvw_commit(&w, err);
}

/* ---- DOT ---- */

/* Fill colours by class; constant ops and views are grey. */
static const char *class_colour(enum rl_class c)
{
	static const char *const colours[RL_NCLASSES] = {
		[RL_NONE] = "#e0e0e0",    [RL_COMPUTE] = "#e4572e", [RL_MEMORY] = "#4e79a7",
		[RL_LATENCY] = "#f2c14e", [RL_BALANCED] = "#f28e2b", [RL_BANDWIDTH] = "#76b7b2"};
	return colours[c];
}

/* A DOT string's contents: quotes and backslashes escaped, control
 * characters dropped. */
static void dot_text(FILE *fp, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', fp);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, fp);
	}
}

/* "1.2 GFLOP", "340 kFLOP". */
static void flops_text(int64_t flops, char *buf, size_t size)
{
	static const char *const units[] = {"", "k", "M", "G", "T", "P"};
	double v = (double)flops;
	int u = 0;
	while (v >= 1000 && u < 5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, size, "%.3g %sFLOP", v, units[u]);
}

int gp_write_dot(FILE *fp, const struct gp_report *r)
{
	fprintf(fp, "digraph \"");
	dot_text(fp, r->g.path);
	fprintf(fp, "\" {\n  rankdir=TB;\n  newrank=true;\n"
		    "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
		    "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8, color=\"#606060\"];\n");
	/* the legend: one box per class of these thresholds */
	size_t ncls;
	const enum rl_class *cls = classes(r, &ncls);
	fprintf(fp, "  subgraph cluster_legend {\n    label=\"bottleneck (%s, %s)\";\n",
		thresholds_name(r), hw_dtype_name(r->o->dtype));
	for (size_t i = 0; i < ncls; i++)
		fprintf(fp, "    legend_%s [label=\"%s: %lld\", fillcolor=\"%s\"];\n",
			rl_class_name(cls[i]), rl_class_name(cls[i]),
			(long long)r->bottlenecks[cls[i]], class_colour(cls[i]));
	fprintf(fp, "  }\n");
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct om_node *n = &r->g.nodes[k];
		const struct gp_op *op = &r->ops[k];
		char shape[128], flops[32];
		shape_text(first_output(r, n), shape, sizeof shape);
		flops_text(op->cost.flops, flops, sizeof flops);
		fprintf(fp, "  n%zu [label=\"", k);
		dot_text(fp, n->name);
		fprintf(fp, "\\n");
		dot_text(fp, n->op);
		fprintf(fp, " %s\\n%s, %.2f us\", fillcolor=\"%s\"%s, tooltip=\"stage %lld, %s\"];\n",
			shape, flops, op->roof.time_s * 1e6, class_colour(op->roof.cls),
			op->critical ? ", penwidth=2.5" : "", (long long)r->stage[k],
			rl_class_name(op->roof.cls));
	}
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct om_node *n = &r->g.nodes[k];
		for (size_t j = 0; j < n->nin; j++) {
			size_t v = n->in[j];
			if (v == OM_NONE || r->g.values[v].producer == OM_NONE)
				continue;
			char shape[128];
			shape_text(&r->g.values[v], shape, sizeof shape);
			fprintf(fp, "  n%zu -> n%zu [label=\"%s\"];\n", r->g.values[v].producer, k,
				shape);
		}
	}
	/* the ops of one stage side by side: they can run concurrently */
	for (int64_t s = 0; s < r->stages.stages; s++) {
		fprintf(fp, "  { rank=same;");
		for (size_t i = r->stage_start[s]; i < r->stage_start[s + 1]; i++)
			fprintf(fp, " n%zu;", r->by_stage[i]);
		fprintf(fp, " }\n");
	}
	fprintf(fp, "}\n");
	return finish(fp);
}
