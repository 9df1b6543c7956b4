#!/usr/bin/env bats
# Conventions every program follows (SPEC.md): --help and --version, a man
# page that lists the same options as --help, usage errors with exit 2.
load helpers

programs() {
	for p in "$BIN"/*; do basename "$p"; done
}

options_in() { # the long options a text mentions, sorted
	grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

@test "every program has --help, --version and a man page with the same options" {
	[ -n "$(programs)" ]
	for p in $(programs); do
		help=$("$BIN/$p" --help)
		version=$("$BIN/$p" --version)
		[[ $version == "$p (spkit) "* ]]
		page="$REPO/man/man1/$p.1"
		[ -f "$page" ] || { echo "$p: no man page"; return 1; }
		man_opts=$(groff -mandoc -Tascii -P-cbu "$page" 2>/dev/null | options_in)
		help_opts=$(echo "$help" | options_in)
		if [ "$man_opts" != "$help_opts" ]; then
			echo "$p: options differ between --help and the man page:"
			diff <(echo "$help_opts") <(echo "$man_opts")
			return 1
		fi
	done
}

@test "every program rejects an unknown option with exit 2 and one error voice" {
	for p in $(programs); do
		run "$BIN/$p" --no-such-option
		assert_error 2 "$p" "unknown option '--no-such-option'"
		[[ ${lines[0]} == *" (try '$p --help')" ]]
	done
}

@test "a file name with a newline, an escape sequence or bytes that are not UTF-8 stays on the error's one line, quoted, valid UTF-8" {
	bad=$(printf 'bad\nname\033[31m\xff\xc2\x9b')
	for p in maxk-genmeta graph-partition macko-compress; do
		case $p in
		graph-partition) run "$BIN/$p" "$T/$bad.onnx" ;;
		*) run "$BIN/$p" "$T/$bad.npz" -o "$T/out" ;;
		esac
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ] || { echo "$p: ${#lines[@]} lines: $output"; return 1; }
		[[ ${lines[0]} == *'bad\nname\x1b[31m\xff\xc2\x9b'* ]] || { echo "$p: $output"; return 1; }
		[[ $output != *$'\033'* ]]
		printf '%s' "$output" | iconv -f UTF-8 -t UTF-8 >/dev/null
	done
}

@test "a file name holding a backslash and x1b, and one holding the byte ESC, give different error lines, each escaped once" {
	local text='a\x1b' byte
	byte=$(printf 'a\033')
	for p in maxk-genmeta graph-partition macko-compress; do
		local shown=()
		for name in "$text" "$byte"; do
			case $p in
			graph-partition) run "$BIN/$p" "$T/$name.onnx" ;;
			*) run "$BIN/$p" "$T/$name.npz" -o "$T/out" ;;
			esac
			[ "$status" -eq 1 ]
			[ "${#lines[@]}" -eq 1 ] || { echo "$p: $output"; return 1; }
			shown+=("${lines[0]}")
		done
		# the text's backslash doubled, the byte written \x1b
		[[ ${shown[0]} == *"$T/a\\\\x1b."* ]] || { echo "$p: ${shown[0]}"; return 1; }
		[[ ${shown[1]} == *"$T/a\\x1b."* ]] || { echo "$p: ${shown[1]}"; return 1; }
		[ "${shown[0]}" != "${shown[1]}" ]
	done
}

@test "an empty option value is a usage error before any work (-o '', --log '', --hardware=)" {
	while read -r p args; do
		eval "set -- $args"
		run "$BIN/$p" "$@"
		assert_error 2 "$p" "the value is empty"
	done <<-'LIST'
	maxk-genmeta --synthetic powerlaw:nodes=100,edges=300 -o ''
	maxk-train --synthetic csbm --epochs 1000 --log ''
	graph-partition --hardware= x.onnx
	macko-compress --random 64x64 -o ''
	macko-spmv a.npz x.npy -o ''
	ksmm-tune best r.csv -o ''
	LIST
}

# ---- '-': standard output for every output, standard input where an input
# streams (and for a reader that seeks, when standard input is a file);
# refused with one line where it cannot be; never a file named '-'.

@test "'-' as an output: the same bytes as a file, on standard output; no file named '-'" {
	cd "$T"
	printf '0 1\n1 2\n2 0\n2 1\n' > g.csv
	"$BIN/maxk-genmeta" -q g.csv -o want.warp4
	"$BIN/maxk-genmeta" -q g.csv -o - > got.warp4
	cmp got.warp4 want.warp4
	"$BIN/macko-compress" -q --random 9x13 -o m.npz
	"$BIN/macko-compress" -q --decompress m.npz -o want.npy
	"$BIN/macko-compress" -q --decompress m.npz -o - > got.npy
	cmp got.npy want.npy
	$PY -c "import numpy as np; np.save('x.npy', np.arange(13, dtype=np.float32))"
	"$BIN/macko-spmv" -q m.npz x.npy -o want.npy --device cpu
	"$BIN/macko-spmv" -q m.npz x.npy -o - --device cpu > got.npy
	cmp got.npy want.npy
	"$BIN/graph-partition" -q "$REPO/configs/models/mlp.yaml" --batch 2 -f json -o want.json
	"$BIN/graph-partition" -q "$REPO/configs/models/mlp.yaml" --batch 2 -f json -o - > got.json
	cmp got.json want.json
	"$BIN/kernel-sample" -q "$REPO/configs/kernel_sampling/test/layernorm.yml" --device cpu \
		--precision fp32 --output-dir s
	"$BIN/kernel-sample" merge -q s/sampling_data/*.csv -o want.csv
	"$BIN/kernel-sample" merge -q s/sampling_data/*.csv -o - > got.csv
	cmp got.csv want.csv
	[ ! -e - ]
}

@test "'-' as an input: streamed inputs from a pipe, seeking ones from '< FILE'" {
	cd "$T"
	printf '0 1\n1 2\n2 0\n2 1\n' > g.csv
	"$BIN/maxk-genmeta" -q g.csv -o want.warp4
	# an edge list (the graph format that streams) through a pipe
	cat g.csv | "$BIN/maxk-genmeta" -q - -o got.warp4
	cmp got.warp4 want.warp4
	# a .warp4 to --check from a file as standard input
	"$BIN/maxk-genmeta" g.csv --check - < want.warp4 | grep -q "^records  *3$"
	# macko-compress: an edge list through a pipe; --decompress of '< m.npz'
	printf '0 1 2\n3 0 -1.5\n' | "$BIN/macko-compress" -q - -o m.npz
	"$BIN/macko-compress" -q --decompress - -o - < m.npz > d.npy
	$PY -c "
import numpy as np
d = np.load('d.npy')
assert d.shape == (4, 4) and d[0, 1] == 2 and d[3, 0] == -1.5 and np.count_nonzero(d) == 2"
	# macko-spmv's x from '< x.npy'
	$PY -c "import numpy as np; np.save('x.npy', np.ones(4, np.float32))"
	"$BIN/macko-spmv" -q m.npz - -o - --device cpu < x.npy > y.npy
	$PY -c "import numpy as np; assert list(np.load('y.npy')) == [2, 0, 0, -1.5]"
	# graph-partition: an ONNX model from '< FILE', a hardware file through a pipe
	"$BIN/graph-partition" -q /work/shared/models/resnet18.onnx -f csv > want.csv
	"$BIN/graph-partition" -q - -f csv < /work/shared/models/resnet18.onnx > got.csv
	cmp got.csv want.csv
	cat "$REPO/configs/hardware/a100.yaml" | "$BIN/graph-partition" -q \
		"$REPO/configs/models/mlp.yaml" --batch 1 --hardware - | grep -q "NVIDIA A100"
	# kernel-sample: a config through a pipe
	cat "$REPO/configs/kernel_sampling/test/layernorm.yml" |
		"$BIN/kernel-sample" -q - --device cpu --precision fp32 --output-dir s
	"$BIN/kernel-sample" -q "$REPO/configs/kernel_sampling/test/layernorm.yml" --device cpu \
		--precision fp32 --output-dir f
	diff <(cut -d, -f1-3 s/sampling_data/*.csv) <(cut -d, -f1-3 f/sampling_data/*.csv)
	# ksmm-tune: patterns through a pipe; best's results from a pipe; apply's x from '<'
	printf '2,4,4,2\n' | "$BIN/ksmm-tune" tune --patterns - --batch 8 --dry-run -q > dry.csv
	[ "$(wc -l < dry.csv)" -gt 1 ]
	$PY -c "
import numpy as np
rng = np.random.default_rng(1)
np.save('w.npy', rng.standard_normal((2, 4, 4, 2)).astype(np.float32))
np.save('x.npy', rng.standard_normal((3, 16)).astype(np.float32))"
	"$BIN/ksmm-tune" apply -q --pattern 2,4,4,2 --weights w.npy x.npy -o want.npy --device cpu
	"$BIN/ksmm-tune" apply -q --pattern 2,4,4,2 --weights w.npy - -o - --device cpu < x.npy > got.npy
	cmp got.npy want.npy
	[ ! -e - ]
}

@test "'-' where it cannot be: one line saying why, before any work, no file named '-'" {
	cd "$T"
	"$BIN/macko-compress" -q --random 9x13 -o m.npz
	$PY -c "import numpy as np; np.save('x.npy', np.ones(13, np.float32))"
	while IFS='|' read -r status pattern cmd; do
		eval "set -- $cmd"
		run "$BIN/$@"
		assert_error "$status" "$1" "$pattern"
	done <<-'LIST'
	1|-: an .npz is written with seeks, so not to standard output|maxk-genmeta --synthetic powerlaw:nodes=100,edges=300 --graph-out -
	1|-: an .npz is written with seeks, so not to standard output|macko-compress --random 8x8 -o -
	2|--save-model -: an .npz is written with seeks|maxk-train --synthetic csbm --save-model -
	2|--checkpoint -: an .npz is written with seeks|maxk-train --synthetic csbm --checkpoint -
	1|: -: a dataset is a folder, not standard input|maxk-train -
	2|merge: a PART.csv's name says its device, operator and precision, so not standard input|kernel-sample merge a_layernorm_fp16.csv -
	2|--output-dir -: a folder for sampling_data/ and sampling_log/, not standard output|kernel-sample x.yml --output-dir -
	2|--output-dir -: a folder for the models, not standard output|kernel-sample fit x_layernorm_fp32.csv --output-dir -
	2|--append needs -o FILE \(a file, not standard output\)|macko-spmv bench --append -o -
	2|--append needs -o FILE \(a file, not standard output\)|maxk-train bench --synthetic reddit_like --append -o -
	LIST
	# a reader that seeks, given a pipe: the one-line error names standard input
	cat x.npy | { run "$BIN/macko-spmv" m.npz - -o y.npy --device cpu
		assert_error 1 macko-spmv "standard input: is a FIFO; this input must be a regular file \(give its name, or '< FILE'\)"; }
	cat m.npz | { run "$BIN/macko-compress" --decompress - -o d.npy
		assert_error 1 macko-compress "standard input: is a FIFO; this input must be a regular file"; }
	assert_only_files "$T" m.npz x.npy
}

# One small CPU job per program (and subcommand), run in $T: what it asks
# for and nothing else goes to stdout; the rest is messages on stderr.
jobs_of_every_program() {
	cat <<-LIST
	maxk-genmeta g.csv -o x.warp4
	maxk-train --synthetic csbm:nodes=200 --epochs 2 --kernel-mode cpu --hidden 8 --maxk 4
	macko-compress --random 8x8 -o m.npz
	macko-spmv m.npz x.npy -o y.npy --device cpu
	graph-partition $REPO/configs/models/mlp.yaml --batch 1 -f csv -o r.csv
	kernel-sample $REPO/configs/kernel_sampling/test/layernorm.yml --device cpu --precision fp32 --output-dir s\$level
	kernel-sample merge s/sampling_data/cpu_layernorm_fp32_1_1.csv -o merged.csv
	ksmm-tune apply --pattern 2,4,4,2 --weights w.npy xx.npy -o yy.npy --device cpu
	ksmm-tune best results.csv -o best.csv
	LIST
}

@test "-q: nothing but errors and the requested results, in every program; -v adds detail" {
	cd "$T"
	printf '0 1\n1 2\n2 0\n' > g.csv
	$PY -c "
import numpy as np
np.save('x.npy', np.ones(8, np.float32))
np.save('w.npy', np.ones((2, 4, 4, 2), np.float32))
np.save('xx.npy', np.ones((3, 16), np.float32))"
	"$BIN/macko-compress" -q --random 8x8 -o m.npz
	"$BIN/kernel-sample" -q "$REPO/configs/kernel_sampling/test/layernorm.yml" --device cpu \
		--precision fp32 --output-dir s
	# kernel-sample names its files after the CPU; merge takes a name it knows
	mv s/sampling_data/*.csv s/sampling_data/cpu_layernorm_fp32_1_1.csv
	printf '%s\n' "batch,a,b,c,d,dtype,layout,variant,tile_rows,tile_k,tile_batch,thread_rows,thread_batch,vec,stages,tf32,tile_d,ms,std,rel_err,status" \
		"100,2,16,16,2,fp32,bsf,simt,32,8,64,4,4,1,2,0,1,0.5,0.01,1e-8,ok" > results.csv
	local p args programs="" level
	while read -r p args; do
		programs+=" $p"
		for level in q n v; do
			eval "set -- $args"
			local opt=-$level
			[ $level = n ] && opt=
			"$BIN/$p" "$@" ${opt:+"$opt"} > $level.out 2> $level.err ||
				{ echo "$p $opt failed: $(cat $level.err)"; return 1; }
		done
		[ ! -s q.err ] || { echo "$p -q wrote to stderr: $(cat q.err)"; return 1; }
		# the results (stdout) the same whatever the verbosity, but for
		# maxk-genmeta's default statistics, which -q silences
		if [ "$p" = maxk-genmeta ]; then
			[ ! -s q.out ] && [ -s n.out ]
			cmp n.out v.out
		else
			cmp q.out n.out || { echo "$p: -q changed stdout"; return 1; }
			cmp n.out v.out || { echo "$p: -v changed stdout"; return 1; }
		fi
		# -v: more on stderr than the default
		[ "$(wc -c < v.err)" -gt "$(wc -c < n.err)" ] ||
			[ "$p $1" = "kernel-sample merge" ] ||
			[ "$p $1" = "ksmm-tune best" ] ||
			{ echo "$p $1: -v adds nothing: $(cat v.err)"; return 1; }
	done < <(jobs_of_every_program)
	# every program is in the list
	for p in $(programs); do [[ $programs == *" $p"* ]] || { echo "$p not tried"; return 1; }; done
}

@test "CPU threads: SPKIT_THREADS, OMP_NUM_THREADS, SLURM_CPUS_PER_TASK, then the affinity mask (-v says which)" {
	cd "$T"
	threads() { env -u SPKIT_THREADS -u OMP_NUM_THREADS -u SLURM_CPUS_PER_TASK "$@" \
		"$BIN/macko-compress" -v --random 64x64 -o m.npz 2>&1 | grep '^CPU threads: '; }
	[ "$(threads taskset -c 0)" = "CPU threads: 1 (from the CPU affinity mask)" ]
	[ "$(threads SLURM_CPUS_PER_TASK=5 taskset -c 0)" = "CPU threads: 5 (from SLURM_CPUS_PER_TASK)" ]
	[ "$(threads SLURM_CPUS_PER_TASK=5 OMP_NUM_THREADS=3 taskset -c 0)" = "CPU threads: 3 (from OMP_NUM_THREADS)" ]
	[ "$(threads SLURM_CPUS_PER_TASK=5 OMP_NUM_THREADS=3 SPKIT_THREADS=2)" = "CPU threads: 2 (from SPKIT_THREADS)" ]
	[ "$(threads OMP_NUM_THREADS=0 SPKIT_THREADS=many taskset -c 0)" = "CPU threads: 1 (from the CPU affinity mask)" ]
	# the same matrix whatever the count
	SPKIT_THREADS=1 "$BIN/macko-compress" -q --random 300x300 -o one.npz
	SPKIT_THREADS=7 "$BIN/macko-compress" -q --random 300x300 -o seven.npz
	cmp one.npz seven.npz
}

# fake_slurm DIR STATUS: srun and scontrol stand-ins in DIR: srun records
# its environment's thread settings and arguments and exits STATUS;
# scontrol records its arguments.
fake_slurm() {
	mkdir -p "$1"
	cat > "$1/srun" <<-SH
	#!/bin/sh
	echo "OMP_NUM_THREADS=\$OMP_NUM_THREADS SRUN_CPUS_PER_TASK=\$SRUN_CPUS_PER_TASK \$*" >> "$1/srun.log"
	exit $2
	SH
	printf '#!/bin/sh\necho "$*" >> "%s/scontrol.log"\n' "$1" > "$1/scontrol"
	chmod +x "$1/srun" "$1/scontrol"
}

@test "the sbatch examples give the step the job's CPUs as its thread count" {
	cd "$T"
	fake_slurm fake 0
	for f in "$REPO"/scripts/slurm/*.sbatch; do
		rm -f fake/srun.log
		PATH="$T/fake:$PATH" SLURM_CPUS_PER_TASK=6 SLURM_JOB_ID=9 SLURM_ARRAY_TASK_ID=1 \
			MAXK_RUN_DIR="$T/run" KSMM_RESULTS_DIR="$T/ksmm" SPKIT_BIN=/nonexistent \
			bash "$f" x.yml > out 2>&1 || true
		grep -q "^OMP_NUM_THREADS=6 SRUN_CPUS_PER_TASK=6 " fake/srun.log ||
			{ echo "$f: $(cat fake/srun.log out)"; return 1; }
	done
}

@test "maxk-train.sbatch requeues a run stopped at a checkpoint (status 75), never an error" {
	cd "$T"
	local code
	for code in 75 1 2; do
		rm -rf fake
		fake_slurm fake $code
		run env PATH="$T/fake:$PATH" SLURM_JOB_ID=9 MAXK_RUN_DIR="$T/run" SPKIT_BIN=/bin \
			bash "$REPO/scripts/slurm/maxk-train.sbatch" --synthetic csbm
		[ "$status" -eq "$code" ]
		if [ "$code" = 75 ]; then
			[ "$(cat fake/scontrol.log)" = "requeue 9" ]
		else
			[ ! -e fake/scontrol.log ]
		fi
	done
	# the requeued start resumes from the checkpoint
	touch run/ck.npz
	rm -rf fake
	fake_slurm fake 0
	PATH="$T/fake:$PATH" SLURM_JOB_ID=9 MAXK_RUN_DIR="$T/run" SPKIT_BIN=/bin \
		bash "$REPO/scripts/slurm/maxk-train.sbatch" --synthetic csbm > /dev/null
	grep -q -- "--resume $T/run/ck.npz" fake/srun.log
}

# make install and uninstall with this suite's build (SPKIT_BUILD, SPKIT_BIN),
# into a staging folder.
make_install() { # TARGET DESTDIR PREFIX
	local nvcc=
	[ -e "${SPKIT_BUILD:-$REPO/build}/kernels/core/gpu.o" ] && nvcc=${NVCC:-nvcc}
	make -s -C "$REPO" BUILD="${SPKIT_BUILD:-$REPO/build}" BIN="$BIN" NVCC="$nvcc" \
		"$1" DESTDIR="$2" PREFIX="$3"
}

@test "make install puts programs, man pages, configs, scripts and docs under PREFIX; make uninstall removes them" {
	make_install install "$T/stage" /opt/spkit
	local p=$T/stage/opt/spkit
	for prog in $(programs); do
		[ -x "$p/bin/$prog" ] && [ -f "$p/share/man/man1/$prog.1" ] || { echo "$prog"; return 1; }
	done
	for f in hardware/h200.yaml hardware/a100.yaml models/mlp.yaml ksmm/patterns.in \
		kernel_sampling/collect/bmm.yml scripts/slurm/maxk-train.sbatch scripts/long_run.sh; do
		[ -f "$p/share/spkit/$f" ] || { echo "missing $f"; return 1; }
	done
	for f in README.md LICENSE NOTICE RESULTS.md; do [ -f "$p/share/doc/spkit/$f" ]; done
	# the installed scripts run the installed programs on the installed configs
	grep -q '^bin=${SPKIT_BIN:-/opt/spkit/bin}$' "$p/share/spkit/scripts/slurm/maxk-train.sbatch"
	grep -q 'patterns=/opt/spkit/share/spkit/ksmm/patterns.in' "$p/share/spkit/scripts/long_run.sh"
	[ -x "$p/share/spkit/scripts/long_run.sh" ]
	# --hardware NAME finds the installed file, also after the tree is moved
	sed 's/^name: .*/name: Staged GPU/' "$REPO/configs/hardware/h100.yaml" > "$p/share/spkit/hardware/staged.yaml"
	mv "$T/stage/opt/spkit" "$T/moved"
	run "$T/moved/bin/graph-partition" "$REPO/configs/models/mlp.yaml" --batch 1 --hardware staged -v
	[ "$status" -eq 0 ]
	[[ $output == *"hardware             Staged GPU"* ]]
	[[ $output == *"hardware file: $T/moved/bin/../share/spkit/hardware/staged.yaml"* ]]
	mv "$T/moved" "$T/stage/opt/spkit"
	make_install uninstall "$T/stage" /opt/spkit
	# all that is left: the staged hardware file, which install did not put there
	[ "$(cd "$p" && find . -type f)" = "./share/spkit/hardware/staged.yaml" ] ||
		[ -z "$(cd "$p" && find . -type f)" ]
}

@test "--hardware NAME: SPKIT_DATA_DIR first, then the installed and source trees; an unknown NAME lists the known" {
	mkdir -p "$T/data/hardware"
	sed 's/^name: .*/name: From SPKIT_DATA_DIR/' "$REPO/configs/hardware/a100.yaml" > "$T/data/hardware/a100.yaml"
	run "$BIN/graph-partition" "$REPO/configs/models/mlp.yaml" --batch 1 --hardware a100
	[[ $output == *"hardware             NVIDIA A100"* ]]
	SPKIT_DATA_DIR=$T/data run "$BIN/graph-partition" "$REPO/configs/models/mlp.yaml" --batch 1 --hardware a100
	[[ $output == *"hardware             From SPKIT_DATA_DIR"* ]]
	# a path is a path: ./a100 is no NAME
	run "$BIN/graph-partition" "$REPO/configs/models/mlp.yaml" --batch 1 --hardware ./a100
	assert_error 1 graph-partition "\./a100: cannot open"
	run "$BIN/graph-partition" "$REPO/configs/models/mlp.yaml" --batch 1 --hardware b300
	assert_error 1 graph-partition "b300: no such hardware: no b300.yaml in .*configs/hardware \(known: a100, h100, h200\)"
}

@test "docs: a LICENSE and NOTICE; README and every man page cite the original; each page says what '-' does, GPU pages how to profile" {
	grep -q "^MIT License" "$REPO/LICENSE"
	grep -q "Apache License, Version 2.0" "$REPO/NOTICE"
	declare -A origin=(
		[maxk-genmeta]="MaxK-GNN: Towards Theoretical Speed Limits" [maxk-train]="MaxK-GNN: Towards Theoretical Speed Limits"
		[ksmm-tune]="Fast inference with Kronecker-sparse matrices" [macko-compress]="MACKO-SpMV"
		[macko-spmv]="MACKO-SpMV" [graph-partition]="branes-ai/graphs" [kernel-sample]="estimate-train-time")
	for p in $(programs); do
		local page
		page=$(groff -mandoc -Tascii -P-cbu "$REPO/man/man1/$p.1" 2>/dev/null)
		[ -n "${origin[$p]:-}" ] || { echo "$p: no original named in this test"; return 1; }
		grep -q "^REFERENCES" <<<"$page" || { echo "$p: no REFERENCES"; return 1; }
		tr -s ' \n' ' ' <<<"$page" | grep -qF "${origin[$p]}" || { echo "$p: does not cite ${origin[$p]}"; return 1; }
		grep -q "^   Standard input and output (-)" <<<"$page" || { echo "$p: no '-' section"; return 1; }
		grep -q "^   Verbosity" <<<"$page" || { echo "$p: no verbosity section"; return 1; }
		grep -q "^| \`$p\`" "$REPO/README.md" || grep -q "^| .*\`$p\`.* | .*${origin[$p]%%:*}" "$REPO/README.md" ||
			{ echo "$p: README does not cite its original"; return 1; }
	done
	for p in maxk-train macko-spmv ksmm-tune kernel-sample; do
		groff -mandoc -Tascii -P-cbu "$REPO/man/man1/$p.1" 2>/dev/null | grep -A20 "^PROFILING" | grep -q "nsys profile" ||
			{ echo "$p: no nsys recipe"; return 1; }
	done
}

@test "--device cuda:N in every program that has --device: a number or a usage error; without a GPU, one line and exit 1" {
	cd "$T"
	"$PY" -c 'import numpy as np; np.save("x.npy", np.ones((3, 4), np.float32)); np.save("w.npy", np.ones((1, 2, 2, 1), np.float32)); np.save("m.npy", np.eye(8, dtype=np.float32)); np.save("v.npy", np.ones(8, np.float32))'
	"$BIN/macko-compress" -q m.npy -o m.npz
	for cmd in "maxk-train --synthetic csbm --epochs 1" "macko-spmv m.npz v.npy -o y.npy" \
		"ksmm-tune apply --pattern 1,2,2,1 --weights w.npy x.npy -o y.npy" \
		"kernel-sample $REPO/configs/kernel_sampling/test/layernorm.yml --run get_one"; do
		set -- $cmd
		prog=$1
		shift
		run "$BIN/$prog" "$@" --device cuda:x
		assert_error 2 "$prog" "--device: 'x' is not an integer"
		run "$BIN/$prog" "$@" --device cuda:-1
		assert_error 2 "$prog" "--device"
		run "$BIN/$prog" "$@" --device cuda:3
		[ "$status" -eq 1 ] || { echo "$prog: exit $status: $output"; return 1; }
		[ "${#lines[@]}" -eq 1 ]
		[[ ${lines[0]} == "$prog: error: "*"--device cuda: no usable CUDA device"* ]] ||
			{ echo "$output"; return 1; }
	done
}
