/* Writing JSON text: strings escaped, and numbers that read back as the
 * very double written (the shortest such text, num_format_double), the two
 * parts that are easy to get wrong. Every program's JSON goes through
 * here, so no value loses digits to a fixed "%.4f" or "%.6g". */
#ifndef SPKIT_JSONW_H
#define SPKIT_JSONW_H

#include <stdio.h>

#include "core/num.h"

/* Writes s as a quoted JSON string (escapes quote, backslash and control
 * characters; bytes >= 0x80 pass through as UTF-8). */
void json_writer_string(FILE *fp, const char *s);

/* v as a JSON number: the shortest decimal text that strtod reads back as
 * exactly v ("0.1", "1e+100", "123456789012"); null for NaN and the
 * infinities, which JSON cannot write. Returns buf. */
const char *json_writer_number_text(char buf[NUM_DOUBLE_MAX], double v);
void json_writer_number(FILE *fp, double v);

#endif
