#!/bin/sh
# How far the cost model is from this machine, with a profile the probes
# measured here: predicted against measured (warm median) end to end and
# per node, for each model on one CPU device and on the fastest schedule
# over two; the same on input sizes the probes never saw; two probes in a
# row; and a schedule picked on the measured profile against one picked on
# hand-written figures, both run.  Prints figures, passes or fails nothing.
# usage: predict.sh HETEROOPT MODELS_DIR BOXES_DIR
set -eu
HO=$1 M=$2 B=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MODELS="resnet18:input=1x3x224x224 resnet50:input=1x3x224x224 mobilenet_v2:input=1x3x224x224
efficientnet_b0:input=1x3x224x224 squeezenet1_1:input=1x3x224x224 transformer_encoder:src=1x128x256
ch_PP-OCRv4_det_infer:x=1x3x640x640 ch_PP-OCRv4_rec_infer:x=1x3x48x320
ch_ppocr_mobile_v2.0_cls_infer:x=1x3x48x192"
specs=""
for m in $MODELS; do specs="$specs --model $M/${m%%:*}.onnx:${m#*:}"; done
"$HO" probe --write-box --split 1 -o "$T/box1.json" >/dev/null
"$HO" probe --write-box --split 2 -o "$T/box2.json" >/dev/null
for n in 1 2; do
	"$HO" probe --box "$T/box$n.json" -q $specs -o "$T/prof$n.json" >/dev/null
done
/usr/bin/python3 -c "
import json, sys
for n in (1, 2):
    p = json.load(open('$T/prof%d.json' % n))
    print('probe    box of %d device(s), full sweep and %d models: %.1f s, %d figures flagged as noisy' % (n, 9, p['probe']['seconds'], len(p['probe']['flagged'])))"

echo "== predicted against measured: whole run (median of 21 warm runs) and per node"
for m in $MODELS; do
	model=${m%%:*} shape=${m#*:}
	"$HO" schedule "$M/$model.onnx" --shape "$shape" --box "$T/box2.json" --profile "$T/prof2.json" \
		--objectives latency --seed 1 --quiet -o "$T/s2.json" >/dev/null
	for run in "box1:--box $T/box1.json --profile $T/prof1.json" \
		"box2:--box $T/box2.json --profile $T/prof2.json --schedule $T/s2.json"; do
		label=${run%%:*}
		# shellcheck disable=SC2086
		"$HO" calibrate "$M/$model.onnx" --shape "$shape" ${run#*:} --repeat 21 --worst 0 2>/dev/null |
			awk -v m="$model" -v l="$label" '
			/measured\/predicted/ { for (i = 1; i <= NF; i++) { if ($i == "predicted") p = $(i + 1); if ($i == "measured") ms = $(i + 1) }; r = $NF }
			/percentage error/ { split($0, a, "error "); split(a[2], b, "%"); mape = b[1]; split(a[2], c, "median "); split(c[2], d, "%"); med = d[1]; split(a[2], e, "P90 "); split(e[2], f, "%"); p90 = f[1] }
			/nodes by error/ { sub(/.*error: /, ""); dist = $0 }
			END { printf "predict  %-32s %s: measured %8.2f ms, predicted %8.2f ms, measured/predicted %.3f; per node MAPE %5.1f%%, median %4.1f%%, P90 %5.1f%% (%s)\n", m, l == "box1" ? "one CPU device    " : "fastest over two  ", ms, p, r, mape, med, p90, dist }'
	done
done
echo "== input sizes the probes never measured (families scaled by work)"
for m in ch_PP-OCRv4_det_infer:x=1x3x320x320 ch_PP-OCRv4_det_infer:x=1x3x1280x736 resnet18:input=4x3x224x224; do
	model=${m%%:*} shape=${m#*:}
	"$HO" calibrate "$M/$model.onnx" --shape "$shape" --box "$T/box1.json" --profile "$T/prof1.json" \
		--repeat 11 --worst 0 2>/dev/null | awk -v m="$model $shape" '
		/measured\/predicted/ { for (i = 1; i <= NF; i++) { if ($i == "predicted") p = $(i + 1); if ($i == "measured") ms = $(i + 1) }; r = $NF }
		/percentage error/ { split($0, a, "error "); split(a[2], b, "%"); mape = b[1] }
		END { printf "unseen   %-40s one CPU device: measured %8.2f ms, predicted %8.2f ms, measured/predicted %.3f; per node MAPE %5.1f%%\n", m, ms, p, r, mape }'
done
echo "== two quick probes in a row: how far their medians are apart"
"$HO" probe --box "$T/box2.json" --quick -q -o "$T/qa.json" >/dev/null
"$HO" probe --box "$T/box2.json" --quick -q -o "$T/qb.json" >/dev/null
/usr/bin/python3 -c "
import json
a, b = (json.load(open('$T/q%s.json' % k)) for k in 'ab')
d = sorted(abs(x['us'] / y['us'] - 1) for n in a['devices'] for x, y in zip(a['devices'][n]['sweep'], b['devices'][n]['sweep']))
print('repeat   %d kernels: median difference %.1f%%, %d of them within 5%%, largest %.1f%%; quick probes took %.1f and %.1f s' % (len(d), 100 * d[len(d) // 2], sum(x <= 0.05 for x in d), 100 * d[-1], a['probe']['seconds'], b['probe']['seconds']))"
echo "== the schedule picked on measured figures against the one picked on hand-written ones"
X=$T/x.npy
/usr/bin/python3 -c "import numpy as np; np.save('$X', np.random.default_rng(5).random((1, 3, 640, 640), dtype=np.float32))"
DET=$M/ch_PP-OCRv4_det_infer.onnx
"$HO" schedule "$DET" --shape x=1x3x640x640 --box "$B/this-machine-2cpu.json" --objectives latency --seed 1 --quiet -o "$T/hand.json" >/dev/null
"$HO" schedule "$DET" --shape x=1x3x640x640 --box "$T/box2.json" --profile "$T/prof2.json" --objectives latency --seed 1 --quiet -o "$T/meas.json" >/dev/null
hand=$("$HO" run "$DET" --input "x=$X" --schedule "$T/hand.json" --box "$B/this-machine-2cpu.json" --repeat 21 -o "$T/o" | sed -n 's/.*latency: measured \([0-9.]*\) ms.*predicted \([0-9.]*\) ms.*/\1 \2/p')
meas=$("$HO" run "$DET" --input "x=$X" --schedule "$T/meas.json" --repeat 21 -o "$T/o" | sed -n 's/.*latency: measured \([0-9.]*\) ms.*predicted \([0-9.]*\) ms.*/\1 \2/p')
/usr/bin/python3 -c "
import json
h, m = (json.load(open('$T/%s.json' % k)) for k in ('hand', 'meas'))
dh, dm = (s['front'][s['picked']]['device'] for s in (h, m))
nh, nm = (s['devices'] for s in (h, m))
diff = sum(nh[a] != nm[b] for a, b in zip(dh, dm))
hm, hp = map(float, '$hand'.split()); mm, mp = map(float, '$meas'.split())
print('pick     PP-OCRv4 det 640: %d of %d tasks on another device; hand-written figures: predicted %.2f ms, ran %.2f ms; measured profile: predicted %.2f ms, ran %.2f ms; measured-profile pick ran %.3fx the other\'s time' % (diff, len(dh), hp, hm, mp, mm, mm / hm))"
