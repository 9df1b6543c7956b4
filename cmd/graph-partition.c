/* graph-partition: every operator of an ONNX or YAML model as a subgraph
 * (a kernel): FLOPs, bytes, intensity, parallelism, stage, roofline time
 * and bottleneck on a GPU, and the model's totals, concurrency, critical
 * paths and fusion candidates. Options are parsed here; the work is
 * lib/partition.c and the modules it calls. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/outfile.h"
#include "common/cli.h"
#include "partition/partition.h"
#include "core/timer.h"

static const char usage[] =
	"Usage: graph-partition [OPTION]... MODEL\n"
	"Analyse an ONNX model (MODEL.onnx) or a YAML model (MODEL.yaml or .yml, the\n"
	"format of the man page) operator by operator: shape, FLOPs, MACs, bytes,\n"
	"arithmetic intensity, thread-level parallelism, grouped and depthwise\n"
	"convolutions, stage, roofline time and bottleneck on a GPU; and the model:\n"
	"totals (FLOPs; matmul_flops, what torch's flop counter reports; MACs;\n"
	"parameters; memory traffic), op-type and bottleneck distributions, stages,\n"
	"max parallel ops, critical paths by count, FLOPs and time, fusion candidates.\n"
	"\n"
	"  -f, --format FORMAT      table (default), json (summary, ops, fusions), csv\n"
	"                           (one row per operator) or dot (Graphviz, coloured\n"
	"                           by bottleneck, one rank per stage)\n"
	"  -b, --batch N            first dim of every model input, 1..2^31\n"
	"      --input-shape NAME=DIMS  dims of the input NAME, as 1x3x224x224\n"
	"                           (repeatable; wins over --batch for that input)\n"
	"      --dtype TYPE         fp32 (default), tf32 (fp32 data, TF32 matrix\n"
	"                           units), fp16, bf16 or int8: the bytes per element\n"
	"                           and the matrix peak the roofline takes\n"
	"      --hardware FILE      the GPU, a YAML file like configs/hardware/h200.yaml\n"
	"                           (default: a built-in H200 with that file's numbers)\n"
	"      --thresholds KIND    ridge (default: compute_bound, memory_bound or\n"
	"                           latency_bound against the GPU's ridge point) or\n"
	"                           seed (seed 003's fixed intensity cut-offs)\n"
	"      --allow-unknown      count an op without a shape rule as zero (a\n"
	"                           warning) instead of failing\n"
	"  -o, --output FILE        write the report to FILE instead of standard output\n"
	"  -q, --quiet              no warnings\n"
	"  -v, --verbose            timings and peak memory on stderr\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Example:\n"
	"  graph-partition resnet18.onnx --batch 8 --format json -o resnet18.json\n"
	"  graph-partition configs/models/mlp.yaml --hardware configs/hardware/a100.yaml\n";

enum format { FMT_TABLE, FMT_JSON, FMT_CSV, FMT_DOT };

struct options {
	const char *model, *output, *hardware;
	enum format format;
	struct gp_options gp;
	struct si_override *overrides;
};

static void add_override(struct options *o, const char *text)
{
	const char *eq = strchr(text, '=');
	if (!eq || eq == text)
		cli_usage_error("--input-shape: '%s' is not NAME=DIMS (like input=1x3x224x224)", text);
	struct si_override *ov = realloc(o->overrides, (o->gp.si.noverrides + 1) * sizeof *ov);
	if (!ov)
		cli_die("out of memory");
	o->overrides = ov;
	ov = &ov[o->gp.si.noverrides++];
	struct sp_err err;
	if (si_parse_dims(eq + 1, "--input-shape", &ov->ndim, ov->dims, &err))
		cli_usage_error("%s", err.msg);
	ov->name = strndup(text, (size_t)(eq - text));
	if (!ov->name)
		cli_die("out of memory");
	o->gp.si.overrides = o->overrides;
}

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_INPUT_SHAPE = 256, OPT_DTYPE, OPT_HARDWARE, OPT_THRESHOLDS, OPT_ALLOW_UNKNOWN };
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"batch", required_argument, NULL, 'b'},
		{"input-shape", required_argument, NULL, OPT_INPUT_SHAPE},
		{"dtype", required_argument, NULL, OPT_DTYPE},
		{"hardware", required_argument, NULL, OPT_HARDWARE},
		{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
		{"allow-unknown", no_argument, NULL, OPT_ALLOW_UNKNOWN},
		{"output", required_argument, NULL, 'o'},
		CLI_COMMON_LONGOPTS,
	};
	static const char *const formats[] = {"table", "json", "csv", "dot"};
	struct options o = {.gp = {.dtype = HW_FP32, .thresholds = RL_RIDGE}};
	int c, d;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:b:o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			for (d = 0; d < 4 && strcmp(optarg, formats[d]); d++)
				;
			if (d == 4)
				cli_usage_error("--format: '%s' is not table, json, csv or dot", optarg);
			o.format = (enum format)d;
			break;
		case 'b': o.gp.si.batch = cli_int("--batch", optarg, 1, INT64_C(1) << 31); break;
		case OPT_INPUT_SHAPE: add_override(&o, optarg); break;
		case OPT_DTYPE:
			if ((d = hw_dtype_parse(optarg)) < 0)
				cli_usage_error("--dtype: '%s' is not fp32, tf32, fp16, bf16 or int8",
						optarg);
			o.gp.dtype = (enum hw_dtype)d;
			break;
		case OPT_HARDWARE: o.hardware = optarg; break;
		case OPT_THRESHOLDS:
			if (!strcmp(optarg, "ridge"))
				o.gp.thresholds = RL_RIDGE;
			else if (!strcmp(optarg, "seed"))
				o.gp.thresholds = RL_SEED;
			else
				cli_usage_error("--thresholds: '%s' is not ridge or seed", optarg);
			break;
		case OPT_ALLOW_UNKNOWN: o.gp.si.allow_unknown = 1; break;
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

static void write_report(const struct options *o, const struct gp_report *r)
{
	struct sp_err err;
	if (o->format == FMT_CSV) {
		if (gp_write_csv(o->output ? o->output : "-", r, &err))
			cli_fatal(&err);
		return;
	}
	struct outfile af;
	FILE *fp = stdout;
	if (o->output) {
		if (outfile_open(&af, o->output, &err))
			cli_fatal(&err);
		fp = af.fp;
	}
	int rc = o->format == FMT_JSON ? gp_write_json(fp, r)
		 : o->format == FMT_DOT ? gp_write_dot(fp, r) : gp_write_table(fp, r);
	if (!o->output) {
		if (rc)
			cli_die("stdout: write error");
		return;
	}
	if (rc) {
		outfile_abort(&af);
		cli_die("%s: write error", o->output);
	}
	if (outfile_commit(&af, &err))
		cli_fatal(&err);
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct gp_report r = {0};
	struct sp_err err;
	if (o.hardware ? hw_load(o.hardware, &o.gp.hw, &err) : (hw_default(&o.gp.hw), 0))
		cli_fatal(&err);
	double t0 = timer_now();
	if (gp_load(o.model, &r.g, &err))
		cli_fatal(&err);
	double t1 = timer_now();
	if (gp_analyse(&r, &o.gp, &err))
		cli_fatal(&err);
	double t2 = timer_now();
	for (size_t i = 0; i < r.g.nnodes && cli_verbosity > 0; i++)
		if (r.ops[r.order[i]].unknown)
			cli_warn("%s: node '%s' (%s): no shape rule; counted as zero", o.model,
				 r.g.nodes[r.order[i]].name, r.g.nodes[r.order[i]].op);
	write_report(&o, &r);
	cli_log(2, "load: %.3f s (%llu bytes of tensor data left unread), analysis: %.3f s, "
		   "report: %.3f s, peak RSS %.1f MiB", t1 - t0, (unsigned long long)r.g.dropped_bytes,
		t2 - t1, timer_now() - t2, timer_peak_rss() / (1 << 20));
	gp_free(&r);
	for (size_t i = 0; i < o.gp.si.noverrides; i++)
		free((char *)o.overrides[i].name);
	free(o.overrides);
	return 0;
}
