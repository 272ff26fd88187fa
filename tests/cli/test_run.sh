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
check "missing input" 1 "input 'input' was not given" -- $EXE run "$M/squeezenet1_1.onnx" -o "$tmp/out"
check "unknown input name" 1 "no input named 'image'" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "image=$tmp/x2.npy" -o "$tmp/out"
check "wrong spatial size" 1 "input" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/small.npy" -o "$tmp/out"
check "float64 input" 1 "must be float32" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/f64.npy" -o "$tmp/out"
check "malformed .npy" 1 "junk.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/junk.npy" -o "$tmp/out"
check "missing .npy file" 1 "nothere.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "input=$tmp/nothere.npy" -o "$tmp/out"
check "--input without NAME=" 2 "expected NAME=FILE.npy" -- \
	$EXE run "$M/squeezenet1_1.onnx" --input "$tmp/x2.npy"
check "operator without a kernel names its node" 1 "the cpu backend" -- \
	$EXE run "$M/control_flow.onnx" --input "x=$tmp/x23.npy" -o "$tmp/out"
check "not a model" 1 "bad_not_a_model.onnx" -- \
	$EXE run "$M/bad_not_a_model.onnx" --input "input=$tmp/x2.npy"
[ "$fails" = 0 ]
