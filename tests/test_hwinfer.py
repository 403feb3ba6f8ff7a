import math

import pytest
import torch

from baco.gemmini.config import GemminiConfig
from baco.tuner.arch import Hardware
from baco.tuner.hwinfer import (MAX_PE_DIM, Requirement, acc_candidates, infer_hardware, is_legal, round_hardware,
                                round_pe_dim, smooth_max, sp_candidates)
from baco.tuner.explore import straight_through_hardware


def test_round_pe_dim_power_of_two():
    assert [round_pe_dim(x) for x in (1, 2, 3, 4, 5, 16, 17, 100, 128)] == [2, 2, 4, 4, 8, 16, 32, 128, 128]
    with pytest.raises(ValueError):
        round_pe_dim(MAX_PE_DIM + 1)


@pytest.mark.parametrize("pe", [1, 3, 16, 20, 64, 128])
@pytest.mark.parametrize("sp", [0.1, 1, 3.5, 256, 300, 1500])
@pytest.mark.parametrize("acc", [0.01, 5, 64, 100, 700])
def test_rounded_hardware_is_legal_sufficient_and_minimal(pe, sp, acc):
    hw = round_hardware(pe, sp, acc)
    assert isinstance(hw, Hardware)
    assert hw.pe_dim >= pe and hw.sp_kb >= sp and hw.acc_kb >= acc
    assert hw.sp_kb == int(hw.sp_kb) and hw.acc_kb == int(hw.acc_kb)          # whole KB
    cfg = GemminiConfig.from_capacity(hw.pe_dim, hw.sp_kb, hw.acc_kb).validate()
    assert cfg.dim == hw.pe_dim and cfg.sp_kb == hw.sp_kb and cfg.acc_kb == hw.acc_kb
    assert cfg.sp_bank_rows & (cfg.sp_bank_rows - 1) == 0 and cfg.sp_bank_rows % cfg.dim == 0
    # minimal: no smaller legal scratchpad or accumulator covers the need
    assert hw.pe_dim == 2 or hw.pe_dim // 2 < pe
    assert not any(sp <= kb < hw.sp_kb and is_legal(hw.pe_dim, kb, hw.acc_kb) for kb in range(1, int(hw.sp_kb)))
    assert not any(acc <= kb < hw.acc_kb and is_legal(hw.pe_dim, hw.sp_kb, kb) for kb in range(1, int(hw.acc_kb)))


def test_default_gemmini_is_a_fixed_point_of_rounding():
    assert round_hardware(16, 256, 64) == Hardware(16, 256, 64)
    assert round_hardware(9, 129, 63) == Hardware(16, 256, 64)


def test_candidates_are_increasing():
    sps = list(sp_candidates(16, 3))
    assert sps[0] == 4 and all(b == 2 * a for a, b in zip(sps, sps[1:]))
    accs = list(acc_candidates(128, 1))
    assert accs[0] == 128 and all(b - a == 128 for a, b in zip(accs, accs[1:]))


def test_infer_hardware_is_max_over_layers():
    reqs = [Requirement(8, 100, 10), Requirement(32, 20, 3), Requirement(4, 3, 40)]
    hw = infer_hardware(reqs)
    assert hw == round_hardware(32, 100, 40)


def test_smooth_max_is_a_tight_differentiable_upper_bound():
    x = torch.tensor([[1.0, 50.0], [100.0, 49.0], [30.0, 51.0]], dtype=torch.float64, requires_grad=True)
    m = smooth_max(x, dim=0)
    assert (m >= x.max(0).values - 1e-9).all()
    assert torch.allclose(m[0], torch.tensor(100.0, dtype=torch.float64), rtol=1e-3)
    assert m[1] <= 51.0 * math.exp(math.log(3) / 20) + 1e-9
    m.sum().backward()
    assert x.grad[1, 0] > 0.99 and x.grad[0, 0] < 1e-6          # the maximum gets the gradient
    assert (x.grad[:, 1] > 0).all()                               # near-ties share it


def test_straight_through_hardware_forward_rounded_backward_identity():
    pe = torch.tensor([12.0], dtype=torch.float64, requires_grad=True)
    sp = torch.tensor([100.0], dtype=torch.float64, requires_grad=True)
    acc = torch.tensor([30.0], dtype=torch.float64, requires_grad=True)
    hw = round_hardware(12, 100, 30)
    p, s, a = straight_through_hardware(pe, sp, acc, [hw])
    assert (p.item(), s.item(), a.item()) == (hw.pe_dim, hw.sp_kb, hw.acc_kb)
    (p + 2 * s + 3 * a).sum().backward()
    assert (pe.grad.item(), sp.grad.item(), acc.grad.item()) == (1.0, 2.0, 3.0)
