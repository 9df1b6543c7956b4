/* The tuning space of ksmm-tune tune, read from YAML (the files in configs/ksmm/).
 * One section per kernel variant (`simt`, `mma`; an absent section is not
 * swept), and in each, every hyperparameter of struct ksmm_config with its
 * values: a list (`[16, 32, 64]`, or one number), or a range mapping
 * `{from: 16, to: 256, times: 2}` (16, 32, ... 256) or `{from: 1, to: 8,
 * step: 1}`. Every key but tile_d (1 when absent) is required, so a space
 * file says what it sweeps;
 * an unknown key, a value below its minimum (1; 0 for tf32) or above its
 * maximum, or a range that holds no value is an error naming the file and
 * line:
 *   space.yaml:4: unknown key 'tile_m' in section simt (expected ...)
 *   space.yaml:7: tile_k: range from 64 to 32 holds no value
 * A section is one such mapping, or a list of them (a union of products:
 * a pruned space keeps the points that won somewhere without the product
 * of all their values). A mapping may also say which dtypes and layouts
 * its points are for (`dtypes: [fp32]`, `layouts: [bsf]`; all when
 * absent): a sweep of another skips them. The configurations are the Cartesian product of
 * each mapping, in order, the last key changing fastest; ksmm_space_at
 * gives the i-th, so a sweep can be cut into parts by index. */
#ifndef SPKIT_KSMM_SPACE_H
#define SPKIT_KSMM_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "ksmm/ksmm.h"

/* No value of a tile parameter may exceed this (elements or threads). */
#define KSMM_SPACE_VALUE_MAX 4096
/* Nor may a space hold more configurations than this. */
#define KSMM_SPACE_CONFIGS_MAX 10000000
/* Nor more mappings (products) in all than this. */
#define KSMM_SPACE_PARTS_MAX 256

enum ksmm_param {
	KSMM_P_TILE_ROWS,
	KSMM_P_TILE_K,
	KSMM_P_TILE_BATCH,
	KSMM_P_THREAD_ROWS,
	KSMM_P_THREAD_BATCH,
	KSMM_P_VEC,
	KSMM_P_STAGES,
	KSMM_P_TF32,
	KSMM_P_TILE_D,
	KSMM_P_COUNT
};
/* The CSV column and YAML key of each parameter ("tile_rows" ...). */
const char *ksmm_param_name(enum ksmm_param k);
/* NULL when v is a value of parameter k (tile sizes 1 to 4096, stages 1 to
 * 8, tf32 0, 1 or 3), else what k may be, for a message "k: v is ...":
 * "out of range (1 to 8)", "not 0, 1 or 3". */
const char *ksmm_param_refusal(enum ksmm_param k, int64_t v);
int ksmm_config_get(const struct ksmm_config *c, enum ksmm_param k);
void ksmm_config_set(struct ksmm_config *c, enum ksmm_param k, int v);

struct ksmm_space_part { /* one product */
	enum ksmm_variant variant;
	unsigned dtypes, layouts; /* bit 1 << dtype, 1 << layout: whom it is for */
	int *values[KSMM_P_COUNT];
	size_t n[KSMM_P_COUNT];
	uint64_t count;
};
struct ksmm_space {
	struct ksmm_space_part part[KSMM_SPACE_PARTS_MAX];
	size_t nparts;
	uint64_t count;
};

int ksmm_space_read(const char *path, struct ksmm_space *s, struct sp_err *err);
int ksmm_space_read_buffer(const char *buf, size_t len, const char *name, struct ksmm_space *s,
			   struct sp_err *err);
/* The space of configs/ksmm/space.yaml, built into the library. */
int ksmm_space_default(struct ksmm_space *s, struct sp_err *err);
extern const char ksmm_space_default_yaml[];
void ksmm_space_free(struct ksmm_space *s);

/* Configuration i, 0 <= i < s->count. */
void ksmm_space_at(const struct ksmm_space *s, uint64_t i, struct ksmm_config *out);
/* Whether configuration i is for dtype t and layout l (its mapping's
 * dtypes and layouts keys). */
int ksmm_space_for(const struct ksmm_space *s, uint64_t i, enum ksmm_dtype t, enum ksmm_layout l);

#endif
