/* Loading libnccl.so.2 at run time: see gnn_nccl_api.h. Plain C with no
 * CUDA, built the same with and without nvcc. */
#include "gnn/gnn_nccl_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gnn_nccl_config gnn_nccl_config_nonblocking(void)
{
	struct gnn_nccl_config c;
	memset(&c, 0, sizeof c);
	c.size = offsetof(struct gnn_nccl_config, blocking) + sizeof c.blocking;
	c.magic = GNN_NCCL_CONFIG_MAGIC;
	c.version = GNN_NCCL_VERSION_REQUIRED;
	c.blocking = 0;
	return c;
}

int gnn_nccl_api_check_version(const char *path, int version, struct sp_err *err)
{
	if (version >= GNN_NCCL_VERSION_REQUIRED)
		return 0;
	/* NCCL_VERSION(X,Y,Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z after */
	const int wide = version >= 10000;
	return sp_fail(err, "%s: NCCL %d.%d.%d found, 2.14 or later required", path,
		       wide ? version / 10000 : version / 1000,
		       wide ? version / 100 % 100 : version / 100 % 10, version % 100);
}

/* Every entry point, by name, and where its pointer goes. */
#define ENTRY(field, name) {offsetof(struct gnn_nccl_api, field), name}
static const struct {
	size_t offset;
	const char *name;
} nccl_entries[] = {
	ENTRY(get_error_string, "ncclGetErrorString"),
	ENTRY(get_unique_id, "ncclGetUniqueId"),
	ENTRY(comm_init_rank_config, "ncclCommInitRankConfig"),
	ENTRY(comm_get_async_error, "ncclCommGetAsyncError"),
	ENTRY(comm_abort, "ncclCommAbort"),
	ENTRY(comm_finalize, "ncclCommFinalize"),
	ENTRY(comm_destroy, "ncclCommDestroy"),
	ENTRY(all_reduce, "ncclAllReduce"),
	ENTRY(all_gather, "ncclAllGather"),
	ENTRY(reduce_scatter, "ncclReduceScatter"),
	ENTRY(send, "ncclSend"),
	ENTRY(recv, "ncclRecv"),
	ENTRY(group_start, "ncclGroupStart"),
	ENTRY(group_end, "ncclGroupEnd"),
};
#undef ENTRY

/* POSIX: a function pointer travels through void * from dlsym. */
static int resolve(struct gnn_nccl_api *api, const char *name, size_t offset)
{
	void *sym = dlsym(api->lib, name);
	if (sym)
		memcpy((char *)api + offset, &sym, sizeof sym);
	return sym ? 0 : -1;
}

int gnn_nccl_api_load(const char *library, struct gnn_nccl_api *api, struct sp_err *err)
{
	memset(api, 0, sizeof *api);
	const char *path = library ? library : GNN_NCCL_DEFAULT_LIBRARY;
	snprintf(api->path, sizeof api->path, "%s", path);
	dlerror();
	api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!api->lib) {
		const char *why = dlerror();
		return sp_fail(err,
			       "%s: cannot load NCCL (%s); NCCL comes with PyTorch's environment "
			       "(the lib/ folder beside python3 -c \"import nvidia.nccl as m; "
			       "print(m.__path__)\") or with CUDA (/usr/local/cuda/lib): put its "
			       "folder in LD_LIBRARY_PATH",
			       path, why ? why : "dlopen failed");
	}
	if (resolve(api, "ncclGetVersion", offsetof(struct gnn_nccl_api, get_version))) {
		gnn_nccl_api_unload(api);
		return sp_fail(err, "%s: not NCCL (no ncclGetVersion in it)", path);
	}
	if (api->get_version(&api->version) != GNN_NCCL_SUCCESS) {
		gnn_nccl_api_unload(api);
		return sp_fail(err, "%s: ncclGetVersion failed", path);
	}
	if (gnn_nccl_api_check_version(path, api->version, err)) {
		gnn_nccl_api_unload(api);
		return -1;
	}
	for (size_t i = 0; i < sizeof nccl_entries / sizeof nccl_entries[0]; i++) {
		if (resolve(api, nccl_entries[i].name, nccl_entries[i].offset)) {
			gnn_nccl_api_unload(api);
			return sp_fail(err, "%s: NCCL %d lacks %s", path, api->version,
				       nccl_entries[i].name);
		}
	}
	resolve(api, "ncclGetLastError", offsetof(struct gnn_nccl_api, get_last_error));
	return 0;
}

void gnn_nccl_api_unload(struct gnn_nccl_api *api)
{
	if (api->lib)
		dlclose(api->lib);
	api->lib = NULL;
}

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gnn_nccl_api shared_api;

const struct gnn_nccl_api *gnn_nccl_api_shared(struct sp_err *err)
{
	pthread_mutex_lock(&shared_lock);
	int failed = 0;
	if (!shared_api.lib) {
		/* NVLink multicast (NVLS) stays off unless the user asks for it:
		 * on shared hosts a program using it can put every GPU of the host
		 * out of service, and the GNN's transfers (point-to-point rows,
		 * all-reduces of a few MB of gradients) gain little from it. NCCL
		 * reads the variable when a communicator is made; overwrite = 0
		 * keeps a value the user set. */
		setenv("NCCL_NVLS_ENABLE", "0", 0);
		failed = gnn_nccl_api_load(NULL, &shared_api, err);
	}
	pthread_mutex_unlock(&shared_lock);
	return failed ? NULL : &shared_api;
}

int gnn_nccl_api_fail(const struct gnn_nccl_api *api, void *comm, int result, const char *what,
		      struct sp_err *err)
{
	const char *last = api->get_last_error ? api->get_last_error(comm) : NULL;
	if (!last)
		last = "";
	return sp_fail(err, "%s: %s%s%s", what, api->get_error_string(result), *last ? ": " : "",
		       last);
}
