"""Baselines for co-exploration, on the same cost model and the same time budget as baco.

gemmini_default  the hand-tuned C library's tiling on the default 16x16 / 256 KB / 64 KB Gemmini
random_search    random mappings (random split of every dimension, random loop orders), hardware inferred
genetic          a genetic algorithm over the same integer design points
bayesian         optuna's TPE over continuous factor parameters rounded to legal tile factors
dosa_style       DOSA (MICRO'23): gradient descent on continuous mapping factors with the hardware inferred
                 by max over layers, 7 starts, rounding to the nearest legal tile factors every 500 steps,
                 started from strong valid mappings (the C library's tilings, the best of many random valid
                 mappings on each further start's hardware)

Every search baseline is seeded, and is given baco's own heuristic starting designs (the C library's
tilings on each of explore.START_HARDWARE, the default Gemmini first), so each compares its search,
not its start, with baco's, and none can end worse than the default mapping.  Each returns a Result
whose mappings pass the validator.
"""
from __future__ import annotations

import math
import time

import numpy as np
import optuna
import torch
from tqdm.auto import tqdm

from baco.problem.dims import DIMS, DRAM_LEVEL
from baco.problem.layer import Layer
from baco.tuner.arch import Hardware
from baco.tuner.descent import Adam
from baco.tuner.explore import (START_HARDWARE, NetworkProblem, Result, best_orders_batch, best_points, best_random,
                                heuristic_tilings, layerwise_start, library_design, neighbours, random_tilings,
                                single_threaded)
from baco.tuner.hwinfer import requirements_from_factors, round_hardware
from baco.tuner.points import Tiling, costmodel_tensors, stack_tilings, unstack_tilings
from baco.tuner.relax import C_INDEX, K_INDEX, ORDER_CHOICES


def _deadline(time_budget_s: float | None) -> float | None:
    return None if time_budget_s is None else time.perf_counter() + time_budget_s


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def _seed_designs(problem: NetworkProblem, deadline: float | None = None) -> list[list[Tiling]]:
    """baco's heuristic starting designs: the C library's tilings on each of explore.START_HARDWARE
    (the default Gemmini first; on the problem's fixed hardware only, when it has one) where they
    exist, with the best canonical orders (re-picked until the deadline)."""
    starts = [problem.fixed_hw] if problem.fixed_hw is not None else START_HARDWARE
    designs = [h for hw in starts if (h := heuristic_tilings(problem.layers, hw)) is not None]
    if problem.fixed_hw is not None and not designs:
        designs = [layerwise_start(problem, torch.Generator().manual_seed(0))]
    return best_orders_batch(problem, designs, deadline) if designs else []


# ------------------------------------------------------------------------------------------------
# (a) Gemmini-default
# ------------------------------------------------------------------------------------------------
@single_threaded
def gemmini_default(layers: list[Layer], *, time_budget_s: float | None = None, seed: int = 0,
                    progress: bool = False, cycle_model: str = "compiled", untuned=None) -> Result:
    """The C library's heuristic tiling of every layer on the default Gemmini (no search); layers cost
    the library's own programs (kernel_model.library_matmul_cycles, library_conv_cycles), not baco's
    kernels; `untuned` (whole_model.UntunedSteps): the rest of a whole model's program, costed as
    baco runs it on the default Gemmini."""
    t0 = time.perf_counter()
    result = library_design(layers, cycle_model=cycle_model, evaluations=len(layers), untuned=untuned)
    result.wall_s = time.perf_counter() - t0
    return result


# ------------------------------------------------------------------------------------------------
# (b) random search
# ------------------------------------------------------------------------------------------------
@single_threaded
def random_search(layers: list[Layer], *, time_budget_s: float | None = None, seed: int = 0,
                  samples: int | None = None, chunk: int = 64, progress: bool = False,
                  cycle_model: str = "compiled") -> Result:
    """Best of random design points (samples of them, or as many as the time budget allows)."""
    t0, deadline = time.perf_counter(), _deadline(time_budget_s)
    samples = samples if samples is not None else (None if deadline else 4096)
    generator = torch.Generator().manual_seed(seed)
    problem = NetworkProblem(layers, cycle_model=cycle_model)
    seeds = _seed_designs(problem, deadline)
    keep = best_points(problem, [[d[i] for d in seeds] for i in range(len(layers))], 1) if seeds else []
    bar = tqdm(total=samples, desc="random", disable=not progress, leave=False)
    best = best_random(problem, samples, 1, generator, deadline, chunk=chunk, keep=keep,
                       on_chunk=lambda drawn: bar.update(drawn - bar.n))
    bar.close()
    return problem.result(best[0][1], "random", time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------------
# (c) genetic algorithm
# ------------------------------------------------------------------------------------------------
def _crossover(a: list[Tiling], b: list[Tiling], rng: np.random.Generator) -> list[Tiling]:
    """Per layer and per dimension, take that dimension's whole factor column from one parent."""
    child = []
    for ta, tb in zip(a, b):
        pick = rng.random(len(DIMS)) < 0.5
        temporal = tuple(tuple(tb.temporal[l][j] if pick[j] else ta.temporal[l][j] for j in range(len(DIMS)))
                         for l in range(DRAM_LEVEL + 1))
        sc = tb.spatial_c if pick[C_INDEX] else ta.spatial_c
        sk = tb.spatial_k if pick[K_INDEX] else ta.spatial_k
        order = tb.order if rng.random() < 0.5 else ta.order
        child.append(Tiling(temporal, sc, sk, order))
    return child


def _mutate(design: list[Tiling], problem: NetworkProblem, rng: np.random.Generator, rate: float) -> list[Tiling]:
    out = list(design)
    for i, space in enumerate(problem.spaces):
        while rng.random() < rate:
            options = neighbours(out[i], space, problem.max_pe)
            if not options:
                break
            out[i] = options[int(rng.integers(len(options)))]
    return out


@single_threaded
def genetic(layers: list[Layer], *, time_budget_s: float | None = None, seed: int = 0,
            generations: int | None = None, population: int = 64, elite: int = 4, mutation_rate: float = 0.6,
            progress: bool = False, cycle_model: str = "compiled", fixed_hw: Hardware | None = None,
            fusion_graph=None, ext_spad: bool = False) -> Result:
    """Tournament selection, per-dimension crossover, prime-factor-move mutation, elitism.
    fixed_hw, fusion_graph, ext_spad: as explore.coexplore's; with fusion every design fuses each edge
    that fits (on a fixed Gemmini the best fusion of its mappings: a fused edge only removes DRAM traffic)."""
    t0, deadline = time.perf_counter(), _deadline(time_budget_s)
    generations = generations if generations is not None else (None if deadline else 100)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    problem = NetworkProblem(layers, cycle_model=cycle_model, fixed_hw=fixed_hw, fusion_graph=fusion_graph,
                             ext_spad=ext_spad)
    pop = _seed_designs(problem, deadline)
    pool = random_tilings(problem, population - len(pop), generator)
    pop += [[pool[i][b] for i in range(len(layers))] for b in range(population - len(pop))]

    def fitness(designs):
        cost = problem.score([[d[i] for d in designs] for i in range(len(layers))])
        return torch.where(cost.penalty > 0, torch.inf, cost.edp).numpy()

    fit = fitness(pop)
    gen = 0
    bar = tqdm(total=generations, desc="genetic", disable=not progress, leave=False)
    while (generations is None or gen < generations) and not _expired(deadline):
        order = np.argsort(fit)
        children = [pop[k] for k in order[:elite]]
        while len(children) < population:
            a, b = (min(rng.integers(population, size=3), key=lambda k: fit[k]) for _ in range(2))
            children.append(_mutate(_crossover(pop[a], pop[b], rng), problem, rng, mutation_rate))
        pop, fit = children, fitness(children)
        gen += 1
        bar.update(1)
    bar.close()
    best = int(np.argmin(fit))
    return problem.result(pop[best], "genetic", time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------------
# (d) Bayesian optimisation (optuna TPE)
# ------------------------------------------------------------------------------------------------
def _slot_names(problem: NetworkProblem) -> list[list[tuple[str, int, int]]]:
    """Per layer, the free continuous parameters: (name, level or -1 for spatial, dim index)."""
    out = []
    for i, space in enumerate(problem.spaces):
        names = []
        for j, d in enumerate(DIMS):
            if space.dims[d] == 1:
                continue
            if j in (C_INDEX, K_INDEX):
                names.append((f"l{i}_{d}_spatial", -1, j))
            names += [(f"l{i}_{d}_L{l}", l, j) for l in range(DRAM_LEVEL) if space.allowed[l, j]]
        out.append(names)
    return out


@single_threaded
def bayesian(layers: list[Layer], *, time_budget_s: float | None = None, seed: int = 0,
             trials: int | None = None, progress: bool = False, cycle_model: str = "compiled") -> Result:
    """TPE over log-factors in [0, log n] per (layer, dim, level) and a loop order per layer; the
    parameters are rounded to legal tile factors (sequentially, as the relaxation's noiseless forward pass)."""
    t0 = time.perf_counter()
    trials = trials if trials is not None else (None if time_budget_s else 200)
    problem = NetworkProblem(layers, cycle_model=cycle_model)
    slots = _slot_names(problem)

    def design_of(values: dict) -> list[Tiling]:
        design = []
        for i, space in enumerate(problem.spaces):
            th = torch.zeros(1, DRAM_LEVEL, len(DIMS), dtype=torch.float64)
            sp = torch.zeros(1, 2, dtype=torch.float64)
            for name, level, j in slots[i]:
                if level < 0:
                    sp[0, 0 if j == C_INDEX else 1] = values[name]
                else:
                    th[0, level, j] = values[name]
            sample = space.sample(th, sp, 0.05, noisy=False)
            order = torch.tensor([values[f"l{i}_order"]])
            design.append(unstack_tilings(sample.temporal, sample.spatial, order)[0])
        return design

    def params_of(design: list[Tiling]) -> dict:
        values = {}
        for i, t in enumerate(design):
            for name, level, j in slots[i]:
                f = (t.spatial_c if j == C_INDEX else t.spatial_k) if level < 0 else t.temporal[level][j]
                values[name] = math.log(f)
            values[f"l{i}_order"] = t.order
        return values

    def objective(trial: optuna.Trial) -> float:
        values = {}
        for i, space in enumerate(problem.spaces):
            for name, level, j in slots[i]:
                values[name] = trial.suggest_float(name, 0.0, math.log(space.dims[DIMS[j]]))
            values[f"l{i}_order"] = trial.suggest_categorical(f"l{i}_order", list(range(len(ORDER_CHOICES))))
        design = design_of(values)
        trial.set_user_attr("design", [(t.temporal, t.spatial_c, t.spatial_k, t.order) for t in design])
        cost = problem.score([[t] for t in design])
        penalty = float(cost.penalty[0])
        trial.set_user_attr("valid", penalty == 0)
        # an invalid point ranks behind every valid one, ordered by how far it is over
        return math.log(float(cost.edp[0])) + (100.0 + penalty if penalty > 0 else 0.0)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed, multivariate=True))
    seeds = _seed_designs(problem, None if time_budget_s is None else t0 + time_budget_s)
    for design in seeds:
        study.enqueue_trial(params_of(design))
    # the seeds are evaluated whatever the budget (as every other method starts from them), so a
    # short budget on a loaded machine still returns a valid design
    study.optimize(objective, n_trials=len(seeds))
    remaining = None if time_budget_s is None else max(0.0, time_budget_s - (time.perf_counter() - t0))
    if trials is None or trials > len(seeds):
        study.optimize(objective, n_trials=None if trials is None else trials - len(seeds), timeout=remaining,
                       show_progress_bar=progress)
    valid = [t for t in study.trials if t.value is not None and t.user_attrs.get("valid")]
    if not valid:
        raise RuntimeError("Bayesian optimisation found no valid design in its budget")
    best_trial = min(valid, key=lambda t: t.value)
    best = [Tiling(tuple(map(tuple, t)), sc, sk, o) for t, sc, sk, o in best_trial.user_attrs["design"]]
    return problem.result(best, "bayesian", time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------------
# (e) DOSA-style
# ------------------------------------------------------------------------------------------------
def random_hardware(rng: np.random.Generator, max_pe: int = 128) -> Hardware:
    """A random legal Gemmini (array 4..max_pe, buffers 16 KB..1 MB log-uniform)."""
    pe = int(2 ** rng.integers(2, int(math.log2(max_pe)) + 1))
    sp = float(np.exp(rng.uniform(math.log(16), math.log(1024))))
    acc = float(np.exp(rng.uniform(math.log(8), math.log(512))))
    return round_hardware(pe, sp, acc)


def best_random_mappings(layers: list[Layer], hw: Hardware, generator: torch.Generator,
                         samples: int, cycle_model: str = "compiled", deadline: float | None = None) -> list[Tiling] | None:
    """Per layer, the best of `samples` random mappings that are valid on hw (None if a layer has none,
    or if the deadline passes first). A layer's samples are scored MAPPING_CHUNK at a time, the deadline
    checked between: 1024 cold mappings of one ResNet-50 conv walk their programs for ~7 s."""
    design = []
    for layer in layers:
        fixed = NetworkProblem([layer], fixed_hw=hw, cycle_model=cycle_model)
        pool = random_tilings(fixed, samples, generator, spatial_limit=hw.pe_dim)[0]
        top = []
        for lo in range(0, samples, MAPPING_CHUNK):
            if _expired(deadline):
                return None
            top = best_points(fixed, [[t for _, (t,) in top] + pool[lo:lo + MAPPING_CHUNK]], 1)
        if not top:
            return None
        design.append(top[0][1][0])
    return design


MAPPING_CHUNK = 64    # random mappings of one layer scored between deadline checks


def _continuous_factors(space, x: torch.Tensor, sp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """DOSA's forward pass: inner factors are the (non-integer) parameters, DRAM takes n / product."""
    n = space.sizes
    inner = x * n                                                   # parameters are factor / dim size
    spatial = sp * torch.stack([n[C_INDEX], n[K_INDEX]])
    spread = torch.ones_like(inner[:, 0, :])
    spread = spread.index_copy(1, torch.tensor([C_INDEX, K_INDEX]), spatial)
    outer = n / (inner.prod(1) * spread)
    return torch.cat([inner, outer.unsqueeze(1)], dim=1), spatial


@single_threaded
def dosa_style(layers: list[Layer], *, time_budget_s: float | None = None, seed: int = 0, starts: int = 7,
               steps: int = 1500, round_every: int = 500, lr: float = 1e-2, random_samples: int = 1024,
               progress: bool = False, cycle_model: str = "compiled", fixed_hw: Hardware | None = None,
               fusion_graph=None, ext_spad: bool = False) -> Result:
    """DOSA's one-loop search: continuous factors, hardware = max over layers, periodic rounding.
    fixed_hw: the hardware is given (every start's mappings are drawn for it, the descent costs it);
    fusion_graph: the rounded designs are costed fused, each edge fused where it fits (as genetic);
    ext_spad: as explore.coexplore's (the rounded designs' Gemminis have the ext-spad commands).

    The parameters are the factors divided by the layer's dimension (DOSA's normalisation by the
    problem size).  lr: a sweep over {5e-5 (DOSA's value), 3e-3, 1e-2, 3e-2} at a 10 s budget on four
    operators outside the benchmark set gave DOSA its best geomean EDP at 1e-2 (5e-5 a close second).
    Start 0 is the Gemmini-default mapping on the default hardware; each other start draws a random
    hardware and takes, per layer, the best of random_samples random mappings valid on it.  Given more
    time than starts*steps need, further rounds of starts run until the budget is spent.
    """
    t0, deadline = time.perf_counter(), _deadline(time_budget_s)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    problem = NetworkProblem(layers, cycle_model=cycle_model, fixed_hw=fixed_hw, fusion_graph=fusion_graph,
                             ext_spad=ext_spad)
    best_edp, best_design = math.inf, None
    first_round = True
    while True:
        inits = _seed_designs(problem, deadline) if first_round else []
        while len(inits) < starts and not (inits and _expired(deadline)):
            design = best_random_mappings(layers, fixed_hw or random_hardware(rng, problem.max_pe), generator,
                                          random_samples,
                                          problem.cycle_model, deadline)
            if design is not None:
                inits.append(design)
        first_round = False
        found = _dosa_descent(problem, inits, steps=steps, round_every=round_every, lr=lr, deadline=deadline,
                              progress=progress)
        for edp, design in found:
            if edp < best_edp:
                best_edp, best_design = edp, design
        if deadline is None or _expired(deadline):
            break
    return problem.result(best_design, "dosa-style", time.perf_counter() - t0)


def _dosa_descent(problem: NetworkProblem, inits: list[list[Tiling]], *, steps: int, round_every: int, lr: float,
                  deadline: float | None, progress: bool) -> list[tuple[float, list[Tiling]]]:
    S = len(inits)
    L = len(problem.layers)
    params, orders = [], []
    for i, space in enumerate(problem.spaces):
        temporal, spatial, order = stack_tilings([d[i] for d in inits])
        n = space.sizes
        params += [(temporal[:, :DRAM_LEVEL, :] / n).requires_grad_(),
                   (spatial / torch.stack([n[C_INDEX], n[K_INDEX]])).requires_grad_()]
        orders.append(order)
    opt = Adam(params, lr=lr)
    cost = problem.score([[d[i] for d in inits] for i in range(L)])
    results = [(float(e) if float(p) == 0 else math.inf, list(d)) for e, p, d in zip(cost.edp, cost.penalty, inits)]
    bar = tqdm(total=steps, desc="dosa", disable=not progress, leave=False)
    for step in range(1, steps + 1):
        if _expired(deadline):
            _keep_rounded(problem, params, orders, results, deadline)  # what the descent reached, rounded
            break
        temporal, spatial, penalty = [], [], 0
        for i, space in enumerate(problem.spaces):
            t, s = _continuous_factors(space, params[2 * i], params[2 * i + 1])
            temporal.append(t)
            spatial.append(s)
            limit = torch.full((S,), float(problem.max_pe), dtype=torch.float64)
            penalty = penalty + space.penalty(torch.log(t[:, :DRAM_LEVEL].clamp_min(1e-9)),
                                              torch.log(s.clamp_min(1e-9)), limit)
        cost = _continuous_cost(problem, temporal, spatial, orders)
        loss = (torch.log(cost[0]) + torch.log(cost[1]) + 10.0 * penalty).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        bar.update(1)
        if step % round_every == 0 or step == steps:
            _keep_rounded(problem, params, orders, results, deadline)
    bar.close()
    return results


def _keep_rounded(problem: NetworkProblem, params, orders, results: list, deadline: float | None) -> None:
    """Round every start (and restart it from there); keep each start's best rounded design."""
    rounded = _round_dosa(problem, params, orders, deadline)
    scored = problem.score([[d[i] for d in rounded] for i in range(len(problem.layers))])
    for s in range(len(rounded)):
        edp = float(scored.edp[s]) if float(scored.penalty[s]) == 0 else math.inf
        if edp < results[s][0]:
            results[s] = (edp, rounded[s])


def _continuous_cost(problem: NetworkProblem, temporal, spatial, orders):
    """Network (cycles, energy) with continuous factors and the continuous max-over-layers hardware."""
    needs = [requirements_from_factors(layer, t, s, rule=problem.cycle_model)
             for layer, t, s in zip(problem.layers, temporal, spatial)]
    hw = tuple(torch.stack([n[k] for n in needs]).max(0).values for k in ("pe", "sp_kb", "acc_kb"))
    if problem.fixed_hw is not None:
        hw = tuple(torch.full_like(h, float(v)) for h, v in zip(hw, (problem.fixed_hw.pe_dim, problem.fixed_hw.sp_kb,
                                                                     problem.fixed_hw.acc_kb)))
    cycles = energy = 0
    for layer, count, t, s, o in zip(problem.layers, problem.counts, temporal, spatial, orders):
        c, e = costmodel_tensors(layer, t, s, o, hw, problem.cycle_model)
        cycles, energy = cycles + count * c, energy + count * e
    return cycles, energy


def _round_dosa(problem: NetworkProblem, params, orders, deadline: float | None) -> list[list[Tiling]]:
    """Round every start to the nearest legal tile factors, re-pick loop orders, and restart it from there."""
    S = params[0].shape[0]
    per_layer = []
    with torch.no_grad():
        for i, space in enumerate(problem.spaces):
            n = space.sizes
            th = torch.log((params[2 * i] * n).clamp_min(1e-9))
            sp = torch.log((params[2 * i + 1] * torch.stack([n[C_INDEX], n[K_INDEX]])).clamp_min(1e-9))
            sample = space.sample(th, sp, 0.05, noisy=False)
            per_layer.append(unstack_tilings(sample.temporal, sample.spatial, orders[i]))
        designs = best_orders_batch(problem, [[per_layer[i][s] for i in range(len(problem.spaces))] for s in range(S)],
                                    deadline)
        for i, space in enumerate(problem.spaces):
            temporal, spatial, order = stack_tilings([d[i] for d in designs])
            n = space.sizes
            params[2 * i].copy_(temporal[:, :DRAM_LEVEL, :] / n)
            params[2 * i + 1].copy_(spatial / torch.stack([n[C_INDEX], n[K_INDEX]]))
            orders[i].copy_(order)
    return designs
