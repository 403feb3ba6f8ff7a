"""Hardware inference: the smallest Gemmini that runs a set of mappings.

A mapping needs an array at least as wide as its spatial factors and the
scratchpad and accumulator rows the compiler places for the kernel schedule of
its on-chip tile (GEMM or convolution: baco.gemmini.schedule's one capacity rule),
or, for designs costed by the Timeloop-matched model, the buffers Timeloop's
semantics fill (mapping.CAPACITY_RULES).
For a network, one hardware serves every layer, so each resource is the max
over layers.  During gradient descent the max is smooth (log-sum-exp) so every
layer near the maximum gets a gradient; the result is then rounded up to
values a Gemmini generator accepts (power-of-two array dim, whole-KB
buffers with legal bank depths), checked by GemminiConfig.validate().
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from baco.gemmini.config import GemminiConfig, rows_to_kb
from baco.problem.dims import DIMS, NUM_LEVELS
from baco.tuner import costmodel
from baco.tuner.arch import MAX_BUFFER_KB, MAX_PE_DIM, MIN_PE_DIM, Hardware
from baco.tuner.mapping import Mapping, check_capacity_rule


def smooth_max(x: torch.Tensor, dim: int = 0, sharpness: float = 20.0) -> torch.Tensor:
    """A differentiable upper bound of max(x) over dim, tight within log(n)/sharpness in log space.

    Works on positive quantities in log space, so the relative tightness is the same for 2 KB and 2 MB.
    """
    logs = torch.log(x.clamp_min(1e-12))
    return torch.exp(torch.logsumexp(sharpness * logs, dim=dim) / sharpness)


def round_pe_dim(needed: float) -> int:
    """Smallest power-of-two array dimension >= needed, within [MIN_PE_DIM, MAX_PE_DIM]."""
    if needed > MAX_PE_DIM:
        raise ValueError(f"a spatial factor of {needed} exceeds the largest array ({MAX_PE_DIM})")
    dim = MIN_PE_DIM
    while dim < needed:
        dim *= 2
    return dim


@lru_cache(maxsize=None)
def is_legal(pe_dim: int, sp_kb: int, acc_kb: int) -> bool:
    """Whether a Gemmini generator accepts this size (GemminiConfig.validate is the judge)."""
    try:
        cfg = GemminiConfig.from_capacity(pe_dim, sp_kb, acc_kb).validate()
    except ValueError:
        return False
    return cfg.sp_kb == sp_kb and cfg.acc_kb == acc_kb  # from_capacity truncates to whole rows


def sp_candidates(pe_dim: int, needed: float):
    """Whole-KB scratchpad sizes >= needed in increasing order: bank depth must be a power of two."""
    kb = 1
    while kb < needed - 1e-9:
        kb *= 2
    while kb <= MAX_BUFFER_KB:
        yield kb
        kb *= 2


def acc_unit_kb(pe_dim: int) -> int:
    """Accumulator KB granule: 2 banks of 32-bit DIM-wide rows, each bank depth a multiple of DIM."""
    return max(1, (2 * 32 * pe_dim * pe_dim) // 8192)


def acc_candidates(pe_dim: int, needed: float):
    """Whole-KB accumulator sizes >= needed in increasing order."""
    unit = acc_unit_kb(pe_dim)
    kb = max(unit, math.ceil(needed / unit - 1e-9) * unit)
    while kb <= MAX_BUFFER_KB:
        yield kb
        kb += unit


def round_hardware(pe_dim: float, sp_kb: float, acc_kb: float, ext_spad: bool = False) -> Hardware:
    """The smallest legal Gemmini with at least these resources (validated by GemminiConfig); ext_spad:
    the version it is (Hardware.ext_spad: Gemmini master's ext-spad commands), not a resource."""
    dim = round_pe_dim(pe_dim)
    for sp in itertools.islice(sp_candidates(dim, sp_kb), 8):
        for acc in itertools.islice(acc_candidates(dim, acc_kb), 64):
            if is_legal(dim, sp, acc):
                return Hardware(pe_dim=dim, sp_kb=sp, acc_kb=acc, ext_spad=ext_spad)
    raise ValueError(f"no legal Gemmini with array dim {dim}, >= {sp_kb:.1f} KB scratchpad "
                     f"and >= {acc_kb:.1f} KB accumulator")


@dataclass(frozen=True)
class Requirement:
    """What one mapping needs of the hardware (continuous, before rounding)."""
    pe_dim: float
    sp_kb: float
    acc_kb: float


def combine(requirements: list[Requirement]) -> Requirement:
    """One hardware for all: the max of each resource."""
    return Requirement(max(r.pe_dim for r in requirements), max(r.sp_kb for r in requirements),
                       max(r.acc_kb for r in requirements))


def infer_hardware(requirements: list[Requirement]) -> Hardware:
    r = combine(requirements)
    return round_hardware(r.pe_dim, r.sp_kb, r.acc_kb)


def _ceil_st(x: torch.Tensor) -> torch.Tensor:
    """ceil(x) forward, identity gradient."""
    return x + (torch.ceil(x.detach() - 1e-9) - x.detach())


def _block_rows(rows, cols, dim):
    """baco.gemmini.schedule.block_rows on tensors: ⌈cols/dim⌉ strips of ⌈rows/dim⌉·dim rows."""
    return _ceil_st(cols / dim) * _ceil_st(rows / dim) * dim


def gemm_rows_from_factors(layer, temporal: torch.Tensor, spatial: torch.Tensor,
                           dim) -> tuple[torch.Tensor, torch.Tensor]:
    """(scratchpad rows, accumulator rows) [B] of the GEMM (or convolution) kernel run with the L2 tile
    of B mappings of a layer, single-buffered, on a dim array: baco.gemmini.schedule.gemm_footprint on
    tensors (double buffering doubles the scratchpad rows). The blocks are the largest L2 tile
    (mapping.gemm_schedule / conv_schedule: clamped to the layer's dimensions; costmodel.kernel_blocks)."""
    return kernel_rows(costmodel.kernel_blocks(layer, costmodel._tiles(temporal, spatial[:, 0], spatial[:, 1], layer)[2]),
                       dim)


def kernel_rows(blocks, dim) -> tuple[torch.Tensor, torch.Tensor]:
    """(scratchpad rows, accumulator rows) [B] of single-buffered kernel blocks (rows x BLOCK_M,
    BLOCK_N, BLOCK_K) [B] on a dim array: baco.gemmini.schedule.gemm_footprint on tensors."""
    bm, bn, bk = blocks
    return _block_rows(bm, bk, dim) + _block_rows(bk, bn, dim), _block_rows(bm, bn, dim)


def timeloop_kb_from_factors(layer, temporal: torch.Tensor, spatial: torch.Tensor, dim
                             ) -> tuple[torch.Tensor, torch.Tensor]:
    """(scratchpad KB, accumulator KB) [B] B mappings need under Timeloop's buffer semantics on a dim
    array (mapping.timeloop_tile_words on tensors): the scratchpad holds the weight and input tiles of
    every loop at and below L2, each of the dim accumulators (one per array column, 32-bit words)
    the output tile of the loops at and below L1. Unclamped tiles: the padded problem's."""
    tiles = costmodel._tiles(temporal, spatial[:, 0], spatial[:, 1])
    sp_words = costmodel._size(tiles[2], "W", layer) + costmodel._size(tiles[2], "I", layer)
    return rows_to_kb(sp_words, 1, "int8"), rows_to_kb(costmodel._size(tiles[1], "O", layer), dim, "int32")


def requirements_from_factors(layer, temporal: torch.Tensor, spatial: torch.Tensor,
                              pe_dim: torch.Tensor | float | None = None,
                              rule: str = "compiled") -> dict[str, torch.Tensor]:
    """What each of B mappings needs ([B] tensors "pe", "sp_kb", "acc_kb"), differentiable in the factors.

    temporal [B, 4 levels, 7 dims] and spatial [B, 2] (C on array rows, K on columns). Buffers are
    counted for the array that will run them: pe_dim ([B] or a number; default each mapping's own
    spatial need). Under the capacity rule "compiled" (mapping.CAPACITY_RULES) every layer runs a
    kernel, so it needs what the compiler places for the kernel schedule of its L2 tile
    (baco.gemmini.schedule.gemm_footprint, single-buffered: A and B blocks in the scratchpad, the C
    block in the accumulator, each in whole DIM-wide rows; a convolution's tile of whole output rows
    holds them all, GemmSchedule.rows: mapping.conv_tile_schedule); under "timeloop", what Timeloop's
    buffers hold (timeloop_kb_from_factors). `layer` may be an explore.LayerStack.
    """
    pe = torch.maximum(spatial[:, 0], spatial[:, 1])
    dim = pe if pe_dim is None else torch.as_tensor(pe_dim, dtype=temporal.dtype)
    if check_capacity_rule(rule) == "timeloop":
        sp_kb, acc_kb = timeloop_kb_from_factors(layer, temporal, spatial, dim)
        return {"pe": pe, "sp_kb": sp_kb, "acc_kb": acc_kb}
    sp_rows, acc_rows = gemm_rows_from_factors(layer, temporal, spatial, dim)
    return {"pe": pe, "sp_kb": rows_to_kb(sp_rows, dim, "int8"), "acc_kb": rows_to_kb(acc_rows, dim, "int32")}


def mapping_requirement(layer, mapping: Mapping, pe_dim: int | None = None, rule: str = "compiled") -> Requirement:
    """What one mapping needs of the hardware (buffers for a pe_dim array, under `rule`)."""
    temporal = torch.tensor([[[float(mapping.temporal[l].get(d, 1)) for d in DIMS] for l in range(NUM_LEVELS)]],
                            dtype=torch.float64)
    spatial = torch.tensor([[float(mapping.spatial_C), float(mapping.spatial_K)]], dtype=torch.float64)
    need = requirements_from_factors(layer, temporal, spatial, pe_dim, rule)
    return Requirement(float(need["pe"][0]), float(need["sp_kb"][0]), float(need["acc_kb"][0]))


def minimal_hardware(layers, mappings: list[Mapping], rule: str = "compiled") -> Hardware:
    """The smallest legal Gemmini that runs every layer with its mapping under the capacity rule
    `rule`: the array first (the largest spatial factor), then the buffers for that array."""
    pe = round_pe_dim(max(max(m.spatial_C, m.spatial_K) for m in mappings))
    return infer_hardware([mapping_requirement(l, m, pe, rule) for l, m in zip(layers, mappings, strict=True)])


def round_hardware_tensor(pe_dim: torch.Tensor, sp_kb: torch.Tensor, acc_kb: torch.Tensor):
    """Straight-through legal rounding of continuous hardware tensors [B]: forward rounded, gradient identity."""
    rounded = [round_hardware(float(p), float(s), float(a))
               for p, s, a in zip(pe_dim.detach().reshape(-1).tolist(), sp_kb.detach().reshape(-1).tolist(),
                                  acc_kb.detach().reshape(-1).tolist())]
    def st(x, values):
        v = torch.tensor(values, dtype=x.dtype).reshape(x.shape)
        return x + (v - x).detach()
    return (st(pe_dim, [h.pe_dim for h in rounded]), st(sp_kb, [h.sp_kb for h in rounded]),
            st(acc_kb, [h.acc_kb for h in rounded]), rounded)
