"""GEMM on Gemmini with a @baco.jit block kernel.

    python examples/matmul.py --M 100 --N 70 --K 300 [--target sim|iss] [--dim 16]
        [--elf out.elf] [--relu] [--out int8|int32] [--dataflow WS|OS] [--block 32 32 64]

Runs the kernel, checks it bit for bit against a numpy reference of Gemmini's
arithmetic, and exits 0 only when they agree. `--elf PATH` also writes a
self-checking bare-metal ELF (inputs and expected output linked in; exit code
0 iff Gemmini's result matches) that runs on `baco sim` and on
`spike --extension=gemmini`.
"""
import argparse
import sys

import numpy as np

import baco
import baco.language as bl
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig


@baco.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, scale,
                  BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr,
                  RELU: bl.constexpr, OUT_INT8: bl.constexpr):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = bl.zeros((BLOCK_M, BLOCK_N), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BLOCK_K)):
        a = bl.load(a_blk, boundary_check=(0, 1))
        b = bl.load(b_blk, boundary_check=(0, 1))
        acc += bl.dot(a, b)
        a_blk = bl.advance(a_blk, (0, BLOCK_K))
        b_blk = bl.advance(b_blk, (BLOCK_K, 0))
    c_blk = bl.make_block_ptr(c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                              offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    if OUT_INT8:
        out = acc * scale
        if RELU:
            out = bl.relu(out)
        bl.store(c_blk, out.to(bl.int8), boundary_check=(0, 1))
    else:
        bl.store(c_blk, acc, boundary_check=(0, 1))


def matmul(a, b, *, out="int32", scale=1.0, relu=False, block=(32, 32, 64), target="sim",
           config=None, dataflow="WS"):
    """C = A·B on Gemmini (int8 inputs); returns (C, launch info)."""
    M, K = a.shape
    _, N = b.shape
    c = np.zeros((M, N), dtype=np.int8 if out == "int8" else np.int32)
    bm, bn, bk = block
    grid = (bl.cdiv(M, bm), bl.cdiv(N, bn))
    info = matmul_kernel[grid](a, b, c, M, N, K, a.strides[0], 1, b.strides[0], 1,
                               c.strides[0] // c.itemsize, 1, float(scale),
                               BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, RELU=relu, OUT_INT8=(out == "int8"),
                               target=target, config=config or GemminiConfig(), dataflow=dataflow)
    return c, info


def write_elf(path, a, b, expected, *, out, scale, relu, block, dataflow):
    """Self-checking bare-metal ELF for the default Gemmini configuration."""
    c = np.zeros_like(expected)
    _, info = matmul(a, b, out=out, scale=scale, relu=relu, block=block, dataflow=dataflow,
                     config=GemminiConfig())
    M, K = a.shape
    N = b.shape[1]
    args = [a, b, c, M, N, K, a.strides[0], 1, b.strides[0], 1, c.strides[0] // c.itemsize, 1, float(scale)]
    grid = (bl.cdiv(M, block[0]), bl.cdiv(N, block[1]))
    return info["kernel"].build_elf(grid, args, path, expected={2: expected})


def reference(a, b, *, out="int32", scale=1.0, relu=False, block=(32, 32, 64), dataflow="WS"):
    return reference_matmul(a, b, out=out, scale=scale, relu=relu,
                            os_k_block=block[2] if dataflow == "OS" else None)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--M", type=int, default=100)
    p.add_argument("--N", type=int, default=70)
    p.add_argument("--K", type=int, default=300)
    p.add_argument("--target", choices=["sim", "iss"], default="sim")
    p.add_argument("--dim", type=int, default=16, help="Gemmini array size (DIM)")
    p.add_argument("--sp-kb", type=float, default=256)
    p.add_argument("--acc-kb", type=float, default=64)
    p.add_argument("--dataflow", choices=["WS", "OS"], default="WS")
    p.add_argument("--block", type=int, nargs=3, default=(32, 32, 64), metavar=("BM", "BN", "BK"))
    p.add_argument("--out", choices=["int8", "int32"], default="int32")
    p.add_argument("--scale", type=float, default=None, help="int8 output scale (default 1/64)")
    p.add_argument("--relu", action="store_true")
    p.add_argument("--elf", help="also write a self-checking bare-metal ELF here")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.relu and args.out == "int32":
        p.error("--relu needs --out int8 (Gemmini's full-width int32 mvout bypasses the activation)")
    scale = args.scale if args.scale is not None else (1 / 64 if args.out == "int8" else 1.0)
    rng = np.random.default_rng(args.seed)
    a = rng.integers(-128, 128, (args.M, args.K), dtype=np.int8)
    b = rng.integers(-128, 128, (args.K, args.N), dtype=np.int8)
    config = GemminiConfig.from_capacity(args.dim, args.sp_kb, args.acc_kb)
    opts = dict(out=args.out, scale=scale, relu=args.relu, block=tuple(args.block), dataflow=args.dataflow)
    c, info = matmul(a, b, target=args.target, config=config, **opts)
    ref = reference(a, b, **opts)
    bad = int(np.count_nonzero(c != ref))
    print(f"GEMM {args.M}x{args.N}x{args.K} {args.out}{' relu' if args.relu else ''} "
          f"block={tuple(args.block)} {args.dataflow} DIM={args.dim} on {args.target}: "
          f"{'bit-exact' if bad == 0 else f'{bad} MISMATCHES'}")
    if isinstance(info, dict):
        counts = ", ".join(f"{k}={v}" for k, v in info.items() if k in ("commands", "instructions", "programs"))
        print(f"  {counts}")
    if args.elf:
        print(f"  self-checking ELF: {write_elf(args.elf, a, b, ref, **opts)}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
