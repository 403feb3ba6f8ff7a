"""boundary_check means [0, limit) on both ends, in every backend: a negative row
offset reads zeros and writes nothing before row 0 (sim, iss, interpreter, reference);
a negative column offset, which Gemmini cannot place inside a scratchpad row, is a
located compile error when constant and a located run-time error otherwise."""
import numpy as np
import pytest

import baco
import baco.language as bl
from baco.errors import CompilationError, KernelRuntimeError


@baco.jit
def shifted_matmul(a_ptr, b_ptr, c_ptr, M, N, K, OFF_M, OFF_N, OFF_K,
                   BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr, OUT_INT8: bl.constexpr):
    pm = bl.program_id(0)
    pn = bl.program_id(1)
    a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pm * BM + OFF_M, OFF_K),
                          block_shape=(BM, BK))
    b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(OFF_K, pn * BN + OFF_N),
                          block_shape=(BK, BN))
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for _ in range(bl.cdiv(K, BK)):
        acc = bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)), acc)
        a = bl.advance(a, (0, BK))
        b = bl.advance(b, (BK, 0))
    c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pm * BM + OFF_M, pn * BN),
                          block_shape=(BM, BN))
    if OUT_INT8:
        bl.store(c, (acc * 0.01).to(bl.int8), boundary_check=(0, 1))
    else:
        bl.store(c, acc, boundary_check=(0, 1))


def window(x, r0, c0, rows, cols):
    """x[r0:r0+rows, c0:c0+cols] with zeros outside [0, shape) on both ends."""
    out = np.zeros((rows, cols), np.int64)
    r = np.arange(r0, r0 + rows)
    c = np.arange(c0, c0 + cols)
    rm, cm = (r >= 0) & (r < x.shape[0]), (c >= 0) & (c < x.shape[1])
    out[np.ix_(rm, cm)] = x[np.ix_(r[rm], c[cm])]
    return out


def reference(a, b, off_m, off_n, grid, bm, bn, bk, out_int8):
    from baco.gemmini.arith import acc_to_int8
    M, K = a.shape
    N = b.shape[1]
    c = np.zeros((M, N), np.int8 if out_int8 else np.int32)
    for pm in range(grid[0]):
        for pn in range(grid[1]):
            acc = sum(window(a, pm * bm + off_m, k, bm, bk) @ window(b, k, pn * bn + off_n, bk, bn)
                      for k in range(0, -(-K // bk) * bk, bk))
            blk = acc_to_int8(acc, 0.01) if out_int8 else acc.astype(np.int32)
            r = np.arange(pm * bm + off_m, pm * bm + off_m + bm)
            cc = np.arange(pn * bn, pn * bn + bn)
            rm, cm = (r >= 0) & (r < M), (cc >= 0) & (cc < N)
            c[np.ix_(r[rm], cc[cm])] = blk[np.ix_(rm, cm)]
    return c


def launch(a, b, off_m, off_n=0, *, target="sim", out_int8=False, dataflow="WS", block=(16, 16, 16)):
    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk = block
    c = np.zeros((M, N), np.int8 if out_int8 else np.int32)
    grid = (bl.cdiv(M, bm) + 1, bl.cdiv(N, bn))
    shifted_matmul[grid](a, b, c, M, N, K, off_m, off_n, 0, BM=bm, BN=bn, BK=bk, OUT_INT8=out_int8,
                         target=target, dataflow=dataflow)
    return c, grid


def rand(shape, seed):
    return np.random.default_rng(seed).integers(-128, 128, shape, dtype=np.int8)


@pytest.mark.parametrize("off_m", [0, -1, -5, -16, -17, -40, 3])
@pytest.mark.parametrize("out_int8,dataflow", [(False, "WS"), (True, "OS")])
def test_negative_row_offsets_read_zeros_and_write_nothing(monkeypatch, off_m, out_int8, dataflow):
    a, b = rand((37, 40), 1), rand((40, 29), 2)
    c, grid = launch(a, b, off_m, out_int8=out_int8, dataflow=dataflow)
    expected = reference(a, b, off_m, 0, grid, 16, 16, 16, out_int8)
    np.testing.assert_array_equal(c, expected)
    monkeypatch.setenv("BACO_INTERPRET", "1")
    interpreted, _ = launch(a, b, off_m, out_int8=out_int8, dataflow=dataflow)
    np.testing.assert_array_equal(interpreted, expected)


def test_negative_row_offsets_on_iss():
    a, b = rand((21, 19), 3), rand((19, 17), 4)
    c, grid = launch(a, b, -7, target="iss")
    np.testing.assert_array_equal(c, reference(a, b, -7, 0, grid, 16, 16, 16, False))


@pytest.mark.parametrize("target,interpret", [("sim", "0"), ("sim", "1"), ("iss", "0")])
def test_negative_column_offset_is_a_located_runtime_error(monkeypatch, target, interpret):
    monkeypatch.setenv("BACO_INTERPRET", interpret)
    a, b = rand((20, 20), 5), rand((20, 20), 6)
    with pytest.raises(KernelRuntimeError, match="negative column offset") as e:
        launch(a, b, 0, -3, target=target)
    line = shifted_matmul.first_line + 11        # the loads inside the K loop
    assert (e.value.line, e.value.col) == (line, 57)   # bl.load(b, ...): b's column offset


@baco.jit
def constant_negative_column(a_ptr, M):
    p = bl.make_block_ptr(a_ptr, shape=(M, M), strides=(M, 1), offsets=(0, -4), block_shape=(16, 16))
    bl.store(p, bl.load(p, boundary_check=(1,)), boundary_check=(1,))


def test_constant_negative_column_offset_is_a_compile_error():
    a = rand((16, 16), 7)
    with pytest.raises(CompilationError, match="negative column offset") as e:
        constant_negative_column[(1,)](a, 16)
    assert e.value.line == constant_negative_column.first_line + 3


def test_empty_launch_on_iss_and_build_folders_removed(tmp_path, monkeypatch):
    """M=0 runs on the ISS (its data stays in the ELF though no program reads it), and a
    kernel's RISC-V build folder goes away with it unless BACO_KEEP_TEMPS=1."""
    import gc
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    a, b = rand((0, 16), 8), rand((16, 16), 9)
    c, _ = launch(a, b, 0, target="iss")
    assert c.shape == (0, 16)
    shifted_matmul.cache.clear()
    gc.collect()
    assert not list(tmp_path.glob("baco-*")), list(tmp_path.iterdir())
    monkeypatch.setenv("BACO_KEEP_TEMPS", "1")
    launch(rand((5, 16), 10), b, 0, target="iss")
    shifted_matmul.cache.clear()
    gc.collect()
    assert list(tmp_path.glob("baco-shifted_matmul-*"))


@baco.jit
def rows_shifted_matmul(a_ptr, b_ptr, c_ptr, M, N, K, OFF, BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr):
    pm = bl.program_id(0)
    row0 = pm * BM + OFF
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for kb in range(0, bl.cdiv(K, BK)):
        a = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(row0, kb * BK), block_shape=(BM, BK))
        b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(kb * BK, 0), block_shape=(BK, BN))
        acc += bl.dot(bl.load(a, boundary_check=(0, 1)), bl.load(b, boundary_check=(0, 1)))
    c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(row0, 0), block_shape=(BM, BN))
    bl.store(c, acc, boundary_check=(0, 1))


@pytest.mark.parametrize("dim,M,off", [(8, 20, -16), (8, 20, -30), (8, 40, -8), (4, 33, -13), (16, 20, -16)])
def test_block_whose_first_row_tiles_lie_outside(dim, M, off):
    """A WS block whose first valid rows are two or more DIM-row tiles in: the store that runs
    behind the computes stores each row tile after it is computed (it stored the window's tile
    i-1 after the block's tile i: zeros where the window starts late)."""
    from baco.gemmini.arith import reference_matmul
    from baco.gemmini.config import GemminiConfig
    rng = np.random.default_rng(dim + M - off)
    a = rng.integers(-128, 128, (M, 8), dtype=np.int8)
    b = rng.integers(-128, 128, (8, 8), dtype=np.int8)
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    grid = (-(-(M - off) // 32),)
    for target in ("sim", "iss"):
        c = np.zeros((M, 8), np.int32)
        rows_shifted_matmul[grid](a, b, c, M, 8, 8, off, BM=32, BN=8, BK=8, config=cfg, target=target)
        np.testing.assert_array_equal(c, reference_matmul(a, b, out="int32"), err_msg=target)
