/* MACKO SpMV on the GPU against the double-precision CPU reference, on
 * fresh random matrices: densities 1 to 0, empty rows, rows of more than
 * 10,000 elements, runs of more than 15 zeros, row counts that are not
 * multiples of the block's rows, 1 to 16 vectors, fp16 and fp32 output,
 * alpha and beta, widths whose x does not fit shared memory (read partly
 * from global memory, or more than four vectors as several products), and
 * the eight-vector kernel's gather order against a model of the banks. The
 * output is poisoned before every run so an unwritten element fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/half.h"
#include "macko/macko.h"
#include "macko/macko_layout.h"
#include "macko/macko_gpu.h"
#include "macko/macko_order.h"
#include "core/rng.h"
#include "../unit/testutil.h"

static uint64_t seed_counter = 1000;

/* A dense fp16 matrix: density d, every 7th row empty, and in every 5th
 * row a run of 40 zeros in the middle. */
static uint16_t *random_dense(int64_t rows, int64_t cols, double d, struct rng *r)
{
	uint16_t *a = calloc((size_t)(rows * cols), 2);
	for (int64_t i = 0; i < rows; i++) {
		if (i % 7 == 3)
			continue;
		for (int64_t j = 0; j < cols; j++) {
			int hole = i % 5 == 1 && j >= cols / 2 && j < cols / 2 + 40;
			if (!hole && rng_uniform(r) < d)
				a[i * cols + j] = half_from_float((float)(2 * rng_uniform(r) - 1));
		}
	}
	return a;
}

/* y = alpha A x + beta y_in on the GPU, as floats: xh the fp16 x (nvec x
 * cols), yin_host y_in in the output type (read when beta != 0). The
 * output is poisoned first, so an element the kernel does not write fails. */
static void gpu_product(const struct macko *m, const uint16_t *xh, int nvec, float alpha,
			float beta, const void *yin_host, enum macko_out out, float *y)
{
	size_t nx = (size_t)nvec * m->cols, ny = (size_t)nvec * m->rows;
	size_t ysz = out == MACKO_OUT_F16 ? 2 : 4;
	struct sp_err e;
	struct macko_dev d;
	void *x_dev, *y_dev, *yin_dev;
	assert_int_equal(macko_dev_upload(m, nvec, &d, &e), 0);
	assert_int_equal(gpu_malloc(&x_dev, nx * 2, "x", &e), 0);
	assert_int_equal(gpu_malloc(&y_dev, ny * ysz + 1, "y", &e), 0);
	assert_int_equal(gpu_malloc(&yin_dev, ny * ysz + 1, "y_in", &e), 0);
	assert_int_equal(gpu_upload(x_dev, xh, nx * 2, &e), 0);
	if (beta != 0)
		assert_int_equal(gpu_upload(yin_dev, yin_host, ny * ysz, &e), 0);
	/* Poison: all-ones bytes are NaN in fp16 and fp32. */
	void *poison = malloc(ny * ysz + 1);
	memset(poison, 0xff, ny * ysz + 1);
	assert_int_equal(gpu_upload(y_dev, poison, ny * ysz, &e), 0);
	int rc = macko_dev_spmv(&d, x_dev, nvec, alpha, beta, beta != 0 ? yin_dev : NULL, y_dev, out, &e);
	if (rc)
		fail_msg("macko_dev_spmv: %s", e.msg);
	assert_int_equal(gpu_sync(&e), 0);
	assert_int_equal(gpu_download(poison, y_dev, ny * ysz, &e), 0);
	for (size_t i = 0; i < ny; i++)
		y[i] = out == MACKO_OUT_F16 ? half_to_float(((uint16_t *)poison)[i]) : ((float *)poison)[i];
	macko_dev_free(&d);
	gpu_free(x_dev);
	gpu_free(y_dev);
	gpu_free(yin_dev);
	free(poison);
}

/* One product on the GPU and on the CPU; returns the relative error. */
static double run_case(const struct macko *m, int nvec, float alpha, float beta,
		       enum macko_out out, struct rng *r)
{
	size_t nx = (size_t)nvec * m->cols, ny = (size_t)nvec * m->rows;
	uint16_t *xh = malloc(nx * 2);
	float *xf = malloc(nx * 4), *yin = malloc(ny * 4), *y = malloc(ny * 4);
	double *ref = malloc(ny * 8);
	size_t ysz = out == MACKO_OUT_F16 ? 2 : 4;
	void *yin_host = malloc(ny * ysz);
	for (size_t i = 0; i < nx; i++) {
		xh[i] = half_from_float((float)(2 * rng_uniform(r) - 1));
		xf[i] = half_to_float(xh[i]);
	}
	for (size_t i = 0; i < ny; i++) {
		uint16_t h = half_from_float((float)(2 * rng_uniform(r) - 1));
		yin[i] = half_to_float(h); /* representable in either output type */
		if (out == MACKO_OUT_F16)
			((uint16_t *)yin_host)[i] = h;
		else
			((float *)yin_host)[i] = yin[i];
	}
	macko_spmv_ref(m, xf, nvec, alpha, beta, yin, ref);
	gpu_product(m, xh, nvec, alpha, beta, yin_host, out, y);
	double err = test_rel_err(ref, y, ny);
	free(xh);
	free(xf);
	free(yin);
	free(y);
	free(ref);
	free(yin_host);
	return err;
}

static void check_shape(int64_t rows, int64_t cols, double density, const int *nvecs, int nn)
{
	struct rng r;
	rng_init(&r, seed_counter++, 0);
	uint16_t *dense = random_dense(rows, cols, density, &r);
	struct macko m;
	struct sp_err e;
	assert_int_equal(macko_compress_dense(dense, rows, cols, &m, "test", &e), 0);
	for (int i = 0; i < nn; i++) {
		const float alpha = 0.75f, beta = i % 2 ? -0.5f : 0.0f;
		double e16 = run_case(&m, nvecs[i], alpha, beta, MACKO_OUT_F16, &r);
		double e32 = run_case(&m, nvecs[i], alpha, beta, MACKO_OUT_F32, &r);
		printf("# %lld x %lld d=%.2f nvec=%d beta=%.1f: rel err fp16 %.2e fp32 %.2e\n",
		       (long long)rows, (long long)cols, density, nvecs[i], beta, e16, e32);
		assert_true(e16 < 1e-3);
		assert_true(e32 < 1e-5);
	}
	macko_free(&m);
	free(dense);
}

static void test_densities(void **state)
{
	const int nv[] = {1, 3};
	const double ds[] = {1.0, 0.9, 0.5, 0.1, 0.01};
	for (int i = 0; i < 5; i++)
		check_shape(1000, 777, ds[i], nv, 2);
}

static void test_odd_shapes(void **state)
{
	const int nv[] = {1, 2, 5};
	check_shape(1, 1, 1.0, nv, 1);
	check_shape(17, 3, 0.5, nv, 3);
	check_shape(37, 1001, 0.3, nv, 3);
	check_shape(4097, 129, 0.2, nv, 3); /* rows not a multiple of 16 */
	check_shape(33, 5000, 0.0, nv, 2);  /* all zero */
}

static void test_long_rows(void **state)
{
	const int nv[] = {1, 4};
	check_shape(40, 30000, 0.6, nv, 2); /* ~18,000 elements a row */
}

static void test_all_vector_counts(void **state)
{
	const int nv[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16};
	check_shape(300, 2048, 0.4, nv, 13);
}

static void test_x_beyond_shared_memory(void **state)
{
	/* 150,000 columns: 300 KB of x for one vector, 600 KB for two, 1.2 MB
	 * for four; part of it is read from global memory for each. Eight go
	 * as two products of four, each reading part of x from global memory. */
	const int nv[] = {1, 2, 4, 8};
	check_shape(16, 150000, 0.05, nv, 4);
}

/* x partly in global memory takes a block of up to 32 warps an SM: 4500
 * rows give 32 warps a block on a GPU of up to 140 SMs, 3000 rows fewer
 * (launch_threads in kernels/macko/macko_spmv.cu). */
static void test_x_beyond_shared_memory_wide_blocks(void **state)
{
	const int nv[] = {4, 3};
	check_shape(4500, 30000, 0.02, nv, 2); /* 240 KB for four vectors */
	check_shape(3000, 30000, 0.02, nv, 1);
}

/* More than eight vectors go as two products, eight and the rest
 * (dispatch in kernels/macko/macko_spmv.cu), and eight whose x does not fit in
 * shared memory as two of four (launch_fit): at 10,000 columns (160 KB for
 * 8) two, the second of 1, 4, 5 or 8 vectors; at 20,000 (320 KB for 8, 160
 * KB for 4) 16 vectors in four products and 6 in two. beta alternates, so
 * y_in is read past the first products too. */
static void test_vectors_in_two_products(void **state)
{
	const int nv[] = {16, 9, 12, 13}, wide[] = {16, 6};
	check_shape(700, 10000, 0.3, nv, 4);
	check_shape(64, 20000, 0.3, wide, 2);
}

static void test_large_matrix(void **state)
{
	const int nv[] = {1, 8};
	check_shape(8192, 8192, 0.5, nv, 2);
}

/* x with Inf and NaN just past where many rows end: a row's result is
 * non-finite exactly where the CPU reference's is (elements of a step that
 * are not the row's must not read them), and equal elsewhere. Row i holds
 * columns below 100 + (i % 250) * stretch, so with stretch 7 rows have
 * whole steps (which eight vectors gather in their chosen order) before
 * the last one (which reads the zero slots instead). */
static void check_nonfinite(int64_t cols, int stretch, const int *nv, int nn)
{
	const int64_t rows = 300;
	struct rng r;
	rng_init(&r, seed_counter++, 0);
	uint16_t *dense = calloc((size_t)(rows * cols), 2);
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < 100 + (i % 250) * stretch; j++)
			if (rng_uniform(&r) < 0.5)
				dense[i * cols + j] = half_from_float((float)(2 * rng_uniform(&r) - 1));
	struct macko m;
	struct sp_err e;
	assert_int_equal(macko_compress_dense(dense, rows, cols, &m, "test", &e), 0);
	for (int t = 0; t < nn; t++) {
		const int nvec = nv[t];
		size_t nx = (size_t)nvec * cols, ny = (size_t)nvec * rows;
		uint16_t *xh = malloc(nx * 2);
		float *xf = malloc(nx * 4), *y = malloc(ny * 4);
		double *ref = malloc(ny * 8);
		for (size_t i = 0; i < nx; i++) {
			size_t c = i % (size_t)cols;
			float v = (float)(2 * rng_uniform(&r) - 1);
			if (c == 150 || c == 151)
				v = INFINITY;
			else if (c == 260)
				v = -INFINITY;
			else if (c == 333)
				v = NAN;
			xh[i] = half_from_float(v);
			xf[i] = half_to_float(xh[i]);
		}
		macko_spmv_ref(&m, xf, nvec, 1.0, 0.0, NULL, ref);
		gpu_product(&m, xh, nvec, 1.0f, 0.0f, NULL, MACKO_OUT_F32, y);
		int nonfinite = 0;
		for (size_t i = 0; i < ny; i++) {
			if (isnan(ref[i]) || isinf(ref[i])) {
				nonfinite++;
				if (isnan(ref[i]))
					assert_true(isnan(y[i]));
				else
					assert_true(isinf(y[i]) && (y[i] > 0) == (ref[i] > 0));
			} else {
				assert_true(isfinite(y[i]));
				assert_true(fabs(y[i] - ref[i]) <= 1e-4 * (1 + fabs(ref[i])));
			}
		}
		/* The test means something only if both kinds of row occur. */
		assert_true(nonfinite > 0 && nonfinite < (int)ny);
		printf("# nonfinite x, %lld columns, nvec=%d: %d of %zu results non-finite, as the "
		       "reference\n", (long long)cols, nvec, nonfinite, ny);
		free(xh);
		free(xf);
		free(y);
		free(ref);
	}
	macko_free(&m);
	free(dense);
}

static void test_nonfinite_x(void **state)
{
	const int nv[] = {1, 3}, eight[] = {8, 1};
	check_nonfinite(400, 1, nv, 2);
	check_nonfinite(2000, 7, eight, 2);
}

/* Wavefronts of the eight-vector kernel's 16-byte gathers, counted on the
 * host from the device layout and the order chosen on the GPU (rotated:
 * lane-chunk i's j-th gather is element (j + its rotation) % 8), or as if
 * every rotation were 0. A quarter-warp's gather costs the most columns
 * any one bank group (column mod 8) holds; every column is distinct. The
 * rotation of the chunk from element q is in byte q / 8, or in the high
 * nibble of byte q / 8 - 32 for the second half of a step. */
static double gather_wavefronts(const struct macko_layout *a, int64_t rows, const uint8_t *order,
				int rotated)
{
	double total = 0;
	int64_t gathers = 0;
	int32_t *col = malloc((size_t)(a->elements + 8) * 4);
	for (int64_t r = 0; r < rows; r++) {
		const int64_t s = macko_layout_start(a, r), e = a->ends[r + 1];
		int32_t c = -1;
		for (int64_t i = s; i < e; i++) {
			c += ((a->deltas[i / 2] >> (4 * (i & 1))) & 15) + 1;
			col[i] = c;
		}
		for (int64_t i = e; i < e + 8; i++) /* past the end: the kernel's next slots */
			col[i] = ++c;
		for (int64_t first = s; first < e; first += 64) /* a quarter: 8 lanes' chunks */
			for (int j = 0; j < 8; j++) {
				int count[8] = {0}, most = 0;
				for (int64_t q = first; q < first + 64 && q < e; q += 8) {
					const int second = (q - s) % 512 >= 256;
					const int byte = second ? order[q / 8 - 32] >> 4 : order[q / 8] & 15;
					const int rot = rotated ? byte : 0;
					const int g = col[q + (j + rot) % 8] & 7;
					if (++count[g] > most)
						most = count[g];
				}
				total += most;
				gathers++;
			}
	}
	free(col);
	return total / (double)gathers;
}

/* The gather order the GPU chose for m (uploaded as d), as the host
 * holds it, and its size in *n. */
static uint8_t *download_order(const struct macko *m, const struct macko_dev *d, size_t *n)
{
	struct macko_layout a;
	struct sp_err e;
	assert_int_equal(macko_align(m, &a, "test", &e), 0);
	*n = macko_order_bytes(a.elements);
	macko_layout_free(&a);
	uint8_t *order = malloc(*n);
	assert_int_equal(gpu_download(order, d->order, *n, &e), 0);
	return order;
}

/* The gather order cuts the eight-vector gathers' wavefronts by 15% or
 * more (the host's model, on the order the GPU chose), and is 0 to 7
 * wherever it is read. Quarter-warps of 64 elements from each row's start
 * are the kernel's: its steps (512) and half-steps (256) are multiples. */
static void test_gather_order(void **state)
{
	const double ds[] = {0.5, 0.1};
	for (int t = 0; t < 2; t++) {
		struct rng r;
		rng_init(&r, seed_counter++, 0);
		const int64_t rows = 1000, cols = 8192;
		uint16_t *dense = random_dense(rows, cols, ds[t], &r);
		struct macko m;
		struct macko_layout a;
		struct macko_dev d;
		struct sp_err e;
		assert_int_equal(macko_compress_dense(dense, rows, cols, &m, "test", &e), 0);
		assert_int_equal(macko_align(&m, &a, "test", &e), 0);
		assert_int_equal(macko_dev_upload(&m, 8, &d, &e), 0);
		size_t n;
		uint8_t *order = download_order(&m, &d, &n);
		for (size_t i = 0; i < n; i++)
			assert_true((order[i] & 0x88) == 0);
		const double plain = gather_wavefronts(&a, rows, order, 0);
		const double chosen = gather_wavefronts(&a, rows, order, 1);
		printf("# gather order, d=%.1f: %.2f wavefronts a quarter-warp's gather, "
		       "%.2f in order\n", ds[t], plain, chosen);
		assert_true(chosen < 0.85 * plain);
		free(order);
		macko_dev_free(&d);
		macko_layout_free(&a);
		macko_free(&m);
		free(dense);
	}
}

/* One product of eight vectors, as a gpu_time job. */
struct spmv_job {
	const struct macko_dev *d;
	const void *x;
	void *y;
};

static int spmv_enqueue(void *ctx, struct sp_err *err)
{
	const struct spmv_job *j = ctx;
	return macko_dev_spmv(j->d, j->x, 8, 1.0f, 0.0f, NULL, j->y, MACKO_OUT_F32, err);
}

/* The kernel gathers in the order that was chosen: eight vectors take at
 * least 5% less time with it than with every rotation 0 (about 10% on an
 * H100 at 8192 x 8192, d = 0.5). test_gather_order checks the order; this
 * checks that the kernel reads and applies it (a wrong byte, nibble or
 * direction of rotation would still give right results). Up to three
 * tries, as a timing. */
static void test_gather_order_is_faster(void **state)
{
	const int64_t rows = 8192, cols = 8192;
	struct rng r;
	rng_init(&r, seed_counter++, 0);
	uint16_t *dense = random_dense(rows, cols, 0.5, &r);
	struct macko m;
	struct macko_dev d;
	struct sp_err e;
	assert_int_equal(macko_compress_dense(dense, rows, cols, &m, "test", &e), 0);
	assert_int_equal(macko_dev_upload(&m, 8, &d, &e), 0);
	struct spmv_job job = {&d, NULL, NULL};
	assert_int_equal(gpu_malloc((void **)&job.x, (size_t)8 * cols * 2, "x", &e), 0);
	assert_int_equal(gpu_malloc(&job.y, (size_t)8 * rows * 4, "y", &e), 0);
	uint16_t *xh = malloc((size_t)8 * cols * 2);
	for (int64_t i = 0; i < 8 * cols; i++)
		xh[i] = half_from_float((float)(2 * rng_uniform(&r) - 1));
	assert_int_equal(gpu_upload((void *)job.x, xh, (size_t)8 * cols * 2, &e), 0);
	size_t n;
	uint8_t *chosen = download_order(&m, &d, &n), *zeros = calloc(n, 1);
	int faster = 0;
	for (int attempt = 0; attempt < 3 && !faster; attempt++) {
		struct gpu_timing in_order, plain;
		assert_int_equal(gpu_upload(d.order, chosen, n, &e), 0);
		assert_int_equal(gpu_time(spmv_enqueue, &job, 5, 31, 1, &in_order, &e), 0);
		assert_int_equal(gpu_upload(d.order, zeros, n, &e), 0);
		assert_int_equal(gpu_time(spmv_enqueue, &job, 5, 31, 1, &plain, &e), 0);
		printf("# 8 vectors, 8192 x 8192, d=0.5: %.1f us in the chosen order, %.1f us in "
		       "rotation 0\n", 1e3 * in_order.median_ms, 1e3 * plain.median_ms);
		faster = in_order.median_ms < 0.95 * plain.median_ms;
	}
	assert_true(faster);
	free(chosen);
	free(zeros);
	free(xh);
	gpu_free((void *)job.x);
	gpu_free(job.y);
	macko_dev_free(&d);
	macko_free(&m);
	free(dense);
}

static void test_bad_vector_count(void **state)
{
	struct macko m;
	struct sp_err e;
	uint16_t one = half_from_float(1.0f);
	assert_int_equal(macko_compress_dense(&one, 1, 1, &m, "t", &e), 0);
	struct macko_dev d;
	assert_int_equal(macko_dev_upload(&m, 0, &d, &e), -1);
	assert_non_null(strstr(e.msg, "0 vectors"));
	assert_int_equal(macko_dev_upload(&m, 17, &d, &e), -1);
	assert_non_null(strstr(e.msg, "17 vectors"));
	assert_int_equal(macko_dev_upload(&m, 16, &d, &e), 0);
	assert_non_null(d.order);
	assert_int_equal(macko_dev_spmv(&d, NULL, 17, 1, 0, NULL, NULL, MACKO_OUT_F16, &e), -1);
	assert_non_null(strstr(e.msg, "17 vectors"));
	macko_dev_free(&d);
	/* An upload for up to four vectors makes no gather order and takes no
	 * more than it was made for. */
	assert_int_equal(macko_dev_upload(&m, 4, &d, &e), 0);
	assert_null(d.order);
	assert_int_equal(macko_dev_spmv(&d, NULL, 5, 1, 0, NULL, NULL, MACKO_OUT_F16, &e), -1);
	assert_non_null(strstr(e.msg, "uploaded for at most 4"));
	macko_dev_free(&d);
	assert_int_equal(macko_dev_upload(&m, 1, &d, &e), 0);
	assert_null(d.xt);
	macko_dev_free(&d);
	macko_free(&m);
}

static int setup(void **state)
{
	struct sp_err e;
	if (gpu_count() < 1 || gpu_select(0, &e)) {
		fprintf(stderr, "no GPU\n");
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_densities),
		cmocka_unit_test(test_odd_shapes),
		cmocka_unit_test(test_long_rows),
		cmocka_unit_test(test_all_vector_counts),
		cmocka_unit_test(test_x_beyond_shared_memory),
		cmocka_unit_test(test_x_beyond_shared_memory_wide_blocks),
		cmocka_unit_test(test_vectors_in_two_products),
		cmocka_unit_test(test_large_matrix),
		cmocka_unit_test(test_nonfinite_x),
		cmocka_unit_test(test_gather_order),
		cmocka_unit_test(test_gather_order_is_faster),
		cmocka_unit_test(test_bad_vector_count),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
