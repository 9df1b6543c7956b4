// The standalone measurement programs' check (they link no project
// library, so not gpu_check.cuh): a failed CUDA call prints the call and
// the runtime's message, and main returns 1.
#ifndef SPKIT_TOOL_CHECK_H
#define SPKIT_TOOL_CHECK_H

#include <cstdio>

#define CHECK(x)                                                                      \
	do {                                                                              \
		cudaError_t e_ = (x);                                                         \
		if (e_ != cudaSuccess) {                                                      \
			std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));           \
			return 1;                                                                 \
		}                                                                             \
	} while (0)

#endif
