#!/bin/sh
# run --precision: a model's convolutions in bfloat16 on one CPU device (inputs and
# weights rounded, float32 sums and outputs), on a CPU with AVX512-BF16 or AMX.  What is
# refused, and why: another precision, one with a schedule, bf16 where oneDNN finds no
# native bf16 (ONEDNN_MAX_CPU_ISA holds it back here).  Then, where the CPU has it:
# resnet18, mobilenet_v2 and a U-Net (ConvTranspose, which stays float32) against
# PyTorch within 1% of the output's largest magnitude, the same top-1, and the report
# naming each Conv as bf16 but the depthwise ones (float32: bound by memory), and beside
# them only products by weights; a transformer
# encoder (its MatMuls by weights on oneDNN's matmul) against its own float32 run; and
# run --sensitivity bf16 on resnet18 against those runs, and --precision auto within three
# budgets, int8 and bf16 mixed (int8 alone where oneDNN is held to VNNI, and float32 where
# the CPU has neither).
# usage: test_precision.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -f "$M/resnet18.onnx" ] || { echo "skipped: $M/resnet18.onnx missing (sh scripts/models.sh)"; exit 77; }
R18="$M/resnet18.onnx --input input=$M/resnet18.ref_in.npy -o $T/o --repeat 1 --warmup 1"

. "$ROOT/tests/runtime/refused.sh"
# shellcheck disable=SC2086
refused "fp8" "precision 'fp8': not one of fp32, bf16" "$HO" run $R18 --precision fp8
"$HO" schedule --quiet --objectives latency --seed 1 --population 8 --generations 2 \
	"$M/resnet18.onnx" --shape input=1x3x224x224 --box "$ROOT/boxes/this-machine-2cpu.json" \
	-o "$T/s.json" >/dev/null
# shellcheck disable=SC2086
refused "with a schedule" "a schedule's devices compute as it planned them" \
	"$HO" run $R18 --schedule "$T/s.json" --precision bf16
# shellcheck disable=SC2086
refused "bf16 held back" "bf16 needs a CPU with AVX512-BF16 or AMX.*ONEDNN_MAX_CPU_ISA is set" \
	env ONEDNN_MAX_CPU_ISA=AVX512_CORE "$HO" run $R18 --precision bf16
# shellcheck disable=SC2086
refused "auto without a budget" "precision auto needs --accuracy BUDGET" "$HO" run $R18 --precision auto
# shellcheck disable=SC2086
refused "a budget without auto" "accuracy: it is the budget of --precision auto" \
	"$HO" run $R18 --accuracy 1e-3
# shellcheck disable=SC2086
refused "an unknown metric" "accuracy-metric 'psnr': one of max, top1, ctc or iou@T" \
	"$HO" run $R18 --precision auto --accuracy 1e-3 --accuracy-metric psnr
# shellcheck disable=SC2086
refused "a metric alone" "accuracy-metric: it judges --precision auto and --sensitivity" \
	"$HO" run $R18 --accuracy-metric top1
# auto where the CPU has no bf16: float32, saying why
# shellcheck disable=SC2086
env ONEDNN_MAX_CPU_ISA=AVX512_CORE "$HO" run $R18 --precision auto --accuracy 1 >"$T/auto0.log"
if ! grep -q "^precision auto: float32 (.*int8 needs a CPU with AVX512-VNNI.*bf16 needs a CPU with AVX512-BF16 or AMX" "$T/auto0.log" ||
	grep -q "nodes computed in" "$T/auto0.log"; then
	echo "auto without bf16: not float32"; cat "$T/auto0.log"; exit 1
fi
# shellcheck disable=SC2086
if ! "$HO" run $R18 --precision bf16 >"$T/probe.log" 2>&1; then
	grep -q "bf16 needs a CPU with AVX512-BF16 or AMX" "$T/probe.log" || { cat "$T/probe.log"; exit 1; }
	echo "skipped: this CPU has no AVX512-BF16 or AMX (the refusals above passed)"
	exit 77
fi
for m in resnet18:input:logits mobilenet_v2:input:logits unet_small:x:y; do
	model=${m%%:*} rest=${m#*:} in=${rest%%:*} out=${rest#*:}
	"$HO" run "$M/$model.onnx" --input "$in=$M/$model.ref_in.npy" -o "$T/$model" \
		--repeat 1 --warmup 1 --precision bf16 --report >"$T/$model.log"
	$PY "$ROOT/tests/runtime/compare.py" "$M/$model.ref_out.npy" "$T/$model/$out.npy" \
		"$model bf16 vs PyTorch" 1e-2
	$PY - "$M/$model.onnx" "$T/$model.log" "$M/$model.ref_out.npy" "$T/$model/$out.npy" <<'PYEOF'
import re, sys
import numpy as np
import onnx
model, log, ref, got = sys.argv[1:]
# the report cuts names at 44 characters; a depthwise Conv (one input channel per group)
# stays float32: bound by memory, the conversion only adds to it
g = onnx.load(model).graph
shape = {t.name: t.dims for t in g.initializer}
group = lambda n: next((a.i for a in n.attribute if a.name == "group"), 1)
depthwise = lambda n: group(n) > 1 and shape[n.input[1]][1] == 1
nodes = g.node
convs = {n.name[:44].strip() for n in nodes if n.op_type == "Conv" and not depthwise(n)}
dws = {n.name[:44].strip() for n in nodes if n.op_type == "Conv" and depthwise(n)}
products = {n.name[:44].strip() for n in nodes if n.op_type in ("MatMul", "Gemm")}
rows = {}
for line in open(log):
    m = re.match(r"^(\S.{43})\s(\S+)\s+\S+\s+[0-9.]+-\s*[0-9.]+(.*)$", line)
    if m:
        rows[m.group(1).strip()] = m.group(3).split()
said = re.search(r"run: (\d+) nodes computed in bf16", open(log).read())
bf16 = {n for n, rest in rows.items() if "bf16" in rest}
# every Conv (its batch norm or activation folded in keeps its name), and beside them only
# products by weights (a MatMul's or Gemm's on oneDNN's matmul)
assert {n for n in convs if n in rows} <= bf16 <= convs | products, (sorted(bf16 ^ convs)[:5])
assert not bf16 & dws, sorted(bf16 & dws)[:5]
assert said and int(said.group(1)) == len(bf16), (said and said.group(1), len(bf16))
r, g = np.load(ref), np.load(got)
if r.ndim == 2:
    assert r.argmax() == g.argmax(), ("top-1", r.argmax(), g.argmax())
print(f"{model.split('/')[-1]}: {len(bf16 & convs)} Convs and {len(bf16 & products)} products in bf16, "
      f"{len(dws & set(rows))} depthwise in float32")
PYEOF
done
$PY -c "import numpy as np, sys
np.save(sys.argv[1], np.random.default_rng(3).standard_normal((1, 32, 256)).astype(np.float32))" "$T/src.npy"
for p in fp32 bf16; do
	"$HO" run "$M/transformer_encoder.onnx" --input "src=$T/src.npy" -o "$T/tr.$p" --repeat 1 \
		--warmup 1 --precision $p >"$T/tr.$p.log"
done
grep -Eq "^run: [1-9][0-9]* nodes computed in bf16" "$T/tr.bf16.log" ||
	{ echo "transformer_encoder: no MatMul in bf16"; cat "$T/tr.bf16.log"; exit 1; }
$PY "$ROOT/tests/runtime/compare.py" "$T/tr.fp32/out.npy" "$T/tr.bf16/out.npy" \
	"transformer_encoder bf16 vs float32" 1e-2
# --sensitivity: each Conv of resnet18 alone in bf16, worst first; the whole model's error
# as a bf16 run's against a float32 run's, each node's between 0 and 10 times that.
"$HO" run "$M/resnet18.onnx" --input "input=$M/resnet18.ref_in.npy" -o "$T/sens" \
	--sensitivity bf16 >"$T/sens.log"
for p in fp32 bf16; do
	"$HO" run "$M/resnet18.onnx" --input "input=$M/resnet18.ref_in.npy" -o "$T/r18.$p" \
		--repeat 1 --warmup 1 --precision $p >/dev/null
done
$PY - "$T/sens/sensitivity.json" "$T/r18.fp32/logits.npy" "$T/r18.bf16/logits.npy" "$T/sens.log" <<'PYEOF'
import json, sys
import numpy as np
s = json.load(open(sys.argv[1]))
a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
whole = float(np.abs(a - b).max() / np.abs(a).max())
errs = [n["error"] for n in s["nodes"]]
assert s["precision"] == "bf16" and len(errs) == 20 and all(n["op"] == "Conv" for n in s["nodes"]), s
assert abs(s["all_nodes_error"] - whole) <= 1e-6 * max(whole, 1e-30) + 1e-9, (s["all_nodes_error"], whole)
assert errs == sorted(errs, reverse=True), errs
assert all(0 < e < 10 * whole for e in errs), (min(errs), max(errs), whole)
assert "sensitivity: 20 nodes can compute in bf16" in open(sys.argv[4]).read()
print(f"sensitivity: 20 Convs, {errs[-1]:.1e} to {errs[0]:.1e} alone, {whole:.1e} all together")
PYEOF
# --precision auto --accuracy: per node int8, bf16 or float32 (each where the CPU has it:
# ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI leaves int8 alone), within the budget by a float32
# run made apart, and the nodes it says it put in each precision those the report marks;
# a budget of 1 takes every node int8 helps, or every node bf16 helps where that alone
# saves more as measured.
for b in 5e-4 1e-2 1 vnni; do
	isa="" budget=$b
	[ $b = vnni ] && isa=AVX512_CORE_VNNI budget=1e-2
	env ${isa:+ONEDNN_MAX_CPU_ISA=$isa} "$HO" run "$M/resnet18.onnx" \
		--input "input=$M/resnet18.ref_in.npy" -o "$T/auto.$b" --repeat 1 --warmup 1 \
		--precision auto --accuracy $budget >"$T/auto.$b.log"
	$PY - "$T/r18.fp32/logits.npy" "$T/auto.$b/logits.npy" "$T/auto.$b.log" "$budget" "$b" <<'PYEOF'
import re, sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
log, budget, case = open(sys.argv[3]).read(), float(sys.argv[4]), sys.argv[5]
err = float(np.abs(a - b).max() / np.abs(a).max())
took = {p: (int(n), int(u)) for n, p, u in re.findall(r"(\d+) nodes in (\w+) \(of (\d+) it speeds up\)", log)}
said = re.search(r"precision auto: .*measured error (\S+) \(max\) within the budget", log)
assert took and said, log
line = re.search(r"^run: (\d+) nodes computed in (\w+)(?: and (\d+) in (\w+))?", log, re.M)
ran = {line.group(2): int(line.group(1))} if line else {}
if line and line.group(3):
    ran[line.group(4)] = int(line.group(3))
assert {p: n for p, (n, u) in took.items() if n} == ran, (took, ran, log)
assert sum(n for n, u in took.values()) <= 20
assert err <= budget and abs(err - float(said.group(1))) <= 6e-3 * err + 1e-12, (err, said.group(1), budget)
if case == "1":  # every node int8 helps; or, where bf16 alone saves more (AMX: close), bf16's
    assert any(n == u > 0 for n, u in took.values()), took
if case == "vnni":  # int8 alone: the CPU has no bf16 as oneDNN is held
    assert set(took) == {"int8"} and "precision auto: no bf16 (" in log, log
print(f"auto within {budget:g}{' (no bf16)' if case == 'vnni' else ''}: "
      f"{', '.join(f'{n} of {u} Convs in {p}' for p, (n, u) in took.items())}, error {err:.1e}")
PYEOF
done
