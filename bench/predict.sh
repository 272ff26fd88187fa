#!/bin/sh
# How far the cost model is from this machine, with a profile the probes
# measured here: predicted against measured (warm median) end to end and
# per node, for each model on one CPU device, on the fastest schedule over
# two (or both cores as one), and over oneDNN on one core and PoCL on the
# other; the same on input sizes the probes never saw; two probes in a
# row; and a schedule picked on the measured profile against one picked on
# hand-written figures, both run.  Prints figures, passes or fails nothing.
# usage: predict.sh HETEROOPT MODELS_DIR BOXES_DIR
set -eu
HO=$1 M=$2 B=$3
T=$(mktemp -d)
# the profiles stay in $PREDICT_KEEP when set, for a closer look
trap '[ -z "${PREDICT_KEEP:-}" ] || cp "$T"/prof*.json "$PREDICT_KEEP"/; rm -rf "$T"' EXIT
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

# best LABEL CALIBRATE-ARGS...: seven rounds of calibrate, the fastest kept
# (a neighbour on the host slows whole rounds by up to 1.8x for seconds at a
# time, seen here: resnet18 18.4-33.2 ms in twelve rounds in a row; the probe
# keeps its fastest round too), and how far the rounds spread.
best() {
	label=$1
	shift
	for r in 1 2 3 4 5 6 7; do
		"$HO" calibrate "$@" --repeat 7 --worst 0 2>/dev/null | tr '\n' ' '
		echo
	done | /usr/bin/python3 -c "
import re, sys
rows = []
for line in sys.stdin:
    m = re.search(r'predicted ([0-9.]+) ms, measured ([0-9.]+) ms.*?measured/predicted ([0-9.]+)', line)
    e = re.search(r'percentage error ([0-9.]+)%, median ([0-9.]+)%, P90 ([0-9.]+)%', line)
    d = re.search(r'nodes by error: ([^|]*?)  ', line + '  ')
    if m and e:
        rows.append((float(m.group(2)), float(m.group(1)), float(m.group(3)), e.groups(), d.group(1) if d else ''))
if not rows:
    sys.exit(print('$label: calibrate failed'))
ms, p, r, e, d = min(rows)
print('%-58s measured %8.2f ms, predicted %8.2f ms: measured/predicted %.3f (rounds %.2f-%.2f); per node MAPE %s%%, median %s%%, P90 %s%% (%s)' % (
    '$label', ms, p, r, min(x[2] for x in rows), max(x[2] for x in rows), e[0], e[1], e[2], d.strip()))"
}
echo "== predicted against measured: whole run (fastest of seven rounds of 7 warm runs) and per node"
for m in $MODELS; do
	model=${m%%:*} shape=${m#*:}
	"$HO" schedule "$M/$model.onnx" --shape "$shape" --box "$T/box2.json" --profile "$T/prof2.json" \
		--objectives latency --seed 1 --quiet -o "$T/s2.json" >/dev/null
	best "predict  $model, one CPU device" "$M/$model.onnx" --shape "$shape" \
		--box "$T/box1.json" --profile "$T/prof1.json"
	best "predict  $model, fastest of two devices or both as one" "$M/$model.onnx" --shape "$shape" \
		--box "$T/box2.json" --profile "$T/prof2.json" --schedule "$T/s2.json"
done
echo "== cpu0 (oneDNN, one core) + ocl0 (PoCL, the other): the fastest schedule over the two"
"$HO" probe --write-box --split 2 --opencl -o "$T/box3.json" >/dev/null
# the split itself: without cpus, its alternative, which the fastest would be
/usr/bin/python3 -c "
import json, sys
b = json.load(open(sys.argv[1]))
b['devices'] = [d for d in b['devices'] if 'alternative_to' not in d]
b['links'] = [l for l in b['links'] if 'cpus' not in (l['a'], l['b'])]
json.dump(b, open(sys.argv[1], 'w'))" "$T/box3.json"
"$HO" probe --box "$T/box3.json" -q --quick $specs -o "$T/prof3.json" >/dev/null
for m in $MODELS; do
	model=${m%%:*} shape=${m#*:}
	"$HO" schedule "$M/$model.onnx" --shape "$shape" --box "$T/box3.json" --profile "$T/prof3.json" \
		--objectives latency --seed 1 --quiet -o "$T/s3.json" >/dev/null
	best "predict  $model, cpu0 + PoCL" "$M/$model.onnx" --shape "$shape" \
		--box "$T/box3.json" --profile "$T/prof3.json" --schedule "$T/s3.json"
done
echo "== input sizes the probes never measured (families scaled by work)"
for m in ch_PP-OCRv4_det_infer:x=1x3x320x320 ch_PP-OCRv4_det_infer:x=1x3x1280x736 resnet18:input=4x3x224x224; do
	model=${m%%:*} shape=${m#*:}
	best "unseen   $model $shape, one CPU device" "$M/$model.onnx" --shape "$shape" \
		--box "$T/box1.json" --profile "$T/prof1.json"
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
# interleaved, three rounds each, the fastest kept: the host's noise hits both alike
runs() { "$HO" run "$DET" --input "x=$X" --schedule "$1" --repeat 7 -o "$T/o" |
	sed -n 's/.*latency: measured \([0-9.]*\) ms.*predicted \([0-9.]*\) ms.*/\1 \2/p'; }
for r in 1 2 3; do
	echo "hand $(runs "$T/hand.json")"
	echo "meas $(runs "$T/meas.json")"
done >"$T/picks.txt"
hand=$(awk '$1 == "hand"' "$T/picks.txt" | sort -k2 -n | head -1 | cut -d' ' -f2-)
meas=$(awk '$1 == "meas"' "$T/picks.txt" | sort -k2 -n | head -1 | cut -d' ' -f2-)
/usr/bin/python3 -c "
import json
h, m = (json.load(open('$T/%s.json' % k)) for k in ('hand', 'meas'))
dh, dm = (s['front'][s['picked']]['device'] for s in (h, m))
nh, nm = (s['devices'] for s in (h, m))
diff = sum(nh[a] != nm[b] for a, b in zip(dh, dm))
hm, hp = map(float, '$hand'.split()); mm, mp = map(float, '$meas'.split())
print('pick     PP-OCRv4 det 640: %d of %d tasks on another device; hand-written figures: predicted %.2f ms, ran %.2f ms; measured profile: predicted %.2f ms, ran %.2f ms; measured-profile pick ran %.3fx the other\'s time' % (diff, len(dh), hp, hm, mp, mm, mm / hm))"
