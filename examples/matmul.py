"""GEMM on Gemmini with a @baco.jit block kernel.

    python examples/matmul.py --M 100 --N 70 --K 300 [--target sim|iss] [--dim 16]
        [--elf out.elf] [--bias] [--relu] [--out int8|int32] [--dataflow WS|OS] [--block 32 32 64]
        [--double-buffer] [--schedule '{"block_m": 64, "block_n": 64, "block_k": 128}' | FILE.json]

Without --block or --schedule the kernel runs baco.gemmini.schedule.default_gemm_schedule
for the shape and configuration (double-buffered, weight-stationary). `--bias` adds a
random int32 bias row (N values) to every row of C: the kernel starts its accumulator
from the bias, loaded at DRAM row stride 0 (see baco/kernels/matmul.py).

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

import baco.language as bl
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import GemmSchedule, schedule_problems
from baco.kernels.cli import add_gemmini_arguments, add_output_arguments, gemmini_config, output_scale, report
# the kernel lives in the package (the tuner/compiler/simulator loop compiles it too)
from baco.kernels.matmul import bias_vector, matmul, matmul_kernel, reference, resolve_schedule  # noqa: F401


def write_elf(path, a, b, expected, *, out, scale, relu, bias=None, config=None, **schedule):
    """Self-checking bare-metal ELF for `config` (default: the default Gemmini); the ELF
    records its configuration, which `baco sim` reads."""
    s = resolve_schedule(**schedule)
    c = np.zeros_like(expected)
    _, info = matmul(a, b, bias=bias, out=out, scale=scale, relu=relu, schedule=s, config=config or GemminiConfig())
    M, K = a.shape
    N = b.shape[1]
    args = [a, b, c, M, N, K, a.strides[0], 1, b.strides[0], 1, c.strides[0] // c.itemsize, 1, float(scale)]
    if bias is not None:
        args.append(bias_vector(bias, N))
    grid = (bl.cdiv(M, s.block_m), bl.cdiv(N, s.block_n))
    return info["kernel"].build_elf(grid, args, path, expected={2: expected})


def parse_schedule(text):
    """--schedule: a JSON object or the path of a JSON file holding one."""
    return GemmSchedule.from_dict(json.load(open(text)) if os.path.exists(text) else json.loads(text))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--M", type=int, default=100)
    p.add_argument("--N", type=int, default=70)
    p.add_argument("--K", type=int, default=300)
    add_gemmini_arguments(p)
    p.add_argument("--dataflow", choices=["WS", "OS"], default="WS")
    p.add_argument("--block", type=int, nargs=3, default=None, metavar=("BM", "BN", "BK"))
    p.add_argument("--double-buffer", action="store_true", help="two homes per block so loads overlap compute")
    p.add_argument("--schedule", type=parse_schedule, default=None,
                   help="GemmSchedule as JSON (or a JSON file): block_m/n/k, dataflow, double_buffer")
    add_output_arguments(p, out="int32", int8_scale="1/64", bias_help="add a random int32 bias row (N values) to C")
    args = p.parse_args(argv)
    scale = output_scale(p, args, 1 / 64)
    rng = np.random.default_rng(args.seed)
    a = rng.integers(-128, 128, (args.M, args.K), dtype=np.int8)
    b = rng.integers(-128, 128, (args.K, args.N), dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, args.N, dtype=np.int32) if args.bias else None
    config = gemmini_config(args)
    if args.schedule is not None and args.block is not None:
        p.error("give either --schedule or --block")
    s = resolve_schedule(args.schedule, args.block, args.dataflow, args.double_buffer,
                         shape=(args.M, args.N, args.K), config=config, out_int8=args.out == "int8")
    problems = schedule_problems(s, config, args.out == "int8")
    if problems:
        p.error("; ".join(problems))
    opts = dict(bias=bias, out=args.out, scale=scale, relu=args.relu, schedule=s)
    c, info = matmul(a, b, target=args.target, config=config, **opts)
    ref = reference(a, b, **opts)
    title = (f"GEMM {args.M}x{args.N}x{args.K}{' +bias' if args.bias else ''} {args.out}{' relu' if args.relu else ''} "
             f"schedule={json.dumps(s.to_dict())} DIM={args.dim}")
    return report(title, args.target, c, ref, info,
                  args.elf and (lambda: write_elf(args.elf, a, b, ref, config=config, **opts)))


if __name__ == "__main__":
    sys.exit(main())
