/* A minimal parallel-for over pthreads for the CPU paths. Work is cut into
 * `chunks` pieces numbered 0..chunks-1 that threads take in turn; results
 * must depend only on the chunk number (not the thread), so output is the
 * same for any thread count.
 *
 * The thread count, the first of: SPKIT_THREADS; OMP_NUM_THREADS (its
 * first number, as an OpenMP program reads it); SLURM_CPUS_PER_TASK (the
 * CPUs a SLURM job step was given); the CPUs of the process's affinity
 * mask (taskset, numactl, a cgroup cpuset, srun --cpu-bind); the online
 * CPUs. A variable that is unset, empty or not a positive count is passed
 * over. At most PARALLEL_MAX_THREADS.
 *
 * The helper threads block SIGINT, SIGTERM, SIGHUP and SIGUSR1: the
 * programs' handlers for them run on the thread that called parallel_for.
 * parallel_thread_start makes any other long-lived thread the same way. */
#ifndef SPKIT_PARALLEL_H
#define SPKIT_PARALLEL_H

#include <pthread.h>
#include <stdint.h>

typedef void (*parallel_fn)(void *ctx, int64_t chunk);

#define PARALLEL_MAX_THREADS 256

int parallel_threads(void);
/* The same, and (source not NULL) which of the above decided it, for -v. */
int parallel_threads_from(const char **source);
void parallel_for(int64_t chunks, parallel_fn fn, void *ctx);
/* pthread_create (its return code) with SIGINT, SIGTERM, SIGHUP and
 * SIGUSR1 blocked in the new thread. */
int parallel_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

#endif
