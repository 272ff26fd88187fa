#!/bin/sh
# The heteroopt command as a user meets it: exit codes, one-line errors that
# name the problem, JSON that parses, usage errors.
# usage: test_inspect.sh HETEROOPT MODELS_DIR
set -u
EXE=$1
M=$2
ONE_LINE_ERRORS=1
. "$(dirname "$0")/lib.sh"

check "no arguments prints usage" 2 "usage: heteroopt" -- sh -c "'$EXE' 2>&1 | head -1; exit 2"
check "unknown command" 2 "unknown command 'frobnicate'" -- sh -c "'$EXE' frobnicate 2>&1 | head -1; exit 2"
check "help" 0 "inspect" -- "$EXE" --help
check "unknown option" 2 "unknown option '--bogus'" -- sh -c "'$EXE' inspect --bogus x 2>&1 | head -1; exit 2"
check "missing file" 1 "No such file or directory" -- "$EXE" inspect "$M/none.onnx"
check "unbound input" 1 "unbound dimension 0 ('N')" -- "$EXE" inspect "$M/resnet18.onnx"
check "bad --shape" 1 "expected NAME=D0xD1x" -- "$EXE" inspect "$M/resnet18.onnx" --shape 1x3
check "cycle" 1 "cycle through node 'add_a'" -- "$EXE" inspect "$M/bad_cycle.onnx"
check "unknown op" 1 "unknown operator 'FrobnicateTensor'" -- "$EXE" inspect "$M/bad_unknown_op.onnx"
check "contradicting initializer" 1 "initializer 'w' is float32 [4,3]" -- "$EXE" inspect "$M/bad_initializer_shape.onnx"
check "not a model" 1 "not an ONNX model" -- "$EXE" inspect "$M/bad_not_a_model.onnx"
check "deep nesting" 1 "nested deeper than" -- "$EXE" inspect "$M/bad_deep_nesting.onnx"
# ONNX's own tests (libonnx-testdata, set up by scripts/deps.sh): a sequence
# at the model's boundary is said at load, not taken for a missing shape.
ONNX_NODE=/usr/share/libonnx-testdata/data/node
check "a sequence input" 1 "model input 'x' is a sequence: the runtime takes and gives only tensors" -- \
	"$EXE" inspect "$ONNX_NODE/test_identity_sequence/model.onnx"
check "an optional output" 1 "model output 'sequence' is an optional" -- \
	"$EXE" inspect "$ONNX_NODE/test_if_opt/model.onnx"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 1000000 "$M/resnet18.onnx" >"$tmp/truncated.onnx"
check "truncated model" 1 "truncated or corrupt" -- "$EXE" inspect "$tmp/truncated.onnx"
head -c 65536 /dev/urandom >"$tmp/random.onnx"
check "random bytes" 1 "not" -- "$EXE" inspect "$tmp/random.onnx"
check "text table" 0 "compute    3.64 GFLOP" -- "$EXE" inspect "$M/resnet18.onnx" --shape input=1x3x224x224
check "runs everywhere" 0 "runtime    all 49 nodes run on the cpu backend" -- "$EXE" inspect "$M/resnet18.onnx" --shape input=1x3x224x224
check "control flow runs" 0 "runtime    all 5 nodes run on the cpu backend" -- "$EXE" inspect "$M/control_flow.onnx"
check "refusals up front, inside a subgraph too" 0 "node 'train' (Loop): its body: node 'drop' (Dropout): the cpu backend runs in inference mode only" -- "$EXE" inspect "$M/control_refused.onnx"
check "refusals counted" 0 "2 of 2 nodes cannot run on the cpu backend yet" -- "$EXE" inspect "$M/control_refused.onnx"
check "external data" 0 "output     y float32 [8,32]" -- "$EXE" inspect "$M/external/mlp_external.onnx" --shape x=8x64
# 2000 chained Expands of constants to 2^18 elements each: 4 GB folded at 8 bytes an element,
# where load-time folding stops at its budget (512 MB) and leaves the rest to run time.
# make check only (HO_TEST_QUICK=1 skips it): filling the budget takes 2.5 s.
[ "${HO_TEST_QUICK:-0}" = 1 ] || {
/usr/bin/python3 - "$tmp/expands.onnx" <<'PYEOF'
import sys
import onnx
from onnx import TensorProto, helper
def const(name, dtype, vals):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, dtype, [1], vals))
nodes = [const("s", TensorProto.INT64, [1 << 18]), const("c0", TensorProto.FLOAT, [1.0]),
         const("b", TensorProto.INT64, [0]), const("e", TensorProto.INT64, [1])]
for i in range(2000):  # each step's value one element again, so the next folds too
    nodes.append(helper.make_node("Expand", [f"c{i}", "s"], [f"x{i}"]))
    nodes.append(helper.make_node("Slice", [f"x{i}", "b", "e"], [f"c{i + 1}"]))
g = helper.make_graph(nodes, "expands", [], [helper.make_tensor_value_info("c2000", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PYEOF
check "folding within its budget" 0 "peak" -- /usr/bin/python3 -c "
import resource, subprocess, sys
subprocess.run(['$EXE', 'inspect', '$tmp/expands.onnx'], check=True, capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print('peak %.0f MB' % peak)
sys.exit(peak > 1024)"
}
"$EXE" inspect "$M/transformer_encoder.onnx" --shape src=1x8x256 --json >"$tmp/t.json"
check "json parses" 0 "" -- /usr/bin/python3 -c "import json,sys; d=json.load(open('$tmp/t.json')); assert d['node_count']==451, d['node_count']"

[ $fails = 0 ]
