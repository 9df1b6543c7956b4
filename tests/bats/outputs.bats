#!/usr/bin/env bats
# Where an output goes when it is not a plain new file (lib/core/outfile.h):
# special files are written in place and never replaced by a regular file,
# a link to a file stays a link, and nothing half-written is ever seen.
load helpers

G=maxk-genmeta
SMALL=powerlaw:nodes=1000,edges=8000

@test "-o a character device writes into it and leaves it a device" {
	mknod "$T/null" c 1 3 2>/dev/null || skip "mknod needs root"
	"$BIN/$G" -q --synthetic $SMALL --graph-out "$T/null"
	[ -c "$T/null" ]
	assert_only_files "$T" null
}

@test "-o a FIFO with no reader: a one-line error at once, exit 1, the FIFO kept" {
	mkfifo "$T/fifo"
	run timeout 20 "$BIN/$G" -q --synthetic $SMALL --graph-out "$T/fifo"
	assert_error 1 $G "fifo: is a FIFO with no reader"
	[ -p "$T/fifo" ]
}

@test "-o a FIFO with a reader streams the file through it" {
	"$BIN/$G" -q --synthetic $SMALL --graph-out "$T/g.npz"
	"$BIN/$G" -q "$T/g.npz" -o "$T/want.warp4"
	mkfifo "$T/fifo"
	timeout 60 cat "$T/fifo" > "$T/got.warp4" &
	reader=$!
	sleep 0.2
	"$BIN/$G" -q "$T/g.npz" -o "$T/fifo"
	wait "$reader"
	[ -p "$T/fifo" ]
	cmp "$T/got.warp4" "$T/want.warp4"
}

@test "an .npz into a FIFO: a one-line error (it needs seeks), exit 1" {
	mkfifo "$T/fifo"
	timeout 60 cat "$T/fifo" > /dev/null &
	reader=$!
	sleep 0.2
	run "$BIN/$G" -q --synthetic $SMALL --graph-out "$T/fifo"
	wait "$reader"
	assert_error 1 $G "fifo: an .npz is written with seeks, so not into a pipe or FIFO"
}

@test "-o a link to a file replaces the file and keeps the link" {
	echo old > "$T/real.npz"
	ln -s "$T/real.npz" "$T/link.npz"
	"$BIN/$G" -q --synthetic $SMALL --graph-out "$T/link.npz"
	[ -L "$T/link.npz" ]
	[ "$(stat -c %s "$T/real.npz")" -gt 100 ]
	assert_only_files "$T" link.npz real.npz
}

@test "a full standard output is a one-line error, exit 1, not text lost with exit 0" {
	[ -w /dev/full ] || skip "no /dev/full"
	# statistics (exit 0 before), a report, the help
	run sh -c "'$BIN/$G' '$REPO/data/karate.mtx' >/dev/full"
	assert_error 1 $G ": error: standard output: write failed: No space left on device$"
	run sh -c "'$BIN/macko-compress' --stats '$REPO/data/karate.mtx' >/dev/full"
	assert_error 1 macko-compress ": error: standard output: write failed: No space left on device$"
	run sh -c "'$BIN/ksmm-tune' --help >/dev/full"
	assert_error 1 ksmm-tune ": error: standard output: write failed"
	# nothing on standard output, nothing to report
	run sh -c "'$BIN/$G' -q '$REPO/data/karate.mtx' >/dev/full"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
