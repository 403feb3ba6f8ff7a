"""Several accumulators and independent dots in one kernel: each bl.zeros gets its own
accumulator block (CSE used to merge equal zero blocks into one buffer that placement
could not copy)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import baco.language as bl

# the same two-accumulator kernel whose ELFs benchmarks/spike_check.py runs on Spike
_spec = importlib.util.spec_from_file_location(
    "spike_check", Path(__file__).resolve().parents[1] / "benchmarks" / "spike_check.py")
_spike_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_spike_check)
two_dots = _spike_check.two_dots


@pytest.mark.parametrize("target", ["sim", "iss"])
@pytest.mark.parametrize("M,N,K,block", [(1, 1, 1, (16, 16, 16)), (17, 33, 40, (32, 48, 64)),
                                          (65, 17, 100, (32, 16, 32)), (33, 65, 17, (16, 32, 16))])
def test_two_accumulators_bit_exact(M, N, K, block, target):
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    d = rng.integers(-128, 128, (K, N), dtype=np.int8)
    c = np.zeros((M, N), np.int32)
    e = np.zeros((M, N), np.int32)
    BM, BN, BK = block
    two_dots[(bl.cdiv(M, BM), bl.cdiv(N, BN))](a, b, d, c, e, M, N, K, BM=BM, BN=BN, BK=BK, target=target)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b)
    np.testing.assert_array_equal(e, a.astype(np.int32) @ d)


def test_two_accumulators_have_distinct_homes():
    """Each accumulator is placed in its own rows: twice the accumulator rows of one 32x48 block."""
    from baco.passes.pipeline import run_pipeline
    values, _ = two_dots.bind([np.zeros((17, 40), np.int8), np.zeros((40, 33), np.int8),
                               np.zeros((40, 33), np.int8), np.zeros((17, 33), np.int32),
                               np.zeros((17, 33), np.int32), 17, 33, 40], dict(BM=32, BN=48, BK=64))
    params, _, _ = two_dots.specialize(values)
    placed = run_pipeline(two_dots.baco_ir(params), until="gemmini-placement").stage_ir["gemmini-placement"]
    assert "gemmini.acc_rows_used = 192 : i64" in placed
