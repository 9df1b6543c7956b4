/* macko-spmv: y = alpha A x + beta y for a MACKO matrix and N vectors,
 * and `macko-spmv bench`, MACKO against cuBLAS and cuSPARSE. Options are
 * parsed here; the work is lib/macko/ (the operands read and checked, the
 * random matrix) and kernels/macko/ (the product and the benchmark). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "core/gpu.h"
#include "core/timer.h"
#include "formats/csv_writer.h"
#include "formats/npy.h"
#include "macko/macko.h"
#include "macko/macko_dispatch.h"
#include "macko/macko_input.h"
#include "macko/macko_npz.h"
#include "macko/macko_operands.h"

static const char usage[] =
	"Usage: macko-spmv [OPTION]... MATRIX.npz X.npy -o Y.npy\n"
	"       macko-spmv bench [BENCH OPTION]...\n"
	"Multiply a MACKO matrix (from macko-compress) by one vector or a few:\n"
	"y = alpha A x + beta y_in, fp16 values and x, fp32 accumulation. X holds C\n"
	"values (one vector) or N x C (N vectors; on the GPU up to 8 in one pass over\n"
	"the matrix where their x fits in shared memory, more in several, and more\n"
	"than 16 as several products: see the man page); f2, f4 or f8, rounded to\n"
	"fp16. Y has R values or N x R.\n"
	"\n"
	"  -o, --output FILE      write y to FILE (.npy)\n"
	"      --alpha A          scale of A x (default 1)\n"
	"      --beta B           scale of y_in (default 0)\n"
	"      --y-in FILE        y_in (.npy, the shape of y); needed when B is not 0\n"
	"      --out-dtype T      f32 (default) or f16\n"
	"      --device D         cpu, cuda or auto (default auto: cuda when usable)\n"
	"      --check-finite     fail if the matrix, x or y_in hold NaN or Inf\n"
	"                         (without it they are computed through, like BLAS)\n"
	"  -q, --quiet            no messages\n"
	"  -v, --verbose          timings on stderr\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Bench options (one CSV row per kernel, on stdout or to -o FILE: times, GB/s\n"
	"over the bytes each format must move, the ratio to cuBLAS and the error\n"
	"against the CPU):\n"
	"      --rows R --cols C  a random matrix of this shape (default 8192 x 8192)\n"
	"      --density D        its density, in (0, 1] (default 0.5)\n"
	"      --matrix FILE      a MACKO .npz instead of a random matrix\n"
	"      --vectors N        vectors, 1..16 (default 1)\n"
	"      --kernels LIST     of macko, cublas, cusparse (default all three)\n"
	"      --reps N           timed repetitions (default 100); --warmup N (default 10)\n"
	"      --flush            flush the L2 cache before each repetition (default)\n"
	"      --no-flush         do not\n"
	"      --seed K           seed of the matrix and x (default 1)\n"
	"      --append           append rows to the -o file (header once), for sweeps\n"
	"\n"
	"Profiling: the product and each benchmarked kernel are NVTX ranges (man\n"
	"page, PROFILING):\n"
	"  nsys profile --trace cuda,nvtx -o spmv macko-spmv bench --vectors 8\n"
	"  ncu --nvtx --nvtx-include macko/ --launch-count 1 --set full macko-spmv bench\n"
	"\n"
	"Example:\n"
	"  macko-compress w.npy --density 0.5 -o w.npz\n"
	"  macko-spmv w.npz x.npy -o y.npy --out-dtype f16\n"
	"  macko-spmv bench --rows 28672 --cols 8192 --density 0.1 --vectors 8\n";

enum {
	OPT_ALPHA = 256, OPT_BETA, OPT_Y_IN, OPT_OUT_DTYPE, OPT_DEVICE, OPT_CHECK_FINITE,
	OPT_ROWS, OPT_COLS, OPT_DENSITY, OPT_MATRIX, OPT_VECTORS, OPT_KERNELS, OPT_REPS,
	OPT_WARMUP, OPT_FLUSH, OPT_NO_FLUSH, OPT_SEED, OPT_APPEND,
	OPT_OTHER_FORM, /* an option of the other form: a usage error that names it */
};

/* The options only the multiply form takes, and only bench; -o and the
 * common options are both forms'. */
static const struct option multiply_only[] = {
	{"alpha", required_argument, NULL, OPT_ALPHA},
	{"beta", required_argument, NULL, OPT_BETA},
	{"y-in", required_argument, NULL, OPT_Y_IN},
	{"out-dtype", required_argument, NULL, OPT_OUT_DTYPE},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"check-finite", no_argument, NULL, OPT_CHECK_FINITE},
	{0},
};
static const struct option bench_only[] = {
	{"rows", required_argument, NULL, OPT_ROWS},
	{"cols", required_argument, NULL, OPT_COLS},
	{"density", required_argument, NULL, OPT_DENSITY},
	{"matrix", required_argument, NULL, OPT_MATRIX},
	{"vectors", required_argument, NULL, OPT_VECTORS},
	{"kernels", required_argument, NULL, OPT_KERNELS},
	{"reps", required_argument, NULL, OPT_REPS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"flush", no_argument, NULL, OPT_FLUSH},
	{"no-flush", no_argument, NULL, OPT_NO_FLUSH},
	{"seed", required_argument, NULL, OPT_SEED},
	{"append", no_argument, NULL, OPT_APPEND},
	{0},
};
static const struct option both_forms[] = {
	{"output", required_argument, NULL, 'o'},
	CLI_COMMON_LONGOPTS,
};

/* A form's getopt table: its own options, the other form's as
 * OPT_OTHER_FORM (so that they are named as the other form's, not as
 * unknown), and both forms'. */
static const struct option *form_options(const struct option *own, const struct option *other)
{
	static struct option table[32];
	int n = 0;
	for (const struct option *o = own; o->name; o++)
		table[n++] = *o;
	for (const struct option *o = other; o->name; o++) {
		table[n] = *o;
		table[n++].val = OPT_OTHER_FORM;
	}
	for (const struct option *o = both_forms; o->name; o++)
		table[n++] = *o;
	table[n] = (struct option){0};
	return table;
}

struct multiply_options {
	const char *matrix, *x, *output, *y_in;
	double alpha, beta;
	enum macko_out out;
	enum gpu_device_choice device;
	int check_finite;
};

static struct multiply_options parse_multiply(int argc, char **argv)
{
	/* --out-dtype's names, and the old spellings float32 and float16 */
	static const char *const out_dtypes[] = {"f32", "f16", "float32", "float16", NULL};
	static const enum macko_out out_dtype[] = {MACKO_OUT_F32, MACKO_OUT_F16, MACKO_OUT_F32,
						   MACKO_OUT_F16};
	const struct option *longopts = form_options(multiply_only, bench_only);
	struct multiply_options o = {.alpha = 1, .out = MACKO_OUT_F32, .device = DEVICE_AUTO};
	const char *bench_option = NULL;
	int c, li = 0;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, &li)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case OPT_ALPHA: o.alpha = cli_double("--alpha", optarg, -1e30, 1e30); break;
		case OPT_BETA: o.beta = cli_double("--beta", optarg, -1e30, 1e30); break;
		case OPT_Y_IN: o.y_in = optarg; break;
		case OPT_OUT_DTYPE:
			o.out = out_dtype[cli_choice("--out-dtype", optarg, out_dtypes)];
			break;
		case OPT_DEVICE: o.device = cli_device(optarg); break;
		case OPT_CHECK_FINITE: o.check_finite = 1; break;
		case OPT_OTHER_FORM: bench_option = longopts[li].name; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (bench_option)
		cli_usage_error("--%s belongs to 'macko-spmv bench'", bench_option);
	if (argc - optind < 2)
		cli_usage_error("give MATRIX.npz and X.npy");
	o.matrix = argv[optind++];
	o.x = argv[optind++];
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.output)
		cli_usage_error("no output: give -o Y.npy");
	if (o.beta != 0 && !o.y_in)
		cli_usage_error("--beta %g needs --y-in", o.beta);
	return o;
}

struct bench_options {
	const char *matrix, *output;
	int append, nvec, reps, warmup, flush;
	int64_t rows, cols;
	double density;
	uint64_t seed;
	unsigned kernels; /* enum macko_kernel bits */
};

static struct bench_options parse_bench(int argc, char **argv)
{
	/* in the order of enum macko_kernel's bits */
	static const char *const kernel_names[] = {"macko", "cublas", "cusparse", NULL};
	const struct option *longopts = form_options(bench_only, multiply_only);
	struct bench_options o = {.nvec = 1, .reps = 100, .warmup = 10, .flush = 1, .rows = 8192,
				  .cols = 8192, .density = 0.5, .seed = 1, .kernels = 7};
	/* a multiply option, if one is given; and an option that shapes the
	 * random matrix */
	const char *multiply_option = NULL, *random_shape = NULL;
	int c, li = 0, kernels[3];
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, &li)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case OPT_ROWS:
			o.rows = cli_int("--rows", optarg, 1, 1 << 24);
			random_shape = longopts[li].name;
			break;
		case OPT_COLS:
			o.cols = cli_int("--cols", optarg, 1, 1 << 24);
			random_shape = longopts[li].name;
			break;
		case OPT_DENSITY:
			o.density = cli_fraction("--density", optarg);
			random_shape = longopts[li].name;
			break;
		case OPT_MATRIX: o.matrix = optarg; break;
		case OPT_VECTORS: o.nvec = (int)cli_int("--vectors", optarg, 1, MACKO_MAX_VECTORS); break;
		case OPT_KERNELS:
			o.kernels = 0;
			for (int i = 0, n = cli_choice_list("--kernels", optarg, kernel_names, kernels, 3);
			     i < n; i++)
				o.kernels |= 1u << kernels[i];
			break;
		case OPT_REPS: o.reps = (int)cli_int("--reps", optarg, 1, 1000000); break;
		case OPT_WARMUP: o.warmup = (int)cli_int("--warmup", optarg, 0, 1000000); break;
		case OPT_FLUSH: o.flush = 1; break;
		case OPT_NO_FLUSH: o.flush = 0; break;
		case OPT_SEED: o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_APPEND: o.append = 1; break;
		case OPT_OTHER_FORM: multiply_option = longopts[li].name; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (multiply_option)
		cli_usage_error("--%s is not a bench option (it goes with MATRIX.npz X.npy)",
				multiply_option);
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (o.append && (!o.output || !strcmp(o.output, "-")))
		cli_usage_error("--append needs -o FILE (a file, not standard output)");
	if (o.matrix && random_shape)
		cli_usage_error("--%s shapes the random matrix; --matrix gives one", random_shape);
	return o;
}

static int multiply(int argc, char **argv)
{
	struct multiply_options o = parse_multiply(argc, argv);
	struct sp_err err;
	struct macko_operands op;
	double t0 = timer_now();
	if (macko_operands_load(&op, o.matrix, o.x, o.y_in, &err))
		cli_fatal(&err);
	if (o.check_finite && macko_operands_check_finite(&op, &err))
		cli_die("%s (--check-finite)", err.msg);
	int use_gpu = cli_use_gpu(o.device);
	if (!use_gpu)
		cli_log_threads();
	cli_log(2, "read inputs: %.3f s; computing on the %s", timer_now() - t0,
		use_gpu ? "GPU" : "CPU");
	struct npy_array y;
	if (macko_operands_alloc_y(&op, o.out == MACKO_OUT_F16 ? NPY_F2 : NPY_F4, &y, o.output,
				   &err))
		cli_fatal(&err);
	t0 = timer_now();
	if (macko_multiply(&op.m, op.x.data, op.nvec, o.alpha, o.beta,
			   o.y_in ? op.y_in.data : NULL, y.data, o.out, use_gpu, &err))
		cli_fatal(&err);
	cli_log(2, "multiply: %.3f s", timer_now() - t0);
	if (npy_write(o.output, &y, &err))
		cli_fatal(&err);
	npy_free(&y);
	macko_operands_free(&op);
	return 0;
}

/* --matrix's matrix, or the random one that --rows, --cols, --density and
 * --seed describe; and its density. */
static void bench_matrix(const struct bench_options *o, struct macko *m, double *density)
{
	struct sp_err err;
	if (o->matrix) {
		if (macko_load(o->matrix, m, &err))
			cli_fatal(&err);
		struct macko_stats s;
		macko_stats(m, &s);
		*density = s.density;
		return;
	}
	struct macko_input in = {.name = "bench", .rows = o->rows, .cols = o->cols,
				 .density = o->density, .seed = o->seed};
	if (macko_input_compress(&in, m, NULL, &err))
		cli_fatal(&err);
	*density = o->density;
}

static int bench(int argc, char **argv)
{
	struct bench_options o = parse_bench(argc, argv);
	struct sp_err err, why = {""};
	if (gpu_probe(&why) <= 0)
		cli_die("bench: no usable CUDA device (%s)", why.msg);
	struct gpu_info info;
	if (gpu_query(0, &info, &err))
		cli_fatal(&err);
	struct macko m;
	double density;
	bench_matrix(&o, &m, &density);
	double copy_gbs;
	if (gpu_copy_bandwidth(0, 20, &copy_gbs, &err))
		cli_fatal(&err);
	struct macko_bench_opts bo = {o.nvec, o.warmup, o.reps, o.flush, o.kernels, o.seed};
	struct macko_bench_result res[3];
	int count;
	if (macko_run_bench(&m, &bo, res, &count, &err))
		cli_fatal(&err);
	double cublas_ms = 0;
	for (int i = 0; i < count; i++)
		if (!strcmp(res[i].kernel, "cublas"))
			cublas_ms = res[i].t.median_ms;

	static const char *const columns[] = {
		"gpu", "rows", "cols", "density", "vectors", "kernel", "median_us", "min_us",
		"max_us", "reps", "flush", "bytes", "gbs", "copy_gbs", "pct_of_copy", "speedup_vs_cublas",
		"rel_err"};
	enum { NCOLS = sizeof columns / sizeof *columns };
	struct csv_writer w;
	const char *path = o.output ? o.output : "-";
	if ((o.append ? csv_writer_open_append(&w, path, columns, NCOLS, &err)
		       : csv_writer_open(&w, path, columns, NCOLS, &err)))
		cli_fatal(&err);
	for (int i = 0; i < count; i++) {
		const struct macko_bench_result *r = &res[i];
		csv_writer_str(&w, info.name);
		csv_writer_int(&w, m.rows);
		csv_writer_int(&w, m.cols);
		csv_writer_double(&w, density, 4);
		csv_writer_int(&w, o.nvec);
		csv_writer_str(&w, r->kernel);
		csv_writer_double(&w, r->t.median_ms * 1e3, 5);
		csv_writer_double(&w, r->t.min_ms * 1e3, 5);
		csv_writer_double(&w, r->t.max_ms * 1e3, 5);
		csv_writer_int(&w, r->t.reps);
		csv_writer_int(&w, o.flush);
		csv_writer_double(&w, r->bytes, 10);
		csv_writer_double(&w, r->gbs, 5);
		csv_writer_double(&w, copy_gbs, 5);
		csv_writer_double(&w, 100 * r->gbs / copy_gbs, 4);
		if (cublas_ms > 0)
			csv_writer_double(&w, cublas_ms / r->t.median_ms, 4);
		else
			csv_writer_str(&w, "");
		csv_writer_double(&w, r->rel_err, 3);
		if (csv_writer_end_row(&w, &err))
			cli_fatal(&err);
	}
	if (csv_writer_commit(&w, &err))
		cli_fatal(&err);
	macko_free(&m);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cli_command commands[] = {{"bench", bench}, {0}};
	cli_init(argv[0]);
	cli_run_command(argc, argv, commands, multiply, usage);
}
