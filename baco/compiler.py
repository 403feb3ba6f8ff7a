"""compile_module: BACO-dialect text → a runnable kernel on a target.

The frontend (`@baco.jit`) calls this with the module it emitted; targets:
`sim` (host JIT + in-process Gemmini model) and `iss` (RISC-V ELF on the
built-in ISS with the same model)."""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from mlir.ir import MLIRError

from baco.codegen.translate import fold_grid_queries, to_llvm_ir
from baco.dialects import parse_module
from baco.errors import CompilationError
from baco.gemmini.config import MLIR_ELEMENTS, GemminiConfig
from baco.inputs import input_name, read_text
from baco.options import CompileOptions, exact_int, full_grid, launch_grid
from baco.passes.cli import add_config_args, options_from_args
from baco.passes.pipeline import LLVM, STAGES, input_stage, run_pipeline

_PKG = Path(__file__).resolve().parent


@functools.cache
def compiler_fingerprint() -> str:
    """Hash of the compiler's own sources: part of the disk-cache key, so a
    changed pass never serves stale code. Hashed once a process, as this module
    is imported (below, after the passes it runs): a source edited while the
    process runs must not name the code loaded before the edit."""
    h = hashlib.sha256()
    for sub in ("passes", "dialects", "gemmini"):
        for f in sorted((_PKG / sub).glob("*.py")):
            h.update(f.read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


compiler_fingerprint()


def kernel_parameters(baco_text: str, name: str) -> list[tuple[str, str]]:
    """(name, MLIR type) of `func.func @name`'s parameters, in order."""
    m = re.search(r"func\.func @" + re.escape(name) + r"\((.*?)\)\s*(?:->|\{|attributes)", baco_text, re.S)
    if not m:
        raise ValueError(f"no function @{name} in the module")
    return [(p, ty.strip()) for p, ty in re.findall(r"%([\w.$-]+)\s*:\s*([^,]+(?:<[^>]*>)?)", m.group(1))]


def kernel_parameter_types(baco_text: str, name: str) -> list[str]:
    """The MLIR types of `func.func @name`'s parameters, in order."""
    return [ty for _, ty in kernel_parameters(baco_text, name)]


def kernel_signature(baco_text: str, name: str) -> list:
    """Parameter kinds of `func.func @name`: memref / index / f32, in order."""
    return ["memref" if ty.startswith("memref") else "index" if ty == "index" else ty
            for ty in kernel_parameter_types(baco_text, name)]


def kernel_array_elems(baco_text: str, name: str) -> list[str]:
    """The element type (i8 / i32 / f32) of each memref parameter of `func.func @name`, in order."""
    return [re.match(r"memref<\?x(\w+)>", ty).group(1)
            for ty in kernel_parameter_types(baco_text, name) if ty.startswith("memref")]


def kernel_source_file(baco_text: str) -> str | None:
    """The file the kernel was written in (its ops' locations name it)."""
    m = re.search(r'loc\("([^"]+)":\d+:\d+\)', baco_text)
    return m.group(1) if m and m.group(1) != "-" else None


@dataclass
class CompiledKernel:
    name: str
    options: CompileOptions
    signature: list
    baco_ir: str
    stage_ir: dict
    llvm_ir: str
    stage_seconds: dict = field(default_factory=dict)
    dump_dir: str | None = None
    _backend: object = None
    # integer parameters the JIT compiled as constants ({name: value}: with specialize_shapes the
    # launch's integers, else those equal to 1)
    fixed: dict = field(default_factory=dict)
    # the grid's three axes the JIT compiled the code for (program ids and sizes constants), which
    # every launch must run; None: any grid
    grid: tuple | None = None

    @property
    def target(self) -> str:
        return self.options.target

    @property
    def config(self) -> GemminiConfig:
        return self.options.config

    @property
    def dataflow(self) -> str:
        return self.options.dataflow

    @property
    def double_buffer(self) -> bool:
        return self.options.double_buffer

    @property
    def backend(self):
        if self._backend is None:
            t0 = time.perf_counter()
            if self.target == "sim":
                from baco.codegen.host import HostKernel
                self._backend = HostKernel(self.llvm_ir, self.name, self.signature, self.config,
                                           kernel_source_file(self.baco_ir), cache_dir())
                self.stage_seconds["llvm-jit"] = time.perf_counter() - t0
            else:
                from baco.codegen.riscv import RiscvKernel
                self._backend = RiscvKernel(self.llvm_ir, self.name, self.signature, self.config, cache_dir(),
                                            grid=self.grid)
                self.stage_seconds["riscv-elf"] = time.perf_counter() - t0
        return self._backend

    @property
    def array_elems(self) -> list[str]:
        """The element type (i8 / i32 / f32) of each array parameter, in order."""
        return kernel_array_elems(self.baco_ir, self.name)

    def run(self, grid, args, **kw):
        """One launch of `grid` programs over `args` (the kernel's run-time arguments in order:
        arrays of its element types, integers, floats), each checked first."""
        grid = self.check_launch(grid, args)
        info = self.backend.run(grid, args, **kw)
        info["kernel"] = self
        return info

    @functools.cached_property
    def parameters(self) -> list[tuple[str, str]]:
        return kernel_parameters(self.baco_ir, self.name)

    def check_launch(self, grid, args) -> tuple[int, ...]:
        """The grid as integers, after checking `args` against the compiled parameters (a
        TypeError/ValueError naming the argument): their number, each array's element type and
        layout, integers in range and equal to the value a constant was compiled for, real floats."""
        if not isinstance(args, (list, tuple)):
            raise TypeError(f"{self.name}: args must be a list of the kernel's run-time arguments, "
                            f"got {type(args).__name__}")
        names = [p for p, _ in self.parameters]
        if len(args) != len(names):
            raise TypeError(f"{self.name}: the compiled kernel takes {len(names)} run-time arguments {names}, "
                            f"got {len(args)}")
        for (p, ty), a in zip(self.parameters, args):
            what = f"{self.name}: argument `{p}`"
            if ty.startswith("memref"):
                element = MLIR_ELEMENTS[re.match(r"memref<\?x(\w+)>", ty).group(1)].name
                if not isinstance(a, np.ndarray):
                    raise TypeError(f"{what} must be a numpy array of {element}, got {type(a).__name__}")
                if a.dtype != np.dtype(element):
                    raise TypeError(f"{what} was compiled for {element} arrays, got {a.dtype}")
                if not a.flags.c_contiguous:
                    raise TypeError(f"{what} must be C-contiguous")
            elif ty == "index":
                value = exact_int(a, what)
                if p in self.fixed and value != self.fixed[p]:
                    raise ValueError(f"{what} = {value}: the kernel was compiled for {p} = {self.fixed[p]} (a "
                                     "constant in its code); compile it for this value")
            elif isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, float, np.integer, np.floating)):
                raise TypeError(f"{what} must be a float, got {type(a).__name__} {a!r}")
        return self.check_grid(grid)

    def check_grid(self, grid) -> tuple[int, ...]:
        """The grid as integers, refused (ValueError) if the kernel was compiled for another."""
        grid = launch_grid(grid, self.name)
        if self.grid is not None and full_grid(grid) != self.grid:
            raise ValueError(f"{self.name}: grid {grid}: the kernel was compiled for the grid {self.grid} (its "
                             "program ids and sizes constants in its code); compile it for this grid")
        return grid

    def build_elf(self, grid, args, path, expected=None):
        """A bare-metal ELF running this launch; with `expected` ({array index:
        array}) it checks its own result and exits 0 iff bit-exact."""
        from baco.codegen.riscv import RiscvKernel
        grid = self.check_grid(grid)
        backend = self._backend if isinstance(self._backend, RiscvKernel) else \
            RiscvKernel(self.llvm_ir, self.name, self.signature, self.config, grid=self.grid)
        return backend.build_elf(grid, args, path, expected)


def cache_dir() -> Path | None:
    """Disk cache of LLVM IR and of the objects built from it (BACO_CACHE_DIR, default ~/.cache/baco;
    BACO_CACHE_DIR="" disables), kept under BACO_CACHE_MAX_MB (prune_cache)."""
    d = os.environ.get("BACO_CACHE_DIR", str(Path.home() / ".cache" / "baco"))
    return Path(d) if d else None


CACHE_LIMIT_MB = 2048       # BACO_CACHE_MAX_MB's default
PRUNE_INTERVAL_S = 3600     # a process that writes the cache prunes it at most this often
PRUNE_GRACE_S = 3600        # files used this recently are kept: a live process may hold their paths


def cache_limit_bytes() -> int:
    """The disk cache's size limit (BACO_CACHE_MAX_MB, default CACHE_LIMIT_MB)."""
    text = os.environ.get("BACO_CACHE_MAX_MB", str(CACHE_LIMIT_MB))
    try:
        mb = float(text)
    except ValueError:
        raise ValueError(f"BACO_CACHE_MAX_MB must be a number of megabytes, got {text!r}") from None
    if not mb > 0:
        raise ValueError(f"BACO_CACHE_MAX_MB must be positive, got {text!r}")
    return int(mb * 2**20)


def prune_cache(cdir: Path, max_bytes: int, grace_s: float = PRUNE_GRACE_S) -> int:
    """Delete the disk cache's least recently used files (oldest modification time first: an IR
    hit refreshes its file's) until it holds at most max_bytes, keeping files younger than grace_s;
    returns the bytes freed. Safe beside other processes: a file already gone is skipped."""
    files = []
    for root, _, names in os.walk(cdir):
        for n in names:
            path = os.path.join(root, n)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            files.append((st.st_mtime, st.st_size, path))
    total, freed, young = sum(size for _, size, _ in files), 0, time.time() - grace_s
    for mtime, size, path in sorted(files):
        if total - freed <= max_bytes or mtime > young:
            break
        try:
            os.remove(path)
            freed += size
        except FileNotFoundError:
            pass
    return freed


def _prune_now_and_then(cdir: Path) -> None:
    """prune_cache at most every PRUNE_INTERVAL_S (a stamp file's age says when it last ran)."""
    stamp = cdir / ".pruned"
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_INTERVAL_S:
            return
    except FileNotFoundError:
        pass
    stamp.touch()
    prune_cache(cdir, cache_limit_bytes())


def _cache_key(text: str, name: str, options: CompileOptions, grid=None) -> str:
    blob = json.dumps([text, name, options.lowering_key(), compiler_fingerprint()]
                      + ([] if grid is None else [list(grid)]), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def compile_module(text: str, name: str, options: CompileOptions | None = None, *,
                   dump_dir: str | None = None, fixed: dict | None = None, grid: tuple | None = None) -> CompiledKernel:
    """Compile a BACO-dialect module with `options` (default: CompileOptions.of(), the default
    Gemmini, WS, LOOP_WS as BACO_LOOP_WS says): the target, the Gemmini and the schedule choices
    the passes honour (see baco.gemmini.schedule). The options but the target are the disk cache's key
    of the LLVM IR (CompileOptions.lowering_key); the backends cache what they build from it by the IR.
    `fixed`: integer parameters the module's code treats as constants ({name: value}), which
    every launch must pass unchanged; `grid`: the three grid axes the code was generated for
    (KernelCodegen's), which every launch must run: the grid queries the passes add fold too
    (codegen.translate.fold_grid_queries; the grid is then part of the disk cache's key)."""
    options = CompileOptions.of() if options is None else options
    if not isinstance(options, CompileOptions):
        raise TypeError(f"options must be a CompileOptions, got {type(options).__name__} {options!r}")
    dump_dir = dump_dir or os.environ.get("BACO_DUMP_IR") or None
    cdir = cache_dir()
    cached = cdir / f"{_cache_key(text, name, options, grid)}.ll" if cdir else None
    llvm_ir = None
    if cached is not None and not dump_dir:
        t0 = time.perf_counter()
        try:
            llvm_ir = cached.read_text()
            os.utime(cached)      # recently used: the pruning keeps it
        except FileNotFoundError:
            pass
        stage_ir, seconds = {}, {"disk-cache": time.perf_counter() - t0}
    if llvm_ir is None:
        res = run_pipeline(text, options, dump_dir=dump_dir, name=name)
        t0 = time.perf_counter()
        if grid is not None:     # the passes' own grid queries (the frontend folded the kernel's)
            fold_grid_queries(res.module, grid)
        llvm_ir = to_llvm_ir(res.module)
        res.stage_seconds["translate"] = time.perf_counter() - t0
        if res.dump_dir:
            (Path(res.dump_dir) / f"{name}.{len(res.stage_ir) + 1}-llvm.ll").write_text(llvm_ir)
        stage_ir, seconds = res.stage_ir, dict(res.stage_seconds)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(llvm_ir)
            tmp.replace(cached)
            _prune_now_and_then(cdir)
    ck = CompiledKernel(name, options, kernel_signature(text, name), text, stage_ir, llvm_ir, seconds, dump_dir,
                        fixed=dict(fixed or {}), grid=None if grid is None else tuple(grid))
    try:
        ck.backend   # build the JIT / object now so compile errors surface at compile time
    except RuntimeError as e:     # llvmlite, clang/lld: internal, but reported as this kernel's error
        lines = [line for line in str(e).splitlines() if line.strip()]
        raise CompilationError(f"{name}: building the {options.target} backend failed: "
                               + "; ".join(lines[:3])) from None
    return ck


def translate_main(argv=None) -> int:
    """`baco translate`: MLIR at any stage → LLVM IR text (the stages it still needs, then
    codegen.translate)."""
    p = argparse.ArgumentParser(prog="baco translate", description=translate_main.__doc__)
    p.add_argument("input", help="MLIR file at any stage (BACO dialect … LLVM dialect)")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--from", dest="start", choices=list(STAGES) + [LLVM], default=None,
                   help="the first stage the input still needs ('llvm': already LLVM dialect); "
                        "default: guessed from the dialects it uses")
    add_config_args(p)
    args = p.parse_args(argv)
    text = read_text(args.input)
    try:
        module = llvm_module(text, args.start, options_from_args(args))
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


def llvm_module(text: str, start, options: CompileOptions):
    """The LLVM-dialect module for `text`, running the stages it still needs (from `start`,
    default the stage its ops say); input that is not what `start` says is an error."""
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
        return run_pipeline(text, options, start=start).module
    if found != LLVM:
        raise CompilationError("--from llvm needs LLVM-dialect input; this IR is "
                               + (f"the input of stage {found!r} (drop --from)" if found else
                                  "not LLVM dialect"))
    return module
