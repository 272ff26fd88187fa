#!/usr/bin/python3
"""Check `heteroopt inspect --json` on a real model against python3-onnx.

- node count and op histogram equal onnx's, but for the chains we fuse at load
  (a node's "absorbed": the outputs of the model's nodes it stands for);
- every tensor whose extents onnx.shape_inference determines (inputs bound to
  the same dims) gets exactly those extents and element type from us;
- every tensor is fully determined by us (we fold shape sub-graphs that onnx
  1.12 leaves open);
- with a <model>.ref.json beside the model, the Conv/MatMul/Gemm/RNN MAC count
  equals the one taken from the PyTorch layer definitions.

usage: check_model.py HETEROOPT MODEL NAME=D0xD1.. [NAME=...]
Exit 0 on agreement, 1 with the differences listed otherwise.
"""
import collections
import json
import os
import subprocess
import sys

import onnx
from onnx import shape_inference

DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
          8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
          16: "bfloat16"}


def main():
    exe, path, binds = sys.argv[1], sys.argv[2], sys.argv[3:]
    shapes = {}
    for b in binds:
        name, dims = b.rsplit("=", 1)
        shapes[name] = [int(d) for d in dims.split("x")] if dims else []

    args = [exe, "inspect", path, "--json"]
    for b in binds:
        args += ["--shape", b]
    ours = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)

    model = onnx.load(path)
    for inp in model.graph.input:
        if inp.name in shapes:
            dims = inp.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[inp.name]):
                d.ClearField("dim_param")
                d.dim_value = v
    inferred = shape_inference.infer_shapes(model)

    problems = []
    # A fused chain: its nodes leave, its last one takes our operator.
    absorbed = {t for n in ours["nodes"] for t in n["absorbed"]}
    fused_op = {n["outputs"][0]: n["op"] for n in ours["nodes"] if n["absorbed"]}
    kept = [n for n in model.graph.node if not n.output or n.output[0] not in absorbed]
    hist = collections.Counter(fused_op.get(n.output[0], n.op_type) if n.output else n.op_type
                               for n in kept)
    if len(absorbed) != len(model.graph.node) - len(kept):
        problems.append("absorbed %d tensors, onnx produces %d of them" %
                        (len(absorbed), len(model.graph.node) - len(kept)))
    if ours["node_count"] != len(kept):
        problems.append("node count %d, onnx %d (%d fused at load)" %
                        (ours["node_count"], len(kept), len(absorbed)))
    if dict(hist) != ours["op_histogram"]:
        problems.append("op histogram differs: ours %s onnx %s" % (ours["op_histogram"], dict(hist)))

    compared = full = 0
    infos = list(inferred.graph.value_info) + list(inferred.graph.output)
    for vi in infos:
        if vi.name in absorbed:
            continue
        t = ours["tensors"].get(vi.name)
        if t is None:
            problems.append("tensor %s missing from our graph" % vi.name)
            continue
        tt = vi.type.tensor_type
        if tt.elem_type and DTYPES.get(tt.elem_type) != t["dtype"]:
            problems.append("%s: dtype %s, onnx %s" % (vi.name, t["dtype"], DTYPES.get(tt.elem_type)))
        if not tt.HasField("shape"):
            continue
        dims = tt.shape.dim
        if t["shape"] is None or len(t["shape"]) != len(dims):
            problems.append("%s: shape %s, onnx rank %d" % (vi.name, t["shape"], len(dims)))
            continue
        known = True
        for i, d in enumerate(dims):
            if d.HasField("dim_value"):
                if t["shape"][i] != d.dim_value:
                    problems.append("%s: dim %d is %s, onnx %d" % (vi.name, i, t["shape"][i], d.dim_value))
            else:
                known = False
        compared += 1
        full += known

    undetermined = [n for n, t in ours["tensors"].items()
                    if t["shape"] is None or any(d is None for d in t["shape"])]
    if undetermined:
        problems.append("%d tensors left undetermined, e.g. %s" % (len(undetermined), undetermined[:3]))

    ref_path = path + ".ref.json"
    macs_note = ""
    if os.path.exists(ref_path):
        ref = json.load(open(ref_path))
        want = ref["macs"]
        (rname, rshape), = ref["shape"].items()
        bound = shapes.get(rname)
        if "transformer" in ref and bound:
            # Per layer: 4 d^2 + 2 d ff MACs per token, 2 S^2 d per sequence.
            t = ref["transformer"]
            b, s, d, ff = bound[0], bound[1], t["d_model"], t["d_ff"]
            want = t["layers"] * (b * s * (4 * d * d + 2 * d * ff) + 2 * b * s * s * d)
        elif bound and bound[1:] == rshape[1:]:
            want = ref["macs"] * bound[0] // rshape[0]  # CNN: linear in the batch
        macs = sum(n["macs"] for n in ours["nodes"]
                   if n["op"] in ("Conv", "ConvTranspose", "MatMul", "Gemm", "RNN", "GRU", "LSTM"))
        if int(round(macs)) != want:
            problems.append("MACs %d, PyTorch layer count %d" % (macs, want))
        macs_note = ", MACs %d match PyTorch" % want

    onnx_open = compared - full
    print("%s: %d nodes, %d tensors compared with onnx (%d fully known to onnx, %d left open by onnx "
          "and determined by us)%s" % (os.path.basename(path), len(model.graph.node), compared, full,
                                       onnx_open, macs_note))
    for p in problems[:20]:
        print("  MISMATCH " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
