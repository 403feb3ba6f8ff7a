"""Several accumulators and independent dots in one kernel: each bl.zeros gets its own
accumulator block (CSE used to merge equal zero blocks into one buffer that placement
could not copy)."""
import numpy as np
import pytest

import baco
import baco.language as bl


@baco.jit
def two_dots(a_ptr, b_ptr, d_ptr, c_ptr, e_ptr, M, N, K,
             BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BM, 0),
                              block_shape=(BM, BK), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=(1, 0))
    d_blk = bl.make_block_ptr(d_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN),
                              block_shape=(BK, BN), order=(1, 0))
    acc_b = bl.zeros((BM, BN), dtype=bl.int32)
    acc_d = bl.zeros((BM, BN), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BK)):
        a = bl.load(a_blk, boundary_check=(0, 1))
        acc_b += bl.dot(a, bl.load(b_blk, boundary_check=(0, 1)))
        acc_d += bl.dot(a, bl.load(d_blk, boundary_check=(0, 1)))
        a_blk = bl.advance(a_blk, (0, BK))
        b_blk = bl.advance(b_blk, (BK, 0))
        d_blk = bl.advance(d_blk, (BK, 0))
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    e_blk = bl.make_block_ptr(e_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BM, pid_n * BN),
                              block_shape=(BM, BN), order=(1, 0))
    bl.store(c_blk, acc_b, boundary_check=(0, 1))
    bl.store(e_blk, acc_d, boundary_check=(0, 1))


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
