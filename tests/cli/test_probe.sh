#!/bin/sh
# heteroopt probe, calibrate and schedule --resume as a user meets them: a
# box and a profile of this machine, a profile the scheduler plans on and
# that predicts better than the box alone, and every bad input (a device
# the machine lacks, a corrupt, hand-edited or foreign profile, a probe
# killed half-way) refused or warned about, naming the problem, with
# nothing half-written.
# usage: test_probe.sh HETEROOPT MODELS_DIR BOXES_DIR
set -u
EXE=$1
M=$2
B=$3
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
SQ=$M/squeezenet1_1.onnx

check "--write-box: this machine as two CPU devices" 0 "this machine as 2 CPU devices" -- \
	$EXE probe --write-box --split 2 -o "$tmp/box.json"
check "the box is this machine's: every online CPU once, threads per core, and all as one" 0 "" -- $PY - "$tmp/box.json" <<'PYEOF'
import json, os, sys
b = json.load(open(sys.argv[1]))
split = [d for d in b["devices"] if "alternative_to" not in d]
cores = [c for d in split for c in d["cores"]]
assert sorted(cores) == sorted(os.sched_getaffinity(0)), cores
assert all(d["threads"] == len(d["cores"]) and d["kind"] == "cpu" for d in b["devices"]), b
assert all(d["peak_gflops"]["float32"] > 0 and d["mem_bw_gbps"] > 0 for d in b["devices"]), b
whole = [d for d in b["devices"] if "alternative_to" in d]
assert [(d["name"], d["alternative_to"], sorted(d["cores"])) for d in whole] == \
    [("cpus", ["cpu0", "cpu1"], sorted(cores))], whole
assert [(l["a"], l["b"], l["shared_memory"]) for l in b["links"]] == \
    [("cpu0", "cpu1", True), ("cpu0", "cpus", True), ("cpu1", "cpus", True)], b
PYEOF
ONE_LINE_ERRORS=1
check "--split more devices than CPUs" 1 "--split 32: this machine has" -- \
	$EXE probe --write-box --split 32 -o "$tmp/nope.json"
check "no output named" 2 "no output given" -- $EXE probe --box "$tmp/box.json"
check "no box named" 2 "no box given" -- $EXE probe -o "$tmp/nope.json"
check "a device of a kind this runtime cannot drive" 1 "emu0 is a npu" -- \
	$EXE probe --box "$B/this-machine-cpu-emu.json" --quick -o "$tmp/nope.json"
$PY -c "
import json, sys
b = json.load(open('$tmp/box.json')); b['devices'][1]['cores'] = [250]
json.dump(b, open('$tmp/nocpu.json', 'w'))"
check "a device on a CPU the machine lacks" 1 "runs on CPU 250, which this machine lacks" -- \
	$EXE probe --box "$tmp/nocpu.json" --quick -o "$tmp/nope.json"
$PY -c "
import json
b = json.load(open('$tmp/box.json')); b['devices'][2]['alternative_to'] = ['cpu0', 'gpu9']
json.dump(b, open('$tmp/badalt.json', 'w'))"
check "alternative_to naming a device the box lacks" 1 "devices[2] (cpus).alternative_to[1]: not another device" -- \
	$EXE probe --box "$tmp/badalt.json" --quick -o "$tmp/nope.json"
check "a model that does not load" 1 "bad_not_a_model.onnx" -- \
	$EXE probe --box "$tmp/box.json" --quick --model "$M/bad_not_a_model.onnx" -o "$tmp/nope.json"
check "nothing was written by the refused probes" 0 "" -- sh -c "! ls '$tmp' | grep -q nope"
ONE_LINE_ERRORS=0

check "--quick probe with a model measured in place" 0 "probe: wrote $tmp/p.json" -- \
	$EXE probe --box "$tmp/box.json" --quick --model "$SQ" --shape input=1x3x224x224 -o "$tmp/p.json"
check "the profile holds what the probes measured" 0 "" -- $PY - "$tmp/p.json" <<'PYEOF'
import json, sys
import numpy as np
p = json.load(open(sys.argv[1]))
cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
assert p["machine"]["cpu"] == cpu and p["machine"]["cpus"] >= 2, p["machine"]
assert sorted(p["devices"]) == ["cpu0", "cpu1", "cpus"], p["devices"].keys()
for name, d in p["devices"].items():
    for cls in ("conv", "conv_depthwise", "conv_transpose", "conv3x3", "matmul", "eltwise", "pool",
                "norm", "movement"):
        m = d["kernel_models"][cls]
        assert m["points"] >= 1 and m["fixed_us"] + m["gflops"] + m["gbps"] > 0, (name, cls, m)
    # squeezenet's first layer, measured in place inside the model
    first = [k for k in d["families"] if k.startswith("Conv float32 w=64x3x3x3 strides=2x2")]
    assert first, sorted(d["families"])[:5]
    sizes = [r["bytes"] for r in d["bandwidth_by_size"]]
    assert sizes == sorted(sizes) and len(sizes) >= 3, sizes
    assert all(r["us"] > 0 and r["spread"] >= 0 for r in d["sweep"]), name
    assert d["launch_us"] >= 0 and d["mem_bw_gbps"] > 0, d["launch_us"]
    # a Sigmoid costs more than its bytes; the block is one the fit tries
    assert d["post_op_ns"]["Sigmoid"] > 0, d["post_op_ns"]
    assert d["kernel_models"]["conv"]["block"] in (1, 4, 8, 16, 32), d["kernel_models"]["conv"]
    # the reduced precisions where this CPU computes them natively (as oneDNN finds them):
    # convolutions and products by weights again, their speed-ups by work; a depthwise
    # convolution (which stays float32) and products of two activations never
    flags = set(p["machine"]["flags"].split())
    want = {"bf16": bool(flags & {"avx512_bf16", "amx_bf16"}),
            "int8": bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})}
    sp = d.get("precision_speedup", {})
    assert sorted(sp) == sorted(q for q in want if want[q]), (name, sorted(sp), want)
    for q, by in sp.items():
        assert set(by) <= {"conv", "conv3x3", "matmul"} and "conv" in by and "matmul" in by, (q, by)
        assert all(w > 0 and 0.1 < s < 50 for pts in by.values() for w, s in pts), by
        rows = [r for r in d["sweep"] if q + "_speedup" in r]
        assert sum(len(pts) for pts in by.values()) == len(rows), (q, rows)
        assert not any(r["class"] == "conv_depthwise" or r["kernel"].startswith("attention")
                       for r in rows), rows
(l,) = p["links"]
assert l["a"] == "cpu0" and l["b"] == "cpu1" and l["latency_us"] >= 0 and l["gbps"] > 0, l
assert l.get("handoff_gbps", 1) > 0, l  # absent only where the 256 KiB chain showed no cost
# this machine has no ump.ko: the runtime's copies go through the user-space pool's copy thread
(c,) = l["copies"]
assert c["path"] == "copy thread" and c["pool"].startswith("user-space fallback"), c
assert c["by_size"][0][0] == 4096 and c["saturates_at_bytes"] >= 4096 and c["gbps"] == l["gbps"], c
assert [r[0] for r in c["by_size"]] == [4096 * 4 ** k for k in range(7)], c["by_size"]
assert c["latency_us"] > 0 and 0 < c["burst_us_per_chain"] and c["burst_chains"] == 64, c
assert c["chains"] >= 7 * 5 + 64 * 5, c["chains"]
assert sorted((x["device"], x["beside"]) for x in p["interference"]) == [("cpu0", "cpu1"), ("cpu1", "cpu0")]
assert all(x["memory"] >= 1 and x["compute"] >= 1 for x in p["interference"]), p["interference"]
assert p["probe"]["quick"] is True and isinstance(p["probe"]["flagged"], list), p["probe"]
# cpu0 and cpu1 are twins: a quarter of their kernels within 1.25x of each other, or,
# measured twice apart, flagged and carrying the faster's figures (never believed)
t = {x["kernel"]: x["us"] for x in p["devices"]["cpu1"]["sweep"]}
g = sorted(max(x["us"] / t[x["kernel"]], t[x["kernel"]] / x["us"])
           for x in p["devices"]["cpu0"]["sweep"] if x["kernel"] in t)
carried = [f for f in p["probe"]["flagged"] if "its twin, measured twice" in f]
assert np.quantile(g, 0.75) <= 1.25 or carried, (g, p["probe"]["flagged"])
assert not carried or p["devices"]["cpu0"]["sweep"] == p["devices"]["cpu1"]["sweep"], carried
PYEOF
check "a schedule on the profile, no warning on this machine" 0 "" -- sh -c "$EXE schedule '$SQ' --shape input=1x3x224x224 --box '$tmp/box.json' --profile '$tmp/p.json' --quiet --generations 10 -o '$tmp/s.json' 2>&1 >/dev/null | grep -c warning | grep -qx 0"

# Calibration: the measured profile predicts this machine better than the box
# alone, and so does a refit from a run.  The host slows whole spells of this
# VM up to fourfold, which a single set of runs can fall into: the three
# calibrations are made again, up to three times, before the check fails; a
# profile no better than the box fails them all.  How close the whole run
# comes is the bench's to report (bench/predict.sh): a quick profile that fell
# into such a spell is off by half for every retry (seen in CI).
$EXE calibrate "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/p.json" \
	-o "$tmp/refit.json" >"$tmp/cal-prof.txt" 2>&1
check "calibrate reports end to end, per node and the worst nodes" 0 "" -- sh -c "grep -q 'cpu1 alone: predicted' '$tmp/cal-prof.txt' && grep -q 'nodes by error: <5%' '$tmp/cal-prof.txt' && grep -q 'worst 5:' '$tmp/cal-prof.txt' && grep -q 'wrote $tmp/refit.json' '$tmp/cal-prof.txt'"
check "the refit holds this run: a family point per node and a kernel_scale per device" 0 "" -- $PY - "$tmp/p.json" "$tmp/refit.json" <<'PYEOF'
import json, sys
p, r = (json.load(open(f)) for f in sys.argv[1:])
for d in ("cpu0", "cpu1"):
    pf, rf = p["devices"][d]["families"], r["devices"][d]["families"]
    assert set(pf) <= set(rf) and r["devices"][d]["kernel_scale"] >= 1, d
    # squeezenet's nodes were measured again: their points now hold this run's times
    changed = sum(a != b for k in pf for a, b in zip(pf[k], rf[k]))
    assert changed >= 10, (d, changed)
assert r["calibration"]["runs"] == 3, r["calibration"]  # cpu0, cpu1 and cpus alone
PYEOF
calibrations() {
	$EXE calibrate "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --worst 0 >"$tmp/cal-box.txt" 2>&1
	$EXE calibrate "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/p.json" \
		--worst 0 >"$tmp/cal-prof.txt" 2>&1
	$EXE calibrate "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/refit.json" \
		--worst 0 >"$tmp/cal-refit.txt" 2>&1
	$PY -c "
import re
b, p, r = [float(open('$tmp/cal-%s.txt' % k).read().split('percentage error ')[1].split('%')[0]) for k in ('box', 'prof', 'refit')]
e2e = [float(x) for x in re.findall(r'measured/predicted ([0-9.]+)', open('$tmp/cal-prof.txt').read())]
print('MAPE box %.1f%%, profile %.1f%%, refit %.1f%%; measured/predicted with the profile %s' % (b, p, r, e2e))
assert p < b and r < b and len(e2e) == 3"
}
calibrations_thrice() { calibrations || calibrations || calibrations; }
# Under a sanitizer the runtime's own code between kernels runs several times
# slower than anything the probe timed: its figures say nothing of accuracy.
# make test's quick loop runs two tests at a time: the other one's load is in every figure.
if [ -n "${HO_SANITIZED:-}" ]; then
	echo "skip accuracy against the box: a sanitized build ($HO_SANITIZED)"
elif [ "${HO_TEST_QUICK:-0}" = 1 ]; then
	echo "skip accuracy against the box: the quick loop shares the machine (make check runs it alone)"
else
	check "per node the profile and the refit beat the box" 0 "" -- \
		calibrations_thrice
fi
check "the refit loads as a profile" 0 "wrote $tmp/s2.json" -- \
	$EXE schedule "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/refit.json" --quiet --generations 5 -o "$tmp/s2.json"
check "--resume: the old front seeds the search" 0 "plans of $tmp/s.json in the first population" -- \
	$EXE schedule "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/refit.json" --generations 5 --resume "$tmp/s.json" -o "$tmp/s3.json"

ONE_LINE_ERRORS=1
check "--resume of another model's schedule" 1 "--resume $tmp/s.json: made for" -- \
	$EXE schedule "$M/resnet18.onnx" --shape input=1x3x224x224 --box "$tmp/box.json" --quiet --resume "$tmp/s.json" -o "$tmp/nope.json"
check "calibrate -o without a profile" 2 "give it with --profile" -- \
	$EXE calibrate "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" -o "$tmp/nope.json"
# Only the links: the hand-off and every copy path, no device measured; the
# profile plans as any other (the box's figures for the devices).
check "--links-only: hand-off and the copy paths, a line each" 0 "  copy thread 4 KiB in " -- \
	$EXE probe --box "$tmp/box.json" --links-only --quick -o "$tmp/links.json"
check "--links-only: links and no devices in the profile" 0 "" -- $PY - "$tmp/links.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
(l,) = p["links"]
assert p["devices"] == {} and p["interference"] == [] and p["probe"]["links_only"], p
assert l["latency_us"] >= 0 and [c["path"] for c in l["copies"]] == ["copy thread"], l
PYEOF
check "--links-only: the profile plans" 0 "wrote $tmp/sl.json" -- \
	$EXE schedule "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/links.json" --quiet --generations 5 -o "$tmp/sl.json"
ONE_LINE_ERRORS=1
check "--links-only with a model" 2 "--links-only measures no model" -- \
	$EXE probe --box "$tmp/box.json" --links-only --model "$SQ" -o "$tmp/nope.json"
ONE_LINE_ERRORS=0

# Hand-edited and corrupt profiles: one line naming the file and the entry.
edit() { # edit NAME PYTHON-STATEMENT-ON-p
	$PY -c "
import json
p = json.load(open('$tmp/p.json'))
$2
json.dump(p, open('$tmp/$1.json', 'w'))"
}
edit neg "p['devices']['cpu0']['kernel_models']['conv']['gbps'] = -1"
edit key "p['devices']['cpu1']['launch_uss'] = 1"
edit order "f = p['devices']['cpu0']['families']; k = next(k for k in f if len(f[k]) > 1); f[k].reverse()"
edit slow "p['interference'][0]['memory'] = 0.5"
edit link "p['links'][0]['b'] = 'gpu7'"
edit cls "p['devices']['cpu0']['kernel_models']['fft'] = p['devices']['cpu0']['kernel_models']['conv']"
edit bw "p['devices']['cpu1']['bandwidth_by_size'][0]['gbps'] = 0"
edit copies "p['links'][0]['copies'] = {'path': 'io_uring'}"
edit block "p['devices']['cpu0']['kernel_models']['conv']['block'] = 0"
edit postop "p['devices']['cpu1']['post_op_ns'] = {'Add': 1}"
edit speedup "p['devices']['cpu0']['precision_speedup'] = {'bf16': {'conv': [[1e6, 0]]}}"
edit spclass "p['devices']['cpu0']['precision_speedup'] = {'int8': {'fft': [[1e6, 2]]}}"
head -c 3000 "$tmp/p.json" >"$tmp/cut.json"
for c in "neg:kernel_models.conv.gbps must be a number >= 0" "key:devices.cpu1.launch_uss: unknown key" \
	"order:in increasing work" "slow:interference[0].memory must be a slowdown" \
	"link:links[0].b must name a device" "cls:kernel_models.fft: not a kernel class" \
	"bw:devices.cpu1.bandwidth_by_size[0] must be" "copies:links[0].copies must be a list" \
	"block:kernel_models.conv.block must be a whole number" \
	"postop:devices.cpu1.post_op_ns.Add: not an operator fused as a post-op" \
	"speedup:precision_speedup.bf16.conv: must be [[work, speed-up], ...]" \
	"spclass:precision_speedup.int8.fft: not a kernel class" \
	"cut:$tmp/cut.json:"; do
	check "profile ${c%%:*}: refused" 1 "${c#*:}" -- \
		$EXE schedule "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/${c%%:*}.json" --quiet -o "$tmp/nope.json"
done
ONE_LINE_ERRORS=0
edit foreign "p['machine']['cpu'] = 'Intel(R) Xeon(R) Platinum 8480+'; p['machine']['flags'] += ' amx_tile'"
check "a profile from another machine: a warning naming what differs" 0 "cpu: 'Intel(R) Xeon(R) Platinum 8480+' there" -- \
	$EXE schedule "$SQ" --shape input=1x3x224x224 --box "$tmp/box.json" --profile "$tmp/foreign.json" --quiet --generations 5 -o "$tmp/sf.json"
$PY -c "import numpy as np; np.save('$tmp/x.npy', np.zeros((1, 3, 224, 224), np.float32))"
check "a schedule made there, run here: the same warning" 0 "schedule $tmp/sf.json was measured on another machine" -- \
	$EXE run "$SQ" --input "input=$tmp/x.npy" --schedule "$tmp/sf.json" --repeat 2 -o "$tmp/out"

# Killed half-way: Ctrl-C ends it with nothing written, as does a SIGKILL.
$EXE probe --box "$tmp/box.json" -o "$tmp/int.json" >/dev/null 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid
check "Ctrl-C: exit 130, no profile, no temporary file" 0 "" -- sh -c "[ $? = 130 ] && ! ls '$tmp' | grep -q '^int'"
$EXE probe --box "$tmp/box.json" -o "$tmp/kill.json" >/dev/null 2>&1 &
pid=$!
sleep 2
kill -KILL $pid
wait $pid 2>/dev/null
check "SIGKILL: no profile, no temporary file" 0 "" -- sh -c "! ls '$tmp' | grep -q '^kill'"
check "an interrupted probe says so" 130 "interrupted; nothing was written" -- \
	sh -c "$EXE probe --box '$tmp/box.json' -o '$tmp/int2.json' & p=\$!; sleep 1; kill -INT \$p; wait \$p"
[ $fails = 0 ]
