"""LoopConv's command streams without addresses: for one LOOP_CONV_WS tile (ConvTile), the
commands each of LoopConv's FSMs issues, in its order, with each command's rows and columns and
the loop indices it is issued at (gemmini-isa.md §5.4; the RTL's LoopConv). One description that
three users share, so that a change to a stream changes all of them:

- baco.sim.loops builds the FSMs' commands from it, adding local and DRAM addresses and fields;
- the LoopConv walk (baco.gemmini.loop_conv_timing) prices the same commands (its per-tile
  loads and stores, its computes' count and rows);
- loop_conv_timing.tile_counts counts them as the cycle model's stats do (baco.tuner.kernel_model's
  LoopConv and library conv energy).

Each FSM is given in factored form, a short list of commands its outer loops repeat, so that
the walk prices a tile without enumerating commands one by one:

- bias (LoopConvLdBias, mvin3): bias_row for every image b, then output row orow;
- weights (LoopConvLdWeight, mvin2): weight_blocks, each block's tap list for every tap
  (krow, kcol) in turn;
- input (LoopConvLdInput, mvin): input_row for every image (input_images), then stored input
  row (input_rows; a padding row's commands all come from address 0);
- execute (LoopConvExecute, preload + compute): every weight block (execute_blocks), under it
  the computes of compute_runs for every image and output row;
- store (LoopConvSt, mvout): store_row for every image, then output row; pooled, pooled_stores
  for every image.

Pure Python: imports nothing of baco outside baco.gemmini."""
from __future__ import annotations

import itertools
from typing import NamedTuple


def chunks(n: int, width: int) -> list[tuple[int, int]]:
    """(start, size) of the up-to-width chunks of n."""
    return [(s, min(width, n - s)) for s in range(0, n, width)]


def undilated(x: int, input_dilated: int) -> int:
    """A count along an input dilated by 2 (input_dilated = 1) as rows or columns actually stored."""
    return (x + input_dilated) >> input_dilated


def packed_pixels(ich: int, kc: int, dil: int, downsample: int, dim: int) -> int:
    """Kernel columns per array row (sp_tiled_conv's first-layer packing, max_pixels_per_row): DIM/ich
    of a tile's kc, for a tile of at most DIM input channels, undilated and not downsampled."""
    return 1 if ich > dim or dil > 1 or downsample else min(dim // ich, kc)


class ConvTile(NamedTuple):
    """The shape of one LOOP_CONV_WS (LoopConv's derived parameters, no addresses): `batches`
    images of orows x ocols output pixels and ochs output channels over krows x kcols taps and
    kchs input channels; irows x icols the stored input rows and columns inside the image, the
    padding rows above/below and columns left/right (upad, dpad, lpad, rpad) as stored (an input
    dilated by 2 stores every other one); every other row and column when downsampling; `pixels`
    kernel columns packed per array row (max_pixels_per_row); the transposed input and 0132
    weight layouts; an input dilated by 2."""
    batches: int
    orows: int
    ocols: int
    ochs: int
    krows: int
    kcols: int
    kchs: int
    irows: int
    icols: int
    upad: int = 0
    dpad: int = 0
    lpad: int = 0
    rpad: int = 0
    downsample: int = 0
    pixels: int = 1
    trans_input: int = 0
    trans_weight_0132: int = 0
    input_dilated: int = 0

    def empty(self) -> bool:
        """LoopConv issues nothing for a tile with a zero dimension."""
        return not all((self.batches, self.orows, self.ocols, self.ochs, self.krows, self.kcols, self.kchs))


# ---- bias -----------------------------------------------------------------------------------------
def bias_row(t: ConvTile, dim: int, max_block_len_acc: int) -> list[tuple[int, int, int, int]]:
    """LoopConvLdBias's mvin3s of one output row, issued for every image b, then row orow:
    (ocol, och, rows, cols), DIM pixels by up to max_block_len_acc x DIM channels each."""
    step = min(t.ochs, max_block_len_acc * dim)
    return [(ocol, och, rows, cols) for ocol, rows in chunks(t.ocols, dim) for och, cols in chunks(t.ochs, step)]


def bias_mvins(t: ConvTile, dim: int, max_block_len_acc: int):
    """(b, orow, ocol, och, rows, cols) of every bias mvin3 in order."""
    row = bias_row(t, dim, max_block_len_acc)
    for b, orow in itertools.product(range(t.batches), range(t.orows)):
        for ocol, och, rows, cols in row:
            yield b, orow, ocol, och, rows, cols


# ---- weights --------------------------------------------------------------------------------------
def weight_blocks(t: ConvTile, dim: int, max_block_len: int) -> list[tuple[int, list]]:
    """LoopConvLdWeight's mvin2s: [(och, tap)], a block of output channels and its mvin2s of one
    tap, [(kch, rows, cols)], issued for every tap (krow, kcol) in turn: DIM kernel-channel rows of
    up to max_block_len x DIM output channels (transposed 0132: DIM output-channel rows of up to
    max_block_len x DIM kernel channels)."""
    if t.trans_weight_0132:
        step = min(t.kchs, max_block_len * dim)
        return [(och, [(kch, rows, cols) for kch, cols in chunks(t.kchs, step)]) for och, rows in chunks(t.ochs, dim)]
    step = min(t.ochs, max_block_len * dim)
    return [(och, [(kch, rows, cols) for kch, rows in chunks(t.kchs, dim)]) for och, cols in chunks(t.ochs, step)]


def weight_mvins(t: ConvTile, dim: int, max_block_len: int):
    """(och, krow, kcol, kch, rows, cols) of every weight mvin2 in order."""
    for och, tap in weight_blocks(t, dim, max_block_len):
        for krow, kcol in itertools.product(range(t.krows), range(t.kcols)):
            for kch, rows, cols in tap:
                yield och, krow, kcol, kch, rows, cols


# ---- input ----------------------------------------------------------------------------------------
def input_runs(t: ConvTile, dim: int) -> list[tuple[int, int, bool]]:
    """(icol, pixels, padding) of one stored input row's column runs, icol counted from the image's
    first column: the left padding DIM at a time, the image's pixels DIM << downsample at a time
    (every other one when downsampling), the right padding DIM at a time."""
    runs, icol, end = [], -t.lpad, t.icols + t.rpad
    while icol < end:
        if icol < 0:
            n = min(-icol, dim)
        elif icol >= t.icols:
            n = min(end - icol, dim)
        else:
            n = min(t.icols - icol, dim << t.downsample)
        runs.append((icol, n, icol < 0 or icol >= t.icols))
        icol += n
    return runs


def input_images(t: ConvTile, dim: int, max_block_len: int) -> range:
    """The input loader's outer loop: every image, or (transposed input) blocks of up to
    max_block_len x DIM images, which are then the mvins' columns."""
    return range(0, t.batches, min(t.batches, max_block_len * dim)) if t.trans_input else range(t.batches)


def input_rows(t: ConvTile) -> list[tuple[int, bool]]:
    """(irow, padding) of the stored input rows the loader moves for each image, irow counted from
    the image's first row: 1 << downsample apart, the padding rows' commands from address 0."""
    return [(irow, irow < 0 or irow >= t.irows) for irow in range(-t.upad, t.irows + t.dpad, 1 << t.downsample)]


def input_row(t: ConvTile, dim: int, max_block_len: int, b: int = 0) -> list[tuple[int, int, int, int, bool]]:
    """LoopConvLdInput's mvins of one stored input row of image (block) b: (icol, ich, rows, cols,
    padding) for each column run (input_runs) and block of up to max_block_len x DIM channels
    (transposed: each channel, the block of images its columns)."""
    if t.trans_input:
        blocks = [(ich, min(max_block_len * dim, t.batches - b)) for ich in range(t.kchs)]
    else:
        blocks = chunks(t.kchs, min(t.kchs, max_block_len * dim))
    return [(icol, ich, n >> t.downsample, cols, pad) for icol, n, pad in input_runs(t, dim) for ich, cols in blocks]


def input_mvins(t: ConvTile, dim: int, max_block_len: int):
    """(b, irow, icol, ich, rows, cols, padding) of every input mvin in order."""
    for b in input_images(t, dim, max_block_len):
        row = input_row(t, dim, max_block_len, b)
        for irow, pad_row in input_rows(t):
            for icol, ich, rows, cols, pad in row:
                yield b, irow, icol, ich, rows, cols, pad_row or pad


# ---- execute --------------------------------------------------------------------------------------
def execute_blocks(t: ConvTile, dim: int) -> tuple[list, list, list]:
    """LoopConvExecute's weight blocks as the product of (och, J) blocks of DIM output channels,
    (kcol, pixels) groups of `pixels` kernel columns (each krow's) and (kch, channels) blocks of
    DIM input channels: och -> krow -> kcol -> kch, each block preloaded once (its K = pixels x
    channels rows, J columns)."""
    return chunks(t.ochs, dim), chunks(t.kcols, t.pixels), chunks(t.kchs, dim)


def execute_block_count(t: ConvTile, dim: int) -> int:
    """How many weight blocks the execute FSM preloads."""
    ochs, cols, kchs = execute_blocks(t, dim)
    return len(ochs) * t.krows * len(cols) * len(kchs)


def compute_images(t: ConvTile, dim: int) -> range:
    """The execute FSM's images under a weight block: each, or (transposed input) blocks of DIM."""
    return range(0, t.batches, dim if t.trans_input else 1)


def compute_runs(t: ConvTile, dim: int, b: int = 0, odd_row: bool = False, odd_col: int = 0
                 ) -> list[tuple[int, int]]:
    """(ocol, I) of the computes under a weight block for image (block) b and one output row: DIM
    output pixels each (transposed input: one pixel of DIM images). With a dilated input the rows
    and columns that meet a zero row/column of it are skipped: the whole row when odd_row, the
    columns of parity odd_col (the tap's first column's)."""
    idl = t.input_dilated
    if t.trans_input:
        return [(ocol, min(dim, t.batches - b)) for ocol in range(t.ocols)
                if not (idl and (odd_row or (ocol + odd_col) & 1))]
    if idl and odd_row:
        return []
    span = dim << idl
    return [(ocol, undilated(min(t.ocols - ocol, span), idl)) for ocol in range(odd_col if idl else 0, t.ocols, span)]


# ---- store ----------------------------------------------------------------------------------------
def store_row(t: ConvTile, dim: int) -> list[tuple[int, int, int, int]]:
    """LoopConvSt's mvouts of one output row (no pooling), issued for every image b, then row orow:
    (ocol, och, rows, cols), DIM pixels by DIM channels each."""
    return [(ocol, och, rows, cols) for ocol, rows in chunks(t.ocols, dim) for och, cols in chunks(t.ochs, dim)]


def pooled_stores(t: ConvTile, dim: int) -> list[tuple[int, int]]:
    """LoopConvSt's pooled mvouts of one image, issued for every image b: (och, cols), DIM channels
    each (the store unit walks the pooling windows of porows x pocols pooled pixels)."""
    return chunks(t.ochs, dim)
