/* Concurrency of an operator graph: stages as topological levels, the most
 * ops in one stage, and the critical path by op count and as the heaviest
 * path under a weight per op (FLOPs, or roofline time).
 *
 * Constant ops run before everything, once, or are folded by any runtime:
 * an op that reads no graph input and no output of a staged op (an
 * Identity of an initializer, a Constant, arithmetic on constants), and
 * Shape and Size, which read only dims that are known here. They get no
 * stage (-1) and are not on any path. An op's stage is 0 when it reads
 * only graph inputs and constants, else one more than the latest stage
 * among the ops producing its inputs; the ops of one stage can run
 * concurrently. */
#ifndef SPKIT_STAGES_H
#define SPKIT_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "partition/opgraph.h"

struct stages_summary {
	int64_t stages;              /* number of stages */
	int64_t max_parallel_ops;    /* the most ops in one stage */
	int64_t critical_path_ops;   /* ops on the longest path: one per stage */
};

/* order: a topological order of the nodes; stage receives each node's
 * stage (-1: constant). */
int stages_assign(const struct opgraph *g, const size_t *order, int64_t *stage,
		  struct stages_summary *s, struct sp_err *err);

/* The heaviest path through the staged ops, each weighing weight[node]
 * (saturating sums): its weight into *total, and on_path[node] set to 1 for
 * its ops when on_path is not NULL (the first such path in order). */
int stages_heaviest_path(const struct opgraph *g, const size_t *order, const int64_t *stage,
			 const int64_t *weight, int64_t *total, unsigned char *on_path,
			 struct sp_err *err);

#endif
