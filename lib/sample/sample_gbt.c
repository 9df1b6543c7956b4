#include "sample/sample_gbt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

struct gbt_params gbt_default_params(void)
{
	return (struct gbt_params){.trees = 400, .depth = 4, .min_leaf = 2, .rate = 0.1,
				   .subsample = 0.8, .seed = 0, .base = 1};
}

/* Solve a x = b (k x k, row-major, overwritten) by elimination with partial
 * pivoting; a (near) zero pivot leaves that unknown 0. */
static void solve(double *a, double *b, double *out, int k)
{
	for (int c = 0; c < k; c++) {
		int p = c;
		for (int r = c + 1; r < k; r++)
			if (fabs(a[r * k + c]) > fabs(a[p * k + c]))
				p = r;
		if (p != c) {
			for (int j = 0; j < k; j++) {
				double t = a[c * k + j];
				a[c * k + j] = a[p * k + j], a[p * k + j] = t;
			}
			double t = b[c];
			b[c] = b[p], b[p] = t;
		}
		if (fabs(a[c * k + c]) < 1e-300)
			continue;
		for (int r = c + 1; r < k; r++) {
			double f = a[r * k + c] / a[c * k + c];
			for (int j = c; j < k; j++)
				a[r * k + j] -= f * a[c * k + j];
			b[r] -= f * b[c];
		}
	}
	for (int c = k - 1; c >= 0; c--) {
		double s = b[c];
		for (int j = c + 1; j < k; j++)
			s -= a[c * k + j] * out[j];
		out[c] = fabs(a[c * k + c]) < 1e-300 ? 0 : s / a[c * k + c];
	}
}

/* The power law: ridge least squares of y on the logs of the last nbase
 * features, standardized (a ridge of 1e-3 per row keeps collinear ones,
 * flops and bytes of a square GEMM, from trading huge opposite weights). */
static void fit_base(struct gbt *g, const double *x, const double *y, size_t n)
{
	int k = g->nbase, first = g->nfeat - k;
	double mean_y = 0, mu[GBT_MAX_FEATURES] = {0}, sd[GBT_MAX_FEATURES] = {0};
	double a[GBT_MAX_FEATURES * GBT_MAX_FEATURES] = {0}, b[GBT_MAX_FEATURES] = {0};
	double w[GBT_MAX_FEATURES] = {0};
	for (size_t i = 0; i < n; i++) {
		mean_y += y[i] / (double)n;
		for (int j = 0; j < k; j++)
			mu[j] += log(x[i * (size_t)g->nfeat + (size_t)(first + j)]) / (double)n;
	}
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < k; j++) {
			double d = log(x[i * (size_t)g->nfeat + (size_t)(first + j)]) - mu[j];
			sd[j] += d * d / (double)n;
		}
	for (int j = 0; j < k; j++)
		sd[j] = sqrt(sd[j]);
	for (size_t i = 0; i < n; i++) {
		double z[GBT_MAX_FEATURES];
		for (int j = 0; j < k; j++) {
			double lx = log(x[i * (size_t)g->nfeat + (size_t)(first + j)]);
			z[j] = sd[j] > 0 ? (lx - mu[j]) / sd[j] : 0;
		}
		for (int j = 0; j < k; j++) {
			b[j] += z[j] * (y[i] - mean_y);
			for (int l = 0; l < k; l++)
				a[j * k + l] += z[j] * z[l];
		}
	}
	for (int j = 0; j < k; j++)
		a[j * k + j] += 1e-3 * (double)n;
	solve(a, b, w, k);
	g->base[0] = mean_y;
	for (int j = 0; j < k; j++) {
		g->base[1 + j] = sd[j] > 0 ? w[j] / sd[j] : 0;
		g->base[0] -= g->base[1 + j] * mu[j];
	}
}

static double base_of(const struct gbt *g, const double *x)
{
	double v = g->base[0];
	for (int j = 0; j < g->nbase; j++)
		v += g->base[1 + j] * log(x[g->nfeat - g->nbase + j]);
	return v;
}

static double tree_predict(const struct gbt_tree *t, const double *x)
{
	int i = 0;
	while (t->nodes[i].feature >= 0)
		i = x[t->nodes[i].feature] <= t->nodes[i].value ? t->nodes[i].left
								 : t->nodes[i].right;
	return t->nodes[i].value;
}

double gbt_predict(const struct gbt *g, const double *x)
{
	double v = base_of(g, x);
	for (int t = 0; t < g->ntrees; t++)
		v += tree_predict(&g->trees[t], x);
	return v;
}

void gbt_free(struct gbt *g)
{
	for (int t = 0; t < g->ntrees; t++)
		free(g->trees[t].nodes);
	free(g->trees);
	memset(g, 0, sizeof *g);
}

struct pair {
	double v;
	size_t i;
};

static int compare_pairs(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* What growing a tree needs, allocated once for all trees. */
struct grow {
	const double *x;
	size_t n;
	int nf;
	const struct gbt_params *p;
	size_t *order;     /* nf x n: the rows by each feature, ascending */
	double *resid;     /* y minus the model so far */
	int *node_of;      /* the node a row sits in, -1 when out of the subsample */
	size_t *perm;      /* for drawing the subsample */
	/* per node of a level */
	double *sum, *lsum, *last, *gain, *thr;
	size_t *cnt, *lcnt;
	int *feat;
};

/* One level's best split of each node [lo, hi) over every feature. */
static void best_splits(struct grow *w, int lo, int hi)
{
	int width = hi - lo;
	for (int a = 0; a < width; a++)
		w->gain[a] = 0, w->feat[a] = -1;
	for (int f = 0; f < w->nf; f++) {
		for (int a = 0; a < width; a++)
			w->lsum[a] = 0, w->lcnt[a] = 0, w->last[a] = -INFINITY;
		const size_t *ord = w->order + (size_t)f * w->n;
		for (size_t s = 0; s < w->n; s++) {
			size_t r = ord[s];
			int a = w->node_of[r] - lo;
			if (a < 0 || a >= width)
				continue;
			double v = w->x[r * (size_t)w->nf + (size_t)f];
			size_t lc = w->lcnt[a], rc = w->cnt[a] - lc;
			if (lc >= (size_t)w->p->min_leaf && rc >= (size_t)w->p->min_leaf &&
			    v > w->last[a]) {
				double ls = w->lsum[a], rs = w->sum[a] - ls;
				double gain = ls * ls / (double)lc + rs * rs / (double)rc -
					      w->sum[a] * w->sum[a] / (double)w->cnt[a];
				if (gain > w->gain[a] + 1e-12) {
					double mid = w->last[a] + (v - w->last[a]) / 2;
					w->gain[a] = gain;
					w->feat[a] = f;
					w->thr[a] = mid < v ? mid : w->last[a];
				}
			}
			w->lsum[a] += w->resid[r];
			w->lcnt[a]++;
			w->last[a] = v;
		}
	}
}

static void draw_subsample(struct grow *w, struct rng *rng)
{
	size_t m = (size_t)llround(w->p->subsample * (double)w->n);
	if (m < 1)
		m = 1;
	if (m > w->n)
		m = w->n;
	for (size_t i = 0; i < w->n; i++)
		w->perm[i] = i, w->node_of[i] = -1;
	for (size_t i = 0; i < m; i++) { /* the first m of a Fisher-Yates shuffle */
		size_t j = i + (size_t)rng_below(rng, w->n - i), t = w->perm[i];
		w->perm[i] = w->perm[j], w->perm[j] = t;
		w->node_of[w->perm[i]] = 0;
	}
}

static void grow_tree(struct grow *w, struct gbt_tree *t)
{
	int lo = 0, hi = 1;
	t->n = 1;
	for (int d = 0;; d++) {
		int width = hi - lo;
		for (int a = 0; a < width; a++)
			w->sum[a] = 0, w->cnt[a] = 0;
		for (size_t r = 0; r < w->n; r++) {
			int a = w->node_of[r] - lo;
			if (a >= 0 && a < width)
				w->sum[a] += w->resid[r], w->cnt[a]++;
		}
		if (d < w->p->depth)
			best_splits(w, lo, hi);
		for (int a = 0; a < width; a++) {
			struct gbt_node *nd = &t->nodes[lo + a];
			if (d < w->p->depth && w->feat[a] >= 0) {
				*nd = (struct gbt_node){w->feat[a], w->thr[a], t->n, t->n + 1};
				t->n += 2;
			} else {
				double mean = w->cnt[a] ? w->sum[a] / (double)w->cnt[a] : 0;
				*nd = (struct gbt_node){-1, w->p->rate * mean, 0, 0};
			}
		}
		if (t->n == hi)
			return;
		for (size_t r = 0; r < w->n; r++) {
			int i = w->node_of[r];
			if (i >= lo && i < hi && t->nodes[i].feature >= 0)
				w->node_of[r] = w->x[r * (size_t)w->nf + (size_t)t->nodes[i].feature] <=
							t->nodes[i].value
							? t->nodes[i].left
							: t->nodes[i].right;
		}
		lo = hi, hi = t->n;
	}
}

static int presort(struct grow *w)
{
	struct pair *pairs = malloc(w->n * sizeof *pairs);
	if (!pairs)
		return -1;
	for (int f = 0; f < w->nf; f++) {
		for (size_t i = 0; i < w->n; i++)
			pairs[i] = (struct pair){w->x[i * (size_t)w->nf + (size_t)f], i};
		qsort(pairs, w->n, sizeof *pairs, compare_pairs);
		for (size_t i = 0; i < w->n; i++)
			w->order[(size_t)f * w->n + i] = pairs[i].i;
	}
	free(pairs);
	return 0;
}

static void grow_free(struct grow *w)
{
	free(w->order), free(w->resid), free(w->node_of), free(w->perm);
	free(w->sum), free(w->lsum), free(w->last), free(w->gain), free(w->thr);
	free(w->cnt), free(w->lcnt), free(w->feat);
}

int gbt_fit(struct gbt *g, const double *x, const double *y, size_t n, int nfeat, int nbase,
	    const struct gbt_params *params, struct sp_err *err)
{
	memset(g, 0, sizeof *g);
	g->nfeat = nfeat;
	g->nbase = params->base ? nbase : 0;
	struct grow w = {.x = x, .n = n, .nf = nfeat, .p = params};
	size_t level = (size_t)1 << params->depth, nodes = 2 * level - 1;
	w.order = malloc((size_t)nfeat * n * sizeof *w.order);
	w.resid = malloc(n * sizeof *w.resid);
	w.node_of = malloc(n * sizeof *w.node_of);
	w.perm = malloc(n * sizeof *w.perm);
	w.sum = malloc(level * sizeof(double)), w.lsum = malloc(level * sizeof(double));
	w.last = malloc(level * sizeof(double)), w.gain = malloc(level * sizeof(double));
	w.thr = malloc(level * sizeof(double));
	w.cnt = malloc(level * sizeof(size_t)), w.lcnt = malloc(level * sizeof(size_t));
	w.feat = malloc(level * sizeof(int));
	g->trees = calloc((size_t)params->trees, sizeof *g->trees);
	if (!w.order || !w.resid || !w.node_of || !w.perm || !w.sum || !w.lsum || !w.last ||
	    !w.gain || !w.thr || !w.cnt || !w.lcnt || !w.feat || !g->trees || presort(&w))
		goto oom;
	fit_base(g, x, y, n);
	for (size_t i = 0; i < n; i++)
		w.resid[i] = y[i] - base_of(g, x + i * (size_t)nfeat);
	struct rng rng;
	rng_init(&rng, params->seed, 0);
	for (int t = 0; t < params->trees; t++) {
		struct gbt_tree *tr = &g->trees[t];
		tr->nodes = malloc(nodes * sizeof *tr->nodes);
		if (!tr->nodes)
			goto oom;
		g->ntrees = t + 1;
		draw_subsample(&w, &rng);
		grow_tree(&w, tr);
		struct gbt_node *fit = realloc(tr->nodes, (size_t)tr->n * sizeof *fit);
		if (fit)
			tr->nodes = fit;
		for (size_t i = 0; i < n; i++)
			w.resid[i] -= tree_predict(tr, x + i * (size_t)nfeat);
	}
	grow_free(&w);
	return 0;
oom:
	grow_free(&w);
	gbt_free(g);
	return sp_fail(err, "out of memory fitting %d trees on %zu rows", params->trees, n);
}
