"""Importance estimation: a task scheduler over a network's unique layers (BACO thesis §6.5).

The objective is eq. 6.9, f = (Σ wᵢ·eᵢ)·(Σ wᵢ·lᵢ): layer i's energy eᵢ and latency lᵢ, weighted by
its count wᵢ, on ONE hardware inferred from all the mappings.  Instead of moving every layer's
mapping at every step, the search spends slices of gradient steps on one layer at a time (the
others stay at the current best design; the shared hardware is still inferred from all of them):

1. warm-up: every layer gets one slice (equal allocation), the layers of largest estimated gain first;
2. then each slice goes to the layer with the largest estimated gain of f (eq. 6.6-6.8).  For
   x ∈ {eᵢ, lᵢ} the rate of change per slice is estimated as

       dx ≈ α·(x(t) − x(t−Δt))/Δt + (1−α)·min(−x(t)/t,  β·Cᵢ/max_{k∈N(i)} V_k − x(t))

   the backward window over the layer's own history plus the optimistic forward prediction: the
   min of the ideal-decay term (x keeps falling like 1/t) and the similar-layer term (layer i
   could reach 1/β of the best MACs-per-unit V_k = C_k/x_k among layers of its kind N(i); Cᵢ is
   its MACs).  The gain is −(∂f/∂eᵢ·deᵢ + ∂f/∂lᵢ·dlᵢ) = −wᵢ·(L·deᵢ + E·dlᵢ);
3. a layer whose last STALL_SLICES slices did not improve f is not scheduled again; when all
   have stalled the scheduler returns (explore.coexplore then runs the joint descent for the rest
   of the budget: moving one layer at a time cannot shrink the shared hardware).

A slice is cheap: only the active layer is sampled and costed per step; the other layers' cost
depends only on the (discrete) hardware and is cached per hardware for the slice.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from baco.tuner.descent import PENALTY_WEIGHT, Adam
from baco.tuner.hwinfer import requirements_from_factors
from baco.tuner.points import Tiling, costmodel_tensors, stack_tilings, unstack_tilings
from baco.tuner.relax import ORDER_CHOICES, TemperatureSchedule

ALPHA = 0.2          # weight of the backward window against the forward prediction (as in Ansor)
BETA = 2.0           # a layer is expected to reach 1/BETA of its best similar layer's efficiency
SLICE_STEPS = 20     # gradient steps per scheduling decision
STALL_SLICES = 2     # slices without improvement before a layer stops being scheduled
ANNEAL_STEPS = 200   # per-layer Gumbel temperature schedule length


@dataclass
class LayerTask:
    index: int
    theta: torch.Tensor                  # [1, 4, 7] temporal log-factors
    theta_spatial: torch.Tensor          # [1, 2]
    optimizer: object = None
    steps: int = 0
    slices: int = 0
    history: list = field(default_factory=list)   # (slices, energy µJ, cycles) of one instance, after each slice
    stalled: int = 0


def similar(a, b) -> bool:
    """Layers of one kind: same filter size, stride and padding (a GEMM is a 1x1, stride-1
    convolution; a padded layer's programs run differently, Layer.padding)."""
    return (a.R, a.S, a.Hstride, a.Wstride, a.padding) == (b.R, b.S, b.Hstride, b.Wstride, b.padding)


def layer_costs(problem, design) -> tuple[list[float], list[float]]:
    """Per-layer (energy µJ, cycles) of one instance of each layer in a design, on its inferred hardware."""
    cost = problem.score([[t] for t in design])
    hw = cost.hardware[0]
    hw_t = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (hw.pe_dim, hw.sp_kb, hw.acc_kb))
    stacked = [stack_tilings([t]) for t in design]
    with torch.no_grad():
        cycles, energy = problem.network_cost.per_layer(*(list(x) for x in zip(*stacked)), hw_t, weighted=False)
    return energy[:, 0].tolist(), cycles[:, 0].tolist()


def estimated_gain(problem, tasks: list[LayerTask], i: int, energy: list[float], cycles: list[float]) -> float:
    """Estimated decrease of f per slice spent on layer i (eq. 6.6-6.8)."""
    w = problem.counts
    E = sum(wi * e for wi, e in zip(w, energy))
    L = sum(wi * c for wi, c in zip(w, cycles))
    layer, task = problem.layers[i], tasks[i]
    peers = [k for k, other in enumerate(problem.layers) if similar(layer, other)]
    rates = []
    for col, values in ((1, energy), (2, cycles)):
        x = values[i]
        hist = task.history
        backward = 0.0
        if len(hist) >= 2:
            backward = (hist[-1][col] - hist[-2][col]) / max(hist[-1][0] - hist[-2][0], 1)
        best_rate = max(problem.layers[k].macs / values[k] for k in peers)
        forward = min(-x / max(task.slices, 1), BETA * layer.macs / best_rate - x)
        rates.append(ALPHA * backward + (1 - ALPHA) * forward)
    return -w[i] * (L * rates[0] + E * rates[1])


class OthersCache:
    """The count-weighted cycles and energy of every layer but one, per hardware (they are fixed in a slice)."""

    def __init__(self, problem, design, active: int):
        self.problem, self.active = problem, active
        self.others = [j for j in range(len(design)) if j != active]
        self.stacked = {j: stack_tilings([design[j]]) for j in self.others}
        self.pe = max((float(self.stacked[j][1].max()) for j in self.others), default=1.0)
        self.table: dict = {}
        self.buffers: dict = {}

    def buffer_needs(self, rows_of) -> tuple[torch.Tensor, torch.Tensor]:
        """The other layers' scratchpad and accumulator needs [L-1, B], buffers counted in rows_of."""
        rows = rows_of.tolist() if isinstance(rows_of, torch.Tensor) else [rows_of]
        for r in set(rows) - set(self.buffers):
            if not self.others:
                self.buffers[r] = (torch.zeros(0, dtype=torch.float64),) * 2
                continue
            with torch.no_grad():
                sp, acc = self.problem.buffer_needs([self.stacked[j][0] for j in self.others],
                                                    [self.stacked[j][1] for j in self.others], r, layers=self.others)
            self.buffers[r] = (sp[:, 0], acc[:, 0])
        return (torch.stack([self.buffers[r][0] for r in rows], 1), torch.stack([self.buffers[r][1] for r in rows], 1))

    def lookup(self, hardware) -> tuple[torch.Tensor, torch.Tensor]:
        missing = sorted({h for h in hardware if h not in self.table}, key=lambda h: (h.pe_dim, h.sp_kb, h.acc_kb))
        if missing:
            U = len(missing)
            hw_t = tuple(torch.tensor([float(getattr(h, a)) for h in missing], dtype=torch.float64)
                         for a in ("pe_dim", "sp_kb", "acc_kb"))
            cyc = torch.zeros(U, dtype=torch.float64)
            en = torch.zeros(U, dtype=torch.float64)
            if self.others:
                with torch.no_grad():
                    t, s, o = zip(*(self.stacked[j] for j in self.others))
                    cyc, en = self.problem.network_cost([x.expand(U, -1, -1) for x in t], [x.expand(U, -1) for x in s],
                                                        [x.expand(U) for x in o], hw_t, layers=self.others)
            for u, h in enumerate(missing):
                self.table[h] = (float(cyc[u]), float(en[u]))
        vals = [self.table[h] for h in hardware]
        return (torch.tensor([v[0] for v in vals], dtype=torch.float64),
                torch.tensor([v[1] for v in vals], dtype=torch.float64))


def one_layer_cost(problem, cache: OthersCache, temporal, spatial, order, smooth: bool):
    """Network (cycles, energy, penalty) [B] of B mappings of layer cache.active with every other layer
    as in the cache's design: only the active layer is costed, the others per inferred hardware."""
    i = cache.active
    pe = spatial.max(1).values.clamp(min=cache.pe)
    rows_of = problem.array_rows(pe)
    need = requirements_from_factors(problem.layers[i], temporal, spatial, rows_of, problem.cycle_model)
    other_sp, other_acc = cache.buffer_needs(rows_of)
    if isinstance(rows_of, float):
        other_sp, other_acc = other_sp.expand(-1, temporal.shape[0]), other_acc.expand(-1, temporal.shape[0])
    hardware, hw_t, penalty = problem.infer_hardware(pe, torch.cat([other_sp, need["sp_kb"].unsqueeze(0)]),
                                                     torch.cat([other_acc, need["acc_kb"].unsqueeze(0)]), smooth)
    c, e = costmodel_tensors(problem.layers[i], temporal, spatial, order, hw_t, problem.cycle_model)
    oc, oe = cache.lookup(hardware)
    cycles, energy = problem.counts[i] * c + oc, problem.counts[i] * e + oe
    problem.note(cycles * energy, penalty)
    return cycles, energy, penalty


def run_slice(problem, design, edp: float, task: LayerTask, steps: int, lr: float, samples: int,
              generator: torch.Generator):
    """SLICE gradient steps on one layer's mapping; returns the best (edp, design) seen (maybe the input)."""
    i = task.index
    space = problem.spaces[i]
    with torch.no_grad():   # restart from the current best tiling of the layer (its snap)
        th, sp = space.params_from_factors(design[i].temporal, design[i].spatial_c, design[i].spatial_k)
        task.theta.copy_(th.unsqueeze(0))
        task.theta_spatial.copy_(sp.unsqueeze(0))
    if task.optimizer is None:
        task.optimizer = Adam([task.theta, task.theta_spatial], lr=lr)
    cache = OthersCache(problem, design, i)
    order = torch.full((samples,), design[i].order, dtype=torch.int64)
    best_edp, best_tiling = edp, design[i]
    for _ in range(steps):
        tau = TemperatureSchedule(1.0, 0.03, ANNEAL_STEPS)(min(task.steps, ANNEAL_STEPS))
        smp = space.sample(task.theta.expand(samples, -1, -1), task.theta_spatial.expand(samples, -1), tau, generator)
        cycles, energy, penalty = one_layer_cost(problem, cache, smp.temporal, smp.spatial, order, smooth=True)
        loss = (torch.log(cycles) + torch.log(energy) + PENALTY_WEIGHT * (penalty + smp.penalty)).sum() / samples
        task.optimizer.zero_grad()
        loss.backward()
        task.optimizer.step()
        task.steps += 1
        sample_edp = torch.where(penalty > 0, torch.inf, (cycles * energy).detach())
        b = int(torch.argmin(sample_edp))
        if float(sample_edp[b]) < best_edp:
            best_edp = float(sample_edp[b])
            best_tiling = unstack_tilings(smp.temporal[b:b + 1], smp.spatial[b:b + 1], order[b:b + 1])[0]
    # re-pick the layer's loop order by evaluation (the others stay as they are)
    options = [Tiling(best_tiling.temporal, best_tiling.spatial_c, best_tiling.spatial_k, o)
               for o in range(len(ORDER_CHOICES))]
    batch = [options if j == i else [design[j]] * len(options) for j in range(len(design))]
    cost = problem.score(batch)
    cand = torch.where(cost.penalty > 0, torch.inf, cost.edp)
    k = int(torch.argmin(cand))
    if float(cand[k]) < best_edp:
        best_edp, best_tiling = float(cand[k]), options[k]
    new = list(design)
    new[i] = best_tiling
    return best_edp, new


def importance_search(problem, init, init_edp: float, *, budget, lr: float, generator: torch.Generator,
                      samples: int = 16, slice_steps: int = SLICE_STEPS, progress: bool = True,
                      on_slice=None, state: dict | None = None):
    """The scheduler; returns (edp, design, trace, complete) with trace = [(steps, network edp)] after
    each slice. The warm-up visits the layers in the order of their estimated gain, the largest first.
    complete is False when the scheduler stops before its budget: every layer stalled, or, timed on
    its first slice, the warm-up would not fit in the budget's time (many layers, a short budget).

    budget: explore.Budget (total gradient steps and/or deadline).  on_slice(state) is called after
    every slice with the scheduler's whole state (a checkpoint); `state` resumes from one.
    """
    L = len(problem.layers)
    if state is None:
        tasks = []
        for i, space in enumerate(problem.spaces):
            th, sp = space.params_from_factors(init[i].temporal, init[i].spatial_c, init[i].spatial_k)
            tasks.append(LayerTask(i, th.unsqueeze(0).clone().requires_grad_(),
                                   sp.unsqueeze(0).clone().requires_grad_()))
        energy, cycles = layer_costs(problem, init)
        state = {"tasks": tasks, "design": list(init), "edp": init_edp, "steps": 0,
                 "queue": sorted(range(L), key=lambda k: -estimated_gain(problem, tasks, k, energy, cycles)),
                 "trace": []}
    tasks = state["tasks"]
    total = budget.steps
    bar = tqdm(total=total, desc="baco (importance)", disable=not progress, leave=False)
    bar.update(state["steps"])
    while not budget.expired() and (total is None or state["steps"] < total):
        energy, cycles = layer_costs(problem, state["design"])
        if state["queue"]:
            i = state["queue"].pop(0)
        else:
            live = [k for k in range(L) if tasks[k].stalled < STALL_SLICES]
            if not live:
                bar.close()
                return state["edp"], state["design"], state["trace"], False
            i = max(live, key=lambda k: estimated_gain(problem, tasks, k, energy, cycles))
        n = slice_steps if total is None else min(slice_steps, total - state["steps"])
        t_slice = time.perf_counter()
        edp, design = run_slice(problem, state["design"], state["edp"], tasks[i], n, lr, samples, generator)
        t_slice = time.perf_counter() - t_slice
        task = tasks[i]
        task.slices += 1
        task.stalled = 0 if edp < state["edp"] * (1 - 1e-9) else task.stalled + 1
        if edp < state["edp"]:
            state["edp"], state["design"] = edp, design
        energy, cycles = layer_costs(problem, state["design"])
        task.history.append((task.slices, energy[i], cycles[i]))
        state["steps"] += n
        state["trace"].append((state["steps"], state["edp"]))
        bar.update(n)
        bar.set_postfix(edp=f"{state['edp']:.4g}", layer=i)
        if on_slice is not None:
            on_slice(state)
        if len(state["trace"]) == 1 and budget.deadline is not None \
                and t_slice * len(state["queue"]) > budget.deadline - time.perf_counter():
            bar.close()
            return state["edp"], state["design"], state["trace"], False
    bar.close()
    return state["edp"], state["design"], state["trace"], True
