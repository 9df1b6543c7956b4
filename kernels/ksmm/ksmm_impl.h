/* What the files of kernels/ksmm/ share and nobody else calls: the
 * embedded kernel source, the NVRTC disk cache, the running device's
 * limits and the configuration rules with an optional batch. */
#ifndef SPKIT_KSMM_IMPL_H
#define SPKIT_KSMM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "ksmm/ksmm_gpu.h"

/* kernels/ksmm/ksmm_kernel.cuh as a C string, generated at build time. */
extern const char ksmm_kernel_src[];

/* The disk cache (ksmm_cache.c). `key` is the whole description of the
 * build (options, architecture, NVRTC version, a hash of the source); the
 * entry's name is a hash of it and the entry repeats it, so a hash
 * collision reads as a miss. load: 1 and a malloc'd copy on a hit (counted),
 * 0 on a miss or an unreadable entry. store: best effort, atomic (temporary
 * file, rename). */
int ksmm_cache_load(const char *key, void **data, size_t *size);
void ksmm_cache_store(const char *key, const void *data, size_t size);
void ksmm_cache_count_compile(void);
uint64_t ksmm_hash(const void *data, size_t n, uint64_t h); /* FNV-1a 64, h = 0 to start */

/* The current device's shared memory a block may opt into and its compute
 * capability (90 for sm_90); -1 when there is no device. */
int ksmm_device_limits(size_t *smem_optin, int *cc);

/* ksmm_config_check with batch <= 0 meaning "any batch": the rules that
 * depend on it (vec divides a bsl batch, the grid fits) are skipped. */
int ksmm_config_check_any(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
			  enum ksmm_layout l, const struct ksmm_config *cfg, char *why, size_t n);

/* Width of x's loads: vec where x is contiguous along the loaded
 * dimension (bsl always, bsf when d = 1), else 1. */
int ksmm_xvec(const struct ksmm_pattern *p, enum ksmm_layout l, const struct ksmm_config *cfg);

/* Whether a block over several de (tile_d > 1) runs on 16-bit tensor
 * cores, each warp computing all of them (KSMM_DTM in the source). */
int ksmm_de_warps(const struct ksmm_config *cfg);

/* Whether the kernel stages tiles by cp.async (KSMM_ASYNC in the source):
 * 16-bit mma, vec >= 2, stages >= 2, and x loaded as wide as w or over
 * several de; or SIMT on fp32 bsl at stages >= 3 with tile_k a multiple of
 * 4 (p unused there). Only then may stages exceed 2. */
int ksmm_async(const struct ksmm_pattern *p, enum ksmm_dtype t, enum ksmm_layout l,
	       const struct ksmm_config *cfg);

/* Blocks of the launch: a*d groups x row tiles x batch tiles. */
int64_t ksmm_grid_blocks(const struct ksmm_pattern *p, int64_t batch,
			 const struct ksmm_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
