#!/bin/sh
# The README's first command: set up this machine, build, and run the main job
# on the bundled default: schedule the PaddleOCR PP-OCRv4 text detector
# (1x3x640x640) on the shipped edge box (MLU370 + Ascend 310P + Alveo U280 +
# Edge TPU + CPU), print the baselines and the Pareto front, and write the
# schedule with per-operator explanations to build/demo-schedule.json.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
sh scripts/deps.sh
make -s -j"$(nproc)" all
sh scripts/models.sh default
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
exec build/heteroopt schedule "$CACHE/models/ch_PP-OCRv4_det_infer.onnx" --shape x=1x3x640x640 \
	--box boxes/edge-mlu370-ascend310p-u280.json --seed 1 -o build/demo-schedule.json
