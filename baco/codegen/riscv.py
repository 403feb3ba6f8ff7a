"""RISC-V backend: the same LLVM IR with the RoCC intrinsics defined as
`.insn r CUSTOM_3` inline assembly, compiled by clang (ziglang) for
riscv64-freestanding and linked with the bare-metal start-up code in
toolchain/ into an ELF: a harness loops over the grid, the inputs are linked
in as data, and the ELF either leaves its outputs in memory for the ISS to
read back or checks them itself (exit code 0 iff bit-exact).

`baco llc IN.ll -o OUT.o|OUT.elf` is the command-line form."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import weakref
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

from baco.errors import BOUNDARY_EXIT_CODE, NEGATIVE_COLUMN_OFFSET, KernelRuntimeError
from baco.gemmini.config import GemminiConfig
from baco.gemmini.isa import COMMANDS
from baco.passes.instgem_to_llvm import FENCE, intrinsic_name
from baco.passes.irutil import BOUNDARY_ERROR

def keep_temps() -> bool:
    """BACO_KEEP_TEMPS=1 keeps the build folders (/tmp/baco-*) for inspection."""
    return os.environ.get("BACO_KEEP_TEMPS") == "1"


C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int32): "int32_t", np.dtype(np.float32): "float"}


def intrinsic_prelude() -> str:
    """LLVM IR defining every RoCC intrinsic as one custom-3 instruction."""
    out = []
    for name, cmd in COMMANDS.items():
        fn = intrinsic_name(name)
        if name == "counter":
            out.append(f'define linkonce_odr i64 @"{fn}"(i64 %rs1, i64 %rs2) alwaysinline {{\n'
                       f'  %v = call i64 asm sideeffect ".insn r CUSTOM_3, 7, {cmd.funct}, $0, $1, $2", '
                       f'"=r,r,r,~{{memory}}"(i64 %rs1, i64 %rs2)\n  ret i64 %v\n}}')
        else:
            out.append(f'define linkonce_odr void @"{fn}"(i64 %rs1, i64 %rs2) alwaysinline {{\n'
                       f'  call void asm sideeffect ".insn r CUSTOM_3, 3, {cmd.funct}, x0, $0, $1", '
                       f'"r,r,~{{memory}}"(i64 %rs1, i64 %rs2)\n  ret void\n}}')
    out.append(f'define linkonce_odr void @"{FENCE}"() alwaysinline {{\n'
               '  call void asm sideeffect "fence", "~{memory}"()\n  ret void\n}')
    return "\n".join(out) + "\n"


def link_intrinsics(kernel_ir: str) -> str:
    """Replace the intrinsic declarations of the kernel module by their definitions."""
    llvm.initialize_native_target()
    mod = llvm.parse_assembly(kernel_ir)
    mod.link_in(llvm.parse_assembly(intrinsic_prelude()))
    mod.triple = "riscv64-unknown-unknown-elf"
    mod.verify()
    return str(mod)


def c_float(x) -> str:
    """A C float literal, NaN and infinities included."""
    x = float(np.float32(x))
    if np.isnan(x):
        return '__builtin_nanf("")'
    if np.isinf(x):
        return "__builtin_inff()" if x > 0 else "-__builtin_inff()"
    return f"{x!r}f"


def c_prototype(name, signature, elems):
    params, it = [], iter(elems)
    for kind in signature:
        if kind == "memref":
            t = {"i8": "int8_t", "i32": "int32_t", "f32": "float"}[next(it)]
            params += [f"{t} *", f"{t} *", "int64_t", "int64_t", "int64_t"]
        else:
            params.append("int64_t" if kind == "index" else "float")
    return f"void {name}({', '.join(params)});"


def harness_source(name, signature, elems, args, grid, expected=None) -> str:
    """C main(): run every program of the grid, fence, optionally self-check."""
    grid = tuple(grid) + (1,) * (3 - len(grid))
    lines = ["#include <stdint.h>", "#include <stdio.h>", "", "void exit(int);",
             "static int64_t baco_pid[3], baco_nprog[3];",
             f"void {BOUNDARY_ERROR}(int64_t line, int64_t col) {{",
             '  printf("baco: boundary error at line %ld col %ld\\n", (long)line, (long)col);',
             f"  exit({BOUNDARY_EXIT_CODE});", "}",
             "int64_t baco_program_id(int64_t axis) { return baco_pid[axis]; }",
             "int64_t baco_num_programs(int64_t axis) { return baco_nprog[axis]; }",
             c_prototype(name, signature, elems)]
    call, arrays = [], 0
    for kind, a in zip(signature, args):
        if kind == "memref":
            t = C_TYPES[a.dtype]
            lines.append(f"extern {t} baco_arg{arrays}[];")
            call += [f"baco_arg{arrays}", f"baco_arg{arrays}", "0", str(a.size), "1"]
            arrays += 1
        elif kind == "index":
            call.append(f"{int(a)}LL")
        else:
            call.append(c_float(a))
    for i, exp in (expected or {}).items():
        lines.append(f"extern {C_TYPES[exp.dtype]} baco_expected{i}[];")
    lines += ["", "int main(void) {",
              f"  baco_nprog[0] = {grid[0]}; baco_nprog[1] = {grid[1]}; baco_nprog[2] = {grid[2]};",
              f"  for (int64_t p2 = 0; p2 < {grid[2]}; p2++)",
              f"    for (int64_t p1 = 0; p1 < {grid[1]}; p1++)",
              f"      for (int64_t p0 = 0; p0 < {grid[0]}; p0++) {{",
              "        baco_pid[0] = p0; baco_pid[1] = p1; baco_pid[2] = p2;",
              f"        {name}({', '.join(call)});",
              "      }",
              '  __asm__ volatile("fence" ::: "memory");']
    if expected:
        lines.append("  long bad = 0;")
        for i, exp in expected.items():
            lines += [f"  for (long e = 0; e < {exp.size}; e++)",
                      f"    if (baco_arg{i}[e] != baco_expected{i}[e]) {{",
                      f'      if (bad < 8) printf("mismatch arg{i}[%ld]: got %ld expected %ld\\n", e, '
                      f"(long)baco_arg{i}[e], (long)baco_expected{i}[e]);",
                      "      bad++;", "    }"]
        lines += ['  if (bad) printf("FAIL: %ld mismatches\\n", bad); else printf("PASS\\n");',
                  "  return bad != 0;"]
    else:
        lines.append("  return 0;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def data_source(workdir: Path, arrays, expected=None) -> str:
    """Assembly that links the arrays in as data (.incbin of their bytes)."""
    out = ['.section .data.baco,"awR",@progbits']   # retained: a launch that never reads them keeps them
    items = [(f"baco_arg{i}", a) for i, a in enumerate(arrays)]
    items += [(f"baco_expected{i}", e) for i, e in (expected or {}).items()]
    for sym, a in items:
        path = workdir / f"{sym}.bin"
        np.ascontiguousarray(a).tofile(path)
        out += [".balign 64", f".globl {sym}", f"{sym}:", f'.incbin "{path}"']
    return "\n".join(out) + "\n"


class RiscvKernel:
    def __init__(self, llvm_ir: str, name: str, signature, config: GemminiConfig, elems=None):
        from baco.codegen import toolchain
        self.name, self.signature, self.config = name, signature, config
        self.workdir = Path(tempfile.mkdtemp(prefix=f"baco-{name}-"))
        if not keep_temps():    # removed with the kernel (or at exit); BACO_KEEP_TEMPS=1 keeps it
            weakref.finalize(self, shutil.rmtree, self.workdir, True)
        self.ll_path = self.workdir / f"{name}.ll"
        self.ll_path.write_text(link_intrinsics(llvm_ir))
        self.obj = self.workdir / f"{name}.o"
        toolchain.compile_object(self.ll_path, self.obj)
        self.last_run = {}

    def build_elf(self, grid, args, out_elf, expected=None):
        """Link a bare-metal ELF for these arguments. `expected` maps array
        index -> array: the ELF then checks itself (exit 0 iff bit-exact)."""
        from baco.codegen import toolchain
        arrays = [a for k, a in zip(self.signature, args) if k == "memref"]
        elems = [{"int8": "i8", "int32": "i32", "float32": "f32"}[a.dtype.name] for a in arrays]
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=self.workdir))
        harness = run_dir / "harness.c"
        harness.write_text(harness_source(self.name, self.signature, elems, args, grid, expected))
        data = run_dir / "data.S"
        data.write_text(data_source(run_dir, arrays, expected))
        try:
            toolchain.compile_and_link([harness, data], out_elf, config=self.config,
                                       extra_objects=[self.obj])
        finally:
            if not keep_temps():
                shutil.rmtree(run_dir, ignore_errors=True)
        return Path(out_elf)

    def run(self, grid, args, *, max_instructions=2_000_000_000, timeout_s=600, observers=()):
        from baco.sim.iss import run_elf
        elf = self.build_elf(grid, args, self.workdir / "run.elf")
        arrays = [a for k, a in zip(self.signature, args) if k == "memref"]
        res = run_elf(elf, config=self.config, max_instructions=max_instructions,
                      timeout_s=timeout_s, stdout=None,
                      dma_symbols={f"baco_arg{i}": a.nbytes for i, a in enumerate(arrays)})
        if res.fault is not None:      # a Gemmini fault raises as it does on the host
            raise res.fault
        boundary = re.search(r"baco: boundary error at line (\d+) col (\d+)", res.console or "")
        if res.exit_code == BOUNDARY_EXIT_CODE and boundary:
            raise KernelRuntimeError(NEGATIVE_COLUMN_OFFSET, int(boundary.group(1)), int(boundary.group(2)))
        if res.exit_code != 0:
            why = res.error or f"exit code {res.exit_code}"
            raise RuntimeError(f"{self.name} on the ISS failed: {why}\n{res.console}")
        for i, a in enumerate(arrays):
            if a.nbytes == 0:       # nothing to read back (an empty array may have no symbol)
                continue
            data = res.read_memory(res.symbol(f"baco_arg{i}"), a.nbytes)
            a[...] = np.frombuffer(data, dtype=a.dtype).reshape(a.shape)
        self.last_run = {"instructions": res.instructions, "commands": res.gemmini_commands,
                         "elf": str(elf), "result": res}
        return self.last_run


def main(argv=None) -> int:
    """`baco llc`: LLVM IR → RISC-V object (-o x.o) or, with --main C sources, an ELF (-o x.elf)."""
    from baco.cli import read_text
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
