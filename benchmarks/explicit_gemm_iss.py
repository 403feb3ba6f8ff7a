"""The GEMM kernel's explicit command stream end to end on the ISS with the cycle model against
baco.gemmini.schedule's model of it (explicit_gemm_program_cycles, what default_gemm_schedule
ranks explicit candidates by): ~40 programs compiled with LOOP_WS off, store-bound ones (K of
1-16 under large M x N), ragged ones (17 / 33 / 65), GEMMs of many K steps, with and without a
bias, int8 and int32 out, at DIM 16 and 32 (256 KB scratchpad, 64 KB accumulator). Each program
is timed by rdcycle around its grid loop and fence (benchmarks/kernels.py's end_to_end) and, for
the terms, Gemmini alone (its command stream, the commands arriving for free) and the ISS's
RISC-V instructions. Printed per program: end to end (model / ISS), Gemmini alone (model /
cycle model), the CPU's instructions (model / ISS), and the range and median of the end-to-end
ratio.

    python benchmarks/explicit_gemm_iss.py [--smoke] [--dims 16,32]
"""
import argparse
import sys

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, explicit_gemm_program_cycles, schedule_problems
from baco.kernels.matmul import matmul_kernel
from baco.sim.timing import CommandStream, TimingModel

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


def fitted_schedule(blocks, dim, cfg, out_int8):
    """The probe's blocks at `dim`: rounded up to DIM, BLOCK_M halved until they fit."""
    bm, bn, bk = (-(-b // dim) * dim for b in blocks)
    while True:
        s = GemmSchedule(bm, bn, bk, "WS", True)
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


def probes(dims, smoke):
    for dim in dims:
        cfg = GemminiConfig.from_capacity(dim, *MEMORIES)
        for M, N, K, blocks in SMOKE if smoke else SHAPES:
            for bias, out_int8 in VARIANTS:
                s = fitted_schedule(blocks, dim, cfg, out_int8)
                if s is not None:
                    yield M, N, K, s, cfg, out_int8, bias


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="one shape a DIM")
    p.add_argument("--dims", default="16,32", help="array sizes (comma-separated)")
    a = p.parse_args(argv)
    ratios, cpu = [], []
    for M, N, K, s, cfg, out_int8, bias in probes([int(d) for d in a.dims.split(",")], a.smoke):
        model = explicit_gemm_program_cycles(M, N, K, s, cfg, out_int8, bias=bias)
        sim = measured(M, N, K, s, cfg, out_int8, bias)
        ratios.append(model["cycles"] / sim["cycles"])
        cpu.append(model["cpu"] / sim["cpu"])
        print(f"{M:5d}x{N:4d}x{K:4d} DIM {cfg.dim:2d} {s.block_m:3d}/{s.block_n:3d}/{s.block_k:3d} "
              f"{'bias' if bias else '    '} {'int8 ' if out_int8 else 'int32'}  end to end {model['cycles']:9,.0f} / "
              f"{sim['cycles']:9,} = {ratios[-1]:.3f}  Gemmini {model['gemmini']:9,.0f} / {sim['gemmini']:9,.0f} = "
              f"{model['gemmini'] / sim['gemmini']:.3f}  CPU {model['cpu']:8,.0f} / {sim['cpu']:8,} = "
              f"{model['cpu'] / sim['cpu']:.3f}", flush=True)
    err = np.abs(np.array(ratios) - 1)
    print(f"{len(ratios)} programs: model / ISS {min(ratios):.3f}-{max(ratios):.3f}, median {np.median(ratios):.3f}, "
          f"median error {np.median(err):.1%}, max {err.max():.1%}; the CPU term {min(cpu):.3f}-{max(cpu):.3f}, "
          f"median {np.median(cpu):.3f}, median error {np.median(np.abs(np.array(cpu) - 1)):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
