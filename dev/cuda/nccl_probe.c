/* The NCCL communicator (kernels/gnn/gnn_comm_nccl.c) on every visible GPU
 * (up to 4; at least 2), one rank a thread as maxk-train --gpus N runs them:
 * each operation's result against the sums worked out on the host, the
 * ordering with stream 0, bytes_sent, the all-reduce bandwidth, then the
 * failures: a rank that aborts, a rank that stops answering, a rank that
 * never joins the init. One PASS or FAIL line a check, then the verdict;
 * exit status 1 on any failure.
 *
 * With --processes DIR, one process a GPU instead, as srun or torchrun
 * start them (rank, size and GPU from their variables: common/cli_launch.h),
 * NCCL's id handed over through a rendezvous file in DIR: the results and
 * the bandwidth, not the failures.
 *
 *   make CC="ccache cc" NVCC="ccache nvcc" CUDA_ARCH=90 build/dev/nccl_probe
 *   export LD_LIBRARY_PATH=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])")/lib:$LD_LIBRARY_PATH
 *   build/dev/nccl_probe [GPUS]
 *   for r in 0 1; do RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r \
 *       build/dev/nccl_probe --processes /tmp & done; wait
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "common/cli.h"
#include "common/cli_launch.h"
#include "core/gpu.h"
#include "core/rendezvous.h"
#include "gnn/gnn_comm_nccl.h"

#define MAX_RANKS 8 /* one process a GPU; threads: 4 at most */
#define BIG (16 << 20) /* floats: 64 MB, larger than L2, so that an unordered read shows */

static int nranks;
static unsigned char id_main[GNN_NCCL_ID_BYTES], id_stall[GNN_NCCL_ID_BYTES],
	id_absent[GNN_NCCL_ID_BYTES];
static pthread_barrier_t barrier;
static atomic_int failures;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void report(int rank, const char *check, int ok, const char *detail)
{
	pthread_mutex_lock(&print_lock);
	printf("%s rank %d: %s%s%s\n", ok ? "PASS" : "FAIL", rank, check, *detail ? ": " : "",
	       detail);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	if (!ok)
		atomic_fetch_add(&failures, 1);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank r's bytes for peer q in the exchange: sizes differ by pair. */
static size_t pair_bytes(int from, int to)
{
	return 1000 * (size_t)(from + 1) + 37 * (size_t)to + 5;
}

static unsigned char pair_byte(int from, int to, size_t j)
{
	return (unsigned char)(from * 7 + to * 13 + j);
}

/* The results: every collective, then an exchange, checked on the host. */
static int check_results(int r, struct gnn_comm *c, float *dev, float *host, struct sp_err *err)
{
	const int n = nranks;
	/* all-reduce, queued right behind a 64 MB memset on stream 0 */
	if (cudaMemsetAsync(dev, 0x3f, BIG * sizeof(float), 0) != cudaSuccess ||
	    c->allreduce_sum(c, dev, BIG, err) || gpu_download(host, dev, BIG * sizeof(float), err))
		return -1;
	float one;
	memset(&one, 0x3f, sizeof one);
	size_t bad = 0;
	for (size_t i = 0; i < BIG; i++)
		bad += host[i] != (float)n * one;
	char detail[160];
	snprintf(detail, sizeof detail, "%zu of %d wrong", bad, BIG);
	report(r, "allreduce_sum after a memset on stream 0", bad == 0, detail);

	/* all-gather of 1013 bytes a rank */
	const size_t b = 1013;
	unsigned char *bytes = (unsigned char *)host;
	for (size_t j = 0; j < b; j++)
		bytes[j] = (unsigned char)(r * 31 + j);
	unsigned char *dsend = (unsigned char *)dev, *drecv = dsend + 4096;
	if (gpu_upload(dsend, bytes, b, err) || c->allgather(c, dsend, drecv, b, err) ||
	    gpu_download(bytes, drecv, (size_t)n * b, err))
		return -1;
	bad = 0;
	for (int q = 0; q < n; q++)
		for (size_t j = 0; j < b; j++)
			bad += bytes[(size_t)q * b + j] != (unsigned char)(q * 31 + j);
	snprintf(detail, sizeof detail, "%zu of %zu bytes wrong", bad, (size_t)n * b);
	report(r, "allgather", bad == 0, detail);

	/* reduce-scatter: rank r gets sum over s of send_s[r * count + i] */
	const int64_t count = 100003;
	for (int q = 0; q < n; q++)
		for (int64_t i = 0; i < count; i++)
			host[q * count + i] = (float)((r + 1) * (q + 1) + i % 5);
	float *drs = dev + n * count;
	if (gpu_upload(dev, host, (size_t)(n * count) * sizeof(float), err) ||
	    c->reduce_scatter_sum(c, dev, drs, count, err) ||
	    gpu_download(host, drs, (size_t)count * sizeof(float), err))
		return -1;
	bad = 0;
	for (int64_t i = 0; i < count; i++)
		bad += host[i] != (float)((r + 1) * n * (n + 1) / 2 + n * (i % 5));
	snprintf(detail, sizeof detail, "%zu of %lld wrong", bad, (long long)count);
	report(r, "reduce_scatter_sum", bad == 0, detail);

	/* exchange, with a memset queued on stream 0 between start and join */
	size_t send_off[MAX_RANKS] = {0}, send_bytes[MAX_RANKS] = {0}, recv_off[MAX_RANKS] = {0},
	       recv_bytes[MAX_RANKS] = {0}, so = 0, ro = 0;
	for (int q = 0; q < n; q++) {
		if (q == r)
			continue;
		send_off[q] = so;
		send_bytes[q] = pair_bytes(r, q);
		for (size_t j = 0; j < send_bytes[q]; j++)
			bytes[so + j] = pair_byte(r, q, j);
		so += send_bytes[q];
		recv_off[q] = ro;
		recv_bytes[q] = pair_bytes(q, r);
		ro += recv_bytes[q];
	}
	unsigned char *xs = (unsigned char *)dev, *xr = xs + (1 << 20);
	float *beside = dev + (1 << 20);
	uint64_t before = c->bytes_sent;
	if (gpu_upload(xs, bytes, so, err) ||
	    c->exchange_start(c, xs, send_off, send_bytes, xr, recv_off, recv_bytes, err) ||
	    cudaMemsetAsync(beside, 0, (BIG - (1 << 20)) * sizeof(float), 0) != cudaSuccess ||
	    c->exchange_join(c, err) || gpu_download(bytes, xr, ro, err))
		return -1;
	bad = 0;
	for (int q = 0; q < n; q++)
		for (size_t j = 0; q != r && j < recv_bytes[q]; j++)
			bad += bytes[recv_off[q] + j] != pair_byte(q, r, j);
	snprintf(detail, sizeof detail, "%zu of %zu bytes wrong", bad, ro);
	report(r, "exchange_start/join", bad == 0, detail);

	/* bytes_sent: the ring's share of each collective, and the exchange */
	uint64_t want = (uint64_t)2 * (n - 1) * BIG * 4 / n + (uint64_t)(n - 1) * b +
			(uint64_t)(n - 1) * count * 4;
	snprintf(detail, sizeof detail, "%llu collective bytes (want %llu), exchange %llu (want %zu)",
		 (unsigned long long)before, (unsigned long long)want,
		 (unsigned long long)(c->bytes_sent - before), so);
	report(r, "bytes_sent", before == want && c->bytes_sent - before == so, detail);
	return c->sync(c, err);
}

/* The all-reduce bandwidth over 64 MB, as nccl-tests reports it (bus
 * bandwidth: 2 (n - 1) / n x bytes / time). */
static int measure(int r, struct gnn_comm *c, float *dev, struct sp_err *err)
{
	const int reps = 20;
	if (c->allreduce_sum(c, dev, BIG, err) || c->sync(c, err))
		return -1;
	double t0 = now_s();
	for (int i = 0; i < reps; i++)
		if (c->allreduce_sum(c, dev, BIG, err))
			return -1;
	if (c->sync(c, err))
		return -1;
	double s = (now_s() - t0) / reps;
	char detail[160];
	snprintf(detail, sizeof detail, "64 MB in %.3f ms, bus bandwidth %.1f GB/s", 1e3 * s,
		 2.0 * (nranks - 1) / nranks * BIG * 4 / s / 1e9);
	report(r, "allreduce_sum bandwidth", 1, detail);
	return 0;
}

/* A failure within `limit` seconds, saying `part`; or, where the failing
 * rank is not the first to notice, that a sibling failed. */
static const char *const sibling = "another rank of this process failed";

static void expect_failure(int r, const char *check, int rc, const struct sp_err *err,
			   const char *part, double took, double limit)
{
	char detail[SP_ERR_MAX + 64];
	snprintf(detail, sizeof detail, "after %.2f s: %s", took, rc ? err->msg : "no error");
	int said = rc && (strstr(err->msg, part) || strstr(err->msg, sibling));
	report(r, check, said && took < limit && !strchr(err->msg, '\n'), detail);
}

/* A communicator for rank r on GPU `device`, its results and bandwidth;
 * exits on a failure, which the other ranks would wait for. */
static struct gnn_comm *run_checks(int r, int device, const unsigned char *id, float **dev,
				   float **host)
{
	struct sp_err err = {""};
	struct gnn_comm *c = NULL;
	*host = malloc(BIG * sizeof(float));
	if (!*host || gpu_select(device, &err) ||
	    gpu_malloc((void **)dev, BIG * sizeof(float), "probe", &err) ||
	    gnn_comm_nccl_create(id, r, nranks, 60, &c, &err) ||
	    check_results(r, c, *dev, *host, &err) || measure(r, c, *dev, &err)) {
		report(r, "setup and results", 0, err.msg);
		exit(1);
	}
	return c;
}

static void *rank_main(void *arg)
{
	const int r = (int)(intptr_t)arg;
	struct sp_err err = {""};
	float *dev, *host;
	struct gnn_comm *c = run_checks(r, r, id_main, &dev, &host);
	/* A rank aborts: the others' next sync fails at once, not at the timeout. */
	pthread_barrier_wait(&barrier);
	double t0 = now_s();
	if (r == nranks - 1) {
		c->abort(c);
	} else {
		int rc = c->allreduce_sum(c, dev, BIG, &err) || c->sync(c, &err);
		expect_failure(r, "a sibling's abort", rc, &err, sibling, now_s() - t0, 5);
	}
	c->destroy(c);

	/* A rank stops answering: the others give up after their timeout (2 s). */
	pthread_barrier_wait(&barrier);
	if (gnn_comm_nccl_create(id_stall, r, nranks, 2, &c, &err)) {
		report(r, "second communicator", 0, err.msg);
		exit(1);
	}
	pthread_barrier_wait(&barrier);
	if (r != nranks - 1) {
		t0 = now_s();
		int rc = c->allreduce_sum(c, dev, BIG, &err) || c->sync(c, &err);
		expect_failure(r, "a silent rank", rc, &err, "no progress from the other ranks in 2 s",
			       now_s() - t0, 10);
	}
	pthread_barrier_wait(&barrier);
	c->destroy(c);

	/* A rank that never joins the init: nranks + 1 ranks, the last absent. */
	t0 = now_s();
	int rc = gnn_comm_nccl_create(id_absent, r, nranks + 1, 3, &c, &err);
	expect_failure(r, "an absent rank at init", rc, &err,
		       "no progress from the other ranks in 3 s", now_s() - t0, 15);
	if (!rc)
		c->destroy(c);
	gpu_free(dev);
	free(host);
	return NULL;
}

static int verdict(void)
{
	int failed = atomic_load(&failures);
	printf("nccl_probe: %s (%d failed checks)\n", failed ? "FAIL" : "PASS", failed);
	return failed ? 1 : 0;
}

static const char *rendezvous_dir, *rendezvous_id;

/* Rank 0's file goes however the probe ends, so that a second run with the
 * same run id is not refused. */
static void remove_rendezvous(void)
{
	struct sp_err err;
	if (rendezvous_remove(rendezvous_dir, rendezvous_id, &err))
		fprintf(stderr, "nccl_probe: %s\n", err.msg);
}

/* This process is one rank: rank 0 publishes the id, the others wait for it. */
static int run_process(const char *dir)
{
	struct cli_launch l;
	struct sp_err err;
	cli_launch_read(&l);
	nranks = l.size;
	if (nranks < 2 || nranks > MAX_RANKS) {
		fprintf(stderr, "nccl_probe: %d ranks (2..%d), from %s\n", nranks, MAX_RANKS,
			l.source ? l.source : "no launcher");
		return 1;
	}
	const char *run_id = *l.run_id ? l.run_id : "nccl-probe";
	rendezvous_dir = dir;
	rendezvous_id = run_id;
	int failed = l.rank == 0 ? gnn_nccl_unique_id(id_main, &err) ||
					   rendezvous_publish(dir, run_id, nranks, id_main,
							      sizeof id_main, &err)
				 : rendezvous_wait(dir, run_id, nranks, id_main, sizeof id_main, 60,
						   &err);
	if (failed) {
		fprintf(stderr, "nccl_probe: rank %d: %s\n", l.rank, err.msg);
		return 1;
	}
	if (l.rank == 0)
		atexit(remove_rendezvous);
	float *dev, *host;
	struct gnn_comm *c = run_checks(l.rank, l.local_rank, id_main, &dev, &host);
	c->destroy(c);
	return verdict();
}

int main(int argc, char **argv)
{
	struct sp_err err;
	cli_init("nccl_probe");
	if (argc > 2 && !strcmp(argv[1], "--processes"))
		return run_process(argv[2]);
	nranks = gpu_count() < 4 ? gpu_count() : 4;
	if (argc > 1 && atoi(argv[1]) >= 2 && atoi(argv[1]) <= nranks)
		nranks = atoi(argv[1]);
	if (nranks < 2) {
		fprintf(stderr, "nccl_probe: needs 2 GPUs at least, %d visible\n", gpu_count());
		return 1;
	}
	if (gnn_nccl_unique_id(id_main, &err) || gnn_nccl_unique_id(id_stall, &err) ||
	    gnn_nccl_unique_id(id_absent, &err)) {
		fprintf(stderr, "nccl_probe: %s\n", err.msg);
		return 1;
	}
	printf("nccl_probe: %d ranks, NCCL_NVLS_ENABLE=%s\n", nranks, getenv("NCCL_NVLS_ENABLE"));
	pthread_barrier_init(&barrier, NULL, (unsigned)nranks);
	pthread_t threads[MAX_RANKS];
	for (int r = 0; r < nranks; r++)
		pthread_create(&threads[r], NULL, rank_main, (void *)(intptr_t)r);
	for (int r = 0; r < nranks; r++)
		pthread_join(threads[r], NULL);
	return verdict();
}
