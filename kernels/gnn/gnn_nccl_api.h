/* NCCL's C API as far as the partitioned GNN's communicator uses it,
 * resolved at run time from libnccl.so.2 with dlopen/dlsym: spkit neither
 * links against NCCL nor needs its header, so the one-GPU programs build and
 * run where NCCL is absent (the GPU machines have it only inside PyTorch's
 * environment). The loader itself needs no CUDA, which lets a unit test check
 * its messages, and NCCL's unique id, on a machine without a GPU.
 *
 * The constants are nccl.h's documented values under a GNN_NCCL_ prefix of
 * our own; a unit test compares them with the real header where one is
 * installed. Enums travel as int (their C type), ncclComm_t and cudaStream_t
 * as void *. */
#ifndef SPKIT_GNN_NCCL_API_H
#define SPKIT_GNN_NCCL_API_H

#include <stddef.h>

#include "core/err.h"

#define GNN_NCCL_DEFAULT_LIBRARY "libnccl.so.2"
#define GNN_NCCL_ID_BYTES 128
/* Nonblocking communicators, ncclCommInitRankConfig and ncclCommFinalize
 * arrived in NCCL 2.14. */
#define GNN_NCCL_VERSION_REQUIRED 21400

enum {
	GNN_NCCL_SUCCESS = 0,
	GNN_NCCL_IN_PROGRESS = 7,
	GNN_NCCL_UINT8 = 1,
	GNN_NCCL_FLOAT32 = 7,
	GNN_NCCL_SUM = 0,
	GNN_NCCL_CONFIG_MAGIC = 0xcafebeef,
};

/* ncclUniqueId: passed by value to the init, as NCCL declares it. */
struct gnn_nccl_id {
	char internal[GNN_NCCL_ID_BYTES];
};

/* ncclConfig_t as NCCL 2.14 laid it out: later versions append fields and
 * read only `size` bytes of a caller's config, taking their defaults for
 * the rest (the version field tells them which fields the caller knew), so
 * this prefix is understood by every NCCL from 2.14 on, whatever nccl.h the
 * build saw. */
struct gnn_nccl_config {
	size_t size; /* offsetof(blocking) + sizeof(int): no trailing padding */
	unsigned int magic;
	unsigned int version;
	int blocking;
};
/* A config for a nonblocking communicator (blocking = 0): NCCL calls return
 * ncclInProgress instead of waiting, so that the caller can give up. */
struct gnn_nccl_config gnn_nccl_config_nonblocking(void);

struct gnn_nccl_api {
	void *lib;
	char path[256]; /* what was loaded, for messages */
	int version;	/* NCCL_VERSION_CODE of the library: 22809 = 2.28.9 */
	int (*get_version)(int *version);
	const char *(*get_error_string)(int result);
	const char *(*get_last_error)(void *comm); /* optional (NCCL 2.13 on), else NULL */
	int (*get_unique_id)(struct gnn_nccl_id *id);
	int (*comm_init_rank_config)(void **comm, int nranks, struct gnn_nccl_id id, int rank,
				     struct gnn_nccl_config *config);
	int (*comm_get_async_error)(void *comm, int *result);
	int (*comm_abort)(void *comm);
	int (*comm_finalize)(void *comm);
	int (*comm_destroy)(void *comm);
	int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op,
			  void *comm, void *stream);
	int (*all_gather)(const void *send, void *recv, size_t send_count, int dtype, void *comm,
			  void *stream);
	int (*reduce_scatter)(const void *send, void *recv, size_t recv_count, int dtype, int op,
			      void *comm, void *stream);
	int (*send)(const void *buf, size_t count, int dtype, int peer, void *comm, void *stream);
	int (*recv)(void *buf, size_t count, int dtype, int peer, void *comm, void *stream);
	int (*group_start)(void);
	int (*group_end)(void);
};

/* dlopen `library` (NULL: GNN_NCCL_DEFAULT_LIBRARY through the loader's
 * search), check the version and resolve every entry point above. One-line
 * errors: the library absent (the loader's text, and where NCCL usually
 * is), not NCCL (a missing entry point), or older than 2.14. */
int gnn_nccl_api_load(const char *library, struct gnn_nccl_api *api, struct sp_err *err);
void gnn_nccl_api_unload(struct gnn_nccl_api *api);

/* The version check alone: "PATH: NCCL 2.12.12 found, 2.14 or later required". */
int gnn_nccl_api_check_version(const char *path, int version, struct sp_err *err);

/* The process's NCCL, loaded once (thread-safe) from GNN_NCCL_DEFAULT_LIBRARY;
 * a failed load is tried again by the next call. Before the first load it
 * sets NCCL_NVLS_ENABLE=0 in the environment unless the user set it (see
 * gnn_nccl_api.c). NULL with err set on failure. */
const struct gnn_nccl_api *gnn_nccl_api_shared(struct sp_err *err);

/* A failed call's result as a message: "WHAT: NCCL's text for the result:
 * its last error text" (the latter where the library has one). Returns -1.
 * comm may be NULL. */
int gnn_nccl_api_fail(const struct gnn_nccl_api *api, void *comm, int result, const char *what,
		      struct sp_err *err);

#endif
