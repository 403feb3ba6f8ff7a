"""Host backend: llvmlite optimizes and JITs the kernel's LLVM IR; the RoCC
intrinsics call back into the in-process Gemmini functional model, which reads
and writes the caller's arrays through their host addresses."""
from __future__ import annotations

import ctypes
import os
import hashlib
import time
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numpy as np

from baco.errors import NEGATIVE_COLUMN_OFFSET, RUNTIME_ERRORS, KernelFault, KernelRuntimeError
from baco.gemmini.abi import (BOUNDARY_ERROR, FENCE, NUM_PROGRAMS, PROGRAM_ID, RUNTIME_ERROR, intrinsic_name,
                              site_line_col)
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS, GemminiFault
from baco.options import full_grid

MASK64 = (1 << 64) - 1
HOST_SPEED_LEVEL = 2       # the new pass manager's -O level of host code that computes (baco.model.cpu_ops)
# A Gemmini kernel's host code only computes addresses and calls the functional model back once a command, so
# optimizing it buys nothing measurable and cost most of a cold compile's host JIT: the explicit GEMM kernel
# 0.35 -> 0.02 CPU s (new pass manager -O0, code generation at -O0); with an empty disk cache tests/test_gemm.py
# 33.3 -> 24.7 CPU s, tests/test_loop_conv_ws.py 101.6 -> 76.2. A 256^3 GEMM's 11,522 commands run in the same time.
KERNEL_SPEED_LEVEL = 0
KERNEL_CODEGEN_LEVEL = 0
_ROCC = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)
_COUNTER = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)
_VOID = ctypes.CFUNCTYPE(None)
_GRID = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)
_BOUNDARY = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)
_RUNTIME_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)


class HostMemory:
    """The kernel's arrays, by host address. Accesses outside them fault."""

    def __init__(self, arrays):
        self.regions = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in arrays)

    def _check(self, addr, n, what):
        for lo, hi in self.regions:
            if lo <= addr and addr + n <= hi:
                return
        raise GemminiFault(f"DRAM {what} of {n} bytes at {addr:#x} is outside the kernel's arrays",
                           field="dram_addr")

    def read(self, addr, n):
        self._check(addr, n, "read")
        return ctypes.string_at(addr, n)

    def write(self, addr, data):
        self._check(addr, len(data), "write")
        ctypes.memmove(addr, bytes(data), len(data))


class _Runtime:
    """What the JIT-ed intrinsics talk to during one launch (one launch at a time)."""
    model = None
    error = None
    site = 0            # the source site (abi.source_site) of the command that faulted
    pid = (0, 0, 0)
    nprog = (1, 1, 1)
    commands = 0
    loop_sites = {}     # funct of a LOOP_WS register -> the site of its last write


# A fault of a move LOOP_WS issues is located at the loop register naming its DRAM operand
# (baco.passes.loop_ws places each register at its kernel op): A's mvins, B's, D's, C's mvouts.
LOOP_WS_FAULT_REGISTER = {"mvin": COMMANDS["loop_ws_config_addrs_ab"].funct,
                          "mvin2": COMMANDS["loop_ws_config_strides_ab"].funct,
                          "mvin3": COMMANDS["loop_ws_config_strides_dc"].funct,
                          "mvout": COMMANDS["loop_ws_config_addrs_dc"].funct}
LOOP_WS_REGISTERS = set(LOOP_WS_FAULT_REGISTER.values())


def _fault_site(funct, error, site) -> int:
    """The source site a fault of command `funct` (issued at `site`) is reported at."""
    if funct == COMMANDS["loop_ws"].funct and isinstance(error, GemminiFault) and error.command:
        name = error.command.split()[0]      # the faulting command, disassembled
        return _Runtime.loop_sites.get(LOOP_WS_FAULT_REGISTER.get(name), site)
    return site


def _make_callbacks():
    callbacks = {}

    def rocc(funct):
        def call(rs1, rs2, site):
            if _Runtime.error is not None:
                return
            try:
                _Runtime.commands += 1
                if funct in LOOP_WS_REGISTERS:
                    _Runtime.loop_sites[funct] = site
                _Runtime.model.execute(funct, rs1 & MASK64, rs2 & MASK64)
            except Exception as e:   # a fault stops the launch; raised after the call returns
                _Runtime.error, _Runtime.site = e, _fault_site(funct, e, site)
        return call

    for name, cmd in COMMANDS.items():
        if name == "counter":
            def counter(rs1, rs2, site, funct=cmd.funct):
                try:
                    return _Runtime.model.execute(funct, rs1 & MASK64, rs2 & MASK64) & MASK64
                except Exception as e:
                    _Runtime.error, _Runtime.site = e, site
                    return 0
            callbacks[intrinsic_name(name)] = _COUNTER(counter)
        else:   # config sub-commands share funct 0: the sub-type is in rs1
            callbacks[intrinsic_name(name)] = _ROCC(rocc(cmd.funct))

    def fence():
        if _Runtime.error is None:
            try:
                _Runtime.model.fence()
            except Exception as e:
                _Runtime.error = e
    callbacks[FENCE] = _VOID(fence)
    def boundary_error(line, col):
        if _Runtime.error is None:
            _Runtime.error = KernelRuntimeError(NEGATIVE_COLUMN_OFFSET, line, col)
    callbacks[BOUNDARY_ERROR] = _BOUNDARY(boundary_error)

    def runtime_error(code, line, col):     # the kernel goes on with safe values; no command runs
        if _Runtime.error is None:
            _Runtime.error = KernelRuntimeError(RUNTIME_ERRORS[code], line, col)
    callbacks[RUNTIME_ERROR] = _RUNTIME_ERROR(runtime_error)
    callbacks[PROGRAM_ID] = _GRID(lambda axis: _Runtime.pid[axis])
    callbacks[NUM_PROGRAMS] = _GRID(lambda axis: _Runtime.nprog[axis])
    return callbacks


_CALLBACKS = None


def _target_machine(opt: int = 2):
    """A fresh host target machine generating code at -O`opt`: an MCJIT engine takes ownership of
    the one it is given and frees it with itself, so machines are never shared."""
    global _CALLBACKS
    if _CALLBACKS is None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _CALLBACKS = _make_callbacks()
        for name, cb in _CALLBACKS.items():
            llvm.add_symbol(name, ctypes.cast(cb, ctypes.c_void_p).value)
    return llvm.Target.from_default_triple().create_target_machine(opt=opt)


def optimize(ir_text: str, tm, speed_level: int = HOST_SPEED_LEVEL):
    mod = llvm.parse_assembly(ir_text)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def c_arg_types(signature):
    """ctypes argument list for the lowered kernel signature: each memref is
    (allocated ptr, aligned ptr, offset, size, stride), index is i64, f32 float."""
    types = []
    for kind in signature:
        if kind == "memref":
            types += [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
        elif kind == "index":
            types.append(ctypes.c_int64)
        elif kind == "f32":
            types.append(ctypes.c_float)
        else:
            raise TypeError(f"unsupported kernel parameter type {kind}")
    return types


def c_args(signature, args):
    out = []
    for kind, a in zip(signature, args):
        if kind == "memref":
            out += [a.ctypes.data, a.ctypes.data, 0, a.size, 1]
        elif kind == "index":
            out.append(int(a))
        else:
            out.append(float(a))
    return out


def host_object_path(llvm_ir: str, tm, cache_dir: Path) -> Path:
    """Where the host object of `llvm_ir` is kept in the disk cache: the hash of the IR, the
    target machine, the LLVM that compiles it and this file (how it is optimized)."""
    blob = "\n".join([llvm_ir, tm.triple, str(tm.target_data), repr(llvm.llvm_version_info), llvmlite.__version__,
                       hashlib.sha256(Path(__file__).read_bytes()).hexdigest()])
    return cache_dir / "host-obj" / f"{hashlib.sha256(blob.encode()).hexdigest()[:32]}.o"


def jit_engine(llvm_ir: str, tm, cache_dir: Path | None):
    """An MCJIT engine holding the kernel's code, finalized. With a disk cache, an object
    compiled before is loaded as it is (no optimization, no code generation) and a new one
    is kept: many tests and both test workers compile the same kernels."""
    cached = host_object_path(llvm_ir, tm, cache_dir) if cache_dir is not None else None
    obj = None
    if cached is not None:
        try:
            obj = cached.read_bytes()
            os.utime(cached)      # recently used: the cache's pruning keeps it
        except FileNotFoundError:
            pass
    if obj is not None:
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    else:
        engine = llvm.create_mcjit_compiler(optimize(llvm_ir, tm, KERNEL_SPEED_LEVEL), tm)
        if cached is not None:
            from baco.codegen.riscv import publish_to_cache
            engine.set_object_cache(notify_func=lambda _module, obj: publish_to_cache(obj, cached))
    engine.finalize_object()
    return engine


class HostKernel:
    def __init__(self, llvm_ir: str, name: str, signature, config: GemminiConfig, source_file: str | None = None,
                 cache_dir: Path | None = None):
        tm = _target_machine(KERNEL_CODEGEN_LEVEL)
        self.name = name
        self.source_file = source_file      # the kernel's file: a fault is reported at its line
        self.signature = signature
        self.config = config
        self.engine = jit_engine(llvm_ir, tm, cache_dir)
        addr = self.engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"the JIT-compiled code defines no function {name}")
        self.fn = ctypes.CFUNCTYPE(None, *c_arg_types(signature))(addr)
        self.last_run = {}

    def located(self, error: Exception, site: int) -> Exception:
        """A GemminiFault at the kernel source line of the command that raised it."""
        where = site_line_col(site)
        if isinstance(error, GemminiFault) and where and self.source_file:
            return KernelFault(error, self.source_file, *where)
        return error

    def run(self, grid, args, *, model=None, observers=()):
        """Run every program of `grid` on a Gemmini model over the host arrays."""
        from baco.sim.functional import GemminiModel
        arrays = [a for k, a in zip(self.signature, args) if k == "memref"]
        for a in arrays:
            if not (isinstance(a, np.ndarray) and a.flags.c_contiguous):
                raise TypeError("kernel array arguments must be C-contiguous numpy arrays")
        model = model or GemminiModel(self.config, HostMemory(arrays))
        if getattr(model, "config", False) is None:     # a CommandStream expands loops for this Gemmini
            model.config = self.config
        model.observers.extend(observers)
        grid = full_grid(grid)
        _Runtime.model, _Runtime.error, _Runtime.site, _Runtime.nprog, _Runtime.commands = model, None, 0, grid, 0
        _Runtime.loop_sites = {}
        cargs = c_args(self.signature, args)
        t0 = time.perf_counter()
        try:
            for p2 in range(grid[2]):
                for p1 in range(grid[1]):
                    for p0 in range(grid[0]):
                        _Runtime.pid = (p0, p1, p2)
                        self.fn(*cargs)
                        if _Runtime.error is not None:
                            raise self.located(_Runtime.error, _Runtime.site)
        finally:
            _Runtime.model = None
        self.last_run = {"commands": _Runtime.commands, "seconds": time.perf_counter() - t0,
                         "programs": grid[0] * grid[1] * grid[2], "model": model}
        return self.last_run
