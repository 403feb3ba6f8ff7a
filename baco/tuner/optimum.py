"""The exact optimum of the co-exploration space for networks of GEMM layers (branch and bound).

The space is the one the searches (baco, the genetic algorithm, ...) explore: one mapping per
layer that passes mapping.validate, on the hardware inferred from them (explore.NetworkProblem),
scored by the cost the search minimises (kernel_model: each GEMM layer costs the program compiled
for its mapping's scratchpad tile, the fastest schedule variant that fits). Three facts of that
model make it enumerable:

1. A GEMM layer's cost depends on its mapping only through the L2 tile, the kernel's blocks
   (BLOCK_M, BLOCK_N, BLOCK_K), each any integer from 1 to its dimension (a validated mapping can
   put any factor at L2; its spatial factors only set the array the design needs). And it depends
   on a block b of a dimension n only through a few integers (block_signature: the number of
   blocks ⌈n/b⌉, the DIM strips of a block and of the last one, b capped at the widest mvin, the
   DMA beats LOOP_WS's ragged blocks move, ...), so one block per signature stands for all
   (tests/test_optimum.py checks it against every block of small layers). LOOP_WS's walk reads
   BLOCK_M's rows exactly, so every BLOCK_M is a candidate.
2. Lower bounds of a block from its counts alone (block_bound, no program costed): cycles >= the
   array's computes (every row of A through every DIM strip of B) and the one DMA's beats of the
   operands as the blocks reload them (A once per column of programs, B once per row; LOOP_WS
   keeps a one-step program's B resident down a column), the longer; energy >= its MACs and those
   DRAM bytes priced. An array size whose least bound (compute_bound) exceeds a known design's EDP
   is out; so is each block whose own bound, with the other layers at their least, does
   (bounded_blocks, over every candidate as a few tensor ops); the survivors are costed, pruned
   again on their costs (LOOP_WS at loop_ws_bound), walked and pruned again. The array sizes go
   least bound first, each design found lowering the limit of the later ones.
3. On a fixed hardware the layers are independent, and the minimum of (Σ cycles)(Σ energy) is at
   a vertex of the lower convex hull of the sum of the layers' (cycles, energy) sets (the product
   is concave in log space), i.e. a sum of per-layer minimisers of cycles + λ·energy for some λ:
   best_combination sweeps λ exactly.
4. On every hardware point a block Y is at least as good as a block X when it fits wherever X does
   (needs no larger), runs no slower than X's least cycles and costs no more energy than X's least
   on any memory sizes (dominated): X is dropped before its LOOP_WS program is walked. That prunes
   the small layers no EDP bound can (their whole range fits in the incumbent's slack).

Hardware: every power-of-two array, scratchpad (the double-buffering and LOOP_WS fits and the
energy depend on it) and every accumulator size that is some design's need rounded to the
accumulator's granule (the designs' inferred hardware; the LOOP_WS fit and the energy depend on
it; cycles do not otherwise, outside the learned residual's domain, which this module refuses).
Each design is costed at its own inferred hardware among these points, so the minimum over them is
a lower bound of the space's optimum; the design found is then rebuilt as mappings and scored on
its own inferred hardware (explore.NetworkProblem.result), and the two agree when it is the
optimum (`exact`; a combination costed on memories larger than its own, where more blocks run
LOOP_WS, may not be one).
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, fields, replace

import torch

from baco.gemmini import energy
from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_conv_timing import COUNT_KEYS
from baco.gemmini.schedule import LOOP_WS_INSTRUCTIONS
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.problem.dims import DIMS, DIM_INDEX, NUM_LEVELS
from baco.problem.layer import Layer
from baco.tuner import costmodel, kernel_model, residual
from baco.tuner.arch import MAX_BUFFER_KB, MAX_PE_DIM, MIN_PE_DIM
from baco.tuner.explore import NetworkProblem, Result
from baco.tuner.hwinfer import acc_candidates, gemm_rows_from_factors, requirements_from_factors, sp_candidates
from baco.tuner.mapping import KERNEL_B_PADDED, KERNEL_OUT_INT8, is_kernel_layer
from baco.tuner.points import Tiling

CHUNK = 1 << 17         # blocks costed per batched call
WALK_CHUNK = 2048       # blocks walked between checks of the time limit (~6 s)
REL_TOL = 1e-9          # an EDP within this of the incumbent's is kept (ties are the optimum too)


def array_dims() -> list[int]:
    out, pe = [], MIN_PE_DIM
    while pe <= MAX_PE_DIM:
        out.append(pe)
        pe *= 2
    return out


def block_signature(b: int, n: int, role: str, pe: int) -> tuple:
    """What the compiled GEMM program's cost and footprint (costmodel.compiled_program_terms and
    _counts, hwinfer.kernel_rows, and LoopMatmul's walk, kernel_model.loop_ws_walk) read of a block b
    of a dimension n on a pe-wide array: the blocks ⌈n/b⌉, the DIM strips of a block and of the last
    one, and for BLOCK_N/BLOCK_K (role "N", "K"; "M" is BLOCK_M) the widest mvin's chunks and b
    capped at its width (DMA rows and bytes), for BLOCK_N the accumulator zero-fill chunks too; then
    what the LOOP_WS walk reads of a block and of the last one (_loop_ws_extent), and whether the
    last block is full (the explicit stream's interior and ragged-K programs,
    schedule.explicit_program_versions)."""
    cfg = GemminiConfig()
    max_cols = max(1.0, cfg.max_bytes / pe) * pe
    zero_cols = max(1, cfg.max_bytes // (pe * cfg.acc_bytes)) * pe
    blocks = -(-n // b)
    last = max(1, n - (blocks - 1) * b)
    key = (blocks, -(-b // pe), -(-last // pe), last == b) + _loop_ws_extent(b, role, pe) + \
        _loop_ws_extent(last, role, pe)
    if role == "M":
        return key
    key += (math.ceil(b / max_cols), min(b, max_cols))
    return key + (-(-b // zero_cols),) if role == "N" else key


def _loop_ws_extent(e: int, role: str, pe: int) -> tuple:
    """What baco.gemmini.loop_ws_timing's walk reads of a block of e elements along a role's dimension:
    BLOCK_M, its rows (each DMA's rows and each compute's); BLOCK_N, its strips and the beats of its
    last mvin chunk (B's loads and C's stores); BLOCK_K, its whole DIM blocks, the beats of a ragged
    rest (a LOOP_WS of its own) and a step shorter than DIM (B moved in explicitly, that many rows)."""
    beat = GemminiConfig().dma_bus_bits // 8      # int8 elements a beat
    if role == "M":
        return (e,)
    if role == "N":
        strips, width = -(-e // pe), GemminiConfig(dim=pe).max_block_len * pe
        return strips, -(-(e - (-(-strips // GemminiConfig(dim=pe).max_block_len) - 1) * width) // beat)
    return e // pe, -(-(e % pe) // beat), e if e < pe else 0


def block_candidates(n: int, role: str, pe: int) -> list[int]:
    """The smallest block of each block_signature of a dimension n: one per distinct cost."""
    seen = {}
    for b in range(1, n + 1):
        seen.setdefault(block_signature(b, n, role, pe), b)
    return sorted(seen.values())


def block_tensors(layer: Layer, blocks: torch.Tensor):
    """(temporal [B,4,7], spatial [B,2]) of mappings whose L2 tile is blocks [B,3] (BLOCK_M, N, K as
    P, K, C), the rest at DRAM: what a GEMM layer's cost reads of any mapping with that tile."""
    B = blocks.shape[0]
    temporal = torch.ones(B, NUM_LEVELS, len(DIMS), dtype=torch.float64)
    for col, (d, n) in enumerate((("P", layer.P), ("K", layer.K), ("C", layer.C))):
        b = blocks[:, col].to(torch.float64)
        temporal[:, 2, DIM_INDEX[d]] = b
        temporal[:, 3, DIM_INDEX[d]] = torch.ceil(n / b)
    return temporal, torch.ones(B, 2, dtype=torch.float64)


def compute_bound(layer: Layer, pe: int) -> tuple[float, float]:
    """(cycles, energy µJ) no mapping of the GEMM layer goes below on a pe-wide array (one instance):
    block_bound of its blocks as large as the layer (each term of block_bound is least there: the
    fewest strips, reloads, programs and K steps)."""
    dims = (float(layer.P * layer.Q * layer.N), float(layer.K), float(layer.C))
    cycles, energy_uj = block_bound(layer, pe, *(torch.tensor(d, dtype=torch.float64) for d in dims))
    return float(cycles), float(energy_uj)


def _ceil(x: torch.Tensor) -> torch.Tensor:
    return torch.ceil(x - 1e-9)


def _strips(n: float, b: torch.Tensor, pe: int) -> torch.Tensor:
    """DIM-wide strips of a dimension of n in blocks b (the last block short)."""
    blocks = _ceil(n / b)
    return (blocks - 1) * _ceil(b / pe) + _ceil((n - (blocks - 1) * b) / pe)


def _beats(n: float, b: torch.Tensor) -> torch.Tensor:
    """DMA beats of one row of a dimension of n moved in blocks b, the last short (a beat moves
    dma_bus_bits of int8 elements; a row's chunks cost at least its whole beats)."""
    beat = GemminiConfig().dma_bus_bits // 8
    blocks = _ceil(n / b)
    return (blocks - 1) * _ceil(b / beat) + _ceil((n - (blocks - 1) * b) / beat)


def _block_counts(layer: Layer, bm, bn, bk):
    """(M, N, K, programs down M, programs across N, K steps) of the layer's GEMM in blocks bm x bn x bk
    (float64 tensors that broadcast)."""
    M, N, K = float(layer.P * layer.Q * layer.N), float(layer.K), float(layer.C)
    return M, N, K, _ceil(M / bm), _ceil(N / bn), _ceil(K / bk)


def block_bound(layer: Layer, pe: int, bm, bn, bk) -> tuple[torch.Tensor, torch.Tensor]:
    """(cycles, energy µJ) of one instance of the GEMM layer in blocks bm x bn x bk (float64 tensors
    that broadcast) on a pe-wide array, below any program and any buffers (the LayerBlocks' cycles_lb
    and energy_lb), from the blocks' counts alone: the explicit stream (explicit_bound) or LOOP_WS
    (loop_ws_bound), the faster, and the MACs and DRAM bytes priced (baco.gemmini.energy: A read
    once per column of programs, B once per row of them, but LOOP_WS's resident operands once:
    _loop_moves; C written once; the bias's int32 rows)."""
    M, N, K, *_ = _block_counts(layer, bm, bn, bk)
    cfg = GemminiConfig()
    out_bytes = cfg.input_bytes if KERNEL_OUT_INT8 else cfg.acc_bytes
    a_times, b_times = _loop_moves(layer, bm, bn, bk)
    dram = M * K * a_times + K * N * b_times + M * N * (out_bytes + (cfg.acc_bytes if layer.bias else 0))
    pj = M * N * K * energy.MAC_PJ + dram * energy.DRAM_PJ
    return torch.minimum(explicit_bound(layer, pe, bm, bn, bk), _loop_bound(layer, pe, bm, bn, bk)), pj * 1e-6


def _computes(layer: Layer, pe: int, bn, bk) -> torch.Tensor:
    """The array's compute cycles: every row of A through every DIM column strip of every K strip at a
    row a cycle (each compute feeds at least its rows, WS and OS, explicit and LOOP_WS)."""
    M, N, K = float(layer.P * layer.Q * layer.N), float(layer.K), float(layer.C)
    return M * _strips(N, bn, pe) * _strips(K, bk, pe)


def explicit_bound(layer: Layer, pe: int, bm, bn, bk) -> torch.Tensor:
    """A lower bound of the explicit stream's cycles (every SCHEDULE_VARIANTS variant, end to end) in
    blocks bm x bn x bk (broadcasting tensors): the array's computes, or the one DMA moving every
    program's A rows and B rows at each K step (A once per column of programs, B once per row of
    them; a row at least its whole beats), the longer (the stream overlaps them at best)."""
    M, N, K, pm, pn, _ = _block_counts(layer, bm, bn, bk)
    beats = pn * M * _beats(K, bk) + pm * K * _beats(N, bn)
    return torch.maximum(_computes(layer, pe, bn, bk), beats * DEFAULT_CONSTANTS.beat_cycles)


def _loop_bound(layer: Layer, pe: int, bm, bn, bk) -> torch.Tensor:
    """loop_ws_bound on broadcasting block tensors. Its array term counts each of a program's (K
    strip, column strip) groups at least pe cycles (new weights wait until the array has taken the
    last ones: loop_ws_timing._group_cycles), not only its rows."""
    M, N, K, pm, pn, steps = _block_counts(layer, bm, bn, bk)
    a_times, b_times = _loop_moves(layer, bm, bn, bk)
    beats = a_times * M * _beats(K, bk) + b_times * K * _beats(N, bn)
    c = LOOP_WS_INSTRUCTIONS
    cpu = pm * pn * (c["program"] + steps * c["step"]) * DEFAULT_CONSTANTS.cpu_cycles_per_instruction
    rows = (pm - 1) * torch.clamp(bm, min=pe) + torch.clamp(M - (pm - 1) * bm, min=pe)   # each program's, >= pe
    array = rows * _strips(N, bn, pe) * _strips(K, bk, pe)
    return torch.maximum(torch.maximum(array, beats * DEFAULT_CONSTANTS.beat_cycles), cpu)


def _loop_moves(layer: Layer, bm, bn, bk) -> tuple[torch.Tensor, torch.Tensor]:
    """(times A, times B) the LOOP_WS programs in blocks bm x bn x bk move their operand at least
    (the explicit stream's at most): A once per column of programs, B once per row of them, but
    with programs of one K step a B stays resident down a column (once) and an A along a one-row
    grid (schedule._loop_ws_columns, resident_a)."""
    _, _, _, pm, pn, steps = _block_counts(layer, bm, bn, bk)
    one_step = steps == 1
    return torch.where(one_step & (pm == 1), 1.0, pn), torch.where(one_step, 1.0, pm)


def residual_applies(layer: Layer, pe: int) -> bool:
    """Whether the learned residual corrects this layer's cycles on a pe-wide array (then its cycles
    depend on the buffer sizes in ways no bound here covers)."""
    largest = max(layer.P * layer.Q * layer.N, layer.K, layer.C)
    return (residual.load("compiled") is not None and pe <= residual.COMPILED_MAX_DIM
            and largest <= residual.COMPILED_MAX_SIZE and layer.C >= residual.COMPILED_MIN_K)


@dataclass
class LayerBlocks:
    """A layer's candidate blocks on one array size with their hardware-free bounds."""
    blocks: torch.Tensor        # [B, 3] BLOCK_M, BLOCK_N, BLOCK_K
    sp_kb: torch.Tensor         # [B] scratchpad need (single-buffered)
    acc_kb: torch.Tensor        # [B] accumulator need
    cycles_lb: torch.Tensor     # [B] the fastest schedule variant, whatever fits (count-weighted)
    energy_lb: torch.Tensor     # [B] the least energy, buffers priced at the block's own needs
    variants: torch.Tensor      # [len(SCHEDULE_VARIANTS), B] cycles of each explicit schedule variant (one instance)
    loop: torch.Tensor          # [B] cycles of the LOOP_WS program, where the blocks fit its halves
    sp_rows: torch.Tensor       # [B] scratchpad rows, single-buffered
    acc_rows: torch.Tensor      # [B] accumulator rows
    loop_counts: torch.Tensor   # [len(COUNT_KEYS), B] what the LOOP_WS program moves and computes


def loop_ws_bound(layer: Layer, blocks: torch.Tensor, pe: int) -> torch.Tensor:
    """[B] a lower bound of the LOOP_WS program's end-to-end cycles (kernel_model.loop_ws_walk) in
    blocks [B, 3], without the walk (as loop_ws_timing.loop_ws_lower_bound, batched): the array's
    computes back to back (each program's DIM column and K strips, each at least the program's rows
    and at least DIM cycles), the one DMA
    loader's beats (LdA and LdB of every program's K steps, but a B left resident down a column and
    an A along a one-row grid by programs of one K step: schedule._loop_ws_columns, resident_a; a
    row at least its whole beats), or the CPU's instructions (each program's own and each K step's
    LOOP_WS, LOOP_WS_INSTRUCTIONS), the longest."""
    b = blocks.to(torch.float64)
    return _loop_bound(layer, pe, b[:, 0], b[:, 1], b[:, 2])


def candidate_grid(layer: Layer, pe: int) -> list[torch.Tensor]:
    """The layer's block_candidates of BLOCK_M, BLOCK_N and BLOCK_K on a pe-wide array (int64)."""
    return [torch.tensor(block_candidates(n, role, pe)) for n, role in ((layer.P, "M"), (layer.K, "N"), (layer.C, "K"))]


def layer_blocks(layer: Layer, pe: int, walk: bool = True, blocks: torch.Tensor | None = None,
                 check=lambda: None) -> LayerBlocks:
    """A layer's candidate blocks on a pe-wide array (`blocks` [B, 3], default every one of
    candidate_grid), costed; without `walk` their LOOP_WS cycles and counts are loop_ws_bound's and
    loop_counts_bound's (walk_loop_ws walks the ones that survive the pruning). `check` is called
    before each CHUNK of blocks (_Search.check: the time limit)."""
    if blocks is None:
        grids = torch.meshgrid(*candidate_grid(layer, pe), indexing="ij")
        blocks = torch.stack([g.reshape(-1) for g in grids], 1)
    every = blocks
    parts = []
    for lo in range(0, every.shape[0], CHUNK):
        check()
        blocks = every[lo:lo + CHUNK]
        temporal, spatial = block_tensors(layer, blocks)
        need = requirements_from_factors(layer, temporal, spatial, float(pe))
        hw = (torch.full_like(need["sp_kb"], float(pe)), need["sp_kb"], need["acc_kb"])
        sp_rows, acc_rows = gemm_rows_from_factors(layer, temporal, spatial, float(pe))
        if walk:
            variants, loop = kernel_model.kernel_programs(layer, temporal, spatial, hw)
            loop_counts = _walked_counts(layer, temporal, spatial, hw[0])
        else:
            variants = kernel_model.kernel_programs(layer, temporal, spatial, hw, loop=False)
            loop, loop_counts = loop_ws_bound(layer, blocks, pe), loop_counts_bound(layer, blocks, pe)
        k = LayerBlocks(blocks, need["sp_kb"], need["acc_kb"], _fastest(layer, variants, loop), None, variants, loop,
                        sp_rows, acc_rows, loop_counts)
        parts.append(replace(k, energy_lb=_least_energy(layer, k, pe)))
    return _concat(parts)


def _concat(parts: list[LayerBlocks]) -> LayerBlocks:
    return LayerBlocks(*(torch.cat([getattr(k, f.name) for k in parts], 0 if f.name == "blocks" else -1)
                         for f in fields(LayerBlocks)))


def walk_loop_ws(layer: Layer, k: LayerBlocks, pe: int) -> LayerBlocks:
    """k with its LOOP_WS cycles and counts walked (layer_blocks(walk=True)'s) in place of
    loop_ws_bound's and loop_counts_bound's, and its least energy with them."""
    if k.blocks.shape[0] == 0:
        return k
    temporal, spatial = block_tensors(layer, k.blocks)
    hw = (torch.full_like(k.sp_kb, float(pe)), k.sp_kb, k.acc_kb)
    loop = kernel_model.kernel_programs(layer, temporal, spatial, hw)[1]
    walked = replace(k, cycles_lb=_fastest(layer, k.variants, loop), loop=loop,
                     loop_counts=_walked_counts(layer, temporal, spatial, hw[0]))
    return replace(walked, energy_lb=_least_energy(layer, walked, pe))


def _walked_counts(layer: Layer, temporal, spatial, pe) -> torch.Tensor:
    """[len(COUNT_KEYS), B] kernel_model.loop_ws_count_rows of the blocks' LOOP_WS programs."""
    dims, blocks = costmodel._gemm_blocks(layer, temporal, (spatial[:, 0], spatial[:, 1]))
    counts = kernel_model.loop_ws_count_rows(dims, blocks, pe, costmodel._bias(layer), b_padded=KERNEL_B_PADDED)
    return torch.stack([counts[key] for key in COUNT_KEYS])


def loop_counts_bound(layer: Layer, blocks: torch.Tensor, pe: int) -> torch.Tensor:
    """[len(COUNT_KEYS), B] a lower bound of what the LOOP_WS programs in blocks [B, 3] move and
    compute (kernel_model.loop_ws_counts), without the walk: the explicit WS program's MACs, preloads,
    scratchpad reads and stores (the same computes and C); the accumulator written once a compute's
    DIM-deep K strip (no zero fill: the first K strip overwrites; the bias's D once a block) and
    read as often, and once more to store; the operands' elements moved as often as _loop_moves
    says, each into the scratchpad, the bias's int32 from DRAM."""
    b = blocks.to(torch.float64)
    M, N, K, *_ = _block_counts(layer, b[:, 0], b[:, 1], b[:, 2])
    ws = dataflow_counts(layer, blocks, pe)["WS"]
    a_times, b_times = _loop_moves(layer, b[:, 0], b[:, 1], b[:, 2])
    moved = a_times * M * K + b_times * K * N
    bias = M * N if layer.bias else 0.0
    updates = M * N * _strips(K, b[:, 2], pe)
    bound = {**ws, "accumulator_writes": updates + bias, "accumulator_reads": updates + M * N,
             "scratchpad_writes": moved, "dram_bytes_in": moved + bias * GemminiConfig().acc_bytes}
    return torch.stack([torch.as_tensor(bound[key], dtype=torch.float64).expand(b.shape[0]) for key in COUNT_KEYS])


def _least_energy(layer: Layer, k: LayerBlocks, pe: int) -> torch.Tensor:
    """[B] LayerBlocks.energy_lb: the least of the blocks' programs' energies µJ (WS, OS, and LOOP_WS
    where the blocks fit its halves of the largest memories), count-weighted, priced at their own
    needs (no buffer they fit costs less an access)."""
    e = _priced(energy_parts(layer, k, pe), energy.scratchpad_pj(k.sp_kb), energy.accumulator_pj(k.acc_kb, pe))
    return torch.minimum(e[:2].min(0).values, torch.where(_may_loop(k, pe), e[2], math.inf)) * 1e-6


def _may_loop(k: LayerBlocks, pe: int) -> torch.Tensor:
    """[B] whether the blocks fit LOOP_WS's halves of some memories the enumeration costs (the largest)."""
    big = torch.tensor(float(MAX_BUFFER_KB), dtype=torch.float64)
    return kernel_model.loop_ws_fit(k.sp_rows, k.acc_rows, pe, big, big)


DOMINATOR_PICKS = 48     # blocks a ranking contributes to a round's dominators (undominated)
DOMINANCE_ROUNDS = 2


def _subset(k: LayerBlocks, at: torch.Tensor) -> LayerBlocks:
    return LayerBlocks(k.blocks[at], k.sp_kb[at], k.acc_kb[at], k.cycles_lb[at], k.energy_lb[at], k.variants[:, at],
                       k.loop[at], k.sp_rows[at], k.acc_rows[at], k.loop_counts[:, at])


def _no_blocks() -> LayerBlocks:
    return LayerBlocks(*(torch.zeros(0),) * len(fields(LayerBlocks)))


def dataflow_counts(layer: Layer, blocks: torch.Tensor, pe: int) -> dict:
    """{"WS": counts, "OS": counts}: costmodel.compiled_program_counts of the GEMM kernel's explicit
    programs in blocks [B, 3] on a pe-wide array, under each dataflow (hardware-free but for the array)."""
    temporal, spatial = block_tensors(layer, blocks)
    return {df: costmodel.compiled_program_counts(layer, temporal, (spatial[:, 0], spatial[:, 1]), (float(pe),),
                                                  out_int8=KERNEL_OUT_INT8, dataflow=df) for df in ("WS", "OS")}


PROGRAM_FORMS = ("WS", "OS", "LOOP")     # the programs a block may run: explicit WS or OS, or LOOP_WS


def program_counts(layer: Layer, k: LayerBlocks, pe: int) -> dict:
    """{form: counts} of PROGRAM_FORMS: the blocks' dataflow_counts and their LOOP_WS programs'
    (k.loop_counts: walked or loop_counts_bound's)."""
    return {**dataflow_counts(layer, k.blocks, pe), "LOOP": dict(zip(COUNT_KEYS, k.loop_counts))}


MEMORY_ACCESSES = ("scratchpad_reads", "scratchpad_writes", "accumulator_reads", "accumulator_writes")


def energy_parts(layer: Layer, k: LayerBlocks, pe: int) -> torch.Tensor:
    """[len(PROGRAM_FORMS), B, 3] per program form the blocks' energy (pJ, count-weighted) as a
    linear function of the memories' per-access energies: the part no buffer size changes
    (energy_pj of the counts without the memory accesses), the scratchpad accesses and the
    accumulator accesses (_priced prices them)."""
    parts = []
    for c in program_counts(layer, k, pe).values():
        fixed = energy.energy_pj({**c, **dict.fromkeys(MEMORY_ACCESSES, 0)}, sp_kb=0, acc_kb=0, dim=pe)
        parts.append(torch.stack([torch.as_tensor(v, dtype=torch.float64).expand(k.blocks.shape[0]) for v in (
            fixed, c["scratchpad_reads"] + c["scratchpad_writes"], c["accumulator_reads"] + c["accumulator_writes"])],
            1) * layer.count)
    return torch.stack(parts)


def _priced(parts: torch.Tensor, sp_pj, acc_pj) -> torch.Tensor:
    """energy_parts' energies (pJ) at these per-access energies (broadcasting over parts' leading dims)."""
    return parts[..., 0] + parts[..., 1] * sp_pj + parts[..., 2] * acc_pj


def undominated(layer: Layer, k: LayerBlocks, pe: int) -> LayerBlocks:
    """k without the blocks another kept block dominates on every memory size the enumeration costs
    (its LOOP_WS not yet walked, k.loop loop_ws_bound's): Y dominates X when Y needs no more
    scratchpad and accumulator (it fits wherever X does), Y's cycles on any memories it fits (at most
    its single-buffered OS program or its WS one, the walked LOOP_WS where it may run one: fastest_fitting
    takes the fastest that fits) are at most X's least (cycles_lb), and Y's energy under any program
    form it may run (PROGRAM_FORMS: LOOP_WS where its blocks fit the largest memories' halves) is at
    most X's under any it may run (X's LOOP_WS counts loop_counts_bound's), for every per-access
    scratchpad and accumulator energy from X's own needs' to the largest buffers' (energy is linear
    in them: the four corners). The dominators are a few blocks per round, ranked by cycles, energy
    and both, walked; they are kept."""
    n = k.blocks.shape[0]
    parts = energy_parts(layer, k, pe)
    big = torch.tensor(float(MAX_BUFFER_KB), dtype=torch.float64)
    sp_pj = (energy.scratchpad_pj(k.sp_kb), energy.scratchpad_pj(big).expand(n))
    acc_pj = (energy.accumulator_pj(k.acc_kb, pe), energy.accumulator_pj(big, pe).expand(n))
    corners = [(s, a) for s in sp_pj for a in acc_pj]
    may_loop = _may_loop(k, pe)
    cannot = torch.stack([torch.zeros_like(may_loop), torch.zeros_like(may_loop), ~may_loop])   # [forms, n]
    single = torch.minimum(k.variants[0], k.variants[2]) * layer.count      # single-buffered WS, OS
    alive, walked = torch.ones(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool)
    upper = torch.full((n,), math.inf, dtype=torch.float64)
    for _ in range(DOMINANCE_ROUNDS):
        idx = alive.nonzero().squeeze(1)
        least_energy = _priced(parts[0, idx], sp_pj[0][idx], acc_pj[0][idx])
        rankings = [torch.log(single[idx]) + w * torch.log(least_energy) for w in (0.0, 0.3, 1.0, 3.0)]
        rankings += [least_energy, k.cycles_lb[idx]]
        picks = torch.cat([idx[torch.argsort(r, stable=True)[:DOMINATOR_PICKS]] for r in rankings]).unique()
        picks = picks[~walked[picks]]
        if picks.numel():
            walked_picks = walk_loop_ws(layer, _subset(k, picks), pe)
            parts[:, picks] = energy_parts(layer, walked_picks, pe)
            loop = walked_picks.loop * layer.count
            v = k.variants[:, picks] * layer.count
            upper[picks] = torch.where(may_loop[picks], torch.minimum(v[2], torch.maximum(v[0], loop)),
                                       torch.minimum(v[0], v[2]))
            walked[picks] = True
        dom = (walked & alive).nonzero().squeeze(1)
        for lo in range(0, n, 4096):
            x = torch.arange(lo, min(lo + 4096, n))
            x = x[alive[x] & ~walked[x]]
            if not x.numel():
                continue
            beats = (upper[dom][None, :] <= k.cycles_lb[x, None]) & \
                (k.sp_kb[dom][None, :] <= k.sp_kb[x, None]) & (k.acc_kb[dom][None, :] <= k.acc_kb[x, None])
            for s, a in corners:
                s_x, a_x = s[x], a[x]
                least = torch.where(cannot[:, x], math.inf, _priced(parts[:, x], s_x, a_x)).min(0).values
                most = torch.where(cannot[:, None, dom], -math.inf,
                                   _priced(parts[:, None, dom], s_x[None, :, None], a_x[None, :, None])).max(0).values
                beats &= most <= least[:, None]
            alive[x[beats.any(1)]] = False
    return _subset(k, alive.nonzero().squeeze(1))


def _fastest(layer: Layer, variants: torch.Tensor, loop: torch.Tensor) -> torch.Tensor:
    """[B] the layer's cycles (all its instances) under the fastest schedule variant or LOOP_WS, whatever
    fits: LayerBlocks.cycles_lb."""
    return torch.minimum(variants.min(0).values, loop) * layer.count


def lower_hull(cycles: torch.Tensor, energy_uj: torch.Tensor) -> list[int]:
    """Indices of the vertices of the lower-left convex hull of the points, by increasing cycles."""
    by_energy = torch.argsort(energy_uj, stable=True)
    order = by_energy[torch.argsort(cycles[by_energy], stable=True)]       # by cycles, then energy
    e = energy_uj[order]
    before = torch.cat([torch.tensor([math.inf], dtype=e.dtype), torch.cummin(e, 0).values[:-1]])
    pareto = order[e < before].tolist()                                    # each lowers the energy
    c_all, e_all = cycles.tolist(), energy_uj.tolist()
    hull = []
    for i in pareto:
        while len(hull) >= 2:
            (c1, e1), (c2, e2) = ((c_all[j], e_all[j]) for j in hull[-2:])
            if (c2 - c1) * (e_all[i] - e1) - (e2 - e1) * (c_all[i] - c1) <= 0:   # hull[-1] is not below the chord
                hull.pop()
            else:
                break
        hull.append(i)
    return hull


def best_combination(fronts: list[tuple[list[float], list[float]]]) -> tuple[float, list[int]]:
    """min over one point per layer of (Σ cycles)(Σ energy), each layer's points its lower hull
    (cycles increasing, energy decreasing): the minimum is a sum of per-layer minimisers of
    cycles + λ·energy, so start every layer at its least energy and take the hull edges in the
    order λ decreases (the least energy added per cycle saved first). (product, index per layer)."""
    at = [len(c) - 1 for c, _ in fronts]
    C = sum(c[k] for (c, _), k in zip(fronts, at))
    E = sum(e[k] for (_, e), k in zip(fronts, at))
    best, best_at = C * E, list(at)
    edges = sorted(((e[k - 1] - e[k]) / (c[k] - c[k - 1]), i, k - 1)
                   for i, (c, e) in enumerate(fronts) for k in range(len(c) - 1, 0, -1))
    for _, i, k in edges:
        c, e = fronts[i]
        C += c[k] - c[at[i]]
        E += e[k] - e[at[i]]
        at[i] = k
        if C * E < best:
            best, best_at = C * E, list(at)
    return best, best_at


@dataclass
class Optimum:
    """The best design of the space (result: scored on its own inferred hardware, validated),
    the enumeration's lower bound (= result.edp when `exact`) and what it took."""
    result: Result
    lower_bound: float
    exact: bool
    wall_s: float
    arrays_pruned: list[int] = field(default_factory=list)
    blocks_costed: int = 0
    hardware_points: int = 0
    blocks_walked: int = 0      # blocks whose LOOP_WS program was walked (the rest pruned on loop_ws_bound)
    blocks_bounded: int = 0     # candidate blocks bounded (block_bound) before any was costed


@dataclass
class _Search:
    """What the branch and bound took so far (Optimum's counts), and when it must stop."""
    arrays_pruned: list[int] = field(default_factory=list)
    blocks_costed: int = 0
    hardware_points: int = 0
    blocks_walked: int = 0
    blocks_bounded: int = 0
    deadline: float = math.inf      # time.perf_counter() past which check() raises OptimumTimeout
    time_limit: float = math.inf

    def check(self):
        if time.perf_counter() > self.deadline:
            raise OptimumTimeout(self)


class OptimumTimeout(TimeoutError):
    """exact_optimum did not finish within its time limit (`search`: what it had done)."""

    def __init__(self, search: _Search):
        super().__init__(f"the exhaustive optimum did not finish within {search.time_limit:g} s "
                         f"({search.blocks_bounded} blocks bounded, {search.blocks_costed} costed, "
                         f"{search.blocks_walked} walked, {search.hardware_points} hardware points)")
        self.search = search


def anchored_tiling(layer: Layer, block: tuple[int, int, int], pe: int) -> Tiling:
    """A validated mapping with this L2 tile whose spatial factors are as large as pe allows (a
    factor s of BLOCK_K on the rows, of BLOCK_N on the columns, or any s when the block is the whole
    dimension): the design's array is then its largest spatial factor rounded up, pe."""
    bm, bn, bk = block

    def spread(b, n):
        return max(s for s in range(1, min(pe, n) + 1) if b % s == 0 or b == n)
    sc, sk = spread(bk, layer.C), spread(bn, layer.K)
    temporal = [[1] * len(DIMS) for _ in range(NUM_LEVELS)]
    for d, b, s, n in (("P", bm, 1, layer.P), ("K", bn, sk, layer.K), ("C", bk, sc, layer.C)):
        inner = -(-b // s)
        temporal[2][DIM_INDEX[d]] = inner
        temporal[3][DIM_INDEX[d]] = -(-n // (s * inner))
    return Tiling(tuple(map(tuple, temporal)), sc, sk)


def exact_optimum(layers: list[Layer], incumbent_edp: float, progress: bool = False,
                  time_limit: float | None = None) -> Optimum:
    """The optimum network EDP of the co-exploration space (compiled cycle model), by branch and bound
    below incumbent_edp (the EDP of a known design, e.g. baco's: the optimum is at most it).
    Raises ValueError for layers that are not GEMMs (mapping.is_kernel_layer), OptimumTimeout
    past `time_limit` seconds (checked after each layer's bounds, before each CHUNK costed and
    WALK_CHUNK walked blocks and each hardware point). Runs torch on one thread (its batched ops
    here are small; the caller's setting is restored)."""
    if not all(is_kernel_layer(layer) for layer in layers):
        raise ValueError("the exhaustive optimum covers networks of GEMM layers only")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _branch_and_bound(layers, incumbent_edp, progress, math.inf if time_limit is None else time_limit)
    finally:
        torch.set_num_threads(threads)


def _array_bound(layers: list[Layer], pe: int) -> float:
    """The EDP no design on a pe-wide array goes below (compute_bound of every layer; a layer whose
    cycles the learned residual corrects counts its energy only)."""
    bounds = [compute_bound(layer, pe) for layer in layers]
    return sum(c * l.count for (c, _), l in zip(bounds, layers) if not residual_applies(l, pe)) \
        * sum(e * l.count for (_, e), l in zip(bounds, layers))


def _branch_and_bound(layers: list[Layer], incumbent_edp: float, progress: bool, time_limit: float) -> Optimum:
    """exact_optimum's search: the array sizes by their bound, least first (on a tie the larger), each
    design found lowering the limit the later ones are pruned against (a design within it is kept:
    REL_TOL)."""
    t0 = time.perf_counter()
    limit = incumbent_edp * (1 + REL_TOL)
    best_edp, best = math.inf, None
    stats = _Search(deadline=t0 + time_limit, time_limit=time_limit)
    for pe in sorted(array_dims(), key=lambda pe: (_array_bound(layers, pe), -pe)):
        limit = min(limit, best_edp * (1 + REL_TOL))
        if _array_bound(layers, pe) > limit:
            stats.arrays_pruned.append(pe)
            continue
        if any(residual_applies(layer, pe) for layer in layers):
            raise ValueError(f"on a {pe}x{pe} array the learned residual corrects some layers' cycles: "
                             "no exact bound; give a better incumbent")
        kept, acc_needs = _array_candidates(layers, pe, limit, stats)
        if progress:
            print(f"{pe}x{pe}: blocks within the bound per layer {[k.blocks.shape[0] for k in kept]} "
                  f"({stats.blocks_bounded} bounded, {stats.blocks_costed} costed, {stats.blocks_walked} walked, "
                  f"{time.perf_counter() - t0:.0f} s)", flush=True)
        if any(k.blocks.shape[0] == 0 for k in kept):
            stats.arrays_pruned.append(pe)
            continue
        for sp, acc, fronts in _hardware_fronts(layers, kept, pe, acc_needs):
            stats.check()
            stats.hardware_points += 1
            edp, at = best_combination([f for f, _ in fronts])
            if edp < best_edp:
                best_edp, best = edp, (pe, [p[k] for (_, p), k in zip(fronts, at)])
            if progress:
                print(f"  {pe}x{pe} {sp} KB {acc} KB: {edp:.5g} (best {best_edp:.5g}), "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
    if best is None:
        raise ValueError(f"no design below the incumbent EDP {incumbent_edp:.6g}: give a valid design's EDP")
    pe, blocks = best
    problem = NetworkProblem(layers)
    design = [anchored_tiling(layer, b, pe) for layer, b in zip(layers, blocks)]
    result = problem.result(design, "optimum", time.perf_counter() - t0)
    exact = abs(result.edp - best_edp) <= 1e-9 * best_edp
    return Optimum(result, best_edp, exact, time.perf_counter() - t0, stats.arrays_pruned, stats.blocks_costed,
                   stats.hardware_points, stats.blocks_walked, stats.blocks_bounded)


def _hardware_fronts(layers: list[Layer], kept: list[LayerBlocks], pe: int, acc_needs: list[torch.Tensor]):
    """(scratchpad KB, accumulator KB, _fronts) of each memory size on a pe-wide array at which every
    layer has a kept block that fits: every scratchpad size from the largest of the layers' least
    needs, every accumulator size that is a need in `acc_needs` (the blocks' before the dominated
    were dropped: a dominated block's design is then costed with its dominator on the same
    memories) rounded to the granule (at least every layer's least)."""
    low_acc = max(float(k.acc_kb.min()) for k in kept)
    low_sp = max(float(k.sp_kb.min()) for k in kept)
    acc_sizes = sorted({acc for needs in acc_needs for need in needs.tolist()
                        for acc in itertools.islice(acc_candidates(pe, need), 1) if acc >= low_acc - 1e-9})
    # per layer: the kept blocks' programs' access counts of each form (hardware-free but for the
    # array): energy on any buffers is these counts priced
    counts = [program_counts(layer, k, pe) for layer, k in zip(layers, kept)]
    for sp in sp_candidates(pe, low_sp) if acc_sizes else ():
        for acc in acc_sizes:
            fronts = _fronts(layers, kept, _chosen_schedules(layers, kept, counts, pe, sp, acc), pe, sp, acc)
            if fronts is not None:
                yield sp, acc, fronts


def _array_candidates(layers: list[Layer], pe: int, limit: float, stats: _Search) -> tuple[list[LayerBlocks], list]:
    """(each layer's blocks on a pe-wide array that may be in a design within `limit`, costed (their
    LOOP_WS programs walked), and the accumulator needs of the blocks before the dominated ones were
    dropped, which set the accumulator sizes costed): every candidate pruned on block_bound
    (bounded_blocks), the survivors costed layer by layer, the layer of the largest least cycles
    first, each pruned again against the others' least costs (the costed layers' own); then all
    pruned on their costs with LOOP_WS at loop_ws_bound, the dominated dropped (undominated), the
    rest walked and pruned again (_within_bound)."""
    survivors, c_min, e_min = bounded_blocks(layers, pe, limit, stats)
    if any(s.shape[0] == 0 for s in survivors):
        return [_no_blocks() for _ in layers], []
    cands = [None] * len(layers)
    for i in sorted(range(len(layers)), key=lambda i: -c_min[i]):
        stats.check()
        b = survivors[i].to(torch.float64)
        c, e = block_bound(layers[i], pe, b[:, 0], b[:, 1], b[:, 2])
        keep = (c * layers[i].count + sum(c_min) - c_min[i]) * (e * layers[i].count + sum(e_min) - e_min[i]) <= limit
        if not bool(keep.any()):
            return [_no_blocks() for _ in layers], []
        cands[i] = layer_blocks(layers[i], pe, walk=False, blocks=survivors[i][keep], check=stats.check)
        c_min[i], e_min[i] = float(cands[i].cycles_lb.min()), float(cands[i].energy_lb.min())
        stats.blocks_costed += cands[i].blocks.shape[0]
    kept = _within_bound(cands, limit)
    acc_needs = [k.acc_kb for k in kept]
    if all(k.blocks.shape[0] for k in kept):
        kept = [undominated(layer, k, pe) for layer, k in zip(layers, kept)]
    if all(k.blocks.shape[0] for k in kept):
        kept = _within_bound([_walk_checked(layer, k, pe, stats) for layer, k in zip(layers, kept)], limit)
    return kept, acc_needs


def _walk_checked(layer: Layer, k: LayerBlocks, pe: int, stats: _Search) -> LayerBlocks:
    """walk_loop_ws of k, WALK_CHUNK blocks at a time, checking the time limit between them."""
    parts = []
    for lo in range(0, k.blocks.shape[0], WALK_CHUNK):
        stats.check()
        parts.append(walk_loop_ws(layer, _subset(k, torch.arange(lo, min(lo + WALK_CHUNK, k.blocks.shape[0]))), pe))
        stats.blocks_walked += parts[-1].blocks.shape[0]
    return _concat(parts) if parts else k


def bounded_blocks(layers: list[Layer], pe: int, limit: float, stats: _Search | None = None):
    """(blocks [B_i, 3] per layer, least cycles per layer, least energy per layer): of every candidate
    block of each layer on a pe-wide array (candidate_grid), those whose block_bound, with every
    other layer at its least block_bound, is within `limit`; the leasts are over every candidate
    (all count-weighted). Two passes over the grids, a slab of BLOCK_M values at a time."""
    c_min, e_min = [], []
    for layer in layers:
        least = [math.inf, math.inf]
        for _, c, e in _bound_slabs(layer, pe):
            least = [min(least[0], float(c.min())), min(least[1], float(e.min()))]
        c_min.append(least[0])
        e_min.append(least[1])
    survivors = []
    for i, layer in enumerate(layers):
        cm, cn, ck = candidate_grid(layer, pe)
        c_other, e_other, kept = sum(c_min) - c_min[i], sum(e_min) - e_min[i], []
        for lo, c, e in _bound_slabs(layer, pe):
            at = ((c + c_other) * (e + e_other) <= limit).nonzero()
            kept.append(torch.stack([cm[lo + at[:, 0]], cn[at[:, 1]], ck[at[:, 2]]], 1))
        survivors.append(torch.cat(kept))
        if stats is not None:
            stats.blocks_bounded += len(cm) * len(cn) * len(ck)
            stats.check()
    return survivors, c_min, e_min


def _bound_slabs(layer: Layer, pe: int):
    """(first BLOCK_M index, cycles, energy) [m, n, k] of block_bound (count-weighted) over slabs of
    the layer's candidate grid, about 2^20 blocks each."""
    cm, cn, ck = (g.to(torch.float64) for g in candidate_grid(layer, pe))
    step = max(1, (1 << 20) // (len(cn) * len(ck)))
    for lo in range(0, len(cm), step):
        c, e = block_bound(layer, pe, cm[lo:lo + step, None, None], cn[None, :, None], ck[None, None, :])
        yield lo, c * layer.count, (e * layer.count).expand_as(c)


def _within_bound(cands: list[LayerBlocks], limit: float) -> list[LayerBlocks]:
    """Each layer's blocks whose EDP lower bound, with every other layer at its least cycles and
    energy, is within `limit`."""
    c_min = [float(c.cycles_lb.min()) for c in cands]
    e_min = [float(c.energy_lb.min()) for c in cands]
    kept = []
    for i, c in enumerate(cands):
        lb = (c.cycles_lb + sum(c_min) - c_min[i]) * (c.energy_lb + sum(e_min) - e_min[i])
        kept.append(_subset(c, lb <= limit))
    return kept


def _chosen_schedules(layers, kept, counts, pe: int, sp, acc) -> list:
    """Per layer, (cycles × count, access counts) of each kept block on these memories: the schedule
    variant it runs (kernel_model.kernel_cycles: double buffering where it fits, LOOP_WS where the
    blocks fit its halves, kernel_model.runs_loop_ws) and the counts of that program (`counts`,
    program_counts')."""
    chosen = []
    pe_t, sp_t, acc_t = (torch.tensor(float(v)) for v in (pe, sp, acc))
    for layer, k, cnt in zip(layers, kept, counts):
        cycles, choice = kernel_model.fastest_fitting(k.variants, k.sp_rows, pe_t, sp_t, loop=k.loop,
                                                      acc_rows=k.acc_rows, acc_kb=acc_t)
        os_rows = torch.tensor([kernel_model.SCHEDULE_VARIANTS[int(i)][0] == "OS" for i in choice.tolist()])
        loop_rows = kernel_model.runs_loop_ws(choice, k.sp_rows, k.acc_rows, pe_t, sp_t, acc_t)
        chosen.append((cycles * layer.count, {key: torch.where(loop_rows, cnt["LOOP"][key], torch.where(
            os_rows, cnt["OS"][key], cnt["WS"][key])) for key in cnt["WS"]}))
    return chosen


def _fronts(layers, kept, chosen, pe: int, sp, acc):
    """Per layer, ((cycles, energy) of the lower hull of its blocks that fit these buffers, those
    blocks); None if a layer has none that fits."""
    fronts = []
    for layer, k, (cycles, cnt) in zip(layers, kept, chosen):
        fit = (k.sp_kb <= sp + 1e-9) & (k.acc_kb <= acc + 1e-9)
        if not bool(fit.any()):
            return None
        c = cycles[fit]
        e = energy.energy_pj({key: v[fit] for key, v in cnt.items()}, sp_kb=float(sp), acc_kb=float(acc),
                             dim=float(pe)) * 1e-6 * layer.count
        hull = lower_hull(c, e)
        blocks = k.blocks[fit]
        fronts.append((([float(c[j]) for j in hull], [float(e[j]) for j in hull]),
                       [tuple(int(v) for v in blocks[j]) for j in hull]))
    return fronts
