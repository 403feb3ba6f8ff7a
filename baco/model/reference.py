"""The independent reference of a quantised graph: numpy only, Gemmini's arithmetic written once
more from the graph's int8 parameters (op.q), sharing no code with the kernels, the lowering, the
CPU operators or baco.gemmini.arith.

Gemmini's arithmetic: int8 operands, sums in int32 starting from the int32 bias, then the
accumulator read: ReLU, multiply by the float32 scale in float32, round half to even, saturate
to int8. Residual add: each int8 operand times its float32 scale (round half to even, saturated
to int8) on its way into the accumulator, the int32 sum, then the read as above. A pooled
mvout: the max over each window of the (ReLU'd, so >= 0) int8 output, zeros outside the image.
Under an output-stationary schedule each block of K products is summed in the array and
saturated to its output width before the accumulator adds it (os_k_block, array_bits in op.q).
The CPU operators' arithmetic is written in baco.model.cpu_ops' docstrings (float32 products,
requantisation = round half to even, saturate) and restated here.
"""
from __future__ import annotations

import math

import numpy as np


def requantize(acc, scale, relu=False):
    """int8 of an integer array through Gemmini's accumulator read."""
    acc = np.clip(np.asarray(acc, dtype=np.int64), -2**31, 2**31 - 1)
    if relu:
        acc = np.maximum(acc, 0)
    y = acc.astype(np.float32) * np.float32(scale)
    return np.clip(np.rint(y), -128, 127).astype(np.int8)


def exact_matmul(a, b):
    """Integer a @ b: int8 products summed in float64, exact while |sums| < 2^53 (int8 sums of
    fewer than 2^38 terms)."""
    return np.rint(np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)).astype(np.int64)


def pooled_size(size, k, stride, padding, dilation, ceil_mode=False):
    """torch's output size along one axis; with ceil_mode the last window may overhang the input
    but starts inside it or its left padding."""
    span = size + 2 * padding - dilation * (k - 1) - 1
    out = -(-span // stride) + 1 if ceil_mode else span // stride + 1
    return out - 1 if ceil_mode and (out - 1) * stride >= size + padding else out


def windows(x, kernel, stride, padding, dilation, value=0, ceil_mode=False):
    """Per filter tap (r, s): the (N, P, Q, C) input pixels it multiplies (NHWC x), `value` in the
    padding; a ceil_mode window's overhang past the padding holds 0 (sums) or, for maxima, the
    padding value too (the window always holds a pixel of the image)."""
    N, H, W, C = x.shape
    (R, S), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    P = pooled_size(H, R, sh, ph, dh, ceil_mode)
    Q = pooled_size(W, S, sw, pw, dw, ceil_mode)
    xp = np.pad(x, ((0, 0), (ph, ph), (pw, pw), (0, 0)), constant_values=value)
    extra_h = max(0, (P - 1) * sh + dh * (R - 1) + 1 - xp.shape[1])
    extra_w = max(0, (Q - 1) * sw + dw * (S - 1) + 1 - xp.shape[2])
    xp = np.pad(xp, ((0, 0), (0, extra_h), (0, extra_w), (0, 0)), constant_values=value if value < 0 else 0)
    for r in range(R):
        for s in range(S):
            yield r, s, xp[:, r * dh: r * dh + (P - 1) * sh + 1: sh, s * dw: s * dw + (Q - 1) * sw + 1: sw, :]


def array_sums(a, b, q):
    """a @ b as the array adds it into the accumulator: whole, or under an output-stationary
    schedule (q["os_k_block"]) one sum per block of os_k_block columns of a, each saturated to the
    array's output width (q["array_bits"]) before it is added."""
    kb = q.get("os_k_block")
    if not kb:
        return exact_matmul(a, b)
    hi = 2 ** (q["array_bits"] - 1)
    return sum(np.clip(exact_matmul(a[:, k:k + kb], b[k:k + kb]), -hi, hi - 1) for k in range(0, a.shape[1], kb))


def conv(x, q):
    w = q["weight"]
    R, S, C, K = w.shape
    acc = q["bias"].astype(np.int64)
    for r, s, tap in windows(x, (R, S), q["stride"], q["padding"], q["dilation"]):
        acc = acc + array_sums(tap.reshape(-1, C), w[r, s], q).reshape(*tap.shape[:3], K)
    y = requantize(acc, q["scale"], q["relu"])
    if q.get("pool"):
        p = q["pool"]
        y = max_pool(y, (p["kernel"],) * 2, (p["stride"],) * 2, (p["padding"],) * 2, pad_value=0)
    return y


def depthwise(x, q):
    w = q["weight"]
    R, S, C = w.shape
    acc = q["bias"].astype(np.int64)
    for r, s, tap in windows(x, (R, S), q["stride"], q["padding"], q["dilation"]):
        acc = acc + tap.astype(np.int64) * w[r, s].astype(np.int64)
    return requantize(acc, q["scale"], q["relu"])


def max_pool(x, kernel, stride, padding, pad_value=-128, dilation=(1, 1), ceil_mode=False):
    """Max over each window of an NHWC int8 image; padding holds `pad_value` (-128: only the
    image's own pixels count)."""
    out = None
    for _, _, tap in windows(x, kernel, stride, padding, dilation, pad_value, ceil_mode):
        out = tap if out is None else np.maximum(out, tap)
    return out


def linear(x, q):
    lead, K = x.shape[:-1], x.shape[-1]
    acc = array_sums(x.reshape(-1, K), q["weight"], q) + q["bias"].astype(np.int64)
    return requantize(acc, q["scale"], q["relu"]).reshape(*lead, -1)


def viewed(base, view):
    """The (shape, strides, offset) view of a stored tensor's buffer, strides and offset in elements."""
    shape, strides, offset = view
    flat = np.ascontiguousarray(base).reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * flat.itemsize for s in strides], writeable=False)


def matmul(a, b, q):
    """Batched a @ b of the operands' views; the result stored transposed by out_order."""
    a, b = viewed(a, q["a_view"]), viewed(b, q["b_view"])
    y = requantize(np.rint(np.matmul(a.astype(np.float64), b.astype(np.float64))).astype(np.int64), q["scale"])
    return np.ascontiguousarray(y.transpose(q["out_order"]))


def scaled_int8(x, scale):
    return np.clip(np.rint(x.astype(np.float32) * np.float32(scale)), -128, 127).astype(np.int64)


def add(a, b, q):
    total = scaled_int8(a, q["a_scale"]) + scaled_int8(b, q["b_scale"])
    return requantize(total, q["out_scale"], q["relu"])


def lut(x, q):
    return q["table"][x.astype(np.int64) + 128]


def requant_float(v):
    """int8 of float32 values: round half to even, saturate."""
    return np.clip(np.rint(v), -128, 127).astype(np.int8)


def average(sums, counts, q):
    """Window sums times float32(in_scale / (out_scale * count)), in float32."""
    m = (q["in_scale"] / (q["out_scale"] * np.asarray(counts, dtype=np.float64))).astype(np.float32)
    return requant_float(sums.astype(np.float32) * m)


def avg_pool(x, q):
    """torch's avg_pool2d: int32 window sums (zeros outside), divided by the window's positions
    inside the padded image (count_include_pad; a ceil_mode overhang does not count) or inside the
    image itself."""
    geometry = (q["kernel"], q["stride"], q["padding"], (1, 1))
    sums = sum(tap.astype(np.int64) for _, _, tap in windows(x, *geometry, 0, q["ceil_mode"]))
    ones = np.ones((1, *x.shape[1:3], 1), dtype=np.int64)
    counts = sum(tap for _, _, tap in windows(ones, *geometry, int(q["count_include_pad"]), q["ceil_mode"]))
    return average(sums, counts, q)


def adaptive_avg_pool(x, q):
    """torch's adaptive windows: rows [floor(i H / OH), ceil((i + 1) H / OH)), columns likewise."""
    N, H, W, C = x.shape
    OH, OW = q["output_size"]
    rows = [((i * H) // OH, -(-(i + 1) * H // OH)) for i in range(OH)]
    cols = [((j * W) // OW, -(-(j + 1) * W // OW)) for j in range(OW)]
    sums = np.stack([np.stack([x[:, h0:h1, w0:w1].astype(np.int64).sum(axis=(1, 2)) for w0, w1 in cols], 1)
                     for h0, h1 in rows], 1)
    counts = np.array([[(h1 - h0) * (w1 - w0) for w0, w1 in cols] for h0, h1 in rows])[None, :, :, None]
    return average(sums, counts, q)


def mul_channel(x, s, q):
    """Squeeze-excite: int32 x * s[n, c], times float32(x_scale * s_scale / out_scale) in float32."""
    p = x.astype(np.int64) * s.reshape(s.shape[0], 1, 1, -1).astype(np.int64)
    m = np.float32(q["x_scale"] * q["s_scale"] / q["out_scale"])
    return requant_float(p.astype(np.float32) * m)


def softmax(x, q):
    """Per row: m = max; e_j = T[m - x_j] with T[d] = float32(exp(-d in_scale)); s = the float32 sum
    of e_j in order; r = float32(1 / out_scale) / s; out_j = requant(e_j r). With an attention mask
    (q["keep"]: bool rows, row i of x using row i mod their count) m is the max of the kept values
    and a masked e_j is 0."""
    table = np.array([math.exp(-d * q["in_scale"]) for d in range(256)], dtype=np.float32)
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    keep = np.ones_like(rows, dtype=bool) if q.get("keep") is None else \
        np.tile(q["keep"], (rows.shape[0] // q["keep"].shape[0], 1))
    m = np.where(keep, rows, -128).max(axis=1, keepdims=True)
    e = np.where(keep, table[np.where(keep, m - rows, 0)], np.float32(0))
    s = np.add.accumulate(e, axis=1, dtype=np.float32)[:, -1:]
    r = np.float32(1.0 / q["out_scale"]) / s
    return requant_float(e * r).reshape(x.shape)


def layernorm(x, q):
    """Per row of C values: s1 = sum x, s2 = sum x^2 (integers); mean = float32(s1) / float32(C);
    var = float32(C s2 - s1^2) / float32(C^2); rstd = 1 / sqrt(var + float32(eps / in_scale^2));
    out = requant(((float32(x) - mean) rstd) float32(gamma / out_scale) + float32(beta / out_scale)),
    every operation in float32."""
    f32 = np.float32
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    C = rows.shape[1]
    s1, s2 = rows.sum(axis=1, keepdims=True), (rows * rows).sum(axis=1, keepdims=True)
    mean = s1.astype(f32) / f32(C)
    var = (C * s2 - s1 * s1).astype(f32) / f32(C * C)
    rstd = f32(1.0) / np.sqrt(var + f32(q["eps"] / (q["in_scale"] * q["in_scale"])))
    g = (q["gamma"] / q["out_scale"]).astype(f32)
    b = (q["beta"] / q["out_scale"]).astype(f32)
    return requant_float(((rows.astype(f32) - mean) * rstd) * g + b).reshape(x.shape)


def cat(*parts, q):
    parts = [p if t is None else t[p.astype(np.int64) + 128] for p, t in zip(parts, q["tables"])]
    return np.concatenate(parts, axis=q["axis"])


OPS = {"conv": conv, "depthwise": depthwise, "linear": linear, "lut": lut,
       "max_pool": lambda x, q: max_pool(x, q["kernel"], q["stride"], q["padding"], dilation=q["dilation"],
                                         ceil_mode=q["ceil_mode"]),
       "reshape": lambda x, q: x.reshape(q["shape"]),
       "mul_scalar": lambda x, q: x,          # the same int8 values at a multiple of the scale
       "permute": lambda x, q: np.ascontiguousarray(x.transpose(q["perm"])),
       "constant": lambda q: q["value"],
       "strided_copy": lambda x, q: np.ascontiguousarray(viewed(x, (q["shape"], q["strides"], q["offset"]))),
       "embedding": lambda ids, q: q["table"][ids.astype(np.int64)],
       "avg_pool": avg_pool, "adaptive_avg_pool": adaptive_avg_pool, "softmax": softmax, "layernorm": layernorm}
BINARY = {"add": add, "matmul": matmul, "mul_channel": mul_channel}


def run(graph, x) -> dict:
    """{tensor name: int8 value} of every tensor of the quantised graph on the int8 input x (stored
    layout: NHWC for an image), or on token ids (an embedding's rows are table[ids])."""
    t = graph.tensors[graph.input]
    values = {graph.input: np.asarray(x, dtype=t.dtype)}
    for op in graph.ops:
        args = [values[t] for t in op.inputs]
        if op.kind in OPS:
            values[op.output] = OPS[op.kind](*args, op.q)
        elif op.kind in BINARY:
            values[op.output] = BINARY[op.kind](*args, op.q)
        elif op.kind == "cat":
            values[op.output] = cat(*args, q=op.q)
        else:
            raise NotImplementedError(f"the reference has no {op.kind} operator ({op.source})")
        expected = graph.tensors[op.output].shape
        if values[op.output].shape != tuple(expected):
            raise AssertionError(f"{op.kind} at {op.source}: reference shape {values[op.output].shape}, "
                                 f"graph shape {expected}")
    return values


__all__ = ["run", "requantize"]
