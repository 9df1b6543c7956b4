/* Gradient-boosted regression trees for kernel-sample predict, deterministic
 * for a seed: the same rows, parameters and seed give the same trees on
 * every machine.
 *
 * The model of a time t from features x (all positive) is
 *
 *   log t = c0 + sum_j c_j log x_j  +  rate * sum_trees tree(x)
 *
 * The base is a power law in the last `nbase` features (flops and bytes,
 * sample_features.h), fitted by least squares with a small ridge: it carries
 * the trend between the grid points a sweep measured, which trees alone can
 * only step across (a tree's prediction is constant between two measured
 * sizes, and flat beyond the largest). The trees then fit what the power
 * law misses (launch floors, tile quantization, a GEMM algorithm switch).
 * Fitting log t makes every error relative: a 5% miss costs the same on a
 * 10 us kernel as on a 10 ms one, which is what MAPE and the median relative
 * error score.
 *
 * Trees are grown level by level to `depth`, on a row subsample drawn from
 * the seed (`subsample`, without replacement), each split the one of
 * largest squared-error reduction over every feature and every midpoint
 * between consecutive distinct values, with at least `min_leaf` rows on
 * each side; ties go to the first feature, then the smallest threshold. A
 * leaf holds the mean residual of its rows. One pass over each feature's
 * presorted rows scores the splits of every node of a level, so a tree
 * costs depth x features x rows. */
#ifndef SPKIT_SAMPLE_GBT_H
#define SPKIT_SAMPLE_GBT_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define GBT_MAX_FEATURES 16
#define GBT_MAX_DEPTH 12
#define GBT_MAX_TREES 100000

struct gbt_params {
	int trees, depth, min_leaf;
	double rate, subsample;
	uint64_t seed;
	int base; /* 1: the power-law base; 0: the mean of log t */
};

/* Defaults: 400 trees of depth 4, rate 0.1, subsample 0.8, 2 rows a leaf,
 * --seed 0 (fit), the power-law base. */
struct gbt_params gbt_default_params(void);

/* A node: a split (feature >= 0: x[feature] <= value goes left) or a leaf
 * (feature -1, value its output, the rate applied). Children come after
 * their parent, so a walk always ends. */
struct gbt_node {
	int feature;
	double value;
	int left, right;
};

struct gbt_tree {
	int n;
	struct gbt_node *nodes;
};

struct gbt {
	int nfeat, nbase;
	double base[GBT_MAX_FEATURES + 1]; /* c0, then one per base feature */
	int ntrees;
	struct gbt_tree *trees;
};

/* Fit on n rows of x (row-major, n x nfeat, every value positive and
 * finite) and y (log times). On failure (out of memory) g is empty. */
int gbt_fit(struct gbt *g, const double *x, const double *y, size_t n, int nfeat, int nbase,
	    const struct gbt_params *params, struct sp_err *err);
/* log t for one row of features. */
double gbt_predict(const struct gbt *g, const double *x);
void gbt_free(struct gbt *g);

#endif
