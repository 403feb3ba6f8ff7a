"""Fused GEMM chains: Y = f2(f1(X·W1 + b1)·W2 + b2) as ONE @baco.jit block kernel, where
fi(v) = int8(relu?(v · scale_i)) is Gemmini's accumulator read. The hidden layer never leaves the
chip: its int32 block stays in the accumulator (starting from the bias rows), and the second dot
reads it through the execute unit's accumulator read path (config_ex's scale and ReLU, rounded
half to even and saturated to int8, exactly the arithmetic of an mvout), so the fused program is
bit-exact with the two layers run one after the other. Linear -> [ReLU] -> linear chains and 1x1
stride-1 convolution pairs (a GEMM over the image's pixels) run it; what one program holds is
baco.gemmini.fused.gemm_chain_footprint (H and N whole, one block each)."""
from __future__ import annotations

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.config import as_config
from baco.gemmini.fused import gemm_chain_blocks, gemm_chain_footprint
from baco.gemmini.schedule import capacity_problems
from baco.kernels.arguments import bias_vector, exact_array, real_scalar
from baco.kernels.launch import KernelLaunch


@jit
def gemm_chain_kernel(x_ptr, w1_ptr, y_ptr, w2_ptr, b1_ptr, b2_ptr, M, K, H, N, scale1, scale2,
                      BLOCK_M: bl.constexpr, BLOCK_K: bl.constexpr, BLOCK_H: bl.constexpr,
                      BLOCK_N: bl.constexpr, RELU1: bl.constexpr, RELU2: bl.constexpr):
    pid_m = bl.program_id(0)
    x_blk = bl.make_block_ptr(x_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    w1_blk = bl.make_block_ptr(w1_ptr, shape=(K, H), strides=(H, 1), offsets=(0, 0),
                               block_shape=(BLOCK_K, BLOCK_H), order=(1, 0))
    b1_blk = bl.make_block_ptr(b1_ptr, shape=(M, H), strides=(0, 1), offsets=(pid_m * BLOCK_M, 0),
                               block_shape=(BLOCK_M, BLOCK_H), order=(1, 0))
    hidden = bl.load(b1_blk, boundary_check=(0, 1))       # stride 0: every row is the bias row
    for k in range(0, bl.cdiv(K, BLOCK_K)):
        hidden += bl.dot(bl.load(x_blk, boundary_check=(0, 1)), bl.load(w1_blk, boundary_check=(0, 1)))
        x_blk = bl.advance(x_blk, (0, BLOCK_K))
        w1_blk = bl.advance(w1_blk, (BLOCK_K, 0))
    h = hidden * scale1
    if RELU1:
        h = bl.relu(h)
    w2_blk = bl.make_block_ptr(w2_ptr, shape=(H, N), strides=(N, 1), offsets=(0, 0),
                               block_shape=(BLOCK_H, BLOCK_N), order=(1, 0))
    b2_blk = bl.make_block_ptr(b2_ptr, shape=(M, N), strides=(0, 1), offsets=(pid_m * BLOCK_M, 0),
                               block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    out = bl.load(b2_blk, boundary_check=(0, 1))
    out += bl.dot(h.to(bl.int8), bl.load(w2_blk, boundary_check=(0, 1)))   # h read from the accumulator
    y = out * scale2
    if RELU2:
        y = bl.relu(y)
    y_blk = bl.make_block_ptr(y_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    bl.store(y_blk, y.to(bl.int8), boundary_check=(0, 1))


def gemm_chain_launch(x, w1, b1, w2, b2, *, scale1, scale2, relu1=False, relu2=False, block_m=32, block_k=64,
                      config=None, y=None) -> KernelLaunch:
    """The prepared launch of Y = f2(f1(X·W1 + b1)·W2 + b2) (int8 X (M, K), W1 (K, H), W2 (H, N),
    int32 biases b1 (H,), b2 (N,)) as one program per block_m rows of X. block_m and block_k (the
    producer's schedule) are halved where one program would not fit `config`; a chain that does
    not fit with DIM x DIM blocks is a ValueError naming the widths. `y`: the int8 (M, N) output
    array (C-contiguous), else a new one."""
    config = as_config(config)
    x, w1, w2 = (exact_array(v, n, np.int8, 2) for v, n in ((x, "x"), (w1, "w1"), (w2, "w2")))
    M, K = x.shape
    if w1.shape[0] != K:
        raise ValueError(f"w1 must have K = {K} rows (x is {x.shape}), got shape {w1.shape}")
    H = w1.shape[1]
    if w2.shape[0] != H:
        raise ValueError(f"w2 must have H = {H} rows (w1 is {w1.shape}), got shape {w2.shape}")
    N = w2.shape[1]
    b1 = bias_vector(np.zeros(H, np.int32) if b1 is None else b1, H, "b1")
    b2 = bias_vector(np.zeros(N, np.int32) if b2 is None else b2, N, "b2")
    for name, v in (("relu1", relu1), ("relu2", relu2)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(v).__name__} {v!r}")
    blocks = gemm_chain_blocks(M, K, H, N, block_m, block_k, config)
    if blocks is None:
        f = gemm_chain_footprint(config.dim, config.dim, H, N, config.dim)
        raise ValueError(f"a fused chain of widths H={H}, N={N} does not fit on chip: " + "; ".join(
            capacity_problems(config, f.sp_rows, f.acc_rows, f"W2 {H}x{N}", f"hidden {config.dim}x{H} + out")))
    bm, bk = blocks
    if y is None:
        y = np.zeros((M, N), np.int8)
    elif not (isinstance(y, np.ndarray) and y.dtype == np.int8 and y.shape == (M, N) and y.flags.c_contiguous):
        raise ValueError(f"y must be a C-contiguous int8 array of shape {(M, N)}, got "
                         f"{getattr(y, 'dtype', type(y).__name__)} {getattr(y, 'shape', '')}")
    up = lambda v: -(-v // config.dim) * config.dim  # noqa: E731
    args = [x, w1, y, w2, b1, b2, M, K, H, N, real_scalar(scale1, "scale1"), real_scalar(scale2, "scale2")]
    return KernelLaunch(gemm_chain_kernel, (bl.cdiv(M, bm), 1), args,
                        dict(BLOCK_M=bm, BLOCK_K=bk, BLOCK_H=up(H), BLOCK_N=up(N), RELU1=bool(relu1),
                             RELU2=bool(relu2)), y, config)


__all__ = ["gemm_chain_kernel", "gemm_chain_launch"]
