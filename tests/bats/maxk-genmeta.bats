#!/usr/bin/env bats
# maxk-genmeta: every option and every error path.
load helpers

G=maxk-genmeta

small_graph() { # a small power-law graph with a few empty rows, as .npz
	"$BIN/$G" -q --synthetic powerlaw:nodes=500,edges=9000,sigma=1.5,seed=3 --graph-out "$T/g.npz"
}

@test "--help lists every option and an example; --version" {
	run "$BIN/$G" --help
	[ "$status" -eq 0 ]
	[[ $output == *"Usage: maxk-genmeta"* ]]
	[[ $output == *"Example:"* ]]
	run "$BIN/$G" --version
	[ "$status" -eq 0 ]
	[[ $output =~ ^maxk-genmeta\ \(spkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "records match the original generate_meta.py on a synthetic graph" {
	small_graph
	"$BIN/$G" -q "$T/g.npz" -o "$T/ours.warp4"
	$PY "$REPO/tests/bats/ref/generate_meta.py" "$T/g.npz" "$T/ref.warp4" 64
	cmp "$T/ours.warp4" "$T/ref.warp4"
}

@test "--warp-max-nz 1, 3 and 1000 match the reference" {
	small_graph
	for n in 1 3 1000; do
		"$BIN/$G" -q "$T/g.npz" -w "$n" -o "$T/ours.warp4"
		$PY "$REPO/tests/bats/ref/generate_meta.py" "$T/g.npz" "$T/ref.warp4" "$n"
		cmp "$T/ours.warp4" "$T/ref.warp4"
	done
}

@test "statistics of the karate club graph" {
	run "$BIN/$G" "$REPO/data/karate.mtx" -w 4
	[ "$status" -eq 0 ]
	[[ $output == *"rows              34"* ]]
	[[ $output == *"edges             156"* ]]
	[[ $output == *"max_degree        17"* ]]
	[[ $output == *"empty_rows        0"* ]]
	# records = sum over rows of ceil(degree / 4), computed independently
	want=$($PY -c "
import scipy.io, numpy as np
d = np.diff(scipy.io.mmread('$REPO/data/karate.mtx').tocsr().indptr)
print(int(sum((d + 3) // 4)))")
	[[ $output == *"records           $want"* ]]
}

@test "--json prints one object with the statistics" {
	small_graph
	run "$BIN/$G" "$T/g.npz" --json
	[ "$status" -eq 0 ]
	echo "$output" | $PY -c "
import json, sys
s = json.load(sys.stdin)
assert s['rows'] == 500 and s['edges'] == 9000, s
assert s['warp_max_nz'] == 64 and s['records'] >= 500 - s['empty_rows'], s
assert s['graph'].endswith('g.npz'), s"
}

@test ".mtx, edge list and .npz of one graph give the same records" {
	"$BIN/$G" -q "$REPO/data/karate.mtx" --graph-out "$T/k.npz" -o "$T/a.warp4"
	"$BIN/$G" -q "$T/k.npz" -o "$T/b.warp4"
	"$BIN/$G" -q "$REPO/data/karate.csv" --undirected -o "$T/c.warp4"
	cmp "$T/a.warp4" "$T/b.warp4"
	cmp "$T/a.warp4" "$T/c.warp4"
}

@test "--one-based edge lists" {
	printf '1 2\n2 3\n3 1\n1 3\n' > "$T/e.txt"
	run "$BIN/$G" "$T/e.txt" --one-based
	[ "$status" -eq 0 ]
	[[ $output == *"rows              3"* ]]
	[[ $output == *"edges             4"* ]]
	run "$BIN/$G" "$T/e.txt"
	[[ $output == *"rows              4"* ]]
}

@test "a .npz is read through indptr alone: a corrupt indices member does not matter" {
	small_graph
	$PY - "$T/g.npz" "$T/bad.npz" <<'PY'
import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w') as zout:
    for item in zin.infolist():
        data = zin.read(item.filename)
        if item.filename == 'indices.npy':
            # keep the .npy header (128 bytes), ruin the data
            data = data[:128] + bytes(b ^ 0x5a for b in data[128:])
        zout.writestr(item, data)
PY
	"$BIN/$G" -q "$T/g.npz" -o "$T/a.warp4"
	"$BIN/$G" -q "$T/bad.npz" -o "$T/b.warp4"
	cmp "$T/a.warp4" "$T/b.warp4"
	# converting needs the whole graph, so there the damage is reported
	run "$BIN/$G" "$T/bad.npz" --graph-out "$T/out.npz"
	assert_error 1 $G "bad.npz: row [0-9]+ has column [0-9]+ outside"
	[ ! -e "$T/out.npz" ]
}

@test "SciPy graphs, compressed or not, are read" {
	$PY -c "
import scipy.sparse as sp
m = sp.random(300, 300, density=0.05, format='csr', random_state=1)
sp.save_npz('$T/c.npz', m, compressed=True)
sp.save_npz('$T/u.npz', m, compressed=False)
sp.save_npz('$T/coo.npz', m.tocoo(), compressed=True)"
	"$BIN/$G" -q "$T/c.npz" -o "$T/c.warp4"
	"$BIN/$G" -q "$T/u.npz" -o "$T/u.warp4"
	"$BIN/$G" -q "$T/coo.npz" -o "$T/coo.warp4"
	$PY "$REPO/tests/bats/ref/generate_meta.py" "$T/c.npz" "$T/ref.warp4" 64
	cmp "$T/c.warp4" "$T/ref.warp4"
	cmp "$T/u.warp4" "$T/ref.warp4"
	cmp "$T/coo.warp4" "$T/ref.warp4"
}

@test "--graph-out writes a graph SciPy loads; --compress deflates it" {
	"$BIN/$G" -q --synthetic powerlaw:nodes=2000,edges=40000 --graph-out "$T/u.npz"
	"$BIN/$G" -q --synthetic powerlaw:nodes=2000,edges=40000 --graph-out "$T/c.npz" --compress
	$PY -c "
import scipy.sparse as sp, numpy as np, zipfile
u, c = sp.load_npz('$T/u.npz'), sp.load_npz('$T/c.npz')
assert u.shape == (2000, 2000) and u.nnz == 40000
assert (u != c).nnz == 0
assert u.has_sorted_indices
u.sum_duplicates(); assert u.nnz == 40000, 'repeated neighbours'
assert u.diagonal().sum() == 0, 'self-loops'
z = zipfile.ZipFile('$T/c.npz')
assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist())"
	[ "$(stat -c %s "$T/c.npz")" -lt "$(stat -c %s "$T/u.npz")" ]
}

@test "--synthetic presets have the sizes of H200.md" {
	run "$BIN/$G" --synthetic flickr_like
	[ "$status" -eq 0 ]
	[[ $output == *"rows              89250"* ]]
	[[ $output == *"edges             991155"* ]]
}

@test "--seed and seed= give reproducible graphs; another seed another graph" {
	"$BIN/$G" -q --synthetic powerlaw:nodes=300,edges=3000 --seed 5 --graph-out "$T/a.npz"
	"$BIN/$G" -q --synthetic powerlaw:nodes=300,edges=3000,seed=5 --graph-out "$T/b.npz"
	SPKIT_THREADS=1 "$BIN/$G" -q --synthetic powerlaw:nodes=300,edges=3000,seed=5 --graph-out "$T/c.npz"
	"$BIN/$G" -q --synthetic powerlaw:nodes=300,edges=3000 --seed 6 --graph-out "$T/d.npz"
	cmp "$T/a.npz" "$T/b.npz"
	cmp "$T/a.npz" "$T/c.npz"
	! cmp -s "$T/a.npz" "$T/d.npz"
}

@test "--check accepts matching records and names the first bad one" {
	small_graph
	"$BIN/$G" -q "$T/g.npz" -o "$T/ok.warp4"
	run "$BIN/$G" "$T/g.npz" --check "$T/ok.warp4"
	[ "$status" -eq 0 ]
	run "$BIN/$G" "$T/g.npz" --check "$T/ok.warp4" -w 32
	assert_error 1 $G "ok.warp4: record [0-9]+ has length [0-9]+ .*limit 32"
	head -c -16 "$T/ok.warp4" > "$T/short.warp4"
	run "$BIN/$G" "$T/g.npz" --check "$T/short.warp4"
	assert_error 1 $G "short.warp4: row [0-9]+ is not covered"
	head -c -3 "$T/ok.warp4" > "$T/ragged.warp4"
	run "$BIN/$G" "$T/g.npz" --check "$T/ragged.warp4"
	assert_error 1 $G "ragged.warp4: size [0-9]+ is not a multiple of 16"
	cat "$T/ok.warp4" "$T/ok.warp4" > "$T/long.warp4"
	run "$BIN/$G" "$T/g.npz" --check "$T/long.warp4"
	assert_error 1 $G "long.warp4: [0-9]+ records beyond the last edge"
	$PY -c "
import numpy as np
r = np.fromfile('$T/ok.warp4', dtype=np.int32).reshape(-1, 4)
r[0, 2] = 65
r.tofile('$T/len.warp4')
r = np.fromfile('$T/ok.warp4', dtype=np.int32).reshape(-1, 4)
r[3, 3] = 7
r.tofile('$T/fourth.warp4')"
	run "$BIN/$G" "$T/g.npz" --check "$T/len.warp4"
	assert_error 1 $G "len.warp4: record 0 has length 65"
	run "$BIN/$G" "$T/g.npz" --check "$T/fourth.warp4"
	assert_error 1 $G "fourth.warp4: record 3 has 7 in its fourth field, which is 0"
}

@test "-q prints nothing, -v adds timings" {
	small_graph
	run "$BIN/$G" -q "$T/g.npz"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$BIN/$G" -v "$T/g.npz" -o "$T/x.warp4"
	[[ $output == *"read graph:"* ]]
	[[ $output == *"build and write records:"* ]]
}

@test "the stats print a graph name holding a newline or an escape sequence escaped, on its line" {
	small_graph
	local bad
	bad=$(printf 'g\nname\033[31m')
	cp "$T/g.npz" "$T/$bad.npz"
	run "$BIN/$G" "$T/$bad.npz"
	[ "$status" -eq 0 ]
	[[ $output != *$'\033'* ]]
	[[ ${lines[0]} == "graph             $T/g\\nname\\x1b[31m.npz" ]] || { echo "$output"; return 1; }
	[[ ${lines[1]} == "rows "* ]]
}

@test "usage errors exit 2" {
	run "$BIN/$G"
	assert_error 2 $G "no GRAPH given"
	run "$BIN/$G" a.npz --synthetic flickr_like
	assert_error 2 $G "not both"
	run "$BIN/$G" a.npz b.npz
	assert_error 2 $G "unexpected argument 'b.npz'"
	run "$BIN/$G" --bogus
	assert_error 2 $G "unknown option '--bogus'"
	run "$BIN/$G" a.npz -o
	assert_error 2 $G "needs a value"
	for n in 0 -1 65537 abc; do
		run "$BIN/$G" a.npz -w "$n"
		assert_error 2 $G "--warp-max-nz"
	done
	run "$BIN/$G" a.npz --seed 3
	assert_error 2 $G "--seed goes with --synthetic"
	run "$BIN/$G" a.npz --compress
	assert_error 2 $G "--compress goes with --graph-out"
	run "$BIN/$G" --synthetic nonsense
	assert_error 2 $G "unknown graph 'nonsense'"
	run "$BIN/$G" --synthetic powerlaw:nodes=10,edges=1000
	assert_error 2 $G "do not fit"
	run "$BIN/$G" --synthetic powerlaw:nodes=x
	assert_error 2 $G "nodes=x"
	run "$BIN/$G" --synthetic reddit_like:colour=red
	assert_error 2 $G "unknown key 'colour'"
}

@test "bad inputs: one line naming the file, exit 1, no output left" {
	mkdir "$T/in" "$T/out"
	cd "$T/in"
	run "$BIN/$G" missing.npz -o "$T/out/x.warp4"
	assert_error 1 $G "missing.npz"
	# a folder is a folder of MaxK-GNN graphs (none here)
	run "$BIN/$G" "$T/in" -o "$T/out/x.warp4"
	assert_error 1 $G "in: no MaxK-GNN graph \(NAME.indptr\) in the folder"
	printf 'not a zip' > notzip.npz
	run "$BIN/$G" notzip.npz -o "$T/out/x.warp4"
	assert_error 1 $G "notzip.npz"
	$PY -c "
import numpy as np, scipy.sparse as sp
m = sp.random(50, 50, density=0.1, format='csr', random_state=0)
sp.save_npz('ok.npz', m)
np.savez('noindptr.npz', format=np.array(b'csr'), shape=np.array([50, 50]),
         indices=m.indices, data=m.data)
ip = m.indptr.copy(); ip[10] = ip[11] + 1
np.savez('decreasing.npz', format=np.array(b'csr'), shape=np.array([50, 50]),
         indptr=ip, indices=m.indices, data=m.data)
np.savez('norows.npz', format=np.array(b'csr'), shape=np.array([0, 0]),
         indptr=np.array([0], dtype=np.int32), indices=np.array([], dtype=np.int32),
         data=np.array([], dtype=np.float32))"
	head -c 300 ok.npz > truncated.npz
	run "$BIN/$G" truncated.npz -o "$T/out/x.warp4"
	assert_error 1 $G "truncated.npz"
	run "$BIN/$G" noindptr.npz -o "$T/out/x.warp4"
	assert_error 1 $G "noindptr.npz.*indptr"
	run "$BIN/$G" decreasing.npz -o "$T/out/x.warp4"
	assert_error 1 $G "decreasing.npz.*decreases at row 10"
	run "$BIN/$G" norows.npz -o "$T/out/x.warp4"
	assert_error 1 $G "norows.npz: graph has no rows"
	printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 1\n' > range.mtx
	run "$BIN/$G" range.mtx -o "$T/out/x.warp4"
	assert_error 1 $G "range.mtx:4"
	printf '0,1\n1,x\n' > text.csv
	run "$BIN/$G" text.csv -o "$T/out/x.warp4"
	assert_error 1 $G "text.csv:2"
	run "$BIN/$G" ok.npz -o "$T/no/such/dir/x.warp4"
	assert_error 1 $G "no/such/dir/x.warp4.*No such file or directory"
	# --graph-out is written last: a failed check or records' file leaves it out too
	run "$BIN/$G" ok.npz --graph-out "$T/out/g.npz" -o "$T/no/such/dir/x.warp4"
	assert_error 1 $G "no/such/dir/x.warp4.*No such file or directory"
	printf '0123456789abcdef' > one.warp4
	run "$BIN/$G" ok.npz --graph-out "$T/out/g.npz" --check one.warp4 -o "$T/out/x.warp4"
	assert_error 1 $G "one.warp4: record 0"
	run "$BIN/$G" --synthetic powerlaw:nodes=100,edges=500 --graph-out "$T/out/g.npz" \
		-o "$T/no/such/dir/x.warp4"
	assert_error 1 $G "no/such/dir/x.warp4"
	# and a graph that cannot be saved leaves no records
	run "$BIN/$G" ok.npz --graph-out "$T/no/such/dir/g.npz" -o "$T/out/x.warp4"
	assert_error 1 $G "no/such/dir/g.npz"
	assert_only_files "$T/out"
	assert_only_files "$T/in" ok.npz noindptr.npz decreasing.npz norows.npz notzip.npz \
		truncated.npz range.mtx text.csv one.warp4
}

@test "an existing output is replaced only on success" {
	small_graph
	printf 'old' > "$T/x.warp4"
	printf 'junk' > "$T/junk.npz"
	run "$BIN/$G" "$T/junk.npz" -o "$T/x.warp4"
	[ "$status" -eq 1 ]
	[ "$(cat "$T/x.warp4")" = old ]
	"$BIN/$G" -q "$T/g.npz" -o "$T/x.warp4"
	[ "$(stat -c %s "$T/x.warp4")" -gt 3 ]
}

# Waits until process $1 holds a file open in folder $2 (the output's
# temporary, unnamed or not, shows in /proc as a path in that folder).
wait_writing_in() {
	for _ in $(seq 6000); do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q -- "-> $2/" && return 0
		sleep 0.01
	done
	return 1
}

# Kills a run writing a large graph with signal $1 and wants exit status $2
# (128 + the signal: it died of it, not of an error) and no file left.
killed_while_writing() {
	mkdir "$T/out"
	"$BIN/$G" -q --synthetic powerlaw:nodes=200000,edges=30000000 --graph-out "$T/out/g.npz" &
	pid=$!
	wait_writing_in "$pid" "$T/out"
	kill "-$1" "$pid"
	code=0
	wait "$pid" || code=$?
	[ "$code" -eq "$2" ]
	assert_only_files "$T/out"
}

@test "killed while writing (SIGTERM, as SLURM does): no output and no temporary left" {
	killed_while_writing TERM 143
}

@test "killed by SIGKILL while writing: the unnamed temporary leaves nothing behind" {
	killed_while_writing KILL 137
}

# raw_graph NPZ STEM: the graph as MaxK-GNN stores it, STEM.indptr and
# STEM.indices (int32, ndarray.tofile), as its scripts write graphs/.
raw_graph() {
	$PY -c "
import numpy as np, scipy.sparse as sp
g = sp.load_npz('$1').tocsr()
g.indptr.astype(np.int32).tofile('$2.indptr')
g.indices.astype(np.int32).tofile('$2.indices')"
}

@test "MaxK-GNN's NAME.indptr + NAME.indices: the same records as the .npz; --graph-out reads the indices" {
	small_graph
	raw_graph "$T/g.npz" "$T/g"
	"$BIN/$G" -q "$T/g.npz" -o "$T/want.warp4"
	"$BIN/$G" -q "$T/g.indptr" -o "$T/got.warp4"
	cmp "$T/got.warp4" "$T/want.warp4"
	"$BIN/$G" -q "$T/g.indptr" --graph-out "$T/back.npz"
	$PY -c "
import scipy.sparse as sp
a, b = sp.load_npz('$T/g.npz'), sp.load_npz('$T/back.npz')
assert (a != b).nnz == 0 and a.shape == b.shape"
}

@test "a folder of MaxK-GNN graphs, as generate_meta.py does graphs/: OUTDIR/NAME.warp4 each, stats a line each" {
	mkdir "$T/graphs"
	for s in 1 2 3; do
		"$BIN/$G" -q --synthetic powerlaw:nodes=$((s * 200)),edges=$((s * 3000)),seed=$s --graph-out "$T/g$s.npz"
		raw_graph "$T/g$s.npz" "$T/graphs/g$s"
		$PY "$REPO/tests/bats/ref/generate_meta.py" "$T/g$s.npz" "$T/ref$s.warp4" 32
	done
	echo "not a graph" > "$T/graphs/README"
	run "$BIN/$G" "$T/graphs" -o "$T/w12_nz32_warp_4" -w 32 --json
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	for s in 1 2 3; do
		cmp "$T/w12_nz32_warp_4/g$s.warp4" "$T/ref$s.warp4"
		[[ ${lines[s - 1]} == "{\"graph\": \"$T/graphs/g$s.indptr\", \"rows\": $((s * 200)),"* ]]
	done
	assert_only_files "$T/w12_nz32_warp_4" g1.warp4 g2.warp4 g3.warp4
	# -q: nothing; the folder exists already: written into
	run "$BIN/$G" -q "$T/graphs" -o "$T/w12_nz32_warp_4"
	[ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "folder and raw-graph errors: one line, exit 1 or 2, nothing written" {
	mkdir "$T/empty" "$T/graphs"
	run "$BIN/$G" "$T/empty" -o "$T/out"
	assert_error 1 $G "empty: no MaxK-GNN graph \(NAME.indptr\) in the folder"
	run "$BIN/$G" "$T/graphs"
	assert_error 2 $G "graphs is a folder: give -o OUTDIR for its .warp4 files"
	run "$BIN/$G" "$T/graphs" -o "$T/out" --graph-out "$T/x.npz"
	assert_error 2 $G "--check and --graph-out take one GRAPH, not a folder"
	printf '\0\0\0\0\2\0\0\0\3\0' > "$T/graphs/odd.indptr"
	run "$BIN/$G" "$T/graphs/odd.indptr" -o "$T/x.warp4"
	assert_error 1 $G "odd.indptr: 10 bytes, not a whole number of int32 values"
	printf '\0\0\0\0\3\0\0\0\2\0\0\0' > "$T/graphs/down.indptr"
	run "$BIN/$G" "$T/graphs/down.indptr" -o "$T/x.warp4"
	assert_error 1 $G "down.indptr: indptr decreases at row 1 \(2 after 3\)"
	printf '\0\0\0\0\2\0\0\0' > "$T/graphs/g.indptr"
	printf '\0\0\0\0' > "$T/graphs/g.indices"
	run "$BIN/$G" "$T/graphs/g.indptr" --graph-out "$T/x.npz"
	assert_error 1 $G "g.indices: 1 column indices, but .*g.indptr ends at 2"
	printf '\0\0\0\0\7\0\0\0' > "$T/graphs/g.indices"
	run "$BIN/$G" "$T/graphs/g.indptr" --graph-out "$T/x.npz"
	assert_error 1 $G "g.indices: .*7"
	rm "$T/graphs/g.indices"
	run "$BIN/$G" "$T/graphs/g.indptr" --graph-out "$T/x.npz"
	assert_error 1 $G "g.indices: .*(No such file|does not exist)"
	assert_only_files "$T" empty graphs
}
