"""A ragged K step as ONE padded LOOP_WS when B's allocation holds the rows LoopMatmul reads
(baco.passes.loop_ws._b_holds_blocks: ⌈K/DIM⌉·DIM rows, checked at run time from the B argument's
size), as the C library issues it; the split (or B moved in explicitly) when it does not. Bit-exact
on sim and the ISS against the Gemmini arithmetic reference, with garbage in B's padding rows (A's
padded K columns are fed as zeros, so they never reach C)."""
import numpy as np
import pytest

import baco.language as bl
from baco.codegen.host import HostMemory
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS, GemminiFault, encode
from baco.gemmini.schedule import GemmSchedule, gemm_loop_ws_loops, padded_rows
from baco.kernels.matmul import matmul_kernel, matmul_launch, reference
from baco.sim.functional import GemminiModel
from tests.issued import IssuedCommands

DIM16 = GemminiConfig()
DIM32 = GemminiConfig.from_capacity(32, 256, 64)
M, N = 40, 24
BLOCKS = {16: (32, 32, 64), 32: (64, 32, 128)}
KS = (10, 17, 33, 65, 100, 1000, 1500)


def operands(K, cfg, b_rows):
    """A (M, K), B (K, N) and B stored in `b_rows` rows (the rows past K random: padding)."""
    rng = np.random.default_rng(K + cfg.dim)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    stored = rng.integers(-128, 128, (b_rows, N), dtype=np.int8)
    return a, stored[:K].copy(), stored


def run(K, cfg, b_rows, target="sim"):
    """(C, reference, the names of the commands the CPU issues (not what LOOP_WS expands to),
    launch info) of the GEMM kernel over a B stored in `b_rows` rows, K from A."""
    a, b, stored = operands(K, cfg, b_rows)
    bm, bn, bk = BLOCKS[cfg.dim]
    c = np.zeros((M, N), np.int32)
    grid = (bl.cdiv(M, bm), bl.cdiv(N, bn))
    args = [a, stored.reshape(-1), c, M, N, K, K, 1, N, 1, N, 1, 1.0]
    info = matmul_kernel[grid](*args, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, RELU=False, OUT_INT8=False,
                               target=target, config=cfg)
    issued = []
    if target == "sim":
        info["kernel"].run(grid, args, model=IssuedCommands(issued))
    return c, reference(a, b), issued, info


def steps(K, cfg):
    return -(-K // BLOCKS[cfg.dim][2])


@pytest.mark.parametrize("cfg", [DIM16, DIM32], ids=lambda c: f"dim{c.dim}")
@pytest.mark.parametrize("K", KS)
def test_padded_b_runs_each_ragged_step_as_one_loop_ws(K, cfg):
    d = cfg.dim
    programs = -(-M // BLOCKS[d][0]) * -(-N // BLOCKS[d][1])
    c, ref, issued, _ = run(K, cfg, padded_rows(K, d))
    np.testing.assert_array_equal(c, ref)
    assert issued.count("loop_ws") == programs * steps(K, cfg)
    assert not any(name.startswith("mvin") for name in issued)
    # B of K rows: the ragged step of K >= DIM split in two, a shorter one's B moved in explicitly,
    # as is a program's only step over a B of one column block (kept down its column) in a launch
    # of more than one program
    c, ref, issued, _ = run(K, cfg, K)
    np.testing.assert_array_equal(c, ref)
    ragged = K % BLOCKS[d][2]
    if ragged % d == 0:
        return
    explicit = ragged < d or (steps(K, cfg) == 1 and BLOCKS[d][1] <= d and programs > 1)
    assert issued.count("loop_ws") == programs * (steps(K, cfg) + (not explicit))
    # a program of one K step after the first of its column reuses its B (loop_ws._Resident), kept
    # in its column's half; any other moved B goes into both halves (loop_ws._load_b)
    moved = -(-N // BLOCKS[d][1]) if steps(K, cfg) == 1 else 2 * programs
    assert issued.count("mvin2") == (moved * -(-ragged // d) if explicit else 0)


@pytest.mark.parametrize("K", [17, 100, 1000])
def test_b_one_row_short_of_the_padding_is_split(K):
    """B's allocation must hold every row LoopMatmul reads: one row short, the step is split."""
    cfg = DIM16
    programs = -(-M // BLOCKS[16][0]) * -(-N // BLOCKS[16][1])
    c, ref, issued, _ = run(K, cfg, padded_rows(K, 16) - 1)
    np.testing.assert_array_equal(c, ref)
    assert issued.count("loop_ws") == programs * (steps(K, cfg) + 1)


@pytest.mark.parametrize("cfg,K", [(DIM16, 17), (DIM16, 1000), (DIM32, 100),
                                   pytest.param(DIM16, 1500, marks=pytest.mark.slow),
                                   pytest.param(DIM32, 65, marks=pytest.mark.slow)],
                         ids=lambda v: f"dim{v.dim}" if isinstance(v, GemminiConfig) else str(v))
def test_padded_and_unpadded_b_bit_exact_on_the_iss(cfg, K):
    commands = []
    for b_rows in (padded_rows(K, cfg.dim), K):
        c, ref, _, info = run(K, cfg, b_rows, target="iss")
        np.testing.assert_array_equal(c, ref)
        assert "@baco.rocc.loop_ws(" in info["kernel"].llvm_ir
        commands.append(info["commands"])
    assert commands[0] < commands[1]       # the ELF takes the one-loop path where B has the rows


def test_the_simulator_still_faults_on_a_b_without_the_rows():
    """The bounds check stays: LoopMatmul moving a padded K block of a B of K rows reads past it."""
    d, K = 16, 20
    a = np.ones((d, K), np.int8)
    c = np.zeros((d, d), np.int32)
    one = 0x3F800000

    def loop(b):
        m = GemminiModel(GemminiConfig(), HostMemory([a, b, c]))
        for name, fields in [("config_ld", dict(state_id=0, stride=K, scale=one, block_stride=d)),
                             ("config_ld", dict(state_id=1, stride=d, scale=one, block_stride=d)),
                             ("config_st", dict(stride=4 * d, acc_scale=one)),
                             ("loop_ws_config_bounds", dict(max_i=1, max_j=1, max_k=2, pad_k=2 * d - K)),
                             ("loop_ws_config_addrs_ab", dict(a_addr=a.ctypes.data, b_addr=b.ctypes.data)),
                             ("loop_ws_config_addrs_dc", dict(c_addr=c.ctypes.data)),
                             ("loop_ws_config_strides_ab", dict(a_stride=K, b_stride=d)),
                             ("loop_ws_config_strides_dc", dict(c_stride=d)),
                             ("loop_ws", dict(full_c=1))]:
            m.execute(COMMANDS[name].funct, *encode(name, **fields), 0x80000000)
        m.fence()
    with pytest.raises(GemminiFault, match="outside the kernel's arrays"):
        loop(np.ones((K, d), np.int8))
    b = np.ones((2 * d, d), np.int8)
    loop(b)
    assert (c == K).all()


def test_matmul_launch_takes_b_padded_to_whole_blocks():
    """matmul() reads a B of K to ⌈K/DIM⌉·DIM rows (the rest padding); more is a ValueError."""
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (30, 1000), dtype=np.int8)
    bp = rng.integers(-128, 128, (1008, 20), dtype=np.int8)
    launch = matmul_launch(a, bp, out="int8", scale=1 / 256, relu=True)
    launch.run("sim")
    np.testing.assert_array_equal(launch.y, reference(a, bp[:1000], out="int8", scale=1 / 256, relu=True))
    with pytest.raises(ValueError, match="up to 1008"):
        matmul_launch(a, np.zeros((1009, 20), np.int8))
    with pytest.raises(ValueError, match="K = 1000 rows"):
        matmul_launch(a, np.zeros((999, 20), np.int8))


def test_the_schedule_walk_prices_the_padded_program():
    """gemm_loop_ws_loops' b_padded: a ragged K step is one padded LOOP_WS (the pass's program)."""
    s = GemmSchedule(32, 32, 64)
    plain = gemm_loop_ws_loops(M, N, 100, s, DIM16, b_padded=False)
    padded = gemm_loop_ws_loops(M, N, 100, s, DIM16, b_padded=True)
    program, _ = plain[0][0][0]
    assert [(lp.K, lp.pad_k, lp.store) for lp in program] == [(4, 0, False), (1, 12, False), (2, 0, True)]
    program, _ = padded[0][0][0]
    assert [(lp.K, lp.pad_k, lp.store) for lp in program] == [(4, 0, False), (3, 12, True)]
