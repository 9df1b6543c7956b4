/* struct gnn_comm (lib/gnn/gnn_comm.h) through NCCL: one rank a GPU, the
 * ranks being threads of one process (maxk-train --gpus N), processes of one
 * host, or processes on several nodes (srun, torchrun). NCCL is loaded at
 * run time (gnn_nccl_api.h): a program that never makes a communicator runs
 * where NCCL is absent.
 *
 * Ordering with the GPU backend (which queues its work on the legacy default
 * stream, 0): the communicator owns a nonblocking stream of its own. Each
 * operation makes that stream wait for an event recorded on stream 0 (the
 * computation queued so far), then queues NCCL there; allreduce_sum,
 * allgather and reduce_scatter_sum then make stream 0 wait for the
 * communicator's stream, exchange_start does not (its transfers run beside
 * later computation) and exchange_join does. Between exchange_start and
 * exchange_join the computation must not write the send buffer nor touch
 * the receive buffer.
 *
 * Nothing can hang: the communicator is nonblocking (NCCL returns
 * ncclInProgress rather than waiting), and every wait polls the host with a
 * deadline of c->timeout_s: a rank that never joins the init, or stops
 * answering, makes the others abort their communicator and fail with one
 * line. destroy finalizes a healthy communicator (a wait on the other ranks,
 * with the same deadline, aborting at it): all ranks destroy theirs, each
 * from its own thread where ranks are threads, not one after another from
 * one thread. Only these waits have a deadline: a synchronous copy (gpu_download)
 * or a device synchronize behind a collective whose peer died blocks for
 * good, so call sync first where a peer may have failed (before reading
 * results back each epoch, for instance). abort() of one rank makes the other ranks of the same process
 * (those made from the same id) fail at their next wait within a
 * millisecond; ranks in other processes fail at their timeout.
 *
 * bytes_sent counts what this rank puts on the wire by the ring algorithms'
 * per-rank traffic: an all-reduce of B bytes 2 (size - 1) / size x B (a
 * reduce-scatter then an all-gather), an all-gather of B bytes a rank
 * (size - 1) x B, a reduce-scatter of `count` floats a rank
 * (size - 1) x count x 4, an exchange the sum of its send_bytes. */
#ifndef SPKIT_GNN_COMM_NCCL_H
#define SPKIT_GNN_COMM_NCCL_H

#include "gnn/gnn_comm.h"
#include "gnn/gnn_nccl_api.h"

/* Loads NCCL if not yet loaded and makes a unique id: rank 0 does this and
 * hands the bytes to the others (threads: memory; processes: a rendezvous
 * file, core/rendezvous.h). Needs no GPU. Where libnccl.so.2 cannot be
 * loaded, the message carries the loader's text and where NCCL usually is. */
int gnn_nccl_unique_id(unsigned char id[GNN_NCCL_ID_BYTES], struct sp_err *err);

/* A communicator for `rank` of `size` on the current CUDA device (selected
 * with gpu_select by the caller), from rank 0's id; the init waits at most
 * timeout_s for the other ranks (a rank that never comes: a one-line
 * error). Several threads of one process may call it concurrently with the
 * same id, one rank a thread and GPU. The communicator may later be used and
 * destroyed from any thread: each call makes its device current. */
int gnn_comm_nccl_create(const unsigned char id[GNN_NCCL_ID_BYTES], int rank, int size,
			 double timeout_s, struct gnn_comm **out, struct sp_err *err);

#endif
