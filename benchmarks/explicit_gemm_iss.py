"""The GEMM kernel's explicit command stream end to end on the ISS with the cycle model against
baco.gemmini.schedule's model of it (explicit_gemm_program_cycles, what default_gemm_schedule
ranks explicit candidates by): ~40 programs compiled with LOOP_WS off, store-bound ones (K of
1-16 under large M x N), ragged ones (17 / 33 / 65), GEMMs of many K steps, with and without a
bias, int8 and int32 out, at DIM 16 and 32 (256 KB scratchpad, 64 KB accumulator). Each program
is timed by rdcycle around its grid loop and fence (benchmarks/kernels.py's end_to_end) and, for
the terms, Gemmini alone (its command stream, the commands arriving for free) and the ISS's
RISC-V instructions. Printed per program: end to end (model / ISS), Gemmini alone (model /
cycle model), the CPU's instructions (model / ISS), and the range and median of the end-to-end
ratio; with --tuner also the tuner's price of the same program (Gemmini alone,
costmodel.compiled_program_terms through residual.compiled_cycles, and end to end,
kernel_model.gemm_end_to_end) beside the ISS's, and its error's median, range and log r.

    python benchmarks/explicit_gemm_iss.py [--smoke] [--dims 16,32] [--tuner] [--dataflow WS]
"""
import argparse
import sys

import numpy as np
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, explicit_gemm_program_cycles, schedule_problems
from baco.kernels.matmul import matmul_kernel
from baco.problem.layer import Layer
from baco.sim.timing import CommandStream, TimingModel
from baco.tuner import costmodel, kernel_model, residual

# (M, N, K, (BLOCK_M, BLOCK_N, BLOCK_K) at DIM 16; at DIM 32 rounded up to DIM and BLOCK_M halved
# until the blocks fit)
SHAPES = [(512, 128, 3, (256, 64, 16)), (512, 128, 3, (128, 128, 16)), (1024, 64, 8, (256, 64, 16)),
          (512, 256, 1, (256, 64, 16)), (256, 256, 16, (128, 128, 16)), (300, 200, 12, (128, 128, 16)),
          (65, 65, 65, (80, 80, 80)), (33, 17, 33, (48, 32, 48)), (17, 33, 17, (32, 48, 32)),
          (200, 100, 300, (128, 64, 96)), (128, 256, 256, (128, 128, 64))]
# (bias, int8 out)
VARIANTS = [(False, False), (True, True)]
SMOKE = [(33, 17, 33, (48, 32, 48))]
MEMORIES = (256, 64)


def fitted_schedule(blocks, dim, cfg, out_int8, dataflow="WS"):
    """The probe's blocks at `dim`: rounded up to DIM, BLOCK_M halved until they fit."""
    bm, bn, bk = (-(-b // dim) * dim for b in blocks)
    while True:
        s = GemmSchedule(bm, bn, bk, dataflow, True)
        if not schedule_problems(s, cfg, out_int8):
            return s
        if bm <= dim:
            return None
        bm = -(-bm // 2 // dim) * dim


def measured(M, N, K, s, cfg, out_int8, bias) -> dict:
    """End to end (rdcycle on the ISS with the cycle model), Gemmini alone and the ISS's
    instructions of the explicit stream (zero data: the stream does not depend on it)."""
    a, b = np.zeros((M, K), np.int8), np.zeros((K, N), np.int8)
    c = np.zeros((M, N), np.int8 if out_int8 else np.int32)
    args = [a, b, c, M, N, K, K, 1, N, 1, N, 1, 0.05 if out_int8 else 1.0]
    options = dict(RELU=False, OUT_INT8=out_int8, schedule=s, config=cfg, loop_ws=False)
    runtime = list(args)
    if bias:
        options["bias_ptr"] = np.zeros(N, np.int32)
        runtime.append(options["bias_ptr"])
    grid = (-(-M // s.block_m), -(-N // s.block_n))
    iss = matmul_kernel.compile(*args, target="iss", grid=grid, **options).run(grid, runtime, timing=TimingModel(cfg))
    tm = TimingModel(cfg)
    matmul_kernel.compile(*args, target="sim", **options).run(grid, runtime, model=CommandStream(),
                                                              observers=[tm.observe])
    tm.fence()
    return {"cycles": iss["kernel_cycles"], "gemmini": tm.report()["cycles"], "cpu": iss["instructions"]}


def tuner_priced(M, N, K, s, cfg, out_int8, bias) -> tuple[float, float]:
    """(Gemmini alone, end to end) of the tuner's price of the explicit program (the variant of
    kernel_model.SCHEDULE_VARIANTS that `s` is, whether or not its blocks fit LOOP_WS)."""
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1, bias=bias)
    blocks = {"BLOCK_M": min(s.block_m, M), "BLOCK_N": min(s.block_n, N), "BLOCK_K": min(s.block_k, K)}
    temporal, sC, sK = residual.block_factors(layer, blocks, cfg.dim)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (cfg.dim, cfg.sp_kb, cfg.acc_kb))
    with torch.no_grad():
        gemmini = residual.compiled_cycles(layer, temporal, (sC, sK), hw, out_int8=out_int8,
                                           double_buffer=s.double_buffer, dataflow=s.dataflow)
        terms = costmodel.compiled_program_terms(layer, temporal, (sC, sK), hw, out_int8=out_int8)
        return float(gemmini[0]), float(kernel_model.gemm_end_to_end(gemmini, terms, hw, loop_ws=False)[0])


def probes(dims, smoke, dataflow="WS"):
    for dim in dims:
        cfg = GemminiConfig.from_capacity(dim, *MEMORIES)
        for M, N, K, blocks in SMOKE if smoke else SHAPES:
            for bias, out_int8 in VARIANTS:
                s = fitted_schedule(blocks, dim, cfg, out_int8, dataflow)
                if s is not None:
                    yield M, N, K, s, cfg, out_int8, bias


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="one shape a DIM")
    p.add_argument("--dims", default="16,32", help="array sizes (comma-separated)")
    p.add_argument("--tuner", action="store_true", help="the tuner's price too (costmodel, kernel_model)")
    p.add_argument("--dataflow", default="WS", choices=("WS", "OS"), help="the probes' dataflow")
    a = p.parse_args(argv)
    ratios, cpu, tuned = [], [], []
    for M, N, K, s, cfg, out_int8, bias in probes([int(d) for d in a.dims.split(",")], a.smoke, a.dataflow):
        model = explicit_gemm_program_cycles(M, N, K, s, cfg, out_int8, bias=bias)
        sim = measured(M, N, K, s, cfg, out_int8, bias)
        ratios.append(model["cycles"] / sim["cycles"])
        cpu.append(model["cpu"] / sim["cpu"])
        print(f"{M:5d}x{N:4d}x{K:4d} DIM {cfg.dim:2d} {s.block_m:3d}/{s.block_n:3d}/{s.block_k:3d} "
              f"{'bias' if bias else '    '} {'int8 ' if out_int8 else 'int32'}  end to end {model['cycles']:9,.0f} / "
              f"{sim['cycles']:9,} = {ratios[-1]:.3f}  Gemmini {model['gemmini']:9,.0f} / {sim['gemmini']:9,.0f} = "
              f"{model['gemmini'] / sim['gemmini']:.3f}  CPU {model['cpu']:8,.0f} / {sim['cpu']:8,} = "
              f"{model['cpu'] / sim['cpu']:.3f}", flush=True)
        if a.tuner:
            gemmini, end_to_end = tuner_priced(M, N, K, s, cfg, out_int8, bias)
            tuned.append((end_to_end, sim["cycles"]))
            print(f"    tuner: Gemmini {gemmini:9,.0f} / {sim['gemmini']:9,.0f} = {gemmini / sim['gemmini']:.3f}  "
                  f"end to end {end_to_end:9,.0f} / {sim['cycles']:9,} = {end_to_end / sim['cycles']:.3f}", flush=True)
    err = np.abs(np.array(ratios) - 1)
    print(f"{len(ratios)} programs: model / ISS {min(ratios):.3f}-{max(ratios):.3f}, median {np.median(ratios):.3f}, "
          f"median error {np.median(err):.1%}, max {err.max():.1%}; the CPU term {min(cpu):.3f}-{max(cpu):.3f}, "
          f"median {np.median(cpu):.3f}, median error {np.median(np.abs(np.array(cpu) - 1)):.1%}")
    if tuned:
        t = np.array(tuned)
        r = t[:, 0] / t[:, 1]
        print(f"the tuner's end to end / ISS: {r.min():.3f}-{r.max():.3f}, median error {np.median(np.abs(r - 1)):.1%}, "
              f"log r {np.corrcoef(np.log(t).T)[0, 1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
