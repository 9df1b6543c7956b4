#!/usr/bin/env bats
# maxk-train: lists in --nonlinear and --maxk train each configuration and
# print one comparison table (MaxK-GNN's compare_maxk_performance and
# batch_train_maxk scripts); on the CPU.
load helpers
bats_require_minimum_version 1.5.0

G=maxk-train
SMALL=(--hidden 16 --layers 2 --kernel-mode cpu --epochs 6)

dataset() { # dataset DIR: tests/bats/ref/gnn_dataset.py
	"$PY" "$REPO/tests/bats/ref/gnn_dataset.py" "$@"
}

@test "lists: one table, each row the run its values alone give; a log per configuration" {
	dataset "$T/ds"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --nonlinear maxk,relu --maxk 2,4 --log "$T/log.csv" \
		> "$T/table" 2> "$T/err"
	[ "$(head -1 "$T/table" | tr -s ' ')" = "config nonlinear k best_epoch val_accuracy test_accuracy epoch_ms forward_ms backward_ms speedup peak_mib" ]
	[ "$(awk 'NR > 1 { print $1, $2, $3 }' "$T/table" | tr '\n' ';')" = "maxk2 maxk 2;maxk4 maxk 4;relu relu -;" ]
	grep -q "^configuration 3 of 3: relu$" "$T/err"
	for c in maxk:2 maxk:4 relu:4; do
		label=${c%:*}; [ "$label" = maxk ] && label=maxk${c#*:}
		"$BIN/$G" "$T/ds" "${SMALL[@]}" --nonlinear "${c%:*}" --maxk "${c#*:}" \
			--log "$T/one.csv" > "$T/one" 2>/dev/null
		# the same epochs, losses and scores (the times differ)
		diff <(cut -d, -f1-5 "$T/one.csv") <(cut -d, -f1-5 "$T/log-$label.csv")
		# "Best epoch 0005: train accuracy X, val accuracy Y, test accuracy Z"
		want=$(sed -n 's/^Best epoch \([0-9]*\): train [a-z-]* [0-9.]*, val [a-z-]* \([0-9.]*\), test [a-z-]* \([0-9.]*\)$/\1 \2 \3/p' "$T/one")
		want="$want $(sed -n 's/^Peak memory: \(.*\) MiB$/\1/p' "$T/one")"
		[ "$(awk -v l="$label" '$1 == l { printf "%04d %s %s %s", $4, $5, $6, $11 }' "$T/table")" = "$want" ]
	done
	# the speedup is the relu run's epoch time over each one's
	$PY - "$T/table" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])][1:]
relu = float(rows[-1][6])
for r in rows:
    assert abs(float(r[9]) - relu / float(r[6])) <= 0.006 * max(1, relu / float(r[6])), r
PY
}

@test "without relu in the list the speedup is '-'; -q leaves the table alone on stdout" {
	dataset "$T/ds"
	run --separate-stderr "$BIN/$G" "$T/ds" "${SMALL[@]}" --maxk 2,4 -q
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 3 ]
	[ "$(awk 'NR > 1 { print $10 }' <<< "$output" | tr '\n' ' ')" = "- - " ]
}

@test "a comparison's logs: the label before the extension, or at the end" {
	dataset "$T/ds"
	mkdir "$T/run.d"
	"$BIN/$G" "$T/ds" "${SMALL[@]}" --nonlinear relu,maxk --maxk 3 --log "$T/run.d/log" -q >/dev/null
	[ "$(cd "$T/run.d" && ls | tr '\n' ' ')" = "log-maxk3 log-relu " ]
	[ "$(wc -l < "$T/run.d/log-relu")" = 7 ]
}

@test "lists: usage errors exit 2, before any training" {
	run "$BIN/$G" ds --nonlinear relu --maxk 2,4
	assert_error 2 $G "--maxk lists 2 values but --nonlinear relu uses none"
	run "$BIN/$G" ds --nonlinear maxk,maxk
	assert_error 2 $G "--nonlinear: 'maxk' is listed twice"
	run "$BIN/$G" ds --nonlinear maxk,gelu
	assert_error 2 $G "--nonlinear: 'gelu' is not one of relu, maxk"
	run "$BIN/$G" ds --maxk 8,x
	assert_error 2 $G "--maxk"
	run "$BIN/$G" ds --hidden 16 --maxk 8,32
	assert_error 2 $G "--maxk 32 is larger than --hidden 16"
	for o in --save-model:m.npz --predict:p.npy --checkpoint:c.npz --resume:c.npz; do
		run "$BIN/$G" ds --nonlinear maxk,relu "${o%:*}" "${o#*:}"
		assert_error 2 $G "${o%:*} takes one configuration; --nonlinear and --maxk list 2"
	done
	run "$BIN/$G" ds --nonlinear maxk,relu --log -
	assert_error 2 $G "--log - takes one configuration; --nonlinear and --maxk list 2"
	run "$BIN/$G" ds --nonlinear maxk,relu --kernel-mode maxk
	assert_error 2 $G "--kernel-mode maxk needs --nonlinear maxk"
	run "$BIN/$G" ds --nonlinear maxk,relu --validate-kernels
	assert_error 2 $G "--validate-kernels needs --nonlinear maxk"
}
