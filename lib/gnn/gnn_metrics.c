#include "gnn/gnn_metrics.h"

#include <math.h>
#include <stdlib.h>

const char *const gnn_metric_names[] = {
	[GNN_ACCURACY] = "accuracy", [GNN_MICRO_F1] = "micro-F1", [GNN_ROC_AUC] = "ROC-AUC", NULL,
};

const char *gnn_metric_name(enum gnn_metric m)
{
	return gnn_metric_names[m];
}

double gnn_accuracy(const float *logits, const int32_t *labels, const uint8_t *split,
		    enum gnn_split which, int64_t n, int c)
{
	int64_t right = 0, total = 0;
	for (int64_t i = 0; i < n; i++) {
		if (split[i] != which)
			continue;
		const float *row = logits + i * c;
		int best = 0;
		for (int j = 1; j < c; j++)
			if (row[j] > row[best] || (isnan(row[j]) && !isnan(row[best])))
				best = j;
		right += best == labels[i];
		total++;
	}
	return total ? (double)right / (double)total : NAN;
}

double gnn_micro_f1(const float *logits, const float *targets, const uint8_t *split,
		    enum gnn_split which, int64_t n, int c)
{
	int64_t tp = 0, fp = 0, fn = 0;
	for (int64_t i = 0; i < n; i++) {
		if (split[i] != which)
			continue;
		for (int j = 0; j < c; j++) {
			int pred = logits[i * c + j] > 0, truth = targets[i * c + j] > 0.5f;
			tp += pred && truth;
			fp += pred && !truth;
			fn += !pred && truth;
		}
	}
	return tp + fp + fn ? 2.0 * (double)tp / (double)(2 * tp + fp + fn) : 0;
}

struct scored {
	float score;
	int positive;
};

/* Ascending, NaN last (a NaN logit then ranks as the highest score). */
static int by_score(const void *pa, const void *pb)
{
	float a = ((const struct scored *)pa)->score, b = ((const struct scored *)pb)->score;
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a > b) - (a < b);
}

/* The AUC of one class from m scored nodes: the positives' rank sum (ties
 * given their mean rank) less its least value, over P N. */
static double class_auc(struct scored *s, int64_t m, int64_t positives)
{
	qsort(s, (size_t)m, sizeof *s, by_score);
	double rank_sum = 0;
	for (int64_t i = 0; i < m;) {
		int64_t j = i, pos = 0;
		while (j < m && by_score(&s[i], &s[j]) == 0)
			pos += s[j++].positive;
		rank_sum += (double)pos * ((double)(i + 1) + (double)j) / 2;
		i = j;
	}
	double P = (double)positives, N = (double)(m - positives);
	return (rank_sum - P * (P + 1) / 2) / (P * N);
}

int gnn_roc_auc(const float *logits, const float *targets, const uint8_t *split,
		enum gnn_split which, int64_t n, int c, double *auc, struct sp_err *err)
{
	int64_t m = 0;
	for (int64_t i = 0; i < n; i++)
		m += split[i] == which;
	struct scored *s = malloc((size_t)(m ? m : 1) * sizeof *s);
	if (!s)
		return sp_fail(err, "out of memory for ROC-AUC over %lld nodes", (long long)m);
	double sum = 0;
	int classes = 0;
	for (int j = 0; j < c; j++) {
		int64_t at = 0, positives = 0;
		for (int64_t i = 0; i < n; i++) {
			if (split[i] != which)
				continue;
			s[at].score = logits[i * c + j];
			s[at].positive = targets[i * c + j] > 0.5f;
			positives += s[at++].positive;
		}
		if (positives == 0 || positives == m)
			continue;
		sum += class_auc(s, m, positives);
		classes++;
	}
	free(s);
	*auc = classes ? sum / classes : NAN;
	return 0;
}

int gnn_metric_eval(enum gnn_metric m, const struct gnn_dataset *d, const float *logits,
		    enum gnn_split which, double *out, struct sp_err *err)
{
	if ((m == GNN_ACCURACY) == d->multilabel)
		return sp_fail(err, "%s: %s needs %s labels", d->name, gnn_metric_name(m),
			       d->multilabel ? "single-class" : "multi-label");
	switch (m) {
	case GNN_ACCURACY:
		*out = gnn_accuracy(logits, d->labels, d->split, which, d->n, d->nclass);
		return 0;
	case GNN_MICRO_F1:
		*out = gnn_micro_f1(logits, d->targets, d->split, which, d->n, d->nclass);
		return 0;
	case GNN_ROC_AUC:
		return gnn_roc_auc(logits, d->targets, d->split, which, d->n, d->nclass, out, err);
	}
	return 0;
}
