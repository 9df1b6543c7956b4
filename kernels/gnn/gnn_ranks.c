/* Ranks as threads of this process (gnn_ranks.h). */
#include "gnn/gnn_ranks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/parallel.h"
#include "gnn/gnn_backend.h"
#include "gnn/gnn_comm.h"
#include "gnn/gnn_comm_nccl.h"
#include "gnn/gnn_model.h"

struct shared {
	const struct gnn_dataset *d;
	const struct gnn_model_config *cfg;
	const struct gnn_train_opts *o;
	const struct gnn_ranks_opts *r;
	const struct gnn_train_hooks *hooks;
	unsigned char id[GNN_NCCL_ID_BYTES];
	struct gnn_comm_local_group *group;
	pthread_mutex_t lock;
	struct sp_err first; /* the first failure of a rank's own */
	int failed, stopped;
};

struct rank {
	struct shared *s;
	int index; /* in this process */
	struct gnn_rank_stats *stats;
};

static int open_comm(struct shared *s, int rank, struct gnn_comm **c, struct sp_err *err)
{
	if (s->r->gpu)
		return gnn_comm_nccl_create(s->id, rank, s->r->world, s->r->timeout_s, c, err);
	return gnn_comm_local_create(s->group, rank, s->r->timeout_s, c, err);
}

static int open_backend(struct shared *s, int index, struct gnn_backend **b, struct sp_err *err)
{
	if (!s->r->gpu)
		return gnn_cpu_backend(b, err);
	const int device = s->r->first_device + index;
	if (gpu_select(device, err) || gnn_cuda_backend(b, err))
		return sp_err_prefix(err, "cuda:%d", device);
	(*b)->tf32 = s->r->tf32;
	return 0;
}

/* Rank 0 alone writes the checkpoint and the log. */
static struct gnn_train_opts rank_opts(const struct gnn_train_opts *o, int rank)
{
	struct gnn_train_opts mine = *o;
	if (rank != 0)
		mine.checkpoint = mine.log = NULL;
	return mine;
}

static int train_rank(struct rank *k, struct gnn_comm **comm, struct sp_err *err)
{
	struct shared *s = k->s;
	const int rank = s->r->first_rank + k->index;
	struct gnn_backend *b = NULL;
	struct gnn_part p = {0};
	struct gnn_model *m = NULL;
	struct gnn_trainer t = {0};
	const struct gnn_train_opts o = rank_opts(s->o, rank);
	struct gnn_train_hooks hooks = s->hooks ? *s->hooks : (struct gnn_train_hooks){0};
	if (rank != 0)
		hooks.epoch_done = NULL;
	int rc = -1, any;
	if (open_backend(s, k->index, &b, err) ||
	    gnn_part_create(&s->d->graph, gnn_model_edge_norm(s->cfg->conv), s->r->world, rank,
			    s->r->exchange, &p, err) ||
	    open_comm(s, rank, comm, err) ||
	    gnn_model_create_part(b, s->d, s->cfg, &p, *comm, &m, err) ||
	    gnn_trainer_init(&t, m, s->d, &o, err) ||
	    (s->r->resume && gnn_trainer_resume(&t, s->r->resume, err)) ||
	    gnn_model_agree(m, 0, &any, err)) /* every rank is here */
		goto out;
	if (rank == 0 && s->r->joined)
		s->r->joined(s->r->ctx);
	const uint64_t sent0 = (*comm)->bytes_sent;
	const int64_t epoch0 = t.epoch;
	rc = gnn_train_run(&t, &hooks, err);
	if (rc < 0)
		goto out;
	const uint64_t sent = (*comm)->bytes_sent - sent0;
	double scores[3];
	/* the final weights' logits, for --predict (a collective: every rank) */
	if (rc == 0 && t.logits_epoch != t.epoch &&
	    gnn_trainer_evaluate(&t, &scores[0], &scores[1], &scores[2], err)) {
		rc = -1;
		goto out;
	}
	*k->stats = (struct gnn_rank_stats){
		.rank = rank, .epoch = t.epoch, .rows = p.nloc, .halo_rows = p.nhalo,
		.peak_mib = (double)b->peak_memory(b) / (1 << 20),
		.sent_mb_epoch = t.epoch > epoch0 ? (double)sent / 1e6 / (double)(t.epoch - epoch0)
						  : 0};
	if (rc == 1) {
		pthread_mutex_lock(&s->lock);
		s->stopped = 1;
		pthread_mutex_unlock(&s->lock);
	} else if (rank == 0 && s->r->finish) {
		s->r->finish(s->r->ctx, &t);
	}
out:
	gnn_trainer_free(&t);
	gnn_model_free(m);
	gnn_part_free(&p);
	if (b)
		b->destroy(b);
	return rc < 0 ? -1 : rc;
}

static void *rank_thread(void *arg)
{
	struct rank *k = arg;
	struct shared *s = k->s;
	struct gnn_comm *comm = NULL;
	struct sp_err err = {{0}};
	if (train_rank(k, &comm, &err) < 0) {
		pthread_mutex_lock(&s->lock);
		/* a rank that failed because another did is not the cause */
		const int own = !strstr(err.msg, "another rank");
		if (!s->failed || (own && strstr(s->first.msg, "another rank")))
			s->first = err;
		s->failed = 1;
		pthread_mutex_unlock(&s->lock);
		if (comm)
			comm->abort(comm);
	}
	if (comm)
		comm->destroy(comm);
	return NULL;
}

int gnn_ranks_train(const struct gnn_dataset *d, const struct gnn_model_config *cfg,
		    const struct gnn_train_opts *o, const struct gnn_ranks_opts *r,
		    const struct gnn_train_hooks *hooks, struct gnn_rank_stats *stats,
		    struct sp_err *err)
{
	if (r->threads < 1 || r->first_rank < 0 || r->first_rank + r->threads > r->world)
		return sp_fail(err, "ranks %d..%d of %d", r->first_rank,
			       r->first_rank + r->threads - 1, r->world);
	if (!r->gpu && r->threads != r->world)
		return sp_fail(err, "ranks on the host run in one process (%d of %d here)",
			       r->threads, r->world);
	struct shared s = {.d = d, .cfg = cfg, .o = o, .r = r, .hooks = hooks};
	if (r->gpu) {
		if (r->nccl_id)
			memcpy(s.id, r->nccl_id, sizeof s.id);
		else if (gnn_nccl_unique_id(s.id, err))
			return -1;
	} else if (gnn_comm_local_group(r->world, &s.group, err)) {
		return -1;
	}
	struct rank *ranks = calloc((size_t)r->threads, sizeof *ranks);
	struct gnn_rank_stats *own = calloc((size_t)r->threads, sizeof *own);
	pthread_t *th = calloc((size_t)r->threads, sizeof *th);
	int started = 0;
	pthread_mutex_init(&s.lock, NULL);
	if (!ranks || !own || !th) {
		sp_fail(err, "out of memory");
		s.failed = -1;
	}
	for (int i = 0; !s.failed && i < r->threads; i++) {
		ranks[i] = (struct rank){&s, i, &own[i]};
		/* signals blocked in the ranks: the handlers run on this thread,
		 * which waits for them */
		if (parallel_thread_start(&th[i], rank_thread, &ranks[i])) {
			/* the started ranks wait at their first meeting until the
			 * timeout; nothing else can make them stop */
			sp_fail(err, "cannot start the thread of rank %d", r->first_rank + i);
			s.failed = -1;
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (s.failed > 0)
		*err = s.first;
	if (!s.failed && stats)
		memcpy(stats, own, (size_t)r->threads * sizeof *own);
	pthread_mutex_destroy(&s.lock);
	gnn_comm_local_group_free(s.group);
	free(ranks);
	free(own);
	free(th);
	return s.failed ? -1 : s.stopped;
}
