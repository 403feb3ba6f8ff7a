"""The Gemmini C library's tiling heuristics (gemmini-rocc-tests include/gemmini.h,
gemmini-isa.md §5), reproduced for any GemminiConfig: `tiled_matmul_auto` (and the
tiles tiled_matmul_outer runs with them, `tiled_matmul_tiles`) and `tiled_conv_auto`. Tile factors
count DIM×DIM blocks (matmul) or elements (conv). `library_conv_tiles` enumerates the tiles
tiled_conv (tiled_conv_dw) runs with them, one sp_tiled_conv call each: baco.sim.clib adds their
addresses, the tuner's library model walks them."""
from __future__ import annotations

import itertools
import math
from typing import NamedTuple

from baco.gemmini.config import GemminiConfig, loop_unit_half


def _ceil_to(n: int, m: int) -> int:
    return -(-n // m) * m


def tiled_matmul_auto(dim_I: int, dim_J: int, dim_K: int, config: GemminiConfig | None = None,
                      dataflow: str = "WS") -> tuple[int, int, int]:
    """(tile_I, tile_J, tile_K) in DIM blocks, as tiled_matmul_auto chooses them (§5.1)."""
    cfg = config or GemminiConfig()
    d = cfg.dim
    I_p, J_p, K_p = _ceil_to(dim_I, d), _ceil_to(dim_J, d), _ceil_to(dim_K, d)
    double_buffered = dataflow == "WS"
    max_spad_rows = cfg.sp_rows // 2 if double_buffered else cfg.sp_rows
    max_acc_rows = cfg.acc_rows // 2 if double_buffered else cfg.acc_rows
    if double_buffered:
        cap_ij = math.isqrt((cfg.acc_rows // 2) // d)
        cap_k = ((cfg.sp_rows // 2) // 2 // d) // cap_ij
    else:
        cap_ij = math.isqrt(cfg.acc_rows // d)
        cap_k = (cfg.sp_rows // 2 // d) // cap_ij
    ti, tj, tk = min(I_p // d, cap_ij), min(J_p // d, cap_ij), min(K_p // d, cap_k)

    def spad_ok(i, j, k):
        return (i * k + k * j) * d <= max_spad_rows

    def acc_ok(i, j):
        return i * j * d <= max_acc_rows

    changed = True
    while changed:
        changed = False
        if spad_ok(ti, tj + 1, tk) and acc_ok(ti, tj + 1) and (tj + 1) * d <= J_p:
            tj += 1
            changed = True
        if spad_ok(ti + 1, tj, tk) and acc_ok(ti + 1, tj) and (ti + 1) * d <= I_p:
            ti += 1
            changed = True
        if spad_ok(ti, tj, tk + 1) and (tk + 1) * d <= K_p:
            tk += 1
            changed = True
    return ti, tj, tk


def tiled_matmul_reuse(tile_rows: int, tile_cols: int, tile_ks: int) -> tuple[bool, bool]:
    """(A reused, B reused) as tiled_matmul_outer decides it for I0 x J0 x K0 tiles: an operand
    whose tiles fit its scratchpad half (A: I0·K0 <= 2, B: J0·K0 <= 2) is moved in once and read
    from there by every later tile (LOOP_WS's a_spad_id / b_spad_id)."""
    return tile_rows * tile_ks <= 2, tile_cols * tile_ks <= 2


class MatmulTile(NamedTuple):
    """One tile of tiled_matmul_outer (one LOOP_WS): its indices (i0, j0, k0) among the I0 x J0 x K0
    tiles; I x J x K DIM blocks, the last of each padded by pad_* elements; where A and B live
    (a_spad_id, b_spad_id: 0 the loop slot's scratchpad half, 1 or 2 the half the library keeps a
    reused operand in) and whether the tile moves them in (load_a, load_b: else an earlier tile left
    them there); `first_k`: the output tile's first (it moves the bias in), `last_k`: its last (it
    stores C)."""
    i0: int
    j0: int
    k0: int
    I: int
    J: int
    K: int
    pad_i: int
    pad_j: int
    pad_k: int
    a_spad_id: int
    b_spad_id: int
    load_a: bool
    load_b: bool
    first_k: bool
    last_k: bool


def tiled_matmul_tiles(dim_I: int, dim_J: int, dim_K: int, config: GemminiConfig,
                       tiles: tuple[int, int, int] | None = None) -> list[MatmulTile]:
    """The tiles tiled_matmul_outer runs for an I x J x K (elements) matmul, in its order (i0 -> j0 ->
    k0), with tiled_matmul_auto's tile factors (or `tiles`, in DIM blocks) and tiled_matmul_reuse's
    operand reuse: the one enumeration the C library's stream (baco.sim.clib.matmul_stream) and its
    walk (baco.gemmini.loop_ws_timing.library_matmul_loops) share."""
    d = config.dim
    ti, tj, tk = tiles or tiled_matmul_auto(dim_I, dim_J, dim_K, config, "WS")
    blocks = -(-dim_I // d), -(-dim_J // d), -(-dim_K // d)
    I0, J0, K0 = (-(-b // t) for b, t in zip(blocks, (ti, tj, tk)))
    a_reuse, b_reuse = tiled_matmul_reuse(I0, J0, K0)

    def extent(n, blocks, t, index):
        """(blocks of tile `index`, elements of its last block beyond n)."""
        size = min(t, blocks - index * t)
        return size, max(0, (index * t + size) * d - n)

    out = []
    for i0 in range(I0):
        I, pad_i = extent(dim_I, blocks[0], ti, i0)
        for j0 in range(J0):
            J, pad_j = extent(dim_J, blocks[1], tj, j0)
            for k0 in range(K0):
                K, pad_k = extent(dim_K, blocks[2], tk, k0)
                out.append(MatmulTile(i0, j0, k0, I, J, K, pad_i, pad_j, pad_k,
                                      (1 if i0 + k0 == 0 else 2) if a_reuse else 0,
                                      (1 if j0 + k0 == 0 else 2) if b_reuse else 0,
                                      not (a_reuse and j0), not (b_reuse and i0), k0 == 0, k0 == K0 - 1))
    return out


def conv_spad_acc_rows(args, *, stride, kernel_dilation, in_channels_unused=None, pool_size=1, pool_stride=1,
                       downsample=False, dim=16):
    """(spad rows, acc rows) of a conv tile [batches, porows, pocols, pochs, krows, kcols, kchs]."""
    batches, porows, pocols, pochs, krows, kcols, kchs = args
    orows = porows * pool_stride + pool_size - 1
    ocols = pocols * pool_stride + pool_size - 1
    dilated_krows = krows + (kernel_dilation - 1) * (krows - 1)
    dilated_kcols = kcols + (kernel_dilation - 1) * (kcols - 1)
    irows = orows * stride + dilated_krows - 1
    icols = ocols * stride + dilated_kcols - 1
    ch_blocks = -(-kchs // dim)
    a_rows = ch_blocks * batches * irows * icols
    if downsample:
        a_rows = ch_blocks * batches * (irows // 2) * (icols // 2)
    b_rows = -(-pochs // dim) * kcols * krows * kchs
    acc_rows = -(-pochs // dim) * batches * orows * ocols
    return a_rows + b_rows, acc_rows


def tiled_conv_auto(batch_size: int, in_row_dim: int, in_col_dim: int, in_channels: int, out_channels: int,
                    kernel_dim: int, *, stride: int = 1, padding: int = 0, kernel_dilation: int = 1,
                    pool_size: int = 0, pool_stride: int = 0, pool_padding: int = 0,
                    config: GemminiConfig | None = None, kernel_cols: int | None = None,
                    col_stride: int | None = None, col_padding: int | None = None,
                    depthwise: bool = False) -> list[int]:
    """[batches, porows, pocols, pochs, krows, kcols, kchs] as tiled_conv_auto picks them (§5.4).
    With depthwise, as tiled_conv_dw_auto picks them: one channel (pass in_channels =
    out_channels = 1; its tiles are one channel deep) and never the downsampling path.

    `kernel_cols`/`col_stride`/`col_padding` extend the library's square
    convolutions to rectangular ones (e.g. 1-D: a kernel_dim×1 kernel over an
    image one column wide) with the same greedy rules per entry."""
    kernel_cols = kernel_dim if kernel_cols is None else kernel_cols
    col_stride = stride if col_stride is None else col_stride
    col_padding = padding if col_padding is None else col_padding
    cfg = config or GemminiConfig()
    d = cfg.dim
    no_pool = pool_stride == 0
    if no_pool:
        pool_size, pool_stride, pool_padding = 1, 1, 0
    dilated_k = kernel_dim + (kernel_dilation - 1) * (kernel_dim - 1)
    dilated_kc = kernel_cols + (kernel_dilation - 1) * (kernel_cols - 1)
    out_row_dim = (in_row_dim + 2 * padding - dilated_k) // stride + 1
    out_col_dim = (in_col_dim + 2 * col_padding - dilated_kc) // col_stride + 1
    pool_out_row = (out_row_dim + 2 * pool_padding - pool_size) // pool_stride + 1
    pool_out_col = (out_col_dim + 2 * pool_padding - pool_size) // pool_stride + 1
    downsample = (not depthwise and stride == 2 and kernel_dim == 1 and padding == 0 and no_pool
                  and in_row_dim % 2 == 0 and in_col_dim % 2 == 0)
    args = [batch_size, pool_out_row, pool_out_col, out_channels, kernel_dim, kernel_cols, in_channels]
    maxes = list(args)
    half = loop_unit_half(cfg)
    max_spad, max_acc = half.sp_rows, half.acc_rows

    def rows(a):
        return conv_spad_acc_rows(a, stride=stride, kernel_dilation=kernel_dilation, pool_size=pool_size,
                                  pool_stride=pool_stride, downsample=downsample, dim=d)

    def fits(a):
        sp, acc = rows(a)
        return sp <= max_spad and acc <= max_acc

    # shrink the largest entry until it fits
    while not fits(args):
        best, best_idx = -1, -1
        for i, v in enumerate(args):
            if i == 2 and args[2] <= d and args[1] > 1:    # skip pocols while it is small and rows remain
                continue
            if v > best:
                best, best_idx = v, i
        i = best_idx
        if i in (3, 6):                                  # channels: to a multiple of DIM, then by DIM
            if args[i] % d != 0:
                args[i] = (args[i] // d) * d
            else:
                args[i] -= d
            args[i] = max(args[i], 1)
        else:
            args[i] -= 1
    # grow pocols while it fits (stops at the first rejected attempt)
    while args[2] + 1 <= maxes[2]:
        trial = list(args)
        trial[2] += 1
        if not fits(trial):
            break
        args = trial
    # grow everything by 1 while anything fits
    changed = True
    while changed:
        changed = False
        for i in range(len(args)):
            trial = list(args)
            trial[i] += 1
            if trial[i] <= maxes[i] and fits(trial):
                args = trial
                changed = True
    return args


def conv_geometry(H: int, W: int, kernel_dim: int, stride: int, padding: int, dilation: int, pool_size: int,
                  pool_stride: int, pool_padding: int) -> tuple[int, int, int, int, int, int, int]:
    """(P, Q, pooled P, pooled Q, pool size, pool stride, pool padding) as tiled_conv computes
    them (no pooling: a 1x1 window of stride 1)."""
    dil_k = dilation * (kernel_dim - 1) + 1
    P, Q = (H + 2 * padding - dil_k) // stride + 1, (W + 2 * padding - dil_k) // stride + 1
    if P < 1 or Q < 1:
        raise ValueError(f"a {kernel_dim}x{kernel_dim} kernel (dilation {dilation}) does not fit {H}x{W} "
                         f"with padding {padding}")
    psize, pstride, ppad = (1, 1, 0) if pool_stride == 0 else (pool_size, pool_stride, pool_padding)
    return P, Q, (P + 2 * ppad - psize) // pstride + 1, (Q + 2 * ppad - psize) // pstride + 1, psize, pstride, ppad


def library_conv_downsamples(H: int, W: int, kernel_dim: int, stride: int, padding: int, pooled: bool,
                             depthwise: bool = False) -> bool:
    """tiled_conv's downsampling path: a 1x1 stride-2 layer without padding or pooling over an
    even-sized input moves its input tile in every other row and column (never tiled_conv_dw)."""
    return (not depthwise and stride == 2 and kernel_dim == 1 and padding == 0 and not pooled
            and H % 2 == 0 and W % 2 == 0)


class LibraryConvTile(NamedTuple):
    """One sp_tiled_conv call of tiled_conv: where it is (image b, pooled output row/column,
    output channel, kernel row/column, input channel it starts at; a depthwise tile's channel is
    poch), its sizes (images, pooled rows/columns, output channels, kernel rows/columns, input
    channels, all clipped to the layer), the conv output rows/columns it computes and their
    pooling pads, the first input row/column it reads inside the image and its padding rows
    above/below, columns left/right (LoopConv's upad/dpad/lpad/rpad), whether it starts its output
    tile (loads the bias or zeros) and whether it ends it (stores)."""
    b: int
    porow: int
    pocol: int
    poch: int
    krow: int
    kcol: int
    kch: int
    batches: int
    porows: int
    pocols: int
    ochs: int
    krows: int
    kcols: int
    kchs: int
    orows: int
    ocols: int
    pupad: int
    pdpad: int
    plpad: int
    prpad: int
    irow: int
    icol: int
    upad: int
    dpad: int
    lpad: int
    rpad: int
    first: bool
    last: bool


def _library_axis(pooled: int, out: int, image: int, pos: int, size: int, kpos: int, ksize: int, kdim: int,
                  g: dict) -> tuple:
    """sp_tiled_conv's arithmetic along one image axis (rows or columns) for the tile at pooled
    position pos (size pooled outputs) and kernel position kpos (ksize taps) of an axis of `pooled`
    pooled outputs, `out` conv outputs and `image` input pixels: (pooled outputs, conv outputs,
    pooling pads before/after, first input pixel read inside the image, padding before/after,
    taps)."""
    stride, dil, pstride = g["stride"], g["dilation"], g["pstride"]
    first = pos * pstride - g["ppad"]           # the tile's first conv output
    n_pooled, taps = min(size, pooled - pos), min(ksize, kdim - kpos)
    span = n_pooled * pstride + g["psize"] - 1
    plo, phi = max(0, -first), max(0, first + span - out)
    n = span - plo - phi
    start = max(first, 0) * stride + kpos * dil - g["padding"]
    lo = max(0, -start)
    return n_pooled, n, plo, phi, start + lo, lo, max(0, start + n * stride + dil * (taps - 1) - image), taps


def library_conv_tiles(N: int, H: int, W: int, C: int, K: int, kernel_dim: int, config: GemminiConfig, *,
                       stride: int = 1, padding: int = 0, dilation: int = 1, pool_size: int = 0, pool_stride: int = 0,
                       pool_padding: int = 0, depthwise: bool = False) -> tuple[dict, int, list]:
    """(geometry, downsample, tiles) of tiled_conv_auto on an N x H x W x C input, K output channels
    and a kernel_dim x kernel_dim kernel: tiled_conv_auto's tile sizes and tiled_conv's loop nest
    (image, pooled output row, column, output channel, kernel row, column, input channel), one
    LibraryConvTile per sp_tiled_conv call. `geometry`: the layer's dims and conv_geometry's
    (P, Q, PP, PQ, psize, pstride, ppad). Depthwise: tiled_conv_dw_auto's tiles of one channel
    (C = K channels) in tiled_conv_dw's nest, the channel loop (poch) inside the output tile's and
    outside the kernel rows/columns."""
    P, Q, PP, PQ, psize, pstride, ppad = conv_geometry(H, W, kernel_dim, stride, padding, dilation, pool_size,
                                                       pool_stride, pool_padding)
    downsample = int(library_conv_downsamples(H, W, kernel_dim, stride, padding, pool_stride != 0, depthwise))
    sizes = tiled_conv_auto(N, H, W, 1 if depthwise else C, 1 if depthwise else K, kernel_dim, stride=stride,
                            padding=padding, kernel_dilation=dilation, pool_size=pool_size, pool_stride=pool_stride,
                            pool_padding=pool_padding, config=config, depthwise=depthwise)
    g = dict(N=N, H=H, W=W, C=1 if depthwise else C, K=K, kernel_dim=kernel_dim, stride=stride, padding=padding,
             dilation=dilation, P=P, Q=Q, PP=PP, PQ=PQ, psize=psize, pstride=pstride, ppad=ppad)
    batches, porows, pocols, pochs, krows, kcols, kchs = sizes
    rows = {(p, k): _library_axis(PP, P, H, p, porows, k, krows, kernel_dim, g)
            for p in range(0, PP, porows) for k in range(0, kernel_dim, krows)}
    cols = {(p, k): _library_axis(PQ, Q, W, p, pocols, k, kcols, kernel_dim, g)
            for p in range(0, PQ, pocols) for k in range(0, kernel_dim, kcols)}
    tiles = []
    for b, porow, pocol, poch, krow, kcol, kch in itertools.product(
            range(0, N, batches), range(0, PP, porows), range(0, PQ, pocols), range(0, K, pochs),
            range(0, kernel_dim, krows), range(0, kernel_dim, kcols), range(0, g["C"], kchs)):
        r, c, ich = rows[porow, krow], cols[pocol, kcol], min(kchs, g["C"] - kch)
        tiles.append(LibraryConvTile(b, porow, pocol, poch, krow, kcol, kch, min(batches, N - b), r[0], c[0],
                                     min(pochs, K - poch), r[7], c[7], ich, r[1], c[1], r[2], r[3], c[2], c[3], r[4],
                                     c[4], r[5], r[6], c[5], c[6], krow == 0 and kcol == 0 and kch == 0,
                                     krow + r[7] >= kernel_dim and kcol + c[7] >= kernel_dim and kch + ich >= g["C"]))
    return {**g, "C": C}, downsample, tiles
