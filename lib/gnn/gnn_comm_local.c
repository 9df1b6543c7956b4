/* gnn_comm for ranks that are threads of one process on the host
 * (gnn_comm.h): each operation is two meetings of all ranks. At the first,
 * every rank has published its buffers; between the two, each copies or
 * sums what it needs from the others' buffers into its own (sums in rank
 * order, so every rank gets the same bits); after the second, no rank
 * reads another's buffers, so each may change its own again. A meeting
 * waits at most the timeout and ends early when a rank aborts.
 *
 * Bytes: what the ring algorithms NCCL runs would send, counted the same
 * way as kernels/gnn/gnn_comm_nccl.c counts them, so the two report alike. */
#include "gnn/gnn_comm.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct published {
	const void *send;
	void *recv;
	const size_t *send_off, *send_bytes;
};

struct gnn_comm_local_group {
	int size;
	pthread_mutex_t lock;
	pthread_cond_t met;
	int arrived;
	uint64_t generation;
	int aborted;
	struct published *slot;
};

struct local {
	struct gnn_comm table;
	struct gnn_comm_local_group *g;
};

int gnn_comm_local_group(int size, struct gnn_comm_local_group **out, struct sp_err *err)
{
	struct gnn_comm_local_group *g = calloc(1, sizeof *g);
	if (!g || !(g->slot = calloc((size_t)size, sizeof *g->slot))) {
		free(g);
		return sp_fail(err, "out of memory");
	}
	g->size = size;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->met, NULL);
	*out = g;
	return 0;
}

void gnn_comm_local_group_free(struct gnn_comm_local_group *g)
{
	if (!g)
		return;
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->met);
	free(g->slot);
	free(g);
}

static struct local *local_of(struct gnn_comm *c)
{
	return c->impl;
}

/* All ranks meet; -1 (err set) on an abort or the timeout. */
static int meet(struct gnn_comm *c, struct sp_err *err)
{
	struct gnn_comm_local_group *g = local_of(c)->g;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)c->timeout_s;
	until.tv_nsec += (long)((c->timeout_s - (double)(time_t)c->timeout_s) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&g->lock);
	const uint64_t gen = g->generation;
	if (++g->arrived == g->size) {
		g->arrived = 0;
		g->generation++;
		pthread_cond_broadcast(&g->met);
	}
	int timed_out = 0;
	while (g->generation == gen && !g->aborted && !timed_out)
		timed_out = pthread_cond_timedwait(&g->met, &g->lock, &until) == ETIMEDOUT;
	const int aborted = g->aborted, done = g->generation != gen;
	if (!done && !aborted) { /* the others must not wait for this rank either */
		g->aborted = 1;
		pthread_cond_broadcast(&g->met);
	}
	pthread_mutex_unlock(&g->lock);
	if (aborted)
		return sp_fail(err, "rank %d: another rank failed", c->rank);
	if (!done)
		return sp_fail(err, "rank %d: no answer from the other ranks in %g s; giving up",
			       c->rank, c->timeout_s);
	return 0;
}

static struct published *slots(struct gnn_comm *c)
{
	return local_of(c)->g->slot;
}

/* out[i] = the sum over ranks, in rank order, of their published
 * send[offset + i] (floats): every rank gets the same bits. */
static void sum_slots(struct gnn_comm *c, int64_t offset, int64_t count, float *out)
{
	for (int64_t i = 0; i < count; i++) {
		float s = 0;
		for (int q = 0; q < c->size; q++)
			s += ((const float *)slots(c)[q].send)[offset + i];
		out[i] = s;
	}
}

static int local_allreduce(struct gnn_comm *c, float *buf, int64_t count, struct sp_err *err)
{
	float *sum = malloc((size_t)(count ? count : 1) * sizeof *sum);
	if (!sum)
		return sp_fail(err, "out of memory for an all-reduce of %lld floats",
			       (long long)count);
	slots(c)[c->rank].send = buf;
	int rc = meet(c, err);
	if (!rc)
		sum_slots(c, 0, count, sum);
	rc = rc ? rc : meet(c, err);
	if (!rc)
		memcpy(buf, sum, (size_t)count * sizeof *buf);
	free(sum);
	c->bytes_sent += (uint64_t)(2.0 * (c->size - 1) / c->size * (double)count * sizeof(float));
	return rc;
}

static int local_allgather(struct gnn_comm *c, const void *send, void *recv, size_t bytes,
			   struct sp_err *err)
{
	slots(c)[c->rank].send = send;
	if (meet(c, err))
		return -1;
	for (int q = 0; q < c->size; q++)
		memcpy((char *)recv + (size_t)q * bytes, slots(c)[q].send, bytes);
	c->bytes_sent += (uint64_t)(c->size - 1) * bytes;
	return meet(c, err);
}

static int local_reduce_scatter(struct gnn_comm *c, const float *send, float *recv,
				int64_t count, struct sp_err *err)
{
	slots(c)[c->rank].send = send;
	if (meet(c, err))
		return -1;
	sum_slots(c, (int64_t)c->rank * count, count, recv);
	c->bytes_sent += (uint64_t)(c->size - 1) * (uint64_t)count * sizeof(float);
	return meet(c, err);
}

static int local_exchange_start(struct gnn_comm *c, const void *send, const size_t *send_off,
				const size_t *send_bytes, void *recv, const size_t *recv_off,
				const size_t *recv_bytes, struct sp_err *err)
{
	struct published *me = &slots(c)[c->rank];
	me->send = send;
	me->send_off = send_off;
	me->send_bytes = send_bytes;
	if (meet(c, err))
		return -1;
	int rc = 0;
	for (int q = 0; q < c->size; q++) {
		if (q == c->rank)
			continue;
		const struct published *from = &slots(c)[q];
		if (from->send_bytes[c->rank] != recv_bytes[q] && !rc)
			rc = sp_fail(err, "rank %d expects %zu bytes from rank %d, which sends %zu",
				     c->rank, recv_bytes[q], q, from->send_bytes[c->rank]);
		if (!rc)
			memcpy((char *)recv + recv_off[q],
			       (const char *)from->send + from->send_off[c->rank], recv_bytes[q]);
		c->bytes_sent += send_bytes[q];
	}
	/* every rank meets again even after a mismatch, so none waits alone */
	int met = meet(c, rc ? NULL : err);
	return rc || met ? -1 : 0;
}

static int local_nothing(struct gnn_comm *c, struct sp_err *err)
{
	struct gnn_comm_local_group *g = local_of(c)->g;
	pthread_mutex_lock(&g->lock);
	const int aborted = g->aborted;
	pthread_mutex_unlock(&g->lock);
	return aborted ? sp_fail(err, "rank %d: another rank failed", c->rank) : 0;
}

static void local_abort(struct gnn_comm *c)
{
	struct gnn_comm_local_group *g = local_of(c)->g;
	pthread_mutex_lock(&g->lock);
	g->aborted = 1;
	pthread_cond_broadcast(&g->met);
	pthread_mutex_unlock(&g->lock);
}

static void local_destroy(struct gnn_comm *c)
{
	free(c ? c->impl : NULL);
}

int gnn_comm_local_create(struct gnn_comm_local_group *g, int rank, double timeout_s,
			  struct gnn_comm **out, struct sp_err *err)
{
	*out = NULL;
	if (rank < 0 || rank >= g->size)
		return sp_fail(err, "rank %d of %d", rank, g->size);
	struct local *l = calloc(1, sizeof *l);
	if (!l)
		return sp_fail(err, "out of memory");
	l->g = g;
	l->table = (struct gnn_comm){
		.rank = rank,
		.size = g->size,
		.impl = l,
		.destroy = local_destroy,
		.allreduce_sum = local_allreduce,
		.allgather = local_allgather,
		.reduce_scatter_sum = local_reduce_scatter,
		.exchange_start = local_exchange_start,
		.exchange_join = local_nothing,
		.sync = local_nothing,
		.abort = local_abort,
		.timeout_s = timeout_s,
	};
	*out = &l->table;
	return 0;
}
