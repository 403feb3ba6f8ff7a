"""GEMV on Gemmini with @baco.jit block kernels: y = A·x (matrix times vector) and
y = x·B (vector times matrix), int8 inputs, int32 or scaled (optionally ReLU'd) int8
output, optional int32 bias.

    python examples/gemv.py [--form Ax|xB] [--M 300] [--K 200] [--N 70] [--target sim|iss]
        [--dim 16] [--out int8|int32] [--relu] [--bias] [--block 64 64]
        [--dataflow WS|OS] [--single-buffer] [--elf out.elf]

A vector is a block one element wide: in y = A·x, x is read through a (BLOCK_K, 1)
block pointer (one byte per row) and y written through a (BLOCK_M, 1) one, so the
weight-stationary array holds a slice of x as a one-column weight tile while A's rows
stream through it (the mapping that reads A once, as the C library's tiled_matmul does
for N = 1). In y = x·B, x is a (1, BLOCK_K) row block and each program owns BLOCK_N
outputs. Without --block, the block sizes are those of
baco.gemmini.schedule.default_gemm_schedule for the GEMM the GEMV is (M×1×K or 1×N×K).

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
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig, as_config
from baco.gemmini.schedule import DATAFLOWS, GemmSchedule, as_schedule, default_gemm_schedule, schedule_problems
from baco.kernels.arguments import bias_vector, exact_array, output_kind, real_scalar
from baco.kernels.cli import add_gemmini_arguments, add_output_arguments, gemmini_config, output_scale, report


@baco.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, scale,
                  BLOCK_M: bl.constexpr, BLOCK_K: bl.constexpr, RELU: bl.constexpr, OUT_INT8: bl.constexpr,
                  bias_ptr=None):
    """y = A·x (+ bias): program i computes y[i·BLOCK_M : (i+1)·BLOCK_M]."""
    pid = bl.program_id(0)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(K, 1), offsets=(pid * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    x_blk = bl.make_block_ptr(x_ptr, shape=(K, 1), strides=(1, 1), offsets=(0, 0),
                              block_shape=(BLOCK_K, 1), order=(1, 0))
    if bias_ptr is not None:
        acc = bl.load(bl.make_block_ptr(bias_ptr, shape=(M, 1), strides=(1, 1), offsets=(pid * BLOCK_M, 0),
                                        block_shape=(BLOCK_M, 1), order=(1, 0)), boundary_check=(0,))
    else:
        acc = bl.zeros((BLOCK_M, 1), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BLOCK_K)):
        x = bl.load(x_blk, boundary_check=(0,))    # first: the array holds it while A streams
        acc += bl.dot(bl.load(a_blk, boundary_check=(0, 1)), x)
        a_blk = bl.advance(a_blk, (0, BLOCK_K))
        x_blk = bl.advance(x_blk, (BLOCK_K, 0))
    y_blk = bl.make_block_ptr(y_ptr, shape=(M, 1), strides=(1, 1), offsets=(pid * BLOCK_M, 0),
                              block_shape=(BLOCK_M, 1), order=(1, 0))
    if OUT_INT8:
        out = acc * scale
        if RELU:
            out = bl.relu(out)
        bl.store(y_blk, out.to(bl.int8), boundary_check=(0,))
    else:
        bl.store(y_blk, acc, boundary_check=(0,))


@baco.jit
def vecmat_kernel(x_ptr, b_ptr, y_ptr, N, K, scale,
                  BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr, RELU: bl.constexpr, OUT_INT8: bl.constexpr,
                  bias_ptr=None):
    """y = x·B (+ bias): program j computes y[j·BLOCK_N : (j+1)·BLOCK_N]."""
    pid = bl.program_id(0)
    x_blk = bl.make_block_ptr(x_ptr, shape=(1, K), strides=(K, 1), offsets=(0, 0),
                              block_shape=(1, BLOCK_K), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid * BLOCK_N),
                              block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    if bias_ptr is not None:
        acc = bl.load(bl.make_block_ptr(bias_ptr, shape=(1, N), strides=(N, 1), offsets=(0, pid * BLOCK_N),
                                        block_shape=(1, BLOCK_N), order=(1, 0)), boundary_check=(1,))
    else:
        acc = bl.zeros((1, BLOCK_N), dtype=bl.int32)
    for k in range(0, bl.cdiv(K, BLOCK_K)):
        acc += bl.dot(bl.load(x_blk, boundary_check=(1,)), bl.load(b_blk, boundary_check=(0, 1)))
        x_blk = bl.advance(x_blk, (0, BLOCK_K))
        b_blk = bl.advance(b_blk, (BLOCK_K, 0))
    y_blk = bl.make_block_ptr(y_ptr, shape=(1, N), strides=(N, 1), offsets=(0, pid * BLOCK_N),
                              block_shape=(1, BLOCK_N), order=(1, 0))
    if OUT_INT8:
        out = acc * scale
        if RELU:
            out = bl.relu(out)
        bl.store(y_blk, out.to(bl.int8), boundary_check=(1,))
    else:
        bl.store(y_blk, acc, boundary_check=(1,))


def gemm_shape(form, m_or_n, k):
    """The GEMM (M, N, K) a GEMV is."""
    return (m_or_n, 1, k) if form == "Ax" else (1, m_or_n, k)


def resolve_schedule(form, m_or_n, k, config, out_int8=False, block=None, dataflow="WS", double_buffer=True):
    """(block over the output, block over K, GemmSchedule of the GEMM the GEMV is); without
    `block`, default_gemm_schedule's blocks for that GEMM."""
    M, N, K = gemm_shape(form, m_or_n, k)
    if block is None:
        s = default_gemm_schedule(M, N, K, config, out_int8)
        block = (s.block_m if form == "Ax" else s.block_n, s.block_k)
    elif not isinstance(block, (tuple, list)) or len(block) != 2:
        raise ValueError(f"block must be (block over the output, block over K), got {block!r}")
    d = config.dim
    bm, bn = (block[0], d) if form == "Ax" else (d, block[0])
    s = as_schedule(GemmSchedule(bm, bn, block[1], dataflow=dataflow, double_buffer=double_buffer), "block")
    problems = schedule_problems(s, config, out_int8)
    if problems:     # before anything is compiled
        raise ValueError(f"block {tuple(block)!r}: " + "; ".join(problems))
    return tuple(block), s


def launch(form, mat, x, *, bias=None, out="int32", scale=1.0, relu=False, block=None, dataflow="WS",
           double_buffer=True, target="sim", config=None):
    """(kernel, grid, runtime args, output array) of a GEMV launch: form "Ax" is y = mat·x
    (mat M×K), "xB" is y = x·mat (mat K×N)."""
    if form not in ("Ax", "xB"):
        raise ValueError(f"form must be 'Ax' or 'xB', not {form!r}")
    if dataflow not in DATAFLOWS:
        raise ValueError(f"dataflow must be one of {DATAFLOWS}, not {dataflow!r}")
    output_kind(out, relu)
    config = as_config(config)
    mat, x = exact_array(mat, "mat", np.int8, 2), exact_array(x, "x", np.int8, 1)
    k = x.shape[0]
    if mat.shape[1 if form == "Ax" else 0] != k:
        raise ValueError(f"mat {mat.shape} does not match x {x.shape} for y = {form}")
    n_out = mat.shape[0] if form == "Ax" else mat.shape[1]
    (b_out, b_k), _ = resolve_schedule(form, n_out, k, config, out == "int8", block, dataflow, double_buffer)
    y = np.zeros(n_out, np.int8 if out == "int8" else np.int32)
    args = [mat, x, y] if form == "Ax" else [x, mat, y]
    args += [n_out, k, real_scalar(scale)]
    bias = bias_vector(bias, n_out)
    kernel = matvec_kernel if form == "Ax" else vecmat_kernel
    blocks = dict(BLOCK_M=b_out) if form == "Ax" else dict(BLOCK_N=b_out)
    ck = kernel.compile(*args, **blocks, BLOCK_K=b_k, RELU=relu, OUT_INT8=out == "int8", bias_ptr=bias,
                        target=target, config=config, dataflow=dataflow, double_buffer=double_buffer)
    return ck, (bl.cdiv(n_out, b_out),), args + ([] if bias is None else [bias]), y


def gemv(form, mat, x, **kw):
    """y (int32 or int8 vector) and the launch info."""
    ck, grid, args, y = launch(form, mat, x, **kw)
    return y, ck.run(grid, args)


def reference(form, mat, x, *, bias=None, out="int32", scale=1.0, relu=False, dataflow="WS", block_k=None):
    """numpy y in Gemmini's arithmetic (OS reduces K in blocks of block_k inside the array)."""
    a, b = (mat, x[:, None]) if form == "Ax" else (x[None, :], mat)
    d = None if bias is None else (np.asarray(bias, np.int64)[:, None] if form == "Ax" else
                                   np.asarray(bias, np.int64)[None, :])
    y = reference_matmul(a, b, d, out=out, scale=scale, relu=relu, os_k_block=block_k if dataflow == "OS" else None)
    return y.reshape(-1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--form", choices=["Ax", "xB"], default="Ax", help="y = A·x (A is M×K) or y = x·B (B is K×N)")
    p.add_argument("--M", type=int, default=300)
    p.add_argument("--N", type=int, default=70)
    p.add_argument("--K", type=int, default=200)
    add_gemmini_arguments(p)
    p.add_argument("--dataflow", choices=["WS", "OS"], default="WS")
    p.add_argument("--block", type=int, nargs=2, default=None, metavar=("B_OUT", "BK"),
                   help="block over the output (M for Ax, N for xB) and over K")
    p.add_argument("--single-buffer", action="store_true", help="one home per loaded block (no load/compute overlap)")
    add_output_arguments(p, out="int32", int8_scale="1/64", bias_help="add a random int32 bias vector to y")
    args = p.parse_args(argv)
    scale = output_scale(p, args, 1 / 64)
    config = gemmini_config(args)
    rng = np.random.default_rng(args.seed)
    n_out = args.M if args.form == "Ax" else args.N
    mat = rng.integers(-128, 128, (args.M, args.K) if args.form == "Ax" else (args.K, args.N), dtype=np.int8)
    x = rng.integers(-128, 128, args.K, dtype=np.int8)
    bias = rng.integers(-(1 << 15), 1 << 15, n_out, dtype=np.int32) if args.bias else None
    block, s = resolve_schedule(args.form, n_out, args.K, config, args.out == "int8", args.block, args.dataflow,
                                not args.single_buffer)
    problems = schedule_problems(s, config, args.out == "int8")
    if problems:
        p.error("; ".join(problems))
    opts = dict(bias=bias, out=args.out, scale=scale, relu=args.relu)
    ck, grid, launch_args, y = launch(args.form, mat, x, block=block, dataflow=args.dataflow,
                                      double_buffer=not args.single_buffer, target=args.target, config=config, **opts)
    info = ck.run(grid, launch_args)
    ref = reference(args.form, mat, x, dataflow=args.dataflow, block_k=block[1], **opts)
    what = f"A·x, A {args.M}x{args.K}" if args.form == "Ax" else f"x·B, B {args.K}x{args.N}"
    title = (f"GEMV y = {what}{' +bias' if args.bias else ''} {args.out}{' relu' if args.relu else ''} "
             f"blocks={block[0]}/{block[1]} {args.dataflow}{'' if args.single_buffer else ' double-buffered'} "
             f"DIM={args.dim}")
    elf_args = [*launch_args[:2], np.zeros_like(y), *launch_args[3:]]   # the ELF checks its own output array
    return report(title, args.target, y, ref, info,
                  args.elf and (lambda: ck.build_elf(grid, elf_args, args.elf, expected={2: ref})))


if __name__ == "__main__":
    sys.exit(main())
