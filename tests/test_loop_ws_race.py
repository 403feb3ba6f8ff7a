"""Races between concurrent LOOP_WSs: the cycle model's check (TimingModel._check_order) on the GEMM
kernel's programs whose ragged last K step reads a B moved in explicitly (baco.passes.loop_ws).
LoopMatmul's loop slots alternate over every LOOP_WS Gemmini runs, and a LOOP_WS's FSM loads into
its slot's half. A B moved into the half named by the step's index raced: with an odd number of
LOOP_WSs a program, the next program's LdB loaded into that half while the preloads reading B were
not issued yet. The compiler moves such a B into both halves and its LOOP_WS reads it in its slot's
half (b_spad_id 0), so the next LOOP_WS, in the other slot, loads into the other half."""
import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import is_garbage
from baco.gemmini.schedule import GemmSchedule, last_step_form, loop_unit_half
from baco.kernels.matmul import matmul_kernel, reference
from baco.sim.loops import LoopProgram
from baco.sim.timing import CommandStream, DataRace, TimingModel

# (M, N, K, blocks): 97x130x70 in 16/64/32 is three LOOP_WSs a program, the last on an explicitly
# moved B of K = 6; 17x65x33 in 16/64/16 three of one K block each, the last of K = 1
PROGRAMS = [(97, 130, 70, (16, 64, 32)), (17, 65, 33, (16, 64, 16))]


def _compiled(M, N, K, blocks, rng=None):
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    s = GemmSchedule(*blocks, "WS", True)
    rng = rng or np.random.default_rng(0)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    args = [a, b, np.zeros((M, N), np.int32), M, N, K, K, 1, N, 1, N, 1, 1.0]
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=False, schedule=s, config=cfg)
    return ck, args, cfg, (-(-M // s.block_m), -(-N // s.block_n))


def _b_in_one_half(observe, cfg):
    """An observer that hands `observe` the stream with an explicitly moved B in the first half only
    (the raw mvin2s into the second half dropped) and the LOOP_WS after them reading it there (its
    preloads' B rows in the first half: b_spad_id 1): the stream of a step index that names half 1,
    as the compiler issued it before."""
    half, last = loop_unit_half(cfg).sp_rows, [None]

    def first_half(cmd):
        fsm, iters, name, f = cmd
        if name == "preload" and not is_garbage(f["bd_addr"]) and f["bd_addr"] >= half:
            return fsm, iters, name, dict(f, bd_addr=f["bd_addr"] - half)
        return cmd

    def one_half(name, f, pc=None):
        previous, last[0] = last[0], name
        if name == "mvin2" and f["local_addr"] >= half:
            return
        if name == "loop_ws" and previous == "mvin2":
            f = LoopProgram(f.kind, map(first_half, f.commands), resadd=f.resadd, max_k=f.max_k)
        observe(name, f, pc)
    one_half.sees_loops = True
    return one_half


@pytest.mark.parametrize("M,N,K,blocks", PROGRAMS)
def test_a_b_moved_into_the_half_of_its_step_index_races(M, N, K, blocks):
    ck, args, cfg, grid = _compiled(M, N, K, blocks)
    tm = TimingModel(cfg)
    with pytest.raises(DataRace, match=r"ws loop \d+ ex: preload .* reads scratchpad rows .*\(ws loop \d+ ldb: mvin2"):
        ck.run(grid, args, model=CommandStream(), observers=[_b_in_one_half(tm.observe, cfg)])
        tm.fence()


@pytest.mark.parametrize("M,N,K,blocks", PROGRAMS)
def test_compiled_programs_are_race_free_and_bit_exact(M, N, K, blocks):
    ck, args, cfg, grid = _compiled(M, N, K, blocks)
    tm = TimingModel(cfg)
    ck.run(grid, args, observers=[tm.observe])      # the functional model, timed
    tm.fence()
    assert tm.report()["cycles"] > 0
    a, b, c = args[:3]
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_race_names_both_commands():
    """A read of rows a command later in program order already wrote raises, naming both; a write
    after a later read or write too; rows of no conflict and garbage addresses (None) never race."""
    tm = TimingModel(GemminiConfig.from_capacity(16, 256, 64))
    tm.sources = [(0, "explicit", [(None, None, "preload", dict(bd_addr=100))]),
                  (1, "ws loop 0", [("ldb", (0, 0), "mvin2", dict(local_addr=100))])]
    tm._check_order(1, [], [(False, 100, 116)])
    tm._check_order(0, [None, (False, 116, 132)], [])
    with pytest.raises(DataRace, match=r"command 0 \(explicit: preload \{'bd_addr': 100\}\) reads scratchpad rows "
                                       r"110-115, already written by command 1 \(ws loop 0 ldb: mvin2"):
        tm._check_order(0, [(False, 110, 116)], [])
    with pytest.raises(DataRace, match="writes scratchpad rows 100-100, already read or written by command 1"):
        tm._check_order(0, [], [(False, 100, 101)])


# (dim, M, N, K, blocks, bias): ragged shapes whose last K step reads an explicitly moved B (K % BLOCK_K
# < DIM) or is split into a one-block head, odd and even step counts, several programs a column, a one-step
# program keeping its B down its column (_Resident), a bias with some
RAGGED = [
    (16, 65, 33, 6, (16, 48, 32), True),        # one step of K < DIM, kept, five programs a column
    (16, 33, 65, 70, (16, 64, 32), False),      # steps 32, 32, 6
    (16, 17, 33, 38, (16, 48, 32), True),       # steps 32, 6
    (16, 97, 17, 97, (32, 32, 32), False),      # steps 32, 32, 32, 1
    (16, 33, 97, 81, (16, 64, 32), True),       # steps 32, 32, 17: split
    (16, 65, 65, 49, (32, 80, 32), False),      # steps 32, 17: split
    (16, 97, 65, 17, (16, 80, 32), False),      # one step of 17, split, kept
    (16, 1, 17, 33, (16, 16, 32), True),        # steps 32, 1 over one column block
    (8, 33, 17, 33, (16, 16, 16), True),        # steps 16, 16, 1
    (8, 17, 33, 17, (8, 48, 16), False),        # steps 16, 1
    (32, 65, 97, 65, (32, 64, 64), True),       # steps 64, 1
    (32, 97, 33, 97, (32, 64, 32), False),      # steps 32, 32, 32, 1
    (32, 33, 65, 33, (32, 96, 64), False),      # one step of 33: split, kept
    # odd step counts whose B in the half of the step's index raced, without B's row moved again after
    (8, 97, 130, 35, (8, 32, 16), True),        # steps 16, 16, 3
    (8, 17, 97, 17, (8, 32, 8), False),         # steps 8, 8, 1
    (16, 33, 97, 65, (16, 64, 32), True),       # steps 32, 32, 1
    (32, 97, 130, 140, (32, 128, 64), False),   # steps 64, 64, 12
]


@pytest.mark.parametrize("dim,M,N,K,blocks,bias", RAGGED)
def test_ragged_programs_are_race_free_and_bit_exact(dim, M, N, K, blocks, bias):
    """Every program of these launches timed by the cycle model with its race check on (DataRace
    raises on a command that reads or writes rows a later one in program order already wrote):
    a B moved into both halves and read in the LOOP_WS's slot's half, or kept in its column's half,
    is never overwritten before its preloads read it; the result is bit-exact."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    s = GemmSchedule(*blocks, "WS", True)
    assert last_step_form(K, s, cfg) in ("explicit_b", "split")
    rng = np.random.default_rng(M + N + K)
    a = rng.integers(-128, 128, (M, K), dtype=np.int8)
    b = rng.integers(-128, 128, (K, N), dtype=np.int8)
    args = [a, b, np.zeros((M, N), np.int32), M, N, K, K, 1, N, 1, N, 1, 1.0]
    extra, options = [], {}
    if bias:
        extra = [rng.integers(-1000, 1000, N, dtype=np.int32)]
        options["bias_ptr"] = extra[0]
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=False, schedule=s, config=cfg, **options)
    tm = TimingModel(cfg)
    ck.run((-(-M // s.block_m), -(-N // s.block_n)), args + extra, observers=[tm.observe])
    tm.fence()
    assert tm.report()["cycles"] > 0
    np.testing.assert_array_equal(args[2], reference(a, b, bias=extra[0] if bias else None))
