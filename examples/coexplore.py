"""Co-explore one Gemmini for a whole network and write its configuration.

    python examples/coexplore.py [--network bert|resnet50|...] [--budget 60] [--out out/coexplore]

The network is one shipped with the package (baco/data/workloads) or, with
--torch, a small torch MLP+conv model whose layers are extracted with torch.fx. Prints the chosen hardware,
each layer's mapping (and kernel block sizes for GEMM layers), the
Gemmini-default baseline for comparison, and where the files went.
"""
import argparse
import sys
from pathlib import Path

import torch

from baco.tuner import baselines, explore, workloads
from baco.tuner.emit import write_outputs
from baco.tuner.mapping import format_mapping, gemm_mapping_to_blocks


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(16, 64, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(64, 64, 3, padding=1, stride=2)
        self.fc1 = torch.nn.Linear(64 * 16 * 16, 512)
        self.fc2 = torch.nn.Linear(512, 128)

    def forward(self, x):
        y = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        return self.fc2(torch.relu(self.fc1(y.flatten(1))))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="bert")
    p.add_argument("--torch", action="store_true", help="use the built-in torch model")
    p.add_argument("--budget", type=float, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out/coexplore")
    p.add_argument("--importance", choices=["on", "off"], default="off", help="schedule steps over layers by gain")
    args = p.parse_args(argv)
    layers = None
    if not args.torch:
        try:
            layers = workloads.load_network(args.network)
            print(f"network {args.network}: {len(layers)} unique layers, {sum(l.count for l in layers)} in all")
        except FileNotFoundError as e:
            print(f"{e}; using the built-in torch model")
    if layers is None:
        layers = workloads.layers_from_torch(SmallNet(), torch.zeros(1, 16, 32, 32))
        print(f"torch model: {len(layers)} layers extracted with torch.fx")
    default = baselines.gemmini_default(layers)
    result = explore.coexplore(layers, seed=args.seed, time_budget_s=args.budget, importance=args.importance == "on")
    hw = result.hw
    print(f"\nbaco: Gemmini {hw.pe_dim}x{hw.pe_dim}, {hw.sp_kb:g} KB scratchpad, {hw.acc_kb:g} KB accumulator, "
          f"~{hw.area_mm2:.2f} mm2")
    print(f"  network EDP {result.edp:.4g} (cycles {result.cycles:.4g}, energy {result.energy_uj:.4g} uJ)")
    print(f"  Gemmini-default (16x16, 256 KB, 64 KB, C-library tiling): EDP {default.edp:.4g} "
          f"-> {default.edp / result.edp:.2f}x better")
    for layer, m in zip(layers, result.mappings):
        line = f"  {layer.name or layer.key} x{layer.count}: {format_mapping(m)}"
        if layer.R == layer.S == layer.Q == layer.N == 1:
            line += f"  blocks {gemm_mapping_to_blocks(m, layer)}"
        print(line)
    paths = write_outputs(args.out, layers, result)
    print(f"\nwrote {Path(args.out).resolve()}: " + ", ".join(p.name for p in paths.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
