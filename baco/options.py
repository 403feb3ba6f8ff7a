"""Compile options: one `CompileOptions` per compile, the key of the launch's kernel cache and
of the compiler's disk cache, and what the compiler and its pipeline receive. Its defaults
(BACO_LOOP_WS) are read here only, so no stage learns a default from another. Also the checks
of a launch's integers and grid (`exact_int`, `launch_grid`), shared by the JIT and compiled
kernels. Imports only the ground floor."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig, as_config
from baco.gemmini.schedule import DATAFLOWS

LOOP_WS_ENV = "BACO_LOOP_WS"
TARGETS = ("sim", "iss")
INDEX_RANGE = (-(1 << 63), 1 << 63)     # integer scalars are `index` (i64) in the kernel


def exact_int(value, what: str, lo: int = INDEX_RANGE[0], hi: int = INDEX_RANGE[1]) -> int:
    """`value` as a Python int when it is an integer (Python, numpy, or an integral float) in
    [lo, hi); otherwise a TypeError/ValueError naming `what`."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got the bool {value!r}")
    if isinstance(value, (int, np.integer)):
        number = int(value)
    elif isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        number = int(value)
    elif isinstance(value, (float, np.floating)):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    else:
        raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    if not lo <= number < hi:
        raise ValueError(f"{what} = {number} is outside the kernel's integer range [{lo}, {hi})")
    return number


def launch_grid(grid, name: str) -> tuple[int, ...]:
    """1 to 3 non-negative integer dimensions (integral floats and numpy integers accepted)."""
    dims = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{name}: grid must have 1 to 3 dimensions, got {grid!r}")
    return tuple(exact_int(g, f"{name}: grid dimension {i}", 0) for i, g in enumerate(dims))


def full_grid(grid) -> tuple[int, int, int]:
    """A launch grid (1 to 3 integers) as its three axes (the missing ones of size 1)."""
    return tuple(grid) + (1,) * (3 - len(grid))


def loop_ws_enabled(option: bool | None) -> bool:
    """The hardware-loop rewrites (LOOP_WS, LOOP_CONV_WS): the launch/pipeline option if given,
    else BACO_LOOP_WS (default on)."""
    if option is not None:
        return bool(option)
    return os.environ.get(LOOP_WS_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


@dataclass(frozen=True)
class CompileOptions:
    """How one kernel is compiled: the backend (`target`), the Gemmini, and the schedule choices
    the passes honour (dataflow, double buffering, the hardware-loop rewrites). Built with
    `CompileOptions.of`, which resolves the defaults; a value of the wrong type or outside its
    choices is an error naming the option (nothing is converted)."""
    target: str = "sim"
    config: GemminiConfig = field(default=DEFAULT_CONFIG)
    dataflow: str = "WS"
    double_buffer: bool = False
    loop_ws: bool = True

    def __post_init__(self):
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, not {self.target!r}")
        if self.dataflow not in DATAFLOWS:
            raise ValueError(f"dataflow must be {' or '.join(map(repr, DATAFLOWS))}, not {self.dataflow!r}")
        if not isinstance(self.config, GemminiConfig):
            raise TypeError(f"config must be a GemminiConfig, got {type(self.config).__name__} {self.config!r}")
        for name in ("double_buffer", "loop_ws"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__} "
                                f"{getattr(self, name)!r}")
        object.__setattr__(self, "double_buffer", bool(self.double_buffer))
        object.__setattr__(self, "loop_ws", bool(self.loop_ws))

    @classmethod
    def of(cls, *, target: str = "sim", config: GemminiConfig | None = None, dataflow: str = "WS",
           double_buffer: bool = False, loop_ws: bool | None = None) -> "CompileOptions":
        """The options with None resolved: config the default Gemmini, loop_ws BACO_LOOP_WS."""
        if loop_ws is not None and not isinstance(loop_ws, (bool, np.bool_)):
            raise TypeError(f"loop_ws must be a bool or None, got {type(loop_ws).__name__} {loop_ws!r}")
        return cls(target, as_config(config), dataflow, double_buffer, loop_ws_enabled(loop_ws))

    def key(self) -> tuple:
        """A hashable, JSON-serialisable form: equal keys compile to the same code."""
        return (self.target, tuple(sorted(self.config.to_dict().items())), self.dataflow, self.double_buffer,
                self.loop_ws)

    def lowering_key(self) -> tuple:
        """key() without the target: the passes and the translation to LLVM IR never read it (only the
        backend built from the IR does), so a kernel compiled for sim and for the ISS lowers once."""
        return self.key()[1:]
