/* Numbers as text, both ways, shared by the CSV and YAML code so that a
 * value written to a results file reads back the same everywhere.
 * Parsing is strict: the whole text must be the number (surrounding
 * blanks aside); "12abc", "1.5" for an integer, hex, "" are rejected. */
#ifndef SPKIT_NUM_H
#define SPKIT_NUM_H

#include <stddef.h>
#include <stdint.h>

enum num_status {
	NUM_OK = 0,
	NUM_SYNTAX = -1, /* not a number of the kind asked for */
	NUM_RANGE = -2,  /* a number, but it does not fit (integer overflow, 1e999) */
};

/* Decimal integer: [blanks] [+-] digits [blanks]. */
enum num_status num_parse_int(const char *s, int64_t *out);

/* Decimal floating point: [+-] (digits [. digits] | . digits) [e|E [+-] digits].
 * With allow_nonfinite, also inf, infinity and nan in any case, with an
 * optional sign and an optional leading '.' (so C's "inf"/"nan" and
 * YAML's ".inf"/"-.Inf"/".NaN" all read). Without it they are
 * NUM_SYNTAX. Overflow to infinity is NUM_RANGE; underflow rounds. */
enum num_status num_parse_double(const char *s, int allow_nonfinite, double *out);

/* Enough for any text num_format_double writes, with its NUL. */
#define NUM_DOUBLE_MAX 32

/* digits 0: the shortest "%.Ng" text (N <= 17) that reads back as exactly
 * v; digits 1..17: "%.{digits}g". NaN is "nan", infinities "inf"/"-inf".
 * Returns buf. */
const char *num_format_double(char buf[NUM_DOUBLE_MAX], double v, int digits);

/* Timings and the like: sort ascending; the median of a sorted array (the
 * mean of the middle two for an even count; n >= 1). */
void num_sort(double *v, size_t n);
double num_median_sorted(const double *v, size_t n);

#endif
