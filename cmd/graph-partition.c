/* graph-partition: every operator of an ONNX or YAML model as a subgraph
 * (a kernel): FLOPs, bytes, intensity, parallelism, stage, roofline time
 * and bottleneck on a GPU, and the model's totals, concurrency, critical
 * paths and fusion candidates; or several models compared. Options are
 * parsed here; the work is lib/partition/ (partition.h, compare.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "partition/compare.h"
#include "partition/dims_text.h"
#include "partition/partition.h"
#include "partition/saturate.h"
#include "core/timer.h"

static const char usage[] =
	"Usage: graph-partition [OPTION]... MODEL...\n"
	"Analyse an ONNX model (MODEL.onnx) or a YAML model (MODEL.yaml or .yml, the\n"
	"format of the man page) operator by operator: shape, FLOPs, MACs, bytes,\n"
	"arithmetic intensity, thread-level parallelism, grouped and depthwise\n"
	"convolutions, stage, roofline time and bottleneck on a GPU; and the model:\n"
	"totals (FLOPs; matmul_flops, what torch's flop counter reports; MACs;\n"
	"parameters; memory traffic), op-type and bottleneck distributions, stages,\n"
	"max parallel ops, critical paths by count, FLOPs and time, fusion candidates.\n"
	"With several models (or --compare), one comparison instead: a line per\n"
	"number, a column per model (CSV: a row per model; JSON: an array): FLOPs,\n"
	"parameters, weight and peak activation MB, intensity, parallelism, critical\n"
	"path, roofline time, bottleneck shares and the batch to saturate the GPU.\n"
	"\n"
	"  -f, --format FORMAT      table (default), json (summary, ops, fusions), csv\n"
	"                           (one row per operator) or dot (Graphviz, coloured\n"
	"                           by bottleneck, one rank per stage; one model)\n"
	"      --compare            the comparison, even of one model\n"
	"      --all-ops            list constant ops too (Constant, Identity of an\n"
	"                           initializer, shape arithmetic: stage -1) in the\n"
	"                           table and DOT\n"
	"  -b, --batch N            first dim of every model input, 1..2^31\n"
	"      --input-shape NAME=DIMS  dims of the input NAME, as 1x3x224x224\n"
	"                           (repeatable; wins over --batch for that input)\n"
	"      --dtype TYPE         fp32 (default), tf32 (fp32 data, TF32 matrix\n"
	"                           units), fp16, bf16 or int8: the bytes per element\n"
	"                           and the matrix peak the roofline takes\n"
	"      --hardware FILE|NAME the GPU, a YAML file like configs/hardware/h200.yaml,\n"
	"                           or the NAME of one installed or shipped (h200, h100,\n"
	"                           a100; see the man page for where NAME is looked for;\n"
	"                           default: a built-in H200 with h200.yaml's numbers)\n"
	"      --thresholds KIND    ridge (default: compute_bound, memory_bound or\n"
	"                           latency_bound against the GPU's ridge point) or\n"
	"                           fixed (the fixed intensity cut-offs of the graphs\n"
	"                           project's GraphPartitioner; seed is another name)\n"
	"      --allow-unknown      count an op without a shape rule as zero (a\n"
	"                           warning) instead of failing\n"
	"  -o, --output FILE        write the report to FILE instead of standard output\n"
	"                           (- is standard output)\n"
	"  -q, --quiet              no warnings\n"
	"  -v, --verbose            timings and peak memory on stderr\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Example:\n"
	"  graph-partition resnet18.onnx --batch 8 --format json -o resnet18.json\n"
	"  graph-partition configs/models/mlp.yaml --hardware a100\n"
	"  graph-partition resnet18.onnx mobilenet_v2.onnx efficientnet_b0.onnx -f csv\n";

struct options {
	char **models; /* argv's */
	int nmodels, compare;
	const char *output, *hardware;
	enum partition_format format;
	struct partition_options analysis;
	struct shape_infer_override *overrides;
};

/* --thresholds; "seed" is the older name of fixed, kept working. */
static const char *const threshold_names[] = {"ridge", "fixed", "seed", NULL};
static const enum roofline_thresholds thresholds_named[] = {ROOFLINE_RIDGE, ROOFLINE_FIXED,
							    ROOFLINE_FIXED};

static void add_override(struct options *o, const char *text)
{
	const char *eq = strchr(text, '=');
	if (!eq || eq == text)
		cli_usage_error("--input-shape: '%s' is not NAME=DIMS (like input=1x3x224x224)", text);
	struct shape_infer_opts *si = &o->analysis.si;
	struct shape_infer_override *ov = realloc(o->overrides, (si->noverrides + 1) * sizeof *ov);
	if (!ov)
		cli_die("out of memory");
	o->overrides = ov;
	ov = &ov[si->noverrides++];
	struct sp_err err;
	if (dims_text_parse(eq + 1, "--input-shape", &ov->ndim, ov->dims, &err))
		cli_usage_error("%s", err.msg);
	ov->name = strndup(text, (size_t)(eq - text));
	if (!ov->name)
		cli_die("out of memory");
	si->overrides = o->overrides;
}

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_INPUT_SHAPE = 256, OPT_DTYPE, OPT_HARDWARE, OPT_THRESHOLDS, OPT_ALLOW_UNKNOWN,
	       OPT_COMPARE, OPT_ALL_OPS };
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"batch", required_argument, NULL, 'b'},
		{"input-shape", required_argument, NULL, OPT_INPUT_SHAPE},
		{"dtype", required_argument, NULL, OPT_DTYPE},
		{"hardware", required_argument, NULL, OPT_HARDWARE},
		{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
		{"allow-unknown", no_argument, NULL, OPT_ALLOW_UNKNOWN},
		{"compare", no_argument, NULL, OPT_COMPARE},
		{"all-ops", no_argument, NULL, OPT_ALL_OPS},
		{"output", required_argument, NULL, 'o'},
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {.output = "-", .format = PARTITION_TABLE,
			    .analysis = {.dtype = HARDWARE_FP32, .thresholds = ROOFLINE_RIDGE}};
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":f:b:o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o.format = (enum partition_format)cli_choice("--format", optarg,
								     partition_format_names);
			break;
		case 'b': o.analysis.si.batch = cli_int("--batch", optarg, 1, INT64_C(1) << 31); break;
		case OPT_INPUT_SHAPE: add_override(&o, optarg); break;
		case OPT_DTYPE:
			o.analysis.dtype = (enum hardware_dtype)cli_choice("--dtype", optarg,
									   hardware_dtype_names);
			break;
		case OPT_HARDWARE: o.hardware = optarg; break;
		case OPT_THRESHOLDS:
			o.analysis.thresholds =
				thresholds_named[cli_choice("--thresholds", optarg, threshold_names)];
			break;
		case OPT_ALLOW_UNKNOWN: o.analysis.si.allow_unknown = 1; break;
		case OPT_COMPARE: o.compare = 1; break;
		case OPT_ALL_OPS: o.analysis.all_ops = 1; break;
		case 'o': o.output = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	o.models = argv + optind;
	o.nmodels = argc - optind;
	if (!o.nmodels)
		cli_usage_error("no MODEL given");
	o.compare |= o.nmodels > 1;
	if (o.compare && o.format == PARTITION_DOT)
		cli_usage_error("--format dot draws one model; a comparison is a table, csv or json");
	return o;
}

/* Load and analyse one model into r (its warnings on stderr). */
static void analyse(const char *model, const struct options *o, struct partition_report *r)
{
	struct sp_err err;
	double t0 = timer_now();
	if (partition_load(model, &r->g, &err))
		cli_fatal(&err);
	double t1 = timer_now();
	if (partition_analyse(r, &o->analysis, &err))
		cli_fatal(&err);
	for (size_t i = 0; i < r->g.nnodes && cli_verbosity > 0; i++)
		if (r->ops[r->order[i]].unknown)
			cli_warn("%s: node '%s' (%s): no shape rule; counted as zero", model,
				 r->g.nodes[r->order[i]].name, r->g.nodes[r->order[i]].op);
	cli_log(2, "%s: load: %.3f s (%llu bytes of tensor data left unread), analysis: %.3f s",
		model, t1 - t0, (unsigned long long)r->g.dropped_bytes, timer_now() - t1);
}

/* Every model's row, then the comparison. */
static void compare_models(const struct options *o)
{
	struct compare c = {0};
	struct sp_err err;
	for (int m = 0; m < o->nmodels; m++) {
		struct partition_report r = {0};
		int64_t batch;
		analyse(o->models[m], o, &r);
		double t0 = timer_now();
		if (saturate_batch(o->models[m], &o->analysis, &batch, &err) ||
		    compare_add(&c, &r, batch, &err))
			cli_fatal(&err);
		cli_log(2, "%s: batch to saturate: %.3f s", o->models[m], timer_now() - t0);
		partition_free(&r);
	}
	if (compare_write(o->output, o->format, &c, &err))
		cli_fatal(&err);
	compare_free(&c);
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct sp_err err;
	const char *hardware_file = "built in";
	if (o.hardware ? hardware_load_found(o.hardware, &o.analysis.hw, &hardware_file, &err)
		       : (hardware_default(&o.analysis.hw), 0))
		cli_fatal(&err);
	cli_log(2, "hardware file: %s", hardware_file);
	if (o.compare) {
		compare_models(&o);
	} else {
		struct partition_report r = {0};
		analyse(o.models[0], &o, &r);
		double t0 = timer_now();
		if (partition_write(o.output, o.format, &r, &err))
			cli_fatal(&err);
		cli_log(2, "report: %.3f s", timer_now() - t0);
		partition_free(&r);
	}
	cli_log(2, "peak RSS %.1f MiB", timer_peak_rss() / (1 << 20));
	for (size_t i = 0; i < o.analysis.si.noverrides; i++)
		free((char *)o.overrides[i].name);
	free(o.overrides);
	return 0;
}
