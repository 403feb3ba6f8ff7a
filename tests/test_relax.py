import math

import pytest
import torch

from baco.problem.dims import DIMS, DRAM_LEVEL
from baco.tuner.relax import (C_INDEX, K_INDEX, MappingSpace, TemperatureSchedule, capacity_penalty,
                              covering_dram_factor, covering_problems, divisors, nearest_divisor,
                              straight_through_choice, tile_candidates)

CONV = dict(R=3, S=3, P=28, Q=28, C=96, K=120, N=1)
GEMM = dict(R=1, S=1, P=1000, Q=1, C=768, K=1, N=1)


def test_divisors():
    assert divisors(1) == (1,)
    assert divisors(12) == (1, 2, 3, 4, 6, 12)
    assert divisors(97) == (1, 97)
    assert all(3136 % d == 0 for d in divisors(3136)) and len(divisors(3136)) == 21
    with pytest.raises(ValueError):
        divisors(0)


def test_tile_candidates_and_covering():
    assert tile_candidates(56) == (1, 2, 4, 7, 8, 14, 16, 28, 32, 56, 64)
    assert tile_candidates(64) == divisors(64) and tile_candidates(6, ragged=False) == (1, 2, 3, 6)
    dims = dict(R=3, S=3, P=56, Q=56, C=3, K=64, N=1)
    t = [[1, 1, 16, 8, 1, 1, 1], [3, 3, 1, 1, 1, 1, 1], [1, 1, 2, 7, 1, 4, 1], [1, 1, 1, 1, 1, 1, 1]]
    assert any("P factors cover 32, not 56" in p for p in covering_problems(t, 3, 16, dims))
    t[DRAM_LEVEL][2] = covering_dram_factor(t, 3, 16, 2, 56)     # DRAM takes ⌈56 / 32⌉ = 2 P tiles
    assert t[DRAM_LEVEL][2] == 2 and covering_problems(t, 3, 16, dims) == []
    t[1][0] = 2                                     # R = 3 in tiles of 2 is not a filter split
    assert covering_dram_factor(t, 3, 16, 0, 3) is None
    t[1][0], t[2][2] = 3, 5                         # 5 tiles of 16 at L2 run past P = 56 (4 needed)
    assert any("runs 5 tiles of 16 where 56 needs 4" in p for p in covering_problems(t, 3, 16, dims))


def test_nearest_divisor_log_distance_and_limit():
    assert nearest_divisor(96, 4.8) == 4      # |log 4.8 - log 4| < |log 6 - log 4.8|
    assert nearest_divisor(96, 5.0) == 6
    assert nearest_divisor(96, 11.0) == 12
    assert nearest_divisor(96, 100.0, limit=16) == 16


def _products(space, sample):
    t = sample.temporal.detach()
    prod = t.prod(1).clone()
    prod[:, C_INDEX] *= sample.spatial[:, 0].detach()
    prod[:, K_INDEX] *= sample.spatial[:, 1].detach()
    return prod


@pytest.mark.parametrize("dims", [CONV, GEMM])
@pytest.mark.parametrize("tau", [5.0, 0.5, 0.02])
def test_forward_is_always_a_legal_covering_mapping(dims, tau):
    space = MappingSpace(dims, max_spatial=16)
    gen = torch.Generator().manual_seed(1)
    th, sp = space.random_params(64, gen)
    th = th + 2.0 * torch.randn(th.shape, generator=gen, dtype=torch.float64)  # include factors < 1 and overshoot
    sample = space.sample(th, sp * 3, tau, gen)
    ints = sample.temporal.detach()
    assert torch.allclose(ints, ints.round(), atol=1e-9)
    products = _products(space, sample)
    assert (products >= space.sizes - 1e-9).all()          # the tiles cover every dimension
    for d in "RS":                                          # filter loops split exactly
        assert torch.allclose(products[:, DIMS.index(d)], space.sizes[DIMS.index(d)].expand(64))
    assert (ints >= 1 - 1e-9).all()
    assert (sample.spatial.detach() <= 16 + 1e-9).all()
    for b in range(64):
        temporal, sc, sk = sample.integers(b)
        assert covering_problems(temporal, sc, sk, dims) == []
        # the registers hold one weight: no weight-indexing loop at L0
        assert all(temporal[0][DIMS.index(d)] == 1 for d in "RSCK")


def test_gradients_flow_through_straight_through_estimator():
    space = MappingSpace(CONV)
    gen = torch.Generator().manual_seed(0)
    th, sp = space.random_params(4, gen)
    th.requires_grad_()
    sp.requires_grad_()
    sample = space.sample(th, sp, 1.0, gen)
    # a loss that prefers big scratchpad-level P factors and small spatial factors
    loss = -sample.temporal_log[:, 2, DIMS.index("P")].sum() + sample.spatial_log.sum()
    loss.backward()
    assert th.grad is not None and torch.isfinite(th.grad).all()
    assert (th.grad[:, 2, DIMS.index("P")] < 0).all()   # descent increases the P factor at L2
    assert (sp.grad > 0).all()
    # the DRAM remainder couples to the inner levels: raising L1's C factor lowers L3's
    th2, sp2 = space.random_params(4, gen)
    th2.requires_grad_()
    s2 = space.sample(th2, sp2, 1.0, gen)
    s2.temporal_log[:, DRAM_LEVEL, C_INDEX].sum().backward()
    assert (th2.grad[:, 1, C_INDEX] <= 0).all() and (th2.grad[:, 1, C_INDEX] < 0).any()


def test_straight_through_choice_hard_forward_soft_backward():
    cand = torch.log(torch.tensor([[1.0, 2.0, 4.0, 8.0]], dtype=torch.float64))
    mask = torch.tensor([[True, True, True, False]])
    x = torch.tensor([math.log(7.0)], dtype=torch.float64, requires_grad=True)
    value, idx = straight_through_choice(x, cand, mask, tau=1.0, noise=None)
    assert idx.item() == 2 and value.item() == pytest.approx(math.log(4.0))   # 8 is masked
    value.backward()
    assert x.grad.item() > 0


def test_noiseless_sampling_rounds_to_nearest_divisors():
    space = MappingSpace(CONV)
    temporal = [[1, 1, 2, 7, 1, 1, 1], [1, 1, 7, 2, 6, 5, 1], [3, 3, 2, 2, 1, 3, 1], [1, 1, 1, 1, 1, 1, 1]]
    th, sp = space.params_from_factors(temporal, 16, 8)
    sample = space.sample(th.unsqueeze(0), sp.unsqueeze(0), 0.05, noisy=False)
    t, sc, sk = sample.integers(0)
    assert (sc, sk) == (16, 8)
    assert t[:3] == temporal[:3]
    assert t[3] == [1, 1, 1, 1, 1, 1, 1]


def test_temperature_annealing_schedule():
    sched = TemperatureSchedule(2.0, 0.02, steps=100)
    temps = [sched(s) for s in range(0, 101, 10)]
    assert temps[0] == pytest.approx(2.0) and temps[-1] == pytest.approx(0.02)
    assert all(a > b for a, b in zip(temps, temps[1:]))
    assert sched(50) == pytest.approx(math.sqrt(2.0 * 0.02))
    assert sched(500) == pytest.approx(0.02)


def test_low_temperature_sampling_concentrates():
    space = MappingSpace(CONV)
    gen = torch.Generator().manual_seed(3)
    th, sp = space.random_params(1, gen)
    th, sp = th.expand(200, -1, -1), sp.expand(200, -1)
    cold = space.sample(th, sp, 0.01, gen).temporal.detach()
    hot = space.sample(th, sp, 10.0, gen).temporal.detach()
    distinct = lambda t: len({tuple(r.flatten().tolist()) for r in t})
    assert distinct(cold) < distinct(hot)


def test_penalties():
    space = MappingSpace(CONV, max_spatial=16)
    th = torch.zeros(2, DRAM_LEVEL, 7, dtype=torch.float64)
    sp = torch.zeros(2, 2, dtype=torch.float64)
    th[1, 1, DIMS.index("P")] = -1.0                        # factor < 1
    sp[1, 0] = math.log(64.0)                               # spatial C over the array
    pen = space.penalty(th, sp, torch.tensor([16.0, 16.0], dtype=torch.float64))
    assert pen[0].item() == 0.0 and pen[1].item() > 1.0
    th2 = torch.zeros(1, DRAM_LEVEL, 7, dtype=torch.float64)
    th2[0, :, DIMS.index("P")] = math.log(28.0)             # inner levels overshoot the dimension
    assert space.penalty(th2, sp[:1], torch.tensor([16.0], dtype=torch.float64)).item() > 0
    used = torch.tensor([10.0, 300.0], dtype=torch.float64)
    cap = capacity_penalty(used, 256.0)
    assert cap[0].item() == 0.0 and cap[1].item() > 0.0


def test_stacked_space_samples_each_layer_as_its_own_space():
    """StackedSpace draws several layers' factors in one pass: without noise each row rounds exactly as
    its own layer's MappingSpace does, and every row's factors cover its layer's dimensions."""
    import torch
    from baco.problem.dims import DIMS
    from baco.tuner.relax import MappingSpace, StackedSpace
    spaces = [MappingSpace({"R": 3, "S": 3, "P": 28, "Q": 28, "C": 64, "K": 96, "N": 1}, max_spatial=32),
              MappingSpace({"R": 1, "S": 1, "P": 512, "Q": 1, "C": 768, "K": 3072, "N": 1}, max_spatial=32)]
    g = torch.Generator().manual_seed(0)
    params = [sp.random_params(5, g) for sp in spaces]
    stacked = StackedSpace(spaces, 5).sample(torch.cat([p[0] for p in params]), torch.cat([p[1] for p in params]),
                                             0.1, noisy=False)
    for k, (sp, (th, s)) in enumerate(zip(spaces, params)):
        own = sp.sample(th, s, 0.1, noisy=False)
        rows = slice(5 * k, 5 * k + 5)
        assert torch.equal(stacked.temporal[rows], own.temporal) and torch.equal(stacked.spatial[rows], own.spatial)
        assert torch.allclose(stacked.penalty[rows], own.penalty)
        sizes = torch.tensor([float(sp.dims[d]) for d in DIMS], dtype=torch.float64)
        total = stacked.temporal[rows].prod(1)
        total[:, DIMS.index("C")] *= stacked.spatial[rows, 0]
        total[:, DIMS.index("K")] *= stacked.spatial[rows, 1]
        assert (total >= sizes - 1e-9).all()
        for b in range(5):
            assert covering_problems(*own.integers(b), sp.dims) == []
