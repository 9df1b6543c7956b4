/* Communication among the ranks of a partitioned training run (maxk-train
 * --gpus N, or one process a GPU under srun or torchrun): each rank holds
 * a block of the graph's rows on its own backend, and these are the only
 * ways data crosses between ranks. Two implementations behind one table:
 *
 *   - gnn_comm_local (lib/gnn/gnn_comm_local.c): ranks that are threads of
 *     one process, on the CPU backend (or any backend whose memory the
 *     host can address); copies through shared memory. It is the reference
 *     the partitioned model is tested against in CI, without a GPU.
 *   - gnn_comm_nccl (kernels/gnn/gnn_comm_nccl.c): NCCL, loaded at run
 *     time (dlopen of libnccl.so.2), on its own CUDA stream, ordered with
 *     the GPU backend's work (the legacy default stream) by events.
 *
 * Buffers are in the rank's backend memory. Every operation is queued
 * after the computation queued so far; allreduce_sum, allgather and
 * reduce_scatter_sum are finished before any computation queued after
 * them starts; exchange_start's transfers run beside later computation
 * until exchange_join, after which queued computation sees them. All
 * ranks make the same calls in the same order (as NCCL requires).
 *
 * Failures: every call returns 0, or -1 with err set. sync waits on the
 * host for everything queued, computation and communication, at most
 * timeout_s seconds: a rank that died, stopped answering or failed makes
 * the others fail there with a one-line message (after which the
 * communicator is unusable), never hang. */
#ifndef SPKIT_GNN_COMM_H
#define SPKIT_GNN_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct gnn_comm {
	int rank, size;
	void *impl;
	void (*destroy)(struct gnn_comm *c);

	/* buf (count floats) = the sum over ranks of every rank's buf. */
	int (*allreduce_sum)(struct gnn_comm *c, float *buf, int64_t count, struct sp_err *err);
	/* recv (size x bytes) = every rank's send (bytes each), in rank order. */
	int (*allgather)(struct gnn_comm *c, const void *send, void *recv, size_t bytes,
			 struct sp_err *err);
	/* recv (count floats) = the sum over ranks of their
	 * send[rank * count .. rank * count + count) (send: size x count). */
	int (*reduce_scatter_sum)(struct gnn_comm *c, const float *send, float *recv, int64_t count,
				  struct sp_err *err);
	/* To each peer q, send_bytes[q] bytes from send + send_off[q]; from
	 * each peer q, recv_bytes[q] bytes into recv + recv_off[q]. The arrays
	 * have size entries; this rank's are ignored. A pair's byte counts
	 * agree (what q sends to r is what r expects from q). */
	int (*exchange_start)(struct gnn_comm *c, const void *send, const size_t *send_off,
			      const size_t *send_bytes, void *recv, const size_t *recv_off,
			      const size_t *recv_bytes, struct sp_err *err);
	int (*exchange_join)(struct gnn_comm *c, struct sp_err *err);
	/* Waits for everything queued on this rank (see above). */
	int (*sync)(struct gnn_comm *c, struct sp_err *err);
	/* This rank gives up (it failed): the others' next sync fails soon
	 * rather than at the timeout, where the implementation can tell them
	 * (ranks in one process). */
	void (*abort)(struct gnn_comm *c);

	double timeout_s;
	/* Bytes this rank has sent to others (exchange and the collectives'
	 * share), for the report of the bytes that travel. */
	uint64_t bytes_sent;
};

/* Ranks in one process: `size` threads each call gnn_comm_local_create
 * with the same group (from gnn_comm_local_group) and their rank. */
struct gnn_comm_local_group;
int gnn_comm_local_group(int size, struct gnn_comm_local_group **out, struct sp_err *err);
void gnn_comm_local_group_free(struct gnn_comm_local_group *g);
int gnn_comm_local_create(struct gnn_comm_local_group *g, int rank, double timeout_s,
			  struct gnn_comm **out, struct sp_err *err);

#endif
