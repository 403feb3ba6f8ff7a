"""`baco translate`: LLVM-dialect MLIR → LLVM IR text (runs any pipeline
stages the input still needs)."""
from __future__ import annotations

import argparse
import sys

from mlir.dialects import llvm as llvm_dialect

from baco.errors import CompilationError


def to_llvm_ir(module) -> str:
    with module.context:
        return llvm_dialect.translate_module_to_llvmir(module.operation)


def main(argv=None) -> int:
    from baco.passes.cli import add_config_args, config_from_args
    from baco.passes.pipeline import STAGES, run_pipeline
    p = argparse.ArgumentParser(prog="baco translate", description=__doc__)
    p.add_argument("input", help="MLIR file at any stage (BACO dialect … LLVM dialect)")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--from", dest="start", choices=list(STAGES) + ["llvm"], default=None,
                   help="the first stage the input still needs ('llvm': already LLVM dialect); "
                        "default: guessed from the dialects it uses")
    add_config_args(p)
    args = p.parse_args(argv)
    text = open(args.input).read()
    start = args.start or guess_stage(text)
    try:
        if start == "llvm":
            from baco.dialects import parse_module
            module = parse_module(text)
        else:
            module = run_pipeline(text, config=config_from_args(args), dataflow=args.dataflow,
                                  start=start).module
        ir_text = to_llvm_ir(module)
    except CompilationError as e:
        print(e, file=sys.stderr)
        return 1
    if args.output == "-":
        print(ir_text)
    else:
        with open(args.output, "w") as f:
            f.write(ir_text)
    return 0


def guess_stage(text: str) -> str:
    if '"baco.' in text:
        return "baco-to-linalg"
    if '"instgem.' in text:
        return "instgem-to-llvm"
    if "gemmini.space" in text:
        return "linalg-to-instgem"
    if "memref.alloc" in text:
        return "gemmini-placement"
    if "tensor." in text or "bufferization." in text:
        return "bufferize"
    return "llvm"


if __name__ == "__main__":
    sys.exit(main())
