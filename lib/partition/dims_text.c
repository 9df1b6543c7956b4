#include "partition/dims_text.h"

#include <stdlib.h>
#include <string.h>

#include "partition/opgraph.h"

int dims_text_parse(const char *text, const char *option, int *ndim, int64_t *dims,
		    struct sp_err *err)
{
	const char *p = text;
	*ndim = 0;
	for (;;) {
		char *end;
		int64_t v;
		size_t len = strcspn(p, "x");
		char part[32];
		if (len == 0 || len >= sizeof part || *ndim == OPGRAPH_MAX_DIMS)
			return sp_fail(err, "%s: '%s' is not dims like 1x3x224x224 (at most %d)",
				       option, text, OPGRAPH_MAX_DIMS);
		memcpy(part, p, len);
		part[len] = '\0';
		v = strtoll(part, &end, 10);
		if (*end || v < 1 || part[0] == '+' || part[0] == ' ')
			return sp_fail(err, "%s: dim '%s' in '%s' is not a positive integer", option,
				       part, text);
		dims[(*ndim)++] = v;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}
