/* Writing JSON text: string escaping, the one part that is easy to get wrong.
 * Programs print their numbers themselves. */
#ifndef SPKIT_JSONW_H
#define SPKIT_JSONW_H

#include <stdio.h>

/* Writes s as a quoted JSON string (escapes quote, backslash and control
 * characters; bytes >= 0x80 pass through as UTF-8). */
void json_writer_string(FILE *fp, const char *s);

#endif
