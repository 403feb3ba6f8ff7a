"""Co-exploration of per-layer mappings and one shared Gemmini by gradient descent.

The search runs many starts at once as one batched torch program.  Per layer,
the tiling factors are continuous log-space parameters relaxed over the
layer's tile sizes (relax.py, ceil-divided tiles): every forward pass is a legal integer mapping.
The hardware is inferred from the mappings (hwinfer.py: smooth max over
layers of what each mapping needs, rounded to a legal Gemmini with a
straight-through estimator), so every forward pass is also a valid design
point, and its exact network EDP is recorded.  Adam descends
log(energy) + log(cycles) of the count-weighted network plus penalties; the
Gumbel temperature is annealed; every few hundred steps each start snaps
back to its best design so far and re-picks its loop orders among the
canonical ones by evaluation.  A final discrete local search (moving a prime
factor between levels, changing a loop order; every layer's moves of several
designs costed in one batch) polishes the best designs, then iterated local
search kicks the best one: random multi-move kicks, and moves of the shared
hardware to a neighbouring Gemmini with every layer refitted to it
(fit_to_hardware), which single-layer moves cannot make.
With importance=True the descent is a task scheduler over the layers instead
(importance.py); max_area_mm2 bounds the design's area (arch.area_mm2); a
checkpoint.Checkpointer makes the run resumable.

Determinism: with a seed and a fixed number of steps the result is the same
on every run; a time budget makes the number of steps depend on the machine.
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field, replace

import torch
from tqdm.auto import tqdm

from baco.problem.dims import DIMS, DRAM_LEVEL, NUM_LEVELS
from baco.problem.layer import FIELDS, Layer
from baco.tuner import costmodel, fusion, kernel_model
from baco.tuner.arch import DEFAULT_HARDWARE, MAX_BUFFER_KB, MAX_PE_DIM, MIN_PE_DIM, Hardware, area_mm2
from baco.tuner.default_mapping import default_mapping
from baco.tuner.descent import PENALTY_WEIGHT, Adam
from baco.tuner.hwinfer import (acc_unit_kb, is_legal, requirements_from_factors, round_hardware, round_pe_dim,
                               smooth_max)
from baco.tuner.importance import importance_search
from baco.tuner.mapping import Mapping, default_schedule_mapping, is_kernel_layer, is_pointwise, validate
from baco.tuner.points import Tiling, order_indices, stack_tilings, unstack_tilings
from baco.tuner.relax import (C_INDEX, K_INDEX, ORDER_CHOICES, MappingSpace, StackedSpace, TemperatureSchedule,
                              capacity_penalty, covering_dram_factor)
from baco.tuner.whole_model import UntunedSteps

# the C library's tilings on these Gemminis start the descent (the default one and wider arrays with
# proportionally larger buffers): cheap, valid and far better than random points on large layers
START_HARDWARE = (DEFAULT_HARDWARE, Hardware(32, 512, 128), Hardware(64, 1024, 256), Hardware(128, 2048, 512))
RANDOM_START_RANGE = 10.0   # a random start must be within this factor of the best heuristic start's EDP
SETUP_SHARE = 0.15
DESCENT_SHARE = 0.6     # of a time budget, at most, for the starting points
POLISHED = 3           # best designs of the descent that are hill-climbed
TWIN_POLISH_SHARE = 0.5     # of a fusion-aware search's polish: spent as the search without fusion polishes
TWIN_FULL_GAIN = 0.1        # ... where fusion saves at most this at the best design found (less where more)
WHOLE_MOVES_POLISHED = 3    # best hardware moves and crossovers of a new best design that are hill-climbed
KICKS_AT_ONCE = 4      # kicked designs hill-climbed together (local_search_batch: about the time of one)
# design points per batched evaluation in the polish, about: one call of a large network's many
# hardware targets or kicked designs would otherwise take seconds past a deadline
BATCH_POINTS = 2048
# descent steps between snaps of every start back to its best design (with re-picked loop orders):
# a 20 s search runs only 100-200 steps; snapping every 30 rather than 150 measured BERT at 20 s
# 8.57/8.62/8.64e8 instead of 8.97/9.08/8.76e8 (seeds 0-2), ResNet-50 and ViT-B/16 the same or better
SNAP_EVERY = 30


def single_threaded(fn):
    """Run a search with one torch thread: its tensors are tiny, and intra-op threads only contend
    (on a loaded 2-core machine a step is several times slower with two)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)
    return run


# ------------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------------
@dataclass
class Result:
    """A design: one hardware and one mapping per layer, with the count-weighted network totals."""
    hw: Hardware
    mappings: list[Mapping]
    cycles: float
    energy_uj: float
    edp: float
    per_layer: list = field(default_factory=list)   # costmodel.Cost per layer (one instance, not count-weighted)
    method: str = "baco"
    wall_s: float = 0.0
    evaluations: int = 0
    trace: list = field(default_factory=list)   # (seconds, best network EDP so far) at each improvement
    cycle_model: str = "compiled"               # kernel_model.CYCLE_MODELS: what `cycles` predicts
    timeloop_cycles: float = 0.0                # count-weighted network cycles of the Timeloop-matched model
    timeloop_energy_uj: float = 0.0             # and energy
    fusion: dict | None = None                  # fusion.describe's edges and groups, with the unfused totals
    untuned_cycles: float = 0.0                 # of `cycles`: the program's steps no layer is tuned for
    untuned_energy_uj: float = 0.0              # of `energy_uj` (whole_model.UntunedSteps on `hw`)
    program: str = "baco"       # what the layers run: baco's compiled kernels, or "library": the C library's

    @property
    def timeloop_edp(self) -> float:
        """The design's EDP under the Timeloop-matched model (as DOSA and the thesis compare)."""
        return self.timeloop_cycles * self.timeloop_energy_uj


def evaluate_design(layers: list[Layer], mappings: list[Mapping], hw: Hardware, *, method: str = "",
                    wall_s: float = 0.0, evaluations: int = 0, cycle_model: str = "compiled",
                    program: str = "baco", untuned: UntunedSteps | None = None,
                    default_programs: bool = False) -> Result:
    """Exact cost of a design (kernel_model.evaluate per layer: kernel layers' cycles and schedules
    from the compiled program unless cycle_model="timeloop"; program="library": kernel layers run the
    C library's tiled matmul; default_programs: convolutions run their kernel's default program),
    plus the whole program's untuned steps on hw if given; raises ValueError if any mapping does not
    pass the validator on hw (under the cycle model's capacity rule: Timeloop's buffers for
    cycle_model="timeloop")."""
    per_layer = []
    for layer, mapping in zip(layers, mappings, strict=True):
        problems = validate(mapping, layer, hw, cycle_model)
        if problems:
            raise ValueError(f"invalid mapping for layer {layer.name or layer.key} on {hw}: {'; '.join(problems)}")
        per_layer.append(kernel_model.evaluate(layer, mapping, hw, cycle_model, program, default_programs))
    cycles = sum(layer.count * c.cycles for layer, c in zip(layers, per_layer))
    energy = sum(layer.count * c.energy_uj for layer, c in zip(layers, per_layer))
    timeloop = sum(layer.count * c.timeloop_cycles for layer, c in zip(layers, per_layer))
    timeloop_energy = sum(layer.count * c.timeloop_energy_uj for layer, c in zip(layers, per_layer))
    result = Result(hw, list(mappings), cycles, energy, cycles * energy, per_layer, method, wall_s, evaluations,
                    cycle_model=cycle_model, timeloop_cycles=timeloop, timeloop_energy_uj=timeloop_energy,
                    program=program)
    return with_untuned(result, untuned)


def with_untuned(result: Result, untuned: UntunedSteps | None) -> Result:
    """The result with the untuned steps' cycles and energy on its hardware added to its totals."""
    if untuned:
        result.untuned_cycles, result.untuned_energy_uj = untuned.cost(result.hw)
        result.cycles += result.untuned_cycles
        result.energy_uj += result.untuned_energy_uj
        result.edp = result.cycles * result.energy_uj
    return result


# ------------------------------------------------------------------------------------------------
# The batched network objective (shared with the baselines)
# ------------------------------------------------------------------------------------------------
@dataclass
class BatchCost:
    cycles: torch.Tensor        # [B] count-weighted network cycles
    energy_uj: torch.Tensor     # [B]
    hardware: list[Hardware]    # [B] the legal hardware each point ran on
    penalty: torch.Tensor       # [B] capacity over-use on a fixed hardware (0 when inferred)
    fused: torch.Tensor | None = None       # [B, E] the fused edges (a problem with fusion)
    relaxation: torch.Tensor | None = None  # [B] the fusion relaxation's capacity penalty (descent only)

    @property
    def edp(self) -> torch.Tensor:
        return self.cycles * self.energy_uj


class NetworkProblem:
    """Layers with their mapping spaces, and the batched cost of (mappings, hardware) design points.

    With fixed_hw the hardware is given (mappings that do not fit are penalised and reported as invalid);
    otherwise it is inferred from the mappings: the smallest legal Gemmini that runs every layer.
    cycle_model: kernel_model.CYCLE_MODELS ("compiled": kernel layers cost their compiled program).
    fusion: a fusion.FusionGraph of these layers: the cost is the fused network's (fusion.fused_cost),
    the fused edges those of fusion_mask (the descent's best point's) where they fit, or of the
    descent's sigma.
    untuned: the rest of a whole model's program (whole_model.UntunedSteps): its cycles and energy on
    each point's hardware add to the layers' (no gradient: they depend on the hardware only).
    ext_spad: every inferred Gemmini has master's ext-spad commands (Hardware.ext_spad: a version,
    never searched; a fused chain may then run on the loop unit, priced as its program on each
    point's Gemmini: fusion.fused_cost); a fixed one's is its own.
    """

    def __init__(self, layers: list[Layer], *, fixed_hw: Hardware | None = None, max_pe: int = MAX_PE_DIM,
                 max_area_mm2: float | None = None, cycle_model: str = "compiled",
                 fusion_graph: fusion.FusionGraph | None = None, untuned: UntunedSteps | None = None,
                 ext_spad: bool = False):
        if not layers:
            raise ValueError("nothing to explore: no layers")
        if not isinstance(ext_spad, bool):
            raise TypeError(f"ext_spad must be a bool, got {ext_spad!r}")
        if fixed_hw is not None and ext_spad and not fixed_hw.ext_spad:
            raise ValueError(f"ext_spad: the fixed hardware {fixed_hw} has no ext-spad commands")
        if fusion_graph is not None and [(l.key, l.count) for l in fusion_graph.layers] != \
                [(l.key, l.count) for l in layers]:
            raise ValueError("fusion_graph: its layers are not the layers searched")
        self.layers = list(layers)
        self.counts = [float(getattr(layer, "count", 1)) for layer in self.layers]
        self.fixed_hw = fixed_hw
        self.ext_spad = fixed_hw.ext_spad if fixed_hw else ext_spad
        self.max_pe = fixed_hw.pe_dim if fixed_hw else max_pe
        self.max_area_mm2 = max_area_mm2
        self.cycle_model = kernel_model.check_cycle_model(cycle_model)
        self.spaces = [MappingSpace(layer.dims, max_spatial=self.max_pe) for layer in self.layers]
        self.network_cost = NetworkCost(self.layers, self.counts, self.cycle_model)
        self.untuned = untuned
        if fusion_graph is not None:
            fusion_graph = fusion.search_graph(fusion_graph, self.cycle_model)
            self.fusion_terms = fusion.FusionTerms(fusion_graph, self.cycle_model)
            self.fusion_mask = torch.ones(len(fusion_graph.edges), dtype=torch.bool)
        self.fusion = fusion_graph
        self.evaluations = 0
        self.t0, self.best_edp, self.trace = time.perf_counter(), math.inf, []

    def note(self, edp: torch.Tensor, penalty: torch.Tensor) -> None:
        """Count evaluations and record the best valid design point so far (the convergence trace)."""
        self.evaluations += edp.shape[0]
        low = float(torch.where(penalty > 0, torch.inf, edp.detach()).min())
        if low < self.best_edp:
            self.best_edp = low
            self.trace.append((time.perf_counter() - self.t0, low))

    def array_rows(self, pe: torch.Tensor):
        """The array dim buffers are counted in, for B points whose largest spatial factor is pe [B]."""
        if self.fixed_hw is not None:
            return float(self.fixed_hw.pe_dim)
        return torch.tensor([float(round_pe_dim(p)) for p in pe.detach().tolist()], dtype=torch.float64)

    def infer_hardware(self, pe: torch.Tensor, sp: torch.Tensor, acc: torch.Tensor, smooth: bool):
        """(hardware [B], straight-through hardware tensors, penalty [B]) from the array need pe [B]
        (the exact max over layers) and the per-layer buffer needs sp, acc [L, B]."""
        B = pe.shape[0]
        if self.fixed_hw is not None:
            hw_t = tuple(torch.full((B,), float(v), dtype=torch.float64)
                         for v in (self.fixed_hw.pe_dim, self.fixed_hw.sp_kb, self.fixed_hw.acc_kb))
            penalty = (capacity_penalty(sp, self.fixed_hw.sp_kb) + capacity_penalty(acc, self.fixed_hw.acc_kb)).sum(0)
            return [self.fixed_hw] * B, hw_t, penalty
        exact = sp.max(0).values, acc.max(0).values
        if smooth and sp.shape[0] > 1:
            # the gradient of the smooth max (every layer near the largest need gets one), the value of
            # the exact max: the overshoot could round up to a larger Gemmini than the design's own, on
            # which the point would be costed (and recorded) as no returned design runs
            sp, acc = (x + (smooth_max(y) - smooth_max(y).detach()) for x, y in zip(exact, (sp, acc)))
        else:
            sp, acc = exact
        # beyond the largest buildable buffers a point is invalid: penalised, costed on the largest
        penalty = capacity_penalty(sp, MAX_BUFFER_KB) + capacity_penalty(acc, MAX_BUFFER_KB)
        sp, acc = sp.clamp(max=MAX_BUFFER_KB), acc.clamp(max=MAX_BUFFER_KB)
        hardware = [round_hardware(p, s, a, self.ext_spad) for p, s, a in
                    zip(pe.detach().tolist(), sp.detach().tolist(), acc.detach().tolist())]
        hw_t = straight_through_hardware(pe, sp, acc, hardware)
        if self.max_area_mm2 is not None:
            # the rounded design's area, with the gradient of the continuous requirement
            penalty = penalty + capacity_penalty(area_mm2(*hw_t), self.max_area_mm2)
        return hardware, hw_t, penalty

    def buffer_needs(self, temporal: list[torch.Tensor], spatial: list[torch.Tensor], rows_of,
                     layers: list[int] | None = None):
        """Each layer's scratchpad and accumulator needs (KB [n, B], hwinfer.requirements_from_factors
        under the cycle model's capacity rule, buffers counted for a rows_of-wide array) of all layers
        or of `layers` (indices; temporal and spatial are lists over them), in one stacked call."""
        members = list(range(len(self.layers))) if layers is None else list(layers)
        B, n = temporal[0].shape[0], len(members)
        layer, rows = self.layers[members[0]], rows_of
        if n > 1:
            layer = self.network_cost.stack(members, B)
            rows = torch.as_tensor(rows_of, dtype=torch.float64).expand(B).repeat(n)
        need = requirements_from_factors(layer, torch.cat(temporal), torch.cat(spatial), rows, self.cycle_model)
        return need["sp_kb"].reshape(n, B), need["acc_kb"].reshape(n, B)

    def cost(self, temporal: list[torch.Tensor], spatial: list[torch.Tensor], order: list[torch.Tensor],
             smooth: bool = False, sigma: torch.Tensor | None = None) -> BatchCost:
        """Network cost of B design points; per layer temporal [B,4,7], spatial [B,2] (C,K), order [B].

        Differentiable w.r.t. the factor tensors (through the inferred hardware too when smooth=True)
        and, with fusion, the fusion variables sigma [B, E] (None: fusion_mask).
        """
        if self.fusion is not None and self.fusion.edges:    # without edges: the layer-by-layer cost
            hardware, cycles, energy, penalty, fused, relaxation = fusion.fused_cost(
                self, temporal, spatial, order, order_indices(), smooth, sigma)
            cycles, energy = self.add_untuned(hardware, cycles, energy)
            return BatchCost(cycles, energy, hardware, penalty, fused, relaxation)
        # the array dim is the exact max: spatial factors are integers <= max_pe in every forward pass,
        # and a smooth max would overshoot the largest array; buffers are counted in rows of that array
        pe = torch.stack([s.max(1).values for s in spatial]).max(0).values
        rows_of = self.array_rows(pe)
        sp, acc = self.buffer_needs(temporal, spatial, rows_of)
        hardware, hw_t, penalty = self.infer_hardware(pe, sp, acc, smooth)
        cycles, energy = self.add_untuned(hardware, *self.network_cost(temporal, spatial, order, hw_t))
        self.note(cycles * energy, penalty)
        return BatchCost(cycles, energy, hardware, penalty)

    def add_untuned(self, hardware: list[Hardware], cycles: torch.Tensor, energy: torch.Tensor):
        """(cycles, energy) [B] of the layers plus the untuned steps on each point's hardware."""
        if not self.untuned:
            return cycles, energy
        extra = torch.tensor([self.untuned.cost(h) for h in hardware], dtype=torch.float64)
        return cycles + extra[:, 0], energy + extra[:, 1]

    def score(self, tilings: list[list[Tiling]]) -> BatchCost:
        """Cost of B integer design points given as tilings[layer][b] (no gradient)."""
        with torch.no_grad():
            stacked = [stack_tilings(ts) for ts in tilings]
            return self.cost([s[0] for s in stacked], [s[1] for s in stacked], [s[2] for s in stacked])

    def result(self, design: list[Tiling], method: str, wall_s: float) -> Result:
        """The exact, validated Result of one design point (hardware inferred unless fixed)."""
        hw = self.fixed_hw or self.score([[t] for t in design]).hardware[0]
        check_area(hw, self.max_area_mm2)
        result = evaluate_design(self.layers, [t.to_mapping() for t in design], hw, method=method,
                                 wall_s=wall_s, evaluations=self.evaluations, cycle_model=self.cycle_model)
        result.trace = list(self.trace)
        if self.fusion is not None:
            fusion.fuse_result(self, result, self.fusion_mask)
        return with_untuned(result, self.untuned)


def check_area(hw: Hardware, max_area_mm2: float | None) -> None:
    """The final hard check of an area budget: no design over it is ever returned."""
    if max_area_mm2 is not None and hw.area_mm2 > max_area_mm2 * (1 + 1e-9):
        raise ValueError(f"no design within the area budget: the best found, {hw.pe_dim}x{hw.pe_dim} with "
                         f"{hw.sp_kb:g} KB + {hw.acc_kb:g} KB, is {hw.area_mm2:.3f} mm2 > {max_area_mm2:g} mm2")


def straight_through_hardware(pe, sp, acc, hardware: list[Hardware]):
    """Forward: the legal rounded hardware; backward: identity to the continuous requirement."""
    def st(x, values):
        v = torch.tensor(values, dtype=torch.float64)
        return x + (v - x).detach()
    return (st(pe, [h.pe_dim for h in hardware]), st(sp, [h.sp_kb for h in hardware]),
            st(acc, [h.acc_kb for h in hardware]))


# ---- the cost model's tensor interface (with hwinfer.requirements_from_factors) ---------------------------
class LayerStack:
    """The constants of several layers as tensors with one row per design point (layer-major,
    `rows` points per layer), so the cost models cost all their mappings in one call
    (costmodel.cost_from_factors, kernel_model.kernel_layer_tensors and conv_program broadcast them)."""

    def __init__(self, layers: list[Layer], rows: int):
        self.layers, self.rows = list(layers), rows
        for f in FIELDS:
            setattr(self, f, torch.tensor([float(getattr(l, f)) for l in layers],
                                          dtype=torch.float64).repeat_interleave(rows))
        self.macs = torch.tensor([float(l.macs) for l in layers], dtype=torch.float64).repeat_interleave(rows)
        self.depthwise = torch.tensor([l.depthwise for l in layers]).repeat_interleave(rows)


def _timeloop_tensors(layer, temporal, spatial, order, hw_t):
    out = costmodel.cost_from_factors(layer, temporal, spatial[:, 0], spatial[:, 1], order, hw_t)
    return out["cycles"], out["energy_uj"]


def _kernel_tensors(layer, temporal, spatial, order, hw_t):
    return kernel_model.kernel_layer_tensors(layer, temporal, spatial, order, hw_t)[:2]


def _conv_tensors(layer, temporal, spatial, order, hw_t):
    return kernel_model.conv_program(layer, temporal, spatial, hw_t)[:2]


class NetworkCost:
    """Count-weighted network (cycles [B], energy µJ [B]) of per-layer batches of B mappings, each
    group of layers in one stacked call (explore.LayerStack): the layers whose cycles are
    Timeloop-matched (kernel_model.timeloop_costed), the GEMM layers costed by their compiled
    program (kernel_model.kernel_layer_tensors), and the convolutions costed by theirs
    (kernel_model.conv_program), pointwise ones and the others apart (different programs).
    stacked=False costs every layer in a call of its own: the reference the stacked calls are tested
    and timed against (benchmarks/search_speed.py)."""

    def __init__(self, layers: list[Layer], counts: list[float], cycle_model: str, stacked: bool = True):
        self.layers, self.cycle_model = layers, cycle_model
        timeloop = [i for i, l in enumerate(layers) if kernel_model.timeloop_costed(l, cycle_model)]
        gemms = [i for i, l in enumerate(layers) if i not in timeloop and is_kernel_layer(l)]
        convs = [i for i in range(len(layers)) if i not in timeloop + gemms]
        groups = ((timeloop, _timeloop_tensors), (gemms, _kernel_tensors),
                  ([i for i in convs if is_pointwise(layers[i])], _conv_tensors),
                  ([i for i in convs if not is_pointwise(layers[i])], _conv_tensors))
        self.groups = groups if stacked else tuple(([i], cost) for members, cost in groups for i in members)
        self.counts = counts
        self._stacks: dict[tuple, LayerStack] = {}

    def stack(self, members: list[int], rows: int) -> LayerStack:
        """The LayerStack of these layers, `rows` points each (cached)."""
        key = (tuple(members), rows)
        if key not in self._stacks:
            self._stacks[key] = LayerStack([self.layers[i] for i in members], rows)
        return self._stacks[key]

    def __call__(self, temporal, spatial, order, hw_t, layers: list[int] | None = None):
        """temporal/spatial/order: lists over the layers (or over `layers`, indices of a subset)."""
        cycles, energy = self.per_layer(temporal, spatial, order, hw_t, layers)
        return cycles.sum(0), energy.sum(0)

    def per_layer(self, temporal, spatial, order, hw_t, layers: list[int] | None = None, weighted: bool = True):
        """Count-weighted (cycles, energy) [n, B] of each of the n layers (all, or `layers`; one
        instance of each with weighted=False)."""
        index = list(range(len(self.layers))) if layers is None else list(layers)
        at = {i: k for k, i in enumerate(index)}
        B = temporal[0].shape[0]
        cycles = [None] * len(index)
        energy = [None] * len(index)
        for group, tensors in self.groups:
            members = [i for i in group if i in at]
            if not members:
                continue
            n = len(members)
            if n == 1:
                layer, hw = self.layers[members[0]], hw_t
            else:
                layer = self.stack(members, B)
                hw = tuple(torch.as_tensor(h, dtype=torch.float64).expand(B).repeat(n) for h in hw_t)
            t = torch.cat([temporal[at[i]] for i in members])
            s = torch.cat([spatial[at[i]] for i in members])
            o = order_indices()[torch.cat([order[at[i]] for i in members])]
            c, e = tensors(layer, t, s, o, hw)
            c, e = c.view(n, B), e.view(n, B)
            if weighted:
                w = torch.tensor([self.counts[i] for i in members], dtype=torch.float64).unsqueeze(1)
                c, e = w * c, w * e
            for k, (ck, ek) in enumerate(zip(c, e)):
                cycles[at[members[k]]], energy[at[members[k]]] = ck, ek
        return torch.stack(cycles), torch.stack(energy)


# ------------------------------------------------------------------------------------------------
# Starting points
# ------------------------------------------------------------------------------------------------
def heuristic_tilings(layers: list[Layer], hw: Hardware) -> list[Tiling] | None:
    """The Gemmini-default library's mapping of every layer on hw, or None where it has none."""
    out = []
    for layer in layers:
        try:
            mapping = default_mapping(layer, hw)
        except (ValueError, NotImplementedError):
            return None
        out.append(Tiling.from_mapping(mapping))
    return out


def layerwise_start(problem: NetworkProblem, generator: torch.Generator, samples: int = 256) -> list[Tiling]:
    """On the problem's fixed hardware, where the library has no mapping of some layer: per layer,
    the library's mapping where it has one, else the best of `samples` random mappings that fit
    (a fixed Gemmini makes each layer's fit its own)."""
    hw = problem.fixed_hw
    pool = random_tilings(problem, samples, generator)
    with torch.no_grad():
        stacked = [stack_tilings(ts) for ts in pool]
        temporal, spatial, order = ([s[k] for s in stacked] for k in range(3))
        sp, acc = problem.buffer_needs(temporal, spatial, float(hw.pe_dim))
        hw_t = tuple(torch.full((samples,), float(v), dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
        cycles, energy = problem.network_cost.per_layer(temporal, spatial, order, hw_t, weighted=False)
        score = torch.where((sp > hw.sp_kb + 1e-9) | (acc > hw.acc_kb + 1e-9), torch.inf, cycles * energy)
    library = [heuristic_tilings([layer], hw) for layer in problem.layers]
    design = []
    for i, layer in enumerate(problem.layers):
        if library[i] is not None:
            design.append(library[i][0])
            continue
        b = int(torch.argmin(score[i]))
        if not math.isfinite(float(score[i, b])):
            raise ValueError(f"no mapping of layer {layer.name or layer.key} found that fits {hw}")
        design.append(pool[i][b])
    return design


def random_tilings(problem: NetworkProblem, n: int, generator: torch.Generator,
                   spatial_limit: float | None = None) -> list[list[Tiling]]:
    """n random legal design points as tilings[layer][b] (random split of each dim, random orders)."""
    out = []
    for space in problem.spaces:
        th, sp = space.random_params(n, generator)
        sample = space.sample(th, sp, 1.0, generator, spatial_limit=spatial_limit)
        order = torch.randint(len(ORDER_CHOICES), (n,), generator=generator)
        out.append(unstack_tilings(sample.temporal, sample.spatial, order))
    return out


def expired(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


FIRST_DEADLINE_CHUNK = 8    # random points in the first timed chunk, before a point's cost is known


def best_random(problem: NetworkProblem, n: int | None, k: int, generator: torch.Generator,
                deadline: float | None = None, chunk: int = 64, keep: list | None = None,
                on_chunk=None) -> list[tuple[float, list[Tiling]]]:
    """The k best distinct (edp, design) among n random design points (None: until the deadline) and
    `keep`, drawn and scored `chunk` at a time; stops at the deadline once one chunk is scored.
    With a deadline the chunks start at FIRST_DEADLINE_CHUNK points and at most double, capped by
    what the time left allows at the last chunk's time a point (doubling bounds the overshoot when
    that chunk's points were cached): a cold chunk of 64 on ResNet-50 walks ~1,600 loop programs
    (~8 s), which ran a 2 s budget to 9 s. on_chunk(points drawn so far) after each chunk."""
    best, drawn, last, per_point = list(keep or []), 0, 0, None
    while (n is None or drawn < n) and not (drawn and expired(deadline)):
        m = chunk if n is None else min(chunk, n - drawn)
        if deadline is not None:
            m = min(m, FIRST_DEADLINE_CHUNK if per_point is None
                    else max(1, min(2 * last, int((deadline - time.perf_counter()) / per_point))))
            last = m
        pool = random_tilings(problem, m, generator)
        merged = [[d[i] for _, d in best] + pool[i] for i in range(len(problem.layers))]
        t0 = time.perf_counter()
        best = best_points(problem, merged, k, chunk=len(merged[0]))
        per_point = (time.perf_counter() - t0) / m
        drawn += m
        if on_chunk is not None:
            on_chunk(drawn)
    return best


def best_points(problem: NetworkProblem, candidates: list[list[Tiling]], k: int,
                chunk: int = 256) -> list[tuple[float, list[Tiling]]]:
    """The k best distinct design points (edp, design) among candidates[layer][b]."""
    n = len(candidates[0])
    scored = []
    for lo in range(0, n, chunk):
        part = [ts[lo:lo + chunk] for ts in candidates]
        cost = problem.score(part)
        edp = torch.where(cost.penalty > 0, torch.inf, cost.edp).tolist()
        scored += [(edp[b], [ts[b] for ts in part]) for b in range(len(part[0]))]
    scored.sort(key=lambda x: x[0])
    seen, best = set(), []
    for edp, design in scored:
        key = tuple(design)
        if key not in seen and math.isfinite(edp):
            seen.add(key)
            best.append((edp, design))
        if len(best) == k:
            break
    return best


def best_orders(problem: NetworkProblem, design: list[Tiling], deadline: float | None = None) -> list[Tiling]:
    """Re-pick each layer's loop orders among the canonical ones, one layer at a time, by evaluation
    (layers not reached by the deadline keep their orders)."""
    return best_orders_batch(problem, [design], deadline)[0]


def best_orders_batch(problem: NetworkProblem, designs: list[list[Tiling]],
                      deadline: float | None = None) -> list[list[Tiling]]:
    """best_orders of many designs at once.  Loop orders do not change the inferred hardware, so every
    layer's cost under every order is computed in one batched evaluation on each design's hardware;
    the layers' orders are then re-picked one at a time, each against the network totals so far."""
    designs = [list(d) for d in designs]
    n_orders, D, L = len(ORDER_CHOICES), len(designs), len(problem.layers)
    if expired(deadline) or not designs:
        return designs
    with torch.no_grad():
        hardware = problem.score([[d[i] for d in designs] for i in range(L)]).hardware
        hw_t = tuple(torch.tensor([float(getattr(hardware[k], a)) for k in range(D)],
                                  dtype=torch.float64).repeat_interleave(n_orders)
                     for a in ("pe_dim", "sp_kb", "acc_kb"))
        stacked = [stack_tilings([Tiling(d[i].temporal, d[i].spatial_c, d[i].spatial_k, o)
                                  for d in designs for o in range(n_orders)]) for i in range(L)]
        cycles, energy = problem.network_cost.per_layer([s[0] for s in stacked], [s[1] for s in stacked],
                                                        [s[2] for s in stacked], hw_t)
    cycles, energy = cycles.view(L, D, n_orders), energy.view(L, D, n_orders)
    chosen = torch.tensor([[d[i].order for d in designs] for i in range(L)]).unsqueeze(2)
    now_c, now_e = cycles.gather(2, chosen).squeeze(2), energy.gather(2, chosen).squeeze(2)   # [L, D]
    total_c, total_e = now_c.sum(0), now_e.sum(0)
    for i in range(L):
        edp = (total_c - now_c[i]).unsqueeze(1) + cycles[i]
        edp = edp * ((total_e - now_e[i]).unsqueeze(1) + energy[i])
        pick = edp.argmin(1)
        for k, d in enumerate(designs):
            d[i] = Tiling(d[i].temporal, d[i].spatial_c, d[i].spatial_k, int(pick[k]))
        new_c, new_e = cycles[i].gather(1, pick.unsqueeze(1)).squeeze(1), energy[i].gather(1, pick.unsqueeze(1)).squeeze(1)
        total_c, total_e = total_c - now_c[i] + new_c, total_e - now_e[i] + new_e
        now_c[i], now_e[i] = new_c, new_e
    return designs


# ------------------------------------------------------------------------------------------------
# Discrete local search (the polish after rounding)
# ------------------------------------------------------------------------------------------------
def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return sorted(set(out))


def neighbours(tiling: Tiling, space: MappingSpace, max_pe: int) -> list[Tiling]:
    """Tilings one move away: a prime factor moved between two slots of a dim (the DRAM loop then
    covering what is left of a ragged dim; moves that would run a loop past the dim's end are
    dropped), or another order."""
    out = []
    t = [list(row) for row in tiling.temporal]
    for j, d in enumerate(DIMS):
        # slots: ("s", None) spatial (C and K only), ("t", level) temporal
        slots = [("t", l) for l in range(NUM_LEVELS) if l == DRAM_LEVEL or space.allowed[l, j]]
        if j in (C_INDEX, K_INDEX):
            slots.append(("s", None))

        def get(slot):
            if slot[0] == "s":
                return tiling.spatial_c if j == C_INDEX else tiling.spatial_k
            return t[slot[1]][j]
        for src in slots:
            for p in _prime_factors(get(src)):
                for dst in slots:
                    if dst == src:
                        continue
                    if dst[0] == "s" and get(dst) * p > max_pe:
                        continue
                    new_t = [row[:] for row in t]
                    sc, sk = tiling.spatial_c, tiling.spatial_k
                    for slot, mul in ((src, None), (dst, p)):
                        if slot[0] == "s":
                            v = (sc if j == C_INDEX else sk)
                            v = v // p if mul is None else v * p
                            sc, sk = (v, sk) if j == C_INDEX else (sc, v)
                        else:
                            l = slot[1]
                            new_t[l][j] = new_t[l][j] // p if mul is None else new_t[l][j] * p
                    # the DRAM loop re-covers what is left of a ragged dim
                    dram = covering_dram_factor(new_t, sc, sk, j, space.dims[d])
                    if dram is None:
                        continue
                    new_t[DRAM_LEVEL][j] = dram
                    moved = tuple(map(tuple, new_t))
                    if (moved, sc, sk) != (tiling.temporal, tiling.spatial_c, tiling.spatial_k):
                        out.append(Tiling(moved, sc, sk, tiling.order))
    out += [Tiling(tiling.temporal, tiling.spatial_c, tiling.spatial_k, o)
            for o in range(len(ORDER_CHOICES)) if o != tiling.order]
    return out


def local_search(problem: NetworkProblem, design: list[Tiling], edp: float, deadline: float | None,
                 max_rounds: int = 50) -> tuple[float, list[Tiling]]:
    """Hill climbing over single-layer moves from one design (local_search_batch of one)."""
    return local_search_batch(problem, [design], [edp], deadline, max_rounds)[0]


def local_search_batch(problem: NetworkProblem, designs: list[list[Tiling]], edps: list[float],
                       deadline: float | None, max_rounds: int = 50) -> list[tuple[float, list[Tiling]]]:
    """Hill climbing over single-layer moves from each of several designs until each is a local
    optimum (or the deadline); returns (edp, design) for each.

    Each round costs every layer's moves of every unfinished design in one batched evaluation
    (move_table: the cost model's time hardly depends on the batch, so this is several times faster
    than a call per layer and design), then applies each design's best move of each improving layer,
    the largest gains first, as far as it pays: the combinations of the 1, 2, ... best moves are
    costed together (one more evaluation for all designs), and the best of them is kept."""
    out = [(e, list(d)) for e, d in zip(edps, designs)]
    live = list(range(len(out)))
    group = max(1, BATCH_POINTS // (64 * len(problem.layers)))     # designs per evaluation
    for _ in range(max_rounds):
        if expired(deadline) or not live:
            break
        still = []
        for lo in range(0, len(live), group):
            if expired(deadline):
                break
            still += _climb_once(problem, out, live[lo:lo + group])
        live = still
    return out


def _climb_once(problem: NetworkProblem, out: list, live: list[int]) -> list[int]:
    """One round of local_search_batch for the designs out[k], k in live (updated in place); returns
    those that moved."""
    options, costs = move_table(problem, [out[k][1] for k in live])
    combos, still = [], []
    for k, opts, edp_of in zip(live, options, costs):
        edp, design = out[k]
        best = sorted((float(e.min()), i, int(e.argmin())) for i, e in enumerate(edp_of)
                      if e.numel() and float(e.min()) < edp * (1 - 1e-12))
        if not best:
            continue
        out[k] = (best[0][0], [opts[i][best[0][2]] if i == best[0][1] else t for i, t in enumerate(design)])
        still.append(k)
        trial = list(out[k][1])
        for _, i, b in best[1:]:
            trial[i] = opts[i][b]
            combos.append((k, list(trial)))
    if combos:
        cost = problem.score([[d[i] for _, d in combos] for i in range(len(problem.layers))])
        for (k, design), e in zip(combos, torch.where(cost.penalty > 0, torch.inf, cost.edp).tolist()):
            if e < out[k][0]:
                out[k] = (e, design)
    return still


def move_table(problem: NetworkProblem, designs: list[list[Tiling]]) -> tuple[list, list]:
    """Every single-layer move of each design: per design and layer its n neighbouring tilings and
    the network EDP [n] of the design with each in place (inf where invalid), all in one batched
    evaluation."""
    options = [[neighbours(t, space, problem.max_pe) for t, space in zip(d, problem.spaces)] for d in designs]
    batch = [[] for _ in problem.layers]
    for design, opts in zip(designs, options):
        for k, moves in enumerate(opts):
            for i, column in enumerate(batch):
                column += moves if k == i else [design[i]] * len(moves)
    sizes = [len(moves) for opts in options for moves in opts]
    if not batch[0]:
        edps = [torch.zeros(0, dtype=torch.float64)] * len(sizes)
    else:
        cost = problem.score(batch)
        edps = torch.split(torch.where(cost.penalty > 0, torch.inf, cost.edp), sizes)
    L = len(problem.layers)
    return options, [list(edps[d * L:(d + 1) * L]) for d in range(len(designs))]


def hardware_neighbours(hw: Hardware, max_pe: int = MAX_PE_DIM) -> list[Hardware]:
    """The legal Gemminis one resource away from hw: the array, the scratchpad or the accumulator
    halved or doubled, or the accumulator one granule smaller or larger (the accumulator rounded to
    whole granules of the array it is on); of hw's version (ext_spad)."""
    def acc_on(pe, kb):
        unit = acc_unit_kb(pe)
        return max(unit, round(kb / unit) * unit)
    unit = acc_unit_kb(hw.pe_dim)
    moves = [(hw.pe_dim // 2, hw.sp_kb, hw.acc_kb), (hw.pe_dim * 2, hw.sp_kb, hw.acc_kb),
             (hw.pe_dim, hw.sp_kb // 2, hw.acc_kb), (hw.pe_dim, hw.sp_kb * 2, hw.acc_kb)]
    moves += [(hw.pe_dim, hw.sp_kb, acc) for acc in (hw.acc_kb / 2, hw.acc_kb * 2, hw.acc_kb - unit, hw.acc_kb + unit)]
    out = []
    for pe, sp, acc in moves:
        if MIN_PE_DIM <= pe <= max_pe and 1 <= sp <= MAX_BUFFER_KB:
            h = Hardware(pe, int(sp), int(acc_on(pe, acc)), hw.ext_spad)
            if h != hw and h not in out and h.acc_kb <= MAX_BUFFER_KB and is_legal(h.pe_dim, h.sp_kb, h.acc_kb):
                out.append(h)
    return out


def fit_to_hardware(problem: NetworkProblem, design: list[Tiling], targets: list[Hardware],
                    rounds: int = 4, deadline: float | None = None) -> list[tuple[float, list[Tiling]]]:
    """The design's mappings moved onto each of several fixed hardware targets: coordinate descent
    over single-layer moves, every layer's moves for a group of targets (about BATCH_POINTS points)
    costed in one batched evaluation per round (on a fixed hardware a layer's cost is its own, so the network EDP of any combination
    follows exactly). A layer that does not fit a target takes the move that brings it closest (the
    cheapest of those that fit). Per target, (network EDP, the moved design) on the design's inferred
    hardware (larger than the target where `rounds` rounds, or the time to the deadline, did not make
    every layer fit; inf if invalid).

    With the hardware held, several layers can shrink (or grow) together, which single-layer moves
    on the inferred hardware cannot do: the shared hardware only moves when every layer at its
    limit moves."""
    per = len(design) * 64          # points one target costs per round, about (a tiling has ~60 neighbours)
    group = max(1, BATCH_POINTS // per)
    out = []
    for lo in range(0, len(targets), group):
        if expired(deadline):
            break
        out += _fit_group(problem, design, targets[lo:lo + group], rounds, deadline)
    return out


def _fit_group(problem: NetworkProblem, design: list[Tiling], targets: list[Hardware], rounds: int,
               deadline: float | None) -> list[tuple[float, list[Tiling]]]:
    """fit_to_hardware of a few targets in one batched evaluation per round."""
    T, L = len(targets), len(design)
    designs = [list(design) for _ in targets]
    caps = torch.tensor([[h.pe_dim, h.sp_kb, h.acc_kb] for h in targets], dtype=torch.float64)   # [T, 3]
    for _ in range(rounds):
        if expired(deadline):
            break
        options = [[[t] + neighbours(t, space, h.pe_dim) for t, space in zip(d, problem.spaces)]
                   for d, h in zip(designs, targets)]
        B = max(len(o) for opts in options for o in opts)
        stacked = [stack_tilings([t for opts in options for t in opts[i] + [opts[i][0]] * (B - len(opts[i]))])
                   for i in range(L)]
        temporal, spatial, order = ([s[k] for s in stacked] for k in range(3))
        cap = caps.repeat_interleave(B, 0)                                                           # [T*B, 3]
        with torch.no_grad():
            cycles, energy = problem.network_cost.per_layer(temporal, spatial, order, tuple(cap.T))
            sp, acc = problem.buffer_needs(temporal, spatial, cap[:, 0])
        pe = torch.stack([s.max(1).values for s in spatial])
        over = sum(torch.relu(torch.log(need / cap[:, r])) for r, need in enumerate((pe, sp, acc)))
        over = torch.where(over < 1e-9, 0.0, over).view(L, T, B)
        cycles, energy = cycles.view(L, T, B), energy.view(L, T, B)
        changed = False
        for k in range(T):
            total_c, total_e = float(cycles[:, k, 0].sum()), float(energy[:, k, 0].sum())
            moved = False
            for i in range(L):
                n = len(options[k][i])
                c, e, o = cycles[i, k, :n], energy[i, k, :n], over[i, k, :n]
                edp = (total_c - float(c[0]) + c) * (total_e - float(e[0]) + e)
                b = int(torch.argmin(torch.where(o <= float(o.min()) + 1e-12, edp, torch.inf)))
                if float(o[b]) < float(o[0]) - 1e-12 or (float(o[0]) == 0 and float(edp[b]) < float(edp[0]) * (1 - 1e-12)):
                    designs[k][i], moved = options[k][i][b], True
                    total_c += float(c[b] - c[0])
                    total_e += float(e[b] - e[0])
            changed = changed or moved
        if not changed:
            break
    cost = problem.score([[d[i] for d in designs] for i in range(L)])
    return list(zip(torch.where(cost.penalty > 0, torch.inf, cost.edp).tolist(), designs))


def iterated_local_search(problem: NetworkProblem, design: list[Tiling], edp: float, deadline: float | None,
                          generator: torch.Generator, kicks: int, kick_moves: int = 3,
                          on_kick=None, donors: list[list[Tiling]] = ()) -> tuple[float, list[Tiling]]:
    """Escape local optima: random kick_moves-move kicks from the best design, each followed by hill
    climbing, KICKS_AT_ONCE of them together. Before each kick, a best design not scanned yet is
    moved as a whole: fitted to each of its hardware_neighbours (fit_to_hardware: a move of the shared
    hardware takes every layer at its limit moving together, which no kick of a few single-layer
    moves makes), and crossed with each of the donors (other good designs: one layer's tiling taken
    from the donor, as a genetic crossover does); the best WHOLE_MOVES_POLISHED of these are
    hill-climbed.
    on_kick(kicks done, edp, design) after each kick (for checkpoints)."""
    scanned = None
    kick = 0
    while kick < kicks and not expired(deadline):
        if problem.fixed_hw is None and scanned != design:
            scanned = design
            hw = problem.score([[t] for t in design]).hardware[0]
            targets = [h for h in hardware_neighbours(hw, problem.max_pe)
                       if problem.max_area_mm2 is None or h.area_mm2 <= problem.max_area_mm2]
            moved = fit_to_hardware(problem, design, targets, deadline=deadline) if targets else []
            crossed = [[donor[i] if k == i else t for k, t in enumerate(design)]
                       for donor in donors for i in range(len(design)) if donor[i] != design[i]]
            if crossed and not expired(deadline):
                cost = problem.score([[d[i] for d in crossed] for i in range(len(design))])
                moved += zip(torch.where(cost.penalty > 0, torch.inf, cost.edp).tolist(), crossed)
            moved = sorted((x for x in moved if math.isfinite(x[0])), key=lambda x: x[0])[:WHOLE_MOVES_POLISHED]
            for trial_edp, trial in local_search_batch(problem, [d for _, d in moved], [e for e, _ in moved],
                                                       deadline):
                if trial_edp < edp:
                    edp, design = trial_edp, trial
            if design is not scanned:
                continue
        trials = []
        for _ in range(min(KICKS_AT_ONCE, kicks - kick, max(1, BATCH_POINTS // (64 * len(design))))):
            trial = list(design)
            for _ in range(kick_moves):
                i = int(torch.randint(len(trial), (1,), generator=generator))
                options = neighbours(trial[i], problem.spaces[i], problem.max_pe)
                if options:
                    trial[i] = options[int(torch.randint(len(options), (1,), generator=generator))]
            trials.append(trial)
        cost = problem.score([[t[i] for t in trials] for i in range(len(design))])
        valid = [(float(e), t) for e, p, t in zip(cost.edp, cost.penalty, trials) if float(p) == 0]
        for trial_edp, trial in local_search_batch(problem, [t for _, t in valid], [e for e, _ in valid], deadline):
            if trial_edp < edp:
                edp, design = trial_edp, trial
        kick += len(trials)
        if on_kick is not None:
            on_kick(kick, edp, design)
    return edp, design


# ------------------------------------------------------------------------------------------------
# Gradient descent over the relaxed mappings
# ------------------------------------------------------------------------------------------------
class Budget:
    """Steps and wall-clock limits of one search phase."""

    def __init__(self, steps: int | None, deadline: float | None, default_steps: int):
        self.steps = steps if steps is not None else (None if deadline is not None else default_steps)
        self.deadline = deadline

    def plan(self, step_time: float, done: int) -> int:
        """Total steps once the time per step is known."""
        if self.deadline is None:
            return self.steps
        fit = done + max(0, int((self.deadline - time.perf_counter()) / max(step_time, 1e-6)))
        return fit if self.steps is None else min(self.steps, fit)

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline


def gradient_descent(problem: NetworkProblem, inits: list[list[Tiling]], *, budget: Budget, lr: float,
                     generator: torch.Generator, tau_start: float = 1.0, tau_end: float = 0.03,
                     round_every: int = SNAP_EVERY, samples_per_start: int = 8, progress: bool = True,
                     desc: str = "baco", state: dict | None = None, on_step=None) -> list[tuple[float, list[Tiling]]]:
    """Relaxed multi-start descent; returns the best (edp, design) each start visited.

    Each step draws samples_per_start Gumbel samples of every start (one batched evaluation: the
    cost model's time hardly depends on the batch); the loss averages them, lowering the variance
    of the straight-through gradient, and every sample is a candidate design.
    on_step(state) is called after every step with the descent's whole state (for checkpoints);
    `state` continues from such a state.
    """
    S, L, M = len(inits), len(problem.layers), samples_per_start
    if state is None:
        params, orders = [], []
        for i, space in enumerate(problem.spaces):
            th, sp = zip(*(space.params_from_factors(d[i].temporal, d[i].spatial_c, d[i].spatial_k) for d in inits))
            params += [torch.stack(th).requires_grad_(), torch.stack(sp).requires_grad_()]
            orders.append(torch.tensor([d[i].order for d in inits], dtype=torch.int64))
        if problem.fusion is not None:      # the fusion variables' logits [S, E], after the layers' pairs
            params.append(torch.full((S, len(problem.fusion.edges)), fusion.SIGMA_INIT_LOGIT,
                                     dtype=torch.float64).requires_grad_())
        best_edp = [math.inf] * S
        best = [list(d) for d in inits]
        init_cost = problem.score([[d[i] for d in inits] for i in range(L)])
        for s in range(S):
            if float(init_cost.penalty[s]) == 0:
                best_edp[s] = float(init_cost.edp[s])
        total = budget.plan(1.0, 0) if budget.deadline is None else None
        state = {"params": params, "orders": orders, "opt": Adam(params, lr=lr), "best_edp": best_edp,
                 "best": best, "step": 0, "total": total}
    params, orders, opt, best_edp, best = (state[k] for k in ("params", "orders", "opt", "best_edp", "best"))
    total, step = state["total"], state["step"]
    bar = tqdm(total=total, desc=desc, disable=not progress, leave=False, initial=step)
    space = StackedSpace(problem.spaces, S * M)
    t_start, step0 = time.perf_counter(), step
    while True:
        if step == step0 + 5 and budget.deadline is not None:
            total = budget.plan((time.perf_counter() - t_start) / 5, step)
            bar.total = total
            bar.refresh()
        if (total is not None and step >= total) or budget.expired():
            break
        tau = TemperatureSchedule(tau_start, tau_end, max(total or 200, 1))(step)
        # every layer's factors in one batched draw (StackedSpace rows are layer-major)
        smp = space.sample(torch.cat([params[2 * i].repeat_interleave(M, 0) for i in range(L)]),
                           torch.cat([params[2 * i + 1].repeat_interleave(M, 0) for i in range(L)]), tau, generator)
        temporal, spatial = smp.temporal.view(L, S * M, *smp.temporal.shape[1:]), smp.spatial.view(L, S * M, 2)
        rep_orders = [o.repeat_interleave(M, 0) for o in orders]
        sigma = torch.sigmoid(params[2 * L]).repeat_interleave(M, 0) if problem.fusion is not None else None
        cost = problem.cost(list(temporal), list(spatial), rep_orders, smooth=True, sigma=sigma)
        penalty = smp.penalty.view(L, S * M).sum(0) + cost.penalty
        if cost.relaxation is not None:
            penalty = penalty + cost.relaxation
        loss = (torch.log(cost.cycles) + torch.log(cost.energy_uj) + PENALTY_WEIGHT * penalty).sum() / M
        opt.zero_grad()
        loss.backward()
        opt.step()

        edp = torch.where(cost.penalty > 0, torch.inf, cost.edp.detach()).view(S, M)
        low, arg = edp.min(1)
        improved = [s for s in range(S) if float(low[s]) < best_edp[s]]
        if improved:
            designs = [unstack_tilings(t, sp, o) for t, sp, o in zip(temporal, spatial, rep_orders)]
            for s in improved:
                b = s * M + int(arg[s])
                best_edp[s], best[s] = float(low[s]), [designs[i][b] for i in range(L)]
        step += 1
        bar.update(1)
        if step % 20 == 0:
            bar.set_postfix(edp=f"{min(best_edp):.4g}", tau=f"{tau:.3f}")
        if step % round_every == 0 and not budget.expired():
            _snap(problem, params, orders, best, budget.deadline)
        if on_step is not None:
            state["step"], state["total"] = step, total
            on_step(state)
    bar.close()
    return sorted(zip(best_edp, best), key=lambda x: x[0])


def _snap(problem: NetworkProblem, params: list[torch.Tensor], orders: list[torch.Tensor],
          best: list[list[Tiling]], deadline: float | None) -> None:
    """Move every start back to its best design so far, with re-picked loop orders."""
    best[:] = best_orders_batch(problem, best, deadline)
    with torch.no_grad():
        for s, design in enumerate(best):
            for i, space in enumerate(problem.spaces):
                th, sp = space.params_from_factors(design[i].temporal, design[i].spatial_c, design[i].spatial_k)
                params[2 * i][s] = th
                params[2 * i + 1][s] = sp
                orders[i][s] = design[i].order


# ------------------------------------------------------------------------------------------------
# The co-exploration entry point
# ------------------------------------------------------------------------------------------------
@single_threaded
def coexplore(layers: list[Layer], *, seed: int = 0, steps: int | None = None, starts: int = 8,
              time_budget_s: float | None = None, progress: bool = True, init_hw: Hardware | None = None,
              lr: float = 0.08, round_every: int = SNAP_EVERY, polish: bool = True, kicks: int = 10,
              random_pool: int = 64, importance: bool = False, max_area_mm2: float | None = None,
              checkpoint=None, cycle_model: str = "compiled", fixed_hw: Hardware | None = None, ext_spad=False,
              fusion_graph: fusion.FusionGraph | None = None, untuned: UntunedSteps | None = None) -> Result:
    """Co-optimise one mapping per layer and one shared Gemmini for the network EDP.

    layers carry their repeat counts (the objective is (sum count*energy) * (sum count*cycles)).
    starts: parallel descents, started from the Gemmini-default mapping on init_hw (default: on each
    of START_HARDWARE) and from the best of random_pool*starts random design points.
    steps: descent steps (default 600, or as many as the time budget allows).
    importance: instead of moving every layer at every step, give slices of steps to the layer
    with the largest estimated gain (importance.py, thesis §6.5), from the best start.
    max_area_mm2: an area budget (a penalty in the search; the returned design never exceeds it).
    polish: hill-climb the best designs afterwards, then `kicks` random kicks of the best one and
    moves of its hardware (iterated_local_search; until the deadline when there is a time budget).
    cycle_model: what the search minimises for kernel layers' cycles (kernel_model: "compiled" costs
    the program the compiler emits and picks its schedule; "timeloop", the Timeloop-matched model).
    checkpoint: a checkpoint.Checkpointer; the search saves its state through it and, when it
    resumes, continues from the saved state (a resumed time budget counts the time already spent).
    fixed_hw: search the mappings for this Gemmini only (FADiff's fixed configurations); the
    descent starts from the default mappings on it.
    fusion_graph: a fusion.FusionGraph of `layers`: the descent optimises a fusion variable per
    edge with the mappings (fusion.py); the result carries the fused edges and groups. With
    importance=True the fusion variables are not descended: every edge is fused where it fits.
    untuned: the rest of a whole model's program (whole_model.UntunedSteps, e.g. from
    baco.model.workload.model_workload): part of the objective and of the result's totals, so the
    EDP gain is the whole program's.
    ext_spad: every searched Gemmini has master's ext-spad commands (NetworkProblem's ext_spad).
    """
    saved = checkpoint.load() if checkpoint is not None else None
    t0 = time.perf_counter() - (saved["elapsed"] if saved else 0.0)
    deadline = t0 + time_budget_s if time_budget_s is not None else None
    generator = torch.Generator().manual_seed(seed)
    problem = NetworkProblem(layers, max_area_mm2=max_area_mm2, cycle_model=cycle_model, fixed_hw=fixed_hw,
                             fusion_graph=fusion_graph, untuned=untuned, ext_spad=ext_spad)
    if fixed_hw is not None:
        if init_hw is not None and init_hw != fixed_hw:
            raise ValueError(f"init_hw {init_hw} differs from the fixed hardware {fixed_hw}")
        init_hw = fixed_hw

    def save(phase: str, **state) -> None:
        fused = {"fusion_mask": problem.fusion_mask} if fusion_graph is not None else {}
        checkpoint.save({"phase": phase, "elapsed": time.perf_counter() - t0, "rng": generator.get_state(),
                         "inits": inits, **fused, **state})

    if saved:
        generator.set_state(saved["rng"])
        inits = saved["inits"]
        if fusion_graph is not None:
            problem.fusion_mask = saved["fusion_mask"]
    else:
        # set-up (the default mapping's orders, the random pool) gets at most SETUP_SHARE of a time budget
        setup_deadline = None if deadline is None else t0 + SETUP_SHARE * time_budget_s
        inits = _starts(problem, init_hw, starts, random_pool, generator, setup_deadline)

    if saved is None or saved["phase"] == "descent":
        # with a time budget: DESCENT_SHARE for the descent, the rest to polish and then kick the best design
        gd_deadline = None if deadline is None else t0 + DESCENT_SHARE * time_budget_s
        on_step = None
        if checkpoint is not None:
            def on_step(state):
                if checkpoint.due():
                    save("descent", descent=state)
        found = _descend(problem, inits, Budget(steps, gd_deadline, 600), importance=importance, lr=lr,
                         generator=generator, round_every=round_every, progress=progress, on_step=on_step,
                         resume=saved["descent"] if saved else None)
        found = _ranked(problem, found, deadline, max_area_mm2)
        best_edp, best_design = found[0]
        polished = kicks_done = 0
    else:
        found, polished, kicks_done = saved["found"], saved["polished"], saved["kicks_done"]
        best_edp, best_design = saved["best_edp"], saved["best_design"]

    if polish:
        best_edp, best_design = _polish(problem, found, best_edp, best_design, polished, kicks_done, deadline,
                                        generator, kicks, save if checkpoint is not None else None,
                                        checkpoint)
    return _not_worse_than_the_baseline(problem, problem.result(best_design, "baco", time.perf_counter() - t0))


def library_design(layers: list[Layer], *, cycle_model: str = "compiled", wall_s: float = 0.0,
                   evaluations: int = 0, untuned: UntunedSteps | None = None) -> Result:
    """Gemmini-default running the C library's programs: its heuristic tiling of every layer
    (default_mapping: ValueError / NotImplementedError where it has none) costed as the library's
    own programs (evaluate_design with program="library")."""
    mappings = [default_mapping(layer, DEFAULT_HARDWARE) for layer in layers]
    return evaluate_design(layers, mappings, DEFAULT_HARDWARE, method="gemmini-default", wall_s=wall_s,
                           evaluations=evaluations, cycle_model=cycle_model, program="library", untuned=untuned)


def default_build(problem: NetworkProblem, wall_s: float = 0.0) -> Result | None:
    """baco's build without a design as a design of the search's kind: Gemmini-default (with the
    problem's ext-spad commands), every layer its kernel's default schedule
    (mapping.default_schedule_mapping), unfused, the untuned steps included. Its convolutions are
    marked to run their kernel's default program (Cost.schedule_source "default", which result.json
    carries and baco.compile_model compiles as no schedule given) and priced as that program
    (whole_model.default_schedule_cost's): a 1x1 layer's default may be LOOP_CONV_WS programs no
    mapping says (MobileNetV2 64x64's 16->96 expansion, whose mapping's schedule is the GEMM of all
    its pixels: priced and run as that GEMM, 31,325 and 31,534 cycles on the ISS, before the marker;
    now priced 30,110, run as LoopConv 30,043). None where a layer has no default schedule there
    (none fits its memories)."""
    hw = replace(DEFAULT_HARDWARE, ext_spad=problem.ext_spad)
    cfg = hw.to_gemmini_config()
    try:
        mappings = [default_schedule_mapping(layer, cfg) for layer in problem.layers]
    except ValueError:          # default_gemm_schedule / default_conv_schedule: no schedule fits
        return None
    result = evaluate_design(problem.layers, mappings, hw, method="baco-default", wall_s=wall_s,
                             evaluations=problem.evaluations, cycle_model=problem.cycle_model, default_programs=True)
    if problem.fusion is not None:      # its edges, none fused, as every fused network's result lists them
        fusion.fuse_result(problem, result, torch.zeros(len(problem.fusion.edges), dtype=torch.bool), fill=False)
    return with_untuned(result, problem.untuned)


def _not_worse_than_the_baseline(problem: NetworkProblem, found: Result) -> Result:
    """The better, by the search's objective, of the design found and the build without a tuned
    design: for a layer-by-layer problem on v0.7.2's Gemminis the baseline its gain is reported
    against, Gemmini-default running the C library's programs (baselines.gemmini_default; on tiny
    layers, e.g. 34x4x1 or 4287x1x4, the CPU issuing baco's kernel costs more than the library's one
    LOOP_WS a tile); for a whole model's, a fused network's or an ext-spad search's design (which
    baco.compile_model builds with baco's kernels: the library's programs are no option) baco's
    build without a design (default_build): `baco tune` never hands back a design predicted worse
    than the build the user already has. Only where the search may return it: its hardware not
    fixed to another Gemmini, within the area budget."""
    default_hw = replace(DEFAULT_HARDWARE, ext_spad=problem.ext_spad)
    if problem.fixed_hw not in (None, default_hw) or \
            problem.max_area_mm2 is not None and default_hw.area_mm2 > problem.max_area_mm2 * (1 + 1e-9):
        return found
    if problem.untuned is not None or problem.fusion is not None or problem.ext_spad:
        baseline = default_build(problem, found.wall_s)
    else:
        try:
            baseline = library_design(problem.layers, cycle_model=problem.cycle_model, wall_s=found.wall_s,
                                      evaluations=found.evaluations)
        except (ValueError, NotImplementedError):     # a layer the library has no tiling for: no baseline
            baseline = None
    if baseline is None or baseline.edp >= found.edp:
        return found
    baseline.trace = found.trace + [(found.wall_s, baseline.edp)]     # the last improvement: the baseline
    return baseline


def _starts(problem: NetworkProblem, init_hw, starts: int, random_pool: int, generator, setup_deadline) -> list:
    """The descent's starting designs: the C library's tilings on init_hw (else on each of
    START_HARDWARE; a layer-by-layer start on a fixed Gemmini they do not fit), with their best
    loop orders, then the best random design points that are competitive with them."""
    heuristic = [h for hw in ([init_hw] if init_hw else START_HARDWARE)
                 if (h := heuristic_tilings(problem.layers, hw)) is not None][:starts]
    if problem.fixed_hw is not None and not heuristic:
        heuristic = [layerwise_start(problem, generator)]
    inits = best_orders_batch(problem, heuristic, setup_deadline) if heuristic else []
    n_layers = len(problem.layers)
    seeded = best_points(problem, [[d[i] for d in inits] for i in range(n_layers)], 1) if inits else []
    # random starts join only if they are competitive: on large layers they are orders of magnitude
    # worse than the library's tilings and would take most of every descent step for nothing
    cutoff = seeded[0][0] * RANDOM_START_RANGE if seeded else math.inf
    return inits + [d for e, d in best_random(problem, random_pool * starts, max(starts - len(inits), 1), generator,
                                              setup_deadline if inits else None) if e <= cutoff]


def _descend(problem: NetworkProblem, inits: list, budget: Budget, *, importance: bool, lr: float, generator,
             round_every: int, progress: bool, on_step, resume) -> list:
    """(EDP, design) of the descents from `inits`: every layer at every step, or (importance) slices
    of steps for the layer with the largest estimated gain from the best start, then the joint
    descent for whatever budget the scheduler left."""
    if not importance:
        return gradient_descent(problem, inits, budget=budget, lr=lr, generator=generator,
                                round_every=round_every, progress=progress, state=resume, on_step=on_step)
    joint = resume if resume is not None and "joint" in resume else None
    if joint is None:
        start = problem.score([[d[i] for d in inits] for i in range(len(problem.layers))])
        edps = torch.where(start.penalty > 0, torch.inf, start.edp)
        b = int(torch.argmin(edps))
        edp, design, trace, complete = importance_search(problem, inits[b], float(edps[b]), budget=budget,
                                                         lr=lr, generator=generator, progress=progress,
                                                         on_slice=on_step, state=resume)
        found = [(edp, design)] + [(float(e), d) for e, d in zip(edps.tolist(), inits)]
        if complete:
            return found
        joint = {"joint": None, "scheduled": design, "steps": trace[-1][0] if trace else 0}
    # the scheduler stopped before its budget (its warm-up would overrun the time, or every
    # layer stalled: one layer at a time cannot move the shared hardware): the joint descent
    # (every layer at every step) takes the rest, from the scheduler's design and the other starts
    rest = Budget(None if budget.steps is None else budget.steps - joint["steps"], budget.deadline, 0)
    joint_step = None if on_step is None else (lambda s: on_step({**joint, "joint": s}))
    return gradient_descent(problem, [joint["scheduled"]] + inits, budget=rest, lr=lr,
                            generator=generator, round_every=round_every, progress=progress,
                            state=joint["joint"], on_step=joint_step)


def _ranked(problem: NetworkProblem, found: list, deadline, max_area_mm2) -> list:
    """The POLISHED best distinct valid designs the descents found, with their best loop orders,
    as (EDP, design) best first; ValueError if none is valid."""
    found = [d for e, d in sorted(found, key=lambda x: x[0]) if math.isfinite(e)]
    found = list({tuple(d): d for d in found}.values())[:POLISHED]    # starts may meet: polish each design once
    if not found:
        raise ValueError("no valid design found" + (f" within the area budget of {max_area_mm2:g} mm2"
                                                    if max_area_mm2 else ""))
    found = best_orders_batch(problem, found, deadline)
    rescored = problem.score([[d[i] for d in found] for i in range(len(problem.layers))])
    rescored = torch.where(rescored.penalty > 0, torch.inf, rescored.edp).tolist()
    return sorted(zip(rescored, found), key=lambda x: x[0])


def _twin_polished(problem: NetworkProblem, found: list, deadline, generator, kicks: int) -> tuple[list, int]:
    """A fusion-aware search's descent designs (found, ranked) first polished as the search without
    fusion polishes them (the same layers, hardware and cost but no fusion graph): that design
    joins `found` at its fusion-aware EDP, and the fused polish goes on from the best. The fused
    objective rewards mappings whose tiles fit the fused programs, and its kicks can stay in their
    basin while the same moves without fusion leave it (GPT-3's block on FADiff's Large Gemmini,
    40 steps: the fused kicks stopped at 5.403e14 at two seeds, the unfused ones' path, which the
    fused cost rewards as well, went on to 4.615e14). It takes TWIN_POLISH_SHARE of the polish (of
    its time, or of `kicks`) where the best design found costs at most TWIN_FULL_GAIN less fused
    than without the fusion graph (its layers alone: a tail op's traffic, a residual add's or a
    pool's, counts in the fused cost only), less in proportion where it costs less still: there the
    fused objective is what the polish must follow (MobileNetV1 on FADiff's Small, 15 s: half the
    polish so spent cost its saving 50% -> 33%). Returns (found, the kicks it took)."""
    twin = NetworkProblem(problem.layers, fixed_hw=problem.fixed_hw, max_area_mm2=problem.max_area_mm2,
                          cycle_model=problem.cycle_model, untuned=problem.untuned, ext_spad=problem.ext_spad)
    designs = [d for _, d in found]
    unfused = twin.score([[d[i] for d in designs] for i in range(len(problem.layers))])
    unfused = torch.where(unfused.penalty > 0, torch.inf, unfused.edp).tolist()
    ranked = sorted(((e, d) for e, d in zip(unfused, designs) if math.isfinite(e)), key=lambda x: x[0])
    if not ranked:
        return found, 0
    gain = 1 - found[0][0] / unfused[0] if math.isfinite(unfused[0]) else 1.0
    share = TWIN_POLISH_SHARE * min(1.0, TWIN_FULL_GAIN / max(gain, 1e-12))
    twin_deadline = None if deadline is None else time.perf_counter() + share * max(0.0, deadline - time.perf_counter())
    twin_kicks = int(kicks * share)
    _, design = _polish(twin, ranked, *ranked[0], 0, 0, twin_deadline, generator, twin_kicks, None, None)
    problem.evaluations += twin.evaluations
    if design not in designs:
        fused = problem.score([[t] for t in design])
        edp = math.inf if float(fused.penalty[0]) > 0 else float(fused.edp[0])
        found = sorted(found + [(edp, design)], key=lambda x: x[0])
    return found, twin_kicks


def _polish(problem: NetworkProblem, found: list, best_edp, best_design, polished: int, kicks_done: int,
            deadline, generator, kicks: int, save, checkpoint):
    """Hill-climb the best designs (unless a resumed search already did), then kick the best one
    (iterated_local_search; until the deadline when there is one); (EDP, design) of the best. A
    fusion-aware search first polishes as the search without fusion (_twin_polished; its kicks count
    as kicks done)."""
    if polished < POLISHED:
        if save is not None:
            save("polish", found=found, polished=0, kicks_done=0, best_edp=best_edp, best_design=best_design)
        if problem.fusion is not None:
            found, twin_kicks = _twin_polished(problem, found, deadline, generator, kicks - kicks_done)
            kicks_done += twin_kicks
        top = found[:POLISHED]
        found = sorted(local_search_batch(problem, [d for _, d in top], [e for e, _ in top], deadline),
                       key=lambda x: x[0])
        if found and found[0][0] < best_edp:
            best_edp, best_design = found[0]
    kick_hook = None
    if save is not None:
        def kick_hook(done, edp, design):
            if checkpoint.due():
                save("polish", found=found, polished=POLISHED, kicks_done=kicks_done + done, best_edp=edp,
                     best_design=design)
    total_kicks = 10**9 if deadline is not None else kicks
    return iterated_local_search(problem, best_design, best_edp, deadline, generator,
                                 total_kicks - kicks_done, on_kick=kick_hook, donors=[d for _, d in found])
