/* struct gnn_comm through NCCL: see gnn_comm_nccl.h. Builds without nvcc
 * get the same two entry points, failing with "built without CUDA". */
#include "gnn/gnn_comm_nccl.h"

#ifdef SPKIT_CUDA
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

/* The ranks of this process made from one id (maxk-train --gpus N runs
 * them as threads): abort() of one sets the flag the others' waits poll, so
 * they stop within a poll instead of at their timeout. */
struct clique {
	struct clique *next;
	unsigned char id[GNN_NCCL_ID_BYTES];
	int refs;
	atomic_int aborted;
};
static pthread_mutex_t cliques_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clique *cliques;

static struct clique *clique_join(const unsigned char *id)
{
	pthread_mutex_lock(&cliques_lock);
	struct clique *q = cliques;
	while (q && memcmp(q->id, id, GNN_NCCL_ID_BYTES))
		q = q->next;
	if (!q && (q = calloc(1, sizeof *q))) {
		memcpy(q->id, id, GNN_NCCL_ID_BYTES);
		q->next = cliques;
		cliques = q;
	}
	if (q)
		q->refs++;
	pthread_mutex_unlock(&cliques_lock);
	return q;
}

static void clique_leave(struct clique *q)
{
	pthread_mutex_lock(&cliques_lock);
	if (--q->refs == 0) {
		struct clique **p = &cliques;
		while (*p != q)
			p = &(*p)->next;
		*p = q->next;
		free(q);
	}
	pthread_mutex_unlock(&cliques_lock);
}

struct nccl_comm {
	struct gnn_comm pub;
	const struct gnn_nccl_api *api;
	void *comm; /* NULL once aborted */
	int device;
	cudaStream_t stream; /* NCCL's work, beside the computation on stream 0 */
	cudaEvent_t queued;  /* on stream 0: the computation an operation follows */
	cudaEvent_t done;    /* on `stream`: what stream 0 waits for */
	cudaEvent_t drained; /* on stream 0: everything sync waits for */
	struct clique *clique;
	int broken; /* a wait failed: the communicator is aborted, every later call fails */
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Between polls: short enough that a finished wait costs little, long
 * enough that a waiting rank leaves its CPU to the others. */
static void nap(void)
{
	struct timespec t = {0, 200000};
	nanosleep(&t, NULL);
}

/* After a failure: no later operation may touch the communicator, and
 * NCCL's kernels still waiting for peers are told to stop. */
static void break_comm(struct nccl_comm *n)
{
	n->broken = 1;
	atomic_store(&n->clique->aborted, 1);
	if (n->comm)
		n->api->comm_abort(n->comm);
	n->comm = NULL;
}

static int cuda_fail(struct nccl_comm *n, cudaError_t rc, const char *what, struct sp_err *err)
{
	return sp_fail(err, "rank %d: %s: %s", n->pub.rank, what, cudaGetErrorString(rc));
}

static int nccl_fail(struct nccl_comm *n, int result, const char *what, struct sp_err *err)
{
	char where[128];
	snprintf(where, sizeof where, "rank %d: %s", n->pub.rank, what);
	gnn_nccl_api_fail(n->api, n->comm, result, where, err);
	break_comm(n);
	return -1;
}

/* A sibling rank called abort(), or failed: stop too. */
static int abandon(struct nccl_comm *n, struct sp_err *err)
{
	break_comm(n);
	return sp_fail(err, "rank %d: another rank of this process failed", n->pub.rank);
}

static int give_up(struct nccl_comm *n, const char *what, const char *why, struct sp_err *err)
{
	break_comm(n);
	return sp_fail(err, "rank %d: %s%sno progress from the other ranks in %g s (%s); giving up",
		       n->pub.rank, what, *what ? ": " : "", n->pub.timeout_s, why);
}

/* One poll of the communicator's state: 1 while an operation is still being
 * set up, 0 when it is fine, -1 on an error. */
static int poll_state(struct nccl_comm *n, const char *what, struct sp_err *err)
{
	int state = GNN_NCCL_SUCCESS;
	int rc = n->api->comm_get_async_error(n->comm, &state);
	if (rc != GNN_NCCL_SUCCESS)
		return nccl_fail(n, rc, "ncclCommGetAsyncError", err);
	if (state == GNN_NCCL_IN_PROGRESS)
		return 1;
	return state == GNN_NCCL_SUCCESS ? 0 : nccl_fail(n, state, what, err);
}

/* The result of an NCCL call on the nonblocking communicator: ncclInProgress
 * means it is still being set up (connections to peers, the init itself),
 * and the communicator takes no other call until that ends. */
static int settle(struct nccl_comm *n, int result, const char *what, const char *why,
		  struct sp_err *err)
{
	if (result != GNN_NCCL_SUCCESS && result != GNN_NCCL_IN_PROGRESS)
		return nccl_fail(n, result, what, err);
	if (result == GNN_NCCL_SUCCESS)
		return 0;
	const double deadline = now_s() + n->pub.timeout_s;
	for (;;) {
		if (atomic_load(&n->clique->aborted))
			return abandon(n, err);
		int busy = poll_state(n, what, err);
		if (busy <= 0)
			return busy;
		if (now_s() > deadline)
			return give_up(n, what, why, err);
		nap();
	}
}

static const char *const died = "a rank died or stopped answering";

/* Every entry point: the communicator still usable, its device current. */
static int enter(struct nccl_comm *n, struct sp_err *err)
{
	if (n->broken)
		return sp_fail(err, "rank %d: the NCCL communicator failed earlier", n->pub.rank);
	if (atomic_load(&n->clique->aborted))
		return abandon(n, err);
	cudaError_t rc = cudaSetDevice(n->device);
	return rc == cudaSuccess ? 0 : cuda_fail(n, rc, "cudaSetDevice", err);
}

/* The communicator's stream waits for the computation queued so far. */
static int follow_compute(struct nccl_comm *n, struct sp_err *err)
{
	if (enter(n, err))
		return -1;
	cudaError_t rc = cudaEventRecord(n->queued, 0);
	if (rc == cudaSuccess)
		rc = cudaStreamWaitEvent(n->stream, n->queued, 0);
	return rc == cudaSuccess ? 0 : cuda_fail(n, rc, "ordering NCCL after the computation", err);
}

/* Computation queued from now on waits for the communicator's stream. */
static int lead_compute(struct nccl_comm *n, struct sp_err *err)
{
	cudaError_t rc = cudaEventRecord(n->done, n->stream);
	if (rc == cudaSuccess)
		rc = cudaStreamWaitEvent(0, n->done, 0);
	return rc == cudaSuccess ? 0 : cuda_fail(n, rc, "ordering the computation after NCCL", err);
}

static int check_count(struct nccl_comm *n, int64_t count, const char *what, struct sp_err *err)
{
	return count >= 0 ? 0
			  : sp_fail(err, "rank %d: %s of %lld floats", n->pub.rank, what,
				    (long long)count);
}

static int nccl_allreduce_sum(struct gnn_comm *c, float *buf, int64_t count, struct sp_err *err)
{
	struct nccl_comm *n = c->impl;
	if (check_count(n, count, "ncclAllReduce", err) || follow_compute(n, err) ||
	    settle(n,
		   n->api->all_reduce(buf, buf, (size_t)count, GNN_NCCL_FLOAT32, GNN_NCCL_SUM,
				      n->comm, n->stream),
		   "ncclAllReduce", died, err))
		return -1;
	c->bytes_sent += (uint64_t)(2 * (c->size - 1)) * (uint64_t)count * 4 / (uint64_t)c->size;
	return lead_compute(n, err);
}

static int nccl_allgather(struct gnn_comm *c, const void *send, void *recv, size_t bytes,
			  struct sp_err *err)
{
	struct nccl_comm *n = c->impl;
	if (follow_compute(n, err) ||
	    settle(n, n->api->all_gather(send, recv, bytes, GNN_NCCL_UINT8, n->comm, n->stream),
		   "ncclAllGather", died, err))
		return -1;
	c->bytes_sent += (uint64_t)(c->size - 1) * bytes;
	return lead_compute(n, err);
}

static int nccl_reduce_scatter_sum(struct gnn_comm *c, const float *send, float *recv,
				   int64_t count, struct sp_err *err)
{
	struct nccl_comm *n = c->impl;
	if (check_count(n, count, "ncclReduceScatter", err) || follow_compute(n, err) ||
	    settle(n,
		   n->api->reduce_scatter(send, recv, (size_t)count, GNN_NCCL_FLOAT32,
					  GNN_NCCL_SUM, n->comm, n->stream),
		   "ncclReduceScatter", died, err))
		return -1;
	c->bytes_sent += (uint64_t)(c->size - 1) * (uint64_t)count * 4;
	return lead_compute(n, err);
}

/* One group of sends and receives, one pair a peer with bytes to move: NCCL
 * runs them all at once, and pairs the sends with the peers' receives. */
static int nccl_exchange_start(struct gnn_comm *c, const void *send, const size_t *send_off,
			       const size_t *send_bytes, void *recv, const size_t *recv_off,
			       const size_t *recv_bytes, struct sp_err *err)
{
	struct nccl_comm *n = c->impl;
	if (follow_compute(n, err))
		return -1;
	const struct gnn_nccl_api *api = n->api;
	int rc = api->group_start();
	if (rc != GNN_NCCL_SUCCESS)
		return nccl_fail(n, rc, "ncclGroupStart", err);
	uint64_t sent = 0;
	const char *what = "ncclGroupEnd (exchange)";
	for (int q = 0; q < c->size && rc == GNN_NCCL_SUCCESS; q++) {
		if (q == c->rank)
			continue;
		if (send_bytes[q]) {
			rc = api->send((const char *)send + send_off[q], send_bytes[q],
				       GNN_NCCL_UINT8, q, n->comm, n->stream);
			what = "ncclSend";
			sent += send_bytes[q];
		}
		if (rc == GNN_NCCL_SUCCESS && recv_bytes[q]) {
			rc = api->recv((char *)recv + recv_off[q], recv_bytes[q], GNN_NCCL_UINT8, q,
				       n->comm, n->stream);
			what = "ncclRecv";
		}
	}
	/* The group is closed even after a failed call inside it. */
	int end = api->group_end();
	if (rc != GNN_NCCL_SUCCESS)
		return nccl_fail(n, rc, what, err);
	if (settle(n, end, "ncclGroupEnd (exchange)", died, err))
		return -1;
	c->bytes_sent += sent;
	return 0;
}

static int nccl_exchange_join(struct gnn_comm *c, struct sp_err *err)
{
	struct nccl_comm *n = c->impl;
	return enter(n, err) || lead_compute(n, err) ? -1 : 0;
}

/* Everything queued on stream 0 (which waits for the collectives) and on
 * the communicator's stream (an exchange not yet joined), polled with
 * NCCL's error state, the siblings' abort flag and the deadline. */
static int nccl_sync(struct gnn_comm *c, struct sp_err *err)
{
	struct nccl_comm *n = c->impl;
	if (enter(n, err))
		return -1;
	cudaError_t rc = cudaEventRecord(n->drained, 0);
	if (rc != cudaSuccess)
		return cuda_fail(n, rc, "cudaEventRecord", err);
	const double deadline = now_s() + c->timeout_s;
	for (;;) {
		if (atomic_load(&n->clique->aborted))
			return abandon(n, err);
		rc = cudaEventQuery(n->drained);
		if (rc == cudaSuccess)
			rc = cudaStreamQuery(n->stream);
		if (rc == cudaSuccess)
			return 0;
		if (rc != cudaErrorNotReady) {
			cuda_fail(n, rc, "waiting for the computation and NCCL", err);
			break_comm(n);
			return -1;
		}
		if (poll_state(n, "NCCL", err) < 0)
			return -1;
		if (now_s() > deadline)
			return give_up(n, "", died, err);
		nap();
	}
}

static void nccl_abort(struct gnn_comm *c)
{
	struct nccl_comm *n = c->impl;
	cudaSetDevice(n->device);
	break_comm(n);
}

/* A healthy communicator is finalized (its pending work flushed, within the
 * timeout) before it is destroyed; a failed one was aborted already, and
 * one whose sibling failed is aborted. */
static void release(struct nccl_comm *n)
{
	if (n->comm && atomic_load(&n->clique->aborted)) /* a sibling failed: no waiting on it */
		break_comm(n);
	if (n->comm && cudaSetDevice(n->device) == cudaSuccess) {
		struct sp_err ignored; /* a failed finalize aborts the communicator */
		if (settle(n, n->api->comm_finalize(n->comm), "ncclCommFinalize", died, &ignored) == 0)
			n->api->comm_destroy(n->comm);
	}
	if (n->drained)
		cudaEventDestroy(n->drained);
	if (n->done)
		cudaEventDestroy(n->done);
	if (n->queued)
		cudaEventDestroy(n->queued);
	if (n->stream)
		cudaStreamDestroy(n->stream);
	if (n->clique)
		clique_leave(n->clique);
	free(n);
}

static void nccl_destroy(struct gnn_comm *c)
{
	if (c)
		release(c->impl);
}

int gnn_nccl_unique_id(unsigned char id[GNN_NCCL_ID_BYTES], struct sp_err *err)
{
	const struct gnn_nccl_api *api = gnn_nccl_api_shared(err);
	if (!api)
		return -1;
	struct gnn_nccl_id nid;
	int rc = api->get_unique_id(&nid);
	if (rc != GNN_NCCL_SUCCESS)
		return gnn_nccl_api_fail(api, NULL, rc, "ncclGetUniqueId", err);
	memcpy(id, nid.internal, GNN_NCCL_ID_BYTES);
	return 0;
}

/* The stream and events of a communicator on the current device. */
static int make_stream(struct nccl_comm *n, struct sp_err *err)
{
	cudaError_t rc = cudaGetDevice(&n->device);
	if (rc == cudaSuccess)
		rc = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);
	cudaEvent_t *events[] = {&n->queued, &n->done, &n->drained};
	for (int i = 0; i < 3 && rc == cudaSuccess; i++)
		rc = cudaEventCreateWithFlags(events[i], cudaEventDisableTiming);
	return rc == cudaSuccess ? 0 : cuda_fail(n, rc, "NCCL's stream and events", err);
}

int gnn_comm_nccl_create(const unsigned char id[GNN_NCCL_ID_BYTES], int rank, int size,
			 double timeout_s, struct gnn_comm **out, struct sp_err *err)
{
	*out = NULL;
	if (size < 1 || rank < 0 || rank >= size)
		return sp_fail(err, "NCCL communicator: rank %d outside 0..%d", rank, size - 1);
	if (!(timeout_s > 0))
		return sp_fail(err, "NCCL communicator: timeout %g s: must be positive", timeout_s);
	const struct gnn_nccl_api *api = gnn_nccl_api_shared(err);
	if (!api)
		return -1;
	struct nccl_comm *n = calloc(1, sizeof *n);
	if (!n)
		return sp_fail(err, "rank %d: out of memory for an NCCL communicator", rank);
	n->api = api;
	n->pub = (struct gnn_comm){
		.rank = rank,
		.size = size,
		.impl = n,
		.destroy = nccl_destroy,
		.allreduce_sum = nccl_allreduce_sum,
		.allgather = nccl_allgather,
		.reduce_scatter_sum = nccl_reduce_scatter_sum,
		.exchange_start = nccl_exchange_start,
		.exchange_join = nccl_exchange_join,
		.sync = nccl_sync,
		.abort = nccl_abort,
		.timeout_s = timeout_s,
	};
	n->clique = clique_join(id);
	if (!n->clique) {
		free(n);
		return sp_fail(err, "rank %d: out of memory for an NCCL communicator", rank);
	}
	if (make_stream(n, err)) {
		release(n);
		return -1;
	}
	struct gnn_nccl_config config = gnn_nccl_config_nonblocking();
	struct gnn_nccl_id nid;
	memcpy(nid.internal, id, GNN_NCCL_ID_BYTES);
	char what[64];
	snprintf(what, sizeof what, "NCCL init of %d ranks", size);
	int rc = api->comm_init_rank_config(&n->comm, size, nid, rank, &config);
	if (settle(n, rc, what, "a rank did not start, died or stopped answering", err)) {
		release(n);
		return -1;
	}
	*out = &n->pub;
	return 0;
}

#else /* no CUDA */

int gnn_nccl_unique_id(unsigned char id[GNN_NCCL_ID_BYTES], struct sp_err *err)
{
	return sp_fail(err, "NCCL communicator: spkit was built without CUDA");
}

int gnn_comm_nccl_create(const unsigned char id[GNN_NCCL_ID_BYTES], int rank, int size,
			 double timeout_s, struct gnn_comm **out, struct sp_err *err)
{
	*out = NULL;
	return sp_fail(err, "NCCL communicator: spkit was built without CUDA");
}

#endif
