"""The named compilation pipeline: BACO dialect → … → LLVM dialect, one stage
per module, with `BACO_DUMP_IR=<dir>` writing every stage's IR."""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlir.ir import MLIRError
from mlir.passmanager import PassManager

from baco.dialects import make_context, parse_module
from baco.errors import CompilationError
from baco.options import CompileOptions
from baco.passes import (baco_to_linalg, chain_loop_ws, config_elimination, gemmini_placement,
                         instgem_to_llvm, linalg_to_instgem, loop_conv_ws, loop_ws)

CLEANUP = "builtin.module(canonicalize,cse)"


def _upstream(spec):
    def run(module_op, **_):
        PassManager.parse(spec).run(module_op)
    return run


def _then_cleanup(fn):
    def run(module_op, options):
        fn(module_op, options)
        PassManager.parse(CLEANUP).run(module_op)
    return run


def _bufferize(module_op, options):
    """One-shot bufferization; a loop-carried block it cannot keep in place (the frontend reports a
    kernel's at the statement that replaces it; this covers IR given to `baco opt`) is said in the
    language's terms, at the loop."""
    try:
        PassManager.parse("builtin.module(one-shot-bufferize,canonicalize,cse)").run(module_op)
    except MLIRError as e:
        diags = getattr(e, "error_diagnostics", None) or []
        m = re.search(r"Yield operand #(\d+) is not equivalent", diags[0].message) if diags else None
        if m is None:
            raise
        raise CompilationError.at_location(
            f"bufferize failed: the block this loop carries as its value #{m.group(1)} is replaced inside it "
            f"(a new block each iteration), which the compiler cannot keep in place: accumulate into it "
            f"(acc += dot(a, b)) or make and use the block inside the loop", diags[0].location) from None


# name -> callable(module_op, CompileOptions); the order is the pipeline
STAGES = {
    "baco-to-linalg": _then_cleanup(baco_to_linalg.run),
    "bufferize": _bufferize,
    "gemmini-placement": gemmini_placement.run,
    "chain-loop-ws": chain_loop_ws.run,
    "loop-ws": loop_ws.run,
    "loop-conv-ws": loop_conv_ws.run,
    "linalg-to-instgem": _then_cleanup(linalg_to_instgem.run),
    "config-elimination": config_elimination.run,
    "instgem-to-llvm": instgem_to_llvm.run,
}


LLVM = "llvm"    # the stage after the last pass: LLVM dialect, the input of `baco translate`
# stages that also take the input of other stages (chain-loop-ws, loop-ws, loop-conv-ws and config
# elimination rewrite their input in place; loop-conv-ws's input may hold loop-ws's commands)
SAME_INPUT = {"chain-loop-ws": ("loop-ws",), "loop-conv-ws": ("loop-ws", "linalg-to-instgem"),
              "linalg-to-instgem": ("loop-ws",),
              "instgem-to-llvm": ("config-elimination",)}


def input_stage(module) -> str | None:
    """The stage whose input `module` is, from the ops it holds (LLVM for LLVM dialect only);
    None when nothing in it tells (e.g. an empty function)."""
    from baco.passes.irutil import walk_ops
    ops = walk_ops(module.operation)
    names = {op.name for op in ops}
    if any(n.startswith("baco.") for n in names):
        return "baco-to-linalg"
    allocs = [op for op in ops if op.name == "memref.alloc"]
    placed = any("gemmini.space" in op.attributes for op in allocs)
    if any(n.startswith("instgem.") for n in names):     # loop-ws leaves placed blocks beside its commands
        return "linalg-to-instgem" if placed else "config-elimination"
    if placed:
        return "loop-ws"
    if any(n.startswith(("tensor.", "bufferization.")) for n in names):
        return "bufferize"
    if allocs or any(n.startswith(("linalg.", "memref.")) for n in names):
        return "gemmini-placement"
    if names and all(n.startswith("llvm.") or n == "builtin.module" for n in names):
        return LLVM
    return None


def _check_stages(module, start, until) -> tuple[int, int]:
    names = list(STAGES)
    found = input_stage(module)
    if start is None:
        start = found if found in names else names[0]
        if found == LLVM:
            raise CompilationError("the input is already LLVM dialect: no pass is left to run "
                                   "(translate it with `baco translate`)")
    elif found is not None and found != start and found not in SAME_INPUT.get(start, ()):
        what = "LLVM dialect" if found == LLVM else f"the input of stage {found!r}"
        raise CompilationError(f"this IR is {what}, not the input of stage {start!r}"
                               + ("" if found == LLVM else f" (run from {found!r})"))
    first = names.index(start)
    last = names.index(until) if until else len(names) - 1
    if last < first:
        raise CompilationError(f"stage {until!r} comes before stage {start!r} in the pipeline "
                               f"({' -> '.join(names)})")
    return first, last


@dataclass
class PipelineResult:
    module: object
    context: object
    stage_ir: dict = field(default_factory=dict)      # stage name -> IR text after it
    stage_seconds: dict = field(default_factory=dict)
    dump_dir: str | None = None


def run_pipeline(text: str, options: CompileOptions | None = None, *, until: str | None = None,
                 start: str | None = None, dump_dir: str | None = None, name: str = "kernel") -> PipelineResult:
    """Parse `text` (the input of stage `start`, default the stage its ops say) and run
    the stages up to and including `until`, each with `options` (default CompileOptions.of():
    the default Gemmini, WS, the loop stages as BACO_LOOP_WS says). Input of another stage is
    an error, so a pass never sees IR it was not written for."""
    options = CompileOptions.of() if options is None else options
    names = list(STAGES)
    if not text.strip():
        raise CompilationError("empty input: expected an MLIR module")
    ctx = make_context()
    dump_dir = dump_dir or os.environ.get("BACO_DUMP_IR") or None
    if dump_dir:
        Path(dump_dir).mkdir(parents=True, exist_ok=True)
    try:
        module = parse_module(text, ctx)
    except MLIRError as e:
        raise CompilationError.from_mlir("invalid input IR", e) from None
    with ctx:
        first, last = _check_stages(module, start, until)
    result = PipelineResult(module, ctx, dump_dir=dump_dir)
    if dump_dir:
        (Path(dump_dir) / f"{name}.0-input.mlir").write_text(text)
    with ctx:
        for i in range(first, last + 1):
            stage = names[i]
            t0 = time.perf_counter()
            try:
                STAGES[stage](module.operation, options)
                if not module.operation.verify():
                    raise CompilationError(f"{stage}: output does not verify")
            except MLIRError as e:
                raise CompilationError.from_mlir(f"{stage} failed", e) from None
            except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as e:
                # a pass tripped over IR it does not handle: the user's kernel is what to report
                raise CompilationError(f"{stage} failed (internal {type(e).__name__}: {e}); "
                                       "BACO_DUMP_IR=DIR keeps the IR of every stage") from e
            result.stage_seconds[stage] = time.perf_counter() - t0
            ir_text = str(module)
            result.stage_ir[stage] = ir_text
            if dump_dir:
                (Path(dump_dir) / f"{name}.{i + 1}-{stage}.mlir").write_text(ir_text)
    return result
