#!/bin/sh
# heteroopt run as a user meets it: outputs written where asked, repeat
# timing, and every bad input refused with one line naming the problem.
# usage: test_run.sh HETEROOPT MODELS_DIR
set -u
EXE=$1
M=$2
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ONE_LINE_ERRORS=1
. "$(dirname "$0")/lib.sh"

$PY - "$tmp" <<'PYEOF'
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(3)
np.save(d + "/x2.npy", rng.standard_normal((2, 3, 224, 224), dtype=np.float32))
np.save(d + "/small.npy", rng.standard_normal((1, 3, 100, 100), dtype=np.float32))
np.save(d + "/f64.npy", rng.standard_normal((1, 3, 224, 224)))
np.save(d + "/x23.npy", rng.standard_normal((2, 3), dtype=np.float32))
open(d + "/junk.npy", "wb").write(b"\x93NUMPY\x01\x00garbage")
PYEOF

check "run squeezenet at batch 2, outputs into a new folder" 0 "output logits: $tmp/out/logits.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" -o "$tmp/out"
check "batch 2 output has batch 2 and matches running each image alone" 0 "" -- $PY - "$EXE" "$M" "$tmp" <<'PYEOF'
import subprocess, sys
import numpy as np
exe, m, d = sys.argv[1:]
y2 = np.load(d + "/out/logits.npy")
assert y2.shape == (2, 1000), y2.shape
x = np.load(d + "/x2.npy")
for i in range(2):
    np.save(d + "/one.npy", x[i:i + 1])
    subprocess.run([exe, "run", m + "/squeezenet1_1.onnx", "--input", "input=" + d + "/one.npy",
                    "-o", d + "/one"], check=True, capture_output=True)
    y1 = np.load(d + "/one/logits.npy")
    assert np.abs(y1[0] - y2[i]).max() <= 1e-5 * np.abs(y2).max(), i
PYEOF
check "--repeat prints the median" 0 "median" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" -o "$tmp/out" --repeat 3
check "--repeat with trailing garbage" 2 "--repeat: '5x' is not a whole number" -- $EXE run "$M/squeezenet1_1.onnx" --repeat 5x
check "--pick with a sign" 2 "--pick: '-1' is not a whole number" -- $EXE run "$M/squeezenet1_1.onnx" --pick -1
check "missing input" 1 "input 'input' was not given" -- $EXE run "$M/squeezenet1_1.onnx" -o "$tmp/out"
check "unknown input name" 1 "no input named 'image'" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "image=$tmp/x2.npy" -o "$tmp/out"
check "wrong spatial size" 1 "input" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/small.npy" -o "$tmp/out"
check "float64 input" 1 "dtype <f8; input 'input' is float32 (<f4)" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/f64.npy" -o "$tmp/out"
check "malformed .npy" 1 "junk.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/junk.npy" -o "$tmp/out"
check "missing .npy file" 1 "nothere.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/nothere.npy" -o "$tmp/out"
# Where results go is checked before the work: a typo there throws nothing away.
check "-o a folder that cannot be made: refused up front" 1 "run: -o: cannot create $tmp/no/such/dir" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" -o "$tmp/no/such/dir"
check "--save-run where no folder is: refused up front" 1 "run: --save-run: cannot write $tmp/no/r.json" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --save-run "$tmp/no/r.json" -o "$tmp/out"
# Inputs that share a named dimension must agree on it.
$PY - "$tmp" <<'PYEOF'
import sys
import numpy as np
from onnx import TensorProto, helper, save
f = TensorProto.FLOAT
g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "shared",
                      [helper.make_tensor_value_info("a", f, ["n", 4]),
                       helper.make_tensor_value_info("b", f, ["n", 4])],
                      [helper.make_tensor_value_info("y", f, ["n", 4])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/shared.onnx")
np.save(sys.argv[1] + "/a2.npy", np.ones((2, 4), np.float32))
np.save(sys.argv[1] + "/b3.npy", np.ones((3, 4), np.float32))
PYEOF
check "inputs disagreeing on a shared dimension's name" 1 "input 'b': dim 0 ('n') is 3, but input 'a' has 2 there" -- \
	$EXE run "$tmp/shared.onnx" --input "a=$tmp/a2.npy" --input "b=$tmp/b3.npy" -o "$tmp/out"
check "one input's binding sizes the other's shared dimension" 0 "input      b float32 [2,4]" -- \
	$EXE inspect "$tmp/shared.onnx" --shape a=2x4
# A run that lasts seconds says how far it is (make check only: 11 s a run here).
if [ "${HO_TEST_QUICK:-0}" != 1 ]; then
	$PY - "$tmp" <<'PYEOF'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w = numpy_helper.from_array(np.full((64, 64, 3, 3), 0.01, np.float32), "w")
nodes = [helper.make_node("Conv", ["x" if i == 0 else "c%d" % (i - 1), "w"], ["c%d" % i],
                          pads=[1, 1, 1, 1]) for i in range(160)]
g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 512, 512])],
                      [helper.make_tensor_value_info("c159", TensorProto.FLOAT, None)], [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/slow.onnx")
np.save(sys.argv[1] + "/slow.npy", np.ones((1, 64, 512, 512), np.float32))
PYEOF
	check "a long run shows its progress" 0 "run: warm-up run 1 of 1: " -- \
		$EXE run "$tmp/slow.onnx" --input "x=$tmp/slow.npy" --threads 1 --warmup 1 --repeat 1 -o "$tmp/slow"
fi
check "--input without NAME=" 2 "expected NAME=FILE.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "$tmp/x2.npy"
check "--input without a file" 2 "--input 'input=': expected NAME=FILE.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input="
check "If and Loop run, each branch as the data decides" 0 "" -- $PY - "$EXE" "$M" "$tmp" <<'PYEOF'
import subprocess, sys
import numpy as np
exe, m, d = sys.argv[1:4]
for sign in (1, -1):  # the If's condition is sum(x) > 0: then Relu(x), else Neg(x)
    x = sign * np.array([[1, -2, 3], [-4, 5, 0.5]], np.float32)
    np.save(d + "/cf.npy", x)
    subprocess.run([exe, "run", m + "/control_flow.onnx", "--input", "x=" + d + "/cf.npy",
                    "-o", d + "/cf"], check=True, capture_output=True)
    y = np.maximum(x, 0) if x.sum() > 0 else -x
    want = (x + 3 * y) @ np.ones((3, 4), np.float32)  # three trips of acc += y, from x
    got = np.load(d + "/cf/out.npy")
    assert np.array_equal(got, want), (sign, got, want)
PYEOF
check "strings end to end: .npy in, moved, normalised, cast, .npy out" 0 "" -- $PY - "$EXE" "$M" "$tmp" <<'PYEOF'
import subprocess, sys
import numpy as np
exe, m, d = sys.argv[1:4]
s = np.array([["café", "drop", "Zoë"], ["DROP", "naïve", "x y"]])
n = np.array(["1.5", "-INF", "2e-3"])
np.save(d + "/s.npy", s)
np.save(d + "/n.npy", n)
subprocess.run([exe, "run", m + "/strings.onnx", "--input", "s=" + d + "/s.npy", "--input",
                "n=" + d + "/n.npy", "--bind", "s", "-o", d + "/so"], check=True, capture_output=True)
got = {k: np.load(d + "/so/" + k + ".npy") for k in ("moved", "normalized", "num", "text")}
sg = s.T[[2, 0]]
assert (got["moved"] == np.concatenate([sg, sg], axis=1)).all(), got["moved"]
want = [w.upper() for w in s.ravel() if w.lower() != "drop"]  # stopwords case-insensitive
assert got["normalized"].tolist() == want, got["normalized"]
assert got["num"].dtype == np.float32 and got["num"].tolist() == [1.5, -np.inf, np.float32(2e-3)]
assert got["text"].tolist() == ["1.5", "-INF", "0.002"], got["text"]
PYEOF
check "complex64 in and out, moved (Transpose, Concat)" 0 "" -- $PY - "$EXE" "$M" "$tmp" <<'PYEOF'
import subprocess, sys
import numpy as np
exe, m, d = sys.argv[1:4]
z = (np.arange(6) + 1j * np.arange(6, 12)).astype(np.complex64).reshape(2, 3)
np.save(d + "/z.npy", z)
subprocess.run([exe, "run", m + "/complex.onnx", "--input", "z=" + d + "/z.npy", "-o", d + "/zo"],
               check=True, capture_output=True)
got = np.load(d + "/zo/zz.npy")
assert got.dtype == np.complex64 and (got == np.concatenate([z.T, z.T])).all(), got
PYEOF
check "stopwords decide the extent: the run plans for the strings it is given" 0 \
	"nodes wait for the run to know their shapes" -- \
	$EXE run "$M/strings.onnx" --input "s=$tmp/s.npy" --input "n=$tmp/n.npy" -o "$tmp/su"
check "... as when they are bound" 0 "" -- $PY -c "
import numpy as np
for k in ('moved', 'normalized', 'num', 'text'):
    a, b = np.load('$tmp/su/' + k + '.npy'), np.load('$tmp/so/' + k + '.npy')
    assert a.shape == b.shape and (a == b).all(), (k, a, b)"
$PY -c "import numpy as np; np.save('$tmp/nan.npy', np.array(['1', 'one', '2']))"
check "a string that is not a number fails the run, named" 1 "a string is not a number" -- \
	$EXE run "$M/strings.onnx" --input "s=$tmp/s.npy" --input "n=$tmp/nan.npy" --bind s -o "$tmp/so"
check "a loop in training mode is refused, named" 1 "node 'train' (Loop): its body: node 'drop' (Dropout)" -- \
	$EXE run "$M/control_refused.onnx" --input "x=$tmp/x23.npy" -o "$tmp/out"
check "not a model" 1 "bad_not_a_model.onnx" -- \
	$EXE run "$M/bad_not_a_model.onnx" --input "input=$tmp/x2.npy"
# Schedules: one made for this model runs and reports against its prediction;
# one for another model, a broken one, or a pick past the front are refused.
B=$(cd "$(dirname "$0")/../.." && pwd)/boxes
$EXE schedule --quiet --population 16 --generations 5 "$M/squeezenet1_1.onnx" --shape input=2x3x224x224 \
	--box "$B/this-machine-cpu-emu.json" --pin Conv=emu0 -o "$tmp/sq.json" >/dev/null
$EXE schedule --quiet --population 16 --generations 5 "$M/resnet18.onnx" --shape input=2x3x224x224 \
	--box "$B/this-machine-cpu-emu.json" -o "$tmp/r18.json" >/dev/null
check "run a schedule: report against the prediction" 0 "emu (emulated" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" -o "$tmp/out"
check "runs are reported warm by default" 0 "(median of 10 warm runs)" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" -o "$tmp/out"
# The ratio against the prediction is the median of the warm runs printed below it.
check "--repeat: the ratio uses the median of the warm runs" 0 "" -- sh -c "$EXE run '$M/squeezenet1_1.onnx' --input 'input=$tmp/x2.npy' --schedule '$tmp/sq.json' -o '$tmp/out' --repeat 5 | $PY -c \"
import re, sys
out = sys.stdin.read()
m = re.search(r'latency: measured ([0-9.]+) ms \\(median of 5 warm runs\\), predicted ([0-9.]+) ms \\(ratio ([0-9.]+)\\); P90 ([0-9.]+) ms, P99 ([0-9.]+) ms, after 2 warm-up runs', out)
med = re.search(r'median ([0-9.]+) ms over 5 runs', out)
assert m and med, out
assert m.group(1) == med.group(1), (m.group(1), med.group(1))
assert abs(float(m.group(3)) - float(m.group(1)) / float(m.group(2))) < 0.006, m.groups()
assert float(m.group(1)) <= float(m.group(4)) <= float(m.group(5)), m.groups()
\""
# What the plan does by default, undone for comparison: the same answer either way.
check "--no-fusion: every node its own kernel" 0 "0 nodes folded into the Conv, MatMul or batch norm before them" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" --no-fusion -o "$tmp/nofuse"
check "--plain-layout and --no-fusion give the default's outputs" 0 "" -- sh -c "$EXE run '$M/squeezenet1_1.onnx' --input 'input=$tmp/x2.npy' --plain-layout -o '$tmp/plain' >/dev/null && $EXE run '$M/squeezenet1_1.onnx' --input 'input=$tmp/x2.npy' -o '$tmp/dflt' >/dev/null && $PY -c \"
import numpy as np
a, b, c = (np.load('$tmp/%s/logits.npy' % d) for d in ('dflt', 'plain', 'nofuse'))
assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max() and np.abs(a - c).max() <= 1e-5 * np.abs(a).max()\""
check "paced emulator: reported node durations" 0 "node durations" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" --pace -o "$tmp/out"
# Two CPU devices of one core each: every worker runs on its own core, and the
# region's NUMA node comes from that core.
$EXE schedule --quiet --population 16 --generations 5 "$M/squeezenet1_1.onnx" --shape input=2x3x224x224 \
	--box "$B/this-machine-2cpu.json" --pin Conv=cpu1 -o "$tmp/two.json" >/dev/null
check "cpu0's worker runs on core 0" 0 "(its core 0's), first node ran on CPU 0" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/two.json" -o "$tmp/out"
check "--report lists every node run, measured against predicted" 0 "" -- sh -c "$EXE run '$M/squeezenet1_1.onnx' --input 'input=$tmp/x2.npy' --schedule '$tmp/two.json' --report -o '$tmp/out' | awk '/^node .*measured .*predicted/ { h = 1; next } h && /^\\/features/ && NF == 7 { n++ } END { exit !(h && n >= 50) }'"
# A timeline edited so that a task starts before its input is made would let
# buffer reuse wait in a circle: refused when loaded.  A core this machine lacks
# is an error, not a hang.
$PY - "$tmp/two.json" "$tmp/edited.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
m = s["front"][0]
last = max(range(len(m["start_s"])), key=lambda t: m["start_s"][t])
m["end_s"][last] = m["start_s"][last] = 0.0  # the last task, moved to the very start
json.dump(s, open(sys.argv[2], "w"))
PYEOF
check "an edited timeline is refused" 1 "starts before its input" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/edited.json" --pick 0 -o "$tmp/out"
# A task listed twice, or an order naming a task twice: refused by name when
# loaded (they used to reach the executor, or a misleading timeline error).
$PY - "$tmp/two.json" "$tmp" <<'PYEOF'
import copy, json, sys
s = json.load(open(sys.argv[1]))
d = copy.deepcopy(s)
d["tasks"][1] = d["tasks"][0]
json.dump(d, open(sys.argv[2] + "/duptask.json", "w"))
d = copy.deepcopy(s)
m = d["front"][d["picked"]]
m["order"][1] = m["order"][0]
json.dump(d, open(sys.argv[2] + "/duporder.json", "w"))
PYEOF
check "a task listed twice" 1 "tasks 0 and 1 are both node" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/duptask.json" -o "$tmp/out"
check "an order naming a task twice" 1 "order[1] repeats task" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/duporder.json" -o "$tmp/out"
sed 's/"cores": \[1\]/"cores": [255]/' "$B/this-machine-2cpu.json" >"$tmp/core255.json"
$EXE schedule --quiet --population 16 --generations 5 "$M/squeezenet1_1.onnx" --shape input=2x3x224x224 \
	--box "$tmp/core255.json" --pin Conv=cpu1 -o "$tmp/two255.json" >/dev/null
check "a core this machine lacks" 1 "cpu1: cannot run on the cores the box gives it" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/two255.json" -o "$tmp/out"
# What a schedule was made for is checked: the box file, the model file, the input shapes.
check "a schedule with an edited box is refused" 1 "made for another box than $tmp/core255.json" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/two.json" --box "$tmp/core255.json" -o "$tmp/out"
$PY -c "import numpy as np; np.save('$tmp/x1.npy', np.ones((1, 3, 224, 224), np.float32))"
check "a schedule for batch 2 refuses a batch-1 input" 1 "made for input 'input' of 2x3x224x224, this run has 1x3x224x224" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x1.npy" --schedule "$tmp/two.json" -o "$tmp/out"
$PY - "$M/squeezenet1_1.onnx" "$tmp/sq-edited.onnx" <<'PYEOF'
import sys, onnx, numpy as np
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
w = m.graph.initializer[0]
a = numpy_helper.to_array(w).copy()
a.flat[0] += 1
w.CopyFrom(numpy_helper.from_array(a, w.name))
onnx.save(m, sys.argv[2])
PYEOF
check "a schedule for an edited model (same nodes, other weights) is refused" 1 "made for another model than $tmp/sq-edited.onnx" -- \
	$EXE run "$tmp/sq-edited.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/two.json" -o "$tmp/out"
# The schedule names its box from its own folder: it runs from anywhere.
mkdir -p "$tmp/elsewhere"
(cd "$B/.." && $EXE schedule --quiet --population 16 --generations 5 "$M/squeezenet1_1.onnx" --shape input=2x3x224x224 \
	--box boxes/this-machine-2cpu.json -o "$tmp/relbox.json" >/dev/null)
check "a schedule made with a relative box path runs from another folder" 0 "run: schedule front member" -- \
	sh -c "cd '$tmp/elsewhere' && $EXE run '$M/squeezenet1_1.onnx' --input 'input=$tmp/x2.npy' --schedule '$tmp/relbox.json' -o '$tmp/out'"
check "cpu1's worker runs on core 1" 0 "(its core 1's), first node ran on CPU 1" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/two.json" -o "$tmp/out"
check "schedule for another model" 1 "for another model" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/r18.json" -o "$tmp/out"
check "schedule for another box" 1 "another box" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" --box "$B/this-machine-2cpu.json"
check "pick past the front" 1 "front member 999" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" --pick 999
printf '{"format": "heteroopt-schedule/1", "tasks": [' >"$tmp/broken.json"
check "broken schedule JSON" 1 "broken.json" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/broken.json"
check "device failure mid-run: named, nothing written" 1 "device failure (injected)" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/sq.json" \
	--inject-failure /features/features.3/squeeze/Conv -o "$tmp/failed"
check "... and no output from the failed run" 0 "" -- test ! -e "$tmp/failed/logits.npy"
# Tensors of other types, end to end through .npy: int64 indices in, an int64 tensor out.
$PY - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T
d = sys.argv[1]
nodes = [h.make_node("Gather", ["x", "idx"], ["y"], axis=0), h.make_node("Transpose", ["k"], ["kt"]),
    h.make_node("Cast", ["x"], ["xb"], to=T.BOOL)]
g = h.make_graph(nodes, "typed", [h.make_tensor_value_info("x", T.FLOAT, [5, 3]),
    h.make_tensor_value_info("idx", T.INT64, [4]), h.make_tensor_value_info("k", T.INT64, [2, 3])],
    [h.make_tensor_value_info("y", T.FLOAT, [4, 3]), h.make_tensor_value_info("kt", T.INT64, [3, 2]),
     h.make_tensor_value_info("xb", T.BOOL, [5, 3])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), d + "/typed.onnx")
np.save(d + "/tx.npy", np.array([-1, 0, 0.5, np.nan, -0.0] * 3, dtype=np.float32).reshape(5, 3) + np.arange(15, dtype=np.float32).reshape(5, 3) * (np.arange(15).reshape(5, 3) > 4))
np.save(d + "/tidx.npy", np.array([4, 0, -1, 2], dtype=np.int64))
np.save(d + "/tk.npy", (np.arange(6, dtype=np.int64) + (1 << 40)).reshape(2, 3))
np.save(d + "/tidx32.npy", np.array([4, 0, 1, 2], dtype=np.int32))
PYEOF
check "int64 in, int64 out" 0 "output kt:" -- \
	$EXE run "$tmp/typed.onnx" --input "x=$tmp/tx.npy" --input "idx=$tmp/tidx.npy" --input "k=$tmp/tk.npy" -o "$tmp/typed"
check "... the outputs as numpy computes them, in their types" 0 "" -- $PY -c "
import numpy as np
y, kt = np.load('$tmp/typed/y.npy'), np.load('$tmp/typed/kt.npy')
x, k = np.load('$tmp/tx.npy'), np.load('$tmp/tk.npy')
assert y.dtype == np.float32 and np.array_equal(y, x[[4, 0, -1, 2]], equal_nan=True), y
assert kt.dtype == np.int64 and (kt == k.T).all(), kt
xb = np.load('$tmp/typed/xb.npy')
assert xb.dtype == np.bool_ and (xb == x.astype(np.bool_)).all(), (xb, x)"
check "an int32 file for an int64 input is refused" 1 "dtype <i4; input 'idx' is int64 (<i8)" -- \
	$EXE run "$tmp/typed.onnx" --input "x=$tmp/tx.npy" --input "idx=$tmp/tidx32.npy" --input "k=$tmp/tk.npy" -o "$tmp/typed"
# An input that decides a shape: the run plans the Reshape for its values, or --bind does.
$PY - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T
d = sys.argv[1]
g = h.make_graph([h.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
    [h.make_tensor_value_info("x", T.FLOAT, [2, 6]), h.make_tensor_value_info("shape", T.INT64, [3])],
    [h.make_tensor_value_info("y", T.FLOAT, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), d + "/reshape.onnx")
np.save(d + "/rx.npy", np.arange(12, dtype=np.float32).reshape(2, 6))
np.save(d + "/rshape.npy", np.array([3, -1, 2], dtype=np.int64))
PYEOF
check "a shape decided by an input's values waits for the run" 0 \
	"run: 1 nodes wait for the run to know their shapes (the values that decide them came 1 ways" -- \
	$EXE run "$tmp/reshape.onnx" --input "x=$tmp/rx.npy" --input "shape=$tmp/rshape.npy" -o "$tmp/rs"
check "... as numpy reshapes" 0 "" -- $PY -c "
import numpy as np
y = np.load('$tmp/rs/y.npy')
assert y.shape == (3, 2, 2) and (y == np.arange(12).reshape(3, 2, 2)).all(), y"
check "... and runs with --bind" 0 "output y:" -- \
	$EXE run "$tmp/reshape.onnx" --input "x=$tmp/rx.npy" --input "shape=$tmp/rshape.npy" --bind shape -o "$tmp/rs"
check "... as numpy reshapes" 0 "" -- $PY -c "
import numpy as np
y = np.load('$tmp/rs/y.npy')
assert y.shape == (3, 2, 2) and (y == np.arange(12).reshape(3, 2, 2)).all(), y"
# An If whose branch's output shape a run decides (a NonZero in it), as torchvision's
# batched NMS asks whether any box is left: inlined once its condition is known.
$PY - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T
d = sys.argv[1]
then = h.make_graph([h.make_node("NonZero", ["x"], ["nz"])], "then", [],
    [h.make_tensor_value_info("nz", T.INT64, None)])
empty = h.make_tensor("none", T.INT64, [2, 0], [])
other = h.make_graph([h.make_node("Constant", [], ["no"], value=empty)], "else", [],
    [h.make_tensor_value_info("no", T.INT64, None)])
g = h.make_graph([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  h.make_node("Greater", ["s", "zero"], ["c"]),
                  h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], "ifnz",
    [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.INT64, None)],
    [h.make_tensor("zero", T.FLOAT, [], [0.0])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), d + "/ifnz.onnx")
np.save(d + "/pos.npy", np.array([[1, 0, 2], [0, 0, 3]], dtype=np.float32))
np.save(d + "/neg.npy", np.array([[-1, 0, -2], [0, 0, -3]], dtype=np.float32))
PYEOF
check "inspect says which nodes' shapes a run decides" 0 "run-time   1 nodes' shapes only a run decides" -- \
	$EXE inspect "$tmp/ifnz.onnx"
check "an If whose branch's shapes the run decides: the branch taken" 0 "output y:" -- \
	$EXE run "$tmp/ifnz.onnx" --input "x=$tmp/pos.npy" -o "$tmp/ifp"
check "... the other" 0 "output y:" -- $EXE run "$tmp/ifnz.onnx" --input "x=$tmp/neg.npy" -o "$tmp/ifn"
check "... as numpy's nonzero, and empty" 0 "" -- $PY -c "
import numpy as np
p, n = np.load('$tmp/ifp/y.npy'), np.load('$tmp/ifn/y.npy')
assert (p == np.array(np.nonzero(np.load('$tmp/pos.npy')))).all() and p.shape == (2, 3), p
assert n.shape == (2, 0), n"
# ... and one whose branch holds an If of its own that reads the branch's NonZero (torchvision's
# batched NMS nests "any box left?" so): inlined, the nested If's reads follow it.
$PY - "$tmp" <<'PYEOF'
import sys, onnx
from onnx import helper as h, TensorProto as T
d = sys.argv[1]
inner = [h.make_graph([h.make_node("Identity", ["nz"], [o])], "in" + o, [],
                      [h.make_tensor_value_info(o, T.INT64, None)]) for o in ("a", "b")]
then = h.make_graph([h.make_node("NonZero", ["x"], ["nz"]),
                     h.make_node("If", ["c"], ["y2"], then_branch=inner[0], else_branch=inner[1])],
                    "then", [], [h.make_tensor_value_info("y2", T.INT64, None)])
empty = h.make_tensor("none", T.INT64, [2, 0], [])
other = h.make_graph([h.make_node("Constant", [], ["no"], value=empty)], "else", [],
    [h.make_tensor_value_info("no", T.INT64, None)])
g = h.make_graph([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  h.make_node("Greater", ["s", "zero"], ["c"]),
                  h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], "ifif",
    [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.INT64, None)],
    [h.make_tensor("zero", T.FLOAT, [], [0.0])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), d + "/ifif.onnx")
PYEOF
check "an If in the branch taken, reading the branch's NonZero" 0 "output y:" -- \
	$EXE run "$tmp/ifif.onnx" --input "x=$tmp/pos.npy" -o "$tmp/ifif"
check "... as numpy's nonzero" 0 "" -- $PY -c "
import numpy as np
p = np.load('$tmp/ifif/y.npy')
assert (p == np.array(np.nonzero(np.load('$tmp/pos.npy')))).all() and p.shape == (2, 3), p"
# NonZero's kernel on each of its paths (bytes eight at a time, float32, other types), split
# over two threads: mostly zeros, non-zeros at odd places and across the parts' boundary.
$PY - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T
d = sys.argv[1]
g = h.make_graph([h.make_node("Greater", ["x", "cut"], ["gt"]), h.make_node("NonZero", ["gt"], ["nb"]),
                  h.make_node("NonZero", ["x"], ["nf"]), h.make_node("NonZero", ["u"], ["nu"]),
                  h.make_node("NonZero", ["i"], ["ni"])], "nonzeros",
    [h.make_tensor_value_info("x", T.FLOAT, [3, 70001]), h.make_tensor_value_info("u", T.UINT8, [150001]),
     h.make_tensor_value_info("i", T.INT64, [5, 7])],
    [h.make_tensor_value_info(o, T.INT64, None) for o in ("nb", "nf", "nu", "ni")],
    [h.make_tensor("cut", T.FLOAT, [], [0.99])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), d + "/nonzeros.onnx")
r = np.random.default_rng(7)
x = r.random((3, 70001), dtype=np.float32)
x[x < 0.5] = 0
x.flat[105000:105003] = [0.995, 0, 0.999]  # two threads: the parts meet at 105001
u = np.zeros(150001, np.uint8)
u[[0, 7, 8, 9, 63, 64, 75000, 75001, 150000]] = [1, 2, 255, 1, 1, 1, 3, 4, 5]
i = r.integers(-2, 3, (5, 7), dtype=np.int64)
for k, v in (("x", x), ("u", u), ("i", i)):
    np.save(d + "/nz_" + k + ".npy", v)
PYEOF
check "NonZero over bool, float32, uint8 and int64 on two threads" 0 "output ni:" -- \
	$EXE run "$tmp/nonzeros.onnx" --input "x=$tmp/nz_x.npy" --input "u=$tmp/nz_u.npy" \
	--input "i=$tmp/nz_i.npy" --threads 2 -o "$tmp/nz"
check "... as numpy's nonzero" 0 "" -- $PY -c "
import numpy as np
x, u, i = (np.load('$tmp/nz_' + k + '.npy') for k in 'xui')
for name, want in (('nb', x > 0.99), ('nf', x), ('nu', u), ('ni', i)):
    got, ref = np.load('$tmp/nz/' + name + '.npy'), np.array(np.nonzero(want))
    assert got.shape == ref.shape and (got == ref).all(), (name, got.shape, ref.shape)"
# Bounds on what a run decides: priced at the most (the NonZero's every element), or at the
# user's --bound, which a run that passes it fails, naming the tensor and the bound.
check "inspect prices the NonZero at every element non-zero" 0 \
	"'nz' (NonZero): at most [2, 6]: every element of its input non-zero" -- $EXE inspect "$tmp/ifnz.onnx"
check "... or at the user's bound" 0 "'nz' (NonZero): at most [2, 4]: the user's bound (--bound)" -- \
	$EXE inspect "$tmp/ifnz.onnx" --bound nz=4
check "schedule prices it at its bound" 0 "priced at the bounds of 1 tensors" -- \
	$EXE schedule "$tmp/ifnz.onnx" --box boxes/this-machine-2cpu.json --quiet --generations 2
check "a run past the bound fails, naming both" 1 "tensor 'nz': 3 along axis 1, past its bound 2 (--bound)" -- \
	$EXE run "$tmp/ifnz.onnx" --input "x=$tmp/pos.npy" --bound nz=2 -o "$tmp/ifb"
check "... within it, runs" 0 "output y:" -- \
	$EXE run "$tmp/ifnz.onnx" --input "x=$tmp/pos.npy" --bound nz=3 -o "$tmp/ifb"
check "a bound on no tensor is refused" 1 "run: --bound: the model has no tensor 'nosuch'" -- \
	$EXE run "$tmp/ifnz.onnx" --input "x=$tmp/pos.npy" --bound nosuch=3 -o "$tmp/ifb"
check "... and one on a tensor no run decides" 1 "--bound x: its shape does not wait for a run" -- \
	$EXE inspect "$tmp/ifnz.onnx" --bound x=3
# A ConstantOfShape too large to fold at load (an anchor grid): its kernel fills it.
$PY - "$tmp" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T
d = sys.argv[1]
g = h.make_graph([h.make_node("ConstantOfShape", ["s"], ["y"],
                              value=h.make_tensor("v", T.INT32, [1], [7]))], "fill",
    [h.make_tensor_value_info("s", T.INT64, [2])], [h.make_tensor_value_info("y", T.INT32, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), d + "/fill.onnx")
np.save(d + "/fs.npy", np.array([1000, 300], dtype=np.int64))
PYEOF
check "a ConstantOfShape past what load folds, sized by the run" 0 "output y:" -- \
	$EXE run "$tmp/fill.onnx" --input "s=$tmp/fs.npy" -o "$tmp/fill"
check "... 300 000 sevens" 0 "" -- $PY -c "
import numpy as np
y = np.load('$tmp/fill/y.npy')
assert y.shape == (1000, 300) and y.dtype == np.int32 and (y == 7).all(), (y.shape, y.dtype)"
# TopK of a few among many (a heap, not a sort of the row): values and indices as numpy's
# stable sort gives them, ties by the lower index, largest and smallest, float and int32.
check "TopK, a few of many, as numpy sorts" 0 "" -- $PY - "$EXE" "$tmp" <<'PYEOF'
import sys, subprocess, numpy as np, onnx
from onnx import helper as h, TensorProto as T
exe, d = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
for dt, et in ((np.float32, T.FLOAT), (np.int32, T.INT32)):
    x = rng.integers(-500, 500, (3, 20000)).astype(dt)  # ties by the hundred
    for largest in (1, 0):
        g = h.make_graph([h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)], "topk",
                         [h.make_tensor_value_info("x", et, [3, 20000])],
                         [h.make_tensor_value_info("v", et, None), h.make_tensor_value_info("i", T.INT64, None)],
                         [h.make_tensor("k", T.INT64, [1], [7])])
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), f"{d}/topk.onnx")
        np.save(f"{d}/tkx.npy", x)
        subprocess.run([exe, "run", f"{d}/topk.onnx", "--input", f"x={d}/tkx.npy", "-o", f"{d}/tk"],
                       check=True, capture_output=True)
        want = np.argsort(-x if largest else x, axis=1, kind="stable")[:, :7]
        got_i, got_v = np.load(f"{d}/tk/i.npy"), np.load(f"{d}/tk/v.npy")
        assert (got_i == want).all(), (dt, largest, got_i, want)
        assert (got_v == np.take_along_axis(x, want, 1)).all(), (dt, largest)
PYEOF
# Every float16 bit pattern cast to float32 (the one decoder the loader and the loops share),
# as numpy converts it: subnormals, infinities and NaNs included.
check "float16 to float32, all 65536 halves, as numpy" 0 "" -- $PY - "$EXE" "$tmp" <<'PYEOF'
import sys, subprocess, numpy as np, onnx
from onnx import helper as h, TensorProto as T
exe, d = sys.argv[1], sys.argv[2]
g = h.make_graph([h.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], "half",
                 [h.make_tensor_value_info("x", T.FLOAT16, [65536])], [h.make_tensor_value_info("y", T.FLOAT, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), f"{d}/half.onnx")
x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
np.save(f"{d}/half.npy", x)
subprocess.run([exe, "run", f"{d}/half.onnx", "--input", f"x={d}/half.npy", "-o", f"{d}/half"],
               check=True, capture_output=True)
y, r = np.load(f"{d}/half/y.npy"), x.astype(np.float32)
same = (y.view(np.uint32) == r.view(np.uint32)) | (np.isnan(y) & np.isnan(r))
assert same.all(), np.nonzero(~same)[0][:10]
PYEOF
# Expand run by run (broadcast runs filled, others copied): shapes as numpy broadcasts them.
check "Expand, eight ways, as numpy broadcasts" 0 "" -- $PY - "$EXE" "$tmp" <<'PYEOF'
import sys, subprocess, numpy as np, onnx
from onnx import helper as h, TensorProto as T
exe, d = sys.argv[1], sys.argv[2]
cases = [((3, 1), (2, 3, 4)), ((1, 4, 1, 1), (2, 4, 3, 5)), ((5, 1, 1, 1), (5, 6, 7, 7)),
         ((1,), (3, 4)), ((2, 1, 3), (2, 4, 3)), ((4, 1), (4, 1)), ((1, 1), (0, 3)), ((), (2, 2))]
nodes, ins, outs, feeds = [], [], [], {}
for i, (a, b) in enumerate(cases):
    nodes.append(h.make_node("Expand", ["x%d" % i, "s%d" % i], ["y%d" % i]))
    ins.append(h.make_tensor_value_info("x%d" % i, T.INT64, list(a)))
    outs.append(h.make_tensor_value_info("y%d" % i, T.INT64, None))
    feeds["x%d" % i] = np.arange(int(np.prod(a)), dtype=np.int64).reshape(a) + 10
    feeds["s%d" % i] = np.array(b, dtype=np.int64)
g = h.make_graph(nodes, "expand", ins + [h.make_tensor_value_info("s%d" % i, T.INT64, [len(b)]) for i, (a, b) in enumerate(cases)], outs)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), d + "/expand.onnx")
args = [exe, "run", d + "/expand.onnx", "-o", d + "/ex"]
for k, v in feeds.items():
    np.save(d + "/exp_%s.npy" % k, v); args += ["--input", "%s=%s/exp_%s.npy" % (k, d, k)]
subprocess.run(args, check=True, capture_output=True)
for i, (a, b) in enumerate(cases):
    y = np.load(d + "/ex/y%d.npy" % i)
    w = feeds["x%d" % i] * np.ones(b, dtype=np.int64)
    assert y.shape == w.shape and (y == w).all(), (a, b, y, w)
PYEOF
check "--bind of an input not given" 1 "--bind nope: give its values with --input nope=FILE.npy" -- \
	$EXE run "$tmp/reshape.onnx" --input "x=$tmp/rx.npy" --input "shape=$tmp/rshape.npy" --bind nope -o "$tmp/rs"
# A device whose memory is a PCI device's P2P memory needs ump.ko.
G=$B/../tests/guest
if [ ! -e /dev/ump ]; then
	$EXE schedule --quiet "$M/squeezenet1_1.onnx" --shape input=2x3x224x224 --box "$G/box-cpu-p2p.json" \
		--pin Conv=emu0 --seed 7 --population 16 --generations 5 -o "$tmp/p2p.json" >/dev/null
	check "P2P device memory without ump.ko is refused, naming why" 1 \
		"of PCI 0000:03:00.0's P2P memory: it needs ump.ko, which is not loaded" -- \
		$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/x2.npy" --schedule "$tmp/p2p.json" -o "$tmp/p2p"
fi
[ "$fails" = 0 ]
