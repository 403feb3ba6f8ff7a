"""Gemmini arithmetic (numpy, vectorised): the rounding, scaling and
saturation rules of gemmini-isa.md §3.3–3.5, and the reference result of a
matmul as Gemmini computes it and of its pooled mvout."""
from __future__ import annotations

import numpy as np


def saturate(x, bits: int):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.clip(np.asarray(x, dtype=np.int64), lo, hi)


def rounding_right_shift(x, shift: int):
    """RTL `>>` on accumulators: round to nearest, ties to even."""
    x = np.asarray(x, dtype=np.int64)
    if shift <= 0:
        return x
    shifted = x >> shift
    round_bit = (x >> (shift - 1)) & 1
    sticky = (x & ((1 << (shift - 1)) - 1)) != 0
    return shifted + (round_bit & (sticky | (shifted & 1)).astype(np.int64))


def f32_bits(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(np.uint32))


def bits_f32(u: int) -> float:
    return float(np.array(u & 0xFFFFFFFF, dtype=np.uint32).view(np.float32))


def scale_to_int(x, scale, bits: int = 32):
    """x → float32 (RNE), × float32 scale (RNE), → integer (RNE), saturated to `bits`."""
    xf = np.asarray(x, dtype=np.int64).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):     # 0 * inf is NaN, as in the RTL
        y = (xf * np.float32(scale)).astype(np.float32)
    y = np.rint(y.astype(np.float64))            # rint is round-half-even
    y = np.nan_to_num(y, nan=0.0, posinf=2.0 ** 62, neginf=-(2.0 ** 62))
    return saturate(y.astype(np.int64), bits)


def acc_to_int8(x, scale: float = 1.0, relu: bool = False):
    """Accumulator mvout path in RTL order: activation, scale (RNE), saturate to int8."""
    x = np.asarray(x, dtype=np.int64)
    if relu:
        x = np.maximum(x, 0)
    return saturate(scale_to_int(x, scale, 32), 8).astype(np.int8)


def max_pool(pixels, orows: int, ocols: int, size: int, stride: int, upad: int = 0, lpad: int = 0,
             porows: int | None = None, pocols: int | None = None):
    """Gemmini's pooled mvout (gemmini-isa.md §3.4; G:`StoreController.scala`, libgemmini
    `mvout`): `pixels` is an orows x ocols image, row-major, one pixel (its channels) per row,
    already through the mvout path (ReLU, scale, RNE, saturation). Pooled pixel (pr, pc) is
    the max over the size x size window at image rows pr*stride - upad + [0, size) and
    columns pc*stride - lpad + [0, size); window positions outside the image count as 0
    (so padding is 0, not -inf). Returns porows*pocols pooled pixels, row-major; porows and
    pocols default to what symmetric padding gives, (orows + 2*upad - size)//stride + 1."""
    pixels = np.asarray(pixels)
    channels = pixels.shape[1]
    porows = (orows + 2 * upad - size) // stride + 1 if porows is None else porows
    pocols = (ocols + 2 * lpad - size) // stride + 1 if pocols is None else pocols
    img = np.zeros((max(orows, 1), max(ocols, 1), channels), dtype=np.int64)
    img[:orows, :ocols] = pixels[:orows * ocols].astype(np.int64).reshape(orows, ocols, channels)
    r = np.arange(porows)[:, None] * stride - upad
    c = np.arange(pocols)[None, :] * stride - lpad
    out = np.full((porows, pocols, channels), np.iinfo(np.int64).min, dtype=np.int64)
    for wr in range(size):
        for wc in range(size):
            rr, cc = np.broadcast_arrays(r + wr, c + wc)
            inside = (rr >= 0) & (rr < orows) & (cc >= 0) & (cc < ocols)
            v = np.where(inside[..., None], img[np.clip(rr, 0, img.shape[0] - 1), np.clip(cc, 0, img.shape[1] - 1)], 0)
            out = np.maximum(out, v)
    return out.reshape(porows * pocols, channels).astype(pixels.dtype)


def pooled_size(size: int, kernel: int, stride: int, padding: int) -> int:
    """Pooled pixels along one dimension of `size` pixels with `padding` zeros on each side."""
    return (size + 2 * padding - kernel) // stride + 1


def pool_field_problems(rows: int, cols: int, kernel: int, stride: int, upad: int, lpad: int) -> list[str]:
    """Why config_st cannot pool a rows x cols image with kernel x kernel windows, `stride` and
    (upad, lpad) padding (max_pool's symmetric-padding output): one message per field that
    cannot hold its value (the field widths of baco.gemmini.isa's config_st); [] if it can."""
    from baco.gemmini.isa import COMMANDS
    st = COMMANDS["config_st"]
    porows, pocols = (pooled_size(rows, kernel, stride, upad), pooled_size(cols, kernel, stride, lpad)) \
        if stride > 0 else (1, 1)
    checks = [("pool_size", kernel, 1, "kernel"), ("pool_stride", stride, 1, "stride"),
              ("upad", upad, 0, "padding (rows)"), ("lpad", lpad, 0, "padding (columns)"),
              ("orows", rows, 1, "image rows"), ("ocols", cols, 1, "image columns"),
              ("porows", porows, 1, "pooled rows"), ("pocols", pocols, 1, "pooled columns")]
    return [f"{what} {value} is outside {lo}..{st.field(name).mask} (config_st's {st.field(name).width}-bit "
            f"{name} field)" for name, value, lo, what in checks if not lo <= value <= st.field(name).mask]


def reference_matmul(A, B, D=None, *, scale: float = 1.0, relu: bool = False, out: str = "int32",
                     os_k_block: int | None = None, spatial_bits: int = 20):
    """What Gemmini computes for C = A·B (+ D).

    int8 operands, int32 accumulation. With `os_k_block`, the K reduction is
    done in the array in chunks of that many columns (output-stationary
    dataflow): each chunk's sum is saturated to the array's `spatial_bits`
    output type before it is added into the accumulator. `out="int8"` applies
    the accumulator read path (ReLU, scale, round-half-even, saturation).
    """
    A = np.asarray(A, dtype=np.int64)
    B = np.asarray(B, dtype=np.int64)
    if os_k_block:
        acc = np.zeros((A.shape[0], B.shape[1]), dtype=np.int64)
        for k0 in range(0, A.shape[1], os_k_block):
            part = A[:, k0:k0 + os_k_block] @ B[k0:k0 + os_k_block]
            acc += saturate(part, spatial_bits)
    else:
        acc = A @ B
    if D is not None:
        acc = acc + np.asarray(D, dtype=np.int64)
    acc = saturate(acc, 32)
    if out == "int32":
        return acc.astype(np.int32)
    if out == "int8":
        return acc_to_int8(acc, scale, relu)
    raise ValueError(f"out must be int32 or int8, not {out!r}")
