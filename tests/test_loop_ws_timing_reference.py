"""The fast LoopMatmul walk (baco.gemmini.loop_ws_timing: recurrences in closed form, runs of equal
loops and of repeated programs extrapolated once periodic) against the walk taken one step at a
time (tests/loop_ws_walk_reference.py) on random LoopWs programs and on the programs the compiler
and the C library run."""
import random
from dataclasses import replace

import pytest

from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_ws_timing import LoopWs, library_matmul_loops, loop_ws_stream_cycles
from baco.gemmini.schedule import GemmSchedule, gemm_loop_ws_loops, loop_ws_fits
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, TimingConstants
from tests import loop_ws_walk_reference as reference

# the fast walk rounds to a millionth of a cycle, and its closed forms add the same cycles in another
# order (with fractional cycles, other rounding in the last bits)
TOLERANCE = 1e-9
# fractional constants, so that every sum the walk makes is rounded somewhere
ODD_CONSTANTS = TimingConstants(dram_latency=23.5, beat_cycles=1.25, dma_cmd_overhead=2.75, array_depth_factor=2.5,
                                compute_overhead=1.5, acc_scale_latency=7.25, cpu_cycles_per_instruction=1.3)


def random_loop(rng: random.Random, d: int) -> LoopWs:
    """A LoopWs with any combination of the walk's cases: padded edges, operands moved or resident,
    B moved explicitly (raw_b; of the CPU's instructions all, some or none from its mvins on) or
    transposed, a bias, C stored int32 or int8 or not at all."""
    size = lambda: rng.choice([1, 1, 2, 2, 3, 4, 5, 7, 9, 16])   # noqa: E731
    pad = lambda: rng.randrange(d) if rng.random() < 0.5 else 0   # noqa: E731
    load_b = rng.random() < 0.75
    raw_b = rng.randrange(1, d + 1) if (not load_b and rng.random() < 0.7) or rng.random() < 0.05 else 0
    cpu = rng.choice([0.0, 13.0, 47.2, 400.0, rng.uniform(0, 5000)])
    raw_cpu = rng.choice([None, 0.0, cpu, rng.uniform(0, cpu)]) if raw_b else None   # of cpu, from the raw mvins on
    return LoopWs(size(), size(), size(), pad(), pad(), pad(), load_a=rng.random() < 0.8, load_b=load_b,
                  bias=rng.random() < 0.3, store=rng.random() < 0.6, full_c=rng.random() < 0.5, raw_b=raw_b,
                  b_transposed=rng.random() < 0.2, cpu=cpu, commands=rng.randrange(12), raw_cpu=raw_cpu)


def random_items(rng: random.Random, d: int, depth: int) -> list:
    """A run-length encoded program: single loops, runs of equal loops (as K steps are), and
    repeated groups (as a grid's programs are), nested up to `depth`."""
    items = []
    for _ in range(rng.randrange(1, 5)):
        choice = rng.random()
        if choice < 0.35 or depth == 0:
            items.append(random_loop(rng, d))
        elif choice < 0.65:
            lp = random_loop(rng, d)
            items += [lp if rng.random() < 0.5 else replace(lp) for _ in range(rng.randrange(2, 40))]
        else:
            items.append((random_items(rng, d, depth - 1), rng.choice([0, 1, 2, 3, 5, 8, 13, 30])))
    return items


def assert_walks_agree(items, cfg, k=DEFAULT_CONSTANTS) -> float:
    """The fast walk equals the step-by-step walk, Gemmini alone and end to end; their largest
    relative difference."""
    fast, slow = loop_ws_stream_cycles(items, cfg, k), reference.stream_cycles(items, cfg, k)
    worst = 0.0
    for key in ("gemmini", "cycles"):
        assert fast[key] == pytest.approx(slow[key], rel=TOLERANCE, abs=1e-6), (key, fast, slow, items)
        worst = max(worst, abs(fast[key] - slow[key]) / slow[key])
    return worst


def test_fast_walk_is_the_step_by_step_walk_on_random_programs():
    """500 random programs (DIM 2 to 32, default and fractional constants, up to 800 loops
    unrolled): the same cycles (measured: at most 5e-7 cycles apart, the fast walk's rounding to a
    millionth of a cycle)."""
    rng = random.Random(23)
    worst, cases = 0.0, 0
    while cases < 500:
        d = rng.choice([2, 4, 8, 16, 32])
        cfg = GemminiConfig(dim=d)
        items = random_items(rng, d, depth=rng.randrange(3))
        if not 0 < len(reference.unrolled(items)) <= 800:
            continue
        k = ODD_CONSTANTS if rng.random() < 0.3 else DEFAULT_CONSTANTS
        worst = max(worst, assert_walks_agree(items, cfg, k))
        cases += 1
    assert worst <= TOLERANCE


def test_fast_walk_is_the_step_by_step_walk_on_compiled_and_library_programs():
    """The GEMM kernel's programs (gemm_loop_ws_loops: ragged M, N and K, a ragged K step split or
    one padded LOOP_WS, a K step under DIM with its B moved explicitly, a bias, int8 C, a
    transposed B) in random LOOP_WS schedules, and the C
    library's tiles (library_matmul_loops), on random shapes."""
    rng = random.Random(24)
    cases = 0
    while cases < 120:
        d = rng.choice([8, 16, 32])
        cfg = GemminiConfig(dim=d)
        M, N, K = (rng.choice([1, rng.randrange(1, 3 * d), rng.randrange(1, 400)]) for _ in range(3))
        if rng.random() < 0.25:
            items = library_matmul_loops(M, N, K, cfg, out_int8=rng.random() < 0.5)
        else:
            blocks = [rng.choice([d, 2 * d, 3 * d, 4 * d, 8 * d, rng.randrange(1, 4 * d)]) for _ in range(3)]
            if not loop_ws_fits(*blocks, cfg):
                continue
            items = gemm_loop_ws_loops(M, N, K, GemmSchedule(*blocks, "WS", True), cfg, out_int8=rng.random() < 0.5,
                                       bias=rng.random() < 0.4, b_transposed=rng.random() < 0.2,
                                       b_padded=rng.random() < 0.3)
        if len(reference.unrolled(items)) > 3000:
            continue
        assert_walks_agree(items, cfg)
        cases += 1
