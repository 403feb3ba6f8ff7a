"""benchmarks/loop_ws_headroom.py's ideal: the array's peak and the DMA bandwidth on the bytes a GEMM
must move, a lower bound on the cycle model's time of any program (the C library's streams and
baco's default programs, Gemmini alone) and below its LOOP_WS floor."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import kernels  # noqa: E402
import loop_ws_headroom  # noqa: E402

from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.schedule import default_gemm_schedule  # noqa: E402
from baco.sim.clib import time_matmul  # noqa: E402


def test_ideal_is_the_peak_or_the_bandwidth():
    """512^3 at DIM 16 is its MACs at 256 a cycle (A and B in, C out, take fewer cycles); a GEMV's
    bound is moving A in: M·K bytes at a 16-byte beat a cycle; int8 C moves a quarter of int32's."""
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    big = loop_ws_headroom.ideal(512, 512, 512, cfg, False)
    assert big["compute"] == 512 ** 3 / 256 and big["cycles"] == big["compute"] > big["dram"]
    gemv = loop_ws_headroom.ideal(629, 1, 109, cfg, False)
    assert gemv["cycles"] == gemv["dram"] == (629 * 109 + 109) / 16
    wide = loop_ws_headroom.ideal(100, 400, 4, cfg, False), loop_ws_headroom.ideal(100, 400, 4, cfg, True)
    assert wide[0]["dram"] == 100 * 400 * 4 / 16 and wide[1]["dram"] == 100 * 400 / 16


@pytest.mark.parametrize("dim", [16, 32])
@pytest.mark.parametrize("M,N,K", [(34, 1, 4), (48, 40, 72), (70, 1, 100), (93, 116, 258), (20, 1, 179), (1, 1, 91)])
def test_ideal_bounds_the_programs_and_the_loop_ws_floor(dim, M, N, K):
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    ideal = loop_ws_headroom.ideal(M, N, K, cfg, False)["cycles"]
    ours = kernels.time_baco(M, N, K, cfg, False, default_gemm_schedule(M, N, K, cfg, False))["cycles"]
    library = time_matmul(M, N, K, cfg)["cycles"]
    floor = max(loop_ws_headroom.loop_ws_floor(M, N, K, cfg, False).values())
    assert ideal <= floor <= min(ours, library), (ideal, floor, ours, library)


def test_loop_ws_floor_waits_for_the_largest_blocks_chain():
    """The LOOP_WS floor's execute term holds the largest output block's accumulation chain
    (20x1x179 at DIM 16: 12 computes of 16 rows, each accumulating_spacing after the last), after
    the first compute's A and B commands; a 4-row GEMV's chain is shorter."""
    cfg = GemminiConfig.from_capacity(16, 256, 64)
    k = loop_ws_headroom.DEFAULT_CONSTANTS
    feed = 16 + k.compute_overhead
    chain = 11 * k.accumulating_spacing(0.0, feed, 16) + feed
    first = 1 + 2 * (k.dma_cmd_overhead + k.dram_latency) + k.dram_latency
    terms = loop_ws_headroom.loop_ws_floor(20, 1, 179, cfg, False)
    assert terms["execute"] >= first + chain + k.array_depth_factor * 16
    assert loop_ws_headroom.loop_ws_floor(4, 1, 179, cfg, False)["execute"] < terms["execute"]
