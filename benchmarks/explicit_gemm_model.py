"""The tuner's model of the GEMM kernel's explicit command stream (costmodel.compiled_program_terms,
the analytical program model without the learned residual) against the cycle model's timing of that
stream (the kernel compiled with LOOP_WS off, launch.cycles(): Gemmini alone, commands arriving for
free), on GEMVs and GEMMs at DIM 16 / 32 / 64 / 128: rows 1, 2, 17, 33, 97 (one or several row
strips, ragged), K steps of 1-20 DIM strips with a short last one, one or several column strips,
single- and double-buffered. Prints every program (pred / sim) and per class (GEMV or GEMM,
buffering, DIM) the median and largest relative error.

With --gemms, the 82 GEMMs of session 23's check instead (DIM 16 / 32 / 64, single- and
double-buffered, M, N, K of 1-256 with ragged 17 / 33 / 65, blocks of up to two DIM strips; the
set session 22 checked was not kept, this one is built alike): beside the tuner's model the
compiler's (baco.gemmini.schedule.explicit_gemm_program_cycles' Gemmini side).

With --dataflow OS the same programs output-stationary (the tuner's OS variants of
baco.tuner.kernel_model.SCHEDULE_VARIANTS); with --bert, BERT's layers at sequence 32 on DIM 16
(32x768x3072 in 32/384/96, 32x768x768 in 32/144/192 and others), each dataflow and buffering.
Printed last: over every program the median and largest relative error, pred/sim's range and the
Pearson r of log cycles.

    python benchmarks/explicit_gemm_model.py [--smoke] [--dims 16,32,64,128] [--gemms | --bert] [--dataflow WS]
"""
import argparse
import sys
from collections import defaultdict

import numpy as np
import torch

from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, explicit_gemm_program_cycles, schedule_problems
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


# (M, N, K) of the --gemms set: square and ragged, one and several programs, K = 1 and short K
GEMMS = [(1, 17, 65), (17, 33, 65), (33, 17, 256), (65, 65, 65), (64, 64, 256), (128, 64, 33), (256, 33, 17),
         (17, 256, 128), (33, 65, 1), (128, 128, 128), (65, 1, 256), (256, 256, 65), (97, 33, 300), (1, 256, 33)]


def gemm_programs(dims):
    """(M, N, K, blocks, dim, double_buffer) of the --gemms set: blocks of up to two DIM strips, each
    shape single- and double-buffered (those whose blocks do not fit are left out by simulated)."""
    return [(M, N, K, (min(M, 2 * dim), min(N, 2 * dim), min(K, 2 * dim)), dim, db)
            for dim in dims for M, N, K in GEMMS for db in (False, True)]


# BERT's layers at sequence 32 (M, N, K, blocks): linear2 and out_proj at the blocks the tuner chose in
# benchmarks/fused_programs.py --models bert_layer --sequence 32, the others at blocks of that scale
BERT = [(32, 768, 3072, (32, 384, 96)), (32, 768, 768, (32, 144, 192)), (32, 3072, 768, (32, 256, 128)),
        (32, 2304, 768, (32, 192, 192)), (32, 768, 3072, (32, 96, 768))]


def bert_programs():
    """(M, N, K, blocks, dim, double_buffer) of the --bert set on DIM 16."""
    return [(M, N, K, blocks, 16, db) for M, N, K, blocks in BERT for db in (False, True)]


def compiler_predicted(M, N, K, blocks, dim, double_buffer, dataflow="WS") -> float:
    """The compiler's estimate of the explicit stream's Gemmini side (explicit_gemm_program_cycles)."""
    cfg = GemminiConfig.from_capacity(dim, *MEMORIES[dim])
    return explicit_gemm_program_cycles(M, N, K, GemmSchedule(*blocks, dataflow, double_buffer), cfg,
                                        KERNEL_OUT_INT8)["gemmini"]


def predicted(M, N, K, blocks, dim, double_buffer, dataflow="WS") -> float:
    layer = Layer(R=1, S=1, P=M, Q=1, C=K, K=N, N=1)
    temporal, sC, sK = residual.block_factors(layer, dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K"), blocks)), dim)
    hw = tuple(torch.tensor([float(v)], dtype=torch.float64) for v in (dim, *MEMORIES[dim]))
    with torch.no_grad():
        return float(costmodel.compiled_program_cycles(layer, temporal, (sC, sK), hw, double_buffer=double_buffer,
                                                       dataflow=dataflow)[0])


def simulated(M, N, K, blocks, dim, double_buffer, dataflow="WS") -> float | None:
    """The cycle model's cycles of the explicit stream, None when the blocks do not fit."""
    cfg = GemminiConfig.from_capacity(dim, *MEMORIES[dim])
    schedule = GemmSchedule(*blocks, dataflow, double_buffer)
    if schedule_problems(schedule, cfg, KERNEL_OUT_INT8):
        return None
    launch = matmul_launch(np.zeros((M, K), np.int8), np.zeros((K, N), np.int8), out="int8", scale=1 / 256,
                           schedule=schedule, config=cfg)
    launch.options["loop_ws"] = False
    return launch.cycles()["cycles"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two programs a DIM")
    p.add_argument("--dims", default=None, help="array sizes (comma-separated; default 16,32,64,128, "
                                                "with --gemms 16,32,64)")
    p.add_argument("--gemms", action="store_true", help="the 82 GEMMs (GEMMS) with the compiler's estimate too")
    p.add_argument("--bert", action="store_true", help="BERT's layers at sequence 32 on DIM 16 (BERT)")
    p.add_argument("--dataflow", default="WS", choices=("WS", "OS"), help="the programs' dataflow")
    a = p.parse_args(argv)
    dims = [int(d) for d in (a.dims or ("16,32,64" if a.gemms else "16,32,64,128")).split(",")]
    ratios, compiler, logs = defaultdict(list), [], []
    chosen = bert_programs() if a.bert else gemm_programs(dims) if a.gemms else programs(dims, a.smoke)
    for M, N, K, blocks, dim, db in chosen:
        sim = simulated(M, N, K, blocks, dim, db, a.dataflow)
        if sim is None:
            continue
        pred = predicted(M, N, K, blocks, dim, db, a.dataflow)
        logs.append((np.log(pred), np.log(sim)))
        line = f"{M:4d}x{N:4d}x{K:5d} blocks {blocks} DIM {dim:3d} {a.dataflow} {'db' if db else 'sb'}  " \
               f"pred {pred:9.0f}  sim {sim:9.0f}  pred/sim {pred / sim:5.2f}"
        if a.gemms or a.bert:
            compiler.append(compiler_predicted(M, N, K, blocks, dim, db, a.dataflow) / sim)
            line += f"  compiler {compiler[-1]:5.2f}"
        print(line, flush=True)
        ratios[f"{'GEMV' if N == 1 else 'GEMM'} {'double' if db else 'single'}-buffered DIM {dim}"].append(pred / sim)
    print()
    if compiler:
        err = np.abs(np.array(compiler) - 1)
        print(f"the compiler's estimate (explicit_gemm_program_cycles' Gemmini side), {len(err)} programs: "
              f"median error {np.median(err):.1%}, max {err.max():.1%}, pred/sim {min(compiler):.2f}-{max(compiler):.2f}")
    every = np.array([r for v in ratios.values() for r in v])
    for name, v in sorted(ratios.items()):
        err = np.abs(np.array(v) - 1)
        print(f"{name:34s} {len(v):3d} programs: median error {np.median(err):6.1%}, max {err.max():6.1%}, "
              f"pred/sim {min(v):.2f}-{max(v):.2f}")
    err = np.abs(every - 1)
    log_r = np.corrcoef(np.array(logs).T)[0, 1] if len(logs) > 1 else float("nan")
    print(f"all {len(every)} programs: median error {np.median(err):.1%}, max {err.max():.1%}, "
          f"pred/sim {every.min():.2f}-{every.max():.2f}, log r {log_r:.4f}, within 10%: {np.mean(err <= 0.10):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
