#!/bin/sh
# Runs every test and prints one line per test and a closing
# "N passed, N failed, N skipped".  A test is a command: exit 0 passes,
# 77 skips (a capability this machine lacks), anything else fails.
# Logs: build/test-logs/NAME.log.
#   tests/run.sh                 every test
#   tests/run.sh --quick         unit, CLI, runtime and model tests: no sanitizer
#                                build, no fuzzing, no kernel or QEMU (make test)
#   tests/run.sh -jN ...         N tests at a time, reported in the order they
#                                started (make test: -j2; make check runs one)
#   tests/run.sh PATTERN...      only tests whose name matches a shell pattern
#                                (cli/*, 'unit/test_pool', '*numerics*')
set -u
QUICK=0
JOBS=1
PATTERNS=""
for a in "$@"; do
	case $a in
	--quick) QUICK=1 ;;
	-j[1-9]*) JOBS=${a#-j} ;;
	-*) echo "run.sh: unknown option $a" >&2; exit 2 ;;
	*) PATTERNS="$PATTERNS $a" ;;
	esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# Tests side by side share the cores: an OpenMP thread that spins between kernels (GNU
# OpenMP's default) takes a core the other test needs.  make test on 2 cores: 186 s
# spinning, 156 s not.
[ "$JOBS" -gt 1 ] && export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
CACHE=${HETEROOPT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/heteroopt}
export HETEROOPT_MODELS=$CACHE/models
SHARED=$ROOT/../shared/data/models
PY=/usr/bin/python3
LOGS=build/test-logs
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
mkdir -p "$LOGS"
passed=0 failed=0 skipped=0 failed_names=""

selected() { # selected NAME: asked for by the command line
	if [ $QUICK = 1 ]; then
		case $1 in asan/* | fuzz/* | kernel/*) return 1 ;; esac
	fi
	[ -z "$PATTERNS" ] && return 0
	set -f
	for p in $PATTERNS; do
		# shellcheck disable=SC2254
		case $1 in $p) set +f; return 0 ;; esac
	done
	set +f
	return 1
}

report() { # report NAME RC SECS LOG: its line, counted
	case $2 in
	0) passed=$((passed + 1)); printf 'PASS  %-44s %4ss\n' "$1" "$3" ;;
	77) skipped=$((skipped + 1)); printf 'SKIP  %-44s (%s)\n' "$1" "$(tail -1 "$4")" ;;
	*) failed=$((failed + 1)); failed_names="$failed_names $1"
	   printf 'FAIL  %-44s exit %s\n' "$1" "$2"; tail -15 "$4" | sed 's/^/      /' ;;
	esac
}

log_of() { echo "$LOGS/$(echo "$1" | tr '/ ' '__').log"; }

# With -jN: the tests started and not yet reported, oldest first.  Each writes
# LOG.done ("RC SECS") when it ends.
started=""
flush() { # flush [wait]: report the finished tests at the head of the line
	while [ -n "$started" ]; do
		f_name=${started%% *} f_log=$(log_of "${started%% *}")
		if [ ! -e "$f_log.done" ]; then
			[ $# = 1 ] || return 0
			sleep 0.1
			continue
		fi
		read -r f_rc f_secs <"$f_log.done"
		rm -f "$f_log.done"
		report "$f_name" "$f_rc" "$f_secs" "$f_log"
		started=${started#* }
	done
}

running() { # how many started tests have not ended
	r_n=0
	for r_name in $started; do [ -e "$(log_of "$r_name").done" ] || r_n=$((r_n + 1)); done
	echo $r_n
}

run() { # run NAME command...
	name=$1
	shift
	selected "$name" || return 0
	log=$(log_of "$name")
	if [ "$JOBS" -gt 1 ]; then
		while [ "$(running)" -ge "$JOBS" ]; do sleep 0.1; done
		flush
		start=$(date +%s)
		rm -f "$log.done"
		("$@" >"$log" 2>&1; echo "$? $(($(date +%s) - start))" >"$log.done.tmp" &&
			mv "$log.done.tmp" "$log.done") </dev/null &
		started="$started$name "
		return 0
	fi
	start=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	report "$name" $rc $(($(date +%s) - start)) "$log"
}

skip_unless_file() { # a test of data only our machines have
	[ -e "$1" ] && return 0
	echo "skipped: $1 not present"
	return 77
}

model_check() { # model_check FILE BINDINGS...: a model missing is skipped as tests/cli/lib.sh's need_model does
	[ -s "$1" ] || { echo "skipped: $1 not present (scripts/models.sh makes or fetches it)"; return 77; }
	$PY tests/models/check_model.py "$ROOT/build/heteroopt" "$@"
}

# --- unit tests, normal build ---
for t in build/tests/test_*; do
	case $t in *.d) continue ;; esac # the compiler's header lists
	run "unit/$(basename "$t")" env HO_TEST_QUICK=$QUICK "$t"
done
run "style/clang-format" sh tests/format.sh "$ROOT"
run "cli/inspect" env HO_TEST_QUICK=$QUICK sh tests/cli/test_inspect.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
run "cli/schedule" sh tests/cli/test_schedule.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
run "cli/status" sh tests/cli/test_status.sh "$ROOT/build/heteroopt"
run "cli/run" env HO_TEST_QUICK=$QUICK sh tests/cli/test_run.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
run "cli/serve_feed" sh tests/cli/test_serve.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
run "cli/probe" env HO_TEST_QUICK=$QUICK sh tests/cli/test_probe.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS" "$ROOT/boxes"
[ $QUICK = 1 ] || run "cli/probe_opencl" sh tests/cli/test_probe_opencl.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
# a headless Chromium renders the report (11 s): make check's
[ $QUICK = 1 ] || run "cli/report_chromium" sh tests/cli/test_report.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS" "$ROOT/boxes"
# every heteroopt command the README and the walk-through show, two full probes among them
# (43 s): make check's
[ $QUICK = 1 ] || run "cli/readme_commands" sh tests/cli/test_readme.sh "$ROOT" "$HETEROOPT_MODELS"
run "install/prefix_pkgconfig_embed" sh tests/install/test_install.sh "$ROOT" "$HETEROOPT_MODELS"
run "runtime/concat_in_place" sh tests/runtime/test_concat_in_place.sh "$ROOT/build/heteroopt"
run "runtime/precision" sh tests/runtime/test_precision.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
run "runtime/int8" sh tests/runtime/test_int8.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
# auto's picks judged on PaddleOCR's models and rendered text (78 s): make check's
[ $QUICK = 1 ] || run "runtime/precision_judged" sh tests/runtime/test_judged.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
# each node's precision chosen with its device by schedule, measured (41 s with a probe): make check's
[ $QUICK = 1 ] || run "runtime/precision_scheduled" sh tests/runtime/test_sched_precision.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS"
run "runtime/numerics_cpu_vs_pytorch" env HO_TEST_QUICK=$QUICK \
	sh tests/runtime/test_numerics.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS" pytorch
run "runtime/numerics_cpu_vs_ort" env HO_TEST_QUICK=$QUICK \
	sh tests/runtime/test_numerics.sh "$ROOT/build/heteroopt" "$HETEROOPT_MODELS" ort
ONNX_TESTDATA=/usr/share/libonnx-testdata/data
run "conformance/onnx_backend" build/tests/onnx_backend "$ONNX_TESTDATA" --floor tests/conformance/floor
# again with small inputs bound by value: load-time folding computes most of each test
# (10 s): make check's
[ $QUICK = 1 ] || run "conformance/onnx_backend_folded" build/tests/onnx_backend "$ONNX_TESTDATA" --fold \
	--floor tests/conformance/floor
# the same recorded outputs against the OpenCL backend's kernels (PoCL here)
[ $QUICK = 1 ] || run "conformance/onnx_backend_opencl" build/tests/onnx_backend "$ONNX_TESTDATA" \
	--floor tests/conformance/floor_opencl --device opencl
# ... and over a device with memory of its own, every tensor crossing by copies (12 s)
[ $QUICK = 1 ] || run "conformance/onnx_backend_emu_discrete" build/tests/onnx_backend \
	"$ONNX_TESTDATA" --floor tests/conformance/floor_emu_discrete --device emu-discrete

# --- real models against python3-onnx and PyTorch layer counts ---
M=$HETEROOPT_MODELS
for m in resnet18 resnet50 mobilenet_v2 efficientnet_b0 squeezenet1_1; do
	run "models/$m" model_check "$M/$m.onnx" input=1x3x224x224
done
# --- the OpenCL backend (PoCL here) on every CNN it runs, wholly and split with cpu0 ---
# make test runs its two smallest (unit/test_opencl); make check the benchmarks' CNNs and
# the zoo's opencl models (tests/models/zoo.txt; against PyTorch), and PaddleOCR's
# classifier, recogniser and detector, the transformer encoder and pad_layouts' cropping
# Pad (against the cpu backend), each wholly on the device, and the zoo's opencl-partial ones (vit_b_16, whose
# Expand and Gather stay on cpu0).
[ $QUICK = 1 ] || run "opencl/models_wholly_and_split" \
	env HO_OPENCL_MODELS=squeezenet1_1,mobilenet_v2,resnet18,resnet50,efficientnet_b0,$(sh tests/models/zoo_list.sh opencl | paste -sd,),ch_ppocr_mobile_v2.0_cls_infer:x=1x3x48x192,ch_PP-OCRv4_rec_infer:x=1x3x48x320,ch_PP-OCRv4_det_infer:x=1x3x96x96,transformer_encoder:src=2x16x256,pad_layouts:x=1x24x9x11 \
	HO_OPENCL_PARTIAL=$(sh tests/models/zoo_list.sh opencl-partial | paste -sd,) \
	build/tests/test_opencl
# --- a discrete accelerator's memory (emu-discrete: the cpu kernels over memory of their
# own, as a GPU's): the zoo's other shapes wholly on it and split, every crossing a copy;
# unit/test_emu_discrete runs squeezenet1_1 and mobilenet_v2 (2.5 s in all).  test_cuda
# runs the same checks on a lent NVIDIA GPU and skips here.
run "emu_discrete/models_wholly_and_split" \
	env HO_EMU_DISCRETE_MODELS=resnet18,efficientnet_b0,ch_PP-OCRv4_det_infer:x=1x3x96x96,transformer_encoder:src=2x16x256 \
	build/tests/test_emu_discrete
run "models/transformer_encoder" model_check "$M/transformer_encoder.onnx" src=2x16x256
run "models/transformer_encoder_b1s77" model_check "$M/transformer_encoder.onnx" src=1x77x256
run "models/seq_rnn" model_check "$M/seq_rnn.onnx" x=3x20x16
run "models/control_flow" model_check "$M/control_flow.onnx"
run "models/external_data" model_check "$M/external/mlp_external.onnx" x=3x64
run "models/ppocr_det_npm_640" model_check "$M/ch_PP-OCRv4_det_infer.onnx" x=1x3x640x640
run "models/ppocr_rec_npm_48x320" model_check "$M/ch_PP-OCRv4_rec_infer.onnx" x=1x3x48x320
run "models/ppocr_cls_npm_48x192" model_check "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" x=1x3x48x192
run "models/shared_ppocr_det_960x544" model_check "$SHARED/ch_PP-OCRv4_det_infer.onnx" x=2x3x544x960
run "models/shared_ppocr_cls_48x192" model_check "$SHARED/ch_ppocr_mobile_v2.0_cls_infer.onnx" x=4x3x48x192

# --- the same library under AddressSanitizer, UBSan and LeakSanitizer ---
# A subshell: what it exports stays in it.  oneDNN held back from AMX here: creating an
# AMX int8 convolution (Debian's libdnnl 2.7) reads one 8-byte entry past one of its own
# allocations, which under ASan's allocator ends at an unmapped page in some heap layouts
# (schedule --sensitivity with resnet18's picks: a SEGV in dnnl_primitive_create 170 runs
# of 170 on an AMX Xeon, none in 52 held back).  Uninstrumented, oneDNN's read is not
# reported otherwise, and the AVX-512 kernels run the same code of ours.
asan_suite() (
	make -s O=build-asan EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" build-asan/heteroopt build-asan/tests/test_onnx_errors \
		build-asan/tests/test_onnx_load build-asan/tests/test_heft_peft build-asan/tests/test_sched_props \
		build-asan/tests/test_runtime build-asan/tests/test_external build-asan/tests/onnx_backend || return 1
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
	export ONEDNN_MAX_CPU_ISA=${ONEDNN_MAX_CPU_ISA:-AVX512_CORE_BF16}
	build-asan/tests/test_onnx_errors || return 1
	build-asan/tests/test_onnx_load || return 1
	# not its folding-budget check: that holds the peak RSS, which the sanitizer's shadow inflates
	HO_TEST_QUICK=1 sh tests/cli/test_inspect.sh "$ROOT/build-asan/heteroopt" "$M" || return 1
	if [ -e ../shared/data/heft ]; then build-asan/tests/test_heft_peft || return 1; fi
	build-asan/tests/test_sched_props || return 1
	build-asan/tests/test_runtime || return 1
	build-asan/tests/test_external || return 1
	build-asan/tests/onnx_backend "$ONNX_TESTDATA" --floor tests/conformance/floor || return 1
	sh tests/cli/test_schedule.sh "$ROOT/build-asan/heteroopt" "$M" || return 1
	sh tests/cli/test_run.sh "$ROOT/build-asan/heteroopt" "$M" || return 1
	sh tests/cli/test_serve.sh "$ROOT/build-asan/heteroopt" "$M" || return 1
	HO_SANITIZED=asan sh tests/cli/test_probe.sh "$ROOT/build-asan/heteroopt" "$M" "$ROOT/boxes" || return 1
	HO_SANITIZED=asan sh tests/runtime/test_numerics.sh "$ROOT/build-asan/heteroopt" "$M" pytorch || return 1
	rc=0
	sh tests/runtime/test_numerics.sh "$ROOT/build-asan/heteroopt" "$M" ort || rc=$?
	[ $rc = 0 ] || [ $rc = 77 ] || return 1
	# int8 and bf16: calibration, plans, sensitivity and auto, and scheduled (27 s + 60 s)
	for t in int8 precision sched_precision; do
		rc=0
		sh tests/runtime/test_$t.sh "$ROOT/build-asan/heteroopt" "$M" || rc=$?
		[ $rc = 0 ] || [ $rc = 77 ] || return 1
	done
	for m in resnet50 mobilenet_v2 efficientnet_b0 squeezenet1_1; do
		build-asan/heteroopt inspect "$M/$m.onnx" --shape input=1x3x224x224 --json >/dev/null || return 1
	done
	build-asan/heteroopt inspect "$M/transformer_encoder.onnx" --shape src=2x16x256 --json >/dev/null || return 1
	for m in ch_PP-OCRv4_det_infer:x=1x3x640x640 ch_PP-OCRv4_rec_infer:x=1x3x48x320; do
		[ -s "$M/${m%%:*}.onnx" ] || { echo "skipped: $M/${m%%:*}.onnx not present (scripts/models.sh makes or fetches it)"; continue; }
		build-asan/heteroopt inspect "$M/${m%%:*}.onnx" --shape "${m#*:}" --json >/dev/null || return 1
	done
	build-asan/heteroopt inspect "$M/control_flow.onnx" --json >/dev/null || return 1
	echo "asan: clean"
)
run "asan/unit+cli+models" asan_suite

# --- bounded fuzzing of the loader (libFuzzer) ---
fuzz() {
	command -v clang >/dev/null || { echo "skipped: no clang"; return 77; }
	make -s build/fuzz/fuzz_onnx || return 1
	# A fresh corpus each run. libFuzzer reports a finding with exit code 77 by
	# default, which this runner reads as "skipped": make findings exit 1.
	corpus=$(mktemp -d) seeds=build/fuzz/seeds
	mkdir -p "$seeds"
	cp "$M"/bad_cycle.onnx "$M"/bad_unknown_op.onnx "$M"/bad_initializer_shape.onnx "$M"/bad_matmul_dims.onnx \
		"$M"/control_flow.onnx "$M"/control_refused.onnx "$M"/scripted_loop.onnx "$M"/strings.onnx \
		"$M"/external/*.onnx "$seeds"/
	# Known crashers first, then explore for a bounded time.
	build/fuzz/fuzz_onnx -error_exitcode=1 tests/fuzz/regressions/* || return 1
	build/fuzz/fuzz_onnx -error_exitcode=1 -timeout_exitcode=1 -seed=1 -max_total_time="$FUZZ_SECONDS" -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=build/fuzz/ "$corpus" "$seeds"
	rc=$?
	rm -rf "$corpus"
	return $rc
}
run "fuzz/onnx_loader_${FUZZ_SECONDS}s" fuzz

fuzz_box() {
	command -v clang >/dev/null || { echo "skipped: no clang"; return 77; }
	make -s build/fuzz/fuzz_box || return 1
	corpus=$(mktemp -d)
	build/fuzz/fuzz_box -error_exitcode=1 tests/fuzz/box-regressions/* || return 1
	build/fuzz/fuzz_box -error_exitcode=1 -timeout_exitcode=1 -seed=1 -max_total_time=$((FUZZ_SECONDS / 3)) -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=build/fuzz/box- "$corpus" boxes
	rc=$?
	rm -rf "$corpus"
	return $rc
}
run "fuzz/box_parser_$((FUZZ_SECONDS / 3))s" fuzz_box

# Schedules, JSON DAGs, STG files, profiles and .npy files: one target, the
# first byte picks the reader (tests/fuzz/fuzz_inputs.c).
fuzz_inputs() ( # a subshell: its trap removes the scratch folders however it ends
	command -v clang >/dev/null || { echo "skipped: no clang"; exit 77; }
	make -s build/fuzz/fuzz_inputs || exit 1
	corpus=$(mktemp -d) seeds=$(mktemp -d)
	trap 'rm -rf "$corpus" "$seeds"' EXIT
	export FUZZ_MODEL="$M/index_ops.onnx" FUZZ_BOX=boxes/this-machine-2cpu.json
	build/heteroopt schedule --quiet "$FUZZ_MODEL" --box "$FUZZ_BOX" -o "$seeds/s.json" >/dev/null || exit 1
	{ printf '\000'; cat "$seeds/s.json"; } >"$seeds/schedule" && rm "$seeds/s.json"
	printf '\001{"devices": ["a", "b"], "tasks": [{"name": "x", "cost": [1, 2]}, {"name": "y", "cost": [null, 1]}, {"name": "z", "cost": [3, 1]}], "edges": [{"from": 0, "to": 1, "comm": 0.5}, {"from": 0, "to": 2, "comm": 1}]}' >"$seeds/dag"
	printf '\002 3\n 0 0 0\n 1 4 1 0\n 2 2 1 0\n 3 5 2 1 2\n 4 0 1 3\n' >"$seeds/stg"
	printf '\003{"box": "this-machine-2cpu", "devices": {"cpu0": {"peak_gflops": {"float32": 90}, "mem_bw_gbps": 20, "launch_us": 3, "op_efficiency": {"Gather": 0.5}, "node_us": {"steps": 12}}, "cpu1": {"launch_us": 1}}}' >"$seeds/profile"
	{ printf '\004'; cat "$M/resnet18.ref_out.npy"; } >"$seeds/npy"
	/usr/bin/python3 -c "import numpy as np; np.save('$seeds/s.npy', np.array([['a', '\u00e9'], ['', 'xyz']]))" &&
		{ printf '\004'; cat "$seeds/s.npy"; } >"$seeds/npy_strings" && rm "$seeds/s.npy"
	build/fuzz/fuzz_inputs -error_exitcode=1 tests/fuzz/inputs-regressions/* || exit 1
	build/fuzz/fuzz_inputs -error_exitcode=1 -timeout_exitcode=1 -seed=1 -max_total_time=$((FUZZ_SECONDS / 3)) -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=build/fuzz/inputs- "$corpus" "$seeds"
)
run "fuzz/schedule_dag_stg_profile_npy_$((FUZZ_SECONDS / 3))s" fuzz_inputs

# --- ump.ko: static checks, then the tests in two kernels booted in QEMU ---
ump_static() {
	kdir=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
	[ -n "$kdir" ] || { echo "skipped: no kernel headers"; return 77; }
	rm -rf build/ump-static && mkdir -p build/ump-static
	cp -r Kbuild kernel include build/ump-static/
	# W=1 and sparse (C=2 checks every file, not only rebuilt ones).
	make -s -C "$kdir" M="$ROOT/build/ump-static" W=1 C=2 modules >build/ump-static.log 2>&1 ||
		{ cat build/ump-static.log; return 1; }
	cat build/ump-static.log
	if grep -E 'warning:|error:' build/ump-static.log; then return 1; fi
	echo "W=1 and sparse: clean"
	src=$(sh scripts/debug-kernel.sh --source) || return 1
	"$src/scripts/checkpatch.pl" --no-tree --terse --show-types -f \
		kernel/ump/ump_*.c kernel/ump/ump*.h include/uapi/linux/ump.h >build/checkpatch.log 2>&1
	cat build/checkpatch.log
	if grep -q ': ERROR:' build/checkpatch.log; then return 1; fi
	echo "checkpatch: no errors"
}
run "kernel/ump_static_W=1_sparse_checkpatch" ump_static
STRESS="stress_copies stress_kill stress_enomem stress_fuzz stress_failslab"
run "kernel/ump_qemu_debian_6.1" sh scripts/qemu/run-tests.sh debian
run "kernel/ump_stress_debian_6.1" env UMP_DMA_TESTS= UMP_WORK_SUFFIX=stress sh scripts/qemu/run-tests.sh debian $STRESS
# Every DMA mapping bounced (as SEV/TDX guests force) and freed memory
# poisoned, so a missed dma_sync or a use-after-free shows without KASAN.
run "kernel/ump_swiotlb_debian_6.1" env UMP_QEMU_APPEND="swiotlb=force slub_debug=FZP page_poison=1" \
	UMP_WORK_SUFFIX=swiotlb UMP_DMA_TESTS="dma dma_faults dmabuf_sync copy" UMP_UNLOAD_TEST=unload_import \
	sh scripts/qemu/run-tests.sh debian copy dmabuf foreign waiters
run "kernel/ump_qemu_debug_6.12" sh scripts/qemu/run-tests.sh debug
# The 1,000,000 verified copies run on 6.1 above; under KASAN and lockdep a
# third of them (13 min for all of them here) finds what they would, and
# the kill, fuzz and failslab runs keep their full counts.
run "kernel/ump_stress_debug_6.12" env UMP_DMA_TESTS= UMP_WORK_SUFFIX=stress UMP_STRESS_COPIES_SCALE=0.3 \
	sh scripts/qemu/run-tests.sh debug $STRESS
# The same bouncing under KASAN, with the foreign exporters (udmabuf,
# dma-heaps) and faults injected into the workers while every map bounces.
# copy runs once, with the DMA channel: it then covers both engines.
run "kernel/ump_swiotlb_debug_6.12" env UMP_QEMU_APPEND="swiotlb=force" \
	UMP_WORK_SUFFIX=swiotlb UMP_DMA_TESTS="dma dma_faults dmabuf_sync fault_copy copy" UMP_UNLOAD_TEST=unload_import \
	sh scripts/qemu/run-tests.sh debug dmabuf foreign topo
flush wait

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
