"""The hardware the tuner chooses: array size and buffer capacities, with the
per-access energies and an area estimate (floats or torch tensors alike)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig
from baco.gemmini.energy import DRAM_PJ, MAC_PJ, REGISTER_PJ, accumulator_pj, scratchpad_pj  # noqa: F401

# the search space: power-of-two arrays in [MIN_PE_DIM, MAX_PE_DIM], buffers up to MAX_BUFFER_KB each
MIN_PE_DIM = 2
MAX_PE_DIM = 128
MAX_BUFFER_KB = 4096

# area fit (mm²) over the 95 configurations of the Timeloop dataset: PE² + scratchpad KB + accumulator KB
AREA_PER_PE = 0.000438
AREA_PER_SP_KB = 0.00270
AREA_PER_ACC_KB = 0.00553


def area_mm2(pe_dim, sp_kb, acc_kb):
    """Estimated silicon area (mm²) of a Gemmini: 0.000438·PE² + 0.00270·scratchpad KB + 0.00553·accumulator KB.

    Source: a least-squares fit of `target.area` (Timeloop/Accelergy's area estimate for DOSA's
    Gemmini description) over the 95 configurations of benchmarks/data/timeloop/dataset.csv.tar.gz;
    the accumulator's 32-bit words make a KB of it about twice a scratchpad KB. The default
    16×16, 256 KB, 64 KB Gemmini is 1.16 mm² by this estimate. Floats or torch tensors alike."""
    return AREA_PER_PE * pe_dim * pe_dim + AREA_PER_SP_KB * sp_kb + AREA_PER_ACC_KB * acc_kb


@dataclass(frozen=True)
class Hardware:
    """A Gemmini the tuner costs: its array and buffers (what the search sizes) and `ext_spad`,
    whether it has Gemmini master's ext-spad commands (GemminiConfig.mvout_spad: the fused GEMM
    chain on the loop unit). ext_spad is a Gemmini version, not a size: the search never changes
    it and it adds no area."""
    pe_dim: int = DEFAULT_CONFIG.dim
    sp_kb: float = int(DEFAULT_CONFIG.sp_kb)
    acc_kb: float = int(DEFAULT_CONFIG.acc_kb)
    ext_spad: bool = DEFAULT_CONFIG.mvout_spad

    def to_gemmini_config(self) -> GemminiConfig:
        return replace(GemminiConfig.from_capacity(int(self.pe_dim), self.sp_kb, self.acc_kb),
                       mvout_spad=bool(self.ext_spad))

    @classmethod
    def from_gemmini_config(cls, cfg: GemminiConfig) -> "Hardware":
        return cls(cfg.dim, cfg.sp_kb, cfg.acc_kb, cfg.mvout_spad)

    @property
    def area_mm2(self) -> float:
        return area_mm2(self.pe_dim, self.sp_kb, self.acc_kb)


DEFAULT_HARDWARE = Hardware()
