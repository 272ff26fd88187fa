#!/bin/sh
# The cpu backend's answers against references: PyTorch's own outputs for the
# torchvision CNNs and a GRU/LSTM model (saved when they were exported, random weights, BatchNorm
# made non-trivial), ONNX Runtime for the real PaddleOCR models.
# usage: test_numerics.sh HETEROOPT MODELS_DIR [pytorch|ort|all]
# The PyTorch half needs nothing beyond the models; only the ONNX Runtime
# half skips (exit 77) when onnxruntime-node could not be installed.
set -eu
HO=$1 M=$2 PART=${3:-all}
case $PART in pytorch | ort | all) ;; *) echo "test_numerics: part '$PART' is not pytorch, ort or all" >&2; exit 2 ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
export ORT_NODE_MODULE=${ORT_NODE_MODULE:-$CACHE/ort/node_modules/onnxruntime-node}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# What these runs are for is their answer: one warm-up and one measured run, not run's
# default of two and ten (the PP-OCRv4 detector's twelve runs were seconds a way).
ONCE="--repeat 1 --warmup 1"

. "$ROOT/tests/runtime/ways.sh"
WAYS="one-cpu 2cpu-fastest cpu+emu-fastest cpu+emu-pinned-on-emu"

# four_ways_vs_pytorch MODEL INPUT SHAPE OUTPUT [OP]: the four ways, each against the
# PyTorch output saved at export
four_ways_vs_pytorch() {
	ways "$M/$1.onnx" "$2" "$3" "$M/$1.ref_in.npy" "$T/$1" "${5:-Conv}"
	i=1
	for w in $WAYS; do
		$PY "$ROOT/tests/runtime/compare.py" "$M/$1.ref_out.npy" "$T/$1.$i/$4.npy" "$1 $w vs PyTorch"
		i=$((i + 1))
	done
}
# MobileNetV3-Small at opset 13: its Hardswish is HardSigmoid times x, fused after the Conv
# as a swish is (the folded-node count checks the simulator's fusion against the runtime's).
# make test's quick loop leaves resnet18 and mobilenet_v2 (plain residual and inverted
# blocks: squeezenet's and efficientnet's kernels) to make check.
[ "$PART" = ort ] || for m in $([ "${HO_TEST_QUICK:-0}" = 1 ] || echo resnet18 mobilenet_v2) \
	squeezenet1_1 efficientnet_b0 $(sh "$ROOT/tests/models/zoo_list.sh" four-ways); do
	four_ways_vs_pytorch $m input 1x3x224x224 logits
done
# Weights held once: a Conv's kernel keeps its weights in its own layout, so the plan gives
# them no bytes of any device's region (the scheduler counts the same: memory_matches above).
# ResNet-18's 46.7 MB of parameters are all but its classifier's in Convs; on a CPU and the
# emulator its regions planned 50.7 + 1.9 MB before (the weights twice over: 55.3 MB in
# the kernels' layout beside them), 6.7 + 1.2 MB now.
if [ "$PART" != ort ] && [ "${HO_TEST_QUICK:-0}" != 1 ]; then
	params=$("$HO" inspect "$M/resnet18.onnx" --shape input=1x3x224x224 | sed -n 's/^parameters.*(\([0-9.]*\) MB)$/\1/p')
	for i in 2 3 4; do
		awk -v p="$params" -v way="$i" '/MB planned/ { for (f = 1; f <= NF; f++) if ($f == "planned") r += $(f - 2) }
			END { printf "resnet18 way %s: regions %.2f MB for %s MB of parameters\n", way, r, p
			      if (p == "" || r > p / 4) { print "resnet18: its weights held in the regions as well"; exit 1 } }' \
			"$T/resnet18.$i.log" || exit 1
	done
fi

# Pre-activation batch norms (DenseNet's, after a Concat) take their Relu into one kernel,
# one that two nodes read does not; the runtime's folds the simulator's (the four ways).
# One weight read by several Conv nodes (a detector's heads at each level of its feature
# pyramid: retinanet_resnet50_fpn's kernels held 607 MB of their own, its heads' weights once
# per level): each device holds one copy of it per layout, its kernels sharing it
# (cpu/packed.c), and the scheduler counts the same (memory_matches in the four ways, all
# the Convs on the emulator in the fourth, and split: one copy on each device).  Three 1 x 1 512 ->
# 512 convolutions at 7 x 7 share one layout: 1.05 MB held once on the emulator, not 3.15.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
w = (rng.standard_normal((512, 512, 1, 1)) * 0.05).astype(np.float32)
b = rng.standard_normal(512).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c0"], name="conv0"), helper.make_node("Relu", ["c0"], ["r0"]),
         helper.make_node("Conv", ["r0", "w", "b"], ["c1"], name="conv1"), helper.make_node("Tanh", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w", "b"], ["y"], name="conv2")]
g = helper.make_graph(nodes, "shared_weights", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512, 7, 7])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/shared.onnx")
x = rng.standard_normal((1, 512, 7, 7)).astype(np.float32)
conv = lambda t: torch.nn.functional.conv2d(t, torch.from_numpy(w), torch.from_numpy(b))
np.save(f"{sys.argv[1]}/shared.x.npy", x)
np.save(f"{sys.argv[1]}/shared.ref.npy", conv(torch.tanh(conv(torch.relu(conv(torch.from_numpy(x)))))).numpy())

# DenseNet's pre-activation: a batch norm after a Concat, no Conv before it to fold into,
# and its Relu, one kernel (ho_bn_chain); and one whose output two nodes read, apart
c = 48
wc = (rng.standard_normal((16, c, 3, 3)) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((32, c + 16, 1, 1)) * 0.1).astype(np.float32)
bn = [rng.random(c + 16, dtype=np.float32) + 0.5, rng.standard_normal(c + 16).astype(np.float32),
      rng.standard_normal(c + 16).astype(np.float32), rng.random(c + 16, dtype=np.float32) + 0.5]
names = ["s", "b", "m", "v"]
nodes = [helper.make_node("Conv", ["x", "wc"], ["c0"], pads=[1, 1, 1, 1]),
         helper.make_node("Concat", ["x", "c0"], ["cat"], axis=1),
         helper.make_node("BatchNormalization", ["cat"] + names, ["n0"], epsilon=1e-5),
         helper.make_node("Relu", ["n0"], ["r0"]),
         helper.make_node("Conv", ["r0", "w2"], ["y"]),
         helper.make_node("BatchNormalization", ["cat"] + names, ["n1"], epsilon=1e-5),
         helper.make_node("Relu", ["n1"], ["r1"]), helper.make_node("Sigmoid", ["n1"], ["z"])]
g = helper.make_graph(nodes, "preact", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 14, 14])],
                      [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "r1", "z")],
                      [numpy_helper.from_array(a, n) for a, n in zip([wc, w2] + bn, ["wc", "w2"] + names)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/preact.onnx")
x = torch.from_numpy(rng.standard_normal((1, c, 14, 14)).astype(np.float32))
cat = torch.cat([x, torch.nn.functional.conv2d(x, torch.from_numpy(wc), padding=1)], 1)
n = torch.nn.functional.batch_norm(cat, torch.from_numpy(bn[2]), torch.from_numpy(bn[3]),
                                   torch.from_numpy(bn[0]), torch.from_numpy(bn[1]), eps=1e-5)
np.save(f"{sys.argv[1]}/preact.x.npy", x.numpy())
for name, v in (("y", torch.nn.functional.conv2d(torch.relu(n), torch.from_numpy(w2))), ("r1", torch.relu(n)),
                ("z", torch.sigmoid(n))):
    np.save(f"{sys.argv[1]}/preact.{name}.npy", v.numpy())
PYEOF
	ways "$T/shared.onnx" x 1x512x7x7 "$T/shared.x.npy" "$T/shared" Conv
	ways "$T/preact.onnx" x 1x48x14x14 "$T/preact.x.npy" "$T/preact" BatchNormalization
	for i in 1 2 3 4; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/shared.ref.npy" "$T/shared.$i/y.npy" "shared weights way $i vs PyTorch"
		for o in y r1 z; do
			$PY "$ROOT/tests/runtime/compare.py" "$T/preact.$o.npy" "$T/preact.$i/$o.npy" "pre-activation $o way $i vs PyTorch"
		done
	done
	grep -q "^ *1 nodes folded" "$T/preact.4.log" || { echo "pre-activation: its Relu not folded into the batch norm"; cat "$T/preact.4.log"; exit 1; }
	held=$(sed -n '/^  emu0 /,/^  [a-z]/s/.*its kernels: \([0-9.]*\) MB.*/\1/p' "$T/shared.4.log")
	echo "shared weights: the emulator's kernels hold $held MB for three Convs of 1.05 MB weights"
	awk -v h="$held" 'BEGIN { exit !(h != "" && h < 1.5) }' || { echo "shared weights held more than once"; exit 1; }
	# split: the first Conv on the CPU, the other two on the emulator: one copy on each
	"$HO" schedule --quiet --objectives latency --seed 1 "$T/shared.onnx" \
		--box "$ROOT/boxes/this-machine-cpu-emu.json" --pin conv0=cpu0 --pin conv1=emu0 \
		--pin conv2=emu0 -o "$T/shared.s5.json" >/dev/null
	"$HO" run "$T/shared.onnx" --input "x=$T/shared.x.npy" --schedule "$T/shared.s5.json" --pick 0 \
		-o "$T/shared.5" $ONCE >"$T/shared.5.log"
	memory_matches "$T/shared.5.log" "shared weights split"
	$PY "$ROOT/tests/runtime/compare.py" "$T/shared.ref.npy" "$T/shared.5/y.npy" "shared weights split vs PyTorch"
	awk '/MB planned/ { dev = $1 } /its kernels:/ { printf "shared weights split: %s holds %s MB\n", dev, $3
		if ($3 < 1 || $3 > 1.5) bad = 1; n++ } END { exit bad || n != 2 }' "$T/shared.5.log" ||
		{ echo "shared weights split: not one copy on each device"; cat "$T/shared.5.log"; exit 1; }
}

# Batched MatMuls reading their operands through the Transposes before them (ho_matmul_through):
# the Transpose runs nothing and its output shares its input's bytes.  Rows or columns of
# stride 1 ('N' and 'T' to sgemm), batch axes permuted, ranks 3 and 4; and two the kernel
# cannot read so: no axis of stride 1 among the last two, and a Transpose two nodes read;
# a Transpose that moves an axis of extent 1 only, a view; a scaling by a scalar between
# a Transpose and its MatMul (Div after, Mul before), which swaps places with the Transpose;
# a Transpose after a MatMul, its last axis kept (written through), and one not.
# Five ways (the fourth: MatMuls on the emulator; the fifth: MatMuls and Transposes there),
# against numpy, memory as predicted.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(9)
x = rng.standard_normal((2, 6, 5, 8)).astype(np.float32)
T = lambda i, o, p: helper.make_node("Transpose", [i], [o], perm=p)
nodes = [T("x", "a1", [0, 2, 1, 3]), helper.make_node("Relu", ["x"], ["r"]), T("r", "b1", [0, 2, 3, 1]),
         helper.make_node("MatMul", ["a1", "b1"], ["y1"]),
         helper.make_node("Reshape", ["x", "s3"], ["x3"]), helper.make_node("Tanh", ["x3"], ["t3"]),
         T("x3", "a2", [1, 0, 2]), T("t3", "b2", [1, 2, 0]), helper.make_node("MatMul", ["a2", "b2"], ["y2"]),
         helper.make_node("Sigmoid", ["x"], ["g"]), T("x", "a3", [0, 3, 2, 1]), T("g", "b3", [0, 3, 1, 2]),
         helper.make_node("MatMul", ["a3", "b3"], ["y3"]),
         T("x", "a4", [0, 1, 3, 2]), helper.make_node("MatMul", ["a4", "x"], ["y4"]),
         helper.make_node("Abs", ["a4"], ["y5"]),
         helper.make_node("Reshape", ["x", "s6"], ["x6"]), T("x6", "a6", [1, 0, 2]), helper.make_node("Abs", ["a6"], ["y6"]),
         T("x3", "q7", [1, 0, 2]), helper.make_node("Div", ["q7", "c8"], ["a7"]), T("t3", "b7", [1, 2, 0]),
         helper.make_node("MatMul", ["a7", "b7"], ["y7"]),
         T("x", "a8", [0, 2, 1, 3]), T("r", "k8", [0, 2, 3, 1]), helper.make_node("Mul", ["c05", "k8"], ["b8"]),
         helper.make_node("MatMul", ["a8", "b8"], ["y8"]),
         T("x", "a9", [0, 2, 1, 3]), T("r", "b9", [0, 2, 3, 1]), helper.make_node("MatMul", ["a9", "b9"], ["m9"]),
         T("m9", "y9", [0, 2, 1, 3]),
         T("x3", "b10", [0, 2, 1]), helper.make_node("MatMul", ["x3", "b10"], ["m10"]), T("m10", "y10", [0, 2, 1])]
g = helper.make_graph(nodes, "through", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                      [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9", "y10")],
                      [numpy_helper.from_array(np.array([12, 5, 8], np.int64), "s3"),
                       numpy_helper.from_array(np.array([2, 1, 240], np.int64), "s6"),
                       numpy_helper.from_array(np.array(8, np.float32), "c8"),
                       numpy_helper.from_array(np.array([0.5], np.float32), "c05")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/through.onnx")
np.save(f"{sys.argv[1]}/through.x.npy", x)
x3 = x.reshape(12, 5, 8)
refs = {"y1": x.transpose(0, 2, 1, 3) @ np.maximum(x, 0).transpose(0, 2, 3, 1),
        "y2": x3.transpose(1, 0, 2) @ np.tanh(x3).transpose(1, 2, 0),
        "y3": x.transpose(0, 3, 2, 1) @ (1 / (1 + np.exp(-x))).transpose(0, 3, 1, 2),
        "y4": x.transpose(0, 1, 3, 2) @ x, "y5": np.abs(x.transpose(0, 1, 3, 2)),
        "y6": np.abs(x.reshape(2, 1, 240).transpose(1, 0, 2)),
        "y7": (x3.transpose(1, 0, 2) / 8) @ np.tanh(x3).transpose(1, 2, 0),
        "y8": x.transpose(0, 2, 1, 3) @ (0.5 * np.maximum(x, 0).transpose(0, 2, 3, 1)),
        "y9": (x.transpose(0, 2, 1, 3) @ np.maximum(x, 0).transpose(0, 2, 3, 1)).transpose(0, 2, 1, 3),
        "y10": (x3 @ x3.transpose(0, 2, 1)).transpose(0, 2, 1)}
for k, v in refs.items():
    np.save(f"{sys.argv[1]}/through.{k}.npy", v.astype(np.float32))
PYEOF
	ways "$T/through.onnx" x 2x6x5x8 "$T/through.x.npy" "$T/through" MatMul
	pinned "$T/through.onnx" x "$T/through.x.npy" "$T/through.5" "Transposes read through on emu0" \
		MatMul=emu0 Transpose=emu0
	"$HO" run "$T/through.onnx" --input "x=$T/through.x.npy" -o "$T/through.6" $ONCE >"$T/through.6.log"
	for i in 5 6; do
		grep -q "11 Transposes read in place by the MatMul after them" "$T/through.$i.log" ||
			{ echo "Transposes: not the 11 a MatMul can read through ($i)"; cat "$T/through.$i.log"; exit 1; }
		grep -q " 1 nodes folded into the Conv, MatMul" "$T/through.$i.log" ||
			{ echo "Transposes: not the one a MatMul writes through ($i)"; cat "$T/through.$i.log"; exit 1; }
	done
	for i in 1 2 3 4 5; do
		for o in y1 y2 y3 y4 y5 y6 y7 y8 y9 y10; do
			$PY "$ROOT/tests/runtime/compare.py" "$T/through.$o.npy" "$T/through.$i/$o.npy" \
				"Transposes read through, $o way $i vs numpy" 1e-6
		done
	done
}

# Gathers and Slices whose output is one run of their input's bytes run as views at an
# offset (graph/views.c): a Gather of one index (scalar, [-1], on an inner axis after axes
# of extent 1), a Slice of one index then a range then whole axes, a Slice of everything;
# not a Slice with a gap, nor a Gather or a Reshape of one that the graph gives out.  Their
# readers (Tanh) on the emulator in the fourth way, so that runs cross devices.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

x = np.random.default_rng(10).standard_normal((3, 1, 4, 6)).astype(np.float32)
I = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
N = helper.make_node
nodes = [N("Sigmoid", ["x"], ["s"]),
         N("Gather", ["s", "i1"], ["g0"], axis=0), N("Tanh", ["g0"], ["y0"]),
         N("Gather", ["s", "im1"], ["g1"], axis=0), N("Tanh", ["g1"], ["y1"]),
         N("Reshape", ["s", "r2"], ["s1"]), N("Gather", ["s1", "i5"], ["g2"], axis=2), N("Tanh", ["g2"], ["y2"]),
         N("Slice", ["s", "st3", "en3"], ["g3"]), N("Tanh", ["g3"], ["y3"]),
         N("Slice", ["s", "z1", "e4", "a4"], ["g4"]), N("Tanh", ["g4"], ["y4"]),
         N("Gather", ["s", "i0"], ["y5"], axis=0),
         N("Gather", ["s", "i2"], ["g6"], axis=0), N("Reshape", ["g6", "r6"], ["y6"]),
         N("Slice", ["s", "z1", "e7", "z1"], ["g7"]), N("Tanh", ["g7"], ["y7"])]
inits = [I("i1", 1), I("im1", [-1]), I("r2", [1, 1, 12, 6]), I("i5", 5), I("st3", [1, 0, 1, 0]), I("en3", [2, 1, 3, 6]),
         I("z1", [0]), I("e4", [3]), I("a4", [3]), I("i0", 0), I("i2", 2), I("r6", [24]), I("e7", [3])]
outs = ["y%d" % i for i in range(8)]
g = helper.make_graph(nodes, "runs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                      [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/runs.onnx")
np.save(f"{sys.argv[1]}/runs.x.npy", x)
s = 1 / (1 + np.exp(-x))
refs = [np.tanh(s[1]), np.tanh(s[[-1]]), np.tanh(s.reshape(1, 1, 12, 6)[:, :, 5]), np.tanh(s[1:2, 0:1, 1:3, :]),
        np.tanh(s[:, :, :, :3]), s[0], s[2].reshape(24), np.tanh(s)]
for o, v in zip(outs, refs):
    np.save(f"{sys.argv[1]}/runs.{o}.npy", v.astype(np.float32))
PYEOF
	ways "$T/runs.onnx" x 3x1x4x6 "$T/runs.x.npy" "$T/runs" Tanh
	for i in 1 2 3 4; do
		for o in y0 y1 y2 y3 y4 y5 y6 y7; do
			$PY "$ROOT/tests/runtime/compare.py" "$T/runs.$o.npy" "$T/runs.$i/$o.npy" \
				"Gathers and Slices as views, $o way $i vs numpy" 1e-6
		done
	done
}

# A sequence model: two bidirectional GRU layers (linear_before_reset), an LSTM, a Linear;
# its GRUs on the emulator in the fourth way.
[ "$PART" = ort ] || four_ways_vs_pytorch seq_rnn x 3x20x16 y GRU

# Control flow as PyTorch's TorchScript exporter writes it: a Loop over the sequence whose
# body reads the input and weights from outside and holds an If; the Loop on the emulator
# in the fourth way.
[ "$PART" = ort ] || four_ways_vs_pytorch scripted_loop x 9x3x16 y Loop

# A U-Net whose decoders are ConvTransposes with a bias and a fused ReLU, 2x2 and 4x4 at
# stride 2, and skip Concats; its ConvTransposes on the emulator in the fourth way.  oneDNN
# ran them 11x slower than the net's whole time is now; not in the quick loop.
[ "$PART" = ort ] || [ "${HO_TEST_QUICK:-0}" = 1 ] ||
	four_ways_vs_pytorch unet_small x 1x3x96x128 y ConvTranspose

# Models beyond the benchmarks' (dense concatenation, channel shuffles, squeeze-excitation,
# LayerNorm over channels, a vision transformer, HardSwish): one CPU device, against PyTorch;
# not in the quick loop (HO_TEST_QUICK=1), whose two minutes they would pass.
[ "$PART" = ort ] || [ "${HO_TEST_QUICK:-0}" = 1 ] ||
	for m in $(sh "$ROOT/tests/models/zoo_list.sh" one-cpu); do
	"$HO" run "$M/$m.onnx" --input "input=$M/$m.ref_in.npy" -o "$T/$m.x" --repeat 1 --warmup 1 >/dev/null
	$PY "$ROOT/tests/runtime/compare.py" "$M/$m.ref_out.npy" "$T/$m.x/logits.npy" "$m one-cpu vs PyTorch"
done

# Detectors with NMS in the graph, as exported (their post-processing's shapes a run
# decides): one CPU device, and the fastest schedule over two CPU devices, each against
# PyTorch's detections matched after sorting by score.  Not in the quick loop.
# Under a sanitizer (HO_SANITIZED) only the small ones.
detect_scheduled() { # detect_scheduled MODEL BOX WAY DEVICE REPEAT: the fastest schedule over BOX, run
	"$HO" schedule --quiet --population 16 --generations 10 --objectives latency --seed 1 "$M/$1.onnx" \
		--shape input=3x320x320 --box "$ROOT/boxes/$2.json" -o "$T/$1.$3.json" >/dev/null
	"$HO" run "$M/$1.onnx" --input "input=$M/$1.ref_in.npy" --schedule "$T/$1.$3.json" --pick 0 \
		-o "$T/$1.$3" --repeat "$5" --warmup 1 >"$T/$1.$3.log"
	grep -q "$4" "$T/$1.$3.log" || { echo "$1: the $2 schedule left $4 idle"; cat "$T/$1.$3.log"; exit 1; }
	$PY "$ROOT/tests/runtime/compare_detections.py" "$M/$1.ref_out.npy" "$T/$1.$3" "$1 $2 vs PyTorch"
}
[ "$PART" = ort ] || [ "${HO_TEST_QUICK:-0}" = 1 ] ||
	for m in $(sh "$ROOT/tests/models/zoo_list.sh" "$([ -n "${HO_SANITIZED:-}" ] && echo asan || echo detect)"); do
	"$HO" run "$M/$m.onnx" --input "input=$M/$m.ref_in.npy" -o "$T/$m.1" --repeat 1 --warmup 1 >/dev/null
	$PY "$ROOT/tests/runtime/compare_detections.py" "$M/$m.ref_out.npy" "$T/$m.1" "$m one-cpu vs PyTorch"
	detect_scheduled "$m" this-machine-2cpu 2 cpu1 1
	# the small ones over a CPU and the emulator, two runs: the tail planned for the values
	# of an input replica on emu0 (its bytes, filled once, were reused: ssdlite's NonZero
	# met another extent in the second), and empty tensors copied (fasterrcnn's)
	sh "$ROOT/tests/models/zoo_list.sh" asan | grep -qx "$m" || continue
	detect_scheduled "$m" this-machine-cpu-emu 3 emu0 2
done

# Binary operators whose smaller operand repeats over a middle run of axes (swin_t's
# window mask: the plane loop where oneDNN has only its reference kernel), either side
# broadcast; and both broadcast (raft_small's correlation window, which oneDNN refuses:
# typed.c's strided loop), one of them large enough to be split over the threads; against
# numpy.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

cases = {"mid5": ([1, 4, 3, 5, 6], [1, 4, 1, 5, 6], "Add"), "first": ([1, 4, 1, 5, 6], [1, 4, 3, 5, 6], "Sub"),
         "lead": ([2, 3, 8], [1, 3, 8], "Div"), "mask": ([64, 49, 49], [64, 1, 49], "Mul"),
         "both": ([256, 1, 1, 2], [1, 7, 7, 2], "Add"), "both_div": ([1, 7, 7, 2], [256, 1, 1, 2], "Div"),
         "both_rank": ([3, 1, 5], [4, 1], "Mul"), "both_big": ([64, 1, 256], [1, 300, 256], "Sub")}
rng = np.random.default_rng(3)
for name, (sa, sb, op) in cases.items():
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"])], name,
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, sa),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, sb)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), f"{sys.argv[1]}/{name}.onnx")
    a, b = (rng.random(s, dtype=np.float32) + 0.5 for s in (sa, sb))
    np.save(f"{sys.argv[1]}/{name}.a.npy", a)
    np.save(f"{sys.argv[1]}/{name}.b.npy", b)
    np.save(f"{sys.argv[1]}/{name}.ref.npy", {"Add": np.add, "Sub": np.subtract, "Div": np.divide,
                                               "Mul": np.multiply}[op](a, b))
PYEOF
	for c in mid5 first lead mask both both_div both_rank both_big; do
		"$HO" run "$T/$c.onnx" --input "a=$T/$c.a.npy" --input "b=$T/$c.b.npy" -o "$T/$c.out" \
			$ONCE >/dev/null
		$PY "$ROOT/tests/runtime/compare.py" "$T/$c.ref.npy" "$T/$c.out/y.npy" "broadcast $c vs numpy"
	done
}

# A Pad of zeros before an AveragePool or a Conv becomes their pads at load (patterns.c:
# inception's count_include_pad pools); Pads it must leave alone (a value of 1, a channel
# pad, before a MaxPool, before an AveragePool with pads of its own or ceil_mode) stay.
# Against PyTorch, and inspect names the two folds.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(9)
x = rng.standard_normal((1, 8, 13, 11)).astype(np.float32)
w = (rng.standard_normal((6, 8, 3, 3)) * 0.2).astype(np.float32)
pads = lambda *p: numpy_helper.from_array(np.array(p, np.int64), "p%d" % len(inits))
inits, nodes, outs, refs = [numpy_helper.from_array(w, "w")], [], [], []
t = torch.from_numpy(x)

def case(name, pad, after, ref, value=None, **attrs):
    inits.append(numpy_helper.from_array(np.array(pad, np.int64), name + "_pads"))
    ins = ["x", name + "_pads"]
    if value is not None:
        inits.append(numpy_helper.from_array(np.array(value, np.float32), name + "_value"))
        ins.append(name + "_value")
    nodes.append(helper.make_node("Pad", ins, [name + "_padded"]))
    nodes.append(helper.make_node(after, [name + "_padded"] + (["w"] if after == "Conv" else []),
                                  [name], **attrs))
    outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    refs.append(ref.numpy())

case("avg", [0, 0, 1, 2, 0, 0, 1, 0], "AveragePool", F.avg_pool2d(F.pad(t, (2, 0, 1, 1)), 3, 1),
     kernel_shape=[3, 3])
case("conv", [0, 0, 1, 1, 0, 0, 2, 1], "Conv", F.conv2d(F.pad(t, (1, 1, 1, 2)), torch.from_numpy(w), padding=1),
     kernel_shape=[3, 3], pads=[1, 1, 1, 1])
case("one", [0, 0, 1, 1, 0, 0, 1, 1], "AveragePool", F.avg_pool2d(F.pad(t, (1, 1, 1, 1), value=1.0), 3, 1),
     value=1.0, kernel_shape=[3, 3])
case("chan", [0, 1, 1, 1, 0, 0, 1, 1], "AveragePool", F.avg_pool2d(F.pad(t, (1, 1, 1, 1, 1, 0)), 3, 1),
     kernel_shape=[3, 3])
case("max", [0, 0, 1, 1, 0, 0, 1, 1], "MaxPool", F.max_pool2d(F.pad(t, (1, 1, 1, 1)), 3, 1),
     kernel_shape=[3, 3])
case("own", [0, 0, 1, 1, 0, 0, 1, 1], "AveragePool",
     F.avg_pool2d(F.pad(t, (1, 1, 1, 1)), 3, 1, padding=1, count_include_pad=False),
     kernel_shape=[3, 3], pads=[1, 1, 1, 1])
case("ceil", [0, 0, 1, 1, 0, 0, 1, 1], "AveragePool", F.avg_pool2d(F.pad(t, (1, 1, 1, 1)), 3, 2, ceil_mode=True),
     kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
g = helper.make_graph(nodes, "pads", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)], outs, inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/pads.onnx")
np.save(f"{sys.argv[1]}/pads.x.npy", x)
for o, r in zip(outs, refs):
    np.save(f"{sys.argv[1]}/pads.{o.name}.npy", r)
PYEOF
	"$HO" inspect "$T/pads.onnx" | grep -q "14, 4 fused at load into 2 (AveragePool, Conv)" ||
		{ echo "pads: not the two folds expected"; "$HO" inspect "$T/pads.onnx"; exit 1; }
	"$HO" run "$T/pads.onnx" --input "x=$T/pads.x.npy" -o "$T/pads.out" $ONCE >/dev/null
	for c in avg conv one chan max own ceil; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/pads.$c.npy" "$T/pads.out/$c.npy" "Pad then $c vs PyTorch"
	done
}

# Weights a run computes (graph inputs here): the kernel reads them as they are.  A Conv's
# weights reordered once at prepare into the layout oneDNN picks, and a batch norm folded
# into them there, read buffers no run had filled yet: every output wrong.  Against PyTorch,
# big enough that oneDNN picks a blocked layout; a ConvTranspose and a MatMul with a bias too.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)
arr = lambda *s: rng.standard_normal(s).astype(np.float32)
x, w, wt, a, b = arr(1, 64, 20, 20), arr(64, 64, 3, 3) * 0.1, arr(64, 32, 2, 2) * 0.1, arr(50, 96), arr(96, 128)
bn, bias = [np.abs(arr(64)) + 0.5, arr(64), arr(64), np.abs(arr(64)) + 0.5], arr(128)
inits = [numpy_helper.from_array(v, n) for v, n in zip(bn + [bias], ["s", "o", "m", "v", "bias"])]
nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["x", "w"], ["cb"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["cb", "s", "o", "m", "v"], ["bn"]),
         helper.make_node("ConvTranspose", ["x", "wt"], ["ct"], strides=[2, 2]),
         helper.make_node("MatMul", ["a", "b"], ["ab"]), helper.make_node("Add", ["ab", "bias"], ["mm"])]
ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in zip("x w wt a b".split(), (x, w, wt, a, b))]
outs = [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in ("c", "bn", "ct", "mm")]
onnx.save(helper.make_model(helper.make_graph(nodes, "dynw", ins, outs, inits),
                            opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/dynw.onnx")
t = {n: torch.from_numpy(v) for n, v in zip("x w wt a b".split(), (x, w, wt, a, b))}
c = F.conv2d(t["x"], t["w"], padding=1)
refs = {"c": c, "bn": F.batch_norm(c, *(torch.from_numpy(p) for p in (bn[2], bn[3], bn[0], bn[1]))),
        "ct": F.conv_transpose2d(t["x"], t["wt"], stride=2), "mm": t["a"] @ t["b"] + torch.from_numpy(bias)}
for n, v in zip("x w wt a b".split(), (x, w, wt, a, b)):
    np.save(f"{sys.argv[1]}/dynw.{n}.npy", v)
for n, r in refs.items():
    np.save(f"{sys.argv[1]}/dynw.ref_{n}.npy", r.numpy())
PYEOF
	"$HO" run "$T/dynw.onnx" $(for i in x w wt a b; do echo "--input $i=$T/dynw.$i.npy"; done) \
		-o "$T/dynw.out" $ONCE >/dev/null
	for y in c bn ct mm; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/dynw.ref_$y.npy" "$T/dynw.out/$y.npy" "$y with weights a run gives vs PyTorch"
	done
}

# Linear layers on oneDNN's matmul, their known weights packed once: Gemm with transB and a
# bias of [N] or [1, N], and MatMul with its bias Add; Gemms it leaves to sgemm (alpha 0.5,
# beta 2).  Five rows, and none (a detector's box head with no box left: oneDNN 2.6's matmul
# divided by the 0 rows, SIGFPE), against numpy.  And weights of no rows (K = 0: the bias
# alone; oneDNN's matmul divides by K, sgemm refuses its leading dimension), a batched
# MatMul's too.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(12)
arr = lambda *s: rng.standard_normal(s).astype(np.float32)
w, b, w2, c2 = arr(32, 64), arr(32), arr(64, 32), arr(1, 32)
nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["lin"], transB=1),
         helper.make_node("MatMul", ["z", "w0"], ["m0"]), helper.make_node("Add", ["m0", "b"], ["k0mm"]),
         helper.make_node("Gemm", ["z", "w0t", "b"], ["k0gemm"], transB=1),
         helper.make_node("MatMul", ["ba", "bb"], ["k0batch"]),
         helper.make_node("Gemm", ["x", "w2", "c2"], ["row"]),
         helper.make_node("Gemm", ["x", "w2"], ["half"], alpha=0.5),
         helper.make_node("Gemm", ["x", "w", "b"], ["beta"], transB=1, beta=2.0),
         helper.make_node("MatMul", ["x", "w2"], ["m"]), helper.make_node("Add", ["m", "b"], ["mm"])]
inits = [numpy_helper.from_array(v, n) for v, n in zip((w, b, w2, c2, np.zeros((0, 32), np.float32),
                                                       np.zeros((32, 0), np.float32)),
                                                      ("w", "b", "w2", "c2", "w0", "w0t"))]
g = helper.make_graph(nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64]),
                                        helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 0]),
                                        helper.make_tensor_value_info("ba", TensorProto.FLOAT, [3, 4, 0]),
                                        helper.make_tensor_value_info("bb", TensorProto.FLOAT, [3, 0, 5])],
                      [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)
                       for y in ("lin", "row", "half", "beta", "mm", "k0mm", "k0gemm", "k0batch")], inits)
np.save(f"{sys.argv[1]}/linear.ba.npy", np.zeros((3, 4, 0), np.float32))
np.save(f"{sys.argv[1]}/linear.bb.npy", np.zeros((3, 0, 5), np.float32))
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/linear.onnx")
for n in (5, 0):
    x = arr(n, 64)
    np.save(f"{sys.argv[1]}/linear.x{n}.npy", x)
    np.save(f"{sys.argv[1]}/linear.z{n}.npy", np.zeros((n, 0), np.float32))
    for y, r in (("lin", x @ w.T + b), ("row", x @ w2 + c2), ("half", 0.5 * x @ w2),
                 ("beta", x @ w.T + 2 * b), ("mm", x @ w2 + b),
                 ("k0mm", np.broadcast_to(b, (n, 32))), ("k0gemm", np.broadcast_to(b, (n, 32))),
                 ("k0batch", np.zeros((3, 4, 5), np.float32))):
        np.save(f"{sys.argv[1]}/linear.ref{n}_{y}.npy", r)
PYEOF
	for n in 5 0; do
		"$HO" run "$T/linear.onnx" --input "x=$T/linear.x$n.npy" --input "z=$T/linear.z$n.npy" \
			--input "ba=$T/linear.ba.npy" --input "bb=$T/linear.bb.npy" -o "$T/linear.out$n" $ONCE >/dev/null
		for y in lin row half beta mm k0mm k0gemm k0batch; do
			$PY "$ROOT/tests/runtime/compare.py" "$T/linear.ref${n}_$y.npy" "$T/linear.out$n/$y.npy" \
				"$y ($n rows) vs numpy"
		done
	done
}

# ScatterElements along the first axis with an index per row (fasterrcnn's box pooling, runs
# along the last axis), and with reduction add along a middle axis onto repeated indices;
# against numpy.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(13)
x, u = rng.standard_normal((30, 16, 5, 7)).astype(np.float32), rng.standard_normal((20, 16, 5, 7)).astype(np.float32)
rows = np.broadcast_to(rng.permutation(30)[:20, None, None, None], u.shape).astype(np.int64)
mid = rng.integers(-16, 16, u.shape).astype(np.int64)
nodes = [helper.make_node("ScatterElements", ["x", "rows", "u"], ["byrow"], axis=0),
         helper.make_node("ScatterElements", ["x", "mid", "u"], ["added"], axis=1, reduction="add")]
ins = [helper.make_tensor_value_info(n, t, v.shape) for n, t, v in
       (("x", TensorProto.FLOAT, x), ("rows", TensorProto.INT64, rows), ("mid", TensorProto.INT64, mid),
        ("u", TensorProto.FLOAT, u))]
g = helper.make_graph(nodes, "scatter", ins, [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)
                                             for y in ("byrow", "added")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), f"{sys.argv[1]}/scatter.onnx")
byrow = x.copy()
np.put_along_axis(byrow, rows, u, axis=0)
added = x.copy()
idx = np.indices(u.shape)
np.add.at(added, (idx[0], np.where(mid < 0, mid + 16, mid), idx[2], idx[3]), u)
for n, v in (("x", x), ("rows", rows), ("mid", mid), ("u", u), ("ref_byrow", byrow), ("ref_added", added)):
    np.save(f"{sys.argv[1]}/scatter.{n}.npy", v)
PYEOF
	"$HO" run "$T/scatter.onnx" $(for i in x rows mid u; do echo "--input $i=$T/scatter.$i.npy"; done) \
		-o "$T/scatter.out" $ONCE >/dev/null
	$PY "$ROOT/tests/runtime/compare.py" "$T/scatter.ref_byrow.npy" "$T/scatter.out/byrow.npy" "ScatterElements by row vs numpy" 0
	$PY "$ROOT/tests/runtime/compare.py" "$T/scatter.ref_added.npy" "$T/scatter.out/added.npy" "ScatterElements add vs numpy"
}

# Empty tensors (a detector's image with no box left makes them) through the loops that
# split rows over the threads: a Transpose's index map and two broadcast inputs, where an
# extent of 0 is no divisor.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]), helper.make_node("Add", ["x", "b"], ["s"])]
g = helper.make_graph(nodes, "empty", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 4]),
                                       helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 3, 4])],
                      [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in "ts"])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/empty.onnx")
np.save(f"{sys.argv[1]}/empty.x.npy", np.zeros((0, 1, 4), np.float32))
np.save(f"{sys.argv[1]}/empty.b.npy", np.ones((1, 3, 4), np.float32))
PYEOF
	"$HO" run "$T/empty.onnx" --input "x=$T/empty.x.npy" --input "b=$T/empty.b.npy" -o "$T/empty.out" $ONCE >/dev/null
	$PY -c "
import numpy as np
t, s = (np.load('$T/empty.out/%s.npy' % y) for y in 'ts')
assert t.shape == (1, 0, 4) and s.shape == (0, 3, 4), (t.shape, s.shape)
print('empty Transpose and broadcast Add: shapes', t.shape, s.shape)"
}

# Split and Concat on the last axis, a float or two per row (raft_small's coordinates:
# rows copied as loads and stores, helpers.c), against numpy.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

x = np.random.default_rng(4).standard_normal((256, 7, 7, 5)).astype(np.float32)
nodes = [helper.make_node("Split", ["x", "sizes"], ["p", "q", "r"], axis=-1),
         helper.make_node("Concat", ["r", "p", "q"], ["y"], axis=-1)]
g = helper.make_graph(nodes, "rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [helper.make_tensor("sizes", TensorProto.INT64, [3], [1, 2, 2])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), f"{sys.argv[1]}/rows.onnx")
np.save(f"{sys.argv[1]}/rows.x.npy", x)
np.save(f"{sys.argv[1]}/rows.ref.npy", np.concatenate([x[..., 3:], x[..., :1], x[..., 1:3]], -1))
PYEOF
	"$HO" run "$T/rows.onnx" --input "x=$T/rows.x.npy" -o "$T/rows.out" $ONCE >/dev/null
	$PY "$ROOT/tests/runtime/compare.py" "$T/rows.ref.npy" "$T/rows.out/y.npy" "Split and Concat of small rows vs numpy"
}

# ConvTransposes reading the model's plain input, which oneDNN first gives its gemm kernel
# and the cpu backend retries blocked, their bias and ReLU after the kernel: with a bias,
# with a fused ReLU and none, grouped; against PyTorch's conv_transpose2d.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

cases = {"bias": (24, 24, 2, 2, 0, 1, True, False), "relu": (16, 8, 4, 2, 1, 1, False, True),
         "group": (32, 16, 3, 2, 1, 2, True, True)}
rng = np.random.default_rng(5)
for name, (ci, co, k, s, p, g, bias, relu) in cases.items():
    x = rng.standard_normal((1, ci, 20, 28)).astype(np.float32)
    w = rng.standard_normal((ci, co // g, k, k)).astype(np.float32) * 0.2
    b = rng.standard_normal(co).astype(np.float32)
    init = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if bias else [])
    nodes = [helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if bias else []),
                              ["c" if relu else "y"], strides=[s, s], pads=[p] * 4, group=g)]
    nodes += [helper.make_node("Relu", ["c"], ["y"])] if relu else []
    gr = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], init)
    onnx.save(helper.make_model(gr, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/ct_{name}.onnx")
    y = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w),
                                             torch.from_numpy(b) if bias else None, s, p, groups=g)
    np.save(f"{sys.argv[1]}/ct_{name}.x.npy", x)
    np.save(f"{sys.argv[1]}/ct_{name}.ref.npy", (torch.relu(y) if relu else y).numpy())
PYEOF
	for c in bias relu group; do
		"$HO" run "$T/ct_$c.onnx" --input "x=$T/ct_$c.x.npy" -o "$T/ct_$c.out" $ONCE >/dev/null
		$PY "$ROOT/tests/runtime/compare.py" "$T/ct_$c.ref.npy" "$T/ct_$c.out/y.npy" "ConvTranspose $c vs PyTorch"
	done
}

# Operators PyTorch spells out in pieces, made whole at load (user/graph/patterns.c): a
# LayerNorm over the last axis (its scale and bias shared through Identity nodes, as the
# exporter shares equal weights), a MatMul, its bias and an exact Gelu (folded, then a post-op
# of the MatMul), a 1x1 Conv and a Gelu (a post-op of the Conv), a second LayerNorm (its scale
# and bias Constant nodes, as paddle2onnx writes them: PP-OCRv4's recogniser), a 1x1 Conv
# and a hard-swish as paddle2onnx spells it (Add 3, Clip [0, 6], Mul x, Div 6: a post-op of
# the Conv once folded); and three near misses that stay as they are: a mean over a middle
# axis, a LayerNorm whose difference x - mean is a graph output too, and a clip to [0, 5].
# inspect counts what folded; the outputs against PyTorch's own layer_norm, gelu and
# hardswish.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)
F = lambda a: numpy_helper.from_array(np.asarray(a, np.float32))
nodes, inits = [], []
def const(name, v):
    nodes.append(helper.make_node("Constant", [], [name], value=F(v)))
def ln(x, y, g, b, axis=-1, d_out=None):
    n = lambda *a, **k: nodes.append(helper.make_node(*a, **k))
    n("ReduceMean", [x], [y + "m"], axes=[axis])
    n("Sub", [x, y + "m"], [d_out or y + "d"])
    d = d_out or y + "d"
    n("Pow", [d, "two"], [y + "p"])
    n("ReduceMean", [y + "p"], [y + "v"], axes=[axis])
    n("Add", [y + "v", "eps"], [y + "ve"])
    n("Sqrt", [y + "ve"], [y + "s"])
    n("Div", [d, y + "s"], [y + "n"])
    n("Mul", [y + "n", g], [y + "g"])
    n("Add", [y + "g", b], [y])
def hardswish(x, y, top="six"):
    nodes.extend([helper.make_node("Add", [x, "three"], [y + "a"]),
                  helper.make_node("Clip", [y + "a", "zero", top], [y + "c"]),
                  helper.make_node("Mul", [x, y + "c"], [y + "m"]), helper.make_node("Div", [y + "m", "six"], [y])])
def gelu(x, y):
    nodes.extend([helper.make_node("Div", [x, "sqrt2"], [y + "a"]), helper.make_node("Erf", [y + "a"], [y + "e"]),
                  helper.make_node("Add", [y + "e", "one"], [y + "b"]), helper.make_node("Mul", [x, y + "b"], [y + "c"]),
                  helper.make_node("Mul", [y + "c", "half"], [y])])
for name, v in (("two", 2.0), ("eps", 1e-5), ("sqrt2", np.sqrt(2.0)), ("one", 1.0), ("half", 0.5),
                ("three", 3.0), ("zero", 0.0), ("six", 6.0), ("five", 5.0)):
    const(name, v)
C = 24
g1, b1 = rng.standard_normal(C).astype(np.float32), rng.standard_normal(C).astype(np.float32)
w = (rng.standard_normal((C, C)) * 0.3).astype(np.float32)
bias = rng.standard_normal(C).astype(np.float32)
wc = (rng.standard_normal((C, C, 1, 1)) * 0.3).astype(np.float32)
inits += [numpy_helper.from_array(a, n) for a, n in ((g1, "g1"), (b1, "b1"), (w, "w"), (bias, "bias"), (wc, "wc"))]
nodes += [helper.make_node("Identity", ["g1"], ["g1i"]), helper.make_node("Identity", ["b1"], ["b1i"])]
ln("x", "h1", "g1i", "b1i")
nodes += [helper.make_node("MatMul", ["h1", "w"], ["mm"]), helper.make_node("Add", ["mm", "bias"], ["mb"])]
gelu("mb", "h2")
const("g1c", g1)  # the second LayerNorm's scale and bias as Constant nodes (paddle2onnx's way)
const("b1c", b1)
ln("h2", "y", "g1c", "b1c")
# [2, 24, 5, 7] for the Conv: channels as axis 1
nodes += [helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 3, 1, 2]),
          helper.make_node("Conv", ["yt", "wc"], ["cv"])]
gelu("cv", "z")
wh = (rng.standard_normal((C, C, 1, 1)) * 0.8).astype(np.float32)
inits.append(numpy_helper.from_array(wh, "wh"))
nodes.append(helper.make_node("Conv", ["yt", "wh"], ["ch"]))
hardswish("ch", "hs")
hardswish("x", "hs5", top="five")
ln("x", "mid", "g5", "b5", axis=1)
ln("x", "kept", "g1", "b1", d_out="diff")
g5, b5 = rng.standard_normal((2, 5, 1, 1)).astype(np.float32)
inits += [numpy_helper.from_array(g5, "g5"), numpy_helper.from_array(b5, "b5")]
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z", "mid", "kept", "diff", "hs", "hs5")]
gr = helper.make_graph(nodes, "folds", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 7, C])], outs, inits)
onnx.save(helper.make_model(gr, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/folds.onnx")
x = rng.standard_normal((2, 5, 7, C)).astype(np.float32)
np.save(f"{sys.argv[1]}/folds.x.npy", x)
t = lambda a: torch.from_numpy(a)
L = lambda a, g, b: torch.nn.functional.layer_norm(a, (a.shape[-1],), g, b, 1e-5)
X = t(x)
h2 = torch.nn.functional.gelu(L(X, t(g1), t(b1)) @ t(w) + t(bias))
Y = L(h2, t(g1), t(b1))
Z = torch.nn.functional.gelu(torch.nn.functional.conv2d(Y.permute(0, 3, 1, 2), t(wc)))
MID = (X - X.mean(1, keepdim=True)) / torch.sqrt(X.var(1, unbiased=False, keepdim=True) + 1e-5) * t(g5) + t(b5)
HS = torch.nn.functional.hardswish(torch.nn.functional.conv2d(Y.permute(0, 3, 1, 2), t(wh)))
HS5 = X * torch.clamp(X + 3, 0, 5) / 6
for n, v in (("y", Y), ("z", Z), ("mid", MID), ("kept", L(X, t(g1), t(b1))), ("diff", X - X.mean(-1, keepdim=True)),
             ("hs", HS), ("hs5", HS5)):
    np.save(f"{sys.argv[1]}/folds.{n}.npy", v.numpy())
# the same hard-swish before opset 11, its Clip's bounds attributes (PP-OCRv4's recogniser)
nodes = [helper.make_node("Constant", [], [k], value=F(v)) for k, v in (("three", 3.0), ("six", 6.0))]
nodes += [helper.make_node("Conv", ["x9", "wh"], ["c9"]), helper.make_node("Add", ["c9", "three"], ["a9"]),
          helper.make_node("Clip", ["a9"], ["k9"], min=0.0, max=6.0), helper.make_node("Mul", ["c9", "k9"], ["m9"]),
          helper.make_node("Div", ["m9", "six"], ["hs9"])]
gr = helper.make_graph(nodes, "hs9", [helper.make_tensor_value_info("x9", TensorProto.FLOAT, [2, C, 5, 7])],
                       [helper.make_tensor_value_info("hs9", TensorProto.FLOAT, None)], [numpy_helper.from_array(wh, "wh")])
onnx.save(helper.make_model(gr, opset_imports=[helper.make_opsetid("", 9)]), f"{sys.argv[1]}/hs9.onnx")
x9 = rng.standard_normal((2, C, 5, 7)).astype(np.float32)
np.save(f"{sys.argv[1]}/hs9.x.npy", x9)
np.save(f"{sys.argv[1]}/hs9.ref.npy", torch.nn.functional.hardswish(torch.nn.functional.conv2d(t(x9), t(wh))).numpy())
PYEOF
	"$HO" inspect "$T/folds.onnx" >"$T/folds.txt"
	grep -q "LayerNormalization:2 " "$T/folds.txt" && grep -q "Gelu:2 " "$T/folds.txt" &&
		grep -q "HardSwish:1 " "$T/folds.txt" && grep -q "Clip:1 " "$T/folds.txt" ||
		{ echo "folds: not the two LayerNorms, two Gelus and one HardSwish expected"; grep "^ops" "$T/folds.txt"; exit 1; }
	"$HO" run "$T/folds.onnx" --input "x=$T/folds.x.npy" -o "$T/folds.out" >"$T/folds.log"
	grep -q "run: 4 nodes folded" "$T/folds.log" ||
		{ echo "folds: the bias, the Gelus and the HardSwish are not in their kernels"; cat "$T/folds.log"; exit 1; }
	for o in y z mid kept diff hs hs5; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/folds.$o.npy" "$T/folds.out/$o.npy" "folded $o vs PyTorch"
	done
	"$HO" inspect "$T/hs9.onnx" | grep -Eq "HardSwish:1( |$)" || { echo "folds: opset 9's hard-swish not folded"; exit 1; }
	"$HO" run "$T/hs9.onnx" --input "x9=$T/hs9.x.npy" -o "$T/hs9.out" $ONCE >/dev/null
	$PY "$ROOT/tests/runtime/compare.py" "$T/hs9.ref.npy" "$T/hs9.out/hs9.npy" "folded opset 9 hard-swish vs PyTorch"
}

# A scale and shift by constants after a Conv folded into its weights and bias at load
# (user/graph/conv_affine.c): PaddlePaddle's Mul by a scalar (written first) then Add of
# one before a hard-swish (all three into the Conv's kernel), a per-channel Mul then a
# Div by a scalar with no bias, a Sub of a per-channel constant; and the near misses that
# stay: an Add with no bias to take it (its Mul folds), a weight two Convs share, a Conv
# whose output is a graph output too, a constant along the width, a constant minus the
# map.  Before a Conv: a scalar Mul and Add before a 1x1 (both fold), a Mul and an Add
# before a grouped 3x3 that pads nothing (both fold), the same before one that pads (stay:
# a padded zero is no shifted value), a Mul alone before one that pads (folds), and a Mul
# per channel (stays: before shapes are inferred it could be what widens a map of one
# channel).  inspect's counts, and every output against PyTorch.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(13)
C, H, W = 16, 9, 11
F = lambda a, n: numpy_helper.from_array(np.asarray(a, np.float32), n)
r = lambda *s: rng.standard_normal(s).astype(np.float32)
w = {k: r(C, C, 3, 3) * 0.2 for k in ("w1", "w2", "w3", "w4", "ws", "w6", "w7", "w8")}
b = {k: r(C) for k in ("b1", "b4", "b6")}
k = {"s1": r(1), "a1": r(1), "s2": r(1, C, 1, 1), "d2": np.array([2.5], np.float32), "s3": r(1), "a3": r(1),
     "a4": r(C, 1, 1), "s5": r(1), "s6": r(1), "s7": r(1, 1, 1, W), "a8": r(1), "three": np.float32(3),
     "zero": np.float32(0), "six": np.float32(6), "s9": r(1), "a9": r(1), "s10": r(1), "a10": r(1),
     "s11": r(1), "a11": r(1), "s12": r(1), "s13": r(1, C, 1, 1)}
w.update({"w9": r(C, C, 1, 1) * 0.3, "w10": r(C, C // 4, 3, 3) * 0.3, "w11": r(C, C, 3, 3) * 0.2,
          "w12": r(C, C, 3, 3) * 0.2, "w13": r(C, C, 1, 1) * 0.3})
b.update({"b9": r(C), "b10": r(C), "b11": r(C)})
n = lambda *a, **kw: helper.make_node(*a, **kw)
nodes = [n("Constant", [], [c], value=F(v, c)) for c, v in k.items()]
pad = dict(pads=[1, 1, 1, 1])
nodes += [n("Conv", ["x", "w1", "b1"], ["c1"], **pad), n("Mul", ["s1", "c1"], ["m1"]), n("Add", ["m1", "a1"], ["f1"]),
          n("Add", ["f1", "three"], ["h1a"]), n("Clip", ["h1a", "zero", "six"], ["h1c"]),
          n("Mul", ["f1", "h1c"], ["h1m"]), n("Div", ["h1m", "six"], ["y1"]),
          n("Conv", ["x", "w2"], ["c2"], **pad), n("Mul", ["c2", "s2"], ["m2"]), n("Div", ["m2", "d2"], ["y2"]),
          n("Conv", ["x", "w3"], ["c3"], **pad), n("Mul", ["c3", "s3"], ["m3"]), n("Add", ["m3", "a3"], ["y3"]),
          n("Conv", ["x", "w4", "b4"], ["c4"], **pad), n("Sub", ["c4", "a4"], ["y4"]),
          n("Conv", ["x", "ws"], ["c5"], **pad), n("Mul", ["c5", "s5"], ["y5"]), n("Conv", ["x", "ws"], ["y5b"]),
          n("Conv", ["x", "w6", "b6"], ["c6"], **pad), n("Mul", ["c6", "s6"], ["y6"]),
          n("Conv", ["x", "w7"], ["c7"], **pad), n("Mul", ["c7", "s7"], ["y7"]),
          n("Conv", ["x", "w8"], ["c8"], **pad), n("Sub", ["a8", "c8"], ["y8"]), n("Relu", ["x"], ["xr"]),
          n("Mul", ["xr", "s9"], ["m9"]), n("Add", ["a9", "m9"], ["p9"]), n("Conv", ["p9", "w9", "b9"], ["y9"]),
          n("Mul", ["s10", "xr"], ["m10"]), n("Add", ["m10", "a10"], ["p10"]),
          n("Conv", ["p10", "w10", "b10"], ["y10"], group=4),
          n("Mul", ["xr", "s11"], ["m11"]), n("Add", ["m11", "a11"], ["p11"]),
          n("Conv", ["p11", "w11", "b11"], ["y11"], **pad),
          n("Mul", ["xr", "s12"], ["m12"]), n("Conv", ["m12", "w12"], ["y12"], **pad),
          n("Mul", ["xr", "s13"], ["m13"]), n("Conv", ["m13", "w13"], ["y13"])]
outs = ["y1", "y2", "y3", "y4", "y5", "y5b", "c6", "y6", "y7", "y8", "y9", "y10", "y11", "y12", "y13"]
gr = helper.make_graph(nodes, "affine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, C, H, W])],
                       [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs],
                       [F(v, n_) for n_, v in {**w, **b}.items()])
onnx.save(helper.make_model(gr, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/affine.onnx")
x = r(2, C, H, W)
np.save(f"{sys.argv[1]}/affine.x.npy", x)
t = torch.from_numpy
cv = lambda wk, bk=None, p=1, inp=x, **kw: torch.nn.functional.conv2d(t(np.asarray(inp, np.float32)), t(w[wk]),
                                                                    t(b[bk]) if bk else None, padding=p, **kw)
xr = np.maximum(x, 0)
K = {c: t(np.asarray(v)) for c, v in k.items()}
ref = {"y1": torch.nn.functional.hardswish(K["s1"] * cv("w1", "b1") + K["a1"]), "y2": cv("w2") * K["s2"] / K["d2"],
       "y3": cv("w3") * K["s3"] + K["a3"], "y4": cv("w4", "b4") - K["a4"], "y5": cv("ws") * K["s5"],
       "y5b": cv("ws", p=0), "c6": cv("w6", "b6"), "y6": cv("w6", "b6") * K["s6"], "y7": cv("w7") * K["s7"],
       "y8": K["a8"] - cv("w8"), "y9": cv("w9", "b9", 0, xr * k["s9"] + k["a9"]),
       "y10": cv("w10", "b10", 0, xr * k["s10"] + k["a10"], groups=4), "y11": cv("w11", "b11", 1, xr * k["s11"] + k["a11"]),
       "y12": cv("w12", None, 1, xr * k["s12"]), "y13": cv("w13", None, 0, xr * k["s13"])}
for o, v in ref.items():
    np.save(f"{sys.argv[1]}/affine.{o}.npy", v.numpy())
PYEOF
	"$HO" inspect "$T/affine.onnx" >"$T/affine.txt"
	$PY - "$T/affine.txt" <<'PYEOF'
import sys
ops = dict(p.split(":") for l in open(sys.argv[1]) if l.startswith("ops") for p in l.split()[1:])
want = {"Conv": "14", "HardSwish": "1", "Add": "2", "Mul": "5", "Sub": "1", "Relu": "1"}
got = {o: c for o, c in ops.items() if o != "Constant"}
assert got == want, f"affine folds: ops {got}, expected {want}"
print("affine folds:", " ".join(f"{o}:{c}" for o, c in got.items()))
PYEOF
	"$HO" run "$T/affine.onnx" --input "x=$T/affine.x.npy" -o "$T/affine.out" $ONCE >/dev/null
	for o in y1 y2 y3 y4 y5 y5b c6 y6 y7 y8 y9 y10 y11 y12 y13; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/affine.$o.npy" "$T/affine.out/$o.npy" "affine $o vs PyTorch"
	done
}

# Residual Adds folded into the Conv before them (oneDNN's sum: the result added into the
# shortcut's bytes, which become the block's output), as PyTorch exports them: an identity
# block (its Add and Relu fold), a projection block (its shortcut's Conv runs beside the
# block: stays), a shortcut read again after the block (stays), and a dense 3x3 (keeps
# Winograd: stays).  Exactly two nodes fold beyond the stem's and the block's first Relu; the outputs
# against PyTorch's at one and two threads.
[ "$PART" = ort ] || {
	$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import torch

torch.manual_seed(5)
C = 32
conv = lambda k, **kw: torch.nn.Conv2d(C, C, k, padding=k // 2, **kw)
class Blocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.s, self.a1, self.a2, self.bn = conv(1), conv(3), conv(1), torch.nn.BatchNorm2d(C)
        self.b, self.p, self.c, self.d = conv(1), conv(1), conv(1), conv(3)
    def forward(self, x):
        x = torch.relu(self.s(x))                                        # a stem
        y1 = torch.relu(self.bn(self.a2(torch.relu(self.a1(x)))) + x)  # identity: folds
        y2 = torch.relu(self.b(y1) + self.p(y1))                        # projection: stays
        y3 = torch.relu(self.c(y2) + y2)                                # y2 read after: stays
        return torch.relu(self.d(y3) + y3), y2 * 2.0                    # dense 3x3: stays
m = Blocks().eval()
with torch.no_grad():
    m.bn.running_mean.uniform_(-0.5, 0.5)
    m.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(1, C, 20, 24)
    y, z = m(x)
torch.onnx.export(m, x, f"{sys.argv[1]}/residual.onnx", input_names=["x"], output_names=["y", "z"],
                  opset_version=13)
np.save(f"{sys.argv[1]}/residual.x.npy", x.numpy())
np.save(f"{sys.argv[1]}/residual.y.npy", y.numpy())
np.save(f"{sys.argv[1]}/residual.z.npy", z.numpy())
PYEOF
	for th in 1 2; do
		"$HO" run "$T/residual.onnx" --input "x=$T/residual.x.npy" -o "$T/residual.$th" \
			--threads $th >"$T/residual.log"
		grep -q "run: 4 nodes folded" "$T/residual.log" ||
			{ echo "residual: not the identity block's Add and Relu (and two Relus) folded"; cat "$T/residual.log"; exit 1; }
		for o in y z; do
			$PY "$ROOT/tests/runtime/compare.py" "$T/residual.$o.npy" "$T/residual.$th/$o.npy" \
				"residual blocks' $o vs PyTorch ($th threads)"
		done
	done
}

# A Conv then a training-mode BatchNormalization: once folded into the Conv as if it were
# inference, 3.7x off PyTorch.
[ "$PART" = ort ] || {
	"$HO" run "$M/conv_bn_training.onnx" --input "x=$M/conv_bn_training.ref_in.npy" -o "$T/bnt" >/dev/null
	$PY "$ROOT/tests/runtime/compare.py" "$M/conv_bn_training.ref_out.npy" "$T/bnt/y.npy" "conv_bn_training vs PyTorch"
}

# Unsigned weights with zero points oneDNN's int8 kernels do not take (143 per tensor; per
# channel, grouped, strided): made good after them, and exact.
[ "$PART" = ort ] || {
	$PY "$ROOT/tests/runtime/int8_ref.py" "$M/int8_asym.onnx" "$M/int8_asym.in.npy" "$T/a8.np"
	"$HO" run "$M/int8_asym.onnx" --input "x=$M/int8_asym.in.npy" -o "$T/a8.ho" >/dev/null
	for f in y1 y2; do
		$PY "$ROOT/tests/runtime/compare.py" "$T/a8.np/$f.npy" "$T/a8.ho/$f.npy" "int8_asym $f vs the exact reference" 0
	done
}

[ "$PART" != pytorch ] || exit 0
[ -d "$ORT_NODE_MODULE" ] || { echo "skipped: onnxruntime-node not in $ORT_NODE_MODULE"; exit 77; }
# A page the models can read: dark text-like bars on white, normalised as
# PaddleOCR does.  (On noise the detector's map is all ~1e-7, where ONNX
# Runtime's fast sigmoid itself is off by 1e-7: no test of anything.)
ocr() { # ocr MODEL SHAPE [one-way-quick]: four ways, or one CPU device alone in make test
	[ -s "$1" ] || { echo "skipped: $1 not present (scripts/models.sh makes or fetches it)"; return 0; }
	name=$(basename "$1" .onnx)
	$PY - "$T/$name.in.npy" "$2" <<'PYEOF'
import sys
import numpy as np
shape = [int(v) for v in sys.argv[2].split(",")]
h, w = shape[2], shape[3]
rng = np.random.default_rng(7)
img = np.ones((h, w, 3), np.float32)
for _ in range(max(1, h // 24)):
    y, x = rng.integers(0, h - 8), rng.integers(0, w // 2)
    img[y:y + max(4, h // 16), x:x + rng.integers(w // 8, w // 2)] = rng.random(3) * 0.3
img += rng.normal(0, 0.02, img.shape).astype(np.float32)
x = ((img - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).astype(np.float32)
np.save(sys.argv[1], np.ascontiguousarray(x.transpose(2, 0, 1)[None].repeat(shape[0], 0)))
PYEOF
	node "$ROOT/tests/runtime/ort_ref.js" "$1" "$T/$name.ort" "x=$T/$name.in.npy"
	if [ "${HO_TEST_QUICK:-0}" = 1 ] && [ "${3:-}" = one-way-quick ]; then
		"$HO" run "$1" --input "x=$T/$name.in.npy" -o "$T/$name.ho.1" $ONCE >/dev/null
		against_ort "$T/$name.ort" "$T/$name.ho" "$name $2" one-cpu
		return
	fi
	ways "$1" x "$(echo "$2" | tr , x)" "$T/$name.in.npy" "$T/$name.ho"
	against_ort "$T/$name.ort" "$T/$name.ho" "$name $2"
}
against_ort() { # against_ort ORT_DIR HO_PREFIX WHAT [WAYS]: every ORT output against the ways
	for ref in "$1"/*.npy; do
		i=1
		for w in ${4:-$WAYS}; do
			$PY "$ROOT/tests/runtime/compare.py" "$ref" "$2.$i/$(basename "$ref")" "$3 $w vs ONNX Runtime"
			i=$((i + 1))
		done
	done
}
# vs_ort MODEL BOUND NAME=FILE...: one run on one CPU device, every output against ONNX
# Runtime's within BOUND of its largest magnitude (compare.py)
vs_ort() {
	model=$1 bound=$2
	shift 2
	node "$ROOT/tests/runtime/ort_ref.js" "$M/$model.onnx" "$T/$model.ort" "$@"
	for a in "$@"; do set -- "$@" --input "$a"; shift; done
	"$HO" run "$M/$model.onnx" "$@" -o "$T/$model.ho" $ONCE >/dev/null
	for ref in "$T/$model.ort"/*.npy; do
		$PY "$ROOT/tests/runtime/compare.py" "$ref" "$T/$model.ho/$(basename "$ref")" \
			"$model $(basename "$ref" .npy) vs ONNX Runtime" "$bound"
	done
}
ocr "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" "1,3,48,192"
# (in make test's quick loop on one CPU device only: its four ways took 6 s)
ocr "$M/ch_PP-OCRv4_det_infer.onnx" "1,3,640,640" one-way-quick
# The recogniser (SVTR: attention, ReduceMean-based norms, Pow, Slice).
ocr "$M/ch_PP-OCRv4_rec_infer.onnx" "1,3,48,320"
# A transformer encoder (LayerNormalization, Gather, Slice, MatMul, Softmax), its
# MatMuls on the emulator in the fourth way.
$PY -c "import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(3).standard_normal((1, 32, 256)).astype(np.float32))" "$T/tr.in.npy"
node "$ROOT/tests/runtime/ort_ref.js" "$M/transformer_encoder.onnx" "$T/tr.ort" "src=$T/tr.in.npy"
ways "$M/transformer_encoder.onnx" src 1x32x256 "$T/tr.in.npy" "$T/tr.ho" MatMul
against_ort "$T/tr.ort" "$T/tr.ho" "transformer_encoder 1,32,256"
# Transpose and Slice, run as index maps: a last axis gathered with a stride,
# negative and non-unit steps, the default perm.  Pure data movement: exact.
$PY -c "import sys, numpy as np; np.save(sys.argv[1], np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5))" "$T/ix.in.npy"
vs_ort index_ops 0 "x=$T/ix.in.npy"
# Two-input element-wise ops on channels-last maps of 24 channels: one value per
# channel on either side of Add, Sub, Mul and Div, and scalars (flat kernels).
$PY -c "import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(4).standard_normal((1, 24, 11, 11)).astype(np.float32))" "$T/bl.in.npy"
vs_ort binary_layouts 1e-4 "x=$T/bl.in.npy"
# Global pools of NCHW rows, the cpu backend's own loop: whole blocks of vectors, a
# vector, a tail of lanes; values drawn so that no two rows share a maximum's place.
$PY -c "
import sys, numpy as np
r = np.random.default_rng(6)
np.save(sys.argv[1], (r.standard_normal((2, 5, 13, 11)) * 4).astype(np.float32))
np.save(sys.argv[2], (r.standard_normal((1, 3, 9, 9)) * 4).astype(np.float32))" "$T/gp.x.npy" "$T/gp.z.npy"
vs_ort global_pools 1e-6 "x=$T/gp.x.npy" "z=$T/gp.z.npy"
# NCHW to NHWC and back as tiled transposes, tiles cut short on both axes: exact.
$PY -c "
import sys, numpy as np
r = np.random.default_rng(7)
np.save(sys.argv[1], r.standard_normal((2, 20, 9, 11)).astype(np.float32))
np.save(sys.argv[2], r.standard_normal((2, 9, 11, 20)).astype(np.float32))" "$T/tp.x.npy" "$T/tp.z.npy"
vs_ort transposes 0 "x=$T/tp.x.npy" "z=$T/tp.z.npy"
# Pad on channels-last maps (between 1x1 convolutions), as the same array in NHWC order:
# constant (with a crop), reflect and edge, pads on every axis.
$PY -c "import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(8).standard_normal((1, 24, 9, 11)).astype(np.float32))" "$T/pl.in.npy"
vs_ort pad_layouts 1e-4 "x=$T/pl.in.npy"
# Erf and Gelu as vectors, and Gelu's tanh form (oneDNN's): against ONNX Runtime within
# 1e-6 of erf's range (its own erf is a polynomial too), at zero, in both tails and past
# them, with a tail of lanes.
$PY -c "
import sys, numpy as np
x = np.concatenate([np.linspace(-6, 6, 105), [0.0, -0.0, 1e-30, 3.999, 4.001, 9.0]]).astype(np.float32)
np.save(sys.argv[1], x.reshape(3, 37))" "$T/eg.in.npy"
vs_ort erf_gelu 1e-6 "x=$T/eg.in.npy"
# An int8 CNN in ONNX's QLinear form (per-channel weights, a grouped strided
# convolution, an unsigned-weight QLinearMatMul) and a ConvInteger with
# asymmetric pads: every tensor, the integer ones too, equal to the exact
# NumPy reference, and to ONNX Runtime's where its kernels are exact: on a
# CPU without VNNI its u8s8 sums saturate at 16 bits (vpmaddubsw), as
# oneDNN's do (seen on an AMD EPYC with AVX2: 3% of q2's range off).
$PY "$ROOT/tests/runtime/int8_ref.py" "$M/int8_cnn.onnx" "$M/int8_cnn.in.npy" "$T/q8.np"
node "$ROOT/tests/runtime/ort_ref.js" "$M/int8_cnn.onnx" "$T/q8.ort" "x=$M/int8_cnn.in.npy"
"$HO" run "$M/int8_cnn.onnx" --input "x=$M/int8_cnn.in.npy" -o "$T/q8.ho" >/dev/null
vnni=$(grep -qwE 'avx512_vnni|avx_vnni' /proc/cpuinfo && echo 1 || echo 0)
for ref in "$T/q8.np"/*.npy; do
	f=$(basename "$ref")
	$PY "$ROOT/tests/runtime/compare.py" "$ref" "$T/q8.ho/$f" "int8_cnn ${f%.npy} vs the exact reference" 0
	if [ "$vnni" = 1 ]; then
		$PY "$ROOT/tests/runtime/compare.py" "$T/q8.ort/$f" "$T/q8.ho/$f" "int8_cnn ${f%.npy} vs ONNX Runtime" 0
	else
		$PY "$ROOT/tests/runtime/compare.py" "$ref" "$T/q8.ort/$f" "(ONNX Runtime without VNNI, not checked) ${f%.npy}" 1 || :
	fi
done
# Sums past 2^24, which float32 kernels would round: exact too.
$PY "$ROOT/tests/runtime/int8_ref.py" "$M/int8_wide.onnx" "$M/int8_wide.in.npy" "$T/w8.np"
"$HO" run "$M/int8_wide.onnx" --input "x=$M/int8_wide.in.npy" -o "$T/w8.ho" >/dev/null
for ref in "$T/w8.np"/*.npy; do
	f=$(basename "$ref")
	$PY "$ROOT/tests/runtime/compare.py" "$ref" "$T/w8.ho/$f" "int8_wide ${f%.npy} vs the exact reference" 0
done
# The detectors through ONNX Runtime: its detections are PyTorch's as well (the reference holds
# for a second runtime: its weights were drawn so that rounding decides nothing).
[ "${HO_TEST_QUICK:-0}" = 1 ] || for m in $(sh "$ROOT/tests/models/zoo_list.sh" detect); do
	node "$ROOT/tests/runtime/ort_ref.js" "$M/$m.onnx" "$T/$m.ort" "input=$M/$m.ref_in.npy" >/dev/null
	$PY "$ROOT/tests/runtime/compare_detections.py" "$M/$m.ref_out.npy" "$T/$m.ort" "$m ONNX Runtime vs PyTorch"
done
# make test's quick loop (HO_TEST_QUICK=1, two minutes in all) stops here; make check goes on.
[ "${HO_TEST_QUICK:-0}" = 1 ] && exit 0
# Models shipped in float16 (as converters write them): computed in float32 (user/graph/widen.c),
# their float16 outputs against ONNX Runtime's within float16's rounding.
for m in $(sh "$ROOT/tests/models/zoo_list.sh" fp16); do
	"$HO" inspect "$M/${m}_fp16.onnx" | grep -q "precision  float16 weights: computed in float32" ||
		{ echo "$m: inspect does not say its float16 is computed in float32"; exit 1; }
	"$HO" run "$M/${m}_fp16.onnx" --input "input=$M/${m}_fp16.ref_in.npy" -o "$T/$m.h16" --repeat 1 >/dev/null
	node "$ROOT/tests/runtime/ort_ref.js" "$M/${m}_fp16.onnx" "$T/$m.o16" "input=$M/${m}_fp16.ref_in.npy" >/dev/null
	$PY -c "import numpy as n, sys; sys.exit(n.load('$T/$m.h16/logits.npy').dtype != n.float16 and 'not float16')"
	$PY "$ROOT/tests/runtime/compare.py" "$T/$m.o16/logits.npy" "$T/$m.h16/logits.npy" "$m float16 vs ONNX Runtime" 1e-3
done
# Opset 23's Attention, RMSNormalization and RotaryEmbedding against ONNX Runtime 1.30:
# multi-head and grouped-query, rank 4 and rank 3, causal, a float mask with softcap, a
# boolean one, past keys and values with every output, qk_matmul_output after the mask and
# after softmax; rotations whole, partial and interleaved, by position ids; opset 21's
# GroupNormalization (a scale and bias per channel); and opset 18's bitwise operators.
$PY - "$T/o23" <<'PYEOF'
import os, sys
import numpy as np, onnx
from onnx import helper as h, TensorProto as P
d = sys.argv[1]
os.makedirs(d)
rng = np.random.default_rng(23)
def case(name, op, inputs, attrs={}, outs=("Y",), boolmask=False, dtype=np.float32):
    et = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    vi = [h.make_tensor_value_info(n, P.BOOL if n == "mask" and boolmask else et, s) for n, s in inputs]
    g = h.make_graph([h.make_node(op, [n for n, _ in inputs], list(outs), **attrs)], name, vi,
                     [h.make_tensor_value_info(o, et, None) for o in outs if o])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    m.ir_version = 10  # onnx 1.12 writes 8, which ONNX Runtime refuses for opset 23
    onnx.save(m, f"{d}/{name}.onnx")
    with open(f"{d}/{name}.bound", "w") as f:  # integers exactly
        f.write("1e-5" if dtype == np.float32 else "0")
    with open(f"{d}/{name}.args", "w") as f:
        for n, s in inputs:
            v = (rng.random(s) > 0.3 if n == "mask" and boolmask else
                 rng.standard_normal(s).astype(np.float32) if dtype == np.float32 else
                 rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, s, dtype=dtype, endpoint=True))
            np.save(f"{d}/{name}.{n}.npy", v)
            f.write(f"{n}={d}/{name}.{n}.npy\n")
case("mha4", "Attention", [("Q", [2, 4, 5, 8]), ("K", [2, 4, 7, 8]), ("V", [2, 4, 7, 6])])
case("gqa3_causal", "Attention", [("Q", [2, 5, 32]), ("K", [2, 5, 16]), ("V", [2, 5, 16])],
     {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1, "scale": 0.3})
case("softcap_mask", "Attention", [("Q", [1, 2, 4, 8]), ("K", [1, 2, 6, 8]), ("V", [1, 2, 6, 8]), ("mask", [4, 6])],
     {"softcap": 2.0, "qk_matmul_output_mode": 2}, outs=("Y", "", "", "qk"))
case("bool_mask", "Attention", [("Q", [1, 2, 4, 8]), ("K", [1, 2, 6, 8]), ("V", [1, 2, 6, 8]), ("mask", [1, 2, 4, 6])],
     {"qk_matmul_output_mode": 3}, outs=("Y", "", "", "qk"), boolmask=True)
case("past_causal", "Attention", [("Q", [1, 2, 3, 8]), ("K", [1, 2, 3, 8]), ("V", [1, 2, 3, 8]), ("mask", [3, 7]),
     ("pk", [1, 2, 4, 8]), ("pv", [1, 2, 4, 8])], {"is_causal": 1}, outs=("Y", "present_key", "present_value", "qk"))
case("rms_last", "RMSNormalization", [("X", [2, 5, 16]), ("scale", [16])], {"epsilon": 1e-3})
case("rms_axis1", "RMSNormalization", [("X", [2, 3, 4, 5]), ("scale", [3, 4, 5])], {"axis": 1})
case("rope4", "RotaryEmbedding", [("X", [2, 3, 5, 8]), ("cos", [2, 5, 4]), ("sin", [2, 5, 4])])
case("rope3_part", "RotaryEmbedding", [("X", [2, 5, 24]), ("cos", [2, 5, 2]), ("sin", [2, 5, 2])],
     {"num_heads": 3, "rotary_embedding_dim": 4, "interleaved": 1})
case("gn21", "GroupNormalization", [("X", [2, 6, 4, 5]), ("scale", [6]), ("bias", [6])], {"num_groups": 3})
case("gn21_1d", "GroupNormalization", [("X", [3, 8, 7]), ("scale", [8]), ("bias", [8])],
     {"num_groups": 2, "epsilon": 1e-2})
# opset 18's bitwise operators, on the integer types, broadcasting
case("band_i32", "BitwiseAnd", [("A", [3, 4]), ("B", [4])], dtype=np.int32)
case("bor_i64", "BitwiseOr", [("A", [2, 3]), ("B", [2, 1])], dtype=np.int64)
case("bxor_u8", "BitwiseXor", [("A", [5]), ("B", [5])], dtype=np.uint8)
case("bnot_i8", "BitwiseNot", [("X", [2, 5])], dtype=np.int8)
case("bnot_u16", "BitwiseNot", [("X", [7])], dtype=np.uint16)
# positions as a model feeds them: int64, into caches of 16 positions
case("rope_pos", "RotaryEmbedding", [("X", [1, 2, 4, 8]), ("cos", [16, 4]), ("sin", [16, 4])])
g = onnx.load(f"{d}/rope_pos.onnx")
g.graph.input.append(h.make_tensor_value_info("pos", P.INT64, [1, 4]))
g.graph.node[0].input.append("pos")
onnx.save(g, f"{d}/rope_pos.onnx")
np.save(f"{d}/rope_pos.pos.npy", np.array([[3, 0, 15, 7]], np.int64))
with open(f"{d}/rope_pos.args", "a") as f:
    f.write(f"pos={d}/rope_pos.pos.npy\n")
PYEOF
for c in mha4 gqa3_causal softcap_mask bool_mask past_causal rms_last rms_axis1 rope4 rope3_part rope_pos \
	gn21 gn21_1d band_i32 bor_i64 bxor_u8 bnot_i8 bnot_u16; do
	ins=$(sed 's/^/--input /' "$T/o23/$c.args" | tr '\n' ' ')
	"$HO" run "$T/o23/$c.onnx" $ins -o "$T/o23/$c.ho" --repeat 1 >/dev/null
	node "$ROOT/tests/runtime/ort_ref.js" "$T/o23/$c.onnx" "$T/o23/$c.ort" $(cat "$T/o23/$c.args") >/dev/null
	for o in "$T/o23/$c.ort"/*.npy; do
		$PY "$ROOT/tests/runtime/compare.py" "$o" "$T/o23/$c.ho/$(basename "$o")" \
			"$c $(basename "$o" .npy) vs ONNX Runtime" "$(cat "$T/o23/$c.bound")"
	done
done
# ... and a position past the caches fails the run, naming the node
$PY -c "import numpy as n; n.save('$T/o23/far.npy', n.array([[3, 0, 16, 7]], n.int64))"
if "$HO" run "$T/o23/rope_pos.onnx" $(sed 's/^pos=.*//; s/^./--input &/' "$T/o23/rope_pos.args") \
	--input "pos=$T/o23/far.npy" -o "$T/o23/far" 2>"$T/o23/far.err"; then
	echo "RotaryEmbedding at position 16 of 16 ran"; exit 1
fi
grep -q "node 'RotaryEmbedding_0' (RotaryEmbedding): an index is out of range" "$T/o23/far.err" ||
	{ echo "RotaryEmbedding past its caches: $(cat "$T/o23/far.err")"; exit 1; }
