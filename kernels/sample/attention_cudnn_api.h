/* cuDNN's C API as far as fused attention uses it, resolved at run time from
 * libcudnn.so.9 with dlopen/dlsym, so that spkit neither links against cuDNN
 * nor needs its headers: builds without CUDA, and CUDA installations without
 * cuDNN, still build and run every program. The loader needs no CUDA either,
 * which lets a unit test check its messages on a machine without a GPU.
 *
 * The constants are the backend API's documented values (cudnn_graph.h of
 * cuDNN 9), under a DNN_ prefix of our own so that a test can compare them
 * with the real header where one is installed. */
#ifndef SPKIT_ATTENTION_CUDNN_API_H
#define SPKIT_ATTENTION_CUDNN_API_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Library names and versions. cudnnGetVersion() is major*10000 + minor*100
 * + patch from cuDNN 9 on, major*1000 + minor*100 + patch before. */
#define DNN_DEFAULT_LIBRARY "libcudnn.so.9"
#define DNN_MAJOR_REQUIRED 9

enum {
	DNN_STATUS_SUCCESS = 0,

	DNN_DATA_FLOAT = 0,
	DNN_DATA_HALF = 2,
	DNN_DATA_INT32 = 4,
	DNN_DATA_BFLOAT16 = 9,
	DNN_DATA_BOOLEAN = 11,

	DNN_POINTWISE_ADD = 0,
	DNN_POINTWISE_MUL = 1,
	DNN_POINTWISE_DIV = 6,
	DNN_POINTWISE_SUB = 9,
	DNN_POINTWISE_EXP = 13,
	DNN_POINTWISE_LOG = 15,
	DNN_POINTWISE_IDENTITY = 21,
	DNN_POINTWISE_CMP_GE = 303,
	DNN_POINTWISE_GEN_INDEX = 501,
	DNN_POINTWISE_BINARY_SELECT = 601,

	DNN_REDUCE_TENSOR_ADD = 0,
	DNN_REDUCE_TENSOR_MAX = 3,

	DNN_HEUR_MODE_INSTANT = 0,
	DNN_HEUR_MODE_B = 1,
	DNN_HEUR_MODE_FALLBACK = 2,
	DNN_HEUR_MODE_A = 3,
};

enum dnn_attr_type {
	DNN_TYPE_HANDLE = 0,
	DNN_TYPE_DATA_TYPE = 1,
	DNN_TYPE_BOOLEAN = 2,
	DNN_TYPE_INT64 = 3,
	DNN_TYPE_VOID_PTR = 6,
	DNN_TYPE_HEUR_MODE = 8,
	DNN_TYPE_POINTWISE_MODE = 14,
	DNN_TYPE_BACKEND_DESCRIPTOR = 15,
	DNN_TYPE_REDUCTION_OPERATOR_TYPE = 18,
};

enum dnn_desc_type {
	DNN_BACKEND_POINTWISE_DESCRIPTOR = 0,
	DNN_BACKEND_ENGINECFG_DESCRIPTOR = 3,
	DNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4,
	DNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5,
	DNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 13,
	DNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15,
	DNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16,
	DNN_BACKEND_TENSOR_DESCRIPTOR = 17,
	DNN_BACKEND_MATMUL_DESCRIPTOR = 18,
	DNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 19,
	DNN_BACKEND_REDUCTION_DESCRIPTOR = 21,
	DNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 22,
	DNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR = 31,
};

enum dnn_attr_name {
	DNN_ATTR_POINTWISE_MODE = 0,
	DNN_ATTR_POINTWISE_MATH_PREC = 1,
	DNN_ATTR_POINTWISE_AXIS = 9,
	DNN_ATTR_ENGINEHEUR_MODE = 200,
	DNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
	DNN_ATTR_ENGINEHEUR_RESULTS = 202,
	DNN_ATTR_EXECUTION_PLAN_HANDLE = 400,
	DNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
	DNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
	DNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750,
	DNN_ATTR_OPERATION_POINTWISE_XDESC = 751,
	DNN_ATTR_OPERATION_POINTWISE_BDESC = 752,
	DNN_ATTR_OPERATION_POINTWISE_YDESC = 753,
	DNN_ATTR_OPERATION_POINTWISE_TDESC = 758,
	DNN_ATTR_OPERATIONGRAPH_HANDLE = 800,
	DNN_ATTR_OPERATIONGRAPH_OPS = 801,
	DNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
	DNN_ATTR_TENSOR_DATA_TYPE = 901,
	DNN_ATTR_TENSOR_DIMENSIONS = 902,
	DNN_ATTR_TENSOR_STRIDES = 903,
	DNN_ATTR_TENSOR_UNIQUE_ID = 906,
	DNN_ATTR_TENSOR_IS_VIRTUAL = 907,
	DNN_ATTR_TENSOR_IS_BY_VALUE = 908,
	DNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
	DNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
	DNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
	DNN_ATTR_MATMUL_COMP_TYPE = 1500,
	DNN_ATTR_OPERATION_MATMUL_ADESC = 1520,
	DNN_ATTR_OPERATION_MATMUL_BDESC = 1521,
	DNN_ATTR_OPERATION_MATMUL_CDESC = 1522,
	DNN_ATTR_OPERATION_MATMUL_DESC = 1523,
	DNN_ATTR_REDUCTION_OPERATOR = 1600,
	DNN_ATTR_REDUCTION_COMP_TYPE = 1601,
	DNN_ATTR_OPERATION_REDUCTION_XDESC = 1610,
	DNN_ATTR_OPERATION_REDUCTION_YDESC = 1611,
	DNN_ATTR_OPERATION_REDUCTION_DESC = 1612,
	DNN_ATTR_OPERATION_RESHAPE_XDESC = 2200,
	DNN_ATTR_OPERATION_RESHAPE_YDESC = 2201,
};

/* Enums travel as int (their C type); handles and descriptors as void *. */
struct attention_cudnn_api {
	void *lib;
	char path[256]; /* what was loaded, for messages */
	size_t version;
	size_t (*get_version)(void);
	const char *(*get_error_string)(int status);
	void (*get_last_error_string)(char *message, size_t max_size);
	int (*create)(void **handle);
	int (*destroy)(void *handle);
	int (*backend_create)(int type, void **desc);
	int (*backend_destroy)(void *desc);
	int (*backend_set)(void *desc, int name, int type, int64_t count, const void *values);
	int (*backend_get)(void *desc, int name, int type, int64_t requested, int64_t *count,
			   void *values);
	int (*backend_finalize)(void *desc);
	int (*backend_execute)(void *handle, void *plan, void *variant_pack);
};

/* dlopen `library` (NULL: DNN_DEFAULT_LIBRARY through the loader's search),
 * check the major version and resolve every entry point above. One-line
 * errors: the library absent (what was tried, and how to point at it), not
 * cuDNN (a missing entry point), or of another major version. */
int attention_cudnn_api_load(const char *library, struct attention_cudnn_api *api,
			     struct sp_err *err);
void attention_cudnn_api_unload(struct attention_cudnn_api *api);

/* The version check alone: 0 for a cuDNN 9 version number, else -1 with
 * "PATH: cuDNN X.Y.Z found, major version 9 required". */
int attention_cudnn_api_check_version(const char *path, size_t version, struct sp_err *err);

/* A failed call's status as a message: "what: CUDNN_STATUS_...: detail",
 * the detail being cuDNN's own last error text when it has one. Returns -1. */
int attention_cudnn_api_fail(const struct attention_cudnn_api *api, int status, const char *what,
			     struct sp_err *err);

#endif
