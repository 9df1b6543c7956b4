#!/usr/bin/env bash
# Checks the Debian packages spkit builds and tests with. As root, installs
# what is missing; otherwise prints the one apt-get line needed and fails.
#   scripts/deps.sh            check (install as root)
#   scripts/deps.sh --list     print the package names
set -u
packages=(
	gcc make libc6-dev
	libyaml-dev libcsv-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libonnx-dev
	libcmocka-dev bats groff-base
	python3-numpy python3-scipy python3-onnx
	gnuplot-nox
)
if [ "${1:-}" = --list ]; then
	echo "${packages[@]}"
	exit 0
fi
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 && exit 0
	echo "deps: apt-get failed" >&2
	exit 1
fi
echo "deps: missing packages; install them with:" >&2
echo "  sudo apt-get install -y ${missing[*]}" >&2
exit 1
