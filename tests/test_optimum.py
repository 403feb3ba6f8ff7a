"""The exhaustive optimum (baco/tuner/optimum.py) against brute force on tiny GEMM networks."""
import dataclasses
import itertools
import math

import pytest
import torch

from baco.gemmini import energy
from baco.problem.layer import Layer
from baco.tuner import kernel_model, optimum, residual
from baco.tuner.explore import NetworkProblem
from baco.tuner.hwinfer import requirements_from_factors
from baco.tuner.points import order_indices


def gemm(M, N, K, count=1):
    return Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1, count=count)


@pytest.fixture
def analytical(monkeypatch):
    """No learned residual: every array size is then covered by the enumeration's bounds."""
    monkeypatch.setattr(residual, "load", lambda kind: None)


def every_block(layer):
    return torch.tensor(list(itertools.product(range(1, layer.P + 1), range(1, layer.K + 1), range(1, layer.C + 1))))


# a small and a large array by default; the 2x2 array (three times their time) and 32x32 with -m slow
@pytest.mark.parametrize("pe", [pytest.param(2, marks=pytest.mark.slow), 8, pytest.param(32, marks=pytest.mark.slow), 128])
def test_a_block_costs_what_its_signature_representative_costs(pe, analytical):
    """Every block along one dimension (the other two at a few values) costs, needs and fits what
    the smallest block of its signature does, on several buffers."""
    layer = gemm(150, 200, 180)
    dims = (layer.P, layer.K, layer.C)
    others = (3, 150)
    blocks, reps = [], []
    for axis, role in enumerate("MNK"):
        rep = {}
        for b in range(1, dims[axis] + 1):
            rep.setdefault(optimum.block_signature(b, dims[axis], role, pe), b)
        assert sorted(rep.values()) == optimum.block_candidates(dims[axis], role, pe)
        for x, y in itertools.product(others, others):
            for b in range(1, dims[axis] + 1):
                row = [min(x, dims[0]), min(y, dims[1]), min(y, dims[2])]
                blocks.append(row[:axis] + [b] + row[axis + 1:])
                reps.append(row[:axis] + [rep[optimum.block_signature(b, dims[axis], role, pe)]] + row[axis + 1:])
    costs = []
    for b in (torch.tensor(blocks), torch.tensor(reps)):
        temporal, spatial = optimum.block_tensors(layer, b)
        need = requirements_from_factors(layer, temporal, spatial, float(pe))
        per_hw = [need["sp_kb"], need["acc_kb"]]
        for sp, acc in ((4, 8), (64, 256), (1024, 1024)):
            hw = tuple(torch.full((b.shape[0],), float(v), dtype=torch.float64) for v in (pe, sp, acc))
            order = order_indices()[torch.zeros(b.shape[0], dtype=torch.int64)]
            c, e, _, choice = kernel_model.kernel_layer_tensors(layer, temporal, spatial, order, hw)
            per_hw += [c, e, choice.to(torch.float64)]
        costs.append(torch.stack(per_hw))
    assert torch.equal(costs[0], costs[1])


def brute_force(layers):
    """min network EDP over every block of every layer and every array size, each design built as
    validated mappings and scored on its own inferred hardware."""
    problem = NetworkProblem(layers)
    blocks = [every_block(l).tolist() for l in layers]
    best = math.inf
    for pe in optimum.array_dims():
        tilings = [[optimum.anchored_tiling(l, tuple(b), pe) for b in bl] for l, bl in zip(layers, blocks)]
        designs = list(itertools.product(*(range(len(t)) for t in tilings)))
        for lo in range(0, len(designs), 4096):
            part = designs[lo:lo + 4096]
            cost = problem.score([[tilings[i][d[i]] for d in part] for i in range(len(layers))])
            best = min(best, float(torch.where(cost.penalty > 0, torch.inf, cost.edp).min()))
    return best


def test_the_enumeration_finds_the_brute_force_optimum(analytical):
    layers = [gemm(4, 5, 3), gemm(3, 6, 2, count=2)]
    found = optimum.exact_optimum(layers, math.inf)
    assert found.exact
    assert found.result.edp == pytest.approx(brute_force(layers), rel=1e-12)
    assert found.lower_bound == pytest.approx(found.result.edp, rel=1e-12)


def test_the_bound_prunes_only_what_cannot_beat_the_incumbent(analytical):
    layers = [gemm(4, 5, 3), gemm(3, 6, 2, count=2)]
    free = optimum.exact_optimum(layers, math.inf)
    bounded = optimum.exact_optimum(layers, free.result.edp)
    assert bounded.result.edp == pytest.approx(free.result.edp, rel=1e-12)
    assert bounded.blocks_costed <= free.blocks_costed
    with pytest.raises(ValueError, match="below the incumbent"):
        optimum.exact_optimum(layers, free.result.edp * 0.5)


def test_best_combination_is_the_minimum_over_every_combination():
    g = torch.Generator().manual_seed(0)
    fronts = []
    for _ in range(3):
        c, e = torch.rand(12, generator=g, dtype=torch.float64) * 10 + 1, torch.rand(12, generator=g, dtype=torch.float64) * 10 + 1
        hull = optimum.lower_hull(c, e)
        fronts.append(([float(c[j]) for j in hull], [float(e[j]) for j in hull], c.tolist(), e.tolist()))
    best, _ = optimum.best_combination([(f[0], f[1]) for f in fronts])
    brute = min(sum(f[2][k] for f, k in zip(fronts, ks)) * sum(f[3][k] for f, k in zip(fronts, ks))
                for ks in itertools.product(range(12), repeat=3))
    assert best == pytest.approx(brute, rel=1e-12)


def test_only_gemm_networks():
    with pytest.raises(ValueError, match="GEMM layers only"):
        optimum.exact_optimum([Layer(R=3, S=3, P=8, Q=8, C=4, K=4, N=1)], math.inf)


# one ragged layer by default; the others (minutes: every block walked) with -m slow
@pytest.mark.parametrize("shape", [(17, 9, 33), pytest.param((17, 33, 65), marks=pytest.mark.slow),
                                   pytest.param((1, 65, 17), marks=pytest.mark.slow),
                                   pytest.param((33, 1, 40), marks=pytest.mark.slow),
                                   pytest.param((65, 17, 1), marks=pytest.mark.slow)])
@pytest.mark.parametrize("pe", [4, 16])
def test_the_loop_ws_bound_is_below_the_walk(shape, pe, analytical, monkeypatch):
    """loop_ws_bound and loop_counts_bound (what the optimum prunes on before walking) are at most
    the walked LOOP_WS cycles and counts of every candidate block of small ragged layers, the
    walked layer_blocks costs every block as walk_loop_ws does after it, and costing the blocks in
    chunks changes nothing."""
    layer = gemm(*shape)
    walked = optimum.layer_blocks(layer, pe)
    bounded = optimum.layer_blocks(layer, pe, walk=False)
    assert torch.equal(walked.blocks, bounded.blocks)
    monkeypatch.setattr(optimum, "CHUNK", 97)
    chunked = optimum.layer_blocks(layer, pe, walk=False)
    for f in dataclasses.fields(optimum.LayerBlocks):
        assert torch.equal(getattr(chunked, f.name), getattr(bounded, f.name)), f.name
    assert bool((bounded.loop <= walked.loop * (1 + 1e-12)).all())
    assert bool((bounded.cycles_lb <= walked.cycles_lb * (1 + 1e-12)).all())
    assert float((bounded.loop / walked.loop).max()) > 0.2      # not vacuous
    assert bool((bounded.loop_counts <= walked.loop_counts * (1 + 1e-12)).all())
    assert bool((bounded.energy_lb <= walked.energy_lb * (1 + 1e-12)).all())
    rewalked = optimum.walk_loop_ws(layer, bounded, pe)
    for name in ("cycles_lb", "energy_lb", "loop", "loop_counts"):
        assert torch.equal(getattr(rewalked, name), getattr(walked, name)), name


# ragged layers, one with a bias; the larger ones with -m slow
@pytest.mark.parametrize("shape", [(17, 9, 33), pytest.param((1, 65, 17), marks=pytest.mark.slow),
                                   pytest.param((65, 17, 1), marks=pytest.mark.slow),
                                   pytest.param((33, 40, 20), marks=pytest.mark.slow)])
@pytest.mark.parametrize("pe", [4, 16])
@pytest.mark.parametrize("bias", [False, True])
def test_the_block_bound_is_below_every_program(shape, pe, bias, analytical):
    """block_bound (what bounded_blocks prunes every candidate on, before costing any) is at most the
    costed cycles (every explicit variant: explicit_bound; the walked LOOP_WS program: loop_ws_bound)
    and energy of every candidate block of small ragged layers; compute_bound is at most every
    block's; and bounded_blocks keeps exactly the blocks whose bound is within the limit."""
    M, N, K = shape
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1, count=2, bias=bias)
    walked = optimum.layer_blocks(layer, pe)
    b = walked.blocks.to(torch.float64)
    cycles, energy_uj = optimum.block_bound(layer, pe, b[:, 0], b[:, 1], b[:, 2])
    explicit = optimum.explicit_bound(layer, pe, b[:, 0], b[:, 1], b[:, 2])
    assert bool((explicit <= walked.variants.min(0).values * (1 + 1e-12)).all())
    assert bool((optimum.loop_ws_bound(layer, walked.blocks, pe) <= walked.loop * (1 + 1e-12)).all())
    assert bool((cycles * layer.count <= walked.cycles_lb * (1 + 1e-12)).all())
    assert bool((energy_uj * layer.count <= walked.energy_lb * (1 + 1e-12)).all())
    assert float((energy_uj * layer.count / walked.energy_lb).median()) > 0.5       # not vacuous
    least = optimum.compute_bound(layer, pe)
    assert least[0] <= float(cycles.min()) * (1 + 1e-12) and least[1] <= float(energy_uj.min()) * (1 + 1e-12)
    limit = float(((cycles * layer.count).median()) * (energy_uj * layer.count).median())
    kept, c_min, e_min = optimum.bounded_blocks([layer], pe, limit)
    inside = cycles * layer.count * energy_uj * layer.count <= limit
    assert sorted(map(tuple, kept[0].tolist())) == sorted(map(tuple, walked.blocks[inside].tolist()))
    assert c_min == [pytest.approx(float(cycles.min()) * layer.count)]


def test_the_optimum_restores_torch_threads(analytical):
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        optimum.exact_optimum([gemm(4, 5, 3)], math.inf)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("bias", [False, True])
def test_a_dropped_block_has_a_kept_one_as_good_on_every_memory(bias, analytical):
    """undominated drops blocks (a fifth or more of a small ragged layer's on a 16x16 array), and on
    every scratchpad and accumulator size each dropped block fits, some kept block fits too and
    costs no more cycles and no more energy, both as the enumeration costs them (their LOOP_WS
    programs walked)."""
    layer, pe = Layer(R=1, S=1, P=17, Q=1, C=33, K=9, N=1, count=2, bias=bias), 16
    walked = optimum.layer_blocks(layer, pe)
    kept = optimum.undominated(layer, optimum.layer_blocks(layer, pe, walk=False), pe)
    assert 0 < kept.blocks.shape[0] < 0.8 * walked.blocks.shape[0]
    kept_blocks = set(map(tuple, kept.blocks.tolist()))
    is_kept = torch.tensor([tuple(b) in kept_blocks for b in walked.blocks.tolist()])
    counts = optimum.program_counts(layer, walked, pe)
    for sp, acc in itertools.product((1, 4, 64, 1024), (1, 8, 64, 1024)):
        (cycles, cnt), = optimum._chosen_schedules([layer], [walked], [counts], pe, sp, acc)
        energy_uj = energy.energy_pj(cnt, sp_kb=float(sp), acc_kb=float(acc), dim=float(pe)) * 1e-6 * layer.count
        fits = (walked.sp_kb <= sp + 1e-9) & (walked.acc_kb <= acc + 1e-9)
        x, y = (fits & ~is_kept).nonzero().squeeze(1), (fits & is_kept).nonzero().squeeze(1)
        as_good = (cycles[y][None, :] <= cycles[x][:, None] * (1 + 1e-12)) & \
            (energy_uj[y][None, :] <= energy_uj[x][:, None] * (1 + 1e-12))
        assert bool(as_good.any(1).all()), (walked.blocks[x[~as_good.any(1)]].tolist(), sp, acc)


def test_the_optimum_stops_at_its_time_limit(analytical):
    """Past its time limit the branch and bound raises OptimumTimeout (what it had done in the
    message), not a design it has not proven; a limit that is no positive number is refused."""
    layers = [gemm(4, 5, 3), gemm(3, 6, 2, count=2)]
    with pytest.raises(optimum.OptimumTimeout, match=r"did not finish within 1e-09 s \(\d+ blocks bounded"):
        optimum.exact_optimum(layers, math.inf, time_limit=1e-9)
    with pytest.raises(ValueError, match="time_limit"):
        optimum.exact_optimum(layers, math.inf, time_limit=0)
    assert optimum.exact_optimum(layers, math.inf, time_limit=600).exact
