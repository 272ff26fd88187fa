#!/bin/sh
# heteroopt schedule as a user meets it: the front on a shipped box, a schedule
# JSON that parses and holds what it promises, pins, constraints, impossible
# constraints, bad boxes, the classic inputs.
# usage: test_schedule.sh HETEROOPT MODELS_DIR
set -u
EXE=$1
M=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/boxes
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ONE_LINE_ERRORS=1
. "$(dirname "$0")/lib.sh"

S="$EXE schedule --quiet --generations 30 --population 32"
check "schedule resnet18 on the edge box" 0 "Pareto front" -- \
	$S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/edge-mlu370-ascend310p-u280.json" -o "$tmp/r18.json"
check "schedule JSON holds front, pick, explanations, fingerprint" 0 "" -- $PY - "$tmp/r18.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "heteroopt-schedule/1"
n = len(d["tasks"])
assert n == 49, n
assert d["front"] and 0 <= d["picked"] < len(d["front"])
for s in d["front"]:
    assert len(s["device"]) == n and sorted(s["order"]) == list(range(n))
    assert all(e >= st for st, e in zip(s["start_s"], s["end_s"]))
    # the run ends with its last task or its last copy (a graph output fetched to the host)
    last = max(s["end_s"] + [x["end_s"] for x in s["transfers"]])
    assert abs(last - s["objectives"]["latency_s"]) < 1e-12, (last, s["objectives"]["latency_s"])
assert len(d["explanations"]) == n and all(e["why"] for e in d["explanations"])
assert all(len(v) == 16 for v in d["fingerprint"].values())
names = [b["name"] for b in d["baselines"]]
assert "HEFT" in names and "PEFT" in names and "greedy" in names, names
# The tpu0 holds 8 MiB: no picked schedule may put resnet18's weights there.
dev = d["devices"].index("tpu0")
assert d["front"][d["picked"]]["objectives"]["peak_memory_bytes"]["tpu0"] <= 8 * 2**20 * 0.85
PYEOF
# Progress into a file: whole lines, no carriage returns.
check "progress to a file is plain lines" 0 "" -- sh -c "$EXE schedule --generations 30 --population 32 '$M/resnet18.onnx' --shape input=1x3x224x224 --box '$B/server-t4-ascend-xeon.json' 2>'$tmp/progress.txt' >/dev/null"
check "... no carriage returns, a line every 10 generations, a last word" 0 "" -- $PY -c "
import re; t = open('$tmp/progress.txt', 'rb').read().decode()
assert '\\r' not in t, repr(t[:200])
gens = re.findall(r'^search: generation ([0-9]+)/30, front [0-9]+, hypervolume', t, re.M)
assert gens == ['1', '11', '21', '30'], gens
assert re.search(r'^search: done after 30 generations', t, re.M), t"
check "same seed, same file" 0 "" -- sh -c "$S '$M/resnet18.onnx' --shape input=1x3x224x224 --box '$B/edge-mlu370-ascend310p-u280.json' -o '$tmp/r18b.json' >/dev/null && cmp '$tmp/r18.json' '$tmp/r18b.json'"
check "pin keeps every Conv on cpu0" 0 "" -- sh -c "$S '$M/resnet18.onnx' --shape input=1x3x224x224 --box '$B/server-t4-ascend-xeon.json' --pin Conv=cpu0 -o '$tmp/pin.json' >/dev/null && $PY -c \"
import json; d = json.load(open('$tmp/pin.json'))
for s in d['front']:
    for t, dv in zip(d['tasks'], s['device']):
        assert t['op'] != 'Conv' or d['devices'][dv] == 'cpu0'
\""
check "memory constraint honoured" 0 "" -- sh -c "$S '$M/resnet18.onnx' --shape input=1x3x224x224 --box '$B/server-t4-ascend-xeon.json' --constraint mem:gpu0\<=20MB -o '$tmp/mem.json' >/dev/null && $PY -c \"
import json; d = json.load(open('$tmp/mem.json'))
assert all(s['objectives']['peak_memory_bytes']['gpu0'] <= 20e6 for s in d['front'])
\""
check "impossible latency: clear message, no file" 1 "no schedule meets the constraints" -- \
	$S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --constraint "latency<=1us" -o "$tmp/none.json"
check "... and nothing was written" 1 "" -- test -e "$tmp/none.json"
# A model run would refuse (float64 kernels the cpu backend lacks; a float16 one computes in
# float32 now) is refused here too.
$PY - "$tmp/f16.onnx" <<'PYEOF'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float64), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                       helper.make_node("Relu", ["c"], ["y"], name="relu")], "f64",
                      [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, 4, 6, 6])], [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PYEOF
check "a model run would refuse: every node counted, the first named" 1 "2 node(s) can run on no device of box 'this-machine-2cpu', the first: node 'conv' (Conv): the cpu backend computes float32 outputs only" -- $S "$tmp/f16.onnx" --box "$B/this-machine-2cpu.json"
check "unknown pin device" 1 "no device 'tpu9'" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --pin Conv=tpu9
check "pin on an unsupported device" 1 "cannot run on fpga0" -- $S "$M/transformer_encoder.onnx" --shape src=1x8x256 --box "$B/edge-mlu370-ascend310p-u280.json" --pin Softmax=fpga0
check "population not a number" 2 "--population: 'many' is not a whole number" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --population many
check "generations overflow" 2 "--generations: '99999999999999999999999'" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --generations 99999999999999999999999
# Numbers are decimal and whole: no octal, no trailing garbage, no sign.
check "--population 010 is ten, not octal eight" 0 "population 10," -- \
	$EXE schedule --generations 1 "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --population 010
check "--seed with trailing garbage" 2 "--seed: '5x' is not a whole number" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --seed 5x
check "--threads with a sign" 2 "--threads: '+2' is not a whole number" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --threads +2
check "--stall=N form" 2 "--stall: '' is not a whole number" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --stall=
check "a flag given a value" 2 "--quiet takes no value" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --quiet=1
check "an unknown option" 2 "unknown option '--popul'" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --popul 3
check "--version" 0 "heteroopt 0." -- $EXE --version
check "schedule --version" 0 "heteroopt 0." -- $EXE schedule --version
# --help explains every option with its unit and default.
check "--help: threads' default" 0 "search threads; 0 is one per core (default 0)" -- $EXE schedule --help
check "--help: stall's unit" 0 "gained less than 1e-4 over N" -- $EXE schedule --help
check "--help: a bare latency is seconds" 0 "a bare number is seconds" -- $EXE schedule --help
check "--help: pick constraint" 0 "constraint (the fastest schedule that meets every --constraint)" -- $EXE schedule --help
check "--help: -o" 0 "-o, --output FILE.json" -- $EXE schedule --help
check "--help: --box" 0 "--box BOX.json" -- $EXE schedule --help
check "run --help: --threads' default" 0 "(default: OpenMP's choice, one per core)" -- $EXE run --help
check "unknown objective" 2 "unknown objective 'speed'" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --objectives speed
check "weights, one too few" 2 "one non-negative weight per objective" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --pick weighted --weights 1,2
check "weights, one too many" 2 "more weights than --objectives" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --pick weighted --weights 1,2,3,4
check "weights all zero" 2 "all zero: nothing to choose by" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --pick weighted --weights 0,0,0
check "an empty objective list" 2 "--objectives: none given" -- $S "$M/resnet18.onnx" --box "$B/server-t4-ascend-xeon.json" --objectives ,
check "malformed constraint" 1 "'soon' is not a time like 8ms" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --constraint "latency<=soon"
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": -3, "mem_gib": 1}], "links": []}' >"$tmp/badbox.json"
check "bad box names the field" 1 "devices[0] (cpu0).mem_bw_gbps must be a number greater than 0" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/badbox.json"
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1, "p2p_memory": true}], "links": []}' >"$tmp/p2p-nopci.json"
check "box: P2P memory of no PCI device" 1 "devices[0] (cpu0).p2p_memory: say whose, with pci" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/p2p-nopci.json"
sed 's/"p2p_memory": true/"p2p_memory": 1, "pci": "0000:03:00.0"/' "$tmp/p2p-nopci.json" >"$tmp/p2p-num.json"
check "box: p2p_memory not a boolean" 1 "devices[0] (cpu0).p2p_memory must be true or false" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/p2p-num.json"
# A device told to keep its tensors in memory of its own is read by copies, never in place.
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1}, {"name": "ocl0", "kind": "gpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1, "backend": {"name": "opencl", "memory": "device"}}], "links": [{"a": "cpu0", "b": "ocl0", "shared_memory": true}]}' >"$tmp/own-shared.json"
check "box: shared memory with a device that keeps its own" 1 'links[0]: shared_memory, but ocl0 keeps its tensors in its own memory (backend memory "device")' -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/own-shared.json"
sed 's/"memory": "device"/"memory": "devce"/' "$tmp/own-shared.json" >"$tmp/own-typo.json"
check "box: backend memory is host or device" 1 'backend.memory must be "host" or "device", not "devce"' -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/own-typo.json"
# A misspelt key or value would keep a default and change the answer: refused by its JSON path.
sed 's/"launch_us": 6/"launch_uss": 6/' "$B/server-t4-ascend-xeon.json" >"$tmp/typo-dev.json"
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1}], "links": [{"a": "cpu0", "b": "gpu9", "gbps": 10}]}' >"$tmp/link-ghost.json"
check "box: a link to a device the box lacks" 1 "links[0].b: the box has no device 'gpu9'" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/link-ghost.json"
check "schedule: -o where no folder is, refused before the search" 1 "schedule: -o: cannot write $tmp/no/s.json" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/this-machine-2cpu.json" -o "$tmp/no/s.json"
check "box: misspelt device key" 1 "typo-dev.json: devices[1] (gpu0).launch_uss: unknown key" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/typo-dev.json"
sed '0,/"p2p":/s/"p2p":/"p2pp":/' "$B/server-t4-ascend-xeon.json" >"$tmp/typo-link.json"
check "box: misspelt link key" 1 "links[0].p2pp: unknown key" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/typo-link.json"
sed 's/"kind": "gpu"/"kind": "gpuu"/' "$B/server-t4-ascend-xeon.json" >"$tmp/typo-kind.json"
check "box: unknown device kind" 1 "devices[1] (gpu0).kind must be one of cpu, gpu, npu, fpga, dsp" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/typo-kind.json"
sed 's/"small_transfer_us"/"small_transfer"/' "$B/server-t4-ascend-xeon.json" >"$tmp/typo-top.json"
check "box: misspelt top-level key" 1 "typo-top.json: small_transfer: unknown key" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/typo-top.json"
sed '0,/"compute"/s/"compute"/"compte"/' "$B/this-machine-2cpu.json" >"$tmp/typo-eff.json"
check "box: misspelt op class" 1 "efficiency.compte: unknown key" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/typo-eff.json"
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1, "unsupported_ops": ["Convv"]}], "links": []}' >"$tmp/typo-op.json"
check "box: unknown op name" 1 "devices[0].unsupported_ops[0]: 'Convv' is not an operator HeteroOpt knows" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/typo-op.json"
printf '{"devices": {"cpu0": {"launch_uss": 3}}}' >"$tmp/typo-prof.json"
check "profile: misspelt key" 1 "typo-prof.json: devices.cpu0.launch_uss: unknown key" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/typo-prof.json"
printf '{"devices": {"cpu0": {}}, "bx": "server-t4-ascend-xeon"}' >"$tmp/typo-prof2.json"
check "profile: misspelt top-level key" 1 "typo-prof2.json: bx: unknown key" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/typo-prof2.json"
printf '{"devices": {"cpu0": {"op_efficiency": {"Conv2d": 0.5}}}}' >"$tmp/typo-prof3.json"
check "profile: unknown op name" 1 "devices.cpu0.op_efficiency.Conv2d: not an operator HeteroOpt knows" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/typo-prof3.json"
printf '{"devices": {"cpu0": {"node_us": {"/conv9/Conv": 5}}}}' >"$tmp/typo-prof4.json"
check "profile: a node the model lacks" 1 "devices.cpu0.node_us./conv9/Conv: the model has no node of that name" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/typo-prof4.json"
printf '{"name": "x", "host": "cpu0", "devices": [' >"$tmp/trunc.json"
check "truncated box JSON" 1 "trunc.json:1" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/trunc.json"
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1}, {"name": "cpu1", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1}], "links": [{"a": "cpu0", "b": "cpu1", "shared_memory": "yes"}]}' >"$tmp/sharedbox.json"
printf '{"name": "x", "host": "cpu0", "devices": [{"name": "cpu0", "kind": "cpu", "peak_gflops": {"float32": 1}, "mem_bw_gbps": 3, "mem_gib": 1, "cores": [0, -1]}], "links": []}' >"$tmp/corebox.json"
check "a core id below 0 is named" 1 "devices[0] (cpu0).cores[1] must be a CPU id from 0 to 255" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/corebox.json"
check "shared_memory must be a boolean" 1 "links[0].shared_memory must be true or false" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/sharedbox.json"
# Two CPU devices of one memory: both work, and not a byte is copied between them.
check "shared memory: in-place reads, no transfers" 0 "" -- sh -c "$S '$M/resnet18.onnx' --shape input=1x3x224x224 --box '$B/this-machine-2cpu.json' -o '$tmp/shared.json' >/dev/null && $PY -c \"
import json, sys
s = json.load(open('$tmp/shared.json'))
used = {dv for m in s['front'] for dv in m['device']}
xf = [x for m in s['front'] for x in m['transfers']]
sys.exit(0 if len(used) == 2 and not xf else 1)\""
# A measured profile overrides the box: one second for conv1 on cpu0.
printf '{"box": "server-t4-ascend-xeon", "devices": {"cpu0": {"node_us": {"/conv1/Conv": 1000000}}}}' >"$tmp/prof.json"
check "profile overrides the box's figures" 0 "" -- sh -c "$S '$M/resnet18.onnx' --shape input=1x3x224x224 --box '$B/server-t4-ascend-xeon.json' --profile '$tmp/prof.json' -o '$tmp/prof-s.json' >/dev/null && $PY -c \"
import json; d = json.load(open('$tmp/prof-s.json'))
cpu = [b for b in d['baselines'] if b['name'] == 'cpu0 alone'][0]
assert cpu['objectives']['latency_s'] >= 1.0, cpu['objectives']['latency_s']
conv1 = [i for i, t in enumerate(d['tasks']) if t['name'] == '/conv1/Conv'][0]
s = d['front'][0]
assert d['devices'][s['device'][conv1]] != 'cpu0' and s['objectives']['latency_s'] < 1.0
assert d['profile'] and d['fingerprint']['profile'] != '0000000000000000'
\""
printf '{"devices": {"npu7": {}}}' >"$tmp/badprof.json"
check "profile naming a device the box lacks" 1 "devices.npu7 is not a device of box" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/badprof.json"
# A measured time below zero, a zero rate, a profile of another box: refused by name.
printf '{"devices": {"cpu0": {"node_us": {"/conv1/Conv": -5}}}}' >"$tmp/negprof.json"
check "profile with a negative node time" 1 "devices.cpu0.node_us./conv1/Conv must be a number >= 0" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/negprof.json"
printf '{"devices": {"cpu0": {"peak_gflops": {"float32": 0}}}}' >"$tmp/zeroprof.json"
check "profile with a zero peak" 1 "devices.cpu0.peak_gflops.float32 must be a number > 0" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/zeroprof.json"
printf '{"box": "this-machine-2cpu", "devices": {"cpu0": {}}}' >"$tmp/otherprof.json"
check "profile of another box" 1 "measured on box 'this-machine-2cpu', not on 'server-t4-ascend-xeon'" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/otherprof.json"
printf '{"box": 7, "devices": {"cpu0": {}}}' >"$tmp/numboxprof.json"
check "profile whose box is not a name" 1 "box: expected the box's name, a string" -- $S "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$B/server-t4-ascend-xeon.json" --profile "$tmp/numboxprof.json"
if [ -e "$ROOT/../shared/data/stg/50/rand0000.stg" ]; then
	check "STG input" 0 "Pareto front" -- $EXE schedule --quiet --stg "$ROOT/../shared/data/stg/50/rand0000.stg" --procs 4 --objectives latency
fi
printf '{"devices": ["a", "b"], "tasks": [{"name": "x", "cost": [1, 2]}, {"name": "y", "cost": [null, 1]}], "edges": [{"from": 0, "to": 1, "comm": 0.5}]}' >"$tmp/dag.json"
check "JSON DAG input, null cost = unsupported" 0 "Pareto front" -- $EXE schedule --quiet --dag "$tmp/dag.json" --objectives latency -o "$tmp/dag-s.json"
check "... y never on a" 0 "" -- $PY -c "
import json; d = json.load(open('$tmp/dag-s.json'))
assert all(s['device'][1] == 1 for s in d['front'])"
printf '{"devices": ["a"], "tasks": [{"cost": [1]}, {"cost": [1]}], "edges": [{"from": 0, "to": 1, "comm": 0}, {"from": 1, "to": 0, "comm": 0}]}' >"$tmp/cyc.json"
check "cyclic DAG" 1 "cycle" -- $EXE schedule --quiet --dag "$tmp/cyc.json"
# Ctrl-C during a search: it stops after its generation and writes the best front so far.
: >"$tmp/int.err" # there before the poll below reads it
$EXE schedule "$M/squeezenet1_1.onnx" --shape input=1x3x224x224 --box "$B/edge-mlu370-ascend310p-u280.json" \
	--generations 1000000 --stall 0 -o "$tmp/int.json" >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'search: generation 1[1-9]/' "$tmp/int.err"; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
check "Ctrl-C in a search: exit 130, the front so far written, saying so" 0 "" -- $PY -c "
import json, re
err, out = open('$tmp/int.err').read(), open('$tmp/int.out').read()
assert $rc == 130, $rc
m = re.search(r'interrupted after generation (\d+) of 1000000: the best front found so far \((\d+) schedules\) follows, and is written', err)
assert m and 'wrote $tmp/int.json (interrupted' in out, (err[-400:], out[-200:])
d = json.load(open('$tmp/int.json'))
assert len(d['front']) == int(m.group(2)) and d['search']['generations_run'] == int(m.group(1)), d['search']
assert re.search(r'search: generation \d+/1000000, front \d+, hypervolume', err), err[:300]"
[ $fails = 0 ]
