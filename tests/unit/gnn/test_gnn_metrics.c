/* Accuracy, micro-F1 and ROC-AUC against values worked out by hand: ties,
 * NaN logits, classes without both labels, the split filter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gnn/gnn_metrics.h"

static void test_accuracy(void **state)
{
	/* Rows: right, tie (lowest class wins: 0, right), wrong, NaN row
	 * (the NaN column wins: class 1, right), not in the split. */
	const float logits[] = {0, 2, 1, 3, 3, 1, 0, 0, 5, 0, NAN, 1, 9, 0, 0};
	const int32_t labels[] = {1, 0, 0, 1, 1};
	const uint8_t split[] = {GNN_TEST, GNN_TEST, GNN_TEST, GNN_TEST, GNN_VAL};
	assert_float_equal(gnn_accuracy(logits, labels, split, GNN_TEST, 5, 3), 0.75, 1e-12);
	assert_float_equal(gnn_accuracy(logits, labels, split, GNN_VAL, 5, 3), 0, 1e-12);
	assert_true(isnan(gnn_accuracy(logits, labels, split, GNN_TRAIN, 5, 3)));
}

static void test_micro_f1(void **state)
{
	const float logits[] = {1, -1, 0, 2, 3, 3, -2, -2};
	const float targets[] = {1, 0, 1, 1, 0, 1, 1, 1};
	const uint8_t split[] = {GNN_TRAIN, GNN_TRAIN, GNN_TRAIN, GNN_VAL};
	/* Train cells (logit, target): (1,1) TP, (-1,0) TN, (0,1) FN (0 is not
	 * above 0), (2,1) TP, (3,0) FP, (3,1) TP: 2*3 / (2*3 + 1 + 1). */
	assert_float_equal(gnn_micro_f1(logits, targets, split, GNN_TRAIN, 4, 2), 0.75, 1e-12);
	/* Nothing predicted, everything positive: F1 0. */
	assert_float_equal(gnn_micro_f1(logits, targets, split, GNN_VAL, 4, 2), 0, 1e-12);
	assert_float_equal(gnn_micro_f1(logits, targets, split, GNN_TEST, 4, 2), 0, 1e-12);
}

static void test_roc_auc(void **state)
{
	/* Class 0: scores 0.1 0.4 0.35 0.8, labels 0 0 1 1: 3 of 4 pairs. Class
	 * 1: 0.5 0.5 0.5 0.9, labels 0 1 0 1: two ties (1/2 each) and two wins,
	 * 3/4. Class 2: all positive, left out. Row 4 is not in the split. */
	const float logits[] = {0.1f, 0.5f, 1, 0.4f, 0.5f, 2, 0.35f, 0.5f, 3, 0.8f, 0.9f, 4,
				-9, -9, -9};
	const float targets[] = {0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0};
	const uint8_t split[] = {GNN_TEST, GNN_TEST, GNN_TEST, GNN_TEST, GNN_TRAIN};
	double auc;
	struct sp_err e;
	assert_int_equal(gnn_roc_auc(logits, targets, split, GNN_TEST, 5, 3, &auc, &e), 0);
	assert_float_equal(auc, 0.75, 1e-12);
	/* Scores reversed: 1 - AUC per class. */
	float neg[15];
	for (int i = 0; i < 15; i++)
		neg[i] = -logits[i];
	assert_int_equal(gnn_roc_auc(neg, targets, split, GNN_TEST, 5, 3, &auc, &e), 0);
	assert_float_equal(auc, 0.25, 1e-12);
	/* One node: no class has both labels. */
	assert_int_equal(gnn_roc_auc(logits, targets, split, GNN_TRAIN, 5, 3, &auc, &e), 0);
	assert_true(isnan(auc));
	/* A NaN score ranks highest: class 0's second positive now wins both
	 * its pairs (3/4), class 1 stays at 1/4. */
	neg[9] = NAN;
	assert_int_equal(gnn_roc_auc(neg, targets, split, GNN_TEST, 5, 3, &auc, &e), 0);
	assert_float_equal(auc, 0.5, 1e-12);
}

static void test_metric_needs_label_kind(void **state)
{
	struct gnn_dataset d;
	memset(&d, 0, sizeof d);
	strcpy(d.name, "ds");
	d.multilabel = 1;
	double v;
	struct sp_err e;
	assert_int_equal(gnn_metric_eval(GNN_ACCURACY, &d, NULL, GNN_TEST, &v, &e), -1);
	assert_string_equal(e.msg, "ds: accuracy needs single-class labels");
	d.multilabel = 0;
	assert_int_equal(gnn_metric_eval(GNN_ROC_AUC, &d, NULL, GNN_TEST, &v, &e), -1);
	assert_string_equal(e.msg, "ds: ROC-AUC needs multi-label labels");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accuracy),
		cmocka_unit_test(test_micro_f1),
		cmocka_unit_test(test_roc_auc),
		cmocka_unit_test(test_metric_needs_label_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
