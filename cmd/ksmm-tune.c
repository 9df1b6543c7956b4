/* ksmm-tune: Kronecker-sparse matrix multiplication (Gonon, Zheng,
 * Carrivain, Le, "Fast inference with Kronecker-sparse matrices", ICML
 * 2025; the published kernel is PascalCarrivain/ksmm). Subcommands tune,
 * best, bench and apply; options are parsed here, the work is
 * lib/ksmm/ (patterns, space, sweep, tables, the CPU chain) and
 * kernels/ksmm/ (the GPU runner, chain and bench). */
#include <getopt.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "core/timer.h"
#include "common/progress.h"
#include "core/gpu.h"
#include "ksmm/ksmm_bench_csv.h"
#include "ksmm/ksmm_best.h"
#include "ksmm/ksmm_chain.h"
#include "ksmm/ksmm_chain_gpu.h"
#include "ksmm/ksmm_tune.h"
#include "ksmm/ksmm_tune_gpu.h"

static const char usage[] =
	"Usage: ksmm-tune tune (--pattern a,b,c,d | --patterns FILE)... [OPTION]... -o RESULTS.csv\n"
	"       ksmm-tune best RESULTS.csv... -o TABLE.csv\n"
	"       ksmm-tune bench (--pattern a,b,c,d | --patterns FILE)... [OPTION]... [-o BENCH.csv]\n"
	"       ksmm-tune apply (--pattern a,b,c,d | --patterns FILE)... --weights W1.npy,...\n"
	"                       X.npy -o Y.npy [OPTION]...\n"
	"Kronecker-sparse factors: pattern (a,b,c,d), support I_a x 1_{b x c} x I_d,\n"
	"shape (a*b*d) x (a*c*d), weights of shape (a,b,c,d). Batch-size-first (bsf):\n"
	"X is batch x (a*c*d), Y = X K^T; batch-size-last (bsl): X is (a*c*d) x batch,\n"
	"Y = K X. A chain is listed right to left: the first pattern is applied first.\n"
	"\n"
	"  tune   time every configuration of a tuning space on the GPU, checked\n"
	"         against the CPU reference; one CSV row each, resumed after a kill\n"
	"  best   the fastest ok row per pattern, batch, dtype and layout: a table\n"
	"  bench  the tuned kernel against dense cuBLAS (fp32, TF32), bmm and cuSPARSE\n"
	"         BSR, with the memory floor (GPU only)\n"
	"  apply  a chain of factors applied to X.npy, on the CPU or the GPU\n"
	"\n"
	"Patterns (tune, bench, apply):\n"
	"      --pattern a,b,c,d[,B]  one pattern, with its own batch B (repeatable)\n"
	"      --patterns FILE        one a,b,c,d[,B] a line (PascalCarrivain/ksmm's\n"
	"                             patterns.in; '#' comments and blank lines allowed)\n"
	"      --batch B[,B]...       batches of the patterns without their own (tune,\n"
	"                             bench; repeatable; default 25088)\n"
	"      --dtype T[,T]...       fp32, fp16, bf16 (default fp32; apply takes one)\n"
	"      --layout L[,L]...      bsf, bsl (default bsf; apply takes one)\n"
	"Tune:\n"
	"      --space FILE           the tuning space (YAML; default the built-in\n"
	"                             configs/ksmm/space.yaml)\n"
	"  -o, --output FILE          results CSV (tune: appended and resumed)\n"
	"      --parts N --part I     run part I of N (jobs dealt round-robin; default\n"
	"                             from SLURM_ARRAY_TASK_COUNT/ID or SLURM_NTASKS/PROCID)\n"
	"      --dry-run              list every configuration as CSV on stdout: run,\n"
	"                             done (in -o already) or skip with the reason; no GPU\n"
	"      --ncu                  run one configuration once, its row on stdout (for\n"
	"                             ncu --nvtx --nvtx-include 'regex:ksmm .*/')\n"
	"      --reps N               timed repetitions (default 50; bench too)\n"
	"      --warmup N             untimed runs first (default 5; bench too)\n"
	"      --seed K               seed of the random inputs (default 1; bench too)\n"
	"Bench and apply:\n"
	"      --table FILE           best table (from best) to pick each kernel's\n"
	"                             configuration; without it, or for patterns it\n"
	"                             lacks, see the man page's rules\n"
	"      --skip M[,M]...        bench: baselines not to run (dense, dense_tf32,\n"
	"                             bmm, bsr; cuSPARSE BSR can take seconds a row)\n"
	"      --weights W1.npy,...   apply: one (a,b,c,d) array per pattern, same order\n"
	"      --device D             apply: cpu, cuda, cuda:N or auto (default auto)\n"
	"  -q, --quiet                no progress or messages\n"
	"  -v, --verbose              more detail (each failed configuration, the rule\n"
	"                             that chose each configuration, apply's timings)\n"
	"  -h, --help                 show this help and exit\n"
	"  -V, --version              show the version and exit\n"
	"\n"
	"Profiling (man page, PROFILING):\n"
	"  nsys profile --trace cuda,nvtx -o bench ksmm-tune bench --pattern 6,64,64,1\n"
	"  ncu --nvtx --nvtx-include 'regex:ksmm .*/' --set full ksmm-tune tune --pattern 6,64,64,1 --ncu\n"
	"\n"
	"Example:\n"
	"  ksmm-tune tune --patterns configs/ksmm/patterns_short.in --dtype fp16 -o r.csv\n"
	"  ksmm-tune best r.csv -o best.csv\n"
	"  ksmm-tune apply --pattern 2,4,4,2 --pattern 2,4,4,2 --weights k1.npy,k2.npy \\\n"
	"      x.npy -o y.npy --device cpu\n";

#define MAX_BATCHES 64
#define MAX_WEIGHTS 4096

struct options {
	struct ksmm_pattern_list patterns;
	int64_t batches[MAX_BATCHES];
	int nbatches;
	enum ksmm_dtype dtypes[3];
	int ndtypes;
	enum ksmm_layout layouts[2];
	int nlayouts;
	const char *space, *output, *table, *weights, *parts, *part;
	enum gpu_device_choice device;
	int dry_run, ncu, reps, warmup;
	unsigned skip; /* bench: 1 << method for each baseline left out */
	uint64_t seed;
	const char **args; /* positional */
	int nargs;
};

enum {
	OPT_PATTERN = 256, OPT_PATTERNS, OPT_BATCH, OPT_DTYPE, OPT_LAYOUT, OPT_SPACE, OPT_PARTS,
	OPT_PART, OPT_DRY_RUN, OPT_NCU, OPT_REPS, OPT_WARMUP, OPT_SEED, OPT_TABLE, OPT_WEIGHTS,
	OPT_DEVICE, OPT_SKIP
};

/* Each subcommand's options: the common ones and those it names. */
static const struct option all_options[] = {
	{"pattern", required_argument, NULL, OPT_PATTERN},
	{"patterns", required_argument, NULL, OPT_PATTERNS},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"dtype", required_argument, NULL, OPT_DTYPE},
	{"layout", required_argument, NULL, OPT_LAYOUT},
	{"space", required_argument, NULL, OPT_SPACE},
	{"output", required_argument, NULL, 'o'},
	{"parts", required_argument, NULL, OPT_PARTS},
	{"part", required_argument, NULL, OPT_PART},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"ncu", no_argument, NULL, OPT_NCU},
	{"reps", required_argument, NULL, OPT_REPS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"seed", required_argument, NULL, OPT_SEED},
	{"table", required_argument, NULL, OPT_TABLE},
	{"weights", required_argument, NULL, OPT_WEIGHTS},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"skip", required_argument, NULL, OPT_SKIP},
};
#define NALL (sizeof all_options / sizeof *all_options)

static void add_pattern(struct options *o, const char *text)
{
	struct ksmm_pattern_entry e;
	struct sp_err err;
	if (ksmm_pattern_parse(text, "--pattern", &e, &err))
		cli_usage_error("%s", err.msg);
	/* out of memory (a million patterns cannot fit on a command line) */
	if (ksmm_pattern_list_add(&o->patterns, &e, &err))
		cli_fatal(&err);
}

/* `allowed`: the OPT_ codes (and 'o') this command takes, 0-terminated. */
static struct options parse_options(int argc, char **argv, const int *allowed)
{
	struct option longopts[NALL + 5] = {{0}};
	size_t n = 0;
	for (size_t i = 0; i < NALL; i++)
		for (const int *a = allowed; *a; a++)
			if (*a == all_options[i].val)
				longopts[n++] = all_options[i];
	const struct option common[] = {CLI_COMMON_LONGOPTS};
	memcpy(longopts + n, common, sizeof common);
	int takes_o = 0;
	for (const int *a = allowed; *a; a++)
		takes_o |= *a == 'o';
	const char *shortopts = takes_o ? ":o:" CLI_COMMON_SHORTOPTS : ":" CLI_COMMON_SHORTOPTS;

	struct options o = {.device = DEVICE_AUTO, .reps = 50, .warmup = 5, .seed = 1};
	int dtypes[3] = {0}, layouts[2] = {0};
	opterr = 0;
	int c;
	while ((c = cli_getopt(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PATTERN: add_pattern(&o, optarg); break;
		case OPT_PATTERNS: {
			struct sp_err err;
			if (ksmm_patterns_read(optarg, &o.patterns, &err))
				cli_fatal(&err);
			break;
		}
		case OPT_BATCH:
			o.nbatches += cli_int_list("--batch", optarg, o.batches + o.nbatches,
						   MAX_BATCHES - o.nbatches, 1, INT32_MAX);
			break;
		case OPT_DTYPE: {
			static const char *const names[] = {"fp32", "fp16", "bf16", NULL};
			o.ndtypes = cli_choice_list("--dtype", optarg, names, dtypes, 3);
			break;
		}
		case OPT_LAYOUT: {
			static const char *const names[] = {"bsf", "bsl", NULL};
			o.nlayouts = cli_choice_list("--layout", optarg, names, layouts, 2);
			break;
		}
		case OPT_SPACE: o.space = optarg; break;
		case 'o': o.output = optarg; break;
		case OPT_PARTS: o.parts = optarg; break;
		case OPT_PART: o.part = optarg; break;
		case OPT_DRY_RUN: o.dry_run = 1; break;
		case OPT_NCU: o.ncu = 1; break;
		case OPT_REPS: o.reps = (int)cli_int("--reps", optarg, 1, 100000); break;
		case OPT_WARMUP: o.warmup = (int)cli_int("--warmup", optarg, 0, 100000); break;
		case OPT_SEED: o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_TABLE: o.table = optarg; break;
		case OPT_WEIGHTS: o.weights = optarg; break;
		case OPT_DEVICE: o.device = cli_device(optarg); break;
		case OPT_SKIP: {
			/* The baselines, as ksmm_method_name writes them. */
			const char *names[KSMM_M_COUNT];
			for (int m = 1; m < KSMM_M_COUNT; m++)
				names[m - 1] = ksmm_method_name((enum ksmm_method)m);
			names[KSMM_M_COUNT - 1] = NULL;
			int got[KSMM_M_COUNT];
			int count = cli_choice_list("--skip", optarg, names, got, KSMM_M_COUNT - 1);
			for (int i = 0; i < count; i++)
				o.skip |= 1u << (got[i] + 1);
			break;
		}
		default: cli_common_option(c, usage, argv);
		}
	}
	for (int i = 0; i < o.ndtypes; i++)
		o.dtypes[i] = (enum ksmm_dtype)dtypes[i];
	for (int i = 0; i < o.nlayouts; i++)
		o.layouts[i] = (enum ksmm_layout)layouts[i];
	if (!o.ndtypes)
		o.dtypes[o.ndtypes++] = KSMM_F32;
	if (!o.nlayouts)
		o.layouts[o.nlayouts++] = KSMM_BS_FIRST;
	if (!o.nbatches)
		o.batches[o.nbatches++] = 25088;
	o.args = (const char **)argv + optind;
	o.nargs = argc - optind;
	return o;
}

static void need_patterns(const struct options *o)
{
	if (o->patterns.n == 0)
		cli_usage_error("no pattern: give --pattern a,b,c,d or --patterns FILE");
}

static void no_args(const struct options *o)
{
	if (o->nargs)
		cli_usage_error("unexpected argument '%s'", o->args[0]);
}

static struct ksmm_tune_opts tune_opts(const struct options *o, const struct ksmm_space *space,
				       const struct sp_report *report)
{
	struct cli_parts parts = cli_parts(o->parts, o->part);
	return (struct ksmm_tune_opts){
		.patterns = &o->patterns,
		.batches = o->batches,
		.nbatches = (size_t)o->nbatches,
		.dtypes = o->dtypes,
		.ndtypes = (size_t)o->ndtypes,
		.layouts = o->layouts,
		.nlayouts = (size_t)o->nlayouts,
		.space = space,
		.parts = parts.count,
		.part = parts.index,
		.max_runs = o->ncu ? 1 : 0,
		.report = report,
	};
}

static int run_tune(int argc, char **argv)
{
	static const int allowed[] = {OPT_PATTERN, OPT_PATTERNS, OPT_BATCH, OPT_DTYPE,
				      OPT_LAYOUT,  OPT_SPACE,	 'o',	    OPT_PARTS,
				      OPT_PART,	   OPT_DRY_RUN,	 OPT_NCU,   OPT_REPS,
				      OPT_WARMUP,  OPT_SEED,	 0};
	struct options o = parse_options(argc, argv, allowed);
	need_patterns(&o);
	no_args(&o);
	if (!o.output && !o.ncu && !o.dry_run)
		cli_usage_error("tune needs -o RESULTS.csv (or --ncu, or --dry-run)");
	if (o.dry_run && o.ncu)
		cli_usage_error("--dry-run and --ncu do not go together");
	struct sp_err err;
	struct ksmm_space space;
	if (o.space ? ksmm_space_read(o.space, &space, &err) : ksmm_space_default(&space, &err))
		cli_fatal(&err);
	struct progress bar = {0};
	struct sp_report report = progress_report(&bar);
	struct ksmm_tune_opts to = tune_opts(&o, &space, &report);
	struct ksmm_tune_stats st;
	if (o.dry_run) {
		if (ksmm_tune_dry_run(&to, ksmm_runnable, NULL, o.output && access(o.output, F_OK) == 0
								     ? o.output
								     : NULL,
				      "-", &st, &err))
			cli_fatal(&err);
		cli_log(1,
			"ksmm-tune: %llu job%s: %llu configuration%s to run, %llu done, %llu skipped",
			(unsigned long long)st.jobs, sp_plural(st.jobs), (unsigned long long)st.run,
			sp_plural(st.run), (unsigned long long)st.resumed,
			(unsigned long long)st.skipped);
		ksmm_space_free(&space);
		ksmm_pattern_list_free(&o.patterns);
		return 0;
	}
	if (!cli_use_gpu(DEVICE_CUDA))
		cli_die("tune: no GPU");
	struct ksmm_tune_gpu g = {.warmup = o.ncu ? 0 : o.warmup, .reps = o.ncu ? 1 : o.reps,
				  .rounds = o.ncu ? 1 : 5, .seed = o.seed};
	struct ksmm_runner runner = ksmm_tune_gpu_runner(&g);
	if (ksmm_tune_run(&to, &runner, o.ncu ? "-" : o.output, &st, &err))
		cli_fatal(&err);
	struct ksmm_cache_stats cache;
	ksmm_cache_stats(&cache);
	cli_log(1, "ksmm-tune: %llu job%s: %llu configuration%s run (%llu ok), %llu resumed, %llu "
		"skipped; NVRTC: %llu compiled, %llu from the disk cache",
		(unsigned long long)st.jobs, sp_plural(st.jobs), (unsigned long long)st.run,
		sp_plural(st.run), (unsigned long long)st.ok,
		(unsigned long long)st.resumed, (unsigned long long)st.skipped,
		(unsigned long long)cache.compiles, (unsigned long long)cache.hits);
	ksmm_space_free(&space);
	ksmm_pattern_list_free(&o.patterns);
	return 0;
}

static int run_best(int argc, char **argv)
{
	static const int allowed[] = {'o', 0};
	struct options o = parse_options(argc, argv, allowed);
	if (o.nargs == 0)
		cli_usage_error("best needs at least one RESULTS.csv");
	if (!o.output)
		cli_usage_error("best needs -o TABLE.csv");
	struct sp_err err;
	struct ksmm_result *rows;
	size_t n, skipped;
	if (ksmm_best_reduce(o.args, (size_t)o.nargs, &rows, &n, &skipped, &err) ||
	    ksmm_best_write(o.output, rows, n, &err))
		cli_fatal(&err);
	cli_log(1, "ksmm-tune: %zu best configuration%s; %zu pattern%s with no ok row left out", n,
		sp_plural(n), skipped, sp_plural(skipped));
	free(rows);
	return 0;
}

static int run_bench(int argc, char **argv)
{
	static const int allowed[] = {OPT_PATTERN, OPT_PATTERNS, OPT_BATCH, OPT_DTYPE,
				      OPT_LAYOUT,  'o',		 OPT_REPS,  OPT_WARMUP,
				      OPT_SEED,	   OPT_TABLE,	 OPT_SKIP,  0};
	struct options o = parse_options(argc, argv, allowed);
	need_patterns(&o);
	no_args(&o);
	struct sp_err err;
	struct ksmm_table table = {0};
	if (o.table && ksmm_table_read(o.table, &table, &err))
		cli_fatal(&err);
	if (!cli_use_gpu(DEVICE_CUDA))
		cli_die("bench: no GPU");
	struct progress bar = {0};
	struct sp_report report = progress_report(&bar);
	struct ksmm_tune_opts to = tune_opts(&o, NULL, &report);
	struct ksmm_bench_opts bo = {.warmup = o.warmup, .reps = o.reps, .seed = o.seed,
				     .skip = o.skip};
	if (ksmm_bench_csv(&to, o.table ? &table : NULL, &bo, o.output ? o.output : "-", &err))
		cli_fatal(&err);
	ksmm_table_free(&table);
	ksmm_pattern_list_free(&o.patterns);
	return 0;
}

static int run_apply(int argc, char **argv)
{
	static const int allowed[] = {OPT_PATTERN, OPT_PATTERNS, OPT_DTYPE,  OPT_LAYOUT, 'o',
				      OPT_TABLE,   OPT_WEIGHTS,	 OPT_DEVICE, 0};
	struct options o = parse_options(argc, argv, allowed);
	need_patterns(&o);
	if (o.nargs != 1)
		cli_usage_error("apply needs one input X.npy");
	if (!o.output)
		cli_usage_error("apply needs -o Y.npy");
	if (!o.weights)
		cli_usage_error("apply needs --weights W1.npy,... (one per pattern)");
	if (o.ndtypes != 1 || o.nlayouts != 1)
		cli_usage_error("apply takes one --dtype and one --layout");
	const char *weights[MAX_WEIGHTS];
	cli_list_check("--weights", o.weights);
	char *wtext = strdup(o.weights);
	size_t nw = 0;
	if (!wtext)
		cli_die("--weights: out of memory");
	for (char *save = NULL, *t = strtok_r(wtext, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (nw == MAX_WEIGHTS)
			cli_usage_error("--weights: more than %d files", MAX_WEIGHTS);
		weights[nw++] = t;
	}
	int use_gpu = cli_use_gpu(o.device);
	if (!use_gpu)
		cli_log_threads();
	struct sp_err err;
	struct ksmm_chain chain;
	struct ksmm_table table = {0};
	int64_t batch;
	void *x, *y;
	double t0 = timer_now();
	if (ksmm_chain_load(&o.patterns, weights, nw, o.dtypes[0], &chain, &err) ||
	    (o.table && ksmm_table_read(o.table, &table, &err)) ||
	    ksmm_chain_input_read(o.args[0], &chain, o.layouts[0], &batch, &x, &err))
		cli_fatal(&err);
	cli_log(2, "read %zu factor%s and a batch of %lld: %.3f s; applying on the %s", chain.n,
		sp_plural(chain.n), (long long)batch, timer_now() - t0, use_gpu ? "GPU" : "CPU");
	y = malloc((size_t)(ksmm_chain_rows(&chain) * batch) * ksmm_dtype_size(chain.dtype));
	if (!y)
		cli_die("%s: out of memory for the output", o.output);
	struct ksmm_config *cfgs = calloc(chain.n, sizeof *cfgs);
	enum ksmm_rule *rules = calloc(chain.n, sizeof *rules);
	if (!cfgs || !rules)
		cli_die("%s: out of memory", o.output);
	if (ksmm_chain_configs(&chain, o.layouts[0], batch, o.table ? &table : NULL, cfgs, rules,
			       &err))
		cli_fatal(&err);
	for (size_t i = 0; use_gpu && i < chain.n; i++)
		cli_log(2, "ksmm-tune: factor %zu (%s): configuration by rule '%s'", i + 1,
			o.patterns.v[i].where, ksmm_rule_name(rules[i]));
	t0 = timer_now();
	if (use_gpu ? ksmm_chain_apply_gpu(&chain, o.layouts[0], batch, cfgs, x, y, &err)
		    : ksmm_chain_apply_cpu(&chain, o.layouts[0], batch, x, y, &err))
		cli_fatal(&err);
	cli_log(2, "apply: %.3f s", timer_now() - t0);
	if (ksmm_chain_output_write(o.output, &chain, o.layouts[0], batch, y, &err))
		cli_fatal(&err);
	free(cfgs), free(rules), free(x), free(y), free(wtext);
	ksmm_table_free(&table);
	ksmm_chain_free(&chain);
	ksmm_pattern_list_free(&o.patterns);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cli_command commands[] = {
		{"tune", run_tune}, {"best", run_best}, {"bench", run_bench}, {"apply", run_apply},
		{NULL, NULL},
	};
	cli_init("ksmm-tune");
	cli_run_command(argc, argv, commands, NULL, usage);
}
