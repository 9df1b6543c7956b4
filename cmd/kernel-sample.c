/* kernel-sample: estimate-train-time's kernel sampling (its
 * sampling_controller.py) as a C program: operator timing sweeps from YAML
 * configs, and merge of the part files. Options are parsed here; the work
 * is lib/sample/ (config, grid, driver, sweep, merge) with the operators of
 * lib/sample/ (CPU) and kernels/sample/ (GPU). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/progress.h"
#include "sample/sample_config.h"
#include "sample/sample_gpu_clock.h"
#include "sample/sample_merge.h"
#include "sample/sample_op.h"
#include "sample/sample_run.h"
#include "sample/sample_sweep.h"

static const char usage[] =
	"Usage: kernel-sample [run] [OPTION]... CONFIG.yml\n"
	"       kernel-sample merge [OPTION]... PART.csv... [-o OUT.csv]\n"
	"Time operators (forward and backward) over the grid of shapes a config\n"
	"describes, as estimate-train-time's sampling_controller.py does, and write\n"
	"sampling_data/DEVICE_OP_PRECISION_PARTS_PART.csv (the shape, F_dur(us),\n"
	"B_dur(us)) and its log in sampling_log/. A rerun resumes where a killed one\n"
	"stopped. `run` may be left out.\n"
	"\n"
	"Configs are in configs/kernel_sampling/collect/ (the original's sweeps) and\n"
	"test/ (small ones). Modes (the config's `run`, or --run): get_all sweeps\n"
	"the grid; get_one times the config's `shapes` and prints the times;\n"
	"get_profiler runs it once inside its NVTX range and prints the command\n"
	"`ncu --nvtx --nvtx-include RANGE/ ...` that profiles exactly that run;\n"
	"run_function runs it once, untimed.\n"
	"\n"
	"run:\n"
	"  -c, --config FILE      the sweep config (or give it as CONFIG.yml)\n"
	"      --run MODE         get_all, get_one, get_profiler or run_function\n"
	"                         (default: the config's `run`)\n"
	"      --precision P      fp16, bf16 or fp32 (default fp16)\n"
	"      --device D         cpu, cuda, cuda:N or auto (default auto: the GPU\n"
	"                         when one is usable)\n"
	"      --parts N          split the grid round-robin into N parts ...\n"
	"      --part I           ... and run part I, 1..N (defaults: the SLURM array\n"
	"                         task count and id, else 1 and 1)\n"
	"      --output-dir DIR   where sampling_data/ and sampling_log/ go (default .)\n"
	"      --shape A,B,...    the shape of get_one, get_profiler and run_function\n"
	"                         (default: the config's `shapes`)\n"
	"      --seed K           seed of the operators' random inputs (default 0)\n"
	"merge:\n"
	"  -o, --output FILE      the merged CSV (default: standard output): the rows\n"
	"                         of every PART.csv, sorted by shape, each shape once\n"
	"  -q, --quiet            no messages\n"
	"  -v, --verbose          also each shape's times and the shapes skipped\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Profiling: each shape's timed runs are an NVTX range; get_profiler prints the\n"
	"ncu command for one (man page, PROFILING):\n"
	"  nsys profile --trace cuda,nvtx -o sample kernel-sample CONFIG.yml\n"
	"\n"
	"Example:\n"
	"  kernel-sample configs/kernel_sampling/test/layernorm.yml --device cpu --precision fp32\n"
	"  kernel-sample --config configs/kernel_sampling/collect/linear1.yml --parts 4 --part 2\n"
	"  kernel-sample merge sampling_data/*_linear1_fp16_4_*.csv -o linear1_fp16.csv\n";

/* The whole command line, for the ncu command get_profiler prints. */
static int full_argc;
static char **full_argv;

struct run_options {
	const char *config, *output_dir, *shape;
	int mode; /* an enum sample_mode, or -1: the config's */
	enum sample_precision precision;
	enum gpu_device_choice device;
	int gpu_index; /* cuda:N */
	struct cli_parts parts;
	uint64_t seed;
};

/* --device cpu|cuda|cuda:N|auto; N (default 0) only with cuda. */
static void parse_device(const char *text, struct run_options *o)
{
	o->gpu_index = 0;
	if (!strncmp(text, "cuda:", 5)) {
		o->gpu_index = (int)cli_int("--device", text + 5, 0, 1023);
		o->device = DEVICE_CUDA;
	} else {
		o->device = cli_device(text);
	}
}

static struct run_options parse_run(int argc, char **argv)
{
	enum { OPT_RUN = 256, OPT_PRECISION, OPT_DEVICE, OPT_PARTS, OPT_PART, OPT_OUTPUT_DIR,
	       OPT_SHAPE, OPT_SEED };
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"run", required_argument, NULL, OPT_RUN},
		{"precision", required_argument, NULL, OPT_PRECISION},
		{"device", required_argument, NULL, OPT_DEVICE},
		{"parts", required_argument, NULL, OPT_PARTS},
		{"part", required_argument, NULL, OPT_PART},
		{"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
		{"shape", required_argument, NULL, OPT_SHAPE},
		{"seed", required_argument, NULL, OPT_SEED},
		CLI_COMMON_LONGOPTS,
	};
	struct run_options o = {.output_dir = ".", .mode = -1, .precision = SAMPLE_FP16,
				.device = DEVICE_AUTO};
	const char *parts = NULL, *part = NULL;
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":c:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o.config = optarg; break;
		case OPT_RUN: o.mode = cli_choice("--run", optarg, sample_mode_names); break;
		case OPT_PRECISION:
			if (sample_precision_parse(optarg, &o.precision))
				cli_usage_error("--precision: '%s' is not one of fp16, bf16, fp32",
						optarg);
			break;
		case OPT_DEVICE: parse_device(optarg, &o); break;
		case OPT_PARTS: parts = optarg; break;
		case OPT_PART: part = optarg; break;
		case OPT_OUTPUT_DIR:
			if (!strcmp(optarg, "-"))
				cli_usage_error("--output-dir -: a folder for sampling_data/ and "
						"sampling_log/, not standard output");
			o.output_dir = optarg;
			break;
		case OPT_SHAPE: o.shape = optarg; break;
		case OPT_SEED: o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc && o.config)
		cli_usage_error("give the config once: --config or CONFIG.yml");
	if (optind < argc)
		o.config = argv[optind++];
	if (!o.config)
		cli_usage_error("no CONFIG.yml given");
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	o.parts = cli_parts(parts, part);
	return o;
}

/* An argument as the shell reads it back. */
static void print_quoted(const char *arg)
{
	if (arg[0] && strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				  "0123456789_@%+=:,./-") == strlen(arg)) {
		fputs(arg, stdout);
		return;
	}
	putchar('\'');
	for (const char *p = arg; *p; p++) {
		if (*p == '\'')
			fputs("'\\'", stdout); /* close, an escaped quote, reopen */
		putchar(*p);
	}
	putchar('\'');
}

static void print_ncu_command(const struct sample_job *job, const int64_t *shape)
{
	char range[256], filter[260];
	/* the trailing '/' makes it a push/pop range filter */
	snprintf(filter, sizeof filter, "%s/", sample_range_name(job, shape, range, sizeof range));
	fputs("ncu --nvtx --nvtx-include ", stdout);
	print_quoted(filter);
	for (int i = 0; i < full_argc; i++) {
		putchar(' ');
		print_quoted(full_argv[i]);
	}
	putchar('\n');
}

static int run_sweep(const struct sample_job *job)
{
	struct progress bar;
	struct sp_report report = progress_report(&bar);
	struct sample_job j = *job;
	struct sample_sweep_result r;
	struct sp_err err;
	j.report = &report;
	if (sample_sweep(&j, &r, &err))
		cli_fatal(&err);
	cli_log(1,
		"%s_%s: part %d of %d, %" PRIu64 " shapes: %" PRIu64 " measured, %" PRIu64
		" skipped, %" PRIu64 " failed, %" PRIu64 " done before; %s",
		job->cfg->kernel_name, sample_precision_name(job->precision), job->part,
		job->parts, r.total, r.measured, r.skipped, r.failed, r.resumed, r.csv);
	return 0;
}

/* The shape of the single-shape modes: --shape, else the config's. */
static void pick_shape(const struct run_options *o, const struct sample_config *cfg,
		       int64_t *shape)
{
	if (o->shape) {
		int n = cli_int_list("--shape", o->shape, shape, SAMPLE_MAX_DIMS, 1,
				     SAMPLE_MAX_VALUE);
		if (n != cfg->grid.ndims)
			cli_usage_error("--shape: %d values, the config's shapes have %d", n,
					cfg->grid.ndims);
	} else if (cfg->has_shape) {
		memcpy(shape, cfg->shape, sizeof cfg->shape);
	} else {
		cli_die("%s: this mode needs a shape: 'shapes' in the config or --shape",
			cfg->path);
	}
}

static int run_single(const struct run_options *o, const struct sample_job *job,
		      enum sample_mode mode)
{
	int64_t shape[SAMPLE_MAX_DIMS];
	char text[256];
	struct sp_err err;
	struct sample_times t;
	pick_shape(o, job->cfg, shape);
	sample_shape_text(job->cfg->grid.ndims, shape, text, sizeof text);
	const char *label = job->cfg->kernel_name, *prec = sample_precision_name(job->precision);
	switch (mode) {
	case SAMPLE_GET_ONE:
		if (sample_one(job, shape, &t, &err))
			cli_fatal(&err);
		printf("%s_%s: input_shape: %s timecost(us) [fwd, bwd]: [%.3f, %.3f]\n", label,
		       prec, text, t.fwd_us, t.bwd_us);
		break;
	case SAMPLE_GET_PROFILER:
		if (sample_profile(job, shape, &err))
			cli_fatal(&err);
		print_ncu_command(job, shape);
		break;
	default:
		if (sample_run_once(job, shape, &err))
			cli_fatal(&err);
		printf("%s_%s: input_shape: %s ran once\n", label, prec, text);
	}
	return 0;
}

static int run_main(int argc, char **argv)
{
	struct run_options o = parse_run(argc, argv);
	struct sample_config cfg;
	struct sp_err err;
	if (sample_config_read(o.config, &cfg, &err))
		cli_fatal(&err);
	enum sample_mode mode = o.mode >= 0 ? (enum sample_mode)o.mode : cfg.run;
	int gpu = cli_use_gpu(o.device);
	if (!gpu)
		cli_log_threads();
	struct sample_clock clock;
	const struct sample_op *op = gpu ? sample_gpu_op(cfg.function_name)
					 : sample_cpu_op(cfg.function_name);
	if (!op) {
		char names[1024];
		cli_die("%s: no operator '%s' %s (kernel-sample has %s)", cfg.path,
			cfg.function_name, gpu ? "on the GPU" : "on the CPU",
			cli_join_names(sample_op_names, names, sizeof names));
	}
	if (!gpu)
		sample_cpu_clock(&clock);
	else if (sample_gpu_clock(o.gpu_index, &clock, &err))
		cli_fatal(&err);
	struct sample_job job = {
		.cfg = &cfg,
		.op = op,
		.clock = &clock,
		.precision = o.precision,
		.seed = o.seed,
		.parts = o.parts.count,
		.part = o.parts.index,
		.output_dir = o.output_dir,
	};
	if (sample_job_check(&job, &err))
		cli_fatal(&err);
	int rc = mode == SAMPLE_GET_ALL ? run_sweep(&job) : run_single(&o, &job, mode);
	sample_config_free(&cfg);
	return rc;
}

static int merge_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		CLI_COMMON_LONGOPTS,
	};
	const char *output = "-";
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind == argc)
		cli_usage_error("merge: no PART.csv given");
	for (int i = optind; i < argc; i++)
		if (!strcmp(argv[i], "-"))
			cli_usage_error("merge: a PART.csv's name says its device, operator and "
					"precision, so not standard input (-)");
	struct sample_merge_result r;
	struct sp_err err;
	if (sample_merge((const char *const *)argv + optind, (size_t)(argc - optind), output, &r,
			 &err))
		cli_fatal(&err);
	cli_log(1, "merged %d files: %" PRIu64 " rows, %" PRIu64 " shapes; %s", argc - optind,
		r.rows_in, r.rows_out, strcmp(output, "-") ? output : "stdout");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cli_command commands[] = {
		{"run", run_main},
		{"merge", merge_main},
		{NULL, NULL},
	};
	cli_init("kernel-sample");
	/* A copy: getopt_long reorders argv as it parses. */
	full_argc = argc;
	full_argv = malloc(((size_t)argc + 1) * sizeof *full_argv);
	if (!full_argv)
		cli_die("out of memory");
	memcpy(full_argv, argv, ((size_t)argc + 1) * sizeof *argv);
	cli_run_command(argc, argv, commands, run_main, usage);
}
