"""Kernel schedules and the one capacity rule for Gemmini's local memories.

A GEMM kernel (examples/matmul.py's block program) holds, per program, an
A block (block_m × block_k int8) and a B block (block_k × block_n int8) in the
scratchpad and a block_m × block_n int32 block in the accumulator. An int8
output is moved out of the accumulator through the scale/ReLU path straight
to DRAM, so it takes no scratchpad rows. With `double_buffer` the compiler
gives the A and B blocks two homes each (alternate K steps) and loads the next
K step's blocks while the array works on the current ones. The accumulator
block is not doubled: stores leave it tile by tile as the last K step finishes
each column, and the next program's writes wait only for the tiles they reuse.

A convolution (baco.kernels.conv) may compute `rows` output rows per program: its
A block is then `rows` slices of block_m input pixels (one per output row) flattened
into the GEMM's M, so every preloaded weight tile serves rows × block_m output pixels;
the accumulator holds rows × block_m × block_n. A GEMM has rows = 1.

`block_rows` is how placement lays out any local block; `gemm_footprint` is
what placement allocates for the GEMM kernel under a schedule;
`capacity_problems` is the check placement and `schedule_problems` share.
Pure Python: imports only baco.gemmini.
"""
from __future__ import annotations

import collections
import functools
import math
from dataclasses import MISSING, asdict, dataclass, fields, replace

from baco.gemmini.config import Footprint, GemminiConfig, loop_unit_half  # noqa: F401  (re-exported)
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.isa import CONCURRENT_LOOPS, MIN_FEED_ROWS
from baco.gemmini.loop_conv_timing import loop_conv_stream_cycles, program_conv_tiles, program_tap_rows
from baco.gemmini.loop_ws_timing import (LoopWs, dma_cycles, local_move_cycles,  # noqa: F401  (dma_cycles re-exported)
                                         loop_ws_end_to_end, loop_ws_lower_bound, loop_ws_stream_cycles)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants

DATAFLOWS = ("WS", "OS")


@dataclass(frozen=True)
class GemmSchedule:
    block_m: int
    block_n: int
    block_k: int
    dataflow: str = "WS"          # "WS" | "OS"
    double_buffer: bool = False   # two homes for the A and B blocks: the next K step loads during this one
    rows: int = 1                 # convolutions: output rows per program, flattened with block_m into M

    @property
    def m_rows(self) -> int:
        """Rows of the A and C blocks: rows × block_m."""
        return self.rows * self.block_m

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GemmSchedule":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown GemmSchedule fields {unknown}; known: {sorted(known)}")
        return cls(**d)

    def launch_options(self) -> dict:
        """Keyword arguments of a kernel launch / compile that realise this schedule."""
        opts = {"BLOCK_M": self.block_m, "BLOCK_N": self.block_n, "BLOCK_K": self.block_k,
                "dataflow": self.dataflow, "double_buffer": self.double_buffer}
        return opts if self.rows == 1 else {**opts, "ROWS": self.rows}


SCHEDULE_DEFAULTS = {f.name: f.default for f in fields(GemmSchedule) if f.default is not MISSING}


def block_rows(rows: int, cols: int, dim: int) -> int:
    """Local rows a rows × cols block occupies: ⌈cols/dim⌉ column strips of
    ⌈rows/dim⌉·dim rows each (ragged edges padded to DIM)."""
    return math.ceil(cols / dim) * math.ceil(rows / dim) * dim


def gemm_footprint(s: GemmSchedule, cfg: GemminiConfig, out_int8: bool) -> Footprint:
    """Rows the compiler's placement allocates for the GEMM kernel under `s`.
    `out_int8` does not change it: the int8 output is scaled on its way out of
    the accumulator, with no scratchpad staging block."""
    copies = 2 if s.double_buffer else 1
    d = cfg.dim
    sp = copies * (block_rows(s.m_rows, s.block_k, d) + block_rows(s.block_k, s.block_n, d))
    return Footprint(sp_rows=sp, acc_rows=block_rows(s.m_rows, s.block_n, d))


def padded_rows(K: int, dim: int) -> int:
    """Rows of a GEMM's B padded to whole DIM blocks (⌈K/DIM⌉·DIM): what LoopMatmul reads of B, which
    it moves DIM rows a K block. A B allocation that holds them runs a ragged K step as one LOOP_WS
    (baco.passes.loop_ws); the rows past K meet A's padded columns, fed as zeros."""
    return -(-K // dim) * dim


def loop_ws_fits(block_m: int, block_n: int, block_k: int, cfg: GemminiConfig) -> bool:
    """A GEMM program's A, B and C blocks fit LOOP_WS's halves of the scratchpad and accumulator."""
    d, half = cfg.dim, loop_unit_half(cfg)
    ti, tj, tk = -(-block_m // d), -(-block_n // d), -(-block_k // d)
    return (ti * tk + tk * tj) * d <= half.sp_rows and ti * tj * d <= half.acc_rows


def capacity_problems(cfg: GemminiConfig, sp_rows: int, acc_rows: int,
                      sp_blocks: str = "", acc_blocks: str = "") -> list[str]:
    """The capacity rule: rows used per memory against the configuration's rows.
    `*_blocks` describe what uses the rows (block sizes), for the message."""
    out = []
    for used, limit, memory, word, kib, blocks in ((sp_rows, cfg.sp_rows, "scratchpad", "int8", cfg.sp_kb, sp_blocks),
                                                  (acc_rows, cfg.acc_rows, "accumulator", "int32", cfg.acc_kb, acc_blocks)):
        if used > limit:
            out.append(f"block sizes do not fit the Gemmini {memory} ({limit} rows of {cfg.dim} {word} = {kib:g} KiB) "
                       f"at DIM={cfg.dim}: {blocks + ' ' if blocks else ''}need {used} rows")
    return out


def field_problems(s: GemmSchedule) -> list[str]:
    """What is wrong with the schedule's fields themselves (whatever the Gemmini)."""
    bad = [f"{name}={v!r} must be a positive integer" for name, v in
           (("block_m", s.block_m), ("block_n", s.block_n), ("block_k", s.block_k), ("rows", s.rows))
           if not isinstance(v, int) or isinstance(v, bool) or v <= 0]
    if s.dataflow not in DATAFLOWS:
        bad.append(f"dataflow must be one of {DATAFLOWS}, not {s.dataflow!r}")
    if not isinstance(s.double_buffer, bool):
        bad.append(f"double_buffer must be a bool, not {s.double_buffer!r}")
    return bad


def schedule_problems(s: GemmSchedule, cfg: GemminiConfig, out_int8: bool) -> list[str]:
    """Empty when the GEMM kernel compiles under `s` on `cfg`; else what is wrong."""
    bad = field_problems(s)
    if bad:
        return bad
    fp = gemm_footprint(s, cfg, out_int8)
    if not capacity_problems(cfg, fp.sp_rows, fp.acc_rows):      # the messages only for what does not fit
        return []
    d = cfg.dim
    copies = " x2 (double-buffered)" if s.double_buffer else ""
    m = s.block_m if s.rows == 1 else f"{s.rows}*{s.block_m}"
    sp_blocks = (f"A {m}x{s.block_k} ({block_rows(s.m_rows, s.block_k, d)} rows) + "
                 f"B {s.block_k}x{s.block_n} ({block_rows(s.block_k, s.block_n, d)} rows){copies}")
    acc_blocks = f"C {m}x{s.block_n} ({block_rows(s.m_rows, s.block_n, d)} rows)"
    return capacity_problems(cfg, fp.sp_rows, fp.acc_rows, sp_blocks, acc_blocks)


def as_schedule(schedule, what: str = "schedule") -> GemmSchedule:
    """A GemmSchedule a caller gave: itself, its dict, or a (block_m, block_n, block_k[, dataflow,
    double_buffer, rows]) tuple; its fields checked before anything divides by them (a ValueError
    naming each bad field)."""
    if isinstance(schedule, dict):
        missing = sorted({f.name for f in fields(GemmSchedule)} - set(schedule) - set(SCHEDULE_DEFAULTS))
        if missing:
            raise ValueError(f"{what} lacks the GemmSchedule fields {missing}")
        try:
            schedule = GemmSchedule.from_dict(schedule)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
    elif isinstance(schedule, (tuple, list)):
        if not 3 <= len(schedule) <= len(fields(GemmSchedule)):
            raise ValueError(f"{what} as a tuple is (block_m, block_n, block_k[, dataflow, double_buffer, rows]), "
                             f"got {tuple(schedule)!r}")
        schedule = GemmSchedule(*schedule)
    elif not isinstance(schedule, GemmSchedule):
        raise TypeError(f"{what} must be a GemmSchedule, its dict or a tuple, not {type(schedule).__name__}")
    bad = field_problems(schedule)
    if bad:
        raise ValueError(f"{what}: " + "; ".join(bad))
    return schedule


# RISC-V instructions of baco's compiled GEMM program on the CPU that issues it (the harness's grid
# loop and the kernel). The explicit stream: per program, per K step its K loop runs (the software
# pipeline's prologue and bounds: none when K is 1, explicit_k_loop_steps), per program and C
# column block (the column-by-column stores' loop), per weight block (a column block's DIM rows of
# a K step: the nest level whose row tiles' computes run under one preload), per preload/compute
# pair (the innermost level, a few instructions), per store and per accumulator fill mvin (a bias's
# rows: a stride-0 block load's address and window arithmetic, where a per-command term charged
# them as any command), a non-negative least-squares fit (relative error) of the ISS's counts of
# the programs of benchmarks/cpu_constants.py's GEMMS (kernels.py-like shapes: ragged, GEMV, tiny
# K, one row, interior-rich, ragged-K-rich, K = 1; DIM 16 and 32; int32 out, or a bias and int8
# out; `--only gemm` refits it with EXPLICIT_INTERIOR_INSTRUCTIONS and
# EXPLICIT_RAGGED_K_INSTRUCTIONS below). A LOOP_WS program (a K step
# is the five loop registers and LOOP_WS): per program, per K step, once more for a program of more
# than one step (the K loop's set-up), per ragged step split into a head LOOP_WS, per explicit move
# of a B (a K < DIM step's, a column's first program's resident B) and per mvin of it, per program
# of a launch whose K is not 1 ("k_loop": the K loop and A's row stride, which the specialization
# of integers equal to 1 folds away) and whose N is not 1 ("n_strides": B's and C's row strides),
# and per launch (its configs, the grid loop's set-up, the fence: the same for every schedule, but
# a tenth of a tiny launch's), the same fit (loop_ws_launch_terms) of 44 launches' instructions
# (rdcycle around the grid loop): 1, 2 and many K steps,
# split, padded and explicit-B steps, resident B, one-row grids (resident A), K = 1 and N = 1, DIM
# 2, 4, 8, 16 and 32, within 0.96-1.06x of the ISS, median 1.00; refitted once a one-step program
# tested for a one-row grid (a resident A: ~5-17 instructions; the table before, on that code:
# 0.92-1.02x, median 0.96), and before that once an explicitly moved B went into both halves and
# the steps lost their half's arithmetic (the table before: 0.94-1.09x; before the two
# specialization terms: 0.84-1.93x, the K = 1 programs 1.6-1.9x over). Refitted once the loop-ws
# pass divided a window's extents unsigned (~7% fewer instructions a program; the table before, on
# that code: 1.02-1.15x, median 1.08), with four of kernels.py's GEMVs of many one-step programs
# added: within 0.96-1.05x, median 0.99. Refitted on the same 44 once the runner's kernel read its
# arguments from the launch table (baco.codegen.riscv.launch_wrapper: ~31 fewer instructions a
# program; the table before, on that code: 1.01-1.24x, median 1.09): within 0.95-1.07x, median 0.99.
# Refitted on the same 44 once the GEMM kernel's ISS programs were compiled for their launch's
# integers (matmul_kernel's specialize_shapes="iss": the set-up's bounds, strides and configs fold;
# the table before, on that code: 0.96-5.03x, median 1.88): within 0.42-1.38x, median 1.00 (the
# low end programs whose ragged K loop stays a run-time loop, its window clamps each step; the
# specialization terms k_loop and n_strides now small). Refitted on the same 44 with two terms for
# such a ragged K loop (ragged_k_loop: more than one K step, the last short; the whole K loops'
# constant trip counts LLVM unrolls, ~14 instructions a step, the ragged one's ~62 a step and ~100
# more a program on the ISS listings): per program ("ragged_k") and per K step ("ragged_k_step") of
# it: within 0.84-1.14x, median 1.00 (the table before, on the same counts: 0.42-1.23x, median 0.99,
# its 6 ragged-K launches 0.42-0.75x, now 0.88-1.06x; "steps" fitted to 0: the unrolled K loop's
# set-up is the per-step term's). Refitted on the same 44 once the ISS programs were compiled for
# their launch's grid too (an axis of size 1 folds: its program id 0, the passes' first-program and
# one-row-grid tests; the table before, on that code: 0.95-2.68x, median 1.69, the one-program and
# one-column launches 1.3-2.7x) with a term per program of a grid of more than one row of programs
# ("row_axis") and of more than one column ("column_axis"; grid_axes): within 0.84-1.15x, median
# 0.99 (the same refit without the two: 0.56-1.37x, median 0.99); "program", "k_loop" and
# "n_strides" fall to 9 / 0 / 0 (what they priced is an axis's).
EXPLICIT_INSTRUCTIONS = {"program": 52.6, "step": 0.0, "column": 0.0, "group": 0.0, "pair": 12.6, "store": 19.5,
                         "fill": 1.2, "k_loop": 0.0}
# An interior program of the explicit stream (all its blocks full, or K = 1 and its M and N blocks
# full: explicit_program_versions) runs the version of the program without boundary clamps
# (baco.passes.interior): per program, per K step, per command and, where K is 1, per command again
# ("unfused_command": its zero fill, computes and stores each in its own nest,
# explicit_unfused_commands); a ragged-K program (M and N blocks full, only the last K step short)
# the version with constant M and N extents and the K window's end computed each step: per program,
# K step, weight block and command. Fitted with EXPLICIT_INSTRUCTIONS on the same launches (66
# programs of 33 shapes, with and without a bias, 17 of them with ragged-K programs, 6 with K = 1:
# 0.69-1.26x, median error 7.6%; without the unfused term 0.47-1.31x, 7.2%, a one-program K = 1
# launch of 105 commands the low end; the tables before, which priced ragged-K programs and K = 1
# ones as the general code and counted a K = 1 program's K step: 0.83-4.94x, median error 10.0%, the
# ragged-K-rich and K = 1 launches up to 4.9x). On benchmarks/explicit_gemm_iss.py's 44 probes
# (other shapes, among them K = 1, 3, 8 and 12 under full M and N blocks) the CPU term 0.64-1.38x,
# median error 10.1% (the tables before: 0.70-3.85x, 39.2%, the K = 1-8 probes the 1.9-3.9x ones).
# The three refitted on the same 66 once the runner's kernel read its arguments from the launch
# table (riscv.launch_wrapper) and the loop-ws pass's window arithmetic went unsigned: 0.75-1.30x,
# median 0.98, median error 7.5% (the tables before, on that code: 0.76-1.64x, median 1.05, median
# error 8.0%; 256x256x64 and 64x256x7 at DIM 16 1.46x and 1.64x); no default schedule of the fitting
# set, of kernels.py's 42 GEMMs at DIM 16 and 32 or of tiled_matmul_ws_perf's shape changed. The
# least-determined terms (one standard error; leave-one-out range): the edge "program" 135 +- 78
# (70-215), "store" 32 +- 13 (26-71), "fill" 10 +- 9 and "ragged_k_step" 82 +- 23 (20-106).
# The three refitted on the same 66 once the GEMM kernel's ISS programs were compiled for their
# launch's integers (matmul_kernel's specialize_shapes="iss"; the tables before, on that code:
# 0.75-3.51x, median 1.30, median error 30.5%, the edge programs' set-up priced though it folds):
# an edge program's K loop of one step now folds to its body too (not only K = 1), so a term per
# edge program whose K loop runs more than one step ("k_loop": explicit_k_loop_programs): within
# 0.53-1.37x, median 1.00, median error 10.8% (without it 0.49-1.40x, 0.97, 11.4%). The same term
# for the interior programs fits to ~0 and for the ragged-K ones is set by two launches of the 66
# (3,020 instructions; 1.6-7.6x on 9 probes of such programs), so left out: a ragged-K program of
# two K steps costs ~850 instructions more than one of one step (64x64x50 against 64x64x40 at DIM
# 16 in 32/64/48 blocks; each further step ~270-320), and these tables price the 9 probes' launches
# 0.38-0.87x (of 16 probes, 0.38-1.27x, median error 27%). The edge "program", "column" and
# "group", "interior_step" and "ragged_k_program" and "ragged_k_group" fit to 0 (what they priced
# folds, or the other terms absorb it). No default schedule of the fitting set, of kernels.py's 42
# GEMMs at DIM 16 and 32 or of tiled_matmul_ws_perf's shape changed. On benchmarks/explicit_gemm_iss.py's
# 44 probes the CPU term is worse: 0.36-1.34x, median 0.74, median error 26.6% (the tables before:
# 0.51-1.56x, 1.14, 20.1%), end to end 0.71-1.83x, median error 9.9% (before: 0.71-2.29x, 8.6%): its
# store-bound ragged-K programs of one short K step under 128-256-row blocks (512x128x3, 1024x64x8,
# 256x256x16) 0.36-0.73x, larger than the fitting set's ragged-K programs, whose relative fit puts
# "ragged_k_command" at 2.9 where those programs pay ~9 a command. The three refitted once the ISS
# programs were compiled for their launch's grid too (an axis of size 1 folds), on the 66 and 10 such
# store-bound programs of one short K step under 128-256-row blocks (other shapes than the probes':
# cpu_constants.py's GEMMS): 76 programs 0.33-1.60x, median 0.88, median error 18.3% (the tables
# before, on that code: 0.34-5.23x, 1.14, 29.2%: a one-program launch's constant loops unroll, which
# no term describes); on explicit_gemm_iss.py's 44 probes the CPU term 0.32-1.37x, median 0.70,
# median error 32.1% (the tables before on that code: 0.36-3.12x, 0.90, 41.8%), end to end
# 0.67-1.38x, median error 9.3% (before: 0.71-2.09x, 9.9%).
# The three refitted once the last program of an axis whose window is short ran its own copy, its
# program id a constant (baco.passes.interior: an edge program in a grid of several had cost 1.9-5.1x
# the instructions of the same program alone), with a term per C column tile and K step of an
# interior program whose column loop LLVM keeps a loop (explicit_column_steps: its share of the
# next step's loads, ~15-30 instructions, which a program of one weight block a column pays per
# ~3 commands; a column loop of two tiles unrolls), on the 76 and 12 programs of wide column blocks
# under K steps of one or two DIM blocks (cpu_constants.py's GEMMS): 88 programs 0.40-1.60x,
# median 0.94, median error 15.6% (the tables before, on that code: 0.32-1.88x, 0.92, 23.2%; the
# 12 wide ones 0.32-0.76x, now 0.70-1.13x). Without it ResNet-50's 7x7 2048->512 layer at DIM 16
# ran 32/512/16, priced 266,538 cycles end to end, measured 398,637; now 64/256/32, priced 269,761,
# measured 285,645. On explicit_gemm_iss.py's 44 probes end to end 0.67-1.31x, median error 8.2%
# (the tables before, on the code before: 0.67-1.41x, 9.2%), the CPU term 0.35-1.32x, median 0.68,
# median error 33.2% (0.32-1.44x, 0.71, 30.9%).
EXPLICIT_INTERIOR_INSTRUCTIONS = {"program": 73.3, "step": 2.3, "command": 2.9, "unfused_command": 2.7,
                                  "column_step": 25.8}
EXPLICIT_RAGGED_K_INSTRUCTIONS = {"program": 0.0, "step": 28.7, "group": 0.0, "command": 5.9}
# the three as one table of explicit_gemm_terms' terms
EXPLICIT_TERM_TABLE = {**EXPLICIT_INSTRUCTIONS,
                       **{f"{version}_{name}": v for version, table in (("interior", EXPLICIT_INTERIOR_INSTRUCTIONS),
                                                                          ("ragged_k", EXPLICIT_RAGGED_K_INSTRUCTIONS))
                          for name, v in table.items()}}
# Refitted with a term per explicitly moved B's mvin in a grid of more than one column of programs
# ("column_mvin": the mvin loop runs on the program's column, its clamp and addresses; a one-column
# grid's folds) on the 44 and five programs moving 3-5 k blocks of B a program in 3-7 columns
# (48x40x72, 33x97x33, 96x40x72, 48x80x72, 48x40x40 at DIM 16; the 44's explicit-B programs move
# one mvin each, or B once, in GEMVs): cpu_constants.py --only loop_ws, 49 launches within
# 0.85-1.17x, median 1.00, median error 5.0% (the table before, on the same code: 0.55-1.25x, median
# 0.98, 6.0%; the five 0.61-0.78x, 93x116x258 at DIM 32 0.55x). Refitted once the runner of a
# kernel compiled for its grid looped over constant bounds (riscv.grid_loop: ~20 fewer instructions
# a launch) and a one-program launch split its ragged step over a B of one column block: 49 launches
# within 0.74-1.18x, median 0.99, median error 5.8% (the table before on the new code: 0.89-1.62x,
# median 1.05, 6.1%; the outlier 0.74x, 16x16x41 on 16/16/48 with a padded B, 58 instructions).
# Once a one-program split step of 3+ blocks issued its head last and a one-row grid's split step its
# head storing C (split_after), the split's second LOOP_WS charged as the head-first one's "head"
# over-predicted those launches 1.03-1.26x (split_after 1.13-1.26x): a term per split order
# (split_term: "head", "head_last", "split_after", the last's programs on a resident A, the step's
# addresses constants of its branch), refitted on the 49 and 13 more (one-program head-last GEMVs,
# one-row split_after grids, the explicit-B programs in two rows of programs): 62 launches within
# 0.81-1.18x, median 0.98, median error 3.9% (the table before, head and split_after charged as
# "head": 0.83-1.26x, median 1.03, 7.8%; refitted on its terms 0.85-1.17x, 5.3%, but "program"
# 10.8 -> 2.1, "head" 28.2 -> 20.6). The outlier 0.81x is 16x16x41's padded B again.
LOOP_WS_INSTRUCTIONS = {"program": 10.8, "step": 10.1, "steps": 0.0, "head": 28.2, "head_last": 24.2,
                        "split_after": 9.7, "explicit_b": 7.9, "mvin": 9.1, "column_mvin": 21.9, "k_loop": 0.0,
                        "n_strides": 0.0, "launch": 21.4, "ragged_k": 68.9, "ragged_k_step": 48.6, "row_axis": 40.4,
                        "column_axis": 67.2}
LOOP_WS_STEP_COMMANDS = 6
# The convolution kernels' programs (baco/kernels/conv.py, depthwise.py). The explicit stream: per
# program K step (a filter tap and channel block: its bounds and padding checks), per output row's
# A slice of a step (its address) and per RoCC command, a non-negative least-squares fit (relative
# error) of the ISS's counts (benchmarks/cpu_constants.py) of 12 conv programs (3x3, 5x5 and 7x7,
# strided, 1-8 output rows a program, DIM 16 and 32; within 0.58-1.30x, median 0.95: the 3-channel
# 7x7 stems 0.58-0.77x, their input channels not a whole block, so still checked each step, the
# others 0.82-1.30x) and 8 depthwise ones (DIM 16 and 32; within 0.63-1.26x, median 0.95), the
# commands counted by the tuner's program model; refitted after whole channel blocks lost their
# channel checks (baco/kernels/conv.py: constant extents, ~40% fewer instructions; the tables these
# replace, on the new code: 0.97-2.26x, median 1.69, and 0.81-1.52x, median 1.26). On the
# launch-table runner (riscv.launch_wrapper) the conv table was 0.59-1.31x, median 0.94, median error
# 18% (its refit alone 0.63-1.37x, 15%: the stems and strided programs under, the 5x5 over; its
# slice and command terms within one standard error of 0); refitted with a term per K step of a
# strided layer's program ("strided_step": the kernel's input view divides by its stride argument,
# which a stride of 1 specializes away, as LOOP_CONV_INSTRUCTIONS' "strided") on those 12 and 6 more
# (narrow and wide channel blocks, 2-8 rows, strided, 5x5): within 0.80-1.17x, median 1.01, median
# error 12.5% (the 12: 0.84-1.15x; the table before on the 18: 0.59-1.57x, median error 19%). The
# depthwise table alike: 0.65-1.31x, median 0.99, median error 18.5% on the launch-table runner
# (its strided programs 0.65-0.82x); with the strided term on the 8 and 5 more (rows 1-8, strided,
# 5x5, DIM 32): 0.85-1.24x, median 1.00, median error 8.2% (the slice term fitted to 0: a
# depthwise step's rows cost as its commands). Both tables had no double-buffered program: a
# double-buffered stream loads the next step's blocks into their other home inside the K loop (the
# next step's addresses and bounds computed there; 1.1-2.1x the single-buffered program's
# instructions on the ISS, fewer commands), which they priced 0.42-1.03x (conv, median 0.53; the
# tuned_0.15mm2 test's 3x3 14x14 32>64 2x14/32/32: 57,169 instructions priced 32,302) and 0.53-0.95x
# (depthwise): a term per command of a double-buffered program ("double_buffer") and per K step of a
# double-buffered program of one output row ("double_buffer_row": those run ~2x the single-buffered
# instructions, multi-row ones 1.1-1.6x), refitted on the 18 + 18 conv programs (the double-buffered
# ones: 1-8 rows, narrow and wide blocks, strided, 5x5, 7x7 stems, DIM 16 and 32) and 13 + 6
# depthwise ones: conv within 0.72-1.30x, median 0.96, median error 12.5% (double-buffered
# 0.72-1.30x, median 0.91; single-buffered 0.79-1.16x, median 1.02, as before: 0.80-1.17x), depthwise
# 0.78-1.25x, median 1.01, median error 8.0% (double-buffered 0.78-1.11x). A LOOP_CONV_WS program (its
# grid step, the pass's run-time guards and address arithmetic, LoopConv's configuration and the
# loop: ~7 commands): per conv program, per depthwise program, per further LOOP_CONV_WS of a
# program split into input channel blocks (its six configs, the loop and the block's addresses),
# per program of a strided layer (the kernel's input view divides by its stride argument, which a
# stride of 1 specializes away), per program with a bias and per program of a layer of more than
# one output row (P = 1 folds the program's row bounds and input rows away: ~235 instructions), the
# same fit of 37 launches' instructions (rdcycle around the grid loop; the launch's own fitted but
# left out): 3x3, 5x5, 3x3/2 and 1x1/2 convolutions of 1-56 programs of 1-14 rows, 1-5 channel
# blocks, 11 depthwise layers (MobileNetV2 64x64's strided 4x4 and 2x2 outputs among them), 7 with
# a bias, 8 of one output row (1x1 outputs, strided, depthwise, biased, 4 channel blocks), DIM 16
# and 32: within 0.78-1.27x of the ISS, median 1.00 (the table before the output-rows term, 588.0,
# 558.0, 63.2, 78.6 and 55.2: 0.73-1.60x, median 0.97; its one-row programs 1.38-1.60x, now
# 0.92-1.20x); refitted after whole channel blocks lost their checks (the pass's guards and
# addresses fold with them): 0.87-1.25x, median 0.99 (the table before, on the new code: 0.98-1.41x,
# median 1.13); refitted once the runner's kernel read its arguments from the launch table
# (riscv.launch_wrapper): 0.93-1.21x, median 0.99 (the table before, on the new runner: 0.94-1.35x,
# median 1.05; MobileNetV2's CPU-bound strided depthwise programs 1.09x). The output-rows term keyed
# on the layer's P priced a program of one row of a multi-row layer 1.18-1.28x (its row bounds
# fold with the schedule's rows = 1, its first row's arithmetic does not): split into
# "output_rows" (P > 1: the program's first output and input rows) and "program_rows" (the
# schedule's rows > 1: its row bounds and rows), refitted on the 37 and 6 one-row programs of 7-28
# row layers (conv, strided, depthwise, DIM 32): 0.94-1.06x, median 1.00, median error 1.8% (the
# table before on the 43: 0.84-1.28x, median 0.95, median error 7.7%). Of 536 'same'-padded layers'
# default conv schedules (sizes 1-14, 3/17/64 -> 64 channels, 1x1, 3x3, 5x5, strides 1-2, DIM 16
# and 32, and kernels.py's 20 conv shapes, unchanged) 13 change, end to end on the ISS with the cycle
# model 0.993-1.073x as fast, geomean 1.016x (one-row programs on 2-3 row padded images, whose CPU
# it prices 1.00-1.05x; 3x3/2 on a 3x3 image, 3 -> 64 at DIM 16: 1,507 -> 1,488 cycles).
# CONV_EXPLICIT_INSTRUCTIONS refitted on the conv kernel's explicit programs compiled for their shapes
# (specialize_shapes="iss": the stream's index arithmetic folds): the 36 programs (benchmarks/
# cpu_constants.py --only conv) within 0.62-1.47x of the ISS, median 0.97 (the table before, on the
# specialized programs: 0.86-2.17x, median 1.44).
CONV_EXPLICIT_INSTRUCTIONS = {"step": 91.8, "strided_step": 48.6, "slice": 15.4, "command": 2.2, "double_buffer": 7.0,
                              "double_buffer_row": 134.2}
# DEPTHWISE_EXPLICIT_INSTRUCTIONS refitted the same way on the depthwise kernel's 19 specialized explicit
# programs (--only depthwise): 0.77-1.39x of the ISS, median 0.98 (the table before: 0.80-1.66x, median 1.17).
DEPTHWISE_EXPLICIT_INSTRUCTIONS = {"step": 45.6, "strided_step": 72.6, "slice": 0.0, "command": 12.5,
                                   "double_buffer": 9.9, "double_buffer_row": 51.3}
# Refitted on the conv kernels' programs compiled for their shapes (specialize_shapes="iss": their
# integers constants, so a program's set-up folds except what depends on its program ids): the ISS
# listings (benchmarks/instruction_mix.py --kernel conv --loop-ws) show ~150 instructions a program
# whose row is fixed (one program along P: the whole image, or P = 1) and ~270-380 where programs
# step along the output rows (the row's padding, input address and guards at run time), so the row
# terms now key on that: "output_rows" a layer of more than one program along P (P > the
# program's rows), "program_rows" such a program of several rows, "block_rows" each further
# channel block of such a program (its per-block fields depend on the row too). On the same 43
# launches (specialized) the table before was 1.15-4.17x of the ISS, median 1.62 (refit on its
# old terms at best 0.45-1.54x); this one 0.85-1.05x, median 0.96 (0.92-1.09x, median 1.00, with the
# fitted launch term, 45.5, which stays out of the table: benchmarks/cpu_constants.py --only loop_conv).
# Refitted on the runner that loops over a grid's constant bounds and writes the grid arrays only
# where the kernel reads them (riscv.grid_reads): the table before, on that runner, 1.08-2.74x of
# the ISS, median 1.56 (its one-program launches 2.1-2.7x); refitted on the same 43: 0.88-1.09x,
# median 1.00, median error 3.4% (every program's set-up fell, ~140 -> ~60; a term per program of a
# grid of more than one program fits to 0, the launch's own to 19.8 for 0.90-1.07x, left out).
LOOP_CONV_INSTRUCTIONS = {"conv": 61.7, "depthwise": 58.7, "block": 16.0, "strided": 2.5, "bias": 0.0,
                          "output_rows": 134.7, "program_rows": 113.6, "block_rows": 42.1}


def explicit_gemm_terms(edge: dict, interior: dict, ragged_k: dict) -> dict:
    """EXPLICIT_TERM_TABLE's terms of an explicit GEMM launch from its edge programs' counts `edge`,
    its interior ones' `interior` and its ragged-K ones' `ragged_k` (explicit_program_version), each
    summed over those programs: "programs", "steps" (K steps its K loop runs: explicit_k_loop_steps),
    "columns" (C column blocks), "groups" (weight blocks: a column block's DIM rows of a K step),
    "pairs" (preload/compute), "stores", "fill_mvins" (accumulator fill mvins: a bias's rows),
    "commands" and, of the interior ones, "unfused_commands" (those of a program whose K is 1:
    explicit_unfused_commands) and "column_steps" (explicit_column_steps); "k_loop": the edge
    programs whose K loop runs more than one step (explicit_k_loop_programs). Plain arithmetic:
    numbers or tensors."""
    return {"program": edge["programs"], "step": edge["steps"], "column": edge["columns"], "group": edge["groups"],
            "pair": edge["pairs"], "store": edge["stores"], "fill": edge["fill_mvins"],
            "interior_program": interior["programs"], "interior_step": interior["steps"],
            "interior_command": interior["commands"], "interior_unfused_command": interior["unfused_commands"],
            "interior_column_step": interior["column_steps"],
            "ragged_k_program": ragged_k["programs"], "ragged_k_step": ragged_k["steps"],
            "ragged_k_group": ragged_k["groups"], "ragged_k_command": ragged_k["commands"],
            "k_loop": explicit_k_loop_programs(edge)}


def explicit_column_steps(columns, steps):
    """Of a GEMM program of `columns` C column tiles whose K loop runs `steps` steps, the (column,
    step) pairs its CPU runs the column loop's own instructions for: each column's share of the next
    step's loads (the software pipeline's division, its bounds and checks), where the loop stays a
    loop. LLVM unrolls a column loop of two tiles (the shares fold); of more it keeps the loop.
    Numbers or tensors."""
    return columns * steps * (columns > 2)


def explicit_k_loop_programs(counts: dict):
    """Of programs whose summed counts are `counts` (one launch's programs of one version: the same
    K steps each), how many run a K loop of more than one step: all of them or none. On the ISS the
    launch's shape is constant (matmul_kernel's specialize_shapes), so a loop of one step folds to
    its body. Numbers or tensors."""
    return counts["programs"] * (counts["steps"] > counts["programs"])


def explicit_gemm_instructions(terms: dict):
    """RISC-V instructions of the GEMM kernel's explicit stream: `terms` as explicit_gemm_terms
    counts them, the edge programs' at EXPLICIT_INSTRUCTIONS, the interior ones' ("interior_" +
    term) at EXPLICIT_INTERIOR_INSTRUCTIONS, the ragged-K ones' ("ragged_k_" + term) at
    EXPLICIT_RAGGED_K_INSTRUCTIONS. Plain arithmetic: numbers or tensors."""
    return instructions(terms, EXPLICIT_TERM_TABLE)


def explicit_k_loop_steps(K, steps):
    """The K steps (`steps` of them) a GEMM program's K loop runs, each paying its bounds and the
    software pipeline's prologue: none when K is 1 (the launcher specializes an argument equal to
    1: the K loop folds to its body). Numbers or tensors."""
    return steps * (K != 1)


def explicit_unfused_commands(K, commands):
    """Of a GEMM program's RoCC `commands`, those issued by the nests a K loop would fuse: all of
    them when K is 1 (the K loop specialized away, the compiler does not fuse the accumulator's
    zero fill into the first K step nor the stores into the next column's computes, so each phase
    runs its own nest), else none. Numbers or tensors."""
    return commands * (K == 1)


def explicit_program_versions(M, N, K, block_m, block_n, block_k) -> tuple:
    """(interior, ragged-K): how many of an M x N x K GEMM's programs in block_m x block_n x block_k
    blocks run each of the compiler's versions without boundary clamps (baco.passes.interior). A
    program of full row and column blocks is interior when every K step is full, or K is 1 (the
    launcher specializes an argument equal to 1: the K loop and its clamps fold to constants), and
    ragged-K when only its last K step is short (its K extent computed each step); the other
    programs run the general code. Numbers or tensors."""
    full = (M // block_m) * (N // block_n)
    whole_k = (K % block_k == 0) | (K == 1)
    return full * whole_k, full * (whole_k ^ True)     # ^ True: not, of bool tensors too


def explicit_program_version(rows: int, cols: int, ksteps: list, s: GemmSchedule) -> str:
    """The version a program of a rows x cols C block over K steps of `ksteps` columns runs:
    "interior", "ragged_k" (explicit_program_versions of that one block) or "edge"."""
    interior, ragged_k = explicit_program_versions(rows, cols, sum(ksteps), s.block_m, s.block_n, s.block_k)
    return "interior" if interior else "ragged_k" if ragged_k else "edge"


def instructions(terms: dict, table: dict):
    """RISC-V instructions of `terms` (term: how many times, numbers or tensors) at `table`'s
    instructions a term, summed in the terms' order."""
    return sum(n * table[name] for name, n in terms.items())


def loop_conv_program_terms(loops, depthwise=False, strided=False, bias=False, output_rows=True,
                            program_rows=True) -> dict:
    """The LOOP_CONV_INSTRUCTIONS terms one program of the conv (or `depthwise`) kernel's
    LOOP_CONV_WS launch pays and how many times: its own, split into `loops` LOOP_CONV_WS (one per
    input channel block, loop_conv_channels) each further one's, a `strided` layer's (stride not 1:
    the kernel's input view divides by its stride argument, which a stride of 1 specializes away),
    a `bias`'s (its block's address), that of a layer of several programs along its rows
    (`output_rows`: P > the program's rows; the program's first output and input rows, its padding and
    guards at run time, which one program along P folds away under constant shapes), that of such a
    program of several `program_rows` (its rows' bounds) and, in such a program, each further channel
    block's again ("block_rows"). Numbers or tensors."""
    return {"conv": depthwise ^ True, "depthwise": depthwise, "block": loops - 1,   # ^ True: not, of bool tensors too
            "strided": strided, "bias": bias, "output_rows": output_rows, "program_rows": program_rows,
            "block_rows": (loops - 1) * output_rows}


def loop_conv_instructions(programs, loops, depthwise=False, strided=False, bias=False, output_rows=True,
                           program_rows=True):
    """RISC-V instructions of `programs` programs of the conv (or `depthwise`) kernel's LOOP_CONV_WS
    launch of `loops` LOOP_CONV_WS each, of a `strided` layer or not, with a `bias` or not, of a layer
    of several `output_rows` or one, of several `program_rows` a program or one
    (loop_conv_program_terms). Numbers or tensors."""
    return programs * instructions(loop_conv_program_terms(loops, depthwise, strided, bias, output_rows,
                                                           program_rows), LOOP_CONV_INSTRUCTIONS)


# The launch's own LOOP_WS_INSTRUCTIONS terms (its configs, the grid loop's set-up, the fence), once
# before its first program's.
LOOP_WS_LAUNCH_TERMS = {"launch": 1}


def ragged_k_loop(K, block_k):
    """Whether the GEMM kernel's K loop over K rows of B in block_k steps is ragged: more than one
    step and the last one short. Its programs, compiled for their launch's integers, keep that loop
    a run-time loop clamping each step's K window (the whole-K loops' constant trip counts LLVM
    unrolls). Numbers or tensors."""
    return (K > block_k) & (K % block_k != 0)


def loop_ws_program_terms(steps, N, K, split=None, b_mvins=None, b_halves=1, ragged=False, rows=True,
                          cols=True) -> dict:
    """The LOOP_WS_INSTRUCTIONS terms one program of the GEMM kernel's LOOP_WS launch (of N columns
    and K rows of B) pays and how many times, by where its CPU runs them: "program" before its first
    LOOP_WS (its own; the K loop's set-up when it has more than one of its `steps` K steps; the K
    loop and A's row stride unless K is 1, B's and C's row strides unless N is 1: the specialization
    of integers equal to 1 folds them; a `ragged` K loop's set-up, ragged_k_loop), "step" before each
    K step's LOOP_WS (a `ragged` K loop's window clamp and addresses each step), "last" before its last
    step's last LOOP_WS (a split step's second LOOP_WS, after the step's own: `split` names its term,
    split_term; a B the program moves in
    explicitly, `b_mvins` mvins of it into each of `b_halves` halves, "column_mvin" again each in a grid of more than one column of
    programs, whose mvin loop runs on the program's column: its clamp and addresses; None: it moves
    none); "row_axis"
    and "column_axis" before its first LOOP_WS when its launch's grid has more than one row (`rows`)
    or column (`cols`) of programs (an axis of size 1 folds: its program id is 0, grid_axes). The one
    description of the terms: gemm_loop_ws_loops places them, loop_ws_launch_terms and
    loop_ws_instructions count them.
    Numbers or tensors."""
    return {"program": {"program": 1, "steps": steps > 1, "k_loop": K != 1, "n_strides": N != 1, "ragged_k": ragged,
                        "row_axis": rows, "column_axis": cols},
            "step": {"step": 1, "ragged_k_step": ragged},
            "last": {"head": split == "head", "head_last": split == "head_last",
                     "split_after": split == "split_after", "explicit_b": b_halves * (b_mvins is not None),
                     "mvin": b_halves * (b_mvins or 0), "column_mvin": b_halves * (b_mvins or 0) * cols}}


def loop_ws_program_counts(terms: dict, steps) -> dict:
    """A program's loop_ws_program_terms, each term counted over the program's `steps` K steps (and
    its places), in LOOP_WS_INSTRUCTIONS' order."""
    counts = {}
    for place, named in terms.items():
        for name, n in named.items():
            n = n * steps if place == "step" else n
            counts[name] = counts[name] + n if name in counts else n
    return {name: counts[name] for name in LOOP_WS_INSTRUCTIONS if name in counts}


def loop_ws_instructions(programs, steps, N, K, ragged=False, rows=True, cols=True):
    """RISC-V instructions of the GEMM kernel's LOOP_WS launch (LOOP_WS_INSTRUCTIONS) of `programs`
    programs of `steps` K steps each, the last whole or padded, of N columns and K rows of B, the K
    loop `ragged` or not (ragged_k_loop), the grid of more than one row / column of programs or not
    (`rows`, `cols`: grid_axes; loop_ws_program_terms). Plain arithmetic: numbers or tensors."""
    c = LOOP_WS_INSTRUCTIONS
    per_program = loop_ws_program_counts(loop_ws_program_terms(steps, N, K, ragged=ragged, rows=rows, cols=cols),
                                         steps)
    return instructions(LOOP_WS_LAUNCH_TERMS, c) + programs * instructions(per_program, c)


def last_step_form(K: int, s: GemmSchedule, cfg: GemminiConfig, b_transposed: bool = False,
                   b_padded: bool = False, one_program: bool = False, one_row: bool = False) -> str:
    """How the loop-ws pass issues a program's last K step: "whole" (whole DIM blocks), "padded"
    (one LOOP_WS with pad_k: B holds padded_rows(K, DIM) rows and is read row-major), "explicit_b"
    (one padded LOOP_WS on a B moved in explicitly: K < DIM, or a program of one K step over a B
    of one column block, which stays resident down its column, so the column's first program
    moves it, unless the launch is `one_program` or `one_row`), "split" (any other ragged step: a
    one-block head LOOP_WS and one of the whole blocks, the head last in a program's first step) or
    "split_after" (the same two LOOP_WSs, the whole blocks first and the head storing C: a ragged
    step of at least DIM in a `one_row` launch, a grid of one row of several programs of one K
    step, no bias, keeping A, whatever B holds)."""
    kk = K - (-(-K // s.block_k) - 1) * s.block_k
    if kk % cfg.dim == 0:
        return "whole"
    if one_row and not b_transposed and kk >= cfg.dim:
        return "split_after"
    if b_padded and not b_transposed:
        return "padded"
    resident_column = K <= s.block_k and s.block_n <= cfg.dim and not b_transposed and not one_program \
        and not one_row
    return "explicit_b" if kk < cfg.dim or resident_column else "split"


# a split ragged K step (last_step_form's "split") issues its head LOOP_WS after its whole blocks'
# when it is the program's first step and has at least this many K blocks (the head included)
HEAD_LAST_BLOCKS = 3


def head_last_split(k0: int, kk: int, dim: int, bias: bool = False) -> bool:
    """Whether the loop-ws pass issues a split K step at k0 of kk columns as its whole blocks, then
    its head (the first kk % DIM columns), rather than the head first: in a program's first step
    (k0 = 0; a ragged step is the last, so its only one) of at least HEAD_LAST_BLOCKS blocks, where
    the whole blocks' first compute then waits
    only for their own first loads (their A a mvin of up to MAX_BLOCK_LEN blocks), the head's loads
    overlapping their computes (a one-program 20x1x179 at DIM 16 816 -> 799 cycles on Gemmini alone;
    with two blocks, one each, the order gains nothing and costs the CPU ~10 cycles end to end).
    Not with a `bias`: its D would go with the whole blocks, and the order gains nothing measured
    (162x600x260 in 32/256/272 at DIM 16, int8 C: 124,816 -> 124,807 cycles on the ISS) while
    the walk prices it 12% slower (125,375 -> 140,416)."""
    return not bias and k0 == 0 and kk > (HEAD_LAST_BLOCKS - 1) * dim


def split_term(form: str, k0: int, kk: int, dim: int, bias: bool = False):
    """The LOOP_WS_INSTRUCTIONS term of the second LOOP_WS of a last K step at k0 of kk columns the
    pass issues as `form` (last_step_form), None unless it is split: "head" (the head first),
    "head_last" (the whole blocks first, head_last_split) or "split_after" (a one-row grid's, the
    whole blocks first, the head storing C: its programs after the first on the A the first left,
    the step's addresses constants of its branch)."""
    if form == "split_after":
        return "split_after"
    return ("head_last" if head_last_split(k0, kk, dim, bias) else "head") if form == "split" else None


def _loop_ws_columns(M: int, N: int, K: int, s: GemmSchedule) -> list:
    """The GEMM kernel's LOOP_WS launch as the host runs its grid (pid_m innermost): (cols, count,
    programs) for each run of `count` columns of C `cols` wide, `programs` a column's [(rows,
    load_b)] down M: the first moves its B in, the others, when the programs are of one K step,
    compute on the B their predecessor left in the scratchpad (baco.passes.loop_ws._Resident: no
    LdB, no explicit mvins)."""
    one_step = K <= s.block_k
    sizes = [s.block_m] * (M // s.block_m) + ([M % s.block_m] if M % s.block_m else [])
    programs = [(rows, p == 0 or not one_step) for p, rows in enumerate(sizes)]
    widths = [(s.block_n, N // s.block_n)] * (N >= s.block_n) + [(N % s.block_n, 1)] * (N % s.block_n > 0)
    return [(cols, count, programs) for cols, count in widths]


def resident_a(M: int, K: int, s: GemmSchedule, cfg: GemminiConfig, b_transposed: bool = False,
               bias: bool = False) -> bool:
    """Whether the GEMM kernel's programs after the first compute on the A the first left in the
    scratchpad (baco.passes.loop_ws._Resident), as the C library's a_reuse does: a grid of one row of
    programs (M within one block) of one K step; without a `bias` any (a ragged one of at least DIM
    split alike in every program, "split_after": last_step_form), with one a step that is one
    LOOP_WS in every program (K whole blocks or under DIM, a Bᵀ, or a B of one column block; a
    ragged step of a wider B may be split)."""
    return M <= s.block_m and K <= s.block_k and (not bias or b_transposed or K % cfg.dim == 0 or K < cfg.dim
                                                  or s.block_n <= cfg.dim)


def one_row(M: int, N: int, K: int, s: GemmSchedule, bias: bool = False) -> bool:
    """Whether the GEMM kernel's launch is a grid of one row of several programs of one K step with
    no `bias`: last_step_form's `one_row` (A kept: resident_a)."""
    return M <= s.block_m and K <= s.block_k and N > s.block_n and not bias


def one_program(M: int, N: int, s: GemmSchedule) -> bool:
    """Whether the GEMM kernel's launch over M x N under `s` is one program (grid_axes both false)."""
    return not any(grid_axes(M, N, s.block_m, s.block_n))


def grid_axes(M, N, block_m, block_n) -> tuple:
    """Whether the GEMM kernel's grid over M x N in block_m x block_n blocks has more than one row
    and more than one column of programs: its ISS programs are compiled for their grid
    (matmul_kernel's specialize_shapes="iss"), where an axis of size 1 folds (its program id the
    constant 0), as do the passes' tests of it (config elimination's first program, the loop-ws
    pass's one-row grid). Numbers or tensors."""
    return M > block_m, N > block_n


def _gemm_program_terms(M: int, N: int, K: int, s: GemmSchedule, cfg: GemminiConfig, form: str, cols: int,
                        load_b: bool, bias: bool = False) -> dict:
    """loop_ws_program_terms of a GEMM kernel's program over `cols` columns of C whose last K step
    the pass issues as `form` (last_step_form), moving its B in (`load_b`) or computing on a resident
    one (`bias`: a bias in its first step)."""
    steps = -(-K // s.block_k)
    moved = form == "explicit_b" and load_b
    rows, columns = grid_axes(M, N, s.block_m, s.block_n)
    kk = K - (steps - 1) * s.block_k
    return loop_ws_program_terms(steps, N, K, split=split_term(form, (steps - 1) * s.block_k, kk, cfg.dim, bias),
                                 b_mvins=_explicit_b_mvins(kk, cols, cfg) if moved else None,
                                 b_halves=_explicit_b_halves(steps), ragged=ragged_k_loop(K, s.block_k),
                                 rows=rows, cols=columns)


def _explicit_b_halves(steps: int) -> int:
    """The scratchpad halves an explicitly moved B goes into (baco.passes.loop_ws._load_b): a program of
    one K step keeps its B in its column's half (_loop_ws_columns), any other B goes into both and its
    LOOP_WS reads it in its loop slot's half."""
    return 1 if steps == 1 else CONCURRENT_LOOPS


def loop_ws_launch_terms(M: int, N: int, K: int, s: GemmSchedule, cfg: GemminiConfig, b_transposed: bool = False,
                         b_padded: bool = False, bias: bool = False) -> dict:
    """What LOOP_WS_INSTRUCTIONS multiplies in a launch of the GEMM kernel's LOOP_WS programs (as
    gemm_loop_ws_loops charges it): the launch's own terms and its programs'
    (loop_ws_program_terms, counted over their K steps); `bias`: a bias in the first step (a one-row
    launch's form depends on it: last_step_form)."""
    steps = -(-K // s.block_k)
    form = last_step_form(K, s, cfg, b_transposed, b_padded, one_program(M, N, s), one_row(M, N, K, s, bias))
    totals = dict.fromkeys(LOOP_WS_INSTRUCTIONS, 0)
    for cols, count, programs in _loop_ws_columns(M, N, K, s):
        for load_b, n_programs in collections.Counter(load_b for _, load_b in programs).items():
            counts = loop_ws_program_counts(_gemm_program_terms(M, N, K, s, cfg, form, cols, load_b, bias), steps)
            for name, n in counts.items():
                totals[name] += count * n_programs * n
    for name, n in LOOP_WS_LAUNCH_TERMS.items():
        totals[name] += n
    return totals


def _explicit_b_mvins(kk: int, cols: int, cfg: GemminiConfig) -> int:
    """The mvins of an explicitly moved B of kk rows and `cols` columns (baco.passes.loop_ws._move)."""
    return -(-kk // cfg.dim) * -(-(-(-cols // cfg.dim)) // cfg.max_block_len)


def overlapped_cycles(gemmini, cpu, loss):
    """End-to-end cycles of a program whose Gemmini work (`gemmini` cycles, commands arriving for
    free) and CPU issue (`cpu` cycles) overlap but for `loss` of the shorter: the longer plus loss x
    the shorter (1 / programs for a stream that overlaps program by program: one program's share is
    exposed, the first's issue or the last's work; explicit_stream_cycles for the GEMM kernel's).
    Plain arithmetic (max and min through abs), so numbers and tensors alike."""
    total, gap = gemmini + cpu, abs(gemmini - cpu)
    return (total + gap) / 2 + loss * (total - gap) / 2


# The least share of the shorter side an explicit stream exposes: the core and Gemmini contend
# (full reservation stations stall the issue, a fence drains the queues) wherever both are busy. On
# the ISS with the cycle model: a 3x3 14x14 32>64 conv on DIM 64 exposes 0.13 of its CPU's cycles,
# 437x1969x2006 at 128/128/128 on DIM 16 0.14 (8,229,556 end to end, 7,544,824 alone, 6.0 M issuing).
# (The fused programs put the core's issue on their queue timeline instead: fused._Timeline.)
EXPLICIT_EXPOSED_SHARE = 0.14


def explicit_stream_cycles(gemmini, cpu, programs, steps):
    """End-to-end cycles of the GEMM kernel's explicit stream of `programs` programs of `steps` K
    steps whose Gemmini work is `gemmini` cycles and the CPU's issue `cpu`: the CPU runs ahead of
    Gemmini only as far as the reservation stations let it, so a Gemmini-bound stream hides the
    CPU's issue but for the first step's (before Gemmini has work), and a CPU-bound one hides
    Gemmini's work but for the last step's (after the last command): one K step's share of the
    shorter is exposed, and at least EXPLICIT_EXPOSED_SHARE of it (overlapped_cycles). Plain
    arithmetic: numbers or tensors."""
    share = 1.0 / (programs * steps)
    floor = EXPLICIT_EXPOSED_SHARE
    return overlapped_cycles(gemmini, cpu, (share + floor + abs(share - floor)) / 2)


def gemm_loop_ws_loops(M: int, N: int, K: int, s: GemmSchedule, cfg: GemminiConfig, out_int8: bool = False,
                       bias: bool = False, b_transposed: bool = False, b_padded: bool = False) -> list:
    """The LOOP_WSs of the GEMM kernel's programs under `s` (baco.passes.loop_ws), in the order the
    host runs the grid (pid_m innermost), run-length encoded for loop_ws_stream_cycles: per program
    one LOOP_WS a K step, D (`bias`) in the first, C stored by the last; a ragged last step one
    padded LOOP_WS when B's allocation holds padded_rows(K, DIM) rows (`b_padded`), else one padded
    LOOP_WS on a B moved in explicitly when it is shorter than DIM or the program's only step over
    one column block, else
    split into the step's whole blocks and a one-block head (its first K % DIM columns), after them
    in a program's first step, before them in a later one (in a one-row grid of several programs
    without a bias, one_row, the whole blocks first and the head after them) (last_step_form;
    `b_transposed`: B read column-major, LOOP_WS's b_transpose). A program of one
    K step after the first of its column computes on the B its predecessor left in the scratchpad
    (_loop_ws_columns), and in a one-row grid of such programs every program after the first on the A
    the first left (resident_a). The CPU's instructions (LOOP_WS_INSTRUCTIONS) where loop_ws_program_terms
    says the CPU runs them (a split step's own before its first LOOP_WS, the split's before its
    second, as the ISS runs them), the launch's before the first program's."""
    d, c = cfg.dim, LOOP_WS_INSTRUCTIONS
    form = last_step_form(K, s, cfg, b_transposed, b_padded, one_program(M, N, s), one_row(M, N, K, s, bias))

    @functools.cache        # a column's programs are mostly alike, and columns of one width are too
    def program(rows, cols, load_b, load_a=True):
        terms = _gemm_program_terms(M, N, K, s, cfg, form, cols, load_b, bias)
        I, J = -(-rows // d), -(-cols // d)
        shape = dict(I=I, J=J, pad_i=I * d - rows, pad_j=J * d - cols, full_c=not out_int8, load_a=load_a,
                     load_b=load_b,
                     cpu=instructions(terms["step"], c), commands=LOOP_WS_STEP_COMMANDS, b_transposed=b_transposed)
        loops = []
        for k0 in range(0, K, s.block_k):
            kk = min(s.block_k, K - k0)
            bk, last = -(-kk // d), k0 + s.block_k >= K
            step = dict(shape, K=bk, pad_k=bk * d - kk, bias=bias and k0 == 0, store=last)
            if last and form in ("split", "split_after"):   # the whole blocks and the head
                whole, head = dict(step, K=bk - 1, pad_k=0), dict(step, K=1, pad_k=d - kk % d)
                head_last = split_term(form, k0, kk, d, bias) != "head"
                one, two = (whole, head) if head_last else (head, whole)  # the step's code before one
                loops += [LoopWs(**dict(one, store=False)),     # D in the first
                          LoopWs(**dict(two, bias=False, cpu=instructions(terms["last"], c)))]
            elif last:      # an explicitly moved B's mvins just before the LOOP_WS, which then moves none
                moved = terms["last"]["explicit_b"]
                loops.append(LoopWs(**dict(step, cpu=instructions({**terms["step"], **terms["last"]}, c),
                                           raw_cpu=instructions(terms["last"], c) if moved else None,
                                           commands=LOOP_WS_STEP_COMMANDS + terms["last"]["mvin"],
                                           load_b=load_b and not moved, raw_b=kk if moved else 0,
                                           raw_b_halves=_explicit_b_halves(-(-K // s.block_k)))))
            else:
                loops.append(LoopWs(**step))
        loops[0] = replace(loops[0], cpu=loops[0].cpu + instructions(terms["program"], c))
        return loops

    def column(cols, programs, load_a=True):
        return _run_length([program(rows, cols, load_b, load_a) for rows, load_b in programs])

    def launched(runs):
        """A column's runs with the launch's own instructions before its first LOOP_WS."""
        (item, n), rest = runs[0], runs[1:]
        first = [replace(item[0], cpu=item[0].cpu + instructions(LOOP_WS_LAUNCH_TERMS, c))] + item[1:]
        return [(first, 1)] + [(item, n - 1)] * (n > 1) + rest

    (first, count, programs), *rest = _loop_ws_columns(M, N, K, s)
    load_a = not resident_a(M, K, s, cfg, b_transposed, bias)     # by the columns after the first
    return [(launched(column(first, programs)), 1)] + \
        [(column(first, programs, load_a), count - 1)] * (count > 1) + \
        [(column(cols, programs, load_a), n) for cols, n, programs in rest]


def _run_length(items) -> list:
    """Items (each a list of loops) as loop_ws_stream_cycles' run-length encoding: (item, count)
    for each run of equal items."""
    out = []
    for item in items:
        if out and out[-1][0] == item:
            out[-1] = (item, out[-1][1] + 1)
        else:
            out.append((item, 1))
    return out


def gemm_program_cycles(M: int, N: int, K: int, s: GemmSchedule, cfg: GemminiConfig, out_int8: bool = False,
                        k: TimingConstants = DEFAULT_CONSTANTS, bias: bool = False,
                        b_transposed: bool = False, b_padded: bool = False) -> dict:
    """Estimated cycles of the GEMM kernel's program under the weight-stationary, double-buffered
    schedule `s` (`bias`: each C block starts from a bias row; `b_transposed`, `b_padded`: as
    gemm_loop_ws_loops takes them): Gemmini's (`gemmini`: commands
    arriving for free), the CPU's issuing them (`cpu`) and end to end (`cycles`), with `loop_ws`
    telling whether the compiler emits LOOP_WS (the blocks fit the loop unit's halves).

    LOOP_WS: the walk of LoopMatmul (loop_ws_timing) over the program's loops
    (gemm_loop_ws_loops), the CPU issuing them at LOOP_WS_INSTRUCTIONS. The explicit stream
    (explicit_gemm_program_cycles), per program: a prologue loading the first K step, then per K
    step the slower of the array and the DMA loading the next step's A and B (hidden behind the
    computes), the part of the last step's stores the computes do not hide, then the last column's
    stores; a bias's accumulator fill in series with the previous program's stores; the CPU's
    EXPLICIT_INSTRUCTIONS, the two overlapping as explicit_stream_cycles says."""
    if s.dataflow == "WS" and loop_ws_fits(s.block_m, s.block_n, s.block_k, cfg):
        loops = gemm_loop_ws_loops(M, N, K, s, cfg, out_int8, bias, b_transposed, b_padded)
        walk = loop_ws_stream_cycles(loops, cfg, k)
        return {"cycles": walk["cycles"], "gemmini": walk["gemmini"],
                "cpu": _loop_field_sum(loops, "cpu") * k.cpu_cycles_per_instruction,
                "commands": _loop_field_sum(loops, "commands"), "loop_ws": True}
    return explicit_gemm_program_cycles(M, N, K, s, cfg, out_int8, k, bias)


def explicit_gemm_program_cycles(M: int, N: int, K: int, s: GemmSchedule, cfg: GemminiConfig, out_int8: bool = False,
                                 k: TimingConstants = DEFAULT_CONSTANTS, bias: bool = False) -> dict:
    """gemm_program_cycles' estimate of the GEMM kernel's explicit stream under `s` (the program the
    compiler emits when the blocks do not fit LOOP_WS's halves, or with LOOP_WS off), summed over
    the grid's programs as they are: the edge programs' blocks hold only the rows, columns and K
    steps left (explicit_program_costs). Without a bias the next program's first loads overlap a
    program's tail; with one, its accumulator fill waits for this program's stores (the same rows)
    and holds its loads up, so a program's fill, first loads, steps, stores run in series."""
    rows, cols, ksteps = _run_length(pieces(M, s.block_m)), _run_length(pieces(N, s.block_n)), pieces(K, s.block_k)
    gemmini = 0
    # the edge, interior and ragged-K programs' counts (explicit_gemm_terms')
    counts = {kind: dict.fromkeys(("programs", "steps", "columns", "column_steps", "groups", "pairs", "stores",
                                   "fill_mvins", "commands", "unfused_commands"), 0)
              for kind in ("edge", "interior", "ragged_k")}
    for i, ((r, nr), (c, nc)) in enumerate((r, c) for r in rows for c in cols):
        p = explicit_program_costs(r, c, ksteps, s, cfg, out_int8, k, bias)
        if not i and not bias:      # the first program's loads, or the last's tail, exposed
            gemmini += min(p["load"], p["tail"])
        serial = p["fill"] + p["load"] + p["tail"] if bias else max(p["load"], p["tail"])
        gemmini += nr * nc * (serial + p["steady"] + p["store_wait"])
        one = {**p, "programs": 1, "steps": explicit_k_loop_steps(K, len(ksteps)), "columns": -(-c // cfg.dim),
               "unfused_commands": explicit_unfused_commands(K, p["commands"])}
        one["column_steps"] = explicit_column_steps(one["columns"], one["steps"])
        kind = counts[explicit_program_version(r, c, ksteps, s)]
        for name in kind:
            kind[name] += nr * nc * one[name]
    terms = explicit_gemm_terms(counts["edge"], counts["interior"], counts["ragged_k"])
    cpu = explicit_gemm_instructions(terms) * k.cpu_cycles_per_instruction
    programs, commands = (sum(kind[n] for kind in counts.values()) for n in ("programs", "commands"))
    return {"cycles": explicit_stream_cycles(gemmini, cpu, programs, len(ksteps)), "gemmini": gemmini, "cpu": cpu,
            "commands": commands, "loop_ws": False, "terms": terms}


def pieces(n: int, d: int) -> list:
    """n rows or columns in pieces of d (the last one short): DIM-wide tiles, blocks, K steps, a
    mvin's column chunks."""
    return [min(d, n - i) for i in range(0, n, d)]


def bias_zero_moves(rows: int, cols: int, block_rows: int, block_cols: int, cfg: GemminiConfig) -> list:
    """The rows of each zero mvin (DRAM address 0) the compiler lays under an int32 load that
    overwrites rows [0, rows) x columns [0, cols) of a freshly zeroed block_rows x block_cols
    accumulator block (a bias): none when the load covers the block (an interior program), else
    the whole block's, DIM rows and max_block_len_acc tiles a mvin."""
    if rows >= block_rows and cols >= block_cols:
        return []
    d = cfg.dim
    return [d] * (-(-block_rows // d) * -(-block_cols // (cfg.max_block_len_acc * d)))


def explicit_program_costs(rows: int, cols: int, ksteps: list, s: GemmSchedule, cfg: GemminiConfig,
                           out_int8: bool, k: TimingConstants = DEFAULT_CONSTANTS, bias: bool = False) -> dict:
    """One explicit-stream program of a rows x cols C block over K steps of `ksteps` columns of A,
    as the cycle model charges its commands (dma_cycles, local_move_cycles; a compute feeds its A
    rows, at least MIN_FEED_ROWS, new weights take DIM cycles, and one accumulating onto the rows the
    one before wrote waits for the array's pipeline, accumulating_spacing): `load`, the first step's A and B
    mvins; `steady`, the steps' computes or the next steps' loads behind them, whichever is longer;
    `store_wait`, the last step's stores of column j-1 its computes of column j do not hide; `tail`,
    the last column's stores its own last computes do not hide, then one store; `fill`, with a bias,
    the zero mvins under the bias rows when they do not cover the accumulator block (an edge
    program's; bias_zero_moves) and the bias rows moved in (int32); `commands`, its RoCC commands."""
    d, mbl = cfg.dim, cfg.max_block_len
    out_bytes = 1 if out_int8 else cfg.acc_bytes
    row_tiles, col_tiles = pieces(rows, d), pieces(cols, d)

    def moves(tile_rows, width, esize, blocks):
        """DMA cycles and mvins of tiles of `tile_rows` rows, `width` columns, `blocks` DIM-wide blocks a mvin."""
        chunks = pieces(width, blocks * d)
        return sum(dma_cycles(r, c * esize, cfg, k) for r in tile_rows for c in chunks), len(tile_rows) * len(chunks)

    feeds = [max(r, MIN_FEED_ROWS) + k.compute_overhead for r in row_tiles]
    group = max(sum(feeds), d + k.compute_overhead)
    # a column's groups after its first accumulate onto the rows the one before wrote, and so does a
    # K step's first onto the step before's when the block is one column wide
    same = k.accumulating_spacing(group, feeds[0], d)

    def column(inner_tiles):
        """The cycles of one column's groups of computes over `inner_tiles` weight blocks."""
        return group + (inner_tiles - 1) * same

    steps, groups = [], 0
    for kk in ksteps:
        (a, a_mvins), (b, b_mvins) = moves(row_tiles, kk, cfg.input_bytes, mbl), moves(pieces(kk, d), cols,
                                                                                    cfg.input_bytes, mbl)
        step_groups = len(col_tiles) * -(-kk // d)      # a weight block each, its row tiles' computes under it
        steps.append((a + b, a_mvins + b_mvins + 2 * len(row_tiles) * step_groups, -(-kk // d)))
        groups += step_groups
    store_col = [sum(dma_cycles(r, c * out_bytes, cfg, k) + k.acc_scale_latency for r in row_tiles) for c in col_tiles]
    last_k = steps[-1][2]
    store_wait = sum(max(0.0, st - column(last_k)) for st in store_col[:-1])
    tail = max(0.0, store_col[-1] - group) + store_col[-1] / len(row_tiles)
    fill, fill_mvins = 0.0, 0
    if bias:
        zeros = bias_zero_moves(rows, cols, s.block_m, s.block_n, cfg)
        bias_load, bias_mvins = moves(row_tiles, cols, cfg.acc_bytes, cfg.max_block_len_acc)
        fill, fill_mvins = sum(local_move_cycles(r, k) for r in zeros) + bias_load, len(zeros) + bias_mvins
    computes = sum(len(col_tiles) * column(g) for _, _, g in steps) + \
        (len(col_tiles) == 1) * (len(steps) - 1) * (same - group)
    # the first step's loads are `load` (under the previous program's tail), not also behind computes
    steady = max(computes, sum(ld for ld, _, _ in steps[1:]))
    commands = sum(n for _, n, _ in steps) + len(row_tiles) * len(col_tiles) + fill_mvins
    return {"load": steps[0][0], "steady": steady, "store_wait": store_wait, "tail": tail, "fill": fill,
            "commands": commands, "groups": groups, "pairs": groups * len(row_tiles),
            "stores": len(row_tiles) * len(col_tiles),
            "fill_mvins": fill_mvins}


def _loop_field_sum(items, field: str) -> float:
    """The sum of a LoopWs property over run-length encoded loops (gemm_loop_ws_loops')."""
    return sum(getattr(item, field) if isinstance(item, LoopWs) else item[1] * _loop_field_sum(item[0], field)
               for item in items)


# candidates whose lower bound (loop_ws_lower_bound) is within this fraction of the best walked so
# far are not walked: they could win by at most that much (on a compute-bound GEMM every candidate's
# bound is within a fraction of a percent of the best, and walking them all takes seconds)
WALK_MARGIN = 0.001


@functools.lru_cache(maxsize=1024)
def default_gemm_schedule(M: int, N: int, K: int, cfg: GemminiConfig, out_int8: bool = False,
                          bias: bool = False, b_transposed: bool = False, b_padded: bool = False) -> GemmSchedule:
    """A good weight-stationary, double-buffered schedule for an M×N×K GEMM on `cfg`: of the
    candidate blocks (DIM·2^i, the whole padded dimension and its even splits into 2-8 blocks, and
    the C library's tiled_matmul_auto tile, within capacity) the one gemm_program_cycles expects
    fastest end to end, the CPU that issues the commands included. Blocks that fit LOOP_WS's halves
    of the memories compile to one LOOP_WS per K step, priced by a walk of LoopMatmul as the cycle
    model runs it (loop_ws_timing: ~0.1-5 ms a candidate, so candidates are walked in the order of
    their lower bound and those that cannot win by more than WALK_MARGIN are not, but for the
    library's tile, which is always walked); larger blocks keep the explicit stream, which the CPU
    issues at the instructions EXPLICIT_TERM_TABLE prices (an edge program ~13 a preload/compute pair
    and ~20 a store, an interior one ~3 a command and ~26 a C column of a K step where its column
    loop stays a loop, a ragged-K one ~6 a command and ~29 a K step). Ties go to the larger
    C block, then the smaller K step, then the taller C block. `bias`: the kernel starts each C block
    from a bias row (its LOOP_WS moves it into the accumulator first);
    `b_transposed`, `b_padded`: B column-major, B holding padded_rows(K, DIM) rows (a ragged K step is
    then one LOOP_WS: gemm_loop_ws_loops). Cached: models ask again for the same shapes."""
    d = cfg.dim
    tiles = max(1, -(-M // d)), max(1, -(-N // d)), max(1, -(-K // d))

    def candidates(t):
        """Powers of two, the whole dimension, and the blocks that split it evenly into 2-8
        programs (a ragged last block wastes the array and a program's CPU work)."""
        return {min(t, 1 << i) for i in range(t.bit_length() + 1)} | {-(-t // p) for p in range(1, 9)}

    library = tiled_matmul_auto(M, N, K, cfg, "WS")
    blocks = {(tm, tn, tk) for tm in candidates(tiles[0]) for tn in candidates(tiles[1])
              for tk in candidates(tiles[2])} | {library}
    walks, best = [], None
    for tm, tn, tk in blocks:
        s = GemmSchedule(tm * d, tn * d, tk * d, "WS", True)
        if schedule_problems(s, cfg, out_int8):
            continue
        tie = (-tm * tn, tk, -tm)
        if loop_ws_fits(s.block_m, s.block_n, s.block_k, cfg):
            loops = gemm_loop_ws_loops(M, N, K, s, cfg, out_int8, bias, b_transposed, b_padded)
            walks.append((loop_ws_lower_bound(loops, cfg), tie, s, loops))
        else:
            key = (gemm_program_cycles(M, N, K, s, cfg, out_int8, bias=bias)["cycles"], *tie)
            best = min(best, (key, s)) if best else (key, s)
    for bound, tie, s, loops in sorted(walks, key=lambda w: w[:2]):
        # the library's tile is always walked: on a compute-bound GEMM every bound is within the
        # margin, and the candidate walked first can lose to it by less (437x1969x2006 at DIM 16)
        if best is not None and bound >= best[0][0] * (1 - WALK_MARGIN) and \
                (s.block_m, s.block_n, s.block_k) != tuple(t * d for t in library):
            continue
        key = (loop_ws_end_to_end(loops, cfg), *tie)
        best = min(best, (key, s)) if best else (key, s)
    if best is None:
        raise ValueError(f"no GEMM schedule fits {cfg.sp_rows} scratchpad / {cfg.acc_rows} accumulator rows "
                         f"at DIM={d}")
    return best[1]


def default_depthwise_schedule(P: int, Q: int, R: int, S: int, cfg: GemminiConfig, out_int8: bool = False, *,
                               stride=(1, 1), dilation=(1, 1), width: int | None = None, bias: bool = False,
                               padding=(0, 0), image: tuple[int, int] | None = None) -> GemmSchedule:
    """The schedule a depthwise convolution runs when none is given (baco.kernels.depthwise; the
    tuner's model of it): `width` channels per program and step (BLOCK_N = BLOCK_K; DIM, a diagonal
    weight tile, by default) and default_conv_schedule's output rows and columns for one channel
    block's width x width convolution (whole output rows when they fit, shrunk to LoopConv's halves
    when the strides and dilations along H and W agree), ranked with the layer's `bias`, `padding`
    (rows, columns) and `image` (H, W) as default_conv_schedule ranks a convolution's (MobileNetV2's
    first 3x3 depthwise layer, 32x32x32 padded at DIM 16, with a bias: 2 rows a program walked
    unpadded, 21,930 cycles on the cycle model; 3 rows, 20,678)."""
    width = cfg.dim if width is None else width
    s = default_conv_schedule(Q, cfg.dim, cfg.dim, cfg, out_int8, P=P, taps=R * S, bias=bias,
                              **loop_conv_ranking((R, S), stride, dilation, padding, image))
    return replace(s, block_n=width, block_k=width)


def loop_conv_ranking(filter_size: tuple[int, int], stride=(1, 1), dilation=(1, 1), padding=(0, 0),
                      image: tuple[int, int] | None = None) -> dict:
    """default_conv_schedule's LoopConv arguments for a convolution of `filter_size` (R, S) with
    (rows, columns) `stride`, `dilation` and `padding` reading an `image` (H, W): none for different
    strides or dilations along H and W, which one LOOP_CONV_WS cannot take; the padding and image its
    ranking walks where the padding is the same along H and W and less than the dilated filter's
    extent, as a baco.problem.layer.Layer's (else the unpadded walk)."""
    if stride[0] != stride[1] or dilation[0] != dilation[1]:
        return {}
    options = {"filter_size": tuple(filter_size), "stride": stride[0], "dilation": dilation[0]}
    if image is not None and padding[0] == padding[1] < (min(filter_size) - 1) * dilation[0] + 1:
        options.update(padding=padding[0], image=tuple(image))
    return options


MAX_CONV_ROWS = 16     # output rows per program the conv default takes at most (the compiler unrolls a load per row)


def loop_conv_channel_block(C: int, irows: int, icols: int, krows: int, kcols: int, och_banks: int,
                            cfg: GemminiConfig) -> int | None:
    """Input channels one LOOP_CONV_WS of a conv program takes, in LoopConv's layout
    (baco.sim.loops.conv_params): all C when the input tile (⌈C/DIM⌉ banks of irows × icols pixels)
    and the weights (och_banks × krows·kcols·C rows) fit half the scratchpad; else the program is
    split into the fewest channel blocks that fit, each a multiple of DIM channels (the last one
    the rest), as even as that allows; None when even DIM channels do not fit. The blocks
    accumulate into the same accumulator rows, as the C library's tiled_conv splits its kchs
    (the first loads the bias, the last stores). The loop-conv-ws pass computes the same rule at
    run time for each program's tile."""
    d, half = cfg.dim, loop_unit_half(cfg).sp_rows
    pixels, weight_rows = irows * icols, och_banks * krows * kcols
    if -(-C // d) * pixels + weight_rows * C <= half:
        return C
    widest = half // (pixels + weight_rows * d) * d
    if widest == 0:
        return None
    blocks = -(-C // widest)
    return -(-(-(-C // blocks)) // d) * d


def loop_conv_downsamples(R: int, S: int, stride: int) -> bool:
    """Whether the loop-conv-ws pass sets LoopConv's downsample flag on a convolution's programs (as
    tiled_conv downsamples): a 1x1 stride-2 tile moves in only the even rows and columns its
    computes read, a quarter of its input pixels."""
    return R == S == 1 and stride == 2


def loop_conv_tile(s: GemmSchedule, P: int, Q: int, K: int, R: int, S: int, stride: int,
                   dilation: int) -> tuple[int, int, int, int]:
    """(orows, ocols, irows, icols) of the LOOP_CONV_WS tile of a program of schedule `s` (s.rows
    output rows of block_m columns of a P×Q output, every R×S tap): the output pixels and the
    input pixels (padding included) LoopConv moves in."""
    orows, ocols = min(s.rows, P), min(s.block_m, Q)
    return orows, ocols, orows * stride + dilation * (R - 1), ocols * stride + dilation * (S - 1)


def loop_conv_channels(s: GemmSchedule, P: int, Q: int, K: int, C: int, R: int, S: int, stride: int,
                       dilation: int, cfg: GemminiConfig) -> int | None:
    """Input channels per LOOP_CONV_WS of a convolution program of schedule `s`
    (loop_conv_channel_block: C when all fit), None when LoopConv cannot run it: not even DIM
    channels fit half the scratchpad, or the output tile (⌈block_n/DIM⌉ × rows·columns) does not
    fit half the accumulator."""
    d, half = cfg.dim, loop_unit_half(cfg)
    orows, ocols, irows, icols = loop_conv_tile(s, P, Q, K, R, S, stride, dilation)
    och_banks = -(-min(s.block_n, K) // d)
    if och_banks * orows * ocols > half.acc_rows:
        return None
    ds = loop_conv_downsamples(R, S, stride)
    return loop_conv_channel_block(C, irows >> ds, icols >> ds, R, S, och_banks, cfg)


def loop_conv_fits(s: GemmSchedule, P: int, Q: int, K: int, C: int, R: int, S: int, stride: int, dilation: int,
                   cfg: GemminiConfig) -> bool:
    """A convolution program of schedule `s` (s.rows output rows of block_m columns of a P×Q output,
    block_n of K output channels, all C input channels and R×S taps) fits LoopConv's halves of the
    memories, in LoopConv's layout (baco.sim.loops.conv_params, untransposed): the input tile
    (⌈C/DIM⌉ banks of (rows·stride + dilated R − 1) × (columns·stride + dilated S − 1) pixels) and
    the weights (⌈block_n/DIM⌉ × R·S·C rows) in half the scratchpad, the output tile (⌈block_n/DIM⌉
    × rows·columns) in half the accumulator."""
    d, half = cfg.dim, loop_unit_half(cfg)
    orows, ocols, irows, icols = loop_conv_tile(s, P, Q, K, R, S, stride, dilation)
    och_banks = -(-min(s.block_n, K) // d)
    ds = loop_conv_downsamples(R, S, stride)
    inputs, weights = -(-C // d) * (irows >> ds) * (icols >> ds), och_banks * R * S * C
    return inputs + weights <= half.sp_rows and och_banks * orows * ocols <= half.acc_rows


def default_conv_schedule(Q: int, K: int, C: int, cfg: GemminiConfig, out_int8: bool = False, *, P: int = 1,
                          taps: int = 1, filter_size: tuple[int, int] | None = None, stride: int = 1,
                          dilation: int = 1, bias: bool = False, padding: int = 0,
                          image: tuple[int, int] | None = None) -> GemmSchedule:
    """The schedule a convolution runs when none is given (baco/kernels/conv.py).

    It starts from default_gemm_schedule of the image's GEMM, P*Q pixels x K x C (Q = all N*H*W
    pixels for a pointwise conv, P = 1). When its block_m holds two or more output rows, the
    program computes whole rows: block_m = Q and rows = as many rows as fit the capacity rule with
    that block_n (at most P and MAX_CONV_ROWS, spread evenly over the programs; on the cycle model
    more rows were faster on every layer tried), so each preloaded weight tile serves rows*Q pixels
    (on the cycle model a 7x7 image's 3x3 layer, C = K = 256, ran 1.9x faster at DIM 16 and 4.7x at
    DIM 32 than with one row per program). Otherwise one row per program: default_gemm_schedule of
    the row's GEMM Q x K x C. With several filter taps a step takes DIM input channels: the tap loop
    already gives the reduction many steps, and on the cycle model a DIM-wide step was 1.24-1.59x
    faster at DIM 16 on 3x3 layers (the same at DIM 32).

    With `filter_size` (R, S) given (a convolution the loop-conv-ws pass can make one LOOP_CONV_WS a
    program: int8 output, one stride and one dilation for both axes), the schedule is the fastest
    end to end (loop_conv_program_cycles: LoopConv's walk and the CPU issuing each program) of those
    whose program fits LoopConv's halves, its input channels in one or several LOOP_CONV_WS
    (loop_conv_channels), and the capacity rule: whole output rows
    (rows = ⌈P/g⌉ for g programs along P, at most MAX_CONV_ROWS) or one row of DIM·2^i columns, by
    DIM·2^i output channels (or all K), the starting schedule's step. Such a program is ~7 RoCC
    commands instead of an explicit stream at ~60 instructions a command, which the CPU cannot issue
    as fast as Gemmini runs it; and among them the GEMM default's blocks are often far from the best
    (a 28x28 3x3 layer, C = 128, K = 256 at DIM 16: one row of 32 columns by 64 channels, 1,547,507
    cycles on the cycle model; 10 rows of 28 by 16 channels, 983,289: each weight block LoopConv
    preloads then serves 280 pixels instead of 28). When even DIM-sized blocks do not fit, the explicit schedule
    stays. `bias`: the programs load a bias, which the GEMM default it starts from and the ranking
    price (MobileNetV2 224x224's 7x7 960->320 pointwise layer at DIM 16, a GEMM of 49 pixels: 32/320/16
    without it, an explicit stream of 170,417 cycles end to end on the ISS; with it 32/32/160, LOOP_WS,
    81,207); on the LoopConv ranking its mvins cost the candidates
    unalike: DIM 32 28x28 64->64 3x3 ran 6 rows a program in 36,126 cycles and 4 rows, fastest
    without a bias, in 41,258). `padding` and `image` (H, W): the image the layer reads, padded by
    that many zero rows and columns each side (program_conv_tiles; by default the unpadded image the
    outputs read), which the ranking walks as the kernel runs it: a one-row program at the padded
    image's edge runs only its tap rows inside the image (3x3 'same' on a 1x1 image, 3->64 channels
    at DIM 16: one program 336 cycles on the cycle model, walked 857 without the padding and chosen
    against two, 413)."""
    s = _default_conv_schedule(Q, K, C, cfg, out_int8, P, taps, bias)
    if filter_size is None or not out_int8:
        return s
    return _fastest_loop_conv(s, P, Q, K, C, *filter_size, stride, dilation, cfg, bias, padding,
                              None if image is None else tuple(image)) or s



def pointwise_loop_conv_schedule(N: int, P: int, Q: int, K: int, C: int, cfg: GemminiConfig,
                                 bias: bool = False) -> GemmSchedule | None:
    """The LoopConv schedule a 1x1 stride-1 unpadded convolution with int8 output (N images of P x Q
    pixels; `bias`: its accumulators start from a bias) runs by default when its LOOP_CONV_WS
    programs (default_conv_schedule's; per image loop_conv_program_cycles) are estimated faster end
    to end than the GEMM of all N·P·Q pixels (default_conv_schedule's GEMM; gemm_program_cycles), as
    the C library runs such layers through tiled_conv; None when the GEMM is not slower or no
    LoopConv program fits. Both sides price the bias as their streams load it (LoopConv's walk its
    bias mvins, one per DIM pixels of an output row; LoopMatmul's walk its D loads): on the cycle
    model it costs the two unalike (DIM 16: 14x14 256->256 GEMM +7,318, LoopConv +840; 56x56
    64->256 +26,669 and +79,409; 13x13 33->100 +2,214 and +2,381)."""
    s = default_conv_schedule(Q, K, C, cfg, True, P=P, filter_size=(1, 1), bias=bias)
    if not loop_conv_channels(s, P, Q, K, C, 1, 1, 1, 1, cfg):
        return None
    gemm = default_conv_schedule(N * P * Q, K, C, cfg, True, bias=bias)
    if N * loop_conv_program_cycles(P, Q, K, C, 1, 1, 1, 1, s, cfg, bias=bias) >= \
            gemm_program_cycles(N * P * Q, K, C, gemm, cfg, True, bias=bias)["cycles"]:
        return None
    return s


def loop_conv_walked_channels(s: GemmSchedule, P: int, Q: int, K: int, C: int, R: int, S: int, stride: int,
                              dilation: int, cfg: GemminiConfig, padding: int,
                              image: tuple[int, int] | None) -> int | None:
    """loop_conv_channels' input channels a LOOP_CONV_WS, or, for a layer of one output row in a
    padded image, the loop-conv-ws pass's for its one program row: its tile holds only the tap rows
    inside the image (program_tap_rows; stride + dilation x (tap rows - 1) rows), so more channels
    may fit (3x3/2 'same' 5x5 on a 2x2 image, 64->256 at DIM 32: all 64 in one LOOP_CONV_WS where
    the unpadded tile takes two of 32)."""
    channels = loop_conv_channels(s, P, Q, K, C, R, S, stride, dilation, cfg)
    if P != 1 or image is None or channels is None:
        return channels
    r_lo, r_hi = program_tap_rows(0, 1, image[0], R, stride, dilation, padding)
    krows, icols = r_hi - r_lo, loop_conv_tile(s, P, Q, K, R, S, stride, dilation)[3]
    ds = loop_conv_downsamples(R, S, stride)
    return loop_conv_channel_block(C, (stride + dilation * (krows - 1)) >> ds, icols >> ds, krows, S,
                                   -(-min(s.block_n, K) // cfg.dim), cfg) or channels


def loop_conv_program_cycles(P: int, Q: int, K: int, C: int, R: int, S: int, stride: int, dilation: int,
                             s: GemmSchedule, cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS,
                             bias: bool = False, padding: int = 0, image: tuple[int, int] | None = None) -> float:
    """Estimated end-to-end cycles of one image's convolution run as LOOP_CONV_WS programs under `s`
    (loop_conv_channels' input channels per LOOP_CONV_WS, or loop_conv_walked_channels'; `bias`: each
    program's first loads a bias; `padding`, `image`: program_conv_tiles'): LoopConv's stream
    (loop_conv_timing's walk of the programs' tiles, Gemmini alone) and the CPU issuing the programs
    (loop_conv_instructions) as a two-stage pipeline (two loops in flight: the CPU issues the next
    program while Gemmini runs this one): the first program's issue, then Gemmini's work, or the
    CPU's issue of every program, then the last program's work alone (the walk of its tiles: Gemmini
    idles until it arrives), whichever is longer. The ranking charged one more program's issue
    instead (max(Gemmini, CPU) + one issue), which a CPU-bound candidate of many programs does not
    run: 3x3/2 'same' on a 2x2 image, 3->256 at DIM 16, on the ISS with the cycle model 4 programs
    2,157 cycles, 2 programs 1,678, 1 program 2,179 (priced 2,091, 1,667, 2,195) (loop_conv_pipeline_cycles,
    the tuner's rule too: kernel_model.conv_end_to_end)."""
    channels = loop_conv_walked_channels(s, P, Q, K, C, R, S, stride, dilation, cfg, padding, image)
    downsample = loop_conv_downsamples(R, S, stride)
    tiles = program_conv_tiles(1, P, Q, K, C, R, S, stride, dilation, s.rows, s.block_m, s.block_n,
                               channels=channels, downsample=downsample, padding=padding, image=image)
    gemmini = loop_conv_stream_cycles(tiles, cfg, dilation=dilation, bias=bias,
                                      downsample=int(downsample))
    loops = -(-C // channels)
    programs = len(tiles) // loops
    issue = loop_conv_instructions(1, loops, strided=stride != 1, bias=bias, output_rows=P > s.rows,
                                   program_rows=s.rows > 1 and P > s.rows) \
        * k.cpu_cycles_per_instruction
    last = loop_conv_stream_cycles(tiles[-loops:], cfg, dilation=dilation, bias=bias, downsample=int(downsample))
    return loop_conv_pipeline_cycles(gemmini, programs * issue, programs, last)


def loop_conv_pipeline_cycles(gemmini, cpu, programs, last):
    """End-to-end cycles of LOOP_CONV_WS programs whose Gemmini work is `gemmini` cycles (the walk
    of all their tiles), the CPU's issue of all `programs` of them `cpu` cycles and the last
    program's work alone `last` (the walk of its tiles): a two-stage pipeline (two loops in flight:
    the CPU issues the next program while Gemmini runs this one), the first program's issue then
    Gemmini's work, or every program's issue then the last program's work, whichever is longer
    (loop_conv_program_cycles). Plain arithmetic (max through abs), so numbers and tensors alike."""
    a, b = gemmini + cpu / programs, cpu + last
    return (a + b + abs(a - b)) / 2


def pooled_column_tiles(pocols: int, columns: int, orows: int, och_banks: int, pool: int, pool_stride: int,
                        cfg: GemminiConfig) -> tuple[int, int] | None:
    """(tiles, pooled columns a tile) of a pooled LOOP_CONV_WS program whose tile is `orows` conv
    rows of och_banks x DIM channels, `columns` conv columns and `pocols` pooled columns: one tile
    when the whole rows fit half the accumulator (och_banks x orows x columns rows) and config_st's
    8-bit ocols, else the fewest tiles of pooled columns whose conv columns ((pooled columns - 1) x
    pool_stride + pool, the windows' halo included) fit, the pooled columns spread evenly over them,
    as the C library's tiled_conv tiles pocols; None when not one pooled column fits. The
    loop-conv-ws pass computes the same rule at run time for each program."""
    fit = min(loop_unit_half(cfg).acc_rows // max(1, och_banks * orows), 255)
    if columns <= fit:
        return 1, pocols
    if fit < pool:
        return None
    tiles = -(-pocols // ((fit - pool) // pool_stride + 1))
    return tiles, -(-pocols // tiles)


def pooled_program_tiles(N: int, H: int, W: int, K: int, C: int, R: int, S: int, stride: int, padding: tuple,
                         dilation: int, pr: int, block_n: int, pool: int, pool_stride: int, pool_padding: int,
                         cfg: GemminiConfig) -> tuple[list, list] | None:
    """(tiles, each program's LOOP_CONV_WS count) of the pooled conv kernel's LoopConv programs
    (baco.kernels.pool.conv2d_pool_kernel through the loop-conv-ws pass) of `pr` pooled rows and
    block_n output channels: per program (the grid's order, images innermost) its conv rows inside
    the image, per tile of pooled columns (pooled_column_tiles) their conv columns inside the image,
    per input channel block (loop_conv_channel_block, for the widest tile) one LOOP_CONV_WS (each in
    its loop slot's half: the pass's spad ids are 0), as loop_conv_stream_cycles' tuples with pooled
    stores; None when the program does not fit LoopConv. `padding`: the convolution's (rows, columns)."""
    pad_h, pad_w = padding
    P = (H + 2 * pad_h - dilation * (R - 1) - 1) // stride + 1
    Q = (W + 2 * pad_w - dilation * (S - 1) - 1) // stride + 1
    PH, PW = ((n + 2 * pool_padding - pool) // pool_stride + 1 for n in (P, Q))
    rows = (pr - 1) * pool_stride + pool
    tiles, loops = [], []
    for k0 in range(0, K, block_n):
        och = min(block_n, K - k0)
        banks = -(-och // cfg.dim)
        for pr0 in range(0, PH, pr):
            lo = pr0 * pool_stride - pool_padding
            o_lo, o_hi = max(0, lo), min(P, lo + rows)
            orows = o_hi - o_lo
            porows = min(pr, PH - pr0)
            columns = pooled_column_tiles(PW, Q, orows, banks, pool, pool_stride, cfg)
            if columns is None:
                return None
            col_tiles, pcn = columns
            tile_rows = orows * stride + dilation * (R - 1)
            h = o_lo * stride - pad_h
            pad_rows = max(0, -h) + max(0, h + tile_rows - H)
            widest = min((pcn - 1) * pool_stride + pool, Q) * stride + dilation * (S - 1)
            chs = loop_conv_channel_block(C, tile_rows, widest, R, S, banks, cfg)
            if chs is None:
                return None
            blocks = [(c0, min(chs, C - c0)) for c0 in range(0, C, chs)]
            for n in range(N):
                loops.append(col_tiles * len(blocks))
                for t in range(col_tiles):
                    pc0 = t * pcn
                    pcols = min(pcn, PW - pc0)
                    ocol = pc0 * pool_stride - pool_padding
                    c_lo, c_hi = max(0, ocol), min(Q, ocol + (pcols - 1) * pool_stride + pool)
                    ocols = c_hi - c_lo
                    w = c_lo * stride - pad_w
                    tile_cols = ocols * stride + dilation * (S - 1)
                    pad_cols = max(0, -w) + max(0, w + tile_cols - W)
                    for b, (c0, ich) in enumerate(blocks):
                        tiles.append((1, orows, ocols, och, R, S, ich, tile_rows - pad_rows, tile_cols - pad_cols,
                                      b == 0, b == len(blocks) - 1, pad_rows, pad_cols, (porows, pcols, pool)))
    return tiles, loops


def pooled_loop_conv_cycles(N: int, H: int, W: int, K: int, C: int, R: int, S: int, stride: int, padding: tuple,
                            dilation: int, pr: int, block_n: int, pool: int, pool_stride: int, pool_padding: int,
                            cfg: GemminiConfig, k: TimingConstants = DEFAULT_CONSTANTS,
                            bias: bool = False) -> float | None:
    """Estimated end-to-end cycles of the pooled conv kernel's LoopConv programs (pooled_program_tiles),
    as loop_conv_program_cycles prices a convolution's: LoopConv's walk or the CPU issuing the
    programs, whichever is slower, plus one program's issue; None when a program does not fit.
    `bias`: each tile's first LOOP_CONV_WS loads a bias (a model's stem: its folded BatchNorm)."""
    built = pooled_program_tiles(N, H, W, K, C, R, S, stride, padding, dilation, pr, block_n, pool, pool_stride,
                                 pool_padding, cfg)
    if built is None:
        return None
    tiles, loops = built
    gemmini = loop_conv_stream_cycles(tiles, cfg, dilation=dilation, bias=bias)
    cpu = k.cpu_cycles_per_instruction
    issue = [loop_conv_instructions(1, n, strided=stride != 1, bias=bias) * cpu for n in loops]
    return max(gemmini, sum(issue)) + issue[0]


# LoopConv programs the walk prices within this fraction of the fastest are ties: the cycle model
# runs the one of fewer, larger programs faster (ResNet-50's 28x28 512->1024 1x1/2 at DIM 16: 5 rows
# a program, 441,973 walked, 453,741 run; all 14 rows, 442,173 walked, 442,291 run)
CONV_WALK_MARGIN = 0.001


def walk_ties(walked: dict) -> list:
    """Of `walked` (a candidate -> its walked cycles), the candidates within CONV_WALK_MARGIN of the
    fastest: ties, which the callers break to the larger output tile."""
    fastest = min(walked.values())
    return [c for c, cycles in walked.items() if cycles <= fastest * (1 + CONV_WALK_MARGIN)]


@functools.lru_cache(maxsize=1024)
def _fastest_loop_conv(base: GemmSchedule, P: int, Q: int, K: int, C: int, R: int, S: int, stride: int,
                       dilation: int, cfg: GemminiConfig, bias: bool, padding: int = 0,
                       image: tuple[int, int] | None = None) -> GemmSchedule | None:
    """default_conv_schedule's LoopConv search from `base` (its block_k, dataflow and double
    buffering); None when no program fits. Of the programs within CONV_WALK_MARGIN of the fastest,
    the largest output tile (the fewest programs). Cached: a model's layers ask again for the same
    shapes."""
    d = cfg.dim

    def sizes(n):
        """DIM·2^i below n, and n."""
        return sorted({min(n, d << i) for i in range((-(-n // d)).bit_length() + 1)})

    shapes = [(rows, Q) for rows in sorted({-(-P // g) for g in range(1, P + 1)}) if 1 < rows <= MAX_CONV_ROWS]
    candidates = [replace(base, rows=rows, block_m=bm, block_n=bn)
                  for rows, bm in shapes + [(1, bm) for bm in sizes(Q)] for bn in sizes(K)]
    fitting = [f for f in candidates if loop_conv_channels(f, P, Q, K, C, R, S, stride, dilation, cfg)
               and not schedule_problems(f, cfg, True)]
    if not fitting:
        return None
    cycles = {f: loop_conv_program_cycles(P, Q, K, C, R, S, stride, dilation, f, cfg, bias=bias, padding=padding,
                                          image=image) for f in fitting}
    return max(walk_ties(cycles), key=lambda f: (f.rows * min(f.block_m, Q) * min(f.block_n, K), -cycles[f]))


def _default_conv_schedule(Q: int, K: int, C: int, cfg: GemminiConfig, out_int8: bool, P: int,
                           taps: int, bias: bool = False) -> GemmSchedule:
    """default_conv_schedule without the loop unit's limits."""
    step = (lambda s: replace(s, block_k=min(s.block_k, cfg.dim))) if taps > 1 else (lambda s: s)  # noqa: E731
    image = step(default_gemm_schedule(P * Q, K, C, cfg, out_int8, bias))
    if P < 2 or image.block_m < 2 * Q:
        return step(default_gemm_schedule(Q, K, C, cfg, out_int8, bias))
    fits = [r for r in range(2, min(P, MAX_CONV_ROWS) + 1)
            if not schedule_problems(replace(image, block_m=Q, rows=r), cfg, out_int8)]
    if not fits:
        return step(default_gemm_schedule(Q, K, C, cfg, out_int8, bias))
    rows = -(-P // -(-P // fits[-1]))          # the fewest programs, rows spread evenly over them
    return replace(image, block_m=Q, rows=rows)


def resadd_blocks(M: int, N: int, config: GemminiConfig) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N) of the residual-add kernel (baco.kernels.resadd) on M x N operands when
    no block is given (its launch and the tuner's residual_add_cost ask here). Large blocks: the
    kernel holds one int32 accumulator block (no scratchpad), so up to half the accumulator rows,
    at most 8 column tiles wide (fewer when half the accumulator holds fewer DIM-row tiles:
    BERT's 768 columns on a 128x128 array with 256 KB). When M is not whole
    DIM blocks BLOCK_M divides its whole blocks, so only the last M % DIM rows are a program of
    ragged rows (an explicit stream) and the others are LOOP_WSs (255x255 at DIM 16: 0.85x ->
    0.98x the C library's cycles, 196x33: 0.76x -> 0.90x, measured end to end on the ISS)."""
    d = config.dim
    up = lambda v: -(-v // d) * d  # noqa: E731
    bn = min(up(N), 8 * d, max(1, config.acc_rows // 2 // d) * d)
    bm = min(up(M), max(d, (config.acc_rows // 2) // (bn // d) // d * d))
    whole = M // d * d
    if M % d and whole:
        bm = max(m for m in range(d, min(bm, whole) + 1, d) if whole % m == 0)
    return bm, bn


def resadd_programs(M: int, N: int, config: GemminiConfig) -> list:
    """The (rows, cols) window of each program of the residual-add kernel on M x N operands at
    resadd_blocks, row blocks outer (the launch's grid order)."""
    bm, bn = resadd_blocks(M, N, config)
    return [(rows, cols) for rows in pieces(M, bm) for cols in pieces(N, bn)]


# The residual-add kernel's programs (baco.kernels.resadd at resadd_blocks; whole DIM-row programs
# are one LOOP_WS each), compiled for their shapes and grid as they run on the ISS
# (specialize_shapes="iss"): RISC-V instructions of a launch, per launch and per program, a fit
# (benchmarks/cpu_constants.py --only residual_add) of the ISS's counts (rdcycle around the grid
# loop without the cycle model, as the LOOP_WS tables: the ELF's start-up left out) of 10 adds of
# whole-row programs (DIM 16 and 32, 1-98 programs: 76-8,475 instructions; 0.80-1.16x, median
# error 1.2%); and the cycles the core runs before Gemmini's first command, which the ISS with the
# cycle model adds to Gemmini's time alone (the same program's stream; DIM 16 and 32, 7-98
# programs: 100-103 cycles on the whole-row ones, 122 on 3136x24 at DIM 32, 59 on one 16x16
# program, 43-120 on ragged-row ones; the core's later issue hides under Gemmini's). The table
# before, fitted on the programs compiled for any shape (38 + 152 a program, lead 158): 1.42-2.50x
# of these counts, median error 75.2%; residual_add_cost against the ISS with the cycle model on
# the 10 adds 1.00-1.06x (16x16 1.17x) before, after the refit 0.99-1.05x (16x16 0.89x). A program
# of ragged rows (an explicit stream) is priced as a whole-row one: on 4 such adds 0.81-1.15x before,
# 0.74-0.90x after.
# Refitted on the runner that loops over a grid's constant bounds (riscv.grid_reads): a one-program
# grid folds the grid loop away (16x16 at DIM 16: 76 -> 46 instructions), so the table before was
# 0.88-1.91x of the ISS, median error 10.4% (its refit on launch and program 0.72-1.57x: the
# launch's term would have to be negative); with a term per program of a grid of more than one
# ("grid"): 0.82-1.04x, median 1.00, median error 0.8% (the low end 3136x24 at DIM 32, whose last
# column block is ragged: 0.88x before).
# Refitted with 8 adds with programs of ragged rows in the set and a term per DIM x DIM tile of such
# a program in a grid of more than one ("ragged_tile": its explicit stream's mvin and mvout loops,
# after linalg_to_instgem stopped zeroing the block outside the window the sum is stored from; the
# per-program term of every grid fitted to 0 and was dropped): the table before 0.24-1.05x of the
# 18 (ragged ones 0.24-0.58x), refitted 0.83-1.07x, median error 3.8%;
# on 6 held-out adds with ragged-row programs 0.22-0.49x before, 0.86-1.10x after (median error 8.3%).
RESADD_INSTRUCTIONS = {"launch": 45.2, "grid": 78.6, "ragged_tile": 94.0}
RESADD_ISSUE_LEAD = 103.0


def resadd_terms(programs, dim: int) -> dict:
    """RESADD_INSTRUCTIONS' terms of a residual-add launch whose programs store the (rows, cols)
    windows `programs`: the launch's and, in a grid of more than one program, each program's (its
    set-up, the runner's grid loop step and the grid arrays' writes, which a one-program grid folds
    away; the fit leaves a one-program grid's program nothing beyond the launch's) and each DIM x DIM
    tile of a program of ragged rows (an explicit stream whose mvin and mvout loops run on run-time
    extents; a one-program grid folds and unrolls them)."""
    n = len(programs)
    ragged = sum(-(-rows // dim) * -(-cols // dim) for rows, cols in programs if rows % dim)
    return {"launch": 1, "grid": n * (n > 1), "ragged_tile": ragged * (n > 1)}
