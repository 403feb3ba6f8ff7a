"""The named compilation pipeline: BACO dialect → … → LLVM dialect, one stage
per module, with `BACO_DUMP_IR=<dir>` writing every stage's IR."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlir.ir import MLIRError
from mlir.passmanager import PassManager

from baco.dialects import make_context, parse_module
from baco.errors import CompilationError
from baco.gemmini.config import GemminiConfig
from baco.passes import (baco_to_linalg, gemmini_placement, instgem_to_llvm,
                         linalg_to_instgem)

CLEANUP = "builtin.module(canonicalize,cse)"


def _upstream(spec):
    def run(module_op, **_):
        PassManager.parse(spec).run(module_op)
    return run


def _then_cleanup(fn):
    def run(module_op, **kw):
        fn(module_op, **kw)
        PassManager.parse(CLEANUP).run(module_op)
    return run


# name -> callable(module_op, config=…, dataflow=…, double_buffer=…); the order is the pipeline
STAGES = {
    "baco-to-linalg": _then_cleanup(baco_to_linalg.run),
    "bufferize": _upstream("builtin.module(one-shot-bufferize,canonicalize,cse)"),
    "gemmini-placement": gemmini_placement.run,
    "linalg-to-instgem": _then_cleanup(linalg_to_instgem.run),
    "instgem-to-llvm": instgem_to_llvm.run,
}


@dataclass
class PipelineResult:
    module: object
    context: object
    stage_ir: dict = field(default_factory=dict)      # stage name -> IR text after it
    stage_seconds: dict = field(default_factory=dict)
    dump_dir: str | None = None


def run_pipeline(text: str, *, config: GemminiConfig | None = None, dataflow: str = "WS",
                 double_buffer: bool = False, until: str | None = None, start: str | None = None,
                 dump_dir: str | None = None, name: str = "kernel") -> PipelineResult:
    """Parse `text` (the input of stage `start`, default the first) and run the
    stages up to and including `until`."""
    config = config or GemminiConfig()
    names = list(STAGES)
    first = names.index(start) if start else 0
    last = names.index(until) if until else len(names) - 1
    ctx = make_context()
    dump_dir = dump_dir or os.environ.get("BACO_DUMP_IR") or None
    if dump_dir:
        Path(dump_dir).mkdir(parents=True, exist_ok=True)
    try:
        module = parse_module(text, ctx)
    except MLIRError as e:
        raise CompilationError(f"invalid input IR: {e}") from None
    result = PipelineResult(module, ctx, dump_dir=dump_dir)
    if dump_dir:
        (Path(dump_dir) / f"{name}.0-input.mlir").write_text(text)
    with ctx:
        for i in range(first, last + 1):
            stage = names[i]
            t0 = time.perf_counter()
            try:
                STAGES[stage](module.operation, config=config, dataflow=dataflow, double_buffer=double_buffer)
                if not module.operation.verify():
                    raise CompilationError(f"{stage}: output does not verify")
            except MLIRError as e:
                raise CompilationError(f"{stage} failed: {e}") from None
            result.stage_seconds[stage] = time.perf_counter() - t0
            ir_text = str(module)
            result.stage_ir[stage] = ir_text
            if dump_dir:
                (Path(dump_dir) / f"{name}.{i + 1}-{stage}.mlir").write_text(ir_text)
    return result
