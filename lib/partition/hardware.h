/* A GPU for the roofline estimate: peak FLOP/s of its matrix units per
 * data type, FLOP/s of the other ops, memory bandwidth, L2, SMs and the
 * time each kernel costs beyond its work. Read from a YAML file
 * (configs/hardware/h200.yaml, a100.yaml, h100.yaml):
 *
 *	name: NVIDIA H200 SXM
 *	sms: 132
 *	memory_bandwidth_gbs: 4800     # 10^9 bytes/s
 *	l2_cache_mb: 60                # 2^20 bytes
 *	launch_overhead_us: 3.7
 *	vector_tflops: 66.9            # elementwise and other non-matrix ops
 *	peak_tflops:                   # matrix products: dense, without sparsity
 *	  fp32: 66.9
 *	  tf32: 494.7
 *	  fp16: 989.4
 *	  bf16: 989.4
 *	  int8: 1978.9                 # tera-ops
 *
 * Every key is required but vector_tflops (the fp32 peak when absent);
 * numbers must be positive and, in SI units, finite and normal doubles;
 * unknown keys are errors, with file:line. The
 * built-in default is the H200 file's numbers (a test keeps them equal). */
#ifndef SPKIT_HARDWARE_H
#define SPKIT_HARDWARE_H

#include <stdint.h>

#include "core/err.h"

enum hardware_dtype {
	HARDWARE_FP32,
	HARDWARE_TF32,
	HARDWARE_FP16,
	HARDWARE_BF16,
	HARDWARE_INT8,
	HARDWARE_NDTYPES
};

struct hardware_spec {
	char name[96];
	double peak_flops[HARDWARE_NDTYPES]; /* FLOP/s of matrix products */
	double vector_flops;           /* FLOP/s of everything else */
	double bandwidth;              /* bytes/s */
	double l2_bytes;
	int64_t sms;
	double launch_s; /* per kernel */
};

/* The built-in H200. */
void hardware_default(struct hardware_spec *hw);
/* A hardware file by path, or by NAME (no '/', no .yaml/.yml suffix): the
 * first NAME.yaml of hardware_dirs. *found (when not NULL) gets the file
 * read, in a static buffer. A NAME found nowhere is an error that lists
 * the names there are. */
int hardware_load(const char *path, struct hardware_spec *hw, struct sp_err *err);
int hardware_load_found(const char *path, struct hardware_spec *hw, const char **found,
			struct sp_err *err);
/* Where a NAME is looked for, in order (n of them, at most 4, into dirs,
 * each in a static buffer): $SPKIT_DATA_DIR/hardware; beside the program,
 * ../share/spkit/hardware (an installed tree, wherever it was moved);
 * SPKIT_DATADIR/hardware (where `make install` put it, PREFIX/share/spkit);
 * the source tree's configs/hardware (a program run from its build). */
int hardware_dirs(const char *dirs[4]);
/* "fp32", "tf32", "fp16", "bf16", "int8" (as --dtype and the files' peak_tflops
 * name them), indexed by the data types, ending with NULL. */
extern const char *const hardware_dtype_names[HARDWARE_NDTYPES + 1];
/* The data type of one of those names; -1 for another. */
int hardware_dtype_parse(const char *name);
const char *hardware_dtype_name(enum hardware_dtype d);

#endif
