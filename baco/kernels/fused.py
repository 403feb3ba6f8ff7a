"""Fused programs of the whole-model compiler (baco.model.lower runs a design's fused edges with
them), each ONE @baco.jit block kernel whose intermediate never leaves the chip, bit-exact with
the layers run one after the other. f(v) = int8(relu?(v · scale)) is Gemmini's accumulator read;
the execute unit applies it when a dot reads an accumulator block (config_ex's scale and ReLU,
rounded half to even and saturated to int8: exactly the arithmetic of an mvout).

- gemm_chain_kernel: Y = f2(f1(X·W1 + b1)·W2 + b2). The hidden int32 block stays in the
  accumulator (starting from the bias rows) and the second dot reads it as f1's int8. Linear ->
  [ReLU] -> linear chains and 1x1 stride-1 convolution pairs (a GEMM over the image's pixels).
- gemm_resadd_kernel: Y = g(f(X·W + b)·sa + R·sr), a GEMM layer and the residual add reading its
  output (baco.kernels.resadd's arithmetic: each int8 operand times its scale, rounded and
  saturated to int8, summed in int32, then g). The layer's int8 output A = f(acc) is multiplied
  by an identity into a second accumulator block (exact: A itself, in int32), which a dot reads
  as int8(A·sa) (the accumulator read's scale, the same rounding as the mvin scale) onto the
  residual, loaded with its mvin scale into a third block; g on the way out.
Both are explicit command streams (their K loops double-buffered where the second homes fit), not
LOOP_WS, but for the chain on a Gemmini with master's ext-spad commands (GemminiConfig.mvout_spad),
whose programs the compiler runs as LOOP_WSs over each layer's tiles, H kept in the scratchpad
(baco.passes.chain_loop_ws; gemm_chain_launch picks its blocks). Without them: LoopMatmul
computes into one of two accumulator halves that rotates after each loop storing C
(LoopMatmul.scala's ex_c_addr_start), a state of the program's history no command reads, so an
epilogue after a LOOP_WS that keeps its sums could not name their rows; and LOOP_WS's
D operand cannot carry the residual exactly (resadd's arithmetic rounds three times, a store once).
What one program holds: baco.gemmini.fused."""
from __future__ import annotations

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.config import as_config
from baco.gemmini.fused import (CHAIN_DEFAULT_BLOCKS, gemm_chain_blocks, gemm_chain_double_buffered,
                                gemm_chain_footprint, gemm_chain_loop_ws_blocks, gemm_resadd_default_blocks,
                                gemm_resadd_double_buffered, gemm_resadd_footprint)
from baco.gemmini.schedule import GemmSchedule, capacity_problems, padded_rows
from baco.kernels.arguments import bias_vector, exact_array, real_scalar
from baco.kernels.launch import KernelLaunch
from baco.kernels.matmul import resolve_schedule


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes and grid (index arithmetic folds)
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


def _whole_row_blocks(w, rows, dim):
    """`w`'s first `rows` rows with zero rows up to padded_rows(rows, DIM) (`w` itself if it has them)."""
    if w.shape[0] == padded_rows(rows, dim):
        return w
    padded = np.zeros((padded_rows(rows, dim), w.shape[1]), w.dtype)
    padded[:rows] = w[:rows]
    return padded


def gemm_chain_launch(x, w1, b1, w2, b2, *, scale1, scale2, relu1=False, relu2=False,
                      block_m=CHAIN_DEFAULT_BLOCKS[0], block_k=CHAIN_DEFAULT_BLOCKS[1], config=None, y=None
                      ) -> KernelLaunch:
    """The prepared launch of Y = f2(f1(X·W1 + b1)·W2 + b2) (int8 X (M, K), W1 (K, H), W2 (H, N),
    int32 biases b1 (H,), b2 (N,)) as one program per block_m rows of X. block_m and block_k (the
    producer's schedule) are halved where one program would not fit `config`; a chain that does
    not fit with DIM x DIM blocks is a ValueError naming the widths. The K loop's blocks are
    double-buffered where their second homes fit (gemm_chain_double_buffered). W1 and W2 may hold
    up to padded_rows(K or H, DIM) rows (zero rows past K / H; baco.model's weights). On a Gemmini
    with the ext-spad commands (config.mvout_spad) where the chain on the loop unit fits
    (gemm_chain_loop_ws_blocks), the blocks are its row block and X's whole K, and the compiler
    (baco.passes.chain_loop_ws) runs each program as LOOP_WSs, H kept in the scratchpad; the
    producer's blocks are then not used. `y`: the int8 (M, N) output array (C-contiguous), else a
    new one."""
    config = as_config(config)
    x, w1, w2 = (exact_array(v, n, np.int8, 2) for v, n in ((x, "x"), (w1, "w1"), (w2, "w2")))
    M, K = x.shape
    H = w1.shape[1]
    for w, name, rows, of in ((w1, "w1", K, f"K = {K} rows (x is {x.shape})"),
                              (w2, "w2", H, f"H = {H} rows (w1 is {w1.shape})")):
        if not rows <= w.shape[0] <= padded_rows(rows, config.dim):
            raise ValueError(f"{name} must have {of}, or up to {padded_rows(rows, config.dim)} (padded to whole "
                             f"DIM blocks), got shape {w.shape}")
    N = w2.shape[1]
    b1 = bias_vector(np.zeros(H, np.int32) if b1 is None else b1, H, "b1")
    b2 = bias_vector(np.zeros(N, np.int32) if b2 is None else b2, N, "b2")
    for name, v in (("relu1", relu1), ("relu2", relu2)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(v).__name__} {v!r}")
    up = lambda v: padded_rows(v, config.dim)  # noqa: E731
    # with Gemmini master's ext-spad commands, the row blocks of the chain on the loop unit and X's
    # whole K a block: the compiler's chain-loop-ws then runs each program as LOOP_WSs, whose
    # FSM moves W1's and W2's blocks with DIM rows each (so they are padded to whole blocks here)
    loop_blocks = gemm_chain_loop_ws_blocks(M, K, H, N, config) if config.mvout_spad else None
    if loop_blocks is not None:
        block_m, block_k = loop_blocks.block_m, up(K)
        w1, w2 = _whole_row_blocks(w1, K, config.dim), _whole_row_blocks(w2, H, config.dim)
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
    args = [x, w1, y, w2, b1, b2, M, K, H, N, real_scalar(scale1, "scale1"), real_scalar(scale2, "scale2")]
    return KernelLaunch(gemm_chain_kernel, (bl.cdiv(M, bm), 1), args,
                        dict(BLOCK_M=bm, BLOCK_K=bk, BLOCK_H=up(H), BLOCK_N=up(N), RELU1=bool(relu1),
                             RELU2=bool(relu2), double_buffer=loop_blocks is None and
                             gemm_chain_double_buffered(bm, bk, H, N, config)),
                        y, config)




@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes and grid (index arithmetic folds)
def gemm_resadd_kernel(x_ptr, w_ptr, y_ptr, r_ptr, bias_ptr, eye_ptr, M, K, N, scale, sa, sr, out_scale,
                       BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr,
                       RELU1: bl.constexpr, RELU2: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    x_blk = bl.make_block_ptr(x_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    w_blk = bl.make_block_ptr(w_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BLOCK_N),
                              block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    bias_blk = bl.make_block_ptr(bias_ptr, shape=(M, N), strides=(0, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                                 block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    acc = bl.load(bias_blk, boundary_check=(0, 1))
    for k in range(0, bl.cdiv(K, BLOCK_K)):
        acc += bl.dot(bl.load(x_blk, boundary_check=(0, 1)), bl.load(w_blk, boundary_check=(0, 1)))
        x_blk = bl.advance(x_blk, (0, BLOCK_K))
        w_blk = bl.advance(w_blk, (BLOCK_K, 0))
    a = acc * scale
    if RELU1:
        a = bl.relu(a)
    eye_blk = bl.make_block_ptr(eye_ptr, shape=(BLOCK_N, BLOCK_N), strides=(BLOCK_N, 1), offsets=(0, 0),
                                block_shape=(BLOCK_N, BLOCK_N), order=(1, 0))
    eye = bl.load(eye_blk)
    exact = bl.zeros((BLOCK_M, BLOCK_N), dtype=bl.int32)
    exact += bl.dot(a.to(bl.int8), eye)          # the layer's int8 output, back in the accumulator
    r_blk = bl.make_block_ptr(r_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    total = bl.load(r_blk, boundary_check=(0, 1)) * sr + bl.zeros((BLOCK_M, BLOCK_N), dtype=bl.int32)
    total += bl.dot((exact * sa).to(bl.int8), eye)   # its mvin scale, as the add's operand
    y = total * out_scale
    if RELU2:
        y = bl.relu(y)
    y_blk = bl.make_block_ptr(y_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    bl.store(y_blk, y.to(bl.int8), boundary_check=(0, 1))


def gemm_resadd_launch(x, w, bias, residual, *, scale, relu, a_scale, r_scale, out_scale, relu_out,
                       schedule: GemmSchedule | None = None, config=None) -> KernelLaunch:
    """The prepared launch of Y = g(f(X·W + b)·a_scale + R·r_scale) (int8 X (M, K), W (K, N), R
    (M, N), int32 bias (N,); f: scale, relu; g: out_scale, relu_out) under the GEMM layer's
    schedule (its block_m, block_n, block_k; the GEMM kernel's default for the shape without one).
    A schedule whose program does not fit `config` is a ValueError naming its blocks; the K loop's
    blocks are double-buffered where their second homes fit (gemm_resadd_double_buffered)."""
    config = as_config(config)
    x, w, residual = (exact_array(v, n, np.int8, 2) for v, n in ((x, "x"), (w, "w"), (residual, "residual")))
    M, K = x.shape
    if w.shape[0] != K:
        raise ValueError(f"w must have K = {K} rows (x is {x.shape}), got shape {w.shape}")
    N = w.shape[1]
    if residual.shape != (M, N):
        raise ValueError(f"residual must have the output's shape {(M, N)}, got {residual.shape}")
    bias = bias_vector(np.zeros(N, np.int32) if bias is None else bias, N)
    for name, v in (("relu", relu), ("relu_out", relu_out)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(v).__name__} {v!r}")
    s = resolve_schedule(schedule) if schedule is not None else \
        GemmSchedule(*gemm_resadd_default_blocks(M, N, K, config))
    f = gemm_resadd_footprint(s.block_m, s.block_n, s.block_k, config.dim)
    problems = capacity_problems(config, f.sp_rows, f.acc_rows, f"X {s.block_m}x{s.block_k}, W {s.block_k}x"
                                 f"{s.block_n}, identity {s.block_n}x{s.block_n} twice", f"3 blocks {s.block_m}x{s.block_n}")
    if problems:
        raise ValueError(f"schedule {s.to_dict()} with its residual add: " + "; ".join(problems))
    y = np.zeros((M, N), np.int8)
    eye = np.eye(s.block_n, dtype=np.int8)
    args = [x, w, y, residual, bias, eye, M, K, N] + [real_scalar(v, n) for v, n in (
        (scale, "scale"), (a_scale, "a_scale"), (r_scale, "r_scale"), (out_scale, "out_scale"))]
    return KernelLaunch(gemm_resadd_kernel, (bl.cdiv(M, s.block_m), bl.cdiv(N, s.block_n)), args,
                        dict(BLOCK_M=s.block_m, BLOCK_N=s.block_n, BLOCK_K=s.block_k, RELU1=bool(relu),
                             RELU2=bool(relu_out),
                             double_buffer=gemm_resadd_double_buffered(s.block_m, s.block_n, s.block_k, config)),
                        y, config)


__all__ = ["gemm_chain_kernel", "gemm_chain_launch", "gemm_resadd_kernel", "gemm_resadd_launch"]
