"""Conv1D on Gemmini: the implicit-GEMM convolution kernel (baco.kernels.conv) with one
input row.

    python examples/conv1d.py --N 1 --L 100 --C 33 --K 17 --S 3 [--stride 2] [--padding 1]
        [--dilation 1] [--bias] [--relu] [--out int8|int32] [--target sim|iss] [--dim 16]
        [--block BM BN BK] [--elf out.elf]

Layouts: input (N, L, C), weights (S, C, K), output (N, L_out, K). --block: BM output
positions, BN output channels, BK input channels per step. Checks the result bit for bit
against a numpy reference of Gemmini's arithmetic and exits 0 only when they agree;
`--elf PATH` also writes a self-checking bare-metal ELF (runs on `baco sim` and Spike).
"""
import argparse
import sys

import numpy as np

from baco.kernels.conv import add_cli_arguments, cli_options, cli_run, conv2d_launch, reference_conv1d


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in (("N", 1), ("L", 100), ("C", 33), ("K", 17), ("S", 3)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--block", type=int, nargs=3, default=None, metavar=("BM", "BN", "BK"))
    add_cli_arguments(p)
    args = p.parse_args(argv)
    opts = cli_options(p, args)
    rng = np.random.default_rng(args.seed)
    x = rng.integers(-128, 128, (args.N, args.L, args.C), dtype=np.int8)
    w = rng.integers(-128, 128, (args.S, args.C, args.K), dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, args.K).astype(np.int32) if args.bias else None
    conv2d_opts = dict(opts, stride=(1, args.stride), padding=(0, args.padding), dilation=(1, args.dilation))
    try:
        launch = conv2d_launch(x[:, None], w[None], bias, blocks=args.block, **conv2d_opts)
    except ValueError as e:
        p.error(str(e))
    ref = reference_conv1d(x, w, bias, blocks=launch.schedule, **opts)
    title = (f"Conv1D x{x.shape} w{w.shape} stride {args.stride} padding {args.padding} dilation {args.dilation}"
             f"{' +bias' if args.bias else ''} {args.out}{' relu' if args.relu else ''}")
    return cli_run(title, launch, ref, args, reshape=lambda y: y[:, 0])


if __name__ == "__main__":
    sys.exit(main())
