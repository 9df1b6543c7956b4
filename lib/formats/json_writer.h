/* Writing JSON text: strings escaped, and numbers that read back as the
 * very double written (the shortest such text, num_format_double), the two
 * parts that are easy to get wrong. Every program's JSON goes through
 * here, so no value loses digits to a fixed "%.4f" or "%.6g". */
#ifndef SPKIT_JSONW_H
#define SPKIT_JSONW_H

#include <stdio.h>

#include "core/num.h"

/* Writes s as a quoted JSON string: quote, backslash and control
 * characters escaped, UTF-8 characters as they are, and each byte that is
 * not part of one (Latin-1 text, a cut sequence) as \u00XX, the code point
 * of its value, so the document stays valid JSON whatever s holds. */
void json_writer_string(FILE *fp, const char *s);

/* v as a JSON number: the shortest decimal text that strtod reads back as
 * exactly v ("0.1", "1e+100", "123456789012"); null for NaN and the
 * infinities, which JSON cannot write. Returns buf. */
const char *json_writer_number_text(char buf[NUM_DOUBLE_MAX], double v);
void json_writer_number(FILE *fp, double v);

#endif
