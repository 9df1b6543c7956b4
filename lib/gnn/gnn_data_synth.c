/* --synthetic datasets, generated in memory (gnn_data.h):
 *
 * csbm: a contextual stochastic block model, for accuracy that means
 * something. Node i is in class i mod C (C equal communities). Each of
 * n*D/2 undirected edges picks a uniform node u and, with probability p_in,
 * a partner in u's class, else one in another class; edges are mirrored
 * and repeats dropped (for sparse graphs the mean degree stays a hair
 * under D). Features are snr * mu_c + N(0, I): mu_c a random unit vector a
 * class, so snr is how many noise deviations the class means lie from the
 * origin.
 *
 * The defaults (3000 nodes, 5 classes, 32 features, degree 10, p_in 0.7,
 * snr 1) were chosen with logistic regression on this generator's output
 * (NumPy/SciPy, its 60/20/20 split, mean test accuracy over seeds 1-5;
 * chance is 20%): raw features, what an MLP sees, 47.1%; features
 * averaged over the node and its neighbours (one GNN aggregation) 76.5%;
 * over two hops 93.0%, three 95.4%. An MLP stays about 30 points below a
 * GNN, and the GNN has room left to show differences. p_in 0.8 gives
 * 47.1 / 85.3 / 97.6 / 99.0, too close to 100% at three layers.
 *
 * reddit_like, products_like, flickr_like, powerlaw: graph_gen's power-law
 * graphs (directed: each row's neighbours are drawn independently, which
 * is all speed work needs), standard-normal features and uniform labels at
 * the real datasets' widths and class counts, and their split fractions.
 *
 * Randomness comes in fixed blocks of rows (or edges), each from its own
 * stream, so the data is the same for any thread count. */
#include "gnn/gnn_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/coo.h"
#include "sparse/graph_gen.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "sparse/synth_spec.h"

enum { BLOCK_ROWS = 4096, BLOCK_EDGES = 1 << 16 };

/* Stream families, far above graph_gen's (which numbers its streams by
 * row block from 0): the one seed drives the graph and the data. */
#define STREAM(family, i) (((uint64_t)(family) << 48) + (uint64_t)(i))
enum { FAMILY_ROWS = 1, FAMILY_MEANS, FAMILY_EDGES, FAMILY_SPLIT };

struct csbm {
	long long nodes, classes, feat, seed;
	double deg, p_in, snr;
};

static const struct csbm csbm_defaults = {3000, 5, 32, 1, 10, 0.7, 1.0};

/* The power-law presets' data: Reddit (GraphSAGE's split 153,431 / 23,831
 * / 55,703), ogbn-products (sales ranking 196,615 / 39,323 / 2,213,091),
 * Flickr (GraphSAINT's 50 / 25 / 25). */
static const struct preset {
	const char *name;
	long long feat, classes;
	double train, val;
} presets[] = {
	{"reddit_like", 602, 41, 0.66, 0.10},
	{"products_like", 100, 47, 0.08, 0.016},
	{"flickr_like", 500, 7, 0.50, 0.25},
	{"powerlaw", 64, 8, 0.60, 0.20},
};

static int out_of_memory(struct sp_err *err)
{
	return sp_fail(err, "--synthetic: out of memory");
}

static int data_alloc(struct gnn_dataset *d, int64_t n, long long feat, long long classes,
		      struct sp_err *err)
{
	d->n = n;
	d->nfeat = (int)feat;
	d->nclass = (int)classes;
	d->features = malloc((size_t)n * (size_t)feat * sizeof *d->features);
	d->labels = malloc((size_t)n * sizeof *d->labels);
	d->split = calloc((size_t)n, 1);
	return d->features && d->labels && d->split ? 0 : out_of_memory(err);
}

/* Features (and, without class means, uniform labels) for one block of
 * rows. */
struct rows_job {
	struct gnn_dataset *d;
	const float *means; /* classes x nfeat (csbm), or NULL */
	double snr;
	uint64_t seed;
};

static void fill_rows(void *ctx, int64_t block)
{
	const struct rows_job *j = ctx;
	struct gnn_dataset *d = j->d;
	struct rng r;
	rng_init(&r, j->seed, STREAM(FAMILY_ROWS, block));
	int64_t end = (block + 1) * BLOCK_ROWS < d->n ? (block + 1) * BLOCK_ROWS : d->n;
	for (int64_t i = block * BLOCK_ROWS; i < end; i++) {
		float *x = d->features + i * d->nfeat;
		if (!j->means)
			d->labels[i] = (int32_t)rng_below(&r, (uint64_t)d->nclass);
		for (int k = 0; k < d->nfeat; k += 2) {
			double a, b;
			rng_normal2(&r, &a, &b);
			x[k] = (float)a;
			if (k + 1 < d->nfeat)
				x[k + 1] = (float)b;
		}
		if (!j->means)
			continue;
		const float *mu = j->means + (int64_t)d->labels[i] * d->nfeat;
		for (int k = 0; k < d->nfeat; k++)
			x[k] += (float)(j->snr * mu[k]);
	}
}

static void fill_all_rows(struct gnn_dataset *d, const float *means, double snr, uint64_t seed)
{
	struct rows_job job = {d, means, snr, seed};
	parallel_for((d->n + BLOCK_ROWS - 1) / BLOCK_ROWS, fill_rows, &job);
}

/* A random permutation cut into train, val, the rest test. */
static int split_random(struct gnn_dataset *d, double train, double val, uint64_t seed,
			struct sp_err *err)
{
	int64_t n = d->n, ntrain = llround(train * (double)n), nval = llround(val * (double)n);
	if (ntrain < 1 || nval < 1 || n - ntrain - nval < 1)
		return sp_fail(err, "--synthetic: %lld nodes leave a split empty", (long long)n);
	int32_t *perm = malloc((size_t)n * sizeof *perm);
	if (!perm)
		return out_of_memory(err);
	struct rng r;
	rng_init(&r, seed, STREAM(FAMILY_SPLIT, 0));
	for (int64_t i = 0; i < n; i++)
		perm[i] = (int32_t)i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t k = (int64_t)rng_below(&r, (uint64_t)i + 1);
		int32_t t = perm[i];
		perm[i] = perm[k];
		perm[k] = t;
	}
	for (int64_t i = 0; i < n; i++)
		d->split[perm[i]] = i < ntrain ? GNN_TRAIN : i < ntrain + nval ? GNN_VAL : GNN_TEST;
	free(perm);
	return 0;
}

/* ---- csbm ---- */

struct edges_job {
	const struct csbm *c;
	struct coo *e;
};

static void draw_edges(void *ctx, int64_t block)
{
	const struct edges_job *j = ctx;
	const struct csbm *c = j->c;
	uint64_t n = (uint64_t)c->nodes, k = (uint64_t)c->classes;
	struct rng r;
	rng_init(&r, c->seed, STREAM(FAMILY_EDGES, block));
	int64_t end = (block + 1) * BLOCK_EDGES < j->e->n ? (block + 1) * BLOCK_EDGES : j->e->n;
	for (int64_t i = block * BLOCK_EDGES; i < end; i++) {
		uint64_t u = rng_below(&r, n), cls = u % k, v;
		if (rng_uniform(&r) < c->p_in) {
			uint64_t members = (n - cls + k - 1) / k; /* nodes cls, cls + k, ... */
			do
				v = cls + k * rng_below(&r, members);
			while (v == u);
		} else {
			do
				v = rng_below(&r, n);
			while (v % k == cls);
		}
		j->e->rows[i] = (int32_t)u;
		j->e->cols[i] = (int32_t)v;
	}
}

static int csbm_graph(const struct csbm *c, struct csr *g, struct sp_err *err)
{
	struct coo e;
	int64_t m = llround((double)c->nodes * c->deg / 2);
	if (coo_init(&e, m, 0, "--synthetic", err))
		return -1;
	e.n = m;
	struct edges_job job = {c, &e};
	parallel_for((m + BLOCK_EDGES - 1) / BLOCK_EDGES, draw_edges, &job);
	if (coo_to_csr(&e, c->nodes, c->nodes, COO_MIRROR, g, "--synthetic", err))
		return -1;
	csr_drop_duplicates(g);
	return 0;
}

/* Unit vectors, one a class. */
static float *csbm_means(const struct csbm *c)
{
	float *mu = malloc((size_t)(c->classes * c->feat) * sizeof *mu);
	if (!mu)
		return NULL;
	struct rng r;
	rng_init(&r, (uint64_t)c->seed, STREAM(FAMILY_MEANS, 0));
	for (long long k = 0; k < c->classes; k++) {
		float *m = mu + k * c->feat;
		double norm = 0;
		for (long long f = 0; f < c->feat; f++) {
			m[f] = (float)rng_normal(&r);
			norm += (double)m[f] * m[f];
		}
		for (long long f = 0; f < c->feat; f++)
			m[f] = (float)(m[f] / sqrt(norm));
	}
	return mu;
}

static int csbm_make(char *items, int dry, struct gnn_dataset *d, struct sp_err *err)
{
	struct csbm c = csbm_defaults;
	const struct spec_key keys[] = {
		{"nodes", 0, 4, (double)CSR_MAX_DIM, &c.nodes},
		{"classes", 0, 2, GNN_MAX_CLASSES, &c.classes},
		{"feat", 0, 1, 1 << 20, &c.feat},
		{"deg", 1, 0, 1e6, &c.deg},
		{"p_in", 1, 0, 1, &c.p_in},
		{"snr", 1, 0, 1e6, &c.snr},
		{"seed", 0, 0, 9.2e18, &c.seed},
	};
	if (items && synth_spec_parse(items, keys, sizeof keys / sizeof *keys,
				 "csbm: nodes, classes, feat, deg, p_in, snr, seed", NULL, 0, err))
		return -1;
	/* Two nodes a class at least, so every node has a partner in its class. */
	if (c.nodes < 2 * c.classes)
		return sp_fail(err, "--synthetic: csbm: %lld nodes are too few for %lld classes "
				    "(2 a class at least)", c.nodes, c.classes);
	if (c.deg > (double)(c.nodes - 1))
		return sp_fail(err, "--synthetic: csbm: mean degree %g exceeds the %lld other nodes",
			       c.deg, c.nodes - 1);
	if (dry)
		return 0;
	snprintf(d->name, sizeof d->name, "csbm");
	if (data_alloc(d, c.nodes, c.feat, c.classes, err))
		return -1;
	float *mu = csbm_means(&c);
	if (!mu)
		return out_of_memory(err);
	for (int64_t i = 0; i < d->n; i++)
		d->labels[i] = (int32_t)(i % c.classes);
	fill_all_rows(d, mu, c.snr, (uint64_t)c.seed);
	free(mu);
	return csbm_graph(&c, &d->graph, err) ||
		       split_random(d, 0.6, 0.2, (uint64_t)c.seed, err)
		       ? -1
		       : 0;
}

/* ---- power-law graphs ---- */

static int powerlaw_make(const char *name, char *items, int dry, struct gnn_dataset *d,
			 struct sp_err *err)
{
	const struct preset *p = NULL;
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
		if (!strcmp(name, presets[i].name))
			p = &presets[i];
	if (!p)
		return sp_fail(err, "--synthetic: unknown dataset '%s' (csbm, reddit_like, "
				    "products_like, flickr_like, powerlaw:nodes=N,edges=E)", name);
	long long feat = p->feat, classes = p->classes;
	const struct spec_key keys[] = {
		{"feat", 0, 1, 1 << 20, &feat},
		{"classes", 0, 1, GNN_MAX_CLASSES, &classes},
	};
	/* graph_gen parses the graph's keys (nodes, edges, sigma, seed). */
	char graph[256];
	size_t len = (size_t)snprintf(graph, sizeof graph, "%s:", name);
	struct graph_spec gs;
	if ((items && synth_spec_parse(items, keys, 2, NULL, graph + len, sizeof graph - len, err)) ||
	    graph_spec_parse(graph, &gs, err))
		return -1;
	if (dry)
		return 0;
	snprintf(d->name, sizeof d->name, "%s", gs.name);
	if (graph_gen(&gs, &d->graph, err) || data_alloc(d, gs.nodes, feat, classes, err))
		return -1;
	fill_all_rows(d, NULL, 0, gs.seed);
	return split_random(d, p->train, p->val, gs.seed, err);
}

/* Parses SPEC and, unless dry, generates the dataset. */
static int synthetic(const char *spec, int dry, struct gnn_dataset *d, struct sp_err *err)
{
	memset(d, 0, sizeof *d);
	char buf[256];
	if (strlen(spec) >= sizeof buf)
		return sp_fail(err, "--synthetic: spec is too long");
	strcpy(buf, spec);
	size_t head = strcspn(buf, ":,");
	char *items = buf[head] ? buf + head + 1 : NULL;
	buf[head] = '\0';
	int rc = !strcmp(buf, "csbm") ? csbm_make(items, dry, d, err)
				      : powerlaw_make(buf, items, dry, d, err);
	if (rc)
		gnn_data_free(d);
	return rc;
}

int gnn_data_synthetic(const char *spec, struct gnn_dataset *d, struct sp_err *err)
{
	return synthetic(spec, 0, d, err);
}

int gnn_data_synthetic_check(const char *spec, struct sp_err *err)
{
	struct gnn_dataset unused;
	return synthetic(spec, 1, &unused, err);
}
