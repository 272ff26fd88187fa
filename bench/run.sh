#!/bin/sh
# make bench: every benchmark prints ratios against a baseline measured in
# the same run; nothing here passes or fails on speed.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
M=$CACHE/models
B=$ROOT/build/bench
echo "== ONNX front end: load + shape inference vs read(2) of the same file (RSS above an idle child)"
"$B/bench_load" "$M/resnet50.onnx" input=1x3x224x224 9
"$B/bench_load" "$M/ch_PP-OCRv4_det_infer.onnx" x=1x3x640x640 9
"$B/bench_load" "$M/transformer_encoder.onnx" src=1x128x256 9
"$B/bench_load" "$M/efficientnet_b0.onnx" input=1x3x224x224 9
echo
echo "== scheduler: simulator, search time, quality against HEFT, STG optima, hypervolume"
cd "$ROOT" && "$B/bench_sched" "$M"
echo
echo "== ump.ko inside a QEMU guest (TCG, Debian's kernel): copy bandwidth vs memcpy, chains/s ioctl vs io_uring"
UMP_DMA_TESTS= UMP_WORK_SUFFIX=bench sh "$ROOT/scripts/qemu/run-tests.sh" debian ump_bench >/dev/null ||
	echo "ump bench: guest run failed, see build/qemu-debian-bench/serial.log"
grep -aE '^(copy host|chains/s)' "$ROOT/build/qemu-debian-bench/serial.log.txt" || true
