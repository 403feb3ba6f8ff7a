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
nests' cost per element depends on the rank); pools within 0.5-1.5x.
`python benchmarks/cpu_ops.py` prints the table's prediction beside each measured operator at
the networks' sizes."""
from __future__ import annotations

from baco.gemmini.timing_constants import DEFAULT_CONSTANTS

# kind (CpuKernel.op) -> instructions per unit of each work term
CPU_INSTRUCTIONS = {
    "lut": {"calls": 128, "outputs": 7.0},
    "add": {"calls": 154, "outputs": 24.86},
    "add_relu": {"calls": 108, "rows": 0.77, "outputs": 18.93},
    "mul_channel": {"calls": 133, "rows": 9.05, "outputs": 20.0},
    "softmax": {"rows": 37.3, "outputs": 33.2},
    "masked_softmax": {"calls": 135, "rows": 30.52, "outputs": 42.13},
    "layernorm": {"outputs": 31.3},
    "copy": {"calls": 126, "outputs": 5.0},
    "permute": {"outputs": 2.67},
    "strided_copy": {"outputs": 3.68},
    "concat": {"calls": 12, "outputs": 2.89},
    "embedding": {"outputs": 3.49},
    "max_pool2d": {"rows": 114.2, "taps": 3.97},
    "avg_pool2d": {"rows": 189.5, "taps": 6.23},
    "adaptive_avg_pool2d": {"rows": 11.24, "taps": 0.82, "window_rows": 9.88},
}


def cpu_instructions(kernel) -> float:
    """RISC-V instructions one call of a cpu_ops kernel retires, by the table."""
    if kernel.op not in CPU_INSTRUCTIONS:
        raise ValueError(f"the CPU cost table has no row for the operator {kernel.op!r}")
    return sum(coeff * kernel.work[term] for term, coeff in CPU_INSTRUCTIONS[kernel.op].items())


def cpu_cycles(kernel) -> float:
    """Cycles of one call of a cpu_ops kernel on the core."""
    return cpu_instructions(kernel) * DEFAULT_CONSTANTS.cpu_cycles_per_instruction


__all__ = ["CPU_INSTRUCTIONS", "cpu_instructions", "cpu_cycles"]
