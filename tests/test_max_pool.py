"""Gemmini's max-pooling mvout: the numpy reference (baco.gemmini.arith.max_pool) against
torch's max_pool2d and a written-out window loop, and the functional model's pooled mvout
against the reference and the RTL's rules (StoreController: pixel (pr, pc) at
dram + (pr*pool_out_dim + pc)*stride, rows field ignored, no full-width or 1-D modes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from baco.gemmini.arith import acc_to_int8, max_pool
from baco.gemmini.isa import ACC_BIT, READ_FULL_BIT, GemminiFault
from tests.test_functional_isa import ONE, Rig, f32


def window_loop(img, size, stride, upad, lpad, porows, pocols):
    """Pooled pixels by the RTL's counters (porow, pocol, wrow, wcol), positions outside = 0."""
    orows, ocols, ch = img.shape
    out = np.zeros((porows * pocols, ch), np.int64)
    for pr in range(porows):
        for pc in range(pocols):
            vals = []
            for wr in range(size):
                for wc in range(size):
                    r, c = pr * stride + wr - upad, pc * stride + wc - lpad
                    vals.append(img[r, c] if 0 <= r < orows and 0 <= c < ocols else np.zeros(ch, np.int64))
            out[pr * pocols + pc] = np.max(vals, axis=0)
    return out


@pytest.mark.parametrize("orows,ocols,size,stride,pad", [
    (1, 1, 1, 1, 0), (4, 4, 2, 2, 0), (5, 7, 3, 2, 1), (6, 5, 3, 1, 1), (9, 9, 3, 3, 0), (8, 11, 2, 1, 1),
    (3, 17, 3, 2, 1), (7, 3, 2, 2, 1)])
def test_reference_matches_torch_and_window_loop(orows, ocols, size, stride, pad):
    rng = np.random.default_rng(orows * 100 + ocols)
    signed = rng.integers(-128, 128, (orows * ocols, 5)).astype(np.int8)
    relued = np.maximum(signed, 0).astype(np.int8)
    pooled = max_pool(relued, orows, ocols, size, stride, pad, pad)
    # after ReLU, zero padding is torch's -inf padding
    t = torch.nn.functional.max_pool2d(torch.from_numpy(relued.reshape(1, orows, ocols, 5)).permute(0, 3, 1, 2).float(),
                                       size, stride, pad)
    assert pooled.dtype == np.int8
    assert (pooled == t.permute(0, 2, 3, 1).reshape(-1, 5).numpy().astype(np.int8)).all()
    # signed values: padding positions count as 0
    porows, pocols = (orows + 2 * pad - size) // stride + 1, (ocols + 2 * pad - size) // stride + 1
    ref = window_loop(signed.astype(np.int64).reshape(orows, ocols, 5), size, stride, pad, pad, porows, pocols)
    assert (max_pool(signed, orows, ocols, size, stride, pad, pad) == ref).all()
    # explicit porows/pocols larger than the image: the extra windows are padding
    ref = window_loop(signed.astype(np.int64).reshape(orows, ocols, 5), size, stride, 0, pad, porows + 1, pocols)
    assert (max_pool(signed, orows, ocols, size, stride, 0, pad, porows + 1, pocols) == ref).all()


@pytest.mark.parametrize("dim", [4, 16])
def test_model_pooled_mvout_scale_relu_then_max(dim):
    g, rng = Rig(dim), np.random.default_rng(dim)
    orows, ocols, ch = 5, 4, min(dim, 6)
    acc = rng.integers(-3000, 3000, (orows * ocols, ch))
    g.m.acc[8:8 + orows * ocols, :ch] = acc
    # out_dim 7 > pocols: pooled rows land 7 pixels apart; the stride is 2 pixels of 8 channels
    g("config_st", stride=16, activation=1, acc_scale=f32(0.05), pool_stride=2, pool_size=3, upad=1, lpad=1,
      orows=orows, ocols=ocols, porows=3, pocols=2, pool_out_dim=7)
    g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT | 8, rows=0, cols=ch)   # rows is ignored
    ref = max_pool(acc_to_int8(acc, 0.05, True), orows, ocols, 3, 2, 1, 1, 3, 2)
    for pr in range(3):
        got = g.get((pr * 7) * 16, 2, ch, np.int8, stride=16)
        assert (got == ref[pr * 2:pr * 2 + 2]).all()


def test_model_pool_out_dim_is_the_row_pitch_even_when_zero():
    g = Rig(4)
    g.m.acc[0:4, 0] = [1, 2, 3, 4]     # 2x2 image, 1x1 windows: every pixel its own pooled pixel
    g("config_st", stride=1, acc_scale=ONE, pool_stride=1, pool_size=1, orows=2, ocols=2, porows=2, pocols=2,
      pool_out_dim=0)
    g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=4, cols=1)
    assert g.get(0, 1, 2, np.int8).tolist() == [[3, 4]]      # row pr at pr*0: row 1 overwrote row 0


def test_model_pooling_faults():
    g = Rig(4)
    g("config_st", stride=4, acc_scale=ONE, pool_stride=1, pool_size=2, orows=2, ocols=2, porows=1, pocols=1,
      pool_out_dim=1)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT | READ_FULL_BIT, rows=1, cols=4)
    assert e.value.field == "local_addr" and "full width" in str(e.value)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=1, cols=8)    # pooled mvouts are one block
    assert e.value.field == "cols"
    g("config_st", stride=4, acc_scale=ONE, pool_stride=1, pool_size=0, orows=2, ocols=2, porows=1, pocols=1)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=1, cols=4)
    assert e.value.field == "pool_size"
    g("config_st", stride=4, acc_scale=ONE, pool_stride=0, pool_size=2, orows=2, ocols=2)
    with pytest.raises(GemminiFault) as e:
        g("mvout", dram_addr=0x80000000, local_addr=ACC_BIT, rows=1, cols=4)
    assert e.value.field == "pool_size" and "1-D mvout" in str(e.value)


def test_timing_pooled_mvout_reads_every_window_position():
    from baco.gemmini.config import GemminiConfig
    from baco.sim.timing import TimingModel
    tm = TimingModel(GemminiConfig())
    tm.observe("config_st", dict(stride=16, activation=0, acc_scale=ONE, pool_stride=2, pool_size=3, upad=1,
                                 lpad=1, pool_out_dim=4, porows=4, pocols=4, orows=8, ocols=8))
    tm.observe("mvout", dict(dram_addr=0x80000000, local_addr=ACC_BIT, rows=0, cols=16))
    tm.fence()
    r = tm.report()
    assert tm.waits["pool_cycles"] == 4 * 4 * 9 and r["accumulator_reads"] == 4 * 4 * 9 * 16
    assert r["dram_bytes_out"] == 4 * 4 * 16
