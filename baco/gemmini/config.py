"""GemminiConfig: the hardware parameters every part of baco targets, and the element types."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

import numpy as np


@dataclass(frozen=True)
class Element:
    """An element type: its name (numpy's and baco.language's), MLIR type, bytes and C type."""
    name: str
    mlir: str
    bytes: int
    c: str


ELEMENTS = {e.name: e for e in (Element("int8", "i8", 1, "int8_t"), Element("int32", "i32", 4, "int32_t"),
                                Element("float32", "f32", 4, "float"))}
MLIR_ELEMENTS = {e.mlir: e for e in ELEMENTS.values()}
NUMPY_ELEMENTS = {np.dtype(e.name): e for e in ELEMENTS.values()}    # native byte order only
KB = 1024      # bytes: Chipyard's CapacityInKilobytes


def rows_to_kb(rows, dim, element: str):
    """KB of `rows` rows of `dim` elements of type `element` (ints or torch tensors)."""
    return rows * dim * ELEMENTS[element].bytes / KB


def kb_to_rows(kb, dim, element: str):
    """Rows of `dim` elements of type `element` in `kb` KB, unrounded (ints or torch tensors)."""
    return kb * KB / (dim * ELEMENTS[element].bytes)


INPUT_TYPES = ("int8", "int32")     # the element types a GemminiConfig's inputs and accumulator may have
ACC_TYPES = ("int32",)


@dataclass(frozen=True)
class GemminiConfig:
    dim: int = 16                 # systolic array is dim × dim
    sp_banks: int = 4
    sp_bank_rows: int = 4096      # rows of dim input elements per bank
    acc_banks: int = 2
    acc_rows: int = 1024          # total accumulator rows of dim acc elements
    input_type: str = "int8"
    acc_type: str = "int32"
    max_bytes: int = 64           # generateHeader's fixed MAX_BYTES
    spatial_output_bits: int = 20
    ld_queue: int = 8
    ex_queue: int = 8
    st_queue: int = 2
    rs_ld: int = 8
    rs_ex: int = 16
    rs_st: int = 4
    max_in_flight: int = 16
    dma_bus_bits: int = 128
    dma_max_bytes: int = 64
    mvin_scale: bool = True
    acc_read_full_width: bool = True
    acc_read_operands: bool = True  # the execute unit reads accumulator rows as operands (the RTL
                                    # does; Spike's libgemmini does not): needed by chained dots
    has_normalizations: bool = False
    # Gemmini master's ext-spad commands (gemmini-isa.md §1.3.10, §1.3.7): MVOUT_SPAD (funct 23,
    # accumulator rows scaled/activated into scratchpad rows) and LOOP_WS's spad_only store of C
    # into the scratchpad; off = v0.7.2, which has neither
    mvout_spad: bool = False
    num_counters: int = 8

    # ---- derived sizes -------------------------------------------------------
    @property
    def sp_rows(self) -> int:
        return self.sp_banks * self.sp_bank_rows

    @property
    def input_bytes(self) -> int:
        return ELEMENTS[self.input_type].bytes

    @property
    def acc_bytes(self) -> int:
        return ELEMENTS[self.acc_type].bytes

    @property
    def sp_kb(self) -> float:
        return rows_to_kb(self.sp_rows, self.dim, self.input_type)

    @property
    def acc_kb(self) -> float:
        return rows_to_kb(self.acc_rows, self.dim, self.acc_type)

    @property
    def max_block_len(self) -> int:
        return max(1, self.max_bytes // (self.dim * self.input_bytes))

    @property
    def max_block_len_acc(self) -> int:
        return max(1, self.max_bytes // (self.dim * self.acc_bytes))

    @property
    def sp_addr_bits(self) -> int:
        return (self.sp_rows - 1).bit_length()

    @property
    def acc_addr_bits(self) -> int:
        return (self.acc_rows - 1).bit_length()

    # ---- construction ------------------------------------------------------------
    @classmethod
    def from_capacity(cls, dim: int, sp_kb: float, acc_kb: float, **kw) -> "GemminiConfig":
        """Sizes as Chipyard's CapacityInKilobytes: bank depth = KiB·1024/(banks·row bytes)."""
        base = cls(dim=dim, **kw)
        sp_row = dim * base.input_bytes
        acc_row = dim * base.acc_bytes
        cfg = replace(base, sp_bank_rows=int(sp_kb * KB) // (base.sp_banks * sp_row),
                      acc_rows=int(acc_kb * KB) // acc_row)
        cfg.validate()
        return cfg

    def validate(self) -> "GemminiConfig":
        def need(ok, msg):
            if not ok:
                raise ValueError(f"invalid GemminiConfig: {msg}")
        pow2 = lambda n: n > 0 and n & (n - 1) == 0  # noqa: E731
        need(self.dim >= 2 and pow2(self.dim), f"dim must be a power of two >= 2 (got {self.dim})")
        need(self.input_type in INPUT_TYPES, f"input_type must be one of {sorted(INPUT_TYPES)}")
        need(self.acc_type in ACC_TYPES, f"acc_type must be one of {sorted(ACC_TYPES)}")
        need(pow2(self.sp_bank_rows), f"scratchpad bank depth must be a power of two (got {self.sp_bank_rows})")
        need(self.sp_bank_rows % self.dim == 0, f"scratchpad bank depth {self.sp_bank_rows} must be divisible by dim")
        need(self.acc_rows % (self.acc_banks * self.dim) == 0,
             f"accumulator rows {self.acc_rows} must split into {self.acc_banks} banks of a multiple of dim")
        need(self.sp_rows <= 1 << 14 or self.sp_addr_bits <= 26, "scratchpad too large for the local address")
        need(self.acc_addr_bits <= 26, "accumulator too large for the local address")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GemminiConfig":
        return cls(**d).validate()

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def load(cls, path) -> "GemminiConfig":
        with open(path) as f:
            return cls.from_dict(json.load(f))


DEFAULT_CONFIG = GemminiConfig()


@dataclass(frozen=True)
class Footprint:
    """Rows of the scratchpad and of the accumulator (a schedule's, or a loop unit's share)."""
    sp_rows: int
    acc_rows: int


def loop_unit_half(cfg: GemminiConfig) -> Footprint:
    """The rows one hardware loop (LoopMatmul's LOOP_WS, LoopConv's LOOP_CONV_WS) may use: half of
    the scratchpad and half of the accumulator, so the unit holds two loops at once (one loading
    while the other computes; gemmini-isa.md §5.3, Capacity)."""
    return Footprint(sp_rows=cfg.sp_rows // 2, acc_rows=cfg.acc_rows // 2)


def as_config(config) -> GemminiConfig:
    """The Gemmini a caller gave: `config` itself (a GemminiConfig), a default one for None, else
    a TypeError naming `config` (nothing is converted)."""
    if config is None:
        return GemminiConfig()
    if not isinstance(config, GemminiConfig):
        raise TypeError(f"config must be a GemminiConfig, got {type(config).__name__} {config!r}")
    return config
