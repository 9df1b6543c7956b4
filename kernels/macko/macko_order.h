/* The gather order of the eight-vector MACKO kernel, chosen at upload:
 * kernels/macko/macko_order.cu says why and how. */
#ifndef SPKIT_MACKO_ORDER_H
#define SPKIT_MACKO_ORDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/err.h"

/* Bytes of the order array for a device layout of `elements` elements. */
size_t macko_order_bytes(int64_t elements);

/* Fills `order` (device, macko_order_bytes long) from the device layout's
 * deltas and row ends (device); enqueued on the default stream. */
int macko_order_choose(const void *deltas, const int32_t *ends, int64_t rows, int64_t elements,
		       void *order, struct sp_err *err);

#ifdef __cplusplus
}
#endif

#endif
