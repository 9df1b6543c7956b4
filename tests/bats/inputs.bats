#!/usr/bin/env bats
# Inputs that are not plain files (lib/core/infile.h, lib/core/textscan.h):
# nothing blocks on a FIFO without a writer, readers that seek refuse
# streams, and text readers stop at binary data and endless lines.
load helpers

G=maxk-genmeta

@test "a FIFO as an .npz (a reader that seeks): refused at once, one line, exit 1" {
	mkfifo "$T/g.npz"
	run timeout 20 "$BIN/$G" "$T/g.npz" -o "$T/x.warp4"
	assert_error 1 $G "g.npz: is a FIFO; this input must be a regular file"
	assert_only_files "$T" g.npz
}

@test "a FIFO with no writer as an edge list: read as empty, not waited on" {
	mkfifo "$T/g.csv"
	run timeout 20 "$BIN/$G" "$T/g.csv" -o "$T/x.warp4"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == "$G: error: "*"g.csv"* ]]
	assert_only_files "$T" g.csv
}

@test "an edge list through a FIFO with a writer is read like the file" {
	printf '0,1\n1,2\n2,0\n' > "$T/g.csv"
	"$BIN/$G" -q "$T/g.csv" -o "$T/want.warp4"
	mkfifo "$T/f.csv"
	# The test holds the FIFO open (both ends) until the program has opened
	# it, so the program never finds it without a writer, whichever of the
	# two starts first: a FIFO with no writer reads as empty (above).
	exec 7<>"$T/f.csv"
	timeout 60 "$BIN/$G" -q "$T/f.csv" -o "$T/got.warp4" 7<&- &
	reader=$!
	for _ in $(seq 600); do
		# the program is timeout's child
		ls -l /proc/$(pgrep -P $reader)/fd 2>/dev/null | grep -q 'f\.csv$' && break
		sleep 0.05
	done
	cat "$T/g.csv" > "$T/f.csv"
	exec 7<&-
	wait $reader
	cmp "$T/got.warp4" "$T/want.warp4"
}

@test "/dev/zero as an edge list or a Matrix Market file: a NUL byte, one line, exit 1" {
	ln -s /dev/zero "$T/z.csv"
	run timeout 20 "$BIN/$G" "$T/z.csv" -o "$T/x.warp4"
	assert_error 1 $G "z.csv:1: a NUL byte at byte 0: not a text file"
	ln -s /dev/zero "$T/z.mtx"
	run timeout 20 "$BIN/$G" "$T/z.mtx" -o "$T/x.warp4"
	assert_error 1 $G "z.mtx:1: a NUL byte at byte 0: not a text file"
	assert_only_files "$T" z.csv z.mtx
}

@test "an endless line (no newline, no NUL) stops at the documented cap" {
	mkfifo "$T/e.csv"
	(timeout 60 sh -c "yes 1 | tr -d '\\n'" > "$T/e.csv" 2>/dev/null &)
	run timeout 60 "$BIN/$G" "$T/e.csv" -o "$T/x.warp4"
	assert_error 1 $G "e.csv:1: line longer than 16 MiB: not a text file of lines"
}

@test "a binary file named .csv: refused at its first NUL, naming the line" {
	printf '0,1\n1,2\n\0\0\0' > "$T/b.csv"
	run "$BIN/$G" "$T/b.csv" -o "$T/x.warp4"
	assert_error 1 $G "b.csv:3: a NUL byte at byte 8: not a text file"
}

# Sizes a small file declares are checked against the memory the process may
# have (lib/core/memory.h) before anything is allocated; SPKIT_MEMORY_LIMIT
# stands in for a cgroup or ulimit so that the test means the same anywhere.
@test "a 77-byte .mtx declaring 2^27 rows under a 1 GiB limit: how much it needs, at once" {
	printf '%%%%MatrixMarket matrix coordinate pattern general\n134217728 134217728 1\n1 1\n' > "$T/big.mtx"
	SPKIT_MEMORY_LIMIT=1073741824 run timeout 20 "$BIN/$G" "$T/big.mtx" -o "$T/x.warp4"
	assert_error 1 $G "big.mtx: 134217728 x 134217728 with 1 entries needs 2.0 GiB of memory; this process may use 1.0 GiB"
	assert_only_files "$T" big.mtx
}

@test "an edge list naming node 2^27 and a COO .npz of 2^27 rows: the same check" {
	printf '0,134217727\n' > "$T/big.csv"
	SPKIT_MEMORY_LIMIT=1073741824 run timeout 20 "$BIN/$G" "$T/big.csv" -o "$T/x.warp4"
	assert_error 1 $G "big.csv: 134217728 x 134217728 with 1 entries needs 2.0 GiB of memory"
	/usr/bin/python3 -c "
import numpy as np
np.savez('$T/coo.npz', format=np.array(b'coo'), shape=np.array([2**27, 2**27]),
         row=np.array([0], dtype=np.int32), col=np.array([5], dtype=np.int32),
         data=np.array([1.0], dtype=np.float32))"
	SPKIT_MEMORY_LIMIT=536870912 run timeout 20 "$BIN/$G" "$T/coo.npz" -o "$T/x.warp4"
	assert_error 1 $G "coo.npz: a row pointer array of 134217728 rows needs 1.0 GiB of memory; this process may use 512.0 MiB"
	assert_only_files "$T" big.csv coo.npz
}

@test "an .npz with two members of one name is refused (NumPy reads the last, a lookup the first)" {
	"$BIN/$G" -q --synthetic powerlaw:nodes=100,edges=400 --graph-out "$T/g.npz"
	/usr/bin/python3 - "$T" <<'PY'
import sys, warnings, zipfile
import numpy as np
warnings.simplefilter("ignore")
with zipfile.ZipFile(f"{sys.argv[1]}/g.npz") as src, zipfile.ZipFile(f"{sys.argv[1]}/dup.npz", "w") as dst:
    for info in src.infolist():
        dst.writestr(info.filename, src.read(info.filename))
    np.save(f"{sys.argv[1]}/other.npy", np.zeros(101, dtype=np.int32))
    dst.write(f"{sys.argv[1]}/other.npy", "indptr.npy")
PY
	run "$BIN/$G" "$T/dup.npz" -o "$T/x.warp4"
	assert_error 1 $G "dup.npz: two members named 'indptr.npy' \(NumPy would read the last\)"
	[ ! -e "$T/x.warp4" ]
}
