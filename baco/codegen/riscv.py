"""RISC-V backend: the same LLVM IR with the RoCC intrinsics defined as
`.insn r CUSTOM_3` inline assembly, compiled by clang (ziglang) for
riscv64-freestanding and linked with the bare-metal start-up code in
toolchain/ into an ELF: a harness loops over the grid, the inputs are linked
in as data, and the ELF either leaves its outputs in memory for the ISS to
read back or checks them itself (exit code 0 iff bit-exact).

`baco llc IN.ll -o OUT.o|OUT.elf` is the command-line form."""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import weakref
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

from baco.errors import NEGATIVE_COLUMN_OFFSET, RUNTIME_ERRORS, KernelRuntimeError
from baco.gemmini.abi import (BOUNDARY_ERROR, BOUNDARY_EXIT_CODE, FENCE, GRID_EXTENTS, GRID_PIDS, NUM_PROGRAMS,
                              PROGRAM_ID, RUNTIME_ERROR, RUNTIME_ERROR_EXIT_CODE, intrinsic_name)
from baco.gemmini.config import MLIR_ELEMENTS, GemminiConfig
from baco.gemmini.isa import COMMANDS
from baco.options import full_grid


def keep_temps() -> bool:
    """BACO_KEEP_TEMPS=1 keeps the build folders (/tmp/baco-*) for inspection."""
    return os.environ.get("BACO_KEEP_TEMPS") == "1"


def intrinsic_prelude() -> str:
    """LLVM IR defining every RoCC intrinsic as one custom-3 instruction (the source site
    argument is for the host JIT's fault messages) and the grid queries as loads of the harness's
    arrays."""
    out = []
    for name, cmd in COMMANDS.items():
        fn = intrinsic_name(name)
        if name == "counter":
            out.append(f'define linkonce_odr i64 @"{fn}"(i64 %rs1, i64 %rs2, i64 %site) alwaysinline {{\n'
                       f'  %v = call i64 asm sideeffect ".insn r CUSTOM_3, 7, {cmd.funct}, $0, $1, $2", '
                       f'"=r,r,r,~{{memory}}"(i64 %rs1, i64 %rs2)\n  ret i64 %v\n}}')
        else:
            out.append(f'define linkonce_odr void @"{fn}"(i64 %rs1, i64 %rs2, i64 %site) alwaysinline {{\n'
                       f'  call void asm sideeffect ".insn r CUSTOM_3, 3, {cmd.funct}, x0, $0, $1", '
                       f'"r,r,~{{memory}}"(i64 %rs1, i64 %rs2)\n  ret void\n}}')
    out.append(f'define linkonce_odr void @"{FENCE}"() alwaysinline {{\n'
               '  call void asm sideeffect "fence", "~{memory}"()\n  ret void\n}')
    # the grid queries read the harness's arrays in place (a call each cost ~13 instructions, a
    # program's kernel making 5-7 of them)
    for fn, table in ((PROGRAM_ID, GRID_PIDS), (NUM_PROGRAMS, GRID_EXTENTS)):
        out.append(f'@{table} = external global [3 x i64]\n'
                   f'define linkonce_odr i64 @"{fn}"(i64 %axis) alwaysinline {{\n'
                   f'  %p = getelementptr [3 x i64], ptr @{table}, i64 0, i64 %axis\n'
                   f'  %v = load i64, ptr %p\n  ret i64 %v\n}}')
    return "\n".join(out) + "\n"


def link_intrinsics(kernel_ir: str) -> str:
    """Replace the intrinsic declarations of the kernel module by their definitions."""
    llvm.initialize_native_target()
    mod = llvm.parse_assembly(kernel_ir)
    mod.link_in(llvm.parse_assembly(intrinsic_prelude()))
    mod.triple = "riscv64-unknown-unknown-elf"
    mod.verify()
    return str(mod)


BODY_SUFFIX = ".body"     # the kernel's own function in the runner's module, inlined into its wrapper


def launch_wrapper(llvm_ir: str, name: str, signature) -> str:
    """The kernel module with `name` made a function of one argument, a pointer to its arguments as
    64-bit slots (launch_slots' layout after the grid: a memref its address and element count, an
    index its value, a float its bit pattern), that reads them and runs the kernel, whose own definition
    becomes internal (`name` + BODY_SUFFIX) and is inlined into it. The runner passes its launch
    table's slots, a whole program each step's constant table (baco.codegen.program), so both call
    a kernel alike: no argument is loaded by the caller, passed on the stack and reloaded by the
    kernel, and the arguments the kernel never reads (a memref's base pointer, offset and stride)
    are never loaded at all (~60 instructions a program before its first command, 25 arguments
    of the GEMM kernel)."""
    mod = llvm.parse_assembly(llvm_ir)
    fn = mod.get_function(name)
    fn.name = name + BODY_SUFFIX
    params, loads, slot = [], [], 0

    def load(value: str, at: int) -> None:
        loads.append(f"  %p{at} = getelementptr i64, ptr %args, i64 {at}")
        loads.append(f"  {value} = load i64, ptr %p{at}, align 8")

    for i, kind in enumerate(signature):
        if kind == "memref":
            load(f"%a{i}", slot)
            load(f"%n{i}", slot + 1)
            loads.append(f"  %q{i} = inttoptr i64 %a{i} to ptr")
            params += [f"ptr %q{i}", f"ptr %q{i}", "i64 0", f"i64 %n{i}", "i64 1"]
            slot += 2
        elif kind == "index":
            load(f"%v{i}", slot)
            params.append(f"i64 %v{i}")
            slot += 1
        else:
            load(f"%b{i}", slot)
            loads += [f"  %t{i} = trunc i64 %b{i} to i32", f"  %f{i} = bitcast i32 %t{i} to float"]
            params.append(f"float %f{i}")
            slot += 1
    wrapper = "\n".join([f'declare void @"{name}{BODY_SUFFIX}"({", ".join(p.split()[0] for p in params)})',
                         f'define void @"{name}"(ptr %args) {{', *loads,
                         f'  call void @"{name}{BODY_SUFFIX}"({", ".join(params)})', "  ret void", "}"]) + "\n"
    mod.link_in(llvm.parse_assembly(wrapper))
    mod.get_function(name + BODY_SUFFIX).linkage = "internal"
    mod.verify()
    return str(mod)


def float_bits(x) -> int:
    """The float32 bit pattern of x (NaN and infinities included), as the harness reads it."""
    return int(np.float32(x).view(np.uint32))


LAUNCH_SYMBOL = "baco_launch"
KERNEL_CYCLES_SYMBOL = "baco_kernel_cycles"   # rdcycle around the grid loop and its fence


def launch_slots(signature, args, grid, array_refs) -> list:
    """The launch table the harness reads (64-bit slots): the grid's three extents, then per
    argument its address and element count (array), its value (index) or its float32 bits
    (f32). `array_refs` gives each array's address (an int, or a symbol for the assembler)."""
    slots, refs = list(full_grid(grid)), iter(array_refs)
    for kind, a in zip(signature, args):
        if kind == "memref":
            slots += [next(refs), a.size]
        else:
            slots.append(int(a) if kind == "index" else float_bits(a))
    return slots


def launch_table_size(signature) -> int:
    """Slots of launch_slots' table."""
    return 3 + sum(2 if kind == "memref" else 1 for kind in signature)


def harness_prelude() -> list[str]:
    """C lines every harness starts with: the runtime the kernels call (the program ids and grid
    size their inlined grid queries read, boundary and runtime errors)."""
    return ["#include <stdint.h>", "#include <stdio.h>", "", "void exit(int);",
            f"int64_t {GRID_PIDS}[3], {GRID_EXTENTS}[3];",
            f"void {BOUNDARY_ERROR}(int64_t line, int64_t col) {{",
            '  printf("baco: boundary error at line %ld col %ld\\n", (long)line, (long)col);',
            f"  exit({BOUNDARY_EXIT_CODE});", "}",
            f"void {RUNTIME_ERROR}(int64_t code, int64_t line, int64_t col) {{",
            '  printf("baco: runtime error %ld at line %ld col %ld\\n", (long)code, (long)line, (long)col);',
            f"  exit({RUNTIME_ERROR_EXIT_CODE});", "}"]


def grid_loop(extents, call: str, indent: str = "  ", reads=(True, True)) -> list[str]:
    """C lines running `call` for every program of the grid (`extents`: three C expressions),
    program (0, 0, 0) first and axis 0 innermost, as the host JIT runs a launch (the config
    elimination pass relies on that order). `reads`: whether the kernel reads the program ids and
    the grid's extents (grid_reads); the harness's arrays are written only if it does."""
    pids, sizes = reads
    bounds = [f"{GRID_EXTENTS}[{axis}]" if sizes else e for axis, e in enumerate(extents)]
    lines = [f"{indent}{GRID_EXTENTS}[{axis}] = {e};" for axis, e in enumerate(extents)] if sizes else []
    return lines + [f"{indent}for (int64_t p2 = 0; p2 < {bounds[2]}; p2++)",
                    f"{indent}  for (int64_t p1 = 0; p1 < {bounds[1]}; p1++)",
                    f"{indent}    for (int64_t p0 = 0; p0 < {bounds[0]}; p0++) {{",
                    *([f"{indent}      {GRID_PIDS}[0] = p0; {GRID_PIDS}[1] = p1; {GRID_PIDS}[2] = p2;"] * pids),
                    f"{indent}      {call};",
                    f"{indent}    }}"]


def grid_reads(kernel_ir: str) -> tuple[bool, bool]:
    """Whether a kernel's LLVM IR (before link_intrinsics) reads its program ids and its grid's
    extents: a kernel compiled for its grid has its queries folded (fold_grid_queries), all of
    them on a grid of one program."""
    uses = [line for line in kernel_ir.splitlines() if not line.lstrip().startswith("declare")]
    return tuple(any(re.search(rf'@"?{fn}"?\b', line) for line in uses) for fn in (PROGRAM_ID, NUM_PROGRAMS))


def check_lines(label: str, ctype: str, got: str, want: str, count: str) -> list[str]:
    """C lines comparing `count` elements of `got` with `want` (both `ctype` arrays), printing
    the first mismatches and counting them in `bad` (declared by the caller, which ends with
    CHECK_VERDICT)."""
    return [f"  for (long e = 0; e < {count}; e++)",
            f"    if ((({ctype} *){got})[e] != {want}[e]) {{",
            f'      if (bad < 8) printf("mismatch {label}[%ld]: got %ld expected %ld\\n", e, '
            f"(long)(({ctype} *){got})[e], (long){want}[e]);",
            "      bad++;", "    }"]


CHECK_VERDICT = ['  if (bad) printf("FAIL: %ld mismatches\\n", bad); else printf("PASS\\n");',
                 "  return bad != 0;"]


def harness_source(name, signature, elems, expected=None, grid=None, reads=(True, True)) -> str:
    """C main(): read the grid from the launch table (the kernel's compiled `grid`, three
    integers, when it has one: constants, as a whole program's steps have theirs), run every
    program of the grid (the kernel's launch_wrapper reads its arguments from the table), fence;
    with `expected` ({array index: dtype}) compare each such array with baco_expected<i> and exit 0
    iff bit-exact. `reads`: grid_reads of the kernel (grid_loop)."""
    lines = harness_prelude() + [
        f"extern int64_t {LAUNCH_SYMBOL}[];", f"volatile uint64_t {KERNEL_CYCLES_SYMBOL};",
        "static inline uint64_t baco_rdcycle(void) { uint64_t c; __asm__ volatile(\"rdcycle %0\" : \"=r\"(c)); "
        "return c; }",
        f"void {name}(const int64_t *args);"]
    array_slots, slot = [], 3
    types = iter(elems)
    for kind in signature:
        if kind == "memref":
            array_slots.append((MLIR_ELEMENTS[next(types)].c, slot))
            slot += 2
        else:
            slot += 1
    for i in (expected or {}):
        lines.append(f"extern {array_slots[i][0]} baco_expected{i}[];")
    lines += ["", "int main(void) {"]
    lines.append("  uint64_t baco_start = baco_rdcycle();")
    extents = [str(int(g)) for g in grid] if grid is not None else [f"{LAUNCH_SYMBOL}[{axis}]" for axis in range(3)]
    lines += grid_loop(extents, f"{name}(&{LAUNCH_SYMBOL}[3])", reads=reads)
    lines += ['  __asm__ volatile("fence" ::: "memory");', f"  {KERNEL_CYCLES_SYMBOL} = baco_rdcycle() - baco_start;"]
    if expected:
        lines.append("  long bad = 0;")
        for i in expected:
            t, s = array_slots[i]
            lines += check_lines(f"arg{i}", t, f"{LAUNCH_SYMBOL}[{s}]", f"baco_expected{i}", f"{LAUNCH_SYMBOL}[{s + 1}]")
        lines += CHECK_VERDICT
    else:
        lines.append("  return 0;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def incbin_lines(workdir: Path, items) -> list[str]:
    """Assembly placing each (symbol, array) of `items` as data: the array's bytes written
    to workdir and .incbin'd, 64-byte aligned, in the current section."""
    out = []
    for sym, a in items:
        path = workdir / f"{sym}.bin"
        np.ascontiguousarray(a).tofile(path)
        out += [".balign 64", f".globl {sym}", f"{sym}:", f'.incbin "{path}"']
    return out


def data_source(workdir: Path, slots, arrays=(), expected=None) -> str:
    """Assembly for the launch table (`slots`: ints and symbols) and the arrays and expected
    results linked in as data (.incbin of their bytes)."""
    out = ['.section .data.baco,"awR",@progbits',    # retained: a launch that never reads them keeps them
           ".balign 64", f".globl {LAUNCH_SYMBOL}", f"{LAUNCH_SYMBOL}:"]
    out += [f".quad {s}" for s in slots]
    items = [(f"baco_arg{i}", a) for i, a in enumerate(arrays)]
    items += [(f"baco_expected{i}", e) for i, e in (expected or {}).items()]
    out += incbin_lines(workdir, items)
    return "\n".join(out) + "\n"


def toolchain_fingerprint() -> str:
    """Hash of what a RISC-V build depends on besides its sources: the start-up code, the
    linker script, the harness generator and the clang version."""
    import hashlib
    from importlib.metadata import version
    from baco.codegen import toolchain
    from baco.gemmini import params_header
    from baco.sim import elfinfo
    h = hashlib.sha256(version("ziglang").encode())
    for f in (Path(__file__), Path(toolchain.__file__), Path(params_header.__file__), Path(elfinfo.__file__),
              *sorted(p for p in toolchain.TOOLCHAIN_DIR.rglob("*") if p.is_file())):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def kernel_error(res) -> KernelRuntimeError | None:
    """The error a kernel stopped an ISS run with (baco_boundary_error's or baco_runtime_error's exit), if it did."""
    boundary = re.search(r"baco: boundary error at line (\d+) col (\d+)", res.console or "")
    if res.exit_code == BOUNDARY_EXIT_CODE and boundary:
        return KernelRuntimeError(NEGATIVE_COLUMN_OFFSET, int(boundary.group(1)), int(boundary.group(2)))
    failed = re.search(r"baco: runtime error (\d+) at line (\d+) col (\d+)", res.console or "")
    if res.exit_code == RUNTIME_ERROR_EXIT_CODE and failed:
        code, line, col = (int(g) for g in failed.groups())
        return KernelRuntimeError(RUNTIME_ERRORS[code], line, col)
    return None


def publish_to_cache(built: Path | bytes, cached: Path) -> None:
    """Copy a built file (or its bytes) into the disk cache under a temporary name unique to this
    process and thread, then rename it: a concurrent reader sees the whole file or none."""
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    if isinstance(built, bytes):
        tmp.write_bytes(built)
    else:
        shutil.copyfile(built, tmp)
    tmp.replace(cached)


class RiscvKernel:
    """The kernel compiled for the ISS: one runner ELF per kernel (built once, kept in the disk
    cache when one is given) into which each launch's grid, scalars and arrays are written
    before the run, so a launch costs an ISS run and no build. `build_elf` links a standalone
    ELF with one launch's data inside (for Spike or hardware). A kernel compiled for its `grid`
    (CompiledKernel.grid) runs only that grid: its harness loops over constant bounds (grid_loop)."""

    def __init__(self, llvm_ir: str, name: str, signature, config: GemminiConfig, cache_dir: Path | None = None,
                 grid=None):
        self.name, self.signature, self.config = name, signature, config
        self.grid = None if grid is None else full_grid(grid)   # compiled for it: the harness's loop bounds
        self.reads = grid_reads(llvm_ir)
        self.workdir = Path(tempfile.mkdtemp(prefix=f"baco-{name}-"))
        if not keep_temps():    # removed with the kernel (or at exit); BACO_KEEP_TEMPS=1 keeps it
            weakref.finalize(self, shutil.rmtree, self.workdir, True)
        self.ll_path = self.workdir / f"{name}.ll"
        self.ll_path.write_text(launch_wrapper(link_intrinsics(llvm_ir), name, signature))
        self.runner_elf = self._runner(cache_dir)     # built now: clang/lld errors surface at compile time
        self.last_run = {}

    def _elems(self, arrays):
        return [{"int8": "i8", "int32": "i32", "float32": "f32"}[a.dtype.name] for a in arrays]

    def _link(self, out_elf, elems, slots, arrays=(), expected=None):
        from baco.codegen import toolchain
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=self.workdir))
        harness = run_dir / "harness.c"
        harness.write_text(harness_source(self.name, self.signature, elems,
                                          {i: e.dtype for i, e in (expected or {}).items()}, self.grid, self.reads))
        data = run_dir / "data.S"
        data.write_text(data_source(run_dir, slots, arrays, expected))
        try:
            toolchain.compile_and_link([harness, data, self.ll_path], out_elf, config=self.config)
        finally:
            if not keep_temps():
                shutil.rmtree(run_dir, ignore_errors=True)
        return Path(out_elf)

    def build_elf(self, grid, args, out_elf, expected=None):
        """Link a bare-metal ELF for these arguments. `expected` maps array
        index -> array: the ELF then checks itself (exit 0 iff bit-exact)."""
        self._check_grid(grid)
        arrays = [a for k, a in zip(self.signature, args) if k == "memref"]
        slots = launch_slots(self.signature, args, grid, [f"baco_arg{i}" for i in range(len(arrays))])
        return self._link(out_elf, self._elems(arrays), slots, arrays, expected)

    def _check_grid(self, grid) -> None:
        """A kernel built for its grid runs only that grid (the harness's loop bounds are constants)."""
        if self.grid is not None and full_grid(grid) != self.grid:
            raise ValueError(f"{self.name}: grid {tuple(grid)}: the ELF was built for the grid {self.grid}")

    def _runner(self, cache_dir: Path | None) -> Path:
        """The runner ELF: its launch table is zeros for the host to fill. Its arrays are
        declared int8_t * whatever their type (a pointer's type does not change the calling
        convention). Found in the disk cache by the hash of what it is built from (and copied out of it)."""
        import hashlib
        cached = None
        if cache_dir is not None:
            blob = "\n".join([self.ll_path.read_text(), repr(self.signature), repr(self.grid),
                              json.dumps(self.config.to_dict(), sort_keys=True), toolchain_fingerprint()])
            cached = cache_dir / "riscv" / f"{hashlib.sha256(blob.encode()).hexdigest()[:32]}.elf"
            private = self.workdir / "runner.elf"
            try:     # a private copy: the cache's pruning may delete the cached file while this kernel lives
                shutil.copyfile(cached, private)
                os.utime(cached)
                return private
            except FileNotFoundError:
                pass
        path = self._link(self.workdir / "runner.elf", ["i8"] * self.signature.count("memref"),
                          [0] * launch_table_size(self.signature))
        if cached is not None:
            publish_to_cache(path, cached)
        return path

    def run(self, grid, args, *, max_instructions=2_000_000_000, timeout_s=600, observers=(), timing=None):
        """Run one launch on the ISS. `timing` (a baco.sim.timing.TimingModel) attaches the cycle
        model: the CPU then waits on Gemmini, `cpu_cycles` is the whole run's time and
        `kernel_cycles` the launch's end to end (rdcycle around the grid loop and its fence, as the
        C library's perf tests time a kernel; start-up code excluded)."""
        from baco.sim.elfinfo import read_symbols
        from baco.sim.iss import DEFAULT_MEM_SIZE, RAM_BASE, IssError, run_elf
        self._check_grid(grid)
        arrays = [a for k, a in zip(self.signature, args) if k == "memref"]
        elf = self.runner_elf
        symbols = read_symbols(elf)
        addresses, at = [], (symbols["_end"] + 63) & ~63    # the arrays go after the program's stack
        for a in arrays:
            addresses.append(at)
            at = (at + a.nbytes + 63) & ~63
        if at > RAM_BASE + DEFAULT_MEM_SIZE:
            raise IssError(f"{self.name}: the launch's arrays ({sum(a.nbytes for a in arrays)} bytes) do not fit "
                           f"in the ISS's {DEFAULT_MEM_SIZE >> 20} MiB of RAM")
        slots = launch_slots(self.signature, args, grid, addresses)
        inputs = {symbols[LAUNCH_SYMBOL]: np.array(slots, dtype=np.int64).tobytes()}
        inputs.update({addr: np.ascontiguousarray(a).tobytes() for addr, a in zip(addresses, arrays) if a.nbytes})
        res = run_elf(elf, config=self.config, max_instructions=max_instructions,
                      timeout_s=timeout_s, stdout=None, inputs=inputs, timing=timing, observers=observers,
                      dma_regions=[(addr, addr + a.nbytes) for addr, a in zip(addresses, arrays) if a.nbytes])
        if res.fault is not None:      # a Gemmini fault raises as it does on the host
            raise res.fault
        error = kernel_error(res)
        if error is not None:
            raise error
        if res.exit_code != 0:
            why = res.error or f"exit code {res.exit_code}"
            raise RuntimeError(f"{self.name} on the ISS failed: {why}\n{res.console}")
        for addr, a in zip(addresses, arrays):
            if a.nbytes:
                a[...] = np.frombuffer(res.read_memory(addr, a.nbytes), dtype=a.dtype).reshape(a.shape)
        kernel_cycles = int.from_bytes(res.read_memory(symbols[KERNEL_CYCLES_SYMBOL], 8), "little")
        self.last_run = {"instructions": res.instructions, "commands": res.gemmini_commands,
                         "cpu_cycles": res.cpu_cycles, "kernel_cycles": kernel_cycles, "elf": str(elf), "result": res}
        return self.last_run


def main(argv=None) -> int:
    """`baco llc`: LLVM IR → RISC-V object (-o x.o) or, with --main C sources, an ELF (-o x.elf)."""
    from baco.inputs import read_text
    from baco.codegen import toolchain
    p = argparse.ArgumentParser(prog="baco llc", description=__doc__)
    p.add_argument("input", help="LLVM IR (.ll) from `baco translate`")
    p.add_argument("-o", "--output", required=True, help="x.o (object) or x.elf (needs --main)")
    p.add_argument("--main", action="append", default=[], help="C/asm sources with main() to link (ELF output)")
    args = p.parse_args(argv)
    if not args.output.endswith((".o", ".elf")):
        p.error(f"-o {args.output}: name the output x.o (object) or x.elf (linked program)")
    if args.output.endswith(".elf") and not args.main:
        p.error("an ELF needs a main(): give the C/assembly sources with --main (or write -o x.o)")
    if args.output.endswith(".o") and args.main:
        p.error("--main links an ELF: write -o x.elf")
    for source in args.main:
        if not os.path.isfile(source):
            raise FileNotFoundError(2, "No such file or directory", source)
    text = read_text(args.input)
    try:
        linked = link_intrinsics(text)
    except RuntimeError as e:        # llvmlite's parser/verifier
        first = next((line for line in str(e).splitlines() if "error:" in line), str(e).splitlines()[0])
        hint = " (MLIR? run `baco translate` first)" if "module {" in text or "func.func" in text else ""
        raise ValueError(f"{args.input}: not valid LLVM IR: {first.strip()}{hint}") from None
    ll = Path(args.output).with_suffix(".rv.ll")
    ll.write_text(linked)
    try:
        if args.output.endswith(".o"):
            toolchain.compile_object(ll, args.output)
        else:
            obj = Path(args.output).with_suffix(".o")
            toolchain.compile_object(ll, obj)
            toolchain.compile_and_link(args.main, args.output, extra_objects=[obj])
    except toolchain.ToolchainError as e:
        errors = [line.strip() for line in str(e).splitlines()[1:] if "error" in line.lower()]
        print(f"baco llc: build failed: {'; '.join(errors[:2]) or str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    finally:
        os.unlink(ll)
    print(args.output)
    return 0

if __name__ == "__main__":
    sys.exit(main())
