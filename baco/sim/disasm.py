"""`baco disasm`: Gemmini commands in human form, from the one command table
(decoding in baco.gemmini.disasm; this module reads ELFs and runs them on the ISS).

    baco disasm PROG.elf            every custom-3 instruction in the ELF's code:
                                    address, enclosing symbol, word, command, registers
    baco disasm PROG.elf --run      run PROG.elf on the built-in ISS and print each
                                    executed command with its decoded field values
    baco disasm FUNCT RS1 RS2 ...   decode (funct, rs1, rs2) triples (decimal or 0x-hex);
                                    `-` reads whitespace-separated triples from stdin

Register values are only known at run time, so the static listing names the
registers and the command family; `--run` shows the fields (LOOP_WS and
LOOP_CONV_WS appear as the commands their FSMs issue).
"""
from __future__ import annotations

import argparse
import bisect
import sys

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from baco.gemmini.config import DEFAULT_CONFIG
from baco.gemmini.disasm import decode_triples, describe_word
from baco.gemmini.isa import OPCODE_CUSTOM3, format_field
from baco.sim.cli import count, one_line, positive_seconds
from baco.sim.elfinfo import check_executable, read_config_note
from baco.sim.iss import instruction_words, run_elf


def static_listing(path) -> list[str]:
    """One line per custom-3 instruction in the executable sections of an ELF."""
    lines = []
    with open(path, "rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        funcs = sorted((s["st_value"], s.name) for s in (symtab.iter_symbols() if symtab else ())
                       if s.name and s["st_info"]["type"] == "STT_FUNC")
        starts = [a for a, _ in funcs]
        for sec in elf.iter_sections():
            if not sec["sh_flags"] & SH_FLAGS.SHF_EXECINSTR or sec["sh_type"] != "SHT_PROGBITS":
                continue
            base = sec["sh_addr"]
            for off, length, word in instruction_words(sec.data()):
                if length != 4 or word & 0x7F != OPCODE_CUSTOM3:
                    continue
                addr = base + off
                i = bisect.bisect_right(starts, addr) - 1
                where = f"<{funcs[i][1]}+{addr - funcs[i][0]:#x}>" if i >= 0 else ""
                lines.append(f"{addr:#010x} {where:<20} {word:08x}  {describe_word(word)}")
    return lines


def run_listing(path, args) -> tuple[list[str], object]:
    """Execute the ELF and record every Gemmini command with its field values."""
    lines = []

    def record(name, fields, pc):
        where = f"{pc:#010x} " if pc is not None else ""
        lines.append(where + " ".join([name] + [format_field(k, v) for k, v in fields.items()]))

    result = run_elf(path, config=read_config_note(path) or DEFAULT_CONFIG, observers=(record,), stdout=None,
                     max_instructions=args.max_instructions,
                     timeout_s=args.timeout)
    return lines, result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="baco disasm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", help="an ELF file, or funct rs1 rs2 triples, or - for stdin")
    p.add_argument("--run", action="store_true", help="ELF: execute on the ISS and list executed commands")
    p.add_argument("--max-instructions", type=count, default=200_000_000,
                   help="--run: stop after this many instructions (default 2e8; 1e6, 2M work too)")
    p.add_argument("--timeout", type=positive_seconds, default=120.0,
                   help="--run: wall-time limit in seconds (default 120)")
    args = p.parse_args(argv)
    try:
        if args.inputs == ["-"]:
            lines = decode_triples(sys.stdin.read().split())
        elif len(args.inputs) == 1:
            path = args.inputs[0]
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    raise ValueError(f"{path}: not an ELF file")
            if args.run:
                check_executable(path)
                lines, result = run_listing(path, args)
                if result.error is not None:
                    lines.append(f"# stopped: {result.error}")
            else:
                lines = static_listing(path)
        else:
            lines = decode_triples(args.inputs)
    except (OSError, ValueError) as e:
        print(f"baco disasm: {one_line(e)}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
