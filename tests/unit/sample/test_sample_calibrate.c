/* kernel-sample calibrate (sample_calibrate.h): which operators an encoder
 * shapes and at what shape, the bytes and FLOPs behind the rates (worked
 * out by hand from the layouts), and PyTorch's CSV read and looked up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "sample/sample_calibrate.h"
#include "sample/sample_layer.h"
#include "testutil.h"

/* Doubles that must be equal: each side is a product of small integers. */
#define assert_same(a, b) assert_true((a) == (b))

static void test_encoder_shapes(void **state)
{
	const int64_t enc[5] = {2, 4, 8, 16, 256};
	int64_t shape[5];
	char text[128];
	assert_true(sample_calibrate_fits(sample_cpu_op("linear1")));
	assert_true(sample_calibrate_fits(sample_cpu_op("ScaledUpperTriangMaskedSoftmax")));
	assert_false(sample_calibrate_fits(sample_cpu_op("moe")));
	assert_false(sample_calibrate_fits(sample_cpu_op("maxk_spmm")));
	const struct sample_op *op = sample_cpu_op("RoPE");
	assert_int_equal(sample_layer_shape(op->name, op->shape_names, op->nshape, enc, shape, NULL),
			 0);
	assert_string_equal(sample_shape_named(op, shape, text, sizeof text),
			    "mp=2 b=4 h=8 l=16 dim=256");
	op = sample_cpu_op("layernorm");
	assert_int_equal(sample_layer_shape(op->name, op->shape_names, op->nshape, enc, shape, NULL),
			 0);
	assert_string_equal(sample_shape_named(op, shape, text, sizeof text), "b=4 l=16 dim=256");
	assert_true(sample_calibrate_large_too("flash_atten_causal"));
	assert_false(sample_calibrate_large_too("linear2"));
}

/* The layout of op at shape, at precision p. */
static struct sample_state laid_out(const char *op, const int64_t *shape, enum sample_precision p)
{
	struct sample_state st = {0};
	sample_op_layout(op)(shape, &st);
	st.p = p;
	return st;
}

static void test_bytes_and_flops(void **state)
{
	/* layernorm b 4, l 16, dim 256 at fp16: x and y 16384 elements each */
	const int64_t norm[3] = {4, 16, 256};
	struct sample_state st = laid_out("layernorm", norm, SAMPLE_FP16);
	assert_same(sample_op_bytes("layernorm", &st, 0), 2 * 16384 * 2);
	assert_same(sample_op_bytes("layernorm", &st, 1), 3 * 16384 * 2);
	assert_same(sample_op_flops("layernorm", &st, 0), 0);
	st = laid_out("res_add", norm, SAMPLE_FP32);
	assert_same(sample_op_bytes("res_add", &st, 0), 3 * 16384 * 4);
	assert_same(sample_op_bytes("res_add", &st, 1), 0);
	/* linear1 mp 2: (b l) x dim times dim x 3 dim / mp */
	const int64_t lin[4] = {2, 4, 16, 256};
	st = laid_out("linear1", lin, SAMPLE_FP16);
	assert_same(sample_op_flops("linear1", &st, 0), 2.0 * 64 * 256 * 384);
	assert_same(sample_op_flops("linear1", &st, 1), 4.0 * 64 * 256 * 384);
	assert_same(sample_op_bytes("linear1", &st, 0), 0);
	/* causal attention mp 2, b 4, h 8, l 16, dim 256: 4 heads of 32 on a rank,
	 * half of 4 b h l^2 d forward, 2.5 times that backward */
	const int64_t att[5] = {2, 4, 8, 16, 256};
	st = laid_out("flash_atten_causal", att, SAMPLE_BF16);
	const double causal = 0.5 * 4 * 4 * 4 * 16 * 16 * 32;
	assert_same(sample_op_flops("flash_atten_causal", &st, 0), causal);
	assert_same(sample_op_flops("flash_atten_causal", &st, 1), 2.5 * causal);
	st = laid_out("flash_atten", att, SAMPLE_BF16);
	assert_same(sample_op_flops("flash_atten", &st, 0), 2 * causal);
}

static void test_torch_csv(void **state)
{
	static const char good[] = "device,op,shape,precision,F_dur(us),B_dur(us)\n"
				   "H100,layernorm,b=4 l=16 dim=256,fp16,12.5,30\n"
				   "H100,res_add,b=4 l=16 dim=256,fp16,7,\n"
				   "H100,flash_atten@FLASH_ATTENTION,mp=1 b=4 h=8 l=16 dim=256,fp16,3,9\n";
	struct sample_torch_table t;
	struct sp_err e;
	if (sample_torch_read_buffer(good, sizeof good - 1, "t.csv", SAMPLE_FP16, &t, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.device, "H100");
	const struct sample_torch_row *r = sample_torch_find(&t, "layernorm", "b=4 l=16 dim=256");
	assert_non_null(r);
	assert_same(r->fwd_us, 12.5);
	assert_same(r->bwd_us, 30);
	r = sample_torch_find(&t, "res_add", "b=4 l=16 dim=256");
	assert_non_null(r);
	assert_true(isnan(r->bwd_us));
	assert_null(sample_torch_find(&t, "flash_atten", "mp=1 b=4 h=8 l=16 dim=256"));
	assert_null(sample_torch_find(&t, "layernorm", "b=4 l=16 dim=512"));
	sample_torch_free(&t);

	static const struct {
		const char *csv, *want;
	} bad[] = {
		{"op,shape,precision,F_dur(us),device\n", "t.csv: no column 'B_dur(us)'"},
		{"op,shape,precision,F_dur(us),B_dur(us),device\nx,s,bf16,1,2,d\n",
		 "t.csv: line 2: PyTorch timed at bf16, this calibration is at fp16"},
		{"op,shape,precision,F_dur(us),B_dur(us),device\nx,s,fp8,1,2,d\n",
		 "t.csv: line 2: precision 'fp8' is not fp16, bf16 or fp32"},
		{"op,shape,precision,F_dur(us),B_dur(us),device\nx,s,fp16,-1,2,d\n",
		 "t.csv: line 2: F_dur(us) '-1' or B_dur(us) '2' is not a time"},
		{"op,shape,precision,F_dur(us),B_dur(us),device\nx,s,fp16,,2,d\n",
		 "t.csv: line 2: F_dur(us) '' or B_dur(us) '2' is not a time"},
		{"", "t.csv: empty (no header)"},
		/* one operator at one shape twice: which time would be PyTorch's? */
		{"op,shape,precision,F_dur(us),B_dur(us),device\nx,s,fp16,1,2,d\ny,s,fp16,1,2,d\n"
		 "x,s,fp16,3,4,d\n",
		 "t.csv: line 4: operator 'x' at shape 's' again (first at line 2)"},
		/* two runs of the PyTorch script appended to one file */
		{"op,shape,precision,F_dur(us),B_dur(us),device\nx,s,fp16,1,2,d\n"
		 "op,shape,precision,F_dur(us),B_dur(us),device\ny,s,fp16,1,2,d\n",
		 "t.csv: line 3: a second header line (two runs of scripts/bench-sample-torch.py "
		 "appended to one file? keep the first header only)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(sample_torch_read_buffer(bad[i].csv, strlen(bad[i].csv), "t.csv",
							  SAMPLE_FP16, &t, &e),
				 -1);
		assert_msg_has(&e, bad[i].want, NULL);
		assert_null(t.rows);
		assert_int_equal(t.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoder_shapes),
		cmocka_unit_test(test_bytes_and_flops),
		cmocka_unit_test(test_torch_csv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
