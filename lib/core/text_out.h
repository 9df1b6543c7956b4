/* Text from outside (a model's node and op names, a path, a hardware name)
 * in a report written for people, a table or stats on stdout: each
 * character as sp_quote writes it (err.h), so a newline in a name cannot
 * split a row and an escape sequence cannot drive the terminal. Formats
 * read by programs encode their own way (CSV quotes, JSON and DOT escape). */
#ifndef SPKIT_TEXT_OUT_H
#define SPKIT_TEXT_OUT_H

#include <stddef.h>
#include <stdio.h>

/* The bytes text_put writes for text. */
size_t text_width(const char *text);

/* text, each character escaped as sp_quote does; with width != 0, padded
 * with spaces to |width| bytes as printf's %*s pads: before the text for
 * width > 0, after it for width < 0. */
void text_put(FILE *fp, const char *text, int width);

#endif
