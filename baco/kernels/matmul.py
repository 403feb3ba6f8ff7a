"""The GEMM block kernel the tuner/compiler/simulator loop compiles (and examples/matmul.py
runs): C = A·B (+ bias) with int8 inputs, an int32 accumulator block per program, and an
int32 or scaled (optionally ReLU'd) int8 output, under a GemmSchedule.

Bias: an int32 row of N values added to every row of C. The kernel reads it through a
block pointer whose row stride is 0, so every row of the block is the same bias row, and
starts the accumulator from it instead of zeros: Gemmini moves it into the accumulator
with one mvin per tile at DRAM stride 0 (the DMA repeats the row), as the C library's
tiled_matmul does for a repeating bias, and the K loop accumulates on top of it."""
from dataclasses import replace

import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.arith import reference_matmul
from baco.gemmini.config import GemminiConfig, as_config
from baco.gemmini.schedule import (DATAFLOWS, GemmSchedule, as_schedule, default_gemm_schedule, padded_rows,
                                   schedule_problems)
from baco.kernels.arguments import bias_vector, exact_array, output_kind, real_scalar
from baco.kernels.launch import KernelLaunch


# its ELFs compiled for their shapes (LOOP_WS set-up and configs fold); a GEMM, never LOOP_CONV_WS: a
# program of one K step is a 1x1 convolution's IR, but conv2d_launch chose this kernel over LoopConv
@jit(specialize_shapes="iss", loop_conv=False)
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, scale,
                  BLOCK_M: bl.constexpr, BLOCK_N: bl.constexpr, BLOCK_K: bl.constexpr,
                  RELU: bl.constexpr, OUT_INT8: bl.constexpr, bias_ptr=None):
    pid_m = bl.program_id(0)
    pid_n = bl.program_id(1)
    a_blk = bl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_blk = bl.make_block_ptr(b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    if bias_ptr is not None:    # stride 0: each row of the block is the bias row
        bias_blk = bl.make_block_ptr(bias_ptr, shape=(M, N), strides=(0, 1),
                                     offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                                     block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
        acc = bl.load(bias_blk, boundary_check=(0, 1))
    else:
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


def resolve_schedule(schedule=None, block=None, dataflow="WS", double_buffer=False, *, shape=None,
                     config=None, out_int8=False, bias=False, b_transposed=False, b_padded=False) -> GemmSchedule:
    """The schedule to run: `schedule` (GemmSchedule or dict) if given, else one from
    --block/--dataflow/--double-buffer, else default_gemm_schedule for `shape` (M, N, K)
    on `config` with `dataflow` (`bias`: the kernel adds a bias row; `b_transposed`: B is read
    column-major; `b_padded`: B holds padded_rows(K, DIM) rows)."""
    if dataflow not in DATAFLOWS:      # checked even where a schedule overrides it
        raise ValueError(f"dataflow must be one of {DATAFLOWS}, not {dataflow!r}")
    if schedule is not None:
        if block is not None:
            raise ValueError(f"block={block!r} and schedule= both given: give one")
        return as_schedule(schedule)
    if block is not None or shape is None:
        return as_schedule(GemmSchedule(*(block or (32, 32, 64)), dataflow=dataflow, double_buffer=double_buffer),
                           "block")
    s = default_gemm_schedule(*shape, config or GemminiConfig(), out_int8, bias, b_transposed, b_padded)
    return s if dataflow == s.dataflow else replace(s, dataflow=dataflow)


def readable_in_place(x) -> bool:
    """x is a non-empty 2-D int8 numpy array the kernel reads where it is: unit stride along one
    dimension (row-major with any row stride, or column-major). Anything else goes through
    exact_array, which checks it and copies it unchanged into a contiguous array."""
    if not (isinstance(x, np.ndarray) and x.dtype == np.int8 and x.ndim == 2 and x.size):
        return False
    s0, s1 = (s // x.itemsize if n > 1 else 0 for s, n in zip(x.strides, x.shape))
    return min(s0, s1) >= 0 and (s1 in (0, 1) or s0 in (0, 1))


def strided_matrix(x, name: str):
    """(flat, row stride, column stride) of a 2-D int8 array read in place: row-major with any
    row stride, or column-major (strides (1, ld): a transposed operand, which Gemmini's array
    transposes back); `flat` is the contiguous 1-D array from its first to its last element (what
    the kernel's pointer addresses). Other layouts are TypeErrors naming the argument."""
    if not (isinstance(x, np.ndarray) and x.dtype == np.int8 and x.ndim == 2):
        raise TypeError(f"{name} must be a 2-D int8 numpy array, got {type(x).__name__} "
                        f"{getattr(x, 'dtype', '')} {getattr(x, 'shape', '')}")
    rows, cols = x.shape
    s0, s1 = (s // x.itemsize if n > 1 else 0 for s, n in zip(x.strides, x.shape))
    if min(s0, s1) < 0 or (s1 not in (0, 1) and s0 not in (0, 1)) or x.size == 0:
        raise TypeError(f"{name} must have unit stride along one dimension (row- or column-major), "
                        f"got strides {x.strides}")
    if s1 in (0, 1):             # row-major (a single column is too)
        s0, s1 = s0 or cols, 1
    else:                        # column-major
        s0 = 1
    span = (rows - 1) * s0 + (cols - 1) * s1 + 1
    flat = np.lib.stride_tricks.as_strided(x, shape=(span,), strides=(x.itemsize,))
    return flat, s0, s1


def matmul_launch(a, b, *, bias=None, out="int32", scale=1.0, relu=False, schedule=None, block=None, dataflow="WS",
                  double_buffer=False, config=None, c=None) -> KernelLaunch:
    """The prepared launch of C = A·B (+ bias, an int32 vector of N) on Gemmini (int8 A (M,K) and
    B (K,N)); C is `c` if given (of the output type, rows contiguous, any row stride) else a new
    array. Numpy A and B are read in place, row-major with any row stride or column-major
    (strides (1, ld): read transposed, e.g. Kᵀ of attention scores; not both column-major);
    other inputs are taken as exact_array takes them. Without `schedule` or `block`, the default
    schedule for the shape.

    B may hold up to padded_rows(K, DIM) rows: the rows past K are padding, never in C (A's
    padded K columns are fed as zeros), but they let a ragged K step run as one LOOP_WS, whose
    LoopMatmul moves every B block with DIM rows (baco.passes.loop_ws); without them that step is
    split in two (or its B moved in explicitly)."""
    a = a if readable_in_place(a) else exact_array(a, "a", np.int8, 2)
    b = b if readable_in_place(b) else exact_array(b, "b", np.int8, 2)
    (a_flat, stride_am, stride_ak), (b_flat, stride_bk, stride_bn) = strided_matrix(a, "a"), strided_matrix(b, "b")
    if stride_ak != 1 and stride_bn != 1:
        raise ValueError("a and b are both column-major: Gemmini's array transposes one operand (copy one of them)")
    output_kind(out, relu)
    M, K = a.shape
    config = as_config(config)
    padded_k = padded_rows(K, config.dim)
    if not K <= b.shape[0] <= padded_k:
        raise ValueError(f"b must have K = {K} rows (a is {a.shape}), or up to {padded_k} (K padded to whole "
                         f"DIM = {config.dim} blocks), got shape {b.shape}")
    N = b.shape[1]
    s = resolve_schedule(schedule, block, dataflow, double_buffer, shape=(M, N, K), config=config,
                         out_int8=out == "int8", bias=bias is not None, b_transposed=stride_bn != 1,
                         b_padded=b.shape[0] == padded_k)
    if stride_bn != 1 and s.dataflow == "OS":      # OS's transposer feeds A (gemmini-isa.md)
        raise ValueError("b is column-major, which the output-stationary dataflow cannot read transposed alone: "
                         "pass b row-major or use dataflow='WS'")
    problems = schedule_problems(s, config, out == "int8")
    if problems:      # before anything is compiled, as the convolutions check theirs
        raise ValueError(f"{'block' if schedule is None and block is not None else 'schedule'} "
                         f"{s.to_dict()}: " + "; ".join(problems))
    dtype = np.int8 if out == "int8" else np.int32
    if c is None:
        c = np.zeros((M, N), dtype=dtype)
    elif (not isinstance(c, np.ndarray) or c.shape != (M, N) or c.dtype != dtype
          or (N > 1 and c.strides[1] != c.itemsize) or (M > 1 and c.strides[0] < N * c.itemsize)):
        raise ValueError(f"c must be a {np.dtype(dtype).name} array of shape {(M, N)} with contiguous rows, "
                         f"got {getattr(c, 'dtype', type(c).__name__)} {getattr(c, 'shape', '')}")
    stride_cm = c.strides[0] // c.itemsize if M > 1 else N
    c_flat = np.lib.stride_tricks.as_strided(c, shape=((M - 1) * stride_cm + N,), strides=(c.itemsize,))
    grid = (bl.cdiv(M, s.block_m), bl.cdiv(N, s.block_n))
    args = [a_flat, b_flat, c_flat, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, 1,
            real_scalar(scale)]
    return KernelLaunch(matmul_kernel, grid, args, dict(RELU=relu, OUT_INT8=(out == "int8"), schedule=s), c, config,
                        bias_vector(bias, N))


def matmul(a, b, *, bias=None, out="int32", scale=1.0, relu=False, schedule=None, block=None, dataflow="WS",
           double_buffer=False, target="sim", config=None):
    """C = A·B (+ bias, an int32 vector of N) on Gemmini (int8 inputs); returns (C, launch
    info). Without `schedule` or `block`, the default schedule for the shape."""
    launch = matmul_launch(a, b, bias=bias, out=out, scale=scale, relu=relu, schedule=schedule, block=block,
                           dataflow=dataflow, double_buffer=double_buffer, config=config)
    return launch.y, launch.run(target)


def reference(a, b, *, bias=None, out="int32", scale=1.0, relu=False, config=None, **schedule):
    """numpy C = A·B (+ bias) in Gemmini's arithmetic, for the schedule matmul() runs (OS
    reduces K in blocks of block_k inside the array; B's padding rows past K are not used)."""
    s = resolve_schedule(**schedule, shape=(a.shape[0], b.shape[1], a.shape[1]), config=config,
                         out_int8=out == "int8", bias=bias is not None)
    d = None if bias is None else bias_vector(bias, b.shape[1])[None, :]
    return reference_matmul(a, b[:a.shape[1]], d, out=out, scale=scale, relu=relu,
                            os_k_block=s.block_k if s.dataflow == "OS" else None)
