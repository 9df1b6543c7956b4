#include "core/num.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Skips blanks; returns the first non-blank. */
static const char *skip_blanks(const char *s)
{
	while (is_blank(*s))
		s++;
	return s;
}

static int only_blanks(const char *s)
{
	return *skip_blanks(s) == '\0';
}

/* Past an optional sign and one or more digits; NULL without digits. */
static const char *skip_signed_digits(const char *p)
{
	if (*p == '+' || *p == '-')
		p++;
	if (!is_digit(*p))
		return NULL;
	while (is_digit(*p))
		p++;
	return p;
}

enum num_status num_parse_int(const char *s, int64_t *out)
{
	s = skip_blanks(s);
	const char *end = skip_signed_digits(s);
	if (!end || !only_blanks(end))
		return NUM_SYNTAX;
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	if (errno == ERANGE)
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

/* inf, infinity or nan with optional sign and '.'; sets *out. */
static int parse_nonfinite(const char *s, double *out)
{
	double sign = 1;
	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	if (*s == '.')
		s++;
	size_t n = strcspn(s, " \t");
	if (!only_blanks(s + n))
		return 0;
	if ((n == 3 && !strncasecmp(s, "inf", 3)) || (n == 8 && !strncasecmp(s, "infinity", 8)))
		*out = sign * INFINITY;
	else if (n == 3 && !strncasecmp(s, "nan", 3))
		*out = NAN;
	else
		return 0;
	return 1;
}

enum num_status num_parse_double(const char *s, int allow_nonfinite, double *out)
{
	s = skip_blanks(s);
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	size_t int_digits = 0, frac_digits = 0;
	while (is_digit(*p))
		p++, int_digits++;
	if (*p == '.') {
		p++;
		while (is_digit(*p))
			p++, frac_digits++;
	}
	if (int_digits + frac_digits == 0) {
		if (allow_nonfinite && parse_nonfinite(s, out))
			return NUM_OK;
		return NUM_SYNTAX;
	}
	if ((*p == 'e' || *p == 'E') && !(p = skip_signed_digits(p + 1)))
		return NUM_SYNTAX;
	if (!only_blanks(p))
		return NUM_SYNTAX;
	double v = strtod(s, NULL);
	if (isinf(v))
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

const char *num_format_double(char buf[NUM_DOUBLE_MAX], double v, int digits)
{
	if (isnan(v))
		return strcpy(buf, "nan");
	if (isinf(v))
		return strcpy(buf, v < 0 ? "-inf" : "inf");
	if (digits > 0) {
		snprintf(buf, NUM_DOUBLE_MAX, "%.*g", digits > 17 ? 17 : digits, v);
		return buf;
	}
	/* If any N < 15 digits read back exactly, %.15g prints those same
	 * digits (and %g drops the trailing zeros), so trying 15, 16, 17 finds
	 * the shortest. Not for a subnormal: with fewer significant bits, two
	 * 15-digit texts can read back as it (5e-324 and 4.94065645841247e-324),
	 * so there the search starts at one digit. */
	for (int n = fabs(v) < DBL_MIN ? 1 : 15; n <= 17; n++) {
		snprintf(buf, NUM_DOUBLE_MAX, "%.*g", n, v);
		if (n == 17 || strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void num_sort(double *v, size_t n)
{
	qsort(v, n, sizeof *v, compare_double);
}

double num_median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
