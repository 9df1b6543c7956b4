#!/usr/bin/env bash
# Runs each libFuzzer target for FUZZ_SECONDS (default 300) on a copy of its
# seed corpus (tests/fuzz/corpus/NAME for build/.../fuzz_NAME), so the
# committed seeds never grow. Crash, leak and timeout inputs are kept in
# build/fuzz-artifacts/ and the run fails. Arguments: the fuzz binaries.
set -u
here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-300}
artifacts=$here/../../build/fuzz-artifacts
mkdir -p "$artifacts"
status=0
for bin in "$@"; do
	name=$(basename "$bin")
	seeds=$here/corpus/${name#fuzz_}
	work=$(mktemp -d)
	[ -d "$seeds" ] && cp -r "$seeds/." "$work/"
	echo "# $name: $seconds s"
	if "$bin" -max_total_time="$seconds" -timeout=10 -artifact_prefix="$artifacts/$name-" \
		"$work" >"$work.log" 2>&1; then
		echo "ok - $name ($(grep -o 'Done [0-9]* runs' "$work.log"))"
	else
		echo "not ok - $name: see $artifacts"
		grep -E 'ERROR|SUMMARY' "$work.log" | head -5
		status=1
	fi
	rm -rf "$work" "$work.log"
done
exit $status
