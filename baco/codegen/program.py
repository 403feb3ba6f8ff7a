"""One bare-metal RISC-V ELF for a whole program: a sequence of Gemmini kernel launches and CPU
calls over named buffers, linked with its weights, input and expected output, self-checking.

A `Program` holds buffers (weights: read-only data linked in; input: data linked in at build
time; output: its own zeroed region, read back after a run; activation: one DRAM arena, at
offsets planned by liveness) and an ordered list of steps: `GemminiLaunch` (a compiled block
kernel, its grid and its runtime arguments, arrays given as buffers) and `CpuCall` (a
baco.model.cpu_ops.CpuKernel: LLVM IR taking one pointer per buffer, inputs first, outputs last).

`build_program_elf` writes main() (each step in order, `rdcycle` around it, a fence where a
later step or the CPU needs Gemmini's results, the per-step and total cycles printed over
HTIF, the output compared with the expected array: exit 0 iff bit-exact), compiles every
distinct kernel once under a symbol of its own (`<name>_<hash of its IR>`: two
specialisations of one kernel no longer collide) and links the lot. `run_program` runs it on
the ISS and reads the output back. The ELF runs unchanged under `baco sim` and Spike."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

from baco.codegen.riscv import (CHECK_VERDICT, check_lines, grid_loop, harness_prelude, incbin_lines, keep_temps,
                                kernel_error, launch_slots, launch_wrapper, link_intrinsics, publish_to_cache,
                                toolchain_fingerprint)
from baco.gemmini.config import NUMPY_ELEMENTS, GemminiConfig

REGIONS = ("weights", "input", "output", "activation")
ALIGN = 64                    # every buffer starts on a cache line
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")    # safe in C strings, symbols' comments and the console
STEP_LINE = re.compile(r"^baco: step (\d+) (\S+): (\d+) cycles$", re.M)
TOTAL_LINE = re.compile(r"^baco: total: (\d+) cycles$", re.M)
STEP_SYMBOL = "baco_step"     # the index of the step running (run_program names it on a fault)
ARENA_SYMBOL = "baco_arena"


class ProgramDoesNotFit(ValueError):
    """The program's image (code, weights, input, expected and output arrays, arena, stack) is
    larger than the RAM it runs in."""


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _check_name(name, what: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"{what} name {name!r} must be letters, digits, '_', '.' or '-'")
    return name


@dataclass(frozen=True, eq=False)
class Buffer:
    """A named array of the program: `region` says where it lives (REGIONS); weights carry
    their data."""
    name: str
    dtype: np.dtype
    shape: tuple
    region: str
    data: np.ndarray | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ctype(self) -> str:
        return NUMPY_ELEMENTS[self.dtype].c

    def slice(self, start: int, size: int) -> "BufferSlice":
        """Elements [start, start + size) of this buffer, as one array argument of a launch
        (e.g. one image of a batch)."""
        if not (isinstance(start, (int, np.integer)) and isinstance(size, (int, np.integer))
                and 0 <= start and 0 < size and start + size <= self.size):
            raise ValueError(f"slice [{start}, {start} + {size}) is not inside buffer {self.name!r} of {self.size} "
                             "elements")
        return BufferSlice(self, int(start), int(size))


@dataclass(frozen=True, eq=False)
class BufferSlice:
    """Consecutive elements of a buffer passed as an array; liveness and fences see the whole buffer."""
    buffer: Buffer
    start: int
    size: int


def _base(a):
    """The buffer an array argument (a Buffer or a BufferSlice) lies in."""
    return a.buffer if isinstance(a, BufferSlice) else a


class StepBuffers:
    """What a step (its `args` and `outputs`) touches: every buffer an argument lies in, once, in
    argument order (`buffers`), and those it only reads (`reads`)."""

    @property
    def buffers(self) -> list:
        return list(dict.fromkeys(_base(a) for a in self.args if isinstance(a, (Buffer, BufferSlice))))

    @property
    def reads(self) -> list:
        return [b for b in self.buffers if b not in self.outputs]


@dataclass(eq=False)
class GemminiLaunch(StepBuffers):
    """A block kernel's launch: `kernel` (a CompiledKernel: name, llvm_ir, signature,
    array_elems, config) over `grid`, `args` in the kernel's runtime order (a Buffer per array
    parameter (or a BufferSlice of one), an int per index, a float per f32), `outputs` the
    buffers it writes."""
    name: str
    kernel: object
    grid: tuple
    args: list
    outputs: tuple


@dataclass(eq=False)
class CpuCall(StepBuffers):
    """A CPU operator (`kernel`: a baco.model.cpu_ops.CpuKernel, one pointer per array) called
    with `args`: its inputs then its outputs (Buffers or BufferSlices); `outputs` the buffers
    it writes."""
    name: str
    kernel: object
    args: tuple
    outputs: tuple


class Program:
    """Buffers and steps of one program, built up in order."""

    def __init__(self, config: GemminiConfig | None = None):
        self.config = config or GemminiConfig()
        self.buffers: dict[str, Buffer] = {}
        self.steps: list = []

    # ---- buffers ------------------------------------------------------------------------
    def buffer(self, name, dtype, shape, region, data=None) -> Buffer:
        _check_name(name, "buffer")
        if name in self.buffers:
            raise ValueError(f"buffer {name!r} is already defined")
        if region not in REGIONS:
            raise ValueError(f"buffer {name!r}: region must be one of {REGIONS}, not {region!r}")
        dtype = np.dtype(dtype)
        if dtype not in NUMPY_ELEMENTS:
            raise TypeError(f"buffer {name!r}: dtype must be int8, int32 or float32, not {dtype}")
        shape = tuple(int(d) for d in shape)
        if any(d <= 0 for d in shape):
            raise ValueError(f"buffer {name!r}: shape {shape} must have positive extents")
        if (data is not None) != (region == "weights"):
            raise ValueError(f"buffer {name!r}: weights carry their data, and only weights do")
        buf = Buffer(name, dtype, shape, region, data)
        clash = next((b.name for b in self.buffers.values() if _symbol(b) == _symbol(buf)), None)
        if clash is not None:
            raise ValueError(f"buffer {name!r} would share the symbol {_symbol(buf)} with {clash!r}")
        self.buffers[name] = buf
        return buf

    def weights(self, name, array) -> Buffer:
        """Read-only data linked into the ELF (a copy of `array`, in its dtype)."""
        array = np.array(array, copy=True, order="C")
        return self.buffer(name, array.dtype, array.shape, "weights", array)

    def input(self, name, dtype, shape) -> Buffer:
        return self.buffer(name, dtype, shape, "input")

    def output(self, name, dtype, shape) -> Buffer:
        return self.buffer(name, dtype, shape, "output")

    def activation(self, name, dtype, shape) -> Buffer:
        return self.buffer(name, dtype, shape, "activation")

    # ---- steps --------------------------------------------------------------------------
    def launch(self, name, kernel, grid, args, outputs, **options) -> GemminiLaunch:
        """Append a Gemmini launch. `kernel` is a CompiledKernel (then `args` are its runtime
        arguments) or a @baco.jit function (then `args` and `options` are what its launch
        takes, buffers in place of arrays, compiled here for the ISS with the program's config)."""
        _check_name(name, "step")
        if hasattr(kernel, "compile_launch"):       # a @baco.jit function
            if "config" in options and options["config"] != self.config:
                raise ValueError(f"step {name!r}: config {options['config']} is not the program's {self.config}")
            # a buffer stands in as an empty array of its dtype: a specialisation depends on dtypes only
            by_array = {}

            def stand_in(a):
                if not isinstance(a, (Buffer, BufferSlice)):
                    return a
                v = np.empty(0, _base(a).dtype)
                by_array[id(v)] = a
                return v
            values = [stand_in(a) for a in args]
            options = {k: stand_in(v) for k, v in options.items()}
            kernel, runtime = kernel.compile_launch(*values, **dict(options, target="iss", config=self.config,
                                                                    grid=self._grid(name, grid)))
            args = [by_array.get(id(v), v) for v in runtime]
        elif options:
            raise TypeError(f"step {name!r}: compile options {sorted(options)} need a @baco.jit kernel, "
                            "not a compiled one")
        step = GemminiLaunch(name, kernel, self._grid(name, grid), list(args), tuple(_base(b) for b in outputs))
        self._check_launch(step)
        return self._append(step)

    def cpu(self, name, kernel, inputs, outputs) -> CpuCall:
        """Append a CPU call of `kernel` (a baco.model.cpu_ops.CpuKernel: name, llvm_ir of
        `void name(ptr, ...)`, arg_shapes, arg_dtypes, n_inputs) on `inputs` then `outputs`."""
        _check_name(name, "step")
        inputs, outputs = tuple(inputs), tuple(outputs)
        if len(inputs) != kernel.n_inputs or len(inputs) + len(outputs) != len(kernel.arg_shapes):
            raise TypeError(f"step {name!r}: {kernel.name} takes {kernel.n_inputs} inputs and "
                            f"{len(kernel.arg_shapes) - kernel.n_inputs} outputs, got {len(inputs)} and "
                            f"{len(outputs)}")
        step = CpuCall(name, kernel, inputs + outputs, tuple(_base(b) for b in outputs))
        for i, (a, shape, dtype) in enumerate(zip(step.args, kernel.arg_shapes, kernel.arg_dtypes)):
            if not isinstance(a, (Buffer, BufferSlice)):
                raise TypeError(f"step {name!r}: argument {i} of {kernel.name} is an array: give a Buffer, "
                                f"not {type(a).__name__}")
            b = _base(a)
            self._own(step, b)
            if b.dtype != dtype or a.size != int(np.prod(shape, dtype=np.int64)):
                what = f"buffer {b.name!r} is {b.dtype} {b.shape}" if a is b else \
                    f"the slice of {b.name!r} is {b.dtype} [{a.start}, {a.start + a.size})"
                raise TypeError(f"step {name!r}: argument {i} of {kernel.name} is {dtype} {shape}; {what}")
        return self._append(step)

    def _append(self, step):
        if any(s.name == step.name for s in self.steps):
            raise ValueError(f"step {step.name!r} is already defined")
        for b in step.outputs:
            if not isinstance(b, Buffer) or b not in step.buffers:
                raise ValueError(f"step {step.name!r}: output {b!r} is not one of its buffer arguments")
            if b.region in ("weights", "input"):
                raise ValueError(f"step {step.name!r} writes {b.name!r}, which is read-only {b.region}")
        self.steps.append(step)
        return step

    @staticmethod
    def _grid(name, grid) -> tuple:
        dims = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        if not 1 <= len(dims) <= 3 or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0
                                          for d in dims):
            raise ValueError(f"step {name!r}: grid must be 1 to 3 non-negative integers, got {grid!r}")
        return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))

    def _own(self, step, buf):
        if not isinstance(buf, Buffer) or self.buffers.get(buf.name) is not buf:
            raise ValueError(f"step {step.name!r}: {buf!r} is not a buffer of this program")

    def _check_launch(self, step: GemminiLaunch):
        k = step.kernel
        try:
            k.check_grid(step.grid)
        except ValueError as e:
            raise ValueError(f"step {step.name!r}: {e}") from None
        if k.config != self.config:
            raise ValueError(f"step {step.name!r}: {k.name} was compiled for {k.config}, the program runs on "
                             f"{self.config}")
        if len(step.args) != len(k.signature):
            raise TypeError(f"step {step.name!r}: {k.name} takes {len(k.signature)} runtime arguments, "
                            f"got {len(step.args)}")
        elems = iter(k.array_elems)
        for i, (kind, a) in enumerate(zip(k.signature, step.args)):
            where = f"step {step.name!r}: argument {i} of {k.name}"
            if kind == "memref":
                want = next(elems)
                if not isinstance(a, (Buffer, BufferSlice)):
                    raise TypeError(f"{where} is an array: give a Buffer, not {type(a).__name__}")
                self._own(step, _base(a))
                if NUMPY_ELEMENTS[_base(a).dtype].mlir != want:
                    raise TypeError(f"{where} is a memref of {want}; buffer {_base(a).name!r} holds {_base(a).dtype}")
            elif kind == "index":
                if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
                    raise TypeError(f"{where} is an integer, got {type(a).__name__} {a!r}")
                if not -(1 << 63) <= int(a) < (1 << 63):
                    raise ValueError(f"{where} = {a} is outside int64")
            elif not isinstance(a, (float, np.floating)):
                raise TypeError(f"{where} is a float32 scalar, got {type(a).__name__} {a!r}")

    # ---- analysis -------------------------------------------------------------------------
    def plan(self) -> "MemoryPlan":
        return plan_memory(self)

    def fences(self, plan: "MemoryPlan | None" = None) -> dict[int, str]:
        return place_fences(self, plan or self.plan())


@dataclass
class MemoryPlan:
    """Where each buffer lives: activations at `offsets` in one arena of `peak_bytes` (a
    buffer's bytes are reused after its last reader); `live` is each activation's
    (first step, last step)."""
    offsets: dict
    live: dict
    peak_bytes: int
    activation_bytes: int        # the sum of all activations (what an arena without reuse holds)
    weight_bytes: int
    input_bytes: int
    output_bytes: int

    def storage(self, buf: Buffer) -> tuple:
        """(space, lo, hi): the bytes `buf` occupies; two buffers overlap only in one space."""
        if buf.region == "activation":
            lo = self.offsets[buf.name]
            return ("arena", lo, lo + buf.nbytes)
        return (buf.name, 0, buf.nbytes)


def plan_memory(program: Program) -> MemoryPlan:
    """Liveness over the steps, then first-fit: each activation (in order of its first step,
    larger first) at the lowest offset that overlaps no activation live at the same time."""
    first, last = {}, {}
    for i, step in enumerate(program.steps):
        for b in step.buffers:
            first.setdefault(b.name, i)
            last[b.name] = i
            if b.region == "activation" and first[b.name] == i and b in step.reads and b not in step.outputs:
                raise ValueError(f"step {step.name!r} reads activation {b.name!r} before any step writes it")
    for b in program.buffers.values():
        if b.name not in first:
            raise ValueError(f"buffer {b.name!r} ({b.region}) is used by no step")
        if b.region == "output" and not any(b in s.outputs for s in program.steps):
            raise ValueError(f"output {b.name!r} is written by no step")
    acts = sorted((b for b in program.buffers.values() if b.region == "activation"),
                  key=lambda b: (first[b.name], -b.nbytes, b.name))
    offsets, placed = {}, []
    for b in acts:
        lo, hi = first[b.name], last[b.name]
        busy = sorted((offsets[o.name], offsets[o.name] + _aligned(o.nbytes)) for o in placed
                      if first[o.name] <= hi and lo <= last[o.name])
        at = 0
        for start, end in busy:
            if at + _aligned(b.nbytes) <= start:
                break
            at = max(at, end)
        offsets[b.name] = at
        placed.append(b)

    def total(region):
        return sum(_aligned(b.nbytes) for b in program.buffers.values() if b.region == region)
    return MemoryPlan(offsets, {b.name: (first[b.name], last[b.name]) for b in acts},
                      max((offsets[b.name] + _aligned(b.nbytes) for b in acts), default=0),
                      total("activation"), total("weights"), total("input"), total("output"))


def place_fences(program: Program, plan: MemoryPlan) -> dict[int, str]:
    """{step index: why}: the steps after which main() fences. Gemmini orders its own DRAM
    accesses only within one queue (a later mvin may overtake an earlier mvout, and the CPU runs
    ahead of both), so every access of a step to bytes a Gemmini step since the last fence
    writes (read after write, write after write) or reads (write after read: the arena reuses
    bytes) waits for it; and the CPU's check of the outputs waits for everything."""
    fences, pending = {}, []        # pending: (step, buffer, writes) of Gemmini since the last fence

    def overlap(a, b):
        sa, sb = plan.storage(a), plan.storage(b)
        return sa[0] == sb[0] and sa[1] < sb[2] and sb[1] < sa[2]
    for i, step in enumerate(program.steps):
        conflicts = []
        for b in step.buffers:
            writes = b in step.outputs
            for earlier, e, e_writes in pending:
                if (writes or e_writes) and overlap(b, e):
                    over = "" if e is b else f" over the bytes of {e.name!r}"
                    conflicts.append(f"{'writes' if writes else 'reads'} {b.name!r}{over}, which {earlier.name!r} "
                                     f"{'writes' if e_writes else 'reads'}")
        if conflicts:
            kind = "Gemmini" if isinstance(step, GemminiLaunch) else "the CPU"
            fences[i - 1] = f"step {step.name!r} ({kind}) " + "; ".join(dict.fromkeys(conflicts))
            pending = []
        if isinstance(step, GemminiLaunch):
            pending += [(step, b, b in step.outputs) for b in step.buffers]
    if pending:
        fences[len(program.steps) - 1] = "the CPU reads the outputs to check them"
    return fences


# ---- kernels: one symbol and one object per distinct function ------------------------------------
def kernel_symbol(name: str, llvm_ir: str) -> str:
    """The symbol a kernel is linked under: its name and a hash of its IR, so two
    specialisations of one kernel get two symbols and two steps of one get one."""
    return f"{name}_{hashlib.sha256(llvm_ir.encode()).hexdigest()[:12]}"


def linkable_ir(llvm_ir: str, name: str, symbol: str, signature=None) -> str:
    """The kernel's module for the RISC-V target with the function renamed to `symbol` and
    everything else it defines made internal (nothing but `symbol` can collide); a Gemmini kernel
    (its `signature` given) called as the runner calls it (launch_wrapper: a pointer to its argument
    slots), a CPU operator with its pointers."""
    ir = link_intrinsics(llvm_ir)
    mod = llvm.parse_assembly(ir if signature is None else launch_wrapper(ir, name, signature))
    for fn in mod.functions:
        if not fn.is_declaration:
            if fn.name == name:
                fn.name = symbol
            else:
                fn.linkage = "internal"
    for g in mod.global_variables:
        if not g.is_declaration:
            g.linkage = "internal"
    mod.verify()
    return str(mod)


def compile_kernel_object(ll: str, symbol: str, workdir: Path, cache_dir: Path | None) -> Path:
    """The RISC-V object of one kernel's linkable IR `ll` (found in `cache_dir`/riscv-obj by the
    hash of the IR and the toolchain when given). Runs clang only, so calls may run in threads."""
    from baco.codegen import toolchain
    cached = None
    if cache_dir is not None:
        key = hashlib.sha256((ll + toolchain_fingerprint()).encode()).hexdigest()[:32]
        cached = Path(cache_dir) / "riscv-obj" / f"{key}.o"
        try:
            os.utime(cached)      # recently used: the cache's pruning keeps it
            return cached
        except FileNotFoundError:     # not built yet, or pruned (unused for an hour)
            pass
    src = workdir / f"{symbol}.ll"
    src.write_text(ll)
    obj = toolchain.compile_object(src, workdir / f"{symbol}.o")
    if cached is not None:
        publish_to_cache(obj, cached)
    return obj


# ---- the ELF ------------------------------------------------------------------------------------
@dataclass
class ProgramBuild:
    """A linked program: the ELF, its memory plan and fences, what run_program needs to read it."""
    elf: Path
    program: Program
    plan: MemoryPlan
    fences: dict
    kernels: dict           # symbol -> names of the steps that call it
    elf_bytes: int
    image_bytes: int        # RAM from 0x80000000 to the end of the stack
    checked: bool           # an expected output is linked in

    def report(self) -> str:
        p = self.plan
        return (f"{len(self.program.steps)} steps, {len(self.kernels)} functions linked; arena peak "
                f"{p.peak_bytes} bytes of {p.activation_bytes} bytes of activations "
                f"({p.peak_bytes / max(p.activation_bytes, 1):.0%}); weights {p.weight_bytes} bytes; "
                f"ELF {self.elf_bytes} bytes, image {self.image_bytes} bytes")


def _by_buffer(program: Program, region: str, arrays, what: str) -> dict:
    """{buffer: array} for `region`'s buffers from `arrays` (one array when there is one buffer,
    else {name: array}); dtypes and shapes must match exactly."""
    bufs = [b for b in program.buffers.values() if b.region == region]
    if arrays is None:
        return {}
    if not isinstance(arrays, dict):
        if len(bufs) != 1:
            raise ValueError(f"{what}: the program has {len(bufs)} {region} buffers; give {{name: array}}")
        arrays = {bufs[0].name: arrays}
    unknown = set(arrays) - {b.name for b in bufs}
    if unknown:
        raise ValueError(f"{what}: {sorted(unknown)} are not {region} buffers of the program")
    out = {}
    for b in bufs:
        if b.name not in arrays:
            raise ValueError(f"{what}: no array for {region} {b.name!r}")
        a = np.asarray(arrays[b.name])
        if a.dtype != b.dtype:
            raise TypeError(f"{what} {b.name!r}: dtype {a.dtype}, the buffer holds {b.dtype}")
        if a.shape != b.shape:
            raise ValueError(f"{what} {b.name!r}: shape {a.shape}, the buffer is {b.shape}")
        out[b] = np.ascontiguousarray(a)
    return out


def _symbol(buf: Buffer) -> str:
    return f"baco_buf_{buf.name.replace('.', '_').replace('-', '_')}"


def main_source(program: Program, plan: MemoryPlan, fences: dict, symbols: dict, expected: dict) -> str:
    """main(): the steps in order, each between two rdcycle reads, the fences, the cycle report and
    the check of the outputs against the expected arrays."""
    n = len(program.steps)
    lines = harness_prelude() + ['#include "util.h"', f"extern int8_t {ARENA_SYMBOL}[];"]
    lines += [f"extern {b.ctype} {_symbol(b)}[];" for b in program.buffers.values() if b.region != "activation"]
    lines += [f"extern {b.ctype} {_symbol(b)}_expected[];" for b in expected]
    declared = set()
    for step in program.steps:
        sym = symbols[id(step.kernel)]
        if sym in declared:
            continue
        declared.add(sym)
        if isinstance(step, GemminiLaunch):
            lines.append(f"void {sym}(const int64_t *args);")
        else:
            lines.append(f"void {sym}({', '.join(['void *'] * len(step.args))});")
    names = ", ".join(f'"{s.name}"' for s in program.steps)
    lines += [f"volatile int64_t {STEP_SYMBOL} = -1;",
              f"uint64_t baco_step_cycles[{n}];",
              f"static const char *const baco_step_names[{n}] = {{{names}}};", "",
              "int main(void) {", "  uint64_t start = rdcycle(), t;"]

    def pointer(a) -> str:
        b = _base(a)
        at = f"({b.ctype} *)({ARENA_SYMBOL} + {plan.offsets[b.name]})" if b.region == "activation" else _symbol(b)
        return f"({at} + {a.start})" if isinstance(a, BufferSlice) else at
    args = []       # each launch's argument slots, constants before main()
    for i, step in enumerate(program.steps):
        sym = symbols[id(step.kernel)]
        lines += ["", f"  /* step {i}: {step.name} */", f"  {STEP_SYMBOL} = {i};", "  t = rdcycle();"]
        if isinstance(step, GemminiLaunch):
            # its arguments as constant slots (launch_slots' layout, as the runner's launch table)
            memrefs = [pointer(a) for kind, a in zip(step.kernel.signature, step.args) if kind == "memref"]
            slots = launch_slots(step.kernel.signature, step.args, (), memrefs)[3:]
            args.append(f"static const int64_t baco_args{i}[] = {{"
                        + ", ".join(f"(int64_t)({v})" if isinstance(v, str) else f"INT64_C({v})" for v in slots)
                        + "};")
            lines += grid_loop([str(g) for g in step.grid], f"{sym}(baco_args{i})")
        else:
            lines.append(f"  {sym}({', '.join(pointer(a) for a in step.args)});")
        if i in fences:
            lines += [f"  /* fence: {fences[i]} */", '  __asm__ volatile("fence" ::: "memory");']
        lines.append(f"  baco_step_cycles[{i}] = rdcycle() - t;")
    at = lines.index("int main(void) {")
    lines[at:at] = args + [""]
    lines += ["  uint64_t total = rdcycle() - start;", f"  {STEP_SYMBOL} = {n};",
              f"  for (int i = 0; i < {n}; i++)",
              '    printf("baco: step %d %s: %lu cycles\\n", i, baco_step_names[i], '
              "(unsigned long)baco_step_cycles[i]);",
              '  printf("baco: total: %lu cycles\\n", (unsigned long)total);']
    if expected:
        lines.append("  long bad = 0;")
        for b in expected:
            lines += check_lines(b.name, b.ctype, _symbol(b), f"{_symbol(b)}_expected", str(b.size))
        lines += CHECK_VERDICT
    else:
        lines += ['  printf("no expected output linked in: not checked\\n");', "  return 0;"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def data_source(workdir: Path, program: Program, plan: MemoryPlan, inputs: dict, expected: dict) -> str:
    """Assembly for the buffers: weights and expected outputs read-only, inputs as data, outputs and
    the arena zeroed (.bss)."""
    out = ['.section .rodata.baco,"aR",@progbits']
    out += incbin_lines(workdir, [(_symbol(b), b.data) for b in program.buffers.values() if b.region == "weights"])
    out += incbin_lines(workdir, [(f"{_symbol(b)}_expected", e) for b, e in expected.items()])
    out += ['.section .data.baco,"awR",@progbits']
    out += incbin_lines(workdir, [(_symbol(b), a) for b, a in inputs.items()])
    out += ['.section .bss.baco,"aw",@nobits']
    for sym, nbytes in [(ARENA_SYMBOL, plan.peak_bytes)] + \
            [(_symbol(b), b.nbytes) for b in program.buffers.values() if b.region == "output"]:
        out += [f".balign {ALIGN}", f".globl {sym}", f"{sym}:", f".zero {max(nbytes, 1)}"]
    return "\n".join(out) + "\n"


def build_program_elf(program: Program, out_elf, *, config: GemminiConfig | None = None, input=None,
                      expected=None, cache_dir: Path | None = None, mem_size: int | None = None) -> ProgramBuild:
    """Link `program` into one self-checking bare-metal ELF at `out_elf`. `input` is the input
    buffer's array (or {name: array}), `expected` the output's (or {name: array}; None: no
    check, exit 0). `config` must be the program's (the ELF records it). Kernel objects are
    cached in `cache_dir` when given. Raises ProgramDoesNotFit when the image exceeds
    `mem_size` bytes (default: the ISS's RAM)."""
    from baco.codegen import toolchain
    from baco.sim.elfinfo import read_symbols
    from baco.sim.iss import DEFAULT_MEM_SIZE, RAM_BASE
    config = config or program.config
    if config != program.config:
        raise ValueError(f"config {config} is not the program's {program.config}")
    if not program.steps:
        raise ValueError("the program has no steps")
    mem_size = mem_size or DEFAULT_MEM_SIZE
    plan = plan_memory(program)
    inputs = _by_buffer(program, "input", input, "input")
    if not inputs and any(b.region == "input" for b in program.buffers.values()):
        raise ValueError("input: the program has input buffers; give their arrays")
    checks = _by_buffer(program, "output", expected, "expected")
    parts = {"weights": plan.weight_bytes, "input": plan.input_bytes, "output": plan.output_bytes,
             "expected": sum(_aligned(e.nbytes) for e in checks.values()), "arena": plan.peak_bytes}
    data_bytes = sum(parts.values())
    if data_bytes > mem_size:
        raise ProgramDoesNotFit(f"the program's data ({data_bytes} bytes: "
                                + ", ".join(f"{k} {v}" for k, v in parts.items())
                                + f") does not fit in {mem_size} bytes of RAM")
    fences = place_fences(program, plan)

    distinct, symbols, kernels = {}, {}, {}
    for step in program.steps:
        sym = kernel_symbol(step.kernel.name, step.kernel.llvm_ir)
        symbols[id(step.kernel)] = sym
        distinct.setdefault(sym, step.kernel)
        kernels.setdefault(sym, []).append(step.name)
    workdir = Path(tempfile.mkdtemp(prefix="baco-program-"))
    try:
        # llvmlite (one LLVM context) in this thread; the clang runs in parallel
        launched = {symbols[id(s.kernel)] for s in program.steps if isinstance(s, GemminiLaunch)}
        linkable = [(linkable_ir(k.llvm_ir, k.name, sym, k.signature if sym in launched else None), sym)
                    for sym, k in distinct.items()]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            objects = list(pool.map(lambda item: compile_kernel_object(*item, workdir, cache_dir), linkable))
        main_c = workdir / "main.c"
        main_c.write_text(main_source(program, plan, fences, symbols, checks))
        data_s = workdir / "data.S"
        data_s.write_text(data_source(workdir, program, plan, inputs, checks))
        out_elf = toolchain.compile_and_link([main_c, data_s], out_elf, config=config, extra_objects=objects)
    finally:
        if not keep_temps():
            shutil.rmtree(workdir, ignore_errors=True)
    image = read_symbols(out_elf)["_end"] - RAM_BASE
    if image > mem_size:
        raise ProgramDoesNotFit(f"the program's image is {image} bytes (data {data_bytes}, the rest code and "
                                f"stack); the RAM holds {mem_size} bytes")
    return ProgramBuild(Path(out_elf), program, plan, fences, kernels, os.path.getsize(out_elf), image, bool(checks))


# ---- running it -------------------------------------------------------------------------------
@dataclass
class ProgramRun:
    exit_code: int
    outputs: dict                 # output buffer name -> array read back from memory
    step_cycles: dict             # step name -> cycles (from the console)
    total_cycles: int
    cpu_cycles: int               # the hart's cycle count at exit
    gemmini_commands: int         # the commands the CPU issued
    model_commands: int           # the commands Gemmini executed (hardware loops unrolled)
    instructions: int
    console: str
    gemmini_cycles: int | None = None     # with the cycle model: Gemmini's busy span

    @property
    def passed(self) -> bool:
        """The ELF's self-check passed (exit 0)."""
        return self.exit_code == 0

    @property
    def output(self) -> np.ndarray:
        if len(self.outputs) != 1:
            raise ValueError(f"the program has {len(self.outputs)} outputs: read .outputs[name]")
        return next(iter(self.outputs.values()))


def run_program(build: ProgramBuild, *, timing=False, max_instructions: int = 2_000_000_000,
                timeout_s: float = 600, stdout=None) -> ProgramRun:
    """Run a built program on the ISS (`timing`: True or a baco.sim.timing.TimingModel attaches
    the cycle model). Gemmini's DMA may touch only the program's buffers. A Gemmini fault raises
    naming the step; a failed self-check does not raise (exit_code 1, `passed` False)."""
    from baco.gemmini.isa import GemminiFault
    from baco.sim.cli import timing_cycles
    from baco.sim.elfinfo import read_symbols
    from baco.sim.iss import run_elf
    program = build.program
    if timing is True:
        from baco.sim.timing import TimingModel
        timing = TimingModel(program.config)
    timing = timing or None
    symbols = read_symbols(build.elf)
    regions = [(symbols[ARENA_SYMBOL], symbols[ARENA_SYMBOL] + build.plan.peak_bytes)]
    regions += [(symbols[_symbol(b)], symbols[_symbol(b)] + b.nbytes) for b in program.buffers.values()
                if b.region != "activation"]
    res = run_elf(build.elf, config=program.config, max_instructions=max_instructions, timeout_s=timeout_s,
                  stdout=stdout, timing=timing, dma_regions=regions)
    step = int.from_bytes(res.read_memory(symbols[STEP_SYMBOL], 8), "little", signed=True)
    where = (f"step {step} ({program.steps[step].name!r}, {program.steps[step].kernel.name})"
             if 0 <= step < len(program.steps) else "outside the steps")
    if res.fault is not None:
        f = res.fault
        raise GemminiFault(f"{where}: {f.message}", f.pc, f.command, f.field) from f
    error = kernel_error(res)
    if error is not None:
        raise error
    if res.exit_code not in (0, 1) or (res.exit_code == 1 and "FAIL:" not in res.console):
        why = res.error or f"exit code {res.exit_code}"
        raise RuntimeError(f"the program stopped in {where}: {why}\n{res.console}")
    outputs = {b.name: np.frombuffer(res.read_memory(symbols[_symbol(b)], b.nbytes), dtype=b.dtype).reshape(b.shape)
               for b in program.buffers.values() if b.region == "output"}
    steps = {m.group(2): int(m.group(3)) for m in STEP_LINE.finditer(res.console)}
    total = TOTAL_LINE.search(res.console)
    if len(steps) != len(program.steps) or total is None:
        raise RuntimeError(f"the program's console lacks its cycle report:\n{res.console}")
    gemmini_cycles = timing_cycles(timing) if timing is not None else None
    executed = sum(n for name, n in res.stats.items() if name != "fence")
    return ProgramRun(res.exit_code, outputs, steps, int(total.group(1)), res.cpu_cycles, res.gemmini_commands,
                      executed, res.instructions, res.console, gemmini_cycles)
