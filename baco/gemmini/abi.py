"""The runtime ABI between compiled kernels and what runs them: the functions a kernel's LLVM
IR calls, which the passes emit and both backends define (the host JIT binds them to the
in-process Gemmini model, the RISC-V harness to `.insn` inline assembly and C), and the exit
codes a bare-metal ELF reports. Pure Python: imports nothing."""
from __future__ import annotations

import re

# One RoCC command: `@"baco.rocc.<command>"(i64 rs1, i64 rs2, i64 site)`; `site` (source_site)
# is the op's kernel line:col, for the host JIT's fault messages (the RISC-V backend ignores it).
INTRINSIC_PREFIX = "baco.rocc."
FENCE = "baco.fence"                    # () -> (): wait for every issued command

BOUNDARY_ERROR = "baco_boundary_error"  # (i64 line, i64 col): a negative column offset at run time
BOUNDARY_ERROR_SIGNATURE = "(i64, i64) -> ()"
RUNTIME_ERROR = "baco_runtime_error"    # (code, line, col): code is a key of baco.errors.RUNTIME_ERRORS
RUNTIME_ERROR_SIGNATURE = "(i64, i64, i64) -> ()"
PROGRAM_ID = "baco_program_id"          # (i64 axis) -> i64
NUM_PROGRAMS = "baco_num_programs"      # (i64 axis) -> i64
GRID_SIGNATURE = "(i64) -> i64"
GRID_PIDS = "baco_pid"                  # the RISC-V harness's i64[3] the two above read (the current
GRID_EXTENTS = "baco_nprog"             # program's ids, the grid's extents), inlined into the kernel

BOUNDARY_EXIT_CODE = 3                  # an ELF's exit code after baco_boundary_error
RUNTIME_ERROR_EXIT_CODE = 4             # an ELF's exit code after baco_runtime_error


def intrinsic_name(command: str) -> str:
    return INTRINSIC_PREFIX + command


def source_site(loc) -> int:
    """A command's `site` operand: (line << 32) | col of the first file:line:col in its
    location, 0 when it has none (IR text without locations: "-" is the text itself)."""
    m = re.search(r'"([^"]+)":(\d+):(\d+)', str(loc))
    return (int(m.group(2)) << 32) | int(m.group(3)) if m and m.group(1) != "-" else 0


def site_line_col(site: int) -> tuple[int, int] | None:
    """(line, col) of a `site` operand, None for 0."""
    return (site >> 32, site & 0xFFFFFFFF) if site else None
