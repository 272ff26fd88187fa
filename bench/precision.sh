#!/bin/sh
# run --precision bf16 and int8 against float32 in the same run, one CPU device, 1 and 2
# threads: the median of three interleaved rounds of medians of 11 (speed-up: float32's
# time over the precision's), and the precision's largest difference from float32's
# output over its largest magnitude (int8 calibrated on the run's own input).  Each
# precision only where the CPU has it (bf16: AVX512-BF16 or AMX; int8: VNNI or AMX).
# Speed is never pass/fail here.
# usage: precision.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 -c "import numpy as np, sys; r = np.random.default_rng(5)
np.save(sys.argv[1], r.random((1, 3, 640, 640), dtype=np.float32))" "$T/x640.npy"
precisions=""
for p in bf16 int8; do
	if "$HO" run "$M/mobilenet_v2.onnx" --input "input=$M/mobilenet_v2.ref_in.npy" -o "$T/probe" \
		--repeat 1 --warmup 1 --precision $p >"$T/probe.log" 2>&1; then
		precisions="$precisions $p"
	else
		echo "precision: $p skipped: $(tail -1 "$T/probe.log")"
	fi
done
[ -n "$precisions" ] || exit 0
med() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
for m in resnet50:input:ref mobilenet_v2:input:ref ch_PP-OCRv4_det_infer:x:x640 vit_b_16:input:ref; do
	model=${m%%:*} rest=${m#*:} name=${rest%%:*} x=${rest#*:}
	[ -f "$M/$model.onnx" ] || { echo "precision: $model missing, skipped"; continue; }
	in=$M/$model.ref_in.npy
	[ "$x" = ref ] || in=$T/$x.npy
	for p in $precisions; do
		for t in 1 2; do
			rm -rf "$T/f" "$T/b" # this model's outputs alone
			for _ in 1 2 3; do
				f=$("$HO" run "$M/$model.onnx" --input "$name=$in" -o "$T/f" --repeat 11 \
					--threads $t | med)
				b=$("$HO" run "$M/$model.onnx" --input "$name=$in" -o "$T/b" --repeat 11 \
					--threads "$t" --precision "$p" | med)
				echo "$f $b"
			done >"$T/rounds"
			err=$(/usr/bin/python3 -c "import numpy as np, glob, os, sys
e = 0
for f in glob.glob(sys.argv[1] + '/*.npy'):
    a, b = np.load(f), np.load(os.path.join(sys.argv[2], os.path.basename(f)))
    if a.dtype.kind == 'f' and a.size:
        e = max(e, float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)))
print(f'{e:.1e}')" "$T/f" "$T/b")
			awk -v m="$model" -v t="$t" -v e="$err" -v p="$p" '
				{ f[NR] = $1; b[NR] = $2; s[NR] = $1 / $2 }
				END {
					for (i = 1; i <= NR; i++)
						for (j = i + 1; j <= NR; j++)
							if (s[j] < s[i]) {
								x = s[i]; s[i] = s[j]; s[j] = x
								x = f[i]; f[i] = f[j]; f[j] = x
								x = b[i]; b[i] = b[j]; b[j] = x
							}
					k = int((NR + 1) / 2)
					printf "precision %-22s %s %d thread(s): float32 %8.2f ms, %s %8.2f ms: speed-up %.2f (rounds %.2f-%.2f), error %s\n", m, p, t, f[k], p, b[k], s[k], s[1], s[NR], e
				}' "$T/rounds"
		done
	done
done
