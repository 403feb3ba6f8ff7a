"""The LoopMatmul walk (baco.gemmini.loop_ws_timing, what default_gemm_schedule, the 1x1-conv choice
and the tuner's compiled-program model rank LOOP_WS programs with) against the cycle model it
restates, on the programs the GEMM kernel compiles to (schedule.gemm_loop_ws_loops; the cycle model
fed the compiled kernel's command stream, Gemmini alone): every fourth M x N x K of 1, 17, 33, 65, 97
each (ragged, one-block loops among them) and 97x130x70, 130x33x200, at DIM 8 / 16 / 32 / 128, in
blocks of (1, 1, 1), (2, 4, 2) and (4, 1, 4) DIM (cut to the shape), int32 C without a bias and int8
C with one. Prints every program's walk / cycle model and per DIM and bias the range, the median
and the count outside ±3%.

    python benchmarks/loop_ws_walk.py [--smoke] [--dims 8,16,32,128]
"""
import argparse
import sys
from collections import defaultdict

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.loop_ws_timing import loop_ws_gemmini_cycles
from baco.gemmini.schedule import GemmSchedule, gemm_loop_ws_loops, loop_ws_fits, schedule_problems
from baco.kernels.matmul import matmul_launch

# memories (scratchpad KB, accumulator KB) per DIM
MEMORIES = {8: (64, 16), 16: (256, 64), 32: (256, 128), 128: (1024, 1024)}
SIZES = (1, 17, 33, 65, 97)


def programs(dims, smoke: bool):
    """(M, N, K, blocks, dim, bias) of the checked programs."""
    out = []
    for dim in dims:
        if smoke:
            out += [(33, 17, 65, (dim, dim, dim), dim, False), (97, 65, 33, (2 * dim, dim, dim), dim, True)]
            continue
        cube = [(M, N, K) for M in SIZES for N in SIZES for K in SIZES]
        for M, N, K in cube[::4] + [(97, 130, 70), (130, 33, 200)]:
            for blocks in ((dim, dim, dim), (2 * dim, 4 * dim, 2 * dim), (4 * dim, dim, 4 * dim)):
                out += [(M, N, K, blocks, dim, bias) for bias in (False, True)]
    return out


def fitting(M, N, K, blocks, cfg, bias):
    """The schedule of `blocks` (each cut to its dimension in whole DIM blocks), None when the blocks
    do not fit LOOP_WS."""
    schedule = GemmSchedule(*(min(b, -(-n // cfg.dim) * cfg.dim) for b, n in zip(blocks, (M, N, K))))
    if not loop_ws_fits(schedule.block_m, schedule.block_n, schedule.block_k, cfg) \
            or schedule_problems(schedule, cfg, bias):
        return None
    return schedule


def compared(M, N, K, schedule, cfg, bias):
    """(walk, cycle model) of one program."""
    launch = matmul_launch(np.zeros((M, K), np.int8), np.zeros((K, N), np.int8),
                           bias=np.zeros(N, np.int32) if bias else None, out="int8" if bias else "int32",
                           scale=1 / 256 if bias else 1.0, schedule=schedule, config=cfg)
    walk = loop_ws_gemmini_cycles(gemm_loop_ws_loops(M, N, K, schedule, cfg, out_int8=bias, bias=bias), cfg)
    return walk, launch.cycles()["cycles"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two programs a DIM")
    p.add_argument("--dims", default="8,16,32,128", help="array sizes (comma-separated)")
    a = p.parse_args(argv)
    ratios = defaultdict(list)
    seen = set()
    for M, N, K, blocks, dim, bias in programs([int(d) for d in a.dims.split(",")], a.smoke):
        cfg = GemminiConfig.from_capacity(dim, *MEMORIES[dim])
        schedule = fitting(M, N, K, blocks, cfg, bias)
        if schedule is None or (M, N, K, schedule, dim, bias) in seen:
            continue
        seen.add((M, N, K, schedule, dim, bias))
        walk, model = compared(M, N, K, schedule, cfg, bias)
        blocks = (schedule.block_m, schedule.block_n, schedule.block_k)
        print(f"{M:4d}x{N:4d}x{K:4d} blocks {str(blocks):16s} DIM {dim:3d} {'bias' if bias else '    '}  "
              f"walk {walk:9.0f}  cycle model {model:9.0f}  walk/model {walk / model:.3f}", flush=True)
        ratios[f"DIM {dim:3d} {'with' if bias else 'no'} bias"].append(walk / model)
    print()
    every = np.array([r for v in ratios.values() for r in v])
    for name, v in sorted(ratios.items()) + [("all", every)]:
        v = np.asarray(v)
        print(f"{name:22s} {len(v):4d} programs: walk/model {v.min():.3f}-{v.max():.3f}, "
              f"median {np.median(v):.3f}, outside ±3%: {int(np.sum(np.abs(v - 1) > 0.03))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
