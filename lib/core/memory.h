/* The memory a process may have, checked before a size read from a file
 * (a Matrix Market header, an edge list's largest node id, a COO shape) is
 * allocated, so that an absurd but well-formed declaration ends in one line
 * that says how much it needs instead of in the OOM killer. Allocations are
 * lazy on Linux: malloc of 16 GB succeeds on a 24 GB machine, and the
 * process dies later, while it fills the pages. */
#ifndef SPKIT_MEMORY_H
#define SPKIT_MEMORY_H

#include <stdint.h>

#include "core/err.h"

/* The least of physical memory, the cgroup's limit (v2 memory.max, v1
 * memory.limit_in_bytes), RLIMIT_AS and a limit the program sets
 * (mem_set_limit: SPKIT_MEMORY_LIMIT, read by the CLI). */
uint64_t mem_available(void);
void mem_set_limit(uint64_t bytes);

/* 0 when bytes fit in mem_available(); else -1 with "WHAT needs 32.0 GiB
 * of memory; this process may use 23.4 GiB". */
int mem_check(uint64_t bytes, const char *what, struct sp_err *err);

#endif
