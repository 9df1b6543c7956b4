/* The peak activation memory of a model run once, op after op in the
 * report's topological order, as a runtime that frees each tensor after
 * its last reader would hold it.
 *
 * Activations are the graph inputs and the outputs of staged ops
 * (stages.h); parameters and constants are not. A view (an op that runs
 * no kernel: Reshape, Flatten, ...) allocates nothing: its output shares
 * its first input's memory, which lives until the last reader of either.
 * An op's outputs are allocated while its inputs are still held (the
 * peak is measured there); graph inputs and outputs, the caller's, are
 * held throughout. Bytes are
 * elements times the --dtype size, as the op costs count them. */
#ifndef SPKIT_ACTIVATION_H
#define SPKIT_ACTIVATION_H

#include <stdint.h>

#include "core/err.h"
#include "partition/partition.h"

/* The peak into *bytes; fails only when out of memory. */
int activation_peak(const struct partition_report *r, int64_t *bytes, struct sp_err *err);

#endif
