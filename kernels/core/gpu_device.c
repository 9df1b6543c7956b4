/* Which device a program runs on (--device), for both builds: with CUDA
 * (kernels/gpu.cu) and without (lib/gpu_none.c) only gpu_probe differs. */
#include "core/gpu.h"

int gpu_count(void)
{
	return gpu_probe(NULL);
}

int gpu_resolve(enum gpu_device_choice want, int *use_gpu, struct sp_err *err)
{
	struct sp_err why = {""};
	*use_gpu = 0;
	if (want == DEVICE_CPU)
		return 0;
	*use_gpu = gpu_probe(&why) > 0;
	if (*use_gpu || want == DEVICE_AUTO)
		return 0;
	return sp_fail(err, "no usable CUDA device (%s)", why.msg);
}
