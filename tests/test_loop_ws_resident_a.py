"""A resident across a one-row grid (baco.passes.loop_ws._Resident, the C library's a_reuse): when the
GEMM kernel's grid has one row of programs of one K step, the first program's LOOP_WS moves A into
the bottom of the first scratchpad half (a_spad_id 1) and every later program computes on it (A
address 0: LoopMatmul's LdA does not run). Each launch runs on the functional model with the cycle
model's race check attached, bit-exact against the Gemmini arithmetic reference; LdA's mvins are
counted, and the schedule's walk (schedule.gemm_loop_ws_loops) moves A as often as the program does."""
import numpy as np
import pytest

from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_ws_commands import lda_commands
from baco.gemmini.schedule import GemmSchedule, default_gemm_schedule, gemm_loop_ws_loops, resident_a
from baco.kernels.matmul import matmul, matmul_kernel
from baco.sim.timing import TimingModel


def _config(dim):
    return GemminiConfig.from_capacity(dim, 256, 64)


def _operands(M, N, K, bias, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    return a, b, rng.integers(-5000, 5000, N, dtype=np.int32) if bias else None


def _run(M, N, K, blocks, dim, bias=False, out8=False):
    """(C, reference, LdA's mvins, the walk's LdA mvins) of the launch on the functional model, timed
    with the race check on."""
    cfg, s = _config(dim), GemmSchedule(*blocks, "WS", True)
    a, b, bias_row = _operands(M, N, K, bias, M * N + K + dim)
    c = np.zeros((M, N), np.int8 if out8 else np.int32)
    scale = 0.05 if out8 else 1.0
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, scale]
    options = dict(RELU=False, OUT_INT8=out8, schedule=s, config=cfg)
    if bias:
        options["bias_ptr"] = bias_row
    ck = matmul_kernel.compile(*args, **options)
    tm, lda = TimingModel(cfg), []

    def count(name, f, pc=None):
        lda.append(name == "mvin")
    ck.run((-(-M // s.block_m), -(-N // s.block_n)), args + ([bias_row] if bias else []), observers=[tm.observe, count])
    tm.fence()      # raises DataRace on a read or write out of program order
    ref = reference_matmul(a, b, None if bias_row is None else bias_row[None, :], out="int8" if out8 else "int32",
                           scale=scale)
    return c, ref, sum(lda), _walk_lda(M, N, K, s, cfg, out8, bias)


def _walk_lda(M, N, K, s, cfg, out8, bias):
    """LdA's mvins in the schedule's walk of the same launch."""
    def loops(items):
        for item, n in items:
            for _ in range(n):
                yield from (loops(item) if isinstance(item[0], tuple) else item)
    return sum(len(list(lda_commands(cfg, lp.I, lp.K, lp.pad_i, lp.pad_k))) for lp in
               loops(gemm_loop_ws_loops(M, N, K, s, cfg, out8, bias)) if lp.load_a)


def _program_lda(M, K, blocks, cfg, bias):
    """LdA's mvins of one program (one LOOP_WS over the whole K; without a bias a ragged K of at
    least DIM two, the whole blocks and a one-block head)."""
    d = cfg.dim
    rows, kk = min(M, blocks[0]), min(K, blocks[2])
    I, bk = -(-rows // d), -(-kk // d)
    if kk % d and kk > d and not bias:
        return len(list(lda_commands(cfg, I, bk - 1, I * d - rows, 0))) + \
            len(list(lda_commands(cfg, I, 1, I * d - rows, d - kk % d)))
    return len(list(lda_commands(cfg, I, bk, I * d - rows, bk * d - kk)))


# (M, N, K, blocks, DIM): one-row grids of one-step programs, whole K, K under DIM, a ragged K over B
# of one column block or, without a bias, a wider one (split, the whole blocks first), M of 1, 2 and
# 17 (rows in one block), N of 17 to 1000
ONE_ROW = [(1, 1000, 512, (16, 240, 512), 16), (2, 65, 33, (16, 16, 48), 16), (17, 33, 17, (32, 16, 32), 16),
           (1, 65, 1, (16, 32, 16), 16), (2, 1000, 64, (16, 256, 64), 16), (17, 65, 512, (32, 32, 512), 16),
           (1, 17, 17, (8, 8, 24), 8), (2, 65, 33, (8, 8, 40), 8), (17, 33, 64, (24, 16, 64), 8),
           (1, 1000, 512, (32, 128, 512), 32), (17, 65, 17, (32, 32, 32), 32), (2, 33, 33, (32, 32, 64), 32),
           (2, 65, 33, (16, 32, 48), 16), (17, 65, 47, (32, 16, 48), 16), (17, 40, 41, (32, 16, 48), 16),
           (93, 116, 258, (96, 32, 288), 32), (93, 116, 258, (96, 32, 288), 32), (1, 70, 41, (8, 8, 48), 8),
           (33, 70, 41, (48, 24, 48), 8)]


OUTPUTS = [(False, False), (True, True), (True, False)]     # (bias, int8 out), taken in turn


@pytest.mark.parametrize("M,N,K,blocks,dim,bias,out8", [shape + OUTPUTS[i % 3] for i, shape in enumerate(ONE_ROW)])
def test_a_one_row_grid_moves_a_once(M, N, K, blocks, dim, bias, out8):
    cfg = _config(dim)
    assert resident_a(M, K, GemmSchedule(*blocks), cfg, bias=bias)
    c, ref, lda, walk = _run(M, N, K, blocks, dim, bias, out8)
    np.testing.assert_array_equal(c, ref)
    assert lda == walk == _program_lda(M, K, blocks, cfg, bias)


# a grid of several rows, several K steps, or with a bias a ragged K step of a wide B (split in two
# LOOP_WSs by the program whose B window allows it): every program moves its A
MOVED = [(17, 65, 64, (16, 32, 64), 16), (1, 100, 100, (16, 32, 64), 16), (2, 65, 33, (16, 32, 48), 16),
         (33, 33, 17, (16, 16, 32), 8), (17, 1000, 33, (16, 256, 64), 32)]


@pytest.mark.parametrize("M,N,K,blocks,dim", MOVED)
def test_other_grids_move_a_in_every_program(M, N, K, blocks, dim):
    cfg = _config(dim)
    assert not resident_a(M, K, GemmSchedule(*blocks), cfg, bias=True)
    c, ref, lda, walk = _run(M, N, K, blocks, dim, bias=True)
    np.testing.assert_array_equal(c, ref)
    assert lda == walk > _program_lda(M, K, blocks, cfg, True)


@pytest.mark.parametrize("M,N,K,blocks,dim,out", [(1, 1000, 512, (16, 240, 512), 16, "int8"),
                                                   (17, 65, 17, (32, 32, 32), 16, "int32"),
                                                   (2, 33, 1, (8, 16, 8), 8, "int32"),
                                                   (1, 65, 33, (32, 32, 64), 32, "int8"),
                                                   (93, 116, 258, (96, 32, 288), 32, "int32")])
def test_resident_a_bit_exact_on_the_iss(M, N, K, blocks, dim, out):
    a, b, bias = _operands(M, N, K, True, M + N + K)
    cfg = _config(dim)
    c, info = matmul(a, b, bias=bias, out=out, scale=0.05 if out == "int8" else 1.0, schedule=GemmSchedule(*blocks),
                     target="iss", config=cfg)
    np.testing.assert_array_equal(c, reference_matmul(a, b, bias[None, :], out=out,
                                                      scale=0.05 if out == "int8" else 1.0))
    assert "@baco.rocc.loop_ws(" in info["kernel"].llvm_ir


@pytest.mark.parametrize("M,N,K,blocks,dim,out", [(93, 116, 258, (96, 32, 288), 32, "int32"),
                                                   (2, 65, 33, (16, 32, 48), 16, "int8")])
def test_a_split_ragged_step_keeps_a_on_the_iss(M, N, K, blocks, dim, out):
    """Without a bias a one-row grid's ragged step of at least DIM is two LOOP_WSs in every program,
    the whole blocks, then the head, each on its kept A block."""
    a, b, _ = _operands(M, N, K, False, M + N + K)
    cfg, scale = _config(dim), 0.05 if out == "int8" else 1.0
    c, info = matmul(a, b, out=out, scale=scale, schedule=GemmSchedule(*blocks), target="iss", config=cfg)
    np.testing.assert_array_equal(c, reference_matmul(a, b, None, out=out, scale=scale))
    assert "@baco.rocc.loop_ws(" in info["kernel"].llvm_ir


def test_the_classifier_gemv_keeps_a_resident_by_default():
    """ResNet-18's classifier (1 x 1000 x 512, bias, int8 out) at DIM 16: the default schedule is the
    library's tile, one K step a program in one row, A moved in once."""
    s = default_gemm_schedule(1, 1000, 512, _config(16), True, True)
    assert resident_a(1, 512, s, _config(16), bias=True)
