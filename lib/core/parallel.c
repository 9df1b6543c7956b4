#include "core/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

int parallel_threads(void)
{
	const char *env = getenv("SPKIT_THREADS");
	long n = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > 256 ? 256 : (int)n;
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

void parallel_for(int64_t chunks, parallel_fn fn, void *ctx)
{
	struct job j = {fn, ctx, chunks, 0};
	int n = parallel_threads();
	if (n > chunks)
		n = (int)(chunks > 0 ? chunks : 1);
	pthread_t tid[256];
	int started = 0;
	for (int i = 1; i < n; i++)
		if (pthread_create(&tid[started], NULL, worker, &j) == 0)
			started++;
	worker(&j); /* the calling thread works too; fine with zero helpers */
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
