"""The cycle model's constants (baco.sim.timing.TimingModel and baco.sim.iss.CpuClock time with
them), here on the ground floor so the compiler's and the tuner's estimates use the same numbers.

The DRAM latency and the C library's per-tile CPU work were fitted on the training part of
benchmarks/data/rtl/firesim_train.csv by benchmarks/rtl_calibration.py --fit; the others are set,
not fitted. Pure Python: imports nothing."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TimingConstants:
    dram_latency: float = 20.0      # cycles from a DMA request to its data
    beat_cycles: float = 1.0        # cycles per 16-byte beat on the bus
    dma_cmd_overhead: float = 2.0   # per mvin/mvout command (address translation, request setup)
    array_depth_factor: float = 2.0  # pipeline depth of the array = factor × DIM
    compute_overhead: float = 1.0   # per compute command
    acc_scale_latency: float = 8.0  # accumulator read path on mvout
    # software around each DRAM-level matmul tile (tiles stream without a fence); convolution
    # tiles are timed as LoopConv's expanded LOOP_CONV_WS stream, one fenced call per tile
    gemm_tile_overhead: float = 0.0
    # the CPU (baco.sim.iss.CpuClock): Rocket is an in-order scalar core; one cycle per
    # instruction, plus its waits on Gemmini at fences and when the command queue is full
    cpu_cycles_per_instruction: float = 1.0
    # a 64-bit multiply and divide (mul, mulh*, div*, rem*) on the CPU; the 32-bit forms (mulw,
    # divw, ...) half as many, at least one. 1: as any instruction, the ISS's lower bound.
    # ROCKET_MULDIV: the default constants with Rocket's iterative unit's (rocket-chip's MulDiv
    # under Chipyard's WithNBigCores, MulDivParams(mulUnroll = 8, mulEarlyOut = true,
    # divEarlyOut = true): 64 / 8 multiply steps, one quotient bit a step), the early outs not
    # modelled: an upper bound
    cpu_mul_cycles: float = 1.0
    cpu_div_cycles: float = 1.0
    # RISC-V instructions the C library's tile loop runs per tile it issues (tiled_conv /
    # tiled_matmul compute the tile's bounds, pads and addresses; 7 RoCC commands)
    library_tile_instructions: float = 400.0

    def accumulating_spacing(self, spacing: float, feed: float, dim: int) -> float:
        """Cycles from the start of a group of computes to the next's when the next accumulates onto
        the rows the group's first compute (`feed` cycles) wrote: the group's own `spacing`, or until
        that compute's results have left the array's pipeline (array_depth_factor x DIM), the later."""
        return max(spacing, feed + self.array_depth_factor * dim)


DEFAULT_CONSTANTS = TimingConstants()
ROCKET_MULDIV = TimingConstants(cpu_mul_cycles=8.0, cpu_div_cycles=64.0)
