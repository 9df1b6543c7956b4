#include "formats/json_writer.h"

#include <math.h>
#include <string.h>

#include "core/utf8.h"

void json_writer_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		size_t len = *p >= 0x80 ? utf8_char_len(p) : 0;
		if (len) {
			fwrite(p, 1, len, fp);
			p += len - 1;
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\r': fputs("\\r", fp); break;
		case '\t': fputs("\\t", fp); break;
		default:
			if (*p < 0x20 || *p >= 0x80) /* a control, or a byte that is not UTF-8 */
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

const char *json_writer_number_text(char buf[NUM_DOUBLE_MAX], double v)
{
	if (!isfinite(v))
		return strcpy(buf, "null");
	return num_format_double(buf, v, 0);
}

void json_writer_number(FILE *fp, double v)
{
	char buf[NUM_DOUBLE_MAX];
	fputs(json_writer_number_text(buf, v), fp);
}
