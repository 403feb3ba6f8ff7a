"""What the search predicts for a layer: the compiled program for kernel layers, and the
schedule the compiler is asked to emit.

A layer the compiler runs with the GEMM kernel (mapping.is_kernel_layer) costs what the
program compiled for the mapping's scratchpad tile costs on the cycle model: cycles
(residual.compiled_cycles of the explicit stream; where a WS program's blocks fit the loop unit's
halves the compiler emits one LOOP_WS a K step, costed as LoopMatmul runs it,
baco.gemmini.loop_ws_timing's walk, the one the library's tiles are costed with) and energy
(the program's access counts priced as the simulator prices them: costmodel.compiled_program_energy
of the explicit stream, loop_ws_counts of the LOOP_WS programs, kernel_energy); among
SCHEDULE_VARIANTS (dataflow x double buffering) the fastest one that fits the hardware is chosen
(double buffering doubles the scratchpad blocks, baco.gemmini.schedule.gemm_footprint;
fastest_fitting), and that choice is what result.json's schedule carries. A convolution layer costs its compiled program too
(conv_program) with the schedule mapping.conv_schedule makes of its mapping, the same function
`baco run --design` compiles with: where a program fits LoopConv's halves (runs_loop_conv) the
compiler emits it as one LOOP_CONV_WS, costed as the library's LOOP_CONV_WS tiles are
(loop_conv_stream_cycles and loop_conv_stream_counts over _program_conv_tiles); else the
implicit-GEMM conv kernel's explicit stream (costmodel.conv_program_terms and conv_program_energy). Cycles are end to end, as a
program on the core runs: the Gemmini cycles of the stream plus what of the CPU's issuing it does
not overlap them (gemm_end_to_end, conv_end_to_end: RISC-V instructions per program, K step and
command of the form the compiler emits, baco.gemmini.schedule's counts fitted on the ISS);
explicit conv streams at DIM 16-32 are CPU-bound (3-5x their Gemmini cycles on the ISS).
A layer with a bias (Layer.bias: a whole model's convolutions and linear layers) is priced with
it in every program form: the LOOP_WS walk's D tiles (loop_ws_walk, loop_ws_energy), LoopConv's
bias loads (_loop_conv_walk) and the explicit streams' bias blocks (costmodel.kernel_program_terms,
_program_counts).
cycle_model="timeloop" gives the pure Timeloop-matched prediction (how results are compared with
DOSA and the thesis); it ignores a bias, as Timeloop's problems have none.

Gemmini-default does not run baco's kernel: it runs the C library's tiled_matmul_auto, one
LOOP_WS per tile, and tiled_conv_auto, one LOOP_CONV_WS per tile (baco.sim.clib). Its GEMM layers
are predicted with library_matmul_cycles, an analytical model of that command stream, and
library_matmul_energy, its counts; its convolutions with library_conv_cycles and library_conv_energy
(program="library" in evaluate), so that a gain over the default compares the programs that
actually run.
"""
from __future__ import annotations

import collections
import functools
import math
from dataclasses import replace

import torch

from baco.gemmini import energy
from baco.gemmini.config import GemminiConfig, kb_to_rows
from baco.gemmini.fused import gemm_chain_loop_ws_loops
from baco.gemmini.heuristics import library_conv_tiles
from baco.gemmini.loop_conv_timing import (COUNT_KEYS, loop_conv_stream_cycles, program_conv_tiles,
                                          tile_counts)
from baco.gemmini.loop_ws_timing import LoopWs, library_matmul_loops, loop_ws_end_to_end, loop_ws_gemmini_cycles
from baco.gemmini.loop_ws_commands import lda_elements, ldb_elements, store_elements
from baco.gemmini.schedule import (CONV_EXPLICIT_INSTRUCTIONS, DEPTHWISE_EXPLICIT_INSTRUCTIONS,
                                   GemmSchedule, explicit_column_steps, explicit_gemm_instructions, explicit_gemm_terms,
                                   explicit_stream_cycles, gemm_loop_ws_loops,
                                   loop_conv_channels, loop_conv_downsamples, loop_conv_instructions, loop_ws_fits,
                                   loop_conv_pipeline_cycles, loop_conv_program_cycles, loop_conv_walked_channels,
                                   grid_axes, loop_ws_instructions, ragged_k_loop,
                                   overlapped_cycles, pointwise_loop_conv_schedule,
                                   schedule_problems)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.problem.layer import Layer
from baco.tuner import costmodel, residual
from baco.tuner.hwinfer import gemm_rows_from_factors, kernel_rows
from baco.tuner.mapping import (CAPACITY_RULES, KERNEL_B_PADDED, KERNEL_OUT_INT8, Mapping, conv_schedule,
                                default_layer_schedule, gemm_schedule, is_kernel_layer, is_pointwise)

CYCLE_MODELS = CAPACITY_RULES    # a cycle model's designs fit the capacity rule of its name (mapping.validate)
SCHEDULE_VARIANTS = (("WS", False), ("WS", True), ("OS", False), ("OS", True))   # (dataflow, double_buffer)


def check_cycle_model(cycle_model: str) -> str:
    if cycle_model not in CYCLE_MODELS:
        raise ValueError(f"cycle model must be one of {CYCLE_MODELS}, not {cycle_model!r}")
    return cycle_model


def kernel_cycles(layer: Layer, temporal, spatial, hw_t) -> tuple[torch.Tensor, torch.Tensor]:
    """(cycles [B], index into SCHEDULE_VARIANTS [B]) of B mappings of a kernel layer on hardware
    hw_t = (pe_dim, sp_kb, acc_kb) [B]: the fastest variant that fits (fastest_fitting: a WS program
    whose blocks fit LOOP_WS's halves runs as LOOP_WS; on a tie the first in SCHEDULE_VARIANTS:
    dataflows the model cannot tell apart cost the same, and WS wins). Differentiable in the factors
    and the hardware (the choice itself is discrete). `layer` may be an explore.LayerStack (rows of
    several kernel layers in one call)."""
    pe, sp_kb, acc_kb = (torch.as_tensor(v, dtype=torch.float64) for v in hw_t)
    sp_rows, acc_rows = gemm_rows_from_factors(layer, temporal, spatial, pe)
    variants, loop = kernel_programs(layer, temporal, spatial, hw_t)
    return fastest_fitting(variants, sp_rows, pe, sp_kb, loop=loop, acc_rows=acc_rows, acc_kb=acc_kb)


def kernel_programs(layer, temporal, spatial, hw_t, loop: bool = True):
    """(explicit [len(SCHEDULE_VARIANTS), B], loop [B]): end-to-end cycles of B mappings of a kernel
    layer compiled to the explicit stream under each schedule variant (the compiled program's Gemmini
    cycles, residual.compiled_cycles_by_dataflow, with the CPU issuing its commands), and compiled
    to LOOP_WS (loop_ws_program's walk with the CPU issuing one LOOP_WS a K step), which the compiler
    emits instead of a WS variant where the blocks fit the loop unit's halves (fastest_fitting decides
    by fit, so that the hardware-free costs here serve any memory sizes: baco.tuner.optimum). With
    loop=False, the explicit variants alone."""
    sc = (spatial[:, 0], spatial[:, 1])
    by_buffering = {db: residual.compiled_cycles_by_dataflow(layer, temporal, sc, hw_t, out_int8=KERNEL_OUT_INT8,
                                                              double_buffer=db) for db in (False, True)}
    terms = costmodel.compiled_program_terms(layer, temporal, sc, hw_t, out_int8=KERNEL_OUT_INT8)
    explicit = torch.stack([gemm_end_to_end(by_buffering[double_buffer][dataflow], terms, hw_t, loop_ws=False)
                            for dataflow, double_buffer in SCHEDULE_VARIANTS])
    if not loop:        # the explicit variants alone (baco.tuner.optimum walks LOOP_WS where it must)
        return explicit
    dims, blocks = costmodel._gemm_blocks(layer, temporal, sc)
    return explicit, loop_ws_program(dims, blocks, hw_t, by_buffering[True]["WS"], terms, b_padded=KERNEL_B_PADDED,
                                     bias=costmodel._bias(layer))[1]


def loop_ws_program(dims, blocks, hw_t, explicit: torch.Tensor, terms, *, b_padded: bool = False, bias=False
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(Gemmini cycles [B], end-to-end cycles [B]) of the GEMM kernel's programs compiled to LOOP_WS:
    M x N x K (`dims`, numbers or [B]) in (BLOCK_M, BLOCK_N, BLOCK_K) [B] blocks on hw_t's pe-wide
    array (`b_padded`: B stored in whole DIM rows; `bias`, bool or [B]: Layer.bias), the walks of
    loop_ws_walk. Each takes the slope of the explicit double-buffered stream's cycles `explicit`
    [B] (end to end, of gemm_end_to_end over them with `terms`; _straight_through) so the search's
    gradient still sees the factors and the hardware; a relaxation's fractional blocks (no
    program) keep those."""
    B = explicit.shape[0]
    walk = torch.full((2, B), math.nan, dtype=torch.float64)
    biased = torch.as_tensor(bias).expand(B).tolist()
    for i, key in enumerate(_rows((*dims, *blocks, hw_t[0]), B)):
        whole = _whole(key)
        if whole:
            walk[:, i] = torch.tensor(loop_ws_walk(*whole, b_padded=b_padded, bias=biased[i]), dtype=torch.float64)
    gemmini = _straight_through(explicit, walk[0])
    return gemmini, _straight_through(gemm_end_to_end(gemmini, terms, hw_t, loop_ws=True, dims=dims), walk[1])


@functools.lru_cache(maxsize=65536)
def loop_ws_walk(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, dim: int,
                 b_padded: bool = False, bias: bool = False) -> tuple[float, float]:
    """(Gemmini cycles, end-to-end cycles) of the LOOP_WS programs of an M x N x K GEMM in these
    blocks on a dim-wide Gemmini (they depend on neither memory's size; `b_padded`: B stored in whole
    DIM rows, a ragged K step one LOOP_WS; `bias`: each C block starts from a bias row, the int32 D
    tiles the first LOOP_WS of a block moves into the accumulator): baco.gemmini.loop_ws_timing's walk of
    schedule.gemm_loop_ws_loops with the commands arriving for free, and with the CPU issuing them
    (the instructions each loop carries, LOOP_WS_INSTRUCTIONS; the CPU waits for a free loop slot, as
    default_gemm_schedule ranks programs; gemm_end_to_end's fixed overlap missed LoopMatmul's two
    slots: 5% over on a 1x91x40414 GEMV whose walk is the ISS's to 0.01%). Cached: the search asks
    again for every batch."""
    cfg = GemminiConfig(dim=dim)
    loops = _loop_ws_loops(M, N, K, block_m, block_n, block_k, dim, b_padded, bias)
    return loop_ws_gemmini_cycles(loops, cfg), loop_ws_end_to_end(loops, cfg)


@functools.lru_cache(maxsize=4096)
def _loop_ws_loops(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, dim: int,
                   b_padded: bool, bias: bool = False) -> tuple:
    """schedule.gemm_loop_ws_loops of the GEMM kernel's programs (read-only), shared by the walk and
    the energy: the search asks for both of every pointwise candidate."""
    return tuple(gemm_loop_ws_loops(M, N, K, GemmSchedule(block_m, block_n, block_k), GemminiConfig(dim=dim),
                                    out_int8=KERNEL_OUT_INT8, bias=bias, b_padded=b_padded))


def gemm_schedule_cycles(M: int, N: int, K: int, schedule: GemmSchedule, cfg: GemminiConfig, *,
                         out_int8: bool = KERNEL_OUT_INT8, end_to_end: bool = True, b_padded: bool = False,
                         bias: bool = False) -> float:
    """Predicted cycles of the GEMM kernel compiled for an M x N x K GEMM with `schedule` on cfg: the
    program the compiler emits (one LOOP_WS a K step where a WS program's blocks fit the loop unit's
    halves, loop_ws_walk, `b_padded`: B stored in whole DIM rows; else the explicit stream,
    residual.compiled_cycles), end to end (the default: with the CPU issuing it, the walk's or
    gemm_end_to_end) or Gemmini alone; `bias`: each C block starts from a bias row (Layer.bias)."""
    blocks = {"BLOCK_M": min(schedule.m_rows, M), "BLOCK_N": min(schedule.block_n, N),
              "BLOCK_K": min(schedule.block_k, K)}
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1, bias=bias)
    temporal, sC, sK = residual.block_factors(layer, blocks, cfg.dim)
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (cfg.dim, cfg.sp_kb, cfg.acc_kb))
    if schedule.dataflow == "WS" and loop_ws_fits(blocks["BLOCK_M"], blocks["BLOCK_N"], blocks["BLOCK_K"], cfg):
        return loop_ws_walk(M, N, K, *blocks.values(), cfg.dim, b_padded, bias)[1 if end_to_end else 0]
    with torch.no_grad():
        gemmini = residual.compiled_cycles(layer, temporal, (sC, sK), hw_t, out_int8=out_int8,
                                           double_buffer=schedule.double_buffer, dataflow=schedule.dataflow)
        if not end_to_end:
            return float(gemmini[0])
        terms = costmodel.compiled_program_terms(layer, temporal, (sC, sK), hw_t, out_int8=out_int8)
        return float(gemm_end_to_end(gemmini, terms, hw_t, loop_ws=False)[0])


def loop_ws_fit(sp_rows, acc_rows, pe, sp_kb, acc_kb) -> torch.Tensor:
    """Whether single-buffered GEMM blocks of sp_rows scratchpad and acc_rows accumulator rows [B] fit
    LOOP_WS's halves of the memories (baco.gemmini.schedule.loop_ws_fits on tensors; detached)."""
    sp_half = torch.floor(kb_to_rows(torch.as_tensor(sp_kb), pe, "int8") / 2).detach() + 1e-9
    acc_half = torch.floor(kb_to_rows(torch.as_tensor(acc_kb), pe, "int32") / 2).detach() + 1e-9
    return (torch.as_tensor(sp_rows).detach() <= sp_half) & (torch.as_tensor(acc_rows).detach() <= acc_half)


def gemm_end_to_end(gemmini, terms, hw_t, *, loop_ws, dims=None) -> torch.Tensor:
    """End-to-end cycles [B] of the GEMM kernel's programs (costmodel.compiled_program_terms' or
    conv_program_terms' `terms` of a pointwise layer: programs, K steps, commands, blocks) whose
    Gemmini cycles are `gemmini` [B], with the CPU issuing them (baco.gemmini.schedule's instruction
    counts, as default_gemm_schedule costs them): one LOOP_WS per K step where `loop_ws` (bool or
    [B]: the programs the compiler emits as LOOP_WS; then `dims`, the launch's M x N x K, numbers or
    [B], say which sizes the specialization folds), else the explicit stream; the two overlap as
    gemm_program_cycles says (explicit_stream_cycles: one K step's share of the shorter exposed, at
    least EXPLICIT_EXPOSED_SHARE of it for the explicit stream).
    Differentiable (the form is a discrete choice)."""
    pe = torch.as_tensor(hw_t[0], dtype=torch.float64).detach()
    programs, steps = terms["programs"], terms["k_steps"]
    columns = _ceil_blocks(terms["blocks"][1], pe)

    def counts(kind: str) -> dict:
        """The edge, interior or ragged-K programs' totals (costmodel's "edge_*", "interior_*", "ragged_k_*"), as
        explicit_gemm_terms names them."""
        n = terms[f"{kind}_programs"]
        return {"programs": n, "steps": n * terms["k_loop_steps"], "columns": n * columns,
                "column_steps": n * explicit_column_steps(columns, terms["k_loop_steps"]),
                "fill_mvins": terms[f"{kind}_fills"],
                **{name: terms[f"{kind}_{name}"] for name in ("groups", "pairs", "stores", "commands")},
                **({"unfused_commands": terms["interior_unfused_commands"]} if kind == "interior" else {})}
    cpi = DEFAULT_CONSTANTS.cpu_cycles_per_instruction
    explicit = explicit_stream_cycles(gemmini, cpi * explicit_gemm_instructions(
        explicit_gemm_terms(counts("edge"), counts("interior"), counts("ragged_k"))), programs, steps)
    if loop_ws is False:
        return explicit
    if dims is None:
        raise ValueError("gemm_end_to_end: dims (the launch's M, N, K) are needed to cost LOOP_WS programs")
    M, N, K = (torch.as_tensor(v, dtype=torch.float64).detach() for v in dims)
    bm, bn, bk = (torch.as_tensor(b, dtype=torch.float64).detach() for b in terms["blocks"][:3])
    ragged = ragged_k_loop(K, bk)
    rows, cols = grid_axes(M, N, bm, bn)
    # a LOOP_WS program's few instructions: one K step's share of them exposed, no contention floor
    loop = overlapped_cycles(gemmini, cpi * loop_ws_instructions(programs, steps, N, K, ragged, rows, cols),
                             1.0 / (programs * steps))
    return torch.where(torch.as_tensor(loop_ws), loop, explicit)


def _ceil_blocks(block, pe):
    """DIM-wide tiles of a block [B] (whole, as the compiler's loops count them; detached)."""
    return torch.ceil(torch.as_tensor(block).detach() / pe - 1e-9).clamp(min=1.0)


def conv_cpu_cycles(layer, terms, rows, loop_conv, double_buffer=False) -> torch.Tensor:
    """CPU cycles [B] issuing a (not pointwise) convolution's programs of `rows` output rows
    (conv_program_terms' `terms`): loop_conv_instructions where the compiler emits
    LOOP_CONV_WS (loop_conv [B]: LOOP_CONV_WS a program, one per input channel block; 0 or False
    where it does not; the layer's stride, bias and rows and the program's rows priced), else the
    explicit stream's CONV_EXPLICIT_INSTRUCTIONS (DEPTHWISE_EXPLICIT_INSTRUCTIONS for the depthwise
    kernel) per program K step, per K step of a strided layer's program again, per output row's A
    slice of a step and per command, and of a double-buffered program (double_buffer [B] or bool:
    the schedule's; its stream loads the next step's blocks into their other home while the array
    works on these, the next step's addresses and bounds computed in the loop) per command again
    and, of one output row, per K step again ("double_buffer", "double_buffer_row"). `layer` may be
    an explore.LayerStack."""
    depthwise = costmodel._depthwise(layer)
    pick = lambda key: torch.where(depthwise, torch.tensor(DEPTHWISE_EXPLICIT_INSTRUCTIONS[key], dtype=torch.float64),  # noqa: E731
                                   torch.tensor(CONV_EXPLICIT_INSTRUCTIONS[key], dtype=torch.float64))     # float64 in a stack too
    programs, steps, strided = terms["programs"], terms["k_steps"], torch.as_tensor(layer.Hstride) != 1
    rows_t, db = torch.as_tensor(rows, dtype=torch.float64), torch.as_tensor(double_buffer, dtype=torch.float64)
    explicit = programs * steps * (pick("step") + strided * pick("strided_step") + rows_t * pick("slice")
                                   + db * (rows_t.detach() == 1) * pick("double_buffer_row")) \
        + terms["commands"] * (pick("command") + db * pick("double_buffer"))
    loops = torch.as_tensor(loop_conv, dtype=torch.float64)
    loop = loop_conv_instructions(programs, loops, depthwise, strided, costmodel._bias(layer),
                                  torch.as_tensor(layer.P) > rows_t, (rows_t > 1) & (torch.as_tensor(layer.P) > rows_t))
    return torch.where(loops > 0, loop, explicit) * DEFAULT_CONSTANTS.cpu_cycles_per_instruction


def conv_end_to_end(layer, gemmini, terms, rows, hw_t, loop, last=None, double_buffer=False) -> torch.Tensor:
    """End-to-end cycles [B] of a convolution's programs of `rows` output rows whose Gemmini cycles
    are `gemmini` [B] (conv_program_terms' `terms`; loop [B]: the LOOP_CONV_WS a program (one per
    input channel block), 0 for the explicit stream; `last` [B]: where loop > 0, the last program's
    work alone, _loop_conv_walk's): a pointwise layer's explicit stream runs the GEMM kernel
    (gemm_end_to_end; its LOOP_WS programs are the walk's, loop_ws_program); any other the conv or
    depthwise kernel, whose CPU issue (conv_cpu_cycles) overlaps Gemmini's work: LOOP_CONV_WS
    programs as the compiler's ranking prices them (schedule.loop_conv_pipeline_cycles, a two-stage
    pipeline: the first program's issue then Gemmini's work, or every program's issue then the last
    program's work; `last` is a constant per mapping, the gradient flows through `gemmini` and the
    CPU's issue), an explicit stream K step by K step, as the GEMM kernel's (explicit_stream_cycles:
    the CPU issues a step's commands while Gemmini runs the steps before; a 3x3 14x14 32>64 conv in one program of 9
    steps on DIM 64 runs 8,718 cycles alone, its CPU 8,668 and both 9,832 on the ISS, which one
    program's share of the shorter exposed priced 1.6x). double_buffer: the schedule's (conv_cpu_cycles)."""
    if costmodel._one_program(layer):
        return gemm_end_to_end(gemmini, terms, hw_t, loop_ws=False)
    cpu, loops = conv_cpu_cycles(layer, terms, rows, loop, double_buffer), torch.as_tensor(loop, dtype=torch.float64)
    explicit = explicit_stream_cycles(gemmini, cpu, terms["programs"], terms["k_steps"])
    if last is None:
        if bool((loops > 0).any()):
            raise ValueError("conv_end_to_end: LOOP_CONV_WS programs need their last program's work (`last`)")
        return explicit
    last = torch.nan_to_num(torch.as_tensor(last, dtype=torch.float64).detach())
    return torch.where(loops > 0, loop_conv_pipeline_cycles(gemmini, cpu, terms["programs"], last), explicit)


def fastest_fitting(variants: torch.Tensor, sp_rows, pe, sp_kb, *, loop=None, acc_rows=None, acc_kb=None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(cycles [B], index into SCHEDULE_VARIANTS [B]): of each mapping's cycles under every variant
    ([len(SCHEDULE_VARIANTS), B]), the fastest whose scratchpad blocks fit (double buffering doubles
    the single-buffered sp_rows [B]; on a tie the first variant) on a pe-wide array with sp_kb. With
    `loop` [B] (kernel_programs' LOOP_WS cycles), a WS variant whose blocks fit LOOP_WS's halves
    (loop_ws_fit, with acc_rows and acc_kb) costs `loop`: the program the compiler emits."""
    double_fits = (2 * torch.as_tensor(sp_rows).detach()) <= kb_to_rows(sp_kb, pe, "int8").detach() + 1e-9
    runs_loop = loop_ws_fit(sp_rows, acc_rows, pe, sp_kb, acc_kb) if loop is not None else None
    stacked = []
    for c, (dataflow, double_buffer) in zip(variants, SCHEDULE_VARIANTS):
        if runs_loop is not None and dataflow == "WS":
            c = torch.where(runs_loop, loop, c)
        stacked.append(torch.where(double_fits, c, torch.inf) if double_buffer else c)
    stacked = torch.stack(stacked)
    choice = stacked.detach().argmin(0)
    return stacked.gather(0, choice.unsqueeze(0)).squeeze(0), choice


# mapping.conv_schedule's choices, preferred first: the tile's rows per program or one row, double-buffered or not
CONV_VARIANTS = ("rows+db", "rows", "row+db", "row", "default")


def _schedule_blocks(layer: Layer, schedule: GemmSchedule) -> tuple:
    """A schedule's (rows x BLOCK_M, BLOCK_N, BLOCK_K) as [1] tensors (blocks larger than the layer
    are the layer; a depthwise layer's BLOCK_K is channels, as its BLOCK_N), as costmodel.kernel_blocks
    gives them."""
    bm_max = layer.N * layer.P * layer.Q if is_pointwise(layer) else layer.Q
    return tuple(torch.tensor([float(v)], dtype=torch.float64)
                 for v in (schedule.rows * min(schedule.block_m, bm_max), min(schedule.block_n, layer.K),
                           min(schedule.block_k, layer.K if layer.depthwise else layer.C)))


def loop_conv_channels_of(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> int | None:
    """Input channels per LOOP_CONV_WS where the compiler runs each program of a convolution layer
    under `schedule` as LOOP_CONV_WS (baco.passes.loop_conv_ws), else None: a WS program with int8
    outputs of a convolution that is not pointwise (pointwise layers run the GEMM kernel), square
    strides and dilations (one LOOP_CONV_WS takes one of each), whose tile fits LoopConv's halves
    with its input channels in one or several blocks (loop_conv_channels, the compiler's rule; a
    layer of one output row in a padded image the loop-conv-ws pass's block for its tap rows inside
    the image, loop_conv_walked_channels; a depthwise program is the convolution of its channel block)."""
    if is_pointwise(layer) or not KERNEL_OUT_INT8 or schedule.dataflow != "WS" or \
            layer.Hstride != layer.Wstride or layer.Hdilation != layer.Wdilation:
        return None
    if not layer.depthwise:
        return loop_conv_walked_channels(schedule, layer.P, layer.Q, layer.K, layer.C, layer.R, layer.S,
                                         layer.Hstride, layer.Hdilation, cfg, layer.padding,
                                         (layer.image_rows, layer.image_cols))
    channels = min(schedule.block_n, layer.K)
    return loop_conv_channels(schedule, layer.P, layer.Q, channels, channels, layer.R, layer.S, layer.Hstride,
                              layer.Hdilation, cfg)


def runs_loop_conv(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> bool:
    """Whether the compiler runs each program of a convolution layer under `schedule` as
    LOOP_CONV_WS (loop_conv_channels_of)."""
    return loop_conv_channels_of(layer, schedule, cfg) is not None


def loop_conv_loops(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> int:
    """LOOP_CONV_WS a program of the layer under `schedule` issues (one per input channel block),
    0 where the compiler keeps the explicit stream."""
    channels = loop_conv_channels_of(layer, schedule, cfg)
    return 0 if channels is None else -(-(min(schedule.block_n, layer.K) if layer.depthwise else layer.C) // channels)


def _loop_conv_program(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> tuple[float, float, float]:
    """(cycles, energy µJ, the last program's cycles alone) of the LOOP_CONV_WS programs of a
    convolution under `schedule` (_loop_conv_walk, its counts priced for cfg's memories)."""
    cycles, counts, last = _loop_conv_walk(layer, schedule.rows, min(schedule.block_m, layer.Q),
                                           min(schedule.block_n, layer.K), cfg.dim,
                                           None if layer.depthwise else loop_conv_channels_of(layer, schedule, cfg))
    return cycles, energy.energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6, last


@functools.lru_cache(maxsize=65536)
def _loop_conv_walk(layer: Layer, rows: int, block_m: int, block_n: int, dim: int,
                    channels: int | None) -> tuple[float, dict, float]:
    """(cycles, counts, the last program's cycles alone) of the LOOP_CONV_WS programs of `rows` x
    block_m outputs and block_n channels on a dim-wide Gemmini, `channels` input channels a
    LOOP_CONV_WS (None: all) (_program_conv_tiles timed by loop_conv_stream_cycles, the last
    program's tiles, one per input channel block, walked alone as loop_conv_program_cycles walks
    them; counted by loop_conv_stream_counts, the
    first tile of an output tile loading the layer's bias where it has one; neither depends on the
    memories' sizes but through `channels`, nor on BLOCK_K or double buffering, which LoopConv
    ignores). Cached: the search asks again for every batch."""
    cfg = GemminiConfig(dim=dim)
    tiles = _program_conv_tiles(layer, GemmSchedule(block_m, block_n, block_m, rows=rows), channels)
    downsample = int(loop_conv_downsamples(layer.R, layer.S, layer.Hstride))
    walk = functools.partial(loop_conv_stream_cycles, cfg=cfg, dilation=layer.Hdilation, downsample=downsample,
                             out_int8=KERNEL_OUT_INT8, bias=layer.bias)
    loops = 1 if layer.depthwise or channels is None else -(-layer.C // channels)
    return walk(tiles), loop_conv_stream_counts(tiles, cfg, dilation=layer.Hdilation, downsample=downsample,
                                                out_int8=KERNEL_OUT_INT8, bias=layer.bias), walk(tiles[-loops:])


def _config(hw) -> GemminiConfig:
    pe, sp_kb, acc_kb = hw
    return GemminiConfig.from_capacity(int(round(pe)), sp_kb, acc_kb)


def runs_pointwise_loop_ws(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> bool:
    """Whether the compiler runs a pointwise layer under `schedule` as LOOP_WS programs (their blocks
    fit the loop unit's halves)."""
    blocks = [int(b) for b in _schedule_blocks(layer, schedule)]
    return is_pointwise(layer) and schedule.dataflow == "WS" and loop_ws_fits(*blocks, cfg)


def conv_schedule_cycles(layer: Layer, schedule: GemmSchedule, hw, *, end_to_end: bool = True) -> float:
    """Predicted cycles of a convolution layer compiled with `schedule` on hw = (pe_dim, sp_kb,
    acc_kb): Gemmini's for its LOOP_CONV_WS programs where the compiler emits them (runs_loop_conv),
    a pointwise layer's LOOP_WS programs where they fit (loop_ws_fits, loop_ws_walk), else for its
    explicit command stream (costmodel.conv_program_terms); end to end (the default,
    what the search costs) with the CPU issuing them (conv_end_to_end), else Gemmini alone (the
    commands arriving for free, as launch.cycles() times them). A layer with a bias (Layer.bias: a
    whole model's layers, baco.model.lower passes every conv its folded bias) is priced with its
    loads into the accumulator in every program form (on a 1024-pixel 1x1 conv of 16-32 channels
    the LOOP_WS programs' D tiles make them 2-3x the programs without)."""
    cfg = _config(hw)
    blocks = _schedule_blocks(layer, schedule)
    terms = costmodel.conv_program_terms(layer, blocks, float(cfg.dim), rows=schedule.rows, out_int8=KERNEL_OUT_INT8,
                                         double_buffer=schedule.double_buffer)
    if runs_pointwise_loop_ws(layer, schedule, cfg):
        return loop_ws_walk(layer.N * layer.P * layer.Q, layer.K, layer.C, *(int(b) for b in blocks),
                            cfg.dim, bias=layer.bias)[1 if end_to_end else 0]
    loop, gemmini, last = 0, float(terms["cycles"][0]), None
    if not is_pointwise(layer):
        loop = loop_conv_loops(layer, schedule, cfg)
        if loop:
            gemmini, _, last = _loop_conv_program(layer, schedule, cfg)
            last = torch.tensor([last], dtype=torch.float64)
    if not end_to_end:
        return gemmini
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (cfg.dim, cfg.sp_kb, cfg.acc_kb))
    return float(conv_end_to_end(layer, torch.tensor([gemmini], dtype=torch.float64), terms, schedule.rows, hw_t,
                                 torch.tensor([float(loop)]), last, schedule.double_buffer)[0])


def conv_schedule_energy(layer: Layer, schedule: GemmSchedule, hw) -> float:
    """Predicted energy (µJ) of a convolution layer compiled with `schedule` on hw = (pe_dim, sp_kb,
    acc_kb): its LOOP_CONV_WS programs' counts where the compiler emits them (runs_loop_conv), a
    pointwise layer's LOOP_WS programs' where they fit (loop_ws_energy), else its explicit
    stream's (costmodel.conv_program_energy); a bias as conv_schedule_cycles prices it."""
    cfg = _config(hw)
    blocks = [int(b) for b in _schedule_blocks(layer, schedule)]
    if runs_loop_conv(layer, schedule, cfg):
        return _loop_conv_program(layer, schedule, cfg)[1]
    if runs_pointwise_loop_ws(layer, schedule, cfg):
        return loop_ws_energy(layer.N * layer.P * layer.Q, layer.K, layer.C, *blocks, cfg.dim, cfg.sp_kb, cfg.acc_kb,
                              bias=layer.bias)
    return float(costmodel.conv_program_energy(layer, _schedule_blocks(layer, schedule), hw, rows=schedule.rows,
                                               out_int8=KERNEL_OUT_INT8)[0])


def pointwise_loop_conv_default(layer: Layer, cfg: GemminiConfig) -> GemmSchedule | None:
    """The LoopConv schedule baco.kernels.conv.conv2d runs a pointwise layer with when it is given
    none (schedule.pointwise_loop_conv_schedule: int8 out, estimated faster than the GEMM of all
    pixels), else None (the layer runs default_layer_schedule's GEMM)."""
    if layer.depthwise or not is_pointwise(layer) or not KERNEL_OUT_INT8:
        return None
    return pointwise_loop_conv_schedule(layer.N, layer.P, layer.Q, layer.K, layer.C, cfg, layer.bias)


def default_program_schedule(layer: Layer, cfg: GemminiConfig) -> GemmSchedule:
    """The schedule baco.kernels' conv2d (depthwise_conv2d) runs a convolution layer with when given
    none: the LoopConv one where pointwise_loop_conv_default picks it, else default_layer_schedule."""
    return pointwise_loop_conv_default(layer, cfg) or default_layer_schedule(layer, cfg)


def pointwise_loop_conv_cost(layer: Layer, schedule: GemmSchedule, cfg: GemminiConfig) -> tuple[float, float, float]:
    """(cycles end to end, energy µJ, cycles of Gemmini alone) of a pointwise layer run as the
    LOOP_CONV_WS programs of `schedule` (pointwise_loop_conv_default): end to end as the kernel
    ranks them (schedule.loop_conv_program_cycles, per image), Gemmini's walk and counts as
    _loop_conv_program's."""
    channels = loop_conv_channels(schedule, layer.P, layer.Q, layer.K, layer.C, 1, 1, 1, 1, cfg)
    alone, counts, _ = _loop_conv_walk(layer, schedule.rows, min(schedule.block_m, layer.Q),
                                       min(schedule.block_n, layer.K), cfg.dim, channels)
    cycles = layer.N * loop_conv_program_cycles(layer.P, layer.Q, layer.K, layer.C, 1, 1, 1, 1, schedule, cfg,
                                                bias=layer.bias)
    return cycles, energy.energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6, alone


@functools.lru_cache(maxsize=4096)
def _default_conv_program(layer: Layer, pe: int, sp_kb: float, acc_kb: float) -> tuple[float, float]:
    """(cycles, energy µJ) predicted for a convolution run with its kernel's default schedule
    (mapping.default_layer_schedule) on this hardware (inf where no schedule fits, or on a relaxation's hardware no Gemmini has).
    Cached: the search asks again for every batch."""
    if pe < 1 or sp_kb <= 0 or acc_kb <= 0:
        return math.inf, math.inf
    try:
        cfg = GemminiConfig.from_capacity(pe, sp_kb, acc_kb)
        s = default_layer_schedule(layer, cfg)
    except ValueError:
        return math.inf, math.inf
    loop_conv = pointwise_loop_conv_default(layer, cfg)
    if loop_conv is not None:
        return pointwise_loop_conv_cost(layer, loop_conv, cfg)[:2]
    return conv_schedule_cycles(layer, s, (pe, sp_kb, acc_kb)), conv_schedule_energy(layer, s, (pe, sp_kb, acc_kb))


def layer_of(layer, row: int) -> Layer:
    """The layer whose mapping is row `row` of a batch of `layer` (a Layer, or an explore.LayerStack)."""
    return layer if isinstance(layer, Layer) else layer.layers[row // layer.rows]


def conv_program(layer: Layer, temporal, spatial, hw_t) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(cycles [B], energy µJ [B], index into CONV_VARIANTS [B]) of B mappings of a convolution layer
    on hardware hw_t = (pe_dim, sp_kb, acc_kb): the compiled program of the schedule
    mapping.conv_schedule makes of each mapping (its L2 tile with its whole output rows per program,
    double-buffered when that fits, else single-buffered; else one row per program, the same way;
    else the conv kernel's default schedule), costed as the program the compiler emits: its
    LOOP_CONV_WS programs where they fit (_loop_conv_rows, with the explicit model's slope), a
    pointwise layer's LOOP_WS programs where they fit (loop_ws_fit, loop_ws_program, loop_ws_energy), else
    costmodel.conv_program_terms and conv_program_energy (double buffering does not change what a
    program moves). Differentiable in the factors and the hardware (the default schedule's costs
    are constants). `layer` may be an
    explore.LayerStack of convolutions (all pointwise or all not; B = its rows), costed in one call."""
    B = temporal.shape[0]
    pe, sp_kb, acc_kb = (torch.as_tensor(v, dtype=torch.float64).expand(B) for v in hw_t)
    sp_cap, acc_cap = kb_to_rows(sp_kb, pe, "int8").detach() + 1e-9, kb_to_rows(acc_kb, pe, "int32").detach() + 1e-9
    tile = costmodel._tiles(temporal, spatial[:, 0], spatial[:, 1], layer)[2]
    rows = costmodel.conv_rows(layer, tile)
    bm, bn, bk = costmodel.kernel_blocks(layer, tile)
    variants = [(rows, (bm, bn, bk))]
    if not bool((rows == 1).all()):      # else one row per program is the same schedule
        variants.append((torch.ones_like(rows), (bm / rows, bn, bk)))
    pointwise = bool(costmodel._one_program(layer))
    if pointwise:       # the GEMM kernel over every pixel, LOOP_WS where its blocks fit (loop_ws_fit)
        d = costmodel._dims_as_tensors(layer)
        dims, biased = (d.P * d.Q * d.N, d.K, d.C), costmodel._bias(layer).expand(B)
    candidates, fits, energies = [], [], []
    for r, blocks in variants:
        sp_rows, acc_rows = (x.detach() for x in kernel_rows(blocks, pe))
        loop_conv = _loop_conv_rows(layer, r.expand(B), [b.expand(B) for b in blocks], (pe, sp_kb, acc_kb))
        energy_uj = _straight_through(costmodel.conv_program_energy(layer, blocks, (pe, sp_kb, acc_kb), rows=r,
                                                                    out_int8=KERNEL_OUT_INT8).expand(B), loop_conv[1])
        if pointwise:
            loop_ws_uj = _straight_through(energy_uj, _loop_ws_energy_rows(dims, blocks, (pe, sp_kb, acc_kb), biased))
            energy_uj = torch.where(loop_ws_fit(sp_rows, acc_rows, pe, sp_kb, acc_kb), loop_ws_uj, energy_uj)
        for double_buffer in (True, False):
            terms = costmodel.conv_program_terms(layer, blocks, pe, rows=r, out_int8=KERNEL_OUT_INT8,
                                                 double_buffer=double_buffer)
            explicit = terms["cycles"].expand(B)
            if pointwise:
                loop_ws = loop_ws_program(dims, [b.expand(B) for b in blocks], (pe, sp_kb, acc_kb), explicit, terms,
                                          bias=biased)[1]
                candidates.append(torch.where(loop_ws_fit(sp_rows, acc_rows, pe, sp_kb, acc_kb), loop_ws,
                                              conv_end_to_end(layer, explicit, terms, r, (pe, sp_kb, acc_kb), 0)))
            else:
                candidates.append(conv_end_to_end(layer, _straight_through(explicit, loop_conv[0]), terms, r,
                                                  (pe, sp_kb, acc_kb), torch.nan_to_num(loop_conv[2]), loop_conv[3],
                                                  double_buffer))
            fits.append((acc_rows <= acc_cap) & ((2 if double_buffer else 1) * sp_rows <= sp_cap))
            energies.append(energy_uj)
    default = torch.full((2, B), math.inf, dtype=torch.float64)
    no_fit = torch.nonzero(~torch.stack(fits).any(0)).flatten()
    if no_fit.numel():          # only where no tile fits
        hws = torch.stack([pe, sp_kb, acc_kb], 1).detach()[no_fit].tolist()
        default[:, no_fit] = torch.tensor([_default_conv_program(layer_of(layer, i), int(round(hw[0])), *hw[1:])
                                           if all(map(math.isfinite, hw)) else (math.nan, math.nan)
                                           for i, hw in zip(no_fit.tolist(), hws)], dtype=torch.float64).T
    choice = torch.full((B,), CONV_VARIANTS.index("default"), dtype=torch.long)
    cycles, energy_uj = default[0], default[1]
    for v in reversed(range(len(fits))):      # the first variant that fits wins
        choice = torch.where(fits[v], v, choice)
        cycles, energy_uj = torch.where(fits[v], candidates[v], cycles), torch.where(fits[v], energies[v], energy_uj)
    return cycles, energy_uj, choice


def _loop_conv_rows(layer, rows, blocks, hw_t) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(cycles [B], energy µJ [B], LOOP_CONV_WS a program [B], the last program's cycles alone [B])
    of the LOOP_CONV_WS programs of B schedules (rows [B] output rows of
    blocks = (rows x BLOCK_M, BLOCK_N, BLOCK_K) [B] on hw_t [B]), nan where the compiler keeps the
    explicit stream (runs_loop_conv) or the hardware is no Gemmini's (a relaxation's)."""
    out = torch.full((4, rows.shape[0]), math.nan, dtype=torch.float64)
    keys = torch.stack([rows, *blocks, *hw_t], 1).detach().tolist()
    for i, (r, bm, bn, bk, pe, sp_kb, acc_kb) in enumerate(keys):
        if not all(math.isfinite(v) for v in (r, bm, bn, bk, pe, sp_kb, acc_kb)) or r < 1 or pe < 1 or \
                sp_kb <= 0 or acc_kb <= 0:
            continue
        whole = [round(v) for v in (r, bm / r, bn, bk, pe)]
        if any(abs(w - v) > 1e-6 for w, v in zip(whole, (r, bm / r, bn, bk, pe))):
            continue        # a relaxation's fractional blocks: no program, the explicit model's cost
        try:
            cfg = GemminiConfig.from_capacity(whole[4], sp_kb, acc_kb)
        except ValueError:
            continue
        schedule, row_layer = GemmSchedule(whole[1], whole[2], whole[3], rows=whole[0]), layer_of(layer, i)
        loops = loop_conv_loops(row_layer, schedule, cfg)
        if loops:
            cycles, energy_uj, last = _loop_conv_program(row_layer, schedule, cfg)
            out[:, i] = torch.tensor((cycles, energy_uj, loops, last), dtype=torch.float64)
    return out[0], out[1], out[2], out[3]


def _loop_ws_energy_rows(dims, blocks, hw_t, bias=False, *, b_padded: bool = False, rows=None) -> torch.Tensor:
    """loop_ws_energy [B] of B GEMMs (dims M, N, K and blocks, numbers or [B]; bias, bool or [B]) on
    hw_t [B]: loop_ws_count_rows priced by baco.gemmini.energy.energy_pj; nan where a relaxation's
    fractional blocks or hardware make no program (or outside `rows`, a bool [B], where given).
    Detached (a constant: _straight_through gives it a slope; nan counts must not reach a gradient)."""
    pe, sp_kb, acc_kb = (torch.as_tensor(v, dtype=torch.float64).detach() for v in hw_t)
    priced = torch.isfinite(sp_kb) & torch.isfinite(acc_kb) & (sp_kb > 0) & (acc_kb > 0)
    counts = loop_ws_count_rows(dims, blocks, pe, bias, b_padded=b_padded,
                                rows=priced if rows is None else priced & rows)
    return energy.energy_pj(counts, sp_kb=sp_kb, acc_kb=acc_kb, dim=pe) * 1e-6


def loop_ws_count_rows(dims, blocks, pe, bias=False, *, b_padded: bool = False, rows=None) -> dict:
    """loop_ws_counts [B] (one tensor a count) of B GEMMs (dims M, N, K and blocks, numbers or [B];
    bias, bool or [B]) on pe-wide arrays [B]: what their LOOP_WS programs move and compute,
    hardware-free but for the array; nan where a relaxation's fractional blocks or array make no
    program (or outside `rows`, a bool [B], where given)."""
    B = torch.as_tensor(pe).shape[0]
    out = torch.full((len(COUNT_KEYS), B), math.nan, dtype=torch.float64)
    biased = torch.as_tensor(bias).expand(B).tolist()
    wanted = torch.ones(B, dtype=torch.bool) if rows is None else torch.as_tensor(rows).expand(B)
    for i, key in enumerate(_rows((*dims, *blocks, pe), B)):
        whole = _whole(key) if wanted[i] else None
        if whole:
            counts = loop_ws_counts(*whole, b_padded=b_padded, bias=biased[i])
            out[:, i] = torch.tensor([counts[k] for k in COUNT_KEYS], dtype=torch.float64)
    return dict(zip(COUNT_KEYS, out))


def _rows(values, B) -> list:
    """The B rows of `values` (numbers or [B] tensors) as lists of floats."""
    return torch.stack([torch.as_tensor(v, dtype=torch.float64).expand(B) for v in values], 1).detach().tolist()


def _whole(key):
    """`key`'s values as ints when each is a whole number of at least 1 (a program's sizes), else
    None (a relaxation's fractional blocks or hardware make no program)."""
    if not all(math.isfinite(v) for v in key):
        return None
    whole = [round(v) for v in key]
    return whole if all(w >= 1 and abs(w - v) < 1e-6 for w, v in zip(whole, key)) else None


def _straight_through(explicit: torch.Tensor, loop_conv: torch.Tensor) -> torch.Tensor:
    """The LOOP_CONV_WS program's cost where there is one (loop_conv not nan), else the explicit
    stream's; the LOOP_CONV_WS cost (a discrete walk over its commands) takes the explicit model's
    slope, scaled to its value, so the search's gradient still sees the factors and the hardware."""
    runs = ~torch.isnan(loop_conv)
    ratio = torch.where(runs, loop_conv, 1.0) / torch.where(runs, explicit.detach(), 1.0)
    return torch.where(runs, explicit * ratio, explicit)


def timeloop_costed(layer: Layer, cycle_model: str) -> bool:
    """Whether the layer's cycles are the Timeloop-matched model's (not a compiled program's): every
    layer runs a kernel (a GEMM or a convolution), so only under cycle_model "timeloop"."""
    return cycle_model == "timeloop"


def layer_tensors(layer: Layer, temporal, spatial, order, hw_t, cycle_model: str = "compiled"):
    """(cycles [B], energy µJ [B], Timeloop-matched cycles [B], schedule variant [B] or None) of B
    mappings of one layer with the loop orders `order` (level -> dims, or costmodel.order_index's
    tensor). The variant indexes SCHEDULE_VARIANTS for a GEMM layer, CONV_VARIANTS for a convolution."""
    if timeloop_costed(layer, cycle_model):
        out = costmodel.cost_from_factors(layer, temporal, spatial[:, 0], spatial[:, 1], order, hw_t)
        return out["cycles"], out["energy_uj"], out["cycles"], None
    if not is_kernel_layer(layer):
        out = costmodel.cost_from_factors(layer, temporal, spatial[:, 0], spatial[:, 1], order, hw_t)
        cycles, energy_uj, choice = conv_program(layer, temporal, spatial, hw_t)
        return cycles, energy_uj, out["cycles"], choice
    return kernel_layer_tensors(layer, temporal, spatial, order, hw_t)


def kernel_layer_tensors(layer: Layer, temporal, spatial, order, hw_t):
    """layer_tensors of a kernel layer costed by its compiled program; `layer` may be an
    explore.LayerStack of kernel layers (one call for all their mappings)."""
    out = costmodel.cost_from_factors(layer, temporal, spatial[:, 0], spatial[:, 1], order, hw_t)
    cycles, choice = kernel_cycles(layer, temporal, spatial, hw_t)
    return cycles, kernel_energy(layer, temporal, spatial, hw_t, choice), out["cycles"], choice


def kernel_energy(layer: Layer, temporal, spatial, hw_t, choice) -> torch.Tensor:
    """Energy µJ [B] of the compiled programs of B mappings of a kernel layer, each run with its
    SCHEDULE_VARIANTS[choice] (the dataflow changes the counts; double buffering does not), a WS one
    as LOOP_WS where its blocks fit the loop unit's halves (runs_loop_ws; _loop_ws_energy_rows with
    the explicit stream's slope): the program the compiler emits."""
    sc = (spatial[:, 0], spatial[:, 1])
    flows = [SCHEDULE_VARIANTS[int(i)][0] for i in choice.tolist()]
    by_dataflow = {df: costmodel.compiled_program_energy(layer, temporal, sc, hw_t, out_int8=KERNEL_OUT_INT8,
                                                         dataflow=df)
                   for df in sorted(set(flows))}
    os_rows = torch.tensor([df == "OS" for df in flows])
    explicit = torch.where(os_rows, by_dataflow.get("OS", 0.0), by_dataflow.get("WS", 0.0))
    B = temporal.shape[0]
    hw = tuple(torch.as_tensor(v, dtype=torch.float64).expand(B) for v in hw_t)
    sp_rows, acc_rows = gemm_rows_from_factors(layer, temporal, spatial, hw[0])
    loop = runs_loop_ws(choice, sp_rows, acc_rows, *hw)
    if not bool(loop.any()):
        return explicit
    dims, blocks = costmodel._gemm_blocks(layer, temporal, sc)
    loop_uj = _loop_ws_energy_rows(dims, blocks, hw, costmodel._bias(layer), b_padded=KERNEL_B_PADDED, rows=loop)
    return _straight_through(explicit, loop_uj)


def runs_loop_ws(choice, sp_rows, acc_rows, pe, sp_kb, acc_kb) -> torch.Tensor:
    """Whether each of B kernel-layer programs whose schedule variant fastest_fitting chose (`choice`
    [B]) runs as LOOP_WS: a WS variant whose blocks fit the loop unit's halves (loop_ws_fit)."""
    ws = torch.tensor([SCHEDULE_VARIANTS[int(i)][0] == "WS" for i in choice.tolist()], dtype=torch.bool)
    return ws & loop_ws_fit(sp_rows, acc_rows, pe, sp_kb, acc_kb)


def evaluate(layer: Layer, mapping: Mapping, hw, cycle_model: str = "compiled", program: str = "baco",
             default_program: bool = False) -> costmodel.Cost:
    """The exact Cost of one mapping on hw: cycles and energy of the model the search uses, accesses
    Timeloop-matched, timeloop_cycles and timeloop_energy_uj always; for a kernel layer (with
    cycle_model "compiled") the schedule the compiler runs, checked with the compiler's capacity
    rule, and its program's energy. program="library": a kernel layer runs the C library's tiled
    matmul instead (library_matmul_cycles and _energy; no schedule). A convolution's Cost says
    whether it runs its mapping's tile (schedule_source "tuned") or its kernel's default program
    ("default": no tile fits, or `default_program`, the build without a design), which is what
    baco.compile_model runs with no schedule given (a 1x1 layer's LoopConv program where conv2d
    picks it: _default_conv_program) and is priced as such."""
    cost = costmodel.evaluate(layer, mapping, hw)
    cost.timeloop_cycles, cost.timeloop_energy_uj = cost.cycles, cost.energy_uj
    if timeloop_costed(layer, cycle_model):
        return cost
    if program == "library":
        cfg = hw.to_gemmini_config()
        square = layer.R == layer.S and layer.Hstride == layer.Wstride and layer.Hdilation == layer.Wdilation
        if is_kernel_layer(layer):
            library = dict(out_int8=KERNEL_OUT_INT8, bias=layer.bias)
            cost.cycles = library_matmul_cycles(layer.P, layer.K, layer.C, cfg, **library)
            cost.energy_uj = library_matmul_energy(layer.P, layer.K, layer.C, cfg, **library)
        elif square:
            cost.cycles = library_conv_cycles(layer, cfg, out_int8=KERNEL_OUT_INT8)
            cost.energy_uj = library_conv_energy(layer, cfg, out_int8=KERNEL_OUT_INT8)
        else:       # tiled_conv takes square filters, strides and dilations only: the Timeloop-matched model
            return cost
        cost.edp = cost.cycles * cost.energy_uj
        return cost
    temporal, sC, sK = costmodel.mapping_tensors(mapping)
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    if not is_kernel_layer(layer):
        cfg = hw.to_gemmini_config()
        if default_program:
            cost.cycles, cost.energy_uj = _default_conv_program(layer, hw.pe_dim, hw.sp_kb, hw.acc_kb)
            cost.schedule, cost.schedule_source = default_program_schedule(layer, cfg), "default"
        else:
            cost.cycles, cost.energy_uj, cost.schedule, cost.schedule_source = \
                _mapped_conv_cost(layer, mapping, cfg, temporal, sC, sK, hw_t)
        cost.edp = cost.cycles * cost.energy_uj
        return cost
    with torch.no_grad():
        cycles, choice = kernel_cycles(layer, temporal, torch.stack([sC, sK], 1), hw_t)
        energy_uj = kernel_energy(layer, temporal, torch.stack([sC, sK], 1), hw_t, choice)
    dataflow, double_buffer = SCHEDULE_VARIANTS[int(choice[0])]
    schedule = gemm_schedule(mapping, layer, dataflow=dataflow, double_buffer=double_buffer)
    problems = schedule_problems(schedule, hw.to_gemmini_config(), KERNEL_OUT_INT8)
    if problems:   # the tensor rule and the compiler's disagree: a bug, not a design to return
        raise AssertionError(f"chosen schedule {schedule} does not fit {hw}: {'; '.join(problems)}")
    cost.cycles, cost.energy_uj = float(cycles[0]), float(energy_uj[0])
    cost.edp = cost.cycles * cost.energy_uj
    cost.schedule = schedule
    return cost


def _mapped_conv_cost(layer: Layer, mapping: Mapping, cfg: GemminiConfig, temporal, sC, sK, hw_t
                      ) -> tuple[float, float, GemmSchedule, str]:
    """(cycles, energy µJ, schedule, "tuned" | "default") of a convolution's mapping as conv_program
    prices it, checked against the schedule mapping.conv_schedule compiles."""
    with torch.no_grad():
        cycles, energy_uj, choice = conv_program(layer, temporal, torch.stack([sC, sK], 1), hw_t)
    schedule, source = conv_schedule(mapping, layer, cfg)
    chosen = CONV_VARIANTS[int(choice[0])]
    tile_rows = int(round(float(costmodel.conv_rows(layer, costmodel._tiles(temporal, sC, sK, layer)[2])[0])))
    rows = tile_rows if chosen.startswith("rows") else 1
    agree = source == "default" if chosen == "default" else \
        source == "tuned" and schedule.double_buffer == chosen.endswith("+db") and schedule.rows == rows
    if not agree:
        raise AssertionError(f"the conv model costs the {chosen} schedule, the compiler runs {schedule} ({source})")
    return float(cycles[0]), float(energy_uj[0]), schedule, source


def library_matmul_cycles(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = KERNEL_OUT_INT8,
                          end_to_end: bool = True, bias: bool = False) -> float:
    """Analytical cycles of the C library's tiled_matmul_auto (baco.sim.clib.matmul_stream, one
    LOOP_WS a tile) as the cycle model times its command stream (baco.gemmini.loop_ws_timing's walk
    says how): end to end (the default, as baco's programs are costed: the CPU running
    library_tile_instructions of tile-loop code before each tile's LOOP_WS, as
    baco.sim.clib.library_stream_cycles issues it) or Gemmini alone (the commands arriving for free);
    `bias`: with its repeating bias (a layer's Layer.bias)."""
    loops = library_matmul_loops(M, N, K, cfg, out_int8=out_int8, bias=bias)
    if not end_to_end:
        return loop_ws_gemmini_cycles(loops, cfg)
    return loop_ws_end_to_end([replace(lp, cpu=DEFAULT_CONSTANTS.library_tile_instructions) for lp in loops], cfg)


def _library_conv_tiles(layer: Layer, cfg: GemminiConfig):
    """(tiled_conv_auto's tiles as (B, orows, ocols, och, kr, kc, ich, irows, icols, first, last, pad_rows,
    pad_cols) in tiled_conv's loop order, downsample) of `layer` (its image, with its padding) as
    baco.design.default_conv_stream runs it (a strided 1x1 layer over its 2P x 2Q input through the
    downsampling path; a depthwise layer through tiled_conv_dw_auto, one single-channel LOOP_CONV_WS
    per tile and channel): baco.gemmini.heuristics.library_conv_tiles, the tiles baco.sim.clib
    issues. irows x icols: the input pixels a tile reads inside the image; pad_rows x pad_cols: the
    rows and columns past it that LoopConv fills with zeros (the stride - 1 it moves past its last
    window, where that is beyond the image's edge)."""
    H, W = layer.image_rows, layer.image_cols
    if layer.R == 1 and layer.Hstride == 2 and not layer.depthwise:
        H, W = 2 * layer.P, 2 * layer.Q
    _, downsample, library = library_conv_tiles(layer.N, H, W, layer.C, layer.K, layer.R, cfg, stride=layer.Hstride,
                                                padding=layer.padding, dilation=layer.Hdilation,
                                                depthwise=layer.depthwise)
    stride, dil = layer.Hstride, layer.Hdilation
    tiles = []
    for t in library:
        pad_rows, pad_cols = t.upad + t.dpad, t.lpad + t.rpad
        irows = t.orows * stride + dil * (t.krows - 1) - pad_rows
        icols = t.ocols * stride + dil * (t.kcols - 1) - pad_cols
        tiles.append((t.batches, t.orows, t.ocols, t.ochs, t.krows, t.kcols, t.kchs, irows, icols, t.first, t.last,
                      pad_rows, pad_cols))
    return tiles, downsample


def _program_conv_tiles(layer: Layer, schedule: GemmSchedule, channels: int | None = None) -> list:
    """The tiles of the LOOP_CONV_WS programs of a convolution layer compiled with
    `schedule`, `channels` input channels a LOOP_CONV_WS (baco.gemmini.loop_conv_timing.program_conv_tiles;
    a padded layer's image padded as the kernel pads it)."""
    return program_conv_tiles(layer.N, layer.P, layer.Q, layer.K, layer.C, layer.R, layer.S, layer.Hstride,
                              layer.Hdilation, schedule.rows, schedule.block_m, schedule.block_n, layer.depthwise,
                              channels=channels, downsample=loop_conv_downsamples(layer.R, layer.S, layer.Hstride),
                              padding=layer.padding, image=(layer.image_rows, layer.image_cols))


def library_conv_cycles(layer: Layer, cfg: GemminiConfig, *, out_int8: bool = KERNEL_OUT_INT8,
                        end_to_end: bool = True) -> float:
    """Analytical cycles of the C library's tiled_conv_auto on `layer` (baco.sim.clib.conv_stream,
    the tiles of _library_conv_tiles, with the layer's bias where it has one: the first tile of an
    output tile loads it) as the cycle model times its command stream: end to end (the
    default, as baco's programs are costed: the CPU running library_tile_instructions of tile-loop
    code before each tile's LOOP_CONV_WS, as baco.sim.clib.library_stream_cycles issues it, which
    overlaps Gemmini's work but for the first tile's issue or the last tile's work,
    schedule.overlapped_cycles) or Gemmini alone (the commands arriving for free).

    Each tile is one LOOP_CONV_WS that LoopConv expands into loads (the first tile of an output tile
    zero-fills its accumulator rows, mvin3 from address 0; weights as mvin2s of DIM channel rows;
    input rows of up to DIM pixels, every other one when downsampling), then its preload/computes
    (weight block by weight block, every output pixel row of up to DIM pixels under each, with the
    first-layer packing of max_pixels_per_row kernel columns per array row), then (the last tile of
    an output tile) its stores. LoopConv holds two loops (slots alternating, each with its own
    scratchpad half): a tile's loads start once its loop has a slot (the loop before last has
    issued everything: its computes but the last rs_ex/2 pairs, its stores but the last rs_st),
    the loaders are done with the previous tile, and the computes of the tile before last (same
    half) are done; its computes start once its loads have landed and the previous tile's
    computes and the stores of the output tile before last (same accumulator half) are done; its
    stores once its computes are issued and the rows have left the array. Under one weight block the
    computes take a cycle a row (4 at least) plus one, new weights DIM cycles overlapping only the
    previous compute, and the next weight block's first compute into the same accumulator rows
    waits for the previous result to land (the array's depth)."""
    tiles, downsample = _library_conv_tiles(layer, cfg)
    gemmini = loop_conv_stream_cycles(tiles, cfg, dilation=layer.Hdilation, downsample=downsample, out_int8=out_int8,
                                      bias=layer.bias)
    if not end_to_end:
        return gemmini
    k = DEFAULT_CONSTANTS
    return overlapped_cycles(gemmini, len(tiles) * k.library_tile_instructions * k.cpu_cycles_per_instruction,
                             1.0 / len(tiles))


def library_conv_counts(layer: Layer, cfg: GemminiConfig, *, out_int8: bool = KERNEL_OUT_INT8) -> dict:
    """What the C library's tiled_conv_auto (the tiles of _library_conv_tiles) moves and computes,
    counted as the cycle model counts LoopConv's commands: weights and input pixels in (every other
    input row and column when downsampling; zero fills of the accumulator without DRAM bytes), a
    weight block's registers and scratchpad reads once, every compute's A rows read and its output
    rows read and written in the accumulator, each output stored once."""
    tiles, downsample = _library_conv_tiles(layer, cfg)
    return loop_conv_stream_counts(tiles, cfg, dilation=layer.Hdilation, downsample=downsample, out_int8=out_int8,
                                   bias=layer.bias)


def loop_ws_stream_counts(loops, cfg: GemminiConfig) -> dict:
    """What a sequence of LOOP_WSs (run-length encoded, as schedule.gemm_loop_ws_loops gives them)
    moves and computes, as the cycle model counts LoopMatmul's commands (baco.sim.loops): what LdA,
    LdB and StC move counted from their commands' description (baco.gemmini.loop_ws_commands: A's
    rows and K columns that exist, B in whole DIM-row blocks, of K or of J when transposed, as LdB
    never pads rows), explicit mvins the rows of B given (raw_b) into each of its raw_b_halves; each (k, j) weight
    block is preloaded once
    and each compute reads its A block and reads and writes its output block in the accumulator
    (rows and columns that exist: no zero fill, the first k overwrites), StC reads and stores C
    (a `spad_store` loop's MVOUT_SPADs write it into the scratchpad: no DRAM out). A loop with a
    bias moves its D in first: LdD writes the output block's rows and columns that exist into the
    accumulator, int32 from DRAM (as the chain's unshrunk config_ld of slot 2 has them), every loop
    again (the fused chain's tiles each re-read their bias rows)."""
    d = cfg.dim
    c = dict.fromkeys(("macs", "registers", "scratchpad_reads", "scratchpad_writes", "accumulator_reads",
                       "accumulator_writes", "dram_bytes_in", "dram_bytes_out"), 0)
    for item in loops:
        if not isinstance(item, LoopWs):        # (items, count): a run of equal programs
            items, times = item
            for key, v in loop_ws_stream_counts(items, cfg).items():
                c[key] += times * v
            continue
        rows, cols, depth = item.I * d - item.pad_i, item.J * d - item.pad_j, item.K * d - item.pad_k
        bias = rows * cols if item.bias else 0       # LdD: the output block's rows and columns that exist
        moved = (lda_elements(cfg, item.I, item.K, item.pad_i, item.pad_k) if item.load_a else 0) \
            + (ldb_elements(cfg, item.K, item.J, item.pad_k, item.pad_j, item.b_transposed) if item.load_b else 0) \
            + item.raw_b * cols * item.raw_b_halves
        updates = rows * cols * item.K
        c["macs"] += rows * cols * depth
        c["registers"] += depth * cols
        c["scratchpad_reads"] += depth * cols + rows * depth * item.J
        c["scratchpad_writes"] += moved + (rows * cols if item.store and item.spad_store else 0)
        c["dram_bytes_in"] += moved + bias * cfg.acc_bytes
        c["accumulator_writes"] += updates + bias
        c["accumulator_reads"] += updates + (rows * cols if item.store else 0)
        if item.store and not item.spad_store:
            c["dram_bytes_out"] += store_elements(cfg, item.I, item.J, item.pad_i, item.pad_j) \
                * (cfg.acc_bytes if item.full_c else cfg.input_bytes)
    return c


@functools.lru_cache(maxsize=65536)
def loop_ws_counts(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, dim: int,
                   b_padded: bool = False, bias: bool = False) -> dict:
    """What the LOOP_WS programs of an M x N x K GEMM in these blocks move and compute
    (loop_ws_stream_counts of loop_ws_walk's loops, `b_padded` and `bias` as it takes them; read-only).
    Cached: the search asks again for every batch."""
    loops = _loop_ws_loops(M, N, K, block_m, block_n, block_k, dim, b_padded, bias)
    return loop_ws_stream_counts(loops, GemminiConfig(dim=dim))


def loop_ws_energy(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, dim: int, sp_kb: float,
                   acc_kb: float, b_padded: bool = False, bias: bool = False) -> float:
    """Energy (µJ) of the LOOP_WS programs of an M x N x K GEMM in these blocks (loop_ws_walk's
    loops, `bias` as it takes it): loop_ws_counts priced by baco.gemmini.energy.energy_pj, the cycle
    model's sum."""
    counts = loop_ws_counts(M, N, K, block_m, block_n, block_k, dim, b_padded, bias)
    return energy.energy_pj(counts, sp_kb=sp_kb, acc_kb=acc_kb, dim=dim) * 1e-6


@functools.lru_cache(maxsize=4096)
def gemm_chain_loop_ws_energy(M: int, K: int, H: int, N: int, cfg: GemminiConfig, bias: bool = True) -> float:
    """Energy (µJ) of the fused GEMM chain compiled to the loop unit (baco.gemmini.fused.
    gemm_chain_loop_ws_loops: each layer's tiles with their bias, layer 1's C stored into the
    scratchpad): loop_ws_stream_counts priced by baco.gemmini.energy.energy_pj, the cycle model's
    sum; without `bias`, less its bias rows' moves (LdD: one int32 a layer's output, as the two
    layers unfused move them too), the program counted as the layers' models count them (the GEMM
    kernel's LOOP_WSs, gemm_loop_ws_loops, carry no bias). Cached: the search asks again for every
    point on the same Gemmini."""
    loops = [([lp if bias else replace(lp, bias=False) for lp in items], times)
             for items, times in gemm_chain_loop_ws_loops(M, K, H, N, cfg)]
    counts = loop_ws_stream_counts(loops, cfg)
    return energy.energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6


def loop_conv_stream_counts(tiles, cfg: GemminiConfig, *, dilation: int = 1, downsample: int = 0,
                            out_int8: bool = KERNEL_OUT_INT8, bias: bool = False) -> dict:
    """What a sequence of LOOP_CONV_WS `tiles` (as _library_conv_tiles gives them) moves and
    computes, as the cycle model counts LoopConv's commands (baco.gemmini.loop_conv_timing.tile_counts,
    the commands of baco.gemmini.loop_conv_stream; `bias`: the first tile of an output tile loads it
    from DRAM, else zero-fills)."""
    c = dict.fromkeys(COUNT_KEYS, 0)
    for tile, times in collections.Counter(tiles).items():        # a layer's programs are few kinds of tile
        for key, value in tile_counts(cfg, dilation, downsample, out_int8, bias, tile).items():
            c[key] += times * value
    return c


def library_conv_energy(layer: Layer, cfg: GemminiConfig, *, out_int8: bool = KERNEL_OUT_INT8) -> float:
    """Energy (µJ) of the C library's tiled_conv_auto: library_conv_counts priced by
    baco.gemmini.energy.energy_pj, the sum the cycle model reports."""
    counts = library_conv_counts(layer, cfg, out_int8=out_int8)
    return energy.energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6


def library_matmul_counts(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = KERNEL_OUT_INT8,
                          bias: bool = False) -> dict:
    """What the C library's tiled matmul (baco.sim.clib.matmul_stream) moves and computes, counted as
    the cycle model counts it (its stats): loop_ws_stream_counts of its tiles' LOOP_WSs
    (library_matmul_loops: an operand the library keeps in its scratchpad across tiles,
    tiled_matmul_reuse, moved in once)."""
    return loop_ws_stream_counts(library_matmul_loops(M, N, K, cfg, out_int8=out_int8, bias=bias), cfg)


def library_matmul_energy(M: int, N: int, K: int, cfg: GemminiConfig, *, out_int8: bool = KERNEL_OUT_INT8,
                          bias: bool = False) -> float:
    """Energy (µJ) of the C library's tiled matmul: library_matmul_counts priced by
    baco.gemmini.energy.energy_pj, the sum the cycle model reports."""
    counts = library_matmul_counts(M, N, K, cfg, out_int8=out_int8, bias=bias)
    return energy.energy_pj(counts, sp_kb=cfg.sp_kb, acc_kb=cfg.acc_kb, dim=cfg.dim) * 1e-6


__all__ = ["CYCLE_MODELS", "gemm_chain_loop_ws_energy", "library_matmul_cycles", "library_conv_cycles", "library_conv_counts", "library_conv_energy", "library_matmul_counts", "library_matmul_energy",
           "SCHEDULE_VARIANTS", "CONV_VARIANTS", "check_cycle_model", "timeloop_costed", "kernel_cycles", "fastest_fitting", "kernel_energy",
           "conv_program", "conv_schedule_cycles", "conv_schedule_energy", "layer_tensors", "kernel_layer_tensors",
           "evaluate"]
