import pytest

from baco.problem.layer import Layer
from baco.tuner import baselines
from baco.tuner.arch import DEFAULT_HARDWARE
from baco.tuner.mapping import validate
from baco.tuner.workloads import gemm

LAYERS = [gemm(96, 160, 64)]
NETWORK = [gemm(64, 128, 32), Layer(R=3, S=3, P=8, Q=8, C=16, K=32, N=1, name="conv", count=2)]


def _check(result, layers, method):
    assert result.method == method
    assert len(result.mappings) == len(layers)
    for layer, mapping in zip(layers, result.mappings):
        assert validate(mapping, layer, result.hw) == []
    assert result.edp == pytest.approx(result.cycles * result.energy_uj)
    assert result.edp > 0


def test_gemmini_default_runs_on_the_default_hardware():
    result = baselines.gemmini_default(LAYERS)
    _check(result, LAYERS, "gemmini-default")
    assert result.hw == DEFAULT_HARDWARE


@pytest.mark.parametrize("layers", [LAYERS, NETWORK], ids=["gemm", "network"])
@pytest.mark.parametrize("method,kwargs", [
    ("random", dict(samples=256)),
    ("genetic", dict(generations=3, population=12)),
    ("bayesian", dict(trials=8)),
    ("dosa-style", dict(starts=2, steps=20, round_every=10, random_samples=16)),
])
def test_search_baselines_return_validated_mappings(layers, method, kwargs):
    fn = {"random": baselines.random_search, "genetic": baselines.genetic, "bayesian": baselines.bayesian,
          "dosa-style": baselines.dosa_style}[method]
    result = fn(layers, seed=1, **kwargs)
    _check(result, layers, method)
    # every search is seeded with the default mapping: it cannot end worse than its starting design
    default = baselines.gemmini_default(layers)
    assert result.edp <= default.edp * 10


def test_baselines_respect_a_time_budget():
    import time
    for fn in (baselines.random_search, baselines.genetic, baselines.bayesian, baselines.dosa_style):
        t0 = time.perf_counter()
        result = fn(LAYERS, time_budget_s=1.0, seed=0)
        # a 1 s budget: the bound leaves room for a loaded machine (the suite runs on two workers)
        assert time.perf_counter() - t0 < 10.0
        _check(result, LAYERS, result.method)


def test_random_hardware_is_legal():
    import numpy as np
    from baco.gemmini.config import GemminiConfig
    rng = np.random.default_rng(0)
    for _ in range(20):
        hw = baselines.random_hardware(rng)
        GemminiConfig.from_capacity(hw.pe_dim, hw.sp_kb, hw.acc_kb).validate()
