"""benchmarks/kernels.py's floors: lower bounds on the cycle model's time of any program (the
"any" floor) and of tile programs (the "bound" floor), checked against the programs the cycle
model times: the C library's streams and baco's kernels, on ragged shapes at DIM 16 and 32."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import kernels  # noqa: E402

from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.sim.clib import time_conv, time_matmul  # noqa: E402
from baco.sim.loops import cmd  # noqa: E402
from baco.sim.timing import DEFAULT_CONSTANTS, TimingModel  # noqa: E402

CFGS = {d: GemminiConfig.from_capacity(d, 256, 64) for d in (16, 32)}
GEMMS = [(1, 1, 1), (34, 1, 4), (17, 33, 65), (70, 1, 100), (48, 40, 72), (5, 300, 20), (130, 7, 260)]


def floors(terms_tiles, terms_any):
    return max(terms_tiles.values()), max(terms_any.values())


@pytest.mark.parametrize("dim", [16, 32])
@pytest.mark.parametrize("M,N,K", GEMMS)
@pytest.mark.parametrize("out_int8,bias", [(False, None), (True, None), (True, "repeating")])
def test_gemm_floors_bound_the_library(dim, M, N, K, out_int8, bias):
    cfg = CFGS[dim]
    tiles, any_program = floors(kernels.gemm_floor(M, N, K, cfg, out_int8, bias, tiles=True),
                                kernels.gemm_floor(M, N, K, cfg, out_int8, bias))
    lib = time_matmul(M, N, K, cfg, out_int8=out_int8, bias=bias)["cycles"]
    assert any_program <= tiles <= lib


@pytest.mark.parametrize("M,N,K", [(34, 1, 4), (17, 33, 65), (70, 1, 100)])
def test_gemm_floors_bound_baco(M, N, K):
    cfg = CFGS[16]
    s = kernels.default_gemm_schedule(M, N, K, cfg, False)
    ours = kernels.time_baco(M, N, K, cfg, False, s)["cycles"]
    assert max(kernels.gemm_floor(M, N, K, cfg, False).values()) <= \
        max(kernels.gemm_floor(M, N, K, cfg, False, tiles=True).values()) <= ours


@pytest.mark.parametrize("dim", [16, 32])
@pytest.mark.parametrize("size,C,K,R,stride", [(6, 20, 17, 3, 1), (7, 3, 16, 3, 2), (8, 33, 40, 1, 1),
                                               (5, 64, 64, 3, 1)])
def test_conv_floors_bound_the_library(dim, size, C, K, R, stride):
    cfg = CFGS[dim]
    tiles, any_program = floors(kernels.conv_floor(size, C, K, R, cfg, stride, R // 2, tiles=True),
                                kernels.conv_floor(size, C, K, R, cfg, stride, R // 2))
    lib = time_conv(1, size, size, C, K, R, cfg, stride=stride, padding=R // 2, scale=0.05)["cycles"]
    assert any_program <= tiles <= lib


@pytest.mark.slow
def test_conv_floors_bound_baco():
    from baco.kernels.conv import conv2d_launch
    cfg = CFGS[16]
    x, w = np.zeros((1, 6, 6, 20), np.int8), np.zeros((3, 3, 20, 17), np.int8)
    ours = conv2d_launch(x, w, padding=1, scale=0.05, config=cfg).cycles()["cycles"]
    assert max(kernels.conv_floor(6, 20, 17, 3, cfg, 1, 1).values()) <= \
        max(kernels.conv_floor(6, 20, 17, 3, cfg, 1, 1, tiles=True).values()) <= ours


@pytest.mark.parametrize("dim", [16, 32])
@pytest.mark.parametrize("rows,cols", [(16, 64), (1, 1), (16, 16), (3, 40)])
def test_dma_floor_is_one_mvin_exactly(dim, rows, cols):
    """A matrix one mvin can move: dma_floor is that mvin's occupancy on the cycle model (the
    floor is tight where nothing else is counted)."""
    cfg = CFGS[dim]
    tm = TimingModel(cfg)
    tm.observe(*cmd("mvin", dram_addr=0x80000000, local_addr=0, rows=rows, cols=cols))
    dispatched = 1      # the first command's cycle; its data lands dram_latency after its occupancy
    expected = tm.report()["cycles"] - dispatched - DEFAULT_CONSTANTS.dram_latency
    assert kernels.dma_floor(rows * cols, 1, cfg.max_block_len * dim, cfg) == expected


@pytest.mark.slow
def test_bound_only_runs_without_baco(capsys):
    assert kernels.main(["--bound-only", "--dims", "16", "--shapes", "34x1x4", "17x33x65", "--conv-count", "0"]) == 0
    out = capsys.readouterr().out
    assert "GEMM/GEMV (int32 output) at DIM 16, 2 shapes: the largest speed-up" in out
    assert "baco blocks" not in out
