/* The shape grid of a kernel-sample config, walked exactly as
 * estimate-train-time's ShapeGenerator walks it: an odometer whose last
 * dimension turns fastest, each dimension running start, start+step, ...
 * ('add') or start, start*step, ... ('mul') up to its end inclusive, then
 * back to its start while the dimension before it advances.
 *
 * Parts (--parts N --part I) deal the shapes round-robin by their 1-based
 * position n in the walk, as the original's sampling_controller does: part
 * I takes the shapes with n mod N = I - 1 (so of 4 parts, part 1 takes the
 * 4th, 8th, ... shapes and part 2 the 1st, 5th, ...), so a part here times
 * the shapes of the original's part of the same number. */
#ifndef SPKIT_SAMPLE_GRID_H
#define SPKIT_SAMPLE_GRID_H

#include <stdint.h>

#include "sample/sample_config.h"

/* How many values dimension i takes. */
uint64_t sample_grid_axis_len(const struct sample_grid *g, int i);
/* How many shapes the grid holds. */
uint64_t sample_grid_count(const struct sample_grid *g);

/* The first shape (every start). */
void sample_grid_first(const struct sample_grid *g, int64_t *shape);
/* Advance shape to the next one; 0 when it was the last. */
int sample_grid_next(const struct sample_grid *g, int64_t *shape);

/* Is the shape at 1-based position n part `part` (1-based) of `parts`'s? */
int sample_grid_owns(uint64_t n, int parts, int part);
/* How many of `total` shapes part `part` of `parts` takes. */
uint64_t sample_grid_part_count(uint64_t total, int parts, int part);

#endif
