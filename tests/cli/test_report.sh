#!/bin/sh
# heteroopt report, and the traces, as a user meets them: the 672-node
# PaddleOCR detector scheduled on the edge box and run here (its accelerators
# emulated), the run saved, the page written and opened in a real browser
# (Debian's chromium, headless): no error, open and drawn in under 2 s from
# navigation (its own performance clock), and what it
# drew read back from its DOM against the files it was made of: a point per
# front member, a square per baseline, a lane per device and link, a bar per
# node predicted and measured, a memory panel per device, the front's rows.
# A screenshot is kept in build/test-logs/report.png.  Chrome trace JSON of
# the schedule and the run, and bad input refused in one line.
# usage: test_report.sh HETEROOPT MODELS_DIR BOXES_DIR
set -u
EXE=$1
M=$2
B=$3
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
DET=$M/ch_PP-OCRv4_det_infer.onnx
need_model "$DET" || exit 77
SHOTS=$(cd "$(dirname "$0")/../.." && pwd)/build/test-logs
command -v chromium >/dev/null || { echo "skipped: no chromium (scripts/deps.sh installs it)"; exit 77; }

$PY -c "import numpy as np; np.save('$tmp/x.npy', np.random.default_rng(5).random((1, 3, 640, 640), dtype=np.float32))"
check "schedule the detector on the edge box, with a trace of its pick" 0 "Chrome trace of front[" -- \
	$EXE schedule "$DET" --shape x=1x3x640x640 --box "$B/edge-mlu370-ascend310p-u280.json" --seed 1 \
	--quiet -o "$tmp/s.json" --trace "$tmp/s.trace.json"
check "run its pick here, the run saved and traced" 0 "run: wrote $tmp/r.json" -- \
	$EXE run "$DET" --input "x=$tmp/x.npy" --schedule "$tmp/s.json" --repeat 2 -o "$tmp/out" \
	--save-run "$tmp/r.json" --trace "$tmp/r.trace.json"
check "the report, with the run" 0 "report: wrote $tmp/report.html" -- \
	$EXE report "$tmp/s.json" --run "$tmp/r.json" -o "$tmp/report.html"
check "the page asks for nothing from the network" 0 "" -- sh -c \
	"! grep -Eq '(src|href)=\"(https?:)?//' '$tmp/report.html'"

# chromium as the probe of this workplace runs it (no background networking, a fresh profile)
chrome() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 "$@" 2>"$tmp/chrome.err"
}
chrome --dump-dom "file://$tmp/report.html" >"$tmp/dom.html"
check "the browser's log has no console message of the page (it logs none)" 0 "" -- sh -c \
	"! grep 'CONSOLE' '$tmp/chrome.err'"
mkdir -p "$SHOTS"
chrome --window-size=1200,2400 --screenshot="$SHOTS/report.png" "file://$tmp/report.html" >/dev/null
check "chromium drew it: no error, in under 2 s, every chart as its files say" 0 "" -- \
	$PY - "$tmp/dom.html" "$tmp/s.json" "$tmp/r.json" "$SHOTS/report.png" <<'PYEOF'
import json, re, sys
from html.parser import HTMLParser
dom, s, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))

class Count(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
c = Count()
c.feed(dom)
body = [a for t, a in c.tags if t == "body"][0]
assert body.get("data-ready") == "1", "the page did not finish drawing: %s" % body
assert "data-errors" not in body, "script errors: %s" % body["data-errors"]
ms, opened = float(body["data-draw-ms"]), float(body["data-open-ms"])
assert opened < 2000, "open and drawn %.0f ms after navigation" % opened
def cls(t, a, name):
    return name in a.get("class", "").split()
pick = s["picked"]
m = s["front"][pick]
points = [a for t, a in c.tags if t == "circle" and cls(t, a, "point")]
assert len(points) == len(s["front"]), (len(points), len(s["front"]))
assert sum(cls("", a, "picked") for a in points) == 1
squares = [a for t, a in c.tags if t == "rect" and cls(t, a, "baseline")]
assert len(squares) == len(s["baselines"]), (len(squares), len(s["baselines"]))
links = sorted(set("%s \u2192 %s" % (x["from"], x["to"]) for x in m["transfers"]))
rlinks = sorted(set("%s \u2192 %s" % (x["from"], x["to"]) for x in r["copies"]))
lanes = [a["data-lane"] for t, a in c.tags if t == "g" and cls(t, a, "lane")]
assert lanes == s["devices"] + links + s["devices"] + rlinks, lanes
bars = [a for t, a in c.tags if t == "rect" and cls(t, a, "bar")]
pred = [a for a in bars if a["data-kind"] == "predicted"]
meas = [a for a in bars if a["data-kind"] == "measured"]
assert len(pred) == sum(h != "view" for h in m["runs_as"]), (len(pred), len(m["runs_as"]))
assert len(meas) == len(r["nodes"]), (len(meas), len(r["nodes"]))
xf = [a for t, a in c.tags if t == "rect" and cls(t, a, "xfer")]
assert len(xf) == len(m["transfers"]) + len(r["copies"]), (len(xf), len(m["transfers"]), len(r["copies"]))
panels = [a["data-device"] for t, a in c.tags if t == "g" and cls(t, a, "mem-panel")]
assert panels == s["devices"], panels
curves = [a for t, a in c.tags if t == "path" and cls(t, a, "mem-line")]
assert len(curves) == len(s["devices"]), len(curves)
for dev, a in zip(s["devices"], curves):  # a step where the device holds anything
    assert (" V" in a["d"]) == (m["objectives"]["peak_memory_bytes"][dev] > 0), (dev, a["d"][:60])
rows = [a for t, a in c.tags if t == "tr" and "data-member" in a]
assert len(rows) == len(s["front"]) + len(s["baselines"]), len(rows)
missed = re.search(r'<table id="missed-table">(.*?)</table>', dom, re.S)
assert missed and missed.group(1).count("<tr>") >= 2, "no list of the nodes that missed most"
assert dom.count("<td>") > len(s["explanations"]) * 3, "explanations missing"
print("opened and drawn %.0f ms after navigation (drawing %.0f ms): %d points, %d baselines, %d lanes, %d predicted and %d measured bars, %d copies, %d memory panels; screenshot %s"
      % (opened, ms, len(points), len(squares), len(lanes), len(pred), len(meas), len(xf), len(panels), sys.argv[4]))
PYEOF
check "the traces open as Chrome trace JSON: a process per timeline, an event per node" 0 "" -- \
	$PY - "$tmp/s.trace.json" "$tmp/r.trace.json" "$tmp/s.json" "$tmp/r.json" <<'PYEOF'
import json, sys
st, rt, s, r = (json.load(open(f)) for f in sys.argv[1:])
m = s["front"][s["picked"]]
for t in (st, rt):
    assert isinstance(t["traceEvents"], list)
    for e in t["traceEvents"]:
        assert e["ph"] in ("X", "M") and isinstance(e["pid"], int), e
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["tid"], int), e
x = [e for e in st["traceEvents"] if e["ph"] == "X"]
assert len(x) == sum(h != "view" for h in m["runs_as"]) + len(m["transfers"]), len(x)
pids = sorted(set(e["pid"] for e in rt["traceEvents"] if e["ph"] == "X"))
assert pids == [1, 2], pids
meas = [e for e in rt["traceEvents"] if e["ph"] == "X" and e["pid"] == 2]
assert len(meas) == len(r["nodes"]) + len(r["copies"]), len(meas)
names = [e["args"]["name"] for e in rt["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
assert any("predicted" in n for n in names) and any("measured" in n for n in names), names
PYEOF

ONE_LINE_ERRORS=1
check "report without -o" 2 "no output given" -- $EXE report "$tmp/s.json"
check "report of a file that is no schedule" 1 "not a schedule of heteroopt schedule" -- \
	$EXE report "$tmp/r.json" -o "$tmp/nope.html"
$PY -c "import json; r = json.load(open('$tmp/r.json')); r['pick'] = 999; json.dump(r, open('$tmp/r999.json', 'w'))"
check "a run of no member of the schedule" 1 "not a run of a member of" -- \
	$EXE report "$tmp/s.json" --run "$tmp/r999.json" -o "$tmp/nope.html"
check "a corrupt schedule" 1 "$tmp/cut.json" -- sh -c "head -c 500 '$tmp/s.json' >'$tmp/cut.json'; $EXE report '$tmp/cut.json' -o '$tmp/nope.html'"
check "schedule --trace without -o" 2 "give -o S.json too" -- \
	$EXE schedule "$DET" --shape x=1x3x640x640 --box "$B/edge-mlu370-ascend310p-u280.json" --trace "$tmp/t.json"
check "nothing half-written by what was refused" 0 "" -- sh -c "! ls '$tmp' | grep -q 'nope\\|\\.tmp'"
[ $fails = 0 ]
