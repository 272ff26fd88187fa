#!/bin/sh
# Host half of the guest benchmark frame_bench (and of bench/run.sh's frame
# loop): a model that reads a whole 1x3x640x640 frame and little else (a
# GlobalAveragePool), so that the per-frame cost is the hand-off's, and a
# frame for it.
#   frame_bench.prep.sh HETEROOPT MODELS_DIR OUT
set -eu
OUT=$3
mkdir -p "$OUT"
/usr/bin/python3 - "$OUT" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("GlobalAveragePool", ["x"], ["y"])], "frame_gap",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 640, 640])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 1, 1])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/gap.onnx")
np.save(sys.argv[1] + "/frame.npy", np.random.default_rng(9).random((1, 3, 640, 640), dtype=np.float32))
PYEOF
