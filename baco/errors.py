"""User-facing errors. Every stage raises these with the user's source location
so a bad kernel is reported at the line that caused it, never as a compiler
traceback."""
from __future__ import annotations

import linecache
import re

from baco.gemmini.isa import GemminiFault


class CompilationError(Exception):
    """A kernel that cannot be compiled. `str()` shows file:line:col, the
    source line and a caret under the column."""

    def __init__(self, message: str, filename: str | None = None,
                 line: int | None = None, col: int | None = None, called_from=()):
        """called_from: the (file, line, col) of each call that inlined the @baco.jit helper the
        error is in, innermost first."""
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.called_from = tuple(called_from)
        super().__init__(self._render())

    @classmethod
    def at_location(cls, message: str, loc) -> "CompilationError":
        """Build from an MLIR Location (or its string form `loc("f":l:c)`; an inlined helper's
        `loc(callsite("helper":l:c at "caller":l:c))` gives the call sites too)."""
        sites = [(f, int(line), int(col)) for f, line, col in re.findall(r'"([^"]+)":(\d+):(\d+)', str(loc))]
        if not sites:
            return cls(message)
        return cls(message, *sites[0], called_from=sites[1:])

    @classmethod
    def from_mlir(cls, what: str, err) -> "CompilationError":
        """One located error from an MLIRError (parse, verify or pass failure): the first
        error diagnostic's message at its location (ops carry the kernel's file:line:col)."""
        diags = getattr(err, "error_diagnostics", None) or []
        if not diags:
            return cls(f"{what}: {' '.join(str(err).split())}")
        return cls.at_location(f"{what}: {diags[0].message}", diags[0].location)

    def in_file(self, path: str) -> "CompilationError":
        """This error with the IR text's own locations ("-", MLIR's name for text parsed from
        a string) naming `path`, the file the text was read from."""
        if self.filename != "-":
            return self
        return CompilationError(self.message, path, self.line, self.col, self.called_from)

    def _render(self) -> str:
        if self.filename is None or self.line is None:
            return self.message
        if self.filename == "-":        # IR text parsed from a string: its own line:col
            return f"line {self.line}, col {self.col} of the IR: error: {self.message}"
        text = located(f"error: {self.message}", self.filename, self.line, self.col)
        for filename, line, col in self.called_from:
            text += "\n" + located("note: in the @baco.jit helper called here", filename, line, col)
        return text


def located(message: str, filename: str, line: int, col: int | None) -> str:
    """`file:line:col: message`, then the source line and a caret under the column (when
    the file can be read)."""
    col = col or 1
    head = f"{filename}:{line}:{col}: {message}"
    src = linecache.getline(filename, line).rstrip("\n")
    if not src:
        return head
    return f"{head}\n{src}\n{' ' * (col - 1)}^"


class KernelFault(GemminiFault):
    """A GemminiFault of a compiled kernel on the host JIT, at the kernel source line whose
    command faulted (file:line:col, the line and a caret, as a CompilationError)."""

    def __init__(self, fault: GemminiFault, filename: str, line: int, col: int):
        super().__init__(fault.message, fault.pc, fault.command, fault.field)
        self.filename, self.line, self.col = filename, line, col
        self.args = (located(str(fault), filename, line, col),)


class KernelRuntimeError(RuntimeError):
    """A launch the generated code stops at run time, at the kernel's line:col (the same
    error under the interpreter, on the host JIT and in an ELF on the ISS)."""

    def __init__(self, message: str, line: int, col: int):
        self.message, self.line, self.col = message, line, col
        super().__init__(f"line {line}, col {col}: {message}")


NEGATIVE_COLUMN_OFFSET = ("boundary_check with a negative column offset: Gemmini cannot shift a "
                          "block's columns inside a scratchpad row (negative row offsets are supported)")

# The other run-time checks the compiler emits (a call of abi.RUNTIME_ERROR(code, line, col) where
# the check fails); the interpreter raises the same messages at the same line:col.
DIVISION_BY_ZERO = 1
ZERO_STEP = 2
POOL_VALID_ROWS = 3
POOLED_NEGATIVE_ROW = 4
RUNTIME_ERRORS = {
    DIVISION_BY_ZERO: "integer division or modulo by zero",
    ZERO_STEP: "range() step is zero",
    POOL_VALID_ROWS: ("max_pool2d() valid_rows (lo, hi) must satisfy 0 <= lo <= 3 - padding rows (config_st's "
                      "2-bit upad) and lo <= hi <= the image's rows"),
    POOLED_NEGATIVE_ROW: ("a pooled block stored with boundary_check at a negative row offset: Gemmini's "
                          "pooled mvout cannot skip pooled rows"),
}
