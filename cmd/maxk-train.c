/* maxk-train: full-graph GNN training with MaxK (lib/gnn/gnn_train.c over
 * lib/gnn/gnn_model.c, on the backend of lib/gnn/gnn_cpu.c or
 * kernels/gnn/gnn_gpu*.cu), and the kernel benchmark, `maxk-train bench`
 * (kernels/maxk/maxk_bench.cu), also asked for by --bench-kernels.
 * Options are parsed here, each form its own; the work is in lib/ and
 * kernels/. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/cli_ranks.h"
#include "sparse/csr.h"
#include "formats/csv_writer.h"
#include "gnn/gnn_data.h"
#include "gnn/gnn_ranks.h"
#include "gnn/gnn_train.h"
#include "core/outfile.h"
#include "core/gpu.h"
#include "core/outfile.h"
#include "sparse/graph_gen.h"
#include "sparse/graph_load.h"
#include "maxk/maxk_dispatch.h"
#include "maxk/maxk_gpu.h"
#include "formats/npy.h"

static const char usage[] =
	"Usage: maxk-train [OPTION]... DATASET\n"
	"       maxk-train --synthetic SPEC [OPTION]...\n"
	"       maxk-train bench GRAPH|--synthetic SPEC [BENCH OPTION]...\n"
	"Full-graph GNN training as in MaxK-GNN: GraphSAGE, GCN or GIN on all nodes of\n"
	"one graph, Adam, softmax cross-entropy (class ids) or BCE (multi-label), the\n"
	"test score at the best validation score. The model is lin_in, then per layer\n"
	"the nonlinearity (MaxK: the k largest of each row; or ReLU), dropout, the conv\n"
	"and LayerNorm (--norm), then lin_out. MaxK's output is aggregated by the MaxK\n"
	"SpGEMM kernels (on the GPU; the same sums on the CPU).\n"
	"\n"
	"DATASET is a folder with graph.npz (or MaxK-GNN's graph.indptr and\n"
	"graph.indices), features.npy, labels.npy and per split a bool mask or int\n"
	"node ids (train_mask.npy or train_idx.npy, val_..., test_...), or an OGB\n"
	"node-property folder (raw/*.csv.gz, split/NAME/*.csv.gz). The man page has a\n"
	"recipe that writes a PyG or DGL dataset as such a folder.\n"
	"      --synthetic SPEC     a generated dataset: csbm[:nodes=N,classes=C,feat=F,\n"
	"                           deg=D,p_in=P,snr=S,seed=K] (a stochastic block model\n"
	"                           where the graph matters), or random features and\n"
	"                           labels on reddit_like, products_like, flickr_like\n"
	"                           (those graphs' sizes, for speed) or\n"
	"                           powerlaw:nodes=N,edges=E[,sigma=S,feat=F,classes=C]\n"
	"Model:\n"
	"      --model M            sage, gcn or gin (default sage)\n"
	"      --layers L           conv layers, 0..64 (default 3); 0 is the MLP-like\n"
	"                           baseline lin_in, nonlinearity, dropout, lin_out\n"
	"      --hidden H           hidden width, 1..4096 (default 256)\n"
	"      --nonlinear N        maxk or relu (default maxk)\n"
	"      --maxk K             k of MaxK, 1..H (default 32)\n"
	"                           Lists (--nonlinear maxk,relu --maxk 16,32,64) train\n"
	"                           each configuration (relu once, maxk at each k) on\n"
	"                           the same data and print one comparison table: test\n"
	"                           score at the best validation, epoch time, peak memory\n"
	"      --dropout P          dropout rate in [0, 1) (default 0.5)\n"
	"      --norm               LayerNorm after each conv\n"
	"      --selfloop           add a self-loop to each node without one\n"
	"Training:\n"
	"      --epochs N           epochs (default 100)\n"
	"      --lr R               Adam's learning rate (default 0.01)\n"
	"      --weight-decay W     L2 weight decay (default 0)\n"
	"      --seed K             seed of the weights and dropout masks (default 1)\n"
	"      --metric M           auto, accuracy, micro-f1 or roc-auc (default auto:\n"
	"                           accuracy for class ids, micro-f1 for multi-label)\n"
	"      --eval-every N       evaluate every N epochs and after the last (default 1)\n"
	"Kernels:\n"
	"      --kernel-mode M      auto (default: the GPU when usable, else the CPU),\n"
	"                           maxk (GPU, MaxK kernels; needs --nonlinear maxk),\n"
	"                           cusparse (GPU, MaxK output aggregated densely by\n"
	"                           cuSPARSE) or cpu\n"
	"      --device D           cpu, cuda, cuda:N or auto (default auto)\n"
	"      --tf32 on|off        TF32 tensor cores for the GPU's dense layers (default off)\n"
	"      --validate-kernels   check the MaxK aggregation against the dense one\n"
	"                           before training; fall back to the dense one when the\n"
	"                           error exceeds the threshold\n"
	"      --fallback-threshold T  that threshold (default 0.001; negative: always\n"
	"                           fall back)\n"
	"      --profile-kernels    print mean forward and backward times every 10 epochs\n"
	"Several GPUs (the graph's rows cut into blocks balanced by edges, one a GPU;\n"
	"the rows other blocks read travel each layer through NCCL, MaxK's output as\n"
	"its k values and indices; man page, SEVERAL GPUS):\n"
	"      --gpus N             N ranks in this process, one a GPU (cuda:D.. with\n"
	"                           --device cuda:D); under srun or torchrun (one process\n"
	"                           a task, from SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID or\n"
	"                           RANK/WORLD_SIZE/LOCAL_RANK) the ranks of each process\n"
	"                           (default 1)\n"
	"      --ranks N            N ranks in this process on the device chosen; with\n"
	"                           --device cpu, N ranks on the host (threads), the\n"
	"                           partitioned training without a GPU\n"
	"      --exchange E         halo (default: only the rows each block reads, point\n"
	"                           to point) or allgather (every row to every rank)\n"
	"      --rendezvous DIR     several processes: a folder all see (shared across\n"
	"                           nodes), where rank 0 leaves NCCL's id for the others\n"
	"      --run-id ID          the rendezvous file's name (default: SLURM_JOB_ID.\n"
	"                           SLURM_STEP_ID, or torchrun's TORCHELASTIC_RUN_ID)\n"
	"      --comm-timeout S     seconds a rank waits for the others, at the\n"
	"                           rendezvous and in each epoch, before it gives up with\n"
	"                           an error (default 600)\n"
	"Outputs (FILE '-' is standard output; but for --log written whole or not at\n"
	"all):\n"
	"      --log FILE           per-epoch CSV: epoch, loss, train, val, test scores,\n"
	"                           forward_ms, backward_ms, epoch_ms; a row appended and\n"
	"                           flushed as each epoch ends (tail -f; a killed run\n"
	"                           keeps its rows); a comparison: one per configuration,\n"
	"                           log-maxk16.csv, log-relu.csv\n"
	"      --save-model FILE    the final weights (.npz, PyTorch's parameter names)\n"
	"      --predict FILE       the final model's logits, nodes x classes float32 (.npy)\n"
	"      --checkpoint FILE    write a checkpoint (.npz) every --checkpoint-every N\n"
	"                           epochs (default 10), after the last, and on SIGTERM,\n"
	"                           SIGINT or SIGUSR1 (then stop after the current epoch\n"
	"                           and exit with status 75, for a job script to requeue)\n"
	"      --resume FILE        continue from a checkpoint of the same settings\n"
	"  -q, --quiet              no messages\n"
	"  -v, --verbose            every epoch's scores on stderr\n"
	"  -h, --help               show this help and exit\n"
	"  -V, --version            show the version and exit\n"
	"\n"
	"Kernel benchmark (maxk-train bench): on one graph, for each hidden width H and\n"
	"each k, time cuSPARSE SpMM on the dense MaxK features, the MaxK forward SpGEMM,\n"
	"the MaxK backward SSpMM (gathered, and scattered with atomics) and top-k side by\n"
	"side on the GPU, check each against cuSPARSE (top-k against the CPU), and write\n"
	"one CSV row each. GRAPH is a SciPy .npz, a Matrix Market .mtx, an edge list\n"
	"or MaxK-GNN's NAME.indptr (with NAME.indices);\n"
	"--synthetic takes reddit_like, products_like, flickr_like or\n"
	"powerlaw:nodes=N,edges=E[,sigma=S]; --hidden and --maxk take lists (defaults\n"
	"256 and 16,32,64; H up to 1024); --seed seeds the features.\n"
	"      --bench-kernels      the same as the bench command, anywhere on the line\n"
	"      --reps N             timed repetitions (default 20); --warmup N (default 3)\n"
	"      --no-flush           do not flush the L2 cache between repetitions\n"
	"  -o, --output FILE        write the CSV to FILE (default: standard output)\n"
	"      --append             append rows to the -o file (header once)\n"
	"\n"
	"Profiling: each epoch is an NVTX range 'epoch' around 'forward', 'backward',\n"
	"'step' and 'evaluate' (man page, PROFILING):\n"
	"  nsys profile --trace cuda,nvtx -o train maxk-train --synthetic reddit_like --epochs 5\n"
	"  ncu --nvtx --nvtx-include forward/ --launch-count 20 maxk-train ... --epochs 2\n"
	"\n"
	"Example:\n"
	"  maxk-train --synthetic csbm --model sage --layers 2 --epochs 200 --log log.csv\n"
	"  maxk-train ogbn-products/ --norm --maxk 32 --checkpoint ck.npz --profile-kernels\n"
	"  maxk-train --synthetic products_like --layers 4 --norm --gpus 4 --profile-kernels\n"
	"  srun --nodes 2 --ntasks-per-node 4 --gpus-per-task 1 maxk-train DATA/ --rendezvous ~/rdv\n"
	"  maxk-train bench --synthetic reddit_like --maxk 16,32,64 -o maxk.csv\n";

enum { MAX_LIST = 16 };

enum kernel_mode { KM_AUTO, KM_MAXK, KM_CUSPARSE, KM_CPU };
static const char *const kernel_mode_names[] = {
	[KM_AUTO] = "auto", [KM_MAXK] = "maxk", [KM_CUSPARSE] = "cusparse", [KM_CPU] = "cpu", NULL,
};

/* --metric: a gnn_metric by name, or auto (the one the labels call for). */
enum metric_choice { METRIC_ACCURACY, METRIC_MICRO_F1, METRIC_ROC_AUC, METRIC_AUTO };
static const char *const metric_names[] = {
	[METRIC_ACCURACY] = "accuracy", [METRIC_MICRO_F1] = "micro-f1",
	[METRIC_ROC_AUC] = "roc-auc", [METRIC_AUTO] = "auto", NULL,
};
static const enum gnn_metric metric_of[] = {
	[METRIC_ACCURACY] = GNN_ACCURACY, [METRIC_MICRO_F1] = GNN_MICRO_F1,
	[METRIC_ROC_AUC] = GNN_ROC_AUC,
};

/* --tf32's values, each at the index of the flag it sets. */
static const char *const off_on[] = {"off", "on", NULL};

/* What both forms read: the dataset (training) or graph (bench), or
 * --synthetic; --hidden and --maxk as given (one value each for training,
 * lists for the benchmark); the seed. */
struct source {
	const char *input, *synthetic;
	const char *hidden_text, *maxk_text;
	uint64_t seed;
};

/* One run of a comparison: an item of --nonlinear and, for maxk, of --maxk. */
struct config {
	enum gnn_nonlinear nonlinear;
	int maxk;
};

struct train_options {
	struct source src;
	struct gnn_model_config model;
	struct config configs[2 * MAX_LIST]; /* what --nonlinear and --maxk list */
	int nconfigs, nonlinears[2], nnonlinear;
	struct gnn_train_opts train;
	enum metric_choice metric;
	enum kernel_mode kernel_mode;
	enum gpu_device_choice device;
	int selfloop, tf32, validate, profile, threshold_given;
	double threshold;
	const char *save_model, *predict, *resume;
	int gpus, ranks; /* --gpus, --ranks: ranks in this process (0: not given) */
	enum gnn_exchange exchange;
	const char *rendezvous, *run_id;
	double comm_timeout;
};

struct bench_options {
	const char *form; /* "bench", or "--bench-kernels" where it was asked for so */
	struct source src;
	const char *output;
	int append, reps, warmup, flush;
	int64_t hidden[MAX_LIST], maxk[MAX_LIST];
	int nhidden, nmaxk;
};

/* Option ids; each form's table lists the ones it takes. */
enum {
	OPT_SYNTHETIC = 256, OPT_HIDDEN, OPT_MAXK, OPT_SEED, OPT_MODEL, OPT_LAYERS, OPT_NONLINEAR,
	OPT_DROPOUT, OPT_NORM, OPT_SELFLOOP, OPT_EPOCHS, OPT_LR, OPT_WEIGHT_DECAY, OPT_METRIC,
	OPT_EVAL_EVERY, OPT_KERNEL_MODE, OPT_DEVICE, OPT_TF32, OPT_VALIDATE, OPT_THRESHOLD,
	OPT_PROFILE, OPT_LOG, OPT_SAVE_MODEL, OPT_PREDICT, OPT_CHECKPOINT, OPT_CHECKPOINT_EVERY,
	OPT_RESUME, OPT_BENCH_KERNELS, OPT_REPS, OPT_WARMUP, OPT_NO_FLUSH, OPT_APPEND,
	OPT_GPUS, OPT_RANKS, OPT_EXCHANGE, OPT_RENDEZVOUS, OPT_RUN_ID, OPT_COMM_TIMEOUT,
};

#define SOURCE_LONGOPTS                                                 \
	{"synthetic", required_argument, NULL, OPT_SYNTHETIC},          \
	{"hidden", required_argument, NULL, OPT_HIDDEN},                \
	{"maxk", required_argument, NULL, OPT_MAXK},                    \
	{"seed", required_argument, NULL, OPT_SEED}

static const struct option train_longopts[] = {
	SOURCE_LONGOPTS,
	{"model", required_argument, NULL, OPT_MODEL},
	{"layers", required_argument, NULL, OPT_LAYERS},
	{"nonlinear", required_argument, NULL, OPT_NONLINEAR},
	{"dropout", required_argument, NULL, OPT_DROPOUT},
	{"norm", no_argument, NULL, OPT_NORM},
	{"selfloop", no_argument, NULL, OPT_SELFLOOP},
	{"epochs", required_argument, NULL, OPT_EPOCHS},
	{"lr", required_argument, NULL, OPT_LR},
	{"weight-decay", required_argument, NULL, OPT_WEIGHT_DECAY},
	{"metric", required_argument, NULL, OPT_METRIC},
	{"eval-every", required_argument, NULL, OPT_EVAL_EVERY},
	{"kernel-mode", required_argument, NULL, OPT_KERNEL_MODE},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"tf32", required_argument, NULL, OPT_TF32},
	{"validate-kernels", no_argument, NULL, OPT_VALIDATE},
	{"fallback-threshold", required_argument, NULL, OPT_THRESHOLD},
	{"profile-kernels", no_argument, NULL, OPT_PROFILE},
	{"log", required_argument, NULL, OPT_LOG},
	{"save-model", required_argument, NULL, OPT_SAVE_MODEL},
	{"predict", required_argument, NULL, OPT_PREDICT},
	{"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
	{"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
	{"resume", required_argument, NULL, OPT_RESUME},
	{"gpus", required_argument, NULL, OPT_GPUS},
	{"ranks", required_argument, NULL, OPT_RANKS},
	{"exchange", required_argument, NULL, OPT_EXCHANGE},
	{"rendezvous", required_argument, NULL, OPT_RENDEZVOUS},
	{"run-id", required_argument, NULL, OPT_RUN_ID},
	{"comm-timeout", required_argument, NULL, OPT_COMM_TIMEOUT},
	CLI_COMMON_LONGOPTS,
};

static const struct option bench_longopts[] = {
	SOURCE_LONGOPTS,
	{"bench-kernels", no_argument, NULL, OPT_BENCH_KERNELS},
	{"reps", required_argument, NULL, OPT_REPS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"no-flush", no_argument, NULL, OPT_NO_FLUSH},
	{"output", required_argument, NULL, 'o'},
	{"append", no_argument, NULL, OPT_APPEND},
	CLI_COMMON_LONGOPTS,
};

/* An option of struct source; 0 when c is none of them. */
static int source_option(int c, struct source *s)
{
	switch (c) {
	case OPT_SYNTHETIC: s->synthetic = optarg; return 1;
	case OPT_HIDDEN: s->hidden_text = optarg; return 1;
	case OPT_MAXK: s->maxk_text = optarg; return 1;
	case OPT_SEED: s->seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); return 1;
	}
	return 0;
}

/* After the options: the one positional argument (`what`), or --synthetic. */
static void source_input(int argc, char **argv, struct source *s, const char *what)
{
	if (optind < argc)
		s->input = argv[optind++];
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!s->input == !s->synthetic)
		cli_usage_error(s->input ? "give %s or --synthetic, not both" : "no %s given", what);
}

/* The long name of the option that getopt_long did not know (c is '?'),
 * where the other form's table knows it: by its letter for a short option,
 * else by the --name (before any =VALUE) it was given as. NULL otherwise. */
static const char *other_form_option(int c, char **argv, const struct option *other)
{
	if (c != '?')
		return NULL;
	const char *arg = argv[optind - 1];
	const size_t len = strncmp(arg, "--", 2) ? 0 : strcspn(arg + 2, "=");
	for (const struct option *o = other; o->name; o++)
		if (optopt ? o->val == optopt
			   : len && strlen(o->name) == len && !strncmp(arg + 2, o->name, len))
			return o->name;
	return NULL;
}

/* An output's folder must exist and be writable before hours of training,
 * not after. "-" is standard output: fine for a stream (npz 0), a usage
 * error for an .npz, which is written with seeks. */
static void check_output_folder(const char *option, const char *path, int npz)
{
	if (!path)
		return;
	if (outfile_is_stdout(path)) {
		if (npz)
			cli_usage_error("%s -: an .npz is written with seeks, so not to standard "
					"output (give a file name)", option);
		return;
	}
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
	if (access(dir, W_OK))
		cli_die("%s %s: cannot write in folder '%s'", option, path, dir);
}

/* The configurations --nonlinear and --maxk list, in their order: relu
 * once, maxk at each k. */
static void list_configs(struct train_options *o)
{
	int64_t ks[MAX_LIST] = {o->model.maxk};
	int nk = o->src.maxk_text ? cli_int_list("--maxk", o->src.maxk_text, ks, MAX_LIST, 1,
						 MAXK_MAX_WIDTH)
				  : 1;
	if (!o->nnonlinear)
		o->nonlinears[o->nnonlinear++] = o->model.nonlinear;
	for (int i = 0; i < o->nnonlinear; i++)
		for (int j = 0; j < (o->nonlinears[i] == GNN_MAXK ? nk : 1); j++)
			o->configs[o->nconfigs++] = (struct config){o->nonlinears[i], (int)ks[j]};
	if (nk > 1 && o->nconfigs == 1)
		cli_usage_error("--maxk lists %d values but --nonlinear relu uses none", nk);
	o->model.nonlinear = o->configs[0].nonlinear;
	o->model.maxk = o->configs[0].maxk;
}

/* Whether a configuration uses nonlinear (any, for more than one). */
static int uses(const struct train_options *o, enum gnn_nonlinear nonlinear)
{
	for (int i = 0; i < o->nconfigs; i++)
		if (o->configs[i].nonlinear == nonlinear)
			return 1;
	return 0;
}

/* Training's --hidden, its configurations, and the checks between options. */
static void check_training(struct train_options *o)
{
	struct gnn_model_config *m = &o->model;
	if (o->src.hidden_text)
		m->hidden = (int)cli_int("--hidden", o->src.hidden_text, 1, MAXK_MAX_WIDTH);
	list_configs(o);
	for (int i = 0; i < o->nconfigs; i++)
		if (o->configs[i].nonlinear == GNN_MAXK && o->configs[i].maxk > m->hidden)
			cli_usage_error("--maxk %d is larger than --hidden %d", o->configs[i].maxk,
					m->hidden);
	if (o->nconfigs > 1) { /* each run would overwrite the last one's file */
		const char *one[] = {o->save_model ? "--save-model" : NULL,
				     o->predict ? "--predict" : NULL,
				     o->train.checkpoint ? "--checkpoint" : NULL,
				     o->resume ? "--resume" : NULL,
				     o->train.log && !strcmp(o->train.log, "-") ? "--log -" : NULL};
		for (size_t i = 0; i < sizeof one / sizeof *one; i++)
			if (one[i])
				cli_usage_error("%s takes one configuration; --nonlinear and --maxk "
						"list %d", one[i], o->nconfigs);
	}
	if (o->kernel_mode == KM_MAXK && uses(o, GNN_RELU))
		cli_usage_error("--kernel-mode maxk needs --nonlinear maxk");
	if (o->kernel_mode == KM_CPU && o->device == DEVICE_CUDA)
		cli_usage_error("--kernel-mode cpu contradicts --device cuda");
	if ((o->kernel_mode == KM_MAXK || o->kernel_mode == KM_CUSPARSE) &&
	    o->device == DEVICE_CPU)
		cli_usage_error("--kernel-mode %s runs on the GPU, not --device cpu",
				kernel_mode_names[o->kernel_mode]);
	if (o->validate && (uses(o, GNN_RELU) || m->layers == 0))
		cli_usage_error("--validate-kernels needs --nonlinear maxk and --layers 1 or more");
	if (o->threshold_given && !o->validate)
		cli_usage_error("--fallback-threshold needs --validate-kernels");
	if (o->train.checkpoint_every && !o->train.checkpoint)
		cli_usage_error("--checkpoint-every needs --checkpoint FILE");
	if (!o->train.checkpoint_every)
		o->train.checkpoint_every = 10;
	if (o->gpus && o->ranks)
		cli_usage_error("--gpus and --ranks say the same; give one");
	if (o->gpus && (o->device == DEVICE_CPU || o->kernel_mode == KM_CPU))
		cli_usage_error("--gpus %d runs on GPUs; --ranks %d --device cpu runs that many "
				"ranks on the host", o->gpus, o->gpus);
	if (o->validate && (o->gpus > 1 || o->ranks > 1))
		cli_usage_error("--validate-kernels runs on one rank; leave out --%s",
				o->gpus ? "gpus" : "ranks");
	m->dense_agg = o->kernel_mode == KM_CUSPARSE;
	check_output_folder("--log", o->train.log, 0);
	check_output_folder("--save-model", o->save_model, 1);
	check_output_folder("--predict", o->predict, 0);
	check_output_folder("--checkpoint", o->train.checkpoint, 1);
	struct sp_err err;
	if (o->src.synthetic && gnn_data_synthetic_check(o->src.synthetic, &err))
		cli_usage_error("%s", err.msg);
	m->seed = o->src.seed;
}

static struct train_options train_parse(int argc, char **argv)
{
	struct train_options o = {
		.src = {.seed = 1},
		.model = {.conv = GNN_SAGE, .nonlinear = GNN_MAXK, .layers = 3, .hidden = 256,
			  .maxk = 32, .dropout = 0.5f},
		.train = {.epochs = 100, .eval_every = 1, .lr = 0.01f},
		.metric = METRIC_AUTO, .device = DEVICE_AUTO, .threshold = 1e-3,
		.comm_timeout = 600,
	};
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":" CLI_COMMON_SHORTOPTS, train_longopts, NULL)) != -1) {
		if (source_option(c, &o.src))
			continue;
		switch (c) {
		case OPT_MODEL: o.model.conv = cli_choice("--model", optarg, gnn_conv_names); break;
		case OPT_LAYERS: o.model.layers = (int)cli_int("--layers", optarg, 0, 64); break;
		case OPT_NONLINEAR:
			o.nnonlinear = cli_choice_list("--nonlinear", optarg, gnn_nonlinear_names,
						       o.nonlinears, 2);
			break;
		case OPT_DROPOUT:
			o.model.dropout = (float)cli_double("--dropout", optarg, 0, 0.99);
			break;
		case OPT_NORM: o.model.norm = 1; break;
		case OPT_SELFLOOP: o.selfloop = 1; break;
		case OPT_EPOCHS: o.train.epochs = cli_int("--epochs", optarg, 1, 100000000); break;
		case OPT_LR: o.train.lr = (float)cli_double("--lr", optarg, 1e-12, 10); break;
		case OPT_WEIGHT_DECAY:
			o.train.weight_decay = (float)cli_double("--weight-decay", optarg, 0, 10);
			break;
		case OPT_METRIC: o.metric = cli_choice("--metric", optarg, metric_names); break;
		case OPT_EVAL_EVERY:
			o.train.eval_every = cli_int("--eval-every", optarg, 1, 100000000);
			break;
		case OPT_KERNEL_MODE:
			o.kernel_mode = cli_choice("--kernel-mode", optarg, kernel_mode_names);
			break;
		case OPT_DEVICE: o.device = cli_device(optarg); break;
		case OPT_TF32: o.tf32 = cli_choice("--tf32", optarg, off_on); break;
		case OPT_VALIDATE: o.validate = 1; break;
		case OPT_THRESHOLD:
			o.threshold = cli_double("--fallback-threshold", optarg, -1e30, 1e30);
			o.threshold_given = 1;
			break;
		case OPT_PROFILE: o.profile = 1; break;
		case OPT_LOG: o.train.log = optarg; break;
		case OPT_SAVE_MODEL: o.save_model = optarg; break;
		case OPT_PREDICT: o.predict = optarg; break;
		case OPT_CHECKPOINT: o.train.checkpoint = optarg; break;
		case OPT_CHECKPOINT_EVERY:
			o.train.checkpoint_every = cli_int("--checkpoint-every", optarg, 1, 100000000);
			break;
		case OPT_RESUME: o.resume = optarg; break;
		case OPT_GPUS: o.gpus = (int)cli_int("--gpus", optarg, 1, 1024); break;
		case OPT_RANKS: o.ranks = (int)cli_int("--ranks", optarg, 1, 1024); break;
		case OPT_EXCHANGE:
			o.exchange = cli_choice("--exchange", optarg, gnn_exchange_names);
			break;
		case OPT_RENDEZVOUS: o.rendezvous = optarg; break;
		case OPT_RUN_ID: o.run_id = optarg; break;
		case OPT_COMM_TIMEOUT:
			o.comm_timeout = cli_double("--comm-timeout", optarg, 0.1, 1e7);
			break;
		default: {
			const char *bench_only = other_form_option(c, argv, bench_longopts);
			if (bench_only)
				cli_usage_error("--%s belongs to --bench-kernels (the bench command)",
						bench_only);
			cli_common_option(c, usage, argv);
		}
		}
	}
	source_input(argc, argv, &o.src, "DATASET");
	check_training(&o);
	return o;
}

/* The benchmark's lists of --hidden and --maxk, and the checks between
 * options. */
static void check_bench(struct bench_options *o)
{
	static const int64_t default_hidden[] = {256}, default_maxk[] = {16, 32, 64};
	memcpy(o->hidden, default_hidden, sizeof default_hidden);
	memcpy(o->maxk, default_maxk, sizeof default_maxk);
	o->nhidden = o->src.hidden_text ? cli_int_list("--hidden", o->src.hidden_text, o->hidden,
						       MAX_LIST, 1, MAXK_GPU_MAX_WIDTH) : 1;
	o->nmaxk = o->src.maxk_text ? cli_int_list("--maxk", o->src.maxk_text, o->maxk, MAX_LIST,
						   1, MAXK_GPU_MAX_WIDTH) : 3;
	if (o->append && (!o->output || !strcmp(o->output, "-")))
		cli_usage_error("--append needs -o FILE (a file, not standard output)");
	for (int i = 0; i < o->nhidden; i++)
		for (int j = 0; j < o->nmaxk; j++)
			if (o->maxk[j] > o->hidden[i])
				cli_usage_error("--maxk %lld is larger than --hidden %lld",
						(long long)o->maxk[j], (long long)o->hidden[i]);
}

/* form: how the benchmark was asked for, as messages name it. */
static struct bench_options bench_parse(int argc, char **argv, const char *form)
{
	struct bench_options o = {.form = form, .src = {.seed = 1}, .reps = 20, .warmup = 3,
				  .flush = 1};
	int c;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, ":o:" CLI_COMMON_SHORTOPTS, bench_longopts, NULL)) !=
	       -1) {
		if (source_option(c, &o.src))
			continue;
		switch (c) {
		case OPT_BENCH_KERNELS: break; /* the form's other name: already chosen */
		case OPT_REPS: o.reps = (int)cli_int("--reps", optarg, 1, 1000000); break;
		case OPT_WARMUP: o.warmup = (int)cli_int("--warmup", optarg, 0, 1000000); break;
		case OPT_NO_FLUSH: o.flush = 0; break;
		case 'o': o.output = optarg; break;
		case OPT_APPEND: o.append = 1; break;
		default: {
			const char *train_only = other_form_option(c, argv, train_longopts);
			if (train_only)
				cli_usage_error("--%s is for training, not %s", train_only, form);
			cli_common_option(c, usage, argv);
		}
		}
	}
	source_input(argc, argv, &o.src, "GRAPH");
	check_bench(&o);
	return o;
}

static void load_graph(const struct source *s, struct csr *g)
{
	struct sp_err err;
	if (s->synthetic) {
		struct graph_spec spec;
		if (graph_spec_parse(s->synthetic, &spec, &err))
			cli_usage_error("%s", err.msg);
		if (graph_gen(&spec, g, &err))
			cli_fatal(&err);
	} else if (graph_load(s->input, NULL, g, &err)) {
		cli_fatal(&err);
	}
	if (g->nrows == 0)
		cli_die("%s: graph has no rows", s->input ? s->input : s->synthetic);
	if (g->nrows != g->ncols)
		cli_die("%s: graph is %lld x %lld, not square", s->input ? s->input : s->synthetic,
			(long long)g->nrows, (long long)g->ncols);
}

static void bench(const struct bench_options *o)
{
	struct sp_err err, why;
	if (gpu_probe(&why) == 0)
		cli_die("%s: no usable CUDA device (%s)", o->form, why.msg);
	struct csr g;
	load_graph(&o->src, &g);
	const char *name = o->src.input ? o->src.input : o->src.synthetic;

	static const char *const columns[] = {"graph", "nodes", "edges", "hidden", "k", "kernel",
					      "median_ms", "min_ms", "max_ms", "reps", "gbs",
					      "speedup_vs_cusparse", "max_err"};
	enum { NCOLS = sizeof columns / sizeof *columns };
	struct csv_writer w;
	const char *path = o->output ? o->output : "-";
	if (o->append ? csv_writer_open_append(&w, path, columns, NCOLS, &err)
		      : csv_writer_open(&w, path, columns, NCOLS, &err))
		cli_fatal(&err);
	for (int i = 0; i < o->nhidden; i++) {
		for (int j = 0; j < o->nmaxk; j++) {
			struct maxk_bench_opts bo = {(int)o->hidden[i], (int)o->maxk[j], o->warmup,
						     o->reps, o->flush, o->src.seed};
			struct maxk_bench_result res[MAXK_BENCH_KERNELS];
			cli_log(2, "H = %lld, k = %lld", (long long)o->hidden[i],
				(long long)o->maxk[j]);
			if (maxk_run_bench(&g, &bo, res, &err)) {
				csv_writer_abort(&w);
				cli_fatal(&err);
			}
			for (int r = 0; r < MAXK_BENCH_KERNELS; r++) {
				csv_writer_str(&w, name);
				csv_writer_int(&w, g.nrows);
				csv_writer_int(&w, g.nnz);
				csv_writer_int(&w, o->hidden[i]);
				csv_writer_int(&w, o->maxk[j]);
				csv_writer_str(&w, res[r].kernel);
				csv_writer_double(&w, res[r].t.median_ms, 5);
				csv_writer_double(&w, res[r].t.min_ms, 5);
				csv_writer_double(&w, res[r].t.max_ms, 5);
				csv_writer_int(&w, res[r].t.reps);
				csv_writer_double(&w, res[r].gbs, 5);
				csv_writer_double(&w, res[0].t.median_ms / res[r].t.median_ms, 4);
				csv_writer_double(&w, res[r].max_err, 3);
				if (csv_writer_end_row(&w, &err))
					cli_fatal(&err);
			}
		}
	}
	if (csv_writer_commit(&w, &err))
		cli_fatal(&err);
	csr_free(&g);
}

static int stop_requested(void *ctx)
{
	return cli_stop_signal() != 0;
}

struct run {
	const struct train_options *o;
	const char *metric;
};

static void on_epoch(void *ctx, const struct gnn_trainer *t, const struct gnn_epoch *r)
{
	const struct run *run = ctx;
	int due = r->epoch % 10 == 0 || r->epoch == t->o.epochs;
	if (!isnan(r->val) && (due || t->o.eval_every >= 10 || cli_verbosity >= 2))
		cli_log(1, "Epoch %04lld: loss %.4f, train %s %.4f, val %.4f, test %.4f",
			(long long)r->epoch, r->loss, run->metric, r->train, r->val, r->test);
	else
		cli_log(2, "Epoch %04lld: loss %.4f", (long long)r->epoch, r->loss);
	if (run->o->profile && due) {
		double f, b, e;
		gnn_trainer_mean_times(t, &f, &b, &e);
		printf("Epoch %04lld: Avg Forward %.3fms, Avg Backward %.3fms\n",
		       (long long)r->epoch, f, b);
		fflush(stdout);
	}
}

static void load_dataset(const struct train_options *o, struct gnn_dataset *d)
{
	struct sp_err err;
	if (o->src.synthetic ? gnn_data_synthetic(o->src.synthetic, d, &err)
			     : gnn_data_load(o->src.input, d, &err))
		cli_fatal(&err);
	if (o->selfloop && gnn_data_add_selfloops(d, &err))
		cli_fatal(&err);
}

/* What is about to run, once nothing can fail any more before training. */
static void describe(const struct gnn_dataset *d, const struct gnn_model_config *c,
		     const char *backend, int ranks)
{
	char nl[32] = "relu";
	if (c->nonlinear == GNN_MAXK)
		snprintf(nl, sizeof nl, "maxk k=%d", c->maxk);
	cli_log(1, "%s: %lld node%s, %lld edge%s, %d feature%s, %d %s (train %lld, val %lld, "
		"test %lld)", d->name, (long long)d->n, sp_plural(d->n), (long long)d->graph.nnz,
		sp_plural(d->graph.nnz), d->nfeat, sp_plural(d->nfeat), d->nclass,
		d->multilabel ? "labels" : "classes",
		(long long)gnn_data_count(d, GNN_TRAIN), (long long)gnn_data_count(d, GNN_VAL),
		(long long)gnn_data_count(d, GNN_TEST));
	char on[48] = "";
	if (ranks > 1)
		snprintf(on, sizeof on, " on %d ranks", ranks);
	cli_log(1, "%s, %d layer%s x %d, %s, dropout %g%s; %s backend%s, %s aggregation",
		gnn_conv_names[c->conv], c->layers, sp_plural(c->layers), c->hidden, nl, c->dropout,
		c->norm ? ", LayerNorm" : "", backend, on,
		c->nonlinear == GNN_MAXK && !c->dense_agg ? "MaxK" : "dense");
}

/* Whether training runs on the GPU (--kernel-mode, --device, --gpus). */
static int uses_gpu(const struct train_options *o)
{
	struct sp_err err;
	int use_gpu = 0;
	enum gpu_device_choice want = o->kernel_mode == KM_CPU ? DEVICE_CPU
			       : o->kernel_mode == KM_AUTO && !o->gpus ? o->device : DEVICE_CUDA;
	if (gpu_resolve(want, &use_gpu, &err))
		cli_die("--kernel-mode/--device%s: --device cuda: %s", o->gpus ? "/--gpus" : "",
			err.msg);
	return use_gpu;
}

static struct gnn_backend *open_backend(const struct train_options *o)
{
	struct sp_err err;
	const int use_gpu = uses_gpu(o);
	if (use_gpu && gpu_select(cli_device_index(), &err))
		cli_die("--device cuda:%d: %s", cli_device_index(), err.msg);
	struct gnn_backend *b;
	if (use_gpu ? gnn_cuda_backend(&b, &err) : gnn_cpu_backend(&b, &err))
		cli_fatal(&err);
	if (!use_gpu)
		cli_log_threads();
	b->tf32 = o->tf32;
	return b;
}

static const char *dense_name(const struct gnn_backend *b)
{
	return strcmp(b->name, "cpu") ? "cuSPARSE" : "dense aggregation";
}

/* --validate-kernels: MaxK-GNN's lines; the dense path when it fails. */
static void validate(struct gnn_model *m, const struct train_options *o)
{
	struct sp_err err;
	double max_err;
	printf("Validating MaxK kernel vs %s for k=%d\n", dense_name(m->b), m->cfg.maxk);
	if (gnn_model_validate(m, &max_err, &err))
		cli_fatal(&err);
	printf("Max error (at input nonzero): %.8f\n", max_err);
	if (max_err <= o->threshold) {
		printf("Validation PASSED! MaxK kernel produces correct results\n");
	} else {
		printf("Validation FAILED: max error %.8g exceeds --fallback-threshold %g\n",
		       max_err, o->threshold);
		printf("MaxK kernel failed validation, falling back to %s\n", dense_name(m->b));
		m->cfg.dense_agg = 1;
	}
	fflush(stdout);
}

/* The model and the predictions are put into place together, or neither
 * is (the log and the checkpoint, written with each checkpoint, are
 * progress to resume from and stay). */
static void write_outputs(const struct train_options *o, struct gnn_trainer *t)
{
	struct sp_err err;
	outfile_hold_commits();
	if (o->save_model && gnn_model_save(t->m, o->save_model, &err))
		cli_fatal(&err);
	if (o->predict) {
		double s[3];
		if (t->logits_epoch != t->epoch &&
		    gnn_trainer_evaluate(t, &s[0], &s[1], &s[2], &err))
			cli_fatal(&err);
		struct npy_array a = {.dtype = NPY_F4, .itemsize = 4, .ndim = 2,
				      .shape = {t->d->n, t->m->nclass}, .data = t->logits};
		if (npy_write(o->predict, &a, &err))
			cli_fatal(&err);
	}
	if (outfile_commit_held(&err))
		cli_fatal(&err);
}

static void report(const struct train_options *o, const struct gnn_trainer *t, const char *metric,
		   int ranks)
{
	const struct gnn_epoch *last = &t->log[t->epoch - 1];
	printf("Final epoch %04lld: loss %.4f, train %s %.4f, val %s %.4f, test %s %.4f\n",
	       (long long)last->epoch, last->loss, metric, last->train, metric, last->val,
	       metric, last->test);
	printf("Best epoch %04lld: train %s %.4f, val %s %.4f, test %s %.4f\n",
	       (long long)t->best_epoch, metric, t->best_train, metric, t->best_val, metric,
	       t->best_test);
	if (o->profile) {
		double f, b, e;
		gnn_trainer_mean_times(t, &f, &b, &e);
		printf("Final Timing - Avg Forward: %.3fms, Avg Backward: %.3fms\n", f, b);
		printf("Total per epoch: %.3fms\n", e);
	}
	printf("Peak memory%s: %.1f MiB\n", ranks > 1 ? " (rank 0)" : "",
	       (double)t->m->b->peak_memory(t->m->b) / (1 << 20));
}

/* What a comparison prints of one run. */
struct result {
	int64_t best_epoch;
	double best_val, best_test, epoch_ms, forward_ms, backward_ms, peak_mib;
};

/* After the last epoch: the outputs and the report, or for a comparison
 * (row not NULL) its row. */
static void conclude(const struct train_options *o, struct gnn_trainer *t, struct result *row,
		     int ranks)
{
	const char *metric = gnn_metric_name(o->train.metric);
	if (!row) {
		write_outputs(o, t);
		report(o, t, metric, ranks);
		return;
	}
	*row = (struct result){.best_epoch = t->best_epoch, .best_val = t->best_val,
			       .best_test = t->best_test,
			       .peak_mib = (double)t->m->b->peak_memory(t->m->b) / (1 << 20)};
	gnn_trainer_mean_times(t, &row->forward_ms, &row->backward_ms, &row->epoch_ms);
	cli_log(1, "best epoch %04lld: val %s %.4f, test %s %.4f; %.3f ms an epoch",
		(long long)row->best_epoch, metric, row->best_val, metric, row->best_test,
		row->epoch_ms);
}

/* A run stopped by a signal after writing its checkpoint (exit 75). */
static noreturn void stopped_at_checkpoint(const struct train_options *o, int64_t epoch)
{
	cli_stopped("by signal %d after epoch %lld; checkpoint %s written (continue with "
		    "--resume %s)", cli_stop_signal(), (long long)epoch, o->train.checkpoint,
		    o->train.checkpoint);
}

/* A partitioned run (gnn_ranks.h): rank 0 concludes; each rank of this
 * process reports its rows, memory and traffic. */
struct ranked {
	const struct train_options *o;
	const struct cli_ranks *cr;
	struct result *row;
};

static void ranks_joined(void *ctx)
{
	const struct ranked *k = ctx;
	cli_ranks_joined(k->cr);
}

static void ranks_finish(void *ctx, struct gnn_trainer *t)
{
	const struct ranked *k = ctx;
	conclude(k->o, t, k->row, k->cr->world);
}

static void run_ranks(const struct train_options *o, struct gnn_dataset *d, struct result *row,
		      const struct cli_ranks *cr)
{
	struct sp_err err;
	struct ranked k = {o, cr, row};
	const struct gnn_ranks_opts r = {
		.threads = cr->threads, .first_rank = cr->first_rank, .world = cr->world,
		.gpu = cr->gpu, .first_device = cr->first_device, .tf32 = o->tf32,
		.exchange = o->exchange, .timeout_s = o->comm_timeout,
		.nccl_id = cr->have_id ? cr->id : NULL, .resume = o->resume, .ctx = &k,
		.joined = ranks_joined, .finish = ranks_finish,
	};
	struct run run = {o, gnn_metric_name(o->train.metric)};
	struct gnn_train_hooks hooks = {.ctx = &run, .epoch_done = on_epoch,
					.stop = stop_requested};
	struct gnn_rank_stats stats[64];
	if (cr->threads > (int)(sizeof stats / sizeof *stats))
		cli_usage_error("--gpus %d: at most %d ranks a process", cr->threads,
				(int)(sizeof stats / sizeof *stats));
	if (d->n < cr->world)
		cli_die("%s: cannot cut %lld rows into %d blocks (one a rank)", d->name,
			(long long)d->n, cr->world);
	if (cr->first_rank == 0)
		describe(d, &o->model, cr->gpu ? "cuda" : "cpu", cr->world);
	if (o->train.checkpoint)
		cli_catch_stop_signals();
	const int rc = gnn_ranks_train(d, &o->model, &o->train, &r, &hooks, stats, &err);
	if (rc < 0) {
		cli_ranks_joined(cr); /* a failed run's rendezvous file would only mislead */
		cli_fatal(&err);
	}
	for (int i = 0; i < cr->threads; i++) {
		const struct gnn_rank_stats *s = &stats[i];
		char where[32] = "host";
		if (cr->gpu)
			snprintf(where, sizeof where, "cuda:%d", cr->first_device + i);
		cli_log(1, "rank %d (%s): %lld row%s, %lld received, peak memory %.1f MiB, sent "
			"%.1f MB an epoch", s->rank, where, (long long)s->rows, sp_plural(s->rows),
			(long long)s->halo_rows, s->peak_mib, s->sent_mb_epoch);
		if (row && s->peak_mib > row->peak_mib)
			row->peak_mib = s->peak_mib;
	}
	if (rc > 0 && cr->first_rank == 0)
		stopped_at_checkpoint(o, stats[0].epoch);
	if (rc > 0)
		cli_stopped("by signal %d after epoch %lld, as every rank (rank 0 wrote the "
			    "checkpoint)", cli_stop_signal(), (long long)stats[0].epoch);
}

/* Train o->model on d: the backend, the model, --resume, --validate-kernels,
 * the epochs, then conclude. */
static void run_config(const struct train_options *o, struct gnn_dataset *d, struct result *row,
		       const struct cli_ranks *cr)
{
	if (cr->world > 1) {
		run_ranks(o, d, row, cr);
		return;
	}
	struct sp_err err;
	struct gnn_backend *b = open_backend(o);
	struct gnn_model *m;
	struct gnn_trainer t;
	if (gnn_model_create(b, d, &o->model, &m, &err) ||
	    gnn_trainer_init(&t, m, d, &o->train, &err) ||
	    (o->resume && gnn_trainer_resume(&t, o->resume, &err)))
		cli_fatal(&err);
	if (o->validate)
		validate(m, o);
	describe(d, &m->cfg, b->name, 1);
	if (o->resume)
		cli_log(1, "resumed from %s at epoch %lld", o->resume, (long long)t.epoch);
	const char *metric = gnn_metric_name(o->train.metric);
	struct run run = {o, metric};
	struct gnn_train_hooks hooks = {.ctx = &run, .epoch_done = on_epoch,
					.stop = stop_requested};
	if (o->train.checkpoint)
		cli_catch_stop_signals();
	int rc = gnn_train_run(&t, &hooks, &err);
	if (rc < 0)
		cli_fatal(&err);
	if (rc > 0)
		stopped_at_checkpoint(o, t.epoch);
	conclude(o, &t, row, 1);
	gnn_trainer_free(&t);
	gnn_model_free(m);
	b->destroy(b);
}

/* "relu", "maxk32". */
static void config_label(const struct config *c, char *buf, size_t size)
{
	if (c->nonlinear == GNN_MAXK)
		snprintf(buf, size, "maxk%d", c->maxk);
	else
		snprintf(buf, size, "%s", gnn_nonlinear_names[c->nonlinear]);
}

/* A comparison's log for one configuration: log.csv becomes log-maxk32.csv
 * (the label before the file's extension, or at its end). */
static char *config_log(const char *log, const char *label)
{
	const char *base = strrchr(log, '/'), *dot;
	base = base ? base + 1 : log;
	dot = strrchr(base, '.');
	size_t stem = dot && dot != base ? (size_t)(dot - log) : strlen(log);
	char *path = malloc(strlen(log) + strlen(label) + 2);
	if (!path)
		cli_die("out of memory");
	sprintf(path, "%.*s-%s%s", (int)stem, log, label, log + stem);
	return path;
}

/* The comparison: a line per configuration, as MaxK-GNN's
 * compare_maxk_performance and batch_train_maxk scripts compare runs; the
 * epoch-time speedup is over the relu run, when one is listed. */
static void print_comparison(const struct train_options *o, const struct result *rows)
{
	const char *metric = gnn_metric_name(o->train.metric);
	const struct result *relu = NULL;
	for (int i = 0; i < o->nconfigs && !relu; i++)
		if (o->configs[i].nonlinear == GNN_RELU)
			relu = &rows[i];
	char val[64], test[64];
	snprintf(val, sizeof val, "val_%s", metric);
	snprintf(test, sizeof test, "test_%s", metric);
	printf("%-8s %-9s %4s %10s %14s %14s %10s %10s %11s %8s %9s\n", "config", "nonlinear",
	       "k", "best_epoch", val, test, "epoch_ms", "forward_ms", "backward_ms", "speedup",
	       "peak_mib");
	for (int i = 0; i < o->nconfigs; i++) {
		const struct config *c = &o->configs[i];
		const struct result *r = &rows[i];
		char label[32], k[16] = "-", speedup[16] = "-";
		config_label(c, label, sizeof label);
		if (c->nonlinear == GNN_MAXK)
			snprintf(k, sizeof k, "%d", c->maxk);
		if (relu)
			snprintf(speedup, sizeof speedup, "%.2f", relu->epoch_ms / r->epoch_ms);
		printf("%-8s %-9s %4s %10lld %14.4f %14.4f %10.3f %10.3f %11.3f %8s %9.1f\n", label,
		       gnn_nonlinear_names[c->nonlinear], k, (long long)r->best_epoch, r->best_val,
		       r->best_test, r->epoch_ms, r->forward_ms, r->backward_ms, speedup,
		       r->peak_mib);
	}
	fflush(stdout);
}

static void train(struct train_options *o)
{
	struct gnn_dataset d;
	load_dataset(o, &d);
	if (o->metric == METRIC_AUTO)
		o->train.metric = d.multilabel ? GNN_MICRO_F1 : GNN_ACCURACY;
	else
		o->train.metric = metric_of[o->metric];
	if ((o->train.metric == GNN_ACCURACY) == d.multilabel)
		cli_usage_error("--metric %s needs %s labels; %s has %s",
				gnn_metric_name(o->train.metric),
				d.multilabel ? "class-id" : "multi-label", d.name,
				d.multilabel ? "multi-label ones" : "class ids");
	struct cli_ranks cr;
	cli_ranks_plan(&cr, o->gpus ? o->gpus : o->ranks, uses_gpu(o), o->rendezvous, o->run_id);
	if (cr.processes > 1 && o->nconfigs > 1)
		cli_usage_error("--nonlinear and --maxk list %d configurations; several processes "
				"train one", o->nconfigs);
	cli_ranks_rendezvous(&cr, o->comm_timeout);
	if (o->nconfigs == 1) {
		run_config(o, &d, NULL, &cr);
		gnn_data_free(&d);
		return;
	}
	struct result rows[2 * MAX_LIST];
	const char *log = o->train.log;
	for (int i = 0; i < o->nconfigs; i++) {
		char label[32];
		config_label(&o->configs[i], label, sizeof label);
		cli_log(1, "configuration %d of %d: %s", i + 1, o->nconfigs, label);
		o->model.nonlinear = o->configs[i].nonlinear;
		o->model.maxk = o->configs[i].maxk;
		char *path = log ? config_log(log, label) : NULL;
		o->train.log = path;
		run_config(o, &d, &rows[i], &cr);
		free(path);
	}
	o->train.log = log;
	print_comparison(o, rows);
	gnn_data_free(&d);
}

static int train_command(int argc, char **argv)
{
	struct train_options o = train_parse(argc, argv);
	train(&o);
	return 0;
}

static int bench_run(int argc, char **argv, const char *form)
{
	const struct bench_options o = bench_parse(argc, argv, form);
	bench(&o);
	return 0;
}

static int bench_command(int argc, char **argv)
{
	return bench_run(argc, argv, "bench");
}

/* --bench-kernels, the benchmark's older spelling, may stand anywhere
 * among the options (before a "--"). */
static int bench_kernels_given(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--bench-kernels"))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cli_command commands[] = {{"bench", bench_command}, {0}};
	cli_init(argv[0]);
	if (bench_kernels_given(argc, argv))
		return bench_run(argc, argv, "--bench-kernels");
	cli_run_command(argc, argv, commands, train_command, usage);
}
