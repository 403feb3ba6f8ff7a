"""`baco sim PROG.elf`: run a bare-metal RISC-V ELF with a Gemmini model attached.

The program's console output is forwarded to stdout and the command exits
with the program's exit code. A one-line summary (instructions, Gemmini
commands, cycles with --timing) goes to stderr. When the run stops without an
exit (a Gemmini fault, a trap, an instruction or time limit), the reason goes
to stderr and the exit code is 125.
"""
from __future__ import annotations

import argparse
import re
import sys

from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig
from baco.sim.elfinfo import check_executable, read_config_note

RUN_FAILED = 125


_SUFFIX = {"": 1, "k": 10 ** 3, "K": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9}


def count(text: str) -> int:
    """argparse type for counts: 2000000, 2e9, 1.5e6, 500k, 2M, 3G (exact integers only)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?(?:[eE]\+?\d+)?)\s*([kKMG]?)\s*", text)
    if m:
        value = float(m.group(1)) * _SUFFIX[m.group(2)] if ("." in m.group(1) or "e" in m.group(1).lower()) \
            else int(m.group(1)) * _SUFFIX[m.group(2)]
        if float(value).is_integer() and value > 0:
            return int(value)
    raise argparse.ArgumentTypeError(f"expected a positive whole count such as 2000000, 2e9 or 2M, got {text!r}")


def positive_seconds(text: str) -> float:
    """argparse type for time limits: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def one_line(e: Exception) -> str:
    """An OSError as 'FILE: reason', anything else as its message."""
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror}"
    return str(e)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="baco sim", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("elf", help="bare-metal RISC-V ELF (entry 0x80000000, tohost/fromhost)")
    p.add_argument("--target", choices=("iss", "spike", "verilator"), default="iss",
                   help="iss: built-in unicorn ISS + baco's Gemmini model (default); spike: Spike with "
                        "libgemmini; verilator: a Chipyard Verilator simulator")
    hw = p.add_argument_group("Gemmini configuration (iss)")
    hw.add_argument("--config", metavar="FILE", help="GemminiConfig as JSON")
    hw.add_argument("--dim", type=int, help="systolic array size DIM")
    hw.add_argument("--sp-kb", type=float, help="scratchpad capacity in KiB (default 256)")
    hw.add_argument("--acc-kb", type=float, help="accumulator capacity in KiB (default 64)")
    p.add_argument("--max-instructions", type=count, default=2_000_000_000,
                   help="stop after this many instructions (default 2e9; 1e6, 500k, 2M work too)")
    p.add_argument("--timeout", type=positive_seconds, default=600.0,
                   help="wall-time limit in seconds (default 600)")
    p.add_argument("--mem-mb", type=count, default=256, help="ISS RAM at 0x80000000 in MiB (default 256)")
    p.add_argument("--trace", action="store_true", help="print every instruction (pc, word) to stderr")
    p.add_argument("--timing", action="store_true",
                   help="attach the cycle model (baco.sim.timing): the CPU's cycle/time CSRs and "
                        "Gemmini's performance counters then report the modelled time (a program that reads "
                        "the counters gets it without --timing)")
    p.add_argument("--rocket-muldiv", action="store_true",
                   help="with --timing: price the CPU's multiplies and divides as Rocket's iterative unit "
                        "takes them at most (baco.gemmini.timing_constants.ROCKET_MULDIV: 8 and 64 cycles, "
                        "the 32-bit forms half) instead of one cycle like any instruction")
    p.add_argument("--extlib", help="Spike: the Gemmini extension library (libgemmini.so); "
                                    "default $BACO_SPIKE_EXTLIB")
    p.add_argument("--no-gemmini", action="store_true", help="Spike: run without the Gemmini extension")
    p.add_argument("--verilator", metavar="PATH", help="Chipyard Verilator simulator binary; "
                                                        "default $BACO_VERILATOR_BIN")
    return p


def config_from_args(args) -> GemminiConfig | None:
    """The configuration the options ask for, or None when they name none."""
    if args.config:
        if args.dim or args.sp_kb or args.acc_kb:
            raise ValueError("give either --config or --dim/--sp-kb/--acc-kb, not both")
        return GemminiConfig.load(args.config)
    if args.dim or args.sp_kb or args.acc_kb:
        return GemminiConfig.from_capacity(args.dim or DEFAULT_CONFIG.dim,
                                           args.sp_kb or DEFAULT_CONFIG.sp_kb,
                                           args.acc_kb or DEFAULT_CONFIG.acc_kb)
    return None


def elf_config(args) -> GemminiConfig:
    """The ELF's recorded configuration; options naming a different one are an error."""
    asked, built = config_from_args(args), read_config_note(args.elf)
    if built is not None and asked is not None and asked != built:
        differ = ", ".join(f"{k} {v} (ELF: {built.to_dict()[k]})" for k, v in asked.to_dict().items()
                           if built.to_dict()[k] != v)
        raise ValueError(f"{args.elf} was built for another Gemmini configuration: {differ}; "
                         "drop the configuration options to use the ELF's")
    return asked or built or DEFAULT_CONFIG


def make_timing_model(config: GemminiConfig, rocket_muldiv: bool = False):
    """The cycle model; `rocket_muldiv`: its CPU side prices multiplies and divides as Rocket's
    iterative unit (timing_constants.ROCKET_MULDIV)."""
    from baco.gemmini.timing_constants import DEFAULT_CONSTANTS, ROCKET_MULDIV
    from baco.sim.timing import TimingModel
    return TimingModel(config, ROCKET_MULDIV if rocket_muldiv else DEFAULT_CONSTANTS)


def timing_cycles(timing) -> int:
    """Gemmini's busy span: from its first dispatched command to the last completion."""
    return int(timing.finish - (timing.first_dispatch or 0))


def summary(result, cycles: int | None) -> str:
    parts = [f"exit {result.exit_code}" if result.error is None else "stopped",
             f"{result.instructions} instructions", f"{result.gemmini_commands} Gemmini commands"]
    if any(result.muldiv):
        parts.append(f"{sum(result.muldiv[:2])} multiplies and {sum(result.muldiv[2:])} divides")
    if cycles is not None:
        parts.append(f"{result.cpu_cycles} CPU cycles, {cycles} Gemmini cycles")
    parts.append(f"{result.elapsed_s:.2f} s")
    return "baco sim: " + ", ".join(parts)


def run_iss(args) -> int:
    from baco.sim.iss import IssError, run_elf
    config = elf_config(args)
    if args.rocket_muldiv and not args.timing:
        raise ValueError("--rocket-muldiv prices the CPU's cycles: it needs --timing")
    timing = make_timing_model(config, args.rocket_muldiv) if args.timing else None
    try:
        result = run_elf(args.elf, config=config, max_instructions=args.max_instructions,
                         timeout_s=args.timeout, trace=args.trace, stdout=sys.stdout,
                         mem_size=args.mem_mb << 20, timing=timing, counters_timed=True)
    except (IssError, OSError) as e:
        print(f"baco sim: {e}", file=sys.stderr)
        return RUN_FAILED
    if timing is None and result.timing is not None:
        print("baco sim: note: the program reads Gemmini's performance counters, so the cycle model "
              "(--timing) was attached for them to count", file=sys.stderr)
    timing = result.timing
    cycles = timing_cycles(timing) if timing is not None else None
    if result.error is not None:
        print(f"baco sim: {result.error}", file=sys.stderr)
    print(summary(result, cycles), file=sys.stderr)
    return RUN_FAILED if result.error is not None else result.exit_code


def run_external(args) -> int:
    from baco.sim import external
    try:
        if args.target == "spike":
            return external.run_spike(args.elf, extlib=args.extlib, gemmini=not args.no_gemmini,
                                      timeout_s=args.timeout)
        return external.run_verilator(args.elf, binary=args.verilator, timeout_s=args.timeout)
    except external.ExternalSimError as e:
        print(f"baco sim: {e}", file=sys.stderr)
        return RUN_FAILED


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_executable(args.elf)
        if args.target == "iss":
            return run_iss(args)
        return run_external(args)
    except (OSError, ValueError) as e:
        print(f"baco sim: {one_line(e)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
