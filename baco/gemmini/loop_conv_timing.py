"""LoopConv's timing as the cycle model runs it, in closed form: one pure walk over a sequence of
LOOP_CONV_WS tiles (the C library's tiled_conv_auto tiles, or the programs baco's conv kernel
compiles to, one LOOP_CONV_WS each), so that the compiler's default conv schedule
(baco.gemmini.schedule) and the tuner's models (baco.tuner.kernel_model) price LoopConv the same
way. A tile's commands (its loads, computes and stores, and what tile_counts counts) are
baco.gemmini.loop_conv_stream's, the ones baco.sim.loops issues; the walk models how LoopConv's
FSMs overlap them. Pure Python: imports only baco.gemmini."""
from __future__ import annotations

import functools
import math

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import CONCURRENT_LOOPS
from baco.gemmini.loop_conv_stream import (ConvTile, bias_row, compute_images, compute_runs, execute_block_count,
                                           execute_blocks, input_images, input_row, input_rows, packed_pixels,
                                           pooled_stores, store_row, weight_blocks)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS


def program_conv_tiles(N: int, P: int, Q: int, K: int, C: int, R: int, S: int, stride: int, dilation: int,
                       rows: int, block_m: int, block_n: int, depthwise: bool = False,
                       channels: int | None = None, downsample: bool = False, padding: int = 0,
                       image: tuple[int, int] | None = None) -> list:
    """The LOOP_CONV_WS of each program of an N x P x Q x K convolution
    (C input channels, R x S taps, one stride and dilation) compiled with `rows` output rows of
    `block_m` columns and `block_n` output channels a program (baco/kernels/conv.py,
    baco.passes.loop_conv_ws), as loop_conv_stream_cycles' tuples, in the order the host runs the
    grid (program_id 0, images x row groups, innermost; then column blocks; channel blocks
    outermost); each runs in its LoopConv slot's half of the scratchpad (the pass's spad ids are 0:
    slots alternate over the launch, loop_conv_stream_cycles' default). Each is one image, the program's output rows (a last program short of
    rows computes its rows inside the output only), block_m columns (all of them when a program
    holds several rows: LoopConv's tile is then block_m wide), block_n output channels over every
    tap and input channel, the zero fill first and the stores last. A depthwise program
    (baco/kernels/depthwise.py) is the convolution of its channel block: block_n input and output
    channels. irows x icols: the input pixels a program reads of the unpadded input (a one-row
    program its tap rows only: upad = 0 and dpad = stride - 1); the rest of LoopConv's tile (a
    one-row program's dpad, the rows and columns past the image) is padding, zeros. `channels`: the
    input channels per LOOP_CONV_WS (baco.gemmini.schedule.loop_conv_channels; all C by default):
    a program of more is that many LOOP_CONV_WS over consecutive channel blocks, the first zero
    filling (or loading the bias), the last storing. `downsample`: the programs
    set LoopConv's downsample flag (baco.gemmini.schedule.loop_conv_downsamples); the loader moves a
    column run's pixels in pairs, so the pass leaves an odd right padding's first column out of the
    padding (the tile's last pixel read is then inside the image, one column past the input).
    `padding`: the image (H x W, `image`; by default the unpadded input the outputs read) padded by
    that many zero rows and columns each side, as the kernel runs it: a program's tap rows are those
    reaching the image from one of its rows (r_lo, r_hi: a one-row program at the image's top or
    bottom edge runs fewer), the rows and columns of its tile outside the image are padding (a
    several-row program's upad and dpad, lpad and rpad), filled with zeros on chip."""
    H, W = image or ((P - 1) * stride + (R - 1) * dilation + 1, (Q - 1) * stride + (S - 1) * dilation + 1)
    bm, bn = min(block_m, Q), min(block_n, K)
    chs = C if depthwise or channels is None else channels
    blocks = [(c0, min(chs, C - c0)) for c0 in range(0, C, chs)] if not depthwise else [(0, None)]
    # the pass packs kernel columns (max_pixels_per_row) by the program's channels, more than DIM in
    # a split program: its ragged last block runs unpacked, however few channels it holds
    unpacked = ((), (None, 1))
    tiles = []
    for k0 in range(0, K, bn):
        och = min(bn, K - k0)
        for q0 in range(0, Q, bm):
            ocols = bm if rows > 1 else min(bm, Q - q0)
            tile_cols = ocols * stride + dilation * (S - 1)
            w0 = q0 * stride - padding
            icols = min(tile_cols, W - w0) - max(0, -w0)
            if downsample and (tile_cols - icols) % 2:
                icols += 1
            groups = {}     # a program's tiles by its (output rows, tap rows, input rows): most are alike
            programs = []   # one image's programs as runs of equal ones: [program's tiles, count]
            for p0 in range(0, P, rows):
                orows = min(rows, P - p0)
                krows, irows, tile_rows = _program_rows(p0, orows, rows, H, R, stride, dilation, padding)
                program = groups.get((orows, krows, irows))
                if program is None:
                    program = groups[orows, krows, irows] = [
                        (1, orows, ocols, och, krows, S, och if depthwise else ich, irows, icols, b == 0,
                         b == len(blocks) - 1, tile_rows - irows, tile_cols - icols)
                        + unpacked[len(blocks) > 1 and ich < chs] for b, (c0, ich) in enumerate(blocks)]
                if programs and programs[-1][0] is program:
                    programs[-1][1] += 1
                else:
                    programs.append([program, 1])
            for program, count in programs * N:
                tiles += program * count
    return tiles


def program_tap_rows(p0: int, rows: int, H: int, R: int, stride: int, dilation: int, padding: int) -> tuple[int, int]:
    """[r_lo, r_hi): the filter rows a conv program of `rows` output rows from p0 runs, those whose
    input row lies inside the H-row image (padded by `padding` rows each side) for one of its rows
    (baco/kernels/conv.py's tap loop; all R where the layer is unpadded)."""
    h0 = p0 * stride - padding
    return max(0, -(-(-h0 - (rows - 1) * stride) // dilation)), min(R, -(-(H - h0) // dilation))


def _program_rows(p0: int, orows: int, rows: int, H: int, R: int, stride: int, dilation: int,
                  padding: int) -> tuple[int, int, int]:
    """(tap rows, input rows read inside the image, LoopConv tile rows) of the program of output
    rows p0 .. p0 + orows - 1 of a `rows`-row schedule (program_tap_rows, the pass's tile): one row
    reads its tap rows only (the tile ends stride - 1 rows past them)."""
    r_lo, r_hi = program_tap_rows(p0, rows, H, R, stride, dilation, padding)
    krows = r_hi - r_lo
    if rows == 1:
        return krows, dilation * (krows - 1) + 1, stride + dilation * (krows - 1)
    tile_rows = orows * stride + dilation * (krows - 1)
    h_t = p0 * stride - padding + r_lo * dilation
    return krows, min(tile_rows, H - h_t) - max(0, -h_t), tile_rows


# indices of loop_conv_stream_cycles' walk state: loader, execute and store ends; computes done per
# scratchpad half (2); a slot's last loop has issued everything (2); (first, last) store per accumulator half (2 x 2)
LD, EX, ST, COMPUTED, FREED, READ = 0, 1, 2, 3, 5, 7
STATE_SIZE = READ + 2 * 2


def loop_conv_stream_cycles(tiles, cfg: GemminiConfig, *, dilation: int = 1, downsample: int = 0,
                            out_int8: bool = True, halves=None, bias: bool = False) -> float:
    """Cycles of a sequence of LOOP_CONV_WS `tiles` as the cycle model times LoopConv's stream. A
    tile is (B, orows, ocols, och, kr, kc, ich, irows, icols, first, last, pad_rows, pad_cols): B
    images of orows x ocols output pixels and och output channels over kr x kc taps and ich input
    channels; irows x icols the input pixels it reads, pad_rows x pad_cols the padding it fills with
    zeros; `first` starts its accumulator rows, a bias's int32 rows loaded from DRAM with `bias`,
    else zero-filled (LoopConv's bias mvins from address 0), `last` stores them; an
    optional 14th element (porows, pocols, pool_size) makes the stores pooled mvouts (one per DIM
    channels, the store unit reading pool_size^2 window positions per pooled pixel); an optional
    15th, the kernel columns per array row the program sets (max_pixels_per_row; by default
    packed_pixels of the tile's channels).
    `halves`: the scratchpad half of each tile (a_spad_id), by default the loop slot's.

    LoopConv holds two loops (slots alternating, each with its own scratchpad half) and runs its
    FSMs concurrently (_walk_tile says when each tile's loads, computes and stores start). A tile's
    loads start as soon as its loop has a slot and the loader is done with the previous tile's (a
    zero fill of its accumulator rows, or its bias, also after the stores of the output tile
    before last, which read them); its weights load under the computes of the last tile that read
    the same scratchpad half (each weight mvin waits only for the rows it overwrites to have been
    read, in the order the computes read them), its input rows once those computes are done. Its
    computes start when the previous tile's are done and its last load has
    entered the reservation station, each once the input row it reads has landed (as the cycle
    model waits on each compute's rows), no earlier than those stores; its stores follow its
    computes and the store unit's earlier stores.
    A loop frees its slot once it has issued its last command: the computes once rs_ex / 2 pairs
    are left, the stores once rs_st are.

    The walk is quick so that the default conv schedule and the tuner can walk every candidate's
    programs (tens of thousands of tiles on a small Gemmini): each distinct tile is priced once
    (_tile_costs, cached), and a stretch that repeats a period of tiles (a run of equal programs,
    the channel blocks of split programs, their halves alternating or not) is walked only until a
    period moves every time of the state by one delta; the step adds costs to, and takes maxima
    of, times of the state (the one constant, 0, never wins once times are positive), so every
    further period moves them by that delta again and the whole periods left are added at once
    (_periodic). tests/loop_conv_walk_reference.py walks every tile; the tests check the two agree."""
    k = DEFAULT_CONSTANTS
    costs = {}      # this walk's tiles' _tile_costs (one hash of the tile, not of the config too)
    st = [0.0] * STATE_SIZE
    n, out_tiles, count = 0, 0, len(tiles)
    # per (tile, half, slot, accumulator half): where the walk last met it, its state and stores then
    seen = {}
    while n < count:
        t = tiles[n]
        half = n % CONCURRENT_LOOPS if halves is None else halves[n]
        key = t, half, n % CONCURRENT_LOOPS, out_tiles % 2
        before = seen.get(key)
        # (a quick test first: within a program's channel blocks, where the store unit idles, it fails)
        if before is not None and abs(st[ST] - before[1][ST] - st[LD] + before[1][LD]) <= 1e-6:
            jump = _periodic(tiles, halves, n, st, *before, count)
            if jump:
                periods, delta = jump
                period = n - before[0]
                st = [v + periods * delta for v in st]
                out_tiles += periods * (out_tiles - before[2])
                n += periods * period
                seen.clear()
                continue
        seen[key] = n, list(st), out_tiles
        c = costs.get(t)
        if c is None:
            c = costs[t] = _cached_tile_costs(cfg, dilation, downsample, out_int8, bias, t)
        out_tiles += _walk_tile(st, c, cfg, slot=n % CONCURRENT_LOOPS, half=half, out_half=out_tiles % 2,
                                zero_fills=t[9])
        n += 1
    return max(st[ST] + k.dram_latency, st[EX] + k.array_depth_factor * cfg.dim)


def _periodic(tiles, halves, n: int, st: list, m: int, before: list, out_before: int, count: int):
    """(whole periods left, delta) when tiles[m:n] (and their halves) repeat from n on and walking
    them moved every time of the state from `before` to `st` by one delta (m and n in the same loop
    slot and accumulator half: the key they were met under); else None."""
    delta = st[LD] - before[LD]
    if delta <= 0 or any(abs(a - b - delta) > 1e-6 for a, b in zip(st, before)):
        return None
    period = n - m
    end = _periodic_end(tiles, n, period, count)
    if halves is not None:
        end = _periodic_end(halves, n, period, end)
    periods = (end - n) // period
    return (periods, delta) if periods else None


def _periodic_end(seq, n: int, period: int, end: int) -> int:
    """The end (at most `end`) of the stretch from n on where seq repeats with `period`:
    seq[i] == seq[i - period]. Compared in slices of doubling length (C speed; a stretch's length
    is found in a logarithmic number of slices)."""
    length, step = 0, period
    while n + length < end:
        step = min(step, end - n - length)
        a = n + length
        if seq[a:a + step] == seq[a - period:a - period + step]:
            length += step
            step *= 2
        elif step > 1:
            step //= 2
        else:
            break
    return n + length


def _dma(cfg: GemminiConfig, rows, row_bytes):
    """Occupancy of one mvin/mvout of `rows` rows of row_bytes each."""
    k = DEFAULT_CONSTANTS
    return k.dma_cmd_overhead + max(rows * math.ceil(row_bytes / (cfg.dma_bus_bits // 8)) * k.beat_cycles,
                                    math.ceil(rows / cfg.max_in_flight) * k.dram_latency)


@functools.lru_cache(maxsize=65536)
def _cached_tile_costs(cfg: GemminiConfig, dilation, downsample, out_int8, bias, tile: tuple) -> tuple:
    """_tile_costs of `tile`, cached across walks: a search walks the same few tiles in many candidates."""
    return _tile_costs(cfg, dilation, downsample, out_int8, bias, *tile)


def conv_tile(dim: int, dilation: int, downsample: int, B, orows, ocols, och, kr, kc, ich, irows, icols, first,
              last, pad_rows, pad_cols, pool=None, pixels=None) -> ConvTile:
    """The LOOP_CONV_WS of a walk tile (loop_conv_stream_cycles' tuple) as baco.gemmini.loop_conv_stream
    describes its commands: the padding rows and columns after the image's, the first-layer packing
    of `pixels` kernel columns per array row (by default packed_pixels of its channels)."""
    return ConvTile(B, orows, ocols, och, kr, kc, ich, irows, icols, dpad=pad_rows, rpad=pad_cols,
                    downsample=downsample,
                    pixels=packed_pixels(ich, kc, dilation, downsample, dim) if pixels is None else pixels)


def _mvin(cfg: GemminiConfig, rows, row_bytes, zeros):
    """Occupancy of one mvin; from DRAM address 0 (zeros) it makes no DRAM requests."""
    return DEFAULT_CONSTANTS.dma_cmd_overhead + rows if zeros else _dma(cfg, rows, row_bytes)


def _chained(cfg: GemminiConfig, cols: int, spad_stride: int) -> bool:
    """Whether the cycle model takes a LoopConv mvin of `cols` columns (blocks of DIM columns,
    spad_stride rows apart: config_ld's block_stride) for one range of rows that holds the rows the
    next mvin of its kind writes (its next pixels, tap or channels), as it does when there are
    several blocks and spad_stride is at most DIM: the next then waits for it to land
    (baco.sim.timing's _mvin_cost and its hazards)."""
    return cols > cfg.dim and spad_stride <= cfg.dim


def _landing(occ: list, chained: list, landing: bool) -> list:
    """The occupancies `occ` of a run of mvins of one kind; with `landing`, each chained one
    (_chained) taking until it lands (its DRAM latency more) but the run's last, after which none
    of its kind follows."""
    lat = DEFAULT_CONSTANTS.dram_latency * landing
    return [o + lat * (c and i < len(occ) - 1) for i, (o, c) in enumerate(zip(occ, chained))]


def _tile_loads(cfg: GemminiConfig, t: ConvTile, bias, first, landing: bool = False) -> tuple[list, int, list]:
    """(occupancies, how many are the bias's and weights', input rows) of tile t's mvins in
    LoopConv's order (baco.gemmini.loop_conv_stream): the bias (from DRAM, int32) or a zero fill
    of the accumulator rows when `first`, the weights, then each image's stored input rows (a
    padding row's mvins from address 0); `input rows` lists, per image, the input loads' running
    occupancy at the end of each stored input row (rows `1 << downsample` apart in the tile).
    `landing`: a mvin the next of its kind waits for (_chained) is counted until it lands, as the
    loader then runs them (else each command's own occupancy, the cycle model's _cost)."""
    d, ib = cfg.dim, cfg.input_bytes
    pixels = ((t.irows + t.upad + t.dpad) >> t.downsample) * ((t.icols + t.lpad + t.rpad) >> t.downsample)
    occ = []
    if first:
        stride = t.batches * t.orows * t.ocols
        row = bias_row(t, d, cfg.max_block_len_acc) * (t.batches * t.orows)
        occ += _landing([_mvin(cfg, rows, cols * cfg.acc_bytes, not bias) for _, _, rows, cols in row],
                        [_chained(cfg, cols, stride) for _, _, _, cols in row], landing)
    stride = t.krows * t.kcols * (t.ochs if t.trans_weight_0132 else t.kchs)
    mvins = [m for _, tap in weight_blocks(t, d, cfg.max_block_len) for m in tap * (t.krows * t.kcols)]
    occ += _landing([_dma(cfg, rows, cols * ib) for _, rows, cols in mvins],
                    [_chained(cfg, cols, stride) for _, _, cols in mvins], landing)
    commands = input_row(t, d, cfg.max_block_len)      # the same for every image (no transposed input)
    lat = DEFAULT_CONSTANTS.dram_latency * landing * _chained(cfg, max((c for _, _, _, c, _ in commands), default=0),
                                                    (t.kchs if t.trans_input else t.batches) * pixels)
    row = [_mvin(cfg, rows, cols * ib, pad) + lat for _, _, rows, cols, pad in commands]
    zero_row = [_mvin(cfg, rows, cols * ib, True) + lat for _, _, rows, cols, _ in commands]
    before, total, row_total, zero_total = len(occ), 0.0, sum(row), sum(zero_row)
    input_ends = []
    for _ in input_images(t, d, cfg.max_block_len):
        ends = []
        for _, padding in input_rows(t):
            occ += zero_row if padding else row
            total += zero_total if padding else row_total
            ends.append(total)
        input_ends.append(ends)
    return occ, before, input_ends


def _tile_stores(cfg: GemminiConfig, t: ConvTile, out_int8, pool) -> tuple[float, int]:
    """(occupancy, count) of tile t's mvouts (baco.gemmini.loop_conv_stream's store_row for every
    image and output row; pooled, pooled_stores for every image, baco.sim.timing's _mvout_cost:
    the store unit reading pool_size^2 window positions per pooled pixel)."""
    k = DEFAULT_CONSTANTS
    if pool is not None:
        porows, pocols, size = pool
        pixels, stores = porows * pocols, pooled_stores(t, cfg.dim)
        return (t.batches * sum(_dma(cfg, pixels, cols * cfg.input_bytes) + pixels * size ** 2 + k.acc_scale_latency
                                for _, cols in stores), t.batches * len(stores))
    out_bytes = cfg.input_bytes if out_int8 else cfg.acc_bytes
    row = store_row(t, cfg.dim)
    per_row = sum(_dma(cfg, rows, cols * out_bytes) + k.acc_scale_latency for _, _, rows, cols in row)
    return t.batches * t.orows * per_row, t.batches * t.orows * len(row)


def _tile_costs(cfg: GemminiConfig, dilation, downsample, out_int8, bias,
                B, orows, ocols, och, kr, kc, ich, irows, icols, first, last, pad_rows, pad_cols, pool=None,
                pixels=None):
    """(bias and weight loads, input loads, computes, stores occupancy, computes count, stores
    count, first store ready, stores done, loads issued, rows ready) of one LOOP_CONV_WS tile
    (loop_conv_stream_cycles' tuple). `first store ready` and `stores done` are from the start of
    its computes: when the first store's rows have left the array, and the least time its stores
    take to end with each mvout after the rows it reads (the store unit runs them in order, DIM
    pixels by DIM channels, output channel blocks innermost, while the execute FSM runs output
    channel block by block: on a tile of few output pixels the first blocks' stores run under the
    later blocks' computes; a pooled tile's stores after its last block's first rows). The last
    two are from the input loads' start: when the execute FSM may start (its loop's last load has
    entered the reservation station, which holds rs_ld loads until they land) and the least time
    its computes take to start so that each finds its input row landed (the computes run weight
    block by weight block, over the images and output rows; the first output channel block's taps
    read every row before any later block). The commands are baco.gemmini.loop_conv_stream's."""
    k, d = DEFAULT_CONSTANTS, cfg.dim
    lat = k.dram_latency
    t = conv_tile(d, dilation, downsample, B, orows, ocols, och, kr, kc, ich, irows, icols, first, last, pad_rows,
                  pad_cols, pixels=pixels)
    occ, n_before, input_ends = _tile_loads(cfg, t, bias, first, landing=True)
    n_loads, before = len(occ), sum(occ[:n_before])
    inputs = sum(occ) - before
    # the loop unit issues a command a cycle; the last load enters once the rs_ld-th before it has landed
    issued = max(n_loads - n_before, sum(occ[:n_loads - cfg.rs_ld]) - before + lat if n_loads > cfg.rs_ld else 0)
    och_blocks, col_groups, kch_blocks = execute_blocks(t, d)
    tap_blocks = len(col_groups) * len(kch_blocks)      # weight blocks of one tap row
    blocks = execute_block_count(t, d)
    occ = [max(rows, 4) + k.compute_overhead for _, rows in compute_runs(t, d)]
    row_occ = sum(occ)
    per_block = B * orows * row_occ + max(0, d - occ[-1])      # new weights wait on a short last compute
    block = k.accumulating_spacing(per_block, occ[0], d)
    # a block accumulates onto the rows the one before wrote, except the first of an output channel
    # block (LoopConv's order: och -> krow -> kcol -> kch), which starts its own rows
    computes = blocks * block - len(och_blocks) * (block - per_block)
    n_computes = blocks * len(compute_images(t, d)) * orows * len(occ)
    # output row o of tap row t reads input row o * stride + t * dilation (the tile's rows are
    # orows * stride + (kr - 1) * dilation, padding included)
    stride = max(1, (irows + pad_rows - dilation * (kr - 1)) // orows)
    ready = max(rows[min(len(rows) - 1, (o * stride + r * dilation) >> downsample)] + lat
                - r * tap_blocks * block - (b * orows + o) * row_occ
                for r in range(kr) for b, rows in enumerate(input_ends) for o in range(orows))
    stores, n_stores = _tile_stores(cfg, t, out_int8, pool) if last else (0.0, 0)
    first_store, stores_done = _store_times(t, d, occ, row_occ, per_block, block, computes, stores, n_stores, pool)
    return before, inputs, computes, stores, n_computes, n_stores, first_store, stores_done, issued, ready


def _store_times(t: ConvTile, d: int, occ: list, row_occ: float, per_block: float, block: float, computes: float,
                 stores: float, n_stores: int, pool) -> tuple[float, float]:
    """(first store ready, stores done) of a tile from the start of its computes (_tile_costs): each
    mvout (store_row's, for every image and output row) once the compute of its pixels in the last
    weight block of its output channel block has left the array's pipeline, the store unit's mvouts
    in order, each stores / n_stores; a pooled tile's (pooled_stores) all after the last weight
    block's first rows."""
    if not n_stores:
        return 0.0, 0.0
    depth = DEFAULT_CONSTANTS.array_depth_factor * d
    if pool is not None:
        ready = computes - per_block + occ[0] + depth
        return ready, ready + stores
    each, och_blocks = stores / n_stores, -(-t.ochs // d)
    span = computes / och_blocks                    # one output channel block's weight blocks
    ends = [sum(occ[:c + 1]) for c in range(len(occ))]
    row = store_row(t, d)
    first = last = None
    left = n_stores
    for b in range(t.batches):
        for r in range(t.orows):
            pixel = (b * t.orows + r) * row_occ
            for ocol, och, _, _ in row:
                ready = (och // d + 1) * span - per_block + pixel + ends[min(ocol // d, len(ends) - 1)] + depth
                first = ready if first is None else first
                last = max(last or 0.0, ready + left * each)
                left -= 1
    return first, last


COUNT_KEYS = ("macs", "registers", "scratchpad_reads", "scratchpad_writes", "accumulator_reads",
              "accumulator_writes", "dram_bytes_in", "dram_bytes_out")


@functools.lru_cache(maxsize=65536)
def tile_counts(cfg: GemminiConfig, dilation: int, downsample: int, out_int8: bool, bias: bool, tile: tuple) -> dict:
    """What one LOOP_CONV_WS tile (loop_conv_stream_cycles' tuple) moves and computes, its commands
    (baco.gemmini.loop_conv_stream's) counted as the cycle model counts them (baco.sim.timing's
    stats): each mvin's rows x cols written (its bytes read from DRAM unless from address 0), each
    weight block's registers and scratchpad reads once, each compute's A rows read, its MACs and
    its output rows read and written in the accumulator, each mvout's rows read (pooled: every
    window position) and stored. Cached across walks, as _tile_costs is (callers must not change
    the dict)."""
    d, ib = cfg.dim, cfg.input_bytes
    t = conv_tile(d, dilation, downsample, *tile[:13], pixels=tile[14] if len(tile) > 14 else None)
    first, last, pool = tile[9], tile[10], tile[13] if len(tile) > 13 else None
    c = dict.fromkeys(COUNT_KEYS, 0)
    if first:
        bias_mvins = bias_row(t, d, cfg.max_block_len_acc)
        bias_elems = t.batches * t.orows * sum(rows * cols for _, _, rows, cols in bias_mvins)
        c["accumulator_writes"] += bias_elems
        c["dram_bytes_in"] += bias_elems * cfg.acc_bytes if bias else 0
    weights = sum(t.krows * t.kcols * rows * cols for _, tap in weight_blocks(t, d, cfg.max_block_len)
                  for _, rows, cols in tap)
    row = [(rows * cols, pad) for _, _, rows, cols, pad in input_row(t, d, cfg.max_block_len)]
    stored = [padding for _ in input_images(t, d, cfg.max_block_len) for _, padding in input_rows(t)]
    moved = sum(n for n, pad in row if not pad) * stored.count(False)
    c["scratchpad_writes"] += weights + sum(n for n, _ in row) * len(stored)
    c["dram_bytes_in"] += (weights + moved) * ib
    och_blocks, col_groups, kch_blocks = execute_blocks(t, d)
    taps = t.krows * sum(p for _, p in col_groups) * sum(n for _, n in kch_blocks)       # K over an och block's
    block_js = sum(j for _, j in och_blocks) * t.krows * len(col_groups) * len(kch_blocks)   # J over all blocks
    pixels = len(compute_images(t, d)) * t.orows * sum(i for _, i in compute_runs(t, d))  # I under each block
    c["registers"] += taps * t.ochs
    c["macs"] += pixels * taps * t.ochs
    c["scratchpad_reads"] += taps * t.ochs + pixels * taps * len(och_blocks)
    c["accumulator_reads"] += pixels * block_js
    c["accumulator_writes"] += pixels * block_js
    if last and pool is not None:
        porows, pocols, size = pool
        cols = sum(n for _, n in pooled_stores(t, d)) * t.batches
        c["accumulator_reads"] += porows * pocols * size ** 2 * cols
        c["dram_bytes_out"] += porows * pocols * cols * ib
    elif last:
        out = t.batches * t.orows * sum(rows * cols for _, _, rows, cols in store_row(t, d))
        c["accumulator_reads"] += out
        c["dram_bytes_out"] += out * (ib if out_int8 else cfg.acc_bytes)
    return c


def _walk_tile(st: list, costs: tuple, cfg: GemminiConfig, *, slot: int, half: int, out_half: int,
               zero_fills: bool) -> int:
    """Advances the walk state `st` (indices LD..READ) by one tile of `costs` (_tile_costs) in loop
    `slot`, reading scratchpad `half` and writing accumulator half `out_half`; 1 if it stores, else 0."""
    lat, depth = DEFAULT_CONSTANTS.dram_latency, DEFAULT_CONSTANTS.array_depth_factor * cfg.dim
    before, inputs, computes, stores, n_c, n_s, first_store, stores_done, issued, ready = costs
    first_read, last_read = st[READ + 2 * out_half], st[READ + 2 * out_half + 1]
    ld_start = max(st[FREED + slot], st[LD], last_read if zero_fills else 0.0)
    in_start = max(ld_start + before, st[COMPUTED + half])
    st[LD] = in_start + inputs
    ex_start = max(st[EX], in_start + issued, first_read)
    st[EX] = ex_end = max(ex_start + computes, in_start + ready + computes, last_read)
    st[COMPUTED + half] = ex_end
    ex_issued = ex_end + depth - computes * min(1.0, cfg.rs_ex / 2 / max(n_c, 1))
    st[FREED + slot] = ex_issued
    if not n_s:
        return 0
    ex_begin = ex_end - computes
    st_start = max(st[ST], ex_issued)
    st[ST] = max(st_start + stores, ex_begin + stores_done)
    st[READ + 2 * out_half] = max(st_start, ex_begin + first_store) + stores / n_s
    st[READ + 2 * out_half + 1] = st[ST]
    if n_s > cfg.rs_st:     # the store FSM issues its last command once all but rs_st are out
        st[FREED + slot] = max(ex_issued, st[ST] - cfg.rs_st * stores / n_s + lat)
    return 1
