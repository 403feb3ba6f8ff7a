"""LLVM-dialect MLIR → LLVM IR text (`baco translate`, baco.compiler.translate_main, first runs
the pipeline stages its input still needs)."""
from __future__ import annotations

from mlir.dialects import llvm as llvm_dialect

from baco.errors import CompilationError


def to_llvm_ir(module) -> str:
    from mlir.ir import MLIRError, WalkResult
    with module.context:
        # an op left unconverted makes the translation fail, and the bindings then crash the
        # process (SIGSEGV) instead of raising: report it at its kernel line instead
        left = []

        def unconverted(op):
            if op.name == "builtin.unrealized_conversion_cast":
                left.append(op)
                return WalkResult.INTERRUPT
            return WalkResult.ADVANCE
        module.operation.walk(unconverted)
        if left:
            raise CompilationError.at_location(
                "translation to LLVM IR failed: a value the lowering left unconverted "
                f"({str(left[0]).strip()[:200]})", left[0].location)
        try:
            return llvm_dialect.translate_module_to_llvmir(module.operation)
        except MLIRError as e:
            raise CompilationError.from_mlir("translation to LLVM IR failed", e) from None
