"""Conv2D on Gemmini as an implicit GEMM written in the block language (baco.kernels.conv).

    python examples/conv2d.py --N 1 --H 14 --W 14 --C 33 --K 17 --R 3 --S 3 [--stride 2]
        [--padding 1] [--dilation 1] [--bias] [--relu] [--out int8|int32] [--target sim|iss]
        [--dim 16] [--block BM BN BK] [--elf out.elf]

Layouts: input NHWC, weights RSCK, output NPQK. --block gives the schedule's blocks:
BM output columns, BN output channels, BK input channels per step (default: the default
GEMM schedule of one output row, Q x K x C). Runs the kernel, checks it bit for bit
against a numpy reference of Gemmini's arithmetic, and exits 0 only when they agree.
`--elf PATH` also writes a self-checking bare-metal ELF (exit code 0 iff Gemmini's
result matches) that runs on `baco sim` and on `spike --extension=gemmini`.
"""
import argparse
import sys

import numpy as np

from baco.kernels.conv import add_cli_arguments, cli_options, cli_run, conv2d_launch, reference_conv2d


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in (("N", 1), ("H", 14), ("W", 14), ("C", 33), ("K", 17), ("R", 3), ("S", 3)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--block", type=int, nargs=3, default=None, metavar=("BM", "BN", "BK"))
    add_cli_arguments(p)
    args = p.parse_args(argv)
    opts = cli_options(p, args)
    rng = np.random.default_rng(args.seed)
    x = rng.integers(-128, 128, (args.N, args.H, args.W, args.C), dtype=np.int8)
    w = rng.integers(-128, 128, (args.R, args.S, args.C, args.K), dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, args.K).astype(np.int32) if args.bias else None
    try:
        launch = conv2d_launch(x, w, bias, blocks=args.block, **opts)
    except ValueError as e:
        p.error(str(e))
    ref = reference_conv2d(x, w, bias, blocks=launch.schedule, **opts)
    title = (f"Conv2D x{x.shape} w{w.shape} stride {args.stride} padding {args.padding} dilation {args.dilation}"
             f"{' +bias' if args.bias else ''} {args.out}{' relu' if args.relu else ''}")
    return cli_run(title, launch, ref, args)


if __name__ == "__main__":
    sys.exit(main())
