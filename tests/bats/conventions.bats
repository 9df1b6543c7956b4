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

@test "a file name with a newline or an escape sequence stays on the error's one line, quoted" {
	bad=$(printf 'bad\nname\033[31m')
	for p in maxk-genmeta graph-partition macko-compress; do
		case $p in
		graph-partition) run "$BIN/$p" "$T/$bad.onnx" ;;
		*) run "$BIN/$p" "$T/$bad.npz" -o "$T/out" ;;
		esac
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ] || { echo "$p: ${#lines[@]} lines: $output"; return 1; }
		[[ ${lines[0]} == *'bad\nname\x1b[31m'* ]] || { echo "$p: $output"; return 1; }
		[[ $output != *$'\033'* ]]
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
