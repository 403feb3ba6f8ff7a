"""A block added to an accumulator block (gemmini.acc_add) whose window is a constant: a load of a
whole block at constant offsets needs no zero padding, so bufferization leaves no staging block
and no copy, and the acc_add generic reads the DRAM view in place. linalg-to-instgem lowers that
form as the copy form: one shrunk, mvin-scaled mvin into the accumulator block, the first add
overwriting it (no zeroing), the second with the accumulate bit. Checked on the pass's own text
IR and bit-exact on the host simulator and the ISS against numpy (resadd_kernel specialized on
(1, 1) and (m, n) grids, ragged 1/17/33; a kernel whose loads have literal offsets (0, 0))."""
import re

import numpy as np
import pytest

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.isa import ACC_BIT, ACCUMULATE_BIT
from baco.kernels.resadd import reference, resadd_launch
from baco.passes.pipeline import run_pipeline

SA, SB, OUT = 0.5, 0.75, 0.5


def _operands(M, N, seed=0):
    rng = np.random.default_rng(seed + 31 * M + N)
    return rng.integers(-128, 128, (M, N), dtype=np.int8), rng.integers(-128, 128, (M, N), dtype=np.int8)


def _folded_input(M=16, N=16, block=(16, 16)) -> str:
    """linalg-to-instgem's input for resadd specialized on its grid: the stages before the loop
    stages, as text (loop-ws makes this add one LOOP_WS, tests/test_loop_resadd.py)."""
    a, b = _operands(M, N)
    launch = resadd_launch(a, b, SA, SB, OUT, block=block)
    ck = launch.compiled("sim", specialize_shapes=True)
    return run_pipeline(ck.baco_ir, ck.options, until="chain-loop-ws").stage_ir["chain-loop-ws"]


def test_folded_form_is_the_pass_input():
    """The form the matcher meets: acc_add generics reading DRAM views, no staging copy."""
    text = _folded_input()
    adds = re.findall(r"linalg\.generic .*ins\((%\w+) : memref<16x16xi8, strided<\[16, 1\]>>\).*gemmini\.acc_add", text)
    assert len(adds) == 2
    for name in adds:
        assert re.search(rf"{name} = memref\.reinterpret_cast %arg", text)
    assert "memref.copy %reinterpret_cast" not in text and '"acc_add"' not in text


def test_pass_alone_lowers_the_folded_form():
    """linalg-to-instgem alone on the folded text IR (with config-elimination folding the
    constants): two mvins of 16x16 into accumulator row 0, the first overwriting, the second
    accumulating; each after a shrinking config_ld; no zeroing mvin (DRAM address 0)."""
    text = _folded_input()
    out = run_pipeline(text, start="linalg-to-instgem", until="config-elimination")
    ir = out.stage_ir["config-elimination"]
    consts = {m.group(1): int(m.group(2)) for m in re.finditer(r"(%\w+) = arith\.constant (-?\d+) : i64", ir)}
    mvins = [[consts.get(v) for v in m.group(1).split(", ")]
             for m in re.finditer(r'"instgem\.mvin"\(([^)]*)\)', ir)]
    assert len(mvins) == 2
    assert [m[1] for m in mvins] == [ACC_BIT, ACC_BIT | ACCUMULATE_BIT]
    assert all(m[2:] == [16, 16] and m[0] != 0 for m in mvins)
    loads = [[consts.get(v) for v in m.group(1).split(", ")]
             for m in re.finditer(r'"instgem\.config_ld"\(([^)]*)\)', ir)]
    assert len(loads) == 2 and all(ld[2] == 1 for ld in loads)      # shrink: int8 widened


@pytest.mark.parametrize("shape,block", [((16, 16), (16, 16)), ((1, 17), (16, 32)), ((33, 17), (48, 32)),
                                         ((17, 33), (16, 16)), ((33, 1), (16, 16)), ((32, 48), (16, 16))],
                         ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("target", ["sim", "iss"])
def test_resadd_specialized_on_its_grid_bit_exact(shape, block, target):
    """resadd compiled for its grid: (1, 1) grids (exact and ragged windows) and (m, n) grids."""
    a, b = _operands(*shape)
    launch = resadd_launch(a, b, SA, SB, OUT, block=block)
    ck = launch.compiled(target, specialize_shapes=True)
    assert ck.grid == tuple(launch.grid) + (1,)
    ck.run(launch.grid, launch.runtime_args())
    np.testing.assert_array_equal(launch.y, reference(a, b, SA, SB, OUT))


@jit
def _corner_add(a_ptr, b_ptr, c_ptr, M, N, sa, sb, BM: bl.constexpr, BN: bl.constexpr):
    """c[:BM, :BN] = a[:BM, :BN]·sa + b[:BM, :BN]·sb as int8 (literal offsets (0, 0))."""
    a = bl.make_block_ptr(a_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BM, BN))
    b = bl.make_block_ptr(b_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BM, BN))
    total = bl.load(a) * sa + bl.load(b) * sb
    c = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BM, BN))
    bl.store(c, total.to(bl.int8))


@pytest.mark.parametrize("specialize", [False, True])
@pytest.mark.parametrize("target", ["sim", "iss"])
def test_literal_offsets_bit_exact(target, specialize):
    M, N = 48, 40
    a, b = _operands(M, N, seed=5)
    c = np.zeros((M, N), np.int8)
    _corner_add[(1,)](a, b, c, M, N, SA, SB, BM=32, BN=32, target=target, specialize_shapes=specialize)
    want = np.zeros((M, N), np.int8)
    want[:32, :32] = reference(a[:32, :32], b[:32, :32], SA, SB, 1.0, relu=False)
    np.testing.assert_array_equal(c, want)
