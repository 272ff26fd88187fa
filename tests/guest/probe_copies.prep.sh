#!/bin/sh
# Host side of the guest test probe_copies (scripts/qemu/run-tests.sh): into
# OUT, a model to plan on the profile the guest measures.
#   probe_copies.prep.sh HETEROOPT MODELS_DIR OUT
set -eu
M=$2 OUT=$3
mkdir -p "$OUT"
cp "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$OUT/cls.onnx"
