/* kernel-sample: estimate-train-time's kernel sampling (its
 * sampling_controller.py) as a C program: operator timing sweeps from YAML
 * configs, merge of the part files, and its predictor (predictor.py) in C:
 * fit timing models from the sweeps, predict times of shapes and of a
 * transformer layer, and measure that layer. Options are parsed here; the
 * work is lib/sample/ (config, grid, driver, sweep, merge; features, trees,
 * models, fit, layer) with the operators of lib/sample/ (CPU) and
 * kernels/sample/ (GPU). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/progress.h"
#include "core/outfile.h"
#include "formats/csv_writer.h"
#include "ksmm/ksmm_best.h"
#include "sample/sample_config.h"
#include "sample/sample_fit.h"
#include "sample/sample_calibrate.h"
#include "sample/sample_layer.h"
#include "sample/sample_gpu.h"
#include "sample/sample_gpu_clock.h"
#include "sample/sample_merge.h"
#include "sample/sample_op.h"
#include "sample/sample_run.h"
#include "sample/sample_spec.h"
#include "sample/sample_sweep.h"
#include "sweep/table.h"

static const char usage[] =
	"Usage: kernel-sample [run] [OPTION]... CONFIG.yml...\n"
	"       kernel-sample merge [OPTION]... PART.csv... [-o OUT.csv]\n"
	"       kernel-sample fit [OPTION]... DATA.csv...\n"
	"       kernel-sample predict -m MODEL... --shape A,B,... | --shapes CSV [-o OUT.csv]\n"
	"       kernel-sample predict --layer MP,B,H,L,DIM --models DIR [-o OUT.csv]\n"
	"       kernel-sample layer [OPTION]... --layer MP,B,H,L,DIM [-o OUT.csv]\n"
	"       kernel-sample calibrate [OPTION]... [--torch TORCH.csv] [-o OUT.csv]\n"
	"Time operators (forward and backward) over the grid of shapes a config\n"
	"describes, as estimate-train-time's sampling_controller.py does, and write\n"
	"sampling_data/DEVICE_OP_PRECISION_PARTS_PART.csv (the shape, F_dur(us),\n"
	"B_dur(us)) and its log in sampling_log/. A rerun resumes where a killed one\n"
	"stopped. Several configs run in turn in one process, all of them checked\n"
	"before the first runs. `run` may be left out.\n"
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
	"                         (default: the config's `shapes`); with get_all,\n"
	"                         which sweeps the grid, a usage error\n"
	"      --seed K           seed of the operators' random inputs (default 0)\n"
	"      --attention B      flash_atten's backend on the GPU: cudnn (cuDNN's fused\n"
	"                         attention, libcudnn.so.9 loaded at run time) or own\n"
	"                         (spkit's kernel); default: cudnn when it loads, else\n"
	"                         own; cudnn when it cannot load is an error\n"
	"      --ksmm-table FILE  the ksmm operator's configurations from this\n"
	"                         `ksmm-tune best` table (default: ksmm-tune's\n"
	"                         heuristic)\n"
	"merge:\n"
	"  -o, --output FILE      the merged CSV (default: standard output): the rows\n"
	"                         of every PART.csv, sorted by shape, each shape once\n"
	"fit: a timing model of each direction (fwd, bwd) of the operator whose\n"
	"sampling CSVs are given (one sweep's parts, or merged), gradient-boosted\n"
	"trees on log time over the shape's features; prints the k-fold held-out\n"
	"error and writes DIR/DEVICE_OP_PRECISION_{fwd,bwd}.model\n"
	"      --output-dir DIR   where the models go (default .)\n"
	"      --folds K          cross-validation folds, 0 for none (default 5)\n"
	"      --trees N          trees (default 400)\n"
	"      --depth D          their depth, 1 to 12 (default 4)\n"
	"      --rate R           the learning rate, in (0, 1] (default 0.1)\n"
	"      --base B           power-law (default: log time linear in log flops and\n"
	"                         log bytes, the trees fit the rest) or mean\n"
	"      --seed K           seed of the trees' row samples and the folds (default 0)\n"
	"predict: times from models, as CSV: the shape, then F_dur(us) and B_dur(us)\n"
	"  -m, --model FILE       a model; give both of an operator for both directions\n"
	"      --shape A,B,...    a shape in the model's columns (may be repeated)\n"
	"      --shapes CSV       the shapes of a CSV with the model's columns\n"
	"      --layer MP,B,H,L,DIM  one transformer layer: the operators below, each\n"
	"                         at its shape, forward and backward, and their sum\n"
	"      --models DIR       where --layer finds the models, fit's file names\n"
	"      --precision P      the models of --layer (default fp16)\n"
	"      --norm N           the layer's norm: RMSlayernorm (default) or layernorm\n"
	"      --layer-attention A  unfused (default: baddbmm,\n"
	"                         ScaledUpperTriangMaskedSoftmax, bmm), flash_atten or\n"
	"                         flash_atten_causal\n"
	"layer: the layer's operators run on --device, each alone and back to back:\n"
	"NORM linear1 RoPE ATTENTION linear2 NORM res_add linear3 gelu linear4 res_add;\n"
	"prints each one's times, their sum and the layer's, with --layer, --device,\n"
	"--precision, --norm, --layer-attention, --attention, --seed and -o as above\n"
	"calibrate: each transformer operator timed as the sweeps time it, at the H100\n"
	"operator table's shapes (b4 h32 l2048 dim4096, and b8 h64 l4096 dim8192 too\n"
	"for linear1, layernorm, gelu and fused attention; mp 1), with the bytes or\n"
	"FLOPs it must move or do, beside PyTorch's times on the same card:\n"
	"      --encoder MP,B,H,L,DIM  every operator at this shape instead (repeatable)\n"
	"      --ops OP,...       only these operators\n"
	"      --torch FILE       scripts/bench-sample-torch.py's CSV: PyTorch's times\n"
	"                         beside ours, and ours / PyTorch\n"
	"      with --device, --precision, --attention, --seed and -o as above\n"
	"  -q, --quiet            no messages\n"
	"  -v, --verbose          also each shape's times, the shapes skipped, and\n"
	"                         flash_atten's backend\n"
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
	"  kernel-sample merge sampling_data/*_linear1_fp16_4_*.csv -o linear1_fp16.csv\n"
	"  kernel-sample fit linear1_fp16.csv --output-dir models\n"
	"  kernel-sample predict -m models/X_linear1_fp16_fwd.model --shape 1,4,2048,4096\n"
	"  kernel-sample predict --layer 1,4,32,2048,4096 --models models\n"
	"  python3 scripts/bench-sample-torch.py > torch.csv && kernel-sample calibrate --torch torch.csv\n";

/* --output-dir: a folder, so never "-" (standard output). */
static const char *output_dir(const char *value, const char *what)
{
	if (!strcmp(value, "-"))
		cli_usage_error("--output-dir -: a folder for %s, not standard output", what);
	return value;
}

/* The whole command line, for the ncu command get_profiler prints. */
static int full_argc;
static char **full_argv;

struct run_options {
	const char *config;         /* --config FILE, else NULL */
	const char *const *configs; /* else the CONFIG.yml arguments */
	int nconfigs;
	const char *output_dir, *shape;
	int mode; /* an enum sample_mode, or -1: the config's */
	enum sample_precision precision;
	enum gpu_device_choice device;
	struct cli_parts parts;
	uint64_t seed;
	enum sample_attention attention;
	const char *ksmm_table;
};

static const char *const attention_names[] = {"cudnn", "own", NULL};

static enum sample_precision parse_precision(const char *text)
{
	enum sample_precision p;
	if (sample_precision_parse(text, &p))
		cli_usage_error("--precision: '%s' is not one of fp16, bf16, fp32", text);
	return p;
}

static enum sample_attention parse_attention(const char *text)
{
	return cli_choice("--attention", text, attention_names) == 0 ? SAMPLE_ATTENTION_CUDNN
								    : SAMPLE_ATTENTION_OWN;
}

static struct run_options parse_run(int argc, char **argv)
{
	enum { OPT_RUN = 256, OPT_PRECISION, OPT_DEVICE, OPT_PARTS, OPT_PART, OPT_OUTPUT_DIR,
	       OPT_SHAPE, OPT_SEED, OPT_ATTENTION, OPT_KSMM_TABLE };
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
		{"attention", required_argument, NULL, OPT_ATTENTION},
		{"ksmm-table", required_argument, NULL, OPT_KSMM_TABLE},
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
		case OPT_PRECISION: o.precision = parse_precision(optarg); break;
		case OPT_DEVICE: o.device = cli_device(optarg); break;
		case OPT_PARTS: parts = optarg; break;
		case OPT_PART: part = optarg; break;
		case OPT_OUTPUT_DIR:
			o.output_dir = output_dir(optarg, "sampling_data/ and sampling_log/");
			break;
		case OPT_SHAPE: o.shape = optarg; break;
		case OPT_SEED: o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_ATTENTION:
			o.attention = parse_attention(optarg);
			break;
		case OPT_KSMM_TABLE: o.ksmm_table = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc && o.config)
		cli_usage_error("give the configs as --config FILE or as CONFIG.yml..., not both");
	o.configs = (const char *const *)argv + optind;
	o.nconfigs = o.config ? 1 : argc - optind;
	if (!o.nconfigs)
		cli_usage_error("no CONFIG.yml given");
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

static void run_sweep(const struct sample_job *job)
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
		"%s_%s: part %d of %d, %" PRIu64 " shape%s: %" PRIu64 " measured, %" PRIu64
		" skipped, %" PRIu64 " failed, %" PRIu64 " done before; %s",
		job->cfg->kernel_name, sample_precision_name(job->precision), job->part,
		job->parts, r.total, sp_plural(r.total), r.measured, r.skipped, r.failed,
		r.resumed, r.csv);
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

static void run_single(const struct run_options *o, const struct sample_job *job,
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
}

/* The GPU's fused attention: opened for the attention operators, and for
 * any when --attention cudnn asks for it, so that a cuDNN that cannot load
 * is one error before any work. On the CPU there is only the reference. */
static void pick_attention(const struct run_options *o, int gpu, const char *op)
{
	enum sample_attention used;
	struct sp_err err;
	if (o->attention == SAMPLE_ATTENTION_CUDNN && !gpu)
		cli_die("--attention cudnn: the run is on the CPU (--device cpu, or no usable "
			"GPU), where flash_atten is the CPU reference");
	if (!gpu || (o->attention == SAMPLE_ATTENTION_AUTO && !sample_is_attention(op)))
		return;
	if (sample_gpu_attention_use(o->attention, &used, &err))
		cli_die("--attention cudnn: %s", err.msg);
	cli_log(2, "flash_atten: %s", used == SAMPLE_ATTENTION_CUDNN ? "cuDNN's fused attention"
								  : "spkit's own kernel");
}

/* The configs of one run, read and checked before any of them runs. */
struct run_plan {
	struct sample_config *cfgs;
	struct sample_job *jobs;
	enum sample_mode *modes;
	int n;
};

static void plan_configs(const struct run_options *o, int gpu, const struct sample_clock *clock,
			 struct run_plan *plan)
{
	struct sp_err err;
	plan->n = o->nconfigs;
	plan->cfgs = calloc((size_t)plan->n, sizeof *plan->cfgs);
	plan->jobs = calloc((size_t)plan->n, sizeof *plan->jobs);
	plan->modes = calloc((size_t)plan->n, sizeof *plan->modes);
	if (!plan->cfgs || !plan->jobs || !plan->modes)
		cli_die("out of memory");
	for (int i = 0; i < plan->n; i++) {
		struct sample_config *cfg = &plan->cfgs[i];
		if (sample_config_read(o->config ? o->config : o->configs[i], cfg, &err))
			cli_fatal(&err);
		enum sample_mode mode = o->mode >= 0 ? (enum sample_mode)o->mode : cfg->run;
		if (o->shape && mode == SAMPLE_GET_ALL)
			cli_usage_error("--shape applies to get_one, get_profiler and run_function, "
					"not get_all (the grid's shapes)");
		if (mode == SAMPLE_GET_PROFILER && plan->n > 1)
			cli_usage_error("get_profiler takes one config (%s asks for it): its ncu "
					"command reruns the whole command line",
					cfg->path);
		const struct sample_op *op = gpu ? sample_gpu_op(cfg->function_name)
						 : sample_cpu_op(cfg->function_name);
		if (!op) {
			char names[1024];
			cli_die("%s: no operator '%s' %s (kernel-sample has %s)", cfg->path,
				cfg->function_name, gpu ? "on the GPU" : "on the CPU",
				cli_join_names(sample_op_names, names, sizeof names));
		}
		if (mode != SAMPLE_GET_ALL) {
			int64_t shape[SAMPLE_MAX_DIMS];
			pick_shape(o, cfg, shape); /* its errors before any config runs */
		}
		pick_attention(o, gpu, cfg->function_name);
		plan->modes[i] = mode;
		plan->jobs[i] = (struct sample_job){
			.cfg = cfg,
			.op = op,
			.clock = clock,
			.precision = o->precision,
			.seed = o->seed,
			.parts = o->parts.count,
			.part = o->parts.index,
			.output_dir = o->output_dir,
		};
		if (sample_job_check(&plan->jobs[i], &err))
			cli_fatal(&err);
	}
}

/* Each config in turn in one process (one CUDA context, one clock): a
 * sweep over every operator's config pays the program's start once. */
static int run_main(int argc, char **argv)
{
	struct run_options o = parse_run(argc, argv);
	struct ksmm_table table = {0};
	struct sp_err err;
	/* Read (and so checked) whatever the device: the CPU path ignores it. */
	if (o.ksmm_table && ksmm_table_read(o.ksmm_table, &table, &err))
		cli_fatal(&err);
	sample_gpu_ksmm_table(o.ksmm_table ? &table : NULL);
	int gpu = cli_use_gpu(o.device);
	if (!gpu)
		cli_log_threads();
	struct sample_clock clock;
	struct run_plan plan;
	plan_configs(&o, gpu, &clock, &plan);
	if (!gpu)
		sample_cpu_clock(&clock);
	else if (sample_gpu_clock(cli_device_index(), &clock, &err))
		cli_fatal(&err);
	for (int i = 0; i < plan.n; i++) {
		if (plan.modes[i] == SAMPLE_GET_ALL)
			run_sweep(&plan.jobs[i]);
		else
			run_single(&o, &plan.jobs[i], plan.modes[i]);
		sample_config_free(&plan.cfgs[i]);
	}
	free(plan.cfgs);
	free(plan.jobs);
	free(plan.modes);
	sample_gpu_ksmm_table(NULL);
	ksmm_table_free(&table);
	return 0;
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
	const int files = argc - optind;
	cli_log(1, "merged %d file%s: %" PRIu64 " row%s, %" PRIu64 " shape%s; %s", files,
		sp_plural(files), r.rows_in, sp_plural(r.rows_in), r.rows_out,
		sp_plural(r.rows_out), strcmp(output, "-") ? output : "stdout");
	return 0;
}

static int fit_main(int argc, char **argv)
{
	enum { OPT_OUTPUT_DIR = 256, OPT_FOLDS, OPT_TREES, OPT_DEPTH, OPT_RATE, OPT_BASE,
	       OPT_SEED };
	static const struct option longopts[] = {
		{"output-dir", required_argument, NULL, OPT_OUTPUT_DIR},
		{"folds", required_argument, NULL, OPT_FOLDS},
		{"trees", required_argument, NULL, OPT_TREES},
		{"depth", required_argument, NULL, OPT_DEPTH},
		{"rate", required_argument, NULL, OPT_RATE},
		{"base", required_argument, NULL, OPT_BASE},
		{"seed", required_argument, NULL, OPT_SEED},
		CLI_COMMON_LONGOPTS,
	};
	static const char *const bases[] = {"mean", "power-law", NULL};
	struct gbt_params params = gbt_default_params();
	const char *dir = ".";
	int folds = 5, c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_OUTPUT_DIR: dir = output_dir(optarg, "the models"); break;
		case OPT_FOLDS:
			folds = (int)cli_int("--folds", optarg, 0, 100);
			if (folds == 1)
				cli_usage_error("--folds: 1 fold holds nothing out (0 for none, or 2 "
						"to 100)");
			break;
		case OPT_TREES: params.trees = (int)cli_int("--trees", optarg, 1, 10000); break;
		case OPT_DEPTH: params.depth = (int)cli_int("--depth", optarg, 1, GBT_MAX_DEPTH); break;
		case OPT_RATE: params.rate = cli_fraction("--rate", optarg); break;
		case OPT_BASE: params.base = cli_choice("--base", optarg, bases); break;
		case OPT_SEED: params.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind == argc)
		cli_usage_error("fit: no DATA.csv given");
	struct sample_data d;
	struct sp_err err;
	if (sample_data_read((const char *const *)argv + optind, (size_t)(argc - optind), &d, &err))
		cli_fatal(&err);
	struct sample_model models[2];
	struct sample_cv cv[2];
	const struct sample_model *save[2];
	char names[2][512], paths[2][4096];
	const char *path_list[2];
	int n = 0;
	for (int k = SAMPLE_FWD; k <= SAMPLE_BWD; k++) {
		if (k == SAMPLE_BWD && !sample_data_has(&d, SAMPLE_BWD)) {
			cli_log(1, "%s: every B_dur(us) is 0: %s has no backward, no bwd model",
				d.first, d.name.op);
			continue;
		}
		if (sample_fit(&d, (enum sample_direction)k, &params, folds, &models[n], &cv[n],
			       &err))
			cli_fatal(&err);
		sample_model_file_name(&models[n], names[n], sizeof names[n]);
		snprintf(paths[n], sizeof paths[n], "%s/%s", dir, names[n]);
		save[n] = &models[n];
		path_list[n] = paths[n];
		n++;
	}
	/* The models go into place once the summary is out, so a failure
	 * leaves none of them. */
	outfile_hold_commits();
	if (sample_model_save(save, path_list, (size_t)n, &err))
		cli_fatal(&err);
	static const char *const cols[] = {"operator", "precision", "direction", "rows", "folds",
					   "MAPE(%)", "median(%)", "p90(%)", "model"};
	struct csv_writer w;
	if (csv_writer_open(&w, "-", cols, 9, &err))
		cli_fatal(&err);
	for (int i = 0; i < n; i++) {
		csv_writer_str(&w, models[i].op);
		csv_writer_str(&w, sample_precision_name(models[i].precision));
		csv_writer_str(&w, sample_direction_names[models[i].direction]);
		csv_writer_int(&w, (int64_t)models[i].rows);
		csv_writer_int(&w, cv[i].folds);
		for (int q = 0; q < 3; q++) {
			double v = q == 0 ? cv[i].mape : q == 1 ? cv[i].median : cv[i].p90;
			if (cv[i].folds)
				csv_writer_double(&w, round(v * 1e4) / 100, 0);
			else
				csv_writer_str(&w, "");
		}
		csv_writer_str(&w, paths[i]);
		if (csv_writer_end_row(&w, &err))
			cli_fatal(&err);
		sample_model_free(&models[i]);
	}
	sample_data_free(&d);
	if (csv_writer_commit(&w, &err) || outfile_commit_held(&err))
		cli_fatal(&err);
	return 0;
}

/* The options --layer takes, in predict and layer. */
struct layer_options {
	int64_t enc[5];
	int has_layer;
	enum sample_precision precision;
	const char *norm, *attention;
};

static struct layer_options layer_defaults(void)
{
	return (struct layer_options){.precision = SAMPLE_FP16, .norm = "RMSlayernorm",
				      .attention = "unfused"};
}

/* Handles one of the layer's options; 0 when c is none of them. */
enum { OPT_LAYER = 300, OPT_L_PRECISION, OPT_NORM, OPT_LAYER_ATTENTION };
#define LAYER_LONGOPTS                                                                   \
	{"layer", required_argument, NULL, OPT_LAYER},                                   \
	{"precision", required_argument, NULL, OPT_L_PRECISION},                         \
	{"norm", required_argument, NULL, OPT_NORM},                                     \
	{"layer-attention", required_argument, NULL, OPT_LAYER_ATTENTION}

static int layer_option(int c, struct layer_options *o)
{
	switch (c) {
	case OPT_LAYER:
		if (cli_int_list("--layer", optarg, o->enc, 5, 1, SAMPLE_MAX_VALUE) != 5)
			cli_usage_error("--layer: expected 5 values, mp,b,h,l,dim");
		o->has_layer = 1;
		return 1;
	case OPT_L_PRECISION: o->precision = parse_precision(optarg); return 1;
	case OPT_NORM:
		o->norm = sample_layer_norms[cli_choice("--norm", optarg, sample_layer_norms)];
		return 1;
	case OPT_LAYER_ATTENTION:
		o->attention = sample_layer_attentions[cli_choice("--layer-attention", optarg,
								  sample_layer_attentions)];
		return 1;
	}
	return 0;
}

/* A report's CSV, its header written. */
static void report_open(struct csv_writer *w, const char *output, const char *const *cols,
			size_t ncols)
{
	struct sp_err err;
	if (csv_writer_open(w, output, cols, ncols, &err))
		cli_fatal(&err);
}

/* The same before the timing that fills the report, for a regular file
 * (or none yet, written as a temporary, outfile.h): one that cannot be
 * written fails at once, nothing timed. Standard output is opened after the
 * timing (report_open), so that an error leaves nothing there, and so is
 * any other file that exists (a FIFO, a device): opening one is a write to
 * whatever is on its other end, which may come only later (a FIFO's
 * reader), so it is only checked for writing now. Returns whether it
 * opened w. */
static int report_open_early(struct csv_writer *w, const char *output,
			     const char *const *cols, size_t ncols)
{
	if (outfile_is_stdout(output))
		return 0;
	struct stat st;
	if (stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if (access(output, W_OK) != 0)
			cli_die("%s: cannot open output: %s", output, strerror(errno));
		return 0;
	}
	report_open(w, output, cols, ncols);
	return 1;
}

static const char *const layer_columns[] = {"operator", "shape", "F_dur(us)", "B_dur(us)"};

/* The layer's rows into w, opened with layer_columns, and w committed:
 * operator,shape,F_dur(us),B_dur(us), one row per operator of the layer,
 * then "sum" and, measured, "layer". */
static int write_layer(struct csv_writer *w, const char *const *ops, const int64_t *enc,
		       const struct sample_layer_times *t, int measured)
{
	struct sp_err err;
	char text[256];
	struct sample_times sum = {0, 0};
	for (int i = 0; i <= t->n + measured; i++) {
		const struct sample_times *row = i < t->n ? &t->alone[i] : i == t->n ? &sum : &t->layer;
		csv_writer_str(w, i < t->n ? ops[i] : i == t->n ? "sum" : "layer");
		csv_writer_str(w, i < t->n ? sample_shape_text(t->nshape[i], t->shape[i], text,
								sizeof text)
					    : sample_shape_text(5, enc, text, sizeof text));
		sample_write_us(w, row->fwd_us);
		sample_write_us(w, row->bwd_us);
		if (csv_writer_end_row(w, &err)) {
			csv_writer_abort(w);
			cli_fatal(&err);
		}
		if (i < t->n)
			sum.fwd_us += row->fwd_us, sum.bwd_us += row->bwd_us;
	}
	if (csv_writer_commit(w, &err))
		cli_fatal(&err);
	return 0;
}

/* The models of -m: one operator and precision, each direction once. */
static void load_models(const char *const *paths, int n, struct sample_model *m)
{
	struct sp_err err;
	for (int i = 0; i < n; i++) {
		if (sample_model_read(paths[i], &m[i], &err))
			cli_fatal(&err);
		if (i && (strcmp(m[i].op, m[0].op) || m[i].precision != m[0].precision))
			cli_die("%s: a model of %s_%s, %s is of %s_%s", paths[i], m[i].op,
				sample_precision_name(m[i].precision), paths[0], m[0].op,
				sample_precision_name(m[0].precision));
		if (i && m[i].direction == m[0].direction)
			cli_die("%s: a second %s model of %s", paths[i],
				sample_direction_names[m[i].direction], m[0].op);
	}
}

/* The shapes of a CSV: its columns named as the model's (others ignored). */
static int64_t *read_shapes(const char *path, const struct sample_model *m, size_t *n)
{
	struct table t;
	struct sp_err err;
	size_t idx[SAMPLE_MAX_DIMS];
	if (table_read(path, &t, &err))
		cli_fatal(&err);
	if (table_require_cols(&t, m->colp, (size_t)m->ncols, idx, &err)) {
		char want[256] = "";
		for (int c = 0; c < m->ncols; c++)
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", c ? ", " : "",
				 m->cols[c]);
		cli_die("%s (%s's shape is %s)", err.msg, m->op, want);
	}
	int64_t *shapes = malloc((t.nrows ? t.nrows : 1) * SAMPLE_MAX_DIMS * sizeof *shapes);
	if (!shapes)
		cli_die("%s: out of memory", path);
	for (size_t r = 0; r < t.nrows; r++)
		for (int c = 0; c < m->ncols; c++)
			if (sample_shape_cell(&t, r, idx[c], &shapes[r * SAMPLE_MAX_DIMS + (size_t)c],
					      &err)) {
				free(shapes);
				table_free(&t);
				cli_fatal(&err);
			}
	*n = t.nrows;
	table_free(&t);
	return shapes;
}

static int predict_shapes(const char *const *model_paths, int nmodels, const char *const *shape_args,
			  int nshape_args, const char *shapes_csv, const char *output)
{
	struct sample_model m[2];
	struct sp_err err;
	load_models(model_paths, nmodels, m);
	/* the columns in the CSVs' order: fwd first */
	int order[2] = {0, 1};
	if (nmodels == 2 && m[0].direction == SAMPLE_BWD)
		order[0] = 1, order[1] = 0;
	size_t n = (size_t)nshape_args;
	int64_t *shapes;
	if (shapes_csv) {
		shapes = read_shapes(shapes_csv, &m[0], &n);
	} else {
		for (size_t i = 0; i < n; i++) { /* checked before anything is allocated */
			int64_t shape[SAMPLE_MAX_DIMS];
			int k = cli_int_list("--shape", shape_args[i], shape, SAMPLE_MAX_DIMS, 1,
					     SAMPLE_MAX_VALUE);
			if (k != m[0].ncols)
				cli_usage_error("--shape %s: %d values, %s's shape has %d", shape_args[i],
						k, m[0].op, m[0].ncols);
		}
		shapes = malloc(n * SAMPLE_MAX_DIMS * sizeof *shapes);
		if (!shapes)
			cli_die("out of memory");
		for (size_t i = 0; i < n; i++)
			cli_int_list("--shape", shape_args[i], shapes + i * SAMPLE_MAX_DIMS,
				     SAMPLE_MAX_DIMS, 1, SAMPLE_MAX_VALUE);
	}
	/* every time first, so an error leaves no partial output */
	double *us = malloc((n ? n : 1) * 2 * sizeof *us);
	if (!us)
		cli_die("out of memory");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < nmodels; k++)
			if (sample_model_predict(&m[order[k]], shapes + i * SAMPLE_MAX_DIMS,
						 &us[2 * i + (size_t)k], &err)) {
				char text[256];
				sample_shape_text(m[0].ncols, shapes + i * SAMPLE_MAX_DIMS, text,
						  sizeof text);
				free(shapes);
				free(us);
				cli_die("%s: shape %s: %s", shapes_csv ? shapes_csv : "--shape", text,
					err.msg);
			}
	const char *cols[SAMPLE_MAX_DIMS + 2];
	for (int c = 0; c < m[0].ncols; c++)
		cols[c] = m[0].cols[c];
	for (int k = 0; k < nmodels; k++)
		cols[m[0].ncols + k] = sample_direction_columns[m[order[k]].direction];
	struct csv_writer w;
	if (csv_writer_open(&w, output, cols, (size_t)(m[0].ncols + nmodels), &err))
		cli_fatal(&err);
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < m[0].ncols; c++)
			csv_writer_int(&w, shapes[i * SAMPLE_MAX_DIMS + (size_t)c]);
		for (int k = 0; k < nmodels; k++)
			sample_write_us(&w, us[2 * i + (size_t)k]);
		if (csv_writer_end_row(&w, &err)) {
			csv_writer_abort(&w);
			cli_fatal(&err);
		}
	}
	if (csv_writer_commit(&w, &err))
		cli_fatal(&err);
	for (int k = 0; k < nmodels; k++)
		sample_model_free(&m[k]);
	free(shapes);
	free(us);
	return 0;
}

static int predict_main(int argc, char **argv)
{
	enum { OPT_SHAPE = 256, OPT_SHAPES, OPT_MODELS };
	static const struct option longopts[] = {
		{"model", required_argument, NULL, 'm'},
		{"shape", required_argument, NULL, OPT_SHAPE},
		{"shapes", required_argument, NULL, OPT_SHAPES},
		{"models", required_argument, NULL, OPT_MODELS},
		{"output", required_argument, NULL, 'o'},
		LAYER_LONGOPTS,
		CLI_COMMON_LONGOPTS,
	};
	struct layer_options lo = layer_defaults();
	const char *models[2], *shapes_csv = NULL, *dir = NULL, *output = "-";
	const char **shape_args = calloc((size_t)argc, sizeof *shape_args);
	int nmodels = 0, nshapes = 0, c;
	if (!shape_args)
		cli_die("out of memory");
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":m:o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (layer_option(c, &lo))
			continue;
		switch (c) {
		case 'm':
			if (nmodels == 2)
				cli_usage_error("-m: at most 2 models, the fwd and the bwd of an "
						"operator");
			models[nmodels++] = optarg;
			break;
		case OPT_SHAPE: shape_args[nshapes++] = optarg; break;
		case OPT_SHAPES: shapes_csv = optarg; break;
		case OPT_MODELS: dir = optarg; break;
		case 'o': output = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	int rc;
	if (lo.has_layer) {
		if (nmodels || nshapes || shapes_csv)
			cli_usage_error("--layer takes its models from --models, not -m, --shape or "
					"--shapes");
		if (!dir)
			cli_usage_error("--layer: no --models DIR given");
		const char *ops[SAMPLE_LAYER_MAX_OPS];
		int n = sample_layer_ops(lo.norm, lo.attention, ops);
		struct sample_layer_times t;
		struct sp_err err;
		char device[128];
		if (sample_layer_predict(dir, ops, n, lo.precision, lo.enc, device, sizeof device, &t,
					 &err))
			cli_fatal(&err);
		cli_log(2, "models of %s in %s", device, dir);
		struct csv_writer w;
		report_open(&w, output, layer_columns, 4);
		rc = write_layer(&w, ops, lo.enc, &t, 0);
	} else {
		if (dir)
			cli_usage_error("--models is for --layer; give single models with -m");
		if (!nmodels)
			cli_usage_error("predict: no -m MODEL given (or --layer)");
		if (!nshapes == !shapes_csv)
			cli_usage_error("predict: give the shapes with --shape or --shapes, one of "
					"the two");
		rc = predict_shapes(models, nmodels, shape_args, nshapes, shapes_csv, output);
	}
	free(shape_args);
	return rc;
}

static int layer_main(int argc, char **argv)
{
	enum { OPT_DEVICE = 256, OPT_SEED, OPT_BACKEND };
	static const struct option longopts[] = {
		{"device", required_argument, NULL, OPT_DEVICE},
		{"seed", required_argument, NULL, OPT_SEED},
		{"attention", required_argument, NULL, OPT_BACKEND},
		{"output", required_argument, NULL, 'o'},
		LAYER_LONGOPTS,
		CLI_COMMON_LONGOPTS,
	};
	struct layer_options lo = layer_defaults();
	struct run_options ro = {.device = DEVICE_AUTO};
	const char *output = "-";
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (layer_option(c, &lo))
			continue;
		switch (c) {
		case OPT_DEVICE: ro.device = cli_device(optarg); break;
		case OPT_SEED: ro.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_BACKEND: ro.attention = parse_attention(optarg); break;
		case 'o': output = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!lo.has_layer)
		cli_usage_error("layer: no --layer MP,B,H,L,DIM given");
	int gpu = cli_use_gpu(ro.device);
	pick_attention(&ro, gpu, lo.attention);
	const char *ops[SAMPLE_LAYER_MAX_OPS];
	const struct sample_op *table[SAMPLE_LAYER_MAX_OPS];
	struct sample_layer_times t = {0};
	struct sp_err err;
	int n = sample_layer_ops(lo.norm, lo.attention, ops);
	for (int i = 0; i < n; i++) {
		table[i] = gpu ? sample_gpu_op(ops[i]) : sample_cpu_op(ops[i]);
		if (!table[i])
			cli_die("--layer-attention %s: no operator '%s' %s", lo.attention, ops[i],
				gpu ? "on the GPU" : "on the CPU");
		t.nshape[i] = table[i]->nshape;
		if (sample_layer_shape(ops[i], table[i]->shape_names, table[i]->nshape, lo.enc,
				       t.shape[i], &err))
			cli_fatal(&err);
	}
	struct csv_writer w;
	const int opened = report_open_early(&w, output, layer_columns, 4);
	struct sample_clock clock;
	if (!gpu)
		sample_cpu_clock(&clock);
	else if (sample_gpu_clock(cli_device_index(), &clock, &err))
		cli_fatal(&err);
	/* the configs' default schedule (sample_config.h) */
	if (sample_layer_measure(table, n, &clock, lo.precision, ro.seed, 4, 6, 10, &t, &err))
		cli_fatal(&err);
	cli_log(2, "measured on %s", clock.device);
	if (!opened)
		report_open(&w, output, layer_columns, 4);
	return write_layer(&w, ops, lo.enc, &t, 1);
}

/* The operators of --ops (default: every one the encoder shapes), each at
 * the encoders given, or at the H100 table's. */
struct calibrate_plan {
	const char *ops[64];
	int nops, explicit_ops;
	int64_t enc[16][5];
	int nenc;
};

static void calibrate_ops(const char *list, struct calibrate_plan *plan)
{
	cli_list_check("--ops", list);
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		cli_die("out of memory");
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const struct sample_op *op = sample_cpu_op(name);
		if (!op)
			cli_usage_error("--ops: unknown operator '%s'", name);
		if (!sample_calibrate_fits(op))
			cli_usage_error("--ops: %s's shape is not a transformer encoder's (mp, b, h, "
					"l, dim): its sweeps are the way to time it",
					name);
		if (plan->nops == (int)(sizeof plan->ops / sizeof *plan->ops))
			cli_usage_error("--ops: too many operators");
		plan->ops[plan->nops++] = op->name; /* the table's own string, not the copy's */
	}
	free(copy);
	plan->explicit_ops = 1; /* an empty value or item was refused above */
}

/* The encoders op is timed at: those of --encoder, else the H100 table's
 * smaller shape, and its larger one for the operators timed at both. */
static int calibrate_encoders(const struct calibrate_plan *plan, const char *op,
			      const int64_t **enc)
{
	int n = 0;
	if (plan->nenc)
		for (; n < plan->nenc; n++)
			enc[n] = plan->enc[n];
	else {
		enc[n++] = sample_calibrate_small;
		if (sample_calibrate_large_too(op))
			enc[n++] = sample_calibrate_large;
	}
	return n;
}

/* A row of the report: an operator at an encoder, and what it measured. */
struct calibrate_row {
	const struct sample_op *op;
	const int64_t *enc;
	struct sample_calibration cal;
};

/* The report's rows, each operator at each of its encoders, every one
 * checked before any is timed. An operator of the default set that does
 * not run at the precision is left out with a message; one --ops names is
 * an error. */
static int calibrate_rows(const struct calibrate_plan *plan, enum sample_precision p, int gpu,
			  struct calibrate_row *rows)
{
	struct sp_err err;
	int n = 0;
	for (int i = 0; i < plan->nops; i++) {
		const struct sample_op *op =
			gpu ? sample_gpu_op(plan->ops[i]) : sample_cpu_op(plan->ops[i]);
		if (sample_check_precision(op->name, p, &err)) {
			if (plan->explicit_ops)
				cli_fatal(&err);
			cli_log(1, "%s: skipped: %s", op->name, err.msg);
			continue;
		}
		const int64_t *enc[sizeof plan->enc / sizeof *plan->enc];
		const int nenc = calibrate_encoders(plan, op->name, enc);
		for (int e = 0; e < nenc; e++) {
			if (sample_calibrate_check(op, enc[e], p, &err))
				cli_fatal(&err);
			rows[n++] = (struct calibrate_row){.op = op, .enc = enc[e]};
		}
	}
	return n;
}

static int calibrate_main(int argc, char **argv)
{
	enum { OPT_DEVICE = 256, OPT_SEED, OPT_BACKEND, OPT_PRECISION, OPT_ENCODER, OPT_OPS,
	       OPT_TORCH };
	static const struct option longopts[] = {
		{"device", required_argument, NULL, OPT_DEVICE},
		{"seed", required_argument, NULL, OPT_SEED},
		{"attention", required_argument, NULL, OPT_BACKEND},
		{"precision", required_argument, NULL, OPT_PRECISION},
		{"encoder", required_argument, NULL, OPT_ENCODER},
		{"ops", required_argument, NULL, OPT_OPS},
		{"torch", required_argument, NULL, OPT_TORCH},
		{"output", required_argument, NULL, 'o'},
		CLI_COMMON_LONGOPTS,
	};
	struct run_options ro = {.device = DEVICE_AUTO, .precision = SAMPLE_FP16};
	struct calibrate_plan plan = {0};
	const char *output = "-", *torch_path = NULL;
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DEVICE: ro.device = cli_device(optarg); break;
		case OPT_SEED: ro.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_BACKEND: ro.attention = parse_attention(optarg); break;
		case OPT_PRECISION: ro.precision = parse_precision(optarg); break;
		case OPT_ENCODER:
			if (plan.nenc == (int)(sizeof plan.enc / sizeof *plan.enc))
				cli_usage_error("--encoder: at most %d", plan.nenc);
			if (cli_int_list("--encoder", optarg, plan.enc[plan.nenc], 5, 1,
					 SAMPLE_MAX_VALUE) != 5)
				cli_usage_error("--encoder: expected 5 values, mp,b,h,l,dim");
			plan.nenc++;
			break;
		case OPT_OPS: calibrate_ops(optarg, &plan); break;
		case OPT_TORCH: torch_path = optarg; break;
		case 'o': output = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!plan.explicit_ops)
		for (int k = 0; sample_op_names[k]; k++)
			if (sample_calibrate_fits(sample_cpu_op(sample_op_names[k])))
				plan.ops[plan.nops++] = sample_op_names[k];
	struct sp_err err;
	struct sample_torch_table torch = {0};
	if (torch_path && sample_torch_read(torch_path, ro.precision, &torch, &err))
		cli_fatal(&err);
	int gpu = cli_use_gpu(ro.device), uses_attention = 0;
	for (int i = 0; i < plan.nops; i++)
		uses_attention |= sample_is_attention(plan.ops[i]);
	pick_attention(&ro, gpu, uses_attention ? "flash_atten" : "linear1");
	/* Every row checked, then timed, and only then written: an error
	 * leaves no partial report, on standard output either. A file is
	 * opened (as a temporary, outfile.h) before the timing, so that one
	 * that cannot be written fails at once; standard output, a FIFO or a
	 * device after it (report_open_early). */
	struct calibrate_row *rows =
		calloc((size_t)plan.nops * (sizeof plan.enc / sizeof *plan.enc), sizeof *rows);
	if (!rows)
		cli_die("out of memory");
	const int nrows = calibrate_rows(&plan, ro.precision, gpu, rows);
	struct csv_writer w;
	const int opened = report_open_early(&w, output, sample_calibrate_columns,
					     SAMPLE_CALIBRATE_COLUMNS);
	struct sample_clock clock;
	double copy_gbs = 0;
	if (!gpu)
		sample_cpu_clock(&clock);
	else if (sample_gpu_clock(cli_device_index(), &clock, &err) ||
		 gpu_copy_bandwidth(0, 20, &copy_gbs, &err))
		cli_fatal(&err);
	for (int r = 0; r < nrows; r++)
		/* the configs' default schedule (sample_config.h) */
		if (sample_calibrate_one(rows[r].op, rows[r].enc, &clock, ro.precision, ro.seed,
					 4, 6, 10, &rows[r].cal, &err))
			cli_fatal(&err);
	if (!opened)
		report_open(&w, output, sample_calibrate_columns, SAMPLE_CALIBRATE_COLUMNS);
	for (int r = 0; r < nrows; r++) {
		sample_calibrate_write(&w, rows[r].op, ro.precision, &rows[r].cal, copy_gbs,
				       torch_path ? &torch : NULL);
		if (csv_writer_end_row(&w, &err)) {
			csv_writer_abort(&w);
			cli_fatal(&err);
		}
	}
	if (csv_writer_commit(&w, &err))
		cli_fatal(&err);
	cli_log(2, "measured on %s%s%s", clock.device, torch_path ? "; PyTorch's times from " : "",
		torch_path ? torch.device : "");
	sample_torch_free(&torch);
	free(rows);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cli_command commands[] = {
		{"run", run_main},
		{"merge", merge_main},
		{"fit", fit_main},
		{"predict", predict_main},
		{"layer", layer_main},
		{"calibrate", calibrate_main},
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
