"""Differentiable analytical cost model of a mapping on Gemmini (latency,
energy, EDP, area), after Timeloop's model of DOSA's Gemmini architecture.

One formula on torch float64 tensors serves both exact evaluation of integer
mappings and gradients through relaxed factors. Access counting:
- tile of level l = factors of levels ≤ l (spatial C from L1 up, K from L2 up);
- refills of a level's tile = product of the loops above it, except the
  innermost run of loops that do not index the tensor (they reuse the tile);
- DRAM: W and I fill the scratchpad tiles; O is written back from the
  accumulator tiles, and partial sums evicted early are read back (the first
  read of every output is elided);
- scratchpad: weights to the PE registers (per PE), inputs multicast across
  the K columns, plus the DRAM fills;
- accumulator: one update per C-reduced MAC (read + write, first read
  elided) plus the DRAM traffic of outputs;
- latency = max over compute (MACs / (C_spatial·K_spatial)) and the
  bandwidth of each level (accumulator 2·K_spatial, scratchpad 2·pe_dim,
  DRAM 8 words/cycle).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from baco.tuner import arch
from baco.tuner.mapping import NUM_LEVELS, Mapping
from baco.tuner.workloads import DIMS, Layer

DIM_INDEX = {d: i for i, d in enumerate(DIMS)}
RELEVANT = {"W": frozenset("RSCK"), "I": frozenset("NCPQRS"), "O": frozenset("NKPQ")}
C, K = DIM_INDEX["C"], DIM_INDEX["K"]


@dataclass
class Cost:
    cycles: float
    energy_uj: float
    edp: float
    area_mm2: float
    accesses: dict = field(default_factory=dict)


def _tiles(temporal, sC, sK):
    """[level] -> [B, 7] tile extents."""
    B = temporal.shape[0]
    spatial = torch.ones(B, 7, dtype=temporal.dtype)
    tiles, cum = [], torch.ones(B, 7, dtype=temporal.dtype)
    for level in range(NUM_LEVELS):
        cum = cum * temporal[:, level, :]
        if level == 1:
            spatial = spatial.index_copy(1, torch.tensor([C]), sC.reshape(B, 1).to(temporal.dtype))
        if level == 2:
            spatial = spatial.index_copy(1, torch.tensor([K]), sK.reshape(B, 1).to(temporal.dtype))
        tiles.append(cum * spatial)
    return tiles


def _size(t, tensor, layer: Layer):
    g = lambda d: t[:, DIM_INDEX[d]]  # noqa: E731
    if tensor == "W":
        return g("R") * g("S") * g("C") * g("K")
    if tensor == "O":
        return g("N") * g("K") * g("P") * g("Q")
    h = (g("P") - 1) * layer.Hstride + (g("R") - 1) * layer.Hdilation + 1
    w = (g("Q") - 1) * layer.Wstride + (g("S") - 1) * layer.Wdilation + 1
    return g("N") * g("C") * h * w


def _refills(temporal, order, level, tensor):
    """How often the level-`level` tile of `tensor` is (re)filled, [B]."""
    loops = [(l, DIM_INDEX[d]) for l in range(NUM_LEVELS - 1, level, -1) for d in order[l]]
    B = temporal.shape[0]
    result = torch.ones(B, dtype=temporal.dtype)
    # a loop counts if a relevant loop with factor > 1 is at or inside it
    inner_relevant = torch.zeros(B, dtype=torch.bool)
    counted = []
    for l, d in reversed(loops):
        f = temporal[:, l, d]
        if DIMS[d] in RELEVANT[tensor]:
            inner_relevant = inner_relevant | (f.detach() > 1.5)
        counted.append((f, inner_relevant.clone()))
    for f, mask in counted:
        result = result * torch.where(mask, f, torch.ones_like(f))
    return result


def capacity_from_factors(layer: Layer, temporal, sC, sK) -> dict:
    tiles = _tiles(temporal, sC, sK)
    sp = (_size(tiles[2], "W", layer) + _size(tiles[2], "I", layer)) / 1024
    acc = _size(tiles[1], "O", layer) * sK.to(temporal.dtype) * 4 / 1024
    return {"sp_kb": sp, "acc_kb": acc}


def cost_from_factors(layer: Layer, temporal, sC, sK, order, hw) -> dict:
    """Cycles, energy (µJ) and access counts of B mappings: temporal [B, 4, 7]
    (levels L0..L3, DIMS order), spatial C/K [B], order [level] -> dims (outer
    first), hw = (pe_dim, sp_kb, acc_kb) tensors [B] or scalars."""
    pe, sp_kb, acc_kb = (torch.as_tensor(x, dtype=temporal.dtype) for x in hw)
    sC, sK = sC.to(temporal.dtype), sK.to(temporal.dtype)
    macs = float(layer.macs)
    tiles = _tiles(temporal, sC, sK)
    total_o = float(layer.N * layer.K * layer.P * layer.Q)
    dram_w = _size(tiles[2], "W", layer) * _refills(temporal, order, 2, "W")
    dram_i = _size(tiles[2], "I", layer) * _refills(temporal, order, 2, "I")
    dram_o_writes = _size(tiles[1], "O", layer) * _refills(temporal, order, 1, "O") * sK
    dram_o_reads = torch.clamp(dram_o_writes - total_o, min=0.0)
    dram = dram_w + dram_i + dram_o_writes + dram_o_reads
    sp_w = _size(tiles[0], "W", layer) * _refills(temporal, order, 0, "W") * sC * sK
    sp_i = macs / sK
    sp = sp_w + sp_i + dram_w + dram_i
    acc_updates = macs / sC
    acc = acc_updates + (acc_updates - total_o + dram_o_reads) + dram_o_writes + dram_o_reads
    reg = macs + sp_w
    energy_pj = (macs * arch.MAC_PJ + reg * arch.REGISTER_PJ + acc * arch.accumulator_pj(acc_kb, pe)
                 + sp * arch.scratchpad_pj(sp_kb) + dram * arch.DRAM_PJ)
    compute = macs / (sC * sK)
    cycles = torch.stack([compute * torch.ones_like(dram), dram / 8, sp / (2 * pe), acc / (2 * sK)]).amax(0)
    return {"cycles": cycles, "energy_uj": energy_pj * 1e-6, "edp": cycles * energy_pj * 1e-6,
            "area_mm2": arch.area_mm2(pe, sp_kb, acc_kb),
            "accesses": {"mac": macs, "registers": reg, "accumulator": acc, "scratchpad": sp, "dram": dram}}


def mapping_tensors(m: Mapping):
    temporal = torch.tensor([[[float(m.factor(l, d)) for d in DIMS] for l in range(NUM_LEVELS)]],
                            dtype=torch.float64)
    return temporal, torch.tensor([float(m.spatial_C)], dtype=torch.float64), \
        torch.tensor([float(m.spatial_K)], dtype=torch.float64)


def evaluate(layer: Layer, mapping: Mapping, hw) -> Cost:
    temporal, sC, sK = mapping_tensors(mapping)
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    with torch.no_grad():
        out = cost_from_factors(layer, temporal, sC, sK, mapping.order, hw_t)
    cycles, energy = float(out["cycles"][0]), float(out["energy_uj"][0])
    acc = {k: float(v if isinstance(v, float) else v[0]) for k, v in out["accesses"].items()}
    return Cost(cycles, energy, cycles * energy, float(out["area_mm2"][0]), acc)


def evaluate_text(layer: Layer, text: str, hw) -> Cost:
    from baco.tuner.mapping import parse_mapping
    return evaluate(layer, parse_mapping(text), hw)


__all__ = ["Cost", "evaluate", "evaluate_text", "cost_from_factors", "capacity_from_factors"]
