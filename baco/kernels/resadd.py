"""Residual add (a ResNet skip connection) on Gemmini with a @baco.jit block kernel:
C = relu(A·sa + B·sb)·out_scale as int8, for int8 tensors A and B of the same shape.

The kernel reads `bl.load(a_blk) * sa + bl.load(b_blk) * sb`: a block sum is made in
Gemmini's int32 accumulator, so each loaded int8 block moves from DRAM straight into
the accumulator block (mvin with shrink = 1: int8 in DRAM, widened on the way), the
first overwriting it and the second with the accumulate bit, each multiplied by its
slot's mvin scale (round half to even, saturated to int8), as the C library's
tiled_resadd does. The store applies ReLU and the output scale on the way out of the
accumulator (config_st), rounding and saturating to int8. No scratchpad row is used.
examples/resadd.py runs it from the command line.

The add is elementwise with one scale per operand, so the launch (without a block) reads the two
contiguous operands and the output as DIM rows (default_view): every program is then whole DIM row
blocks and one LOOP_WS with is_resadd (baco.passes.loop_ws keeps a program of ragged rows as an
explicit stream), whatever the tensor's own shape (a 7x7 image is 49 rows). Where DIM does not divide
the element count, a whole model's add (resadd_launches) runs the whole DIM rows and the last few
elements as two launches (default_views).

On the ISS the kernel is compiled for its launch's shapes and grid (specialize_shapes="iss"): the
LOOP_WS set-up's addresses, strides and bounds fold, and a grid of one program over whole blocks
reads its operands in place, still one LOOP_WS. End to end on the ISS with the cycle model (DIM 16,
default views and blocks; benchmarks/resadd_specialized.py): 0.67-0.995x the cycles of the program
compiled for any shape on 13 adds (ResNet-18's 56x56x64 to 7x7x512 0.98-0.99x, 16x16 0.67x).
"""
import numpy as np

import baco.language as bl
from baco.frontend.jit import jit
from baco.gemmini.arith import acc_to_int8, saturate, scale_to_int
from baco.gemmini.config import as_config
from baco.gemmini.schedule import block_rows, capacity_problems, resadd_programs
from baco.gemmini.schedule import resadd_blocks as default_blocks
from baco.kernels.arguments import exact_array, real_scalar
from baco.kernels.launch import KernelLaunch


@jit(specialize_shapes="iss")   # its ISS programs compiled for their shapes (set-up folds; one LOOP_WS a program)
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


def default_view(M, N, config) -> tuple[int, int]:
    """The (rows, cols) the kernel reads contiguous M x N operands as when no block is given: DIM
    rows of M·N/DIM columns when M·N is a multiple of DIM, else M x N (no view has whole DIM row
    blocks then). Measured end to end on the ISS with the cycle model (DIM 16): within 0.5% of the
    fastest whole-row-block view of 7x7x512 and 7x7x2048 (every view, blocks 32 to 256 columns
    wide), and faster than M x N on the adds of ResNet-18/50, MobileNetV2/V3 and the BERT layer but
    56x56x64 (0.5% slower)."""
    d = config.dim
    return (d, M * N // d) if M * N % d == 0 else (M, N)


def block_pair(block, config) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N) given as a pair of positive ints whose int32 accumulator block fits
    `config` (the kernel's only local block), else a ValueError naming `block`."""
    if not (isinstance(block, (tuple, list)) and len(block) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v > 0 for v in block)):
        raise ValueError(f"block must be a (BLOCK_M, BLOCK_N) pair of positive ints, got {block!r}")
    bm, bn = map(int, block)
    problems = capacity_problems(config, 0, block_rows(bm, bn, config.dim), acc_blocks=f"C {bm}x{bn}")
    if problems:
        raise ValueError(f"block {(bm, bn)}: " + "; ".join(problems))
    return bm, bn


def _operands(a, b):
    a, b = exact_array(a, "a", np.int8, 2), exact_array(b, "b", np.int8, 2)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError(f"a and b must hold elements, got shape {a.shape}")
    return a, b


def _launch(a, b, c, sa, sb, out_scale, relu, blocks, config, y) -> KernelLaunch:
    """The launch over rows x cols views a, b and c at blocks (BLOCK_M, BLOCK_N); `y` its output
    (c or the array c views)."""
    if not isinstance(relu, (bool, np.bool_)):
        raise TypeError(f"relu must be a bool, got {type(relu).__name__} {relu!r}")
    (rows, cols), (bm, bn) = a.shape, blocks
    args = [a, b, c, rows, cols, real_scalar(sa, "sa"), real_scalar(sb, "sb"), real_scalar(out_scale, "out_scale")]
    return KernelLaunch(resadd_kernel, (bl.cdiv(rows, bm), bl.cdiv(cols, bn)), args,
                        dict(BLOCK_M=bm, BLOCK_N=bn, RELU=relu), y, config)


def resadd_launch(a, b, sa, sb, out_scale=1.0, relu=True, block=None, config=None) -> KernelLaunch:
    """The prepared launch of C = relu(A·sa + B·sb)·out_scale as int8 (A, B int8 (M, N), C-contiguous;
    the output `y` is M x N). Without a block the kernel reads the operands as default_view's
    rows x cols with default_blocks; a given block is (BLOCK_M, BLOCK_N) of the M x N matrices."""
    config = as_config(config)
    a, b = _operands(a, b)
    M, N = a.shape
    if block is None:
        rows, cols = default_view(M, N, config)
        blocks = default_blocks(rows, cols, config)
    else:
        (rows, cols), blocks = (M, N), block_pair(block, config)
    c = np.zeros((M, N), np.int8)
    return _launch(a.reshape(rows, cols), b.reshape(rows, cols), c.reshape(rows, cols), sa, sb, out_scale, relu,
                   blocks, config, c)


def default_views(M, N, config) -> list[tuple[int, int, int]]:
    """(first element, rows, cols) of each launch resadd_launches runs over contiguous M x N
    operands: default_view's one view, unless that view is M x N with more than one program at
    default_blocks (its programs of ragged rows are explicit streams on run-time extents, ~94 RISC-V
    instructions a DIM x DIM tile: RESADD_INSTRUCTIONS); then the first DIM·⌊MN/DIM⌋ elements as
    DIM rows (whole-row programs, one LOOP_WS each) and the last MN mod DIM elements as one row (a
    one-program launch, folded). End to end on the ISS with the cycle model at DIM 16 the two
    launches take 0.41-0.95x the one's cycles on 10 such adds (65x129 2,310 -> 1,487, 1.30x the C
    library's stream where the one view was 0.83x; 17x513 3,763 -> 1,553); an M x N view of one
    program stays (7x7: 171 cycles, the two launches 348)."""
    rows, cols = default_view(M, N, config)
    whole, tail = divmod(M * N, config.dim)
    if not (whole and tail) or (rows, cols) != (M, N) or len(resadd_programs(M, N, config)) == 1:
        return [(0, rows, cols)]
    return [(0, config.dim, whole), (config.dim * whole, 1, tail)]


def resadd_launches(a, b, sa, sb, out_scale=1.0, relu=True, config=None) -> tuple[list[KernelLaunch], np.ndarray]:
    """(the launches, C) of C = relu(A·sa + B·sb)·out_scale as int8 over C-contiguous int8 A and B
    (M, N), as a whole-model program runs it: one launch per default_views view, each at
    default_blocks and writing its elements of C (M x N)."""
    config = as_config(config)
    a, b = _operands(a, b)
    M, N = a.shape
    c = np.zeros((M, N), np.int8)
    flat = [x.reshape(-1) for x in (a, b, c)]
    launches = []
    for first, rows, cols in default_views(M, N, config):
        a2, b2, c2 = (x[first:first + rows * cols].reshape(rows, cols) for x in flat)
        launches.append(_launch(a2, b2, c2, sa, sb, out_scale, relu, default_blocks(rows, cols, config), config, c2))
    return launches, c


def launch(a, b, sa, sb, out_scale=1.0, relu=True, block=None, target="sim", config=None):
    """(compiled kernel, grid, runtime args, output) of C = relu(A·sa + B·sb)·out_scale as int8."""
    prepared = resadd_launch(a, b, sa, sb, out_scale, relu, block, config)
    ck = prepared.compiled(target)
    return ck, prepared.grid, prepared.args, prepared.y


def resadd(a, b, sa, sb, **kw):
    ck, grid, args, c = launch(a, b, sa, sb, **kw)
    return c, ck.run(grid, args)


def reference(a, b, sa, sb, out_scale=1.0, relu=True):
    """Gemmini's arithmetic: each input scaled by its mvin scale (RNE, saturated to int8),
    summed in int32, then ReLU, scaled by out_scale (RNE) and saturated to int8."""
    scaled = lambda x, s: saturate(scale_to_int(x, np.float32(s)), 8)  # noqa: E731
    return acc_to_int8(scaled(a, sa) + scaled(b, sb), out_scale, relu)

