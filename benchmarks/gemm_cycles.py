"""Cycle-model sanity on an int8 GEMM at the default configuration (16×16,
256 KB, 64 KB): the Gemmini C library's code (tiled_matmul_auto tiles, one
LOOP_WS per tile, as gemmini-isa.md §5.2) beside the code baco's compiler
generates for the examples/matmul.py kernel. Prints cycles, utilization,
cycles ≥ MACs/DIM² and the unit busy times and traffic of both.

    python benchmarks/gemm_cycles.py [--size 512] [--block 64 64 128]

Without --block baco's kernel runs its default schedule (double-buffered).
"""
import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

from baco.gemmini.config import GemminiConfig
from baco.gemmini.heuristics import tiled_matmul_auto
from baco.gemmini.schedule import GemmSchedule, default_gemm_schedule
from baco.sim.clib import matmul_stream, run_stream
from baco.sim.timing import TimingModel

ROOT = Path(__file__).resolve().parents[1]


def report(name, tm, macs, cfg):
    r = tm.report()
    floor = macs / cfg.dim ** 2
    print(f"{name:28s} cycles {r['cycles']:>11,.0f}  utilization {r['utilization']:.3f}  "
          f"cycles >= MACs/DIM² ({floor:,.0f}): {r['cycles'] >= floor}")
    print(f"{'':28s} busy ld/ex/st {r['load_busy']:,.0f} / {r['execute_busy']:,.0f} / {r['store_busy']:,.0f}; "
          f"DRAM in/out {r['dram_bytes_in']:,} / {r['dram_bytes_out']:,} B; {r['commands']:,} commands; "
          f"{r['energy_uj']:.1f} uJ")
    return r


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=512)
    p.add_argument("--block", type=int, nargs=3, default=None,
                   help="blocks without double buffering (default: default_gemm_schedule)")
    args = p.parse_args(argv)
    cfg = GemminiConfig()
    n = args.size
    macs = n ** 3
    print(f"{n}x{n}x{n} int8 GEMM, int32 output, default Gemmini (DIM 16, 256 KB, 64 KB)")
    tm = TimingModel(cfg)
    run_stream(matmul_stream(n, n, n, cfg), cfg, tm.observe)
    tm.fence()
    ti, tj, tk = tiled_matmul_auto(n, n, n, cfg)
    lib = report(f"C library (tiles {ti},{tj},{tk})", tm, macs, cfg)

    spec = importlib.util.spec_from_file_location("mm", ROOT / "examples" / "matmul.py")
    mm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mm)
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (n, n), dtype=np.int8)
    b = rng.integers(-128, 128, (n, n), dtype=np.int8)
    c = np.zeros((n, n), np.int32)
    s = GemmSchedule(*args.block) if args.block else default_gemm_schedule(n, n, n, cfg, out_int8=False)
    bm, bn, bk = s.block_m, s.block_n, s.block_k
    ck = mm.matmul_kernel.compile(a, b, c, n, n, n, n, 1, n, 1, n, 1, 1.0, schedule=s, RELU=False, OUT_INT8=False)
    tm2 = TimingModel(cfg)
    ck.run((-(-n // bm), -(-n // bn)), [a, b, c, n, n, n, n, 1, n, 1, n, 1, 1.0], observers=[tm2.observe])
    tm2.fence()
    ok = np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    comp = report(f"baco kernel (blocks {bm},{bn},{bk}{', 2 bufs' if s.double_buffer else ''})", tm2, macs, cfg)
    print(f"result bit-exact: {ok}; baco / library cycles: {comp['cycles'] / lib['cycles']:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
