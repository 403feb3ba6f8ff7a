"""LLVM-dialect MLIR → LLVM IR text (`baco translate`, baco.compiler.translate_main, first runs
the pipeline stages its input still needs)."""
from __future__ import annotations

from mlir.dialects import llvm as llvm_dialect

from baco.errors import CompilationError


def to_llvm_ir(module) -> str:
    from mlir.ir import MLIRError
    with module.context:
        try:
            return llvm_dialect.translate_module_to_llvmir(module.operation)
        except MLIRError as e:
            raise CompilationError.from_mlir("translation to LLVM IR failed", e) from None
