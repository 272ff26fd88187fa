#!/bin/sh
# heteroopt's OpenMP wait policy (user/cli/main.c) on an idle machine and
# beside a competing load (one busy loop per core): the median of 11 runs for
# each policy, three interleaved rounds, and the ratio of each to libgomp's
# default (GOMP_SPINCOUNT=300000).  The load is this script's own and ends
# with it.  usage: busy.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
T=$(mktemp -d)
hogs=""
cleanup() { [ -z "$hogs" ] || kill $hogs 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(5).standard_normal((1, 3, 224, 224), dtype=np.float32))" "$T/x.npy"
median() { # POLICY-ENV MODEL: one process, the median of 11 warm runs
	env $1 "$HO" run "$M/$2.onnx" --input "input=$T/x.npy" -o "$T/out" --repeat 11 |
		sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}
for load in idle busy; do
	if [ $load = busy ]; then
		for _ in $(seq "$(nproc)"); do
			sh -c 'while :; do :; done' &
			hogs="$hogs $!"
		done
	fi
	for m in resnet18 mobilenet_v2; do
		for r in 1 2 3; do
			echo "$(median GOMP_SPINCOUNT=300000 $m) $(median OMP_WAIT_POLICY=passive $m) $(median HETEROOPT_BENCH=1 $m)"
		done | awk -v m=$m -v l=$load '
		function med(a, b, c) { return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b)) }
		{ for (i = 1; i <= 3; i++) v[NR, i] = $i }
		END {
			d = med(v[1, 1], v[2, 1], v[3, 1]); p = med(v[1, 2], v[2, 2], v[3, 2]); h = med(v[1, 3], v[2, 3], v[3, 3])
			printf "busy     %-12s %-4s libgomp default %7.2f ms, passive %7.2f ms (ratio %.2f), heteroopt'"'"'s %7.2f ms (ratio %.2f)\n", m, l, d, p, p / d, h, h / d
		}'
	done
	[ -z "$hogs" ] || kill $hogs
	hogs=""
done
