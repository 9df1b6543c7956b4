/* NCCL loaded at run time (kernels/gnn/gnn_nccl_api.c) and the NCCL
 * communicator's entry points (kernels/gnn/gnn_comm_nccl.c), on a machine
 * without a GPU: a missing library, a library that is not NCCL and an NCCL
 * older than 2.14 each fail with one line saying so; a real NCCL, where one
 * is installed, loads and makes unique ids; NCCL_NVLS_ENABLE is set to 0
 * unless the user set it; our copies of nccl.h's constants equal its own
 * where the header is installed (CUDA builds). The collectives need GPUs:
 * dev/cuda/nccl_probe.c checks them on the GPU machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/gpu.h"
#include "gnn/gnn_comm_nccl.h"
#include "gnn/gnn_nccl_api.h"

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("'%s' does not contain '%s'", text, part);
	assert_null(strchr(text, '\n'));
}

/* First, before anything loads NCCL in this process: a value the user set
 * is kept (in a child, so that the parent can still see the default). */
static void test_nvls_setting_kept(void **state)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("NCCL_NVLS_ENABLE", "1", 1);
		struct sp_err e;
		gnn_nccl_api_shared(&e); /* loaded or not, the variable stays */
		const char *v = getenv("NCCL_NVLS_ENABLE");
		_exit(v && !strcmp(v, "1") ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_nvls_off_by_default(void **state)
{
	unsetenv("NCCL_NVLS_ENABLE");
	struct sp_err e;
	gnn_nccl_api_shared(&e);
	const char *v = getenv("NCCL_NVLS_ENABLE");
	assert_non_null(v);
	assert_string_equal(v, "0");
}

static void test_missing_library(void **state)
{
	struct gnn_nccl_api api;
	struct sp_err e;
	assert_int_equal(gnn_nccl_api_load("/nonexistent/libnccl.so.2", &api, &e), -1);
	assert_contains(e.msg, "/nonexistent/libnccl.so.2: cannot load NCCL (");
	assert_contains(e.msg, "import nvidia.nccl as m");
	assert_contains(e.msg, "LD_LIBRARY_PATH");
	assert_null(api.lib);
}

static void test_not_nccl(void **state)
{
	struct gnn_nccl_api api;
	struct sp_err e;
	assert_int_equal(gnn_nccl_api_load("libz.so.1", &api, &e), -1);
	assert_string_equal(e.msg, "libz.so.1: not NCCL (no ncclGetVersion in it)");
	assert_null(api.lib);
}

static void test_version(void **state)
{
	struct sp_err e;
	assert_int_equal(gnn_nccl_api_check_version("x.so", 21400, &e), 0);
	assert_int_equal(gnn_nccl_api_check_version("x.so", 22809, &e), 0);
	assert_int_equal(gnn_nccl_api_check_version("x.so", 21212, &e), -1);
	assert_string_equal(e.msg, "x.so: NCCL 2.12.12 found, 2.14 or later required");
	/* before 2.9 the code was X*1000 + Y*100 + Z */
	assert_int_equal(gnn_nccl_api_check_version("y.so", 2708, &e), -1);
	assert_string_equal(e.msg, "y.so: NCCL 2.7.8 found, 2.14 or later required");
}

/* The config NCCL reads `size` bytes of: exactly up to `blocking`. */
static void test_config(void **state)
{
	struct gnn_nccl_config c = gnn_nccl_config_nonblocking();
	assert_int_equal(c.size, 20);
	assert_int_equal(c.magic, 0xcafebeef);
	assert_int_equal(c.version, 21400);
	assert_int_equal(c.blocking, 0);
}

/* The machine's own NCCL, when the loader finds one. */
static void test_installed(void **state)
{
	struct gnn_nccl_api api;
	struct sp_err e;
	if (gnn_nccl_api_load(NULL, &api, &e)) {
		print_message("no NCCL here: %s\n", e.msg);
		skip();
	}
	assert_true(api.version >= GNN_NCCL_VERSION_REQUIRED);
	assert_string_equal(api.path, GNN_NCCL_DEFAULT_LIBRARY);
	assert_non_null(api.group_end);
	assert_int_equal(gnn_nccl_api_fail(&api, NULL, 4, "rank 1: ncclSend", &e), -1);
	assert_contains(e.msg, "rank 1: ncclSend: ");
	assert_contains(e.msg, api.get_error_string(4));
	struct gnn_nccl_id a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	assert_int_equal(api.get_unique_id(&a), GNN_NCCL_SUCCESS);
	assert_int_equal(api.get_unique_id(&b), GNN_NCCL_SUCCESS);
	assert_memory_not_equal(&a, &b, sizeof a); /* each run its own */
	gnn_nccl_api_unload(&api);
	assert_null(api.lib);
}

static void test_create_arguments(void **state)
{
	unsigned char id[GNN_NCCL_ID_BYTES] = {0};
	struct gnn_comm *c = (void *)1;
	struct sp_err e;
#ifdef SPKIT_CUDA
	assert_int_equal(gnn_comm_nccl_create(id, 2, 2, 10, &c, &e), -1);
	assert_string_equal(e.msg, "NCCL communicator: rank 2 outside 0..1");
	assert_null(c);
	assert_int_equal(gnn_comm_nccl_create(id, 0, 2, 0, &c, &e), -1);
	assert_string_equal(e.msg, "NCCL communicator: timeout 0 s: must be positive");
#else
	assert_int_equal(gnn_nccl_unique_id(id, &e), -1);
	assert_string_equal(e.msg, "NCCL communicator: spkit was built without CUDA");
	assert_int_equal(gnn_comm_nccl_create(id, 0, 2, 10, &c, &e), -1);
	assert_string_equal(e.msg, "NCCL communicator: spkit was built without CUDA");
#endif
	assert_null(c);
}

#ifdef SPKIT_CUDA
/* Ids need no GPU; a communicator without one fails with CUDA's reason. */
static void test_without_gpu(void **state)
{
	unsigned char a[GNN_NCCL_ID_BYTES] = {0}, b[GNN_NCCL_ID_BYTES] = {0};
	struct sp_err e;
	if (gnn_nccl_unique_id(a, &e)) {
		assert_contains(e.msg, "cannot load NCCL");
		skip();
	}
	assert_int_equal(gnn_nccl_unique_id(b, &e), 0);
	assert_memory_not_equal(a, b, sizeof a);
	if (gpu_count() > 0)
		skip(); /* the GPU machine: nccl_probe makes real communicators */
	struct gnn_comm *c = (void *)1;
	assert_int_equal(gnn_comm_nccl_create(a, 0, 1, 10, &c, &e), -1);
	assert_null(c);
	assert_contains(e.msg, "rank 0: NCCL's stream and events: ");
}

#if defined(__has_include)
#if __has_include(<nccl.h>)
#include <nccl.h>
_Static_assert((int)GNN_NCCL_SUCCESS == (int)ncclSuccess, "ncclSuccess");
_Static_assert((int)GNN_NCCL_IN_PROGRESS == (int)ncclInProgress, "ncclInProgress");
_Static_assert((int)GNN_NCCL_UINT8 == (int)ncclUint8, "ncclUint8");
_Static_assert((int)GNN_NCCL_FLOAT32 == (int)ncclFloat32, "ncclFloat32");
_Static_assert((int)GNN_NCCL_SUM == (int)ncclSum, "ncclSum");
_Static_assert(GNN_NCCL_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");
_Static_assert(sizeof(struct gnn_nccl_id) == sizeof(ncclUniqueId), "ncclUniqueId");
_Static_assert(offsetof(struct gnn_nccl_config, magic) == offsetof(ncclConfig_t, magic), "magic");
_Static_assert(offsetof(struct gnn_nccl_config, version) == offsetof(ncclConfig_t, version),
	       "version");
_Static_assert(offsetof(struct gnn_nccl_config, blocking) == offsetof(ncclConfig_t, blocking),
	       "blocking");
_Static_assert(GNN_NCCL_VERSION_REQUIRED == NCCL_VERSION(2, 14, 0), "NCCL_VERSION");

static void test_header_magic(void **state)
{
	ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
	assert_int_equal(c.magic, GNN_NCCL_CONFIG_MAGIC);
}
#define HEADER_TESTS cmocka_unit_test(test_header_magic),
#endif
#endif
#endif

#ifndef HEADER_TESTS
#define HEADER_TESTS
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvls_setting_kept),
		cmocka_unit_test(test_nvls_off_by_default),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_not_nccl),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_installed),
		cmocka_unit_test(test_create_arguments),
#ifdef SPKIT_CUDA
		cmocka_unit_test(test_without_gpu),
#endif
		HEADER_TESTS
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
