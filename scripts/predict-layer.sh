#!/usr/bin/env bash
# kernel-sample predict --layer against the layer measured: for one encoder
# shape MP,B,H,L,DIM, each of the layer's operators is swept on a grid of 8
# shapes around it (b, l and dim each at half and at twice the layer's, mp
# and h the layer's; the causal softmax, which has no dim, varies h, and
# fused attention h with dim), a model fitted per operator and direction, the layer
# predicted from them at its own shape (a point of no grid), and the layer
# measured by `kernel-sample layer`: each operator alone and back to back.
# Prints both tables and a last line with the ratios; files in OUT.
#   scripts/predict-layer.sh DEVICE MP,B,H,L,DIM OUT [PRECISION [ATTENTION]]
# B, H, L and DIM must be even (their halves are grid points). ATTENTION is
# kernel-sample's --layer-attention: unfused (default), flash_atten or flash_atten_causal.
set -euo pipefail
bin=${SPKIT_BIN:-bin}
device=$1 layer=$2 out=$3 prec=${4:-fp16} attention=${5:-unfused}
IFS=, read -r mp b h l dim <<<"$layer"
for v in "$b" "$h" "$l" "$dim"; do
	[ $((v % 2)) -eq 0 ] || { echo "predict-layer.sh: $layer: b, h, l and dim must be even" >&2; exit 2; }
done
mkdir -p "$out/configs" "$out/models"

# grid NAME VALUE: one dimension's start, step, end and operator; the
# dimensions named in $vary take half and twice the layer's value
vary="b l dim"
grid() {
	case " $vary " in
	*" $1 "*) echo "$(($2 / 2)) 4 $(($2 * 2)) mul" ;;
	*) echo "$2 2 $2 mul" ;;
	esac
}

# config OP COLUMN...: a sweep of OP over its columns' grids
config() {
	local op=$1 starts="" steps="" ends="" ops="" cols=""
	shift
	for c in "$@"; do
		declare -n v=$c
		read -r s st e o <<<"$(grid "$c" "$v")"
		starts+="$s, " steps+="$st, " ends+="$e, " ops+="$o, " cols+="$c, "
	done
	cat >"$out/configs/$op.yml" <<YML
kernel_name: $op
columns_name: [${cols}F_dur(us), B_dur(us)]
first_n_column: $#
starts: [${starts%, }]
steps: [${steps%, }]
ends: [${ends%, }]
operators: [${ops%, }]
YML
}

config RMSlayernorm b l dim
config res_add b l dim
for op in linear1 linear2 linear3 linear4 gelu; do config $op mp b l dim; done
config RoPE mp b h l dim
if [ "$attention" = unfused ]; then
	for op in baddbmm bmm; do config $op mp b h l dim; done
	vary="b h l" config ScaledUpperTriangMaskedSoftmax mp b h l
else
	# h and dim both vary, so that two of their four pairs keep a head size
	# of 64 or 128 (the others are skipped): 8 shapes, the fit's minimum
	vary="b h l dim" config "$attention" mp b h l dim
fi

for c in "$out"/configs/*.yml; do
	"$bin/kernel-sample" run -q "$c" --device "$device" --precision "$prec" --output-dir "$out"
done
for csv in "$out"/sampling_data/*.csv; do
	"$bin/kernel-sample" fit -q --folds 0 "$csv" --output-dir "$out/models" >/dev/null
done
"$bin/kernel-sample" predict --layer "$layer" --models "$out/models" --precision "$prec" \
	--layer-attention "$attention" -o "$out/predicted.csv"
"$bin/kernel-sample" layer --layer "$layer" --device "$device" --precision "$prec" \
	--layer-attention "$attention" -o "$out/measured.csv"
echo "# predicted ($out/predicted.csv)"
cat "$out/predicted.csv"
echo "# measured ($out/measured.csv)"
cat "$out/measured.csv"
awk -F, 'FNR == 1 { file++ } file == 1 && $1 == "sum" { pf = $(NF-1); pb = $NF }
	file == 2 && $1 == "sum" { sf = $(NF-1); sb = $NF }
	file == 2 && $1 == "layer" { lf = $(NF-1); lb = $NF }
	END { printf "layer %s: predicted / measured: fwd %.3f, bwd %.3f, both %.3f; sum of the operators alone / measured: fwd %.3f, bwd %.3f\n",
		LAYER, pf / lf, pb / lb, (pf + pb) / (lf + lb), sf / lf, sb / lb }' \
	LAYER="$layer" "$out/predicted.csv" "$out/measured.csv"
