/* graph-partition's analysis of one model, every operator a subgraph (a
 * kernel): shapes (shape_infer.h), cost and parallelism (op_cost.h),
 * stages and critical paths (stages.h), the roofline estimate and the
 * bottleneck class on a GPU (roofline.h), fusion candidates (fusion.h),
 * and the distributions over the model; then the report as a table, JSON,
 * CSV or Graphviz DOT.
 *
 *	struct partition_report r;
 *	if (partition_load(path, &r.g, &err) || partition_analyse(&r, &opts, &err))
 *		...
 *	if (partition_write("-", PARTITION_JSON, &r, &err))
 *		...
 *	partition_free(&r);
 */
#ifndef SPKIT_PARTITION_H
#define SPKIT_PARTITION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/err.h"
#include "partition/fusion.h"
#include "partition/hardware.h"
#include "partition/opgraph.h"
#include "partition/op_cost.h"
#include "partition/roofline.h"
#include "partition/shape_infer.h"
#include "partition/stages.h"

struct partition_options {
	struct shape_infer_opts si;
	enum hardware_dtype dtype;
	struct hardware_spec hw;
	enum roofline_thresholds thresholds;
	int all_ops; /* the table and DOT list constant ops too (stage -1) */
};

/* One operator's results, indexed by node. */
struct partition_op {
	struct op_cost cost;
	struct roofline_estimate roof;
	unsigned char unknown; /* no shape rule: counted as zero */
	unsigned char critical; /* on the critical path by FLOPs */
};

/* One entry of a distribution; id is the roofline_class of a bottleneck class. */
struct partition_count {
	const char *name;
	int64_t count;
	int id;
};

/* Thread-level parallelism buckets, as the graphs project's GraphPartitioner
 * reports them. */
enum { PARTITION_THREAD_BUCKETS = 5 };

struct partition_report {
	struct opgraph g;
	const struct partition_options *o;
	size_t *order;         /* the nodes in a topological order */
	struct partition_op *ops; /* per node */
	int64_t *stage;        /* per node; -1: a constant op */
	size_t *by_stage;      /* the staged nodes, stage by stage (in order within one) */
	size_t *stage_start;   /* stage s holds by_stage[stage_start[s] .. stage_start[s+1]) */
	unsigned char *is_param; /* per value */
	struct op_cost_totals totals;
	struct stages_summary stages;
	int64_t critical_path_flops;
	double critical_path_time_s, roofline_time_s;
	int64_t kernels, unknown_ops, depthwise_ops, grouped_ops;
	int64_t constant_ops; /* stage -1 */
	/* the distributions: op types (most common first), the classes of the
	 * thresholds used (all of them, zeros too), the thread buckets */
	struct partition_count *op_types, bottlenecks[ROOFLINE_NCLASSES],
		threads[PARTITION_THREAD_BUCKETS];
	size_t nop_types, nbottlenecks;
	double avg_threads; /* over the kernels */
	struct fusion *fusions;
	size_t nfusions;
};

/* An ONNX model, or a YAML model (model_yaml.h) when path ends in .yaml or
 * .yml. On failure g is empty. */
int partition_load(const char *path, struct opgraph *g, struct sp_err *err);
/* Analyse r->g (loaded; its shapes are inferred here) with o, which must
 * outlive r. On failure r can still be freed. */
int partition_analyse(struct partition_report *r, const struct partition_options *o,
		      struct sp_err *err);
void partition_free(struct partition_report *r);

/* The fusion chain's op types joined by '+' ("Conv+BatchNormalization+Relu"). */
void partition_fusion_pattern(const struct partition_report *r, const struct fusion *f, char *buf,
			      size_t size);

/* The report's formats; partition_format_names, indexed by them and ending
 * with NULL, are --format's names. */
enum partition_format { PARTITION_TABLE, PARTITION_JSON, PARTITION_CSV, PARTITION_DOT,
			PARTITION_NFORMATS };
extern const char *const partition_format_names[PARTITION_NFORMATS + 1];

/* The report in format to path ("-": standard output), through a temporary
 * file renamed into place, so a failed write leaves no file: table (one row
 * per operator, then the model), JSON (summary, ops, fusions), CSV (one row
 * per operator) or Graphviz DOT (coloured by bottleneck, a rank per stage).
 * The table and DOT leave the constant ops out unless o->all_ops. */
int partition_write(const char *path, enum partition_format format,
		    const struct partition_report *r, struct sp_err *err);
/* What body writes (ctx its data; -1 on a write error) to path, "-" being
 * standard output, as partition_write does: a file appears only whole. */
int partition_write_stream(const char *path, int (*body)(FILE *fp, const void *ctx),
			   const void *ctx, struct sp_err *err);

#endif
