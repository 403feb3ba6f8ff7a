"""Conv -> ReLU -> max-pool in one Gemmini kernel (baco.kernels.pool): a convolution whose
accumulator tiles are whole output rows, pooled on their way out of the accumulator by
`bl.max_pool2d` (config_st's pooling fields and pooled mvouts).

    python examples/conv_pool.py --N 1 --H 14 --W 14 --C 33 --K 17 [--R 3 --S 3] [--stride 1]
        [--padding 1] [--dilation 1] --pool 3 --pool-stride 2 [--pool-padding 1] [--bias]
        [--no-relu] [--scale S] [--target sim|iss] [--dim 16] [--block PR BN BK] [--elf out.elf]

Layouts: input NHWC, weights RSCK (1x1 by default: a pointwise convolution), output NHWC of
the pooled image. --stride/--padding/--dilation are the convolution's. --block gives the
schedule: PR pooled rows per program, BN output channels, BK input channels per step
(default: baco.kernels.pool.pool_schedule, from the default GEMM schedule of the layer).
Runs the kernel, checks it bit for bit against a numpy reference of Gemmini's arithmetic
(ReLU, scale with round-half-even, int8 saturation, then the max over each window with
padding counting as 0), and exits 0 only when they agree. `--elf PATH` also writes a
self-checking bare-metal ELF (exit code 0 iff Gemmini's result matches) that runs on
`baco sim` and on `spike --extension=gemmini`.
"""
import argparse
import sys

import numpy as np

from baco.kernels.cli import add_gemmini_arguments, gemmini_config, report
from baco.kernels.pool import ConvPoolLaunch, reference_conv_pool


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in (("N", 1), ("H", 14), ("W", 14), ("C", 33), ("K", 17), ("R", 1), ("S", 1),
                          ("stride", 1), ("padding", 0), ("dilation", 1)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--pool", type=int, default=2, help="pooling window (1..3)")
    p.add_argument("--pool-stride", type=int, default=None, help="pooling stride (1..3, default --pool)")
    p.add_argument("--pool-padding", type=int, default=0, help="pooling zero padding (0..3)")
    p.add_argument("--scale", type=float, default=1 / 256, help="int8 output scale (default 1/256)")
    p.add_argument("--bias", action="store_true", help="add a random int32 bias per output channel")
    p.add_argument("--no-relu", action="store_true", help="pool the scaled conv output without the ReLU")
    p.add_argument("--block", type=int, nargs=3, default=None, metavar=("PR", "BN", "BK"))
    add_gemmini_arguments(p)
    args = p.parse_args(argv)
    stride = args.pool if args.pool_stride is None else args.pool_stride
    opts = dict(pool=args.pool, stride=stride, padding=args.pool_padding, conv_stride=args.stride,
                conv_padding=args.padding, dilation=args.dilation, scale=args.scale, relu=not args.no_relu)
    rng = np.random.default_rng(args.seed)
    x = rng.integers(-128, 128, (args.N, args.H, args.W, args.C), dtype=np.int8)
    w = rng.integers(-128, 128, (args.R, args.S, args.C, args.K), dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, args.K).astype(np.int32) if args.bias else None
    try:
        launch = ConvPoolLaunch(x, w, bias, config=gemmini_config(args), blocks=args.block, **opts)
    except ValueError as e:
        p.error(str(e))
    ref = reference_conv_pool(x, w, bias, **opts)
    info = launch.run(args.target)
    title = (f"Conv{args.R}x{args.S}/{args.stride} pad {args.padding} dil {args.dilation}{' +bias' if args.bias else ''}"
             f"{'' if args.no_relu else ' -> ReLU'} -> MaxPool {args.pool}x{args.pool}/{stride} pad {args.pool_padding} "
             f"x{x.shape} w{w.shape} -> y{launch.y.shape} "
             f"schedule={launch.schedule.to_dict()} DIM={launch.config.dim}")
    return report(title, args.target, launch.y, ref, info, args.elf and (lambda: launch.write_elf(args.elf, ref)))


if __name__ == "__main__":
    sys.exit(main())
