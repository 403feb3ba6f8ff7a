"""The `baco` command: one entry point, one subcommand per tool.

Each subcommand lives in the module that owns it and exposes `main(argv)` (or the
function named after a colon);
this file only dispatches, so importing it stays cheap.
"""
import importlib
import sys

SUBCOMMANDS = {
    "opt": ("baco.passes.cli", "run a pass pipeline (or one pass) on a text IR file"),
    "translate": ("baco.codegen.translate", "InstGem/LLVM-dialect MLIR -> LLVM IR"),
    "llc": ("baco.codegen.riscv", "LLVM IR -> RISC-V object or bare-metal ELF"),
    "sim": ("baco.sim.cli", "run a bare-metal RISC-V ELF with a Gemmini model attached"),
    "tune": ("baco.design:tune_main", "co-explore Gemmini hardware and mappings (--verify: compile, run, time)"),
    "run": ("baco.design", "compile, run bit-exact and time a tuned design's kernels vs Gemmini-default"),
    "disasm": ("baco.sim.disasm", "disassemble Gemmini commands in an ELF or hex words"),
}


def usage() -> str:
    lines = ["usage: baco <command> [args]", "", "commands:"]
    lines += [f"  {name:<10} {desc}" for name, (_, desc) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"baco: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module, _, function = SUBCOMMANDS[name][0].partition(":")
    return int(getattr(importlib.import_module(module), function or "main")(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
