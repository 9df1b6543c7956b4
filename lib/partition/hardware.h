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

enum hw_dtype { HW_FP32, HW_TF32, HW_FP16, HW_BF16, HW_INT8, HW_NDTYPES };

struct hw_spec {
	char name[96];
	double peak_flops[HW_NDTYPES]; /* FLOP/s of matrix products */
	double vector_flops;           /* FLOP/s of everything else */
	double bandwidth;              /* bytes/s */
	double l2_bytes;
	int64_t sms;
	double launch_s; /* per kernel */
};

/* The built-in H200. */
void hw_default(struct hw_spec *hw);
int hw_load(const char *path, struct hw_spec *hw, struct sp_err *err);
/* "fp32", "tf32", "fp16", "bf16", "int8" (as --dtype names them); -1 for another. */
int hw_dtype_parse(const char *name);
const char *hw_dtype_name(enum hw_dtype d);

#endif
