/* The scores maxk-train reports, computed on the host from the logits
 * (n x c, row-major) over the nodes of one split:
 *   - accuracy (single-label): the share of nodes whose largest logit is
 *     their class (the lowest class wins a tie, as torch.argmax);
 *   - micro-F1 (multi-label): predictions are logits > 0 (probability above
 *     0.5); 2 TP / (2 TP + FP + FN) over all nodes and classes, 0 when
 *     nothing is positive either way (as scikit-learn);
 *   - ROC-AUC (multi-label): per class, the probability that a positive
 *     node scores above a negative one, ties counting one half (the
 *     Mann-Whitney statistic, equal to scikit-learn's roc_auc_score);
 *     the mean over the classes that have both positives and negatives in
 *     the split (OGB's rule for ogbn-proteins); NaN when none has. */
#ifndef SPKIT_GNN_METRICS_H
#define SPKIT_GNN_METRICS_H

#include <stdint.h>

#include "core/err.h"
#include "gnn/gnn_data.h"

enum gnn_metric { GNN_ACCURACY, GNN_MICRO_F1, GNN_ROC_AUC };

/* "accuracy", "micro-F1", "ROC-AUC": indexed by the enum, NULL-terminated;
 * gnn_metric_name(m) is gnn_metric_names[m]. */
extern const char *const gnn_metric_names[];
const char *gnn_metric_name(enum gnn_metric m);

double gnn_accuracy(const float *logits, const int32_t *labels, const uint8_t *split,
		    enum gnn_split which, int64_t n, int c);
double gnn_micro_f1(const float *logits, const float *targets, const uint8_t *split,
		    enum gnn_split which, int64_t n, int c);
int gnn_roc_auc(const float *logits, const float *targets, const uint8_t *split,
		enum gnn_split which, int64_t n, int c, double *auc, struct sp_err *err);

/* The metric of d's split `which` (accuracy needs single-label data, the
 * others multi-label). */
int gnn_metric_eval(enum gnn_metric m, const struct gnn_dataset *d, const float *logits,
		    enum gnn_split which, double *out, struct sp_err *err);

#endif
