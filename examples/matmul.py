"""GEMM on Gemmini with a @baco.jit block kernel.

    python examples/matmul.py --M 100 --N 70 --K 300 [--target sim|iss] [--dim 16]
        [--elf out.elf] [--relu] [--out int8|int32] [--dataflow WS|OS] [--block 32 32 64]
        [--double-buffer] [--schedule '{"block_m": 64, "block_n": 64, "block_k": 128}' | FILE.json]

Runs the kernel, checks it bit for bit against a numpy reference of Gemmini's
arithmetic, and exits 0 only when they agree. `--elf PATH` also writes a
self-checking bare-metal ELF (inputs and expected output linked in; exit code
0 iff Gemmini's result matches) that runs on `baco sim` and on
`spike --extension=gemmini`.
"""
import argparse
import json
import os
import sys

import numpy as np

import baco
import baco.language as bl
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, as_schedule, schedule_problems


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


def resolve_schedule(schedule=None, block=None, dataflow="WS", double_buffer=False) -> GemmSchedule:
    """The schedule to run: `schedule` (GemmSchedule or dict) if given, else one from
    --block/--dataflow/--double-buffer."""
    if schedule is not None:
        return as_schedule(schedule)
    return GemmSchedule(*(block or (32, 32, 64)), dataflow=dataflow, double_buffer=double_buffer)


def matmul(a, b, *, out="int32", scale=1.0, relu=False, schedule=None, block=None, dataflow="WS",
           double_buffer=False, target="sim", config=None):
    """C = A·B on Gemmini (int8 inputs); returns (C, launch info)."""
    s = resolve_schedule(schedule, block, dataflow, double_buffer)
    M, K = a.shape
    _, N = b.shape
    c = np.zeros((M, N), dtype=np.int8 if out == "int8" else np.int32)
    grid = (bl.cdiv(M, s.block_m), bl.cdiv(N, s.block_n))
    info = matmul_kernel[grid](a, b, c, M, N, K, a.strides[0], 1, b.strides[0], 1,
                               c.strides[0] // c.itemsize, 1, float(scale),
                               RELU=relu, OUT_INT8=(out == "int8"),
                               target=target, config=config or GemminiConfig(), schedule=s)
    return c, info


def write_elf(path, a, b, expected, *, out, scale, relu, **schedule):
    """Self-checking bare-metal ELF for the default Gemmini configuration."""
    s = resolve_schedule(**schedule)
    c = np.zeros_like(expected)
    _, info = matmul(a, b, out=out, scale=scale, relu=relu, schedule=s, config=GemminiConfig())
    M, K = a.shape
    N = b.shape[1]
    args = [a, b, c, M, N, K, a.strides[0], 1, b.strides[0], 1, c.strides[0] // c.itemsize, 1, float(scale)]
    grid = (bl.cdiv(M, s.block_m), bl.cdiv(N, s.block_n))
    return info["kernel"].build_elf(grid, args, path, expected={2: expected})


def reference(a, b, *, out="int32", scale=1.0, relu=False, **schedule):
    s = resolve_schedule(**schedule)
    return reference_matmul(a, b, out=out, scale=scale, relu=relu,
                            os_k_block=s.block_k if s.dataflow == "OS" else None)


def parse_schedule(text):
    """--schedule: a JSON object or the path of a JSON file holding one."""
    return GemmSchedule.from_dict(json.load(open(text)) if os.path.exists(text) else json.loads(text))


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
    p.add_argument("--block", type=int, nargs=3, default=None, metavar=("BM", "BN", "BK"))
    p.add_argument("--double-buffer", action="store_true", help="two homes per block so loads overlap compute")
    p.add_argument("--schedule", type=parse_schedule, default=None,
                   help="GemmSchedule as JSON (or a JSON file): block_m/n/k, dataflow, double_buffer")
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
    if args.schedule is not None and args.block is not None:
        p.error("give either --schedule or --block")
    s = resolve_schedule(args.schedule, args.block, args.dataflow, args.double_buffer)
    problems = schedule_problems(s, config, args.out == "int8")
    if problems:
        p.error("; ".join(problems))
    opts = dict(out=args.out, scale=scale, relu=args.relu, schedule=s)
    c, info = matmul(a, b, target=args.target, config=config, **opts)
    ref = reference(a, b, **opts)
    bad = int(np.count_nonzero(c != ref))
    print(f"GEMM {args.M}x{args.N}x{args.K} {args.out}{' relu' if args.relu else ''} "
          f"schedule={json.dumps(s.to_dict())} DIM={args.dim} on {args.target}: "
          f"{'bit-exact' if bad == 0 else f'{bad} MISMATCHES'}")
    if isinstance(info, dict):
        counts = ", ".join(f"{k}={v}" for k, v in info.items() if k in ("commands", "instructions", "programs"))
        print(f"  {counts}")
    if args.elf:
        print(f"  self-checking ELF: {write_elf(args.elf, a, b, ref, **opts)}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
