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
echo "== runtime: dispatch per node (vs bare oneDNN launches and StarPU), hand-off between two CPU devices (vs a condition variable), pool copies vs memcpy"
"$B/bench_runtime" "$M"
echo
echo "== the OpenCL backend (PoCL here): dispatch per node vs a bare enqueue loop, pool copies vs clEnqueueCopyBuffer, MatMul vs CLBlast's SGEMM"
"$B/bench_opencl" "$M" || [ $? = 77 ]
echo
echo "== runtime: end-to-end latency on one CPU device vs ONNX Runtime, same thread count (median of 21)"
ORT_NODE_MODULE=$CACHE/ort/node_modules/onnxruntime-node
T=$(mktemp -d)
/usr/bin/python3 -c "import numpy as np, sys; r = np.random.default_rng(5)
np.save(sys.argv[1], r.standard_normal((1, 3, 224, 224), dtype=np.float32))
np.save(sys.argv[2], r.random((1, 3, 640, 640), dtype=np.float32))" "$T/x224.npy" "$T/x640.npy"
cp "$M/int8_cnn.in.npy" "$T/xq.npy"
for threads in 1 2; do
	for m in resnet18:input:x224 mobilenet_v2:input:x224 mobilenet_v3_large:input:x224 \
		efficientnet_b0:input:x224 convnext_tiny:input:x224 ch_PP-OCRv4_det_infer:x:x640 \
		int8_cnn:x:xq; do
		model=${m%%:*} rest=${m#*:} name=${rest%%:*} x=${rest#*:}
		ho=$("$ROOT/build/heteroopt" run "$M/$model.onnx" --input "$name=$T/$x.npy" -o "$T/out" \
			--repeat 21 --threads $threads | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
		ort=$(ORT_NODE_MODULE=$ORT_NODE_MODULE ORT_THREADS=$threads ORT_REPEAT=21 node \
			"$ROOT/tests/runtime/ort_ref.js" "$M/$model.onnx" "$T/ort" "$name=$T/$x.npy" |
			sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
		echo "$model $threads $ho $ort" | awk '{ printf "latency  %-24s %d thread(s): heteroopt %8.2f ms, ONNX Runtime %8.2f ms: ratio %.2f\n", $1, $2, $3, $4, $3 / $4 }'
	done
done
rm -rf "$T"
echo
echo "== run --precision bf16 and int8 against float32, one CPU device, 1 and 2 threads"
sh "$ROOT/bench/precision.sh" "$ROOT/build/heteroopt" "$M"
echo "== schedule --sensitivity: each node's precision chosen with its device, against the best single precision (3 min)"
sh "$ROOT/bench/sched_precision.sh" "$ROOT/build/heteroopt" "$M"
echo "== run --precision auto on PaddleOCR's models, judged on rendered text (about 20 min)"
sh "$ROOT/bench/judged.sh" "$ROOT/build/heteroopt" "$M"
echo
echo "== the zoo (torchvision, random weights) on one CPU device vs ONNX Runtime, 1 and 2 threads (Documentation/zoo.md)"
sh "$ROOT/bench/zoo.sh" "$ROOT/build/heteroopt" "$M"
echo
echo "== runtime: the OpenMP wait policy, idle and beside one busy loop per core (medians of 11, three rounds)"
sh "$ROOT/bench/busy.sh" "$ROOT/build/heteroopt" "$M"
echo
echo "== the frame loop (heteroopt serve and feed): frames read in place against copied in"
FB=$(mktemp -d)
sh "$ROOT/bench/guest/frame_bench.prep.sh" "$ROOT/build/heteroopt" "$M" "$FB"
D=$FB HO=$ROOT/build/heteroopt N=200 sh "$ROOT/bench/guest/frame_bench.sh" || echo "frame bench: failed"
rm -rf "$FB"
echo
echo "== the cost model against this machine: a profile measured here, predicted against measured"
sh "$ROOT/bench/predict.sh" "$ROOT/build/heteroopt" "$M" "$ROOT/boxes"
echo
echo "== ump.ko inside a QEMU guest (TCG, Debian's kernel): copy bandwidth vs memcpy, chains/s ioctl vs io_uring"
UMP_DMA_TESTS= UMP_WORK_SUFFIX=bench sh "$ROOT/scripts/qemu/run-tests.sh" debian ump_bench >/dev/null ||
	echo "ump bench: guest run failed, see build/qemu-debian-bench/serial.log"
grep -aE '^(copy host|chains/s)' "$ROOT/build/qemu-debian-bench/serial.log" || true
echo
echo "== the runtime on ump.ko inside the guest: the classifier's copies through io_uring vs ioctls;"
echo "   a wrong NUMA placement against the right one; the frame loop in place against copied"
UMP_DMA_TESTS= UMP_WORK_SUFFIX=bench-rt sh "$ROOT/scripts/qemu/run-tests.sh" debian runtime_bench \
	numa_bench frame_bench >/dev/null ||
	echo "runtime bench: guest run failed, see build/qemu-debian-bench-rt/serial.log"
grep -aE '^(classifier cpu\+emu|numa classifier|frame loop)' "$ROOT/build/qemu-debian-bench-rt/serial.log" || true
