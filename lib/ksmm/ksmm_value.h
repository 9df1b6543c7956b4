/* One element of a KSMM array in its dtype's storage (fp32 as float, fp16
 * and bf16 as uint16_t bits), as a double and back. Inline: the CPU
 * reference and the chain call them per element, with t a constant where
 * it matters. Storing rounds to nearest even (NumPy's astype for fp16). */
#ifndef SPKIT_KSMM_VALUE_H
#define SPKIT_KSMM_VALUE_H

#include <stdint.h>
#include <string.h>

#include "core/bf16.h"
#include "core/half.h"
#include "ksmm/ksmm.h"

static inline __attribute__((always_inline)) double ksmm_value(enum ksmm_dtype t,
								 const void *v, int64_t i)
{
	switch (t) {
	case KSMM_F16:
		return half_to_float(((const uint16_t *)v)[i]);
	case KSMM_BF16:
		return bf16_to_float(((const uint16_t *)v)[i]);
	default:
		return ((const float *)v)[i];
	}
}

static inline void ksmm_value_store(enum ksmm_dtype t, void *v, int64_t i, double x)
{
	switch (t) {
	case KSMM_F16:
		((uint16_t *)v)[i] = half_from_double(x);
		break;
	case KSMM_BF16:
		/* Through float first: a double-rounding tie needs 2^-17
		 * relative precision, which the callers' values never test. */
		((uint16_t *)v)[i] = bf16_from_float((float)x);
		break;
	default:
		((float *)v)[i] = (float)x;
	}
}

#endif
