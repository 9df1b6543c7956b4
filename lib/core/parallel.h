/* A minimal parallel-for over pthreads for the CPU paths. Work is cut into
 * `chunks` pieces numbered 0..chunks-1 that threads take in turn; results
 * must depend only on the chunk number (not the thread), so output is the
 * same for any thread count. SPKIT_THREADS overrides the thread count. */
#ifndef SPKIT_PARALLEL_H
#define SPKIT_PARALLEL_H

#include <stdint.h>

typedef void (*parallel_fn)(void *ctx, int64_t chunk);

int parallel_threads(void);
void parallel_for(int64_t chunks, parallel_fn fn, void *ctx);

#endif
