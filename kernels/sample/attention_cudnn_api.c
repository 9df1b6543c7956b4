/* Loading libcudnn.so.9 at run time: see attention_cudnn_api.h. Plain C with
 * no CUDA, built the same with and without nvcc. */
#include "sample/attention_cudnn_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"

int attention_cudnn_api_check_version(const char *path, size_t version, struct sp_err *err)
{
	const size_t major = version >= 10000 ? version / 10000 : version / 1000;
	const size_t minor = version >= 10000 ? version / 100 % 100 : version / 100 % 10;
	if (major == DNN_MAJOR_REQUIRED)
		return 0;
	return sp_fail(err, "%s: cuDNN %zu.%zu.%zu found, major version %d required", path, major,
		       minor, version % 100, DNN_MAJOR_REQUIRED);
}

/* Every entry point, by name, and where its pointer goes. */
#define ENTRY(field, name) {offsetof(struct attention_cudnn_api, field), name}
static const struct {
	size_t offset;
	const char *name;
} entries[] = {
	ENTRY(get_error_string, "cudnnGetErrorString"),
	ENTRY(create, "cudnnCreate"),
	ENTRY(destroy, "cudnnDestroy"),
	ENTRY(backend_create, "cudnnBackendCreateDescriptor"),
	ENTRY(backend_destroy, "cudnnBackendDestroyDescriptor"),
	ENTRY(backend_set, "cudnnBackendSetAttribute"),
	ENTRY(backend_get, "cudnnBackendGetAttribute"),
	ENTRY(backend_finalize, "cudnnBackendFinalize"),
	ENTRY(backend_execute, "cudnnBackendExecute"),
};
#undef ENTRY

int attention_cudnn_api_load(const char *library, struct attention_cudnn_api *api,
			     struct sp_err *err)
{
	memset(api, 0, sizeof *api);
	const char *path = library ? library : DNN_DEFAULT_LIBRARY;
	snprintf(api->path, sizeof api->path, "%s", path);
	dlerror();
	api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!api->lib) {
		/* A bare name went through the loader's search path: say how to extend it. */
		const char *why = dlerror();
		return sp_fail(err, "%s: cannot load cuDNN (%s)%s", path, why ? why : "dlopen failed",
			       strchr(path, '/') ? ""
						 : "; put the folder holding it in LD_LIBRARY_PATH "
						   "or give the library's path");
	}
	/* POSIX: a function pointer travels through void * from dlsym. */
	void *sym = dlsym(api->lib, "cudnnGetVersion");
	if (!sym) {
		attention_cudnn_api_unload(api);
		return sp_fail(err, "%s: not cuDNN (no cudnnGetVersion in it)", path);
	}
	memcpy(&api->get_version, &sym, sizeof sym);
	api->version = api->get_version();
	if (attention_cudnn_api_check_version(path, api->version, err)) {
		attention_cudnn_api_unload(api);
		return -1;
	}
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		sym = dlsym(api->lib, entries[i].name);
		if (!sym) {
			attention_cudnn_api_unload(api);
			return sp_fail(err, "%s: cuDNN %zu lacks %s, which fused attention needs",
				       path, api->version, entries[i].name);
		}
		memcpy((char *)api + entries[i].offset, &sym, sizeof sym);
	}
	/* Optional (cuDNN 9.0 on): the text behind the last failed call. */
	sym = dlsym(api->lib, "cudnnGetLastErrorString");
	if (sym)
		memcpy(&api->get_last_error_string, &sym, sizeof sym);
	return 0;
}

void attention_cudnn_api_unload(struct attention_cudnn_api *api)
{
	if (api->lib)
		dlclose(api->lib);
	api->lib = NULL;
}

int attention_cudnn_api_fail(const struct attention_cudnn_api *api, int status, const char *what,
			     struct sp_err *err)
{
	char detail[SP_ERR_MAX] = "";
	if (api->get_last_error_string)
		api->get_last_error_string(detail, sizeof detail);
	return sp_fail(err, "cuDNN %s: %s%s%s", what, api->get_error_string(status),
		       *detail ? ": " : "", detail);
}
