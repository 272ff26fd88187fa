#!/bin/sh
# The zoo against ONNX Runtime (npm onnxruntime-node): each model's PyTorch
# reference input, one CPU device at 1 and 2 threads against ONNX Runtime at
# the same thread count, the median of 11 warm runs each, interleaved rounds
# (ZOO_ROUNDS, default 3: a VM's two-thread spells want more); the table gives
# each ratio's median round and the spread, then the geometric mean.  Speed is
# never pass/fail here.
# usage: [ZOO_ROUNDS=N] zoo.sh HETEROOPT MODELS_DIR [MODEL...]
set -eu
HO=$1 M=$2 R=${ZOO_ROUNDS:-3}
shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
export ORT_NODE_MODULE=${ORT_NODE_MODULE:-$CACHE/ort/node_modules/onnxruntime-node}
[ -d "$ORT_NODE_MODULE" ] || { echo "zoo: onnxruntime-node not in $ORT_NODE_MODULE: skipped"; exit 0; }
MODELS=${*:-resnet18 mobilenet_v2 efficientnet_b0 squeezenet1_1 $(sh "$ROOT/tests/models/zoo_list.sh")}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for m in $MODELS; do
	[ -s "$M/$m.onnx" ] && [ -s "$M/$m.ref_in.npy" ] || { echo "zoo: $m not in $M (scripts/models.sh makes it)"; continue; }
	for t in 1 2; do
		for r in $(seq "$R"); do
			ho=$("$HO" run "$M/$m.onnx" --input "input=$M/$m.ref_in.npy" -o "$T/h" --repeat 11 \
				--threads $t | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
			ort=$(ORT_THREADS=$t ORT_REPEAT=11 node "$ROOT/tests/runtime/ort_ref.js" "$M/$m.onnx" \
				"$T/o" "input=$M/$m.ref_in.npy" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
			echo "$ho $ort"
		done | awk -v m=$m -v t=$t '
		{ h[NR] = $1; o[NR] = $2; q[NR] = $1 / $2 }
		END {
			for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (q[j] < q[i]) { x = q[i]; q[i] = q[j]; q[j] = x; x = h[i]; h[i] = h[j]; h[j] = x; x = o[i]; o[i] = o[j]; o[j] = x }
			c = int((NR + 1) / 2)
			printf "zoo      %-20s %d thread(s): heteroopt %8.2f ms, ONNX Runtime %8.2f ms: ratio %.2f (rounds %.2f-%.2f)\n", m, t, h[c], o[c], q[c], q[1], q[NR]
		}'
	done
done | tee "$T/table"
awk '{ for (i = 1; i <= NF; i++) if ($i == "ratio") { s += log($(i + 1)); n++ } }
END { if (n) printf "zoo      geometric mean of the ratios over %d: %.2f\n", n, exp(s / n) }' "$T/table"
