#!/usr/bin/env bash
# maxk-train on several GPUs (--gpus N in one process, and one process a
# GPU with a rendezvous folder, as srun and torchrun start them): each
# trains as one GPU does, epoch by epoch; a checkpoint resumes on another
# number of GPUs; a rank killed mid-run stops the others with one line
# within the timeout and leaves the checkpoint valid; a leftover rendezvous
# file is refused; more GPUs than the machine has is an error. Checks that
# need more GPUs than this machine has are skipped, said so in TAP. NCCL
# must be on the loader's path (PyTorch's nvidia/nccl/lib).
set -u
BIN=${SPKIT_BIN:?SPKIT_BIN must name the folder of the programs}
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 1
n=0 failed=0
# The GPUs this process may use: CUDA_VISIBLE_DEVICES's list where it is
# set (a queue or SLURM may give this test one GPU of four), else all.
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
	visible=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
	[ "$visible" -lt "$GPUS" ] && GPUS=$visible
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}

check() { # NAME COMMAND...
	local name=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $name"
		printf '%s\n' "$out" | grep '^#' || true
	else
		echo "not ok $n - $name"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}

skip_unless() { # GPUS NAME: 0 when this machine has them, else a TAP skip
	[ "$GPUS" -ge "$1" ] && return 0
	n=$((n + 1))
	echo "ok $n - $2 # skip needs $1 GPUs, this machine has $GPUS"
	return 1
}

RUN=(--synthetic csbm:nodes=20000,seed=5 --layers 3 --hidden 64 --maxk 16 --norm --device cuda
     --eval-every 2)

# the first N rows of two logs agree: loss within rel, scores within abs
logs_agree() { # A B N REL ABS
	python3 - "$@" <<'PY'
import csv, sys
a, b, n, rel, ab = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
ra, rb = list(csv.DictReader(open(a))), list(csv.DictReader(open(b)))
assert len(ra) >= n and len(rb) >= n, (len(ra), len(rb))
worst = 0
for x, y in zip(ra[:n], rb[:n]):
    la, lb = float(x["loss"]), float(y["loss"])
    worst = max(worst, abs(la - lb) / abs(lb))
    assert abs(la - lb) <= rel * abs(lb), ("loss", x["epoch"], la, lb)
    for s in ("val", "test"):
        if x[s] and y[s]:
            assert abs(float(x[s]) - float(y[s])) <= ab, (s, x["epoch"], x[s], y[s])
print("# largest relative loss difference over %d epochs: %.2e" % (n, worst))
PY
}

one_gpu() { # the reference every other run is compared with
	[ -s one.csv ] || "$BIN/maxk-train" "${RUN[@]}" --epochs 8 --log one.csv > /dev/null 2>&1
}

gpus_train_as_one() { # N
	one_gpu || return 1
	"$BIN/maxk-train" "${RUN[@]}" --epochs 8 --gpus "$1" --log "g$1.csv" > /dev/null 2> err ||
		{ cat err; return 1; }
	logs_agree "g$1.csv" one.csv 6 2e-3 0.01 && grep -c "^rank" err | grep -qx "$1"
}

# N processes a GPU each, as torchrun starts them; rank 0's log
processes() { # N NAME [OPTION]...: rendezvous in the folder rdv-NAME
	local count=$1 name=$2 r pids=()
	shift 2
	mkdir -p "rdv-$name"
	for ((r = count - 1; r >= 0; r--)); do
		RANK=$r WORLD_SIZE=$count LOCAL_RANK=$r "$BIN/maxk-train" "${RUN[@]}" \
			--rendezvous "rdv-$name" --run-id "$name" "$@" > "$name.out$r" 2> "$name.err$r" &
		pids+=($!)
	done
	local rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}

processes_train_as_one() { # N
	one_gpu || return 1
	processes "$1" p$1 --epochs 8 --log "p$1.csv" || { cat p$1.err*; return 1; }
	logs_agree "p$1.csv" one.csv 6 2e-3 0.01 &&
		[ -z "$(ls "rdv-p$1")" ] || { echo "rendezvous left: $(ls "rdv-p$1")"; return 1; }
}

# The dense exchange: MaxK's output scattered and aggregated by cuSPARSE, and ReLU
dense_modes_train_as_one() {
	local m i=0
	for m in "--kernel-mode cusparse" "--nonlinear relu --kernel-mode auto"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$BIN/maxk-train" "${RUN[@]}" --epochs 6 $m --log "d1-$i.csv" > /dev/null 2>&1 &&
			"$BIN/maxk-train" "${RUN[@]}" --epochs 6 $m --gpus 2 --log "d2-$i.csv" \
				> /dev/null 2> err || { echo "$m"; cat err; return 1; }
		logs_agree "d2-$i.csv" "d1-$i.csv" 6 2e-3 0.01 || { echo "$m"; return 1; }
	done
}

resume_on_other_count() {
	"$BIN/maxk-train" "${RUN[@]}" --epochs 4 --gpus 2 --checkpoint ck.npz > /dev/null 2>&1 &&
		"$BIN/maxk-train" "${RUN[@]}" --epochs 8 --resume ck.npz --log r1.csv > /dev/null 2>&1 &&
		[ "$(wc -l < r1.csv)" -eq 9 ] && one_gpu && logs_agree r1.csv one.csv 8 5e-3 0.02
}

# the run failed with status 1, its last line of stderr the error
ends_in_error() { # STATUS ERRFILE
	[ "$1" -eq 1 ] && tail -1 "$2" | grep -q "^maxk-train: error: " &&
		[ "$(grep -c "error" "$2")" -eq 1 ]
}

killed_rank_stops_the_others() {
	mkdir -p rdv
	touch kill.csv
	local start=$SECONDS
	RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 "$BIN/maxk-train" "${RUN[@]}" --epochs 100000 \
		--rendezvous rdv --run-id kill --comm-timeout 20 > /dev/null 2>&1 &
	local victim=$!
	RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 "$BIN/maxk-train" "${RUN[@]}" --epochs 100000 \
		--rendezvous rdv --run-id kill --comm-timeout 20 --checkpoint kill.npz \
		--checkpoint-every 2 --log kill.csv > /dev/null 2> kill.err &
	local survivor=$!
	while [ "$(wc -l < kill.csv 2>/dev/null || echo 0)" -lt 6 ]; do
		sleep 0.2
		[ $((SECONDS - start)) -lt 120 ] || { echo "no epochs in 120 s"; return 1; }
	done
	kill -9 "$victim"
	local killed=$SECONDS rc=0
	wait "$survivor" || rc=$?
	echo "# rank 0 stopped $((SECONDS - killed)) s after rank 1 was killed: $(tail -1 kill.err)"
	ends_in_error "$rc" kill.err && [ $((SECONDS - killed)) -le 40 ] &&
		python3 -c "import numpy as n; z = n.load('kill.npz'); assert len(z.files) > 4" ||
		{ echo "status $rc"; return 1; }
}

leftover_rendezvous_refused() {
	mkdir -p rdv-old
	echo stale > rdv-old/spkit-rendezvous-old.id
	touch -d '1 hour ago' rdv-old/spkit-rendezvous-old.id
	! processes 2 old --epochs 1 --comm-timeout 5 &&
		grep -q "earlier run" old.err0 && ends_in_error 1 old.err0 && ends_in_error 1 old.err1 ||
		{ cat old.err*; return 1; }
	echo "# rank 0: $(cat old.err0)"
	echo "# rank 1: $(cat old.err1)"
}

too_many_gpus() {
	local out
	out=$("$BIN/maxk-train" "${RUN[@]}" --epochs 1 --gpus $((GPUS + 1)) 2>&1)
	[ $? -eq 1 ] && [[ $out == "maxk-train: error: --gpus $((GPUS + 1)): this process sees $GPUS GPU"* ]] ||
		{ echo "$out"; return 1; }
}

# Two processes on one GPU: NCCL refuses two ranks of one communicator on
# one device ("Duplicate GPU detected"); either it runs as one, or one line.
two_processes_one_gpu() {
	one_gpu || return 1
	if CUDA_VISIBLE_DEVICES=0 processes 2 same --epochs 8 --log same.csv --comm-timeout 30; then
		logs_agree same.csv one.csv 6 2e-3 0.01 && echo "# NCCL ran two ranks on one GPU"
	else
		ends_in_error 1 same.err0 && ends_in_error 1 same.err1 || { cat same.err*; return 1; }
		echo "# two ranks on one GPU: $(tail -1 same.err0)"
		# rank 0 took its rendezvous file away when the run failed
		[ -z "$(ls rdv-same)" ] || { echo "left: $(ls rdv-same)"; return 1; }
	fi
}

check "--gpus more than the machine has: one line" too_many_gpus
check "two processes on one GPU: trained as one, or one line saying why not" two_processes_one_gpu
skip_unless 2 "--gpus 2" && check "--gpus 2 trains as one GPU does" gpus_train_as_one 2
skip_unless 4 "--gpus 4" && check "--gpus 4 trains as one GPU does" gpus_train_as_one 4
skip_unless 2 "2 processes" && check "2 processes (RANK/WORLD_SIZE/LOCAL_RANK, --rendezvous) train as one GPU does; no file left" processes_train_as_one 2
skip_unless 4 "4 processes" && check "4 processes train as one GPU does" processes_train_as_one 4
skip_unless 2 "dense modes" && check "--kernel-mode cusparse and ReLU (dense rows) on 2 GPUs train as one GPU does" dense_modes_train_as_one
skip_unless 2 "resume" && check "a checkpoint of 2 GPUs resumes on one" resume_on_other_count
skip_unless 2 "kill" && check "rank 1 killed: rank 0 stops within the timeout, one line, checkpoint valid" killed_rank_stops_the_others
skip_unless 2 "leftover" && check "a rendezvous file of an earlier run is refused, both ranks one line" leftover_rendezvous_refused

echo "1..$n"
[ "$failed" -eq 0 ]
