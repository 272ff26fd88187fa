#!/bin/sh
# The README's first command: set up this machine, build, and run the main job
# on the bundled default, the PaddleOCR PP-OCRv4 text detector (1x3x640x640):
#   1. schedule it on the shipped edge box (MLU370 + Ascend 310P + Alveo U280 +
#      Edge TPU + CPU): the baselines, the Pareto front, and the schedule with
#      per-operator explanations in build/demo-schedule.json;
#   2. run that picked schedule here, the accelerators emulated on this CPU
#      (predicted times are the real devices'; the copies must match);
#   3. probe this machine (a box of it: oneDNN on one core, the OpenCL device
#      PoCL on the other, and every core as one oneDNN device, the split's
#      rival; a quick profile measured with the runtime's own kernels, the
#      model's nodes among them), schedule the model on that profile and run
#      the pick: measured against predicted time on real hardware;
#   4. write the report of that schedule and its run (build/demo-report.html)
#      and the run's Chrome trace, and say where they are.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
sh scripts/deps.sh
make -s -j"$(nproc)" all
sh scripts/models.sh default
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
MODEL=$CACHE/models/ch_PP-OCRv4_det_infer.onnx
build/heteroopt schedule "$MODEL" --shape x=1x3x640x640 \
	--box boxes/edge-mlu370-ascend310p-u280.json --seed 1 -o build/demo-schedule.json
# A page to read: dark bars on white, normalised as PaddleOCR expects.
/usr/bin/python3 - build/demo-input.npy <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng(7)
img = np.ones((640, 640, 3), np.float32)
for _ in range(24):
    y, x = rng.integers(0, 600), rng.integers(0, 320)
    img[y:y + 28, x:x + rng.integers(80, 320)] = rng.random(3) * 0.3
x = (img - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
np.save(sys.argv[1], np.ascontiguousarray(x.transpose(2, 0, 1)[None].astype(np.float32)))
PYEOF
echo
echo "== the picked edge-box schedule, run here with its accelerators emulated"
build/heteroopt run "$MODEL" --input x=build/demo-input.npy --schedule build/demo-schedule.json \
	-o build/demo-out --repeat 3
echo
echo "== this machine, probed (oneDNN, PoCL, or both cores as one), scheduled on what was measured, and run"
build/heteroopt probe --write-box --split 2 --opencl -o build/this-machine.json
build/heteroopt probe --box build/this-machine.json --quick --model "$MODEL:x=1x3x640x640" \
	-o build/this-machine-profile.json
build/heteroopt schedule "$MODEL" --shape x=1x3x640x640 --box build/this-machine.json \
	--profile build/this-machine-profile.json --seed 1 --quiet -o build/demo-schedule-here.json >/dev/null
build/heteroopt run "$MODEL" --input x=build/demo-input.npy \
	--schedule build/demo-schedule-here.json -o build/demo-out --repeat 10 \
	--save-run build/demo-run.json --trace build/demo-trace.json
echo
echo "== the report of this machine's schedule and its run"
build/heteroopt report build/demo-schedule-here.json --run build/demo-run.json -o build/demo-report.html
echo "open $ROOT/build/demo-report.html in a browser (it needs no network); the run's Chrome trace"
echo "is $ROOT/build/demo-trace.json (chrome://tracing or ui.perfetto.dev)"
