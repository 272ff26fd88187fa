#!/bin/sh
# Host side of the guest test runtime_models (scripts/qemu/run-tests.sh):
# into OUT, the models, inputs, the guest's boxes, schedules for them made
# here, and each model's outputs run here on one CPU device: what the guest
# must reproduce with its tensors in ump.ko's buffers.
#   runtime_models.prep.sh HETEROOPT MODELS_DIR OUT
set -eu
HO=$1 M=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
mkdir -p "$OUT"
cp "$HERE/box-2node.json" "$HERE/box-cpu-emu.json" "$HERE/box-cpu-p2p.json" "$OUT/"
cp "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$OUT/cls.onnx"
cp "$M/squeezenet1_1.onnx" "$OUT/squeezenet.onnx"
$PY -c "import numpy as np, sys; r = np.random.default_rng(11)
np.save(sys.argv[1], r.random((1, 3, 48, 192), dtype=np.float32))
np.save(sys.argv[2], r.standard_normal((1, 3, 224, 224), dtype=np.float32))" "$OUT/cls_x.npy" "$OUT/squeezenet_x.npy"
for spec in cls:x:1x3x48x192 squeezenet:input:1x3x224x224; do
	m=${spec%%:*} rest=${spec#*:}
	name=${rest%%:*} shape=${rest#*:}
	# Convolutions on the second device: both devices run, and on the
	# emulator every edge between them is a copy.
	"$HO" schedule --quiet "$OUT/$m.onnx" --shape "$name=$shape" --box "$OUT/box-2node.json" \
		--pin Conv=cpu1 --population 16 --generations 10 --seed 7 -o "$OUT/$m@2node.json" >/dev/null
	"$HO" schedule --quiet "$OUT/$m.onnx" --shape "$name=$shape" --box "$OUT/box-cpu-emu.json" \
		--pin Conv=emu0 --population 16 --generations 10 --seed 7 -o "$OUT/$m@cpu-emu.json" >/dev/null
	# Convolutions in one device's P2P memory, their ReLUs in the other's.
	"$HO" schedule --quiet "$OUT/$m.onnx" --shape "$name=$shape" --box "$OUT/box-cpu-p2p.json" \
		--pin Conv=emu0 --pin Relu=emu1 --population 16 --generations 10 --seed 7 \
		-o "$OUT/$m@cpu-p2p.json" >/dev/null
	"$HO" run "$OUT/$m.onnx" --input "$name=$OUT/${m}_x.npy" --warmup 1 --repeat 1 \
		-o "$OUT/ref-$m" >/dev/null
done
