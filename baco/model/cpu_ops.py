"""CPU operators of a whole-model program: what runs on the RISC-V core between Gemmini layers.

Each operator instance (static shapes, constants baked in) is a `CpuKernel`: a `func.func` over
memrefs written with linalg (elementwise and layout ops) or scf loops (pools and row reductions)
and arith/math (plus `llvm.intr.lrint`, `maxnum`, `minnum`), lowered by upstream MLIR passes (`LOWERING`) and
translated to LLVM IR by `baco.codegen.translate.to_llvm_ir` - the same MLIR -> LLVM path as the
Gemmini kernels. The host JIT runs it through llvmlite (`baco.codegen.host`); the RISC-V build
links the same IR.

Calling convention: MLIR's bare-pointer memref convention (`convert-func-to-llvm{use-bare-ptr-
memref-call-conv=1}`): the function `name` takes one plain `ptr` per array, inputs first, output
last, returns void; each array is C-contiguous with `arg_shapes[i]` / `arg_dtypes[i]` (an
elementwise op may view its arrays flat). Tables (LUT, exp, multipliers, gamma/beta) are private
globals of the module, so kernels link side by side.

Arithmetic. Tensors are int8 with a per-tensor scale and zero point 0. Integer sums are int32.
Every float operation is float32 and IEEE round-to-nearest-even, in the order each docstring
states, never fused (no fast-math flags, so LLVM neither contracts a multiply and an add into an
FMA nor reassociates). A constant "float32(e)" is e evaluated in Python (float64) and rounded once
to float32. Requantisation is Gemmini's: `requant(v) = saturate_int8(round_half_even(v))` of a
float32 v: rounding and saturation commute, so the kernel clamps to [-128, 127] and then converts
in the current rounding mode (lrint), which must be round-to-nearest-even as for every float op
here (the reset state of RISC-V's frm and x86's MXCSR). There is no libm on the bare-metal target:
exp comes from a table, sqrt is `math.sqrt` (fsqrt.s on RV64GC).
"""
from __future__ import annotations

import ctypes
import hashlib
import math
import numbers
import os
import shutil
import tempfile
import weakref
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import llvmlite.binding as llvm
import numpy as np

from baco.codegen.host import _target_machine, optimize
from baco.codegen.translate import to_llvm_ir
from baco.errors import CompilationError
from baco.gemmini.config import NUMPY_ELEMENTS
from baco.gemmini.cpu_cost import output_work, pool_work, pooled_extent, taps_inside

LOWERING = ("builtin.module(func.func(convert-linalg-to-loops),lower-affine,arith-expand,convert-scf-to-cf,"
            "expand-strided-metadata,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
            "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
            "reconcile-unrealized-casts,canonicalize,cse)")

NAME = "__KERNEL__"      # the function's name in the text before it is hashed into the real one


def element(dtype) -> str:
    return NUMPY_ELEMENTS[np.dtype(dtype)].mlir


def memref(shape, dtype) -> str:
    return f"memref<{'x'.join(map(str, shape))}x{element(dtype)}>"


def f32_hex(x) -> str:
    """The float32 nearest x as MLIR's exact hexadecimal float literal."""
    return f"0x{int(np.float32(x).view(np.uint32)):08X}"


class CpuKernel:
    """One CPU operator instance: `name` (unique LLVM symbol), `mlir` (the func.func module),
    `llvm_ir` (lowered; one `ptr` per array, inputs first, output last), `arg_names`,
    `arg_shapes`, `arg_dtypes`, `n_inputs`. Calling it runs the host JIT on numpy arrays and
    writes the output in place; `run_iss` runs the same IR as a RISC-V ELF on the ISS."""

    def __init__(self, op: str, args, n_inputs: int, func: "_Func", globals_text: str = ""):
        """`args`: (name, shape, dtype) of each array as callers see it (`func` may view it
        with another shape of the same size)."""
        self.op = op
        self.arg_names = tuple(a[0] for a in args)
        self.arg_shapes = tuple(tuple(int(d) for d in a[1]) for a in args)
        self.arg_dtypes = tuple(np.dtype(a[2]) for a in args)
        self.n_inputs = n_inputs
        text = f"module {{\n{globals_text}{func.text()}}}\n"
        self.name = f"cpu_{op}_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
        self.mlir = text.replace(NAME, self.name)
        self.llvm_ir = lower(self.mlir)
        self.value_checks = []      # callables(arrays) raising ValueError on values the kernel cannot take
        out = self.arg_shapes[-1]
        # the work its cost is counted in (baco.model.cpu_cost): calls, output rows (all dims but the
        # last) and elements; pools add the window taps they read
        self.work = output_work(out)
        self._fn = None
        self._private_dir = None

    def __repr__(self):
        args = ", ".join(f"{n}: {memref(s, d)}" for n, s, d in zip(self.arg_names, self.arg_shapes, self.arg_dtypes))
        return f"CpuKernel({self.name}({args}))"

    def check_arrays(self, arrays) -> None:
        """TypeError/ValueError naming the argument when `arrays` do not match the kernel."""
        if len(arrays) != len(self.arg_shapes):
            raise TypeError(f"{self.name} takes {len(self.arg_shapes)} arrays ({', '.join(self.arg_names)}), "
                            f"got {len(arrays)}")
        for i, (a, name, shape, dtype) in enumerate(zip(arrays, self.arg_names, self.arg_shapes, self.arg_dtypes)):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"argument {name} must be a numpy array, not {type(a).__name__}")
            if a.dtype != dtype:
                raise TypeError(f"argument {name} must be {dtype}, not {a.dtype}")
            if a.shape != shape:
                raise ValueError(f"argument {name} must have shape {shape}, not {a.shape}")
            if not a.flags.c_contiguous:
                raise ValueError(f"argument {name} must be C-contiguous")
            if i >= self.n_inputs and not a.flags.writeable:
                raise ValueError(f"argument {name} (the output) must be writeable")
        out = arrays[-1]
        for name, a in zip(self.arg_names, arrays[:self.n_inputs]):
            if np.may_share_memory(a, out):
                raise ValueError(f"argument {name} overlaps the output {self.arg_names[-1]}")
        for check in self.value_checks:
            check(arrays)

    def __call__(self, *arrays: np.ndarray) -> None:
        self.check_arrays(arrays)
        if self._fn is None:
            tm = _target_machine()
            self._module = optimize(self.llvm_ir, tm)
            self._engine = llvm.create_mcjit_compiler(self._module, tm)
            self._engine.finalize_object()
            addr = self._engine.get_function_address(self.name)
            self._fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(arrays))(addr)
        self._fn(*(a.ctypes.data for a in arrays))

    def run_iss(self, *arrays: np.ndarray, cache_dir: Path | None = None) -> dict:
        """Run the kernel on the RISC-V ISS: a runner ELF (the kernel and a main() calling it on
        arrays at fixed symbols; see runner_elf) gets the inputs written into its memory and the
        output read back into `arrays[-1]`. Returns the ISS's instruction and cycle counts."""
        from baco.sim.elfinfo import read_symbols
        from baco.sim.iss import run_elf
        self.check_arrays(arrays)
        elf = self.runner_elf(cache_dir)
        symbols = read_symbols(elf)
        inputs = {symbols[f"baco_arg{i}"]: a.tobytes() for i, a in enumerate(arrays[:self.n_inputs])}
        res = run_elf(elf, stdout=None, inputs=inputs)
        if res.exit_code != 0:
            raise RuntimeError(f"{self.name} on the ISS failed: {res.error or f'exit code {res.exit_code}'}\n"
                               f"{res.console}")
        out = arrays[-1]
        out[...] = np.frombuffer(res.read_memory(symbols[f"baco_arg{len(arrays) - 1}"], out.nbytes),
                                 dtype=out.dtype).reshape(out.shape)
        return {"instructions": res.instructions, "cpu_cycles": res.cpu_cycles}

    def runner_elf(self, cache_dir: Path | None = None) -> Path:
        """The runner ELF (arrays of zeros at baco_arg<i>, filled in before each run), built once:
        in `cache_dir` (default the project's disk cache, baco.compiler.cache_dir()) by the hash
        of the IR, the toolchain and this file, or, with caching disabled, in a folder removed with the kernel."""
        from baco.codegen.riscv import toolchain_fingerprint
        from baco.compiler import cache_dir as project_cache
        blob = self.llvm_ir + toolchain_fingerprint() + Path(__file__).read_text()   # this file makes main()
        key = hashlib.sha256(blob.encode()).hexdigest()[:32]
        cache_dir = cache_dir or project_cache()
        if cache_dir is None:
            if self._private_dir is None:
                self._private_dir = Path(tempfile.mkdtemp(prefix=f"baco-{self.name}-"))
                weakref.finalize(self, shutil.rmtree, self._private_dir, True)
            cache_dir = self._private_dir
        elf = Path(cache_dir) / "cpu_ops" / f"{self.name}-{key}.elf"
        try:
            os.utime(elf)         # recently used: the cache's pruning keeps it
        except FileNotFoundError:     # not built yet, or pruned (unused for an hour)
            elf.parent.mkdir(parents=True, exist_ok=True)
            tmp = elf.with_suffix(f".{os.getpid()}.tmp")
            self.build_elf([np.zeros(s, d) for s, d in zip(self.arg_shapes, self.arg_dtypes)], tmp)
            tmp.replace(elf)
        return elf

    def build_elf(self, arrays, out_elf, expected: np.ndarray | None = None) -> Path:
        """A bare-metal ELF whose main() calls the kernel on `arrays` (inputs then output, linked
        in as data at baco_arg<i>); with `expected`, it compares the output with it and exits 0
        iff bit-exact (printing the first mismatches and PASS/FAIL over HTIF), for the ISS,
        Spike or hardware."""
        from baco.codegen import toolchain
        from baco.codegen.riscv import data_source
        self.check_arrays(arrays)
        n, out = len(arrays), len(arrays) - 1
        lines = ["#include <stdio.h>", "#include <stdint.h>"]
        lines += [f"extern int8_t baco_arg{i}[];" for i in range(n)]
        lines += [f"void {self.name}({', '.join(['void *'] * n)});", "int main(void) {",
                  f"  {self.name}({', '.join(f'baco_arg{i}' for i in range(n))});"]
        if expected is not None:
            expected = np.asarray(expected)
            if expected.dtype != self.arg_dtypes[-1] or expected.shape != self.arg_shapes[-1]:
                raise ValueError(f"expected must be {self.arg_dtypes[-1]} of shape {self.arg_shapes[-1]}, "
                                 f"not {expected.dtype} of shape {expected.shape}")
            lines[2:2] = [f"extern int8_t baco_expected{out}[];"]
            lines += ["  long bad = 0;",
                      f"  for (long e = 0; e < {arrays[-1].nbytes}; e++)",
                      f"    if (baco_arg{out}[e] != baco_expected{out}[e]) {{",
                      f'      if (bad < 8) printf("mismatch at byte %ld: got %d expected %d\\n", e, '
                      f"baco_arg{out}[e], baco_expected{out}[e]);",
                      "      bad++;", "    }",
                      '  if (bad) printf("FAIL: %ld bytes differ\\n", bad); else printf("PASS\\n");',
                      "  return bad != 0;"]
        else:
            lines.append("  return 0;")
        work = Path(tempfile.mkdtemp(prefix=f"baco-{self.name}-"))
        try:
            (work / "kernel.ll").write_text(self.llvm_ir)      # no triple: clang's target applies
            (work / "main.c").write_text("\n".join(lines + ["}"]) + "\n")
            (work / "data.S").write_text(data_source(work, [], arrays,
                                                     None if expected is None else {out: expected}))
            built = toolchain.compile_and_link([work / "main.c", work / "data.S", work / "kernel.ll"],
                                               work / "kernel.elf")
            shutil.copyfile(built, out_elf)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return Path(out_elf)


def lower(mlir_text: str) -> str:
    """The func.func module text -> LLVM IR through LOWERING."""
    from mlir.ir import Context, MLIRError, Module
    from mlir.passmanager import PassManager
    with Context():
        try:
            module = Module.parse(mlir_text)
            PassManager.parse(LOWERING).run(module.operation)
        except MLIRError as e:
            raise CompilationError.from_mlir("lowering a CPU operator failed", e) from None
        return to_llvm_ir(module)


def dense_global(tag: str, values: np.ndarray) -> tuple[str, str]:
    """(symbol, text) of a private constant global holding `values` bit for bit."""
    sym = f"@{NAME}_{tag}"
    values = np.ascontiguousarray(values)
    data = values.tobytes().hex().upper()
    return sym, f'  memref.global "private" constant {sym} : {memref(values.shape, values.dtype)} = dense<"0x{data}">\n'


class _Func:
    """The text of one func.func: fresh SSA names, constants and globals hoisted to the entry
    block (visible in every nested region), scf.for loops with carried values."""

    def __init__(self, args):
        self.args = args                     # [(name, shape, dtype)]
        self.prologue, self.lines, self.consts = [], [], {}
        self.depth, self.count = 2, 0

    def arg(self, i) -> str:
        return f"%{self.args[i][0]}"

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def __call__(self, rhs: str) -> str:
        v = self.fresh()
        self.line(f"{v} = {rhs}")
        return v

    def const(self, value: str, ty: str) -> str:
        if (value, ty) not in self.consts:
            name = (f"%cst{len(self.consts)}" if ty == "f32" else f"%c{value.replace('-', 'm')}_{ty}")
            self.consts[(value, ty)] = name
            self.prologue.append(f"    {name} = arith.constant {value} : {ty}")
        return self.consts[(value, ty)]

    def index(self, k: int) -> str:
        return self.const(str(int(k)), "index")

    def f32(self, x) -> str:
        return self.const(f32_hex(x), "f32")

    def get_global(self, sym: str, ty: str) -> str:
        v = self.fresh()
        self.prologue.append(f"    {v} = memref.get_global {sym} : {ty}")
        return v

    @contextmanager
    def loop(self, lo, hi, carried=()):
        """scf.for iv in [lo, hi) (index values or ints); `carried` [(init, type)]. The body sets
        `loop.next` to the carried values' next values; `loop.results` are the final ones."""
        loop = SimpleNamespace()
        lo = self.index(lo) if isinstance(lo, int) else lo
        hi = self.index(hi) if isinstance(hi, int) else hi
        loop.iv, loop.args = self.fresh(), [self.fresh() for _ in carried]
        loop.results = [self.fresh() for _ in carried]
        types = ", ".join(t for _, t in carried)
        head = f"scf.for {loop.iv} = {lo} to {hi} step {self.index(1)}"
        if carried:
            head = (f"{', '.join(loop.results)} = {head} iter_args("
                    + ", ".join(f"{a} = {init}" for a, (init, _) in zip(loop.args, carried)) + f") -> ({types})")
        self.line(head + " {")
        self.depth += 1
        yield loop
        if carried:
            self.line(f"scf.yield {', '.join(loop.next)} : {types}")
        self.depth -= 1
        self.line("}")

    @contextmanager
    def loop_grouped(self, n: int, carried=()):
        """loop(0, n, carried) (the same iv, args, next, results), run as an outer loop over groups
        of UNROLL and an inner one of UNROLL iterations (which LLVM unrolls) when UNROLL divides n;
        the iterations in the same order, so a carried float sum adds in the same order."""
        if n % UNROLL:
            with self.loop(0, n, carried) as plain:
                yield plain
            return
        with self.loop(0, n // UNROLL, carried) as outer:
            with self.loop(0, UNROLL, [(a, t) for a, (_, t) in zip(outer.args, carried)]) as inner:
                first = self(f"arith.muli {outer.iv}, {self.index(UNROLL)} : index")
                body = SimpleNamespace(iv=self(f"arith.addi {first}, {inner.iv} : index"), args=inner.args,
                                       results=outer.results)
                yield body
                if carried:
                    inner.next = body.next
            if carried:
                outer.next = inner.results

    def requant(self, v: str) -> str:
        """saturate_int8(round_half_even(v)) of a float32 v, as an i8: clamped to [-128, 127], then
        converted in the current rounding mode (lrint: one fcvt.l.s on RISC-V), which is round-
        to-nearest-even as for every other float op of the kernel."""
        r = self.min(self.max(v, self.f32(-128.0)), self.f32(127.0))
        return self(f"arith.trunci {self(f'llvm.intr.lrint({r}) : (f32) -> i64')} : i64 to i8")

    def max(self, a: str, b: str) -> str:
        """The larger of float32 a and b, neither a NaN (the kernels' values are finite): LLVM's
        maxnum, one fmax.s on RISC-V (arith.maxnumf, which arith-expand spells with NaN tests,
        compiled to two compares and branches)."""
        return self(f"llvm.intr.maxnum({a}, {b}) : (f32, f32) -> f32")

    def min(self, a: str, b: str) -> str:
        """The smaller of float32 a and b, neither a NaN: LLVM's minnum, one fmin.s (as max)."""
        return self(f"llvm.intr.minnum({a}, {b}) : (f32, f32) -> f32")

    def text(self) -> str:
        params = ", ".join(f"%{n}: {memref(s, d)}" for n, s, d in self.args)
        return (f"  func.func @{NAME}({params}) {{\n" + "\n".join(self.prologue + self.lines)
                + "\n    return\n  }\n")


def _elementwise(f: _Func, inputs, out, body, extra_maps=None) -> None:
    """A linalg.generic over the output's index space: `body(f, block_args)` returns the
    output element; `extra_maps` gives each input's indexing map (default identity)."""
    rank = len(f.args[out][1])
    dims = ", ".join(f"d{i}" for i in range(rank))
    ident = f"affine_map<({dims}) -> ({dims})>"
    maps = [(extra_maps or {}).get(i, ident) for i in inputs] + [ident]
    types = [f"{memref(f.args[i][1], f.args[i][2])}" for i in inputs]
    ins = ", ".join(f.arg(i) for i in inputs)
    iterators = ", ".join(['"parallel"'] * rank)
    f.line(f"linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = "
           f"[{iterators}]}} ins({ins} : {', '.join(types)}) "
           f"outs({f.arg(out)} : {memref(f.args[out][1], f.args[out][2])}) {{")
    block = [f.fresh() for _ in inputs + [out]]
    f.line("^bb0(" + ", ".join(f"{b}: {element(f.args[i][2])}" for b, i in zip(block, inputs + [out])) + "):")
    f.depth += 1
    result = body(f, block)
    f.line(f"linalg.yield {result} : {element(f.args[out][2])}")
    f.depth -= 1
    f.line("}")


# ---------------------------------------------------------------- argument checks

def _shape(shape, rank=None, what="shape") -> tuple[int, ...]:
    if not isinstance(shape, (tuple, list)) or not all(isinstance(d, numbers.Integral) for d in shape):
        raise TypeError(f"{what} must be a tuple of ints, not {shape!r}")
    if rank is not None and len(shape) != rank:
        raise ValueError(f"{what} must have {rank} dimensions, not {len(shape)} ({tuple(shape)})")
    if len(shape) == 0 or any(d < 1 for d in shape):
        raise ValueError(f"{what} must have at least one dimension and every dimension >= 1, not {tuple(shape)}")
    return tuple(int(d) for d in shape)


def _scale(x, what) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{what} must be a float, not {type(x).__name__}")
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{what} must be a positive finite float, not {x!r}")
    return float(x)


def _pair(x, what, minimum) -> tuple[int, int]:
    pair = (x, x) if isinstance(x, numbers.Integral) else x
    if (not isinstance(pair, (tuple, list)) or len(pair) != 2
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in pair)):
        raise TypeError(f"{what} must be an int or a pair of ints, not {x!r}")
    if any(v < minimum for v in pair):
        raise ValueError(f"{what} must be >= {minimum}, not {x!r}")
    return int(pair[0]), int(pair[1])


def _dtype(dtype, what="dtype") -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what} must be int8, int32 or float32, not {dtype!r}") from None
    if dt not in NUMPY_ELEMENTS:
        raise TypeError(f"{what} must be int8, int32 or float32, not {dt}")
    return dt


# ---------------------------------------------------------------- pooling

def _pool_geometry(shape, kernel_size, stride, padding, dilation, ceil_mode):
    n, h, w, c = _shape(shape, 4, "shape (N, H, W, C)")
    kernel = _pair(kernel_size, "kernel_size", 1)
    stride = kernel if stride is None else _pair(stride, "stride", 1)
    padding = _pair(padding, "padding", 0)
    dilation = _pair(dilation, "dilation", 1)
    if not isinstance(ceil_mode, bool):
        raise TypeError(f"ceil_mode must be a bool, not {type(ceil_mode).__name__}")
    for axis, k, p in zip("hw", kernel, padding):
        if p > k // 2:
            raise ValueError(f"padding {p} along {axis} must be at most half the kernel size {k} (torch's rule)")
    out = tuple(pooled_extent(*a, ceil_mode) for a in zip((h, w), kernel, stride, padding, dilation))
    if min(out) < 1 or not all(min(taps_inside(*a)) > 0 for a in zip((h, w), kernel, stride, padding, dilation, out)):
        raise ValueError(f"a {kernel} window (stride {stride}, padding {padding}, dilation {dilation}) "
                         f"does not fit a {h}x{w} image")
    return (n, h, w, c), kernel, stride, padding, dilation, out


def _window_taps(f: _Func, o: str, size: int, kernel: int, stride: int, padding: int, dilation: int):
    """(base, lo, hi) of output position `o` along one axis: taps i in [lo, hi) read input
    position base + i*dilation, the taps that lie inside [0, size)."""
    base = f(f"arith.subi {f(f'arith.muli {o}, {f.index(stride)} : index')}, {f.index(padding)} : index")
    neg = f(f"arith.subi {f.index(0)}, {base} : index")
    lo = f(f"arith.ceildivsi {f(f'arith.maxsi {neg}, {f.index(0)} : index')}, {f.index(dilation)} : index")
    room = f(f"arith.subi {f.index(size)}, {base} : index")
    hi = f(f"arith.minsi {f(f'arith.ceildivsi {room}, {f.index(dilation)} : index')}, {f.index(kernel)} : index")
    return base, lo, hi


def _window_reduce(f, n, oh_taps, ow_taps, dil, c, init, ty, combine):
    """Reduce x[n, base_h + i*dh, base_w + j*dw, c] over the window's taps with `combine`."""
    (bh, loh, hih), (bw, low, hiw) = oh_taps, ow_taps
    with f.loop(loh, hih, [(init, ty)]) as li:
        h = f(f"arith.addi {bh}, {f(f'arith.muli {li.iv}, {f.index(dil[0])} : index')} : index")
        with f.loop(low, hiw, [(li.args[0], ty)]) as lj:
            w = f(f"arith.addi {bw}, {f(f'arith.muli {lj.iv}, {f.index(dil[1])} : index')} : index")
            x = f(f"memref.load {f.arg(0)}[{n}, {h}, {w}, {c}] : {memref(*f.args[0][1:])}")
            lj.next = [combine(f, lj.args[0], x)]
        li.next = lj.results
    return li.results[0]


def _int32_sum(f, acc, x):
    return f(f"arith.addi {acc}, {f(f'arith.extsi {x} : i8 to i32')} : i32")


def avg_pool2d(shape, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, *,
               in_scale, out_scale) -> CpuKernel:
    """torch.nn.functional.avg_pool2d on int8 NHWC x (torch's defaults: count_include_pad=True,
    ceil_mode=False).

    For output (n, oh, ow, c) with window start hs = oh*stride_h - pad_h, ws = ow*stride_w - pad_w:
    s = the int32 sum of x[n, h, w, c] over hs <= h < hs + kh, ws <= w < ws + kw inside the
    image (padding adds zeros); count = (min(hs + kh, H + pad_h) - hs) * (min(ws + kw, W + pad_w)
    - ws) with count_include_pad (kh*kw unless a ceil_mode window overhangs), else the number of
    positions inside the image (torch's divisors); m = float32(in_scale / (out_scale * count));
    out = requant(float32(s) * m)."""
    (n, h, w, c), kernel, stride, padding, _, out = _pool_geometry(shape, kernel_size, stride, padding, 1,
                                                                   ceil_mode)
    if not isinstance(count_include_pad, bool):
        raise TypeError(f"count_include_pad must be a bool, not {type(count_include_pad).__name__}")

    def counts(size, k, st, p, o):
        if count_include_pad:
            return [min(i * st - p + k, size + p) - (i * st - p) for i in range(o)]
        return taps_inside(size, k, st, p, 1, o)
    count = np.outer(*(counts(*a) for a in zip((h, w), kernel, stride, padding, out)))
    kernel_ = _avg_pool("avg_pool2d", (n, h, w, c), out, count, in_scale, out_scale,
                        lambda f, o, axis: _window_taps(f, o, (h, w)[axis], kernel[axis], stride[axis],
                                                        padding[axis], 1))
    kernel_.work.update(pool_work((n, h, w, c), kernel, stride, padding, (1, 1), out))
    return kernel_


def adaptive_window(i: int, size: int, out: int) -> tuple[int, int]:
    """torch's adaptive pooling window [start, end) of output i: floor(i*size/out), ceil((i+1)*size/out)."""
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_avg_pool2d(shape, output_size, *, in_scale, out_scale) -> CpuKernel:
    """torch.nn.functional.adaptive_avg_pool2d on int8 NHWC x.

    Output (n, oh, ow, c) averages rows [hs, he) = [floor(oh*H/OH), ceil((oh+1)*H/OH)) and
    columns [ws, we) likewise: s = int32 sum of x over the window; count = (he - hs) * (we - ws);
    m = float32(in_scale / (out_scale * count)); out = requant(float32(s) * m)."""
    n, h, w, c = _shape(shape, 4, "shape (N, H, W, C)")
    out = _pair(output_size, "output_size", 1)
    count = np.outer(*([e - s for s, e in (adaptive_window(i, size, o) for i in range(o))]
                       for size, o in zip((h, w), out)))

    def taps(f, o, axis):
        size, k = (h, w)[axis], out[axis]
        start = f(f"arith.floordivsi {f(f'arith.muli {o}, {f.index(size)} : index')}, {f.index(k)} : index")
        nxt = f(f"arith.addi {o}, {f.index(1)} : index")
        end = f(f"arith.ceildivsi {f(f'arith.muli {nxt}, {f.index(size)} : index')}, {f.index(k)} : index")
        return start, f.index(0), f(f"arith.subi {end}, {start} : index")
    kernel = _avg_pool("adaptive_avg_pool2d", (n, h, w, c), out, count, in_scale, out_scale, taps)
    heights = [e - s for s, e in (adaptive_window(i, h, out[0]) for i in range(out[0]))]
    kernel.work.update(taps=n * c * int(count.sum()), window_rows=n * c * sum(heights) * out[1])
    # one window (a global pool) has constant bounds; several have theirs computed per output
    several = out != (1, 1)
    kernel.work.update(clipped_taps=kernel.work["taps"] * several,
                       clipped_window_rows=kernel.work["window_rows"] * several)
    return kernel


def _avg_pool(op, shape, out_hw, count, in_scale, out_scale, taps) -> CpuKernel:
    """Average pooling: int32 window sums times float32(in_scale / (out_scale * count)), a
    constant when every window has the same `count` (an OHxOW int array), else a table."""
    n, h, w, c = shape
    s_in, s_out = _scale(in_scale, "in_scale"), _scale(out_scale, "out_scale")
    mults = (s_in / (s_out * count.astype(np.float64))).astype(np.float32)
    args = [("x", shape, np.int8), ("out", (n, *out_hw, c), np.int8)]
    sym, globals_text = dense_global("mult", mults) if np.unique(mults).size > 1 else (None, "")
    f = _Func(args)
    with f.loop(0, n) as ln, f.loop(0, out_hw[0]) as lh:
        th = taps(f, lh.iv, 0)
        with f.loop(0, out_hw[1]) as lw:
            tw = taps(f, lw.iv, 1)
            if sym is None:
                m = f.f32(mults[0, 0])
            else:
                table = f.get_global(sym, memref(mults.shape, np.float32))
                m = f(f"memref.load {table}[{lh.iv}, {lw.iv}] : {memref(mults.shape, np.float32)}")
            with f.loop(0, c) as lc:
                s = _window_reduce(f, ln.iv, th, tw, (1, 1), lc.iv, f.const("0", "i32"), "i32", _int32_sum)
                v = f(f"arith.mulf {f(f'arith.sitofp {s} : i32 to f32')}, {m} : f32")
                f.line(f"memref.store {f.requant(v)}, {f.arg(1)}[{ln.iv}, {lh.iv}, {lw.iv}, {lc.iv}] : "
                       f"{memref(*args[1][1:])}")
    return CpuKernel(op, args, 1, f, globals_text)


def max_pool2d(shape, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False) -> CpuKernel:
    """torch.nn.functional.max_pool2d on int8 NHWC x; the output keeps x's scale.

    out[n, oh, ow, c] = max of x[n, h, w, c] over the window's taps h = oh*stride_h - pad_h +
    i*dil_h (i < kh), w = ow*stride_w - pad_w + j*dil_w (j < kw) that lie inside the image
    (padding is -inf, as torch's; every window holds at least one tap)."""
    (n, h, w, c), kernel, stride, padding, dilation, (oh, ow) = _pool_geometry(shape, kernel_size, stride,
                                                                               padding, dilation, ceil_mode)
    args = [("x", (n, h, w, c), np.int8), ("out", (n, oh, ow, c), np.int8)]
    f = _Func(args)
    with f.loop(0, n) as ln, f.loop(0, oh) as lh:
        th = _window_taps(f, lh.iv, h, kernel[0], stride[0], padding[0], dilation[0])
        with f.loop(0, ow) as lw:
            tw = _window_taps(f, lw.iv, w, kernel[1], stride[1], padding[1], dilation[1])
            with f.loop(0, c) as lc:
                # in i32, as RV64 keeps it sign-extended in a register (an i8 would be re-extended per tap)
                m = _window_reduce(f, ln.iv, th, tw, dilation, lc.iv, f.const("-128", "i32"), "i32",
                                   lambda f, acc, x: f(f"arith.maxsi {acc}, {f(f'arith.extsi {x} : i8 to i32')} : i32"))
                m = f(f"arith.trunci {m} : i32 to i8")
                f.line(f"memref.store {m}, {f.arg(1)}[{ln.iv}, {lh.iv}, {lw.iv}, {lc.iv}] : {memref(*args[1][1:])}")
    kernel_ = CpuKernel("max_pool2d", args, 1, f)
    kernel_.work.update(pool_work((n, h, w, c), kernel, stride, padding, dilation, (oh, ow)))
    return kernel_


# ---------------------------------------------------------------- elementwise

# a flat elementwise kernel's elements per inner loop when their count is a multiple of it (the
# SE multiply's channels, a softmax's or layernorm's row: loop_grouped): the inner loop's constant
# trip count is unrolled by LLVM, its loop overhead (three instructions an element) paid once per
# group (a LUT: 7.0 -> 4.4 instructions an element on the ISS)
UNROLL = 8


def _flat_kernel(op, args, n_inputs, body, globals_text="") -> CpuKernel:
    """An elementwise kernel whose MLIR views every array flat (all of one size), as (n / UNROLL,
    UNROLL) when UNROLL divides its n elements."""
    n = int(np.prod(args[0][1]))
    flat = (n // UNROLL, UNROLL) if n % UNROLL == 0 else (n,)
    f = _Func([(name, flat, dtype) for name, _, dtype in args])
    _elementwise(f, list(range(n_inputs)), n_inputs, body)
    return _unrolled(CpuKernel(op, args, n_inputs, f, globals_text), n)


def _unrolled(kernel: CpuKernel, inner: int) -> CpuKernel:
    """`kernel`, whose inner loop runs `inner` iterations, with its work's ragged_outputs: its
    outputs where UNROLL does not divide `inner` (the loop is not in groups: each element pays the
    loop's overhead), else 0."""
    kernel.work["ragged_outputs"] = kernel.work["outputs"] if inner % UNROLL else 0
    return kernel


ACTIVATIONS = {
    "hardswish": lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
    "hardsigmoid": lambda x: np.clip(x + 3.0, 0.0, 6.0) / 6.0,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "gelu": lambda x: 0.5 * x * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x])),
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
    "tanh": np.tanh,
}


def lut_table(function: str, in_scale, out_scale) -> np.ndarray:
    """The int8 table of an activation (a name in ACTIVATIONS, torch's definitions; "gelu" the
    erf form, "gelu_tanh" torch's approximate="tanh"): table[q + 128] = saturate_int8(round_half_even(f(q * in_scale) / out_scale))
    for q in [-128, 127], evaluated in float64."""
    if function not in ACTIVATIONS:
        raise ValueError(f"function must be one of {sorted(ACTIVATIONS)}, not {function!r}")
    s_in, s_out = _scale(in_scale, "in_scale"), _scale(out_scale, "out_scale")
    y = ACTIVATIONS[function](np.arange(-128, 128, dtype=np.float64) * s_in) / s_out
    return np.clip(np.rint(y), -128, 127).astype(np.int8)


def lut(shape, table) -> CpuKernel:
    """out[i] = table[x[i] + 128] over every element of an int8 x of any shape; `table` is
    256 int8 values (table[0] is the image of -128), e.g. lut_table(...)."""
    shape = _shape(shape)
    table = np.asarray(table)
    if table.shape != (256,) or table.dtype != np.int8:
        raise ValueError(f"table must be 256 int8 values, not {table.shape} {table.dtype}")
    sym, glob = dense_global("table", table)

    def body(f, b):
        t = f.get_global(sym, "memref<256xi8>")
        i = f(f"arith.addi {f(f'arith.extsi {b[0]} : i8 to i32')}, {f.const('128', 'i32')} : i32")
        return f(f"memref.load {t}[{f(f'arith.index_cast {i} : i32 to index')}] : memref<256xi8>")
    return _flat_kernel("lut", [("x", shape, np.int8), ("out", shape, np.int8)], 1, body, glob)


def add(shape, *, a_scale, b_scale, out_scale, relu=False) -> CpuKernel:
    """Elementwise sum of int8 a and b (same shape) requantised to out_scale:
    ma = float32(a_scale / out_scale), mb = float32(b_scale / out_scale);
    v = float32(a) * ma + float32(b) * mb (each product rounded, then the sum);
    with relu, v = max(v, 0); out = requant(v)."""
    shape = _shape(shape)
    s_out = _scale(out_scale, "out_scale")
    ma, mb = np.float32(_scale(a_scale, "a_scale") / s_out), np.float32(_scale(b_scale, "b_scale") / s_out)
    if not isinstance(relu, bool):
        raise TypeError(f"relu must be a bool, not {type(relu).__name__}")

    def body(f, b):
        pa = f(f"arith.mulf {f(f'arith.sitofp {b[0]} : i8 to f32')}, {f.f32(ma)} : f32")
        pb = f(f"arith.mulf {f(f'arith.sitofp {b[1]} : i8 to f32')}, {f.f32(mb)} : f32")
        v = f(f"arith.addf {pa}, {pb} : f32")
        if relu:
            v = f.max(v, f.f32(0.0))
        return f.requant(v)
    return _flat_kernel("add_relu" if relu else "add",
                        [("a", shape, np.int8), ("b", shape, np.int8), ("out", shape, np.int8)], 2, body)


def mul_channel(shape, *, x_scale, s_scale, out_scale) -> CpuKernel:
    """Squeeze-excite multiply of int8 NHWC x by int8 s[n, c]:
    p = int32(x[n, h, w, c]) * int32(s[n, c]) (exact); m = float32(x_scale * s_scale / out_scale);
    out = requant(float32(p) * m)."""
    n, h, w, c = _shape(shape, 4, "shape (N, H, W, C)")
    m = np.float32(_scale(x_scale, "x_scale") * _scale(s_scale, "s_scale") / _scale(out_scale, "out_scale"))
    args = [("x", (n, h, w, c), np.int8), ("s", (n, c), np.int8), ("out", (n, h, w, c), np.int8)]
    if c % UNROLL == 0:     # channels in groups of UNROLL, the inner loop unrolled (as _flat_kernel's)
        image = (n, h * w, c // UNROLL, UNROLL)
        f = _Func([("x", image, np.int8), ("s", (n, c), np.int8), ("out", image, np.int8)])
        s_map = f"affine_map<(d0, d1, d2, d3) -> (d0, d2 * {UNROLL} + d3)>"
    else:
        f = _Func(args)
        s_map = "affine_map<(d0, d1, d2, d3) -> (d0, d3)>"

    def body(f, b):
        p = f(f"arith.muli {f(f'arith.extsi {b[0]} : i8 to i32')}, {f(f'arith.extsi {b[1]} : i8 to i32')} : i32")
        return f.requant(f(f"arith.mulf {f(f'arith.sitofp {p} : i32 to f32')}, {f.f32(m)} : f32"))
    _elementwise(f, [0, 1], 2, body, {1: s_map})
    return _unrolled(CpuKernel("mul_channel", args, 2, f), c)


# ---------------------------------------------------------------- row reductions

def _rows(shape):
    shape = _shape(shape)
    return shape, (int(np.prod(shape[:-1])), shape[-1])


def _row_kernel(op, shape, rows_cols, build, globals_text="") -> CpuKernel:
    """A kernel over an int8 x viewed as (rows, cols) (the last dim is cols), row by row."""
    f = _Func([("x", rows_cols, np.int8), ("out", rows_cols, np.int8)])
    with f.loop(0, rows_cols[0]) as lr:
        build(f, lr.iv)
    return CpuKernel(op, [("x", shape, np.int8), ("out", shape, np.int8)], 1, f, globals_text)


def softmax_exp_table(in_scale) -> np.ndarray:
    """T[d] = float32(exp(-d * in_scale)) for d in [0, 255]: e^(x - max) of int8 x."""
    return np.array([math.exp(-d * in_scale) for d in range(256)], dtype=np.float32)


def softmax(shape, *, in_scale, out_scale, keep=None) -> CpuKernel:
    """Softmax over the last dim of an int8 x of any shape. Per row x[0..C):
    m = max_j x[j]; e_j = T[m - x[j]] with T = softmax_exp_table(in_scale);
    s = float32 sum of e_j in order j = 0, 1, ..., C-1 (from 0.0);
    r = float32(1 / out_scale) / s; out[j] = requant(e_j * r).
    With `keep` (an attention mask: bool (P, C), P dividing the rows; row i of x uses keep[i mod P],
    every row keeping at least one value) the max is over the kept values and a masked value's
    e_j is 0.0 (torch's -inf before softmax): its output is 0. The row's e_j are kept in a float32
    scratch row between the sum and the output."""
    shape, (rows, cols) = _rows(shape)
    table = softmax_exp_table(_scale(in_scale, "in_scale"))
    inv_out = np.float32(1.0 / _scale(out_scale, "out_scale"))
    sym, glob = dense_global("exp", table)
    esym, ety = f"@{NAME}_e", memref((cols,), np.float32)
    glob += f'  memref.global "private" {esym} : {ety} = uninitialized\n'
    ty = memref((rows, cols), np.int8)
    if keep is not None:
        keep = np.asarray(keep)
        if (keep.dtype != np.bool_ or keep.ndim != 2 or keep.shape[1] != cols or not keep.shape[0]
                or rows % keep.shape[0]):
            raise ValueError(f"keep must be a bool (P, {cols}) mask with P dividing the {rows} rows, not "
                             f"{keep.dtype} {keep.shape}")
        if not keep.any(axis=1).all():
            raise ValueError("keep masks every value of a row (torch's softmax of it is NaN)")
        ksym, ktext = dense_global("keep", keep.astype(np.int8))
        glob += ktext
        kty = memref(keep.shape, np.int8)

    def build(f, r):
        t = f.get_global(sym, "memref<256xf32>")
        scratch = f.get_global(esym, ety)
        if keep is not None:
            km = f.get_global(ksym, kty)
            kr = f(f"arith.remui {r}, {f.index(keep.shape[0])} : index")

        def load_x(j):
            return f(f"arith.extsi {f(f'memref.load {f.arg(0)}[{r}, {j}] : {ty}')} : i8 to i32")

        def kept(j):
            k = f(f"memref.load {km}[{kr}, {j}] : {kty}")
            return f(f"arith.cmpi ne, {k}, {f.const('0', 'i8')} : i8")

        def exp_of(j, m):
            x = load_x(j)
            if keep is not None:
                on = kept(j)
                x = f(f"arith.select {on}, {x}, {m} : i32")
            d = f(f"arith.index_cast {f(f'arith.subi {m}, {x} : i32')} : i32 to index")
            e = f(f"memref.load {t}[{d}] : memref<256xf32>")
            return e if keep is None else f(f"arith.select {on}, {e}, {f.f32(0.0)} : f32")
        low = f.const("-128", "i32")
        with f.loop_grouped(cols, [(low, "i32")]) as lm:
            x = load_x(lm.iv)
            if keep is not None:
                x = f(f"arith.select {kept(lm.iv)}, {x}, {low} : i32")
            lm.next = [f(f"arith.maxsi {lm.args[0]}, {x} : i32")]
        m = lm.results[0]
        with f.loop_grouped(cols, [(f.f32(0.0), "f32")]) as ls:
            e = exp_of(ls.iv, m)
            f.line(f"memref.store {e}, {scratch}[{ls.iv}] : {ety}")
            ls.next = [f(f"arith.addf {ls.args[0]}, {e} : f32")]
        rs = f(f"arith.divf {f.f32(inv_out)}, {ls.results[0]} : f32")
        with f.loop_grouped(cols) as lo:
            q = f.requant(f(f"arith.mulf {f(f'memref.load {scratch}[{lo.iv}] : {ety}')}, {rs} : f32"))
            f.line(f"memref.store {q}, {f.arg(1)}[{r}, {lo.iv}] : {ty}")
    return _unrolled(_row_kernel("softmax" if keep is None else "masked_softmax", shape, (rows, cols), build, glob),
                     cols)


LAYERNORM_MAX_COLS = (1 << 31) // (128 * 128) - 1     # the int32 sum of squares cannot overflow


def layernorm(shape, gamma, beta, *, eps=1e-5, in_scale, out_scale) -> CpuKernel:
    """LayerNorm over the last dim (C) of an int8 x of any shape, float32 gamma/beta of C values.
    Per row: s1 = int32 sum of x[j], s2 = int32 sum of x[j]^2; v = int64(C*s2 - s1*s1) (exact);
    mean = float32(s1) / float32(C); var = float32(v) / float32(C*C);
    rstd = 1.0 / sqrt(var + e) with e = float32(eps / in_scale^2) (one float32 op each);
    g[j] = float32(gamma[j] / out_scale), b[j] = float32(beta[j] / out_scale) (gamma, beta as float64);
    out[j] = requant(((float32(x[j]) - mean) * rstd) * g[j] + b[j]) (each op rounded in that order)."""
    shape, (rows, cols) = _rows(shape)
    if cols > LAYERNORM_MAX_COLS:
        raise ValueError(f"layernorm over {cols} values: at most {LAYERNORM_MAX_COLS} (int32 sum of squares)")
    s_in, s_out = _scale(in_scale, "in_scale"), _scale(out_scale, "out_scale")
    e = np.float32(_scale(eps, "eps") / (s_in * s_in))
    params = {}
    for what, v in (("gamma", gamma), ("beta", beta)):
        v = np.asarray(v)
        if v.shape != (cols,) or not np.issubdtype(v.dtype, np.floating) or not np.all(np.isfinite(v)):
            raise ValueError(f"{what} must be {cols} finite floats (the last dim), not {v.shape} {v.dtype}")
        params[what] = (v.astype(np.float64) / s_out).astype(np.float32)
    (gsym, gtext), (bsym, btext) = dense_global("gamma", params["gamma"]), dense_global("beta", params["beta"])
    ty, vty = memref((rows, cols), np.int8), memref((cols,), np.float32)

    def build(f, r):
        g, b = f.get_global(gsym, vty), f.get_global(bsym, vty)
        zero = f.const("0", "i32")
        with f.loop_grouped(cols, [(zero, "i32"), (zero, "i32")]) as ls:
            x = f(f"arith.extsi {f(f'memref.load {f.arg(0)}[{r}, {ls.iv}] : {ty}')} : i8 to i32")
            ls.next = [f(f"arith.addi {ls.args[0]}, {x} : i32"),
                       f(f"arith.addi {ls.args[1]}, {f(f'arith.muli {x}, {x} : i32')} : i32")]
        s1, s2 = ls.results
        s1l, s2l = (f(f"arith.extsi {s} : i32 to i64") for s in (s1, s2))
        c64 = f.const(str(cols), "i64")
        v = f(f"arith.subi {f(f'arith.muli {s2l}, {c64} : i64')}, "
              f"{f(f'arith.muli {s1l}, {s1l} : i64')} : i64")
        mean = f(f"arith.divf {f(f'arith.sitofp {s1} : i32 to f32')}, {f.f32(cols)} : f32")
        var = f(f"arith.divf {f(f'arith.sitofp {v} : i64 to f32')}, {f.f32(cols * cols)} : f32")
        root = f(f"math.sqrt {f(f'arith.addf {var}, {f.f32(e)} : f32')} : f32")
        rstd = f(f"arith.divf {f.f32(1.0)}, {root} : f32")
        with f.loop_grouped(cols) as lo:
            x = f(f"arith.sitofp {f(f'memref.load {f.arg(0)}[{r}, {lo.iv}] : {ty}')} : i8 to f32")
            n = f(f"arith.mulf {f(f'arith.subf {x}, {mean} : f32')}, {rstd} : f32")
            y = f(f"arith.mulf {n}, {f(f'memref.load {g}[{lo.iv}] : {vty}')} : f32")
            y = f(f"arith.addf {y}, {f(f'memref.load {b}[{lo.iv}] : {vty}')} : f32")
            f.line(f"memref.store {f.requant(y)}, {f.arg(1)}[{r}, {lo.iv}] : {ty}")
    return _unrolled(_row_kernel("layernorm", shape, (rows, cols), build, gtext + btext), cols)


# ---------------------------------------------------------------- layout

def embedding(ids_shape, rows: int, cols: int) -> CpuKernel:
    """out[i..., :] = table[ids[i...], :]: rows of an int8 table (rows x cols, an argument: a large
    table stays read-only data) picked by int32 ids of any shape; out has shape ids_shape + (cols,).
    Every id must be in [0, rows): calling the kernel checks it (ValueError naming ids); a program
    checks its ids where they enter (baco.model.compile)."""
    ids_shape = _shape(ids_shape, what="ids_shape")
    for what, v in (("rows", rows), ("cols", cols)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{what} must be a positive int, not {v!r}")
    n = int(np.prod(ids_shape))
    args = [("ids", ids_shape, np.int32), ("table", (rows, cols), np.int8), ("out", (*ids_shape, cols), np.int8)]
    f = _Func([("ids", (n,), np.int32), ("table", (rows, cols), np.int8), ("out", (n, cols), np.int8)])
    ids_ty, table_ty, out_ty = memref((n,), np.int32), memref((rows, cols), np.int8), memref((n, cols), np.int8)
    with f.loop(0, n) as li:
        row = f(f"arith.index_cast {f(f'memref.load {f.arg(0)}[{li.iv}] : {ids_ty}')} : i32 to index")
        with f.loop(0, cols) as lc:
            v = f(f"memref.load {f.arg(1)}[{row}, {lc.iv}] : {table_ty}")
            f.line(f"memref.store {v}, {f.arg(2)}[{li.iv}, {lc.iv}] : {out_ty}")
    kernel = CpuKernel("embedding", args, 2, f)

    def ids_inside(arrays):
        ids = arrays[0]
        if ids.size and (ids.min() < 0 or ids.max() >= rows):
            raise ValueError(f"argument ids must be in [0, {rows}) (the table's rows), got ids in "
                             f"[{ids.min()}, {ids.max()}]")
    kernel.value_checks.append(ids_inside)
    return kernel


def copy(shape, dtype=np.int8, out_shape=None) -> CpuKernel:
    """out = x element for element in C order (a reshape when out_shape differs; equal sizes)."""
    shape, dtype = _shape(shape), _dtype(dtype)
    out_shape = shape if out_shape is None else _shape(out_shape, what="out_shape")
    if np.prod(out_shape) != np.prod(shape):
        raise ValueError(f"out_shape {out_shape} must hold as many elements as shape {shape}")
    return _flat_kernel("copy", [("x", shape, dtype), ("out", out_shape, dtype)], 1, lambda f, b: b[0])


def permute(shape, perm, dtype=np.int8) -> CpuKernel:
    """out = x.transpose(perm) (numpy's / torch.permute's meaning: out dim i is x's dim perm[i])."""
    shape, dtype = _shape(shape), _dtype(dtype)
    if (not isinstance(perm, (tuple, list)) or sorted(perm) != list(range(len(shape)))
            or not all(isinstance(p, numbers.Integral) for p in perm)):
        raise ValueError(f"perm must be a permutation of {tuple(range(len(shape)))}, not {perm!r}")
    out_shape = tuple(shape[p] for p in perm)
    args = [("x", shape, dtype), ("out", out_shape, dtype)]
    f = _Func(args)
    f.line(f"linalg.transpose ins({f.arg(0)} : {memref(shape, dtype)}) outs({f.arg(1)} : {memref(out_shape, dtype)}) "
           f"permutation = [{', '.join(map(str, perm))}]")
    return CpuKernel("permute", args, 1, f)


def strided_copy(base_shape, shape, strides, offset=0, dtype=np.int8) -> CpuKernel:
    """out[i_0, ..., i_r] = x.flat[offset + sum_k i_k * strides[k]] (x C-contiguous of
    `base_shape`, strides and offset in elements, every index inside x): a strided view of x (a
    slice, a transpose of some of its dims, a head of an attention projection...) copied into
    the C-contiguous out of `shape`."""
    base_shape, shape, dtype = _shape(base_shape, what="base_shape"), _shape(shape), _dtype(dtype)
    if (not isinstance(strides, (tuple, list)) or len(strides) != len(shape)
            or not all(isinstance(v, numbers.Integral) and v >= 0 for v in strides)):
        raise ValueError(f"strides must be {len(shape)} non-negative ints (one per dim of shape), not {strides!r}")
    if not isinstance(offset, numbers.Integral) or offset < 0:
        raise ValueError(f"offset must be a non-negative int, not {offset!r}")
    size = int(np.prod(base_shape))
    last = int(offset) + sum((d - 1) * int(v) for d, v in zip(shape, strides))
    if last >= size:
        raise ValueError(f"the view (shape {shape}, strides {tuple(strides)}, offset {offset}) reads element {last} "
                         f"of x, which holds {size}")
    args = [("x", base_shape, dtype), ("out", shape, dtype)]
    f = _Func([("x", (size,), dtype), ("out", shape, dtype)])
    view = (f"memref<{'x'.join(map(str, shape))}x{element(dtype)}, strided<[{', '.join(map(str, strides))}], "
            f"offset: {offset}>>")
    v = f(f"memref.reinterpret_cast {f.arg(0)} to offset: [{offset}], sizes: [{', '.join(map(str, shape))}], "
          f"strides: [{', '.join(map(str, strides))}] : {memref((size,), dtype)} to {view}")
    f.line(f"linalg.copy ins({v} : {view}) outs({f.arg(1)} : {memref(shape, dtype)})")
    return CpuKernel("strided_copy", args, 1, f)


def concat(shapes, axis, dtype=np.int8) -> CpuKernel:
    """out = concatenate(xs, axis): the inputs (shapes equal except along `axis`) in order."""
    if not isinstance(shapes, (tuple, list)) or not shapes:
        raise TypeError(f"shapes must be a non-empty list of shapes, not {shapes!r}")
    shapes, dtype = [_shape(s, what=f"shapes[{i}]") for i, s in enumerate(shapes)], _dtype(dtype)
    rank = len(shapes[0])
    if not isinstance(axis, numbers.Integral) or not -rank <= axis < rank:
        raise ValueError(f"axis must be an int in [{-rank}, {rank}), not {axis!r}")
    axis = int(axis) % rank
    for i, s in enumerate(shapes):
        if len(s) != rank or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0])) if d != axis):
            raise ValueError(f"shapes[{i}] {s} must equal shapes[0] {shapes[0]} except along axis {axis}")
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    out_shape = tuple(out_shape)
    args = [(f"x{i}", s, dtype) for i, s in enumerate(shapes)] + [("out", out_shape, dtype)]
    f = _Func(args)
    strides = [int(np.prod(out_shape[d + 1:])) for d in range(rank)]
    at = 0
    for i, s in enumerate(shapes):
        offsets = [0] * rank
        offsets[axis] = at
        view = (f"memref<{'x'.join(map(str, s))}x{element(dtype)}, strided<[{', '.join(map(str, strides))}], "
                f"offset: {at * strides[axis]}>>")
        sub = f(f"memref.subview {f.arg(len(shapes))}[{', '.join(map(str, offsets))}] [{', '.join(map(str, s))}] "
                f"[{', '.join(['1'] * rank)}] : {memref(out_shape, dtype)} to {view}")
        f.line(f"linalg.copy ins({f.arg(i)} : {memref(s, dtype)}) outs({sub} : {view})")
        at += s[axis]
    return CpuKernel("concat", args, len(shapes), f)
