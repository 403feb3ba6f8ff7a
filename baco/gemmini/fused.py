"""What the fused programs of baco.kernels.fused hold on chip. One definition for the compiler
(the kernels' blocks) and the tuner (a fused edge's capacity during the search): the arithmetic
works on ints and on torch tensors alike.

A GEMM chain Y = f2(f1(X·W1 + b1)·W2 + b2), the hidden layer kept in the accumulator (the execute
unit reads it back as scaled, ReLU'd int8: the A operand of the second product, no mvout, no
mvin). Per program (BLOCK_M rows of X): in the scratchpad an X block (BLOCK_M x BLOCK_K), a W1
block (BLOCK_K x H) and the whole W2 (H x N); in the accumulator the hidden block (BLOCK_M x H,
which starts as the bias rows) and the output block (BLOCK_M x N). H and N are whole (one block
each, padded to DIM).

A GEMM with its residual add, Y = g(r(f(X·W + b))·sa + R·sr): the GEMM kernel's blocks (X
BLOCK_M x BLOCK_K, W BLOCK_K x BLOCK_N; the accumulator block BLOCK_M x BLOCK_N) plus a
BLOCK_N x BLOCK_N identity in the scratchpad (moved in once per product reading it: twice) and
two more accumulator blocks: the layer's int8
output multiplied back in exactly, and the sum the residual is loaded into.

A depthwise -> pointwise pair Y = f2(f1(dw(X) + b1)·Wp + b2) (baco.kernels.fused_dwpw), one
program per ROWS output rows (or BLOCK_M output columns of a row) and BLOCK_N output channels:
per block of DIM input channels, in the scratchpad the tap's input block (ROWS*BLOCK_M x DIM),
its diagonal DIM x DIM weight tile and Wp's block (DIM x BLOCK_N); in the accumulator the
depthwise block (ROWS*BLOCK_M x DIM, read back as the pointwise A operand) and the output block
(ROWS*BLOCK_M x BLOCK_N).
Pure Python: imports only baco.gemmini.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter, deque
from dataclasses import replace
from typing import NamedTuple

from baco.gemmini.config import GemminiConfig, loop_unit_half
from baco.gemmini.isa import MIN_FEED_ROWS
from baco.gemmini.loop_ws_timing import LoopWs, local_move_cycles, loop_ws_stream_cycles
from baco.gemmini.schedule import (LOOP_WS_STEP_COMMANDS, Footprint, bias_zero_moves, capacity_problems,
                                   default_gemm_schedule, dma_cycles, explicit_program_versions, instructions, pieces)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants


def _tiles(v, dim):
    """⌈v / dim⌉ of numbers, or of tensors (their ceil: no floor division, which has no gradient)."""
    q = v / dim
    return q.ceil() if hasattr(q, "ceil") else math.ceil(q)


def gemm_chain_footprint(block_m, block_k, H, N, dim, double_buffer: bool = False) -> Footprint:
    """Local rows of one program of the fused chain (block_m rows, block_k columns of X a step):
    block_m and block_k may be tensors (the tuner's tiles), H and N are the layers' widths.
    double_buffer: the K loop's X and W1 blocks have two homes each (placement's)."""
    m, k, h, n = _tiles(block_m, dim), _tiles(block_k, dim), _tiles(H, dim), _tiles(N, dim)
    return Footprint(sp_rows=((m * k + k * h) * (2 if double_buffer else 1) + h * n) * dim,
                     acc_rows=(m * h + m * n) * dim)


def gemm_resadd_footprint(block_m, block_n, block_k, dim, double_buffer: bool = False) -> Footprint:
    """Local rows of one program of the GEMM + residual add (numbers or tensors); double_buffer:
    the K loop's X and W blocks twice. The identity has a block per product reading it (two)."""
    m, n, k = _tiles(block_m, dim), _tiles(block_n, dim), _tiles(block_k, dim)
    return Footprint(sp_rows=((m * k + k * n) * (2 if double_buffer else 1) + 2 * n * n) * dim,
                     acc_rows=3 * m * n * dim)


def dw_pw_footprint(block_rows, block_n, dim) -> Footprint:
    """Local rows of one program of the fused depthwise -> pointwise pair: block_rows output
    pixels (ROWS*BLOCK_M) and block_n output channels (numbers or tensors)."""
    m, n = _tiles(block_rows, dim), _tiles(block_n, dim)
    return Footprint(sp_rows=(m + 1 + n) * dim, acc_rows=(m + m * n) * dim)


def _fits(f: Footprint, cfg: GemminiConfig) -> bool:
    """Whether a program's footprint fits `cfg`'s scratchpad and accumulator (the capacity rule,
    schedule.capacity_problems)."""
    return not capacity_problems(cfg, f.sp_rows, f.acc_rows)


def gemm_chain_double_buffered(block_m: int, block_k: int, H: int, N: int, cfg: GemminiConfig) -> bool:
    """Whether the chain's program at these blocks double-buffers its K loop: where the second
    homes of its X and W1 blocks fit (the kernel's launch and the cycle model both ask here)."""
    return _fits(gemm_chain_footprint(block_m, block_k, H, N, cfg.dim, double_buffer=True), cfg)


def gemm_resadd_double_buffered(block_m: int, block_n: int, block_k: int, cfg: GemminiConfig) -> bool:
    """Whether the GEMM + residual add's program double-buffers its K loop (as gemm_chain_double_buffered)."""
    return _fits(gemm_resadd_footprint(block_m, block_n, block_k, cfg.dim, double_buffer=True), cfg)


# The blocks a fused program runs with when its producer has no schedule of its own (a design's
# layer marked to run its kernel's default program, Cost.schedule_source "default", which
# baco.model.lower compiles without one; or no design): the chain's requested (BLOCK_M, BLOCK_K),
# clipped and halved by gemm_chain_blocks as any request, and the residual add's
# gemm_resadd_default_blocks. The launches (baco.kernels.fused) and the tuner's price of a fused
# group (fusion.fused_program_cycles) both take them from here.
CHAIN_DEFAULT_BLOCKS = (32, 64)


def gemm_resadd_default_blocks(M: int, N: int, K: int, cfg: GemminiConfig) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K) of the GEMM + residual add without a schedule: the GEMM kernel's
    default for its M x N x K with an int8 output (default_gemm_schedule; the program is WS
    whatever dataflow that names), BLOCK_N at most 2·DIM (the two identity products cost 2·BM·BN²
    MACs a block against the GEMM's BM·BN·K: MobileNetV2 64x64's project convs + add at 16/96/64,
    16/64/64 and 16/160/64 ran 13,126, 5,896 and 31,639 cycles on the ISS, at 16/32/64 10,391,
    5,064 and 20,970), its blocks halved to multiples of DIM (BLOCK_N, the widest, first) while the
    fused program, which holds three output blocks and two identities, does not fit `cfg` (the
    GEMM's default sizes one output block). At DIM x DIM x DIM blocks that do not fit, those (the
    launch's capacity check names them)."""
    s, d = default_gemm_schedule(M, N, K, cfg, out_int8=True), cfg.dim
    bm, bn, bk = s.block_m, min(s.block_n, 2 * d), s.block_k
    while not _fits(gemm_resadd_footprint(bm, bn, bk, d), cfg) and max(bm, bn, bk) > d:
        if bn > d and bn >= bm:
            bn = max(d, _tiles(bn // 2, d) * d)
        elif bm > d:
            bm = max(d, _tiles(bm // 2, d) * d)
        else:
            bk = max(d, _tiles(bk // 2, d) * d)
    return bm, bn, bk


def gemm_chain_blocks(M: int, K: int, H: int, N: int, block_m: int, block_k: int,
                      cfg: GemminiConfig) -> tuple[int, int] | None:
    """(BLOCK_M, BLOCK_K) of the fused chain on `cfg`: the requested blocks (the producer's
    schedule), clipped to the matrices (padded to DIM) and halved to multiples of DIM, BLOCK_K
    first, while one program does not fit; None if DIM x DIM blocks do not fit (the chain cannot
    be fused)."""
    d = cfg.dim
    bm = min(max(block_m, 1), _tiles(M, d) * d)
    bk = min(max(block_k, 1), _tiles(K, d) * d)
    while True:
        f = gemm_chain_footprint(bm, bk, H, N, d)
        if _fits(f, cfg):
            return bm, bk
        if bk > d and f.sp_rows > cfg.sp_rows:
            bk = max(d, _tiles(bk // 2, d) * d)
        elif bm > d:
            bm = max(d, _tiles(bm // 2, d) * d)
        else:
            return None


class ChainLoops(NamedTuple):
    """The chain on the loop unit's row blocks: block_m rows of X a row block, `group` row blocks
    whose H the scratchpad holds at once."""
    block_m: int
    group: int


def gemm_chain_loop_ws_footprint(block_m, group, K, H, N, dim) -> Footprint:
    """The chain on the loop unit (Gemmini master's spad_only LOOP_WS, GemminiConfig.mvout_spad;
    baco.kernels.fused_loops) with row blocks of block_m rows, `group` at a time: in the scratchpad
    two X blocks (block_m x K, alternate layer-1 loops), W1 (K x H), the group's H (int8, group x
    block_m x H) and W2 (H x N), placed by funct 24; in an accumulator half a loop's sums,
    block_m x H (layer 1) or block_m x N (layer 2). Rows of the whole scratchpad and of one
    accumulator half (loop_unit_half)."""
    m, k, h, n = _tiles(block_m, dim), _tiles(K, dim), _tiles(H, dim), _tiles(N, dim)
    return Footprint(sp_rows=(2 * m * k + k * h + group * m * h + h * n) * dim, acc_rows=m * max(h, n) * dim)


def gemm_chain_loop_ws_fits(block_m, group, K, H, N, cfg: GemminiConfig) -> bool:
    """Whether the chain on the loop unit with these row blocks fits `cfg` (block_m a positive
    multiple of DIM, a group of at least one, gemm_chain_loop_ws_footprint within the scratchpad
    and one accumulator half): the command stream's check and the compiler's (chain-loop-ws)."""
    d = cfg.dim
    need = gemm_chain_loop_ws_footprint(block_m, group, K, H, N, d)
    return cfg.mvout_spad and block_m >= d and block_m % d == 0 and group >= 1 and \
        need.sp_rows <= cfg.sp_rows and need.acc_rows <= loop_unit_half(cfg).acc_rows


def gemm_chain_loop_ws_blocks(M: int, K: int, H: int, N: int, cfg: GemminiConfig) -> ChainLoops | None:
    """The largest row block (a multiple of DIM, at most M's) whose program fits
    (gemm_chain_loop_ws_footprint with a group of one), then the most of them a group; None if
    DIM rows do not fit."""
    d = cfg.dim
    k, h, n, rows = (math.ceil(v / d) for v in (K, H, N, M))
    sp, acc = cfg.sp_rows // d, loop_unit_half(cfg).acc_rows // d       # in DIM-row blocks
    m = min(rows, acc // max(h, n), (sp - k * h - h * n) // (2 * k + h))
    if m < 1:
        return None
    return ChainLoops(m * d, min(math.ceil(rows / m), (sp - 2 * m * k - k * h - h * n) // (m * h)))


# DIM x DIM blocks of a layer's output one LOOP_WS computes (its D blocks): LoopMatmul's execute
# FSM waits until its loop's LdD has moved all of them in (LoopMatmul.scala, LoopMatmulExecute's
# ldd_ahead), and LdD goes before LdA/LdB (the arbiter's priority), so a layer as one loop starts
# computing only after all its bias rows are in; loops of a few blocks, two held at once, load one
# loop's D while the other computes
LOOP_TILE_BLOCKS = 4


def chain_loop_tile_shape(col_blocks):
    """(row blocks, column blocks) of a layer's loops over an output of col_blocks DIM columns:
    up to LOOP_TILE_BLOCKS columns, and more rows a loop only when one loop spans every column
    (a spad_only store lays its blocks out by the loop's own columns, so H stays one row block
    after the other, as the second layer reads it)."""
    cols = min(col_blocks, LOOP_TILE_BLOCKS)
    return max(1, LOOP_TILE_BLOCKS // cols), cols


def chain_loop_tiles(row_blocks, row_pad, col_blocks, col_pad):
    """The loops of a layer over row_blocks x col_blocks DIM blocks (the last row and column
    padded by row_pad, col_pad): ((i0, rows, pad_i), (j0, cols, pad_j)) each, column groups outer
    (a group's B moves in with its first loop, the next group's while the rows of this one compute)."""
    rows, cols = chain_loop_tile_shape(col_blocks)
    for j0 in range(0, col_blocks, cols):
        mj = min(cols, col_blocks - j0)
        for i0 in range(0, row_blocks, rows):
            mi = min(rows, row_blocks - i0)
            yield (i0, mi, row_pad if i0 + mi == row_blocks else 0), (j0, mj, col_pad if j0 + mj == col_blocks else 0)


# RISC-V instructions the core runs issuing the chain on the loop unit as the compiler emits it
# (chain-loop-ws: one row block a program), per LOOP_WS tile (its funct 24, the loop's commands,
# the inner scf.for iteration's addresses), per column group (the outer scf.for's iteration), per
# program (its guards and configs) and per launch: a non-negative least-squares fit (relative
# error) of the ISS's counts (rdcycle around the grid loop, no cycle model) of 17 launches of 1-13
# programs and 2-153 tiles, DIM 16 and 8, ragged widths (benchmarks/cpu_constants.py's
# CHAIN_LOOPS: 371-9933 instructions, within 0.90-1.09x). Refitted on the launch-table runner
# (codegen.riscv.launch_wrapper; cpu_constants.py --only chain_loop, the same 17 launches of 353-9316
# instructions): within 0.90-1.10x, median 0.99 (the table before on that runner: 0.99-1.23x,
# median 1.05, its one-row launches 1.18-1.23x). Refitted once the chain's ISS programs were
# compiled for their shapes and grid (gemm_chain_kernel's specialize_shapes="iss": the guards and
# configs of a program fold; cpu_constants.py --only chain_loop, the same 17 launches): within
# 0.65-1.18x, median 1.02, median error 9.9% (the table before on those programs: 1.38-3.27x).
# Refitted on the runner that loops over a grid's constant bounds and writes the grid arrays only
# where the kernel reads them (codegen.riscv.grid_reads; the same 17 launches): within 0.52-1.23x,
# median 1.01, median error 6.9% (the table before on that runner: 0.65-1.58x, 30.4%)
CHAIN_LOOP_WS_INSTRUCTIONS = {"tile": 13.2, "group": 29.9, "program": 0.0, "launch": 0.0}
# RoCC commands of one program: per tile a funct 24 and a LOOP_WS; per program config_ex, 4
# config_ld and 2 config_st; after the launch's last program the loop slots' halves back (two
# funct 24 and a LOOP_WS of one block that moves nothing: chain-loop-ws's _restore_halves)
CHAIN_LOOP_WS_COMMANDS = {"tile": 1 + LOOP_WS_STEP_COMMANDS, "program": 1 + 4 + 2,
                          "restore": 2 + LOOP_WS_STEP_COMMANDS}


def _chain_layer_loops(row_blocks, row_pad, J, pad_j, K, pad_k, *, first_program: bool, layer1: bool) -> list:
    """One layer of a program as the compiler emits it (chain_loop_tiles' LOOP_WSs): X's rows moved
    in by layer 1's first column group (layer 2 reads H where layer 1 stored it), the weights by the
    first program's first row of tiles, each tile's bias; after the layer's config_st."""
    cpu = CHAIN_LOOP_WS_INSTRUCTIONS
    return [LoopWs(I=mi, J=mj, K=K, pad_i=qi, pad_j=qj, pad_k=pad_k, load_a=layer1 and j0 == 0,
                   load_b=first_program and i0 == 0, bias=True, full_c=False, after_raw=n == 0,
                   spad_store=layer1, cpu=cpu["tile"] + (cpu["group"] if i0 == 0 else 0.0),
                   commands=CHAIN_LOOP_WS_COMMANDS["tile"])
            for n, ((i0, mi, qi), (j0, mj, qj)) in enumerate(chain_loop_tiles(row_blocks, row_pad, J, pad_j))]


def gemm_chain_loop_ws_loops(M: int, K: int, H: int, N: int, cfg: GemminiConfig) -> list:
    """The compiled chain on the loop unit (baco.passes.chain_loop_ws at gemm_chain_launch's blocks:
    one row block of gemm_chain_loop_ws_blocks' a program) as the LOOP_WS walk's loops, run-length
    encoded (baco.gemmini.loop_ws_timing): per program layer 1's tiles (X, W1, D = b1; spad_only,
    their C = H moved into the scratchpad by MVOUT_SPADs) and layer 2's (A = H in the scratchpad,
    W2, D = b2, int8 Y to DRAM), each layer's first after a config_st (a raw command: it waits for
    the loop before to have issued every command); W1 and W2 moved in by the first program only.
    The program's and the launch's instructions go before its first tile; after the last program,
    a one-block LOOP_WS that moves nothing (the loop slots' halves back). A chain whose DIM-row
    block does not fit (or a Gemmini without the ext-spad commands) is a ValueError."""
    blocks = gemm_chain_loop_ws_blocks(M, K, H, N, cfg) if cfg.mvout_spad else None
    if blocks is None:
        raise ValueError(f"the chain M={M}, K={K}, H={H}, N={N} does not run on the loop unit of this Gemmini "
                         f"(mvout_spad={cfg.mvout_spad}): gemm_chain_loop_ws_blocks finds no row block")
    d, bm, cpu = cfg.dim, blocks.block_m, CHAIN_LOOP_WS_INSTRUCTIONS
    (kb, pk), (hb, ph), (nb, pn) = ((_tiles(v, d), _tiles(v, d) * d - v) for v in (K, H, N))

    def program(rows: int, first: bool) -> list:
        ib = _tiles(rows, d)
        loops = _chain_layer_loops(ib, ib * d - rows, hb, ph, kb, pk, first_program=first, layer1=True) + \
            _chain_layer_loops(ib, ib * d - rows, nb, pn, hb, ph, first_program=first, layer1=False)
        start = loops[0]
        loops[0] = replace(start, cpu=start.cpu + cpu["program"] + (cpu["launch"] if first else 0.0),
                           commands=start.commands + CHAIN_LOOP_WS_COMMANDS["program"])
        return loops
    programs = _tiles(M, bm)
    last = M - (programs - 1) * bm
    items = [(program(min(bm, M), True), 1)]
    if programs > 2:
        items.append((program(bm, False), programs - 2))
    if programs > 1:
        items.append((program(last, False), 1))
    # the halves' restore: its CPU cost taken as a tile's (not fitted: constants, no address arithmetic)
    restore = LoopWs(I=1, J=1, K=1, load_a=False, load_b=False, store=False, full_c=False, cpu=cpu["tile"],
                     commands=CHAIN_LOOP_WS_COMMANDS["restore"])
    items[-1] = (items[-1][0] + [restore], 1)
    return items


def gemm_chain_loop_ws_program_cycles(M: int, K: int, H: int, N: int, cfg: GemminiConfig,
                                      k: TimingConstants = DEFAULT_CONSTANTS) -> dict:
    """Cycles of the compiled chain on the loop unit (gemm_chain_loop_ws_loops), as
    gemm_chain_program_cycles reports the explicit chain's: Gemmini's (`gemmini`: the LoopMatmul
    walk, commands arriving for free), the core's issuing them (`cpu`, CHAIN_LOOP_WS_INSTRUCTIONS)
    and end to end (`cycles`: the walk with the core issuing, waiting for each config_st)."""
    loops = gemm_chain_loop_ws_loops(M, K, H, N, cfg)
    walk = loop_ws_stream_cycles(loops, cfg, k)
    count = lambda field: sum(n * sum(getattr(lp, field) for lp in item) for item, n in loops)  # noqa: E731
    return {"cycles": walk["cycles"], "gemmini": walk["gemmini"], "cpu": count("cpu") * k.cpu_cycles_per_instruction,
            "commands": count("commands")}


def _block_moves(row_tiles, col_tiles, elem_bytes, cfg, k, rows, block_len) -> float:
    """DMA cycles filling a block of row_tiles x col_tiles DIM x DIM tiles: DIM rows (of the
    block's `rows`, when fewer: a ragged last tile moves the rows that exist) and up to
    `block_len` tiles a command."""
    d, mbl = cfg.dim, block_len
    full, rest = divmod(col_tiles, mbl)

    def tile_row(r):
        return full * dma_cycles(r, mbl * d * elem_bytes, cfg, k) + (dma_cycles(r, rest * d * elem_bytes, cfg, k)
                                                                     if rest else 0)
    whole, ragged = divmod(min(rows, row_tiles * d), d) if rows is not None else (row_tiles, 0)
    return whole * tile_row(d) + (tile_row(ragged) if ragged else 0)


# RISC-V instructions the core runs issuing a fused program's explicit stream, one table per kernel
# (their loops differ: the residual add's K step costs more and its program less): per program,
# per K step and per RoCC command (the commands the model counts, the compiled stream's), a
# non-negative least-squares fit (relative error) of the ISS's counts of each kernel's 11 programs
# (DIM 16 and 32, ragged shapes; 2.1k-49k instructions; benchmarks/cpu_constants.py --only fused):
# the chain's within 0.84-1.15x, the residual add's within 0.83-1.09x (refitted after a K loop
# that runs once became a copy of its body and a bias covering its block lost its zero fill: the
# old tables were 0.83-1.26x and 0.92-1.35x)
# Refitted with an interior table ("interior_*": programs with all blocks full, _Launch.interior)
# once those ran the version without boundary clamps (baco.passes.interior). The chain's edge
# programs pay per DIM-wide column block of H and of N ("column": each layer's column loops),
# which a tiny chain has few of (a per-program share priced tiny chains 1.14-1.86x of the ISS), and
# so do the interior ones. Refitted with a ragged-K table ("ragged_k_*": full row and column
# blocks, only the last K step short, _Launch.ragged_k; the chain's programs classified by their
# rows and K steps alone, its H and N windows being left clamped in every version) once those ran
# the ragged-K version (benchmarks/cpu_constants.py --only fused): the chain's 21 programs (16 of
# 48-1024 rows, 5 tiny, 9 with ragged-K programs) within 0.91-1.11x, median error 4.6%, the
# residual add's 15 within 0.65-1.26x, median error 2.3% (the tables before, which priced
# ragged-K programs, and the chain's full-row programs of an H or N not a multiple of DIM, as edge
# ones: 0.84-1.91x, 10.1%, and 0.66-2.46x, 17.4%).
# The residual add's edge, interior and ragged-K programs pay per column block too ("column": the
# DIM-wide columns of its block each K step's product loops over, _resadd_launch), refitted with
# MobileNetV2 64x64's four project convs at their default blocks: its 4-row 960 -> 160 program (15
# K steps of 10 columns) was priced 0.76x of the ISS's instructions (24,620 against 32,191), now
# 0.99x; the 19 programs within 0.65-1.26x, median error 3.3% -> 0.69-1.17x, 2.8%.
# The chain's programs pay per output tile too ("tile": DIM x DIM tiles of a program's rows x N, each
# the second layer's bias mvin, products and mvout, _chain_launch), refitted with MobileNetV2
# 64x64's project -> expand chain (1024 x 32 -> 16 -> 96, a one-block H) at 80/32 (5 x 6 output
# tiles a program) and at 32/32: their instructions were priced 0.65x and 1.06x of the ISS's
# (21,028 against 32,125; 39,319 against 37,032), now 0.97x and 1.09x; the chain's 23 programs
# within 0.93-1.09x (benchmarks/cpu_constants.py --only fused; 0.65-1.11x before).
# Refitted once the kernel read its arguments from the launch table (codegen.riscv.launch_wrapper:
# ~30-60 fewer instructions a program; benchmarks/cpu_constants.py --only fused, the same programs:
# the chain's 23 of 740-36k instructions, the residual add's 19 of 650-40k): the chain's within
# 0.91-1.08x, median ratio 0.99 (the table before, on that runner: 0.95-1.14x, 1.03; the tiny
# chains 1.00-1.14x -> 0.94-1.05x), the residual add's within 0.69-1.21x, median 1.01 (0.70-1.32x,
# 1.03; its outliers the 64x576x96 program at blocks 16/96/192, 0.69x, and the DIM 32 256x192x64,
# 1.21x).
# Refitted on the launch's own instructions (rdcycle around the grid loop on the ISS without the
# cycle model, as CHAIN_LOOP_WS_INSTRUCTIONS and the LOOP_WS tables: the ISS's whole-run count the
# tables were fitted on adds the harness's start-up, 161 instructions, which rdcycle around the
# launch does not time; the end to end, _Timeline's core, issues from the window's start;
# benchmarks/cpu_constants.py --only fused, the same programs): the chain's 23 within 0.87-1.08x,
# median 1.00 (the table before against those counts: 0.95-1.26x, median 1.05; the tiny chains
# 1.14-1.26x, now 0.99-1.06x), the residual add's 19 within 0.68-1.17x, median 1.00 (0.70-1.30x, 1.03).
# Refitted once both kernels' ISS programs were compiled for their shapes and grid
# (specialize_shapes="iss": index arithmetic, bounds and a grid axis of one program fold; the ISS's
# instructions 0.12-0.84x of before on the chain's programs, 0.26-1.00x on the residual add's;
# benchmarks/cpu_constants.py --only fused, the programs before and the residual add's at the
# default blocks with BLOCK_N at most 2·DIM and the BERT layer's out_proj + add): the chain's 23
# within 0.56-1.38x, median 0.90, median error 22.2%, the residual add's 23 within 0.49-1.35x,
# median 0.99, 14.0% (the tables before against those counts: 0.76-3.58x, 11.0%, and 0.66-4.68x,
# 17.1%). What folds depends on the blocks and grid (a program's whole column loop where one
# column block covers N), which these per-step and per-command terms do not see.
# Terms that see it (_Launch.terms): a grid of one program compiles for its one block whatever
# its version (single_*: 126-903 instructions on the chain's, the general code of its blocks in a
# larger grid 418-6,514), a program in a larger grid pays for its axis (row_axis, column_axis:
# its pid's address arithmetic) and, where the K loop's last step is short, the general code's
# clamps each step (k_tail_step); refitted (benchmarks/cpu_constants.py --only fused, the same
# programs): the chain's 23 within 0.58-1.15x, median 1.01, median error 4.1% (the table before:
# 0.56-1.38x, 22.2%), the residual add's 23 within 0.60-1.28x, median 0.99, 9.4% (0.49-1.35x,
# 14.0%); left: the residual add's 64x576x96 at 16/96/192 (0.60x) and its ragged programs in a
# larger grid (0.71-0.77x).
# Refitted on the runner that loops over a grid's constant bounds (codegen.riscv.grid_reads: ~30
# instructions fewer a one-program launch; the same programs): the chain's 23 within 0.52-1.16x,
# median 1.01, median error 6.3% (the table before on that runner: 0.61-1.39x, 9.1%; the tiny
# chains 1.07-1.39x), the residual add's within 0.60-1.31x, median 0.99, 8.9% (0.60-1.34x, 9.7%).
# Refitted once the general copy of a kernel compiled for its launch ran the last program of an axis
# whose window is short with its id a constant (baco.passes.interior's _version_last_program: e.g.
# the chain 40x16x32x16 at 16/16, 672 -> 421 instructions; the same programs): the chain's 23 within
# 0.52-1.16x, median 1.01, median error 8.4% (the table before, on that code: 0.52-1.94x, median
# 1.07, 11.3%), the residual add's within 0.60-1.32x, median 0.99, 8.9% (0.60-1.65x, 0.99, 8.3%).
FUSED_INSTRUCTIONS = {"chain": {"program": 0.0, "step": 0.0, "command": 12.9, "column": 1.2,
                                "interior_program": 0.0, "interior_step": 0.0,
                                "interior_command": 1.6, "interior_column": 0.0,
                                "ragged_k_program": 0.0, "ragged_k_step": 241.4,
                                "ragged_k_command": 2.6, "ragged_k_column": 0.0, "tile": 51.3,
                                "interior_tile": 33.1, "ragged_k_tile": 0.0, "single_program": 0.0,
                                "single_step": 0.0, "single_command": 3.4, "single_column": 28.6,
                                "single_tile": 0.0, "row_axis": 0.0, "k_tail_step": 60.8},
                      "resadd": {"program": 0.0, "step": 17.2, "command": 1.6, "column": 37.7,
                                 "interior_program": 0.0, "interior_step": 0.0,
                                 "interior_command": 3.4, "interior_column": 18.8,
                                 "ragged_k_program": 0.0, "ragged_k_step": 117.7,
                                 "ragged_k_command": 2.7, "ragged_k_column": 0.0,
                                 "single_program": 77.0, "single_step": 0.0, "single_command": 1.8,
                                 "single_column": 74.7, "row_axis": 198.3, "column_axis": 0.0,
                                 "k_tail_step": 125.0}}


class _Timeline:
    """Programs' command streams on the three queues as the cycle model runs them (baco.sim.timing):
    the load, execute and store units each in order, in parallel, a command starting when its unit
    is free and its rows are (a compute once its operands' mvins are done, a mvin once the computes
    reading the rows it overwrites are), a product's computes of one output column chained through
    the array's pipeline (a compute accumulating onto the rows the previous one wrote waits for
    them); dispatched in program order, so the commands after a run of mvins wait for the load
    station to take them (GemminiConfig.rs_ld), the mvins and stores after a product for the
    execute station (rs_ex), and the commands after a run of mvouts (the next program's mvins) for
    the store station (rs_st: until all but rs_st of them are done; a program of many output tiles,
    MobileNetV2's 1024 x 32 -> 16 -> 96 chain at 80/32, was 0.83x of the cycle model without it).
    Kept at block granularity: a product's columns, a window's mvins.
    `issuing` (else the commands arrive for free): the core issuing them, as the ISS with the cycle
    model runs it (baco.sim.timing's RoCC issue): each command once the core has run the
    instructions before it (begin_program: FUSED_INSTRUCTIONS' per-command share, `cpc` cycles,
    before every command, and the program's other terms spread over its mvins and mvouts,
    `move_cycles` more before each), no command starting before the core issued it, and the core
    waiting at a command until its reservation station has room (a mvin until the mvin rs_ld
    before is done, a preload, compute or config_ex until the execute command rs_ex before it is,
    across products and programs, a mvout until the mvout rs_st before is) and until the commands
    before it were dispatched (ld_gate); `core` is when the core issued the last command. A
    double-buffered K loop's next step's mvins are issued among the step's computes, a share
    before each output column as baco.passes.prefetch spreads them (_Stream, product's `spread`):
    issued after the whole product, they waited for the core's stall on the execute station and
    held the next product back (the BERT layer's 32x768x768 residual add at 32/64/32 was 1.16x
    of the ISS end to end, Gemmini's side alone 0.995x). Replaces
    a fixed loss (FUSED_OVERLAP_LOSS, 0.12 of the shorter of Gemmini's work and the core's
    instructions on top of the longer), which priced core-bound tiny chains 1.28-1.30x of the ISS
    and ranked MobileNetV2's 1024 x 32 -> 16 -> 96 chain at 32/32 ahead of 80/32 (benchmarks/
    fused_programs.py --programs: the chains end to end 0.91-1.30x, median error 3.3%, the
    residual adds 0.86-1.12x, 1.5%; now 0.89-1.11x, 3.5%, and 0.88-1.15x, 2.7%)."""

    def __init__(self, cfg, k, issuing: bool = False):
        self.cfg, self.k, self.commands, self.issuing = cfg, k, 0, issuing
        self.ld = self.ex = self.st = self.end = self.core = 0.0
        self.cpc = self.move_cycles = 0.0
        self.moves = 0          # the mvins and mvouts
        self.ld_gate = 0.0      # the commands after a product or a run of stores: those dispatched
        self.ex_gate = 0.0      # when the last product's last output column's commands are dispatched
        self.ld_done = deque(maxlen=cfg.rs_ld + 1)    # the latest mvins' done times (the load station)
        self.st_done = deque(maxlen=cfg.rs_st + 1)    # the latest mvouts' done times (the store station)
        self.ex_done = deque(maxlen=cfg.rs_ex)    # the latest execute commands' done times (the execute station)

    def shift(self, dt: float):
        """Every time later by dt (identical programs repeated: each starts dt after the one before)."""
        self.ld, self.ex, self.st, self.end, self.ld_gate, self.ex_gate, self.core = (
            t + dt for t in (self.ld, self.ex, self.st, self.end, self.ld_gate, self.ex_gate, self.core))
        self.ld_done = deque((t + dt for t in self.ld_done), maxlen=self.ld_done.maxlen)
        self.st_done = deque((t + dt for t in self.st_done), maxlen=self.st_done.maxlen)
        self.ex_done = deque((t + dt for t in self.ex_done), maxlen=self.ex_done.maxlen)

    def begin_program(self, table: dict, version: str, terms: dict, moves: int):
        """A program of `version` ("edge", "interior", "ragged_k", "single": table's terms unprefixed,
        "interior_*", "ragged_k_*", "single_*"; GRID_TERMS unprefixed whatever the version) starts, of
        `moves` mvins and mvouts (_program_moves): its per-command
        instructions (table's "command") run before each command, the rest (`terms`: term -> how
        many times, its own, its K steps', column blocks', output tiles') spread evenly over its
        mvins and mvouts (the ISS's trace: the address arithmetic of the windows and stores and the
        configs before them, ~20-30 instructions a mvin or mvout, ~2-6 a preload or compute)."""
        prefix, cpi = "" if version == "edge" else version + "_", self.k.cpu_cycles_per_instruction
        self.cpc = cpi * table[prefix + "command"]
        others = sum(table.get(name if name in GRID_TERMS else prefix + name, 0.0) * n for name, n in terms.items())
        self.move_cycles = cpi * others / max(moves, 1)

    def _ex_entry(self, done: float, cycles: float = 0.0):
        """The core issuing an execute-station command (after `cycles` of instructions), once the
        station has room (the command rs_ex before it done); it is done at `done` (or, if later,
        once issued)."""
        room = self.ex_done[0] if len(self.ex_done) == self.ex_done.maxlen else 0.0
        self.core = max(self.core + cycles, room)
        self.ex_done.append(max(done, self.core))

    def config_ex(self):
        """A config_ex (the compiler's before a program's first product and before each product
        reading the accumulator): no Gemmini time here, but an execute-station entry until the
        execute unit reaches it."""
        if self.issuing:
            self._ex_entry(self.ex)

    def _mvin(self, cycles: float, gate: float, dram: bool = True) -> float:
        """One mvin of `cycles` into rows free at `gate`: its done time."""
        start = max(self.ld, self.ld_gate, gate)
        if self.issuing:
            issue = self.core + self.cpc + self.move_cycles
            room = self.ld_done[-self.cfg.rs_ld] if len(self.ld_done) >= self.cfg.rs_ld else 0.0
            start = max(start, issue)
            self.core = max(issue, room, self.ld_gate)
        self.ld = start + cycles
        self.ld_done.append(self.ld + (self.k.dram_latency if dram else 0.0))
        self.commands += 1
        self.moves += 1
        return self.ld_done[-1]

    def zeros(self, moves, gate: float = 0.0):
        """Zero mvins (no DRAM) of the given rows each, into rows free at `gate`."""
        for rows in moves:
            self._mvin(local_move_cycles(rows, self.k), gate, dram=False)

    def window(self, rows, cols, elem_bytes, block_len=None, gate: float = 0.0) -> tuple:
        """A boundary-checked load of the rows x cols elements that exist (the compiler's mvins:
        per DIM-row tile, one per chunk of up to `block_len`, default max_block_len, tiles), into
        rows free at `gate`: the done time of each chunk of the last row tile, and a row tile's
        load time."""
        stream = self.stream(rows, cols, elem_bytes, block_len, gate)
        if self.issuing:        # mvin by mvin
            stream.issue(len(stream.moves))
            return stream.result()
        moves, chunks = stream.moves, stream.chunks
        # the last row tiles mvin by mvin (the load station's latest), those before at once
        exact = -(-(self.cfg.rs_ld + 1) // chunks)
        bulk = max(0, len(moves) // chunks - exact) * chunks
        if bulk:
            self.ld = max(self.ld, self.ld_gate, gate) + sum(moves[:bulk])
            self.commands += bulk
            self.moves += bulk
        stream.issued = bulk
        stream.issue(len(moves))
        return stream.result()

    def stream(self, rows, cols, elem_bytes, block_len=None, gate: float = 0.0) -> "_Stream":
        """window's mvins, not yet issued (_Stream.issue)."""
        d = self.cfg.dim
        chunks = pieces(cols, (block_len or self.cfg.max_block_len) * d)
        cycles = {r: [dma_cycles(r, c * elem_bytes, self.cfg, self.k) for c in chunks] for r in set(pieces(rows, d))}
        return _Stream(self, [c for r in pieces(rows, d) for c in cycles[r]], len(chunks), gate)

    def product(self, rows, cols, inner, b_ready: list, b_row_cycles: float, a_ready: float,
                block_len: int, prefetched: bool = False, spread: list | None = None) -> "_Product":
        """The computes of a dot over its operands' tiles (rows x inner times inner x cols elements),
        the compiler's order (output column outer, inner tile, then row tile), B's last row tile's
        chunks of `block_len` tiles done at b_ready (a row tile every b_row_cycles before), A at
        a_ready. A compute feeds its A tile's rows (at least MIN_FEED_ROWS) after its weights, which
        stream in during the compute before (DIM rows); one onto the same output rows as the one
        before waits for those to leave the array's pipeline (array_depth_factor x DIM).
        `prefetched`: the mvins after it come before it in program order (the prefetch pass moves
        a double-buffered K loop's next step's loads ahead of this step's computes), so they do not
        wait for its commands' dispatch. `spread`: those loads, the _Streams whose mvins come a
        share before each output column's computes (baco.passes.prefetch, _Stream.share): that
        column's computes are dispatched once they are (the load station holding rs_ld), and the
        core issues them there."""
        d, k = self.cfg.dim, self.k
        feeds = [max(r, MIN_FEED_ROWS) + k.compute_overhead for r in pieces(rows, d)]
        tn, tk, group, depth = _tiles(cols, d), _tiles(inner, d), sum(feeds), k.array_depth_factor * d
        new = max(group, group - feeds[-1] + d)                    # a group onto other rows
        same = k.accumulating_spacing(new, feeds[0], d)             # onto the rows the group before wrote
        dispatch = self.ld_done[0] if len(self.ld_done) > self.cfg.rs_ld else 0.0
        core, cpc, tm = self.core, self.cpc, len(feeds)
        if self.issuing:
            # the core issues a preload and a compute every 2 cpc: group g (a column's k step, tm
            # computes) starts no earlier than its computes' issue less the rows fed before each
            dispatch = max(dispatch, core)
            lag = max(2 * cpc * i - sum(feeds[:i]) for i in range(tm))
        start = max(self.ex, a_ready, dispatch)
        columns, ends, spread = [], list(itertools.accumulate(feeds)), spread or []
        held = self.cfg.rs_ex // 2
        for n in range(tn):
            if spread:
                # a column's share of mvins once the commands before it are dispatched (ex_gate), its
                # computes once they are (the load station holding rs_ld)
                self.ld_gate = max(self.ld_gate, self.ex_gate)
                for i, stream in enumerate(spread):
                    stream.issue(stream.share(i, len(spread), n + 1, tn))
                if len(self.ld_done) > self.cfg.rs_ld:
                    start = max(start, self.ld_done[0])
            ready = b_ready[min(n // block_len, len(b_ready) - 1)]
            last = max(start + (tk - 1) * same, ready + d + (tk - 1) * max(0.0, same - b_row_cycles))
            if self.issuing:
                issued = [core + 2 * cpc * (g * tm + 1) + lag for g in (n * tk, n * tk + tk - 1)]
                last = max(last, issued[0] + (tk - 1) * same, issued[1])
                self._issue_column(last, tk, same, ends, depth)
            columns.append(last + group + depth)                     # its last computes' results out
            start = last + new
            # its last commands dispatched: when no more than the execute station holds are left
            self.ex_gate = last + group - min(held, tk * tm) * (group + (tk - 1) * same) / (tk * tm)
        for stream in spread:
            stream.issue(len(stream.moves))
        self.ex = start - new + group
        computes = _tiles(rows, d) * tn * tk
        self.commands += 2 * computes
        # the mvins after it wait for its last commands' dispatch: until no more than the execute
        # station holds (a preload and a compute each) are left to start
        if not prefetched and computes > held:
            first = columns[0] - group - depth - (tk - 1) * same
            self.ld_gate = max(self.ld_gate, self.ex - held * (self.ex - first) / computes)
        return _Product(columns, last - (tk - 1) * same + feeds[0] + depth)

    def _issue_column(self, column_last: float, tk: int, same: float, ends: list, depth: float):
        """The core issuing an output column's preloads and computes in order (k step, row tile),
        each once the execute station has room: the execute command rs_ex before it (of this
        product or those before) done, a compute's results out of the array (_ex_entry's
        arithmetic inlined: this loop is most of the model's time)."""
        ex_done, size, core, cpc = self.ex_done, self.ex_done.maxlen, self.core, self.cpc
        append = ex_done.append
        for kk in range(tk):
            begun = column_last - (tk - 1 - kk) * same
            for end in ends:
                done = begun + end + depth
                room = ex_done[0] if len(ex_done) == size else 0.0      # the preload
                core += cpc
                core = room if room > core else core
                append(done if done > core else core)
                room = ex_done[0] if len(ex_done) == size else 0.0      # the compute
                core += cpc
                core = room if room > core else core
                append(done if done > core else core)
        self.core = core

    def store(self, rows, cols, columns: list) -> float:
        """The rows x cols elements that exist out of the accumulator, one mvout per DIM x DIM tile,
        a column's once its computes' results are out (`columns`): the first column's done time."""
        d, first = self.cfg.dim, None
        for c, ready in zip(pieces(cols, d), columns):
            self.st = max(self.st, ready, self.ld_gate)
            for r in pieces(rows, d):
                if self.issuing:
                    issue = self.core + self.cpc + self.move_cycles
                    room = self.st_done[-self.cfg.rs_st] if len(self.st_done) >= self.cfg.rs_st else 0.0
                    self.st = max(self.st, issue)
                    self.core = max(issue, room, self.ld_gate)
                self.st += dma_cycles(r, c, self.cfg, self.k) + self.k.acc_scale_latency
                self.st_done.append(self.st + self.k.dram_latency)
                self.commands += 1
                self.moves += 1
            first = first if first is not None else self.st + self.k.dram_latency
        self.end = max(self.end, self.st + self.k.dram_latency, self.ex)
        # the commands after the stores (the next program's mvins) wait for the last mvout's dispatch:
        # until no more than the store station holds (rs_st) are left to finish
        if len(self.st_done) > self.cfg.rs_st:
            self.ld_gate = max(self.ld_gate, self.st_done[0])
        return first


class _Stream:
    """A window's mvins (row tile by row tile, a chunk of columns each: _Timeline.stream) issued
    on the timeline a run at a time (baco.passes.prefetch spreads a K step's next loads through
    its computes, a share per output column)."""

    def __init__(self, t: _Timeline, moves: list, chunks: int, gate: float):
        self.t, self.moves, self.chunks, self.gate = t, moves, chunks, gate
        self.issued, self.done, self.row_start = 0, [], 0.0

    def share(self, i: int, streams: int, j: int, n: int) -> int:
        """Where output column j's share of stream i of `streams` starts (mvin p goes to column
        floor((p + i/S)·n/L)): prefetch._shares' ceil((j·L·S - i·n)/(n·S)), in [0, L] for 0 <= j <= n."""
        length = len(self.moves)
        return min(length, max(0, -((i * n - j * length * streams) // (n * streams))))

    def issue(self, upto: int):
        """The mvins up to index `upto`, in order."""
        for p in range(self.issued, upto):
            if p % self.chunks == 0 and p + self.chunks >= len(self.moves):   # the last row tile begins
                self.row_start, self.done = self.t.ld, []
            done = self.t._mvin(self.moves[p], self.gate)
            if p + self.chunks >= len(self.moves):
                self.done.append(done)
        self.issued = max(self.issued, upto)

    def result(self) -> tuple:
        """window's: each chunk of the last row tile's done time, and that row tile's load time."""
        return self.done, self.t.ld - self.row_start


class _Product(NamedTuple):
    """A product on the timeline: when each output column's results are out, and when the rows
    its operands are read from are free again (its last column's first computes out)."""
    columns: list
    released: float


def _block_sizes(total, block) -> dict:
    """{size: count} of the blocks `total` elements split into, `block` at most each: the whole
    ones and the ragged last."""
    return Counter(pieces(total, block))


# the terms a grid of one program pays in place of its version's (single_*: _Launch.terms), and those
# a program pays in a larger grid whatever its version (looked up unprefixed: _Timeline.begin_program)
SINGLE_TERMS = ("program", "step", "command", "column", "tile")
GRID_TERMS = ("row_axis", "column_axis")


class _Launch(NamedTuple):
    """A fused kernel's programs summed: Gemmini's cycles and RoCC commands (configs aside), and
    the counts the core's instructions scale with (programs, their K steps, their column blocks),
    `interior` of the programs (issuing `interior_commands`) with all blocks full and `ragged_k`
    (issuing `ragged_k_commands`) with full row and column blocks and only the last K step short
    (the compiler's versions without boundary clamps, baco.passes.interior;
    schedule.explicit_program_versions)."""
    gemmini: float
    commands: int
    programs: int
    steps: int
    columns: int
    interior: int = 0
    interior_commands: int = 0
    ragged_k: int = 0
    ragged_k_commands: int = 0
    tiles: int = 0
    interior_tiles: int = 0
    ragged_k_tiles: int = 0
    row_axis: bool = False      # the grid has more than one program down the rows
    column_axis: bool = False   # ... across the columns
    k_tail: bool = False        # the K loop's last step is short

    def terms(self) -> dict:
        """FUSED_INSTRUCTIONS' terms: per edge program, its K steps, commands, column blocks and output
        tiles (counted by a kernel that prices them: the chain), the same per interior one and per
        ragged-K one, per program per grid axis of more than one program and per edge K step of a
        short last K step (k_tail_step); a grid of one program pays single_* instead of them all."""
        per_program = (self.steps / self.programs, self.columns / self.programs) if self.programs else (0, 0)
        edge = self.programs - self.interior - self.ragged_k
        out = {"program": edge, "step": edge * per_program[0],
               "command": self.commands - self.interior_commands - self.ragged_k_commands,
               "column": edge * per_program[1], "tile": self.tiles - self.interior_tiles - self.ragged_k_tiles}
        for version, n, commands, tiles in (("interior", self.interior, self.interior_commands, self.interior_tiles),
                                            ("ragged_k", self.ragged_k, self.ragged_k_commands, self.ragged_k_tiles)):
            out |= {f"{version}_program": n, f"{version}_step": n * per_program[0], f"{version}_command": commands,
                    f"{version}_column": n * per_program[1], f"{version}_tile": tiles}
        grid = self.row_axis or self.column_axis
        out |= {"row_axis": self.programs * self.row_axis, "column_axis": self.programs * self.column_axis,
                "k_tail_step": out["step"] * self.k_tail * grid}
        # a grid of one program compiles for its one block (specialize_shapes="iss": its pid, bounds
        # and version fold), whatever version it would run in a larger grid
        single = {f"single_{name}": out[name] + out[f"interior_{name}"] + out[f"ragged_k_{name}"] if not grid else 0
                  for name in SINGLE_TERMS}
        return {name: n * grid for name, n in out.items()} | single


def _launch(gemmini: float, programs, steps: int, columns: int = 0, grid=(1, 1), k_tail: bool = False) -> _Launch:
    """A launch of `gemmini` cycles: the sum of (one program's RoCC commands, how many run it, its
    version: explicit_program_versions' (interior, ragged-K) counts of its one block, its output
    tiles, 0 where the kernel's table does not price them) over its distinct programs, each of
    `steps` K steps and `columns` column blocks, on a grid of `grid` (rows, columns) programs whose
    last K step is short where `k_tail`."""
    n = sum(count for _, count, _, _ in programs)
    version_sums = [(sum(count * v[i] for _, count, v, _ in programs),
                     sum(count * v[i] * commands for commands, count, v, _ in programs)) for i in (0, 1)]
    tiles = [sum(count * tiles * (1 if i is None else v[i]) for _, count, v, tiles in programs)
             for i in (None, 0, 1)]
    return _Launch(gemmini, sum(count * commands for commands, count, _, _ in programs), n, n * steps, n * columns,
                   *version_sums[0], *version_sums[1], *tiles, grid[0] > 1, grid[1] > 1, k_tail)


def _acc_zero_tiles(block_rows, block_cols, cfg) -> int:
    """The zero mvins padding a BLOCK_M x BLOCK_N accumulator block under a boundary-checked int32
    load: per DIM-row tile of the block, one per chunk of max_block_len_acc tiles."""
    return _tiles(block_rows, cfg.dim) * _tiles(block_cols, cfg.max_block_len_acc * cfg.dim)


class _Released(dict):
    """When a program's blocks are free for the next program's mvins to overwrite (block -> time;
    "steps": the K loop's X and W homes, read by each K step's product, in order; a list of times
    shifts as a whole)."""

    def later(self, dt: float) -> "_Released":
        return _Released({name: [s + dt for s in v] if isinstance(v, list) else v + dt for name, v in self.items()})


def _k_loop(t: _Timeline, rows, K, bk, cols, double_buffer: bool, steps: list) -> float:
    """A blocked product's K loop on the timeline: per step of bk (the last one ragged) the A (rows x
    step) and B (step x cols) windows into a home free once the product before that read it is
    (the step before's, or with double buffering the one before that: `steps`, extended with
    this loop's), then their product. Double-buffered, a step's windows come among the computes
    of the product before (baco.passes.prefetch, _Timeline.product's `spread`).
    When its last results are out."""
    cfg = t.cfg
    widths, back, base = pieces(K, bk), 2 if double_buffer else 1, len(steps)

    def streams(j):
        home = steps[base + j - back] if base + j - back >= 0 else 0.0
        return [t.stream(rows, widths[j], cfg.input_bytes, gate=home), t.stream(widths[j], cols, cfg.input_bytes,
                                                                                   gate=home)]
    loads = streams(0)
    for i, width in enumerate(widths):
        for s in loads:
            s.issue(len(s.moves))
        (a_done, _), (b_ready, b_row) = (s.result() for s in loads)
        ahead = double_buffer and i < len(widths) - 1
        spread = streams(i + 1) if ahead else None
        p = t.product(rows, cols, width, b_ready, b_row, a_done[-1], cfg.max_block_len, prefetched=ahead,
                      spread=spread)
        steps.append(p.released)
        loads = spread or (streams(i + 1) if i < len(widths) - 1 else [])
    return p.columns[-1]


def _chain_program(t: _Timeline, rows, K, H, N, bm, bk, double_buffer: bool, freed: _Released) -> _Released:
    """One program of the fused chain on the timeline: the hidden block's zero padding and bias
    rows, the K loop into it, the output block's padding and bias rows, W2, the second product
    (reading the hidden block) and the stores; each mvin once the program before has read the rows
    it overwrites (`freed`)."""
    cfg, d = t.cfg, t.cfg.dim
    bh, bn = (_tiles(v, d) * d for v in (H, N))
    t.config_ex()
    t.zeros(bias_zero_moves(rows, H, bm, bh, cfg), freed["hidden"])
    t.window(rows, H, cfg.acc_bytes, cfg.max_block_len_acc, freed["hidden"])
    steps = list(freed["steps"])
    hidden = _k_loop(t, rows, K, bk, H, double_buffer, steps)
    t.zeros(bias_zero_moves(rows, N, bm, bn, cfg), freed["out"])
    t.window(rows, N, cfg.acc_bytes, cfg.max_block_len_acc, freed["out"])
    b_ready, b_row = t.window(H, N, cfg.input_bytes, gate=freed["hidden"])
    t.config_ex()
    second = t.product(bm, N, H, b_ready, b_row, hidden, cfg.max_block_len)
    out = t.store(rows, N, second.columns)
    return _Released(hidden=second.released, out=out, steps=steps[-2:])


def _resadd_program(t: _Timeline, rows, cols, K, bm, bn, bk, double_buffer: bool, freed: _Released) -> _Released:
    """One program of the GEMM + residual add on the timeline: the first block's padding and bias
    rows, the K loop into it; the second block's zeros, the identity and the product reading the
    first block into it; the residual's window into the third block (no zeros around it: the sum
    is only stored within that window, linalg_to_instgem's stored_only_within), the identity again
    and the product reading the second block onto it; the stores; each mvin once the program
    before has read the rows it overwrites (`freed`)."""
    cfg, d = t.cfg, t.cfg.dim
    t.config_ex()
    t.zeros(bias_zero_moves(rows, cols, bm, bn, cfg), freed["first"])
    t.window(rows, cols, cfg.acc_bytes, cfg.max_block_len_acc, freed["first"])
    steps = list(freed["steps"])
    layer = _k_loop(t, rows, K, bk, cols, double_buffer, steps)
    t.zeros([d] * _acc_zero_tiles(bm, bn, cfg), freed["second"])
    b_ready, b_row = t.window(bn, bn, cfg.input_bytes, gate=freed["first"])
    t.config_ex()
    exact = t.product(bm, bn, bn, b_ready, b_row, layer, cfg.max_block_len)
    residual = t.window(rows, cols, cfg.input_bytes, gate=freed["out"])[0][-1]
    b_ready, b_row = t.window(bn, bn, cfg.input_bytes, gate=freed["second"])
    t.config_ex()
    total = t.product(bm, bn, bn, b_ready, b_row, max(exact.columns[-1], residual), cfg.max_block_len)
    out = t.store(rows, cols, total.columns)
    return _Released(first=exact.released, second=total.released, out=out, steps=steps[-2:])


# identical programs timed in a row before the rest are taken to repeat the last one's increment
TIMED_REPEATS = 3


def _end_clock(t: _Timeline) -> float:
    return t.end


def _unit_clock(t: _Timeline) -> float:
    """How far a part of a program has got before its stores: the execute unit's and the core's."""
    return max(t.ex, t.core)


def _timed(t: _Timeline, count: int, run, freed: _Released, clock=_end_clock, repeats: int = TIMED_REPEATS) -> _Released:
    """run(freed) -> freed (a program, or a sequence of them, or a part of a program, on t) `count`
    times in a row: the first TIMED_REPEATS timed, the rest taken to repeat the last one's increment
    of clock(t) (the timeline's end; a part of a program, before its stores: _unit_clock) and of its
    commands and moves."""
    ends = []
    for _ in range(min(count, repeats)):
        commands, moves = t.commands, t.moves
        freed = run(freed)
        ends.append(clock(t))
    if count > repeats:
        rest = count - repeats
        dt = rest * (ends[-1] - ends[-2])
        t.shift(dt)
        t.commands += rest * (t.commands - commands)
        t.moves += rest * (t.moves - moves)
        freed = freed.later(dt)
    return freed


def _version(interior_ragged_k) -> str:
    """explicit_program_versions' (interior, ragged-K) of one program as its version's name."""
    interior, ragged_k = interior_ragged_k
    return "interior" if interior else "ragged_k" if ragged_k else "edge"


def _grid_version(interior_ragged_k, grid) -> str:
    """A program's version on a grid of (rows, columns) programs: "single" for a grid of one."""
    return "single" if grid == (1, 1) else _version(interior_ragged_k)


def _grid_terms(grid) -> dict:
    """GRID_TERMS of one program on a grid of (rows, columns) programs."""
    return {"row_axis": int(grid[0] > 1), "column_axis": int(grid[1] > 1)}


def _program_moves(cfg, k, program) -> int:
    """The mvins and mvouts of one program (program(t) on a timeline of its own, the commands
    arriving for free): what _Timeline.begin_program spreads the program's instructions over."""
    t = _Timeline(cfg, k)
    program(t)
    return t.moves


def _chain_launch(M, K, H, N, block_m, block_k, cfg, k, table: dict | None = None) -> _Launch:
    """The fused chain's programs at the launch's blocks (gemm_chain_blocks), in the grid's order on
    one timeline (each program's mvins overlap the computes and stores of the one before), each at
    its own rows (the last row block's are those left). `table` (FUSED_INSTRUCTIONS["chain"]): the
    core issuing the commands (_Timeline.begin_program), the launch's `gemmini` its end to end;
    else Gemmini's work alone (the commands arriving for free)."""
    bm, bk = gemm_chain_blocks(M, K, H, N, block_m, block_k, cfg) or (block_m, block_k)
    double_buffer = gemm_chain_double_buffered(bm, bk, H, N, cfg)
    t = _Timeline(cfg, k, issuing=table is not None)
    freed, commands, moves = _Released(hidden=0.0, out=0.0, steps=[]), {}, {}
    grid, k_tail = (_tiles(M, bm), 1), K % bk != 0

    def program(rows):
        def run(freed):
            before = t.commands
            if table is not None:
                if rows not in moves:
                    moves[rows] = _program_moves(cfg, k, lambda s: _chain_program(
                        s, rows, K, H, N, bm, bk, double_buffer, _Released(hidden=0.0, out=0.0, steps=[])))
                t.begin_program(table, _grid_version(explicit_program_versions(rows, H, K, bm, H, bk), grid),
                                {"program": 1, "step": _tiles(K, bk),
                                 "column": _tiles(H, cfg.dim) + _tiles(N, cfg.dim),
                                 "tile": _tiles(rows, cfg.dim) * _tiles(N, cfg.dim),
                                 "k_tail_step": _tiles(K, bk) * k_tail} | _grid_terms(grid), moves[rows])
            freed = _chain_program(t, rows, K, H, N, bm, bk, double_buffer, freed)
            commands[rows] = t.commands - before
            return freed
        return run
    runs = _block_sizes(M, bm)
    for rows, n in runs.items():
        freed = _timed(t, n, program(rows), freed)
    # a program's version (baco.passes.interior) is its rows' and K steps': its H and N windows start
    # at 0 and end at min(BLOCK_H, H) and min(BLOCK_N, N) (a clamp without its max, left in every
    # version), so a program's one column block spans H
    # its output tiles (DIM x DIM of its rows x N): each the second layer's bias mvin, products and mvout
    return _launch(max(t.end, t.core), [(commands[rows], n, explicit_program_versions(rows, H, K, bm, H, bk),
                            _tiles(rows, cfg.dim) * _tiles(N, cfg.dim))
                           for rows, n in runs.items()], _tiles(K, bk),
                   _tiles(H, cfg.dim) + _tiles(N, cfg.dim), grid, k_tail)


def _resadd_launch(M, N, K, block_m, block_n, block_k, cfg, k, table: dict | None = None) -> _Launch:
    """The GEMM + residual add's programs in the grid's order (pid_m innermost) on one timeline,
    each at its own rows and columns (`table`, FUSED_INSTRUCTIONS["resadd"]: as _chain_launch's)."""
    double_buffer = gemm_resadd_double_buffered(block_m, block_n, block_k, cfg)
    t = _Timeline(cfg, k, issuing=table is not None)
    freed, commands, moves = _Released(first=0.0, second=0.0, out=0.0, steps=[]), {}, {}
    rows_runs, cols_runs = _block_sizes(M, block_m), _block_sizes(N, block_n)
    grid, k_tail = (_tiles(M, block_m), _tiles(N, block_n)), K % block_k != 0

    def program(rows, cols):
        def run(freed):
            before = t.commands
            if table is not None:
                if (rows, cols) not in moves:
                    moves[rows, cols] = _program_moves(cfg, k, lambda s: _resadd_program(
                        s, rows, cols, K, block_m, block_n, block_k, double_buffer,
                        _Released(first=0.0, second=0.0, out=0.0, steps=[])))
                t.begin_program(table, _grid_version(explicit_program_versions(rows, cols, K, block_m, block_n, block_k),
                                                     grid),
                                {"program": 1, "step": _tiles(K, block_k),
                                 "column": _tiles(K, block_k) * _tiles(cols, cfg.dim),
                                 "k_tail_step": _tiles(K, block_k) * k_tail} | _grid_terms(grid), moves[rows, cols])
            freed = _resadd_program(t, rows, cols, K, block_m, block_n, block_k, double_buffer, freed)
            commands[rows, cols] = t.commands - before
            return freed
        return run

    def column(cols):
        def run(freed):
            for rows, m in rows_runs.items():
                freed = _timed(t, m, program(rows, cols), freed)
            return freed
        return run
    for cols, n in cols_runs.items():
        freed = _timed(t, n, column(cols), freed)
    # a program's column blocks (on average over the grid's column blocks): the DIM-wide columns of
    # its block that each K step's product loops over
    steps = _tiles(K, block_k)
    columns = sum(n * steps * _tiles(cols, cfg.dim) for cols, n in cols_runs.items()) / sum(cols_runs.values())
    return _launch(max(t.end, t.core), [(commands[rows, cols], m * n,
                                         explicit_program_versions(rows, cols, K, block_m, block_n, block_k), 0)
                           for rows, m in rows_runs.items() for cols, n in cols_runs.items()], steps,
                   columns, grid, k_tail)


def _end_to_end(build, kind: str, k: TimingConstants, alone: bool) -> dict:
    """A kernel's programs end to end: build(table) is the launch on its timeline with the core
    issuing the commands (FUSED_INSTRUCTIONS[kind]: _Timeline), its end (or the core's last
    instruction) the end to end, its counts the core's instructions (`cpu`, in cycles) and RoCC
    commands; `alone`: also Gemmini's work with the commands arriving for free (`gemmini`: build(None),
    a second run of the timeline, which the end to end does not need)."""
    table = FUSED_INSTRUCTIONS[kind]
    launch = build(table)
    cpu = instructions(fused_instruction_terms(launch, kind), table) * k.cpu_cycles_per_instruction
    out = {"cycles": max(launch.gemmini, cpu), "cpu": cpu, "commands": launch.commands}
    return out | {"gemmini": build(None).gemmini} if alone else out


def fused_instruction_terms(launch: _Launch, kind: str) -> dict:
    """FUSED_INSTRUCTIONS[kind]'s terms of a launch: how many times each is paid."""
    counts = launch.terms()
    return {name: counts[name] for name in FUSED_INSTRUCTIONS[kind]}


def gemm_chain_program_cycles(M: int, K: int, H: int, N: int, block_m: int, block_k: int, cfg: GemminiConfig,
                              k: TimingConstants = DEFAULT_CONSTANTS, alone: bool = False) -> dict:
    """Cycles of the fused chain's programs (baco.kernels.fused.gemm_chain_kernel), as
    gemm_program_cycles reports a GEMM's: end to end (`cycles`: per program the bias rows into the
    hidden block, per K step the X and W1 blocks and their computes, then the output's bias rows,
    W2, the second product's computes and the stores, the three queues overlapping as the cycle
    model runs them (_Timeline) and the core issuing each command; each program at its own rows,
    each K step at its own width, its RoCC commands the compiled stream's), the core's
    instructions (`cpu`) and, with `alone`, Gemmini's work with the commands arriving for free
    (`gemmini`: a second run of the timeline)."""
    return _end_to_end(lambda *a: _chain_launch(M, K, H, N, block_m, block_k, cfg, k, *a), "chain", k, alone)


def gemm_resadd_program_cycles(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, cfg: GemminiConfig,
                               k: TimingConstants = DEFAULT_CONSTANTS, alone: bool = False) -> dict:
    """Cycles of the GEMM + residual add's programs (gemm_resadd_kernel), as
    gemm_chain_program_cycles: per program the bias rows, per K step the X and W blocks then their
    computes, the identity (twice), the two identity products, the residual's scaled load and the
    stores (`alone`: also Gemmini's work alone)."""
    return _end_to_end(lambda *a: _resadd_launch(M, N, K, block_m, block_n, block_k, cfg, k, *a), "resadd", k,
                       alone)


class DwPwBlocks(NamedTuple):
    """A fused depthwise -> pointwise program's blocks: BLOCK_M output columns (the whole row Q
    when rows > 1), `rows` output rows and BLOCK_N output channels."""
    block_m: int
    rows: int
    block_n: int


# RISC-V instructions the core runs issuing the fused depthwise -> pointwise stream: per program,
# per tap step (the inner loops' iterations), per output row slice a tap step moves in, per
# channel block (the outer loop's), per RoCC command, per tap step of a launch with ragged input
# channels and per channel block of one with ragged output channels (_dw_pw_counts), a
# non-negative least-squares fit (relative error) of benchmarks/dw_pw_programs.py's programs (DIM
# 16 and 32). Refitted on the launch's own instructions (rdcycle around the grid loop on the ISS
# without the cycle model, as FUSED_INSTRUCTIONS) once dw_pw_program_cycles ran the programs on the
# issuing timeline (_dw_pw_launch), with the two ragged terms and six programs that tell them apart:
# the 18 programs within 0.93-1.10x of those counts, median 0.99 (without the ragged terms
# 0.84-1.16x; the table before, fitted on the old runner's whole-run counts, priced the first 12
# 1.03-1.44x, median 1.18, its excess standing in for the overlap the slower-of-the-two-sides
# model did not price: end to end 0.86-1.22x of the ISS, median error 5.9%, now 0.92-1.09x, 2.8%).
# Refitted once dw_pw_kernel's ISS programs were compiled for their shapes and grid
# (specialize_shapes="iss": the same RoCC commands, 0.38-0.82x of the instructions; the per-tap
# row slices' arithmetic folds, a channel block's set-up is what is left): the 18 programs'
# instructions within 0.83-1.13x (the table before on them: 1.21-1.96x), end to end log r 1.000,
# median error 1.9%, 0.99-1.10x (before, on the programs before: 0.999, 2.8%, 0.92-1.09x).
# Refitted on the runner that loops over a grid's constant bounds (~30 instructions fewer a launch):
# the per-program term 134.8 -> 100.6, the rest within 2%; end to end unchanged (1.9%).
DW_PW_INSTRUCTIONS = {"program": 100.6, "step": 0.0, "slice": 0.0, "block": 379.6, "command": 9.1,
                      "ragged_c_step": 20.3, "ragged_k_block": 0.0}


def _taps(P, H, R, stride, padding, dilation, rows) -> list[int]:
    """Per program row group (rows output rows from p0), the filter rows the kernel's tap loop
    runs: those reaching the image from some row of the group (the kernel's r_lo, r_hi)."""
    out = []
    for p0 in range(0, P, rows):
        h0 = p0 * stride - padding
        lo = max(0, -(-(-h0 - (rows - 1) * stride) // dilation))
        hi = min(R, -(-(H - h0) // dilation))
        out.append(max(0, hi - lo))
    return out


def _slice_moves(rows, block_m, q, dim) -> list[int]:
    """The rows of each mvin moving a tap's input block: output row slice i (q pixels) fills rows
    i*block_m on of the program's flattened (rows*block_m)-row block, a DIM-row tile at a time (a
    slice crossing a tile boundary takes a mvin on either side)."""
    moves = []
    for i in range(rows):
        row, end = i * block_m, i * block_m + q
        while row < end:
            moves.append(min(end, (row // dim + 1) * dim) - row)
            row += moves[-1]
    return moves


# identical parts of the fused depthwise -> pointwise launch (tap steps, channel blocks, programs,
# images, column and channel blocks, each level nested in the next) timed in a row before the rest
# are taken to repeat the last one's increment (_timed): at two (TIMED_REPEATS' three) the model
# is within 2.5% on dw_pw_programs.py's 18 programs and five MobileNet-sized pairs on the default
# Gemmini (identical on 13 of the 23, the same blocks on all), its cost halved (dw_pw_blocks and
# the model ~70 -> ~32 ms a pair)
DW_PW_REPEATS = 2


def _dw_pw_program(t: _Timeline, rows, bm, q, n, bn, steps: int, C: int, freed: _Released) -> _Released:
    """One program of the fused depthwise -> pointwise pair on the timeline (the compiled stream's
    order): the output block's zero padding and bias rows; per channel block of DIM (the last
    ragged) the depthwise block's padding and bias rows, per tap step its row slices' mvins
    (_slice_moves) into the input block and the diagonal tile, then their product onto the
    depthwise block; Wp's block and the pointwise product reading the depthwise block back; then
    the output's stores. Each mvin into rows the product before still reads waits for it (one input
    block, one diagonal tile, one Wp block, one depthwise block: dw_pw_footprint), the next
    program's output bias rows for this one's stores (`freed`)."""
    cfg, k, d = t.cfg, t.k, t.cfg.dim
    block, pixels = rows * bm, rows * q
    slices = [dma_cycles(r, d * cfg.input_bytes, cfg, k) for r in _slice_moves(rows, bm, q, d)]

    def tap(freed):
        for cycles in slices:
            a_done = t._mvin(cycles, freed["input"])
        b_ready, b_row = t.window(d, d, cfg.input_bytes, gate=freed["diag"])
        p = t.product(block, d, d, b_ready, b_row, a_done, cfg.max_block_len)
        return _Released(freed, input=p.released, diag=p.released, depthwise=p.columns[-1])

    def channel_block(cw):
        def run(freed):
            t.zeros(bias_zero_moves(pixels, cw, block, d, cfg), freed["hidden"])
            t.window(pixels, cw, cfg.acc_bytes, cfg.max_block_len_acc, freed["hidden"])
            freed = _timed(t, steps, tap, freed, _unit_clock, DW_PW_REPEATS)
            b_ready, b_row = t.window(cw, n, cfg.input_bytes, gate=freed["wp"])
            t.config_ex()
            p = t.product(block, n, d, b_ready, b_row, freed["depthwise"], cfg.max_block_len)
            return _Released(freed, hidden=p.released, wp=p.released, columns=p.columns)
        return run
    t.config_ex()
    t.zeros(bias_zero_moves(pixels, n, block, bn, cfg), freed["out"])
    t.window(pixels, n, cfg.acc_bytes, cfg.max_block_len_acc, freed["out"])
    for cw, count in _block_sizes(C, d).items():
        freed = _timed(t, count, channel_block(cw), freed, _unit_clock, DW_PW_REPEATS)
    return _Released(freed, out=t.store(pixels, n, freed["columns"]))


def _dw_pw_launch(N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks: DwPwBlocks, cfg, k,
                  table: dict | None = None) -> tuple[float, int]:
    """The fused depthwise -> pointwise launch's programs in the grid's order (row groups of an
    image innermost, then images, then column blocks, then output channel blocks) on one timeline,
    each at its own taps (_taps: a row group at the image's top or bottom runs fewer), columns and
    channels: Gemmini's cycles with the commands arriving for free, or with `table`
    (DW_PW_INSTRUCTIONS) the core issuing them (_Timeline.begin_program: per program its tap steps,
    their row slices and channel blocks), its end to end; and its RoCC commands."""
    bm, rows, bn = blocks
    t = _Timeline(cfg, k, issuing=table is not None)
    channel_blocks, moves = _tiles(C, cfg.dim), {}
    ragged_c, ragged_k = C % cfg.dim != 0, K % bn != 0     # the kernel's WHOLE_C, WHOLE_K false
    start = lambda: _Released(out=0.0, hidden=0.0, input=0.0, diag=0.0, wp=0.0, depthwise=0.0, columns=[0.0])  # noqa: E731
    freed = start()
    taps = _taps(P, H, R, stride, padding, dilation, rows)
    runs = [(tp, len(list(group))) for tp, group in itertools.groupby(taps)]     # row groups of equal taps

    def program(q, n, tp):
        def run(freed):
            steps = tp * S
            if table is not None:
                if (q, n, tp) not in moves:
                    moves[q, n, tp] = _program_moves(cfg, k, lambda s: _dw_pw_program(
                        s, rows, bm, q, n, bn, steps, C, start()))
                t.begin_program(table, "edge", {"program": 1, "step": channel_blocks * steps,
                                                "slice": channel_blocks * steps * rows, "block": channel_blocks,
                                                "ragged_c_step": ragged_c * channel_blocks * steps,
                                                "ragged_k_block": ragged_k * channel_blocks}, moves[q, n, tp])
            return _dw_pw_program(t, rows, bm, q, n, bn, steps, C, freed)
        return run

    def image(q, n):
        def run(freed):
            for tp, count in runs:
                freed = _timed(t, count, program(q, n, tp), freed, repeats=DW_PW_REPEATS)
            return freed
        return run

    def column(q, n):
        def run(freed):
            return _timed(t, N, image(q, n), freed, repeats=DW_PW_REPEATS)
        return run

    def lane(n):
        def run(freed):
            for q, count in _block_sizes(Q, bm).items():
                freed = _timed(t, count, column(q, n), freed, repeats=DW_PW_REPEATS)
            return freed
        return run
    for n, count in _block_sizes(K, bn).items():
        freed = _timed(t, count, lane(n), freed, repeats=DW_PW_REPEATS)
    return max(t.end, t.core), t.commands


def _dw_pw_counts(N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks: DwPwBlocks, cfg) -> dict:
    """The counts DW_PW_INSTRUCTIONS scales with over the launch's programs: programs, tap steps,
    their output row slices and channel blocks; the tap steps of a launch whose channels are not a
    multiple of DIM (the kernel's WHOLE_C false: every tap's input and diagonal loads check their
    channels) and the channel blocks of one whose output channels are not a multiple of BLOCK_N
    (WHOLE_K false: each Wp block's load checks its columns)."""
    bm, rows, bn = blocks
    channel_blocks, taps = _tiles(C, cfg.dim), _taps(P, H, R, stride, padding, dilation, rows)
    programs = N * len(taps) * _tiles(Q, bm) * _tiles(K, bn)
    steps = programs // len(taps) * channel_blocks * S * sum(taps)
    return {"programs": programs, "steps": steps, "slices": steps * rows, "blocks": programs * channel_blocks,
            "ragged_c_steps": steps * (C % cfg.dim != 0), "ragged_k_blocks": programs * channel_blocks * (K % bn != 0)}


def dw_pw_program_terms(N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks: DwPwBlocks, cfg: GemminiConfig,
                        k: TimingConstants = DEFAULT_CONSTANTS) -> dict:
    """The fused depthwise -> pointwise launch's totals over its programs: Gemmini's cycles with the
    commands arriving for free (_dw_pw_launch's timeline), its RoCC commands (configs aside), and
    the counts the core's instructions scale with (programs, tap steps, their row slices, channel
    blocks: _dw_pw_counts).
    stride/padding/dilation: along H (the kernel's row loop); W's are the same here."""
    gemmini, commands = _dw_pw_launch(N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks, cfg, k)
    return {"gemmini": gemmini, "commands": commands} | \
        _dw_pw_counts(N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks, cfg)


def dw_pw_program_cycles(N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks: DwPwBlocks, cfg: GemminiConfig,
                         k: TimingConstants = DEFAULT_CONSTANTS, alone: bool = False) -> dict:
    """Cycles of the fused depthwise -> pointwise launch (baco.kernels.fused_dwpw) as
    gemm_chain_program_cycles reports the chain's: end to end (`cycles`: its programs on the issuing
    timeline, _dw_pw_launch with DW_PW_INSTRUCTIONS), the core's instructions (`cpu`), its RoCC
    commands and, with `alone`, Gemmini's work with the commands arriving for free (`gemmini`)."""
    shape = (N, H, P, Q, C, K, R, S, stride, padding, dilation, blocks, cfg)
    issued, commands = _dw_pw_launch(*shape, k, DW_PW_INSTRUCTIONS)
    counts = _dw_pw_counts(*shape)
    c = DW_PW_INSTRUCTIONS
    cpu = (sum(c[term] * counts[term + "s"] for term in c if term != "command") + c["command"] * commands) * \
        k.cpu_cycles_per_instruction
    out = {"cycles": max(issued, cpu), "cpu": cpu, "commands": commands}
    return out | {"gemmini": _dw_pw_launch(*shape, k)[0]} if alone else out


def _halvings(top: int, dim: int) -> list[int]:
    """top, then halved to multiples of dim down to dim."""
    out = [top]
    while out[-1] > dim:
        out.append(max(dim, _tiles(out[-1] // 2, dim) * dim))
    return out


def dw_pw_blocks(N, H, P, Q, C, K, R, S, stride, padding, dilation, cfg: GemminiConfig,
                 k: TimingConstants = DEFAULT_CONSTANTS) -> DwPwBlocks | None:
    """The blocks of the fused depthwise -> pointwise program on `cfg` (the launch's default and
    the tuner's costing, one rule): of the blocks whose program fits (whole output rows several
    at a time, or column blocks of one row, halved from the whole image; BLOCK_N halved from K),
    the one dw_pw_program_cycles ranks fastest end to end; None if one pixel and DIM output
    channels do not fit."""
    d = cfg.dim
    shapes = [(Q, r) for r in _halvings(P, 1)] + [(m, 1) for m in _halvings(_tiles(Q, d) * d, d) if m < Q]
    best, best_cycles = None, math.inf
    for bm, rows in shapes:
        for bn in _halvings(_tiles(K, d) * d, d):
            if not _fits(dw_pw_footprint(rows * bm, bn, d), cfg):
                continue
            b = DwPwBlocks(bm, rows, bn)
            cycles = dw_pw_program_cycles(N, H, P, Q, C, K, R, S, stride, padding, dilation, b, cfg, k)["cycles"]
            if cycles < best_cycles:
                best, best_cycles = b, cycles
    return best


__all__ = ["CHAIN_DEFAULT_BLOCKS", "gemm_resadd_default_blocks", "LOOP_TILE_BLOCKS", "chain_loop_tile_shape",
           "chain_loop_tiles", "DwPwBlocks", "dw_pw_footprint",
           "dw_pw_blocks", "dw_pw_program_cycles", "dw_pw_program_terms", "DW_PW_INSTRUCTIONS", "gemm_chain_footprint",
           "gemm_chain_blocks", "gemm_resadd_footprint", "gemm_chain_double_buffered", "gemm_resadd_double_buffered",
           "gemm_chain_loop_ws_fits", "gemm_chain_loop_ws_loops", "gemm_chain_loop_ws_program_cycles",
           "CHAIN_LOOP_WS_INSTRUCTIONS", "gemm_chain_program_cycles", "gemm_resadd_program_cycles"]
