"""The compiled program's energy model (costmodel.compiled_program_counts/_energy) against the
cycle model's own counts and energy of the same kernels compiled to their explicit command stream.

The model counts what the simulator counts command by command (including the DIM x DIM
strip a WS program's first compute overwrites at a ragged edge and the zero fills of OS,
K = 1 and past-the-edge strips), so counts must agree exactly and energy to rounding; the
shapes cover ragged edges in every dimension, both dataflows, int8/int32 outputs, K = 1 and
arrays from 2x2 to 64x64."""
import math

import numpy as np
import pytest
import torch

from baco.design import output_scale, run_gemm
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, loop_ws_fits
from baco.kernels.matmul import matmul_kernel, reference
from baco.problem.layer import Layer
from baco.sim.timing import TimingModel
from baco.tuner import costmodel, kernel_model, residual
from baco.tuner.workloads import gemm

COUNTS = ("macs", "registers", "scratchpad_reads", "scratchpad_writes", "accumulator_reads",
          "accumulator_writes", "dram_bytes_in", "dram_bytes_out")
CASES = [  # M, N, K, DIM, sp KB, acc KB, blocks, dataflow, double buffer, int8 output
    (64, 64, 64, 16, 64, 32, (32, 32, 32), "WS", False, True),
    (17, 33, 65, 16, 64, 32, (32, 32, 32), "WS", False, True),
    (33, 65, 17, 16, 64, 32, (48, 32, 16), "WS", True, False),
    (100, 50, 70, 8, 64, 32, (32, 16, 64), "OS", True, True),
    (36, 40, 501, 64, 256, 128, (64, 64, 256), "OS", False, False),
    (431, 19, 112, 64, 256, 128, (64, 64, 64), "WS", False, True),
    (34, 4, 1, 4, 16, 8, (8, 4, 4), "WS", False, True),
    (5, 1, 1, 2, 16, 8, (2, 2, 2), "WS", False, True),
    (40, 20, 1, 8, 64, 32, (16, 16, 8), "OS", False, True),
    (1, 65, 33, 16, 64, 32, (16, 64, 32), "WS", False, True),
]


def _model(M, N, K, cfg, s, out_int8, requires_grad=False):
    layer = gemm(M, K, N)
    temporal, sC, sK = residual.block_factors(layer, {"BLOCK_M": s.block_m, "BLOCK_N": s.block_n,
                                                      "BLOCK_K": s.block_k}, cfg.dim)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64, requires_grad=requires_grad)
               for v in (cfg.dim, cfg.sp_kb, cfg.acc_kb))
    counts = costmodel.compiled_program_counts(layer, temporal, (sC, sK), hw, out_int8=out_int8,
                                               dataflow=s.dataflow)
    e = costmodel.compiled_program_energy(layer, temporal, (sC, sK), hw, out_int8=out_int8, dataflow=s.dataflow)
    return counts, e, hw


def explicit_stream(M, N, K, cfg, s, out_int8):
    """(bit-exact, cycle-model report) of the GEMM kernel compiled to its explicit command stream (the
    program these counts describe; a user's compile emits LOOP_WS where the blocks fit, whose
    LoopMatmul moves and accumulates differently: baco.gemmini.loop_ws_timing)."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8)
    c = np.zeros((M, N), dtype=np.int8 if out_int8 else np.int32)
    scale = output_scale(K) if out_int8 else 1.0
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, scale]
    ck = matmul_kernel.compile(*args, RELU=False, OUT_INT8=out_int8, config=cfg, schedule=s, loop_ws=False)
    tm = TimingModel(cfg)
    ck.run((-(-M // s.block_m), -(-N // s.block_n)), args, observers=[tm.observe])
    tm.fence()
    ref = reference(a, b, out="int8" if out_int8 else "int32", scale=scale, schedule=s)
    return bool(np.array_equal(c, ref)), tm.report()


@pytest.mark.parametrize("M,N,K,dim,sp_kb,acc_kb,blocks,dataflow,double_buffer,out_int8", CASES)
def test_compiled_energy_matches_the_simulators(M, N, K, dim, sp_kb, acc_kb, blocks, dataflow, double_buffer,
                                                out_int8):
    cfg = GemminiConfig.from_capacity(dim, sp_kb, acc_kb)
    s = GemmSchedule(*blocks, dataflow=dataflow, double_buffer=double_buffer)
    ok, report = explicit_stream(M, N, K, cfg, s, out_int8)
    assert ok
    with torch.no_grad():
        counts, e, _ = _model(M, N, K, cfg, s, out_int8)
    assert {k: round(float(counts[k][0])) for k in COUNTS} == {k: report[k] for k in COUNTS}
    assert math.isclose(float(e[0]), report["energy_uj"], rel_tol=1e-9)


def test_compiled_energy_is_differentiable_in_the_hardware():
    cfg = GemminiConfig.from_capacity(16, 64, 32)
    _, e, hw = _model(100, 70, 90, cfg, GemmSchedule(32, 32, 32), True, requires_grad=True)
    e.sum().backward()
    # bigger memories cost more per access; DIM changes strips and the accumulator's price
    assert hw[1].grad > 0 and hw[2].grad > 0 and torch.isfinite(hw[0].grad).all()


@pytest.mark.parametrize("M,N,K,dim,out_int8", [(64, 64, 64, 16, True), (17, 33, 65, 16, True), (5, 1, 1, 16, False),
                                                (937, 300, 12, 8, True), (300, 100, 77, 32, False),
                                                (34, 4, 1, 4, True)])
def test_library_energy_matches_the_simulators(M, N, K, dim, out_int8):
    """Gemmini-default runs the C library's tiled matmul: its counts (B loaded in whole DIM-row
    blocks) and energy as the cycle model reports them for that stream."""
    from baco.sim.clib import time_matmul
    from baco.tuner.kernel_model import library_matmul_counts, library_matmul_energy
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    report = time_matmul(M, N, K, cfg, out_int8=out_int8)
    assert library_matmul_counts(M, N, K, cfg, out_int8=out_int8) == {k: report[k] for k in COUNTS}
    assert math.isclose(library_matmul_energy(M, N, K, cfg, out_int8=out_int8), report["energy_uj"], rel_tol=1e-9)


LOOP_WS_CASES = [  # M, N, K, DIM, blocks, bias: one K step (A resident along a one-row grid, or not), several, ragged
    (32, 512, 256, 16, (32, 32, 256), True),
    (64, 96, 48, 16, (32, 48, 48), False),
    (17, 33, 65, 16, (32, 32, 32), False),
    (33, 40, 20, 8, (16, 16, 32), True),
    (1, 65, 33, 16, (16, 64, 16), False),
]


@pytest.mark.parametrize("M,N,K,dim,blocks,bias", LOOP_WS_CASES)
def test_tuner_energy_of_a_loop_ws_program_is_the_simulators(M, N, K, dim, blocks, bias):
    """A WS schedule whose blocks fit the loop unit's halves compiles to LOOP_WS: the energy the
    search prices it at (kernel_model.kernel_energy) is the cycle model's for that program, not
    the explicit stream's (which moves a resident A again for every column of programs)."""
    cfg = GemminiConfig.from_capacity(dim, 256, 64)
    s = GemmSchedule(*blocks)
    assert loop_ws_fits(min(blocks[0], M), min(blocks[1], N), min(blocks[2], K), cfg)
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1, bias=bias)
    temporal, sC, sK = residual.block_factors(layer, {"BLOCK_M": min(s.block_m, M), "BLOCK_N": min(s.block_n, N),
                                                      "BLOCK_K": min(s.block_k, K)}, dim)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (dim, cfg.sp_kb, cfg.acc_kb))
    choice = torch.tensor([kernel_model.SCHEDULE_VARIANTS.index(("WS", True))])
    with torch.no_grad():
        predicted = float(kernel_model.kernel_energy(layer, temporal, torch.stack([sC, sK], 1), hw, choice)[0])
    ok, report, _ = run_gemm(M, N, K, cfg, s, bias=bias)
    assert ok
    assert math.isclose(predicted, report["energy_uj"], rel_tol=1e-9)
