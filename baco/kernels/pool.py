"""Conv -> ReLU -> max-pool in one kernel: a convolution whose accumulator block is a tile
of whole output rows, read out through Gemmini's pooled mvout (`bl.max_pool2d`,
baco.language).

conv2d_pool_kernel (any R x S filter, stride, padding, dilation) loads its input through a
3-D block pointer (ROWS output rows x Q columns x BLOCK_K channels, one slice per output
row, baco.kernels.conv's form) per filter tap and channel step; conv_pool_kernel, for a
pointwise (1x1, stride 1, unpadded) convolution, reads the tile's pixels as contiguous
rows of the (H*W, C) input instead. The rest is common and described for the pointwise
kernel (W = Q there).

Layouts: input NHWC, weights (C, K) or (R, S, C, K), output NHWC of the pooled image (N, PH, PW, K).
One program computes PR pooled rows (all PW pooled columns) of BLOCK_N channels of image
n. They pool the conv output rows [lo, lo + ROWS) with lo = first pooled row * stride -
padding and ROWS = (PR - 1) * stride + kernel: the accumulator block is ROWS x W pixels
(BLOCK_M = ROWS * W), the GEMM of those input pixels (contiguous rows of the (H*W, C)
input) with the weights, over BLOCK_K input channels per step. Rows of the tile outside
the image (above the first row, below the last) are masked loads, and max_pool2d's
valid_rows makes them pooling padding (the pooled mvout starts at the first row inside
the image with config_st upad rows above it, and reads orows rows). The column padding
is the pooled mvout's own (config_st lpad; the right edge is implicit). Programs of
neighbouring row tiles recompute the kernel - stride rows their windows share, as the C
library's tiled_conv does.

The schedule is (PR, BLOCK_N, BLOCK_K) (+ dataflow, double buffering); its capacity rule
is the GEMM's with BLOCK_M = ROWS * W (baco.gemmini.schedule.schedule_problems). Compiled with the
loop-conv-ws pass (conv2d_pool_kernel, one stride and dilation), a program is LoopConv's: one
LOOP_CONV_WS, or one per tile of pooled columns (with the halo their windows need) when its conv
rows do not fit LoopConv's half of the accumulator at once, as the C library tiles pooled rows x
pooled columns; pool_schedule ranks the schedules by a walk of those tiles. BLOCK_N may
exceed DIM: placement stores a pooled accumulator block column of tiles after column of
tiles, so each DIM-wide column's pixels are consecutive rows for its pooled mvout.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.arith import max_pool, pool_field_problems, pooled_size
from baco.gemmini.config import as_config
from baco.gemmini.schedule import (GemmSchedule, as_schedule, default_gemm_schedule, pooled_loop_conv_cycles,
                                   schedule_problems, walk_ties)
from baco.kernels.conv import _check as check_conv
from baco.kernels.arguments import bias_vector, exact_array, real_scalar
from baco.kernels.conv import KernelLaunch, is_pointwise, loop_conv_options, reference_conv2d


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes (set-up and configs fold)
def conv_pool_kernel(x_ptr, w_ptr, y_ptr, H, W, C, K, PH, scale,
                     PR: bl.constexpr, ROWS: bl.constexpr, IMAGE_W: bl.constexpr, PW: bl.constexpr,
                     BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr,
                     POOL: bl.constexpr, POOL_STRIDE: bl.constexpr, POOL_PAD: bl.constexpr,
                     RELU: bl.constexpr, bias_ptr=None):
    n = bl.program_id(0)
    pr0 = bl.program_id(1) * PR            # first pooled row of this program
    k0 = bl.program_id(2) * BLOCK_N
    lo = pr0 * POOL_STRIDE - POOL_PAD      # first conv output row its windows read
    x_img = x_ptr + n * H * W * C
    a_blk = bl.make_block_ptr(x_img, shape=(H * W, C), strides=(C, 1), offsets=(lo * W, 0),
                              block_shape=(ROWS * IMAGE_W, BLOCK_K))
    w_blk = bl.make_block_ptr(w_ptr, shape=(C, K), strides=(K, 1), offsets=(0, k0), block_shape=(BLOCK_K, BLOCK_N))
    if bias_ptr is not None:    # row stride 0; rows outside the image masked to 0 like the pixels
        acc = bl.load(bl.make_block_ptr(bias_ptr, shape=(H * W, K), strides=(0, 1), offsets=(lo * W, k0),
                                        block_shape=(ROWS * IMAGE_W, BLOCK_N)), boundary_check=(0, 1))
    else:
        acc = bl.zeros((ROWS * IMAGE_W, BLOCK_N), dtype=bl.int32)
    for _ in range(0, bl.cdiv(C, BLOCK_K)):
        a = bl.load(a_blk, boundary_check=(0, 1))
        b = bl.load(w_blk, boundary_check=(0, 1))
        acc += bl.dot(a, b)
        a_blk = bl.advance(a_blk, (0, BLOCK_K))
        w_blk = bl.advance(w_blk, (BLOCK_K, 0))
    out = acc * scale
    if RELU:
        out = bl.relu(out)
    pooled = bl.max_pool2d(out.to(bl.int8), (ROWS, IMAGE_W), POOL, POOL_STRIDE, (0, POOL_PAD),
                           valid_rows=(max(0, -lo), min(ROWS, H - lo)))     # the tile's rows inside the image
    y_blk = bl.make_block_ptr(y_ptr + n * PH * PW * K, shape=(PH * PW, K), strides=(K, 1),
                              offsets=(pr0 * PW, k0), block_shape=(PR * PW, BLOCK_N))
    bl.store(y_blk, pooled, boundary_check=(0, 1))


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes (set-up and configs fold)
def conv2d_pool_kernel(x_ptr, w_ptr, y_ptr, H, W, C, P, K, PH, R, S, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                       scale, PR: bl.constexpr, ROWS: bl.constexpr, Q: bl.constexpr, PW: bl.constexpr,
                       BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr, POOL: bl.constexpr,
                       POOL_STRIDE: bl.constexpr, POOL_PAD: bl.constexpr, RELU: bl.constexpr,
                       WHOLE_C: bl.constexpr = False, WHOLE_K: bl.constexpr = False, bias_ptr=None):
    n = bl.program_id(0)
    pr0 = bl.program_id(1) * PR            # first pooled row of this program
    k0 = bl.program_id(2) * BLOCK_N
    lo = pr0 * POOL_STRIDE - POOL_PAD      # first conv output row its windows read (slice 0)
    h0 = lo * stride_h - pad_h             # input row of slice 0, filter row 0
    steps = bl.cdiv(C, BLOCK_K)
    r_lo = max(0, bl.cdiv(-h0 - (ROWS - 1) * stride_h, dil_h))     # taps reaching the image from some slice
    r_hi = min(R, bl.cdiv(H - h0, dil_h))
    # the channel dimensions of whole blocks (WHOLE_C: C a multiple of BLOCK_K, WHOLE_K: K of BLOCK_N) go unchecked
    w_check = (() if WHOLE_C else (0,)) + (() if WHOLE_K else (1,))
    k_check = () if WHOLE_K else (1,)      # of a (pixels, K) block
    if bias_ptr is not None:    # row stride 0: every output pixel starts from the bias row
        acc = bl.load(bl.make_block_ptr(bias_ptr, shape=(ROWS * Q, K), strides=(0, 1), offsets=(0, k0),
                                        block_shape=(ROWS * Q, BLOCK_N)), boundary_check=(0,) + k_check)
    else:
        acc = bl.zeros((ROWS * Q, BLOCK_N), dtype=bl.int32)
    for t in range(r_lo * S * steps, r_hi * S * steps):
        r = t // (S * steps)
        s = t // steps % S
        c0 = t % steps * BLOCK_K
        h = h0 + r * dil_h                 # input row of slice 0 for this tap
        w = s * dil_w - pad_w              # input column of output column 0 for this tap
        phase_h = h % stride_h             # slices are the input rows phase_h, phase_h + stride_h, ...
        phase = w % stride_w               # columns phase, phase + stride_w, ...
        x_blk = bl.make_block_ptr(x_ptr + ((n * H + phase_h) * W + phase) * C,
                                  shape=(bl.cdiv(H - phase_h, stride_h), bl.cdiv(W - phase, stride_w), C),
                                  strides=(stride_h * W * C, stride_w * C, 1),
                                  offsets=(h // stride_h, w // stride_w, c0), block_shape=(ROWS, Q, BLOCK_K))
        w_blk = bl.make_block_ptr(w_ptr + (r * S + s) * C * K, shape=(C, K), strides=(K, 1),
                                  offsets=(c0, k0), block_shape=(BLOCK_K, BLOCK_N))
        acc += bl.dot(bl.load(x_blk, boundary_check=(0, 1) + (() if WHOLE_C else (2,))),
                      bl.load(w_blk, boundary_check=w_check))
    out = acc * scale
    if RELU:
        out = bl.relu(out)
    pooled = bl.max_pool2d(out.to(bl.int8), (ROWS, Q), POOL, POOL_STRIDE, (0, POOL_PAD),
                           valid_rows=(max(0, -lo), min(ROWS, P - lo)))     # the tile's conv rows that exist
    y_blk = bl.make_block_ptr(y_ptr + n * PH * PW * K, shape=(PH * PW, K), strides=(K, 1),
                              offsets=(pr0 * PW, k0), block_shape=(PR * PW, BLOCK_N))
    bl.store(y_blk, pooled, boundary_check=(0,) + k_check)


def pooled_shape(H: int, W: int, pool: int, stride: int, padding: int) -> tuple[int, int]:
    return pooled_size(H, pool, stride, padding), pooled_size(W, pool, stride, padding)


def _check(x, w, pool, stride, padding, conv_stride, conv_padding, dilation, relu):
    """(w as (R,S,C,K), (conv stride, padding, dilation) pairs, P, Q, PH, PW) after checking a
    conv_pool's arguments."""
    for name, value in (("pool", pool), ("stride", stride), ("padding", padding)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if w.ndim == 2:
        w = w.reshape(1, 1, *w.shape)
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError(f"conv_pool takes x (N,H,W,C) and w (C,K) or (R,S,C,K), got shapes {x.shape} and {w.shape}")
    conv_args, P, Q = check_conv(x, w, conv_stride, conv_padding, dilation, "int8", relu)
    problems = pool_field_problems(pool, Q, pool, stride, 0, padding)    # one pooled row per tile
    if problems:
        raise ValueError("Gemmini cannot pool this on mvout: " + "; ".join(problems))
    PH, PW = pooled_shape(P, Q, pool, stride, padding)
    if PH < 1 or PW < 1:
        raise ValueError(f"the {pool}x{pool} pool (padding {padding}) does not fit the {P}x{Q} conv output")
    return w, conv_args, P, Q, PH, PW


def pool_schedule(blocks=None, *, N, PH, P, Q, K, C, pool, stride, taps=1, config=None, filter_size=None,
                  conv_stride=1, dilation=1, image=None, conv_padding=(0, 0), padding=0, bias=False) -> GemmSchedule:
    """(PR, BLOCK_N, BLOCK_K) as a GemmSchedule whose block_m is PR (pooled rows per program):
    `blocks` if given, else from default_gemm_schedule of the layer's GEMM (all N*P*Q output
    pixels x K x C; with several filter taps at most DIM channels per step, as conv_schedule):
    its BLOCK_N, BLOCK_K and double buffering, with the most pooled rows (up to PH and
    config_st's 8-bit orows, 255) that fit the scratchpad and accumulator: taller tiles
    recompute fewer of the kernel - stride rows neighbouring tiles share; then spread evenly
    over that many programs (as default_conv_schedule spreads conv rows: on the cycle model
    VGG's 28x28x64 3x3 layer at DIM 32 ran 1.26x faster as 7 + 7 pooled rows than as 9 + 5). When not even one
    pooled row fits, narrower BLOCK_K, then BLOCK_N, then single buffering.

    With `filter_size` (R, S) (a convolution loop-conv-ws can make LOOP_CONV_WS programs: one stride
    and one dilation for both axes, as default_conv_schedule takes them; `image` (H, W) and
    `conv_padding` (rows, columns) its input and padding, `padding` the pool's), the schedule is the
    fastest end to end (baco.gemmini.schedule.pooled_loop_conv_cycles: LoopConv's walk of the
    programs' tiles of pooled rows x pooled columns, with the windows' halo, each tile's bias with
    `bias`, and the CPU issuing them)
    of those whose program fits the capacity rule (the explicit program the pass keeps beside the
    loops) and LoopConv's halves: pooled rows spread evenly over the programs, DIM·2^i output
    channels; those within CONV_WALK_MARGIN of the fastest are ties, to the larger output tile, then
    the wider channel block (ResNet's stem with a bias at 64x64, DIM 16: 3 pooled rows x 32 channels
    walked 0.09% above 6 x 16, run 77,484 cycles end to end against 78,972). A program whose conv
    rows do not fit half the accumulator at once is several LOOP_CONV_WS over tiles of pooled columns (the C library's
    tiled_conv tiles pocols the same way). On the cycle model ResNet's 7x7/2 stem with its 3x3/2
    pool at 224x224 (DIM 16) took 1,213,049 Gemmini cycles as one pooled row x 16 channels (the
    largest whole-row tile in half the accumulator: 3 conv rows for every 2 pooled rows' worth),
    against the library's 1,019,848 (6 x 17 pooled pixels)."""
    config = as_config(config)
    if blocks is not None:
        return as_schedule(blocks, "blocks")
    d = config.dim
    gemm = default_gemm_schedule(N * P * Q, K, C, config, out_int8=True)
    if taps > 1:
        gemm = replace(gemm, block_k=min(gemm.block_k, d))
    rows_of = lambda pr: (pr - 1) * stride + pool  # noqa: E731
    tallest = max(pr for pr in range(1, min(PH, 255) + 1) if rows_of(pr) <= 255)     # (pool <= 3)

    def narrower(block):     # block, then halved down to DIM, in DIM multiples
        tiles = block // d
        return [t * d for t in sorted({tiles >> i for i in range(tiles.bit_length())} - {0}, reverse=True)]
    if filter_size is not None:
        if image is None:
            raise ValueError("pool_schedule: filter_size needs image, the input's (H, W), for LoopConv's walk")
        spread = sorted({-(-PH // g) for g in range(1, PH + 1)} & set(range(1, tallest + 1)))
        walked = {}     # (pooled rows, block_n, block_k) -> walked cycles
        for block_n in narrower(gemm.block_n):
            for block_k in narrower(gemm.block_k):
                for pr in spread:
                    if schedule_problems(GemmSchedule(rows_of(pr) * Q, block_n, block_k, "WS", gemm.double_buffer),
                                         config, True):
                        continue
                    cycles = pooled_loop_conv_cycles(N, *image, K, C, *filter_size, conv_stride, conv_padding,
                                                     dilation, pr, block_n, pool, stride, padding, config,
                                                     bias=bias)
                    if cycles is not None:
                        walked[pr, block_n, block_k] = cycles
        if walked:      # ties (walk_ties, as default_conv_schedule's) to the larger tile, the wider channels
            pr, block_n, block_k = max(walk_ties(walked), key=lambda t: (t[0] * min(t[1], K), t[1], t[2]))
            return GemmSchedule(pr, block_n, block_k, "WS", gemm.double_buffer)
    for double_buffer in ((True, False) if gemm.double_buffer else (False,)):
        for block_n in narrower(gemm.block_n):
            for block_k in narrower(gemm.block_k):
                for pr in range(tallest, 0, -1):
                    if not schedule_problems(
                            GemmSchedule(rows_of(pr) * Q, block_n, block_k, "WS", double_buffer), config, True):
                        pr = -(-PH // -(-PH // pr))     # the fewest programs, pooled rows spread evenly
                        return GemmSchedule(pr, block_n, block_k, "WS", double_buffer)
    raise ValueError(f"no pooled row of a {Q}-pixel-wide conv output fits this Gemmini "
                     f"(DIM {d}, {config.sp_rows} scratchpad rows, {config.acc_rows} accumulator rows)")


def pool_schedule_from_conv(s: GemmSchedule, *, PH: int, Q: int, pool: int, stride: int, config=None
                            ) -> GemmSchedule | None:
    """The conv_pool kernel's schedule (pool_schedule's form) nearest a convolution schedule `s` of
    the same layer (a tuned design's, costed for the convolution alone): its BLOCK_N, BLOCK_K,
    dataflow and double buffering, and the most pooled rows whose convolution rows, (PR - 1) x
    stride + pool, fit in s.rows (one at least), spread evenly over the programs; None when that
    tile does not fit the capacity rule."""
    config = as_config(config)
    pr = min(PH, max(1, (s.rows - pool) // stride + 1))
    pr = -(-PH // -(-PH // pr))
    tile = GemmSchedule(((pr - 1) * stride + pool) * Q, s.block_n, s.block_k, s.dataflow, s.double_buffer)
    if schedule_problems(tile, config, True):
        return None
    return GemmSchedule(pr, s.block_n, s.block_k, s.dataflow, s.double_buffer)


class ConvPoolLaunch(KernelLaunch):
    """A conv_pool launch: conv_pool_kernel for a pointwise convolution (w (C,K) or 1x1, stride
    1, unpadded), else conv2d_pool_kernel; grid, runtime arguments (the output is argument 2),
    options."""

    def __init__(self, x, w, bias, *, pool, stride, padding, scale, relu, config, blocks, conv_stride=1,
                 conv_padding=0, dilation=1):
        self.x = exact_array(x, "x", np.int8)
        w, (cs, cp, dil), P, Q, PH, PW = _check(self.x, exact_array(w, "w", np.int8), pool, stride, padding,
                                                 conv_stride, conv_padding, dilation, relu)
        self.w = np.ascontiguousarray(w)
        N, H, W, C = self.x.shape
        R, S, _, K = self.w.shape
        self.config = as_config(config)
        loop_conv = loop_conv_options(self.w, cs, dil, is_pointwise(self.w, cs, cp))
        self.schedule = pool_schedule(blocks, N=N, PH=PH, P=P, Q=Q, K=K, C=C, pool=pool, stride=stride,
                                      taps=R * S, config=self.config, filter_size=loop_conv.get("filter_size"),
                                      conv_stride=loop_conv.get("stride", 1), dilation=loop_conv.get("dilation", 1),
                                      image=(H, W), conv_padding=cp, padding=padding, bias=bias is not None)
        pr = self.schedule.block_m
        rows = (pr - 1) * stride + pool
        problems = schedule_problems(GemmSchedule(rows * Q, self.schedule.block_n, self.schedule.block_k),
                                     self.config, True)
        if problems:
            raise ValueError(f"conv_pool schedule {self.schedule.to_dict()} ({rows}x{Q}-pixel tiles): "
                             + "; ".join(problems))
        self.y = np.zeros((N, PH, PW, K), dtype=np.int8)
        self.bias = bias_vector(bias, K)
        self.grid = (N, bl.cdiv(PH, pr), bl.cdiv(K, self.schedule.block_n))
        self.options = dict(PR=pr, ROWS=rows, PW=PW, BLOCK_N=self.schedule.block_n, BLOCK_K=self.schedule.block_k,
                            POOL=pool, POOL_STRIDE=stride, POOL_PAD=padding, RELU=relu, bias_ptr=self.bias,
                            config=self.config, dataflow=self.schedule.dataflow,
                            double_buffer=self.schedule.double_buffer)
        if is_pointwise(self.w, cs, cp):
            self.kernel = conv_pool_kernel
            self.args = [self.x, self.w.reshape(C, K), self.y, H, W, C, K, PH, real_scalar(scale)]
            self.options.update(IMAGE_W=W)
        else:
            self.kernel = conv2d_pool_kernel
            self.args = [self.x, self.w, self.y, H, W, C, P, K, PH, R, S, *cs, *cp, *dil, real_scalar(scale)]
            self.options.update(Q=Q, WHOLE_C=C % self.schedule.block_k == 0, WHOLE_K=K % self.schedule.block_n == 0)



def conv_pool(x, w, bias=None, *, pool=2, stride=None, padding=0, conv_stride=1, conv_padding=0, dilation=1,
              scale=1.0, relu=True, config=None, target="sim", blocks=None):
    """y = max_pool2d(relu(conv2d(x, w) + bias) * scale) on Gemmini in one kernel: x (N,H,W,C) int8,
    w (C,K) or (R,S,C,K) int8 (conv_stride, conv_padding, dilation), bias int32 (K,); pool x pool
    windows, `stride` (default pool), zero `padding`. Returns (y (N,PH,PW,K) int8, launch info)."""
    launch = ConvPoolLaunch(x, w, bias, pool=pool, stride=pool if stride is None else stride, padding=padding,
                            conv_stride=conv_stride, conv_padding=conv_padding, dilation=dilation, scale=scale,
                            relu=relu, config=config, blocks=blocks)
    info = launch.run(target)
    return launch.y, info


def reference_conv_pool(x, w, bias=None, *, pool=2, stride=None, padding=0, conv_stride=1, conv_padding=0,
                        dilation=1, scale=1.0, relu=True):
    """numpy conv -> ReLU -> max-pool in Gemmini's arithmetic: baco.kernels.conv.reference_conv2d
    (int32 accumulation from the bias, then ReLU, scale RNE, int8 saturation), then
    baco.gemmini.arith.max_pool of each image (padding counts as 0)."""
    w = np.asarray(w)
    conv = reference_conv2d(x, w.reshape(1, 1, *w.shape) if w.ndim == 2 else w, bias, stride=conv_stride,
                            padding=conv_padding, dilation=dilation, scale=scale, relu=relu)
    N, P, Q, K = conv.shape
    stride = pool if stride is None else stride
    PH, PW = pooled_shape(P, Q, pool, stride, padding)
    return np.stack([max_pool(conv[n].reshape(P * Q, K), P, Q, pool, stride, padding, padding).reshape(PH, PW, K)
                     for n in range(N)])


__all__ = ["conv_pool", "conv_pool_kernel", "conv2d_pool_kernel", "ConvPoolLaunch", "reference_conv_pool", "pool_schedule",
           "pooled_shape"]
