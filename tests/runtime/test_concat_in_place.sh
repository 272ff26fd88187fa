#!/bin/sh
# Concat in place (ho_concat_in_place): each input written straight into its run of the
# Concat's output, the Concat running nothing.  One model with the cases: inputs made by
# nodes that run, one through a Reshape of a whole tensor (a detector head's), a Concat
# gathered into a later one, an input read again after the Concat (its bytes live on in
# the output), and two Concats that may not be: one whose input is the residual a Conv's
# chain adds its result over (the Concat read after that sum: DenseNet's shape with a
# residual), the Concat of one tensor twice, and one that joins on an axis after one of
# extent 2.  The four ways (the fourth:
# Tanh on the emulator; a fifth with Sigmoid kept on the CPU; where PoCL is, the Concats
# and their inputs' writers on an OpenCL device), against
# numpy; the memory plan as the simulator predicted, as many Concats gathered as it said.
# usage: test_concat_in_place.sh HETEROOPT
set -eu
HO=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ONCE="--repeat 1 --warmup 1"
. "$ROOT/tests/runtime/ways.sh"

$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
C, H = 8, 64  # large enough that the memory plan's bytes tell
x = rng.standard_normal((1, C, H, H)).astype(np.float32)
w = (rng.standard_normal((C, 2 * C)) * 0.1).astype(np.float32)
m = (rng.standard_normal((H, 96)) * 0.1).astype(np.float32)
N = helper.make_node
nodes = [N("Reshape", ["x", "s3"], ["x3"]),                          # [1, C*H, H]
         N("Tanh", ["x3"], ["a"]),
         N("Sigmoid", ["x"], ["g"]), N("Reshape", ["g", "s3"], ["b"]),
         N("MatMul", ["x3", "m"], ["c0"]), N("Reshape", ["c0", "sc"], ["c"]),  # [1, C*96, H]
         N("Concat", ["a", "b"], ["ab"], axis=1),
         N("Concat", ["ab", "c"], ["abc"], axis=1),
         N("Relu", ["abc"], ["y1"]), N("Exp", ["a"], ["y2"]),
         N("Relu", ["x"], ["r"]), N("Abs", ["x"], ["q"]), N("Concat", ["r", "q"], ["rq"], axis=1),
         N("Conv", ["rq", "w"], ["k"]), N("Add", ["k", "r"], ["s"]),  # r: the residual
         N("Concat", ["s", "s"], ["y3"], axis=1), N("Add", ["rq", "y3"], ["y4"]),  # after
         N("Reshape", ["x", "s2"], ["x2"]), N("Neg", ["x2"], ["n"]), N("Elu", ["x2"], ["e"]),
         N("Concat", ["n", "e"], ["ne"], axis=2), N("Neg", ["ne"], ["y5"])]  # after an axis of 2
outs = ["y1", "y2", "y3", "y4", "y5"]
g = helper.make_graph(nodes, "gather", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                      [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs],
                      [numpy_helper.from_array(np.array([1, C * H, H], np.int64), "s3"),
                       numpy_helper.from_array(np.array([1, C * 96, H], np.int64), "sc"),
                       numpy_helper.from_array(np.array([2, C * H // 2, H], np.int64), "s2"),
                       numpy_helper.from_array(w.reshape(C, 2 * C, 1, 1), "w"), numpy_helper.from_array(m, "m")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/gather.onnx")
np.save(f"{sys.argv[1]}/gather.x.npy", x)
x3 = x.reshape(1, C * H, H)
r = np.maximum(x, 0)
rq = np.concatenate([r, np.abs(x)], 1)
k = np.einsum("ncij,oc->noij", rq, w)
x2 = x.reshape(2, C * H // 2, H)
refs = {"y1": np.maximum(np.concatenate([np.tanh(x3), (1 / (1 + np.exp(-x))).reshape(1, C * H, H),
                                         (x3 @ m).reshape(1, C * 96, H)], 1), 0),
        "y2": np.exp(np.tanh(x3)), "y3": np.concatenate([k + r, k + r], 1), "y4": rq + np.concatenate([k + r, k + r], 1),
        "y5": -np.concatenate([-x2, np.where(x2 > 0, x2, np.exp(x2) - 1)], 2)}
for n, v in refs.items():
    np.save(f"{sys.argv[1]}/gather.{n}.npy", v.astype(np.float32))
PYEOF
ways "$T/gather.onnx" x 1x8x64x64 "$T/gather.x.npy" "$T/gather" Tanh
# A fifth: Tanh on the emulator, Sigmoid on the CPU, so the first Concat's inputs are made
# on two devices and it copies them; the run as the schedule said.
pinned "$T/gather.onnx" x "$T/gather.x.npy" "$T/gather.6" "Tanh and Sigmoid apart" Tanh=emu0 Sigmoid=cpu0
as_scheduled "$T/gather.6.log" "Tanh and Sigmoid apart" "Concats whose inputs"
for i in 1 2 3 4 6; do
	for o in y1 y2 y3 y4 y5; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/gather.$o.npy" "$T/gather.$i/$o.npy" "$o way $i vs numpy"
	done
done
# One CPU device: the two Concats over a, b and c run nothing; not the residual's, nor the
# one after an axis of extent 2.
"$HO" run "$T/gather.onnx" --input "x=$T/gather.x.npy" -o "$T/gather.5" $ONCE >"$T/gather.5.log"
grep -q "^run: 2 Concats whose inputs were written straight into their output" "$T/gather.5.log" ||
	{ echo "one cpu: not the two Concats written in place"; cat "$T/gather.5.log"; exit 1; }
grep "Concats whose inputs" "$T/gather.2.log" "$T/gather.3.log" "$T/gather.4.log"
# On an OpenCL device (PoCL here), where one shares host memory: the Concats and what makes
# their inputs pinned there, each input written at its offset into the output's buffer.
if "$HO" probe --write-box --split 2 --opencl -o "$T/ocl.json" >"$T/ocl.log" 2>&1; then
	"$HO" schedule --quiet --objectives latency --seed 1 "$T/gather.onnx" --box "$T/ocl.json" \
		--pin Concat=ocl0 --pin Tanh=ocl0 --pin Sigmoid=ocl0 --pin MatMul=ocl0 \
		--pin Reshape=ocl0 -o "$T/gather.s7.json" >/dev/null
	"$HO" run "$T/gather.onnx" --input "x=$T/gather.x.npy" --schedule "$T/gather.s7.json" \
		--pick 0 -o "$T/gather.7" $ONCE >"$T/gather.7.log"
	memory_matches "$T/gather.7.log" "on ocl0"
	as_scheduled "$T/gather.7.log" "on ocl0" "Concats whose inputs"
	grep -q "^ *[1-9][0-9]* Concats whose inputs" "$T/gather.7.log" ||
		{ echo "on ocl0: no Concat written in place"; cat "$T/gather.7.log"; exit 1; }
	for o in y1 y2 y3 y4 y5; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/gather.$o.npy" "$T/gather.7/$o.npy" "$o on ocl0 vs numpy"
	done
else
	echo "no OpenCL device sharing host memory here: $(tail -1 "$T/ocl.log")"
fi
echo "concat in place: 2 Concats gathered on one CPU; outputs match numpy four ways"
