#include "sparse/synth_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_key(const struct spec_key *k, const char *val, struct sp_err *err)
{
	char *end;
	double v;
	long long i = 0;
	if (k->is_double)
		v = strtod(val, &end);
	else
		v = (double)(i = strtoll(val, &end, 10));
	if (end == val || *end || !(v >= k->lo && v <= k->hi))
		return sp_fail(err, "--synthetic: %s=%s: expected %s in [%.15g, %.15g]", k->name, val,
			       k->is_double ? "a number" : "an integer", k->lo, k->hi);
	if (k->is_double)
		*(double *)k->dst = v;
	else
		*(long long *)k->dst = i;
	return 0;
}

int synth_spec_parse(char *items, const struct spec_key *keys, size_t nkeys, const char *known,
		    char *rest, size_t rest_size, struct sp_err *err)
{
	for (char *save = NULL, *kv = strtok_r(items, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			return sp_fail(err, "--synthetic: '%s' is not key=value", kv);
		*eq = '\0';
		size_t i = 0;
		while (i < nkeys && strcmp(kv, keys[i].name))
			i++;
		if (i < nkeys) {
			if (set_key(&keys[i], eq + 1, err))
				return -1;
		} else if (rest) {
			size_t at = strlen(rest);
			snprintf(rest + at, rest_size - at, "%s%s=%s", at ? "," : "", kv, eq + 1);
		} else {
			return sp_fail(err, "--synthetic: unknown key '%s' (%s)", kv, known);
		}
	}
	return 0;
}
