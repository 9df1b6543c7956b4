// The end of every probe's main: a failed run's message after the probe's
// name on stderr, and exit status 1.
#ifndef SPKIT_PROBE_H
#define SPKIT_PROBE_H

#include <cstdio>

extern "C" {
#include "core/err.h"
}

static inline int probe_exit(const char *name, int failed, const struct sp_err *err)
{
	if (!failed)
		return 0;
	std::fprintf(stderr, "%s: %s\n", name, err->msg);
	return 1;
}

#endif
