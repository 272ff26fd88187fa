#!/bin/sh
# The cpu backend's answers against references: PyTorch's own outputs for the
# torchvision CNNs (saved when they were exported, random weights, BatchNorm
# made non-trivial), ONNX Runtime for the real PaddleOCR models.
# usage: test_numerics.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
export ORT_NODE_MODULE=${ORT_NODE_MODULE:-$CACHE/ort/node_modules/onnxruntime-node}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for m in resnet18 mobilenet_v2 squeezenet1_1 efficientnet_b0; do
	"$HO" run "$M/$m.onnx" --input "input=$M/$m.ref_in.npy" -o "$T/$m" >/dev/null
	$PY "$ROOT/tests/runtime/compare.py" "$M/$m.ref_out.npy" "$T/$m/logits.npy" "$m vs PyTorch"
done

[ -d "$ORT_NODE_MODULE" ] || { echo "skipped: onnxruntime-node not in $ORT_NODE_MODULE"; exit 77; }
# A page the models can read: dark text-like bars on white, normalised as
# PaddleOCR does.  (On noise the detector's map is all ~1e-7, where ONNX
# Runtime's fast sigmoid itself is off by 1e-7: no test of anything.)
ocr() { # ocr MODEL SHAPE
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
	"$HO" run "$1" --input "x=$T/$name.in.npy" -o "$T/$name.ho" >/dev/null
	for ref in "$T/$name.ort"/*.npy; do
		$PY "$ROOT/tests/runtime/compare.py" "$ref" "$T/$name.ho/$(basename "$ref")" "$name $2 vs ONNX Runtime"
	done
}
ocr "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" "1,3,48,192"
ocr "$M/ch_PP-OCRv4_det_infer.onnx" "1,3,640,640"
