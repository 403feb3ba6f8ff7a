"""BACO_INTERPRET=1 is an oracle: Gemmini's arithmetic (ReLU before scale, RNE,
saturation, NaN/inf as the accumulator read path does them, OS's array-width
saturation), the compiler's boundary_check semantics and its rejections."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.errors import CompilationError
from baco.gemmini.arith import reference_matmul
from baco.gemmini.isa import GemminiFault

_spec = importlib.util.spec_from_file_location("matmul_example", Path(__file__).parents[1] / "examples" / "matmul.py")
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)


def rand(shape, seed, lo=-128, hi=128):
    return np.random.default_rng(seed).integers(lo, hi, shape, dtype=np.int8)


def both(monkeypatch, fn):
    """fn() compiled, then interpreted."""
    monkeypatch.delenv("BACO_INTERPRET", raising=False)
    compiled = fn()
    monkeypatch.setenv("BACO_INTERPRET", "1")
    interpreted = fn()
    monkeypatch.delenv("BACO_INTERPRET")
    return compiled, interpreted


@pytest.mark.parametrize("scale,relu", [(-0.05, True), (float("nan"), False), (float("nan"), True),
                                        (float("inf"), True), (float("-inf"), False), (3e-3, False)])
@pytest.mark.parametrize("dataflow", ["WS", "OS"])
def test_epilogue_order_and_special_scales(monkeypatch, scale, relu, dataflow):
    a, b = rand((33, 17), 1), rand((17, 40), 2)
    compiled, interpreted = both(monkeypatch, lambda: mm.matmul(a, b, out="int8", scale=scale, relu=relu,
                                                               block=(16, 16, 32), dataflow=dataflow)[0])
    np.testing.assert_array_equal(interpreted, compiled)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(compiled, reference_matmul(a, b, out="int8", scale=scale, relu=relu,
                                                                 os_k_block=32 if dataflow == "OS" else None))


def test_os_saturates_each_k_block_to_the_array_width(monkeypatch):
    """K=128 of 127*127 products overflows OS's 20-bit array output; WS does not saturate."""
    a = np.full((16, 128), 127, np.int8)
    b = np.full((128, 16), 127, np.int8)
    for dataflow, expect in (("OS", (1 << 19) - 1), ("WS", 128 * 127 * 127)):
        compiled, interpreted = both(monkeypatch, lambda: mm.matmul(a, b, block=(16, 16, 128),
                                                                   dataflow=dataflow)[0])
        assert (compiled == expect).all() and (interpreted == expect).all()


@baco.jit
def copy_block(src, dst, M, N, BM: bl.constexpr, BN: bl.constexpr, CHECK: bl.constexpr):
    p = bl.make_block_ptr(src, shape=(M, N), strides=(N, 1), offsets=(bl.program_id(0) * BM, 0),
                          block_shape=(BM, BN))
    q = bl.make_block_ptr(dst, shape=(M, N), strides=(N, 1), offsets=(bl.program_id(0) * BM, 0),
                          block_shape=(BM, BN))
    acc = bl.dot(bl.load(p, boundary_check=CHECK), bl.load(q, boundary_check=CHECK))
    bl.store(q, acc.to(bl.int8), boundary_check=CHECK)


def test_unchecked_blocks_outside_the_array_fault_in_both(monkeypatch):
    src, dst = rand((20, 16), 3), np.zeros((20, 16), np.int8)
    for interpret in ("0", "1"):
        monkeypatch.setenv("BACO_INTERPRET", interpret)
        with pytest.raises(GemminiFault, match="outside the kernel's arrays"):
            copy_block[(2,)](src, dst.copy(), 20, 16, BM=16, BN=16, CHECK=())


def test_interpreter_rejects_what_the_compiler_rejects(monkeypatch):
    monkeypatch.setenv("BACO_INTERPRET", "1")
    a, b = rand((64, 64), 4), rand((64, 64), 5)
    c = np.zeros((64, 64), np.int32)
    with pytest.raises(CompilationError, match="do not fit"):   # over capacity (matmul() checks it before)
        mm.matmul_kernel[(1, 1)](a, b, c, 64, 64, 64, 64, 1, 64, 1, 64, 1, 1.0, BLOCK_M=512, BLOCK_N=512,
                                 BLOCK_K=512, RELU=False, OUT_INT8=False)
    with pytest.raises(ValueError, match="block .* do not fit"):
        mm.matmul(a, b, block=(512, 512, 512))
    with pytest.raises(TypeError, match="dtype int16"):
        mm.matmul(a.astype(np.int16), b)


@pytest.mark.parametrize("grid,match", [((2.5, 1), "grid dimension 0 must be an integer"),
                                        ((2 ** 70, 1), "grid dimension 0 = 1180591620717411303424"),
                                        ((-1, 1), "grid dimension 0 = -1 is outside"),
                                        ((True, 1), "grid dimension 0 must be an integer, got the bool"),
                                        ((1, 1, 1, 1), "1 to 3 dimensions")])
def test_bad_grids_are_rejected(grid, match):
    a = rand((16, 16), 6)
    c = np.zeros((16, 16), np.int32)
    with pytest.raises((TypeError, ValueError), match=match):
        mm.matmul_kernel[grid](a, a, c, 16, 16, 16, 16, 1, 16, 1, 16, 1, 1.0,
                               BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, RELU=False, OUT_INT8=False)


def test_scalars_exact_or_rejected_naming_the_argument():
    a = rand((16, 16), 7)
    c = np.zeros((16, 16), np.int32)
    args = [a, a, c, 16, 16, 16, 16, 1, 16, 1, 16, 1, 1.0]
    opts = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, RELU=False, OUT_INT8=False)
    with pytest.raises(ValueError, match=r"argument `M` = 1180591620717411303424 is outside"):
        mm.matmul_kernel[(1, 1)](*args[:3], 2 ** 70, *args[4:], **opts)
    # numpy integer scalars, integral float grids: accepted and exact
    mm.matmul_kernel[(np.int64(1), 1.0)](*args[:3], np.int32(16), np.int64(16), *args[5:], **opts)
    np.testing.assert_array_equal(c, reference_matmul(a, a))
