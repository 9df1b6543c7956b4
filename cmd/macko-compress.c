/* macko-compress: dense or sparse matrices to the MACKO format and back.
 * Options are parsed here; the work is lib/macko/: macko_input (the matrix
 * the user names, pruned and compressed), macko_npz (MACKO files) and
 * macko_output (the form written). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/cli.h"
#include "common/progress.h"
#include "core/timer.h"
#include "formats/json_writer.h"
#include "macko/macko.h"
#include "macko/macko_input.h"
#include "macko/macko_npz.h"
#include "macko/macko_output.h"

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
	"sparse matrix: a SciPy .npz (CSR or COO), a Matrix Market .mtx (a pattern\n"
	"matrix has values 1, as SciPy reads it) or an edge list (.csv, .tsv, .txt, .el,\n"
	".edges: \"ROW COL\" or \"ROW COL VALUE\" a line, ids from 0, values 1 when none\n"
	"is given, max id + 1 rows and columns).\n"
	"\n"
	"A MACKO .npz INPUT is described (--stats) or re-written (--deflate). One array\n"
	"of any other .npz (np.savez of a model's layers) is INPUT with --member NAME.\n"
	"\n"
	"  -o, --output FILE      write the result to FILE (only when complete)\n"
	"      --density D        magnitude pruning first: keep the fraction D in (0, 1]\n"
	"                         of entries with the largest magnitudes\n"
	"      --threshold T      magnitude pruning first: zero entries with |v| < T\n"
	"      --random RxC       a random R x C fp16 matrix instead of INPUT, each entry\n"
	"                         nonzero with probability D (--density, default 0.5)\n"
	"      --seed K           seed of --random (default 1)\n"
	"      --member NAME      INPUT is an .npz: compress its array NAME (a dense\n"
	"                         2-d matrix), reading no other member\n"
	"      --decompress       INPUT is a MACKO .npz; write it as a dense f2 .npy\n"
	"      --stats            print rows, columns, nonzeros, padding zeros, density,\n"
	"                         effective density and bytes against dense fp16 and CSR\n"
	"                         (on stdout, also with -q)\n"
	"      --json             --stats as one JSON object (every digit)\n"
	"      --deflate          deflate the members of the output .npz\n"
	"  -q, --quiet            no messages (errors and --stats only)\n"
	"  -v, --verbose          timings on stderr\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Example:\n"
	"  macko-compress weights.npy --density 0.5 -o weights.macko.npz --stats\n"
	"  macko-compress --decompress weights.macko.npz -o back.npy\n"
	"  macko-compress model.npz --member fc1 --density 0.3 -o fc1.macko.npz\n";

struct options {
	struct macko_input in;
	const char *output;
	enum macko_output form;
	int stats, json;
};

static int has_npz_suffix(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && !strcasecmp(path + n - 4, ".npz");
}

/* --random RxC: the shape of the random matrix. */
static void parse_shape(const char *text, int64_t *rows, int64_t *cols)
{
	const char *x = strchr(text, 'x');
	if (!x)
		cli_usage_error("--random: '%s' is not RxC (e.g. 4096x4096)", text);
	char r[32];
	snprintf(r, sizeof r, "%.*s", (int)(x - text), text);
	*rows = cli_int("--random", r, 1, 1 << 20);
	*cols = cli_int("--random", x + 1, 1, 1 << 20);
}

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_DENSITY = 256, OPT_THRESHOLD, OPT_DECOMPRESS, OPT_STATS, OPT_DEFLATE, OPT_RANDOM,
	       OPT_SEED, OPT_MEMBER, OPT_JSON };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"density", required_argument, NULL, OPT_DENSITY},
		{"threshold", required_argument, NULL, OPT_THRESHOLD},
		{"decompress", no_argument, NULL, OPT_DECOMPRESS},
		{"stats", no_argument, NULL, OPT_STATS},
		{"deflate", no_argument, NULL, OPT_DEFLATE},
		{"random", required_argument, NULL, OPT_RANDOM},
		{"seed", required_argument, NULL, OPT_SEED},
		{"member", required_argument, NULL, OPT_MEMBER},
		{"json", no_argument, NULL, OPT_JSON},
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {.in = {.density = 0.5, .seed = 1}};
	const char *density_text = NULL, *threshold_text = NULL, *random_text = NULL,
		   *seed_text = NULL;
	int decompress = 0, deflate = 0;
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case OPT_DENSITY: density_text = optarg; break;
		case OPT_THRESHOLD: threshold_text = optarg; break;
		case OPT_DECOMPRESS: decompress = 1; break;
		case OPT_STATS: o.stats = 1; break;
		case OPT_DEFLATE: deflate = 1; break;
		case OPT_RANDOM: random_text = optarg; break;
		case OPT_SEED: seed_text = optarg; break;
		case OPT_MEMBER: o.in.member = optarg; break;
		case OPT_JSON: o.json = 1; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind == argc && !random_text)
		cli_usage_error("no INPUT given");
	if (optind < argc && random_text)
		cli_usage_error("give INPUT or --random, not both");
	o.in.path = random_text ? NULL : argv[optind++];
	o.in.name = random_text ? "--random" : o.in.path;
	if (seed_text && !random_text)
		cli_usage_error("--seed goes with --random");
	if (o.json && !o.stats)
		cli_usage_error("--json goes with --stats");
	if (o.in.member && (random_text || decompress))
		cli_usage_error("--member names an array of INPUT: no --random or --decompress");
	if (o.in.member && !has_npz_suffix(o.in.path))
		cli_usage_error("--member takes an array of an .npz, not of '%s'", o.in.path);
	if (o.in.member) {
		/* messages name the member as the .npz reader does */
		static char name[4096];
		snprintf(name, sizeof name, "%s: member '%s'", o.in.path, o.in.member);
		o.in.name = name;
	}
	if (random_text && (decompress || threshold_text))
		cli_usage_error("--random makes a new matrix: no --decompress or --threshold");
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.output && !o.stats)
		cli_usage_error("nothing to do: give -o OUTPUT or --stats");
	if (density_text && threshold_text)
		cli_usage_error("give --density or --threshold, not both");
	if (density_text) {
		o.in.prune = MACKO_PRUNE_DENSITY;
		o.in.keep = cli_fraction("--density", density_text);
	}
	if (threshold_text) {
		o.in.prune = MACKO_PRUNE_BELOW;
		o.in.threshold = cli_double("--threshold", threshold_text, 0, 65504);
	}
	if (decompress && o.in.prune != MACKO_PRUNE_NONE)
		cli_usage_error("--decompress does not prune");
	if (decompress && deflate)
		cli_usage_error("--deflate applies to MACKO output, not to --decompress");
	o.form = decompress ? MACKO_OUTPUT_DENSE : deflate ? MACKO_OUTPUT_NPZ_DEFLATED
							    : MACKO_OUTPUT_NPZ;
	if (random_text) {
		/* --density is the random matrix's, not a pruning */
		parse_shape(random_text, &o.in.rows, &o.in.cols);
		if (density_text)
			o.in.density = o.in.keep;
		o.in.prune = MACKO_PRUNE_NONE;
		if (seed_text)
			o.in.seed = (uint64_t)cli_int("--seed", seed_text, 0, INT64_MAX);
	}
	return o;
}

static double ratio(int64_t a, int64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/* The statistics, a line each or (json) one object; the same numbers and
 * units in both, JSON with every digit. */
static void print_stats(const struct macko *m, int json)
{
	struct macko_stats s;
	macko_stats(m, &s);
	const struct {
		const char *name;
		int64_t count;
		double real; /* where count < 0 */
	} f[] = {
		{"rows", s.rows, 0},
		{"cols", s.cols, 0},
		{"nonzeros", s.nonzeros, 0},
		{"padding_zeros", s.padding_zeros, 0},
		{"density", -1, s.density},
		{"effective_density", -1, s.effective_density},
		{"bytes_macko", s.bytes_macko, 0},
		{"bytes_dense_fp16", s.bytes_dense_fp16, 0},
		{"bytes_csr32", s.bytes_csr32, 0},
		{"bytes_csr16", s.bytes_csr16, 0},
		{"macko_over_dense_fp16", -1, ratio(s.bytes_macko, s.bytes_dense_fp16)},
		{"macko_over_csr32", -1, ratio(s.bytes_macko, s.bytes_csr32)},
		{"macko_over_csr16", -1, ratio(s.bytes_macko, s.bytes_csr16)},
	};
	enum { N = sizeof f / sizeof *f, TABLE = N - 3 };
	if (json) {
		for (size_t i = 0; i < N; i++) {
			printf("%s\"%s\": ", i ? ", " : "{", f[i].name);
			if (f[i].count >= 0)
				printf("%lld", (long long)f[i].count);
			else
				json_writer_number(stdout, f[i].real);
		}
		printf("}\n");
		return;
	}
	/* the ratios stand beside the byte counts they compare */
	for (size_t i = 0; i < TABLE; i++) {
		printf("%-18s ", f[i].name);
		if (f[i].count >= 0)
			printf("%lld", (long long)f[i].count);
		else
			printf("%.6f", f[i].real);
		if (i >= TABLE - 3)
			printf("  (macko is %.3fx)", f[TABLE + (i - (TABLE - 3))].real);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct macko m;
	struct sp_err err;
	struct progress p;
	struct sp_report report = progress_report(&p);

	/* A MACKO input is loaded as it is: decompressed, re-saved (--deflate) or
	 * described (--stats). */
	if (o.form == MACKO_OUTPUT_DENSE ||
	    (o.in.path && !o.in.member && macko_input_is_macko(o.in.path))) {
		if (o.in.prune != MACKO_PRUNE_NONE)
			cli_usage_error("%s is already MACKO: prune before compressing", o.in.path);
		if (macko_load(o.in.path, &m, &err))
			cli_fatal(&err);
	} else if (cli_log_threads(), macko_input_compress(&o.in, &m, &report, &err)) {
		cli_fatal(&err);
	}
	if (o.output) {
		double t0 = timer_now();
		if (macko_output_write(o.output, &m, o.form, &err))
			cli_fatal(&err);
		cli_log(2, "write: %.3f s", timer_now() - t0);
	}
	if (o.stats)
		print_stats(&m, o.json);
	macko_free(&m);
	return 0;
}
