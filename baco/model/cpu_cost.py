"""The CPU operators' cost table, defined with the other core costs on the ground floor
(baco.gemmini.cpu_cost, which the tuner reads too); here under the whole-model compiler's name."""
from baco.gemmini.cpu_cost import CPU_INSTRUCTIONS, cpu_cycles, cpu_instructions

__all__ = ["CPU_INSTRUCTIONS", "cpu_instructions", "cpu_cycles"]
