"""The tuner's model of the GEMM kernel's explicit command stream (costmodel.compiled_program_terms,
the analytical program model without the learned residual) against the cycle model's timing of that
stream (the kernel compiled with LOOP_WS off, launch.cycles(): Gemmini alone, commands arriving for
free), on GEMVs and GEMMs at DIM 16 / 32 / 64 / 128: rows 1, 2, 17, 33, 97 (one or several row
strips, ragged), K steps of 1-20 DIM strips with a short last one, one or several column strips,
single- and double-buffered. Prints every program (pred / sim) and per class (GEMV or GEMM,
buffering, DIM) the median and largest relative error.

    python benchmarks/explicit_gemm_model.py [--smoke] [--dims 16,32,64,128]
"""
import argparse
import sys
from collections import defaultdict

import numpy as np
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, schedule_problems
from baco.kernels.matmul import matmul_launch
from baco.problem.layer import Layer
from baco.tuner import costmodel, residual
from baco.tuner.mapping import KERNEL_OUT_INT8

# memories (scratchpad KB, accumulator KB) per DIM
MEMORIES = {16: (256, 64), 32: (256, 128), 64: (256, 256), 128: (512, 256)}


def programs(dims, smoke: bool):
    """(M, N, K, blocks, dim, double_buffer) of the checked programs."""
    out = []
    for dim in dims:
        if smoke:
            out += [(2, 1, 700, (2, 1, 128), dim, False), (33, 1, 1000, (33, 1, 4 * dim), dim, True)]
            continue
        for M in (1, 2, 17, 33, 97):
            for K, bk in ((700, 128), (1000, 4 * dim), (2000, 2 * dim), (9277, 320)):
                for bm in sorted({min(M, dim), min(M, 2 * dim)}):
                    out += [(M, 1, K, (bm, 1, bk), dim, db) for db in (False, True)]
        for M, N, K, blocks in ((64, 64, 256, (dim, dim, dim)), (97, 33, 300, (min(97, 2 * dim), min(33, dim), 2 * dim)),
                                (200, 100, 300, (128, dim, 96))):
            out += [(M, N, K, blocks, dim, db) for db in (False, True)]
    return out


def predicted(M, N, K, blocks, dim, double_buffer) -> float:
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1)
    temporal, sC, sK = residual.block_factors(layer, dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K"), blocks)), dim)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (dim, *MEMORIES[dim]))
    with torch.no_grad():
        return float(costmodel.compiled_program_cycles(layer, temporal, (sC, sK), hw, double_buffer=double_buffer)[0])


def simulated(M, N, K, blocks, dim, double_buffer) -> float | None:
    """The cycle model's cycles of the explicit stream, None when the blocks do not fit."""
    cfg = GemminiConfig.from_capacity(dim, *MEMORIES[dim])
    schedule = GemmSchedule(*blocks, double_buffer=double_buffer)
    if schedule_problems(schedule, cfg, KERNEL_OUT_INT8):
        return None
    launch = matmul_launch(np.zeros((M, K), np.int8), np.zeros((K, N), np.int8), out="int8", scale=1 / 256,
                           schedule=schedule, config=cfg)
    launch.options["loop_ws"] = False
    return launch.cycles()["cycles"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two programs a DIM")
    p.add_argument("--dims", default="16,32,64,128", help="array sizes (comma-separated)")
    a = p.parse_args(argv)
    ratios = defaultdict(list)
    for M, N, K, blocks, dim, db in programs([int(d) for d in a.dims.split(",")], a.smoke):
        sim = simulated(M, N, K, blocks, dim, db)
        if sim is None:
            continue
        pred = predicted(M, N, K, blocks, dim, db)
        print(f"{M:4d}x{N:3d}x{K:5d} blocks {blocks} DIM {dim:3d} {'db' if db else 'sb'}  "
              f"pred {pred:9.0f}  sim {sim:9.0f}  pred/sim {pred / sim:5.2f}", flush=True)
        ratios[f"{'GEMV' if N == 1 else 'GEMM'} {'double' if db else 'single'}-buffered DIM {dim}"].append(pred / sim)
    print()
    every = np.array([r for v in ratios.values() for r in v])
    for name, v in sorted(ratios.items()):
        err = np.abs(np.array(v) - 1)
        print(f"{name:34s} {len(v):3d} programs: median error {np.median(err):6.1%}, max {err.max():6.1%}, "
              f"pred/sim {min(v):.2f}-{max(v):.2f}")
    err = np.abs(every - 1)
    print(f"all {len(every)} programs: median error {np.median(err):.1%}, max {err.max():.1%}, "
          f"within 10%: {np.mean(err <= 0.10):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
