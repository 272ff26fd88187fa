#!/bin/sh
# schedule --sensitivity on this machine (probe --write-box --split 2: each core a device,
# and both as one) against the best single precision: per model, its sensitivities in bf16 and int8 on its reference input, a
# schedule whose measured error stays within 1e-2 (max), run as scheduled; beside it, in
# the same rounds, float32, bf16 and int8 each on one CPU device at 2 threads, and the
# fastest of them whose error fits the same budget.  Medians of three interleaved rounds
# of medians of 11; the ratio is the single precision's time over the schedule's.  The
# profile is one quick probe of the box, measured first.  Besides the issue's three, two of
# the zoo where a class's speed-up would misprice a node (regnet's grouped convolutions,
# efficientnet's squeeze-and-excite); models may be named instead.  Speed is never
# pass/fail here.
# usage: sched_precision.sh HETEROOPT MODELS_DIR [MODEL...]
set -eu
HO=$1 M=$2
shift 2
[ $# -gt 0 ] || set -- resnet50 mobilenet_v2 vit_b_16 regnet_y_400mf efficientnet_b0
MODELS=$*
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
BUDGET=1e-2
BOX=$T/box.json
"$HO" probe --write-box --split 2 -o "$BOX" >/dev/null
"$HO" probe --box "$BOX" --quick -q -o "$T/prof.json" >/dev/null
have=$(/usr/bin/python3 -c "import json,sys; print(' '.join(sorted(json.load(open(sys.argv[1]))['devices']['cpu0'].get('precision_speedup', {}))))" "$T/prof.json")
[ -n "$have" ] || { echo "sched precision: this CPU computes neither bf16 nor int8: skipped"; exit 0; }
med() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
err() { # err REF_DIR DIR: the largest difference over the largest float32 magnitude
	/usr/bin/python3 -c "import numpy as np, glob, os, sys
e = 0
for f in glob.glob(sys.argv[1] + '/*.npy'):
    a, b = np.load(f), np.load(os.path.join(sys.argv[2], os.path.basename(f)))
    if a.dtype.kind == 'f' and a.size:
        e = max(e, float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)))
print(f'{e:.2e}')" "$1" "$2"
}
for m in $MODELS; do
	[ -f "$M/$m.onnx" ] || { echo "sched precision: $m missing, skipped"; continue; }
	X=input=$M/$m.ref_in.npy
	set --
	for q in $have; do
		"$HO" run "$M/$m.onnx" --input "$X" --sensitivity "$q" -o "$T/$m.$q" >/dev/null
		set -- "$@" --sensitivity "$T/$m.$q/sensitivity.json"
	done
	"$HO" schedule "$M/$m.onnx" --box "$BOX" --profile "$T/prof.json" --input "$X" "$@" \
		--accuracy $BUDGET --quiet -o "$T/$m.s.json" | grep "^precision:"
	for _ in 1 2 3; do
		rm -rf "$T/o"*
		line=$("$HO" run "$M/$m.onnx" --input "$X" --schedule "$T/$m.s.json" -o "$T/os" --repeat 11 | med)
		for q in fp32 $have; do
			line="$line $("$HO" run "$M/$m.onnx" --input "$X" --precision $q --threads 2 -o "$T/o$q" --repeat 11 | med)"
		done
		echo "$line"
	done >"$T/rounds"
	errs="$(err "$T/ofp32" "$T/os")"
	for q in $have; do errs="$errs $(err "$T/ofp32" "$T/o$q")"; done
	echo "$errs" | cat "$T/rounds" - | awk -v m="$m" -v qs="fp32 $have" -v budget=$BUDGET '
		NR <= 3 { for (i = 1; i <= NF; i++) t[i, NR] = $i; n = NF; next }
		{ e[1] = $1; e[2] = 0; for (i = 2; i <= NF; i++) e[i + 1] = $i }
		END {
			split(qs, name, " ")
			for (i = 1; i <= n; i++) { # the median of three
				a = t[i, 1]; b = t[i, 2]; c = t[i, 3]
				med[i] = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b))
			}
			best = 0
			for (i = 2; i <= n; i++)
				if (e[i] <= budget && (!best || med[i] < med[best])) best = i
			printf "sched precision %-14s scheduled %7.2f ms (error %s)", m, med[1], e[1]
			for (i = 2; i <= n; i++) printf ", %s %7.2f ms (%s)", name[i - 1], med[i], e[i]
			printf ": best single within %s %s, its time over the schedule%s %.2f\n", budget, name[best - 1], "\047s", med[best] / med[1]
		}'
done
