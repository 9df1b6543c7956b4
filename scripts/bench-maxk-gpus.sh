#!/usr/bin/env bash
# maxk-train on several GPUs of one host (--gpus N), the configuration of
# the multi-GPU targets: products_like, GraphSAGE 4 x 256, LayerNorm,
# k = 32; epoch time on 1, 2, 4... GPUs (GPUS_LIST, default: 1, 2 and 4 as
# far as the machine has them; with one GPU, only the one-GPU runs), each
# rank's peak memory and the bytes it sends an epoch, for the MaxK exchange
# (CBSR rows, halo), the all-gather of every row, and ReLU (dense rows);
# TRAIN_EPOCHS epochs each (default 12; the first left out of the means),
# evaluation only after the last (PRODUCTS=0 skips these). Then (BIG=1) a power-law graph too large
# for one GPU on the most GPUs listed, and (ACC=1) csbm's test accuracy on
# one GPU and on the most, over three seeds. Logs in $SPKIT_BENCH_DIR;
# SUMMARY lines on stdout.
set -uo pipefail
bin=${SPKIT_BIN:-bin}
dir=${SPKIT_BENCH_DIR:-build/bench}
mkdir -p "$dir"
epochs=${TRAIN_EPOCHS:-12}
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
default_list=1
[ "${have:-0}" -ge 2 ] && default_list="1 2"
[ "${have:-0}" -ge 4 ] && default_list="1 2 4"
gpus_list=${GPUS_LIST:-$default_list}
most=${gpus_list##* }
# the large graph and the accuracy comparison need several GPUs
if [ "$most" -lt 2 ]; then
	BIG=0
	ACC=0
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}

# summary LOG NAME GPUS: epoch time, the ranks' largest peak and their mean traffic
summary() {
	awk -v name="$2" -v g="$3" '
		/^Total per epoch/ { gsub(/ms/, ""); e = $4 }
		/^Peak memory: / { p = $3 }
		/^rank [0-9]+ / { r++; for (i = 1; i <= NF; i++) {
			if ($i == "memory") { v = $(i + 1); if (v > p) p = v }
			if ($i == "sent") s += $(i + 1) } }
		END { printf "SUMMARY gpus %-2d %-22s epoch %9.2f ms  peak %9.1f MiB/GPU  sent %9.1f MB/GPU/epoch\n",
			g, name, e, p, r ? s / r : 0 }' "$1"
}

train() { # NAME GPUS [OPTION]...
	local name=$1 g=$2 log
	shift 2
	log=$dir/gpus-$name-$g.log
	local ranks=()
	[ "$g" -gt 1 ] && ranks=(--gpus "$g")
	/usr/bin/time -f "wall %e s, host peak %M KiB" "$bin/maxk-train" -v "$@" --epochs "$epochs" \
		--eval-every "$epochs" --profile-kernels "${ranks[@]}" > "$log" 2>&1 ||
		{ echo "FAILED gpus $g $name: $(grep error "$log" | head -1)"; return 1; }
	summary "$log" "$name" "$g"
}

products=(--synthetic products_like --model sage --layers 4 --hidden 256 --norm --maxk 32
	  --device cuda)
for g in $gpus_list; do
	[ "${PRODUCTS:-1}" = 1 ] || break
	train products-maxk "$g" "${products[@]}"
	[ "$g" -gt 1 ] && train products-maxk-allgather "$g" "${products[@]}" --exchange allgather
	train products-relu "$g" "${products[@]}" --nonlinear relu
done

if [ "${BIG:-1}" = 1 ]; then
	big=(--synthetic "${BIG_GRAPH:-powerlaw:nodes=12000000,edges=1000000000,feat=64,classes=16}"
	     --model sage --layers 3 --hidden 128 --norm --maxk 16 --device cuda)
	epochs=${BIG_EPOCHS:-3} train big-maxk "$most" "${big[@]}"
	# and why it needs them: one GPU alone
	epochs=1 train big-maxk 1 "${big[@]}" ||
		echo "SUMMARY gpus 1  big-maxk: $(grep -o 'error: .*' "$dir/gpus-big-maxk-1.log" | head -1)"
fi

if [ "${ACC:-1}" = 1 ]; then
	for seed in 1 2 3; do
		for g in 1 "$most"; do
			ranks=()
			[ "$g" -gt 1 ] && ranks=(--gpus "$g")
			"$bin/maxk-train" --synthetic "csbm:nodes=100000,seed=$seed" --seed "$seed" \
				--layers 3 --hidden 128 --maxk 16 --norm --epochs 200 --eval-every 5 \
				--device cuda "${ranks[@]}" > "$dir/gpus-csbm-$seed-$g.log" 2>&1
			sed -n "s/^Best epoch \([0-9]*\): .*test accuracy \([0-9.]*\)$/SUMMARY csbm seed $seed gpus $g best_epoch \1 test \2/p" \
				"$dir/gpus-csbm-$seed-$g.log"
		done
	done
fi
