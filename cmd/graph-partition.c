/* graph-partition: per-operator FLOPs, MACs, bytes and arithmetic intensity
 * of an ONNX model, and the model's totals. Options are parsed here; the
 * work is lib/onnx_model.c, lib/shape_infer.c and lib/op_cost.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "cli.h"
#include "csvw.h"
#include "jsonw.h"
#include "num.h"
#include "onnx_model.h"
#include "op_cost.h"
#include "shape_infer.h"
#include "stages.h"
#include "timer.h"

static const char usage[] =
	"Usage: graph-partition [OPTION]... MODEL.onnx\n"
	"Infer the shapes of an ONNX model's operators and report, per operator, its\n"
	"FLOPs, MACs, input/output/weight bytes and arithmetic intensity, and the\n"
	"model's totals: FLOPs, FLOPs of convolutions and matrix products alone\n"
	"(matmul_flops, what torch's flop counter reports), MACs, parameters and\n"
	"memory traffic.\n"
	"\n"
	"  -f, --format FORMAT      table (default), json (a summary object and an ops\n"
	"                           array) or csv (one row per operator)\n"
	"  -b, --batch N            first dim of every model input, 1..2^31\n"
	"      --input-shape NAME=DIMS  dims of the input NAME, as 1x3x224x224\n"
	"                           (repeatable; wins over --batch for that input)\n"
	"      --dtype TYPE         bytes counted per element: fp32 (default), fp16,\n"
	"                           bf16 or int8\n"
	"      --allow-unknown      count an op without a shape rule as zero (a\n"
	"                           warning) instead of failing\n"
	"  -o, --output FILE        write the report to FILE instead of standard output\n"
	"  -q, --quiet              no warnings\n"
	"  -v, --verbose            timings on stderr\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Example:\n"
	"  graph-partition resnet18.onnx --batch 8 --format json -o resnet18.json\n";

enum format { FMT_TABLE, FMT_JSON, FMT_CSV };

struct options {
	const char *model, *output, *dtype;
	enum format format;
	int dtype_bytes;
	struct si_opts si;
	struct si_override *overrides;
};

static void add_override(struct options *o, const char *text)
{
	const char *eq = strchr(text, '=');
	if (!eq || eq == text)
		cli_usage_error("--input-shape: '%s' is not NAME=DIMS (like input=1x3x224x224)", text);
	struct si_override *ov = realloc(o->overrides, (o->si.noverrides + 1) * sizeof *ov);
	if (!ov)
		cli_die("out of memory");
	o->overrides = ov;
	ov = &ov[o->si.noverrides++];
	struct sp_err err;
	if (si_parse_dims(eq + 1, "--input-shape", &ov->ndim, ov->dims, &err))
		cli_usage_error("%s", err.msg);
	ov->name = strndup(text, (size_t)(eq - text));
	if (!ov->name)
		cli_die("out of memory");
	o->si.overrides = o->overrides;
}

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_INPUT_SHAPE = 256, OPT_DTYPE, OPT_ALLOW_UNKNOWN };
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"batch", required_argument, NULL, 'b'},
		{"input-shape", required_argument, NULL, OPT_INPUT_SHAPE},
		{"dtype", required_argument, NULL, OPT_DTYPE},
		{"allow-unknown", no_argument, NULL, OPT_ALLOW_UNKNOWN},
		{"output", required_argument, NULL, 'o'},
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {.dtype = "fp32", .dtype_bytes = 4};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:b:o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "table"))
				o.format = FMT_TABLE;
			else if (!strcmp(optarg, "json"))
				o.format = FMT_JSON;
			else if (!strcmp(optarg, "csv"))
				o.format = FMT_CSV;
			else
				cli_usage_error("--format: '%s' is not table, json or csv", optarg);
			break;
		case 'b': o.si.batch = cli_int("--batch", optarg, 1, INT64_C(1) << 31); break;
		case OPT_INPUT_SHAPE: add_override(&o, optarg); break;
		case OPT_DTYPE:
			o.dtype = optarg;
			o.dtype_bytes = oc_dtype_size(optarg);
			if (!o.dtype_bytes)
				cli_usage_error("--dtype: '%s' is not fp32, fp16, bf16 or int8", optarg);
			break;
		case OPT_ALLOW_UNKNOWN: o.si.allow_unknown = 1; break;
		case 'o': o.output = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc)
		o.model = argv[optind++];
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.model)
		cli_usage_error("no MODEL given");
	return o;
}

/* The analysed model: the graph in topological order, each op's cost. */
struct report {
	struct om_graph g;
	size_t *order;
	unsigned char *unknown, *is_param;
	struct op_cost *cost;
	int64_t *flops, *stage;
	struct oc_totals totals;
	struct stages_summary stages;
};

static void analyse(const struct options *o, struct report *r)
{
	struct sp_err err;
	double t0 = timer_now();
	if (om_load(o->model, &r->g, &err))
		cli_fatal(&err);
	size_t n = r->g.nnodes;
	r->order = malloc((n ? n : 1) * sizeof *r->order);
	r->unknown = calloc(n ? n : 1, 1);
	r->is_param = calloc(r->g.nvalues ? r->g.nvalues : 1, 1);
	r->cost = malloc((n ? n : 1) * sizeof *r->cost);
	r->flops = malloc((n ? n : 1) * sizeof *r->flops);
	r->stage = malloc((n ? n : 1) * sizeof *r->stage);
	if (!r->order || !r->unknown || !r->is_param || !r->cost || !r->flops || !r->stage)
		cli_die("%s: out of memory", o->model);
	double t1 = timer_now();
	if (shape_infer(&r->g, &o->si, r->order, r->unknown, &err))
		cli_fatal(&err);
	r->totals.params = oc_mark_params(&r->g, r->order, r->is_param);
	for (size_t i = 0; i < n; i++) {
		size_t k = r->order[i];
		if (r->unknown[k] && cli_verbosity > 0)
			cli_warn("%s: node '%s' (%s): no shape rule; counted as zero", o->model,
				 r->g.nodes[k].name, r->g.nodes[k].op);
		op_cost(&r->g, k, r->unknown[k], r->is_param, o->dtype_bytes, &r->cost[k]);
		oc_accumulate(&r->totals, &r->cost[k]);
		r->flops[k] = r->cost[k].flops;
	}
	if (stages_compute(&r->g, r->order, r->flops, r->stage, &r->stages, &err))
		cli_fatal(&err);
	cli_log(2, "load: %.3f s, shapes and costs: %.3f s", t1 - t0, timer_now() - t1);
}

static void shape_text(const struct om_graph *g, const struct om_node *n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	const struct om_value *y = n->nout && n->out[0] != OM_NONE ? &g->values[n->out[0]] : NULL;
	if (!y || y->ndim < 0)
		return;
	for (int d = 0; d < y->ndim && len + 24 < size; d++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "x" : "",
					(long long)y->dims[d]);
}

static void write_json(FILE *fp, const struct options *o, const struct report *r)
{
	const struct oc_totals *t = &r->totals;
	char num[NUM_DOUBLE_MAX];
	size_t nunknown = 0;
	for (size_t i = 0; i < r->g.nnodes; i++)
		nunknown += r->unknown[i];
	fprintf(fp, "{\"model\": ");
	jsonw_string(fp, o->model);
	fprintf(fp, ", \"opset\": %lld, \"dtype\": \"%s\",\n", (long long)r->g.opset, o->dtype);
	fprintf(fp, " \"summary\": {\"ops\": %zu, \"unknown_ops\": %zu, \"total_flops\": %lld, "
		    "\"matmul_flops\": %lld, \"macs\": %lld, \"params\": %lld, "
		    "\"memory_bytes\": %lld, \"stages\": %lld, \"max_parallel_ops\": %lld, "
		    "\"critical_path_ops\": %lld, \"critical_path_flops\": %lld},\n \"ops\": [",
		r->g.nnodes, nunknown, (long long)t->total_flops, (long long)t->matmul_flops,
		(long long)t->macs, (long long)t->params, (long long)t->memory_bytes,
		(long long)r->stages.stages, (long long)r->stages.max_parallel_ops,
		(long long)r->stages.critical_path_ops, (long long)r->stages.critical_path_flops);
	for (size_t i = 0; i < r->g.nnodes; i++) {
		const struct om_node *n = &r->g.nodes[r->order[i]];
		const struct op_cost *c = &r->cost[r->order[i]];
		const struct om_value *y = n->nout && n->out[0] != OM_NONE ? &r->g.values[n->out[0]]
									   : NULL;
		fprintf(fp, "%s\n  {\"name\": ", i ? "," : "");
		jsonw_string(fp, n->name);
		fprintf(fp, ", \"op_type\": ");
		jsonw_string(fp, n->op);
		fprintf(fp, ", \"class\": \"%s\", \"stage\": %lld, \"output_shape\": [",
			oc_class_name(c->cls), (long long)r->stage[r->order[i]]);
		for (int d = 0; y && d < y->ndim; d++)
			fprintf(fp, "%s%lld", d ? ", " : "", (long long)y->dims[d]);
		fprintf(fp, "], \"flops\": %lld, \"macs\": %lld, \"input_bytes\": %lld, "
			    "\"output_bytes\": %lld, \"weight_bytes\": %lld, \"intensity\": %s}",
			(long long)c->flops, (long long)c->macs, (long long)c->input_bytes,
			(long long)c->output_bytes, (long long)c->weight_bytes,
			num_format_double(num, c->intensity, 6));
	}
	fprintf(fp, "\n ]}\n");
}

static void write_table(FILE *fp, const struct options *o, const struct report *r)
{
	const struct oc_totals *t = &r->totals;
	fprintf(fp, "%-40s %-20s %-14s %5s %-18s %15s %15s %13s %13s %13s %9s\n", "name",
		"op_type", "class", "stage", "output_shape", "flops", "macs", "input_bytes", "output_bytes",
		"weight_bytes", "intensity");
	for (size_t i = 0; i < r->g.nnodes; i++) {
		const struct om_node *n = &r->g.nodes[r->order[i]];
		const struct op_cost *c = &r->cost[r->order[i]];
		char shape[128];
		shape_text(&r->g, n, shape, sizeof shape);
		fprintf(fp, "%-40s %-20s %-14s %5lld %-18s %15lld %15lld %13lld %13lld %13lld %9.3f\n",
			n->name, n->op, oc_class_name(c->cls), (long long)r->stage[r->order[i]], shape,
			(long long)c->flops,
			(long long)c->macs, (long long)c->input_bytes, (long long)c->output_bytes,
			(long long)c->weight_bytes, c->intensity);
	}
	fprintf(fp, "\nmodel         %s\nops           %zu\ndtype         %s\n", o->model,
		r->g.nnodes, o->dtype);
	fprintf(fp, "total_flops   %lld\nmatmul_flops  %lld\nmacs          %lld\n"
		    "params        %lld\nmemory_bytes  %lld\n",
		(long long)t->total_flops, (long long)t->matmul_flops, (long long)t->macs,
		(long long)t->params, (long long)t->memory_bytes);
	fprintf(fp, "stages               %lld\nmax_parallel_ops     %lld\n"
		    "critical_path_ops    %lld\ncritical_path_flops  %lld\n",
		(long long)r->stages.stages, (long long)r->stages.max_parallel_ops,
		(long long)r->stages.critical_path_ops, (long long)r->stages.critical_path_flops);
}

static void write_csv(const struct options *o, const struct report *r)
{
	static const char *const cols[] = {"name", "op_type", "class", "stage", "output_shape", "flops",
					   "macs", "input_bytes", "output_bytes", "weight_bytes",
					   "intensity"};
	struct csvw w;
	struct sp_err err;
	if (csvw_open(&w, o->output ? o->output : "-", cols, sizeof cols / sizeof cols[0], &err))
		cli_fatal(&err);
	for (size_t i = 0; i < r->g.nnodes; i++) {
		const struct om_node *n = &r->g.nodes[r->order[i]];
		const struct op_cost *c = &r->cost[r->order[i]];
		char shape[128];
		shape_text(&r->g, n, shape, sizeof shape);
		csvw_str(&w, n->name);
		csvw_str(&w, n->op);
		csvw_str(&w, oc_class_name(c->cls));
		csvw_int(&w, r->stage[r->order[i]]);
		csvw_str(&w, shape);
		csvw_int(&w, c->flops);
		csvw_int(&w, c->macs);
		csvw_int(&w, c->input_bytes);
		csvw_int(&w, c->output_bytes);
		csvw_int(&w, c->weight_bytes);
		csvw_double(&w, c->intensity, 6);
		if (csvw_end_row(&w, &err)) {
			csvw_abort(&w);
			cli_fatal(&err);
		}
	}
	if (csvw_commit(&w, &err))
		cli_fatal(&err);
}

static void write_report(const struct options *o, const struct report *r)
{
	if (o->format == FMT_CSV) {
		write_csv(o, r);
		return;
	}
	struct afile af;
	struct sp_err err;
	FILE *fp = stdout;
	if (o->output) {
		if (afile_open(&af, o->output, &err))
			cli_fatal(&err);
		fp = af.fp;
	}
	if (o->format == FMT_JSON)
		write_json(fp, o, r);
	else
		write_table(fp, o, r);
	if (o->output ? afile_commit(&af, &err) : fflush(stdout) || ferror(stdout)) {
		if (!o->output)
			cli_die("stdout: write error");
		cli_fatal(&err);
	}
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct report r = {0};
	analyse(&o, &r);
	write_report(&o, &r);
	om_free(&r.g);
	free(r.order);
	free(r.unknown);
	free(r.is_param);
	free(r.cost);
	free(r.flops);
	free(r.stage);
	for (size_t i = 0; i < o.si.noverrides; i++)
		free((char *)o.overrides[i].name);
	free(o.overrides);
	return 0;
}
