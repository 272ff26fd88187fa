#!/bin/sh
# schedule --sensitivity: each node's precision chosen with its device.  A profile of this
# machine's two CPU devices (probe --quick: its bf16 and int8 speed-ups where the CPU has
# them), resnet18's sensitivities to each (run --sensitivity bf16|int8), and a schedule
# within a budget of 1e-2 (max error: int8 alone is just over it, bf16 alone well
# within): its pick computes nodes in reduced precisions, is measured on the calibration
# input within the budget, and run --schedule gives the same outputs (the error measured
# is the run's).  A sensitivity file that lies
# (every error 0) is caught by the measurement: no schedule meets the budget, and the most
# accurate is written with what it misses.  Refused, each in one line: the options without
# each other, a file of another model, of an unknown precision or key, twice one precision,
# a profile with no speed-ups, a schedule whose task has an unknown precision.
# usage: test_sched_precision.sh HETEROOPT MODELS_DIR
set -eu
HO=$1 M=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/runtime/refused.sh"
R18=$M/resnet18.onnx
X=input=$M/resnet18.ref_in.npy
BOX=$ROOT/boxes/this-machine-2cpu.json
[ -f "$R18" ] || { echo "skipped: $R18 missing (sh scripts/models.sh)"; exit 77; }

"$HO" probe --box "$BOX" --quick -q -o "$T/prof.json" >/dev/null
have=$($PY -c "import json,sys; print(' '.join(sorted(json.load(open(sys.argv[1]))['devices']['cpu0'].get('precision_speedup', {}))))" "$T/prof.json")
echo "profile: speed-ups measured for: ${have:-none}"
if [ -z "$have" ]; then
	refused "no speed-ups" "the profile gives no device a speed-up" \
		"$HO" schedule "$R18" --box "$BOX" --profile "$T/prof.json" --sensitivity /dev/null \
		--accuracy 1e-2 --input "$X" -o "$T/s.json" --quiet
	echo "skipped: this CPU computes neither bf16 nor int8 natively"
	exit 77
fi
for q in $have; do
	"$HO" run "$R18" --input "$X" --sensitivity "$q" -o "$T/$q" >/dev/null
done
set --
for q in $have; do set -- "$@" --sensitivity "$T/$q/sensitivity.json"; done
SCHED="$HO schedule $R18 --box $BOX --profile $T/prof.json --input $X --quiet --generations 60"

# the pick: some nodes in each reduced precision, measured within the budget
$SCHED "$@" --accuracy 1e-2 -o "$T/s.json" >"$T/out"
grep "^precision:\|^accuracy:" "$T/out"
"$HO" run "$R18" --input "$X" -o "$T/ref" >/dev/null
"$HO" run "$R18" --input "$X" --schedule "$T/s.json" -o "$T/run" >"$T/run.out"
grep "computed in" "$T/run.out"
$PY - "$T" "$have" <<'PYEOF'
import json, sys
import numpy as np
d, have = sys.argv[1], sys.argv[2].split()
s = json.load(open(d + "/s.json"))
acc, m = s["accuracy"], s["front"][s["picked"]]
assert acc["metric"] == "max" and acc["budget"] == 1e-2, acc
assert acc["measured"] <= acc["budget"] and acc["estimated"] <= acc["budget"], acc
assert abs(m["objectives"]["error"] - acc["estimated"]) < 1e-12, (m["objectives"], acc)
counts = {q: m["precision"].count(q) for q in set(m["precision"])}
assert sum(counts.get(q, 0) for q in have) > 0, counts
assert set(counts) <= {"fp32"} | set(have), counts
# each node in a reduced precision is explained with its sensitivity, and int8 ones carry
# their calibrated input range to the runtime
for t, e in enumerate(s["explanations"]):
    q = m["precision"][t]
    assert e["precision"] == q, (e, q)
    assert (q != "fp32") == ("sensitivity" in e), e
    assert (m["input_range"][t] is not None) == (q == "int8"), (t, q, m["input_range"][t])
est = sum(e.get("sensitivity", 0) for e in s["explanations"])
assert abs(est - acc["estimated"]) < 1e-9, (est, acc)
ref, out = np.load(d + "/ref/logits.npy"), np.load(d + "/run/logits.npy")
err = float(np.abs(out - ref).max() / np.abs(ref).max())
assert abs(err - acc["measured"]) <= 1e-6 + 1e-3 * err, (err, acc["measured"])
print(f"pick: {counts}, error measured {acc['measured']:.2e} (estimated {acc['estimated']:.2e}), "
      f"run --schedule's {err:.2e}; top-1 {int(out.argmax())} as float32's {int(ref.argmax())}")
assert out.argmax() == ref.argmax()
PYEOF

# the report: each node's precision and sensitivity, the front's precisions and estimated
# errors, and the pick's error as measured (drawn by Chromium where it is installed)
"$HO" report "$T/s.json" -o "$T/report.html" >/dev/null
if command -v chromium >/dev/null; then
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --user-data-dir="$T/chrome" --dump-dom \
		"file://$T/report.html" >"$T/dom.html" 2>/dev/null
	$PY - "$T/dom.html" "$T/s.json" <<'PYEOF'
import json, re, sys
dom, s = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
assert 'data-ready="1"' in dom and not re.search(r'data-errors="[^"]', dom), "page error"
acc = re.search(r'<p id="accuracy"[^>]*>([^<]*)', dom).group(1)
assert "measured" in acc and "budget 0.010" in acc, acc
why = dom[dom.index('id="why-table"'):]
why = why[:why.index("</table>")]
rows = re.findall(r"<tr>(.*?)</tr>", why)
cells = [re.findall(r"<t[dh]>(.*?)</t[dh]>", r) for r in rows]
assert cells[0][-2:] == ["precision", "sensitivity"], cells[0]
m = s["front"][s["picked"]]
assert [c[3] for c in cells[1:]] == m["precision"], "the table's precisions are not the pick's"
assert all((c[3] == "fp32") == (c[4] == "") for c in cells[1:]), cells[:4]
print("report:", acc)
PYEOF
fi

# sensitivities that lie (every error 0): the measurement refuses each pick over the
# budget and offers the most accurate with the budget it misses
for q in $have; do
	$PY -c "import json,sys; s=json.load(open(sys.argv[1])); [n.update(error=0) for n in s['nodes']]; json.dump(s, open(sys.argv[2], 'w'))" \
		"$T/$q/sensitivity.json" "$T/lie_$q.json"
done
set --
for q in $have; do set -- "$@" --sensitivity "$T/lie_$q.json"; done
rc=0
$SCHED "$@" --accuracy 1e-6 -o "$T/lie.json" >"$T/lie.out" 2>"$T/lie.err" || rc=$?
[ $rc = 1 ] && [ "$(grep -c . "$T/lie.err")" = 1 ] &&
	grep -q "no schedule meets --accuracy 1e-06: front\[[0-9]*\], the most accurate found, measured" "$T/lie.err" ||
	{ echo "sensitivities that lie: exit $rc"; cat "$T/lie.err"; exit 1; }
echo "sensitivities that lie: $(cat "$T/lie.err")"
grep "^accuracy:" "$T/lie.out"
$PY -c "import json,sys; a=json.load(open(sys.argv[1]))['accuracy']; assert a['measured'] > a['budget'] and a['estimated'] == 0, a" "$T/lie.json"

# each node priced by its own speed-up, as run --sensitivity measured it: files whose
# seconds say every node of one precision is 10 times slower in it give a pick with none in it
for q in $have; do
	$PY - "$T/$q/sensitivity.json" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["nodes"] and all(len(n["seconds"]) == 2 and min(n["seconds"]) > 0 for n in s["nodes"]), s["nodes"][0]
PYEOF
done
for slow in $have; do
	set --
	for q in $have; do
		f=$T/$q/sensitivity.json
		if [ $q = $slow ]; then
			$PY -c "import json,sys; s=json.load(open(sys.argv[1])); [n.update(seconds=[n['seconds'][0], 10 * n['seconds'][0]]) for n in s['nodes']]; json.dump(s, open(sys.argv[2], 'w'))" \
				"$f" "$T/slow_$q.json"
			f=$T/slow_$q.json
		fi
		set -- "$@" --sensitivity "$f"
	done
	$SCHED "$@" --accuracy 1e-2 -o "$T/slow.json" >/dev/null
	$PY - "$T/slow.json" $slow <<'PYEOF'
import json, sys
s, slow = json.load(open(sys.argv[1])), sys.argv[2]
m = s["front"][s["picked"]]
assert slow not in m["precision"], f"{m['precision'].count(slow)} nodes in {slow}, measured 10x slower"
print(f"{slow} said 10x slower on every node: the pick has {len(m['precision']) - m['precision'].count('fp32')} reduced nodes, none in {slow}")
PYEOF
done

# refusals
first=$(echo $have | cut -d' ' -f1)
F=$T/$first/sensitivity.json
refused "no budget" "needs --accuracy BUDGET" $SCHED --sensitivity "$F" -o "$T/n.json"
refused "a budget of 0" "needs --accuracy BUDGET, a number > 0.*'0' is none" $SCHED --sensitivity "$F" --accuracy 0 -o "$T/n.json"
refused "a budget alone" "schedule: --accuracy: it goes with --sensitivity" $SCHED --accuracy 1e-2 -o "$T/n.json"
refused "no inputs" "needs --input NAME=FILE.npy" "$HO" schedule "$R18" --box "$BOX" --profile "$T/prof.json" \
	--sensitivity "$F" --accuracy 1e-2 -o "$T/n.json"
refused "no output" "needs -o S.json" $SCHED --sensitivity "$F" --accuracy 1e-2
refused "the error objective alone" "objectives error: the error of precisions; give --sensitivity" \
	"$HO" schedule "$R18" --box "$BOX" --objectives latency,error -o "$T/n.json"
refused "no profile" "the profile gives no device a speed-up" "$HO" schedule "$R18" --box "$BOX" \
	--input "$X" --sensitivity "$F" --accuracy 1e-2 -o "$T/n.json" --quiet
refused "twice one precision" "a second file for $first" $SCHED --sensitivity "$F" --sensitivity "$F" \
	--accuracy 1e-2 -o "$T/n.json"
$PY - "$F" "$T" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))
def put(name, **kw):
    d = dict(s, **kw)
    json.dump(d, open(f"{sys.argv[2]}/{name}.json", "w"))
put("fp16", precision="fp16")
put("key", budget=1)
put("other", nodes=[dict(s["nodes"][0], node="/features/features.0/features.0.0/Conv")])
put("neg", nodes=[dict(s["nodes"][0], error=-1)])
put("secs", nodes=[dict(s["nodes"][0], seconds=[1e-3, 0])])
PYEOF
refused "an unknown precision" "precision 'fp16' is none of the reduced precisions" \
	$SCHED --sensitivity "$T/fp16.json" --accuracy 1e-2 -o "$T/n.json"
refused "an unknown key" "unknown key 'budget'" $SCHED --sensitivity "$T/key.json" --accuracy 1e-2 -o "$T/n.json"
refused "another model's file" "nodes\[0\]: names no node of the model" \
	$SCHED --sensitivity "$T/other.json" --accuracy 1e-2 -o "$T/n.json"
refused "a negative error" "nodes\[0\]: its error must be a number >= 0" \
	$SCHED --sensitivity "$T/neg.json" --accuracy 1e-2 -o "$T/n.json"
refused "a time of 0" "nodes\[0\]: seconds must be \[float32, $first\], each > 0" \
	$SCHED --sensitivity "$T/secs.json" --accuracy 1e-2 -o "$T/n.json"
$PY -c "import json,sys; s=json.load(open(sys.argv[1])); m=s['front'][s['picked']]; m['precision'][0]='fp16'; json.dump(s, open(sys.argv[2], 'w'))" \
	"$T/s.json" "$T/bad_sched.json"
refused "a schedule's unknown precision" "schedule: task '.*' has precision 'fp16'" \
	"$HO" run "$R18" --input "$X" --schedule "$T/bad_sched.json" -o "$T/n"
echo "schedule precision: ok"
