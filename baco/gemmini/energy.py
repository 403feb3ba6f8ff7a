"""Per-access energies (pJ) of Gemmini's units, as in DOSA's Timeloop architecture
(DOSA's Gemmini model): the one definition used by the cycle model's energy
report and the tuner's cost model."""

MAC_PJ = 0.5608
REGISTER_PJ = 0.48746
DRAM_PJ = 100.0          # per byte (8-bit word)


def accumulator_pj(acc_kb: float, dim: int) -> float:
    """One 32-bit accumulator word."""
    return 1.94 + 0.1005 * acc_kb / dim


def scratchpad_pj(sp_kb: float) -> float:
    """One 8-bit scratchpad word."""
    return 0.49 + 0.02513 * sp_kb
