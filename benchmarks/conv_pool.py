"""What pooling on the way out of the accumulator costs and saves, on the cycle model.

    python benchmarks/conv_pool.py [--dim 16 32] [--smoke] [--resolution 224] [--stem] [--end-to-end]

For each layer (a convolution followed by ReLU and a max-pool: 1x1 convolutions with
VGG/ResNet-style pools, VGG's 3x3 conv + 2x2 pool, a ResNet-style 7x7/2 stem + 3x3/2 pool)
it times, from their command streams (baco.sim.timing):

  * conv+pool: examples/conv_pool.py's kernel (baco.kernels.pool), the pool done by
    Gemmini's pooled mvouts (bl.max_pool2d), its default schedule;
  * conv: baco's conv2d of the same layer with its default schedule, which writes the
    whole unpooled output (what a separate pooling pass would then read).

  * library: the C library's tiled_conv_auto of the same conv + pool (baco.sim.clib: one
    LOOP_CONV_WS per tile, pooled mvouts),

and prints cycles, output bytes written to DRAM, the ratios conv+pool / conv and
library / conv+pool (baco's speed-up) measured in this run. `--resolution` sets the stem row's
input size (56 by default; ResNet's is 224), `--stem` runs that row alone, and `--end-to-end`
adds both programs with the CPU issuing them: baco's conv+pool launch as a RISC-V program on the
ISS with the cycle model (rdcycle around the grid loop and its fence, as benchmarks/kernels.py),
the library's stream issued with its tile-loop work per tile. A pooled tile recomputes the kernel - stride
conv rows it shares with the next tile, and the store controller reads each window
position once per pooled pixel (pool_size^2 local reads per pooled pixel).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from baco.gemmini.config import GemminiConfig  # noqa: E402
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS  # noqa: E402
from baco.kernels.conv import conv2d_launch  # noqa: E402
from baco.kernels.pool import ConvPoolLaunch  # noqa: E402
from baco.sim.clib import time_conv  # noqa: E402
from baco.sim.timing import TimingModel  # noqa: E402

# (name, N, H, W, C, K, R, conv stride, conv padding, pool, pool stride, pool padding)
LAYERS = [
    ("1x1, pool 3/2/1 56x56x64", 1, 56, 56, 64, 64, 1, 1, 0, 3, 2, 1),
    ("1x1, pool 2/2 28x28x128", 1, 28, 28, 128, 128, 1, 1, 0, 2, 2, 0),
    ("1x1, pool 2/2 14x14x256", 1, 14, 14, 256, 256, 1, 1, 0, 2, 2, 0),
    ("1x1, pool 3/1/1 17x17x96", 1, 17, 17, 96, 48, 1, 1, 0, 3, 1, 1),
    ("1x1, pool 2/2 56x56x32 N=2", 2, 56, 56, 32, 32, 1, 1, 0, 2, 2, 0),
    ("vgg 3x3, pool 2/2 28x28x64", 1, 28, 28, 64, 64, 3, 1, 1, 2, 2, 0),
    ("vgg 3x3, pool 2/2 14x14x128", 1, 14, 14, 128, 128, 3, 1, 1, 2, 2, 0),
    ("stem 7x7/2, pool 3/2/1 {0}x{0}x3", 1, 56, 56, 3, 64, 7, 2, 3, 3, 2, 1),
]
SMOKE = [("smoke 1x1, pool 3/2/1", 1, 9, 7, 16, 20, 1, 1, 0, 3, 2, 1),
         ("smoke 3x3, pool 2/2", 1, 8, 8, 8, 16, 3, 1, 1, 2, 2, 0)]


def measure(layer, cfg, end_to_end=False):
    _, N, H, W, C, K, R, cs, cp, pool, stride, pad = layer
    x, w = np.zeros((N, H, W, C), np.int8), np.zeros((R, R, C, K), np.int8)
    fused = ConvPoolLaunch(x, w, None, pool=pool, stride=stride, padding=pad, conv_stride=cs, conv_padding=cp,
                           scale=1 / 64, relu=True, config=cfg, blocks=None)
    conv = conv2d_launch(x, w, None, stride=cs, padding=cp, scale=1 / 64, relu=True, config=cfg)
    lib_kw = dict(stride=cs, padding=cp, scale=1 / 64, relu=True, pool_size=pool, pool_stride=stride, pool_padding=pad)
    library = time_conv(N, H, W, C, K, R, cfg, **lib_kw)
    e2e = None
    if end_to_end:
        ck = fused.kernel.compile(*fused.args, target="iss", **fused.options)
        e2e = (ck.run(fused.grid, fused.args, timing=TimingModel(cfg))["kernel_cycles"],
               time_conv(N, H, W, C, K, R, cfg, cpu_tile_instructions=DEFAULT_CONSTANTS.library_tile_instructions,
                         **lib_kw)["cycles"])
    return fused.cycles(), conv.cycles(), library, fused.schedule, e2e


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, nargs="+", default=[16, 32])
    p.add_argument("--smoke", action="store_true", help="two small layers at DIM 16")
    p.add_argument("--resolution", type=int, default=56, help="the stem row's input height and width")
    p.add_argument("--stem", action="store_true", help="the stem row alone")
    p.add_argument("--end-to-end", action="store_true",
                   help="also baco's program on the ISS with the CPU issuing it, and the library's stream issued")
    args = p.parse_args(argv)
    size = args.resolution
    stem = [(LAYERS[-1][0].format(size), 1, size, size, *LAYERS[-1][4:])]
    layers, dims = (SMOKE, [16]) if args.smoke else (stem if args.stem else LAYERS[:-1] + stem, args.dim)
    print(f"{'layer':<31} {'DIM':>3} {'conv+pool':>9} {'conv':>8} {'ratio':>5} {'library':>8} {'speedup':>7} "
          f"{'out bytes':>9} {'conv bytes':>10}  pooled schedule (PR, BN, BK)")
    ratios, speedups, e2e_speedups = [], [], []
    for dim in dims:
        cfg = GemminiConfig() if dim == 16 else GemminiConfig.from_capacity(dim, 512, 128)
        for layer in layers:
            fused, conv, library, s, e2e = measure(layer, cfg, args.end_to_end)
            ratios.append(fused["cycles"] / conv["cycles"])
            speedups.append(library["cycles"] / fused["cycles"])
            assert library["dram_bytes_out"] == fused["dram_bytes_out"]     # the same pooled output
            print(f"{layer[0]:<31} {dim:>3} {fused['cycles']:>9.0f} {conv['cycles']:>8.0f} {ratios[-1]:>5.2f} "
                  f"{library['cycles']:>8.0f} {speedups[-1]:>7.2f} {fused['dram_bytes_out']:>9} "
                  f"{conv['dram_bytes_out']:>10}  ({s.block_m}, {s.block_n}, {s.block_k})", flush=True)
            if e2e:
                e2e_speedups.append(e2e[1] / e2e[0])
                print(f"{'':<31} {dim:>3} end to end: baco {e2e[0]:,} library {e2e[1]:,.0f} "
                      f"speed-up {e2e_speedups[-1]:.3f}", flush=True)

    def summary(values):
        return f"geomean {np.exp(np.mean(np.log(values))):.2f}, min {min(values):.2f}, max {max(values):.2f}"
    print(f"conv+pool / conv cycles: {summary(ratios)}")
    print(f"library / baco conv+pool cycles (baco's speed-up): {summary(speedups)}, "
          f"baco slower on {sum(s < 1 for s in speedups)} of {len(speedups)}")
    if e2e_speedups:
        print(f"end to end, library / baco: {summary(e2e_speedups)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
