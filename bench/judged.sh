#!/bin/sh
# --precision auto on PaddleOCR's pretrained models, judged on text rendered in the
# Liberation fonts (tests/runtime/render_text.py), the issue's targets: the recogniser's
# strings on 200 lines (ctc), the detector's map on three pages (iou@0.3), the
# orientation classifier's class on 100 lines (top1), each within a budget of 1%
# measured on those samples.  For each: float32's, bf16's, int8's and the pick's time
# (medians of 5, one CPU device, 2 threads), each single precision's error as auto
# measured it, and the pick's speed-up over the fastest single precision within the
# budget (float32 where none is).  Times: the median of three interleaved rounds of
# medians of 3 (the recogniser's 200 lines take 3-4 s a run, and this VM's noise is
# 10-20% from one run to the next).  Speed is never pass/fail here.
# usage: judged.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -s "$M/ch_PP-OCRv4_rec_infer.onnx" ] || { echo "judged: the PaddleOCR models are missing, skipped"; exit 0; }
R=$ROOT/tests/runtime/render_text.py
$PY "$R" lines 200 6 "$T/rec.npy"
$PY "$R" pages 3 4 "$T/det.npy"
$PY "$R" flipped 100 2 "$T/cls.npy"
med() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
for m in rec:ch_PP-OCRv4_rec_infer:ctc cls:ch_ppocr_mobile_v2.0_cls_infer:top1 det:ch_PP-OCRv4_det_infer:iou@0.3; do
	x=${m%%:*} rest=${m#*:} model=${rest%%:*} metric=${rest#*:}
	run="$HO run $M/$model.onnx --input x=$T/$x.npy --threads 2"
	$run -o "$T/$x.auto" --repeat 1 --warmup 1 --precision auto --accuracy 0.01 \
		--accuracy-metric "$metric" >"$T/$x.auto.log" 2>&1 || { cat "$T/$x.auto.log"; exit 1; }
	if grep -q "^precision auto: float32 (" "$T/$x.auto.log"; then
		echo "judged: $(grep "^precision auto" "$T/$x.auto.log")"
		exit 0
	fi
	for _ in 1 2 3; do
		for p in fp32 bf16 int8 "$T/$x.auto/precision.json"; do
			printf '%s ' "$($run -o "$T/o" --repeat 3 --precision "$p" | med)"
		done
		echo
	done >"$T/rounds"
	mid() { sort -n | sed -n 2p; }
	f=$(cut -d' ' -f1 "$T/rounds" | mid) b=$(cut -d' ' -f2 "$T/rounds" | mid)
	i=$(cut -d' ' -f3 "$T/rounds" | mid) a=$(cut -d' ' -f4 "$T/rounds" | mid)
	line=$(grep "^precision auto:" "$T/$x.auto.log")
	e8=$(echo "$line" | sed -n 's/.*all in one: int8 \([0-9.e+-]*\).*/\1/p')
	e16=$(echo "$line" | sed -n 's/.*all in one:.* bf16 \([0-9.e+-]*\);.*/\1/p')
	err=$(echo "$line" | sed -n 's/.*measured error \([0-9.e+-]*\).*/\1/p')
	took=$(echo "$line" | sed -n 's/precision auto: \(.*\), measured error.*/\1/p')
	awk -v x="$x" -v m="$metric" -v f="$f" -v b="$b" -v i="$i" -v a="$a" -v e8="$e8" -v e16="$e16" \
		-v err="$err" -v took="$took" 'BEGIN {
		best = f; name = "float32"
		if (e16 + 0 <= 0.01 && b + 0 < best) { best = b; name = "bf16" }
		if (e8 + 0 <= 0.01 && i + 0 < best) { best = i; name = "int8" }
		printf "judged %s (%s): float32 %.1f ms, bf16 %.1f (error %s), int8 %.1f (error %s); auto %.1f ms, error %s, %s: %.2fx float32, %.2fx %s, the fastest single precision within 1%%\n", x, m, f, b, e16, i, e8, a, err, took, f / a, best / a, name
	}'
done
