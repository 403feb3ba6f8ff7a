"""Launching kernels: numpy and torch arguments, grids, specialization cache,
interpreter mode, kernels without boundary checks, runtime faults."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

import baco
import baco.language as bl
from baco.gemmini.arith import reference_matmul
from baco.gemmini.isa import GemminiFault
from baco.options import CompileOptions

_spec = importlib.util.spec_from_file_location("matmul_example", Path(__file__).parents[1] / "examples" / "matmul.py")
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)


@baco.jit
def exact_tiles(a_ptr, b_ptr, c_ptr, K, N, BM: bl.constexpr, BN: bl.constexpr, BK: bl.constexpr):
    """No boundary checks: shapes are multiples of the blocks."""
    pm = bl.program_id(0)
    pn = bl.program_id(1)
    a = bl.make_block_ptr(a_ptr, shape=(bl.num_programs(0) * BM, K), strides=(K, 1),
                          offsets=(pm * BM, 0), block_shape=(BM, BK))
    b = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pn * BN), block_shape=(BK, BN))
    acc = bl.zeros((BM, BN), dtype=bl.int32)
    for _ in range(K // BK):
        acc = bl.dot(bl.load(a), bl.load(b), acc)
        a = bl.advance(a, (0, BK))
        b = bl.advance(b, (BK, 0))
    c = bl.make_block_ptr(c_ptr, shape=(bl.num_programs(0) * BM, N), strides=(N, 1),
                          offsets=(pm * BM, pn * BN), block_shape=(BM, BN))
    bl.store(c, acc)


def rand(shape, seed):
    return np.random.default_rng(seed).integers(-128, 128, shape, dtype=np.int8)


def test_kernel_without_boundary_checks_stages_operands_locally():
    a, b = rand((64, 96), 1), rand((96, 48), 2)
    c = np.zeros((64, 48), np.int32)
    exact_tiles[(2, 3)](a, b, c, 96, 48, BM=32, BN=16, BK=32)
    np.testing.assert_array_equal(c, reference_matmul(a, b))


def test_torch_tensors_and_callable_grid():
    a, b = torch.from_numpy(rand((40, 50), 3)), torch.from_numpy(rand((50, 30), 4))
    c = torch.zeros((40, 30), dtype=torch.int32)
    grid = lambda meta: (bl.cdiv(40, meta["BLOCK_M"]), bl.cdiv(30, meta["BLOCK_N"]))  # noqa: E731
    mm.matmul_kernel[grid](a, b, c, 40, 30, 50, 50, 1, 30, 1, 30, 1, 1.0,
                           BLOCK_M=16, BLOCK_N=16, BLOCK_K=32, RELU=False, OUT_INT8=False)
    np.testing.assert_array_equal(c.numpy(), reference_matmul(a.numpy(), b.numpy()))


def test_specializations_are_cached():
    a, b = rand((20, 20), 5), rand((20, 20), 6)
    mm.matmul_kernel.cache.clear()
    _, first = mm.matmul(a, b, block=(16, 16, 16))
    _, again = mm.matmul(a, b, block=(16, 16, 16))
    assert first["kernel"] is again["kernel"] and len(mm.matmul_kernel.cache) == 1
    _, other = mm.matmul(a, b, block=(16, 16, 32))
    assert other["kernel"] is not first["kernel"] and len(mm.matmul_kernel.cache) == 2


def test_one_compile_options_object_keys_the_launch_and_reaches_the_compiler(monkeypatch):
    """The launch's options become one CompileOptions (defaults resolved: BACO_LOOP_WS for
    loop_ws), which keys the specialization cache and is what the compiled kernel was built with."""
    monkeypatch.setenv("BACO_LOOP_WS", "0")
    a, b = rand((32, 32), 7), rand((32, 32), 8)
    exact_tiles.cache.clear()
    args = (a, b, np.zeros((32, 32), np.int32), 32, 32)
    off = exact_tiles.compile(*args, BM=16, BN=16, BK=16)
    assert off.options == CompileOptions.of(loop_ws=False) and off.options.loop_ws is False
    on = exact_tiles.compile(*args, BM=16, BN=16, BK=16, loop_ws=True)
    assert on.options == CompileOptions(loop_ws=True) and on is not off
    assert exact_tiles.compile(*args, BM=16, BN=16, BK=16, loop_ws=False) is off
    assert len(exact_tiles.cache) == 2
    assert {k[-len(on.options.key()):] for k in exact_tiles.cache} == {off.options.key(), on.options.key()}


@pytest.mark.parametrize("options,error,match", [
    (dict(target="gpu"), ValueError, r"target must be one of \('sim', 'iss'\), not 'gpu'"),
    (dict(dataflow="XS"), ValueError, "dataflow must be 'WS' or 'OS', not 'XS'"),
    (dict(config=16), TypeError, "config must be a GemminiConfig, got int 16"),
    (dict(double_buffer=1), TypeError, "double_buffer must be a bool, got int 1"),
    (dict(loop_ws="on"), TypeError, "loop_ws must be a bool or None, got str 'on'"),
])
def test_compile_options_reject_what_they_would_convert(options, error, match):
    with pytest.raises(error, match=match):
        CompileOptions.of(**options)


def test_interpreter_matches_compiled(monkeypatch):
    a, b = rand((33, 17), 7), rand((17, 65), 8)
    compiled, _ = mm.matmul(a, b, out="int8", scale=0.05, relu=True)
    monkeypatch.setenv("BACO_INTERPRET", "1")
    interpreted, info = mm.matmul(a, b, out="int8", scale=0.05, relu=True)
    assert info["interpreted"]
    np.testing.assert_array_equal(interpreted, compiled)


def test_out_of_bounds_access_is_a_fault_not_a_crash():
    a, b = rand((16, 16), 9), rand((16, 16), 10)
    c = np.zeros((16, 16), np.int32)
    with pytest.raises(GemminiFault, match=r"outside the kernel's arrays.*mvin"):
        # lies about M: the kernel reads rows of A that do not exist
        mm.matmul_kernel[(4, 1)](a, b, c, 64, 16, 16, 16, 1, 16, 1, 16, 1, 1.0,
                                 BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, RELU=False, OUT_INT8=False)


def test_bad_arguments_are_reported():
    a = rand((16, 16), 11)
    with pytest.raises(TypeError, match="dtype float64"):
        mm.matmul_kernel[(1, 1)](a.astype(np.float64), a, a, 16, 16, 16, 16, 1, 16, 1, 16, 1, 1.0,
                                 BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, RELU=False, OUT_INT8=True)
    with pytest.raises(TypeError, match="C-contiguous"):
        mm.matmul_kernel[(1, 1)](a.T, a, a, 16, 16, 16, 16, 1, 16, 1, 16, 1, 1.0,
                                 BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, RELU=False, OUT_INT8=True)
    with pytest.raises(RuntimeError, match="only be used inside a @baco.jit kernel"):
        bl.program_id(0)


def test_compiled_kernel_checks_its_arguments():
    """kernel.compile() ahead of time, then ck.run(grid, args): the arguments are checked against
    what was compiled (their number, each array's element type and layout, integers, and an
    integer compiled as the constant 1), an error naming the argument; then the result is exact."""
    a, b = rand((32, 32), 9), rand((32, 32), 10)
    c = np.zeros((32, 32), np.int32)
    ck = exact_tiles.compile(a, b, c, 32, 32, BM=16, BN=16, BK=16)
    assert [p for p, _ in ck.parameters] == ["a_ptr", "b_ptr", "c_ptr", "K", "N"] and ck.fixed == {}
    for args, grid, error, match in [
            ([a, b, c, 32], (2, 2), TypeError, r"takes 5 run-time arguments \['a_ptr', 'b_ptr', 'c_ptr', 'K', 'N'\]"),
            ([a, b, c, 32, 32, 1], (2, 2), TypeError, "takes 5 run-time arguments"),
            ([a.astype(np.int32), b, c, 32, 32], (2, 2), TypeError, "`a_ptr` was compiled for int8 arrays, got int32"),
            ([a, b, c.astype(np.int8), 32, 32], (2, 2), TypeError, "`c_ptr` was compiled for int32 arrays"),
            ([a, np.asfortranarray(b), c, 32, 32], (2, 2), TypeError, "`b_ptr` must be C-contiguous"),
            ([a.tolist(), b, c, 32, 32], (2, 2), TypeError, "`a_ptr` must be a numpy array of int8"),
            ([a, b, c, 32.5, 32], (2, 2), ValueError, "`K` must be an integer"),
            ([a, b, c, 32, 32], (2.5, 2), ValueError, "grid dimension 0")]:
        with pytest.raises(error, match=match):
            ck.run(grid, args)
    ck.run((2, 2), [a, b, c, 32, 32])
    np.testing.assert_array_equal(c, reference_matmul(a, b))

    ones = exact_tiles.compile(a[:1].copy(), b[:1].copy(), c[:1].copy(), 1, 32, BM=16, BN=16, BK=16)
    assert ones.fixed == {"K": 1}
    with pytest.raises(ValueError, match="`K` = 32: the kernel was compiled for K = 1"):
        ones.run((2, 2), [a, b, c, 32, 32])


def test_constexprs_beyond_the_kernels_integers_are_errors():
    """A constexpr integer is an i64 in the code (a larger one names the argument); a block no
    Gemmini memory holds is a located compile error, before MLIR's size arithmetic overflows."""
    a, b, c = rand((32, 32), 1), rand((32, 32), 2), np.zeros((32, 32), np.int32)
    with pytest.raises(ValueError, match="constexpr `BM` = 1180591620717411303424 is outside"):
        exact_tiles.compile(a, b, c, 32, 32, BM=2 ** 70, BN=16, BK=16)
    with pytest.raises(baco.CompilationError, match="larger than any Gemmini memory") as err:
        exact_tiles.compile(a, b, c, 32, 32, BM=2 ** 62, BN=16, BK=16)
    assert err.value.filename == __file__
    assert exact_tiles.compile(a, b, c, 32, 32, BM=np.int64(16), BN=16, BK=16) is \
        exact_tiles.compile(a, b, c, 32, 32, BM=16, BN=16, BK=16)
