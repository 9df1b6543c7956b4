/* The KSMM kernel (kernels/ksmm/ksmm_kernel.cuh, compiled by NVRTC) against
 * the CPU reference (lib/ksmm/ksmm_ref.c) on fresh random data: 44
 * patterns (a = 1, d = 1, b != c, sizes that no tile divides), batches of 1,
 * 7, 33, 1000 and others, fp32, fp16 and bf16, both layouts, several
 * configurations of each variant (SIMT through registers and by cp.async,
 * mma.sync fp16/bf16, TF32), plus
 * the default configuration. Outputs are poisoned (NaN) before every run.
 * Relative error max|y - ref| / max|ref| under ksmm_tolerance (fp32 1e-5,
 * TF32 1e-3, fp16/bf16 1e-2). Also: the disk cache (a second build of a
 * configuration compiles nothing), and configurations refused with a
 * reason. The cache lives in a scratch folder (SPKIT_CACHE_DIR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/rng.h"
#include "ksmm/ksmm.h"
#include "ksmm/ksmm_gpu.h"
#include "ksmm/ksmm_value.h"

static const struct ksmm_pattern patterns[] = {
	{1, 64, 64, 1},	  {1, 48, 192, 1},  {1, 192, 48, 1}, {1, 16, 16, 1},	{1, 1, 1, 1},
	{1, 3, 5, 1},	  {1, 100, 36, 1},  {2, 64, 64, 1},  {6, 64, 64, 1},	{48, 16, 16, 1},
	{1, 64, 64, 4},	  {1, 32, 128, 2},  {1, 128, 32, 2}, {1, 768, 192, 2},	{1, 17, 9, 3},
	{2, 64, 64, 4},	  {4, 64, 64, 16},  {16, 64, 64, 4}, {4, 32, 32, 16},	{2, 256, 64, 4},
	{8, 64, 256, 2},  {4, 48, 48, 4},   {3, 96, 24, 5},  {5, 24, 96, 3},	{2, 8, 8, 64},
	{2, 16, 64, 16},  {2, 64, 16, 16},  {4, 128, 128, 2}, {12, 64, 64, 4},	{32, 8, 8, 8},
	{1, 512, 128, 1}, {1, 128, 512, 1}, {2, 40, 24, 3},  {3, 24, 40, 2},	{7, 33, 65, 1},
	{1, 65, 33, 7},	  {4, 256, 256, 1}, {1, 6, 6, 6},    {64, 4, 16, 1},	{2, 2, 2, 2},
	{8, 48, 12, 4},	  {4, 12, 48, 8},   {1, 384, 96, 1}, {9, 20, 28, 2},
};
#define NPATTERNS (sizeof patterns / sizeof patterns[0])
static const int64_t batches[] = {1, 7, 33, 1000, 64, 129, 256, 40, 8, 500, 17};
#define NBATCHES (sizeof batches / sizeof batches[0])

#define SIMT(tr, tk, tb, wr, wb, v, s) {KSMM_SIMT, tr, tk, tb, wr, wb, v, s, 0, 1}
#define MMA(tr, tk, tb, wr, wb, v, s, tf) {KSMM_MMA, tr, tk, tb, wr, wb, v, s, tf, 1}
/* Blocks spanning td values of de (bsf, td dividing d), td up to 16:
 * SIMT and TF32 (groups of threads a de; one or two buffers, scalar and
 * vector loads) and 16-bit mma (warps over all td; x by cp.async 4, 8 and
 * 16 bytes wide, two and three stages). */
#define SIMT_D(tr, tk, tb, wr, wb, v, s, td) {KSMM_SIMT, tr, tk, tb, wr, wb, v, s, 0, td}
#define MMA_D(tr, tk, tb, wr, wb, v, s, tf, td) {KSMM_MMA, tr, tk, tb, wr, wb, v, s, tf, td}
static const struct ksmm_config configs_f32[] = {
	SIMT(64, 16, 128, 8, 8, 4, 2), SIMT(16, 8, 32, 2, 4, 1, 1), SIMT(32, 32, 64, 4, 4, 2, 2),
	MMA(64, 32, 128, 32, 64, 4, 2, 1), MMA(32, 16, 64, 16, 32, 1, 1, 1),
	SIMT_D(32, 16, 64, 8, 4, 4, 2, 2), SIMT_D(16, 8, 32, 4, 4, 1, 1, 4),
	SIMT_D(32, 32, 32, 4, 4, 2, 2, 16), MMA_D(32, 16, 32, 16, 8, 4, 2, 1, 4),
	/* SIMT by cp.async (bsl; refused for bsf): 16-, 8- and 4-byte copies,
	 * 3 and 4 stages, one warp reading 2 and 4 threads' rows */
	SIMT(128, 16, 64, 8, 8, 4, 3), SIMT(64, 8, 64, 8, 4, 2, 4), SIMT(32, 4, 32, 4, 4, 1, 3),
	/* 16 x 8 outputs a thread: 2, 4, 6 and 8 threads' rows, cp.async and
	 * through registers */
	SIMT(32, 8, 128, 16, 8, 4, 3), SIMT(64, 4, 256, 16, 8, 4, 4), SIMT(96, 8, 128, 16, 8, 4, 3),
	SIMT(128, 16, 128, 16, 8, 4, 3), SIMT(64, 8, 64, 16, 8, 4, 2),
	/* TF32 by cp.async (16 and 8 bytes, 3 and 2 stages), and three TF32
	 * products (held to fp32's tolerance) by cp.async, through registers
	 * (scalar loads, one buffer) and in groups of tile_d de */
	MMA(64, 32, 64, 32, 32, 4, 3, 1), MMA(128, 16, 128, 64, 32, 4, 3, 3),
	MMA(64, 8, 64, 16, 16, 2, 2, 3), MMA(32, 16, 64, 16, 32, 1, 1, 3),
	MMA_D(32, 16, 32, 16, 8, 4, 2, 3, 4),
};
static const struct ksmm_config configs_16[] = {
	MMA(64, 32, 128, 32, 64, 8, 2, 0), MMA(32, 16, 64, 16, 16, 2, 1, 0),
	MMA(16, 64, 32, 16, 32, 4, 2, 0), SIMT(32, 16, 64, 4, 4, 2, 2),
	MMA(32, 16, 64, 16, 32, 1, 2, 0), SIMT(16, 8, 32, 2, 4, 1, 1),
	MMA(64, 32, 128, 32, 64, 8, 3, 0), MMA(32, 64, 64, 32, 32, 4, 4, 0),
	MMA_D(32, 32, 64, 32, 16, 8, 2, 0, 2), MMA_D(32, 16, 32, 16, 16, 4, 2, 0, 4),
	MMA_D(32, 64, 32, 32, 16, 8, 3, 0, 16), MMA_D(16, 16, 32, 16, 16, 2, 2, 0, 8),
	SIMT_D(16, 8, 32, 2, 4, 1, 1, 2),
};

static char cache_dir[] = "/tmp/spkit-ksmm-cache-XXXXXX";

/* n values uniform in [-1, 1) in dtype's storage. */
static void *random_values(enum ksmm_dtype t, int64_t n, struct rng *r)
{
	void *v = malloc((size_t)n * ksmm_dtype_size(t) + 1);
	for (int64_t i = 0; i < n; i++)
		ksmm_value_store(t, v, i, (float)(2 * rng_uniform(r) - 1));
	return v;
}

static void *upload(const void *host, size_t bytes)
{
	struct sp_err e;
	void *p;
	assert_int_equal(gpu_malloc(&p, bytes + 16, "test", &e), 0);
	assert_int_equal(gpu_upload(p, host, bytes, &e), 0);
	return p;
}

/* One pattern, batch, dtype and layout: inputs and the reference. */
struct fixture {
	struct ksmm_pattern p;
	int64_t batch;
	enum ksmm_dtype t;
	enum ksmm_layout l;
	size_t y_bytes;
	int64_t y_count;
	double *ref, ref_max;
	void *d_w, *d_x, *d_y, *y;
};

static void fixture_init(struct fixture *f, const struct ksmm_pattern *p, int64_t batch,
			 enum ksmm_dtype t, enum ksmm_layout l, uint64_t seed)
{
	struct sp_err e;
	struct rng r;
	rng_init(&r, seed, 0);
	*f = (struct fixture){.p = *p, .batch = batch, .t = t, .l = l};
	const int64_t nw = p->a * p->b * p->c * p->d, nx = ksmm_cols(p) * batch;
	f->y_count = ksmm_rows(p) * batch;
	f->y_bytes = (size_t)f->y_count * ksmm_dtype_size(t);
	void *w = random_values(t, nw, &r), *x = random_values(t, nx, &r);
	f->ref = malloc((size_t)f->y_count * sizeof *f->ref);
	ksmm_ref_factor(p, l, t, batch, w, x, f->ref);
	for (int64_t i = 0; i < f->y_count; i++)
		f->ref_max = fmax(f->ref_max, fabs(f->ref[i]));

	void *d_w_abcd = upload(w, (size_t)nw * ksmm_dtype_size(t));
	assert_int_equal(gpu_malloc(&f->d_w, (size_t)nw * ksmm_dtype_size(t) + 16, "w", &e), 0);
	assert_int_equal(ksmm_weights_prepare(p, t, d_w_abcd, f->d_w, &e), 0);
	assert_int_equal(gpu_sync(&e), 0);
	gpu_free(d_w_abcd);
	f->d_x = upload(x, (size_t)nx * ksmm_dtype_size(t));
	assert_int_equal(gpu_malloc(&f->d_y, f->y_bytes + 16, "y", &e), 0);
	f->y = malloc(f->y_bytes + 16);
	free(w);
	free(x);
}

static void fixture_free(struct fixture *f)
{
	gpu_free(f->d_w);
	gpu_free(f->d_x);
	gpu_free(f->d_y);
	free(f->y);
	free(f->ref);
}

/* Run cfg on the fixture (output poisoned first); the relative error, or
 * INFINITY when an output is not finite. */
static double run_config(struct fixture *f, const struct ksmm_config *cfg)
{
	struct sp_err e = {{0}};
	struct ksmm_kernel *k;
	const int rc = ksmm_kernel_get(cfg, &f->p, f->t, f->l, &k, &e);
	if (rc)
		fail_msg("ksmm_kernel_get: %s", e.msg);
	memset(f->y, 0xff, f->y_bytes); /* NaN in all three types */
	assert_int_equal(gpu_upload(f->d_y, f->y, f->y_bytes, &e), 0);
	if (ksmm_kernel_run(k, f->d_w, f->d_x, f->d_y, f->batch, &e) || gpu_sync(&e))
		fail_msg("ksmm_kernel_run: %s", e.msg);
	assert_int_equal(gpu_download(f->y, f->d_y, f->y_bytes, &e), 0);
	ksmm_kernel_free(k);
	double err = 0;
	for (int64_t i = 0; i < f->y_count; i++) {
		const double v = ksmm_value(f->t, f->y, i);
		if (!isfinite(v))
			return INFINITY;
		err = fmax(err, fabs(v - f->ref[i]));
	}
	return f->ref_max > 0 ? err / f->ref_max : err;
}

static const char *config_text(const struct ksmm_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s tr%d tk%d tb%d wr%d wb%d v%d s%d td%d tf32 %d",
		 ksmm_variant_name(c->variant), c->tile_rows, c->tile_k, c->tile_batch,
		 c->thread_rows, c->thread_batch, c->vec, c->stages, c->tile_d, c->tf32);
	return buf;
}

/* Case (pattern pi, dtype t, layout l): its batch, and its configuration
 * ci (the lists, then the default at ci == count). */
static int64_t case_batch(size_t pi, int t, int l)
{
	return batches[(pi + t + l) % NBATCHES];
}

static int case_count(int t)
{
	return t == KSMM_F32 ? (int)(sizeof configs_f32 / sizeof configs_f32[0])
			     : (int)(sizeof configs_16 / sizeof configs_16[0]);
}

static struct ksmm_config case_config(size_t pi, int t, int l, int ci)
{
	struct ksmm_config cfg;
	if (ci < case_count(t))
		return t == KSMM_F32 ? configs_f32[ci] : configs_16[ci];
	ksmm_config_default(&patterns[pi], case_batch(pi, t, l), t, l, &cfg);
	return cfg;
}

/* Room for every list and the default: case_count(t) < CASE_SLOTS. */
#define CASE_SLOTS 32
_Static_assert(sizeof configs_f32 / sizeof configs_f32[0] < CASE_SLOTS &&
		       sizeof configs_16 / sizeof configs_16[0] < CASE_SLOTS,
	       "a configuration list outgrew CASE_SLOTS");

/* Every configuration of test_patterns compiled on CPU threads first
 * (ksmm_kernel_build into the disk cache): the runs then only load. */
struct prebuild {
	int cc;
	_Atomic int next, failed;
};

static void *prebuild_worker(void *arg)
{
	struct prebuild *pb = arg;
	const int per_pattern = 3 * 2 * CASE_SLOTS;
	for (int i; (i = atomic_fetch_add(&pb->next, 1)) < (int)NPATTERNS * per_pattern;) {
		const size_t pi = (size_t)(i / per_pattern);
		const int t = i % per_pattern / (2 * CASE_SLOTS), l = i % (2 * CASE_SLOTS) / CASE_SLOTS,
			  ci = i % CASE_SLOTS;
		if (ci > case_count(t))
			continue;
		const struct ksmm_config cfg = case_config(pi, t, l, ci);
		struct sp_err e;
		if (ksmm_config_check(&patterns[pi], case_batch(pi, t, l), t, l, &cfg, NULL, 0) == 0 &&
		    ksmm_kernel_build(&cfg, &patterns[pi], t, l, pb->cc, &e)) {
			print_error("ksmm_kernel_build: %s\n", e.msg);
			atomic_fetch_add(&pb->failed, 1);
		}
	}
	return NULL;
}

static void prebuild_all(void)
{
	struct gpu_info info;
	struct sp_err e;
	assert_int_equal(gpu_query(0, &info, &e), 0);
	struct prebuild pb = {info.major * 10 + info.minor, 0, 0};
	pthread_t th[16];
	for (int i = 0; i < 16; i++)
		assert_int_equal(pthread_create(&th[i], NULL, prebuild_worker, &pb), 0);
	for (int i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(pb.failed, 0);
}

/* Every pattern in every dtype and layout, each configuration that the
 * rules accept plus the default; at least two runs each (each list has
 * configurations with scalar loads, which every pattern and batch take). */
static void test_patterns(void **state)
{
	int runs = 0, skipped = 0;
	prebuild_all();
	struct ksmm_cache_stats s0;
	ksmm_cache_stats(&s0);
	for (size_t pi = 0; pi < NPATTERNS; pi++)
		for (int t = KSMM_F32; t <= KSMM_BF16; t++)
			for (int l = KSMM_BS_FIRST; l <= KSMM_BS_LAST; l++) {
				const struct ksmm_pattern *p = &patterns[pi];
				const int64_t batch = case_batch(pi, t, l);
				struct fixture f;
				fixture_init(&f, p, batch, t, l, pi * 6 + t * 2 + l + 1);
				int ran = 0;
				for (int ci = 0; ci <= case_count(t); ci++) {
					const struct ksmm_config cfg = case_config(pi, t, l, ci);
					char name[100];
					if (ksmm_config_check(p, batch, t, l, &cfg, NULL, 0)) {
						assert_true(ci < case_count(t)); /* the default runs */
						skipped++;
						continue;
					}
					const double err = run_config(&f, &cfg);
					const double tol = ksmm_tolerance(t, cfg.tf32);
					if (!(err < tol))
						fail_msg("%lld,%lld,%lld,%lld batch %lld %s %s [%s]: "
							 "relative error %g over %g",
							 (long long)p->a, (long long)p->b, (long long)p->c,
							 (long long)p->d, (long long)batch,
							 ksmm_dtype_name(t), ksmm_layout_name(l),
							 config_text(&cfg, name, sizeof name), err, tol);
					ran++;
				}
				if (ran < 2) /* every case has vec-1 configurations */
					fail_msg("%lld,%lld,%lld,%lld batch %lld %s %s: %d runs",
						 (long long)p->a, (long long)p->b, (long long)p->c,
						 (long long)p->d, (long long)batch, ksmm_dtype_name(t),
						 ksmm_layout_name(l), ran);
				runs += ran;
				fixture_free(&f);
			}
	struct ksmm_cache_stats s1;
	ksmm_cache_stats(&s1);
	/* everything was built beforehand: the runs compiled nothing */
	assert_int_equal(s1.compiles, s0.compiles);
	print_message("%d runs checked, %d configurations refused by the rules, %llu cache hits\n",
		      runs, skipped, (unsigned long long)(s1.hits - s0.hits));
}

/* A configuration nobody asked for before compiles once; asking again
 * reads the disk cache and compiles nothing. */
static void test_cache_hit(void **state)
{
	const struct ksmm_pattern p = {2, 48, 80, 3};
	const struct ksmm_config cfg = SIMT(16, 16, 48, 2, 3, 2, 2); /* used nowhere else */
	struct ksmm_cache_stats s0, s1, s2;
	struct ksmm_kernel *k;
	struct sp_err e;
	ksmm_cache_stats(&s0);
	assert_int_equal(ksmm_kernel_get(&cfg, &p, KSMM_F32, KSMM_BS_LAST, &k, &e), 0);
	ksmm_kernel_free(k);
	ksmm_cache_stats(&s1);
	assert_int_equal(s1.compiles, s0.compiles + 1);
	assert_int_equal(s1.hits, s0.hits);
	assert_int_equal(ksmm_kernel_get(&cfg, &p, KSMM_F32, KSMM_BS_LAST, &k, &e), 0);
	ksmm_cache_stats(&s2);
	assert_int_equal(s2.compiles, s1.compiles);
	assert_int_equal(s2.hits, s1.hits + 1);
	/* and the cached code computes the same thing */
	struct fixture f;
	fixture_init(&f, &p, 78, KSMM_F32, KSMM_BS_LAST, 99);
	ksmm_kernel_free(k);
	assert_true(run_config(&f, &cfg) < 1e-5);
	fixture_free(&f);
}

static void expect_refused(const struct ksmm_pattern *p, int64_t batch, enum ksmm_dtype t,
			   enum ksmm_layout l, struct ksmm_config cfg, const char *reason)
{
	char why[200] = "";
	struct ksmm_kernel *k = (struct ksmm_kernel *)1;
	struct sp_err e = {{0}};
	assert_int_equal(ksmm_config_check(p, batch, t, l, &cfg, why, sizeof why),
			 KSMM_UNRUNNABLE);
	if (!strstr(why, reason))
		fail_msg("expected \"%s\" in \"%s\"", reason, why);
	assert_int_equal(ksmm_kernel_get(&cfg, p, t, l, &k, &e), KSMM_UNRUNNABLE);
	assert_null(k);
	assert_non_null(strstr(e.msg, reason));
}

/* The rules themselves are tested on the CPU (tests/unit/ksmm/
 * test_ksmm_config.c); here, that the build refuses what they refuse,
 * before compiling anything. */
static void test_refused(void **state)
{
	const struct ksmm_pattern p = {2, 64, 6, 2};
	const struct ksmm_config vec4 = SIMT(64, 16, 64, 8, 8, 4, 2);
	const struct ksmm_config regs = SIMT(64, 16, 64, 32, 32, 1, 2);
	const struct ksmm_config stages = SIMT(64, 16, 64, 8, 8, 1, 3);
	struct ksmm_cache_stats s0, s1;
	ksmm_cache_stats(&s0);
	expect_refused(&p, 1000, KSMM_F32, KSMM_BS_LAST, vec4, "does not divide c = 6");
	expect_refused(&p, 1000, KSMM_F32, KSMM_BS_LAST, regs, "registers");
	expect_refused(&p, 1000, KSMM_F32, KSMM_BS_FIRST, stages, "stages 3");
	ksmm_cache_stats(&s1);
	assert_int_equal(s1.compiles, s0.compiles);
}

static int setup(void **state)
{
	struct sp_err e;
	if (!mkdtemp(cache_dir) || setenv("SPKIT_CACHE_DIR", cache_dir, 1))
		return -1;
	return gpu_count() > 0 && gpu_select(0, &e) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_cache_hit),
		cmocka_unit_test(test_patterns),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
