"""Depthwise convolution (groups = channels) as a block kernel: one program computes ROWS output
rows (or BLOCK_M output columns of one row) of image n for one block of B channels, as a
B-channel convolution whose weights are diagonal (B x B) tiles, one per filter tap.

The program addresses its channel block as a convolution of its own: the input, output and
bias pointers start at the block's first channel c0 (the pixel stride stays C), the block's
weights are a contiguous (R, S, B, B) array of diagonal tiles (depthwise_weight_blocks), and the
tap loop (r, s) multiplies a (ROWS*BLOCK_M x B) input block with the tap's tile into one int32
accumulator block. That is exactly the implicit-GEMM nest the loop-conv-ws pass recognises
(baco/passes/loop_conv_ws.py), so where the program fits LoopConv's halves it becomes one
LOOP_CONV_WS (in_channels = out_channels = B, in/out stride C): ~10 RoCC commands a program
instead of ~70 RISC-V instructions for each of its explicit commands. The C library's
tiled_conv_dw runs one channel per LOOP_CONV_WS (dw mode, a 1-wide weight column); the
B-wide diagonal tile computes B channels per array pass.

B = DIM ('block-diagonal', the default) or B = 1 ('per-channel': one 1x1 weight per tap).
The schedule (depthwise_schedule) is default_conv_schedule's for the channel block's B x B
convolution (whole output rows when they fit; shrunk to LoopConv's halves), with
BLOCK_N = BLOCK_K = B. Layouts: x (N,H,W,C), w (R,S,C), y (N,P,Q,C), all NHWC.
With C a multiple of B (WHOLE_C, set by DepthwiseLaunch) every block has B channels and the
loads and the store check only their pixel dimensions (baco.kernels.conv's whole channel blocks).
"""
from __future__ import annotations

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.config import GemminiConfig, as_config
from baco.gemmini.schedule import default_depthwise_schedule
from baco.kernels.arguments import bias_vector, exact_array, real_scalar
from baco.kernels.conv import (ConvLaunch, _check, _read_out, bias_rows_ptr, check_whole_rows, conv_schedule,
                               im2col, output_rows_ptr)

FORMULATIONS = ("block-diagonal", "per-channel")


@jit
def channel_block_input_ptr(x_ptr, c0, cw, n, h0, r, w, H, W, C, stride_h, stride_w, dil_h, ROWS: bl.constexpr,
                            BLOCK_M: bl.constexpr, BLOCK_K: bl.constexpr):
    """The input block filter row r multiplies for a program of image n whose output row p0 reads
    input row h0 (filter row 0), BLOCK_M output pixels from input column w on: the cw channels of
    the channel block at c0 (BLOCK_K wide), as a view of the input's columns w % stride_w,
    + stride_w, ...; ROWS > 1 output rows: a 3-D pointer whose slice i is input row h + i*stride_h."""
    phase = w % stride_w               # the view holds the columns phase, phase + stride, ...
    if ROWS == 1:
        x_blk = bl.make_block_ptr(x_ptr + c0 + ((n * H + h0 + r * dil_h) * W + phase) * C,
                                  shape=(bl.cdiv(W - phase, stride_w), cw), strides=(stride_w * C, 1),
                                  offsets=(w // stride_w, 0), block_shape=(BLOCK_M, BLOCK_K))
    else:    # slice i: output row p0 + i, input row h + i*stride_h (rows phase_h, phase_h + stride_h, ...)
        h = h0 + r * dil_h
        phase_h = h % stride_h
        x_blk = bl.make_block_ptr(x_ptr + c0 + ((n * H + phase_h) * W + phase) * C,
                                  shape=(bl.cdiv(H - phase_h, stride_h), bl.cdiv(W - phase, stride_w), cw),
                                  strides=(stride_h * W * C, stride_w * C, 1),
                                  offsets=(h // stride_h, w // stride_w, 0),
                                  block_shape=(ROWS, BLOCK_M, BLOCK_K))
    return x_blk


@jit
def diagonal_tile_ptr(w_ptr, c0, cw, t, R, S, BLOCK_K: bl.constexpr, BLOCK_N: bl.constexpr):
    """Tap t's diagonal (B x B) weight tile of the channel block at c0 (cw channels): the block's
    tiles are a contiguous (R, S, B, B) array (depthwise_weight_blocks)."""
    return bl.make_block_ptr(w_ptr + (c0 * R * S + t * BLOCK_K) * BLOCK_N, shape=(cw, cw), strides=(BLOCK_N, 1),
                             offsets=(0, 0), block_shape=(BLOCK_K, BLOCK_N))


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes (set-up and configs fold)
def depthwise_kernel(x_ptr, w_ptr, y_ptr, H, W, C, P, Q, R, S, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                     scale, BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr, RELU: bl.constexpr,
                     OUT_INT8: bl.constexpr, ROWS: bl.constexpr = 1, WHOLE_C: bl.constexpr = False, bias_ptr=None):
    groups = bl.cdiv(P, ROWS)              # programs per image along P
    n = bl.program_id(0) // groups
    p0 = bl.program_id(0) % groups * ROWS  # the program's first output row
    q0 = bl.program_id(1) * BLOCK_M
    c0 = bl.program_id(2) * BLOCK_N        # the channel block's first channel (BLOCK_K = BLOCK_N)
    cw = BLOCK_N if WHOLE_C else min(BLOCK_N, C - c0)     # its channels (WHOLE_C: C a multiple of BLOCK_N)
    c_check = () if WHOLE_C else (1,)      # whole channel blocks go unchecked
    x_check = ((0,) if ROWS == 1 else (0, 1)) + (() if WHOLE_C else ((1,) if ROWS == 1 else (2,)))
    h0 = p0 * stride_h - pad_h             # input row of output row p0, filter row 0
    w0 = q0 * stride_w - pad_w             # input column of output column q0, filter column 0
    r_lo = max(0, bl.cdiv(-h0 - (ROWS - 1) * stride_h, dil_h))     # taps reaching the image from some row
    r_hi = min(R, bl.cdiv(H - h0, dil_h))
    if bias_ptr is not None:    # the channel block's bias
        acc = bl.load(bias_rows_ptr(bias_ptr + c0, Q, cw, q0, 0, ROWS, BLOCK_M, BLOCK_N),
                      boundary_check=(0,) + c_check)
    else:
        acc = bl.zeros((ROWS * BLOCK_M, BLOCK_N), dtype=bl.int32)
    for t in range(r_lo * S, r_hi * S):
        r = t // S
        s = t % S
        w = w0 + s * dil_w                 # input column of the block's first output pixel
        x_blk = channel_block_input_ptr(x_ptr, c0, cw, n, h0, r, w, H, W, C, stride_h, stride_w, dil_h, ROWS,
                                        BLOCK_M, BLOCK_K)
        w_blk = diagonal_tile_ptr(w_ptr, c0, cw, t, R, S, BLOCK_K, BLOCK_N)
        a = bl.load(x_blk, boundary_check=x_check)
        b = bl.load(w_blk, boundary_check=() if WHOLE_C else (0, 1))
        acc += bl.dot(a, b)
    y_blk = output_rows_ptr(y_ptr + c0, n, p0, q0, 0, P, Q, cw, C, ROWS, BLOCK_M, BLOCK_N)
    if OUT_INT8:
        out = acc * scale
        if RELU:
            out = bl.relu(out)
        bl.store(y_blk, out.to(bl.int8), boundary_check=(0,) + c_check)
    else:
        bl.store(y_blk, acc, boundary_check=(0,) + c_check)


def block_width(formulation: str, config: GemminiConfig) -> int:
    """B, the channels a program's diagonal weight tile multiplies at once."""
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, not {formulation!r}")
    return config.dim if formulation == "block-diagonal" else 1


def depthwise_schedule(blocks=None, *, P, Q, R, S, stride=(1, 1), dilation=(1, 1), config=None, out_int8=False,
                       formulation="block-diagonal", bias=False, padding=(0, 0), image=None):
    """The schedule depthwise_conv2d runs: `blocks` (a GemmSchedule, its dict or tuple, with
    BLOCK_N = BLOCK_K = the channels per program), or default_conv_schedule of one channel
    block's B x B convolution (whole output rows when they fit, shrunk to LoopConv's halves
    when the strides and dilations along H and W agree; ranked with the `bias`, `padding` and
    `image` (H, W) the launch runs), with BLOCK_N = BLOCK_K = B."""
    config = as_config(config)
    if blocks is not None:
        s = conv_schedule(blocks, Q=Q, K=1, C=1)
        if s.block_n != s.block_k:
            raise ValueError(f"depthwise blocks need BLOCK_N == BLOCK_K (channels per program), got {s}")
        return s
    return default_depthwise_schedule(P, Q, R, S, config, out_int8, stride=stride, dilation=dilation,
                                      width=block_width(formulation, config), bias=bias, padding=padding,
                                      image=image)


def depthwise_weight_blocks(w, width: int):
    """(R,S,C) depthwise weights as the kernel reads them: for each block of `width` channels a
    contiguous (R, S, width, width) array of diagonal tiles (channel c0 + i's weight at [i, i]),
    the last block zero-padded; shape (ceil(C/width) * R, S, width, width)."""
    R, S, C = w.shape
    blocks = -(-C // width)
    wb = np.zeros((blocks, R, S, width, width), dtype=np.int8)
    c = np.arange(C)
    wb[c // width, :, :, c % width, c % width] = np.moveaxis(w, 2, 0)
    return wb.reshape(blocks * R, S, width, width)


class DepthwiseLaunch(ConvLaunch):
    """A depthwise convolution's launch of depthwise_kernel (ConvLaunch's running, timing and ELF)."""

    @classmethod
    def prepare(cls, x, w, y, bias, *, stride, padding, dilation, scale, relu, schedule, config):
        N, H, W, C = x.shape
        R, S = w.shape[:2]
        _, P, Q, _ = y.shape
        check_whole_rows(schedule, Q)
        width = schedule.block_n
        grid = (N * bl.cdiv(P, schedule.rows), bl.cdiv(Q, schedule.block_m), bl.cdiv(C, width))
        args = [x, depthwise_weight_blocks(w, width), y, H, W, C, P, Q, R, S, *stride, *padding, *dilation,
                real_scalar(scale)]
        options = dict(RELU=relu, OUT_INT8=y.dtype == np.int8, config=config, schedule=schedule,
                       WHOLE_C=C % width == 0)
        return cls(depthwise_kernel, grid, args, options, y, bias_vector(bias, C))


def depthwise_launch(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False, out="int8",
                     config=None, blocks=None, formulation="block-diagonal") -> DepthwiseLaunch:
    x, w = exact_array(x, "x", np.int8), exact_array(w, "w", np.int8)
    (stride, padding, dilation), P, Q = _check(x, w, stride, padding, dilation, out, relu, depthwise=True)
    config = as_config(config)
    s = depthwise_schedule(blocks, P=P, Q=Q, R=w.shape[0], S=w.shape[1], stride=stride, dilation=dilation,
                           config=config, out_int8=out == "int8", formulation=formulation, bias=bias is not None,
                           padding=padding, image=x.shape[1:3])
    y = np.zeros((x.shape[0], P, Q, x.shape[3]), dtype=np.int8 if out == "int8" else np.int32)
    return DepthwiseLaunch.prepare(x, w, y, bias, stride=stride, padding=padding, dilation=dilation, scale=scale,
                                   relu=relu, schedule=s, config=config)


def depthwise_conv2d(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False, out="int8",
                     config=None, target="sim", blocks=None, formulation="block-diagonal"):
    """Depthwise conv2d (groups = C) on Gemmini: x (N,H,W,C), w (R,S,C); y (N,P,Q,C).
    Each program multiplies its input blocks of B channels with the taps' diagonal (B x B)
    weight tiles: B = DIM ('block-diagonal', the default) or B = 1 ('per-channel').
    Returns (y, launch info)."""
    launch = depthwise_launch(x, w, bias, stride=stride, padding=padding, dilation=dilation, scale=scale,
                              relu=relu, out=out, config=config, blocks=blocks, formulation=formulation)
    return launch.y, launch.run(target)


def reference_depthwise_conv2d(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False,
                               out="int8", **_):
    """numpy depthwise conv2d in Gemmini's arithmetic (each step's sum is one product per
    output, so the OS array's saturation never applies)."""
    x, w = np.asarray(x), np.asarray(w)
    (stride, padding, dilation), P, Q = _check(x, w, stride, padding, dilation, out, relu, depthwise=True)
    N, _, _, C = x.shape
    R, S, _ = w.shape
    cols, _ = im2col(x, R, S, stride, padding, dilation, P, Q)
    acc = (cols.reshape(-1, R * S, C) * w.reshape(1, R * S, C).astype(np.int64)).sum(axis=1)
    return _read_out(acc.reshape(N, P, Q, C), bias_vector(bias, C), out, scale, relu)


__all__ = ["depthwise_kernel", "depthwise_conv2d", "depthwise_launch", "depthwise_schedule",
           "depthwise_weight_blocks", "reference_depthwise_conv2d", "DepthwiseLaunch", "FORMULATIONS"]
