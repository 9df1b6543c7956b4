/* graph-partition's report: a table, JSON, CSV or Graphviz DOT (partition.h).
 * Each format is written to a path ("-": standard output) atomically, its
 * errors returned as messages. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/outfile.h"
#include "formats/csv_writer.h"
#include "formats/json_writer.h"
#include "core/num.h"
#include "core/text_out.h"
#include "partition/partition.h"

static const char *thresholds_name(const struct partition_report *r)
{
	return roofline_thresholds_names[r->o->thresholds];
}

static const struct opgraph_value *first_output(const struct partition_report *r,
						const struct opgraph_node *n)
{
	return n->nout && n->out[0] != OPGRAPH_NONE && r->g.values[n->out[0]].ndim >= 0
		       ? &r->g.values[n->out[0]]
		       : NULL;
}

static size_t i64_text(char *buf, int64_t v);

/* "1x64x56x56"; empty for an unknown shape, a scalar too. */
static void shape_text(const struct opgraph_value *y, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int d = 0; y && d < y->ndim && len + 24 < size; d++) {
		if (d)
			buf[len++] = 'x';
		len += i64_text(buf + len, y->dims[d]);
	}
}

static double ridge_point(const struct partition_report *r)
{
	return r->o->hw.peak_flops[r->o->dtype] / r->o->hw.bandwidth;
}

/* Whether the table and DOT list node k: constant ops only with --all-ops. */
static int listed(const struct partition_report *r, size_t k)
{
	return r->stage[k] >= 0 || r->o->all_ops;
}

static int finish(FILE *fp)
{
	return fflush(fp) || ferror(fp) ? -1 : 0;
}

/* A distribution: " a 3, b 4" in the table, "\"a\": 3, \"b\": 4" in JSON. */
static void put_counts(FILE *fp, int json, const struct partition_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : json ? "" : " ", fp);
		if (json) {
			json_writer_string(fp, c[i].name);
			fprintf(fp, ": %lld", (long long)c[i].count);
		} else {
			text_put(fp, c[i].name, 0);
			fprintf(fp, " %lld", (long long)c[i].count);
		}
	}
}

/* A report line is built in memory and written at once: printf per field
 * costs more than the whole analysis of a 100,000-op model. Out of memory,
 * the line is cut and the writer fails. */
struct line {
	struct buf b;
	int oom;
};

static void l_add(struct line *l, const char *s, size_t n)
{
	if (!n) /* an empty name first on a line: no buffer yet, no pointer arithmetic on it */
		return;
	if (l->b.len + n <= l->b.cap) { /* the common case, without a call */
		memcpy(l->b.data + l->b.len, s, n);
		l->b.len += n;
		return;
	}
	l->oom |= buf_add(&l->b, s, n) != 0;
}

static void l_str(struct line *l, const char *s)
{
	l_add(l, s, strlen(s));
}

static void l_spaces(struct line *l, size_t n)
{
	static const char spaces[] = "                                        "; /* 40 */
	for (; n > 40; n -= 40)
		l_add(l, spaces, 40);
	l_add(l, spaces, n);
}

/* s padded with spaces to width (left-aligned), then one space; each
 * character as text_put writes it (a node's name is the model's text). */
static void l_left(struct line *l, const char *s, size_t width)
{
	size_t n = 0;
	char out[4];
	for (const char *p = s, *next; *p; p = next) {
		const size_t k = sp_quote_char(p, out, &next);
		l_add(l, out, k);
		n += k;
	}
	l_spaces(l, n < width ? width - n + 1 : 1);
}

static size_t i64_text(char *buf, int64_t v)
{
	char tmp[24];
	size_t n = 0, len = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[len++] = '-';
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

static void l_int(struct line *l, int64_t v)
{
	char t[24];
	l_add(l, t, i64_text(t, v));
}

/* s right-aligned in width, then one space. */
static void l_right(struct line *l, const char *s, size_t width)
{
	size_t n = strlen(s);
	l_spaces(l, n < width ? width - n : 0);
	l_add(l, s, n);
	l_add(l, " ", 1);
}

/* v with 3 decimals ("%.3f") right-aligned in width, then one space. */
static void l_fixed3_right(struct line *l, double v, size_t width)
{
	char t[48];
	if (!(fabs(v) < 9e15)) {
		snprintf(t, sizeof t, "%.3f", v);
	} else {
		int64_t m = llround(fabs(v) * 1000);
		size_t n = v < 0 && m ? (t[0] = '-', 1) : 0;
		n += i64_text(t + n, m / 1000);
		t[n++] = '.';
		for (int64_t d = 100; d; d /= 10)
			t[n++] = (char)('0' + m / d % 10);
		t[n] = '\0';
	}
	l_right(l, t, width);
}

static void l_int_right(struct line *l, int64_t v, size_t width)
{
	char t[24];
	i64_text(t, v);
	l_right(l, t, width);
}

/* A JSON string: quote, backslash and control characters escaped. */
static void l_json_string(struct line *l, const char *s)
{
	l_add(l, "\"", 1);
	for (;;) {
		size_t run = 0; /* the bytes that need no escape, added at once */
		while (s[run] && s[run] != '"' && s[run] != '\\' && (unsigned char)s[run] >= 0x20)
			run++;
		l_add(l, s, run);
		s += run;
		if (!*s)
			break;
		char esc[8];
		if (*s == '"' || *s == '\\')
			snprintf(esc, sizeof esc, "\\%c", *s);
		else
			snprintf(esc, sizeof esc, "\\u%04x", (unsigned char)*s);
		l_str(l, esc);
		s++;
	}
	l_add(l, "\"", 1);
}

/* Write the line and start the next. */
static void l_flush(struct line *l, FILE *fp)
{
	if (l->b.len) /* an empty buf has no data, and fwrite takes none */
		fwrite(l->b.data, 1, l->b.len, fp);
	l->b.len = 0;
}

/* The writer's result: -1 when a line was cut or the stream failed. */
static int l_done(struct line *l, FILE *fp)
{
	l_flush(l, fp);
	buf_free(&l->b);
	return finish(fp) || l->oom ? -1 : 0;
}

int partition_write_stream(const char *path, int (*body)(FILE *fp, const void *ctx),
			   const void *ctx, struct sp_err *err)
{
	if (!strcmp(path, "-"))
		return body(stdout, ctx) ? sp_fail(err, "stdout: write error") : 0;
	struct outfile f;
	if (outfile_open(&f, path, err))
		return -1;
	if (body(f.fp, ctx)) {
		outfile_abort(&f);
		return sp_fail(err, "%s: write error", path);
	}
	return outfile_commit(&f, err);
}

/* ---- table ---- */

static int table_body(FILE *fp, const void *ctx)
{
	const struct partition_report *r = ctx;
	const struct op_cost_totals *t = &r->totals;
	const struct hardware_spec *hw = &r->o->hw;
	fprintf(fp, "%-40s %-20s %-13s %5s %-18s %15s %15s %13s %13s %13s %9s %10s %-5s %-15s "
		    "%10s\n",
		"name", "op_type", "class", "stage", "output_shape", "flops", "macs", "input_bytes",
		"output_bytes", "weight_bytes", "intensity", "threads", "conv", "bottleneck",
		"time_us");
	struct line l = {0};
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct opgraph_node *n = &r->g.nodes[k];
		const struct partition_op *op = &r->ops[k];
		const struct op_cost *c = &op->cost;
		char shape[128], conv[24] = "";
		if (!listed(r, k))
			continue;
		shape_text(first_output(r, n), shape, sizeof shape);
		if (c->depthwise)
			snprintf(conv, sizeof conv, "dw");
		else if (c->groups > 1)
			snprintf(conv, sizeof conv, "g%lld", (long long)c->groups);
		l_left(&l, n->name, 40);
		l_left(&l, n->op, 20);
		l_left(&l, op_cost_class_name(c->cls), 13);
		l_int_right(&l, r->stage[k], 5);
		l_left(&l, shape, 18);
		l_int_right(&l, c->flops, 15);
		l_int_right(&l, c->macs, 15);
		l_int_right(&l, c->input_bytes, 13);
		l_int_right(&l, c->output_bytes, 13);
		l_int_right(&l, c->weight_bytes, 13);
		l_fixed3_right(&l, c->intensity, 9);
		l_int_right(&l, c->threads, 10);
		l_left(&l, conv, 5);
		l_left(&l, roofline_class_name(op->roof.cls), 15);
		l_fixed3_right(&l, op->roof.time_s * 1e6, 10);
		if (l.b.len)
			l.b.data[l.b.len - 1] = '\n'; /* the last column's space */
		if (l.b.len > 1 << 16)
			l_flush(&l, fp);
	}
	l_flush(&l, fp);
	fputs("\nmodel         ", fp);
	text_put(fp, r->g.path, 0);
	fprintf(fp, "\nops           %zu\nconstant_ops  %lld%s\nkernels       %lld\n"
		    "dtype         %s\n",
		r->g.nnodes, (long long)r->constant_ops,
		r->constant_ops && !r->o->all_ops ? " (not listed above; --all-ops lists them)" : "",
		(long long)r->kernels, hardware_dtype_name(r->o->dtype));
	fprintf(fp, "total_flops   %lld\nmatmul_flops  %lld\nmacs          %lld\n"
		    "params        %lld\nmemory_bytes  %lld\n",
		(long long)t->total_flops, (long long)t->matmul_flops, (long long)t->macs,
		(long long)t->params, (long long)t->memory_bytes);
	fprintf(fp, "stages               %lld\nmax_parallel_ops     %lld\n"
		    "critical_path_ops    %lld\ncritical_path_flops  %lld\n",
		(long long)r->stages.stages, (long long)r->stages.max_parallel_ops,
		(long long)r->stages.critical_path_ops, (long long)r->critical_path_flops);
	fputs("hardware             ", fp);
	text_put(fp, hw->name, 0);
	fprintf(fp,
		" (ridge point %.1f FLOP/byte for matrix products at "
		"%s, %.1f for other ops; thresholds %s)\n",
		ridge_point(r), hardware_dtype_name(r->o->dtype),
		hw->vector_flops / hw->bandwidth, thresholds_name(r));
	fprintf(fp, "roofline_time_us     %.3f\ncritical_path_time_us %.3f\n",
		r->roofline_time_s * 1e6, r->critical_path_time_s * 1e6);
	fprintf(fp, "op_types            ");
	put_counts(fp, 0, r->op_types, r->nop_types);
	fprintf(fp, "\nbottlenecks         ");
	put_counts(fp, 0, r->bottlenecks, r->nbottlenecks);
	fprintf(fp, "\nthreads_per_kernel   %.0f on average;", r->avg_threads);
	put_counts(fp, 0, r->threads, PARTITION_THREAD_BUCKETS);
	fprintf(fp, "\nconv_groups          depthwise %lld, grouped %lld\n",
		(long long)r->depthwise_ops, (long long)r->grouped_ops);
	fprintf(fp, "fusion_candidates    %zu\n", r->nfusions);
	for (size_t i = 0; i < r->nfusions; i++) {
		const struct fusion *f = &r->fusions[i];
		char pattern[160];
		partition_fusion_pattern(r, f, pattern, sizeof pattern);
		fputs("  ", fp);
		text_put(fp, pattern, -36);
		fprintf(fp, " saves %12lld bytes:", (long long)f->saved_bytes);
		for (size_t j = 0; j < f->nops; j++) {
			fputc(' ', fp);
			text_put(fp, r->g.nodes[f->ops[j]].name, 0);
		}
		fputc('\n', fp);
	}
	return l_done(&l, fp);
}

/* ---- JSON ---- */

static void json_double(FILE *fp, const char *key, double v)
{
	char num[NUM_DOUBLE_MAX];
	fprintf(fp, "\"%s\": %s", key, json_writer_number_text(num, v));
}

static void json_summary(FILE *fp, const struct partition_report *r)
{
	const struct op_cost_totals *t = &r->totals;
	fprintf(fp, " \"summary\": {\"ops\": %zu, \"kernels\": %lld, \"unknown_ops\": %lld, "
		    "\"total_flops\": %lld, \"matmul_flops\": %lld, \"macs\": %lld, "
		    "\"params\": %lld, \"memory_bytes\": %lld, \"constant_ops\": %lld, "
		    "\"stages\": %lld, \"max_parallel_ops\": %lld, \"critical_path_ops\": %lld, "
		    "\"critical_path_flops\": %lld,\n  \"critical_path\": [",
		r->g.nnodes, (long long)r->kernels, (long long)r->unknown_ops,
		(long long)t->total_flops, (long long)t->matmul_flops, (long long)t->macs,
		(long long)t->params, (long long)t->memory_bytes, (long long)r->constant_ops,
		(long long)r->stages.stages,
		(long long)r->stages.max_parallel_ops, (long long)r->stages.critical_path_ops,
		(long long)r->critical_path_flops);
	int first = 1;
	for (size_t i = 0; i < r->g.nnodes; i++)
		if (r->ops[r->order[i]].critical) {
			fprintf(fp, "%s", first ? "" : ", ");
			json_writer_string(fp, r->g.nodes[r->order[i]].name);
			first = 0;
		}
	fprintf(fp, "],\n  ");
	json_double(fp, "roofline_time_us", r->roofline_time_s * 1e6);
	fprintf(fp, ", ");
	json_double(fp, "critical_path_time_us", r->critical_path_time_s * 1e6);
	fprintf(fp, ", \"depthwise_ops\": %lld, \"grouped_ops\": %lld, ",
		(long long)r->depthwise_ops, (long long)r->grouped_ops);
	json_double(fp, "avg_threads", r->avg_threads);
	fprintf(fp, ",\n  \"parallelism\": {");
	put_counts(fp, 1, r->threads, PARTITION_THREAD_BUCKETS);
	fprintf(fp, "},\n  \"op_types\": {");
	put_counts(fp, 1, r->op_types, r->nop_types);
	fprintf(fp, "},\n  \"bottlenecks\": {");
	put_counts(fp, 1, r->bottlenecks, r->nbottlenecks);
	fprintf(fp, "}, \"fusion_candidates\": %zu},\n", r->nfusions);
}

static void l_json_double(struct line *l, double v)
{
	char num[NUM_DOUBLE_MAX];
	l_str(l, json_writer_number_text(num, v));
}

static void json_op(struct line *l, const struct partition_report *r, size_t k)
{
	const struct opgraph_node *n = &r->g.nodes[k];
	const struct partition_op *op = &r->ops[k];
	const struct op_cost *c = &op->cost;
	const struct opgraph_value *y = first_output(r, n);
	l_str(l, "  {\"name\": ");
	l_json_string(l, n->name);
	l_str(l, ", \"op_type\": ");
	l_json_string(l, n->op);
	l_str(l, ", \"class\": \"");
	l_str(l, op_cost_class_name(c->cls));
	l_str(l, "\", \"stage\": ");
	l_int(l, r->stage[k]);
	l_str(l, ", \"output_shape\": [");
	for (int d = 0; y && d < y->ndim; d++) {
		l_str(l, d ? ", " : "");
		l_int(l, y->dims[d]);
	}
	static const char *const keys[] = {"], \"flops\": ", ", \"macs\": ",
					   ", \"input_bytes\": ", ", \"output_bytes\": ",
					   ", \"weight_bytes\": ", ",\n   \"threads\": ",
					   ", \"groups\": "};
	const int64_t vals[] = {c->flops,	 c->macs,    c->input_bytes, c->output_bytes,
				c->weight_bytes, c->threads, c->groups};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		l_str(l, keys[i]);
		l_int(l, vals[i]);
	}
	l_str(l, ", \"intensity\": ");
	l_json_double(l, c->intensity);
	l_str(l, c->kernel ? ", \"kernel\": true" : ", \"kernel\": false");
	l_str(l, c->depthwise ? ", \"depthwise\": true" : ", \"depthwise\": false");
	l_str(l, c->groups > 1 && !c->depthwise ? ", \"grouped\": true" : ", \"grouped\": false");
	l_str(l, ", \"bottleneck\": \"");
	l_str(l, roofline_class_name(op->roof.cls));
	l_str(l, "\", \"time_us\": ");
	l_json_double(l, op->roof.time_s * 1e6);
	l_str(l, op->critical ? ", \"critical\": true" : ", \"critical\": false");
	for (int side = 0; side < 2; side++) { /* the tensors it reads and writes */
		const size_t *v = side ? n->out : n->in, count = side ? n->nout : n->nin;
		l_str(l, side ? ", \"outputs\": [" : ",\n   \"inputs\": [");
		for (size_t i = 0; i < count; i++) {
			l_str(l, i ? ", " : "");
			l_json_string(l, v[i] == OPGRAPH_NONE ? "" : r->g.values[v[i]].name);
		}
		l_str(l, "]");
	}
	l_str(l, "}");
}

static int json_body(FILE *fp, const void *ctx)
{
	const struct partition_report *r = ctx;
	const struct hardware_spec *hw = &r->o->hw;
	fprintf(fp, "{\"model\": ");
	json_writer_string(fp, r->g.path);
	fprintf(fp, ", \"opset\": %lld, \"dtype\": \"%s\", \"thresholds\": \"%s\",\n",
		(long long)r->g.opset, hardware_dtype_name(r->o->dtype), thresholds_name(r));
	fprintf(fp, " \"hardware\": {\"name\": ");
	json_writer_string(fp, hw->name);
	fprintf(fp, ", ");
	json_double(fp, "peak_flops", hw->peak_flops[r->o->dtype]);
	fprintf(fp, ", ");
	json_double(fp, "vector_flops", hw->vector_flops);
	fprintf(fp, ", ");
	json_double(fp, "bandwidth", hw->bandwidth);
	fprintf(fp, ", ");
	json_double(fp, "l2_bytes", hw->l2_bytes);
	fprintf(fp, ", \"sms\": %lld, ", (long long)hw->sms);
	json_double(fp, "launch_overhead_us", hw->launch_s * 1e6);
	fprintf(fp, ", ");
	json_double(fp, "ridge_point", ridge_point(r));
	fprintf(fp, "},\n");
	json_summary(fp, r);
	fprintf(fp, " \"ops\": [");
	struct line l = {0};
	for (size_t i = 0; i < r->g.nnodes; i++) {
		l_str(&l, i ? ",\n" : "\n");
		json_op(&l, r, r->order[i]);
		if (l.b.len > 1 << 16)
			l_flush(&l, fp);
	}
	l_flush(&l, fp);
	fprintf(fp, "\n ],\n \"fusions\": [");
	for (size_t i = 0; i < r->nfusions; i++) {
		const struct fusion *f = &r->fusions[i];
		char pattern[160];
		partition_fusion_pattern(r, f, pattern, sizeof pattern);
		fprintf(fp, "%s\n  {\"pattern\": \"%s\", \"saved_bytes\": %lld, \"ops\": [",
			i ? "," : "", pattern, (long long)f->saved_bytes);
		for (size_t j = 0; j < f->nops; j++) {
			fprintf(fp, "%s", j ? ", " : "");
			json_writer_string(fp, r->g.nodes[f->ops[j]].name);
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, "%s]}\n", r->nfusions ? "\n " : "");
	return l_done(&l, fp);
}

/* ---- CSV ---- */

static int write_csv(const char *path, const struct partition_report *r, struct sp_err *err)
{
	static const char *const cols[] = {
		"name", "op_type", "class", "stage", "output_shape", "flops", "macs",
		"input_bytes", "output_bytes", "weight_bytes", "intensity", "threads", "groups",
		"depthwise", "bottleneck", "time_us", "critical"};
	struct csv_writer w;
	if (csv_writer_open(&w, path, cols, sizeof cols / sizeof cols[0], err))
		return -1;
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct opgraph_node *n = &r->g.nodes[k];
		const struct partition_op *op = &r->ops[k];
		const struct op_cost *c = &op->cost;
		char shape[128];
		shape_text(first_output(r, n), shape, sizeof shape);
		csv_writer_str(&w, n->name);
		csv_writer_str(&w, n->op);
		csv_writer_str(&w, op_cost_class_name(c->cls));
		csv_writer_int(&w, r->stage[k]);
		csv_writer_str(&w, shape);
		csv_writer_int(&w, c->flops);
		csv_writer_int(&w, c->macs);
		csv_writer_int(&w, c->input_bytes);
		csv_writer_int(&w, c->output_bytes);
		csv_writer_int(&w, c->weight_bytes);
		csv_writer_double(&w, c->intensity, 0);
		csv_writer_int(&w, c->threads);
		csv_writer_int(&w, c->groups);
		csv_writer_int(&w, c->depthwise);
		csv_writer_str(&w, roofline_class_name(op->roof.cls));
		csv_writer_double(&w, op->roof.time_s * 1e6, 0);
		csv_writer_int(&w, op->critical);
		if (csv_writer_end_row(&w, err)) {
			csv_writer_abort(&w);
			return -1;
		}
	}
	return csv_writer_commit(&w, err);
}

/* ---- DOT ---- */

/* Fill colours by class; constant ops and views are grey. */
static const char *class_colour(enum roofline_class c)
{
	static const char *const colours[ROOFLINE_NCLASSES] =
		{[ROOFLINE_NONE] = "#e0e0e0",     [ROOFLINE_COMPUTE] = "#e4572e",
		 [ROOFLINE_MEMORY] = "#4e79a7",   [ROOFLINE_LATENCY] = "#f2c14e",
		 [ROOFLINE_BALANCED] = "#f28e2b", [ROOFLINE_BANDWIDTH] = "#76b7b2"};
	return colours[c];
}

/* A DOT string's contents: quotes and backslashes escaped, control
 * characters dropped. */
static void l_dot_text(struct line *l, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			l_add(l, "\\", 1);
		if ((unsigned char)*s >= 0x20)
			l_add(l, s, 1);
	}
}

/* "n12" */
static void l_node_id(struct line *l, size_t k)
{
	l_add(l, "n", 1);
	l_int(l, (int64_t)k);
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

static int dot_body(FILE *fp, const void *ctx)
{
	const struct partition_report *r = ctx;
	struct line l = {0};
	l_str(&l, "digraph \"");
	l_dot_text(&l, r->g.path);
	l_str(&l, "\" {\n  rankdir=TB;\n  newrank=true;\n"
		  "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
		  "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8, color=\"#606060\"];\n");
	l_flush(&l, fp);
	/* the legend: one box per class of these thresholds */
	fprintf(fp, "  subgraph cluster_legend {\n    label=\"bottleneck (%s, %s)\";\n",
		thresholds_name(r), hardware_dtype_name(r->o->dtype));
	for (size_t i = 0; i < r->nbottlenecks; i++)
		fprintf(fp, "    legend_%s [label=\"%s: %lld\", fillcolor=\"%s\"];\n",
			r->bottlenecks[i].name, r->bottlenecks[i].name,
			(long long)r->bottlenecks[i].count,
			class_colour((enum roofline_class)r->bottlenecks[i].id));
	fprintf(fp, "  }\n");
	for (size_t i = 0; i < r->g.nnodes; i++) {
		size_t k = r->order[i];
		const struct opgraph_node *n = &r->g.nodes[k];
		const struct partition_op *op = &r->ops[k];
		char shape[128], text[96];
		if (!listed(r, k))
			continue;
		shape_text(first_output(r, n), shape, sizeof shape);
		l_str(&l, "  ");
		l_node_id(&l, k);
		l_str(&l, " [label=\"");
		l_dot_text(&l, n->name);
		l_str(&l, "\\n");
		l_dot_text(&l, n->op);
		l_str(&l, " ");
		l_str(&l, shape);
		l_str(&l, "\\n");
		flops_text(op->cost.flops, text, sizeof text);
		l_str(&l, text);
		snprintf(text, sizeof text, ", %.2f us\", fillcolor=\"%s\"%s, tooltip=\"stage ",
			 op->roof.time_s * 1e6, class_colour(op->roof.cls),
			 op->critical ? ", penwidth=2.5" : "");
		l_str(&l, text);
		l_int(&l, r->stage[k]);
		l_str(&l, ", ");
		l_str(&l, roofline_class_name(op->roof.cls));
		l_str(&l, "\"];\n");
		for (size_t j = 0; j < n->nin; j++) { /* the edges into it, with the tensor's shape */
			size_t v = n->in[j];
			if (v == OPGRAPH_NONE || r->g.values[v].producer == OPGRAPH_NONE ||
			    !listed(r, r->g.values[v].producer))
				continue;
			shape_text(&r->g.values[v], shape, sizeof shape);
			l_str(&l, "  ");
			l_node_id(&l, r->g.values[v].producer);
			l_str(&l, " -> ");
			l_node_id(&l, k);
			l_str(&l, " [label=\"");
			l_str(&l, shape);
			l_str(&l, "\"];\n");
		}
		if (l.b.len > 1 << 16)
			l_flush(&l, fp);
	}
	/* the ops of one stage side by side: they can run concurrently */
	for (int64_t s = 0; s < r->stages.stages; s++) {
		l_str(&l, "  { rank=same;");
		for (size_t i = r->stage_start[s]; i < r->stage_start[s + 1]; i++) {
			l_str(&l, " ");
			l_node_id(&l, r->by_stage[i]);
			l_str(&l, ";");
		}
		l_str(&l, " }\n");
		if (l.b.len > 1 << 16)
			l_flush(&l, fp);
	}
	l_str(&l, "}\n");
	return l_done(&l, fp);
}

static int write_table(const char *path, const struct partition_report *r, struct sp_err *err)
{
	return partition_write_stream(path, table_body, r, err);
}

static int write_json(const char *path, const struct partition_report *r, struct sp_err *err)
{
	return partition_write_stream(path, json_body, r, err);
}

static int write_dot(const char *path, const struct partition_report *r, struct sp_err *err)
{
	return partition_write_stream(path, dot_body, r, err);
}

const char *const partition_format_names[PARTITION_NFORMATS + 1] = {
	[PARTITION_TABLE] = "table", [PARTITION_JSON] = "json", [PARTITION_CSV] = "csv",
	[PARTITION_DOT] = "dot",     [PARTITION_NFORMATS] = NULL,
};

int partition_write(const char *path, enum partition_format format,
		    const struct partition_report *r, struct sp_err *err)
{
	static int (*const writers[PARTITION_NFORMATS])(const char *, const struct partition_report *,
							  struct sp_err *) = {
		[PARTITION_TABLE] = write_table, [PARTITION_JSON] = write_json,
		[PARTITION_CSV] = write_csv, [PARTITION_DOT] = write_dot,
	};
	return writers[format](path, r, err);
}
