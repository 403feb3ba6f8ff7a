"""Mappings of a layer onto Gemmini: temporal factors per memory level
(L0 registers, L1 accumulator, L2 scratchpad, L3 DRAM), the spatial factors
(C over the array rows below the accumulator, K over the columns below the
scratchpad), and a loop order per level.

Text form: baco.problem.mapping_text (as in the DOSA data, benchmarks/data).

Tiles are ceil-divided: a dimension's factors cover it (their product may exceed it) and each
loop runs at most the tiles left of the dimension (relax.covering_problems), so the last tile at
every level may be short, as Gemmini runs ragged edges. The largest tile of a level is its
factors' product clamped to the dimension (tile_dims); the cost model counts the real tiles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from baco.gemmini.config import GemminiConfig, kb_to_rows
from baco.gemmini.schedule import (GemmSchedule, default_conv_schedule, default_depthwise_schedule, default_gemm_schedule,
                                   loop_conv_ranking, schedule_problems)
from baco.problem.dims import DIMS, KEEPS, NUM_LEVELS
from baco.problem.layer import Layer
from baco.problem.mapping_text import parse_loops
from baco.tuner.relax import covering_problems

DEFAULT_ORDER = ("N", "K", "C", "R", "S", "P", "Q")


@dataclass
class Mapping:
    temporal: list                    # [level] -> {dim: factor}, level 0 = registers … 3 = DRAM
    spatial_C: int = 1
    spatial_K: int = 1
    order: list = field(default_factory=lambda: [DEFAULT_ORDER] * NUM_LEVELS)   # [level] -> dims, outer→inner
    text_loops: list | None = None    # the exact loop list of a parsed text, for a faithful round trip

    def factor(self, level: int, dim: str) -> int:
        return int(self.temporal[level].get(dim, 1))

    def total(self, dim: str) -> int:
        """The extent the factors of `dim` cover (>= the dimension; more when its last tile is short)."""
        t = math.prod(self.factor(l, dim) for l in range(NUM_LEVELS))
        return t * (self.spatial_C if dim == "C" else 1) * (self.spatial_K if dim == "K" else 1)


def parse_mapping(text: str) -> Mapping:
    temporal = [dict() for _ in range(NUM_LEVELS)]
    order = [tuple() for _ in range(NUM_LEVELS)]
    spatial = {"C": 1, "K": 1}
    loops = parse_loops(text)
    for level, level_loops in enumerate(loops):
        for d, f, x in level_loops:
            if x:
                spatial[d] = spatial.get(d, 1) * f
            else:
                temporal[level][d] = temporal[level].get(d, 1) * f
                if d not in order[level]:
                    order[level] += (d,)
    order = [o + tuple(d for d in DEFAULT_ORDER if d not in o) for o in order]
    return Mapping(temporal, spatial["C"], spatial["K"], order, loops)


def format_mapping(m: Mapping) -> str:
    parts = []
    for level in range(NUM_LEVELS - 1, -1, -1):
        if m.text_loops is not None:
            toks = [f"{d}{f}{'X' if x else ''}" for d, f, x in m.text_loops[level]]
        else:
            toks = [f"{d}{m.factor(level, d)}" for d in m.order[level] if m.factor(level, d) > 1]
            if level == 1 and m.spatial_C > 1:
                toks.append(f"C{m.spatial_C}X")
            if level == 2 and m.spatial_K > 1:
                toks.append(f"K{m.spatial_K}X")
            if not toks:
                toks = ["N1"]
        parts.append(f"L{level}[{KEEPS[level]}] " + " ".join(toks))
    return " - ".join(parts)


def tile_extents(m: Mapping, level: int) -> dict:
    """Extent of each dimension in a tile of `level`: the product of every loop at and below it,
    spatial ones included (C on the array rows from L1 up, K on the columns from L2 up). Unclamped:
    the tile of the padded problem a ragged mapping is exported as (emit.timeloop_problem)."""
    out = {}
    for d in DIMS:
        f = math.prod(m.factor(l, d) for l in range(level + 1))
        if d == "C" and level >= 1:
            f *= m.spatial_C
        if d == "K" and level >= 2:
            f *= m.spatial_K
        out[d] = f
    return out


def tile_dims(m: Mapping, level: int, layer: Layer) -> dict:
    """Extent of each dimension in the largest tile one instance of `level` holds (the factors'
    product, clamped to the layer's dimension when one tile covers it all)."""
    return {d: min(f, layer.dims[d]) for d, f in tile_extents(m, level).items()}


def tensor_size(t: dict, tensor: str, layer: Layer) -> int:
    if tensor == "W":
        return t["R"] * t["S"] * t["C"] * t["K"]
    if tensor == "O":
        return t["N"] * t["K"] * t["P"] * t["Q"]
    h = (t["P"] - 1) * layer.Hstride + (t["R"] - 1) * layer.Hdilation + 1
    w = (t["Q"] - 1) * layer.Wstride + (t["S"] - 1) * layer.Wdilation + 1
    return t["N"] * t["K" if layer.depthwise else "C"] * h * w     # a depthwise input has the K channels


# GEMM layers run by baco's kernel (baco/kernels/matmul.py) produce int8 outputs, scaled on their
# way out of the accumulator, as inference layers do (and as Timeloop's 8-bit output words count them)
KERNEL_OUT_INT8 = True
# ... and read weights stored with zero rows up to whole DIM blocks (baco.model.lower pads every linear
# layer's), so a ragged K step is one padded LOOP_WS (schedule.gemm_loop_ws_loops' b_padded)
KERNEL_B_PADDED = True


def is_kernel_layer(layer: Layer) -> bool:
    """Layers the compiler runs with the GEMM kernel: C[M×N] = A[M×K]·B[K×N] as P=M, C=K, K=N."""
    return not layer.depthwise and layer.R == layer.S == layer.Q == layer.N == 1 and layer.Hstride == layer.Wstride == 1


def is_pointwise(layer: Layer) -> bool:
    """A 1x1 stride-1 layer (every GEMM layer is one): the compiler runs it as one GEMM whose
    BLOCK_M counts pixels (N·P·Q) across image rows. A depthwise layer never is: the depthwise
    kernel runs it."""
    return not layer.depthwise and layer.R == layer.S == layer.Hstride == layer.Wstride == 1


def gemm_schedule(m: Mapping, layer: Layer, dataflow: str = "WS", double_buffer: bool = False) -> GemmSchedule:
    """The kernel schedule a GEMM layer's mapping runs as: the tile held on chip below DRAM
    (A block_m×block_k and B block_k×block_n in the scratchpad, C block_m×block_n in the
    accumulator across the whole K loop)."""
    if not is_kernel_layer(layer):
        raise ValueError("kernel schedules exist for GEMM layers only (R=S=Q=N=1, stride 1)")
    t2 = tile_dims(m, 2, layer)
    return GemmSchedule(block_m=t2["P"], block_n=t2["K"], block_k=t2["C"], dataflow=dataflow,
                        double_buffer=double_buffer)


def conv_tile_schedule(m: Mapping, layer: Layer, double_buffer: bool = False) -> GemmSchedule:
    """The kernel schedule of a convolution layer's on-chip (L2) tile (baco/kernels/conv.py): BLOCK_M
    output columns (or pixels N·P·Q when pointwise), BLOCK_N output channels, BLOCK_K input channels,
    and a tile of whole output rows (its Q the layer's) computes its P rows in one program (`rows`).
    A depthwise layer's tile of K channels is the depthwise kernel's BLOCK_N = BLOCK_K (its
    channels per program and step, through a diagonal weight block)."""
    t2 = tile_dims(m, 2, layer)
    pointwise = is_pointwise(layer)
    columns = t2["N"] * t2["P"] * t2["Q"] if pointwise else t2["Q"]
    rows = t2["P"] if not pointwise and t2["Q"] == layer.Q else 1
    return GemmSchedule(columns, t2["K"], t2["K"] if layer.depthwise else t2["C"], double_buffer=double_buffer,
                        rows=rows)


def conv_schedule(m: Mapping, layer: Layer, cfg: GemminiConfig, out_int8: bool = KERNEL_OUT_INT8
                  ) -> tuple[GemmSchedule, str]:
    """(schedule, "tuned" | "default") a convolution layer's mapping runs as on cfg: its tile's
    schedule (conv_tile_schedule) when it passes the compiler's capacity rule, which a valid mapping's
    does (capacity_problems checks it); else one row per program, else the conv kernel's default
    schedule (a mapping costed on hardware it does not fit). The mapping does not say whether to
    double-buffer (a compile choice): the tile is double-buffered when that fits too (on a ResNet-50
    design tuned for 20 s, 1.0-1.6x fewer cycles on every 3x3/7x7 layer and 1.0x on strided 1x1
    ones, measured on the cycle model). The search costs this schedule (kernel_model.conv_program)
    and `baco run --design` compiles it."""
    tile = conv_tile_schedule(m, layer)
    for rows, double_buffer in ((tile.rows, True), (tile.rows, False), (1, True), (1, False)):
        tuned = replace(tile, double_buffer=double_buffer, rows=rows)
        if not schedule_problems(tuned, cfg, out_int8):
            return tuned, "tuned"
    return default_layer_schedule(layer, cfg, out_int8), "default"


def default_layer_schedule(layer: Layer, cfg: GemminiConfig, out_int8: bool = KERNEL_OUT_INT8) -> GemmSchedule:
    """The schedule a convolution layer runs with none given: the depthwise kernel's default for a
    depthwise layer, else the conv kernel's (baco.gemmini.schedule), with the filter, stride and
    dilation LoopConv needs when one LOOP_CONV_WS can run it, and the layer's bias and padded image (as
    baco.kernels.conv.conv2d asks)."""
    reads = dict(stride=(layer.Hstride, layer.Wstride), dilation=(layer.Hdilation, layer.Wdilation),
                 padding=(layer.padding, layer.padding), image=(layer.image_rows, layer.image_cols))
    if layer.depthwise:
        return default_depthwise_schedule(layer.P, layer.Q, layer.R, layer.S, cfg, out_int8, bias=layer.bias, **reads)
    pointwise = is_pointwise(layer)
    pixels = layer.N * layer.P * layer.Q if pointwise else layer.Q
    loop_conv = {} if pointwise else loop_conv_ranking((layer.R, layer.S), **reads)
    return default_conv_schedule(pixels, layer.K, layer.C, cfg, out_int8, P=1 if pointwise else layer.P,
                                 taps=layer.R * layer.S, bias=layer.bias, **loop_conv)


def gemm_mapping_to_blocks(m: Mapping, layer: Layer) -> dict:
    """A GEMM layer mapping → the kernel's BLOCK_M/N/K (gemm_schedule's block sizes)."""
    return {k: v for k, v in gemm_schedule(m, layer).launch_options().items() if k.startswith("BLOCK_")}


# Whose buffer semantics a design must fit: "compiled", the compiler's placement of the kernel schedule
# the mapping runs as; "timeloop", Timeloop's on DOSA's Gemmini architecture (the mode its results are
# compared with DOSA in). The names are kernel_model.CYCLE_MODELS': each cycle model's designs fit its rule.
CAPACITY_RULES = ("compiled", "timeloop")


def check_capacity_rule(rule: str) -> str:
    if rule not in CAPACITY_RULES:
        raise ValueError(f"capacity rule must be one of {CAPACITY_RULES}, not {rule!r}")
    return rule


# DOSA's Gemmini architecture (ucb-bar/dosa dataset/hw/gemmini/arch/arch.yaml and gemmini_config.py):
# per level, its name, the data spaces it keeps, and its instances (one register per PE, one
# accumulator per array column, one scratchpad)
TIMELOOP_LEVELS = {0: ("Registers", "W"), 1: ("Accumulator", "O"), 2: ("Scratchpad", "WI")}


def timeloop_entries(hw) -> dict[int, int]:
    """Words one instance of each on-chip level of DOSA's Gemmini holds on hw: 1 register per PE
    (8-bit), sp_kb·1024 8-bit scratchpad words, and per array column acc_kb·1024 / (4·DIM) 32-bit
    accumulator words (emit.timeloop_arch writes these entries)."""
    pe = int(hw.pe_dim)
    return {0: 1, 1: int(kb_to_rows(hw.acc_kb, pe, "int32")), 2: int(kb_to_rows(hw.sp_kb, 1, "int8"))}


def timeloop_tile_words(m: Mapping, layer: Layer) -> dict[int, int]:
    """Words one instance of each on-chip level holds under Timeloop's buffer semantics: for every
    data space the level keeps, the tile of the loops at and below it (spatial loops included:
    tile_extents), inputs as the window their P/R and Q/S extents span; a register (per PE) and an
    accumulator (per array column) hold no loop spread over the array above them (tile_extents adds
    spatial C from L1 up, spatial K from L2 up)."""
    words = {}
    for level, (_, keeps) in TIMELOOP_LEVELS.items():
        t = tile_extents(m, level)
        words[level] = sum(tensor_size(t, tensor, layer) for tensor in keeps)
    return words


def timeloop_capacity_problems(m: Mapping, layer: Layer, hw) -> list[str]:
    """What overflows a buffer of DOSA's Gemmini under Timeloop's semantics (timeloop_tile_words
    against timeloop_entries), with Timeloop's figures."""
    entries = timeloop_entries(hw)
    return [f"{TIMELOOP_LEVELS[level][0]}: mapped tile size {words} exceeds buffer capacity {entries[level]}"
            for level, words in timeloop_tile_words(m, layer).items() if words > entries[level]]


def capacity_problems(m: Mapping, layer: Layer, hw, rule: str = "compiled") -> list[str]:
    """What does not fit in hw's buffers under `rule` (CAPACITY_RULES). "compiled": every layer is run
    by a kernel, so its tile's schedule (gemm_schedule, or conv_tile_schedule single-buffered) is
    checked with the compiler's own rule (baco.gemmini.schedule); "timeloop": Timeloop's buffer
    semantics (timeloop_capacity_problems)."""
    if check_capacity_rule(rule) == "timeloop":
        return timeloop_capacity_problems(m, layer, hw)
    schedule = gemm_schedule(m, layer) if is_kernel_layer(layer) else conv_tile_schedule(m, layer)
    return schedule_problems(schedule, hw.to_gemmini_config(), KERNEL_OUT_INT8)


def validate(m: Mapping, layer: Layer, hw, rule: str = "compiled") -> list[str]:
    """Problems that make `m` illegal for `layer` on `hw` (empty list = valid), its buffers checked
    under `rule` (capacity_problems)."""
    temporal = [[m.factor(l, d) for d in DIMS] for l in range(NUM_LEVELS)]
    problems = covering_problems(temporal, m.spatial_C, m.spatial_K, layer.dims)
    if m.spatial_C > hw.pe_dim:
        problems.append(f"spatial C {m.spatial_C} exceeds the {hw.pe_dim} array rows")
    if m.spatial_K > hw.pe_dim:
        problems.append(f"spatial K {m.spatial_K} exceeds the {hw.pe_dim} array columns")
    if not problems:
        problems += capacity_problems(m, layer, hw, rule)
    return problems


def assert_valid(m: Mapping, layer: Layer, hw, rule: str = "compiled") -> None:
    problems = validate(m, layer, hw, rule)
    if problems:
        raise ValueError("invalid mapping: " + "; ".join(problems))


def schedule_mapping(layer: Layer, schedule: GemmSchedule, pe_dim: int) -> Mapping:
    """The mapping the GEMM kernel runs under `schedule` on a pe_dim array (gemm_schedule's
    inverse): the block loops at DRAM (programs over M and N, the K loop innermost, so the C
    block stays in the accumulator; ⌈dimension / block⌉ of each, the last one ragged), DIM×DIM
    sub-blocks on the array (spatial C and K), each weight sub-block preloaded once per K step and
    the block's rows streamed under it. A block larger than its dimension is the dimension."""
    if not is_kernel_layer(layer):
        raise ValueError("kernel schedules exist for GEMM layers only (R=S=Q=N=1, stride 1)")
    M, Kd, N = layer.P, layer.C, layer.K
    bm, bn, bk = min(schedule.block_m, M), min(schedule.block_n, N), min(schedule.block_k, Kd)
    sc = math.gcd(bk, pe_dim)
    sk = math.gcd(bn, pe_dim)
    temporal = [dict() for _ in range(NUM_LEVELS)]
    temporal[0]["P"] = bm
    temporal[1]["C"] = bk // sc
    temporal[2]["K"] = bn // sk
    temporal[3].update({"P": -(-M // bm), "K": -(-N // bn), "C": -(-Kd // bk)})
    order = [DEFAULT_ORDER, ("K", "P", "C"), DEFAULT_ORDER, ("K", "P", "C")]   # grid: pid_m fastest
    order = [o + tuple(d for d in DEFAULT_ORDER if d not in o) for o in order]
    return Mapping(temporal, sc, sk, order)


def conv_schedule_mapping(layer: Layer, schedule: GemmSchedule, pe_dim: int) -> Mapping:
    """The mapping whose on-chip tile is a convolution schedule's (conv_tile_schedule's inverse):
    BLOCK_M output columns (pixels N, then P, then Q when pointwise), `rows` output rows, BLOCK_N
    output channels and BLOCK_K input channels (a depthwise layer's BLOCK_N channels), the filter
    whole, DIM-wide sub-blocks on the array, the rest at DRAM. A block larger than its dimension
    is the dimension. The filter's taps loop at L1 with the input channels, each tap's weights
    preloaded and accumulated into the output tile (as the kernel runs them and
    default_mapping places them): a register holds one weight under Timeloop's rule."""
    if is_kernel_layer(layer):
        raise ValueError("a GEMM layer's schedule maps through schedule_mapping")
    tile = {"R": layer.R, "S": layer.S, "K": min(schedule.block_n, layer.K),
            "C": 1 if layer.depthwise else min(schedule.block_k, layer.C)}
    if is_pointwise(layer):     # the columns flatten N*P*Q, Q fastest: whole Q rows, then P, then N
        columns = schedule.block_m
        for d in ("Q", "P", "N"):
            tile[d] = max(1, min(columns, layer.dims[d]))
            columns //= layer.dims[d]
    else:
        tile.update(N=1, Q=min(schedule.block_m, layer.Q), P=min(schedule.rows, layer.P))
    sc, sk = math.gcd(tile["C"], pe_dim), math.gcd(tile["K"], pe_dim)
    temporal = [dict() for _ in range(NUM_LEVELS)]
    temporal[0].update({d: tile[d] for d in ("N", "P", "Q")})
    temporal[1].update({"R": tile["R"], "S": tile["S"], "C": tile["C"] // sc})
    temporal[2]["K"] = tile["K"] // sk
    temporal[3].update({d: -(-layer.dims[d] // tile[d]) for d in DIMS})
    return Mapping(temporal, sc, sk)


def default_kernel_schedule(layer: Layer, cfg: GemminiConfig, b_padded: bool = KERNEL_B_PADDED) -> GemmSchedule:
    """The schedule the GEMM kernel runs a GEMM layer with none given on cfg (int8 out, the layer's
    bias; b_padded: B stored in whole DIM rows)."""
    return default_gemm_schedule(layer.P, layer.K, layer.C, cfg, KERNEL_OUT_INT8, bias=layer.bias, b_padded=b_padded)


def default_schedule_mapping(layer: Layer, cfg: GemminiConfig) -> Mapping:
    """The mapping of the schedule a layer's kernel runs with none given on cfg (the GEMM kernel's
    default_gemm_schedule, a convolution's default_layer_schedule): the build without a design. A
    convolution's default program may be no mapping's (a 1x1 layer's LOOP_CONV_WS programs, where
    conv2d picks them over the GEMM of all pixels): explore.default_build marks its convolutions to
    run their default program."""
    if is_kernel_layer(layer):
        return schedule_mapping(layer, default_kernel_schedule(layer, cfg), cfg.dim)
    return conv_schedule_mapping(layer, default_layer_schedule(layer, cfg), cfg.dim)
