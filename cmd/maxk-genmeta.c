/* maxk-genmeta: MaxK-GNN warp work items (.warp4) from a CSR graph.
 * Options are parsed here; the work is lib/maxk/warp4.c,
 * lib/sparse/graph_load.c and, for --synthetic, lib/sparse/graph_gen.c.
 * A folder of MaxK-GNN graphs is done graph by graph, as the original
 * generate_meta.py does. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "sparse/csr.h"
#include "sparse/csr_npz.h"
#include "sparse/csr_raw.h"
#include "sparse/graph_gen.h"
#include "sparse/graph_load.h"
#include "formats/json_writer.h"
#include "core/text_out.h"
#include "core/timer.h"
#include "maxk/warp4.h"

static const char usage[] =
	"Usage: maxk-genmeta [OPTION]... GRAPH\n"
	"       maxk-genmeta [OPTION]... FOLDER -o OUTDIR\n"
	"       maxk-genmeta [OPTION]... --synthetic SPEC\n"
	"Cut every row of a graph into chunks of at most N neighbours and write the\n"
	"MaxK-GNN warp work items: int32 records (row, offset, length, 0), the layout\n"
	"of the original generate_meta.py. Prints statistics on stdout.\n"
	"\n"
	"GRAPH is a SciPy .npz (CSR or COO; only indptr is read), a Matrix Market\n"
	".mtx, an edge list (.csv, .tsv, .txt, .el, .edges: 'src dst' per line), or\n"
	"MaxK-GNN's NAME.indptr (raw int32; with NAME.indices beside it). A FOLDER\n"
	"is done as generate_meta.py does its graphs/ folder: every NAME.indptr in\n"
	"it gives OUTDIR/NAME.warp4 (OUTDIR is made if absent).\n"
	"\n"
	"  -o, --output FILE        write the .warp4 records to FILE (a FOLDER: into\n"
	"                           the folder FILE)\n"
	"  -w, --warp-max-nz N      neighbours per record, 1..65536 (default 64)\n"
	"      --check FILE         verify that FILE holds the records of GRAPH for N\n"
	"      --synthetic SPEC     generate a power-law graph instead of reading one:\n"
	"                           reddit_like, products_like, flickr_like, or\n"
	"                           powerlaw:nodes=N,edges=E[,sigma=S]; add ,seed=K\n"
	"      --seed K             seed for --synthetic (default 1)\n"
	"      --graph-out FILE     save the graph as a SciPy .npz (CSR)\n"
	"      --compress           deflate the --graph-out file\n"
	"      --undirected         edge lists: add the reverse of every edge\n"
	"      --one-based          edge lists: node ids start at 1\n"
	"      --json               statistics as one JSON object (a line per graph);\n"
	"                           printed also with -q\n"
	"  -q, --quiet              no statistics (but --json), nothing but errors\n"
	"  -v, --verbose            timings of each step on stderr\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Example:\n"
	"  maxk-genmeta --synthetic reddit_like --graph-out reddit.npz\n"
	"  maxk-genmeta reddit.npz -o reddit.warp4\n"
	"  maxk-genmeta graphs/ -o w12_nz64_warp_4/\n";

struct options {
	const char *graph, *output, *check, *synthetic, *graph_out;
	uint64_t seed;
	int seed_given, warp_max_nz, compress, json;
	struct graph_load_opts load;
};

static struct options parse_options(int argc, char **argv)
{
	enum { OPT_CHECK = 256, OPT_SYNTHETIC, OPT_SEED, OPT_GRAPH_OUT, OPT_COMPRESS,
	       OPT_UNDIRECTED, OPT_ONE_BASED, OPT_JSON };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"warp-max-nz", required_argument, NULL, 'w'},
		{"check", required_argument, NULL, OPT_CHECK},
		{"synthetic", required_argument, NULL, OPT_SYNTHETIC},
		{"seed", required_argument, NULL, OPT_SEED},
		{"graph-out", required_argument, NULL, OPT_GRAPH_OUT},
		{"compress", no_argument, NULL, OPT_COMPRESS},
		{"undirected", no_argument, NULL, OPT_UNDIRECTED},
		{"one-based", no_argument, NULL, OPT_ONE_BASED},
		{"json", no_argument, NULL, OPT_JSON},
		CLI_COMMON_LONGOPTS,
	};
	struct options o = {.warp_max_nz = WARP4_DEFAULT_MAX_NZ};
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:w:" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'w':
			o.warp_max_nz = (int)cli_int("--warp-max-nz", optarg, 1, WARP4_MAX_NZ_LIMIT);
			break;
		case OPT_CHECK: o.check = optarg; break;
		case OPT_SYNTHETIC: o.synthetic = optarg; break;
		case OPT_SEED:
			o.seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX);
			o.seed_given = 1;
			break;
		case OPT_GRAPH_OUT: o.graph_out = optarg; break;
		case OPT_COMPRESS: o.compress = 1; break;
		case OPT_UNDIRECTED: o.load.edgelist.undirected = 1; break;
		case OPT_ONE_BASED: o.load.edgelist.one_based = 1; break;
		case OPT_JSON: o.json = 1; break;
		default: cli_common_option(c, usage, argv);
		}
	}
	if (optind < argc)
		o.graph = argv[optind++];
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o.graph == !o.synthetic)
		cli_usage_error(o.graph ? "give GRAPH or --synthetic, not both" : "no GRAPH given");
	if (o.seed_given && !o.synthetic)
		cli_usage_error("--seed goes with --synthetic");
	if (o.compress && !o.graph_out)
		cli_usage_error("--compress goes with --graph-out");
	return o;
}

static void print_stats(const struct options *o, const char *name, const struct warp4_stats *s)
{
	if (cli_verbosity == 0 && !o->json)
		return;
	if (o->json) {
		const struct {
			const char *key;
			double v;
		} f[] = {{"mean_degree", s->mean_degree}, {"records_per_row", s->records_per_row},
			 {"empty_rows", (double)s->empty_rows}, {"fill", s->fill},
			 {"degree_imbalance", s->degree_imbalance}};
		printf("{\"graph\": ");
		json_writer_string(stdout, name);
		printf(", \"rows\": %lld, \"edges\": %lld, \"records\": %lld, "
		       "\"warp_max_nz\": %d, \"max_degree\": %lld",
		       (long long)s->rows, (long long)s->edges, (long long)s->records,
		       o->warp_max_nz, (long long)s->max_degree);
		for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
			printf(", \"%s\": ", f[i].key);
			json_writer_number(stdout, f[i].v);
		}
		printf("}\n");
		return;
	}
	fputs("graph             ", stdout);
	text_put(stdout, name, 0);
	putchar('\n');
	printf("rows              %lld\n", (long long)s->rows);
	printf("edges             %lld\n", (long long)s->edges);
	printf("records           %lld\n", (long long)s->records);
	printf("warp_max_nz       %d\n", o->warp_max_nz);
	printf("max_degree        %lld\n", (long long)s->max_degree);
	printf("mean_degree       %.2f\n", s->mean_degree);
	printf("records_per_row   %.3f\n", s->records_per_row);
	printf("empty_rows        %lld\n", (long long)s->empty_rows);
	printf("fill              %.3f\n", s->fill);
	printf("degree_imbalance  %.1f\n", s->degree_imbalance);
}

/* The graph's row pointers, from the cheapest source that has them (a
 * generator that needs no neighbours, or a loader that reads only indptr),
 * or the whole graph in *g when --graph-out will save it. */
static void load_graph(const struct options *o, const char *graph, int64_t **indptr,
		       int64_t *nrows, struct csr *g)
{
	struct sp_err err;
	double t0 = timer_now();
	if (o->synthetic) {
		cli_log_threads(); /* the generator's */
		struct graph_spec spec;
		if (graph_spec_parse(o->synthetic, &spec, &err))
			cli_usage_error("%s", err.msg);
		if (o->seed_given)
			spec.seed = o->seed;
		*nrows = spec.nodes;
		if (o->graph_out ? graph_gen(&spec, g, &err) : graph_gen_indptr(&spec, indptr, &err))
			cli_fatal(&err);
	} else if (o->graph_out) {
		if (graph_load(graph, &o->load, g, &err))
			cli_fatal(&err);
		*nrows = g->nrows;
	} else if (graph_load_indptr(graph, &o->load, indptr, nrows, &err)) {
		cli_fatal(&err);
	}
	if (o->graph_out)
		*indptr = g->indptr;
	cli_log(2, "read graph: %.3f s", timer_now() - t0);
}

/* One graph (graph, or --synthetic when NULL): checked, its records into
 * output (when not NULL), the graph into --graph-out, the statistics. */
static void genmeta(const struct options *o, const char *graph, const char *output)
{
	const char *name = graph ? graph : o->synthetic;
	int64_t *indptr, nrows;
	struct csr g = {0};
	struct sp_err err;

	/* Every check comes first, and the two outputs are put into place
	 * together, when both are written: a failure leaves neither. */
	load_graph(o, graph, &indptr, &nrows, &g);
	if (nrows == 0)
		cli_die("%s: graph has no rows", name);

	if (o->check) {
		int32_t *records;
		int64_t count;
		if (warp4_read(o->check, &records, &count, &err) ||
		    warp4_validate(records, count, indptr, nrows, o->warp_max_nz, o->check, &err))
			cli_fatal(&err);
		free(records);
		cli_log(1, "%s: %lld record%s match %s", o->check, (long long)count,
			sp_plural(count), name);
	}
	int32_t *records = NULL;
	int64_t count = 0;
	struct outfile out;
	outfile_hold_commits();
	if (output) {
		double t0 = timer_now();
		count = warp4_count(indptr, nrows, o->warp_max_nz);
		records = malloc((size_t)(count ? count : 1) * 4 * sizeof *records);
		if (!records)
			cli_die("%s: out of memory for %lld records", output, (long long)count);
		if (warp4_build(indptr, nrows, o->warp_max_nz, records, name, &err) ||
		    outfile_open(&out, output, &err) || warp4_write(&out, records, count, &err) ||
		    outfile_commit(&out, &err))
			cli_fatal(&err); /* cli_die removes the records' temporary */
		free(records);
		cli_log(2, "build and write records: %.3f s", timer_now() - t0);
	}
	if ((o->graph_out && csr_npz_save(o->graph_out, &g, o->compress, &err)) ||
	    outfile_commit_held(&err))
		cli_fatal(&err);
	struct warp4_stats s;
	warp4_stats(indptr, nrows, o->warp_max_nz, &s);
	print_stats(o, name, &s);
	if (o->graph_out)
		csr_free(&g);
	else
		free(indptr);
}

static int has_raw_suffix(const char *name)
{
	size_t n = strlen(name), m = strlen(CSR_RAW_SUFFIX);
	return n > m && !strcmp(name + n - m, CSR_RAW_SUFFIX);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder, as generate_meta.py does its graphs/: every NAME.indptr, in
 * name order, to OUTDIR/NAME.warp4. A failure stops there (the files
 * written before it are complete). */
static void genmeta_folder(const struct options *o)
{
	DIR *dir = opendir(o->graph);
	if (!dir)
		cli_die("%s: cannot open the folder: %s", o->graph, strerror(errno));
	char **names = NULL;
	size_t count = 0, cap = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		if (!has_raw_suffix(e->d_name))
			continue;
		if (count == cap) {
			cap = cap ? 2 * cap : 16;
			char **grown = realloc(names, cap * sizeof *names);
			if (!grown)
				cli_die("%s: out of memory", o->graph);
			names = grown;
		}
		if (!(names[count++] = strdup(e->d_name)))
			cli_die("%s: out of memory", o->graph);
	}
	closedir(dir);
	if (count == 0)
		cli_die("%s: no MaxK-GNN graph (NAME" CSR_RAW_SUFFIX ") in the folder", o->graph);
	qsort(names, count, sizeof *names, by_name);
	if (mkdir(o->output, 0777) && errno != EEXIST)
		cli_die("%s: cannot make the folder: %s", o->output, strerror(errno));
	for (size_t i = 0; i < count; i++) {
		size_t stem = strlen(names[i]) - strlen(CSR_RAW_SUFFIX);
		char graph[4096], output[4096];
		if (snprintf(graph, sizeof graph, "%s/%s", o->graph, names[i]) >= (int)sizeof graph ||
		    snprintf(output, sizeof output, "%s/%.*s.warp4", o->output, (int)stem,
			     names[i]) >= (int)sizeof output)
			cli_die("%s: path too long", names[i]);
		genmeta(o, graph, output);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	struct options o = parse_options(argc, argv);
	struct stat st;
	if (o.graph && stat(o.graph, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!o.output)
			cli_usage_error("%s is a folder: give -o OUTDIR for its .warp4 files", o.graph);
		if (o.check || o.graph_out)
			cli_usage_error("--check and --graph-out take one GRAPH, not a folder");
		genmeta_folder(&o);
	} else {
		genmeta(&o, o.graph, o.output);
	}
	return 0;
}
