"""`baco sim PROG.elf`: run a bare-metal RISC-V ELF with a Gemmini model attached.

The program's console output is forwarded to stdout and the command exits
with the program's exit code. A one-line summary (instructions, Gemmini
commands, cycles with --timing) goes to stderr. When the run stops without an
exit (a Gemmini fault, a trap, an instruction or time limit), the reason goes
to stderr and the exit code is 125.
"""
from __future__ import annotations

import argparse
import sys

from baco.gemmini.config import DEFAULT_CONFIG, GemminiConfig

RUN_FAILED = 125


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
    p.add_argument("--max-instructions", type=int, default=2_000_000_000,
                   help="stop after this many instructions (default 2e9)")
    p.add_argument("--timeout", type=float, default=600.0, help="wall-time limit in seconds (default 600)")
    p.add_argument("--mem-mb", type=int, default=256, help="ISS RAM at 0x80000000 in MiB (default 256)")
    p.add_argument("--trace", action="store_true", help="print every instruction (pc, word) to stderr")
    p.add_argument("--timing", action="store_true",
                   help="attach the cycle model (baco.sim.timing): the CPU's cycle/time CSRs and "
                        "Gemmini's performance counters then report the modelled time")
    p.add_argument("--extlib", help="Spike: the Gemmini extension library (libgemmini.so); "
                                    "default $BACO_SPIKE_EXTLIB")
    p.add_argument("--no-gemmini", action="store_true", help="Spike: run without the Gemmini extension")
    p.add_argument("--verilator", metavar="PATH", help="Chipyard Verilator simulator binary; "
                                                        "default $BACO_VERILATOR_BIN")
    return p


def config_from_args(args) -> GemminiConfig:
    if args.config:
        if args.dim or args.sp_kb or args.acc_kb:
            raise ValueError("give either --config or --dim/--sp-kb/--acc-kb, not both")
        return GemminiConfig.load(args.config)
    if args.dim or args.sp_kb or args.acc_kb:
        return GemminiConfig.from_capacity(args.dim or DEFAULT_CONFIG.dim,
                                           args.sp_kb or DEFAULT_CONFIG.sp_kb,
                                           args.acc_kb or DEFAULT_CONFIG.acc_kb)
    return DEFAULT_CONFIG


def make_timing_model(config: GemminiConfig):
    from baco.sim.timing import TimingModel
    return TimingModel(config)


def timing_cycles(timing) -> int:
    """Gemmini's busy span: from its first dispatched command to the last completion."""
    return int(timing.finish - (timing.first_dispatch or 0))


def summary(result, cycles: int | None) -> str:
    parts = [f"exit {result.exit_code}" if result.error is None else "stopped",
             f"{result.instructions} instructions", f"{result.gemmini_commands} Gemmini commands"]
    if cycles is not None:
        parts.append(f"{result.cpu_cycles} CPU cycles, {cycles} Gemmini cycles")
    parts.append(f"{result.elapsed_s:.2f} s")
    return "baco sim: " + ", ".join(parts)


def run_iss(args) -> int:
    from baco.sim.iss import IssError, run_elf
    config = config_from_args(args)
    timing = make_timing_model(config) if args.timing else None
    try:
        result = run_elf(args.elf, config=config, max_instructions=args.max_instructions,
                         timeout_s=args.timeout, trace=args.trace, stdout=sys.stdout,
                         mem_size=args.mem_mb << 20, timing=timing)
    except (IssError, OSError) as e:
        print(f"baco sim: {e}", file=sys.stderr)
        return RUN_FAILED
    cycles = timing_cycles(timing) if timing is not None else None
    if result.error is not None:
        print(f"baco sim: {result.error}", file=sys.stderr)
    if timing is None and result.stats.get("counter"):
        print("baco sim: note: the program read performance counters; without --timing there is no "
              "cycle model and every counter event reads 0", file=sys.stderr)
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
        if args.target == "iss":
            return run_iss(args)
        return run_external(args)
    except ValueError as e:
        print(f"baco sim: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
