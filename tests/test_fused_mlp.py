"""Chained dots: examples/fused_mlp.py runs relu(X·W1)·W2 as one kernel, the second dot
reading the first's accumulator block as scaled, ReLU'd int8 (no DRAM round trip)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import baco
import baco.language as bl
from baco.errors import CompilationError

_spec = importlib.util.spec_from_file_location("fused_mlp_example",
                                               Path(__file__).parents[1] / "examples" / "fused_mlp.py")
fm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fm)


def operands(M, K, H, N, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, H), dtype=np.int8),
            rng.integers(-128, 128, (H, N), dtype=np.int8), 1 / (64 * np.sqrt(K)), 1 / (48 * np.sqrt(H)))


SHAPES = [(1, 1, 1, 1, 16, 16), (17, 65, 33, 17, 16, 32), (33, 200, 64, 10, 32, 64), (65, 17, 16, 33, 32, 16),
          (40, 100, 48, 1, 16, 64)]


@pytest.mark.parametrize("target", ["sim", "iss"])
@pytest.mark.parametrize("M,K,H,N,bm,bk", SHAPES)
def test_fused_mlp_bit_exact(M, K, H, N, bm, bk, target):
    x, w1, w2, s1, s2 = operands(M, K, H, N, seed=M + K + H + N)
    y, _ = fm.fused_mlp(x, w1, w2, s1, s2, block_m=bm, block_k=bk, target=target)
    np.testing.assert_array_equal(y, fm.reference(x, w1, w2, s1, s2))


def test_hidden_layer_never_leaves_the_chip():
    """The only mvouts are the output's tiles (the hidden block has no way to DRAM), and
    each program reconfigures the execute unit once more, for the scaled ReLU read of the hidden block."""
    M, K, H, N = 33, 70, 48, 20
    x, w1, w2, s1, s2 = operands(M, K, H, N)
    counts = fm.command_counts(x, w1, w2, s1, s2, block_m=32, block_k=32)
    programs, d = 2, 16
    assert counts["mvout"] == (-(-M // d)) * (-(-N // d))
    assert counts["config_ex"] == 2 * programs     # the kernel entry's, and the read's


def test_elf_self_checks_on_the_iss(tmp_path):
    assert fm.main(["--M", "17", "--K", "40", "--H", "20", "--N", "5", "--elf", str(tmp_path / "f.elf")]) == 0
    from baco.cli import main as cli
    assert cli(["sim", str(tmp_path / "f.elf")]) == 0


@baco.jit
def chained_b(a_ptr, b_ptr, c_ptr, BM: bl.constexpr):
    a = bl.make_block_ptr(a_ptr, shape=(BM, BM), strides=(BM, 1), offsets=(0, 0), block_shape=(BM, BM))
    c = bl.make_block_ptr(c_ptr, shape=(BM, BM), strides=(BM, 1), offsets=(0, 0), block_shape=(BM, BM))
    acc = bl.zeros((BM, BM), dtype=bl.int32)
    acc += bl.dot(bl.load(a), bl.load(a))
    out = bl.zeros((BM, BM), dtype=bl.int32)
    out += bl.dot(bl.load(a), acc.to(bl.int8))
    bl.store(c, out)


def test_accumulator_as_b_operand_is_a_clear_error():
    a = np.ones((16, 16), np.int8)
    with pytest.raises(CompilationError, match="only a dot's first operand may be read from the accumulator"):
        chained_b[(1,)](a, a, np.zeros((16, 16), np.int32), BM=16)


@pytest.mark.parametrize("target", ["sim", "iss"])
def test_fused_mlp_double_buffered(target):
    x, w1, w2, s1, s2 = operands(65, 130, 40, 33, seed=7)
    y, _ = fm.fused_mlp(x, w1, w2, s1, s2, block_m=32, block_k=32, double_buffer=True, target=target)
    np.testing.assert_array_equal(y, fm.reference(x, w1, w2, s1, s2))


# Output-stationary form (runs on Spike): the first layer's whole K is summed in the array and
# its OS computes write relu(sat8(round_shift(sum, s))) straight into a scratchpad block.
OS_SHAPES = [(1, 1, 1, 1, 16), (17, 65, 33, 17, 16), (33, 17, 65, 1, 32), (65, 33, 17, 65, 32),
             (40, 100, 48, 10, 16)]


def os_operands(M, K, H, N):
    x, w1, w2, _, s2 = operands(M, K, H, N, seed=M + K + H + N)
    return x, w1, w2, fm.shift_scale(K), s2


@pytest.mark.parametrize("target", ["sim", "iss"])
@pytest.mark.parametrize("M,K,H,N,bm", OS_SHAPES)
def test_fused_mlp_os_bit_exact(M, K, H, N, bm, target):
    x, w1, w2, s1, s2 = os_operands(M, K, H, N)
    y, _ = fm.fused_mlp(x, w1, w2, s1, s2, block_m=bm, dataflow="OS", target=target)
    np.testing.assert_array_equal(y, fm.reference(x, w1, w2, s1, s2))


def test_fused_mlp_os_interpreter_agrees(monkeypatch):
    monkeypatch.setenv("BACO_INTERPRET", "1")
    x, w1, w2, s1, s2 = os_operands(33, 65, 17, 20)
    y, _ = fm.fused_mlp(x, w1, w2, s1, s2, block_m=16, dataflow="OS")
    np.testing.assert_array_equal(y, fm.reference(x, w1, w2, s1, s2))


def test_fused_mlp_os_hidden_layer_is_written_by_the_array():
    """32x32 -> 16 -> 16, one program: the mvins are X's and W1's two row tiles each, W2's one and the
    output accumulator's two zero tiles (none for the hidden block); the mvouts are the output's two
    tiles; and it runs without the accumulator read path (Spike's model)."""
    import dataclasses
    from baco.gemmini.config import GemminiConfig
    x, w1, w2, s1, s2 = os_operands(32, 32, 16, 16)
    y, info = fm.fused_mlp(x, w1, w2, s1, s2, dataflow="OS", target="iss",
                           config=dataclasses.replace(GemminiConfig(), acc_read_operands=False))
    np.testing.assert_array_equal(y, fm.reference(x, w1, w2, s1, s2))
    counts = info["result"].stats
    assert counts["mvin"] == 2 + 2 + 1 + 2
    assert counts["mvout"] == 2
    assert counts["config_ex"] == 3     # the kernel entry's, the shifted ReLU write's, and back


def test_fused_mlp_os_scale_must_be_a_power_of_two():
    x, w1, w2, _, s2 = os_operands(17, 20, 16, 5)
    with pytest.raises(ValueError, match=r"scale1 must be a power of two 2\^-s .* got 0\.003"):
        fm.fused_mlp(x, w1, w2, 0.003, s2, dataflow="OS")     # the wrapper, before compiling
    y = np.zeros((17, 5), np.int8)
    kernel, grid, args, meta = fm.launch_args(x, w1, w2, y, 0.003, s2, 32, 64, "OS", 16)
    with pytest.raises(CompilationError, match=r"power of two 2\^-s .* not 0\.003"):
        kernel[grid](*args, **meta)                              # the compiler, at the kernel's line


def test_fused_mlp_os_elf_self_checks_on_the_iss(tmp_path):
    assert fm.main(["--M", "17", "--K", "40", "--H", "20", "--N", "5", "--dataflow", "OS",
                    "--elf", str(tmp_path / "f.elf")]) == 0
    from baco.cli import main as cli
    assert cli(["sim", str(tmp_path / "f.elf")]) == 0
