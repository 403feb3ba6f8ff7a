"""Races between concurrent LOOP_WSs: the cycle model's check (TimingModel._check_order) on the GEMM
kernel's programs whose ragged last K step reads a B moved in explicitly (baco.passes.loop_ws).
LoopMatmul's loop slots alternate over every LOOP_WS of a launch; with an odd number of LOOP_WSs a
program, the next program's LdB loaded into the half that B sits in while its preloads were not
issued yet. The compiler now moves B's first row in again after that LOOP_WS (a raw command: the
next LOOP_WS is issued only once the loop unit has issued all of it)."""
import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule
from baco.kernels.matmul import matmul_kernel
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


def _after_moved_b_dropped(observe):
    """An observer that hands `observe` the stream without the commands the compiler issues after a
    LOOP_WS on an explicitly moved B (the one-row mvin2 right after a loop_ws): the stream as it
    was before the fix."""
    last = [None]

    def dropping(name, f, pc=None):
        previous, last[0] = last[0], name
        if name == "mvin2" and previous == "loop_ws" and f["rows"] == 1:
            return
        observe(name, f, pc)
    dropping.sees_loops = True
    return dropping


@pytest.mark.parametrize("M,N,K,blocks", PROGRAMS)
def test_the_stream_before_the_fix_races(M, N, K, blocks):
    ck, args, cfg, grid = _compiled(M, N, K, blocks)
    tm = TimingModel(cfg)
    with pytest.raises(DataRace, match=r"ws loop \d+ ex: preload .* reads scratchpad rows .*\(ws loop \d+ ldb: mvin2"):
        ck.run(grid, args, model=CommandStream(), observers=[_after_moved_b_dropped(tm.observe)])
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
