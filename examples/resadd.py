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

import baco
import baco.language as bl
from baco.gemmini.arith import acc_to_int8, saturate, scale_to_int
from baco.gemmini.config import GemminiConfig
from baco.kernels.arguments import exact_array, real_scalar
from baco.kernels.cli import add_gemmini_arguments, gemmini_config, report


@baco.jit
def resadd_kernel(a_ptr, b_ptr, c_ptr, M, N, sa, sb, out_scale,
                  BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, RELU: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    total = bl.load(a_blk, boundary_check=(0, 1)) * sa + bl.load(b_blk, boundary_check=(0, 1)) * sb
    out = total * out_scale
    if RELU:
        out = bl.relu(out)
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(N, 1), offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    bl.store(c_blk, out.to(bl.int8), boundary_check=(0, 1))


def default_blocks(M, N, config):
    """Large blocks: the kernel holds one int32 accumulator block (no scratchpad), so up to
    half the accumulator rows, at most 8 column tiles wide."""
    d = config.dim
    up = lambda v: -(-v // d) * d  # noqa: E731
    bn = min(up(N), 8 * d)
    bm = min(up(M), max(d, (config.acc_rows // 2) // (bn // d) // d * d))
    return bm, bn


def launch(a, b, sa, sb, out_scale=1.0, relu=True, block=None, target="sim", config=None):
    """(compiled kernel, grid, runtime args, output) of C = relu(A·sa + B·sb)·out_scale as int8."""
    config = config or GemminiConfig()
    a, b = exact_array(a, "a", np.int8, 2), exact_array(b, "b", np.int8, 2)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    M, N = a.shape
    bm, bn = block or default_blocks(M, N, config)
    c = np.zeros((M, N), np.int8)
    args = [a, b, c, M, N, real_scalar(sa, "sa"), real_scalar(sb, "sb"), real_scalar(out_scale, "out_scale")]
    ck = resadd_kernel.compile(*args, BLOCK_M=bm, BLOCK_N=bn, RELU=relu, target=target, config=config)
    return ck, (bl.cdiv(M, bm), bl.cdiv(N, bn)), args, c


def resadd(a, b, sa, sb, **kw):
    ck, grid, args, c = launch(a, b, sa, sb, **kw)
    return c, ck.run(grid, args)


def reference(a, b, sa, sb, out_scale=1.0, relu=True):
    """Gemmini's arithmetic: each input scaled by its mvin scale (RNE, saturated to int8),
    summed in int32, then ReLU, scaled by out_scale (RNE) and saturated to int8."""
    scaled = lambda x, s: saturate(scale_to_int(x, np.float32(s)), 8)  # noqa: E731
    return acc_to_int8(scaled(a, sa) + scaled(b, sb), out_scale, relu)


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
    bm, bn = args.block or default_blocks(args.M, args.N, config)
    title = (f"resadd {args.M}x{args.N}: {'relu(' if relu else '('}A*{args.sa} + B*{args.sb})*{args.out_scale} -> int8 "
             f"blocks={bm}x{bn} DIM={args.dim}")
    elf_args = [*launch_args[:2], np.zeros_like(c), *launch_args[3:]]   # the ELF checks its own output array
    return report(title, args.target, c, ref, info,
                  args.elf and (lambda: ck.build_elf(grid, elf_args, args.elf, expected={2: ref})))


if __name__ == "__main__":
    sys.exit(main())
