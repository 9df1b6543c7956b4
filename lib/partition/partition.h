/* graph-partition's analysis of one model, every operator a subgraph (a
 * kernel): shapes (shape_infer.h), cost and parallelism (op_cost.h),
 * stages and critical paths (stages.h), the roofline estimate and the
 * bottleneck class on a GPU (roofline.h), fusion candidates (fusion.h),
 * and the distributions over the model; then the report as a table, JSON,
 * CSV or Graphviz DOT.
 *
 *	struct gp_report r;
 *	if (gp_load(path, &r.g, &err) || gp_analyse(&r, &opts, &err))
 *		...
 *	gp_write_json(stdout, &r);
 *	gp_free(&r);
 */
#ifndef SPKIT_PARTITION_H
#define SPKIT_PARTITION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/err.h"
#include "partition/fusion.h"
#include "partition/hardware.h"
#include "partition/onnx_model.h"
#include "partition/op_cost.h"
#include "partition/roofline.h"
#include "partition/shape_infer.h"
#include "partition/stages.h"

struct gp_options {
	struct si_opts si;
	enum hw_dtype dtype;
	struct hw_spec hw;
	enum rl_thresholds thresholds;
};

/* One operator's results, indexed by node. */
struct gp_op {
	struct op_cost cost;
	struct rl_estimate roof;
	unsigned char unknown; /* no shape rule: counted as zero */
	unsigned char critical; /* on the critical path by FLOPs */
};

/* One entry of a distribution; id is the rl_class of a bottleneck class. */
struct gp_count {
	const char *name;
	int64_t count;
	int id;
};

/* Thread-level parallelism buckets, as the seed's partitioner reports them. */
enum { GP_THREAD_BUCKETS = 5 };

struct gp_report {
	struct om_graph g;
	const struct gp_options *o;
	size_t *order;         /* the nodes in a topological order */
	struct gp_op *ops;     /* per node */
	int64_t *stage;        /* per node; -1: a constant op */
	size_t *by_stage;      /* the staged nodes, stage by stage (in order within one) */
	size_t *stage_start;   /* stage s holds by_stage[stage_start[s] .. stage_start[s+1]) */
	unsigned char *is_param; /* per value */
	struct oc_totals totals;
	struct stages_summary stages;
	int64_t critical_path_flops;
	double critical_path_time_s, roofline_time_s;
	int64_t kernels, unknown_ops, depthwise_ops, grouped_ops;
	/* the distributions: op types (most common first), the classes of the
	 * thresholds used (all of them, zeros too), the thread buckets */
	struct gp_count *op_types, bottlenecks[RL_NCLASSES], threads[GP_THREAD_BUCKETS];
	size_t nop_types, nbottlenecks;
	double avg_threads; /* over the kernels */
	struct fusion *fusions;
	size_t nfusions;
};

/* An ONNX model, or a YAML model (model_yaml.h) when path ends in .yaml or
 * .yml. On failure g is empty. */
int gp_load(const char *path, struct om_graph *g, struct sp_err *err);
/* Analyse r->g (loaded; its shapes are inferred here) with o, which must
 * outlive r. On failure r can still be freed. */
int gp_analyse(struct gp_report *r, const struct gp_options *o, struct sp_err *err);
void gp_free(struct gp_report *r);

/* The fusion chain's op types joined by '+' ("Conv+BatchNormalization+Relu"). */
void gp_fusion_pattern(const struct gp_report *r, const struct fusion *f, char *buf,
		       size_t size);

/* The report. Each returns -1 only when fp has a write error. */
int gp_write_table(FILE *fp, const struct gp_report *r);
int gp_write_json(FILE *fp, const struct gp_report *r);
int gp_write_dot(FILE *fp, const struct gp_report *r);
/* CSV, one row per operator, to path ("-": standard output), atomically. */
int gp_write_csv(const char *path, const struct gp_report *r, struct sp_err *err);

#endif
