/* What kernels/ksmm decides on the CPU, without a device: the rules a
 * configuration must pass (each refusal names its rule), the untuned
 * default (passes them for every shape, dtype, layout and batch), a block's
 * shared memory and threads, the NVRTC disk cache (its folder, hits and
 * misses, foreign or truncated entries read as misses, an unwritable folder
 * only costs the store), and every path of the kernel source compiled by
 * NVRTC (builds with nvcc only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksmm/ksmm_impl.h"
#include "testutil.h"

#define SIMT(tr, tk, tb, wr, wb, v, s) {KSMM_SIMT, tr, tk, tb, wr, wb, v, s, 0, 1}
#define MMA(tr, tk, tb, wr, wb, v, s, tf) {KSMM_MMA, tr, tk, tb, wr, wb, v, s, tf, 1}

struct refusal {
	int64_t batch;
	enum ksmm_dtype t;
	enum ksmm_layout l;
	struct ksmm_config cfg;
	const char *reason;
};

static void test_rules_refuse(void **state)
{
	const struct ksmm_pattern p = {2, 64, 6, 2}, p1 = {2, 64, 64, 1};
	const enum ksmm_dtype f32 = KSMM_F32, f16 = KSMM_F16;
	const enum ksmm_layout bsl = KSMM_BS_LAST, bsf = KSMM_BS_FIRST;
	const struct refusal cases[] = {
		{1000, f32, bsl, SIMT(64, 16, 64, 8, 8, 4, 2), "vec 4 does not divide c = 6"},
		{1001, f32, bsl, SIMT(64, 16, 64, 8, 8, 2, 2), "does not divide the batch 1001"},
		{1000, f32, bsl, SIMT(64, 16, 64, 3, 8, 1, 2),
		 "thread_rows 3 does not divide tile_rows 64"},
		{1000, f32, bsl, SIMT(64, 16, 60, 8, 8, 1, 2),
		 "thread_batch 8 does not divide tile_batch 60"},
		{1000, f32, bsl, MMA(64, 16, 64, 32, 32, 1, 2, 0), "needs tf32"},
		{1000, f16, bsl, MMA(64, 16, 64, 32, 32, 1, 2, 1), "tf32 applies to fp32 only"},
		{1000, f16, bsl, MMA(64, 16, 64, 32, 32, 1, 2, 3), "tf32 applies to fp32 only"},
		{1000, f32, bsl, MMA(64, 16, 64, 32, 32, 1, 2, 2), "tf32 2: must be 0, 1"},
		{1000, f32, bsl, SIMT(1024, 16, 64, 1, 1, 1, 2), "threads per block"},
		{1000, f32, bsl, SIMT(256, 256, 256, 16, 16, 1, 2), "shared memory"},
		{1000, f32, bsl, SIMT(64, 16, 64, 32, 32, 1, 2), "registers"},
		{1000, f16, bsf, MMA(48, 16, 64, 24, 32, 1, 2, 0), "not a multiple of 16"},
		{1000, f16, bsf, MMA(64, 16, 48, 32, 24, 1, 2, 0), "not a multiple of 16"},
		{1000, f16, bsf, MMA(64, 8, 64, 32, 32, 1, 2, 0), "tile_k 8 not a multiple of 16"},
		{1000, f32, bsf, SIMT(64, 16, 64, 8, 8, 1, 3), "stages 3: more than 2 needs cp.async"},
		{1000, f16, bsl, MMA(64, 16, 64, 32, 32, 1, 3, 0), "stages 3: more than 2"},
		{1000, f32, bsl, SIMT(64, 16, 64, 8, 8, 3, 2), "vec 3: must be 1, 2, 4 or 8"},
		{1000, f32, bsl, SIMT(64, 16, 64, 8, 8, 8, 2), "32 bytes, over the widest load"},
		{1000, f32, bsl, SIMT(64, 0, 64, 8, 8, 1, 2), "at least 1"},
		{0, f32, bsl, SIMT(64, 16, 64, 8, 8, 1, 2), "batch 0"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char why[200] = "";
		assert_int_equal(ksmm_config_check(&p, cases[i].batch, cases[i].t, cases[i].l,
						   &cases[i].cfg, why, sizeof why),
				 KSMM_UNRUNNABLE);
		if (!strstr(why, cases[i].reason))
			fail_msg("case %zu: expected \"%s\" in \"%s\"", i, cases[i].reason, why);
	}
	/* tf32 on SIMT, and stages past 8 where cp.async would allow more */
	char why[200];
	const struct ksmm_config simt_tf32 = {KSMM_SIMT, 64, 16, 64, 8, 8, 1, 2, 1, 1};
	assert_int_equal(ksmm_config_check(&p1, 64, f32, bsl, &simt_tf32, why, sizeof why),
			 KSMM_UNRUNNABLE);
	assert_non_null(strstr(why, "tf32 needs the mma variant"));
	const struct ksmm_config deep = MMA(64, 16, 64, 32, 32, 8, 9, 0);
	assert_int_equal(ksmm_config_check(&p1, 64, f16, bsl, &deep, why, sizeof why),
			 KSMM_UNRUNNABLE);
	assert_non_null(strstr(why, "stages 9: at most 8"));
	/* and the same shapes accepted where the rule holds */
	const struct ksmm_config async3 = MMA(64, 16, 64, 32, 32, 8, 3, 0);
	assert_int_equal(ksmm_config_check(&p1, 64, f16, bsl, &async3, why, sizeof why), 0);
	assert_int_equal(ksmm_config_check(&p1, 64, f16, bsf, &async3, why, sizeof why), 0);
	/* bsf with d > 1 reads x one element a load: no cp.async, no third stage */
	const struct ksmm_pattern p2 = {2, 64, 64, 2};
	assert_int_equal(ksmm_config_check(&p2, 64, f16, bsf, &async3, why, sizeof why),
			 KSMM_UNRUNNABLE);
	/* without a why buffer */
	assert_int_equal(ksmm_config_check(&p, 0, f32, bsl, &async3, NULL, 0), KSMM_UNRUNNABLE);
}

/* cfg refused for p at batch 64 with reason in the message. */
static void refused(const struct ksmm_pattern *p, enum ksmm_dtype t, enum ksmm_layout l,
		    const struct ksmm_config *cfg, const char *reason)
{
	char why[200] = "";
	assert_int_equal(ksmm_config_check(p, 64, t, l, cfg, why, sizeof why), KSMM_UNRUNNABLE);
	if (!strstr(why, reason))
		fail_msg("expected \"%s\" in \"%s\"", reason, why);
}

/* Blocks over several de (tile_d): bsf only, a power of two dividing d.
 * SIMT and TF32: a group of threads a de, shared memory for each and for
 * the staged output, no cp.async. 16-bit mma: each warp all tile_d de, the
 * x tile [n][k][de] by cp.async (stages past 2 allowed), tile_d times the
 * accumulators. */
static void test_tile_d_rules(void **state)
{
	const enum ksmm_dtype f32 = KSMM_F32, f16 = KSMM_F16;
	const enum ksmm_layout bsf = KSMM_BS_FIRST, bsl = KSMM_BS_LAST;
	const struct ksmm_pattern p2 = {2, 64, 64, 2}, p16 = {2, 64, 64, 16};
	char why[200];
	struct ksmm_config ts = SIMT(32, 16, 32, 4, 4, 4, 2);
	ts.tile_d = 4;
	assert_int_equal(ksmm_config_check(&p16, 64, f32, bsf, &ts, why, sizeof why), 0);
	assert_int_equal(ksmm_config_threads(&ts), 4 * 64);
	assert_int_equal(ksmm_config_smem_bytes(&ts, f32, bsf), 2 * 4 * 4 * 16 * (36 + 36));
	assert_int_equal(ksmm_async(&p16, f32, bsf, &ts), 0);
	struct ksmm_config td = MMA(32, 32, 64, 32, 16, 8, 2, 0);
	td.tile_d = 4;
	assert_int_equal(ksmm_config_check(&p16, 64, f16, bsf, &td, why, sizeof why), 0);
	assert_int_equal(ksmm_config_threads(&td), 4 * 32);
	assert_int_equal(ksmm_config_smem_bytes(&td, f16, bsf),
			 2 * 2 * (4 * 32 * (32 + 8) + 64 * (32 * 4 + 4)));
	assert_int_equal(ksmm_grid_blocks(&p16, 64, &td), 2 * 4 * 2 * 1);
	assert_int_equal(ksmm_xvec(&p16, bsf, &td), 4); /* within the 4 de, not vec 8 */
	assert_int_equal(ksmm_async(&p16, f16, bsf, &td), 1);
	td.stages = 3;
	assert_int_equal(ksmm_config_check(&p16, 64, f16, bsf, &td, why, sizeof why), 0);
	td.stages = 1;
	refused(&p16, f16, bsf, &td, "needs cp.async");
	td.stages = 2;
	refused(&p16, f16, bsl, &td, "tile_d 4: bsf only");
	refused(&p2, f16, bsf, &td, "tile_d 4 does not divide d = 2");
	td.tile_d = 3;
	refused(&p16, f16, bsf, &td, "tile_d 3: not a power of two");
	td.tile_d = 16; /* 16 x 2 x 2 x 4 accumulators a thread */
	assert_int_equal(ksmm_config_check(&p16, 64, f16, bsf, &td, why, sizeof why), 0);
	td.thread_batch = 64; /* 16 x 2 x 8 x 4 */
	td.tile_batch = 128;
	refused(&p16, f16, bsf, &td, "registers: 1024 accumulators");
	ts.tile_d = 16; /* 16 groups of 64 threads */
	ts.tile_rows = 64;
	refused(&p16, f32, bsf, &ts, "threads per block: 2048");
}

/* SIMT by cp.async: fp32 bsl at three stages or more, W kept [r][k] (its
 * rows padded by 4) beside X [k][n]; two stages keep the register path,
 * and the default stays there. */
static void test_simt_async_rules(void **state)
{
	const struct ksmm_pattern p = {2, 256, 256, 4};
	char why[200];
	struct ksmm_config k = SIMT(128, 16, 64, 8, 8, 4, 3);
	assert_int_equal(ksmm_config_check(&p, 64, KSMM_F32, KSMM_BS_LAST, &k, why, sizeof why), 0);
	assert_int_equal(ksmm_async(&p, KSMM_F32, KSMM_BS_LAST, &k), 1);
	assert_int_equal(ksmm_config_smem_bytes(&k, KSMM_F32, KSMM_BS_LAST),
			 3 * 4 * (128 * (16 + 4) + 16 * (64 + 4)));
	refused(&p, KSMM_F32, KSMM_BS_FIRST, &k, "stages 3");
	refused(&p, KSMM_F16, KSMM_BS_LAST, &k, "stages 3");
	k.tile_k = 2;
	k.vec = 2;
	refused(&p, KSMM_F32, KSMM_BS_LAST, &k, "tile_k a multiple of 4");
	k = (struct ksmm_config)SIMT(128, 16, 64, 8, 8, 4, 2);
	assert_int_equal(ksmm_async(&p, KSMM_F32, KSMM_BS_LAST, &k), 0);
	assert_int_equal(ksmm_config_smem_bytes(&k, KSMM_F32, KSMM_BS_LAST),
			 2 * 4 * 16 * (128 + 4 + 64 + 4));
	ksmm_config_default(&p, 25088, KSMM_F32, KSMM_BS_LAST, &k);
	assert_int_equal(k.stages, 2);
}

/* The default passes the rules for every shape, dtype, layout and batch,
 * never picks TF32, and takes tensor cores for fp16/bf16. */
static void test_default_always_runs(void **state)
{
	static const int64_t sizes[] = {1, 3, 16, 48, 64, 100, 768};
	static const int64_t ds[] = {1, 2, 16};
	static const int64_t batches[] = {1, 7, 33, 1000, 25088};
	int n = 0;
	for (int ai = 1; ai <= 3; ai++)
		for (size_t bi = 0; bi < 7; bi++)
			for (size_t ci = 0; ci < 7; ci++)
				for (size_t di = 0; di < 3; di++)
					for (size_t ni = 0; ni < 5; ni++)
						for (int t = 0; t < 3; t++)
							for (int l = 0; l < 2; l++) {
								const struct ksmm_pattern p = {
									ai, sizes[bi], sizes[ci], ds[di]};
								struct ksmm_config k;
								char why[200];
								ksmm_config_default(&p, batches[ni], t, l, &k);
								if (ksmm_config_check(&p, batches[ni], t, l, &k,
										      why, sizeof why))
									fail_msg("%d,%lld,%lld,%lld batch %lld: %s",
										 ai, (long long)p.b,
										 (long long)p.c, (long long)p.d,
										 (long long)batches[ni], why);
								assert_int_equal(k.tf32, 0);
								assert_int_equal(k.variant, t == KSMM_F32
									? KSMM_SIMT : KSMM_MMA);
								n++;
							}
	assert_int_equal(n, 3 * 7 * 7 * 3 * 5 * 3 * 2);
	/* the anchors' shape gets the sweeps' winners */
	const struct ksmm_pattern p = {4, 64, 64, 16};
	struct ksmm_config k;
	ksmm_config_default(&p, 25088, KSMM_F16, KSMM_BS_LAST, &k);
	const struct ksmm_config mma = MMA(64, 64, 64, 32, 16, 8, 3, 0);
	assert_memory_equal(&k, &mma, sizeof k);
	ksmm_config_default(&p, 25088, KSMM_F32, KSMM_BS_LAST, &k);
	const struct ksmm_config simt = SIMT(64, 16, 64, 8, 4, 4, 2);
	assert_memory_equal(&k, &simt, sizeof k);
}

static void test_block_sizes(void **state)
{
	const struct ksmm_config simt = SIMT(64, 16, 64, 8, 4, 4, 2);
	const struct ksmm_config mma = MMA(64, 64, 64, 32, 16, 8, 3, 0);
	const struct ksmm_config tf32 = MMA(64, 32, 128, 32, 64, 4, 2, 1);
	/* SIMT: fp32 [k][tile + 4] twice, per stage */
	assert_int_equal(ksmm_config_smem_bytes(&simt, KSMM_F16, KSMM_BS_LAST),
			 2 * 4 * 16 * (68 + 68));
	assert_int_equal(ksmm_config_threads(&simt), 128);
	/* MMA 16-bit: W [64][72]; x [k][64 + 8] (bsl) or [n][64 + 8] (bsf) */
	assert_int_equal(ksmm_config_smem_bytes(&mma, KSMM_F16, KSMM_BS_LAST),
			 3 * 2 * (64 * 72 + 64 * 72));
	assert_int_equal(ksmm_config_smem_bytes(&mma, KSMM_BF16, KSMM_BS_FIRST),
			 3 * 2 * (64 * 72 + 64 * 72));
	assert_int_equal(ksmm_config_threads(&mma), 8 * 32);
	/* TF32: fp32, W [64][32 + 4]; x [k][128 + 8] (bsl) or [n][32 + 4] (bsf) */
	assert_int_equal(ksmm_config_smem_bytes(&tf32, KSMM_F32, KSMM_BS_LAST),
			 2 * 4 * (64 * 36 + 32 * 136));
	assert_int_equal(ksmm_config_smem_bytes(&tf32, KSMM_F32, KSMM_BS_FIRST),
			 2 * 4 * (64 * 36 + 128 * 36));
	assert_int_equal(ksmm_config_threads(&tf32), 4 * 32);
	const struct ksmm_pattern p = {3, 100, 64, 5};
	assert_int_equal(ksmm_grid_blocks(&p, 1000, &mma), 3 * 5 * 2 * 16);
}

static void test_names_and_tolerances(void **state)
{
	assert_string_equal(ksmm_method_name(KSMM_M_KERNEL), "kernel");
	assert_string_equal(ksmm_method_name(KSMM_M_DENSE_TF32), "dense_tf32");
	assert_string_equal(ksmm_method_name(KSMM_M_BSR), "bsr");
	assert_string_equal(ksmm_method_name(KSMM_M_COUNT), "?");
	assert_true(ksmm_tolerance(KSMM_F32, 0) == 1e-5);
	assert_true(ksmm_tolerance(KSMM_F32, 1) == 1e-3);
	assert_true(ksmm_tolerance(KSMM_F32, 3) == 1e-5); /* three TF32 products: fp32's */
	assert_true(ksmm_tolerance(KSMM_BF16, 0) == 1e-2);
}

static void test_cache_dir(void **state)
{
	char dir[4096];
	struct sp_err e;
	setenv("SPKIT_CACHE_DIR", "/x/cache", 1);
	setenv("XDG_CACHE_HOME", "/x/xdg", 1);
	setenv("HOME", "/x/home", 1);
	assert_int_equal(ksmm_cache_dir(dir, sizeof dir, &e), 0);
	assert_string_equal(dir, "/x/cache");
	unsetenv("SPKIT_CACHE_DIR");
	assert_int_equal(ksmm_cache_dir(dir, sizeof dir, &e), 0);
	assert_string_equal(dir, "/x/xdg/spkit/nvrtc");
	setenv("XDG_CACHE_HOME", "", 1);
	assert_int_equal(ksmm_cache_dir(dir, sizeof dir, &e), 0);
	assert_string_equal(dir, "/x/home/.cache/spkit/nvrtc");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(ksmm_cache_dir(dir, sizeof dir, &e), -1);
	assert_non_null(strstr(e.msg, "SPKIT_CACHE_DIR"));
	setenv("SPKIT_CACHE_DIR", "/x/a-long-name", 1);
	assert_int_equal(ksmm_cache_dir(dir, 8, &e), -1);
	assert_non_null(strstr(e.msg, "longer than 8 bytes"));
}

/* The entry file of `key` in test_dir/cache/sub (as ksmm_cache.c names it). */
static const char *entry_of(const char *key)
{
	return test_path("cache/sub/ksmm-%016llx.cubin",
			 (unsigned long long)ksmm_hash(key, strlen(key), 0));
}

static void test_cache_entries(void **state)
{
	/* a folder that does not exist yet, two levels down */
	setenv("SPKIT_CACHE_DIR", test_path("cache/sub"), 1);
	struct ksmm_cache_stats s0, s1;
	ksmm_cache_stats(&s0);
	const char code[] = "machine code \0 with a zero byte";
	void *data = NULL;
	size_t size = 0;
	assert_int_equal(ksmm_cache_load("key one", &data, &size), 0);
	ksmm_cache_store("key one", code, sizeof code);
	assert_int_equal(ksmm_cache_load("key one", &data, &size), 1);
	assert_int_equal(size, sizeof code);
	assert_memory_equal(data, code, sizeof code);
	free(data);
	ksmm_cache_stats(&s1);
	assert_int_equal(s1.hits, s0.hits + 1);
	assert_int_equal(s1.compiles, s0.compiles);
	ksmm_cache_count_compile();
	ksmm_cache_stats(&s1);
	assert_int_equal(s1.compiles, s0.compiles + 1);

	/* another key is a miss; so is the right file holding another key (a
	 * hash collision), a truncated entry, and a foreign file */
	assert_int_equal(ksmm_cache_load("key two", &data, &size), 0);
	FILE *f = fopen(entry_of("key two"), "wb");
	fputs("spkit-nvrtc 1\nkey twO", f);
	fputc(0, f);
	fputs("code", f);
	fclose(f);
	assert_int_equal(ksmm_cache_load("key two", &data, &size), 0);
	f = fopen(entry_of("key one"), "r+b");
	assert_int_equal(ftruncate(fileno(f), 10), 0);
	fclose(f);
	assert_int_equal(ksmm_cache_load("key one", &data, &size), 0);
	f = fopen(entry_of("key three"), "wb");
	fputs("not a cache entry at all, but long enough", f);
	fclose(f);
	assert_int_equal(ksmm_cache_load("key three", &data, &size), 0);
	/* no temporary files left behind */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", test_path("cache/sub"));
	assert_int_not_equal(system(cmd), 0);

	/* an unwritable folder: the store is lost, nothing fails */
	setenv("SPKIT_CACHE_DIR", "/proc/spkit-no-such-folder", 1);
	ksmm_cache_store("key one", code, sizeof code);
	assert_int_equal(ksmm_cache_load("key one", &data, &size), 0);
}

/* Every path of the kernel source (SIMT, mma.sync by cp.async and through
 * registers, TF32; both layouts, d = 1 and d > 1) compiles with NVRTC for
 * sm_90 and sm_80 (SIMT by cp.async too), which needs no device: a syntax error in
 * ksmm_kernel.cuh fails here, not on the GPU machine. A second build of
 * the same configuration reads the cache. */
static void test_nvrtc_builds(void **state)
{
#ifdef SPKIT_CUDA
	setenv("SPKIT_CACHE_DIR", test_path("nvrtc"), 1);
	const struct ksmm_pattern d1 = {2, 64, 64, 1}, d2 = {2, 64, 64, 2}, d16 = {2, 64, 64, 16};
	struct ksmm_config dts = SIMT(32, 16, 32, 4, 4, 4, 2), dtm = MMA(64, 16, 64, 32, 16, 8, 3, 0);
	dts.tile_d = 4;
	dtm.tile_d = 8;
	const struct {
		const struct ksmm_pattern *p;
		enum ksmm_dtype t;
		enum ksmm_layout l;
		struct ksmm_config cfg;
		int cc;
	} builds[] = {
		{&d2, KSMM_F32, KSMM_BS_LAST, SIMT(64, 16, 64, 8, 4, 4, 2), 90},
		{&d2, KSMM_BF16, KSMM_BS_FIRST, SIMT(32, 16, 32, 4, 4, 2, 1), 90},
		{&d2, KSMM_F16, KSMM_BS_LAST, MMA(64, 64, 64, 32, 16, 8, 3, 0), 90},
		{&d1, KSMM_BF16, KSMM_BS_FIRST, MMA(64, 32, 64, 32, 32, 4, 2, 0), 90},
		{&d2, KSMM_F16, KSMM_BS_FIRST, MMA(64, 32, 64, 32, 32, 8, 2, 0), 90},
		{&d2, KSMM_F32, KSMM_BS_LAST, MMA(64, 32, 64, 32, 32, 4, 2, 1), 90},
		{&d2, KSMM_F16, KSMM_BS_LAST, MMA(64, 64, 64, 32, 16, 8, 3, 0), 80},
		{&d2, KSMM_F32, KSMM_BS_FIRST, SIMT(64, 16, 64, 8, 4, 4, 2), 80},
		{&d16, KSMM_F32, KSMM_BS_FIRST, dts, 90},
		{&d16, KSMM_BF16, KSMM_BS_FIRST, dtm, 90},
		{&d2, KSMM_F32, KSMM_BS_LAST, SIMT(128, 16, 64, 8, 8, 4, 3), 90},
		{&d2, KSMM_F32, KSMM_BS_LAST, SIMT(64, 8, 64, 8, 4, 2, 4), 80},
		{&d2, KSMM_F32, KSMM_BS_LAST, MMA(128, 16, 128, 64, 32, 4, 3, 3), 90},
		{&d1, KSMM_F32, KSMM_BS_FIRST, MMA(64, 32, 64, 32, 32, 4, 3, 3), 80},
	};
	const size_t n = sizeof builds / sizeof builds[0];
	struct ksmm_cache_stats s0, s1;
	struct sp_err e;
	ksmm_cache_stats(&s0);
	for (size_t i = 0; i < n; i++)
		if (ksmm_kernel_build(&builds[i].cfg, builds[i].p, builds[i].t, builds[i].l,
				      builds[i].cc, &e))
			fail_msg("build %zu: %s", i, e.msg);
	ksmm_cache_stats(&s1);
	assert_int_equal(s1.compiles, s0.compiles + n);
	assert_int_equal(ksmm_kernel_build(&builds[2].cfg, builds[2].p, builds[2].t, builds[2].l,
					   builds[2].cc, &e),
			 0);
	ksmm_cache_stats(&s0);
	assert_int_equal(s0.compiles, s1.compiles);
	assert_int_equal(s0.hits, s1.hits + 1);
	/* a refused configuration is not compiled */
	const struct ksmm_config bad = SIMT(64, 16, 64, 8, 8, 3, 2);
	assert_int_equal(ksmm_kernel_build(&bad, &d2, KSMM_F32, KSMM_BS_LAST, 90, &e),
			 KSMM_UNRUNNABLE);
	assert_non_null(strstr(e.msg, "vec 3"));
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_refuse),
		cmocka_unit_test(test_tile_d_rules),
		cmocka_unit_test(test_simt_async_rules),
		cmocka_unit_test(test_default_always_runs),
		cmocka_unit_test(test_block_sizes),
		cmocka_unit_test(test_names_and_tolerances),
		cmocka_unit_test(test_cache_dir),
		cmocka_unit_test(test_cache_entries),
		cmocka_unit_test(test_nvrtc_builds),
	};
	return cmocka_run_group_tests(tests, test_dir_setup, test_dir_teardown);
}
