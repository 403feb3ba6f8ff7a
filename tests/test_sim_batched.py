"""baco.sim.batched: runs of preload/compute pairs executed as one numpy computation leave the
functional model exactly as the commands one by one do (accumulator, scratchpad, held weights,
statistics), and a run that would fault or leaves the plain path is not batched."""
import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import ACC_BIT, ACCUMULATE_BIT, COMMANDS, GARBAGE_ADDR, command_fields, encode
from baco.sim.batched import run_pairs
from baco.sim.functional import ArrayMemory, GemminiModel


def _model(cfg, seed, a_stride=1):
    rng = np.random.default_rng(seed)
    m = GemminiModel(cfg, ArrayMemory())
    m.spad[...] = rng.integers(-128, 128, m.spad.shape)
    m.acc[...] = rng.integers(-2**31, 2**31, m.acc.shape, dtype=np.int64)
    m.weights = rng.integers(-128, 128, m.weights.shape).astype(np.int64)
    m.execute(COMMANDS["config_ex"].funct, *encode("config_ex", dataflow=1, a_stride=a_stride, c_stride=1,
                                                   acc_scale=0x3F800000))
    return m


def _pairs(cfg, rng, n, acc_rows_used, a_stride=1):
    d = cfg.dim
    a_span = d * max(a_stride, 1)
    pairs = []
    for _ in range(n):
        flip = rng.random() < 0.3
        garbage_b = rng.random() < 0.1
        pre = command_fields("preload", bd_addr=GARBAGE_ADDR if garbage_b else int(rng.integers(0, cfg.sp_rows - d)),
                             bd_rows=int(rng.integers(0, d + 1)), bd_cols=int(rng.integers(0, d + 1)),
                             c_addr=ACC_BIT | (ACCUMULATE_BIT if rng.random() < 0.7 else 0)
                             | int(rng.integers(0, acc_rows_used)),
                             c_rows=int(rng.integers(0, d + 1)), c_cols=int(rng.integers(0, d + 1)))
        name = "compute_preloaded" if flip else "compute_accumulated"
        comp = command_fields(name, a_addr=GARBAGE_ADDR if rng.random() < 0.05 else int(rng.integers(0, cfg.sp_rows - a_span)),
                              a_rows=int(rng.integers(0, d + 1)), a_cols=int(rng.integers(0, d + 1)),
                              bd_addr=GARBAGE_ADDR, bd_rows=d, bd_cols=d)
        pairs.append((pre, name, comp))
    return pairs


def _one_by_one(m, pairs):
    for pre, name, comp in pairs:
        m.execute(COMMANDS["preload"].funct, *encode("preload", **pre))
        m.execute(COMMANDS[name].funct, *encode(name, **comp))


@pytest.mark.parametrize("dim,seed,targets,a_stride", [(16, 0, 24, 1), (16, 1, 600, 1), (8, 2, 4, 1), (32, 3, 100, 1),
                                                       (16, 4, 50, 2), (16, 5, 50, 0), (8, 6, 30, 3)])
def test_batched_pairs_equal_the_commands(dim, seed, targets, a_stride):
    """Overwrites and additions onto few accumulator rows (many repeats) and onto many; A rows
    config_ex's a_stride apart (a strided convolution's pixels)."""
    cfg = GemminiConfig(dim=dim)
    pairs = _pairs(cfg, np.random.default_rng(seed), 300, targets, a_stride)
    a, b = _model(cfg, seed, a_stride), _model(cfg, seed, a_stride)
    assert run_pairs(a, pairs)
    _one_by_one(b, pairs)
    np.testing.assert_array_equal(a.acc, b.acc)
    np.testing.assert_array_equal(a.spad, b.spad)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.preload is None and b.preload is None
    assert a.stats == b.stats


def test_a_run_that_would_fault_is_not_batched():
    cfg = GemminiConfig()
    pairs = _pairs(cfg, np.random.default_rng(5), 20, 50)
    pre, name, comp = pairs[7]
    pairs[7] = (pre, name, dict(comp, a_addr=cfg.sp_rows - 2, a_rows=cfg.dim, a_cols=cfg.dim))
    m = _model(cfg, 5)
    acc = m.acc.copy()
    assert not run_pairs(m, pairs)
    np.testing.assert_array_equal(m.acc, acc)
    assert "preload" not in m.stats


@pytest.mark.parametrize("change", [dict(c_stride=2), dict(a_transpose=1), dict(dataflow=0)])
def test_other_execute_configurations_are_not_batched(change):
    cfg = GemminiConfig()
    m = _model(cfg, 6)
    fields = {**dict(dataflow=1, a_stride=1, c_stride=1, acc_scale=0x3F800000), **change}
    m.execute(COMMANDS["config_ex"].funct, *encode("config_ex", **fields))
    assert not run_pairs(m, _pairs(cfg, np.random.default_rng(6), 10, 50))


def test_a_spad_output_or_an_accumulator_operand_is_not_batched():
    cfg = GemminiConfig()
    pairs = _pairs(cfg, np.random.default_rng(7), 10, 50)
    pre, name, comp = pairs[3]
    m = _model(cfg, 7)
    assert not run_pairs(m, pairs[:3] + [(dict(pre, c_addr=5), name, comp)])
    assert not run_pairs(m, pairs[:3] + [(pre, name, dict(comp, a_addr=ACC_BIT | 5, a_rows=4, a_cols=4))])
