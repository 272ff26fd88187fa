#!/usr/bin/python3
"""Export the project's test models into a cache folder outside the repository.

Real architectures (torchvision, a transformer encoder) with random weights, plus
small hand-built graphs for the importer's edge cases (If/Loop, external data,
bad input). Each torch model gets a sidecar <name>.ref.json holding an
independent multiply-accumulate count taken from the PyTorch layer definitions,
so the C front end's FLOP counter is checked against something it did not
compute itself.

Run with Debian's /usr/bin/python3 (torch and onnx live there).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/heteroopt/models")


def done(name):
    return os.path.exists(os.path.join(OUT, name))


def write_ref(name, ref):
    with open(os.path.join(OUT, name + ".ref.json"), "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)


def cnn_macs(model, shape):
    """Count Conv2d/Linear multiply-accumulates with forward hooks."""
    import torch

    total = [0]

    def conv_hook(m, inp, out):
        k = m.kernel_size[0] * m.kernel_size[1]
        total[0] += out.numel() * (m.in_channels // m.groups) * k

    def lin_hook(m, inp, out):
        total[0] += out.numel() * m.in_features

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(lin_hook))
    with torch.no_grad():
        model(torch.randn(*shape))
    for h in hooks:
        h.remove()
    return total[0]


def randomize_bn(model, gen):
    """Give BatchNorm non-trivial statistics so folding bugs show up numerically."""
    import torch

    for m in model.modules():
        if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


def export_cnns():
    import torch
    import torchvision

    shape = [1, 3, 224, 224]
    for name in ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1"]:
        fname = name + ".onnx"
        if done(fname) and done(fname + ".ref.json") and done(name + ".ref_out.npy"):
            continue
        gen = torch.Generator().manual_seed(1234)
        torch.manual_seed(1234)
        model = getattr(torchvision.models, name)(weights=None)
        randomize_bn(model, gen)
        model.eval()
        macs = cnn_macs(model, shape)
        x = torch.randn(*shape)
        tmp = os.path.join(OUT, fname + ".tmp")
        torch.onnx.export(model, x, tmp, opset_version=13, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
        os.replace(tmp, os.path.join(OUT, fname))
        write_ref(fname, {"shape": {"input": shape}, "macs": macs})
        # The runtime's numerics reference: PyTorch's own answer on a fixed input.
        import numpy as np
        xin = torch.randn(*shape, generator=torch.Generator().manual_seed(99))
        with torch.no_grad():
            yref = model(xin)
        np.save(os.path.join(OUT, name + ".ref_in.npy"), xin.numpy())
        np.save(os.path.join(OUT, name + ".ref_out.npy"), yref.numpy())
        print("exported", fname, flush=True)


def read_zoo(check=None):
    """The zoo (zoo.txt): models beyond the CNNs the benchmarks use, for coverage (dense
    concatenation, channel shuffles, squeeze-excitation, LayerNorm over channels and 7x7
    depthwise, a vision transformer, HardSwish, detectors), each with the opset it is exported
    at; only those taking check (its third column on) where one is given."""
    zoo = {}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo.txt")) as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 2 and not f[0].startswith("#") and (check is None or check in f[2:]):
                zoo[f[0]] = int(f[1])
    return zoo


def dense_out(model):
    """A segmentation model answering its 'out' map alone (torchvision returns a dict)."""
    import torch

    class Out(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)["out"]

    return Out()


def frame_pair(model):
    """An optical-flow model taking its two frames stacked on the batch axis ([2, 3, H, W],
    so that the zoo's one input holds both) and answering its last refinement's flow."""
    import torch

    class Pair(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x[0:1], x[1:2])[-1]

    return Pair()


def zoo_stamp(name, opset):
    """What a zoo model was exported as (NAME.zoo beside it): a line of zoo.txt changed
    exports that model again, and only that one."""
    return f"{name} opset {opset}\n"


def zoo_done(name, opset):
    try:
        with open(os.path.join(OUT, name + ".zoo")) as fh:
            stamp = fh.read()
    except OSError:
        return False
    return stamp == zoo_stamp(name, opset) and done(name + ".onnx") and done(name + ".ref_out.npy")


def zoo_mark(name, opset):
    with open(os.path.join(OUT, name + ".zoo"), "w") as fh:
        fh.write(zoo_stamp(name, opset))


class Detections:
    """A torchvision detector as one image in, boxes, scores and labels out; and its
    detections as one array, a row each: x1, y1, x2, y2, score, label."""

    @staticmethod
    def wrap(model):
        import torch

        class Det(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, x):
                d = self.model([x])[0]
                return d["boxes"], d["scores"], d["labels"]

        return Det()

    @staticmethod
    def rows(out):
        b, s, lab = (t.detach().double().numpy() for t in out)
        return np.concatenate([b, s[:, None], lab[:, None]], 1)

    @staticmethod
    def agree(a, b):
        """The detections of a and b match, as make check matches them."""
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime"))
        from compare_detections import match

        return match(a, b)[0] is None


def init_detector(model, gen, x, spread):
    """Random weights a detector can be checked with.  torchvision's own initialisation,
    untrained, collapses: most positions of the deeper feature maps come out alike and the
    class scores tie by the thousand (which of the tied boxes survives NMS is then anyone's
    call).  So every convolution and linear layer is drawn at unit gain (variance 1/fan-in,
    which keeps features apart through the depth), and the class logits scaled to a
    standard deviation of spread on the reference input, as a trained head's are spread."""
    import torch

    randomize_bn(model, gen)
    for m in model.modules():
        if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
            m.weight.data.copy_(torch.randn(m.weight.shape, generator=gen) / m.weight[0].numel() ** 0.5)
    heads = detector_heads(model, classes_only=True)
    logits = []

    def keep(m, inp, out):
        bias = m.bias.view(-1, *([1] * (out.dim() - 2))) if m.bias is not None else 0
        logits.append((out - bias).flatten())

    hooks = [m.register_forward_hook(keep) for m in heads]
    with torch.no_grad():
        model([x])
    for h in hooks:
        h.remove()
    scale = spread / float(torch.cat(logits).std())
    for m in heads:
        m.weight.data *= scale


def detector_heads(model, classes_only=False):
    """The last layer of each head: class logits; unless classes_only, box regression and
    centerness too."""
    import re

    import torch

    pat = re.compile(r"(cls_logits|cls_score|classification_head\.module_list\.\d+(\.1)?)$" if classes_only
                     else r"(cls_logits|cls_score|bbox_pred|bbox_reg|bbox_ctrness|"
                     r"(classification|regression)_head\.module_list\.\d+(\.1)?)$")
    return [m for n, m in model.named_modules()
            if pat.search(n) and isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]


def stable_detections(model, x, ref, tries=3, eps=3e-5):
    """Whether model's detections on x stay ref when every head's output is perturbed by
    noise of eps times its spread: what another runtime's rounding does to them (3e-5
    moves scores by up to 4e-5; float32 runtimes differ from PyTorch by 1e-6 to 2e-5)."""
    import torch

    gen = torch.Generator().manual_seed(7)

    def nudge(m, inp, out):
        return out + torch.randn(out.shape, generator=gen) * (eps * float(out.std()))

    heads = detector_heads(model)
    for _ in range(tries):
        hooks = [m.register_forward_hook(nudge) for m in heads]
        with torch.no_grad():
            got = Detections.rows(model(x))
        for h in hooks:
            h.remove()
        if not Detections.agree(ref, got):
            return False
    return True


def export_detector(name, opset, shape):
    """A torchvision detector with NMS in its graph, its input named "input" and its
    outputs boxes, scores and labels; the reference is PyTorch's detections.  Its weights
    are drawn (init_detector) until its detections survive a nudge of every head's output
    (stable_detections): then the answer is decided by the model, not by rounding, and a
    runtime that rounds otherwise can be held to it."""
    import torch

    family = __import__("torchvision").models.detection
    xin = torch.rand(*shape, generator=torch.Generator().manual_seed(99))
    for seed in range(1234, 1240):
        torch.manual_seed(seed)
        model = getattr(family, name)(weights=None, weights_backbone=None).eval()
        init_detector(model, torch.Generator().manual_seed(seed), xin, 2.0)
        model = Detections.wrap(model).eval()
        with torch.no_grad():
            ref = Detections.rows(model(xin))
        if len(ref) and stable_detections(model, xin, ref):
            break
        print(f"{name}: seed {seed}'s detections change under rounding noise", flush=True)
    else:
        sys.exit(f"{name}: no weights found whose detections rounding leaves alone")
    tmp = os.path.join(OUT, name + ".onnx.tmp")
    torch.onnx.export(model, xin, tmp, opset_version=opset, input_names=["input"],
                      output_names=["boxes", "scores", "labels"])
    os.replace(tmp, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".ref_in.npy"), xin.numpy())
    np.save(os.path.join(OUT, name + ".ref_out.npy"), ref)
    print(f"exported {name} ({len(ref)} detections, seed {seed})", flush=True)


def export_extended():
    import torch
    import torchvision

    m = torchvision.models
    # where torchvision keeps a zoo name, the input its family takes, what it answers
    # (torchvision's output, a segmentation's "out" map, an optical flow's last flow)
    families = ((m, [1, 3, 224, 224], None), (m.segmentation, [1, 3, 224, 224], dense_out),
                (m.video, [1, 3, 8, 112, 112], None), (m.optical_flow, [2, 3, 128, 128], frame_pair))
    for name, opset in read_zoo().items():
        if zoo_done(name, opset):
            continue
        if hasattr(m.detection, name):
            export_detector(name, opset, [3, 320, 320])
            zoo_mark(name, opset)
            continue
        family, shape, answer = next(f for f in families if hasattr(f[0], name))
        gen = torch.Generator().manual_seed(1234)
        torch.manual_seed(1234)
        kw = {"weights_backbone": None, "aux_loss": False} if answer is dense_out else {}
        model = getattr(family, name)(weights=None, **kw)
        randomize_bn(model, gen)
        for mod in model.modules():  # torchvision zeroes some heads: an all-zero answer tests nothing
            if isinstance(mod, torch.nn.Linear) and not mod.weight.detach().any():
                mod.weight.data.copy_(torch.randn(mod.weight.shape, generator=gen) * 0.02)
        model = (answer(model) if answer else model).eval()
        tmp = os.path.join(OUT, name + ".onnx.tmp")
        torch.onnx.export(model, torch.randn(*shape), tmp, opset_version=opset,
                          input_names=["input"], output_names=["logits"])
        os.replace(tmp, os.path.join(OUT, name + ".onnx"))
        xin = torch.randn(*shape, generator=torch.Generator().manual_seed(99))
        with torch.no_grad():
            yref = model(xin)
        np.save(os.path.join(OUT, name + ".ref_in.npy"), xin.numpy())
        np.save(os.path.join(OUT, name + ".ref_out.npy"), yref.numpy())
        zoo_mark(name, opset)
        print("exported", name, flush=True)


def half_models():
    """Zoo models as a float16 converter ships them (weights, constants, Casts, inputs and
    outputs in float16): NAME_fp16.onnx and its input, the float32 one's rounded."""
    for name in read_zoo("fp16"):
        dst = name + "_fp16.onnx"
        if (done(dst) and done(name + "_fp16.ref_in.npy") and os.path.getmtime(os.path.join(OUT, dst))
                >= os.path.getmtime(os.path.join(OUT, name + ".onnx"))):
            continue
        m = onnx.load(os.path.join(OUT, name + ".onnx"))
        g = m.graph
        for i, t in enumerate(g.initializer):
            if t.data_type == TensorProto.FLOAT:
                g.initializer[i].CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(t).astype(np.float16), t.name))
        for n in g.node:
            for at in n.attribute:
                if at.type == onnx.AttributeProto.TENSOR and at.t.data_type == TensorProto.FLOAT:
                    at.t.CopyFrom(numpy_helper.from_array(
                        numpy_helper.to_array(at.t).astype(np.float16), at.t.name))
                if n.op_type == "Cast" and at.name == "to" and at.i == TensorProto.FLOAT:
                    at.i = TensorProto.FLOAT16
        for v in list(g.input) + list(g.output):
            if v.type.tensor_type.elem_type == TensorProto.FLOAT:
                v.type.tensor_type.elem_type = TensorProto.FLOAT16
        del g.value_info[:]
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(OUT, dst))
        x = np.load(os.path.join(OUT, name + ".ref_in.npy")).astype(np.float16)
        np.save(os.path.join(OUT, name + "_fp16.ref_in.npy"), x)
        print("exported", dst, flush=True)


def export_transformer():
    import torch

    fname = "transformer_encoder.onnx"
    if done(fname) and done(fname + ".ref.json"):
        return
    torch.manual_seed(1234)
    d, heads, ff, layers = 256, 4, 1024, 4
    layer = torch.nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ff,
                                             dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
    model.eval()
    b, s = 2, 16
    x = torch.randn(b, s, d)
    tmp = os.path.join(OUT, fname + ".tmp")
    # Gradients stay enabled: torch 1.13's no_grad fast path has no ONNX export.
    torch.onnx.export(model, x, tmp, opset_version=17, input_names=["src"], output_names=["out"],
                      dynamic_axes={"src": {0: "B", 1: "S"}, "out": {0: "B", 1: "S"}})
    os.replace(tmp, os.path.join(OUT, fname))
    # Per layer: QKV and output projections (4 d^2), feed-forward (2 d ff) per token,
    # plus the two attention matmuls (S^2 d each) per sequence.
    macs = layers * (b * s * (4 * d * d + 2 * d * ff) + 2 * b * s * s * d)
    write_ref(fname, {"shape": {"src": [b, s, d]}, "macs": macs,
                      "transformer": {"layers": layers, "d_model": d, "d_ff": ff}})
    print("exported", fname, flush=True)


def export_sequence():
    """A sequence model: a two-layer bidirectional GRU, then an LSTM and a Linear, batch first."""
    import torch

    fname = "seq_rnn.onnx"
    if done(fname) and done("seq_rnn.ref_out.npy") and done(fname + ".ref.json"):
        return
    torch.manual_seed(7)

    class Seq(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(16, 24, num_layers=2, bidirectional=True, batch_first=True)
            self.lstm = torch.nn.LSTM(48, 32, batch_first=True)
            self.fc = torch.nn.Linear(32, 10)

        def forward(self, x):
            y, _ = self.gru(x)
            y, _ = self.lstm(y)
            return self.fc(y)

    model = Seq().eval()
    x = torch.randn(3, 20, 16)
    tmp = os.path.join(OUT, fname + ".tmp")
    torch.onnx.export(model, x, tmp, opset_version=14, input_names=["x"], output_names=["y"])
    os.replace(tmp, os.path.join(OUT, fname))
    with torch.no_grad():
        y = model(x)
    # MACs from the layer definitions: each step X_t W^T and H R^T per direction and gate
    b, t = x.shape[0], x.shape[1]
    macs = sum(t * b * 2 * 3 * 24 * (i + 24) for i in (16, 48)) + t * b * 4 * 32 * (48 + 32) + t * b * 32 * 10
    write_ref(fname, {"shape": {"x": list(x.shape)}, "macs": macs})
    np.save(os.path.join(OUT, "seq_rnn.ref_in.npy"), x.numpy())
    np.save(os.path.join(OUT, "seq_rnn.ref_out.npy"), y.numpy())
    print("exported", fname, flush=True)


def int8_cnn():
    """A small int8 CNN in ONNX's QLinear form, weights and scales calibrated on a float twin:
    QuantizeLinear, QLinearConv (per-channel int8 weights, int32 bias), a grouped, strided
    QLinearConv, QLinearMatMul, DequantizeLinear, and beside them a ConvInteger and the
    classifier with signed weights (MatMulInteger, QLinearMatMul); the integer tensors are
    outputs too."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    np.save(os.path.join(OUT, "int8_cnn.in.npy"), x)

    def conv(a, w, b, stride, group):
        import torch
        return torch.nn.functional.conv2d(torch.from_numpy(a.astype(np.float32)),
                                          torch.from_numpy(w.astype(np.float32)),
                                          torch.from_numpy(b.astype(np.float32)),
                                          stride=stride, padding=1, groups=group).numpy()

    def qparams(a):  # uint8 scale and zero point covering a's range and 0
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        sc = np.float32((hi - lo) / 255.0)
        return sc, np.uint8(np.clip(np.rint(-lo / sc), 0, 255))

    xs, xz = qparams(x)
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    w1s = (np.abs(w1).reshape(8, -1).max(1) / 127).astype(np.float32)  # per output channel
    w1q = np.clip(np.rint(w1 / w1s[:, None, None, None]), -127, 127).astype(np.int8)
    b1 = rng.standard_normal(8).astype(np.float32) * 0.1
    b1q = np.rint(b1 / (xs * w1s)).astype(np.int32)
    f1 = np.maximum(conv(x, w1q * w1s[:, None, None, None], b1q * xs * w1s, 1, 1), 0)
    y1s, y1z = qparams(f1)
    w2 = rng.standard_normal((16, 4, 3, 3)).astype(np.float32) * 0.2
    w2s = np.float32(np.abs(w2).max() / 127)
    w2q = np.clip(np.rint(w2 / w2s), -127, 127).astype(np.int8)
    b2q = np.rint(rng.standard_normal(16).astype(np.float32) * 0.1 / (y1s * w2s)).astype(np.int32)
    f2 = conv(f1, w2q * w2s, b2q * y1s * w2s, 2, 2)
    y2s, y2z = qparams(f2)
    wf = rng.standard_normal((16 * 8 * 8, 10)).astype(np.float32) * 0.05
    wfs = np.float32(np.abs(wf).max() / 127)
    wfq = (np.clip(np.rint(wf / wfs), -127, 127) + 128).astype(np.uint8)  # unsigned, zero 128
    y3s, y3z = qparams(f2.reshape(2, -1) @ wf)
    init = [numpy_helper.from_array(v, n) for n, v in [
        ("xs", xs), ("xz", xz), ("w1", w1q), ("w1s", w1s), ("w1z", np.zeros(8, np.int8)),
        ("y1s", y1s), ("y1z", y1z), ("b1", b1q), ("w2", w2q), ("w2s", w2s), ("w2z", np.int8(0)),
        ("y2s", y2s), ("y2z", y2z), ("b2", b2q), ("flat", np.array([2, -1], np.int64)),
        ("wf", wfq), ("wfs", wfs), ("wfz", np.uint8(128)), ("y3s", y3s), ("y3z", y3z),
        ("wf8", (wfq.astype(np.int16) - 128).astype(np.int8)), ("wf8z", np.int8(0))]]
    g = helper.make_graph([
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quantize"),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["q1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("QLinearConv", ["q1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["q2"], name="conv2", pads=[1, 1, 1, 1], strides=[2, 2], group=2),
        helper.make_node("Reshape", ["q2", "flat"], ["q2f"], name="flatten"),
        helper.make_node("QLinearMatMul", ["q2f", "y2s", "y2z", "wf", "wfs", "wfz", "y3s", "y3z"],
                         ["q3"], name="fc"),
        helper.make_node("DequantizeLinear", ["q3", "y3s", "y3z"], ["y"], name="dequantize"),
        # the int32 sums alone: signed weights, x's zero point, strided and padded
        helper.make_node("ConvInteger", ["xq", "w1", "xz"], ["acc"], name="sums", pads=[1, 0, 1, 2],
                         strides=[2, 1]),
        # the classifier again with signed weights: its sums, and requantised
        helper.make_node("MatMulInteger", ["q2f", "wf8", "y2z"], ["prod"], name="prod"),
        helper.make_node("QLinearMatMul", ["q2f", "y2s", "y2z", "wf8", "wfs", "wf8z", "y3s", "y3z"],
                         ["q4"], name="fc_signed")],
        "int8_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10]),
         helper.make_tensor_value_info("q2", TensorProto.UINT8, [2, 16, 8, 8]),
         helper.make_tensor_value_info("q3", TensorProto.UINT8, [2, 10]),
         helper.make_tensor_value_info("acc", TensorProto.INT32, [2, 8, 8, 16]),
         helper.make_tensor_value_info("prod", TensorProto.INT32, [2, 10]),
         helper.make_tensor_value_info("q4", TensorProto.UINT8, [2, 10])], init)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "int8_cnn.onnx")


def int8_wide():
    """A MatMulInteger and a ConvInteger whose sums pass 2^24: the runtime may not take
    them to oneDNN's float32 kernels (as it does int8_cnn's on a CPU without VNNI), where
    they would round. The constant weights make each column's sum odd."""
    rng = np.random.default_rng(13)
    x = rng.integers(200, 256, (2, 4096), dtype=np.uint8)
    x[0] = 255
    np.save(os.path.join(OUT, "int8_wide.in.npy"), x)
    w = np.full((4096, 3), 127, np.int8)
    w[0] = [126, -128, 1]
    wc = np.full((2, 256, 4, 4), -127, np.int8)
    wc[:, 0, 0, 0] = 3
    init = [numpy_helper.from_array(v, n) for n, v in [
        ("w", w), ("wc", wc), ("img", np.array([2, 256, 4, 4], np.int64))]]
    g = helper.make_graph([
        helper.make_node("MatMulInteger", ["x", "w"], ["prod"], name="prod"),
        helper.make_node("Reshape", ["x", "img"], ["ximg"], name="image"),
        helper.make_node("ConvInteger", ["ximg", "wc"], ["sums"], name="sums")],
        "int8_wide", [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 4096])],
        [helper.make_tensor_value_info("prod", TensorProto.INT32, [2, 3]),
         helper.make_tensor_value_info("sums", TensorProto.INT32, [2, 2, 1, 1])], init)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "int8_wide.onnx")


def int8_asym():
    """ConvIntegers with unsigned weights whose zero points are not 128 (dynamic quantisation
    writes 143 and the like): one per tensor; one per channel, in two groups, at stride 2 with
    uneven pads; x with a zero point of its own.  oneDNN's int8 kernels take no such weights:
    with VNNI their sums are made good after them (quant.c), and must be the exact ones."""
    rng = np.random.default_rng(17)
    x = rng.integers(0, 256, (2, 16, 20, 20), dtype=np.uint8)
    np.save(os.path.join(OUT, "int8_asym.in.npy"), x)
    init = [numpy_helper.from_array(v, n) for n, v in [
        ("w1", rng.integers(0, 256, (32, 16, 3, 3), dtype=np.uint8)), ("wz1", np.array(143, np.uint8)),
        ("w2", rng.integers(0, 256, (24, 8, 3, 3), dtype=np.uint8)),
        ("wz2", rng.integers(100, 200, 24, dtype=np.uint8)), ("xz", np.array(7, np.uint8))]]
    g = helper.make_graph([
        helper.make_node("ConvInteger", ["x", "w1", "xz", "wz1"], ["y1"], name="tensor_zp", pads=[1, 1, 1, 1]),
        helper.make_node("ConvInteger", ["x", "w2", "xz", "wz2"], ["y2"], name="channel_zp", group=2,
                         strides=[2, 2], pads=[0, 1, 2, 1])],
        "int8_asym", [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 16, 20, 20])],
        [helper.make_tensor_value_info("y1", TensorProto.INT32, [2, 32, 20, 20]),
         helper.make_tensor_value_info("y2", TensorProto.INT32, [2, 24, 10, 10])], init)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "int8_asym.onnx")


def conv_bn_training():
    """A Conv, then a BatchNormalization in training mode (the batch's own statistics): no
    weights can hold it, so it must not be folded into the Conv. Reference: PyTorch."""
    import torch

    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    sc, b = np.full(4, 1.5, np.float32), np.full(4, 0.1, np.float32)
    init = [numpy_helper.from_array(v, n) for n, v in [
        ("W", w), ("s", sc), ("b", b), ("m", np.zeros(4, np.float32)), ("v", np.ones(4, np.float32))]]
    g = helper.make_graph([
        helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], name="bn",
                         training_mode=1)], "conv_bn_training",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8, 8])], init)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)]), "conv_bn_training.onnx")
    c = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    y = torch.nn.functional.batch_norm(c, None, None, torch.from_numpy(sc), torch.from_numpy(b),
                                       training=True, eps=1e-5)
    np.save(os.path.join(OUT, "conv_bn_training.ref_in.npy"), x)
    np.save(os.path.join(OUT, "conv_bn_training.ref_out.npy"), y.numpy())


def export_with_ref(model, x, stem, opset):
    """model on input "x" as STEM.onnx (output "y"), and its answer to x kept as the reference."""
    import torch

    tmp = os.path.join(OUT, stem + ".onnx.tmp")
    torch.onnx.export(model, (x,), tmp, opset_version=opset, input_names=["x"], output_names=["y"])
    os.replace(tmp, os.path.join(OUT, stem + ".onnx"))
    with torch.no_grad():
        y = model(x)
    np.save(os.path.join(OUT, stem + ".ref_in.npy"), x.numpy())
    np.save(os.path.join(OUT, stem + ".ref_out.npy"), y.numpy())
    print("exported", stem + ".onnx", flush=True)


def scripted_loop():
    """A recurrence written as Python control flow and exported through TorchScript: a Loop
    over the sequence (its trip count from the input's shape) reading the input and the
    weights from outside its body, an If inside it, as PyTorch's exporter writes them."""
    import torch

    fname = "scripted_loop.onnx"
    if done(fname) and done("scripted_loop.ref_out.npy"):
        return
    torch.manual_seed(11)

    class Recur(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.Linear(16, 16)
            self.head = torch.nn.Linear(16, 4)

        def forward(self, x):
            h = torch.zeros(x.shape[1], 16)
            for i in range(x.shape[0]):
                h = torch.tanh(self.cell(h) + x[i])
                if h.sum() > 0:
                    h = h * 0.5
                else:
                    h = -h
            return self.head(h)

    export_with_ref(torch.jit.script(Recur().eval()), torch.randn(9, 3, 16), "scripted_loop", 13)


def export_unet():
    """A small U-Net: strided Conv encoders, ConvTranspose decoders with biases and a fused
    ReLU (and one without either), skip connections by Concat; random weights. The
    decoders upsample 2x2 at stride 2 and 4x4 at stride 2, as segmentation heads do."""
    import torch

    fname = "unet_small.onnx"
    if done(fname) and done("unet_small.ref_out.npy"):
        return
    torch.manual_seed(13)
    nn = torch.nn

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
            self.e2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
            self.e3 = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU())
            self.d3 = nn.Sequential(nn.ConvTranspose2d(64, 32, 2, stride=2), nn.ReLU())
            self.d2 = nn.Sequential(nn.ConvTranspose2d(64, 16, 4, stride=2, padding=1), nn.ReLU())
            self.d1 = nn.ConvTranspose2d(32, 8, 2, stride=2, bias=False)
            self.head = nn.Conv2d(8, 2, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(a)
            c = self.e3(b)
            y = torch.cat([self.d3(c), b], 1)
            y = torch.cat([self.d2(y), a], 1)
            return self.head(self.d1(y))

    export_with_ref(UNet().eval(), torch.randn(1, 3, 96, 128), "unet_small", 13)


def save(model, fname, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, fname))


def tiny_models():
    """Small graphs for control flow, external data and the bad-input tests."""
    f = TensorProto.FLOAT
    # If with two branches, Loop with a constant trip count.
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t_out"])], "then",
                               [], [helper.make_tensor_value_info("t_out", f, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"])], "else",
                               [], [helper.make_tensor_value_info("e_out", f, [2, 3])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "y"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", f, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", f, [2, 3])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", f, [], [0.0])),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Constant", [], ["trip"], value=helper.make_tensor("trip", TensorProto.INT64, [], [3])),
        helper.make_node("Constant", [], ["true"], value=helper.make_tensor("true", TensorProto.BOOL, [], [1])),
        helper.make_node("Loop", ["trip", "true", "x"], ["z"], body=body),
        helper.make_node("MatMul", ["z", "w"], ["out"]),
    ]
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    g = helper.make_graph(nodes, "control", [helper.make_tensor_value_info("x", f, [2, 3])],
                          [helper.make_tensor_value_info("out", f, [2, 4])], [w])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "control_flow.onnx")

    # Control flow the runtime must refuse up front: a loop-carried value that doubles each
    # iteration (no shape to plan for), and a body with a training-mode Dropout.
    grow = helper.make_graph(
        [helper.make_node("Identity", ["gc_in"], ["gc_out"]),
         helper.make_node("Concat", ["g_in", "g_in"], ["g_out"], axis=0)],
        "grow_body",
        [helper.make_tensor_value_info("gi", TensorProto.INT64, []),
         helper.make_tensor_value_info("gc_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("g_in", f, [2, 3])],
        [helper.make_tensor_value_info("gc_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("g_out", f, ["rows", 3])])
    drop = helper.make_graph(
        [helper.make_node("Identity", ["dc_in"], ["dc_out"]),
         helper.make_node("Dropout", ["d_in", "ratio", "train"], ["d_out"], name="drop")],
        "drop_body",
        [helper.make_tensor_value_info("di", TensorProto.INT64, []),
         helper.make_tensor_value_info("dc_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("d_in", f, [2, 3])],
        [helper.make_tensor_value_info("dc_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("d_out", f, [2, 3])])
    nodes = [
        helper.make_node("Constant", [], ["trip"], value=helper.make_tensor("trip", TensorProto.INT64, [], [3])),
        helper.make_node("Constant", [], ["true"], value=helper.make_tensor("true", TensorProto.BOOL, [], [1])),
        helper.make_node("Constant", [], ["ratio"], value=helper.make_tensor("ratio", f, [], [0.5])),
        helper.make_node("Constant", [], ["train"], value=helper.make_tensor("train", TensorProto.BOOL, [], [1])),
        helper.make_node("Loop", ["trip", "true", "x"], ["grown"], body=grow, name="grow"),
        helper.make_node("Loop", ["trip", "true", "x"], ["dropped"], body=drop, name="train"),
    ]
    g = helper.make_graph(nodes, "control_refused", [helper.make_tensor_value_info("x", f, [2, 3])],
                          [helper.make_tensor_value_info("grown", f, ["rows", 3]),
                           helper.make_tensor_value_info("dropped", f, [2, 3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "control_refused.onnx")

    # String tensors end to end: moved (Transpose, Gather, Concat), normalised
    # (StringNormalizer: stopwords case-insensitively, then upper case), and read as numbers.
    S = TensorProto.STRING
    nodes = [
        helper.make_node("Transpose", ["s"], ["st"], perm=[1, 0]),
        helper.make_node("Constant", [], ["pick"], value=helper.make_tensor("pick", TensorProto.INT64, [2], [2, 0])),
        helper.make_node("Gather", ["st", "pick"], ["sg"], axis=0),
        helper.make_node("Concat", ["sg", "sg"], ["moved"], axis=1),
        helper.make_node("Constant", [], ["flat"], value=helper.make_tensor("flat", TensorProto.INT64, [1], [6])),
        helper.make_node("Reshape", ["s", "flat"], ["sf"]),
        helper.make_node("StringNormalizer", ["sf"], ["normalized"], case_change_action="UPPER",
                         stopwords=["drop"]),
        helper.make_node("Cast", ["n"], ["num"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["num"], ["text"], to=S),
    ]
    g = helper.make_graph(nodes, "strings",
                          [helper.make_tensor_value_info("s", S, [2, 3]),
                           helper.make_tensor_value_info("n", S, [3])],
                          [helper.make_tensor_value_info("moved", S, [2, 4]),
                           helper.make_tensor_value_info("normalized", S, ["kept"]),
                           helper.make_tensor_value_info("num", f, [3]),
                           helper.make_tensor_value_info("text", S, [3])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "strings.onnx")

    # Complex numbers are moved as any element is (no operator computes on them).
    C = TensorProto.COMPLEX64
    g = helper.make_graph(
        [helper.make_node("Transpose", ["z"], ["zt"], perm=[1, 0]),
         helper.make_node("Concat", ["zt", "zt"], ["zz"], axis=0)], "complex",
        [helper.make_tensor_value_info("z", C, [2, 3])],
        [helper.make_tensor_value_info("zz", C, [6, 2])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "complex.onnx")

    # A small MLP whose weights live in an external file beside the model.
    os.makedirs(os.path.join(OUT, "external"), exist_ok=True)
    w1 = numpy_helper.from_array(np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 1000, "w1")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w1"], ["h"]),
                           helper.make_node("Relu", ["h"], ["y"])], "ext",
                          [helper.make_tensor_value_info("x", f, ["batch", 64])],
                          [helper.make_tensor_value_info("y", f, ["batch", 32])], [w1])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save_model(m, os.path.join(OUT, "external", "mlp_external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="mlp_external.bin", size_threshold=0)
    # The same model pointing outside its folder: must be refused.
    bad = onnx.load(os.path.join(OUT, "external", "mlp_external.onnx"), load_external_data=False)
    for e in bad.graph.initializer[0].external_data:
        if e.key == "location":
            e.value = "../../etc/passwd"
    onnx.save(bad, os.path.join(OUT, "external", "escape.onnx"))

    # Bad graphs: a cycle, an unknown operator, a shape that contradicts an initializer,
    # a dangling input, a graph output nobody produces, a tensor defined twice.
    vi = helper.make_tensor_value_info
    cyc = helper.make_graph([helper.make_node("Relu", ["x", ], ["a"]) if False else
                             helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
                             helper.make_node("Relu", ["a"], ["b"], name="relu_b")], "cycle",
                            [vi("x", f, [2])], [vi("b", f, [2])])
    save(helper.make_model(cyc), "bad_cycle.onnx", check=False)
    unk = helper.make_graph([helper.make_node("FrobnicateTensor", ["x"], ["y"], name="frob")], "unk",
                            [vi("x", f, [2])], [vi("y", f, [2])])
    save(helper.make_model(unk), "bad_unknown_op.onnx", check=False)
    wi = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    con = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "contra",
                            [vi("x", f, [2, 3]), vi("w", f, [3, 4])], [vi("y", f, [2, 4])], [wi])
    save(helper.make_model(con), "bad_initializer_shape.onnx", check=False)
    mm = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mismatch",
                           [vi("x", f, [2, 5])], [vi("y", f, [2, 3])], [wi])
    save(helper.make_model(mm), "bad_matmul_dims.onnx", check=False)
    dang = helper.make_graph([helper.make_node("Add", ["x", "ghost"], ["y"], name="add_ghost")], "dangling",
                             [vi("x", f, [2])], [vi("y", f, [2])])
    save(helper.make_model(dang), "bad_dangling.onnx", check=False)
    miss = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "missing",
                             [vi("x", f, [2])], [vi("nowhere", f, [2])])
    save(helper.make_model(miss), "bad_missing_output.onnx", check=False)
    dup = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                             helper.make_node("Neg", ["x"], ["y"], name="r2")], "dup",
                            [vi("x", f, [2])], [vi("y", f, [2])])
    save(helper.make_model(dup), "bad_duplicate.onnx", check=False)
    raw = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    raw.raw_data = raw.raw_data[:20]
    short = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "short",
                              [vi("x", f, [2, 4])], [vi("y", f, [2, 3])], [raw])
    save(helper.make_model(short), "bad_short_data.onnx", check=False)
    # Only the training domain imported, yet a default-domain node.
    trn = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "training_only",
                            [vi("x", f, [2])], [vi("y", f, [2])])
    save(helper.make_model(trn, opset_imports=[helper.make_opsetid("ai.onnx.preview.training", 1)]),
         "bad_training_only.onnx", check=False)
    # A training op in the default domain: no such operator there.
    adam = helper.make_graph([helper.make_node("Adam", ["r", "t", "x", "g", "v", "h"],
                                               ["x2", "v2", "h2"], name="adam")], "adam_default",
                             [vi("r", f, []), vi("t", TensorProto.INT64, []), vi("x", f, [2]),
                              vi("g", f, [2]), vi("v", f, [2]), vi("h", f, [2])],
                             [vi("x2", f, [2]), vi("v2", f, [2]), vi("h2", f, [2])])
    save(helper.make_model(adam), "bad_adam_default_domain.onnx", check=False)
    # A valid protobuf that is not a model: a bare TensorProto.
    with open(os.path.join(OUT, "bad_not_a_model.onnx"), "wb") as fh:
        fh.write(numpy_helper.from_array(np.ones(8, np.float32), "t").SerializeToString())
    # Subgraphs nested 5000 deep in 70 KB: protobuf-c alone would recurse off the stack.
    with open(os.path.join(OUT, "bad_deep_nesting.onnx"), "wb") as fh:
        fh.write(deep_nesting(5000))
    # Transpose, Slice and nearest Resize as index maps: a last axis gathered
    # with a stride, negative and non-unit steps, the default (reversing) perm,
    # rows and elements repeated by 2 and by 3.
    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    floats = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    idx = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[3, 1, 0, 2], name="gather_last"),
         helper.make_node("Slice", ["t", "starts", "ends", "axes", "steps"], ["s"], name="steps"),
         helper.make_node("Transpose", ["s"], ["r"], name="reverse"),
         helper.make_node("Resize", ["x", "", "by2"], ["u2"], mode="nearest", name="up2"),
         helper.make_node("Resize", ["x", "", "by3"], ["u3"], mode="nearest", name="up3")], "index_ops",
        [vi("x", f, [2, 3, 4, 5])],
        [vi("s", f, [3, 3, 2, 2]), vi("r", f, [2, 2, 3, 3]), vi("u2", f, [2, 3, 8, 10]),
         vi("u3", f, [2, 3, 12, 15])],
        [ints("starts", [4, 1]), ints("ends", [-7, 10]), ints("axes", [0, 3]), ints("steps", [-2, 2]),
         floats("by2", [1, 1, 2, 2]), floats("by3", [1, 1, 3, 3])])
    save(helper.make_model(idx, opset_imports=[helper.make_opsetid("", 13)]), "index_ops.onnx")
    # Two-input element-wise ops on a channels-last map between 1x1 convolutions: one value
    # per channel (24, no multiple of a vector) on either side, and a scalar; 11x11 pixels,
    # so the per-channel loop ends in part of a vector (121 x 24 floats, 8 past the last whole).
    rng = np.random.default_rng(5)
    arr = lambda name, shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    conv = lambda i, o, w: helper.make_node("Conv", [i, w], [o], name=o)
    ops = [("Add", "a", "per"), ("Sub", "per", "a"), ("Mul", "a", "per"), ("Div", "per", "e"),
           ("Sub", "a", "three"), ("Div", "three", "e"), ("Mul", "three", "a")]
    nodes = [conv("x", "a", "w_in"), helper.make_node("Abs", ["a"], ["abs"], name="abs"),
             helper.make_node("Add", ["abs", "one"], ["e"], name="e")]
    for i, (op, l, r) in enumerate(ops):
        nodes += [helper.make_node(op, [l, r], ["b%d" % i], name="b%d" % i), conv("b%d" % i, "y%d" % i, "w%d" % i)]
    bl = helper.make_graph(nodes, "binary_layouts", [vi("x", f, [1, 24, 11, 11])],
                           [vi("y%d" % i, f, [1, 24, 11, 11]) for i in range(len(ops))],
                           [arr("w_in", [24, 24, 1, 1]), arr("per", [1, 24, 1, 1]),
                            numpy_helper.from_array(np.array(1, np.float32), "one"),
                            numpy_helper.from_array(np.array(3, np.float32), "three")] +
                           [arr("w%d" % i, [24, 24, 1, 1]) for i in range(len(ops))])
    save(helper.make_model(bl, opset_imports=[helper.make_opsetid("", 13)]), "binary_layouts.onnx")
    # Pad between 1x1 convolutions, so on channels-last maps: each mode, pads on every axis
    # (the channels' too, and a crop), 24 channels of 9 x 11.
    pads = [("constant", [0, 2, 1, 0, 0, 1, -1, 3]), ("reflect", [0, 3, 2, 1, 0, 1, 3, 2]),
            ("edge", [0, 0, 4, 1, 0, 5, 0, 2])]
    nodes = [conv("x", "a", "w_in")]
    inits = [arr("w_in", [24, 24, 1, 1])]
    for i, (mode, p) in enumerate(pads):
        c = 24 + p[1] + p[5]
        nodes += [helper.make_node("Pad", ["a", "p%d" % i, "v"], ["q%d" % i], mode=mode, name="q%d" % i),
                  conv("q%d" % i, "y%d" % i, "w%d" % i)]
        inits += [numpy_helper.from_array(np.array(p, np.int64), "p%d" % i), arr("w%d" % i, [8, c, 1, 1])]
    inits.append(numpy_helper.from_array(np.array(1.5, np.float32), "v"))
    out = lambda p: [1, 8, 9 + p[2] + p[6], 11 + p[3] + p[7]]
    pl = helper.make_graph(nodes, "pad_layouts", [vi("x", f, [1, 24, 9, 11])],
                           [vi("y%d" % i, f, out(p)) for i, (_, p) in enumerate(pads)], inits)
    save(helper.make_model(pl, opset_imports=[helper.make_opsetid("", 13)]), "pad_layouts.onnx")
    # Erf and Gelu, exact and tanh's approximation (opset 20, newer than this onnx's checker)
    # over lengths with and without a tail past whole vectors, on values from 0 to the tails of
    # erf, NaN and infinities.
    eg = helper.make_graph([helper.make_node("Erf", ["x"], ["erf"], name="erf"),
                            helper.make_node("Gelu", ["x"], ["gelu"], name="gelu"),
                            helper.make_node("Gelu", ["x"], ["gelu_tanh"], approximate="tanh",
                                             name="gelu_tanh")], "erf_gelu",
                           [vi("x", f, [3, 37])], [vi("erf", f, [3, 37]), vi("gelu", f, [3, 37]),
                                                   vi("gelu_tanh", f, [3, 37])])
    m = helper.make_model(eg, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    save(m, "erf_gelu.onnx", check=False)
    # Global pools over NCHW rows (the cpu backend's own loop): 143 floats a row (two
    # blocks of four vectors and a 15-lane tail) and 81 (one block, one vector, one lane).
    gp = helper.make_graph([helper.make_node(op, [i], [o], name=o)
                            for op, i, o in (("GlobalAveragePool", "x", "avg_x"),
                                             ("GlobalMaxPool", "x", "max_x"),
                                             ("GlobalAveragePool", "z", "avg_z"),
                                             ("GlobalMaxPool", "z", "max_z"))], "global_pools",
                           [vi("x", f, [2, 5, 13, 11]), vi("z", f, [1, 3, 9, 9])],
                           [vi("avg_x", f, [2, 5, 1, 1]), vi("max_x", f, [2, 5, 1, 1]),
                            vi("avg_z", f, [1, 3, 1, 1]), vi("max_z", f, [1, 3, 1, 1])])
    save(helper.make_model(gp, opset_imports=[helper.make_opsetid("", 13)]), "global_pools.onnx")
    # NCHW to NHWC and back (the cpu backend's tiled 2-D transposes): 20 channels of 9 x 11
    # (tiles of 8 rows and 64 columns, both cut short) and 99 pixels of 20 channels.
    tp = helper.make_graph([helper.make_node("Transpose", ["x"], ["nhwc"], perm=[0, 2, 3, 1], name="nhwc"),
                            helper.make_node("Transpose", ["z"], ["nchw"], perm=[0, 3, 1, 2], name="nchw")],
                           "transposes", [vi("x", f, [2, 20, 9, 11]), vi("z", f, [2, 9, 11, 20])],
                           [vi("nhwc", f, [2, 9, 11, 20]), vi("nchw", f, [2, 20, 9, 11])])
    save(helper.make_model(tp, opset_imports=[helper.make_opsetid("", 13)]), "transposes.onnx")
    save(synthetic_dag(1000), "synthetic_dag1000.onnx")
    save(chain(10000, "Relu"), "chain10000_relu.onnx")
    save(chain(10000, "Identity"), "chain10000_identity.onnx")
    # Random bytes and a truncated real model are made by the tests themselves.


def chain(n_nodes, op):
    """n_nodes tiny ops in a row: the runtime's per-node dispatch cost, all overhead."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node(op, ["x" if i == 0 else "t%d" % (i - 1)], ["t%d" % i], name="n%d" % i)
             for i in range(n_nodes)]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", f, [1, 4])],
                          [helper.make_tensor_value_info("t%d" % (n_nodes - 1), f, [1, 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def synthetic_dag(n_nodes, seed=1):
    """A 1000-node, branchy graph of small dense layers for the scheduler benchmarks."""
    rng = np.random.default_rng(seed)
    f = TensorProto.FLOAT
    width = 256
    nodes, inits, live = [], [], ["x"]
    for i in range(n_nodes):
        window = live[-24:]
        a = window[rng.integers(len(window))]
        kind = i % 5
        out = "t%d" % i
        if kind == 0:
            w = "w%d" % i
            inits.append(numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32) * 0.05, w))
            nodes.append(helper.make_node("MatMul", [a, w], [out], name="mm%d" % i))
        elif kind in (1, 3):
            b = window[rng.integers(len(window))]
            nodes.append(helper.make_node("Add" if kind == 1 else "Mul", [a, b], [out], name="bin%d" % i))
        elif kind == 2:
            nodes.append(helper.make_node("Relu", [a], [out], name="relu%d" % i))
        else:
            nodes.append(helper.make_node("Sigmoid", [a], [out], name="sig%d" % i))
        live.append(out)
    g = helper.make_graph(nodes, "dag%d" % n_nodes, [helper.make_tensor_value_info("x", f, [64, width])],
                          [helper.make_tensor_value_info(live[-1], f, [64, width])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def deep_nesting(depth):
    def varint(n):
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            if n:
                out += bytes([b | 0x80])
            else:
                return out + bytes([b])

    def field(num, wire, payload):
        key = varint((num << 3) | wire)
        return key + (varint(len(payload)) + payload if wire == 2 else payload)

    g = b""
    for _ in range(depth):  # GraphProto{node: NodeProto{If, attribute: {g: GraphProto}}}
        attr = field(1, 2, b"x") + field(20, 0, varint(5)) + field(6, 2, g)
        g = field(1, 2, field(4, 2, b"If") + field(5, 2, attr))
    return field(1, 0, varint(8)) + field(7, 2, g) + field(8, 2, field(2, 0, varint(13)))


def main():
    os.makedirs(OUT, exist_ok=True)
    what = sys.argv[2:] or ["tiny", "cnn", "transformer", "sequence", "extended"]
    if "tiny" in what:
        tiny_models()
        int8_cnn()
        int8_wide()
        int8_asym()
        conv_bn_training()
        scripted_loop()
        export_unet()
    if "transformer" in what:
        export_transformer()
    if "cnn" in what:
        export_cnns()
    if "sequence" in what:
        export_sequence()
    if "extended" in what:
        export_extended()
        half_models()


if __name__ == "__main__":
    main()
