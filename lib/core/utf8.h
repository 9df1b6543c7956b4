/* UTF-8 as RFC 3629 defines it, for the writers of text that must stay
 * valid whatever bytes a file name or a cell holds: one-line messages
 * (sp_quote, err.h) and JSON strings (json_writer.h). */
#ifndef SPKIT_UTF8_H
#define SPKIT_UTF8_H

#include <stddef.h>

/* The length (2 to 4) of the UTF-8 character at p, which starts with a
 * byte >= 0x80; 0 when the bytes there are not one: a stray continuation
 * byte, an overlong form, a surrogate, a code point above U+10FFFF, or a
 * sequence cut short. A NUL ends a sequence early, so nothing past the
 * string is read. */
size_t utf8_char_len(const unsigned char *p);

#endif
