"""A depthwise -> pointwise pair (MobileNet's block) as ONE @baco.jit block kernel whose
depthwise output never leaves the chip, bit-exact with the two layers run one after the other:

  Y = f2(f1(dw(X) + b1) · Wp + b2)      f(v) = int8(relu?(v · scale)), Gemmini's accumulator read

One program computes ROWS output rows (or BLOCK_M output columns of one row) of image n for
BLOCK_N output channels. For each block of B = DIM input channels it runs the depthwise
convolution of baco.kernels.depthwise (the block's input times each tap's diagonal B x B weight
tile, into an int32 accumulator block started from the depthwise bias), then the pointwise
product reads that block back through the execute unit's scaled, ReLU'd accumulator read (the
depthwise layer's own output arithmetic: scale rounded half to even, saturated to int8, exactly
an mvout's) as its A operand against the block's B rows of Wp, accumulating onto the output block
(started from the pointwise bias). Only the output's tiles are moved out. A program of BLOCK_N <
K output channels recomputes its pixels' depthwise blocks per channel block of the output.

An explicit command stream (no LOOP_CONV_WS / LOOP_WS: the loop units' accumulator half rotates
with their own history, baco.kernels.fused). What one program holds and the blocks the launch
takes: baco.gemmini.fused (dw_pw_footprint, dw_pw_blocks). Layouts: x (N,H,W,C), w_dw (R,S,C),
w_pw (C,K), y (N,P,Q,K), all NHWC.
"""
from __future__ import annotations

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.arith import acc_to_int8, saturate
from baco.gemmini.config import as_config
from baco.gemmini.fused import DwPwBlocks, dw_pw_blocks, dw_pw_footprint
from baco.gemmini.schedule import capacity_problems
from baco.kernels.arguments import bias_vector, exact_array, real_scalar
from baco.kernels.conv import _check, bias_rows_ptr, output_rows_ptr
from baco.kernels.depthwise import channel_block_input_ptr, depthwise_weight_blocks, diagonal_tile_ptr
from baco.kernels.launch import KernelLaunch


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes and grid (index arithmetic, tap bounds fold)
def dw_pw_kernel(x_ptr, wd_ptr, y_ptr, wp_ptr, bd_ptr, bp_ptr, H, W, C, P, Q, K, pad_h, pad_w, scale1, scale2,
                 R: bl.constexpr, S: bl.constexpr, STRIDE_H: bl.constexpr, STRIDE_W: bl.constexpr,
                 DIL_H: bl.constexpr, DIL_W: bl.constexpr, BLOCK_M: bl.constexpr, BLOCK_C: bl.constexpr,
                 BLOCK_N: bl.constexpr, RELU1: bl.constexpr, RELU2: bl.constexpr, ROWS: bl.constexpr = 1,
                 WHOLE_C: bl.constexpr = False, WHOLE_K: bl.constexpr = False):
    groups = bl.cdiv(P, ROWS)              # programs per image along P
    n = bl.program_id(0) // groups
    p0 = bl.program_id(0) % groups * ROWS  # the program's first output row
    q0 = bl.program_id(1) * BLOCK_M
    k0 = bl.program_id(2) * BLOCK_N        # its first output channel
    h0 = p0 * STRIDE_H - pad_h             # input row of output row p0, filter row 0
    w0 = q0 * STRIDE_W - pad_w             # input column of output column q0, filter column 0
    r_lo = max(0, bl.cdiv(-h0 - (ROWS - 1) * STRIDE_H, DIL_H))     # taps reaching the image from some row
    r_hi = min(R, bl.cdiv(H - h0, DIL_H))
    # the channel dimensions of whole blocks (WHOLE_C: C a multiple of BLOCK_C, WHOLE_K: K of BLOCK_N) go unchecked
    c_check = () if WHOLE_C else (1,)
    k_check = () if WHOLE_K else (1,)
    x_check = ((0,) if ROWS == 1 else (0, 1)) + (() if WHOLE_C else ((1,) if ROWS == 1 else (2,)))
    out = bl.load(bias_rows_ptr(bp_ptr, Q, K, q0, k0, ROWS, BLOCK_M, BLOCK_N), boundary_check=(0,) + k_check)
    for cb in range(0, bl.cdiv(C, BLOCK_C)):
        c0 = cb * BLOCK_C
        cw = BLOCK_C if WHOLE_C else min(BLOCK_C, C - c0)     # the block's channels
        # the depthwise block, from its bias
        hidden = bl.load(bias_rows_ptr(bd_ptr + c0, Q, cw, q0, 0, ROWS, BLOCK_M, BLOCK_C),
                         boundary_check=(0,) + c_check)
        for r in range(r_lo, r_hi):
            for s in range(0, S):
                w = w0 + s * DIL_W             # input column of the block's first output pixel
                x_blk = channel_block_input_ptr(x_ptr, c0, cw, n, h0, r, w, H, W, C, STRIDE_H, STRIDE_W, DIL_H, ROWS,
                                                BLOCK_M, BLOCK_C)
                w_blk = diagonal_tile_ptr(wd_ptr, c0, cw, r * S + s, R, S, BLOCK_C, BLOCK_C)
                a = bl.load(x_blk, boundary_check=x_check)
                hidden += bl.dot(a, bl.load(w_blk, boundary_check=() if WHOLE_C else (0, 1)))
        h8 = hidden * scale1
        if RELU1:
            h8 = bl.relu(h8)
        wp_blk = bl.make_block_ptr(wp_ptr, shape=(C, K), strides=(K, 1), offsets=(c0, k0),
                                   block_shape=(BLOCK_C, BLOCK_N))
        wp = bl.load(wp_blk, boundary_check=(() if WHOLE_C else (0,)) + k_check)
        out += bl.dot(h8.to(bl.int8), wp)   # read from the accumulator
    y = out * scale2
    if RELU2:
        y = bl.relu(y)
    bl.store(output_rows_ptr(y_ptr, n, p0, q0, k0, P, Q, K, K, ROWS, BLOCK_M, BLOCK_N), y.to(bl.int8),
             boundary_check=(0,) + k_check)


def _flag(v, name):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def dw_pw_launch(x, w_dw, b_dw, w_pw, b_pw, *, stride=1, padding=0, dilation=1, scale1, scale2, relu1=False,
                 relu2=False, blocks: DwPwBlocks | None = None, config=None, y=None) -> KernelLaunch:
    """The prepared launch of Y = f2(f1(depthwise(X, w_dw) + b_dw) · w_pw + b_pw) (int8 x (N,H,W,C),
    w_dw (R,S,C), w_pw (C,K) or (1,1,C,K); int32 biases b_dw (C,), b_pw (K,), None for zeros;
    f: scale, ReLU; stride, padding, dilation the depthwise layer's). `blocks`: the program's
    (block_m, rows, block_n) (a DwPwBlocks), else dw_pw_blocks' choice on `config`; blocks whose
    program does not fit, or a pair no program fits, are a ValueError naming them. `y`: the int8
    (N,P,Q,K) output array (C-contiguous), else a new one."""
    config = as_config(config)
    x = exact_array(x, "x", np.int8, 4)
    w_dw = exact_array(w_dw, "w_dw", np.int8, 3)
    w_pw = exact_array(w_pw, "w_pw", np.int8, (2, 4))
    if w_pw.ndim == 4:
        if w_pw.shape[:2] != (1, 1):
            raise ValueError(f"w_pw must be a 1x1 filter (1, 1, C, K) or (C, K), got shape {w_pw.shape}")
        w_pw = w_pw.reshape(w_pw.shape[2:])
    (stride, padding, dilation), P, Q = _check(x, w_dw, stride, padding, dilation, "int8", False, depthwise=True)
    N, H, W, C = x.shape
    if w_pw.shape[0] != C:
        raise ValueError(f"w_pw must have C = {C} rows (x has {C} channels), got shape {w_pw.shape}")
    K = w_pw.shape[1]
    b_dw = bias_vector(np.zeros(C, np.int32) if b_dw is None else b_dw, C, "b_dw")
    b_pw = bias_vector(np.zeros(K, np.int32) if b_pw is None else b_pw, K, "b_pw")
    relu1, relu2 = _flag(relu1, "relu1"), _flag(relu2, "relu2")
    if blocks is None:
        R, S = w_dw.shape[:2]
        blocks = dw_pw_blocks(N, H, P, Q, C, K, R, S, stride[0], padding[0], dilation[0], config)
        if blocks is None:
            f = dw_pw_footprint(1, config.dim, config.dim)
            raise ValueError("a fused depthwise -> pointwise program of one output pixel and DIM output channels "
                             "does not fit on chip: " + "; ".join(capacity_problems(config, f.sp_rows, f.acc_rows)))
    else:
        if not isinstance(blocks, DwPwBlocks):
            raise TypeError(f"blocks must be a DwPwBlocks, got {type(blocks).__name__}")
        bad = [f"{k}={v!r} must be a positive integer" for k, v in blocks._asdict().items()
               if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1]
        if not bad and blocks.rows > 1 and blocks.block_m != Q:
            bad.append(f"rows={blocks.rows} output rows per program need whole rows: block_m = Q = {Q}")
        if not bad:
            f = dw_pw_footprint(blocks.rows * blocks.block_m, blocks.block_n, config.dim)
            bad = capacity_problems(config, f.sp_rows, f.acc_rows,
                                    f"input {blocks.rows * blocks.block_m}x{config.dim}, diagonal tile, "
                                    f"w_pw {config.dim}x{blocks.block_n}",
                                    f"depthwise {blocks.rows * blocks.block_m}x{config.dim} + output "
                                    f"{blocks.rows * blocks.block_m}x{blocks.block_n}")
        if bad:
            raise ValueError(f"blocks {tuple(blocks)}: " + "; ".join(bad))
    if y is None:
        y = np.zeros((N, P, Q, K), np.int8)
    elif not (isinstance(y, np.ndarray) and y.dtype == np.int8 and y.shape == (N, P, Q, K) and y.flags.c_contiguous):
        raise ValueError(f"y must be a C-contiguous int8 array of shape {(N, P, Q, K)}, got "
                         f"{getattr(y, 'dtype', type(y).__name__)} {getattr(y, 'shape', '')}")
    R, S = w_dw.shape[:2]
    args = [x, depthwise_weight_blocks(w_dw, config.dim), y, w_pw, b_dw, b_pw, H, W, C, P, Q, K, *padding,
            real_scalar(scale1, "scale1"), real_scalar(scale2, "scale2")]
    grid = (N * bl.cdiv(P, blocks.rows), bl.cdiv(Q, blocks.block_m), bl.cdiv(K, blocks.block_n))
    return KernelLaunch(dw_pw_kernel, grid, args,
                        dict(R=R, S=S, STRIDE_H=stride[0], STRIDE_W=stride[1], DIL_H=dilation[0], DIL_W=dilation[1],
                             BLOCK_M=blocks.block_m, BLOCK_C=config.dim, BLOCK_N=blocks.block_n, RELU1=relu1,
                             RELU2=relu2, ROWS=blocks.rows, WHOLE_C=C % config.dim == 0,
                             WHOLE_K=K % blocks.block_n == 0), y, config)


def dw_pw(x, w_dw, b_dw, w_pw, b_pw, *, target="sim", **kw):
    """The fused pair on Gemmini (dw_pw_launch's arguments): (y, launch info)."""
    launch = dw_pw_launch(x, w_dw, b_dw, w_pw, b_pw, **kw)
    return launch.y, launch.run(target)


def reference_dw_pw(x, w_dw, b_dw, w_pw, b_pw, *, stride=1, padding=0, dilation=1, scale1, scale2, relu1=False,
                    relu2=False):
    """The pair in Gemmini's arithmetic, computed independently of the kernels (torch's grouped
    convolution and matmul in float64, exact for these integer sums): int8 inputs, int32 sums
    saturated, ReLU, the float32 scale rounded half to even, int8 saturation, per layer."""
    import torch
    x, w_dw, w_pw = (np.asarray(v) for v in (x, w_dw, w_pw))
    w_pw = w_pw.reshape(w_pw.shape[-2:])
    C, K = w_pw.shape
    b_dw = np.zeros(C) if b_dw is None else np.asarray(b_dw)
    b_pw = np.zeros(K) if b_pw is None else np.asarray(b_pw)
    xt = torch.from_numpy(x.astype(np.float64)).permute(0, 3, 1, 2)
    wt = torch.from_numpy(w_dw.astype(np.float64)).permute(2, 0, 1).unsqueeze(1)      # (C, 1, R, S)
    dw = torch.nn.functional.conv2d(xt, wt, torch.from_numpy(b_dw.astype(np.float64)), stride=stride,
                                    padding=padding, dilation=dilation, groups=C)
    h = acc_to_int8(saturate(dw.permute(0, 2, 3, 1).numpy().astype(np.int64), 32), scale1, relu1)
    pw = torch.from_numpy(h.astype(np.float64)) @ torch.from_numpy(w_pw.astype(np.float64))
    return acc_to_int8(saturate(pw.numpy().astype(np.int64) + b_pw.astype(np.int64), 32), scale2, relu2)


__all__ = ["dw_pw_kernel", "dw_pw_launch", "dw_pw", "reference_dw_pw"]
