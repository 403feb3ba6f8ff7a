"""Compile time of the GEMM kernel: cold (empty caches, every stage) and
cached (in-memory specialization cache; on-disk LLVM IR and host object cache), with the
per-stage split of the cold compile.

    python benchmarks/compile_time.py [--repeat 3]
"""
import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def load_example():
    spec = importlib.util.spec_from_file_location("matmul_example", ROOT / "examples" / "matmul.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    os.environ["BACO_CACHE_DIR"] = tempfile.mkdtemp(prefix="baco-cache-")
    mm = load_example()
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (64, 64), dtype=np.int8)
    b = rng.integers(-128, 128, (64, 64), dtype=np.int8)
    cold, stages = [], {}
    for i in range(args.repeat):
        block = (32, 32, 16 * (i + 1))           # a new specialization each time: a cold compile
        t0 = time.perf_counter()
        _, info = mm.matmul(a, b, block=block)
        cold.append(time.perf_counter() - t0 - info["seconds"])
        for k, v in info["kernel"].stage_seconds.items():
            stages[k] = stages.get(k, 0.0) + v / args.repeat
    mem = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        _, info = mm.matmul(a, b, block=(32, 32, 16))
        mem.append(time.perf_counter() - t0 - info["seconds"])
    mm.matmul_kernel.cache.clear()                  # drop the in-memory cache: the disk cache serves
    t0 = time.perf_counter()
    _, info = mm.matmul(a, b, block=(32, 32, 16))
    disk = time.perf_counter() - t0 - info["seconds"]
    print("GEMM kernel compile time (launch overhead excluding the kernel run)")
    print(f"  cold (all stages)          : {np.median(cold) * 1e3:8.1f} ms  (median of {args.repeat})")
    print(f"  cached in memory           : {np.median(mem) * 1e3:8.1f} ms  ({np.median(cold) / np.median(mem):.0f}x faster)")
    print(f"  cached on disk (IR, object): {disk * 1e3:8.1f} ms  ({np.median(cold) / disk:.1f}x faster)")
    print("  cold per-stage split:")
    total = sum(stages.values())
    for k, v in stages.items():
        print(f"    {k:20s} {v * 1e3:8.1f} ms  {100 * v / total:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
