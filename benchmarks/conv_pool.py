"""What pooling on the way out of the accumulator costs and saves, on the cycle model.

    python benchmarks/conv_pool.py [--dim 16 32] [--smoke]

For each layer (a 1x1 convolution followed by ReLU and a max-pool, pool shapes of
VGG/ResNet-style networks) it times, from their command streams (baco.sim.timing):

  * conv+pool: examples/conv_pool.py's kernel (baco.kernels.pool), the pool done by
    Gemmini's pooled mvouts (bl.max_pool2d), its default schedule;
  * conv: baco's pointwise conv2d of the same layer with its default schedule, which
    writes the whole unpooled output (what a separate pooling pass would then read).

and prints cycles, output bytes written to DRAM and local reads, and the ratios
conv+pool / conv measured in this run. A pooled tile recomputes the kernel - stride
conv rows it shares with the next tile, and the store controller reads each window
position once per pooled pixel (pool_size^2 local reads per pooled pixel).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.kernels.conv import conv2d_launch  # noqa: E402
from baco.kernels.pool import ConvPoolLaunch  # noqa: E402

# (name, N, H, W, C, K, pool, stride, padding)
LAYERS = [
    ("resnet stem pool 3/2/1", 1, 56, 56, 64, 64, 3, 2, 1),
    ("vgg pool 2/2 28x28x128", 1, 28, 28, 128, 128, 2, 2, 0),
    ("vgg pool 2/2 14x14x256", 1, 14, 14, 256, 256, 2, 2, 0),
    ("pool 3/1/1 17x17x96", 1, 17, 17, 96, 48, 3, 1, 1),
    ("pool 2/2 56x56x32 batch 2", 2, 56, 56, 32, 32, 2, 2, 0),
]
SMOKE = [("smoke pool 3/2/1", 1, 9, 7, 16, 20, 3, 2, 1)]


def measure(layer, cfg):
    _, N, H, W, C, K, pool, stride, pad = layer
    x, w = np.zeros((N, H, W, C), np.int8), np.zeros((C, K), np.int8)
    fused = ConvPoolLaunch(x, w, None, pool=pool, stride=stride, padding=pad, scale=1 / 64, relu=True, config=cfg,
                           blocks=None)
    conv = conv2d_launch(x, w.reshape(1, 1, C, K), None, scale=1 / 64, relu=True, config=cfg)
    return fused.cycles(), conv.cycles(), fused.schedule


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, nargs="+", default=[16, 32])
    p.add_argument("--smoke", action="store_true", help="one small layer at DIM 16")
    args = p.parse_args(argv)
    layers, dims = (SMOKE, [16]) if args.smoke else (LAYERS, args.dim)
    print(f"{'layer':<28} {'DIM':>3} {'conv+pool cyc':>13} {'conv cyc':>10} {'ratio':>6} "
          f"{'out bytes':>10} {'conv bytes':>10} {'ratio':>6}  pooled schedule (PR, BN, BK)")
    ratios = []
    for dim in dims:
        cfg = GemminiConfig() if dim == 16 else GemminiConfig.from_capacity(dim, 512, 128)
        for layer in layers:
            fused, conv, s = measure(layer, cfg)
            r = fused["cycles"] / conv["cycles"]
            ratios.append(r)
            print(f"{layer[0]:<28} {dim:>3} {fused['cycles']:>13.0f} {conv['cycles']:>10.0f} {r:>6.2f} "
                  f"{fused['dram_bytes_out']:>10} {conv['dram_bytes_out']:>10} "
                  f"{fused['dram_bytes_out'] / conv['dram_bytes_out']:>6.2f}  ({s.block_m}, {s.block_n}, {s.block_k})")
    print(f"conv+pool / conv cycles: geomean {np.exp(np.mean(np.log(ratios))):.2f}, "
          f"min {min(ratios):.2f}, max {max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
