"""Gemmini arithmetic (numpy, vectorised): the rounding, scaling and
saturation rules of gemmini-isa.md §3.3–3.5, and the reference result of a
matmul as Gemmini computes it."""
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
