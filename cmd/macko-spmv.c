/* macko-spmv: y = alpha A x + beta y for a MACKO matrix and 1..16 vectors,
 * and `macko-spmv bench`, MACKO against cuBLAS and cuSPARSE. Options are
 * parsed here; the work is lib/macko*.c and kernels/macko_*.cu. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "formats/csv_writer.h"
#include "core/gpu.h"
#include "core/half.h"
#include "macko/macko.h"
#include "macko/macko_dispatch.h"
#include "macko/macko_npz.h"
#include "formats/npy.h"
#include "macko/randmat.h"
#include "core/timer.h"

static const char usage[] =
	"Usage: macko-spmv [OPTION]... MATRIX.npz X.npy -o Y.npy\n"
	"       macko-spmv bench [BENCH OPTION]...\n"
	"Multiply a MACKO matrix (from macko-compress) by one vector or a few:\n"
	"y = alpha A x + beta y_in, fp16 values and x, fp32 accumulation. X holds C\n"
	"values (one vector) or N x C (N <= 16 vectors; on the GPU up to 8 in one\n"
	"pass over the matrix where their x fits in shared memory, more in several:\n"
	"see the man page); f2, f4 or f8, rounded to fp16. Y has R values or N x R.\n"
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
	"Example:\n"
	"  macko-compress w.npy --density 0.5 -o w.npz\n"
	"  macko-spmv w.npz x.npy -o y.npy --out-dtype f16\n"
	"  macko-spmv bench --rows 28672 --cols 8192 --density 0.1 --vectors 8\n";

struct options {
	const char *matrix, *x, *output, *y_in, *kernels_text;
	double alpha, beta;
	enum macko_out out;
	enum gpu_device_choice device;
	int check_finite;
	/* bench */
	int bench, append, nvec, reps, warmup, flush;
	int64_t rows, cols;
	double density;
	uint64_t seed;
	unsigned kernels;
};

static unsigned parse_kernels(const char *text)
{
	unsigned bits = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", text);
	for (char *save = NULL, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		if (!strcmp(k, "macko"))
			bits |= MACKO_KERNEL_MACKO;
		else if (!strcmp(k, "cublas"))
			bits |= MACKO_KERNEL_CUBLAS;
		else if (!strcmp(k, "cusparse"))
			bits |= MACKO_KERNEL_CUSPARSE;
		else
			cli_usage_error("--kernels: unknown kernel '%s' (macko, cublas, cusparse)", k);
	}
	if (!bits)
		cli_usage_error("--kernels: empty list");
	return bits;
}

static struct options parse_options(int argc, char **argv)
{
	/* The multiply options OPT_ALPHA..OPT_CHECK_FINITE, then the bench
	 * options OPT_ROWS..OPT_APPEND: each mode refuses the other's by range. */
	enum { OPT_ALPHA = 256, OPT_BETA, OPT_Y_IN, OPT_OUT_DTYPE, OPT_DEVICE, OPT_CHECK_FINITE,
	       OPT_ROWS, OPT_COLS, OPT_DENSITY, OPT_MATRIX, OPT_VECTORS, OPT_KERNELS, OPT_REPS,
	       OPT_WARMUP, OPT_FLUSH, OPT_NO_FLUSH, OPT_SEED, OPT_APPEND };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"alpha", required_argument, NULL, OPT_ALPHA},
		{"beta", required_argument, NULL, OPT_BETA},
		{"y-in", required_argument, NULL, OPT_Y_IN},
		{"out-dtype", required_argument, NULL, OPT_OUT_DTYPE},
		{"device", required_argument, NULL, OPT_DEVICE},
		{"check-finite", no_argument, NULL, OPT_CHECK_FINITE},
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
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {.alpha = 1, .out = MACKO_OUT_F32, .device = DEVICE_AUTO, .nvec = 1,
			    .reps = 100, .warmup = 10, .flush = 1, .rows = 8192, .cols = 8192,
			    .density = 0.5, .seed = 1, .kernels = 7};
	/* the name of an option of the other mode, if one is given; and of an
	 * option that shapes the random matrix */
	const char *bench_only = NULL, *spmv_only = NULL, *random_shape = NULL;
	if (argc > 1 && !strcmp(argv[1], "bench")) {
		o.bench = 1;
		argv++;
		argc--;
	}
	int c, li = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, &li)) != -1) {
		if (c >= OPT_ALPHA && c <= OPT_CHECK_FINITE)
			spmv_only = longopts[li].name;
		else if (c >= OPT_ROWS && c <= OPT_APPEND)
			bench_only = longopts[li].name;
		if (c >= OPT_ROWS && c <= OPT_DENSITY)
			random_shape = longopts[li].name;
		switch (c) {
		case 'o': o.output = optarg; break;
		case OPT_ALPHA: o.alpha = cli_double("--alpha", optarg, -1e30, 1e30); break;
		case OPT_BETA: o.beta = cli_double("--beta", optarg, -1e30, 1e30); break;
		case OPT_Y_IN: o.y_in = optarg; break;
		case OPT_OUT_DTYPE:
			if (!strcmp(optarg, "f16") || !strcmp(optarg, "float16"))
				o.out = MACKO_OUT_F16;
			else if (!strcmp(optarg, "f32") || !strcmp(optarg, "float32"))
				o.out = MACKO_OUT_F32;
			else
				cli_usage_error("--out-dtype: '%s' is not f16 or f32", optarg);
			break;
		case OPT_DEVICE: o.device = cli_device(optarg); break;
		case OPT_CHECK_FINITE: o.check_finite = 1; break;
		case OPT_ROWS: o.rows = cli_int("--rows", optarg, 1, 1 << 24); break;
		case OPT_COLS: o.cols = cli_int("--cols", optarg, 1, 1 << 24); break;
		case OPT_DENSITY: o.density = cli_fraction("--density", optarg); break;
		case OPT_MATRIX: o.matrix = optarg; break;
		case OPT_VECTORS: o.nvec = (int)cli_int("--vectors", optarg, 1, MACKO_MAX_VECTORS); break;
		case OPT_KERNELS: o.kernels = parse_kernels(optarg); break;
		case OPT_REPS: o.reps = (int)cli_int("--reps", optarg, 1, 1000000); break;
		case OPT_WARMUP: o.warmup = (int)cli_int("--warmup", optarg, 0, 1000000); break;
		case OPT_FLUSH: o.flush = 1; break;
		case OPT_NO_FLUSH: o.flush = 0; break;
		case OPT_SEED: o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_APPEND: o.append = 1; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (o.bench) {
		if (spmv_only)
			cli_usage_error("--%s is not a bench option (it goes with MATRIX.npz X.npy)",
					spmv_only);
		if (optind < argc)
			cli_usage_error("unexpected argument '%s'", argv[optind]);
		if (o.append && !o.output)
			cli_usage_error("--append needs -o FILE");
		if (o.matrix && random_shape)
			cli_usage_error("--%s shapes the random matrix; --matrix gives one", random_shape);
		return o;
	}
	if (bench_only)
		cli_usage_error("--%s belongs to 'macko-spmv bench'", bench_only);
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

static int64_t first_nonfinite_half(const uint16_t *h, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (half_is_nonfinite(h[i]))
			return i;
	return -1;
}

static int64_t first_nonfinite_float(const float *f, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(f[i]))
			return i;
	return -1;
}

/* A 1-d (one vector) or 2-d (N vectors) float array of vectors of length
 * `len`, converted to `to`. */
static struct npy_array load_vectors(const char *path, int64_t len, const char *what,
				     enum npy_dtype to)
{
	struct npy_array a;
	struct sp_err err;
	if (npy_read(path, &a, &err))
		cli_fatal(&err);
	if (a.dtype != NPY_F2 && a.dtype != NPY_F4 && a.dtype != NPY_F8)
		cli_die("%s: expected dtype f2, f4 or f8, found %s", path, npy_dtype_name(a.dtype));
	int64_t last = a.ndim ? a.shape[a.ndim - 1] : 0;
	if (a.ndim < 1 || a.ndim > 2 || last != len)
		cli_die("%s: expected %lld %s (or N x %lld), found shape of %d dimensions ending in %lld",
			path, (long long)len, what, (long long)len, a.ndim, (long long)last);
	if (a.ndim == 2 && (a.shape[0] < 1 || a.shape[0] > MACKO_MAX_VECTORS))
		cli_die("%s: %lld vectors, expected 1 to %d", path, (long long)a.shape[0],
			MACKO_MAX_VECTORS);
	if (npy_cast(&a, to, path, &err))
		cli_fatal(&err);
	return a;
}

static int multiply(const struct options *o)
{
	struct sp_err err;
	struct macko m;
	double t0 = timer_now();
	if (macko_load(o->matrix, &m, &err))
		cli_fatal(&err);
	struct npy_array x = load_vectors(o->x, m.cols, "columns", NPY_F2);
	int nvec = x.ndim == 2 ? (int)x.shape[0] : 1;
	struct npy_array y_in = {0};
	if (o->y_in) {
		y_in = load_vectors(o->y_in, m.rows, "rows", NPY_F4);
		if (y_in.ndim != x.ndim || (x.ndim == 2 && y_in.shape[0] != x.shape[0]))
			cli_die("%s: shape does not match y (%d vectors of %lld)", o->y_in, nvec,
				(long long)m.rows);
	}
	if (o->check_finite) {
		int64_t bad;
		if ((bad = first_nonfinite_half(m.values, m.elements)) >= 0)
			cli_die("%s: stored element %lld is not finite (--check-finite)", o->matrix,
				(long long)bad);
		if ((bad = first_nonfinite_half(x.data, npy_count(&x))) >= 0)
			cli_die("%s: element %lld is not finite in fp16 (--check-finite)", o->x,
				(long long)bad);
		if (o->y_in && (bad = first_nonfinite_float(y_in.data, npy_count(&y_in))) >= 0)
			cli_die("%s: element %lld is not finite (--check-finite)", o->y_in,
				(long long)bad);
	}
	int use_gpu = cli_use_gpu(o->device);
	cli_log(2, "read inputs: %.3f s; computing on the %s", timer_now() - t0,
		use_gpu ? "GPU" : "CPU");
	struct npy_array y = {o->out == MACKO_OUT_F16 ? NPY_F2 : NPY_F4,
			      o->out == MACKO_OUT_F16 ? 2 : 4, x.ndim, {0}, NULL};
	if (x.ndim == 2) {
		y.shape[0] = nvec;
		y.shape[1] = m.rows;
	} else {
		y.shape[0] = m.rows;
	}
	if (npy_alloc(&y, o->output, &err))
		cli_fatal(&err);
	t0 = timer_now();
	if (macko_multiply(&m, x.data, nvec, o->alpha, o->beta, o->y_in ? y_in.data : NULL, y.data,
			   o->out, use_gpu, &err))
		cli_fatal(&err);
	cli_log(2, "multiply: %.3f s", timer_now() - t0);
	if (npy_write(o->output, &y, &err))
		cli_fatal(&err);
	npy_free(&x);
	npy_free(&y_in);
	npy_free(&y);
	macko_free(&m);
	return 0;
}

static void bench_matrix(const struct options *o, struct macko *m, double *density)
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
	size_t n = (size_t)o->rows * (size_t)o->cols;
	uint16_t *dense = malloc(n * 2);
	if (!dense)
		cli_die("bench: out of memory for a %lld x %lld matrix", (long long)o->rows,
			(long long)o->cols);
	randmat_fp16(dense, o->rows, o->cols, o->density, o->seed);
	if (macko_compress_dense(dense, o->rows, o->cols, m, "bench", &err))
		cli_fatal(&err);
	free(dense);
	*density = o->density;
}

static int bench(const struct options *o)
{
	struct sp_err err, why = {""};
	if (gpu_probe(&why) <= 0)
		cli_die("bench: no usable CUDA device (%s)", why.msg);
	struct gpu_info info;
	if (gpu_query(0, &info, &err))
		cli_fatal(&err);
	struct macko m;
	double density;
	bench_matrix(o, &m, &density);
	double copy_gbs;
	if (gpu_copy_bandwidth(0, 20, &copy_gbs, &err))
		cli_fatal(&err);
	struct macko_bench_opts bo = {o->nvec, o->warmup, o->reps, o->flush, o->kernels, o->seed};
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
	const char *path = o->output ? o->output : "-";
	if ((o->append ? csv_writer_open_append(&w, path, columns, NCOLS, &err)
		       : csv_writer_open(&w, path, columns, NCOLS, &err)))
		cli_fatal(&err);
	for (int i = 0; i < count; i++) {
		const struct macko_bench_result *r = &res[i];
		csv_writer_str(&w, info.name);
		csv_writer_int(&w, m.rows);
		csv_writer_int(&w, m.cols);
		csv_writer_double(&w, density, 4);
		csv_writer_int(&w, o->nvec);
		csv_writer_str(&w, r->kernel);
		csv_writer_double(&w, r->t.median_ms * 1e3, 5);
		csv_writer_double(&w, r->t.min_ms * 1e3, 5);
		csv_writer_double(&w, r->t.max_ms * 1e3, 5);
		csv_writer_int(&w, r->t.reps);
		csv_writer_int(&w, o->flush);
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
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	return o.bench ? bench(&o) : multiply(&o);
}
