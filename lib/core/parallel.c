#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "core/parallel.h"

#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* A positive count at the start of an environment variable ("8", or
 * OpenMP's list "8,4", whose first level is ours); 0 when unset or not a
 * count, so the next source is asked. */
static long env_count(const char *name)
{
	const char *text = getenv(name);
	if (!text)
		return 0;
	char *end;
	long n = strtol(text, &end, 10);
	return end != text && (*end == '\0' || *end == ',') && n > 0 ? n : 0;
}

int parallel_threads_from(const char **source)
{
	static const char *const vars[] = {"SPKIT_THREADS", "OMP_NUM_THREADS",
					   "SLURM_CPUS_PER_TASK"};
	long n = 0;
	for (size_t i = 0; !n && i < sizeof vars / sizeof *vars; i++)
		if ((n = env_count(vars[i])) && source)
			*source = vars[i];
	cpu_set_t set;
	if (!n && sched_getaffinity(0, sizeof set, &set) == 0 && (n = CPU_COUNT(&set)) > 0 &&
	    source)
		*source = "the CPU affinity mask";
	if (!n && (n = sysconf(_SC_NPROCESSORS_ONLN)) > 0 && source)
		*source = "the online CPUs";
	if (n < 1)
		n = 1;
	return n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : (int)n;
}

int parallel_threads(void)
{
	return parallel_threads_from(NULL);
}

struct job {
	parallel_fn fn;
	void *ctx;
	int64_t chunks;
	atomic_llong next;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	for (;;) {
		int64_t c = atomic_fetch_add(&j->next, 1);
		if (c >= j->chunks)
			return NULL;
		j->fn(j->ctx, c);
	}
}

int parallel_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	/* Made with the fatal and stop signals blocked (a thread inherits its
	 * maker's mask), so that their handlers (cli.c) run on the maker;
	 * the maker's own mask is put back at once. */
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	int rc = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void parallel_for(int64_t chunks, parallel_fn fn, void *ctx)
{
	struct job j = {fn, ctx, chunks, 0};
	int n = parallel_threads();
	if (n > chunks)
		n = (int)(chunks > 0 ? chunks : 1);
	pthread_t tid[PARALLEL_MAX_THREADS];
	int started = 0;
	for (int i = 1; i < n; i++)
		if (parallel_thread_start(&tid[started], worker, &j) == 0)
			started++;
	worker(&j); /* the calling thread works too; fine with zero helpers */
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
