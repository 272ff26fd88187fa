#!/bin/sh
# run --precision int8: convolutions quantized on oneDNN's int8 kernels (the input by its
# calibrated range, u8 or s8; the weights per output channel, s8), int32 sums scaled back
# to float32.  What is refused, each in one line: int8 where oneDNN finds no VNNI or AMX
# (ONEDNN_MAX_CPU_ISA holds it back), an unknown range rule, calibration files of the
# wrong shape or type or for no input, --calibrate without int8; a model already
# quantized with a scale of 0 or NaN, at load.  Then, where the CPU has it: a model of
# three convolutions (s8 and u8 inputs, a grouped one, biases, padding, stride) against
# the same quantization done exactly in NumPy, on its own input and on three
# calibration samples, and two products by weights the same way; resnet18 against
# PyTorch; --sensitivity int8; the plan int8 writes (DIR/precision.json) run again, the
# same bytes with no calibration, and plans for another model or not plans refused.
# usage: test_int8.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# three convolutions: A (x has negatives: s8) 8>16 3x3 pad 1 with a bias, Relu; B (u8)
# 16>16 3x3 stride 2 in 4 groups with a bias; C 16>8 1x1, no bias
$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
r = np.random.default_rng(11)
w = {"wa": r.standard_normal((16, 8, 3, 3)) * 0.3, "ba": r.standard_normal(16) * 0.5,
     "wb": r.standard_normal((16, 4, 3, 3)) * 0.3, "bb": r.standard_normal(16) * 0.5,
     "wc": r.standard_normal((8, 16, 1, 1)) * 0.3}
w["wa"][3] *= 40  # a channel far larger than the others: per-channel scales matter
nodes = [
    helper.make_node("Conv", ["x", "wa", "ba"], ["a"], name="A", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["a"], ["ar"], name="A_relu"),
    helper.make_node("Conv", ["ar", "wb", "bb"], ["b"], name="B", pads=[1, 1, 1, 1],
                     strides=[2, 2], group=4),
    helper.make_node("Conv", ["b", "wc"], ["y"], name="C"),
]
g = helper.make_graph(nodes, "int8", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 20, 20])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                      [numpy_helper.from_array(v.astype(np.float32), k) for k, v in w.items()])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), d + "/three.onnx")
np.save(d + "/x.npy", r.standard_normal((1, 8, 20, 20)).astype(np.float32))
# two products by weights: a MatMul with its bias Add (s8 input), Relu, a Gemm of
# transposed weights and a bias (u8 input)
lw = {"w1": r.standard_normal((24, 32)) * 0.3, "b1": r.standard_normal(32) * 0.5,
      "w2": r.standard_normal((16, 32)) * 0.3, "b2": r.standard_normal(16) * 0.5}
lw["w1"][:, 5] *= 30
nodes = [
    helper.make_node("MatMul", ["v", "w1"], ["m"], name="P"),
    helper.make_node("Add", ["m", "b1"], ["mb"], name="P_bias"),
    helper.make_node("Relu", ["mb"], ["mr"], name="P_relu"),
    helper.make_node("Gemm", ["mr", "w2", "b2"], ["z"], name="Q", transB=1),
]
g = helper.make_graph(nodes, "int8_products", [helper.make_tensor_value_info("v", TensorProto.FLOAT, [6, 24])],
                      [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                      [numpy_helper.from_array(v.astype(np.float32), k) for k, v in lw.items()])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), d + "/products.onnx")
np.save(d + "/v.npy", r.standard_normal((6, 24)).astype(np.float32))
np.save(d + "/cal.npy", (r.standard_normal((3, 8, 20, 20)) * [[[[1.5]]], [[[0.7]]], [[[1.1]]]]).astype(np.float32))
np.save(d + "/bad_shape.npy", np.zeros((3, 8, 20, 21), np.float32))
# models already quantized keep their scales: one of 0 and one NaN, to be refused at load
for scale, name in ((0.0, "zero"), (float("nan"), "nan")):
    q = [numpy_helper.from_array(np.array(v, t), k) for k, v, t in (
        ("xs", 0.1, np.float32), ("xz", 0, np.uint8), ("ws", [0.05, scale, 0.05, 0.05], np.float32),
        ("wz", [0, 0, 0, 0], np.int8), ("ys", 0.2, np.float32), ("yz", 0, np.uint8))]
    q.append(numpy_helper.from_array(np.ones((4, 8, 3, 3), np.int8), "wq"))
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quantize"),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"], ["yq"],
                              name="conv_q", pads=[1, 1, 1, 1]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dequantize")]
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 20, 20])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], q)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{d}/scale_{name}.onnx")
np.save(d + "/bad_type.npy", np.zeros((1, 8, 20, 20), np.float64))
PYEOF
RUN="run $T/three.onnx --input x=$T/x.npy --repeat 1 --warmup 1"

. "$ROOT/tests/runtime/refused.sh"
# shellcheck disable=SC2086
refused "int8 held back" "int8 needs a CPU with AVX512-VNNI, AVX-VNNI or AMX.*ONEDNN_MAX_CPU_ISA is set" \
	env ONEDNN_MAX_CPU_ISA=AVX512_CORE "$HO" $RUN -o "$T/o" --precision int8
# shellcheck disable=SC2086
refused "range rule" "int8-range 'median': one of max, mse, or pNN" \
	"$HO" $RUN -o "$T/o" --precision int8 --int8-range median
# shellcheck disable=SC2086
refused "calibration shape" "calibrate .*bad_shape.npy: shape \[3, 8, 20, 21\] is neither input 'x''s \[1, 8, 20, 20\]" \
	"$HO" $RUN -o "$T/o" --precision int8 --calibrate "x=$T/bad_shape.npy"
# shellcheck disable=SC2086
refused "calibration type" "calibrate .*bad_type.npy: dtype <f8; input 'x' is float32" \
	"$HO" $RUN -o "$T/o" --precision int8 --calibrate "x=$T/bad_type.npy"
# shellcheck disable=SC2086
refused "calibration input" "calibrate .*cal.npy: the model has no input 'z'" \
	"$HO" $RUN -o "$T/o" --precision int8 --calibrate "z=$T/cal.npy"
# shellcheck disable=SC2086
refused "calibrate without int8" "calibrate: it is for --precision int8" \
	"$HO" $RUN -o "$T/o" --calibrate "x=$T/cal.npy"
for s in zero:0 nan:nan; do
	refused "a quantized model's scale ${s#*:}" \
		"node 'conv_q' (QLinearConv): scale 'ws' is ${s#*:}: a quantization scale must be a finite number other than 0" \
		"$HO" run "$T/scale_${s%%:*}.onnx" --input "x=$T/x.npy" -o "$T/o" --repeat 1
done
# shellcheck disable=SC2086
if ! "$HO" $RUN -o "$T/probe" --precision int8 >"$T/probe.log" 2>&1; then
	grep -q "int8 needs a CPU with AVX512-VNNI, AVX-VNNI or AMX" "$T/probe.log" || { cat "$T/probe.log"; exit 1; }
	echo "skipped: this CPU has no VNNI or AMX (the refusals above passed)"
	exit 77
fi

# The models in int8, their ranges by max (lowest to highest): on their own input, the
# convolutions' on three calibration samples too; each against NumPy quantizing the same way.
"$HO" run "$T/products.onnx" --input "v=$T/v.npy" --repeat 1 --warmup 1 -o "$T/p8" \
	--precision int8 --int8-range max >"$T/p8.log"
"$HO" run "$T/products.onnx" --input "v=$T/v.npy" --repeat 1 --warmup 1 -o "$T/p32" >/dev/null
grep -q "^run: 2 nodes computed in int8" "$T/p8.log" || { echo "products: not int8"; cat "$T/p8.log"; exit 1; }
# shellcheck disable=SC2086
"$HO" $RUN -o "$T/own" --precision int8 --int8-range max >"$T/own.log"
# shellcheck disable=SC2086
"$HO" $RUN -o "$T/cal" --precision int8 --int8-range max --calibrate "x=$T/cal.npy" >"$T/cal.log"
# shellcheck disable=SC2086
"$HO" $RUN -o "$T/f32" >/dev/null
for c in own cal; do
	grep -q "^int8: 3 kernels' input ranges calibrated on $([ $c = own ] && echo "1 sample (the run's own" || echo "3 samples (--calibrate")" "$T/$c.log" ||
		{ echo "$c: not calibrated as asked"; cat "$T/$c.log"; exit 1; }
	grep -q "^run: 3 nodes computed in int8" "$T/$c.log" || { echo "$c: not int8"; cat "$T/$c.log"; exit 1; }
done
$PY - "$T" <<'PYEOF'
import sys
import numpy as np
import onnx
import torch
from onnx import numpy_helper
d = sys.argv[1]
F = np.float32
w = {t.name: numpy_helper.to_array(t) for t in onnx.load(d + "/three.onnx").graph.initializer}
conv = lambda x, k, **kw: torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64)),
                                                      torch.from_numpy(k.astype(np.float64)), **kw).numpy()

def qconv(x, k, b, lo, hi, **kw):
    """oneDNN's int8 convolution as HeteroOpt sets it up: x by its range (u8 from 0 when
    lo >= 0, else s8 about 0), k per output channel (s8), exact int sums, scaled back."""
    u8 = lo >= 0
    xs = F((hi if u8 else max(-lo, hi)) / (255 if u8 else 127))
    xq = np.clip(np.rint(x * F(1 / xs)), 0 if u8 else -128, 255 if u8 else 127)
    ws = (np.abs(k).reshape(len(k), -1).max(1) / F(127)).astype(F)
    kq = np.clip(np.rint(k * (F(1) / ws)[:, None, None, None]), -128, 127)
    acc = conv(xq, kq, **kw)
    os = (xs * ws).astype(F)
    bq = (b / os) if b is not None else np.zeros(len(k), F)
    return ((acc + bq.astype(np.float64)[None, :, None, None]) * os[None, :, None, None]).astype(F)

def model(x, ranges):
    a = np.maximum(qconv(x, w["wa"], w["ba"], *ranges[0], padding=1), 0)
    b = qconv(a, w["wb"], w["bb"], *ranges[1], padding=1, stride=2, groups=4)
    return qconv(b, w["wc"], None, *ranges[2])

def float_model(x):
    a = np.maximum(conv(x, w["wa"], padding=1) + w["ba"][None, :, None, None], 0)
    b = conv(a, w["wb"], padding=1, stride=2, groups=4) + w["bb"][None, :, None, None]
    return conv(b, w["wc"]), a, b

x = np.load(d + "/x.npy")
for case, samples in (("own", [x]), ("cal", list(np.load(d + "/cal.npy")[:, None]))):
    seen = [float_model(s) for s in samples]
    ranges = [(min(float(s.min()) for s in samples), max(float(s.max()) for s in samples))]
    for i in (1, 2):  # the float32 model's intermediates: what calibration observed
        ranges.append((min(float(s[i].min()) for s in seen), max(float(s[i].max()) for s in seen)))
    want, got = model(x, ranges), np.load(f"{d}/{case}/y.npy")
    f32 = np.load(d + "/f32/y.npy")
    mag = float(np.abs(f32).max())
    diff, quant = float(np.abs(got - want).max()) / mag, float(np.abs(f32 - want).max()) / mag
    # float32's own rounding of intermediates may move a value across a rounding step:
    # far below what quantizing costs, which a wrong scale, zero point or bias exceeds
    assert diff < 2e-3 and diff < quant / 5, (case, diff, quant)
    print(f"{case}: int8 run vs NumPy's int8 {diff:.1e}, int8 vs float32 {quant:.1e} of the largest output")

def qmm(x, k, b, lo, hi):
    """The same for x [rows, K] by k [K, N]: a scale per output column."""
    u8 = lo >= 0
    xs = F((hi if u8 else max(-lo, hi)) / (255 if u8 else 127))
    xq = np.clip(np.rint(x * F(1 / xs)), 0 if u8 else -128, 255 if u8 else 127)
    ws = (np.abs(k).max(0) / F(127)).astype(F)
    kq = np.clip(np.rint(k * (F(1) / ws)[None, :]), -128, 127)
    os = (xs * ws).astype(F)
    return ((xq.astype(np.float64) @ kq + (b / os).astype(np.float64)) * os).astype(F)

lw = {t.name: numpy_helper.to_array(t) for t in onnx.load(d + "/products.onnx").graph.initializer}
v = np.load(d + "/v.npy")
mid = np.maximum(v.astype(np.float64) @ lw["w1"] + lw["b1"], 0)
m = np.maximum(qmm(v, lw["w1"], lw["b1"], float(v.min()), float(v.max())), 0)
want = qmm(m, lw["w2"].T, lw["b2"], float(mid.min()), float(mid.max()))
got, f32 = np.load(d + "/p8/z.npy"), np.load(d + "/p32/z.npy")
mag = float(np.abs(f32).max())
diff, quant = float(np.abs(got - want).max()) / mag, float(np.abs(f32 - want).max()) / mag
assert diff < 2e-3 and diff < quant / 5, ("products", diff, quant)
print(f"products: int8 run vs NumPy's int8 {diff:.1e}, int8 vs float32 {quant:.1e} of the largest output")
PYEOF

# resnet18 against PyTorch: within 5% of its largest logit and the same top-1, every Conv
# int8 (the report's marks)
"$HO" run "$M/resnet18.onnx" --input "input=$M/resnet18.ref_in.npy" -o "$T/r18" --repeat 1 \
	--warmup 1 --precision int8 --report >"$T/r18.log"
grep -q "^run: 20 nodes computed in int8" "$T/r18.log" || { echo "resnet18: not 20 int8 Convs"; cat "$T/r18.log"; exit 1; }
[ "$(grep -c " int8$" "$T/r18.log")" = 20 ] || { echo "resnet18: the report marks other than 20"; exit 1; }
$PY "$ROOT/tests/runtime/compare.py" "$M/resnet18.ref_out.npy" "$T/r18/logits.npy" "resnet18 int8 vs PyTorch" 5e-2
$PY -c "import numpy as np, sys
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.argmax() == b.argmax(), (a.argmax(), b.argmax())" "$M/resnet18.ref_out.npy" "$T/r18/logits.npy"

# --sensitivity int8: the three convolutions, each alone, worst first, after calibrating
# shellcheck disable=SC2086
"$HO" run "$T/three.onnx" --input "x=$T/x.npy" -o "$T/sens" --sensitivity int8 \
	--calibrate "x=$T/cal.npy" >"$T/sens.log"
$PY - "$T/sens/sensitivity.json" "$T/sens.log" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
errs = [n["error"] for n in s["nodes"]]
assert s["precision"] == "int8" and sorted(n["node"] for n in s["nodes"]) == ["A", "B", "C"], s
assert errs == sorted(errs, reverse=True) and all(0 < e < 1 for e in errs), errs
assert "int8: 3 kernels' input ranges calibrated on 3 samples" in open(sys.argv[2]).read()
names = ", ".join(n["node"] for n in s["nodes"])
print(f"sensitivity int8: {names}: {errs[0]:.1e} to {errs[-1]:.1e}")
PYEOF

# The plan int8 wrote (DIR/precision.json), run again: the same outputs, byte for byte,
# with no calibration; plans that are not for this model, or not plans, refused by name.
# shellcheck disable=SC2086
"$HO" $RUN -o "$T/again" --precision "$T/cal/precision.json" >"$T/again.log"
cmp "$T/cal/y.npy" "$T/again/y.npy" || { echo "plan: another answer"; exit 1; }
! grep -q "calibrated" "$T/again.log" || { echo "plan: calibrated again"; exit 1; }
grep -q "^run: 3 nodes computed in int8" "$T/again.log" || { echo "plan: not int8"; cat "$T/again.log"; exit 1; }
$PY - "$T" <<'PYEOF'
import json, sys
d = sys.argv[1]
p = json.load(open(d + "/cal/precision.json"))
assert [n["node"] for n in p["nodes"]] == ["A", "B", "C"] and all(n["precision"] == "int8" for n in p["nodes"]), p
def save(name, q):
    json.dump(q, open(f"{d}/{name}.json", "w"))
save("odd_key", dict(p, schedule=1))
save("other_model", dict(p, nodes=[dict(p["nodes"][0], node="conv1")]))
save("fp8", dict(p, nodes=[dict(p["nodes"][0], precision="fp8")]))
save("bad_range", dict(p, nodes=[dict(p["nodes"][0], range=[3, 1])]))
save("node_key", dict(p, nodes=[dict(p["nodes"][0], scale=2)]))
open(d + "/not_json.json", "w").write("{\"nodes\": [")
PYEOF
# shellcheck disable=SC2086
refused "plan: unknown key" "odd_key.json: unknown key 'schedule'" "$HO" $RUN -o "$T/o" --precision "$T/odd_key.json"
# shellcheck disable=SC2086
refused "plan: another model" "other_model.json: node 0 is 'A' in this model, not 'conv1'" \
	"$HO" $RUN -o "$T/o" --precision "$T/other_model.json"
# shellcheck disable=SC2086
refused "plan: precision" "fp8.json: node 'A': precision 'fp8' is not a reduced one" \
	"$HO" $RUN -o "$T/o" --precision "$T/fp8.json"
# shellcheck disable=SC2086
refused "plan: range" "bad_range.json: node 'A': range is not \[lowest, highest\]" \
	"$HO" $RUN -o "$T/o" --precision "$T/bad_range.json"
# shellcheck disable=SC2086
refused "plan: node key" "node_key.json: a node entry has an unknown key 'scale'" \
	"$HO" $RUN -o "$T/o" --precision "$T/node_key.json"
# shellcheck disable=SC2086
refused "plan: not JSON" "not_json.json: .*line 1" "$HO" $RUN -o "$T/o" --precision "$T/not_json.json"
