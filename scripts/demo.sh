#!/bin/sh
# The README's first command: set up this machine, build, and run the main job
# on the bundled default (the PaddleOCR PP-OCRv4 text detector at 640x640):
# read it, infer every shape, and print per-node costs.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
sh scripts/deps.sh
make -s -j"$(nproc)" all
sh scripts/models.sh default
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
exec build/heteroopt inspect "$CACHE/models/ch_PP-OCRv4_det_infer.onnx" --shape x=1x3x640x640 --top 8
