/* macko-compress: dense or sparse matrices to the MACKO format and back.
 * Options are parsed here; the work is lib/macko.c and lib/macko_npz.c. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "sparse/csr.h"
#include "sparse/graph_load.h"
#include "core/half.h"
#include "macko/macko.h"
#include "macko/macko_npz.h"
#include "formats/npy.h"
#include "macko/randmat.h"
#include "core/timer.h"

static const char usage[] =
	"Usage: macko-compress [OPTION]... INPUT -o OUTPUT.npz\n"
	"       macko-compress --random RxC [--density D] [--seed K] -o OUTPUT.npz\n"
	"       macko-compress --decompress MATRIX.npz -o DENSE.npy\n"
	"       macko-compress --stats INPUT\n"
	"Store a matrix in the MACKO format (fp16 values with 4-bit column deltas) as a\n"
	".npz with arrays values, deltas, row_indices and shape; or turn one back into a\n"
	"dense fp16 .npy.\n"
	"\n"
	"INPUT is a dense 2-d .npy (f2, f4 or f8; values are rounded to fp16) or a\n"
	"sparse matrix: a SciPy .npz (CSR or COO) or a Matrix Market .mtx (a pattern\n"
	"matrix has values 1, as SciPy reads it).\n"
	"\n"
	"A MACKO .npz INPUT is described (--stats) or re-written (--deflate).\n"
	"\n"
	"  -o, --output FILE      write the result to FILE (only when complete)\n"
	"      --density D        magnitude pruning first: keep the fraction D in (0, 1]\n"
	"                         of entries with the largest magnitudes\n"
	"      --threshold T      magnitude pruning first: zero entries with |v| < T\n"
	"      --random RxC       a random R x C fp16 matrix instead of INPUT, each entry\n"
	"                         nonzero with probability D (--density, default 0.5)\n"
	"      --seed K           seed of --random (default 1)\n"
	"      --decompress       INPUT is a MACKO .npz; write it as a dense f2 .npy\n"
	"      --stats            print rows, columns, nonzeros, padding zeros, density,\n"
	"                         effective density and bytes against dense fp16 and CSR\n"
	"      --deflate          deflate the members of the output .npz\n"
	"  -q, --quiet            no messages\n"
	"  -v, --verbose          timings on stderr\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Example:\n"
	"  macko-compress weights.npy --density 0.5 -o weights.macko.npz --stats\n"
	"  macko-compress --decompress weights.macko.npz -o back.npy\n";

struct options {
	const char *input, *output, *density_text, *threshold_text, *random_text, *seed_text;
	double density, threshold;
	int decompress, stats, deflate;
};

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_DENSITY = 256, OPT_THRESHOLD, OPT_DECOMPRESS, OPT_STATS, OPT_DEFLATE, OPT_RANDOM,
	       OPT_SEED };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"density", required_argument, NULL, OPT_DENSITY},
		{"threshold", required_argument, NULL, OPT_THRESHOLD},
		{"decompress", no_argument, NULL, OPT_DECOMPRESS},
		{"stats", no_argument, NULL, OPT_STATS},
		{"deflate", no_argument, NULL, OPT_DEFLATE},
		{"random", required_argument, NULL, OPT_RANDOM},
		{"seed", required_argument, NULL, OPT_SEED},
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {0};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case OPT_DENSITY: o.density_text = optarg; break;
		case OPT_THRESHOLD: o.threshold_text = optarg; break;
		case OPT_DECOMPRESS: o.decompress = 1; break;
		case OPT_STATS: o.stats = 1; break;
		case OPT_DEFLATE: o.deflate = 1; break;
		case OPT_RANDOM: o.random_text = optarg; break;
		case OPT_SEED: o.seed_text = optarg; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind == argc && !o.random_text)
		cli_usage_error("no INPUT given");
	if (optind < argc && o.random_text)
		cli_usage_error("give INPUT or --random, not both");
	o.input = o.random_text ? "--random" : argv[optind++];
	if (o.seed_text && !o.random_text)
		cli_usage_error("--seed goes with --random");
	if (o.random_text && (o.decompress || o.threshold_text))
		cli_usage_error("--random makes a new matrix: no --decompress or --threshold");
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.output && !o.stats)
		cli_usage_error("nothing to do: give -o OUTPUT or --stats");
	if (o.density_text && o.threshold_text)
		cli_usage_error("give --density or --threshold, not both");
	if (o.density_text)
		o.density = cli_fraction("--density", o.density_text);
	if (o.threshold_text)
		o.threshold = cli_double("--threshold", o.threshold_text, 0, 65504);
	if (o.decompress && (o.density_text || o.threshold_text))
		cli_usage_error("--decompress does not prune");
	if (o.decompress && o.deflate)
		cli_usage_error("--deflate applies to MACKO output, not to --decompress");
	return o;
}

/* --random RxC: a seeded random matrix of the asked density. */
static void make_random(const struct options *o, uint16_t **out, int64_t *rows, int64_t *cols)
{
	const char *x = strchr(o->random_text, 'x');
	if (!x)
		cli_usage_error("--random: '%s' is not RxC (e.g. 4096x4096)", o->random_text);
	char r[32];
	snprintf(r, sizeof r, "%.*s", (int)(x - o->random_text), o->random_text);
	*rows = cli_int("--random", r, 1, 1 << 20);
	*cols = cli_int("--random", x + 1, 1, 1 << 20);
	uint64_t seed = o->seed_text ? (uint64_t)cli_int("--seed", o->seed_text, 0, INT64_MAX) : 1;
	*out = malloc((size_t)(*rows * *cols) * 2);
	if (!*out)
		cli_die("--random: out of memory for %lld x %lld", (long long)*rows, (long long)*cols);
	randmat_fp16(*out, *rows, *cols, o->density_text ? o->density : 0.5, seed);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcasecmp(s + n - m, suffix);
}

/* A dense 2-d float .npy, as fp16 bits (rounded), pruned as asked. */
static void load_dense(const struct options *o, uint16_t **out, int64_t *rows, int64_t *cols)
{
	struct npy_array a;
	struct sp_err err;
	if (npy_read(o->input, &a, &err))
		cli_fatal(&err);
	if (a.ndim != 2)
		cli_die("%s: expected a 2-d matrix, found %d dimensions", o->input, a.ndim);
	if (a.dtype != NPY_F2 && a.dtype != NPY_F4 && a.dtype != NPY_F8)
		cli_die("%s: expected dtype f2, f4 or f8, found %s", o->input, npy_dtype_name(a.dtype));
	if (npy_cast(&a, NPY_F2, o->input, &err))
		cli_fatal(&err);
	*rows = a.shape[0];
	*cols = a.shape[1];
	*out = a.data;
	int64_t n = *rows * *cols;
	if (o->density_text && prune_to_density(*out, n, o->density, &err))
		cli_fatal(&err);
	if (o->threshold_text)
		prune_below(*out, n, o->threshold);
}

/* A pattern matrix (a .mtx "pattern") has values 1, as SciPy reads it. */
static void give_pattern_values(const struct options *o, struct csr *a)
{
	if (a->values)
		return;
	if (!(a->values = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *a->values)))
		cli_die("%s: out of memory", o->input);
	for (int64_t i = 0; i < a->nnz; i++)
		a->values[i] = 1;
}

/* Prune a sparse matrix's entries in place (values rounded to fp16 first,
 * the precision MACKO keeps). Density is of the whole matrix. */
static void prune_sparse(const struct options *o, struct csr *a)
{
	struct sp_err err;
	if (!o->density_text && !o->threshold_text)
		return;
	uint16_t *h = malloc((size_t)(a->nnz ? a->nnz : 1) * 2);
	if (!h)
		cli_die("%s: out of memory", o->input);
	for (int64_t i = 0; i < a->nnz; i++)
		h[i] = half_from_float(a->values[i]);
	if (o->density_text && a->nnz) {
		double keep = o->density * (double)a->nrows * (double)a->ncols / (double)a->nnz;
		if (keep < 1 && prune_to_density(h, a->nnz, keep, &err))
			cli_fatal(&err);
	}
	if (o->threshold_text)
		prune_below(h, a->nnz, o->threshold);
	for (int64_t i = 0; i < a->nnz; i++)
		a->values[i] = half_to_float(h[i]);
	free(h);
}

static void compress(const struct options *o, struct macko *m)
{
	struct sp_err err;
	double t0 = timer_now();
	if (o->random_text || has_suffix(o->input, ".npy")) {
		uint16_t *dense;
		int64_t rows, cols;
		if (o->random_text)
			make_random(o, &dense, &rows, &cols);
		else
			load_dense(o, &dense, &rows, &cols);
		cli_log(2, "read and prune: %.3f s", timer_now() - t0);
		t0 = timer_now();
		if (macko_compress_dense(dense, rows, cols, m, o->input, &err))
			cli_fatal(&err);
		free(dense);
	} else {
		struct csr a;
		if (graph_load(o->input, NULL, &a, &err) || csr_sort_rows(&a, o->input, &err))
			cli_fatal(&err);
		give_pattern_values(o, &a);
		prune_sparse(o, &a);
		cli_log(2, "read and prune: %.3f s", timer_now() - t0);
		t0 = timer_now();
		if (macko_compress_csr(&a, m, o->input, &err))
			cli_fatal(&err);
		csr_free(&a);
	}
	cli_log(2, "compress: %.3f s", timer_now() - t0);
}

static void print_stats(const struct macko *m)
{
	struct macko_stats s;
	macko_stats(m, &s);
	printf("rows               %lld\n", (long long)s.rows);
	printf("cols               %lld\n", (long long)s.cols);
	printf("nonzeros           %lld\n", (long long)s.nonzeros);
	printf("padding_zeros      %lld\n", (long long)s.padding_zeros);
	printf("density            %.6f\n", s.density);
	printf("effective_density  %.6f\n", s.effective_density);
	printf("bytes_macko        %lld\n", (long long)s.bytes_macko);
	printf("bytes_dense_fp16   %lld  (macko is %.3fx)\n", (long long)s.bytes_dense_fp16,
	       s.bytes_dense_fp16 ? (double)s.bytes_macko / s.bytes_dense_fp16 : 0);
	printf("bytes_csr32        %lld  (macko is %.3fx)\n", (long long)s.bytes_csr32,
	       s.bytes_csr32 ? (double)s.bytes_macko / s.bytes_csr32 : 0);
	printf("bytes_csr16        %lld  (macko is %.3fx)\n", (long long)s.bytes_csr16,
	       s.bytes_csr16 ? (double)s.bytes_macko / s.bytes_csr16 : 0);
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct macko m;
	struct sp_err err;

	/* A MACKO input is loaded as it is: decompressed, re-saved (--deflate) or
	 * described (--stats). */
	if (o.decompress ||
	    (!o.random_text && has_suffix(o.input, ".npz") && macko_npz_probe(o.input))) {
		if (o.density_text || o.threshold_text)
			cli_usage_error("%s is already MACKO: prune before compressing", o.input);
		if (macko_load(o.input, &m, &err))
			cli_fatal(&err);
	} else {
		compress(&o, &m);
	}
	if (o.output) {
		double t0 = timer_now();
		if (o.decompress) {
			struct npy_array a = {NPY_F2, 2, 2, {m.rows, m.cols}, NULL};
			if (npy_alloc(&a, o.output, &err))
				cli_fatal(&err);
			macko_decompress(&m, a.data);
			if (npy_write(o.output, &a, &err))
				cli_fatal(&err);
			npy_free(&a);
		} else if (macko_save(o.output, &m, o.deflate, &err)) {
			cli_fatal(&err);
		}
		cli_log(2, "write: %.3f s", timer_now() - t0);
	}
	if (o.stats && cli_verbosity > 0)
		print_stats(&m);
	macko_free(&m);
	return 0;
}
