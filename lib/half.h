/* IEEE 754 binary16 ("half", NumPy's f2) to and from float. Every half is
 * exactly representable as a float, so half_to_float is exact; the other
 * way rounds to nearest, ties to even, overflows to infinity, keeps
 * subnormals, and keeps NaN payloads the way NumPy does (so that
 * half -> float -> half is the identity on all 65536 bit patterns). */
#ifndef SPKIT_HALF_H
#define SPKIT_HALF_H

#include <stdint.h>

float half_to_float(uint16_t h);
uint16_t half_from_float(float f);

#endif
