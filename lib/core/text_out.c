/* Text from outside in reports for people (text_out.h). */
#include "core/text_out.h"

#include "core/err.h"

size_t text_width(const char *text)
{
	size_t n = 0;
	char out[4];
	for (const char *p = text, *next; *p; p = next)
		n += sp_quote_char(p, out, &next);
	return n;
}

static void pad(FILE *fp, size_t n)
{
	while (n--)
		fputc(' ', fp);
}

void text_put(FILE *fp, const char *text, int width)
{
	const size_t w = width ? text_width(text) : 0;
	const size_t want = (size_t)(width < 0 ? -(long)width : width);
	if (width > 0 && w < want)
		pad(fp, want - w);
	char out[4];
	for (const char *p = text, *next; *p; p = next)
		fwrite(out, 1, sp_quote_char(p, out, &next), fp);
	if (width < 0 && w < want)
		pad(fp, want - w);
}
