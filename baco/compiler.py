"""compile_module: BACO-dialect text → a runnable kernel on a target.

The frontend (`@baco.jit`) calls this with the module it emitted; targets:
`sim` (host JIT + in-process Gemmini model) and `iss` (RISC-V ELF on the
built-in ISS with the same model)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from baco.codegen.translate import to_llvm_ir
from baco.gemmini.config import GemminiConfig
from baco.passes.pipeline import run_pipeline

TARGETS = ("sim", "iss")


def kernel_signature(baco_text: str, name: str) -> list:
    """Parameter kinds of `func.func @name`: memref / index / f32, in order."""
    m = re.search(r"func\.func @" + re.escape(name) + r"\((.*?)\)\s*(?:->|\{|attributes)", baco_text, re.S)
    if not m:
        raise ValueError(f"no function @{name} in the module")
    kinds = []
    for ty in re.findall(r"%[\w.$-]+\s*:\s*([^,]+(?:<[^>]*>)?)", m.group(1)):
        ty = ty.strip()
        kinds.append("memref" if ty.startswith("memref") else "index" if ty == "index" else ty)
    return kinds


def memref_elem(baco_text: str, name: str) -> list:
    m = re.search(r"func\.func @" + re.escape(name) + r"\((.*?)\)\s*(?:->|\{|attributes)", baco_text, re.S)
    return re.findall(r"memref<\?x(\w+)>", m.group(1))


@dataclass
class CompiledKernel:
    name: str
    target: str
    config: GemminiConfig
    dataflow: str
    signature: list
    baco_ir: str
    stage_ir: dict
    llvm_ir: str
    stage_seconds: dict = field(default_factory=dict)
    dump_dir: str | None = None
    _backend: object = None

    @property
    def backend(self):
        if self._backend is None:
            t0 = time.perf_counter()
            if self.target == "sim":
                from baco.codegen.host import HostKernel
                self._backend = HostKernel(self.llvm_ir, self.name, self.signature, self.config)
                self.stage_seconds["llvm-jit"] = time.perf_counter() - t0
            else:
                from baco.codegen.riscv import RiscvKernel
                self._backend = RiscvKernel(self.llvm_ir, self.name, self.signature, self.config)
                self.stage_seconds["riscv-object"] = time.perf_counter() - t0
        return self._backend

    def run(self, grid, args, **kw):
        return self.backend.run(grid, args, **kw)


def compile_module(text: str, name: str, *, target: str = "sim", config: GemminiConfig | None = None,
                   dataflow: str = "WS", dump_dir: str | None = None) -> CompiledKernel:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, not {target!r}")
    config = config or GemminiConfig()
    res = run_pipeline(text, config=config, dataflow=dataflow, dump_dir=dump_dir, name=name)
    t0 = time.perf_counter()
    llvm_ir = to_llvm_ir(res.module)
    res.stage_seconds["translate"] = time.perf_counter() - t0
    if res.dump_dir:
        from pathlib import Path
        (Path(res.dump_dir) / f"{name}.{len(res.stage_ir) + 1}-llvm.ll").write_text(llvm_ir)
    ck = CompiledKernel(name, target, config, dataflow, kernel_signature(text, name), text,
                        res.stage_ir, llvm_ir, dict(res.stage_seconds), res.dump_dir)
    ck.backend   # build the JIT / object now so compile errors surface at compile time
    return ck
