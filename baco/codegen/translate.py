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


def fold_grid_queries(module, grid) -> int:
    """Replace the grid queries of an LLVM-dialect module compiled for `grid` (three axes) by
    constants: `baco_program_id(axis)` of an axis of size 1 is 0, `baco_num_programs(axis)` the
    axis's size (the passes' own queries: config elimination's first-program test, the loop-ws
    pass's one-row grid and resident-operand tests; the frontend folds the kernel's). Returns
    how many it replaced."""
    from mlir.ir import InsertionPoint, IntegerAttr, IntegerType, Operation, WalkResult

    from baco.gemmini.abi import NUM_PROGRAMS, PROGRAM_ID
    calls = []

    def visit(op):
        if op.name == "llvm.call" and "callee" in op.attributes and \
                str(op.attributes["callee"]) in (f"@{PROGRAM_ID}", f"@{NUM_PROGRAMS}"):
            calls.append(op)
        return WalkResult.ADVANCE
    with module.context:
        module.operation.walk(visit)
        folded = 0
        for op in calls:
            axis_op = op.operands[0].owner
            if getattr(axis_op, "name", None) != "llvm.mlir.constant":
                continue
            axis = IntegerAttr(axis_op.attributes["value"]).value
            size = grid[axis]
            if str(op.attributes["callee"]) == f"@{NUM_PROGRAMS}":
                value = size
            elif size == 1:
                value = 0
            else:
                continue
            i64 = IntegerType.get_signless(64)
            with InsertionPoint(op), op.location:
                const = Operation.create("llvm.mlir.constant", results=[i64],
                                         attributes={"value": IntegerAttr.get(i64, value)})
            op.results[0].replace_all_uses_with(const.result)
            op.erase()
            folded += 1
    return folded
