#!/bin/sh
# Host half of the guest benchmark numa_bench: the PaddleOCR classifier, an input, and
# two one-device boxes of the guest's CPU 0 (on node 0), one with the
# device's tensors on node 0 (where its CPU is), one on node 1 (the wrong
# place), each with its schedule.
#   numa_bench.prep.sh HETEROOPT MODELS_DIR OUT
set -eu
HO=$1 M=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
cp "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$OUT/cls.onnx"
/usr/bin/python3 - "$HERE/../../tests/guest/box-2node.json" "$OUT" <<'PYEOF'
import json, sys
import numpy as np
np.save(sys.argv[2] + "/x.npy", np.random.default_rng(3).random((1, 3, 48, 192), dtype=np.float32))
for where, node in (("local", 0), ("remote", 1)):
    b = json.load(open(sys.argv[1]))
    b["name"] = "guest-numa-" + where
    b["devices"] = b["devices"][:1]
    b["devices"][0]["numa_node"] = node
    b["links"] = []
    json.dump(b, open("%s/box-%s.json" % (sys.argv[2], where), "w"), indent=1)
PYEOF
for where in local remote; do
	"$HO" schedule --quiet "$OUT/cls.onnx" --shape x=1x3x48x192 --box "$OUT/box-$where.json" \
		--population 8 --generations 2 --seed 1 -o "$OUT/cls@$where.json" >/dev/null
done
