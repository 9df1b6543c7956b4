/* nn.Embedding on the GPU: forward gathers a weight row per token; backward
 * sums each token's gradient row into its id's row of dweight, as PyTorch's
 * embedding_dense_backward does: the token ids are sorted with their
 * positions (CUB radix sort on the bits the vocabulary needs), then a block
 * per vocabulary row finds its run of tokens by binary search and sums their
 * gradient rows in fp32, in token order, so the result is deterministic;
 * rows no token uses are written as zeros.
 *
 * Bytes: forward reads tokens x dim weights and writes as many; backward
 * reads the ids (sorting moves 8 bytes a token a pass) and the gradient
 * rows once, and writes the whole vocab x dim dweight once. */
#include <cub/device/device_radix_sort.cuh>

#include "sample/sample_gpu.cuh"

struct embedding_extra {
	int32_t *positions, *sorted_ids, *sorted_positions;
	void *sort_temp;
	size_t sort_bytes;
	int key_bits;
};

static void embedding_release(void *extra)
{
	struct embedding_extra *e = (struct embedding_extra *)extra;
	if (!e)
		return;
	gpu_free(e->positions);
	gpu_free(e->sorted_ids);
	gpu_free(e->sorted_positions);
	gpu_free(e->sort_temp);
	free(e);
}

static __global__ void iota(int32_t *p, int64_t n)
{
	int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (int32_t)i;
}

int sample_gpu_embedding_prepare(struct sample_gpu_state *st, struct sp_err *err)
{
	struct embedding_extra *e = (struct embedding_extra *)calloc(1, sizeof *e);
	const int64_t tokens = st->s.d.rows;
	if (!e)
		return sp_fail(err, "out of memory for the embedding's state");
	st->extra = e;
	st->release = embedding_release;
	while (((int64_t)1 << e->key_bits) < st->s.d.vocab)
		e->key_bits++;
	GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(
			       (void *)NULL, e->sort_bytes, (const int32_t *)NULL, (int32_t *)NULL,
			       (const int32_t *)NULL, (int32_t *)NULL, tokens, 0, e->key_bits));
	if (gpu_malloc((void **)&e->positions, (size_t)tokens * 4, "token positions", err) ||
	    gpu_malloc((void **)&e->sorted_ids, (size_t)tokens * 4, "sorted ids", err) ||
	    gpu_malloc((void **)&e->sorted_positions, (size_t)tokens * 4, "sorted positions", err) ||
	    gpu_malloc(&e->sort_temp, e->sort_bytes, "sort scratch", err))
		return -1;
	iota<<<(unsigned)((tokens + 255) / 256), 256>>>(e->positions, tokens);
	GPU_CHECK_LAUNCH(err, "iota");
	return 0;
}

template <typename T, int V>
static __global__ void gather(const int32_t *__restrict__ ids, const T *__restrict__ w,
			      T *__restrict__ y, int64_t cols)
{
	const int64_t row = blockIdx.x, src = ids[row];
#pragma unroll 4
	for (int64_t v = threadIdx.x; v < cols / V; v += blockDim.x)
		vstore<T, V>(y + row * cols + v * V, vload<T, V>(w + src * cols + v * V));
}

/* First index of sorted[0..n) not below key. */
static __device__ int64_t lower_bound(const int32_t *sorted, int64_t n, int64_t key)
{
	int64_t lo = 0, hi = n;
	while (lo < hi) {
		int64_t mid = (lo + hi) / 2;
		if (sorted[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

template <typename T, int V>
static __global__ void scatter_sum(const int32_t *sorted_ids, const int32_t *sorted_positions,
				   int64_t tokens, const T *dy, T *dw, int64_t cols)
{
	const int64_t id = blockIdx.x;
	const int64_t lo = lower_bound(sorted_ids, tokens, id);
	const int64_t hi = lower_bound(sorted_ids + lo, tokens - lo, id + 1) + lo;
	for (int64_t v = threadIdx.x; v < cols / V; v += blockDim.x) {
		float acc[V] = {};
		for (int64_t t = lo; t < hi; t++) {
			vec<T, V> g = vload<T, V>(dy + (int64_t)sorted_positions[t] * cols + v * V);
#pragma unroll
			for (int e = 0; e < V; e++)
				acc[e] += to_f(g.v[e]);
		}
		vec<T, V> o;
#pragma unroll
		for (int e = 0; e < V; e++)
			o.v[e] = from_f<T>(acc[e]);
		vstore<T, V>(dw + id * cols + v * V, o);
	}
}

template <typename T, int V>
static int embedding_launch(struct sample_gpu_state *st, bool backward, struct sp_err *err)
{
	const struct sample_dims *d = &st->s.d;
	const int threads = sample_row_threads(d->cols / V);
	if (!backward) {
		gather<T, V><<<(unsigned)d->rows, threads>>>(sample_dev<int32_t>(st, EMB_IDS),
							   sample_dev<T>(st, EMB_W),
							   sample_dev<T>(st, EMB_Y), d->cols);
		GPU_CHECK_LAUNCH(err, "gather");
		return 0;
	}
	struct embedding_extra *e = (struct embedding_extra *)st->extra;
	GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(
			       e->sort_temp, e->sort_bytes, sample_dev<int32_t>(st, EMB_IDS),
			       e->sorted_ids, e->positions, e->sorted_positions, d->rows, 0,
			       e->key_bits));
	scatter_sum<T, V><<<(unsigned)d->vocab, threads>>>(e->sorted_ids, e->sorted_positions,
							   d->rows, sample_dev<T>(st, EMB_DY),
							   sample_dev<T>(st, EMB_DW), d->cols);
	GPU_CHECK_LAUNCH(err, "scatter_sum");
	return 0;
}

static int embedding_run(void *state, bool backward, struct sp_err *err)
{
	struct sample_gpu_state *st = (struct sample_gpu_state *)state;
	int rc = -1;
	SAMPLE_DISPATCH(st->s.p, T,
			rc = st->s.d.cols % vec16<T>() == 0
				     ? embedding_launch<T, vec16<T>()>(st, backward, err)
				     : embedding_launch<T, 1>(st, backward, err));
	return rc;
}

int sample_gpu_embedding_forward(void *state, struct sp_err *err)
{
	return embedding_run(state, false, err);
}

int sample_gpu_embedding_backward(void *state, struct sp_err *err)
{
	return embedding_run(state, true, err);
}
