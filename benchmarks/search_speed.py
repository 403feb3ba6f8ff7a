"""Speed of the co-exploration's descent: steps per CPU-second with the network's layers costed in
stacked calls (explore.NetworkCost: the GEMM layers in one call, the pointwise and the other
convolutions in one each) against one call per layer (NetworkCost(stacked=False)), on the same
starts, seed and number of steps, measured in one run. Also checks that both cost the starting
designs bit for bit alike (the gradients differ in the last bits, backward sums in another order, so
longer descents may part).

    python benchmarks/search_speed.py [--networks resnet50,unet,...] [--steps N] [--starts N] [--smoke]

A network is a shipped one (baco.tuner.workloads.network_names) or resnet18 (torchvision's, its
layers extracted with torch.fx).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baco.tuner.explore import (START_HARDWARE, Budget, NetworkCost, NetworkProblem, gradient_descent,  # noqa: E402
                                heuristic_tilings, single_threaded)
from baco.tuner.workloads import layers_from_model_spec, load_network  # noqa: E402

NETWORKS = "resnet50,unet,retinanet,resnet18,bert"


def network_layers(name: str):
    if name == "resnet18":
        return layers_from_model_spec("torchvision.models:resnet18", (1, 3, 224, 224))
    return load_network(name)


@single_threaded
def descent_speed(problem: NetworkProblem, inits, steps: int) -> tuple[float, float]:
    """(steps per CPU-second, best EDP) of `steps` descent steps from inits (after one warm-up step)."""
    def run(n):
        return gradient_descent(problem, inits, budget=Budget(n, None, n), lr=0.08, progress=False,
                                generator=torch.Generator().manual_seed(0), round_every=10**9)
    run(1)
    t = time.process_time()
    found = run(steps)
    return steps / (time.process_time() - t), found[0][0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", default=NETWORKS)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--starts", type=int, default=4, help="descent starts (the C library's tilings on START_HARDWARE)")
    ap.add_argument("--smoke", action="store_true",
                    help="the 4-layer conv network, 2 steps from 1 start (for the tests)")
    a = ap.parse_args(argv)
    names, steps, starts = (["conv"], 2, 1) if a.smoke else (a.networks.split(","), a.steps, a.starts)
    print(f"descent steps per CPU-second, {steps} steps x {starts} starts x 8 samples, one thread")
    print(f"  {'network':10s} {'layers':>6s} {'per layer':>10s} {'stacked':>9s} {'speed-up':>9s}  same start cost")
    ratios = []
    for name in names:
        layers = network_layers(name)
        problem = NetworkProblem(layers)
        inits = [h for hw in START_HARDWARE if (h := heuristic_tilings(problem.layers, hw)) is not None][:starts]
        per_layer = NetworkProblem(layers)
        per_layer.network_cost = NetworkCost(per_layer.layers, per_layer.counts, per_layer.cycle_model, stacked=False)
        design = [[d[i] for d in inits] for i in range(len(layers))]
        a_cost, b_cost = problem.score(design), per_layer.score(design)
        same = torch.equal(a_cost.cycles, b_cost.cycles) and torch.equal(a_cost.energy_uj, b_cost.energy_uj)
        slow, _ = descent_speed(per_layer, inits, steps)
        fast, _ = descent_speed(problem, inits, steps)
        ratios.append(fast / slow)
        print(f"  {name:10s} {len(layers):6d} {slow:10.2f} {fast:9.2f} {fast / slow:8.2f}x  {'yes' if same else 'NO'}")
        if not same:
            return 1
    geomean = torch.tensor(ratios, dtype=torch.float64).log().mean().exp()
    print(f"geomean speed-up {float(geomean):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
