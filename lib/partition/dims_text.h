/* Tensor dims as text, "1x3x224x224" (--input-shape's NAME=DIMS). */
#ifndef SPKIT_DIMS_TEXT_H
#define SPKIT_DIMS_TEXT_H

#include <stdint.h>

#include "core/err.h"

/* At most OPGRAPH_MAX_DIMS positive dims into dims; on error a usage-style
 * message naming option. */
int dims_text_parse(const char *text, const char *option, int *ndim, int64_t *dims,
		    struct sp_err *err);

#endif
