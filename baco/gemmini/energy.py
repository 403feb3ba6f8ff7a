"""Per-access energies (pJ) of Gemmini's units, as in DOSA's Timeloop architecture
(DOSA's Gemmini model): the one definition used by the cycle model's energy
report, the tuner's Timeloop-matched cost model and its model of the compiled
program (energy_pj: the same sum over the same counts)."""

MAC_PJ = 0.5608
REGISTER_PJ = 0.48746
DRAM_PJ = 100.0          # per byte (8-bit word)


def accumulator_pj(acc_kb: float, dim: int) -> float:
    """One 32-bit accumulator word."""
    return 1.94 + 0.1005 * acc_kb / dim


def scratchpad_pj(sp_kb: float) -> float:
    """One 8-bit scratchpad word."""
    return 0.49 + 0.02513 * sp_kb


def energy_pj(counts: dict, *, sp_kb, acc_kb, dim):
    """Energy (pJ) of a program's access counts (the cycle model's stats: macs, registers,
    scratchpad_reads/writes, accumulator_reads/writes, dram_bytes_in/out) on a Gemmini with
    these memories; numbers or torch tensors alike."""
    c = counts
    return (c["macs"] * MAC_PJ + c["registers"] * REGISTER_PJ
            + (c["scratchpad_reads"] + c["scratchpad_writes"]) * scratchpad_pj(sp_kb)
            + (c["accumulator_reads"] + c["accumulator_writes"]) * accumulator_pj(acc_kb, dim)
            + (c["dram_bytes_in"] + c["dram_bytes_out"]) * DRAM_PJ)
