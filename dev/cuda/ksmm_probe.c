/* A measurement probe for the KSMM kernel before ksmm-tune exists: a small
 * fixed space swept per pattern, the fastest configuration then run through
 * ksmm_bench_pattern beside cuBLAS dense, the bmm algorithm and cuSPARSE
 * BSR. The patterns default to those of the KSMM table in the H100/H200
 * anchors.
 *
 *   ksmm_probe build CC DTYPES          compile the space of the dtypes named
 *                                       (fp32,fp16,bf16), both layouts, for
 *                                       sm_CC into the NVRTC cache, on CPU
 *                                       threads (no GPU needed)
 *   ksmm_probe run BATCH DTYPE LAYOUT [--small] [--no-bsr] [a,b,c,d ...]
 *                                       sweep (--small: every 3rd point of
 *                                       the space), then bench (--no-bsr:
 *                                       without cuSPARSE); CSV on stdout
 *
 * Build (from the repository root, after `make gpu-tests`):
 *   cc -O2 -std=c11 -D_DEFAULT_SOURCE -Ilib -Ikernels -I/usr/local/cuda/include \
 *      dev/cuda/ksmm_probe.c build/libspkit_gpu.a build/libspkit.a \
 *      -L/usr/local/cuda/lib64 -lcublas -lcusparse -lnvrtc -lcudart_static \
 *      -ldl -lrt -lstdc++ -lm -pthread -o build/ksmm_probe */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "ksmm/ksmm.h"
#include "ksmm/ksmm_gpu.h"

static struct ksmm_pattern patterns[64] = {
	{4, 64, 64, 16}, {16, 64, 64, 4}, {4, 256, 256, 4}, {1, 768, 192, 2}, {6, 64, 64, 1},
	{2, 256, 64, 16}, {8, 64, 256, 4}, {12, 64, 64, 4}, {48, 64, 64, 1},
};
static int npatterns = 9;

#define MAXSPACE 256

/* SIMT for fp32, mma.sync for fp16/bf16. */
static int space_make(enum ksmm_dtype t, struct ksmm_config *s)
{
	int n = 0;
	if (t == KSMM_F32) {
		static const int tr[] = {32, 64, 128}, tb[] = {64, 128}, tk[] = {8, 16, 32};
		static const int thr[][2] = {{4, 4}, {8, 4}, {4, 8}, {8, 8}};
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 2; j++)
				for (int k = 0; k < 3; k++)
					for (int h = 0; h < 4; h++)
						s[n++] = (struct ksmm_config){
							KSMM_SIMT, tr[i], tk[k], tb[j], thr[h][0],
							thr[h][1], 4, 2, 0, 1};
	} else {
		/* Warp tiles down to 16 x 32: more warps a block, fewer registers
		 * each, for the patterns that are memory-bound. */
		static const int tr[] = {64, 128}, tb[] = {64, 128, 256}, tk[] = {32, 64};
		static const int warp[][2] = {{32, 32}, {32, 64}, {16, 32}, {32, 16}};
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 3; j++)
				for (int k = 0; k < 2; k++)
					for (int h = 0; h < 4; h++)
						for (int st = 2; st <= 3; st++)
							s[n++] = (struct ksmm_config){
								KSMM_MMA, tr[i], tk[k], tb[j],
								warp[h][0], warp[h][1], 8, st, 0, 1};
	}
	return n;
}

struct build_item {
	struct ksmm_config cfg;
	struct ksmm_pattern p;
	enum ksmm_dtype t;
	enum ksmm_layout l;
};

struct build_queue {
	struct build_item *items;
	int n, cc;
	_Atomic int next, failed;
};

static void *build_worker(void *arg)
{
	struct build_queue *q = arg;
	for (int i; (i = atomic_fetch_add(&q->next, 1)) < q->n;) {
		struct sp_err e;
		const struct build_item *it = &q->items[i];
		if (ksmm_kernel_build(&it->cfg, &it->p, it->t, it->l, q->cc, &e) < 0) {
			fprintf(stderr, "build: %s\n", e.msg);
			atomic_fetch_add(&q->failed, 1);
		}
	}
	return NULL;
}

static int build(int cc, const char *dtypes)
{
	static struct build_item items[3 * 2 * 2 * MAXSPACE];
	struct build_queue q = {items, 0, cc, 0, 0};
	struct ksmm_config s[MAXSPACE];
	/* d = 1 and d > 1 give bsf different code (x's load width). */
	const struct ksmm_pattern kinds[2] = {{1, 64, 64, 1}, {1, 64, 64, 2}};
	for (int t = 0; t < 3; t++)
		for (int l = 0; l < 2; l++) {
			if (!strstr(dtypes, ksmm_dtype_name((enum ksmm_dtype)t)))
				continue;
			for (int k = 0; k < 2; k++) {
				const int n = space_make((enum ksmm_dtype)t, s);
				for (int i = 0; i < n; i++)
					if (ksmm_config_check(&kinds[k], 25088, (enum ksmm_dtype)t,
							      (enum ksmm_layout)l, &s[i], NULL, 0) == 0)
						items[q.n++] = (struct build_item){
							s[i], kinds[k], (enum ksmm_dtype)t,
							(enum ksmm_layout)l};
			}
		}
	pthread_t th[16];
	for (int i = 0; i < 16; i++)
		pthread_create(&th[i], NULL, build_worker, &q);
	for (int i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
	struct ksmm_cache_stats st;
	ksmm_cache_stats(&st);
	fprintf(stderr, "%d configurations: %llu compiled, %llu cached, %d failed\n", q.n,
		(unsigned long long)st.compiles, (unsigned long long)st.hits, (int)q.failed);
	return q.failed ? 1 : 0;
}

static int small, no_bsr;

static int run(int64_t batch, enum ksmm_dtype t, enum ksmm_layout l)
{
	struct sp_err e;
	if (gpu_select(0, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double gbs;
	if (gpu_copy_bandwidth(0, 20, &gbs, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	printf("batch,a,b,c,d,dtype,layout,config,regs,kernel_ms,dense_ms,dense_tf32_ms,bmm_ms,"
	       "bsr_ms,floor_ms,kernel_rel_err,statuses,speedup_vs_best_baseline\n");
	struct ksmm_config s[MAXSPACE];
	const int n = space_make(t, s);
	for (int pi = 0; pi < npatterns; pi++) {
		const struct ksmm_pattern *p = &patterns[pi];
		/* Sweep on the same inputs the bench makes: a throwaway bench of
		 * each configuration costs the baselines too, so time the kernel
		 * alone on zeroed buffers here. */
		const size_t es = ksmm_dtype_size(t);
		void *w, *x, *y;
		const size_t wb = (size_t)(p->a * p->b * p->c * p->d) * es,
			     xb = (size_t)(ksmm_cols(p) * batch) * es,
			     yb = (size_t)(ksmm_rows(p) * batch) * es;
		if (gpu_malloc(&w, wb, "w", &e) || gpu_malloc(&x, xb, "x", &e) ||
		    gpu_malloc(&y, yb, "y", &e)) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
		double best = INFINITY;
		struct ksmm_config best_cfg;
		ksmm_config_default(p, batch, t, l, &best_cfg);
		for (int i = 0; i < n; i += small ? 3 : 1) {
			struct ksmm_kernel *k;
			struct gpu_timing tm;
			if (ksmm_config_check(p, batch, t, l, &s[i], NULL, 0) ||
			    ksmm_kernel_get(&s[i], p, t, l, &k, &e))
				continue;
			if (ksmm_kernel_time(k, w, x, y, batch, 2, 10, &tm, &e) == 0 &&
			    tm.median_ms < best) {
				best = tm.median_ms;
				best_cfg = s[i];
			}
			ksmm_kernel_free(k);
		}
		gpu_free(w);
		gpu_free(x);
		gpu_free(y);
		struct ksmm_bench_opts o = {2, 10, gbs, 1, no_bsr ? 1u << KSMM_M_BSR : 0};
		struct ksmm_bench_result r;
		if (ksmm_bench_pattern(p, batch, t, l, &best_cfg, &o, &r, &e)) {
			fprintf(stderr, "bench: %s\n", e.msg);
			continue;
		}
		const struct ksmm_config *c = &best_cfg;
		double base = INFINITY;
		for (int m = KSMM_M_DENSE; m < KSMM_M_COUNT; m++)
			if (!strcmp(r.status[m], "ok") && r.ms[m] < base)
				base = r.ms[m];
		printf("%lld,%lld,%lld,%lld,%lld,%s,%s,%s/%d/%d/%d/%d/%d/v%d/s%d,%d,%.4f,%.4f,%.4f,%.4f,"
		       "%.4f,%.4f,%.2e,%s|%s|%s|%s|%s,%.2f\n",
		       (long long)batch, (long long)p->a, (long long)p->b, (long long)p->c,
		       (long long)p->d, ksmm_dtype_name(t), ksmm_layout_name(l),
		       ksmm_variant_name(c->variant), c->tile_rows, c->tile_k, c->tile_batch,
		       c->thread_rows, c->thread_batch, c->vec, c->stages, r.registers,
		       r.ms[KSMM_M_KERNEL], r.ms[KSMM_M_DENSE], r.ms[KSMM_M_DENSE_TF32],
		       r.ms[KSMM_M_BMM], r.ms[KSMM_M_BSR], r.floor_ms, r.rel_err[KSMM_M_KERNEL],
		       r.status[0], r.status[1], r.status[2], r.status[3], r.status[4],
		       base / r.ms[KSMM_M_KERNEL]);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "build"))
		return build(atoi(argv[2]), argv[3]);
	enum ksmm_dtype t;
	enum ksmm_layout l;
	if (argc < 5 || strcmp(argv[1], "run") || ksmm_dtype_parse(argv[3], &t) ||
	    ksmm_layout_parse(argv[4], &l)) {
		fprintf(stderr, "usage: ksmm_probe build CC DTYPES | run BATCH DTYPE LAYOUT [--small] [--no-bsr] "
				"[a,b,c,d ...]\n");
		return 2;
	}
	int first = 5;
	for (; first < argc && argv[first][0] == '-'; first++) {
		small |= !strcmp(argv[first], "--small");
		no_bsr |= !strcmp(argv[first], "--no-bsr");
	}
	if (argc > first) {
		npatterns = 0;
		for (int i = first; i < argc && npatterns < 64; i++) {
			struct ksmm_pattern *p = &patterns[npatterns++];
			if (sscanf(argv[i], "%lld,%lld,%lld,%lld", (long long *)&p->a,
				   (long long *)&p->b, (long long *)&p->c, (long long *)&p->d) != 4)
				return 2;
		}
	}
	return run(atoll(argv[2]), t, l);
}
