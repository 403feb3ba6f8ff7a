"""The `baco` command: one entry point, one subcommand per tool.

Each subcommand lives in the module that owns it and exposes `main(argv)` (or the
function named after a colon); this file only dispatches, so importing it stays
cheap. Whatever a tool does, the user sees one-line errors and an exit code, never
a traceback: a missing or unreadable file exits 2, Ctrl-C exits 130 quietly, and an
unexpected exception is one line naming it (BACO_TRACEBACK=1 shows the traceback).
"""
import argparse
import importlib
import os
import sys

SUBCOMMANDS = {
    "opt": ("baco.passes.cli", "run a pass pipeline (or one pass) on a text IR file"),
    "translate": ("baco.compiler:translate_main", "InstGem/LLVM-dialect MLIR -> LLVM IR"),
    "llc": ("baco.codegen.riscv", "LLVM IR -> RISC-V object or bare-metal ELF"),
    "sim": ("baco.sim.cli", "run a bare-metal RISC-V ELF with a Gemmini model attached"),
    "tune": ("baco.model.cli:tune_main", "co-explore Gemmini hardware and mappings (--verify: compile, run, time)"),
    "sweep": ("baco.tuner.sweep", "many co-explorations (networks x area budgets x seeds) on Ray, one table"),
    "run": ("baco.design", "compile, run bit-exact and time a tuned design's kernels vs Gemmini-default"),
    "build": ("baco.model.cli", "a PyTorch model as one quantised, self-checking bare-metal ELF"),
    "disasm": ("baco.sim.disasm", "disassemble Gemmini commands in an ELF or hex words"),
}
INTERRUPTED = 130      # 128 + SIGINT, as shells report it
INTERNAL_ERROR = 70    # EX_SOFTWARE


def usage() -> str:
    lines = ["usage: baco <command> [args]", "", "commands:"]
    lines += [f"  {name:<10} {desc}" for name, (_, desc) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def one_line_usage_error(parser: argparse.ArgumentParser, message: str):
    """argparse's error(), one line (no usage block): what is wrong and where help is; exit 2."""
    parser.exit(2, f"{parser.prog}: error: {message} (`{parser.prog} --help` lists the options)\n")


def run_tool(name: str, tool_main, argv) -> int:
    """Run a subcommand's main with the error contract above; every subcommand's argparse
    reports a bad option as one line."""
    usage_error = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = one_line_usage_error
    try:
        return int(tool_main(argv) or 0)
    except SystemExit as e:         # argparse's usage errors (2) and --help (0)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except KeyboardInterrupt:
        print(f"baco {name}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        sys.stderr.close()      # the reader went away (`| head`): nothing left to say
        return 0
    except OSError as e:
        print(f"baco {name}: {e.filename + ': ' if e.filename else ''}{e.strerror or e}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"baco {name}: {e}", file=sys.stderr)
        return 2
    except Exception as e:      # noqa: BLE001 — the contract is one line, not a traceback
        if os.environ.get("BACO_TRACEBACK") == "1":
            raise
        print(f"baco {name}: internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
              "(BACO_TRACEBACK=1 shows where)", file=sys.stderr)
        return INTERNAL_ERROR
    finally:
        argparse.ArgumentParser.error = usage_error


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
    try:
        tool_main = getattr(importlib.import_module(module), function or "main")
    except KeyboardInterrupt:
        return INTERRUPTED
    return run_tool(name, tool_main, rest)


if __name__ == "__main__":
    sys.exit(main())
