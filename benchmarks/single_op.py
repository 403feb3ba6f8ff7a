"""Single-operator co-exploration: baco against the baselines, per operator category.

Operators are sampled (fixed seed, log-uniform) from the benchmark ranges of
GEMM, GEMV, Conv1D and Conv2D; every method gets the same wall-clock budget
per operator and the same cost model, on the operators as they are (ragged
edges run as short tiles, costmodel.effective_factors).  Printed: per category, the geometric
mean over operators of each method's EDP divided by baco's (> 1 means baco
is better), each method's geomean Timeloop-matched EDP over that model's lower
bound for the operator (baco.tuner.costmodel.edp_lower_bound: compulsory DRAM
traffic and MACs on the largest array; 1.0 = no design can do better; the search
itself costs GEMM layers as their compiled program), and the wall time each
method used.

    python benchmarks/single_op.py [--size small|default|large] [--budget S] [--seed N]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baco.problem.layer import Layer  # noqa: E402
from baco.tuner import baselines  # noqa: E402
from baco.tuner.costmodel import edp_lower_bound  # noqa: E402
from baco.tuner.explore import coexplore  # noqa: E402

# (M, N, K) bands, [min, max] each; a GEMV is the same with N = 1.
GEMM_BANDS = [
    ((1, 256), (1, 256), (1, 256)),
    ((1, 256), (1, 256), (257, 65536)),
    ((257, 1024), (1, 256), (1, 65536)),
    ((257, 1024), (257, 65536), (1, 65536)),
    ((1025, 8192), (1, 256), (1, 65536)),
    ((1025, 8192), (257, 8192), (1, 65536)),
]
# (square output size band, filter size, channel counts of the networks with such layers: U-Net,
# ResNet-50, RetinaNet).  Sizes are sampled log-uniformly; channels from the networks' own counts.
CONV_BANDS = [
    ((280, 568), 3, (64, 128)),                  # U-Net, top levels
    ((56, 138), 3, (64, 128, 256)),              # U-Net third level, ResNet-50 stage 1
    ((8, 52), 1, (128, 256, 512, 1024)),         # ResNet-50 bottleneck 1x1
    ((56, 120), 1, (64, 128, 256)),
    ((32, 80), 3, (256, 512)),                   # U-Net fourth level, RetinaNet heads
    ((4, 40), 1, (256, 512, 1024, 2048)),        # ResNet-50 late stages, RetinaNet laterals
    ((2, 30), 3, (256, 512, 1024)),              # U-Net bottom, RetinaNet / ResNet 3x3
    ((2, 28), 1, (512, 1024, 2048)),
    ((2, 28), 3, (256, 512)),
]
CATEGORIES = ("GEMM", "GEMV", "Conv1D", "Conv2D")
SIZES = {  # operators per category, seconds per method per operator
    "small": (1, 3.0),
    "default": (3, 10.0),
    "large": (6, 30.0),
}
METHODS = {
    "baco": lambda layers, budget, seed: coexplore(layers, seed=seed, time_budget_s=budget, progress=False),
    "gemmini-default": lambda layers, budget, seed: baselines.gemmini_default(layers),
    "random": lambda layers, budget, seed: baselines.random_search(layers, time_budget_s=budget, seed=seed),
    "genetic": lambda layers, budget, seed: baselines.genetic(layers, time_budget_s=budget, seed=seed),
    "bayesian": lambda layers, budget, seed: baselines.bayesian(layers, time_budget_s=budget, seed=seed),
    "dosa-style": lambda layers, budget, seed: baselines.dosa_style(layers, time_budget_s=budget, seed=seed),
}


def log_uniform(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1) - 1e-9))))))


def sample_operators(category: str, count: int, rng: np.random.Generator) -> list[Layer]:
    """count operators of one category, spread evenly over its bands."""
    out = []
    bands = GEMM_BANDS if category in ("GEMM", "GEMV") else CONV_BANDS
    for i in range(count):
        band = bands[int((i + 0.5) * len(bands) / count) % len(bands)]   # spread over the bands
        if category in ("GEMM", "GEMV"):
            m_band, n_band, k_band = band
            m, k = log_uniform(rng, *m_band), log_uniform(rng, *k_band)
            n = 1 if category == "GEMV" else log_uniform(rng, *n_band)
            out.append(Layer(R=1, S=1, P=m, Q=1, C=k, K=n, N=1, name=f"{category.lower()}_{m}x{k}x{n}"))
        else:
            size_band, filt, channels = band
            size = log_uniform(rng, *size_band)
            c, k = (int(rng.choice(channels)) for _ in range(2))
            if category == "Conv2D":
                out.append(Layer(R=filt, S=filt, P=size, Q=size, C=c, K=k, N=1,
                                 name=f"conv2d_{size}x{size}_{c}to{k}_{filt}x{filt}"))
            else:
                out.append(Layer(R=filt, S=1, P=size, Q=1, C=c, K=k, N=1, name=f"conv1d_{size}_{c}to{k}_{filt}"))
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=SIZES, default="default")
    ap.add_argument("--budget", type=float, default=None, help="seconds per method per operator")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--categories", nargs="*", default=list(CATEGORIES), choices=CATEGORIES)
    ap.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS))
    args = ap.parse_args(argv)
    count, budget = SIZES[args.size]
    budget = args.budget if args.budget is not None else budget
    methods = ["baco"] + [m for m in args.methods if m != "baco"]
    rng = np.random.default_rng(args.seed)
    t_all = time.perf_counter()
    print(f"single-operator co-exploration: {count} operator(s) per category, {budget:g} s per method per operator,"
          f" seed {args.seed}")
    ratios = {c: {m: [] for m in methods} for c in args.categories}
    over_bound = {c: {m: [] for m in methods} for c in args.categories}
    walls = {c: {m: 0.0 for m in methods} for c in args.categories}
    for category in args.categories:
        for layer in sample_operators(category, count, rng):
            edp, timeloop_edp = {}, {}     # the bound is the Timeloop-matched model's
            for m in methods:
                t0 = time.perf_counter()
                result = METHODS[m]([layer], budget, args.seed)
                walls[category][m] += time.perf_counter() - t0
                edp[m], timeloop_edp[m] = result.edp, result.timeloop_edp
            bound = edp_lower_bound(layer)
            line = "  ".join(f"{m}={edp[m] / edp['baco']:.2f}" for m in methods if m != "baco")
            print(f"  {category:7s} {layer.name:34s} baco EDP {edp['baco']:.4g} ({timeloop_edp['baco'] / bound:.2f}x the bound, Timeloop-matched)"
                  f"  ratios: {line}", flush=True)
            for m in methods:
                ratios[category][m].append(edp[m] / edp["baco"])
                over_bound[category][m].append(timeloop_edp[m] / bound)

    others = [m for m in methods if m != "baco"]
    print("\ngeomean EDP of each method / baco's (higher = baco better)")
    print(f"{'category':9s}" + "".join(f"{m:>17s}" for m in others))
    for category in args.categories:
        print(f"{category:9s}" + "".join(f"{geomean(ratios[category][m]):17.2f}" for m in others))
    print("\ngeomean Timeloop-matched EDP of each method / that model's lower bound (1.0 = nothing can do better)")
    print(f"{'category':9s}" + "".join(f"{m:>17s}" for m in methods))
    for category in args.categories:
        print(f"{category:9s}" + "".join(f"{geomean(over_bound[category][m]):17.2f}" for m in methods))
    print("\nwall time (s) per category")
    print(f"{'category':9s}" + "".join(f"{m:>17s}" for m in methods))
    for category in args.categories:
        print(f"{category:9s}" + "".join(f"{walls[category][m]:17.1f}" for m in methods))
    print(f"\ntotal wall time {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
