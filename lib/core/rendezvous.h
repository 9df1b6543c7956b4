/* Handing a few bytes (NCCL's unique id) from rank 0 to the other processes
 * of a run through a file in a folder they all see (maxk-train --rendezvous
 * DIR: a shared file system across nodes, any folder on one host). No
 * server, no port: SLURM and torchrun launches already share a file system
 * and a run id, and a file is what a user can look at when a rank waits.
 *
 * DIR/spkit-rendezvous-RUNID.id holds a header (magic, version, the run's
 * number of ranks, the publishing process's pid and host, its creation
 * time, the payload's size, a checksum) and the payload. Rank 0 writes a
 * temporary, syncs it and links it to the name, so the name appears whole or
 * not at all and an existing file is never replaced: a file of an earlier
 * run with the same id stops rank 0 with a message rather than handing its
 * stale id to the others. The others poll for the file, taking only a whole,
 * valid file that is not older than their own start by more than the
 * timeout (older: a leftover, which rank 0 will refuse). */
#ifndef SPKIT_RENDEZVOUS_H
#define SPKIT_RENDEZVOUS_H

#include <stddef.h>

#include "core/err.h"

/* Longest run id: the file name stays well inside NAME_MAX. */
#define RENDEZVOUS_RUN_ID_MAX 128

/* A run id that can be part of a file name: not empty, at most
 * RENDEZVOUS_RUN_ID_MAX bytes, no '/' and no control characters. */
int rendezvous_check_run_id(const char *run_id, struct sp_err *err);

/* DIR/spkit-rendezvous-RUNID.id, into path (size bytes). */
int rendezvous_path(const char *dir, const char *run_id, char *path, size_t size,
		    struct sp_err *err);

/* Rank 0: writes the file (world ranks, `bytes` of blob); fails if it exists. */
int rendezvous_publish(const char *dir, const char *run_id, int world, const void *blob,
		       size_t bytes, struct sp_err *err);

/* The other ranks: waits at most timeout_s for the file (polling every
 * 50 ms) and copies its blob, which must be `bytes` long, into blob. A file
 * for another number of ranks is an error naming both; a file that never
 * appears, or never becomes valid, an error at the timeout. */
int rendezvous_wait(const char *dir, const char *run_id, int world, void *blob, size_t bytes,
		    double timeout_s, struct sp_err *err);

/* Rank 0, once every rank has joined: removes the file (absent is fine). */
int rendezvous_remove(const char *dir, const char *run_id, struct sp_err *err);

#endif
