"""A launch of one program of the GEMM kernel: a ragged K step of at least DIM over a B of one
column block is split in two LOOP_WSs (baco.passes.loop_ws._Resident.with_a: nothing is reused, and
the split's loads overlap its computes where an explicitly moved B's mvins run before them), and the
RISC-V runner of a kernel compiled for its grid loops over constant bounds, writing the harness's
grid arrays only where the kernel reads them (baco.codegen.riscv.grid_reads)."""
import numpy as np
import pytest

from baco.codegen.riscv import GRID_EXTENTS, GRID_PIDS, grid_reads, harness_source
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, last_step_form, loop_ws_launch_terms, one_program
from baco.kernels.matmul import matmul, matmul_kernel
from baco.sim.timing import TimingModel


def _operands(M, N, K, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8),
            rng.integers(-5000, 5000, N, dtype=np.int32))


# (DIM, M, N, K, blocks): one program, one ragged K step of at least DIM over one column block of B
ONE = [(16, 1, 1, 91, (16, 16, 96)), (16, 20, 1, 179, (32, 16, 192)), (32, 1, 1, 91, (32, 32, 96)),
       (8, 7, 5, 19, (8, 8, 24)), (16, 17, 13, 33, (32, 16, 48))]


@pytest.mark.parametrize("dim,M,N,K,blocks", ONE)
def test_one_program_splits_a_ragged_step_and_is_race_free(dim, M, N, K, blocks):
    """Two LOOP_WSs and no explicit mvin of B (the walk's form), bit-exact with and without a bias,
    the cycle model's race check on."""
    cfg, s = GemminiConfig.from_capacity(dim, 256, 64), GemmSchedule(*blocks, "WS", True)
    assert one_program(M, N, s) and last_step_form(K, s, cfg, one_program=True) == "split"
    assert last_step_form(K, s, cfg) == "explicit_b"        # in a column of several programs
    terms = loop_ws_launch_terms(M, N, K, s, cfg)     # one split step, its head first or last
    assert terms["head"] + terms["head_last"] == 1 and terms["split_after"] == 0
    a, b, bias = _operands(M, N, K, M + N + K)
    for with_bias in (False, True):
        c = np.zeros((M, N), np.int32)
        args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, 1.0]
        options = dict(RELU=False, OUT_INT8=False, schedule=s, config=cfg)
        if with_bias:
            options["bias_ptr"] = bias
        ck = matmul_kernel.compile(*args, **options)
        tm, names = TimingModel(cfg), []

        def record(name, f, pc=None):
            names.append(name)
        record.sees_loops = True        # a LOOP_WS whole, not the commands it expands to
        ck.run((1, 1), args + ([bias] if with_bias else []), observers=[tm.observe, record])
        tm.fence()
        assert names.count("loop_ws") == 2 and "mvin2" not in names
        np.testing.assert_array_equal(c, reference_matmul(a, b, bias[None, :] if with_bias else None))


@pytest.mark.parametrize("dim,M,N,K,blocks,out", [(16, 1, 1, 91, (16, 16, 96), "int32"),
                                                   (16, 20, 1, 179, (32, 16, 192), "int8")])
def test_one_program_split_bit_exact_on_the_iss(dim, M, N, K, blocks, out):
    a, b, bias = _operands(M, N, K, 7 * M + K)
    cfg, scale = GemminiConfig.from_capacity(dim, 256, 64), 0.05 if out == "int8" else 1.0
    c, info = matmul(a, b, bias=bias, out=out, scale=scale, schedule=GemmSchedule(*blocks, "WS", True),
                     target="iss", config=cfg)
    np.testing.assert_array_equal(c, reference_matmul(a, b, bias[None, :], out=out, scale=scale))
    assert info["kernel"].llvm_ir.count("@baco.rocc.loop_ws(") >= 2


def _kernel_ir(M, N, K, blocks, grid):
    cfg, s = GemminiConfig.from_capacity(16, 256, 64), GemmSchedule(*blocks, "WS", True)
    args = [np.zeros((M, K), np.int8), np.zeros((K, N), np.int8), np.zeros((M, N), np.int32), M, N, K, K, 1, N, 1,
            N, 1, 1.0]
    return matmul_kernel.compile(*args, target="iss", grid=grid, RELU=False, OUT_INT8=False, schedule=s,
                                 config=cfg).llvm_ir


def test_the_runner_loops_over_its_compiled_grid():
    """A one-program launch reads no grid query: its runner calls the kernel once and writes neither
    array; a column of programs reads its program id along M: the runner writes the ids, over
    constant bounds; a kernel not compiled for a grid reads the grid from the launch table."""
    one = grid_reads(_kernel_ir(1, 1, 91, (16, 16, 96), (1, 1)))
    assert one == (False, False)
    text = harness_source("k", ["memref"], ["i8"], grid=(1, 1, 1), reads=one)
    assert GRID_PIDS not in text.split("int main")[1] and GRID_EXTENTS not in text.split("int main")[1]
    column = grid_reads(_kernel_ir(40, 1, 91, (16, 16, 96), (3, 1)))
    assert column[0]
    text = harness_source("k", ["memref"], ["i8"], grid=(3, 1, 1), reads=column).split("int main")[1]
    assert f"{GRID_PIDS}[0] = p0" in text
    assert "baco_launch[0]" not in text
    assert "baco_launch[0]" in harness_source("k", ["memref"], ["i8"]).split("int main")[1]


def test_grid_reads_sees_any_use_but_a_declaration():
    declared = 'declare i64 @baco_program_id(i64)\ndeclare i64 @baco_num_programs(i64)\n'
    assert grid_reads(declared) == (False, False)
    assert grid_reads(declared + '  %3 = tail call noundef i64 @baco_program_id(i64 0)\n') == (True, False)
    assert grid_reads(declared + '  %n = call i64 @"baco_num_programs"(i64 1)\n') == (False, True)
