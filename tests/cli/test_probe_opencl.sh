#!/bin/sh
# heteroopt probe with the OpenCL devices of this machine (PoCL here): a box
# where PoCL computes on the second group of cores in place of a CPU device,
# naming its backend and listing the operators it runs, and "cpus", every
# core as one oneDNN device, its alternative; a quick profile of them, the
# detector measured on it, and a recurrent model whose LSTM and GRU PoCL lacks
# with those nodes on cpu0; a batch norm in training mode PoCL refuses by
# its attribute, kept off ocl0 by the scheduler; a schedule whose front never
# runs cpus beside the others (a member that does is refused), run here, its
# copies as predicted (none: they share memory); a convolution whose columns
# take more than one band, done in bands; more than the device holds, refused;
# a Dropout in training mode refused on every device.
# Exits 77 where no OpenCL device shares host memory.
# usage: test_probe_opencl.sh HETEROOPT MODELS_DIR
set -u
EXE=$1
M=$2
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
DET=$M/ch_PP-OCRv4_det_infer.onnx
need_model "$DET" || exit 77

if ! $EXE probe --write-box --split 2 --opencl -o "$tmp/box.json" >"$tmp/out" 2>&1; then
	grep -q "no OpenCL device here" "$tmp/out" && { cat "$tmp/out"; exit 77; }
	cat "$tmp/out"
	exit 1
fi
check "--opencl: cpu0 on oneDNN, ocl0 on the other core, its backend and operators named" 0 "" -- \
	$PY - "$tmp/box.json" <<'PYEOF'
import json, os, sys
b = json.load(open(sys.argv[1]))
cpu0, ocl0, cpus = b["devices"]
assert cpu0["name"] == "cpu0" and "backend" not in cpu0, cpu0
assert ocl0["name"] == "ocl0" and ocl0["backend"]["name"] == "opencl", ocl0
assert sorted(cpu0["cores"] + ocl0["cores"]) == sorted(os.sched_getaffinity(0)), b
assert ocl0["threads"] == len(ocl0["cores"]) and ocl0["peak_gflops"]["float32"] > 0, ocl0
ops = set(ocl0["supported_ops"])
assert {"Conv", "ConvTranspose", "MatMul", "Slice", "Pad", "Reshape"} <= ops, ops
assert not ops & {"LSTM", "GRU", "NonMaxSuppression"}, ops
# every core as one oneDNN device: the split's rival, never used beside it
assert cpus["name"] == "cpus" and cpus["alternative_to"] == ["cpu0", "ocl0"], cpus
assert sorted(cpus["cores"]) == sorted(os.sched_getaffinity(0)) and "backend" not in cpus, cpus
assert [(l["a"], l["b"]) for l in b["links"]] == \
    [("cpu0", "ocl0"), ("cpu0", "cpus"), ("ocl0", "cpus")], b
PYEOF
ONE_LINE_ERRORS=1
check "--opencl --split 1: PoCL would share cpu0's cores" 1 "--split 2 or more" -- \
	$EXE probe --write-box --split 1 --opencl -o "$tmp/nope.json"
check "--opencl without --write-box" 2 "--opencl goes with --write-box" -- \
	$EXE probe --box "$tmp/box.json" --opencl -o "$tmp/nope.json"
ONE_LINE_ERRORS=0
check "--quick probe of the three, the detector and a recurrent model measured in place" 0 \
	"probe: wrote" -- \
	$EXE probe --box "$tmp/box.json" --quick --model "$DET:x=1x3x96x96" \
	--model "$M/seq_rnn.onnx:x=3x20x16" -q -o "$tmp/p.json"
check "ocl0's kernels measured; the LSTM and GRU it has no kernel for, on cpu0 only" 0 "" -- \
	$PY - "$tmp/p.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
o = p["devices"]["ocl0"]
for cls in ("conv", "matmul", "eltwise", "pool"):
    assert o["kernel_models"][cls]["points"] >= 1, (cls, o["kernel_models"])
assert any(k.startswith("ConvTranspose") for k in o["families"]), list(o["families"])
for op in ("LSTM", "GRU"):
    assert not any(k.startswith(op) for k in o["families"]), list(o["families"])
    assert any(k.startswith(op) for k in p["devices"]["cpu0"]["families"]), op
PYEOF
check "a schedule over cpu0 and ocl0" 0 "wrote $tmp/s.json" -- \
	$EXE schedule "$DET" --shape x=1x3x96x96 --box "$tmp/box.json" --profile "$tmp/p.json" \
	--seed 1 --quiet -o "$tmp/s.json"
check "no front member uses cpus beside cpu0 or ocl0; 'cpus alone' is a baseline" 0 "" -- \
	$PY - "$tmp/s.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["devices"] == ["cpu0", "ocl0", "cpus"], s["devices"]
for m in s["front"]:
    used = set(m["device"])
    assert not (2 in used and used & {0, 1}), used
assert any(b["name"] == "cpus alone" for b in s["baselines"]), [b["name"] for b in s["baselines"]]
PYEOF
$PY - "$tmp/s.json" "$tmp/mixed.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
m = s["front"][0]
m["device"] = [2] + [0] * (len(m["device"]) - 1)
json.dump(s, open(sys.argv[2], "w"))
PYEOF
CBN=$M/conv_bn_training.onnx
check "inspect --backend opencl: the batch norm in training mode PoCL refuses, by its attribute" \
	0 "node 'bn' (BatchNormalization): the OpenCL backend normalises by its running statistics" -- \
	$EXE inspect "$CBN" --backend opencl
ONE_LINE_ERRORS=1
check "that node pinned on ocl0 is refused: the scheduler asks the backend, not its op list" 1 \
	"task 'bn' (BatchNormalization) cannot run on ocl0" -- \
	$EXE schedule "$CBN" --box "$tmp/box.json" --pin bn=ocl0 --quiet -o "$tmp/nope.json"
# A Dropout in training mode at a ratio of 0.5 drops at random: no device's view of it, where
# PoCL once ran it as the identity.
$PY - "$tmp/drop.onnx" <<'PYEOF'
import sys
import onnx
from onnx import TensorProto, helper
nodes = [helper.make_node("Constant", [], ["r"], value=helper.make_tensor("r", TensorProto.FLOAT, [], [0.5])),
         helper.make_node("Constant", [], ["t"], value=helper.make_tensor("t", TensorProto.BOOL, [], [True])),
         helper.make_node("Relu", ["x"], ["x1"]), helper.make_node("Dropout", ["x1", "r", "t"], ["y"], name="drop")]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PYEOF
check "a training-mode Dropout runs nowhere, ocl0 included" 1 \
	"node 'drop' (Dropout): the cpu backend runs in inference mode only" -- \
	$EXE schedule "$tmp/drop.onnx" --box "$tmp/box.json" --pin drop=ocl0 --quiet -o "$tmp/nope.json"
ONE_LINE_ERRORS=0
check "the Conv pinned on ocl0: a schedule" 0 "wrote $tmp/cbn.json" -- \
	$EXE schedule "$CBN" --box "$tmp/box.json" --pin conv=ocl0 --seed 1 --quiet -o "$tmp/cbn.json"
check "every member keeps the batch norm off ocl0" 0 "" -- $PY - "$tmp/cbn.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
bn = [t["name"] for t in s["tasks"]].index("bn")
for m in s["front"]:
    assert s["devices"][m["device"][bn]] != "ocl0", m
PYEOF
check "run over ocl0 and cpu0" 0 "output y" -- $EXE run "$CBN" \
	--input x="${CBN%.onnx}.ref_in.npy" --schedule "$tmp/cbn.json" --pick 0 -o "$tmp/cbn"
check "... as PyTorch computed it" 0 "" -- $PY "$(dirname "$0")/../runtime/compare.py" \
	"${CBN%.onnx}.ref_out.npy" "$tmp/cbn/y.npy" "conv_bn_training over ocl0 and cpu0"
# A batch norm's Relu folds into its kernel on cpu0, not on ocl0 (OpenCL's batch norm runs
# it apart): the scheduler asks each device's backend (ho_rt_box_folds), so the schedule's
# folds are the run's, where it once charged the Relu as fused on ocl0 too.
$PY - "$tmp/preact.onnx" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(3)
p = [numpy_helper.from_array((rng.random(24) + 0.5).astype(np.float32), n) for n in ("s", "v")] + \
    [numpy_helper.from_array(rng.standard_normal(24).astype(np.float32), n) for n in ("b", "m")]
w = numpy_helper.from_array((rng.standard_normal((16, 8, 3, 3)) * 0.1).astype(np.float32), "w")
nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Concat", ["x", "c"], ["cat"], axis=1, name="cat"),
         helper.make_node("BatchNormalization", ["cat", "s", "b", "m", "v"], ["n"], name="bn"),
         helper.make_node("Relu", ["n"], ["y"], name="relu")]
g = helper.make_graph(nodes, "preact", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], p + [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
np.save(sys.argv[1].replace(".onnx", ".x.npy"), rng.standard_normal((1, 8, 16, 16)).astype(np.float32))
PYEOF
for dev in cpu0 ocl0; do
	check "the batch norm and its Relu pinned on $dev: a schedule" 0 "wrote $tmp/pre.$dev.json" -- \
		$EXE schedule "$tmp/preact.onnx" --box "$tmp/box.json" --pin bn=$dev --pin relu=$dev \
		--seed 1 --quiet -o "$tmp/pre.$dev.json"
	$EXE run "$tmp/preact.onnx" --input x="$tmp/preact.x.npy" --schedule "$tmp/pre.$dev.json" \
		--pick 0 --report >"$tmp/pre.$dev.log" 2>&1
	check "... the run folds as many nodes as the schedule predicts ($dev)" 0 "" -- \
		awk '/schedule front member/ { s = 1 } / nodes folded / { n++; if ($1 != $NF) bad = 1 }
		END { exit !s || bad }' "$tmp/pre.$dev.log"
done
check "the Relu runs inside the batch norm's kernel on cpu0, on its own on ocl0" 0 "" -- \
	$PY - "$tmp/pre.cpu0.json" "$tmp/pre.ocl0.json" <<'PYEOF'
import json, sys
for path, want in zip(sys.argv[1:], ("fused", "kernel")):
    s = json.load(open(path))
    relu = [t["name"] for t in s["tasks"]].index("relu")
    assert s["front"][0]["runs_as"][relu] == want, (path, s["front"][0]["runs_as"][relu])
PYEOF
# a convolution whose columns (64 x 3 x 3 x 362^2 floats, 302 MB) pass the 256 MiB a band of
# outputs may take: done in two bands on ocl0, held to the cpu backend's answer
$PY - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as T
rng = np.random.default_rng(7)
w = numpy_helper.from_array((rng.standard_normal((8, 64, 3, 3)) * 0.05).astype(np.float32), "w")
node = helper.make_node("Conv", ["x", "w"], ["y"], name="wide", kernel_shape=[3, 3], pads=[1] * 4)
g = helper.make_graph([node], "wide", [helper.make_tensor_value_info("x", T.FLOAT, [1, 64, 362, 362])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [1, 8, 362, 362])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1] + "/wide.onnx")
np.save(sys.argv[1] + "/wx.npy", rng.random((1, 64, 362, 362), dtype=np.float32))
PYEOF
check "a convolution past one band of columns, pinned on ocl0" 0 "wrote $tmp/wide.json" -- \
	$EXE schedule "$tmp/wide.onnx" --box "$tmp/box.json" --pin wide=ocl0 --quiet -o "$tmp/wide.json"
check "... run there in bands" 0 "output y" -- $EXE run "$tmp/wide.onnx" --input x="$tmp/wx.npy" \
	--schedule "$tmp/wide.json" --repeat 1 -o "$tmp/wide"
check "... and on the cpu backend" 0 "output y" -- $EXE run "$tmp/wide.onnx" --input x="$tmp/wx.npy" \
	--repeat 1 -o "$tmp/wide_cpu"
check "... alike" 0 "" -- $PY "$(dirname "$0")/../runtime/compare.py" "$tmp/wide_cpu/y.npy" \
	"$tmp/wide/y.npy" "wide convolution on ocl0 in bands, against the cpu backend"
# More than the device can hold: PoCL told (POCL_MEMORY_LIMIT, GB) that its memory is 1 GB
# refuses a buffer over a quarter of it, and the box, written without the limit, promised
# more: ResNet-18's convolutions at batch 128 need 329 MB on ocl0.  One line naming the
# limit, before anything runs.
if grep -q '"platform": "Portable Computing Language"' "$tmp/box.json"; then
	$PY -c "import numpy as np; np.save('$tmp/b128.npy', np.zeros((128, 3, 224, 224), np.float32))"
	check "resnet18 at batch 128, its convolutions pinned on ocl0" 0 "wrote $tmp/r128.json" -- \
		$EXE schedule "$M/resnet18.onnx" --shape input=128x3x224x224 --box "$tmp/box.json" \
		--pin Conv=ocl0 --quiet -o "$tmp/r128.json"
	ONE_LINE_ERRORS=1
	check "... run where the device holds less: refused, naming its largest buffer" 1 \
		"the device's largest buffer is 268435456 bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)" -- \
		env POCL_MEMORY_LIMIT=1 $EXE run "$M/resnet18.onnx" --input input="$tmp/b128.npy" \
		--schedule "$tmp/r128.json" --repeat 1 -o "$tmp/r128"
	ONE_LINE_ERRORS=0
	rm -f "$tmp/b128.npy"
fi
$PY -c "import numpy as np; np.save('$tmp/x.npy', np.random.default_rng(3).random((1, 3, 96, 96), dtype=np.float32))"
ONE_LINE_ERRORS=1
check "a hand-edited member on cpus and cpu0 at once is refused" 1 "shares (box alternative_to)" -- \
	$EXE run "$DET" --input x="$tmp/x.npy" --schedule "$tmp/mixed.json" --pick 0 -o "$tmp"
ONE_LINE_ERRORS=0
check "run here on oneDNN and PoCL: no copies, as predicted" 0 "copies: 0 made (0 bytes), schedule predicts 0" -- \
	$EXE run "$DET" --input x="$tmp/x.npy" --schedule "$tmp/s.json" --pick 0 -o "$tmp" --repeat 3
# PoCL told to keep its tensors in buffers of its own (backend "memory": "device"), as a
# discrete GPU does, and linked to the cores by copies: the probe measures those copies
# through the backend (uploads, downloads), not the pool, and sweeps ocl0 alone (its
# inputs put in, its outputs read back); the detector with its convolutions there makes
# the copies its schedule predicts, and answers as the cpu backend alone does.
$PY - "$tmp/box.json" "$tmp/own.json" <<'PYEOF'
import json, sys
b = json.load(open(sys.argv[1]))
b["devices"][1]["backend"]["memory"] = "device"
for l in b["links"]:
    if "ocl0" in (l["a"], l["b"]):
        l.pop("shared_memory", None)
        l.update(gbps=10, latency_us=50)
json.dump(b, open(sys.argv[2], "w"))
PYEOF
check "ocl0 keeping its own memory: a quick probe" 0 "copies through the backend (device memory)" -- \
	$EXE probe --box "$tmp/own.json" --quick -o "$tmp/own_p.json"
check "... its link measured by the backend's copies, its kernels alone" 0 "" -- \
	$PY - "$tmp/own_p.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
l = [l for l in p["links"] if {l["a"], l["b"]} == {"cpu0", "ocl0"}][0]
c = l["copies"][0]
assert c["path"] == "backend (device memory)" and len(c["by_size"]) == 4, l
assert 0 < l["latency_us"] < 10000 and 0.1 < l["gbps"] < 1000, l
assert p["devices"]["ocl0"]["kernel_models"]["conv"]["points"] >= 1, p["devices"]["ocl0"]
PYEOF
check "a schedule with the detector's convolutions on ocl0" 0 "wrote $tmp/own_s.json" -- \
	$EXE schedule "$DET" --shape x=1x3x96x96 --box "$tmp/own.json" --profile "$tmp/own_p.json" \
	--pin Conv=ocl0 --seed 1 --quiet -o "$tmp/own_s.json"
check "... run: the copies it predicts" 0 "" -- sh -c "$EXE run '$DET' --input x='$tmp/x.npy' \
	--schedule '$tmp/own_s.json' --pick 0 -o '$tmp/own_out' --repeat 3 | grep -Eq \
	'copies: ([1-9][0-9]*) made \(([0-9]+) bytes\), schedule predicts \\1 \\(\\2 bytes\\)'"
check "... and the cpu backend's answer" 0 "" -- sh -c "$EXE run '$DET' --input x='$tmp/x.npy' \
	-o '$tmp/cpu_out' --repeat 1 >/dev/null && for f in '$tmp'/cpu_out/*.npy; do \
	$PY '$(dirname "$0")/../runtime/compare.py' \"\$f\" '$tmp/own_out/'\"\$(basename \"\$f\")\" \
	'detector with convolutions in ocl0 memory' || exit 1; done"
[ $fails = 0 ]
