#!/bin/sh
# Host side of the guest test frame_loop (scripts/qemu/run-tests.sh): into
# OUT, the PaddleOCR direction classifier, two frames for it, and each
# frame's answer run here: what every answer in the guest must equal.
#   frame_loop.prep.sh HETEROOPT MODELS_DIR OUT
set -eu
HO=$1 M=$2 OUT=$3
mkdir -p "$OUT"
cp "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$OUT/cls.onnx"
/usr/bin/python3 -c "import numpy as np, sys; r = np.random.default_rng(17)
for k in 'ab':
    np.save(sys.argv[1] + '/' + k + '.npy', r.random((1, 3, 48, 192), dtype=np.float32))" "$OUT"
for k in a b; do
	"$HO" run "$OUT/cls.onnx" --input "x=$OUT/$k.npy" -o "$OUT/ref-$k" --repeat 1 >/dev/null
done
