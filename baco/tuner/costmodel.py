"""Differentiable analytical cost model of a mapping on Gemmini (latency,
energy, EDP, area), after Timeloop's model of DOSA's Gemmini architecture.

One formula on torch float64 tensors serves both exact evaluation of integer
mappings and gradients through relaxed factors (discrete choices -- which
loops have a factor > 1 -- are detached masks). Access counting follows the
rules DOSA re-derived from Timeloop for this architecture (ucb-bar/dosa,
dataset/common/mapping_utils.py, accesses_from_mapping; our own code):
- tile of level l = factors of levels <= l (spatial C from L1 up, K from L2 up);
- refills of a level's tile = product of the loops above it, except the
  innermost run of loops that do not index the tensor (they reuse the tile);
- inputs into the scratchpad (= DRAM input reads) reuse the sliding window:
  an innermost R/S loop of the level above widens the tile instead of
  refilling it, and when the innermost (or, after that R/S, the next) loop
  is P/Q only the newly covered rows/columns are fetched per step
  (see _input_fills);
- DRAM: W and I fill the scratchpad tiles; O is written back from the
  accumulator tiles, and partial sums evicted early are read back (the first
  read of every output is elided);
- scratchpad: weights to the PE registers (per PE), inputs multicast across
  the K columns, plus the DRAM fills;
- accumulator: one update per C-reduced MAC, its read-modify-write read
  (first read elided), and the reads that drain tiles to DRAM; partial sums
  read back from DRAM are not counted as accumulator traffic (Timeloop
  charges them to DRAM only);
- latency = max over compute (MACs / (C_spatial*K_spatial)) and the
  bandwidth of each level (accumulator 2*K_spatial, scratchpad 2*pe_dim,
  DRAM 8 words/cycle).
Ragged (ceil-divided) tiles are counted as they run (effective_factors): a
dimension of n in tiles of t runs ⌈n/t⌉ tiles holding n elements in all, so
each loop's factor becomes the ratio of tile counts of the levels it joins and
each tile its average extent. Every count above is a sum over tiles of terms
affine in each dimension's extent (times counts of the other dimensions' tiles),
which the average extent gives exactly (tests/test_ragged.py sums the tiles),
except the sliding-window step of _input_fills, which takes the average tile's
window where the short tile's differs; channels spread over the array (C on
its rows, K on its columns) pay whole passes: compute is R·S·P·Q·N·⌈C/C_spatial⌉
·⌈K/K_spatial⌉ cycles. Perfect factorisations give exactly the numbers of the
perfect-factor model. Buffers hold the largest tile (what the compiler places for it:
hwinfer.requirements_from_factors).
On 5000 rows of DOSA's Timeloop dataset (benchmarks/costmodel_vs_timeloop.py):
cycles 0.00% mean error (max 0.6%), energy 0.16% mean.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch

from baco.gemmini import energy
from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_conv_timing import program_tap_rows
from baco.gemmini.schedule import explicit_k_loop_steps, explicit_program_versions, explicit_unfused_commands
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.problem.dims import DIM_INDEX, DIMS, NUM_LEVELS, RELEVANT
from baco.problem.layer import Layer
from baco.tuner import arch
from baco.tuner.mapping import KERNEL_OUT_INT8, Mapping, is_pointwise

C, K = DIM_INDEX["C"], DIM_INDEX["K"]
DRAM_WORDS_PER_CYCLE = 8    # the DRAM bandwidth of DOSA's Gemmini architecture (Timeloop)


@dataclass
class Cost:
    cycles: float
    energy_uj: float
    edp: float
    area_mm2: float
    accesses: dict = field(default_factory=dict)
    timeloop_cycles: float | None = None   # the Timeloop-matched cycles (kernel_model.evaluate sets both)
    timeloop_energy_uj: float | None = None  # and energy
    schedule: object = None                # a kernel layer's GemmSchedule as the search chose it
    schedule_source: str = ""              # a conv layer's: "tuned" (its mapping's tile) or "default" (its kernel's default program)


def _tiles(temporal, sC, sK, layer: Layer | None = None):
    """[level] -> [B, 7] tile extents (the factors' products; clamped to the layer's dimensions
    when it is given: the largest tile a level holds)."""
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
    if layer is not None:
        dims = _layer_dims(layer, B, temporal.dtype)
        tiles = [torch.minimum(t, dims) for t in tiles]
    return tiles


def _layer_dims(layer, batch: int, dtype) -> torch.Tensor:
    """The layer's dimensions [B, 7] (its fields are numbers, or tensors [B] in explore.LayerStack)."""
    return torch.stack([torch.as_tensor(getattr(layer, d), dtype=dtype).expand(batch) for d in DIMS], dim=1)


def effective_factors(layer: Layer, temporal, sC, sK):
    """(temporal [B, 4, 7], sC [B], sK [B]) as the cost model counts them: per dimension, the
    loops innermost first (L0, spatial C, L1, spatial K, L2, L3) each multiply the tile; a loop's
    effective factor is (tiles of the dimension below it) / (tiles at its level), with
    ⌈n / tile⌉ tiles of a dimension n, so the tile extents become the average tiles (n / count)
    and the products of the loops above a level its exact number of tiles. Integer factors get
    the ceiling (straight-through: the gradient of n / tile); continuous ones (a relaxation
    whose factors multiply to n, DOSA's) are their own effective factors. Exact factorisations
    give the factors themselves, bit for bit."""
    B = temporal.shape[0]
    dims = _layer_dims(layer, B, temporal.dtype)
    sC, sK = sC.to(temporal.dtype).reshape(B), sK.to(temporal.dtype).reshape(B)
    whole = ((temporal - torch.round(temporal)).abs().amax((1, 2)) < 1e-6) \
        & ((sC - torch.round(sC)).abs() < 1e-6) & ((sK - torch.round(sK)).abs() < 1e-6)
    ones = torch.ones(B, len(DIMS), dtype=temporal.dtype)
    spread_c = ones.index_copy(1, torch.tensor([C]), sC.reshape(B, 1))
    spread_k = ones.index_copy(1, torch.tensor([K]), sK.reshape(B, 1))
    slots = [temporal[:, 0], spread_c, temporal[:, 1], spread_k, temporal[:, 2], temporal[:, 3]]
    tile, below, eff = ones, dims, []
    for f in slots:
        tile = tile * f
        ratio = dims / tile
        count = torch.ceil(ratio.detach() - 1e-7) + (ratio - ratio.detach())
        eff.append(below / count)
        below = count
    eff = [torch.where(whole.unsqueeze(1), e, f) for e, f in zip(eff, slots)]
    return torch.stack([eff[0], eff[2], eff[4], eff[5]], dim=1), eff[1][:, C], eff[3][:, K]


def _depthwise(layer) -> torch.Tensor:
    """Whether the layer is depthwise (a bool tensor: 0-d, or [B] for an explore.LayerStack)."""
    return torch.as_tensor(getattr(layer, "depthwise", False))


def _bias(layer) -> torch.Tensor:
    """Whether a layer has a bias (Layer.bias), per row [B] of an explore.LayerStack."""
    if hasattr(layer, "layers"):        # an explore.LayerStack: `rows` rows a layer
        return torch.tensor([l.bias for l in layer.layers]).repeat_interleave(layer.rows)
    return torch.as_tensor(getattr(layer, "bias", False))


def _size(t, tensor, layer: Layer):
    g = lambda d: t[:, DIM_INDEX[d]]  # noqa: E731
    if tensor == "W":
        return g("R") * g("S") * g("C") * g("K")
    if tensor == "O":
        return g("N") * g("K") * g("P") * g("Q")
    h = (g("P") - 1) * layer.Hstride + (g("R") - 1) * layer.Hdilation + 1
    w = (g("Q") - 1) * layer.Wstride + (g("S") - 1) * layer.Wdilation + 1
    return g("N") * torch.where(_depthwise(layer), g("K"), g("C")) * h * w    # a depthwise input: K channels


NO_LOOP = len(DIMS)   # the loop-position index of "no loop here" (a level listing fewer than 7 dims)


def order_index(order, batch: int) -> torch.Tensor:
    """Loop orders as dim indices [B or 1, NUM_LEVELS, 7] (outermost first, NO_LOOP pads a short
    level): from a per-level list of dim names (one order for all B), or such a tensor already."""
    if torch.is_tensor(order):
        return order
    return torch.tensor([[[DIM_INDEX[d] for d in order[l]] + [NO_LOOP] * (len(DIMS) - len(order[l]))
                          for l in range(NUM_LEVELS)]], dtype=torch.int64)


def _loops_inner_first(temporal, order_idx, level):
    """(factors [B, n], dim indices [B|1, n], level of each loop [n]) of the loops above `level`,
    innermost first; a NO_LOOP position has factor 1."""
    B = temporal.shape[0]
    padded = torch.cat([temporal, torch.ones(B, NUM_LEVELS, 1, dtype=temporal.dtype)], dim=2)
    levels = list(range(level + 1, NUM_LEVELS))
    dims = torch.cat([order_index_level.flip(-1) for order_index_level in order_idx[:, levels, :].unbind(1)], dim=1)
    factors = padded[:, levels, :].reshape(B, -1).gather(
        1, (dims + torch.arange(len(levels)).repeat_interleave(len(DIMS)) * (len(DIMS) + 1)).expand(B, -1))
    at = torch.tensor(levels).repeat_interleave(len(DIMS))
    return factors, dims, at


def _inside_or(x: torch.Tensor) -> torch.Tensor:
    """For loops listed innermost first: whether x holds at this loop or at any loop inside it."""
    return x.to(torch.int8).cummax(dim=1).values.bool()


def _in(dims: torch.Tensor, names) -> torch.Tensor:
    return torch.isin(dims, torch.tensor([DIM_INDEX[d] for d in names]))


def _refills(temporal, order_idx, level, tensor, present):
    """How often the level-`level` tile of `tensor` is (re)filled, [B]: the product of the loops
    above it at or outside the innermost tensor-relevant loop with a factor > 1. present [B, 4, 7]:
    the integer factors, which say which loops run (factor > 1)."""
    f, dims, _ = _loops_inner_first(temporal, order_idx, level)
    runs = _loops_inner_first(present, order_idx, level)[0].detach() > 1.5
    counted = _inside_or(_in(dims, RELEVANT[tensor]) & runs)
    return torch.where(counted, f, torch.ones_like(f)).prod(1)


def _input_fills(layer: Layer, temporal, sC, sK, order_idx, level, present):
    """Input words written into the level-`level` tile over the layer, [B],
    with Timeloop's sliding-window reuse (counting rules as re-derived in
    DOSA, ucb-bar/dosa dataset/common/mapping_utils.py accesses_from_mapping):
    - the tile spans C·N of levels 1..level (spatial C included) and the
      P/Q/R/S extents of levels 0..level;
    - a depthwise layer (Timeloop's dw-cnn-layer: C = 1, the input indexed by the K channels, so K
      is input-relevant) also spans K of levels 1..level (spatial K included from the scratchpad up);
    - among the loops of the level just above (factor > 1, innermost first):
      an innermost R (S) widens the tile's window instead of refilling it;
      if the innermost (or, after such an R/S, the next) loop is P (Q), each
      of its steps but the first fetches only the rows (columns) the window
      slides onto; all other loops above the first input-relevant one
      refill the whole tile.
    temporal: the effective factors; present: the integer ones (which loops run)."""
    B = temporal.shape[0]
    one = torch.ones(B, dtype=temporal.dtype)
    g = lambda l, d: temporal[:, l, DIM_INDEX[d]]  # noqa: E731
    dw = _depthwise(layer)
    cn = sC.to(temporal.dtype) * one
    for l in range(1, level + 1):
        cn = cn * g(l, "C") * g(l, "N") * torch.where(dw, g(l, "K"), one)
    if level >= 2:
        cn = cn * torch.where(dw, sK.to(temporal.dtype), one)
    inner = {d: one.clone() for d in "PQRS"}
    whole = {d: one.clone() for d in "PQRS"}     # the integer extents, for the discrete choices
    for l in range(0, level + 1):
        for d in "PQRS":
            inner[d] = inner[d] * g(l, d)
            whole[d] = whole[d] * present[:, l, DIM_INDEX[d]].detach()
    up = level + 1
    f, dims, at = _loops_inner_first(temporal, order_idx, level)
    big = _loops_inner_first(present, order_idx, level)[0].detach() > 1.5
    # rank among the loops of level `up` with factor > 1 (0 = innermost)
    of_up = (at == up).unsqueeze(0)
    rank = torch.where(of_up & big, (big & of_up).cumsum(1) - 1, -torch.ones_like(dims))
    first = {d: ((dims == DIM_INDEX[d]) & (rank == 0)).any(1) for d in "PQRS"}
    second = {d: ((dims == DIM_INDEX[d]) & (rank == 1)).any(1) for d in "PQ"}
    fold = {"R": first["R"], "S": first["S"]}
    for d in "RS":
        inner[d] = inner[d] * torch.where(fold[d], g(up, d), one)
        whole[d] = whole[d] * torch.where(fold[d], present[:, up, DIM_INDEX[d]].detach(), one)
    slide_after = {"P": first["R"] & second["P"], "Q": first["S"] & second["Q"]}
    slide = {d: first[d] | slide_after[d] for d in "PQ"}
    hs, ws = layer.Hstride, layer.Wstride
    hd, wd = layer.Hdilation, layer.Wdilation
    h = (inner["P"] - 1) * hs + (inner["R"] - 1) * hd + 1
    w = (inner["Q"] - 1) * ws + (inner["S"] - 1) * wd + 1
    extra = torch.zeros_like(one)
    for d, r, stride, full, other in (("P", "R", hs, h, w), ("Q", "S", ws, w, h)):
        i_d, i_r, w_d, w_r = inner[d], inner[r], whole[d], whole[r]
        step = torch.where(w_r > 1.5, stride * one, one) + (i_d - 1) * stride
        after = torch.where(w_d <= 1.5, i_r, torch.where(w_d <= w_r, i_r - 1, torch.maximum(stride * one, i_r)))
        after = after + (i_d - 1) * stride * (w_d > 1.5)
        step = torch.where(slide_after[d], after, step)
        step = torch.minimum(step, full)
        extra = extra + torch.where(slide[d], step * other * (g(up, d) - 1), torch.zeros_like(one))
    # refills: loops above, from the first input-relevant one outward, except
    # the folded R/S and the sliding P/Q (already counted)
    skip_of_dim = torch.zeros(B, len(DIMS) + 1, dtype=torch.bool)
    for d, flag in (("R", fold["R"]), ("S", fold["S"]), ("P", slide["P"]), ("Q", slide["Q"])):
        skip_of_dim[:, DIM_INDEX[d]] = flag
    skip = of_up & skip_of_dim.gather(1, dims.expand(B, -1))
    relevant = _in(dims, RELEVANT["I"]) | (dw.reshape(-1, 1) & _in(dims, "K"))
    active = _inside_or(skip | (big & relevant))
    mult = torch.where(active & ~skip, f, torch.ones_like(f)).prod(1)
    return cn * mult * (h * w + extra)


def _constant(x):
    """A layer constant: a float, or a tensor [B] when the rows are of several layers."""
    return x if torch.is_tensor(x) else float(x)


def cost_from_factors(layer: Layer, temporal, sC, sK, order, hw) -> dict:
    """Cycles, energy (µJ) and access counts of B mappings: temporal [B, 4, 7]
    (levels L0..L3, DIMS order), spatial C/K [B], order [level] -> dims (outer
    first; or order_index's tensor [B, 4, 7], one order per mapping), hw =
    (pe_dim, sp_kb, acc_kb) tensors [B] or scalars.  `layer` may also hold its
    dims, strides and dilations as tensors [B] (explore.LayerStack: the rows are
    mappings of several layers, costed in one call)."""
    order = order_index(order, temporal.shape[0])
    pe, sp_kb, acc_kb = (torch.as_tensor(x, dtype=temporal.dtype) for x in hw)
    present = temporal
    temporal, sC, sK = effective_factors(layer, temporal, sC, sK)
    macs = _constant(layer.macs)
    tiles = _tiles(temporal, sC, sK)
    total_o = _constant(layer.N * layer.K * layer.P * layer.Q)
    dram_w = _size(tiles[2], "W", layer) * _refills(temporal, order, 2, "W", present)
    dram_i = _input_fills(layer, temporal, sC, sK, order, 2, present)
    dram_o_writes = _size(tiles[1], "O", layer) * _refills(temporal, order, 1, "O", present) * sK
    dram_o_reads = torch.clamp(dram_o_writes - total_o, min=0.0)
    dram = dram_w + dram_i + dram_o_writes + dram_o_reads
    sp_w = _size(tiles[0], "W", layer) * _refills(temporal, order, 0, "W", present) * sC * sK
    sp_i = macs / torch.where(_depthwise(layer), torch.ones_like(sK), sK)   # a depthwise input is per column
    sp = sp_w + sp_i + dram_w + dram_i
    acc_updates = macs / sC
    acc = acc_updates + (acc_updates - total_o) + dram_o_writes
    reg = macs + sp_w
    energy_pj = (macs * arch.MAC_PJ + reg * arch.REGISTER_PJ + acc * arch.accumulator_pj(acc_kb, pe)
                 + sp * arch.scratchpad_pj(sp_kb) + dram * arch.DRAM_PJ)
    compute = macs / (sC * sK)
    # whole cycles per level (Timeloop rounds each level's transfer time up);
    # straight-through: the value is the ceiling, the gradient that of x
    times = torch.stack([compute * torch.ones_like(dram), dram / DRAM_WORDS_PER_CYCLE, sp / (2 * pe), acc / (2 * sK)])
    times = times + (torch.ceil(times.detach() - 1e-9) - times.detach())
    cycles = times.amax(0)
    return {"cycles": cycles, "energy_uj": energy_pj * 1e-6, "edp": cycles * energy_pj * 1e-6,
            "area_mm2": arch.area_mm2(pe, sp_kb, acc_kb), "level_cycles": times, "dram_input": dram_i,
            "accesses": {"mac": macs, "registers": reg, "accumulator": acc, "scratchpad": sp, "dram": dram}}


def lower_bounds(layer: Layer, max_pe_dim: int = arch.MAX_PE_DIM) -> tuple[float, float]:
    """(cycles, energy µJ) below which no mapping on any legal hardware (array ≤ max_pe_dim) can
    go under this model: every weight, input and output word crosses DRAM at least once
    (8 words/cycle, DRAM_PJ each), every MAC costs its MAC and register energy, and the array
    does at most max_pe_dim² MACs a cycle."""
    full = torch.tensor([[float(getattr(layer, d)) for d in DIMS]], dtype=torch.float64)
    dram = sum(float(_size(full, t, layer)[0]) for t in "WIO")
    macs = float(layer.macs)
    cycles = max(math.ceil(macs / max_pe_dim ** 2), math.ceil(dram / DRAM_WORDS_PER_CYCLE))
    energy_pj = macs * (arch.MAC_PJ + arch.REGISTER_PJ) + dram * arch.DRAM_PJ
    return cycles, energy_pj * 1e-6


def edp_lower_bound(layer: Layer, max_pe_dim: int = arch.MAX_PE_DIM) -> float:
    """The product of lower_bounds: shows how much room a workload leaves (DRAM-bound ones, GEMV,
    have little)."""
    cycles, energy_uj = lower_bounds(layer, max_pe_dim)
    return cycles * energy_uj


def network_edp_lower_bound(layers: list[Layer], max_pe_dim: int = arch.MAX_PE_DIM) -> float:
    """(Σ count·cycles bound)·(Σ count·energy bound): the network objective's lower bound."""
    bounds = [lower_bounds(layer, max_pe_dim) for layer in layers]
    return (sum(l.count * c for l, (c, _) in zip(layers, bounds))
            * sum(l.count * e for l, (_, e) in zip(layers, bounds)))


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


# ---- the compiled program on the cycle model ------------------------------------------------

def _ceil(x):
    """Ceiling with a straight-through gradient (the value is whole, the slope that of x)."""
    return x + (torch.ceil(x.detach() - 1e-9) - x.detach())


def _one_program(layer) -> bool:
    """Whether a convolution, or every convolution of an explore.LayerStack, is pointwise (_pointwise):
    the compiler runs the two kinds as different programs, so a stack costed as one holds one kind."""
    pointwise = _pointwise(layer)
    if isinstance(pointwise, bool):
        return pointwise
    if bool(pointwise.all()) != bool(pointwise.any()):
        raise ValueError("a LayerStack of pointwise and other convolutions has no one program")
    return bool(pointwise.all())


def _no_k_loop(layer, pointwise: bool) -> torch.Tensor:
    """Whether the kernel's K loop is folded away (a pointwise layer with C = 1), [B] for a LayerStack."""
    return torch.as_tensor(layer.C) == 1 if pointwise else torch.tensor(False)


def _dims_as_tensors(layer) -> SimpleNamespace:
    """The layer's dimensions, strides and dilations as float64 tensors (0-d, or [B] for an
    explore.LayerStack), so that a layer and a stack of layers do the same arithmetic: torch divides
    a number by a tensor as the number times the tensor's reciprocal, an ulp off the quotient
    (196 / 49 = 3.9999999999999996), which moves the gradient where the model's maxima tie."""
    return SimpleNamespace(**{f: torch.as_tensor(getattr(layer, f), dtype=torch.float64)
                              for f in DIMS + ("Hstride", "Wstride", "Hdilation", "Wdilation")})


def kernel_blocks(layer: Layer, tile) -> tuple:
    """(rows x BLOCK_M, BLOCK_N, BLOCK_K) [B] the compiler runs for a layer's L2 tiles [B, 7]: a GEMM or
    pointwise (1x1, stride-1) layer is one GEMM whose BLOCK_M counts pixels (N·P·Q); any other
    convolution (baco/kernels/conv.py) takes BLOCK_M output columns (Q) of `rows` output rows per
    program (conv_rows). BLOCK_N = output channels K, BLOCK_K = input channels C per step; for a
    depthwise layer both are its tile's K channels (mapping.conv_tile_schedule). `layer` may be an
    explore.LayerStack."""
    g = lambda d: tile[:, DIM_INDEX[d]]  # noqa: E731
    pointwise = _pointwise(layer)
    if isinstance(pointwise, bool):
        bm = g("N") * g("P") * g("Q") if pointwise else g("Q")
    else:
        bm = torch.where(pointwise, g("N") * g("P") * g("Q"), g("Q"))
    return bm * conv_rows(layer, tile), g("K"), torch.where(_depthwise(layer), g("K"), g("C"))


def _pointwise(layer):
    """mapping.is_pointwise of a layer, or per row [B] of an explore.LayerStack (or of
    _depthwise_as_conv's stand-in)."""
    if isinstance(layer, Layer):
        return is_pointwise(layer)
    return torch.as_tensor((layer.R == 1) & (layer.S == 1) & (layer.Hstride == 1) & (layer.Wstride == 1)) \
        & ~_depthwise(layer)


def _depthwise_as_conv(layer, bk):
    """The convolution each program of a depthwise layer runs, as conv_program_terms and
    conv_program_counts cost it (the layer itself when it is no depthwise layer): the depthwise
    kernel's program of BLOCK_K = BLOCK_N channels multiplies, per filter tap, a BLOCK_M x BLOCK_K
    input block (the program's own channels) by a diagonal BLOCK_K x BLOCK_N weight block, one
    step per tap: the commands of a convolution with C = BLOCK_K input channels in one channel
    block and K = the layer's channels, whose programs differ only in addresses. So a depthwise
    layer costs that convolution (the array computes every product of the diagonal block,
    zeros included, as the simulator counts them). bk [B]; rows of an explore.LayerStack that are
    not depthwise keep their C."""
    dw = _depthwise(layer)
    if not bool(dw.any()):
        return layer
    fields = {f: torch.as_tensor(getattr(layer, f), dtype=torch.float64)
              for f in DIMS + ("Hstride", "Wstride", "Hdilation", "Wdilation")}
    fields["C"] = torch.where(dw, torch.as_tensor(bk, dtype=torch.float64), fields["C"])
    return SimpleNamespace(**fields, depthwise=dw, bias=_bias(layer))


def conv_rows(layer: Layer, tile):
    """Output rows per program [B] (GemmSchedule.rows) a convolution runs for its L2 tiles: a tile of
    whole output rows (Q = the layer's) computes its P rows in one program; else one row (and 1
    for GEMM/pointwise layers, whose BLOCK_M already counts every pixel). `layer` may be an
    explore.LayerStack."""
    ones = torch.ones_like(tile[:, 0])
    pointwise = _pointwise(layer)
    if pointwise is True:
        return ones
    whole_rows = (tile[:, DIM_INDEX["Q"]].detach() >= torch.as_tensor(layer.Q) - 1e-9) & ~torch.as_tensor(pointwise)
    return torch.where(whole_rows, tile[:, DIM_INDEX["P"]], ones)


def compiled_program_terms(layer: Layer, temporal, spatial, hw, *, out_int8: bool = KERNEL_OUT_INT8,
                           double_buffer: bool = False, dataflow: str = "WS") -> dict:
    """Analytical cycles of the GEMM kernel (baco/kernels/matmul.py) compiled with the block
    sizes of the mapping's scratchpad tile, as the cycle model (baco/sim/timing.py) times its
    command stream. Per program (one BLOCK_M x BLOCK_N output block, programs one after
    another), per BLOCK_K step: load A and B (DIM-row mvins of at most max_bytes per row,
    16-byte beats, max_in_flight requests of dram_latency each), then the computes
    (gemm_step_compute: WS column by column, each DIM x DIM weight block preloaded in DIM cycles
    that overlap only the previous compute, each sub-block's computes waiting for the tile's
    previous result to land, the pipeline depth; OS DIM rows per compute); the first step
    overwrites the accumulator (no zero fill; an OS program zero-fills its block first). Without
    double buffering the next step's loads wait for the computes that read the same rows to land,
    so loads, computes and the depth add up (computes start as B's strips land); with it the loads
    of the next step are issued through this step's computes (max of the two). Programs pipeline
    (as kernel_program_terms says for the conv kernel): the next program's loads run under this
    one's last computes and its stores (int8 rows through the scale path, or int32 rows), so a
    program costs its steps plus what of its last tile's depth and stores the next one's loads do
    not cover, or its stores when they take longer.
    A GEMM with K = 1 has its K loop specialised away (the launcher makes an argument equal to 1
    a constant, so the loop has one iteration and is folded): without the loop the compiler does
    not fuse the accumulator's zero fill into the first K step nor the stores into the next
    column's computes, so the program zero-fills the accumulator block (mvins from address 0, one
    cycle a row), loads, computes and then stores, one after the other (only the next program's
    zero fill runs under the stores: its loads queue behind the fill, which waits for the stores
    to have read the accumulator rows it clears).
    temporal [B, 4, 7], spatial = (sC, sK) [B], hw = (pe_dim, sp_kb, acc_kb); `layer` may be an
    explore.LayerStack (rows of several GEMM layers costed in one call, as in cost_from_factors)."""
    (M, N, Kd), (bm, bn, bk) = _gemm_blocks(layer, temporal, spatial)
    programs_m, k_steps = _ceil(M / bm), _ceil(Kd / bk)
    # the last row block (M % BLOCK_M) and the last K step (K % BLOCK_K) may be short (fewer strips
    # and chunks to load and compute): the programs of each class, full and last, cost what they
    # would cost all alike, and so do the steps, in proportion (the four classes in one batch)
    B = temporal.shape[0]
    last_m, last_k = M - (programs_m - 1) * bm, Kd - (k_steps - 1) * bk
    m_share, k_share = (programs_m - 1) / programs_m, (k_steps - 1) / k_steps
    # (rows, K step, share of the programs' steps) of each class: full/last row block x full/last K step
    classes = [(bm, bk, m_share * k_share), (bm, last_k, m_share * (1 - k_share)),
               (last_m, bk, (1 - m_share) * k_share), (last_m, last_k, (1 - m_share) * (1 - k_share))]
    batch = lambda xs: torch.cat([torch.as_tensor(x).expand(B) for x in xs])     # noqa: E731
    four = lambda x: batch([x] * 4)     # noqa: E731
    rows_m, k_block, share = (batch(c[i] for c in classes) for i in range(3))
    terms = kernel_program_terms(four(hw[0]), (four(bm), four(bn), k_block), rows_m=rows_m,
                                 programs=four(programs_m * _ceil(N / bn)), k_steps=four(k_steps),
                                 no_k_loop=four(torch.as_tensor(Kd) == 1), out_int8=out_int8,
                                 double_buffer=double_buffer, dataflow=dataflow, bias=four(_bias(layer)))
    out = {k: (v * share).view(4, B).sum(0) for k, v in terms.items() if k != "blocks"}
    full, last_k = ({k: v.view(4, B)[i] for k, v in terms.items() if k != "blocks"} for i in (0, 1))
    # a full row block's programs: their K steps full but the last (K % BLOCK_K)
    full_rows = {k: v * k_share + last_k[k] * (1 - k_share) for k, v in full.items()}
    _interior_split(out, full, full_rows, (M, N, Kd), (bm, bn, bk))
    return {**out, "blocks": (bm, bn, bk)}


def _interior_split(out: dict, full: dict, ragged_k: dict, dims, blocks) -> None:
    """Adds to `out`, a GEMM launch's terms [B] of M x N x K `dims` in `blocks`, its interior
    programs' ("interior_" + term), ragged-K programs' ("ragged_k_" + term) and edge programs'
    ("edge_" + term) commands, weight blocks, pairs, stores and fills: the interior ones and the
    ragged-K ones (schedule.explicit_program_versions, counts, detached) run the compiler's versions
    without boundary clamps and issue what `full`, the terms of full blocks, and `ragged_k`, of full
    row and column blocks whose last K step is short, say a program issues (of the interior ones'
    commands, "interior_unfused_commands": schedule.explicit_unfused_commands); and "k_loop_steps",
    the K steps a program's K loop runs (schedule.explicit_k_loop_steps)."""
    programs = out["programs"].detach()
    dims, blocks = (tuple(torch.as_tensor(v).detach() for v in vs) for vs in (dims, blocks))
    out["k_loop_steps"] = explicit_k_loop_steps(dims[2], out["k_steps"])
    versions = explicit_program_versions(*dims, *blocks)
    for k in ("programs", "commands", "groups", "pairs", "stores", "fills"):
        out[f"edge_{k}"] = out[k]
        for version, count, terms in zip(("interior", "ragged_k"), versions, (full, ragged_k)):
            out[f"{version}_{k}"] = count / programs * terms[k]
            out[f"edge_{k}"] = out[f"edge_{k}"] - out[f"{version}_{k}"]
    out["interior_unfused_commands"] = explicit_unfused_commands(dims[2], out["interior_commands"])


def conv_program_terms(layer: Layer, blocks, pe, *, rows=1, out_int8: bool = KERNEL_OUT_INT8,
                       double_buffer: bool = False) -> dict:
    """Analytical cycles of a convolution compiled with blocks (BLOCK_M, BLOCK_N, BLOCK_K) [B]
    (kernel_blocks: BLOCK_M counts rows x output columns; the schedule of baco.tuner.mapping.
    conv_schedule) on a pe-wide array, as the cycle model times it (kernel_program_terms with
    step_waits). A pointwise layer runs the GEMM kernel over its N·P·Q pixels; any other is the
    implicit GEMM of baco/kernels/conv.py: one program per `rows` output rows [B] (whole rows when
    more than one), BLOCK_M output columns and BLOCK_N output channels, whose K loop runs over the
    R·S filter taps times ⌈C / BLOCK_K⌉ channel blocks (a padded layer's programs fewer taps and
    zero slices: padded_stream_geometry), each step a GEMM step of rows x BLOCK_M A rows (strided by
    the convolution's stride) moved in one slice per output row. `layer` may be an
    explore.LayerStack (rows of several convolutions, all pointwise or all not, costed in one call)."""
    bm, bn, bk = blocks
    padded_layer, layer = layer, _depthwise_as_conv(layer, bk)
    d, pointwise = _dims_as_tensors(layer), _one_program(layer)
    if pointwise:
        M = d.P * d.Q * d.N
        rows_m, programs, k_steps = M / _ceil(M / bm), _ceil(M / bm) * _ceil(d.K / bn), _ceil(d.C / bk)
        slices, zero_slices, stored, padding = 1, 0.0, 1.0, None
    else:
        rows = torch.as_tensor(rows, dtype=torch.float64)
        columns = bm / rows
        q_blocks = _ceil(d.Q / columns)
        rows_m = rows * d.Q / q_blocks
        programs = d.N * _ceil(d.P / rows) * q_blocks * _ceil(d.K / bn)
        padded = _padded_stream(padded_layer, rows, columns)     # a padded layer: padded_stream_geometry
        k_steps, slices = _with_padding(padded, 0, 1.0) * d.R * d.S * _ceil(d.C / bk), rows
        zero_slices = _with_padding(padded, 1, _zero_slices(d, rows.detach()))
        padding = None if padded is None else tuple(_with_padding(padded, i, 0.0) for i in (2, 3, 4))
        stored = d.P / (_ceil(d.P / rows.detach()) * rows.detach())     # the last program stores only rows < P
    # the last block of input channels (C % BLOCK_K) may be short (fewer strips to load and compute):
    # the steps of each class, full and last, cost what they would cost all alike, in proportion
    c_blocks = _ceil(d.C / bk)
    out = full = None
    for c_block, share in ((bk, (c_blocks - 1) / c_blocks), (d.C - (c_blocks - 1) * bk, 1 / c_blocks)):
        terms = kernel_program_terms(pe, (rows_m, bn, c_block), rows_m=rows_m, programs=programs, k_steps=k_steps,
                                     a_slices=slices, zero_slices=zero_slices, padding=padding, stored=stored,
                                     no_k_loop=_no_k_loop(layer, pointwise), out_int8=out_int8,
                                     double_buffer=double_buffer, step_waits=True, bias=_bias(layer))
        full = full or terms
        out = {k: v * share for k, v in terms.items() if k != "blocks"} if out is None else \
            {k: out[k] + terms[k] * share for k in out}
    if pointwise:               # the GEMM kernel's program (kernel_model.gemm_end_to_end prices it)
        _interior_split(out, full, out, (M, d.K, d.C), blocks)  # out: its programs' steps full but the last
    return {**out, "blocks": (rows_m, bn, bk)}


@functools.lru_cache(maxsize=65536)
def padded_stream_geometry(layer: Layer, rows: int, columns: int) -> tuple[float, ...]:
    """(tap rows run / R, zero A slices a step, share of the other slices' pixels in the column
    padding, zero-fill mvins of it a step, their rows each, A pixel rows moved as zeros or skipped
    over the layer) of the explicit stream of a padded layer (Layer.padding) in programs of `rows`
    output rows of `columns` output columns (baco/kernels/conv.py, its loads as
    baco.passes.linalg_to_instgem moves them): a program runs the tap rows reaching the image from
    one of its rows (r_lo, r_hi: a one-row program at the image's top or bottom edge runs fewer); an A
    slice whose input row is outside the image (in the padding, or a row past P reading below it) is
    zeros, mvins from address 0; of the others the pixels inside the image move from DRAM, those in
    the padding columns are zeroed, by one mvin from address 0 for the left padding (and one for the
    right where a program holds several rows: a slice's rows after its window; one row's block
    leaves them masked). Zero rows: over the whole layer (one channel block), in the taps run.
    Averages over the programs' steps. Cached: the search asks again for every batch."""
    H, W, pad, R, S = layer.image_rows, layer.image_cols, layer.padding, layer.R, layer.S
    sh, sw, dh, dw = layer.Hstride, layer.Wstride, layer.Hdilation, layer.Wdilation
    taps, slices, outside = 0, 0, 0
    for p0 in range(0, layer.P, rows):
        r_lo, r_hi = program_tap_rows(p0, rows, H, R, sh, dh, pad)
        taps += r_hi - r_lo
        h = [p0 * sh - pad + i * sh + r * dh for r in range(r_lo, r_hi) for i in range(rows)]
        slices += len(h)
        outside += sum(not 0 <= x < H for x in h)
    pixels = left = right = runs = 0       # over the column blocks' taps
    for q0 in range(0, layer.Q, columns):
        n = min(columns, layer.Q - q0)
        for t in range(S):
            w = [q0 * sw - pad + j * sw + t * dw for j in range(n)]
            lo, hi = sum(x < 0 for x in w), sum(x >= W for x in w)
            pixels, left, right = pixels + n, left + lo, right + hi
            runs += (lo > 0) + (hi > 0 and rows > 1)
    blocks = -(-layer.Q // columns) * S
    f_h, f_w = outside / slices, (left + right) / pixels
    zeroed = left + (right if rows > 1 else 0)
    programs = -(-layer.P // rows)
    zero_rows = layer.N * slices * pixels * (1 - (1 - f_h) * (1 - f_w))
    return (taps / (programs * R), rows * f_h, f_w, rows * (1 - f_h) * runs / blocks,
            zeroed / runs if runs else 0.0, zero_rows)


def _padded_stream(layer, rows, columns):
    """padded_stream_geometry [6, B] of each row of a batch (rows, columns [B]; layer a Layer or an
    explore.LayerStack; nan where a row's layer is unpadded), None when no layer is padded."""
    layers = layer.layers if hasattr(layer, "layers") else [layer]
    if not any(getattr(l, "padding", 0) for l in layers):
        return None
    B = max(torch.as_tensor(rows).numel(), torch.as_tensor(columns).numel(), len(layers))
    per_layer = B // len(layers)
    # whole rows and columns (a relaxation's fractional blocks rounded), and the batch's few distinct
    # (layer, rows, columns) as one integer each: a search batch repeats them
    r = torch.as_tensor(rows, dtype=torch.float64).detach().expand(B).round().clamp(min=1).long()
    c = torch.ceil(torch.as_tensor(columns, dtype=torch.float64).detach().expand(B) - 1e-9).clamp(min=1).long()
    span = int(max(r.max(), c.max())) + 1
    distinct, inverse = torch.unique((torch.arange(B) // per_layer * span + r) * span + c, return_inverse=True)
    out = [padded_stream_geometry(layers[k // span // span], k // span % span, k % span)
           if layers[k // span // span].padding else (math.nan,) * 6 for k in distinct.tolist()]
    return torch.tensor(out, dtype=torch.float64)[inverse].T


def _with_padding(padded, index, value):
    """`value` [B], replaced by padded_stream_geometry's `index` where a row's layer is padded."""
    if padded is None:
        return value
    return torch.where(torch.isnan(padded[index]), value, padded[index])


def _zero_slices(d, rows):
    """A slices per step, on average over a convolution's programs and steps, whose input row lies
    below the image: the last program of `rows` output rows (P % rows short) computes rows past P
    too, and a past row whose tap reads below the image moves zeros (an mvin from address 0, a cycle
    a row) rather than DRAM rows. Output row P - 1 + e reads input row (P - 1 + e)·stride + r·dil:
    past the last, (P - 1)·stride + (R - 1)·dil, iff e·stride > (R - 1 - r)·dil. d: the layer's
    dimensions as tensors (_dims_as_tensors), rows [B]."""
    groups = _ceil(d.P / rows)
    past = groups * rows - d.P                              # rows past P in the last program
    u = torch.arange(int(torch.as_tensor(d.R).max()), dtype=torch.float64)    # R - 1 - r
    below = torch.clamp(past.unsqueeze(-1) - torch.floor(u * d.Hdilation.unsqueeze(-1) / d.Hstride.unsqueeze(-1)),
                        min=0.0) * (u < d.R.unsqueeze(-1))
    return below.sum(-1) / (groups * d.R)


def kernel_program_terms(pe, blocks, *, rows_m, programs, k_steps, no_k_loop, a_slices=1, zero_slices=0.0,
                         padding=None, stored=1.0,
                         out_int8: bool = KERNEL_OUT_INT8, double_buffer: bool = False,
                         step_waits: bool = False, dataflow: str = "WS", bias=False) -> dict:
    """Analytical cycles [B] of a block program of `programs` programs (one after another), each one
    BLOCK_M x BLOCK_N output block (rows_m rows on average: ragged edges) accumulated over k_steps
    steps of BLOCK_K (no_k_loop [B]: a GEMM with K = 1; A moved in a_slices slices of its rows, one
    per output row of a convolution), as the cycle model (baco/sim/timing.py) times its command
    stream (compiled_program_terms says how).
    zero_slices: of the a_slices, those (on average a step) that read below the image and move
    zeros (_zero_slices); padding: a padded convolution's (column share, zero-fill mvins a step,
    their rows) [B] (padded_stream_geometry: the other slices' padding columns zeroed, not moved from
    DRAM), None without; stored: the share of its rows_m rows a program stores, on average (a
    convolution's last program of several output rows stores only those inside the output).
    step_waits (the convolution model; the GEMM model's are gemm_step_compute's): the
    array's waits within a step, as the cycle model times the conv kernel. The computes run per
    output column j and channel sub-block k, the rows i innermost under one preloaded weight
    block; an accumulation into a tile waits until the tile's previous result has landed (its
    compute plus the pipeline depth), and a preload's DIM weight-load cycles overlap the previous
    compute only. So a group of rows under one weight block takes max(rows, DIM) cycles, or
    max(rows, compute + depth) when it accumulates onto the previous sub-block's tiles, and a step
    is at least its k sub-blocks' chain on one tile (one tile, one sub-block: compute + depth per
    step: 7x7 C=3 on DIM 128); single-buffered, the last column's chain follows the other columns,
    whose weights came in while the step waited for its loads. Mvins move the rows and columns that
    exist (ragged strips are short). A step's computes trail its loads: column j runs once its chunk
    of B's last strip has landed.
    Programs pipeline as far as the one in-order dispatch queue lets them: the next program's first
    loads are dispatched once this program's last computes fit the execute station (rs_ex / 2
    preload+compute pairs) and all but rs_st of its stores have left the store station (its last
    column's, or all of them when the stores, paced from its first tile out, outlast its computes);
    double-buffered, they then run under those computes (its own later K steps' loads under its
    computes), single-buffered after them (they overwrite rows this program reads). The first
    program waits for its first loads (double-buffered: A's first strip and B, a prologue, and its
    computes cannot outrun the rest), the last one's stores are exposed (a tail), and stores longer
    than a program's steps set the pace from the first tile's result on.
    bias (bool or [B]: Layer.bias): a program's block starts as the bias row repeated, int32 mvins
    into the accumulator from DRAM in the zero fill's chunks (the kernels' row-stride-0 block load);
    a program without a K loop, or OS, loads it instead of its zero fill, a WS one ahead of its
    first step's loads, on the one DMA (added to the program)."""
    # the program's terms, filled in step by step
    p = SimpleNamespace(k=DEFAULT_CONSTANTS, cfg=GemminiConfig(), blocks=tuple(blocks),
                        pe=torch.as_tensor(pe, dtype=torch.float64), lat=DEFAULT_CONSTANTS.dram_latency,
                        rows_m=rows_m, programs=programs, k_steps=k_steps, double_buffer=double_buffer,
                        step_waits=step_waits, dataflow=dataflow, bias=torch.as_tensor(bias))
    _step_loads(p, a_slices, zero_slices, padding)
    _step_compute(p)
    _program_stores(p, out_int8, stored)
    if bool(no_k_loop.all()):
        step, per_program, hidden = _without_k_loop(p)
    elif not bool(no_k_loop.any()):
        step, per_program, hidden = _with_k_loop(p)
    else:                       # a stack of layers with and without a K loop
        step, per_program, hidden = (torch.where(no_k_loop, a, b) for a, b in zip(_without_k_loop(p), _with_k_loop(p)))
    if dataflow == "WS":        # the bias ahead of the first step's loads (_without_k_loop's replaces its fill)
        per_program = per_program + torch.where(no_k_loop, 0.0, p.bias_load)
    # `hidden`: what ran under the next program; the last program's stores have none to run under
    cycles = programs * per_program + hidden
    # the RoCC commands the CPU issues (baco.tuner.kernel_model prices them): per program its zero
    # fill (OS, or no K loop) or bias rows, per step its mvins and preload/compute pairs, its stores
    mb, nb, kb, zero_chunks = p.mb, p.nb, p.kb, p.zero_chunks
    zero_commands = torch.where(no_k_loop | p.bias, mb * zero_chunks, mb * zero_chunks if dataflow == "OS" else 0.0)
    groups, pairs, stores, fills = (programs * n for n in (k_steps * kb * nb, k_steps * kb * nb * mb, mb * nb,
                                                           zero_commands))
    commands = programs * k_steps * p.load_commands + 2 * pairs + stores + fills
    return {"cycles": cycles, "blocks": p.blocks, "programs": programs, "k_steps": k_steps, "load": p.load,
            "compute": p.compute, "store": p.store, "step": step, "commands": commands,
            "groups": groups, "pairs": pairs, "stores": stores, "fills": fills}


def _dma(p, rows, bytes_per_row, commands):
    """Occupancy of `commands` mvin/mvout commands of `rows` rows each (p: kernel_program_terms' terms)."""
    k, cfg = p.k, p.cfg
    per = torch.maximum(rows * _ceil(bytes_per_row / (cfg.dma_bus_bits // 8)) * k.beat_cycles,
                        _ceil(rows / cfg.max_in_flight) * k.dram_latency)
    return commands * (k.dma_cmd_overhead + per)


def _slice_strips(slices, slice_rows, pe):
    """DIM-row tiles (an mvin each, a column chunk) an A slice of slice_rows rows spans, on average
    over a step's `slices` slices [B]: ceil(slice_rows / DIM) for one; several (a program of whole
    output rows, slice s at block row s x slice_rows) split where a tile boundary falls inside a
    slice, as the compiler moves them (baco.passes.linalg_to_instgem): the slices, plus the tile
    boundaries inside the block, less those at a slice's start (14 slices of 14 rows at DIM 64: 17
    mvins, at DIM 16: 25). The count is whole; its slope is ceil(slice_rows / DIM)'s."""
    one = _ceil(slice_rows / pe)
    n, rows, dim = (torch.round(v.detach()).clamp(min=1.0) for v in
                    torch.broadcast_tensors(*(torch.as_tensor(v, dtype=torch.float64) for v in (slices, slice_rows, pe))))
    block, lcm = n * rows, rows * dim / torch.gcd(rows.long(), dim.long()).double()
    split = (n + torch.ceil(block / dim - 1e-9) - torch.ceil(block / lcm - 1e-9)) / n
    return torch.where(n > 1, one + (split - one.detach()), one)


def _step_loads(p, a_slices, zero_slices, padding=None):
    """A program's strips (p.mb, p.nb, p.kb of DIM) and a K step's loads of A and B into p (padding:
    kernel_program_terms')."""
    k, cfg, pe, rows_m, (_, bn, bk) = p.k, p.cfg, p.pe, p.rows_m, p.blocks
    p.mb, p.nb, p.kb = _ceil(rows_m / pe), _ceil(bn / pe), _ceil(bk / pe)
    mb, kb = p.mb, p.kb
    p.strip = strip = rows_m / mb       # mvins and mvouts move the rows that exist: ragged strips are short
    max_cols = torch.clamp(cfg.max_bytes / pe, min=1.0) * pe      # widest mvin (max_block_len blocks)
    slice_rows = rows_m / a_slices
    slice_strips = _slice_strips(a_slices, slice_rows, pe)
    a_chunks, b_chunks = _ceil(bk / max_cols), _ceil(bn / max_cols)
    column_share, zero_runs, run_rows = (0.0, 0.0, 0.0) if padding is None else padding
    if p.step_waits:    # mvins of the rows and columns that exist: ragged strips and chunks are short
        zero_fills = zero_slices * slice_strips * a_chunks * (k.dma_cmd_overhead + slice_rows / slice_strips) \
            + zero_runs * a_chunks * (k.dma_cmd_overhead + run_rows)
        # an mvin of several DIM-wide blocks writes its rows of each: the cycle model's hazard range
        # spans from its first row to its last block's, so each after the first into a row tile
        # waits for the one before to land (5x5 7x7 17>33 in one program on DIM 16: 6 of a step's
        # 10 A mvins); with several chunks the other chunks' mvins fill that wait
        same_tile = torch.clamp(a_slices * slice_strips - p.mb, min=0.0).detach()
        serial = torch.where((a_chunks.detach() == 1) & (bk.detach() > pe.detach()), same_tile * p.lat, 0.0)
        p.load_a = (a_slices - zero_slices) \
            * _dma(p, slice_rows * (1 - column_share) / slice_strips, bk / a_chunks, slice_strips * a_chunks) \
            + zero_fills + serial
        p.load_b = _dma(p, bk / kb, bn / b_chunks, kb * b_chunks)
    else:
        p.load_a = a_slices * _dma(p, strip, torch.minimum(bk, max_cols), slice_strips * a_chunks)
        p.load_b = _dma(p, torch.minimum(bk, pe), torch.minimum(bn, max_cols), kb * b_chunks)
    p.load = p.load_a + p.load_b
    p.a_chunks, p.b_chunks = a_chunks, b_chunks
    p.a_commands, p.b_commands = a_slices * slice_strips * a_chunks + zero_runs * a_chunks, kb * b_chunks
    p.load_commands = p.a_commands + p.b_commands


def _step_compute(p):
    """A K step's computes into p: their cycles, the pipeline depth (drain), the wait from the last
    compute until its result lands (out_wait), the GEMM's wait for loads (load_wait) and, with
    step_waits, the rows of one column under one weight block (group)."""
    k, pe, rows_m, mb, nb, kb = p.k, p.pe, p.rows_m, p.mb, p.nb, p.kb
    compute = kb * nb * (mb * k.compute_overhead + torch.maximum(rows_m, 4 * mb))
    p.drain = drain = k.array_depth_factor * pe
    p.out_wait = drain                               # from a step's last compute until its result lands
    p.load_wait = torch.zeros_like(compute)
    if not p.step_waits:
        p.rounds = ws_step_rounds(compute, pe, mb, nb, kb, drain)
        p.compute, p.load_wait = gemm_step_compute(compute, pe, mb, nb, kb, drain, p.dataflow, p.double_buffer)
        return
    p.group = group = compute / (kb * nb)            # the rows of one column under one weight block
    tile = group / mb + drain                        # one tile's compute until its result lands
    # a group's weights come in over DIM cycles from its predecessor's last compute on (the last
    # row strip's: a ragged one shorter than DIM leaves the array waiting, 49 rows on DIM 16)
    last = k.compute_overhead + torch.maximum(rows_m - (mb - 1) * pe, torch.full_like(rows_m, 4.0))
    pitch = group - last + torch.maximum(last, pe)
    columns = nb * pitch + nb * (kb - 1) * torch.maximum(pitch, tile)
    # the last column's chain on one tile: double-buffered it overlaps the next step's first
    # columns; single-buffered, it follows the other columns' computes, whose weights came in
    # while they waited for the step's loads
    chain = kb * tile if p.double_buffer else (nb - 1) * kb * group + kb * tile
    p.compute = torch.maximum(columns, chain)
    # a step whose first weight block is preloaded alone (DIM cycles, once its B has landed: the
    # step's first single-buffered) runs its first group after it, the others' weights as above
    p.compute_after_preload = pe + torch.maximum(columns - pitch + group, chain)
    p.out_wait = torch.where(chain >= columns, 0.0, drain)    # the chain on one tile ends landed


def _program_stores(p, out_int8, stored):
    """A program's stores into p (store; under_stores, what the next program's first loads run
    under) and its accumulator zero fill (zero_fill, in zero_chunks mvins a strip)."""
    k, cfg, pe, mb, nb, (_, bn, _) = p.k, p.cfg, p.pe, p.mb, p.nb, p.blocks
    out_bytes = cfg.input_bytes if out_int8 else cfg.acc_bytes
    p.store = store = (_dma(p, p.strip, torch.minimum(bn, pe) * out_bytes, mb * nb) + mb * nb * k.acc_scale_latency) \
        * stored
    # the next program's first loads (and computes on rows already stored) run under the last
    # rs_st stores: dispatch waits for a free store slot, then moves on
    p.under_stores = cfg.rs_st * store / (mb * nb)
    p.zero_chunks = _ceil(bn / (torch.clamp(torch.floor(cfg.max_bytes / (pe * cfg.acc_bytes)), min=1.0) * pe))
    p.zero_fill = mb * p.zero_chunks * (k.dma_cmd_overhead + pe)    # mvins from address 0, a cycle a row
    p.bias_load = torch.where(p.bias, _dma(p, p.strip, bn / p.zero_chunks * cfg.acc_bytes, mb * p.zero_chunks), 0.0)


def _without_k_loop(p):
    """(step, per program, hidden) of a program without a K loop: zero fill (or bias), loads, computes,
    stores in turn."""
    zero = torch.where(p.bias, p.bias_load, p.zero_fill)
    step = zero + p.load + p.lat + p.compute
    # the next program's zero fills run under these stores; its loads, behind them in the load
    # queue, wait for the stores to have read the rows the fills clear
    hidden = torch.minimum(p.under_stores, zero)
    return step, step + p.drain + p.store + p.lat - hidden, hidden


def _with_k_loop(p):
    """(step, per program, hidden) of a program whose K loop runs k_steps steps."""
    if p.step_waits:
        return _conv_programs(p, *_conv_step(p))
    return _gemm_programs(p)


def _gemm_programs(p):
    """_with_k_loop of the GEMM kernel (gemm_step_compute's step waits)."""
    cfg, load, load_b, lat, compute, kb, mb, nb = p.cfg, p.load, p.load_b, p.lat, p.compute, p.kb, p.mb, p.nb
    store, k_steps = p.store, p.k_steps
    if p.dataflow == "WS":
        step = _ws_step(p)
    elif p.double_buffer:
        step = torch.maximum(load + lat, compute + _os_spread_stall(p))
        # OS: a step's first compute starts once the previous step's first has landed, as the
        # cycle model runs them (a GEMV's one tile: 2x1x9277 in 2,1,64 on DIM 64, 0.65x without it)
        chained = p.pe + p.k.compute_overhead + p.drain
        step = step + torch.clamp(chained - step, min=0.0) * (k_steps - 1) / k_steps
    else:   # computes are dispatched after the step's loads but the last rs_ld: only those overlap
        overlap = torch.minimum(load_b, load * torch.clamp(cfg.rs_ld / p.load_commands, max=1.0))
        step = load + lat + torch.maximum(compute / kb, compute - overlap) + p.load_wait
    # the GEMM kernel's programs pipeline too, more simply: the next program's loads run under
    # this one's last depth and stores (double-buffered: its computes); `hidden` is the prologue
    ahead = torch.clamp(load + lat - compute, min=0.0) if p.double_buffer else load + lat
    tile_out = torch.clamp(p.drain + store / (mb * nb) - ahead, min=0.0)
    # double-buffered, the loads run ahead of the computes by one step: the pipeline's fill and
    # drain add the shorter of a step's loads and computes to its steps
    prologue = torch.minimum(load + lat, compute) if p.double_buffer else torch.zeros_like(load)
    per_program = torch.maximum(k_steps * step + tile_out, store + lat)
    # the last step's stores follow its computes in the one dispatch queue: the next program's
    # loads are dispatched once all but rs_st of them have been (store-bound programs serialise)
    queued = (k_steps - 1) * step + load + lat + store * (1 - torch.clamp(cfg.rs_st / (mb * nb), max=1.0))
    per_program = torch.maximum(per_program, queued)
    if not p.double_buffer:
        # the last program has no next one whose loads run under its tail: its last column's stores
        # follow its results, from the last weight block's first row strip on, one store at least
        # after its last compute, and the last lands in DRAM (the depth its last step counted: _ws_step
        # waits for its last compute to land); 128x64x33 in one program on DIM 64: 1,356 cycles on
        # the cycle model, 799 priced without, 1,286 with; per_program counted what of it the next
        # program's loads did not hide
        block = compute / (kb * nb)
        tail = lat + torch.maximum(store / nb - block + block / mb, store / (mb * nb))
        prologue = torch.clamp(tail - (per_program - k_steps * step), min=0.0)
    if p.dataflow == "OS":        # an OS program zero-fills its block (or loads its bias) before its loads
        per_program = per_program + torch.where(p.bias, p.bias_load, p.zero_fill)
    return step, per_program, prologue


def _os_spread_stall(p):
    """What a double-buffered OS K step's computes wait on the one dispatch queue: the next step's
    loads are spread a share before each row strip's computes (baco.passes.prefetch; the OS nest's
    outer loop runs over the row strips), so each share of load_commands / mb mvins is dispatched
    after the previous strip's computes, and the computes behind it once the last has entered the
    load station (rs_ld): all but rs_ld of the share issued and landed, less the computes the
    execute station still holds (rs_ex / 2 preload+compute pairs, one of them running); a program's
    last step has none to wait for (the stall on (k_steps - 1) / k_steps of the steps). 32x768x3072
    in 32/384/96 on DIM 16: 20 mvins a share, 12 waited for, ~690 cycles a row strip (the cycle
    model: ~660), which the steps' computes alone (4,896 a step) left out (0.78x)."""
    cfg, k = p.cfg, p.k
    mvin = p.load / p.load_commands
    held = p.load_commands / p.mb - cfg.rs_ld
    queued = (cfg.rs_ex / 2 - 1) * (p.pe + k.compute_overhead)
    stall = p.mb * torch.clamp(torch.where(held > 0, held * mvin + p.lat, 0.0) - queued, min=0.0)
    return stall * (p.k_steps - 1) / p.k_steps


def _ws_landed(p, j, k, i):
    """When the WS compute of column j, K strip k, row strip i of a GEMM K step has landed, from the
    step's first compute on (gemm_step_compute's timeline: column by column, a K strip's row
    strips back to back, each K strip round_ after the previous one)."""
    strip, group, round_ = p.rounds
    return j * (group + (p.kb - 1) * round_) + k * round_ + (i + 1) * strip + p.drain


def _ws_landed_at(p, n):
    """_ws_landed of the step's n-th compute (0-based, in issue order: j, k, i innermost)."""
    mb, kb = p.mb, p.kb
    return _ws_landed(p, torch.floor(n / (kb * mb)), torch.remainder(torch.floor(n / mb), kb), torch.remainder(n, mb))


def _station_landed(p):
    """(when, whether) the step's last compute enters the execute station: its rs_ex entries (a
    preload leaves when it issues, a compute when its result lands) hold the computes after the
    n-th and their preloads, so the n-th must have landed (from the step's first compute on);
    whether: the step has more computes than the station holds."""
    n = p.kb * p.nb * p.mb - p.cfg.rs_ex / 2 - 2
    return _ws_landed_at(p, torch.clamp(n, min=0.0)), n >= 0


def _ws_step(p):
    """A WS K step of the GEMM kernel, as the cycle model runs the stream: a step's loads (A's
    mvins row strip by row strip, a chunk of K strips each, then B's), then its computes (column
    by column, K strip by K strip, the row strips innermost), their weights preloaded alone (DIM
    cycles) once B's first strip has landed. The loads that follow a step's computes in the one
    dispatch queue (single-buffered the next step's, double-buffered the step after it, into the
    buffer this step read) are dispatched once the execute station takes this step's last compute
    (_station_landed), and each of A's mvins overwrites rows this step's last column reads: it
    starts once the compute that last reads them has landed, so A's loads end at the latest of
    (that compute + the A mvins from it on) over the mvins, extreme at the first and last row
    strip's first and last chunk (a GEMV of one row strip: its last mvin waits for the step's last
    compute, 2x1x9277). The next step's computes are dispatched once the load station (rs_ld) has
    room for the last of the loads before them; single-buffered they also wait for B's first strip
    (double-buffered their own loads came a step earlier). So with more computes a step than the
    execute station holds, or computes chained on few tiles, and more loads than the load station
    holds, even double-buffered steps serialise (97x1x1000 in 96,1,128 on DIM 16: 48 computes
    and 20 mvins a step). The step is the longer of that, its loads and its computes."""
    cfg, pe, kb, nb, mb = p.cfg, p.pe, p.kb, p.nb, p.mb
    a_mvin, b_mvin = p.load_a / p.a_commands, p.load_b / p.b_commands
    chunk_strips = torch.minimum(torch.clamp(torch.floor(cfg.max_bytes / pe), min=1.0), kb)
    a_loaded = torch.zeros_like(p.load)
    for i in (0.0, mb - 1):
        for c, k in ((0.0, chunk_strips - 1), (p.a_chunks - 1, kb - 1)):
            rest = p.a_commands - (i * p.a_chunks + c)      # A's mvins from this one on
            a_loaded = torch.maximum(a_loaded, _ws_landed(p, nb - 1, k, i) + rest * a_mvin)
    station, full = _station_landed(p)
    a_loaded = torch.maximum(a_loaded, torch.where(full, station + p.load_a, 0.0))
    # the loads before the next step's computes that must have left the load station: double-buffered,
    # the next step's loads are spread a share before each column's computes (baco.passes.prefetch), so
    # a column's computes wait behind one share (32x768x3072 in 32/384/96 on DIM 16: 40 mvins a step,
    # under 2 a column; priced 1.30x of the cycle model as if all 40 held the next step's computes)
    held = p.load_commands / (nb if p.double_buffer else 1.0) - cfg.rs_ld
    if p.double_buffer:
        left = torch.where(held >= p.a_commands, a_loaded + (held - p.a_commands) * b_mvin,
                           a_loaded - (p.a_commands - held) * a_mvin)
        next_compute = torch.where(held > 0, left + p.lat, 0.0) + pe
        return torch.maximum(torch.maximum(p.load + p.lat, p.compute), next_compute)
    next_compute = a_loaded + torch.maximum(p.b_chunks, held - p.a_commands) * b_mvin + p.lat + pe
    return torch.maximum(torch.maximum(p.load, p.compute), next_compute)


def _conv_step(p):
    """(step, trailing_loads) of the conv kernel's K step. B lands strip by strip (sub-block k),
    column chunk by chunk; column j's computes run once its chunk of the last strip has landed, so
    the computes trail the loads: they end one sub-block's computes after the last chunk, or,
    compute-bound, all of them but column 0's first kb - 1 sub-blocks after column 0's chunk of the
    last strip (trailing_loads: the step single-buffered)."""
    load, load_a, load_b, lat, compute, kb, nb = p.load, p.load_a, p.load_b, p.lat, p.compute, p.kb, p.nb
    sub_block = compute / (kb * nb)
    # the computes start with column 0's first weight block, preloaded alone once its strip of B
    # has landed (3x3 14x14 32>64 in one program on DIM 64: 64 of a step's 264 execute cycles)
    first = load_a + load_b / (kb * nb) + lat + p.compute_after_preload
    trailing_loads = torch.maximum(torch.maximum(load + lat + sub_block, first),
                                   load_a + load_b * ((kb - 1) * nb + 1) / (kb * nb) + lat + compute
                                   - (kb - 1) * sub_block)
    return (torch.maximum(load + lat, compute) if p.double_buffer else trailing_loads), trailing_loads


def _conv_programs(p, step, trailing_loads):
    """_with_k_loop of the conv kernel: its programs pipeline (kernel_program_terms says how)."""
    cfg, compute, kb, nb, mb, store, out_wait, group = p.cfg, p.compute, p.kb, p.nb, p.mb, p.store, p.out_wait, p.group
    load, load_a, load_b, lat, k_steps, double_buffer = p.load, p.load_a, p.load_b, p.lat, p.k_steps, p.double_buffer
    # The next program's commands follow this one's in the one dispatch queue: its first loads
    # are dispatched once this program's last computes fit the execute unit's reservation
    # station (a preload and a compute each) and all but rs_st of its last column's stores
    # have left the store station (they start as their tiles land).
    last_computes = compute * torch.clamp(cfg.rs_ex / 2 / (kb * nb * mb), max=1.0)
    store_one = store / (mb * nb)
    # The last column's store n (1-based) ends at the later of its tile landing + one store and
    # the first tile landing + n stores (the tiles land group / mb apart, the last out_wait after
    # the computes end); the next program's loads follow store mb - rs_st's end
    held = mb - cfg.rs_st
    stores_held = torch.where(held > 0, out_wait + torch.maximum(held * store_one - group * (mb - 1) / mb,
                                                                 store_one - group * cfg.rs_st / mb), -last_computes)
    # A program's first tile is out once what it reads has landed (a step loads A, then B
    # column by column; double-buffered, its loads were ahead) and its channel sub-blocks
    # have run; its stores then follow one another. When they take longer than the computes
    # after it, they are still queued as the computes end. Single-buffered, the next
    # program's loads wait behind all but rs_st of them, and its stores behind its loads and
    # computes (1x1 56x56 128>256 in programs of 1024 pixels on DIM 64: 64 int8 stores a
    # program against 16 computes a column). Double-buffered, the stores set the pace, with a
    # gap a program when its first tile (its first loads, all its K steps) takes longer than
    # the last rs_st stores before it (3x3 28x28 3>512, 11 rows a program on DIM 128: 9 steps)
    ahead = torch.zeros_like(load) if double_buffer else load_a + load_b / nb + lat
    # the last column's stores follow its tiles one by one, an earlier column's follow all its
    # computes in the queue: column 0's first store is dispatched once its last compute enters the
    # execute station (1x1 32x32 16>96 in 512,32,16 on DIM 16: 32 computes, then 32 stores)
    first_out = (k_steps - 1) * step + ahead + torch.where(
        nb > 1, kb * group - torch.minimum(cfg.rs_ex / 2 * group / mb, kb * group), group * ((kb - 1) + 1 / mb) + out_wait)
    stores_after = first_out + store - ((k_steps - 1) * step + compute if double_buffer else k_steps * step)
    if double_buffer:
        store_gap = torch.clamp(load_a / mb + load_b / nb + lat + first_out - cfg.rs_st * store_one, min=0.0)
    else:
        store_gap = torch.zeros_like(store)
        stores_held = torch.maximum(stores_held, stores_after - cfg.rs_st * store_one)
    next_dispatch = torch.maximum(-last_computes, stores_held)     # after this program's computes end
    if double_buffer:
        # its own K steps' loads run under the computes (step), the next program's first
        # step's only from its dispatch on; the first program's first step is loaded ahead
        # (a prologue): A's first strip, then B, then the rest of A, which its computes overlap
        next_loads = torch.clamp(load + lat + next_dispatch, min=0.0)
        per_program = (k_steps - 1) * step + compute + next_loads
        prologue = load_a / mb + load_b + lat
        # but nothing runs ahead of the first program: its computes cannot outrun its loads,
        # all on the one DMA (1x1 28x28 512>128 in one program of blocks 784,128,512 on DIM
        # 128: 29k cycles of loads under 3k of computes), so it ends no earlier than its
        # k_steps loads and the computes that trail the last of them (as single-buffered)
        # (its first tiles are out, and their stores run, as they would without this wait)
        first_program = prologue + (k_steps - 1) * step + compute
        first_wait = torch.clamp((k_steps - 1) * load + trailing_loads - first_program, min=0.0)
    else:           # the next program's loads overwrite rows this one reads: after its computes
        next_loads = torch.clamp(next_dispatch, min=0.0)
        per_program = k_steps * step + next_loads
        prologue = first_wait = torch.zeros_like(load)
    # the last program has no next one; its last column's stores are exposed: each tile's
    # stores follow its last rows, those the computes do not hide pile up (or all its stores
    # still queued)
    last_stores = torch.maximum(out_wait + torch.maximum(store_one, store / nb - group * (mb - 1) / mb),
                                stores_after)
    paced_by_steps = prologue + first_wait + p.programs * per_program - next_loads + last_stores + lat
    # or the stores set the pace from the first program's first tile on
    paced_by_stores = prologue + first_out + p.programs * (store + lat + store_gap) - store_gap
    per_program = torch.maximum(per_program, store + lat + store_gap)
    return step, per_program, torch.maximum(paced_by_steps, paced_by_stores) - p.programs * per_program


def gemm_step_compute(rows_compute, pe, mb, nb, kb, drain, dataflow: str, double_buffer: bool):
    """(cycles [B] of the computes of one K step of the GEMM kernel, cycles [B] the next step's loads
    wait after them without double buffering), given rows_compute, the array's cycles of the step's
    kb x nb x mb computes at one cycle a row (4-row floor, compute overhead), as the cycle model times
    them. WS runs the computes column by column (j), then sub-block by sub-block (k), the row strips
    (i) innermost under one preloaded DIM x DIM weight block: a preload's DIM weight-load cycles
    overlap the previous compute only, so a group of strips takes at least (its computes but the last)
    + DIM; and a sub-block's computes accumulate onto the tiles the previous sub-block wrote, each
    waiting until that result has landed (the strip's compute plus the pipeline depth: a GEMV's
    single tile pays it on every sub-block, 2x1x9277); double-buffered, nothing separates one step's
    computes from the next's, so a tile's chain runs on across steps. Without double buffering the
    next step's loads overwrite rows those computes read until their results land (the depth after
    the last). OS feeds DIM rows per compute (the transposer path, whatever the strip's rows) and
    keeps partial sums in the array."""
    if dataflow == "OS":
        k = DEFAULT_CONSTANTS
        return kb * nb * mb * (pe + k.compute_overhead), drain
    strip, group, round_ = ws_step_rounds(rows_compute, pe, mb, nb, kb, drain)
    compute = nb * (group + (kb - 1) * round_)
    return (torch.maximum(compute, kb * round_) if double_buffer else compute), drain


def ws_step_rounds(rows_compute, pe, mb, nb, kb, drain):
    """(strip, group, round_) [B] of a WS K step's computes (gemm_step_compute): one compute's
    cycles, a K strip's row strips under one weight block (their computes and what of the DIM
    weight-load cycles they do not cover), and the cycles from one K strip's computes to the next
    one's (accumulating onto the tiles the previous wrote, once its results have landed)."""
    strip = rows_compute / (kb * nb * mb)
    group = rows_compute / (kb * nb) + torch.clamp(pe - strip, min=0.0)
    return strip, group, torch.maximum(group, strip + drain)


def _gemm_blocks(layer: Layer, temporal, spatial):
    """((M, N, K), (BLOCK_M, BLOCK_N, BLOCK_K) [B]) of a GEMM layer run with the block sizes of the
    mappings' scratchpad tiles (M, N, K tensors [B] when `layer` is an explore.LayerStack)."""
    sC, sK = spatial
    blocks = kernel_blocks(layer, _tiles(temporal, sC, sK, layer)[2])
    return (_constant(layer.P * layer.Q * layer.N), _constant(layer.K), _constant(layer.C)), blocks


def compiled_program_counts(layer: Layer, temporal, spatial, hw, *, out_int8: bool = KERNEL_OUT_INT8,
                            dataflow: str = "WS") -> dict:
    """What the GEMM kernel compiled with the block sizes of the mapping's scratchpad tile moves and
    computes, counted as the cycle model counts its commands (baco/sim/timing.py stats: macs,
    registers, scratchpad/accumulator reads and writes, DRAM bytes in/out) [B]. Every program loads
    its BLOCK_M rows of A and BLOCK_N columns of B at each K step (A once per column of programs,
    B once per row of them: mvins of the rows and columns that exist, so the DRAM bytes are exact),
    stores its block of C once; each compute reads its A strip (rows x BLOCK_K) from the
    scratchpad, and with WS each weight block is preloaded into the array's registers once per
    program. The accumulator is read and written for every compute's output strip: with WS once
    per DIM-deep K strip, with OS once per K step (the partial sums stay in the array). A WS
    program's first compute into an output strip overwrites a whole DIM x DIM strip (at a ragged
    edge the accumulator columns past B's are written too, zeros: no MACs); OS programs and K = 1 ones (whose K loop is
    folded) zero-fill their whole block first, WS ones the stored columns' strips past the last
    row strip computed (mvins from address 0: accumulator writes, no DRAM bytes). `layer` may be an explore.LayerStack."""
    pe = torch.as_tensor(hw[0], dtype=temporal.dtype)
    (M, N, Kd), (bm, bn, bk) = _gemm_blocks(layer, temporal, spatial)
    programs_m, programs_n = _ceil(M / bm), _ceil(N / bn)
    return _program_counts(pe, (M, N, Kd), (bm, bn, bk), programs_m=programs_m, programs_n=programs_n,
                           strips_m=_strips(M, bm, pe), strips_n=_strips(N, bn, pe), k_strips=_strips(Kd, bk, pe),
                           no_k_loop=torch.as_tensor(Kd) == 1, out_int8=out_int8, dataflow=dataflow, bias=_bias(layer))


def _strips(n, block, pe):
    """DIM-wide strips of a dimension of n cut into blocks (the last one short)."""
    blocks = _ceil(n / block)
    return (blocks - 1) * _ceil(block / pe) + _ceil(torch.clamp(n - (blocks - 1) * block, min=1.0) / pe)


def conv_program_counts(layer: Layer, blocks, pe, *, rows=1, out_int8: bool = KERNEL_OUT_INT8) -> dict:
    """compiled_program_counts of a convolution compiled with blocks (BLOCK_M, BLOCK_N, BLOCK_K) [B]
    (conv_program_terms' program, WS): the GEMM of M = N·P·Q pixels by K output channels reducing
    over R·S·C, whose programs (one output row's BLOCK_M columns each, unless pointwise) re-read
    every tap's input rows from DRAM, and the weights once per program. A program of `rows` output
    rows past the last one (P not a multiple of rows) computes them too (their A slices are loaded,
    from DRAM where the tap's input row is inside the image, else zeros) and stores only the rows
    that exist. `layer` may be an explore.LayerStack (as in conv_program_terms)."""
    bm, bn, bk = blocks
    pe = torch.as_tensor(pe, dtype=torch.float64)
    padded_layer, layer = layer, _depthwise_as_conv(layer, bk)
    d, pointwise = _dims_as_tensors(layer), _one_program(layer)
    M, N, Kd = d.N * d.P * d.Q, d.K, d.R * d.S * d.C
    m_run, a_zero_rows, taps_run = M, 0.0, 1.0
    if pointwise:
        programs_m, strips_m = _ceil(M / bm), _strips(M, bm, pe)
    else:       # one output row, or `rows` whole rows (one column block, rows x Q A rows) per program
        rows = torch.as_tensor(rows, dtype=torch.float64)
        columns = bm / rows
        programs_m = d.N * _ceil(d.P / rows) * _ceil(d.Q / columns)
        strips_m = torch.where(rows > 1, programs_m * _ceil(bm / pe), d.N * d.P * _strips(d.Q, columns, pe))
        p_run = _ceil(d.P / rows) * rows
        m_run = d.N * p_run * d.Q
        # per filter row r, the run rows whose input row p·stride + r·dilation is inside the image
        last_in = (d.P - 1) * d.Hstride + (d.R - 1) * d.Hdilation
        in_image = sum(torch.where(r < d.R, torch.minimum(p_run, torch.div(last_in - r * d.Hdilation, d.Hstride,
                                                                             rounding_mode="floor") + 1), 0.0)
                       for r in range(int(d.R.max())))
        padded = _padded_stream(padded_layer, rows, columns)     # a padded layer: padded_stream_geometry
        a_zero_rows = _with_padding(padded, 5, d.N * d.Q * (p_run * d.R - in_image) * d.S)
        taps_run = _with_padding(padded, 0, 1.0)
    # a padded layer's programs run only the taps reaching the image: their A rows, weights and MACs
    return _program_counts(pe, (M, N, taps_run * Kd), blocks, programs_m=programs_m, programs_n=_ceil(N / bn),
                           strips_m=strips_m, strips_n=_strips(N, bn, pe),
                           k_strips=taps_run * d.R * d.S * _strips(d.C, bk, pe),
                           no_k_loop=_no_k_loop(layer, pointwise),
                           out_int8=out_int8, dataflow="WS", m_run=m_run,
                           a_zero_bytes=a_zero_rows * d.C * _ceil(N / bn), bias=_bias(layer))


def _program_counts(pe, dims, blocks, *, programs_m, programs_n, strips_m, strips_n, k_strips, no_k_loop,
                    out_int8: bool, dataflow: str, m_run=None, a_zero_bytes=0.0, bias=False) -> dict:
    """compiled_program_counts of a block program over an M x N output reducing over K (dims), with
    programs_m x programs_n programs, strips_m / strips_n DIM strips of output rows / columns,
    k_strips DIM-deep reduction strips per output;
    m_run output rows computed (default M; more when programs compute rows that are not stored),
    a_zero_bytes of their A loaded as zeros (no DRAM bytes); bias (bool or [B]): every program's block
    starts from the bias (kernel_program_terms), the rows computed and columns that exist, int32 from
    DRAM, in place of an OS or K = 1 program's zero fill."""
    (M, N, Kd), (bm, bn, bk) = dims, blocks
    m_run = M if m_run is None else m_run
    a_written, b_bytes = m_run * Kd * programs_n, Kd * N * programs_m
    a_bytes = a_written - a_zero_bytes
    out_bytes = GemminiConfig().input_bytes if out_int8 else GemminiConfig().acc_bytes
    weights = b_bytes if dataflow == "WS" else torch.zeros_like(b_bytes)
    a_reads = m_run * Kd * strips_n
    run = m_run * N * torch.ones_like(bm)
    outputs = M * N * torch.ones_like(bm)
    macs = run * Kd
    block_strips = programs_m * programs_n * _ceil(bm / pe) * _ceil(bn / pe)
    if dataflow == "OS":                 # the whole block zero-filled, every compute accumulates
        updates, zero_fill = run * _ceil(Kd / bk), block_strips * pe * pe
    else:
        overwritten = strips_m * strips_n * pe * pe
        updates = torch.where(no_k_loop, run * k_strips, overwritten + run * (k_strips - 1))
        # the fused first K step zero-fills only the strips its store reads (the stored columns'
        # row strips past the rows computed), not the column strips past the stored columns
        zero_fill = torch.where(no_k_loop, block_strips, (programs_m * _ceil(bm / pe) - strips_m) * strips_n) * pe * pe
    bias = torch.as_tensor(bias)
    biased = torch.where(bias, run, 0.0)
    zero_fill = torch.where(bias & (torch.as_tensor(no_k_loop) | (dataflow == "OS")), 0.0, zero_fill)
    return {"macs": macs, "registers": weights,
            "scratchpad_reads": weights + a_reads, "scratchpad_writes": a_written + b_bytes,
            "accumulator_reads": updates + outputs, "accumulator_writes": updates + zero_fill + biased,
            "dram_bytes_in": a_bytes + b_bytes + biased * GemminiConfig().acc_bytes,
            "dram_bytes_out": outputs * out_bytes}


def conv_program_energy(layer: Layer, blocks, hw, *, rows=1, out_int8: bool = KERNEL_OUT_INT8):
    """Energy (µJ) [B] of a convolution compiled with blocks [B] on hw = (pe_dim, sp_kb, acc_kb):
    conv_program_counts priced by baco.gemmini.energy.energy_pj (the simulator's sum)."""
    pe, sp_kb, acc_kb = (torch.as_tensor(v, dtype=torch.float64) for v in hw)
    counts = conv_program_counts(layer, blocks, pe, rows=rows, out_int8=out_int8)
    return energy.energy_pj(counts, sp_kb=sp_kb, acc_kb=acc_kb, dim=pe) * 1e-6


def compiled_program_energy(layer: Layer, temporal, spatial, hw, *, out_int8: bool = KERNEL_OUT_INT8,
                            dataflow: str = "WS"):
    """Energy (µJ) [B] of the compiled GEMM kernel: compiled_program_counts priced by
    baco.gemmini.energy.energy_pj, the sum the cycle model reports. Differentiable in the factors
    and the hardware (pe_dim, sp_kb, acc_kb)."""
    pe, sp_kb, acc_kb = (torch.as_tensor(v, dtype=temporal.dtype) for v in hw)
    counts = compiled_program_counts(layer, temporal, spatial, hw, out_int8=out_int8, dataflow=dataflow)
    return energy.energy_pj(counts, sp_kb=sp_kb, acc_kb=acc_kb, dim=pe) * 1e-6


def compiled_program_cycles(layer: Layer, temporal, spatial, hw, **schedule):
    """Analytical cycles [B] of the compiled GEMM kernel (see compiled_program_terms)."""
    return compiled_program_terms(layer, temporal, spatial, hw, **schedule)["cycles"]


__all__ = ["Cost", "evaluate", "evaluate_text", "cost_from_factors",
           "compiled_program_counts", "compiled_program_energy", "compiled_program_cycles"]
