/* maxk-train: full-graph GNN training with MaxK (issue 5, not built yet)
 * and, for now, its kernel benchmark mode --bench-kernels (issue 4).
 * Options are parsed here; the work is kernels/maxk_*.cu. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csr.h"
#include "csvw.h"
#include "gpu.h"
#include "graph_gen.h"
#include "graph_load.h"
#include "maxk_exec.h"
#include "maxk_gpu.h"

static const char usage[] =
	"Usage: maxk-train --bench-kernels GRAPH [OPTION]...\n"
	"       maxk-train --bench-kernels --synthetic SPEC [OPTION]...\n"
	"Full-graph GNN training with the MaxK nonlinearity is not built yet; this\n"
	"version has the kernel benchmark of MaxK-GNN's kernels/main.cu: on one graph,\n"
	"for each hidden width H and each k, it times cuSPARSE SpMM on the dense MaxK\n"
	"features, the MaxK forward SpGEMM, the MaxK backward SSpMM (gathered, and\n"
	"scattered with atomics) and top-k, side by side on the GPU, checks each against\n"
	"cuSPARSE, and writes one CSV row each.\n"
	"\n"
	"GRAPH is a SciPy .npz, a Matrix Market .mtx or an edge list (see maxk-genmeta).\n"
	"\n"
	"      --bench-kernels      run the kernel benchmark (the only mode so far)\n"
	"      --synthetic SPEC     a generated graph: reddit_like, products_like,\n"
	"                           flickr_like or powerlaw:nodes=N,edges=E[,sigma=S]\n"
	"      --hidden LIST        hidden widths H, 1..1024 (default 256)\n"
	"      --maxk LIST          values of k, 1..H (default 16,32,64)\n"
	"      --reps N             timed repetitions (default 20); --warmup N (default 3)\n"
	"      --no-flush           do not flush the L2 cache between repetitions\n"
	"      --seed K             seed of the features (default 1)\n"
	"  -o, --output FILE        write the CSV to FILE (default: standard output)\n"
	"      --append             append rows to the -o file (header once)\n"
	"  -q, --quiet              no messages\n"
	"  -v, --verbose            progress on stderr\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Example:\n"
	"  maxk-train --bench-kernels --synthetic reddit_like --maxk 16,32,64 -o maxk.csv\n";

enum { MAX_LIST = 16 };

struct options {
	const char *graph, *synthetic, *output;
	int bench, append, reps, warmup, flush;
	int64_t hidden[MAX_LIST], maxk[MAX_LIST];
	int nhidden, nmaxk;
	uint64_t seed;
};

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_BENCH = 256, OPT_SYNTHETIC, OPT_HIDDEN, OPT_MAXK, OPT_REPS, OPT_WARMUP,
	       OPT_NO_FLUSH, OPT_SEED, OPT_APPEND };
	static const struct option longopts[] = {
		{"bench-kernels", no_argument, NULL, OPT_BENCH},
		{"synthetic", required_argument, NULL, OPT_SYNTHETIC},
		{"hidden", required_argument, NULL, OPT_HIDDEN},
		{"maxk", required_argument, NULL, OPT_MAXK},
		{"reps", required_argument, NULL, OPT_REPS},
		{"warmup", required_argument, NULL, OPT_WARMUP},
		{"no-flush", no_argument, NULL, OPT_NO_FLUSH},
		{"seed", required_argument, NULL, OPT_SEED},
		{"output", required_argument, NULL, 'o'},
		{"append", no_argument, NULL, OPT_APPEND},
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {.reps = 20, .warmup = 3, .flush = 1, .hidden = {256}, .nhidden = 1,
			    .maxk = {16, 32, 64}, .nmaxk = 3, .seed = 1};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_BENCH: o.bench = 1; break;
		case OPT_SYNTHETIC: o.synthetic = optarg; break;
		case OPT_HIDDEN:
			o.nhidden = cli_int_list("--hidden", optarg, o.hidden, MAX_LIST, 1, MAXK_GPU_MAX_WIDTH);
			break;
		case OPT_MAXK: o.nmaxk = cli_int_list("--maxk", optarg, o.maxk, MAX_LIST, 1, MAXK_GPU_MAX_WIDTH); break;
		case OPT_REPS: o.reps = (int)cli_int("--reps", optarg, 1, 1000000); break;
		case OPT_WARMUP: o.warmup = (int)cli_int("--warmup", optarg, 0, 1000000); break;
		case OPT_NO_FLUSH: o.flush = 0; break;
		case OPT_SEED: o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case 'o': o.output = optarg; break;
		case OPT_APPEND: o.append = 1; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc)
		o.graph = argv[optind++];
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.bench)
		cli_usage_error("training is not built yet: --bench-kernels is the only mode");
	if (!o.graph == !o.synthetic)
		cli_usage_error(o.graph ? "give GRAPH or --synthetic, not both" : "no GRAPH given");
	if (o.append && !o.output)
		cli_usage_error("--append needs -o FILE");
	for (int i = 0; i < o.nhidden; i++)
		for (int j = 0; j < o.nmaxk; j++)
			if (o.maxk[j] > o.hidden[i])
				cli_usage_error("--maxk %lld is larger than --hidden %lld",
						(long long)o.maxk[j], (long long)o.hidden[i]);
	return o;
}

static void load_graph(const struct options *o, struct csr *g)
{
	struct sp_err err;
	if (o->synthetic) {
		struct graph_spec spec;
		if (graph_spec_parse(o->synthetic, &spec, &err))
			cli_usage_error("%s", err.msg);
		if (graph_gen(&spec, g, &err))
			cli_fatal(&err);
	} else if (graph_load(o->graph, NULL, g, &err)) {
		cli_fatal(&err);
	}
	if (g->nrows == 0)
		cli_die("%s: graph has no rows", o->graph ? o->graph : o->synthetic);
	if (g->nrows != g->ncols)
		cli_die("%s: graph is %lld x %lld, not square", o->graph ? o->graph : o->synthetic,
			(long long)g->nrows, (long long)g->ncols);
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct sp_err err, why;
	if (gpu_probe(&why) == 0)
		cli_die("--bench-kernels: no usable CUDA device (%s)", why.msg);
	struct csr g;
	load_graph(&o, &g);
	const char *name = o.graph ? o.graph : o.synthetic;

	static const char *const columns[] = {"graph", "nodes", "edges", "hidden", "k", "kernel",
					      "median_ms", "min_ms", "max_ms", "reps", "gbs",
					      "speedup_vs_cusparse", "max_err"};
	enum { NCOLS = sizeof columns / sizeof *columns };
	struct csvw w;
	const char *path = o.output ? o.output : "-";
	if (o.append ? csvw_open_append(&w, path, columns, NCOLS, &err)
		     : csvw_open(&w, path, columns, NCOLS, &err))
		cli_fatal(&err);
	for (int i = 0; i < o.nhidden; i++) {
		for (int j = 0; j < o.nmaxk; j++) {
			struct maxk_bench_opts bo = {(int)o.hidden[i], (int)o.maxk[j], o.warmup, o.reps,
						     o.flush, o.seed};
			struct maxk_bench_result res[MAXK_BENCH_KERNELS];
			cli_log(2, "H = %lld, k = %lld", (long long)o.hidden[i], (long long)o.maxk[j]);
			if (maxk_run_bench(&g, &bo, res, &err)) {
				csvw_abort(&w);
				cli_fatal(&err);
			}
			for (int r = 0; r < MAXK_BENCH_KERNELS; r++) {
				csvw_str(&w, name);
				csvw_int(&w, g.nrows);
				csvw_int(&w, g.nnz);
				csvw_int(&w, o.hidden[i]);
				csvw_int(&w, o.maxk[j]);
				csvw_str(&w, res[r].kernel);
				csvw_double(&w, res[r].t.median_ms, 5);
				csvw_double(&w, res[r].t.min_ms, 5);
				csvw_double(&w, res[r].t.max_ms, 5);
				csvw_int(&w, res[r].t.reps);
				csvw_double(&w, res[r].gbs, 5);
				csvw_double(&w, res[0].t.median_ms / res[r].t.median_ms, 4);
				csvw_double(&w, res[r].max_err, 3);
				if (csvw_end_row(&w, &err))
					cli_fatal(&err);
			}
		}
	}
	if (csvw_commit(&w, &err))
		cli_fatal(&err);
	csr_free(&g);
	return 0;
}
