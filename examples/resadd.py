"""Residual add (a ResNet skip connection) on Gemmini with a @baco.jit block kernel:
C = relu(A·sa + B·sb) as int8, for int8 tensors A and B of the same shape.

    python examples/resadd.py [--M 100] [--N 70] [--sa 0.5] [--sb 0.75] [--out-scale 1.0]
        [--no-relu] [--block 64 64] [--target sim|iss] [--dim 16] [--elf out.elf]

The kernel reads `bl.load(a_blk) * sa + bl.load(b_blk) * sb`: a block sum is made in
Gemmini's int32 accumulator, so each loaded int8 block moves from DRAM straight into
the accumulator block (mvin with shrink = 1: int8 in DRAM, widened on the way), the
first overwriting it and the second with the accumulate bit, each multiplied by its
slot's mvin scale (round half to even, saturated to int8), as the C library's
tiled_resadd does. The store applies ReLU and the output scale on the way out of the
accumulator (config_st), rounding and saturating to int8. No scratchpad row is used.

Checks the result bit for bit against a numpy reference of Gemmini's arithmetic and
exits 0 only when they agree. `--elf PATH` also writes a self-checking bare-metal ELF
(inputs and expected output linked in; exit code 0 iff Gemmini's result matches) that
runs on `baco sim` and on `spike --extension=gemmini`.
"""
import argparse
import sys

import numpy as np

from baco.kernels.cli import add_gemmini_arguments, gemmini_config, report
from baco.kernels.resadd import default_blocks, launch, reference, resadd, resadd_kernel  # noqa: F401  (tests load them from here)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--M", type=int, default=100)
    p.add_argument("--N", type=int, default=70)
    p.add_argument("--sa", type=float, default=0.5, help="scale of A (the mvin scale)")
    p.add_argument("--sb", type=float, default=0.75, help="scale of B (the mvin scale)")
    p.add_argument("--out-scale", type=float, default=1.0, help="scale of the sum on the way out")
    p.add_argument("--no-relu", action="store_true")
    p.add_argument("--block", type=int, nargs=2, default=None, metavar=("BM", "BN"))
    add_gemmini_arguments(p)
    args = p.parse_args(argv)
    config = gemmini_config(args)
    rng = np.random.default_rng(args.seed)
    a = rng.integers(-128, 128, (args.M, args.N), dtype=np.int8)
    b = rng.integers(-128, 128, (args.M, args.N), dtype=np.int8)
    relu = not args.no_relu
    ck, grid, launch_args, c = launch(a, b, args.sa, args.sb, args.out_scale, relu, args.block, args.target, config)
    info = ck.run(grid, launch_args)
    ref = reference(a, b, args.sa, args.sb, args.out_scale, relu)
    rows, cols = launch_args[3:5]      # the rows x cols the kernel reads the operands as
    bm, bn = args.block or default_blocks(rows, cols, config)
    title = (f"resadd {args.M}x{args.N}: {'relu(' if relu else '('}A*{args.sa} + B*{args.sb})*{args.out_scale} -> int8 "
             f"read as {rows}x{cols} blocks={bm}x{bn} DIM={args.dim}")
    elf_args = [*launch_args[:2], np.zeros_like(launch_args[2]), *launch_args[3:]]   # the ELF checks its own output
    return report(title, args.target, c, ref, info,
                  args.elf and (lambda: ck.build_elf(grid, elf_args, args.elf, expected={2: ref.reshape(rows, cols)})))


if __name__ == "__main__":
    sys.exit(main())
