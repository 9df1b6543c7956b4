#!/usr/bin/env bats
# macko-compress: every option and every error path, checked against NumPy,
# SciPy and an independent decoder (ref/macko_decode.py).
load macko

# same_as_npy MACKO.npz WANT.npy [MACKO.npz WANT.npy]...: the decoder gives
# WANT rounded to fp16 (NumPy's astype, -0 as +0), bit for bit.
same_as_npy() {
	pyref - "$@" <<'PY'
import sys
import numpy as np, macko_decode as m
for path, want in zip(sys.argv[1::2], sys.argv[2::2]):
    want = np.load(want).astype(np.float16)
    want[want == 0] = 0
    got = m.decode(path)
    assert got.shape == want.shape, (path, got.shape, want.shape)
    bad = np.flatnonzero(got.view(np.uint16) != want.view(np.uint16))
    assert bad.size == 0, \
        f'{path}: {bad.size} entries differ, first {bad[0]}: {got.flat[bad[0]]} != {want.flat[bad[0]]}'
PY
}

@test "--help and -h show the usage, the three modes and an example; --version and -V" {
	assert_help_version $C
	[[ $output == *"--decompress MATRIX.npz -o DENSE.npy"* ]]
	[[ $output == *"--stats INPUT"* ]]
}

@test "the arrays of a small matrix, worked out by hand" {
	# row 0: 1 at column 2, then 16 zeros (the 16th stored as a zero with
	# delta 15), 2 at column 19; row 1 empty; row 2: -3, 4 at columns 0, 1.
	$PY -c "
import numpy as np
a = np.zeros((3, 20), np.float16)
a[0, 2], a[0, 19], a[2, 0], a[2, 1] = 1, 2, -3, 4
np.save('$T/a.npy', a)"
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	$PY -c "
import numpy as np, zipfile
z = np.load('$T/a.npz')
assert sorted(z.files) == ['deltas', 'row_indices', 'shape', 'values'], z.files
assert z['values'].dtype == np.float16 and z['values'].tolist() == [1, 0, 2, -3, 4, 0, 0, 0]
assert z['deltas'].dtype == np.uint8 and z['deltas'].tolist() == [0xf2, 0, 0, 0], z['deltas']
assert z['row_indices'].dtype == np.int32 and z['row_indices'].tolist() == [0, 3, 3, 5]
assert z['shape'].dtype == np.int64 and z['shape'].tolist() == [3, 20]
assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile('$T/a.npz').infolist())"
	assert_only_files "$T" a.npy a.npz
}

@test "f2, f4 and f8 matrices: NumPy's astype(float16), read back by an independent decoder" {
	$PY -c "
import numpy as np
rng = np.random.default_rng(1)
a = rng.standard_normal((37, 300)) * np.exp(rng.uniform(-18, 6, (37, 300)))
a[rng.random(a.shape) < 0.5] = 0
# -0; below, at and above half the smallest subnormal; the largest half;
# 1 + 2^-11 + 2^-40, which rounds up only when rounded once
a[0, :8] = [-0.0, 1e-9, 2**-25, 2**-25 + 2**-60, 3e-8, 65504, 1 + 2**-11 + 2**-40, -65519]
a[1] = -0.0
np.save('$T/f8.npy', a)
np.save('$T/f4.npy', a.astype(np.float32))
np.save('$T/f2.npy', a.astype(np.float16))"
	for dt in f2 f4 f8; do
		"$BIN/$C" -q "$T/$dt.npy" -o "$T/$dt.npz"
		pairs+=("$T/$dt.npz" "$T/$dt.npy")
	done
	same_as_npy "${pairs[@]}"
}

@test "long runs of zeros, empty rows, 1x1, all-zero and a 12000-column row" {
	$PY -c "
import numpy as np
a = np.zeros((9, 200), np.float16)
for r, gap in enumerate([14, 15, 16, 17, 31, 32, 33, 150]):
    a[r, 0], a[r, gap + 1] = 1, r + 2   # gap zeros between them
a[8, 199] = 5                           # 199 zeros first
np.save('$T/runs.npy', a)
np.save('$T/one.npy', np.array([[-2.5]], np.float16))
np.save('$T/zero1.npy', np.zeros((1, 1), np.float16))
np.save('$T/zeros.npy', np.zeros((40, 70), np.float16))
w = np.zeros((3, 12000), np.float16)
w[0, ::997] = np.arange(1, 14); w[2, 11999] = 7; w[2, 5000:5100] = -1
np.save('$T/wide.npy', w)"
	for f in runs one zero1 zeros wide; do
		"$BIN/$C" -q "$T/$f.npy" -o "$T/$f.npz"
		pairs+=("$T/$f.npz" "$T/$f.npy")
	done
	same_as_npy "${pairs[@]}"
	$PY -c "
import numpy as np
ri = np.load('$T/runs.npz')['row_indices']
# stored per row: 2 nonzeros plus a zero for each full 16 of the gap
assert np.diff(ri).tolist() == [2, 2, 3, 3, 3, 4, 4, 11, 13], np.diff(ri)
for f in ('zeros', 'zero1'):
    z = np.load('$T/%s.npz' % f)
    assert len(z['values']) == 0 and len(z['deltas']) == 0 and not z['row_indices'].any(), f"
}

@test "the same matrix from every thread count gives the same file" {
	random_npy "$T/a.npy" 3000 130 0.3
	SPKIT_THREADS=1 "$BIN/$C" -q "$T/a.npy" -o "$T/one.npz"
	SPKIT_THREADS=2 "$BIN/$C" -q "$T/a.npy" -o "$T/two.npz"
	SPKIT_THREADS=7 "$BIN/$C" -q "$T/a.npy" -o "$T/seven.npz"
	cmp "$T/one.npz" "$T/two.npz"
	cmp "$T/one.npz" "$T/seven.npz"
	same_as_npy "$T/one.npz" "$T/a.npy"
}

@test "SciPy CSR and COO, compressed or not, and Matrix Market give the dense matrix's arrays" {
	$PY -c "
import numpy as np, scipy.io, scipy.sparse as sp
m = sp.random(50, 400, density=0.08, format='csr', random_state=2)
m.data = (m.data - 0.5).astype(np.float32)  # sparse values are float32 (see the man page)
m[7] = 0; m.eliminate_zeros()
np.save('$T/dense.npy', m.toarray())
sp.save_npz('$T/csr.npz', m, compressed=True)
sp.save_npz('$T/csr-u.npz', m, compressed=False)
sp.save_npz('$T/coo.npz', m.tocoo(), compressed=True)
sp.save_npz('$T/coo-u.npz', m.tocoo(), compressed=False)
scipy.io.mmwrite('$T/m.mtx', m)"
	"$BIN/$C" -q "$T/dense.npy" -o "$T/dense.macko.npz"
	same_as_npy "$T/dense.macko.npz" "$T/dense.npy"
	inputs="csr.npz csr-u.npz coo.npz coo-u.npz m.mtx"
	for f in $inputs; do
		"$BIN/$C" -q "$T/$f" -o "$T/$f.macko.npz"
	done
	$PY -c "
import numpy as np
a = np.load('$T/dense.macko.npz')
for f in '$inputs'.split():
    b = np.load('$T/%s.macko.npz' % f)
    for k in a.files:
        assert np.array_equal(a[k], b[k]), (f, k)"
}

@test "the karate club .mtx (pattern, symmetric) has values 1 in both triangles" {
	"$BIN/$C" -q "$REPO/data/karate.mtx" -o "$T/k.npz"
	$PY -c "
import numpy as np, scipy.io
np.save('$T/k.npy', scipy.io.mmread('$REPO/data/karate.mtx').toarray())"
	same_as_npy "$T/k.npz" "$T/k.npy"
	run "$BIN/$C" "$REPO/data/karate.mtx" --stats
	[[ $output == *"nonzeros           156"* ]]
}

@test "an edge list (the man page's INPUT): ids from 0, values 1 unless given, max id + 1 square" {
	printf '# src,dst\n0,2\n3,1\n' >"$T/e.csv"
	printf '0\t2\t0.5\n3\t1\t-2\n' >"$T/w.tsv"
	$PY -c "
import numpy as np
a = np.zeros((4, 4)); a[0, 2] = 1; a[3, 1] = 1; np.save('$T/e.npy', a)
a[0, 2] = 0.5; a[3, 1] = -2; np.save('$T/w.npy', a)"
	"$BIN/$C" -q "$T/e.csv" -o "$T/e.npz"
	same_as_npy "$T/e.npz" "$T/e.npy"
	"$BIN/$C" -q "$T/w.tsv" -o "$T/w.npz"
	same_as_npy "$T/w.npz" "$T/w.npy"
}

@test "--decompress gives back fp16 input exactly, -0 as +0" {
	$PY -c "
import numpy as np
rng = np.random.default_rng(4)
a = rng.standard_normal((20, 90)).astype(np.float16)
a[rng.random(a.shape) < 0.6] = 0
a[0, :6] = [-0.0, np.inf, -np.inf, 6e-8, -65504, np.nan]
a[3] = 0
np.save('$T/a.npy', a)"
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	"$BIN/$C" -q --decompress "$T/a.npz" -o "$T/back.npy"
	$PY -c "
import numpy as np
a, b = np.load('$T/a.npy'), np.load('$T/back.npy')
assert b.dtype == np.float16 and b.shape == a.shape
a[a == 0] = 0
assert np.array_equal(a.view(np.uint16), b.view(np.uint16))
assert np.signbit(b[0, 0]) == False"
	# an empty matrix comes back empty
	$PY -c "import numpy as np; np.save('$T/e.npy', np.zeros((0, 5), np.float16))"
	"$BIN/$C" -q "$T/e.npy" -o "$T/e.npz"
	"$BIN/$C" -q --decompress "$T/e.npz" -o "$T/e-back.npy"
	$PY -c "import numpy as np; assert np.load('$T/e-back.npy').shape == (0, 5)"
}

@test "--density D keeps exactly round(D R C) entries, the largest in magnitude" {
	# ties (values on a grid of quarters) go by position, first kept
	$PY -c "
import numpy as np
rng = np.random.default_rng(5)
a = np.round(rng.standard_normal((31, 77)) * 4) / 4
np.save('$T/a.npy', a.astype(np.float32))
np.save('$T/t.npy', a[:, :40].astype(np.float32))
import scipy.sparse as sp
sp.save_npz('$T/a-csr.npz', sp.csr_matrix(a))"
	ds="0.013 0.1 0.5 0.77 1"
	for d in $ds; do
		"$BIN/$C" -q "$T/a.npy" --density "$d" -o "$T/d$d.npz"
		"$BIN/$C" -q "$T/a-csr.npz" --density "$d" -o "$T/s$d.npz"
	done
	pyref -c "
import numpy as np, macko_decode as m
a = np.load('$T/a.npy').astype(np.float16)
mag = np.abs(a.astype(np.float64)).ravel()
order = np.lexsort((np.arange(a.size), -mag))  # largest first, then by position
for d in '$ds'.split():
    k = int(np.floor(float(d) * a.size + 0.5))
    want = np.zeros(a.size, np.float16)
    want[order[:k]] = a.ravel()[order[:k]]
    want = want.reshape(a.shape)
    want[want == 0] = 0  # -0 as +0
    for f in ('d', 's'):
        got = m.decode('$T/%s%s.npz' % (f, d))
        assert np.count_nonzero(got) == min(k, np.count_nonzero(a)), (f, d, k)
        assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), (f, d)"
}

@test "--threshold T zeroes every |v| < T, for dense and sparse input" {
	# f4: sparse matrices hold float32 values (see the man page)
	random_npy "$T/a.npy" 23 150 0.7 f4 6
	$PY -c "
import numpy as np, scipy.sparse as sp
sp.save_npz('$T/a.npz', sp.csr_matrix(np.load('$T/a.npy')))"
	ts="0 0.5 1.0009765625 2.5 65504"
	for t in $ts; do
		"$BIN/$C" -q "$T/a.npy" --threshold "$t" -o "$T/d$t.npz"
		"$BIN/$C" -q "$T/a.npz" --threshold "$t" -o "$T/s$t.npz"
		pairs+=("$T/d$t.npz" "$T/want$t.npy" "$T/s$t.npz" "$T/want$t.npy")
	done
	$PY -c "
import numpy as np
for t in '$ts'.split():
    a = np.load('$T/a.npy').astype(np.float16)
    a[np.abs(a.astype(np.float64)) < float(t)] = 0
    np.save('$T/want%s.npy' % t, a)"
	same_as_npy "${pairs[@]}"
}

@test "--stats: every number against Python's count" {
	$PY -c "
import numpy as np
rng = np.random.default_rng(8)
a = rng.standard_normal((40, 333)).astype(np.float16)
a[rng.random(a.shape) < 0.85] = 0
a[5] = 0; a[6, 1:300] = 0
np.save('$T/a.npy', a)"
	run "$BIN/$C" "$T/a.npy" --stats
	[ "$status" -eq 0 ]
	assert_only_files "$T" a.npy
	echo "$output" > "$T/stats.txt"
	$PY - "$T/a.npy" "$T/stats.txt" <<'PY'
import sys
import numpy as np
a = np.load(sys.argv[1])
got = {}
for line in open(sys.argv[2]):
    key, value = line.split()[:2]
    got[key] = value
R, C = a.shape
nnz = int(np.count_nonzero(a))
stored = 0
for row in a:
    cols = np.flatnonzero(row)
    gaps = np.diff(np.r_[-1, cols]) - 1
    stored += len(cols) + int(np.sum(gaps // 16))
padded = -(-stored // 8) * 8
ri = (R + 1) * 4
want = {
    'rows': R, 'cols': C, 'nonzeros': nnz, 'padding_zeros': stored - nnz,
    'density': f'{nnz / (R * C):.6f}', 'effective_density': f'{stored / (R * C):.6f}',
    'bytes_macko': padded * 2 + padded // 2 + ri, 'bytes_dense_fp16': R * C * 2,
    'bytes_csr32': nnz * 6 + ri, 'bytes_csr16': nnz * 4 + ri,
}
assert stored > nnz  # the test has padding zeros to count
for key, value in want.items():
    assert got[key] == str(value), (key, got[key], value)
assert len(got) == len(want), sorted(got)
PY
	# the ratios printed beside the bytes
	[[ $output =~ bytes_dense_fp16\ +[0-9]+\ +\(macko\ is\ [0-9.]+x\) ]]
}

@test "--stats --json: the same numbers as the table, every digit, the ratios too" {
	random_npy "$T/a.npy" 37 301 0.3
	table=$("$BIN/$C" "$T/a.npy" --stats)
	run "$BIN/$C" -q "$T/a.npy" --stats --json
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	$PY - "$output" "$table" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
t = {l.split()[0]: l.split()[1] for l in sys.argv[2].splitlines()}
assert list(j)[:10] == list(t), (list(j), list(t))
for k, v in t.items():
    if '.' in v:  # the table's fractions to 6 places, JSON's exact
        assert abs(j[k] - float(v)) <= 5e-7 and j[k] != float(v), (k, j[k], v)
    else:
        assert j[k] == int(v), (k, j[k], v)
assert j['density'] == j['nonzeros'] / (j['rows'] * j['cols'])
assert j['macko_over_csr32'] == j['bytes_macko'] / j['bytes_csr32']
PY
	run "$BIN/$C" "$T/a.npy" --json -o "$T/a.npz"
	assert_error 2 $C "--json goes with --stats"
	assert_only_files "$T" a.npy
}

@test "--member NAME compresses one array of a multi-array .npz, as the same .npy would" {
	$PY -c "
import numpy as np
rng = np.random.default_rng(4)
np.savez('$T/model.npz', fc1=rng.standard_normal((40, 70)), fc2=rng.standard_normal((20, 40)).astype(np.float32), bias=np.zeros(5))
np.savez_compressed('$T/packed.npz', fc2=np.load('$T/model.npz')['fc2'])
np.save('$T/fc2.npy', np.load('$T/model.npz')['fc2'])"
	"$BIN/$C" -q "$T/model.npz" --member fc2 --density 0.3 -o "$T/m.npz"
	"$BIN/$C" -q "$T/packed.npz" --member fc2 --density 0.3 -o "$T/p.npz"
	"$BIN/$C" -q "$T/fc2.npy" --density 0.3 -o "$T/want.npz"
	cmp "$T/m.npz" "$T/want.npz"
	cmp "$T/p.npz" "$T/want.npz"
	# --stats of a member, without -o
	run "$BIN/$C" "$T/model.npz" --member fc1 --stats
	[[ ${lines[0]} == "rows               40" ]]
	# errors: a missing member names those there are; a 1-d one; usage
	run "$BIN/$C" "$T/model.npz" --member fc3 -o "$T/x.npz"
	assert_error 1 $C "model.npz: no member 'fc3' \(it holds fc1, fc2, bias\)$"
	run "$BIN/$C" "$T/model.npz" --member bias -o "$T/x.npz"
	assert_error 1 $C "model.npz: member 'bias': expected a 2-d matrix, found 1 dimensions$"
	run "$BIN/$C" "$T/fc2.npy" --member fc2 -o "$T/x.npz"
	assert_error 2 $C "--member takes an array of an .npz, not of '.*fc2.npy'"
	run "$BIN/$C" --random 8x8 --member fc2 -o "$T/x.npz"
	assert_error 2 $C "--member names an array of INPUT: no --random or --decompress"
	assert_only_files "$T" model.npz packed.npz fc2.npy m.npz p.npz want.npz
}

@test "--stats on a MACKO file describes it; with -o it is re-written unchanged" {
	random_npy "$T/a.npy" 30 100 0.4
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	want=$("$BIN/$C" "$T/a.npy" --stats)
	run "$BIN/$C" "$T/a.npz" --stats
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
	assert_only_files "$T" a.npy a.npz
	"$BIN/$C" -q "$T/a.npz" --stats -o "$T/b.npz"
	cmp "$T/a.npz" "$T/b.npz"
}

@test "--deflate deflates every member, same arrays; a MACKO input is re-written deflated" {
	random_npy "$T/a.npy" 60 500 0.2
	"$BIN/$C" -q "$T/a.npy" -o "$T/plain.npz"
	"$BIN/$C" -q "$T/a.npy" --deflate -o "$T/deflated.npz"
	"$BIN/$C" -q "$T/plain.npz" --deflate -o "$T/again.npz"
	$PY -c "
import numpy as np, zipfile
for f in ('deflated', 'again'):
    z = zipfile.ZipFile('$T/%s.npz' % f)
    assert sorted(i.filename for i in z.infolist()) == ['deltas.npy', 'row_indices.npy', 'shape.npy', 'values.npy']
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist()), f
    a, b = np.load('$T/plain.npz'), np.load('$T/%s.npz' % f)
    for k in a.files:
        assert np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype, k"
	[ "$(stat -c %s "$T/deflated.npz")" -lt "$(stat -c %s "$T/plain.npz")" ]
	same_as_npy "$T/deflated.npz" "$T/a.npy"
}

@test "-q prints nothing but the requested --stats, -v adds timings of each step" {
	random_npy "$T/a.npy" 10 10 0.5
	run "$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$BIN/$C" -q "$T/a.npy" --stats -o "$T/a.npz"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 10 ]
	[[ ${lines[0]} == "rows               10" ]]
	run "$BIN/$C" "$T/a.npy" -o "$T/a.npz"
	[ -z "$output" ]
	run "$BIN/$C" -v "$T/a.npy" -o "$T/a.npz"
	[[ $output == *"read and prune: "*" s"* ]]
	[[ $output == *"compress: "*" s"* ]]
	[[ $output == *"write: "*" s"* ]]
	run "$BIN/$C" --verbose "$T/a.npz" --decompress -o "$T/b.npy"
	[[ $output == *"write: "* ]]
}

@test "usage errors exit 2 and leave nothing" {
	random_npy "$T/a.npy" 4 4 0.5
	"$BIN/$C" -q "$T/a.npy" -o "$T/m.npz"
	cd "$T"
	run "$BIN/$C"
	assert_error 2 $C "no INPUT given"
	run "$BIN/$C" a.npy
	assert_error 2 $C "nothing to do: give -o OUTPUT or --stats"
	run "$BIN/$C" a.npy -o o.npz --density 0.5 --threshold 1
	assert_error 2 $C "give --density or --threshold, not both"
	for d in 0 1.5 -0.5; do
		run "$BIN/$C" a.npy -o o.npz --density "$d"
		assert_error 2 $C "^macko-compress: error: --density: $d is outside \(0, 1\]$"
	done
	run "$BIN/$C" a.npy -o o.npz --density abc
	assert_error 2 $C "--density: 'abc' is not a finite number"
	run "$BIN/$C" a.npy -o o.npz --threshold -1
	assert_error 2 $C "--threshold: -1 is out of range"
	run "$BIN/$C" a.npy -o o.npz --threshold nan
	assert_error 2 $C "--threshold: 'nan' is not a finite number"
	run "$BIN/$C" --decompress m.npz -o o.npy --density 0.5
	assert_error 2 $C "--decompress does not prune"
	run "$BIN/$C" --decompress m.npz -o o.npy --threshold 0.5
	assert_error 2 $C "--decompress does not prune"
	run "$BIN/$C" --decompress m.npz -o o.npy --deflate
	assert_error 2 $C "--deflate applies to MACKO output, not to --decompress"
	run "$BIN/$C" m.npz -o o.npz --density 0.5
	assert_error 2 $C "m.npz is already MACKO: prune before compressing"
	run "$BIN/$C" m.npz --stats --threshold 0.5
	assert_error 2 $C "m.npz is already MACKO"
	run "$BIN/$C" a.npy b.npy -o o.npz
	assert_error 2 $C "unexpected argument 'b.npy'"
	run "$BIN/$C" a.npy -o o.npz --bogus
	assert_error 2 $C "unknown option '--bogus'"
	run "$BIN/$C" a.npy -x
	assert_error 2 $C "unknown option '-x'"
	run "$BIN/$C" a.npy -o
	assert_error 2 $C "option '-o' needs a value"
	run "$BIN/$C" a.npy --stats --density
	assert_error 2 $C "option '--density' needs a value"
	assert_only_files "$T" a.npy m.npz
}

@test "bad matrices: one line naming the file and the problem, exit 1, no output left" {
	mkdir "$T/in" "$T/out"
	cd "$T/in"
	$PY -c "
import numpy as np
np.save('big.npy', np.ones((30, 30), np.float32))
np.save('d1.npy', np.ones(5, np.float32))
np.save('d3.npy', np.ones((2, 2, 2), np.float32))
np.save('int.npy', np.ones((3, 3), np.int32))
np.save('over.npy', np.array([[1, 0], [0, 70000]], np.float32))
import scipy.sparse as sp
sp.save_npz('over.npz', sp.csr_matrix(np.array([[1, 0], [0, 1e10]])))
sp.save_npz('csc.npz', sp.random(5, 5, density=0.5, format='csc', random_state=0))
sp.save_npz('dup.npz', sp.coo_matrix(([1., 2.], ([0, 0], [1, 1])), shape=(2, 2)))"
	head -c 300 big.npy > truncated.npy
	printf 'not a zip' > notzip.npz
	printf '0 1\n' > w.dat
	printf '%%%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1.0\n' > range.mtx
	printf '%%%%MatrixMarket matrix coordinate real general\n3 3 1\n3 2 -7e4\n' > over.mtx
	mkdir dir.npy
	check() { # INPUT PATTERN
		run "$BIN/$C" "$1" -o "$T/out/x.npz" --stats
		assert_error 1 $C "$2"
	}
	check missing.npy "^macko-compress: error: missing.npy: cannot open: No such file or directory$"
	check dir.npy "dir.npy: is a directory"
	check truncated.npy "truncated.npy: truncated: header claims 3600 bytes of data, file holds 172"
	check d1.npy "d1.npy: expected a 2-d matrix, found 1 dimensions"
	check d3.npy "d3.npy: expected a 2-d matrix, found 3 dimensions"
	check int.npy "int.npy: expected dtype f2, f4 or f8, found i4"
	check over.npy "over.npy: element 3 \(70000\) overflows f2"
	# a sparse input's values past fp16's range are refused, as a dense one's
	check over.npz "over.npz: the value at row 1, column 1 \(1e\+10\) overflows f2"
	check over.mtx "over.mtx: the value at row 2, column 1 \(-70000\) overflows f2"
	check notzip.npz "notzip.npz: .*not a zip file"
	check csc.npz "csc.npz: format is 'csc'; only csr and coo are supported"
	check dup.npz "dup.npz: row 0 repeats column 1"
	check range.mtx "range.mtx:3"
	# the suffix says the format; the message lists every one macko-compress reads
	check w.dat "^macko-compress: error: w.dat: unknown matrix format \(expected .npy, .npz, .mtx, .csv, .tsv, .txt, .el, .edges or .indptr\)$"
	assert_only_files "$T/out"
}

@test "bad MACKO files: one line naming the file and the problem, exit 1, no output left" {
	mkdir "$T/in" "$T/out"
	$PY -c "
import numpy as np
a = np.zeros((4, 40), np.float16)
a[0, 30:] = 1; a[1, 3] = 2; a[3, ::3] = -1
np.save('$T/a.npy', a)"
	"$BIN/$C" -q "$T/a.npy" -o "$T/in/good.npz"
	macko_variants "$T/in/good.npz" "$T/in"
	cd "$T/in"
	check() { # FILE PATTERN: the same error whatever the program is asked to do
		run "$BIN/$C" "$1" --stats
		assert_error 1 $C "^macko-compress: error: $1: $2"
		run "$BIN/$C" --decompress "$1" -o "$T/out/x.npy"
		assert_error 1 $C "^macko-compress: error: $1: $2"
		run "$BIN/$C" "$1" --deflate -o "$T/out/x.npz"
		assert_error 1 $C "^macko-compress: error: $1: $2"
	}
	check no-deltas.npz "missing array 'deltas'"
	check no-shape.npz "missing array 'shape'"
	check f4-values.npz "array 'values' must be 1-d f2, found 1-d f4"
	check decreasing.npz "row 1: row_indices decrease"
	check past-values.npz "values has [0-9]+ entries for the [0-9]+ elements row_indices holds \(expected a multiple of 8, at least as many\)"
	check short-values.npz "values has 24 entries for the 26 elements row_indices holds"
	check short-deltas.npz "deltas has 12 bytes for 32 values \(expected half as many\)"
	check past-column.npz "row 0: element 10 falls in column 54 of 40"
	check short-shape.npz "row_indices has 5 entries, expected rows \+ 1 = 4"
	check float-shape.npz "array 'shape' must hold two integers"
	head -c 300 good.npz > truncated.npz
	check truncated.npz ".*truncated"
	# a SciPy matrix is not MACKO for --decompress
	run "$BIN/$C" --decompress "$REPO/data/karate.mtx" -o "$T/out/x.npy"
	assert_error 1 $C "karate.mtx"
	assert_only_files "$T/out"
}

@test "an output folder that does not exist; an existing output is replaced only on success" {
	random_npy "$T/a.npy" 5 5 0.5
	run "$BIN/$C" "$T/a.npy" -o "$T/no/such/dir/a.npz"
	assert_error 1 $C "no/such/dir/a.npz.*No such file or directory"
	[ ! -e "$T/no" ]
	"$BIN/$C" -q "$T/a.npy" -o "$T/a.npz"
	run "$BIN/$C" --decompress "$T/a.npz" -o "$T/nothere/b.npy"
	assert_error 1 $C "nothere/b.npy.*No such file or directory"
	printf 'old' > "$T/x.npz"
	printf 'junk' > "$T/junk.npy"
	run "$BIN/$C" "$T/junk.npy" -o "$T/x.npz"
	assert_error 1 $C "junk.npy"
	[ "$(cat "$T/x.npz")" = old ]
	"$BIN/$C" -q "$T/a.npy" -o "$T/x.npz"
	cmp "$T/a.npz" "$T/x.npz"
	assert_only_files "$T" a.npy a.npz junk.npy x.npz
}

@test "--random makes a seeded matrix of the asked density; --seed changes it" {
	"$BIN/macko-compress" --random 300x700 --density 0.25 -o "$T/a.npz"
	"$BIN/macko-compress" --random 300x700 --density 0.25 --seed 1 -o "$T/b.npz"
	SPKIT_THREADS=1 "$BIN/macko-compress" --random 300x700 --density 0.25 -o "$T/c.npz"
	"$BIN/macko-compress" --random 300x700 --density 0.25 --seed 2 -o "$T/d.npz"
	cmp "$T/a.npz" "$T/b.npz"
	cmp "$T/a.npz" "$T/c.npz"
	! cmp -s "$T/a.npz" "$T/d.npz"
	"$BIN/macko-compress" -q --decompress "$T/a.npz" -o "$T/a.npy"
	$PY -c "
import numpy as np
a = np.load('$T/a.npy')
assert a.shape == (300, 700) and a.dtype == np.float16, (a.shape, a.dtype)
d = (a != 0).mean()
assert abs(d - 0.25) < 0.01, d
nz = np.abs(a[a != 0].astype(np.float64))
assert nz.min() >= 1 / 64 - 1e-3 and nz.max() <= 1, (nz.min(), nz.max())
assert (a < 0).any() and (a > 0).any()"
	run "$BIN/macko-compress" --random 40x50 --stats
	[ "$status" -eq 0 ]
	[[ $output == *"rows               40"* ]]
	[[ $output == *"cols               50"* ]]
}

@test "--random usage errors" {
	run "$BIN/macko-compress" --random 10 -o "$T/x.npz"
	assert_error 2 macko-compress "--random: '10' is not RxC"
	run "$BIN/macko-compress" --random 0x10 -o "$T/x.npz"
	assert_error 2 macko-compress "--random"
	run "$BIN/macko-compress" a.npy --random 10x10 -o "$T/x.npz"
	assert_error 2 macko-compress "give INPUT or --random, not both"
	run "$BIN/macko-compress" a.npy --seed 3 -o "$T/x.npz"
	assert_error 2 macko-compress "--seed goes with --random"
	run "$BIN/macko-compress" --random 10x10 --threshold 0.5 -o "$T/x.npz"
	assert_error 2 macko-compress "--random makes a new matrix"
	assert_only_files "$T"
}
