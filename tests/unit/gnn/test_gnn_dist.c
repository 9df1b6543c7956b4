/* Training cut among ranks (gnn_part, gnn_comm_local, gnn_dist) on the
 * CPU backend: the blocks are balanced and cover the graph; the two
 * halves of each rank's edges are the graph's, with its edge values; what
 * a rank sends is what its peers expect; and 2, 3 and 4 ranks (threads)
 * train as one rank does, epoch by epoch, for every conv, MaxK and ReLU,
 * the MaxK and the dense aggregation, both exchanges, with dropout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gnn/gnn_comm.h"
#include "gnn/gnn_part.h"
#include "gnn/gnn_train.h"
#include "gnnutil.h"

static void test_starts_balanced(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	gu_dataset(&d, 90, 4, 3, 0, 5);
	for (int size = 1; size <= 5; size++) {
		int64_t starts[6];
		assert_int_equal(gnn_part_starts(&d.graph, size, starts, &e), 0);
		assert_int_equal(starts[0], 0);
		assert_int_equal(starts[size], d.n);
		for (int q = 0; q < size; q++) {
			assert_true(starts[q + 1] > starts[q]);
			const int64_t edges = d.graph.indptr[starts[q + 1]] - d.graph.indptr[starts[q]];
			/* within a row's worth (at most ~27 edges here) of nnz / size */
			assert_true(llabs(edges - d.graph.nnz / size) <= 40);
		}
	}
	int64_t starts[200];
	assert_int_equal(gnn_part_starts(&d.graph, 91, starts, &e), -1);
	gnn_data_free(&d);
	/* no edges at all: cut by rows */
	struct csr empty;
	assert_int_equal(csr_alloc(&empty, 100, 100, 0, 0, "empty", &e), 0);
	assert_int_equal(gnn_part_starts(&empty, 3, starts, &e), 0);
	assert_int_equal(starts[1], 33);
	assert_int_equal(starts[2], 66);
	csr_free(&empty);
}

/* Row r's edges as (global column, value), from a rank's own and halo. */
static void test_blocks_are_the_graph(void **state)
{
	struct gnn_dataset d;
	struct sp_err e;
	gu_dataset(&d, 50, 4, 3, 0, 8);
	float *vals = malloc((size_t)d.graph.nnz * sizeof *vals);
	edge_values(&d.graph, EDGE_GCN, vals);
	for (int mode = 0; mode < 2; mode++) {
		struct gnn_part p[3];
		for (int r = 0; r < 3; r++)
			assert_int_equal(gnn_part_create(&d.graph, EDGE_GCN, 3, r, mode, &p[r], &e), 0);
		for (int r = 0; r < 3; r++) {
			/* the global row of each halo column */
			int64_t *glob = malloc((size_t)(p[r].nhalo + 1) * sizeof *glob);
			for (int q = 0, c = 0; q < 3; q++) {
				if (mode == GNN_EXCHANGE_ALLGATHER) {
					for (int64_t i = 0; i < p[r].maxrows; i++)
						glob[q * p[r].maxrows + i] = p[r].starts[q] + i;
					continue;
				}
				assert_int_equal(p[r].recv_first[q], c);
				c += (int)p[r].recv_count[q];
			}
			if (mode == GNN_EXCHANGE_HALO)
				for (int q = 0; q < 3; q++) {
					/* what q sends r: its rows, in r's halo order */
					const struct gnn_part *s = &p[q];
					assert_int_equal(s->send_count[r], q == r ? 0 : p[r].recv_count[q]);
					for (int64_t i = 0; q != r && i < s->send_count[r]; i++)
						glob[p[r].recv_first[q] + i] =
							s->lo + s->send_rows[s->send_first[r] + i];
				}
			for (int64_t i = 0; i < p[r].nloc; i++) {
				const int64_t row = p[r].lo + i;
				const int64_t got = p[r].own.indptr[i + 1] - p[r].own.indptr[i] +
						    p[r].halo.indptr[i + 1] - p[r].halo.indptr[i];
				assert_int_equal(got, d.graph.indptr[row + 1] - d.graph.indptr[row]);
				/* every graph edge appears once, with its value */
				for (int64_t ge = d.graph.indptr[row]; ge < d.graph.indptr[row + 1]; ge++) {
					const int64_t j = d.graph.indices[ge];
					int found = 0;
					for (int64_t a = p[r].own.indptr[i]; a < p[r].own.indptr[i + 1]; a++)
						if (p[r].lo + p[r].own.indices[a] == j) {
							assert_float_equal(p[r].own.values[a], vals[ge], 0);
							found++;
						}
					for (int64_t a = p[r].halo.indptr[i]; a < p[r].halo.indptr[i + 1]; a++)
						if (glob[p[r].halo.indices[a]] == j) {
							assert_float_equal(p[r].halo.values[a], vals[ge], 0);
							found++;
						}
					assert_int_equal(found, 1);
				}
			}
			free(glob);
		}
		for (int r = 0; r < 3; r++)
			gnn_part_free(&p[r]);
	}
	free(vals);
	gnn_data_free(&d);
}

/* One rank's training, in its own thread. */
struct rank_run {
	const struct gnn_dataset *d;
	const struct gnn_model_config *cfg;
	const struct gnn_train_opts *o;
	struct gnn_comm_local_group *group;
	int rank, size;
	enum gnn_exchange mode;
	struct gnn_epoch log[16];
	int64_t epochs;
	float params[4096];
	int64_t nparams;
	char error[256];
};

static void *train_rank(void *arg)
{
	struct rank_run *r = arg;
	struct sp_err e = {{0}};
	struct gnn_backend *b = NULL;
	struct gnn_comm *c = NULL;
	struct gnn_model *m = NULL;
	struct gnn_trainer t = {0};
	struct gnn_part p = {0};
	int ok = !gnn_cpu_backend(&b, &e) &&
		 !gnn_part_create(&r->d->graph, gnn_model_edge_norm(r->cfg->conv), r->size,
				  r->rank, r->mode, &p, &e) &&
		 !gnn_comm_local_create(r->group, r->rank, 30, &c, &e) &&
		 !gnn_model_create_part(b, r->d, r->cfg, &p, c, &m, &e) &&
		 !gnn_trainer_init(&t, m, r->d, r->o, &e) && !gnn_train_run(&t, NULL, &e);
	if (ok) {
		r->epochs = t.epoch;
		memcpy(r->log, t.log, (size_t)t.epoch * sizeof *t.log);
		r->nparams = m->nparams;
		ok = !b->to_host(b, r->params, m->param, (size_t)m->nparams * sizeof(float), &e);
	}
	if (!ok) {
		strcpy(r->error, e.msg);
		if (c)
			c->abort(c);
	}
	gnn_trainer_free(&t);
	gnn_model_free(m);
	if (c)
		c->destroy(c);
	gnn_part_free(&p);
	if (b)
		b->destroy(b);
	return NULL;
}

static void one_rank(const struct gnn_dataset *d, const struct gnn_model_config *cfg,
		     const struct gnn_train_opts *o, struct rank_run *out)
{
	struct sp_err e;
	struct gnn_backend *b;
	struct gnn_model *m;
	struct gnn_trainer t;
	assert_int_equal(gnn_cpu_backend(&b, &e), 0);
	if (gnn_model_create(b, d, cfg, &m, &e) || gnn_trainer_init(&t, m, d, o, &e) ||
	    gnn_train_run(&t, NULL, &e))
		fail_msg("%s", e.msg);
	out->epochs = t.epoch;
	memcpy(out->log, t.log, (size_t)t.epoch * sizeof *t.log);
	out->nparams = m->nparams;
	assert_int_equal(b->to_host(b, out->params, m->param, (size_t)m->nparams * 4, &e), 0);
	gnn_trainer_free(&t);
	gnn_model_free(m);
	b->destroy(b);
}

static void assert_close(double a, double b, double tol, const char *what, int epoch)
{
	if (!(fabs(a - b) <= tol * (1 + fabs(b))))
		fail_msg("%s at epoch %d: %.9g against %.9g on one rank", what, epoch, a, b);
}

static void check_ranks(const struct gnn_dataset *d, const struct gnn_model_config *cfg, int size,
			enum gnn_exchange mode)
{
	const struct gnn_train_opts o = {
		.epochs = 8, .eval_every = 2, .checkpoint_every = 100, .lr = 0.02f,
		.weight_decay = 5e-4f, .metric = d->multilabel ? GNN_MICRO_F1 : GNN_ACCURACY,
	};
	struct rank_run ref = {0}, runs[4];
	struct sp_err e;
	one_rank(d, cfg, &o, &ref);
	struct gnn_comm_local_group *g;
	assert_int_equal(gnn_comm_local_group(size, &g, &e), 0);
	pthread_t th[4];
	for (int r = 0; r < size; r++) {
		runs[r] = (struct rank_run){.d = d, .cfg = cfg, .o = &o, .group = g, .rank = r,
					    .size = size, .mode = mode};
		assert_int_equal(pthread_create(&th[r], NULL, train_rank, &runs[r]), 0);
	}
	for (int r = 0; r < size; r++)
		pthread_join(th[r], NULL);
	gnn_comm_local_group_free(g);
	for (int r = 0; r < size; r++) {
		if (runs[r].error[0])
			fail_msg("rank %d of %d: %s", r, size, runs[r].error);
		assert_int_equal(runs[r].epochs, o.epochs);
		for (int i = 0; i < o.epochs; i++) {
			assert_close(runs[r].log[i].loss, ref.log[i].loss, 1e-4, "loss", i + 1);
			if (!isnan(ref.log[i].val))
				assert_close(runs[r].log[i].val, ref.log[i].val, 0.03, "val", i + 1);
		}
		for (int64_t i = 0; i < ref.nparams; i++)
			assert_close(runs[r].params[i], ref.params[i], 1e-3, "weight", (int)i);
		/* every rank holds the same weights, bit for bit */
		assert_memory_equal(runs[r].params, runs[0].params, (size_t)ref.nparams * 4);
	}
}

static void test_ranks_train_as_one(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 64, 6, 3, 0, 31);
	const struct gnn_model_config base = {
		.conv = GNN_SAGE, .nonlinear = GNN_MAXK, .layers = 2, .hidden = 16, .maxk = 4,
		.norm = 1, .dropout = 0.3f, .seed = 7,
	};
	for (int conv = GNN_SAGE; conv <= GNN_GIN; conv++)
		for (int size = 2; size <= 4; size++) {
			struct gnn_model_config c = base;
			c.conv = conv;
			check_ranks(&d, &c, size, size == 3 ? GNN_EXCHANGE_ALLGATHER
							    : GNN_EXCHANGE_HALO);
		}
	struct gnn_model_config relu = base, dense = base;
	relu.nonlinear = GNN_RELU;
	dense.dense_agg = 1;
	for (int mode = 0; mode < 2; mode++) {
		check_ranks(&d, &relu, 3, mode);
		check_ranks(&d, &dense, 2, mode);
	}
	gnn_data_free(&d);
}

static void test_multilabel_ranks(void **state)
{
	struct gnn_dataset d;
	gu_dataset(&d, 48, 5, 4, 1, 3);
	const struct gnn_model_config c = {
		.conv = GNN_GCN, .nonlinear = GNN_MAXK, .layers = 2, .hidden = 8, .maxk = 3,
		.dropout = 0.2f, .seed = 2,
	};
	check_ranks(&d, &c, 2, GNN_EXCHANGE_HALO);
	gnn_data_free(&d);
}

/* A rank that fails makes the others fail, not wait. */
static void test_failed_rank_stops_the_others(void **state)
{
	struct gnn_comm_local_group *g;
	struct gnn_comm *a, *b;
	struct sp_err e;
	assert_int_equal(gnn_comm_local_group(2, &g, &e), 0);
	assert_int_equal(gnn_comm_local_create(g, 0, 0.2, &a, &e), 0);
	assert_int_equal(gnn_comm_local_create(g, 1, 0.2, &b, &e), 0);
	float x = 1;
	/* rank 1 never comes: rank 0 gives up at the timeout */
	assert_int_equal(a->allreduce_sum(a, &x, 1, &e), -1);
	assert_non_null(strstr(e.msg, "no answer from the other ranks"));
	/* and rank 1 then learns of it at once */
	assert_int_equal(b->allreduce_sum(b, &x, 1, &e), -1);
	assert_non_null(strstr(e.msg, "another rank failed"));
	a->destroy(a);
	b->destroy(b);
	gnn_comm_local_group_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_balanced),
		cmocka_unit_test(test_blocks_are_the_graph),
		cmocka_unit_test(test_ranks_train_as_one),
		cmocka_unit_test(test_multilabel_ranks),
		cmocka_unit_test(test_failed_rank_stops_the_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
