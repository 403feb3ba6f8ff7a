"""Network co-exploration: importance scheduling, area budgets, the Pareto sweep."""
import pytest

from baco.tuner.arch import area_mm2
from baco.tuner.explore import NetworkProblem, coexplore
from baco.tuner.importance import estimated_gain, importance_search, layer_costs, LayerTask
from baco.tuner.mapping import validate
from baco.tuner.workloads import Layer, gemm

SMALL = dict(seed=0, steps=10, starts=2, random_pool=4, polish=False, progress=False)
NET = [gemm(128, 64, 256, name="fc"), Layer(R=3, S=3, P=14, Q=14, C=32, K=64, N=1, name="conv", count=3),
       gemm(33, 17, 65, name="ragged")]


def _valid(result, layers):
    assert all(validate(m, l, result.hw) == [] for m, l in zip(result.mappings, layers))


def test_importance_search_is_valid_deterministic_and_logs_its_trace():
    a = coexplore(NET, importance=True, **SMALL)
    b = coexplore(NET, importance=True, **SMALL)
    _valid(a, NET)
    assert (a.edp, a.hw) == (b.edp, b.hw)
    assert a.trace and a.trace[-1][1] == pytest.approx(a.edp)
    assert all(x[1] > y[1] for x, y in zip(a.trace, a.trace[1:]))
    _valid(coexplore(NET[:1], importance=True, **SMALL), NET[:1])   # one layer: nothing else to cache


def test_scheduler_warms_up_every_layer_then_follows_the_gain():
    import torch
    from baco.tuner.explore import Budget, random_tilings
    problem = NetworkProblem(NET)
    init = [ts[0] for ts in random_tilings(problem, 1, torch.Generator().manual_seed(1))]
    edp0 = float(problem.score([[t] for t in init]).edp[0])
    visits = []
    edp, design, trace = importance_search(problem, init, edp0, budget=Budget(4 * 5, None, 0), lr=0.08,
                                           generator=torch.Generator().manual_seed(0), slice_steps=4,
                                           progress=False, on_slice=lambda s: visits.append(
                                               [t.slices for t in s["tasks"]]))
    assert visits[2] == [1, 1, 1]                     # warm-up: equal allocation
    assert edp <= edp0 and trace[-1] == (20, edp)
    energy, cycles = layer_costs(problem, design)
    gains = [estimated_gain(problem, [LayerTask(i, None, None, history=[]) for i in range(3)], i, energy, cycles)
             for i in range(3)]
    assert all(g >= 0 for g in gains)


def test_area_budget_is_respected_and_an_impossible_one_is_an_error():
    free = coexplore(NET, **SMALL)
    budget = free.hw.area_mm2 / 3
    tight = coexplore(NET, max_area_mm2=budget, **SMALL)
    _valid(tight, NET)
    assert tight.hw.area_mm2 <= budget
    with pytest.raises(ValueError, match="area budget|within"):
        coexplore(NET, max_area_mm2=area_mm2(2, 1, 1) / 2, **SMALL)


def test_pareto_sweep_writes_front(tmp_path):
    from baco.tuner.area import front, pareto_sweep, write_pareto
    rows = pareto_sweep(lambda max_area: coexplore(NET[:1], max_area_mm2=max_area, **SMALL), 3, log=lambda *_: None)
    assert rows[0]["max_area_mm2"] is None and len(rows) >= 2
    assert all(r["area_mm2"] <= r["max_area_mm2"] for r in rows[1:])
    f = front(rows)
    assert all(a["area_mm2"] <= b["area_mm2"] and a["edp"] > b["edp"] for a, b in zip(f, f[1:]))
    paths = write_pareto(rows, tmp_path)
    assert paths["png"].stat().st_size > 1000 and len(paths["csv"].read_text().splitlines()) == len(rows) + 1
