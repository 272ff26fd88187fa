# SPDX-License-Identifier: MIT
"""int8_ref.py MODEL.onnx X.npy OUT_DIR: a model of 8-bit integer operators run
exactly in NumPy, every output written as OUT_DIR/NAME.npy.

The sums are int64, the requantisation float32 as ONNX Runtime computes it
(multiplier x_scale * w_scale / y_scale in float32, the sum times it,
rounded half to even, plus the zero point, saturated).  A reference that no
SIMD instruction can saturate: ONNX Runtime's own u8s8 kernels on x86
without VNNI sum pairs with vpmaddubsw, which saturates at 16 bits (its
quantization documentation says so), and then it is not one.
Operators: QuantizeLinear, DequantizeLinear, QLinearConv, ConvInteger,
QLinearMatMul, MatMulInteger, Reshape (2-D convolutions, NCHW)."""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

F = np.float32


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def requant(acc, mult, zp, dtype):
    y = np.rint(acc.astype(F) * F(mult)) + F(zp)  # rint: half to even
    return saturate(y, dtype)


def conv_int(x, w, xz, wz, a):
    """int64 sums of (x - xz) * (w - wz), 2-D, NCHW, pads, strides, dilations, group."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    g = a.get("group", 1)
    s = a.get("strides", [1, 1])
    d = a.get("dilations", [1, 1])
    p = a.get("pads", [0, 0, 0, 0])
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        sys.exit("int8_ref: auto_pad is not supported")
    xi = x.astype(np.int64) - np.asarray(xz, np.int64)
    wi = w.astype(np.int64) - np.asarray(wz, np.int64).reshape(-1, 1, 1, 1)
    xp = np.zeros((n, c, h + p[0] + p[2], wd + p[1] + p[3]), np.int64)
    xp[:, :, p[0]:p[0] + h, p[1]:p[1] + wd] = xi
    oh = (h + p[0] + p[2] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + p[1] + p[3] - d[1] * (kw - 1) - 1) // s[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // g
    for gi in range(g):
        xs = xp[:, gi * cg:(gi + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                           j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
                y[:, gi * mg:(gi + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", patch, wi[gi * mg:(gi + 1) * mg, :, i, j])
    return y


def matmul_int(a, b, az, bz):
    return (a.astype(np.int64) - np.asarray(az, np.int64)) @ (b.astype(np.int64) - np.asarray(bz, np.int64))


def main():
    model, x_path, out = sys.argv[1:4]
    m = onnx.load(model)
    v = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    v[m.graph.input[0].name] = np.load(x_path)
    for nd in m.graph.node:
        i = [v[k] if k else None for k in nd.input]
        a = attrs(nd)
        op = nd.op_type
        if op == "QuantizeLinear":
            zp = i[2] if len(i) > 2 else np.uint8(0)
            y = saturate(np.rint(i[0].astype(F) / F(i[1])) + F(zp), zp.dtype)
        elif op == "DequantizeLinear":
            zp = i[2] if len(i) > 2 else 0
            y = ((i[0].astype(np.int32) - np.int32(zp)).astype(F) * F(i[1])).astype(F)
        elif op == "ConvInteger":
            y = conv_int(i[0], i[1], i[2] if len(i) > 2 else 0, i[3] if len(i) > 3 else 0, a)
            y = y.astype(np.int32)
        elif op == "QLinearConv":
            acc = conv_int(i[0], i[3], i[2], i[5], a)
            if len(i) > 8 and i[8] is not None:
                acc += i[8].astype(np.int64).reshape(1, -1, 1, 1)
            mult = (F(i[1]) * np.asarray(i[4], F) / F(i[6])).astype(F).reshape(1, -1, 1, 1)
            y = saturate(np.rint(acc.astype(F) * mult) + F(i[7]), i[7].dtype)
        elif op == "MatMulInteger":
            y = matmul_int(i[0], i[1], i[2] if len(i) > 2 else 0, i[3] if len(i) > 3 else 0)
            y = y.astype(np.int32)
        elif op == "QLinearMatMul":
            acc = matmul_int(i[0], i[3], i[2], i[5])
            mult = (F(i[1]) * np.asarray(i[4], F) / F(i[6])).astype(F)
            y = requant(acc, mult, i[7], i[7].dtype)
        elif op == "Reshape":
            y = i[0].reshape(i[1])
        else:
            sys.exit(f"int8_ref: {op} is not supported")
        v[nd.output[0]] = y
    os.makedirs(out, exist_ok=True)
    for o in m.graph.output:
        np.save(os.path.join(out, o.name + ".npy"), v[o.name])


main()
