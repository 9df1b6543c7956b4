#!/usr/bin/env bats
# macko-spmv on the CPU (this suite runs without a GPU): every option and
# every error path; y checked against NumPy's float64 A @ x.
load macko

# a 70 x 300 matrix at density 0.4 with an empty row and a long run of zeros:
# a.npy (f2) and a.npz (MACKO)
matrix() {
	$PY -c "
import numpy as np
rng = np.random.default_rng(11)
a = rng.standard_normal((70, 300)).astype(np.float16)
a[rng.random(a.shape) >= 0.4] = 0
a[3] = 0
a[5, :200] = 0
np.save('$T/a.npy', a)"
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
}

# vectors NAME=SHAPE:DTYPE...: normal values in $T/NAME, e.g. x.npy=3,300:f4
vectors() {
	$PY - "$T" "$@" <<'PY'
import sys
import numpy as np
for seed, spec in enumerate(sys.argv[2:]):
    name, shape_dtype = spec.split('=')
    shape, dtype = shape_dtype.split(':')
    x = np.random.default_rng(seed).standard_normal(tuple(int(n) for n in shape.split(',')))
    np.save(f'{sys.argv[1]}/{name}', x.astype(dtype))
PY
}

# check_y Y:X:OUT[:ALPHA:BETA:Y_IN]...: each y (files in $T) has the shape
# and dtype (OUT, f32 or f16) asked for and matches alpha A x + beta y_in in
# float64 (A from a.npy, x rounded to fp16, y_in to float32): relative error
# under 1e-6 for f32, 1e-3 for f16.
check_y() {
	$PY - "$T" "$@" <<'PY'
import os, sys
import numpy as np
os.chdir(sys.argv[1])
a = np.load('a.npy').astype(np.float64)
for spec in sys.argv[2:]:
    y, x, out, *scale = spec.split(':')
    y, x = np.load(y), np.load(x).astype(np.float16).astype(np.float64)
    want = x @ a.T
    if scale:
        want = float(scale[0]) * want + float(scale[1]) * np.load(scale[2]).astype(np.float32)
    assert y.shape == want.shape, (spec, y.shape, want.shape)
    assert y.dtype == {'f32': np.float32, 'f16': np.float16}[out], (spec, y.dtype)
    err = np.max(np.abs(y - want)) / np.max(np.abs(want))
    assert err < {'f32': 1e-6, 'f16': 1e-3}[out], (spec, err)
PY
}

@test "--help shows the usage, the bench options and an example, also after bench; --version" {
	assert_help_version $S bench
	assert_help_version $S
	[[ $output == *"macko-spmv bench [BENCH OPTION]..."* ]]
	[[ $output == *"--kernels LIST"* ]]
}

@test "one vector (1-d X) of f2, f4 or f8: y = A x, f32 by default, or f16" {
	matrix
	cd "$T"
	vectors x2.npy=300:f2 x4.npy=300:f4 x8.npy=300:f8
	for n in 2 4 8; do
		"$BIN/$S" -q a.npz "x$n.npy" -o "y$n.npy"
		"$BIN/$S" -q a.npz "x$n.npy" -o "y$n-32.npy" --out-dtype f32
		"$BIN/$S" -q a.npz "x$n.npy" -o "y$n-16.npy" --out-dtype f16
		specs+=("y$n.npy:x$n.npy:f32" "y$n-32.npy:x$n.npy:f32" "y$n-16.npy:x$n.npy:f16")
	done
	check_y "${specs[@]}"
	# the empty row gives 0
	$PY -c "import numpy as np; assert np.load('y8.npy')[3] == 0"
}

@test "--out-dtype float32 and float16 are f32 and f16" {
	matrix
	cd "$T"
	vectors x.npy=2,300:f4
	for t in f32 float32 f16 float16; do
		"$BIN/$S" -q a.npz x.npy -o "y-$t.npy" --out-dtype "$t"
	done
	cmp y-f32.npy y-float32.npy
	cmp y-f16.npy y-float16.npy
	check_y y-f32.npy:x.npy:f32 y-f16.npy:x.npy:f16
}

@test "N = 1, 3, 16 and 37 vectors (N x C): y is N x R (more than 16 as several products)" {
	matrix
	cd "$T"
	vectors x1.npy=1,300:f4 x3.npy=3,300:f4 x16.npy=16,300:f4 x37.npy=37,300:f4
	for n in 1 3 16 37; do
		"$BIN/$S" -q a.npz "x$n.npy" -o "y$n.npy"
		"$BIN/$S" -q a.npz "x$n.npy" -o "y$n-16.npy" --out-dtype f16
		specs+=("y$n.npy:x$n.npy:f32" "y$n-16.npy:x$n.npy:f16")
	done
	check_y "${specs[@]}"
}

@test "--alpha, --beta and --y-in, for one vector and for three; --beta 0 leaves y_in unread" {
	matrix
	cd "$T"
	vectors x1.npy=300:f8 y1.npy=70:f8 x3.npy=3,300:f2 y3.npy=3,70:f4
	for n in 1 3; do
		"$BIN/$S" -q a.npz "x$n.npy" -o "a$n.npy" --alpha -1.5 --beta 0.25 --y-in "y$n.npy"
		"$BIN/$S" -q a.npz "x$n.npy" -o "b$n.npy" --alpha 2 --beta -3 --y-in "y$n.npy" \
			--out-dtype f16
		specs+=("a$n.npy:x$n.npy:f32:-1.5:0.25:y$n.npy" "b$n.npy:x$n.npy:f16:2:-3:y$n.npy")
	done
	# with beta 0 (the default) y_in is not read, as in BLAS: its NaN does not leak
	$PY -c "import numpy as np; np.save('nan.npy', np.full(70, np.nan))"
	"$BIN/$S" -q a.npz x1.npy -o c.npy --y-in nan.npy
	check_y "${specs[@]}" c.npy:x1.npy:f32
	# alpha 0, beta 1: y is y_in
	"$BIN/$S" -q a.npz x3.npy -o d.npy --alpha 0 --beta 1 --y-in y3.npy
	$PY -c "
import numpy as np
assert np.array_equal(np.load('d.npy'), np.load('y3.npy'))"
}

@test "--device cpu and auto (the CPU here) agree; --device cuda fails: no usable CUDA device" {
	matrix
	vectors x.npy=2,300:f4
	"$BIN/$S" -q "$T/a.npz" "$T/x.npy" -o "$T/cpu.npy" --device cpu
	"$BIN/$S" -q "$T/a.npz" "$T/x.npy" -o "$T/auto.npy" --device auto
	"$BIN/$S" -q "$T/a.npz" "$T/x.npy" -o "$T/default.npy"
	cmp "$T/cpu.npy" "$T/auto.npy"
	cmp "$T/cpu.npy" "$T/default.npy"
	check_y cpu.npy:x.npy:f32
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/cuda.npy" --device cuda
	assert_error 1 $S "^macko-spmv: error: --device cuda: no usable CUDA device \(.+\)$"
	assert_only_files "$T" a.npy a.npz x.npy cpu.npy auto.npy default.npy
}

@test "NaN and Inf in x are computed through; --check-finite reports them" {
	matrix
	$PY -c "
import numpy as np
x = np.random.default_rng(3).standard_normal((2, 300))
x[0, 7], x[1, 250], x[1, 20] = np.nan, np.inf, -np.inf
x[0, 15], x[1, 31] = np.inf, np.inf  # row 5 stores zeros there: 0 inf is NaN
np.save('$T/x.npy', x)"
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y.npy"
	[ "$status" -eq 0 ]
	pyref -c "
import numpy as np, macko_decode as m
x = np.load('$T/x.npy').astype(np.float16)
want, y = m.multiply('$T/a.npz', x), np.load('$T/y.npy')
assert np.isnan(want[:, 5]).all() and np.isinf(want).any() and np.isfinite(want).any()
assert np.array_equal(np.isnan(y), np.isnan(want)), np.flatnonzero(np.isnan(y) != np.isnan(want))
assert np.array_equal(np.isinf(y), np.isinf(want)) and np.all(y[np.isinf(y)] == want[np.isinf(y)])
f = np.isfinite(want)
assert np.max(np.abs(y[f] - want[f])) < 1e-6 * np.max(np.abs(want[f]))"
	rm "$T/y.npy"
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y.npy" --check-finite
	assert_error 1 $S "^macko-spmv: error: .*/x.npy: element 7 is not finite in fp16 \(--check-finite\)$"
	# finite in f8 but not in fp16
	$PY -c "
import numpy as np
x = np.ones(300); x[12] = 65520
np.save('$T/x.npy', x)"
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y.npy" --check-finite
	assert_error 1 $S "x.npy: element 12 \(65520\) overflows f2"
	assert_only_files "$T" a.npy a.npz x.npy
}

@test "--check-finite names a non-finite stored element of the matrix and of y_in" {
	$PY -c "
import numpy as np
a = np.zeros((4, 30), np.float16)
a[0, 1], a[1, 2], a[2, 5] = 1, 2, np.inf
np.save('$T/a.npy', a)
np.save('$T/x.npy', np.ones(30))
np.save('$T/yin.npy', np.array([0, 0, 0, np.nan], np.float32))
np.save('$T/ok.npy', np.ones(4, np.float32))"
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y.npy" --check-finite
	assert_error 1 $S "^macko-spmv: error: .*/a.npz: stored element 2 is not finite \(--check-finite\)$"
	"$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y.npy"
	$PY -c "
import numpy as np
assert np.load('$T/y.npy').tolist() == [1, 2, np.inf, 0]"
	# the matrix made finite, y_in not
	$PY -c "
import numpy as np
a = np.load('$T/a.npy'); a[2, 5] = 3; np.save('$T/a.npy', a)"
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y2.npy" --beta 1 --y-in "$T/yin.npy" --check-finite
	assert_error 1 $S "^macko-spmv: error: .*/yin.npy: element 3 is not finite \(--check-finite\)$"
	run "$BIN/$S" "$T/a.npz" "$T/x.npy" -o "$T/y2.npy" --beta 1 --y-in "$T/ok.npy" --check-finite
	[ "$status" -eq 0 ]
	$PY -c "
import numpy as np
assert np.load('$T/y2.npy').tolist() == [2, 3, 4, 1]"
}

@test "an empty matrix (0 rows) gives an empty y; an all-zero one zeros" {
	$PY -c "
import numpy as np
np.save('$T/e.npy', np.zeros((0, 8), np.float16))
np.save('$T/z.npy', np.zeros((5, 8), np.float16))
np.save('$T/x.npy', np.ones((2, 8)))"
	"$BIN/$C" -q "$T/e.npy" -o "$T/e.npz"
	"$BIN/$C" -q "$T/z.npy" -o "$T/z.npz"
	"$BIN/$S" -q "$T/e.npz" "$T/x.npy" -o "$T/ye.npy"
	"$BIN/$S" -q "$T/z.npz" "$T/x.npy" -o "$T/yz.npy" --out-dtype f16
	$PY -c "
import numpy as np
ye, yz = np.load('$T/ye.npy'), np.load('$T/yz.npy')
assert ye.shape == (2, 0) and ye.dtype == np.float32, (ye.shape, ye.dtype)
assert yz.shape == (2, 5) and yz.dtype == np.float16 and not yz.any()"
}

@test "-q prints nothing, -v adds timings and the device" {
	matrix
	vectors x.npy=300:f4
	run "$BIN/$S" -q "$T/a.npz" "$T/x.npy" -o "$T/y.npy"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$BIN/$S" -v "$T/a.npz" "$T/x.npy" -o "$T/y.npy"
	[[ $output == *"read inputs: "*" s; computing on the CPU"* ]]
	[[ $output == *"multiply: "*" s"* ]]
	check_y y.npy:x.npy:f32
}

@test "bad inputs: one line naming the file and the problem, exit 1, no output left" {
	mkdir "$T/in" "$T/out"
	$PY -c "
import numpy as np
a = np.zeros((4, 40), np.float16)
a[0, 30:] = 1; a[1, 3] = 2; a[3, ::3] = -1
np.save('$T/a.npy', a)
import os; os.chdir('$T/in')
np.save('x.npy', np.ones(40))
np.save('x39.npy', np.ones(39))
np.save('x0.npy', np.ones((0, 40)))
np.save('x3d.npy', np.ones((1, 2, 40)))
np.save('xint.npy', np.ones(40, np.int32))
np.save('x2.npy', np.ones((2, 40)))
np.save('y5.npy', np.ones(5))
np.save('y1x4.npy', np.ones((1, 4)))
np.save('y3x4.npy', np.ones((3, 4)))
np.save('yint.npy', np.ones(4, np.int64))
import scipy.sparse as sp
sp.save_npz('scipy.npz', sp.random(4, 40, density=0.3, format='csr', random_state=0))"
	"$BIN/$C" -q "$T/a.npy" -o "$T/in/good.npz"
	macko_variants "$T/in/good.npz" "$T/in"
	cd "$T/in"
	check() { # MATRIX X PATTERN [OPTION]...
		local m=$1 x=$2 pattern=$3
		shift 3
		run "$BIN/$S" "$m" "$x" -o "$T/out/y.npy" "$@"
		assert_error 1 $S "^macko-spmv: error: $pattern"
	}
	check good.npz x39.npy "x39.npy: expected 40 columns \(or N x 40\), found shape of 1 dimensions ending in 39$"
	check good.npz x0.npy "x0.npy: 0 vectors, expected 1 to 2147483647$"
	check good.npz x3d.npy "x3d.npy: expected 40 columns \(or N x 40\), found shape of 3 dimensions"
	check good.npz xint.npy "xint.npy: expected dtype f2, f4 or f8, found i4$"
	check good.npz x.npy "y5.npy: expected 4 rows \(or N x 4\), found shape of 1 dimensions ending in 5$" \
		--beta 1 --y-in y5.npy
	check good.npz x.npy "y1x4.npy: shape does not match y \(1 vectors of 4\)$" --beta 1 --y-in y1x4.npy
	check good.npz x2.npy "y3x4.npy: shape does not match y \(2 vectors of 4\)$" --beta 1 --y-in y3x4.npy
	check good.npz x.npy "yint.npy: expected dtype f2, f4 or f8, found i8$" --beta 1 --y-in yint.npy
	check good.npz x.npy "nothere.npy: cannot open: No such file or directory$" --beta 1 --y-in nothere.npy
	check scipy.npz x.npy "scipy.npz: missing array 'values' \(a MACKO file has values, deltas, row_indices and shape\)$"
	check missing.npz x.npy "missing.npz: cannot open: No such file or directory$"
	check good.npz missing.npy "missing.npy: cannot open: No such file or directory$"
	check x.npy x.npy "x.npy: .*not a zip file"
	check decreasing.npz x.npy "decreasing.npz: row 1: row_indices decrease"
	check past-column.npz x.npy "past-column.npz: row 0: element 10 falls in column 54 of 40$"
	check no-deltas.npz x.npy "no-deltas.npz: missing array 'deltas'"
	check f4-values.npz x.npy "f4-values.npz: array 'values' must be 1-d f2, found 1-d f4$"
	assert_only_files "$T/out"
	run "$BIN/$S" good.npz x.npy -o "$T/no/such/dir/y.npy"
	assert_error 1 $S "no/such/dir/y.npy: cannot create output: No such file or directory$"
	[ ! -e "$T/no" ]
}

@test "usage errors exit 2 and leave nothing" {
	cd "$T"
	usage() { # PATTERN ARG...: exit 2, PATTERN in the message
		local pattern=$1
		shift
		run "$BIN/$S" "$@"
		assert_error 2 $S "$pattern"
	}
	usage "give MATRIX.npz and X.npy"
	usage "give MATRIX.npz and X.npy" a.npz
	usage "no output: give -o Y.npy" a.npz x.npy
	usage "unexpected argument 'extra'" a.npz x.npy -o y.npy extra
	usage "--beta 2 needs --y-in" a.npz x.npy -o y.npy --beta 2
	usage "--out-dtype: 'f64' is not one of f32, f16, float32, float16" a.npz x.npy -o y.npy \
		--out-dtype f64
	usage "--device: 'gpu' is not one of cpu, cuda, auto" a.npz x.npy -o y.npy --device gpu
	usage "--alpha: 'abc' is not a finite number" a.npz x.npy -o y.npy --alpha abc
	usage "--beta: 'inf' is not a finite number" a.npz x.npy -o y.npy --beta inf
	usage "unknown option '--bogus'" a.npz x.npy -o y.npy --bogus
	usage "option '--y-in' needs a value" a.npz x.npy -o y.npy --y-in
	# bench options in the multiply mode, named
	for opt in "--rows 8" "--cols 8" "--density 0.5" "--matrix m.npz" "--vectors 2" \
		"--kernels macko" "--reps 3" "--warmup 1" --flush --no-flush "--seed 3" --append; do
		usage "^macko-spmv: error: ${opt%% *} belongs to 'macko-spmv bench'$" a.npz x.npy -o y.npy $opt
	done
	# multiply options after bench, named
	for opt in "--alpha 2" "--beta 1" "--y-in y.npy" "--out-dtype f16" "--device cpu" \
		--check-finite; do
		usage "^macko-spmv: error: ${opt%% *} is not a bench option" bench $opt
	done
	usage "--kernels: 'cudnn' is not one of macko, cublas, cusparse" bench --kernels macko,cudnn
	usage "--kernels: '' is not one of macko, cublas, cusparse" bench --kernels ,
	usage "--kernels: 'macko' is listed twice" bench --kernels macko,cublas,macko
	usage "--append needs -o FILE" bench --append
	usage "--vectors: 17 is out of range \[1, 16\]" bench --vectors 17
	usage "--vectors: 0 is out of range" bench --vectors 0
	usage "--rows: 0 is out of range" bench --rows 0
	usage "--cols: 'x' is not an integer" bench --cols x
	usage "--density: 0 is outside \(0, 1\]" bench --density 0
	usage "--reps: 0 is out of range" bench --reps 0
	usage "--warmup: -1 is out of range" bench --warmup -1
	usage "--seed: -1 is out of range" bench --seed -1
	usage "unexpected argument 'extra'" bench extra
	for opt in "--rows 8" "--cols 8" "--density 0.5"; do
		usage "^macko-spmv: error: ${opt%% *} shapes the random matrix; --matrix gives one$" \
			bench --matrix m.npz $opt
	done
	assert_only_files "$T"
}

@test "bench needs a GPU: 'no usable CUDA device', exit 1, no CSV written or changed" {
	cd "$T"
	run "$BIN/$S" bench
	assert_error 1 $S "^macko-spmv: error: bench: no usable CUDA device \(.+\)$"
	run "$BIN/$S" bench --rows 64 --cols 64 --vectors 4 --kernels macko -o out.csv
	assert_error 1 $S "bench: no usable CUDA device"
	assert_only_files "$T"
	printf 'gpu,rows\nX,1\n' > old.csv
	run "$BIN/$S" bench --append -o old.csv --flush --no-flush --reps 1 --warmup 0 --seed 2
	assert_error 1 $S "bench: no usable CUDA device"
	[ "$(cat old.csv)" = "$(printf 'gpu,rows\nX,1')" ]
	assert_only_files "$T" old.csv
}
