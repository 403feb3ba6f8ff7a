"""What a CPU operator of a whole-model program (baco.model.cpu_ops) costs on the RISC-V core: one
table, RISC-V instructions per unit of the work each kernel states (`CpuKernel.work`: calls,
output rows, output elements, and for pools the window taps and window rows they read), times
the core's cycles per instruction (the cycle model's: one).

The coefficients are a least-squares fit (relative error, coefficients >= 0) of the instructions the
ISS retired running each operator's runner ELF (its ~100-instruction start-up counted in `calls`)
at 3-8 shapes per operator (rows and row lengths varied: softmax and layernorm rows of 8 to 768;
pools with 2x2/2, 3x3/2, 3x3/1 and 5x5/2 windows), session 11. The fit reproduces those runs
within 2% for the LUT, add, SE multiply and masked softmax, within 5% for softmax (rows of 16 or
more: a row of 8 is unrolled by LLVM and costs 0.73x of the table) and layernorm (rows of 8 or
more); the layout copies (permute, strided_copy, concat, embedding) within 0.5-1.35x (their loop
nests' cost per element depends on the rank). The max pool's row (refitted on 13 shapes: 2x2/2,
3x3/2 pad 1, 3x3/1 pad 1, 5x5/2 pad 2; 4-64 wide, 1-256 channels; random int8 data, whose running
maximum changes at ~H(taps) of a window's taps) prices windows clipped by the image's edge (bounds
computed per output) apart from unclipped ones (constant bounds, unrolled): 0.87-1.18x of those
runs, 0.99-1.14x at 5 more (1.27x at a 1x1x3 image's 131). The average pools' rows the same way
(`python benchmarks/cpu_ops.py --pools` measures and refits them): avg_pool2d on 13 shapes (2x2/2,
3x3/2 with and without pad 1, 3x3/1 pad 1, 5x5/2 pad 2, a ceil-mode one; DenseNet's, Inception's
and odd sizes, 3-256 channels) 0.97-1.05x, 5 held out 0.85-1.00x (the row it replaced: 0.62-3.96x
and 0.60-2.42x); adaptive_avg_pool2d, whose windows have constant bounds only when it has one
output (a global pool, unrolled; the others' are computed per output: its `clipped_taps`), on 10
shapes (ResNet's, MobileNetV2's and MobileNetV3's global pools at 64 and 224, VGG's 7x7 ones, odd
ones) 0.46-1.32x, median 0.96, 5 held out 0.47-1.13x, median 0.77 (the row it replaced: 0.24-1.01x,
median 0.61, and 0.27-0.97x, median 0.56): a global pool's cost a tap depends on how LLVM unrolls
its window (2.1 instructions at 28x28, 4.2 at 56x56) and an upsampling one (VGG's 2x2 -> 7x7 at
64x64) retires 40 an output, 0.46x of the row.
Session 29: requantisation clamps with fmax.s/fmin.s (LLVM's maxnum/minnum; arith.maxnumf had
compiled to compares and branches), and the flat elementwise kernels, the SE multiply's channels and
the softmax's and layernorm's row loops run over groups of cpu_ops.UNROLL elements (unrolled); the
rows of the operators that changed were refitted (`python benchmarks/cpu_ops.py --refit`: LUT,
adds, SE multiply, softmaxes, layernorm, copy, each over its row's terms plus `ragged_outputs`, the
elements of a kernel whose inner count is no multiple of UNROLL, on 5-8 shapes, 4-5 held out;
`--pools` for the average pools). The refit against the ISS: LUT, adds and copy 1.00-1.01x fitted
and held out; SE multiply 0.84-1.12x (0.83x at 17 channels held out: LLVM unrolls 3 and 5 channels,
not 17 or 20); softmax 0.99-1.01x (rows of 8 and 4 held out: 1.29x, 1.11x), masked 0.99-1.01x (4:
1.18x), layernorm 0.97-1.04x (8: 0.90x, 4: 0.76x); avg_pool2d 0.97-1.06x, held out 0.84-1.02x;
adaptive_avg_pool2d 0.37-1.32x, median 0.96 (held out 0.38-1.49x), as unequal as before (a global
pool's taps unroll unevenly).
`python benchmarks/cpu_ops.py` prints the table's prediction beside each measured operator at
the networks' sizes."""
from __future__ import annotations

import math

from baco.gemmini.timing_constants import DEFAULT_CONSTANTS

# kind (CpuKernel.op) -> instructions per unit of each work term
CPU_INSTRUCTIONS = {
    "lut": {"calls": 128.5, "outputs": 4.4, "ragged_outputs": 2.6},
    "add": {"calls": 138.6, "outputs": 11.5, "ragged_outputs": 3.5},
    "add_relu": {"calls": 137.6, "outputs": 11.5, "ragged_outputs": 3.5},
    "mul_channel": {"outputs": 9.9, "ragged_outputs": 1.5},
    "softmax": {"rows": 20.2, "outputs": 16.4, "ragged_outputs": 7.1},
    "masked_softmax": {"calls": 20.2, "rows": 34.5, "outputs": 25.1, "ragged_outputs": 9.1},
    "layernorm": {"outputs": 15.1, "ragged_outputs": 5.0},
    "copy": {"calls": 126.8, "outputs": 2.4, "ragged_outputs": 2.6},
    "permute": {"outputs": 2.67},
    "strided_copy": {"outputs": 3.68},
    "concat": {"calls": 12, "outputs": 2.89},
    "embedding": {"outputs": 3.49},
    "max_pool2d": {"calls": 102, "taps": 2.87, "clipped_taps": 0.3, "clipped_window_rows": 18.31},
    "avg_pool2d": {"taps": 0.8, "window_rows": 6.6, "clipped_taps": 1.3, "clipped_window_rows": 13.9},
    "adaptive_avg_pool2d": {"outputs": 6.5, "taps": 2.8, "clipped_taps": 0.9},
}


def cpu_instructions(kernel) -> float:
    """RISC-V instructions one call of a cpu_ops kernel retires, by the table."""
    return work_instructions(kernel.op, kernel.work)


def work_instructions(op: str, work: dict) -> float:
    """RISC-V instructions of a CPU operator `op` (CpuKernel.op) doing `work` (CpuKernel.work's terms)."""
    if op not in CPU_INSTRUCTIONS:
        raise ValueError(f"the CPU cost table has no row for the operator {op!r}")
    return sum(coeff * work[term] for term, coeff in CPU_INSTRUCTIONS[op].items())


def output_work(out_shape) -> dict:
    """The work terms of every CPU operator writing an output of `out_shape`: one call, its rows
    (all dims but the last), its elements."""
    return {"calls": 1, "rows": math.prod(out_shape[:-1]), "outputs": math.prod(out_shape)}


def cpu_cycles(kernel) -> float:
    """Cycles of one call of a cpu_ops kernel on the core."""
    return cpu_instructions(kernel) * DEFAULT_CONSTANTS.cpu_cycles_per_instruction


def max_pool_cycles(shape, kernel: int, stride: int, padding: int) -> float:
    """Cycles of cpu_ops.max_pool2d on the core (the table's) over an int8 NHWC image of `shape`,
    square kernel x kernel windows of that stride and padding (no dilation, floor mode): what the
    max pool after a conv costs where the conv's pooled store does not run it."""
    n, h, w, c = shape
    out = [pooled_extent(size, kernel, stride, padding) for size in (h, w)]
    if min(out) < 1:
        raise ValueError(f"a {kernel}x{kernel} max pool window (stride {stride}, padding {padding}) does not fit "
                         f"a {h}x{w} image")
    work = {**output_work((n, *out, c)), **pool_work(shape, (kernel,) * 2, (stride,) * 2, (padding,) * 2, (1, 1), out)}
    return work_instructions("max_pool2d", work) * DEFAULT_CONSTANTS.cpu_cycles_per_instruction


# ---- pooling windows (baco.model.cpu_ops' pools and their work terms) ---------------------------
def pooled_extent(size: int, kernel: int, stride: int, padding: int, dilation: int = 1,
                  ceil_mode: bool = False) -> int:
    """torch's output size of a pooling window along one axis (ATen's pooling_output_shape): with
    ceil_mode the last window may overhang the input but must start inside it or the left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def taps_inside(size, kernel, stride, padding, dilation, out) -> list[int]:
    """Per output position along one axis, how many of its window's taps lie inside [0, size)."""
    return [sum(0 <= o * stride - padding + i * dilation < size for i in range(kernel)) for o in range(out)]


def pool_work(shape, kernel, stride, padding, dilation, out) -> dict:
    """What a pooling kernel reads over its whole output: the window taps inside the image, and the
    window rows (its inner loop's runs); and the same two again as `clipped_taps` and
    `clipped_window_rows` where some window is clipped by the image's edge (zero otherwise): its
    window loops then have bounds computed per output, while unclipped windows have constant
    bounds that LLVM unrolls (a 3x3/2 pad 1 max pool retires ~5 instructions per tap and ~18 per
    window row, a 2x2/2 unpadded one ~3 per tap)."""
    n, h, w, c = shape
    inside = [taps_inside(*a) for a in zip((h, w), kernel, stride, padding, dilation, out)]
    along = [sum(t) for t in inside]
    work = {"taps": n * c * along[0] * along[1], "window_rows": n * c * along[0] * out[1]}
    clipped = any(min(t) < k for t, k in zip(inside, kernel))
    return {**work, "clipped_taps": work["taps"] * clipped, "clipped_window_rows": work["window_rows"] * clipped}


__all__ = ["CPU_INSTRUCTIONS", "cpu_instructions", "cpu_cycles", "work_instructions", "output_work", "max_pool_cycles",
           "pooled_extent", "taps_inside", "pool_work"]
