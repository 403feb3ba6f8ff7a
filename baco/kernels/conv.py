"""Convolutions as implicit GEMMs in the block language (BACO thesis §6.3): the
input window is addressed through block pointers, zero padding is masking.

Layouts: input NHWC, weights RSCK (filter row, filter column, input channel,
output channel), output NPQK (NHWC). One program computes ROWS output rows
p0 .. p0+ROWS-1 of image n (the schedule's `rows`, default 1) for a block of BLOCK_M
output columns q and BLOCK_N output channels k; it loops over the filter taps (r, s)
whose input row lies inside the image for at least one of its rows, and over
blocks of BLOCK_K input channels. Each step is a GEMM of a (ROWS*BLOCK_M x BLOCK_K)
input block whose rows are output pixels (row stride = stride*C elements,
starting at the input pixel of the tap) with the tap's (BLOCK_K x BLOCK_N)
weight block, accumulated in one int32 accumulator block.

  * rows > 1 (GemmSchedule.rows): the program covers whole output rows (BLOCK_M = Q,
    one column block) and loads its input through a 3-D block pointer (output rows x
    output columns x channels, see baco.language) that the compiler moves in one slice
    (mvins) per output row and reads as one ROWS*Q-row A block, so every preloaded weight
    tile serves ROWS*Q output pixels instead of Q; the output rows are contiguous in y, so
    the store is one 2-D block. A slice whose input row is outside the image (H padding, or
    an output row past P in the last program) reads zeros. The grid is
    (N * ceil(P / rows), ceil(Q / BLOCK_M), ceil(K / BLOCK_N)). Capacity: the A and C blocks
    have rows*block_m rows (baco.gemmini.schedule's one rule).

  * W padding: the input block's rows are masked (boundary_check on rows); the
    view starts at the first pixel of the tap's column phase, so rows left of
    the image have negative row offsets and read zeros.
  * bias (int32, one per output channel): the accumulator starts from it, read
    through a block pointer with row stride 0 (one mvin per tile).
  * H padding: the tap loop runs over r in [max(0, ceil(-h0/dil)),
    min(R, ceil((H-h0)/dil))) (scalar min/max), so taps outside the image
    are skipped rather than multiplied with zeros.
  * whole channel blocks: with C a multiple of BLOCK_K (WHOLE_C) and K of BLOCK_N (WHOLE_K),
    which ConvLaunch sets from the shapes, the loads and the store check only their pixel
    dimensions: the channel windows have constant extents, so the explicit stream's mvins,
    preloads and computes get constant columns and trip counts that the compiler folds (3x3
    14x14 64->64 at DIM 16: 43.3 -> 25.3 RISC-V instructions a command). The command stream is
    the same as the checked kernel's; set on a ragged C or K, a window past the arrays is a
    located Gemmini fault on the simulator, not zeros.

A 1x1, stride-1, unpadded conv2d (pointwise) runs as one GEMM over all N*H*W pixels
(baco.kernels.matmul's kernel, whose BLOCK_M then counts pixels across image rows): its
input rows are contiguous, so programs need not stop at an image row. Under the default
schedule with int8 output it runs this kernel's LOOP_CONV_WS programs instead when those are
estimated faster end to end (baco.gemmini.schedule.pointwise_loop_conv_schedule).

The schedule is a GemmSchedule whose blocks mean (BLOCK_M, BLOCK_N, BLOCK_K) =
(output columns, output channels, input channels per step) and `rows` = output rows per
program; its capacity rule is the GEMM's (baco.gemmini.schedule.schedule_problems), since
each step is a rows*BLOCK_M x BLOCK_N x BLOCK_K GEMM.
"""
from __future__ import annotations

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.arith import acc_to_int8, saturate
from baco.gemmini.config import GemminiConfig, as_config
from baco.gemmini.schedule import (GemmSchedule, as_schedule, default_conv_schedule, loop_conv_ranking,
                                   pointwise_loop_conv_schedule, schedule_problems)
from baco.kernels.arguments import bias_vector, exact_array, output_kind, real_scalar
from baco.kernels.cli import add_gemmini_arguments, add_output_arguments, gemmini_config, output_scale, report
from baco.kernels.launch import KernelLaunch


@jit
def bias_rows_ptr(bias_ptr, Q, channels, q0, k0, ROWS: bl.constexpr, BLOCK_M: bl.constexpr,
                  BLOCK_N: bl.constexpr):
    """The bias (`channels` int32 values) as the block of a program's ROWS*BLOCK_M output pixels
    from column q0 and BLOCK_N channels from k0: row stride 0, every pixel starts from the bias row."""
    return bl.make_block_ptr(bias_ptr, shape=(ROWS * Q, channels), strides=(0, 1), offsets=(q0, k0),
                             block_shape=(ROWS * BLOCK_M, BLOCK_N))


@jit
def output_rows_ptr(y_ptr, n, p0, q0, k0, P, Q, channels, pixel_stride, ROWS: bl.constexpr, BLOCK_M: bl.constexpr,
                    BLOCK_N: bl.constexpr):
    """The output block of a program of image n: BLOCK_M pixels from (p0, q0), or ROWS whole output
    rows from p0 (BLOCK_M = Q), by BLOCK_N of the `channels` channels from k0, in an (N,P,Q,·)
    output of `pixel_stride` elements per pixel."""
    if ROWS == 1:
        y_blk = bl.make_block_ptr(y_ptr + (n * P + p0) * Q * pixel_stride, shape=(Q, channels),
                                  strides=(pixel_stride, 1), offsets=(q0, k0), block_shape=(BLOCK_M, BLOCK_N))
    else:        # whole output rows (BLOCK_M = Q): the program's rows are contiguous in y
        y_blk = bl.make_block_ptr(y_ptr + n * P * Q * pixel_stride, shape=(P * Q, channels),
                                  strides=(pixel_stride, 1), offsets=(p0 * Q, k0),
                                  block_shape=(ROWS * BLOCK_M, BLOCK_N))
    return y_blk


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes (set-up and configs fold)
def conv2d_kernel(x_ptr, w_ptr, y_ptr, H, W, C, P, Q, K, R, S, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                  scale,
                  BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr,
                  RELU: bl.constexpr, OUT_INT8: bl.constexpr, ROWS: bl.constexpr = 1, WHOLE_C: bl.constexpr = False,
                  WHOLE_K: bl.constexpr = False, bias_ptr=None):
    groups = bl.cdiv(P, ROWS)              # programs per image along P
    n = bl.program_id(0) // groups
    p0 = bl.program_id(0) % groups * ROWS  # the program's first output row
    q0 = bl.program_id(1) * BLOCK_M
    k0 = bl.program_id(2) * BLOCK_N
    h0 = p0 * stride_h - pad_h             # input row of output row p0, filter row 0
    w0 = q0 * stride_w - pad_w             # input column of output column q0, filter column 0
    steps = bl.cdiv(C, BLOCK_K)            # channel blocks per tap
    r_lo = max(0, bl.cdiv(-h0 - (ROWS - 1) * stride_h, dil_h))     # taps reaching the image from some row
    r_hi = min(R, bl.cdiv(H - h0, dil_h))
    # the channel dimensions of whole blocks (WHOLE_C: C a multiple of BLOCK_K, WHOLE_K: K of BLOCK_N) go unchecked
    x_check = ((0,) if ROWS == 1 else (0, 1)) + (() if WHOLE_C else ((1,) if ROWS == 1 else (2,)))
    w_check = (() if WHOLE_C else (0,)) + (() if WHOLE_K else (1,))
    k_check = () if WHOLE_K else (1,)      # of a (pixels, K) block
    if bias_ptr is not None:    # row stride 0: every output pixel starts from the bias row
        acc = bl.load(bias_rows_ptr(bias_ptr, Q, K, q0, k0, ROWS, BLOCK_M, BLOCK_N), boundary_check=(0,) + k_check)
    else:
        acc = bl.zeros((ROWS * BLOCK_M, BLOCK_N), dtype=bl.int32)
    for t in range(r_lo * S * steps, r_hi * S * steps):
        r = t // (S * steps)
        s = t // steps % S
        c0 = t % steps * BLOCK_K
        w = w0 + s * dil_w                 # input column of the block's first output pixel
        phase = w % stride_w               # the view holds the columns phase, phase + stride, ...
        if ROWS == 1:
            x_blk = bl.make_block_ptr(x_ptr + ((n * H + h0 + r * dil_h) * W + phase) * C,
                                      shape=(bl.cdiv(W - phase, stride_w), C), strides=(stride_w * C, 1),
                                      offsets=(w // stride_w, c0), block_shape=(BLOCK_M, BLOCK_K))
        else:    # slice i: output row p0 + i, input row h + i*stride_h (rows phase_h, phase_h + stride_h, ...)
            h = h0 + r * dil_h
            phase_h = h % stride_h
            x_blk = bl.make_block_ptr(x_ptr + ((n * H + phase_h) * W + phase) * C,
                                      shape=(bl.cdiv(H - phase_h, stride_h), bl.cdiv(W - phase, stride_w), C),
                                      strides=(stride_h * W * C, stride_w * C, 1),
                                      offsets=(h // stride_h, w // stride_w, c0),
                                      block_shape=(ROWS, BLOCK_M, BLOCK_K))
        w_blk = bl.make_block_ptr(w_ptr + (r * S + s) * C * K, shape=(C, K), strides=(K, 1),
                                  offsets=(c0, k0), block_shape=(BLOCK_K, BLOCK_N))
        a = bl.load(x_blk, boundary_check=x_check)
        b = bl.load(w_blk, boundary_check=w_check)
        acc += bl.dot(a, b)
    y_blk = output_rows_ptr(y_ptr, n, p0, q0, k0, P, Q, K, K, ROWS, BLOCK_M, BLOCK_N)
    if OUT_INT8:
        out = acc * scale
        if RELU:
            out = bl.relu(out)
        bl.store(y_blk, out.to(bl.int8), boundary_check=(0,) + k_check)
    else:
        bl.store(y_blk, acc, boundary_check=(0,) + k_check)


def output_size(size: int, k: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def pair(v, what):
    """An int or an (h, w) pair as an (h, w) pair of ints."""
    hw = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(hw) != 2 or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in hw):
        raise ValueError(f"{what} must be an int or an (h, w) pair of ints, got {v!r}")
    return tuple(int(i) for i in hw)


def _check(x, w, stride, padding, dilation, out, relu, depthwise=False):
    """((stride, padding, dilation) as (h, w) pairs, P, Q) after checking the arguments of a
    conv2d (w is (R,S,C) when depthwise)."""
    stride, padding, dilation = pair(stride, "stride"), pair(padding, "padding"), pair(dilation, "dilation")
    if x.ndim != 4 or w.ndim != (3 if depthwise else 4):
        raise ValueError(f"{'depthwise_conv2d' if depthwise else 'conv2d'} takes x (N,H,W,C) and "
                         f"w {'(R,S,C)' if depthwise else '(R,S,C,K)'}, got shapes {x.shape} and {w.shape}")
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"input channels differ: x has {x.shape[3]}, w has {w.shape[2]}")
    if min(stride) < 1 or min(dilation) < 1 or min(padding) < 0:
        raise ValueError(f"need stride >= 1, dilation >= 1, padding >= 0 (got {stride}, {dilation}, {padding})")
    output_kind(out, relu)
    P, Q = (output_size(x.shape[1 + i], w.shape[i], stride[i], padding[i], dilation[i]) for i in range(2))
    if P < 1 or Q < 1:
        raise ValueError(f"the filter {w.shape[:2]} (dilation {dilation}) does not fit the padded input "
                         f"{x.shape[1:3]} (padding {padding})")
    return (stride, padding, dilation), P, Q


def conv_schedule(blocks=None, *, Q, K, C, P=1, taps=1, config=None, out_int8=False, **loop_conv) -> GemmSchedule:
    """The schedule conv2d runs: `blocks` (a GemmSchedule, its dict, or a
    (BLOCK_M, BLOCK_N, BLOCK_K[, dataflow, double_buffer, rows]) tuple) or
    baco.gemmini.schedule.default_conv_schedule (whole output rows per program when they fit;
    `loop_conv`: its filter, stride and dilation, for a program LoopConv can run)."""
    if blocks is None:
        return default_conv_schedule(Q, K, C, config or GemminiConfig(), out_int8, P=P, taps=taps, **loop_conv)
    return as_schedule(blocks, "blocks")


def check_whole_rows(schedule: GemmSchedule, Q: int) -> None:
    """A schedule of several output rows per program covers whole rows (block_m = Q)."""
    if schedule.rows > 1 and schedule.block_m != Q:
        raise ValueError(f"rows={schedule.rows} output rows per program need whole rows: block_m = Q = {Q}, "
                         f"not {schedule.block_m}")


class ConvLaunch(KernelLaunch):
    """A convolution's kernel launch: kernel, grid, runtime arguments (the output array is
    argument 2), compile options and schedule; runs it, times it, or writes a self-checking
    ELF of it."""

    def __init__(self, kernel, grid, args, options, y, bias):
        self.kernel, self.grid, self.args, self.y, self.bias = kernel, grid, args, y, bias
        self.options = dict(options, bias_ptr=bias)
        self.schedule, self.config = options["schedule"], options["config"]
        problems = schedule_problems(self.schedule, self.config, y.dtype == np.int8)
        if problems:
            raise ValueError("convolution schedule: " + "; ".join(problems))

    @classmethod
    def implicit_gemm(cls, x, w_kernel, y, bias, *, stride, padding, dilation, scale, relu, schedule, config):
        """conv2d_kernel over x (N,H,W,C) with weights w (R,S,C,K)."""
        N, H, W, C = x.shape
        R, S = w_kernel.shape[:2]
        _, P, Q, K = y.shape
        check_whole_rows(schedule, Q)
        grid = (N * bl.cdiv(P, schedule.rows), bl.cdiv(Q, schedule.block_m), bl.cdiv(K, schedule.block_n))
        args = [x, w_kernel, y, H, W, C, P, Q, K, R, S, *stride, *padding, *dilation, real_scalar(scale)]
        options = dict(RELU=relu, OUT_INT8=y.dtype == np.int8, config=config, schedule=schedule,
                       WHOLE_C=C % schedule.block_k == 0, WHOLE_K=K % schedule.block_n == 0)
        return cls(conv2d_kernel, grid, args, options, y, bias_vector(bias, K))

    @classmethod
    def pointwise(cls, x, w, y, bias, *, scale, relu, schedule, config):
        """A 1x1, stride-1, unpadded conv2d is one GEMM of all N*H*W pixels (the input rows are
        contiguous across image rows): matmul_kernel with BLOCK_M pixels per program."""
        from baco.kernels.matmul import matmul_kernel
        C, K = w.shape[2:]
        a, b, c = x.reshape(-1, C), w.reshape(C, K), y.reshape(-1, K)
        M = a.shape[0]
        grid = (bl.cdiv(M, schedule.block_m), bl.cdiv(K, schedule.block_n))
        args = [a, b, c, M, K, C, C, 1, K, 1, K, 1, real_scalar(scale)]
        options = dict(RELU=relu, OUT_INT8=y.dtype == np.int8, config=config, schedule=schedule)
        return cls(matmul_kernel, grid, args, options, y, bias_vector(bias, K))



def is_pointwise(w, stride, padding) -> bool:
    """1x1 filter, stride 1, no padding: the convolution is one GEMM over all pixels."""
    return w.shape[:2] == (1, 1) and stride == (1, 1) and padding == (0, 0)


def loop_conv_options(w, stride, dilation, pointwise: bool, bias: bool = False, padding=(0, 0), image=None) -> dict:
    """default_conv_schedule's arguments for a conv2d (`bias`: it has one; `padding` (rows, columns)
    and `image` (H, W): what it reads): loop_conv_ranking's, only the bias for a pointwise one (a GEMM)."""
    return {"bias": bias, **({} if pointwise else loop_conv_ranking(w.shape[:2], stride, dilation, padding, image))}


def conv2d_launch(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False, out="int8",
                  config=None, blocks=None) -> ConvLaunch:
    x, w = exact_array(x, "x", np.int8), exact_array(w, "w", np.int8)
    (stride, padding, dilation), P, Q = _check(x, w, stride, padding, dilation, out, relu)
    config = as_config(config)
    N, _, _, C = x.shape
    K = w.shape[3]
    y = np.zeros((N, P, Q, K), dtype=np.int8 if out == "int8" else np.int32)
    pointwise = is_pointwise(w, stride, padding)
    if pointwise and blocks is None and out == "int8":
        s = pointwise_loop_conv_schedule(N, P, Q, K, C, config, bias is not None)
        if s is not None:        # LoopConv programs are estimated faster than the GEMM
            return ConvLaunch.implicit_gemm(x, w, y, bias, stride=stride, padding=padding, dilation=dilation,
                                            scale=scale, relu=relu, schedule=s, config=config)
    s = conv_schedule(blocks, Q=N * P * Q if pointwise else Q, K=K, C=C, P=1 if pointwise else P,
                      taps=w.shape[0] * w.shape[1], config=config, out_int8=out == "int8",
                      **loop_conv_options(w, stride, dilation, pointwise, bias is not None, padding, x.shape[1:3]))
    if pointwise:
        return ConvLaunch.pointwise(x, w, y, bias, scale=scale, relu=relu, schedule=s, config=config)
    return ConvLaunch.implicit_gemm(x, w, y, bias, stride=stride, padding=padding, dilation=dilation, scale=scale,
                                    relu=relu, schedule=s, config=config)


def conv2d(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False, out="int8",
           config=None, target="sim", blocks=None):
    """y = conv2d(x, w) on Gemmini: x (N,H,W,C) int8, w (R,S,C,K) int8; y (N,P,Q,K) int8
    (scaled, optionally ReLU'd) or int32. `blocks`: see conv_schedule. Returns (y, launch info)."""
    launch = conv2d_launch(x, w, bias, stride=stride, padding=padding, dilation=dilation, scale=scale,
                           relu=relu, out=out, config=config, blocks=blocks)
    return launch.y, launch.run(target)


def conv1d(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False, out="int8",
           config=None, target="sim", blocks=None):
    """y = conv1d(x, w) on Gemmini: x (N,L,C), w (S,C,K); y (N,L_out,K). The conv2d kernel
    with one input row (H = R = 1). Returns (y, launch info)."""
    x2, w2 = _as_2d(x, w)
    y, info = conv2d(x2, w2, bias, stride=(1, stride), padding=(0, padding),
                     dilation=(1, dilation), scale=scale, relu=relu, out=out, config=config, target=target,
                     blocks=blocks)
    return y[:, 0], info


def _as_2d(x, w):
    x, w = exact_array(x, "x", np.int8), exact_array(w, "w", np.int8)
    if x.ndim != 3 or w.ndim != 3:
        raise ValueError(f"conv1d takes x (N,L,C) and w (S,C,K), got shapes {x.shape} and {w.shape}")
    return x[:, None], w[None]


def im2col(x, R, S, stride, padding, dilation, P, Q, channel_block=None):
    """(N*P*Q, R*S*Cp) int64 rows of input pixels under each output pixel, columns ordered
    (r, s, c) with C zero-padded to Cp = a multiple of `channel_block`; zeros outside the image.
    stride, padding, dilation: (h, w) pairs."""
    N, H, W, C = x.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    Cp = -(-C // channel_block) * channel_block if channel_block else C
    xp = np.zeros((N, H + 2 * ph, W + 2 * pw, Cp), dtype=np.int64)
    xp[:, ph:ph + H, pw:pw + W, :C] = x
    hs = np.arange(P)[:, None] * sh + np.arange(R)[None, :] * dh      # (P, R)
    ws = np.arange(Q)[:, None] * sw + np.arange(S)[None, :] * dw      # (Q, S)
    cols = xp[:, hs[:, None, :, None], ws[None, :, None, :], :]                 # (N, P, Q, R, S, Cp)
    return cols.reshape(N * P * Q, R * S * Cp), Cp


def _read_out(acc, bias, out, scale, relu):
    """The accumulator (started from the bias) read out: int32 as is, or ReLU, scale (RNE),
    int8 saturation."""
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64)
    acc = saturate(acc, 32)
    return acc.astype(np.int32) if out == "int32" else acc_to_int8(acc, scale, relu)


def reference_conv2d(x, w, bias=None, *, stride=1, padding=0, dilation=1, scale=1.0, relu=False, out="int8",
                     config=None, blocks=None, **_):
    """numpy conv2d in Gemmini's arithmetic: int8 in, int32 accumulation, then the accumulator
    read path (ReLU, scale with round-half-even, int8 saturation). Under an OS schedule each
    step's BLOCK_K-channel sum is saturated to the array's output width, as the array does."""
    x, w = np.asarray(x), np.asarray(w)
    (stride, padding, dilation), P, Q = _check(x, w, stride, padding, dilation, out, relu)
    N, _, _, C = x.shape
    R, S, _, K = w.shape
    config = as_config(config)
    s = conv_schedule(blocks, Q=Q, K=K, C=C, P=P, taps=R * S, config=config, out_int8=out == "int8",
                      **loop_conv_options(w, stride, dilation, is_pointwise(w, stride, padding), bias is not None,
                                          padding, x.shape[1:3]))
    step = s.block_k if s.dataflow == "OS" else None
    cols, Cp = im2col(x, R, S, stride, padding, dilation, P, Q, step)
    wp = np.zeros((R, S, Cp, K), dtype=np.int64)
    wp[:, :, :C] = w
    wp = wp.reshape(R * S * Cp, K)
    if step:
        acc = sum(saturate(cols[:, i:i + step] @ wp[i:i + step], config.spatial_output_bits)
                  for i in range(0, R * S * Cp, step))
    else:
        acc = cols @ wp
    return _read_out(acc.reshape(N, P, Q, K), bias_vector(bias, K), out, scale, relu)


def reference_conv1d(x, w, bias=None, *, stride=1, padding=0, dilation=1, **kwargs):
    """numpy conv1d in Gemmini's arithmetic: x (N,L,C), w (S,C,K)."""
    x2, w2 = _as_2d(x, w)
    return reference_conv2d(x2, w2, bias, stride=(1, stride), padding=(0, padding), dilation=(1, dilation),
                            **kwargs)[:, 0]



# ---- the example CLIs (examples/conv2d.py, conv1d.py, depthwise_conv2d.py) -----------------
def add_cli_arguments(parser):
    """The options every convolution example takes besides its shape."""
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--padding", type=int, default=0)
    parser.add_argument("--dilation", type=int, default=1)
    add_output_arguments(parser, out="int8", int8_scale="1/256", bias_help="add a random int32 bias per output channel")
    add_gemmini_arguments(parser)


def cli_options(parser, args) -> dict:
    """conv keyword arguments from the common options (rejecting what Gemmini cannot do)."""
    return dict(stride=args.stride, padding=args.padding, dilation=args.dilation,
                scale=output_scale(parser, args, 1 / 256), relu=args.relu, out=args.out, config=gemmini_config(args))


def cli_run(title, launch: ConvLaunch, reference, args, reshape=None) -> int:
    """Run `launch` on args.target, compare with `reference` bit for bit, print the verdict
    (and write the self-checking ELF with --elf); 0 iff bit-exact."""
    info = launch.run(args.target)
    y = launch.y if reshape is None else reshape(launch.y)
    expected = reference if reshape is None else reference.reshape(launch.y.shape)
    return report(f"{title} schedule={launch.schedule.to_dict()} DIM={launch.config.dim}", args.target, y, reference,
                  info, args.elf and (lambda: launch.write_elf(args.elf, expected)))


__all__ = ["conv2d", "conv1d", "conv2d_kernel", "conv2d_launch", "ConvLaunch", "reference_conv2d",
           "reference_conv1d", "conv_schedule", "bias_vector", "output_size", "im2col", "add_cli_arguments",
           "cli_options", "cli_run"]
