"""The LoopMatmul walk (baco.gemmini.loop_ws_timing) against the cycle model on what a loop slot's
scratchpad half and the store queue hold from the loops before: a loop's loads wait for the reads of
their own rows, not of the whole half (the split programs of a ragged K), and a loop's last store,
so the explicit mvins after it, for the store entries the loop before still holds; explicit mvins
for the reads of the rows they overwrite."""
from dataclasses import astuple

import numpy as np
import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_ws_timing import LoopWs, _half_wait, loop_ws_gemmini_cycles
from baco.gemmini.schedule import GemmSchedule, gemm_loop_ws_loops
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.kernels.matmul import matmul_launch


def walk_and_model(M, N, K, blocks, cfg):
    """(walk, cycle model) of baco's program (int32 C), Gemmini alone."""
    s = GemmSchedule(*blocks, "WS", True)
    launch = matmul_launch(np.zeros((M, K), np.int8), np.zeros((K, N), np.int8), out="int32", schedule=s, config=cfg)
    walk = loop_ws_gemmini_cycles(gemm_loop_ws_loops(M, N, K, s, cfg), cfg)
    return walk, launch.cycles()["cycles"]


@pytest.mark.parametrize("M,N,K,blocks", [
    # a ragged K split into head, one-block and tail LOOP_WSs: the tail's loads overwrite rows the head
    # (two loops before, in the same slot) read in its first k steps (1.034x and 1.065x before, when
    # they waited for the head's last compute)
    (93, 116, 258, (64, 48, 144)),
    (70, 1, 100, (80, 16, 64)),
])
def test_loads_wait_for_their_own_rows(M, N, K, blocks):
    walk, model = walk_and_model(M, N, K, blocks, GemminiConfig.from_capacity(16, 256, 64))
    assert abs(walk / model - 1) <= 0.015, (walk, model)


def test_half_wait_is_per_row():
    """A loop that overwrites only the rows its slot's last loop read in its first k steps, or the
    last-read rows only by its last loads, may start its loads before that loop's last compute; one
    whose first A load overwrites the last-read rows waits past it (their results out of the array)
    as the whole half's rule has every loop wait; without the rows known (B moved in explicitly)
    that rule."""
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    k = astuple(DEFAULT_CONSTANTS)
    head, one = LoopWs(5, 1, 8), LoopWs(1, 1, 1)
    assert _half_wait(head, one, cfg, k) < 0
    # A's first block, the one read last, right after B's: its compute's results out of the array
    assert _half_wait(one, one, cfg, k) == _half_wait(None, one, cfg, k) > 0
    # the head's last A rows are overwritten by its last A load, which starts once its loads before ran
    assert _half_wait(head, head, cfg, k) < 0
    raw = LoopWs(5, 1, 8, load_b=False, raw_b=16)
    assert _half_wait(raw, head, cfg, k) == _half_wait(None, head, cfg, k) > 0

def test_explicit_mvins_wait_for_the_store_entries_the_loop_before_holds():
    """33x97x33 in 48/16/48 at DIM 16: one-step programs of three int32 stores each (fewer than
    rs_st), B moved in explicitly before each; the mvins wait until the loop before issued its last
    store, which waits for a store entry the program before still holds (0.951x before, counting
    the loop's own stores only)."""
    walk, model = walk_and_model(33, 97, 33, (48, 16, 48), GemminiConfig.from_capacity(16, 256, 64))
    assert abs(walk / model - 1) <= 0.02, (walk, model)


@pytest.mark.parametrize("M,N,K,blocks", [
    # a last K step of one row, its B moved in explicitly into both halves: the copy in the other half
    # overwrites B rows the loop there may still read (0.874x and 0.887x before: the mvins waited only
    # for every loop to have issued its last command; now 0.958x and 0.967x)
    (97, 17, 65, (32, 32, 32)),
    (65, 17, 97, (32, 32, 32)),
])
def test_explicit_mvins_wait_for_the_reads_of_their_rows(M, N, K, blocks):
    walk, model = walk_and_model(M, N, K, blocks, GemminiConfig.from_capacity(16, 256, 64))
    assert abs(walk / model - 1) <= 0.05, (walk, model)


def test_a_loop_beyond_its_half_is_timed_by_the_whole_half_rule():
    """A candidate whose A and B blocks overflow the slot's half (the demo's search priced 8x64x64
    blocks at DIM 4: 4,608 blocks of a 2,048-block half) has no row layout: the whole half's rule,
    as for a loop whose rows are not known (the row rule indexed outside the half and failed)."""
    cfg = GemminiConfig.from_capacity(4, 64, 64)
    k = astuple(DEFAULT_CONSTANTS)
    big = LoopWs(8, 64, 64, bias=True, store=False)
    assert _half_wait(big, big, cfg, k) == _half_wait(None, big, cfg, k)
