#include "core/memory.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static uint64_t set_limit = UINT64_MAX;

void mem_set_limit(uint64_t bytes)
{
	set_limit = bytes ? bytes : UINT64_MAX;
}

/* A number of bytes from a cgroup file; UINT64_MAX for "max" or none. */
static uint64_t cgroup_limit(const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return UINT64_MAX;
	unsigned long long v;
	int got = fscanf(fp, "%llu", &v);
	fclose(fp);
	return got == 1 ? (uint64_t)v : UINT64_MAX;
}

static uint64_t least(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t mem_available(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t avail = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
	avail = least(avail, cgroup_limit("/sys/fs/cgroup/memory.max"));
	avail = least(avail, cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		avail = least(avail, (uint64_t)rl.rlim_cur);
	return least(avail, set_limit);
}

/* bytes in the largest binary unit of which they are at least one, to one
 * decimal ("1.5 GiB", "512.0 MiB"); under a KiB, in bytes. A tenth as the
 * bound made 150 MiB and 120 MiB both "0.1 GiB". */
static const char *size_text(uint64_t bytes, char *buf, size_t size)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	for (int u = 3; u >= 0; u--) {
		uint64_t scale = (uint64_t)1 << (10 * (u + 1));
		if (bytes >= scale) {
			snprintf(buf, size, "%.1f %s", (double)bytes / (double)scale, unit[u]);
			return buf;
		}
	}
	snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	return buf;
}

int mem_check(uint64_t bytes, const char *what, struct sp_err *err)
{
	uint64_t avail = mem_available();
	if (bytes <= avail)
		return 0;
	char need[32], have[32];
	return sp_fail(err, "%s needs %s of memory; this process may use %s", what,
		       size_text(bytes, need, sizeof need), size_text(avail, have, sizeof have));
}
