#!/usr/bin/env bash
# Pictures of spkit's CSVs with gnuplot: plot.sh KIND OUT.svg|OUT.png IN.csv...
# (plot.sh --help says more; the man pages name the kind for each program).
# The data each picture needs is prepared by prepare.awk and drawn by
# KIND's .gp script beside this file; the output appears only when complete.
set -euo pipefail
prog=plot.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	cat <<'USAGE'
Usage: plot.sh KIND OUT.svg|OUT.png IN.csv... [OPTION]...
Draw spkit's CSVs with gnuplot, as SVG or PNG (by OUT's extension).

Kinds:
  macko-density   macko-spmv bench CSVs: MACKO's speed-up over cuBLAS and its
                  bandwidth against density, a line per matrix shape
  macko-vectors   the same against the vector count, a line per shape and
                  density
  roofline        graph-partition --format csv: each operator at its intensity
                  and attained FLOP/s, by bottleneck, under the GPU's roofs
  train           maxk-train --log files: loss, and validation and test scores
                  per epoch, a colour per run (log-maxk32.csv, log-relu.csv)
  sample          kernel-sample CSVs: forward and backward time against a shape
                  column, a colour per operator
  ksmm            ksmm-tune bench CSVs: speed-up over the best dense baseline, a
                  cluster of bars per pattern, a bar per data type and layout

Options:
  --hardware FILE|NAME  roofline: the GPU (a configs/hardware YAML file or its
                        name, h200, h100, a100; default h200), as given to
                        graph-partition
  --dtype T             roofline: fp32 (default), tf32, fp16, bf16 or int8, as
                        given to graph-partition
  --column NAME         sample: the shape column on the x axis (default: the
                        last one before F_dur(us))
  --metric NAME         train: the score's name on the axis (default score)
  --title TEXT          the picture's title
  --size WxH            pixels (default 1200x520 for two panels, 900x600)
  -h, --help            show this help and exit

Example:
  graph-partition resnet18.onnx -f csv -o r.csv && plot.sh roofline r.svg r.csv
USAGE
}

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

usage_error() {
	echo "$prog: error: $* (try '$prog --help')" >&2
	exit 2
}

hardware=h200 dtype=fp32 column="" metric=score title="" size=""
args=() # KIND OUT IN...; options may come anywhere before a --
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--hardware | --dtype | --column | --metric | --title | --size)
		[ $# -ge 2 ] || usage_error "option '$1' needs a value"
		[ -n "$2" ] || usage_error "$1: the value is empty"
		case $1 in
		--hardware) hardware=$2 ;;
		--dtype) dtype=$2 ;;
		--column) column=$2 ;;
		--metric) metric=$2 ;;
		--title) title=$2 ;;
		--size) size=$2 ;;
		esac
		shift 2 ;;
	--) shift; args+=("$@"); break ;;
	-?*) usage_error "unknown option '$1'" ;;
	*) args+=("$1"); shift ;;
	esac
done
set -- ${args[@]+"${args[@]}"}
[ $# -ge 1 ] || usage_error "no KIND given"
kind=$1
case $kind in
macko-density | macko-vectors) script=macko.gp ;;
roofline | train | sample | ksmm) script=$kind.gp ;;
*) usage_error "KIND '$kind' is not one of macko-density, macko-vectors, roofline, train, sample, ksmm" ;;
esac
[ $# -ge 2 ] || usage_error "no OUT given"
out=$2
shift 2
[ $# -ge 1 ] || usage_error "no IN.csv given"
case $out in
*.svg | *.png) ;;
*) usage_error "OUT '$out' must end in .svg or .png" ;;
esac
case $dtype in
fp32 | tf32 | fp16 | bf16 | int8) ;;
*) usage_error "--dtype: '$dtype' is not one of fp32, tf32, fp16, bf16, int8" ;;
esac
if [ -n "$size" ]; then
	[[ $size =~ ^([1-9][0-9]{1,3})x([1-9][0-9]{1,3})$ ]] || usage_error "--size: '$size' is not WxH (like 1200x520)"
fi
for f in "$@"; do
	[ -f "$f" ] && [ -r "$f" ] || die "$f: cannot read it"
done
command -v gnuplot >/dev/null || die "gnuplot is not installed (Debian: apt-get install gnuplot-nox)"
outdir=$(dirname -- "$out")
[ -d "$outdir" ] && [ -w "$outdir" ] || die "$out: cannot write in folder '$outdir'"

work=$(mktemp -d "${TMPDIR:-/tmp}/spkit-plot.XXXXXX")
tmp="$outdir/.${out##*/}.$$.${out##*.}" # the same extension: it picks the terminal
trap 'rm -rf "$work"; rm -f "$tmp"' EXIT

# the hardware file: a path, or a name in the source tree's or the installed configs
hw_file() {
	local n=$1 d
	if [ -f "$n" ]; then echo "$n"; return; fi
	for d in "$here/../../configs/hardware" "$here/../../hardware" "$here/../hardware"; do
		if [ -f "$d/$n.yaml" ]; then echo "$d/$n.yaml"; return; fi
	done
	die "--hardware: '$n' is neither a file nor a name in configs/hardware"
}

vars=$(awk -v kind="$kind" -v column="$column" -v data="$work/data" -f "$here/prepare.awk" "$@" 2>"$work/err") ||
	die "$(head -n 1 "$work/err")"

label() { # TEXT, quoted for gnuplot
	local s=${1//\\/\\\\}
	echo "\"${s//\"/\\\"}\""
}
two_panels=0
case $kind in
macko-density)
	heading=${title:-MACKO SpMV against cuBLAS, by density}
	vars+="xlabel=\"density\";logx=0;"
	two_panels=1 ;;
macko-vectors)
	heading=${title:-MACKO SpMV against cuBLAS, by vector count}
	vars+="xlabel=\"vectors\";logx=1;"
	two_panels=1 ;;
roofline)
	file=$(hw_file "$hardware")
	# bandwidth (GB/s), the matrix peak at the dtype and the other ops' (TFLOP/s), the name
	read -r bw peak vector name < <(awk -v dt="$dtype" '
		/^name:/ { sub(/^name:[ \t]*/, ""); name = $0 }
		/^memory_bandwidth_gbs:/ { bw = $2 }
		/^vector_tflops:/ { vec = $2 }
		/^peak_tflops:/ { inpeak = 1; next }
		inpeak && $1 == dt ":" { peak = $2 }
		inpeak && /^[^ \t]/ { inpeak = 0 }
		/^[ \t]+fp32:/ && inpeak { fp32 = $2 }
		END { if (vec == "") vec = fp32; gsub(/[ \t]+/, "_", name); print bw, peak, vec, name }' "$file")
	[ -n "$peak" ] && [ -n "$bw" ] || die "$file: no memory_bandwidth_gbs or peak_tflops $dtype"
	heading=${title:-Roofline}
	vars+="bw=$bw*1e9;peak=$peak*1e12;vector=$vector*1e12;dtype=\"$dtype\";hw=$(label "${name//_/ }");"
	vars+="xmin=(xlo<0.01?xlo:0.01)/2;xmax=(xhi>4*peak/bw?xhi:4*peak/bw)*3;ymin=ylo/3;ymax=peak*3;" ;;
train)
	heading=${title:-Training curves}
	vars+="metric=$(label "$metric");"
	two_panels=1 ;;
sample)
	heading=${title:-kernel-sample: operator times} ;;
ksmm)
	heading=${title:-ksmm-tune: speed-up per pattern} ;;
esac
if [ -z "$size" ]; then
	if [ $two_panels = 1 ]; then size=1200x520; else size=900x600; fi
	if [ "$kind" = ksmm ]; then
		npats=$(sed -n 's/.*npats=\([0-9]*\);.*/\1/p' <<< "$vars")
		w=$((200 + 70 * npats))
		size=$((w < 900 ? 900 : w > 4000 ? 4000 : w))x600
	fi
fi
vars+="width=${size%x*};height=${size#*x};heading=$(label "$heading");"
vars+="out=$(label "$tmp");data=$(label "$work/data");dir=$(label "$here/");"
gnuplot -e "$vars" "$here/$script" 2>"$work/err" || die "gnuplot: $(grep -v '^$' "$work/err" | tail -n 1)"
[ -s "$tmp" ] || die "gnuplot wrote nothing"
mv -f "$tmp" "$out"
