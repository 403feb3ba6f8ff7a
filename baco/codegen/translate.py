"""`baco translate`: LLVM-dialect MLIR → LLVM IR text (runs any pipeline
stages the input still needs)."""
from __future__ import annotations

import argparse
import sys

from mlir.dialects import llvm as llvm_dialect

from baco.inputs import input_name, read_text
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


def main(argv=None) -> int:
    from baco.passes.cli import add_config_args, config_from_args
    from baco.passes.pipeline import LLVM, STAGES
    p = argparse.ArgumentParser(prog="baco translate", description=__doc__)
    p.add_argument("input", help="MLIR file at any stage (BACO dialect … LLVM dialect)")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--from", dest="start", choices=list(STAGES) + [LLVM], default=None,
                   help="the first stage the input still needs ('llvm': already LLVM dialect); "
                        "default: guessed from the dialects it uses")
    add_config_args(p)
    args = p.parse_args(argv)
    text = read_text(args.input)
    try:
        module = llvm_module(text, args.start, config_from_args(args), args.dataflow, args.double_buffer)
        ir_text = to_llvm_ir(module)
    except CompilationError as e:
        print(f"baco translate: {e.in_file(input_name(args.input))}", file=sys.stderr)
        return 1
    if args.output == "-":
        print(ir_text)
    else:
        with open(args.output, "w") as f:
            f.write(ir_text)
    return 0


def llvm_module(text: str, start, config, dataflow, double_buffer=False):
    """The LLVM-dialect module for `text`, running the stages it still needs (from `start`,
    default the stage its ops say); input that is not what `start` says is an error."""
    from baco.dialects import parse_module
    from baco.passes.pipeline import LLVM, input_stage, run_pipeline
    from mlir.ir import MLIRError
    if not text.strip():
        raise CompilationError("empty input: expected an MLIR module")
    try:
        module = parse_module(text)
    except MLIRError as e:
        raise CompilationError.from_mlir("invalid input IR", e) from None
    with module.context:
        found = input_stage(module)
    if start is None and found == LLVM:
        return module
    if start != LLVM:
        return run_pipeline(text, config=config, dataflow=dataflow, double_buffer=double_buffer,
                            start=start).module
    if found != LLVM:
        raise CompilationError("--from llvm needs LLVM-dialect input; this IR is "
                               + (f"the input of stage {found!r} (drop --from)" if found else
                                  "not LLVM dialect"))
    return module


if __name__ == "__main__":
    sys.exit(main())
