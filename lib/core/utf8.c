#include "core/utf8.h"

size_t utf8_char_len(const unsigned char *p)
{
	if (p[0] < 0xc2 || p[0] > 0xf4) /* ASCII, a continuation byte, overlong 0xc0/0xc1, past U+10FFFF */
		return 0;
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	/* The second byte's range rules out the other overlong forms (0xe0,
	 * 0xf0), the surrogates (0xed) and what lies past U+10FFFF (0xf4). */
	unsigned lo = p[0] == 0xe0 ? 0xa0 : p[0] == 0xf0 ? 0x90 : 0x80;
	unsigned hi = p[0] == 0xed ? 0x9f : p[0] == 0xf4 ? 0x8f : 0xbf;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}
