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
	cat "$T/g.csv" > "$T/f.csv" &
	"$BIN/$G" -q "$T/f.csv" -o "$T/got.warp4"
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
	(yes 1 | tr -d '\n' > "$T/e.csv" 2>/dev/null &)
	run timeout 60 "$BIN/$G" "$T/e.csv" -o "$T/x.warp4"
	assert_error 1 $G "e.csv:1: line longer than 16 MiB: not a text file of lines"
}

@test "a binary file named .csv: refused at its first NUL, naming the line" {
	printf '0,1\n1,2\n\0\0\0' > "$T/b.csv"
	run "$BIN/$G" "$T/b.csv" -o "$T/x.warp4"
	assert_error 1 $G "b.csv:3: a NUL byte at byte 8: not a text file"
}
