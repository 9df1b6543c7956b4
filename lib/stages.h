/* Concurrency of an operator graph: stages as topological levels, the most
 * ops in one stage, and the critical path by op count and by FLOPs (the
 * longest path weighted by each op's FLOPs).
 *
 * Ops that depend on no graph input (an Identity of an initializer, a
 * Constant, arithmetic on constants) run before everything, once: they get
 * no stage (-1) and are not on any path. An op's stage is 0 when it reads
 * only graph inputs and such constants, else one more than the latest
 * stage among the ops producing its inputs. */
#ifndef SPKIT_STAGES_H
#define SPKIT_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "onnx_model.h"

struct stages_summary {
	int64_t stages;              /* number of stages */
	int64_t max_parallel_ops;    /* the most ops in one stage */
	int64_t critical_path_ops;   /* ops on the longest path */
	int64_t critical_path_flops; /* FLOPs on the heaviest path */
};

/* order: a topological order of the nodes; flops: per node (indexed by
 * node); stage receives each node's stage (-1: constant). */
int stages_compute(const struct om_graph *g, const size_t *order, const int64_t *flops,
		   int64_t *stage, struct stages_summary *s, struct sp_err *err);

#endif
